//! Serializable snapshot isolation (SSI): SIREAD (predicate) locks and the
//! rw-antidependencies between concurrent SERIALIZABLE transactions, as
//! PostgreSQL's `storage/lmgr/predicate.c` (README-SSI) builds them, adapted
//! to Tusk's storage.
//!
//! A SERIALIZABLE transaction runs on one snapshot, like REPEATABLE READ,
//! and is registered here as a `Sxact`. Snapshot isolation lets two
//! transactions each read what the other writes (write skew); SSI watches
//! for the rw-antidependencies this creates (T1 read a version that T2's
//! write replaced, while neither saw the other) and aborts a transaction
//! once a "dangerous structure" appears: Tin -rw-> Tpivot -rw-> Tout with
//! Tout committing first. PostgreSQL's rules decide which transaction fails
//! and with which reason code, including its read-only optimizations (a
//! read-only transaction can only fail if Tout committed before its
//! snapshot, and a READ ONLY DEFERRABLE one waits for a snapshot that is
//! safe and then runs without any of this).
//!
//! Where Tusk differs from PostgreSQL is how both sides of a conflict are
//! found, because MVCC here comes from RocksDB snapshots and a reader never
//! sees the versions it cannot see:
//! - Read before write: a read records a SIREAD lock on the key range it
//!   covered (a point read covers one key, a `scan` the range it walked), in
//!   the storage (table or index) it read. A range that covers a whole
//!   storage is a relation lock, and many ranges in one storage are promoted
//!   to a relation lock (`max_pred_locks_per_relation`). A writer checks the
//!   keys it writes against the locks of concurrent transactions: a table
//!   row key meets point reads of that row and scans of the table; an index
//!   entry meets the index ranges that scans walked, which is how an insert
//!   into a scanned range (a phantom) is seen.
//! - Write before read: PostgreSQL's reader finds a tuple whose xmin/xmax
//!   is a concurrent transaction. Tusk keeps instead the keys each
//!   serializable transaction wrote (its write set, promoted to the whole
//!   storage past a bound), so a reader checks the range it read against
//!   the write sets of the transactions its snapshot cannot see.
//!
//! Concurrency is decided with commit sequence numbers, as PostgreSQL's
//! `SerCommitSeqNo`: a transaction registers (and notes the last commit
//! number, `last_commit_before_snapshot`) before its RocksDB snapshot is
//! taken, and a commit number is handed out only after the RocksDB commit,
//! so "committed with a number <= mine" always means "visible to my
//! snapshot". The converse errs on the safe side only (a commit racing a
//! snapshot counts as concurrent).
//!
//! Committed transactions stay here, with their locks and write sets, until
//! no transaction that overlapped them runs. Past `max_finished` retained
//! transactions the oldest is summarized into one "old committed" record
//! (PostgreSQL's OldCommittedSxact plus its SLRU of xids): its locks and
//! write sets keep the newest commit number per range, and its conflicts
//! become summary flags on the transactions it touched. Every footprint has
//! a bound past which it becomes a relation-wide one, so memory stays
//! bounded by the number of sessions and storages.
//!
//! One mutex guards everything: the work under it is a few map lookups per
//! row read or written, and only SERIALIZABLE transactions ever take it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use tusk_types::{sqlstate, PgError, PgResult};

use crate::txn::Interrupt;

/// Identifies a serializable transaction here (and in the reason codes,
/// where PostgreSQL prints an xid).
pub type SxactId = u64;

/// How many predicate locks the shared table is sized for per session,
/// and the promotion thresholds: PostgreSQL 15's defaults for
/// max_pred_locks_per_transaction, max_pred_locks_per_relation and
/// max_pred_locks_per_page.
#[derive(Clone, Copy, Debug)]
pub struct PredicateLimits {
    pub max_connections: usize,
    pub max_pred_locks_per_transaction: i64,
    pub max_pred_locks_per_relation: i64,
    pub max_pred_locks_per_page: i64,
    /// Keys one transaction's write set keeps per storage before it stands
    /// for the whole storage.
    pub max_write_keys_per_relation: usize,
}

impl Default for PredicateLimits {
    fn default() -> Self {
        PredicateLimits {
            max_connections: 100,
            max_pred_locks_per_transaction: 64,
            max_pred_locks_per_relation: -2,
            max_pred_locks_per_page: 2,
            max_write_keys_per_relation: 10_000,
        }
    }
}

impl PredicateLimits {
    /// Lock ranges one transaction may hold in one relation before they
    /// become a relation lock (MaxPredicateChildLocks for a relation).
    fn ranges_per_relation(&self) -> usize {
        let n = if self.max_pred_locks_per_relation < 0 {
            self.max_pred_locks_per_transaction / -self.max_pred_locks_per_relation - 1
        } else {
            self.max_pred_locks_per_relation
        };
        n.max(0) as usize
    }

    /// Committed transactions kept in detail before the oldest is
    /// summarized (PostgreSQL sizes its SERIALIZABLEXACT pool at ten per
    /// backend).
    fn max_finished(&self) -> usize {
        (self.max_connections * 10).max(16)
    }

    /// Ranges the summary keeps per storage before it covers the storage.
    fn summary_ranges_per_relation(&self) -> usize {
        (self.max_pred_locks_per_transaction.max(10) as usize) * self.max_connections.max(1)
    }
}

// ------------------------------------------------------------------ key ranges

/// What two overlapping ranges of a summary keep of their origins.
trait Payload: Copy {
    fn merge(self, other: Self) -> Self;
}

impl Payload for () {
    fn merge(self, _: ()) {}
}

/// A summarized SIREAD lock: the newest commit number of the readers.
#[derive(Clone, Copy, Debug)]
struct OldRead {
    commit_seq: u64,
}

impl Payload for OldRead {
    fn merge(self, o: Self) -> Self {
        OldRead { commit_seq: self.commit_seq.max(o.commit_seq) }
    }
}

/// A summarized write: the newest commit number of the writers, the
/// earliest commit their rw-conflicts out reached (`NO_CONFLICT` for none),
/// and the writer to name in a reason code.
#[derive(Clone, Copy, Debug)]
struct OldWrite {
    commit_seq: u64,
    earliest_out_conflict: u64,
    writer: SxactId,
}

const NO_CONFLICT: u64 = u64::MAX;

impl Payload for OldWrite {
    fn merge(self, o: Self) -> Self {
        OldWrite {
            commit_seq: self.commit_seq.max(o.commit_seq),
            earliest_out_conflict: self.earliest_out_conflict.min(o.earliest_out_conflict),
            writer: if o.commit_seq > self.commit_seq { o.writer } else { self.writer },
        }
    }
}

/// Disjoint, non-adjacent half-open key ranges `[lo, hi)` of one storage.
#[derive(Debug)]
struct KeyRanges<P> {
    map: BTreeMap<Vec<u8>, (Vec<u8>, P)>,
}

impl<P: Payload> KeyRanges<P> {
    fn new() -> Self {
        KeyRanges { map: BTreeMap::new() }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    /// Adds `[lo, hi)`, merging it with the ranges it overlaps or touches.
    fn insert(&mut self, lo: &[u8], hi: &[u8], p: P) {
        let mut new_lo = lo.to_vec();
        let mut new_hi = hi.to_vec();
        let mut payload = p;
        if let Some((s, (e, q))) = self.map.range::<[u8], _>((Bound::Unbounded, Bound::Included(lo))).next_back() {
            if e.as_slice() >= lo {
                if e.as_slice() >= hi {
                    // Already covered: only the payload can grow.
                    let s = s.clone();
                    let entry = self.map.get_mut(&s).expect("present");
                    entry.1 = entry.1.merge(p);
                    return;
                }
                new_lo = s.clone();
                payload = payload.merge(*q);
            }
        }
        let absorbed: Vec<Vec<u8>> = self
            .map
            .range::<[u8], _>((Bound::Included(new_lo.as_slice()), Bound::Included(hi)))
            .map(|(s, _)| s.clone())
            .collect();
        for s in absorbed {
            let (e, q) = self.map.remove(&s).expect("present");
            if e > new_hi {
                new_hi = e;
            }
            payload = payload.merge(q);
        }
        self.map.insert(new_lo, (new_hi, payload));
    }

    /// The payload of the range holding `key`, if one does.
    #[cfg(test)]
    fn containing(&self, key: &[u8]) -> Option<P> {
        let (_, (e, p)) = self.map.range::<[u8], _>((Bound::Unbounded, Bound::Included(key))).next_back()?;
        (key < e.as_slice()).then_some(*p)
    }

    /// The merged payload of the ranges meeting `[lo, hi)`, if any do.
    fn meeting(&self, lo: &[u8], hi: &[u8]) -> Option<P> {
        let mut found: Option<P> = None;
        for (_, (e, p)) in self.map.range::<[u8], _>((Bound::Unbounded, Bound::Excluded(hi))).rev() {
            if e.as_slice() <= lo {
                break;
            }
            found = Some(found.map_or(*p, |f| f.merge(*p)));
        }
        found
    }

    fn merged(&self) -> Option<P> {
        self.map.values().map(|(_, p)| *p).reduce(|a, b| a.merge(b))
    }
}

/// What one transaction read (or wrote) in one storage.
#[derive(Debug)]
enum Footprint<P> {
    /// The whole storage: a relation lock, or a write set past its bound.
    Whole(P),
    Ranges(KeyRanges<P>),
}

impl<P: Payload> Footprint<P> {
    fn entries(&self) -> usize {
        match self {
            Footprint::Whole(_) => 1,
            Footprint::Ranges(r) => r.len(),
        }
    }

    fn meeting(&self, lo: &[u8], hi: &[u8]) -> Option<P> {
        match self {
            Footprint::Whole(p) => Some(*p),
            Footprint::Ranges(r) => r.meeting(lo, hi),
        }
    }

    /// Adds a range; past `bound` ranges the footprint covers the storage.
    fn add(&mut self, range: &StorageRange, p: P, bound: usize) {
        match self {
            Footprint::Whole(q) => *q = q.merge(p),
            Footprint::Ranges(r) => {
                if range.whole {
                    *self = Footprint::Whole(r.merged().map_or(p, |q| q.merge(p)));
                    return;
                }
                r.insert(&range.lo, &range.hi, p);
                // Pages of a sequential scan add up to the whole storage.
                if r.len() == 1 {
                    let start = crate::keys::storage_prefix(range.storage);
                    if let Some((lo, (hi, q))) = r.map.iter().next() {
                        if lo.as_slice() <= start.as_slice() && *hi >= crate::keys::prefix_end(&start) {
                            *self = Footprint::Whole(*q);
                            return;
                        }
                    }
                }
                if r.len() > bound {
                    let merged = r.merged().unwrap_or(p);
                    *self = Footprint::Whole(merged);
                }
            }
        }
    }

    /// Keeps only what `keep` says of each payload; true if nothing is left.
    fn retain(&mut self, keep: impl Fn(&P) -> bool) -> bool {
        match self {
            Footprint::Whole(p) => !keep(p),
            Footprint::Ranges(r) => {
                r.map.retain(|_, (_, p)| keep(p));
                r.map.is_empty()
            }
        }
    }
}

/// A key range in one storage, as a read or write reports it.
pub struct StorageRange {
    storage: u32,
    lo: Vec<u8>,
    hi: Vec<u8>,
    /// The range covers every key of the storage.
    whole: bool,
}

impl StorageRange {
    /// `[lo, hi)` within the storage whose keys `lo` starts with (a data
    /// key: `D | storage id | ...`); None for keys outside relation data.
    pub fn new(lo: &[u8], hi: &[u8]) -> Option<StorageRange> {
        if lo.first() != Some(&crate::keys::DATA_PREFIX) || lo.len() < 5 {
            return None;
        }
        let storage = u32::from_be_bytes(lo[1..5].try_into().ok()?);
        let start = &lo[..5];
        let end = crate::keys::prefix_end(start);
        let hi = if hi > end.as_slice() { end.as_slice() } else { hi };
        let whole = lo == start && hi == end.as_slice();
        Some(StorageRange { storage, lo: lo.to_vec(), hi: hi.to_vec(), whole })
    }

    /// The one key `key` (a tuple lock, or one key written).
    pub fn key(key: &[u8]) -> Option<StorageRange> {
        let mut hi = Vec::with_capacity(key.len() + 1);
        hi.extend_from_slice(key);
        hi.push(0);
        StorageRange::new(key, &hi)
    }

    /// The whole storage (TRUNCATE and the like).
    pub fn relation(storage: u32) -> StorageRange {
        let lo = crate::keys::storage_prefix(storage);
        let hi = crate::keys::prefix_end(&lo);
        StorageRange { storage, lo, hi, whole: true }
    }
}

// ------------------------------------------------------------------ transactions

/// One serializable transaction (PostgreSQL's SERIALIZABLEXACT).
#[derive(Debug, Default)]
struct Sxact {
    id: SxactId,
    pid: i32,
    last_commit_before_snapshot: u64,
    /// Numbers from the same sequence as commits; 0 = not yet.
    prepare_seq: u64,
    commit_seq: u64,
    /// Meaningful with `conflict_out`: the earliest commit among the
    /// transactions this one has a rw-conflict out to that committed first.
    earliest_out_conflict_commit: u64,
    declared_read_only: bool,
    /// Declared READ ONLY, or committed without writing.
    read_only: bool,
    did_write: bool,
    doomed: bool,
    rolled_back: bool,
    /// Has a rw-conflict out to a transaction that committed before it.
    conflict_out: bool,
    summary_conflict_in: bool,
    summary_conflict_out: bool,
    ro_safe: bool,
    ro_unsafe: bool,
    out_conflicts: HashSet<SxactId>,
    in_conflicts: HashSet<SxactId>,
    /// Read-only: the concurrent read-write transactions that could still
    /// make its snapshot unsafe. Read-write: those read-only transactions.
    possible_unsafe: HashSet<SxactId>,
    reads: HashMap<u32, Footprint<()>>,
    writes: HashMap<u32, Footprint<()>>,
}

impl Sxact {
    fn committed(&self) -> bool {
        self.commit_seq != 0
    }
    fn prepared(&self) -> bool {
        self.prepare_seq != 0
    }
    fn active(&self) -> bool {
        !self.committed() && !self.rolled_back
    }
}

fn failure(detail: String) -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to read/write dependencies among transactions")
        .with_detail(format!("Reason code: {detail}"))
        .with_hint("The transaction might succeed if retried.")
}

#[derive(Default)]
struct State {
    xacts: HashMap<SxactId, Sxact>,
    next_id: SxactId,
    last_commit_seq: u64,
    /// Registered read-write transactions not yet finished.
    writable: usize,
    /// Committed transactions still kept, in commit order.
    finished: VecDeque<SxactId>,
    /// Which transactions hold locks / wrote keys in each storage.
    readers: HashMap<u32, HashSet<SxactId>>,
    writers: HashMap<u32, HashSet<SxactId>>,
    /// The summary of transactions pushed out of `finished`.
    old_reads: HashMap<u32, Footprint<OldRead>>,
    old_writes: HashMap<u32, Footprint<OldWrite>>,
    /// The oldest snapshot among active transactions when the summary was
    /// last pruned.
    pruned_through: u64,
}

/// The predicate lock manager of one engine.
pub struct PredicateManager {
    state: Mutex<State>,
    /// Signalled when a read-only transaction may have become safe or unsafe.
    safety: Condvar,
    limits: Mutex<PredicateLimits>,
}

/// What a read reports back.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadTracking {
    Tracked,
    /// The read-only transaction's snapshot turned out safe: it has left
    /// SSI and needs no more checks (its registration is gone).
    NoLongerNeeded,
}

/// Granularity of a SIREAD lock, as pg_locks names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockGranularity {
    Relation,
    /// A key range (PostgreSQL's page locks are the nearest thing).
    Page,
    Tuple,
}

impl LockGranularity {
    pub fn locktype(self) -> &'static str {
        match self {
            LockGranularity::Relation => "relation",
            LockGranularity::Page => "page",
            LockGranularity::Tuple => "tuple",
        }
    }
}

/// One SIREAD lock, for pg_locks.
#[derive(Clone, Debug)]
pub struct PredicateLockInfo {
    pub storage: u32,
    pub granularity: LockGranularity,
    /// None for the summary of old committed transactions.
    pub pid: Option<i32>,
    pub xact: SxactId,
}

impl Default for PredicateManager {
    fn default() -> Self {
        PredicateManager::new(PredicateLimits::default())
    }
}

impl PredicateManager {
    pub fn new(limits: PredicateLimits) -> PredicateManager {
        PredicateManager { state: Mutex::new(State { next_id: 1, ..State::default() }), safety: Condvar::new(), limits: Mutex::new(limits) }
    }

    pub fn set_limits(&self, limits: PredicateLimits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }

    fn limits(&self) -> PredicateLimits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a serializable transaction; its RocksDB snapshot must be
    /// taken after this returns. None when a read-only transaction can opt
    /// out at once (no read-write serializable transaction runs).
    pub fn register(self: &Arc<Self>, read_only: bool, pid: i32) -> Option<SerializableXact> {
        let limits = self.limits();
        let mut st = self.lock();
        while st.finished.len() > limits.max_finished() {
            st.summarize_oldest(&limits);
        }
        if read_only && st.writable == 0 {
            return None;
        }
        let id = st.next_id;
        st.next_id += 1;
        let mut s = Sxact { id, pid, last_commit_before_snapshot: st.last_commit_seq, read_only, declared_read_only: read_only, ..Sxact::default() };
        if read_only {
            let writers: Vec<SxactId> = st.xacts.values().filter(|o| o.active() && !o.doomed && !o.read_only).map(|o| o.id).collect();
            if writers.is_empty() {
                return None;
            }
            for w in writers {
                s.possible_unsafe.insert(w);
                st.xacts.get_mut(&w).expect("listed").possible_unsafe.insert(id);
            }
        } else {
            st.writable += 1;
        }
        st.xacts.insert(id, s);
        Some(SerializableXact { manager: self.clone(), id, released: false })
    }

    /// READ ONLY DEFERRABLE: waits until every concurrent read-write
    /// transaction has finished (true: the snapshot is safe) or one of
    /// them made it unsafe (false: take a new snapshot and wait again).
    pub fn wait_for_safe_snapshot(&self, x: &SerializableXact, interrupt: &Interrupt) -> PgResult<bool> {
        let mut st = self.lock();
        loop {
            let Some(s) = st.xacts.get(&x.id) else { return Ok(true) };
            if s.ro_unsafe {
                return Ok(false);
            }
            if s.possible_unsafe.is_empty() {
                return Ok(true);
            }
            st = self.safety.wait_timeout(st, Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
            if let Err(e) = interrupt.check() {
                return Err(e);
            }
        }
    }

    /// The SIREAD locks held now, for pg_locks.
    pub fn lock_status(&self) -> Vec<PredicateLockInfo> {
        let st = self.lock();
        let mut out = Vec::new();
        let mut push = |storage: u32, f: &dyn Fn(&mut dyn FnMut(LockGranularity)), pid: Option<i32>, xact: SxactId| {
            f(&mut |granularity| out.push(PredicateLockInfo { storage, granularity, pid, xact }));
        };
        fn walk<P: Payload>(fp: &Footprint<P>, emit: &mut dyn FnMut(LockGranularity)) {
            match fp {
                Footprint::Whole(_) => emit(LockGranularity::Relation),
                Footprint::Ranges(r) => {
                    for (lo, (hi, _)) in &r.map {
                        let tuple = hi.len() == lo.len() + 1 && hi.starts_with(lo) && hi.last() == Some(&0);
                        emit(if tuple { LockGranularity::Tuple } else { LockGranularity::Page });
                    }
                }
            }
        }
        let mut ids: Vec<&Sxact> = st.xacts.values().collect();
        ids.sort_by_key(|s| s.id);
        for s in ids {
            let mut storages: Vec<_> = s.reads.iter().collect();
            storages.sort_by_key(|(k, _)| **k);
            for (storage, fp) in storages {
                push(*storage, &|emit| walk(fp, emit), Some(s.pid), s.id);
            }
        }
        let mut old: Vec<_> = st.old_reads.iter().collect();
        old.sort_by_key(|(k, _)| **k);
        for (storage, fp) in old {
            push(*storage, &|emit| walk(fp, emit), None, 0);
        }
        out
    }

    /// How many serializable transactions are tracked (active and
    /// committed-but-needed), and how many lock and write ranges they hold.
    pub fn tracked(&self) -> (usize, usize) {
        let st = self.lock();
        let ranges = st.xacts.values().map(|s| s.reads.values().chain(s.writes.values()).map(Footprint::entries).sum::<usize>()).sum::<usize>()
            + st.old_reads.values().map(Footprint::entries).sum::<usize>()
            + st.old_writes.values().map(Footprint::entries).sum::<usize>();
        (st.xacts.len(), ranges)
    }
}

/// A registered serializable transaction; dropping it unreleased rolls it
/// back here (a session that ends without COMMIT or ROLLBACK).
pub struct SerializableXact {
    manager: Arc<PredicateManager>,
    id: SxactId,
    released: bool,
}

impl std::fmt::Debug for SerializableXact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SerializableXact({})", self.id)
    }
}

impl SerializableXact {
    pub fn id(&self) -> SxactId {
        self.id
    }

    /// A read of `range` at the transaction snapshot (CheckForSerializableConflictOut
    /// and PredicateLockTID/Page/Relation in one): records the SIREAD lock
    /// and the rw-conflicts out to concurrent writers of the range.
    pub fn read(&self, range: &StorageRange) -> PgResult<ReadTracking> {
        let limits = self.manager.limits();
        let mut st = self.manager.lock();
        let Some(me) = st.xacts.get(&self.id) else { return Ok(ReadTracking::NoLongerNeeded) };
        if me.doomed {
            return Err(failure("Canceled on identification as a pivot, during conflict out checking.".into()));
        }
        if me.ro_safe {
            st.release(self.id, false);
            drop(st);
            self.manager.safety.notify_all();
            return Ok(ReadTracking::NoLongerNeeded);
        }
        st.add_read(self.id, range, &limits);
        st.check_conflicts_out(self.id, range)?;
        Ok(ReadTracking::Tracked)
    }

    /// A write of one key (or of the whole storage): records it in the
    /// write set and the rw-conflicts in from concurrent readers of it
    /// (CheckForSerializableConflictIn).
    pub fn write(&self, range: &StorageRange) -> PgResult<()> {
        let limits = self.manager.limits();
        let mut st = self.manager.lock();
        let Some(me) = st.xacts.get_mut(&self.id) else { return Ok(()) };
        if me.doomed {
            return Err(failure("Canceled on identification as a pivot, during conflict in checking.".into()));
        }
        me.did_write = true;
        st.add_write(self.id, range, &limits);
        st.check_conflicts_in(self.id, range)
    }

    /// Before the RocksDB commit (PreCommit_CheckForSerializationFailure):
    /// fails if this transaction was chosen to die, and dooms the pivot of
    /// a dangerous structure this commit would complete. After it the
    /// transaction is "prepared": nobody else can doom it.
    pub fn pre_commit(&self) -> PgResult<()> {
        let mut st = self.manager.lock();
        st.pre_commit(self.id)
    }

    /// After the RocksDB commit (or instead of it): keeps a committed
    /// transaction for as long as overlapping ones run; forgets a rolled
    /// back one.
    pub fn release(mut self, committed: bool) {
        self.released = true;
        self.manager.lock().release(self.id, committed);
        self.manager.safety.notify_all();
    }
}

impl Drop for SerializableXact {
    fn drop(&mut self) {
        if !self.released {
            self.manager.lock().release(self.id, false);
            self.manager.safety.notify_all();
        }
    }
}

impl State {
    fn add_read(&mut self, id: SxactId, range: &StorageRange, limits: &PredicateLimits) {
        let me = self.xacts.get_mut(&id).expect("registered");
        let fp = me.reads.entry(range.storage).or_insert_with(|| Footprint::Ranges(KeyRanges::new()));
        fp.add(range, (), limits.ranges_per_relation());
        self.readers.entry(range.storage).or_default().insert(id);
    }

    fn add_write(&mut self, id: SxactId, range: &StorageRange, limits: &PredicateLimits) {
        let me = self.xacts.get_mut(&id).expect("registered");
        let fp = me.writes.entry(range.storage).or_insert_with(|| Footprint::Ranges(KeyRanges::new()));
        fp.add(range, (), limits.max_write_keys_per_relation);
        self.writers.entry(range.storage).or_default().insert(id);
    }

    /// The reader `id` read `range`: every concurrent writer of it that the
    /// reader's snapshot cannot see is a rw-conflict out.
    fn check_conflicts_out(&mut self, id: SxactId, range: &StorageRange) -> PgResult<()> {
        let writers: Vec<SxactId> = match self.writers.get(&range.storage) {
            Some(ws) => ws
                .iter()
                .copied()
                .filter(|w| *w != id)
                .filter(|w| self.xacts.get(w).and_then(|x| x.writes.get(&range.storage)).is_some_and(|fp| fp.meeting(&range.lo, &range.hi).is_some()))
                .collect(),
            None => Vec::new(),
        };
        for w in writers {
            self.conflict_out_to(id, w)?;
        }
        if let Some(old) = self.old_writes.get(&range.storage).and_then(|fp| fp.meeting(&range.lo, &range.hi)) {
            self.conflict_out_to_old(id, old)?;
        }
        Ok(())
    }

    fn conflict_out_to(&mut self, reader: SxactId, writer: SxactId) -> PgResult<()> {
        let (r, w) = (&self.xacts[&reader], &self.xacts[&writer]);
        if w.doomed {
            return Ok(());
        }
        // The writer has a conflict out to a summarized transaction, which
        // committed first at a time nobody can compare with our snapshot.
        if w.summary_conflict_out {
            if !w.prepared() {
                self.xacts.get_mut(&writer).expect("present").doomed = true;
                return Ok(());
            }
            return Err(failure("Canceled on conflict out to old pivot.".into()));
        }
        // A read-only reader of a committed writer without a conflict out
        // to an earlier commit appears to run first: no conflict.
        if r.read_only && w.committed() && (!w.conflict_out || r.last_commit_before_snapshot < w.earliest_out_conflict_commit) {
            return Ok(());
        }
        // The write is in the reader's snapshot.
        if w.committed() && w.commit_seq <= r.last_commit_before_snapshot {
            return Ok(());
        }
        if r.out_conflicts.contains(&writer) {
            return Ok(());
        }
        self.flag_rw_conflict(reader, writer, reader)
    }

    /// The reader read keys that a summarized (old committed) transaction
    /// wrote after the reader's snapshot.
    fn conflict_out_to_old(&mut self, reader: SxactId, old: OldWrite) -> PgResult<()> {
        let r = self.xacts.get_mut(&reader).expect("registered");
        if old.commit_seq <= r.last_commit_before_snapshot {
            return Ok(());
        }
        if old.earliest_out_conflict != NO_CONFLICT && (!r.read_only || old.earliest_out_conflict <= r.last_commit_before_snapshot) {
            return Err(failure(format!("Canceled on conflict out to old pivot {}.", old.writer)));
        }
        if r.summary_conflict_in || !r.in_conflicts.is_empty() {
            return Err(failure(format!("Canceled on identification as a pivot, with conflict out to old committed transaction {}.", old.writer)));
        }
        r.summary_conflict_out = true;
        Ok(())
    }

    /// The writer `id` wrote `range`: every concurrent transaction holding a
    /// SIREAD lock on it has a rw-conflict out to the writer.
    fn check_conflicts_in(&mut self, id: SxactId, range: &StorageRange) -> PgResult<()> {
        let readers: Vec<SxactId> = match self.readers.get(&range.storage) {
            Some(rs) => rs
                .iter()
                .copied()
                .filter(|r| *r != id)
                .filter(|r| self.xacts.get(r).and_then(|x| x.reads.get(&range.storage)).is_some_and(|fp| fp.meeting(&range.lo, &range.hi).is_some()))
                .collect(),
            None => Vec::new(),
        };
        for r in readers {
            let (rx, me) = (&self.xacts[&r], &self.xacts[&id]);
            // Skip doomed readers, and readers that committed before our
            // snapshot (they precede us in any serial order).
            if rx.doomed || (rx.committed() && rx.commit_seq <= me.last_commit_before_snapshot) || rx.out_conflicts.contains(&id) {
                continue;
            }
            self.flag_rw_conflict(r, id, id)?;
        }
        if let Some(old) = self.old_reads.get(&range.storage).and_then(|fp| fp.meeting(&range.lo, &range.hi)) {
            let me = &self.xacts[&id];
            if old.commit_seq > me.last_commit_before_snapshot {
                let reader = Sxact { commit_seq: old.commit_seq, prepare_seq: old.commit_seq, ..Sxact::default() };
                if self.dangerous(&reader, me) {
                    return Err(failure("Canceled on identification as a pivot, during write.".into()));
                }
                self.xacts.get_mut(&id).expect("registered").summary_conflict_in = true;
            }
        }
        Ok(())
    }

    /// FlagRWConflict: records reader -rw-> writer, first failing (or
    /// dooming) a transaction if that completes a dangerous structure.
    /// `me` is the transaction doing the read or write.
    fn flag_rw_conflict(&mut self, reader: SxactId, writer: SxactId, me: SxactId) -> PgResult<()> {
        let (r, w) = (&self.xacts[&reader], &self.xacts[&writer]);
        if self.dangerous(r, w) {
            if me == writer {
                return Err(failure("Canceled on identification as a pivot, during write.".into()));
            } else if w.prepared() {
                return Err(failure(format!("Canceled on conflict out to pivot {writer}, during read.")));
            }
            self.xacts.get_mut(&writer).expect("present").doomed = true;
        }
        self.xacts.get_mut(&reader).expect("present").out_conflicts.insert(writer);
        self.xacts.get_mut(&writer).expect("present").in_conflicts.insert(reader);
        Ok(())
    }

    /// OnConflict_CheckForSerializationFailure: whether adding
    /// reader -rw-> writer makes a dangerous structure
    /// (Tin -rw-> Tpivot -rw-> Tout, Tout committing first).
    fn dangerous(&self, reader: &Sxact, writer: &Sxact) -> bool {
        // R -> W -> T2 where W committed with a conflict out to an earlier commit.
        if writer.committed() && (writer.conflict_out || writer.summary_conflict_out) {
            return true;
        }
        if writer.summary_conflict_out {
            return true;
        }
        // R -> W -> T2 with T2 prepared (it commits first), unless the
        // reader or the writer committed before T2, or a read-only reader
        // took its snapshot before T2 committed.
        for t2 in writer.out_conflicts.iter().filter_map(|i| self.xacts.get(i)) {
            if t2.prepared()
                && (!reader.committed() || t2.prepare_seq <= reader.commit_seq)
                && (!writer.committed() || t2.prepare_seq <= writer.commit_seq)
                && (!reader.read_only || t2.prepare_seq <= reader.last_commit_before_snapshot)
            {
                return true;
            }
        }
        // T0 -> R -> W with W prepared: the reader becomes the pivot, unless
        // T0 committed before W or is read-only and overlapped W.
        if writer.prepared() && !reader.read_only {
            if reader.summary_conflict_in {
                return true;
            }
            for t0 in reader.in_conflicts.iter().filter_map(|i| self.xacts.get(i)) {
                if !t0.doomed
                    && (!t0.committed() || t0.commit_seq >= writer.prepare_seq)
                    && (!t0.read_only || t0.last_commit_before_snapshot >= writer.prepare_seq)
                {
                    return true;
                }
            }
        }
        false
    }

    fn pre_commit(&mut self, id: SxactId) -> PgResult<()> {
        let Some(me) = self.xacts.get(&id) else { return Ok(()) };
        if me.doomed {
            return Err(failure("Canceled on identification as a pivot, during commit attempt.".into()));
        }
        let mut doom = Vec::new();
        for near in me.in_conflicts.iter().filter_map(|i| self.xacts.get(i)) {
            if near.committed() || near.doomed {
                continue;
            }
            let far_danger = near.in_conflicts.iter().filter_map(|i| self.xacts.get(i)).any(|far| far.id == id || (!far.committed() && !far.read_only && !far.doomed));
            if far_danger {
                if near.prepared() {
                    return Err(failure("Canceled on commit attempt with conflict in from prepared pivot.".into()));
                }
                doom.push(near.id);
            }
        }
        for d in doom {
            self.xacts.get_mut(&d).expect("present").doomed = true;
        }
        self.last_commit_seq += 1;
        let seq = self.last_commit_seq;
        self.xacts.get_mut(&id).expect("present").prepare_seq = seq;
        Ok(())
    }

    /// ReleasePredicateLocks.
    fn release(&mut self, id: SxactId, committed: bool) {
        let Some(mut s) = self.xacts.remove(&id) else { return };
        if committed {
            self.last_commit_seq += 1;
            s.commit_seq = self.last_commit_seq;
            if s.prepare_seq == 0 {
                s.prepare_seq = s.commit_seq;
            }
            if !s.did_write {
                s.read_only = true;
            }
        } else {
            s.doomed = true;
            s.rolled_back = true;
            s.prepare_seq = 0;
        }
        if !s.declared_read_only {
            self.writable -= 1;
        } else {
            for w in s.possible_unsafe.drain() {
                if let Some(x) = self.xacts.get_mut(&w) {
                    x.possible_unsafe.remove(&id);
                }
            }
        }
        if committed && !s.read_only && s.summary_conflict_out {
            s.earliest_out_conflict_commit = 1;
            s.conflict_out = true;
        }
        for w in s.out_conflicts.clone() {
            let Some(wx) = self.xacts.get(&w) else {
                s.out_conflicts.remove(&w);
                continue;
            };
            if committed && !s.read_only && wx.committed() {
                if !s.conflict_out || wx.prepare_seq < s.earliest_out_conflict_commit {
                    s.earliest_out_conflict_commit = wx.prepare_seq;
                }
                s.conflict_out = true;
            }
            if !committed || wx.committed() || wx.last_commit_before_snapshot >= self.last_commit_seq {
                s.out_conflicts.remove(&w);
                self.xacts.get_mut(&w).expect("present").in_conflicts.remove(&id);
            }
        }
        for r in s.in_conflicts.clone() {
            let Some(rx) = self.xacts.get(&r) else {
                s.in_conflicts.remove(&r);
                continue;
            };
            if !committed || rx.committed() || rx.read_only {
                s.in_conflicts.remove(&r);
                self.xacts.get_mut(&r).expect("present").out_conflicts.remove(&id);
            }
        }
        if !s.declared_read_only {
            for ro in s.possible_unsafe.clone() {
                let Some(rox) = self.xacts.get(&ro) else { continue };
                if committed && s.did_write && s.conflict_out && s.earliest_out_conflict_commit <= rox.last_commit_before_snapshot {
                    self.flag_unsafe(ro);
                } else {
                    let rox = self.xacts.get_mut(&ro).expect("present");
                    rox.possible_unsafe.remove(&id);
                    if rox.possible_unsafe.is_empty() {
                        rox.ro_safe = true;
                    }
                }
            }
            s.possible_unsafe.clear();
        }
        self.xacts.insert(id, s);
        if committed {
            self.finished.push_back(id);
        } else {
            self.forget(id);
        }
        self.clear_old();
    }

    /// A read-only transaction's snapshot became unsafe: it can no longer
    /// become safe, so nobody needs to track it any more.
    fn flag_unsafe(&mut self, ro: SxactId) {
        let rox = self.xacts.get_mut(&ro).expect("present");
        rox.ro_unsafe = true;
        let others: Vec<SxactId> = rox.possible_unsafe.drain().collect();
        for w in others {
            if let Some(x) = self.xacts.get_mut(&w) {
                x.possible_unsafe.remove(&ro);
            }
        }
    }

    /// Frees committed transactions that no active transaction overlaps
    /// (ClearOldPredicateLocks), and the summary's ranges likewise.
    fn clear_old(&mut self) {
        let oldest_snapshot = self.xacts.values().filter(|s| s.active()).map(|s| s.last_commit_before_snapshot).min();
        while let Some(&front) = self.finished.front() {
            let done = match (self.xacts.get(&front), oldest_snapshot) {
                (None, _) => true,
                (Some(_), None) => true,
                (Some(s), Some(oldest)) => s.commit_seq <= oldest,
            };
            if !done {
                break;
            }
            self.finished.pop_front();
            self.forget(front);
        }
        let through = oldest_snapshot.unwrap_or(self.last_commit_seq);
        if through > self.pruned_through && (!self.old_reads.is_empty() || !self.old_writes.is_empty()) {
            self.old_reads.retain(|_, fp| !fp.retain(|p| p.commit_seq > through));
            self.old_writes.retain(|_, fp| !fp.retain(|p| p.commit_seq > through));
        }
        self.pruned_through = self.pruned_through.max(through);
    }

    /// Removes a finished transaction with its locks, write set and
    /// conflicts (ReleaseOneSerializableXact).
    fn forget(&mut self, id: SxactId) {
        let Some(s) = self.xacts.remove(&id) else { return };
        for storage in s.reads.keys() {
            if let Some(set) = self.readers.get_mut(storage) {
                set.remove(&id);
                if set.is_empty() {
                    self.readers.remove(storage);
                }
            }
        }
        for storage in s.writes.keys() {
            if let Some(set) = self.writers.get_mut(storage) {
                set.remove(&id);
                if set.is_empty() {
                    self.writers.remove(storage);
                }
            }
        }
        for o in &s.out_conflicts {
            if let Some(x) = self.xacts.get_mut(o) {
                x.in_conflicts.remove(&id);
            }
        }
        for i in &s.in_conflicts {
            if let Some(x) = self.xacts.get_mut(i) {
                x.out_conflicts.remove(&id);
            }
        }
        for p in &s.possible_unsafe {
            if let Some(x) = self.xacts.get_mut(p) {
                x.possible_unsafe.remove(&id);
            }
        }
    }

    /// Pushes the oldest committed transaction into the summary
    /// (SummarizeOldestCommittedSxact).
    fn summarize_oldest(&mut self, limits: &PredicateLimits) {
        let Some(id) = self.finished.pop_front() else { return };
        let Some(s) = self.xacts.get_mut(&id) else { return };
        let reads = std::mem::take(&mut s.reads);
        let writes = std::mem::take(&mut s.writes);
        let (seq, read_only, conflict) = (s.commit_seq, s.read_only, if s.conflict_out { s.earliest_out_conflict_commit } else { NO_CONFLICT });
        let (outs, ins): (Vec<_>, Vec<_>) = (s.out_conflicts.iter().copied().collect(), s.in_conflicts.iter().copied().collect());
        let bound = limits.summary_ranges_per_relation();
        for (storage, fp) in reads {
            if let Some(set) = self.readers.get_mut(&storage) {
                set.remove(&id);
            }
            let old = self.old_reads.entry(storage).or_insert_with(|| Footprint::Ranges(KeyRanges::new()));
            merge_footprint(old, &fp, OldRead { commit_seq: seq }, bound);
        }
        for (storage, fp) in writes {
            if let Some(set) = self.writers.get_mut(&storage) {
                set.remove(&id);
            }
            if read_only {
                continue;
            }
            let old = self.old_writes.entry(storage).or_insert_with(|| Footprint::Ranges(KeyRanges::new()));
            merge_footprint(old, &fp, OldWrite { commit_seq: seq, earliest_out_conflict: conflict, writer: id }, bound);
        }
        self.readers.retain(|_, s| !s.is_empty());
        self.writers.retain(|_, s| !s.is_empty());
        for o in outs {
            if let Some(x) = self.xacts.get_mut(&o) {
                x.summary_conflict_in = true;
            }
        }
        for i in ins {
            if let Some(x) = self.xacts.get_mut(&i) {
                x.summary_conflict_out = true;
            }
        }
        self.forget(id);
    }
}

/// Folds one transaction's footprint into the summary's, tagging it with
/// `p` (the summary keeps the newest commit per range).
fn merge_footprint<P: Payload>(into: &mut Footprint<P>, from: &Footprint<()>, p: P, bound: usize) {
    match from {
        Footprint::Whole(()) => match into {
            Footprint::Whole(q) => *q = q.merge(p),
            Footprint::Ranges(r) => *into = Footprint::Whole(r.merged().map_or(p, |q| q.merge(p))),
        },
        Footprint::Ranges(r) => {
            for (lo, (hi, ())) in &r.map {
                match into {
                    Footprint::Whole(q) => {
                        *q = q.merge(p);
                        break;
                    }
                    Footprint::Ranges(to) => {
                        to.insert(lo, hi, p);
                        if to.len() > bound {
                            let merged = to.merged().unwrap_or(p);
                            *into = Footprint::Whole(merged);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(storage: u32, k: &[u8]) -> Vec<u8> {
        let mut v = crate::keys::storage_prefix(storage);
        v.extend_from_slice(k);
        v
    }

    fn point(storage: u32, k: &[u8]) -> StorageRange {
        StorageRange::key(&key(storage, k)).expect("data key")
    }

    fn range(storage: u32, lo: &[u8], hi: &[u8]) -> StorageRange {
        StorageRange::new(&key(storage, lo), &key(storage, hi)).expect("data key")
    }

    fn code(e: PgError) -> String {
        format!("{} {}", e.code, e.detail.unwrap_or_default())
    }

    #[test]
    fn ranges_merge_when_they_touch_and_answer_stabbing_queries() {
        let mut r: KeyRanges<()> = KeyRanges::new();
        r.insert(b"b", b"d", ());
        r.insert(b"f", b"h", ());
        assert_eq!(r.len(), 2);
        assert!(r.containing(b"c").is_some());
        assert!(r.containing(b"d").is_none());
        assert!(r.meeting(b"d", b"f").is_none());
        assert!(r.meeting(b"c", b"z").is_some());
        r.insert(b"d", b"f", ());
        assert_eq!(r.len(), 1);
        assert!(r.containing(b"e").is_some());
        r.insert(b"a", b"z", ());
        assert_eq!(r.len(), 1);
        assert!(r.containing(b"y").is_some());
    }

    /// The write skew of two doctors: each reads both rows, writes its own.
    #[test]
    fn write_skew_fails_the_second_committer() {
        let m = Arc::new(PredicateManager::default());
        let t1 = m.register(false, 1).expect("rw");
        let t2 = m.register(false, 2).expect("rw");
        for t in [&t1, &t2] {
            assert_eq!(t.read(&range(7, b"", b"\xff")).expect("read"), ReadTracking::Tracked);
        }
        t1.write(&point(7, b"alice")).expect("no pivot yet");
        t2.write(&point(7, b"bob")).expect("no pivot yet: nothing committed");
        t1.pre_commit().expect("first commit succeeds");
        t1.release(true);
        let e = t2.pre_commit().expect_err("pivot");
        assert!(code(e).contains("40001 Reason code: Canceled on identification as a pivot, during commit attempt."));
        t2.release(false);
        assert_eq!(m.tracked().0, 0, "nothing kept once nobody overlaps");
    }

    /// A reader of committed-before-snapshot writes sees no conflict.
    #[test]
    fn writes_visible_to_the_snapshot_are_no_conflict() {
        let m = Arc::new(PredicateManager::default());
        let w = m.register(false, 1).expect("rw");
        let keep = m.register(false, 3).expect("rw keeps w around");
        w.write(&point(7, b"k")).expect("write");
        w.pre_commit().expect("commit");
        w.release(true);
        let r = m.register(false, 2).expect("rw");
        r.read(&point(7, b"k")).expect("read");
        r.write(&point(8, b"x")).expect("write");
        r.pre_commit().expect("no conflict");
        r.release(true);
        keep.release(false);
    }

    /// Many point reads in one relation become one relation lock.
    #[test]
    fn tuple_locks_are_promoted_to_a_relation_lock() {
        let m = Arc::new(PredicateManager::default());
        let t = m.register(false, 1).expect("rw");
        for i in 0..31u32 {
            t.read(&point(9, &(i * 2).to_be_bytes())).expect("read");
        }
        assert!(m.lock_status().iter().all(|l| l.granularity == LockGranularity::Tuple));
        assert_eq!(m.lock_status().len(), 31);
        t.read(&point(9, &1000u32.to_be_bytes())).expect("read");
        let locks = m.lock_status();
        assert_eq!(locks.len(), 1);
        assert_eq!(locks[0].granularity, LockGranularity::Relation);
        t.release(false);
    }

    /// Committed transactions past the retention bound are summarized, and
    /// the summary still produces the conflicts.
    #[test]
    fn summarized_transactions_still_conflict() {
        let m = Arc::new(PredicateManager::new(PredicateLimits { max_connections: 1, ..PredicateLimits::default() }));
        let old = m.register(false, 1).expect("rw");
        // A long transaction keeps every later commit interesting.
        for i in 0..40u32 {
            let t = m.register(false, 2).expect("rw");
            t.read(&point(5, &i.to_be_bytes())).expect("read");
            t.write(&point(6, &i.to_be_bytes())).expect("write");
            t.pre_commit().expect("commit");
            t.release(true);
        }
        assert!(m.tracked().0 <= 17 + 1, "retention is bounded: {:?}", m.tracked());
        // `old` reads what a summarized transaction wrote after its
        // snapshot, and writes what one read: a pivot with both conflicts
        // summarized, caught on the write.
        old.read(&point(6, &0u32.to_be_bytes())).expect("first conflict is no failure");
        let e = old.write(&point(5, &0u32.to_be_bytes())).err();
        let e2 = old.pre_commit().err();
        assert!(e.is_some() || e2.is_some(), "the pivot must not commit");
        old.release(false);
    }

    /// A read-only transaction is safe once the writers it overlapped end
    /// without conflicts out to earlier commits.
    #[test]
    fn read_only_snapshot_becomes_safe() {
        let m = Arc::new(PredicateManager::default());
        assert!(m.register(true, 1).is_none(), "no writer: opts out at once");
        let w = m.register(false, 2).expect("rw");
        let ro = m.register(true, 3).expect("a writer runs");
        w.write(&point(4, b"a")).expect("write");
        w.pre_commit().expect("commit");
        w.release(true);
        assert!(m.wait_for_safe_snapshot(&ro, &Interrupt::default()).expect("wait"));
        assert_eq!(ro.read(&point(4, b"a")).expect("read"), ReadTracking::NoLongerNeeded);
        drop(ro);
    }
}
