//! Field extraction and truncation: extract (numeric results, PostgreSQL
//! 14+), date_part (double precision) and date_trunc, for every date/time
//! type, with PostgreSQL 15's unit names, special cases for infinities and
//! error messages.

use bigdecimal::BigDecimal;
use num_bigint::BigInt;

use crate::error::{PgError, PgResult};
use crate::numeric::Numeric;
use crate::pg_err;

use super::calendar::*;
use super::interval::Interval;
use super::parse::{lookup_field_name, DateTimeUnit, FieldName};
use super::time::TimeTz;
use super::timestamp::EPOCH_TIMESTAMP;
use super::timezone::{lookup_timezone_name, TimeZone};

/// extract's exact result before it becomes a `Numeric`: a decimal with
/// PostgreSQL's display scale (seconds have six decimals), or an infinity.
#[derive(Clone, Debug, PartialEq, Eq)]
enum NumericPart {
    Finite(BigDecimal),
    Infinity,
    NegInfinity,
}

impl NumericPart {
    fn int(v: i64) -> NumericPart {
        NumericPart::Finite(BigDecimal::new(BigInt::from(v), 0))
    }

    /// `v / 10^scale` with that display scale (int64_div_fast_to_numeric).
    fn scaled(v: i64, scale: i64) -> NumericPart {
        NumericPart::Finite(BigDecimal::new(BigInt::from(v), scale))
    }

    /// The value as a numeric datum, keeping the display scale.
    fn into_numeric(self) -> PgResult<Numeric> {
        match self {
            NumericPart::Finite(d) => {
                let (digits, scale) = d.into_bigint_and_exponent();
                Numeric::from_parts(digits, scale.max(0) as u32)
            }
            NumericPart::Infinity => Ok(Numeric::PosInf),
            NumericPart::NegInfinity => Ok(Numeric::NegInf),
        }
    }
}

/// A part computed once for both extract (numeric) and date_part (float8),
/// since PostgreSQL computes some float results by different formulas.
struct Part {
    numeric: NumericPart,
    float: f64,
}

impl Part {
    fn int(v: i64) -> Part {
        Part { numeric: NumericPart::int(v), float: v as f64 }
    }
    fn infinite(negative: bool) -> Part {
        if negative {
            Part { numeric: NumericPart::NegInfinity, float: f64::NEG_INFINITY }
        } else {
            Part { numeric: NumericPart::Infinity, float: f64::INFINITY }
        }
    }
}

const TIMESTAMP_TYPE: &str = "timestamp without time zone";
const TIMESTAMPTZ_TYPE: &str = "timestamp with time zone";
const DATE_TYPE: &str = "date";
const TIME_TYPE: &str = "time without time zone";
const TIMETZ_TYPE: &str = "time with time zone";
const INTERVAL_TYPE: &str = "interval";

/// downcase_truncate_identifier: unit names are case-insensitive and cut to 63 bytes.
fn lower_units(units: &str) -> String {
    let mut s = units.to_lowercase();
    if s.len() > 63 {
        let mut end = 63;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

fn not_supported(units: &str, type_name: &str) -> PgError {
    pg_err!(FEATURE_NOT_SUPPORTED, "unit \"{}\" not supported for type {}", units, type_name)
}

fn not_recognized(units: &str, type_name: &str) -> PgError {
    pg_err!(INVALID_PARAMETER_VALUE, "unit \"{}\" not recognized for type {}", units, type_name)
}

/// Resolves an extract/date_part unit: the unit, or the right error.
/// Reserved words other than "epoch" ("now") are "not supported" for dates
/// and timestamps but "not recognized" for times and intervals.
fn extract_unit(units: &str, type_name: &str) -> PgResult<(DateTimeUnit, String)> {
    let lower = lower_units(units);
    match lookup_field_name(&lower) {
        FieldName::Unit(u) => Ok((u, lower)),
        FieldName::OtherReserved if matches!(type_name, TIMESTAMP_TYPE | TIMESTAMPTZ_TYPE | DATE_TYPE) => {
            Err(not_supported(&lower, type_name))
        }
        _ => Err(not_recognized(&lower, type_name)),
    }
}

/// Base-10000 weight and leading digit of a positive integer, as
/// PostgreSQL's numeric stores it (zero has weight 0, digit 0).
fn numeric_weight(v: &BigInt) -> (i64, BigInt) {
    let base = BigInt::from(10000);
    let mut w = 0;
    let mut x = v.clone();
    if x.sign() != num_bigint::Sign::Plus {
        return (0, BigInt::from(0));
    }
    while x >= base {
        x /= &base;
        w += 1;
    }
    (w, x)
}

/// numeric_div of two integers: the quotient at select_div_scale's result
/// scale (at least 16 significant digits), rounded half away from zero.
fn numeric_div_int(dividend: &BigInt, divisor: &BigInt) -> BigDecimal {
    let (w1, d1) = numeric_weight(&dividend.magnitude().clone().into());
    let (w2, d2) = numeric_weight(&divisor.magnitude().clone().into());
    let mut qweight = w1 - w2;
    if d1 <= d2 {
        qweight -= 1;
    }
    let rscale = (16 - qweight * 4).clamp(0, 1000);
    let scaled = dividend * BigInt::from(10).pow(rscale as u32 + 1) / divisor;
    let five = if scaled.sign() == num_bigint::Sign::Minus { BigInt::from(-5) } else { BigInt::from(5) };
    BigDecimal::new((scaled + five) / BigInt::from(10), rscale)
}

/// Rounds (or extends) a decimal to `scale` digits, half away from zero (numeric_round).
fn round_to_scale(d: BigDecimal, scale: i64) -> BigDecimal {
    d.with_scale_round(scale, bigdecimal::RoundingMode::HalfUp)
}

/// Julian day with the fraction of the day, as numeric: PostgreSQL adds
/// the day's microseconds divided (numerically) by 86400000000.
fn julian_numeric(jd: i32, day_micros: i64) -> BigDecimal {
    BigDecimal::new(BigInt::from(jd), 0) + numeric_div_int(&BigInt::from(day_micros), &BigInt::from(USECS_PER_DAY))
}

/// The parts of a finite timestamp's (local) fields.
fn timestamp_part(unit: DateTimeUnit, tm: &Tm, units: &str, type_name: &str, tz: Option<i32>, ts: i64) -> PgResult<Part> {
    use DateTimeUnit::*;
    let sec_micros = tm.sec as i64 * USECS_PER_SEC + tm.fsec as i64;
    Ok(match unit {
        Microsecond => Part::int(sec_micros),
        Millisecond => Part { numeric: NumericPart::scaled(sec_micros, 3), float: tm.sec as f64 * 1000.0 + tm.fsec as f64 / 1000.0 },
        Second => Part { numeric: NumericPart::scaled(sec_micros, 6), float: tm.sec as f64 + tm.fsec as f64 / 1_000_000.0 },
        Minute => Part::int(tm.min as i64),
        Hour => Part::int(tm.hour as i64),
        Day => Part::int(tm.mday as i64),
        Month => Part::int(tm.mon as i64),
        Quarter => Part::int(((tm.mon - 1) / 3 + 1) as i64),
        Week => Part::int(date2isoweek(tm.year, tm.mon, tm.mday) as i64),
        Year => Part::int(if tm.year > 0 { tm.year } else { tm.year - 1 } as i64),
        Decade => Part::int(if tm.year > 0 { tm.year / 10 } else { -((8 - (tm.year - 1)) / 10) } as i64),
        Century => Part::int(if tm.year > 0 { (tm.year + 99) / 100 } else { -((99 - (tm.year - 1)) / 100) } as i64),
        Millennium => Part::int(if tm.year > 0 { (tm.year + 999) / 1000 } else { -((999 - (tm.year - 1)) / 1000) } as i64),
        Julian => {
            let jd = date2j(tm.year, tm.mon, tm.mday);
            let day_micros = time2t(tm.hour, tm.min, tm.sec, tm.fsec);
            let float = jd as f64 + (((tm.hour * 60 + tm.min) * 60 + tm.sec) as f64 + tm.fsec as f64 / 1_000_000.0) / SECS_PER_DAY as f64;
            Part { numeric: NumericPart::Finite(julian_numeric(jd, day_micros)), float }
        }
        IsoYear => {
            let y = date2isoyear(tm.year, tm.mon, tm.mday);
            Part::int((if y <= 0 { y - 1 } else { y }) as i64)
        }
        Dow | IsoDow => {
            let d = j2day(date2j(tm.year, tm.mon, tm.mday));
            Part::int(if unit == IsoDow && d == 0 { 7 } else { d } as i64)
        }
        Doy => Part::int((date2j(tm.year, tm.mon, tm.mday) - date2j(tm.year, 1, 1) + 1) as i64),
        Timezone | TimezoneHour | TimezoneMinute => match tz {
            Some(tz) => Part::int(match unit {
                Timezone => -tz,
                TimezoneMinute => (-tz / 60) % 60,
                _ => -tz / 3600,
            } as i64),
            None => return Err(not_supported(units, type_name)),
        },
        Epoch => {
            // Near the top of the range PostgreSQL divides numerically, then rounds to 6 places.
            let numeric = match ts.checked_sub(EPOCH_TIMESTAMP) {
                Some(d) => NumericPart::scaled(d, 6),
                None => NumericPart::Finite(round_to_scale(
                    numeric_div_int(&(BigInt::from(ts) - BigInt::from(EPOCH_TIMESTAMP)), &BigInt::from(1_000_000)),
                    6,
                )),
            };
            let float = match ts.checked_sub(EPOCH_TIMESTAMP) {
                Some(d) => d as f64 / 1_000_000.0,
                None => (ts as f64 - EPOCH_TIMESTAMP as f64) / 1_000_000.0,
            };
            Part { numeric, float }
        }
    })
}

/// NonFiniteTimestampTzPart: monotonic units of an infinite timestamp are
/// infinite, the others NULL.
fn nonfinite_part(unit: DateTimeUnit, negative: bool) -> Option<Part> {
    use DateTimeUnit::*;
    match unit {
        Microsecond | Millisecond | Second | Minute | Hour | Day | Month | Quarter | Week | Dow | IsoDow | Doy | Timezone
        | TimezoneMinute | TimezoneHour => None,
        Year | Decade | Century | Millennium | Julian | IsoYear | Epoch => Some(Part::infinite(negative)),
    }
}

fn timestamp_part_common(units: &str, ts: i64, zone: Option<&TimeZone>) -> PgResult<Option<Part>> {
    let type_name = if zone.is_some() { TIMESTAMPTZ_TYPE } else { TIMESTAMP_TYPE };
    let (unit, lower) = extract_unit(units, type_name)?;
    if !timestamp_is_finite(ts) {
        return Ok(nonfinite_part(unit, ts == DT_NOBEGIN));
    }
    let (tm, tz) = timestamp_to_tm(ts, zone).ok_or_else(timestamp_out_of_range)?;
    if zone.is_none() && matches!(unit, DateTimeUnit::Timezone | DateTimeUnit::TimezoneHour | DateTimeUnit::TimezoneMinute) {
        return Err(not_supported(&lower, type_name));
    }
    timestamp_part(unit, &tm, &lower, type_name, tz, ts).map(Some)
}

/// extract(field from timestamp).
pub fn extract_timestamp(units: &str, ts: i64) -> PgResult<Option<Numeric>> {
    timestamp_part_common(units, ts, None)?.map(|p| p.numeric.into_numeric()).transpose()
}

/// date_part(field, timestamp).
pub fn date_part_timestamp(units: &str, ts: i64) -> PgResult<Option<f64>> {
    Ok(timestamp_part_common(units, ts, None)?.map(|p| p.float))
}

/// extract(field from timestamptz), on local time in `zone`.
pub fn extract_timestamptz(units: &str, ts: i64, zone: &TimeZone) -> PgResult<Option<Numeric>> {
    timestamp_part_common(units, ts, Some(zone))?.map(|p| p.numeric.into_numeric()).transpose()
}

/// date_part(field, timestamptz).
pub fn date_part_timestamptz(units: &str, ts: i64, zone: &TimeZone) -> PgResult<Option<f64>> {
    Ok(timestamp_part_common(units, ts, Some(zone))?.map(|p| p.float))
}

/// extract(field from date): date fields only; time fields are errors.
pub fn extract_date(units: &str, date: i32) -> PgResult<Option<Numeric>> {
    use DateTimeUnit::*;
    let (unit, lower) = extract_unit(units, DATE_TYPE)?;
    if !date_is_finite(date) {
        return match unit {
            Day | Month | Quarter | Week | Dow | IsoDow | Doy => Ok(None),
            Year | Decade | Century | Millennium | Julian | IsoYear | Epoch => {
                Ok(Some(if date == DATEVAL_NOBEGIN { Numeric::NegInf } else { Numeric::PosInf }))
            }
            _ => Err(not_supported(&lower, DATE_TYPE)),
        };
    }
    let (year, mon, mday) = j2date(date + POSTGRES_EPOCH_JDATE);
    let v: i64 = match unit {
        Day => mday as i64,
        Month => mon as i64,
        Quarter => ((mon - 1) / 3 + 1) as i64,
        Week => date2isoweek(year, mon, mday) as i64,
        Year => (if year > 0 { year } else { year - 1 }) as i64,
        Decade => (if year >= 0 { year / 10 } else { -((8 - (year - 1)) / 10) }) as i64,
        Century => (if year > 0 { (year + 99) / 100 } else { -((99 - (year - 1)) / 100) }) as i64,
        Millennium => (if year > 0 { (year + 999) / 1000 } else { -((999 - (year - 1)) / 1000) }) as i64,
        Julian => (date + POSTGRES_EPOCH_JDATE) as i64,
        IsoYear => {
            let y = date2isoyear(year, mon, mday);
            (if y <= 0 { y - 1 } else { y }) as i64
        }
        Dow | IsoDow => {
            let d = j2day(date + POSTGRES_EPOCH_JDATE);
            if unit == IsoDow && d == 0 { 7 } else { d as i64 }
        }
        Doy => (date2j(year, mon, mday) - date2j(year, 1, 1) + 1) as i64,
        Epoch => (date as i64 + (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64) * SECS_PER_DAY,
        _ => return Err(not_supported(&lower, DATE_TYPE)),
    };
    Ok(Some(Numeric::from_i64(v)))
}

/// date_part(field, date): PostgreSQL evaluates it as date_part(field, date::timestamp).
pub fn date_part_date(units: &str, date: i32) -> PgResult<Option<f64>> {
    date_part_timestamp(units, super::date::date_to_timestamp(date)?)
}

fn time_part_common(units: &str, time: i64, zone: Option<i32>) -> PgResult<Part> {
    use DateTimeUnit::*;
    let type_name = if zone.is_some() { TIMETZ_TYPE } else { TIME_TYPE };
    let (unit, lower) = extract_unit(units, type_name)?;
    let (hour, min, sec, fsec) = dt2time(time);
    let sec_micros = sec as i64 * USECS_PER_SEC + fsec as i64;
    Ok(match (unit, zone) {
        (Microsecond, _) => Part::int(sec_micros),
        (Millisecond, _) => Part { numeric: NumericPart::scaled(sec_micros, 3), float: sec as f64 * 1000.0 + fsec as f64 / 1000.0 },
        (Second, _) => Part { numeric: NumericPart::scaled(sec_micros, 6), float: sec as f64 + fsec as f64 / 1_000_000.0 },
        (Minute, _) => Part::int(min as i64),
        (Hour, _) => Part::int(hour as i64),
        (Timezone, Some(tz)) => Part::int(-tz as i64),
        (TimezoneMinute, Some(tz)) => Part::int(((-tz / 60) % 60) as i64),
        (TimezoneHour, Some(tz)) => Part::int((-tz / 3600) as i64),
        (Epoch, None) => Part { numeric: NumericPart::scaled(time, 6), float: time as f64 / 1_000_000.0 },
        (Epoch, Some(tz)) => Part {
            numeric: NumericPart::scaled(time + tz as i64 * USECS_PER_SEC, 6),
            float: time as f64 / 1_000_000.0 + tz as f64,
        },
        _ => return Err(not_supported(&lower, type_name)),
    })
}

/// extract(field from time).
pub fn extract_time(units: &str, time: i64) -> PgResult<Numeric> {
    time_part_common(units, time, None)?.numeric.into_numeric()
}

/// date_part(field, time).
pub fn date_part_time(units: &str, time: i64) -> PgResult<f64> {
    Ok(time_part_common(units, time, None)?.float)
}

/// extract(field from timetz).
pub fn extract_timetz(units: &str, t: TimeTz) -> PgResult<Numeric> {
    time_part_common(units, t.time, Some(t.zone))?.numeric.into_numeric()
}

/// date_part(field, timetz).
pub fn date_part_timetz(units: &str, t: TimeTz) -> PgResult<f64> {
    Ok(time_part_common(units, t.time, Some(t.zone))?.float)
}

/// Interval fields as output shows them (interval2itm).
struct ItmParts {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    usec: i64,
}

fn interval_to_itm(iv: &Interval) -> ItmParts {
    let mut time = iv.micros;
    let hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    let min = time / USECS_PER_MINUTE;
    time -= min * USECS_PER_MINUTE;
    let sec = time / USECS_PER_SEC;
    let usec = time - sec * USECS_PER_SEC;
    ItmParts { year: (iv.months / 12) as i64, mon: (iv.months % 12) as i64, mday: iv.days as i64, hour, min, sec, usec }
}

fn interval_part_common(units: &str, iv: &Interval) -> PgResult<Part> {
    use DateTimeUnit::*;
    let (unit, lower) = extract_unit(units, INTERVAL_TYPE)?;
    let t = interval_to_itm(iv);
    let sec_micros = t.sec * USECS_PER_SEC + t.usec;
    Ok(match unit {
        Microsecond => Part::int(sec_micros),
        Millisecond => Part { numeric: NumericPart::scaled(sec_micros, 3), float: t.sec as f64 * 1000.0 + t.usec as f64 / 1000.0 },
        Second => Part { numeric: NumericPart::scaled(sec_micros, 6), float: t.sec as f64 + t.usec as f64 / 1_000_000.0 },
        Minute => Part::int(t.min),
        Hour => Part::int(t.hour),
        Day => Part::int(t.mday),
        Month => Part::int(t.mon),
        Quarter => Part::int(t.mon / 3 + 1),
        Year => Part::int(t.year),
        Decade => Part::int(t.year / 10),
        Century => Part::int(t.year / 100),
        Millennium => Part::int(t.year / 1000),
        Epoch => {
            // 365.25 days per year, 30 per month, exactly: scale by 4 to stay integral.
            let secs_from_day_month = ((4.0 * DAYS_PER_YEAR) as i64 * (iv.months / 12) as i64
                + (4 * DAYS_PER_MONTH) as i64 * (iv.months % 12) as i64
                + 4 * iv.days as i64)
                * (SECS_PER_DAY / 4);
            let numeric = match secs_from_day_month.checked_mul(1_000_000).and_then(|v| v.checked_add(iv.micros)) {
                Some(v) => NumericPart::scaled(v, 6),
                None => NumericPart::Finite(
                    BigDecimal::new(BigInt::from(iv.micros), 6) + BigDecimal::new(BigInt::from(secs_from_day_month), 0),
                ),
            };
            let mut float = iv.micros as f64 / 1_000_000.0;
            float += (DAYS_PER_YEAR * SECS_PER_DAY as f64) * (iv.months / 12) as f64;
            float += (DAYS_PER_MONTH as f64 * SECS_PER_DAY as f64) * (iv.months % 12) as f64;
            float += SECS_PER_DAY as f64 * iv.days as f64;
            Part { numeric, float }
        }
        _ => return Err(not_supported(&lower, INTERVAL_TYPE)),
    })
}

/// extract(field from interval).
pub fn extract_interval(units: &str, iv: &Interval) -> PgResult<Numeric> {
    interval_part_common(units, iv)?.numeric.into_numeric()
}

/// date_part(field, interval).
pub fn date_part_interval(units: &str, iv: &Interval) -> PgResult<f64> {
    Ok(interval_part_common(units, iv)?.float)
}

/// Resolves a date_trunc unit (interval units only, no "epoch" etc.).
fn trunc_unit(units: &str, type_name: &str) -> PgResult<(DateTimeUnit, String)> {
    let lower = lower_units(units);
    match super::parse::lookup_delta_unit(&lower) {
        Some(u) => Ok((u, lower)),
        None => Err(not_recognized(&lower, type_name)),
    }
}

/// Truncates broken-down fields to `unit`; returns whether the zone
/// offset must be recomputed (units of a day or more).
fn truncate_tm(tm: &mut Tm, unit: DateTimeUnit, lower: &str, type_name: &str) -> PgResult<bool> {
    use DateTimeUnit::*;
    let level = match unit {
        Week => {
            let woy = date2isoweek(tm.year, tm.mon, tm.mday);
            // Weeks 52/53 in January belong to the previous ISO year, week 1 in December to the next.
            if woy >= 52 && tm.mon == 1 {
                tm.year -= 1;
            }
            if woy <= 1 && tm.mon == 12 {
                tm.year += 1;
            }
            let (y, m, d) = j2date(isoweek2j(tm.year, woy));
            tm.year = y;
            tm.mon = m;
            tm.mday = d;
            tm.hour = 0;
            tm.min = 0;
            tm.sec = 0;
            tm.fsec = 0;
            return Ok(true);
        }
        Millennium => 9,
        Century => 8,
        Decade => 7,
        Year => 6,
        Quarter => 5,
        Month => 4,
        Day => 3,
        Hour => 2,
        Minute => 1,
        Second => 0,
        Millisecond => {
            tm.fsec = (tm.fsec / 1000) * 1000;
            return Ok(false);
        }
        Microsecond => return Ok(false),
        _ => return Err(not_supported(lower, type_name)),
    };
    if level == 9 {
        tm.year = if tm.year > 0 { ((tm.year + 999) / 1000) * 1000 - 999 } else { -((999 - (tm.year - 1)) / 1000) * 1000 + 1 };
    }
    if level >= 8 {
        tm.year = if tm.year > 0 { ((tm.year + 99) / 100) * 100 - 99 } else { -((99 - (tm.year - 1)) / 100) * 100 + 1 };
    }
    if level == 7 {
        tm.year = if tm.year > 0 { (tm.year / 10) * 10 } else { -((8 - (tm.year - 1)) / 10) * 10 };
    }
    if level >= 6 {
        tm.mon = 1;
    }
    if level >= 5 {
        tm.mon = 3 * ((tm.mon - 1) / 3) + 1;
    }
    if level >= 4 {
        tm.mday = 1;
    }
    if level >= 3 {
        tm.hour = 0;
    }
    if level >= 2 {
        tm.min = 0;
    }
    if level >= 1 {
        tm.sec = 0;
    }
    tm.fsec = 0;
    Ok(level >= 3)
}

/// date_trunc(field, timestamp).
pub fn date_trunc_timestamp(units: &str, ts: i64) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let (unit, lower) = trunc_unit(units, TIMESTAMP_TYPE)?;
    let mut tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    truncate_tm(&mut tm, unit, &lower, TIMESTAMP_TYPE)?;
    tm_to_timestamp(&tm, None).ok_or_else(timestamp_out_of_range)
}

/// date_trunc(field, timestamptz): truncates local time in `zone`.
pub fn date_trunc_timestamptz(units: &str, ts: i64, zone: &TimeZone) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let (unit, lower) = trunc_unit(units, TIMESTAMPTZ_TYPE)?;
    let (mut tm, tz) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    let mut tz = tz.unwrap_or(0);
    if truncate_tm(&mut tm, unit, &lower, TIMESTAMPTZ_TYPE)? {
        tz = zone.offset_for_local(super::timestamp::local_seconds(&tm));
    }
    tm_to_timestamp(&tm, Some(tz)).ok_or_else(timestamp_out_of_range)
}

/// date_trunc(field, timestamptz, zone): truncates local time in the named zone.
pub fn date_trunc_timestamptz_at(units: &str, ts: i64, zone_name: &str) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let zone = lookup_timezone_name(zone_name)?;
    date_trunc_timestamptz(units, ts, &zone)
}

/// date_trunc(field, interval).
pub fn date_trunc_interval(units: &str, iv: &Interval) -> PgResult<Interval> {
    use DateTimeUnit::*;
    let (unit, lower) = trunc_unit(units, INTERVAL_TYPE)?;
    let mut t = interval_to_itm(iv);
    let level = match unit {
        Millennium => 9,
        Century => 8,
        Decade => 7,
        Year => 6,
        Quarter => 5,
        Month => 4,
        Day => 3,
        Hour => 2,
        Minute => 1,
        Second => 0,
        Millisecond => -1,
        Microsecond => -2,
        Week => {
            return Err(not_supported(&lower, INTERVAL_TYPE).with_detail("Months usually have fractional weeks."));
        }
        _ => return Err(not_supported(&lower, INTERVAL_TYPE)),
    };
    if level == 9 {
        t.year = (t.year / 1000) * 1000;
    }
    if level >= 8 {
        t.year = (t.year / 100) * 100;
    }
    if level >= 7 {
        t.year = (t.year / 10) * 10;
    }
    if level >= 6 {
        t.mon = 0;
    }
    if level >= 5 {
        t.mon = 3 * (t.mon / 3);
    }
    if level >= 4 {
        t.mday = 0;
    }
    if level >= 3 {
        t.hour = 0;
    }
    if level >= 2 {
        t.min = 0;
    }
    if level >= 1 {
        t.sec = 0;
    }
    if level >= 0 {
        t.usec = 0;
    } else if level == -1 {
        t.usec = (t.usec / 1000) * 1000;
    }
    let months = t.year * 12 + t.mon;
    let micros = ((t.hour * 60 + t.min) * 60 + t.sec)
        .checked_mul(USECS_PER_SEC)
        .and_then(|v| v.checked_add(t.usec))
        .ok_or_else(interval_out_of_range)?;
    Ok(Interval { months: months as i32, days: t.mday as i32, micros })
}
