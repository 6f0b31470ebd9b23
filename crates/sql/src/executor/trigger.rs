//! Firing DML triggers (PostgreSQL's trigger.c, the executor half): the
//! triggers of a table a statement writes, BEFORE ROW triggers that change
//! or skip a row, AFTER ROW events queued to the end of the statement,
//! statement-level triggers, `UPDATE OF` columns and `WHEN` conditions,
//! and the transition tables (REFERENCING OLD/NEW TABLE) a statement
//! collects for its AFTER triggers.
//!
//! A trigger function runs through the session (`Env::call_trigger`),
//! which hands it to its language's handler with a `TriggerData`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use super::eval::eval_pred;
use super::{ExecCx, Row};
use crate::catalog::trigger::{Trigger, TriggerEvent, TriggerTiming};
use crate::catalog::Relation;
use crate::expr::Expr;
use crate::procedural::{NamedTuplestore, TriggerData};

/// The enabled triggers of one table, in name order (the order PostgreSQL
/// fires them in), with their WHEN conditions compiled as first needed.
pub struct TableTriggers {
    rel: Arc<Relation>,
    triggers: Vec<Trigger>,
    when: RefCell<HashMap<Oid, Expr>>,
    /// Each trigger's `TriggerData` without its rows, made at its first
    /// firing in the statement and reused for the rows after it.
    data_cache: RefCell<Vec<Option<TriggerData>>>,
    /// The statement's transition tables, collected when some trigger
    /// names them.
    transition: [Transition; 4],
}

/// The transition tables of a statement: inserted rows, old and new
/// versions of updated rows, deleted rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionKind {
    InsertNew = 0,
    UpdateOld = 1,
    UpdateNew = 2,
    DeleteOld = 3,
}

/// One transition table being collected.
#[derive(Default)]
struct Transition {
    /// Whether a trigger reads it (only then are rows kept).
    wanted: bool,
    rows: RefCell<Vec<Row>>,
    /// The rows as handed to trigger functions, made once after the last
    /// row was added.
    frozen: RefCell<Option<Arc<Vec<Row>>>>,
}

impl TransitionKind {
    /// The tables a trigger of `event` reads as OLD TABLE and NEW TABLE.
    fn of(event: TriggerEvent) -> (Option<TransitionKind>, Option<TransitionKind>) {
        match event {
            TriggerEvent::Insert => (None, Some(TransitionKind::InsertNew)),
            TriggerEvent::Update => (Some(TransitionKind::UpdateOld), Some(TransitionKind::UpdateNew)),
            TriggerEvent::Delete => (Some(TransitionKind::DeleteOld), None),
            TriggerEvent::Truncate => (None, None),
        }
    }
}

/// An AFTER ROW event waiting for the end of its statement.
pub struct AfterEvent {
    pub triggers: std::rc::Rc<TableTriggers>,
    pub trigger: usize,
    pub event: TriggerEvent,
    pub old: Option<Vec<Datum>>,
    pub new: Option<Vec<Datum>>,
}

impl TableTriggers {
    /// The triggers of `rel` active under the session's
    /// session_replication_role; None when there are none (the common
    /// case costs nothing per row).
    pub fn of(rel: &Arc<Relation>, cx: &ExecCx) -> Option<TableTriggers> {
        if rel.triggers.is_empty() {
            return None;
        }
        let role = cx.env.settings().show("session_replication_role").unwrap_or_else(|_| "origin".into());
        let mut triggers: Vec<Trigger> = rel.triggers.iter().filter(|t| t.enabled_for(&role)).cloned().collect();
        if triggers.is_empty() {
            return None;
        }
        triggers.sort_by(|a, b| a.name.cmp(&b.name));
        let data_cache = RefCell::new(vec![None; triggers.len()]);
        let mut transition: [Transition; 4] = Default::default();
        for t in triggers.iter().filter(|t| t.timing() == TriggerTiming::After) {
            for event in [TriggerEvent::Insert, TriggerEvent::Update, TriggerEvent::Delete] {
                if !t.fires_on(event) {
                    continue;
                }
                let (old, new) = TransitionKind::of(event);
                if let (Some(k), Some(_)) = (old, &t.old_table) {
                    transition[k as usize].wanted = true;
                }
                if let (Some(k), Some(_)) = (new, &t.new_table) {
                    transition[k as usize].wanted = true;
                }
            }
        }
        Some(TableTriggers { rel: rel.clone(), triggers, when: RefCell::new(HashMap::new()), data_cache, transition })
    }

    /// Whether the statement collects transition table `kind`.
    pub fn wants(&self, kind: TransitionKind) -> bool {
        self.transition[kind as usize].wanted
    }

    /// Adds a written row (in this table's column order) to a transition
    /// table, if a trigger reads it.
    pub fn capture(&self, kind: TransitionKind, row: &[Datum]) {
        let t = &self.transition[kind as usize];
        if t.wanted {
            t.rows.borrow_mut().push(row.to_vec());
            t.frozen.borrow_mut().take();
        }
    }

    /// The transition tables trigger `i` names, for a firing on `event`.
    fn transition_tables(&self, i: usize, event: TriggerEvent) -> Vec<NamedTuplestore> {
        let t = &self.triggers[i];
        if t.old_table.is_none() && t.new_table.is_none() {
            return Vec::new();
        }
        let (old, new) = TransitionKind::of(event);
        let columns: Vec<(String, SqlType)> = self.rel.live_columns().map(|(_, c)| (c.name.clone(), SqlType::with_typmod(c.type_oid, c.typmod))).collect();
        let mut out = Vec::new();
        for (name, kind) in [(&t.old_table, old), (&t.new_table, new)] {
            let (Some(name), Some(kind)) = (name, kind) else { continue };
            let tr = &self.transition[kind as usize];
            let rows = tr.frozen.borrow_mut().get_or_insert_with(|| Arc::new(tr.rows.borrow().clone())).clone();
            out.push(NamedTuplestore { name: name.clone(), columns: columns.clone(), rows });
        }
        out
    }

    pub fn has(&self, timing: TriggerTiming, row: bool, event: TriggerEvent) -> bool {
        self.triggers.iter().any(|t| t.timing() == timing && t.is_row() == row && t.fires_on(event))
    }

    /// The triggers of one kind that apply, by index.
    fn matching(&self, timing: TriggerTiming, row: bool, event: TriggerEvent) -> impl Iterator<Item = usize> + '_ {
        self.triggers
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.timing() == timing && t.is_row() == row && t.fires_on(event))
            .map(|(i, _)| i)
    }

    /// Whether an UPDATE that sets `updated` (live column positions) is
    /// one trigger `i` fires on (`UPDATE OF` columns).
    fn column_match(&self, i: usize, updated: Option<&[usize]>) -> bool {
        let t = &self.triggers[i];
        if t.columns.is_empty() {
            return true;
        }
        let Some(updated) = updated else { return true };
        let live: Vec<i16> = self.rel.live_columns().map(|(a, _)| a).collect();
        updated.iter().any(|&c| live.get(c).is_some_and(|a| t.columns.contains(a)))
    }

    /// Evaluates trigger `i`'s WHEN condition over (OLD, NEW).
    fn when_passes(&self, i: usize, old: Option<&[Datum]>, new: Option<&[Datum]>, cx: &ExecCx) -> PgResult<bool> {
        let t = &self.triggers[i];
        let Some(text) = &t.when else { return Ok(true) };
        if !self.when.borrow().contains_key(&t.oid) {
            let e = compile_when(&self.rel, text, cx)?;
            self.when.borrow_mut().insert(t.oid, e);
        }
        let n = self.rel.live_columns().count();
        let mut row = Vec::with_capacity(2 * n);
        row.extend(old.map(|o| o.to_vec()).unwrap_or_else(|| vec![Datum::Null; n]));
        row.extend(new.map(|o| o.to_vec()).unwrap_or_else(|| vec![Datum::Null; n]));
        let when = self.when.borrow();
        eval_pred(&when[&t.oid], &row, cx)
    }

    fn data(&self, i: usize, event: TriggerEvent, old: Option<&[Datum]>, new: Option<&[Datum]>, cx: &ExecCx) -> TriggerData {
        let t = &self.triggers[i];
        TriggerData {
            name: t.name.clone(),
            when: t.timing().keyword(),
            level: if t.is_row() { "ROW" } else { "STATEMENT" },
            op: event.keyword(),
            relid: self.rel.oid,
            table_name: self.rel.name.clone(),
            table_schema: cx.catalog.namespace_name(self.rel.namespace).to_string(),
            args: t.args.clone(),
            columns: self.rel.live_columns().map(|(_, c)| (c.name.clone(), SqlType::with_typmod(c.type_oid, c.typmod))).collect(),
            new: new.map(|r| r.to_vec()),
            old: old.map(|r| r.to_vec()),
            transition: Vec::new(),
        }
    }

    /// Calls trigger `i`'s function for one firing; also answers the
    /// number of the table's columns (what a returned row must have).
    fn fire(&self, i: usize, event: TriggerEvent, old: Option<&[Datum]>, new: Option<&[Datum]>, cx: &ExecCx) -> PgResult<(Datum, usize)> {
        // Taken out while the function runs (it may fire this trigger again
        // through another statement, which builds its own).
        let cached = self.data_cache.borrow_mut()[i].take().filter(|d| d.op == event.keyword());
        let mut data = match cached {
            Some(d) => d,
            None => self.data(i, event, None, None, cx),
        };
        data.new = new.map(|r| r.to_vec());
        data.old = old.map(|r| r.to_vec());
        data.transition = self.transition_tables(i, event);
        let func = self.triggers[i].function;
        let out = if func < tusk_types::oid::FIRST_NORMAL_OBJECT_ID { builtin_trigger(func, &data, cx) } else { cx.env.call_trigger(func, &data) };
        let width = data.columns.len();
        data.new = None;
        data.old = None;
        data.transition = Vec::new();
        self.data_cache.borrow_mut()[i] = Some(data);
        Ok((out?, width))
    }

    /// Runs BEFORE ROW triggers (`timing` BEFORE) or INSTEAD OF triggers on
    /// a row: the row to write (changed by the triggers), or None when a
    /// trigger returned NULL and the row is skipped.
    pub fn before_row(
        &self,
        timing: TriggerTiming,
        event: TriggerEvent,
        old: Option<&[Datum]>,
        new: Option<Vec<Datum>>,
        updated: Option<&[usize]>,
        cx: &ExecCx,
    ) -> PgResult<Option<Vec<Datum>>> {
        let mut current = new;
        let indexes: Vec<usize> = self.matching(timing, true, event).collect();
        let mut result_old: Option<Vec<Datum>> = None;
        for i in indexes {
            if event == TriggerEvent::Update && !self.column_match(i, updated) {
                continue;
            }
            if !self.when_passes(i, old, current.as_deref(), cx)? {
                continue;
            }
            let (out, width) = self.fire(i, event, old, current.as_deref(), cx)?;
            match out {
                Datum::Null => return Ok(None),
                Datum::Record(fields) => {
                    if fields.len() != width {
                        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "returned row structure does not match the structure of the triggering table")
                            .with_detail(format!("Number of returned columns ({}) does not match expected column count ({width}).", fields.len())));
                    }
                    let row = fields.to_vec();
                    if event == TriggerEvent::Delete {
                        result_old = Some(row);
                    } else {
                        current = Some(row);
                    }
                }
                _ => return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "trigger function returned a value that is not a row")),
            }
        }
        if event == TriggerEvent::Delete {
            // A BEFORE DELETE trigger's non-NULL result lets the delete go on.
            return Ok(Some(result_old.or(current).unwrap_or_else(|| old.map(|o| o.to_vec()).unwrap_or_default())));
        }
        Ok(current)
    }

    /// Queues the AFTER ROW triggers that apply to a written row (WHEN is
    /// evaluated now, as PostgreSQL does when it queues the event).
    pub fn queue_after_row(
        self: &std::rc::Rc<Self>,
        event: TriggerEvent,
        old: Option<&[Datum]>,
        new: Option<&[Datum]>,
        updated: Option<&[usize]>,
        queue: &mut Vec<AfterEvent>,
        cx: &ExecCx,
    ) -> PgResult<()> {
        let indexes: Vec<usize> = self.matching(TriggerTiming::After, true, event).collect();
        for i in indexes {
            if event == TriggerEvent::Update && !self.column_match(i, updated) {
                continue;
            }
            if !self.when_passes(i, old, new, cx)? {
                continue;
            }
            queue.push(AfterEvent { triggers: self.clone(), trigger: i, event, old: old.map(|r| r.to_vec()), new: new.map(|r| r.to_vec()) });
        }
        Ok(())
    }

    /// Runs the statement-level triggers of one timing.
    pub fn statement(&self, timing: TriggerTiming, event: TriggerEvent, updated: Option<&[usize]>, cx: &ExecCx) -> PgResult<()> {
        let indexes: Vec<usize> = self.matching(timing, false, event).collect();
        for i in indexes {
            if event == TriggerEvent::Update && !self.column_match(i, updated) {
                continue;
            }
            if !self.when_passes(i, None, None, cx)? {
                continue;
            }
            self.fire(i, event, None, None, cx)?;
        }
        Ok(())
    }
}

/// Runs a built-in trigger function (PostgreSQL's C ones).
fn builtin_trigger(func: Oid, data: &TriggerData, cx: &ExecCx) -> PgResult<Datum> {
    let name = cx.catalog.proc(func).map(|p| p.name.clone()).unwrap_or_default();
    match name.as_str() {
        "suppress_redundant_updates_trigger" => suppress_redundant_updates(data),
        _ => Err(PgError::unsupported(format!("trigger function {name}"))),
    }
}

/// suppress_redundant_updates_trigger: a BEFORE UPDATE row trigger that
/// skips an update leaving the row exactly as it was.
fn suppress_redundant_updates(data: &TriggerData) -> PgResult<Datum> {
    let fail = |m: &str| Err(PgError::new("39P01", format!("suppress_redundant_updates_trigger: {m}")));
    if data.op != "UPDATE" {
        return fail("must be called on update");
    }
    if data.when != "BEFORE" {
        return fail("must be called before update");
    }
    if data.level != "ROW" {
        return fail("must be called for each row");
    }
    let (Some(old), Some(new)) = (&data.old, &data.new) else { return fail("must be called on update") };
    let same = old.len() == new.len() && old.iter().zip(new).all(|(a, b)| a.is_null() == b.is_null() && (a.is_null() || a == b));
    if same {
        Ok(Datum::Null)
    } else {
        Ok(Datum::Record(Arc::new(new.clone())))
    }
}

/// Fires queued AFTER ROW events, in the order they were queued.
pub fn fire_after(queue: Vec<AfterEvent>, cx: &ExecCx) -> PgResult<()> {
    for ev in queue {
        ev.triggers.fire(ev.trigger, ev.event, ev.old.as_deref(), ev.new.as_deref(), cx)?;
    }
    Ok(())
}

/// The relation a WHEN condition is compiled against: the table's live
/// columns twice, named "old.c" and "new.c", so a row of OLD ++ NEW
/// evaluates it.
pub fn when_relation(rel: &Relation) -> Relation {
    let mut r = rel.clone();
    let live: Vec<_> = rel.live_columns().map(|(_, c)| c.clone()).collect();
    let mut cols = Vec::with_capacity(live.len() * 2);
    for prefix in ["old", "new"] {
        for c in &live {
            let mut c = c.clone();
            c.name = format!("{prefix}.{}", c.name);
            c.not_null = false;
            c.default = None;
            c.identity = ' ';
            cols.push(c);
        }
    }
    r.columns = cols;
    r.constraints.clear();
    r.triggers.clear();
    r
}

/// References to OLD and NEW in a WHEN condition: `old.c` becomes the
/// column "old.c" of `when_relation`, and `old.*` the row of them all.
/// Returns the text and whether OLD, NEW, and a system column of NEW were
/// referenced.
pub fn rewrite_when(text: &str, rel: &Relation) -> PgResult<(String, bool, bool, bool)> {
    let scanned = pg_query::scan(text).map_err(|e| PgError::syntax(e.to_string()))?;
    let toks = &scanned.tokens;
    let mut out = String::new();
    let mut last = 0usize;
    let (mut uses_old, mut uses_new, mut new_system) = (false, false, false);
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let word = &text[t.start as usize..t.end as usize];
        let lower = word.to_ascii_lowercase();
        if (lower == "old" || lower == "new") && i + 2 < toks.len() && &text[toks[i + 1].start as usize..toks[i + 1].end as usize] == "." {
            let prev_dot = i > 0 && &text[toks[i - 1].start as usize..toks[i - 1].end as usize] == ".";
            let col_tok = &toks[i + 2];
            let raw = &text[col_tok.start as usize..col_tok.end as usize];
            if !prev_dot && raw == "*" {
                if lower == "old" {
                    uses_old = true;
                } else {
                    uses_new = true;
                }
                let fields: Vec<String> = rel.live_columns().map(|(_, c)| crate::functions::quote_ident(&format!("{lower}.{}", c.name))).collect();
                out.push_str(&text[last..t.start as usize]);
                out.push_str(&format!("ROW({})", fields.join(", ")));
                last = col_tok.end as usize;
                i += 3;
                continue;
            }
            if !prev_dot && raw.eq_ignore_ascii_case("tableoid") {
                // The one system column a row of OLD or NEW knows: its table.
                if lower == "old" {
                    uses_old = true;
                } else {
                    uses_new = true;
                    new_system = true;
                }
                out.push_str(&text[last..t.start as usize]);
                out.push_str(&format!("'{}'::oid", rel.oid));
                last = col_tok.end as usize;
                i += 3;
                continue;
            }
            if !prev_dot {
                let col = if let Some(q) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) { q.replace("\"\"", "\"") } else { raw.to_ascii_lowercase() };
                if lower == "old" {
                    uses_old = true;
                } else {
                    uses_new = true;
                    if matches!(col.as_str(), "ctid" | "xmin" | "xmax" | "cmin" | "cmax" | "tableoid") {
                        new_system = true;
                    }
                }
                out.push_str(&text[last..t.start as usize]);
                out.push_str(&crate::functions::quote_ident(&format!("{lower}.{col}")));
                last = col_tok.end as usize;
                i += 3;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    Ok((out, uses_old, uses_new, new_system))
}

fn compile_when(rel: &Relation, text: &str, cx: &ExecCx) -> PgResult<Expr> {
    let (rewritten, ..) = rewrite_when(text, rel)?;
    let r = when_relation(rel);
    let settings = cx.env.settings();
    let user = cx.env.current_user();
    crate::planner::compile_relation_expr(cx.catalog, &settings, &user, &r, &rewritten)
}
