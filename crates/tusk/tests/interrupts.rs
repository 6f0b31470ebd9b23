//! Runaway statements stop: every kind of long statement (scans, joins,
//! sorts, aggregation, window functions, recursive CTEs, set-returning
//! functions, huge strings, COPY, index builds and rewrites, sleeps, lock
//! waits) ends with 57014 when canceled — by the protocol's CancelRequest,
//! by pg_cancel_backend or by statement_timeout — and its session goes on;
//! pg_terminate_backend ends a session (FATAL 57P01), rolling back its
//! transaction and releasing its locks, with PostgreSQL 15's permission
//! rules and messages; lock_timeout and idle_in_transaction_session_timeout
//! interrupt too; and a statement whose client went away stops and frees
//! its locks (client_connection_check_interval).
//!
//! The tests wait for the statement to show up as active in
//! pg_stat_activity before interrupting it, and bound every wait (a
//! statement that ignores its cancel fails the test instead of hanging it).
//! How long each cancel took is printed (`--nocapture`), never asserted.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::TestServer;
use tokio_postgres::{AsyncMessage, Client, NoTls};

/// The longest any interrupted statement may take to stop before the test
/// calls it a hang (the interrupts take milliseconds; this is for a slow,
/// shared machine).
const HANG: Duration = Duration::from_secs(30);

/// (severity, SQLSTATE, message) of an error.
fn db_error(e: &tokio_postgres::Error) -> (String, String, String) {
    match e.as_db_error() {
        Some(d) => (d.severity().to_string(), d.code().code().to_string(), d.message().to_string()),
        None => ("-".into(), "-".into(), e.to_string()),
    }
}

fn code(e: &tokio_postgres::Error) -> String {
    db_error(e).1
}

async fn connect_as(server: &TestServer, user: &str) -> Client {
    let mut config = server.config("postgres");
    config.user(user);
    let (client, connection) = config.connect(NoTls).await.unwrap_or_else(|e| panic!("connect as {user}: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// A client whose NOTICEs and WARNINGs are kept, as "SEVERITY: message".
async fn connect_with_notices(server: &TestServer, user: &str) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let mut config = server.config("postgres");
    config.user(user);
    let (client, mut connection) = config.connect(NoTls).await.unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(m) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match m {
                Ok(AsyncMessage::Notice(n)) => {
                    let _ = tx.send(format!("{}: {}", n.severity(), n.message()));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    (client, rx)
}

async fn pid_of(c: &Client) -> i32 {
    c.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get(0)
}

/// Waits until session `pid` runs `sql` (pg_stat_activity says active,
/// with that text), then a little longer, so that the statement is inside
/// its long loop rather than still planning.
async fn wait_until_running(watcher: &Client, pid: i32, sql: &str) {
    let deadline = Instant::now() + HANG;
    loop {
        let rows = watcher.query("SELECT state, query FROM pg_stat_activity WHERE pid = $1", &[&pid]).await.unwrap();
        if let Some(r) = rows.first() {
            let (state, query): (Option<String>, Option<String>) = (r.get(0), r.get(1));
            if state.as_deref() == Some("active") && query.as_deref() == Some(sql) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "session {pid} never showed as running {sql:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Waits until session `pid` is no longer in pg_stat_activity.
async fn wait_until_gone(watcher: &Client, pid: i32) {
    let deadline = Instant::now() + HANG;
    loop {
        let n: i64 = watcher.query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", &[&pid]).await.unwrap().get(0);
        if n == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "session {pid} is still in pg_stat_activity");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// The protocol's CancelRequest, on a connection of its own.
    CancelRequest,
    /// SELECT pg_cancel_backend(pid) from another session.
    CancelBackend,
    /// statement_timeout (1 s) set on the session beforehand.
    StatementTimeout,
}

const TIMEOUT_MS: u64 = 1000;

/// Runs `sql` on `c`, interrupts it `how`, and checks that it fails with
/// 57014 and PostgreSQL's message, and that the session then works.
/// Returns the client and how long the statement took to stop.
async fn interrupt(watcher: &Client, c: Client, sql: &'static str, how: How) -> (Client, Duration) {
    let pid = pid_of(&c).await;
    if how == How::StatementTimeout {
        c.batch_execute(&format!("SET statement_timeout = {TIMEOUT_MS}")).await.unwrap();
    }
    let token = c.cancel_token();
    let started = Instant::now();
    let running = tokio::spawn(async move {
        let r = c.batch_execute(sql).await;
        (c, r, Instant::now())
    });
    let asked = match how {
        How::StatementTimeout => started + Duration::from_millis(TIMEOUT_MS),
        _ => {
            wait_until_running(watcher, pid, sql).await;
            let asked = Instant::now();
            if how == How::CancelRequest {
                token.cancel_query(NoTls).await.unwrap();
            } else {
                let sent: bool = watcher.query_one("SELECT pg_cancel_backend($1)", &[&pid]).await.unwrap().get(0);
                assert!(sent, "pg_cancel_backend({pid}) found no session");
            }
            asked
        }
    };
    let (c, r, ended) = tokio::time::timeout(HANG, running).await.unwrap_or_else(|_| panic!("{sql}: not stopped by {how:?}")).unwrap();
    let e = r.expect_err(sql);
    let want = if how == How::StatementTimeout { "canceling statement due to statement timeout" } else { "canceling statement due to user request" };
    assert_eq!(db_error(&e), ("ERROR".into(), "57014".into(), want.into()), "{sql} ({how:?})");
    if how == How::StatementTimeout {
        c.batch_execute("RESET statement_timeout").await.unwrap();
    }
    let one: i32 = c.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1, "the session works after {sql}");
    let state: String = watcher.query_one("SELECT state FROM pg_stat_activity WHERE pid = $1", &[&pid]).await.unwrap().get(0);
    assert_eq!(state, "idle");
    (c, ended.saturating_duration_since(asked))
}

fn report(latencies: &[(String, How, Duration)]) {
    eprintln!("cancel latencies (from the cancel to the client's error):");
    for (what, how, d) in latencies {
        eprintln!("  {:>7.1} ms  {what} ({how:?})", d.as_secs_f64() * 1000.0);
    }
}

/// A table of 50,000 rows (id primary key, k = 1 everywhere, v = id).
const SETUP: &str = "CREATE TABLE big (id int PRIMARY KEY, k int, v int);
    INSERT INTO big SELECT g, 1, g FROM generate_series(1, 50000) g;
    CREATE TABLE big2 AS SELECT * FROM big;";

/// Statements that would run for minutes or forever, by the loop that
/// keeps them busy, with the session settings they need.
const RUNAWAYS: &[(&str, &str, &str)] = &[
    ("table scan (re-scanned per outer row)", "", "SELECT sum((SELECT count(*) FROM big b WHERE b.v > a.v)) FROM big a"),
    ("index range scan (per outer row)", "", "SELECT sum((SELECT count(*) FROM big b WHERE b.id >= a.id)) FROM big a"),
    ("nested loop join", "", "SELECT count(*) FROM big a, big b, big c WHERE a.v + b.v + c.v < 0"),
    ("hash join probe (one key, rows turned away)", "", "SELECT count(*) FROM big a JOIN big b ON a.k = b.k AND a.v < b.v - 1000000"),
    ("hash join over an endless set", "", "SELECT count(*) FROM big a JOIN generate_series(1, 100000000000) g ON a.id = g"),
    ("sort in memory (reading its input)", "SET work_mem = '1GB'", "SELECT count(*) FROM (SELECT g FROM generate_series(1, 100000000000) g ORDER BY md5(g::text)) s"),
    (
        // A long quicksort (600,000 text keys: seconds here), canceled in
        // its comparisons; then an endless set, should the sort be done.
        "sort in memory (sorting)",
        "SET work_mem = '1GB'",
        "SELECT count(*) FROM (SELECT g FROM generate_series(1, 600000) g ORDER BY md5(g::text)) s, LATERAL generate_series(1, 100000000000) x",
    ),
    ("sort spilled to disk", "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT g FROM generate_series(1, 100000000000) g ORDER BY g DESC) s"),
    ("hash aggregation", "", "SELECT count(*) FROM (SELECT g % 1000, count(*) FROM generate_series(1, 100000000000) g GROUP BY 1) s"),
    ("hash aggregation spilled to disk", "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT g, count(*) FROM generate_series(1, 100000000000) g GROUP BY 1) s"),
    (
        "window function (a frame per row)",
        "",
        "SELECT count(*) FROM (SELECT sum(v) OVER (ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM big) s",
    ),
    ("running window aggregate", "", "SELECT count(*) FROM (SELECT array_agg(v) OVER (ORDER BY v) FROM big) s"),
    ("recursive CTE that never ends", "", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"),
    ("generate_series in FROM", "", "SELECT count(*) FROM generate_series(1, 100000000000)"),
    ("set-returning function in the select list", "", "SELECT count(*) FROM (SELECT generate_series(1, 100000000000)) s"),
    ("<> ALL over a subquery's rows", "", "SELECT count(*) FROM big a WHERE a.v <> ALL (SELECT b.v + 1000000 FROM big b)"),
    ("repeat() building huge strings", "", "SELECT sum(length(repeat(g::text, 10000000))) FROM generate_series(1, 100000000) g"),
    ("lpad() to huge lengths", "", "SELECT sum(length(lpad('x', 20000000, 'ab'))) FROM generate_series(1, 100000000) g"),
    ("string_agg", "", "SELECT length(string_agg(g::text, ',')) FROM generate_series(1, 100000000000) g"),
    ("rows sent to the client", "", "SELECT g FROM generate_series(1, 100000000000) g"),
    ("CREATE INDEX", "", "CREATE INDEX big_slow ON big (md5(repeat(v::text, 50000)))"),
    ("table rewrite (ALTER COLUMN TYPE)", "", "ALTER TABLE big2 ALTER COLUMN v TYPE bigint USING length(md5(repeat(v::text, 50000)))"),
    ("CREATE TABLE AS", "", "CREATE TABLE endless AS SELECT g FROM generate_series(1, 100000000000) g"),
    ("INSERT ... SELECT", "", "INSERT INTO big2 SELECT g, 1, g FROM generate_series(100001, 100000000000) g"),
    ("UPDATE", "", "UPDATE big2 SET v = length(md5(repeat(v::text, 50000)))"),
    ("pg_sleep", "", "SELECT pg_sleep(1000)"),
];

/// Every kind of runaway statement stops when canceled, by each means.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_runaway_statement_can_be_canceled() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute(SETUP).await.unwrap();
    let mut c = server.connect("postgres").await;
    let mut latencies = Vec::new();
    let ways = [How::CancelRequest, How::CancelBackend, How::StatementTimeout];
    for (i, (what, setup, sql)) in RUNAWAYS.iter().enumerate() {
        if !setup.is_empty() {
            c.batch_execute(setup).await.unwrap();
        }
        let how = ways[i % ways.len()];
        let (back, took) = interrupt(&watcher, c, sql, how).await;
        c = back;
        latencies.push((what.to_string(), how, took));
        if !setup.is_empty() {
            c.batch_execute("RESET ALL").await.unwrap();
        }
    }
    // What the canceled DDL and writes were doing is gone.
    let n: i64 = watcher.query_one("SELECT count(*) FROM pg_class WHERE relname IN ('big_slow', 'endless')", &[]).await.unwrap().get(0);
    assert_eq!(n, 0, "a canceled CREATE left its relation behind");
    let ty: String = watcher.query_one("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'big2'::regclass AND attname = 'v'", &[]).await.unwrap().get(0);
    assert_eq!(ty, "integer");
    let (rows, sum): (i64, i64) = {
        let r = watcher.query_one("SELECT count(*), sum(v) FROM big2", &[]).await.unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((rows, sum), (50000, 50000 * 50001 / 2), "a canceled write left rows behind");
    report(&latencies);
}

/// Both means of canceling stop each of the three kinds of statement the
/// others do not cover by that means; run here with the other two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_means_of_canceling_stops_a_scan_a_sort_and_a_sleep() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute(SETUP).await.unwrap();
    let mut c = server.connect("postgres").await;
    let mut latencies = Vec::new();
    for how in [How::CancelRequest, How::CancelBackend, How::StatementTimeout] {
        for sql in [
            "SELECT sum((SELECT count(*) FROM big b WHERE b.v > a.v)) FROM big a",
            "SELECT count(*) FROM (SELECT g FROM generate_series(1, 100000000000) g ORDER BY g DESC) s",
            "SELECT pg_sleep(1000)",
        ] {
            let (back, took) = interrupt(&watcher, c, sql, how).await;
            c = back;
            latencies.push((sql.to_string(), how, took));
        }
    }
    report(&latencies);
}

/// Waits for a row lock and a table lock stop when canceled; lock_timeout
/// ends them with 55P03; the holder keeps its locks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_waits_are_interruptible() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0), (2, 0)").await.unwrap();
    let holder = server.connect("postgres").await;
    holder.batch_execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1").await.unwrap();
    let mut c = server.connect("postgres").await;
    let mut latencies = Vec::new();
    for (i, sql) in ["UPDATE acct SET v = 2 WHERE id = 1", "SELECT * FROM acct WHERE id = 1 FOR UPDATE", "DELETE FROM acct WHERE id = 1"]
        .into_iter()
        .enumerate()
    {
        let how = [How::CancelRequest, How::CancelBackend, How::StatementTimeout][i];
        let (back, took) = interrupt(&watcher, c, sql, how).await;
        c = back;
        latencies.push((format!("row lock wait: {sql}"), how, took));
    }
    // In a block: the canceled statement fails the block, which ROLLBACK ends.
    let pid = pid_of(&c).await;
    c.batch_execute("BEGIN").await.unwrap();
    let token = c.cancel_token();
    let sql = "UPDATE acct SET v = 3 WHERE id = 1";
    let running = tokio::spawn(async move {
        let r = c.batch_execute(sql).await;
        (c, r)
    });
    wait_until_running(&watcher, pid, sql).await;
    token.cancel_query(NoTls).await.unwrap();
    let (c, r) = tokio::time::timeout(HANG, running).await.expect("canceled").unwrap();
    assert_eq!(code(&r.unwrap_err()), "57014");
    assert_eq!(code(&c.batch_execute("SELECT 1").await.unwrap_err()), "25P02");
    c.batch_execute("ROLLBACK").await.unwrap();

    // lock_timeout: 55P03 "canceling statement due to lock timeout".
    c.batch_execute("SET lock_timeout = '200ms'").await.unwrap();
    let e = tokio::time::timeout(HANG, c.batch_execute("UPDATE acct SET v = 4 WHERE id = 1")).await.expect("lock_timeout").unwrap_err();
    assert_eq!(db_error(&e), ("ERROR".into(), "55P03".into(), "canceling statement due to lock timeout".into()));
    c.batch_execute("RESET lock_timeout").await.unwrap();

    // A table lock: LOCK TABLE waits for another transaction's.
    let table_holder = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE locked (x int)").await.unwrap();
    table_holder.batch_execute("BEGIN; LOCK TABLE locked IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let pid = pid_of(&c).await;
    c.batch_execute("BEGIN").await.unwrap();
    let sql = "LOCK TABLE locked IN ACCESS EXCLUSIVE MODE";
    let running = tokio::spawn(async move {
        let r = c.batch_execute(sql).await;
        (c, r)
    });
    wait_until_running(&watcher, pid, sql).await;
    let asked = Instant::now();
    assert!(watcher.query_one("SELECT pg_cancel_backend($1)", &[&pid]).await.unwrap().get::<_, bool>(0));
    let (c, r) = tokio::time::timeout(HANG, running).await.expect("canceled").unwrap();
    latencies.push(("table lock wait: LOCK TABLE".into(), How::CancelBackend, asked.elapsed()));
    assert_eq!(db_error(&r.unwrap_err()).2, "canceling statement due to user request");
    c.batch_execute("ROLLBACK").await.unwrap();

    // The holders were not disturbed: their writes commit.
    holder.batch_execute("COMMIT").await.unwrap();
    table_holder.batch_execute("COMMIT").await.unwrap();
    let v: i32 = c.query_one("SELECT v FROM acct WHERE id = 1", &[]).await.unwrap().get(0);
    assert_eq!(v, 1);
    report(&latencies);
}

/// COPY FROM STDIN and COPY TO STDOUT stop when canceled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_in_both_directions_can_be_canceled() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE sink (x int)").await.unwrap();

    // COPY TO STDOUT of an endless query: the stream ends with 57014.
    let c = server.connect("postgres").await;
    let pid = pid_of(&c).await;
    let sql = "COPY (SELECT g FROM generate_series(1, 100000000000) g) TO STDOUT";
    let token = c.cancel_token();
    let reading = tokio::spawn(async move {
        let r = async {
            let stream = c.copy_out(sql).await?;
            futures_util::pin_mut!(stream);
            let mut bytes = 0usize;
            while let Some(chunk) = std::future::poll_fn(|cx| futures_util::Stream::poll_next(stream.as_mut(), cx)).await {
                bytes += chunk?.len();
            }
            Ok::<usize, tokio_postgres::Error>(bytes)
        }
        .await;
        (c, r, Instant::now())
    });
    wait_until_running(&watcher, pid, sql).await;
    let asked = Instant::now();
    token.cancel_query(NoTls).await.unwrap();
    let (c, r, ended) = tokio::time::timeout(HANG, reading).await.expect("COPY TO canceled").unwrap();
    assert_eq!(db_error(&r.unwrap_err()), ("ERROR".into(), "57014".into(), "canceling statement due to user request".into()));
    eprintln!("COPY TO STDOUT canceled in {:.1} ms", ended.saturating_duration_since(asked).as_secs_f64() * 1000.0);
    assert_eq!(c.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0), 1);

    // COPY FROM STDIN that the client keeps feeding, on a plain protocol
    // client (so that what follows the error is seen exactly): the server
    // answers the cancel with 57014 and ReadyForQuery, ignores the
    // CopyData still coming, and then runs the next query.
    let mut raw = RawClient::connect(&server);
    raw.send(b'Q', b"COPY sink FROM STDIN\0");
    assert_eq!(raw.read().0, b'G', "CopyInResponse");
    let line = b"1\n".repeat(4096);
    let asked = loop {
        raw.send(b'd', &line);
        let n: i64 = watcher.query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", &[&raw.pid]).await.unwrap().get(0);
        if n == 1 {
            break Instant::now();
        }
    };
    assert!(watcher.query_one("SELECT pg_cancel_backend($1)", &[&raw.pid]).await.unwrap().get::<_, bool>(0));
    let deadline = Instant::now() + HANG;
    let error = loop {
        // The server reads every CopyData before it notices; keep sending
        // until the error comes back.
        raw.send(b'd', &line);
        if let Some((tag, body)) = raw.try_read() {
            if tag == b'E' {
                break body;
            }
        }
        assert!(Instant::now() < deadline, "COPY FROM STDIN not canceled");
    };
    eprintln!("COPY FROM STDIN canceled in {:.1} ms", asked.elapsed().as_secs_f64() * 1000.0);
    assert!(fields(&error).contains(&(b'C', "57014".to_string())), "{:?}", fields(&error));
    assert!(fields(&error).contains(&(b'M', "canceling statement due to user request".to_string())));
    // More CopyData, then CopyDone: ignored after the error.
    raw.send(b'd', &line);
    raw.send(b'c', b"");
    raw.send(b'Q', b"SELECT 41 + 1\0");
    let mut tags = Vec::new();
    let mut value = String::new();
    loop {
        let (tag, body) = raw.read();
        tags.push(tag);
        if tag == b'D' {
            value = String::from_utf8_lossy(&body[6..]).to_string();
        }
        if tag == b'Z' && tags.contains(&b'C') {
            break;
        }
    }
    assert_eq!(tags, vec![b'Z', b'T', b'D', b'C', b'Z'], "ReadyForQuery after the error, then the query's rows");
    assert_eq!(value, "42");
    let n: i64 = watcher.query_one("SELECT count(*) FROM sink", &[]).await.unwrap().get(0);
    assert_eq!(n, 0, "the canceled COPY left rows behind");
}

/// pg_cancel_backend and pg_terminate_backend follow PostgreSQL 15's
/// permission rules and answer with its messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signalling_follows_postgresql_permission_rules() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin
        .batch_execute(
            "CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN; CREATE ROLE carol LOGIN IN ROLE bob;
             CREATE ROLE signaller LOGIN IN ROLE pg_signal_backend; CREATE ROLE noinherit LOGIN NOINHERIT IN ROLE bob;
             CREATE ROLE admin2 LOGIN SUPERUSER",
        )
        .await
        .unwrap();
    let bob = connect_as(&server, "bob").await;
    let bob_pid = pid_of(&bob).await;
    let super_pid = pid_of(&admin).await;
    let alice = connect_as(&server, "alice").await;
    let alice2 = connect_as(&server, "alice").await;
    let alice2_pid = pid_of(&alice2).await;
    let carol = connect_as(&server, "carol").await;
    let signaller = connect_as(&server, "signaller").await;
    let noinherit = connect_as(&server, "noinherit").await;
    let admin2 = connect_as(&server, "admin2").await;

    let refused = |e: tokio_postgres::Error| db_error(&e);
    let not_member_cancel = ("ERROR".to_string(), "42501".to_string(), "must be a member of the role whose query is being canceled or member of pg_signal_backend".to_string());
    let not_member_terminate = ("ERROR".to_string(), "42501".to_string(), "must be a member of the role whose process is being terminated or member of pg_signal_backend".to_string());
    let not_super_cancel = ("ERROR".to_string(), "42501".to_string(), "must be a superuser to cancel superuser query".to_string());
    let not_super_terminate = ("ERROR".to_string(), "42501".to_string(), "must be a superuser to terminate superuser process".to_string());

    // Another role's session: refused.
    assert_eq!(refused(alice.query_one("SELECT pg_cancel_backend($1)", &[&bob_pid]).await.unwrap_err()), not_member_cancel);
    assert_eq!(refused(alice.query_one("SELECT pg_terminate_backend($1)", &[&bob_pid]).await.unwrap_err()), not_member_terminate);
    // A superuser's session: only superusers, pg_signal_backend or not.
    for c in [&alice, &signaller, &bob] {
        assert_eq!(refused(c.query_one("SELECT pg_cancel_backend($1)", &[&super_pid]).await.unwrap_err()), not_super_cancel);
        assert_eq!(refused(c.query_one("SELECT pg_terminate_backend($1)", &[&super_pid]).await.unwrap_err()), not_super_terminate);
    }
    // A member without INHERIT lacks the role's privileges.
    assert_eq!(refused(noinherit.query_one("SELECT pg_cancel_backend($1)", &[&bob_pid]).await.unwrap_err()), not_member_cancel);
    // Allowed: the same role, a member that inherits, pg_signal_backend, a superuser.
    for (c, pid) in [(&alice, alice2_pid), (&carol, bob_pid), (&signaller, bob_pid), (&admin2, super_pid), (&admin, bob_pid)] {
        let sent: bool = c.query_one("SELECT pg_cancel_backend($1)", &[&pid]).await.unwrap().get(0);
        assert!(sent);
    }
    // SET ROLE: the caller is judged by its current role.
    admin.batch_execute("GRANT alice TO bob").await.unwrap();
    let e = bob.query_one("SELECT pg_cancel_backend($1)", &[&super_pid]).await.unwrap_err();
    assert_eq!(refused(e), not_super_cancel);
    bob.batch_execute("SET ROLE alice").await.unwrap();
    assert_eq!(refused(bob.query_one("SELECT pg_cancel_backend($1)", &[&bob_pid]).await.unwrap_err()), not_member_cancel);
    bob.batch_execute("RESET ROLE").await.unwrap();

    // No such session: false, with a WARNING.
    let (watched, mut notices) = connect_with_notices(&server, "postgres").await;
    for f in ["pg_cancel_backend(1)", "pg_terminate_backend(1)", "pg_terminate_backend(1, 100)"] {
        let sent: bool = watched.query_one(&format!("SELECT {f}"), &[]).await.unwrap().get(0);
        assert!(!sent, "{f}");
        assert_eq!(notices.recv().await.unwrap(), "WARNING: PID 1 is not a PostgreSQL backend process");
    }
    let e = watched.query_one("SELECT pg_terminate_backend(1, -1)", &[]).await.unwrap_err();
    assert_eq!(db_error(&e), ("ERROR".into(), "22003".into(), "\"timeout\" must not be negative".into()));
    let null: Option<bool> = watched.query_one("SELECT pg_cancel_backend(NULL)", &[]).await.unwrap().get(0);
    assert_eq!(null, None);

    // Terminating a role's own other session, as that role.
    let sent: bool = alice.query_one("SELECT pg_terminate_backend($1, 10000)", &[&alice2_pid]).await.unwrap().get(0);
    assert!(sent);
    assert!(alice2.query_one("SELECT 1", &[]).await.is_err());
    wait_until_gone(&admin, alice2_pid).await;
}

/// pg_terminate_backend ends a session: its statement stops with FATAL
/// 57P01, its transaction rolls back, its locks are released and it
/// leaves pg_stat_activity; with a timeout it returns once that is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_a_session_rolls_back_and_releases_its_locks() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0), (2, 0)").await.unwrap();

    // Running a statement, holding a row lock.
    let victim = server.connect("postgres").await;
    let pid = pid_of(&victim).await;
    victim.batch_execute("BEGIN; UPDATE acct SET v = 100 WHERE id = 1").await.unwrap();
    let sql = "SELECT count(*) FROM generate_series(1, 100000000000)";
    let running = tokio::spawn(async move { victim.batch_execute(sql).await });
    wait_until_running(&watcher, pid, sql).await;
    let asked = Instant::now();
    let done: bool = watcher.query_one("SELECT pg_terminate_backend($1, 20000)", &[&pid]).await.unwrap().get(0);
    assert!(done, "pg_terminate_backend with a timeout reports the session gone");
    eprintln!("terminated a running session in {:.1} ms", asked.elapsed().as_secs_f64() * 1000.0);
    // Gone at once: pg_terminate_backend waited for it.
    let n: i64 = watcher.query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", &[&pid]).await.unwrap().get(0);
    assert_eq!(n, 0);
    let e = tokio::time::timeout(HANG, running).await.expect("terminated").unwrap().unwrap_err();
    assert_eq!(db_error(&e), ("FATAL".into(), "57P01".into(), "terminating connection due to administrator command".into()));
    // Its update rolled back and its row lock is free.
    watcher.batch_execute("SET lock_timeout = '5s'").await.unwrap();
    watcher.batch_execute("UPDATE acct SET v = v + 1 WHERE id = 1").await.unwrap();
    let v: i32 = watcher.query_one("SELECT v FROM acct WHERE id = 1", &[]).await.unwrap().get(0);
    assert_eq!(v, 1);

    // Idle in a transaction: the client hears FATAL on its next query.
    let idle = server.connect("postgres").await;
    let pid = pid_of(&idle).await;
    idle.batch_execute("BEGIN; UPDATE acct SET v = 200 WHERE id = 2").await.unwrap();
    let done: bool = watcher.query_one("SELECT pg_terminate_backend($1)", &[&pid]).await.unwrap().get(0);
    assert!(done);
    wait_until_gone(&watcher, pid).await;
    assert!(idle.batch_execute("SELECT 1").await.is_err(), "a terminated session still answers");
    watcher.batch_execute("UPDATE acct SET v = v + 1 WHERE id = 2").await.unwrap();
    let v: i32 = watcher.query_one("SELECT v FROM acct WHERE id = 2", &[]).await.unwrap().get(0);
    assert_eq!(v, 1);

    // Terminating oneself.
    let me = server.connect("postgres").await;
    let e = me.query_one("SELECT pg_terminate_backend(pg_backend_pid())", &[]).await.unwrap_err();
    assert_eq!(db_error(&e), ("FATAL".into(), "57P01".into(), "terminating connection due to administrator command".into()));
    // Canceling oneself cancels the statement asking.
    let me = server.connect("postgres").await;
    let e = me.query_one("SELECT pg_cancel_backend(pg_backend_pid())", &[]).await.unwrap_err();
    assert_eq!(db_error(&e), ("ERROR".into(), "57014".into(), "canceling statement due to user request".into()));
    assert_eq!(me.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0), 1);
}

/// pg_terminate_backend's timeout on a session that may not end at once
/// (blocked writing rows to a client that reads none): either it ended
/// within the timeout (true), or PostgreSQL's WARNING says it did not
/// (false); either way it is gone soon after, a blocked write included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_timeout_warns_when_the_session_does_not_end_in_time() {
    let server = TestServer::start();
    let (watcher, mut notices) = connect_with_notices(&server, "postgres").await;
    let mut raw = RawClient::connect(&server);
    // Rows enough to fill every socket buffer; the client never reads them.
    let sql = "SELECT repeat('x', 10000) FROM generate_series(1, 100000000)";
    raw.send(b'Q', format!("{sql}\0").as_bytes());
    wait_until_running(&watcher, raw.pid, sql).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = Instant::now();
    let done: bool = watcher.query_one("SELECT pg_terminate_backend($1, 1)", &[&raw.pid]).await.unwrap().get(0);
    if done {
        let n: i64 = watcher.query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", &[&raw.pid]).await.unwrap().get(0);
        assert_eq!(n, 0, "pg_terminate_backend said the session was gone");
    } else {
        assert_eq!(notices.recv().await.unwrap(), format!("WARNING: backend with PID {} did not terminate within 1 millisecond", raw.pid));
    }
    wait_until_gone(&watcher, raw.pid).await;
    eprintln!("a session blocked writing to its client was gone {:.1} ms after pg_terminate_backend (within the timeout: {done})", asked.elapsed().as_secs_f64() * 1000.0);
    let done: bool = watcher.query_one("SELECT pg_terminate_backend($1, 100)", &[&raw.pid]).await.unwrap().get(0);
    assert!(!done);
    assert_eq!(notices.recv().await.unwrap(), format!("WARNING: PID {} is not a PostgreSQL backend process", raw.pid));
}

/// A client that goes away while its statement runs: the statement stops,
/// its locks are released and the session leaves pg_stat_activity, within
/// client_connection_check_interval (on by default, 1 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_whose_client_is_gone_stops_and_releases_its_locks() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    let show: String = watcher.query_one("SHOW client_connection_check_interval", &[]).await.unwrap().get(0);
    assert_eq!(show, "1s");
    let row = watcher.query_one("SELECT boot_val, unit FROM pg_settings WHERE name = 'client_connection_check_interval'", &[]).await.unwrap();
    assert_eq!((row.get::<_, String>(0), row.get::<_, String>(1)), ("1000".to_string(), "ms".to_string()));
    watcher.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0), (2, 0)").await.unwrap();

    // A runaway statement holding a row lock.
    for (what, sql) in [
        ("running", "SELECT count(*) FROM generate_series(1, 100000000000)"),
        ("sleeping", "SELECT pg_sleep(1000)"),
    ] {
        let (client, connection) = server.config("postgres").connect(NoTls).await.unwrap();
        let conn = tokio::spawn(connection);
        let pid = pid_of(&client).await;
        client.batch_execute("BEGIN; UPDATE acct SET v = v + 1 WHERE id = 1").await.unwrap();
        let query = tokio::spawn(async move {
            let _ = client.batch_execute(sql).await;
        });
        wait_until_running(&watcher, pid, sql).await;
        // The client vanishes: its socket closes under the statement.
        conn.abort();
        query.abort();
        let gone = Instant::now();
        watcher.batch_execute("SET lock_timeout = '30s'").await.unwrap();
        watcher.batch_execute("UPDATE acct SET v = v + 10 WHERE id = 1").await.unwrap();
        eprintln!("{what}: the lock of a vanished client was free after {:.1} ms", gone.elapsed().as_secs_f64() * 1000.0);
        wait_until_gone(&watcher, pid).await;
    }
    let v: i32 = watcher.query_one("SELECT v FROM acct WHERE id = 1", &[]).await.unwrap().get(0);
    assert_eq!(v, 20, "the vanished clients' updates rolled back");

    // One waiting for a lock (held by the watcher) goes as well, and its
    // own row lock with it.
    watcher.batch_execute("RESET lock_timeout; BEGIN; UPDATE acct SET v = v WHERE id = 1").await.unwrap();
    let (client, connection) = server.config("postgres").connect(NoTls).await.unwrap();
    let conn = tokio::spawn(connection);
    let pid = pid_of(&client).await;
    client.batch_execute("BEGIN; UPDATE acct SET v = 99 WHERE id = 2").await.unwrap();
    let sql = "UPDATE acct SET v = 99 WHERE id = 1";
    let query = tokio::spawn(async move {
        let _ = client.batch_execute(sql).await;
    });
    wait_until_running(&watcher, pid, sql).await;
    conn.abort();
    query.abort();
    wait_until_gone(&watcher, pid).await;
    watcher.batch_execute("COMMIT").await.unwrap();
    let other = server.connect("postgres").await;
    other.batch_execute("SET lock_timeout = '30s'; UPDATE acct SET v = v + 1 WHERE id = 2").await.unwrap();
    let v: i32 = other.query_one("SELECT v FROM acct WHERE id = 2", &[]).await.unwrap().get(0);
    assert_eq!(v, 1);
}

/// idle_in_transaction_session_timeout ends a session left idle in a
/// transaction (FATAL 25P03), releasing its locks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_in_transaction_timeout_ends_the_session() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0)").await.unwrap();
    let mut raw = RawClient::connect(&server);
    raw.simple(b"SET idle_in_transaction_session_timeout = '300ms'");
    raw.simple(b"BEGIN");
    raw.simple(b"UPDATE acct SET v = 5 WHERE id = 1");
    // The session waits; the timeout ends it with a FATAL message.
    let (tag, body) = raw.read();
    assert_eq!(tag, b'E');
    let f = fields(&body);
    assert!(f.contains(&(b'S', "FATAL".to_string())), "{f:?}");
    assert!(f.contains(&(b'C', "25P03".to_string())), "{f:?}");
    assert!(f.contains(&(b'M', "terminating connection due to idle-in-transaction timeout".to_string())), "{f:?}");
    wait_until_gone(&watcher, raw.pid).await;
    watcher.batch_execute("SET lock_timeout = '30s'; UPDATE acct SET v = v + 1 WHERE id = 1").await.unwrap();
    let v: i32 = watcher.query_one("SELECT v FROM acct WHERE id = 1", &[]).await.unwrap().get(0);
    assert_eq!(v, 1);
}

/// pg_stat_activity shows a running statement's text, state and what it
/// waits for, under the pid that pg_backend_pid() reports and
/// pg_cancel_backend accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_stat_activity_shows_what_runs_under_the_pid_to_cancel() {
    let server = TestServer::start();
    let watcher = server.connect("postgres").await;
    watcher.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0); CREATE TABLE locked (x int)").await.unwrap();
    let holder = server.connect("postgres").await;
    let holder_pid = pid_of(&holder).await;
    holder.batch_execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1; LOCK TABLE locked IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let waits = |r: &tokio_postgres::Row| (r.get::<_, Option<String>>(0), r.get::<_, Option<String>>(1), r.get::<_, Option<String>>(2));
    let some = |a: &str, b: &str, c: &str| (Some(a.to_string()), Some(b.to_string()), Some(c.to_string()));
    // (The client has its answer just before the session goes idle.)
    let deadline = Instant::now() + HANG;
    let idle = loop {
        let row = watcher.query_one("SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE pid = $1", &[&holder_pid]).await.unwrap();
        if waits(&row).0.as_deref() != Some("active") || Instant::now() > deadline {
            break waits(&row);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(idle, some("idle in transaction", "Client", "ClientRead"));

    let mut running = Vec::new();
    for (sql, wait_type, wait) in [
        ("SELECT pg_sleep(1000)", "Timeout", "PgSleep"),
        ("UPDATE acct SET v = 2 WHERE id = 1", "Lock", "transactionid"),
        ("BEGIN; LOCK TABLE locked IN SHARE MODE", "Lock", "relation"),
    ] {
        let c = server.connect("postgres").await;
        let pid = pid_of(&c).await;
        running.push(tokio::spawn(async move { c.batch_execute(sql).await }));
        wait_until_running(&watcher, pid, sql).await;
        let rows = watcher
            .query(
                "SELECT pid, state, wait_event_type, wait_event, query_start IS NOT NULL, xact_start <= query_start FROM pg_stat_activity WHERE query = $1",
                &[&sql],
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 1, "{sql}");
        assert_eq!(rows[0].get::<_, i32>(0), pid);
        assert_eq!(
            (rows[0].get::<_, String>(1), rows[0].get::<_, Option<String>>(2), rows[0].get::<_, Option<String>>(3)),
            ("active".to_string(), Some(wait_type.to_string()), Some(wait.to_string())),
            "{sql}"
        );
        assert!(rows[0].get::<_, bool>(4) && rows[0].get::<_, bool>(5));
        // The pid shown is the one to cancel.
        let sent: bool = watcher.query_one("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = $1", &[&sql]).await.unwrap().get(0);
        assert!(sent);
    }
    for r in running {
        assert_eq!(code(&tokio::time::timeout(HANG, r).await.unwrap().unwrap().unwrap_err()), "57014");
    }
    holder.batch_execute("COMMIT").await.unwrap();
}

// ---------------------------------------------------------------- a plain protocol client

/// A client speaking the wire protocol by hand: for what a driver hides
/// (not reading its results, the messages that follow a failed COPY).
struct RawClient {
    stream: TcpStream,
    pid: i32,
}

impl RawClient {
    fn connect(server: &TestServer) -> RawClient {
        let stream = TcpStream::connect((server.host(), server.port())).unwrap();
        stream.set_read_timeout(Some(HANG)).unwrap();
        let mut c = RawClient { stream, pid: 0 };
        let mut startup = Vec::new();
        startup.extend_from_slice(&196608i32.to_be_bytes());
        for (k, v) in [("user", common::USER), ("database", "postgres")] {
            startup.extend_from_slice(k.as_bytes());
            startup.push(0);
            startup.extend_from_slice(v.as_bytes());
            startup.push(0);
        }
        startup.push(0);
        let mut msg = ((startup.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&startup);
        c.stream.write_all(&msg).unwrap();
        loop {
            let (tag, body) = c.read();
            match tag {
                b'K' => c.pid = i32::from_be_bytes(body[..4].try_into().unwrap()),
                b'Z' => break,
                b'E' => panic!("startup failed: {:?}", fields(&body)),
                _ => {}
            }
        }
        c
    }

    fn send(&mut self, tag: u8, body: &[u8]) {
        let mut msg = vec![tag];
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.stream.write_all(&msg).unwrap();
    }

    fn read(&mut self) -> (u8, Vec<u8>) {
        let mut head = [0u8; 5];
        self.stream.read_exact(&mut head).unwrap();
        let len = i32::from_be_bytes(head[1..].try_into().unwrap()) as usize - 4;
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body).unwrap();
        (head[0], body)
    }

    /// A message if one is waiting.
    fn try_read(&mut self) -> Option<(u8, Vec<u8>)> {
        self.stream.set_nonblocking(true).unwrap();
        let mut first = [0u8; 1];
        let got = self.stream.peek(&mut first);
        self.stream.set_nonblocking(false).unwrap();
        match got {
            Ok(1) => Some(self.read()),
            _ => None,
        }
    }

    /// A simple query that must succeed, read up to ReadyForQuery.
    fn simple(&mut self, sql: &[u8]) {
        let mut body = sql.to_vec();
        body.push(0);
        self.send(b'Q', &body);
        loop {
            let (tag, body) = self.read();
            assert_ne!(tag, b'E', "{}: {:?}", String::from_utf8_lossy(sql), fields(&body));
            if tag == b'Z' {
                return;
            }
        }
    }
}

/// The fields of an ErrorResponse or NoticeResponse.
fn fields(body: &[u8]) -> Vec<(u8, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some((&t, r)) = rest.split_first() {
        if t == 0 {
            break;
        }
        let end = r.iter().position(|&b| b == 0).unwrap_or(r.len());
        out.push((t, String::from_utf8_lossy(&r[..end]).to_string()));
        rest = &r[(end + 1).min(r.len())..];
    }
    out
}
