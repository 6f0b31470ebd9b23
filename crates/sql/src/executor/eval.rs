//! Expression evaluation over a row, with SQL's three-valued logic and
//! NULL propagation for strict functions.

use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::spill::{hash_normalize, HashKey};
use super::{ExecCx, SubPlanCache};
use crate::expr::{BoolOp, BoolTestKind, Expr, FuncRef, SubLinkKind, SubPlan};
use crate::functions::{cast, FnCtx, ScalarFn};

/// Evaluates `e` over `row`.
pub fn eval(e: &Expr, row: &[Datum], cx: &ExecCx) -> PgResult<Datum> {
    eval_case(e, row, cx, None)
}

/// Evaluates a predicate: NULL counts as false.
pub fn eval_pred(e: &Expr, row: &[Datum], cx: &ExecCx) -> PgResult<bool> {
    Ok(matches!(eval(e, row, cx)?, Datum::Bool(true)))
}

pub(crate) fn call(func: &FuncRef, args: &[Datum], arg_exprs: &[Expr], ret: tusk_types::SqlType, cx: &ExecCx) -> PgResult<Datum> {
    if func.strict && args.iter().any(Datum::is_null) {
        return Ok(Datum::Null);
    }
    // Most calls have few arguments: their types on the stack, not the heap.
    let mut inline_types = [tusk_types::SqlType::new(tusk_types::oid::UNKNOWN); 4];
    let heap_types: Vec<tusk_types::SqlType>;
    let types: &[tusk_types::SqlType] = if arg_exprs.len() <= inline_types.len() {
        for (t, a) in inline_types.iter_mut().zip(arg_exprs) {
            *t = a.ty();
        }
        &inline_types[..arg_exprs.len()]
    } else {
        heap_types = arg_exprs.iter().map(|a| a.ty()).collect();
        &heap_types
    };
    let fcx = FnCtx { arg_types: types, ret, env: cx.env, func: func.oid };
    match func.imp {
        ScalarFn::Plain(f) => f(args, &fcx),
        ScalarFn::Set(_) => Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("set-valued function {} called in context that cannot accept a set", func.name),
        )),
    }
}

/// The hot node kinds first, in a function with a small frame; the rest
/// in `eval_node`, whose frame (every kind's locals) would otherwise be
/// set up for each constant and parameter of a tree.
#[inline]
fn eval_case(e: &Expr, row: &[Datum], cx: &ExecCx, case_value: Option<&Datum>) -> PgResult<Datum> {
    match e {
        Expr::Const(d, _) => Ok(d.clone()),
        Expr::Param(i, _) if *i < cx.params.len() => Ok(cx.params[*i].clone()),
        Expr::Column(i, _) if *i < row.len() => Ok(row[*i].clone()),
        Expr::Func { func, args, ty } if args.len() <= 3 => eval_small_func(func, args, *ty, row, cx, case_value),
        _ => eval_node(e, row, cx, case_value),
    }
}

/// A call of up to three arguments (operators, most functions): the
/// arguments on the stack.
#[inline(never)]
fn eval_small_func(func: &FuncRef, args: &[Expr], ty: tusk_types::SqlType, row: &[Datum], cx: &ExecCx, case_value: Option<&Datum>) -> PgResult<Datum> {
    let mut vals = [Datum::Null, Datum::Null, Datum::Null];
    for (slot, a) in vals.iter_mut().zip(args) {
        let v = eval_case(a, row, cx, case_value)?;
        if func.strict && v.is_null() {
            return Ok(Datum::Null);
        }
        *slot = v;
    }
    let out = call(func, &vals[..args.len()], args, ty, cx)?;
    crate::functions::limits::check_value(&out)?;
    Ok(out)
}

#[inline(never)]
fn eval_node(e: &Expr, row: &[Datum], cx: &ExecCx, case_value: Option<&Datum>) -> PgResult<Datum> {
    match e {
        Expr::Const(d, _) => Ok(d.clone()),
        Expr::Column(i, _) => row.get(*i).cloned().ok_or_else(|| PgError::internal(format!("column {i} out of range"))),
        Expr::Param(i, _) => cx.params.get(*i).cloned().ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_PARAMETER, format!("there is no parameter ${}", i + 1))
        }),
        Expr::OuterParam(i, _) => cx.outer.get(*i).cloned().ok_or_else(|| PgError::internal("outer parameter out of range")),
        Expr::CaseTest(_) => Ok(case_value.cloned().unwrap_or(Datum::Null)),
        Expr::Func { func, args, ty } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                let v = eval_case(a, row, cx, case_value)?;
                if func.strict && v.is_null() {
                    return Ok(Datum::Null);
                }
                vals.push(v);
            }
            let out = call(func, &vals, args, *ty, cx)?;
            crate::functions::limits::check_value(&out)?;
            Ok(out)
        }
        Expr::Cast { arg, spec } => {
            let v = eval_case(arg, row, cx, case_value)?;
            if v.is_null() {
                return Ok(Datum::Null);
            }
            cast::cast_datum_env(v, spec.from, spec.to, spec.explicit, cx.env)
        }
        Expr::Bool { op, args } => match op {
            BoolOp::Not => Ok(match eval_case(&args[0], row, cx, case_value)? {
                Datum::Bool(b) => Datum::Bool(!b),
                _ => Datum::Null,
            }),
            BoolOp::And => {
                let mut saw_null = false;
                for a in args {
                    match eval_case(a, row, cx, case_value)? {
                        Datum::Bool(false) => return Ok(Datum::Bool(false)),
                        Datum::Bool(true) => {}
                        _ => saw_null = true,
                    }
                }
                Ok(if saw_null { Datum::Null } else { Datum::Bool(true) })
            }
            BoolOp::Or => {
                let mut saw_null = false;
                for a in args {
                    match eval_case(a, row, cx, case_value)? {
                        Datum::Bool(true) => return Ok(Datum::Bool(true)),
                        Datum::Bool(false) => {}
                        _ => saw_null = true,
                    }
                }
                Ok(if saw_null { Datum::Null } else { Datum::Bool(false) })
            }
        },
        Expr::NullTest { arg, is_null } => {
            let v = eval_case(arg, row, cx, case_value)?;
            // A row IS NULL when all its fields are; IS NOT NULL when none are.
            let (all_null, none_null) = match &v {
                Datum::Record(fields) => (fields.iter().all(Datum::is_null), fields.iter().all(|f| !f.is_null())),
                Datum::Null => (true, false),
                _ => (false, true),
            };
            Ok(Datum::Bool(if *is_null { all_null } else { none_null }))
        }
        Expr::BoolTest { arg, kind } => {
            let v = eval_case(arg, row, cx, case_value)?.as_bool();
            Ok(Datum::Bool(match kind {
                BoolTestKind::IsTrue => v == Some(true),
                BoolTestKind::IsNotTrue => v != Some(true),
                BoolTestKind::IsFalse => v == Some(false),
                BoolTestKind::IsNotFalse => v != Some(false),
                BoolTestKind::IsUnknown => v.is_none(),
                BoolTestKind::IsNotUnknown => v.is_some(),
            }))
        }
        Expr::Case { arg, whens, default, .. } => {
            let test = match arg {
                Some(a) => Some(eval_case(a, row, cx, case_value)?),
                None => None,
            };
            for (cond, result) in whens {
                let c = eval_case(cond, row, cx, test.as_ref().or(case_value))?;
                if matches!(c, Datum::Bool(true)) {
                    return eval_case(result, row, cx, case_value);
                }
            }
            eval_case(default, row, cx, case_value)
        }
        Expr::Coalesce { args, .. } => {
            for a in args {
                let v = eval_case(a, row, cx, case_value)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Ok(Datum::Null)
        }
        Expr::MinMax { is_greatest, args, .. } => {
            let mut best: Option<Datum> = None;
            for a in args {
                let v = eval_case(a, row, cx, case_value)?;
                if v.is_null() {
                    continue;
                }
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = crate::functions::compare_values(&v, &b);
                        if (*is_greatest && o == Ordering::Greater) || (!*is_greatest && o == Ordering::Less) {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            Ok(best.unwrap_or(Datum::Null))
        }
        Expr::NullIf { args, eq, .. } => {
            let a = eval_case(&args.0, row, cx, case_value)?;
            let b = eval_case(&args.1, row, cx, case_value)?;
            if a.is_null() || b.is_null() {
                return Ok(a);
            }
            let exprs = [args.0.clone(), args.1.clone()];
            match call(eq, &[a.clone(), b], &exprs, tusk_types::SqlType::new(tusk_types::oid::BOOL), cx)? {
                Datum::Bool(true) => Ok(Datum::Null),
                _ => Ok(a),
            }
        }
        Expr::Distinct { args, eq, negated } => {
            let a = eval_case(&args.0, row, cx, case_value)?;
            let b = eval_case(&args.1, row, cx, case_value)?;
            let distinct = match (a.is_null(), b.is_null()) {
                (true, true) => false,
                (true, false) | (false, true) => true,
                _ => {
                    let exprs = [args.0.clone(), args.1.clone()];
                    !matches!(call(eq, &[a, b], &exprs, tusk_types::SqlType::new(tusk_types::oid::BOOL), cx)?, Datum::Bool(true))
                }
            };
            Ok(Datum::Bool(distinct != *negated))
        }
        Expr::ScalarArrayOp { op, any, args } => {
            let left = eval_case(&args.0, row, cx, case_value)?;
            let arr = eval_case(&args.1, row, cx, case_value)?;
            let Datum::Array(arr) = arr else { return Ok(Datum::Null) };
            let exprs = [args.0.clone(), Expr::Const(Datum::Null, tusk_types::SqlType::new(arr.element_type))];
            scalar_array_op(op, *any, &left, arr.elements.iter(), &exprs, cx)
        }
        Expr::Row { args, .. } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval_case(a, row, cx, case_value)?);
            }
            Ok(Datum::Record(Arc::new(vals)))
        }
        Expr::Array { elem, elements, ty } => {
            let mut vals = Vec::with_capacity(elements.len());
            for el in elements {
                vals.push(eval_case(el, row, cx, case_value)?);
            }
            // ARRAY[ARRAY[...], ...]: items of the array type itself are
            // sub-arrays of a multidimensional array.
            if elements.first().is_some_and(|e| e.ty().oid == ty.oid) {
                let out = build_multidim(elem.oid, &vals)?;
                crate::functions::limits::check_value(&out)?;
                return Ok(out);
            }
            crate::functions::limits::check_array(&vals)?;
            Ok(Datum::Array(Arc::new(Array::from_vec(elem.oid, vals))))
        }
        Expr::Subscript { arg, indexes, slice, .. } => {
            let v = eval_case(arg, row, cx, case_value)?;
            let Datum::Array(a) = v else { return Ok(Datum::Null) };
            let mut idx = Vec::with_capacity(indexes.len());
            for (lo, hi) in indexes {
                let lo = match lo {
                    Some(e) => Some(eval_case(e, row, cx, case_value)?),
                    None => None,
                };
                let hi = match hi {
                    Some(e) => Some(eval_case(e, row, cx, case_value)?),
                    None => None,
                };
                // A NULL subscript makes the fetch NULL.
                if lo.as_ref().map(Datum::is_null).unwrap_or(false) || hi.as_ref().map(Datum::is_null).unwrap_or(false) {
                    return Ok(Datum::Null);
                }
                idx.push((lo.and_then(|d| d.as_i64()), hi.and_then(|d| d.as_i64())));
            }
            if *slice {
                Ok(Datum::Array(Arc::new(a.slice(&idx))))
            } else {
                let at: Vec<i64> = idx.iter().map(|(_, hi)| hi.unwrap_or(0)).collect();
                Ok(a.element_at(&at))
            }
        }
        Expr::SubscriptAssign { arg, indexes, slice, value, ty } => {
            let base = eval_case(arg, row, cx, case_value)?;
            let mut idx = Vec::with_capacity(indexes.len());
            for (lo, hi) in indexes {
                let bound = |e: &Option<Expr>| -> PgResult<Option<i64>> {
                    match e {
                        None => Ok(None),
                        Some(e) => match eval_case(e, row, cx, case_value)? {
                            Datum::Null => Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "array subscript in assignment must not be null")),
                            d => Ok(d.as_i64()),
                        },
                    }
                };
                let lo = bound(lo)?;
                let hi = bound(hi)?;
                idx.push((lo, hi));
            }
            let v = eval_case(value, row, cx, case_value)?;
            // A NULL array takes the assignment as an empty one does.
            let a = match base {
                Datum::Array(a) => a,
                _ => Arc::new(Array::empty(crate::catalog::builtins().element_of(ty.oid))),
            };
            let out = if *slice {
                match &v {
                    // Assigning a NULL slice leaves the array as it is.
                    Datum::Array(src) => a.with_slice(&idx, src)?,
                    _ => return Ok(Datum::Array(a)),
                }
            } else {
                let at: Vec<i64> = idx.iter().map(|(_, hi)| hi.unwrap_or(0)).collect();
                a.with_element(&at, v)?
            };
            crate::functions::limits::check_array(&out.elements)?;
            Ok(Datum::Array(Arc::new(out)))
        }
        Expr::CoerceToDomain { arg, domain, not_null, checks, .. } => {
            let v = eval_case(arg, row, cx, case_value)?;
            let name = || crate::analyzer::types::format_type(crate::catalog::builtins(), *domain, -1);
            if v.is_null() && *not_null {
                return Err(PgError::new(sqlstate::NOT_NULL_VIOLATION, format!("domain {} does not allow null values", name())));
            }
            // ExecEvalConstraintCheck: VALUE is the value; NULL passes.
            for (cname, check) in checks {
                if let Datum::Bool(false) = eval_case(check, row, cx, Some(&v))? {
                    return Err(PgError::new(sqlstate::CHECK_VIOLATION, format!("value for domain {} violates check constraint \"{cname}\"", name())));
                }
            }
            Ok(v)
        }
        Expr::FieldSelect { arg, field, .. } => match eval_case(arg, row, cx, case_value)? {
            Datum::Record(r) => Ok(r.get(*field).cloned().unwrap_or(Datum::Null)),
            _ => Ok(Datum::Null),
        },
        Expr::SubPlan(sp) => eval_subplan(sp, row, cx, case_value),
        Expr::Var(_) | Expr::SubLink { .. } | Expr::Agg(_) | Expr::Window(_) => Err(PgError::internal(format!("unplanned expression {e:?}"))),
    }
}

/// `left op ANY/ALL (elements)` with SQL NULL semantics.
fn scalar_array_op<'d>(
    op: &FuncRef,
    any: bool,
    left: &Datum,
    elements: impl Iterator<Item = &'d Datum>,
    exprs: &[Expr],
    cx: &ExecCx,
) -> PgResult<Datum> {
    let mut saw_null = false;
    let mut empty = true;
    for (n, el) in elements.enumerate() {
        empty = false;
        // Per outer row, a pass over a whole array or subquery result.
        if n % 4096 == 4095 {
            cx.check()?;
        }
        if left.is_null() || el.is_null() {
            saw_null = true;
            continue;
        }
        match call(op, &[left.clone(), el.clone()], exprs, tusk_types::SqlType::new(tusk_types::oid::BOOL), cx)? {
            Datum::Bool(true) if any => return Ok(Datum::Bool(true)),
            Datum::Bool(false) if !any => return Ok(Datum::Bool(false)),
            Datum::Bool(_) => {}
            _ => saw_null = true,
        }
    }
    if empty {
        return Ok(Datum::Bool(!any));
    }
    Ok(if saw_null { Datum::Null } else { Datum::Bool(!any) })
}

/// ExecEvalArrayExpr for nested arrays: the sub-arrays must agree in
/// dimensions and bounds; NULL and empty ones are allowed only when all are.
fn build_multidim(elem: u32, subs: &[Datum]) -> PgResult<Datum> {
    let mismatch = || PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "multidimensional arrays must have array expressions with matching dimensions");
    let mut first: Option<&Array> = None;
    let mut have_empty = false;
    let mut elements = Vec::new();
    for s in subs {
        let Datum::Array(a) = s else {
            have_empty = true;
            continue;
        };
        if a.dims.is_empty() {
            have_empty = true;
            continue;
        }
        match first {
            None => {
                if a.dims.len() + 1 > tusk_types::array::MAX_DIMS {
                    return Err(tusk_types::array::too_many_dims(a.dims.len() + 1));
                }
                first = Some(a);
            }
            Some(f) if f.dims != a.dims => return Err(mismatch()),
            Some(_) => {}
        }
        elements.extend(a.elements.iter().cloned());
    }
    let Some(first) = first else {
        return Ok(Datum::Array(Arc::new(Array::empty(elem))));
    };
    if have_empty {
        return Err(mismatch());
    }
    let mut dims = vec![(subs.len() as i32, 1)];
    dims.extend(first.dims.iter().copied());
    Ok(Datum::Array(Arc::new(Array { element_type: elem, dims, elements })))
}

/// Entries a correlated subplan's result cache holds at most.
const CORRELATED_CACHE_ENTRIES: usize = 1 << 16;

/// Whether values equal by `group_eq` are also indistinguishable (same
/// output, same behaviour in any expression), so that a result computed
/// for one stands for the other. Not so for 1.0 and 1.00, -0 and 0, or
/// '1 day' and '24 hours'.
fn identity_key(d: &Datum) -> bool {
    matches!(
        d,
        Datum::Null
            | Datum::Bool(_)
            | Datum::Int2(_)
            | Datum::Int4(_)
            | Datum::Int8(_)
            | Datum::Oid(_)
            | Datum::Text(_)
            | Datum::Bytea(_)
            | Datum::Date(_)
            | Datum::Time(_)
            | Datum::Timestamp(_)
            | Datum::TimestampTz(_)
            | Datum::Uuid(_)
            | Datum::Char(_)
            | Datum::Bits(_)
    )
}

fn eval_subplan(sp: &SubPlan, row: &[Datum], cx: &ExecCx, case_value: Option<&Datum>) -> PgResult<Datum> {
    let correlated = !sp.args.is_empty();
    let test = match &sp.test {
        Some(t) => Some(eval_case(t, row, cx, case_value)?),
        None => None,
    };
    if !correlated {
        if let Some(cached) = cx.state.subplans.borrow().get(&sp.id) {
            return finish_subplan(sp, cached, test.as_ref(), cx);
        }
    }
    let mut outer = Vec::with_capacity(sp.args.len());
    for a in &sp.args {
        outer.push(eval_case(a, row, cx, case_value)?);
    }
    // A correlated subplan without volatile parts gives the same result for
    // the same parameters within a statement: remember results by them, so
    // that outer rows repeating a value do not run the subquery again.
    if sp.cache && outer.iter().chain(test.iter()).all(identity_key) {
        let mut key = outer.clone();
        key.extend(test.iter().cloned());
        let key = HashKey::Many(key);
        if let Some(v) = cx.state.correlated.borrow().get(&sp.id).and_then(|m| m.get(&key)) {
            return Ok(v.clone());
        }
        let v = run_subplan(sp, &outer, test, cx)?;
        let mut caches = cx.state.correlated.borrow_mut();
        let m = caches.entry(sp.id).or_default();
        if m.len() < CORRELATED_CACHE_ENTRIES {
            m.insert(key, v.clone());
        }
        return Ok(v);
    }
    run_subplan(sp, &outer, test, cx)
}

/// Runs a subplan with the given parameters (none: uncorrelated, and the
/// result is kept for the rest of the statement).
fn run_subplan(sp: &SubPlan, outer: &[Datum], test: Option<Datum>, cx: &ExecCx) -> PgResult<Datum> {
    let correlated = !sp.args.is_empty();
    let sub_cx = cx.with_outer(outer);
    let mut node = super::build(&sp.plan, &sub_cx)?;
    let result = match sp.kind {
        SubLinkKind::Exists => SubPlanCache::Exists(node.next(&sub_cx)?.is_some()),
        SubLinkKind::Expr => {
            let first = node.next(&sub_cx)?;
            match first {
                None => SubPlanCache::Value(Datum::Null),
                Some(mut r) => {
                    if node.next(&sub_cx)?.is_some() {
                        return Err(PgError::new(
                            sqlstate::CARDINALITY_VIOLATION,
                            "more than one row returned by a subquery used as an expression",
                        ));
                    }
                    SubPlanCache::Value(if r.is_empty() { Datum::Null } else { r.swap_remove(0) })
                }
            }
        }
        SubLinkKind::Row => match node.next(&sub_cx)? {
            None => SubPlanCache::Value(Datum::Null),
            Some(r) => {
                if node.next(&sub_cx)?.is_some() {
                    return Err(PgError::new(
                        sqlstate::CARDINALITY_VIOLATION,
                        "more than one row returned by a subquery used as an expression",
                    ));
                }
                SubPlanCache::Value(Datum::Record(Arc::new(r)))
            }
        },
        SubLinkKind::Array => {
            let mut vals = Vec::new();
            while let Some(mut r) = node.next(&sub_cx)? {
                vals.push(r.swap_remove(0));
            }
            let elem = cx.catalog_builtins().element_of(sp.ty.oid);
            // ARRAY(SELECT array-value ...) stacks the arrays into one of a
            // dimension more (accumArrayResultAny), unless the element type
            // is itself array-like (int2vector[]).
            let stacked = cx.catalog_builtins().element_of(elem) == 0 && vals.iter().any(|v| matches!(v, Datum::Array(_)));
            if stacked {
                SubPlanCache::Value(crate::functions::stack_arrays(&vals, elem)?)
            } else {
                SubPlanCache::Value(Datum::Array(Arc::new(Array::from_vec(elem, vals))))
            }
        }
        SubLinkKind::Any | SubLinkKind::All => {
            if correlated {
                // Stream: stop at the first deciding row.
                let op = sp.op.as_ref().ok_or_else(|| PgError::internal("ANY without operator"))?;
                let left = test.clone().unwrap_or(Datum::Null);
                let any = sp.kind == SubLinkKind::Any;
                let mut saw_null = false;
                let exprs = subplan_op_exprs(sp);
                while let Some(r) = node.next(&sub_cx)? {
                    let v = &r[0];
                    if left.is_null() || v.is_null() {
                        saw_null = true;
                        continue;
                    }
                    match call(op, &[left.clone(), v.clone()], &exprs, tusk_types::SqlType::new(tusk_types::oid::BOOL), cx)? {
                        Datum::Bool(true) if any => return Ok(Datum::Bool(true)),
                        Datum::Bool(false) if !any => return Ok(Datum::Bool(false)),
                        Datum::Bool(_) => {}
                        _ => saw_null = true,
                    }
                }
                return Ok(if saw_null { Datum::Null } else { Datum::Bool(!any) });
            }
            let mut vals = Vec::new();
            while let Some(mut r) = node.next(&sub_cx)? {
                vals.push(r.swap_remove(0));
            }
            match sp.op.as_ref() {
                // `x IN (SELECT ...)`: PostgreSQL's hashed subplan, one probe
                // per outer row instead of a pass over the subquery's rows.
                Some(op) if sp.kind == SubLinkKind::Any && hashable_equality(op.oid) => {
                    let mut set = rustc_hash::FxHashSet::default();
                    let mut has_null = false;
                    let empty = vals.is_empty();
                    for v in vals {
                        if v.is_null() {
                            has_null = true;
                        } else {
                            set.insert(HashKey::One(hash_normalize(v)));
                        }
                    }
                    SubPlanCache::Hashed { set: Arc::new(set), has_null, empty }
                }
                _ => SubPlanCache::Rows(vals),
            }
        }
    };
    let out = finish_subplan(sp, &result, test.as_ref(), cx);
    if !correlated {
        cx.state.subplans.borrow_mut().insert(sp.id, result);
    }
    out
}

/// Equality functions whose "equal" is `Datum::group_eq` on values
/// normalized by `hash_normalize`, so a hash set can stand in for calling
/// them: integers of any width, bool, text/varchar/name (deterministic
/// collations compare bytes), oid, numeric, date, timestamp(tz), uuid.
/// (bpchar is not: its equality ignores trailing blanks.)
fn hashable_equality(func: tusk_types::Oid) -> bool {
    matches!(func, 60 | 62 | 63 | 65 | 67 | 158 | 159 | 184 | 467 | 474 | 852 | 1086 | 1152 | 1718 | 1850 | 1856 | 2052 | 2956)
}

fn subplan_op_exprs(sp: &SubPlan) -> [Expr; 2] {
    let lt = sp.test.as_ref().map(|t| t.ty()).unwrap_or(tusk_types::SqlType::new(0));
    [Expr::Const(Datum::Null, lt), Expr::Const(Datum::Null, lt)]
}

fn finish_subplan(sp: &SubPlan, cached: &SubPlanCache, test: Option<&Datum>, cx: &ExecCx) -> PgResult<Datum> {
    match cached {
        SubPlanCache::Exists(b) => Ok(Datum::Bool(*b)),
        SubPlanCache::Value(v) => Ok(v.clone()),
        SubPlanCache::Hashed { set, has_null, empty } => {
            let left = test.cloned().unwrap_or(Datum::Null);
            Ok(if *empty {
                Datum::Bool(false)
            } else if left.is_null() {
                Datum::Null
            } else if set.contains(&HashKey::One(hash_normalize(left))) {
                Datum::Bool(true)
            } else if *has_null {
                Datum::Null
            } else {
                Datum::Bool(false)
            })
        }
        SubPlanCache::Rows(rows) => {
            let op = sp.op.as_ref().ok_or_else(|| PgError::internal("ANY without operator"))?;
            let left = test.cloned().unwrap_or(Datum::Null);
            let exprs = subplan_op_exprs(sp);
            scalar_array_op(op, sp.kind == SubLinkKind::Any, &left, rows.iter(), &exprs, cx)
        }
    }
}
