//! INSERT, UPDATE and DELETE: writing rows with their constraints.
//!
//! For every row this checks NOT NULL and CHECK constraints, unique keys
//! (locking them, so concurrent inserts of one key serialize), foreign keys
//! in both directions (with CASCADE / SET NULL / SET DEFAULT actions), and
//! applies READ COMMITTED's rule for rows changed concurrently: the row is
//! locked, its newest version re-read, and the statement's conditions and
//! new values re-evaluated on it (PostgreSQL's EvalPlanQual).
//!
//! The input is read completely before the first write, so a statement
//! never sees its own changes (the Halloween problem).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::eval::{eval, eval_pred};
use super::nodes::compile_for;
use super::table::TableAccess;
use super::{ExecCx, Node, Row};
use crate::catalog::{ConstraintKind, FkAction, Relation};
use crate::expr::Expr;
use crate::plan::{ModifyKind, OnConflictPlan};
use crate::functions::DeferredCheck;
use crate::catalog::trigger::{TriggerEvent, TriggerTiming};
use super::trigger::{AfterEvent, TableTriggers, TransitionKind};

/// Rows written, for the command tag.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModifyCounts {
    pub rows: u64,
}

struct FkOut {
    /// The constraint's OID (for SET CONSTRAINTS and deferred checks).
    oid: u32,
    deferrable: bool,
    initially_deferred: bool,
    name: String,
    cols: Vec<usize>,
    parent: u32,
    parent_cols: Vec<usize>,
    match_full: bool,
}

struct FkIn {
    oid: u32,
    deferrable: bool,
    initially_deferred: bool,
    name: String,
    child: u32,
    child_cols: Vec<usize>,
    parent_cols: Vec<usize>,
    on_delete: FkAction,
    on_update: FkAction,
}

/// A DEFERRABLE unique or primary key constraint: its index's keys are
/// checked at the end of the statement, or at commit when deferred.
struct DeferrableUnique {
    constraint: u32,
    initially_deferred: bool,
    /// Position of its index in `TableAccess::indexes`.
    index: usize,
}

/// Everything needed to write rows of one relation.
struct RelInfo {
    table: TableAccess,
    checks: Vec<(String, Expr)>,
    not_null: Vec<usize>,
    fks_out: Vec<FkOut>,
    fks_in: Vec<FkIn>,
    deferrable_uniques: Vec<DeferrableUnique>,
    /// Column defaults, for SET DEFAULT actions (compiled lazily).
    defaults: Option<Vec<Expr>>,
    /// New rows go around the transaction (`TableAccess::bulk_eligible`).
    bulk: bool,
    /// The table's enabled triggers; None when it has none.
    triggers: Option<Rc<TableTriggers>>,
}

fn live_index(rel: &Relation, attnum: i16) -> PgResult<usize> {
    rel.live_columns().position(|(a, _)| a == attnum).ok_or_else(|| PgError::internal("constraint column is dropped"))
}

fn rel_info(rel: Arc<Relation>, cx: &ExecCx) -> PgResult<RelInfo> {
    let mut compile = compile_for(cx);
    let table = TableAccess::new(rel.clone(), cx.catalog, &mut compile)?;
    let mut checks = Vec::new();
    let mut fks_out = Vec::new();
    let mut deferrable_uniques = Vec::new();
    for c in &rel.constraints {
        match c.kind {
            ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion if c.deferrable => {
                if let Some(index) = table.indexes.iter().position(|i| i.rel.oid == c.index && i.deferrable) {
                    deferrable_uniques.push(DeferrableUnique { constraint: c.oid, initially_deferred: c.deferred, index });
                }
            }
            ConstraintKind::Check => {
                if let Some(text) = &c.check {
                    checks.push((c.name.clone(), compile(&rel, text)?));
                }
            }
            ConstraintKind::ForeignKey => {
                let fk = c.foreign.as_ref().ok_or_else(|| PgError::internal("foreign key without reference"))?;
                let parent = cx.catalog.relation(fk.ref_table).ok_or_else(|| PgError::internal("referenced table missing"))?;
                fks_out.push(FkOut {
                    oid: c.oid,
                    deferrable: c.deferrable,
                    initially_deferred: c.deferred,
                    name: c.name.clone(),
                    cols: c.columns.iter().map(|&a| live_index(&rel, a)).collect::<PgResult<_>>()?,
                    parent: fk.ref_table,
                    parent_cols: fk.ref_columns.iter().map(|&a| live_index(parent, a)).collect::<PgResult<_>>()?,
                    match_full: fk.match_type == 'f',
                });
            }
            _ => {}
        }
    }
    let mut fks_in = Vec::new();
    for (child, c) in cx.catalog.referencing_fks(rel.oid) {
        let fk = c.foreign.as_ref().expect("referencing_fks returns foreign keys");
        fks_in.push(FkIn {
            oid: c.oid,
            deferrable: c.deferrable,
            initially_deferred: c.deferred,
            name: c.name.clone(),
            child: child.oid,
            child_cols: c.columns.iter().map(|&a| live_index(&child, a)).collect::<PgResult<_>>()?,
            parent_cols: fk.ref_columns.iter().map(|&a| live_index(&rel, a)).collect::<PgResult<_>>()?,
            on_delete: fk.on_delete,
            on_update: fk.on_update,
        });
    }
    // PostgreSQL checks CHECK constraints in name order.
    checks.sort_by(|a, b| a.0.cmp(&b.0));
    let not_null = rel.live_columns().enumerate().filter(|(_, (_, c))| c.not_null).map(|(i, _)| i).collect();
    let triggers = TableTriggers::of(&rel, cx).map(Rc::new);
    // A trigger function may read the table: its rows go through the transaction.
    let bulk = triggers.is_none() && table.bulk_eligible(cx);
    Ok(RelInfo { table, checks, not_null, fks_out, fks_in, deferrable_uniques, defaults: None, bulk, triggers })
}

/// Text of a row for "Failing row contains (...)".
fn row_text(rel: &Relation, row: &[Datum], cx: &ExecCx) -> String {
    let settings = cx.env.settings();
    row.iter()
        .zip(rel.live_columns())
        .map(|(d, (_, c))| if d.is_null() { "null".to_string() } else { crate::functions::io::format_text(d, c.type_oid, &settings) })
        .collect::<Vec<_>>()
        .join(", ")
}

fn values_text(rel: &Relation, cols: &[usize], row: &[Datum], cx: &ExecCx) -> (String, String) {
    let settings = cx.env.settings();
    let names = cols.iter().map(|&c| rel.live_columns().nth(c).map(|(_, col)| col.name.clone()).unwrap_or_default()).collect::<Vec<_>>();
    let vals = cols
        .iter()
        .map(|&c| {
            let ty = rel.live_columns().nth(c).map(|(_, col)| col.type_oid).unwrap_or(0);
            if row[c].is_null() {
                "null".to_string()
            } else {
                crate::functions::io::format_text(&row[c], ty, &settings)
            }
        })
        .collect::<Vec<_>>();
    (names.join(", "), vals.join(", "))
}

/// The error for removing or changing a key that rows still reference.
fn still_referenced(info: &RelInfo, child: &RelInfo, fk: &FkIn, old: &[Datum], cx: &ExecCx) -> PgError {
    let key: Vec<Datum> = fk.parent_cols.iter().map(|&c| old[c].clone()).collect();
    key_still_referenced(info, child, fk, &key, cx)
}

fn key_still_referenced(info: &RelInfo, child: &RelInfo, fk: &FkIn, key: &[Datum], cx: &ExecCx) -> PgError {
    let mut row = vec![Datum::Null; info.table.width()];
    for (&c, v) in fk.parent_cols.iter().zip(key) {
        row[c] = v.clone();
    }
    let (names, vals) = values_text(&info.table.rel, &fk.parent_cols, &row, cx);
    PgError::new(
        sqlstate::FOREIGN_KEY_VIOLATION,
        format!(
            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
            info.table.rel.name, fk.name, child.table.rel.name
        ),
    )
    .with_detail(format!("Key ({names})=({vals}) is still referenced from table \"{}\".", child.table.rel.name))
    .with_table(cx.catalog.namespace_name(child.table.rel.namespace), &child.table.rel.name)
    .with_constraint(&fk.name)
}

impl FkOut {
    /// An update that leaves a non-null reference as it was needs no check.
    fn unchanged(&self, old: &[Datum], new: &[Datum]) -> bool {
        self.cols.iter().all(|&c| old[c].group_eq(&new[c]) && !new[c].is_null())
    }
}

/// Runs deferred constraint checks at the end of their transaction (or at
/// SET CONSTRAINTS ... IMMEDIATE), in order, against the rows as they are
/// then; the first violation fails.
///
/// A referencing row is checked as it is now if it still exists: a row
/// deleted since needs nothing, and one updated since was queued again by
/// that update (PostgreSQL's deferred RI trigger likewise skips a tuple
/// that is no longer live). A removed referenced key is fine if a row has
/// that key again (ri_Check_Pk_Match) or nothing references it. A unique
/// key must be held by one row at most.
pub fn check_deferred(checks: &[DeferredCheck], cx: &ExecCx) -> PgResult<()> {
    let mut writer = Writer { infos: HashMap::new(), fk_checks: Vec::new(), unique_checks: Vec::new(), bulk: None, after: Vec::new() };
    for check in checks {
        cx.check()?;
        check_deferred_one(&mut writer, check, cx)?;
    }
    Ok(())
}

fn check_deferred_one(writer: &mut Writer, check: &DeferredCheck, cx: &ExecCx) -> PgResult<()> {
    match check {
        DeferredCheck::Reference { constraint, table, row_key } => {
            // The table or the constraint may have been dropped since.
            if cx.catalog.relation(*table).is_none() {
                return Ok(());
            }
            let info = writer.info(*table, cx)?;
            let Some(fk) = info.fks_out.iter().find(|fk| fk.oid == *constraint) else {
                return Ok(());
            };
            let Some(row) = info.table.fetch_latest(cx.txn, row_key)? else {
                return Ok(());
            };
            writer.check_fk_out(&info, fk, &row, None, cx)
        }
        DeferredCheck::Referenced { constraint, table, key } => {
            if cx.catalog.relation(*table).is_none() {
                return Ok(());
            }
            let info = writer.info(*table, cx)?;
            let Some(fk) = info.fks_in.iter().find(|fk| fk.oid == *constraint) else {
                return Ok(());
            };
            if info.table.lookup_key(&fk.parent_cols, key, cx, false)?.is_some() {
                return Ok(());
            }
            let child = writer.info(fk.child, cx)?;
            if child.table.find_rows(&fk.child_cols, key, cx)?.is_empty() {
                return Ok(());
            }
            Err(key_still_referenced(&info, &child, fk, key, cx))
        }
        DeferredCheck::Unique { table, index, key, .. } => {
            if cx.catalog.relation(*table).is_none() {
                return Ok(());
            }
            let info = writer.info(*table, cx)?;
            let Some(i) = info.table.indexes.iter().position(|ix| ix.rel.oid == *index && ix.deferrable) else {
                return Ok(());
            };
            info.table.check_deferrable_unique(i, key, cx)
        }
    }
}

/// Writes rows of any relation, following foreign key actions into others.
struct Writer {
    infos: HashMap<u32, Rc<RelInfo>>,
    /// Rows whose outgoing foreign keys are checked when the statement's
    /// writes are done (PostgreSQL's RI triggers fire at the end of the
    /// statement, so a row may reference itself or a row inserted after it
    /// by the same statement): (relation, new row, old row of an update).
    fk_checks: Vec<(Rc<RelInfo>, Row, Option<Row>)>,
    /// Keys taken in the indexes of deferrable unique constraints that are
    /// immediate, checked when the statement's writes are done: (relation,
    /// index position, key).
    unique_checks: Vec<(Rc<RelInfo>, usize, Vec<u8>)>,
    /// Rows written around the transaction, buffered.
    bulk: Option<tusk_storage::BulkWriter>,
    /// AFTER ROW trigger events, fired when the statement's writes are done.
    after: Vec<AfterEvent>,
}

impl Writer {
    fn info(&mut self, oid: u32, cx: &ExecCx) -> PgResult<Rc<RelInfo>> {
        if let Some(i) = self.infos.get(&oid) {
            return Ok(i.clone());
        }
        let rel = cx.catalog.relation(oid).ok_or_else(|| PgError::internal("relation vanished"))?.clone();
        let info = Rc::new(rel_info(rel, cx)?);
        self.infos.insert(oid, info.clone());
        Ok(info)
    }

    fn check_row(&self, info: &RelInfo, row: &[Datum], cx: &ExecCx) -> PgResult<()> {
        let rel = &info.table.rel;
        let schema = cx.catalog.namespace_name(rel.namespace).to_string();
        for &c in &info.not_null {
            if row[c].is_null() {
                let col = rel.live_columns().nth(c).map(|(_, col)| col.name.clone()).unwrap_or_default();
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("null value in column \"{}\" of relation \"{}\" violates not-null constraint", col, rel.name),
                )
                .with_detail(format!("Failing row contains ({}).", row_text(rel, row, cx)))
                .with_table(&schema, &rel.name)
                .with_column(&col));
            }
        }
        for (name, e) in &info.checks {
            if matches!(eval(e, row, cx)?, Datum::Bool(false)) {
                return Err(PgError::new(
                    sqlstate::CHECK_VIOLATION,
                    format!("new row for relation \"{}\" violates check constraint \"{}\"", rel.name, name),
                )
                .with_detail(format!("Failing row contains ({}).", row_text(rel, row, cx)))
                .with_table(&schema, &rel.name)
                .with_constraint(name));
            }
        }
        Ok(())
    }

    /// Queues the check of a written row's outgoing foreign keys: to the
    /// end of the statement, or to the commit for deferred constraints.
    fn defer_fk_check(&mut self, info: &Rc<RelInfo>, row: &[Datum], old: Option<&[Datum]>, key: &[u8], cx: &ExecCx) {
        if info.fks_out.is_empty() {
            return;
        }
        let mut immediate = false;
        for fk in &info.fks_out {
            if fk.deferrable && cx.env.constraint_deferred(fk.oid, fk.initially_deferred) {
                if old.is_some_and(|old| fk.unchanged(old, row)) {
                    continue;
                }
                cx.env.defer_check(DeferredCheck::Reference { constraint: fk.oid, table: info.table.rel.oid, row_key: key.to_vec() });
            } else {
                immediate = true;
            }
        }
        if immediate {
            self.fk_checks.push((info.clone(), row.to_vec(), old.map(<[Datum]>::to_vec)));
        }
    }

    /// Queues the check of the keys a written row takes in the indexes of
    /// deferrable unique constraints (those it already had need none): to
    /// the end of the statement, or to the commit for deferred constraints.
    fn defer_unique_checks(&mut self, info: &Rc<RelInfo>, row: &[Datum], old: Option<&[Datum]>, cx: &ExecCx) -> PgResult<()> {
        for u in &info.deferrable_uniques {
            let Some(key) = info.table.deferrable_key(u.index, row, cx)? else { continue };
            if let Some(old) = old {
                if info.table.deferrable_key(u.index, old, cx)?.as_deref() == Some(&key[..]) {
                    continue;
                }
            }
            if cx.env.constraint_deferred(u.constraint, u.initially_deferred) {
                let index = info.table.indexes[u.index].rel.oid;
                cx.env.defer_check(DeferredCheck::Unique { constraint: u.constraint, table: info.table.rel.oid, index, key });
            } else {
                self.unique_checks.push((info.clone(), u.index, key));
            }
        }
        Ok(())
    }

    /// Writes buffered bulk rows, making them readable.
    fn flush_bulk(&mut self) -> PgResult<()> {
        match self.bulk.as_mut() {
            Some(b) => b.flush(),
            None => Ok(()),
        }
    }

    /// Runs the checks queued for the end of the statement: keys of
    /// immediate deferrable unique constraints, then foreign keys (after
    /// the statement's bulk-written rows are written, so that they count).
    fn run_fk_checks(&mut self, cx: &ExecCx) -> PgResult<()> {
        self.flush_bulk()?;
        // Immediate deferrable unique keys first: the statement's own
        // duplicates are resolved by now (a key taken twice is checked once).
        let mut seen: HashSet<(u32, Vec<u8>)> = HashSet::new();
        for (info, i, key) in std::mem::take(&mut self.unique_checks) {
            cx.check()?;
            if seen.insert((info.table.indexes[i].rel.oid, key.clone())) {
                info.table.check_deferrable_unique(i, &key, cx)?;
            }
        }
        for (info, row, old) in std::mem::take(&mut self.fk_checks) {
            cx.check()?;
            self.check_fks_out(&info, &row, old.as_deref(), cx)?;
        }
        Ok(())
    }

    /// Outgoing foreign keys: the referenced rows must exist (and are locked
    /// against deletion). Deferred constraints are left to the commit.
    fn check_fks_out(&mut self, info: &RelInfo, row: &[Datum], old: Option<&[Datum]>, cx: &ExecCx) -> PgResult<()> {
        for fk in &info.fks_out {
            if fk.deferrable && cx.env.constraint_deferred(fk.oid, fk.initially_deferred) {
                continue;
            }
            self.check_fk_out(info, fk, row, old, cx)?;
        }
        Ok(())
    }

    /// One outgoing foreign key of a row.
    fn check_fk_out(&mut self, info: &RelInfo, fk: &FkOut, row: &[Datum], old: Option<&[Datum]>, cx: &ExecCx) -> PgResult<()> {
        if old.is_some_and(|old| fk.unchanged(old, row)) {
            return Ok(());
        }
        let nulls = fk.cols.iter().filter(|&&c| row[c].is_null()).count();
        if nulls == fk.cols.len() {
            return Ok(());
        }
        if nulls > 0 {
            if fk.match_full {
                return Err(PgError::new(
                    sqlstate::FOREIGN_KEY_VIOLATION,
                    format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", info.table.rel.name, fk.name),
                )
                .with_detail("MATCH FULL does not allow mixing of null and nonnull key values.")
                .with_table(cx.catalog.namespace_name(info.table.rel.namespace), &info.table.rel.name)
                .with_constraint(&fk.name));
            }
            return Ok(());
        }
        let parent = self.info(fk.parent, cx)?;
        let values: Vec<Datum> = fk.cols.iter().map(|&c| row[c].clone()).collect();
        if parent.table.lookup_key(&fk.parent_cols, &values, cx, true)?.is_none() {
            let (names, vals) = values_text(&info.table.rel, &fk.cols, row, cx);
            return Err(PgError::new(
                sqlstate::FOREIGN_KEY_VIOLATION,
                format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", info.table.rel.name, fk.name),
            )
            .with_detail(format!("Key ({names})=({vals}) is not present in table \"{}\".", parent.table.rel.name))
            .with_table(cx.catalog.namespace_name(info.table.rel.namespace), &info.table.rel.name)
            .with_constraint(&fk.name));
        }
        Ok(())
    }

    /// Incoming foreign keys when a referenced row goes away or changes its key.
    fn fks_in(&mut self, info: &RelInfo, old: &[Datum], new: Option<&[Datum]>, cx: &ExecCx, depth: usize) -> PgResult<()> {
        if depth > 100 {
            return Err(PgError::new(sqlstate::STATEMENT_TOO_COMPLEX, "foreign key cascade too deep"));
        }
        for fk in &info.fks_in {
            if let Some(new) = new {
                if fk.parent_cols.iter().all(|&c| old[c].group_eq(&new[c]) && std::mem::discriminant(&old[c]) == std::mem::discriminant(&new[c])) {
                    continue;
                }
            }
            if fk.parent_cols.iter().any(|&c| old[c].is_null()) {
                continue;
            }
            let values: Vec<Datum> = fk.parent_cols.iter().map(|&c| old[c].clone()).collect();
            let child = self.info(fk.child, cx)?;
            let rows = child.table.find_rows(&fk.child_cols, &values, cx)?;
            if rows.is_empty() {
                continue;
            }
            let action = if new.is_some() { fk.on_update } else { fk.on_delete };
            if action == FkAction::NoAction && fk.deferrable && cx.env.constraint_deferred(fk.oid, fk.initially_deferred) {
                cx.env.defer_check(DeferredCheck::Referenced { constraint: fk.oid, table: info.table.rel.oid, key: values });
                continue;
            }
            match action {
                FkAction::NoAction | FkAction::Restrict => return Err(still_referenced(info, &child, fk, old, cx)),
                FkAction::Cascade => {
                    for (key, row) in rows {
                        match new {
                            None => self.delete_row(&child, &key, &row, cx, depth + 1)?,
                            Some(new) => {
                                let mut updated = row.clone();
                                for (cc, pc) in fk.child_cols.iter().zip(&fk.parent_cols) {
                                    updated[*cc] = new[*pc].clone();
                                }
                                self.update_row(&child, &key, &row, updated, cx, depth + 1)?;
                            }
                        }
                    }
                }
                FkAction::SetNull | FkAction::SetDefault => {
                    let defaults = if action == FkAction::SetDefault { Some(self.defaults(fk.child, cx)?) } else { None };
                    for (key, row) in rows {
                        let mut updated = row.clone();
                        for &cc in &fk.child_cols {
                            updated[cc] = match &defaults {
                                Some(d) => eval(&d[cc], &[], cx)?,
                                None => Datum::Null,
                            };
                        }
                        // A default equal to the key going away would leave
                        // the row referencing it (ri_setdefault's recheck).
                        if fk.child_cols.iter().all(|&cc| !updated[cc].is_null() && updated[cc].group_eq(&row[cc])) {
                            return Err(still_referenced(info, &child, fk, old, cx));
                        }
                        self.update_row(&child, &key, &row, updated, cx, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn defaults(&mut self, oid: u32, cx: &ExecCx) -> PgResult<Vec<Expr>> {
        let info = self.info(oid, cx)?;
        if let Some(d) = &info.defaults {
            return Ok(d.clone());
        }
        let rel = info.table.rel.clone();
        let settings = cx.env.settings();
        let user = cx.env.current_user();
        let d = crate::planner::compile_defaults(cx.catalog, &settings, &user, &rel)?;
        Ok(d)
    }

    /// BEFORE ROW triggers of a row to insert: the row to write, None to skip it.
    fn before_insert(&self, info: &RelInfo, row: Row, cx: &ExecCx) -> PgResult<Option<Row>> {
        match &info.triggers {
            Some(t) if t.has(TriggerTiming::Before, true, TriggerEvent::Insert) => t.before_row(TriggerTiming::Before, TriggerEvent::Insert, None, Some(row), None, cx),
            _ => Ok(Some(row)),
        }
    }

    /// Queues a written row's AFTER ROW triggers.
    fn after_row(&mut self, info: &RelInfo, event: TriggerEvent, old: Option<&[Datum]>, new: Option<&[Datum]>, updated: Option<&[usize]>, cx: &ExecCx) -> PgResult<()> {
        match &info.triggers {
            Some(t) if t.has(TriggerTiming::After, true, event) => t.queue_after_row(event, old, new, updated, &mut self.after, cx),
            _ => Ok(()),
        }
    }

    /// Fires the queued AFTER ROW events.
    fn fire_after(&mut self, cx: &ExecCx) -> PgResult<()> {
        while !self.after.is_empty() {
            let queue = std::mem::take(&mut self.after);
            super::trigger::fire_after(queue, cx)?;
        }
        Ok(())
    }

    fn insert_row(&mut self, info: &Rc<RelInfo>, row: &[Datum], cx: &ExecCx) -> PgResult<Vec<u8>> {
        self.check_row(info, row, cx)?;
        let key = info.table.new_row_key(row, cx)?;
        if info.bulk {
            let bulk = self.bulk.get_or_insert_with(|| cx.txn.engine().bulk_writer());
            info.table.insert_bulk(row, &key, bulk, cx)?;
            self.defer_fk_check(info, row, None, &key, cx);
            return Ok(key);
        }
        if let Some((i, vals, _)) = info.table.find_conflict(row, &key, cx, None)? {
            return Err(info.table.unique_violation(i, &vals, cx));
        }
        info.table.insert(row, &key, cx)?;
        self.defer_unique_checks(info, row, None, cx)?;
        self.defer_fk_check(info, row, None, &key, cx);
        Ok(key)
    }

    fn update_row(&mut self, info: &Rc<RelInfo>, key: &[u8], old: &[Datum], new: Vec<Datum>, cx: &ExecCx, depth: usize) -> PgResult<Vec<u8>> {
        self.check_row(info, &new, cx)?;
        let new_key = if info.table.key_changes(old, &new) {
            let nk = info.table.updated_row_key(key, &new)?;
            info.table.delete(old, key, cx)?;
            if let Some((i, vals, _)) = info.table.find_conflict(&new, &nk, cx, None)? {
                return Err(info.table.unique_violation(i, &vals, cx));
            }
            info.table.insert(&new, &nk, cx)?;
            nk
        } else {
            if let Some((i, vals, _)) = info.table.find_update_conflict(&new, key, cx)? {
                return Err(info.table.unique_violation(i, &vals, cx));
            }
            info.table.update_in_place(old, &new, key, cx)?;
            key.to_vec()
        };
        self.defer_unique_checks(info, &new, Some(old), cx)?;
        self.defer_fk_check(info, &new, Some(old), &new_key, cx);
        // Referencing rows follow (or block) the key change after the row is written.
        self.fks_in(info, old, Some(&new), cx, depth)?;
        Ok(new_key)
    }

    fn delete_row(&mut self, info: &RelInfo, key: &[u8], row: &[Datum], cx: &ExecCx, depth: usize) -> PgResult<()> {
        // Lock first: a concurrent insert referencing this row waits on it.
        if info.table.lock_and_fetch_latest(cx.txn, key)?.is_none() {
            return Ok(());
        }
        self.fks_in(info, row, None, cx, depth)?;
        info.table.delete(row, key, cx)
    }
}

/// Inserts rows into one table from outside a plan (COPY FROM), with
/// everything an INSERT checks: NOT NULL, CHECK, unique keys, and foreign
/// keys (checked when `finish` is called, at the end of the statement).
pub struct RowInserter {
    writer: Writer,
    info: Rc<RelInfo>,
}

impl RowInserter {
    pub fn new(rel: Arc<Relation>, cx: &ExecCx) -> PgResult<RowInserter> {
        let mut writer = Writer { infos: HashMap::new(), fk_checks: Vec::new(), unique_checks: Vec::new(), bulk: None, after: Vec::new() };
        let info = writer.info(rel.oid, cx)?;
        Ok(RowInserter { writer, info })
    }

    /// Inserts one whole row (every live column, defaults already filled):
    /// false when a BEFORE ROW trigger skipped it.
    pub fn insert(&mut self, row: &[Datum], cx: &ExecCx) -> PgResult<bool> {
        let info = self.info.clone();
        if info.triggers.is_none() {
            self.writer.insert_row(&info, row, cx)?;
            return Ok(true);
        }
        let Some(row) = self.writer.before_insert(&info, row.to_vec(), cx)? else { return Ok(false) };
        self.writer.insert_row(&info, &row, cx)?;
        capture(&info, TransitionKind::InsertNew, &row);
        self.writer.after_row(&info, TriggerEvent::Insert, None, Some(&row), None, cx)?;
        Ok(true)
    }

    /// Fires the table's BEFORE INSERT statement triggers (COPY FROM calls
    /// it before its first row).
    pub fn start(&mut self, cx: &ExecCx) -> PgResult<()> {
        match &self.info.triggers {
            Some(t) => t.statement(TriggerTiming::Before, TriggerEvent::Insert, None, cx),
            None => Ok(()),
        }
    }

    /// Runs the foreign key checks of the rows inserted so far.
    pub fn finish(&mut self, cx: &ExecCx) -> PgResult<()> {
        self.writer.run_fk_checks(cx)
    }

    /// Ends the statement: the foreign key checks left, the AFTER ROW
    /// events queued, the AFTER INSERT statement triggers.
    pub fn end(&mut self, cx: &ExecCx) -> PgResult<()> {
        self.writer.run_fk_checks(cx)?;
        self.writer.fire_after(cx)?;
        match &self.info.triggers {
            Some(t) => t.statement(TriggerTiming::After, TriggerEvent::Insert, None, cx),
            None => Ok(()),
        }
    }
}

pub use crate::plan::Recheck;

pub struct ModifyNode {
    kind: ModifyKind,
    rel: Arc<Relation>,
    input: Option<Box<dyn Node>>,
    update_cols: Vec<usize>,
    on_conflict: Option<OnConflictPlan>,
    returning: Vec<Expr>,
    returning_input: Option<usize>,
    view_checks: Vec<(String, Expr)>,
    old_width: usize,
    recheck: Option<Recheck>,
    writer: Writer,
    /// ON CONFLICT DO UPDATE may not touch a row twice in one statement.
    conflict_updated: HashSet<Vec<u8>>,
    output: std::vec::IntoIter<Row>,
    /// UPDATE/DELETE of an inheritance tree: its tables (see `Plan::Modify`).
    inherited: Vec<crate::plan::InheritedTarget>,
    /// RETURNING reads the system columns of the written row.
    returning_system: bool,
}

/// Where an UPDATE or DELETE input row goes: the table it is stored in,
/// and (for a table below the statement's target) where each of the
/// target's columns is in that table's rows.
struct Route {
    info: Rc<RelInfo>,
    columns: Option<Vec<usize>>,
}

impl Route {
    /// A row of the routed table as a row of the statement's target.
    fn as_target(&self, row: &[Datum]) -> Row {
        match &self.columns {
            Some(cols) => cols.iter().map(|&c| row[c].clone()).collect(),
            None => row.to_vec(),
        }
    }

    /// The routed table's column for the target's column `c`.
    fn column(&self, c: usize) -> usize {
        self.columns.as_ref().map_or(c, |cols| cols[c])
    }
}

impl ModifyNode {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: ModifyKind,
        rel: Arc<Relation>,
        input: Box<dyn Node>,
        update_cols: Vec<usize>,
        on_conflict: Option<OnConflictPlan>,
        returning: Vec<Expr>,
        returning_input: Option<usize>,
        view_checks: Vec<(String, Expr)>,
        old_width: usize,
        recheck: Option<Recheck>,
    ) -> PgResult<ModifyNode> {
        Ok(ModifyNode {
            kind,
            rel,
            input: Some(input),
            update_cols,
            on_conflict,
            returning,
            returning_input,
            view_checks,
            old_width,
            recheck,
            writer: Writer { infos: HashMap::new(), fk_checks: Vec::new(), unique_checks: Vec::new(), bulk: None, after: Vec::new() },
            conflict_updated: HashSet::new(),
            output: Vec::new().into_iter(),
            inherited: Vec::new(),
            returning_system: false,
        })
    }

    /// Sets what `Plan::Modify` says about inheritance and system columns.
    pub fn inherit(&mut self, inherited: Vec<crate::plan::InheritedTarget>, returning_system: bool) {
        self.inherited = inherited;
        self.returning_system = returning_system;
    }

    /// The table an UPDATE/DELETE input row belongs to: the target, or
    /// (for an inheritance tree) the table whose OID the row carries.
    fn route(&mut self, input: &[Datum], at: usize, cx: &ExecCx) -> PgResult<Route> {
        if self.inherited.is_empty() {
            return Ok(Route { info: self.writer.info(self.rel.oid, cx)?, columns: None });
        }
        let Datum::Oid(table) = input[at] else { return Err(PgError::internal("inherited row without its table")) };
        let target = self.inherited.iter().find(|t| t.rel.oid == table).ok_or_else(|| PgError::internal("row of a table outside the inheritance tree"))?;
        let columns = (table != self.rel.oid).then(|| target.columns.clone());
        Ok(Route { info: self.writer.info(table, cx)?, columns })
    }

    /// The system columns RETURNING reads, for the row stored under `key`.
    fn system_values(&self, info: &RelInfo, key: &[u8]) -> Option<[Datum; 6]> {
        self.returning_system.then(|| super::syscols::values(info.table.rel.oid, super::syscols::ctid(&info.table, key, 0)))
    }

    /// Counts a changed row and computes its RETURNING values; `input` is
    /// the statement's input row, whose joined part RETURNING may read.
    fn emit_joined(&self, row: &[Datum], system: Option<[Datum; 6]>, input: &[Datum], out: &mut Vec<Row>, cx: &ExecCx) -> PgResult<()> {
        let joined = !self.returning.is_empty() && self.returning_input.is_some();
        if !joined && system.is_none() {
            return self.emit(row, out, cx);
        }
        // RETURNING reads (row ++ its system columns ++ the joined input).
        let mut full = row.to_vec();
        full.extend(system.into_iter().flatten());
        if let (true, Some(at)) = (joined, self.returning_input) {
            full.extend_from_slice(&input[at..]);
        }
        self.emit(&full, out, cx)
    }

    /// WITH CHECK OPTION: a new row written through a view must be visible
    /// through it (a NULL condition fails, as in ExecWithCheckOptions).
    fn check_view_options(&self, rel: &Relation, row: &[Datum], cx: &ExecCx) -> PgResult<()> {
        for (view, cond) in &self.view_checks {
            if !matches!(eval(cond, row, cx)?, Datum::Bool(true)) {
                return Err(PgError::new(sqlstate::WITH_CHECK_OPTION_VIOLATION, format!("new row violates check option for view \"{view}\""))
                    .with_detail(format!("Failing row contains ({}).", row_text(rel, row, cx))));
            }
        }
        Ok(())
    }

    fn emit(&self, row: &[Datum], out: &mut Vec<Row>, cx: &ExecCx) -> PgResult<()> {
        if !self.view_checks.is_empty() {
            self.check_view_options(&self.rel, row, cx)?;
        }
        cx.state.modified.set(cx.state.modified.get() + 1);
        if !self.returning.is_empty() {
            let mut r = Vec::with_capacity(self.returning.len());
            for e in &self.returning {
                r.push(eval(e, row, cx)?);
            }
            out.push(r);
        }
        Ok(())
    }

    /// INSERT, UPDATE or DELETE on a view through its INSTEAD OF
    /// triggers: each row goes to them (NEW for INSERT and UPDATE, OLD for
    /// UPDATE and DELETE, as rows of the view); one returning NULL leaves
    /// the row out of the count and of RETURNING, which reads the row the
    /// triggers returned (the old row for DELETE).
    fn run_instead(&mut self, mut input: Box<dyn Node>, cx: &ExecCx) -> PgResult<Vec<Row>> {
        let event = match self.kind {
            ModifyKind::Insert => TriggerEvent::Insert,
            ModifyKind::Update => TriggerEvent::Update,
            ModifyKind::Delete => TriggerEvent::Delete,
        };
        let triggers = TableTriggers::of(&self.rel, cx);
        let set_cols = (self.kind == ModifyKind::Update).then(|| self.update_cols.clone());
        if let Some(t) = &triggers {
            t.statement(TriggerTiming::Before, event, set_cols.as_deref(), cx)?;
        }
        let mut rows = Vec::new();
        while let Some(r) = input.next(cx)? {
            rows.push(r);
        }
        drop(input);
        let ncols = self.rel.live_columns().count();
        let mut out = Vec::new();
        for row in rows {
            cx.check()?;
            let (old, new) = match self.kind {
                ModifyKind::Insert => (None, Some(row[..ncols].to_vec())),
                ModifyKind::Update => {
                    let mut new = row[..ncols].to_vec();
                    for (i, &c) in self.update_cols.iter().enumerate() {
                        new[c] = row[self.old_width + i].clone();
                    }
                    (Some(row[..ncols].to_vec()), Some(new))
                }
                ModifyKind::Delete => (Some(row[..ncols].to_vec()), None),
            };
            let result = match &triggers {
                // (disabled triggers leave the row as it was, counted)
                Some(t) => t.before_row(TriggerTiming::InsteadOf, event, old.as_deref(), new, None, cx)?,
                None => new.or(old),
            };
            let Some(result) = result else { continue };
            let joined: &[Datum] = if self.kind == ModifyKind::Insert { &[] } else { &row };
            self.emit_joined(&result, None, joined, &mut out, cx)?;
        }
        if let Some(t) = &triggers {
            t.statement(TriggerTiming::After, event, set_cols.as_deref(), cx)?;
        }
        Ok(out)
    }

    fn run(&mut self, mut input: Box<dyn Node>, cx: &ExecCx) -> PgResult<Vec<Row>> {
        if self.rel.kind == crate::catalog::RelKind::View {
            return self.run_instead(input, cx);
        }
        // CheckValidResultRel: tables a publication publishes these
        // changes of need a replica identity.
        let replicated = match self.kind {
            ModifyKind::Update => Some(false),
            ModifyKind::Delete => Some(true),
            ModifyKind::Insert if self.on_conflict.as_ref().is_some_and(|c| c.do_update) => Some(false),
            _ => None,
        };
        if let Some(delete) = replicated {
            crate::catalog::publish::check_replica_identity(cx.catalog, &self.rel, delete)?;
            for t in &self.inherited {
                crate::catalog::publish::check_replica_identity(cx.catalog, &t.rel, delete)?;
            }
        }
        // Statement-level triggers (an INSERT ... ON CONFLICT DO UPDATE
        // fires the UPDATE ones too); the target's row triggers are the
        // same, and share the statement's transition tables.
        let info = self.writer.info(self.rel.oid, cx)?;
        let stmt_triggers = info.triggers.clone();
        let events: Vec<TriggerEvent> = match self.kind {
            ModifyKind::Insert if self.on_conflict.as_ref().is_some_and(|c| c.do_update) => vec![TriggerEvent::Insert, TriggerEvent::Update],
            ModifyKind::Insert => vec![TriggerEvent::Insert],
            ModifyKind::Update => vec![TriggerEvent::Update],
            ModifyKind::Delete => vec![TriggerEvent::Delete],
        };
        let set_cols: Option<Vec<usize>> = match self.kind {
            ModifyKind::Update => Some(self.update_cols.clone()),
            _ => self.on_conflict.as_ref().map(|c| c.set.iter().map(|(c, _)| *c).collect()),
        };
        if let Some(t) = &stmt_triggers {
            for &e in &events {
                t.statement(TriggerTiming::Before, e, set_cols.as_deref(), cx)?;
            }
        }
        // Read everything first: the statement must not see its own writes.
        let mut rows = Vec::new();
        while let Some(r) = input.next(cx)? {
            rows.push(r);
        }
        drop(input);
        let mut out = Vec::new();
        match self.kind {
            ModifyKind::Insert => {
                for row in rows {
                    cx.check()?;
                    self.insert_one(&info, row, &mut out, cx)?;
                }
            }
            ModifyKind::Update => {
                let mut done: HashSet<Vec<u8>> = HashSet::new();
                // The target's columns, the row key, and (for an
                // inheritance tree) the row's table.
                let ncols = self.old_width - 1 - (!self.inherited.is_empty()) as usize;
                for row in rows {
                    cx.check()?;
                    let Datum::Bytea(key) = &row[ncols] else { return Err(PgError::internal("row key missing")) };
                    if !done.insert(key.to_vec()) {
                        continue;
                    }
                    let route = self.route(&row, ncols + 1, cx)?;
                    let old = row[..ncols].to_vec();
                    let Some(latest) = route.info.table.lock_and_fetch_latest(cx.txn, key)? else { continue };
                    let latest_target = route.as_target(&latest);
                    let mut new = latest.clone();
                    if rows_differ(&latest_target, &old) {
                        // Changed since our snapshot: the new values were computed
                        // from the old version; recompute the updated columns by
                        // carrying over only the columns this statement sets.
                        for (i, &c) in self.update_cols.iter().enumerate() {
                            new[route.column(c)] = row[self.old_width + i].clone();
                        }
                        if let Some(r) = self.recheck.as_ref() {
                            if let Some(q) = &r.quals {
                                if !eval_pred(q, &latest_target, cx)? {
                                    continue;
                                }
                            }
                            for (i, &c) in self.update_cols.iter().enumerate() {
                                new[route.column(c)] = eval(&r.set[i], &latest_target, cx)?;
                            }
                        }
                    } else {
                        for (i, &c) in self.update_cols.iter().enumerate() {
                            new[route.column(c)] = row[self.old_width + i].clone();
                        }
                    }
                    if let Some(t) = route.info.triggers.as_ref().filter(|t| t.has(TriggerTiming::Before, true, TriggerEvent::Update)) {
                        let cols: Vec<usize> = self.update_cols.iter().map(|&c| route.column(c)).collect();
                        match t.before_row(TriggerTiming::Before, TriggerEvent::Update, Some(&latest), Some(new), Some(&cols), cx)? {
                            Some(r) => new = r,
                            None => continue,
                        }
                        check_not_self_modified(&route.info, key, &latest, "updated", cx)?;
                    }
                    let new_key = self.writer.update_row(&route.info, key, &latest, new.clone(), cx, 0)?;
                    if let Some(t) = &info.triggers {
                        t.capture(TransitionKind::UpdateOld, &latest_target);
                        t.capture(TransitionKind::UpdateNew, &route.as_target(&new));
                    }
                    if route.info.triggers.is_some() {
                        let cols: Vec<usize> = self.update_cols.iter().map(|&c| route.column(c)).collect();
                        self.writer.after_row(&route.info, TriggerEvent::Update, Some(&latest), Some(&new), Some(&cols), cx)?;
                    }
                    let system = self.system_values(&route.info, &new_key);
                    self.emit_joined(&route.as_target(&new), system, &row, &mut out, cx)?;
                }
            }
            ModifyKind::Delete => {
                let ncols = self.old_width - 1 - (!self.inherited.is_empty()) as usize;
                let mut done: HashSet<Vec<u8>> = HashSet::new();
                for row in rows {
                    cx.check()?;
                    let Datum::Bytea(key) = &row[ncols] else { return Err(PgError::internal("row key missing")) };
                    if !done.insert(key.to_vec()) {
                        continue;
                    }
                    let route = self.route(&row, ncols + 1, cx)?;
                    let Some(latest) = route.info.table.lock_and_fetch_latest(cx.txn, key)? else { continue };
                    let latest_target = route.as_target(&latest);
                    if rows_differ(&latest_target, &row[..ncols]) {
                        if let Some(r) = self.recheck.as_ref() {
                            if let Some(q) = &r.quals {
                                if !eval_pred(q, &latest_target, cx)? {
                                    continue;
                                }
                            }
                        }
                    }
                    if let Some(t) = route.info.triggers.as_ref().filter(|t| t.has(TriggerTiming::Before, true, TriggerEvent::Delete)) {
                        if t.before_row(TriggerTiming::Before, TriggerEvent::Delete, Some(&latest), None, None, cx)?.is_none() {
                            continue;
                        }
                        check_not_self_modified(&route.info, key, &latest, "deleted", cx)?;
                    }
                    self.writer.fks_in(&route.info, &latest, None, cx, 0)?;
                    route.info.table.delete(&latest, key, cx)?;
                    if let Some(t) = &info.triggers {
                        t.capture(TransitionKind::DeleteOld, &latest_target);
                    }
                    self.writer.after_row(&route.info, TriggerEvent::Delete, Some(&latest), None, None, cx)?;
                    let system = self.system_values(&route.info, key);
                    self.emit_joined(&latest_target, system, &row, &mut out, cx)?;
                }
            }
        }
        self.writer.run_fk_checks(cx)?;
        self.writer.fire_after(cx)?;
        if let Some(t) = &stmt_triggers {
            // ON CONFLICT DO UPDATE: the UPDATE ones first (fireASTriggers).
            for &e in events.iter().rev() {
                t.statement(TriggerTiming::After, e, set_cols.as_deref(), cx)?;
            }
        }
        Ok(out)
    }

    fn insert_one(&mut self, info: &Rc<RelInfo>, row: Row, out: &mut Vec<Row>, cx: &ExecCx) -> PgResult<()> {
        let Some(row) = self.writer.before_insert(info, row, cx)? else { return Ok(()) };
        let Some(oc) = self.on_conflict.clone() else {
            let key = self.writer.insert_row(info, &row, cx)?;
            capture(info, TransitionKind::InsertNew, &row);
            self.writer.after_row(info, TriggerEvent::Insert, None, Some(&row), None, cx)?;
            let system = self.system_values(info, &key);
            return self.emit_joined(&row, system, &[], out, cx);
        };
        self.writer.check_row(info, &row, cx)?;
        // A deferrable unique index cannot tell now whether the row
        // conflicts (ExecCheckIndexConstraints refuses it as an arbiter).
        for u in &info.deferrable_uniques {
            let index = &info.table.indexes[u.index].rel;
            if oc.arbiter.map_or(true, |a| a == index.oid) {
                return Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "ON CONFLICT does not support deferrable unique constraints/exclusion constraints as arbiters",
                )
                .with_table(cx.catalog.namespace_name(info.table.rel.namespace), &info.table.rel.name)
                .with_constraint(&index.name));
            }
        }
        let key = info.table.new_row_key(&row, cx)?;
        match info.table.find_conflict(&row, &key, cx, None)? {
            None => {
                info.table.insert(&row, &key, cx)?;
                self.writer.defer_unique_checks(info, &row, None, cx)?;
                self.writer.defer_fk_check(info, &row, None, &key, cx);
                capture(info, TransitionKind::InsertNew, &row);
                self.writer.after_row(info, TriggerEvent::Insert, None, Some(&row), None, cx)?;
                let system = self.system_values(info, &key);
                self.conflict_updated.insert(key);
                self.emit_joined(&row, system, &[], out, cx)
            }
            Some((i, vals, existing_key)) => {
                let arbiter_matches = oc.arbiter.map(|a| a == info.table.indexes[i].rel.oid).unwrap_or(true);
                if !arbiter_matches {
                    return Err(info.table.unique_violation(i, &vals, cx));
                }
                if !oc.do_update {
                    return Ok(());
                }
                if self.conflict_updated.contains(&existing_key) {
                    return Err(PgError::new(
                        sqlstate::CARDINALITY_VIOLATION,
                        "ON CONFLICT DO UPDATE command cannot affect row a second time",
                    )
                    .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
                }
                let Some(existing) = info.table.lock_and_fetch_latest(cx.txn, &existing_key)? else {
                    return Ok(());
                };
                let mut both = existing.clone();
                both.extend(row.iter().cloned());
                if let Some(f) = &oc.filter {
                    if !eval_pred(f, &both, cx)? {
                        return Ok(());
                    }
                }
                let mut new = existing.clone();
                for (c, e) in &oc.set {
                    new[*c] = eval(e, &both, cx)?;
                }
                if self.conflict_updated.contains(&existing_key) {
                    return Err(PgError::new(
                        sqlstate::CARDINALITY_VIOLATION,
                        "ON CONFLICT DO UPDATE command cannot affect row a second time",
                    )
                    .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
                }
                let set_cols: Vec<usize> = oc.set.iter().map(|(c, _)| *c).collect();
                if let Some(t) = info.triggers.as_ref().filter(|t| t.has(TriggerTiming::Before, true, TriggerEvent::Update)) {
                    match t.before_row(TriggerTiming::Before, TriggerEvent::Update, Some(&existing), Some(new), Some(&set_cols), cx)? {
                        Some(r) => new = r,
                        None => return Ok(()),
                    }
                }
                let nk = self.writer.update_row(info, &existing_key, &existing, new.clone(), cx, 0)?;
                capture(info, TransitionKind::UpdateOld, &existing);
                capture(info, TransitionKind::UpdateNew, &new);
                self.writer.after_row(info, TriggerEvent::Update, Some(&existing), Some(&new), Some(&set_cols), cx)?;
                let system = self.system_values(info, &nk);
                self.conflict_updated.insert(nk);
                self.emit_joined(&new, system, &[], out, cx)
            }
        }
    }
}

/// A BEFORE ROW trigger's own statements must not have changed the row
/// it fired for (heap_update's TM_SelfModified by a later command).
fn check_not_self_modified(info: &RelInfo, key: &[u8], fired_for: &[Datum], what: &str, cx: &ExecCx) -> PgResult<()> {
    let now = info.table.fetch_latest(cx.txn, key)?;
    if now.as_deref().map_or(true, |r| rows_differ(r, fired_for)) {
        return Err(PgError::new(
            "27000",
            format!("tuple to be {what} was already modified by an operation triggered by the current command"),
        )
        .with_hint("Consider using an AFTER trigger instead of a BEFORE trigger to propagate changes to other rows."));
    }
    Ok(())
}

/// Adds a row the statement wrote to its target's transition table.
fn capture(info: &RelInfo, kind: TransitionKind, row: &[Datum]) {
    if let Some(t) = &info.triggers {
        t.capture(kind, row);
    }
}

fn rows_differ(a: &[Datum], b: &[Datum]) -> bool {
    a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.is_null() != y.is_null() || !x.group_eq(y))
}

impl Node for ModifyNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            let out = self.run(input, cx)?;
            self.output = out.into_iter();
        }
        Ok(self.output.next())
    }
}
