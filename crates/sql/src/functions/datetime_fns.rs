//! Date/time operators and functions (date.c, timestamp.c), over the
//! tusk-types datetime module, with the session's TimeZone where
//! PostgreSQL uses it.

use std::cmp::Ordering;

use tusk_types::datetime::{self as dt, Interval, TimeTz};
use tusk_types::numeric::Numeric;
use tusk_types::{Datum, PgResult};

use super::{arg_f64, arg_i64, arg_str, plain, FnCtx, Registry};

fn date(d: &Datum) -> i32 {
    match d {
        Datum::Date(v) => *v,
        _ => 0,
    }
}
fn ts(d: &Datum) -> i64 {
    match d {
        Datum::Timestamp(v) | Datum::TimestampTz(v) | Datum::Time(v) => *v,
        _ => 0,
    }
}
fn iv(d: &Datum) -> Interval {
    match d {
        Datum::Interval(i) => *i,
        _ => Interval { months: 0, days: 0, micros: 0 },
    }
}
fn ttz(d: &Datum) -> TimeTz {
    match d {
        Datum::TimeTz(t, z) => TimeTz { time: *t, zone: *z },
        _ => TimeTz { time: 0, zone: 0 },
    }
}
fn out_ttz(t: TimeTz) -> Datum {
    Datum::TimeTz(t.time, t.zone)
}

fn numeric_part(p: Option<Numeric>) -> Datum {
    p.map(Datum::numeric).unwrap_or(Datum::Null)
}

fn float_part(p: Option<f64>) -> Datum {
    p.map(Datum::Float8).unwrap_or(Datum::Null)
}

// ---------------------------------------------------------------- arithmetic

fn date_pli(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Date(dt::date_add_days(date(&a[0]), arg_i64(a, 1) as i32)?))
}
fn date_mii(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Date(dt::date_sub_days(date(&a[0]), arg_i64(a, 1) as i32)?))
}
fn date_mi(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(dt::date_diff(date(&a[0]), date(&a[1]))?))
}
fn datetime_pl(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::date_add_time(date(&a[0]), ts(&a[1]))?))
}
fn datetimetz_pl(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let _ = c;
    Ok(Datum::TimestampTz(dt::date_add_timetz(date(&a[0]), ttz(&a[1]))?))
}
fn date_pl_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::date_add_interval(date(&a[0]), &iv(&a[1]))?))
}
fn date_mi_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::date_sub_interval(date(&a[0]), &iv(&a[1]))?))
}
fn timestamp_pl_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::timestamp_add_interval(ts(&a[0]), &iv(&a[1]))?))
}
fn timestamp_mi_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::timestamp_sub_interval(ts(&a[0]), &iv(&a[1]))?))
}
fn timestamptz_pl_interval(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    Ok(Datum::TimestampTz(dt::timestamptz_add_interval(ts(&a[0]), &iv(&a[1]), &s.datetime.time_zone)?))
}
fn timestamptz_mi_interval(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    Ok(Datum::TimestampTz(dt::timestamptz_sub_interval(ts(&a[0]), &iv(&a[1]), &s.datetime.time_zone)?))
}
fn timestamp_mi(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::timestamp_diff(ts(&a[0]), ts(&a[1]))?))
}
fn interval_pl(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_add(&iv(&a[0]), &iv(&a[1]))?))
}
fn interval_mi(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_sub(&iv(&a[0]), &iv(&a[1]))?))
}
fn interval_um(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_neg(&iv(&a[0]))?))
}
fn interval_mul(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_mul(&iv(&a[0]), arg_f64(a, 1))?))
}
fn mul_d_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_mul(&iv(&a[1]), arg_f64(a, 0))?))
}
fn interval_div(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_div(&iv(&a[0]), arg_f64(a, 1))?))
}
fn time_pl_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Time(dt::time_add_interval(ts(&a[0]), &iv(&a[1]))))
}
fn time_mi_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Time(dt::time_sub_interval(ts(&a[0]), &iv(&a[1]))))
}
fn time_mi_time(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::time_diff(ts(&a[0]), ts(&a[1]))))
}
fn timetz_pl_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(out_ttz(dt::timetz_add_interval(ttz(&a[0]), &iv(&a[1]))))
}
fn timetz_mi_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(out_ttz(dt::timetz_sub_interval(ttz(&a[0]), &iv(&a[1]))))
}
fn interval_larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_larger(&iv(&a[0]), &iv(&a[1]))))
}
fn interval_smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::interval_smaller(&iv(&a[0]), &iv(&a[1]))))
}

// ---------------------------------------------------------------- comparisons needing the zone

fn cmp_with_zone(a: &[Datum], c: &FnCtx) -> Ordering {
    let s = c.env.settings();
    let z = &s.datetime.time_zone;
    match (&a[0], &a[1]) {
        (Datum::Date(d), Datum::TimestampTz(t)) => dt::date_cmp_timestamptz(*d, *t, z),
        (Datum::TimestampTz(t), Datum::Date(d)) => dt::date_cmp_timestamptz(*d, *t, z).reverse(),
        (Datum::Timestamp(t), Datum::TimestampTz(u)) => dt::timestamp_cmp_timestamptz(*t, *u, z),
        (Datum::TimestampTz(u), Datum::Timestamp(t)) => dt::timestamp_cmp_timestamptz(*t, *u, z).reverse(),
        (x, y) => super::compare_values(x, y),
    }
}

macro_rules! zone_cmp {
    ($name:ident, $test:expr) => {
        fn $name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
            let f: fn(Ordering) -> bool = $test;
            Ok(Datum::Bool(f(cmp_with_zone(a, c))))
        }
    };
}
zone_cmp!(zeq, |o| o == Ordering::Equal);
zone_cmp!(zne, |o| o != Ordering::Equal);
zone_cmp!(zlt, |o| o == Ordering::Less);
zone_cmp!(zle, |o| o != Ordering::Greater);
zone_cmp!(zgt, |o| o == Ordering::Greater);
zone_cmp!(zge, |o| o != Ordering::Less);
fn zcmp(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(match cmp_with_zone(a, c) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}

// ---------------------------------------------------------------- fields

fn extract_any(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let units = arg_str(a, 0);
    let s = c.env.settings();
    Ok(match &a[1] {
        Datum::Date(d) => numeric_part(dt::extract_date(units, *d)?),
        Datum::Timestamp(t) => numeric_part(dt::extract_timestamp(units, *t)?),
        Datum::TimestampTz(t) => numeric_part(dt::extract_timestamptz(units, *t, &s.datetime.time_zone)?),
        Datum::Time(t) => numeric_part(Some(dt::extract_time(units, *t)?)),
        Datum::TimeTz(t, z) => numeric_part(Some(dt::extract_timetz(units, TimeTz { time: *t, zone: *z })?)),
        Datum::Interval(i) => numeric_part(Some(dt::extract_interval(units, i)?)),
        _ => Datum::Null,
    })
}

fn date_part_any(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let units = arg_str(a, 0);
    let s = c.env.settings();
    Ok(match &a[1] {
        Datum::Date(d) => float_part(dt::date_part_date(units, *d)?),
        Datum::Timestamp(t) => float_part(dt::date_part_timestamp(units, *t)?),
        Datum::TimestampTz(t) => float_part(dt::date_part_timestamptz(units, *t, &s.datetime.time_zone)?),
        Datum::Time(t) => Datum::Float8(dt::date_part_time(units, *t)?),
        Datum::TimeTz(t, z) => Datum::Float8(dt::date_part_timetz(units, TimeTz { time: *t, zone: *z })?),
        Datum::Interval(i) => Datum::Float8(dt::date_part_interval(units, i)?),
        _ => Datum::Null,
    })
}

fn date_trunc_any(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let units = arg_str(a, 0);
    Ok(match &a[1] {
        Datum::Timestamp(t) => Datum::Timestamp(dt::date_trunc_timestamp(units, *t)?),
        Datum::TimestampTz(t) => {
            if a.len() > 2 {
                Datum::TimestampTz(dt::date_trunc_timestamptz_at(units, *t, arg_str(a, 2))?)
            } else {
                let s = c.env.settings();
                Datum::TimestampTz(dt::date_trunc_timestamptz(units, *t, &s.datetime.time_zone)?)
            }
        }
        Datum::Interval(i) => Datum::Interval(dt::date_trunc_interval(units, i)?),
        _ => Datum::Null,
    })
}

fn age(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    let z = &s.datetime.time_zone;
    if a.len() == 1 {
        let now = c.env.transaction_timestamp();
        return Ok(Datum::Interval(match &a[0] {
            Datum::TimestampTz(t) => dt::timestamptz_age_from_today(*t, now, z)?,
            d => dt::timestamp_age_from_today(ts(d), now, z)?,
        }));
    }
    Ok(Datum::Interval(match (&a[0], &a[1]) {
        (Datum::TimestampTz(x), Datum::TimestampTz(y)) => dt::timestamptz_age(*x, *y, z)?,
        (x, y) => dt::timestamp_age(ts(x), ts(y))?,
    }))
}

fn justify_days(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::justify_days(&iv(&a[0]))?))
}
fn justify_hours(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::justify_hours(&iv(&a[0]))?))
}
fn justify_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Interval(dt::justify_interval(&iv(&a[0]))?))
}

fn make_date(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Date(dt::make_date(arg_i64(a, 0) as i32, arg_i64(a, 1) as i32, arg_i64(a, 2) as i32)?))
}
fn make_time(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Time(dt::make_time(arg_i64(a, 0) as i32, arg_i64(a, 1) as i32, arg_f64(a, 2))?))
}
fn make_timestamp(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Timestamp(dt::make_timestamp(
        arg_i64(a, 0) as i32,
        arg_i64(a, 1) as i32,
        arg_i64(a, 2) as i32,
        arg_i64(a, 3) as i32,
        arg_i64(a, 4) as i32,
        arg_f64(a, 5),
    )?))
}
fn make_timestamptz(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (y, mo, d, h, mi, s) = (arg_i64(a, 0) as i32, arg_i64(a, 1) as i32, arg_i64(a, 2) as i32, arg_i64(a, 3) as i32, arg_i64(a, 4) as i32, arg_f64(a, 5));
    if a.len() > 6 {
        return Ok(Datum::TimestampTz(dt::make_timestamptz_at(y, mo, d, h, mi, s, arg_str(a, 6))?));
    }
    let settings = c.env.settings();
    Ok(Datum::TimestampTz(dt::make_timestamptz(y, mo, d, h, mi, s, &settings.datetime.time_zone)?))
}
fn make_interval(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let g = |i: usize| if i < a.len() { arg_i64(a, i) as i32 } else { 0 };
    let secs = if a.len() > 6 { arg_f64(a, 6) } else { 0.0 };
    Ok(Datum::Interval(dt::make_interval(g(0), g(1), g(2), g(3), g(4), g(5), secs)?))
}
fn to_timestamp_epoch(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(dt::to_timestamp_epoch(arg_f64(a, 0))?))
}

fn isfinite(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(match &a[0] {
        Datum::Date(d) => dt::date_is_finite(*d),
        Datum::Timestamp(t) | Datum::TimestampTz(t) => dt::timestamp_is_finite(*t),
        _ => true,
    }))
}

/// AT TIME ZONE and timezone(zone, value).
fn timezone_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    Ok(match (&a[0], &a[1]) {
        (Datum::Interval(z), Datum::Timestamp(t)) => Datum::TimestampTz(dt::timestamp_at_interval_zone(*t, z, &s.datetime)?),
        (Datum::Interval(z), Datum::TimestampTz(t)) => Datum::Timestamp(dt::timestamptz_at_interval_zone(*t, z, &s.datetime)?),
        (Datum::Interval(z), Datum::TimeTz(t, zz)) => out_ttz(dt::timetz_at_interval_zone(TimeTz { time: *t, zone: *zz }, z, &s.datetime)?),
        (zone, Datum::Timestamp(t)) => Datum::TimestampTz(dt::timestamp_at_zone(*t, zone.as_str().unwrap_or(""))?),
        (zone, Datum::TimestampTz(t)) => Datum::Timestamp(dt::timestamptz_at_zone(*t, zone.as_str().unwrap_or(""))?),
        (zone, Datum::TimeTz(t, zz)) => {
            out_ttz(dt::timetz_at_zone(TimeTz { time: *t, zone: *zz }, zone.as_str().unwrap_or(""), c.env.transaction_timestamp())?)
        }
        _ => Datum::Null,
    })
}

fn date_bin(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let r = dt::date_bin(&iv(&a[0]), ts(&a[1]), ts(&a[2]))?;
    Ok(match &a[1] {
        Datum::TimestampTz(_) => Datum::TimestampTz(r),
        _ => Datum::Timestamp(r),
    })
}

fn timeofday(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    let now = crate::session::now_micros();
    let mut settings = s.datetime.clone();
    settings.date_style = dt::DateStyleOutput::Postgres;
    Ok(Datum::from_string(dt::timestamptz_out(now, &settings)?))
}

/// time + date and timetz + date (the commuted forms of date + time).
fn datetime_swapped(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let swapped = [a[1].clone(), a[0].clone()];
    match &a[0] {
        Datum::TimeTz(..) => datetimetz_pl(&swapped, c),
        _ => datetime_pl(&swapped, c),
    }
}

fn overlaps(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    // (s1, e1) OVERLAPS (s2, e2) with NULL handling as PostgreSQL's overlaps_timestamp.
    let v = |d: &Datum| -> Option<i64> {
        match d {
            Datum::Null => None,
            Datum::Interval(_) => None,
            d => Some(ts(d)),
        }
    };
    let (mut s1, mut e1, mut s2, mut e2) = (v(&a[0]), v(&a[1]), v(&a[2]), v(&a[3]));
    if let Datum::Interval(i) = &a[1] {
        e1 = s1.map(|s| s + i.micros + i.days as i64 * 86_400_000_000 + i.months as i64 * 30 * 86_400_000_000);
    }
    if let Datum::Interval(i) = &a[3] {
        e2 = s2.map(|s| s + i.micros + i.days as i64 * 86_400_000_000 + i.months as i64 * 30 * 86_400_000_000);
    }
    if s1.is_none() {
        std::mem::swap(&mut s1, &mut e1);
    }
    if s2.is_none() {
        std::mem::swap(&mut s2, &mut e2);
    }
    let (Some(mut s1), Some(mut s2)) = (s1, s2) else { return Ok(Datum::Null) };
    let mut e1 = e1.unwrap_or(s1);
    let mut e2 = e2.unwrap_or(s2);
    if e1 < s1 {
        std::mem::swap(&mut s1, &mut e1);
    }
    if e2 < s2 {
        std::mem::swap(&mut s2, &mut e2);
    }
    Ok(Datum::Bool(if s1 > s2 { s1 < e2 } else if s2 > s1 { s2 < e1 } else { true }))
}

// ---------------------------------------------------------------- to_char / to_date / to_timestamp

/// to_char(timestamp|timestamptz|interval, text); an empty template or an
/// infinite timestamp gives NULL, as in PostgreSQL.
fn datetime_to_char(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    let fmt = arg_str(a, 1);
    let out = match &a[0] {
        Datum::Timestamp(t) => dt::timestamp_to_char(*t, fmt, &s.datetime)?,
        Datum::TimestampTz(t) => dt::timestamptz_to_char(*t, fmt, &s.datetime)?,
        Datum::Interval(i) => dt::interval_to_char(i, fmt, &s.datetime)?,
        _ => None,
    };
    Ok(out.map(Datum::from_string).unwrap_or(Datum::Null))
}
fn to_date(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    Ok(Datum::Date(dt::to_date(arg_str(a, 0), arg_str(a, 1), &s.datetime)?))
}
fn to_timestamp(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = c.env.settings();
    Ok(Datum::TimestampTz(dt::to_timestamp(arg_str(a, 0), arg_str(a, 1), &s.datetime)?))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["timestamp_to_char", "timestamptz_to_char", "interval_to_char"], datetime_to_char);
    plain(r, &["to_date"], to_date);
    plain(r, &["to_timestamp"], to_timestamp);
    plain(r, &["date_pli"], date_pli);
    plain(r, &["date_mii"], date_mii);
    plain(r, &["date_mi"], date_mi);
    plain(r, &["datetime_timestamp"], datetime_pl);
    plain(r, &["datetimetz_timestamptz"], datetimetz_pl);
    plain(r, &["date_pl_interval"], date_pl_interval);
    plain(r, &["date_mi_interval"], date_mi_interval);
    plain(r, &["timestamp_pl_interval"], timestamp_pl_interval);
    plain(r, &["timestamp_mi_interval"], timestamp_mi_interval);
    plain(r, &["timestamptz_pl_interval"], timestamptz_pl_interval);
    plain(r, &["timestamptz_mi_interval"], timestamptz_mi_interval);
    plain(r, &["timestamp_mi"], timestamp_mi);
    plain(r, &["interval_pl"], interval_pl);
    plain(r, &["interval_mi"], interval_mi);
    plain(r, &["interval_um"], interval_um);
    plain(r, &["interval_mul"], interval_mul);
    plain(r, &["mul_d_interval"], mul_d_interval);
    plain(r, &["interval_div"], interval_div);
    plain(r, &["time_pl_interval"], time_pl_interval);
    plain(r, &["time_mi_interval"], time_mi_interval);
    plain(r, &["time_mi_time"], time_mi_time);
    plain(r, &["timetz_pl_interval"], timetz_pl_interval);
    plain(r, &["timetz_mi_interval"], timetz_mi_interval);
    plain(r, &["interval_larger"], interval_larger);
    plain(r, &["interval_smaller"], interval_smaller);
    for (op, f) in [("eq", zeq as super::PlainFn), ("ne", zne), ("lt", zlt), ("le", zle), ("gt", zgt), ("ge", zge)] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(
            r,
            &[
                leak(format!("date_{op}_timestamptz")),
                leak(format!("timestamptz_{op}_date")),
                leak(format!("timestamp_{op}_timestamptz")),
                leak(format!("timestamptz_{op}_timestamp")),
            ],
            f,
        );
    }
    plain(r, &["date_cmp_timestamptz", "timestamptz_cmp_date", "timestamp_cmp_timestamptz", "timestamptz_cmp_timestamp"], zcmp);
    plain(r, &["extract_date", "extract_time", "extract_timetz", "extract_timestamp", "extract_timestamptz", "extract_interval"], extract_any);
    plain(r, &["timestamp_part", "timestamptz_part", "interval_part", "time_part", "timetz_part", "oid:1384"], date_part_any);
    plain(r, &["timestamp_trunc", "timestamptz_trunc", "timestamptz_trunc_zone", "interval_trunc"], date_trunc_any);
    plain(r, &["timestamp_age", "timestamptz_age", "oid:2059", "oid:1386"], age);
    plain(r, &["interval_justify_days"], justify_days);
    plain(r, &["interval_justify_hours"], justify_hours);
    plain(r, &["interval_justify_interval"], justify_interval);
    plain(r, &["make_date"], make_date);
    plain(r, &["make_time"], make_time);
    plain(r, &["make_timestamp"], make_timestamp);
    plain(r, &["make_timestamptz", "make_timestamptz_at_timezone"], make_timestamptz);
    plain(r, &["make_interval"], make_interval);
    plain(r, &["float8_timestamptz"], to_timestamp_epoch);
    plain(r, &["date_finite", "timestamp_finite", "interval_finite"], isfinite);
    plain(r, &["timestamp_zone", "timestamptz_zone", "timestamp_izone", "timestamptz_izone", "timetz_zone", "timetz_izone"], timezone_fn);
    plain(r, &["timestamp_bin", "timestamptz_bin"], date_bin);
    plain(r, &["timeofday"], timeofday);
    plain(r, &["oid:1296", "oid:1298"], |a, c| datetime_swapped(a, c));
    plain(r, &["oid:1176"], |a, c| {
        let t = datetime_pl(a, c)?;
        super::cast::cast_datum_env(t, tusk_types::SqlType::new(tusk_types::oid::TIMESTAMP), tusk_types::SqlType::new(tusk_types::oid::TIMESTAMPTZ), true, c.env)
    });
    plain(r, &["oid:1848"], |a, c| time_pl_interval(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:2546"], |a, c| date_pl_interval(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:2547"], |a, c| timetz_pl_interval(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:2548"], |a, c| timestamp_pl_interval(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:2549"], |a, c| timestamptz_pl_interval(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:2550"], |a, c| date_pli(&[a[1].clone(), a[0].clone()], c));
    plain(r, &["oid:1305", "oid:1306", "oid:1307", "oid:1309", "oid:1310", "oid:1311", "oid:2042", "oid:2043", "oid:2044"], overlaps);
    plain(r, &["overlaps_timestamp", "overlaps_time", "overlaps_timetz"], overlaps);
}
