//! The planner: analyzed `Query` to executable `Plan` (PostgreSQL's
//! optimizer, much simplified).
//!
//! For each query level it plans the FROM tree (pushing WHERE conditions
//! down to the scans and joins that can evaluate them, choosing index
//! ranges and hash joins), then grouping and aggregation, the target list,
//! DISTINCT, ORDER BY and LIMIT. Subqueries in expressions become
//! `SubPlan`s; their references to enclosing queries become parameters the
//! enclosing plan passes in (`OuterParam`), as PostgreSQL's PARAM_EXEC.

mod access;
mod expr_index;
pub use expr_index::expression_keys;
mod gin;
pub mod inline;
mod sublink;

use std::collections::HashMap;
use std::sync::Arc;

use tusk_types::oid;
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use crate::catalog::builtin::Builtins;
use crate::catalog::{builtins, DbCatalog};
use crate::catalog::Relation;
use crate::expr::{AggCall, BoolOp, Expr, SubPlan, SystemColumn, Var, WindowCall};
use crate::plan::*;
use crate::plan::SortKey;
use crate::query::*;

/// Where each range table entry's columns sit in a node's row.
#[derive(Clone, Debug, Default)]
struct Layout {
    /// rte index → (offset, number of columns, offset of the storage key if scanned with one)
    entries: HashMap<usize, (usize, usize, Option<usize>)>,
    /// rte index → offset of its system columns (`SystemColumn::ALL`), for
    /// the table scans that provide them.
    sys: HashMap<usize, usize>,
    width: usize,
}

impl Layout {
    fn single(rte: usize, ncols: usize, with_key: bool) -> Layout {
        let mut l = Layout::default();
        l.entries.insert(rte, (0, ncols, if with_key { Some(ncols) } else { None }));
        l.width = ncols + with_key as usize;
        l
    }

    /// A table scan's row: its columns, the row key (`with_key`), then the
    /// system columns (`sys`).
    fn scan(rte: usize, ncols: usize, with_key: bool, sys: bool) -> Layout {
        let mut l = Layout::single(rte, ncols, with_key);
        if sys {
            l.sys.insert(rte, l.width);
            l.width += SystemColumn::ALL.len();
        }
        l
    }

    fn concat(left: &Layout, right: &Layout) -> Layout {
        let mut l = left.clone();
        for (&r, &(off, n, key)) in &right.entries {
            l.entries.insert(r, (off + left.width, n, key.map(|k| k + left.width)));
        }
        for (&r, &off) in &right.sys {
            l.sys.insert(r, off + left.width);
        }
        l.width = left.width + right.width;
        l
    }

    fn rtes(&self) -> Vec<usize> {
        self.entries.keys().copied().collect()
    }
}

/// One query level being planned.
struct LevelInfo {
    /// Inline levels (FROM subqueries, recursive terms) run inside the
    /// enclosing plan and share its parameters; SubPlan levels get their own.
    inline: bool,
    /// For SubPlan levels: the enclosing-level expressions whose values are
    /// passed in, by OuterParam index.
    params: Vec<Expr>,
    ctes: Vec<Cte>,
}

pub struct Planner<'a> {
    b: &'static Builtins,
    pub catalog: &'a DbCatalog,
    levels: Vec<LevelInfo>,
    subplans: usize,
    /// (absolute level, cte index) → work table id of the recursive union being planned.
    worktables: HashMap<(usize, usize), usize>,
    next_worktable: usize,
    /// Tables the plan reads or writes (scans, DML targets), for the
    /// relation locks the statement takes.
    relations: Vec<tusk_types::Oid>,
    /// Whether the statement only reads (a SELECT without data-modifying
    /// WITH queries), so that a correlated subplan sees the same data
    /// each time it runs and may reuse results.
    cacheable_subplans: bool,
}

/// The range table entries of a query and of every query inside it
/// (subqueries in FROM, WITH queries, sublinks), as PostgreSQL's planner
/// flattens them into one final range table.
fn range_table_entries(q: &Query) -> usize {
    let mut n = q.rtable.len();
    for rte in &q.rtable {
        if let RteKind::Subquery(sq) = &rte.kind {
            n += range_table_entries(sq);
        }
    }
    for c in &q.ctes {
        n += range_table_entries(&c.query);
    }
    let mut visit = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::SubLink { query, .. } = x {
                n += range_table_entries(query);
            }
        })
    };
    q.targets.iter().map(|t| &t.expr).chain(q.quals.iter()).chain(q.having.iter()).for_each(&mut visit);
    n
}

fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bool { op: BoolOp::And, args } => {
            for a in args {
                conjuncts(a, out);
            }
        }
        other => out.push(other),
    }
}

fn and_all(mut v: Vec<Expr>) -> Option<Expr> {
    match v.len() {
        0 => None,
        1 => v.pop(),
        _ => Some(Expr::Bool { op: BoolOp::And, args: v }),
    }
}

/// Level-0 range table entries an expression references (including inside sublinks).
fn referenced_rtes(e: &Expr, depth: u32, out: &mut Vec<usize>) {
    e.walk(&mut |x| match x {
        Expr::Var(v) if v.levels_up == depth => {
            if !out.contains(&v.rte) {
                out.push(v.rte)
            }
        }
        Expr::SubLink { query, .. } => query_outer_refs(query, depth + 1, out),
        _ => {}
    });
}

fn query_outer_refs(q: &Query, depth: u32, out: &mut Vec<usize>) {
    let mut visit = |e: &Expr| referenced_rtes(e, depth, out);
    for t in &q.targets {
        visit(&t.expr);
    }
    if let Some(x) = &q.quals {
        visit(x);
    }
    if let Some(x) = &q.having {
        visit(x);
    }
    for g in &q.group_by {
        visit(g);
    }
    for f in &q.from {
        from_item_refs(f, depth, out);
    }
    for rte in &q.rtable {
        match &rte.kind {
            RteKind::Subquery(sq) => query_outer_refs(sq, depth + 1, out),
            RteKind::Values(rows) => {
                for r in rows {
                    for e in r {
                        referenced_rtes(e, depth, out);
                    }
                }
            }
            RteKind::Function { call, .. } => referenced_rtes(call, depth, out),
            _ => {}
        }
    }
}

fn from_item_refs(f: &FromItem, depth: u32, out: &mut Vec<usize>) {
    if let FromItem::Join { left, right, quals, .. } = f {
        from_item_refs(left, depth, out);
        from_item_refs(right, depth, out);
        if let Some(q) = quals {
            referenced_rtes(q, depth, out);
        }
    }
}

fn rtes_of(f: &FromItem, out: &mut Vec<usize>) {
    match f {
        FromItem::Rte(i) => out.push(*i),
        FromItem::Join { left, right, .. } => {
            rtes_of(left, out);
            rtes_of(right, out);
        }
    }
}

impl<'a> Planner<'a> {
    pub fn new(catalog: &'a DbCatalog) -> Planner<'a> {
        Planner {
            b: builtins(),
            catalog,
            levels: Vec::new(),
            subplans: 0,
            worktables: HashMap::new(),
            next_worktable: 0,
            relations: Vec::new(),
            cacheable_subplans: false,
        }
    }

    /// Plans a whole statement.
    pub fn plan_statement(&mut self, q: &Query) -> PgResult<PlannedQuery> {
        self.cacheable_subplans = q.command == CommandKind::Select && !q.row_lock && !q.ctes.iter().any(|c| c.modifying);
        self.levels.push(LevelInfo { inline: false, params: Vec::new(), ctes: q.ctes.clone() });
        let pre_modify = self.plan_modifying_ctes(q);
        let result = pre_modify.and_then(|pre| {
            let body = match q.command {
                CommandKind::Select => self.plan_select_body(q),
                _ => self.plan_modify(q),
            };
            body.map(|b| (b, pre))
        });
        self.levels.pop();
        let (plan, pre_modify) = result?;
        let columns = if q.command == CommandKind::Select {
            q.output().map(|t| OutputColumn { name: t.name.clone(), ty: t.expr.ty(), origin: t.origin }).collect()
        } else {
            q.returning.iter().map(|t| OutputColumn { name: t.name.clone(), ty: t.expr.ty(), origin: t.origin }).collect()
        };
        let mut pq = PlannedQuery::new(plan, columns, self.subplans);
        pq.range_table_entries = range_table_entries(q);
        pq.relations = std::mem::take(&mut self.relations);
        pq.row_lock = q.row_lock;
        pq.pre_modify = pre_modify;
        Ok(pq)
    }

    /// Plans the statement's data-modifying WITH queries (which exist only
    /// at the top level); references to them read their work tables.
    fn plan_modifying_ctes(&mut self, q: &Query) -> PgResult<Vec<(usize, Plan)>> {
        let mut out = Vec::new();
        for (index, cte) in q.ctes.iter().enumerate() {
            if !cte.modifying {
                continue;
            }
            let id = self.next_worktable;
            self.next_worktable += 1;
            self.levels.push(LevelInfo { inline: false, params: Vec::new(), ctes: cte.query.ctes.clone() });
            let plan = self.plan_modify(&cte.query);
            self.levels.pop();
            self.worktables.insert((self.depth(), index), id);
            out.push((id, plan?));
        }
        Ok(out)
    }

    fn note_relation(&mut self, rel: tusk_types::Oid) {
        if !self.relations.contains(&rel) {
            self.relations.push(rel);
        }
    }

    fn depth(&self) -> usize {
        self.levels.len() - 1
    }

    // ---------------------------------------------------------------- expressions

    /// Converts an expression of the current level for evaluation over rows
    /// laid out as `layout`: Vars become Columns, outer Vars become
    /// OuterParams, sublinks become subplans.
    fn set_refs(&mut self, e: Expr, layout: &Layout) -> PgResult<Expr> {
        self.set_refs_with(e, &mut |_, v| {
            let (off, n, key) = layout.entries.get(&v.rte).copied().ok_or_else(|| {
                PgError::internal(format!("column of range table entry {} is not available here", v.rte))
            })?;
            if v.col == usize::MAX {
                return Ok(Expr::Column(key.ok_or_else(|| PgError::internal("row key not scanned"))?, SqlType::new(oid::BYTEA)));
            }
            if let Some(sc) = SystemColumn::of_var_col(v.col) {
                let at = layout.sys.get(&v.rte).ok_or_else(|| PgError::internal("system columns not scanned"))?;
                return Ok(Expr::Column(at + sc.index(), v.ty));
            }
            debug_assert!(v.col < n);
            Ok(Expr::Column(off + v.col, v.ty))
        })
    }

    /// `set_refs` with a custom mapping for level-0 Vars (grouped queries).
    fn set_refs_with(&mut self, e: Expr, local: &mut dyn FnMut(&mut Self, &Var) -> PgResult<Expr>) -> PgResult<Expr> {
        crate::stack::check()?;
        match e {
            Expr::Var(v) if v.levels_up == 0 => local(self, &v),
            Expr::Var(v) => self.outer_ref(v),
            Expr::Agg(a) if a.levels_up > 0 => Err(PgError::unsupported("an outer-level aggregate in this position")),
            Expr::SubLink { kind, test, op, query, ty } => {
                let test = match test {
                    Some(t) => Some(Box::new(self.set_refs_with(*t, local)?)),
                    None => None,
                };
                let (plan, params) = self.plan_subquery(&query, false)?;
                let mut args = Vec::with_capacity(params.len());
                for p in params {
                    args.push(self.set_refs_with(p, local)?);
                }
                self.subplans += 1;
                let cache = self.cacheable_subplans && !args.is_empty() && !sublink::query_volatile(&query);
                Ok(Expr::SubPlan(Box::new(SubPlan { kind, plan: Arc::new(plan), args, test, op, ty, id: self.subplans - 1, cache })))
            }
            other => other.try_map_children(&mut |c| self.set_refs_with(c, local)),
        }
    }

    /// A reference to an enclosing query's column.
    fn outer_ref(&mut self, v: Var) -> PgResult<Expr> {
        let mut level = self.depth();
        let mut up = v.levels_up;
        // Inline levels pass references straight through to their parent.
        while self.levels[level].inline {
            if level == 0 {
                break;
            }
            level -= 1;
            up -= 1;
            if up == 0 {
                return Err(PgError::unsupported("LATERAL references to earlier FROM items"));
            }
        }
        if level == 0 && up > 0 && self.levels[0].inline {
            return Err(PgError::internal("outer reference beyond the statement"));
        }
        let parent_var = Expr::Var(Var { levels_up: up - 1, ..v.clone() });
        let params = &mut self.levels[level].params;
        let idx = match params.iter().position(|p| *p == parent_var) {
            Some(i) => i,
            None => {
                params.push(parent_var);
                params.len() - 1
            }
        };
        Ok(Expr::OuterParam(idx, v.ty))
    }

    /// Plans a subquery as its own level; returns the plan and, for SubPlan
    /// levels, the enclosing-level expressions to pass as parameters.
    fn plan_subquery(&mut self, q: &Query, inline: bool) -> PgResult<(Plan, Vec<Expr>)> {
        crate::stack::check()?;
        self.levels.push(LevelInfo { inline, params: Vec::new(), ctes: q.ctes.clone() });
        let plan = self.plan_select_body(q);
        let level = self.levels.pop().expect("pushed above");
        let plan = plan?;
        // Drop junk columns: a subquery yields only its visible outputs.
        let visible = q.targets.iter().filter(|t| !t.junk).count();
        let plan = if visible < q.targets.len() {
            Plan::Project { input: plan.boxed(), exprs: (0..visible).map(|i| Expr::Column(i, q.targets[i].expr.ty())).collect() }
        } else {
            plan
        };
        Ok((plan, level.params))
    }

    // ---------------------------------------------------------------- SELECT

    /// Plans a SELECT; the plan's rows are the query's targets (junk included, last).
    fn plan_select_body(&mut self, q: &Query) -> PgResult<Plan> {
        if let Some(tree) = &q.set_op {
            let plan = self.plan_setop(q, tree)?;
            let width = q.targets.len();
            return self.plan_order_limit(q, plan, width);
        }
        let mut quals = Vec::new();
        if let Some(w) = &q.quals {
            conjuncts(w.clone(), &mut quals);
        }
        let (mut plan, layout) = self.plan_from(q, &q.from, quals, q.row_lock)?;
        // FOR UPDATE: the row keys of the locked tables ride along after the
        // targets, to LockRows above the ORDER BY and below the LIMIT (so
        // that only rows returned get locked, as in PostgreSQL).
        let mut lock_keys: Vec<(Arc<Relation>, usize)> = Vec::new();
        if q.row_lock {
            let mut entries: Vec<_> = layout.entries.iter().collect();
            entries.sort_by_key(|(rte, _)| **rte);
            for (&rte, &(_, _, key)) in entries {
                if let (RteKind::Relation(rel), Some(k)) = (&q.rtable[rte].kind, key) {
                    lock_keys.push((rel.clone(), k));
                }
            }
        }
        // Aggregation.
        let grouped = q.has_aggs || !q.group_by.is_empty() || q.having.is_some();
        let targets: Vec<Expr>;
        let input_width;
        if grouped {
            // Each aggregate call is numbered, and replaced in the targets
            // and HAVING by a placeholder Column of its number: calls are
            // matched up by position, not by comparing expressions (one
            // whose arguments hold a subquery never equals even itself).
            let mut aggs: Vec<AggCall> = Vec::new();
            let numbered_targets: Vec<Expr> = q.targets.iter().map(|t| number_aggs(t.expr.clone(), &mut aggs)).collect();
            let numbered_having = q.having.as_ref().map(|h| number_aggs(h.clone(), &mut aggs));
            // Columns functionally dependent on a grouped primary key are
            // grouped too (the analyzer allowed them); adding them to the
            // key does not change the groups.
            let mut groups = q.group_by.clone();
            let mut extra = Vec::new();
            for t in &q.targets {
                ungrouped_vars(&t.expr, &groups, 0, &mut extra);
            }
            if let Some(h) = &q.having {
                ungrouped_vars(h, &groups, 0, &mut extra);
            }
            for v in extra {
                if !groups.contains(&v) {
                    groups.push(v);
                }
            }
            let mut group = Vec::with_capacity(groups.len());
            for g in &groups {
                group.push(self.set_refs(g.clone(), &layout)?);
            }
            let mut planned_aggs = Vec::with_capacity(aggs.len());
            for a in &aggs {
                let mut pa = a.clone();
                pa.args = a.args.iter().map(|x| self.set_refs(x.clone(), &layout)).collect::<PgResult<_>>()?;
                pa.filter = match &a.filter {
                    Some(f) => Some(Box::new(self.set_refs((**f).clone(), &layout)?)),
                    None => None,
                };
                pa.order_by = a.order_by.iter().map(|(e, d, n)| Ok((self.set_refs(e.clone(), &layout)?, *d, *n))).collect::<PgResult<_>>()?;
                planned_aggs.push(pa);
            }
            plan = Plan::Agg { input: plan.boxed(), group, aggs: planned_aggs };
            let ng = groups.len();
            let map = |p: &mut Self, e: Expr| -> PgResult<Expr> { p.set_refs_grouped(e, &groups, &aggs, ng, &layout) };
            if let Some(h) = numbered_having {
                let pred = map(self, h)?;
                plan = Plan::Filter { input: plan.boxed(), predicate: pred };
            }
            targets = numbered_targets.into_iter().map(|t| map(self, t)).collect::<PgResult<_>>()?;
            input_width = ng + aggs.len();
        } else {
            targets = q.targets.iter().map(|t| self.set_refs(t.expr.clone(), &layout)).collect::<PgResult<_>>()?;
            input_width = layout.width;
        }
        let (windowed, mut targets) = plan_windows(plan, targets, input_width);
        plan = windowed;
        let mut locks = Vec::new();
        for (i, (rel, k)) in lock_keys.into_iter().enumerate() {
            targets.push(Expr::Column(k, SqlType::new(oid::BYTEA)));
            locks.push((rel, q.targets.len() + i));
        }
        let has_srf = targets.iter().any(|t| t.any(&mut |x| matches!(x, Expr::Func { func, .. } if func.imp.is_set())));
        plan = if has_srf {
            Plan::ProjectSet { input: plan.boxed(), exprs: targets, input_width }
        } else {
            Plan::Project { input: plan.boxed(), exprs: targets }
        };
        let width = q.targets.len();
        let plan = self.plan_order_limit_locking(q, plan, width, locks)?;
        Ok(plan)
    }

    /// Post-aggregation references: grouped expressions and aggregates
    /// become columns of the Agg node's output. Aggregate calls arrive as
    /// placeholders `Column(j)` for `aggs[j]` (see `number_aggs`).
    fn set_refs_grouped(&mut self, e: Expr, groups: &[Expr], aggs: &[AggCall], ng: usize, from_layout: &Layout) -> PgResult<Expr> {
        if let Some(i) = groups.iter().position(|g| *g == e) {
            return Ok(Expr::Column(i, e.ty()));
        }
        match e {
            Expr::Column(j, ty) if j < aggs.len() => Ok(Expr::Column(ng + j, ty)),
            Expr::Var(v) if v.levels_up == 0 && v.rte == OUTER_AGG_RTE => Ok(Expr::Column(ng + v.col, v.ty)),
            Expr::Agg(a) => {
                let j = aggs.iter().position(|x| *x == *a).ok_or_else(|| PgError::internal("aggregate not collected"))?;
                Ok(Expr::Column(ng + j, a.ty))
            }
            Expr::Var(v) if v.levels_up == 0 => {
                // Functionally dependent on a grouped primary key: take it from
                // the group's first row, which the Agg node passes along as
                // an extra "any value" aggregate.
                let _ = from_layout;
                Err(PgError::new(
                    sqlstate::GROUPING_ERROR,
                    "column must appear in the GROUP BY clause or be used in an aggregate function",
                ))
            }
            Expr::Var(v) => self.outer_ref(v),
            Expr::SubLink { kind, test, op, query, ty } => {
                let test = match test {
                    Some(t) => Some(Box::new(self.set_refs_grouped(*t, groups, aggs, ng, from_layout)?)),
                    None => None,
                };
                let (plan, params) = self.plan_subquery(&query, false)?;
                let mut args = Vec::new();
                for p in params {
                    args.push(self.set_refs_grouped(p, groups, aggs, ng, from_layout)?);
                }
                self.subplans += 1;
                let cache = self.cacheable_subplans && !args.is_empty() && !sublink::query_volatile(&query);
                Ok(Expr::SubPlan(Box::new(SubPlan { kind, plan: Arc::new(plan), args, test, op, ty, id: self.subplans - 1, cache })))
            }
            other => other.try_map_children(&mut |c| self.set_refs_grouped(c, groups, aggs, ng, from_layout)),
        }
    }

    fn plan_order_limit(&mut self, q: &Query, plan: Plan, width: usize) -> PgResult<Plan> {
        self.plan_order_limit_locking(q, plan, width, Vec::new())
    }

    /// ORDER BY, DISTINCT and LIMIT; with `locks` (FOR UPDATE: tables and
    /// where their row keys are in the row, after the `width` targets),
    /// LockRows between the sort and the limit, and the keys dropped after.
    fn plan_order_limit_locking(&mut self, q: &Query, mut plan: Plan, width: usize, locks: Vec<(Arc<Relation>, usize)>) -> PgResult<Plan> {
        let col = |i: usize| Expr::Column(i, q.targets[i].expr.ty());
        let mut sort_keys: Vec<SortKey> =
            q.sort.iter().map(|k| SortKey { expr: col(k.target), descending: k.descending, nulls_first: k.nulls_first }).collect();
        match &q.distinct {
            Distinct::None => {
                if !sort_keys.is_empty() {
                    plan = Plan::Sort { input: plan.boxed(), keys: sort_keys };
                }
            }
            Distinct::All => {
                let visible = q.targets.iter().filter(|t| !t.junk).count();
                plan = Plan::Distinct { input: plan.boxed(), on: Some((0..visible).collect()) };
                if !sort_keys.is_empty() {
                    plan = Plan::Sort { input: plan.boxed(), keys: sort_keys };
                }
            }
            Distinct::On(on) => {
                // Sort by the DISTINCT ON keys first (if ORDER BY did not).
                for &t in on {
                    if !q.sort.iter().any(|k| k.target == t) {
                        sort_keys.push(SortKey { expr: col(t), descending: false, nulls_first: false });
                    }
                }
                plan = Plan::Sort { input: plan.boxed(), keys: sort_keys };
                plan = Plan::Distinct { input: plan.boxed(), on: Some(on.clone()) };
            }
        }
        let ties: Vec<SortKey> = if q.with_ties {
            q.sort.iter().map(|k| SortKey { expr: col(k.target), descending: k.descending, nulls_first: k.nulls_first }).collect()
        } else {
            Vec::new()
        };
        let locking = !locks.is_empty();
        if locking {
            plan = Plan::LockRows { input: plan.boxed(), rels: locks, exclusive: q.row_lock_exclusive, wait: q.row_lock_wait };
        }
        if q.limit.is_some() || q.offset.is_some() {
            let empty = Layout::default();
            let limit = match &q.limit {
                Some(l) => Some(self.set_refs(l.clone(), &empty)?),
                None => None,
            };
            let offset = match &q.offset {
                Some(o) => Some(self.set_refs(o.clone(), &empty)?),
                None => None,
            };
            plan = Plan::Limit { input: plan.boxed(), limit, offset, ties };
        }
        if locking {
            plan = Plan::Project { input: plan.boxed(), exprs: (0..width).map(|i| Expr::Column(i, q.targets[i].expr.ty())).collect() };
        }
        Ok(plan)
    }

    // ---------------------------------------------------------------- set operations

    fn plan_setop(&mut self, q: &Query, tree: &SetOpTree) -> PgResult<Plan> {
        match tree {
            SetOpTree::Leaf(rte) => match &q.rtable[*rte].kind {
                RteKind::Subquery(sq) => Ok(self.plan_subquery(sq, true)?.0),
                _ => Err(PgError::internal("set operation leaf is not a subquery")),
            },
            SetOpTree::Op { kind, all, left, right, .. } => {
                let l = self.plan_setop(q, left)?;
                let r = self.plan_setop(q, right)?;
                if *kind == SetOpKind::Union && *all {
                    let mut inputs = Vec::new();
                    for p in [l, r] {
                        match p {
                            Plan::Append { inputs: more, .. } => inputs.extend(more),
                            other => inputs.push(other),
                        }
                    }
                    return Ok(Plan::Append { inputs, label: None });
                }
                Ok(Plan::SetOp { kind: *kind, all: *all, left: l.boxed(), right: r.boxed() })
            }
        }
    }

    // ---------------------------------------------------------------- FROM

    /// Plans the FROM list with the WHERE conjuncts; returns the plan and its row layout.
    fn plan_from(&mut self, q: &Query, from: &[FromItem], quals: Vec<Expr>, with_keys: bool) -> PgResult<(Plan, Layout)> {
        if from.is_empty() {
            let filter = self.convert_all(quals, &Layout::default())?;
            return Ok((Plan::Result { exprs: vec![], filter }, Layout::default()));
        }
        // WHERE sublinks that can become semi (anti) joins are joined in
        // as soon as the FROM items they read are.
        let mut semi_joins: Vec<(Vec<usize>, sublink::SemiJoin)> = Vec::new();
        let mut rest = Vec::with_capacity(quals.len());
        let mut work: std::collections::VecDeque<Expr> = quals.into();
        let mut next_rte = q.rtable.len();
        while let Some(e) = work.pop_front() {
            match sublink::pull_up(&e, next_rte) {
                Some(sublink::PulledUp::Join(sj, more)) => {
                    next_rte += 1;
                    let mut refs = Vec::new();
                    for c in &sj.quals {
                        referenced_rtes(c, 0, &mut refs);
                    }
                    refs.retain(|r| *r != sj.rte);
                    semi_joins.push((refs, sj));
                    work.extend(more);
                }
                Some(sublink::PulledUp::Split(more)) => work.extend(more),
                None => rest.push(e),
            }
        }
        self.plan_from_joined(q, from, rest, semi_joins, with_keys)
    }

    /// Joins in the semi (anti) joins whose conditions read only FROM
    /// items already joined (`joined`).
    fn join_ready_semi_joins(
        &mut self,
        mut plan: Plan,
        layout: &Layout,
        joined: &[usize],
        semi_joins: &mut Vec<(Vec<usize>, sublink::SemiJoin)>,
    ) -> PgResult<Plan> {
        let mut i = 0;
        while i < semi_joins.len() {
            if !semi_joins[i].0.iter().all(|r| joined.contains(r)) {
                i += 1;
                continue;
            }
            let (_, sj) = semi_joins.remove(i);
            let (right, _) = self.plan_subquery(&sj.query, true)?;
            let rlayout = Layout::single(sj.rte, sj.width, false);
            plan = self.make_join(sj.kind, plan, layout.clone(), right, rlayout, sj.quals)?.0;
        }
        Ok(plan)
    }

    fn plan_from_joined(
        &mut self,
        q: &Query,
        from: &[FromItem],
        quals: Vec<Expr>,
        mut semi_joins: Vec<(Vec<usize>, sublink::SemiJoin)>,
        with_keys: bool,
    ) -> PgResult<(Plan, Layout)> {
        // Conjuncts referencing nothing at this level (constants, outer
        // references) can be checked anywhere; keep them for the top.
        let mut pending: Vec<(Vec<usize>, Expr)> = quals
            .into_iter()
            .map(|e| {
                let mut r = Vec::new();
                referenced_rtes(&e, 0, &mut r);
                (r, e)
            })
            .collect();
        // Plan each FROM item, pushing down conjuncts that only it needs.
        // LATERAL items (depending on earlier items) are planned as
        // parameterized plans and joined in FROM order.
        let mut items: Vec<(Item, Layout, Vec<usize>)> = Vec::new();
        let mut any_lateral = false;
        for f in from {
            let mut rtes = Vec::new();
            rtes_of(f, &mut rtes);
            let mine: Vec<Expr> = take_matching(&mut pending, |r| !r.is_empty() && r.iter().all(|x| rtes.contains(x)));
            if let FromItem::Rte(i) = f {
                if let Some((plan, args, l)) = self.plan_lateral_rte(q, *i)? {
                    any_lateral = true;
                    // Its own conditions apply after the join.
                    for m in mine {
                        let mut r = Vec::new();
                        referenced_rtes(&m, 0, &mut r);
                        pending.push((r, m));
                    }
                    items.push((Item::Lateral(plan, args), l, rtes));
                    continue;
                }
            }
            let (p, l) = self.plan_from_item(q, f, mine, with_keys)?;
            items.push((Item::Plain(p), l, rtes));
        }
        // Join the items: greedily add the next item connected to what is
        // joined so far by an equality, falling back to FROM order.
        let (first, mut layout, mut joined) = items.remove(0);
        let Item::Plain(mut plan) = first else { return Err(PgError::internal("LATERAL item first in FROM")) };
        plan = self.join_ready_semi_joins(plan, &layout, &joined, &mut semi_joins)?;
        while !items.is_empty() {
            let pick = if any_lateral {
                0
            } else {
                items
                    .iter()
                    .position(|(_, _, rtes)| {
                        pending.iter().any(|(refs, e)| {
                            is_equality(self.b, e)
                                && refs.iter().any(|r| rtes.contains(r))
                                && refs.iter().any(|r| joined.contains(r))
                                && refs.iter().all(|r| rtes.contains(r) || joined.contains(r))
                        })
                    })
                    .unwrap_or(0)
            };
            let (ritem, rlayout, rrtes) = items.remove(pick);
            let mut all = joined.clone();
            all.extend(rrtes.iter().copied());
            let join_quals = take_matching(&mut pending, |r| !r.is_empty() && r.iter().all(|x| all.contains(x)));
            let (p, l) = match ritem {
                Item::Plain(rplan) => self.make_join(JoinKind::Inner, plan, layout, rplan, rlayout, join_quals)?,
                Item::Lateral(rplan, args) => self.make_lateral_join(JoinKind::Inner, plan, layout, rplan, args, rlayout, join_quals)?,
            };
            plan = self.join_ready_semi_joins(p, &l, &all, &mut semi_joins)?;
            layout = l;
            joined = all;
        }
        if !semi_joins.is_empty() {
            return Err(PgError::internal("semi join over range table entries not in FROM"));
        }
        let rest: Vec<Expr> = pending.into_iter().map(|(_, e)| e).collect();
        if let Some(pred) = self.convert_all(rest, &layout)? {
            plan = Plan::Filter { input: plan.boxed(), predicate: pred };
        }
        Ok((plan, layout))
    }

    /// A FROM entry that references earlier entries of this level
    /// (LATERAL subqueries, functions with column arguments): its plan with
    /// parameters, and the current-level expressions that feed them.
    fn plan_lateral_rte(&mut self, q: &Query, idx: usize) -> PgResult<Option<(Arc<Plan>, Vec<Expr>, Layout)>> {
        let rte = &q.rtable[idx];
        let width = rte.col_names.len();
        match &rte.kind {
            RteKind::Subquery(sq) if rte.lateral => {
                let mut refs = Vec::new();
                query_outer_refs(sq, 1, &mut refs);
                if refs.is_empty() {
                    return Ok(None);
                }
                let (plan, params) = self.plan_subquery(sq, false)?;
                Ok(Some((Arc::new(plan), params, Layout::single(idx, width, false))))
            }
            RteKind::Function { call, ordinality, columns_from_record } => {
                let mut refs = Vec::new();
                referenced_rtes(call, 0, &mut refs);
                if refs.is_empty() {
                    return Ok(None);
                }
                // Every column reference in the call becomes a parameter.
                let mut args: Vec<Expr> = Vec::new();
                let call = call.clone().rewrite(&mut |e| match e {
                    Expr::Var(v) => {
                        let ty = v.ty;
                        let var = Expr::Var(v);
                        let k = match args.iter().position(|a| *a == var) {
                            Some(k) => k,
                            None => {
                                args.push(var);
                                args.len() - 1
                            }
                        };
                        Expr::OuterParam(k, ty)
                    }
                    other => other,
                });
                let expand = if *columns_from_record { width - *ordinality as usize } else { 0 };
                let plan = Plan::Function { call, ordinality: *ordinality, expand_record: expand, label: Label::of(rte) };
                Ok(Some((Arc::new(plan), args, Layout::single(idx, width, false))))
            }
            _ => Ok(None),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn make_lateral_join(
        &mut self,
        kind: JoinKind,
        lplan: Plan,
        llayout: Layout,
        rplan: Arc<Plan>,
        args: Vec<Expr>,
        rlayout: Layout,
        quals: Vec<Expr>,
    ) -> PgResult<(Plan, Layout)> {
        if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
            return Err(PgError::new(
                sqlstate::INVALID_COLUMN_REFERENCE,
                "invalid reference to FROM-clause entry for table",
            ));
        }
        let layout = Layout::concat(&llayout, &rlayout);
        let mut converted = Vec::with_capacity(args.len());
        for a in args {
            converted.push(self.set_refs(a, &llayout)?);
        }
        let predicate = self.convert_all(quals, &layout)?;
        let right_width = rlayout.width;
        Ok((Plan::LateralLoop { left: lplan.boxed(), right: rplan, args: converted, kind, predicate, right_width }, layout))
    }

    fn convert_all(&mut self, quals: Vec<Expr>, layout: &Layout) -> PgResult<Option<Expr>> {
        let mut out = Vec::with_capacity(quals.len());
        for q in quals {
            out.push(self.set_refs(q, layout)?);
        }
        Ok(and_all(out))
    }

    fn plan_from_item(&mut self, q: &Query, f: &FromItem, quals: Vec<Expr>, with_keys: bool) -> PgResult<(Plan, Layout)> {
        crate::stack::check()?;
        match f {
            FromItem::Rte(i) => self.plan_rte(q, *i, quals, with_keys),
            FromItem::Join { kind, left, right, quals: on, .. } => {
                let mut on_quals = Vec::new();
                if let Some(o) = on {
                    conjuncts(o.clone(), &mut on_quals);
                }
                let (lplan, llayout, rplan, rlayout, on_quals, above) = match kind {
                    JoinKind::Inner => {
                        // Inner joins: WHERE and ON conjuncts can all move down.
                        let mut all: Vec<(Vec<usize>, Expr)> = on_quals
                            .into_iter()
                            .chain(quals)
                            .map(|e| {
                                let mut r = Vec::new();
                                referenced_rtes(&e, 0, &mut r);
                                (r, e)
                            })
                            .collect();
                        let mut lr = Vec::new();
                        rtes_of(left, &mut lr);
                        let mut rr = Vec::new();
                        rtes_of(right, &mut rr);
                        let lq = take_matching(&mut all, |r| !r.is_empty() && r.iter().all(|x| lr.contains(x)));
                        let rq = take_matching(&mut all, |r| !r.is_empty() && r.iter().all(|x| rr.contains(x)));
                        let (lp, ll) = self.plan_from_item(q, left, lq, with_keys)?;
                        let (rp, rl) = self.plan_join_side(q, right, rq, with_keys)?;
                        (lp, ll, rp, rl, all.into_iter().map(|(_, e)| e).collect::<Vec<_>>(), Vec::new())
                    }
                    _ => {
                        // Outer joins: ON conditions on the nullable side only may
                        // move into it; WHERE conditions stay above the join.
                        let mut lr = Vec::new();
                        rtes_of(left, &mut lr);
                        let mut rr = Vec::new();
                        rtes_of(right, &mut rr);
                        let mut on_refs: Vec<(Vec<usize>, Expr)> = on_quals
                            .into_iter()
                            .map(|e| {
                                let mut r = Vec::new();
                                referenced_rtes(&e, 0, &mut r);
                                (r, e)
                            })
                            .collect();
                        let rq = if *kind == JoinKind::Left {
                            take_matching(&mut on_refs, |r| !r.is_empty() && r.iter().all(|x| rr.contains(x)))
                        } else {
                            Vec::new()
                        };
                        let lq = if *kind == JoinKind::Right {
                            take_matching(&mut on_refs, |r| !r.is_empty() && r.iter().all(|x| lr.contains(x)))
                        } else {
                            Vec::new()
                        };
                        let (lp, ll) = self.plan_from_item(q, left, lq, with_keys)?;
                        let (rp, rl) = self.plan_join_side(q, right, rq, with_keys)?;
                        (lp, ll, rp, rl, on_refs.into_iter().map(|(_, e)| e).collect(), quals)
                    }
                };
                let (mut plan, layout) = match rplan {
                    Item::Plain(rplan) => self.make_join(*kind, lplan, llayout, rplan, rlayout, on_quals)?,
                    Item::Lateral(rplan, args) => self.make_lateral_join(*kind, lplan, llayout, rplan, args, rlayout, on_quals)?,
                };
                if let Some(pred) = self.convert_all(above, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
        }
    }

    /// The right side of a join: a LATERAL entry becomes a parameterized
    /// plan (its pushed-down conditions then apply at the join).
    fn plan_join_side(&mut self, q: &Query, f: &FromItem, quals: Vec<Expr>, with_keys: bool) -> PgResult<(Item, Layout)> {
        if let FromItem::Rte(i) = f {
            if let Some((plan, args, l)) = self.plan_lateral_rte(q, *i)? {
                if !quals.is_empty() {
                    // Conditions on a lateral entry alone: filter inside it.
                    let lp = Arc::try_unwrap(plan).unwrap_or_else(|a| (*a).clone());
                    let pred = self.convert_all(quals, &l)?.expect("non-empty");
                    return Ok((Item::Lateral(Arc::new(Plan::Filter { input: lp.boxed(), predicate: shift_columns(pred, 0) }), args), l));
                }
                return Ok((Item::Lateral(plan, args), l));
            }
        }
        let (p, l) = self.plan_from_item(q, f, quals, with_keys)?;
        Ok((Item::Plain(p), l))
    }

    /// Joins two planned inputs: a hash join on equality conditions
    /// between them, else a nested loop over the materialized right side.
    fn make_join(
        &mut self,
        kind: JoinKind,
        lplan: Plan,
        llayout: Layout,
        rplan: Plan,
        rlayout: Layout,
        quals: Vec<Expr>,
    ) -> PgResult<(Plan, Layout)> {
        let layout = Layout::concat(&llayout, &rlayout);
        let lrtes = llayout.rtes();
        let rrtes = rlayout.rtes();
        let mut left_keys = Vec::new();
        let mut right_keys = Vec::new();
        let mut rest = Vec::new();
        for qual in quals {
            if let Some((a, b)) = hashable_equality(self.b, &qual) {
                let mut ra = Vec::new();
                referenced_rtes(&a, 0, &mut ra);
                let mut rb = Vec::new();
                referenced_rtes(&b, 0, &mut rb);
                let a_left = !ra.is_empty() && ra.iter().all(|r| lrtes.contains(r));
                let a_right = !ra.is_empty() && ra.iter().all(|r| rrtes.contains(r));
                let b_left = !rb.is_empty() && rb.iter().all(|r| lrtes.contains(r));
                let b_right = !rb.is_empty() && rb.iter().all(|r| rrtes.contains(r));
                if a_left && b_right && !a.is_volatile() && !b.is_volatile() {
                    left_keys.push(self.set_refs(a, &llayout)?);
                    right_keys.push(self.set_refs(b, &rlayout)?);
                    continue;
                }
                if a_right && b_left && !a.is_volatile() && !b.is_volatile() {
                    left_keys.push(self.set_refs(b, &llayout)?);
                    right_keys.push(self.set_refs(a, &rlayout)?);
                    continue;
                }
            }
            rest.push(qual);
        }
        let predicate = self.convert_all(rest, &layout)?;
        let (left_width, right_width) = (llayout.width, rlayout.width);
        let plan = if !left_keys.is_empty() {
            Plan::HashJoin { left: lplan.boxed(), right: rplan.boxed(), kind, left_keys, right_keys, predicate, left_width, right_width }
        } else {
            let right = match rplan {
                p @ (Plan::Values { .. } | Plan::Result { .. } | Plan::Materialize { .. }) => p,
                p => Plan::Materialize { input: p.boxed() },
            };
            Plan::NestedLoop { left: lplan.boxed(), right: right.boxed(), kind, predicate, left_width, right_width }
        };
        Ok((plan, layout))
    }

    fn plan_rte(&mut self, q: &Query, idx: usize, quals: Vec<Expr>, with_keys: bool) -> PgResult<(Plan, Layout)> {
        let rte = &q.rtable[idx];
        match &rte.kind {
            RteKind::Relation(rel) => {
                let ncols = rte.col_names.len();
                let with_key = with_keys || q.result_rte == Some(idx);
                let members = self.inheritance_members(rte, rel)?;
                // UPDATE and DELETE of an inheritance tree route each row
                // to its table by its tableoid.
                let routed = members.len() > 1 && q.result_rte == Some(idx);
                let system = routed || reads_system_columns(q, idx);
                let layout = Layout::scan(idx, ncols, with_key, system);
                let mut converted = Vec::with_capacity(quals.len());
                for qual in quals {
                    converted.push(self.set_refs(qual, &layout)?);
                }
                // A table read by a SELECT decodes only the columns the query uses.
                let columns = if q.command == CommandKind::Select && !with_key { read_columns(q, idx, ncols) } else { None };
                if members.len() <= 1 {
                    let (method, reverse) = access::choose_scan(self.b, self.catalog, rel, &converted);
                    let filter = and_all(converted);
                    self.note_relation(rel.oid);
                    let columns = columns.map(Arc::from);
                    return Ok((Plan::Scan { rel: rel.clone(), method, filter, with_key, reverse, columns, system, label: Label::of(rte) }, layout));
                }
                // expand_inherited_rtentry: every table of the tree, each
                // read in its own layout and arranged as the parent's row.
                let mut inputs = Vec::with_capacity(members.len());
                for (n, member) in members.iter().enumerate() {
                    self.note_relation(member.oid);
                    let scan = MemberScan { rte, with_key, system, columns: columns.as_deref(), ordinal: n + 1 };
                    inputs.push(self.plan_member_scan(rel, member, &scan, &converted)?);
                }
                let mut label = Label { refname: rte.alias.clone(), columns: rte.col_names.clone() };
                if with_key {
                    label.columns.push("ctid".into());
                }
                if system {
                    label.columns.extend(SystemColumn::ALL.iter().map(|sc| sc.name().to_string()));
                }
                Ok((Plan::Append { inputs, label: Some(Arc::new(label)) }, layout))
            }
            RteKind::Subquery(sq) => {
                let (plan, _) = self.plan_subquery(sq, true)?;
                let layout = Layout::single(idx, rte.col_names.len(), false);
                let mut plan = plan;
                if let Some(pred) = self.convert_all(quals, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
            RteKind::Values(rows) => {
                let empty = Layout::default();
                let mut prow = Vec::with_capacity(rows.len());
                for r in rows {
                    let mut out = Vec::with_capacity(r.len());
                    for e in r {
                        out.push(self.set_refs(e.clone(), &empty)?);
                    }
                    prow.push(out);
                }
                let width = rte.col_names.len();
                let layout = Layout::single(idx, width, false);
                let mut plan = Plan::Values { rows: prow, width, label: Label::of(rte) };
                if let Some(pred) = self.convert_all(quals, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
            RteKind::Function { call, ordinality, columns_from_record } => {
                let call = self.set_refs(call.clone(), &Layout::default())?;
                let width = rte.col_names.len();
                let layout = Layout::single(idx, width, false);
                let expand = if *columns_from_record { width - *ordinality as usize } else { 0 };
                let mut plan = Plan::Function { call, ordinality: *ordinality, expand_record: expand, label: Label::of(rte) };
                if let Some(pred) = self.convert_all(quals, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
            RteKind::Cte { index, levels_up, recursive_self } => {
                let def_level = self.depth() - *levels_up as usize;
                let width = rte.col_names.len();
                let layout = Layout::single(idx, width, false);
                let modifying = !*recursive_self && self.levels[def_level].ctes.get(*index).is_some_and(|c| c.modifying);
                let mut plan = if *recursive_self || modifying {
                    let id = self
                        .worktables
                        .get(&(def_level, *index))
                        .copied()
                        .ok_or_else(|| PgError::unsupported("recursive reference from a nested subquery"))?;
                    Plan::WorkTable { id, label: Label::of(rte) }
                } else {
                    let cte = self.levels[def_level].ctes[*index].clone();
                    self.plan_recursive_cte(&cte, def_level, *index)?
                };
                if let Some(pred) = self.convert_all(quals, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
            RteKind::NamedTuplestore { name } => {
                let layout = Layout::single(idx, rte.col_names.len(), false);
                let mut plan = Plan::NamedTuplestore { name: name.clone(), label: Label::of(rte) };
                if let Some(pred) = self.convert_all(quals, &layout)? {
                    plan = Plan::Filter { input: plan.boxed(), predicate: pred };
                }
                Ok((plan, layout))
            }
            RteKind::Join { .. } => Err(PgError::internal("join RTE planned directly")),
        }
    }

    /// The tables a scan of `rel` through `rte` reads: the whole
    /// inheritance tree unless ONLY (or a table without children).
    /// A foreign table in the tree fails the scan as reading it directly
    /// does (Tusk runs no foreign-data wrapper).
    fn inheritance_members(&self, rte: &RangeTblEntry, rel: &Arc<Relation>) -> PgResult<Vec<Arc<Relation>>> {
        if !rte.inh || rel.children.is_empty() {
            return Ok(vec![rel.clone()]);
        }
        let members: Vec<Arc<Relation>> =
            self.catalog.inheritance_tree(rel.oid).into_iter().filter_map(|oid| self.catalog.relation(oid).cloned()).collect();
        if let Some(f) = members.iter().find(|m| m.kind == crate::catalog::RelKind::ForeignTable) {
            return Err(crate::catalog::foreign::scan_error(self.catalog, f));
        }
        Ok(members)
    }

    /// One table of an inherited scan: `member` read in its own row layout,
    /// with the conditions `quals` (over the parent's row) moved onto its
    /// columns, then its row arranged as the parent's. EXPLAIN names it
    /// after the parent's reference, numbered (`p_1`, `p_2`, ...).
    fn plan_member_scan(&mut self, parent: &Relation, member: &Arc<Relation>, scan: &MemberScan, quals: &[Expr]) -> PgResult<Plan> {
        let map = inherited_columns(parent, member)?;
        let pcols = map.len();
        let mcols = member.live_columns().count();
        // The parent row's key and system columns follow its columns; the
        // member's follow its own.
        let position = |i: usize| if i < pcols { map[i] } else { i - pcols + mcols };
        let quals: Vec<Expr> = quals
            .iter()
            .map(|q| {
                q.clone().rewrite(&mut |e| match e {
                    Expr::Column(i, t) => Expr::Column(position(i), t),
                    other => other,
                })
            })
            .collect();
        let (method, reverse) = access::choose_scan(self.b, self.catalog, member, &quals);
        let columns = scan.columns.map(|used| {
            let mut m = vec![false; mcols];
            for (i, &u) in used.iter().enumerate() {
                if u {
                    m[map[i]] = true;
                }
            }
            Arc::from(m)
        });
        let label = Arc::new(Label {
            refname: format!("{}_{}", scan.rte.alias, scan.ordinal),
            columns: member.live_columns().map(|(_, c)| c.name.clone()).collect(),
        });
        let plan = Plan::Scan { rel: member.clone(), method, filter: and_all(quals), with_key: scan.with_key, reverse, columns, system: scan.system, label };
        if mcols == pcols && map.iter().enumerate().all(|(i, &m)| i == m) {
            return Ok(plan);
        }
        let mut exprs: Vec<Expr> = map.iter().zip(&scan.rte.col_types).map(|(&m, &t)| Expr::Column(m, t)).collect();
        let mut at = mcols;
        if scan.with_key {
            exprs.push(Expr::Column(at, SqlType::new(oid::BYTEA)));
            at += 1;
        }
        if scan.system {
            exprs.extend(SystemColumn::ALL.iter().map(|sc| Expr::Column(at + sc.index(), sc.ty())));
        }
        Ok(Plan::Project { input: plan.boxed(), exprs })
    }

    fn plan_recursive_cte(&mut self, cte: &Cte, def_level: usize, index: usize) -> PgResult<Plan> {
        let (base, recursive, all) = cte.recursive_parts.clone().ok_or_else(|| PgError::internal("recursive CTE without parts"))?;
        let id = self.next_worktable;
        self.next_worktable += 1;
        // The CTE's subqueries are one level below the defining query; plan
        // them as inline levels at the right depth.
        let saved: Vec<LevelInfo> = self.levels.drain(def_level + 1..).collect();
        let (base_plan, _) = self.plan_subquery(&base, true)?;
        self.worktables.insert((def_level, index), id);
        let rec = self.plan_subquery(&recursive, true);
        self.worktables.remove(&(def_level, index));
        self.levels.extend(saved);
        let (rec_plan, _) = rec?;
        let width = cte.col_types.len();
        Ok(Plan::RecursiveUnion { base: base_plan.boxed(), recursive: rec_plan.boxed(), all, id, width })
    }

    // ---------------------------------------------------------------- INSERT / UPDATE / DELETE

    /// WITH CHECK OPTION conditions, over the new row of the target table.
    fn plan_view_checks(&mut self, q: &Query, result_rte: usize, ncols: usize) -> PgResult<Vec<(String, Expr)>> {
        let layout = Layout::single(result_rte, ncols, false);
        q.view_checks.iter().map(|(v, e)| Ok((v.clone(), self.set_refs(e.clone(), &layout)?))).collect()
    }

    fn plan_modify(&mut self, q: &Query) -> PgResult<Plan> {
        let result_rte = q.result_rte.ok_or_else(|| PgError::internal("DML without target"))?;
        let rel = match &q.rtable[result_rte].kind {
            RteKind::Relation(rel) => rel.clone(),
            // A view whose INSTEAD OF triggers take its UPDATE or DELETE:
            // the view's rows are the statement's input.
            RteKind::Subquery(sq) => sq.expanded_view.and_then(|v| self.catalog.relation(v).cloned()).ok_or_else(|| PgError::internal("DML target"))?,
            _ => return Err(PgError::internal("DML target")),
        };
        self.note_relation(rel.oid);
        let ncols = q.rtable[result_rte].col_names.len();
        match q.command {
            CommandKind::Insert => {
                let spec = q.insert.as_ref().ok_or_else(|| PgError::internal("INSERT spec"))?;
                // The source: FROM (VALUES or SELECT) with the completed target list.
                let (plan, layout) = if q.from.is_empty() {
                    (Plan::Result { exprs: vec![], filter: None }, Layout::default())
                } else {
                    self.plan_from(q, &q.from, Vec::new(), false)?
                };
                let exprs = q.targets.iter().map(|t| self.set_refs(t.expr.clone(), &layout)).collect::<PgResult<Vec<_>>>()?;
                let input = match plan {
                    Plan::Result { filter: None, .. } => Plan::Result { exprs, filter: None },
                    p => Plan::Project { input: p.boxed(), exprs },
                };
                let returning_system = returning_reads_system_columns(q, result_rte);
                let new_layout = Layout::scan(result_rte, ncols, false, returning_system);
                let returning = q.returning.iter().map(|t| self.set_refs(t.expr.clone(), &new_layout)).collect::<PgResult<Vec<_>>>()?;
                let on_conflict = match &spec.on_conflict {
                    None => None,
                    Some(OnConflict::Nothing { arbiter }) => {
                        Some(OnConflictPlan { arbiter: *arbiter, do_update: false, set: vec![], filter: None })
                    }
                    Some(OnConflict::Update { arbiter, set, filter }) => {
                        // Over (existing row ++ proposed row): the EXCLUDED rte is the last one.
                        let excluded = q.rtable.len() - 1;
                        let mut l = Layout::single(result_rte, ncols, false);
                        l.entries.insert(excluded, (ncols, ncols, None));
                        l.width = ncols * 2;
                        let set = set.iter().map(|(c, e)| Ok((*c, self.set_refs(e.clone(), &l)?))).collect::<PgResult<Vec<_>>>()?;
                        let filter = match filter {
                            Some(f) => Some(self.set_refs(f.clone(), &l)?),
                            None => None,
                        };
                        Some(OnConflictPlan { arbiter: Some(*arbiter), do_update: true, set, filter })
                    }
                };
                Ok(Plan::Modify {
                    kind: ModifyKind::Insert,
                    rel,
                    input: input.boxed(),
                    update_cols: vec![],
                    on_conflict,
                    returning,
                    returning_input: None,
                    view_checks: self.plan_view_checks(q, result_rte, ncols)?,
                    old_width: 0,
                    recheck: None,
                    inherited: Vec::new(),
                    returning_system,
                })
            }
            CommandKind::Update | CommandKind::Delete => {
                let mut quals = Vec::new();
                if let Some(w) = &q.quals {
                    conjuncts(w.clone(), &mut quals);
                }
                let (plan, layout) = self.plan_from(q, &q.from, quals, false)?;
                let (off, _, key) = layout.entries[&result_rte];
                let mut exprs: Vec<Expr> = (0..ncols).map(|i| Expr::Column(off + i, q.rtable[result_rte].col_types[i])).collect();
                if rel.kind == crate::catalog::RelKind::View {
                    // A view's row has no key: its triggers get the row itself.
                    exprs.push(Expr::null(SqlType::new(oid::BYTEA)));
                } else {
                    let key = key.ok_or_else(|| PgError::internal("target scanned without key"))?;
                    exprs.push(Expr::Column(key, SqlType::new(oid::BYTEA)));
                }
                // An inheritance tree's rows carry their table, which routes them.
                let members = self.inheritance_members(&q.rtable[result_rte], &rel)?;
                let mut inherited = Vec::new();
                if members.len() > 1 {
                    let sys = layout.sys.get(&result_rte).copied().ok_or_else(|| PgError::internal("inherited target scanned without its tableoid"))?;
                    exprs.push(Expr::Column(sys + SystemColumn::TableOid.index(), SqlType::new(oid::OID)));
                    for m in members {
                        inherited.push(InheritedTarget { columns: inherited_columns(&rel, &m)?, rel: m });
                    }
                }
                let old_width = exprs.len();
                let mut update_cols = Vec::new();
                for (c, e) in &q.update_set {
                    update_cols.push(*c);
                    exprs.push(self.set_refs(e.clone(), &layout)?);
                }
                let new_layout = Layout::single(result_rte, ncols, false);
                // RETURNING may name the other FROM items (UPDATE ... FROM,
                // DELETE ... USING): their columns then ride along after the
                // SET values, and RETURNING reads (new or old target row ++
                // its system columns, if it reads them ++ the joined row).
                let returning_system = returning_reads_system_columns(q, result_rte);
                let returning_input = if q.from.len() > 1 && !q.returning.is_empty() {
                    let at = exprs.len();
                    let mut types = vec![SqlType::new(oid::TEXT); layout.width];
                    for (&rte, &(off, n, key)) in &layout.entries {
                        for i in 0..n {
                            types[off + i] = q.rtable[rte].col_types[i];
                        }
                        if let Some(k) = key {
                            types[k] = SqlType::new(oid::BYTEA);
                        }
                    }
                    for (_, &at) in &layout.sys {
                        for sc in SystemColumn::ALL {
                            types[at + sc.index()] = sc.ty();
                        }
                    }
                    exprs.extend(types.into_iter().enumerate().map(|(i, t)| Expr::Column(i, t)));
                    Some(at)
                } else {
                    None
                };
                let target_layout = Layout::scan(result_rte, ncols, false, returning_system);
                let returning_layout = match returning_input {
                    Some(_) => {
                        let mut l = Layout::concat(&Layout { width: target_layout.width, ..Default::default() }, &layout);
                        l.entries.insert(result_rte, (0, ncols, None));
                        l.sys.remove(&result_rte);
                        l.sys.extend(target_layout.sys.iter().map(|(&r, &o)| (r, o)));
                        l
                    }
                    None => target_layout,
                };
                let input = Plan::Project { input: plan.boxed(), exprs };
                let returning = q.returning.iter().map(|t| self.set_refs(t.expr.clone(), &returning_layout)).collect::<PgResult<Vec<_>>>()?;
                let kind = if q.command == CommandKind::Update { ModifyKind::Update } else { ModifyKind::Delete };
                // Statements reading only their target can be re-evaluated on a
                // concurrently updated row.
                // (Not when they read system columns, which the re-read row lacks.)
                let recheck = if q.from.len() == 1 && !reads_system_columns(q, result_rte) {
                    let quals = match &q.quals {
                        Some(w) => Some(self.set_refs(w.clone(), &new_layout)?),
                        None => None,
                    };
                    let set = q.update_set.iter().map(|(_, e)| self.set_refs(e.clone(), &new_layout)).collect::<PgResult<Vec<_>>>()?;
                    Some(Recheck { quals, set })
                } else {
                    None
                };
                let view_checks = self.plan_view_checks(q, result_rte, ncols)?;
                Ok(Plan::Modify {
                    kind,
                    rel,
                    input: input.boxed(),
                    update_cols,
                    on_conflict: None,
                    returning,
                    returning_input,
                    view_checks,
                    old_width,
                    recheck,
                    inherited,
                    returning_system,
                })
            }
            CommandKind::Select => unreachable!(),
        }
    }
}

/// What every table of an inherited scan shares (see `plan_member_scan`).
struct MemberScan<'r> {
    rte: &'r RangeTblEntry,
    with_key: bool,
    system: bool,
    /// The parent's columns the query reads (None: all).
    columns: Option<&'r [bool]>,
    /// The member's place in the tree's scan order, from 1.
    ordinal: usize,
}

/// For each live column of `parent`, the live column of `member` (a table
/// inheriting from it) that stands for it: the one of the same name.
pub(crate) fn inherited_columns(parent: &Relation, member: &Relation) -> PgResult<Vec<usize>> {
    parent
        .live_columns()
        .map(|(_, c)| {
            member
                .live_columns()
                .position(|(_, m)| m.name == c.name)
                .ok_or_else(|| PgError::internal(format!("column \"{}\" of \"{}\" is missing from inheriting table \"{}\"", c.name, parent.name, member.name)))
        })
        .collect()
}

/// A planned FROM item: an ordinary plan, or a LATERAL one with its parameters.
enum Item {
    Plain(Plan),
    Lateral(Arc<Plan>, Vec<Expr>),
}

/// Window functions in the (already converted) target list: one WindowAgg
/// per distinct PARTITION BY / ORDER BY, each over a Sort by its keys, in
/// order of first use; the calls become columns the WindowAggs append to
/// their input rows. (Frames may differ within one WindowAgg.)
fn plan_windows(mut plan: Plan, targets: Vec<Expr>, input_width: usize) -> (Plan, Vec<Expr>) {
    // Above every input column: marks a call's place until its column is known.
    const MARK: usize = 1 << 40;
    let mut calls: Vec<WindowCall> = Vec::new();
    let targets: Vec<Expr> = targets
        .into_iter()
        .map(|t| {
            t.rewrite(&mut |e| match e {
                Expr::Window(w) => {
                    let ty = w.ty;
                    let k = calls.iter().position(|c| *c == *w).unwrap_or_else(|| {
                        calls.push(*w);
                        calls.len() - 1
                    });
                    Expr::Column(MARK + k, ty)
                }
                other => other,
            })
        })
        .collect();
    if calls.is_empty() {
        return (plan, targets);
    }
    #[allow(clippy::type_complexity)]
    let mut specs: Vec<(Vec<Expr>, Vec<(Expr, bool, bool)>, Vec<usize>)> = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        match specs.iter_mut().find(|(p, o, _)| *p == c.partition_by && *o == c.order_by) {
            Some(spec) => spec.2.push(k),
            None => specs.push((c.partition_by.clone(), c.order_by.clone(), vec![k])),
        }
    }
    let mut column_of = vec![0; calls.len()];
    let mut width = input_width;
    for (partition, order, members) in specs {
        let mut keys: Vec<SortKey> = partition.iter().map(|e| SortKey { expr: e.clone(), descending: false, nulls_first: false }).collect();
        keys.extend(order.iter().map(|(e, d, n)| SortKey { expr: e.clone(), descending: *d, nulls_first: *n }));
        if !keys.is_empty() {
            plan = Plan::Sort { input: plan.boxed(), keys };
        }
        for (i, &k) in members.iter().enumerate() {
            column_of[k] = width + i;
        }
        width += members.len();
        let funcs = members.iter().map(|&k| calls[k].clone()).collect();
        plan = Plan::WindowAgg { input: plan.boxed(), partition, order, funcs };
    }
    let targets = targets
        .into_iter()
        .map(|t| {
            t.rewrite(&mut |e| match e {
                Expr::Column(c, ty) if c >= MARK => Expr::Column(column_of[c - MARK], ty),
                other => other,
            })
        })
        .collect();
    (plan, targets)
}

/// Which columns of range table entry `rte` of `q` the query reads, at
/// any depth (sublinks and subqueries referring out to it included); None
/// if it may read them all (a reference this walk cannot place).
fn read_columns(q: &Query, rte: usize, ncols: usize) -> Option<Vec<bool>> {
    let mut used = vec![false; ncols];
    let mut all = false;
    visit_query_vars(q, 0, &mut |v, depth| {
        if v.levels_up as usize == depth && v.rte == rte && SystemColumn::of_var_col(v.col).is_none() {
            match used.get_mut(v.col) {
                Some(u) => *u = true,
                None => all = true,
            }
        }
    });
    if all {
        None
    } else {
        Some(used)
    }
}

/// Whether the RETURNING list of `q` reads a system column of its target.
fn returning_reads_system_columns(q: &Query, rte: usize) -> bool {
    q.returning.iter().any(|t| t.expr.any(&mut |e| matches!(e, Expr::Var(v) if v.levels_up == 0 && v.rte == rte && SystemColumn::of_var_col(v.col).is_some())))
}

/// Whether `q` reads a system column of range table entry `rte` (at any
/// depth): only then does its scan provide them.
fn reads_system_columns(q: &Query, rte: usize) -> bool {
    let mut found = false;
    visit_query_vars(q, 0, &mut |v, depth| {
        if v.levels_up as usize == depth && v.rte == rte && SystemColumn::of_var_col(v.col).is_some() {
            found = true;
        }
    });
    found
}

/// Calls `f(var, depth)` for every Var in `q` and the queries nested in it
/// (`depth` counts the levels below `q`).
fn visit_query_vars(q: &Query, depth: usize, f: &mut dyn FnMut(&Var, usize)) {
    let mut exprs: Vec<&Expr> = Vec::new();
    exprs.extend(q.targets.iter().map(|t| &t.expr));
    exprs.extend(q.returning.iter().map(|t| &t.expr));
    exprs.extend(q.quals.iter());
    exprs.extend(q.having.iter());
    exprs.extend(q.group_by.iter());
    exprs.extend(q.limit.iter());
    exprs.extend(q.offset.iter());
    exprs.extend(q.update_set.iter().map(|(_, e)| e));
    exprs.extend(q.view_checks.iter().map(|(_, e)| e));
    fn from_quals<'a>(f: &'a FromItem, out: &mut Vec<&'a Expr>) {
        if let FromItem::Join { left, right, quals, .. } = f {
            out.extend(quals.iter());
            from_quals(left, out);
            from_quals(right, out);
        }
    }
    for fi in &q.from {
        from_quals(fi, &mut exprs);
    }
    for r in &q.rtable {
        match &r.kind {
            RteKind::Subquery(sq) => visit_query_vars(sq, depth + 1, f),
            RteKind::Values(rows) => exprs.extend(rows.iter().flatten()),
            RteKind::Function { call, .. } => exprs.push(call),
            RteKind::Join { columns, .. } => exprs.extend(columns.iter()),
            _ => {}
        }
    }
    for c in &q.ctes {
        visit_query_vars(&c.query, depth + 1, f);
        if let Some((a, b, _)) = &c.recursive_parts {
            visit_query_vars(a, depth + 1, f);
            visit_query_vars(b, depth + 1, f);
        }
    }
    if let Some(ins) = &q.insert {
        visit_query_vars(&ins.source, depth + 1, f);
    }
    for e in exprs {
        e.walk(&mut |x| match x {
            Expr::Var(v) => f(v, depth),
            Expr::SubLink { query, .. } => visit_query_vars(query, depth + 1, f),
            _ => {}
        });
    }
}

fn shift_columns(e: Expr, by: usize) -> Expr {
    if by == 0 {
        return e;
    }
    e.rewrite(&mut |x| match x {
        Expr::Column(i, t) => Expr::Column(i + by, t),
        other => other,
    })
}

fn take_matching(pending: &mut Vec<(Vec<usize>, Expr)>, pred: impl Fn(&[usize]) -> bool) -> Vec<Expr> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pending.len() {
        if pred(&pending[i].0) {
            out.push(pending.remove(i).1);
        } else {
            i += 1;
        }
    }
    out
}

/// Level-`depth` column references outside aggregates and grouped expressions.
fn ungrouped_vars(e: &Expr, groups: &[Expr], depth: u32, out: &mut Vec<Expr>) {
    if depth == 0 && groups.contains(e) {
        return;
    }
    match e {
        Expr::Agg(_) => {}
        Expr::Var(v) if v.levels_up == depth => {
            let local = Expr::Var(Var { levels_up: 0, ..v.clone() });
            if !groups.contains(&local) && !out.contains(&local) {
                out.push(local);
            }
        }
        Expr::SubLink { query, test, .. } => {
            if let Some(t) = test {
                ungrouped_vars(t, groups, depth, out);
            }
            let mut visit = |x: &Expr| ungrouped_vars(x, groups, depth + 1, out);
            for t in &query.targets {
                visit(&t.expr);
            }
            if let Some(w) = &query.quals {
                visit(w);
            }
            if let Some(h) = &query.having {
                visit(h);
            }
        }
        other => other.for_each_child(&mut |c| ungrouped_vars(c, groups, depth, out)),
    }
}

/// The range table index by which a subquery refers to an aggregate of
/// an enclosing query (an outer-level aggregate): column `j` of it, at
/// that query's level, is `aggs[j]` of its Agg node.
const OUTER_AGG_RTE: usize = usize::MAX - 1;

/// Replaces each aggregate call of this level in `e` by `Column(j)`, where
/// `out[j]` is the call (equal calls share one entry). Outer-level
/// aggregates of this level inside sublinks are computed here too: they
/// are added to `out` and replaced in the sublink by a reference to this
/// level's `OUTER_AGG_RTE`, which reaches the subplan as a parameter.
fn number_aggs(e: Expr, out: &mut Vec<AggCall>) -> Expr {
    match e {
        Expr::SubLink { kind, test, op, mut query, ty } => {
            let test = test.map(|t| Box::new(number_aggs(*t, out)));
            sublink::rewrite_query_deep(
                &mut query,
                1,
                &mut |x, depth| match x {
                    Expr::Agg(a) if a.levels_up == depth => {
                        let ty = a.ty;
                        out.push(lift_agg(*a, depth));
                        Expr::Var(Var { rte: OUTER_AGG_RTE, col: out.len() - 1, levels_up: depth, ty })
                    }
                    other => other,
                },
                &mut |_, _| {},
            );
            Expr::SubLink { kind, test, op, query, ty }
        }
        Expr::Agg(a) if a.levels_up == 0 => {
            let ty = a.ty;
            let j = match out.iter().position(|x| *x == *a) {
                Some(j) => j,
                None => {
                    out.push(*a);
                    out.len() - 1
                }
            };
            Expr::Column(j, ty)
        }
        other => other.map_children(&mut |c| number_aggs(c, out)),
    }
}

/// An outer-level aggregate found `d` levels down, moved out to the level
/// that computes it: references in it to that level and beyond come `d`
/// levels nearer.
fn lift_agg(mut a: AggCall, d: u32) -> AggCall {
    let mut lower = |e: Expr| {
        sublink::rewrite_deep(
            e,
            0,
            &mut |x, depth| match x {
                Expr::Var(mut v) if v.levels_up >= depth + d => {
                    v.levels_up -= d;
                    Expr::Var(v)
                }
                other => other,
            },
            &mut |levels_up, depth| {
                if *levels_up >= depth + d {
                    *levels_up -= d;
                }
            },
        )
    };
    a.args = std::mem::take(&mut a.args).into_iter().map(&mut lower).collect();
    a.filter = a.filter.take().map(|f| Box::new(lower(*f)));
    a.order_by = std::mem::take(&mut a.order_by).into_iter().map(|(e, desc, nf)| (lower(e), desc, nf)).collect();
    a.levels_up = 0;
    a
}

/// Whether an expression calls a set-returning function (in a target
/// list, it decides how many rows there are).
fn has_set_returning(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::Func { func, .. } = x {
            if matches!(func.imp, crate::functions::ScalarFn::Set(_)) {
                found = true;
            }
        }
    });
    found
}

fn is_equality(b: &Builtins, e: &Expr) -> bool {
    matches!(e, Expr::Func { func, args, .. } if args.len() == 2 && b.operator_name_of_proc(func.oid) == Some("="))
}

/// `a = b` where equal values also hash equally (so a hash join is correct).
fn hashable_equality(b: &Builtins, e: &Expr) -> Option<(Expr, Expr)> {
    if let Expr::Func { func, args, .. } = e {
        if args.len() == 2 && b.operator_name_of_proc(func.oid) == Some("=") {
            let (ta, tb) = (args[0].ty().oid, args[1].ty().oid);
            if access::same_key_family(ta, tb) && ta != oid::BPCHAR && ta != oid::RECORD {
                return Some((args[0].clone(), args[1].clone()));
            }
        }
    }
    None
}


/// Compiles an expression stored with a relation (CHECK, index expression,
/// partial index predicate) into one over the relation's live-column rows.
pub fn compile_relation_expr(
    catalog: &DbCatalog,
    settings: &crate::settings::Settings,
    user: &str,
    rel: &crate::catalog::Relation,
    text: &str,
) -> PgResult<Expr> {
    let env = crate::analyzer::AnalyzerEnv { catalog, settings, user, temp_namespace: None };
    let mut a = crate::analyzer::Analyzer::new(env, &[], text);
    let e = a.analyze_relation_expr(Arc::new(rel.clone()), text, "check constraints")?;
    // The one system column such an expression may read is the row's
    // table, which is the relation it was compiled for.
    let e = e.rewrite(&mut |x| match x {
        Expr::Var(v) if v.levels_up == 0 && SystemColumn::of_var_col(v.col) == Some(SystemColumn::TableOid) => {
            Expr::Const(tusk_types::Datum::Oid(rel.oid), v.ty)
        }
        other => other,
    });
    let ncols = rel.live_columns().count();
    let mut p = Planner::new(catalog);
    p.levels.push(LevelInfo { inline: false, params: Vec::new(), ctes: Vec::new() });
    p.set_refs(e, &Layout::single(0, ncols, false))
}

/// ALTER COLUMN ... TYPE: the new value of live column `col` of each row,
/// from the USING expression (or the column itself) assignment-coerced to
/// `target`, with PostgreSQL's errors when no such coercion exists.
pub fn compile_column_conversion(
    catalog: &DbCatalog,
    settings: &crate::settings::Settings,
    user: &str,
    rel: &crate::catalog::Relation,
    col: usize,
    using: Option<&str>,
    target: SqlType,
) -> PgResult<Expr> {
    let (_, column) = rel.live_columns().nth(col).ok_or_else(|| PgError::internal("column index"))?;
    let name = column.name.clone();
    let own = crate::functions::quote_ident(&name);
    let text = using.unwrap_or(&own);
    let env = crate::analyzer::AnalyzerEnv { catalog, settings, user, temp_namespace: None };
    let mut a = crate::analyzer::Analyzer::new(env, &[], text);
    let e = a.analyze_relation_expr(Arc::new(rel.clone()), text, "transform expressions")?;
    let shown = crate::analyzer::types::format_type(a.b, target.oid, target.typmod);
    let e = match a.try_coerce(e, target, crate::analyzer::coerce::CoercionContext::Assignment, -1)? {
        Ok(e) => e,
        Err(_) if using.is_some() => {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("result of USING clause for column \"{name}\" cannot be cast automatically to type {shown}"),
            )
            .with_hint("You might need to add an explicit cast."))
        }
        Err(_) => {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("column \"{name}\" cannot be cast automatically to type {shown}"))
                .with_hint(format!("You might need to specify \"USING {own}::{shown}\".")))
        }
    };
    let ncols = rel.live_columns().count();
    let mut p = Planner::new(catalog);
    p.levels.push(LevelInfo { inline: false, params: Vec::new(), ctes: Vec::new() });
    p.set_refs(e, &Layout::single(0, ncols, false))
}

/// The DEFAULT of every live column, as constant-context expressions.
pub fn compile_defaults(
    catalog: &DbCatalog,
    settings: &crate::settings::Settings,
    user: &str,
    rel: &crate::catalog::Relation,
) -> PgResult<Vec<Expr>> {
    // A temporary table's serial sequences live in its own (the session's
    // temporary) schema, which its defaults' names must find.
    let temp_namespace = (rel.persistence == 't').then_some(rel.namespace);
    let env = crate::analyzer::AnalyzerEnv { catalog, settings, user, temp_namespace };
    let mut a = crate::analyzer::Analyzer::new(env, &[], "");
    let mut p = Planner::new(catalog);
    p.levels.push(LevelInfo { inline: false, params: Vec::new(), ctes: Vec::new() });
    let mut out = Vec::new();
    for i in 0..rel.live_columns().count() {
        let e = a.column_default(rel, i)?;
        out.push(p.set_refs(e, &Layout::default())?);
    }
    Ok(out)
}
