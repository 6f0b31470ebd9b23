//! A connection's SQL state: its database and user, settings, the open
//! transaction and the catalog that transaction sees, sequence values
//! seen (currval), and the running of planned statements.
//!
//! The protocol layer (tusk-server) owns the transaction *block* state
//! machine, prepared statements and portals, and calls in here to begin,
//! commit and roll back transactions and to plan and run statements.

use std::cell::{Cell, Ref, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use tusk_storage::{Interrupt, Isolation, Txn};
use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use crate::analyzer::{Analyzer, AnalyzerEnv};
use crate::catalog::{store, DbCatalog, RelKind};
use crate::cluster::Cluster;
use crate::executor::{self, ExecCx, Node, Row, StmtState};
use crate::functions::{DeferredCheck, Env};
use crate::parser::ParsedStatement;
use crate::plan::{OutputColumn, PlannedQuery};
use crate::planner::Planner;
use crate::settings::Settings;

pub struct SqlSession {
    pub cluster: Arc<Cluster>,
    pub db: Oid,
    pub db_name: String,
    pub user: String,
    pub session_user: String,
    pub pid: i32,
    pub settings: RefCell<Settings>,
    txn: Option<Txn>,
    /// The catalog this transaction sees, once it has run DDL.
    txn_catalog: RefCell<Option<Arc<DbCatalog>>>,
    /// The cluster catalog as this transaction sees it, once it changed
    /// roles or databases (None: the committed one).
    txn_cluster: RefCell<Option<Arc<crate::catalog::ClusterCatalog>>>,
    /// Storage of relations dropped by this transaction, deleted after commit.
    pending_drops: RefCell<Vec<u32>>,
    /// Sequences dropped by this transaction, whose state goes after commit.
    pending_seq_drops: RefCell<Vec<Oid>>,
    /// Settings as they were before this transaction's first SET (restored on rollback).
    settings_at_begin: RefCell<Option<Settings>>,
    /// SET LOCAL: (parameter, value before), restored at transaction end.
    local_settings: RefCell<Vec<(String, Option<String>)>>,
    /// Set when this transaction changed databases or roles.
    pub cluster_changed: bool,
    /// Databases whose catalogs this transaction changed besides its own.
    pub temp_namespace: Option<Oid>,
    pub interrupt: Arc<Interrupt>,
    currvals: RefCell<HashMap<Oid, i64>>,
    last_sequence: Cell<Option<Oid>>,
    pub txn_start: i64,
    pub stmt_start: Cell<i64>,
    rng: RefCell<rand::rngs::StdRng>,
    /// Notices raised while running a statement, for the protocol to send.
    pub notices: RefCell<Vec<PgError>>,
    pub read_only: bool,
    /// DEFERRABLE (a SERIALIZABLE READ ONLY transaction waits for a safe snapshot).
    pub deferrable: bool,
    /// Whether the transaction has run a query, after which its isolation
    /// level is fixed.
    snapshot_taken: Cell<bool>,
    pub in_block: Cell<bool>,
    /// Temporary tables created ON COMMIT DELETE ROWS / DROP, acted on at
    /// every commit while they exist.
    pub on_commit: RefCell<Vec<(Oid, OnCommit)>>,
    /// Sequence states before this transaction restarted them (TRUNCATE
    /// RESTART IDENTITY, ALTER SEQUENCE RESTART), put back if it rolls back.
    sequence_undo: RefCell<Vec<(Oid, i64, bool, Option<Vec<u8>>)>>,
    /// One mark per open storage savepoint: the session state to return to
    /// when the transaction rolls back to it.
    savepoint_marks: RefCell<Vec<SavepointMark>>,
    /// Tables this transaction holds a shared relation lock on.
    locked_relations: RefCell<std::collections::HashSet<Oid>>,
    /// Storage this transaction created (CREATE TABLE, TRUNCATE, rewrites),
    /// with the savepoint depth it was created at: no other transaction can
    /// see it before this one commits, and it goes if this one rolls back.
    fresh_storage: RefCell<HashMap<u32, usize>>,
    /// SET CONSTRAINTS in this transaction.
    constraint_modes: RefCell<ConstraintModes>,
    /// Constraint checks (foreign keys, unique keys) deferred to the end of
    /// the transaction, in the order they arose, and the referencing rows
    /// and unique keys among them (a row written several times, or a key
    /// taken several times, is checked once, as it is at the end).
    deferred_checks: RefCell<Vec<DeferredCheck>>,
    deferred_rows: RefCell<HashSet<(Oid, Vec<u8>)>>,
    /// Open SQL cursors (DECLARE); see `commands::cursor`.
    pub cursors: RefCell<crate::commands::cursor::Cursors>,
    /// Named prepared statements, for pg_prepared_statements.
    pub prepared_statements: RefCell<std::collections::BTreeMap<String, PreparedStatementInfo>>,
    /// Procedural languages' compiled functions (see `Spi::language_cache`).
    pub language_cache: RefCell<HashMap<(Oid, u64), std::rc::Rc<dyn std::any::Any>>>,
    /// SQL-language functions' prepared statements, by function, version
    /// and argument types (see `fmgr`).
    /// Functions of other languages as their handlers see them, made once
    /// per definition rather than per call (see `fmgr::source_of`).
    pub(crate) function_sources: RefCell<HashMap<(Oid, u64), std::rc::Rc<crate::procedural::FunctionSource>>>,
    pub(crate) sql_function_cache: RefCell<HashMap<(Oid, u64, Vec<SqlType>), std::rc::Rc<crate::fmgr::SqlFunctionPlans>>>,
    /// LISTEN/NOTIFY: this transaction's notifications and actions, and
    /// whether the session listens (see `commands::notify`).
    pub notify: RefCell<crate::commands::notify::SessionNotify>,
    /// The query environments of the SPI statements running, innermost
    /// last: a trigger function's transition tables (None for code that
    /// has none, hiding those of the code that called it).
    pub(crate) query_envs: RefCell<Vec<Option<std::rc::Rc<Vec<crate::procedural::NamedTuplestore>>>>>,
    /// Trigger functions running (pg_trigger_depth()).
    pub(crate) trigger_depth: Cell<i32>,
}

/// What SET CONSTRAINTS chose in a transaction: for all deferrable
/// constraints, and for named ones after that (true = deferred).
#[derive(Clone, Debug, Default)]
struct ConstraintModes {
    all: Option<bool>,
    named: HashMap<Oid, bool>,
}

impl ConstraintModes {
    fn mode(&self, constraint: Oid) -> Option<bool> {
        self.named.get(&constraint).copied().or(self.all)
    }
}

/// The error `start_query` returns when the plan must be made again
/// (never sent to a client: callers re-plan and retry).
const STALE_PLAN: &str = "TK001";

pub fn is_stale_plan(e: &PgError) -> bool {
    e.code == STALE_PLAN
}

/// What ROLLBACK TO SAVEPOINT undoes besides the storage writes: the work
/// the transaction deferred to commit (storage and sequence drops), the
/// sequences it restarted, and the settings it changed (SET is
/// transactional in PostgreSQL, savepoints included).
struct SavepointMark {
    pending_drops: usize,
    pending_seq_drops: usize,
    sequence_undo: usize,
    local_settings: usize,
    settings: Settings,
    settings_at_begin: Option<Settings>,
    on_commit: Vec<(Oid, OnCommit)>,
    /// RocksDB releases locks taken after a savepoint when rolling back to it.
    locked_relations: std::collections::HashSet<Oid>,
    fresh_storage: HashMap<u32, usize>,
    constraint_modes: ConstraintModes,
    deferred_checks: usize,
    /// A subtransaction of procedural code that ended without rolling
    /// back: its storage savepoint stays (RocksDB cannot drop one), and a
    /// rollback to an enclosing savepoint rolls back through it.
    released: bool,
    notify: crate::commands::notify::NotifyMark,
}

/// What a temporary table's ON COMMIT clause asks for at commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnCommit {
    DeleteRows,
    Drop,
}

/// A named prepared statement as pg_prepared_statements shows it; the
/// protocol layer, which owns prepared statements, keeps these up to date.
#[derive(Clone, Debug)]
pub struct PreparedStatementInfo {
    pub statement: String,
    pub prepare_time: i64,
    pub parameter_types: Vec<Oid>,
    /// PREPARE (true) or a protocol Parse message (false).
    pub from_sql: bool,
}

/// Microseconds since 2000-01-01 UTC, PostgreSQL's timestamp epoch.
pub fn now_micros() -> i64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_micros() as i64 - 946_684_800_000_000
}

impl SqlSession {
    pub fn new(cluster: Arc<Cluster>, db_name: &str, user: &str, pid: i32) -> PgResult<SqlSession> {
        // The role first, as PostgreSQL's InitPostgres checks it.
        let cat = cluster.cluster_catalog();
        let role = cat
            .role_by_name(user)
            .ok_or_else(|| PgError::fatal(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, format!("role \"{user}\" does not exist")))?;
        let db = cluster.database_oid(db_name)?;
        let cat = cluster.cluster_catalog();
        let database = cat.databases.get(&db).expect("found above");
        if !database.allow_connections {
            return Err(PgError::fatal(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("database \"{db_name}\" is not currently accepting connections"),
            ));
        }
        crate::commands::grant::check_connect(&cat, user, db)?;
        let mut settings = Settings::default();
        settings.set_internal("session_authorization", user);
        settings.set_internal("is_superuser", if role.superuser { "on" } else { "off" });
        Ok(SqlSession {
            prepared_statements: RefCell::new(std::collections::BTreeMap::new()),
            language_cache: RefCell::new(HashMap::new()),
            function_sources: RefCell::new(HashMap::new()),
            sql_function_cache: RefCell::new(HashMap::new()),
            notify: RefCell::new(Default::default()),
            query_envs: RefCell::new(Vec::new()),
            trigger_depth: Cell::new(0),
            cluster,
            db,
            db_name: db_name.to_string(),
            user: user.to_string(),
            session_user: user.to_string(),
            pid,
            settings: RefCell::new(settings),
            txn: None,
            txn_catalog: RefCell::new(None),
            txn_cluster: RefCell::new(None),
            pending_drops: RefCell::new(Vec::new()),
            pending_seq_drops: RefCell::new(Vec::new()),
            on_commit: RefCell::new(Vec::new()),
            sequence_undo: RefCell::new(Vec::new()),
            savepoint_marks: RefCell::new(Vec::new()),
            locked_relations: RefCell::new(std::collections::HashSet::new()),
            fresh_storage: RefCell::new(HashMap::new()),
            constraint_modes: RefCell::new(ConstraintModes::default()),
            deferred_checks: RefCell::new(Vec::new()),
            deferred_rows: RefCell::new(HashSet::new()),
            cursors: RefCell::new(Default::default()),
            settings_at_begin: RefCell::new(None),
            local_settings: RefCell::new(Vec::new()),
            cluster_changed: false,
            temp_namespace: None,
            interrupt: Interrupt::new(),
            currvals: RefCell::new(HashMap::new()),
            last_sequence: Cell::new(None),
            txn_start: now_micros(),
            stmt_start: Cell::new(now_micros()),
            rng: RefCell::new(rand::rngs::StdRng::from_entropy()),
            notices: RefCell::new(Vec::new()),
            read_only: false,
            deferrable: false,
            snapshot_taken: Cell::new(false),
            in_block: Cell::new(false),
        })
    }

    // ---------------------------------------------------------------- transactions

    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    pub fn txn(&self) -> PgResult<&Txn> {
        self.txn.as_ref().ok_or_else(|| PgError::internal("no transaction in progress"))
    }

    pub fn begin(&mut self, isolation: Option<Isolation>) {
        debug_assert!(self.txn.is_none());
        let settings = self.settings.borrow();
        let iso = isolation.unwrap_or(if settings.default_serializable {
            Isolation::Serializable
        } else if settings.default_isolation_repeatable {
            Isolation::RepeatableRead
        } else {
            Isolation::ReadCommitted
        });
        let mut txn = self.cluster.engine.begin(iso, settings.synchronous_commit);
        self.read_only = settings.default_read_only;
        self.deferrable = settings.default_deferrable;
        drop(settings);
        txn.set_interrupt(self.interrupt.clone());
        txn.set_backend_pid(self.pid);
        txn.set_access_mode(self.read_only, self.deferrable);
        self.txn = Some(txn);
        self.txn_start = now_micros();
        self.snapshot_taken.set(false);
        let mut settings = self.settings.borrow_mut();
        settings.transaction_isolation = Some(iso);
        settings.transaction_read_only = Some(self.read_only);
    }

    /// Changes the isolation level of a transaction that has not run a
    /// query yet (BEGIN ISOLATION LEVEL ..., SET TRANSACTION ...).
    pub fn set_isolation(&mut self, isolation: Isolation) -> PgResult<()> {
        if self.snapshot_taken.get() && self.isolation() != Some(isolation) {
            return Err(PgError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query",
            ));
        }
        if let Some(t) = self.txn.as_mut() {
            t.set_isolation(isolation);
            self.settings.borrow_mut().transaction_isolation = Some(isolation);
        }
        Ok(())
    }

    /// SET TRANSACTION READ ONLY / READ WRITE.
    pub fn set_read_only(&mut self, read_only: bool) -> PgResult<()> {
        if !read_only && self.read_only && self.snapshot_taken.get() {
            return Err(PgError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "transaction read-write mode must be set before any query",
            ));
        }
        self.read_only = read_only;
        if let Some(t) = self.txn.as_ref() {
            t.set_access_mode(self.read_only, self.deferrable);
            self.settings.borrow_mut().transaction_read_only = Some(read_only);
        }
        Ok(())
    }

    /// SET TRANSACTION [NOT] DEFERRABLE: only a SERIALIZABLE READ ONLY
    /// transaction waits for a safe snapshot, at its first query.
    pub fn set_deferrable(&mut self, deferrable: bool) -> PgResult<()> {
        if self.snapshot_taken.get() && deferrable != self.deferrable {
            return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, "SET TRANSACTION [NOT] DEFERRABLE must be called before any query"));
        }
        self.deferrable = deferrable;
        if let Some(t) = self.txn.as_ref() {
            t.set_access_mode(self.read_only, self.deferrable);
        }
        Ok(())
    }

    pub fn isolation(&self) -> Option<Isolation> {
        self.txn.as_ref().map(|t| t.isolation())
    }

    /// Starts a statement: a fresh snapshot under READ COMMITTED.
    pub fn begin_statement(&mut self) {
        self.stmt_start.set(now_micros());
        tusk_types::error::set_max_stack_depth_kb(self.settings.borrow().max_stack_depth_kb);
        if let Some(t) = self.txn.as_mut() {
            t.begin_statement();
        }
    }

    pub fn commit(&mut self) -> PgResult<()> {
        if self.txn.is_none() {
            return Ok(());
        }
        // Deferred constraints are checked first (AfterTriggerFireDeferred
        // precedes the ON COMMIT actions); a violation rolls back.
        if let Err(e) = self.run_deferred_checks(&|_| true) {
            self.rollback();
            return Err(e);
        }
        self.clear_deferred_checks();
        self.run_on_commit_actions()?;
        // PreCommit_Notify: notifying transactions commit one at a time.
        let notifier = self.cluster.notifier.clone();
        let notify_order = match self.notify.get_mut().pre_commit(&notifier, self.notices.get_mut()) {
            Ok(order) => order,
            Err(e) => {
                self.rollback();
                return Err(e);
            }
        };
        let Some(txn) = self.txn.take() else { return Ok(()) };
        crate::catalog::enums::end_of_transaction();
        let ddl = self.txn_catalog.get_mut().take().is_some();
        *self.txn_cluster.get_mut() = None;
        let drops = std::mem::take(&mut *self.pending_drops.borrow_mut());
        let seq_drops = std::mem::take(&mut *self.pending_seq_drops.borrow_mut());
        let cluster_changed = std::mem::replace(&mut self.cluster_changed, false);
        self.savepoint_marks.borrow_mut().clear();
        self.locked_relations.borrow_mut().clear();
        let fresh: Vec<u32> = self.fresh_storage.borrow_mut().drain().map(|(id, _)| id).collect();
        // A catalog change: nobody reads the committed catalog between
        // this commit (which releases the relation locks) and the reload.
        let gate = (ddl || cluster_changed).then(|| self.cluster.catalog_commit_gate());
        let result = txn.commit();
        match result {
            Ok(()) => self.notify.get_mut().at_commit(&notifier, notify_order, self.db, self.pid),
            Err(_) => {
                drop(notify_order);
                self.notify.get_mut().at_rollback()
            }
        }
        if cluster_changed {
            self.cluster.reload_cluster()?;
        }
        if ddl {
            self.cluster.reload_database(self.db)?;
        }
        drop(gate);
        if result.is_ok() {
            self.cursors.get_mut().at_commit();
            self.sequence_undo.borrow_mut().clear();
            self.cluster.drop_storage(&drops);
            for seq in seq_drops {
                let _ = self.cluster.sequences.drop(seq);
            }
            self.end_settings_transaction(true);
        } else {
            // Rolled back after all: its new storage is nobody's.
            self.cursors.get_mut().at_rollback();
            self.cluster.drop_storage(&fresh);
            self.undo_sequence_restarts(0);
            self.end_settings_transaction(false);
        }
        result
    }

    /// ON COMMIT DELETE ROWS empties the table and ON COMMIT DROP drops it,
    /// inside the committing transaction, as PreCommit_on_commit_actions
    /// does. A transaction that wrote nothing cannot have filled the table,
    /// so it skips the truncation.
    fn run_on_commit_actions(&mut self) -> PgResult<()> {
        if self.on_commit.borrow().is_empty() {
            return Ok(());
        }
        let catalog = self.catalog()?;
        let wrote = self.txn.as_ref().is_some_and(|t| t.has_writes());
        let actions: Vec<(Oid, OnCommit)> = self.on_commit.borrow().iter().copied().filter(|(rel, _)| catalog.relation(*rel).is_some()).collect();
        *self.on_commit.borrow_mut() = actions.clone();
        for (rel, action) in actions {
            let Some(r) = catalog.relation(rel) else { continue };
            let sql = match action {
                OnCommit::DeleteRows if wrote => format!("TRUNCATE pg_temp.{}", crate::functions::quote_ident(&r.name)),
                OnCommit::DeleteRows => continue,
                OnCommit::Drop => format!("DROP TABLE pg_temp.{}", crate::functions::quote_ident(&r.name)),
            };
            for stmt in crate::parser::parse(&sql)? {
                crate::commands::execute_utility(self, &stmt, &sql)?;
            }
        }
        Ok(())
    }

    /// Settings are transactional: SET in a rolled-back transaction is
    /// undone, SET LOCAL lasts until the transaction ends.
    fn end_settings_transaction(&self, committed: bool) {
        {
            let mut settings = self.settings.borrow_mut();
            settings.transaction_isolation = None;
            settings.transaction_read_only = None;
        }
        let before = self.settings_at_begin.borrow_mut().take();
        let locals = std::mem::take(&mut *self.local_settings.borrow_mut());
        if !committed {
            if let Some(mut b) = before {
                b.transaction_isolation = None;
                b.transaction_read_only = None;
                *self.settings.borrow_mut() = b;
            }
            return;
        }
        let mut settings = self.settings.borrow_mut();
        for (name, old) in locals.into_iter().rev() {
            let _ = match old {
                Some(v) => settings.set(&name, &v),
                None => settings.reset(&name),
            };
        }
    }

    /// Called before a SET changes `name`.
    pub fn remember_setting(&self, name: &str, local: bool) {
        if self.txn.is_some() && self.settings_at_begin.borrow().is_none() {
            *self.settings_at_begin.borrow_mut() = Some(self.settings.borrow().clone());
        }
        if local {
            let old = self.settings.borrow().show(name).ok();
            self.local_settings.borrow_mut().push((name.to_string(), old));
        }
    }

    pub fn remember_all_settings(&self) {
        if self.txn.is_some() && self.settings_at_begin.borrow().is_none() {
            *self.settings_at_begin.borrow_mut() = Some(self.settings.borrow().clone());
        }
    }

    /// Records storage to delete once this transaction commits.
    pub fn note_drop(&self, storage_id: u32) {
        self.pending_drops.borrow_mut().push(storage_id);
    }

    pub fn note_sequence_drop(&self, seq: Oid) {
        self.pending_seq_drops.borrow_mut().push(seq);
    }

    /// Restarts a sequence so that a rollback of this transaction (or of a
    /// savepoint it is under) puts the old state back.
    ///
    /// The restart is written at once, outside the transaction, so, as in
    /// PostgreSQL (whose restart writes a new relfilenode under a lock
    /// nextval's RowExclusiveLock conflicts with), the sequence stays
    /// locked until this transaction ends: other sessions' nextval and
    /// setval wait rather than see a restart that may yet roll back, and
    /// the restart waits for transactions that used the sequence. Every
    /// way a transaction ends without committing undoes the restart before
    /// it releases that lock, except a commit the storage refuses (the
    /// engine released the locks by then), a window of one undo.
    pub fn restart_sequence(&self, seq: Oid, info: &crate::catalog::SequenceInfo, value: i64) -> PgResult<()> {
        self.txn()?.get_for_update(&crate::commands::ddl::relation_lock_key(seq))?;
        let (last, called) = self.cluster.sequences.peek(seq, info)?;
        // The first restart of the sequence in this transaction leaves an
        // undo record for a crash before the commit, which the commit
        // deletes (see `Sequences::begin_restart`).
        let marker = if self.sequence_undo.borrow().iter().any(|(s, ..)| *s == seq) {
            None
        } else {
            let key = self.cluster.sequences.begin_restart(seq, info)?;
            self.txn()?.delete(&key)?;
            Some(key)
        };
        self.cluster.sequences.restart(seq, value)?;
        self.sequence_undo.borrow_mut().push((seq, last, called, marker));
        Ok(())
    }

    /// Puts back sequence states recorded after the first `keep` entries.
    fn undo_sequence_restarts(&self, keep: usize) {
        let undo: Vec<_> = self.sequence_undo.borrow_mut().drain(keep..).collect();
        for (seq, last, called, marker) in undo.into_iter().rev() {
            // The sequence may have been dropped meanwhile; nothing to restore then.
            let _ = self.cluster.sequences.restore(seq, last, called);
            if let Some(key) = marker {
                let _ = self.cluster.sequences.end_restart(&key);
            }
        }
    }

    pub fn rollback(&mut self) {
        // Before the locks go: a session waiting on a restarted sequence
        // must find it as it was (see `restart_sequence`).
        self.undo_sequence_restarts(0);
        if let Some(txn) = self.txn.take() {
            txn.rollback();
        }
        crate::catalog::enums::end_of_transaction();
        *self.txn_catalog.get_mut() = None;
        *self.txn_cluster.get_mut() = None;
        self.cursors.get_mut().at_rollback();
        self.pending_drops.borrow_mut().clear();
        self.pending_seq_drops.borrow_mut().clear();
        self.savepoint_marks.borrow_mut().clear();
        self.locked_relations.borrow_mut().clear();
        self.drop_fresh_storage();
        self.clear_deferred_checks();
        self.notify.get_mut().at_rollback();
        self.cluster_changed = false;
        self.end_settings_transaction(false);
    }

    /// An error ended the transaction block: drop its writes and locks now;
    /// the block stays open (failed) until ROLLBACK.
    pub fn abort_work(&mut self) {
        // Nothing of the failed block can commit any more; its sequence
        // restarts go back while their locks are held.
        self.undo_sequence_restarts(0);
        if let Some(txn) = self.txn.as_mut() {
            txn.abort_work();
        }
        self.locked_relations.borrow_mut().clear();
        self.drop_fresh_storage();
    }

    /// Sets a storage savepoint and remembers the session state with it.
    pub fn savepoint(&self) -> PgResult<()> {
        self.txn()?.savepoint();
        self.savepoint_marks.borrow_mut().push(SavepointMark {
            pending_drops: self.pending_drops.borrow().len(),
            pending_seq_drops: self.pending_seq_drops.borrow().len(),
            sequence_undo: self.sequence_undo.borrow().len(),
            local_settings: self.local_settings.borrow().len(),
            settings: self.settings.borrow().clone(),
            settings_at_begin: self.settings_at_begin.borrow().clone(),
            on_commit: self.on_commit.borrow().clone(),
            locked_relations: self.locked_relations.borrow().clone(),
            fresh_storage: self.fresh_storage.borrow().clone(),
            constraint_modes: self.constraint_modes.borrow().clone(),
            deferred_checks: self.deferred_checks.borrow().len(),
            released: false,
            notify: self.notify.borrow().mark(),
        });
        Ok(())
    }

    /// Ends the newest open subtransaction keeping its work (RELEASE, for
    /// procedural code; see `SavepointMark::released`).
    pub fn release_savepoint(&self) -> PgResult<()> {
        let mut marks = self.savepoint_marks.borrow_mut();
        let m = marks.iter_mut().rev().find(|m| !m.released).ok_or_else(|| PgError::internal("no subtransaction to release"))?;
        m.released = true;
        Ok(())
    }

    /// How many storage savepoints are open (cursors remember it).
    pub fn savepoint_depth(&self) -> usize {
        self.savepoint_marks.borrow().len()
    }

    /// Rolls back to the newest storage savepoint (and removes it), with
    /// the session state remembered there.
    pub fn rollback_to_savepoint(&self) -> PgResult<()> {
        loop {
            let released = self.savepoint_marks.borrow().last().is_some_and(|m| m.released);
            self.rollback_one_savepoint()?;
            if !released {
                return Ok(());
            }
        }
    }

    fn rollback_one_savepoint(&self) -> PgResult<()> {
        // Sequence restarts are undone while their locks are still held
        // (the storage rollback releases the locks taken since).
        if let Some(m) = self.savepoint_marks.borrow().last() {
            self.undo_sequence_restarts(m.sequence_undo);
        }
        self.txn()?.rollback_to_savepoint()?;
        let mark = self.savepoint_marks.borrow_mut().pop();
        debug_assert!(mark.is_some(), "every storage savepoint has a mark");
        let depth = self.savepoint_marks.borrow().len();
        self.cursors.borrow_mut().at_rollback_to(depth);
        if let Some(m) = mark {
            self.pending_drops.borrow_mut().truncate(m.pending_drops);
            self.pending_seq_drops.borrow_mut().truncate(m.pending_seq_drops);
            self.local_settings.borrow_mut().truncate(m.local_settings);
            let (isolation, read_only) = {
                let cur = self.settings.borrow();
                (cur.transaction_isolation, cur.transaction_read_only)
            };
            let mut restored = m.settings;
            restored.transaction_isolation = isolation;
            restored.transaction_read_only = read_only;
            *self.settings.borrow_mut() = restored;
            *self.settings_at_begin.borrow_mut() = m.settings_at_begin;
            *self.on_commit.borrow_mut() = m.on_commit;
            *self.locked_relations.borrow_mut() = m.locked_relations;
            // Storage created since the savepoint is unreachable now; rows
            // bulk-written into it are not undone by the storage rollback.
            let gone: Vec<u32> = self.fresh_storage.borrow().keys().filter(|id| !m.fresh_storage.contains_key(id)).copied().collect();
            self.cluster.drop_storage(&gone);
            *self.fresh_storage.borrow_mut() = m.fresh_storage;
            *self.constraint_modes.borrow_mut() = m.constraint_modes;
            self.notify.borrow_mut().rollback_to(m.notify);
            let undone: Vec<DeferredCheck> = self.deferred_checks.borrow_mut().drain(m.deferred_checks..).collect();
            let mut rows = self.deferred_rows.borrow_mut();
            for c in undone {
                if let Some(k) = c.dedup_key() {
                    rows.remove(&k);
                }
            }
        }
        if self.txn_catalog.borrow().is_some() {
            self.reload_txn_catalog()?;
        }
        if self.txn_cluster.borrow().is_some() {
            self.reload_txn_cluster()?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- catalog

    /// Roles and databases as this transaction sees them.
    pub fn cluster_catalog(&self) -> Arc<crate::catalog::ClusterCatalog> {
        match &*self.txn_cluster.borrow() {
            Some(c) => c.clone(),
            None => self.cluster.cluster_catalog(),
        }
    }

    /// After a statement that changed roles or databases: re-read them
    /// through the transaction.
    pub fn reload_txn_cluster(&self) -> PgResult<()> {
        let cat = store::load_cluster(self.txn()?)?;
        *self.txn_cluster.borrow_mut() = Some(Arc::new(cat));
        Ok(())
    }

    /// The catalog as this transaction sees it.
    pub fn catalog(&self) -> PgResult<Arc<DbCatalog>> {
        let c = match &*self.txn_catalog.borrow() {
            Some(c) => c.clone(),
            None => self.cluster.catalog(self.db)?,
        };
        // The user types this thread's statements see follow the catalog.
        crate::catalog::types::enter_catalog(&c.user_types);
        Ok(c)
    }

    /// A token that changes whenever `catalog()` would answer a different
    /// catalog, read without locks: the transaction's own catalog by
    /// address (a cache holding a `Weak` of it keeps the address from being
    /// reused), else the cluster's install count. A token taken before a
    /// `catalog()` call never describes an older catalog than that call's.
    pub fn catalog_token(&self) -> (usize, u64) {
        match &*self.txn_catalog.borrow() {
            Some(c) => (Arc::as_ptr(c) as usize, 0),
            None => (0, self.cluster.catalog_generation()),
        }
    }

    /// After a DDL statement: re-read the catalog through the transaction.
    pub fn reload_txn_catalog(&self) -> PgResult<()> {
        let txn = self.txn()?;
        let cat = store::load_database(txn, self.db)?;
        *self.txn_catalog.borrow_mut() = Some(Arc::new(cat));
        Ok(())
    }

    pub fn has_uncommitted_ddl(&self) -> bool {
        self.txn_catalog.borrow().is_some()
    }

    pub fn analyzer<'a>(&'a self, catalog: &'a DbCatalog, settings: &'a Settings, params: &[SqlType], sql: &'a str) -> Analyzer<'a> {
        let mut a = Analyzer::new(AnalyzerEnv { catalog, settings, user: &self.user, temp_namespace: self.temp_namespace }, params, sql);
        a.acl_user = crate::commands::grant::checked_user(self);
        a
    }

    // ---------------------------------------------------------------- queries

    /// Analyzes and plans a query statement; returns the plan and the
    /// parameter types (as given or inferred).
    pub fn plan_query(&self, stmt: &ParsedStatement, sql: &str, param_types: &[SqlType]) -> PgResult<(Arc<PlannedQuery>, Vec<SqlType>)> {
        self.plan_query_with(stmt, sql, param_types, None)
    }

    /// `plan_query` for a statement of procedural code, whose variables
    /// `source` resolves.
    pub fn plan_query_with(
        &self,
        stmt: &ParsedStatement,
        sql: &str,
        param_types: &[SqlType],
        source: Option<&dyn crate::procedural::ParamSource>,
    ) -> PgResult<(Arc<PlannedQuery>, Vec<SqlType>)> {
        let catalog = self.catalog()?;
        let settings = self.settings.borrow();
        let mut a = self.analyzer(&catalog, &settings, param_types, sql);
        a.param_source = source;
        let mut q = a.analyze(&stmt.node)?;
        // Procedural code passes every variable it handed out, used or not.
        let params = if source.is_some() { a.params.borrow().clone() } else { a.final_param_types()? };
        crate::planner::inline::inline_functions(&mut q, &catalog, &|f| self.analyze_function_body(&catalog, &settings, f))?;
        let mut p = Planner::new(&catalog);
        let mut planned = p.plan_statement(&q)?;
        planned.perms = std::mem::take(&mut a.perms);
        planned.catalog = Arc::downgrade(&catalog);
        #[cfg(feature = "fault-injection")]
        {
            planned.panic_when_done = sql.contains(FAULT_PANIC_MARKER);
        }
        Ok((Arc::new(planned), params))
    }

    /// A SQL function's body as one analyzed statement (its parameters as
    /// `$n`), for inlining it into a query; None when it is not one
    /// statement or no longer analyzes.
    fn analyze_function_body(&self, catalog: &DbCatalog, settings: &crate::settings::Settings, f: &crate::catalog::function::Function) -> Option<crate::query::Query> {
        // Without EXECUTE the call stays a call, which fails when it runs
        // (inline_function's permission check).
        crate::commands::grant::check_execute(self, f).ok()?;
        let text = f.sql_body.as_deref().unwrap_or(&f.src);
        let mut stmts = crate::parser::parse(text).ok()?;
        if stmts.len() != 1 {
            return None;
        }
        let st = stmts.pop()?;
        let params = crate::commands::function::BodyParams::of(f);
        let mut a = self.analyzer(catalog, settings, &[], text);
        a.param_source = Some(&params);
        a.analyze(&st.node).ok()
    }

    /// Records storage this transaction created.
    pub fn note_fresh_storage(&self, storage_id: u32) {
        let depth = self.savepoint_marks.borrow().len();
        self.fresh_storage.borrow_mut().insert(storage_id, depth);
    }

    /// Whether this transaction created `storage_id` (COPY FREEZE's test).
    pub fn is_fresh_storage(&self, storage_id: u32) -> bool {
        self.fresh_storage.borrow().contains_key(&storage_id)
    }

    // ------------------------------------------------------ deferred checks

    /// Whether a deferrable constraint is deferred now.
    pub fn constraint_deferred(&self, constraint: Oid, initially_deferred: bool) -> bool {
        self.constraint_modes.borrow().mode(constraint).unwrap_or(initially_deferred)
    }

    pub fn defer_check(&self, check: DeferredCheck) {
        if let Some(k) = check.dedup_key() {
            if !self.deferred_rows.borrow_mut().insert(k) {
                return;
            }
        }
        self.deferred_checks.borrow_mut().push(check);
    }

    /// SET CONSTRAINTS: `constraints` (None = ALL) become deferred or
    /// immediate for the rest of the transaction. Checks that were waiting
    /// for constraints made immediate run now.
    pub fn set_constraints(&mut self, constraints: Option<&[Oid]>, deferred: bool) -> PgResult<()> {
        {
            let mut modes = self.constraint_modes.borrow_mut();
            match constraints {
                None => {
                    modes.all = Some(deferred);
                    modes.named.clear();
                }
                Some(oids) => {
                    for &o in oids {
                        modes.named.insert(o, deferred);
                    }
                }
            }
        }
        if deferred || self.txn.is_none() {
            return Ok(());
        }
        let modes = self.constraint_modes.borrow().clone();
        self.run_deferred_checks(&|c| modes.mode(c) == Some(false))
    }

    /// Runs the queued checks of the constraints `due` selects, and drops
    /// them from the queue when all pass.
    fn run_deferred_checks(&self, due: &dyn Fn(Oid) -> bool) -> PgResult<()> {
        if self.deferred_checks.borrow().is_empty() {
            return Ok(());
        }
        let catalog = self.catalog()?;
        let checks: Vec<DeferredCheck> = self.deferred_checks.borrow().iter().filter(|c| due(c.constraint())).cloned().collect();
        self.with_exec(&catalog, |cx| executor::check_deferred(&checks, cx))?;
        let mut rows = self.deferred_rows.borrow_mut();
        self.deferred_checks.borrow_mut().retain(|c| {
            if !due(c.constraint()) {
                return true;
            }
            if let Some(k) = c.dedup_key() {
                rows.remove(&k);
            }
            false
        });
        Ok(())
    }

    /// A transaction's end forgets its deferred checks and SET CONSTRAINTS.
    fn clear_deferred_checks(&self) {
        self.deferred_checks.borrow_mut().clear();
        self.deferred_rows.borrow_mut().clear();
        *self.constraint_modes.borrow_mut() = ConstraintModes::default();
    }

    /// See `Env::bulk_storage`.
    pub fn is_bulk_storage(&self, storage_id: u32) -> bool {
        let depth = self.savepoint_marks.borrow().len();
        self.isolation().is_some_and(Isolation::per_statement) && self.fresh_storage.borrow().get(&storage_id) == Some(&depth)
    }

    /// A rolled-back transaction's new storage: nothing references it, and
    /// rows written around the transaction must go.
    fn drop_fresh_storage(&self) {
        let ids: Vec<u32> = self.fresh_storage.borrow_mut().drain().map(|(id, _)| id).collect();
        self.cluster.drop_storage(&ids);
    }

    /// Takes the shared relation lock a writer holds until commit.
    pub fn lock_relation_shared(&self, rel: Oid) -> PgResult<()> {
        if self.locked_relations.borrow_mut().insert(rel) {
            self.txn()?.lock_shared(&crate::commands::ddl::relation_lock_key(rel))?;
        }
        Ok(())
    }

    /// Runs `f` with an executor context over `catalog` (for work that is
    /// not a planned query: COPY FROM's inserts and defaults).
    pub fn with_exec_cx<R>(&self, catalog: &Arc<DbCatalog>, state: &StmtState, f: impl FnOnce(&ExecCx) -> PgResult<R>) -> PgResult<R> {
        let env = SessionEnv { s: self, catalog };
        let cx = ExecCx {
            txn: self.txn()?,
            env: &env,
            catalog,
            params: &[],
            outer: &[],
            state,
            work_mem_bytes: self.settings.borrow().work_mem_kb as usize * 1024,
        };
        f(&cx)
    }

    /// Relation locks, PostgreSQL's AccessShareLock and RowExclusiveLock:
    /// a statement that writes, or any statement in a transaction block,
    /// holds a shared lock on each table it uses until the transaction
    /// ends, so DDL on the table (which locks it exclusively) waits for the
    /// transaction. A read-only statement outside a block takes none: it
    /// reads one snapshot, which DDL committed meanwhile cannot disturb.
    ///
    /// If DDL committed while a lock was awaited, the plan may name storage
    /// that no longer holds the table: the caller re-plans (`is_stale_plan`).
    fn lock_relations(&self, planned: &PlannedQuery) -> PgResult<()> {
        let writes = planned.has_modify || !planned.pre_modify.is_empty() || planned.row_lock;
        if planned.relations.is_empty() || !(writes || self.in_block.get()) {
            return Ok(());
        }
        let txn = self.txn()?;
        let mut took = false;
        for &rel in &planned.relations {
            if self.locked_relations.borrow_mut().insert(rel) {
                txn.lock_shared(&crate::commands::ddl::relation_lock_key(rel))?;
                took = true;
            }
        }
        if took {
            let now = self.catalog()?;
            if !planned.catalog.upgrade().is_some_and(|c| Arc::ptr_eq(&c, &now)) {
                return Err(PgError::new(STALE_PLAN, "the catalog changed while the statement waited for a lock"));
            }
        }
        Ok(())
    }

    /// Starts running a planned query.
    pub fn start_query(&self, planned: Arc<PlannedQuery>, params: Vec<Datum>) -> PgResult<QueryRun> {
        self.start_query_with(planned, params, StmtState::default())
    }

    /// Starts running a planned query with the given statement state
    /// (EXPLAIN ANALYZE's carries its instrumentation).
    pub fn start_query_with(&self, planned: Arc<PlannedQuery>, params: Vec<Datum>, state: StmtState) -> PgResult<QueryRun> {
        if self.read_only {
            if let crate::plan::Plan::Modify { kind, .. } = &planned.plan {
                let verb = match kind {
                    crate::plan::ModifyKind::Insert => "INSERT",
                    crate::plan::ModifyKind::Update => "UPDATE",
                    crate::plan::ModifyKind::Delete => "DELETE",
                };
                return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, format!("cannot execute {verb} in a read-only transaction")));
            }
        }
        crate::commands::grant::check_relation_privileges(self, &planned.perms)?;
        // The transaction snapshot (a DEFERRABLE one may wait here), taken
        // before the statement's relation locks, as PostgreSQL does.
        self.txn()?.take_snapshot()?;
        self.lock_relations(&planned)?;
        self.snapshot_taken.set(true);
        let catalog = self.catalog()?;
        let state = Box::new(state);
        let mut run = QueryRun { node: None, state, params, catalog, columns: planned.columns.clone(), planned, finished: false };
        {
            let env = SessionEnv { s: self, catalog: &run.catalog };
            let cx = run.cx(self.txn()?, &env);
            // Data-modifying WITH queries run first, exactly once, whether
            // or not the statement reads them; their own counts do not go
            // into the statement's command tag.
            for (id, plan) in &run.planned.pre_modify {
                if self.read_only {
                    // PostgreSQL names the statement, not the WITH query.
                    let _ = plan;
                    let verb = match &run.planned.plan {
                        crate::plan::Plan::Modify { kind: crate::plan::ModifyKind::Insert, .. } => "INSERT",
                        crate::plan::Plan::Modify { kind: crate::plan::ModifyKind::Update, .. } => "UPDATE",
                        crate::plan::Plan::Modify { kind: crate::plan::ModifyKind::Delete, .. } => "DELETE",
                        _ => "SELECT",
                    };
                    return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, format!("cannot execute {verb} in a read-only transaction")));
                }
                let counted = cx.state.modified.get();
                let mut node = executor::build(plan, &cx)?;
                let mut rows = Vec::new();
                while let Some(r) = node.next(&cx)? {
                    rows.push(r);
                }
                cx.state.modified.set(counted);
                cx.state.worktables.borrow_mut().insert(*id, std::rc::Rc::new(rows));
            }
            let node = executor::build(&run.planned.plan, &cx)?;
            run.node = Some(node);
        }
        Ok(run)
    }

    /// Runs `f` with an execution context over this session's transaction
    /// (for DDL that reads or writes rows: index builds, validation).
    pub fn with_exec<T>(&self, catalog: &DbCatalog, f: impl FnOnce(&ExecCx) -> PgResult<T>) -> PgResult<T> {
        self.with_exec_params(catalog, &[], f)
    }

    /// `with_exec` where expressions read `$n` parameters.
    pub fn with_exec_params<T>(&self, catalog: &DbCatalog, params: &[Datum], f: impl FnOnce(&ExecCx) -> PgResult<T>) -> PgResult<T> {
        let env = SessionEnv { s: self, catalog };
        let state = StmtState::default();
        let work_mem_bytes = self.settings.borrow().work_mem_kb as usize * 1024;
        let cx = ExecCx { txn: self.txn()?, env: &env, catalog, params, outer: &[], state: &state, work_mem_bytes };
        f(&cx)
    }

    // ---------------------------------------------------------------- sequences

    fn sequence_info(&self, catalog: &DbCatalog, seq: Oid) -> PgResult<(String, crate::catalog::SequenceInfo)> {
        let rel = catalog.relation(seq).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("could not open relation with OID {seq}")))?;
        if rel.kind != RelKind::Sequence {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a sequence", rel.name)));
        }
        Ok((rel.name.clone(), rel.sequence.clone().ok_or_else(|| PgError::internal("sequence without parameters"))?))
    }
}

/// A query being executed (a portal's engine).
/// Tests only (feature `fault-injection`, which the integration tests'
/// build turns on): a query whose text holds this marker (as a column
/// alias, which survives the simple protocol's normalization where a
/// comment would not) panics after its last row, its writes done, so tests
/// can prove that a panic ends one statement (XX000, its transaction rolled
/// back) and nothing else.
#[cfg(feature = "fault-injection")]
pub const FAULT_PANIC_MARKER: &str = "tusk_fault_injection_panic";

pub struct QueryRun {
    node: Option<Box<dyn Node>>,
    state: Box<StmtState>,
    params: Vec<Datum>,
    catalog: Arc<DbCatalog>,
    pub columns: Vec<OutputColumn>,
    pub planned: Arc<PlannedQuery>,
    finished: bool,
}

impl QueryRun {
    fn cx<'a>(&'a self, txn: &'a Txn, env: &'a SessionEnv<'a>) -> ExecCx<'a> {
        ExecCx {
            txn,
            env,
            catalog: &self.catalog,
            params: &self.params,
            outer: &[],
            state: &self.state,
            work_mem_bytes: env.s.settings.borrow().work_mem_kb as usize * 1024,
        }
    }

    /// Produces up to `max` rows (0 = all) into `sink`; returns true when the query is complete.
    pub fn fetch(&mut self, session: &SqlSession, max: usize, sink: &mut dyn FnMut(Row) -> PgResult<()>) -> PgResult<bool> {
        if self.finished {
            return Ok(true);
        }
        let txn = session.txn()?;
        let env = SessionEnv { s: session, catalog: &self.catalog };
        let mut node = self.node.take().ok_or_else(|| PgError::internal("query already failed"))?;
        // regclass output needs the catalog: such columns are converted here.
        let reg_columns: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                matches!(c.ty.oid, tusk_types::oid::REGCLASS | tusk_types::oid::REGROLE | tusk_types::oid::REGNAMESPACE)
                    || (matches!(c.ty.oid, tusk_types::oid::REGPROC | tusk_types::oid::REGPROCEDURE) && !self.catalog.functions.is_empty())
                    || (matches!(c.ty.oid, tusk_types::oid::REGOPER | tusk_types::oid::REGOPERATOR) && !self.catalog.user_ops.operators.is_empty())
            })
            .map(|(i, _)| i)
            .collect();
        let result = (|| {
            let cx = self.cx(txn, &env);
            let mut n = 0usize;
            loop {
                if max > 0 && n >= max {
                    return Ok(false);
                }
                // Rows read back from memory (a sort's, a CTE's) pass no
                // other check on their way to the client.
                cx.check()?;
                match node.next(&cx)? {
                    Some(mut row) => {
                        // A record whose text would pass 1 GB fails here,
                        // as its output does in PostgreSQL (records share
                        // their fields, so a small one can print huge).
                        for d in row.iter() {
                            if let Datum::Record(r) = d {
                                crate::functions::limits::check_record(r, &env.s.settings.borrow())?;
                            }
                        }
                        for &i in &reg_columns {
                            // (0 prints as "-" through the type's own output)
                            if let Some(Datum::Oid(o)) = row.get(i).filter(|d| !matches!(d, Datum::Oid(0))) {
                                let ty = self.columns[i].ty.oid;
                                if matches!(ty, tusk_types::oid::REGPROC | tusk_types::oid::REGPROCEDURE) {
                                    // Built-in functions print through the type's own output.
                                    if let Some(f) = self.catalog.functions.get(o) {
                                        row[i] = Datum::from_string(crate::fmgr::reg_name(f, ty == tusk_types::oid::REGPROCEDURE, &env));
                                    }
                                    continue;
                                }
                                if matches!(ty, tusk_types::oid::REGOPER | tusk_types::oid::REGOPERATOR) {
                                    // Built-in operators print through the type's own output.
                                    if let Some(op) = self.catalog.user_ops.operators.get(o) {
                                        let text = if ty == tusk_types::oid::REGOPERATOR { crate::commands::operator::describe(op) } else { op.name.clone() };
                                        row[i] = Datum::from_string(text);
                                    }
                                    continue;
                                }
                                row[i] = Datum::from_string(if self.columns[i].ty.oid == tusk_types::oid::REGROLE {
                                    crate::functions::cast::regrole_out(*o, &env)
                                } else if self.columns[i].ty.oid == tusk_types::oid::REGNAMESPACE {
                                    env.catalog.namespaces.get(o).map(|n| crate::functions::quote_ident(&n.name)).unwrap_or_else(|| o.to_string())
                                } else {
                                    env.relation_name(*o).unwrap_or_else(|| o.to_string())
                                });
                            }
                        }
                        sink(row)?;
                        n += 1;
                    }
                    None => {
                        #[cfg(feature = "fault-injection")]
                        if self.planned.panic_when_done {
                            panic!("fault injection: {FAULT_PANIC_MARKER}");
                        }
                        return Ok(true);
                    }
                }
            }
        })();
        self.node = Some(node);
        if let Ok(true) = result {
            self.finished = true;
        }
        result
    }

    /// The statement state (EXPLAIN ANALYZE reads its instrumentation).
    pub fn state(&self) -> &StmtState {
        &self.state
    }

    /// Rows inserted/updated/deleted so far.
    pub fn rows_modified(&self) -> u64 {
        self.state.modified.get()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

/// The `Env` functions see: the session plus the statement's catalog.
pub struct SessionEnv<'a> {
    pub s: &'a SqlSession,
    pub catalog: &'a DbCatalog,
}

impl<'a> Env for SessionEnv<'a> {
    fn trigger_depth(&self) -> i32 {
        self.s.trigger_depth.get()
    }
    fn named_tuplestore(&self, name: &str) -> Option<Arc<Vec<Vec<Datum>>>> {
        let envs = self.s.query_envs.borrow();
        envs.last()?.as_ref()?.iter().find(|t| t.name == name).map(|t| t.rows.clone())
    }
    fn bulk_storage(&self, storage_id: u32) -> bool {
        self.s.is_bulk_storage(storage_id)
    }
    fn constraint_deferred(&self, constraint: Oid, initially_deferred: bool) -> bool {
        self.s.constraint_deferred(constraint, initially_deferred)
    }
    fn defer_check(&self, check: DeferredCheck) {
        self.s.defer_check(check)
    }
    fn notify(&self, channel: Arc<str>, payload: Arc<str>) -> PgResult<()> {
        crate::commands::notify::notify(self.s, channel, payload)
    }
    fn listening_channels(&self) -> Vec<String> {
        crate::commands::notify::listening_channels(self.s)
    }
    fn notification_queue_usage(&self) -> f64 {
        self.s.cluster.notifier.usage()
    }

    fn settings(&self) -> Ref<'_, Settings> {
        self.s.settings.borrow()
    }
    fn catalog(&self) -> &DbCatalog {
        self.catalog
    }
    fn transaction_timestamp(&self) -> i64 {
        self.s.txn_start
    }
    fn statement_timestamp(&self) -> i64 {
        self.s.stmt_start.get()
    }
    fn current_user(&self) -> String {
        self.s.user.clone()
    }
    fn session_user(&self) -> String {
        self.s.session_user.clone()
    }
    fn current_database(&self) -> String {
        self.s.db_name.clone()
    }
    fn backend_pid(&self) -> i32 {
        self.s.pid
    }
    fn nextval(&self, seq: Oid) -> PgResult<i64> {
        if self.s.read_only {
            return Err(PgError::new(sqlstate::READ_ONLY_SQL_TRANSACTION, "cannot execute nextval() in a read-only transaction"));
        }
        let (name, info) = self.s.sequence_info(self.catalog, seq)?;
        // Waits for a restart in progress (see `restart_sequence`).
        self.s.lock_relation_shared(seq)?;
        let v = self.s.cluster.sequences.nextval(seq, &name, &info)?;
        self.s.currvals.borrow_mut().insert(seq, v);
        self.s.last_sequence.set(Some(seq));
        Ok(v)
    }
    fn currval(&self, seq: Oid) -> PgResult<i64> {
        let (name, _) = self.s.sequence_info(self.catalog, seq)?;
        self.s.currvals.borrow().get(&seq).copied().ok_or_else(|| {
            PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("currval of sequence \"{name}\" is not yet defined in this session"),
            )
        })
    }
    fn lastval(&self) -> PgResult<i64> {
        let seq = self
            .s
            .last_sequence
            .get()
            .ok_or_else(|| PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, "lastval is not yet defined in this session"))?;
        self.s.currvals.borrow().get(&seq).copied().ok_or_else(|| PgError::internal("lastval"))
    }
    fn setval(&self, seq: Oid, value: i64, is_called: bool) -> PgResult<i64> {
        let (name, info) = self.s.sequence_info(self.catalog, seq)?;
        self.s.lock_relation_shared(seq)?;
        self.s.cluster.sequences.setval(seq, &name, &info, value, is_called)?;
        if is_called {
            self.s.currvals.borrow_mut().insert(seq, value);
            self.s.last_sequence.set(Some(seq));
        }
        Ok(value)
    }
    fn set_config(&self, name: &str, value: Option<&str>, is_local: bool) -> PgResult<String> {
        self.s.remember_setting(name, is_local);
        let mut s = self.s.settings.borrow_mut();
        match value {
            Some(v) => s.set(name, v)?,
            None => s.reset(name)?,
        }
        s.show(name)
    }
    fn random(&self) -> f64 {
        self.s.rng.borrow_mut().gen::<f64>()
    }
    fn set_seed(&self, seed: f64) {
        let bits = (seed * i64::MAX as f64) as u64;
        *self.s.rng.borrow_mut() = rand::rngs::StdRng::seed_from_u64(bits);
    }
    fn relation_name(&self, oid: Oid) -> Option<String> {
        let rel = self.catalog.relation(oid)?;
        let settings = self.s.settings.borrow();
        let temp = self.s.temp_namespace;
        let catalog = self.catalog;
        let a = Analyzer::new(AnalyzerEnv { catalog, settings: &settings, user: &self.s.user, temp_namespace: temp }, &[], "");
        let visible = a.lookup_relation(None, &rel.name).map(|r| r.oid == oid).unwrap_or(false);
        Some(if visible {
            crate::functions::quote_ident(&rel.name)
        } else {
            format!("{}.{}", crate::functions::quote_ident(catalog.namespace_name(rel.namespace)), crate::functions::quote_ident(&rel.name))
        })
    }
    fn lookup_relation_oid(&self, name: &str) -> PgResult<Oid> {
        let parts = crate::functions::parse_qualified_name(name)?;
        let settings = self.s.settings.borrow();
        let a = Analyzer::new(
            AnalyzerEnv { catalog: self.catalog, settings: &settings, user: &self.s.user, temp_namespace: self.s.temp_namespace },
            &[],
            "",
        );
        let (schema, rel) = match parts.as_slice() {
            [r] => (None, r.as_str()),
            [s, r] => (Some(s.as_str()), r.as_str()),
            [_, s, r] => (Some(s.as_str()), r.as_str()),
            _ => return Err(PgError::new(sqlstate::INVALID_NAME, format!("improper relation name (too many dotted names): {name}"))),
        };
        a.lookup_relation(schema, rel)
            .map(|r| r.oid)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))
    }
    fn check_interrupts(&self) -> PgResult<()> {
        self.s.interrupt.check()
    }
    fn sleep(&self, seconds: f64) -> PgResult<()> {
        let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds.max(0.0).min(1e9));
        let _waiting = self.s.interrupt.wait_for(tusk_storage::Wait::Sleep);
        loop {
            self.s.interrupt.check()?;
            let now = std::time::Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
        }
    }
    fn in_transaction_block(&self) -> bool {
        self.s.in_block.get()
    }
    fn backend_activity(&self) -> Vec<crate::cluster::BackendActivity> {
        self.s.cluster.activity()
    }
    fn backend_role(&self, pid: i32) -> Option<String> {
        self.s.cluster.backend_role(pid)
    }
    fn signal_backend(&self, pid: i32, terminate: bool) -> bool {
        if terminate {
            self.s.cluster.terminate_backend(pid)
        } else {
            self.s.cluster.cancel_backend(pid)
        }
    }
    fn notice(&self, notice: PgError) {
        self.s.notices.borrow_mut().push(notice);
    }

    fn call_function(&self, func: Oid, args: &[Datum], arg_types: &[SqlType], ret: SqlType) -> PgResult<crate::procedural::CallOutcome> {
        crate::fmgr::call_function(self.s, self.catalog, func, args, arg_types, ret)
    }

    fn call_trigger(&self, func: Oid, data: &crate::procedural::TriggerData) -> PgResult<Datum> {
        crate::fmgr::call_trigger(self.s, self.catalog, func, data)
    }

    fn check_domain(&self, value: Datum, domain: SqlType) -> PgResult<Datum> {
        let base = crate::catalog::types::base_type(domain);
        let settings = self.s.settings.borrow().clone();
        let check = self.s.analyzer(self.catalog, &settings, &[], "").coerce_to_domain(crate::expr::Expr::Const(value, base), domain)?;
        self.s.with_exec(self.catalog, |cx| crate::executor::eval(&check, &[], cx))
    }

    fn prepared_statements(&self) -> Vec<(String, PreparedStatementInfo)> {
        self.s.prepared_statements.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    fn open_cursors(&self) -> Vec<crate::commands::cursor::CursorInfo> {
        self.s.cursors.borrow().list()
    }

    fn cluster_catalog(&self) -> Arc<crate::catalog::ClusterCatalog> {
        self.s.cluster_catalog()
    }
    fn database_oid(&self) -> Oid {
        self.s.db
    }
    fn storage_bytes(&self, storage_id: u32) -> PgResult<u64> {
        self.s.cluster.engine.prefix_bytes(&tusk_storage::keys::storage_prefix(storage_id))
    }
    fn database_bytes(&self, db: Oid) -> PgResult<Option<u64>> {
        if !self.s.cluster_catalog().databases.contains_key(&db) {
            return Ok(None);
        }
        let catalog = if db == self.s.db { None } else { Some(self.s.cluster.catalog(db)?) };
        let catalog = catalog.as_deref().unwrap_or(self.catalog);
        let mut total = 0;
        for rel in catalog.relations.values().filter(|r| r.storage_id != 0) {
            self.check_interrupts()?;
            total += self.storage_bytes(rel.storage_id)?;
        }
        Ok(Some(total))
    }
    fn sequence_state(&self, seq: Oid) -> PgResult<(i64, bool)> {
        let (_, info) = self.s.sequence_info(self.catalog, seq)?;
        self.s.cluster.sequences.peek(seq, &info)
    }
}
