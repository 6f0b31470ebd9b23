//! timestamp and timestamp with time zone: text and binary I/O, precision
//! typmods, interval arithmetic (calendar-aware, and DST-aware for
//! timestamptz), age, AT TIME ZONE, date_bin, make_timestamp(tz),
//! to_timestamp(float8) and the timestamp/timestamptz casts
//! (PostgreSQL's timestamp.c).

use std::cmp::Ordering;

use crate::error::{PgError, PgResult};
use crate::pg_err;

use super::calendar::*;
use super::encode::{encode_date_time, ShownZone};
use super::interval::{justify_hours, Interval};
use super::parse::{self, DateTimeKind};
use super::settings::{DateStyleOutput, DateTimeSettings};
use super::time::{float_time_overflows, format_g, interval_zone_error, round_to_precision};
use super::timezone::{lookup_timezone_name, TimeZone};

pub const MAX_TIMESTAMP_PRECISION: i32 = 6;

/// 1970-01-01 00:00:00 as a timestamp (SetEpochTimestamp).
pub const EPOCH_TIMESTAMP: i64 = -((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64) * USECS_PER_DAY;

/// anytimestamp_typmodin: the typmod of timestamp(p)/timestamptz(p); a
/// precision above 6 is reduced to 6 with the returned warning.
pub fn timestamp_typmod(precision: i32, with_tz: bool) -> PgResult<(i32, Option<PgError>)> {
    let tz = if with_tz { " WITH TIME ZONE" } else { "" };
    if precision < 0 {
        return Err(pg_err!(INVALID_PARAMETER_VALUE, "TIMESTAMP({}){} precision must not be negative", precision, tz));
    }
    if precision > MAX_TIMESTAMP_PRECISION {
        let w = typmod_warning(format!(
            "TIMESTAMP({}){} precision reduced to maximum allowed, {}",
            precision, tz, MAX_TIMESTAMP_PRECISION
        ));
        return Ok((MAX_TIMESTAMP_PRECISION, Some(w)));
    }
    Ok((precision, None))
}

/// AdjustTimestampForTypmod: rounds to the typmod's precision.
pub fn apply_timestamp_typmod(ts: i64, typmod: i32) -> PgResult<i64> {
    if !timestamp_is_finite(ts) || typmod == -1 || typmod == MAX_TIMESTAMP_PRECISION {
        return Ok(ts);
    }
    if !(0..=MAX_TIMESTAMP_PRECISION).contains(&typmod) {
        return Err(pg_err!(
            INVALID_PARAMETER_VALUE,
            "timestamp({}) precision must be between {} and {}",
            typmod,
            0,
            MAX_TIMESTAMP_PRECISION
        ));
    }
    let r = round_to_precision(ts, typmod);
    if !is_valid_timestamp(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

fn decode(text: &str, type_name: &str, settings: &DateTimeSettings, now: i64) -> PgResult<parse::Decoded> {
    parse::parse_fields(text)
        .and_then(|f| parse::decode_date_time(&f, settings, now))
        .map_err(|e| e.to_error(text, type_name))
}

/// timestamp_in. A zone in the input is accepted and ignored.
pub fn timestamp_in(text: &str, typmod: i32, settings: &DateTimeSettings, now: i64) -> PgResult<i64> {
    let d = decode(text, "timestamp", settings, now)?;
    let ts = match d.kind {
        DateTimeKind::Value => tm_to_timestamp(&d.tm, None)
            .ok_or_else(|| pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range: \"{}\"", text))?,
        DateTimeKind::Epoch => EPOCH_TIMESTAMP,
        DateTimeKind::Infinity => DT_NOEND,
        DateTimeKind::NegInfinity => DT_NOBEGIN,
    };
    apply_timestamp_typmod(ts, typmod)
}

/// timestamptz_in. Without a zone in the input, the session zone applies.
pub fn timestamptz_in(text: &str, typmod: i32, settings: &DateTimeSettings, now: i64) -> PgResult<i64> {
    let d = decode(text, "timestamp with time zone", settings, now)?;
    let ts = match d.kind {
        DateTimeKind::Value => tm_to_timestamp(&d.tm, d.tz)
            .ok_or_else(|| pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range: \"{}\"", text))?,
        DateTimeKind::Epoch => EPOCH_TIMESTAMP,
        DateTimeKind::Infinity => DT_NOEND,
        DateTimeKind::NegInfinity => DT_NOBEGIN,
    };
    apply_timestamp_typmod(ts, typmod)
}

fn special_text(ts: i64) -> Option<&'static str> {
    match ts {
        DT_NOBEGIN => Some("-infinity"),
        DT_NOEND => Some("infinity"),
        _ => None,
    }
}

/// timestamp_out, in the session's DateStyle.
pub fn timestamp_out(ts: i64, settings: &DateTimeSettings) -> PgResult<String> {
    if let Some(s) = special_text(ts) {
        return Ok(s.to_string());
    }
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    Ok(encode_date_time(&tm, None, settings.date_style, settings.date_order))
}

/// timestamptz_out: local time in the session zone, with its offset (ISO)
/// or abbreviation (other styles).
pub fn timestamptz_out(ts: i64, settings: &DateTimeSettings) -> PgResult<String> {
    timestamptz_out_in_zone(ts, settings, &settings.time_zone)
}

/// timestamptz output as seen from a given zone.
pub fn timestamptz_out_in_zone(ts: i64, settings: &DateTimeSettings, zone: &TimeZone) -> PgResult<String> {
    if let Some(s) = special_text(ts) {
        return Ok(s.to_string());
    }
    let (tm, tz) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    let abbrev = if settings.date_style == DateStyleOutput::Iso { None } else { Some(zone.abbrev_at_utc(ts)) };
    let shown = ShownZone { offset: tz.unwrap_or(0), abbrev: abbrev.as_deref() };
    Ok(encode_date_time(&tm, Some(shown), settings.date_style, settings.date_order))
}

/// timestamp_recv / timestamptz_recv: a big-endian int64.
pub fn timestamp_recv(buf: &[u8], typmod: i32) -> PgResult<i64> {
    let bytes: [u8; 8] = super::recv_bytes(buf)?;
    let ts = i64::from_be_bytes(bytes);
    if timestamp_is_finite(ts) && !is_valid_timestamp(ts) {
        return Err(timestamp_out_of_range());
    }
    apply_timestamp_typmod(ts, typmod)
}

pub fn timestamp_send(ts: i64) -> Vec<u8> {
    ts.to_be_bytes().to_vec()
}

/// Adds months to broken-down fields, clamping the day to the month's end.
fn add_months(tm: &mut Tm, months: i32) -> PgResult<()> {
    let total = tm.mon as i64 + months as i64;
    let (year_delta, mon) = if total > 12 {
        ((total - 1) / 12, (total - 1) % 12 + 1)
    } else if total < 1 {
        (total / 12 - 1, total % 12 + 12)
    } else {
        (0, total)
    };
    let year = tm.year as i64 + year_delta;
    if year > i32::MAX as i64 || year < i32::MIN as i64 {
        return Err(timestamp_out_of_range());
    }
    tm.year = year as i32;
    tm.mon = mon as i32;
    if !is_valid_julian(tm.year, tm.mon) {
        return Err(timestamp_out_of_range());
    }
    let last = days_in_month(tm.year, tm.mon);
    if tm.mday > last {
        tm.mday = last;
    }
    Ok(())
}

/// Adds days to broken-down fields via Julian day numbers.
fn add_days(tm: &mut Tm, days: i32) -> PgResult<()> {
    let julian = date2j(tm.year, tm.mon, tm.mday) as i64 + days as i64;
    if julian < 0 || julian > i32::MAX as i64 {
        return Err(timestamp_out_of_range());
    }
    let (y, m, d) = j2date(julian as i32);
    tm.year = y;
    tm.mon = m;
    tm.mday = d;
    Ok(())
}

/// timestamp + interval: months first (clamping to month end, so Jan 31 +
/// 1 month = Feb 28/29), then days, then the time part.
pub fn timestamp_add_interval(ts: i64, span: &Interval) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let mut ts = ts;
    if span.months != 0 {
        let mut tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
        add_months(&mut tm, span.months)?;
        ts = tm_to_timestamp(&tm, None).ok_or_else(timestamp_out_of_range)?;
    }
    if span.days != 0 {
        let mut tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
        add_days(&mut tm, span.days)?;
        ts = tm_to_timestamp(&tm, None).ok_or_else(timestamp_out_of_range)?;
    }
    check_timestamp(ts.checked_add(span.micros))
}

/// Negation as timestamp_mi_interval does it: without an overflow check,
/// so the most negative fields stay as they are (and then overflow the timestamp).
pub(crate) fn wrapping_negate(span: &Interval) -> Interval {
    Interval { months: span.months.wrapping_neg(), days: span.days.wrapping_neg(), micros: span.micros.wrapping_neg() }
}

/// timestamp - interval.
pub fn timestamp_sub_interval(ts: i64, span: &Interval) -> PgResult<i64> {
    timestamp_add_interval(ts, &wrapping_negate(span))
}

/// timestamptz + interval: months and days are added to the local time in
/// `zone` (so '1 day' across a DST change keeps the wall-clock time), the
/// time part to the instant.
pub fn timestamptz_add_interval(ts: i64, span: &Interval, zone: &TimeZone) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let mut ts = ts;
    if span.months != 0 {
        let (mut tm, _) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
        add_months(&mut tm, span.months)?;
        let tz = zone.offset_for_local(local_seconds(&tm));
        ts = tm_to_timestamp(&tm, Some(tz)).ok_or_else(timestamp_out_of_range)?;
    }
    if span.days != 0 {
        let (mut tm, _) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
        add_days(&mut tm, span.days)?;
        let tz = zone.offset_for_local(local_seconds(&tm));
        ts = tm_to_timestamp(&tm, Some(tz)).ok_or_else(timestamp_out_of_range)?;
    }
    check_timestamp(ts.checked_add(span.micros))
}

/// timestamptz - interval.
pub fn timestamptz_sub_interval(ts: i64, span: &Interval, zone: &TimeZone) -> PgResult<i64> {
    timestamptz_add_interval(ts, &wrapping_negate(span), zone)
}

/// Local fields as a timestamp to the whole second, for zone lookups
/// (PostgreSQL's DetermineTimeZoneOffset ignores fractional seconds).
pub(crate) fn local_seconds(tm: &Tm) -> i64 {
    if !is_valid_julian(tm.year, tm.mon) {
        return 0;
    }
    ((date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE) as i64)
        .saturating_mul(USECS_PER_DAY)
        .saturating_add(time2t(tm.hour, tm.min, tm.sec, 0))
}

/// timestamp - timestamp (also timestamptz - timestamptz): the difference
/// with whole 24-hour periods shown as days (timestamp_mi).
pub fn timestamp_diff(a: i64, b: i64) -> PgResult<Interval> {
    if !timestamp_is_finite(a) || !timestamp_is_finite(b) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "cannot subtract infinite timestamps"));
    }
    // PostgreSQL 15 subtracts without an overflow check; match its result.
    let micros = a.wrapping_sub(b);
    justify_hours(&Interval { months: 0, days: 0, micros })
}

/// The symbolic difference of two broken-down times (timestamp_age's core).
fn age_fields(dt1: i64, dt2: i64, tm1: &Tm, tm2: &Tm) -> PgResult<Interval> {
    let mut fsec = tm1.fsec as i64 - tm2.fsec as i64;
    let mut sec = tm1.sec - tm2.sec;
    let mut min = tm1.min - tm2.min;
    let mut hour = tm1.hour - tm2.hour;
    let mut mday = tm1.mday - tm2.mday;
    let mut mon = tm1.mon - tm2.mon;
    let mut year = tm1.year - tm2.year;
    let flip = dt1 < dt2;
    if flip {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    // Borrow negative fields from the next larger unit.
    while fsec < 0 {
        fsec += USECS_PER_SEC;
        sec -= 1;
    }
    while sec < 0 {
        sec += 60;
        min -= 1;
    }
    while min < 0 {
        min += 60;
        hour -= 1;
    }
    while hour < 0 {
        hour += 24;
        mday -= 1;
    }
    while mday < 0 {
        let base = if flip { tm1 } else { tm2 };
        mday += days_in_month(base.year, base.mon);
        mon -= 1;
    }
    while mon < 0 {
        mon += 12;
        year -= 1;
    }
    if flip {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    let months = year as i64 * 12 + mon as i64;
    if months > i32::MAX as i64 || months < i32::MIN as i64 {
        return Err(interval_out_of_range());
    }
    let micros = ((hour as i64 * 60 + min as i64) * 60 + sec as i64) * USECS_PER_SEC + fsec;
    Ok(Interval { months: months as i32, days: mday, micros })
}

/// age(timestamp, timestamp): years, months and days between two times,
/// counted on the calendar rather than in fixed-length units.
pub fn timestamp_age(dt1: i64, dt2: i64) -> PgResult<Interval> {
    let tm1 = timestamp_to_tm_utc_finite(dt1)?;
    let tm2 = timestamp_to_tm_utc_finite(dt2)?;
    age_fields(dt1, dt2, &tm1, &tm2)
}

/// age(timestamptz, timestamptz), computed on local times in `zone`.
pub fn timestamptz_age(dt1: i64, dt2: i64, zone: &TimeZone) -> PgResult<Interval> {
    let tm1 = timestamp_to_tm_finite(dt1, zone)?;
    let tm2 = timestamp_to_tm_finite(dt2, zone)?;
    age_fields(dt1, dt2, &tm1, &tm2)
}

// Like timestamp2tm, these only check the Julian day range, so infinities
// (i64::MIN/MAX) break down into far-away dates rather than failing, as in PostgreSQL.
fn timestamp_to_tm_utc_finite(ts: i64) -> PgResult<Tm> {
    timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)
}

fn timestamp_to_tm_finite(ts: i64, zone: &TimeZone) -> PgResult<Tm> {
    timestamp_to_tm(ts, Some(zone)).map(|(tm, _)| tm).ok_or_else(timestamp_out_of_range)
}

/// age(timestamp): age from midnight of the current date.
pub fn timestamp_age_from_today(ts: i64, now: i64, zone: &TimeZone) -> PgResult<Interval> {
    let today = super::date::current_date(now, zone);
    timestamp_age(today as i64 * USECS_PER_DAY, ts)
}

/// age(timestamptz): age from local midnight of the current date.
pub fn timestamptz_age_from_today(ts: i64, now: i64, zone: &TimeZone) -> PgResult<Interval> {
    let today = super::date::current_date(now, zone);
    let midnight = super::date::date_to_timestamptz(today, zone)?;
    timestamptz_age(midnight, ts, zone)
}

/// timestamp::timestamptz: the local time read in `zone`.
pub fn timestamp_to_timestamptz(ts: i64, zone: &TimeZone) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    let tz = zone.offset_for_local(local_seconds(&tm));
    check_timestamp(ts.checked_add(tz as i64 * USECS_PER_SEC))
}

/// timestamptz::timestamp: the local time in `zone`.
pub fn timestamptz_to_timestamp(ts: i64, zone: &TimeZone) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let (tm, _) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    tm_to_timestamp(&tm, None).ok_or_else(timestamp_out_of_range)
}

/// Compares a timestamp (read in `zone`) with a timestamptz; a timestamp
/// whose conversion overflows sorts beyond every finite timestamptz.
pub fn timestamp_cmp_timestamptz(ts: i64, tstz: i64, zone: &TimeZone) -> Ordering {
    if !timestamp_is_finite(ts) {
        return ts.cmp(&tstz);
    }
    match timestamp_to_tm_utc(ts) {
        Some(tm) => {
            let tz = zone.offset_for_local(local_seconds(&tm));
            let utc = ts as i128 + tz as i128 * USECS_PER_SEC as i128;
            if utc < MIN_TIMESTAMP as i128 {
                if tstz == DT_NOBEGIN {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            } else if utc >= END_TIMESTAMP as i128 {
                if tstz == DT_NOEND {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            } else {
                (utc as i64).cmp(&tstz)
            }
        }
        None => ts.cmp(&tstz),
    }
}

/// timestamp AT TIME ZONE zone → timestamptz: reads the local time in
/// the named zone (an abbreviation like 'EST', or a full name).
pub fn timestamp_at_zone(ts: i64, zone_name: &str) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let zone = lookup_timezone_name(zone_name)?;
    timestamp_at_timezone(ts, &zone)
}

/// timestamp AT TIME ZONE for an already resolved zone.
pub fn timestamp_at_timezone(ts: i64, zone: &TimeZone) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    let tz = zone.offset_for_local(local_seconds(&tm));
    check_timestamp(ts.checked_add(tz as i64 * USECS_PER_SEC))
}

/// timestamptz AT TIME ZONE zone → timestamp: the local time in that zone.
pub fn timestamptz_at_zone(ts: i64, zone_name: &str) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    let zone = lookup_timezone_name(zone_name)?;
    timestamptz_to_timestamp(ts, &zone)
}

/// timestamp AT TIME ZONE interval → timestamptz (timestamp_izone).
pub fn timestamp_at_interval_zone(ts: i64, zone: &Interval, settings: &DateTimeSettings) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    if zone.months != 0 || zone.days != 0 {
        return Err(interval_zone_error(zone, settings));
    }
    let tz = zone.micros / USECS_PER_SEC;
    check_timestamp(ts.checked_sub(tz * USECS_PER_SEC))
}

/// timestamptz AT TIME ZONE interval → timestamp (timestamptz_izone).
pub fn timestamptz_at_interval_zone(ts: i64, zone: &Interval, settings: &DateTimeSettings) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    if zone.months != 0 || zone.days != 0 {
        return Err(interval_zone_error(zone, settings));
    }
    let tz = zone.micros / USECS_PER_SEC;
    check_timestamp(ts.checked_add(tz * USECS_PER_SEC))
}

/// date_bin(stride, source, origin): the start of the stride-sized bin,
/// aligned at origin, that contains source.
pub fn date_bin(stride: &Interval, ts: i64, origin: i64) -> PgResult<i64> {
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    if !timestamp_is_finite(origin) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "origin out of range"));
    }
    if stride.months != 0 {
        return Err(pg_err!(FEATURE_NOT_SUPPORTED, "timestamps cannot be binned into intervals containing months or years"));
    }
    let stride_usecs = (stride.days as i64)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(interval_out_of_range)?;
    if stride_usecs <= 0 {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "stride must be greater than zero"));
    }
    let diff = ts.checked_sub(origin).ok_or_else(interval_out_of_range)?;
    let modulo = diff % stride_usecs;
    let mut result = origin + (diff - modulo);
    // Round towards -infinity, not towards the origin.
    if modulo < 0 {
        result = result.checked_sub(stride_usecs).filter(|r| is_valid_timestamp(*r)).ok_or_else(timestamp_out_of_range)?;
    }
    Ok(result)
}

/// make_timestamp(year, month, mday, hour, min, sec); negative years are BC.
pub fn make_timestamp(year: i32, month: i32, mday: i32, hour: i32, min: i32, sec: f64) -> PgResult<i64> {
    let date = (super::date::make_date_julian(year, month, mday, false)? - POSTGRES_EPOCH_JDATE) as i64;
    let out_of_range =
        || pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range: {}-{:02}-{:02} {}:{:02}:{}", year, month, mday, hour, min, format_g(sec, 2));
    if float_time_overflows(hour, min, sec) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "time field value out of range: {}:{:02}:{}", hour, min, format_g(sec, 2)));
    }
    let time = ((hour as i64 * 60 + min as i64) * 60) * USECS_PER_SEC + (sec * USECS_PER_SEC as f64).round_ties_even() as i64;
    let result = date.checked_mul(USECS_PER_DAY).and_then(|d| d.checked_add(time)).ok_or_else(out_of_range)?;
    if (result < 0 && date > 0) || (result > 0 && date < -1) || !is_valid_timestamp(result) {
        return Err(out_of_range());
    }
    Ok(result)
}

/// make_timestamptz(...): the local time read in the session zone.
pub fn make_timestamptz(year: i32, month: i32, mday: i32, hour: i32, min: i32, sec: f64, zone: &TimeZone) -> PgResult<i64> {
    timestamp_to_timestamptz(make_timestamp(year, month, mday, hour, min, sec)?, zone)
}

/// make_timestamptz(..., timezone): the local time read in the named zone.
/// Here a numeric zone ("+05:30") means hours *east*, ISO-style.
pub fn make_timestamptz_at(year: i32, month: i32, mday: i32, hour: i32, min: i32, sec: f64, zone_name: &str) -> PgResult<i64> {
    let ts = make_timestamp(year, month, mday, hour, min, sec)?;
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    let tz = parse_sane_timezone(local_seconds(&tm), zone_name)?;
    check_timestamp(ts.checked_add(tz as i64 * USECS_PER_SEC))
}

/// parse_sane_timezone: a zone argument that may be numeric ("+05:30",
/// ISO sign), an abbreviation, or a full name; returns the offset
/// (seconds west) at the given local time.
pub fn parse_sane_timezone(local: i64, zone_name: &str) -> PgResult<i32> {
    if zone_name.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
        return Err(pg_err!(
            INVALID_PARAMETER_VALUE,
            "invalid input syntax for type {}: \"{}\"",
            "numeric time zone",
            zone_name
        )
        .with_hint("Numeric time zones must have \"-\" or \"+\" as first character."));
    }
    match parse::decode_timezone(zone_name) {
        Ok(tz) => Ok(tz),
        Err(parse::Dterr::TzDispOverflow) => {
            Err(pg_err!(INVALID_PARAMETER_VALUE, "numeric time zone \"{}\" out of range", zone_name))
        }
        Err(parse::Dterr::BadFormat) => Ok(lookup_timezone_name(zone_name)?.offset_for_local(local)),
        Err(_) => Err(pg_err!(INVALID_PARAMETER_VALUE, "time zone \"{}\" not recognized", zone_name)),
    }
}

/// to_timestamp(double precision): Unix epoch seconds to timestamptz.
pub fn to_timestamp_epoch(seconds: f64) -> PgResult<i64> {
    if seconds.is_nan() {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp cannot be NaN"));
    }
    if seconds.is_infinite() {
        return Ok(if seconds < 0.0 { DT_NOBEGIN } else { DT_NOEND });
    }
    let min = SECS_PER_DAY as f64 * (DATETIME_MIN_JULIAN - UNIX_EPOCH_JDATE) as f64;
    let max = SECS_PER_DAY as f64 * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE) as f64;
    let err = || pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range: \"{}\"", format_g(seconds, 0));
    if seconds < min || seconds >= max {
        return Err(err());
    }
    let s = seconds - ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64 * SECS_PER_DAY) as f64;
    let result = (s * USECS_PER_SEC as f64).round_ties_even() as i64;
    if !is_valid_timestamp(result) {
        return Err(err());
    }
    Ok(result)
}

/// LOCALTIMESTAMP: the transaction start as local time in `zone`.
pub fn local_timestamp(now: i64, zone: &TimeZone) -> i64 {
    timestamptz_to_timestamp(now, zone).unwrap_or(now)
}

/// timestamp_larger / timestamp_smaller.
pub fn timestamp_larger(a: i64, b: i64) -> i64 {
    a.max(b)
}

pub fn timestamp_smaller(a: i64, b: i64) -> i64 {
    a.min(b)
}

/// timeofday(): the given instant as text in the style of C's
/// strftime("%a %b %d %H:%M:%S.%06d %Y %Z") in `zone`.
pub fn timeofday(ts: i64, zone: &TimeZone) -> String {
    let Some((tm, _)) = timestamp_to_tm(ts, Some(zone)) else { return String::new() };
    let wday = j2day(date2j(tm.year, tm.mon, tm.mday)) as usize;
    format!(
        "{} {} {:02} {:02}:{:02}:{:02}.{:06} {} {}",
        &super::calendar::DAY_NAMES[wday][..3],
        MONTH_NAMES[(tm.mon - 1) as usize],
        tm.mday,
        tm.hour,
        tm.min,
        tm.sec,
        tm.fsec,
        tm.year,
        zone.abbrev_at_utc(ts)
    )
}
