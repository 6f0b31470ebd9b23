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

#[repr(C)]
struct PgQuerySplitResult {
    stmts: *mut *mut [c_int; 2],
    n_stmts: c_int,
    stderr_buffer: *mut c_char,
    error: *mut PgQueryError,
}

extern "C" {
    fn pg_query_split_with_parser(input: *const c_char) -> PgQuerySplitResult;
    fn pg_query_free_split_result(result: PgQuerySplitResult);
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
    check_text_depth(sql)?;
    let input = CString::new(sql).map_err(|_| {
        PgError::new(sqlstate::PROTOCOL_VIOLATION, "invalid message format")
            .with_detail("query string contains a zero byte")
    })?;
    // SAFETY: libpg_query returns either an error or a protobuf buffer, both
    // owned by the result, which we free exactly once below.
    let result = unsafe { pg_query_parse_protobuf(input.as_ptr()) };
    let parsed = unsafe {
        if !result.error.is_null() {
            Err(query_error(&*result.error))
        } else {
            let data = std::slice::from_raw_parts(result.parse_tree.data as *const u8, result.parse_tree.len);
            check_tree_depth(data).and_then(|()| {
                protobuf::ParseResult::decode(data).map_err(|e| PgError::internal(format!("could not decode parse tree: {e}")))
            })
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
/// libpg_query's error as PostgreSQL reports it, with its cursor position.
///
/// # Safety
/// `e` must be a valid error of a libpg_query result not yet freed.
unsafe fn query_error(e: &PgQueryError) -> PgError {
    let message = CStr::from_ptr(e.message).to_string_lossy().into_owned();
    let funcname = if e.funcname.is_null() { String::new() } else { CStr::from_ptr(e.funcname).to_string_lossy().into_owned() };
    let mut err = parse_error(message, &funcname);
    if e.cursorpos > 0 {
        err.position = Some(e.cursorpos as u32);
    }
    err
}

fn parse_error(message: String, funcname: &str) -> PgError {
    // preprocess_pubobj_list reports these through the grammar's error
    // path, which has no token to name: PostgreSQL prints them bare.
    let message = match message.strip_suffix(" at or near") {
        Some(m) if m == "invalid table name" || m == "invalid schema name" => m.to_string(),
        _ => message,
    };
    if message.starts_with("invalid publication object list") {
        return PgError::new(sqlstate::SYNTAX_ERROR, "invalid publication object list")
            .with_detail("One of TABLE or TABLES IN SCHEMA must be specified before a standalone table or schema name.");
    }
    if message == "invalid Unicode escape" && funcname == "core_yylex" {
        // The E'' string form is reported by the lexer itself with its own
        // SQLSTATE; the U&'' form (str_udeescape) is a syntax error.
        return PgError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, message)
            .with_hint("Unicode escapes must be \\uXXXX or \\UXXXXXXXX.");
    }
    if message == "invalid Unicode escape" {
        // U&'...' (str_udeescape): the SQL standard's escape forms.
        return PgError::new(sqlstate::SYNTAX_ERROR, message).with_hint("Unicode escapes must be \\XXXX or \\+XXXXXX.");
    }
    if message.starts_with("unsafe use of string constant with Unicode escapes") {
        return PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
            .with_detail("String constants with Unicode escapes cannot be used when standard_conforming_strings is off.");
    }
    let code = if message.starts_with("invalid byte sequence for encoding") {
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE
    } else if message.contains("is out of range for type") {
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE
    } else if message.contains(" constraints cannot be marked ") {
        // processCASbits: UNIQUE ... NOT VALID, CHECK ... DEFERRABLE, ...
        sqlstate::FEATURE_NOT_SUPPORTED
    } else if message.starts_with("UNENCRYPTED PASSWORD is no longer supported") {
        return PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
            .with_hint("Remove UNENCRYPTED to store the password in encrypted form instead.");
    } else if (message.starts_with("role name \"") && message.ends_with("\" is reserved")) || message.ends_with("cannot be used as a role name here") {
        // The grammar's checks of role names (RoleSpec).
        sqlstate::RESERVED_NAME
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

/// Deepest parse tree (in protobuf message levels) Tusk decodes. Decoding
/// recurses, about 2 KB of stack per level, and session threads have 64 MB;
/// PostgreSQL itself refuses somewhat shallower trees once analysis
/// exhausts its 2 MB max_stack_depth (a sum of 5,000 terms), so nothing
/// PostgreSQL runs is refused here.
pub const MAX_TREE_DEPTH: usize = 12_000;

/// PostgreSQL's answer to a statement nested too deeply.
pub fn stack_depth_error() -> PgError {
    tusk_types::error::stack_depth_error()
}

/// Statements longer than this are scanned for nesting before parsing.
/// libpg_query turns the parse tree into protobuf recursively, without a
/// stack check, using a few hundred bytes of stack per level; a shorter
/// statement cannot nest deeply enough to exhaust a session thread's stack.
const SCAN_DEPTH_ABOVE_LEN: usize = 32 * 1024;

/// The nesting bound past which a statement is refused unparsed: well above
/// what PostgreSQL runs, well below what overflows the stack in libpg_query.
const MAX_TEXT_DEPTH: usize = 60_000;

/// Refuses, before libpg_query sees it, a long statement that might nest
/// too deeply for its recursive protobuf output (an adversarial sum of a
/// million terms would otherwise overflow the session thread's stack and
/// take the server down). The bound comes from the tokens: every token may
/// open a level, except separators after which nesting starts over at the
/// current parenthesis depth (commas, AND/OR, which PostgreSQL's grammar
/// flattens, CASE arms and statement ends), and each parenthesis or
/// bracket level adds its own. It overestimates, never underestimates.
fn check_text_depth(sql: &str) -> PgResult<()> {
    use protobuf::Token;
    if sql.len() <= SCAN_DEPTH_ABOVE_LEN {
        return Ok(());
    }
    // A scan error is left for the parser to report.
    let Ok(scanned) = pg_query::scan(sql) else { return Ok(()) };
    // Tokens counted at each open parenthesis level, outermost first.
    let mut levels: Vec<usize> = vec![0];
    let mut total = 0usize;
    for t in &scanned.tokens {
        let tok = Token::from_i32(t.token).unwrap_or(Token::Nul);
        match tok {
            Token::Ascii40 | Token::Ascii91 => {
                levels.push(1);
                total += 1;
            }
            Token::Ascii41 | Token::Ascii93 => {
                if levels.len() > 1 {
                    total -= levels.pop().unwrap_or(0);
                }
            }
            Token::Ascii44 | Token::Ascii59 | Token::And | Token::Or | Token::When | Token::Then | Token::Else => {
                let top = levels.last_mut().expect("the outermost level stays");
                total -= *top;
                *top = 0;
            }
            _ => {
                *levels.last_mut().expect("the outermost level stays") += 1;
                total += 1;
            }
        }
        if total > MAX_TEXT_DEPTH {
            return Err(grammar_error(sql).unwrap_or_else(stack_depth_error));
        }
    }
    Ok(())
}

/// The raw grammar's own error for `sql`, if it has one: it runs without
/// building the output tree, so deep nesting cannot hurt it, and its
/// parser stack is bounded (a statement nested past 10,000 grammar levels
/// gets bison's "memory exhausted", as in PostgreSQL).
fn grammar_error(sql: &str) -> Option<PgError> {
    let input = CString::new(sql).ok()?;
    // SAFETY: the result owns its error, which is read and freed exactly once.
    unsafe {
        let result = pg_query_split_with_parser(input.as_ptr());
        let err = if result.error.is_null() {
            None
        } else {
            Some(query_error(&*result.error))
        };
        pg_query_free_split_result(result);
        err
    }
}

/// Refuses a parse tree too deep to decode safely. Small buffers cannot
/// nest deeply (each level costs at least two bytes), so only large ones
/// are scanned.
fn check_tree_depth(data: &[u8]) -> PgResult<()> {
    if data.len() / 2 <= MAX_TREE_DEPTH {
        return Ok(());
    }
    match message_depth(data, MAX_TREE_DEPTH + 1) {
        Some(d) if d <= MAX_TREE_DEPTH => Ok(()),
        _ => Err(stack_depth_error()),
    }
}

/// Nesting depth of a protobuf message, read without its schema: a
/// length-delimited field counts as a nested message when its bytes parse
/// as one, else as a string. None if `data` is not a valid message. Stops
/// at `cap` levels. Iterative, since the point is not to recurse deeply.
fn message_depth(data: &[u8], cap: usize) -> Option<usize> {
    fn varint(data: &[u8], pos: &mut usize, end: usize) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            if *pos >= end {
                return None;
            }
            let b = data[*pos];
            *pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    /// A message being read: where its bytes end, the read position, and
    /// the depth of its deepest nested message so far.
    struct Frame {
        end: usize,
        pos: usize,
        deepest: usize,
    }
    let mut stack = vec![Frame { end: data.len(), pos: 0, deepest: 0 }];
    loop {
        let top = stack.last_mut().expect("the outermost frame is popped last");
        if top.pos == top.end {
            // A whole message: it nests one level above its deepest child.
            let depth = top.deepest + 1;
            stack.pop();
            match stack.last_mut() {
                None => return Some(depth),
                Some(parent) => parent.deepest = parent.deepest.max(depth),
            }
            continue;
        }
        let end = top.end;
        let mut pos = top.pos;
        let field = (|| {
            let tag = varint(data, &mut pos, end)?;
            if tag >> 3 == 0 {
                return None;
            }
            match tag & 7 {
                0 => varint(data, &mut pos, end).map(|_| None),
                1 => pos.checked_add(8).filter(|&p| p <= end).map(|p| {
                    pos = p;
                    None
                }),
                5 => pos.checked_add(4).filter(|&p| p <= end).map(|p| {
                    pos = p;
                    None
                }),
                2 => {
                    let len = usize::try_from(varint(data, &mut pos, end)?).ok()?;
                    let sub_end = pos.checked_add(len).filter(|&e| e <= end)?;
                    Some(Some((pos, sub_end)))
                }
                _ => None,
            }
        })();
        match field {
            Some(None) => top.pos = pos,
            Some(Some((start, sub_end))) => {
                top.pos = sub_end;
                if stack.len() >= cap {
                    return Some(cap);
                }
                stack.push(Frame { end: sub_end, pos: start, deepest: 0 });
            }
            None => {
                // Not a message: as a nested attempt, the field was a string
                // (its parent already moved past it); at the top, invalid.
                stack.pop();
                if stack.is_empty() {
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn deep_but_legal_trees_parse() {
        // PostgreSQL runs a 4,000-term sum; prost's default limit refused 50.
        let sql = format!("SELECT {}", vec!["1"; 4000].join("+"));
        let h = std::thread::Builder::new().stack_size(64 << 20).spawn(move || parse(&sql).map(|s| s.len())).unwrap();
        assert_eq!(h.join().unwrap().unwrap(), 1);
    }

    #[test]
    fn too_deep_trees_are_refused_not_decoded() {
        let sql = format!("SELECT {}", vec!["1"; 20_000].join("+"));
        let h = std::thread::Builder::new().stack_size(64 << 20).spawn(move || parse(&sql).map(|_| ())).unwrap();
        let err = h.join().unwrap().unwrap_err();
        assert_eq!(err.code, sqlstate::STATEMENT_TOO_COMPLEX);
        assert_eq!(err.message, "stack depth limit exceeded");
    }

    #[test]
    fn adversarially_deep_statements_are_refused_unparsed() {
        // Far deeper than any stack: must be refused before libpg_query
        // recurses over it.
        let sql = format!("SELECT {}", vec!["1"; 2_000_000].join("+"));
        let h = std::thread::Builder::new().stack_size(8 << 20).spawn(move || parse(&sql).map(|_| ()).unwrap_err().message).unwrap();
        assert_eq!(h.join().unwrap(), "stack depth limit exceeded");
    }

    #[test]
    fn wide_trees_are_not_deep() {
        let sql = format!("INSERT INTO t VALUES {}", vec!["(1, 'x', 2.5)"; 50_000].join(","));
        assert_eq!(parse(&sql).unwrap().len(), 1);
        let sql = format!("SELECT 1 WHERE 1 IN ({}) OR {}", vec!["1"; 100_000].join(","), vec!["true"; 100_000].join(" OR "));
        assert_eq!(parse(&sql).unwrap().len(), 1);
    }
}
