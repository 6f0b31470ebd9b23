//! The transition and final functions of some built-in aggregates as
//! callable functions (int8inc, int4_avg_accum, int8_avg, ...). Tusk runs
//! the built-in aggregates natively (`agg`); these exist for aggregates
//! that CREATE AGGREGATE builds from them, as PostgreSQL's regression
//! tests and older extensions do.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::numeric::Numeric;
use tusk_types::{oid, Datum, PgError, PgResult};

use super::{int_out_of_range, plain, FnCtx, Registry};

pub(super) fn register(r: &mut Registry) {
    plain(r, &["int8inc", "int8inc_any"], int8inc);
    plain(r, &["int2_avg_accum", "int4_avg_accum"], int_avg_accum);
    plain(r, &["int8_avg"], int8_avg);
    plain(r, &["int2_sum", "int4_sum"], int_sum);
    plain(r, &["booland_statefunc"], booland_statefunc);
    plain(r, &["boolor_statefunc"], boolor_statefunc);
}

fn int8inc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let n = a.first().and_then(Datum::as_i64).unwrap_or(0);
    Ok(Datum::Int8(n.checked_add(1).ok_or_else(|| int_out_of_range("bigint"))?))
}

/// The {count, sum} bigint array int8_avg reads.
fn avg_state(d: &Datum) -> PgResult<(i64, i64)> {
    match d {
        Datum::Array(arr) if arr.elements.len() == 2 => {
            Ok((arr.elements[0].as_i64().unwrap_or(0), arr.elements[1].as_i64().unwrap_or(0)))
        }
        _ => Err(PgError::internal("expected 2-element int8 array")),
    }
}

fn int_avg_accum(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (count, sum) = avg_state(&a[0])?;
    let v = a.get(1).and_then(Datum::as_i64).unwrap_or(0);
    let sum = sum.checked_add(v).ok_or_else(|| int_out_of_range("bigint"))?;
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::INT8, vec![Datum::Int8(count + 1), Datum::Int8(sum)]))))
}

fn int8_avg(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (count, sum) = avg_state(&a[0])?;
    if count == 0 {
        return Ok(Datum::Null);
    }
    Ok(Datum::numeric(Numeric::from_i64(sum).div(&Numeric::from_i64(count))?))
}

/// int4_sum: not strict, so a NULL state takes the first value.
fn int_sum(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    match (&a[0], a.get(1).unwrap_or(&Datum::Null)) {
        (Datum::Null, Datum::Null) => Ok(Datum::Null),
        (Datum::Null, v) => Ok(Datum::Int8(v.as_i64().unwrap_or(0))),
        (s, Datum::Null) => Ok(s.clone()),
        (s, v) => Ok(Datum::Int8(s.as_i64().unwrap_or(0).checked_add(v.as_i64().unwrap_or(0)).ok_or_else(|| int_out_of_range("bigint"))?)),
    }
}

fn booland_statefunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(a[0].as_bool().unwrap_or(false) && a[1].as_bool().unwrap_or(false)))
}

fn boolor_statefunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(a[0].as_bool().unwrap_or(false) || a[1].as_bool().unwrap_or(false)))
}
