//! numeric operators and functions (numeric.c), over tusk-types' Numeric.

use tusk_types::numeric::Numeric;
use tusk_types::{Datum, PgResult};

use super::{arg_i64, plain, FnCtx, Registry};

fn n(d: &Datum) -> Numeric {
    match d {
        Datum::Numeric(n) => (**n).clone(),
        other => Numeric::from_i64(other.as_i64().unwrap_or(0)),
    }
}

fn num(v: Numeric) -> PgResult<Datum> {
    Ok(Datum::numeric(v))
}

fn add(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).add(&n(&a[1]))?)
}
fn sub(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).sub(&n(&a[1]))?)
}
fn mul(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).mul(&n(&a[1]))?)
}
fn div(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).div(&n(&a[1]))?)
}
fn div_trunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).div_trunc(&n(&a[1]))?)
}
fn modulo(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).modulo(&n(&a[1]))?)
}
fn uminus(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).neg())
}
fn uplus(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}
fn abs(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).abs())
}
fn sign(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).sign())
}
fn round(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let scale = if a.len() > 1 { arg_i64(a, 1) as i32 } else { 0 };
    num(n(&a[0]).round(scale)?)
}
fn trunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let scale = if a.len() > 1 { arg_i64(a, 1) as i32 } else { 0 };
    num(n(&a[0]).trunc(scale)?)
}
fn ceil(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).ceil()?)
}
fn floor(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).floor()?)
}
fn sqrt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).sqrt()?)
}
fn exp(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).exp()?)
}
fn ln(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).ln()?)
}
fn log10(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).log10()?)
}
fn log(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(Numeric::log(&n(&a[0]), &n(&a[1]))?)
}
fn power(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).power(&n(&a[1]))?)
}
fn scale(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(n(&a[0]).scale().map(Datum::Int4).unwrap_or(Datum::Null))
}
fn min_scale(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(n(&a[0]).min_scale().map(Datum::Int4).unwrap_or(Datum::Null))
}
fn trim_scale(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).trim_scale())
}
fn gcd(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).gcd(&n(&a[1]))?)
}
fn lcm(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(n(&a[0]).lcm(&n(&a[1]))?)
}
fn factorial(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(Numeric::factorial(arg_i64(a, 0))?)
}
fn width_bucket(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(Numeric::width_bucket(&n(&a[0]), &n(&a[1]), &n(&a[2]), arg_i64(a, 3) as i32)?))
}
fn larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(std::cmp::max(n(&a[0]), n(&a[1])))
}
fn smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    num(std::cmp::min(n(&a[0]), n(&a[1])))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["numeric_add"], add);
    plain(r, &["numeric_sub"], sub);
    plain(r, &["numeric_mul"], mul);
    plain(r, &["numeric_div"], div);
    plain(r, &["numeric_div_trunc"], div_trunc);
    plain(r, &["numeric_mod"], modulo);
    plain(r, &["numeric_uminus"], uminus);
    plain(r, &["numeric_uplus"], uplus);
    plain(r, &["numeric_abs"], abs);
    plain(r, &["numeric_sign"], sign);
    plain(r, &["numeric_round", "oid:1708"], round);
    plain(r, &["numeric_trunc", "oid:1710"], trunc);
    plain(r, &["numeric_ceil"], ceil);
    plain(r, &["numeric_floor"], floor);
    plain(r, &["numeric_sqrt"], sqrt);
    plain(r, &["numeric_exp"], exp);
    plain(r, &["numeric_ln"], ln);
    plain(r, &["oid:1481"], log10);
    plain(r, &["numeric_log", "oid:1741"], log_dispatch);
    plain(r, &["numeric_power"], power);
    plain(r, &["numeric_scale"], scale);
    plain(r, &["numeric_min_scale"], min_scale);
    plain(r, &["numeric_trim_scale"], trim_scale);
    plain(r, &["numeric_gcd"], gcd);
    plain(r, &["numeric_lcm"], lcm);
    plain(r, &["numeric_fac"], factorial);
    plain(r, &["width_bucket_numeric"], width_bucket);
    plain(r, &["numeric_larger"], larger);
    plain(r, &["numeric_smaller"], smaller);
}

/// log(numeric) is log10; log(numeric, numeric) takes the base first.
fn log_dispatch(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a.len() == 1 {
        log10(a, c)
    } else {
        log(a, c)
    }
}
