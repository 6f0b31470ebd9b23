//! COPY (commands/copy.c, copyfrom.c, copyfromparse.c, copyto.c): moving
//! rows between a table (or a query) and a stream of bytes, in PostgreSQL's
//! text, CSV and binary formats (the binary one made of each type's
//! send/recv format, `functions::io::format_binary`/`parse_binary`).
//!
//! The protocol layer owns the stream (CopyData messages for STDIN and
//! STDOUT); this module owns the rest. `prepare` analyzes the statement;
//! COPY FROM then gets the data in arbitrary chunks (`CopyFrom::feed`),
//! splits it into lines and fields exactly as PostgreSQL does (escapes,
//! quoting, NULL markers, the `\.` end marker), converts each field with
//! its column type's input function and inserts the rows with every check
//! an INSERT makes. COPY TO runs a query and formats each row
//! (`CopyTo::next_line`). Files named in the statement (server-side COPY)
//! are read and written here, through the same paths.
//!
//! Any bad row fails the whole COPY, with PostgreSQL's message and its
//! CONTEXT line (`COPY t, line 3, column b: "x"`); the statement's
//! transaction then rolls back, so nothing of it is loaded.

use std::borrow::Cow;
use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::def_elem_value;
use crate::catalog::{DbCatalog, RelKind, Relation};
use crate::executor::{self, RowInserter, StmtState};
use crate::expr::Expr;
use crate::functions::io;
use crate::parser::ParsedStatement;
use crate::session::{QueryRun, SqlSession};

/// Rows parsed before they are written in one go.
const BATCH_ROWS: usize = 1000;

/// Queued foreign key checks past which they run before the COPY ends
/// (bounding memory on huge loads; a row may then not reference a row that
/// comes more than this many rows later in the same COPY).
const MAX_PENDING_FK_CHECKS: u64 = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Binary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Header {
    No,
    Yes,
    Match,
}

/// COPY's options, validated as ProcessCopyOptions does.
#[derive(Clone, Debug)]
pub struct CopyOptions {
    pub format: Format,
    delimiter: u8,
    null: String,
    header: Header,
    quote: u8,
    escape: u8,
    /// FORCE_QUOTE: all columns, or these output columns.
    force_quote_all: bool,
    force_quote: Vec<usize>,
    force_not_null: Vec<usize>,
    force_null: Vec<usize>,
    pub freeze: bool,
}

/// An option's position in the statement, for the error caret.
fn at(de: &pb::DefElem) -> Option<u32> {
    (de.location >= 0).then(|| de.location as u32 + 1)
}

fn conflicting() -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

/// A DefElem's value as a list of column names (FORCE_QUOTE (a, b)), or
/// None for `*`.
fn name_list(de: &pb::DefElem) -> Option<Vec<String>> {
    match de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        Some(NodeEnum::List(l)) => Some(l.items.iter().filter_map(|n| crate::analyzer::node_string(n).map(str::to_string)).collect()),
        Some(NodeEnum::AStar(_)) => None,
        _ => Some(Vec::new()),
    }
}

fn bool_option(de: &pb::DefElem) -> PgResult<bool> {
    match def_elem_value(de).map(|v| v.to_ascii_lowercase()) {
        None => Ok(true),
        Some(v) => match v.as_str() {
            "true" | "on" | "1" | "t" | "yes" => Ok(true),
            "false" | "off" | "0" | "f" | "no" => Ok(false),
            _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("{} requires a Boolean value", de.defname))),
        },
    }
}

fn single_byte(what: &str, v: &str) -> PgResult<u8> {
    if v.len() != 1 {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("COPY {what} must be a single one-byte character")));
    }
    Ok(v.as_bytes()[0])
}

impl CopyOptions {
    /// Validates the options against the columns being copied (`names`).
    fn parse(options: &[pb::Node], is_from: bool, names: &[String]) -> PgResult<CopyOptions> {
        let mut format = None;
        let mut delimiter = None;
        let mut null = None;
        let mut header = None;
        let mut quote = None;
        let mut escape = None;
        let mut force_quote: Option<Option<Vec<String>>> = None;
        let mut force_not_null: Option<Option<Vec<String>>> = None;
        let mut force_null: Option<Option<Vec<String>>> = None;
        let mut freeze = None;
        for o in options {
            let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
            let value = || def_elem_value(de).unwrap_or_default();
            match de.defname.as_str() {
                "format" => {
                    if format.is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                    format = Some(match value().as_str() {
                        "text" => Format::Text,
                        "csv" => Format::Csv,
                        "binary" => Format::Binary,
                        other => {
                            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("COPY format \"{other}\" not recognized")).with_position(at(de)))
                        }
                    });
                }
                "delimiter" => {
                    if delimiter.replace(value()).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "null" => {
                    if null.replace(value()).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "header" => {
                    if header.is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                    header = Some(match def_elem_value(de).map(|v| v.to_ascii_lowercase()).as_deref() {
                        Some("match") if is_from => Header::Match,
                        Some("match") => {
                            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot use \"match\" with HEADER in COPY TO"))
                        }
                        _ => {
                            if bool_option(de)? {
                                Header::Yes
                            } else {
                                Header::No
                            }
                        }
                    });
                }
                "quote" => {
                    if quote.replace(value()).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "escape" => {
                    if escape.replace(value()).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "force_quote" => {
                    if force_quote.replace(name_list(de)).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "force_not_null" => {
                    if force_not_null.replace(name_list(de)).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "force_null" => {
                    if force_null.replace(name_list(de)).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "freeze" => {
                    if freeze.replace(bool_option(de)?).is_some() {
                        return Err(conflicting().with_position(at(de)));
                    }
                }
                "encoding" => {
                    let v = value().to_ascii_uppercase().replace(['-', '_'], "");
                    if v != "UTF8" && v != "UNICODE" && v != "SQLASCII" {
                        return Err(PgError::unsupported(format!("COPY with encoding {}", value())));
                    }
                }
                other => {
                    return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("option \"{other}\" not recognized")).with_position(at(de)));
                }
            }
        }
        let format = format.unwrap_or(Format::Text);
        let csv = format == Format::Csv;
        if format == Format::Binary {
            if delimiter.is_some() {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "cannot specify DELIMITER in BINARY mode"));
            }
            if null.is_some() {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "cannot specify NULL in BINARY mode"));
            }
        }
        let delimiter = match &delimiter {
            Some(d) => single_byte("delimiter", d)?,
            None if csv => b',',
            None => b'\t',
        };
        let null = null.unwrap_or_else(|| if csv { String::new() } else { "\\N".into() });
        if delimiter == b'\n' || delimiter == b'\r' {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "COPY delimiter cannot be newline or carriage return"));
        }
        if null.contains(['\r', '\n']) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "COPY null representation cannot use newline or carriage return"));
        }
        if !csv && b"\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(&delimiter) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("COPY delimiter cannot be \"{}\"", delimiter as char)));
        }
        if format == Format::Binary && header.is_some_and(|h| h != Header::No) {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot specify HEADER in BINARY mode"));
        }
        if !csv && quote.is_some() {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "COPY quote available only in CSV mode"));
        }
        if !csv && escape.is_some() {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "COPY escape available only in CSV mode"));
        }
        let quote = match &quote {
            Some(q) => single_byte("quote", q)?,
            None => b'"',
        };
        let escape = match &escape {
            Some(e) => single_byte("escape", e)?,
            None => quote,
        };
        if csv && delimiter == quote {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "COPY delimiter and quote must be different"));
        }
        if null.as_bytes().contains(&delimiter) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "COPY delimiter must not appear in the NULL specification"));
        }
        if csv && null.as_bytes().contains(&quote) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "CSV quote character must not appear in the NULL specification"));
        }
        let columns = |what: &str, list: Option<Option<Vec<String>>>, allowed: bool| -> PgResult<(bool, Vec<usize>)> {
            let Some(list) = list else { return Ok((false, Vec::new())) };
            if !csv {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("COPY {what} available only in CSV mode")));
            }
            if !allowed {
                let only = if what == "force quote" { "COPY TO" } else { "COPY FROM" };
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("COPY {what} only available using {only}")));
            }
            match list {
                None => Ok((true, Vec::new())),
                Some(names_given) => {
                    let mut out = Vec::new();
                    for n in names_given {
                        match names.iter().position(|c| *c == n) {
                            Some(i) => out.push(i),
                            None => {
                                return Err(PgError::new(
                                    sqlstate::INVALID_COLUMN_REFERENCE,
                                    format!("{} column \"{n}\" not referenced by COPY", what.to_ascii_uppercase().replace(' ', "_")),
                                ))
                            }
                        }
                    }
                    Ok((false, out))
                }
            }
        };
        let (force_quote_all, force_quote) = columns("force quote", force_quote, !is_from)?;
        let (_, force_not_null) = columns("force not null", force_not_null, is_from)?;
        let (_, force_null) = columns("force null", force_null, is_from)?;
        Ok(CopyOptions {
            format,
            delimiter,
            null,
            header: header.unwrap_or(Header::No),
            quote,
            escape,
            force_quote_all,
            force_quote,
            force_not_null,
            force_null,
            freeze: freeze.unwrap_or(false),
        })
    }
}

/// What a COPY statement does, once analyzed.
pub enum CopyPlan {
    /// COPY ... FROM STDIN: the caller streams the data in.
    FromStdin(Box<CopyFrom>),
    /// COPY ... TO STDOUT: the caller takes the lines out.
    ToStdout(Box<CopyTo>),
    /// COPY ... FROM/TO 'file', done already: the number of rows.
    Done(u64),
}

/// Analyzes a COPY statement; file COPYs run to completion here.
pub fn prepare(s: &mut SqlSession, stmt: &pb::CopyStmt, sql: &str) -> PgResult<CopyPlan> {
    if stmt.is_program {
        return Err(PgError::unsupported("COPY FROM PROGRAM and TO PROGRAM"));
    }
    if stmt.where_clause.is_some() {
        return Err(PgError::unsupported("COPY FROM ... WHERE"));
    }
    let catalog = s.catalog()?;
    if stmt.is_from {
        let from = CopyFrom::new(s, &catalog, stmt)?;
        if stmt.filename.is_empty() {
            return Ok(CopyPlan::FromStdin(Box::new(from)));
        }
        let mut from = from;
        if let Some(e) = from.error_before_data() {
            return Err(e);
        }
        let data = std::fs::read(&stmt.filename).map_err(|e| file_error(&stmt.filename, "reading", &e))?;
        from.feed(s, &data)?;
        return from.finish(s).map(CopyPlan::Done);
    }
    let mut to = CopyTo::new(s, &catalog, stmt, sql)?;
    if stmt.filename.is_empty() {
        return Ok(CopyPlan::ToStdout(Box::new(to)));
    }
    if !stmt.filename.starts_with('/') {
        return Err(PgError::new(sqlstate::INVALID_NAME, "relative path not allowed for COPY to file"));
    }
    let mut out = Vec::new();
    while let Some(line) = to.next_line(s)? {
        out.extend_from_slice(&line);
    }
    std::fs::write(&stmt.filename, &out).map_err(|e| file_error(&stmt.filename, "writing", &e))?;
    Ok(CopyPlan::Done(to.rows))
}

fn file_error(name: &str, doing: &str, e: &std::io::Error) -> PgError {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => sqlstate::UNDEFINED_FILE,
        std::io::ErrorKind::PermissionDenied => sqlstate::INSUFFICIENT_PRIVILEGE,
        _ => sqlstate::IO_ERROR,
    };
    let reason = match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
        _ => e.to_string(),
    };
    let hint = if doing == "reading" {
        "COPY FROM instructs the PostgreSQL server process to read a file. You may want a client-side facility such as psql's \\copy."
    } else {
        "COPY TO instructs the PostgreSQL server process to write a file. You may want a client-side facility such as psql's \\copy."
    };
    PgError::new(code, format!("could not open file \"{name}\" for {doing}: {reason}")).with_hint(hint)
}

/// The table a COPY names.
fn copy_relation(s: &SqlSession, catalog: &DbCatalog, rv: &pb::RangeVar) -> PgResult<Arc<Relation>> {
    let settings = s.settings.borrow();
    let a = s.analyzer(catalog, &settings, &[], "");
    a.range_var_relation(rv)
}

/// A COPY of anything but a table fails (COPY FROM only once the client
/// has been told to send data, as PostgreSQL checks it in CopyFrom).
fn check_copyable(rel: &Relation, is_from: bool) -> PgResult<()> {
    let verb = if is_from { "to" } else { "from" };
    let what = match rel.kind {
        RelKind::Table => return Ok(()),
        RelKind::View => "view",
        RelKind::Sequence => "sequence",
        RelKind::Index => "non-table relation",
        RelKind::ForeignTable => "foreign table",
        RelKind::CompositeType => "non-table relation",
    };
    let mut e = PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot copy {verb} {what} \"{}\"", rel.name));
    if rel.kind == RelKind::View {
        e = e.with_hint(if is_from { "To enable copying to a view, provide an INSTEAD OF INSERT trigger." } else { "Try the COPY (SELECT ...) TO variant." });
    }
    Err(e)
}

/// The column list of a COPY (all live columns if none is given), as
/// indexes into the table's live columns.
fn copy_columns(rel: &Relation, attlist: &[pb::Node]) -> PgResult<Vec<usize>> {
    let live: Vec<&crate::catalog::Column> = rel.live_columns().map(|(_, c)| c).collect();
    if attlist.is_empty() {
        return Ok((0..live.len()).collect());
    }
    let mut out = Vec::new();
    for a in attlist {
        let Some(name) = crate::analyzer::node_string(a) else { continue };
        let Some(i) = live.iter().position(|c| c.name == name) else {
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" of relation \"{}\" does not exist", rel.name)));
        };
        if out.contains(&i) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{name}\" specified more than once")));
        }
        out.push(i);
    }
    Ok(out)
}

// ---------------------------------------------------------------- COPY FROM

/// A COPY FROM in progress.
pub struct CopyFrom {
    /// An error to report once the client has been told to send data
    /// (see `error_before_data`).
    deferred_error: Option<PgError>,
    rel: Arc<Relation>,
    catalog: Arc<DbCatalog>,
    opts: CopyOptions,
    /// For each input field, the live column it fills.
    columns: Vec<usize>,
    names: Vec<String>,
    types: Vec<SqlType>,
    /// Whether any listed column is of a domain type (whose constraints
    /// each row's values must pass).
    any_domain: bool,
    /// Defaults of the columns not in the list, by live column (None for listed ones).
    defaults: Vec<Option<Expr>>,
    /// Bytes of an incomplete line carried to the next chunk.
    pending: Vec<u8>,
    line_no: u64,
    /// Seen the `\.` end marker: the rest of the data is ignored.
    ended: bool,
    header_pending: bool,
    /// Binary format: read the file header already.
    binary_header_read: bool,
    /// Binary format: seen the trailer (a field count of -1); any data
    /// after it is an error.
    binary_trailer_seen: bool,
    batch: Vec<Vec<Datum>>,
    /// Line number of each batched row, for error context.
    batch_lines: Vec<u64>,
    inserter: Option<RowInserter>,
    state: StmtState,
    pub rows: u64,
    pending_fk: u64,
}

impl CopyFrom {
    fn new(s: &mut SqlSession, catalog: &Arc<DbCatalog>, stmt: &pb::CopyStmt) -> PgResult<CopyFrom> {
        let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("COPY FROM without a table"))?;
        let rel = copy_relation(s, catalog, rv)?;
        // As DoCopy: the INSERT privilege, before any data is read.
        let perm = crate::catalog::acl::RelPerm { rel: rel.oid, required: crate::catalog::acl::INSERT, as_role: None, target: true };
        crate::commands::grant::check_relation_privileges(s, &[perm])?;
        if s.read_only {
            return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, "cannot execute COPY FROM in a read-only transaction"));
        }
        let columns = copy_columns(&rel, &stmt.attlist)?;
        let live: Vec<&crate::catalog::Column> = rel.live_columns().map(|(_, c)| c).collect();
        let names: Vec<String> = columns.iter().map(|&i| live[i].name.clone()).collect();
        let types: Vec<SqlType> = columns.iter().map(|&i| live[i].sql_type()).collect();
        let any_domain = types.iter().any(|t| crate::catalog::types::domain(t.oid).is_some());
        let opts = CopyOptions::parse(&stmt.options, true, &names)?;
        // Checked once the client sends data, as in PostgreSQL's CopyFrom.
        let deferred_error = check_copyable(&rel, true).err().or_else(|| {
            (opts.freeze && !s.is_fresh_storage(rel.storage_id)).then(|| {
                PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
                )
            })
        });
        let defaults = if deferred_error.is_some() {
            Vec::new()
        } else {
            s.lock_relation_shared(rel.oid)?;
            let settings = s.settings.borrow();
            let all = crate::planner::compile_defaults(catalog, &settings, &s.user, &rel)?;
            all.into_iter().enumerate().map(|(i, d)| if columns.contains(&i) { None } else { Some(d) }).collect()
        };
        Ok(CopyFrom {
            deferred_error,
            header_pending: opts.header != Header::No,
            rel,
            catalog: catalog.clone(),
            opts,
            columns,
            names,
            types,
            any_domain,
            defaults,
            pending: Vec::new(),
            line_no: 0,
            ended: false,
            binary_header_read: false,
            binary_trailer_seen: false,
            batch: Vec::with_capacity(BATCH_ROWS),
            batch_lines: Vec::with_capacity(BATCH_ROWS),
            inserter: None,
            state: StmtState::default(),
            rows: 0,
            pending_fk: 0,
        })
    }

    /// Column count for CopyInResponse.
    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Whether the data is in the binary format (CopyInResponse's format codes).
    pub fn is_binary(&self) -> bool {
        self.opts.format == Format::Binary
    }

    /// The error to report as soon as the client has been told to send
    /// data (COPY to a view, a FREEZE that cannot be honoured). In the
    /// binary format it waits for the file header, which PostgreSQL reads
    /// (BeginCopyFrom) before CopyFrom checks the table: a bad header
    /// is reported first.
    pub fn error_before_data(&mut self) -> Option<PgError> {
        if self.is_binary() {
            None
        } else {
            self.deferred_error.take()
        }
    }

    fn context(&self, line: u64) -> String {
        format!("COPY {}, line {}", self.rel.name, line)
    }

    /// CopyFromErrorCallback's context with the line's text (cut, as
    /// limit_printout_length does, at 100 bytes).
    fn line_context(&self, line_text: &[u8]) -> String {
        let text = String::from_utf8_lossy(line_text);
        let shown = if text.len() > 100 {
            let mut end = 100;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}...", &text[..end])
        } else {
            text.into_owned()
        };
        format!("COPY {}, line {}: \"{}\"", self.rel.name, self.line_no, shown)
    }

    /// Takes the next chunk of data (any split: lines may straddle chunks).
    pub fn feed(&mut self, s: &SqlSession, data: &[u8]) -> PgResult<()> {
        if self.opts.format == Format::Binary {
            return self.feed_binary(s, data, false);
        }
        if self.ended {
            return Ok(());
        }
        // Lines are read from `data` itself unless a partial line waits
        // from the chunk before (pgbench sends a message per row: copying
        // every one into a fresh buffer was a malloc and a copy per row).
        let mut carried = std::mem::take(&mut self.pending);
        let buf: &[u8] = if carried.is_empty() {
            data
        } else {
            carried.extend_from_slice(data);
            &carried
        };
        let mut start = 0;
        while let Some(end) = self.line_end(&buf[start..]) {
            let line_len = end;
            let mut line = &buf[start..start + line_len];
            start += line_len + 1;
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            self.line_no += 1;
            self.take_line(s, line)?;
            if self.ended {
                return Ok(());
            }
        }
        let rest = buf.len() - start;
        if carried.is_empty() {
            carried.extend_from_slice(&data[data.len() - rest..]);
        } else {
            carried.drain(..carried.len() - rest);
        }
        self.pending = carried;
        Ok(())
    }

    /// Where the first complete line of `buf` ends (its newline), for CSV
    /// outside quoted fields only.
    fn line_end(&self, buf: &[u8]) -> Option<usize> {
        if self.opts.format != Format::Csv {
            return memchr::memchr(b'\n', buf);
        }
        let (q, e) = (self.opts.quote, self.opts.escape);
        let mut in_quote = false;
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            if in_quote {
                if b == e && e != q && i + 1 < buf.len() && (buf[i + 1] == q || buf[i + 1] == e) {
                    i += 2;
                    continue;
                }
                if b == q {
                    if e == q && i + 1 < buf.len() && buf[i + 1] == q {
                        i += 2;
                        continue;
                    }
                    if e == q && i + 1 == buf.len() {
                        // A doubled quote may continue in the next chunk.
                        return None;
                    }
                    in_quote = false;
                }
            } else if b == q {
                in_quote = true;
            } else if b == b'\n' {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    fn take_line(&mut self, s: &SqlSession, line: &[u8]) -> PgResult<()> {
        if line == b"\\." {
            self.ended = true;
            return Ok(());
        }
        let fields = match self.opts.format {
            Format::Csv => self.split_csv(line)?.into_iter().map(|f| f.map(Cow::Owned)).collect(),
            _ => self.split_text(line)?,
        };
        if !self.header_pending {
            if fields.len() < self.columns.len() {
                let missing = &self.names[fields.len()];
                return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, format!("missing data for column \"{missing}\""))
                    .with_context(self.line_context(line)));
            }
            if fields.len() > self.columns.len() {
                return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "extra data after last expected column").with_context(self.line_context(line)));
            }
        }
        if self.header_pending {
            self.header_pending = false;
            if self.opts.header == Header::Match {
                self.match_header(&fields, line)?;
            }
            return Ok(());
        }
        let row = self.make_row(s, fields)?;
        self.batch.push(row);
        self.batch_lines.push(self.line_no);
        if self.batch.len() >= BATCH_ROWS {
            self.flush(s)?;
        }
        Ok(())
    }

    fn match_header(&self, fields: &[Option<Cow<'_, [u8]>>], line: &[u8]) -> PgResult<()> {
        if fields.len() != self.names.len() {
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                format!("wrong number of fields in header line: field count is {}, expected {}", fields.len(), self.names.len()),
            )
            .with_context(self.line_context(line)));
        }
        for (i, (f, name)) in fields.iter().zip(&self.names).enumerate() {
            let got = f.as_ref().map(|v| String::from_utf8_lossy(v).into_owned());
            match got {
                None => {
                    return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, format!("column name mismatch in header line field {}: got null value (\"{}\"), expected \"{name}\"", i + 1, self.opts.null))
                        .with_context(self.line_context(line)))
                }
                Some(g) if g != *name => {
                    return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, format!("column name mismatch in header line field {}: got \"{g}\", expected \"{name}\"", i + 1))
                        .with_context(self.line_context(line)))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Text format: fields split on the delimiter, backslash escapes
    /// decoded, and a field whose raw text is the NULL string read as NULL.
    ///
    /// A field without backslashes is its own text: it is borrowed from the
    /// line, not copied (most fields of a bulk load).
    fn split_text<'a>(&self, line: &'a [u8]) -> PgResult<Vec<Option<Cow<'a, [u8]>>>> {
        let delim = self.opts.delimiter;
        let null = self.opts.null.as_bytes();
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut i = 0;
        loop {
            let start = i;
            // One pass to the field's end or its first backslash.
            let stop = memchr::memchr2(delim, b'\\', &line[start..]).map(|p| start + p);
            if stop.is_none_or(|p| line[p] == delim) {
                let end = stop.unwrap_or(line.len());
                let raw = &line[start..end];
                fields.push(if raw == null { None } else { Some(Cow::Borrowed(raw)) });
                if end >= line.len() {
                    break;
                }
                i = end + 1; // the delimiter
                continue;
            }
            let field_end = memchr::memchr(delim, &line[start..]).map_or(line.len(), |p| start + p);
            let mut value = Vec::with_capacity(field_end - start);
            while i < line.len() && line[i] != delim {
                let b = line[i];
                if b != b'\\' || i + 1 >= line.len() {
                    value.push(b);
                    i += 1;
                    continue;
                }
                let c = line[i + 1];
                i += 2;
                match c {
                    b'0'..=b'7' => {
                        let mut v = u32::from(c - b'0');
                        for _ in 0..2 {
                            if i < line.len() && (b'0'..=b'7').contains(&line[i]) {
                                v = v * 8 + u32::from(line[i] - b'0');
                                i += 1;
                            }
                        }
                        value.push((v & 0xff) as u8);
                    }
                    b'x' if i < line.len() && line[i].is_ascii_hexdigit() => {
                        let mut v = hex_val(line[i]);
                        i += 1;
                        if i < line.len() && line[i].is_ascii_hexdigit() {
                            v = v * 16 + hex_val(line[i]);
                            i += 1;
                        }
                        value.push(v);
                    }
                    b'b' => value.push(0x08),
                    b'f' => value.push(0x0c),
                    b'n' => value.push(b'\n'),
                    b'r' => value.push(b'\r'),
                    b't' => value.push(b'\t'),
                    b'v' => value.push(0x0b),
                    other => value.push(other),
                }
            }
            let raw = &line[start..i];
            fields.push(if raw == null { None } else { Some(Cow::Owned(value)) });
            if i >= line.len() {
                break;
            }
            i += 1; // the delimiter
        }
        Ok(fields)
    }

    /// CSV: quoted fields may hold delimiters, newlines and doubled (or
    /// escaped) quotes; an unquoted field equal to the NULL string is NULL.
    fn split_csv(&self, line: &[u8]) -> PgResult<Vec<Option<Vec<u8>>>> {
        let (delim, q, e) = (self.opts.delimiter, self.opts.quote, self.opts.escape);
        let null = self.opts.null.as_bytes();
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut i = 0;
        loop {
            let start = i;
            let mut value = Vec::new();
            let mut quoted = false;
            while i < line.len() && line[i] != delim {
                if line[i] == q {
                    quoted = true;
                    i += 1;
                    loop {
                        if i >= line.len() {
                            return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "unterminated CSV quoted field").with_context(self.line_context(line)));
                        }
                        let b = line[i];
                        if b == e && i + 1 < line.len() && (line[i + 1] == q || line[i + 1] == e) && !(e == q && line[i + 1] != q) {
                            value.push(line[i + 1]);
                            i += 2;
                            continue;
                        }
                        if b == q {
                            i += 1;
                            break;
                        }
                        value.push(b);
                        i += 1;
                    }
                } else {
                    value.push(line[i]);
                    i += 1;
                }
            }
            let raw = &line[start..i];
            let col = fields.len();
            let is_null = if quoted {
                self.opts.force_null.contains(&col) && value == null
            } else {
                raw == null && !self.opts.force_not_null.contains(&col)
            };
            fields.push(if is_null { None } else { Some(value) });
            if i >= line.len() {
                break;
            }
            i += 1;
        }
        Ok(fields)
    }

    /// One table row from one line's fields: each converted by its
    /// column's input function, the other columns from their defaults.
    fn make_row(&mut self, s: &SqlSession, fields: Vec<Option<Cow<'_, [u8]>>>) -> PgResult<Vec<Datum>> {
        let line = self.line_no;
        debug_assert_eq!(fields.len(), self.columns.len(), "field count checked by take_line");
        let width = self.defaults.len();
        // (vec![Datum::Null; width] clones the element width - 1 times.)
        let mut row: Vec<Datum> = std::iter::repeat_with(|| Datum::Null).take(width).collect();
        let settings = s.settings.borrow();
        // The input text of domain columns, for the context of their errors.
        let mut domain_texts: Vec<String> = if self.any_domain { vec![String::new(); self.types.len()] } else { Vec::new() };
        for (f, value) in fields.into_iter().enumerate() {
            let Some(bytes) = value else { continue };
            let text = std::str::from_utf8(&bytes).map_err(|err| {
                let bad = &bytes[err.valid_up_to()..];
                let shown: Vec<String> = bad.iter().take(bad.len().min(2)).map(|b| format!("0x{b:02x}")).collect();
                PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
                    .with_context(self.context(line))
            })?;
            if self.any_domain && crate::catalog::types::domain(self.types[f].oid).is_some() {
                domain_texts[f] = text.to_string();
            }
            row[self.columns[f]] = io::parse_text(text, self.types[f], &settings, false).map_err(|e| {
                e.with_context(format!("COPY {}, line {}, column {}: \"{}\"", self.rel.name, line, self.names[f], text))
            })?;
        }
        drop(settings);
        // Domain columns: their constraints, NULL fields included, as
        // domain_in checks them.
        for (f, ty) in self.types.iter().enumerate() {
            if self.any_domain && crate::catalog::types::domain(ty.oid).is_some() {
                let env = crate::session::SessionEnv { s, catalog: &self.catalog };
                let value = std::mem::replace(&mut row[self.columns[f]], Datum::Null);
                let shown = if value.is_null() { "null input".to_string() } else { format!("\"{}\"", domain_texts[f]) };
                row[self.columns[f]] = crate::functions::Env::check_domain(&env, value, *ty)
                    .map_err(|e| e.with_context(format!("COPY {}, line {}, column {}: {}", self.rel.name, line, self.names[f], shown)))?;
            }
        }
        self.fill_defaults(s, row)
    }

    /// Evaluates the defaults of the columns the COPY does not list.
    fn fill_defaults(&mut self, s: &SqlSession, mut row: Vec<Datum>) -> PgResult<Vec<Datum>> {
        if self.defaults.iter().any(Option::is_some) {
            let catalog = self.catalog.clone();
            let defaults = std::mem::take(&mut self.defaults);
            let r = s.with_exec_cx(&catalog, &self.state, |cx| {
                for (i, d) in defaults.iter().enumerate() {
                    if let Some(d) = d {
                        row[i] = executor::eval(d, &[], cx)?;
                    }
                }
                Ok(())
            });
            self.defaults = defaults;
            r?;
        }
        Ok(row)
    }

    /// Binary format (CopyReadBinaryData and friends in copyfromparse.c):
    /// the file header, then tuples of an int16 field count and, per
    /// field, an int32 length (-1 for NULL) and the type's send format,
    /// then an int16 -1. Data arrives in chunks of any size: what is not
    /// complete yet waits in `pending`. At the end of the data (`eof`)
    /// what is still incomplete fails as PostgreSQL reports a short read;
    /// a partial field count there ends the data as the trailer does.
    fn feed_binary(&mut self, s: &SqlSession, data: &[u8], eof: bool) -> PgResult<()> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let mut pos = 0;
        let r = self.parse_binary(s, &buf, &mut pos, eof);
        buf.drain(..pos);
        self.pending = buf;
        r
    }

    fn parse_binary(&mut self, s: &SqlSession, buf: &[u8], pos: &mut usize, eof: bool) -> PgResult<()> {
        if !self.binary_header_read {
            match binary_header(&buf[*pos..], eof)? {
                Some(len) => {
                    *pos += len;
                    self.binary_header_read = true;
                    if let Some(e) = self.deferred_error.take() {
                        return Err(e);
                    }
                }
                None => return Ok(()),
            }
        }
        loop {
            if self.binary_trailer_seen {
                if *pos < buf.len() {
                    return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "received copy data after EOF marker")
                        .with_context(self.context(self.line_no)));
                }
                return Ok(());
            }
            let rest = &buf[*pos..];
            if rest.len() < 2 {
                // A field count cut short at the end is the end of the data.
                return Ok(());
            }
            let line = self.line_no + 1;
            let count = i16::from_be_bytes([rest[0], rest[1]]);
            if count == -1 {
                self.line_no = line;
                self.binary_trailer_seen = true;
                *pos += 2;
                continue;
            }
            if count as i64 != self.columns.len() as i64 {
                return Err(PgError::new(
                    sqlstate::BAD_COPY_FILE_FORMAT,
                    format!("row field count is {count}, expected {}", self.columns.len()),
                )
                .with_context(self.context(line)));
            }
            // Convert only a complete tuple (unless the data ended or the
            // tuple is malformed: then converting in order finds the
            // error PostgreSQL reports first).
            let len = match binary_tuple_len(rest, self.columns.len()) {
                TupleLen::Complete(n) => Some(n),
                TupleLen::Incomplete if !eof => return Ok(()),
                _ => None,
            };
            let row = self.binary_row(s, rest, line)?;
            let Some(len) = len else {
                return Err(PgError::internal("binary COPY tuple neither complete nor failing"));
            };
            *pos += len;
            self.line_no = line;
            self.batch.push(row);
            self.batch_lines.push(line);
            if self.batch.len() >= BATCH_ROWS {
                self.flush(s)?;
            }
        }
    }

    /// One tuple's fields (after its field count), each converted by its
    /// column type's receive function, in order, failing as
    /// CopyReadBinaryAttribute does.
    fn binary_row(&mut self, s: &SqlSession, tuple: &[u8], line: u64) -> PgResult<Vec<Datum>> {
        let mut row = vec![Datum::Null; self.defaults.len()];
        let mut at = 2;
        for f in 0..self.columns.len() {
            let ctx = || format!("COPY {}, line {}, column {}", self.rel.name, line, self.names[f]);
            let eof = || PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "unexpected EOF in COPY data").with_context(ctx());
            let size = tuple.get(at..at + 4).ok_or_else(eof)?;
            let size = i32::from_be_bytes([size[0], size[1], size[2], size[3]]);
            at += 4;
            if size == -1 {
                continue;
            }
            if size < 0 {
                return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "invalid field size").with_context(ctx()));
            }
            let bytes = tuple.get(at..at + size as usize).ok_or_else(eof)?;
            at += size as usize;
            row[self.columns[f]] = io::parse_binary(bytes, self.types[f]).map_err(|e| e.with_context(ctx()))?;
        }
        self.fill_defaults(s, row)
    }

    /// Writes the batched rows.
    fn flush(&mut self, s: &SqlSession) -> PgResult<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let catalog = self.catalog.clone();
        let rows = std::mem::take(&mut self.batch);
        let lines = std::mem::take(&mut self.batch_lines);
        let rel = self.rel.clone();
        let mut inserter = self.inserter.take();
        let name = self.rel.name.clone();
        let result = s.with_exec_cx(&catalog, &self.state, |cx| {
            cx.check()?;
            let ins = match inserter.as_mut() {
                Some(i) => i,
                None => {
                    let i = inserter.insert(RowInserter::new(rel.clone(), cx)?);
                    i.start(cx)?;
                    i
                }
            };
            let mut inserted = 0u64;
            for (row, line) in rows.iter().zip(&lines) {
                inserted += ins.insert(row, cx).map_err(|e| if e.context.is_none() { e.with_context(format!("COPY {name}, line {line}")) } else { e })? as u64;
            }
            Ok(inserted)
        });
        self.inserter = inserter;
        self.rows += result?;
        self.pending_fk += rows.len() as u64;
        if self.pending_fk >= MAX_PENDING_FK_CHECKS {
            self.check_foreign_keys(s)?;
        }
        self.batch = rows;
        self.batch.clear();
        self.batch_lines = lines;
        self.batch_lines.clear();
        Ok(())
    }

    fn check_foreign_keys(&mut self, s: &SqlSession) -> PgResult<()> {
        self.pending_fk = 0;
        let catalog = self.catalog.clone();
        let mut inserter = self.inserter.take();
        let r = s.with_exec_cx(&catalog, &self.state, |cx| match inserter.as_mut() {
            Some(i) => i.finish(cx),
            None => Ok(()),
        });
        self.inserter = inserter;
        r
    }

    /// The end of the data (CopyDone, or the end of the file): the last
    /// line (which may lack its newline), the last batch, the foreign key
    /// checks. Returns the number of rows copied.
    pub fn finish(&mut self, s: &SqlSession) -> PgResult<u64> {
        if self.opts.format == Format::Binary {
            self.feed_binary(s, &[], true)?;
        } else if !self.ended && !self.pending.is_empty() {
            let mut rest = std::mem::take(&mut self.pending);
            if self.opts.format == Format::Csv && self.line_end(&rest).is_none() && csv_unterminated(&rest, self.opts.quote, self.opts.escape) {
                self.line_no += 1;
                return Err(PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, "unterminated CSV quoted field").with_context(self.line_context(&rest)));
            }
            if rest.last() == Some(&b'\r') {
                rest.pop();
            }
            self.line_no += 1;
            self.take_line(s, &rest)?;
        }
        self.flush(s)?;
        let catalog = self.catalog.clone();
        let mut inserter = self.inserter.take();
        let r = s.with_exec_cx(&catalog, &self.state, |cx| match inserter.as_mut() {
            Some(i) => i.end(cx),
            None => Ok(()),
        });
        self.inserter = inserter;
        r?;
        Ok(self.rows)
    }
}

/// The binary COPY signature: "PGCOPY\n\377\r\n\0".
const BINARY_SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

fn bad_header(message: &str) -> PgError {
    PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, message)
}

/// ReceiveCopyBinaryHeader: the signature, the flags (bit 16, WITH OIDS,
/// and the other high bits are critical; the low ones are ignored) and a
/// header extension to skip. Returns the header's length once it is
/// complete, None while more data is needed.
fn binary_header(buf: &[u8], eof: bool) -> PgResult<Option<usize>> {
    let word = |at: usize| buf.get(at..at + 4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let short = |what: &str| if eof { Err(bad_header(what)) } else { Ok(None) };
    if buf.len() < 11 {
        return short("COPY file signature not recognized");
    }
    if &buf[..11] != BINARY_SIGNATURE {
        return Err(bad_header("COPY file signature not recognized"));
    }
    let Some(flags) = word(11) else { return short("invalid COPY file header (missing flags)") };
    if flags & (1 << 16) != 0 {
        return Err(bad_header("invalid COPY file header (WITH OIDS)"));
    }
    if (flags & !(1 << 16)) >> 16 != 0 {
        return Err(bad_header("unrecognized critical flags in COPY file header"));
    }
    let Some(ext) = word(15) else { return short("invalid COPY file header (missing length)") };
    if ext < 0 {
        return Err(bad_header("invalid COPY file header (missing length)"));
    }
    let len = 19 + ext as usize;
    if buf.len() < len {
        return short("invalid COPY file header (wrong length)");
    }
    Ok(Some(len))
}

enum TupleLen {
    /// The whole tuple is there, this many bytes with its field count.
    Complete(usize),
    /// More data is needed.
    Incomplete,
    /// A field has an invalid size.
    Invalid,
}

/// The length of the binary tuple at the start of `buf` (its field count
/// already checked), reading only the field sizes.
fn binary_tuple_len(buf: &[u8], fields: usize) -> TupleLen {
    let mut at = 2;
    for _ in 0..fields {
        let Some(b) = buf.get(at..at + 4) else { return TupleLen::Incomplete };
        let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        at += 4;
        if size == -1 {
            continue;
        }
        if size < 0 {
            return TupleLen::Invalid;
        }
        at += size as usize;
        if at > buf.len() {
            return TupleLen::Incomplete;
        }
    }
    TupleLen::Complete(at)
}

fn hex_val(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

/// Whether CSV text ends inside a quoted field.
fn csv_unterminated(buf: &[u8], q: u8, e: u8) -> bool {
    let mut in_quote = false;
    let mut i = 0;
    while i < buf.len() {
        let b = buf[i];
        if in_quote {
            if b == e && i + 1 < buf.len() && (buf[i + 1] == q || buf[i + 1] == e) && !(e == q && buf[i + 1] != q) {
                i += 2;
                continue;
            }
            if b == q {
                in_quote = false;
            }
        } else if b == q {
            in_quote = true;
        }
        i += 1;
    }
    in_quote
}

// ---------------------------------------------------------------- COPY TO

/// A COPY TO in progress: a running query whose rows become lines.
pub struct CopyTo {
    run: Option<QueryRun>,
    opts: CopyOptions,
    types: Vec<tusk_types::Oid>,
    header: Option<Vec<u8>>,
    pending: std::collections::VecDeque<Vec<u8>>,
    done: bool,
    /// Binary format: the trailer went out.
    trailer_sent: bool,
    pub rows: u64,
}

impl CopyTo {
    fn new(s: &mut SqlSession, catalog: &Arc<DbCatalog>, stmt: &pb::CopyStmt, sql: &str) -> PgResult<CopyTo> {
        let (query_stmt, query_sql) = match (&stmt.relation, &stmt.query) {
            (Some(rv), _) => {
                let rel = copy_relation(s, catalog, rv)?;
                check_copyable(&rel, false)?;
                let cols = copy_columns(&rel, &stmt.attlist)?;
                let live: Vec<&crate::catalog::Column> = rel.live_columns().map(|(_, c)| c).collect();
                let list: Vec<String> = cols.iter().map(|&i| crate::functions::quote_ident(&live[i].name)).collect();
                let text = format!(
                    "SELECT {} FROM ONLY {}.{}",
                    list.join(", "),
                    crate::functions::quote_ident(&catalog.namespace_name(rel.namespace)),
                    crate::functions::quote_ident(&rel.name)
                );
                let mut parsed = crate::parser::parse(&text)?;
                (parsed.remove(0), text)
            }
            (None, Some(q)) => {
                let node = q.node.clone().ok_or_else(|| PgError::internal("COPY without a query"))?;
                match &node {
                    NodeEnum::SelectStmt(_) => {}
                    NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_) if !has_returning(&node) => {
                        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "COPY query must have a RETURNING clause"));
                    }
                    NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_) => {
                        return Err(PgError::unsupported("COPY (INSERT, UPDATE or DELETE ... RETURNING) TO"));
                    }
                    _ => return Err(PgError::unsupported("COPY of this kind of query")),
                }
                (ParsedStatement { node, location: 0, len: sql.len() }, sql.to_string())
            }
            _ => return Err(PgError::internal("COPY TO without a table or query")),
        };
        let (plan, _) = s.plan_query(&query_stmt, &query_sql, &[])?;
        let names: Vec<String> = plan.columns.iter().map(|c| c.name.clone()).collect();
        let types = plan.columns.iter().map(|c| c.ty.oid).collect();
        let opts = CopyOptions::parse(&stmt.options, false, &names)?;
        if opts.freeze {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "COPY FREEZE cannot be used with COPY TO"));
        }
        let run = s.start_query(plan, Vec::new())?;
        let mut to = CopyTo { run: Some(run), opts, types, header: None, pending: Default::default(), done: false, trailer_sent: false, rows: 0 };
        if to.opts.format == Format::Binary {
            // The file header: signature, flags, no header extension. As
            // CopyTo sends it, it goes out with the first row (or the trailer).
            let mut h = BINARY_SIGNATURE.to_vec();
            h.extend_from_slice(&0i32.to_be_bytes());
            h.extend_from_slice(&0i32.to_be_bytes());
            to.header = Some(h);
        } else if to.opts.header == Header::Yes {
            let fields: Vec<Option<String>> = names.into_iter().map(Some).collect();
            to.header = Some(to.format_line(&fields, true));
        }
        Ok(to)
    }

    /// Column count for CopyOutResponse.
    pub fn column_count(&self) -> usize {
        self.types.len()
    }

    /// Whether the output is in the binary format (CopyOutResponse's format codes).
    pub fn is_binary(&self) -> bool {
        self.opts.format == Format::Binary
    }

    /// The next line of output (with its newline), or None at the end;
    /// in the binary format, the next tuple (the first one after the
    /// file header, the trailer last).
    pub fn next_line(&mut self, s: &SqlSession) -> PgResult<Option<Vec<u8>>> {
        if self.opts.format == Format::Binary {
            return self.next_binary(s);
        }
        if let Some(h) = self.header.take() {
            return Ok(Some(h));
        }
        if let Some(l) = self.pending.pop_front() {
            return Ok(Some(l));
        }
        if self.done {
            return Ok(None);
        }
        let mut run = self.run.take().ok_or_else(|| PgError::internal("COPY TO already failed"))?;
        let settings = s.settings.borrow().clone();
        let mut lines = std::collections::VecDeque::new();
        let types = self.types.clone();
        let finished = run.fetch(s, 1000, &mut |row| {
            let fields: Vec<Option<String>> =
                row.iter().zip(&types).map(|(d, &t)| if d.is_null() { None } else { Some(io::format_text(d, t, &settings)) }).collect();
            lines.push_back(self.format_line(&fields, false));
            Ok(())
        })?;
        self.rows += lines.len() as u64;
        self.pending = lines;
        self.done = finished;
        self.run = Some(run);
        Ok(self.pending.pop_front())
    }

    fn next_binary(&mut self, s: &SqlSession) -> PgResult<Option<Vec<u8>>> {
        while self.pending.is_empty() && !self.done {
            self.fetch_binary(s)?;
        }
        let mut out = match self.pending.pop_front() {
            Some(tuple) => tuple,
            None if self.trailer_sent => return Ok(None),
            None => {
                self.trailer_sent = true;
                (-1i16).to_be_bytes().to_vec()
            }
        };
        if let Some(mut h) = self.header.take() {
            h.append(&mut out);
            out = h;
        }
        Ok(Some(out))
    }

    /// The next rows of the query, each as a binary tuple (CopyOneRowTo):
    /// the field count, then each field's length (-1 for NULL) and its
    /// type's send format.
    fn fetch_binary(&mut self, s: &SqlSession) -> PgResult<()> {
        let mut run = self.run.take().ok_or_else(|| PgError::internal("COPY TO already failed"))?;
        let mut tuples = std::collections::VecDeque::new();
        let types = self.types.clone();
        let finished = run.fetch(s, 1000, &mut |row| {
            let mut t = Vec::new();
            t.extend_from_slice(&(types.len() as i16).to_be_bytes());
            for (d, &ty) in row.iter().zip(&types) {
                if d.is_null() {
                    t.extend_from_slice(&(-1i32).to_be_bytes());
                } else {
                    let b = io::format_binary(d, ty);
                    t.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    t.extend_from_slice(&b);
                }
            }
            tuples.push_back(t);
            Ok(())
        })?;
        self.rows += tuples.len() as u64;
        self.pending = tuples;
        self.done = finished;
        self.run = Some(run);
        Ok(())
    }

    fn format_line(&self, fields: &[Option<String>], header: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push(self.opts.delimiter);
            }
            match f {
                None => out.extend_from_slice(self.opts.null.as_bytes()),
                Some(v) if self.opts.format == Format::Csv => self.csv_field(&mut out, v, i, header),
                Some(v) => self.text_field(&mut out, v),
            }
        }
        out.push(b'\n');
        out
    }

    /// CopyAttributeOutText: backslash-escape what would be read back as
    /// something else.
    fn text_field(&self, out: &mut Vec<u8>, v: &str) {
        for &b in v.as_bytes() {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                0x0b => out.extend_from_slice(b"\\v"),
                b if b == self.opts.delimiter => {
                    out.push(b'\\');
                    out.push(b);
                }
                b => out.push(b),
            }
        }
    }

    /// CopyAttributeOutCSV: quote when the value holds the delimiter, the
    /// quote, a newline, or could be read back as NULL or the end marker.
    fn csv_field(&self, out: &mut Vec<u8>, v: &str, col: usize, header: bool) {
        let (d, q, e) = (self.opts.delimiter, self.opts.quote, self.opts.escape);
        let bytes = v.as_bytes();
        let forced = !header && (self.opts.force_quote_all || self.opts.force_quote.contains(&col));
        let needs = forced
            || v == self.opts.null
            || (self.types.len() == 1 && v == "\\.")
            || bytes.iter().any(|&b| b == d || b == q || b == b'\n' || b == b'\r');
        if !needs {
            out.extend_from_slice(bytes);
            return;
        }
        out.push(q);
        for &b in bytes {
            if b == q || b == e {
                out.push(e);
            }
            out.push(b);
        }
        out.push(q);
    }
}

fn has_returning(n: &NodeEnum) -> bool {
    match n {
        NodeEnum::InsertStmt(i) => !i.returning_list.is_empty(),
        NodeEnum::UpdateStmt(u) => !u.returning_list.is_empty(),
        NodeEnum::DeleteStmt(d) => !d.returning_list.is_empty(),
        _ => false,
    }
}
