//! Date/time text input: the lexer and field decoder every input function
//! shares, following PostgreSQL 15's datetime.c (ParseDateTime,
//! DecodeDateTime, DecodeTimeOnly, DecodeInterval, DecodeISO8601Interval).
//!
//! Input is first split into typed fields ("2001-02-03" is a date field,
//! "04:05" a time field, "pst" a string...), then decoded left to right
//! with a bitmask of what has been seen, which is what makes forms like
//! "Feb 3 2001", "3-Feb-2001" and "20010203T040506" all work. Intervals
//! are decoded right to left so that units precede their numbers.

use crate::error::PgError;
use crate::pg_err;

use super::calendar::*;
use super::settings::{DateOrder, DateTimeSettings, IntervalStyle};
use super::timezone::{lookup_abbrev, lookup_iana_zone, lookup_zone_name, Abbrev, TimeZone};

/// Why input was rejected; mapped to PostgreSQL's messages by `to_error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dterr {
    BadFormat,
    FieldOverflow,
    /// Month/day out of range: as FieldOverflow, plus a DateStyle hint.
    MdFieldOverflow,
    IntervalOverflow,
    TzDispOverflow,
    BadTimezone(String),
}

impl Dterr {
    /// DateTimeParseError: the error PostgreSQL reports for `input` of `type_name`.
    pub(crate) fn to_error(&self, input: &str, type_name: &str) -> PgError {
        match self {
            Dterr::FieldOverflow => pg_err!(DATETIME_FIELD_OVERFLOW, "date/time field value out of range: \"{}\"", input),
            Dterr::MdFieldOverflow => {
                pg_err!(DATETIME_FIELD_OVERFLOW, "date/time field value out of range: \"{}\"", input)
                    .with_hint("Perhaps you need a different \"datestyle\" setting.")
            }
            Dterr::IntervalOverflow => pg_err!(INTERVAL_FIELD_OVERFLOW, "interval field value out of range: \"{}\"", input),
            Dterr::TzDispOverflow => {
                pg_err!(INVALID_TIME_ZONE_DISPLACEMENT_VALUE, "time zone displacement out of range: \"{}\"", input)
            }
            Dterr::BadTimezone(tz) => pg_err!(INVALID_PARAMETER_VALUE, "time zone \"{}\" not recognized", tz),
            Dterr::BadFormat => pg_err!(INVALID_DATETIME_FORMAT, "invalid input syntax for type {}: \"{}\"", type_name, input),
        }
    }
}

type DtResult<T> = Result<T, Dterr>;

/// Lexical class of a field (ParseDateTime's DTK_* field types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldType {
    /// Digits, possibly with a decimal point ("2001", "12.5", ".5").
    Number,
    /// Digits with date delimiters, or text with embedded punctuation ("2001-02-03", "America/New_York").
    Date,
    /// Digits with colons ("04:05:06.7").
    Time,
    /// Letters only ("feb", "pst").
    Str,
    /// Sign followed by letters ("-infinity").
    Special,
    /// Sign followed by digits ("+05:30", "-8", "-1-2").
    Tz,
}

#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub text: String,
    pub ftype: FieldType,
}

const MAXDATEFIELDS: usize = 25;
/// Room PostgreSQL's input functions give the lexer (MAXDATELEN + MAXDATEFIELDS).
const WORKBUF_LEN: usize = 128 + MAXDATEFIELDS;

/// ParseDateTime: splits input into fields, lower-casing text.
pub(crate) fn parse_fields(input: &str) -> DtResult<Vec<Field>> {
    let b = input.as_bytes();
    let mut fields: Vec<Field> = Vec::new();
    let mut used = 0usize;
    let mut i = 0;
    let at = |i: usize| -> u8 { b.get(i).copied().unwrap_or(0) };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if fields.len() >= MAXDATEFIELDS {
            return Err(Dterr::BadFormat);
        }
        let mut text = String::new();
        let ftype;
        if c.is_ascii_digit() {
            while at(i).is_ascii_digit() {
                text.push(at(i) as char);
                i += 1;
            }
            if at(i) == b':' {
                ftype = FieldType::Time;
                text.push(':');
                i += 1;
                while at(i).is_ascii_digit() || at(i) == b':' || at(i) == b'.' {
                    text.push(at(i) as char);
                    i += 1;
                }
            } else if at(i) == b'-' || at(i) == b'/' || at(i) == b'.' {
                let delim = at(i);
                text.push(delim as char);
                i += 1;
                if at(i).is_ascii_digit() {
                    let mut t = if delim == b'.' { FieldType::Number } else { FieldType::Date };
                    while at(i).is_ascii_digit() {
                        text.push(at(i) as char);
                        i += 1;
                    }
                    // Three-field dates need matching delimiters.
                    if at(i) == delim {
                        t = FieldType::Date;
                        text.push(delim as char);
                        i += 1;
                        while at(i).is_ascii_digit() || at(i) == delim {
                            text.push(at(i) as char);
                            i += 1;
                        }
                    }
                    ftype = t;
                } else {
                    ftype = FieldType::Date;
                    while at(i).is_ascii_alphanumeric() || at(i) == delim {
                        text.push(at(i).to_ascii_lowercase() as char);
                        i += 1;
                    }
                }
            } else {
                ftype = FieldType::Number;
            }
        } else if c == b'.' {
            text.push('.');
            i += 1;
            while at(i).is_ascii_digit() {
                text.push(at(i) as char);
                i += 1;
            }
            ftype = FieldType::Number;
        } else if c.is_ascii_alphabetic() {
            let mut t = FieldType::Str;
            while at(i).is_ascii_alphabetic() {
                text.push(at(i).to_ascii_lowercase() as char);
                i += 1;
            }
            // Dates can have embedded '-', '/' or '.'; zone names can also
            // have '+', '_', ':' and digits, unless the text so far is a keyword.
            let next = at(i);
            let is_date = if next == b'-' || next == b'/' || next == b'.' {
                true
            } else if next == b'+' || next.is_ascii_digit() {
                lookup_keyword(&text).is_none()
            } else {
                false
            };
            if is_date {
                t = FieldType::Date;
                loop {
                    text.push(at(i).to_ascii_lowercase() as char);
                    i += 1;
                    let n = at(i);
                    if !(n == b'+' || n == b'-' || n == b'/' || n == b'_' || n == b'.' || n == b':' || n.is_ascii_alphanumeric()) {
                        break;
                    }
                }
            }
            ftype = t;
        } else if c == b'+' || c == b'-' {
            text.push(c as char);
            i += 1;
            while at(i).is_ascii_whitespace() && i < b.len() {
                i += 1;
            }
            if at(i).is_ascii_digit() {
                ftype = FieldType::Tz;
                text.push(at(i) as char);
                i += 1;
                while at(i).is_ascii_digit() || at(i) == b':' || at(i) == b'.' || at(i) == b'-' {
                    text.push(at(i) as char);
                    i += 1;
                }
            } else if at(i).is_ascii_alphabetic() {
                ftype = FieldType::Special;
                while at(i).is_ascii_alphabetic() {
                    text.push(at(i).to_ascii_lowercase() as char);
                    i += 1;
                }
            } else {
                return Err(Dterr::BadFormat);
            }
        } else if c.is_ascii_punctuation() {
            i += 1;
            continue;
        } else {
            return Err(Dterr::BadFormat);
        }
        used += text.len() + 1;
        if used >= WORKBUF_LEN {
            return Err(Dterr::BadFormat);
        }
        fields.push(Field { text, ftype });
    }
    Ok(fields)
}

// Field-kind bits (datetime.h's DTK_M(...) masks).
const RESERV: u32 = 0;
const MONTH: u32 = 1;
const YEAR: u32 = 2;
const DAY: u32 = 3;
const TZ: u32 = 5;
const DTZ: u32 = 6;
const DYNTZ: u32 = 7;
const AMPM: u32 = 9;
const HOUR: u32 = 10;
const MINUTE: u32 = 11;
const SECOND: u32 = 12;
const MILLISECOND: u32 = 13;
const MICROSECOND: u32 = 14;
const DOY: u32 = 15;
const DOW: u32 = 16;
const ADBC: u32 = 18;
const WEEK: u32 = 24;
const DECADE: u32 = 25;
const CENTURY: u32 = 26;
const MILLENNIUM: u32 = 27;
const DTZMOD: u32 = 28;

const fn m(t: u32) -> u32 {
    1 << t
}
const DTK_ALL_SECS_M: u32 = m(SECOND) | m(MILLISECOND) | m(MICROSECOND);
const DTK_DATE_M: u32 = m(YEAR) | m(MONTH) | m(DAY);
const DTK_TIME_M: u32 = m(HOUR) | m(MINUTE) | DTK_ALL_SECS_M;

/// Interval range bits of an interval typmod (INTERVAL_MASK(...)).
pub(crate) const IM_MONTH: u32 = 1 << MONTH;
pub(crate) const IM_YEAR: u32 = 1 << YEAR;
pub(crate) const IM_DAY: u32 = 1 << DAY;
pub(crate) const IM_HOUR: u32 = 1 << HOUR;
pub(crate) const IM_MINUTE: u32 = 1 << MINUTE;
pub(crate) const IM_SECOND: u32 = 1 << SECOND;
pub(crate) const INTERVAL_FULL_RANGE: u32 = 0x7FFF;

/// A unit of time, as interval input, extract and date_trunc name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateTimeUnit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Julian,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
    Dow,
    Doy,
    IsoDow,
    IsoYear,
    Epoch,
}

/// Special values recognized in timestamp and date input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reserved {
    Epoch,
    Late,
    Early,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    Zulu,
}

/// Meaning of a keyword in date/time input (datetktbl).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keyword {
    Reserved(Reserved),
    Month(i32),
    Dow(i32),
    AmPm(bool),
    AdBc(bool),
    Units(DateTimeUnit),
    IsoTime,
    Ignore,
    DstModifier,
}

/// Keywords are compared on their first 10 characters (TOKMAXLEN), so
/// "microsecon" matches "microseconds".
fn truncate_token(s: &str) -> &str {
    match s.get(..10) {
        Some(prefix) if s.len() > 10 => prefix,
        _ => s,
    }
}

/// DecodeSpecial's table (datetktbl), PostgreSQL 15 edition.
fn lookup_keyword(lower: &str) -> Option<Keyword> {
    use DateTimeUnit as U;
    use Keyword::*;
    Some(match truncate_token(lower) {
        "-infinity" => Reserved(self::Reserved::Early),
        "ad" => AdBc(false),
        "allballs" => Reserved(self::Reserved::Zulu),
        "am" => AmPm(false),
        "apr" | "april" => Month(4),
        "at" => Ignore,
        "aug" | "august" => Month(8),
        "bc" => AdBc(true),
        "d" => Units(U::Day),
        "dec" | "december" => Month(12),
        "dow" => Units(U::Dow),
        "doy" => Units(U::Doy),
        "dst" => DstModifier,
        "epoch" => Reserved(self::Reserved::Epoch),
        "feb" | "february" => Month(2),
        "fri" | "friday" => Dow(5),
        "h" => Units(U::Hour),
        "infinity" => Reserved(self::Reserved::Late),
        "isodow" => Units(U::IsoDow),
        "isoyear" => Units(U::IsoYear),
        "j" | "jd" | "julian" => Units(U::Julian),
        "jan" | "january" => Month(1),
        "jul" | "july" => Month(7),
        "jun" | "june" => Month(6),
        "m" => Units(U::Month),
        "mar" | "march" => Month(3),
        "may" => Month(5),
        "mm" => Units(U::Minute),
        "mon" | "monday" => Dow(1),
        "nov" | "november" => Month(11),
        "now" => Reserved(self::Reserved::Now),
        "oct" | "october" => Month(10),
        "on" => Ignore,
        "pm" => AmPm(true),
        "s" => Units(U::Second),
        "sat" | "saturday" => Dow(6),
        "sep" | "sept" | "september" => Month(9),
        "sun" | "sunday" => Dow(0),
        "t" => IsoTime,
        "thu" | "thur" | "thurs" | "thursday" => Dow(4),
        "today" => Reserved(self::Reserved::Today),
        "tomorrow" => Reserved(self::Reserved::Tomorrow),
        "tue" | "tues" | "tuesday" => Dow(2),
        "wed" | "wednesday" | "weds" => Dow(3),
        "y" => Units(U::Year),
        "yesterday" => Reserved(self::Reserved::Yesterday),
        _ => return None,
    })
}

/// Meaning of a word in interval input and in extract/date_trunc field names (deltatktbl).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DeltaWord {
    Units(DateTimeUnit),
    Ago,
    Ignore,
}

fn lookup_delta(lower: &str) -> Option<DeltaWord> {
    use DateTimeUnit as U;
    use DeltaWord::*;
    Some(match truncate_token(lower) {
        "@" => Ignore,
        "ago" => Ago,
        "c" | "cent" | "centuries" | "century" => Units(U::Century),
        "d" | "day" | "days" => Units(U::Day),
        "dec" | "decade" | "decades" | "decs" => Units(U::Decade),
        "h" | "hour" | "hours" | "hr" | "hrs" => Units(U::Hour),
        "m" | "min" | "mins" | "minute" | "minutes" => Units(U::Minute),
        "microsecon" | "us" | "usec" | "usecs" | "useconds" => Units(U::Microsecond),
        "mil" | "millennia" | "millennium" | "mils" => Units(U::Millennium),
        "millisecon" | "ms" | "msec" | "msecs" | "mseconds" => Units(U::Millisecond),
        "mon" | "mons" | "month" | "months" => Units(U::Month),
        "qtr" | "quarter" => Units(U::Quarter),
        "s" | "sec" | "second" | "seconds" | "secs" => Units(U::Second),
        "timezone" => Units(U::Timezone),
        "timezone_h" => Units(U::TimezoneHour),
        "timezone_m" => Units(U::TimezoneMinute),
        "w" | "week" | "weeks" => Units(U::Week),
        "y" | "year" | "years" | "yr" | "yrs" => Units(U::Year),
        _ => return None,
    })
}

/// What a unit name given to extract or date_part denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldName {
    Unit(DateTimeUnit),
    /// A reserved word other than "epoch" ("now", "infinity"): "not supported".
    OtherReserved,
    /// Anything else: "not recognized".
    Unknown,
}

/// extract/date_part unit lookup: DecodeUnits, then DecodeSpecial (for
/// "epoch", "dow", "julian", ...). The name must already be lower-case.
pub(crate) fn lookup_field_name(lower: &str) -> FieldName {
    match lookup_delta(lower) {
        Some(DeltaWord::Units(u)) => FieldName::Unit(u),
        Some(_) => FieldName::Unknown,
        None => match lookup_keyword(lower) {
            Some(Keyword::Units(u)) => FieldName::Unit(u),
            Some(Keyword::Reserved(Reserved::Epoch)) => FieldName::Unit(DateTimeUnit::Epoch),
            Some(Keyword::Reserved(_)) => FieldName::OtherReserved,
            _ => FieldName::Unknown,
        },
    }
}

/// date_trunc unit lookup: interval units only (DecodeUnits).
pub(crate) fn lookup_delta_unit(lower: &str) -> Option<DateTimeUnit> {
    match lookup_delta(lower) {
        Some(DeltaWord::Units(u)) => Some(u),
        _ => None,
    }
}

/// The unit a (case-insensitive) field name such as "hours", "dow" or
/// "epoch" denotes in extract/date_part, if any.
pub fn decode_units(name: &str) -> Option<DateTimeUnit> {
    match lookup_field_name(&name.to_lowercase()) {
        FieldName::Unit(u) => Some(u),
        _ => None,
    }
}

/// Parses a leading (optionally signed) decimal integer as strtol does,
/// returning the value and the rest. None if no digits.
fn strtol(s: &str) -> Option<(i64, &str, bool)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        match v.checked_mul(10).and_then(|x| x.checked_add((b[i] - b'0') as i64)) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { -v } else { v }, &s[i..], overflow))
}

/// strtoint: as strtol, but the value must fit in 32 bits.
fn strtoint(s: &str) -> DtResult<Option<(i32, &str)>> {
    match strtol(s) {
        None => Ok(None),
        Some((_, _, true)) => Err(Dterr::FieldOverflow),
        Some((v, rest, false)) => {
            if v > i32::MAX as i64 || v < i32::MIN as i64 {
                Err(Dterr::FieldOverflow)
            } else {
                Ok(Some((v as i32, rest)))
            }
        }
    }
}

/// Parses a leading float as strtod does ("1.5", ".5", "1e3", "-2"); returns value and rest.
pub(crate) fn strtod(s: &str) -> Option<(f64, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut ndigits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        ndigits += i - f;
    }
    if ndigits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > e {
            i = j;
        }
    }
    let v: f64 = s[start..i].parse().ok()?;
    Some((v, &s[i..]))
}

/// ParseFraction: "." followed by digits to end of string.
fn parse_fraction(s: &str) -> DtResult<f64> {
    debug_assert!(s.starts_with('.'));
    if s.len() == 1 {
        return Ok(0.0);
    }
    match strtod(s) {
        Some((v, "")) => Ok(v),
        _ => Err(Dterr::BadFormat),
    }
}

/// ParseFractionalSecond: a fraction as whole microseconds.
fn parse_fractional_second(s: &str) -> DtResult<i32> {
    Ok((parse_fraction(s)? * 1_000_000.0).round_ties_even() as i32)
}

/// DecodeTimezone: "+hh", "+hh:mm", "+hh:mm:ss", "+hhmm" to seconds west.
pub(crate) fn decode_timezone(s: &str) -> DtResult<i32> {
    let sign = match s.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Err(Dterr::BadFormat),
    };
    let body = &s[1..];
    let (mut hr, mut rest) = match strtoint(body).map_err(|_| Dterr::TzDispOverflow)? {
        Some(x) => x,
        None => (0, body),
    };
    let mut min = 0;
    let mut sec = 0;
    if let Some(r) = rest.strip_prefix(':') {
        let (v, r) = strtoint(r).map_err(|_| Dterr::TzDispOverflow)?.unwrap_or((0, r));
        min = v;
        rest = r;
        if let Some(r) = rest.strip_prefix(':') {
            let (v, r) = strtoint(r).map_err(|_| Dterr::TzDispOverflow)?.unwrap_or((0, r));
            sec = v;
            rest = r;
        }
    } else if rest.is_empty() && s.len() > 3 {
        min = hr % 100;
        hr /= 100;
    }
    if !(0..=MAX_TZDISP_HOUR).contains(&hr) || !(0..60).contains(&min) || !(0..60).contains(&sec) {
        return Err(Dterr::TzDispOverflow);
    }
    let tz = (hr * 60 + min) * 60 + sec;
    if !rest.is_empty() {
        return Err(Dterr::BadFormat);
    }
    Ok(-sign * tz)
}

/// The outcome of decoding a date/time: a concrete value or a special one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DateTimeKind {
    Value,
    Epoch,
    Infinity,
    NegInfinity,
}

/// Decoded date/time fields.
#[derive(Clone, Debug)]
pub(crate) struct Decoded {
    pub kind: DateTimeKind,
    pub tm: Tm,
    /// Seconds west of UTC: given in the input, or the session zone's.
    pub tz: Option<i32>,
}

/// State of DecodeDateTime/DecodeTimeOnly while walking the fields.
struct Decoder<'a> {
    settings: &'a DateTimeSettings,
    /// Transaction start (timestamptz), for 'now', 'today' and friends.
    now: i64,
    /// DTK_M bits of the kinds of fields seen so far; a kind seen twice is an error.
    fmask: u32,
    tm: Tm,
    /// Day of year, from a three-digit number after the year ("2001.038").
    yday: i32,
    /// Zone offset in seconds west, valid when `have_tz`.
    tz: i32,
    have_tz: bool,
    /// The year had one or two digits and is to be read as 1970..2069.
    is2digits: bool,
    bc: bool,
    /// The date came from a Julian day number, so BC/two-digit rules do not apply.
    isjulian: bool,
    /// AM/PM: None = 24-hour clock.
    meridian: Option<bool>,
    /// A month name has been read, which changes how the numbers around it are taken.
    have_text_month: bool,
    /// A full zone name, resolved once the date is known.
    named_tz: Option<TimeZone>,
    /// A dynamic abbreviation ("MSK") and its zone, resolved once the date is known.
    abbrev_tz: Option<(TimeZone, String)>,
    kind: DateTimeKind,
}

/// Current transaction time broken down in the session zone (GetCurrentTimeUsec).
fn current_local(settings: &DateTimeSettings, now: i64) -> (Tm, i32) {
    let offset = settings.time_zone.offset_at_utc(now);
    let tm = timestamp_to_tm_utc(now - offset as i64 * USECS_PER_SEC).unwrap_or_default();
    (tm, offset)
}

impl<'a> Decoder<'a> {
    fn new(settings: &'a DateTimeSettings, now: i64) -> Self {
        Decoder {
            settings,
            now,
            fmask: 0,
            tm: Tm { year: 0, mon: 0, mday: 0, hour: 0, min: 0, sec: 0, fsec: 0 },
            yday: 0,
            tz: 0,
            have_tz: false,
            is2digits: false,
            bc: false,
            isjulian: false,
            meridian: None,
            have_text_month: false,
            named_tz: None,
            abbrev_tz: None,
            kind: DateTimeKind::Value,
        }
    }

    fn date_order(&self) -> DateOrder {
        self.settings.date_order
    }

    /// DecodeDate: a field with date delimiters ("2001-02-03", "feb-3-2001").
    fn decode_date(&mut self, s: &str, fmask: u32) -> DtResult<u32> {
        let mut fmask = fmask;
        let mut tmask = 0;
        let mut parts: Vec<&str> = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && parts.len() < MAXDATEFIELDS {
            while i < b.len() && !b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            if i >= b.len() {
                return Err(Dterr::BadFormat);
            }
            let start = i;
            if b[i].is_ascii_digit() {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            } else {
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            parts.push(&s[start..i]);
            // The character after a part is a separator and is consumed.
            if i < b.len() {
                i += 1;
            }
        }
        let mut have_text_month = false;
        let mut done = vec![false; parts.len()];
        for (n, p) in parts.iter().enumerate() {
            if p.as_bytes()[0].is_ascii_alphabetic() {
                match lookup_keyword(p) {
                    Some(Keyword::Ignore) => {
                        done[n] = true;
                        continue;
                    }
                    Some(Keyword::Month(v)) => {
                        self.tm.mon = v;
                        have_text_month = true;
                    }
                    _ => return Err(Dterr::BadFormat),
                }
                let dmask = m(MONTH);
                if fmask & dmask != 0 {
                    return Err(Dterr::BadFormat);
                }
                fmask |= dmask;
                tmask |= dmask;
                done[n] = true;
            }
        }
        for (n, p) in parts.iter().enumerate() {
            if done[n] {
                continue;
            }
            if p.is_empty() {
                return Err(Dterr::BadFormat);
            }
            let dmask = self.decode_number(p, have_text_month, fmask)?;
            if fmask & dmask != 0 {
                return Err(Dterr::BadFormat);
            }
            fmask |= dmask;
            tmask |= dmask;
        }
        if (fmask & !(m(DOY) | m(TZ))) != DTK_DATE_M {
            return Err(Dterr::BadFormat);
        }
        Ok(tmask)
    }

    /// DecodeNumber: a plain number whose meaning depends on what came before.
    fn decode_number(&mut self, s: &str, have_text_month: bool, fmask: u32) -> DtResult<u32> {
        let flen = s.len();
        let (val, rest) = strtoint(s)?.ok_or(Dterr::BadFormat)?;
        if rest.starts_with('.') {
            // More than two digits before the point: a run-together date or time.
            if s.len() - rest.len() > 2 {
                let (tmask, _) = self.decode_number_field(s, fmask | DTK_DATE_M)?;
                return Ok(tmask);
            }
            self.tm.fsec = parse_fractional_second(rest)?;
        } else if !rest.is_empty() {
            return Err(Dterr::BadFormat);
        }

        // A three-digit number after a year is a day of the year.
        if flen == 3 && (fmask & DTK_DATE_M) == m(YEAR) && (1..=366).contains(&val) {
            self.yday = val;
            return Ok(m(DOY) | m(MONTH) | m(DAY));
        }

        let order = self.date_order();
        let tmask;
        match fmask & DTK_DATE_M {
            0 => {
                // Nothing yet: a year if more than two digits, else DateStyle's first field.
                if flen >= 3 || order == DateOrder::Ymd {
                    tmask = m(YEAR);
                    self.tm.year = val;
                } else if order == DateOrder::Dmy {
                    tmask = m(DAY);
                    self.tm.mday = val;
                } else {
                    tmask = m(MONTH);
                    self.tm.mon = val;
                }
            }
            x if x == m(YEAR) => {
                tmask = m(MONTH);
                self.tm.mon = val;
            }
            x if x == m(MONTH) => {
                if have_text_month {
                    if flen >= 3 || order == DateOrder::Ymd {
                        tmask = m(YEAR);
                        self.tm.year = val;
                    } else {
                        tmask = m(DAY);
                        self.tm.mday = val;
                    }
                } else {
                    tmask = m(DAY);
                    self.tm.mday = val;
                }
            }
            x if x == m(YEAR) | m(MONTH) => {
                if have_text_month {
                    // DD-MON-YYYY even in YMD mode.
                    if flen >= 3 && self.is2digits {
                        tmask = m(DAY);
                        self.tm.mday = self.tm.year;
                        self.tm.year = val;
                        self.is2digits = false;
                    } else {
                        tmask = m(DAY);
                        self.tm.mday = val;
                    }
                } else {
                    tmask = m(DAY);
                    self.tm.mday = val;
                }
            }
            x if x == m(DAY) => {
                tmask = m(MONTH);
                self.tm.mon = val;
            }
            x if x == m(MONTH) | m(DAY) => {
                tmask = m(YEAR);
                self.tm.year = val;
            }
            x if x == DTK_DATE_M => {
                let (tmask, _) = self.decode_number_field(s, fmask)?;
                return Ok(tmask);
            }
            _ => return Err(Dterr::BadFormat),
        }
        if tmask == m(YEAR) {
            self.is2digits = flen <= 2;
        }
        Ok(tmask)
    }

    /// DecodeNumberField: a run-together date (yyyymmdd, yymmdd) or time
    /// (hhmmss, hhmm), possibly with fractional seconds. Returns the mask
    /// and whether a date (true) or a time (false) was read.
    fn decode_number_field(&mut self, s: &str, fmask: u32) -> DtResult<(u32, bool)> {
        let mut digits = s;
        if let Some(dot) = s.find('.') {
            let frac = &s[dot..];
            if frac.len() == 1 {
                self.tm.fsec = 0;
            } else {
                let v = strtod(frac).map(|x| x.0).ok_or(Dterr::BadFormat)?;
                self.tm.fsec = (v * 1_000_000.0).round_ties_even() as i32;
            }
            digits = &s[..dot];
        } else if fmask & DTK_DATE_M != DTK_DATE_M {
            let len = digits.len();
            if len >= 6 {
                self.tm.mday = atoi(&digits[len - 2..]);
                self.tm.mon = atoi(&digits[len - 4..len - 2]);
                self.tm.year = atoi(&digits[..len - 4]);
                if len - 4 == 2 {
                    self.is2digits = true;
                }
                return Ok((DTK_DATE_M, true));
            }
        }
        let len = digits.len();
        if fmask & DTK_TIME_M != DTK_TIME_M {
            if len == 6 {
                self.tm.sec = atoi(&digits[4..]);
                self.tm.min = atoi(&digits[2..4]);
                self.tm.hour = atoi(&digits[..2]);
                return Ok((DTK_TIME_M, false));
            } else if len == 4 {
                self.tm.sec = 0;
                self.tm.min = atoi(&digits[2..]);
                self.tm.hour = atoi(&digits[..2]);
                return Ok((DTK_TIME_M, false));
            }
        }
        Err(Dterr::BadFormat)
    }

    /// DecodeTime: "hh:mm", "hh:mm:ss", "hh:mm:ss.fff", "mm:ss.fff".
    fn decode_time(&mut self, s: &str) -> DtResult<u32> {
        let (hour, rest) = strtoint(s)?.ok_or(Dterr::BadFormat)?;
        let Some(rest) = rest.strip_prefix(':') else { return Err(Dterr::BadFormat) };
        let (min, rest) = strtoint(rest)?.unwrap_or((0, rest));
        let (mut h, mut mi, mut sec, mut fsec) = (hour, min, 0, 0);
        if rest.is_empty() {
        } else if rest.starts_with('.') {
            // mm:ss.fff is always minutes and seconds.
            fsec = parse_fractional_second(rest)?;
            sec = mi;
            mi = h;
            h = 0;
        } else if let Some(r) = rest.strip_prefix(':') {
            let (s2, r) = strtoint(r)?.unwrap_or((0, r));
            sec = s2;
            if r.starts_with('.') {
                fsec = parse_fractional_second(r)?;
            } else if !r.is_empty() {
                return Err(Dterr::BadFormat);
            }
        } else {
            return Err(Dterr::BadFormat);
        }
        if h < 0 || !(0..60).contains(&mi) || !(0..=60).contains(&sec) || !(0..=1_000_000).contains(&fsec) {
            return Err(Dterr::FieldOverflow);
        }
        self.tm.hour = h;
        self.tm.min = mi;
        self.tm.sec = sec;
        self.tm.fsec = fsec;
        Ok(DTK_TIME_M)
    }

    /// ValidateDate: applies BC, two-digit years and day-of-year; checks ranges.
    fn validate_date(&mut self) -> DtResult<()> {
        let fmask = self.fmask;
        if fmask & m(YEAR) != 0 {
            if self.isjulian {
                // The year came from a Julian day and is already right.
            } else if self.bc {
                if self.tm.year <= 0 {
                    return Err(Dterr::FieldOverflow);
                }
                self.tm.year = -(self.tm.year - 1);
            } else if self.is2digits {
                if self.tm.year < 0 {
                    return Err(Dterr::FieldOverflow);
                }
                if self.tm.year < 70 {
                    self.tm.year += 2000;
                } else if self.tm.year < 100 {
                    self.tm.year += 1900;
                }
            } else if self.tm.year <= 0 {
                return Err(Dterr::FieldOverflow);
            }
        }
        if fmask & m(DOY) != 0 {
            let (y, mo, d) = j2date(date2j(self.tm.year, 1, 1) + self.yday - 1);
            self.tm.year = y;
            self.tm.mon = mo;
            self.tm.mday = d;
        }
        if fmask & m(MONTH) != 0 && !(1..=12).contains(&self.tm.mon) {
            return Err(Dterr::MdFieldOverflow);
        }
        if fmask & m(DAY) != 0 && !(1..=31).contains(&self.tm.mday) {
            return Err(Dterr::MdFieldOverflow);
        }
        if fmask & DTK_DATE_M == DTK_DATE_M && self.tm.mday > days_in_month(self.tm.year, self.tm.mon) {
            return Err(Dterr::FieldOverflow);
        }
        Ok(())
    }

    fn apply_meridian(&mut self) -> DtResult<()> {
        if let Some(pm) = self.meridian {
            if self.tm.hour > 12 {
                return Err(Dterr::FieldOverflow);
            }
            if !pm && self.tm.hour == 12 {
                self.tm.hour = 0;
            } else if pm && self.tm.hour != 12 {
                self.tm.hour += 12;
            }
        }
        Ok(())
    }

    /// Local time of the decoded fields as microseconds (for zone lookups).
    fn local_ts(tm: &Tm) -> i64 {
        if !is_valid_julian(tm.year, tm.mon) {
            return 0;
        }
        ((date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE) as i64)
            .saturating_mul(USECS_PER_DAY)
            .saturating_add(time2t(tm.hour, tm.min, tm.sec, 0))
    }

    /// A number field after a unit label (ISO "T", Julian "J", or the
    /// PostgreSQL 15 unit-labelled forms "y2001m02d03").
    fn decode_labelled_number(&mut self, unit: Prefix, text: &str, fmask: u32) -> DtResult<u32> {
        let (value, rest) = strtoint(text)?.ok_or(Dterr::BadFormat)?;
        if rest.starts_with('.') {
            if !matches!(unit, Prefix::Unit(DateTimeUnit::Julian) | Prefix::IsoTime | Prefix::Unit(DateTimeUnit::Second)) {
                return Err(Dterr::BadFormat);
            }
        } else if !rest.is_empty() {
            return Err(Dterr::BadFormat);
        }
        let tmask;
        match unit {
            Prefix::Unit(DateTimeUnit::Year) => {
                self.tm.year = value;
                tmask = m(YEAR);
            }
            Prefix::Unit(DateTimeUnit::Month) => {
                // Already have a month and hour? Then this is minutes.
                if fmask & m(MONTH) != 0 && fmask & m(HOUR) != 0 {
                    self.tm.min = value;
                    tmask = m(MINUTE);
                } else {
                    self.tm.mon = value;
                    tmask = m(MONTH);
                }
            }
            Prefix::Unit(DateTimeUnit::Day) => {
                self.tm.mday = value;
                tmask = m(DAY);
            }
            Prefix::Unit(DateTimeUnit::Hour) => {
                self.tm.hour = value;
                tmask = m(HOUR);
            }
            Prefix::Unit(DateTimeUnit::Minute) => {
                self.tm.min = value;
                tmask = m(MINUTE);
            }
            Prefix::Unit(DateTimeUnit::Second) => {
                self.tm.sec = value;
                if rest.starts_with('.') {
                    self.tm.fsec = parse_fractional_second(rest)?;
                    tmask = DTK_ALL_SECS_M;
                } else {
                    tmask = m(SECOND);
                }
            }
            Prefix::Unit(DateTimeUnit::Julian) => {
                if value < 0 {
                    return Err(Dterr::FieldOverflow);
                }
                let (y, mo, d) = j2date(value);
                self.tm.year = y;
                self.tm.mon = mo;
                self.tm.mday = d;
                self.isjulian = true;
                let mut t = DTK_DATE_M;
                if rest.starts_with('.') {
                    let frac = parse_fraction(rest)?;
                    let time = (frac * USECS_PER_DAY as f64) as i64;
                    let (h, mi, s, f) = dt2time(time);
                    self.tm.hour = h;
                    self.tm.min = mi;
                    self.tm.sec = s;
                    self.tm.fsec = f;
                    t |= DTK_TIME_M;
                }
                tmask = t;
            }
            Prefix::IsoTime => {
                let (t, is_date) = self.decode_number_field(text, fmask | DTK_DATE_M)?;
                if is_date || t != DTK_TIME_M {
                    return Err(Dterr::BadFormat);
                }
                tmask = t;
            }
            Prefix::Unit(_) => return Err(Dterr::BadFormat),
        }
        Ok(tmask)
    }

    /// Resolves a named or abbreviated zone against the decoded local time.
    fn resolve_zone(&mut self) {
        if let Some(z) = self.named_tz.take() {
            self.tz = z.offset_for_local(Self::local_ts(&self.tm));
        }
        if let Some((z, abbrev)) = self.abbrev_tz.take() {
            self.tz = z.offset_for_abbrev(Self::local_ts(&self.tm), &abbrev.to_ascii_uppercase());
        }
    }

    /// Handles a text field (keyword, month, zone abbreviation or zone
    /// name) common to both decoders; returns the mask to add, or None
    /// when the field is to be ignored.
    fn decode_text(&mut self, text: &str, ptype: &mut Option<Prefix>, time_only: bool) -> DtResult<Option<u32>> {
        // Zone abbreviations take precedence over keywords.
        if let Some(abbrev) = lookup_abbrev(text) {
            return Ok(Some(match abbrev {
                Abbrev::Fixed { offset, is_dst } => {
                    self.tz = -offset;
                    self.have_tz = true;
                    if is_dst {
                        m(DTZ) | m(TZ)
                    } else {
                        m(TZ)
                    }
                }
                Abbrev::Dynamic(zone) => {
                    let z = lookup_iana_zone(zone).ok_or_else(|| Dterr::BadTimezone(zone.to_string()))?;
                    self.abbrev_tz = Some((z, text.to_string()));
                    self.have_tz = true;
                    m(DYNTZ) | m(TZ)
                }
            }));
        }
        let Some(kw) = lookup_keyword(text) else {
            // Before giving up, try an all-alphabetic zone name ("UTC", "Zulu").
            let z = lookup_zone_name(text).ok_or(Dterr::BadFormat)?;
            self.named_tz = Some(z);
            self.have_tz = true;
            return Ok(Some(m(TZ)));
        };
        Ok(Some(match kw {
            Keyword::Ignore => return Ok(None),
            Keyword::Reserved(r) => {
                if time_only {
                    match r {
                        Reserved::Now => {
                            let (tm, _) = current_local(self.settings, self.now);
                            self.tm.hour = tm.hour;
                            self.tm.min = tm.min;
                            self.tm.sec = tm.sec;
                            self.tm.fsec = tm.fsec;
                            DTK_TIME_M
                        }
                        Reserved::Zulu => {
                            self.tm.hour = 0;
                            self.tm.min = 0;
                            self.tm.sec = 0;
                            self.tz = 0;
                            self.have_tz = true;
                            DTK_TIME_M | m(TZ)
                        }
                        _ => return Err(Dterr::BadFormat),
                    }
                } else {
                    match r {
                        Reserved::Now => {
                            self.kind = DateTimeKind::Value;
                            let (tm, offset) = current_local(self.settings, self.now);
                            self.tm = tm;
                            self.tz = offset;
                            self.have_tz = true;
                            DTK_DATE_M | DTK_TIME_M | m(TZ)
                        }
                        Reserved::Today | Reserved::Tomorrow | Reserved::Yesterday => {
                            self.kind = DateTimeKind::Value;
                            let (tm, _) = current_local(self.settings, self.now);
                            let delta = match r {
                                Reserved::Tomorrow => 1,
                                Reserved::Yesterday => -1,
                                _ => 0,
                            };
                            let (y, mo, d) = j2date(date2j(tm.year, tm.mon, tm.mday) + delta);
                            self.tm.year = y;
                            self.tm.mon = mo;
                            self.tm.mday = d;
                            DTK_DATE_M
                        }
                        Reserved::Zulu => {
                            self.tm.hour = 0;
                            self.tm.min = 0;
                            self.tm.sec = 0;
                            self.tz = 0;
                            self.have_tz = true;
                            DTK_TIME_M | m(TZ)
                        }
                        // PostgreSQL 15 marks only the RESERV bit here, so other
                        // fields may follow ("infinity 2020" is infinity).
                        Reserved::Epoch | Reserved::Late | Reserved::Early => {
                            self.kind = match r {
                                Reserved::Epoch => DateTimeKind::Epoch,
                                Reserved::Late => DateTimeKind::Infinity,
                                _ => DateTimeKind::NegInfinity,
                            };
                            m(RESERV)
                        }
                    }
                }
            }
            Keyword::Month(v) => {
                let mut tmask = m(MONTH);
                // A numeric "month" already read without a day is really the day.
                if self.fmask & m(MONTH) != 0 && !self.have_text_month && self.fmask & m(DAY) == 0 && (1..=31).contains(&self.tm.mon) {
                    self.tm.mday = self.tm.mon;
                    tmask = m(DAY);
                }
                self.have_text_month = true;
                self.tm.mon = v;
                tmask
            }
            Keyword::DstModifier => {
                self.tz -= 3600;
                m(DTZMOD) | m(DTZ)
            }
            Keyword::AmPm(pm) => {
                self.meridian = Some(pm);
                m(AMPM)
            }
            Keyword::AdBc(bc) => {
                self.bc = bc;
                m(ADBC)
            }
            Keyword::Dow(_) => m(DOW),
            Keyword::Units(u) => {
                *ptype = Some(Prefix::Unit(u));
                0
            }
            Keyword::IsoTime => {
                *ptype = Some(Prefix::IsoTime);
                0
            }
        }))
    }
}

/// A unit label waiting for its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prefix {
    Unit(DateTimeUnit),
    IsoTime,
}

fn atoi(s: &str) -> i32 {
    strtol(s).map(|(v, _, _)| v as i32).unwrap_or(0)
}

fn time_overflows(tm: &Tm) -> bool {
    if tm.hour < 0 || !(0..60).contains(&tm.min) || !(0..=60).contains(&tm.sec) || !(0..=1_000_000).contains(&tm.fsec) {
        return true;
    }
    time2t(tm.hour, tm.min, tm.sec, tm.fsec) > USECS_PER_DAY
}

/// DecodeDateTime: interprets fields as a full date and time. Every input
/// function accepts a zone (date and timestamp then ignore it); without one
/// the session zone's offset at that local time is used.
pub(crate) fn decode_date_time(fields: &[Field], settings: &DateTimeSettings, now: i64) -> DtResult<Decoded> {
    let mut d = Decoder::new(settings, now);
    d.tm.hour = 0;
    let mut ptype: Option<Prefix> = None;
    let nf = fields.len();
    for (i, f) in fields.iter().enumerate() {
        let text = f.text.as_str();
        let fmask = d.fmask;
        let tmask: u32 = match f.ftype {
            FieldType::Date => {
                if ptype == Some(Prefix::Unit(DateTimeUnit::Julian)) {
                    // Julian day with an attached zone: "J2451545+08".
                    let (jday, rest) = strtoint(text)?.ok_or(Dterr::BadFormat)?;
                    if jday < 0 {
                        return Err(Dterr::FieldOverflow);
                    }
                    let (y, mo, dd) = j2date(jday);
                    d.tm.year = y;
                    d.tm.mon = mo;
                    d.tm.mday = dd;
                    d.isjulian = true;
                    d.tz = decode_timezone(rest)?;
                    d.have_tz = true;
                    ptype = None;
                    DTK_DATE_M | DTK_TIME_M | m(TZ)
                } else if ptype.is_some() || (fmask & (m(MONTH) | m(DAY))) == (m(MONTH) | m(DAY)) {
                    // Already have a date: a zone name, or a run-together time with a zone ("040506-08").
                    if text.as_bytes()[0].is_ascii_digit() || ptype.is_some() {
                        if let Some(p) = ptype {
                            if p != Prefix::IsoTime {
                                return Err(Dterr::BadFormat);
                            }
                            ptype = None;
                        }
                        if fmask & DTK_TIME_M == DTK_TIME_M {
                            return Err(Dterr::BadFormat);
                        }
                        let dash = text.find('-').ok_or(Dterr::BadFormat)?;
                        d.tz = decode_timezone(&text[dash..])?;
                        d.have_tz = true;
                        let (t, _) = d.decode_number_field(&text[..dash], fmask)?;
                        t | m(TZ)
                    } else {
                        let z = lookup_zone_name(text).ok_or_else(|| Dterr::BadTimezone(text.to_string()))?;
                        d.named_tz = Some(z);
                        d.have_tz = true;
                        m(TZ)
                    }
                } else {
                    d.decode_date(text, fmask)?
                }
            }
            FieldType::Time => {
                if let Some(p) = ptype {
                    if p != Prefix::IsoTime {
                        return Err(Dterr::BadFormat);
                    }
                    ptype = None;
                }
                let t = d.decode_time(text)?;
                if time_overflows(&d.tm) {
                    return Err(Dterr::FieldOverflow);
                }
                t
            }
            FieldType::Tz => {
                d.tz = decode_timezone(text)?;
                d.have_tz = true;
                m(TZ)
            }
            FieldType::Number => {
                if let Some(p) = ptype.take() {
                    if p == Prefix::Unit(DateTimeUnit::Timezone) {
                        return Err(Dterr::BadFormat);
                    }
                    d.decode_labelled_number(p, text, fmask)?
                } else {
                    let flen = text.len();
                    let dot = text.find('.');
                    if dot.is_some() && fmask & DTK_DATE_M == 0 {
                        // Embedded decimal and no date yet: "2001.038" or "1997.02.07"?
                        d.decode_date(text, fmask)?
                    } else if dot.is_some_and(|p| p > 2) {
                        // Several digits before the point: a run-together date or time.
                        d.decode_number_field(text, fmask)?.0
                    } else if flen >= 6 && (fmask & DTK_DATE_M == 0 || fmask & DTK_TIME_M == 0) {
                        // Six or more digits: yymmdd/yyyymmdd or hhmmss, unless both are known.
                        d.decode_number_field(text, fmask)?.0
                    } else {
                        d.decode_number(text, d.have_text_month, fmask)?
                    }
                }
            }
            FieldType::Str | FieldType::Special => {
                let before = ptype;
                let r = d.decode_text(text, &mut ptype, false)?;
                match r {
                    None => continue,
                    Some(t) => {
                        if before.is_none() && ptype == Some(Prefix::IsoTime) {
                            // "T" must follow a complete date and precede a time-ish field.
                            if fmask & DTK_DATE_M != DTK_DATE_M {
                                return Err(Dterr::BadFormat);
                            }
                            if i >= nf - 1 || !matches!(fields[i + 1].ftype, FieldType::Number | FieldType::Time | FieldType::Date) {
                                return Err(Dterr::BadFormat);
                            }
                        } else if before.is_some() && ptype.is_some() && t == 0 {
                            return Err(Dterr::BadFormat);
                        }
                        t
                    }
                }
            }
        };
        if tmask & fmask != 0 {
            return Err(Dterr::BadFormat);
        }
        d.fmask |= tmask;
    }
    if ptype.is_some() {
        return Err(Dterr::BadFormat);
    }
    if d.kind == DateTimeKind::Value {
        d.validate_date()?;
        d.apply_meridian()?;
        if d.fmask & DTK_DATE_M != DTK_DATE_M {
            return Err(Dterr::BadFormat);
        }
        if (d.named_tz.is_some() || d.abbrev_tz.is_some()) && d.fmask & m(DTZMOD) != 0 {
            return Err(Dterr::BadFormat);
        }
        d.resolve_zone();
        if d.fmask & m(TZ) == 0 {
            if d.fmask & m(DTZMOD) != 0 {
                return Err(Dterr::BadFormat);
            }
            d.tz = settings.time_zone.offset_for_local(Decoder::local_ts(&d.tm));
            d.have_tz = true;
        }
    }
    Ok(Decoded { kind: d.kind, tm: d.tm, tz: d.have_tz.then_some(d.tz) })
}

/// DecodeTimeOnly: interprets fields as a time of day, optionally with a
/// zone (timetz) and a date used only to resolve that zone.
pub(crate) fn decode_time_only(fields: &[Field], settings: &DateTimeSettings, now: i64) -> DtResult<Decoded> {
    let mut d = Decoder::new(settings, now);
    let mut ptype: Option<Prefix> = None;
    let nf = fields.len();
    for (i, f) in fields.iter().enumerate() {
        let text = f.text.as_str();
        let fmask = d.fmask;
        let tmask: u32 = match f.ftype {
            FieldType::Date => {
                // Under limited circumstances, accept a date.
                if i == 0 && nf >= 2 && (fields[nf - 1].ftype == FieldType::Date || fields[1].ftype == FieldType::Time) {
                    d.decode_date(text, fmask)?
                } else if text.as_bytes()[0].is_ascii_digit() {
                    if fmask & DTK_TIME_M == DTK_TIME_M {
                        return Err(Dterr::BadFormat);
                    }
                    let dash = text.find('-').ok_or(Dterr::BadFormat)?;
                    d.tz = decode_timezone(&text[dash..])?;
                    d.have_tz = true;
                    let (t, _) = d.decode_number_field(&text[..dash], fmask | DTK_DATE_M)?;
                    t | m(TZ)
                } else {
                    let z = lookup_zone_name(text).ok_or_else(|| Dterr::BadTimezone(text.to_string()))?;
                    d.named_tz = Some(z);
                    d.have_tz = true;
                    m(TZ)
                }
            }
            FieldType::Time => {
                if let Some(p) = ptype {
                    if p != Prefix::IsoTime {
                        return Err(Dterr::BadFormat);
                    }
                    ptype = None;
                }
                d.decode_time(text)?
            }
            FieldType::Tz => {
                d.tz = decode_timezone(text)?;
                d.have_tz = true;
                m(TZ)
            }
            FieldType::Number => {
                if let Some(p) = ptype.take() {
                    d.decode_labelled_number(p, text, fmask)?
                } else {
                    let flen = text.len();
                    if let Some(dot) = text.find('.') {
                        if i == 0 && nf >= 2 && fields[nf - 1].ftype == FieldType::Date {
                            d.decode_date(text, fmask)?
                        } else if dot > 2 {
                            d.decode_number_field(text, fmask | DTK_DATE_M)?.0
                        } else {
                            return Err(Dterr::BadFormat);
                        }
                    } else if flen > 4 {
                        d.decode_number_field(text, fmask | DTK_DATE_M)?.0
                    } else {
                        d.decode_number(text, false, fmask | DTK_DATE_M)?
                    }
                }
            }
            FieldType::Str | FieldType::Special => {
                let r = d.decode_text(text, &mut ptype, true)?;
                match r {
                    None => continue,
                    Some(t) => t,
                }
            }
        };
        if tmask & fmask != 0 {
            return Err(Dterr::BadFormat);
        }
        d.fmask |= tmask;
    }
    if ptype.is_some() {
        return Err(Dterr::BadFormat);
    }
    d.validate_date()?;
    d.apply_meridian()?;
    if time_overflows(&d.tm) {
        return Err(Dterr::FieldOverflow);
    }
    if d.fmask & DTK_TIME_M != DTK_TIME_M {
        return Err(Dterr::BadFormat);
    }
    let has_date = d.fmask & DTK_DATE_M == DTK_DATE_M;
    if let Some(z) = d.named_tz.take() {
        if d.fmask & m(DTZMOD) != 0 {
            return Err(Dterr::BadFormat);
        }
        match z.fixed_offset() {
            Some(off) => d.tz = off,
            None => {
                if !has_date {
                    return Err(Dterr::BadFormat);
                }
                d.tz = z.offset_for_local(Decoder::local_ts(&d.tm));
            }
        }
    }
    if let Some((z, abbrev)) = d.abbrev_tz.take() {
        if d.fmask & m(DTZMOD) != 0 {
            return Err(Dterr::BadFormat);
        }
        let tm = d.date_for_zone(has_date)?;
        d.tz = z.offset_for_abbrev(Decoder::local_ts(&tm), &abbrev.to_ascii_uppercase());
    }
    if d.fmask & m(TZ) == 0 {
        if d.fmask & m(DTZMOD) != 0 {
            return Err(Dterr::BadFormat);
        }
        let tm = d.date_for_zone(has_date)?;
        d.tz = settings.time_zone.offset_for_local(Decoder::local_ts(&tm));
        d.have_tz = true;
    }
    Ok(Decoded { kind: DateTimeKind::Value, tm: d.tm, tz: Some(d.tz) })
}

impl Decoder<'_> {
    /// A time's zone is resolved on the given date, or today's if none was given.
    fn date_for_zone(&self, has_date: bool) -> DtResult<Tm> {
        let mut tm = if self.fmask & DTK_DATE_M == 0 {
            current_local(self.settings, self.now).0
        } else if has_date {
            self.tm.clone()
        } else {
            return Err(Dterr::BadFormat);
        };
        tm.hour = self.tm.hour;
        tm.min = self.tm.min;
        tm.sec = self.tm.sec;
        Ok(tm)
    }
}

/// Interval fields accumulated during decoding (pg_itm_in).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ItmIn {
    pub usec: i64,
    pub mday: i32,
    pub mon: i32,
    pub year: i32,
}

impl ItmIn {
    fn add_micros(&mut self, val: i64, fval: f64, scale: i64) -> bool {
        match val.checked_mul(scale).and_then(|p| self.usec.checked_add(p)) {
            Some(v) => self.usec = v,
            None => return false,
        }
        self.add_fract_micros(fval, scale)
    }

    fn add_fract_micros(&mut self, frac: f64, scale: i64) -> bool {
        if frac == 0.0 {
            return true;
        }
        let f = frac * scale as f64;
        let mut usec = f as i64;
        let rem = f - usec as f64;
        if rem > 0.5 {
            usec += 1;
        } else if rem < -0.5 {
            usec -= 1;
        }
        match self.usec.checked_add(usec) {
            Some(v) => {
                self.usec = v;
                true
            }
            None => false,
        }
    }

    fn add_fract_days(&mut self, frac: f64, scale: i32) -> bool {
        if frac == 0.0 {
            return true;
        }
        let f = frac * scale as f64;
        let extra = f as i32;
        match self.mday.checked_add(extra) {
            Some(v) => self.mday = v,
            None => return false,
        }
        self.add_fract_micros(f - extra as f64, USECS_PER_DAY)
    }

    fn add_fract_years(&mut self, frac: f64, scale: i32) -> bool {
        let extra = (frac * scale as f64 * MONTHS_PER_YEAR as f64).round_ties_even() as i32;
        match self.mon.checked_add(extra) {
            Some(v) => {
                self.mon = v;
                true
            }
            None => false,
        }
    }

    fn add_days(&mut self, val: i64, scale: i32) -> bool {
        if val < i32::MIN as i64 || val > i32::MAX as i64 {
            return false;
        }
        match (val as i32).checked_mul(scale).and_then(|d| self.mday.checked_add(d)) {
            Some(v) => {
                self.mday = v;
                true
            }
            None => false,
        }
    }

    fn add_months(&mut self, val: i64) -> bool {
        if val < i32::MIN as i64 || val > i32::MAX as i64 {
            return false;
        }
        match self.mon.checked_add(val as i32) {
            Some(v) => {
                self.mon = v;
                true
            }
            None => false,
        }
    }

    fn add_years(&mut self, val: i64, scale: i32) -> bool {
        if val < i32::MIN as i64 || val > i32::MAX as i64 {
            return false;
        }
        match (val as i32).checked_mul(scale).and_then(|y| self.year.checked_add(y)) {
            Some(v) => {
                self.year = v;
                true
            }
            None => false,
        }
    }
}

/// DecodeTimeForInterval: "h:m", "h:m:s.f", "m:s.f" to microseconds.
fn decode_time_for_interval(s: &str, range: u32) -> DtResult<i64> {
    let (hour, rest, overflow) = strtol(s).ok_or(Dterr::BadFormat)?;
    if overflow {
        return Err(Dterr::FieldOverflow);
    }
    let Some(rest) = rest.strip_prefix(':') else { return Err(Dterr::BadFormat) };
    let (min, rest) = strtoint(rest)?.unwrap_or((0, rest));
    let (mut h, mut mi, mut sec, mut fsec): (i64, i32, i32, i32) = (hour, min, 0, 0);
    if rest.is_empty() {
        if range == (IM_MINUTE | IM_SECOND) {
            if h > i32::MAX as i64 || h < i32::MIN as i64 {
                return Err(Dterr::FieldOverflow);
            }
            sec = mi;
            mi = h as i32;
            h = 0;
        }
    } else if rest.starts_with('.') {
        fsec = parse_fractional_second(rest)?;
        if h > i32::MAX as i64 || h < i32::MIN as i64 {
            return Err(Dterr::FieldOverflow);
        }
        sec = mi;
        mi = h as i32;
        h = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s2, r) = strtoint(r)?.unwrap_or((0, r));
        sec = s2;
        if r.starts_with('.') {
            fsec = parse_fractional_second(r)?;
        } else if !r.is_empty() {
            return Err(Dterr::BadFormat);
        }
    } else {
        return Err(Dterr::BadFormat);
    }
    if h < 0 || !(0..60).contains(&mi) || !(0..=60).contains(&sec) || !(0..=1_000_000).contains(&fsec) {
        return Err(Dterr::FieldOverflow);
    }
    let mut usec = fsec as i64;
    for (v, scale) in [(h, USECS_PER_HOUR), (mi as i64, USECS_PER_MINUTE), (sec as i64, USECS_PER_SEC)] {
        usec = v.checked_mul(scale).and_then(|p| usec.checked_add(p)).ok_or(Dterr::FieldOverflow)?;
    }
    Ok(usec)
}

/// DecodeInterval: postgres-style interval input ("1 year 2 mons", "3 4:05:06",
/// "1-2", "@ 1 hour ago"). `range` is the typmod's field mask, which decides
/// what a bare trailing number means.
pub(crate) fn decode_interval(fields: &[Field], range: u32, style: IntervalStyle) -> DtResult<ItmIn> {
    let mut itm = ItmIn::default();
    let nf = fields.len();
    let mut is_before = false;
    let mut parsing_unit_val = false;
    let mut fmask: u32 = 0;
    // None = no unit seen yet (IGNORE_DTF).
    let mut unit: Option<DateTimeUnit> = None;

    // SQL standard: a leading '-' applies to every field when no other field has a sign.
    let force_negative = style == IntervalStyle::SqlStandard
        && nf > 0
        && fields[0].text.starts_with('-')
        && !fields[1..].iter().any(|f| f.text.starts_with('-') || f.text.starts_with('+'));

    for i in (0..nf).rev() {
        let f = &fields[i];
        let text = f.text.as_str();
        // A time field, or a signed one ("-1 +02:03" reads "+02:03" as a
        // time), replaces the time part and makes a bare number before it days.
        let time_part = match f.ftype {
            FieldType::Time => Some(decode_time_for_interval(text, range)?),
            FieldType::Tz if text[1..].contains(':') => decode_time_for_interval(&text[1..], range)
                .ok()
                .map(|usec| if text.starts_with('-') { -usec } else { usec }),
            _ => None,
        };
        let tmask = if let Some(mut usec) = time_part {
            if force_negative && usec > 0 {
                usec = -usec;
            }
            itm.usec = usec;
            unit = Some(DateTimeUnit::Day);
            parsing_unit_val = false;
            DTK_TIME_M
        } else {
            match f.ftype {
                // A number, possibly signed or "years-months" ("1-2").
                // (Time fields were all taken as the time part above.)
                FieldType::Tz | FieldType::Date | FieldType::Number | FieldType::Time => {
                    let u = match unit {
                        Some(u) => u,
                        None => {
                            // The typmod decides what the rightmost bare number is.
                            if range == IM_YEAR {
                                DateTimeUnit::Year
                            } else if range == IM_MONTH || range == IM_YEAR | IM_MONTH {
                                DateTimeUnit::Month
                            } else if range == IM_DAY {
                                DateTimeUnit::Day
                            } else if range == IM_HOUR || range == IM_DAY | IM_HOUR {
                                DateTimeUnit::Hour
                            } else if range == IM_MINUTE || range == IM_HOUR | IM_MINUTE || range == IM_DAY | IM_HOUR | IM_MINUTE {
                                DateTimeUnit::Minute
                            } else {
                                DateTimeUnit::Second
                            }
                        }
                    };
                    // As C's strtol: no digits reads as 0 and leaves the text (".5 hours").
                    let (mut val, rest, overflow) = strtol(text).unwrap_or((0, text, false));
                    if overflow {
                        return Err(Dterr::FieldOverflow);
                    }
                    let mut fval;
                    let mut u = u;
                    if let Some(r) = rest.strip_prefix('-') {
                        // SQL "years-months" syntax.
                        let (v2, r2) = strtoint(r)?.unwrap_or((0, r));
                        if !(0..12).contains(&v2) {
                            return Err(Dterr::FieldOverflow);
                        }
                        if !r2.is_empty() {
                            return Err(Dterr::BadFormat);
                        }
                        u = DateTimeUnit::Month;
                        let v2 = if text.starts_with('-') { -v2 } else { v2 };
                        val = val.checked_mul(12).and_then(|v| v.checked_add(v2 as i64)).ok_or(Dterr::FieldOverflow)?;
                        fval = 0.0;
                    } else if rest.starts_with('.') {
                        fval = parse_fraction(rest)?;
                        if text.starts_with('-') {
                            fval = -fval;
                        }
                    } else if rest.is_empty() {
                        fval = 0.0;
                    } else {
                        return Err(Dterr::BadFormat);
                    }
                    if force_negative {
                        if val > 0 {
                            val = -val;
                        }
                        if fval > 0.0 {
                            fval = -fval;
                        }
                    }
                    let ok;
                    let t;
                    match u {
                        DateTimeUnit::Microsecond => {
                            ok = itm.add_micros(val, fval, 1);
                            t = m(MICROSECOND);
                        }
                        DateTimeUnit::Millisecond => {
                            ok = itm.add_micros(val, fval, 1000);
                            t = m(MILLISECOND);
                        }
                        DateTimeUnit::Second => {
                            ok = itm.add_micros(val, fval, USECS_PER_SEC);
                            t = if fval == 0.0 { m(SECOND) } else { DTK_ALL_SECS_M };
                        }
                        DateTimeUnit::Minute => {
                            ok = itm.add_micros(val, fval, USECS_PER_MINUTE);
                            t = m(MINUTE);
                        }
                        DateTimeUnit::Hour => {
                            ok = itm.add_micros(val, fval, USECS_PER_HOUR);
                            t = m(HOUR);
                            unit = Some(DateTimeUnit::Day);
                        }
                        DateTimeUnit::Day => {
                            ok = itm.add_days(val, 1) && itm.add_fract_micros(fval, USECS_PER_DAY);
                            t = m(DAY);
                        }
                        DateTimeUnit::Week => {
                            ok = itm.add_days(val, 7) && itm.add_fract_days(fval, 7);
                            t = m(WEEK);
                        }
                        DateTimeUnit::Month => {
                            ok = itm.add_months(val) && itm.add_fract_days(fval, DAYS_PER_MONTH);
                            t = m(MONTH);
                        }
                        DateTimeUnit::Year => {
                            ok = itm.add_years(val, 1) && itm.add_fract_years(fval, 1);
                            t = m(YEAR);
                        }
                        DateTimeUnit::Decade => {
                            ok = itm.add_years(val, 10) && itm.add_fract_years(fval, 10);
                            t = m(DECADE);
                        }
                        DateTimeUnit::Century => {
                            ok = itm.add_years(val, 100) && itm.add_fract_years(fval, 100);
                            t = m(CENTURY);
                        }
                        DateTimeUnit::Millennium => {
                            ok = itm.add_years(val, 1000) && itm.add_fract_years(fval, 1000);
                            t = m(MILLENNIUM);
                        }
                        _ => return Err(Dterr::BadFormat),
                    }
                    if !ok {
                        return Err(Dterr::FieldOverflow);
                    }
                    parsing_unit_val = false;
                    t
                }
                FieldType::Str | FieldType::Special => {
                    if parsing_unit_val {
                        return Err(Dterr::BadFormat);
                    }
                    match lookup_delta(text) {
                        Some(DeltaWord::Ignore) => continue,
                        Some(DeltaWord::Units(u)) => {
                            unit = Some(u);
                            parsing_unit_val = true;
                            0
                        }
                        Some(DeltaWord::Ago) => {
                            is_before = true;
                            0
                        }
                        None => match lookup_keyword(text) {
                            Some(Keyword::Ignore) => continue,
                            Some(Keyword::Units(u)) => {
                                unit = Some(u);
                                parsing_unit_val = true;
                                0
                            }
                            _ => return Err(Dterr::BadFormat),
                        },
                    }
                }
            }
        };
        if tmask & fmask != 0 {
            return Err(Dterr::BadFormat);
        }
        fmask |= tmask;
    }
    if fmask == 0 || parsing_unit_val {
        return Err(Dterr::BadFormat);
    }
    if is_before {
        if itm.usec == i64::MIN || itm.mday == i32::MIN || itm.mon == i32::MIN || itm.year == i32::MIN {
            return Err(Dterr::FieldOverflow);
        }
        itm.usec = -itm.usec;
        itm.mday = -itm.mday;
        itm.mon = -itm.mon;
        itm.year = -itm.year;
    }
    Ok(itm)
}

/// ParseISO8601Number: a decimal (strtod syntax) split into integer and fraction.
fn parse_iso8601_number(s: &str) -> DtResult<(i64, f64, &str)> {
    let first = s.as_bytes().first().copied().unwrap_or(0);
    if !(first.is_ascii_digit() || first == b'-' || first == b'.') {
        return Err(Dterr::BadFormat);
    }
    let (val, rest) = strtod(s).ok_or(Dterr::BadFormat)?;
    if val.is_nan() || !(-1.0e15..=1.0e15).contains(&val) {
        return Err(Dterr::FieldOverflow);
    }
    let ipart = if val >= 0.0 { val.floor() as i64 } else { -((-val).floor() as i64) };
    Ok((ipart, val - ipart as f64, rest))
}

fn iso8601_integer_width(s: &str) -> usize {
    let s = s.strip_prefix('-').unwrap_or(s);
    s.bytes().take_while(|b| b.is_ascii_digit()).count()
}

/// DecodeISO8601Interval: "P1Y2M3DT4H5M6S", "P0001-02-03T04:05:06", "PT1.5H".
pub(crate) fn decode_iso8601_interval(s: &str) -> DtResult<ItmIn> {
    let mut itm = ItmIn::default();
    if s.len() < 2 || !s.starts_with('P') {
        return Err(Dterr::BadFormat);
    }
    let ov = |ok: bool| if ok { Ok(()) } else { Err(Dterr::FieldOverflow) };
    let mut str = &s[1..];
    let mut datepart = true;
    let mut havefield = false;
    while !str.is_empty() {
        if let Some(r) = str.strip_prefix('T') {
            datepart = false;
            havefield = false;
            str = r;
            continue;
        }
        let fieldstart = str;
        let (val, fval, rest) = parse_iso8601_number(str)?;
        let unit = rest.as_bytes().first().copied().unwrap_or(0);
        if !unit.is_ascii() {
            return Err(Dterr::BadFormat);
        }
        str = if rest.is_empty() { rest } else { &rest[1..] };
        if datepart {
            match unit {
                b'Y' => ov(itm.add_years(val, 1) && itm.add_fract_years(fval, 1))?,
                b'M' => ov(itm.add_months(val) && itm.add_fract_days(fval, DAYS_PER_MONTH))?,
                b'W' => ov(itm.add_days(val, 7) && itm.add_fract_days(fval, 7))?,
                b'D' => ov(itm.add_days(val, 1) && itm.add_fract_micros(fval, USECS_PER_DAY))?,
                b'T' | 0 | b'-' => {
                    if unit != b'-' && iso8601_integer_width(fieldstart) == 8 && !havefield {
                        ov(itm.add_years(val / 10000, 1)
                            && itm.add_months((val / 100) % 100)
                            && itm.add_days(val % 100, 1)
                            && itm.add_fract_micros(fval, USECS_PER_DAY))?;
                        if unit == 0 {
                            return Ok(itm);
                        }
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    // Extended alternative format: Y-M-D.
                    if havefield {
                        return Err(Dterr::BadFormat);
                    }
                    ov(itm.add_years(val, 1) && itm.add_fract_years(fval, 1))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    if unit == b'T' {
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    let (val, fval, rest) = parse_iso8601_number(str)?;
                    str = rest;
                    ov(itm.add_months(val) && itm.add_fract_days(fval, DAYS_PER_MONTH))?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = str.strip_prefix('T') {
                        str = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    let Some(r) = str.strip_prefix('-') else { return Err(Dterr::BadFormat) };
                    let (val, fval, rest) = parse_iso8601_number(r)?;
                    str = rest;
                    ov(itm.add_days(val, 1) && itm.add_fract_micros(fval, USECS_PER_DAY))?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = str.strip_prefix('T') {
                        str = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    return Err(Dterr::BadFormat);
                }
                _ => return Err(Dterr::BadFormat),
            }
        } else {
            match unit {
                b'H' => ov(itm.add_micros(val, fval, USECS_PER_HOUR))?,
                b'M' => ov(itm.add_micros(val, fval, USECS_PER_MINUTE))?,
                b'S' => ov(itm.add_micros(val, fval, USECS_PER_SEC))?,
                0 | b':' => {
                    if unit == 0 && iso8601_integer_width(fieldstart) == 6 && !havefield {
                        ov(itm.add_micros(val / 10000, 0.0, USECS_PER_HOUR)
                            && itm.add_micros((val / 100) % 100, 0.0, USECS_PER_MINUTE)
                            && itm.add_micros(val % 100, 0.0, USECS_PER_SEC)
                            && itm.add_fract_micros(fval, 1))?;
                        return Ok(itm);
                    }
                    if havefield {
                        return Err(Dterr::BadFormat);
                    }
                    ov(itm.add_micros(val, fval, USECS_PER_HOUR))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    let (val, fval, rest) = parse_iso8601_number(str)?;
                    str = rest;
                    ov(itm.add_micros(val, fval, USECS_PER_MINUTE))?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    let Some(r) = str.strip_prefix(':') else { return Err(Dterr::BadFormat) };
                    let (val, fval, rest) = parse_iso8601_number(r)?;
                    str = rest;
                    ov(itm.add_micros(val, fval, USECS_PER_SEC))?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    return Err(Dterr::BadFormat);
                }
                _ => return Err(Dterr::BadFormat),
            }
        }
        havefield = true;
    }
    Ok(itm)
}
