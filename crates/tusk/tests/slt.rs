//! SQL logic tests: the files in `tests/slt/*.slt`, run against Tusk.
//!
//! Each file is one test (the harness is `libtest-mimic`, so `cargo test`
//! filters, `--list`, `--test-threads` and friends work). The expected
//! answers in the files are recorded from PostgreSQL 15 by
//! `scripts/record-slt.sh`, never typed in by hand: PostgreSQL is the
//! specification, and these files are its answers written down.
//!
//! # File format
//!
//! ```text
//! # A comment: a line starting with '#', outside a record.
//! statement ok
//! CREATE TABLE t (a int PRIMARY KEY, b text)
//!
//! statement error
//! INSERT INTO t VALUES (1, 'x'), (1, 'y')
//! ----
//! 23505 duplicate key value violates unique constraint "t_pkey"
//!
//! query rowsort
//! SELECT a, b, NULL::int AS c FROM t
//! ----
//! a | b | c
//! 1 | x | NULL
//! ```
//!
//! A file is a sequence of records, separated by blank lines, with comment
//! lines (`#`) between them. A record is a header line, then its SQL, then
//! optionally `----` and the expected block.
//!
//! - The SQL runs until a blank (or whitespace-only) line or a `----` line.
//!   It is sent as one simple-protocol Query message, so it may hold several
//!   statements separated by `;` (they then run as one implicit transaction,
//!   exactly as in psql's `-c`).
//! - The expected block runs until an empty line or the end of the file.
//!
//! Record kinds:
//!
//! - `statement ok`: the SQL must succeed. Rows it returns and notices or
//!   warnings it raises are ignored. It has no expected block.
//! - `statement error`: the SQL must fail. The expected block is one line:
//!   the SQLSTATE, a space, and the primary message. With several
//!   statements, it is the first error (the statements after it do not run).
//!   Use this for queries that fail, too.
//! - `query` / `query rowsort` (`query nosort` is a synonym of `query`): the
//!   SQL must succeed and return rows. The expected block holds, for each
//!   result set the SQL returns (one per row-returning statement, in order;
//!   statements without a result set, such as an `INSERT` without
//!   `RETURNING`, contribute nothing):
//!   - a header line: the column names joined by `" | "`,
//!     (`(no columns)` for a zero-column result);
//!   - one line per row: the values joined by `" | "`, each exactly as the
//!     server sends it in text format, except that NULL prints as `NULL`, the
//!     empty string as `(empty)`, and control characters as escapes (`\n`,
//!     `\r`, `\t`, `\u{1b}`). Backslashes are not escaped, so a value holding
//!     both a backslash and a control character renders ambiguously; tests
//!     should avoid that. Spaces are significant (`char(n)` padding); the
//!     recorder refuses a line that would end in whitespace, because editors
//!     strip it, so such values need another column after them. (A
//!     zero-column row prints as `()`.)
//!
//!   With `rowsort`, the row lines of each result set (not its header) are
//!   sorted bytewise, on the rendered text, before comparing; the recorder
//!   writes them sorted. Without it, rows must come in the recorded order, so
//!   such queries need an `ORDER BY` that makes the order deterministic.
//!
//! Comparisons are on the rendered lines, exactly: whitespace, case and
//! float digits all count.
//!
//! # Writing tests
//!
//! All records of a file run in order on one connection to the file's own
//! database, so session state (SET, an open transaction block, temporary
//! tables) carries from one record to the next; files never see each other.
//! The connection starts with the server's defaults (tokio-postgres only
//! sends `client_encoding=UTF8`); TimeZone and DateStyle are whatever a fresh
//! `initdb` gives, so a file whose output depends on them SETs them first.
//! Keep answers deterministic: ORDER BY (or `rowsort`), no current time, no
//! OIDs of user objects, no version strings. Objects global to the server
//! (databases) need names unique to the file. A record whose connection
//! breaks or which gets no answer within the time limit ends the file.
//!
//! # Running
//!
//! Verify (the default, part of `cargo test --release`): one Tusk server is
//! spawned for the whole run (`tests/common/mod.rs`); each file gets a fresh
//! database `slt_<file stem>` (created before, dropped after) and its own
//! connection; files run in parallel, records within a file in order. Every
//! mismatch is reported with file:line, SQL, expected and actual.
//!
//! Record: `scripts/record-slt.sh [file...]` starts a throwaway PostgreSQL 15
//! and runs this harness with `TUSK_SLT_RECORD=1` and `TUSK_SLT_PG=<libpq
//! connection string>`: the same files run against PostgreSQL, and each
//! file's expected blocks are rewritten in place from its answers (comments,
//! blank lines and record order are kept). A file in which PostgreSQL's answer
//! does not fit the record kind (a `statement ok` that fails, a
//! `statement error` that succeeds, a `query` that fails or returns no
//! result set) fails and is left untouched.
//!
//! Environment:
//! - `TUSK_SLT_RECORD=1`, `TUSK_SLT_PG=...`: record mode (see above).
//! - `TUSK_SLT_TARGET=<connection string>`: verify against an already
//!   running server instead of spawning Tusk (for example against
//!   PostgreSQL itself, to check that the recorded answers are
//!   deterministic: `scripts/record-slt.sh --check`).
//! - `TUSK_SLT_FILES=a,b.slt,...`: only these files (stems or file names).
//! - `TUSK_SLT_TIMEOUT=<seconds>`: per-record time limit (default 60).
//! - `TUSK_SLT_SKIP=1`: report every file as ignored (escape hatch while
//!   the server cannot run yet).
//! - `RUST_TEST_THREADS` or `--test-threads`: parallel files (default 4).

mod common;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage};

use common::TestServer;

/// Where the test files live: `<workspace>/tests/slt`.

/// The database every server has, used to create and drop the per-file ones.
const ADMIN_DATABASE: &str = "postgres";

/// At most this many problems are printed per file (all are counted).
const MAX_REPORTED_PROBLEMS: usize = 40;

// ---------------------------------------------------------------------------
// The file model: parsing and writing back.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecordKind {
    StatementOk,
    StatementError,
    Query { rowsort: bool },
}

#[derive(Debug)]
struct Record {
    kind: RecordKind,
    /// The header line as written, kept verbatim on rewrite.
    header: String,
    /// 1-based line number of the header.
    line: usize,
    sql_lines: Vec<String>,
    /// The expected block, if the file has one (`----` present).
    expected: Option<Vec<String>>,
}

impl Record {
    fn sql(&self) -> String {
        self.sql_lines.join("\n")
    }
}

/// A file is records, plus the lines between them (comments, blank lines),
/// which are kept verbatim.
#[derive(Debug)]
enum Item {
    Text(String),
    Record(Record),
}

fn parse_header(line: &str) -> Option<RecordKind> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["statement", "ok"] => Some(RecordKind::StatementOk),
        ["statement", "error"] => Some(RecordKind::StatementError),
        ["query"] | ["query", "nosort"] => Some(RecordKind::Query { rowsort: false }),
        ["query", "rowsort"] => Some(RecordKind::Query { rowsort: true }),
        _ => None,
    }
}

fn parse_file(text: &str, display: &str) -> Result<Vec<Item>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            items.push(Item::Text(line.to_string()));
            i += 1;
            continue;
        }
        let Some(kind) = parse_header(trimmed) else {
            return Err(format!(
                "{display}:{}: expected a record header (`statement ok`, `statement error`, \
                 `query`, `query rowsort`), a comment or a blank line, found: {line}",
                i + 1
            ));
        };
        let header_line = i + 1;
        i += 1;
        let mut sql_lines = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i] != "----" {
            if parse_header(lines[i].trim()).is_some() {
                return Err(format!(
                    "{display}:{}: record header inside the SQL of the record at line \
                     {header_line} (missing blank line?)",
                    i + 1
                ));
            }
            sql_lines.push(lines[i].to_string());
            i += 1;
        }
        if sql_lines.is_empty() {
            return Err(format!("{display}:{header_line}: record without SQL"));
        }
        let mut expected = None;
        if i < lines.len() && lines[i] == "----" {
            if kind == RecordKind::StatementOk {
                return Err(format!(
                    "{display}:{}: `statement ok` takes no expected block",
                    i + 1
                ));
            }
            i += 1;
            let mut block = Vec::new();
            while i < lines.len() && !lines[i].is_empty() {
                block.push(lines[i].to_string());
                i += 1;
            }
            expected = Some(block);
        }
        items.push(Item::Record(Record {
            kind,
            header: line.to_string(),
            line: header_line,
            sql_lines,
            expected,
        }));
    }
    Ok(items)
}

fn write_file(items: &[Item]) -> String {
    let mut out = String::new();
    for item in items {
        match item {
            Item::Text(line) => {
                out.push_str(line);
                out.push('\n');
            }
            Item::Record(record) => {
                out.push_str(&record.header);
                out.push('\n');
                for line in &record.sql_lines {
                    out.push_str(line);
                    out.push('\n');
                }
                if record.kind != RecordKind::StatementOk {
                    if let Some(expected) = &record.expected {
                        out.push_str("----\n");
                        for line in expected {
                            out.push_str(line);
                            out.push('\n');
                        }
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Running SQL and rendering answers.
// ---------------------------------------------------------------------------

/// One row-returning statement's answer.
struct ResultSet {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

/// What the server answered to one record's SQL.
enum Outcome {
    Rows(Vec<ResultSet>),
    Error { code: String, message: String },
    /// Not an SQL error: the connection broke, the server died, a timeout.
    /// The file cannot go on after this.
    Broken(String),
}

async fn execute(client: &Client, sql: &str, limit: Duration) -> Outcome {
    let messages = match tokio::time::timeout(limit, client.simple_query(sql)).await {
        Err(_) => return Outcome::Broken(format!("no answer within {limit:?}")),
        Ok(Err(error)) => {
            return match error.as_db_error() {
                Some(db) => Outcome::Error {
                    code: db.code().code().to_string(),
                    message: db.message().to_string(),
                },
                None => Outcome::Broken(format!("client error: {error}")),
            }
        }
        Ok(Ok(messages)) => messages,
    };
    let mut sets: Vec<ResultSet> = Vec::new();
    for message in messages {
        match message {
            SimpleQueryMessage::RowDescription(columns) => sets.push(ResultSet {
                columns: columns.iter().map(|c| c.name().to_string()).collect(),
                rows: Vec::new(),
            }),
            SimpleQueryMessage::Row(row) => {
                if sets.is_empty() {
                    // Only if a server sent rows without a RowDescription.
                    sets.push(ResultSet {
                        columns: row.columns().iter().map(|c| c.name().to_string()).collect(),
                        rows: Vec::new(),
                    });
                }
                let values = (0..row.len())
                    .map(|i| match row.try_get(i) {
                        Ok(value) => value.map(str::to_string),
                        Err(e) => Some(format!("<undecodable: {e}>")),
                    })
                    .collect();
                sets.last_mut().expect("a result set").rows.push(values);
            }
            SimpleQueryMessage::CommandComplete(_) => {}
            _ => {}
        }
    }
    Outcome::Rows(sets)
}

/// Control characters as escapes, so that every value stays on its line.
fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn render_value(value: &Option<String>) -> Cow<'_, str> {
    match value {
        None => Cow::Borrowed("NULL"),
        Some(text) if text.is_empty() => Cow::Borrowed("(empty)"),
        Some(text) => escape(text),
    }
}

fn render_result_sets(sets: &[ResultSet], rowsort: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for set in sets {
        if set.columns.is_empty() {
            lines.push("(no columns)".to_string());
        } else {
            lines.push(set.columns.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | "));
        }
        let mut rows: Vec<String> = set
            .rows
            .iter()
            .map(|row| {
                if row.is_empty() {
                    "()".to_string()
                } else {
                    row.iter().map(render_value).collect::<Vec<_>>().join(" | ")
                }
            })
            .collect();
        if rowsort {
            rows.sort();
        }
        lines.extend(rows);
    }
    lines
}

fn render_error(code: &str, message: &str) -> String {
    format!("{code} {}", escape(message))
}

/// A summary of an outcome for problem reports.
fn describe(outcome: &Outcome, rowsort: bool) -> String {
    match outcome {
        Outcome::Rows(sets) if sets.is_empty() => "success, no rows".to_string(),
        Outcome::Rows(sets) => format!("success, rows:\n{}", indent(&render_result_sets(sets, rowsort))),
        Outcome::Error { code, message } => format!("error {}", render_error(code, message)),
        Outcome::Broken(why) => why.clone(),
    }
}

fn indent(lines: &[String]) -> String {
    if lines.is_empty() {
        return "    (nothing)".to_string();
    }
    lines.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------
// Running one file.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Verify,
    Record,
}

/// Where the SQL goes: a Tusk server spawned on first use, or an existing
/// server (PostgreSQL when recording).
enum Backend {
    Spawned(OnceLock<Result<Mutex<TestServer>, String>>),
    External(Config),
}

struct Target {
    mode: Mode,
    backend: Backend,
    record_timeout: Duration,
}

impl Target {
    /// A configuration for `dbname`, starting the Tusk server if needed.
    fn config(&self, dbname: &str) -> Result<Config, String> {
        match &self.backend {
            Backend::External(config) => {
                let mut config = config.clone();
                config.dbname(dbname);
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(Duration::from_secs(10));
                }
                Ok(config)
            }
            Backend::Spawned(cell) => {
                let server = cell.get_or_init(|| TestServer::builder().try_start().map(Mutex::new));
                match server {
                    Ok(server) => Ok(lock(server).config(dbname)),
                    Err(message) => Err(format!("cannot start the Tusk server: {message}")),
                }
            }
        }
    }

    /// The spawned server's state and output, for reports of broken runs.
    fn diagnostics(&self) -> String {
        let Backend::Spawned(cell) = &self.backend else {
            return String::new();
        };
        let Some(Ok(server)) = cell.get() else {
            return String::new();
        };
        let mut server = lock(server);
        let state = match server.exit_status() {
            Some(status) => format!("the Tusk server has exited ({status})"),
            None => "the Tusk server is still running".to_string(),
        };
        format!("\n{state}; the end of its output:\n{}", server.log_tail())
    }

    fn spawned(&self) -> bool {
        matches!(self.backend, Backend::Spawned(_))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// CREATE/DROP DATABASE run one at a time: parallel files should not turn
/// into a test of concurrent catalog changes.
static DATABASE_DDL: Mutex<()> = Mutex::new(());

async fn connect(config: &Config) -> Result<Client, String> {
    let (client, connection) = config
        .connect(NoTls)
        .await
        .map_err(|e| format!("cannot connect to database {:?}: {e}", config.get_dbname().unwrap_or("")))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn admin_command(config: &Config, sql: &str) -> Result<(), String> {
    let client = connect(config).await?;
    match client.simple_query(sql).await {
        Ok(_) => Ok(()),
        Err(e) => Err(match e.as_db_error() {
            Some(db) => format!("{sql}: {} {}", db.code().code(), db.message()),
            None => format!("{sql}: {e}"),
        }),
    }
}

async fn drop_database(config: &Config, dbname: &str) -> Result<(), String> {
    // A backend may still be shutting down just after its client went away
    // (55006 "database is being accessed by other users"): retry a while.
    let sql = format!("DROP DATABASE {dbname}");
    let mut attempts = 0;
    loop {
        match admin_command(config, &sql).await {
            Ok(()) => return Ok(()),
            Err(message) if message.contains(" 55006 ") && attempts < 50 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(message) => return Err(message),
        }
    }
}

/// One thing wrong with one record (or with the file as a whole).
struct Problem {
    line: usize,
    sql: Option<String>,
    text: String,
}

fn problem(record: &Record, text: String) -> Problem {
    Problem { line: record.line, sql: Some(record.sql()), text }
}

/// Runs every record in order; in record mode, fills in expected blocks.
async fn run_records(target: &Target, client: &Client, items: &mut [Item], known_gaps: &[usize]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut records = items.iter_mut().filter_map(|item| match item {
        Item::Record(record) => Some(record),
        Item::Text(_) => None,
    });
    while let Some(record) = records.next() {
        let outcome = execute(client, &record.sql(), target.record_timeout).await;
        if let Outcome::Broken(why) = &outcome {
            let remaining = records.count();
            problems.push(problem(
                record,
                format!(
                    "the connection is unusable: {why}; {remaining} later record(s) not run{}",
                    target.diagnostics()
                ),
            ));
            break;
        }
        // A record of a feature Tusk has not built must still be refused
        // with feature_not_supported; anything else means the list is stale.
        if target.mode == Mode::Verify && known_gaps.contains(&record.line) {
            match &outcome {
                Outcome::Error { code, .. } if code == "0A000" => {}
                other => problems.push(problem(
                    record,
                    format!(
                        "listed in {KNOWN_GAPS} as not built yet, but got {}: remove it from the list",
                        describe(other, false)
                    ),
                )),
            }
            continue;
        }
        let actual: Option<Vec<String>> = match (record.kind, &outcome) {
            (RecordKind::StatementOk, Outcome::Rows(_)) => None,
            (RecordKind::StatementOk, _) => {
                problems.push(problem(
                    record,
                    format!("expected success, got {}", describe(&outcome, false)),
                ));
                None
            }
            (RecordKind::StatementError, Outcome::Error { code, message }) => {
                Some(vec![render_error(code, message)])
            }
            (RecordKind::StatementError, _) => {
                problems.push(problem(
                    record,
                    format!("expected an error, got {}", describe(&outcome, false)),
                ));
                None
            }
            (RecordKind::Query { .. }, Outcome::Rows(sets)) if sets.is_empty() => {
                problems.push(problem(
                    record,
                    "expected rows, but the SQL returned no result set (use `statement ok`)".to_string(),
                ));
                None
            }
            (RecordKind::Query { rowsort }, Outcome::Rows(sets)) => Some(render_result_sets(sets, rowsort)),
            (RecordKind::Query { .. }, _) => {
                problems.push(problem(
                    record,
                    format!(
                        "expected rows, got {}{}",
                        describe(&outcome, false),
                        if target.mode == Mode::Record { " (use `statement error`)" } else { "" }
                    ),
                ));
                None
            }
        };
        let Some(actual) = actual else { continue };
        match target.mode {
            Mode::Record if actual.iter().any(|l| l.ends_with(char::is_whitespace)) => {
                // Editors strip trailing blanks; such a file would not survive.
                problems.push(problem(
                    record,
                    format!(
                        "a result line ends in whitespace, which editors strip: select such values \
                         with another column after them (e.g. their length)\n{}",
                        indent(&actual)
                    ),
                ));
            }
            Mode::Record => record.expected = Some(actual),
            Mode::Verify => match &record.expected {
                None => problems.push(problem(
                    record,
                    format!(
                        "no expected block recorded (run scripts/record-slt.sh); actual:\n{}",
                        indent(&actual)
                    ),
                )),
                Some(expected) if *expected != actual => problems.push(problem(
                    record,
                    format!("wrong answer\nexpected:\n{}\nactual:\n{}", indent(expected), indent(&actual)),
                )),
                Some(_) => {}
            },
        }
    }
    problems
}

fn report(display: &str, problems: &[Problem], total_records: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{display}: {} problem(s) in {total_records} record(s)",
        problems.len()
    );
    for p in problems.iter().take(MAX_REPORTED_PROBLEMS) {
        // The headline, then the SQL, then the details (expected/actual).
        let (headline, details) = p.text.split_once('\n').unwrap_or((&p.text, ""));
        let _ = writeln!(out, "\n{display}:{}: {headline}", p.line);
        if let Some(sql) = &p.sql {
            let sql_lines: Vec<String> = sql.lines().map(str::to_string).collect();
            let _ = writeln!(out, "SQL:\n{}", indent(&sql_lines));
        }
        if !details.is_empty() {
            let _ = writeln!(out, "{details}");
        }
    }
    if problems.len() > MAX_REPORTED_PROBLEMS {
        let _ = writeln!(out, "\n... and {} more", problems.len() - MAX_REPORTED_PROBLEMS);
    }
    out
}

fn run_file(target: &Target, path: &Path) -> Result<(), Failed> {
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
    let display = format!("tests/slt/{file_name}");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
    // The stem becomes part of an unquoted database name.
    if !stem.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        return Err(format!("{display}: file names must be lower-case letters, digits and _").into());
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{display}: cannot read: {e}"))?;
    let mut items = parse_file(&text, &display)?;
    let total_records = items.iter().filter(|i| matches!(i, Item::Record(_))).count();

    let dbname = format!("slt_{stem}");
    let admin = target.config(ADMIN_DATABASE)?;
    let config = target.config(&dbname)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))?;

    {
        let _one_at_a_time = lock(&DATABASE_DDL);
        runtime
            .block_on(async {
                if !target.spawned() {
                    // An existing server may hold the database from an earlier run.
                    admin_command(&admin, &format!("DROP DATABASE IF EXISTS {dbname}")).await?;
                }
                admin_command(&admin, &format!("CREATE DATABASE {dbname}")).await
            })
            .map_err(|e| format!("{display}: cannot create the test database: {e}{}", target.diagnostics()))?;
    }

    let mut problems = runtime.block_on(async {
        let client = match connect(&config).await {
            Ok(client) => client,
            Err(e) => {
                return vec![Problem { line: 1, sql: None, text: format!("{e}{}", target.diagnostics()) }];
            }
        };
        let gaps = known_gaps(&file_name);
        let problems = run_records(target, &client, &mut items, &gaps).await;
        drop(client);
        problems
    });

    {
        let _one_at_a_time = lock(&DATABASE_DDL);
        if let Err(e) = runtime.block_on(drop_database(&admin, &dbname)) {
            problems.push(Problem {
                line: 1,
                sql: None,
                text: format!("cannot drop the test database after the run: {e}"),
            });
        }
    }

    if !problems.is_empty() {
        let mut message = report(&display, &problems, total_records);
        if target.mode == Mode::Record {
            message.push_str("\nnot rewritten: fix the records above and record again\n");
        }
        return Err(message.into());
    }
    if target.mode == Mode::Record {
        let new_text = write_file(&items);
        if new_text != text {
            let temporary = path.with_extension("slt.recording");
            std::fs::write(&temporary, &new_text)
                .and_then(|()| std::fs::rename(&temporary, path))
                .map_err(|e| format!("{display}: cannot rewrite: {e}"))?;
            println!("recorded {display} ({total_records} records)");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Entry point.
// ---------------------------------------------------------------------------

/// Records whose features Tusk has not built: `file.slt:line reason` per
/// line. Each must fail with 0A000 until the feature lands.
const KNOWN_GAPS: &str = "tests/slt/known_gaps.txt";

fn known_gaps(file_name: &str) -> Vec<usize> {
    let path = common::repo_dir("tests/slt").join("known_gaps.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let location = l.split_whitespace().next()?;
            let (file, line) = location.rsplit_once(':')?;
            (file == file_name).then(|| line.parse().ok()).flatten()
        })
        .collect()
}

fn slt_files() -> Result<Vec<PathBuf>, String> {
    let dir_buf = common::repo_dir("tests/slt");
    let dir = dir_buf.as_path();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "slt"))
        .collect();
    files.sort();
    if let Ok(wanted) = std::env::var("TUSK_SLT_FILES") {
        let wanted: Vec<String> = wanted
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(|w| {
                let name = Path::new(w).file_name().and_then(|n| n.to_str()).unwrap_or(w);
                name.strip_suffix(".slt").unwrap_or(name).to_string()
            })
            .collect::<Vec<_>>();
        if wanted.is_empty() {
            return Ok(files);
        }
        for w in &wanted {
            if !files.iter().any(|f| f.file_stem().is_some_and(|s| s == w.as_str())) {
                return Err(format!("TUSK_SLT_FILES: no file tests/slt/{w}.slt"));
            }
        }
        files.retain(|f| wanted.iter().any(|w| f.file_stem().is_some_and(|s| s == w.as_str())));
    }
    Ok(files)
}

fn main() {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        let from_env = std::env::var("RUST_TEST_THREADS").ok().and_then(|s| s.parse().ok());
        args.test_threads = Some(from_env.unwrap_or(4));
    }

    let record = std::env::var("TUSK_SLT_RECORD").is_ok_and(|v| !v.is_empty() && v != "0");
    let external = |var: &str| -> Option<Config> {
        let value = std::env::var(var).ok().filter(|v| !v.trim().is_empty())?;
        match value.parse::<Config>() {
            Ok(config) => Some(config),
            Err(e) => {
                eprintln!("{var}: not a valid connection string ({e}): {value}");
                std::process::exit(2);
            }
        }
    };
    let (mode, backend) = if record {
        let Some(config) = external("TUSK_SLT_PG") else {
            eprintln!("TUSK_SLT_RECORD needs TUSK_SLT_PG=\"host=... port=... user=postgres\"");
            std::process::exit(2);
        };
        (Mode::Record, Backend::External(config))
    } else if let Some(config) = external("TUSK_SLT_TARGET") {
        (Mode::Verify, Backend::External(config))
    } else {
        (Mode::Verify, Backend::Spawned(OnceLock::new()))
    };
    let record_timeout = Duration::from_secs(
        std::env::var("TUSK_SLT_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(60),
    );
    let target = Arc::new(Target { mode, backend, record_timeout });

    let files = match slt_files() {
        Ok(files) => files,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let skip = std::env::var("TUSK_SLT_SKIP").is_ok_and(|v| !v.is_empty() && v != "0");
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
            let target = Arc::clone(&target);
            Trial::test(name, move || run_file(&target, &path)).with_ignored_flag(skip)
        })
        .collect();

    let conclusion = libtest_mimic::run(&args, trials);
    // The trials (and their references to the target) are gone by now; this
    // drop kills the spawned server and deletes its data directory.
    drop(target);
    conclusion.exit();
}
