//! SQL-level cursors: DECLARE, FETCH, MOVE and CLOSE (PostgreSQL's
//! `commands/portalcmds.c` and the fetch logic of `tcop/pquery.c`).
//!
//! A cursor here is always materialized: DECLARE runs its query to the end
//! into a vector of rows, which FETCH and MOVE then walk in either
//! direction. That gives every cursor PostgreSQL's snapshot semantics (a
//! cursor never sees changes made after it was opened, even by its own
//! transaction), makes WITH HOLD trivial (the rows are already there when
//! the transaction commits) and makes SCROLL free. The cost is that the
//! whole result is computed and held in memory at DECLARE time, where
//! PostgreSQL streams a cursor on demand; a query that fails part-way (say a
//! division by zero on the third row) keeps the rows made before the error
//! and raises the error only when a FETCH reaches that point, as
//! PostgreSQL would.
//!
//! Positions follow PostgreSQL's portal model, kept as one number `pos`
//! over a result of `n` rows: 0 is before the first row, 1..=n is on that
//! row, n+1 is after the last. `run_select` is PortalRunSelect and
//! `run_fetch` DoPortalRunFetch, step for step, so that the row counts of
//! every direction and the "cursor can only scan forward" errors of NO
//! SCROLL cursors (55000) come out as PostgreSQL's do.
//!
//! Cursors live in the SQL session (`SqlSession::cursors`); the session
//! calls `at_commit`, `at_rollback` and `at_rollback_to` at transaction and
//! savepoint ends. They are not the protocol's portals (the extended
//! protocol's Bind/Execute portals live in tusk-server): in PostgreSQL both
//! share one namespace, here only Describe of a cursor's name reaches them.

use std::collections::HashMap;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::UtilityResult;
use crate::executor::Row;
use crate::parser::ParsedStatement;
use crate::plan::{OutputColumn, Plan};
use crate::session::{is_stale_plan, SqlSession};

// CURSOR_OPT_* of PostgreSQL's parsenodes.h, as DeclareCursorStmt.options carries them.
const OPT_BINARY: i32 = 0x0001;
const OPT_SCROLL: i32 = 0x0002;
const OPT_NO_SCROLL: i32 = 0x0004;
const OPT_INSENSITIVE: i32 = 0x0008;
const OPT_ASENSITIVE: i32 = 0x0010;
const OPT_HOLD: i32 = 0x0020;

/// FETCH ALL's count (LONG_MAX in PostgreSQL's grammar).
const FETCH_ALL: i64 = i64::MAX;

/// One open cursor.
pub struct Cursor {
    /// The DECLARE statement's text (pg_cursors.statement).
    pub statement: String,
    pub columns: Vec<OutputColumn>,
    rows: Vec<Row>,
    /// The error the query raised after producing `rows`, raised again by
    /// the first fetch that reads past them.
    error: Option<PgError>,
    pub scrollable: bool,
    pub holdable: bool,
    /// When DECLARE ran (pg_cursors.creation_time), PostgreSQL's timestamp.
    pub creation_time: i64,
    /// See the module comment: 0 before the first row, n+1 after the last.
    pos: usize,
    /// The savepoint depth at DECLARE, while the declaring transaction is
    /// open; None once a WITH HOLD cursor outlived it.
    depth: Option<usize>,
}

/// The session's cursors by name.
#[derive(Default)]
pub struct Cursors {
    open: HashMap<String, Cursor>,
}

/// One row of pg_cursors.
#[derive(Clone, Debug)]
pub struct CursorInfo {
    pub name: String,
    pub statement: String,
    pub holdable: bool,
    pub scrollable: bool,
    pub creation_time: i64,
}

impl Cursors {
    /// The open cursors, for pg_cursors.
    pub fn list(&self) -> Vec<CursorInfo> {
        self.open
            .iter()
            .map(|(name, c)| CursorInfo {
                name: name.clone(),
                statement: c.statement.clone(),
                holdable: c.holdable,
                scrollable: c.scrollable,
                creation_time: c.creation_time,
            })
            .collect()
    }

    /// Commit: cursors WITHOUT HOLD close, WITH HOLD ones stay.
    pub fn at_commit(&mut self) {
        self.open.retain(|_, c| c.holdable);
        for c in self.open.values_mut() {
            c.depth = None;
        }
    }

    /// Rollback: every cursor the transaction opened closes, WITH HOLD
    /// too; those held from earlier transactions stay.
    pub fn at_rollback(&mut self) {
        self.open.retain(|_, c| c.depth.is_none());
    }

    /// ROLLBACK TO SAVEPOINT: cursors opened since (savepoint depth now `depth`) close.
    pub fn at_rollback_to(&mut self, depth: usize) {
        self.open.retain(|_, c| c.depth.map_or(true, |d| d <= depth));
    }

    pub fn get(&self, name: &str) -> Option<&Cursor> {
        self.open.get(name)
    }

    /// The open cursors, for pg_cursors.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Cursor)> {
        self.open.iter()
    }
}

/// The columns a FETCH returns (None for MOVE or an unknown cursor), for
/// the extended protocol's Describe.
pub fn fetch_columns(s: &SqlSession, f: &pb::FetchStmt) -> Option<Vec<OutputColumn>> {
    if f.ismove {
        return None;
    }
    cursor_columns(s, &f.portalname)
}

/// The columns of cursor `name`, if it is open (Describe of a portal by a
/// cursor's name, as psycopg does after DECLARE).
pub fn cursor_columns(s: &SqlSession, name: &str) -> Option<Vec<OutputColumn>> {
    s.cursors.borrow().get(name).map(|c| c.columns.clone())
}

// ---------------------------------------------------------------- DECLARE

/// DECLARE name [BINARY] [ASENSITIVE|INSENSITIVE] [[NO] SCROLL] CURSOR [WITH[OUT] HOLD] FOR query.
pub fn declare(s: &mut SqlSession, d: &pb::DeclareCursorStmt, sql: &str) -> PgResult<UtilityResult> {
    declare_with_params(s, d, sql, &[], Vec::new())
}

/// The parameter types of a DECLARE's query (`$1`...), for the extended
/// protocol's Parse: given ones as they are, the others inferred.
pub fn param_types(s: &SqlSession, d: &pb::DeclareCursorStmt, sql: &str, given: &[SqlType]) -> PgResult<Vec<SqlType>> {
    let query = d.query.as_deref().and_then(|q| q.node.clone()).ok_or_else(|| PgError::internal("DECLARE CURSOR without a query"))?;
    let stmt = ParsedStatement { node: query, location: 0, len: sql.len() };
    Ok(s.plan_query(&stmt, sql, given)?.1)
}

/// DECLARE with values for the query's parameters (a DECLARE sent through
/// the extended protocol, as psycopg does for its named cursors).
pub fn declare_with_params(s: &mut SqlSession, d: &pb::DeclareCursorStmt, sql: &str, param_types: &[SqlType], params: Vec<Datum>) -> PgResult<UtilityResult> {
    let opts = d.options;
    // transformDeclareCursorStmt's checks come first, then the query's analysis.
    if opts & OPT_SCROLL != 0 && opts & OPT_NO_SCROLL != 0 {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_DEFINITION, "cannot specify both SCROLL and NO SCROLL"));
    }
    if opts & OPT_ASENSITIVE != 0 && opts & OPT_INSENSITIVE != 0 {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_DEFINITION, "cannot specify both ASENSITIVE and INSENSITIVE"));
    }
    let query = d.query.as_deref().and_then(|q| q.node.clone()).ok_or_else(|| PgError::internal("DECLARE CURSOR without a query"))?;
    let stmt = ParsedStatement { node: query, location: 0, len: sql.len() };
    let (mut planned, _) = s.plan_query(&stmt, sql, param_types)?;
    if planned.has_modify || !planned.pre_modify.is_empty() {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "DECLARE CURSOR must not contain data-modifying statements in WITH"));
    }
    if planned.row_lock {
        let strength = lock_strength(&stmt.node);
        let refuse = |what: &str, detail: &str| {
            Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("DECLARE {what}CURSOR{} ... {strength} is not supported", if what.is_empty() { " WITH HOLD" } else { "" }))
                .with_detail(detail))
        };
        if opts & OPT_HOLD != 0 {
            return refuse("", "Holdable cursors must be READ ONLY.");
        }
        if opts & OPT_SCROLL != 0 {
            return refuse("SCROLL ", "Scrollable cursors must be READ ONLY.");
        }
        if opts & OPT_INSENSITIVE != 0 {
            return refuse("INSENSITIVE ", "Insensitive cursors must be READ ONLY.");
        }
    }
    // PerformCursorOpen.
    if d.portalname.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, "invalid cursor name: must not be empty"));
    }
    if opts & OPT_HOLD == 0 && !s.in_block.get() {
        return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "DECLARE CURSOR can only be used in transaction blocks"));
    }
    if s.cursors.borrow().get(&d.portalname).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_CURSOR, format!("cursor \"{}\" already exists", d.portalname)));
    }
    if opts & OPT_BINARY != 0 {
        // The rows would have to go out in binary in the simple protocol,
        // which the front end does not do for utility results.
        return Err(PgError::unsupported("DECLARE BINARY CURSOR"));
    }
    // Without SCROLL or NO SCROLL, PostgreSQL allows backward fetches when
    // the plan can run backwards and takes no row locks.
    let scrollable = if opts & OPT_SCROLL != 0 {
        true
    } else if opts & OPT_NO_SCROLL != 0 {
        false
    } else {
        !planned.row_lock && supports_backward_scan(&planned.plan)
    };
    // Run the query to its end (re-planned if DDL committed while it
    // waited for a relation lock, as the front end does for queries).
    let mut attempts = 0;
    let mut run = loop {
        match s.start_query(planned.clone(), params.clone()) {
            Err(e) if is_stale_plan(&e) && attempts < 5 => {
                attempts += 1;
                planned = s.plan_query(&stmt, sql, param_types)?.0;
            }
            r => break r?,
        }
    };
    let mut rows = Vec::new();
    let error = run.fetch(s, 0, &mut |r| {
        rows.push(r);
        Ok(())
    });
    let error = match error {
        Ok(_) => None,
        // A cancel or timeout is the DECLARE's own failure.
        Err(e) if e.code == sqlstate::QUERY_CANCELED => return Err(e),
        Err(e) => Some(e),
    };
    let cursor = Cursor {
        statement: sql.trim().to_string(),
        columns: run.columns.clone(),
        rows,
        error,
        scrollable,
        holdable: opts & OPT_HOLD != 0,
        creation_time: s.stmt_start.get(),
        pos: 0,
        depth: Some(s.savepoint_depth()),
    };
    s.cursors.borrow_mut().open.insert(d.portalname.clone(), cursor);
    Ok(UtilityResult { tag: "DECLARE CURSOR".into(), rows: None })
}

/// The first locking clause's strength, as PostgreSQL names it in errors.
fn lock_strength(node: &NodeEnum) -> &'static str {
    let NodeEnum::SelectStmt(sel) = node else { return "FOR UPDATE" };
    let first = sel.locking_clause.iter().find_map(|n| match &n.node {
        Some(NodeEnum::LockingClause(l)) => Some(l.strength),
        _ => None,
    });
    match first {
        Some(x) if x == pb::LockClauseStrength::LcsForkeyshare as i32 => "FOR KEY SHARE",
        Some(x) if x == pb::LockClauseStrength::LcsForshare as i32 => "FOR SHARE",
        Some(x) if x == pb::LockClauseStrength::LcsFornokeyupdate as i32 => "FOR NO KEY UPDATE",
        _ => "FOR UPDATE",
    }
}

/// ExecSupportsBackwardScan over Tusk's plans: scans, sorts and
/// materializations can run backwards; joins, aggregation, DISTINCT, set
/// operations, ProjectSet and a FROM-less Result cannot.
fn supports_backward_scan(plan: &Plan) -> bool {
    match plan {
        Plan::Scan { .. } | Plan::Values { .. } | Plan::Function { .. } | Plan::Sort { .. } | Plan::Materialize { .. } => true,
        Plan::Filter { input, .. } | Plan::Project { input, .. } | Plan::Limit { input, .. } => supports_backward_scan(input),
        Plan::Append { inputs, .. } => inputs.iter().all(supports_backward_scan),
        _ => false,
    }
}

// ---------------------------------------------------------------- FETCH / MOVE

/// FETCH [direction] [FROM|IN] name, MOVE likewise.
pub fn fetch(s: &mut SqlSession, f: &pb::FetchStmt) -> PgResult<UtilityResult> {
    if f.portalname.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, "invalid cursor name: must not be empty"));
    }
    let mut cursors = s.cursors.borrow_mut();
    let cursor = cursors
        .open
        .get_mut(&f.portalname)
        .ok_or_else(|| PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("cursor \"{}\" does not exist", f.portalname)))?;
    let mut out = if f.ismove { None } else { Some(Vec::new()) };
    let n = cursor.run_fetch(f.direction, f.how_many, &mut out)?;
    Ok(match out {
        None => UtilityResult { tag: format!("MOVE {n}"), rows: None },
        Some(rows) => UtilityResult { tag: format!("FETCH {n}"), rows: Some((cursor.columns.clone(), rows)) },
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

impl Cursor {
    fn at_end(&self) -> bool {
        self.pos == self.rows.len() + 1
    }

    /// PostgreSQL's portalPos: rows fetched forward up to here.
    fn portal_pos(&self) -> i64 {
        self.pos.min(self.rows.len()) as i64
    }

    /// DoPortalRunFetch: returns the row count of the command tag; rows
    /// go to `dest` (None for MOVE).
    fn run_fetch(&mut self, direction: i32, count: i64, dest: &mut Option<Vec<Row>>) -> PgResult<u64> {
        let mut count = count;
        let mut dir = match direction {
            x if x == pb::FetchDirection::FetchBackward as i32 => Direction::Backward,
            x if x == pb::FetchDirection::FetchAbsolute as i32 => {
                if count > 0 {
                    // Rewind and go forward, or move from here, whichever
                    // PostgreSQL would (the choice decides NO SCROLL errors).
                    let pos = self.portal_pos();
                    if count - 1 < pos / 2 {
                        self.rewind()?;
                        if count > 1 {
                            self.run_select(Direction::Forward, count - 1, &mut None)?;
                        }
                    } else {
                        let pos = pos + self.at_end() as i64;
                        if count <= pos {
                            self.run_select(Direction::Backward, pos - count + 1, &mut None)?;
                        } else if count > pos + 1 {
                            self.run_select(Direction::Forward, count - pos - 1, &mut None)?;
                        }
                    }
                    return self.run_select(Direction::Forward, 1, dest);
                } else if count < 0 {
                    self.run_select(Direction::Forward, FETCH_ALL, &mut None)?;
                    if count < -1 {
                        self.run_select(Direction::Backward, -count - 1, &mut None)?;
                    }
                    return self.run_select(Direction::Backward, 1, dest);
                } else {
                    self.rewind()?;
                    return self.run_select(Direction::Forward, 0, dest);
                }
            }
            x if x == pb::FetchDirection::FetchRelative as i32 => {
                if count > 0 {
                    if count > 1 {
                        self.run_select(Direction::Forward, count - 1, &mut None)?;
                    }
                    return self.run_select(Direction::Forward, 1, dest);
                } else if count < 0 {
                    if count < -1 {
                        self.run_select(Direction::Backward, -count - 1, &mut None)?;
                    }
                    return self.run_select(Direction::Backward, 1, dest);
                }
                Direction::Forward
            }
            _ => Direction::Forward,
        };
        if count < 0 {
            dir = if dir == Direction::Forward { Direction::Backward } else { Direction::Forward };
            count = count.checked_neg().unwrap_or(FETCH_ALL);
        }
        // A zero count re-fetches the current row, if there is one.
        if count == 0 {
            let on_row = self.pos >= 1 && self.pos <= self.rows.len();
            if dest.is_none() {
                return Ok(on_row as u64);
            }
            if on_row {
                self.run_select(Direction::Backward, 1, &mut None)?;
                count = 1;
                dir = Direction::Forward;
            }
        }
        self.run_select(dir, count, dest)
    }

    /// DoPortalRewind.
    fn rewind(&mut self) -> PgResult<()> {
        if self.pos == 0 {
            return Ok(());
        }
        self.check_scroll()?;
        self.pos = 0;
        Ok(())
    }

    fn check_scroll(&self) -> PgResult<()> {
        if self.scrollable {
            return Ok(());
        }
        Err(PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, "cursor can only scan forward")
            .with_hint("Declare it with SCROLL option to enable backward scan."))
    }

    /// PortalRunSelect: up to `count` rows (FETCH_ALL = all) in
    /// `direction`; returns how many there were.
    fn run_select(&mut self, direction: Direction, count: i64, dest: &mut Option<Vec<Row>>) -> PgResult<u64> {
        let n = self.rows.len();
        let all = count == FETCH_ALL;
        let want = if all { usize::MAX } else { count.max(0) as usize };
        let mut got = 0usize;
        match direction {
            Direction::Forward => {
                if self.at_end() || want == 0 {
                    return Ok(0);
                }
                while got < want && self.pos + got < n {
                    if let Some(out) = dest.as_mut() {
                        out.push(self.rows[self.pos + got].clone());
                    }
                    got += 1;
                }
                if got < want {
                    if let Some(e) = &self.error {
                        return Err(e.clone());
                    }
                    self.pos = n + 1;
                } else {
                    self.pos += got;
                }
            }
            Direction::Backward => {
                self.check_scroll()?;
                if self.pos == 0 || want == 0 {
                    return Ok(0);
                }
                while got < want && self.pos - got > 1 {
                    if let Some(out) = dest.as_mut() {
                        out.push(self.rows[self.pos - got - 2].clone());
                    }
                    got += 1;
                }
                self.pos = if got < want { 0 } else { self.pos - got };
            }
        }
        Ok(got as u64)
    }
}

// ---------------------------------------------------------------- CLOSE

/// CLOSE name / CLOSE ALL.
pub fn close(s: &mut SqlSession, c: &pb::ClosePortalStmt) -> PgResult<UtilityResult> {
    let mut cursors = s.cursors.borrow_mut();
    // CLOSE ALL leaves the name NULL, which arrives here empty ("" itself
    // is no identifier PostgreSQL's grammar accepts).
    if c.portalname.is_empty() {
        cursors.open.clear();
        return Ok(UtilityResult { tag: "CLOSE CURSOR ALL".into(), rows: None });
    }
    if cursors.open.remove(&c.portalname).is_none() {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("cursor \"{}\" does not exist", c.portalname)));
    }
    Ok(UtilityResult { tag: "CLOSE CURSOR".into(), rows: None })
}

// ---------------------------------------------------------------- cursors of procedural code

/// Opens a cursor over rows procedural code already computed (SPI's
/// cursor_open): named as SQL cursors are, so FETCH in SQL reads it too.
/// `name` None picks an unused "<unnamed portal N>".
pub fn open_materialized(
    s: &SqlSession,
    name: Option<&str>,
    statement: &str,
    columns: &[(String, SqlType)],
    rows: Vec<Row>,
    scrollable: bool,
) -> PgResult<String> {
    let mut cursors = s.cursors.borrow_mut();
    let name = match name {
        Some(n) => {
            if cursors.open.contains_key(n) {
                return Err(PgError::new(sqlstate::DUPLICATE_CURSOR, format!("cursor \"{n}\" already exists")));
            }
            n.to_string()
        }
        None => (1..).map(|i| format!("<unnamed portal {i}>")).find(|n| !cursors.open.contains_key(n)).expect("some name is free"),
    };
    let cursor = Cursor {
        statement: statement.trim().to_string(),
        columns: columns.iter().map(|(n, t)| OutputColumn { name: n.clone(), ty: *t, origin: None }).collect(),
        rows,
        error: None,
        scrollable,
        holdable: false,
        creation_time: s.stmt_start.get(),
        pos: 0,
        depth: Some(s.savepoint_depth()),
    };
    cursors.open.insert(name.clone(), cursor);
    Ok(name)
}

/// FETCH / MOVE on a cursor for procedural code.
pub fn fetch_materialized(s: &SqlSession, name: &str, direction: crate::procedural::FetchDirection, fetch: bool) -> PgResult<crate::procedural::SpiResult> {
    use crate::procedural::FetchDirection as D;
    let (dir, count) = match direction {
        D::Next => (pb::FetchDirection::FetchForward, 1),
        D::Prior => (pb::FetchDirection::FetchBackward, 1),
        D::First => (pb::FetchDirection::FetchAbsolute, 1),
        D::Last => (pb::FetchDirection::FetchAbsolute, -1),
        D::Absolute(n) => (pb::FetchDirection::FetchAbsolute, n),
        D::Relative(n) => (pb::FetchDirection::FetchRelative, n),
        D::Forward(n) => (pb::FetchDirection::FetchForward, n),
        D::Backward(n) => (pb::FetchDirection::FetchBackward, n),
        D::ForwardAll => (pb::FetchDirection::FetchForward, FETCH_ALL),
        D::BackwardAll => (pb::FetchDirection::FetchBackward, FETCH_ALL),
    };
    let mut cursors = s.cursors.borrow_mut();
    let cursor = cursors.open.get_mut(name).ok_or_else(|| PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("cursor \"{name}\" does not exist")))?;
    let mut out = if fetch { Some(Vec::new()) } else { None };
    let n = cursor.run_fetch(dir as i32, count, &mut out)?;
    let rows = out.unwrap_or_default();
    Ok(crate::procedural::SpiResult {
        columns: cursor.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        rows,
        processed: n,
        tag: format!("{} {n}", if fetch { "FETCH" } else { "MOVE" }),
    })
}

/// CLOSE of one cursor by procedural code.
pub fn close_by_name(s: &SqlSession, name: &str) -> PgResult<()> {
    if s.cursors.borrow_mut().open.remove(name).is_none() {
        return Err(PgError::new(sqlstate::INVALID_CURSOR_NAME, format!("cursor \"{name}\" does not exist")));
    }
    Ok(())
}
