//! Driver smoke suites in Java and Go, each in its language's own test
//! runner, against a spawned Tusk:
//!
//! - `tests/drivers/java`: the PostgreSQL JDBC driver (pgjdbc) with JUnit 5,
//!   run as `mvn -q -B test`;
//! - `tests/drivers/go`: pgx v5, run as `go test -count=1 ./...`.
//!
//! Each test here starts its own server and passes it to the suite through
//! the libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE); the suite's
//! output is printed when it fails. The suites hold PostgreSQL 15's answers
//! (run them by hand against a real PostgreSQL 15 with the same variables)
//! and skip, naming the gap, the few checks Tusk is known to fail.
//!
//! The first run downloads pgjdbc, JUnit and the Maven plugins into ~/.m2
//! and pgx into Go's module cache; later runs use the caches and take about
//! 15 s (Maven) and a few seconds (Go). `mvn` and `go` must be on PATH.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TestServer;

/// Long enough for a first run that downloads the dependencies.
const SUITE_TIMEOUT: Duration = Duration::from_secs(900);

/// Runs `program args` in `dir` with the server's connection variables;
/// panics with the combined output unless it exits successfully.
fn run_suite(server: &TestServer, dir: &Path, program: &str, args: &[&str]) {
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PGHOST", server.host())
        .env("PGPORT", server.port().to_string())
        .env("PGUSER", common::USER)
        .env("PGDATABASE", common::DEFAULT_DATABASE)
        .env("PGSSLMODE", "disable")
        .env_remove("PGPASSWORD")
        .env_remove("PGOPTIONS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `{program}` (is it installed and on PATH?): {e}"));
    // Read both pipes on threads so that a chatty runner cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the suite") {
            break Some(status);
        }
        if started.elapsed() > SUITE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out_thread.join().unwrap_or_default()),
        String::from_utf8_lossy(&err_thread.join().unwrap_or_default())
    );
    let command = format!("{program} {} (in {})", args.join(" "), dir.display());
    match status {
        Some(status) if status.success() => {
            eprintln!("{command}: passed in {:.1?}", started.elapsed());
        }
        Some(status) => panic!(
            "{command} failed with {status}:\n{output}\n--- Tusk's log (tail):\n{}",
            server.log_tail()
        ),
        None => panic!("{command} did not finish in {SUITE_TIMEOUT:?}:\n{output}"),
    }
}

#[test]
fn java_jdbc_suite() {
    let server = TestServer::start();
    let dir = common::repo_dir("tests/drivers/java");
    run_suite(&server, &dir, "mvn", &["-q", "-B", "-Dstyle.color=never", "test"]);
}

#[test]
fn go_pgx_suite() {
    let server = TestServer::start();
    let dir = common::repo_dir("tests/drivers/go");
    run_suite(&server, &dir, "go", &["test", "-count=1", "./..."]);
}
