//! LISTEN, UNLISTEN and NOTIFY, as PostgreSQL 15's
//! src/backend/commands/async.c has them.
//!
//! A transaction's notifications and its LISTEN/UNLISTEN actions wait in
//! its session (`SessionNotify`) until it commits; a rollback, or a
//! ROLLBACK TO SAVEPOINT past them, forgets them. A notification repeated
//! (same channel and payload) in one transaction is sent once, where it
//! was first sent.
//!
//! At commit the actions apply first, then the notifications go into the
//! inbox of every session of the same database that listens on their
//! channel (`Notifier`), the notifying session itself included. Commits
//! of notifying transactions are serialized, as PreCommit_Notify's lock on
//! "database 0" serializes them, so inboxes fill in commit order. The
//! protocol layer takes a session's notifications out when the session is
//! idle (not in a transaction) and sends them as NotificationResponse
//! messages; a session blocked reading from its client is woken for that
//! by the `Wakeup` it registered.
//!
//! PostgreSQL's queue is a file-backed ring of 8 GB that every listener
//! reads at its own position; here each listener holds references to the
//! shared notifications instead, and a notification's queue space (counted
//! as PostgreSQL's queue entry would take it) is given back once the last
//! listener has taken it. The 8 GB limit and pg_notification_queue_usage()
//! follow that count.

use std::collections::{HashMap, VecDeque};

use rustc_hash::FxHashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use crate::session::SqlSession;

/// PostgreSQL's NAMEDATALEN: channel names are shorter.
const NAMEDATALEN: usize = 64;

/// NOTIFY_PAYLOAD_MAX_LENGTH (BLCKSZ - NAMEDATALEN - 128): payloads are shorter.
const PAYLOAD_MAX_LENGTH: usize = 8192 - NAMEDATALEN - 128;

/// The queue's size: (QUEUE_MAX_PAGE + 1) / 2 pages of BLCKSZ, the half of
/// the SLRU ring PostgreSQL 15 lets the queue fill.
const QUEUE_CAPACITY: u64 = (32 * 0x10000 / 2) * 8192;

/// QUEUE_FULL_WARN_INTERVAL: how often a filling queue is warned about.
const FILL_WARNING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Calls the session to take its notifications (see the module comment).
pub type Wakeup = Arc<dyn Fn() + Send + Sync>;

/// Notifications waiting for a session, oldest first.
pub type Inbox = VecDeque<Arc<Notification>>;

/// A notification, pending in its transaction and then committed. The
/// strings are shared with the values pg_notify was called with, so a
/// notification costs one allocation on its way.
pub struct Notification {
    pub channel: Arc<str>,
    pub payload: Arc<str>,
    /// The notifying session's process id.
    pub pid: i32,
    /// Queue bytes it holds once committed, given back to the queue when
    /// the last listener has taken it.
    size: u64,
    /// Its place in the commit order.
    seq: u64,
    queue: Option<Arc<AtomicU64>>,
}

impl Drop for Notification {
    fn drop(&mut self) {
        if let Some(used) = &self.queue {
            used.fetch_sub(self.size, Ordering::Relaxed);
        }
    }
}

/// The size of the queue entry PostgreSQL writes for a notification:
/// QUEUEALIGN(AsyncQueueEntryEmptySize + channel + payload), the empty
/// entry being four int32 fields and the two terminators.
fn entry_size(channel: &str, payload: &str) -> u64 {
    let len = 16 + 2 + channel.len() + payload.len();
    (len as u64 + 3) & !3
}

/// A session listening on at least one channel.
struct Listener {
    db: Oid,
    /// In the order they were listened to (pg_listening_channels).
    channels: Vec<String>,
    /// Committed notifications on those channels not yet taken.
    inbox: Inbox,
    wakeup: Option<Wakeup>,
}

impl Listener {
    fn listens(&self, channel: &str) -> bool {
        self.channels.iter().any(|c| c == channel)
    }
}

/// The cluster's notification hub: who listens, and what waits for them.
pub struct Notifier {
    listeners: Mutex<HashMap<i32, Listener>>,
    /// Held by a notifying transaction from before its storage commit
    /// until its notifications are in the inboxes; counts the
    /// notifications committed so far.
    commit_order: Mutex<u64>,
    /// Queue bytes held by notifications not yet taken by all listeners.
    used: Arc<AtomicU64>,
    capacity: u64,
    /// When the queue was last warned about as filling up.
    fill_warned: Mutex<Option<std::time::Instant>>,
}

impl Default for Notifier {
    fn default() -> Notifier {
        Notifier::with_capacity(QUEUE_CAPACITY)
    }
}

impl Notifier {
    /// A notifier whose queue holds `capacity` bytes of entries.
    pub fn with_capacity(capacity: u64) -> Notifier {
        Notifier {
            listeners: Mutex::default(),
            commit_order: Mutex::default(),
            used: Arc::default(),
            capacity,
            fill_warned: Mutex::default(),
        }
    }

    /// pg_notification_queue_usage(): the fraction of the queue in use.
    pub fn usage(&self) -> f64 {
        self.used.load(Ordering::Relaxed) as f64 / self.capacity as f64
    }

    /// asyncQueueFillWarning: past half full, a WARNING every few seconds
    /// naming the listener that holds up the oldest notification.
    fn fill_warning(&self) -> Option<PgError> {
        let usage = self.usage();
        if usage < 0.5 {
            return None;
        }
        let now = std::time::Instant::now();
        let mut warned = self.fill_warned.lock();
        if warned.is_some_and(|t| now.duration_since(t) < FILL_WARNING_INTERVAL) {
            return None;
        }
        *warned = Some(now);
        let slowest = self
            .listeners
            .lock()
            .iter()
            .filter_map(|(pid, l)| l.inbox.front().map(|n| (n.seq, *pid)))
            .min()
            .map(|(_, pid)| pid);
        let mut w = PgError::warning(format!("NOTIFY queue is {:.0}% full", usage * 100.0));
        if let Some(pid) = slowest {
            w = w
                .with_detail(format!("The server process with PID {pid} is among those with the oldest transactions."))
                .with_hint("The NOTIFY queue cannot be emptied until that process ends its current transaction.");
        }
        Some(w)
    }

    /// The channels a session listens on, in the order it began to.
    pub fn channels_of(&self, pid: i32) -> Vec<String> {
        self.listeners.lock().get(&pid).map(|l| l.channels.clone()).unwrap_or_default()
    }
}

/// What LISTEN and UNLISTEN ask for at commit.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ListenAction {
    Listen(String),
    Unlisten(String),
    UnlistenAll,
}

/// How far a transaction had got when a savepoint was set.
#[derive(Clone, Copy, Debug, Default)]
pub struct NotifyMark {
    notifications: usize,
    actions: usize,
}

/// A session's LISTEN/NOTIFY state: the open transaction's notifications
/// and actions, and whether the session is a listener.
#[derive(Default)]
pub struct SessionNotify {
    /// Each (channel, payload) once, in the order first sent.
    notifications: Vec<Arc<Notification>>,
    /// Finds duplicates: the newest notification with a hash, and for
    /// each notification the one before it with the same hash.
    newest_by_hash: FxHashMap<u64, usize>,
    older_same_hash: Vec<usize>,
    actions: Vec<ListenAction>,
    /// The notifier this session is a listener of, and its pid there.
    listening: Option<(Arc<Notifier>, i32)>,
    wakeup: Option<Wakeup>,
}

/// No notification with the hash before this one.
const NONE: usize = usize::MAX;

fn content_hash(channel: &str, payload: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    channel.hash(&mut h);
    payload.hash(&mut h);
    h.finish()
}

impl SessionNotify {
    /// Whether the session listens on some channel (as committed).
    pub fn is_listening(&self) -> bool {
        self.listening.is_some()
    }

    /// Whether the open transaction notified or (un)listened.
    fn has_work(&self) -> bool {
        !self.notifications.is_empty() || !self.actions.is_empty()
    }

    /// Async_Notify: queues a notification unless the transaction already
    /// sent the same one.
    fn add(&mut self, channel: Arc<str>, payload: Arc<str>, pid: i32) {
        let h = content_hash(&channel, &payload);
        let newest = self.newest_by_hash.get(&h).copied().unwrap_or(NONE);
        let mut i = newest;
        while i != NONE {
            let n = &self.notifications[i];
            if n.channel == channel && n.payload == payload {
                return;
            }
            i = self.older_same_hash[i];
        }
        self.newest_by_hash.insert(h, self.notifications.len());
        self.older_same_hash.push(newest);
        let size = entry_size(&channel, &payload);
        self.notifications.push(Arc::new(Notification { channel, payload, pid, size, seq: 0, queue: None }));
    }

    /// Where the transaction stands, for a savepoint.
    pub fn mark(&self) -> NotifyMark {
        NotifyMark { notifications: self.notifications.len(), actions: self.actions.len() }
    }

    /// ROLLBACK TO SAVEPOINT: forgets what was sent and asked for since.
    pub fn rollback_to(&mut self, mark: NotifyMark) {
        // Undone newest first: each is then the newest with its hash.
        while self.notifications.len() > mark.notifications {
            let n = self.notifications.pop().expect("longer than the mark");
            let h = content_hash(&n.channel, &n.payload);
            match self.older_same_hash.pop().expect("one per notification") {
                NONE => self.newest_by_hash.remove(&h),
                older => self.newest_by_hash.insert(h, older),
            };
        }
        self.actions.truncate(mark.actions);
    }

    /// The transaction ended without committing.
    pub fn at_rollback(&mut self) {
        self.notifications.clear();
        self.newest_by_hash.clear();
        self.older_same_hash.clear();
        self.actions.clear();
    }

    /// PreCommit_Notify: before the storage commit, refuses notifications
    /// the queue has no room for (the transaction then rolls back), warns
    /// when it fills up (into `warnings`), and takes the commit order
    /// (held until `at_commit`).
    pub fn pre_commit<'a>(&self, notifier: &'a Notifier, warnings: &mut Vec<PgError>) -> PgResult<Option<MutexGuard<'a, u64>>> {
        if self.notifications.is_empty() {
            return Ok(None);
        }
        let order = notifier.commit_order.lock();
        warnings.extend(notifier.fill_warning());
        let adding: u64 = self.notifications.iter().map(|n| n.size).sum();
        if notifier.used.load(Ordering::Relaxed) + adding > notifier.capacity {
            return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "too many notifications in the NOTIFY queue"));
        }
        Ok(Some(order))
    }

    /// AtCommit_Notify, after the storage commit: applies LISTEN and
    /// UNLISTEN, then hands the notifications to the listeners and wakes
    /// those waiting for their clients. `order` is `pre_commit`'s.
    pub fn at_commit(&mut self, notifier: &Arc<Notifier>, order: Option<MutexGuard<'_, u64>>, db: Oid, pid: i32) {
        if !self.has_work() {
            return;
        }
        let actions = std::mem::take(&mut self.actions);
        let mut queued = std::mem::take(&mut self.notifications);
        self.newest_by_hash.clear();
        self.older_same_hash.clear();
        let mut wake: Vec<Wakeup> = Vec::new();
        // Committed: they hold queue space until the last listener takes them.
        debug_assert!(queued.is_empty() || order.is_some(), "notifications commit in order");
        let mut seq = order.as_deref().copied().unwrap_or(0);
        let mut total = 0;
        for n in &mut queued {
            let n = Arc::get_mut(n).expect("a pending notification is the transaction's alone");
            n.queue = Some(notifier.used.clone());
            seq += 1;
            n.seq = seq;
            total += n.size;
        }
        notifier.used.fetch_add(total, Ordering::Relaxed);
        {
            let mut listeners = notifier.listeners.lock();
            if !actions.is_empty() {
                let mut me = listeners.remove(&pid).unwrap_or_else(|| Listener {
                    db,
                    channels: Vec::new(),
                    inbox: VecDeque::new(),
                    wakeup: self.wakeup.clone(),
                });
                let mut unlistened = false;
                for a in actions {
                    match a {
                        ListenAction::Listen(c) => {
                            if !me.listens(&c) {
                                me.channels.push(c);
                            }
                        }
                        ListenAction::Unlisten(c) => {
                            me.channels.retain(|x| *x != c);
                            unlistened = true;
                        }
                        ListenAction::UnlistenAll => {
                            me.channels.clear();
                            unlistened = true;
                        }
                    }
                }
                // Notifications are delivered only on channels listened
                // on when they are delivered.
                if unlistened {
                    let Listener { inbox, channels, .. } = &mut me;
                    inbox.retain(|n| channels.iter().any(|c| **c == *n.channel));
                }
                // No channel left: out of the listeners (asyncQueueUnregister).
                if me.channels.is_empty() {
                    self.listening = None;
                } else {
                    listeners.insert(pid, me);
                    self.listening = Some((notifier.clone(), pid));
                }
            }
            if !queued.is_empty() {
                for (&listener_pid, l) in listeners.iter_mut() {
                    if l.db != db {
                        continue;
                    }
                    let was_empty = l.inbox.is_empty();
                    for n in &queued {
                        if l.listens(&n.channel) {
                            l.inbox.push_back(n.clone());
                        }
                    }
                    // A listener with notifications waiting was woken for
                    // the first of them already; the notifying session
                    // takes its own before it tells its client it is ready.
                    if was_empty && !l.inbox.is_empty() && listener_pid != pid {
                        if let Some(w) = &l.wakeup {
                            wake.push(w.clone());
                        }
                    }
                }
            }
        }
        if let Some(mut order) = order {
            *order = seq;
        }
        // Outside the locks: notifications nobody took go now.
        drop(queued);
        for w in wake {
            w();
        }
    }

    /// Takes the notifications waiting for this session, oldest first.
    pub fn take_notifications(&self) -> Inbox {
        let Some((notifier, pid)) = &self.listening else { return Inbox::new() };
        let mut listeners = notifier.listeners.lock();
        match listeners.get_mut(pid) {
            Some(l) => std::mem::take(&mut l.inbox),
            None => Inbox::new(),
        }
    }

    /// How the protocol layer wakes this session when a notification
    /// arrives while it waits for its client.
    pub fn set_wakeup(&mut self, wakeup: Wakeup) {
        self.wakeup = Some(wakeup.clone());
        if let Some((notifier, pid)) = &self.listening {
            if let Some(l) = notifier.listeners.lock().get_mut(pid) {
                l.wakeup = Some(wakeup);
            }
        }
    }
}

impl Drop for SessionNotify {
    /// Async_UnlistenOnExit: a session that ends listens no more.
    fn drop(&mut self) {
        if let Some((notifier, pid)) = self.listening.take() {
            notifier.listeners.lock().remove(&pid);
        }
    }
}

/// Async_Notify's checks of a channel name and payload.
fn check_notification(channel: &str, payload: &str) -> PgResult<()> {
    if channel.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "channel name cannot be empty"));
    }
    if channel.len() >= NAMEDATALEN {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "channel name too long"));
    }
    if payload.len() >= PAYLOAD_MAX_LENGTH {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "payload string too long"));
    }
    Ok(())
}

/// NOTIFY channel [, payload] and pg_notify(channel, payload): sent when
/// the transaction commits.
pub fn notify(s: &SqlSession, channel: Arc<str>, payload: Arc<str>) -> PgResult<()> {
    check_notification(&channel, &payload)?;
    s.notify.borrow_mut().add(channel, payload, s.pid);
    Ok(())
}

/// LISTEN channel: takes effect when the transaction commits.
pub fn listen(s: &SqlSession, channel: &str) {
    s.notify.borrow_mut().actions.push(ListenAction::Listen(channel.to_string()));
}

/// UNLISTEN channel, or UNLISTEN * (None): takes effect when the
/// transaction commits.
pub fn unlisten(s: &SqlSession, channel: Option<&str>) {
    let mut n = s.notify.borrow_mut();
    // A session that cannot be listening has nothing to undo (Async_Unlisten).
    if n.actions.is_empty() && n.listening.is_none() {
        return;
    }
    n.actions.push(match channel {
        Some(c) => ListenAction::Unlisten(c.to_string()),
        None => ListenAction::UnlistenAll,
    });
}

/// pg_listening_channels(): as committed, in the order listened to.
pub fn listening_channels(s: &SqlSession) -> Vec<String> {
    match &s.notify.borrow().listening {
        Some((notifier, pid)) => notifier.channels_of(*pid),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(n: &SessionNotify) -> Vec<(String, String)> {
        n.notifications.iter().map(|n| (n.channel.to_string(), n.payload.to_string())).collect()
    }

    impl SessionNotify {
        fn send(&mut self, channel: &str, payload: &str) {
            self.add(channel.into(), payload.into(), 12);
        }
    }

    fn pair(c: &str, p: &str) -> (String, String) {
        (c.to_string(), p.to_string())
    }

    #[test]
    fn duplicates_fold_into_the_first() {
        let mut n = SessionNotify::default();
        n.send("c2", "payload");
        n.send("c1", "");
        n.send("c2", "payload");
        n.send("c1", "p1");
        n.send("c1", "");
        assert_eq!(sent(&n), vec![pair("c2", "payload"), pair("c1", ""), pair("c1", "p1")]);
    }

    #[test]
    fn rollback_to_a_mark_forgets_later_notifications_only() {
        let mut n = SessionNotify::default();
        n.send("c1", "payload");
        let m = n.mark();
        n.send("c1", "payload");
        n.send("c1", "r1");
        n.send("c2", "r2");
        n.rollback_to(m);
        assert_eq!(sent(&n), vec![pair("c1", "payload")]);
        // What was rolled back can be sent again; what stayed still folds.
        n.send("c1", "r1");
        n.send("c1", "payload");
        assert_eq!(sent(&n), vec![pair("c1", "payload"), pair("c1", "r1")]);
    }

    #[test]
    fn listeners_get_committed_notifications_of_their_database_and_channels() {
        let notifier = Arc::new(Notifier::default());
        let mut listener = SessionNotify::default();
        listener.actions.push(ListenAction::Listen("c".into()));
        listener.at_commit(&notifier, None, 1, 10);
        assert!(listener.is_listening());
        let mut other_db = SessionNotify::default();
        other_db.actions.push(ListenAction::Listen("c".into()));
        other_db.at_commit(&notifier, None, 2, 11);

        let mut sender = SessionNotify::default();
        sender.send("c", "x");
        sender.send("d", "y");
        let order = sender.pre_commit(&notifier, &mut Vec::new()).unwrap();
        sender.at_commit(&notifier, order, 1, 12);
        let got: Vec<(String, i32)> = listener.take_notifications().iter().map(|n| (n.payload.to_string(), n.pid)).collect();
        assert_eq!(got, vec![("x".to_string(), 12)]);
        assert!(other_db.take_notifications().is_empty());
        // Taken by everyone who would: the queue is empty again.
        assert_eq!(notifier.usage(), 0.0);
    }

    #[test]
    fn a_full_queue_refuses_and_a_filling_one_warns() {
        // Room for three entries of 20 bytes ("c" and a one-byte payload).
        let notifier = Arc::new(Notifier::with_capacity(60));
        let mut l = SessionNotify::default();
        l.actions.push(ListenAction::Listen("c".into()));
        l.at_commit(&notifier, None, 1, 10);
        let mut s = SessionNotify::default();
        let mut warnings = Vec::new();
        s.send("c", "1");
        s.send("c", "2");
        let order = s.pre_commit(&notifier, &mut warnings).unwrap();
        s.at_commit(&notifier, order, 1, 11);
        assert!(warnings.is_empty());
        s.send("c", "3");
        s.send("c", "4");
        let e = s.pre_commit(&notifier, &mut warnings).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (sqlstate::PROGRAM_LIMIT_EXCEEDED, "too many notifications in the NOTIFY queue"));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].message, "NOTIFY queue is 67% full");
        assert_eq!(warnings[0].detail.as_deref(), Some("The server process with PID 10 is among those with the oldest transactions."));
        s.at_rollback();
        // Taken: room again, and no warning within the interval anyway.
        assert_eq!(l.take_notifications().len(), 2);
        s.send("c", "3");
        let order = s.pre_commit(&notifier, &mut warnings).unwrap();
        s.at_commit(&notifier, order, 1, 11);
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn unlisten_drops_what_waits_on_the_channel() {
        let notifier = Arc::new(Notifier::default());
        let mut l = SessionNotify::default();
        l.actions.push(ListenAction::Listen("a".into()));
        l.actions.push(ListenAction::Listen("b".into()));
        l.at_commit(&notifier, None, 1, 10);
        let mut s = SessionNotify::default();
        s.send("a", "1");
        s.send("b", "2");
        let order = s.pre_commit(&notifier, &mut Vec::new()).unwrap();
        s.at_commit(&notifier, order, 1, 11);
        assert!(notifier.usage() > 0.0);
        l.actions.push(ListenAction::Unlisten("a".into()));
        l.at_commit(&notifier, None, 1, 10);
        let got: Vec<String> = l.take_notifications().iter().map(|n| n.channel.to_string()).collect();
        assert_eq!(got, vec!["b".to_string()]);
        l.actions.push(ListenAction::UnlistenAll);
        l.at_commit(&notifier, None, 1, 10);
        assert!(!l.is_listening());
        assert_eq!(notifier.channels_of(10), Vec::<String>::new());
    }
}
