//! The interval type: months, days and microseconds kept apart (a month
//! is not a fixed number of days, nor a day of hours across DST), compared
//! as PostgreSQL's interval_cmp does by a single span with 30-day months.
//! Text and binary I/O, typmods (`interval day to second(2)`), arithmetic,
//! justify_* and make_interval.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::error::PgResult;
use crate::pg_err;

use super::calendar::*;
use super::encode::encode_interval;
use super::parse::{self, Dterr, INTERVAL_FULL_RANGE};
use super::settings::IntervalStyle;

/// An interval value. Equality, ordering and hashing treat a month as 30
/// days and a day as 24 hours, so '1 month' = '30 days' = '720 hours'.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    pub const fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval { months, days, micros }
    }

    /// interval_cmp_value: the whole span in microseconds.
    pub fn span(&self) -> i128 {
        let days = self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128;
        days * USECS_PER_DAY as i128 + self.micros as i128
    }
}

impl PartialEq for Interval {
    fn eq(&self, other: &Self) -> bool {
        self.span() == other.span()
    }
}

impl Eq for Interval {}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Interval {
    fn cmp(&self, other: &Self) -> Ordering {
        self.span().cmp(&other.span())
    }
}

impl Hash for Interval {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.span().hash(state);
    }
}

/// Largest seconds precision of time, timestamp and interval typmods.
pub const MAX_INTERVAL_PRECISION: i32 = 6;
const INTERVAL_FULL_PRECISION: i32 = 0xFFFF;

/// The field restriction of an interval typmod (`interval year to month`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalFields {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    YearToMonth,
    DayToHour,
    DayToMinute,
    DayToSecond,
    HourToMinute,
    HourToSecond,
    MinuteToSecond,
}

impl IntervalFields {
    fn mask(self) -> u32 {
        use parse::{IM_DAY as D, IM_HOUR as H, IM_MINUTE as MI, IM_MONTH as MO, IM_SECOND as S, IM_YEAR as Y};
        match self {
            IntervalFields::Year => Y,
            IntervalFields::Month => MO,
            IntervalFields::Day => D,
            IntervalFields::Hour => H,
            IntervalFields::Minute => MI,
            IntervalFields::Second => S,
            IntervalFields::YearToMonth => Y | MO,
            IntervalFields::DayToHour => D | H,
            IntervalFields::DayToMinute => D | H | MI,
            IntervalFields::DayToSecond => D | H | MI | S,
            IntervalFields::HourToMinute => H | MI,
            IntervalFields::HourToSecond => H | MI | S,
            IntervalFields::MinuteToSecond => MI | S,
        }
    }

    fn from_mask(mask: u32) -> Option<IntervalFields> {
        use IntervalFields::*;
        [Year, Month, Day, Hour, Minute, Second, YearToMonth, DayToHour, DayToMinute, DayToSecond, HourToMinute, HourToSecond, MinuteToSecond]
            .into_iter()
            .find(|f| f.mask() == mask)
    }

    fn text(self) -> &'static str {
        match self {
            IntervalFields::Year => " year",
            IntervalFields::Month => " month",
            IntervalFields::Day => " day",
            IntervalFields::Hour => " hour",
            IntervalFields::Minute => " minute",
            IntervalFields::Second => " second",
            IntervalFields::YearToMonth => " year to month",
            IntervalFields::DayToHour => " day to hour",
            IntervalFields::DayToMinute => " day to minute",
            IntervalFields::DayToSecond => " day to second",
            IntervalFields::HourToMinute => " hour to minute",
            IntervalFields::HourToSecond => " hour to second",
            IntervalFields::MinuteToSecond => " minute to second",
        }
    }
}

/// intervaltypmodin: encodes the fields and seconds precision of an
/// interval type. A precision above 6 is reduced to 6; the warning
/// PostgreSQL issues then is returned alongside.
pub fn interval_typmod(fields: Option<IntervalFields>, precision: Option<i32>) -> PgResult<(i32, Option<crate::error::PgError>)> {
    let range = fields.map(|f| f.mask()).unwrap_or(INTERVAL_FULL_RANGE);
    let mut warning = None;
    let precision = match precision {
        None => INTERVAL_FULL_PRECISION,
        Some(p) if p < 0 => {
            return Err(pg_err!(INVALID_PARAMETER_VALUE, "INTERVAL({}) precision must not be negative", p));
        }
        Some(p) if p > MAX_INTERVAL_PRECISION => {
            warning = Some(typmod_warning(format!(
                "INTERVAL({}) precision reduced to maximum allowed, {}",
                p, MAX_INTERVAL_PRECISION
            )));
            MAX_INTERVAL_PRECISION
        }
        Some(p) => p,
    };
    Ok((((range << 16) as i32) | (precision & 0xFFFF), warning))
}

fn typmod_range(typmod: i32) -> u32 {
    ((typmod >> 16) & 0x7FFF) as u32
}

fn typmod_precision(typmod: i32) -> i32 {
    typmod & 0xFFFF
}

/// intervaltypmodout: " day to second(2)", "(3)", "" for -1.
pub fn interval_typmod_out(typmod: i32) -> String {
    if typmod < 0 {
        return String::new();
    }
    let range = typmod_range(typmod);
    let fields = if range == INTERVAL_FULL_RANGE { "" } else { IntervalFields::from_mask(range).map(|f| f.text()).unwrap_or("") };
    let precision = typmod_precision(typmod);
    if precision != INTERVAL_FULL_PRECISION {
        format!("{fields}({precision})")
    } else {
        fields.to_string()
    }
}

/// interval_in: postgres-style, SQL-standard or ISO 8601 interval text.
/// The typmod's fields decide what a bare number means ('5' minute) and
/// are then applied (AdjustIntervalForTypmod).
pub fn interval_in(text: &str, typmod: i32, style: IntervalStyle) -> PgResult<Interval> {
    let range = if typmod >= 0 { typmod_range(typmod) } else { INTERVAL_FULL_RANGE };
    let decoded = parse::parse_fields(text).and_then(|fields| parse::decode_interval(&fields, range, style));
    let itm = match decoded {
        Err(Dterr::BadFormat) => parse::decode_iso8601_interval(text),
        other => other,
    };
    let itm = itm.map_err(|e| {
        let e = if e == Dterr::FieldOverflow { Dterr::IntervalOverflow } else { e };
        e.to_error(text, "interval")
    })?;
    let months = itm.year as i64 * MONTHS_PER_YEAR as i64 + itm.mon as i64;
    if months > i32::MAX as i64 || months < i32::MIN as i64 {
        return Err(interval_out_of_range());
    }
    apply_interval_typmod(Interval { months: months as i32, days: itm.mday, micros: itm.usec }, typmod)
}

/// interval_out.
pub fn interval_out(iv: &Interval, style: IntervalStyle) -> String {
    encode_interval(iv, style)
}

/// AdjustIntervalForTypmod: drops fields below the typmod's range and
/// rounds seconds to its precision.
pub fn apply_interval_typmod(iv: Interval, typmod: i32) -> PgResult<Interval> {
    const SCALES: [i64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    const OFFSETS: [i64; 7] = [500_000, 50_000, 5_000, 500, 50, 5, 0];
    let mut iv = iv;
    if typmod < 0 {
        return Ok(iv);
    }
    use IntervalFields::*;
    let range = typmod_range(typmod);
    if range != INTERVAL_FULL_RANGE {
        match IntervalFields::from_mask(range) {
            Some(Year) => {
                iv.months = (iv.months / MONTHS_PER_YEAR) * MONTHS_PER_YEAR;
                iv.days = 0;
                iv.micros = 0;
            }
            Some(Month) | Some(YearToMonth) => {
                iv.days = 0;
                iv.micros = 0;
            }
            Some(Day) => iv.micros = 0,
            Some(Hour) | Some(DayToHour) => iv.micros = (iv.micros / USECS_PER_HOUR) * USECS_PER_HOUR,
            Some(Minute) | Some(DayToMinute) | Some(HourToMinute) => {
                iv.micros = (iv.micros / USECS_PER_MINUTE) * USECS_PER_MINUTE
            }
            Some(Second) | Some(DayToSecond) | Some(HourToSecond) | Some(MinuteToSecond) => {}
            None => return Err(crate::error::PgError::internal(format!("unrecognized interval typmod: {typmod}"))),
        }
    }
    let precision = typmod_precision(typmod);
    if precision != INTERVAL_FULL_PRECISION {
        if !(0..=MAX_INTERVAL_PRECISION).contains(&precision) {
            return Err(pg_err!(
                INVALID_PARAMETER_VALUE,
                "interval({}) precision must be between {} and {}",
                precision,
                0,
                MAX_INTERVAL_PRECISION
            ));
        }
        let p = precision as usize;
        let t = if iv.micros >= 0 { iv.micros.checked_add(OFFSETS[p]) } else { iv.micros.checked_sub(OFFSETS[p]) };
        let t = t.ok_or_else(interval_out_of_range)?;
        iv.micros = t - t % SCALES[p];
    }
    Ok(iv)
}

/// interval_recv: int64 microseconds, int32 days, int32 months.
pub fn interval_recv(buf: &[u8]) -> PgResult<Interval> {
    let buf: [u8; 16] = super::recv_bytes(buf)?;
    let micros = i64::from_be_bytes(buf[0..8].try_into().unwrap());
    let days = i32::from_be_bytes(buf[8..12].try_into().unwrap());
    let months = i32::from_be_bytes(buf[12..16].try_into().unwrap());
    Ok(Interval { months, days, micros })
}

/// interval_send.
pub fn interval_send(iv: &Interval) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.extend_from_slice(&iv.micros.to_be_bytes());
    out.extend_from_slice(&iv.days.to_be_bytes());
    out.extend_from_slice(&iv.months.to_be_bytes());
    out
}

/// interval_pl.
pub fn interval_add(a: &Interval, b: &Interval) -> PgResult<Interval> {
    Ok(Interval {
        months: a.months.checked_add(b.months).ok_or_else(interval_out_of_range)?,
        days: a.days.checked_add(b.days).ok_or_else(interval_out_of_range)?,
        micros: a.micros.checked_add(b.micros).ok_or_else(interval_out_of_range)?,
    })
}

/// interval_mi.
pub fn interval_sub(a: &Interval, b: &Interval) -> PgResult<Interval> {
    Ok(Interval {
        months: a.months.checked_sub(b.months).ok_or_else(interval_out_of_range)?,
        days: a.days.checked_sub(b.days).ok_or_else(interval_out_of_range)?,
        micros: a.micros.checked_sub(b.micros).ok_or_else(interval_out_of_range)?,
    })
}

/// interval_um: unary minus.
pub fn interval_neg(a: &Interval) -> PgResult<Interval> {
    Ok(Interval {
        months: a.months.checked_neg().ok_or_else(interval_out_of_range)?,
        days: a.days.checked_neg().ok_or_else(interval_out_of_range)?,
        micros: a.micros.checked_neg().ok_or_else(interval_out_of_range)?,
    })
}

fn fits_i32(v: f64) -> bool {
    !v.is_nan() && v >= i32::MIN as f64 && v < -(i32::MIN as f64)
}

fn fits_i64(v: f64) -> bool {
    !v.is_nan() && v >= i64::MIN as f64 && v < -(i64::MIN as f64)
}

/// TSROUND: rounds to microsecond precision to undo binary fractions.
fn tsround(v: f64) -> f64 {
    (v * 1_000_000.0).round_ties_even() / 1_000_000.0
}

/// Scales an interval: whole months and days scale in place; fractional
/// months cascade down into days (30 per month) and fractional days into
/// seconds, never up (interval_mul/interval_div).
fn interval_scale(span: &Interval, month_f: f64, day_f: f64, scale_time: impl Fn(f64) -> f64) -> PgResult<Interval> {
    if !fits_i32(month_f) || !fits_i32(day_f) {
        return Err(interval_out_of_range());
    }
    let months = month_f as i32;
    let mut days = day_f as i32;
    let month_remainder_days = tsround((month_f - months as f64) * DAYS_PER_MONTH as f64);
    let mut sec_remainder =
        tsround((day_f - days as f64 + month_remainder_days - (month_remainder_days as i32) as f64) * SECS_PER_DAY as f64);
    if sec_remainder.abs() >= SECS_PER_DAY as f64 {
        let whole = (sec_remainder / SECS_PER_DAY as f64) as i32;
        days = days.checked_add(whole).ok_or_else(interval_out_of_range)?;
        sec_remainder -= whole as f64 * SECS_PER_DAY as f64;
    }
    days = days.checked_add(month_remainder_days as i32).ok_or_else(interval_out_of_range)?;
    let time = (scale_time(span.micros as f64) + sec_remainder * USECS_PER_SEC as f64).round_ties_even();
    if !fits_i64(time) {
        return Err(interval_out_of_range());
    }
    Ok(Interval { months, days, micros: time as i64 })
}

/// interval * float8.
pub fn interval_mul(span: &Interval, factor: f64) -> PgResult<Interval> {
    interval_scale(span, span.months as f64 * factor, span.days as f64 * factor, |t| t * factor)
}

/// interval / float8.
pub fn interval_div(span: &Interval, factor: f64) -> PgResult<Interval> {
    if factor == 0.0 {
        return Err(pg_err!(DIVISION_BY_ZERO, "division by zero"));
    }
    interval_scale(span, span.months as f64 / factor, span.days as f64 / factor, |t| t / factor)
}

/// justify_hours: whole 24-hour periods of the time part become days.
pub fn justify_hours(span: &Interval) -> PgResult<Interval> {
    let mut r = *span;
    let wholeday = r.micros / USECS_PER_DAY;
    r.micros -= wholeday * USECS_PER_DAY;
    r.days = r.days.checked_add(i32::try_from(wholeday).map_err(|_| interval_out_of_range())?).ok_or_else(interval_out_of_range)?;
    if r.days > 0 && r.micros < 0 {
        r.micros += USECS_PER_DAY;
        r.days -= 1;
    } else if r.days < 0 && r.micros > 0 {
        r.micros -= USECS_PER_DAY;
        r.days += 1;
    }
    Ok(r)
}

/// justify_days: whole 30-day periods become months.
pub fn justify_days(span: &Interval) -> PgResult<Interval> {
    let mut r = *span;
    let wholemonth = r.days / DAYS_PER_MONTH;
    r.days -= wholemonth * DAYS_PER_MONTH;
    r.months = r.months.checked_add(wholemonth).ok_or_else(interval_out_of_range)?;
    if r.months > 0 && r.days < 0 {
        r.days += DAYS_PER_MONTH;
        r.months -= 1;
    } else if r.months < 0 && r.days > 0 {
        r.days -= DAYS_PER_MONTH;
        r.months += 1;
    }
    Ok(r)
}

/// justify_interval: justify_hours then justify_days, with signs made consistent.
pub fn justify_interval(span: &Interval) -> PgResult<Interval> {
    let mut r = *span;
    // Pre-justify days when day and time have the same sign, so adding the
    // time's whole days cannot overflow.
    if (r.days > 0 && r.micros > 0) || (r.days < 0 && r.micros < 0) {
        let wholemonth = r.days / DAYS_PER_MONTH;
        r.days -= wholemonth * DAYS_PER_MONTH;
        r.months = r.months.checked_add(wholemonth).ok_or_else(interval_out_of_range)?;
    }
    let wholeday = r.micros / USECS_PER_DAY;
    r.micros -= wholeday * USECS_PER_DAY;
    r.days = r.days.checked_add(i32::try_from(wholeday).map_err(|_| interval_out_of_range())?).ok_or_else(interval_out_of_range)?;
    let wholemonth = r.days / DAYS_PER_MONTH;
    r.days -= wholemonth * DAYS_PER_MONTH;
    r.months = r.months.checked_add(wholemonth).ok_or_else(interval_out_of_range)?;
    if r.months > 0 && (r.days < 0 || (r.days == 0 && r.micros < 0)) {
        r.days += DAYS_PER_MONTH;
        r.months -= 1;
    } else if r.months < 0 && (r.days > 0 || (r.days == 0 && r.micros > 0)) {
        r.days -= DAYS_PER_MONTH;
        r.months += 1;
    }
    if r.days > 0 && r.micros < 0 {
        r.micros += USECS_PER_DAY;
        r.days -= 1;
    } else if r.days < 0 && r.micros > 0 {
        r.micros -= USECS_PER_DAY;
        r.days += 1;
    }
    Ok(r)
}

/// make_interval(years, months, weeks, days, hours, mins, secs).
///
/// PostgreSQL 15 does this arithmetic without overflow checks (results
/// wrap around, and seconds beyond the int64 range become its minimum, as
/// the C conversion does on x86-64); the results here are the same.
pub fn make_interval(years: i32, months: i32, weeks: i32, days: i32, hours: i32, mins: i32, secs: f64) -> PgResult<Interval> {
    if secs.is_nan() || secs.is_infinite() {
        return Err(interval_out_of_range());
    }
    let m = years.wrapping_mul(MONTHS_PER_YEAR).wrapping_add(months);
    let d = weeks.wrapping_mul(7).wrapping_add(days);
    let s = (secs * USECS_PER_SEC as f64).round_ties_even();
    let s = if fits_i64(s) { s as i64 } else { i64::MIN };
    let t = (hours as i64).wrapping_mul(USECS_PER_HOUR).wrapping_add((mins as i64).wrapping_mul(USECS_PER_MINUTE)).wrapping_add(s);
    Ok(Interval { months: m, days: d, micros: t })
}

/// isfinite(interval): PostgreSQL 15 has no infinite intervals.
pub fn interval_is_finite(_span: &Interval) -> bool {
    true
}

/// interval_larger / interval_smaller semantics are plain `max`/`min`
/// (ties keep the first argument, as PostgreSQL does).
pub fn interval_larger(a: &Interval, b: &Interval) -> Interval {
    if a.cmp(b) == Ordering::Less {
        *b
    } else {
        *a
    }
}

pub fn interval_smaller(a: &Interval, b: &Interval) -> Interval {
    if a.cmp(b) == Ordering::Greater {
        *b
    } else {
        *a
    }
}
