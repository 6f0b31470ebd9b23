//! Range and multirange values: PostgreSQL's rangetypes.c and
//! multirangetypes.c without the on-disk packing.
//!
//! A range is generic over its subtype: bounds are plain `Datum`s compared
//! with `Datum::cmp_same_type` (btree order; text in the "C" collation), and
//! everything a particular range type adds — its subtype, its multirange,
//! whether it is discrete and so has a canonical form — comes from a
//! `RangeType` description. The built-in range types describe themselves
//! here (`builtin_range_type`); a user-defined range type (CREATE TYPE ... AS
//! RANGE) supplies a `RangeType` of its own and every operation works on it
//! unchanged.
//!
//! Values are kept in canonical form, as `make_range` leaves them: an empty
//! range carries no bounds, an infinite bound is never inclusive, and a
//! discrete range is `[)`. Equal ranges are then structurally equal, which
//! hashing and index keys rely on.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::error::{sqlstate, PgError, PgResult};
use crate::oid::Oid;
use crate::Datum;

/// How a range type's values are put in canonical form (its
/// `rngcanonical` function): discrete subtypes step to the next value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Canonical {
    /// A continuous subtype (numeric, timestamps) or a range type without
    /// a canonical function: bounds stay as given.
    None,
    /// int4range_canonical
    Int4,
    /// int8range_canonical
    Int8,
    /// daterange_canonical (infinite dates are left alone)
    Date,
}

/// What the range functions need to know of a range type (pg_range plus
/// the type's OIDs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeType {
    pub oid: Oid,
    pub subtype: Oid,
    pub multirange: Oid,
    pub canonical: Canonical,
}

/// PostgreSQL 15's built-in range types (pg_range).
pub const BUILTIN_RANGE_TYPES: [RangeType; 6] = [
    RangeType { oid: 3904, subtype: 23, multirange: 4451, canonical: Canonical::Int4 },
    RangeType { oid: 3906, subtype: 1700, multirange: 4532, canonical: Canonical::None },
    RangeType { oid: 3908, subtype: 1114, multirange: 4533, canonical: Canonical::None },
    RangeType { oid: 3910, subtype: 1184, multirange: 4534, canonical: Canonical::None },
    RangeType { oid: 3912, subtype: 1082, multirange: 4535, canonical: Canonical::Date },
    RangeType { oid: 3926, subtype: 20, multirange: 4536, canonical: Canonical::Int8 },
];

/// The built-in range type with this OID.
pub fn builtin_range_type(oid: Oid) -> Option<&'static RangeType> {
    BUILTIN_RANGE_TYPES.iter().find(|r| r.oid == oid)
}

/// The built-in range type whose multirange type has this OID.
pub fn builtin_range_of_multirange(oid: Oid) -> Option<&'static RangeType> {
    BUILTIN_RANGE_TYPES.iter().find(|r| r.multirange == oid)
}

/// The built-in range type over this subtype (what `anyelement → anyrange`
/// finds; PostgreSQL's get_range_subtype in reverse).
pub fn builtin_range_of_subtype(subtype: Oid) -> Option<&'static RangeType> {
    BUILTIN_RANGE_TYPES.iter().find(|r| r.subtype == subtype)
}

/// One end of a range. An infinite bound has no value (`Datum::Null`).
#[derive(Clone, Debug)]
pub struct Bound {
    pub value: Datum,
    pub infinite: bool,
    pub inclusive: bool,
}

impl Bound {
    pub fn infinite() -> Bound {
        Bound { value: Datum::Null, infinite: true, inclusive: false }
    }
    pub fn finite(value: Datum, inclusive: bool) -> Bound {
        Bound { value, infinite: false, inclusive }
    }
    fn none() -> Bound {
        Bound { value: Datum::Null, infinite: false, inclusive: false }
    }
}

/// A range value of type `type_oid`.
#[derive(Clone, Debug)]
pub struct Range {
    pub type_oid: Oid,
    pub empty: bool,
    pub lower: Bound,
    pub upper: Bound,
}

/// A multirange value: its ranges sorted, non-empty, neither overlapping
/// nor adjacent (multirange_canonicalize's result).
#[derive(Clone, Debug)]
pub struct Multirange {
    pub type_oid: Oid,
    pub ranges: Vec<Range>,
}

fn data_exception(msg: &str) -> PgError {
    PgError::new(sqlstate::DATA_EXCEPTION, msg)
}

// ---------------------------------------------------------------- bounds

/// range_cmp_bounds: orders two bounds, each known to be a lower or an
/// upper one (an exclusive lower bound sits just after its value, an
/// exclusive upper bound just before it).
pub fn cmp_bounds(b1: &Bound, lower1: bool, b2: &Bound, lower2: bool) -> Ordering {
    if b1.infinite && b2.infinite {
        return if lower1 == lower2 { Ordering::Equal } else if lower1 { Ordering::Less } else { Ordering::Greater };
    }
    if b1.infinite {
        return if lower1 { Ordering::Less } else { Ordering::Greater };
    }
    if b2.infinite {
        return if lower2 { Ordering::Greater } else { Ordering::Less };
    }
    let result = b1.value.cmp_same_type(&b2.value);
    if result == Ordering::Equal {
        if !b1.inclusive && !b2.inclusive {
            // Both exclusive: equal only when of the same kind.
            if lower1 == lower2 {
                return Ordering::Equal;
            }
            return if lower1 { Ordering::Greater } else { Ordering::Less };
        } else if !b1.inclusive {
            return if lower1 { Ordering::Greater } else { Ordering::Less };
        } else if !b2.inclusive {
            return if lower2 { Ordering::Less } else { Ordering::Greater };
        }
    }
    result
}

/// range_cmp_bound_values: compares the values only (inclusivity ignored).
fn cmp_bound_values(b1: &Bound, lower1: bool, b2: &Bound, lower2: bool) -> Ordering {
    if b1.infinite && b2.infinite {
        return if lower1 == lower2 { Ordering::Equal } else if lower1 { Ordering::Less } else { Ordering::Greater };
    }
    if b1.infinite {
        return if lower1 { Ordering::Less } else { Ordering::Greater };
    }
    if b2.infinite {
        return if lower2 { Ordering::Greater } else { Ordering::Less };
    }
    b1.value.cmp_same_type(&b2.value)
}

// ---------------------------------------------------------------- construction

impl Range {
    pub fn empty(type_oid: Oid) -> Range {
        Range { type_oid, empty: true, lower: Bound::none(), upper: Bound::none() }
    }
}

/// range_serialize: checks the bounds' order and detects emptiness.
fn serialize(rt: &RangeType, mut lower: Bound, mut upper: Bound, empty: bool) -> PgResult<Range> {
    if empty {
        return Ok(Range::empty(rt.oid));
    }
    if lower.infinite {
        lower.inclusive = false;
        lower.value = Datum::Null;
    }
    if upper.infinite {
        upper.inclusive = false;
        upper.value = Datum::Null;
    }
    match cmp_bound_values(&lower, true, &upper, false) {
        Ordering::Greater => return Err(data_exception("range lower bound must be less than or equal to range upper bound")),
        Ordering::Equal if !(lower.inclusive && upper.inclusive) => return Ok(Range::empty(rt.oid)),
        _ => {}
    }
    Ok(Range { type_oid: rt.oid, empty: false, lower, upper })
}

/// The value after `v` of a discrete subtype; None where the canonical
/// function leaves the bound alone (an infinite date).
fn step(canonical: Canonical, v: &Datum) -> PgResult<Option<Datum>> {
    Ok(Some(match (canonical, v) {
        (Canonical::Int4, Datum::Int4(x)) => {
            Datum::Int4(x.checked_add(1).ok_or_else(|| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?)
        }
        (Canonical::Int8, Datum::Int8(x)) => {
            Datum::Int8(x.checked_add(1).ok_or_else(|| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"))?)
        }
        (Canonical::Date, Datum::Date(x)) if *x == i32::MIN || *x == i32::MAX => return Ok(None),
        (Canonical::Date, Datum::Date(x)) => Datum::Date(x + 1),
        _ => return Ok(None),
    }))
}

/// make_range: builds a range from two bounds, checking their order and
/// putting a discrete range in its canonical `[)` form.
pub fn make_range(rt: &RangeType, lower: Bound, upper: Bound, empty: bool) -> PgResult<Range> {
    let r = serialize(rt, lower, upper, empty)?;
    if r.empty || rt.canonical == Canonical::None {
        return Ok(r);
    }
    let Range { mut lower, mut upper, .. } = r;
    if !lower.infinite && !lower.inclusive {
        if let Some(v) = step(rt.canonical, &lower.value)? {
            lower.value = v;
            lower.inclusive = true;
        }
    }
    if !upper.infinite && upper.inclusive {
        if let Some(v) = step(rt.canonical, &upper.value)? {
            upper.value = v;
            upper.inclusive = false;
        }
    }
    serialize(rt, lower, upper, false)
}

/// range_parse_flags: the third argument of a range constructor.
pub fn parse_flags(s: &str) -> PgResult<(bool, bool)> {
    let bad = || {
        PgError::new(sqlstate::SYNTAX_ERROR, "invalid range bound flags").with_hint("Valid values are '[]', '[)', '(]', and '()'.")
    };
    let b = s.as_bytes();
    if b.len() != 2 {
        return Err(bad());
    }
    let lower = match b[0] {
        b'[' => true,
        b'(' => false,
        _ => return Err(bad()),
    };
    let upper = match b[1] {
        b']' => true,
        b')' => false,
        _ => return Err(bad()),
    };
    Ok((lower, upper))
}

// ---------------------------------------------------------------- text form

/// A range literal taken apart (range_parse): the bounds' text, None for an
/// infinite bound.
#[derive(Debug, PartialEq)]
pub struct RangeText {
    pub empty: bool,
    pub lower_inc: bool,
    pub upper_inc: bool,
    pub lower: Option<String>,
    pub upper: Option<String>,
}

fn malformed_range(input: &str, detail: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed range literal: \"{input}\"")).with_detail(detail)
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// range_parse: `empty`, or `[`/`(` lower `,` upper `]`/`)` with blanks
/// around; a bound may be quoted or backslash-escaped, and an absent one is
/// infinite.
pub fn parse_range_text(input: &str) -> PgResult<RangeText> {
    let s = input.as_bytes();
    let mut p = 0;
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    if s.len() - p >= 5 && s[p..p + 5].eq_ignore_ascii_case(b"empty") {
        p += 5;
        while p < s.len() && is_space(s[p]) {
            p += 1;
        }
        if p != s.len() {
            return Err(malformed_range(input, "Junk after \"empty\" key word."));
        }
        return Ok(RangeText { empty: true, lower_inc: false, upper_inc: false, lower: None, upper: None });
    }
    let lower_inc = match s.get(p) {
        Some(b'[') => true,
        Some(b'(') => false,
        _ => return Err(malformed_range(input, "Missing left parenthesis or bracket.")),
    };
    p += 1;
    let (lower, np) = parse_bound(input, p)?;
    p = np;
    if s.get(p) != Some(&b',') {
        return Err(malformed_range(input, "Missing comma after lower bound."));
    }
    p += 1;
    let (upper, np) = parse_bound(input, p)?;
    p = np;
    let upper_inc = match s.get(p) {
        Some(b']') => true,
        Some(b')') => false,
        _ => return Err(malformed_range(input, "Too many commas.")),
    };
    p += 1;
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    if p != s.len() {
        return Err(malformed_range(input, "Junk after right parenthesis or bracket."));
    }
    Ok(RangeText {
        empty: false,
        lower_inc: lower_inc && lower.is_some(),
        upper_inc: upper_inc && upper.is_some(),
        lower,
        upper,
    })
}

/// range_parse_bound: one bound's text from `p`, up to an unquoted `,`,
/// `)` or `]`.
fn parse_bound(input: &str, mut p: usize) -> PgResult<(Option<String>, usize)> {
    let s = input.as_bytes();
    if matches!(s.get(p), Some(b',' | b')' | b']')) {
        return Ok((None, p));
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut inquote = false;
    loop {
        let Some(&ch) = s.get(p) else {
            return Err(malformed_range(input, "Unexpected end of input."));
        };
        if !inquote && matches!(ch, b',' | b')' | b']') {
            break;
        }
        p += 1;
        if ch == b'\\' {
            let Some(&next) = s.get(p) else {
                return Err(malformed_range(input, "Unexpected end of input."));
            };
            buf.push(next);
            p += 1;
        } else if ch == b'"' {
            if !inquote {
                inquote = true;
            } else if s.get(p) == Some(&b'"') {
                buf.push(b'"');
                p += 1;
            } else {
                inquote = false;
            }
        } else {
            buf.push(ch);
        }
    }
    // Only ASCII bytes were removed, so the rest is still UTF-8.
    Ok((Some(String::from_utf8(buf).unwrap_or_default()), p))
}

/// range_bound_escape: quotes a bound's text when it is empty or holds a
/// character the parser would take as syntax.
fn escape_bound(out: &mut String, value: &str) {
    let quote = value.is_empty()
        || value.bytes().any(|c| matches!(c, b'"' | b'\\' | b'(' | b')' | b'[' | b']' | b',') || is_space(c));
    if quote {
        out.push('"');
    }
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    if quote {
        out.push('"');
    }
}

/// range_out, given the subtype's output function.
pub fn format_range(r: &Range, out_elem: &mut dyn FnMut(&Datum) -> String) -> String {
    if r.empty {
        return "empty".to_string();
    }
    let mut s = String::new();
    s.push(if r.lower.inclusive { '[' } else { '(' });
    if !r.lower.infinite {
        escape_bound(&mut s, &out_elem(&r.lower.value));
    }
    s.push(',');
    if !r.upper.infinite {
        escape_bound(&mut s, &out_elem(&r.upper.value));
    }
    s.push(if r.upper.inclusive { ']' } else { ')' });
    s
}

/// range_in, given the subtype's input function.
pub fn parse_range(rt: &RangeType, input: &str, in_elem: &mut dyn FnMut(&str) -> PgResult<Datum>) -> PgResult<Range> {
    let t = parse_range_text(input)?;
    if t.empty {
        return Ok(Range::empty(rt.oid));
    }
    let lower = match &t.lower {
        Some(s) => Bound::finite(in_elem(s)?, t.lower_inc),
        None => Bound::infinite(),
    };
    let upper = match &t.upper {
        Some(s) => Bound::finite(in_elem(s)?, t.upper_inc),
        None => Bound::infinite(),
    };
    make_range(rt, lower, upper, false)
}

fn malformed_multirange(input: &str, detail: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed multirange literal: \"{input}\"")).with_detail(detail)
}

/// multirange_in's scanner: the text of each range of a multirange literal
/// (`{[1,2), empty, (3,4]}`), left to the range input function.
pub fn split_multirange_text(input: &str) -> PgResult<Vec<String>> {
    #[derive(PartialEq)]
    enum State {
        Before,
        InRange,
        Escaped,
        Quoted,
        QuotedEscaped,
        After,
        Finished,
    }
    let s = input.as_bytes();
    let mut p = 0;
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    if s.get(p) != Some(&b'{') {
        return Err(malformed_multirange(input, "Missing left brace."));
    }
    p += 1;
    let mut out = Vec::new();
    let mut seen = 0;
    let mut begin = 0;
    let mut state = State::Before;
    while state != State::Finished {
        let Some(&ch) = s.get(p) else {
            return Err(malformed_multirange(input, "Unexpected end of input."));
        };
        if is_space(ch) {
            p += 1;
            continue;
        }
        match state {
            State::Before => {
                if ch == b'[' || ch == b'(' {
                    begin = p;
                    state = State::InRange;
                } else if ch == b'}' && seen == 0 {
                    state = State::Finished;
                } else if s.len() - p >= 5 && s[p..p + 5].eq_ignore_ascii_case(b"empty") {
                    seen += 1;
                    p += 4;
                    state = State::After;
                } else {
                    return Err(malformed_multirange(input, "Expected range start."));
                }
            }
            State::InRange => {
                if ch == b']' || ch == b')' {
                    out.push(input[begin..=p].to_string());
                    seen += 1;
                    state = State::After;
                } else if ch == b'"' {
                    state = State::Quoted;
                } else if ch == b'\\' {
                    state = State::Escaped;
                }
            }
            State::Escaped => state = State::InRange,
            State::Quoted => {
                if ch == b'"' {
                    if s.get(p + 1) == Some(&b'"') {
                        p += 1;
                    } else {
                        state = State::InRange;
                    }
                } else if ch == b'\\' {
                    state = State::QuotedEscaped;
                }
            }
            State::QuotedEscaped => state = State::Quoted,
            State::After => {
                if ch == b',' {
                    state = State::Before;
                } else if ch == b'}' {
                    state = State::Finished;
                } else {
                    return Err(malformed_multirange(input, "Expected comma or end of multirange."));
                }
            }
            State::Finished => unreachable!("the loop ends at Finished"),
        }
        p += 1;
    }
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    if p != s.len() {
        return Err(malformed_multirange(input, "Junk after closing right brace."));
    }
    Ok(out)
}

/// multirange_out, given the range output function.
pub fn format_multirange(m: &Multirange, out_elem: &mut dyn FnMut(&Datum) -> String) -> String {
    let mut s = String::from("{");
    for (i, r) in m.ranges.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format_range(r, out_elem));
    }
    s.push('}');
    s
}

// ---------------------------------------------------------------- range operators

/// range_cmp: empty first, then by lower bound, then by upper bound.
pub fn range_cmp(a: &Range, b: &Range) -> Ordering {
    match (a.empty, b.empty) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    cmp_bounds(&a.lower, true, &b.lower, true).then_with(|| cmp_bounds(&a.upper, false, &b.upper, false))
}

pub fn range_eq(a: &Range, b: &Range) -> bool {
    range_cmp(a, b) == Ordering::Equal
}

/// range_contains_elem_internal
pub fn contains_elem(r: &Range, v: &Datum) -> bool {
    if r.empty {
        return false;
    }
    if !r.lower.infinite {
        match r.lower.value.cmp_same_type(v) {
            Ordering::Greater => return false,
            Ordering::Equal if !r.lower.inclusive => return false,
            _ => {}
        }
    }
    if !r.upper.infinite {
        match r.upper.value.cmp_same_type(v) {
            Ordering::Less => return false,
            Ordering::Equal if !r.upper.inclusive => return false,
            _ => {}
        }
    }
    true
}

/// range_contains_internal: r1 @> r2.
pub fn contains(r1: &Range, r2: &Range) -> bool {
    if r2.empty {
        return true;
    }
    if r1.empty {
        return false;
    }
    cmp_bounds(&r1.lower, true, &r2.lower, true) != Ordering::Greater && cmp_bounds(&r1.upper, false, &r2.upper, false) != Ordering::Less
}

/// range_overlaps_internal: r1 && r2.
pub fn overlaps(r1: &Range, r2: &Range) -> bool {
    if r1.empty || r2.empty {
        return false;
    }
    if cmp_bounds(&r1.lower, true, &r2.lower, true) != Ordering::Less && cmp_bounds(&r1.lower, true, &r2.upper, false) != Ordering::Greater {
        return true;
    }
    cmp_bounds(&r2.lower, true, &r1.lower, true) != Ordering::Less && cmp_bounds(&r2.lower, true, &r1.upper, false) != Ordering::Greater
}

/// range_before_internal: r1 << r2.
pub fn before(r1: &Range, r2: &Range) -> bool {
    !r1.empty && !r2.empty && cmp_bounds(&r1.upper, false, &r2.lower, true) == Ordering::Less
}

/// range_after_internal: r1 >> r2.
pub fn after(r1: &Range, r2: &Range) -> bool {
    !r1.empty && !r2.empty && cmp_bounds(&r1.lower, true, &r2.upper, false) == Ordering::Greater
}

/// range_overleft_internal: r1 &< r2 (r1 does not extend to the right of r2).
pub fn overleft(r1: &Range, r2: &Range) -> bool {
    !r1.empty && !r2.empty && cmp_bounds(&r1.upper, false, &r2.upper, false) != Ordering::Greater
}

/// range_overright_internal: r1 &> r2 (r1 does not extend to the left of r2).
pub fn overright(r1: &Range, r2: &Range) -> bool {
    !r1.empty && !r2.empty && cmp_bounds(&r1.lower, true, &r2.lower, true) != Ordering::Less
}

/// bounds_adjacent: whether upper bound `a` meets lower bound `b` with
/// nothing between them (for a discrete type, the range between is empty).
fn bounds_adjacent(rt: &RangeType, a: &Bound, b: &Bound) -> bool {
    match cmp_bound_values(a, false, b, true) {
        Ordering::Less => {
            // Only a discrete type can have nothing between two values.
            if rt.canonical == Canonical::None {
                return false;
            }
            let lower = Bound { inclusive: !a.inclusive, ..a.clone() };
            let upper = Bound { inclusive: !b.inclusive, ..b.clone() };
            make_range(rt, lower, upper, false).map(|r| r.empty).unwrap_or(false)
        }
        Ordering::Equal => a.inclusive != b.inclusive,
        Ordering::Greater => false,
    }
}

/// range_adjacent_internal: r1 -|- r2.
pub fn adjacent(rt: &RangeType, r1: &Range, r2: &Range) -> bool {
    if r1.empty || r2.empty {
        return false;
    }
    bounds_adjacent(rt, &r1.upper, &r2.lower) || bounds_adjacent(rt, &r2.upper, &r1.lower)
}

/// range_union_internal: r1 + r2 (strict: the two must overlap or touch)
/// and range_merge (not strict: the gap is filled).
pub fn union(rt: &RangeType, r1: &Range, r2: &Range, strict: bool) -> PgResult<Range> {
    if r1.empty {
        return Ok(r2.clone());
    }
    if r2.empty {
        return Ok(r1.clone());
    }
    if strict && !overlaps(r1, r2) && !adjacent(rt, r1, r2) {
        return Err(data_exception("result of range union would not be contiguous"));
    }
    let lower = if cmp_bounds(&r1.lower, true, &r2.lower, true) == Ordering::Less { &r1.lower } else { &r2.lower };
    let upper = if cmp_bounds(&r1.upper, false, &r2.upper, false) == Ordering::Greater { &r1.upper } else { &r2.upper };
    make_range(rt, lower.clone(), upper.clone(), false)
}

/// range_intersect_internal: r1 * r2.
pub fn intersect(rt: &RangeType, r1: &Range, r2: &Range) -> PgResult<Range> {
    if r1.empty || r2.empty || !overlaps(r1, r2) {
        return Ok(Range::empty(rt.oid));
    }
    let lower = if cmp_bounds(&r1.lower, true, &r2.lower, true) != Ordering::Less { &r1.lower } else { &r2.lower };
    let upper = if cmp_bounds(&r1.upper, false, &r2.upper, false) != Ordering::Greater { &r1.upper } else { &r2.upper };
    make_range(rt, lower.clone(), upper.clone(), false)
}

/// range_minus_internal: r1 - r2; an error when r2 would split r1 in two.
pub fn minus(rt: &RangeType, r1: &Range, r2: &Range) -> PgResult<Range> {
    if r1.empty || r2.empty {
        return Ok(r1.clone());
    }
    let l1l2 = cmp_bounds(&r1.lower, true, &r2.lower, true);
    let l1u2 = cmp_bounds(&r1.lower, true, &r2.upper, false);
    let u1l2 = cmp_bounds(&r1.upper, false, &r2.lower, true);
    let u1u2 = cmp_bounds(&r1.upper, false, &r2.upper, false);
    if l1l2 == Ordering::Less && u1u2 == Ordering::Greater {
        return Err(data_exception("result of range difference would not be contiguous"));
    }
    if l1u2 == Ordering::Greater || u1l2 == Ordering::Less {
        return Ok(r1.clone());
    }
    if l1l2 != Ordering::Less && u1u2 != Ordering::Greater {
        return Ok(Range::empty(rt.oid));
    }
    if l1l2 != Ordering::Greater && u1l2 != Ordering::Less && u1u2 != Ordering::Greater {
        let upper = Bound { inclusive: !r2.lower.inclusive, ..r2.lower.clone() };
        return make_range(rt, r1.lower.clone(), upper, false);
    }
    if l1l2 != Ordering::Less && u1u2 != Ordering::Less && l1u2 != Ordering::Greater {
        let lower = Bound { inclusive: !r2.upper.inclusive, ..r2.upper.clone() };
        return make_range(rt, lower, r1.upper.clone(), false);
    }
    Err(PgError::internal("unexpected case in range_minus"))
}

/// range_split_internal: when r2 lies strictly inside r1, the two pieces
/// of r1 left around it.
fn split(rt: &RangeType, r1: &Range, r2: &Range) -> PgResult<Option<(Range, Range)>> {
    if r1.empty || r2.empty {
        return Ok(None);
    }
    if cmp_bounds(&r1.lower, true, &r2.lower, true) == Ordering::Less && cmp_bounds(&r1.upper, false, &r2.upper, false) == Ordering::Greater {
        let first = make_range(rt, r1.lower.clone(), Bound { inclusive: !r2.lower.inclusive, ..r2.lower.clone() }, false)?;
        let second = make_range(rt, Bound { inclusive: !r2.upper.inclusive, ..r2.upper.clone() }, r1.upper.clone(), false)?;
        return Ok(Some((first, second)));
    }
    Ok(None)
}

// ---------------------------------------------------------------- multiranges

/// make_multirange: sorts the ranges and merges those that overlap or touch
/// (multirange_canonicalize); empty ranges vanish.
pub fn make_multirange(rt: &RangeType, mut ranges: Vec<Range>) -> PgResult<Multirange> {
    ranges.retain(|r| !r.empty);
    ranges.sort_by(range_cmp);
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            None => out.push(r),
            Some(last) => {
                if adjacent(rt, last, &r) {
                    *last = union(rt, last, &r, false)?;
                } else if before(last, &r) {
                    out.push(r);
                } else {
                    *last = union(rt, last, &r, true)?;
                }
            }
        }
    }
    Ok(Multirange { type_oid: rt.multirange, ranges: out })
}

impl Multirange {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The smallest range covering the multirange (range_merge(anymultirange)).
    pub fn span(&self, rt: &RangeType) -> Range {
        match (self.ranges.first(), self.ranges.last()) {
            (Some(f), Some(l)) => Range { type_oid: rt.oid, empty: false, lower: f.lower.clone(), upper: l.upper.clone() },
            _ => Range::empty(rt.oid),
        }
    }
}

/// multirange_cmp: range by range; a shorter multirange sorts first.
pub fn multirange_cmp(a: &Multirange, b: &Multirange) -> Ordering {
    for (x, y) in a.ranges.iter().zip(b.ranges.iter()) {
        let o = range_cmp(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.ranges.len().cmp(&b.ranges.len())
}

pub fn multirange_union(rt: &RangeType, a: &Multirange, b: &Multirange) -> PgResult<Multirange> {
    let mut all = a.ranges.clone();
    all.extend(b.ranges.iter().cloned());
    make_multirange(rt, all)
}

/// multirange_intersect_internal: the pieces where ranges of both overlap.
pub fn multirange_intersect(rt: &RangeType, a: &Multirange, b: &Multirange) -> PgResult<Multirange> {
    let mut out = Vec::new();
    let mut i2 = 0;
    for r1 in &a.ranges {
        while i2 < b.ranges.len() && before(&b.ranges[i2], r1) {
            i2 += 1;
        }
        while i2 < b.ranges.len() && overlaps(r1, &b.ranges[i2]) {
            out.push(intersect(rt, r1, &b.ranges[i2])?);
            if overleft(&b.ranges[i2], r1) {
                i2 += 1;
            } else {
                break;
            }
        }
        if i2 >= b.ranges.len() {
            break;
        }
    }
    make_multirange(rt, out)
}

/// multirange_minus_internal: each range of `a`, bitten by the ranges of `b`.
pub fn multirange_minus(rt: &RangeType, a: &Multirange, b: &Multirange) -> PgResult<Multirange> {
    let mut out = Vec::new();
    let mut i2 = 0;
    for r in &a.ranges {
        let mut r1 = r.clone();
        while i2 < b.ranges.len() && before(&b.ranges[i2], &r1) {
            i2 += 1;
        }
        while i2 < b.ranges.len() {
            let r2 = &b.ranges[i2];
            if let Some((first, rest)) = split(rt, &r1, r2)? {
                out.push(first);
                r1 = rest;
                i2 += 1;
            } else if overlaps(&r1, r2) {
                r1 = minus(rt, &r1, r2)?;
                if r1.empty || before(&r1, r2) {
                    break;
                }
                i2 += 1;
            } else {
                break;
            }
        }
        out.push(r1);
    }
    make_multirange(rt, out)
}

pub fn multirange_contains_elem(m: &Multirange, v: &Datum) -> bool {
    m.ranges.iter().any(|r| contains_elem(r, v))
}

/// multirange @> range: the (canonical) multirange holds r in one piece.
pub fn multirange_contains_range(m: &Multirange, r: &Range) -> bool {
    r.empty || m.ranges.iter().any(|x| contains(x, r))
}

/// range @> multirange: r covers the multirange's span.
pub fn range_contains_multirange(rt: &RangeType, r: &Range, m: &Multirange) -> bool {
    m.is_empty() || contains(r, &m.span(rt))
}

pub fn multirange_contains_multirange(a: &Multirange, b: &Multirange) -> bool {
    b.ranges.iter().all(|r| multirange_contains_range(a, r))
}

pub fn multirange_overlaps_range(m: &Multirange, r: &Range) -> bool {
    m.ranges.iter().any(|x| overlaps(x, r))
}

pub fn multirange_overlaps_multirange(a: &Multirange, b: &Multirange) -> bool {
    a.ranges.iter().any(|x| multirange_overlaps_range(b, x))
}

/// The positional operators (<<, >>, &<, &>) of multiranges act on their
/// spans; an empty multirange is never left or right of anything.
pub fn span_or_empty(rt: &RangeType, m: &Multirange) -> Range {
    m.span(rt)
}

/// -|- between a range and a multirange, or two multiranges (given as
/// spans' ends: the first and last ranges).
pub fn multirange_adjacent(rt: &RangeType, a: &Multirange, b: &Multirange) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (a_first, a_last) = (&a.ranges[0], &a.ranges[a.ranges.len() - 1]);
    let (b_first, b_last) = (&b.ranges[0], &b.ranges[b.ranges.len() - 1]);
    bounds_adjacent(rt, &a_last.upper, &b_first.lower) || bounds_adjacent(rt, &b_last.upper, &a_first.lower)
}

// ---------------------------------------------------------------- hashing and keys

impl Range {
    /// A hash consistent with `range_eq` (canonical forms make equal ranges
    /// structurally equal).
    pub fn hash_into<H: Hasher>(&self, state: &mut H) {
        self.empty.hash(state);
        if self.empty {
            return;
        }
        for b in [&self.lower, &self.upper] {
            b.infinite.hash(state);
            b.inclusive.hash(state);
            b.value.hash_into(state);
        }
    }
}

/// hash_range's flag byte and layout are PostgreSQL's; the binary form
/// (range_send) is the flags, then each present bound as a length and
/// the subtype's send form.
pub const RANGE_EMPTY: u8 = 0x01;
pub const RANGE_LB_INC: u8 = 0x02;
pub const RANGE_UB_INC: u8 = 0x04;
pub const RANGE_LB_INF: u8 = 0x08;
pub const RANGE_UB_INF: u8 = 0x10;

impl Range {
    pub fn flags(&self) -> u8 {
        if self.empty {
            return RANGE_EMPTY;
        }
        let mut f = 0;
        if self.lower.inclusive {
            f |= RANGE_LB_INC;
        }
        if self.upper.inclusive {
            f |= RANGE_UB_INC;
        }
        if self.lower.infinite {
            f |= RANGE_LB_INF;
        }
        if self.upper.infinite {
            f |= RANGE_UB_INF;
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int4() -> &'static RangeType {
        builtin_range_type(3904).unwrap()
    }

    fn parse(s: &str) -> PgResult<Range> {
        parse_range(int4(), s, &mut |t| Ok(Datum::Int4(t.trim().parse().map_err(|_| PgError::internal("bad int"))?)))
    }

    fn show(r: &Range) -> String {
        format_range(r, &mut |d| match d {
            Datum::Int4(v) => v.to_string(),
            _ => String::new(),
        })
    }

    #[test]
    fn discrete_ranges_become_half_open() {
        assert_eq!(show(&parse("[1,10]").unwrap()), "[1,11)");
        assert_eq!(show(&parse("(1,10)").unwrap()), "[2,10)");
        assert_eq!(show(&parse("(1,2)").unwrap()), "empty");
        assert_eq!(show(&parse("(,)").unwrap()), "(,)");
        assert_eq!(show(&parse(" EMPTY ").unwrap()), "empty");
    }

    #[test]
    fn malformed_literals_say_why() {
        let detail = |s: &str| parse_range_text(s).unwrap_err().detail.unwrap_or_default();
        assert_eq!(detail(""), "Missing left parenthesis or bracket.");
        assert_eq!(detail("(,,a)"), "Too many commas.");
        assert_eq!(detail("(),a)"), "Missing comma after lower bound.");
        assert_eq!(detail("(\",a)"), "Unexpected end of input.");
        assert_eq!(detail("[a,z) - "), "Junk after right parenthesis or bracket.");
        assert!(parse("[5,1]").is_err());
    }

    #[test]
    fn bounds_are_quoted_when_needed() {
        let t = parse_range_text(r#"( " a " " a ", " z " " z " )"#).unwrap();
        assert_eq!(t.lower.as_deref(), Some("  a   a "));
        let mut s = String::new();
        escape_bound(&mut s, "a\"b");
        assert_eq!(s, "\"a\"\"b\"");
    }

    #[test]
    fn multiranges_merge_and_subtract() {
        let rt = int4();
        let m = make_multirange(rt, vec![parse("[5,7)").unwrap(), parse("[1,3)").unwrap(), parse("[3,4)").unwrap()]).unwrap();
        assert_eq!(m.ranges.len(), 2);
        assert_eq!(show(&m.ranges[0]), "[1,4)");
        let hole = make_multirange(rt, vec![parse("[2,3)").unwrap()]).unwrap();
        let d = multirange_minus(rt, &m, &hole).unwrap();
        let shown: Vec<String> = d.ranges.iter().map(show).collect();
        assert_eq!(shown, ["[1,2)", "[3,4)", "[5,7)"]);
        assert_eq!(split_multirange_text("{[1,2), empty ,(3,4]}").unwrap(), ["[1,2)", "(3,4]"]);
    }
}
