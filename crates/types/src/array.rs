//! Arrays: PostgreSQL's n-dimensional arrays with lower bounds, and their
//! text form (`{1,2,NULL}`, `{{a,b},{c,d}}`, `[0:1]={x,y}`).
//!
//! Elements are stored flat in row-major order; `dims` holds (length,
//! lower bound) per dimension. An empty array has no dimensions.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::datum::Datum;
use crate::error::{sqlstate, PgError, PgResult};
use crate::oid::Oid;

#[derive(Clone, Debug)]
pub struct Array {
    pub element_type: Oid,
    pub dims: Vec<(i32, i32)>,
    pub elements: Vec<Datum>,
}

impl Array {
    pub fn empty(element_type: Oid) -> Array {
        Array { element_type, dims: Vec::new(), elements: Vec::new() }
    }

    /// A one-dimensional array with lower bound 1.
    pub fn from_vec(element_type: Oid, elements: Vec<Datum>) -> Array {
        if elements.is_empty() {
            return Array::empty(element_type);
        }
        Array { element_type, dims: vec![(elements.len() as i32, 1)], elements }
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    pub fn has_nulls(&self) -> bool {
        self.elements.iter().any(Datum::is_null)
    }
}

impl PartialEq for Array {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Array {}
impl PartialOrd for Array {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Array {
    /// array_cmp: element by element, then by element count, then by dimensions.
    fn cmp(&self, other: &Self) -> Ordering {
        for (a, b) in self.elements.iter().zip(other.elements.iter()) {
            let o = a.cmp_same_type(b);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.elements
            .len()
            .cmp(&other.elements.len())
            .then_with(|| self.dims.len().cmp(&other.dims.len()))
            .then_with(|| self.dims.cmp(&other.dims))
    }
}
impl Hash for Array {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.elements.len().hash(state);
        for e in &self.elements {
            e.hash_into(state);
        }
    }
}

/// Whether an element's text must be double-quoted in array output.
fn needs_quotes(s: &str, delim: char) -> bool {
    s.is_empty()
        || s.eq_ignore_ascii_case("NULL")
        || s.chars().any(|c| c == delim || matches!(c, '{' | '}' | '"' | '\\') || c.is_ascii_whitespace())
}

/// array_out, given each element's text form.
pub fn format_array(a: &Array, delim: char, element_text: &mut dyn FnMut(&Datum) -> String) -> String {
    let mut out = String::new();
    if a.dims.is_empty() {
        return "{}".to_string();
    }
    if a.dims.iter().any(|&(_, lower)| lower != 1) {
        for &(len, lower) in &a.dims {
            out.push_str(&format!("[{}:{}]", lower, lower + len - 1));
        }
        out.push('=');
    }
    let mut idx = 0;
    write_level(a, 0, &mut idx, delim, element_text, &mut out);
    out
}

fn write_level(
    a: &Array,
    level: usize,
    idx: &mut usize,
    delim: char,
    element_text: &mut dyn FnMut(&Datum) -> String,
    out: &mut String,
) {
    out.push('{');
    let len = a.dims[level].0;
    for i in 0..len {
        if i > 0 {
            out.push(delim);
        }
        if level + 1 < a.dims.len() {
            write_level(a, level + 1, idx, delim, element_text, out);
        } else {
            let e = &a.elements[*idx];
            *idx += 1;
            if e.is_null() {
                out.push_str("NULL");
            } else {
                let s = element_text(e);
                if needs_quotes(&s, delim) {
                    out.push('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                } else {
                    out.push_str(&s);
                }
            }
        }
    }
    out.push('}');
}

/// PostgreSQL's MAXDIM: arrays have at most six dimensions.
pub const MAX_DIMS: usize = 6;

/// The error for an array of more than MAX_DIMS dimensions.
pub fn too_many_dims(ndims: usize) -> PgError {
    PgError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({ndims}) exceeds the maximum allowed ({MAX_DIMS})"),
    )
}

fn malformed(input: &str, detail: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{input}\""))
        .with_detail(detail.to_string())
}

/// array_isspace: the whitespace array input skips.
fn is_array_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// The leading integer of a dimension item (`-`, `+` and digits, as
/// array_in scans them, then atoi), and the rest.
fn dimension_number(s: &str) -> (Option<i32>, &str) {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+')).unwrap_or(s.len());
    if end == 0 {
        return (None, s);
    }
    let t = &s[..end];
    let (neg, digits) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = digits.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v: i64 = digits.parse::<i64>().unwrap_or(0);
    let v = if neg { -v } else { v };
    (Some(v as i32), &s[end..])
}

/// array_in, given a parser for element text (None = NULL element).
pub fn parse_array(
    input: &str,
    element_type: Oid,
    delim: char,
    element_parse: &mut dyn FnMut(&str) -> PgResult<Datum>,
) -> PgResult<Array> {
    let mut p = input.trim_start_matches(is_array_space);
    let mut explicit: Vec<(i32, i32)> = Vec::new();
    loop {
        p = p.trim_start_matches(is_array_space);
        let Some(rest) = p.strip_prefix('[') else { break };
        if explicit.len() >= MAX_DIMS {
            return Err(too_many_dims(explicit.len() + 1));
        }
        let (first, after) = dimension_number(rest);
        let Some(first) = first else {
            return Err(malformed(input, "\"[\" must introduce explicitly-specified array dimensions."));
        };
        let (lower, upper, after) = match after.strip_prefix(':') {
            Some(r) => {
                let (u, after) = dimension_number(r);
                let Some(u) = u else { return Err(malformed(input, "Missing array dimension value.")) };
                (first, u, after)
            }
            None => (1, first, after),
        };
        let Some(after) = after.strip_prefix(']') else {
            return Err(malformed(input, "Missing \"]\" after array dimensions."));
        };
        if upper < lower {
            return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "upper bound cannot be less than lower bound"));
        }
        explicit.push(((upper as i64 - lower as i64 + 1) as i32, lower));
        p = after;
    }
    let counted = if explicit.is_empty() {
        if !p.starts_with('{') {
            return Err(malformed(input, "Array value must start with \"{\" or dimension information."));
        }
        array_count(p, delim)?
    } else {
        let Some(rest) = p.strip_prefix('=') else {
            return Err(malformed(input, "Missing \"=\" after array dimensions."));
        };
        p = rest.trim_start_matches(is_array_space);
        if !p.starts_with('{') {
            return Err(malformed(input, "Array contents must start with \"{\"."));
        }
        let counted = array_count(p, delim)?;
        if counted.len() != explicit.len() || counted.iter().zip(&explicit).any(|(c, e)| *c != e.0) {
            return Err(malformed(input, "Specified array dimensions do not match array contents."));
        }
        counted
    };
    let dims: Vec<(i32, i32)> = if explicit.is_empty() { counted.iter().map(|&n| (n, 1)).collect() } else { explicit };
    let shape: Vec<(i64, i64)> = dims.iter().map(|&(l, b)| (l as i64, b as i64)).collect();
    let count = check_dims(&shape)?;
    if count == 0 {
        return Ok(Array::empty(element_type));
    }
    let mut elements = Vec::with_capacity(count);
    read_elements(p, delim, &mut elements, element_parse)?;
    Ok(Array { element_type, dims, elements })
}

/// ArrayCount's states: what the scanner has just seen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ParseState {
    NoLevel,
    LevelStarted,
    ElemStarted,
    QuotedElemStarted,
    QuotedElemCompleted,
    ElemDelimited,
    LevelCompleted,
    LevelDelimited,
}

/// ArrayCount: checks the brace structure of array text and counts each
/// dimension's length (no dimensions for an empty array), with
/// PostgreSQL's messages for every malformation. `s` starts at `{`.
fn array_count(s: &str, delim: char) -> PgResult<Vec<i32>> {
    use ParseState::*;
    let bad = |detail: String| malformed(s, &detail);
    let chars: Vec<char> = s.chars().collect();
    let mut nest = 0usize;
    let mut ndim = 1usize;
    let mut temp = [0i32; MAX_DIMS];
    let mut nelems = [1i32; MAX_DIMS];
    let mut nelems_last = [0i32; MAX_DIMS];
    let mut in_quotes = false;
    let mut empty = true;
    let mut state = NoLevel;
    let mut i = 0usize;
    let mut done = false;
    while !done {
        let mut item_done = false;
        while !item_done {
            if state == ElemStarted || state == QuotedElemStarted {
                empty = false;
            }
            let Some(&c) = chars.get(i) else {
                return Err(bad("Unexpected end of input.".into()));
            };
            match c {
                '\\' => {
                    if !matches!(state, LevelStarted | ElemStarted | QuotedElemStarted | ElemDelimited) {
                        return Err(bad("Unexpected \"\\\" character.".into()));
                    }
                    if state != QuotedElemStarted {
                        state = ElemStarted;
                    }
                    if i + 1 < chars.len() {
                        i += 1;
                    } else {
                        return Err(bad("Unexpected end of input.".into()));
                    }
                }
                '"' => {
                    if !matches!(state, LevelStarted | QuotedElemStarted | ElemDelimited) {
                        return Err(bad("Unexpected array element.".into()));
                    }
                    in_quotes = !in_quotes;
                    state = if in_quotes { QuotedElemStarted } else { QuotedElemCompleted };
                }
                '{' if !in_quotes => {
                    if !matches!(state, NoLevel | LevelStarted | LevelDelimited) {
                        return Err(bad("Unexpected \"{\" character.".into()));
                    }
                    state = LevelStarted;
                    if nest >= MAX_DIMS {
                        return Err(too_many_dims(nest + 1));
                    }
                    temp[nest] = 0;
                    nest += 1;
                    ndim = ndim.max(nest);
                }
                '}' if !in_quotes => {
                    if !matches!(state, ElemStarted | QuotedElemCompleted | LevelCompleted)
                        && !(nest == 1 && state == LevelStarted)
                    {
                        return Err(bad("Unexpected \"}\" character.".into()));
                    }
                    state = LevelCompleted;
                    if nest == 0 {
                        return Err(bad("Unmatched \"}\" character.".into()));
                    }
                    nest -= 1;
                    if nelems_last[nest] != 0 && nelems[nest] != nelems_last[nest] {
                        return Err(bad("Multidimensional arrays must have sub-arrays with matching dimensions.".into()));
                    }
                    nelems_last[nest] = nelems[nest];
                    nelems[nest] = 1;
                    if nest == 0 {
                        done = true;
                        item_done = true;
                    } else {
                        temp[nest - 1] += 1;
                    }
                }
                c if !in_quotes && c == delim => {
                    if !matches!(state, ElemStarted | QuotedElemCompleted | LevelCompleted) {
                        return Err(bad(format!("Unexpected \"{delim}\" character.")));
                    }
                    state = if state == LevelCompleted { LevelDelimited } else { ElemDelimited };
                    item_done = true;
                    nelems[nest - 1] += 1;
                }
                c if !in_quotes && !is_array_space(c) => {
                    if !matches!(state, LevelStarted | ElemStarted | ElemDelimited) {
                        return Err(bad("Unexpected array element.".into()));
                    }
                    state = ElemStarted;
                }
                _ => {}
            }
            if !item_done {
                i += 1;
            }
        }
        temp[ndim - 1] += 1;
        i += 1;
    }
    if chars[i.min(chars.len())..].iter().any(|&c| !is_array_space(c)) {
        return Err(bad("Junk after closing right brace.".into()));
    }
    if empty {
        return Ok(Vec::new());
    }
    Ok(temp[..ndim].to_vec())
}

/// ReadArrayStr: the elements of well-formed array text (checked by
/// `array_count`), in order. Unquoted elements lose surrounding
/// whitespace, except what a backslash protects; an unquoted `NULL`
/// without backslashes is the null value.
fn read_elements(s: &str, delim: char, out: &mut Vec<Datum>, element_parse: &mut dyn FnMut(&str) -> PgResult<Datum>) -> PgResult<()> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            depth -= 1;
            i += 1;
            if depth == 0 {
                break;
            }
            continue;
        }
        if c == delim || is_array_space(c) {
            i += 1;
            continue;
        }
        // One element: runs to an unquoted delimiter or closing brace.
        let mut text = String::new();
        let mut kept = 0usize; // how much of `text` trimming trailing spaces must keep
        let mut in_quotes = false;
        let mut has_quotes = false;
        let mut has_escapes = false;
        while i < chars.len() {
            let ch = chars[i];
            if ch == '\\' {
                has_escapes = true;
                i += 1;
                if let Some(&n) = chars.get(i) {
                    text.push(n);
                    kept = text.len();
                }
                i += 1;
                continue;
            }
            if ch == '"' {
                in_quotes = !in_quotes;
                has_quotes = true;
                kept = text.len();
                i += 1;
                continue;
            }
            if !in_quotes && (ch == delim || ch == '}') {
                break;
            }
            text.push(ch);
            if in_quotes || !is_array_space(ch) {
                kept = text.len();
            }
            i += 1;
        }
        text.truncate(kept);
        if !has_quotes && !has_escapes && text.eq_ignore_ascii_case("NULL") {
            out.push(Datum::Null);
        } else {
            out.push(element_parse(&text)?);
        }
    }
    Ok(())
}

/// PostgreSQL's MaxArraySize: the most elements an array may hold.
pub const MAX_ARRAY_ELEMENTS: i64 = 0x3FF_FFFF * 2 + 1; // MaxAllocSize / sizeof(Datum)

fn subscript_error(msg: &str) -> PgError {
    PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, msg.to_string())
}

/// ArrayGetNItems and ArrayCheckBounds: the element count of the given
/// dimensions, refusing arrays too large or whose upper bounds overflow.
pub fn check_dims(dims: &[(i64, i64)]) -> PgResult<usize> {
    let mut n: i64 = 1;
    for &(len, lower) in dims {
        if len < 0 {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("array size exceeds the maximum allowed ({MAX_ARRAY_ELEMENTS})"),
            ));
        }
        n = n.saturating_mul(len);
        if n > MAX_ARRAY_ELEMENTS {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("array size exceeds the maximum allowed ({MAX_ARRAY_ELEMENTS})"),
            ));
        }
        if lower + len > i32::MAX as i64 || lower < i32::MIN as i64 {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("array lower bound is too large: {lower}"),
            ));
        }
    }
    if dims.is_empty() {
        return Ok(0);
    }
    Ok(n as usize)
}

impl Array {
    /// The flat offset of an element, given one subscript per dimension
    /// (None when out of range).
    fn offset_of(&self, idx: &[i64]) -> Option<usize> {
        let mut offset = 0usize;
        for (d, &i) in idx.iter().enumerate() {
            let (len, lower) = self.dims[d];
            let rel = i - lower as i64;
            if rel < 0 || rel >= len as i64 {
                return None;
            }
            offset = offset * len as usize + rel as usize;
        }
        Some(offset)
    }

    /// The strides of each dimension in the flat element list.
    fn strides(dims: &[(i32, i32)]) -> Vec<usize> {
        let mut strides = vec![1usize; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1].0 as usize;
        }
        strides
    }

    /// Visits, in row-major order, the flat offsets of the elements inside
    /// the box `lower..=upper` (one range per dimension, relative to the
    /// array's dimensions, already within them).
    fn box_offsets(dims: &[(i32, i32)], lower: &[i64], upper: &[i64], f: &mut dyn FnMut(usize)) {
        let strides = Array::strides(dims);
        let n = dims.len();
        let mut cur: Vec<i64> = lower.to_vec();
        loop {
            let mut off = 0usize;
            for d in 0..n {
                off += (cur[d] - dims[d].1 as i64) as usize * strides[d];
            }
            f(off);
            let mut d = n;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                if cur[d] < upper[d] {
                    cur[d] += 1;
                    for e in d + 1..n {
                        cur[e] = lower[e];
                    }
                    break;
                }
            }
        }
    }

    /// array_get_element: the element at the given subscripts, NULL when
    /// their number differs from the dimensions or one is out of range.
    pub fn element_at(&self, idx: &[i64]) -> Datum {
        if self.dims.is_empty() || idx.len() != self.dims.len() {
            return Datum::Null;
        }
        match self.offset_of(idx) {
            Some(o) => self.elements.get(o).cloned().unwrap_or(Datum::Null),
            None => Datum::Null,
        }
    }

    /// array_get_slice: the sub-array between the bounds (an omitted bound
    /// is the array's own), clipped to the array; dimensions not named are
    /// taken whole. The slice's lower bounds are 1; a slice outside the
    /// array is empty.
    pub fn slice(&self, bounds: &[(Option<i64>, Option<i64>)]) -> Array {
        let ndim = self.dims.len();
        if ndim == 0 || bounds.len() > ndim {
            return Array::empty(self.element_type);
        }
        let mut lower = Vec::with_capacity(ndim);
        let mut upper = Vec::with_capacity(ndim);
        for d in 0..ndim {
            let (len, lb) = (self.dims[d].0 as i64, self.dims[d].1 as i64);
            let (lo, hi) = bounds.get(d).copied().unwrap_or((None, None));
            let lo = lo.map(|l| l.max(lb)).unwrap_or(lb);
            let hi = hi.map(|h| h.min(lb + len - 1)).unwrap_or(lb + len - 1);
            if lo > hi {
                return Array::empty(self.element_type);
            }
            lower.push(lo);
            upper.push(hi);
        }
        let mut elements = Vec::new();
        Array::box_offsets(&self.dims, &lower, &upper, &mut |o| elements.push(self.elements[o].clone()));
        let dims = lower.iter().zip(&upper).map(|(l, u)| ((u - l + 1) as i32, 1)).collect();
        Array { element_type: self.element_type, dims, elements }
    }

    /// array_set_element: a copy with the element at `idx` replaced. An
    /// empty array becomes one with a single element at those subscripts;
    /// a one-dimensional array grows to take a subscript outside it,
    /// the positions between filled with NULLs.
    pub fn with_element(&self, idx: &[i64], value: Datum) -> PgResult<Array> {
        if idx.len() > MAX_DIMS {
            return Err(too_many_dims(idx.len()));
        }
        if self.dims.is_empty() {
            let dims: Vec<(i64, i64)> = idx.iter().map(|&i| (1, i)).collect();
            check_dims(&dims)?;
            return Ok(Array {
                element_type: self.element_type,
                dims: dims.iter().map(|&(l, b)| (l as i32, b as i32)).collect(),
                elements: vec![value],
            });
        }
        if self.dims.len() != idx.len() {
            return Err(subscript_error("wrong number of array subscripts"));
        }
        if self.dims.len() == 1 {
            let (len, lb) = (self.dims[0].0 as i64, self.dims[0].1 as i64);
            let i = idx[0];
            let (mut new_lb, mut new_len, mut before) = (lb, len, 0i64);
            if i < lb {
                before = lb - i;
                new_len += before;
                new_lb = i;
            }
            if i >= new_lb + new_len {
                new_len = i - new_lb + 1;
            }
            check_dims(&[(new_len, new_lb)])?;
            let mut elements = Vec::with_capacity(new_len as usize);
            elements.extend(std::iter::repeat(Datum::Null).take(before as usize));
            elements.extend(self.elements.iter().cloned());
            elements.resize(new_len as usize, Datum::Null);
            elements[(i - new_lb) as usize] = value;
            return Ok(Array { element_type: self.element_type, dims: vec![(new_len as i32, new_lb as i32)], elements });
        }
        let Some(o) = self.offset_of(idx) else {
            return Err(subscript_error("array subscript out of range"));
        };
        let mut out = self.clone();
        out.elements[o] = value;
        Ok(out)
    }

    /// array_set_slice: a copy with the slice between the bounds replaced
    /// by the source's elements, read in order (the source's shape does
    /// not matter, only that it has enough elements).
    pub fn with_slice(&self, bounds: &[(Option<i64>, Option<i64>)], source: &Array) -> PgResult<Array> {
        let n = bounds.len();
        if n > MAX_DIMS {
            return Err(too_many_dims(n));
        }
        if self.dims.is_empty() {
            let mut dims = Vec::with_capacity(n);
            for &(lo, hi) in bounds {
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    return Err(subscript_error("array slice subscript must provide both boundaries").with_detail(
                        "When assigning to a slice of an empty array value, slice boundaries must be fully specified.".to_string(),
                    ));
                };
                dims.push((1 + hi - lo, lo));
            }
            let count = check_dims(&dims)?;
            if source.elements.len() < count {
                return Err(subscript_error("source array too small"));
            }
            if count == 0 {
                return Ok(Array::empty(self.element_type));
            }
            return Ok(Array {
                element_type: self.element_type,
                dims: dims.iter().map(|&(l, b)| (l as i32, b as i32)).collect(),
                elements: source.elements[..count].to_vec(),
            });
        }
        let ndim = self.dims.len();
        if ndim < n {
            return Err(subscript_error("wrong number of array subscripts"));
        }
        if ndim == 1 {
            let (len, lb) = (self.dims[0].0 as i64, self.dims[0].1 as i64);
            let lo = bounds[0].0.unwrap_or(lb);
            let hi = bounds[0].1.unwrap_or(lb + len - 1);
            if lo > hi {
                return Err(subscript_error("upper bound cannot be less than lower bound"));
            }
            let new_lb = lo.min(lb);
            let new_ub = hi.max(lb + len - 1);
            let new_len = new_ub - new_lb + 1;
            check_dims(&[(new_len, new_lb)])?;
            let count = (hi - lo + 1) as usize;
            if source.elements.len() < count {
                return Err(subscript_error("source array too small"));
            }
            let mut elements = vec![Datum::Null; new_len as usize];
            for (k, e) in self.elements.iter().enumerate() {
                elements[(lb - new_lb) as usize + k] = e.clone();
            }
            for (k, e) in source.elements[..count].iter().enumerate() {
                elements[(lo - new_lb) as usize + k] = e.clone();
            }
            return Ok(Array { element_type: self.element_type, dims: vec![(new_len as i32, new_lb as i32)], elements });
        }
        let mut lower = Vec::with_capacity(ndim);
        let mut upper = Vec::with_capacity(ndim);
        for d in 0..ndim {
            let (len, lb) = (self.dims[d].0 as i64, self.dims[d].1 as i64);
            let (lo, hi) = bounds.get(d).copied().unwrap_or((None, None));
            let lo = lo.unwrap_or(lb);
            let hi = hi.unwrap_or(lb + len - 1);
            if lo > hi {
                return Err(subscript_error("upper bound cannot be less than lower bound"));
            }
            if d < n && (lo < lb || hi >= lb + len) {
                return Err(subscript_error("array subscript out of range"));
            }
            lower.push(lo);
            upper.push(hi);
        }
        let count: usize = lower.iter().zip(&upper).map(|(l, u)| (u - l + 1) as usize).product();
        if source.elements.len() < count {
            return Err(subscript_error("source array too small"));
        }
        let mut out = self.clone();
        let mut k = 0;
        Array::box_offsets(&self.dims, &lower, &upper, &mut |o| {
            out.elements[o] = source.elements[k].clone();
            k += 1;
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ints(s: &str) -> PgResult<Array> {
        parse_array(s, crate::oid::INT4, ',', &mut |t| {
            t.trim().parse::<i32>().map(Datum::Int4).map_err(|_| PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "bad"))
        })
    }

    fn show(a: &Array) -> String {
        format_array(a, ',', &mut |d| match d {
            Datum::Int4(v) => v.to_string(),
            Datum::Text(s) => s.to_string(),
            _ => "?".into(),
        })
    }

    #[test]
    fn round_trips() {
        assert_eq!(show(&parse_ints("{1,2,3}").unwrap()), "{1,2,3}");
        assert_eq!(show(&parse_ints("{{1,2},{3,4}}").unwrap()), "{{1,2},{3,4}}");
        assert_eq!(show(&parse_ints("{1,NULL}").unwrap()), "{1,NULL}");
        assert_eq!(show(&parse_ints("[0:1]={5,6}").unwrap()), "[0:1]={5,6}");
        assert_eq!(show(&parse_ints("{}").unwrap()), "{}");
        assert!(parse_ints("{{1},{2,3}}").is_err());
        assert!(parse_ints("1,2").is_err());
        let texts = Array::from_vec(crate::oid::TEXT, vec![Datum::text("a b"), Datum::text(""), Datum::text("x\"y")]);
        assert_eq!(show(&texts), r#"{"a b","","x\"y"}"#);
    }
}
