//! The `tusk` binary: `tusk serve` runs the server in the foreground;
//! `tusk stop` asks a running server to shut down (smart, fast or
//! immediate, as `pg_ctl stop -m`); `tusk reload` asks it to re-read
//! pg_hba.conf and its TLS certificate (`pg_ctl reload`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use tusk_server::{Exit, Server, ServerConfig, ShutdownMode};

#[derive(Parser)]
#[command(name = "tusk", version, about = "Tusk: a PostgreSQL-compatible database server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server in the foreground (initializing the data directory if needed).
    Serve {
        #[arg(long, default_value = "./tusk-data")]
        data_dir: PathBuf,
        #[arg(long, default_value_t = 5432)]
        port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        listen: String,
        #[arg(long, default_value_t = 100)]
        max_connections: usize,
        /// Accept TLS connections (SSLRequest) with the data directory's
        /// server.crt and server.key, as PostgreSQL's `ssl` setting; a
        /// new data directory gets a self-signed pair.
        #[arg(long, value_enum, default_value_t = Switch::On)]
        ssl: Switch,
    },
    /// Ask the server running on a data directory to re-read pg_hba.conf
    /// and its TLS certificate (SIGHUP, as `pg_ctl reload`).
    Reload {
        #[arg(long, default_value = "./tusk-data")]
        data_dir: PathBuf,
    },
    /// Ask the server running on a data directory to shut down.
    Stop {
        #[arg(long, default_value = "./tusk-data")]
        data_dir: PathBuf,
        #[arg(short, long, value_enum, default_value_t = Mode::Fast)]
        mode: Mode,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Switch {
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Smart,
    Fast,
    Immediate,
}

const PID_FILE: &str = "tusk.pid";

/// glibc gives each thread that allocates concurrently an arena of its own,
/// up to eight per core, and keeps what they free: with a thread per
/// session, a bulk load or a burst of clients leaves hundreds of megabytes
/// behind. Two arenas are enough for two cores' worth of running threads.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        // Fixed thresholds (setting them turns off glibc's adjustment,
        // which raises both after a big block is freed): the multi-megabyte
        // buffers of sorts, hash tables and results are mapped and go back
        // to the system when freed, and a heap whose top is free shrinks,
        // so memory past work_mem is returned once an operator is done.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1024 * 1024);
    }
}

fn main() {
    limit_malloc_arenas();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).format_timestamp_millis().init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { data_dir, port, listen, max_connections, ssl } => serve(data_dir, port, listen, max_connections, ssl == Switch::On),
        Command::Stop { data_dir, mode } => stop(data_dir, mode),
        Command::Reload { data_dir } => reload(data_dir),
    }
}

fn serve(data_dir: PathBuf, port: u16, listen: String, max_connections: usize, ssl: bool) {
    // The procedural languages this binary carries, before any session can call one.
    tusk_sql::procedural::register_language(tusk_plpgsql::PlPgSql::handler());
    // SIGTERM = smart, SIGINT = fast, SIGQUIT = immediate, as PostgreSQL's postmaster.
    let request = Arc::new(AtomicUsize::new(0));
    for (sig, code) in [(signal_hook::consts::SIGTERM, 1), (signal_hook::consts::SIGINT, 2), (signal_hook::consts::SIGQUIT, 3)] {
        if let Err(e) = signal_hook::flag::register_usize(sig, request.clone(), code) {
            log::error!("could not install signal handler: {e}");
            std::process::exit(1);
        }
    }
    // SIGHUP: re-read pg_hba.conf and the certificate.
    let hangup = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, hangup.clone()) {
        log::error!("could not install signal handler: {e}");
        std::process::exit(1);
    }
    let config = ServerConfig { data_dir: data_dir.clone(), listen: listen.clone(), port, max_connections, ssl };
    let server = match Server::start(config) {
        Ok(s) => s,
        Err(e) => {
            log::error!("{}", e.message);
            std::process::exit(1);
        }
    };
    let pid_path = data_dir.join(PID_FILE);
    let _ = std::fs::write(&pid_path, format!("{}\n{}\n", std::process::id(), port));
    log::info!("listening on {}:{}", listen, port);
    log::info!("database system is ready to accept connections");
    let shared = server.shared();
    let result = server.run(&|| {
        if hangup.swap(false, Ordering::SeqCst) {
            log::info!("received SIGHUP, reloading configuration files");
            shared.reload();
        }
        ShutdownMode::from_code(request.load(Ordering::SeqCst))
    });
    match result {
        Ok(Exit::Stopped) => {
            let _ = std::fs::remove_file(&pid_path);
        }
        Ok(Exit::Restart) => restart_in_place(),
        Err(e) => {
            let _ = std::fs::remove_file(&pid_path);
            log::error!("{}", e.message);
            std::process::exit(1);
        }
    }
}

/// Starts this server over in the same process (same PID, so the PID file
/// and whoever waits on the process stay right, same arguments and
/// standard streams): the storage engine is opened afresh and recovers
/// from its WAL. Every file RocksDB and the listener hold is
/// close-on-exec, so the data directory's lock and the port are free for
/// the new image.
fn restart_in_place() -> ! {
    use std::os::unix::process::CommandExt;
    log::info!("restarting the server");
    let err = std::process::Command::new("/proc/self/exe").args(std::env::args_os().skip(1)).exec();
    log::error!("could not restart the server: {err}");
    std::process::exit(1);
}

/// The server process of a data directory, from its PID file.
fn server_pid(data_dir: &std::path::Path) -> i32 {
    let pid_path = data_dir.join(PID_FILE);
    let Ok(text) = std::fs::read_to_string(&pid_path) else {
        eprintln!("tusk: no server running (no {} in {})", PID_FILE, data_dir.display());
        std::process::exit(1);
    };
    let pid: i32 = text.lines().next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    if pid <= 0 {
        eprintln!("tusk: invalid PID file {}", pid_path.display());
        std::process::exit(1);
    }
    pid
}

fn reload(data_dir: PathBuf) {
    let pid = server_pid(&data_dir);
    if !libc_signal::send(pid, libc_signal::SIGHUP) {
        eprintln!("tusk: could not send reload signal to server process {pid}");
        std::process::exit(1);
    }
    println!("server signaled");
}

fn stop(data_dir: PathBuf, mode: Mode) {
    let pid_path = data_dir.join(PID_FILE);
    let pid = server_pid(&data_dir);
    let sig = match mode {
        Mode::Smart => libc_signal::SIGTERM,
        Mode::Fast => libc_signal::SIGINT,
        Mode::Immediate => libc_signal::SIGQUIT,
    };
    if !libc_signal::send(pid, sig) {
        eprintln!("tusk: could not send stop signal to server process {pid}");
        std::process::exit(1);
    }
    // Wait for the server to remove its PID file.
    for _ in 0..600 {
        if !pid_path.exists() || !libc_signal::alive(pid) {
            println!("server stopped");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!("tusk: server does not shut down");
    std::process::exit(1);
}

/// Sending signals without a libc dependency: through the kill(1) utility.
mod libc_signal {
    pub const SIGTERM: &str = "TERM";
    pub const SIGINT: &str = "INT";
    pub const SIGQUIT: &str = "QUIT";
    pub const SIGHUP: &str = "HUP";

    pub fn send(pid: i32, sig: &str) -> bool {
        std::process::Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().map(|s| s.success()).unwrap_or(false)
    }

    pub fn alive(pid: i32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }
}
