//! pgbench, unmodified (PostgreSQL 15's, from the machine), against a
//! spawned Tusk: initialization in its variants, the builtin scripts in
//! every query mode, custom scripts, retries; and after every run the
//! invariant TPC-B's bookkeeping guarantees — the balances of accounts,
//! tellers and branches each sum to the deltas in the history, and the
//! history has one row per transaction pgbench reports committed.
//!
//! These tests assert behaviour only; speed is bench/pgbench.sh's business.

mod common;

use std::process::Command;

use common::TestServer;

fn pgbench_bin() -> String {
    let local = "/usr/lib/postgresql/15/bin/pgbench";
    if std::path::Path::new(local).exists() {
        local.to_string()
    } else {
        "pgbench".to_string()
    }
}

/// Runs pgbench with `args` against the server's postgres database; panics
/// with its output unless it succeeds. Returns stdout and stderr.
fn pgbench(server: &TestServer, args: &[&str]) -> String {
    let out = Command::new(pgbench_bin())
        .args(["-h", server.host(), "-p", &server.port().to_string(), "-U", "postgres"])
        .args(args)
        .arg("postgres")
        .env_remove("PGOPTIONS")
        .output()
        .expect("pgbench runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "pgbench {args:?} failed:\n{text}\n--- server log:\n{}", server.log_tail());
    text
}

/// "number of transactions actually processed: N" (N, or N/M with -t).
fn processed(output: &str) -> i64 {
    let line = output.lines().find(|l| l.starts_with("number of transactions actually processed:")).expect("a processed line");
    let n = line.split(':').nth(1).unwrap().trim().split('/').next().unwrap();
    n.parse().unwrap()
}

async fn sums(server: &TestServer) -> (i64, i64, i64, i64, i64) {
    let c = server.connect("postgres").await;
    let r = c
        .query_one(
            "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts)::int8, (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers)::int8, \
             (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches)::int8, (SELECT coalesce(sum(delta), 0) FROM pgbench_history)::int8, \
             (SELECT count(*) FROM pgbench_history)",
            &[],
        )
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))
}

/// Balances agree with the history, and the history holds `committed` rows.
async fn check_invariant(server: &TestServer, committed: i64) {
    let (a, t, b, h, n) = sums(server).await;
    assert_eq!((a, t, b), (h, h, h), "accounts, tellers and branches must each sum to the history's deltas");
    assert_eq!(n, committed, "one history row per transaction pgbench reported");
}

#[tokio::test]
async fn tpcb_like_in_every_query_mode_keeps_the_books_balanced() {
    let server = TestServer::start();
    let init = pgbench(&server, &["-i", "-s", "1", "-q"]);
    assert!(init.contains("done in"), "{init}");
    let c = server.connect("postgres").await;
    let n: i64 = c.query_one("SELECT count(*) FROM pgbench_accounts", &[]).await.unwrap().get(0);
    assert_eq!(n, 100_000);
    // The first run lets pgbench vacuum and truncate pgbench_history (the
    // balances are still all zero, so the books stay balanced); the others
    // keep the history (-n) so that it covers every run.
    let mut committed = 0;
    for (i, mode) in ["simple", "extended", "prepared"].iter().enumerate() {
        let mut args = vec!["-c", "4", "-j", "2", "-t", "150", "-M", mode];
        if i > 0 {
            args.push("-n");
        }
        let out = pgbench(&server, &args);
        committed += processed(&out);
        check_invariant(&server, committed).await;
    }
    assert_eq!(committed, 3 * 4 * 150);
    // simple-update (-N) writes history too; select-only (-S) writes nothing.
    let out = pgbench(&server, &["-N", "-n", "-c", "3", "-t", "100", "-M", "prepared"]);
    let n_before = sums(&server).await.4;
    assert_eq!(n_before, committed + processed(&out));
    let out = pgbench(&server, &["-S", "-n", "-c", "4", "-j", "2", "-t", "500", "-M", "simple"]);
    assert_eq!(processed(&out), 2000);
    assert_eq!(sums(&server).await.4, n_before);
}

#[tokio::test]
async fn initialization_steps_and_options() {
    let server = TestServer::start();
    // Server-side generation, with foreign keys; then again over it.
    pgbench(&server, &["-i", "-s", "2", "-I", "dtGvpf"]);
    pgbench(&server, &["-i", "-s", "2", "-I", "dtGvpf"]);
    let c = server.connect("postgres").await;
    let r = c.query_one("SELECT (SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers)", &[]).await.unwrap();
    assert_eq!((r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, i64>(2)), (200_000, 2, 20));
    // The foreign keys hold: a history row must name an existing account.
    let e = c.batch_execute("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 999999999, 0, now())").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("23503"));
    // Client-side COPY (with FREEZE), unlogged tables, quiet progress.
    let out = pgbench(&server, &["-i", "-s", "1", "--unlogged-tables", "-q"]);
    assert!(out.contains("done in"), "{out}");
    let out = pgbench(&server, &["-c", "2", "-t", "100"]);
    check_invariant(&server, processed(&out)).await;
}

#[tokio::test]
async fn custom_scripts_and_retries() {
    let server = TestServer::start();
    pgbench(&server, &["-i", "-s", "1", "-q"]);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("transfer.sql");
    // A money transfer between two of ten accounts, in a REPEATABLE READ
    // transaction: concurrent ones collide, fail with 40001 (or 40P01) and
    // are retried; the total must not change.
    std::fs::write(
        &script,
        "\\set a random(1, 10)\n\
         \\set b random_gaussian(1, 10, 3.0)\n\
         \\set amount random(1, 100)\n\
         BEGIN ISOLATION LEVEL REPEATABLE READ;\n\
         UPDATE pgbench_accounts SET abalance = abalance - :amount WHERE aid = :a;\n\
         UPDATE pgbench_accounts SET abalance = abalance + :amount WHERE aid = :b;\n\
         SELECT sum(abalance) FROM pgbench_accounts WHERE aid IN (:a, :b);\n\
         END;\n",
    )
    .unwrap();
    let path = script.to_str().unwrap();
    for mode in ["simple", "prepared"] {
        let out = pgbench(&server, &["-f", path, "-n", "-c", "4", "-j", "2", "-t", "100", "-M", mode, "--max-tries", "1000"]);
        assert_eq!(processed(&out), 400, "{out}");
        assert!(out.contains("number of transactions retried"), "{out}");
    }
    let c = server.connect("postgres").await;
    let total: i64 = c.query_one("SELECT sum(abalance)::int8 FROM pgbench_accounts", &[]).await.unwrap().get(0);
    assert_eq!(total, 0, "transfers move money, never make or lose it");
}
