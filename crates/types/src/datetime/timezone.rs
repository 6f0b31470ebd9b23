//! Time zones: the session's TimeZone setting (an IANA zone from chrono-tz,
//! or a fixed POSIX-style offset) and the abbreviations date/time input
//! accepts (PostgreSQL's "Default" timezone_abbreviations set).
//!
//! Offsets follow PostgreSQL's internal convention: seconds *west* of UTC
//! (New York in winter is +18000). Only ISO-style display flips the sign.

use std::collections::HashMap;
use std::sync::OnceLock;

use chrono::{Offset, TimeZone as _};
use chrono_tz::{OffsetName, Tz};

use crate::error::PgResult;
use crate::pg_err;

use super::calendar::{date2j, is_leap, j2date, j2day, SECS_PER_DAY, UNIX_EPOCH_JDATE, USECS_PER_SEC};
use super::calendar::POSTGRES_EPOCH_JDATE;

/// A session time zone: what the user set, and the rule it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeZone {
    name: String,
    kind: ZoneKind,
}

#[derive(Clone, Debug, PartialEq)]
enum ZoneKind {
    Iana(Tz),
    /// A constant offset (seconds west) with the abbreviation output shows.
    Fixed { offset: i32, abbrev: String },
    /// A dynamic abbreviation ("MSK"): the offset it meant in its zone at the time in question.
    Abbrev { tz: Tz, abbrev: String },
}

/// Seconds from the Unix epoch to PostgreSQL's 2000-01-01.
const PG_EPOCH_UNIX_SECS: i64 = (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64 * SECS_PER_DAY;

impl TimeZone {
    pub fn utc() -> TimeZone {
        TimeZone { name: "UTC".to_string(), kind: ZoneKind::Iana(Tz::UTC) }
    }

    /// A fixed offset given in seconds west of UTC, named as PostgreSQL's
    /// pg_tzset_offset names it ("<+05>-05" for five hours east).
    pub fn fixed(offset_west: i32) -> TimeZone {
        let abs = offset_west.unsigned_abs();
        let digits = if abs.is_multiple_of(3600) {
            format!("{:02}", abs / 3600)
        } else if abs.is_multiple_of(60) {
            format!("{:02}:{:02}", abs / 3600, abs / 60 % 60)
        } else {
            format!("{:02}:{:02}:{:02}", abs / 3600, abs / 60 % 60, abs % 60)
        };
        let (name, abbrev) = if offset_west > 0 {
            (format!("<-{digits}>+{digits}"), format!("-{digits}"))
        } else {
            (format!("<+{digits}>-{digits}"), format!("+{digits}"))
        };
        TimeZone { name, kind: ZoneKind::Fixed { offset: offset_west, abbrev } }
    }

    /// The zone's name as SHOW TimeZone prints it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The offset (seconds west) in effect at a UTC timestamp (microseconds since 2000-01-01).
    pub fn offset_at_utc(&self, ts: i64) -> i32 {
        match &self.kind {
            ZoneKind::Fixed { offset, .. } => *offset,
            ZoneKind::Iana(tz) => -iana_offset_east(*tz, unix_secs(ts)),
            ZoneKind::Abbrev { tz, abbrev } => {
                let t = unix_secs(ts);
                -abbrev_offset_near(*tz, t, abbrev).unwrap_or_else(|| iana_offset_east(*tz, t))
            }
        }
    }

    /// The zone abbreviation in effect at a UTC timestamp ("EST", "+03", "").
    pub fn abbrev_at_utc(&self, ts: i64) -> String {
        match &self.kind {
            ZoneKind::Fixed { abbrev, .. } | ZoneKind::Abbrev { abbrev, .. } => abbrev.clone(),
            ZoneKind::Iana(tz) => iana_offset(*tz, unix_secs(ts)).1,
        }
    }

    /// The constant offset (seconds west) of a zone that never changes
    /// offset (pg_get_timezone_offset), else None.
    pub fn fixed_offset(&self) -> Option<i32> {
        match &self.kind {
            ZoneKind::Fixed { offset, .. } => Some(*offset),
            ZoneKind::Abbrev { .. } => None,
            ZoneKind::Iana(tz) => {
                // Sample the zone across its history; zones such as UTC or Etc/GMT+5 never move.
                let first = iana_offset_east(*tz, 0);
                let samples = [-3_786_825_600i64, -2_208_988_800, -631_152_000, 15_552_000, 946_684_800, 1_593_561_600, 1_609_459_200];
                samples.iter().all(|&s| iana_offset_east(*tz, s) == first).then_some(-first)
            }
        }
    }

    /// DetermineTimeZoneOffset: the offset (seconds west) to apply to a
    /// local date/time given as microseconds since 2000-01-01 local time.
    /// A local time skipped by a spring-forward transition is read with the
    /// offset before it; one repeated by a fall-back transition with the
    /// offset after it, as PostgreSQL does.
    pub fn offset_for_local(&self, local: i64) -> i32 {
        match &self.kind {
            ZoneKind::Fixed { offset, .. } => *offset,
            ZoneKind::Abbrev { tz, abbrev } => {
                let zone = TimeZone { name: String::new(), kind: ZoneKind::Iana(*tz) };
                zone.offset_for_abbrev(local, abbrev)
            }
            ZoneKind::Iana(tz) => {
                let mytime = unix_secs(local);
                let off = |t: i64| iana_offset_east(*tz, t) as i64;
                let prevtime = mytime - SECS_PER_DAY;
                let nexttime = mytime + SECS_PER_DAY;
                let before = off(prevtime);
                let after = off(nexttime);
                if before == after {
                    return -before as i32;
                }
                // Find the transition instant: the first second whose offset differs from `before`.
                let (mut lo, mut hi) = (prevtime, nexttime);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if off(mid) == before {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                let boundary = hi;
                let after = off(boundary);
                let beforetime = mytime - before;
                let aftertime = mytime - after;
                if beforetime < boundary && aftertime < boundary {
                    return -before as i32;
                }
                if beforetime > boundary && aftertime >= boundary {
                    return -after as i32;
                }
                if beforetime > aftertime {
                    -before as i32
                } else {
                    -after as i32
                }
            }
        }
    }

    /// Offset and abbreviation a dynamic abbreviation ("MSK") meant at a
    /// local time in this zone (DetermineTimeZoneAbbrevOffset): the zone's
    /// offset at that time if the abbreviation was in use then, otherwise
    /// the nearest time the zone used it, otherwise the zone's offset.
    pub(crate) fn offset_for_abbrev(&self, local: i64, abbrev_upper: &str) -> i32 {
        let zone_offset = self.offset_for_local(local);
        let ZoneKind::Iana(tz) = &self.kind else { return zone_offset };
        let t = unix_secs(local) + zone_offset as i64;
        abbrev_offset_near(*tz, t, abbrev_upper).map(|east| -east).unwrap_or(zone_offset)
    }
}

/// The offset east an abbreviation had in a zone around Unix time `t`
/// (pg_interpret_timezone_abbrev): its meaning in force at `t` or most
/// recently before it, else the first one after.
fn abbrev_offset_near(tz: Tz, t: i64, abbrev_upper: &str) -> Option<i32> {
    const STEP: i64 = 61 * SECS_PER_DAY;
    let probe = |p: i64| {
        let (east, abbrev) = iana_offset(tz, p);
        (abbrev == abbrev_upper).then_some(east)
    };
    (0..1200i64).find_map(|k| probe(t - k * STEP)).or_else(|| (1..1200i64).find_map(|k| probe(t + k * STEP)))
}

/// PostgreSQL timestamp microseconds to Unix seconds (floor).
fn unix_secs(ts: i64) -> i64 {
    ts.div_euclid(USECS_PER_SEC) + PG_EPOCH_UNIX_SECS
}

/// The offset an IANA zone has at a Unix time.
///
/// chrono-tz lists transitions up to 2099 only, while PostgreSQL applies a
/// zone's current rule forever; later instants are therefore looked up in
/// a year of 2072..2099 with the same leap-ness and weekday of January 1st,
/// where the same rule yields the same transitions.
fn iana_lookup(tz: Tz, secs: i64) -> Option<chrono_tz::TzOffset> {
    let mut secs = secs;
    let jd = secs.div_euclid(SECS_PER_DAY) + UNIX_EPOCH_JDATE as i64;
    if jd > date2j(2099, 12, 31) as i64 {
        let (year, _, _) = j2date(jd.min(i32::MAX as i64) as i32);
        let jan1 = date2j(year, 1, 1);
        let weekday = j2day(jan1);
        if let Some(y) = (2072..=2099).find(|&y| is_leap(y) == is_leap(year) && j2day(date2j(y, 1, 1)) == weekday) {
            secs += (date2j(y, 1, 1) as i64 - jan1 as i64) * SECS_PER_DAY;
        }
    }
    // chrono's calendar ends in year 262143; PostgreSQL's starts at 4713 BC, inside it.
    let utc = chrono::DateTime::from_timestamp(secs, 0)?;
    Some(tz.offset_from_utc_datetime(&utc.naive_utc()))
}

/// Offset east of UTC, in seconds, of an IANA zone at a Unix time.
fn iana_offset_east(tz: Tz, secs: i64) -> i32 {
    iana_lookup(tz, secs).map(|o| o.fix().local_minus_utc()).unwrap_or(0)
}

/// Offset east and abbreviation ("EST"; numeric like "+03" where the
/// zone has none) of an IANA zone at a Unix time.
fn iana_offset(tz: Tz, secs: i64) -> (i32, String) {
    match iana_lookup(tz, secs) {
        Some(o) => (o.fix().local_minus_utc(), o.abbreviation().map(str::to_string).unwrap_or_else(|| o.to_string())),
        None => (0, "UTC".to_string()),
    }
}

fn iana_zones() -> &'static HashMap<String, Tz> {
    static ZONES: OnceLock<HashMap<String, Tz>> = OnceLock::new();
    ZONES.get_or_init(|| chrono_tz::TZ_VARIANTS.iter().map(|tz| (tz.name().to_ascii_lowercase(), *tz)).collect())
}

/// Looks up an IANA zone name case-insensitively, as pg_tzset does.
/// "posixrules" (a tzdb file chrono-tz leaves out) is America/New_York.
pub(crate) fn lookup_iana_zone(name: &str) -> Option<TimeZone> {
    let lower = name.to_ascii_lowercase();
    if lower == "posixrules" {
        return Some(TimeZone { name: "posixrules".to_string(), kind: ZoneKind::Iana(Tz::America__New_York) });
    }
    let tz = *iana_zones().get(&lower)?;
    Some(TimeZone { name: tz.name().to_string(), kind: ZoneKind::Iana(tz) })
}

/// A zone name in date/time input: an IANA name, else a POSIX offset zone ("UTC+3").
pub(crate) fn lookup_zone_name(name: &str) -> Option<TimeZone> {
    lookup_iana_zone(name).or_else(|| parse_posix_zone(name))
}

/// Parses a POSIX offset "[+-]hh[:mm[:ss]]" (positive = west), returning
/// the offset and the rest of the text.
fn parse_posix_offset(s: &str) -> Option<(i32, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut sign = 1;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        if bytes[i] == b'-' {
            sign = -1;
        }
        i += 1;
    }
    let mut parts = [0i32; 3];
    for (n, part) in parts.iter_mut().enumerate() {
        if n > 0 {
            if i < bytes.len() && bytes[i] == b':' {
                i += 1;
            } else {
                break;
            }
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        *part = s[start..i].parse().ok()?;
    }
    // Hours may run to a week (POSIX allows 0..167).
    let [h, m, sec] = parts;
    if h > 24 * 7 - 1 || m > 59 || sec > 59 {
        return None;
    }
    Some((sign * (h * 3600 + m * 60 + sec), &s[i..]))
}

/// A POSIX TZ string without daylight-saving rules: "UTC+3", "<+03>-03",
/// "+05:30" (which, POSIX-style, means 5:30 *west* of Greenwich).
fn parse_posix_zone(s: &str) -> Option<TimeZone> {
    let (abbrev, rest) = if let Some(r) = s.strip_prefix('<') {
        let end = r.find('>')?;
        let a = &r[..end];
        if a.is_empty() || !a.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | ':')) {
            return None;
        }
        (a.to_string(), &r[end + 1..])
    } else {
        let n = s.chars().take_while(|c| c.is_ascii_alphabetic()).count();
        (s[..n].to_string(), &s[n..])
    };
    let (offset, rest) = parse_posix_offset(rest)?;
    if !rest.is_empty() {
        return None;
    }
    Some(TimeZone { name: s.to_string(), kind: ZoneKind::Fixed { offset, abbrev } })
}

/// Parses a TimeZone setting, as check_timezone does: "interval '+05:30'"
/// or a number of hours ("5", "-3.5"), both meaning east of UTC; an IANA
/// zone name (case-insensitive, shown canonically); or a POSIX offset zone.
pub fn parse_timezone(value: &str) -> PgResult<TimeZone> {
    let invalid = || pg_err!(INVALID_PARAMETER_VALUE, "invalid value for parameter \"TimeZone\": \"{}\"", value);
    if value.is_empty() {
        return Err(invalid());
    }
    if value.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("interval")) {
        let rest = value[8..].trim_start();
        let inner = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).filter(|r| !r.contains('\''));
        let inner = inner.ok_or_else(invalid)?;
        let iv = super::interval::interval_in(inner, -1, super::settings::IntervalStyle::Postgres)?;
        if iv.months != 0 {
            return Err(invalid().with_detail("Cannot specify months in time zone interval."));
        }
        if iv.days != 0 {
            return Err(invalid().with_detail("Cannot specify days in time zone interval."));
        }
        return Ok(TimeZone::fixed(-((iv.micros / USECS_PER_SEC) as i32)));
    }
    if let Some((hours, "")) = super::parse::strtod(value) {
        let west = (-hours * 3600.0).round();
        if west.abs() >= (168 * 3600) as f64 {
            return Err(invalid().with_detail("UTC timezone offset is out of range."));
        }
        return Ok(TimeZone::fixed(west as i32));
    }
    if let Some(tz) = lookup_iana_zone(value) {
        return Ok(tz);
    }
    parse_posix_zone(value).ok_or_else(invalid)
}

/// What a time zone abbreviation in date/time input stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Abbrev {
    /// A fixed offset in seconds *east* of UTC (as the abbreviation files write it).
    Fixed { offset: i32, is_dst: bool },
    /// An abbreviation whose meaning changed over time, resolved in this IANA zone.
    Dynamic(&'static str),
}

/// Looks up a lower-case abbreviation in the Default set.
pub(crate) fn lookup_abbrev(lower: &str) -> Option<Abbrev> {
    ABBREVS.binary_search_by(|(name, _)| (*name).cmp(lower)).ok().map(|i| ABBREVS[i].1)
}

/// Resolves a time zone name given to AT TIME ZONE, timezone(), or
/// date_trunc(..., zone): an abbreviation first (as input does), then a
/// full zone name. Unknown names are 22023 `time zone "x" not recognized`.
pub fn lookup_timezone_name(name: &str) -> PgResult<TimeZone> {
    let lower = name.to_ascii_lowercase();
    match lookup_abbrev(&lower) {
        Some(Abbrev::Fixed { offset, .. }) => Ok(TimeZone {
            name: name.to_string(),
            kind: ZoneKind::Fixed { offset: -offset, abbrev: name.to_ascii_uppercase() },
        }),
        Some(Abbrev::Dynamic(zone)) => {
            let tz = lookup_iana_zone(zone)
                .and_then(|z| if let ZoneKind::Iana(tz) = z.kind { Some(tz) } else { None })
                .ok_or_else(|| pg_err!(CONFIG_FILE_ERROR, "time zone \"{}\" not recognized", zone))?;
            Ok(TimeZone { name: name.to_string(), kind: ZoneKind::Abbrev { tz, abbrev: name.to_ascii_uppercase() } })
        }
        None => lookup_iana_zone(name)
            .or_else(|| parse_posix_zone(name))
            .ok_or_else(|| pg_err!(INVALID_PARAMETER_VALUE, "time zone \"{}\" not recognized", name)),
    }
}

/// PostgreSQL's Default timezone_abbreviations set (share/timezonesets/Default),
/// sorted by name. Fixed offsets are seconds east of UTC.
static ABBREVS: &[(&str, Abbrev)] = &[
    ("acdt", Abbrev::Fixed { offset: 37800, is_dst: true }),
    ("acsst", Abbrev::Fixed { offset: 37800, is_dst: true }),
    ("acst", Abbrev::Fixed { offset: 34200, is_dst: false }),
    ("act", Abbrev::Fixed { offset: -18000, is_dst: false }),
    ("acwst", Abbrev::Fixed { offset: 31500, is_dst: false }),
    ("adt", Abbrev::Fixed { offset: -10800, is_dst: true }),
    ("aedt", Abbrev::Fixed { offset: 39600, is_dst: true }),
    ("aesst", Abbrev::Fixed { offset: 39600, is_dst: true }),
    ("aest", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("aft", Abbrev::Fixed { offset: 16200, is_dst: false }),
    ("akdt", Abbrev::Fixed { offset: -28800, is_dst: true }),
    ("akst", Abbrev::Fixed { offset: -32400, is_dst: false }),
    ("almst", Abbrev::Fixed { offset: 25200, is_dst: true }),
    ("almt", Abbrev::Fixed { offset: 21600, is_dst: false }),
    ("amst", Abbrev::Dynamic("Asia/Yerevan")),
    ("amt", Abbrev::Fixed { offset: -14400, is_dst: false }),
    ("anast", Abbrev::Dynamic("Asia/Anadyr")),
    ("anat", Abbrev::Dynamic("Asia/Anadyr")),
    ("arst", Abbrev::Dynamic("America/Argentina/Buenos_Aires")),
    ("art", Abbrev::Dynamic("America/Argentina/Buenos_Aires")),
    ("ast", Abbrev::Fixed { offset: -14400, is_dst: false }),
    ("awsst", Abbrev::Fixed { offset: 32400, is_dst: true }),
    ("awst", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("azost", Abbrev::Fixed { offset: 0, is_dst: true }),
    ("azot", Abbrev::Fixed { offset: -3600, is_dst: false }),
    ("azst", Abbrev::Dynamic("Asia/Baku")),
    ("azt", Abbrev::Dynamic("Asia/Baku")),
    ("bdst", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("bdt", Abbrev::Fixed { offset: 21600, is_dst: false }),
    ("bnt", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("bort", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("bot", Abbrev::Fixed { offset: -14400, is_dst: false }),
    ("bra", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("brst", Abbrev::Fixed { offset: -7200, is_dst: true }),
    ("brt", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("bst", Abbrev::Fixed { offset: 3600, is_dst: true }),
    ("btt", Abbrev::Fixed { offset: 21600, is_dst: false }),
    ("cadt", Abbrev::Fixed { offset: 37800, is_dst: true }),
    ("cast", Abbrev::Fixed { offset: 34200, is_dst: false }),
    ("cct", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("cdt", Abbrev::Fixed { offset: -18000, is_dst: true }),
    ("cest", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("cet", Abbrev::Fixed { offset: 3600, is_dst: false }),
    ("cetdst", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("chadt", Abbrev::Fixed { offset: 49500, is_dst: true }),
    ("chast", Abbrev::Fixed { offset: 45900, is_dst: false }),
    ("chut", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("ckt", Abbrev::Dynamic("Pacific/Rarotonga")),
    ("clst", Abbrev::Fixed { offset: -10800, is_dst: true }),
    ("clt", Abbrev::Dynamic("America/Santiago")),
    ("cot", Abbrev::Fixed { offset: -18000, is_dst: false }),
    ("cst", Abbrev::Fixed { offset: -21600, is_dst: false }),
    ("cxt", Abbrev::Fixed { offset: 25200, is_dst: false }),
    ("davt", Abbrev::Dynamic("Antarctica/Davis")),
    ("ddut", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("easst", Abbrev::Dynamic("Pacific/Easter")),
    ("east", Abbrev::Dynamic("Pacific/Easter")),
    ("eat", Abbrev::Fixed { offset: 10800, is_dst: false }),
    ("edt", Abbrev::Fixed { offset: -14400, is_dst: true }),
    ("eest", Abbrev::Fixed { offset: 10800, is_dst: true }),
    ("eet", Abbrev::Fixed { offset: 7200, is_dst: false }),
    ("eetdst", Abbrev::Fixed { offset: 10800, is_dst: true }),
    ("egst", Abbrev::Fixed { offset: 0, is_dst: true }),
    ("egt", Abbrev::Fixed { offset: -3600, is_dst: false }),
    ("est", Abbrev::Fixed { offset: -18000, is_dst: false }),
    ("fet", Abbrev::Fixed { offset: 10800, is_dst: false }),
    ("fjst", Abbrev::Fixed { offset: 46800, is_dst: true }),
    ("fjt", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("fkst", Abbrev::Dynamic("Atlantic/Stanley")),
    ("fkt", Abbrev::Dynamic("Atlantic/Stanley")),
    ("fnst", Abbrev::Fixed { offset: -3600, is_dst: true }),
    ("fnt", Abbrev::Fixed { offset: -7200, is_dst: false }),
    ("galt", Abbrev::Fixed { offset: -21600, is_dst: false }),
    ("gamt", Abbrev::Fixed { offset: -32400, is_dst: false }),
    ("gest", Abbrev::Dynamic("Asia/Tbilisi")),
    ("get", Abbrev::Dynamic("Asia/Tbilisi")),
    ("gft", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("gilt", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("gmt", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("gyt", Abbrev::Dynamic("America/Guyana")),
    ("hkt", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("hst", Abbrev::Fixed { offset: -36000, is_dst: false }),
    ("ict", Abbrev::Fixed { offset: 25200, is_dst: false }),
    ("idt", Abbrev::Fixed { offset: 10800, is_dst: true }),
    ("iot", Abbrev::Dynamic("Indian/Chagos")),
    ("irkst", Abbrev::Dynamic("Asia/Irkutsk")),
    ("irkt", Abbrev::Dynamic("Asia/Irkutsk")),
    ("irt", Abbrev::Fixed { offset: 12600, is_dst: false }),
    ("ist", Abbrev::Fixed { offset: 7200, is_dst: false }),
    ("jayt", Abbrev::Fixed { offset: 32400, is_dst: false }),
    ("jst", Abbrev::Fixed { offset: 32400, is_dst: false }),
    ("kdt", Abbrev::Fixed { offset: 36000, is_dst: true }),
    ("kgst", Abbrev::Fixed { offset: 21600, is_dst: true }),
    ("kgt", Abbrev::Dynamic("Asia/Bishkek")),
    ("kost", Abbrev::Dynamic("Pacific/Kosrae")),
    ("krast", Abbrev::Dynamic("Asia/Krasnoyarsk")),
    ("krat", Abbrev::Dynamic("Asia/Krasnoyarsk")),
    ("kst", Abbrev::Fixed { offset: 32400, is_dst: false }),
    ("lhdt", Abbrev::Dynamic("Australia/Lord_Howe")),
    ("lhst", Abbrev::Fixed { offset: 37800, is_dst: false }),
    ("ligt", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("lint", Abbrev::Dynamic("Pacific/Kiritimati")),
    ("lkt", Abbrev::Dynamic("Asia/Colombo")),
    ("magst", Abbrev::Dynamic("Asia/Magadan")),
    ("magt", Abbrev::Dynamic("Asia/Magadan")),
    ("mart", Abbrev::Fixed { offset: -34200, is_dst: false }),
    ("mawt", Abbrev::Dynamic("Antarctica/Mawson")),
    ("mdt", Abbrev::Fixed { offset: -21600, is_dst: true }),
    ("mest", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("mesz", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("met", Abbrev::Fixed { offset: 3600, is_dst: false }),
    ("metdst", Abbrev::Fixed { offset: 7200, is_dst: true }),
    ("mez", Abbrev::Fixed { offset: 3600, is_dst: false }),
    ("mht", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("mmt", Abbrev::Fixed { offset: 23400, is_dst: false }),
    ("mpt", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("msd", Abbrev::Fixed { offset: 14400, is_dst: true }),
    ("msk", Abbrev::Dynamic("Europe/Moscow")),
    ("mst", Abbrev::Fixed { offset: -25200, is_dst: false }),
    ("must", Abbrev::Fixed { offset: 18000, is_dst: true }),
    ("mut", Abbrev::Fixed { offset: 14400, is_dst: false }),
    ("mvt", Abbrev::Fixed { offset: 18000, is_dst: false }),
    ("myt", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("ndt", Abbrev::Fixed { offset: -9000, is_dst: true }),
    ("nft", Abbrev::Fixed { offset: -12600, is_dst: false }),
    ("novst", Abbrev::Dynamic("Asia/Novosibirsk")),
    ("novt", Abbrev::Dynamic("Asia/Novosibirsk")),
    ("npt", Abbrev::Fixed { offset: 20700, is_dst: false }),
    ("nst", Abbrev::Fixed { offset: -12600, is_dst: false }),
    ("nut", Abbrev::Dynamic("Pacific/Niue")),
    ("nzdt", Abbrev::Fixed { offset: 46800, is_dst: true }),
    ("nzst", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("nzt", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("omsst", Abbrev::Dynamic("Asia/Omsk")),
    ("omst", Abbrev::Dynamic("Asia/Omsk")),
    ("pdt", Abbrev::Fixed { offset: -25200, is_dst: true }),
    ("pet", Abbrev::Fixed { offset: -18000, is_dst: false }),
    ("petst", Abbrev::Dynamic("Asia/Kamchatka")),
    ("pett", Abbrev::Dynamic("Asia/Kamchatka")),
    ("pgt", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("pht", Abbrev::Fixed { offset: 28800, is_dst: false }),
    ("pkst", Abbrev::Fixed { offset: 21600, is_dst: true }),
    ("pkt", Abbrev::Fixed { offset: 18000, is_dst: false }),
    ("pmdt", Abbrev::Fixed { offset: -7200, is_dst: true }),
    ("pmst", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("pont", Abbrev::Fixed { offset: 39600, is_dst: false }),
    ("pst", Abbrev::Fixed { offset: -28800, is_dst: false }),
    ("pwt", Abbrev::Fixed { offset: 32400, is_dst: false }),
    ("pyst", Abbrev::Fixed { offset: -10800, is_dst: true }),
    ("pyt", Abbrev::Dynamic("America/Asuncion")),
    ("ret", Abbrev::Fixed { offset: 14400, is_dst: false }),
    ("sadt", Abbrev::Fixed { offset: 37800, is_dst: true }),
    ("sast", Abbrev::Fixed { offset: 7200, is_dst: false }),
    ("sct", Abbrev::Fixed { offset: 14400, is_dst: false }),
    ("sgt", Abbrev::Dynamic("Asia/Singapore")),
    ("taht", Abbrev::Fixed { offset: -36000, is_dst: false }),
    ("tft", Abbrev::Fixed { offset: 18000, is_dst: false }),
    ("tjt", Abbrev::Fixed { offset: 18000, is_dst: false }),
    ("tkt", Abbrev::Dynamic("Pacific/Fakaofo")),
    ("tmt", Abbrev::Dynamic("Asia/Ashgabat")),
    ("tot", Abbrev::Fixed { offset: 46800, is_dst: false }),
    ("trut", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("tvt", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("uct", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("ulast", Abbrev::Fixed { offset: 32400, is_dst: true }),
    ("ulat", Abbrev::Dynamic("Asia/Ulaanbaatar")),
    ("ut", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("utc", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("uyst", Abbrev::Fixed { offset: -7200, is_dst: true }),
    ("uyt", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("uzst", Abbrev::Fixed { offset: 21600, is_dst: true }),
    ("uzt", Abbrev::Fixed { offset: 18000, is_dst: false }),
    ("vet", Abbrev::Dynamic("America/Caracas")),
    ("vlast", Abbrev::Dynamic("Asia/Vladivostok")),
    ("vlat", Abbrev::Dynamic("Asia/Vladivostok")),
    ("volt", Abbrev::Dynamic("Europe/Volgograd")),
    ("vut", Abbrev::Fixed { offset: 39600, is_dst: false }),
    ("wadt", Abbrev::Fixed { offset: 28800, is_dst: true }),
    ("wakt", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("wast", Abbrev::Fixed { offset: 25200, is_dst: false }),
    ("wat", Abbrev::Fixed { offset: 3600, is_dst: false }),
    ("wdt", Abbrev::Fixed { offset: 32400, is_dst: true }),
    ("wet", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("wetdst", Abbrev::Fixed { offset: 3600, is_dst: true }),
    ("wft", Abbrev::Fixed { offset: 43200, is_dst: false }),
    ("wgst", Abbrev::Fixed { offset: -7200, is_dst: true }),
    ("wgt", Abbrev::Fixed { offset: -10800, is_dst: false }),
    ("xjt", Abbrev::Fixed { offset: 21600, is_dst: false }),
    ("yakst", Abbrev::Dynamic("Asia/Yakutsk")),
    ("yakt", Abbrev::Dynamic("Asia/Yakutsk")),
    ("yapt", Abbrev::Fixed { offset: 36000, is_dst: false }),
    ("yekst", Abbrev::Fixed { offset: 21600, is_dst: true }),
    ("yekt", Abbrev::Dynamic("Asia/Yekaterinburg")),
    ("z", Abbrev::Fixed { offset: 0, is_dst: false }),
    ("zulu", Abbrev::Fixed { offset: 0, is_dst: false }),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime_abbreviation_table_is_sorted_and_resolvable() {
        for pair in ABBREVS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} >= {}", pair[0].0, pair[1].0);
        }
        for (name, meaning) in ABBREVS {
            if let Abbrev::Dynamic(zone) = meaning {
                assert!(lookup_iana_zone(zone).is_some(), "{name}: {zone}");
            }
        }
    }
}
