//! A full disk (issue 5, "Pressure"): the statement that needs the space
//! fails with 53100 disk_full, the server stays up and keeps serving what
//! was committed, and once space comes back writes succeed again (online,
//! or after the server restarted itself when RocksDB cannot resume; see
//! step 5); a restart afterwards finds every committed row.
//!
//! The data directory lives on a small tmpfs mounted for the test, next to
//! a ballast file written before the server starts; deleting the ballast
//! is how space "comes back". Mounting needs root (CI runs as root); where
//! `mount` is refused the test prints why and passes without checking.
//!
//! Steps:
//! 1. mount a 40 MB tmpfs, write a 16 MB ballast file, start Tusk with its
//!    data directory on the tmpfs (RocksDB sizes its memtables to the
//!    small filesystem: 2.5 MB);
//! 2. commit 100 rows;
//! 3. fill the disk with 1 MB INSERTs until one fails: it must fail with
//!    53100, and the rows of every INSERT that succeeded must be there;
//! 4. while the disk is full: another session (and the failing one) reads
//!    the committed data, a write still fails with 53100 (never a false
//!    success), and a sort that spills (work_mem 64kB) fails with 53100
//!    because its temporary files (in the data directory) cannot grow;
//! 5. delete the ballast: writes succeed again without anyone's help, and
//!    every committed row is present. RocksDB resumes writes by itself (it
//!    checks the free space every 5 s) when a WAL append or a flush hit
//!    the full disk; when a compaction hit it first, RocksDB (as a
//!    TransactionDB) treats that as fatal until the database is reopened,
//!    so Tusk restarts itself in place (same process) and clients
//!    reconnect;
//! 6. kill the server and restart it on the same directory: everything
//!    committed is still there, and writes work.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::TestServer;
use tokio_postgres::{Client, SimpleQueryMessage};

const DISK_FULL: &str = "53100";
const TMPFS_SIZE: &str = "40m";
/// Room that comes back: enough for RocksDB to flush and compact what the
/// full disk holds (a compaction needs room for its output beside its input).
const BALLAST_BYTES: usize = 16 << 20;
/// Rows per filling INSERT, each of `FILL_ROW_BYTES`.
const FILL_ROWS: i64 = 10;
const FILL_ROW_BYTES: i64 = 96_000;

/// A tmpfs mounted for the test; unmounted on drop, even after a failure.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn mount(path: &Path, size: &str) -> Result<Tmpfs, String> {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tusk-disk-full"])
            .arg(path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!("mount -t tmpfs failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(Tmpfs { path: path.to_path_buf() })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(&self.path).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            // Something still holds it (a server that would not die):
            // detach it now; the kernel frees it when the last user goes.
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}

async fn query(c: &Client, sql: &str) -> Result<Vec<Vec<Option<String>>>, tokio_postgres::Error> {
    let msgs = c.simple_query(sql).await?;
    Ok(msgs
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect()),
            _ => None,
        })
        .collect())
}

async fn one(c: &Client, sql: &str) -> String {
    let rows = query(c, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows[0][0].clone().unwrap_or_default()
}

/// The SQLSTATE and message of a failed statement (panics on success or on
/// a lost connection).
fn db_error(sql: &str, result: Result<Vec<Vec<Option<String>>>, tokio_postgres::Error>) -> (String, String) {
    match result {
        Ok(_) => panic!("{sql}: succeeded on a full disk"),
        Err(e) => match e.as_db_error() {
            Some(db) => (db.code().code().to_string(), format!("{}{}", db.message(), db.hint().map(|h| format!(" (HINT: {h})")).unwrap_or_default())),
            None => panic!("{sql}: not a server error: {e}"),
        },
    }
}

/// What the filesystem and RocksDB say, for failure messages.
fn diagnose(data_dir: &Path) -> String {
    let df = Command::new("df").arg("-k").arg(data_dir).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let ls = Command::new("ls").arg("-la").arg(data_dir).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let log = std::fs::read_to_string(data_dir.join("LOG")).unwrap_or_default();
    let interesting: Vec<&str> = log.lines().filter(|l| l.contains("rror") || l.contains("space") || l.contains("ecover")).collect();
    let tail = interesting[interesting.len().saturating_sub(40)..].join("\n");
    format!("df:\n{df}\nls:\n{ls}\nRocksDB LOG (errors):\n{tail}")
}

fn fill_sql(batch: i64) -> String {
    let first = batch * FILL_ROWS + 1;
    format!(
        "INSERT INTO fill SELECT g, repeat(md5(g::text), {}) FROM generate_series({first}, {}) g",
        FILL_ROW_BYTES / 32,
        first + FILL_ROWS - 1
    )
}

/// Every committed row is there, with its contents.
async fn check_committed(c: &Client, base_rows: i64, fill_batches: i64) {
    assert_eq!(
        one(c, "SELECT count(*) || ' ' || sum(length(note)) || ' ' || min(id) || ' ' || max(id) FROM t").await,
        format!("{base_rows} {} 1 {base_rows}", base_rows * 40),
        "rows of t"
    );
    let n = fill_batches * FILL_ROWS;
    let expected = if n == 0 { "0 ".to_string() } else { format!("{n} {}", n * FILL_ROW_BYTES) };
    assert_eq!(
        one(c, "SELECT count(*) || ' ' || coalesce(sum(length(payload))::text, '') FROM fill").await,
        expected,
        "rows of fill"
    );
    assert_eq!(
        one(c, "SELECT count(*) FROM fill WHERE payload <> repeat(md5(id::text), 3000)").await,
        "0",
        "fill payloads intact"
    );
}

async fn insert_t(c: &Client, from: i64, to: i64) -> Result<Vec<Vec<Option<String>>>, tokio_postgres::Error> {
    query(c, &format!("INSERT INTO t SELECT g, rpad(g::text, 40, 'x') FROM generate_series({from}, {to}) g")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_full_fails_the_statement_and_recovers_online() {
    let started = Instant::now();
    let base = tempfile::Builder::new().prefix("tusk-disk-full-").tempdir().expect("temporary directory");
    let mount_point = base.path().join("mnt");
    std::fs::create_dir(&mount_point).unwrap();
    let tmpfs = match Tmpfs::mount(&mount_point, TMPFS_SIZE) {
        Ok(m) => m,
        Err(reason) => {
            eprintln!("SKIPPED disk_full: cannot mount a small filesystem ({reason}); needs root");
            return;
        }
    };
    let ballast = mount_point.join("ballast");
    std::fs::write(&ballast, vec![0x5a_u8; BALLAST_BYTES]).expect("ballast file");

    // 1-2. A server on the small disk, with committed rows.
    let mut server = TestServer::builder().data_dir(mount_point.join("data")).start();
    let c = server.connect("postgres").await;
    query(&c, "CREATE TABLE t (id int PRIMARY KEY, note text)").await.unwrap();
    query(&c, "CREATE TABLE fill (id int PRIMARY KEY, payload text)").await.unwrap();
    insert_t(&c, 1, 100).await.unwrap();

    // 3. Fill the disk until a statement fails.
    let mut batches = 0i64;
    let (code, message) = loop {
        assert!(batches < 200, "200 MB went into a {TMPFS_SIZE} filesystem without an error");
        let sql = fill_sql(batches);
        match query(&c, &sql).await {
            Ok(_) => batches += 1,
            Err(e) => break db_error(&sql, Err(e)),
        }
    };
    eprintln!("disk full after {batches} MB of INSERTs: {code} {message}");
    assert_eq!(code, DISK_FULL, "the statement that hit the full disk: {message}\n{}", server.log_tail());
    assert!(message.contains("No space left on device"), "{message}");
    assert!(message.contains("Check free disk space."), "{message}");

    // 4. The server is up and serves the committed data.
    let c2 = server.connect("postgres").await;
    check_committed(&c2, 100, batches).await;
    check_committed(&c, 100, batches).await;
    // A sort that spills cannot write its temporary files.
    query(&c2, "SET work_mem = '64kB'").await.unwrap();
    let sort = "SELECT g, md5(g::text) AS m FROM generate_series(1, 600000) g ORDER BY m";
    let (code, message) = db_error(sort, query(&c2, sort).await);
    eprintln!("spilling sort on a full disk: {code} {message}");
    assert_eq!(code, DISK_FULL, "spilling sort: {message}");
    query(&c2, "RESET work_mem").await.unwrap();
    // A write while the disk is full is refused, never acknowledged.
    // (Retried: should RocksDB have freed room, the next write fills it.)
    let mut refused = None;
    for attempt in 0..50 {
        let sql = fill_sql(batches);
        match query(&c2, &sql).await {
            Ok(_) => batches += 1,
            Err(e) => {
                refused = Some(db_error(&sql, Err(e)));
                break;
            }
        }
        assert!(attempt < 49, "writes kept succeeding on a full disk");
    }
    let (code, message) = refused.unwrap();
    assert_eq!(code, DISK_FULL, "a write on the full disk: {message}");
    // Explicit transaction: the COMMIT itself must fail, not report success.
    query(&c2, "BEGIN").await.unwrap();
    match query(&c2, &fill_sql(batches)).await {
        Ok(_) => {
            let (code, message) = db_error("COMMIT", query(&c2, "COMMIT").await);
            assert_eq!(code, DISK_FULL, "COMMIT on a full disk: {message}");
        }
        Err(e) => {
            let (code, message) = db_error("INSERT in a transaction", Err(e));
            assert_eq!(code, DISK_FULL, "{message}");
            query(&c2, "ROLLBACK").await.unwrap();
        }
    }
    check_committed(&c2, 100, batches).await;
    assert!(server.exit_status().is_none(), "the server exited on a full disk:\n{}", server.log_tail());

    // 5. Space comes back, and writes resume without anyone's help. After
    // a failed WAL append or memtable flush (RocksDB's "hard" error) its
    // SstFileManager checks the free space every 5 s and resumes: the
    // sessions carry on. When a compaction hit the full disk first, RocksDB
    // under a TransactionDB (allow_2pc) makes the error fatal until the
    // database is reopened: Tusk sees writes stay stopped with space free
    // (Engine::stuck_after_disk_full) and restarts itself in place, as
    // PostgreSQL's postmaster does after a PANIC, ending the sessions;
    // clients reconnect. Which of the two happens depends on timing; either
    // way the server process stays up, and no write is lost or falsely
    // acknowledged.
    std::fs::remove_file(&ballast).unwrap();
    let deadline = Instant::now() + Duration::from_secs(45);
    let mut c = c;
    let mut restarted = false;
    loop {
        assert!(Instant::now() < deadline, "writes did not resume within 45 s of freeing space\n{}\n{}", diagnose(server.data_dir()), server.log_tail());
        match insert_t(&c, 101, 101).await {
            Ok(_) => break,
            Err(e) if e.as_db_error().is_some_and(|db| db.code().code() == DISK_FULL) => {}
            Err(e) => {
                // The session ended: the server is restarting itself.
                let code = e.as_db_error().map(|db| db.code().code().to_string());
                assert!(
                    code.is_none() || code.as_deref().is_some_and(|c| c.starts_with("57P")),
                    "INSERT after freeing space: {e}"
                );
                restarted = true;
                if let Ok(fresh) = server.try_connect("postgres").await {
                    c = fresh;
                }
            }
        }
        assert!(server.exit_status().is_none(), "the server exited after space came back:\n{}", server.log_tail());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    if restarted {
        assert!(server.log_tail().contains("restarting the server"), "the session ended without a restart:\n{}", server.log_tail());
        eprintln!("writes resumed after Tusk restarted itself");
    } else {
        eprintln!("writes resumed online after freeing space");
    }
    let c2 = if restarted { server.connect("postgres").await } else { c2 };
    check_committed(&c2, 101, batches).await;
    insert_t(&c2, 102, 200).await.unwrap();
    check_committed(&c, 200, batches).await;
    query(&c, "SET work_mem = '64kB'").await.unwrap();
    let sorted = query(&c, "SELECT md5(g::text) FROM generate_series(1, 20000) g ORDER BY 1").await.unwrap();
    assert_eq!(sorted.len(), 20000, "a spilling sort after space came back");
    assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "a spilling sort after space came back: out of order");
    drop(c);
    drop(c2);

    // 6. Restart on the same directory: nothing committed is lost.
    server.restart().unwrap_or_else(|e| panic!("restart after the disk was full: {e}"));
    let c = server.connect("postgres").await;
    check_committed(&c, 200, batches).await;
    insert_t(&c, 201, 210).await.unwrap();
    assert_eq!(one(&c, "SELECT count(*) FROM t").await, "210");
    drop(c);
    drop(server);
    drop(tmpfs);
    eprintln!("disk_full test took {:?}", started.elapsed());
}
