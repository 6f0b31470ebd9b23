//! The date type (days since 2000-01-01): text and binary I/O, day
//! arithmetic, make_date, and conversions to and from timestamps
//! (PostgreSQL's date.c).

use std::cmp::Ordering;

use crate::error::PgResult;
use crate::pg_err;

use super::calendar::*;
use super::encode::encode_date_only;
use super::interval::Interval;
use super::parse::{self, DateTimeKind};
use super::settings::DateTimeSettings;
use super::timestamp::timestamp_add_interval;
use super::timezone::TimeZone;

/// date_in. `now` (the transaction start, as timestamptz) gives 'today', 'now', etc.
pub fn date_in(text: &str, settings: &DateTimeSettings, now: i64) -> PgResult<i32> {
    let decoded = parse::parse_fields(text)
        .and_then(|f| parse::decode_date_time(&f, settings, now))
        .map_err(|e| e.to_error(text, "date"))?;
    let tm = match decoded.kind {
        DateTimeKind::Value => decoded.tm,
        DateTimeKind::Epoch => Tm { year: 1970, mon: 1, mday: 1, ..Tm::default() },
        DateTimeKind::Infinity => return Ok(DATEVAL_NOEND),
        DateTimeKind::NegInfinity => return Ok(DATEVAL_NOBEGIN),
    };
    if !is_valid_julian(tm.year, tm.mon) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range: \"{}\"", text));
    }
    let date = date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    if !is_valid_date(date) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range: \"{}\"", text));
    }
    Ok(date)
}

/// date_out, in the session's DateStyle.
pub fn date_out(date: i32, settings: &DateTimeSettings) -> String {
    match date {
        DATEVAL_NOBEGIN => "-infinity".to_string(),
        DATEVAL_NOEND => "infinity".to_string(),
        _ => {
            let (year, mon, mday) = j2date(date + POSTGRES_EPOCH_JDATE);
            encode_date_only(&Tm { year, mon, mday, ..Tm::default() }, settings.date_style, settings.date_order)
        }
    }
}

/// date_recv: a big-endian int32 day count.
pub fn date_recv(buf: &[u8]) -> PgResult<i32> {
    let bytes: [u8; 4] = super::recv_bytes(buf)?;
    let date = i32::from_be_bytes(bytes);
    if date_is_finite(date) && !is_valid_date(date) {
        return Err(date_out_of_range());
    }
    Ok(date)
}

pub fn date_send(date: i32) -> Vec<u8> {
    date.to_be_bytes().to_vec()
}

/// date + integer (date_pli); infinite dates stay infinite.
pub fn date_add_days(date: i32, days: i32) -> PgResult<i32> {
    if !date_is_finite(date) {
        return Ok(date);
    }
    match date.checked_add(days) {
        Some(r) if is_valid_date(r) => Ok(r),
        _ => Err(date_out_of_range()),
    }
}

/// date - integer (date_mii).
pub fn date_sub_days(date: i32, days: i32) -> PgResult<i32> {
    if !date_is_finite(date) {
        return Ok(date);
    }
    match date.checked_sub(days) {
        Some(r) if is_valid_date(r) => Ok(r),
        _ => Err(date_out_of_range()),
    }
}

/// date - date: the number of days between them (date_mi).
pub fn date_diff(a: i32, b: i32) -> PgResult<i32> {
    if !date_is_finite(a) || !date_is_finite(b) {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "cannot subtract infinite dates"));
    }
    Ok(a - b)
}

fn date_out_of_range_for_timestamp() -> crate::error::PgError {
    pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range for timestamp")
}

/// date::timestamp (date2timestamp): midnight of the date.
pub fn date_to_timestamp(date: i32) -> PgResult<i64> {
    match date {
        DATEVAL_NOBEGIN => Ok(DT_NOBEGIN),
        DATEVAL_NOEND => Ok(DT_NOEND),
        _ => {
            if date >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE {
                return Err(date_out_of_range_for_timestamp());
            }
            Ok(date as i64 * USECS_PER_DAY)
        }
    }
}

/// date::timestamptz (date2timestamptz): local midnight in `zone`.
pub fn date_to_timestamptz(date: i32, zone: &TimeZone) -> PgResult<i64> {
    match date {
        DATEVAL_NOBEGIN => Ok(DT_NOBEGIN),
        DATEVAL_NOEND => Ok(DT_NOEND),
        _ => {
            if date >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE {
                return Err(date_out_of_range_for_timestamp());
            }
            let local = date as i64 * USECS_PER_DAY;
            let tz = zone.offset_for_local(local);
            let result = local + tz as i64 * USECS_PER_SEC;
            if !is_valid_timestamp(result) {
                return Err(date_out_of_range_for_timestamp());
            }
            Ok(result)
        }
    }
}

/// The date as a timestamp, clamping overflow to infinity, as cross-type
/// comparisons need (date2timestamp_no_overflow).
fn date_to_timestamp_clamped(date: i32) -> i64 {
    match date {
        DATEVAL_NOBEGIN => DT_NOBEGIN,
        DATEVAL_NOEND => DT_NOEND,
        _ if date >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE => DT_NOEND,
        _ => date as i64 * USECS_PER_DAY,
    }
}

/// Compares a date with a timestamp (date_cmp_timestamp).
pub fn date_cmp_timestamp(date: i32, ts: i64) -> Ordering {
    date_to_timestamp_clamped(date).cmp(&ts)
}

/// Compares a date (as local midnight in `zone`) with a timestamptz.
pub fn date_cmp_timestamptz(date: i32, ts: i64, zone: &TimeZone) -> Ordering {
    match date {
        DATEVAL_NOBEGIN => DT_NOBEGIN.cmp(&ts),
        DATEVAL_NOEND => DT_NOEND.cmp(&ts),
        _ => match date_to_timestamptz(date, zone) {
            Ok(t) => t.cmp(&ts),
            // Beyond the timestamp range: later than any finite timestamptz, or earlier.
            Err(_) => {
                if date > 0 {
                    if ts == DT_NOEND {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                } else if ts == DT_NOBEGIN {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
        },
    }
}

/// timestamp::date.
pub fn timestamp_to_date(ts: i64) -> PgResult<i32> {
    match ts {
        DT_NOBEGIN => Ok(DATEVAL_NOBEGIN),
        DT_NOEND => Ok(DATEVAL_NOEND),
        _ => {
            let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
            Ok(date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE)
        }
    }
}

/// timestamptz::date: the local date in `zone`.
pub fn timestamptz_to_date(ts: i64, zone: &TimeZone) -> PgResult<i32> {
    match ts {
        DT_NOBEGIN => Ok(DATEVAL_NOBEGIN),
        DT_NOEND => Ok(DATEVAL_NOEND),
        _ => {
            let (tm, _) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
            Ok(date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE)
        }
    }
}

/// date + time = timestamp (datetime_timestamp).
pub fn date_add_time(date: i32, time: i64) -> PgResult<i64> {
    let ts = date_to_timestamp(date)?;
    if !timestamp_is_finite(ts) {
        return Ok(ts);
    }
    check_timestamp(ts.checked_add(time))
}

/// date + timetz = timestamptz (datetimetz_timestamptz).
pub fn date_add_timetz(date: i32, time: super::time::TimeTz) -> PgResult<i64> {
    match date {
        DATEVAL_NOBEGIN => Ok(DT_NOBEGIN),
        DATEVAL_NOEND => Ok(DT_NOEND),
        _ => {
            if date >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE {
                return Err(date_out_of_range_for_timestamp());
            }
            let result = date as i64 * USECS_PER_DAY + time.time + time.zone as i64 * USECS_PER_SEC;
            if !is_valid_timestamp(result) {
                return Err(date_out_of_range_for_timestamp());
            }
            Ok(result)
        }
    }
}

/// date + interval = timestamp.
pub fn date_add_interval(date: i32, span: &Interval) -> PgResult<i64> {
    timestamp_add_interval(date_to_timestamp(date)?, span)
}

/// date - interval = timestamp.
pub fn date_sub_interval(date: i32, span: &Interval) -> PgResult<i64> {
    let neg = super::interval::interval_neg(span)?;
    timestamp_add_interval(date_to_timestamp(date)?, &neg)
}

/// The Julian day of make_date/make_timestamp's (year, month, day),
/// negative years being BC, with their checks (ValidateDate, IS_VALID_JULIAN).
/// make_date reports an out-of-range date with its astronomical year
/// (-4713 for 4714 BC), make_timestamp with the year as given.
pub(crate) fn make_date_julian(year: i32, month: i32, day: i32, astro_in_message: bool) -> PgResult<i32> {
    let (y, bc) = if year < 0 { (year.wrapping_neg(), true) } else { (year, false) };
    let astro = if bc { 1i32.wrapping_sub(y) } else { y };
    let valid = y > 0 && (1..=12).contains(&month) && (1..=31).contains(&day) && day <= days_in_month(astro, month);
    if !valid {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "date field value out of range: {}-{:02}-{:02}", year, month, day));
    }
    if !is_valid_julian(astro, month) {
        let shown = if astro_in_message { astro } else { year };
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range: {}-{:02}-{:02}", shown, month, day));
    }
    Ok(date2j(astro, month, day))
}

/// make_date(year, month, day); negative years are BC.
pub fn make_date(year: i32, month: i32, day: i32) -> PgResult<i32> {
    let date = make_date_julian(year, month, day, true)? - POSTGRES_EPOCH_JDATE;
    if !is_valid_date(date) {
        let astro = if year < 0 { year + 1 } else { year };
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range: {}-{:02}-{:02}", astro, month, day));
    }
    Ok(date)
}

/// CURRENT_DATE: the local date of the transaction start in `zone`.
pub fn current_date(now: i64, zone: &TimeZone) -> i32 {
    timestamptz_to_date(now, zone).unwrap_or(0)
}
