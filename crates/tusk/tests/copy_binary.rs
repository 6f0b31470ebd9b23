//! Binary COPY (`COPY ... FROM STDIN / TO STDOUT (FORMAT binary)`, and the
//! old `BINARY` spellings) against PostgreSQL 15's own answers, recorded by
//! scripts/record-copy-binary.sh into tests/copy/:
//!
//! - binary_types.sql makes a table with a column of every type whose
//!   send/recv format binary COPY uses, and edge values; its binary COPY
//!   must be PostgreSQL's bytes (binary_types.bin), and loading those bytes
//!   back must give PostgreSQL's text rendering (binary_types.out), over
//!   STDIN and through a server-side file;
//! - binary_cases.txt: setup statements, a COPY, the bytes sent to it, and
//!   what PostgreSQL answered (the row count or the error with its SQLSTATE,
//!   detail and context, the bytes of a COPY TO, and the table afterwards:
//!   a failed COPY loads nothing). Each COPY FROM case runs twice: the data
//!   in one CopyData message, then cut into 3-byte messages;
//! - binary_responses.txt: the CopyInResponse/CopyOutResponse format codes.
//!
//! `TUSK_COPY_TEST_PG="host=... port=... user=postgres dbname=postgres"`
//! runs the first two tests against that PostgreSQL instead of a Tusk, to
//! check the tests themselves.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use bytes::Bytes;
use common::TestServer;
use futures_util::{SinkExt, TryStreamExt};
use tokio_postgres::Client;

/// The server under test: a fresh Tusk, or the PostgreSQL named by
/// TUSK_COPY_TEST_PG (a libpq connection string), to check the test itself.
struct Target {
    server: Option<TestServer>,
    pg: Option<String>,
}

impl Target {
    fn start() -> Target {
        match std::env::var("TUSK_COPY_TEST_PG") {
            Ok(conninfo) => Target { server: None, pg: Some(conninfo) },
            Err(_) => Target { server: Some(TestServer::start()), pg: None },
        }
    }

    async fn connect(&self) -> Client {
        match (&self.server, &self.pg) {
            (Some(server), _) => server.connect("postgres").await,
            (None, Some(conninfo)) => {
                let (client, connection) = tokio_postgres::connect(conninfo, tokio_postgres::NoTls).await.expect("connect to TUSK_COPY_TEST_PG");
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                client
            }
            _ => unreachable!(),
        }
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/copy/").to_string() + name;
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The statements of binary_types.sql: each ends with a semicolon at the
/// end of a line; comment lines before a statement are skipped (as the
/// recorder does).
fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for line in sql.lines() {
        if line.starts_with("--") && cur.is_empty() {
            continue;
        }
        cur.push(line);
        if line.trim_end().ends_with(';') {
            out.push(cur.join("\n").trim_end().trim_end_matches(';').to_string());
            cur.clear();
        }
    }
    if !cur.join("").trim().is_empty() {
        out.push(cur.join("\n"));
    }
    out
}

/// An error as the recorder writes it.
fn error_lines(e: &tokio_postgres::Error) -> Vec<String> {
    let Some(d) = e.as_db_error() else { return vec![format!("result client error: {e}")] };
    let mut out = vec![format!("result ERROR {}", d.code().code()), format!("message {}", d.message())];
    for (key, value) in [("detail", d.detail()), ("hint", d.hint()), ("context", d.where_())] {
        if let Some(v) = value {
            out.extend(v.split('\n').map(|p| format!("{key} {p}")));
        }
    }
    out
}

async fn copy_out(client: &Client, sql: &str) -> Result<Vec<u8>, tokio_postgres::Error> {
    let stream = client.copy_out(sql).await?;
    let chunks: Vec<Bytes> = stream.try_collect().await?;
    Ok(chunks.concat())
}

/// COPY FROM STDIN with `data`, in messages of `chunk` bytes (0: one message).
async fn copy_in(client: &Client, sql: &str, data: &[u8], chunk: usize) -> Result<u64, tokio_postgres::Error> {
    let sink = client.copy_in::<str, Bytes>(sql).await?;
    futures_util::pin_mut!(sink);
    let size = if chunk == 0 { data.len().max(1) } else { chunk };
    for part in data.chunks(size) {
        // Each send is flushed: one CopyData message.
        sink.send(Bytes::copy_from_slice(part)).await?;
    }
    sink.finish().await
}

/// Where two binary COPY streams first differ, by tuple and field.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    let mut pos = 19;
    let mut tuple = 0;
    while pos + 2 <= want.len() {
        let n = i16::from_be_bytes([want[pos], want[pos + 1]]);
        if n < 0 {
            break;
        }
        tuple += 1;
        pos += 2;
        for f in 0..n {
            let start = pos;
            let len = i32::from_be_bytes(want[pos..pos + 4].try_into().unwrap());
            pos += 4 + len.max(0) as usize;
            if at < pos {
                let end = pos.min(want.len());
                let got_end = (start + (end - start) + 8).min(got.len());
                return format!(
                    "first difference at byte {at}: tuple {tuple}, field {}\n  PostgreSQL: {}\n  Tusk:       {}",
                    f + 1,
                    hex(&want[start..end]),
                    hex(&got[start.min(got.len())..got_end])
                );
            }
        }
    }
    format!("first difference at byte {at} (lengths: Tusk {}, PostgreSQL {})", got.len(), want.len())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

#[tokio::test]
async fn binary_copy_of_every_type_matches_postgres() {
    let target = Target::start();
    let client = target.connect().await;
    client.batch_execute("DROP TABLE IF EXISTS copy_types").await.unwrap();
    client.batch_execute("SET TimeZone = 'UTC'").await.unwrap();
    let sql = String::from_utf8(fixture("binary_types.sql")).unwrap();
    let stmts = statements(&sql);
    for s in &stmts {
        client.batch_execute(s).await.unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    let want_bin = fixture("binary_types.bin");
    let want_text = String::from_utf8(fixture("binary_types.out")).unwrap();

    // COPY TO STDOUT: PostgreSQL's bytes, every type's send format.
    let got = copy_out(&client, "COPY copy_types TO STDOUT (FORMAT binary)").await.unwrap();
    assert!(got == want_bin, "COPY TO (FORMAT binary) differs from PostgreSQL's: {}", first_difference(&got, &want_bin));

    // COPY FROM STDIN into a fresh table (the CREATE TABLE alone), in one
    // message and in small ones: PostgreSQL's rows, as text and as binary.
    for chunk in [0, 5, 4099] {
        client.batch_execute("DROP TABLE copy_types").await.unwrap();
        client.batch_execute(&stmts[0]).await.unwrap();
        let n = copy_in(&client, "COPY copy_types FROM STDIN (FORMAT binary)", &want_bin, chunk).await.unwrap();
        assert_eq!(n as usize, want_text.lines().count(), "rows loaded (chunks of {chunk})");
        let text = String::from_utf8(copy_out(&client, "COPY copy_types TO STDOUT").await.unwrap()).unwrap();
        assert_eq!(text, want_text, "the rows loaded from PostgreSQL's binary COPY (chunks of {chunk})");
        let again = copy_out(&client, "COPY copy_types TO STDOUT WITH BINARY").await.unwrap();
        assert!(again == want_bin, "binary round trip: {}", first_difference(&again, &want_bin));
    }

    // Server-side files: COPY TO a file writes the same bytes, COPY FROM
    // the file loads the same rows.
    let dir = tempfile::tempdir().unwrap();
    // Writable by a server running as another user (TUSK_COPY_TEST_PG).
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let file = dir.path().join("copy_types.bin");
    let file = file.to_str().unwrap();
    let n = client.execute(&format!("COPY copy_types TO '{file}' (FORMAT binary)"), &[]).await.unwrap();
    assert_eq!(n as usize, want_text.lines().count());
    let written = std::fs::read(file).unwrap();
    assert!(written == want_bin, "COPY TO file (FORMAT binary): {}", first_difference(&written, &want_bin));
    client.batch_execute("DROP TABLE copy_types").await.unwrap();
    client.batch_execute(&stmts[0]).await.unwrap();
    let n = client.execute(&format!("COPY copy_types FROM '{file}' WITH BINARY"), &[]).await.unwrap();
    assert_eq!(n as usize, want_text.lines().count());
    let text = String::from_utf8(copy_out(&client, "COPY copy_types TO STDOUT").await.unwrap()).unwrap();
    assert_eq!(text, want_text, "the rows loaded from a binary file");
    // A bad file fails the whole COPY as STDIN does.
    std::fs::write(file, &want_bin[..want_bin.len() - 7]).unwrap();
    client.batch_execute("TRUNCATE copy_types").await.unwrap();
    let e = client.execute(&format!("COPY copy_types FROM '{file}' (FORMAT binary)"), &[]).await.unwrap_err();
    let d = e.as_db_error().expect("a server error");
    assert_eq!((d.code().code(), d.message()), ("22P04", "unexpected EOF in COPY data"));
    let rows = client.query_one("SELECT count(*) FROM copy_types", &[]).await.unwrap();
    assert_eq!(rows.get::<_, i64>(0), 0, "a failed COPY FROM file loads nothing");
}

/// One case of binary_cases.txt.
struct Case {
    name: String,
    setup: Vec<String>,
    copy: String,
    input: Option<Vec<u8>>,
    check: Option<String>,
    /// The recorded lines from `result` on (without `check`'s query line).
    expected: Vec<String>,
}

fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in text.split("\n== ").skip(1) {
        let mut lines = block.lines();
        let name = lines.next().unwrap().to_string();
        let mut case = Case { name, setup: Vec::new(), copy: String::new(), input: None, check: None, expected: Vec::new() };
        for line in lines {
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "" => {}
                "sql" => case.setup.push(rest.to_string()),
                "copy" => case.copy = rest.to_string(),
                "input" => case.input = Some(unhex(rest)),
                "check" => case.check = Some(rest.to_string()),
                _ => case.expected.push(line.to_string()),
            }
        }
        cases.push(case);
    }
    cases
}

/// Runs a case as the recorder did; returns the lines to compare. The COPY
/// runs on a connection of its own: after a COPY FROM STDIN that fails
/// before it starts, tokio-postgres's copy_in leaves a stray ReadyForQuery
/// (it sends CopyFail and a second Sync, which the server answers).
async fn run_case(target: &Target, case: &Case, chunk: usize) -> Vec<String> {
    let client = &target.connect().await;
    for s in &case.setup {
        client.batch_execute(s).await.unwrap_or_else(|e| panic!("{}: {s}: {e}", case.name));
    }
    let mut out = Vec::new();
    if case.copy.contains("FROM STDIN") {
        match copy_in(client, &case.copy, case.input.as_deref().unwrap_or_default(), chunk).await {
            Ok(n) => out.push(format!("result COPY {n}")),
            Err(e) => out.extend(error_lines(&e)),
        }
    } else {
        match copy_out(client, &case.copy).await {
            Ok(bytes) => {
                // The row count is not reported through copy_out: count the
                // tuples (PostgreSQL's is in the recorded result line).
                out.push(format!("result COPY {}", count_tuples(&bytes)));
                if !bytes.is_empty() {
                    out.push(format!("output {}", hex(&bytes)));
                }
            }
            Err(e) => out.extend(error_lines(&e)),
        }
    }
    if let Some(check) = &case.check {
        // On a new connection too: a COPY FROM STDIN that fails once the
        // data is flowing can also leave tokio-postgres a stray
        // ReadyForQuery (PostgreSQL answers both of its Syncs).
        let client = &target.connect().await;
        let text = copy_out(client, check).await.unwrap_or_else(|e| panic!("{}: {check}: {e}", case.name));
        out.extend(String::from_utf8(text).unwrap().lines().map(|l| format!("| {l}")));
    }
    out
}

fn count_tuples(b: &[u8]) -> usize {
    let mut pos = 19;
    let mut n = 0;
    while pos + 2 <= b.len() {
        let fields = i16::from_be_bytes([b[pos], b[pos + 1]]);
        if fields < 0 {
            break;
        }
        pos += 2;
        for _ in 0..fields {
            let len = i32::from_be_bytes(b[pos..pos + 4].try_into().unwrap());
            pos += 4 + len.max(0) as usize;
        }
        n += 1;
    }
    n
}

#[tokio::test]
async fn binary_copy_cases_match_postgres() {
    let target = Target::start();
    let cases = parse_cases(&String::from_utf8(fixture("binary_cases.txt")).unwrap());
    assert!(cases.len() > 50, "binary_cases.txt holds {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let modes: &[usize] = if case.input.is_some() { &[0, 3] } else { &[0] };
        for &chunk in modes {
            let got = run_case(&target, case, chunk).await;
            if got != case.expected {
                let shorten = |v: &[String]| v.iter().map(|l| if l.len() > 200 { format!("{}...", &l[..200]) } else { l.clone() }).collect::<Vec<_>>().join("\n    ");
                failures.push(format!(
                    "{} (data in {}):\n  PostgreSQL:\n    {}\n  Tusk:\n    {}",
                    case.name,
                    if chunk == 0 { "one message".to_string() } else { format!("{chunk}-byte messages") },
                    shorten(&case.expected),
                    shorten(&got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} binary COPY cases differ from PostgreSQL:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// The raw CopyInResponse/CopyOutResponse of each statement of
/// binary_responses.txt: overall format 1 and a 1 per column for binary.
#[test]
fn copy_responses_carry_the_binary_format_codes() {
    let server = TestServer::start();
    let text = String::from_utf8(fixture("binary_responses.txt")).unwrap();
    let mut sock = TcpStream::connect((server.host(), server.port())).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let params = b"user\0postgres\0database\0postgres\0\0";
    let mut startup = Vec::new();
    startup.extend_from_slice(&((8 + params.len()) as i32).to_be_bytes());
    startup.extend_from_slice(&196608i32.to_be_bytes());
    startup.extend_from_slice(params);
    sock.write_all(&startup).unwrap();
    let read_message = |sock: &mut TcpStream| -> (u8, Vec<u8>) {
        let mut head = [0u8; 5];
        sock.read_exact(&mut head).unwrap();
        let len = i32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
        let mut body = vec![0u8; len - 4];
        sock.read_exact(&mut body).unwrap();
        (head[0], body)
    };
    let query = |sock: &mut TcpStream, sql: &str| {
        let mut m = vec![b'Q'];
        m.extend_from_slice(&((4 + sql.len() + 1) as i32).to_be_bytes());
        m.extend_from_slice(sql.as_bytes());
        m.push(0);
        sock.write_all(&m).unwrap();
    };
    while read_message(&mut sock).0 != b'Z' {}
    for sql in ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int, b text)"] {
        query(&mut sock, sql);
        while read_message(&mut sock).0 != b'Z' {}
    }
    for line in text.lines() {
        let (sql, want) = line.split_once('\t').unwrap();
        query(&mut sock, sql);
        let mut got = None;
        loop {
            let (tag, body) = read_message(&mut sock);
            if tag == b'G' || tag == b'H' {
                got = Some(format!("{} {}", tag as char, hex(&body)));
                if tag == b'G' {
                    let msg = b"recording\0";
                    let mut m = vec![b'f'];
                    m.extend_from_slice(&((4 + msg.len()) as i32).to_be_bytes());
                    m.extend_from_slice(msg);
                    sock.write_all(&m).unwrap();
                }
            }
            if tag == b'Z' {
                break;
            }
        }
        assert_eq!(got.as_deref(), Some(want), "the copy response of {sql}");
    }
}
