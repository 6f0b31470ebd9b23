//! Set-returning functions: generate_series (integers, numeric,
//! timestamps), unnest, generate_subscripts, pg_options_to_table, and
//! information_schema's _pg_expandarray.

use tusk_types::datetime as dt;
use tusk_types::numeric::Numeric;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_i64, set, FnCtx, Registry, SetIter};

fn zero_step() -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "step size cannot equal zero")
}

fn series_int(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let start = arg_i64(a, 0);
    let stop = arg_i64(a, 1);
    let step = if a.len() > 2 { arg_i64(a, 2) } else { 1 };
    if step == 0 {
        return Err(zero_step());
    }
    let int4 = c.ret.oid == tusk_types::oid::INT4;
    let mut cur = Some(start);
    Ok(Box::new(std::iter::from_fn(move || {
        let v = cur?;
        if (step > 0 && v > stop) || (step < 0 && v < stop) {
            return None;
        }
        cur = v.checked_add(step);
        Some(Ok(if int4 { Datum::Int4(v as i32) } else { Datum::Int8(v) }))
    })))
}

fn series_numeric(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let get = |d: &Datum| match d {
        Datum::Numeric(n) => (**n).clone(),
        _ => Numeric::zero(),
    };
    let start = get(&a[0]);
    let stop = get(&a[1]);
    let step = if a.len() > 2 { get(&a[2]) } else { Numeric::one() };
    for (v, what) in [(&start, "start"), (&stop, "stop"), (&step, "step size")] {
        if v.is_nan() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("{what} value cannot be NaN").replace("step size value", "step size")));
        }
        if v.is_infinite() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("{what} value cannot be infinity").replace("step size value", "step size")));
        }
    }
    if step.is_zero() {
        return Err(zero_step());
    }
    let positive = step > Numeric::zero();
    let mut cur = Some(start);
    Ok(Box::new(std::iter::from_fn(move || {
        let v = cur.take()?;
        if (positive && v > stop) || (!positive && v < stop) {
            return None;
        }
        match v.add(&step) {
            Ok(n) => cur = Some(n),
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(Datum::numeric(v)))
    })))
}

fn series_timestamp(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let (start, tz) = match &a[0] {
        Datum::TimestampTz(v) => (*v, true),
        Datum::Timestamp(v) => (*v, false),
        _ => return Ok(Box::new(std::iter::empty())),
    };
    let stop = match &a[1] {
        Datum::TimestampTz(v) | Datum::Timestamp(v) => *v,
        _ => 0,
    };
    let step = match &a[2] {
        Datum::Interval(i) => *i,
        _ => return Ok(Box::new(std::iter::empty())),
    };
    let zero = dt::Interval { months: 0, days: 0, micros: 0 };
    if step == zero {
        return Err(zero_step());
    }
    let positive = step > zero;
    let zone = c.env.settings().datetime.time_zone.clone();
    let mut cur = Some(start);
    Ok(Box::new(std::iter::from_fn(move || {
        let v = cur?;
        if (positive && v > stop) || (!positive && v < stop) {
            return None;
        }
        let next = if tz { dt::timestamptz_add_interval(v, &step, &zone) } else { dt::timestamp_add_interval(v, &step) };
        cur = next.ok();
        Some(Ok(if tz { Datum::TimestampTz(v) } else { Datum::Timestamp(v) }))
    })))
}

fn unnest(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    match &a[0] {
        Datum::Array(arr) => {
            let elems = arr.elements.clone();
            Ok(Box::new(elems.into_iter().map(Ok)))
        }
        _ => Ok(Box::new(std::iter::empty())),
    }
}

fn generate_subscripts(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let Datum::Array(arr) = &a[0] else { return Ok(Box::new(std::iter::empty())) };
    let dim = arg_i64(a, 1);
    if dim < 1 || dim as usize > arr.dims.len() {
        return Ok(Box::new(std::iter::empty()));
    }
    let (len, lower) = arr.dims[dim as usize - 1];
    let reverse = a.len() > 2 && a[2].as_bool().unwrap_or(false);
    let v: Vec<PgResult<Datum>> = if reverse {
        (lower..lower + len).rev().map(|i| Ok(Datum::Int4(i))).collect()
    } else {
        (lower..lower + len).map(|i| Ok(Datum::Int4(i))).collect()
    };
    Ok(Box::new(v.into_iter()))
}

/// information_schema._pg_expandarray(anyarray), OUT x anyelement, OUT n
/// int: the elements of the first dimension as records (element, 1-based
/// position). PostgreSQL's SQL body subscripts the array with one index,
/// which gives NULL elements for an array of several dimensions.
fn expandarray(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let Datum::Array(arr) = &a[0] else { return Ok(Box::new(std::iter::empty())) };
    let Some(&(len, _)) = arr.dims.first() else { return Ok(Box::new(std::iter::empty())) };
    let one_dim = arr.dims.len() == 1;
    let rows: Vec<PgResult<Datum>> = (0..len.max(0))
        .map(|i| {
            let x = if one_dim { arr.elements.get(i as usize).cloned().unwrap_or(Datum::Null) } else { Datum::Null };
            Ok(Datum::Record(std::sync::Arc::new(vec![x, Datum::Int4(i + 1)])))
        })
        .collect();
    Ok(Box::new(rows.into_iter()))
}

/// pg_options_to_table: a generic options array (`name=value` items) as
/// (option_name, option_value) rows; an item without `=` has a NULL value.
fn options_to_table(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let Datum::Array(arr) = &a[0] else { return Ok(Box::new(std::iter::empty())) };
    let rows: Vec<PgResult<Datum>> = arr
        .elements
        .iter()
        .filter_map(|d| d.as_str().map(str::to_string))
        .map(|item| {
            let (name, value) = match item.split_once('=') {
                Some((n, v)) => (Datum::text(n), Datum::text(v)),
                None => (Datum::text(&item), Datum::Null),
            };
            Ok(Datum::Record(std::sync::Arc::new(vec![name, value])))
        })
        .collect();
    Ok(Box::new(rows.into_iter()))
}

pub(super) fn register(r: &mut Registry) {
    set(r, &["pg_options_to_table"], options_to_table);
    set(r, &["oid:13208"], expandarray);
    set(r, &["generate_series_int4", "generate_series_step_int4", "generate_series_int8", "generate_series_step_int8"], series_int);
    set(r, &["generate_series_numeric", "generate_series_step_numeric"], series_numeric);
    set(r, &["generate_series_timestamp", "generate_series_timestamptz"], series_timestamp);
    set(r, &["array_unnest"], unnest);
    set(r, &["generate_subscripts", "generate_subscripts_nodir"], generate_subscripts);
}
