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

/// array_in, given a parser for element text (None = NULL element).
pub fn parse_array(
    input: &str,
    element_type: Oid,
    delim: char,
    element_parse: &mut dyn FnMut(&str) -> PgResult<Datum>,
) -> PgResult<Array> {
    let s = input.trim_matches(|c: char| c.is_ascii_whitespace());
    let mut rest = s;
    let mut explicit_dims: Vec<(i32, i32)> = Vec::new();
    if rest.starts_with('[') {
        while rest.starts_with('[') {
            if explicit_dims.len() >= MAX_DIMS {
                return Err(too_many_dims(explicit_dims.len() + 1));
            }
            let close = rest.find(']').ok_or_else(|| malformed(input, "Missing \"]\" after array dimensions."))?;
            let inner = &rest[1..close];
            let (lo, hi) = match inner.split_once(':') {
                Some((l, h)) => (l.trim().parse::<i32>(), h.trim().parse::<i32>()),
                None => (Ok(1), inner.trim().parse::<i32>()),
            };
            let (lo, hi) = match (lo, hi) {
                (Ok(l), Ok(h)) => (l, h),
                _ => return Err(malformed(input, "\"[\" must introduce explicitly-specified array dimensions.")),
            };
            if hi < lo {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "upper bound cannot be less than lower bound",
                ));
            }
            explicit_dims.push((hi - lo + 1, lo));
            rest = rest[close + 1..].trim_start();
        }
        rest = rest
            .strip_prefix('=')
            .ok_or_else(|| malformed(input, "Missing \"=\" after array dimensions."))?
            .trim_start();
    }
    if !rest.starts_with('{') {
        return Err(malformed(input, "Array value must start with \"{\" or dimension information."));
    }
    let chars: Vec<char> = rest.chars().collect();
    let mut pos = 0;
    let mut elements = Vec::new();
    // Per level: number of items seen at that level.
    let mut dim_lens: Vec<Option<i32>> = Vec::new();
    parse_level(&chars, &mut pos, 0, delim, input, &mut elements, &mut dim_lens, element_parse)?;
    while pos < chars.len() && chars[pos].is_ascii_whitespace() {
        pos += 1;
    }
    if pos != chars.len() {
        return Err(malformed(input, "Junk after closing right brace."));
    }
    if elements.is_empty() {
        return Ok(Array::empty(element_type));
    }
    let dims: Vec<(i32, i32)> = dim_lens.iter().map(|l| (l.unwrap_or(0), 1)).collect();
    if !explicit_dims.is_empty() {
        if explicit_dims.len() != dims.len() || explicit_dims.iter().zip(&dims).any(|(e, d)| e.0 != d.0) {
            return Err(malformed(input, "Specified array dimensions do not match array contents."));
        }
        return Ok(Array { element_type, dims: explicit_dims, elements });
    }
    Ok(Array { element_type, dims, elements })
}

#[allow(clippy::too_many_arguments)]
fn parse_level(
    chars: &[char],
    pos: &mut usize,
    level: usize,
    delim: char,
    input: &str,
    elements: &mut Vec<Datum>,
    dim_lens: &mut Vec<Option<i32>>,
    element_parse: &mut dyn FnMut(&str) -> PgResult<Datum>,
) -> PgResult<()> {
    debug_assert_eq!(chars[*pos], '{');
    if level >= MAX_DIMS {
        // Also what bounds this recursion.
        return Err(too_many_dims(level + 1));
    }
    *pos += 1;
    if dim_lens.len() <= level {
        dim_lens.push(None);
    }
    let mut count = 0;
    let mut expect_item = true;
    let mut nested: Option<bool> = None;
    loop {
        while *pos < chars.len() && chars[*pos].is_ascii_whitespace() {
            *pos += 1;
        }
        if *pos >= chars.len() {
            return Err(malformed(input, "Unexpected end of input."));
        }
        let c = chars[*pos];
        if c == '}' {
            if count > 0 && expect_item {
                return Err(malformed(input, "Unexpected \"}\" character."));
            }
            *pos += 1;
            break;
        }
        if !expect_item {
            if c == delim {
                *pos += 1;
                expect_item = true;
                continue;
            }
            return Err(malformed(input, &format!("Expected \",\" or \"}}\" character.")));
        }
        if c == '{' {
            if nested == Some(false) {
                return Err(malformed(input, "Unexpected \"{\" character."));
            }
            nested = Some(true);
            parse_level(chars, pos, level + 1, delim, input, elements, dim_lens, element_parse)?;
        } else {
            if nested == Some(true) {
                return Err(malformed(input, "Unexpected array element."));
            }
            nested = Some(false);
            // One element: quoted or bare, with backslash escapes.
            let mut text = String::new();
            let mut quoted_any = false;
            if c == '"' {
                quoted_any = true;
                *pos += 1;
                loop {
                    if *pos >= chars.len() {
                        return Err(malformed(input, "Unexpected end of input."));
                    }
                    let ch = chars[*pos];
                    *pos += 1;
                    match ch {
                        '\\' => {
                            if *pos >= chars.len() {
                                return Err(malformed(input, "Unexpected end of input."));
                            }
                            text.push(chars[*pos]);
                            *pos += 1;
                        }
                        '"' => break,
                        _ => text.push(ch),
                    }
                }
            } else {
                while *pos < chars.len() {
                    let ch = chars[*pos];
                    if ch == delim || ch == '}' {
                        break;
                    }
                    if ch == '{' || ch == '"' {
                        return Err(malformed(input, &format!("Unexpected \"{ch}\" character.")));
                    }
                    if ch == '\\' {
                        *pos += 1;
                        if *pos < chars.len() {
                            text.push(chars[*pos]);
                            *pos += 1;
                        }
                        continue;
                    }
                    text.push(ch);
                    *pos += 1;
                }
                let trimmed = text.trim_end_matches(|c: char| c.is_ascii_whitespace()).to_string();
                text = trimmed;
            }
            if !quoted_any && text.eq_ignore_ascii_case("NULL") {
                elements.push(Datum::Null);
            } else {
                elements.push(element_parse(&text)?);
            }
        }
        count += 1;
        expect_item = false;
    }
    match dim_lens[level] {
        None => dim_lens[level] = Some(count),
        Some(n) if n != count => {
            return Err(malformed(input, "Multidimensional arrays must have sub-arrays with matching dimensions."))
        }
        _ => {}
    }
    Ok(())
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
