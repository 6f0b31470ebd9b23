//! The executor: runs plans by pulling rows through a tree of nodes
//! (PostgreSQL's executor, Volcano style).
//!
//! A node's `next` returns its next row or None when done. Nodes own copies
//! of their plan's expressions, so a node tree can outlive the statement's
//! planning (portals are suspended and resumed across protocol messages).

mod agg;
pub mod eval;
pub mod fast;
pub mod gin;
mod join;
mod modify;
mod nodes;
mod sort;
mod spill;
mod user_agg;
pub mod syscols;
pub mod table;
pub mod trigger;
mod window;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use tusk_storage::Txn;
use tusk_types::{Datum, PgResult};

use crate::catalog::builtin::Builtins;
use crate::catalog::{builtins, DbCatalog};
use crate::functions::Env;
use crate::plan::Plan;

pub use eval::{eval, eval_pred};
pub use nodes::compile_for as nodes_compile;
pub use modify::{check_deferred, ModifyCounts, RowInserter};

pub type Row = Vec<Datum>;

/// Results of uncorrelated subplans, computed once per statement.
#[derive(Clone, Debug)]
pub enum SubPlanCache {
    Exists(bool),
    Value(Datum),
    Rows(Vec<Datum>),
    /// The rows of an `= ANY` subquery as a hash set of its non-NULL values.
    Hashed { set: std::sync::Arc<rustc_hash::FxHashSet<spill::HashKey>>, has_null: bool, empty: bool },
}

/// Statement-wide mutable state shared by all nodes.
#[derive(Default)]
pub struct StmtState {
    pub subplans: RefCell<HashMap<usize, SubPlanCache>>,
    /// Results of cacheable correlated subplans, by subplan id and then by
    /// their parameter values (and tested value).
    pub correlated: RefCell<HashMap<usize, rustc_hash::FxHashMap<spill::HashKey, Datum>>>,
    /// Rows of the previous round of each running recursive union, by id.
    pub worktables: RefCell<HashMap<usize, Rc<Vec<Row>>>>,
    /// Rows processed by the top Modify node (for the command tag).
    pub modified: std::cell::Cell<u64>,
    /// EXPLAIN ANALYZE: what each plan node did, keyed by the node's
    /// address in the plan (stable while the statement runs).
    pub instrument: Option<RefCell<HashMap<usize, NodeStats>>>,
    /// EXPLAIN ANALYZE (TIMING OFF) counts rows without reading the clock.
    pub instrument_timing: bool,
}

/// EXPLAIN ANALYZE's counters for one plan node, over all its runs.
#[derive(Clone, Debug, Default)]
pub struct NodeStats {
    /// How many times the node was started (built).
    pub loops: u64,
    pub rows: u64,
    /// Seconds spent inside the node (children included) until its first
    /// row, and in all, summed over loops.
    pub startup_secs: f64,
    pub total_secs: f64,
    /// The node's own report (`Node::explain_info`), summed over loops
    /// where it is a count.
    pub info: Vec<(&'static str, String)>,
}

/// Adds one loop's report to the node's: counts add up, other values
/// (a sort's method) keep the latest.
fn merge_info(into: &mut Vec<(&'static str, String)>, from: Vec<(&'static str, String)>) {
    for (k, v) in from {
        match into.iter_mut().find(|(key, _)| *key == k) {
            Some((_, old)) => match (old.parse::<u64>(), v.parse::<u64>()) {
                (Ok(a), Ok(b)) => *old = (a + b).to_string(),
                _ => *old = v,
            },
            None => into.push((k, v)),
        }
    }
}

/// Counts a node's rows and time for EXPLAIN ANALYZE.
struct Instrumented {
    inner: Box<dyn Node>,
    key: usize,
    /// Time spent in this loop so far, and whether a row came out yet.
    elapsed: f64,
    started: bool,
}

impl Node for Instrumented {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        let t0 = cx.state.instrument_timing.then(std::time::Instant::now);
        let r = self.inner.next(cx)?;
        let Some(ins) = &cx.state.instrument else { return Ok(r) };
        let mut map = ins.borrow_mut();
        let st = map.entry(self.key).or_default();
        if let Some(t0) = t0 {
            let dt = t0.elapsed().as_secs_f64();
            self.elapsed += dt;
            st.total_secs += dt;
        }
        if !self.started {
            self.started = true;
            st.startup_secs += self.elapsed;
        }
        match r {
            Some(_) => st.rows += 1,
            None => merge_info(&mut st.info, self.inner.explain_info()),
        }
        Ok(r)
    }
}

/// What every node sees while running.
#[derive(Clone, Copy)]
pub struct ExecCx<'a> {
    pub txn: &'a Txn,
    pub env: &'a dyn Env,
    pub catalog: &'a DbCatalog,
    /// `$n` values.
    pub params: &'a [Datum],
    /// Values passed into the current subplan by its enclosing plan.
    pub outer: &'a [Datum],
    pub state: &'a StmtState,
    pub work_mem_bytes: usize,
}

impl<'a> ExecCx<'a> {
    pub fn with_outer<'b>(&'b self, outer: &'b [Datum]) -> ExecCx<'b> {
        ExecCx { outer, ..*self }
    }

    pub fn catalog_builtins(&self) -> &'static Builtins {
        builtins()
    }

    /// Cancellation / statement timeout check, called from loops.
    #[inline]
    pub fn check(&self) -> PgResult<()> {
        self.txn.interrupt().check()
    }
}

/// A running plan node.
pub trait Node {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>>;

    /// EXPLAIN ANALYZE: what the node did beyond its rows ("Sort Method",
    /// "Rows Removed by Filter"), read when it finishes.
    fn explain_info(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// Builds the node tree for a plan.
pub fn build(plan: &Plan, cx: &ExecCx) -> PgResult<Box<dyn Node>> {
    let node = build_node(plan, cx)?;
    if let Some(ins) = &cx.state.instrument {
        let key = plan as *const Plan as usize;
        ins.borrow_mut().entry(key).or_default().loops += 1;
        return Ok(Box::new(Instrumented { inner: node, key, elapsed: 0.0, started: false }));
    }
    Ok(node)
}

fn build_node(plan: &Plan, cx: &ExecCx) -> PgResult<Box<dyn Node>> {
    use nodes::*;
    crate::stack::check()?;
    Ok(match plan {
        Plan::Result { exprs, filter } => Box::new(ResultNode::new(exprs.clone(), filter.clone())),
        Plan::Scan { rel, method, filter, with_key, reverse, columns, system, .. } => {
            let mut scan = ScanNode::new(rel.clone(), method.clone(), filter.clone(), *with_key, *reverse, columns.clone(), cx)?;
            scan.system_columns = *system;
            Box::new(scan)
        }
        Plan::Values { rows, .. } => Box::new(ValuesNode::new(rows.clone())),
        Plan::Function { call, ordinality, expand_record, .. } => Box::new(FunctionNode::new(call.clone(), *ordinality, *expand_record)),
        Plan::Filter { input, predicate } => Box::new(FilterNode { input: build(input, cx)?, predicate: predicate.clone(), removed: 0 }),
        Plan::Project { input, exprs } => Box::new(ProjectNode { input: build(input, cx)?, exprs: exprs.clone() }),
        Plan::ProjectSet { input, exprs, input_width } => Box::new(ProjectSetNode::new(build(input, cx)?, exprs.clone(), *input_width)),
        Plan::NestedLoop { left, right, kind, predicate, left_width, right_width } => Box::new(join::NestedLoopNode::new(
            build(left, cx)?,
            build(right, cx)?,
            *kind,
            predicate.clone(),
            *left_width,
            *right_width,
        )),
        Plan::LateralLoop { left, right, args, kind, predicate, right_width } => Box::new(join::LateralNode::new(
            build(left, cx)?,
            right.clone(),
            args.clone(),
            *kind,
            predicate.clone(),
            *right_width,
        )),
        Plan::HashJoin { left, right, kind, left_keys, right_keys, predicate, left_width, right_width } => {
            Box::new(join::HashJoinNode::new(
                build(left, cx)?,
                build(right, cx)?,
                *kind,
                left_keys.clone(),
                right_keys.clone(),
                predicate.clone(),
                *left_width,
                *right_width,
            ))
        }
        Plan::Agg { input, group, aggs } => Box::new(agg::AggNode::new(build(input, cx)?, group.clone(), aggs.clone())),
        Plan::WindowAgg { input, partition, order, funcs } => {
            Box::new(window::WindowAggNode::new(build(input, cx)?, partition.clone(), order.clone(), funcs.clone()))
        }
        Plan::Sort { input, keys } => Box::new(sort::SortNode::new(build(input, cx)?, keys.clone())),
        Plan::Limit { input, limit, offset, ties } => Box::new(LimitNode::new(build(input, cx)?, limit.clone(), offset.clone(), ties.clone())),
        Plan::Distinct { input, on } => Box::new(DistinctNode::new(build(input, cx)?, on.clone())),
        Plan::SetOp { kind, all, left, right } => Box::new(SetOpNode::new(*kind, *all, build(left, cx)?, build(right, cx)?)),
        Plan::Append { inputs, .. } => {
            let mut built = Vec::with_capacity(inputs.len());
            for p in inputs {
                built.push(build(p, cx)?);
            }
            Box::new(AppendNode { inputs: built, current: 0 })
        }
        Plan::RecursiveUnion { base, recursive, all, id, .. } => {
            Box::new(RecursiveUnionNode::new(build(base, cx)?, (**recursive).clone(), *all, *id))
        }
        Plan::WorkTable { id, .. } => Box::new(WorkTableNode { id: *id, rows: None, pos: 0 }),
        Plan::NamedTuplestore { name, .. } => Box::new(NamedTuplestoreNode { name: name.clone(), rows: None, pos: 0 }),
        Plan::Materialize { input } => Box::new(MaterializeNode { input: Some(build(input, cx)?), rows: Vec::new(), pos: 0 }),
        Plan::Modify { kind, rel, input, update_cols, on_conflict, returning, returning_input, view_checks, old_width, recheck, inherited, returning_system } => {
            let mut node = modify::ModifyNode::new(
                *kind,
                rel.clone(),
                build(input, cx)?,
                update_cols.clone(),
                on_conflict.clone(),
                returning.clone(),
                *returning_input,
                view_checks.clone(),
                *old_width,
                recheck.clone(),
            )?;
            node.inherit(inherited.clone(), *returning_system);
            Box::new(node)
        }
        Plan::LockRows { input, rels, exclusive, wait } => {
            Box::new(LockRowsNode { input: build(input, cx)?, rels: rels.clone(), exclusive: *exclusive, wait: *wait })
        }
    })
}
