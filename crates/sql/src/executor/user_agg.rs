//! Running user-defined aggregates (CREATE AGGREGATE) as nodeAgg.c runs
//! them: the transition function folds each input row into the state, the
//! final function (if any) turns the state into the result. Both may be
//! built-in or user-defined functions, called through fmgr.
//!
//! Built-in aggregates keep their native states (`functions::agg`); the
//! executor's aggregation and window nodes call through here so that both
//! kinds go the same way.

use tusk_types::{Datum, Oid, PgError, PgResult, SqlType};

use crate::analyzer::coerce;
use crate::catalog::builtins;
use crate::catalog::operator::Aggregate;
use crate::expr::AggCall;
use crate::functions::agg::{AggState, AggregateKind};
use crate::functions::{Env, FnCtx, ScalarFn};
use crate::procedural::CallOutcome;

/// Feeds one row's argument values to an aggregate's state.
pub fn transition(a: &AggCall, state: &mut AggState, args: &[Datum], env: &dyn Env) -> PgResult<()> {
    if a.kind != AggregateKind::User {
        return a.kind.transition(state, args);
    }
    let cat = env.catalog();
    let def = definition(a, env)?;
    let AggState::User { value, started, no_value } = state else { return Err(PgError::internal("aggregate state mismatch")) };
    let transtype = transition_type(a, def, env);
    if !*started {
        start(def.initval.as_deref(), transtype, env, value, no_value)?;
        *started = true;
    }
    // A strict transition function skips rows with a NULL input; its
    // first non-NULL input becomes the state when there is no initial
    // condition, and a NULL state stays NULL (advance_transition_function).
    if cat.proc(def.transfn).is_some_and(|p| p.strict) {
        if args.iter().any(Datum::is_null) {
            return Ok(());
        }
        if *no_value {
            *value = args.first().cloned().unwrap_or(Datum::Null);
            *no_value = false;
            return Ok(());
        }
        if value.is_null() {
            return Ok(());
        }
    }
    let mut call_args = Vec::with_capacity(args.len() + 1);
    call_args.push(std::mem::replace(value, Datum::Null));
    call_args.extend_from_slice(args);
    let mut types = Vec::with_capacity(args.len() + 1);
    types.push(transtype);
    types.extend_from_slice(&a.arg_types);
    *value = call(env, def.transfn, &call_args, &types, transtype)?;
    *no_value = false;
    Ok(())
}

/// The aggregate's result for a group.
pub fn finish(a: &AggCall, state: &AggState, element: Oid, env: &dyn Env) -> PgResult<Datum> {
    if a.kind != AggregateKind::User {
        return a.kind.finish(state, a.ty.oid, element, env);
    }
    let def = definition(a, env)?;
    let AggState::User { value, started, no_value } = state else { return Err(PgError::internal("aggregate state mismatch")) };
    let transtype = transition_type(a, def, env);
    let mut value = value.clone();
    if !*started {
        let mut none = false;
        start(def.initval.as_deref(), transtype, env, &mut value, &mut none)?;
    } else if *no_value {
        value = Datum::Null;
    }
    if def.finalfn == 0 {
        return Ok(value);
    }
    if env.catalog().proc(def.finalfn).is_some_and(|p| p.strict) && value.is_null() {
        return Ok(Datum::Null);
    }
    // FINALFUNC_EXTRA passes a NULL for each aggregated argument.
    let mut args = vec![value];
    let mut types = vec![transtype];
    if def.finalextra {
        args.extend(a.arg_types.iter().map(|_| Datum::Null));
        types.extend_from_slice(&a.arg_types);
    }
    call(env, def.finalfn, &args, &types, a.ty)
}

fn definition<'a>(a: &AggCall, env: &'a dyn Env) -> PgResult<&'a Aggregate> {
    env.catalog()
        .user_ops
        .aggregates
        .get(&a.oid)
        .ok_or_else(|| PgError::internal(format!("cache lookup failed for aggregate {}", a.oid)))
}

/// The transition type, polymorphic ones resolved from the call's
/// argument types.
fn transition_type(a: &AggCall, def: &Aggregate, env: &dyn Env) -> SqlType {
    if !coerce::is_polymorphic(def.transtype) {
        return SqlType::new(def.transtype);
    }
    let declared = env.catalog().proc(a.oid).map(|p| p.argtypes.clone()).unwrap_or_default();
    let actual: Vec<Oid> = a.arg_types.iter().map(|t| t.oid).collect();
    match coerce::resolve_polymorphic(builtins(), &actual, &declared, def.transtype) {
        Ok((_, t)) => SqlType::new(t),
        Err(_) => SqlType::new(def.transtype),
    }
}

/// The state before the first row: the initial condition read by the
/// transition type's input function, or NULL.
fn start(initval: Option<&str>, transtype: SqlType, env: &dyn Env, value: &mut Datum, no_value: &mut bool) -> PgResult<()> {
    match initval {
        Some(text) => {
            *value = crate::functions::io::parse_text(text, transtype, &env.settings(), false)?;
            *no_value = false;
        }
        None => {
            *value = Datum::Null;
            *no_value = true;
        }
    }
    Ok(())
}

/// Calls a support function, built-in or user-defined.
fn call(env: &dyn Env, func: Oid, args: &[Datum], types: &[SqlType], ret: SqlType) -> PgResult<Datum> {
    let cat = env.catalog();
    let proc = cat.proc(func).ok_or_else(|| PgError::internal(format!("cache lookup failed for function {func}")))?;
    if proc.strict && args.iter().any(Datum::is_null) {
        return Ok(Datum::Null);
    }
    if cat.functions.contains_key(&func) {
        return Ok(match env.call_function(func, args, types, ret)? {
            CallOutcome::Value(v) => v,
            CallOutcome::Set(rows) => rows.into_iter().next().unwrap_or(Datum::Null),
        });
    }
    match crate::functions::lookup_proc(proc) {
        Some(ScalarFn::Plain(f)) => f(args, &FnCtx { arg_types: types, ret, env, func }),
        _ => {
            let b = builtins();
            let shown: Vec<String> = proc.argtypes.iter().map(|&t| crate::analyzer::types::format_type(b, t, -1)).collect();
            Err(PgError::unsupported(format!("function {}({})", proc.name, shown.join(", "))))
        }
    }
}
