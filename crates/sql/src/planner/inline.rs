//! Inlining of SQL functions into the query that calls them, before it is
//! planned, as PostgreSQL's inline_function and
//! inline_set_returning_function do (clauses.c):
//!
//! - a call of a simple scalar SQL function, whose body is one `SELECT
//!   expr` over no table, becomes that expression with the call's
//!   arguments in place of the parameters;
//! - a set-returning SQL function in FROM, STABLE or IMMUTABLE and not
//!   STRICT, whose body is one SELECT, becomes that SELECT as a subquery,
//!   which the planner can then pull up and plan with the rest.
//!
//! Either way the call's per-row function-manager round trip (a fresh
//! statement run per call) is gone, and EXPLAIN shows what really runs.
//! The conditions are PostgreSQL's: whatever could change the result
//! (volatility, strictness, arguments evaluated more or fewer times) keeps
//! the call as it is.

use std::sync::Arc;

use tusk_types::{oid, PgResult};

use crate::catalog::function::Function;
use crate::catalog::DbCatalog;
use crate::expr::Expr;
use crate::query::{CommandKind, Distinct, FromItem, Query, RteKind};

/// Analyzes a function's body (one statement, parameters as `$n`), or
/// None when it is not a single analyzable statement.
pub type BodyAnalyzer<'a> = dyn Fn(&Function) -> Option<Query> + 'a;

/// Inlines what can be inlined in `q` and the queries inside it.
pub fn inline_functions(q: &mut Query, catalog: &DbCatalog, analyze: &BodyAnalyzer) -> PgResult<()> {
    // Nothing to do without user-defined SQL functions (the common case).
    if !catalog.functions.values().any(|f| f.language == "sql") {
        return Ok(());
    }
    Inliner { catalog, analyze, depth: 0 }.query(q)
}

/// How deep inlining may nest (a function whose body calls another one
/// that is inlined too); past it, calls stay calls. Recursion is caught
/// earlier: a function is never inlined into its own expansion.
const MAX_DEPTH: usize = 16;

struct Inliner<'a> {
    catalog: &'a DbCatalog,
    analyze: &'a BodyAnalyzer<'a>,
    depth: usize,
}

impl Inliner<'_> {
    fn query(&mut self, q: &mut Query) -> PgResult<()> {
        crate::stack::check()?;
        query_parts_mut(q, &mut |part| match part {
            Part::Expr(e) => self.expr(e),
            Part::Query(sq) => self.query(sq),
        })?;
        // A set-returning function in FROM, its arguments inlined already,
        // may become its body.
        for rte in q.rtable.iter_mut() {
            if let RteKind::Function { call, ordinality: false, .. } = &rte.kind {
                if let Some(sq) = self.set_returning(call) {
                    rte.kind = RteKind::Subquery(Arc::new(sq));
                }
            }
        }
        Ok(())
    }

    /// Rewrites `e` bottom-up: arguments first, then the call.
    fn expr(&mut self, e: &mut Expr) -> PgResult<()> {
        crate::stack::check()?;
        let mut result = Ok(());
        let taken = std::mem::replace(e, Expr::Const(tusk_types::Datum::Null, tusk_types::SqlType::new(oid::UNKNOWN)));
        *e = taken.rewrite(&mut |x| match x {
            Expr::SubLink { kind, test, op, mut query, ty } => {
                if result.is_ok() {
                    result = self.query(&mut query);
                }
                Expr::SubLink { kind, test, op, query, ty }
            }
            Expr::Func { func, args, ty } => match self.scalar(&func, &args, ty) {
                Some(inlined) => inlined,
                None => Expr::Func { func, args, ty },
            },
            other => other,
        });
        result
    }

    /// inline_function: the body's expression for a call, or None.
    fn scalar(&mut self, func: &crate::expr::FuncRef, args: &[Expr], ty: tusk_types::SqlType) -> Option<Expr> {
        let f = self.catalog.functions.get(&func.oid)?;
        if f.language != "sql" || f.kind != 'f' || f.retset || f.security_definer || !f.config.is_empty() || f.ret_type == oid::RECORD {
            return None;
        }
        if f.input_types().len() != args.len() || f.params.iter().any(|p| crate::commands::function::is_polymorphic(p.type_oid)) {
            return None;
        }
        if self.depth >= MAX_DEPTH {
            return None;
        }
        let body = (self.analyze)(f)?;
        if !is_simple_select(&body) {
            return None;
        }
        let [target] = body.targets.as_slice() else { return None };
        let mut body_expr = target.expr.clone();
        if body_expr.ty().oid != ty.oid || contains_sublink(&body_expr) || calls(&body_expr, f.oid) {
            return None;
        }
        // Not more volatile than the function says it is; strict only if
        // the function is.
        match f.volatility {
            'i' if !all_functions(&body_expr, &|v| v == 'i') => return None,
            's' if !all_functions(&body_expr, &|v| v != 'v') => return None,
            _ => {}
        }
        if f.strict && !is_strict(&body_expr) {
            return None;
        }
        // Each argument as often as the body reads its parameter.
        let mut uses = vec![0usize; args.len()];
        body_expr.walk(&mut |x| {
            if let Expr::Param(i, _) = x {
                if let Some(u) = uses.get_mut(*i) {
                    *u += 1;
                }
            }
        });
        for (arg, &n) in args.iter().zip(&uses) {
            if contains_context_dependent(arg) {
                return None;
            }
            match n {
                // An unread argument of a strict function could still make
                // the call NULL.
                0 if f.strict => return None,
                0 | 1 => {}
                _ => {
                    if contains_sublink(arg) || expensive(arg) || !all_functions(arg, &|v| v != 'v') {
                        return None;
                    }
                }
            }
        }
        body_expr = body_expr.rewrite(&mut |x| match x {
            Expr::Param(i, t) => match args.get(i) {
                Some(a) => a.clone(),
                None => Expr::Param(i, t),
            },
            other => other,
        });
        // The expansion may call more SQL functions.
        self.depth += 1;
        let nested = self.expr(&mut body_expr);
        self.depth -= 1;
        nested.ok()?;
        Some(body_expr)
    }

    /// inline_set_returning_function: the body's SELECT for a call in
    /// FROM, or None.
    fn set_returning(&mut self, call: &Expr) -> Option<Query> {
        let Expr::Func { func, args, ty } = call else { return None };
        let f = self.catalog.functions.get(&func.oid)?;
        if f.language != "sql" || f.kind != 'f' || !f.retset || f.strict || f.volatility == 'v' || f.security_definer || !f.config.is_empty() {
            return None;
        }
        if f.ret_type == oid::VOID || f.ret_type == oid::RECORD || f.input_types().len() != args.len() {
            return None;
        }
        if f.params.iter().any(|p| crate::commands::function::is_polymorphic(p.type_oid)) {
            return None;
        }
        // Arguments are evaluated once per call: inlined, they could be
        // evaluated again for each use. Only values that cannot change,
        // and no column of the calling query (kept simple: the subquery's
        // levels would shift).
        if args.iter().any(|a| contains_sublink(a) || !all_functions(a, &|v| v != 'v') || reads_vars(a) || contains_context_dependent(a)) {
            return None;
        }
        let body = (self.analyze)(f)?;
        if body.command != CommandKind::Select || body.row_lock {
            return None;
        }
        // The SELECT returns the one column the function does.
        let outputs: Vec<&crate::query::TargetEntry> = body.targets.iter().filter(|t| !t.junk).collect();
        let [out] = outputs.as_slice() else { return None };
        if out.expr.ty().oid != ty.oid {
            return None;
        }
        let mut sq = body;
        substitute_params(&mut sq, args);
        self.depth += 1;
        let nested = self.query(&mut sq);
        self.depth -= 1;
        nested.ok()?;
        Some(sq)
    }
}

/// A SELECT of one expression over no table: a body inline_function takes.
fn is_simple_select(q: &Query) -> bool {
    q.command == CommandKind::Select
        && q.rtable.is_empty()
        && q.from.is_empty()
        && q.quals.is_none()
        && q.group_by.is_empty()
        && q.having.is_none()
        && !q.has_aggs
        && q.sort.is_empty()
        && q.distinct == Distinct::None
        && q.limit.is_none()
        && q.offset.is_none()
        && q.set_op.is_none()
        && q.ctes.is_empty()
        && !q.row_lock
        && q.targets.iter().all(|t| !t.junk)
}

fn contains_sublink(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::SubLink { .. } | Expr::SubPlan(_) | Expr::Agg(_) | Expr::Window(_)));
    found
}

/// contain_context_dependent_node: a CASE's test value belongs where it is.
fn contains_context_dependent(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::CaseTest(_)));
    found
}

fn reads_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Var(_) | Expr::OuterParam(..) | Expr::Column(..)));
    found
}

/// Whether `e` calls the function `oid` (a function never inlines into
/// itself).
fn calls(e: &Expr, oid: tusk_types::Oid) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Func { func, .. } if func.oid == oid));
    found
}

/// Whether every function `e` calls has a volatility `ok` accepts.
fn all_functions(e: &Expr, ok: &dyn Fn(char) -> bool) -> bool {
    let mut all = true;
    e.walk(&mut |x| match x {
        Expr::Func { func, .. } => all &= ok(func.volatility),
        Expr::NullIf { eq, .. } | Expr::Distinct { eq, .. } | Expr::ScalarArrayOp { op: eq, .. } => all &= ok(eq.volatility),
        _ => {}
    });
    all
}

/// contain_nonstrict_functions' negation: NULL in any input makes NULL.
fn is_strict(e: &Expr) -> bool {
    let mut strict = true;
    e.walk(&mut |x| match x {
        Expr::Func { func, .. } => strict &= func.strict,
        Expr::Const(..) | Expr::Param(..) | Expr::Var(_) | Expr::Cast { .. } | Expr::FieldSelect { .. } | Expr::Subscript { .. } => {}
        _ => strict = false,
    });
    strict
}

/// "Expensive" as PostgreSQL counts it: more than ten operators.
fn expensive(e: &Expr) -> bool {
    let mut calls = 0;
    e.walk(&mut |x| {
        if matches!(x, Expr::Func { .. } | Expr::ScalarArrayOp { .. } | Expr::Distinct { .. } | Expr::NullIf { .. }) {
            calls += 1;
        }
    });
    calls > 10
}

/// Puts the call's arguments in place of `$n` throughout a body query
/// (arguments hold no column references, so levels do not matter).
fn substitute_params(q: &mut Query, args: &[Expr]) {
    let _ = query_parts_mut(q, &mut |part| {
        match part {
            Part::Expr(e) => {
                let taken = std::mem::replace(e, Expr::Const(tusk_types::Datum::Null, tusk_types::SqlType::new(oid::UNKNOWN)));
                *e = taken.rewrite(&mut |x| match x {
                    Expr::Param(i, t) => args.get(i).cloned().unwrap_or(Expr::Param(i, t)),
                    Expr::SubLink { kind, test, op, mut query, ty } => {
                        substitute_params(&mut query, args);
                        Expr::SubLink { kind, test, op, query, ty }
                    }
                    other => other,
                });
            }
            Part::Query(sq) => substitute_params(sq, args),
        }
        Ok(())
    });
}

/// A piece of a query `query_parts_mut` hands out.
enum Part<'q> {
    Expr(&'q mut Expr),
    Query(&'q mut Query),
}

/// Hands `f` every expression of `q` itself (range table entries' too,
/// but not those inside sublinks, which `f` meets as expressions) and
/// every query directly inside it: subqueries in FROM (set operations'
/// branches among them), WITH queries, an INSERT's source.
fn query_parts_mut(q: &mut Query, f: &mut dyn FnMut(Part<'_>) -> PgResult<()>) -> PgResult<()> {
    for rte in q.rtable.iter_mut() {
        match &mut rte.kind {
            RteKind::Subquery(sq) => f(Part::Query(Arc::make_mut(sq)))?,
            RteKind::Values(rows) => {
                for e in rows.iter_mut().flatten() {
                    f(Part::Expr(e))?;
                }
            }
            RteKind::Function { call, .. } => f(Part::Expr(call))?,
            RteKind::Join { columns, .. } => {
                for e in columns.iter_mut() {
                    f(Part::Expr(e))?;
                }
            }
            RteKind::Relation(_) | RteKind::Cte { .. } | RteKind::NamedTuplestore { .. } => {}
        }
    }
    for c in q.ctes.iter_mut() {
        f(Part::Query(&mut c.query))?;
        if let Some((a, b, _)) = &mut c.recursive_parts {
            f(Part::Query(a))?;
            f(Part::Query(b))?;
        }
    }
    fn join_quals(item: &mut FromItem, f: &mut dyn FnMut(Part<'_>) -> PgResult<()>) -> PgResult<()> {
        if let FromItem::Join { left, right, quals, .. } = item {
            join_quals(left, f)?;
            join_quals(right, f)?;
            if let Some(q) = quals {
                f(Part::Expr(q))?;
            }
        }
        Ok(())
    }
    for item in q.from.iter_mut() {
        join_quals(item, f)?;
    }
    let exprs = q
        .targets
        .iter_mut()
        .chain(q.returning.iter_mut())
        .map(|t| &mut t.expr)
        .chain(q.quals.iter_mut())
        .chain(q.group_by.iter_mut())
        .chain(q.having.iter_mut())
        .chain(q.limit.iter_mut())
        .chain(q.offset.iter_mut())
        .chain(q.update_set.iter_mut().map(|(_, e)| e))
        .chain(q.view_checks.iter_mut().map(|(_, e)| e));
    for e in exprs {
        f(Part::Expr(e))?;
    }
    if let Some(ins) = &mut q.insert {
        f(Part::Query(&mut ins.source))?;
    }
    Ok(())
}
