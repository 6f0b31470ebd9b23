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
    fn tusk_set_standard_conforming_strings(on: bool);
    fn tusk_set_escape_string_warning(on: bool);
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
    parse_with(sql, true)
}

/// Parses with the session's standard_conforming_strings: when it is off,
/// backslashes in plain '...' literals are escapes, as in old PostgreSQL.
pub fn parse_with(sql: &str, standard_conforming_strings: bool) -> PgResult<Vec<ParsedStatement>> {
    // SAFETY: the shim only stores into the calling thread's lexer switches.
    // The "nonstandard use of \\" warning would go to libpg_query's stderr
    // buffer, which no client sees, so it stays off.
    unsafe {
        tusk_set_standard_conforming_strings(standard_conforming_strings);
        tusk_set_escape_string_warning(false);
    }
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
            let funcname = if e.funcname.is_null() { String::new() } else { CStr::from_ptr(e.funcname).to_string_lossy().into_owned() };
            let mut err = parse_error(message, &funcname);
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
    check_numeric_junk(sql)?;
    let mut out = Vec::with_capacity(parsed.stmts.len());
    for raw in parsed.stmts {
        let Some(mut node) = raw.stmt.and_then(|n| n.node) else { continue };
        if let NodeEnum::SelectStmt(sel) = node {
            node = if sel.into_clause.is_some() { select_into_as_create(*sel)? } else { NodeEnum::SelectStmt(sel) };
        }
        let location = raw.stmt_location.max(0) as usize;
        let len = if raw.stmt_len == 0 { sql.len().saturating_sub(location) } else { raw.stmt_len as usize };
        out.push(ParsedStatement { node, location, len });
    }
    Ok(out)
}

/// SELECT ... INTO target is CREATE TABLE target AS SELECT ... in disguise;
/// the parser hands it on in that form.
fn select_into_as_create(mut select: protobuf::SelectStmt) -> PgResult<NodeEnum> {
    let into = select.into_clause.take().ok_or_else(|| PgError::internal("SELECT INTO without a target"))?;
    if select.op != protobuf::SetOperation::SetopNone as i32 {
        // PostgreSQL allows INTO only in the first arm and reports it as here.
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, "SELECT ... INTO is not allowed here"));
    }
    Ok(NodeEnum::CreateTableAsStmt(Box::new(protobuf::CreateTableAsStmt {
        query: Some(Box::new(protobuf::Node { node: Some(NodeEnum::SelectStmt(Box::new(select))) })),
        into: Some(into),
        objtype: protobuf::ObjectType::ObjectTable as i32,
        is_select_into: true,
        if_not_exists: false,
    })))
}

/// libpg_query reports every error of the raw parser; most are syntax
/// errors, a few carry other SQLSTATEs in PostgreSQL (we map those by text).
fn parse_error(message: String, funcname: &str) -> PgError {
    if message == "invalid Unicode escape" && funcname == "core_yylex" {
        // The E'' string form is reported by the lexer itself with its own
        // SQLSTATE; the U&'' form (str_udeescape) is a syntax error.
        return PgError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, message)
            .with_hint("Unicode escapes must be \\uXXXX or \\UXXXXXXXX.");
    }
    let code = if message.starts_with("invalid byte sequence for encoding") {
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE
    } else if message.contains("is out of range for type") {
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE
    } else if message.starts_with("unsafe use of string constant with Unicode escapes") {
        sqlstate::FEATURE_NOT_SUPPORTED
    } else {
        // Everything else the raw parser reports is a syntax error in
        // PostgreSQL too (including the lexer's Unicode escape errors).
        sqlstate::SYNTAX_ERROR
    };
    PgError::new(code, message)
}

/// PostgreSQL 15's lexer rejects a number run straight into an identifier
/// ("123abc", "0x1F", "1_000"); the libpg_query grammar we link predates
/// that rule and would read `0x1F` as `0 AS x1F`. A byte pre-filter keeps
/// the real scan off the common path.
fn check_numeric_junk(sql: &str) -> PgResult<()> {
    let b = sql.as_bytes();
    let ident_start = |c: u8| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80;
    let ident_cont = |c: u8| ident_start(c) || c.is_ascii_digit() || c == b'$';
    let suspicious = b.windows(2).any(|w| w[0].is_ascii_digit() && ident_start(w[1]));
    if !suspicious {
        return Ok(());
    }
    let Ok(scan) = pg_query::scan(sql) else { return Ok(()) };
    let tokens = &scan.tokens;
    for (i, tok) in tokens.iter().enumerate() {
        let is_number = tok.token == protobuf::Token::Iconst as i32 || tok.token == protobuf::Token::Fconst as i32;
        let Some(next) = tokens.get(i + 1) else { break };
        if !is_number || next.start != tok.end {
            continue;
        }
        let (start, mut end) = (tok.start as usize, next.start as usize);
        if !b.get(end).is_some_and(|&c| ident_start(c)) {
            continue;
        }
        while end < b.len() && ident_cont(b[end]) {
            end += 1;
        }
        let text = String::from_utf8_lossy(&b[start..end]);
        let position = sql[..start].chars().count() as u32 + 1;
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("trailing junk after numeric literal at or near \"{text}\""))
            .with_position(Some(position)));
    }
    Ok(())
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
