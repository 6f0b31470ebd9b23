//! The cluster: what all sessions of one server share — the storage
//! engine, the committed catalogs, sequences and the OID counter.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use tusk_storage::keys::storage_prefix;
use tusk_storage::{Engine, EngineOptions, Isolation};
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use crate::catalog::store;
use crate::catalog::{ClusterCatalog, DbCatalog};
use crate::commands::sequence::Sequences;

/// The server's sessions, as the protocol layer (which owns them) reports
/// them: for DROP DATABASE's "being accessed by other users" and FORCE,
/// pg_stat_activity, pg_cancel_backend and pg_terminate_backend.
pub trait Backends: Send + Sync {
    /// Process ids of the sessions connected to a database.
    fn sessions_on(&self, database: &str) -> Vec<i32>;
    /// Asks a session to end (pg_terminate_backend); false if it is gone.
    fn terminate(&self, pid: i32) -> bool;
    /// Cancels a session's running statement (pg_cancel_backend); false if
    /// it is gone.
    fn cancel(&self, _pid: i32) -> bool {
        false
    }
    /// The role a session logged in as; None if no session has that pid.
    fn role_of(&self, _pid: i32) -> Option<String> {
        None
    }
    /// What every session is doing (pg_stat_activity).
    fn activity(&self) -> Vec<BackendActivity> {
        Vec::new()
    }
}

/// One session as pg_stat_activity shows it. Times are microseconds since
/// 2000-01-01 UTC.
#[derive(Clone, Debug, Default)]
pub struct BackendActivity {
    pub pid: i32,
    pub database: String,
    pub user: String,
    pub application_name: String,
    pub client: Option<std::net::SocketAddr>,
    pub backend_start: i64,
    pub xact_start: Option<i64>,
    pub query_start: Option<i64>,
    pub state_change: Option<i64>,
    /// "active", "idle", "idle in transaction", "idle in transaction (aborted)".
    pub state: &'static str,
    pub query: String,
    /// What an active statement waits for: (wait_event_type, wait_event).
    pub wait_event: Option<(&'static str, &'static str)>,
}

pub struct Cluster {
    pub engine: Arc<Engine>,
    backends: RwLock<Option<std::sync::Weak<dyn Backends>>>,
    cluster_catalog: RwLock<Arc<ClusterCatalog>>,
    catalogs: RwLock<HashMap<Oid, Arc<DbCatalog>>>,
    /// Counts installs of committed catalogs (bumped after the install),
    /// so that a cache of something planned against a catalog can tell in
    /// one atomic read that it is still current (`SqlSession::catalog_token`).
    catalog_generation: std::sync::atomic::AtomicU64,
    /// Serializes catalog reloads so an older reload never replaces a newer one.
    reload: Mutex<()>,
    /// Held (exclusively) by a transaction that changed the catalog from
    /// just before its commit until the committed catalog is reloaded, so
    /// that nobody reads the committed catalog in between: a session whose
    /// relation lock was released by that commit must see the new catalog
    /// when it checks whether its plan went stale, or it would write with
    /// the old one (missing a new index, into storage a rewrite replaced).
    commit_gate: RwLock<()>,
    pub sequences: Sequences,
    /// Who listens for which notifications (LISTEN/NOTIFY).
    pub notifier: Arc<crate::commands::notify::Notifier>,
    /// Storage ids to delete, for the background deleter.
    dropper: Mutex<std::sync::mpsc::Sender<Vec<u32>>>,
}

/// Deletes dropped storage, one id after another, until the cluster goes;
/// then frees its files once no snapshot from before the deletion is left
/// (see `Engine::reclaim_prefix`), checking every second while some wait.
fn run_deleter(engine: Arc<Engine>, ids: std::sync::mpsc::Receiver<Vec<u32>>) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut unreclaimed: Vec<(u32, u64)> = Vec::new();
    loop {
        // Idle (nothing waiting to be freed): sleep until there is work.
        let next = if unreclaimed.is_empty() {
            ids.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            ids.recv_timeout(std::time::Duration::from_secs(1))
        };
        match next {
            Ok(batch) => {
                for id in batch {
                    match engine.delete_prefix(&storage_prefix(id)) {
                        Ok(()) => unreclaimed.extend(engine.deletion_point().map(|at| (id, at))),
                        Err(e) => log::warn!("could not delete data of dropped relation (storage {id}): {e}"),
                    }
                    // Its hidden row ids will never be handed out again.
                    if let Err(e) = engine.drop_counter(&crate::executor::table::row_id_counter(id)) {
                        log::warn!("could not drop the row id counter of dropped relation (storage {id}): {e}");
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        unreclaimed.retain(|&(id, at)| match engine.reclaim_prefix(&storage_prefix(id), at) {
            Ok(done) => !done,
            Err(e) => {
                // Compaction frees the space in time anyway.
                log::warn!("could not free the files of dropped relation (storage {id}): {e}");
                false
            }
        });
    }
}

impl Cluster {
    /// Opens the data directory, creating the initial catalog if it is new.
    pub fn open(dir: &Path) -> PgResult<Arc<Cluster>> {
        let engine = Engine::open(dir, &EngineOptions::default())?;
        let (dropper, to_delete) = std::sync::mpsc::channel();
        {
            let engine = engine.clone();
            std::thread::Builder::new()
                .name("tusk-storage-deleter".into())
                .spawn(move || run_deleter(engine, to_delete))
                .map_err(|e| PgError::internal(format!("could not start the storage deleter: {e}")))?;
        }
        let cluster = Arc::new(Cluster {
            dropper: Mutex::new(dropper),
            engine: engine.clone(),
            backends: RwLock::new(None),
            cluster_catalog: RwLock::new(Arc::new(ClusterCatalog::default())),
            catalogs: RwLock::new(HashMap::new()),
            catalog_generation: std::sync::atomic::AtomicU64::new(0),
            reload: Mutex::new(()),
            commit_gate: RwLock::new(()),
            sequences: Sequences::new(engine.clone()),
            notifier: Arc::default(),
        });
        {
            let txn = engine.begin(Isolation::ReadCommitted, true);
            let existing = store::load_cluster(&txn)?;
            if existing.databases.is_empty() {
                store::bootstrap(&txn)?;
                txn.commit()?;
            } else {
                txn.rollback();
            }
        }
        cluster.reload_cluster()?;
        let undone = cluster.sequences.undo_interrupted_restarts()?;
        if undone > 0 {
            log::info!("undid {undone} sequence restart(s) of transactions that did not commit");
        }
        cluster.drop_leftover_temp_objects()?;
        cluster.drop_orphaned_storage()?;
        Ok(cluster)
    }

    /// Installs the protocol layer's view of its sessions.
    pub fn set_backends(&self, backends: std::sync::Weak<dyn Backends>) {
        *self.backends.write() = Some(backends);
    }

    /// Sessions connected to `database` other than `own_pid`.
    pub fn other_sessions_on(&self, database: &str, own_pid: i32) -> Vec<i32> {
        match self.backends.read().as_ref().and_then(|w| w.upgrade()) {
            Some(b) => b.sessions_on(database).into_iter().filter(|&p| p != own_pid).collect(),
            None => Vec::new(),
        }
    }

    /// Every session's activity, as the protocol layer reports it.
    pub fn activity(&self) -> Vec<BackendActivity> {
        self.backends.read().as_ref().and_then(|w| w.upgrade()).map(|b| b.activity()).unwrap_or_default()
    }

    pub fn terminate_backend(&self, pid: i32) -> bool {
        self.backends.read().as_ref().and_then(|w| w.upgrade()).map(|b| b.terminate(pid)).unwrap_or(false)
    }

    pub fn cancel_backend(&self, pid: i32) -> bool {
        self.backends.read().as_ref().and_then(|w| w.upgrade()).map(|b| b.cancel(pid)).unwrap_or(false)
    }

    /// The role the session with this pid logged in as, if it exists.
    pub fn backend_role(&self, pid: i32) -> Option<String> {
        self.backends.read().as_ref().and_then(|w| w.upgrade()).and_then(|b| b.role_of(pid))
    }

    pub fn cluster_catalog(&self) -> Arc<ClusterCatalog> {
        self.cluster_catalog.read().clone()
    }

    /// The committed catalog of a database.
    pub fn catalog(&self, db: Oid) -> PgResult<Arc<DbCatalog>> {
        // Waits for a catalog change that is committing (see `commit_gate`).
        drop(self.commit_gate.read());
        if let Some(c) = self.catalogs.read().get(&db) {
            return Ok(c.clone());
        }
        self.reload_database(db)
    }

    /// Changes whenever a committed catalog is installed.
    pub fn catalog_generation(&self) -> u64 {
        self.catalog_generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Closes the gate for a committing catalog change; open it (drop the
    /// guard) once the committed catalog is reloaded.
    pub fn catalog_commit_gate(&self) -> parking_lot::RwLockWriteGuard<'_, ()> {
        self.commit_gate.write()
    }

    pub fn reload_cluster(&self) -> PgResult<()> {
        let _g = self.reload.lock();
        let txn = self.engine.begin(Isolation::ReadCommitted, false);
        let cat = store::load_cluster(&txn)?;
        txn.rollback();
        let live: Vec<Oid> = cat.databases.keys().copied().collect();
        *self.cluster_catalog.write() = Arc::new(cat);
        self.catalogs.write().retain(|db, _| live.contains(db));
        self.catalog_generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    pub fn reload_database(&self, db: Oid) -> PgResult<Arc<DbCatalog>> {
        let _g = self.reload.lock();
        let txn = self.engine.begin(Isolation::ReadCommitted, false);
        let cat = Arc::new(store::load_database(&txn, db)?);
        txn.rollback();
        self.catalogs.write().insert(db, cat.clone());
        self.catalog_generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(cat)
    }

    /// Deletes the data of relations dropped by a committed transaction (or
    /// created by a rolled-back one). No catalog names the storage any
    /// more, so the deletion runs in the background, off the committing
    /// session's path; snapshots older than it still read what they saw.
    /// If the server stops first, the next start finds the storage
    /// orphaned and deletes it then.
    pub fn drop_storage(&self, storage_ids: &[u32]) {
        if storage_ids.is_empty() {
            return;
        }
        let sender = self.dropper.lock().clone();
        if sender.send(storage_ids.to_vec()).is_err() {
            // The deleter is gone (shutting down): the next start cleans up.
            log::debug!("storage {storage_ids:?} left for the next start to delete");
        }
    }

    /// Storage that no relation of any database uses: what transactions
    /// that crashed before committing had bulk-written into storage they
    /// created (see `tusk_storage::BulkWriter`), and drops cut short by a
    /// crash.
    fn drop_orphaned_storage(&self) -> PgResult<()> {
        let mut used = std::collections::HashSet::new();
        for db in self.cluster_catalog().databases.keys() {
            for rel in self.catalog(*db)?.relations.values() {
                used.insert(rel.storage_id);
            }
        }
        let orphans: Vec<u32> = self.engine.storage_ids_with_data()?.into_iter().filter(|id| !used.contains(id)).collect();
        if !orphans.is_empty() {
            log::info!("removing the data of {} storage id(s) no relation uses", orphans.len());
            self.drop_storage(&orphans);
        }
        Ok(())
    }

    /// Temporary tables die with their session; after a restart none survive.
    fn drop_leftover_temp_objects(&self) -> PgResult<()> {
        let cat = self.cluster_catalog();
        for db in cat.databases.keys() {
            let dbcat = self.catalog(*db)?;
            let temp: Vec<Oid> = dbcat.namespaces.values().filter(|n| n.temp_session.is_some()).map(|n| n.oid).collect();
            if temp.is_empty() {
                continue;
            }
            crate::commands::ddl::drop_temp_namespaces(self, *db, &temp)?;
        }
        Ok(())
    }

    pub fn database_oid(&self, name: &str) -> PgResult<Oid> {
        self.cluster_catalog()
            .database_by_name(name)
            .map(|d| d.oid)
            .ok_or_else(|| PgError::fatal(sqlstate::UNDEFINED_DATABASE, format!("database \"{name}\" does not exist")))
    }
}
