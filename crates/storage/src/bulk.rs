//! Bulk loads: writing rows around the transaction into storage that no
//! other transaction can see yet, and, when they come in key order,
//! without RocksDB's write path at all.
//!
//! A bulk writer is given the keys of one statement or table rewrite (a
//! COPY into a table created or truncated by the same transaction, a table
//! rewrite onto a primary key, an index build). Keys of each storage id
//! (a table's rows, or one index's entries) form a *run*. While a run's
//! keys come strictly increasing, as they do for a COPY's hidden row ids
//! or a rewrite onto a primary key loaded in key order, the run is written
//! as SST files by a loader thread and handed to RocksDB whole (external
//! file ingestion): no WAL, no memtable, no flush and no compaction; the
//! file lands in the bottommost level. That takes the per-key write path
//! off the session thread and uses the second core for building the files.
//! Keys out of order (or a small run) go through write batches as before.
//!
//! Ingestion needs RocksDB's `rocksdb_t` handle, which rust-rocksdb's
//! TransactionDB does not expose; RocksDB passes its base DB to event
//! listeners, so a listener registered at open keeps it (`BaseDb`).

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use librocksdb_sys as ffi;
use rocksdb::{AsColumnFamilyRef, AsRawPtr, Options, WriteOptions};
use tusk_types::{PgError, PgResult};

use crate::engine::{storage_error, storage_error_text, Engine};
use crate::keys;

/// Bytes of write batch buffered before a bulk writer writes it.
pub(crate) const BULK_FLUSH_BYTES: usize = 4 << 20;

/// When a run's ordered keys reach this many bytes, they are loaded as SST
/// files; smaller loads are not worth a file (its fsync and a MANIFEST
/// write).
const SST_START_BYTES: usize = 4 << 20;

/// Entries handed to a loader thread at a time.
const CHUNK_BYTES: usize = 1 << 20;

/// Chunks in flight to a loader thread: bounds a load's memory.
const CHUNKS_IN_FLIGHT: usize = 4;

/// An SST file is ingested when it reaches this size (RocksDB's default
/// target file size).
const SST_FILE_BYTES: u64 = 64 << 20;

/// The directory, inside the data directory, where SST files are built
/// before RocksDB takes them over (moved, so it must be the same
/// filesystem). Whatever is left there at open is from a load cut short.
pub(crate) const STAGING_DIR: &str = "bulk-load";

/// Writes rows straight into the database, outside any transaction, for
/// bulk loads into storage that only the writing transaction can reach:
/// storage it created (CREATE TABLE, TRUNCATE, a table rewrite), which no
/// committed catalog names yet. This skips what a transaction costs per
/// key (a lock, a copy in its write batch held until commit), so a load of
/// millions of rows runs in bounded memory.
///
/// The caller owns the consequences: if the transaction rolls back, the
/// storage must be deleted (nothing else references it). Batch-written
/// keys are in the WAL, unsynced, and the transaction's own synced commit
/// makes them durable with it (syncing the WAL syncs everything written
/// before); ingested files are synced by RocksDB when it takes them.
pub struct BulkWriter {
    engine: Arc<Engine>,
    batch: rocksdb::WriteBatchWithTransaction<true>,
    bytes: usize,
    runs: Vec<Run>,
    sst_start_bytes: usize,
}

/// The keys a bulk writer puts into one storage id.
struct Run {
    /// `keys::storage_prefix` of the storage id.
    prefix: [u8; 5],
    /// Whether every key so far came after the one before.
    ordered: bool,
    /// The last key put while ordered.
    last: Vec<u8>,
    /// Ordered entries not yet written (`encode_entry`): held back until
    /// the run is large enough for a loader, or handed to it in chunks.
    pending: Vec<u8>,
    loader: Option<Loader>,
}

impl BulkWriter {
    pub(crate) fn new(engine: Arc<Engine>) -> BulkWriter {
        BulkWriter { engine, batch: new_batch(), bytes: 0, runs: Vec::new(), sst_start_bytes: SST_START_BYTES }
    }

    pub fn put(&mut self, key: &[u8], value: &[u8]) -> PgResult<()> {
        if let Some(i) = self.run_index(key) {
            let run = &mut self.runs[i];
            if run.ordered {
                if key > run.last.as_slice() {
                    run.last.clear();
                    run.last.extend_from_slice(key);
                    encode_entry(&mut run.pending, key, value);
                    return self.ship(i);
                }
                // Out of order: what came before is written first, so that
                // a key written twice keeps its later value.
                self.unorder(i)?;
            }
        }
        self.batch_put(key, value)
    }

    /// Writes what is buffered; afterwards it is readable by anyone who
    /// knows the storage id.
    pub fn flush(&mut self) -> PgResult<()> {
        for i in 0..self.runs.len() {
            let run = &mut self.runs[i];
            match run.loader.take() {
                Some(loader) => loader.finish(std::mem::take(&mut run.pending))?,
                None => {
                    let pending = std::mem::take(&mut run.pending);
                    self.batch_entries(&pending)?;
                }
            }
        }
        self.write_batch()
    }

    /// The run of the storage id `key` belongs to, if it is relation data.
    fn run_index(&mut self, key: &[u8]) -> Option<usize> {
        if key.len() < 5 || key[0] != keys::DATA_PREFIX {
            return None;
        }
        let prefix: [u8; 5] = key[..5].try_into().expect("5 bytes");
        if let Some(i) = self.runs.iter().position(|r| r.prefix == prefix) {
            return Some(i);
        }
        self.runs.push(Run { prefix, ordered: true, last: Vec::new(), pending: Vec::new(), loader: None });
        Some(self.runs.len() - 1)
    }

    /// Moves a run's pending entries on when there are enough: to a new
    /// loader once the run is large, then to it chunk by chunk.
    fn ship(&mut self, i: usize) -> PgResult<()> {
        let run = &mut self.runs[i];
        match &mut run.loader {
            Some(loader) if run.pending.len() >= CHUNK_BYTES => {
                let chunk = loader.spare_chunk();
                let full = std::mem::replace(&mut run.pending, chunk);
                loader.send(full)
            }
            None if run.pending.len() >= self.sst_start_bytes => {
                // Without the base DB or a thread, the run goes through
                // write batches as smaller ones do.
                let started = if self.engine.base_db_known() { Loader::start(self.engine.clone(), run.prefix) } else { None };
                let Some(mut loader) = started else {
                    return self.unorder(i);
                };
                let chunk = loader.spare_chunk();
                let full = std::mem::replace(&mut run.pending, chunk);
                let sent = loader.send(full);
                run.loader = Some(loader);
                sent
            }
            _ => Ok(()),
        }
    }

    /// Stops loading run `i` in order: what its loader has is ingested,
    /// what it holds back goes to the batch, and its later keys too.
    fn unorder(&mut self, i: usize) -> PgResult<()> {
        let run = &mut self.runs[i];
        run.ordered = false;
        run.last = Vec::new();
        let pending = std::mem::take(&mut run.pending);
        match run.loader.take() {
            Some(loader) => loader.finish(pending),
            None => self.batch_entries(&pending),
        }
    }

    fn batch_entries(&mut self, mut entries: &[u8]) -> PgResult<()> {
        while let Some((k, v, rest)) = decode_entry(entries) {
            self.batch_put(k, v)?;
            entries = rest;
        }
        Ok(())
    }

    fn batch_put(&mut self, key: &[u8], value: &[u8]) -> PgResult<()> {
        self.batch.put_cf(self.engine.family(key), key, value);
        self.bytes += key.len() + value.len() + 8;
        if self.bytes >= BULK_FLUSH_BYTES {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> PgResult<()> {
        if self.bytes == 0 {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, new_batch());
        self.bytes = 0;
        let mut wo = WriteOptions::default();
        wo.set_sync(false);
        self.engine.db().write_opt(batch, &wo).map_err(storage_error)
    }

    #[cfg(test)]
    pub(crate) fn with_sst_start_bytes(mut self, bytes: usize) -> BulkWriter {
        self.sst_start_bytes = bytes;
        self
    }

    #[cfg(test)]
    pub(crate) fn loading_runs(&self) -> usize {
        self.runs.iter().filter(|r| r.loader.is_some()).count()
    }
}

/// A batch with room for a whole flush: growing the batch's buffer by
/// doubling copied it over and over (perf: a few % of a bulk COPY).
fn new_batch() -> rocksdb::WriteBatchWithTransaction<true> {
    rocksdb::WriteBatchWithTransaction::<true>::with_capacity_bytes(BULK_FLUSH_BYTES + (64 << 10))
}

/// Appends one key/value to an entry buffer: lengths first, little-endian.
pub(crate) fn encode_entry(buf: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    buf.extend_from_slice(&(key.len() as u32).to_le_bytes());
    buf.extend_from_slice(&(value.len() as u32).to_le_bytes());
    buf.extend_from_slice(key);
    buf.extend_from_slice(value);
}

/// The first entry of a buffer written by `encode_entry`, and the rest.
pub(crate) fn decode_entry(buf: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    if buf.len() < 8 {
        return None;
    }
    let klen = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes")) as usize;
    let vlen = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes")) as usize;
    let rest = &buf[8..];
    assert!(rest.len() >= klen + vlen, "entry buffer cut short");
    Some((&rest[..klen], &rest[klen..klen + vlen], &rest[klen + vlen..]))
}

enum LoaderMsg {
    Chunk(Vec<u8>),
    /// Ingest what was sent and stop. A loader whose sender goes away
    /// without this (the statement failed) stops without ingesting.
    Finish,
}

/// A thread that builds SST files from one run's entries, in order, and
/// has RocksDB ingest each as it fills.
struct Loader {
    to_thread: Option<SyncSender<LoaderMsg>>,
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<PgResult<()>>>,
}

impl Loader {
    fn start(engine: Arc<Engine>, prefix: [u8; 5]) -> Option<Loader> {
        let (to_thread, from_session) = sync_channel(CHUNKS_IN_FLIGHT);
        let (give_back, spare) = sync_channel(CHUNKS_IN_FLIGHT + 1);
        let storage_id = u32::from_be_bytes(prefix[1..5].try_into().expect("4 bytes"));
        let thread = std::thread::Builder::new()
            .name("tusk-bulk-load".into())
            .spawn(move || load_files(&engine, storage_id, from_session, give_back))
            .map_err(|e| log::warn!("storage: bulk load through write batches: {e}"))
            .ok()?;
        Some(Loader { to_thread: Some(to_thread), spare, thread: Some(thread) })
    }

    /// A buffer for the next chunk, reusing one the thread is done with.
    fn spare_chunk(&mut self) -> Vec<u8> {
        self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES + (64 << 10)))
    }

    fn send(&mut self, chunk: Vec<u8>) -> PgResult<()> {
        let sent = self.to_thread.as_ref().map(|t| t.send(LoaderMsg::Chunk(chunk)));
        match sent {
            Some(Ok(())) => Ok(()),
            // The thread stopped: it failed, and says why when joined.
            _ => self.join().and(Err(PgError::internal("bulk loader stopped"))),
        }
    }

    /// Sends the last entries, and waits until everything is ingested.
    fn finish(mut self, last: Vec<u8>) -> PgResult<()> {
        if !last.is_empty() {
            self.send(last)?;
        }
        if let Some(t) = self.to_thread.take() {
            let _ = t.send(LoaderMsg::Finish);
        }
        self.join()
    }

    fn join(&mut self) -> PgResult<()> {
        self.to_thread = None;
        match self.thread.take().map(|t| t.join()) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(PgError::internal("bulk loader panicked")),
        }
    }
}

impl Drop for Loader {
    /// A load abandoned (its statement failed) stops before the caller
    /// goes on to delete the storage: no file is ingested after that.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// The loader thread: SST files from `chunks`, each ingested when full
/// and the last one at `Finish`.
fn load_files(engine: &Engine, storage_id: u32, chunks: Receiver<LoaderMsg>, give_back: SyncSender<Vec<u8>>) -> PgResult<()> {
    static FILE_SEQ: AtomicU64 = AtomicU64::new(0);
    let staging = engine.path().join(STAGING_DIR);
    std::fs::create_dir_all(&staging).map_err(|e| PgError::internal(format!("could not create \"{}\": {e}", staging.display())))?;
    let mut file: Option<SstFile> = None;
    loop {
        match chunks.recv() {
            Ok(LoaderMsg::Chunk(mut chunk)) => {
                let mut entries = chunk.as_slice();
                while let Some((k, v, rest)) = decode_entry(entries) {
                    let f = match &mut file {
                        Some(f) => f,
                        None => {
                            let seq = FILE_SEQ.fetch_add(1, Ordering::Relaxed);
                            let path = staging.join(format!("{storage_id}-{}-{seq}.sst", std::process::id()));
                            file.insert(SstFile::create(engine.sst_options(), path)?)
                        }
                    };
                    f.put(k, v)?;
                    entries = rest;
                }
                chunk.clear();
                let _ = give_back.try_send(chunk);
                if file.as_ref().is_some_and(|f| f.size() >= SST_FILE_BYTES) {
                    engine.ingest(&file.take().expect("checked").finish()?)?;
                }
            }
            Ok(LoaderMsg::Finish) => {
                if let Some(f) = file.take() {
                    engine.ingest(&f.finish()?)?;
                }
                return Ok(());
            }
            // Abandoned: the unfinished file is removed when dropped.
            Err(_) => return Ok(()),
        }
    }
}

/// An SST file being written through RocksDB's C API (rust-rocksdb's
/// writer borrows its options for its lifetime, which a thread cannot).
struct SstFile {
    writer: *mut ffi::rocksdb_sstfilewriter_t,
    path: PathBuf,
    finished: bool,
}

impl SstFile {
    fn create(opts: &Options, path: PathBuf) -> PgResult<SstFile> {
        let cpath = c_path(&path)?;
        // SAFETY: the options and env options are valid for the call (the
        // writer copies them); `writer` is owned by the returned SstFile.
        unsafe {
            let env = ffi::rocksdb_envoptions_create();
            let writer = ffi::rocksdb_sstfilewriter_create(env, opts.as_raw_ptr());
            ffi::rocksdb_envoptions_destroy(env);
            let file = SstFile { writer, path, finished: false };
            let mut err = std::ptr::null_mut();
            ffi::rocksdb_sstfilewriter_open(writer, cpath.as_ptr(), &mut err);
            check(err)?;
            Ok(file)
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> PgResult<()> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the writer is open; key and value are valid for the call.
        unsafe {
            ffi::rocksdb_sstfilewriter_put(
                self.writer,
                key.as_ptr() as *const c_char,
                key.len(),
                value.as_ptr() as *const c_char,
                value.len(),
                &mut err,
            );
        }
        check(err)
    }

    fn size(&self) -> u64 {
        let mut size = 0u64;
        // SAFETY: the writer is valid while self lives.
        unsafe { ffi::rocksdb_sstfilewriter_file_size(self.writer, &mut size) };
        size
    }

    /// Completes the file (synced) and returns its path.
    fn finish(mut self) -> PgResult<PathBuf> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the writer is open and has at least one entry.
        unsafe { ffi::rocksdb_sstfilewriter_finish(self.writer, &mut err) };
        check(err)?;
        self.finished = true;
        keep_cached(&self.path);
        Ok(self.path.clone())
    }
}

impl Drop for SstFile {
    fn drop(&mut self) {
        // SAFETY: created by rocksdb_sstfilewriter_create, destroyed once.
        unsafe { ffi::rocksdb_sstfilewriter_destroy(self.writer) };
        if !self.finished {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Asks the kernel to read a finished file back into the page cache.
/// RocksDB's SST writer drops each megabyte it writes from the cache (its
/// C API cannot turn that off), so after a load every first read of the
/// new table went to the disk: point reads right after `pgbench -i` ran at
/// three quarters of their speed until the cache warmed up, where a
/// PostgreSQL load leaves its table cached. The reading is asynchronous;
/// the advice is given piece by piece because the kernel reads at most
/// its readahead window per call.
fn keep_cached(path: &Path) {
    use std::os::fd::AsRawFd;
    const PIECE: i64 = 2 << 20;
    let Ok(file) = std::fs::File::open(path) else { return };
    let len = file.metadata().map(|m| m.len() as i64).unwrap_or(0);
    let mut offset = 0;
    while offset < len {
        // SAFETY: a valid descriptor for the call; advice only.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, PIECE, libc::POSIX_FADV_WILLNEED) };
        offset += PIECE;
    }
}

fn c_path(path: &Path) -> PgResult<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| PgError::internal("path with a NUL byte"))
}

/// Turns a C API error string (owned by us, freed here) into an error.
fn check(err: *mut c_char) -> PgResult<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: RocksDB's C API hands out NUL-terminated strings allocated
    // with malloc, to be freed with rocksdb_free.
    let msg = unsafe {
        let msg = CStr::from_ptr(err).to_string_lossy().into_owned();
        ffi::rocksdb_free(err as *mut c_void);
        msg
    };
    Err(storage_error_text(&msg))
}

/// The C++ `DB*` under the TransactionDB, as RocksDB's event listeners
/// receive it; null until the first flush or compaction reported it.
#[derive(Default)]
pub(crate) struct BaseDb {
    rep: AtomicPtr<c_void>,
}

/// RocksDB C API's `rocksdb_t` (db/c.cc: `struct rocksdb_t { DB* rep; }`),
/// rebuilt around the pointer a listener received, since the one it is
/// given lives only for the callback.
#[repr(C)]
struct CDb {
    rep: *mut c_void,
}

impl BaseDb {
    /// Registers the listener that fills this in on `opts` (DB options,
    /// before the open).
    pub(crate) fn register(opts: &mut Options) -> Arc<BaseDb> {
        let base = Arc::new(BaseDb::default());
        // SAFETY: the state is an Arc reference handed to the listener and
        // released by `release_state` when RocksDB destroys it; every
        // callback is given (RocksDB calls them without a null check).
        unsafe {
            let listener = ffi::rocksdb_eventlistener_create(
                Arc::into_raw(base.clone()) as *mut c_void,
                Some(release_state),
                Some(on_flush),
                Some(on_flush),
                Some(on_compaction),
                Some(on_compaction),
                Some(on_subcompaction),
                Some(on_subcompaction),
                Some(on_ingested),
                Some(on_background_error),
                Some(on_stall),
                Some(on_memtable_sealed),
            );
            ffi::rocksdb_options_add_eventlistener(opts.as_raw_ptr(), listener);
        }
        base
    }

    pub(crate) fn known(&self) -> bool {
        !self.rep.load(Ordering::Acquire).is_null()
    }

    /// Calls `f` with a `rocksdb_t` handle on the base DB (None while it is
    /// not known). The handle is valid for the call: the database is never
    /// closed while the process runs.
    fn with_db<R>(&self, f: impl FnOnce(*mut ffi::rocksdb_t) -> R) -> Option<R> {
        let rep = self.rep.load(Ordering::Acquire);
        if rep.is_null() {
            return None;
        }
        let mut db = CDb { rep };
        Some(f(&mut db as *mut CDb as *mut ffi::rocksdb_t))
    }

    /// Has RocksDB take `file` into column family `cf`: moved (not copied),
    /// placed in the lowest level its key range allows, with a sequence
    /// number newer than every write before (snapshots taken earlier do
    /// not see it), synced with the MANIFEST entry naming it.
    pub(crate) fn ingest(&self, cf: &impl AsColumnFamilyRef, file: &Path) -> PgResult<()> {
        let cpath = c_path(file)?;
        let files = [cpath.as_ptr()];
        let mut err = std::ptr::null_mut();
        // SAFETY: a live DB handle (with_db); options, column family handle
        // and the path list are valid for the call.
        let known = self.with_db(|db| unsafe {
            let opts = ffi::rocksdb_ingestexternalfileoptions_create();
            ffi::rocksdb_ingestexternalfileoptions_set_move_files(opts, 1);
            ffi::rocksdb_ingestexternalfileoptions_set_snapshot_consistency(opts, 1);
            ffi::rocksdb_ingestexternalfileoptions_set_allow_global_seqno(opts, 1);
            ffi::rocksdb_ingestexternalfileoptions_set_allow_blocking_flush(opts, 1);
            ffi::rocksdb_ingest_external_file_cf(db, cf.inner(), files.as_ptr(), files.len(), opts, &mut err);
            ffi::rocksdb_ingestexternalfileoptions_destroy(opts);
        });
        assert!(known.is_some(), "ingestion before the base DB is known");
        check(err)
    }

    /// The sequence number of the last write (None until the base DB is known).
    pub(crate) fn latest_sequence(&self) -> Option<u64> {
        // SAFETY: a live DB handle (with_db).
        self.with_db(|db| unsafe { ffi::rocksdb_get_latest_sequence_number(db) })
    }

    /// An integer property of a column family, or of the whole database
    /// for database-wide ones ("rocksdb.oldest-snapshot-sequence", ...).
    pub(crate) fn property_int(&self, cf: &impl AsColumnFamilyRef, name: &CStr) -> Option<u64> {
        let mut value = 0u64;
        // SAFETY: a live DB handle (with_db); `name` is NUL-terminated.
        let status = self.with_db(|db| unsafe { ffi::rocksdb_property_int_cf(db, cf.inner(), name.as_ptr(), &mut value) })?;
        (status == 0).then_some(value)
    }

    /// Removes the SST files of `cf` whose keys all lie in `[start, end)`
    /// (RocksDB's DeleteFilesInRange: no snapshot sees them afterwards,
    /// so the caller must know none needs them).
    pub(crate) fn delete_files_in_range(&self, cf: &impl AsColumnFamilyRef, start: &[u8], end: &[u8]) -> PgResult<()> {
        let mut err = std::ptr::null_mut();
        // SAFETY: a live DB handle (with_db); the keys are valid for the call.
        let known = self.with_db(|db| unsafe {
            ffi::rocksdb_delete_file_in_range_cf(
                db,
                cf.inner(),
                start.as_ptr() as *const c_char,
                start.len(),
                end.as_ptr() as *const c_char,
                end.len(),
                &mut err,
            )
        });
        assert!(known.is_some(), "file deletion before the base DB is known");
        check(err)
    }
}

/// Keeps the base DB pointer a callback received.
///
/// SAFETY (all callbacks): `state` is the `BaseDb` given at registration,
/// alive until `release_state`; `db` points to a `rocksdb_t` for the call.
unsafe fn note_db(state: *mut c_void, db: *mut ffi::rocksdb_t) {
    let base = &*(state as *const BaseDb);
    if !db.is_null() && !base.known() {
        base.rep.store((*(db as *const CDb)).rep, Ordering::Release);
    }
}

unsafe extern "C" fn release_state(state: *mut c_void) {
    drop(Arc::from_raw(state as *const BaseDb));
}
unsafe extern "C" fn on_flush(state: *mut c_void, db: *mut ffi::rocksdb_t, _: *const ffi::rocksdb_flushjobinfo_t) {
    note_db(state, db)
}
unsafe extern "C" fn on_compaction(state: *mut c_void, db: *mut ffi::rocksdb_t, _: *const ffi::rocksdb_compactionjobinfo_t) {
    note_db(state, db)
}
unsafe extern "C" fn on_ingested(state: *mut c_void, db: *mut ffi::rocksdb_t, _: *const ffi::rocksdb_externalfileingestioninfo_t) {
    note_db(state, db)
}
unsafe extern "C" fn on_subcompaction(_: *mut c_void, _: *const ffi::rocksdb_subcompactionjobinfo_t) {}
unsafe extern "C" fn on_background_error(_: *mut c_void, _: u32, _: *mut ffi::rocksdb_status_ptr_t) {}
unsafe extern "C" fn on_stall(_: *mut c_void, _: *const ffi::rocksdb_writestallinfo_t) {}
unsafe extern "C" fn on_memtable_sealed(_: *mut c_void, _: *const ffi::rocksdb_memtableinfo_t) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::scratch_engine;

    fn row_key(storage: u32, i: u32) -> Vec<u8> {
        let mut k = keys::storage_prefix(storage);
        k.extend_from_slice(&i.to_be_bytes());
        k
    }

    fn rows(engine: &Engine, storage: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
        let prefix = keys::storage_prefix(storage);
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound(keys::prefix_end(&prefix));
        let mut it = engine.db().raw_iterator_cf_opt(engine.family(&prefix), ro);
        it.seek(&prefix);
        let mut out = Vec::new();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            out.push((k.to_vec(), v.to_vec()));
            it.next();
        }
        out
    }

    fn staged_files(dir: &Path) -> usize {
        std::fs::read_dir(dir.join(STAGING_DIR)).map(|d| d.count()).unwrap_or(0)
    }

    /// Ordered keys past the threshold are loaded as files (beside an
    /// unordered run of another storage id in the same writer), readable
    /// after the flush, not by a snapshot taken before; keys of a run that
    /// turns unordered keep their last value.
    #[test]
    fn ordered_runs_are_ingested_and_the_last_value_wins() {
        let (engine, dir) = scratch_engine("ingest");
        let before = engine.snapshot();
        let mut bulk = engine.bulk_writer().with_sst_start_bytes(4 << 10);
        for i in 0..20_000u32 {
            bulk.put(&row_key(30, i), format!("row {i}").as_bytes()).expect("put");
            // Index-like entries of another storage id, in no order.
            bulk.put(&row_key(31, (i * 7919) % 20_000), b"entry").expect("put");
        }
        assert_eq!(bulk.loading_runs(), 1, "the ordered run has a loader, the other none");
        // Out of order in a loading run: 5 written again after 19999.
        bulk.put(&row_key(30, 5), b"again").expect("put");
        assert_eq!(bulk.loading_runs(), 0);
        bulk.put(&row_key(30, 20_000), b"last").expect("put");
        bulk.flush().expect("flush");
        let loaded = rows(&engine, 30);
        assert_eq!(loaded.len(), 20_001);
        assert_eq!(loaded[5].1, b"again");
        assert_eq!(loaded[7].1, b"row 7");
        assert_eq!(loaded[20_000].1, b"last");
        assert_eq!(rows(&engine, 31).len(), 20_000);
        let k = row_key(30, 7);
        assert_eq!(before.get_cf(engine.family(&k), &k).expect("get"), None, "older snapshots do not see the load");
        assert_eq!(staged_files(&dir), 0, "ingested files are moved into the database");
        drop(before);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A writer dropped without a flush (its statement failed) stops its
    /// loader: the unfinished file is removed, not ingested.
    #[test]
    fn an_abandoned_load_ingests_nothing() {
        let (engine, dir) = scratch_engine("abandon");
        let mut bulk = engine.bulk_writer().with_sst_start_bytes(4 << 10);
        for i in 0..10_000u32 {
            bulk.put(&row_key(40, i), b"some row value").expect("put");
        }
        assert_eq!(bulk.loading_runs(), 1);
        drop(bulk);
        assert!(rows(&engine, 40).is_empty());
        assert_eq!(staged_files(&dir), 0);
        engine.close().expect("close");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn entries_round_trip() {
        let mut buf = Vec::new();
        encode_entry(&mut buf, b"k1", b"value");
        encode_entry(&mut buf, b"", b"");
        encode_entry(&mut buf, b"key3", b"v");
        let mut got = Vec::new();
        let mut rest = buf.as_slice();
        while let Some((k, v, r)) = decode_entry(rest) {
            got.push((k.to_vec(), v.to_vec()));
            rest = r;
        }
        assert_eq!(got, vec![(b"k1".to_vec(), b"value".to_vec()), (vec![], vec![]), (b"key3".to_vec(), b"v".to_vec())]);
    }
}
