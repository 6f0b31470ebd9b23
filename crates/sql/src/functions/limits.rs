//! PostgreSQL's size limits on values, and its errors for passing them.
//!
//! No PostgreSQL value exceeds MaxAllocSize (1 GB - 1, header included) and
//! no array has more than MaxArraySize elements; functions that would build
//! a larger one fail, each with the error its C code raises: palloc's
//! "invalid memory alloc request size" for those that size their result up
//! front (`||`), StringInfo's "out of memory" for those that append
//! (concat, string_agg, record output), "requested length too large" for
//! repeat and the padding functions, and "array size exceeds the maximum
//! allowed" for arrays. Checking before building keeps Tusk from allocating
//! many gigabytes (or aborting) on the way to the same answer.

use std::collections::HashMap;
use std::sync::Arc;

use tusk_types::{sqlstate, Datum, PgError, PgResult};

/// PostgreSQL's MaxAllocSize.
pub const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// PostgreSQL's MaxArraySize: the most elements an array may have.
pub const MAX_ARRAY_SIZE: usize = MAX_ALLOC_SIZE / 8;

/// The 4-byte length word of a stored value.
const VARHDRSZ: usize = 4;

/// palloc's answer to a request over MaxAllocSize (PostgreSQL reports it as
/// an internal error, and so does Tusk).
pub fn alloc_request_error(size: usize) -> PgError {
    PgError::new(sqlstate::INTERNAL_ERROR, format!("invalid memory alloc request size {size}"))
}

/// palloc's check for a value of `len` data bytes.
pub fn check_alloc(len: usize) -> PgResult<()> {
    let size = len.saturating_add(VARHDRSZ);
    if size > MAX_ALLOC_SIZE {
        return Err(alloc_request_error(size));
    }
    Ok(())
}

/// StringInfo's check before appending `more` bytes to a buffer of `len`.
pub fn check_append(len: usize, more: usize) -> PgResult<()> {
    if more >= MAX_ALLOC_SIZE.saturating_sub(len) {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory")
            .with_detail(format!("Cannot enlarge string buffer containing {len} bytes by {more} more bytes.")));
    }
    Ok(())
}

/// The error for an array of too many elements or bytes.
pub fn array_too_large(limit: usize) -> PgError {
    PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("array size exceeds the maximum allowed ({limit})"))
}

/// A last line of defence, applied to every function result: a value past
/// the limits that the function did not refuse itself.
#[inline]
pub fn check_value(d: &Datum) -> PgResult<()> {
    match d {
        Datum::Text(s) | Datum::Json(s) if s.len() + VARHDRSZ > MAX_ALLOC_SIZE => {
            Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "requested length too large"))
        }
        Datum::Bytea(b) if b.len() + VARHDRSZ > MAX_ALLOC_SIZE => {
            Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "requested length too large"))
        }
        Datum::Array(a) => check_array(&a.elements),
        _ => Ok(()),
    }
}

/// construct_md_array's checks: at most MaxArraySize elements, at most
/// MaxAllocSize bytes (elements as stored: a length word and 4-byte
/// alignment for variable-length ones).
pub fn check_array(elements: &[Datum]) -> PgResult<()> {
    if elements.len() > MAX_ARRAY_SIZE {
        return Err(array_too_large(MAX_ARRAY_SIZE));
    }
    // Fixed-width elements cannot reach the byte limit within the count.
    let mut bytes: usize = 24;
    for e in elements {
        bytes = bytes.saturating_add(match e {
            Datum::Text(s) | Datum::Json(s) => (s.len() + VARHDRSZ + 3) & !3,
            Datum::Bytea(b) => (b.len() + VARHDRSZ + 3) & !3,
            Datum::Null => 0,
            _ => 8,
        });
    }
    if bytes > MAX_ALLOC_SIZE {
        return Err(array_too_large(MAX_ALLOC_SIZE));
    }
    Ok(())
}

/// The length of a record's text form and how many of its characters are
/// quotes or backslashes (each doubled when the record is quoted inside
/// another), computed without building the text; records are shared
/// (`ROW(r, r)`), so each is measured once.
fn record_text_size(fields: &Arc<Vec<Datum>>, memo: &mut HashMap<usize, (usize, usize)>, settings: &crate::settings::Settings) -> (usize, usize) {
    let key = Arc::as_ptr(fields) as usize;
    if let Some(v) = memo.get(&key) {
        return *v;
    }
    let mut len = 2 + fields.len().saturating_sub(1);
    let mut specials = 0usize;
    for f in fields.iter() {
        let (flen, fspecial, quote) = match f {
            Datum::Null => continue,
            Datum::Record(r) => {
                let (l, s) = record_text_size(r, memo, settings);
                (l, s, true)
            }
            Datum::Text(text) => {
                let s = text.bytes().filter(|&c| c == b'"' || c == b'\\').count();
                let quote = text.is_empty() || text.bytes().any(|c| matches!(c, b',' | b'(' | b')' | b'"' | b'\\') || c.is_ascii_whitespace());
                (text.len(), s, quote)
            }
            // \x and two hex digits a byte (the default bytea_output).
            Datum::Bytea(b) => (2 + 2 * b.len(), 1, true),
            other => {
                let text = super::io::format_text(other, 0, settings);
                let s = text.chars().filter(|&c| c == '"' || c == '\\').count();
                let quote = text.is_empty() || text.chars().any(|c| matches!(c, ',' | '(' | ')' | '"' | '\\') || c.is_ascii_whitespace());
                (text.len(), s, quote)
            }
        };
        if quote {
            len = len.saturating_add(flen).saturating_add(fspecial).saturating_add(2);
            specials = specials.saturating_add(fspecial.saturating_mul(2)).saturating_add(2);
        } else {
            len = len.saturating_add(flen);
            specials = specials.saturating_add(fspecial);
        }
    }
    memo.insert(key, (len, specials));
    (len, specials)
}

/// A record whose text form would not fit in a value: PostgreSQL fails
/// when it prints it (record_out's buffer, filled a character at a time,
/// cannot grow past 1 GB), and so does Tusk, before building the text.
pub fn check_record(fields: &Arc<Vec<Datum>>, settings: &crate::settings::Settings) -> PgResult<()> {
    // Only nesting makes records large: skip the measurement for flat ones
    // of small scalars.
    if !fields.iter().any(|f| matches!(f, Datum::Record(_) | Datum::Text(_) | Datum::Bytea(_) | Datum::Array(_) | Datum::Json(_))) {
        return Ok(());
    }
    let (len, _) = record_text_size(fields, &mut HashMap::new(), settings);
    if len >= MAX_ALLOC_SIZE - 1 {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(format!(
            "Cannot enlarge string buffer containing {} bytes by 1 more bytes.",
            MAX_ALLOC_SIZE - 1
        )));
    }
    Ok(())
}
