//! The session settings date/time values depend on (DateStyle,
//! IntervalStyle, TimeZone) and the text SET accepts and SHOW prints for
//! them, as PostgreSQL's check_datestyle/assign_datestyle do.

use crate::error::{PgError, PgResult};
use crate::pg_err;

use super::timezone::TimeZone;

/// The output half of DateStyle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateStyleOutput {
    Iso,
    Postgres,
    Sql,
    German,
}

/// The field-order half of DateStyle: how ambiguous numeric dates are read
/// (and, for the Postgres and SQL styles, written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DateOrder {
    Mdy,
    Dmy,
    Ymd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntervalStyle {
    Postgres,
    PostgresVerbose,
    SqlStandard,
    Iso8601,
}

/// Everything about a session that date/time input and output depend on.
#[derive(Clone, Debug, PartialEq)]
pub struct DateTimeSettings {
    pub date_style: DateStyleOutput,
    pub date_order: DateOrder,
    pub interval_style: IntervalStyle,
    pub time_zone: TimeZone,
}

impl Default for DateTimeSettings {
    fn default() -> Self {
        DateTimeSettings {
            date_style: DateStyleOutput::Iso,
            date_order: DateOrder::Mdy,
            interval_style: IntervalStyle::Postgres,
            time_zone: TimeZone::utc(),
        }
    }
}

fn datestyle_error(value: &str, detail: impl Into<String>) -> PgError {
    pg_err!(INVALID_PARAMETER_VALUE, "invalid value for parameter \"DateStyle\": \"{}\"", value).with_detail(detail)
}

/// Splits a comma-separated GUC list the way SplitIdentifierString does:
/// items are trimmed, may be double-quoted, and must be separated by commas.
fn split_list(value: &str) -> Option<Vec<String>> {
    let mut items = Vec::new();
    let mut chars = value.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return None,
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        item.push('"');
                    }
                    Some('"') => break,
                    Some(c) => item.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c.is_whitespace() {
                    break;
                }
                item.push(c.to_ascii_lowercase());
                chars.next();
            }
            if item.is_empty() {
                return None;
            }
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        items.push(item);
        match chars.next() {
            None => return Some(items),
            Some(',') => continue,
            Some(_) => return None,
        }
    }
}

/// Parses a DateStyle value ("ISO, DMY", "German", "euro", ...) starting
/// from the current setting: a value naming only the style keeps the
/// current order and vice versa. "German" implies DMY unless an order is given.
pub fn parse_datestyle(value: &str, current: (DateStyleOutput, DateOrder)) -> PgResult<(DateStyleOutput, DateOrder)> {
    let items = split_list(value).ok_or_else(|| datestyle_error(value, "List syntax is invalid."))?;
    let (mut style, mut order) = current;
    let mut have_style = false;
    let mut have_order = false;
    let mut ok = true;
    for item in &items {
        let tok = item.to_ascii_lowercase();
        let new_style = match tok.as_str() {
            "iso" => Some(DateStyleOutput::Iso),
            "sql" => Some(DateStyleOutput::Sql),
            "postgres" => Some(DateStyleOutput::Postgres),
            "german" => Some(DateStyleOutput::German),
            _ => None,
        };
        let new_order = match tok.as_str() {
            "ymd" => Some(DateOrder::Ymd),
            "dmy" | "euro" | "european" => Some(DateOrder::Dmy),
            "mdy" | "us" | "noneuro" | "noneuropean" => Some(DateOrder::Mdy),
            _ => None,
        };
        if let Some(s) = new_style {
            if have_style && style != s {
                ok = false;
            }
            style = s;
            have_style = true;
            // GERMAN also sets DMY, unless an order was given explicitly.
            if s == DateStyleOutput::German && !have_order {
                order = DateOrder::Dmy;
            }
        } else if let Some(o) = new_order {
            if have_order && order != o {
                ok = false;
            }
            order = o;
            have_order = true;
        } else if tok == "default" {
            if !have_style {
                style = DateStyleOutput::Iso;
            }
            if !have_order {
                order = DateOrder::Mdy;
            }
        } else {
            return Err(datestyle_error(value, format!("Unrecognized key word: \"{item}\".")));
        }
    }
    if !ok {
        return Err(datestyle_error(value, "Conflicting \"datestyle\" specifications."));
    }
    Ok((style, order))
}

/// SHOW DateStyle's text, e.g. "ISO, MDY".
pub fn format_datestyle(style: DateStyleOutput, order: DateOrder) -> String {
    let s = match style {
        DateStyleOutput::Iso => "ISO",
        DateStyleOutput::Postgres => "Postgres",
        DateStyleOutput::Sql => "SQL",
        DateStyleOutput::German => "German",
    };
    let o = match order {
        DateOrder::Mdy => "MDY",
        DateOrder::Dmy => "DMY",
        DateOrder::Ymd => "YMD",
    };
    format!("{s}, {o}")
}

/// Parses an IntervalStyle value (case-insensitive).
pub fn parse_intervalstyle(value: &str) -> PgResult<IntervalStyle> {
    match value.trim().to_ascii_lowercase().as_str() {
        "postgres" => Ok(IntervalStyle::Postgres),
        "postgres_verbose" => Ok(IntervalStyle::PostgresVerbose),
        "sql_standard" => Ok(IntervalStyle::SqlStandard),
        "iso_8601" => Ok(IntervalStyle::Iso8601),
        _ => Err(pg_err!(INVALID_PARAMETER_VALUE, "invalid value for parameter \"IntervalStyle\": \"{}\"", value)
            .with_hint("Available values: postgres, postgres_verbose, sql_standard, iso_8601.")),
    }
}

/// SHOW IntervalStyle's text.
pub fn format_intervalstyle(style: IntervalStyle) -> &'static str {
    match style {
        IntervalStyle::Postgres => "postgres",
        IntervalStyle::PostgresVerbose => "postgres_verbose",
        IntervalStyle::SqlStandard => "sql_standard",
        IntervalStyle::Iso8601 => "iso_8601",
    }
}
