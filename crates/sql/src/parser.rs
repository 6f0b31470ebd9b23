//! The parser: SQL text to PostgreSQL's raw parse trees, by PostgreSQL 15's
//! own grammar (libpg_query through the `pg_query` crate).
//!
//! We call libpg_query's protobuf entry point directly rather than through
//! `pg_query::parse` because a syntax error's cursor position (which psql
//! turns into its `LINE 1: ... ^` display) is only in the C result.

use std::ffi::{c_char, c_int, CStr, CString};

use pg_query::protobuf;
use pg_query::NodeEnum;
use prost::Message;
use tusk_types::{sqlstate, PgError, PgResult};

#[repr(C)]
struct PgQueryError {
    message: *mut c_char,
    funcname: *mut c_char,
    filename: *mut c_char,
    lineno: c_int,
    cursorpos: c_int,
    context: *mut c_char,
}

#[repr(C)]
struct PgQueryProtobuf {
    len: usize,
    data: *mut c_char,
}

#[repr(C)]
struct PgQueryProtobufParseResult {
    parse_tree: PgQueryProtobuf,
    stderr_buffer: *mut c_char,
    error: *mut PgQueryError,
}

extern "C" {
    fn pg_query_parse_protobuf(input: *const c_char) -> PgQueryProtobufParseResult;
    fn pg_query_free_protobuf_parse_result(result: PgQueryProtobufParseResult);
}

/// One statement of a query string, with where it sits in the text.
#[derive(Debug, Clone)]
pub struct ParsedStatement {
    pub node: NodeEnum,
    /// Byte offset and length of this statement in the original string.
    pub location: usize,
    pub len: usize,
}

/// Parses a query string that may hold several statements (simple protocol).
pub fn parse(sql: &str) -> PgResult<Vec<ParsedStatement>> {
    let input = CString::new(sql).map_err(|_| {
        PgError::new(sqlstate::PROTOCOL_VIOLATION, "invalid message format")
            .with_detail("query string contains a zero byte")
    })?;
    // SAFETY: libpg_query returns either an error or a protobuf buffer, both
    // owned by the result, which we free exactly once below.
    let result = unsafe { pg_query_parse_protobuf(input.as_ptr()) };
    let parsed = unsafe {
        if !result.error.is_null() {
            let e = &*result.error;
            let message = CStr::from_ptr(e.message).to_string_lossy().into_owned();
            let mut err = parse_error(message);
            if e.cursorpos > 0 {
                err.position = Some(e.cursorpos as u32);
            }
            Err(err)
        } else {
            let data = std::slice::from_raw_parts(result.parse_tree.data as *const u8, result.parse_tree.len);
            protobuf::ParseResult::decode(data)
                .map_err(|e| PgError::internal(format!("could not decode parse tree: {e}")))
        }
    };
    unsafe { pg_query_free_protobuf_parse_result(result) };
    let parsed = parsed?;
    let mut out = Vec::with_capacity(parsed.stmts.len());
    for raw in parsed.stmts {
        let Some(node) = raw.stmt.and_then(|n| n.node) else { continue };
        let location = raw.stmt_location.max(0) as usize;
        let len = if raw.stmt_len == 0 { sql.len().saturating_sub(location) } else { raw.stmt_len as usize };
        out.push(ParsedStatement { node, location, len });
    }
    Ok(out)
}

/// libpg_query reports every error of the raw parser; most are syntax
/// errors, a few carry other SQLSTATEs in PostgreSQL (we map those by text).
fn parse_error(message: String) -> PgError {
    let code = if message.starts_with("unterminated")
        || message.starts_with("syntax error")
        || message.starts_with("zero-length delimited identifier")
        || message.contains("at or near")
    {
        sqlstate::SYNTAX_ERROR
    } else if message.contains("is out of range for type") {
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE
    } else if message.starts_with("invalid Unicode") || message.contains("Unicode escape") {
        sqlstate::INVALID_ESCAPE_SEQUENCE
    } else if message.contains("not supported") {
        sqlstate::FEATURE_NOT_SUPPORTED
    } else if message.starts_with("improper use of \"*\"") || message.contains("cannot be used") {
        sqlstate::SYNTAX_ERROR
    } else {
        sqlstate::SYNTAX_ERROR
    };
    PgError::new(code, message)
}

/// The text of one statement, for logs, pg_stat_activity and plan cache keys.
pub fn statement_text<'a>(sql: &'a str, stmt: &ParsedStatement) -> &'a str {
    let end = (stmt.location + stmt.len).min(sql.len());
    sql.get(stmt.location..end).unwrap_or(sql).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_statements_and_positions() {
        let sql = "SELECT 1; SELECT 2";
        let stmts = parse(sql).unwrap();
        assert_eq!(stmts.len(), 2);
        assert_eq!(statement_text(sql, &stmts[1]), "SELECT 2");
        let err = parse("SELECT * FORM t").unwrap_err();
        assert_eq!(err.code, sqlstate::SYNTAX_ERROR);
        assert_eq!(err.message, "syntax error at or near \"FORM\"");
        assert_eq!(err.position, Some(10));
    }
}
