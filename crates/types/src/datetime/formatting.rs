//! to_char for timestamps and intervals, and to_date/to_timestamp(text,
//! text): PostgreSQL 15's template patterns (formatting.c's DCH_* code),
//! in the C locale (TM names are English, as PostgreSQL's are under C).
//!
//! A template is first split into nodes: keywords such as YYYY or Month
//! (with FM/TM prefixes and TH/th suffixes), separators, spaces and literal
//! text (double-quoted runs included). to_char writes each node; to_date
//! and to_timestamp read the input against the nodes and then assemble a
//! date from whatever fields were given.

use crate::error::{PgError, PgResult};
use crate::pg_err;

use super::calendar::*;
use super::interval::Interval;
use super::settings::DateTimeSettings;
use super::timestamp::apply_timestamp_typmod;

/// Which calendar a field belongs to: mixing Gregorian and ISO-week fields is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DateMode {
    None,
    Gregorian,
    IsoWeek,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
enum Key {
    A_D,
    A_M,
    AD,
    AM,
    B_C,
    BC,
    CC,
    DAY,
    DDD,
    DD,
    DY,
    Day,
    Dy,
    D,
    FF1,
    FF2,
    FF3,
    FF4,
    FF5,
    FF6,
    FX,
    HH24,
    HH12,
    HH,
    IDDD,
    ID,
    IW,
    IYYY,
    IYY,
    IY,
    I,
    J,
    MI,
    MM,
    MONTH,
    MON,
    MS,
    Month,
    Mon,
    OF,
    P_M,
    PM,
    Q,
    RM,
    SSSS,
    SS,
    TZH,
    TZM,
    TZ,
    US,
    WW,
    W,
    Y_YYY,
    YYYY,
    YYY,
    YY,
    Y,
    a_d,
    a_m,
    ad,
    am,
    b_c,
    bc,
    day,
    dy,
    month,
    mon,
    p_m,
    pm,
    rm,
    tz,
}

#[derive(Debug)]
struct KeyWord {
    name: &'static str,
    key: Key,
    /// A numeric field (matters when deciding how many digits to read).
    is_digit: bool,
    mode: DateMode,
}

const fn kw(name: &'static str, key: Key, is_digit: bool, mode: DateMode) -> KeyWord {
    KeyWord { name, key, is_digit, mode }
}

use DateMode::{Gregorian as G, IsoWeek as W_, None as N};

/// DCH_keywords, in PostgreSQL's order: the first entry that prefixes the
/// template text wins, so longer names come before their prefixes.
static KEYWORDS: &[KeyWord] = &[
    kw("A.D.", Key::A_D, false, N),
    kw("A.M.", Key::A_M, false, N),
    kw("AD", Key::AD, false, N),
    kw("AM", Key::AM, false, N),
    kw("B.C.", Key::B_C, false, N),
    kw("BC", Key::BC, false, N),
    kw("CC", Key::CC, true, N),
    kw("DAY", Key::DAY, false, N),
    kw("DDD", Key::DDD, true, G),
    kw("DD", Key::DD, true, G),
    kw("DY", Key::DY, false, N),
    kw("Day", Key::Day, false, N),
    kw("Dy", Key::Dy, false, N),
    kw("D", Key::D, true, G),
    kw("FF1", Key::FF1, false, N),
    kw("FF2", Key::FF2, false, N),
    kw("FF3", Key::FF3, false, N),
    kw("FF4", Key::FF4, false, N),
    kw("FF5", Key::FF5, false, N),
    kw("FF6", Key::FF6, false, N),
    kw("FX", Key::FX, false, N),
    kw("HH24", Key::HH24, true, N),
    kw("HH12", Key::HH12, true, N),
    kw("HH", Key::HH, true, N),
    kw("IDDD", Key::IDDD, true, W_),
    kw("ID", Key::ID, true, W_),
    kw("IW", Key::IW, true, W_),
    kw("IYYY", Key::IYYY, true, W_),
    kw("IYY", Key::IYY, true, W_),
    kw("IY", Key::IY, true, W_),
    kw("I", Key::I, true, W_),
    kw("J", Key::J, true, N),
    kw("MI", Key::MI, true, N),
    kw("MM", Key::MM, true, G),
    kw("MONTH", Key::MONTH, false, G),
    kw("MON", Key::MON, false, G),
    kw("MS", Key::MS, true, N),
    kw("Month", Key::Month, false, G),
    kw("Mon", Key::Mon, false, G),
    kw("OF", Key::OF, false, N),
    kw("P.M.", Key::P_M, false, N),
    kw("PM", Key::PM, false, N),
    kw("Q", Key::Q, true, N),
    kw("RM", Key::RM, false, G),
    kw("SSSSS", Key::SSSS, true, N),
    kw("SSSS", Key::SSSS, true, N),
    kw("SS", Key::SS, true, N),
    kw("TZH", Key::TZH, false, N),
    kw("TZM", Key::TZM, true, N),
    kw("TZ", Key::TZ, false, N),
    kw("US", Key::US, true, N),
    kw("WW", Key::WW, true, G),
    kw("W", Key::W, true, G),
    kw("Y,YYY", Key::Y_YYY, true, G),
    kw("YYYY", Key::YYYY, true, G),
    kw("YYY", Key::YYY, true, G),
    kw("YY", Key::YY, true, G),
    kw("Y", Key::Y, true, G),
    kw("a.d.", Key::a_d, false, N),
    kw("a.m.", Key::a_m, false, N),
    kw("ad", Key::ad, false, N),
    kw("am", Key::am, false, N),
    kw("b.c.", Key::b_c, false, N),
    kw("bc", Key::bc, false, N),
    kw("cc", Key::CC, true, N),
    kw("day", Key::day, false, N),
    kw("ddd", Key::DDD, true, G),
    kw("dd", Key::DD, true, G),
    kw("dy", Key::dy, false, N),
    kw("d", Key::D, true, G),
    kw("ff1", Key::FF1, false, N),
    kw("ff2", Key::FF2, false, N),
    kw("ff3", Key::FF3, false, N),
    kw("ff4", Key::FF4, false, N),
    kw("ff5", Key::FF5, false, N),
    kw("ff6", Key::FF6, false, N),
    kw("fx", Key::FX, false, N),
    kw("hh24", Key::HH24, true, N),
    kw("hh12", Key::HH12, true, N),
    kw("hh", Key::HH, true, N),
    kw("iddd", Key::IDDD, true, W_),
    kw("id", Key::ID, true, W_),
    kw("iw", Key::IW, true, W_),
    kw("iyyy", Key::IYYY, true, W_),
    kw("iyy", Key::IYY, true, W_),
    kw("iy", Key::IY, true, W_),
    kw("i", Key::I, true, W_),
    kw("j", Key::J, true, N),
    kw("mi", Key::MI, true, N),
    kw("mm", Key::MM, true, G),
    kw("month", Key::month, false, G),
    kw("mon", Key::mon, false, G),
    kw("ms", Key::MS, true, N),
    kw("of", Key::OF, false, N),
    kw("p.m.", Key::p_m, false, N),
    kw("pm", Key::pm, false, N),
    kw("q", Key::Q, true, N),
    kw("rm", Key::rm, false, G),
    kw("sssss", Key::SSSS, true, N),
    kw("ssss", Key::SSSS, true, N),
    kw("ss", Key::SS, true, N),
    kw("tzh", Key::TZH, false, N),
    kw("tzm", Key::TZM, true, N),
    kw("tz", Key::tz, false, N),
    kw("us", Key::US, true, N),
    kw("ww", Key::WW, true, G),
    kw("w", Key::W, true, G),
    kw("y,yyy", Key::Y_YYY, true, G),
    kw("yyyy", Key::YYYY, true, G),
    kw("yyy", Key::YYY, true, G),
    kw("yy", Key::YY, true, G),
    kw("y", Key::Y, true, G),
];

/// Modifiers of a keyword.
#[derive(Clone, Copy, Debug, Default)]
struct Suffix {
    /// FM: no padding, and read as many digits as there are.
    fill_mode: bool,
    /// TM: localized (here: English) names, unpadded.
    translate: bool,
    /// TH/th: ordinal suffix, upper or lower case.
    th_upper: bool,
    th_lower: bool,
}

impl Suffix {
    fn has_th(&self) -> bool {
        self.th_upper || self.th_lower
    }
}

#[derive(Clone, Debug)]
enum Node {
    Action(&'static KeyWord, Suffix),
    /// Literal text copied to output (or skipped in input).
    Char(char),
    /// A separator character (ASCII punctuation), flexible in input.
    Separator(char),
    Space(char),
}

/// is_separator_char: ASCII printable, not a letter or digit.
fn is_separator(c: char) -> bool {
    c.is_ascii() && c > ' ' && c < '\u{7f}' && !c.is_ascii_alphanumeric()
}

/// parse_format: splits a template into nodes.
fn parse_format(fmt: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut rest = fmt;
    while !rest.is_empty() {
        let mut suffix = Suffix::default();
        for (p, tm) in [("FM", false), ("fm", false), ("TM", true), ("tm", true)] {
            if let Some(r) = rest.strip_prefix(p) {
                if tm {
                    suffix.translate = true;
                } else {
                    suffix.fill_mode = true;
                }
                rest = r;
                break;
            }
        }
        if rest.is_empty() {
            break;
        }
        if let Some(k) = KEYWORDS.iter().find(|k| rest.starts_with(k.name)) {
            rest = &rest[k.name.len()..];
            if let Some(r) = rest.strip_prefix("TH") {
                suffix.th_upper = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("th") {
                suffix.th_lower = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("SP") {
                rest = r;
            }
            nodes.push(Node::Action(k, suffix));
            continue;
        }
        let mut chars = rest.chars();
        let c = chars.next().unwrap();
        if c == '"' {
            // A double-quoted literal; backslash escapes the next character.
            let mut it = chars;
            loop {
                match it.next() {
                    None => break,
                    Some('"') => break,
                    Some('\\') => {
                        let save = it.clone();
                        match it.next() {
                            Some(n) => nodes.push(Node::Char(n)),
                            None => {
                                it = save;
                                nodes.push(Node::Char('\\'));
                            }
                        }
                    }
                    Some(other) => nodes.push(Node::Char(other)),
                }
            }
            rest = it.as_str();
            continue;
        }
        let (c, r) = if c == '\\' && chars.as_str().starts_with('"') { ('"', &chars.as_str()[1..]) } else { (c, chars.as_str()) };
        rest = r;
        nodes.push(if is_separator(c) {
            Node::Separator(c)
        } else if c.is_whitespace() {
            Node::Space(c)
        } else {
            Node::Char(c)
        });
    }
    nodes
}

/// Broken-down value to format (TmToChar).
struct CharTm {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
    wday: i64,
    yday: i64,
    /// Offset east of UTC in seconds, and the zone abbreviation (timestamptz only).
    gmtoff: i64,
    tzn: Option<String>,
}

const FULL_DAY_NAMES: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const SHORT_DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const RM_UPPER: [&str; 12] = ["XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"];
const RM_LOWER: [&str; 12] = ["xii", "xi", "x", "ix", "viii", "vii", "vi", "v", "iv", "iii", "ii", "i"];

/// Appends st/nd/rd/th (str_numth): teens always get "th".
fn push_ordinal(out: &mut String, num: &str, upper: bool) -> PgResult<()> {
    let b = num.as_bytes();
    let Some(&last) = b.last() else { return Ok(()) };
    if !last.is_ascii_digit() {
        return Err(pg_err!(INVALID_TEXT_REPRESENTATION, "\"{}\" is not a number", num));
    }
    let last = if b.len() > 1 && b[b.len() - 2] == b'1' { b'0' } else { last };
    let s = match last {
        b'1' => "st",
        b'2' => "nd",
        b'3' => "rd",
        _ => "th",
    };
    out.push_str(&if upper { s.to_uppercase() } else { s.to_string() });
    Ok(())
}

/// "%0*d": zero-padded to `width` (the sign counts toward the width).
fn pad_num(v: i64, width: usize) -> String {
    if v < 0 {
        format!("-{:0w$}", -v, w = width.saturating_sub(1))
    } else {
        format!("{:0w$}", v, w = width)
    }
}

fn interval_format_error() -> PgError {
    pg_err!(INVALID_DATETIME_FORMAT, "invalid format specification for an interval value")
        .with_hint("Intervals are not tied to specific calendar dates.")
}

/// ADJUST_YEAR: BC years count from 1 (not for intervals).
fn adjust_year(year: i64, is_interval: bool) -> i64 {
    if is_interval || year > 0 {
        year
    } else {
        -(year - 1)
    }
}

fn iso_year(tm: &CharTm) -> i64 {
    date2isoyear(tm.year as i32, tm.mon as i32, tm.mday as i32) as i64
}

/// DCH_to_char: writes each node.
fn dch_to_char(nodes: &[Node], tm: &CharTm, is_interval: bool) -> PgResult<String> {
    use Key::*;
    let mut out = String::new();
    for node in nodes {
        let (k, sfx) = match node {
            Node::Action(k, s) => (*k, *s),
            Node::Char(c) | Node::Separator(c) | Node::Space(c) => {
                out.push(*c);
                continue;
            }
        };
        let fm = sfx.fill_mode;
        // Numeric fields: zero-padded width (3 when negative), unless FM.
        let numeric = |v: i64, width: usize| -> String {
            if fm {
                v.to_string()
            } else {
                pad_num(v, if v >= 0 { width } else { width + 1 })
            }
        };
        let is_pm = tm.hour % 24 >= 12;
        let not_interval = || if is_interval { Err(interval_format_error()) } else { Ok(()) };
        let text: String = match k.key {
            A_M | P_M => (if is_pm { "P.M." } else { "A.M." }).into(),
            AM | PM => (if is_pm { "PM" } else { "AM" }).into(),
            a_m | p_m => (if is_pm { "p.m." } else { "a.m." }).into(),
            am | Key::pm => (if is_pm { "pm" } else { "am" }).into(),
            // A 12-hour clock even for intervals; the width follows the hour's sign.
            HH | HH12 => pad_num(
                if tm.hour % 12 == 0 { 12 } else { tm.hour % 12 },
                if fm {
                    0
                } else if tm.hour >= 0 {
                    2
                } else {
                    3
                },
            ),
            HH24 => numeric(tm.hour, 2),
            MI => numeric(tm.min, 2),
            SS => numeric(tm.sec, 2),
            FF1 => format!("{:01}", tm.fsec / 100000),
            FF2 => format!("{:02}", tm.fsec / 10000),
            FF3 | MS => format!("{:03}", tm.fsec / 1000),
            FF4 => format!("{:04}", tm.fsec / 100),
            FF5 => format!("{:05}", tm.fsec / 10),
            FF6 | US => format!("{:06}", tm.fsec),
            SSSS => (tm.hour * 3600 + tm.min * 60 + tm.sec).to_string(),
            tz => {
                not_interval()?;
                tm.tzn.as_deref().unwrap_or("").to_ascii_lowercase()
            }
            TZ => {
                not_interval()?;
                tm.tzn.clone().unwrap_or_default()
            }
            TZH => {
                not_interval()?;
                format!("{}{:02}", if tm.gmtoff >= 0 { '+' } else { '-' }, tm.gmtoff.abs() / 3600)
            }
            TZM => {
                not_interval()?;
                format!("{:02}", (tm.gmtoff.abs() % 3600) / 60)
            }
            OF => {
                not_interval()?;
                let mut s = format!(
                    "{}{:0w$}",
                    if tm.gmtoff >= 0 { '+' } else { '-' },
                    tm.gmtoff.abs() / 3600,
                    w = if fm { 0 } else { 2 }
                );
                if tm.gmtoff.abs() % 3600 != 0 {
                    s.push_str(&format!(":{:02}", (tm.gmtoff.abs() % 3600) / 60));
                }
                s
            }
            A_D | B_C => {
                not_interval()?;
                (if tm.year <= 0 { "B.C." } else { "A.D." }).into()
            }
            AD | BC => {
                not_interval()?;
                (if tm.year <= 0 { "BC" } else { "AD" }).into()
            }
            a_d | b_c => {
                not_interval()?;
                (if tm.year <= 0 { "b.c." } else { "a.d." }).into()
            }
            ad | bc => {
                not_interval()?;
                (if tm.year <= 0 { "bc" } else { "ad" }).into()
            }
            MONTH | Month | month | MON | Mon | mon => {
                not_interval()?;
                if tm.mon == 0 {
                    String::new()
                } else {
                    let full = matches!(k.key, MONTH | Month | month);
                    let name = if full { FULL_MONTH_NAMES[(tm.mon - 1) as usize] } else { MONTH_NAMES[(tm.mon - 1) as usize] };
                    let name = match k.key {
                        MONTH | MON => name.to_ascii_uppercase(),
                        month | mon => name.to_ascii_lowercase(),
                        _ => name.to_string(),
                    };
                    if full && !fm && !sfx.translate {
                        format!("{:<9}", name)
                    } else {
                        name
                    }
                }
            }
            MM => numeric(tm.mon, 2),
            DAY | Day | day | DY | Dy | dy => {
                not_interval()?;
                let full = matches!(k.key, DAY | Day | day);
                let name = if full { FULL_DAY_NAMES[tm.wday as usize] } else { SHORT_DAY_NAMES[tm.wday as usize] };
                let name = match k.key {
                    DAY | DY => name.to_ascii_uppercase(),
                    day | dy => name.to_ascii_lowercase(),
                    _ => name.to_string(),
                };
                if full && !fm && !sfx.translate {
                    format!("{:<9}", name)
                } else {
                    name
                }
            }
            DDD => pad_num(tm.yday, if fm { 0 } else { 3 }),
            IDDD => pad_num(date2isoyearday(tm.year as i32, tm.mon as i32, tm.mday as i32) as i64, if fm { 0 } else { 3 }),
            DD => pad_num(tm.mday, if fm { 0 } else { 2 }),
            D => {
                not_interval()?;
                (tm.wday + 1).to_string()
            }
            ID => {
                not_interval()?;
                (if tm.wday == 0 { 7 } else { tm.wday }).to_string()
            }
            WW => pad_num((tm.yday - 1) / 7 + 1, if fm { 0 } else { 2 }),
            IW => pad_num(date2isoweek(tm.year as i32, tm.mon as i32, tm.mday as i32) as i64, if fm { 0 } else { 2 }),
            Q => {
                if tm.mon == 0 {
                    String::new()
                } else {
                    ((tm.mon - 1) / 3 + 1).to_string()
                }
            }
            CC => {
                let i = if is_interval {
                    tm.year / 100
                } else if tm.year > 0 {
                    (tm.year - 1) / 100 + 1
                } else {
                    tm.year / 100 - 1
                };
                if (-99..=99).contains(&i) {
                    numeric(i, 2)
                } else {
                    i.to_string()
                }
            }
            Y_YYY => {
                let y = adjust_year(tm.year, is_interval);
                let i = y / 1000;
                format!("{},{:03}", i, y - i * 1000)
            }
            // The padding width follows the sign of the calendar year even for
            // the ISO variants, as in PostgreSQL.
            YYYY | IYYY | YYY | IYY | YY | IY => {
                let positive = adjust_year(tm.year, is_interval) >= 0;
                let iso = matches!(k.key, IYYY | IYY | IY);
                let y = adjust_year(if iso { iso_year(tm) } else { tm.year }, is_interval);
                let (v, width) = match k.key {
                    YYYY | IYYY => (y, 4),
                    YYY | IYY => (y % 1000, 3),
                    _ => (y % 100, 2),
                };
                pad_num(v, if fm { 0 } else if positive { width } else { width + 1 })
            }
            Y | I => {
                let y = adjust_year(if k.key == Y { tm.year } else { iso_year(tm) }, is_interval);
                (y % 10).to_string()
            }
            RM | rm => {
                if tm.mon == 0 && tm.year == 0 {
                    String::new()
                } else {
                    // The numeral tables run from December down to January.
                    let idx = if tm.mon == 0 {
                        if tm.year >= 0 {
                            0
                        } else {
                            11
                        }
                    } else if tm.mon < 0 {
                        (-(tm.mon + 1)) as usize
                    } else {
                        (12 - tm.mon) as usize
                    };
                    let name = if k.key == RM { RM_UPPER[idx] } else { RM_LOWER[idx] };
                    if fm {
                        name.to_string()
                    } else {
                        format!("{:<4}", name)
                    }
                }
            }
            W => ((tm.mday - 1) / 7 + 1).to_string(),
            J => date2j(tm.year as i32, tm.mon as i32, tm.mday as i32).to_string(),
            FX => String::new(),
        };
        let numeric_key = !matches!(
            k.key,
            A_M | P_M | AM | PM | a_m | p_m | am | Key::pm | tz | TZ | TZH | TZM | OF | A_D | B_C | AD | BC | a_d | b_c | ad | bc
                | MONTH | Month | month | MON | Mon | mon | DAY | Day | day | DY | Dy | dy | RM | rm | FX
        );
        out.push_str(&text);
        if sfx.has_th() && numeric_key && !text.is_empty() {
            push_ordinal(&mut out, &text, sfx.th_upper)?;
        }
    }
    Ok(out)
}

fn char_tm_from(tm: &Tm, gmtoff: i64, tzn: Option<String>) -> CharTm {
    let thisdate = date2j(tm.year, tm.mon, tm.mday) as i64;
    CharTm {
        year: tm.year as i64,
        mon: tm.mon as i64,
        mday: tm.mday as i64,
        hour: tm.hour as i64,
        min: tm.min as i64,
        sec: tm.sec as i64,
        fsec: tm.fsec as i64,
        wday: (thisdate + 1).rem_euclid(7),
        yday: thisdate - date2j(tm.year, 1, 1) as i64 + 1,
        gmtoff,
        tzn,
    }
}

/// to_char(timestamp, text); NULL (None) for an empty template or an infinite timestamp.
pub fn timestamp_to_char(ts: i64, fmt: &str, _settings: &DateTimeSettings) -> PgResult<Option<String>> {
    if fmt.is_empty() || !timestamp_is_finite(ts) {
        return Ok(None);
    }
    let tm = timestamp_to_tm_utc(ts).ok_or_else(timestamp_out_of_range)?;
    dch_to_char(&parse_format(fmt), &char_tm_from(&tm, 0, None), false).map(Some)
}

/// to_char(timestamptz, text): local time in the session zone, whose
/// abbreviation and offset TZ, TZH, TZM and OF show.
pub fn timestamptz_to_char(ts: i64, fmt: &str, settings: &DateTimeSettings) -> PgResult<Option<String>> {
    if fmt.is_empty() || !timestamp_is_finite(ts) {
        return Ok(None);
    }
    let zone = &settings.time_zone;
    let (tm, tz) = timestamp_to_tm(ts, Some(zone)).ok_or_else(timestamp_out_of_range)?;
    let tzn = zone.abbrev_at_utc(ts);
    dch_to_char(&parse_format(fmt), &char_tm_from(&tm, -(tz.unwrap_or(0) as i64), Some(tzn)), false).map(Some)
}

/// to_char(interval, text); NULL for an empty template.
pub fn interval_to_char(iv: &Interval, fmt: &str, _settings: &DateTimeSettings) -> PgResult<Option<String>> {
    if fmt.is_empty() {
        return Ok(None);
    }
    let mut time = iv.micros;
    let hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    let min = time / USECS_PER_MINUTE;
    time -= min * USECS_PER_MINUTE;
    let sec = time / USECS_PER_SEC;
    let usec = time - sec * USECS_PER_SEC;
    let year = (iv.months / 12) as i64;
    let mon = (iv.months % 12) as i64;
    let tm = CharTm {
        year,
        mon,
        mday: iv.days as i64,
        hour,
        min,
        sec,
        fsec: usec,
        wday: 0,
        // yday approximates the total span in days.
        yday: (year * 12 + mon) * 30 + iv.days as i64,
        gmtoff: 0,
        tzn: None,
    };
    dch_to_char(&parse_format(fmt), &tm, true).map(Some)
}

/// Fields read by to_date/to_timestamp (TmFromChar); zero means "not given".
#[derive(Default, Debug)]
struct FromChar {
    mode: Option<DateMode>,
    hh: i32,
    pm: i32,
    mi: i32,
    ss: i32,
    ssss: i32,
    d: i32,
    dd: i32,
    ddd: i32,
    mm: i32,
    ms: i32,
    year: i32,
    bc: i32,
    ww: i32,
    w: i32,
    cc: i32,
    j: i32,
    us: i32,
    yysz: i32,
    clock_12: bool,
    tzsign: i32,
    tzh: i32,
    tzm: i32,
    ff: i32,
}

/// from_char_set_int: a field may be given twice only with the same value.
fn set_int(dest: &mut i32, value: i32, name: &str) -> PgResult<()> {
    if *dest != 0 && *dest != value {
        return Err(pg_err!(INVALID_DATETIME_FORMAT, "conflicting values for \"{}\" field in formatting string", name)
            .with_detail("This value contradicts a previous setting for the same field type."));
    }
    *dest = value;
    Ok(())
}

/// adjust_partial_year_to_2020: two- and three-digit years near 2020.
fn adjust_partial_year_to_2020(year: i32) -> i32 {
    if year < 70 {
        year + 2000
    } else if year < 100 {
        year + 1900
    } else if year < 520 {
        year + 2000
    } else if year < 1000 {
        year + 1000
    } else {
        year
    }
}

/// The input being read, as bytes (the templates are ASCII; other bytes pass through).
struct Input<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }
    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }
    fn rest(&self) -> &str {
        std::str::from_utf8(&self.s[self.pos..]).unwrap_or("")
    }
    /// Advances past one (possibly multibyte) character.
    fn skip_char(&mut self) {
        if self.at_end() {
            return;
        }
        let len = match self.s[self.pos] {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        };
        self.pos = (self.pos + len).min(self.s.len());
    }
}

/// is_next_separator: whether the field after node `i` cannot be digits,
/// so a number may be read up to its natural end.
fn is_next_separator(nodes: &[Node], i: usize) -> bool {
    if let Node::Action(_, sfx) = &nodes[i] {
        if sfx.has_th() {
            return true;
        }
    }
    match nodes.get(i + 1) {
        None => true,
        Some(Node::Action(k, _)) => !k.is_digit,
        Some(Node::Char(c)) | Some(Node::Separator(c)) | Some(Node::Space(c)) => !c.is_ascii_digit(),
    }
}

/// strtol on the input: optional spaces and sign, then digits. Returns
/// (value, bytes consumed, overflowed).
fn strtol_bytes(s: &[u8]) -> (i64, usize, bool) {
    let mut i = 0;
    while i < s.len() && (s[i] as char).is_ascii_whitespace() {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        match v.checked_mul(10).and_then(|x| x.checked_add((s[i] - b'0') as i64)) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return (0, 0, false);
    }
    (if neg { -v } else { v }, i, overflow)
}

/// from_char_parse_int_len: reads an integer of at most `len` characters
/// (or any length in FM mode or before a non-digit field).
fn parse_int_len(input: &mut Input, len: usize, nodes: &[Node], i: usize, name: &str, fm: bool) -> PgResult<(i32, usize)> {
    let init = input.pos;
    while input.peek().is_ascii_whitespace() && !input.at_end() {
        input.pos += 1;
    }
    let avail = &input.s[input.pos..];
    let copy_len = avail.len().min(len);
    let copy = String::from_utf8_lossy(&avail[..copy_len]).to_string();
    let value: i64;
    let overflow: bool;
    if fm || is_next_separator(nodes, i) {
        let (v, used, ov) = strtol_bytes(&input.s[init..]);
        value = v;
        overflow = ov;
        input.pos = init + used;
        if used == 0 {
            input.pos = init;
        }
    } else {
        if copy_len < len {
            return Err(pg_err!(INVALID_DATETIME_FORMAT, "source string too short for \"{}\" formatting field", name)
                .with_detail(format!("Field requires {} characters, but only {} remain.", len, copy_len))
                .with_hint("If your source string is not fixed-width, try using the \"FM\" modifier."));
        }
        let (v, used, ov) = strtol_bytes(copy.as_bytes());
        if used > 0 && used < len {
            return Err(pg_err!(INVALID_DATETIME_FORMAT, "invalid value \"{}\" for \"{}\"", copy, name)
                .with_detail(format!("Field requires {} characters, but only {} could be parsed.", len, used))
                .with_hint("If your source string is not fixed-width, try using the \"FM\" modifier."));
        }
        value = v;
        overflow = ov;
        input.pos += used;
    }
    if input.pos == init {
        return Err(pg_err!(INVALID_DATETIME_FORMAT, "invalid value \"{}\" for \"{}\"", copy, name)
            .with_detail("Value must be an integer."));
    }
    if overflow || value < i32::MIN as i64 || value > i32::MAX as i64 {
        return Err(pg_err!(DATETIME_FIELD_OVERFLOW, "value for \"{}\" in source string is out of range", name)
            .with_detail(format!("Value must be in the range {} to {}.", i32::MIN, i32::MAX)));
    }
    Ok((value as i32, input.pos - init))
}

/// seq_search_ascii + from_char_seq_search: case-insensitive prefix match
/// against a word list; returns the index.
fn seq_search(input: &mut Input, words: &[&str], name: &str) -> PgResult<usize> {
    let rest = &input.s[input.pos..];
    for (idx, w) in words.iter().enumerate() {
        let wb = w.as_bytes();
        if rest.len() >= wb.len() && rest[..wb.len()].eq_ignore_ascii_case(wb) {
            input.pos += wb.len();
            return Ok(idx);
        }
    }
    let shown: String = input.rest().chars().take_while(|c| !matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')).collect();
    Err(pg_err!(INVALID_DATETIME_FORMAT, "invalid value \"{}\" for \"{}\"", shown, name)
        .with_detail("The given value did not match any of the allowed values for this field."))
}

fn skip_th(input: &mut Input, sfx: &Suffix) {
    if sfx.has_th() {
        input.skip_char();
        input.skip_char();
    }
}

/// DCH_from_char: reads `text` according to the template.
fn dch_from_char(nodes: &[Node], text: &str) -> PgResult<FromChar> {
    use Key::*;
    let mut out = FromChar::default();
    let mut input = Input { s: text.as_bytes(), pos: 0 };
    let mut fx_mode = false;
    let mut extra_skip: i32 = 0;
    for (i, node) in nodes.iter().enumerate() {
        if input.at_end() {
            break;
        }
        // Ignore spaces at the beginning and before fields, unless FX.
        let is_fx = matches!(node, Node::Action(k, _) if k.key == FX);
        if !fx_mode && !is_fx && (matches!(node, Node::Action(..)) || i == 0) {
            while !input.at_end() && input.peek().is_ascii_whitespace() {
                input.pos += 1;
                extra_skip += 1;
            }
        }
        let (k, sfx) = match node {
            Node::Space(_) | Node::Separator(_) => {
                if !fx_mode {
                    // One template space/separator matches one in the input, or nothing.
                    extra_skip -= 1;
                    let c = input.peek();
                    if c.is_ascii_whitespace() || is_separator(c as char) {
                        input.pos += 1;
                        extra_skip += 1;
                    }
                } else {
                    input.skip_char();
                }
                continue;
            }
            Node::Char(_) => {
                // Literal text consumes one input character, unless extra spaces were skipped.
                if !fx_mode && extra_skip > 0 {
                    extra_skip -= 1;
                } else {
                    input.skip_char();
                }
                continue;
            }
            Node::Action(k, s) => (*k, *s),
        };
        if k.mode != DateMode::None {
            match out.mode {
                None => out.mode = Some(k.mode),
                Some(m) if m != k.mode => {
                    return Err(pg_err!(INVALID_DATETIME_FORMAT, "invalid combination of date conventions")
                        .with_hint("Do not mix Gregorian and ISO week date conventions in a formatting template."));
                }
                _ => {}
            }
        }
        let name = k.name;
        let fm = sfx.fill_mode;
        let key_len = k.name.len();
        match k.key {
            FX => fx_mode = true,
            A_M | P_M | a_m | p_m => {
                let v = seq_search(&mut input, &["a.m.", "p.m.", "A.M.", "P.M."], name)?;
                set_int(&mut out.pm, (v % 2) as i32, name)?;
                out.clock_12 = true;
            }
            AM | PM | am | Key::pm => {
                let v = seq_search(&mut input, &["am", "pm", "AM", "PM"], name)?;
                set_int(&mut out.pm, (v % 2) as i32, name)?;
                out.clock_12 = true;
            }
            HH | HH12 => {
                let (v, _) = parse_int_len(&mut input, 2, nodes, i, name, fm)?;
                set_int(&mut out.hh, v, name)?;
                out.clock_12 = true;
                skip_th(&mut input, &sfx);
            }
            HH24 => {
                let (v, _) = parse_int_len(&mut input, 2, nodes, i, name, fm)?;
                set_int(&mut out.hh, v, name)?;
                skip_th(&mut input, &sfx);
            }
            MI => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.mi, v, name)?;
                skip_th(&mut input, &sfx);
            }
            SS => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.ss, v, name)?;
                skip_th(&mut input, &sfx);
            }
            MS => {
                let (v, len) = parse_int_len(&mut input, 3, nodes, i, name, fm)?;
                set_int(&mut out.ms, v, name)?;
                // 25 means 0.25 s, as does 250; 025 is 0.025.
                out.ms = out.ms.wrapping_mul(match len {
                    1 => 100,
                    2 => 10,
                    _ => 1,
                });
                skip_th(&mut input, &sfx);
            }
            FF1 | FF2 | FF3 | FF4 | FF5 | FF6 | US => {
                let digits = match k.key {
                    FF1 => 1,
                    FF2 => 2,
                    FF3 => 3,
                    FF4 => 4,
                    FF5 => 5,
                    _ => 6,
                };
                if k.key != US {
                    out.ff = digits;
                }
                let (v, len) = parse_int_len(&mut input, digits as usize, nodes, i, name, fm)?;
                set_int(&mut out.us, v, name)?;
                out.us = out.us.wrapping_mul(match len {
                    1 => 100000,
                    2 => 10000,
                    3 => 1000,
                    4 => 100,
                    5 => 10,
                    _ => 1,
                });
                skip_th(&mut input, &sfx);
            }
            SSSS => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.ssss, v, name)?;
                skip_th(&mut input, &sfx);
            }
            tz | TZ | OF => {
                return Err(pg_err!(FEATURE_NOT_SUPPORTED, "formatting field \"{}\" is only supported in to_char", name));
            }
            TZH => {
                // A minus sign skipped as a separator belongs to the hour.
                let c = input.peek();
                if c == b'+' || c == b'-' || c == b' ' {
                    out.tzsign = if c == b'-' { -1 } else { 1 };
                    input.pos += 1;
                } else if extra_skip > 0 && input.pos > 0 && input.s[input.pos - 1] == b'-' {
                    out.tzsign = -1;
                } else {
                    out.tzsign = 1;
                }
                let (v, _) = parse_int_len(&mut input, 2, nodes, i, name, fm)?;
                set_int(&mut out.tzh, v, name)?;
            }
            TZM => {
                if out.tzsign == 0 {
                    out.tzsign = 1;
                }
                let (v, _) = parse_int_len(&mut input, 2, nodes, i, name, fm)?;
                set_int(&mut out.tzm, v, name)?;
            }
            A_D | B_C | a_d | b_c => {
                let v = seq_search(&mut input, &["a.d.", "b.c.", "A.D.", "B.C."], name)?;
                set_int(&mut out.bc, (v % 2) as i32, name)?;
            }
            AD | BC | ad | bc => {
                let v = seq_search(&mut input, &["ad", "bc", "AD", "BC"], name)?;
                set_int(&mut out.bc, (v % 2) as i32, name)?;
            }
            MONTH | Month | month => {
                let v = seq_search(&mut input, &FULL_MONTH_NAMES, name)?;
                set_int(&mut out.mm, v as i32 + 1, name)?;
            }
            MON | Mon | mon => {
                let v = seq_search(&mut input, &MONTH_NAMES, name)?;
                set_int(&mut out.mm, v as i32 + 1, name)?;
            }
            MM => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.mm, v, name)?;
                skip_th(&mut input, &sfx);
            }
            DAY | Day | day => {
                let v = seq_search(&mut input, &FULL_DAY_NAMES, name)?;
                set_int(&mut out.d, v as i32, name)?;
                out.d = out.d.wrapping_add(1);
            }
            DY | Dy | dy => {
                let v = seq_search(&mut input, &SHORT_DAY_NAMES, name)?;
                set_int(&mut out.d, v as i32, name)?;
                out.d = out.d.wrapping_add(1);
            }
            DDD => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.ddd, v, name)?;
                skip_th(&mut input, &sfx);
            }
            IDDD => {
                let (v, _) = parse_int_len(&mut input, 3, nodes, i, name, fm)?;
                set_int(&mut out.ddd, v, name)?;
                skip_th(&mut input, &sfx);
            }
            DD => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.dd, v, name)?;
                skip_th(&mut input, &sfx);
            }
            D => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.d, v, name)?;
                skip_th(&mut input, &sfx);
            }
            ID => {
                let (v, _) = parse_int_len(&mut input, 1, nodes, i, name, fm)?;
                set_int(&mut out.d, v, name)?;
                // Shift to Gregorian numbering, where Sunday is 1.
                out.d = out.d.wrapping_add(1);
                if out.d > 7 {
                    out.d = 1;
                }
                skip_th(&mut input, &sfx);
            }
            WW | IW => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.ww, v, name)?;
                skip_th(&mut input, &sfx);
            }
            Q => {
                // Parsed but ignored: which date in the quarter would it mean?
                parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                skip_th(&mut input, &sfx);
            }
            CC => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.cc, v, name)?;
                skip_th(&mut input, &sfx);
            }
            Y_YYY => {
                // sscanf("%d,%03d")
                let rest = &input.s[input.pos..];
                let (mill, used1, _) = strtol_bytes(rest);
                let ok = used1 > 0 && rest.get(used1) == Some(&b',');
                let (years, used2) = if ok {
                    let after = &rest[used1 + 1..];
                    let digits = after.iter().take(3).take_while(|b| b.is_ascii_digit()).count();
                    if digits == 0 {
                        (0, 0)
                    } else {
                        (std::str::from_utf8(&after[..digits]).unwrap().parse::<i64>().unwrap(), digits)
                    }
                } else {
                    (0, 0)
                };
                if !ok || used2 == 0 {
                    return Err(pg_err!(INVALID_DATETIME_FORMAT, "invalid input string for \"Y,YYY\""));
                }
                let total = mill
                    .checked_mul(1000)
                    .and_then(|m| m.checked_add(years))
                    .filter(|t| *t >= i32::MIN as i64 && *t <= i32::MAX as i64)
                    .ok_or_else(|| pg_err!(DATETIME_FIELD_OVERFLOW, "value for \"Y,YYY\" in source string is out of range"))?;
                set_int(&mut out.year, total as i32, name)?;
                out.yysz = 4;
                input.pos += used1 + 1 + used2;
                skip_th(&mut input, &sfx);
            }
            YYYY | IYYY => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.year, v, name)?;
                out.yysz = 4;
                skip_th(&mut input, &sfx);
            }
            YYY | IYY | YY | IY | Y | I => {
                let (v, len) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.year, v, name)?;
                if len < 4 {
                    out.year = adjust_partial_year_to_2020(out.year);
                }
                out.yysz = match k.key {
                    YYY | IYY => 3,
                    YY | IY => 2,
                    _ => 1,
                };
                skip_th(&mut input, &sfx);
            }
            RM | rm => {
                let v = seq_search(&mut input, &RM_LOWER, name)?;
                set_int(&mut out.mm, 12 - v as i32, name)?;
            }
            W => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.w, v, name)?;
                skip_th(&mut input, &sfx);
            }
            J => {
                let (v, _) = parse_int_len(&mut input, key_len, nodes, i, name, fm)?;
                set_int(&mut out.j, v, name)?;
                skip_th(&mut input, &sfx);
            }
        }
        // Ignore all spaces after fields.
        if !fx_mode {
            extra_skip = 0;
            while !input.at_end() && input.peek().is_ascii_whitespace() {
                input.pos += 1;
                extra_skip += 1;
            }
        }
    }
    Ok(out)
}

/// What do_to_timestamp produces: local fields and an explicit zone, if any.
struct Parsed {
    tm: Tm,
    /// Seconds west, from TZH/TZM.
    tz: Option<i32>,
    /// FF1..FF6 precision.
    fprec: i32,
}

fn field_overflow(text: &str) -> PgError {
    pg_err!(DATETIME_FIELD_OVERFLOW, "date/time field value out of range: \"{}\"", text)
}

/// do_to_timestamp: reads `text` per `fmt` and assembles the date and time.
fn do_to_timestamp(text: &str, fmt: &str) -> PgResult<Parsed> {
    let mut f = if fmt.is_empty() { FromChar::default() } else { dch_from_char(&parse_format(fmt), text)? };
    let mut tm = Tm { year: 0, mon: 1, mday: 1, hour: 0, min: 0, sec: 0, fsec: 0 };
    // ZERO_tm leaves year 0, month 1, day 1; fmask tracks what was given.
    let mut fmask = 0u8;
    const YEAR: u8 = 1;
    const MONTH: u8 = 2;
    const DAY: u8 = 4;

    if f.ssss != 0 {
        let mut x = f.ssss;
        tm.hour = x / 3600;
        x %= 3600;
        tm.min = x / 60;
        x %= 60;
        tm.sec = x;
    }
    if f.ss != 0 {
        tm.sec = f.ss;
    }
    if f.mi != 0 {
        tm.min = f.mi;
    }
    if f.hh != 0 {
        tm.hour = f.hh;
    }
    if f.clock_12 {
        if tm.hour < 1 || tm.hour > 12 {
            return Err(pg_err!(INVALID_DATETIME_FORMAT, "hour \"{}\" is invalid for the 12-hour clock", tm.hour)
                .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        if f.pm != 0 && tm.hour < 12 {
            tm.hour += 12;
        } else if f.pm == 0 && tm.hour == 12 {
            tm.hour = 0;
        }
    }
    if f.year != 0 {
        if f.cc != 0 && f.yysz <= 2 {
            // CC with YY: the two low digits within that century (the 21st is 2001-2100).
            if f.bc != 0 {
                f.cc = f.cc.wrapping_neg();
            }
            tm.year = f.year % 100;
            if tm.year != 0 {
                tm.year = if f.cc >= 0 {
                    f.cc.checked_sub(1).and_then(|c| c.checked_mul(100)).and_then(|t| t.checked_add(tm.year)).ok_or_else(|| field_overflow(text))?
                } else {
                    f.cc.checked_add(1)
                        .and_then(|c| c.checked_mul(100))
                        .and_then(|t| t.checked_sub(tm.year))
                        .and_then(|t| t.checked_add(1))
                        .ok_or_else(|| field_overflow(text))?
                };
            } else {
                tm.year = f.cc.checked_mul(100).and_then(|c| c.checked_add(if f.cc >= 0 { 0 } else { 1 })).ok_or_else(|| field_overflow(text))?;
            }
        } else {
            tm.year = f.year;
            if f.bc != 0 {
                tm.year = tm.year.wrapping_neg();
            }
            if tm.year < 0 {
                tm.year += 1;
            }
        }
        fmask |= YEAR;
    } else if f.cc != 0 {
        if f.bc != 0 {
            f.cc = f.cc.wrapping_neg();
        }
        tm.year = if f.cc >= 0 {
            f.cc.checked_sub(1).and_then(|c| c.checked_mul(100)).and_then(|t| t.checked_add(1))
        } else {
            f.cc.checked_mul(100).and_then(|t| t.checked_add(1))
        }
        .ok_or_else(|| field_overflow(text))?;
        fmask |= YEAR;
    }
    if f.j != 0 {
        let (y, m, d) = j2date(f.j);
        tm.year = y;
        tm.mon = m;
        tm.mday = d;
        fmask |= YEAR | MONTH | DAY;
    }
    if f.ww != 0 {
        if f.mode == Some(DateMode::IsoWeek) {
            let jd = if f.d != 0 {
                // Gregorian weekday numbering (Sunday = 1) to ISO.
                let jd = isoweek2j(tm.year, f.ww);
                if f.d > 1 {
                    jd.wrapping_add(f.d - 2)
                } else {
                    jd.wrapping_add(6)
                }
            } else {
                isoweek2j(tm.year, f.ww)
            };
            let (y, m, d) = j2date(jd);
            tm.year = y;
            tm.mon = m;
            tm.mday = d;
            fmask |= YEAR | MONTH | DAY;
        } else {
            f.ddd = f.ww.checked_sub(1).and_then(|w| w.checked_mul(7)).and_then(|t| t.checked_add(1)).ok_or_else(|| field_overflow(text))?;
        }
    }
    if f.w != 0 {
        f.dd = f.w.checked_sub(1).and_then(|w| w.checked_mul(7)).and_then(|t| t.checked_add(1)).ok_or_else(|| field_overflow(text))?;
    }
    if f.dd != 0 {
        tm.mday = f.dd;
        fmask |= DAY;
    }
    if f.mm != 0 {
        tm.mon = f.mm;
        fmask |= MONTH;
    }
    if f.ddd != 0 && (tm.mon <= 1 || tm.mday <= 1) {
        if tm.year == 0 && f.bc == 0 {
            return Err(pg_err!(INVALID_DATETIME_FORMAT, "cannot calculate day of year without year information"));
        }
        if f.mode == Some(DateMode::IsoWeek) {
            let j0 = isoweek2j(tm.year, 1) - 1;
            let (y, m, d) = j2date(j0.wrapping_add(f.ddd));
            tm.year = y;
            tm.mon = m;
            tm.mday = d;
            fmask |= YEAR | MONTH | DAY;
        } else {
            const YSUM: [[i32; 13]; 2] = [
                [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
                [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
            ];
            let y = &YSUM[is_leap(tm.year) as usize];
            let mut i = 1;
            while i <= 12 {
                if f.ddd <= y[i] {
                    break;
                }
                i += 1;
            }
            let i = i.min(12);
            if tm.mon <= 1 {
                tm.mon = i as i32;
            }
            if tm.mday <= 1 {
                tm.mday = f.ddd - y[i - 1];
            }
            fmask |= MONTH | DAY;
        }
    }
    let mut fsec: i64 = 0;
    if f.ms != 0 {
        fsec = (f.ms as i64) * 1000;
        if fsec > i32::MAX as i64 {
            return Err(field_overflow(text));
        }
    }
    if f.us != 0 {
        fsec += f.us as i64;
    }
    // Range-check the date fields that were given (ValidateDate, with BC already applied).
    if fmask != 0 {
        let bad = (fmask & MONTH != 0 && !(1..=12).contains(&tm.mon))
            || (fmask & DAY != 0 && !(1..=31).contains(&tm.mday))
            || (fmask & (YEAR | MONTH | DAY) == YEAR | MONTH | DAY && tm.mday > days_in_month(tm.year, tm.mon));
        if bad {
            return Err(field_overflow(text));
        }
    }
    if !(0..24).contains(&tm.hour) || !(0..60).contains(&tm.min) || !(0..60).contains(&tm.sec) || !(0..USECS_PER_SEC).contains(&fsec) {
        return Err(field_overflow(text));
    }
    tm.fsec = fsec as i32;
    let tz = if f.tzsign != 0 {
        if f.tzh < 0 || f.tzh > MAX_TZDISP_HOUR || f.tzm < 0 || f.tzm >= 60 {
            return Err(pg_err!(INVALID_TIME_ZONE_DISPLACEMENT_VALUE, "time zone displacement out of range: \"{}\"", text));
        }
        let off = (f.tzh * 60 + f.tzm) * 60;
        Some(if f.tzsign > 0 { -off } else { off })
    } else {
        None
    };
    Ok(Parsed { tm, tz, fprec: f.ff })
}

/// to_timestamp(text, text): the fields read are local time in the
/// session zone unless TZH/TZM gave an offset.
pub fn to_timestamp(text: &str, fmt: &str, settings: &DateTimeSettings) -> PgResult<i64> {
    let p = do_to_timestamp(text, fmt)?;
    let tz = match p.tz {
        Some(tz) => tz,
        None => settings.time_zone.offset_for_local(super::timestamp::local_seconds(&p.tm)),
    };
    let ts = tm_to_timestamp(&p.tm, Some(tz)).ok_or_else(timestamp_out_of_range)?;
    if p.fprec != 0 {
        return apply_timestamp_typmod(ts, p.fprec);
    }
    Ok(ts)
}

/// to_date(text, text).
pub fn to_date(text: &str, fmt: &str, _settings: &DateTimeSettings) -> PgResult<i32> {
    let p = do_to_timestamp(text, fmt)?;
    let out_of_range = || pg_err!(DATETIME_FIELD_OVERFLOW, "date out of range: \"{}\"", text);
    if !is_valid_julian(p.tm.year, p.tm.mon) {
        return Err(out_of_range());
    }
    let date = date2j(p.tm.year, p.tm.mon, p.tm.mday) - POSTGRES_EPOCH_JDATE;
    if !is_valid_date(date) {
        return Err(out_of_range());
    }
    Ok(date)
}
