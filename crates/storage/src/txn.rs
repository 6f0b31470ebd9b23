//! Transactions: snapshots, row locks, savepoints, commit.
//!
//! The interface is deliberately narrow (begin, get, get_for_update, put,
//! delete, scan, savepoint, commit, rollback) so that another transactional
//! store of the same shape could sit behind it.
//!
//! Isolation follows PostgreSQL:
//! - READ COMMITTED reads from a snapshot taken at the start of each
//!   statement. `get_for_update` locks the row, waiting for a concurrent
//!   writer to finish, and returns the *latest committed* version so the
//!   executor can re-check it (PostgreSQL's EvalPlanQual).
//! - REPEATABLE READ reads from one snapshot taken when the transaction
//!   first reads. Locking a row that changed after that snapshot fails with
//!   40001, as PostgreSQL's "could not serialize access due to concurrent update".
//! - SERIALIZABLE reads as REPEATABLE READ does and, in addition, reports
//!   what it reads and writes of relation data to the predicate lock
//!   manager (`predicate.rs`), which fails a transaction with 40001 when
//!   its rw-antidependencies with concurrent serializable transactions
//!   could make the outcome differ from every serial order. Transactions
//!   at other levels never touch it.
//!
//! The RocksDB transaction is created lazily: a read-only autocommit
//! statement reads straight from a snapshot and never pays for one.

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use rocksdb::{ReadOptions, TransactionOptions, WriteOptions};
use tusk_types::{sqlstate, PgError, PgResult};

use crate::engine::{storage_error, Db, DbSnapshot, Engine};
use crate::predicate::{ReadTracking, SerializableXact, StorageRange};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Runs as READ COMMITTED, as in PostgreSQL (only the name differs).
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    /// REPEATABLE READ plus serializable snapshot isolation (SSI).
    Serializable,
}

impl Isolation {
    /// Whether each statement reads at a snapshot of its own (READ
    /// COMMITTED and READ UNCOMMITTED) rather than the transaction's.
    pub fn per_statement(self) -> bool {
        matches!(self, Isolation::ReadUncommitted | Isolation::ReadCommitted)
    }
}

/// How long one lock wait lasts before the waiter checks for cancellation
/// and deadlines; the wait then resumes. It is also how long NOWAIT and
/// SKIP LOCKED wait before giving up on a row (RocksDB cannot try a lock
/// without waiting).
const LOCK_WAIT_SLICE_MS: i64 = 20;

/// Cancellation and timeouts of the statement running in a session
/// (PostgreSQL's interrupt flags, which CHECK_FOR_INTERRUPTS reads). The
/// protocol layer sets `cancel` (CancelRequest, pg_cancel_backend),
/// `terminate` (pg_terminate_backend, a fast shutdown) and `client_lost`
/// (client_connection_check_interval found the socket closed); the
/// session sets the deadlines from statement_timeout and lock_timeout.
/// Long loops in the executor, lock waits and sleeps call `check`, which
/// is one relaxed load while nothing is pending.
#[derive(Debug, Default)]
pub struct Interrupt {
    /// Set with any of the reasons below, so `check` reads one flag.
    cancel: AtomicBool,
    terminate: AtomicBool,
    client_lost: AtomicBool,
    /// Microseconds since `epoch` after which the statement times out; 0 = none.
    deadline_us: AtomicU64,
    lock_deadline_us: AtomicU64,
    /// What the statement waits for (a `Wait`), for pg_stat_activity.
    wait: std::sync::atomic::AtomicU8,
    epoch: once_epoch::Epoch,
}

/// What a statement waits for, as pg_stat_activity's wait_event_type and
/// wait_event name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    Nothing = 0,
    /// Another transaction's row (PostgreSQL waits on its transaction id).
    Row = 1,
    /// Another transaction's relation lock.
    Relation = 2,
    /// pg_sleep.
    Sleep = 3,
}

impl Wait {
    /// (wait_event_type, wait_event) as PostgreSQL reports them.
    pub fn event(self) -> Option<(&'static str, &'static str)> {
        match self {
            Wait::Nothing => None,
            Wait::Row => Some(("Lock", "transactionid")),
            Wait::Relation => Some(("Lock", "relation")),
            Wait::Sleep => Some(("Timeout", "PgSleep")),
        }
    }
}

/// Marks a wait for as long as it lives.
pub struct Waiting<'a>(&'a Interrupt);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.wait.store(Wait::Nothing as u8, Ordering::Relaxed);
    }
}

mod once_epoch {
    use std::time::Instant;
    #[derive(Debug)]
    pub struct Epoch(pub Instant);
    impl Default for Epoch {
        fn default() -> Self {
            Epoch(Instant::now())
        }
    }
}

impl Interrupt {
    pub fn new() -> Arc<Interrupt> {
        Arc::new(Interrupt::default())
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    pub fn terminate(&self) {
        self.terminate.store(true, Ordering::SeqCst);
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// The client's socket was found closed while a statement ran: the
    /// statement stops and the session ends (PostgreSQL's
    /// ClientConnectionLost).
    pub fn client_lost(&self) {
        self.client_lost.store(true, Ordering::SeqCst);
        self.cancel.store(true, Ordering::SeqCst);
    }

    pub fn is_terminated(&self) -> bool {
        self.terminate.load(Ordering::Relaxed)
    }

    pub fn is_client_lost(&self) -> bool {
        self.client_lost.load(Ordering::Relaxed)
    }

    /// Whether the session must end (terminated, or its client is gone).
    pub fn ends_session(&self) -> bool {
        self.is_terminated() || self.is_client_lost()
    }

    /// Called at the start of each statement.
    pub fn start_statement(&self, statement_timeout: Option<Duration>, lock_timeout: Option<Duration>) {
        // A cancel that arrived between statements is dropped, as
        // PostgreSQL ignores one while it reads a command; an end of the
        // session is not.
        self.cancel.store(self.ends_session(), Ordering::SeqCst);
        let now = self.epoch.0.elapsed();
        let deadline = |d: Option<Duration>| d.map(|d| (now + d).as_micros() as u64).unwrap_or(0);
        self.deadline_us.store(deadline(statement_timeout), Ordering::SeqCst);
        self.lock_deadline_us.store(deadline(lock_timeout), Ordering::SeqCst);
    }

    pub fn end_statement(&self) {
        self.deadline_us.store(0, Ordering::SeqCst);
        self.lock_deadline_us.store(0, Ordering::SeqCst);
    }

    /// The statement starts waiting for `what`, until the guard goes.
    pub fn wait_for(&self, what: Wait) -> Waiting<'_> {
        self.wait.store(what as u8, Ordering::Relaxed);
        Waiting(self)
    }

    /// What the statement waits for now.
    pub fn waiting(&self) -> Wait {
        match self.wait.load(Ordering::Relaxed) {
            1 => Wait::Row,
            2 => Wait::Relation,
            3 => Wait::Sleep,
            _ => Wait::Nothing,
        }
    }

    /// Errors with 57014 if the statement was canceled or ran past statement_timeout.
    #[inline]
    pub fn check(&self) -> PgResult<()> {
        if self.cancel.load(Ordering::Relaxed) {
            // ProcessInterrupts' order: a termination first, then a lost
            // client, then a cancel.
            if self.terminate.load(Ordering::Relaxed) {
                return Err(PgError::fatal(
                    sqlstate::ADMIN_SHUTDOWN,
                    "terminating connection due to administrator command",
                ));
            }
            if self.client_lost.load(Ordering::Relaxed) {
                return Err(PgError::fatal(sqlstate::CONNECTION_FAILURE, "connection to client lost"));
            }
            return Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request"));
        }
        let deadline = self.deadline_us.load(Ordering::Relaxed);
        if deadline != 0 && self.epoch.0.elapsed().as_micros() as u64 >= deadline {
            return Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to statement timeout"));
        }
        Ok(())
    }

    fn check_lock_wait(&self) -> PgResult<()> {
        self.check()?;
        let deadline = self.lock_deadline_us.load(Ordering::Relaxed);
        if deadline != 0 && self.epoch.0.elapsed().as_micros() as u64 >= deadline {
            return Err(PgError::new(sqlstate::LOCK_NOT_AVAILABLE, "canceling statement due to lock timeout"));
        }
        Ok(())
    }
}

type RocksTxn = rocksdb::Transaction<'static, Db>;

/// A scan in progress over one key range at a fixed snapshot (see
/// `Txn::scan_stream`). It keeps the snapshot it reads at alive.
pub struct ScanStream {
    source: ScanSource,
    interrupt: Arc<Interrupt>,
}

enum ScanSource {
    /// The session's own iterator.
    Direct {
        // Dropped before the snapshot its read options point at.
        it: rocksdb::DBRawIteratorWithThreadMode<'static, Db>,
        _snapshot: Arc<DbSnapshot>,
        reverse: bool,
    },
    /// A thread iterating ahead (`Txn::scan_stream_once`), handing over
    /// chunks of pairs (`bulk::encode_entry`); an empty chunk ends the
    /// scan. Dropping the receiver stops the thread at its next chunk.
    /// Chunks read go back to the thread through `spent` (fresh memory
    /// for every chunk cost page faults in both threads).
    Ahead { chunks: Receiver<PgResult<Vec<u8>>>, spent: SyncSender<Vec<u8>>, chunk: Vec<u8>, pos: usize, ended: bool },
}

/// Bytes of pairs in one chunk of a read-ahead scan, and chunks in flight.
const AHEAD_CHUNK_BYTES: usize = 256 << 10;
const AHEAD_CHUNKS: usize = 8;

impl ScanStream {
    /// Hands up to `max` next pairs to `f`; returns how many (0 at the end).
    pub fn next_batch(&mut self, max: usize, f: &mut dyn FnMut(&[u8], &[u8]) -> PgResult<()>) -> PgResult<usize> {
        self.interrupt.check()?;
        let mut n = 0;
        match &mut self.source {
            ScanSource::Direct { it, reverse, .. } => {
                while n < max && it.valid() {
                    if let (Some(k), Some(v)) = (it.key(), it.value()) {
                        f(k, v)?;
                        n += 1;
                    }
                    if *reverse {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
                it.status().map_err(storage_error)?;
            }
            ScanSource::Ahead { chunks, spent, chunk, pos, ended } => {
                while n < max {
                    if let Some((k, v, rest)) = crate::bulk::decode_entry(&chunk[*pos..]) {
                        *pos = chunk.len() - rest.len();
                        f(k, v)?;
                        n += 1;
                        continue;
                    }
                    if *ended {
                        break;
                    }
                    match chunks.recv() {
                        Ok(Ok(next)) if next.is_empty() => *ended = true,
                        Ok(Ok(next)) => {
                            let mut done = std::mem::replace(chunk, next);
                            *pos = 0;
                            done.clear();
                            let _ = spent.try_send(done);
                        }
                        Ok(Err(e)) => return Err(e),
                        Err(_) => return Err(PgError::internal("scan reader stopped before the end of the scan")),
                    }
                }
            }
        }
        Ok(n)
    }
}

/// The thread of a read-ahead scan: every pair of `[lower, upper)` at
/// `snapshot`, in chunks, then an empty chunk (or the error that stopped it).
fn read_ahead(
    db: &'static Db,
    cf: &'static rocksdb::ColumnFamily,
    snapshot: Arc<DbSnapshot>,
    (lower, upper): (Vec<u8>, Vec<u8>),
    to: SyncSender<PgResult<Vec<u8>>>,
    spent: Receiver<Vec<u8>>,
) {
    let new_chunk = || spent.try_recv().unwrap_or_else(|_| Vec::with_capacity(AHEAD_CHUNK_BYTES + (64 << 10)));
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&*snapshot);
    ro.set_iterate_lower_bound(lower);
    ro.set_iterate_upper_bound(upper);
    ro.fill_cache(false);
    ro.set_readahead_size(2 << 20);
    let mut it = db.raw_iterator_cf_opt(cf, ro);
    it.seek_to_first();
    let mut chunk = new_chunk();
    while let (Some(k), Some(v)) = (it.key(), it.value()) {
        crate::bulk::encode_entry(&mut chunk, k, v);
        if chunk.len() >= AHEAD_CHUNK_BYTES {
            let full = std::mem::replace(&mut chunk, new_chunk());
            if to.send(Ok(full)).is_err() {
                return; // the scan was dropped
            }
        }
        it.next();
    }
    let end = match it.status() {
        Err(e) => Err(storage_error(e)),
        Ok(()) => Ok(Vec::new()),
    };
    drop(it);
    if !chunk.is_empty() && to.send(Ok(chunk)).is_err() {
        return;
    }
    let _ = to.send(end);
}

/// One key-value pair from a scan.
pub type KeyValue = (Box<[u8]>, Box<[u8]>);

pub struct Txn {
    engine: Arc<Engine>,
    isolation: Isolation,
    sync_commit: bool,
    /// Created on first need; all methods take `&self` so that plan nodes
    /// reading and writing within one statement can share the transaction.
    inner: OnceCell<RocksTxn>,
    /// READ COMMITTED: the current statement's snapshot.
    /// (REPEATABLE READ reads at the RocksDB transaction's own snapshot.)
    snapshot: RefCell<Option<Arc<DbSnapshot>>>,
    wrote: Cell<bool>,
    /// Storage ids of the data keys this transaction wrote (a streaming
    /// scan must not skip its own writes).
    written_storage: RefCell<Vec<[u8; 4]>>,
    /// Writes kept out of the RocksDB transaction's indexed batch until
    /// something reads their storage (see `put_deferred`).
    deferred: RefCell<DeferredWrites>,
    interrupt: Arc<Interrupt>,
    /// SERIALIZABLE: the registration with the predicate lock manager,
    /// from the snapshot on. None at other levels, before the snapshot,
    /// and for a read-only transaction whose snapshot is known safe.
    ssi: RefCell<Option<SerializableXact>>,
    /// Access modes SSI needs when the snapshot is taken (READ ONLY,
    /// DEFERRABLE), and the backend to show in pg_locks.
    read_only: Cell<bool>,
    deferrable: Cell<bool>,
    backend_pid: Cell<i32>,
}

impl Txn {
    pub(crate) fn new(engine: Arc<Engine>, isolation: Isolation, sync_commit: bool) -> Txn {
        Txn {
            engine,
            isolation,
            sync_commit,
            inner: OnceCell::new(),
            snapshot: RefCell::new(None),
            wrote: Cell::new(false),
            written_storage: RefCell::new(Vec::new()),
            deferred: RefCell::new(DeferredWrites::default()),
            interrupt: Arc::new(Interrupt::default()),
            ssi: RefCell::new(None),
            read_only: Cell::new(false),
            deferrable: Cell::new(false),
            backend_pid: Cell::new(0),
        }
    }

    pub fn set_interrupt(&mut self, interrupt: Arc<Interrupt>) {
        self.interrupt = interrupt;
    }

    pub fn interrupt(&self) -> &Arc<Interrupt> {
        &self.interrupt
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Changes the isolation level; only allowed before the first statement reads.
    pub fn set_isolation(&mut self, isolation: Isolation) {
        debug_assert!(self.inner.get().is_none());
        self.isolation = isolation;
    }

    /// READ ONLY and DEFERRABLE, as they stand when the snapshot is taken
    /// (they matter to SERIALIZABLE only), and the session's pid.
    pub fn set_access_mode(&self, read_only: bool, deferrable: bool) {
        self.read_only.set(read_only);
        self.deferrable.set(deferrable);
    }

    pub fn set_backend_pid(&self, pid: i32) {
        self.backend_pid.set(pid);
    }

    /// Whether this transaction takes part in SSI now (pg_locks, tests).
    pub fn is_tracked_serializable(&self) -> bool {
        self.ssi.borrow().is_some()
    }

    pub fn set_sync_commit(&mut self, sync: bool) {
        self.sync_commit = sync;
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Whether the transaction has written anything.
    pub fn has_writes(&self) -> bool {
        self.wrote.get()
    }

    /// Marks the start of a statement: READ COMMITTED takes a fresh
    /// snapshot; REPEATABLE READ begins the RocksDB transaction with its
    /// snapshot at the first statement, as PostgreSQL takes the transaction
    /// snapshot at the first statement rather than at BEGIN. SERIALIZABLE
    /// waits for the first query (`take_snapshot`), whose READ ONLY and
    /// DEFERRABLE modes may still be set by utility statements before it.
    pub fn begin_statement(&mut self) {
        match self.isolation {
            Isolation::ReadUncommitted | Isolation::ReadCommitted => *self.snapshot.borrow_mut() = Some(Arc::new(self.engine.db().snapshot())),
            Isolation::RepeatableRead => {
                self.rocks();
            }
            Isolation::Serializable => {}
        }
    }

    /// Takes the transaction snapshot, if not taken yet, before a query
    /// runs. SERIALIZABLE READ ONLY DEFERRABLE waits here for a safe
    /// snapshot (GetSafeSnapshot): one no concurrent read-write
    /// serializable transaction can make part of an anomaly; it then runs
    /// without SSI's checks.
    pub fn take_snapshot(&self) -> PgResult<()> {
        if self.isolation != Isolation::Serializable || self.inner.get().is_some() {
            return Ok(());
        }
        if !(self.read_only.get() && self.deferrable.get()) {
            self.rocks();
            return Ok(());
        }
        let predicate = self.engine.predicate();
        loop {
            let registration = predicate.register(true, self.backend_pid.get());
            let txn = self.new_rocks_txn();
            let safe = match &registration {
                None => true,
                Some(x) => predicate.wait_for_safe_snapshot(x, &self.interrupt)?,
            };
            if safe {
                // Safe: nothing to track (the registration goes with it).
                let _ = self.inner.set(txn);
                return Ok(());
            }
            drop(txn);
        }
    }

    /// READ COMMITTED: moves the current statement's snapshot to now. DDL
    /// calls it once it holds a relation's exclusive lock: the writers it
    /// waited for have committed, and what it reads next (the rows an index
    /// build or a rewrite copies) must include their rows, as PostgreSQL's
    /// builds see every row committed before the lock was granted.
    /// REPEATABLE READ keeps its transaction snapshot.
    pub fn refresh_statement_snapshot(&self) {
        if self.isolation.per_statement() {
            *self.snapshot.borrow_mut() = Some(Arc::new(self.engine.db().snapshot()));
        }
    }

    fn rocks(&self) -> &RocksTxn {
        self.inner.get_or_init(|| {
            if self.isolation == Isolation::Serializable {
                // Registered before the snapshot is taken: every commit
                // numbered before the registration is in the snapshot.
                *self.ssi.borrow_mut() = self.engine.predicate().register(self.read_only.get(), self.backend_pid.get());
            }
            self.new_rocks_txn()
        })
    }

    fn new_rocks_txn(&self) -> RocksTxn {
        let mut wo = WriteOptions::default();
        wo.set_sync(self.sync_commit);
        let mut to = TransactionOptions::default();
        to.set_deadlock_detect(true);
        to.set_lock_timeout(LOCK_WAIT_SLICE_MS);
        // REPEATABLE READ: reads and lock validation use the snapshot
        // the transaction begins with.
        to.set_snapshot(!self.isolation.per_statement());
        self.engine.db().transaction_opt(&wo, &to)
    }

    /// SERIALIZABLE reads need the transaction snapshot to exist first.
    #[inline]
    fn serializable_snapshot(&self) {
        if self.isolation == Isolation::Serializable {
            self.rocks();
        }
    }

    /// SSI: records a read of `[lo, hi)` (or of the key `lo` when `hi` is
    /// None) with the predicate lock manager. Cheap when not tracked.
    #[inline]
    fn predicate_read(&self, lo: &[u8], hi: Option<&[u8]>) -> PgResult<()> {
        let outcome = match self.ssi.borrow().as_ref() {
            None => return Ok(()),
            Some(x) => {
                let range = match hi {
                    None => StorageRange::key(lo),
                    Some(hi) => StorageRange::new(lo, hi),
                };
                match range {
                    Some(r) => x.read(&r)?,
                    None => return Ok(()),
                }
            }
        };
        if outcome == ReadTracking::NoLongerNeeded {
            self.ssi.borrow_mut().take();
        }
        Ok(())
    }

    /// SSI: reports a write of the key to the predicate lock manager.
    #[inline]
    fn predicate_write(&self, key: &[u8]) -> PgResult<()> {
        match self.ssi.borrow().as_ref() {
            None => Ok(()),
            Some(x) => match StorageRange::key(key) {
                Some(r) => x.write(&r),
                None => Ok(()),
            },
        }
    }

    /// SSI: the whole storage is being emptied or replaced (TRUNCATE), a
    /// write of every key in it (CheckTableForSerializableConflictIn).
    pub fn predicate_write_relation(&self, storage_id: u32) -> PgResult<()> {
        self.serializable_snapshot();
        match self.ssi.borrow().as_ref() {
            None => Ok(()),
            Some(x) => x.write(&StorageRange::relation(storage_id)),
        }
    }

    fn read_options(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        match (&*self.snapshot.borrow(), self.inner.get()) {
            (Some(s), _) => ro.set_snapshot(s),
            (None, Some(txn)) => {
                // Frees only the wrapper; the transaction owns its snapshot.
                let snap = txn.snapshot();
                ro.set_snapshot(&snap);
            }
            (None, None) => {}
        }
        ro
    }

    /// Reads a key as of the statement's snapshot, including this transaction's own writes.
    pub fn get(&self, key: &[u8]) -> PgResult<Option<Vec<u8>>> {
        self.serializable_snapshot();
        self.settle_key(key);
        let ro = self.read_options();
        let cf = self.engine.family(key);
        let value = match self.inner.get() {
            Some(txn) => txn.get_cf_opt(cf, key, &ro),
            None => self.engine.db().get_cf_opt(cf, key, &ro),
        }
        .map_err(storage_error)?;
        self.predicate_read(key, None)?;
        Ok(value)
    }

    /// Reads the newest committed version of a key (plus own writes),
    /// whatever the snapshot: referential actions must see rows committed
    /// after the statement began, as PostgreSQL's RI queries do.
    pub fn get_latest(&self, key: &[u8]) -> PgResult<Option<Vec<u8>>> {
        self.settle_key(key);
        let ro = ReadOptions::default();
        let cf = self.engine.family(key);
        match self.inner.get() {
            Some(txn) => txn.get_cf_opt(cf, key, &ro),
            None => self.engine.db().get_cf_opt(cf, key, &ro),
        }
        .map_err(storage_error)
    }

    /// Locks `key` exclusively (waiting for other writers) and returns its
    /// latest committed value (READ COMMITTED) or fails with 40001 if it
    /// changed after the transaction's snapshot (REPEATABLE READ).
    pub fn get_for_update(&self, key: &[u8]) -> PgResult<Option<Vec<u8>>> {
        self.lock_key(key, true)
    }

    /// Takes a shared lock on `key` (table-level locks, foreign key checks)
    /// and returns its newest committed value, as `get_for_update` does.
    pub fn lock_shared(&self, key: &[u8]) -> PgResult<Option<Vec<u8>>> {
        self.lock_key(key, false)
    }

    /// Whether `key` holds a committed value (or this transaction's own
    /// write) that the transaction's snapshot does not show. A unique check
    /// under REPEATABLE READ that finds such a key reports a duplicate, as
    /// PostgreSQL's does, rather than a serialization failure.
    pub fn committed_since_snapshot(&self, key: &[u8]) -> PgResult<bool> {
        if self.isolation.per_statement() {
            return Ok(false);
        }
        Ok(self.get_latest(key)?.is_some() && self.get(key)?.is_none())
    }

    /// One attempt at locking `key` (NOWAIT, SKIP LOCKED): Some(newest
    /// value) once locked, None if another transaction holds it.
    pub fn try_lock(&self, key: &[u8], exclusive: bool) -> PgResult<Option<Option<Vec<u8>>>> {
        self.interrupt.check()?;
        self.settle_key(key);
        let txn = self.rocks();
        match txn.get_for_update_cf_opt(self.engine.family(key), key, exclusive, &ReadOptions::default()) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == rocksdb::ErrorKind::TimedOut => Ok(None),
            Err(e) => Err(map_write_error(e)),
        }
    }

    fn lock_key(&self, key: &[u8], exclusive: bool) -> PgResult<Option<Vec<u8>>> {
        self.settle_key(key);
        let interrupt = self.interrupt.clone();
        let mut waiting = None;
        loop {
            let txn = self.rocks();
            // No snapshot in the read options: the newest version (plus own
            // writes). Under REPEATABLE READ RocksDB validates the key
            // against the transaction snapshot and reports Busy on conflict.
            let ro = ReadOptions::default();
            match txn.get_for_update_cf_opt(self.engine.family(key), key, exclusive, &ro) {
                Ok(v) => {
                    self.predicate_read(key, None)?;
                    return Ok(v);
                }
                Err(e) if e.kind() == rocksdb::ErrorKind::TimedOut => {
                    waiting.get_or_insert_with(|| interrupt.wait_for(lock_wait(key)));
                    interrupt.check_lock_wait()?
                }
                Err(e) => return Err(map_write_error(e)),
            }
        }
    }

    /// Writes `key` (locking it, waiting for a concurrent writer if needed).
    pub fn put(&self, key: &[u8], value: &[u8]) -> PgResult<()> {
        self.write(key, Some(value))
    }

    pub fn delete(&self, key: &[u8]) -> PgResult<()> {
        self.write(key, None)
    }

    /// Writes `key` without taking its lock: for keys no other
    /// transaction can write before this one ends, which the caller
    /// vouches for. They are keys unique by construction (a new row under
    /// a hidden row id the counter handed to this transaction, an index
    /// entry ending in such a row's key) or keys whose lock this
    /// transaction holds already (a row key or unique index entry that
    /// `get_for_update` locked, an index entry ending in a row key this
    /// transaction holds locked). Locking them anyway only cost time: the
    /// lock manager's and the transaction's tables of locked keys were
    /// over half the time of inserting rows into an existing table.
    ///
    /// Everything else about the write is as `put`'s: it goes into the
    /// transaction's own batch, so the transaction reads it back and its
    /// savepoints and rollback undo it, and it is durable at commit with
    /// the rest of the batch; SERIALIZABLE reports it to the predicate
    /// lock manager. Other transactions never see it before the commit.
    pub fn put_unlocked(&self, key: &[u8], value: &[u8]) -> PgResult<()> {
        self.note_write(key)?;
        self.settle_key(key);
        let txn = self.rocks();
        let Some(raw) = raw_transaction(txn) else {
            return self.write(key, Some(value));
        };
        let cf = rocksdb::AsColumnFamilyRef::inner(&self.engine.family(key));
        // SAFETY: `raw` is the live transaction `txn` wraps (borrowed for
        // this call); the batch wrapper the C API allocates points at the
        // transaction's own batch (owned by the transaction, not by the
        // wrapper), so it is released with free(), as rust-rocksdb's
        // `Transaction::get_writebatch` releases it, never destroyed.
        unsafe {
            let batch = librocksdb_sys::rocksdb_transaction_get_writebatch_wi(raw);
            librocksdb_sys::rocksdb_writebatch_wi_put_cf(
                batch,
                cf,
                key.as_ptr() as *const std::ffi::c_char,
                key.len(),
                value.as_ptr() as *const std::ffi::c_char,
                value.len(),
            );
            librocksdb_sys::rocksdb_free(batch as *mut std::ffi::c_void);
        }
        Ok(())
    }

    /// `put_unlocked` for a key of relation data the transaction is not
    /// expected to read back soon (a row under a new hidden row id, a
    /// non-unique index entry): the write is not even indexed in the
    /// transaction's batch, RocksDB's other per-key cost (a search of its
    /// skip list per write, a quarter of an insert's time), until
    /// something reads or writes a key of the same storage through this
    /// transaction, which first moves the storage's deferred writes into
    /// the batch (`settle_key`, `settle_range`). A savepoint moves them
    /// all, so a rollback to one drops exactly the deferred writes made
    /// after it; the commit writes them with the batch, atomically.
    pub fn put_deferred(&self, key: &[u8], value: &[u8]) -> PgResult<()> {
        let Some(id) = storage_of(key) else {
            return self.put_unlocked(key, value);
        };
        if raw_transaction(self.rocks()).is_none() {
            return self.write(key, Some(value));
        }
        self.note_write(key)?;
        self.deferred.borrow_mut().push(id, key, value);
        Ok(())
    }

    /// What every write records before it is made: that the transaction
    /// wrote, in which storage (see `written_storage`), and, under
    /// SERIALIZABLE, the write itself for the predicate lock manager.
    fn note_write(&self, key: &[u8]) -> PgResult<()> {
        self.wrote.set(true);
        if key.first() == Some(&crate::keys::DATA_PREFIX) && key.len() >= 5 {
            let id: [u8; 4] = key[1..5].try_into().expect("4 bytes");
            let mut written = self.written_storage.borrow_mut();
            if !written.contains(&id) {
                written.push(id);
            }
        }
        self.serializable_snapshot();
        self.predicate_write(key)
    }

    fn write(&self, key: &[u8], value: Option<&[u8]>) -> PgResult<()> {
        self.note_write(key)?;
        // Deferred writes of the key come before this one.
        self.settle_key(key);
        let interrupt = self.interrupt.clone();
        let mut waiting = None;
        loop {
            let txn = self.rocks();
            let result = match value {
                Some(v) => txn.put_cf(self.engine.family(key), key, v),
                None => txn.delete_cf(self.engine.family(key), key),
            };
            match result {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == rocksdb::ErrorKind::TimedOut => {
                    waiting.get_or_insert_with(|| interrupt.wait_for(lock_wait(key)));
                    interrupt.check_lock_wait()?
                }
                Err(e) => return Err(map_write_error(e)),
            }
        }
    }

    /// Up to `limit` pairs with keys in `[lower, upper)`, ascending (or
    /// descending if `reverse`), as of the statement snapshot plus own writes.
    /// Scans page through a range by calling again with `lower` (or `upper`,
    /// when reversed) moved past the last key returned.
    pub fn scan(&self, lower: &[u8], upper: &[u8], reverse: bool, limit: usize) -> PgResult<Vec<KeyValue>> {
        self.serializable_snapshot();
        let out = self.scan_with(self.read_options(), lower, upper, reverse, limit)?;
        if self.ssi.borrow().is_some() {
            // The SIREAD lock covers what the scan walked: the whole range,
            // or up to the last key returned when it stopped at `limit`.
            match out.last() {
                Some((last, _)) if out.len() >= limit && !reverse => {
                    let mut hi = last.to_vec();
                    hi.push(0);
                    self.predicate_read(lower, Some(&hi))?;
                }
                Some((last, _)) if out.len() >= limit => self.predicate_read(last, Some(upper))?,
                _ => self.predicate_read(lower, Some(upper))?,
            }
        }
        Ok(out)
    }

    /// `scan` of the newest committed versions (plus own writes); see `get_latest`.
    pub fn scan_latest(&self, lower: &[u8], upper: &[u8], reverse: bool, limit: usize) -> PgResult<Vec<KeyValue>> {
        self.scan_with(ReadOptions::default(), lower, upper, reverse, limit)
    }

    /// A streaming scan of `[lower, upper)` in one storage: one iterator
    /// for the whole range (`scan` seeks anew for every page and copies
    /// every pair). Only where it sees exactly what `scan` would: at the
    /// statement's snapshot (READ COMMITTED), in storage this transaction
    /// has not written. None otherwise; the caller then pages with `scan`.
    pub fn scan_stream(&self, lower: &[u8], upper: &[u8], reverse: bool) -> Option<ScanStream> {
        self.scan_stream_with(lower, upper, reverse, false)
    }

    /// `scan_stream` for a utility command reading a whole relation once
    /// (a table rewrite, an index build): a thread of its own iterates,
    /// reading the files ahead in large pieces, while the session works
    /// on what it has read (RocksDB's iteration was half of a rewrite's
    /// session thread), and the block cache is left to the queries, as
    /// PostgreSQL's bulk reads use a small ring of buffers.
    pub fn scan_stream_once(&self, lower: &[u8], upper: &[u8]) -> Option<ScanStream> {
        self.scan_stream_with(lower, upper, false, true)
    }

    fn scan_stream_with(&self, lower: &[u8], upper: &[u8], reverse: bool, once: bool) -> Option<ScanStream> {
        if !self.isolation.per_statement() || lower.first() != Some(&crate::keys::DATA_PREFIX) || lower.len() < 5 {
            return None;
        }
        let id: [u8; 4] = lower[1..5].try_into().expect("4 bytes");
        if upper.len() >= 5 && upper[1..5] != id && !(upper.len() == 5 && u32::from_be_bytes(upper[1..5].try_into().ok()?) == u32::from_be_bytes(id) + 1) {
            // The range crosses storage ids: keep to the general path.
            return None;
        }
        if self.written_storage.borrow().contains(&id) {
            return None;
        }
        let snapshot = self.snapshot.borrow().clone()?;
        if once && !reverse {
            let (to, chunks) = std::sync::mpsc::sync_channel(AHEAD_CHUNKS);
            let (spent, spare) = std::sync::mpsc::sync_channel(AHEAD_CHUNKS + 1);
            let (db, cf, snap) = (self.engine.db(), self.engine.family(lower), snapshot.clone());
            let range = (lower.to_vec(), upper.to_vec());
            match std::thread::Builder::new().name("tusk-scan-ahead".into()).spawn(move || read_ahead(db, cf, snap, range, to, spare)) {
                Ok(_) => {
                    let source = ScanSource::Ahead { chunks, spent, chunk: Vec::new(), pos: 0, ended: false };
                    return Some(ScanStream { source, interrupt: self.interrupt.clone() });
                }
                // No thread to be had: the session iterates itself.
                Err(e) => log::warn!("storage: scanning without read-ahead: {e}"),
            }
        }
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&*snapshot);
        ro.set_iterate_lower_bound(lower.to_vec());
        ro.set_iterate_upper_bound(upper.to_vec());
        let mut it = self.engine.db().raw_iterator_cf_opt(self.engine.family(lower), ro);
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        Some(ScanStream { source: ScanSource::Direct { it, _snapshot: snapshot, reverse }, interrupt: self.interrupt.clone() })
    }

    /// How many keys `[lower, upper)` holds, newest versions plus own
    /// writes (counting what a bulk load wrote, without copying it).
    pub fn count_latest(&self, lower: &[u8], upper: &[u8]) -> PgResult<u64> {
        self.settle_range(lower, upper);
        let mut ro = ReadOptions::default();
        ro.set_iterate_lower_bound(lower.to_vec());
        ro.set_iterate_upper_bound(upper.to_vec());
        let mut n = 0u64;
        macro_rules! count {
            ($it:expr) => {{
                let mut it = $it;
                it.seek_to_first();
                while it.valid() {
                    n += 1;
                    if n % 65536 == 0 {
                        self.interrupt.check()?;
                    }
                    it.next();
                }
                it.status().map_err(storage_error)?;
            }};
        }
        let cf = self.engine.family(lower);
        match self.inner.get() {
            Some(txn) => count!(txn.raw_iterator_cf_opt(cf, ro)),
            None => count!(self.engine.db().raw_iterator_cf_opt(cf, ro)),
        }
        Ok(n)
    }

    fn scan_with(&self, mut ro: ReadOptions, lower: &[u8], upper: &[u8], reverse: bool, limit: usize) -> PgResult<Vec<KeyValue>> {
        self.settle_range(lower, upper);
        ro.set_iterate_lower_bound(lower.to_vec());
        ro.set_iterate_upper_bound(upper.to_vec());
        let mut out = Vec::with_capacity(limit.min(1024));
        macro_rules! collect {
            ($it:expr) => {{
                let mut it = $it;
                if reverse {
                    it.seek_to_last();
                } else {
                    it.seek_to_first();
                }
                while it.valid() && out.len() < limit {
                    if let (Some(k), Some(v)) = (it.key(), it.value()) {
                        out.push((Box::from(k), Box::from(v)));
                    }
                    if reverse {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
                it.status().map_err(storage_error)?;
            }};
        }
        // A range lies in one column family (scans stay within a prefix).
        let cf = self.engine.family(lower);
        match self.inner.get() {
            Some(txn) => collect!(txn.raw_iterator_cf_opt(cf, ro)),
            None => collect!(self.engine.db().raw_iterator_cf_opt(cf, ro)),
        }
        Ok(out)
    }

    pub fn savepoint(&self) {
        // Deferred writes are older than the savepoint: into the batch
        // before it, so that only writes made after it are ever deferred
        // and a rollback to it drops exactly those.
        self.settle_all();
        self.rocks().set_savepoint();
    }

    pub fn rollback_to_savepoint(&self) -> PgResult<()> {
        self.deferred.borrow_mut().clear();
        self.rocks().rollback_to_savepoint().map_err(storage_error)
    }

    /// Undoes everything and releases every lock, but keeps the transaction
    /// object (isolation, read-only) until the client ends the block: an
    /// error aborts a PostgreSQL transaction at once, so a deadlock victim
    /// frees its rows for the survivor before the client says ROLLBACK.
    pub fn abort_work(&mut self) {
        if let Some(x) = self.ssi.get_mut().take() {
            x.release(false);
        }
        *self.snapshot.get_mut() = None;
        self.wrote.set(false);
        self.deferred.get_mut().clear();
        if let Some(txn) = self.inner.take() {
            let _ = txn.rollback();
        }
    }

    /// Commits; with `sync_commit` it returns only after the WAL is on disk.
    pub fn commit(mut self) -> PgResult<()> {
        *self.snapshot.get_mut() = None;
        let ssi = self.ssi.get_mut().take();
        if let Some(x) = ssi.as_ref() {
            if let Err(e) = x.pre_commit() {
                if let Some(txn) = self.inner.take() {
                    let _ = txn.rollback();
                }
                return Err(e);
            }
        }
        let deferred = std::mem::take(self.deferred.get_mut());
        let result = match self.inner.take() {
            Some(txn) if self.wrote.get() && !deferred.is_empty() => self.commit_with_deferred(txn, &deferred),
            Some(txn) if self.wrote.get() => txn.commit().map_err(|e| match e.kind() {
                rocksdb::ErrorKind::Busy | rocksdb::ErrorKind::TryAgain => serialization_failure(),
                _ => storage_error(e),
            }),
            Some(txn) => txn.rollback().map_err(storage_error),
            None => Ok(()),
        };
        if let Some(x) = ssi {
            x.release(result.is_ok());
        }
        result
    }

    /// The commit of a transaction with deferred writes: its batch and
    /// the deferred writes after it (they are newer than anything of their
    /// keys in the batch) go to the database in one atomic write, synced
    /// as a commit is; only then are the transaction's locks released (by
    /// rolling back what is now an empty shell), as a commit releases them
    /// after its write. The write skips the lock manager (see
    /// `engine::skip_concurrency_control_outside_transactions`): the keys
    /// are locked by this transaction or out of others' reach.
    fn commit_with_deferred(&self, txn: RocksTxn, deferred: &DeferredWrites) -> PgResult<()> {
        let mut batch = txn.get_writebatch();
        let mut rest = &deferred.entries[..];
        while let Some((k, v, tail)) = crate::bulk::decode_entry(rest) {
            batch.put_cf(self.engine.family(k), k, v);
            rest = tail;
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(self.sync_commit);
        let written = self.engine.db().write_opt(batch, &wo).map_err(storage_error);
        let _ = txn.rollback();
        written
    }

    /// Moves deferred writes into the transaction's batch before the key
    /// is read or written through it.
    #[inline]
    fn settle_key(&self, key: &[u8]) {
        if self.deferred.borrow().is_empty() {
            return;
        }
        if let Some(id) = storage_of(key) {
            self.settle_where(&|s| s == id);
        }
    }

    /// `settle_key` for the keys of `[lower, upper)`.
    #[inline]
    fn settle_range(&self, lower: &[u8], upper: &[u8]) {
        if self.deferred.borrow().is_empty() {
            return;
        }
        self.settle_where(&|id| {
            let mut prefix = [crate::keys::DATA_PREFIX, 0, 0, 0, 0];
            prefix[1..].copy_from_slice(&id);
            let end = crate::keys::prefix_end(&prefix);
            lower < &end[..] && &prefix[..] < upper
        });
    }

    fn settle_all(&self) {
        if !self.deferred.borrow().is_empty() {
            self.settle_where(&|_| true);
        }
    }

    /// Moves the deferred writes of the storage ids `which` picks into the
    /// transaction's batch, in the order they were made.
    fn settle_where(&self, which: &dyn Fn([u8; 4]) -> bool) {
        let mut deferred = self.deferred.borrow_mut();
        if !deferred.storages.iter().any(|&id| which(id)) {
            return;
        }
        let txn = self.rocks();
        let raw = raw_transaction(txn).expect("writes are deferred only with the transaction's handle at hand");
        let cf = rocksdb::AsColumnFamilyRef::inner(&self.engine.family(&[crate::keys::DATA_PREFIX]));
        let entries = std::mem::take(&mut deferred.entries);
        deferred.storages.clear();
        let mut rest = &entries[..];
        // SAFETY: as in `put_unlocked`: the wrapper points at the live
        // transaction's own batch and is freed, not destroyed.
        unsafe {
            let batch = librocksdb_sys::rocksdb_transaction_get_writebatch_wi(raw);
            while let Some((k, v, tail)) = crate::bulk::decode_entry(rest) {
                let id = storage_of(k).expect("deferred keys are relation data");
                if which(id) {
                    librocksdb_sys::rocksdb_writebatch_wi_put_cf(
                        batch,
                        cf,
                        k.as_ptr() as *const std::ffi::c_char,
                        k.len(),
                        v.as_ptr() as *const std::ffi::c_char,
                        v.len(),
                    );
                } else {
                    deferred.push(id, k, v);
                }
                rest = tail;
            }
            librocksdb_sys::rocksdb_free(batch as *mut std::ffi::c_void);
        }
    }

    pub fn rollback(mut self) {
        if let Some(x) = self.ssi.get_mut().take() {
            x.release(false);
        }
        *self.snapshot.get_mut() = None;
        if let Some(txn) = self.inner.take() {
            let _ = txn.rollback();
        }
    }
}

/// Writes of relation data not yet in the transaction's indexed batch
/// (`Txn::put_deferred`), in the order made.
#[derive(Default)]
struct DeferredWrites {
    /// Pairs as `bulk::encode_entry` lays them out.
    entries: Vec<u8>,
    /// The storage ids of their keys.
    storages: Vec<[u8; 4]>,
}

impl DeferredWrites {
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn push(&mut self, id: [u8; 4], key: &[u8], value: &[u8]) {
        if self.storages.last() != Some(&id) && !self.storages.contains(&id) {
            self.storages.push(id);
        }
        crate::bulk::encode_entry(&mut self.entries, key, value);
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.storages.clear();
    }
}

/// The storage id of a key of relation data.
#[inline]
fn storage_of(key: &[u8]) -> Option<[u8; 4]> {
    if key.first() == Some(&crate::keys::DATA_PREFIX) && key.len() >= 5 {
        key[1..5].try_into().ok()
    } else {
        None
    }
}

/// The C handle of a RocksDB transaction, for the calls rust-rocksdb does
/// not wrap (`Txn::put_unlocked`). `Transaction` is a struct whose one
/// field that is not zero-sized is that handle; should a later
/// rust-rocksdb change its layout, the size check gives None and the
/// callers take the locking path: slower, nothing wrong.
fn raw_transaction(txn: &RocksTxn) -> Option<*mut librocksdb_sys::rocksdb_transaction_t> {
    type Handle = *mut librocksdb_sys::rocksdb_transaction_t;
    if std::mem::size_of::<RocksTxn>() != std::mem::size_of::<Handle>() || std::mem::align_of::<RocksTxn>() != std::mem::align_of::<Handle>() {
        return None;
    }
    // SAFETY: same size and alignment as the handle, checked above, and
    // the handle is the struct's only field with any bytes.
    let raw = unsafe { *(txn as *const RocksTxn as *const Handle) };
    (!raw.is_null()).then_some(raw)
}

/// What waiting for `key`'s lock is: relation locks have keys of their
/// own; everything else is a row (or catalog entry) another transaction
/// wrote.
fn lock_wait(key: &[u8]) -> Wait {
    if key.first() == Some(&crate::keys::LOCK_PREFIX) {
        Wait::Relation
    } else {
        Wait::Row
    }
}

fn serialization_failure() -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent update")
}

fn map_write_error(e: rocksdb::Error) -> PgError {
    match e.kind() {
        rocksdb::ErrorKind::Busy if e.to_string().contains("Deadlock") => {
            PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
                .with_detail("Process waits for a lock held by another transaction, which waits for this one.")
        }
        rocksdb::ErrorKind::Busy | rocksdb::ErrorKind::TryAgain => serialization_failure(),
        _ => storage_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::scratch_engine;
    use crate::keys;

    /// A write without its lock is the transaction's own until it commits:
    /// read back by the transaction (point reads and scans), unseen by
    /// others, undone by a rollback to a savepoint and by a rollback, and
    /// in the database after the commit. A key the transaction locked
    /// before writing it so stays locked until the commit.
    #[test]
    fn unlocked_writes_are_the_transactions_own_until_commit() {
        let (engine, dir) = scratch_engine("unlocked");
        let key = |i: u32| {
            let mut k = keys::storage_prefix(90);
            k.extend_from_slice(&i.to_be_bytes());
            k
        };
        let (lower, upper) = (keys::storage_prefix(90), keys::prefix_end(&keys::storage_prefix(90)));
        let mut txn = engine.begin(Isolation::ReadCommitted, true);
        txn.begin_statement();
        txn.put_unlocked(&key(1), b"one").expect("put");
        assert_eq!(txn.get(&key(1)).expect("get").as_deref(), Some(&b"one"[..]));
        let mut other = engine.begin(Isolation::ReadCommitted, true);
        other.begin_statement();
        assert_eq!(other.get(&key(1)).expect("get"), None);
        assert_eq!(other.get_latest(&key(1)).expect("get"), None);
        txn.savepoint();
        assert_eq!(txn.get_for_update(&key(2)).expect("lock"), None);
        txn.put_unlocked(&key(2), b"two").expect("put");
        txn.put_unlocked(&key(3), b"three").expect("put");
        assert_eq!(txn.scan(&lower, &upper, false, 10).expect("scan").len(), 3);
        txn.rollback_to_savepoint().expect("rollback to savepoint");
        assert_eq!(txn.scan(&lower, &upper, false, 10).expect("scan").len(), 1);
        assert_eq!(other.try_lock(&key(2), true).expect("try"), Some(None), "the savepoint's lock went with it");
        other.rollback();
        assert_eq!(txn.get_for_update(&key(2)).expect("lock"), None);
        txn.put_unlocked(&key(2), b"two again").expect("put");
        let other = engine.begin(Isolation::ReadCommitted, true);
        assert_eq!(other.try_lock(&key(2), true).expect("try"), None, "locked by the writer until it commits");
        txn.commit().expect("commit");
        assert_eq!(other.try_lock(&key(2), true).expect("try"), Some(Some(b"two again".to_vec())));
        other.rollback();
        assert_eq!(engine.get_latest(&key(1)).expect("get").as_deref(), Some(&b"one"[..]));
        assert_eq!(engine.get_latest(&key(3)).expect("get"), None);
        let gone = engine.begin(Isolation::RepeatableRead, true);
        gone.put_unlocked(&key(4), b"four").expect("put");
        gone.rollback();
        assert_eq!(engine.get_latest(&key(4)).expect("get"), None);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Deferred writes are read back by the transaction (each storage as
    /// it is read, point reads, scans and counts alike), stay unseen by
    /// others, are kept by a savepoint and dropped by a rollback to a
    /// later one, and commit atomically with the transaction's other
    /// writes, newest value last.
    #[test]
    fn deferred_writes_settle_when_read_and_commit_with_the_rest() {
        let (engine, dir) = scratch_engine("deferred");
        let key = |id: u32, i: u32| {
            let mut k = keys::storage_prefix(id);
            k.extend_from_slice(&i.to_be_bytes());
            k
        };
        let range = |id: u32| (keys::storage_prefix(id), keys::prefix_end(&keys::storage_prefix(id)));
        let mut txn = engine.begin(Isolation::ReadCommitted, true);
        txn.begin_statement();
        for i in 0..10 {
            txn.put_deferred(&key(91, i), b"row").expect("put");
            txn.put_deferred(&key(92, i), b"entry").expect("put");
        }
        assert!(txn.has_writes());
        let (lo, hi) = range(91);
        assert_eq!(txn.scan(&lo, &hi, false, 100).expect("scan").len(), 10, "the scanned storage settles");
        assert_eq!(txn.deferred.borrow().storages, vec![92u32.to_be_bytes()], "the other storage stays deferred");
        assert_eq!(txn.get(&key(92, 3)).expect("get").as_deref(), Some(&b"entry"[..]));
        assert!(txn.deferred.borrow().is_empty());
        txn.put_deferred(&key(93, 1), b"counted").expect("put");
        let (lo, hi) = range(93);
        assert_eq!(txn.count_latest(&lo, &hi).expect("count"), 1);
        let mut other = engine.begin(Isolation::ReadCommitted, true);
        other.begin_statement();
        assert_eq!(other.get_latest(&key(91, 1)).expect("get"), None);
        // Kept by a savepoint, dropped by a rollback to a later one.
        txn.put_deferred(&key(94, 1), b"before").expect("put");
        txn.savepoint();
        txn.put_deferred(&key(94, 2), b"after").expect("put");
        txn.put_deferred(&key(94, 1), b"overwritten after").expect("put");
        txn.rollback_to_savepoint().expect("rollback to savepoint");
        let (lo, hi) = range(94);
        let kept = txn.scan(&lo, &hi, false, 10).expect("scan");
        assert_eq!(kept.len(), 1);
        assert_eq!(&kept[0].1[..], b"before");
        // A locked write of a key, then a deferred one: the deferred is newer.
        txn.put(&key(95, 1), b"locked").expect("put");
        txn.put_deferred(&key(95, 1), b"deferred").expect("put");
        txn.put_deferred(&key(96, 1), b"never read").expect("put");
        txn.commit().expect("commit");
        assert_eq!(engine.get_latest(&key(95, 1)).expect("get").as_deref(), Some(&b"deferred"[..]));
        assert_eq!(engine.get_latest(&key(96, 1)).expect("get").as_deref(), Some(&b"never read"[..]));
        assert_eq!(engine.get_latest(&key(94, 2)).expect("get"), None);
        assert_eq!(engine.get_latest(&key(91, 9)).expect("get").as_deref(), Some(&b"row"[..]));
        other.rollback();
        let mut gone = engine.begin(Isolation::ReadCommitted, true);
        gone.begin_statement();
        gone.put_deferred(&key(97, 1), b"aborted").expect("put");
        gone.abort_work();
        gone.rollback();
        assert_eq!(engine.get_latest(&key(97, 1)).expect("get"), None);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A read-ahead scan hands over every pair of its range in order (and
    /// nothing beside it), and one dropped early does not hold anything up.
    #[test]
    fn a_read_ahead_scan_sees_the_whole_range_in_order() {
        let (engine, dir) = scratch_engine("read-ahead");
        let mut bulk = engine.bulk_writer();
        for id in [70u32, 71, 72] {
            for i in 0..60_000u32 {
                let mut k = keys::storage_prefix(id);
                k.extend_from_slice(&i.to_be_bytes());
                bulk.put(&k, format!("{id}:{i}").as_bytes()).expect("put");
            }
        }
        bulk.flush().expect("flush");
        let (lower, upper) = (keys::storage_prefix(71), keys::prefix_end(&keys::storage_prefix(71)));
        let mut txn = engine.begin(Isolation::ReadCommitted, true);
        txn.begin_statement();
        let mut stream = txn.scan_stream_once(&lower, &upper).expect("a stream");
        assert!(matches!(stream.source, ScanSource::Ahead { .. }));
        let mut seen = 0u32;
        while stream
            .next_batch(1000, &mut |k, v| {
                assert_eq!(&k[..5], &lower[..]);
                assert_eq!(v, format!("71:{seen}").as_bytes());
                seen += 1;
                Ok(())
            })
            .expect("batch")
            > 0
        {}
        assert_eq!(seen, 60_000);
        let mut early = txn.scan_stream_once(&lower, &upper).expect("a stream");
        assert_eq!(early.next_batch(10, &mut |_, _| Ok(())).expect("batch"), 10);
        drop(early);
        drop(stream);
        txn.rollback();
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }
}
