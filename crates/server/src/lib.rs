//! tusk-server: the network front of Tusk.
//!
//! A listener accepts TCP connections and gives each its own thread
//! running the wire protocol (`connection`): TLS when the client asks and
//! ssl is on (`tls`), authentication by the rules of pg_hba.conf (`hba`,
//! `auth`, `scram`), then the session. The backend registry knows every
//! session for cancel requests, `pg_stat_activity` and shutdown.
//!
//! Tusk writes its own protocol loop rather than using `pgwire`'s handler
//! framework: the transaction-block state machine, error recovery to Sync,
//! suspended portals, cancel keys and statement-at-a-time flushing are
//! where PostgreSQL's semantics live, and a thread per session (as
//! PostgreSQL's process per session) avoids a runtime hop per statement.

pub mod auth;
pub mod connection;
pub mod hba;
mod liveness;
mod notify_wait;
pub mod protocol;
pub mod scram;
pub mod tls;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use rand::Rng;
use tusk_sql::Cluster;
use tusk_storage::Interrupt;
use tusk_types::{PgError, PgResult};

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub data_dir: PathBuf,
    pub listen: String,
    pub port: u16,
    pub max_connections: usize,
    /// PostgreSQL's `ssl`: accept SSLRequest with the data directory's
    /// server.crt and server.key (off: answer 'N').
    pub ssl: bool,
}

/// The file of client authentication rules in the data directory.
pub const HBA_FILE: &str = "pg_hba.conf";

/// How the server is asked to stop (pg_ctl stop -m ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownMode {
    /// Wait for sessions to end.
    Smart = 1,
    /// Terminate sessions (rolling back their transactions), then stop cleanly.
    Fast = 2,
    /// Stop at once without a clean shutdown; recovery replays the WAL.
    Immediate = 3,
}

/// Ends every session (each rolls back and gets FATAL 57P01) and waits up
/// to 10 s for them to go.
fn terminate_sessions(shared: &Shared) {
    for h in shared.backends.lock().values() {
        h.terminate();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while shared.session_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How `Server::run` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Shut down as asked.
    Stopped,
    /// The storage engine needs reopening: start the server again.
    Restart,
}

/// One registered session.
pub struct BackendHandle {
    pub pid: i32,
    pub key: i32,
    pub interrupt: Arc<Interrupt>,
    pub user: String,
    pub database: String,
    pub client: Option<SocketAddr>,
    pub started: Instant,
    /// When the session began, for pg_stat_activity.backend_start.
    pub started_at: i64,
    activity: Mutex<Activity>,
    /// The client socket, so that terminating an idle session wakes its
    /// thread from the read it is blocked in, and the client connection
    /// checks can look at it.
    socket: Mutex<Option<Arc<std::net::TcpStream>>>,
    /// client_connection_check_interval of the running statement in ms;
    /// 0 while the session waits for its client or the checks are off.
    check_interval_ms: AtomicU64,
}

impl BackendHandle {
    pub fn set_socket(&self, socket: Arc<std::net::TcpStream>) {
        *self.socket.lock() = Some(socket);
    }

    /// Ends the session: its statement stops at the next interrupt check,
    /// and an idle session's blocked read returns at once.
    pub fn terminate(&self) {
        self.interrupt.terminate();
        if let Some(s) = self.socket.lock().as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Read);
        }
    }

    /// A statement starts (pg_stat_activity: active, with its text).
    pub fn set_query(&self, q: &str) {
        let now = tusk_sql::session::now_micros();
        let mut a = self.activity.lock();
        a.query.clear();
        // Clipped like track_activity_query_size, on a character boundary.
        let mut end = q.len().min(1024);
        while !q.is_char_boundary(end) {
            end -= 1;
        }
        a.query.push_str(&q[..end]);
        // A statement outside a block is its own transaction; in a block
        // the transaction began with it (or at BEGIN, see set_idle_state).
        if a.xact_start.is_none() {
            a.xact_start = Some(now);
        }
        a.state = "active";
        a.query_start = Some(now);
        a.state_change = Some(now);
    }

    /// The session waits for the client, in a transaction block or not
    /// (`failed`: one that an error aborted).
    pub fn set_idle(&self, in_transaction: bool) {
        self.set_idle_state(in_transaction, false);
    }

    pub fn set_idle_state(&self, in_transaction: bool, failed: bool) {
        let state = match (in_transaction, failed) {
            (false, _) => "idle",
            (true, false) => "idle in transaction",
            (true, true) => "idle in transaction (aborted)",
        };
        let now = tusk_sql::session::now_micros();
        let mut a = self.activity.lock();
        if a.state != state {
            a.state = state;
            a.state_change = Some(now);
        }
        if !in_transaction {
            a.xact_start = None;
        } else if a.xact_start.is_none() {
            a.xact_start = Some(now);
        }
    }

    pub fn set_application_name(&self, name: &str) {
        let mut a = self.activity.lock();
        if a.application_name != name {
            a.application_name = name.to_string();
        }
    }

    fn activity(&self) -> tusk_sql::cluster::BackendActivity {
        let a = self.activity.lock();
        tusk_sql::cluster::BackendActivity {
            pid: self.pid,
            database: self.database.clone(),
            user: self.user.clone(),
            application_name: a.application_name.clone(),
            client: self.client,
            backend_start: self.started_at,
            xact_start: a.xact_start,
            query_start: a.query_start,
            state_change: a.state_change,
            state: a.state,
            query: a.query.clone(),
            wait_event: if a.state == "active" { self.interrupt.waiting().event() } else { None },
        }
    }
}

/// What pg_stat_activity shows of a session, updated as it runs.
#[derive(Default)]
struct Activity {
    query: String,
    state: &'static str,
    application_name: String,
    xact_start: Option<i64>,
    query_start: Option<i64>,
    state_change: Option<i64>,
}

pub struct Shared {
    pub cluster: Arc<Cluster>,
    pub config: ServerConfig,
    backends: Mutex<HashMap<i32, Arc<BackendHandle>>>,
    next_pid: AtomicI32,
    shutdown: AtomicU8,
    /// pg_hba.conf as last loaded.
    hba: RwLock<Arc<hba::Hba>>,
    /// The TLS certificate and key as last loaded; None with ssl = off.
    tls: RwLock<Option<Arc<tls::TlsContext>>>,
    /// The secret mock SCRAM salts derive from.
    pub mock_auth_nonce: Vec<u8>,
}

impl Shared {
    /// The client authentication rules in force.
    pub fn hba(&self) -> Arc<hba::Hba> {
        self.hba.read().clone()
    }

    /// What accepting TLS needs, if ssl is on.
    pub fn tls(&self) -> Option<Arc<tls::TlsContext>> {
        self.tls.read().clone()
    }

    /// Re-reads pg_hba.conf and the certificate (SIGHUP). A file that does
    /// not load leaves the one in force, as PostgreSQL does.
    pub fn reload(&self) {
        let dir = &self.config.data_dir;
        match hba::Hba::load(&dir.join(HBA_FILE)) {
            Ok(h) => {
                *self.hba.write() = Arc::new(h);
                log::info!("reloaded {HBA_FILE}");
            }
            Err(e) => log::warn!("{e}; {HBA_FILE} was not reloaded"),
        }
        if self.config.ssl {
            match tls::load(dir) {
                Ok(t) => *self.tls.write() = Some(Arc::new(t)),
                Err(e) => log::warn!("{e}; the SSL configuration was not reloaded"),
            }
        }
    }

    /// Sessions logged in as `user` (for the role's CONNECTION LIMIT).
    pub fn sessions_of(&self, user: &str) -> usize {
        self.backends.lock().values().filter(|h| h.user == user).count()
    }

    fn register(&self, user: &str, database: &str, client: Option<SocketAddr>) -> Option<Arc<BackendHandle>> {
        let mut b = self.backends.lock();
        if b.len() >= self.config.max_connections {
            return None;
        }
        let pid = self.next_pid.fetch_add(1, Ordering::SeqCst);
        let h = Arc::new(BackendHandle {
            pid,
            key: rand::thread_rng().gen(),
            interrupt: Interrupt::new(),
            user: user.to_string(),
            database: database.to_string(),
            client,
            started: Instant::now(),
            started_at: tusk_sql::session::now_micros(),
            activity: Mutex::new(Activity { state: "idle", ..Default::default() }),
            socket: Mutex::new(None),
            check_interval_ms: AtomicU64::new(0),
        });
        b.insert(pid, h.clone());
        Some(h)
    }

    fn unregister(&self, pid: i32) {
        self.backends.lock().remove(&pid);
    }

    /// A CancelRequest: interrupts the session's running statement if the key matches.
    fn cancel(&self, pid: i32, key: i32) {
        if let Some(h) = self.backends.lock().get(&pid) {
            if h.key == key {
                h.interrupt.cancel();
            }
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst) != 0
    }

    pub fn session_count(&self) -> usize {
        self.backends.lock().len()
    }
}

impl tusk_sql::cluster::Backends for Shared {
    fn sessions_on(&self, database: &str) -> Vec<i32> {
        self.backends.lock().values().filter(|h| h.database == database).map(|h| h.pid).collect()
    }

    fn activity(&self) -> Vec<tusk_sql::cluster::BackendActivity> {
        let mut all: Vec<_> = self.backends.lock().values().map(|h| h.activity()).collect();
        all.sort_by_key(|a| a.backend_start);
        all
    }

    fn terminate(&self, pid: i32) -> bool {
        match self.backends.lock().get(&pid) {
            Some(h) => {
                h.terminate();
                true
            }
            None => false,
        }
    }

    fn cancel(&self, pid: i32) -> bool {
        match self.backends.lock().get(&pid) {
            Some(h) => {
                h.interrupt.cancel();
                true
            }
            None => false,
        }
    }

    fn role_of(&self, pid: i32) -> Option<String> {
        self.backends.lock().get(&pid).map(|h| h.user.clone())
    }
}

/// A running server.
pub struct Server {
    shared: Arc<Shared>,
    listener: TcpListener,
}

impl Server {
    /// Opens the data directory and binds the listening socket.
    pub fn start(config: ServerConfig) -> PgResult<Server> {
        let cluster = Cluster::open(&config.data_dir)?;
        let (hba, tls) = init_auth_files(&config)?;
        let mock_auth_nonce = tusk_sql::catalog::store::mock_auth_nonce(&cluster.engine)?;
        let addr = format!("{}:{}", config.listen, config.port);
        let listener = TcpListener::bind(&addr).map_err(|e| {
            PgError::fatal(tusk_types::sqlstate::CONNECTION_EXCEPTION, format!("could not bind to {addr}: {e}"))
        })?;
        listener.set_nonblocking(true).map_err(|e| PgError::internal(e.to_string()))?;
        let shared = Arc::new(Shared {
            cluster,
            config,
            backends: Mutex::new(HashMap::new()),
            next_pid: AtomicI32::new(std::process::id() as i32 * 16 % 1_000_000 + 1000),
            shutdown: AtomicU8::new(0),
            hba: RwLock::new(Arc::new(hba)),
            tls: RwLock::new(tls.map(Arc::new)),
            mock_auth_nonce,
        });
        let weak = Arc::downgrade(&shared);
        let weak: std::sync::Weak<dyn tusk_sql::cluster::Backends> = weak;
        shared.cluster.set_backends(weak);
        liveness::start(&shared);
        Ok(Server { shared, listener })
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Accepts connections until `stop` reports a shutdown mode, then shuts down that way.
    pub fn run(self, stop: &dyn Fn() -> Option<ShutdownMode>) -> PgResult<Exit> {
        let mut storage_checked = Instant::now();
        let mode = loop {
            if let Some(m) = stop() {
                break m;
            }
            if storage_checked.elapsed() >= Duration::from_secs(1) {
                storage_checked = Instant::now();
                if self.shared.cluster.engine.stuck_after_disk_full() {
                    return self.restart_after_storage_failure();
                }
            }
            self.accept_one();
        };
        self.shutdown(mode, stop).map(|()| Exit::Stopped)
    }

    /// The storage engine stopped writing for good (see
    /// `Engine::stuck_after_disk_full`) and only reopening it cures that:
    /// as PostgreSQL's postmaster does after a PANIC, end every session and
    /// start over, recovering from the WAL (every commit acknowledged was
    /// synced to it). The caller re-executes the server.
    fn restart_after_storage_failure(self) -> PgResult<Exit> {
        log::error!("storage: writes stay stopped after the disk was full although space is free again; terminating all sessions and restarting");
        drop(self.listener);
        self.shared.shutdown.store(ShutdownMode::Fast as u8, Ordering::SeqCst);
        terminate_sessions(&self.shared);
        // No flush: the engine refuses writes; recovery replays the WAL.
        Ok(Exit::Restart)
    }

    /// Accepts one connection (waiting up to 50 ms for it) and serves it on
    /// a thread of its own.
    fn accept_one(&self) {
        match self.listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let shared = self.shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("tusk-session".into())
                    // Deep statements recurse deeply (parse tree decoding,
                    // analysis, evaluation; see parser::MAX_TREE_DEPTH);
                    // untouched stack costs only address space.
                    .stack_size(64 << 20)
                    .spawn(move || connection::serve(shared, stream));
                if let Err(e) = spawned {
                    log::error!("could not start a session thread: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait_readable(&self.listener, Duration::from_millis(50)),
            Err(e) => {
                log::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    fn shutdown(self, mode: ShutdownMode, stop: &dyn Fn() -> Option<ShutdownMode>) -> PgResult<()> {
        self.shared.shutdown.store(mode as u8, Ordering::SeqCst);
        if mode == ShutdownMode::Immediate {
            // No flush and no waiting for sessions: the caller removes its
            // PID file and exits, and the next start recovers from the WAL.
            log::info!("immediate shutdown");
            return Ok(());
        }
        let mut mode = mode;
        if mode == ShutdownMode::Smart {
            log::info!("smart shutdown: waiting for {} session(s) to end", self.shared.session_count());
            // As PostgreSQL's postmaster, keep answering new connections
            // meanwhile, with FATAL 57P03 "the database system is shutting
            // down" (connection::serve checks), rather than refusing them.
            while self.shared.session_count() > 0 {
                if let Some(m) = stop() {
                    if m != ShutdownMode::Smart {
                        mode = m;
                        break;
                    }
                }
                self.accept_one();
            }
            if mode == ShutdownMode::Immediate {
                log::info!("immediate shutdown");
                return Ok(());
            }
        }
        drop(self.listener);
        if self.shared.session_count() > 0 {
            log::info!("fast shutdown: terminating {} session(s)", self.shared.session_count());
            terminate_sessions(&self.shared);
        }
        self.shared.cluster.engine.close()?;
        log::info!("database system is shut down");
        Ok(())
    }
}

/// Writes what a data directory needs for authentication and TLS when it
/// lacks it (a new one, or one made before Tusk had them): pg_hba.conf with
/// the default rules, a self-signed server.crt and server.key. Then loads
/// them; a file that does not load stops the server from starting, as
/// PostgreSQL's postmaster does.
fn init_auth_files(config: &ServerConfig) -> PgResult<(hba::Hba, Option<tls::TlsContext>)> {
    let dir = &config.data_dir;
    let fail = |m: String| PgError::fatal(tusk_types::sqlstate::CONFIG_FILE_ERROR, m);
    let hba_path = dir.join(HBA_FILE);
    if !hba_path.exists() {
        tls::write_whole(&hba_path, hba::DEFAULT_HBA.as_bytes(), 0o600).map_err(fail)?;
        log::info!("wrote the default {}", hba_path.display());
    }
    let hba = hba::Hba::load(&hba_path).map_err(|e| fail(format!("{e}; could not load {HBA_FILE}")))?;
    if tls::ensure_certificate(dir).map_err(fail)? {
        log::info!("generated a self-signed certificate in {}", dir.join(tls::CERT_FILE).display());
    }
    let tls = if config.ssl { Some(tls::load(dir).map_err(fail)?) } else { None };
    Ok((hba, tls))
}

/// Waits until a connection is pending on `listener` or `timeout` passes:
/// a new client is accepted at once, and the stop check still runs often.
fn wait_readable(listener: &TcpListener, timeout: Duration) {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut fd, 1, timeout.as_millis() as libc::c_int) };
    if r < 0 {
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl ShutdownMode {
    /// Decodes the value a signal handler stored (0 = none requested).
    pub fn from_code(code: usize) -> Option<ShutdownMode> {
        match code {
            1 => Some(ShutdownMode::Smart),
            2 => Some(ShutdownMode::Fast),
            3 => Some(ShutdownMode::Immediate),
            _ => None,
        }
    }
}
