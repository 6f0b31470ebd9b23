//! Driver smoke suites in their own languages, run against a spawned Tusk.
//!
//! - `tests/drivers/python`: psycopg 3 (text and binary formats) and
//!   SQLAlchemy Core on top of it, run by pytest;
//! - `tests/drivers/node`: node-postgres (`pg`), run by `node --test`.
//!
//! Each test here starts its own server, makes sure the suite's packages are
//! installed, runs the suite with the standard libpq environment (PGHOST,
//! PGPORT, PGUSER, PGDATABASE) pointing at the server, and fails with the
//! runner's output if the suite fails. The suites' expectations are
//! PostgreSQL 15's answers: point the same environment at a PostgreSQL 15 to
//! check them (see the header of each suite's shared file, conftest.py and
//! helpers.js).
//!
//! Installation, on first use and again whenever the pinned versions change:
//! - Python: a virtualenv outside the clone, `~/.cache/tusk/pyvenv` (or
//!   `TUSK_PYVENV`), with `pip install -r tests/drivers/python/requirements.txt`;
//! - Node: `npm ci` in `tests/drivers/node` (node_modules is git-ignored).
//!
//! A copy of the requirements file / package-lock.json kept beside the
//! installed packages says whether they are current, so later runs install
//! nothing. python3 and node/npm themselves come from `scripts/setup.sh`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TestServer;

/// How long one suite (or one install step) may run before it is killed.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

#[test]
fn python_psycopg_and_sqlalchemy() {
    let dir = common::repo_dir("tests/drivers/python");
    let python = ensure_python_venv(&dir.join("requirements.txt"));
    let server = TestServer::start();
    let mut command = Command::new(&python);
    command.args(["-m", "pytest", "-q"]).current_dir(&dir).env("PYTHONDONTWRITEBYTECODE", "1");
    run_suite("pytest", command, &server);
}

#[test]
fn node_postgres() {
    let dir = common::repo_dir("tests/drivers/node");
    ensure_node_modules(&dir);
    let server = TestServer::start();
    let mut command = Command::new("node");
    command.arg("--test").current_dir(&dir);
    run_suite("node --test", command, &server);
}

/// Runs a suite against `server`, panicking with its output if it fails.
fn run_suite(name: &str, mut command: Command, server: &TestServer) {
    // Only the connection settings given here: none of the caller's PG*
    // variables (a PGOPTIONS or PGTZ would change the answers).
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PG") {
            command.env_remove(&key);
        }
    }
    command
        .env("PGHOST", server.host())
        .env("PGPORT", server.port().to_string())
        .env("PGUSER", common::USER)
        .env("PGDATABASE", common::DEFAULT_DATABASE);
    let started = Instant::now();
    let (ok, output) = run_logged(command);
    if !ok {
        panic!(
            "the {name} driver suite failed against Tusk on port {}:\n{output}\n--- Tusk's log ---\n{}",
            server.port(),
            server.log_tail()
        );
    }
    eprintln!("{name} driver suite passed in {:.1?}:\n{}", started.elapsed(), summary(&output));
}

/// Runs `command` with stdout and stderr into one temporary file (no pipe to
/// fill up), killing it after RUN_TIMEOUT; returns (success, output).
fn run_logged(mut command: Command) -> (bool, String) {
    let log = tempfile::NamedTempFile::new().expect("a temporary file for the runner's output");
    let out = log.reopen().expect("reopen the output file");
    let err = log.reopen().expect("reopen the output file");
    let description = format!("{command:?}");
    let mut child = match command.stdin(Stdio::null()).stdout(out).stderr(err).spawn() {
        Ok(child) => child,
        Err(e) => return (false, format!("cannot run {description}: {e} (scripts/setup.sh installs python3 and node)")),
    };
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let text = fs::read_to_string(log.path()).unwrap_or_default();
    match status {
        Some(s) if s.success() => (true, text),
        Some(s) => (false, format!("$ {description}\nexited with {s}\n{text}")),
        None => (false, format!("$ {description}\nkilled after {RUN_TIMEOUT:?}\n{text}")),
    }
}

/// The runner's closing counts, and the known gaps it reported (XFAIL).
fn summary(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("XFAIL") || l.starts_with("# pass") || l.starts_with("# fail") || l.contains(" passed"))
        .collect();
    lines.join("\n")
}

/// Runs an install step, panicking with its output if it fails.
fn install_step(what: &str, command: Command) {
    let (ok, output) = run_logged(command);
    assert!(ok, "{what} failed:\n{output}");
}

/// The virtualenv's python, with the pinned requirements installed.
fn ensure_python_venv(requirements: &Path) -> PathBuf {
    let venv = match std::env::var_os("TUSK_PYVENV") {
        Some(v) => PathBuf::from(v),
        None => home().join(".cache/tusk/pyvenv"),
    };
    let python = venv.join("bin/python");
    let wanted = fs::read_to_string(requirements).unwrap_or_else(|e| panic!("cannot read {}: {e}", requirements.display()));
    let stamp = venv.join("tusk-requirements.txt");
    if fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) && runs(&python) {
        return python;
    }
    if !runs(&python) {
        // Missing, or left broken by an upgraded system python.
        let _ = fs::remove_dir_all(&venv);
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        install_step("creating the Python virtualenv", create);
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "-r"]).arg(requirements);
    install_step("pip install -r tests/drivers/python/requirements.txt", pip);
    fs::write(&stamp, &wanted).expect("write the requirements stamp");
    python
}

fn runs(python: &Path) -> bool {
    Command::new(python).args(["-c", ""]).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// node_modules as package-lock.json pins it.
fn ensure_node_modules(dir: &Path) {
    let lock = fs::read_to_string(dir.join("package-lock.json")).expect("tests/drivers/node/package-lock.json");
    let stamp = dir.join("node_modules/.tusk-package-lock.json");
    if fs::read_to_string(&stamp).ok().as_deref() == Some(lock.as_str()) {
        return;
    }
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(dir);
    install_step("npm ci in tests/drivers/node", npm);
    fs::write(&stamp, &lock).expect("write the package-lock stamp");
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir)
}
