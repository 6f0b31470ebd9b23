//! time and time with time zone: text and binary I/O, precision typmods,
//! arithmetic with intervals, make_time, AT TIME ZONE for timetz, and the
//! casts between times and timestamps (PostgreSQL's date.c).

use crate::error::{PgError, PgResult};
use crate::pg_err;

use super::calendar::*;
use super::encode::{encode_interval, encode_time_only};
use super::interval::Interval;
use super::parse;
use super::settings::DateTimeSettings;
use super::timezone::{lookup_timezone_name, TimeZone};

/// A time with time zone: microseconds since midnight and the zone's
/// offset in seconds *west* of UTC (PostgreSQL's sign convention).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeTz {
    pub time: i64,
    pub zone: i32,
}

pub const MAX_TIME_PRECISION: i32 = 6;

const SCALES: [i64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
const OFFSETS: [i64; 7] = [500_000, 50_000, 5_000, 500, 50, 5, 0];

/// Rounds microseconds to `precision` fractional digits, half away from zero.
pub(crate) fn round_to_precision(v: i64, precision: i32) -> i64 {
    let p = precision as usize;
    if v >= 0 {
        ((v + OFFSETS[p]) / SCALES[p]) * SCALES[p]
    } else {
        -(((-v + OFFSETS[p]) / SCALES[p]) * SCALES[p])
    }
}

/// anytime_typmodin: the typmod of time(p)/timetz(p). Precision above 6
/// is reduced to 6 with the returned warning, as PostgreSQL does.
pub fn time_typmod(precision: i32, with_tz: bool) -> PgResult<(i32, Option<PgError>)> {
    let tz = if with_tz { " WITH TIME ZONE" } else { "" };
    if precision < 0 {
        return Err(pg_err!(INVALID_PARAMETER_VALUE, "TIME({}){} precision must not be negative", precision, tz));
    }
    if precision > MAX_TIME_PRECISION {
        let w = typmod_warning(format!(
            "TIME({}){} precision reduced to maximum allowed, {}",
            precision, tz, MAX_TIME_PRECISION
        ));
        return Ok((MAX_TIME_PRECISION, Some(w)));
    }
    Ok((precision, None))
}

/// AdjustTimeForTypmod: rounds a time to the typmod's precision.
pub fn apply_time_typmod(time: i64, typmod: i32) -> i64 {
    if (0..=MAX_TIME_PRECISION).contains(&typmod) {
        round_to_precision(time, typmod)
    } else {
        time
    }
}

/// time_in. A zone in the input is accepted and ignored.
pub fn time_in(text: &str, typmod: i32, settings: &DateTimeSettings, now: i64) -> PgResult<i64> {
    let d = parse::parse_fields(text)
        .and_then(|f| parse::decode_time_only(&f, settings, now))
        .map_err(|e| e.to_error(text, "time"))?;
    let t = time2t(d.tm.hour, d.tm.min, d.tm.sec, d.tm.fsec);
    Ok(apply_time_typmod(t, typmod))
}

/// time_out.
pub fn time_out(time: i64) -> String {
    let (hour, min, sec, fsec) = dt2time(time);
    encode_time_only(&Tm { hour, min, sec, fsec, ..Tm::default() }, None)
}

/// time_recv: a big-endian int64 of microseconds.
pub fn time_recv(buf: &[u8], typmod: i32) -> PgResult<i64> {
    let bytes: [u8; 8] = super::recv_bytes(buf)?;
    let t = i64::from_be_bytes(bytes);
    if !(0..=USECS_PER_DAY).contains(&t) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "time out of range"));
    }
    Ok(apply_time_typmod(t, typmod))
}

pub fn time_send(time: i64) -> Vec<u8> {
    time.to_be_bytes().to_vec()
}

/// timetz_in. Without a zone in the input, the session zone's offset on
/// the given date (or today) applies.
pub fn timetz_in(text: &str, typmod: i32, settings: &DateTimeSettings, now: i64) -> PgResult<TimeTz> {
    let d = parse::parse_fields(text)
        .and_then(|f| parse::decode_time_only(&f, settings, now))
        .map_err(|e| e.to_error(text, "time with time zone"))?;
    let t = time2t(d.tm.hour, d.tm.min, d.tm.sec, d.tm.fsec);
    Ok(TimeTz { time: apply_time_typmod(t, typmod), zone: d.tz.unwrap_or(0) })
}

/// timetz_out.
pub fn timetz_out(t: TimeTz) -> String {
    let (hour, min, sec, fsec) = dt2time(t.time);
    encode_time_only(&Tm { hour, min, sec, fsec, ..Tm::default() }, Some(t.zone))
}

/// timetz_recv: int64 microseconds and int32 zone (seconds west).
pub fn timetz_recv(buf: &[u8], typmod: i32) -> PgResult<TimeTz> {
    let buf: [u8; 12] = super::recv_bytes(buf)?;
    let time = i64::from_be_bytes(buf[0..8].try_into().unwrap());
    if !(0..=USECS_PER_DAY).contains(&time) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "time out of range"));
    }
    let zone = i32::from_be_bytes(buf[8..12].try_into().unwrap());
    if zone <= -TZDISP_LIMIT || zone >= TZDISP_LIMIT {
        return Err(pg_err!(INVALID_TIME_ZONE_DISPLACEMENT_VALUE, "time zone displacement out of range"));
    }
    Ok(TimeTz { time: apply_time_typmod(time, typmod), zone })
}

pub fn timetz_send(t: TimeTz) -> Vec<u8> {
    let mut out = t.time.to_be_bytes().to_vec();
    out.extend_from_slice(&t.zone.to_be_bytes());
    out
}

/// Compares two timetz values: by UTC instant, then by zone (timetz_cmp_internal).
pub fn timetz_cmp(a: TimeTz, b: TimeTz) -> std::cmp::Ordering {
    let au = a.time + a.zone as i64 * USECS_PER_SEC;
    let bu = b.time + b.zone as i64 * USECS_PER_SEC;
    au.cmp(&bu).then(a.zone.cmp(&b.zone))
}

/// Wraps microseconds into one day.
fn wrap_day(t: i64) -> i64 {
    t.rem_euclid(USECS_PER_DAY)
}

/// time + interval: only the interval's time part counts, wrapping at midnight.
pub fn time_add_interval(time: i64, span: &Interval) -> i64 {
    wrap_day(time.wrapping_add(span.micros % USECS_PER_DAY))
}

/// time - interval.
pub fn time_sub_interval(time: i64, span: &Interval) -> i64 {
    wrap_day(time.wrapping_sub(span.micros % USECS_PER_DAY))
}

/// timetz + interval.
pub fn timetz_add_interval(t: TimeTz, span: &Interval) -> TimeTz {
    TimeTz { time: time_add_interval(t.time, span), zone: t.zone }
}

/// timetz - interval.
pub fn timetz_sub_interval(t: TimeTz, span: &Interval) -> TimeTz {
    TimeTz { time: time_sub_interval(t.time, span), zone: t.zone }
}

/// time - time = interval.
pub fn time_diff(a: i64, b: i64) -> Interval {
    Interval { months: 0, days: 0, micros: a - b }
}

/// time::interval.
pub fn time_to_interval(time: i64) -> Interval {
    Interval { months: 0, days: 0, micros: time }
}

/// interval::time: the time part, wrapped into one day.
pub fn interval_to_time(span: &Interval) -> i64 {
    wrap_day(span.micros)
}

/// timestamp::time; NULL (None) for infinite timestamps.
pub fn timestamp_to_time(ts: i64) -> PgResult<Option<i64>> {
    if !timestamp_is_finite(ts) {
        return Ok(None);
    }
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    Ok(Some(time2t(tm.hour, tm.min, tm.sec, tm.fsec)))
}

/// timestamptz::time: local time of day in `zone`; None for infinities.
pub fn timestamptz_to_time(ts: i64, zone: &TimeZone) -> PgResult<Option<i64>> {
    if !timestamp_is_finite(ts) {
        return Ok(None);
    }
    let (tm, _) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    Ok(Some(time2t(tm.hour, tm.min, tm.sec, tm.fsec)))
}

/// timestamptz::timetz: local time and offset in `zone`; None for infinities.
pub fn timestamptz_to_timetz(ts: i64, zone: &TimeZone) -> PgResult<Option<TimeTz>> {
    if !timestamp_is_finite(ts) {
        return Ok(None);
    }
    let (tm, tz) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    Ok(Some(TimeTz { time: time2t(tm.hour, tm.min, tm.sec, tm.fsec), zone: tz.unwrap_or(0) }))
}

/// time::timetz: the session zone's offset on today's date (time_timetz).
pub fn time_to_timetz(time: i64, zone: &TimeZone, now: i64) -> TimeTz {
    let today = super::date::current_date(now, zone);
    let local = today as i64 * USECS_PER_DAY + time - time % USECS_PER_SEC;
    TimeTz { time, zone: zone.offset_for_local(local) }
}

/// timetz::time.
pub fn timetz_to_time(t: TimeTz) -> i64 {
    t.time
}

/// timetz AT TIME ZONE 'name': the same instant shown in another zone,
/// whose offset is taken at the transaction start (timetz_zone).
pub fn timetz_at_zone(t: TimeTz, zone_name: &str, now: i64) -> PgResult<TimeTz> {
    let zone = lookup_timezone_name(zone_name)?;
    let tz = zone.offset_at_utc(now);
    Ok(TimeTz { time: wrap_day(t.time + (t.zone - tz) as i64 * USECS_PER_SEC), zone: tz })
}

/// The error for AT TIME ZONE with an interval carrying months or days.
pub(crate) fn interval_zone_error(zone: &Interval, settings: &DateTimeSettings) -> PgError {
    pg_err!(
        INVALID_PARAMETER_VALUE,
        "interval time zone \"{}\" must not include months or days",
        encode_interval(zone, settings.interval_style)
    )
}

/// timetz AT TIME ZONE interval (timetz_izone).
pub fn timetz_at_interval_zone(t: TimeTz, zone: &Interval, settings: &DateTimeSettings) -> PgResult<TimeTz> {
    if zone.months != 0 || zone.days != 0 {
        return Err(interval_zone_error(zone, settings));
    }
    let tz = -((zone.micros / USECS_PER_SEC) as i32);
    Ok(TimeTz { time: wrap_day(t.time + (t.zone - tz) as i64 * USECS_PER_SEC), zone: tz })
}

/// float_time_overflows: whether h:m:s (fractional seconds) exceeds 24:00:00.
pub(crate) fn float_time_overflows(hour: i32, min: i32, sec: f64) -> bool {
    if !(0..=24).contains(&hour) || !(0..60).contains(&min) {
        return true;
    }
    // Round to microseconds before range-checking, so 60.0000001 is 60.
    if sec.is_nan() {
        return true;
    }
    let usec = (sec * USECS_PER_SEC as f64).round_ties_even();
    if usec < 0.0 || usec > (60 * USECS_PER_SEC) as f64 {
        return true;
    }
    ((hour as i64 * 60 + min as i64) * 60) * USECS_PER_SEC + usec as i64 > USECS_PER_DAY
}

/// C's "%g" (six significant digits), used in PostgreSQL's messages.
pub(crate) fn format_g(v: f64, width: usize) -> String {
    // PostgreSQL's own snprintf spells non-finite values out.
    let s = if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-Infinity" } else { "Infinity" }.to_string()
    } else if v == 0.0 {
        if v.is_sign_negative() { "-0" } else { "0" }.to_string()
    } else {
        let sci = format!("{:.5e}", v);
        let (mant, exp) = sci.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        if !(-4..6).contains(&exp) {
            let mant = if mant.contains('.') { mant.trim_end_matches('0').trim_end_matches('.') } else { mant };
            format!("{}e{}{:02}", mant, if exp < 0 { '-' } else { '+' }, exp.abs())
        } else {
            let decimals = (5 - exp).max(0) as usize;
            let f = format!("{:.*}", decimals, v);
            if f.contains('.') {
                f.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                f
            }
        }
    };
    if s.len() < width && v.is_finite() {
        let (sign, digits) = if let Some(d) = s.strip_prefix('-') { ("-", d) } else { ("", s.as_str()) };
        format!("{}{}{}", sign, "0".repeat(width - s.len()), digits)
    } else {
        s
    }
}

/// make_time(hour, min, sec).
pub fn make_time(hour: i32, min: i32, sec: f64) -> PgResult<i64> {
    if float_time_overflows(hour, min, sec) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "time field value out of range: {}:{:02}:{}", hour, min, format_g(sec, 2)));
    }
    Ok(((hour as i64 * 60 + min as i64) * 60) * USECS_PER_SEC + (sec * USECS_PER_SEC as f64).round_ties_even() as i64)
}

/// LOCALTIME / CURRENT_TIME: the transaction start's local time (and offset) in `zone`.
pub fn current_time(now: i64, zone: &TimeZone) -> TimeTz {
    timestamptz_to_timetz(now, zone).ok().flatten().unwrap_or(TimeTz { time: 0, zone: 0 })
}
