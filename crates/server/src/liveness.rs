//! client_connection_check_interval (PostgreSQL 14+): while a statement
//! runs, its session does not read from the client, so a client that went
//! away goes unnoticed until the statement ends — which, for a runaway
//! query or one waiting on a lock, may be never, with its locks held all
//! along. One watcher thread looks, at each running statement's interval,
//! whether the peer closed its socket (POLLRDHUP, as PostgreSQL's
//! pq_check_connection) and, if so, interrupts the statement: the session
//! then ends with "connection to client lost", rolling back and releasing
//! its locks. An idle session needs no watching: its blocked read sees
//! the end of the stream itself.
//!
//! The watcher also finishes off terminated sessions that do not end: one
//! blocked writing to a client that reads nothing never reaches an
//! interrupt check. As PostgreSQL's ProcessClientWriteInterrupt gives up on
//! the client then, the socket is shut down after `TERMINATE_GRACE`, which
//! fails the write (the client gets no FATAL message; it was not reading).

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::{BackendHandle, Shared};

/// The longest the watcher sleeps: a statement that starts meanwhile is
/// first checked at most this much later than its interval asks.
const MAX_NAP: Duration = Duration::from_millis(250);

/// How long a terminated session has to end by itself.
const TERMINATE_GRACE: Duration = Duration::from_secs(1);

/// Starts the watcher; it ends once the server's shared state is gone.
pub(crate) fn start(shared: &Arc<Shared>) {
    let weak = Arc::downgrade(shared);
    let spawned = std::thread::Builder::new().name("tusk-client-check".into()).spawn(move || watch(weak));
    if let Err(e) = spawned {
        // Statements still run; only a vanished client goes unnoticed.
        log::warn!("could not start the client connection checker: {e}");
    }
}

fn watch(shared: Weak<Shared>) {
    // When each watched session is next due for a check.
    let mut due: HashMap<i32, Instant> = HashMap::new();
    // When each terminated session still here was first seen terminated
    // (None once its socket was shut down).
    let mut terminated: HashMap<i32, Option<Instant>> = HashMap::new();
    loop {
        let sessions: Vec<Arc<BackendHandle>> = match shared.upgrade() {
            Some(s) => s.backends.lock().values().cloned().collect(),
            None => return,
        };
        let now = Instant::now();
        let mut wake = now + MAX_NAP;
        due.retain(|pid, _| sessions.iter().any(|h| h.pid == *pid));
        terminated.retain(|pid, _| sessions.iter().any(|h| h.pid == *pid));
        for h in &sessions {
            if h.interrupt.is_terminated() {
                let since = terminated.entry(h.pid).or_insert(Some(now));
                if let Some(t) = *since {
                    if now >= t + TERMINATE_GRACE {
                        log::info!("session {}: still running {} ms after it was terminated; closing its connection", h.pid, TERMINATE_GRACE.as_millis());
                        h.shut_socket();
                        *since = None;
                    } else {
                        wake = wake.min(t + TERMINATE_GRACE);
                    }
                }
            }
        }
        for h in &sessions {
            let interval = h.check_interval_ms.load(Ordering::Relaxed);
            if interval == 0 || h.interrupt.ends_session() {
                due.remove(&h.pid);
                continue;
            }
            let interval = Duration::from_millis(interval);
            let at = due.entry(h.pid).or_insert(now + interval);
            if now >= *at {
                if h.peer_closed() {
                    log::info!("session {}: connection to client lost", h.pid);
                    h.interrupt.client_lost();
                    due.remove(&h.pid);
                    continue;
                }
                *at = now + interval;
            }
            wake = wake.min(*at);
        }
        drop(sessions);
        std::thread::sleep(wake.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
    }
}

impl BackendHandle {
    /// A statement starts (`Some`: checking its client at that interval)
    /// or the session waits for the client again (`None`).
    pub fn watch_client(&self, interval: Option<Duration>) {
        let ms = interval.map_or(0, |d| d.as_millis().max(1) as u64);
        self.check_interval_ms.store(ms, Ordering::Relaxed);
    }

    /// Shuts the client socket down both ways: blocked reads and writes fail.
    fn shut_socket(&self) {
        if let Some(s) = self.socket.lock().as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Whether the client closed its end of the connection (or it broke).
    /// Data the client sent ahead does not hide the close, as it would
    /// from a peek.
    fn peer_closed(&self) -> bool {
        let socket = self.socket.lock();
        let Some(s) = socket.as_ref() else { return false };
        peer_closed(s.as_raw_fd())
    }
}

#[cfg(target_os = "linux")]
fn peer_closed(fd: std::os::fd::RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call; the socket is
    // kept open by the caller's lock on it.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

/// Elsewhere there is no POLLRDHUP: a peek that finds the end of the
/// stream (and misses a close behind data the client sent ahead).
#[cfg(not(target_os = "linux"))]
fn peer_closed(fd: std::os::fd::RawFd) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: a one-byte buffer we own; MSG_PEEK leaves the data in place.
    let r = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    r == 0
}
