//! Many clients: 200 concurrent connections run a mixed workload (reads,
//! writes, transactions committed and rolled back, errors inside and
//! outside transaction blocks, prepared statements, temporary tables),
//! then disconnect, some of them in the middle of a transaction.
//! Afterwards the server must hold what it held before: the same sockets,
//! the same other file descriptors, the same threads; file descriptors on
//! the data directory only for RocksDB files that exist.
//!
//! The workload runs twice; the second round must not raise the resident
//! set much above the first (a per-session leak would grow it by 200
//! times the leak each round), while allocator caches make the first
//! round's growth no leak by itself.
//!
//! `TUSK_MANY_CLIENTS_SECS` sets each round's length (default 3 s); the
//! long form is e.g. `TUSK_MANY_CLIENTS_SECS=180`. The figures are printed
//! (run with `--nocapture`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestServer;

const CLIENTS: usize = 200;
const ACCOUNTS: i32 = 1000;

/// The server's process id, found by its data directory on the command line.
fn server_pid(data_dir: &Path) -> u32 {
    let wanted = data_dir.to_string_lossy().into_owned();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(entry) = entry else { continue };
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmdline.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        if args.iter().any(|a| a == "serve") && args.iter().any(|a| *a == wanted) {
            return pid;
        }
    }
    panic!("no server process for {wanted}");
}

/// What the server process holds.
#[derive(Clone, Debug)]
struct Usage {
    sockets: usize,
    /// Descriptors on files in the data directory, by target.
    data_files: Vec<String>,
    /// Every other descriptor, by kind (pipes, the log, /dev/null, epoll...).
    other: BTreeMap<String, usize>,
    threads: usize,
    rss_kb: u64,
}

impl Usage {
    fn fds(&self) -> usize {
        self.sockets + self.data_files.len() + self.other.values().sum::<usize>()
    }
}

fn usage(pid: u32, data_dir: &Path) -> Usage {
    let data_dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let mut u = Usage { sockets: 0, data_files: Vec::new(), other: BTreeMap::new(), threads: 0, rss_kb: 0 };
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the server's descriptors") {
        let Ok(entry) = entry else { continue };
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        let target = target.to_string_lossy().into_owned();
        if target.starts_with("socket:") {
            u.sockets += 1;
        } else if Path::new(&target).starts_with(&data_dir) {
            u.data_files.push(target);
        } else {
            // Kinds, not instances: "pipe:[123]" and "pipe:[456]" are both pipes.
            let kind = target.split(":[").next().unwrap_or(&target).to_string();
            *u.other.entry(kind).or_default() += 1;
        }
    }
    u.data_files.sort();
    u.threads = std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.count()).unwrap_or(0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    u.rss_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    u
}

/// Waits until the server holds no more sockets and threads than
/// `target` (all sessions ended: a session closes its socket, then its
/// thread exits), or gives up after a generous while; returns what it
/// holds then.
fn settle(pid: u32, data_dir: &Path, target: &Usage) -> Usage {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let u = usage(pid, data_dir);
        if (u.sockets <= target.sockets && u.threads <= target.threads) || Instant::now() > deadline {
            return u;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What an idle server holds: once only the listening socket is left,
/// the thread count of the last session has to settle too.
fn idle(pid: u32, data_dir: &Path) -> Usage {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stable = 0;
    let mut last = usage(pid, data_dir);
    while stable < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        let u = usage(pid, data_dir);
        stable = if u.sockets == 1 && u.threads == last.threads { stable + 1 } else { 0 };
        last = u;
    }
    last
}

/// The files and directories under `dir`, itself included.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![std::fs::canonicalize(dir).unwrap_or(dir.to_path_buf())];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_in(&p));
            } else {
                out.push(std::fs::canonicalize(&p).unwrap_or(p));
            }
        }
    }
    out
}

#[derive(Default)]
struct Counts {
    statements: AtomicU64,
    expected_errors: AtomicU64,
}

/// One client's mixed workload until `until`; returns the first
/// unexpected error.
async fn client(server: Arc<TestServer>, id: usize, until: Instant, counts: Arc<Counts>) -> Result<(), String> {
    let (mut c, connection) = server.config("postgres").connect(tokio_postgres::NoTls).await.map_err(|e| format!("connect: {e}"))?;
    let driver = tokio::spawn(connection);
    let fail = |what: &str, e: tokio_postgres::Error| format!("client {id}: {what}: {e}");
    let expect_error = |what: &str, r: Result<u64, tokio_postgres::Error>, code: &str| -> Result<(), String> {
        match r {
            Err(e) if e.code().map(|c| c.code()) == Some(code) => {
                counts.expected_errors.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(format!("client {id}: {what}: {e}")),
            Ok(_) => Err(format!("client {id}: {what} succeeded")),
        }
    };
    let get_balance = c.prepare("SELECT balance FROM accounts WHERE id = $1").await.map_err(|e| fail("prepare", e))?;
    let add = c.prepare("UPDATE accounts SET balance = balance + $2 WHERE id = $1").await.map_err(|e| fail("prepare", e))?;
    c.batch_execute("CREATE TEMP TABLE scratch (k int PRIMARY KEY, v text)").await.map_err(|e| fail("temp table", e))?;
    let mut n: i64 = 0;
    while Instant::now() < until {
        n += 1;
        let account = ((id as i32) * 7 + n as i32) % ACCOUNTS + 1;
        match n % 10 {
            0 => {
                c.query_one(&get_balance, &[&account]).await.map_err(|e| fail("prepared read", e))?;
            }
            1 => {
                c.execute(&add, &[&account, &1i64]).await.map_err(|e| fail("prepared write", e))?;
            }
            2 => {
                let t = c.transaction().await.map_err(|e| fail("begin", e))?;
                t.execute(&add, &[&account, &-1i64]).await.map_err(|e| fail("update in a transaction", e))?;
                t.execute("INSERT INTO history (account, delta) VALUES ($1, -1)", &[&account]).await.map_err(|e| fail("insert", e))?;
                t.commit().await.map_err(|e| fail("commit", e))?;
            }
            3 => {
                // Rolled back: the insert leaves nothing behind.
                let t = c.transaction().await.map_err(|e| fail("begin", e))?;
                t.execute("INSERT INTO history (account, delta) VALUES ($1, 1000)", &[&account]).await.map_err(|e| fail("insert", e))?;
                t.rollback().await.map_err(|e| fail("rollback", e))?;
            }
            4 => expect_error("division by zero", c.execute("SELECT 1 / (id - id) FROM accounts WHERE id = $1", &[&account]).await, "22012")?,
            5 => expect_error("duplicate key", c.execute("INSERT INTO accounts VALUES ($1, 0)", &[&account]).await, "23505")?,
            6 => {
                // An error inside a block: the block fails until ROLLBACK.
                c.batch_execute("BEGIN").await.map_err(|e| fail("begin", e))?;
                expect_error("syntax error", c.execute("SELEC 1", &[]).await, "42601")?;
                expect_error("failed block", c.execute("SELECT 1", &[]).await, "25P02")?;
                c.batch_execute("ROLLBACK").await.map_err(|e| fail("rollback", e))?;
            }
            7 => {
                c.execute("INSERT INTO scratch VALUES ($1, repeat('x', 100)) ON CONFLICT (k) DO UPDATE SET v = excluded.v", &[&(n as i32 % 50)])
                    .await
                    .map_err(|e| fail("temp insert", e))?;
                c.simple_query("SELECT count(*), max(length(v)) FROM scratch").await.map_err(|e| fail("temp read", e))?;
            }
            8 => {
                let rows = c
                    .simple_query(&format!("SELECT id, balance FROM accounts WHERE id BETWEEN {account} AND {account} + 20 ORDER BY id"))
                    .await
                    .map_err(|e| fail("simple read", e))?;
                if rows.is_empty() {
                    return Err(format!("client {id}: no rows"));
                }
            }
            _ => {
                let s = c.prepare("SELECT count(*) FROM history WHERE account = $1").await.map_err(|e| fail("prepare", e))?;
                c.query_one(&s, &[&account]).await.map_err(|e| fail("count", e))?;
            }
        }
        counts.statements.fetch_add(1, Ordering::Relaxed);
    }
    // Every third client leaves with a transaction open and rows locked:
    // the server must roll it back and free the session.
    if id % 3 == 0 {
        c.batch_execute("BEGIN; UPDATE accounts SET balance = balance WHERE id = 1; INSERT INTO scratch VALUES (-1, 'x')")
            .await
            .map_err(|e| fail("open transaction", e))?;
    }
    drop(c);
    let _ = driver.await;
    Ok(())
}

async fn round(server: &Arc<TestServer>, pid: u32, seconds: u64) -> (Usage, u64, u64) {
    let counts = Arc::new(Counts::default());
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> =
        (0..CLIENTS).map(|id| tokio::spawn(client(server.clone(), id, until, counts.clone()))).collect();
    // While the clients run, the server holds a socket for each of them.
    let mut during = usage(pid, server.data_dir());
    while during.sockets <= CLIENTS && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
        during = usage(pid, server.data_dir());
    }
    let mut errors = Vec::new();
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("client task: {e}")),
        }
    }
    assert!(errors.is_empty(), "{} client(s) failed, the first: {}\n{}", errors.len(), errors[0], server.log_tail());
    (during, counts.statements.load(Ordering::Relaxed), counts.expected_errors.load(Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_leave_no_leaked_descriptors_threads_or_memory() {
    let seconds: u64 = std::env::var("TUSK_MANY_CLIENTS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let rounds: usize = std::env::var("TUSK_MANY_CLIENTS_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2).max(2);
    let server = Arc::new(TestServer::builder().args(["--max-connections", "250"]).start());
    let data_dir = server.data_dir().to_path_buf();
    let pid = server_pid(&data_dir);
    {
        let c = server.connect("postgres").await;
        c.batch_execute(&format!(
            "CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL);
             INSERT INTO accounts SELECT g, 0 FROM generate_series(1, {ACCOUNTS}) g;
             CREATE TABLE history (id serial PRIMARY KEY, account int NOT NULL, delta bigint NOT NULL);
             CREATE INDEX ON history (account)"
        ))
        .await
        .expect("setup");
    }
    // The listening socket is the one socket an idle server holds.
    let before = idle(pid, &data_dir);
    assert_eq!(before.sockets, 1, "an idle server holds only its listening socket: {before:?}");

    let report = |name: &str, u: &Usage| {
        println!(
            "{name:>10}: RSS {:>7} kB, {:>4} open files ({} sockets, {} in the data directory, other {:?}), {} threads",
            u.rss_kb,
            u.fds(),
            u.sockets,
            u.data_files.len(),
            u.other,
            u.threads
        )
    };
    report("before", &before);
    let mut afters = Vec::new();
    for r in 1..=rounds {
        let (during, statements, expected_errors) = round(&server, pid, seconds).await;
        let after = settle(pid, &data_dir, &before);
        println!("round {r}: {CLIENTS} clients for {seconds} s, {statements} statements, {expected_errors} expected errors");
        report("during", &during);
        report("after", &after);
        // The measurements see the sessions, and the workload ran.
        assert!(during.sockets > CLIENTS, "the clients were not all connected at once: {during:?}");
        assert!(statements > CLIENTS as u64 && expected_errors > 0, "the workload did not run");
        afters.push(after);
    }
    let (after_first, after) = (afters[0].clone(), afters[afters.len() - 1].clone());
    // Everything a session held is released when it ends.
    assert!(after.sockets <= before.sockets, "sockets leaked: {} before, {} after", before.sockets, after.sockets);
    for (kind, n) in &after.other {
        let had = before.other.get(kind).copied().unwrap_or(0);
        assert!(*n <= had, "descriptors leaked: {n} of kind {kind} after, {had} before");
    }
    assert!(after.threads <= before.threads, "session threads left behind: {} before, {} after", before.threads, after.threads);
    // RocksDB keeps its files open (LOCK, LOG, MANIFEST, the WAL, and up
    // to max_open_files SST files in its table cache): flushes and
    // compactions during the workload change which ones, and may leave
    // more SSTs than before; it also holds the directory itself, for
    // fsyncs. So no exact count: every descriptor on the data directory
    // must name a file that still exists, and a file only once.
    println!("data directory descriptors before: {:?}\n                            after: {:?}", before.data_files, after.data_files);
    let existing = files_in(&data_dir);
    let mut seen = std::collections::HashSet::new();
    for f in &after.data_files {
        assert!(existing.iter().any(|e| e.to_string_lossy() == *f), "a descriptor on a deleted file: {f}");
        assert!(seen.insert(f) || Path::new(f).is_dir(), "a file open twice: {f}");
    }
    // A per-session leak grows the resident set every round; allocator
    // caches (an arena per thread group) mostly fill in the first round,
    // and RocksDB's memory is bounded by its block cache (64 MB) and two
    // memtables (32 MB each). Loose: a leak of 640 kB per session would
    // pass the 128 MB that RocksDB alone might still add.
    let growth_kb = after.rss_kb.saturating_sub(after_first.rss_kb);
    assert!(growth_kb < 128 * 1024, "the second round grew the resident set by {growth_kb} kB ({} -> {})", after_first.rss_kb, after.rss_kb);

    // The data are consistent: committed transfers only.
    let c = server.connect("postgres").await;
    let row = c.query_one("SELECT count(*) FROM history WHERE delta = 1000", &[]).await.unwrap();
    let rolled_back: i64 = row.get(0);
    assert_eq!(rolled_back, 0, "rolled back inserts are visible");
}
