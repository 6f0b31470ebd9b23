//! psql script tests: each `tests/psql/<name>.sql` runs through the real
//! `psql` against Tusk, and its whole output (statements echoed, results
//! in psql's own format, errors with their DETAIL/HINT/CONTEXT, COPY data
//! in and out) must equal `tests/psql/<name>.out`, which
//! `scripts/record-psql.sh` records by running the same script the same way
//! against a throwaway PostgreSQL 15. Never edit a .out file by hand.
//!
//! This is the place for what the SQL logic tests cannot express: COPY
//! FROM STDIN data inline in a script, psql's meta-commands (`\d`,
//! `\copy`), and output formatting as users see it.
//!
//! Each script runs in a fresh database `psql_<name>` as
//! `psql -X -a -q -v ON_ERROR_STOP=0 -f <name>.sql`, with a fixed
//! environment (no PGOPTIONS, TZ or locale from the caller), stdout and
//! stderr in one stream.
//!
//! Environment: `TUSK_PSQL_RECORD=1` with `TUSK_PSQL_PG="host=... port=..."`
//! records; `TUSK_PSQL_FILES=a,b` picks scripts; `TUSK_PSQL_TARGET=host:port`
//! checks against a running server instead of spawning Tusk.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use libtest_mimic::{Arguments, Failed, Trial};

use common::TestServer;


fn scripts() -> Vec<PathBuf> {
    let only: Vec<String> = std::env::var("TUSK_PSQL_FILES")
        .ok()
        .map(|v| v.split(',').filter(|s| !s.is_empty()).map(|s| s.trim_end_matches(".sql").to_string()).collect())
        .unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::repo_dir("tests/psql"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "sql"));
    files.retain(|p| only.is_empty() || only.iter().any(|o| p.file_stem().is_some_and(|s| s == o.as_str())));
    files.sort();
    files
}

/// (host, port) of the server under test.
fn target(spawned: &OnceLock<Mutex<TestServer>>) -> (String, u16) {
    let var = if record_mode() { "TUSK_PSQL_PG" } else { "TUSK_PSQL_TARGET" };
    if let Ok(v) = std::env::var(var) {
        // "host=H port=P ..." or "H:P"
        let mut host = "127.0.0.1".to_string();
        let mut port = 5432;
        if let Some((h, p)) = v.split_once(':').filter(|_| !v.contains('=')) {
            host = h.to_string();
            port = p.parse().unwrap_or(5432);
        } else {
            for kv in v.split_whitespace() {
                match kv.split_once('=') {
                    Some(("host", h)) => host = h.to_string(),
                    Some(("port", p)) => port = p.parse().unwrap_or(5432),
                    _ => {}
                }
            }
        }
        return (host, port);
    }
    let server = spawned.get_or_init(|| Mutex::new(TestServer::start())).lock().unwrap_or_else(|e| e.into_inner());
    (server.host().to_string(), server.port())
}

fn record_mode() -> bool {
    std::env::var("TUSK_PSQL_RECORD").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn psql(host: &str, port: u16, db: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new("psql")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("PGCLIENTENCODING", "UTF8")
        .args(["-X", "-h", host, "-p", &port.to_string(), "-U", "postgres", "-d", db])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not run psql: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs one script; returns its output with the script's path made
/// independent of where the repository lives.
fn run_script(host: &str, port: u16, script: &Path) -> Result<String, String> {
    let stem = script.file_stem().and_then(|s| s.to_str()).unwrap_or("script").to_string();
    let db = format!("psql_{stem}");
    psql(host, port, "postgres", &["-q", "-c", &format!("DROP DATABASE IF EXISTS {db}")])?;
    psql(host, port, "postgres", &["-q", "-c", &format!("CREATE DATABASE {db}")])?;
    // One stream for stdout and stderr, in the order psql writes them.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = dir.path().join("out");
    let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let status = Command::new("psql")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("PGCLIENTENCODING", "UTF8")
        .current_dir(common::repo_dir("tests/psql"))
        .args(["-X", "-a", "-q", "-v", "ON_ERROR_STOP=0", "-h", host, "-p", &port.to_string(), "-U", "postgres", "-d", &db])
        .args(["-f", &format!("{stem}.sql")])
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .status()
        .map_err(|e| format!("could not run psql: {e}"))?;
    let output = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
    let _ = psql(host, port, "postgres", &["-q", "-c", &format!("DROP DATABASE IF EXISTS {db}")]);
    Ok(format!("{output}-- psql exit status: {}\n", status.code().unwrap_or(-1)))
}

fn check(script: &Path, spawned: &OnceLock<Mutex<TestServer>>) -> Result<(), Failed> {
    let (host, port) = target(spawned);
    let actual = run_script(&host, port, script)?;
    let expected_path = script.with_extension("out");
    if record_mode() {
        std::fs::write(&expected_path, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path)
        .map_err(|e| format!("{}: {e} (record it with scripts/record-psql.sh)", expected_path.display()))?;
    if expected == actual {
        return Ok(());
    }
    // A line diff, enough to see what went wrong.
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
    let from = first.saturating_sub(3);
    let mut report = format!("{}: output differs from PostgreSQL's at line {}\n--- expected (PostgreSQL 15)\n", script.display(), first + 1);
    for l in e.iter().skip(from).take(12) {
        report.push_str(&format!("  {l}\n"));
    }
    report.push_str("--- actual (Tusk)\n");
    for l in a.iter().skip(from).take(12) {
        report.push_str(&format!("  {l}\n"));
    }
    Err(report.into())
}

fn main() {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(2);
    }
    let spawned: Arc<OnceLock<Mutex<TestServer>>> = Arc::new(OnceLock::new());
    let trials = scripts()
        .into_iter()
        .map(|p| {
            let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
            let spawned = Arc::clone(&spawned);
            Trial::test(name, move || check(&p, &spawned))
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    // Kills the spawned server and deletes its data directory.
    drop(spawned);
    conclusion.exit();
}
