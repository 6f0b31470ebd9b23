//! Pull-up of WHERE sublinks into semi and anti joins (PostgreSQL's
//! pull_up_sublinks, convert_EXISTS_sublink_to_join and
//! convert_ANY_sublink_to_join).
//!
//! A correlated `EXISTS (subquery)` in the top-level AND of a WHERE clause
//! would otherwise run its subquery once per outer row; as a semi join the
//! subquery runs once and is hashed (or materialized) and probed. The
//! subquery's WHERE conditions that reach the outer query become the join's
//! conditions: the subquery then returns the columns those conditions read
//! from it, and they are known in the outer query by a range table index
//! past the real ones (`SemiJoin::rte`). `NOT EXISTS` becomes an anti
//! join, and an uncorrelated `x IN (subquery)` a semi join on `x = output`.
//! `NOT IN` stays a subplan (hashed when uncorrelated): its NULL semantics
//! are not an anti join's, as in PostgreSQL.

use std::sync::Arc;

use tusk_types::Datum;

use crate::expr::{BoolOp, Expr, SubLinkKind, Var};
use crate::query::*;

use super::{and_all, conjuncts, has_set_returning, query_outer_refs, referenced_rtes};

/// A WHERE sublink planned as a join of the enclosing query's FROM items
/// with the subquery.
pub(super) struct SemiJoin {
    /// Semi (EXISTS, IN) or Anti (NOT EXISTS).
    pub kind: JoinKind,
    /// The right side: yields `width` columns.
    pub query: Query,
    pub width: usize,
    /// The range table index by which `quals` refer to the right side's columns.
    pub rte: usize,
    /// The join conditions, over the enclosing level's range table entries
    /// and `rte`.
    pub quals: Vec<Expr>,
}

/// What became of a WHERE conjunct.
pub(super) enum PulledUp {
    /// A semi or anti join, and conditions of the enclosing query alone
    /// that the subquery's WHERE held (they join the enclosing WHERE).
    Join(SemiJoin, Vec<Expr>),
    /// An EXISTS whose correlated conditions all concern the enclosing
    /// query alone: those conditions, and the now uncorrelated EXISTS.
    Split(Vec<Expr>),
}

/// Tries to turn one WHERE conjunct into a semi or anti join; `rte` is the
/// range table index the join's right side is to be known by.
pub(super) fn pull_up(e: &Expr, rte: usize) -> Option<PulledUp> {
    match e {
        Expr::Bool { op: BoolOp::Not, args } if args.len() == 1 => match &args[0] {
            Expr::SubLink { kind: SubLinkKind::Exists, query, .. } => pull_up_exists(query, true, rte),
            _ => None,
        },
        Expr::SubLink { kind: SubLinkKind::Exists, query, .. } => pull_up_exists(query, false, rte),
        Expr::SubLink { kind: SubLinkKind::Any, test: Some(test), op: Some(op), query, .. } => {
            pull_up_any(test, op, query, rte).map(|sj| PulledUp::Join(sj, Vec::new()))
        }
        _ => None,
    }
}

/// PostgreSQL's simplify_EXISTS_query: whether the subquery's rows only
/// matter by whether there is one (its target list, ORDER BY, DISTINCT
/// and a positive constant LIMIT then do not matter).
fn simple_exists(sq: &Query) -> bool {
    let limit_ok = match &sq.limit {
        None => true,
        Some(Expr::Const(Datum::Null, _)) => true,
        Some(Expr::Const(Datum::Int8(n), _)) => *n > 0,
        Some(Expr::Const(Datum::Int4(n), _)) => *n > 0,
        Some(_) => false,
    };
    sq.command == CommandKind::Select
        && sq.set_op.is_none()
        && sq.group_by.is_empty()
        && sq.having.is_none()
        && !sq.has_aggs
        && limit_ok
        && sq.offset.is_none()
        && !sq.row_lock
        && !sq.from.is_empty()
        && sq.ctes.is_empty()
        && !sq.targets.iter().any(|t| has_set_returning(&t.expr) || t.expr.any(&mut |x| matches!(x, Expr::Window(_))))
}

fn pull_up_exists(sq: &Query, negated: bool, rte: usize) -> Option<PulledUp> {
    if !simple_exists(sq) {
        return None;
    }
    let mut conds = Vec::new();
    if let Some(w) = &sq.quals {
        conjuncts(w.clone(), &mut conds);
    }
    let (correlated, kept): (Vec<Expr>, Vec<Expr>) = conds.into_iter().partition(|c| refers_to_level(c, 1));
    if correlated.is_empty() || correlated.iter().any(volatile_deep) {
        return None;
    }
    let mut rest = sq.clone();
    rest.quals = and_all(kept);
    rest.targets.clear();
    rest.sort.clear();
    rest.distinct = Distinct::None;
    rest.limit = None;
    rest.with_ties = false;
    // Nothing but the WHERE conditions taken out may reach the enclosing query.
    let mut left = Vec::new();
    query_outer_refs(&rest, 1, &mut left);
    if !left.is_empty() {
        return None;
    }
    // The correlated conditions, moved up a level: the subquery's own
    // columns they read become its outputs.
    let mut exposed: Vec<Var> = Vec::new();
    let mut quals = Vec::new();
    let mut outer_only = Vec::new();
    for c in correlated {
        let mut reads_inner = false;
        let moved = relevel_expr(c, 0, &mut |v, depth| {
            if v.levels_up == depth {
                reads_inner = true;
                let local = Var { levels_up: 0, ..v.clone() };
                let j = exposed.iter().position(|x| *x == local).unwrap_or_else(|| {
                    exposed.push(local);
                    exposed.len() - 1
                });
                Var { rte, col: j, levels_up: depth, ty: v.ty }
            } else if v.levels_up > depth {
                Var { levels_up: v.levels_up - 1, ..v }
            } else {
                v
            }
        });
        if reads_inner {
            quals.push(moved);
        } else {
            outer_only.push(moved);
        }
    }
    if quals.is_empty() {
        if negated {
            // NOT (cond AND EXISTS ...): not a join.
            return None;
        }
        // EXISTS (... WHERE outer_cond AND uncorrelated...): the
        // conditions, then a one-time EXISTS.
        let mut out = outer_only;
        rest.targets = sq.targets.clone();
        out.push(Expr::SubLink { kind: SubLinkKind::Exists, test: None, op: None, query: Box::new(rest), ty: tusk_types::SqlType::new(tusk_types::oid::BOOL) });
        return Some(PulledUp::Split(out));
    }
    if negated && !outer_only.is_empty() {
        // An anti join keeps them as join conditions.
        quals.append(&mut outer_only);
    }
    rest.targets = exposed
        .iter()
        .enumerate()
        .map(|(i, v)| TargetEntry { expr: Expr::Var(v.clone()), name: format!("c{i}"), junk: false, origin: None })
        .collect();
    let width = exposed.len();
    let kind = if negated { JoinKind::Anti } else { JoinKind::Semi };
    Some(PulledUp::Join(SemiJoin { kind, query: rest, width, rte, quals }, outer_only))
}

/// `test op ANY (subquery)` with an uncorrelated subquery whose one output
/// column the test compares against.
fn pull_up_any(test: &Expr, op: &crate::expr::FuncRef, sq: &Query, rte: usize) -> Option<SemiJoin> {
    let mut outer = Vec::new();
    query_outer_refs(sq, 1, &mut outer);
    if !outer.is_empty() {
        return None;
    }
    let mut mine = Vec::new();
    referenced_rtes(test, 0, &mut mine);
    if mine.is_empty() || volatile_deep(test) || matches!(test, Expr::Row { .. }) {
        return None;
    }
    let visible: Vec<&TargetEntry> = sq.targets.iter().filter(|t| !t.junk).collect();
    if visible.len() != 1 {
        return None;
    }
    let out_ty = visible[0].expr.ty();
    let qual = Expr::Func {
        func: op.clone(),
        args: vec![test.clone(), Expr::Var(Var { rte, col: 0, levels_up: 0, ty: out_ty })],
        ty: tusk_types::SqlType::new(tusk_types::oid::BOOL),
    };
    Some(SemiJoin { kind: JoinKind::Semi, query: sq.clone(), width: 1, rte, quals: vec![qual] })
}

/// Whether `e` reads a column of the query `level` levels out (Vars inside
/// its sublinks counted from their own depth).
fn refers_to_level(e: &Expr, level: u32) -> bool {
    let mut r = Vec::new();
    referenced_rtes(e, level, &mut r);
    !r.is_empty() || refers_cte_level(e, level)
}

/// WITH query references of `level` inside the sublinks of `e` (which
/// `referenced_rtes` does not see).
fn refers_cte_level(e: &Expr, level: u32) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::SubLink { query, .. } = x {
            visit_queries(query, level + 1, &mut |q, depth| {
                for r in &q.rtable {
                    if let RteKind::Cte { levels_up, .. } = r.kind {
                        if levels_up == depth {
                            found = true;
                        }
                    }
                }
            });
        }
    });
    found
}

/// Calls `f(query, depth)` for `q` and every query nested in it.
fn visit_queries(q: &Query, depth: u32, f: &mut dyn FnMut(&Query, u32)) {
    f(q, depth);
    for_each_expr(q, &mut |e| {
        e.walk(&mut |x| {
            if let Expr::SubLink { query, .. } = x {
                visit_queries(query, depth + 1, f);
            }
        })
    });
    for r in &q.rtable {
        if let RteKind::Subquery(sq) = &r.kind {
            visit_queries(sq, depth + 1, f);
        }
    }
    for c in &q.ctes {
        visit_queries(&c.query, depth + 1, f);
        if let Some((a, b, _)) = &c.recursive_parts {
            visit_queries(a, depth + 1, f);
            visit_queries(b, depth + 1, f);
        }
    }
    if let Some(ins) = &q.insert {
        visit_queries(&ins.source, depth + 1, f);
    }
}

/// The expressions of one query level (not those of queries nested in it).
fn for_each_expr(q: &Query, f: &mut dyn FnMut(&Expr)) {
    for t in q.targets.iter().chain(q.returning.iter()) {
        f(&t.expr);
    }
    for e in q.quals.iter().chain(q.having.iter()).chain(q.limit.iter()).chain(q.offset.iter()).chain(q.group_by.iter()) {
        f(e);
    }
    for (_, e) in &q.update_set {
        f(e);
    }
    for (_, e) in &q.view_checks {
        f(e);
    }
    fn from(fi: &FromItem, f: &mut dyn FnMut(&Expr)) {
        if let FromItem::Join { left, right, quals, .. } = fi {
            from(left, f);
            from(right, f);
            if let Some(q) = quals {
                f(q);
            }
        }
    }
    for fi in &q.from {
        from(fi, f);
    }
    for r in &q.rtable {
        match &r.kind {
            RteKind::Values(rows) => rows.iter().flatten().for_each(&mut *f),
            RteKind::Function { call, .. } => f(call),
            RteKind::Join { columns, .. } => columns.iter().for_each(&mut *f),
            _ => {}
        }
    }
}

/// Whether `e` calls a volatile function, inside its sublinks too (their
/// results could then differ between a run per row and one run).
pub(super) fn volatile_deep(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| match x {
        Expr::Func { func, .. } if func.volatility == 'v' => found = true,
        Expr::SubLink { query, .. } => found |= query_volatile(query),
        Expr::SubPlan(_) => found = true,
        _ => {}
    });
    found
}

/// Whether a query calls a volatile function anywhere.
pub(super) fn query_volatile(q: &Query) -> bool {
    let mut found = false;
    visit_queries(q, 0, &mut |q, _| {
        for_each_expr(q, &mut |e| {
            e.walk(&mut |x| match x {
                Expr::Func { func, .. } if func.volatility == 'v' => found = true,
                Expr::Agg(a) if a.args.iter().any(|x| x.any(&mut |y| matches!(y, Expr::Func { func, .. } if func.volatility == 'v'))) => found = true,
                _ => {}
            })
        });
        if q.row_lock || q.command != CommandKind::Select || q.ctes.iter().any(|c| c.modifying) {
            found = true;
        }
    });
    found
}

/// Rewrites every Var of `e` (at nesting `depth` below the level `e`
/// belongs to, Vars of its sublinks at their own depth) by `f(var, depth)`;
/// WITH query references that reach past the moved level come one level
/// nearer. Used to move an expression out of a subquery into its parent.
fn relevel_expr(e: Expr, depth: u32, f: &mut dyn FnMut(Var, u32) -> Var) -> Expr {
    rewrite_deep(
        e,
        depth,
        &mut |x, d| match x {
            Expr::Var(v) => Expr::Var(f(v, d)),
            other => other,
        },
        &mut |levels_up, d| {
            if *levels_up > d {
                *levels_up -= 1;
            }
        },
    )
}

/// Rewrites every node of `e` bottom-up by `f(node, depth)`, the
/// expressions of the queries nested in it included (their depth one
/// more than their sublink's or FROM item's); `cte(levels_up, depth)` may
/// adjust each WITH query reference of those queries.
pub(super) fn rewrite_deep(e: Expr, depth: u32, f: &mut dyn FnMut(Expr, u32) -> Expr, cte: &mut dyn FnMut(&mut u32, u32)) -> Expr {
    let e = match e {
        Expr::SubLink { kind, test, op, mut query, ty } => {
            let test = test.map(|t| Box::new(rewrite_deep(*t, depth, f, cte)));
            rewrite_query_deep(&mut query, depth + 1, f, cte);
            Expr::SubLink { kind, test, op, query, ty }
        }
        other => other.map_children(&mut |c| rewrite_deep(c, depth, f, cte)),
    };
    f(e, depth)
}

/// `rewrite_deep` over every expression of query `q` at `depth`.
pub(super) fn rewrite_query_deep(q: &mut Query, depth: u32, f: &mut dyn FnMut(Expr, u32) -> Expr, cte: &mut dyn FnMut(&mut u32, u32)) {
    let ex = |e: &mut Expr, f: &mut dyn FnMut(Expr, u32) -> Expr, cte: &mut dyn FnMut(&mut u32, u32)| {
        let taken = std::mem::replace(e, Expr::Const(Datum::Null, tusk_types::SqlType::new(0)));
        *e = rewrite_deep(taken, depth, f, cte);
    };
    for t in q.targets.iter_mut().chain(q.returning.iter_mut()) {
        ex(&mut t.expr, f, cte);
    }
    for e in q.quals.iter_mut().chain(q.having.iter_mut()).chain(q.limit.iter_mut()).chain(q.offset.iter_mut()).chain(q.group_by.iter_mut()) {
        ex(e, f, cte);
    }
    for (_, e) in q.update_set.iter_mut() {
        ex(e, f, cte);
    }
    for (_, e) in q.view_checks.iter_mut() {
        ex(e, f, cte);
    }
    fn from(fi: &mut FromItem, ex: &mut dyn FnMut(&mut Expr)) {
        if let FromItem::Join { left, right, quals, .. } = fi {
            from(left, ex);
            from(right, ex);
            if let Some(q) = quals {
                ex(q);
            }
        }
    }
    for fi in q.from.iter_mut() {
        from(fi, &mut |e| ex(e, f, cte));
    }
    for r in q.rtable.iter_mut() {
        match &mut r.kind {
            RteKind::Values(rows) => rows.iter_mut().flatten().for_each(|e| ex(e, f, cte)),
            RteKind::Function { call, .. } => ex(call, f, cte),
            RteKind::Join { columns, .. } => columns.iter_mut().for_each(|e| ex(e, f, cte)),
            RteKind::Subquery(sq) => rewrite_query_deep(Arc::make_mut(sq), depth + 1, f, cte),
            RteKind::Cte { levels_up, .. } => cte(levels_up, depth),
            RteKind::Relation(_) | RteKind::NamedTuplestore { .. } => {}
        }
    }
    for c in q.ctes.iter_mut() {
        rewrite_query_deep(&mut c.query, depth + 1, f, cte);
        if let Some((a, b, _)) = &mut c.recursive_parts {
            rewrite_query_deep(a, depth + 1, f, cte);
            rewrite_query_deep(b, depth + 1, f, cte);
        }
    }
    if let Some(ins) = &mut q.insert {
        rewrite_query_deep(&mut ins.source, depth + 1, f, cte);
    }
}
