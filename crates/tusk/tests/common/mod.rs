//! Spawning a Tusk server for integration tests.
//!
//! Every integration test that talks to Tusk through a real client starts the
//! server binary the way a user would: `tusk serve --data-dir <dir> --port
//! <port> --listen 127.0.0.1`, on a free port, over a fresh temporary data
//! directory. `TestServer` owns that process; dropping it kills the server and
//! deletes the directory, so a failing test leaves nothing behind.
//!
//! ```ignore
//! mod common;
//!
//! let server = common::TestServer::start();            // default arguments
//! let server = common::TestServer::builder()            // or with extras
//!     .arg("--some-flag").env("RUST_LOG", "debug").start();
//! let client = server.connect("postgres").await;        // tokio-postgres
//! ```
//!
//! Start-up is synchronous and safe to call from inside a tokio runtime: the
//! readiness probe (`SELECT 1`) runs on a helper thread with its own runtime.
//!
//! Environment:
//! - `TUSK_TEST_STARTUP_TIMEOUT`: seconds to wait for readiness (default 60).
//! - `TUSK_TEST_KEEP_DATA=1`: keep the temporary directory (data and
//!   `server.log`) after the test, and print where it is.

#![allow(dead_code)]

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The user and database that a fresh Tusk data directory accepts, with no
/// password, like a fresh `initdb` with trust authentication.
pub const USER: &str = "postgres";
pub const DEFAULT_DATABASE: &str = "postgres";

/// How many times start-up is retried when the server exits early, which is
/// what happens when another process grabbed the free port we picked between
/// our probe and the server's bind.
const START_ATTEMPTS: usize = 3;

/// Options for starting a server; see `TestServer::builder`.
#[derive(Clone, Debug)]
pub struct ServerBuilder {
    extra_args: Vec<String>,
    envs: Vec<(String, String)>,
    startup_timeout: Duration,
    /// Where the data directory goes instead of the temporary directory.
    data_dir: Option<PathBuf>,
}

impl ServerBuilder {
    /// Appends one argument after the standard `serve` arguments.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_args.push(arg.into());
        self
    }

    /// Appends several arguments after the standard `serve` arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.extra_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the server process.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Overrides how long to wait for the server to accept `SELECT 1`.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Puts the data directory at `path` (created if missing) instead of
    /// inside the temporary directory; the server log stays in the
    /// temporary directory. The caller owns `path`: drop leaves it alone.
    pub fn data_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(path.into());
        self
    }

    /// Starts the server and waits until it answers; panics on failure.
    pub fn start(self) -> TestServer {
        match self.try_start() {
            Ok(server) => server,
            Err(message) => panic!("{message}"),
        }
    }

    /// Starts the server and waits until it answers.
    pub fn try_start(self) -> Result<TestServer, String> {
        let root = tempfile::Builder::new()
            .prefix("tusk-test-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let data_dir = match &self.data_dir {
            Some(path) => {
                std::fs::create_dir_all(path)
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                path.clone()
            }
            None => {
                let data_dir = root.path().join("data");
                std::fs::create_dir(&data_dir)
                    .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
                data_dir
            }
        };
        let mut server = TestServer {
            child: None,
            port: 0,
            data_dir,
            log_path: root.path().join("server.log"),
            root: Some(root),
            options: self,
        };
        let mut last_error = String::new();
        for _ in 0..START_ATTEMPTS {
            server.port = free_port()?;
            match server.launch() {
                Ok(()) => return Ok(server),
                Err(LaunchError::ExitedEarly(message)) => last_error = message,
                Err(LaunchError::Fatal(message)) => return Err(message),
            }
        }
        Err(last_error)
    }
}

/// A running Tusk server over a temporary data directory.
pub struct TestServer {
    child: Option<Child>,
    port: u16,
    data_dir: PathBuf,
    log_path: PathBuf,
    /// Owns the temporary directory; deleting it is the last thing `drop` does.
    root: Option<tempfile::TempDir>,
    options: ServerBuilder,
}

enum LaunchError {
    /// The process exited before answering (perhaps the port was taken).
    ExitedEarly(String),
    /// Anything else: not worth retrying.
    Fatal(String),
}

impl TestServer {
    /// Starts a server with the standard arguments; panics on failure.
    pub fn start() -> TestServer {
        Self::builder().start()
    }

    /// Options for a server with extra arguments or environment.
    pub fn builder() -> ServerBuilder {
        let timeout = std::env::var("TUSK_TEST_STARTUP_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(60);
        ServerBuilder {
            extra_args: Vec::new(),
            envs: Vec::new(),
            startup_timeout: Duration::from_secs(timeout),
            data_dir: None,
        }
    }

    /// The path of the server binary under test.
    pub fn binary() -> &'static str {
        env!("CARGO_BIN_EXE_tusk")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where the server's stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// A libpq-style connection string for `dbname`.
    pub fn connection_string(&self, dbname: &str) -> String {
        format!("host={} port={} user={USER} dbname={dbname}", self.host(), self.port)
    }

    /// A tokio-postgres configuration for `dbname`.
    pub fn config(&self, dbname: &str) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        config
            .host(self.host())
            .port(self.port)
            .user(USER)
            .dbname(dbname)
            .connect_timeout(Duration::from_secs(10));
        config
    }

    /// Connects to `dbname`; the connection task is spawned on the current
    /// tokio runtime. Panics if the connection fails.
    pub async fn connect(&self, dbname: &str) -> tokio_postgres::Client {
        match self.try_connect(dbname).await {
            Ok(client) => client,
            Err(e) => panic!("cannot connect to Tusk on port {}: {e}\n{}", self.port, self.log_tail()),
        }
    }

    /// Connects to `dbname`; the connection task is spawned on the current
    /// tokio runtime.
    pub async fn try_connect(&self, dbname: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (client, connection) = self.config(dbname).connect(tokio_postgres::NoTls).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(client)
    }

    /// Whether the process has exited, and how (None while it runs).
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        match self.child.as_mut() {
            Some(child) => child.try_wait().ok().flatten(),
            None => None,
        }
    }

    /// Kills the server (SIGKILL: a crash, as far as the data directory can
    /// tell) and waits for it. The data directory stays until drop.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts it again on the same port and data
    /// directory: for recovery and durability tests.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        match self.launch() {
            Ok(()) => Ok(()),
            Err(LaunchError::ExitedEarly(m)) | Err(LaunchError::Fatal(m)) => Err(m),
        }
    }

    /// The last few kilobytes of the server's output, for failure messages.
    pub fn log_tail(&self) -> String {
        read_tail(&self.log_path, 8192)
    }

    fn launch(&mut self) -> Result<(), LaunchError> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .map_err(|e| LaunchError::Fatal(format!("cannot open {}: {e}", self.log_path.display())))?;
        let log_err = log
            .try_clone()
            .map_err(|e| LaunchError::Fatal(format!("cannot duplicate log file handle: {e}")))?;
        let mut command = Command::new(Self::binary());
        command
            .arg("serve")
            .arg("--data-dir")
            .arg(&self.data_dir)
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--listen")
            .arg("127.0.0.1")
            .args(&self.options.extra_args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        for (key, value) in &self.options.envs {
            command.env(key, value);
        }
        let child = command
            .spawn()
            .map_err(|e| LaunchError::Fatal(format!("cannot start {}: {e}", Self::binary())))?;
        self.child = Some(child);
        self.wait_ready()
    }

    /// Waits until a TCP connect succeeds and `SELECT 1` answers 1.
    fn wait_ready(&mut self) -> Result<(), LaunchError> {
        let deadline = Instant::now() + self.options.startup_timeout;
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let mut last_problem = String::from("no TCP connection yet");
        loop {
            if let Some(status) = self.exit_status() {
                self.child = None;
                return Err(LaunchError::ExitedEarly(format!(
                    "Tusk server ({}) exited before it was ready, with {status}; its output:\n{}",
                    Self::binary(),
                    self.log_tail()
                )));
            }
            if Instant::now() >= deadline {
                let tail = self.log_tail();
                self.kill();
                return Err(LaunchError::Fatal(format!(
                    "Tusk server was not ready after {:?} ({last_problem}); its output:\n{tail}",
                    self.options.startup_timeout
                )));
            }
            if TcpStream::connect_timeout(&address, Duration::from_millis(500)).is_ok() {
                match probe_select_1(self.config(DEFAULT_DATABASE)) {
                    Ok(()) => return Ok(()),
                    Err(problem) => last_problem = problem,
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
        if let Some(root) = self.root.take() {
            if std::env::var_os("TUSK_TEST_KEEP_DATA").is_some() {
                let path = root.keep();
                eprintln!("TUSK_TEST_KEEP_DATA: kept {}", path.display());
            }
        }
    }
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("cannot bind a probe socket: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot read the probe socket's address: {e}"))
}

/// Runs `SELECT 1` on a helper thread with its own runtime, so that start-up
/// works both from plain tests and from inside `#[tokio::test]`.
fn probe_select_1(config: tokio_postgres::Config) -> Result<(), String> {
    let probe = std::thread::spawn(move || -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async move {
            let attempt = async {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
                let driver = tokio::spawn(connection);
                let rows = client.simple_query("SELECT 1").await.map_err(|e| e.to_string())?;
                drop(client);
                let _ = driver.await;
                let answered_one = rows.iter().any(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0) == Some("1"),
                    _ => false,
                });
                if answered_one {
                    Ok(())
                } else {
                    Err("SELECT 1 did not return 1".to_string())
                }
            };
            match tokio::time::timeout(Duration::from_secs(10), attempt).await {
                Ok(result) => result,
                Err(_) => Err("SELECT 1 timed out".to_string()),
            }
        })
    });
    probe.join().unwrap_or_else(|_| Err("readiness probe panicked".to_string()))
}

fn read_tail(path: &Path, max_bytes: u64) -> String {
    let Ok(mut file) = File::open(path) else {
        return format!("(no log at {})", path.display());
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = length.saturating_sub(max_bytes);
    let _ = file.seek(SeekFrom::Start(start));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.is_empty() {
        "(no output)".to_string()
    } else if start > 0 {
        format!("[...]\n{text}")
    } else {
        text
    }
}

/// A directory of the repository, found at run time. The build directory is
/// shared between clones (CI builds a fresh clone into the same
/// CARGO_TARGET_DIR), and cargo may reuse a test binary compiled in another
/// clone, so a compile-time `env!("CARGO_MANIFEST_DIR")` could point at a
/// clone that is gone or stale; `cargo test` sets the variable at run time
/// to the clone actually under test.
#[allow(dead_code)]
pub fn repo_dir(relative: &str) -> std::path::PathBuf {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    std::path::Path::new(&manifest).join("../..").join(relative)
}
