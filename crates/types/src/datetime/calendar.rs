//! Calendar arithmetic: Julian day numbers, the valid ranges of each type,
//! and conversion between stored values and broken-down fields (`Tm`).
//!
//! PostgreSQL counts dates as Julian day numbers internally (date2j/j2date)
//! and stores them relative to 2000-01-01; year 0 is 1 BC, year -1 is 2 BC.

use crate::error::{PgError, PgResult};
use crate::pg_err;

use super::timezone::TimeZone;

pub const POSTGRES_EPOCH_JDATE: i32 = 2_451_545;
pub const UNIX_EPOCH_JDATE: i32 = 2_440_588;

pub const USECS_PER_SEC: i64 = 1_000_000;
pub const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
pub const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
pub const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
pub const SECS_PER_MINUTE: i64 = 60;
pub const SECS_PER_HOUR: i64 = 3600;
pub const SECS_PER_DAY: i64 = 86_400;
pub const MONTHS_PER_YEAR: i32 = 12;
pub const DAYS_PER_MONTH: i32 = 30;
pub const DAYS_PER_YEAR: f64 = 365.25;

/// Date -infinity and infinity.
pub const DATEVAL_NOBEGIN: i32 = i32::MIN;
pub const DATEVAL_NOEND: i32 = i32::MAX;
/// Timestamp -infinity and infinity.
pub const DT_NOBEGIN: i64 = i64::MIN;
pub const DT_NOEND: i64 = i64::MAX;

/// Range of valid Julian dates: 4714-11-24 BC .. 5874897-12-31 for dates,
/// .. 294276-12-31 for timestamps.
pub const JULIAN_MINYEAR: i32 = -4713;
pub const JULIAN_MINMONTH: i32 = 11;
pub const JULIAN_MAXYEAR: i32 = 5_874_898;
pub const DATETIME_MIN_JULIAN: i32 = 0;
pub const DATE_END_JULIAN: i32 = 2_147_483_494;
pub const TIMESTAMP_END_JULIAN: i32 = 109_203_528;
pub const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
pub const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Largest time zone displacement accepted in input (±15:59:59).
pub const MAX_TZDISP_HOUR: i32 = 15;
pub const TZDISP_LIMIT: i32 = (MAX_TZDISP_HOUR + 1) * 3600;

pub const MONTH_NAMES: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
pub const DAY_NAMES: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
pub const FULL_MONTH_NAMES: [&str; 12] = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
];

pub fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub fn days_in_month(year: i32, month: i32) -> i32 {
    const DAYS: [[i32; 12]; 2] =
        [[31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]];
    DAYS[is_leap(year) as usize][(month - 1) as usize]
}

/// Julian day number of a (proleptic Gregorian) calendar date.
pub fn date2j(year: i32, month: i32, day: i32) -> i32 {
    let (mut y, mut m) = (year as i64, month as i64);
    if m > 2 {
        m += 1;
        y += 4800;
    } else {
        m += 13;
        y += 4799;
    }
    let century = y / 100;
    let mut julian = y * 365 - 32167;
    julian += y / 4 - century + century / 4;
    julian += 7834 * m / 256 + day as i64;
    julian as i32
}

/// Calendar date of a Julian day number.
pub fn j2date(jd: i32) -> (i32, i32, i32) {
    // PostgreSQL's 32-bit unsigned arithmetic: exact for jd >= -32044, and
    // the same (meaningless but harmless) answer as PostgreSQL below that.
    let mut julian = (jd as u32).wrapping_add(32044);
    let mut quad = julian / 146097;
    let extra = (julian - quad * 146097) * 4 + 3;
    julian = julian.wrapping_add(60 + quad * 3 + extra / 146097);
    quad = julian / 1461;
    julian -= quad * 1461;
    let mut y = julian * 4 / 1461;
    julian = if y != 0 { (julian + 305) % 365 } else { (julian + 306) % 366 } + 123;
    y = y.wrapping_add(quad.wrapping_mul(4));
    let year = (y as i32).wrapping_sub(4800);
    let quad = julian * 2141 / 65536;
    let day = julian - 7834 * quad / 256;
    let month = (quad + 10) % 12 + 1;
    (year, month as i32, day as i32)
}

/// Day of week of a Julian day, 0 = Sunday.
pub fn j2day(jd: i32) -> i32 {
    (jd as i64 + 1).rem_euclid(7) as i32
}

/// IS_VALID_JULIAN: the calendar range date2j/j2date handle (Nov 1 4714 BC up to year 5874898).
pub fn is_valid_julian(year: i32, month: i32) -> bool {
    (year > JULIAN_MINYEAR || (year == JULIAN_MINYEAR && month >= JULIAN_MINMONTH)) && year < JULIAN_MAXYEAR
}

pub fn is_valid_date(date: i32) -> bool {
    (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE..DATE_END_JULIAN - POSTGRES_EPOCH_JDATE).contains(&date)
}

pub fn is_valid_timestamp(ts: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&ts)
}

pub fn date_is_finite(date: i32) -> bool {
    date != DATEVAL_NOBEGIN && date != DATEVAL_NOEND
}

pub fn timestamp_is_finite(ts: i64) -> bool {
    ts != DT_NOBEGIN && ts != DT_NOEND
}

/// Broken-down date and time, as PostgreSQL's `struct pg_tm` plus fractional seconds.
/// `year` uses astronomical numbering (0 = 1 BC).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tm {
    pub year: i32,
    pub mon: i32,
    pub mday: i32,
    pub hour: i32,
    pub min: i32,
    pub sec: i32,
    /// Microseconds within the second.
    pub fsec: i32,
}

/// Microseconds since midnight of h:m:s.fsec.
pub fn time2t(hour: i32, min: i32, sec: i32, fsec: i32) -> i64 {
    ((hour as i64 * 60 + min as i64) * 60 + sec as i64) * USECS_PER_SEC + fsec as i64
}

/// Splits microseconds since midnight into h, m, s, fsec.
pub fn dt2time(time: i64) -> (i32, i32, i32, i32) {
    let hour = time / USECS_PER_HOUR;
    let mut rest = time - hour * USECS_PER_HOUR;
    let min = rest / USECS_PER_MINUTE;
    rest -= min * USECS_PER_MINUTE;
    let sec = rest / USECS_PER_SEC;
    let fsec = rest - sec * USECS_PER_SEC;
    (hour as i32, min as i32, sec as i32, fsec as i32)
}

/// Breaks a finite timestamp (already rotated to local time, if any) into fields.
pub fn timestamp_to_tm_utc(ts: i64) -> Option<Tm> {
    let date = ts.div_euclid(USECS_PER_DAY) + POSTGRES_EPOCH_JDATE as i64;
    if date < 0 || date > i32::MAX as i64 {
        return None;
    }
    Some(breakdown(ts))
}

/// Fields of a timestamp without range checks; j2date is exact down to
/// Julian day -32044, well below where a zone offset can take a valid timestamp.
fn breakdown(ts: i64) -> Tm {
    let date = ts.div_euclid(USECS_PER_DAY) + POSTGRES_EPOCH_JDATE as i64;
    let time = ts.rem_euclid(USECS_PER_DAY);
    let (year, mon, mday) = j2date(date as i32);
    let (hour, min, sec, fsec) = dt2time(time);
    Tm { year, mon, mday, hour, min, sec, fsec }
}

/// timestamp2tm: breaks a timestamp into local fields; with a zone, rotates
/// the UTC instant into it and reports the offset (seconds west) used.
pub fn timestamp_to_tm(ts: i64, zone: Option<&TimeZone>) -> Option<(Tm, Option<i32>)> {
    match zone {
        None => timestamp_to_tm_utc(ts).map(|tm| (tm, None)),
        Some(z) => {
            // The range check applies to the UTC value; local time may fall just outside it.
            timestamp_to_tm_utc(ts)?;
            let offset = z.offset_at_utc(ts);
            let local = ts.checked_sub(offset as i64 * USECS_PER_SEC)?;
            Some((breakdown(local), Some(offset)))
        }
    }
}

/// tm2timestamp: fields (local time when `tz` is given, seconds west) to a timestamp.
/// None when out of range.
pub fn tm_to_timestamp(tm: &Tm, tz: Option<i32>) -> Option<i64> {
    if !is_valid_julian(tm.year, tm.mon) {
        return None;
    }
    let date = (date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE) as i64;
    let time = time2t(tm.hour, tm.min, tm.sec, tm.fsec);
    let mut result = date.checked_mul(USECS_PER_DAY)?.checked_add(time)?;
    if let Some(tz) = tz {
        result = result.checked_add(tz as i64 * USECS_PER_SEC)?;
    }
    if !is_valid_timestamp(result) {
        return None;
    }
    Some(result)
}

/// The WARNING PostgreSQL raises when a precision typmod is reduced (22023).
pub(crate) fn typmod_warning(message: String) -> PgError {
    let mut w = PgError::warning(message);
    w.code = crate::error::sqlstate::INVALID_PARAMETER_VALUE;
    w
}

pub(crate) fn timestamp_out_of_range() -> PgError {
    pg_err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

pub(crate) fn date_out_of_range() -> PgError {
    pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range")
}

pub(crate) fn interval_out_of_range() -> PgError {
    pg_err!(DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// Checked result of timestamp arithmetic: out-of-range values are errors.
pub(crate) fn check_timestamp(ts: Option<i64>) -> PgResult<i64> {
    match ts {
        Some(t) if is_valid_timestamp(t) => Ok(t),
        _ => Err(timestamp_out_of_range()),
    }
}

/// Day of year (1-based) of a calendar date.
pub fn day_of_year(year: i32, mon: i32, mday: i32) -> i32 {
    date2j(year, mon, mday) - date2j(year, 1, 1) + 1
}

/// date2isoweek: ISO 8601 week number of a date.
pub fn date2isoweek(year: i32, mon: i32, mday: i32) -> i32 {
    let dayn = date2j(year, mon, mday) as f64;
    // Julian day of the Monday of week 1 (the week containing Jan 4).
    let mut day4 = date2j(year, 1, 4);
    let mut day0 = j2day(day4 - 1);
    if dayn < (day4 - day0) as f64 {
        day4 = date2j(year - 1, 1, 4);
        day0 = j2day(day4 - 1);
    }
    let result = ((dayn - (day4 - day0) as f64) / 7.0) as i32 + 1;
    if result >= 52 {
        let day4 = date2j(year + 1, 1, 4);
        let day0 = j2day(day4 - 1);
        if dayn >= (day4 - day0) as f64 {
            return 1;
        }
    }
    result
}

/// date2isoyear: the ISO 8601 week-numbering year of a date.
pub fn date2isoyear(year: i32, mon: i32, mday: i32) -> i32 {
    let dayn = date2j(year, mon, mday) as f64;
    let mut year = year;
    let mut day4 = date2j(year, 1, 4);
    let mut day0 = j2day(day4 - 1);
    if dayn < (day4 - day0) as f64 {
        day4 = date2j(year - 1, 1, 4);
        day0 = j2day(day4 - 1);
        year -= 1;
    }
    let result = ((dayn - (day4 - day0) as f64) / 7.0) as i32 + 1;
    if result >= 52 {
        let day4 = date2j(year + 1, 1, 4);
        let day0 = j2day(day4 - 1);
        if dayn >= (day4 - day0) as f64 {
            year += 1;
        }
    }
    year
}

/// date2isoyearday: day of the ISO week-numbering year (1..371).
pub fn date2isoyearday(year: i32, mon: i32, mday: i32) -> i32 {
    date2j(year, mon, mday) - isoweek2j(date2isoyear(year, mon, mday), 1) + 1
}

/// isoweek2j: Julian day of the Monday of an ISO week.
pub fn isoweek2j(year: i32, week: i32) -> i32 {
    let day4 = date2j(year, 1, 4);
    let day0 = j2day(day4.wrapping_sub(1));
    week.wrapping_sub(1).wrapping_mul(7).wrapping_add(day4.wrapping_sub(day0))
}
