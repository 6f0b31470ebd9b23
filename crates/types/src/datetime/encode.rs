//! Date/time text output under each DateStyle and IntervalStyle, byte for
//! byte as PostgreSQL 15's EncodeDateOnly/EncodeTimeOnly/EncodeDateTime/
//! EncodeInterval write it.

use std::fmt::Write;

use super::calendar::*;
use super::interval::Interval;
use super::settings::{DateOrder, DateStyleOutput, IntervalStyle};

/// Appends "ss" (or "s") and, if nonzero, a fraction of up to six digits
/// without trailing zeros (AppendSeconds).
fn append_seconds(out: &mut String, sec: i32, fsec: i32, fillzeros: bool) {
    if fillzeros {
        let _ = write!(out, "{:02}", sec.unsigned_abs());
    } else {
        let _ = write!(out, "{}", sec.unsigned_abs());
    }
    if fsec != 0 {
        let digits = format!("{:06}", fsec.unsigned_abs());
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// Year as displayed: BC years count from 1 and are zero-padded to four digits.
fn display_year(year: i32) -> String {
    let y = if year > 0 { year } else { -(year - 1) };
    format!("{:04}", y)
}

/// EncodeTimezone: "+05", "-03:30", "+05:30:15" (tz is seconds west).
/// `xsd` forces minutes ("+00:00"), as XML Schema output does.
pub fn format_tz_offset(tz: i32, xsd: bool) -> String {
    let mut out = String::new();
    push_tz_offset(&mut out, tz, xsd);
    out
}

fn push_tz_offset(out: &mut String, tz: i32, xsd: bool) {
    let mut sec = tz.unsigned_abs();
    let mut min = sec / 60;
    sec -= min * 60;
    let hour = min / 60;
    min -= hour * 60;
    out.push(if tz <= 0 { '+' } else { '-' });
    if sec != 0 {
        let _ = write!(out, "{:02}:{:02}:{:02}", hour, min, sec);
    } else if min != 0 || xsd {
        let _ = write!(out, "{:02}:{:02}", hour, min);
    } else {
        let _ = write!(out, "{:02}", hour);
    }
}

/// EncodeDateOnly.
pub(crate) fn encode_date_only(tm: &Tm, style: DateStyleOutput, order: DateOrder) -> String {
    let mut out = String::with_capacity(16);
    let year = display_year(tm.year);
    match style {
        DateStyleOutput::Iso => {
            let _ = write!(out, "{}-{:02}-{:02}", year, tm.mon, tm.mday);
        }
        DateStyleOutput::Sql => {
            if order == DateOrder::Dmy {
                let _ = write!(out, "{:02}/{:02}/{}", tm.mday, tm.mon, year);
            } else {
                let _ = write!(out, "{:02}/{:02}/{}", tm.mon, tm.mday, year);
            }
        }
        DateStyleOutput::German => {
            let _ = write!(out, "{:02}.{:02}.{}", tm.mday, tm.mon, year);
        }
        DateStyleOutput::Postgres => {
            if order == DateOrder::Dmy {
                let _ = write!(out, "{:02}-{:02}-{}", tm.mday, tm.mon, year);
            } else {
                let _ = write!(out, "{:02}-{:02}-{}", tm.mon, tm.mday, year);
            }
        }
    }
    if tm.year <= 0 {
        out.push_str(" BC");
    }
    out
}

/// EncodeTimeOnly: "hh:mm:ss[.ffffff][zone]"; the zone (seconds west) only for timetz.
pub(crate) fn encode_time_only(tm: &Tm, tz: Option<i32>) -> String {
    let mut out = String::with_capacity(24);
    let _ = write!(out, "{:02}:{:02}:", tm.hour, tm.min);
    append_seconds(&mut out, tm.sec, tm.fsec, true);
    if let Some(tz) = tz {
        push_tz_offset(&mut out, tz, false);
    }
    out
}

/// The zone shown with a timestamptz: its offset and, for the non-ISO
/// styles, its abbreviation.
pub(crate) struct ShownZone<'a> {
    pub offset: i32,
    pub abbrev: Option<&'a str>,
}

/// EncodeDateTime.
pub(crate) fn encode_date_time(tm: &Tm, zone: Option<ShownZone<'_>>, style: DateStyleOutput, order: DateOrder) -> String {
    let mut out = String::with_capacity(40);
    let year = display_year(tm.year);
    match style {
        DateStyleOutput::Iso => {
            let _ = write!(out, "{}-{:02}-{:02} {:02}:{:02}:", year, tm.mon, tm.mday, tm.hour, tm.min);
            append_seconds(&mut out, tm.sec, tm.fsec, true);
            if let Some(z) = &zone {
                push_tz_offset(&mut out, z.offset, false);
            }
        }
        DateStyleOutput::Sql | DateStyleOutput::German => {
            if style == DateStyleOutput::German {
                let _ = write!(out, "{:02}.{:02}.{}", tm.mday, tm.mon, year);
            } else if order == DateOrder::Dmy {
                let _ = write!(out, "{:02}/{:02}/{}", tm.mday, tm.mon, year);
            } else {
                let _ = write!(out, "{:02}/{:02}/{}", tm.mon, tm.mday, year);
            }
            let _ = write!(out, " {:02}:{:02}:", tm.hour, tm.min);
            append_seconds(&mut out, tm.sec, tm.fsec, true);
            if let Some(z) = &zone {
                match z.abbrev {
                    Some(a) => {
                        out.push(' ');
                        out.push_str(a);
                    }
                    None => push_tz_offset(&mut out, z.offset, false),
                }
            }
        }
        DateStyleOutput::Postgres => {
            let wday = j2day(date2j(tm.year, tm.mon, tm.mday));
            out.push_str(&DAY_NAMES[wday as usize][..3]);
            out.push(' ');
            let month = MONTH_NAMES[(tm.mon - 1) as usize];
            if order == DateOrder::Dmy {
                let _ = write!(out, "{:02} {}", tm.mday, month);
            } else {
                let _ = write!(out, "{} {:02}", month, tm.mday);
            }
            let _ = write!(out, " {:02}:{:02}:", tm.hour, tm.min);
            append_seconds(&mut out, tm.sec, tm.fsec, true);
            out.push(' ');
            out.push_str(&year);
            if let Some(z) = &zone {
                out.push(' ');
                match z.abbrev {
                    Some(a) => out.push_str(a),
                    None => push_tz_offset(&mut out, z.offset, false),
                }
            }
        }
    }
    if tm.year <= 0 {
        out.push_str(" BC");
    }
    out
}

/// Interval fields as output shows them (pg_itm).
struct Itm {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    usec: i64,
}

fn interval_to_itm(iv: &Interval) -> Itm {
    let mut time = iv.micros;
    let hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    let min = time / USECS_PER_MINUTE;
    time -= min * USECS_PER_MINUTE;
    let sec = time / USECS_PER_SEC;
    let usec = time - sec * USECS_PER_SEC;
    Itm {
        year: (iv.months / MONTHS_PER_YEAR) as i64,
        mon: (iv.months % MONTHS_PER_YEAR) as i64,
        mday: iv.days as i64,
        hour,
        min,
        sec,
        usec,
    }
}

fn append_seconds64(out: &mut String, sec: i64, usec: i64, fillzeros: bool) {
    append_seconds(out, sec as i32, usec as i32, fillzeros);
}

/// EncodeInterval: interval text in the given IntervalStyle.
pub fn encode_interval(iv: &Interval, style: IntervalStyle) -> String {
    let Itm { mut year, mut mon, mut mday, mut hour, mut min, mut sec, mut usec } = interval_to_itm(iv);
    let mut out = String::with_capacity(32);
    match style {
        IntervalStyle::SqlStandard => {
            let has_negative = year < 0 || mon < 0 || mday < 0 || hour < 0 || min < 0 || sec < 0 || usec < 0;
            let has_positive = year > 0 || mon > 0 || mday > 0 || hour > 0 || min > 0 || sec > 0 || usec > 0;
            let has_year_month = year != 0 || mon != 0;
            let has_day_time = mday != 0 || hour != 0 || min != 0 || sec != 0 || usec != 0;
            let has_day = mday != 0;
            let sql_standard_value = !((has_negative && has_positive) || (has_year_month && has_day_time));
            // A single leading sign when every field agrees.
            if has_negative && sql_standard_value {
                out.push('-');
                year = -year;
                mon = -mon;
                mday = -mday;
                hour = -hour;
                min = -min;
                sec = -sec;
                usec = -usec;
            }
            if !has_negative && !has_positive {
                out.push('0');
            } else if !sql_standard_value {
                // Mixed signs: spell every sign out.
                let year_sign = if year < 0 || mon < 0 { '-' } else { '+' };
                let day_sign = if mday < 0 { '-' } else { '+' };
                let sec_sign = if hour < 0 || min < 0 || sec < 0 || usec < 0 { '-' } else { '+' };
                let _ = write!(
                    out,
                    "{}{}-{} {}{} {}{}:{:02}:",
                    year_sign,
                    year.abs(),
                    mon.abs(),
                    day_sign,
                    mday.abs(),
                    sec_sign,
                    hour.abs(),
                    min.abs()
                );
                append_seconds64(&mut out, sec, usec, true);
            } else if has_year_month {
                let _ = write!(out, "{}-{}", year, mon);
            } else if has_day {
                let _ = write!(out, "{} {}:{:02}:", mday, hour, min);
                append_seconds64(&mut out, sec, usec, true);
            } else {
                let _ = write!(out, "{}:{:02}:", hour, min);
                append_seconds64(&mut out, sec, usec, true);
            }
        }
        IntervalStyle::Iso8601 => {
            if year == 0 && mon == 0 && mday == 0 && hour == 0 && min == 0 && sec == 0 && usec == 0 {
                return "PT0S".to_string();
            }
            out.push('P');
            for (v, u) in [(year, 'Y'), (mon, 'M'), (mday, 'D')] {
                if v != 0 {
                    let _ = write!(out, "{}{}", v, u);
                }
            }
            if hour != 0 || min != 0 || sec != 0 || usec != 0 {
                out.push('T');
            }
            for (v, u) in [(hour, 'H'), (min, 'M')] {
                if v != 0 {
                    let _ = write!(out, "{}{}", v, u);
                }
            }
            if sec != 0 || usec != 0 {
                if sec < 0 || usec < 0 {
                    out.push('-');
                }
                append_seconds64(&mut out, sec, usec, false);
                out.push('S');
            }
        }
        IntervalStyle::Postgres => {
            let mut is_zero = true;
            let mut is_before = false;
            for (v, unit) in [(year, "year"), (mon, "mon"), (mday, "day")] {
                if v == 0 {
                    continue;
                }
                let _ = write!(
                    out,
                    "{}{}{} {}{}",
                    if is_zero { "" } else { " " },
                    if is_before && v > 0 { "+" } else { "" },
                    v,
                    unit,
                    if v != 1 { "s" } else { "" }
                );
                // Each nonzero field decides the sign prefix of (only) the next.
                is_before = v < 0;
                is_zero = false;
            }
            if is_zero || hour != 0 || min != 0 || sec != 0 || usec != 0 {
                let minus = hour < 0 || min < 0 || sec < 0 || usec < 0;
                let _ = write!(
                    out,
                    "{}{}{:02}:{:02}:",
                    if is_zero { "" } else { " " },
                    if minus { "-" } else if is_before { "+" } else { "" },
                    hour.abs(),
                    min.abs()
                );
                append_seconds64(&mut out, sec, usec, true);
            }
        }
        IntervalStyle::PostgresVerbose => {
            out.push('@');
            let mut is_zero = true;
            let mut is_before = false;
            for (v, unit) in [(year, "year"), (mon, "mon"), (mday, "day"), (hour, "hour"), (min, "min")] {
                if v == 0 {
                    continue;
                }
                let mut v = v;
                // The first nonzero field sets the sign; later ones are shown relative to it.
                if is_zero {
                    is_before = v < 0;
                    v = v.abs();
                } else if is_before {
                    v = -v;
                }
                let _ = write!(out, " {} {}{}", v, unit, if v == 1 { "" } else { "s" });
                is_zero = false;
            }
            if sec != 0 || usec != 0 {
                out.push(' ');
                if sec < 0 || (sec == 0 && usec < 0) {
                    if is_zero {
                        is_before = true;
                    } else if !is_before {
                        out.push('-');
                    }
                } else if is_before {
                    out.push('-');
                }
                append_seconds64(&mut out, sec, usec, false);
                let _ = write!(out, " sec{}", if sec.abs() != 1 || usec != 0 { "s" } else { "" });
                is_zero = false;
            }
            if is_zero {
                out.push_str(" 0");
            }
            if is_before {
                out.push_str(" ago");
            }
        }
    }
    out
}
