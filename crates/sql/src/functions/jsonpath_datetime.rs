//! Date/time items of the SQL/JSON path language (`.datetime()`), their
//! comparison across types (jsonpath_exec.c's compareDatetime, with its
//! "without time zone usage" rule for the non-_tz functions), their JSON
//! text, and the byte offsets `.keyvalue()` derives its ids from.

use std::cmp::Ordering;

use tusk_types::datetime as dt;
use tusk_types::jsonb::Jsonb;
use tusk_types::oid::{self, Oid};
use tusk_types::{Datum, PgError, PgResult};

use crate::settings::Settings;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// A date/time value and, for the zoned types, the offset it was read
/// with (seconds west), which its JSON text keeps.
#[derive(Clone, Debug)]
pub struct DateTimeVal {
    pub value: Datum,
    pub typ: Oid,
    pub tz: i32,
}

fn invalid_argument(msg: impl Into<String>) -> PgError {
    PgError::new("22031", msg.into())
}

impl DateTimeVal {
    pub fn type_name(&self) -> &'static str {
        match self.typ {
            oid::DATE => "date",
            oid::TIME => "time without time zone",
            oid::TIMETZ => "time with time zone",
            oid::TIMESTAMP => "timestamp without time zone",
            _ => "timestamp with time zone",
        }
    }

    /// JsonEncodeDateTime's ISO 8601 text.
    pub fn to_json_text(&self) -> String {
        let iso = dt::DateTimeSettings::default();
        let offset = |tz: i32| dt::format_tz_offset(tz, true);
        match (&self.value, self.typ) {
            (Datum::Date(d), _) => dt::date_out(*d, &iso),
            (Datum::Time(t), _) => dt::time_out(*t),
            (Datum::TimeTz(t, z), _) => format!("{}{}", dt::time_out(*t), offset(*z)),
            (Datum::Timestamp(ts), _) => dt::timestamp_out(*ts, &iso).unwrap_or_default().replacen(' ', "T", 1),
            (Datum::TimestampTz(ts), _) => {
                let local = ts - self.tz as i64 * 1_000_000;
                format!("{}{}", dt::timestamp_out(local, &iso).unwrap_or_default().replacen(' ', "T", 1), offset(self.tz))
            }
            _ => String::new(),
        }
    }
}

/// `.datetime()` on an item: a string in one of the ISO 8601 forms
/// PostgreSQL recognizes without a template.
pub fn datetime_method(json: Option<&Jsonb>, _dt: Option<&DateTimeVal>, template: Option<&str>, _use_tz: bool, settings: &Settings) -> PgResult<DateTimeVal> {
    let Some(Jsonb::String(s)) = json else {
        return Err(invalid_argument("jsonpath item method .datetime() can only be applied to a string"));
    };
    if let Some(t) = template {
        return parse_with_template(s, t);
    }
    parse_iso(s, settings).ok_or_else(|| {
        invalid_argument(format!("datetime format is not recognized: \"{s}\""))
            .with_hint("Use a datetime template argument to specify the input data format.")
    })
}

fn parse_iso(s: &str, settings: &Settings) -> Option<DateTimeVal> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"^(?:(\d{4,})-(\d{1,2})-(\d{1,2}))?(?:(^|[ T])(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?(?: ?([+-])(\d{1,2})(?::(\d{1,2}))?)?)?$",
        )
        .unwrap()
    });
    let c = re.captures(s)?;
    let num = |i: usize| c.get(i).map(|m| m.as_str().parse::<i64>().unwrap_or(0));
    let date = match (num(1), num(2), num(3)) {
        (Some(y), Some(m), Some(d)) => {
            if !(1..=12).contains(&m) || d < 1 || d > dt::days_in_month(y as i32, m as i32) as i64 {
                return None;
            }
            Some(dt::date2j(y as i32, m as i32, d as i32) - dt::date2j(2000, 1, 1))
        }
        _ => None,
    };
    let has_time = c.get(5).is_some();
    if date.is_none() && !has_time {
        return None;
    }
    if date.is_some() && has_time && c.get(4).map(|m| m.as_str()) == Some("") {
        return None;
    }
    if date.is_none() && c.get(4).map(|m| m.as_str()) != Some("") {
        return None;
    }
    let time = if has_time {
        let (h, mi, sec) = (num(5)?, num(6)?, num(7)?);
        if h > 23 || mi > 59 || sec > 59 {
            return None;
        }
        let frac = c.get(8).map_or(0, |m| {
            let t = m.as_str();
            t.parse::<i64>().unwrap_or(0) * 10i64.pow(6 - t.len() as u32)
        });
        Some(((h * 60 + mi) * 60 + sec) * 1_000_000 + frac)
    } else {
        None
    };
    let tz = c.get(9).map(|sign| {
        let off = (num(10).unwrap_or(0) * 60 + num(11).unwrap_or(0)) * 60;
        if sign.as_str() == "+" {
            -off as i32
        } else {
            off as i32
        }
    });
    let _ = settings;
    Some(match (date, time, tz) {
        (Some(d), None, _) => DateTimeVal { value: Datum::Date(d), typ: oid::DATE, tz: 0 },
        (None, Some(t), None) => DateTimeVal { value: Datum::Time(t), typ: oid::TIME, tz: 0 },
        (None, Some(t), Some(z)) => DateTimeVal { value: Datum::TimeTz(t, z), typ: oid::TIMETZ, tz: z },
        (Some(d), Some(t), None) => DateTimeVal { value: Datum::Timestamp(d as i64 * USECS_PER_DAY + t), typ: oid::TIMESTAMP, tz: 0 },
        (Some(d), Some(t), Some(z)) => {
            DateTimeVal { value: Datum::TimestampTz(d as i64 * USECS_PER_DAY + t + z as i64 * 1_000_000), typ: oid::TIMESTAMPTZ, tz: z }
        }
        _ => return None,
    })
}

/// `.datetime(template)`: to_timestamp's reading of the text, typed by
/// the fields the template names (date, time, zone), as PostgreSQL's
/// parse_datetime does.
fn parse_with_template(s: &str, template: &str) -> PgResult<DateTimeVal> {
    let upper = template.to_ascii_uppercase();
    // Quoted literal text names no fields.
    let mut fields = String::new();
    let mut quoted = false;
    for c in upper.chars() {
        if c == '"' {
            quoted = !quoted;
        } else if !quoted {
            fields.push(c);
        }
    }
    let has = |keys: &[&str]| keys.iter().any(|k| fields.contains(k));
    let has_tz = has(&["TZH", "TZM", "TZ", "OF"]);
    let has_date = has(&["Y", "MM", "MON", "DD", "DDD", "J", "CC", "W", "Q", "RM", "D"]);
    let has_time = has(&["HH", "MI", "SS", "MS", "US", "FF", "AM", "PM", "A.M.", "P.M."]);
    let mut utc = dt::DateTimeSettings::default();
    utc.time_zone = dt::TimeZone::utc();
    let instant = dt::to_timestamp(s, template, &utc)?;
    let tz = if has_tz {
        // The offset: the same text read without the zone fields.
        let without: String = {
            let mut t = template.to_string();
            for k in ["TZH:TZM", "TZH", "TZM", "tzh:tzm", "tzh", "tzm"] {
                t = t.replace(k, "");
            }
            t
        };
        let local = dt::to_timestamp(s, without.trim_end(), &utc).unwrap_or(instant);
        ((instant - local) / 1_000_000) as i32
    } else {
        0
    };
    let local = instant - tz as i64 * 1_000_000;
    let day = local.div_euclid(USECS_PER_DAY);
    let time = local.rem_euclid(USECS_PER_DAY);
    Ok(match (has_date, has_time || !has_date, has_tz) {
        (true, false, _) => DateTimeVal { value: Datum::Date(day as i32), typ: oid::DATE, tz: 0 },
        (false, _, false) => DateTimeVal { value: Datum::Time(time), typ: oid::TIME, tz: 0 },
        (false, _, true) => DateTimeVal { value: Datum::TimeTz(time, tz), typ: oid::TIMETZ, tz },
        (true, true, false) => DateTimeVal { value: Datum::Timestamp(local), typ: oid::TIMESTAMP, tz: 0 },
        (true, true, true) => DateTimeVal { value: Datum::TimestampTz(instant), typ: oid::TIMESTAMPTZ, tz },
    })
}

fn short_name(t: Oid) -> &'static str {
    match t {
        oid::DATE => "date",
        oid::TIME => "time",
        oid::TIMETZ => "timetz",
        oid::TIMESTAMP => "timestamp",
        _ => "timestamptz",
    }
}

fn tz_needed(use_tz: bool, from: Oid, to: Oid) -> PgResult<()> {
    if use_tz {
        Ok(())
    } else {
        Err(PgError::new(
            tusk_types::sqlstate::FEATURE_NOT_SUPPORTED,
            format!("cannot convert value from {} to {} without time zone usage", short_name(from), short_name(to)),
        )
        .with_hint("Use *_tz() function for time zone support."))
    }
}

/// A local timestamp (microseconds) read in the session's time zone.
fn local_to_tz(local: i64, settings: &Settings) -> i64 {
    local + settings.datetime.time_zone.offset_for_local(local) as i64 * 1_000_000
}

/// The instant of a value as a timestamptz-comparable number, converting
/// what needs the session zone only when allowed.
fn as_timestamptz(v: &DateTimeVal, other: Oid, use_tz: bool, settings: &Settings) -> PgResult<i64> {
    match v.value {
        Datum::TimestampTz(ts) => Ok(ts),
        Datum::Timestamp(ts) => {
            tz_needed(use_tz, v.typ, other)?;
            Ok(local_to_tz(ts, settings))
        }
        Datum::Date(d) => {
            tz_needed(use_tz, v.typ, other)?;
            Ok(local_to_tz(d as i64 * USECS_PER_DAY, settings))
        }
        _ => Ok(0),
    }
}

fn timetz_key(t: i64, z: i32) -> (i64, i32) {
    (t + z as i64 * 1_000_000, z)
}

/// compareDatetime: None when the types cannot be compared.
pub fn compare(a: &DateTimeVal, b: &DateTimeVal, use_tz: bool, settings: &Settings) -> PgResult<Option<Ordering>> {
    use Datum::*;
    Ok(Some(match (&a.value, &b.value) {
        (Date(x), Date(y)) => x.cmp(y),
        (Date(x), Timestamp(y)) => (*x as i64 * USECS_PER_DAY).cmp(y),
        (Timestamp(x), Date(y)) => x.cmp(&(*y as i64 * USECS_PER_DAY)),
        (Timestamp(x), Timestamp(y)) => x.cmp(y),
        (Date(_) | Timestamp(_) | TimestampTz(_), Date(_) | Timestamp(_) | TimestampTz(_)) => {
            let x = as_timestamptz(a, oid::TIMESTAMPTZ, use_tz, settings)?;
            let y = as_timestamptz(b, oid::TIMESTAMPTZ, use_tz, settings)?;
            x.cmp(&y)
        }
        (Time(x), Time(y)) => x.cmp(y),
        (TimeTz(x, zx), TimeTz(y, zy)) => timetz_key(*x, *zx).cmp(&timetz_key(*y, *zy)),
        (Time(x), TimeTz(y, zy)) => {
            tz_needed(use_tz, oid::TIME, oid::TIMETZ)?;
            let z = session_zone_now(settings);
            timetz_key(*x, z).cmp(&timetz_key(*y, *zy))
        }
        (TimeTz(x, zx), Time(y)) => {
            tz_needed(use_tz, oid::TIME, oid::TIMETZ)?;
            let z = session_zone_now(settings);
            timetz_key(*x, *zx).cmp(&timetz_key(*y, z))
        }
        _ => return Ok(None),
    }))
}

fn session_zone_now(settings: &Settings) -> i32 {
    settings.datetime.time_zone.offset_for_local(crate::session::now_micros())
}

// ---------------------------------------------------------------- keyvalue ids

fn align4(n: u64) -> u64 {
    (n + 3) & !3
}

/// The size of a numeric datum as jsonb stores it (a 4-byte varlena
/// header, the short or long numeric header, base-10000 digits).
fn numeric_size(n: &tusk_types::numeric::Numeric) -> u64 {
    let text = n.to_string();
    let t = text.trim_start_matches('-');
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let int = int.trim_start_matches('0');
    let dscale = frac.len();
    // Group digits in fours around the decimal point.
    let int_groups = int.len().div_ceil(4);
    let frac_groups = frac.len().div_ceil(4);
    let mut digits: Vec<u32> = Vec::new();
    let pad = int_groups * 4 - int.len();
    let padded_int = format!("{}{}", "0".repeat(pad), int);
    for c in padded_int.as_bytes().chunks(4) {
        digits.push(std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0));
    }
    let padded_frac = format!("{}{}", frac, "0".repeat(frac_groups * 4 - frac.len()));
    for c in padded_frac.as_bytes().chunks(4) {
        digits.push(std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0));
    }
    let mut weight = int_groups as i64 - 1;
    let mut start = 0;
    while start < digits.len() && digits[start] == 0 {
        start += 1;
        weight -= 1;
    }
    let mut end = digits.len();
    while end > start && digits[end - 1] == 0 {
        end -= 1;
    }
    let ndigits = (end - start) as u64;
    if ndigits == 0 {
        weight = 0;
    }
    let short = dscale <= 0x3f && (-64..=63).contains(&weight);
    (if short { 6 } else { 8 }) + 2 * ndigits
}

/// Walks `j` laid out from `off`: Ok(end offset), or Err(offset of `target`).
fn layout(j: &Jsonb, off: u64, target: *const Jsonb) -> Result<u64, u64> {
    if std::ptr::eq(j, target) {
        return Err(off);
    }
    let value = |v: &Jsonb, pos: u64| -> Result<u64, u64> {
        match v {
            Jsonb::String(s) => Ok(pos + s.len() as u64),
            Jsonb::Number(n) => Ok(align4(pos) + numeric_size(n)),
            Jsonb::Bool(_) | Jsonb::Null => Ok(pos),
            _ => layout(v, align4(pos), target),
        }
    };
    match j {
        Jsonb::Array(items) => {
            let mut pos = off + 4 + 4 * items.len() as u64;
            for v in items {
                pos = value(v, pos)?;
            }
            Ok(pos)
        }
        Jsonb::Object(members) => {
            let mut pos = off + 4 + 8 * members.len() as u64;
            for (k, _) in members {
                pos += k.len() as u64;
            }
            for (_, v) in members {
                pos = value(v, pos)?;
            }
            Ok(pos)
        }
        _ => Ok(off),
    }
}

/// The byte offset of container `target` inside document `doc` in
/// PostgreSQL's binary jsonb form (what `.keyvalue()` ids are made of).
pub fn container_offset(doc: &Jsonb, target: &Jsonb) -> Option<i64> {
    match layout(doc, 0, target) {
        Err(off) => Some(off as i64),
        Ok(_) => None,
    }
}
