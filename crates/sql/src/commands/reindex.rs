//! REINDEX { INDEX | TABLE | SCHEMA | DATABASE | SYSTEM } [CONCURRENTLY] name,
//! with PostgreSQL 15's options (VERBOSE, CONCURRENTLY, TABLESPACE) and
//! messages.
//!
//! A rebuilt index gets new storage filled from the table's rows, as
//! PostgreSQL gives it a new relfilenode; the old storage is freed when the
//! transaction commits (like TRUNCATE's). Tusk's system catalogs are views
//! over its own catalog records with no index storage of their own, so
//! reindexing them has nothing to rebuild; the statements PostgreSQL refuses
//! for them (CONCURRENTLY) are refused the same way. An index stored as the
//! table's own key order (a clustered primary key) is the table itself and
//! is never out of date.
//!
//! Tusk has no invalid indexes (a failed CREATE INDEX leaves nothing
//! behind), so CONCURRENTLY differs from the plain form only in what it
//! refuses and how VERBOSE reports; both run under the table's DDL lock.

use std::sync::Arc;
use std::time::Instant;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult, Severity};

use super::ddl::{build_index, Ddl};
use super::{def_elem_value, notice};
use crate::catalog::{RelKind, Relation, PG_CATALOG_NAMESPACE, PG_TOAST_NAMESPACE};
use crate::session::SqlSession;

/// REINDEX's options (parenthesized, or CONCURRENTLY after the object kind).
struct Options {
    verbose: bool,
    concurrently: bool,
}

pub fn reindex(s: &mut SqlSession, stmt: &pb::ReindexStmt, sql: &str) -> PgResult<()> {
    let opts = options(stmt)?;
    let in_block = s.in_block.get();
    if opts.concurrently && in_block {
        return Err(in_transaction_block("REINDEX CONCURRENTLY"));
    }
    let kind = pb::ReindexObjectType::from_i32(stmt.kind).unwrap_or(pb::ReindexObjectType::Undefined);
    {
        let d = Ddl::new(s, sql)?;
        match kind {
            pb::ReindexObjectType::ReindexObjectIndex => {
                let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("REINDEX INDEX without name"))?;
                let idx = lookup(&d, rv)?;
                if idx.kind != RelKind::Index {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not an index", idx.name)));
                }
                super::grant::check_relation_owner(d.s, &idx)?;
                if opts.concurrently && is_system(&idx) {
                    return Err(system_concurrently());
                }
                let table = idx
                    .index
                    .as_ref()
                    .and_then(|i| d.catalog.relation(i.table))
                    .cloned()
                    .ok_or_else(|| PgError::internal("index without its table"))?;
                d.lock_relation(table.oid)?;
                rebuild(&d, &table, &idx, &opts)?;
            }
            pb::ReindexObjectType::ReindexObjectTable => {
                let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("REINDEX TABLE without name"))?;
                let table = lookup(&d, rv)?;
                if table.kind != RelKind::Table {
                    return Err(PgError::new(
                        sqlstate::WRONG_OBJECT_TYPE,
                        format!("\"{}\" is not a table or materialized view", table.name),
                    ));
                }
                super::grant::check_relation_owner(d.s, &table)?;
                if opts.concurrently && is_system(&table) {
                    return Err(system_concurrently());
                }
                reindex_table(&d, &table, &opts, false)?;
            }
            _ => {
                let what = match kind {
                    pb::ReindexObjectType::ReindexObjectSchema => "REINDEX SCHEMA",
                    pb::ReindexObjectType::ReindexObjectSystem => "REINDEX SYSTEM",
                    _ => "REINDEX DATABASE",
                };
                if in_block {
                    return Err(in_transaction_block(what));
                }
                reindex_multiple(&d, kind, &stmt.name, &opts)?;
            }
        }
    }
    s.reload_txn_catalog()
}

/// The parenthesized options; an unknown one is a syntax error at its name.
fn options(stmt: &pb::ReindexStmt) -> PgResult<Options> {
    let mut o = Options { verbose: false, concurrently: false };
    for p in &stmt.params {
        let Some(NodeEnum::DefElem(de)) = &p.node else { continue };
        let on = || -> PgResult<bool> {
            match def_elem_value(de) {
                None => Ok(true),
                Some(v) => crate::settings::parse_bool(&v).ok_or_else(|| {
                    PgError::new(sqlstate::SYNTAX_ERROR, format!("{} requires a Boolean value", de.defname))
                }),
            }
        };
        match de.defname.as_str() {
            "verbose" => o.verbose = on()?,
            "concurrently" => o.concurrently = on()?,
            "tablespace" => {
                let name = def_elem_value(de).unwrap_or_default();
                if name != "pg_default" && name != "pg_global" {
                    return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("tablespace \"{name}\" does not exist")));
                }
            }
            other => {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("unrecognized REINDEX option \"{other}\""))
                    .with_position(crate::analyzer::pos(de.location)));
            }
        }
    }
    Ok(o)
}

/// The relation a REINDEX names; PostgreSQL reports a missing one without
/// a cursor position (utility statements have no parse state).
fn lookup(d: &Ddl, rv: &pb::RangeVar) -> PgResult<Arc<Relation>> {
    d.lookup(rv).map_err(|mut e| {
        e.position = None;
        e
    })
}

fn in_transaction_block(what: &str) -> PgError {
    PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, format!("{what} cannot run inside a transaction block"))
}

fn system_concurrently() -> PgError {
    PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot reindex system catalogs concurrently")
}

/// PostgreSQL's IsCatalogRelation: what lives in pg_catalog or pg_toast.
fn is_system(rel: &Relation) -> bool {
    rel.namespace == PG_CATALOG_NAMESPACE || rel.namespace == PG_TOAST_NAMESPACE
}

/// Rebuilds every index of `table`; false when it had none. `quiet` leaves
/// out the "no indexes" NOTICE (REINDEX SCHEMA and DATABASE don't give it).
fn reindex_table(d: &Ddl, table: &Arc<Relation>, opts: &Options, quiet: bool) -> PgResult<bool> {
    let started = Usage::start();
    d.lock_relation(table.oid)?;
    let indexes: Vec<Arc<Relation>> = d.catalog.indexes_of(table).cloned().collect();
    if indexes.is_empty() {
        if !quiet {
            notice(
                d.s,
                if opts.concurrently {
                    format!("table \"{}\" has no indexes that can be reindexed concurrently", table.name)
                } else {
                    format!("table \"{}\" has no indexes to reindex", table.name)
                },
            );
        }
        return Ok(false);
    }
    for idx in &indexes {
        rebuild(d, table, idx, opts)?;
    }
    if opts.verbose && opts.concurrently {
        info(
            d,
            format!("table \"{}.{}\" was reindexed", namespace_name(d, table), table.name),
            Some(format!("{}.", started.show())),
        );
    }
    Ok(true)
}

/// Gives `idx` new storage filled from the table's rows.
fn rebuild(d: &Ddl, table: &Relation, idx: &Relation, opts: &Options) -> PgResult<()> {
    let started = Usage::start();
    let clustered = idx.index.as_ref().map(|i| i.clustered).unwrap_or(false);
    // Catalog views and a clustered primary key have no storage apart from
    // their table's: nothing to rebuild.
    if !clustered && idx.storage_id != 0 && !is_system(idx) {
        let mut fresh = idx.clone();
        d.s.note_drop(fresh.storage_id);
        fresh.storage_id = d.storage()?;
        d.put(&fresh)?;
        build_index(d, table, idx.oid)?;
    }
    if opts.verbose {
        if opts.concurrently {
            info(d, format!("index \"{}.{}\" was reindexed", namespace_name(d, idx), idx.name), None);
        } else {
            info(d, format!("index \"{}\" was reindexed", idx.name), Some(started.show()));
        }
    }
    Ok(())
}

/// REINDEX SCHEMA / DATABASE / SYSTEM: each table in turn (ReindexMultipleTables).
fn reindex_multiple(d: &Ddl, kind: pb::ReindexObjectType, name: &str, opts: &Options) -> PgResult<()> {
    let me = super::grant::checked_user(d.s);
    let schema = if kind == pb::ReindexObjectType::ReindexObjectSchema {
        let nsp = *d
            .catalog
            .namespace_by_name
            .get(name)
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")))?;
        Some(nsp)
    } else {
        None
    };
    if kind == pb::ReindexObjectType::ReindexObjectSystem && opts.concurrently {
        return Err(system_concurrently());
    }
    match schema {
        Some(nsp) => {
            if let Some(me) = &me {
                let owner = d.catalog.namespaces.get(&nsp).map_or(crate::catalog::BOOTSTRAP_SUPERUSER, |n| n.owner);
                if !me.holds(owner) {
                    return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of schema {name}")));
                }
            }
            if opts.concurrently && (nsp == PG_CATALOG_NAMESPACE || nsp == PG_TOAST_NAMESPACE) {
                d.s.notices.borrow_mut().push(PgError::warning("cannot reindex system catalogs concurrently, skipping all"));
                return Ok(());
            }
        }
        None => {
            if name != d.s.db_name {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "can only reindex the currently open database"));
            }
            if let Some(me) = &me {
                let cluster = d.s.cluster_catalog();
                let owner = cluster.database_by_name(name).map_or(crate::catalog::BOOTSTRAP_SUPERUSER, |db| db.owner);
                if !me.holds(owner) {
                    return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of database {name}")));
                }
            }
        }
    }
    // SYSTEM reindexes only catalogs, which have no index storage in Tusk;
    // SCHEMA and DATABASE every table the user owns (others are skipped,
    // as PostgreSQL skips them), temporary tables of other sessions aside.
    if kind == pb::ReindexObjectType::ReindexObjectSystem {
        return Ok(());
    }
    let mut tables: Vec<Arc<Relation>> = d
        .catalog
        .relations
        .values()
        .filter(|r| r.kind == RelKind::Table && schema.map_or(true, |n| r.namespace == n))
        .filter(|r| me.as_ref().map_or(true, |me| me.holds(r.owner)))
        .cloned()
        .collect();
    tables.sort_by_key(|r| r.oid);
    for t in &tables {
        if reindex_table(d, t, opts, true)? && opts.verbose {
            info(d, format!("table \"{}.{}\" was reindexed", namespace_name(d, t), t.name), None);
        }
    }
    Ok(())
}

fn namespace_name(d: &Ddl, rel: &Relation) -> String {
    d.catalog.namespaces.get(&rel.namespace).map(|n| n.name.clone()).unwrap_or_default()
}

/// An INFO message (sent whatever client_min_messages says).
fn info(d: &Ddl, message: String, detail: Option<String>) {
    let mut e = PgError::notice(message);
    e.severity = Severity::Info;
    if let Some(detail) = detail {
        e = e.with_detail(detail);
    }
    d.s.notices.borrow_mut().push(e);
}

/// The session thread's CPU times so far (user, system), for VERBOSE's
/// pg_rusage_show.
fn thread_cpu() -> (f64, f64) {
    // SAFETY: getrusage writes the whole struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// When a step started, for its VERBOSE report.
struct Usage {
    at: Instant,
    cpu: (f64, f64),
}

impl Usage {
    fn start() -> Usage {
        Usage { at: Instant::now(), cpu: thread_cpu() }
    }

    /// pg_rusage_show's text.
    fn show(&self) -> String {
        let (user, sys) = thread_cpu();
        format!(
            "CPU: user: {:.2} s, system: {:.2} s, elapsed: {:.2} s",
            user - self.cpu.0,
            sys - self.cpu.1,
            self.at.elapsed().as_secs_f64()
        )
    }
}
