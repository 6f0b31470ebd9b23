//! The storage engine: one RocksDB TransactionDB per data directory.
//!
//! Everything is addressed in one ordered key space (see `keys`): table
//! rows, index entries, the catalog and counters; relation data is stored
//! in a column family of its own (`DATA_CF`, chosen by the key's first
//! byte, so callers never name a family). RocksDB gives us the WAL with
//! group commit (a COMMIT with `sync` returns after fsync, batched with
//! concurrent committers), snapshots for MVCC, and pessimistic row locks
//! with deadlock detection.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rocksdb::{
    BlockBasedOptions, Cache, DBCompressionType, Options, SnapshotWithThreadMode, TransactionDB,
    TransactionDBOptions, WriteOptions,
};
use tusk_types::{sqlstate, PgError, PgResult};

use crate::bulk::{BaseDb, BulkWriter, BULK_FLUSH_BYTES, STAGING_DIR};
use crate::keys::{self, META_PREFIX};
use crate::txn::{Isolation, Txn};

pub type Db = TransactionDB;
pub type DbSnapshot = SnapshotWithThreadMode<'static, Db>;

/// How many values of a counter one durable reservation covers.
const COUNTER_BATCH: u64 = 64;

/// Relation data (rows and index entries: keys under `keys::DATA_PREFIX`)
/// has a column family of its own; the catalog, counters and lock keys stay
/// in the default one. Flushed memtables of a bulk load into new storage
/// then hold only that storage's keys, above every older key, so RocksDB
/// moves them down the levels without rewriting them; mixed with the
/// counters and catalog keys written meanwhile, every flushed file spanned
/// the older data and compaction rewrote it (about 40% of the CPU of
/// `pgbench -i`).
pub const DATA_CF: &str = "data";

pub struct Engine {
    db: &'static Db,
    default_cf: &'static rocksdb::ColumnFamily,
    data_cf: &'static rocksdb::ColumnFamily,
    path: PathBuf,
    counters: Mutex<HashMap<Vec<u8>, CounterState>>,
    /// The largest memtable: the room RocksDB needs to resume writing.
    write_buffer: usize,
    disk_full_watch: Mutex<DiskFullWatch>,
    /// Set by a clean shutdown so nothing starts writing afterwards.
    closed: AtomicBool,
    /// SIREAD locks and rw-conflicts of SERIALIZABLE transactions.
    predicate: Arc<crate::predicate::PredicateManager>,
    /// The database under the TransactionDB, for file ingestion (see `bulk`).
    base: Arc<BaseDb>,
    /// The options of relation data's column family, for building its SST files.
    sst_options: Options,
}

struct CounterState {
    next: u64,
    /// Values below this are durably reserved; handing out `reserved` needs a new reservation.
    reserved: u64,
}

/// Engine tuning that the server may override from settings.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub block_cache_bytes: usize,
    pub write_buffer_bytes: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions { block_cache_bytes: 64 << 20, write_buffer_bytes: 32 << 20 }
    }
}

/// The hint PostgreSQL gives with every disk-full error.
const DISK_FULL_HINT: &str = "Check free disk space.";

/// Maps a RocksDB error to the error PostgreSQL would report.
///
/// A full disk (ENOSPC, or RocksDB's own space limit) is 53100 with
/// PostgreSQL's wording and hint, naming the file relative to the data
/// directory: `could not write to file "000012.log": No space left on
/// device`. It comes from the write that hit it (usually a COMMIT's WAL
/// append) and, while RocksDB waits for space to come back, from every
/// write after it (RocksDB stops writes after a failed WAL append or flush
/// and resumes them by itself once enough space is free; see
/// `Engine::open`). Other I/O errors are 58030, corruption XX001.
pub(crate) fn storage_error(e: rocksdb::Error) -> PgError {
    storage_error_text(&e.to_string())
}

/// `storage_error` for an error RocksDB's C API gave as text (the kind is
/// its first words, as rust-rocksdb's `Error::kind` reads it).
pub(crate) fn storage_error_text(msg: &str) -> PgError {
    let msg = msg.to_string();
    match msg.split(':').next().unwrap_or("") {
        "IO error" if is_disk_full(&msg) => {
            log_disk_full(&msg);
            DISK_FULL_SEEN.store(true, Ordering::Relaxed);
            let (verb, file, os) = describe_io_error(&msg);
            let message = match file {
                Some(f) => format!("could not {verb} file \"{f}\": {os}"),
                None => format!("could not write to storage: {os}"),
            };
            PgError::new(sqlstate::DISK_FULL, message).with_hint(DISK_FULL_HINT)
        }
        "IO error" => {
            let (verb, file, os) = describe_io_error(&msg);
            let message = match file {
                Some(f) => format!("could not {verb} file \"{f}\": {os}"),
                None => format!("storage I/O error: {msg}"),
            };
            PgError::new(sqlstate::IO_ERROR, message)
        }
        "Corruption" => PgError::new(sqlstate::DATA_CORRUPTED, format!("storage corruption: {msg}")),
        _ => PgError::internal(format!("storage error: {msg}")),
    }
}

/// Set by the first disk-full error; `Engine::stuck_after_disk_full`
/// watches for the recovery from then on.
static DISK_FULL_SEEN: AtomicBool = AtomicBool::new(false);

/// Whether a RocksDB I/O error means the disk (or RocksDB's space limit) is full.
fn is_disk_full(msg: &str) -> bool {
    msg.contains("No space left on device")
        || msg.contains("Disk quota exceeded")
        || msg.contains("Space limit reached")
        || msg.contains("Max allowed space was reached")
}

/// Logs the first disk-full error, and then at most one every ten seconds,
/// so the server log says why writes fail without one line per statement.
fn log_disk_full(msg: &str) {
    use std::sync::atomic::AtomicU64;
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let last = LAST.load(Ordering::Relaxed);
    if (last == 0 || now >= last + 10) && LAST.compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        log::error!("storage: {msg}; writes fail with 53100 until space is freed, then resume on their own");
    }
}

/// Splits a RocksDB I/O error such as `IO error: No space left on device:
/// While appending to file: /data/000012.log: No space left on device`
/// into what was being done ("write to"), the file (its name within the
/// data directory) and the operating system's text.
fn describe_io_error(msg: &str) -> (&'static str, Option<String>, String) {
    let body = msg.strip_prefix("IO error: ").unwrap_or(msg);
    let parts: Vec<&str> = body.split(": ").collect();
    let os = parts.last().map(|s| s.trim().to_string()).unwrap_or_default();
    let Some(while_at) = parts.iter().position(|p| p.starts_with("While ")) else {
        return ("access", None, os);
    };
    let action = parts[while_at].to_ascii_lowercase();
    let verb = if action.contains("append") || action.contains("writ") || action.contains("allocat") {
        "write to"
    } else if action.contains("sync") {
        "fsync"
    } else if action.contains("lock") {
        "lock"
    } else if action.contains("open") || action.contains("creat") {
        "open"
    } else if action.contains("read") || action.contains("pread") {
        "read"
    } else if action.contains("renam") {
        "rename"
    } else if action.contains("truncat") {
        "truncate"
    } else if action.contains("delet") || action.contains("unlink") {
        "remove"
    } else {
        "access"
    };
    // The path follows the action (it has no ": " in a data directory
    // path we create; if it had, the operating system's text would absorb
    // the rest, which only shortens the file name shown).
    let file = parts.get(while_at + 1).filter(|_| parts.len() > while_at + 2).map(|p| {
        let p = p.trim();
        Path::new(p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| p.to_string())
    });
    (verb, file, os)
}

/// The memtable size for a filesystem of `total_bytes`: at most a
/// sixteenth of it (at least 1 MB), and never more than asked for.
///
/// RocksDB resumes writes after a disk-full error only once free space
/// reaches the largest memtable size (the room a flush needs), so on a
/// small filesystem the default 32 MB memtable would never let it resume.
fn write_buffer_for(requested: usize, total_bytes: Option<u64>) -> usize {
    match total_bytes {
        Some(total) if total > 0 => requested.min(((total / 16) as usize).max(1 << 20)),
        _ => requested,
    }
}

/// The size of the filesystem holding `dir`.
fn filesystem_bytes(dir: &Path) -> Option<u64> {
    statvfs(dir).map(|st| st.f_blocks as u64 * st.f_frsize as u64)
}

/// The bytes an unprivileged process may still write on the filesystem holding `dir`.
fn filesystem_free_bytes(dir: &Path) -> Option<u64> {
    statvfs(dir).map(|st| st.f_bavail as u64 * st.f_frsize as u64)
}

fn statvfs(dir: &Path) -> Option<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st)
}

/// How long space must have been back before a write that still fails
/// counts as stuck: RocksDB's SstFileManager checks the free space every
/// 5 s and resumes by itself when it can.
const RESUME_GRACE: std::time::Duration = std::time::Duration::from_secs(8);

/// Where `stuck_after_disk_full` stands, between two calls.
#[derive(Default)]
struct DiskFullWatch {
    /// Since when enough space has been free.
    space_back_since: Option<std::time::Instant>,
}

impl Engine {
    /// Opens (creating if needed) the engine under `dir`.
    pub fn open(dir: &Path, opts: &EngineOptions) -> PgResult<Arc<Engine>> {
        std::fs::create_dir_all(dir)
            .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not create directory \"{}\": {e}", dir.display())))?;
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_max_background_jobs(2);
        o.set_bytes_per_sync(1 << 20);
        let write_buffer = write_buffer_for(opts.write_buffer_bytes, filesystem_bytes(dir));
        if write_buffer < opts.write_buffer_bytes {
            log::info!("storage: small filesystem under \"{}\": memtables of {} kB", dir.display(), write_buffer >> 10);
        }
        o.set_write_buffer_size(write_buffer);
        // A full disk stops writes (a failed WAL append or flush is a
        // "hard" background error); RocksDB's SstFileManager (created by
        // default) polls the free space and resumes writes by itself once
        // the largest memtable fits again, so the server stays up and
        // needs no restart when space comes back.
        o.set_level_compaction_dynamic_level_bytes(true);
        // Recent levels uncompressed (they are rewritten soon), zstd below.
        // (lz4 is not linked: its bundled xxhash clashes with libpg_query's.)
        // No compression: with dynamic level sizes nearly all data sits in
        // the bottommost level, and zstd there made every read that missed
        // the block cache decompress its block (index blocks included),
        // which dominated point lookups. (lz4, cheap enough to decompress on
        // every read, is not linked: its bundled xxhash clashes with
        // libpg_query's.)
        o.set_compression_type(DBCompressionType::None);
        o.set_bottommost_compression_type(DBCompressionType::None);
        o.set_max_open_files(512);
        // Commits wait for the WAL sync; with a pipelined write the next
        // group's WAL write overlaps this group's memtable insert.
        o.set_enable_pipelined_write(true);
        // A commit group's memtable inserts are made by its leader: with
        // concurrent inserts every member thread was woken to insert its
        // few keys and then waited for the others (futex calls were 3x
        // PostgreSQL's in tpcb-like runs); bulk loads write alone anyway.
        o.set_allow_concurrent_memtable_write(false);
        // Skip a torn tail record after a crash; everything acknowledged was synced before it.
        o.set_wal_recovery_mode(rocksdb::DBRecoveryMode::PointInTime);
        let mut table = BlockBasedOptions::default();
        let cache = Cache::new_lru_cache(opts.block_cache_bytes);
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        // Index and filter blocks stay in the table readers (about 1% of
        // the data), not in the block cache where scans would evict them.
        table.set_cache_index_and_filter_blocks(false);
        o.set_block_based_table_factory(&table);
        // Bottommost files written while a snapshot was open get rewritten
        // later only to zero their sequence numbers; after a bulk load that
        // is every file the load moved down (see DATA_CF), a second full
        // write of the data for no reader's benefit. Wait a day instead.
        // (Not in rust-rocksdb's setters; the options string parser has it.)
        let mut o = o
            .get_options_from_string("bottommost_file_compaction_delay=86400")
            .map_err(|e| PgError::internal(format!("storage options: {e}")))?;
        let base = BaseDb::register(&mut o);
        // Files of a bulk load cut short by a crash (never ingested).
        let _ = std::fs::remove_dir_all(dir.join(STAGING_DIR));
        let mut topts = TransactionDBOptions::default();
        topts.set_num_stripes(64);
        skip_concurrency_control_outside_transactions(&mut topts);
        // Column families: see `DATA_CF`. The WAL is shared, so the small
        // default family must not hold old WAL files back for long.
        o.create_missing_column_families(true);
        o.set_max_total_wal_size(4 * write_buffer as u64);
        let families =
            [rocksdb::DEFAULT_COLUMN_FAMILY_NAME, DATA_CF].map(|name| rocksdb::ColumnFamilyDescriptor::new(name, o.clone()));
        let db = Db::open_cf_descriptors(&o, &topts, dir, families).map_err(|e| {
            let raw = e.to_string();
            let mut err = storage_error(e);
            if raw.contains("lock") {
                err = PgError::fatal(
                    sqlstate::OBJECT_IN_USE,
                    format!("data directory \"{}\" is in use by another server", dir.display()),
                );
            }
            err
        })?;
        // The engine lives as long as the process: transactions and snapshots
        // borrow it for 'static, which keeps them storable in sessions.
        let db: &'static Db = Box::leak(Box::new(db));
        let family = |name: &str| db.cf_handle(name).ok_or_else(|| PgError::internal(format!("column family {name} missing")));
        let engine = Arc::new(Engine {
            db,
            default_cf: family(rocksdb::DEFAULT_COLUMN_FAMILY_NAME)?,
            data_cf: family(DATA_CF)?,
            path: dir.to_path_buf(),
            counters: Mutex::new(HashMap::new()),
            write_buffer,
            disk_full_watch: Mutex::new(DiskFullWatch::default()),
            closed: AtomicBool::new(false),
            predicate: Arc::new(crate::predicate::PredicateManager::default()),
            base,
            sst_options: o.clone(),
        });
        engine.move_data_to_its_family()?;
        Ok(engine)
    }

    /// A data directory written before relation data had a column family
    /// of its own keeps it in the default family: move it over. Checked at
    /// every open (one seek), not only when the family is new, so that a
    /// move cut short by a crash is finished at the next start; copying
    /// again what was copied already writes the same values.
    fn move_data_to_its_family(&self) -> PgResult<()> {
        let (start, end) = ([keys::DATA_PREFIX], [keys::DATA_PREFIX + 1]);
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound(end);
        let mut it = self.db.raw_iterator_cf_opt(self.default_cf, ro);
        it.seek(start);
        if !it.valid() {
            return it.status().map_err(storage_error);
        }
        let mut batch = rocksdb::WriteBatchWithTransaction::<true>::default();
        let mut moved = 0u64;
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            batch.put_cf(self.data_cf, k, v);
            moved += 1;
            if batch.size_in_bytes() >= BULK_FLUSH_BYTES {
                self.db.write(std::mem::take(&mut batch)).map_err(storage_error)?;
            }
            it.next();
        }
        it.status().map_err(storage_error)?;
        drop(it);
        let mut range = rocksdb::WriteBatch::default();
        range.delete_range_cf(self.default_cf, start, end);
        self.db.write(batch).map_err(storage_error)?;
        self.db.write(rocksdb::WriteBatchWithTransaction::<true>::from_data(range.data())).map_err(storage_error)?;
        self.db.flush_cf(self.data_cf).map_err(storage_error)?;
        self.db.flush_cf(self.default_cf).map_err(storage_error)?;
        log::info!("storage: moved {moved} keys of relation data into their column family");
        Ok(())
    }

    /// The column family a key lives in.
    #[inline]
    pub fn family(&self, key: &[u8]) -> &'static rocksdb::ColumnFamily {
        if key.first() == Some(&keys::DATA_PREFIX) {
            self.data_cf
        } else {
            self.default_cf
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn db(&self) -> &'static Db {
        self.db
    }

    /// The predicate lock manager of SERIALIZABLE transactions.
    pub fn predicate(&self) -> &Arc<crate::predicate::PredicateManager> {
        &self.predicate
    }

    pub fn begin(self: &Arc<Engine>, isolation: Isolation, sync_commit: bool) -> Txn {
        Txn::new(self.clone(), isolation, sync_commit)
    }

    pub fn snapshot(&self) -> DbSnapshot {
        self.db.snapshot()
    }

    /// Reads the latest committed value, outside any transaction.
    pub fn get_latest(&self, key: &[u8]) -> PgResult<Option<Vec<u8>>> {
        self.db.get_cf(self.family(key), key).map_err(storage_error)
    }

    /// A non-transactional write (counters, cleanup), optionally synced.
    pub fn put_direct(&self, key: &[u8], value: &[u8], sync: bool) -> PgResult<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.db.put_cf_opt(self.family(key), key, value, &wo).map_err(storage_error)
    }

    /// A writer for storage that no other transaction can see yet (see
    /// `BulkWriter`).
    pub fn bulk_writer(self: &Arc<Self>) -> BulkWriter {
        BulkWriter::new(self.clone())
    }

    /// Whether the database under the TransactionDB is known, which file
    /// ingestion and `reclaim_prefix` need: RocksDB tells event listeners
    /// at the first flush; if none happened yet, a small flush of the
    /// default family brings it.
    pub(crate) fn base_db_known(&self) -> bool {
        if !self.base.known() {
            let mut probe = counter_key(b"");
            probe.extend_from_slice(b"ingestion probe");
            let flushed = self
                .put_direct(&probe, b"", false)
                .and_then(|()| self.db.flush_cf(self.default_cf).map_err(storage_error));
            if let Err(e) = flushed {
                log::warn!("storage: bulk loads go through write batches: {}", e.message);
            }
        }
        self.base.known()
    }

    /// Has RocksDB take over a finished SST file of relation data.
    pub(crate) fn ingest(&self, file: &Path) -> PgResult<()> {
        self.base.ingest(self.data_cf, file)
    }

    pub(crate) fn sst_options(&self) -> &Options {
        &self.sst_options
    }

    /// The storage ids that have data, in order (for finding storage that
    /// no catalog references any more).
    pub fn storage_ids_with_data(&self) -> PgResult<Vec<u32>> {
        let mut out = Vec::new();
        let mut it = self.db.raw_iterator_cf(self.data_cf);
        let mut seek = vec![keys::DATA_PREFIX];
        loop {
            it.seek(&seek);
            let Some(k) = it.key() else { break };
            if k.first() != Some(&keys::DATA_PREFIX) || k.len() < 5 {
                break;
            }
            let id = u32::from_be_bytes(k[1..5].try_into().expect("4 bytes"));
            out.push(id);
            if id == u32::MAX {
                break;
            }
            seek = keys::storage_prefix(id + 1);
        }
        it.status().map_err(storage_error)?;
        Ok(out)
    }

    /// The bytes of every key and value under `prefix`, as written (before
    /// RocksDB's compression), latest versions only: what the size
    /// functions (pg_relation_size ...) report for a relation's storage.
    pub fn prefix_bytes(&self, prefix: &[u8]) -> PgResult<u64> {
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound(keys::prefix_end(prefix));
        ro.fill_cache(false);
        let mut it = self.db.raw_iterator_cf_opt(self.family(prefix), ro);
        it.seek(prefix);
        let mut bytes = 0u64;
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            bytes += (k.len() + v.len()) as u64;
            it.next();
        }
        it.status().map_err(storage_error)?;
        Ok(bytes)
    }

    pub fn delete_direct(&self, key: &[u8]) -> PgResult<()> {
        self.db.delete_cf(self.family(key), key).map_err(storage_error)
    }

    /// Hands out the next value of a named counter (OIDs, hidden row ids,
    /// sequences). Values are reserved durably in batches of `batch` (0 for
    /// the default) before they are handed out, so after a crash a counter
    /// never repeats a value; a crash skips at most the rest of a batch, as
    /// PostgreSQL's sequences skip up to 32 values.
    pub fn next_counter(&self, name: &[u8], start: u64, batch: u64, durable: bool) -> PgResult<u64> {
        let batch = if batch == 0 { COUNTER_BATCH } else { batch };
        let mut counters = self.counters.lock();
        // The common case, a value of the current reservation, with one
        // lookup and no allocation (hidden row ids take one per row).
        if let Some(state) = counters.get_mut(name).filter(|s| s.next < s.reserved) {
            let v = state.next;
            state.next += 1;
            return Ok(v);
        }
        let key = counter_key(name);
        if !counters.contains_key(name) {
            let stored = self.get_latest(&key)?.map(|v| decode_u64(&v)).unwrap_or(start);
            counters.insert(name.to_vec(), CounterState { next: stored.max(start), reserved: stored.max(start) });
        }
        let state = counters.get_mut(name).expect("inserted above");
        if state.next >= state.reserved {
            let reserve_to = state.next + batch;
            self.put_direct(&key, &reserve_to.to_be_bytes(), durable)?;
            state.reserved = reserve_to;
        }
        let v = state.next;
        state.next += 1;
        Ok(v)
    }

    /// `next_counter` for a counter whose first value depends on what is
    /// stored already (a table's hidden row ids, when the table has rows
    /// from before its counter existed): `first` is asked for it only when
    /// the counter is neither in memory nor stored.
    pub fn next_counter_from(&self, name: &[u8], batch: u64, durable: bool, first: &dyn Fn() -> PgResult<u64>) -> PgResult<u64> {
        {
            let mut counters = self.counters.lock();
            if let Some(state) = counters.get_mut(name).filter(|s| s.next < s.reserved) {
                let v = state.next;
                state.next += 1;
                return Ok(v);
            }
            if counters.contains_key(name) {
                drop(counters);
                return self.next_counter(name, 1, batch, durable);
            }
        }
        let start = if self.get_latest(&counter_key(name))?.is_some() { 1 } else { first()? };
        self.next_counter(name, start, batch, durable)
    }

    /// The last key under `prefix`, committed or not (outside any
    /// transaction: for numbering, not for reading data).
    pub fn last_key(&self, prefix: &[u8]) -> PgResult<Option<Vec<u8>>> {
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_lower_bound(prefix.to_vec());
        ro.set_iterate_upper_bound(keys::prefix_end(prefix));
        let mut it = self.db.raw_iterator_cf_opt(self.family(prefix), ro);
        it.seek_to_last();
        let last = it.key().map(<[u8]>::to_vec);
        it.status().map_err(storage_error)?;
        Ok(last)
    }

    /// Moves a counter so that the next value handed out is `next` (setval, RESTART).
    pub fn set_counter(&self, name: &[u8], next: u64) -> PgResult<()> {
        let mut counters = self.counters.lock();
        self.put_direct(&counter_key(name), &next.to_be_bytes(), true)?;
        counters.insert(name.to_vec(), CounterState { next, reserved: next });
        Ok(())
    }

    pub fn drop_counter(&self, name: &[u8]) -> PgResult<()> {
        let mut counters = self.counters.lock();
        counters.remove(name);
        self.delete_direct(&counter_key(name))
    }

    /// Deletes every key with the given prefix, outside any transaction,
    /// with one range tombstone. Used after a DROP/TRUNCATE committed (or a
    /// CREATE rolled back): the storage id is never reused and no catalog
    /// names it, so nobody writes the range again; snapshots taken before
    /// the tombstone still read the keys; `reclaim_prefix` frees the files
    /// once none is left (compaction would, in time).
    pub fn delete_prefix(&self, prefix: &[u8]) -> PgResult<()> {
        // rust-rocksdb only offers delete_range on plain batches (a
        // transaction cannot hold one); the serialized batch is the same.
        let mut range = rocksdb::WriteBatch::default();
        range.delete_range_cf(self.family(prefix), prefix, &keys::prefix_end(prefix));
        let batch = rocksdb::WriteBatchWithTransaction::<true>::from_data(range.data());
        // Not synced: losing it in a crash leaves the storage orphaned,
        // and the next start deletes orphaned storage again.
        self.db.write(batch).map_err(storage_error)
    }

    /// The sequence number a `reclaim_prefix` after the deletion just made
    /// waits for (None: space is left to compaction).
    pub fn deletion_point(&self) -> Option<u64> {
        self.base_db_known().then(|| self.base.latest_sequence()).flatten()
    }

    /// Frees the space of storage deleted by `delete_prefix` at
    /// `deleted_at` (a `deletion_point`) at once, rather than when
    /// compaction gets to it (after a bulk load and its primary key, the
    /// rows loaded first sat on disk beside the rewritten table, doubling
    /// its size): the SST files wholly inside the prefix's range are
    /// removed. Their keys are hidden by the range deletion from every
    /// snapshot taken after it, so this waits (returns false) while an
    /// older snapshot lives; iterators and reads in flight keep the files
    /// they use until they finish, whatever happens here.
    pub fn reclaim_prefix(&self, prefix: &[u8], deleted_at: u64) -> PgResult<bool> {
        // 0 when no snapshot is held.
        let Some(oldest) = self.base.property_int(self.default_cf, c"rocksdb.oldest-snapshot-sequence") else {
            return Ok(false);
        };
        if oldest != 0 && oldest < deleted_at {
            return Ok(false);
        }
        self.base.delete_files_in_range(self.family(prefix), prefix, &keys::prefix_end(prefix))?;
        Ok(true)
    }

    /// Whether writes stay stopped although the disk has room again, which
    /// only reopening the database cures: RocksDB resumes by itself after
    /// a failed WAL append or flush, but under a TransactionDB (allow_2pc)
    /// a compaction that hit the full disk is a fatal background error.
    /// Called periodically by the server (cheap unless a disk-full error
    /// was seen); once space has been back for `RESUME_GRACE`, a synced
    /// probe write decides: success means RocksDB resumed (and the watch
    /// ends), a disk-full failure means stuck.
    pub fn stuck_after_disk_full(&self) -> bool {
        if !DISK_FULL_SEEN.load(Ordering::Relaxed) {
            return false;
        }
        let mut watch = self.disk_full_watch.lock();
        // The room a flush needs, and as much again for the WAL and a
        // compaction's output (RocksDB's own reserve is twice the memtable).
        let room = 2 * self.write_buffer as u64 + (4 << 20);
        if filesystem_free_bytes(&self.path).unwrap_or(0) < room {
            watch.space_back_since = None;
            return false;
        }
        let since = *watch.space_back_since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() < RESUME_GRACE {
            return false;
        }
        let mut probe = counter_key(b"");
        probe.extend_from_slice(b"disk-full probe");
        match self.put_direct(&probe, b"", true) {
            Ok(()) => {
                let _ = self.delete_direct(&probe);
                DISK_FULL_SEEN.store(false, Ordering::Relaxed);
                watch.space_back_since = None;
                log::info!("storage: writes resumed after the disk was full");
                false
            }
            Err(e) => e.code == sqlstate::DISK_FULL,
        }
    }

    /// Makes everything written so far durable (used at clean shutdown and
    /// after non-synced commits when asked).
    pub fn sync_wal(&self) -> PgResult<()> {
        self.db.flush_wal(true).map_err(storage_error)
    }

    /// Clean shutdown: sync the WAL and flush memtables so restart replays nothing.
    pub fn close(&self) -> PgResult<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.db.flush_wal(true).map_err(storage_error)?;
        self.db.flush_cf(self.data_cf).map_err(storage_error)?;
        self.db.flush_cf(self.default_cf).map_err(storage_error)
    }
}

/// Lets writes made outside transactions (`BulkWriter`, `delete_prefix`)
/// skip RocksDB's per-key lock manager; transactions still lock every key
/// they write (their TransactionOptions keep concurrency control).
///
/// Why it is safe: those writes go to storage no transaction can reach:
/// storage the writing transaction created and no committed catalog names
/// yet, or storage no catalog names any more. Locking their keys only
/// cost time (perf showed LockBatch/UnLock at ~40% of a bulk COPY), and
/// the lock manager refuses range deletions.
///
/// rust-rocksdb does not expose this option, so it is set through the C
/// API on the options handle `TransactionDBOptions` wraps, which is its
/// only field. Should a later rust-rocksdb change that layout, the size
/// check below leaves the option unset: slower bulk loads, and range
/// deletions refused (logged by the deleter), but nothing wrong.
fn skip_concurrency_control_outside_transactions(topts: &mut TransactionDBOptions) {
    type Handle = *mut librocksdb_sys::rocksdb_transactiondb_options_t;
    if std::mem::size_of::<TransactionDBOptions>() != std::mem::size_of::<Handle>()
        || std::mem::align_of::<TransactionDBOptions>() != std::mem::align_of::<Handle>()
    {
        log::warn!("storage: TransactionDBOptions layout changed; bulk writes keep per-key locks");
        return;
    }
    // SAFETY: TransactionDBOptions is a struct whose single field is the
    // C handle (same size and alignment checked above), owned by `topts`
    // and alive for this call.
    unsafe {
        let handle = *(topts as *mut TransactionDBOptions as *const Handle);
        assert!(!handle.is_null(), "TransactionDBOptions without a handle");
        librocksdb_sys::rocksdb_transactiondb_options_set_skip_concurrency_control(handle, 1);
        assert_eq!(
            librocksdb_sys::rocksdb_transactiondb_options_get_skip_concurrency_control(handle),
            1,
            "the option read back through the same handle"
        );
    }
}

fn counter_key(name: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 2);
    k.push(META_PREFIX);
    k.push(b'c');
    k.extend_from_slice(name);
    k
}

fn decode_u64(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = v.len().min(8);
    b[8 - n..].copy_from_slice(&v[..n]);
    u64::from_be_bytes(b)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn io_errors_name_the_file_and_the_cause() {
        let (verb, file, os) = describe_io_error(
            "IO error: No space left on device: While appending to file: /mnt/x/data/000012.log: No space left on device",
        );
        assert_eq!((verb, file.as_deref(), os.as_str()), ("write to", Some("000012.log"), "No space left on device"));
        let (verb, file, _) = describe_io_error("IO error: While lock file: /d/LOCK: Resource temporarily unavailable");
        assert_eq!((verb, file.as_deref()), ("lock", Some("LOCK")));
        let (verb, file, os) = describe_io_error("IO error: No space left on device");
        assert_eq!((verb, file, os.as_str()), ("access", None, "No space left on device"));
        assert!(is_disk_full("IO error: No space left on device: While appending to file: a: No space left on device"));
        assert!(!is_disk_full("IO error: While pread offset 0 len 10: /d/000010.sst: Input/output error"));
    }

    /// An engine in a fresh directory of its own (for the storage crate's tests).
    pub(crate) fn scratch_engine(name: &str) -> (Arc<Engine>, PathBuf) {
        let dir = std::env::temp_dir().join(format!("tusk-engine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (Engine::open(&dir, &EngineOptions::default()).expect("open"), dir)
    }

    fn count_prefix(engine: &Engine, prefix: &[u8]) -> usize {
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound(keys::prefix_end(prefix));
        let mut it = engine.db.raw_iterator_cf_opt(engine.family(prefix), ro);
        it.seek(prefix);
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        n
    }

    /// Bulk writes skip the lock manager, and a dropped storage id goes in
    /// one range tombstone: only its own keys, while a snapshot taken
    /// before still reads them and a transaction's keys beside it stay.
    #[test]
    fn dropped_storage_goes_in_one_range_deletion() {
        let (engine, dir) = scratch_engine("drop");
        let mut bulk = engine.bulk_writer();
        for id in [6u32, 7, 8] {
            for i in 0..1000u32 {
                let mut k = keys::storage_prefix(id);
                k.extend_from_slice(&i.to_be_bytes());
                bulk.put(&k, b"row").expect("put");
            }
        }
        bulk.flush().expect("flush");
        // A key a transaction holds locked next to the range is unaffected.
        let txn = engine.begin(Isolation::ReadCommitted, true);
        let mut beside = keys::storage_prefix(8);
        beside.push(0xFF);
        txn.put(&beside, b"txn").expect("txn put");
        let before = engine.snapshot();
        engine.delete_prefix(&keys::storage_prefix(7)).expect("delete");
        txn.commit().expect("commit");
        assert_eq!(count_prefix(&engine, &keys::storage_prefix(6)), 1000);
        assert_eq!(count_prefix(&engine, &keys::storage_prefix(7)), 0);
        assert_eq!(count_prefix(&engine, &keys::storage_prefix(8)), 1001);
        let mut k = keys::storage_prefix(7);
        k.extend_from_slice(&5u32.to_be_bytes());
        assert_eq!(before.get_cf(engine.family(&k), &k).expect("get").as_deref(), Some(&b"row"[..]), "older snapshots still read dropped storage");
        assert_eq!(engine.storage_ids_with_data().expect("ids"), vec![6, 8]);
        drop(before);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The files of dropped storage are removed once no snapshot from
    /// before the deletion is left, and only those files.
    #[test]
    fn dropped_storage_frees_its_files_when_no_snapshot_needs_them() {
        let (engine, dir) = scratch_engine("reclaim");
        let sst_bytes = || engine.base.property_int(engine.data_cf, c"rocksdb.total-sst-files-size").expect("property");
        let mut bulk = engine.bulk_writer().with_sst_start_bytes(4 << 10);
        let value = vec![b'v'; 200];
        for id in [50u32, 51] {
            for i in 0..20_000u32 {
                let mut k = keys::storage_prefix(id);
                k.extend_from_slice(&i.to_be_bytes());
                bulk.put(&k, &value).expect("put");
            }
            // Each storage id's rows in files of their own, as a load makes them.
            bulk.flush().expect("flush");
        }
        let loaded = sst_bytes();
        assert!(loaded > 6_000_000, "both loads are in SST files ({loaded} bytes)");
        let before = engine.snapshot();
        engine.delete_prefix(&keys::storage_prefix(50)).expect("delete");
        let at = engine.deletion_point().expect("base DB known after ingestion");
        assert!(!engine.reclaim_prefix(&keys::storage_prefix(50), at).expect("reclaim"), "an older snapshot holds the files");
        let mut k = keys::storage_prefix(50);
        k.extend_from_slice(&7u32.to_be_bytes());
        assert!(before.get_cf(engine.family(&k), &k).expect("get").is_some());
        drop(before);
        assert!(engine.reclaim_prefix(&keys::storage_prefix(50), at).expect("reclaim"));
        let after = sst_bytes();
        assert!(after < loaded * 6 / 10, "the dropped half is freed ({loaded} -> {after} bytes)");
        assert_eq!(count_prefix(&engine, &keys::storage_prefix(50)), 0);
        assert_eq!(count_prefix(&engine, &keys::storage_prefix(51)), 20_000);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A data directory from before relation data had its own column
    /// family: its rows move over at the first open, the rest stays.
    #[test]
    fn relation_data_moves_into_its_column_family() {
        let dir = std::env::temp_dir().join(format!("tusk-engine-migrate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut row = keys::storage_prefix(9);
        row.extend_from_slice(b"row");
        let catalog = [keys::CATALOG_PREFIX, b'x'];
        {
            let mut o = Options::default();
            o.create_if_missing(true);
            let old = Db::open(&o, &TransactionDBOptions::default(), &dir).expect("old layout");
            old.put(&row, b"r").expect("put");
            old.put(catalog, b"c").expect("put");
        }
        let engine = Engine::open(&dir, &EngineOptions::default()).expect("open");
        assert_eq!(engine.get_latest(&row).expect("get").as_deref(), Some(&b"r"[..]));
        assert_eq!(engine.get_latest(&catalog).expect("get").as_deref(), Some(&b"c"[..]));
        assert_eq!(engine.db.get_cf(engine.default_cf, &row).expect("get"), None, "moved, not copied");
        assert_eq!(engine.storage_ids_with_data().expect("ids"), vec![9]);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A move cut short by a crash (the family exists, some rows copied,
    /// all still in the default family) is finished at the next open.
    #[test]
    fn an_interrupted_move_is_finished() {
        let dir = std::env::temp_dir().join(format!("tusk-engine-migrate-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rows: Vec<Vec<u8>> = (0..3u8)
            .map(|i| {
                let mut k = keys::storage_prefix(4);
                k.push(i);
                k
            })
            .collect();
        {
            let mut o = Options::default();
            o.create_if_missing(true);
            o.create_missing_column_families(true);
            let old = Db::open_cf(&o, &TransactionDBOptions::default(), &dir, [rocksdb::DEFAULT_COLUMN_FAMILY_NAME, DATA_CF])
                .expect("half-moved layout");
            for k in &rows {
                old.put(k, b"v").expect("put");
            }
            old.put_cf(old.cf_handle(DATA_CF).expect("data family"), &rows[0], b"v").expect("copied one");
        }
        let engine = Engine::open(&dir, &EngineOptions::default()).expect("open");
        for k in &rows {
            assert_eq!(engine.get_latest(k).expect("get").as_deref(), Some(&b"v"[..]));
            assert_eq!(engine.db.get_cf(engine.default_cf, k).expect("get"), None, "moved, not copied");
        }
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn memtables_shrink_on_small_filesystems() {
        assert_eq!(write_buffer_for(32 << 20, Some(64 << 30)), 32 << 20);
        assert_eq!(write_buffer_for(32 << 20, Some(32 << 20)), 2 << 20);
        assert_eq!(write_buffer_for(32 << 20, Some(4 << 20)), 1 << 20);
        assert_eq!(write_buffer_for(32 << 20, None), 32 << 20);
        assert!(filesystem_bytes(Path::new("/")).unwrap_or(1) > 0);
    }
}
