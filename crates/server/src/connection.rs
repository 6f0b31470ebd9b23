//! One client connection: startup, then the message loop of the simple and
//! extended query protocols, with the transaction block state machine
//! (idle / in a block / failed), savepoints, prepared statements and portals.
//!
//! A connection runs on its own thread; statements run on that thread too,
//! so a long query never stalls other sessions.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use pg_query::NodeEnum;
use tusk_sql::commands::copy::{self, CopyPlan};
use tusk_sql::commands::{self, UtilityResult};
use tusk_sql::parser::{self, ParsedStatement};
use tusk_sql::plan::{OutputColumn, PlannedQuery};
use tusk_sql::session::is_stale_plan;
use tusk_sql::{QueryRun, SqlSession};
use tusk_storage::Isolation;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use crate::auth::{self, Attempt, Denied};
use crate::notify_wait::{NotifyWait, Woken};
use crate::protocol::{self, Frontend, Out, ReadError, Startup, StartupError};
use crate::tls::{self, TlsStream};
use crate::{BackendHandle, Shared};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Block {
    /// No explicit transaction block.
    Idle,
    InBlock,
    /// An error happened inside a block: only ROLLBACK (TO) is accepted.
    Failed,
}

/// A parsed (and, for queries, planned) statement.
struct Prepared {
    sql: String,
    stmt: Option<ParsedStatement>,
    param_types: Vec<SqlType>,
    plan: Option<Arc<PlannedQuery>>,
    /// Catalog the plan was made against; a different one means re-plan.
    catalog: Option<Arc<tusk_sql::catalog::DbCatalog>>,
}

struct Portal {
    prepared: Arc<Prepared>,
    params: Vec<Datum>,
    result_formats: Vec<i16>,
    run: Option<QueryRun>,
    /// Rows of a utility statement (SHOW) not yet sent.
    utility_rows: Option<(Vec<OutputColumn>, std::vec::IntoIter<Vec<Datum>>, String)>,
    sent: u64,
}

struct Savepoint {
    name: String,
    /// RocksDB savepoints belonging to this entry (released inner savepoints
    /// cannot be popped from RocksDB and are folded into the enclosing one).
    rocks: usize,
}

pub struct Connection {
    shared: Arc<Shared>,
    handle: Arc<BackendHandle>,
    sql: SqlSession,
    out: Out<Socket>,
    reader: BufReader<Socket>,
    block: Block,
    /// Several statements of one simple Query run as one implicit block.
    implicit: bool,
    /// A simple Query's statement holds its CommandComplete until its
    /// autocommit is done: a deferred constraint failing at the commit
    /// fails the statement, as in PostgreSQL (finish_xact_command runs
    /// before EndCommand).
    hold_complete: bool,
    held_complete: Option<String>,
    savepoints: Vec<Savepoint>,
    prepared: HashMap<String, Arc<Prepared>>,
    portals: HashMap<String, Portal>,
    /// After an error in the extended protocol, messages up to Sync are skipped.
    skip_until_sync: bool,
    /// The GUC_REPORT parameters as last sent in ParameterStatus, and the
    /// settings generation they were read at.
    reported: Vec<(&'static str, String)>,
    reported_generation: u64,
    /// Whether the extended-protocol messages since the last Sync began a transaction.
    extended_txn: bool,
    /// The socket's read timeout as last set (idle_in_transaction_session_timeout).
    read_timeout: Option<Duration>,
    /// Simple-protocol plans by lifted text (None: not cacheable), valid
    /// for the settings generation they were made under.
    simple_cache: HashMap<String, Option<CachedSimple>>,
    simple_cache_generation: u64,
    /// A COPY FROM STDIN lost the message boundary: the next error ends the session.
    lost_sync: bool,
    /// The role that authenticated (SET SESSION AUTHORIZATION needs it to be
    /// a superuser), whether it is one, and the settings generation the
    /// session and current users were last derived from (`sync_role`).
    login_user: String,
    login_superuser: bool,
    role_generation: u64,
    /// Wakes the idle session when a notification arrives; made at its
    /// first wait while it LISTENs.
    notify_wait: Option<NotifyWait>,
}

/// A plan for simple queries that differ only in constants: the lifted
/// statement, its plan, and the constants' parameter types.
type CachedSimple = (Arc<ParsedStatement>, Arc<PlannedQuery>, Vec<SqlType>);

/// Entries a session's simple-protocol plan cache holds before it starts over.
const SIMPLE_CACHE_ENTRIES: usize = 1024;

/// The client socket, shared by the reader, the writer and the backend
/// handle (which shuts it down to wake a blocked read): one file
/// descriptor per session, closed when the last of them goes. After an
/// accepted SSLRequest, reads and writes go through TLS.
#[derive(Clone)]
struct Socket {
    tcp: Arc<TcpStream>,
    tls: Option<TlsStream>,
}

impl Socket {
    fn plain(tcp: Arc<TcpStream>) -> Socket {
        Socket { tcp, tls: None }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.tls {
            Some(t) => t.read(buf),
            None => (&*self.tcp).read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.tls {
            Some(t) => t.write(buf),
            None => (&*self.tcp).write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.tls {
            Some(t) => t.flush(),
            None => (&*self.tcp).flush(),
        }
    }
}

/// Unregisters a session however its thread ends, a panic included: a
/// leaked registration would hold a connection slot and the socket.
struct Registration<'a> {
    shared: &'a Shared,
    pid: i32,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.shared.unregister(self.pid);
    }
}

/// PostgreSQL's authentication_timeout default.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// PostgreSQL's NAMEDATALEN - 1: longer user and database names are cut.
const MAX_NAME_BYTES: usize = 63;

fn truncate_name(mut s: String) -> String {
    if s.len() > MAX_NAME_BYTES {
        let mut at = MAX_NAME_BYTES;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
    s
}

/// Accepts one client: startup, authentication, then the message loop.
pub fn serve(shared: Arc<Shared>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok();
    // PostgreSQL's authentication_timeout: a client that does not finish
    // its startup in time is dropped, so silent connections cannot pile up.
    let _ = stream.set_read_timeout(Some(STARTUP_TIMEOUT));
    let mut socket = Socket::plain(Arc::new(stream));
    // One buffered reader from the first byte: what a client sends right
    // after its startup packet is already the session's.
    let mut reader = BufReader::with_capacity(64 * 1024, socket.clone());
    let mut out = Out::new(socket.clone());
    let fatal = |out: &mut Out<Socket>, mut e: PgError| {
        e.severity = tusk_types::Severity::Fatal;
        let _ = out.error(&e);
        let _ = out.flush();
    };
    // PostgreSQL's ProcessStartupPacket: an SSL request is accepted ('S',
    // then the TLS handshake) when ssl is on and refused ('N') otherwise, a
    // GSS request always refused, and the real packet follows; a second
    // request of the same kind is an unknown protocol version.
    let (mut ssl_done, mut gss_done) = (false, false);
    let mut tls_context = None;
    let startup = loop {
        match protocol::read_startup(&mut reader, ssl_done, gss_done) {
            Ok(Some(request @ (Startup::Ssl | Startup::GssEnc))) => {
                let ssl = matches!(request, Startup::Ssl);
                let accept = if ssl { shared.tls() } else { None };
                (ssl_done, gss_done) = (ssl, !ssl || accept.is_some());
                let answer: &[u8] = if accept.is_some() { b"S" } else { b"N" };
                if out.raw(answer).and_then(|_| out.flush()).is_err() {
                    return;
                }
                // Bytes that came with the request were sent before the
                // answer, unencrypted whatever it was (CVE-2021-23214).
                if !reader.buffer().is_empty() {
                    let what = if ssl { "SSL request" } else { "GSSAPI encryption request" };
                    return fatal(
                        &mut out,
                        PgError::fatal(sqlstate::PROTOCOL_VIOLATION, format!("received unencrypted data after {what}")).with_detail(
                            "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.",
                        ),
                    );
                }
                if let Some(ctx) = accept {
                    let conn = match tls::accept(&socket.tcp, &ctx) {
                        Ok(c) => c,
                        Err(e) => {
                            // PostgreSQL logs this and closes: the client
                            // cannot read an unencrypted error any more.
                            log::info!("could not accept SSL connection from {}: {e}", peer.map(|p| p.to_string()).unwrap_or_default());
                            return;
                        }
                    };
                    let stream = TlsStream::new(socket.tcp.clone(), conn);
                    log::debug!("SSL connection from {}: {}", peer.map(|p| p.to_string()).unwrap_or_default(), stream.describe());
                    socket = Socket { tcp: socket.tcp.clone(), tls: Some(stream) };
                    reader = BufReader::with_capacity(64 * 1024, socket.clone());
                    out = Out::new(socket.clone());
                    tls_context = Some(ctx);
                }
            }
            Ok(Some(s)) => break s,
            Ok(None) => return,
            Err(StartupError::Lost(why)) => {
                log::info!("{why} from {}", peer.map(|p| p.to_string()).unwrap_or_default());
                return;
            }
            Err(StartupError::Fatal(e)) => return fatal(&mut out, e),
            Err(StartupError::FatalV2(e)) => {
                let _ = out.error_v2(&e);
                let _ = out.flush();
                return;
            }
        }
    };
    let (version, params, protocol_options) = match startup {
        Startup::Cancel { pid, key } => {
            shared.cancel(pid, key);
            return;
        }
        Startup::Params { version, params, protocol_options } => (version, params, protocol_options),
        Startup::Ssl | Startup::GssEnc => return,
    };
    if version & 0xffff > 0 || !protocol_options.is_empty() {
        if out.negotiate_protocol_version(&protocol_options).is_err() {
            return;
        }
    }
    let get = |k: &str| params.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let Some(user) = get("user").map(truncate_name) else {
        return fatal(
            &mut out,
            PgError::fatal(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, "no PostgreSQL user name specified in startup packet"),
        );
    };
    let database = truncate_name(get("database").unwrap_or_else(|| user.clone()));
    if get("replication").map(|r| r != "false" && r != "0" && r != "off").unwrap_or(false) {
        return fatal(&mut out, PgError::fatal(sqlstate::FEATURE_NOT_SUPPORTED, "replication connections are not supported by Tusk yet"));
    }
    if shared.is_shutting_down() {
        return fatal(&mut out, PgError::fatal(sqlstate::CANNOT_CONNECT_NOW, "the database system is shutting down"));
    }
    let Some(handle) = shared.register(&user, &database, peer) else {
        return fatal(&mut out, PgError::fatal(sqlstate::TOO_MANY_CONNECTIONS, "sorry, too many clients already"));
    };
    let _registration = Registration { shared: &shared, pid: handle.pid };
    // PostgreSQL's ClientAuthentication: the pg_hba.conf line's method.
    let attempt = Attempt {
        peer,
        ssl: tls_context.is_some(),
        cert_hash: tls_context.as_ref().and_then(|c| c.cert_hash.clone()),
        user: &user,
        database: &database,
    };
    match auth::authenticate(&shared, &attempt, &mut reader, &mut out) {
        Ok(()) => {}
        Err(Denied::Fatal(e)) => {
            log::info!("authentication of user \"{user}\" from {} failed: {}", peer.map(|p| p.to_string()).unwrap_or_default(), e.message);
            return fatal(&mut out, e);
        }
        Err(Denied::Silent) => return,
    }
    // Then InitPostgres's checks of the role: it may log in, and not more
    // often than its connection limit allows.
    if let Some(role) = shared.cluster.cluster_catalog().role_by_name(&user) {
        if !role.can_login {
            return fatal(
                &mut out,
                PgError::fatal(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, format!("role \"{user}\" is not permitted to log in")),
            );
        }
        if role.connection_limit >= 0 && !role.superuser && shared.sessions_of(&user) > role.connection_limit as usize {
            return fatal(&mut out, PgError::fatal(sqlstate::TOO_MANY_CONNECTIONS, format!("too many connections for role \"{user}\"")));
        }
    }
    let mut sql = match SqlSession::new(shared.cluster.clone(), &database, &user, handle.pid) {
        Ok(s) => s,
        Err(e) => return fatal(&mut out, e),
    };
    sql.interrupt = handle.interrupt.clone();
    if shared.config.ssl {
        // SHOW ssl reports the server's setting, as PostgreSQL's GUC does.
        sql.settings.borrow_mut().set_internal("ssl", "on");
    }
    handle.set_socket(socket.tcp.clone());
    for (k, v) in &params {
        if matches!(k.as_str(), "user" | "database" | "replication") {
            continue;
        }
        if k == "options" {
            // -c name=value pairs.
            for opt in parse_options(v) {
                if let Err(e) = sql.settings.borrow_mut().set(&opt.0, &opt.1) {
                    return fatal(&mut out, e);
                }
            }
            continue;
        }
        if let Err(e) = sql.settings.borrow_mut().set_from_startup(k, v) {
            return fatal(&mut out, e);
        }
    }
    sql.settings.borrow_mut().mark_session_defaults();
    let reported = sql.settings.borrow().reported();
    let reported_generation = sql.settings.borrow().generation;
    note_application_name(&handle, &reported);
    let ok = (|| -> std::io::Result<()> {
        out.auth_ok()?;
        for (name, value) in &reported {
            out.parameter_status(name, value)?;
        }
        out.backend_key(handle.pid, handle.key)?;
        out.ready(b'I')?;
        out.flush()
    })();
    if ok.is_err() || socket.tcp.set_read_timeout(None).is_err() {
        return;
    }
    let mut conn = Connection {
        shared: shared.clone(),
        handle: handle.clone(),
        sql,
        out,
        reader,
        block: Block::Idle,
        implicit: false,
        hold_complete: false,
        held_complete: None,
        savepoints: Vec::new(),
        prepared: HashMap::new(),
        portals: HashMap::new(),
        skip_until_sync: false,
        extended_txn: false,
        reported,
        reported_generation,
        read_timeout: None,
        simple_cache: HashMap::new(),
        simple_cache_generation: 0,
        lost_sync: false,
        login_superuser: shared.cluster.cluster_catalog().role_by_name(&user).is_some_and(|r| r.superuser),
        login_user: user.clone(),
        role_generation: reported_generation,
        notify_wait: None,
    };
    conn.run();
    conn.sql.rollback();
    conn.drop_temp_objects();
    if let Some(t) = &socket.tls {
        t.close();
    }
}

/// `-c name=value` and `--name=value` items of the startup `options`.
fn parse_options(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut words = s.split_whitespace();
    while let Some(w) = words.next() {
        let item = if w == "-c" {
            words.next().unwrap_or("").to_string()
        } else if let Some(rest) = w.strip_prefix("-c") {
            rest.to_string()
        } else if let Some(rest) = w.strip_prefix("--") {
            rest.to_string()
        } else {
            continue;
        };
        if let Some((k, v)) = item.split_once('=') {
            out.push((k.replace('-', "_"), v.to_string()));
        }
    }
    out
}

impl Connection {
    /// Sends ParameterStatus for reported parameters whose value changed
    /// (by SET, RESET, a rollback...), before ReadyForQuery as PostgreSQL does.
    fn report_changed_settings(&mut self) -> std::io::Result<()> {
        self.sync_role();
        let generation = self.sql.settings.borrow().generation;
        if generation == self.reported_generation {
            return Ok(());
        }
        self.reported_generation = generation;
        let now = self.sql.settings.borrow().reported();
        note_application_name(&self.handle, &now);
        for (i, (name, value)) in now.into_iter().enumerate() {
            if self.reported.get(i).map(|(_, v)| v != &value).unwrap_or(true) {
                self.out.parameter_status(name, &value)?;
                if i < self.reported.len() {
                    self.reported[i].1 = value;
                }
            }
        }
        Ok(())
    }

    /// SET ROLE and SET SESSION AUTHORIZATION are settings (`role`,
    /// `session_authorization`), so that a rollback, SET LOCAL and RESET
    /// undo them as they undo any SET; the session and current users
    /// follow them whenever the settings change.
    fn sync_role(&mut self) {
        let generation = self.sql.settings.borrow().generation;
        if generation == self.role_generation {
            return;
        }
        self.role_generation = generation;
        let (role, session) = {
            let st = self.sql.settings.borrow();
            (st.show("role").unwrap_or_default(), st.show("session_authorization").unwrap_or_default())
        };
        // Values that did not pass check_role_change (set_config('role', ...)
        // does not) are ignored, never trusted.
        let cat = self.sql.cluster_catalog();
        let session = if !session.is_empty() && cat.role_by_name(&session).is_some() && (self.login_superuser || session == self.login_user) {
            session
        } else {
            self.login_user.clone()
        };
        // SET SESSION AUTHORIZATION ends any SET ROLE (SetSessionUserId
        // clears SetRoleIsActive): `role` reads none again.
        let role = if session != self.sql.session_user && role != "none" && !role.is_empty() {
            self.sql.settings.borrow_mut().set_internal("role", "none");
            String::from("none")
        } else {
            role
        };
        let may_become = |role: &str| match (cat.role_by_name(&session), cat.role_by_name(role)) {
            (Some(s), Some(r)) => s.superuser || cat.is_member_of_role_nosuper(s.oid, r.oid, None),
            _ => false,
        };
        let current = if role.is_empty() || role == "none" || !may_become(&role) {
            session.clone()
        } else {
            role
        };
        if current != self.sql.user || session != self.sql.session_user {
            let superuser = cat.role_by_name(&current).is_some_and(|r| r.superuser);
            self.sql.user = current;
            self.sql.session_user = session;
            self.sql.settings.borrow_mut().set_internal("is_superuser", if superuser { "on" } else { "off" });
        }
    }

    /// PostgreSQL's check hooks of `role` and `session_authorization`: the
    /// role must exist, and SET ROLE needs the session user to be a
    /// superuser or a member of the role, SET
    /// SESSION AUTHORIZATION the authenticated user to be a superuser.
    fn check_role_change(&mut self, node: &NodeEnum) -> PgResult<()> {
        let NodeEnum::VariableSetStmt(v) = node else { return Ok(()) };
        let name = v.name.to_ascii_lowercase();
        if v.kind != 1 || (name != "role" && name != "session_authorization") {
            return Ok(());
        }
        self.sync_role();
        let Some(value) = v.args.first().and_then(tusk_sql::analyzer::const_text) else { return Ok(()) };
        if name == "role" && value == "none" {
            return Ok(());
        }
        let cat = self.sql.cluster_catalog();
        let Some(role) = cat.role_by_name(&value) else {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("role \"{value}\" does not exist")));
        };
        if name == "role" {
            // is_member_of_role(GetSessionUserId(), role).
            let allowed = cat
                .role_by_name(&self.sql.session_user)
                .is_some_and(|me| me.superuser || cat.is_member_of_role_nosuper(me.oid, role.oid, None));
            if !allowed {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied to set role \"{value}\"")));
            }
        } else if !self.login_superuser && role.name != self.login_user {
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "permission denied to set session authorization"));
        }
        Ok(())
    }

    /// NotificationResponse for each notification waiting, when the
    /// session is outside any transaction (PostgreSQL delivers them only
    /// then: inside a block they wait for its end).
    fn send_notifications(&mut self) -> std::io::Result<()> {
        if self.block != Block::Idle || self.sql.in_transaction() {
            return Ok(());
        }
        let waiting = self.sql.notify.borrow().take_notifications();
        for n in waiting {
            self.out.notification(n.pid, &n.channel, &n.payload)?;
        }
        Ok(())
    }

    /// An idle session that listens waits for its client and for
    /// notifications at once, sending each notification as it arrives.
    /// It returns once the client has sent something (or the session is
    /// not idle, or not listening).
    fn wait_listening(&mut self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        loop {
            if self.block != Block::Idle || self.sql.in_transaction() || !self.sql.notify.borrow().is_listening() {
                return Ok(());
            }
            // The client's next message may be read (or decrypted) already.
            if !self.reader.buffer().is_empty() || self.reader.get_ref().tls.as_ref().is_some_and(|t| t.has_buffered_plaintext()) {
                return Ok(());
            }
            if self.notify_wait.is_none() {
                match NotifyWait::new() {
                    Ok((wait, wakeup)) => {
                        self.sql.notify.borrow_mut().set_wakeup(wakeup);
                        self.notify_wait = Some(wait);
                    }
                    Err(e) => {
                        // Notifications then wait for the next ReadyForQuery.
                        log::warn!("session {}: could not make its notification wake-up: {e}", self.handle.pid);
                        return Ok(());
                    }
                }
            }
            // What arrived before the wake-up was in place, or since the
            // last look; then sleep until more comes or the client speaks.
            self.send_notifications()?;
            self.out.flush()?;
            let client = self.reader.get_ref().tcp.as_raw_fd();
            match self.notify_wait.as_ref().map(|w| w.wait(client)) {
                Some(Ok(Woken::Notification)) => continue,
                _ => return Ok(()),
            }
        }
    }

    fn status(&self) -> u8 {
        match self.block {
            Block::Idle => b'I',
            Block::InBlock => b'T',
            Block::Failed => b'E',
        }
    }

    fn run(&mut self) {
        loop {
            // idle_in_transaction_session_timeout
            let idle_timeout = self.sql.settings.borrow().idle_in_transaction_timeout_ms;
            let timeout = if idle_timeout > 0 && self.block != Block::Idle { Some(Duration::from_millis(idle_timeout)) } else { None };
            // A syscall: only when the timeout changes.
            if timeout != self.read_timeout {
                let _ = self.reader.get_ref().tcp.set_read_timeout(timeout);
                self.read_timeout = timeout;
            }
            self.handle.set_idle_state(self.block != Block::Idle, self.block == Block::Failed);
            self.handle.watch_client(None);
            if self.wait_listening().is_err() {
                return;
            }
            let frame = match protocol::read_frame(&mut self.reader, protocol::message_limit) {
                Ok(Some(m)) => m,
                _ if self.handle.interrupt.is_terminated() => {
                    let _ = self.out.error(&PgError::fatal(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command"));
                    let _ = self.out.flush();
                    return;
                }
                Ok(None) => return,
                Err(ReadError::Timeout) => {
                    let _ = self.out.error(&PgError::fatal(
                        "25P03",
                        "terminating connection due to idle-in-transaction timeout",
                    ));
                    let _ = self.out.flush();
                    return;
                }
                Err(ReadError::UnexpectedType(t)) => {
                    // The message boundary is lost: FATAL, as PostgreSQL.
                    let _ = self.out.error(&PgError::fatal(sqlstate::PROTOCOL_VIOLATION, format!("invalid frontend message type {t}")));
                    let _ = self.out.flush();
                    return;
                }
                Err(ReadError::Lost(why)) => {
                    // PostgreSQL logs these and closes without a reply.
                    log::info!("session {}: {why}", self.handle.pid);
                    return;
                }
            };
            let tag = frame.tag;
            let extended = frame.is_extended();
            let msg = match protocol::decode(tag, frame.body) {
                Ok(m) => m,
                Err(e) => match self.malformed(tag, extended, e) {
                    Ok(()) => continue,
                    Err(_) => return,
                },
            };
            if self.handle.interrupt.is_terminated() {
                let _ = self.out.error(&PgError::fatal(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command"));
                let _ = self.out.flush();
                return;
            }
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle_message(msg)));
            match result {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) => return,
                Ok(Err(_io)) => return,
                Err(panic) => {
                    // Outside any statement (the protocol's own handling):
                    // the session's state is not known to be sound, so it ends.
                    let what = panic_message(&*panic);
                    log::error!("session {} panicked: {what}", self.handle.pid);
                    let _ = self.out.error(&PgError::fatal(sqlstate::INTERNAL_ERROR, format!("internal error: {what}")));
                    let _ = self.out.flush();
                    return;
                }
            }
            if self.handle.interrupt.is_terminated() {
                let _ = self.out.error(&PgError::fatal(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command"));
                let _ = self.out.flush();
                return;
            }
        }
    }

    /// A message whose body does not decode: an ERROR, after which the
    /// session goes on (PostgreSQL's pq_getmsg* errors). An extended-query
    /// message skips to Sync; a Query or Sync ends with ReadyForQuery.
    /// While skipping to Sync, PostgreSQL does not read bodies at all.
    fn malformed(&mut self, tag: u8, extended: bool, e: PgError) -> std::io::Result<()> {
        if tag == b'S' {
            self.skip_until_sync = false;
        }
        if self.skip_until_sync || matches!(tag, b'd' | b'c' | b'f') {
            // CopyData, CopyDone and CopyFail are ignored outside COPY.
            return Ok(());
        }
        self.fail_statement();
        self.send_error(e)?;
        if extended {
            self.skip_until_sync = true;
            return Ok(());
        }
        if self.block == Block::Idle {
            self.portals.clear();
        }
        self.report_changed_settings()?;
        self.send_notifications()?;
        self.out.ready(self.status())?;
        self.out.flush()
    }

    /// Handles one message; Ok(false) ends the connection.
    fn handle_message(&mut self, msg: Frontend) -> std::io::Result<bool> {
        if self.skip_until_sync && !matches!(msg, Frontend::Sync | Frontend::Terminate) {
            return Ok(true);
        }
        self.sync_role();
        match msg {
            Frontend::Query(q) => {
                self.simple_query(&q)?;
                self.report_changed_settings()?;
                self.send_notifications()?;
                self.out.ready(self.status())?;
                self.out.flush()?;
            }
            Frontend::Parse { name, query, param_types } => {
                let r = self.guarded(|c| c.parse_message(&name, &query, &param_types));
                self.ext_result(r, |c| c.out.msg(b'1', |_| {}))?;
            }
            Frontend::Bind { portal, statement, param_formats, params, result_formats } => {
                let r = self.guarded(|c| c.bind_message(&portal, &statement, &param_formats, params, result_formats));
                self.ext_result(r, |c| c.out.msg(b'2', |_| {}))?;
            }
            Frontend::Describe { kind, name } => {
                let r = self.guarded(|c| c.describe_message(kind, &name));
                self.ext_result(r, |_| Ok(()))?;
            }
            Frontend::Execute { portal, max_rows } => {
                let r = self.guarded(|c| c.execute_message(&portal, max_rows));
                self.ext_result(r, |_| Ok(()))?;
            }
            Frontend::Close { kind, name } => {
                if kind == b'S' {
                    self.prepared.remove(&name);
                    self.sql.prepared_statements.borrow_mut().remove(&name);
                } else {
                    self.portals.remove(&name);
                }
                self.out.msg(b'3', |_| {})?;
            }
            Frontend::Sync => {
                self.skip_until_sync = false;
                if self.block == Block::Idle && self.sql.in_transaction() {
                    // End of the implicit transaction of extended-protocol messages.
                    if let Err(e) = self.sql.commit() {
                        self.send_error(e)?;
                    }
                }
                self.extended_txn = false;
                if self.block == Block::Idle {
                    self.portals.clear();
                }
                self.report_changed_settings()?;
                self.send_notifications()?;
                self.out.ready(self.status())?;
                self.out.flush()?;
            }
            Frontend::Flush => self.out.flush()?,
            Frontend::Terminate => return Ok(false),
            Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => {
                // Outside COPY these are ignored, as PostgreSQL does.
            }
            Frontend::FunctionCall => {
                self.send_error(PgError::unsupported("the fastpath function call protocol"))?;
                self.report_changed_settings()?;
                self.send_notifications()?;
                self.out.ready(self.status())?;
                self.out.flush()?;
            }
        }
        Ok(true)
    }

    /// Completes an extended-protocol message: on error, report it, fail
    /// the transaction and skip to Sync.
    fn ext_result(&mut self, r: PgResult<()>, ok: impl FnOnce(&mut Self) -> std::io::Result<()>) -> std::io::Result<()> {
        match r {
            Ok(()) => ok(self),
            Err(e) => {
                self.fail_statement();
                self.send_error(e)?;
                self.skip_until_sync = true;
                Ok(())
            }
        }
    }

    /// The statement boundary: a panic inside `f` (a bug, never an
    /// expected outcome) fails only this statement, with XX000, as an
    /// elog(ERROR) of PostgreSQL's would; the caller then rolls the
    /// transaction back like after any error, and the session and every
    /// other one carry on. The panic is logged with the statement.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> PgResult<T>) -> PgResult<T> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(panic) => {
                let what = panic_message(&*panic);
                let statement = self.handle.activity.lock().query.clone();
                log::error!("session {}: internal error (panic) in statement: {what}; statement: {statement}", self.handle.pid);
                // Whatever the statement left half-done is undone by the
                // rollback that follows; what it held for the protocol goes.
                self.hold_complete = false;
                self.held_complete = None;
                self.sql.interrupt.end_statement();
                Err(PgError::internal(format!("internal error: {what}")))
            }
        }
    }

    /// Runs a simple Query's statement with its CommandComplete held.
    fn run_held(&mut self, f: impl FnOnce(&mut Self) -> PgResult<()>) -> PgResult<()> {
        self.hold_complete = true;
        self.held_complete = None;
        let r = self.guarded(f);
        self.hold_complete = false;
        if r.is_err() {
            self.held_complete = None;
        }
        r
    }

    fn send_held_complete(&mut self) -> std::io::Result<()> {
        match self.held_complete.take() {
            Some(tag) => self.out.command_complete(&tag),
            None => Ok(()),
        }
    }

    fn send_notices(&mut self) -> std::io::Result<()> {
        let notices: Vec<PgError> = std::mem::take(&mut *self.sql.notices.borrow_mut());
        for n in notices {
            if self.sql.settings.borrow().sends_to_client(n.severity) {
                self.out.error(&n)?;
            }
        }
        Ok(())
    }

    fn send_error(&mut self, e: PgError) -> std::io::Result<()> {
        if self.handle.interrupt.ends_session() {
            return self.end_session(e);
        }
        self.send_notices()?;
        self.out.error(&e)?;
        if self.lost_sync {
            // As PostgreSQL after an error in the middle of a message.
            self.out.error(&PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "terminating connection because protocol synchronization was lost"))?;
            self.out.flush()?;
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "protocol synchronization was lost"));
        }
        Ok(())
    }

    /// The statement failed because the session must end (PostgreSQL's
    /// ProcessInterrupts raising FATAL): a terminated session tells its
    /// client why; a client found gone is told nothing. The error ends the
    /// message loop, after which the transaction rolls back.
    fn end_session(&mut self, e: PgError) -> std::io::Result<()> {
        if self.handle.interrupt.is_terminated() {
            let _ = self.send_notices();
            let _ = self.out.error(&e);
            if e.code != sqlstate::ADMIN_SHUTDOWN {
                let _ = self.out.error(&PgError::fatal(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command"));
            }
            let _ = self.out.flush();
        }
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "the session ends"))
    }

    /// After an error: a block becomes failed, an implicit transaction rolls back.
    /// Notices the statement raised before failing stay queued: send_error
    /// delivers them ahead of the error, as PostgreSQL sends each when it
    /// is raised.
    fn fail_statement(&mut self) {
        match self.block {
            Block::InBlock => {
                self.block = Block::Failed;
                self.abort_failed_work();
            }
            Block::Failed => {}
            Block::Idle => {
                self.sql.rollback();
                self.implicit = false;
            }
        }
    }

    /// PostgreSQL aborts the (sub)transaction when a statement fails, which
    /// releases its locks immediately; waiting for the client's ROLLBACK
    /// would keep a deadlock victim's rows locked against the survivor.
    fn abort_failed_work(&mut self) {
        match self.savepoints.last_mut() {
            Some(innermost) => {
                for _ in 0..innermost.rocks {
                    let _ = self.sql.rollback_to_savepoint();
                }
                innermost.rocks = 0;
                if self.sql.savepoint().is_ok() {
                    innermost.rocks = 1;
                }
            }
            None => self.sql.abort_work(),
        }
    }

    // ---------------------------------------------------------------- simple query

    fn simple_query(&mut self, sql: &str) -> std::io::Result<()> {
        if let Some((stmt, plan, params, types)) = self.cached_simple_plan(sql) {
            self.implicit = false;
            match self.run_held(|c| c.run_statement(&stmt, sql, &params, &types, &[], Some(plan))) {
                Ok(()) => {
                    if self.block == Block::Idle && self.sql.in_transaction() {
                        if let Err(e) = self.sql.commit() {
                            self.held_complete = None;
                            self.fail_statement();
                            return self.send_error(e);
                        }
                    }
                    self.send_notices()?;
                    return self.send_held_complete();
                }
                Err(e) => {
                    self.fail_statement();
                    return self.send_error(e);
                }
            }
        }
        let scs = self.sql.settings.borrow().standard_conforming_strings;
        let stmts = match parser::parse_with(sql, scs) {
            Ok(s) => s,
            Err(e) => {
                self.fail_statement();
                return self.send_error(e);
            }
        };
        if stmts.is_empty() {
            return self.out.empty_query();
        }
        self.implicit = stmts.len() > 1;
        let n = stmts.len();
        for (i, stmt) in stmts.iter().enumerate() {
            let r = self.run_held(|c| c.run_statement(stmt, sql, &[], &[], &[], None));
            match r {
                Ok(()) => {
                    // Autocommit after each statement outside blocks (or at the
                    // end of an implicit multi-statement block).
                    if self.block == Block::Idle && self.sql.in_transaction() && (!self.implicit || i == n - 1) {
                        if let Err(e) = self.sql.commit() {
                            self.held_complete = None;
                            self.fail_statement();
                            self.send_error(e)?;
                            break;
                        }
                    }
                    self.send_notices()?;
                    self.send_held_complete()?;
                }
                Err(e) => {
                    let e = self.with_char_position(e, sql);
                    self.fail_statement();
                    self.send_error(e)?;
                    break;
                }
            }
        }
        self.implicit = false;
        Ok(())
    }

    /// The simple-protocol plan cache: a query whose text differs from an
    /// earlier one only in its constants runs the plan made for that one,
    /// with the constants as parameters (see `tusk_sql::normalize`). The
    /// entry is made the first time: the lifted text is analyzed with each
    /// constant's own type; if that fails, or leaves a type undetermined,
    /// or a constant does not convert, the query takes the ordinary path.
    /// Entries die with a catalog change (re-planned) or any SET (which may
    /// change name resolution).
    fn cached_simple_plan(&mut self, sql: &str) -> Option<(Arc<ParsedStatement>, Arc<PlannedQuery>, Vec<Datum>, Vec<SqlType>)> {
        use tusk_sql::normalize::{first_word, lift_literals, LiteralKind};
        use tusk_types::oid;
        if self.block == Block::Failed || !matches!(first_word(sql).as_str(), "select" | "insert" | "update" | "delete") {
            return None;
        }
        let (generation, scs) = {
            let s = self.sql.settings.borrow();
            (s.generation, s.standard_conforming_strings)
        };
        if !scs {
            return None;
        }
        let (text, literals) = lift_literals(sql)?;
        if generation != self.simple_cache_generation || self.simple_cache.len() >= SIMPLE_CACHE_ENTRIES {
            self.simple_cache.clear();
            self.simple_cache_generation = generation;
        }
        // A literal's type is part of the key: 1 is int4, 3000000000 int8.
        let declared: Vec<SqlType> = literals
            .iter()
            .map(|l| {
                SqlType::new(match l.kind {
                    LiteralKind::String => oid::UNKNOWN,
                    LiteralKind::Decimal => oid::NUMERIC,
                    LiteralKind::Integer if l.text.parse::<i32>().is_ok() => oid::INT4,
                    LiteralKind::Integer if l.text.parse::<i64>().is_ok() => oid::INT8,
                    LiteralKind::Integer => oid::NUMERIC,
                })
            })
            .collect();
        let mut key = text.clone();
        for t in &declared {
            key.push_str(&format!("\u{0}{}", t.oid));
        }
        let catalog = self.sql.catalog().ok()?;
        let entry = match self.simple_cache.get(&key) {
            Some(Some(e)) if e.1.catalog.upgrade().is_some_and(|c| Arc::ptr_eq(&c, &catalog)) => Some(e.clone()),
            Some(None) => return None,
            _ => None,
        };
        let (stmt, plan, types) = match entry {
            Some(e) => e,
            None => {
                let made = (|| {
                    let mut stmts = parser::parse_with(&text, true).ok()?;
                    if stmts.len() != 1 {
                        return None;
                    }
                    let mut stmt = stmts.remove(0);
                    if !matches!(stmt.node, NodeEnum::SelectStmt(_) | NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_)) {
                        return None;
                    }
                    let (plan, types) = self.sql.plan_query(&stmt, &text, &declared).ok()?;
                    if types.iter().any(|t| t.oid == oid::UNKNOWN || t.oid == 0) {
                        return None;
                    }
                    // The whole original text is the statement (pg_stat_activity).
                    stmt.location = 0;
                    stmt.len = usize::MAX / 2;
                    Some((Arc::new(stmt), plan, types))
                })();
                self.simple_cache.insert(key, made.clone());
                made?
            }
        };
        let settings = self.sql.settings.borrow();
        let mut params = Vec::with_capacity(literals.len());
        for (l, ty) in literals.iter().zip(&types) {
            params.push(tusk_sql::functions::io::parse_text(&l.text, *ty, &settings, false).ok()?);
        }
        Some((stmt, plan, params, types))
    }

    /// Error positions from the analyzer are byte offsets; PostgreSQL reports characters.
    fn with_char_position(&self, mut e: PgError, sql: &str) -> PgError {
        if let Some(p) = e.position {
            let byte = (p as usize).saturating_sub(1).min(sql.len());
            if sql.is_char_boundary(byte) {
                e.position = Some(sql[..byte].chars().count() as u32 + 1);
            }
        }
        e
    }

    /// Runs one statement in the simple protocol, sending its results.
    fn run_statement(
        &mut self,
        stmt: &ParsedStatement,
        sql: &str,
        params: &[Datum],
        param_types: &[SqlType],
        formats: &[i16],
        prepared: Option<Arc<PlannedQuery>>,
    ) -> PgResult<()> {
        self.sync_role();
        self.guard_failed(&stmt.node)?;
        match &stmt.node {
            NodeEnum::TransactionStmt(t) => return self.transaction_control(t).and_then(|tag| self.complete(&tag)),
            NodeEnum::VariableSetStmt(v) if v.kind == 4 => return self.set_transaction(v).and_then(|tag| self.complete(&tag)),
            NodeEnum::PrepareStmt(p) => return self.sql_prepare(p, sql).and_then(|_| self.complete("PREPARE")),
            NodeEnum::ExecuteStmt(e) => return self.sql_execute(e),
            NodeEnum::DeallocateStmt(d) => {
                if d.name.is_empty() {
                    self.prepared.retain(|k, _| k.is_empty());
                    self.sql.prepared_statements.borrow_mut().clear();
                } else if self.prepared.remove(&d.name).is_none() {
                    return Err(PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{}\" does not exist", d.name)));
                } else {
                    self.sql.prepared_statements.borrow_mut().remove(&d.name);
                }
                return self.complete(if d.name.is_empty() { "DEALLOCATE ALL" } else { "DEALLOCATE" });
            }
            _ => {}
        }
        if let Some(what) = commands::forbidden_in_block(&stmt.node) {
            if self.block != Block::Idle || self.implicit {
                return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, format!("{what} cannot run inside a transaction block")));
            }
        }
        self.start_statement();
        let text = parser::statement_text(sql, stmt).to_string();
        // pg_stat_activity shows the client's whole query string, as
        // PostgreSQL's exec_simple_query reports it.
        self.handle.set_query(sql);
        let result = if let NodeEnum::CopyStmt(copy) = &stmt.node {
            self.copy(copy, &text)
        } else if commands::is_utility(&stmt.node) {
            let r = self.check_role_change(&stmt.node).and_then(|_| commands::execute_utility(&mut self.sql, stmt, sql));
            self.sync_role();
            self.send_notices().map_err(io_err)?;
            match r? {
                UtilityResult { tag, rows: Some((cols, rows)) } => {
                    self.row_description(&cols, formats).map_err(io_err)?;
                    for r in &rows {
                        self.data_row(r, &cols, formats).map_err(io_err)?;
                    }
                    self.complete(&tag)
                }
                UtilityResult { tag, rows: None } => self.complete(&tag),
            }
        } else {
            let mut plan = match prepared {
                Some(p) => p,
                None => self.sql.plan_query(stmt, sql, param_types)?.0,
            };
            // DDL that committed while the statement waited for a relation
            // lock makes its plan stale: plan again (a few times at most).
            let mut attempts = 0;
            loop {
                match self.run_query(plan, params.to_vec(), formats, &stmt.node) {
                    Err(e) if is_stale_plan(&e) && attempts < 5 => {
                        attempts += 1;
                        plan = self.sql.plan_query(stmt, sql, param_types)?.0;
                    }
                    r => break r,
                }
            }
        };
        self.sql.interrupt.end_statement();
        result
    }

    /// COPY: a file COPY runs to its end inside; COPY FROM STDIN reads
    /// CopyData until CopyDone (a CopyFail or a bad row fails it, and the
    /// messages the client still sends are then ignored by the main loop);
    /// COPY TO STDOUT sends one CopyData per row.
    fn copy(&mut self, stmt: &pg_query::protobuf::CopyStmt, sql: &str) -> PgResult<()> {
        match copy::prepare(&mut self.sql, stmt, sql)? {
            CopyPlan::Done(n) => self.complete(&format!("COPY {n}")),
            CopyPlan::FromStdin(mut from) => {
                self.out.copy_response(b'G', from.column_count(), from.is_binary()).map_err(io_err)?;
                self.out.flush().map_err(io_err)?;
                if let Some(e) = from.error_before_data() {
                    return Err(e);
                }
                let mut body = Vec::new();
                loop {
                    // PostgreSQL's CopyGetData: a message type other than these
                    // or a broken frame loses protocol sync, which ends the session.
                    let tag = match protocol::read_frame_into(&mut self.reader, protocol::copy_message_limit, &mut body) {
                        Ok(Some(tag)) => tag,
                        // A shutdown or pg_terminate_backend woke the read:
                        // the session ends for that reason, not a lost client.
                        Err(_) if self.handle.interrupt.is_terminated() => {
                            self.lost_sync = true;
                            return Err(PgError::fatal(sqlstate::ADMIN_SHUTDOWN, "terminating connection due to administrator command"));
                        }
                        Ok(None) | Err(ReadError::Timeout) => {
                            self.lost_sync = true;
                            return Err(PgError::new(sqlstate::CONNECTION_FAILURE, "unexpected EOF on client connection with an open transaction"));
                        }
                        Err(ReadError::Lost(why)) => {
                            log::info!("session {}: {why}", self.handle.pid);
                            self.lost_sync = true;
                            return Err(PgError::new(sqlstate::CONNECTION_FAILURE, "unexpected EOF on client connection with an open transaction"));
                        }
                        Err(ReadError::UnexpectedType(t)) => {
                            self.lost_sync = true;
                            return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, format!("unexpected message type 0x{t:02X} during COPY from stdin")));
                        }
                    };
                    match tag {
                        b'd' => from.feed(&self.sql, &body)?,
                        // PostgreSQL reads no CopyDone body.
                        b'c' => break,
                        b'f' => {
                            if let Frontend::CopyFail(m) = protocol::decode(tag, std::mem::take(&mut body))? {
                                return Err(PgError::new(sqlstate::QUERY_CANCELED, format!("COPY from stdin failed: {m}")));
                            }
                        }
                        // Flush and Sync are ignored during copy-in, for clients
                        // that send them without noticing the COPY.
                        _ => {}
                    }
                }
                let n = from.finish(&self.sql)?;
                self.complete(&format!("COPY {n}"))
            }
            CopyPlan::ToStdout(mut to) => {
                self.out.copy_response(b'H', to.column_count(), to.is_binary()).map_err(io_err)?;
                while let Some(line) = to.next_line(&self.sql)? {
                    self.out.copy_data(&line).map_err(io_err)?;
                }
                self.out.copy_done().map_err(io_err)?;
                self.complete(&format!("COPY {}", to.rows))
            }
        }
    }

    fn guard_failed(&self, node: &NodeEnum) -> PgResult<()> {
        if self.block != Block::Failed {
            return Ok(());
        }
        let allowed = match node {
            NodeEnum::TransactionStmt(t) => matches!(t.kind, 3 | 4 | 7 | 10 | 9),
            _ => false,
        };
        if allowed {
            Ok(())
        } else {
            Err(PgError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ))
        }
    }

    /// Begins a transaction if none is open and takes the statement snapshot.
    fn start_statement(&mut self) {
        if !self.sql.in_transaction() {
            self.sql.begin(None);
        }
        self.sql.in_block.set(self.block != Block::Idle);
        self.sql.begin_statement();
        let settings = self.sql.settings.borrow();
        let st = if settings.statement_timeout_ms > 0 { Some(Duration::from_millis(settings.statement_timeout_ms)) } else { None };
        let lt = if settings.lock_timeout_ms > 0 { Some(Duration::from_millis(settings.lock_timeout_ms)) } else { None };
        let check = settings.client_connection_check_interval_ms;
        drop(settings);
        self.sql.interrupt.start_statement(st, lt);
        self.handle.watch_client((check > 0).then(|| Duration::from_millis(check)));
    }

    fn complete(&mut self, tag: &str) -> PgResult<()> {
        if self.hold_complete {
            self.held_complete = Some(tag.to_string());
            return Ok(());
        }
        self.out.command_complete(tag).map_err(io_err)
    }

    fn run_query(&mut self, plan: Arc<PlannedQuery>, params: Vec<Datum>, formats: &[i16], node: &NodeEnum) -> PgResult<()> {
        let mut run = self.sql.start_query(plan.clone(), params)?;
        let cols = run.columns.clone();
        let returns_rows = matches!(node, NodeEnum::SelectStmt(_)) || !cols.is_empty();
        if returns_rows {
            self.row_description(&cols, formats).map_err(io_err)?;
        }
        let mut count = 0u64;
        {
            let out = &mut self.out;
            let settings = self.sql.settings.borrow().clone();
            let sql = &self.sql;
            run.fetch(sql, 0, &mut |row| {
                count += 1;
                write_data_row(out, &row, &cols, formats, &settings).map_err(io_err)
            })?;
        }
        let tag = command_tag(node, count, run.rows_modified());
        self.complete(&tag)
    }

    fn row_description(&mut self, cols: &[OutputColumn], formats: &[i16]) -> std::io::Result<()> {
        write_row_description(&mut self.out, cols, formats)
    }

    fn data_row(&mut self, row: &[Datum], cols: &[OutputColumn], formats: &[i16]) -> std::io::Result<()> {
        let settings = self.sql.settings.borrow().clone();
        write_data_row(&mut self.out, row, cols, formats, &settings)
    }

    // ---------------------------------------------------------------- transaction control

    fn transaction_control(&mut self, t: &pg_query::protobuf::TransactionStmt) -> PgResult<String> {
        match t.kind {
            // BEGIN / START TRANSACTION
            1 | 2 => {
                if self.block != Block::Idle {
                    self.sql.notices.borrow_mut().push(PgError::warning("there is already a transaction in progress").with_code(sqlstate::ACTIVE_SQL_TRANSACTION));
                    return Ok("BEGIN".into());
                }
                if !self.sql.in_transaction() {
                    self.sql.begin(None);
                }
                self.apply_transaction_options(&t.options)?;
                self.block = Block::InBlock;
                self.savepoints.clear();
                Ok(if t.kind == 1 { "BEGIN" } else { "START TRANSACTION" }.into())
            }
            // COMMIT / END, ROLLBACK / ABORT, each optionally AND CHAIN
            3 | 4 => {
                let committing = t.kind == 3;
                if t.chain && self.block == Block::Idle {
                    let verb = if committing { "COMMIT" } else { "ROLLBACK" };
                    return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, format!("{verb} AND CHAIN can only be used in transaction blocks")));
                }
                // AND CHAIN starts the next transaction with the same characteristics.
                let chained = (self.sql.isolation(), self.sql.read_only);
                let tag = match self.block {
                    Block::Idle => {
                        self.sql.notices.borrow_mut().push(PgError::warning("there is no transaction in progress").with_code(sqlstate::NO_ACTIVE_SQL_TRANSACTION));
                        if committing && self.sql.in_transaction() && !self.implicit {
                            self.sql.commit()?;
                        } else if !committing {
                            self.sql.rollback();
                        }
                        if committing { "COMMIT" } else { "ROLLBACK" }
                    }
                    Block::InBlock if committing => {
                        self.block = Block::Idle;
                        self.savepoints.clear();
                        self.sql.commit()?;
                        "COMMIT"
                    }
                    Block::InBlock | Block::Failed => {
                        self.block = Block::Idle;
                        self.savepoints.clear();
                        self.sql.rollback();
                        "ROLLBACK"
                    }
                };
                if t.chain {
                    self.sql.begin(chained.0);
                    self.sql.set_read_only(chained.1)?;
                    self.block = Block::InBlock;
                }
                Ok(tag.into())
            }
            // SAVEPOINT
            5 => {
                if self.block == Block::Idle {
                    return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "SAVEPOINT can only be used in transaction blocks"));
                }
                self.sql.savepoint()?;
                self.savepoints.push(Savepoint { name: t.savepoint_name.clone(), rocks: 1 });
                Ok("SAVEPOINT".into())
            }
            // RELEASE
            6 => {
                if self.block == Block::Idle {
                    return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "RELEASE SAVEPOINT can only be used in transaction blocks"));
                }
                let Some(i) = self.savepoints.iter().rposition(|s| s.name == t.savepoint_name) else {
                    return Err(PgError::new(
                        sqlstate::INVALID_SAVEPOINT_SPECIFICATION,
                        format!("savepoint \"{}\" does not exist", t.savepoint_name),
                    ));
                };
                let released: usize = self.savepoints.drain(i..).map(|s| s.rocks).sum();
                if let Some(prev) = self.savepoints.last_mut() {
                    prev.rocks += released;
                }
                Ok("RELEASE".into())
            }
            // ROLLBACK TO
            7 => {
                if self.block == Block::Idle {
                    return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "ROLLBACK TO SAVEPOINT can only be used in transaction blocks"));
                }
                let Some(i) = self.savepoints.iter().rposition(|s| s.name == t.savepoint_name) else {
                    return Err(PgError::new(
                        sqlstate::INVALID_SAVEPOINT_SPECIFICATION,
                        format!("savepoint \"{}\" does not exist", t.savepoint_name),
                    ));
                };
                let pops: usize = self.savepoints[i..].iter().map(|s| s.rocks).sum();
                for _ in 0..pops {
                    self.sql.rollback_to_savepoint()?;
                }
                self.savepoints.truncate(i + 1);
                self.sql.savepoint()?;
                self.savepoints[i].rocks = 1;
                self.block = Block::InBlock;
                Ok("ROLLBACK".into())
            }
            8 | 9 | 10 => Err(PgError::unsupported("two-phase commit")),
            _ => Err(PgError::internal("unknown transaction statement")),
        }
    }

    fn apply_transaction_options(&mut self, options: &[pg_query::protobuf::Node]) -> PgResult<()> {
        for o in options {
            let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
            let v = commands::def_elem_value(de).unwrap_or_default();
            match de.defname.as_str() {
                "transaction_isolation" => {
                    let iso = match v.as_str() {
                        "read committed" => Isolation::ReadCommitted,
                        "read uncommitted" => Isolation::ReadUncommitted,
                        "repeatable read" => Isolation::RepeatableRead,
                        "serializable" => Isolation::Serializable,
                        _ => return Err(PgError::syntax(format!("invalid isolation level \"{v}\""))),
                    };
                    self.sql.set_isolation(iso)?;
                }
                "transaction_read_only" => self.sql.set_read_only(v == "true" || v == "1" || v == "on")?,
                "transaction_deferrable" => self.sql.set_deferrable(v == "true" || v == "1" || v == "on")?,
                _ => {}
            }
        }
        Ok(())
    }

    /// SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...
    fn set_transaction(&mut self, v: &pg_query::protobuf::VariableSetStmt) -> PgResult<String> {
        if v.name == "TRANSACTION" {
            if self.block == Block::Idle {
                self.sql.notices.borrow_mut().push(PgError::warning("SET TRANSACTION can only be used in transaction blocks").with_code(sqlstate::NO_ACTIVE_SQL_TRANSACTION));
                return Ok("SET".into());
            }
            self.apply_transaction_options(&v.args)?;
        } else {
            for o in &v.args {
                let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
                let val = commands::def_elem_value(de).unwrap_or_default();
                let name = match de.defname.as_str() {
                    "transaction_isolation" => "default_transaction_isolation",
                    "transaction_read_only" => "default_transaction_read_only",
                    _ => "default_transaction_deferrable",
                };
                self.sql.settings.borrow_mut().set(name, &val)?;
            }
        }
        Ok("SET".into())
    }

    // ---------------------------------------------------------------- SQL PREPARE / EXECUTE

    fn sql_prepare(&mut self, p: &pg_query::protobuf::PrepareStmt, sql: &str) -> PgResult<()> {
        if self.prepared.contains_key(&p.name) {
            return Err(PgError::new(sqlstate::DUPLICATE_PREPARED_STATEMENT, format!("prepared statement \"{}\" already exists", p.name)));
        }
        let node = p.query.as_deref().and_then(|n| n.node.clone()).ok_or_else(|| PgError::internal("PREPARE without query"))?;
        let mut types = Vec::new();
        for t in &p.argtypes {
            if let Some(NodeEnum::TypeName(tn)) = &t.node {
                types.push(tusk_sql::analyzer::types::resolve_type_name(tusk_sql::catalog::builtins(), tn)?);
            }
        }
        let stmt = ParsedStatement { node, location: 0, len: sql.len() };
        let prepared = self.prepare_statement(sql, Some(stmt), &types)?;
        self.note_prepared(&p.name, &prepared, true);
        self.prepared.insert(p.name.clone(), Arc::new(prepared));
        Ok(())
    }

    /// Records a named prepared statement for pg_prepared_statements.
    fn note_prepared(&self, name: &str, p: &Prepared, from_sql: bool) {
        if name.is_empty() {
            return;
        }
        let info = tusk_sql::session::PreparedStatementInfo {
            statement: p.sql.clone(),
            prepare_time: tusk_sql::session::now_micros(),
            parameter_types: p.param_types.iter().map(|t| t.oid).collect(),
            from_sql,
        };
        self.sql.prepared_statements.borrow_mut().insert(name.to_string(), info);
    }

    fn sql_execute(&mut self, e: &pg_query::protobuf::ExecuteStmt) -> PgResult<()> {
        let prepared = self
            .prepared
            .get(&e.name)
            .cloned()
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{}\" does not exist", e.name)))?;
        if e.params.len() != prepared.param_types.len() {
            return Err(PgError::syntax(format!(
                "wrong number of parameters for prepared statement \"{}\"",
                e.name
            ))
            .with_detail(format!("Expected {} parameters but got {}.", prepared.param_types.len(), e.params.len())));
        }
        // Parameter expressions are evaluated as constants.
        let mut values = Vec::new();
        for (p, ty) in e.params.iter().zip(&prepared.param_types) {
            values.push(self.eval_constant(p, *ty)?);
        }
        let stmt = prepared.stmt.clone().ok_or_else(|| PgError::internal("empty prepared statement"))?;
        let plan = self.current_plan(&prepared)?;
        let sql = prepared.sql.clone();
        self.run_statement(&stmt, &sql, &values, &prepared.param_types, &[], plan)
    }

    fn eval_constant(&mut self, n: &pg_query::protobuf::Node, ty: SqlType) -> PgResult<Datum> {
        let text = pg_query::protobuf::SelectStmt {
            target_list: vec![pg_query::protobuf::Node {
                node: Some(NodeEnum::ResTarget(Box::new(pg_query::protobuf::ResTarget {
                    name: String::new(),
                    indirection: vec![],
                    val: Some(Box::new(pg_query::protobuf::Node {
                        node: Some(NodeEnum::TypeCast(Box::new(pg_query::protobuf::TypeCast {
                            arg: Some(Box::new(n.clone())),
                            type_name: Some(type_name_of(ty)),
                            location: -1,
                        }))),
                    })),
                    location: -1,
                }))),
            }],
            limit_option: 1,
            op: 1,
            ..Default::default()
        };
        let stmt = ParsedStatement { node: NodeEnum::SelectStmt(Box::new(text)), location: 0, len: 0 };
        if !self.sql.in_transaction() {
            self.sql.begin(None);
        }
        let (plan, _) = self.sql.plan_query(&stmt, "", &[])?;
        let mut run = self.sql.start_query(plan, vec![])?;
        let mut value = Datum::Null;
        run.fetch(&self.sql, 0, &mut |mut row| {
            value = row.swap_remove(0);
            Ok(())
        })?;
        Ok(value)
    }

    // ---------------------------------------------------------------- extended protocol

    fn prepare_statement(&mut self, sql: &str, stmt: Option<ParsedStatement>, types: &[SqlType]) -> PgResult<Prepared> {
        let Some(stmt) = stmt else {
            return Ok(Prepared { sql: sql.to_string(), stmt: None, param_types: types.to_vec(), plan: None, catalog: None });
        };
        let is_query = !commands::is_utility(&stmt.node);
        if is_query {
            if self.block == Block::Failed {
                return Err(PgError::new(
                    sqlstate::IN_FAILED_SQL_TRANSACTION,
                    "current transaction is aborted, commands ignored until end of transaction block",
                ));
            }
            let catalog = self.sql.catalog()?;
            let (plan, params) = self.sql.plan_query(&stmt, sql, types).map_err(|e| self.with_char_position(e, sql))?;
            return Ok(Prepared { sql: sql.to_string(), stmt: Some(stmt), param_types: params, plan: Some(plan), catalog: Some(catalog) });
        }
        // A DECLARE's query may have parameters ($1...), typed like a query's.
        let types = match &stmt.node {
            NodeEnum::DeclareCursorStmt(d) if self.block != Block::Failed => {
                commands::cursor::param_types(&self.sql, d, sql, types).map_err(|e| self.with_char_position(e, sql))?
            }
            _ => types.to_vec(),
        };
        Ok(Prepared { sql: sql.to_string(), stmt: Some(stmt), param_types: types, plan: None, catalog: None })
    }

    /// The plan to run: re-planned if the catalog changed since it was made.
    fn current_plan(&mut self, p: &Prepared) -> PgResult<Option<Arc<PlannedQuery>>> {
        let Some(plan) = &p.plan else { return Ok(None) };
        let now = self.sql.catalog()?;
        if p.catalog.as_ref().map(|c| Arc::ptr_eq(c, &now)).unwrap_or(false) {
            return Ok(Some(plan.clone()));
        }
        let stmt = p.stmt.as_ref().expect("planned statements have a statement");
        let fresh = self.sql.plan_query(stmt, &p.sql, &p.param_types)?.0;
        check_same_result_type(plan, &fresh)?;
        Ok(Some(fresh))
    }

    fn parse_message(&mut self, name: &str, query: &str, param_types: &[u32]) -> PgResult<()> {
        if !name.is_empty() && self.prepared.contains_key(name) {
            return Err(PgError::new(sqlstate::DUPLICATE_PREPARED_STATEMENT, format!("prepared statement \"{name}\" already exists")));
        }
        let scs = self.sql.settings.borrow().standard_conforming_strings;
        let mut stmts = parser::parse_with(query, scs)?;
        if stmts.len() > 1 {
            return Err(PgError::syntax("cannot insert multiple commands into a prepared statement"));
        }
        let types: Vec<SqlType> = param_types.iter().map(|&t| SqlType::new(if t == 0 { oid::UNKNOWN } else { t })).collect();
        for t in &types {
            if t.oid != oid::UNKNOWN && tusk_sql::catalog::builtins().type_info(t.oid).is_none() {
                return Err(PgError::internal(format!("cache lookup failed for type {}", t.oid)));
            }
        }
        self.handle.set_query(query);
        // Planning reads the catalog, so it runs inside a transaction.
        let opened = if !self.sql.in_transaction() && self.block == Block::Idle {
            self.sql.begin(None);
            true
        } else {
            false
        };
        let prepared = self.prepare_statement(query, stmts.pop(), &types);
        if opened {
            self.sql.rollback();
        }
        let prepared = prepared?;
        self.note_prepared(name, &prepared, false);
        self.prepared.insert(name.to_string(), Arc::new(prepared));
        Ok(())
    }

    fn bind_message(
        &mut self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        params: Vec<Option<Vec<u8>>>,
        result_formats: Vec<i16>,
    ) -> PgResult<()> {
        let prepared = self.prepared.get(statement).cloned().ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_SQL_STATEMENT_NAME,
                if statement.is_empty() {
                    "unnamed prepared statement does not exist".to_string()
                } else {
                    format!("prepared statement \"{statement}\" does not exist")
                },
            )
        })?;
        if param_formats.len() > 1 && param_formats.len() != params.len() {
            return Err(PgError::new(
                sqlstate::PROTOCOL_VIOLATION,
                format!("bind message has {} parameter formats but {} parameters", param_formats.len(), params.len()),
            ));
        }
        if params.len() != prepared.param_types.len() {
            return Err(PgError::new(
                sqlstate::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                    params.len(),
                    statement,
                    prepared.param_types.len()
                ),
            ));
        }
        // As exec_bind_message: in a failed transaction only a statement
        // that ends it (COMMIT, ROLLBACK, ROLLBACK TO), without
        // parameters, may be bound — drivers such as pgjdbc send their
        // ROLLBACK this way.
        if self.block == Block::Failed {
            match &prepared.stmt {
                Some(stmt) if params.is_empty() => self.guard_failed(&stmt.node)?,
                _ => {
                    return Err(PgError::new(
                        sqlstate::IN_FAILED_SQL_TRANSACTION,
                        "current transaction is aborted, commands ignored until end of transaction block",
                    ))
                }
            }
        }
        let settings = self.sql.settings.borrow().clone();
        let mut values = Vec::with_capacity(params.len());
        for (i, (p, ty)) in params.into_iter().zip(&prepared.param_types).enumerate() {
            let format = match param_formats.len() {
                0 => 0,
                1 => param_formats[0],
                _ => param_formats[i],
            };
            if format != 0 && format != 1 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unsupported format code: {format}")));
            }
            let v = match p {
                None => Datum::Null,
                Some(bytes) => {
                    if format == 1 {
                        tusk_sql::functions::io::parse_binary(&bytes, *ty).map_err(|e| {
                            PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("incorrect binary data format in bind parameter {}", i + 1))
                                .with_detail(e.message)
                        })?
                    } else {
                        let text = protocol::check_utf8(&bytes)?;
                        if matches!(ty.oid, oid::REGCLASS | oid::REGPROC | oid::REGTYPE) {
                            // Names need the catalog and search path, as
                            // regclassin looks them up (SQLAlchemy binds
                            // table names this way).
                            let catalog = self.sql.catalog()?;
                            let env = tusk_sql::session::SessionEnv { s: &self.sql, catalog: &catalog };
                            tusk_sql::functions::cast::cast_datum_env(Datum::from_string(text.to_string()), SqlType::new(oid::TEXT), *ty, true, &env)?
                        } else {
                            tusk_sql::functions::io::parse_text(text, *ty, &settings, false)?
                        }
                    }
                }
            };
            values.push(v);
        }
        // PortalSetResultFormat: one format for all columns, or one each.
        if result_formats.len() > 1 {
            let columns = result_columns(&prepared);
            if let Some(cols) = columns.filter(|c| c.len() != result_formats.len()) {
                return Err(PgError::new(
                    sqlstate::PROTOCOL_VIOLATION,
                    format!("bind message has {} result formats but query has {} columns", result_formats.len(), cols.len()),
                ));
            }
        }
        self.portals.insert(
            portal.to_string(),
            Portal { prepared, params: values, result_formats, run: None, utility_rows: None, sent: 0 },
        );
        Ok(())
    }

    fn describe_message(&mut self, kind: u8, name: &str) -> PgResult<()> {
        if kind == b'S' {
            let p = self.prepared.get(name).cloned().ok_or_else(|| {
                PgError::new(sqlstate::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{name}\" does not exist"))
            })?;
            let types = p.param_types.clone();
            self.out
                .msg(b't', |b| {
                    b.extend_from_slice(&(types.len() as i16).to_be_bytes());
                    for t in &types {
                        b.extend_from_slice(&t.oid.to_be_bytes());
                    }
                })
                .map_err(io_err)?;
            return self.describe_result(&p, &[]);
        }
        // A cursor DECLAREd in SQL is a portal too (psycopg describes its named cursors).
        if !self.portals.contains_key(name) {
            if let Some(cols) = commands::cursor::cursor_columns(&self.sql, name) {
                return self.row_description(&cols, &[]).map_err(io_err);
            }
        }
        let portal = self.portals.get(name).ok_or_else(|| PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("portal \"{name}\" does not exist")))?;
        let p = portal.prepared.clone();
        let formats = portal.result_formats.clone();
        self.describe_result(&p, &formats)
    }

    fn describe_result(&mut self, p: &Prepared, formats: &[i16]) -> PgResult<()> {
        // FETCH returns its cursor's columns (UtilityTupleDescriptor).
        let columns = match p.stmt.as_ref().map(|s| &s.node) {
            Some(NodeEnum::FetchStmt(f)) => commands::cursor::fetch_columns(&self.sql, f),
            _ => result_columns(p),
        };
        match columns {
            Some(c) => self.row_description(&c, formats).map_err(io_err),
            None => self.out.msg(b'n', |_| {}).map_err(io_err),
        }
    }

    fn execute_message(&mut self, name: &str, max_rows: i32) -> PgResult<()> {
        let Some(mut portal) = self.portals.remove(name) else {
            return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("portal \"{name}\" does not exist")));
        };
        let result = self.execute_portal(&mut portal, max_rows);
        if result.is_ok() && (portal.run.as_ref().map(|r| !r.is_finished()).unwrap_or(false) || portal.utility_rows.is_some()) {
            self.portals.insert(name.to_string(), portal);
        }
        result
    }

    fn execute_portal(&mut self, portal: &mut Portal, max_rows: i32) -> PgResult<()> {
        let prepared = portal.prepared.clone();
        let Some(stmt) = prepared.stmt.as_ref() else {
            return self.out.empty_query().map_err(io_err);
        };
        let max = if max_rows <= 0 { 0 } else { max_rows as usize };
        // Suspended portals continue where they stopped.
        if let Some((cols, rows, tag)) = portal.utility_rows.as_mut() {
            let cols = cols.clone();
            let mut n = 0;
            while max == 0 || n < max {
                match rows.next() {
                    Some(r) => {
                        check_result_formats(&portal.result_formats)?;
                        self.data_row(&r, &cols, &portal.result_formats).map_err(io_err)?;
                        n += 1;
                    }
                    None => {
                        let tag = tag.clone();
                        portal.utility_rows = None;
                        return self.complete(&tag);
                    }
                }
            }
            return self.out.msg(b's', |_| {}).map_err(io_err);
        }
        if portal.run.is_none() {
            self.guard_failed(&stmt.node)?;
            let is_txn = matches!(&stmt.node, NodeEnum::TransactionStmt(_))
                || matches!(&stmt.node, NodeEnum::VariableSetStmt(v) if v.kind == 4)
                || matches!(&stmt.node, NodeEnum::PrepareStmt(_) | NodeEnum::ExecuteStmt(_) | NodeEnum::DeallocateStmt(_));
            if is_txn || prepared.plan.is_none() {
                // Utility statements run to completion in one go (COPY
                // too, but it talks to the client: run_statement runs it).
                if commands::is_utility(&stmt.node) && !is_txn && !matches!(&stmt.node, NodeEnum::CopyStmt(_)) {
                    if let Some(what) = commands::forbidden_in_block(&stmt.node) {
                        if self.block != Block::Idle {
                            return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, format!("{what} cannot run inside a transaction block")));
                        }
                    }
                    self.start_statement();
                    let r = self.check_role_change(&stmt.node).and_then(|_| match &stmt.node {
                        NodeEnum::DeclareCursorStmt(d) if !portal.params.is_empty() => {
                            commands::cursor::declare_with_params(&mut self.sql, d, &prepared.sql, &prepared.param_types, portal.params.clone())
                        }
                        _ => commands::execute_utility(&mut self.sql, stmt, &prepared.sql),
                    });
                    self.sync_role();
                    self.sql.interrupt.end_statement();
                    self.send_notices().map_err(io_err)?;
                    return match r? {
                        UtilityResult { tag, rows: Some((cols, rows)) } => {
                            portal.utility_rows = Some((cols, rows.into_iter(), tag));
                            self.execute_portal(portal, max_rows)
                        }
                        UtilityResult { tag, rows: None } => self.complete(&tag),
                    };
                }
                return self.run_statement(stmt, &prepared.sql, &portal.params, &prepared.param_types, &portal.result_formats, None);
            }
            self.start_statement();
            self.handle.set_query(&prepared.sql);
            let mut plan = self.current_plan(&prepared)?.expect("query statements have plans");
            let mut attempts = 0;
            portal.run = Some(loop {
                match self.sql.start_query(plan.clone(), portal.params.clone()) {
                    Err(e) if is_stale_plan(&e) && attempts < 5 => {
                        attempts += 1;
                        let stmt = prepared.stmt.as_ref().expect("planned statements have a statement");
                        let fresh = self.sql.plan_query(stmt, &prepared.sql, &prepared.param_types)?.0;
                        check_same_result_type(&plan, &fresh)?;
                        plan = fresh;
                    }
                    r => break r?,
                }
            });
        }
        let run = portal.run.as_mut().expect("started above");
        let cols = run.columns.clone();
        let formats = portal.result_formats.clone();
        let mut count = 0u64;
        let done = {
            let out = &mut self.out;
            let settings = self.sql.settings.borrow().clone();
            let first = portal.sent == 0;
            run.fetch(&self.sql, max, &mut |row| {
                if first && count == 0 {
                    check_result_formats(&formats)?;
                }
                count += 1;
                write_data_row(out, &row, &cols, &formats, &settings).map_err(io_err)
            })?
        };
        portal.sent += count;
        // WARNINGs the rows' functions raised (pg_cancel_backend's).
        self.send_notices().map_err(io_err)?;
        if done {
            let tag = command_tag(&stmt.node, portal.sent, run.rows_modified());
            self.sql.interrupt.end_statement();
            self.complete(&tag)
        } else {
            self.out.msg(b's', |_| {}).map_err(io_err)
        }
    }

    fn drop_temp_objects(&mut self) {
        if let Some(nsp) = self.sql.temp_namespace {
            if let Err(e) = tusk_sql::commands::ddl::drop_temp_namespaces(&self.shared.cluster, self.sql.db, &[nsp]) {
                log::warn!("could not drop temporary objects of session {}: {e}", self.handle.pid);
            }
        }
    }
}

/// pg_stat_activity shows application_name, a reported parameter: it is
/// passed on whenever the reported parameters are read again.
fn note_application_name(handle: &BackendHandle, reported: &[(&'static str, String)]) {
    if let Some((_, name)) = reported.iter().find(|(n, _)| *n == "application_name") {
        handle.set_application_name(name);
    }
}

/// The columns a prepared statement returns; None for one that returns no
/// rows (RowDescription or NoData).
fn result_columns(p: &Prepared) -> Option<Vec<OutputColumn>> {
    match (&p.plan, &p.stmt) {
        (Some(plan), _) => {
            if plan.columns.is_empty() && !matches!(p.stmt.as_ref().map(|s| &s.node), Some(NodeEnum::SelectStmt(_))) {
                None
            } else {
                Some(plan.columns.clone())
            }
        }
        (None, Some(stmt)) => match &stmt.node {
            NodeEnum::VariableShowStmt(v) => Some(vec![OutputColumn {
                name: tusk_sql::settings::lookup_def(&v.name).map(|d| d.name.clone()).unwrap_or_else(|| v.name.clone()),
                ty: SqlType::new(oid::TEXT),
                origin: None,
            }]),
            NodeEnum::ExplainStmt(_) => Some(vec![tusk_sql::commands::explain::result_column()]),
            _ => None,
        },
        _ => None,
    }
}

/// Result format codes are checked when the first row goes out, as
/// PostgreSQL's printtup does.
fn check_result_formats(formats: &[i16]) -> PgResult<()> {
    match formats.iter().find(|&&f| f != 0 && f != 1) {
        Some(f) => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unsupported format code: {f}"))),
        None => Ok(()),
    }
}

fn io_err(e: std::io::Error) -> PgError {
    PgError::new(sqlstate::CONNECTION_EXCEPTION, format!("could not send data to client: {e}"))
}

fn type_name_of(ty: SqlType) -> pg_query::protobuf::TypeName {
    let name = tusk_sql::catalog::builtins().type_name(ty.oid).to_string();
    pg_query::protobuf::TypeName {
        names: vec![
            pg_query::protobuf::Node { node: Some(NodeEnum::String(pg_query::protobuf::String { sval: "pg_catalog".into() })) },
            pg_query::protobuf::Node { node: Some(NodeEnum::String(pg_query::protobuf::String { sval: name })) },
        ],
        typemod: -1,
        location: -1,
        ..Default::default()
    }
}

/// The CommandComplete tag.
fn command_tag(node: &NodeEnum, rows: u64, modified: u64) -> String {
    match node {
        NodeEnum::SelectStmt(_) => format!("SELECT {rows}"),
        NodeEnum::InsertStmt(_) => format!("INSERT 0 {modified}"),
        NodeEnum::UpdateStmt(_) => format!("UPDATE {modified}"),
        NodeEnum::DeleteStmt(_) => format!("DELETE {modified}"),
        other => commands::command_tag(other),
    }
}

fn format_for(formats: &[i16], i: usize) -> i16 {
    match formats.len() {
        0 => 0,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(0),
    }
}

pub fn write_row_description<W: Write>(out: &mut Out<W>, cols: &[OutputColumn], formats: &[i16]) -> std::io::Result<()> {
    let b = tusk_sql::catalog::builtins();
    out.msg(b'T', |buf| {
        buf.extend_from_slice(&(cols.len() as i16).to_be_bytes());
        for (i, c) in cols.iter().enumerate() {
            protocol::put_cstr(buf, &c.name);
            let (table, attnum) = c.origin.unwrap_or((0, 0));
            buf.extend_from_slice(&table.to_be_bytes());
            buf.extend_from_slice(&attnum.to_be_bytes());
            // A domain is described as its base type (printtup.c).
            let described = tusk_sql::catalog::types::base_type(c.ty);
            let ty = if described.oid == oid::UNKNOWN { oid::TEXT } else { described.oid };
            buf.extend_from_slice(&ty.to_be_bytes());
            let len = b.type_info(ty).map(|t| t.len).unwrap_or(-1);
            buf.extend_from_slice(&len.to_be_bytes());
            buf.extend_from_slice(&described.typmod.to_be_bytes());
            buf.extend_from_slice(&format_for(formats, i).to_be_bytes());
        }
    })
}

pub fn write_data_row<W: Write>(
    out: &mut Out<W>,
    row: &[Datum],
    cols: &[OutputColumn],
    formats: &[i16],
    settings: &tusk_sql::settings::Settings,
) -> std::io::Result<()> {
    out.msg(b'D', |buf| {
        let n = cols.len().min(row.len());
        buf.extend_from_slice(&(n as i16).to_be_bytes());
        for (i, d) in row.iter().take(n).enumerate() {
            if d.is_null() {
                buf.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            let ty = cols[i].ty.oid;
            if format_for(formats, i) == 1 {
                let bytes = tusk_sql::functions::io::format_binary(d, ty);
                buf.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                buf.extend_from_slice(&bytes);
            } else {
                let start = buf.len();
                buf.extend_from_slice(&[0, 0, 0, 0]);
                tusk_sql::functions::io::write_text(buf, d, ty, settings);
                let len = (buf.len() - start - 4) as i32;
                buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
            }
        }
    })
}

/// RevalidateCachedQuery: a prepared statement re-planned after DDL must
/// still return the columns its clients were told about (names, types and
/// typmods); otherwise PostgreSQL fails the execution, and drivers such
/// as pgx then prepare the statement anew.
fn check_same_result_type(old: &PlannedQuery, new: &PlannedQuery) -> PgResult<()> {
    let same = old.columns.len() == new.columns.len()
        && old.columns.iter().zip(&new.columns).all(|(a, b)| a.name == b.name && a.ty.oid == b.ty.oid && a.ty.typmod == b.ty.typmod);
    if same {
        Ok(())
    } else {
        Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cached plan must not change result type"))
    }
}

/// The text a panic carried (`panic!` with a literal or a format).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown".into())
}
