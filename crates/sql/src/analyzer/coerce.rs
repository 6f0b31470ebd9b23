//! Type coercion and overload resolution, as PostgreSQL's parse_coerce.c
//! and parse_func.c/parse_oper.c define them: which casts apply in which
//! context, which function or operator a call resolves to when the argument
//! types do not match exactly, and how unknown-typed literals get a type.

use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use crate::catalog::builtin::{Builtins, ProcInfo};
use tusk_types::range::RangeType;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CoercionContext {
    Implicit,
    Assignment,
    Explicit,
}

/// How a value of one type becomes another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoercionPath {
    None,
    /// Same representation: no work (e.g. varchar → text).
    Relabel,
    /// A conversion function or I/O conversion, done by the runtime cast.
    Convert,
}

pub fn is_string_category(b: &Builtins, t: Oid) -> bool {
    b.category(t) == 'S'
}

pub fn is_polymorphic(t: Oid) -> bool {
    matches!(
        t,
        oid::ANYELEMENT
            | oid::ANYARRAY
            | oid::ANYNONARRAY
            | oid::ANYENUM
            | oid::ANYRANGE
            | oid::ANYCOMPATIBLE
            | oid::ANYCOMPATIBLEARRAY
            | oid::ANYCOMPATIBLENONARRAY
            | oid::ANYCOMPATIBLERANGE
            | oid::ANYMULTIRANGE
            | oid::ANYCOMPATIBLEMULTIRANGE
    )
}

/// find_coercion_pathway
pub fn coercion_path(b: &Builtins, source: Oid, target: Oid, ctx: CoercionContext) -> CoercionPath {
    if source == target {
        return CoercionPath::Relabel;
    }
    // A domain coerces as its base type does, and anything that coerces
    // to a domain's base type coerces to the domain (with its checks).
    let source = crate::catalog::types::base_type_oid(source);
    let target = crate::catalog::types::base_type_oid(target);
    if source == target {
        return CoercionPath::Relabel;
    }
    if target == oid::ANY || source == oid::UNKNOWN {
        return CoercionPath::Convert;
    }
    if let Some(c) = b.cast(source, target) {
        let allowed = match c.context {
            'i' => true,
            'a' => ctx >= CoercionContext::Assignment,
            _ => ctx == CoercionContext::Explicit,
        };
        if !allowed {
            return CoercionPath::None;
        }
        return if c.method == 'b' { CoercionPath::Relabel } else { CoercionPath::Convert };
    }
    // A user range type's explicit cast to its multirange (the pg_cast row
    // DefineRange makes; the built-in ones are in pg_cast above).
    if ctx == CoercionContext::Explicit && crate::catalog::ranges::range_type_of_multirange(target).is_some_and(|rt| rt.oid == source) {
        return CoercionPath::Convert;
    }
    // Arrays coerce element by element (not into oidvector and int2vector,
    // whose elements are arrays only to subscripting, as in find_coercion_pathway).
    let (se, te) = (b.element_of(source), b.element_of(target));
    if se != 0 && te != 0 && target != oid::OIDVECTOR && target != oid::INT2VECTOR {
        return match coercion_path(b, se, te, ctx) {
            CoercionPath::None => CoercionPath::None,
            _ => CoercionPath::Convert,
        };
    }
    // Automatic I/O conversion: anything to a string type in assignment or
    // explicit context; from a string type only explicitly.
    if ctx >= CoercionContext::Assignment && is_string_category(b, target) && source != oid::RECORD {
        return CoercionPath::Convert;
    }
    // ROW(...)::text prints the record.
    if ctx == CoercionContext::Explicit && is_string_category(b, target) && source == oid::RECORD {
        return CoercionPath::Convert;
    }
    if ctx == CoercionContext::Explicit && is_string_category(b, source) {
        return CoercionPath::Convert;
    }
    CoercionPath::None
}

/// can_coerce_type for one argument (polymorphic targets checked loosely here,
/// consistently by `resolve_polymorphic`).
pub fn can_coerce(b: &Builtins, source: Oid, target: Oid, ctx: CoercionContext) -> bool {
    if source == target || source == oid::UNKNOWN || target == oid::ANY {
        return true;
    }
    let source = crate::catalog::types::base_type_oid(source);
    if is_polymorphic(target) {
        return match target {
            oid::ANYARRAY | oid::ANYCOMPATIBLEARRAY => b.element_of(source) != 0,
            oid::ANYNONARRAY | oid::ANYCOMPATIBLENONARRAY => b.element_of(source) == 0,
            oid::ANYENUM => crate::catalog::enums::is_enum(source),
            oid::ANYRANGE | oid::ANYCOMPATIBLERANGE => crate::functions::range::range_type(source).is_some(),
            oid::ANYMULTIRANGE | oid::ANYCOMPATIBLEMULTIRANGE => crate::functions::range::range_type_of_multirange(source).is_some(),
            _ => true,
        };
    }
    if target == oid::RECORD && (source == oid::RECORD || b.type_info(source).map(|t| t.typtype == 'c').unwrap_or(false)) {
        return true;
    }
    if target == oid::RECORD_ARRAY && b.element_of(source) != 0 {
        return false;
    }
    coercion_path(b, source, target, ctx) != CoercionPath::None
}

/// A candidate overload during resolution.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub oid: Oid,
    pub args: Vec<Oid>,
}

/// func_select_candidate + func_match_argtypes: picks the best candidate
/// for the given input types, or reports ambiguity (None, true) or no match (None, false).
pub fn select_candidate(b: &Builtins, inputs: &[Oid], candidates: &[Candidate]) -> (Option<usize>, bool) {
    // Exact match first.
    if let Some(i) = candidates.iter().position(|c| c.args == inputs) {
        return (Some(i), false);
    }
    // func_select_candidate: domains are matched as their base types.
    let based: Vec<Oid> = inputs.iter().map(|&t| crate::catalog::types::base_type_oid(t)).collect();
    let inputs = based.as_slice();
    if let Some(i) = candidates.iter().position(|c| c.args == inputs) {
        return (Some(i), false);
    }
    // Candidates each of whose arguments the input can be coerced to implicitly.
    let mut viable: Vec<usize> = (0..candidates.len())
        .filter(|&i| {
            candidates[i].args.len() == inputs.len()
                && inputs.iter().zip(&candidates[i].args).all(|(&s, &t)| can_coerce(b, s, t, CoercionContext::Implicit))
                && polymorphic_consistent(b, inputs, &candidates[i].args)
        })
        .collect();
    if viable.len() == 1 {
        return (Some(viable[0]), false);
    }
    if viable.is_empty() {
        return (None, false);
    }
    let nargs = inputs.len();
    // Keep candidates with the most exact matches on known inputs.
    let count = |i: usize, f: &dyn Fn(Oid, Oid) -> bool| -> usize {
        inputs.iter().zip(&candidates[i].args).filter(|(&s, &t)| s != oid::UNKNOWN && f(s, t)).count()
    };
    let keep_max = |viable: &mut Vec<usize>, score: &dyn Fn(usize) -> usize| {
        let best = viable.iter().map(|&i| score(i)).max().unwrap_or(0);
        viable.retain(|&i| score(i) == best);
    };
    keep_max(&mut viable, &|i| count(i, &|s, t| s == t));
    if viable.len() == 1 {
        return (Some(viable[0]), false);
    }
    // Then the most matches on preferred types (where the input needs a conversion).
    keep_max(&mut viable, &|i| count(i, &|s, t| s == t || (b.is_preferred(t) && b.category(t) == b.category(s))));
    if viable.len() == 1 {
        return (Some(viable[0]), false);
    }
    // Unknown inputs: look at the categories the candidates accept there.
    if inputs.contains(&oid::UNKNOWN) {
        let mut slots: Vec<Option<(char, bool)>> = vec![None; nargs];
        let mut resolved = true;
        for pos in 0..nargs {
            if inputs[pos] != oid::UNKNOWN {
                continue;
            }
            // The string category wins if any candidate accepts a string here;
            // otherwise all candidates must agree on one category.
            let mut slot: Option<(char, bool)> = None;
            let mut conflict = false;
            for &i in &viable {
                let t = candidates[i].args[pos];
                let (cat, pref) = (b.category(t), b.is_preferred(t));
                slot = match slot {
                    None => Some((cat, pref)),
                    Some((c, p)) if c == cat => Some((c, p || pref)),
                    // A string-category candidate wins over any conflict.
                    Some(_) if cat == 'S' => Some((cat, pref)),
                    Some(s) => {
                        conflict = true;
                        Some(s)
                    }
                };
            }
            slots[pos] = slot;
            if conflict && slot.map(|s| s.0) != Some('S') {
                resolved = false;
                break;
            }
        }
        if resolved {
            let kept: Vec<usize> = viable
                .iter()
                .copied()
                .filter(|&i| {
                    (0..nargs).all(|pos| match slots[pos] {
                        None => true,
                        Some((cat, has_pref)) => {
                            let t = candidates[i].args[pos];
                            b.category(t) == cat && (!has_pref || b.is_preferred(t))
                        }
                    })
                })
                .collect();
            if !kept.is_empty() {
                viable = kept;
            }
            if viable.len() == 1 {
                return (Some(viable[0]), false);
            }
        }
        // Last resort: if all known inputs share one type, assume unknowns are that type too.
        let known: Vec<Oid> = inputs.iter().copied().filter(|&t| t != oid::UNKNOWN).collect();
        if !known.is_empty() && known.iter().all(|&t| t == known[0]) {
            let assumed: Vec<Oid> = inputs.iter().map(|&t| if t == oid::UNKNOWN { known[0] } else { t }).collect();
            let matching: Vec<usize> = viable
                .iter()
                .copied()
                .filter(|&i| {
                    assumed.iter().zip(&candidates[i].args).all(|(&s, &t)| can_coerce(b, s, t, CoercionContext::Implicit))
                })
                .collect();
            if matching.len() == 1 {
                return (Some(matching[0]), false);
            }
        }
    }
    if viable.len() == 1 {
        (Some(viable[0]), false)
    } else {
        (None, true)
    }
}

/// All polymorphic arguments of one family must bind to one type, and the
/// anycompatible family's inputs must have a common type
/// (check_generic_type_consistency): `text[] || text[]` is array_cat, not
/// array_append with an element of type text[].
fn polymorphic_consistent(b: &Builtins, inputs: &[Oid], args: &[Oid]) -> bool {
    let mut elem: Option<Oid> = None;
    let mut compat: Vec<Oid> = Vec::new();
    let mut compat_range: Option<Oid> = None;
    let mut saw_range = false;
    for (&s, &t) in inputs.iter().zip(args) {
        if s == oid::UNKNOWN {
            continue;
        }
        saw_range |= is_range_family(t);
        let e = match t {
            oid::ANYELEMENT | oid::ANYNONARRAY | oid::ANYENUM => s,
            oid::ANYARRAY => b.element_of(s),
            oid::ANYRANGE | oid::ANYMULTIRANGE => match range_binding(t, s) {
                Some(rt) => rt.subtype,
                None => return false,
            },
            oid::ANYCOMPATIBLERANGE | oid::ANYCOMPATIBLEMULTIRANGE => {
                match (range_binding(t, s), compat_range) {
                    (None, _) => return false,
                    (Some(rt), Some(x)) if x != rt.subtype => return false,
                    (Some(rt), _) => compat_range = Some(rt.subtype),
                }
                continue;
            }
            oid::ANYCOMPATIBLE | oid::ANYCOMPATIBLENONARRAY => {
                compat.push(s);
                continue;
            }
            oid::ANYCOMPATIBLEARRAY => {
                match b.element_of(s) {
                    0 => return false,
                    e => compat.push(e),
                }
                continue;
            }
            _ => continue,
        };
        match elem {
            None => elem = Some(e),
            // A range over a domain binds its elements as the domain.
            Some(x) if x != e && !(saw_range && same_base(x, e)) => return false,
            _ => {}
        }
    }
    // A compatible range fixes the common type: its subtype.
    if let Some(sub) = compat_range {
        return compat.iter().all(|&c| can_coerce(b, c, sub, CoercionContext::Implicit));
    }
    compat.len() < 2 || common_type(b, &compat, "anycompatible").is_ok()
}

/// Resolves polymorphic argument and result types of a chosen function
/// (enforce_generic_type_consistency): returns the concrete argument types
/// and the result type.
pub fn resolve_polymorphic(b: &Builtins, inputs: &[Oid], proc_args: &[Oid], rettype: Oid) -> PgResult<(Vec<Oid>, Oid)> {
    let mut elem: Option<Oid> = None;
    let mut compat: Vec<Oid> = Vec::new();
    // The range type anyrange / anymultirange bind to (and the one of the
    // anycompatible family), which also fixes the element type.
    let mut range: Option<RangeType> = None;
    let mut compat_range: Option<RangeType> = None;
    for (&s, &t) in inputs.iter().zip(proc_args) {
        if s == oid::UNKNOWN {
            continue;
        }
        match t {
            oid::ANYRANGE | oid::ANYMULTIRANGE => {
                let rt = range_binding(t, s).ok_or_else(|| not_a_range_arg(b, t, s))?;
                if let Some(e) = elem {
                    if e != rt.subtype && !same_base(e, rt.subtype) {
                        return Err(arg_mismatch(b, "anyrange", e, rt.subtype));
                    }
                }
                if let Some(r) = range {
                    if r.oid != rt.oid {
                        let what = if t == oid::ANYRANGE { "anyrange" } else { "anymultirange" };
                        return Err(arg_mismatch(b, what, r.oid, rt.oid));
                    }
                }
                elem = Some(rt.subtype);
                range = Some(rt);
                continue;
            }
            oid::ANYCOMPATIBLERANGE | oid::ANYCOMPATIBLEMULTIRANGE => {
                let rt = range_binding(t, s).ok_or_else(|| not_a_range_arg(b, t, s))?;
                if let Some(r) = compat_range {
                    if r.oid != rt.oid {
                        let what = if t == oid::ANYCOMPATIBLERANGE { "anycompatiblerange" } else { "anycompatiblemultirange" };
                        return Err(arg_mismatch(b, what, r.oid, rt.oid));
                    }
                }
                compat_range = Some(rt);
                continue;
            }
            _ => {}
        }
        match t {
            oid::ANYELEMENT | oid::ANYNONARRAY | oid::ANYENUM => {
                if let Some(e) = elem {
                    // A range over a domain takes its base type's values.
                    if e != s && !(range.is_some() && same_base(e, s)) {
                        return Err(arg_mismatch(b, "anyelement", e, s));
                    }
                }
                if range.is_none() {
                    elem = Some(s);
                }
            }
            oid::ANYARRAY => {
                let e = b.element_of(s);
                if let Some(x) = elem {
                    if x != e {
                        return Err(arg_mismatch(b, "anyarray", x, e));
                    }
                }
                elem = Some(e);
            }
            oid::ANYCOMPATIBLE | oid::ANYCOMPATIBLENONARRAY => compat.push(s),
            oid::ANYCOMPATIBLEARRAY => compat.push(b.element_of(s)),
            _ => {}
        }
    }
    // A compatible range fixes the anycompatible type: its subtype, which
    // every other anycompatible input must be able to become.
    let compat_type = match compat_range {
        Some(rt) => {
            for &c in &compat {
                if !can_coerce(b, c, rt.subtype, CoercionContext::Implicit) {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!(
                            "anycompatiblerange type {} does not match anycompatible type {}",
                            crate::analyzer::types::format_type_be(b, rt.oid),
                            crate::analyzer::types::format_type_be(b, c)
                        ),
                    ));
                }
            }
            Some(rt.subtype)
        }
        None if compat.is_empty() => None,
        None => Some(common_type(b, &compat, "anycompatible")?),
    };
    let needs = |ts: &[Oid]| proc_args.iter().chain(std::iter::once(&rettype)).any(|t| ts.contains(t));
    if range.is_none() && needs(&[oid::ANYRANGE, oid::ANYMULTIRANGE]) {
        // Only an anyrange/anymultirange input can tell which range type
        // (enforce_generic_type_consistency); an element type alone cannot.
        if let Some(e) = elem {
            if rettype == oid::ANYRANGE || rettype == oid::ANYMULTIRANGE {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("could not find range type for data type {}", crate::analyzer::types::format_type_be(b, e)),
                ));
            }
        }
    }
    // Unknown inputs to anyelement default to text, as PostgreSQL does.
    let elem = elem.unwrap_or(oid::TEXT);
    let bind = |t: Oid| -> Oid {
        match t {
            oid::ANYELEMENT | oid::ANYNONARRAY | oid::ANYENUM => elem,
            oid::ANYARRAY => b.array_of(elem),
            oid::ANYRANGE => range.map(|r| r.oid).unwrap_or(t),
            oid::ANYMULTIRANGE => range.map(|r| r.multirange).unwrap_or(t),
            oid::ANYCOMPATIBLERANGE => compat_range.map(|r| r.oid).unwrap_or(t),
            oid::ANYCOMPATIBLEMULTIRANGE => compat_range.map(|r| r.multirange).unwrap_or(t),
            oid::ANYCOMPATIBLE | oid::ANYCOMPATIBLENONARRAY => compat_type.unwrap_or(oid::TEXT),
            oid::ANYCOMPATIBLEARRAY => b.array_of(compat_type.unwrap_or(oid::TEXT)),
            other => other,
        }
    };
    Ok((proc_args.iter().map(|&t| bind(t)).collect(), bind(rettype)))
}

/// check_valid_polymorphic_signature: why a function's result (or OUT
/// parameter) of type `ret` could not be deduced from its inputs, if so.
pub fn check_valid_polymorphic_signature(b: &Builtins, ret: Oid, inputs: &[Oid]) -> Option<String> {
    let family1 = |t: Oid| matches!(t, oid::ANYELEMENT | oid::ANYARRAY | oid::ANYNONARRAY | oid::ANYENUM | oid::ANYRANGE | oid::ANYMULTIRANGE);
    let family2 =
        |t: Oid| matches!(t, oid::ANYCOMPATIBLE | oid::ANYCOMPATIBLEARRAY | oid::ANYCOMPATIBLENONARRAY | oid::ANYCOMPATIBLERANGE | oid::ANYCOMPATIBLEMULTIRANGE);
    let name = crate::analyzer::types::format_type_be(b, ret);
    let (ok, wanted): (bool, &str) = match ret {
        oid::ANYRANGE | oid::ANYMULTIRANGE => (inputs.iter().any(|&t| matches!(t, oid::ANYRANGE | oid::ANYMULTIRANGE)), "anyrange or anymultirange"),
        oid::ANYCOMPATIBLERANGE | oid::ANYCOMPATIBLEMULTIRANGE => (
            inputs.iter().any(|&t| matches!(t, oid::ANYCOMPATIBLERANGE | oid::ANYCOMPATIBLEMULTIRANGE)),
            "anycompatiblerange or anycompatiblemultirange",
        ),
        t if family1(t) => (inputs.iter().any(|&t| family1(t)), "anyelement, anyarray, anynonarray, anyenum, anyrange, or anymultirange"),
        t if family2(t) => (
            inputs.iter().any(|&t| family2(t)),
            "anycompatible, anycompatiblearray, anycompatiblenonarray, anycompatiblerange, or anycompatiblemultirange",
        ),
        _ => (true, ""),
    };
    (!ok).then(|| format!("A result of type {name} requires at least one input of type {wanted}."))
}

fn is_range_family(t: Oid) -> bool {
    matches!(t, oid::ANYRANGE | oid::ANYMULTIRANGE)
}

/// Whether two types are one type or domains over one base type.
fn same_base(a: Oid, b: Oid) -> bool {
    crate::catalog::types::base_type_oid(a) == crate::catalog::types::base_type_oid(b)
}

/// The range type an input of type `s` gives a range-family parameter
/// `t` (anyrange takes a range, anymultirange a multirange).
fn range_binding(t: Oid, s: Oid) -> Option<RangeType> {
    // A domain over a range binds as its range type.
    let s = crate::catalog::types::base_type_oid(s);
    match t {
        oid::ANYRANGE | oid::ANYCOMPATIBLERANGE => crate::functions::range::range_type(s),
        _ => crate::functions::range::range_type_of_multirange(s),
    }
}

fn not_a_range_arg(b: &Builtins, t: Oid, s: Oid) -> PgError {
    PgError::new(
        sqlstate::DATATYPE_MISMATCH,
        format!(
            "argument declared {} is not a {} type but type {}",
            crate::analyzer::types::format_type_be(b, t),
            if matches!(t, oid::ANYRANGE | oid::ANYCOMPATIBLERANGE) { "range" } else { "multirange" },
            crate::analyzer::types::format_type_be(b, s)
        ),
    )
}

fn arg_mismatch(b: &Builtins, what: &str, a: Oid, c: Oid) -> PgError {
    PgError::new(
        sqlstate::DATATYPE_MISMATCH,
        format!("arguments declared \"{what}\" are not all alike"),
    )
    .with_detail(format!("{} versus {}", b.type_name(a), b.type_name(c)))
}

/// select_common_type: the type UNION, CASE, COALESCE, VALUES ... resolve
/// their branches to. `context` names the construct for the error message.
pub fn common_type(b: &Builtins, types: &[Oid], context: &str) -> PgResult<Oid> {
    let known: Vec<Oid> = types.iter().copied().filter(|&t| t != oid::UNKNOWN).collect();
    let Some(&first) = known.first() else { return Ok(oid::TEXT) };
    if known.iter().all(|&t| t == first) {
        return Ok(first);
    }
    // select_common_type: mixed inputs are resolved over base types.
    let known: Vec<Oid> = known.iter().map(|&t| crate::catalog::types::base_type_oid(t)).collect();
    let first = known[0];
    if known.iter().all(|&t| t == first) {
        return Ok(first);
    }
    let mut ptype = first;
    let mut pcategory = b.category(ptype);
    let mut pispreferred = b.is_preferred(ptype);
    for &t in &known[1..] {
        if t == ptype {
            continue;
        }
        let cat = b.category(t);
        if cat != pcategory {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "{} types {} and {} cannot be matched",
                    context,
                    crate::analyzer::types::format_type_be(b, ptype),
                    crate::analyzer::types::format_type_be(b, t)
                ),
            ));
        }
        if !pispreferred
            && can_coerce(b, ptype, t, CoercionContext::Implicit)
            && !can_coerce(b, t, ptype, CoercionContext::Implicit)
        {
            ptype = t;
            pcategory = cat;
            pispreferred = b.is_preferred(t);
        }
    }
    // Every input must be implicitly coercible to the result.
    for &t in &known {
        if !can_coerce(b, t, ptype, CoercionContext::Implicit) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "{} could not convert type {} to {}",
                    context,
                    crate::analyzer::types::format_type_be(b, t),
                    crate::analyzer::types::format_type_be(b, ptype)
                ),
            ));
        }
    }
    Ok(ptype)
}

/// The candidate functions for a name and argument count, expanding
/// variadic functions and functions with defaults.
///
/// As FuncnameGetCandidates: a variadic function matches `nargs >= pronargs`
/// in its expanded form (its last parameter repeated as the element type),
/// and in its declared form only when the call says VARIADIC
/// (`explicit_variadic`); so `concat()` finds nothing.
pub fn function_candidates<'b>(procs: impl Iterator<Item = &'b ProcInfo>, nargs: usize, explicit_variadic: bool) -> Vec<(Candidate, &'b ProcInfo)> {
    let mut out = Vec::new();
    for p in procs {
        let n = p.argtypes.len();
        let expand = p.variadic != 0 && !explicit_variadic && n > 0 && nargs >= n;
        if explicit_variadic && p.variadic == 0 {
            continue;
        }
        if n == nargs && !expand {
            out.push((Candidate { oid: p.oid, args: p.argtypes.clone() }, p));
        } else if expand {
            // VARIADIC "any"/anyarray/T[]: repeat the element type.
            let mut args = p.argtypes[..n - 1].to_vec();
            let elem = if p.variadic == oid::ANY { oid::ANY } else { p.variadic };
            while args.len() < nargs {
                args.push(elem);
            }
            out.push((Candidate { oid: p.oid, args }, p));
        } else if nargs < n && n - nargs <= p.nargdefaults {
            out.push((Candidate { oid: p.oid, args: p.argtypes[..nargs].to_vec() }, p));
        }
    }
    out
}

pub fn type_display_name(b: &Builtins, t: SqlType) -> String {
    crate::analyzer::types::format_type(b, t.oid, t.typmod)
}
