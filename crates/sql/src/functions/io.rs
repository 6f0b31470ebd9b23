//! Type input and output: every built-in type's text form (the *in/*out
//! functions) and binary form (*recv/*send), dispatching to the type
//! modules of tusk-types under the session's settings.

use std::sync::Arc;

use tusk_types::array::{format_array, parse_array, Array};
use tusk_types::datetime as dt;
use tusk_types::float::{format_float4, format_float8, parse_float4, parse_float8};
use tusk_types::numeric::Numeric;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use crate::catalog::builtins;
use crate::settings::Settings;

const VARHDRSZ: i32 = 4;

fn type_display(t: Oid) -> String {
    crate::analyzer::types::format_type(builtins(), t, -1)
}

fn invalid(t: Oid, s: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type {}: \"{}\"", type_display(t), s))
}

// ---------------------------------------------------------------- text output

/// The text form of a non-null datum of type `ty`.
pub fn format_text(d: &Datum, ty: Oid, settings: &Settings) -> String {
    let mut buf = Vec::new();
    write_text(&mut buf, d, ty, settings);
    String::from_utf8(buf).unwrap_or_default()
}

/// Appends the text form of `d` to `buf`.
pub fn write_text(buf: &mut Vec<u8>, d: &Datum, ty: Oid, settings: &Settings) {
    use std::io::Write;
    match d {
        Datum::Null => {}
        Datum::Text(s) | Datum::Json(s) => buf.extend_from_slice(s.as_bytes()),
        Datum::Jsonb(j) => buf.extend_from_slice(j.to_string().as_bytes()),
        Datum::Int4(v) => {
            let _ = write!(buf, "{v}");
        }
        Datum::Int8(v) if ty == oid::TID => {
            let (block, offset) = crate::executor::syscols::unpack_tid(*v);
            let _ = write!(buf, "({block},{offset})");
        }
        Datum::Int8(v) => {
            let _ = write!(buf, "{v}");
        }
        Datum::Int2(v) => {
            let _ = write!(buf, "{v}");
        }
        Datum::Bool(b) => buf.push(if *b { b't' } else { b'f' }),
        Datum::Float8(v) => buf.extend_from_slice(format_float8(*v, settings.extra_float_digits).as_bytes()),
        Datum::Float4(v) => buf.extend_from_slice(format_float4(*v, settings.extra_float_digits).as_bytes()),
        Datum::Numeric(n) => {
            let _ = write!(buf, "{n}");
        }
        Datum::Oid(0) if matches!(ty, oid::REGTYPE | oid::REGPROC | oid::REGCLASS | oid::REGPROCEDURE | oid::REGNAMESPACE | oid::REGROLE | oid::REGOPER | oid::REGOPERATOR) => buf.push(b'-'),
        Datum::Oid(v) => match ty {
            oid::REGTYPE => buf.extend_from_slice(regtype_name(*v).as_bytes()),
            super::tsearch::REGCONFIG | super::tsearch::REGDICTIONARY => buf.extend_from_slice(super::tsearch::reg_ts_name(ty, *v).as_bytes()),
            oid::REGPROCEDURE | oid::REGOPER | oid::REGOPERATOR | 4191 => buf.extend_from_slice(reg_object_name(ty, *v).as_bytes()),
            oid::REGPROC if builtins().proc(*v).is_some_and(|p| p.namespace == crate::catalog::PG_CATALOG_NAMESPACE) => {
                buf.extend_from_slice(reg_object_name(ty, *v).as_bytes())
            }
            oid::REGPROC => match builtins().proc(*v) {
                Some(p) => {
                    // information_schema's functions are qualified unless
                    // that schema is on the search path.
                    if p.namespace == crate::catalog::INFORMATION_SCHEMA_NAMESPACE && !settings.search_path.iter().any(|s| s == "information_schema") {
                        buf.extend_from_slice(b"information_schema.");
                    }
                    buf.extend_from_slice(p.name.as_bytes())
                }
                None => {
                    let _ = write!(buf, "{v}");
                }
            },
            _ => {
                let _ = write!(buf, "{v}");
            }
        },
        Datum::Char(c) => {
            if *c != 0 {
                buf.push(*c)
            }
        }
        Datum::Bytea(b) => {
            if settings.bytea_output_hex {
                buf.extend_from_slice(b"\\x");
                buf.extend_from_slice(hex::encode(b.as_ref()).as_bytes());
            } else {
                buf.extend_from_slice(bytea_escape(b).as_bytes());
            }
        }
        Datum::Uuid(u) => {
            let s = uuid::Uuid::from_bytes(*u).hyphenated().to_string();
            buf.extend_from_slice(s.as_bytes());
        }
        Datum::Date(v) => buf.extend_from_slice(dt::date_out(*v, &settings.datetime).as_bytes()),
        Datum::Time(v) => buf.extend_from_slice(dt::time_out(*v).as_bytes()),
        Datum::TimeTz(t, z) => buf.extend_from_slice(dt::timetz_out(dt::TimeTz { time: *t, zone: *z }).as_bytes()),
        Datum::Timestamp(v) => buf.extend_from_slice(dt::timestamp_out(*v, &settings.datetime).unwrap_or_default().as_bytes()),
        Datum::TimestampTz(v) => buf.extend_from_slice(dt::timestamptz_out(*v, &settings.datetime).unwrap_or_default().as_bytes()),
        Datum::Interval(i) => buf.extend_from_slice(dt::interval_out(i, settings.datetime.interval_style).as_bytes()),
        // int2vector and oidvector print as their elements separated by
        // spaces (int2vectorout), whatever their bounds.
        Datum::Array(a) if ty == oid::INT2VECTOR || ty == oid::OIDVECTOR => {
            let elem = if ty == oid::INT2VECTOR { oid::INT2 } else { oid::OID };
            for (i, e) in a.elements.iter().enumerate() {
                if i > 0 {
                    buf.push(b' ');
                }
                write_text(buf, e, elem, settings);
            }
        }
        Datum::Array(a) => {
            let elem = if a.element_type != 0 { a.element_type } else { builtins().element_of(ty) };
            let delim = builtins().type_info(elem).map(|t| t.delim).unwrap_or(',');
            let s = format_array(a, delim, &mut |e| format_text(e, elem, settings));
            buf.extend_from_slice(s.as_bytes());
        }
        Datum::Net(_) | Datum::Bits(_) => buf.extend_from_slice(super::nettypes::format_text(d, ty).as_bytes()),
        Datum::Record(fields) => {
            // A named composite type knows its fields' types; an anonymous
            // record's are guessed from the values.
            let field_types = crate::catalog::types::composite_fields(ty);
            buf.push(b'(');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                if f.is_null() {
                    continue;
                }
                let ft = field_types.as_ref().and_then(|t| t.get(i)).map(|t| t.1.oid).unwrap_or_else(|| guess_type(f));
                let s = format_text(f, ft, settings);
                let needs_quote = s.is_empty() || s.chars().any(|c| matches!(c, ',' | '(' | ')' | '"' | '\\') || c.is_ascii_whitespace());
                if needs_quote {
                    buf.push(b'"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            let mut tmp = [0u8; 4];
                            buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                        }
                        let mut tmp = [0u8; 4];
                        buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                    }
                    buf.push(b'"');
                } else {
                    buf.extend_from_slice(s.as_bytes());
                }
            }
            buf.push(b')');
        }
        Datum::Range(r) => buf.extend_from_slice(super::range::format_range(r, settings).as_bytes()),
        Datum::Multirange(m) => buf.extend_from_slice(super::range::format_multirange(m, settings).as_bytes()),
        Datum::Enum(label) => buf.extend_from_slice(super::enums::label_text(*label).as_bytes()),
    }
}

/// The type to print a record field with (records do not carry field types).
pub fn guess_type(d: &Datum) -> Oid {
    match d {
        Datum::Bool(_) => oid::BOOL,
        Datum::Int2(_) => oid::INT2,
        Datum::Int4(_) => oid::INT4,
        Datum::Int8(_) => oid::INT8,
        Datum::Float4(_) => oid::FLOAT4,
        Datum::Float8(_) => oid::FLOAT8,
        Datum::Numeric(_) => oid::NUMERIC,
        Datum::Bytea(_) => oid::BYTEA,
        Datum::Date(_) => oid::DATE,
        Datum::Time(_) => oid::TIME,
        Datum::TimeTz(..) => oid::TIMETZ,
        Datum::Timestamp(_) => oid::TIMESTAMP,
        Datum::TimestampTz(_) => oid::TIMESTAMPTZ,
        Datum::Interval(_) => oid::INTERVAL,
        Datum::Uuid(_) => oid::UUID,
        Datum::Oid(_) => oid::OID,
        Datum::Char(_) => oid::CHAR,
        Datum::Array(a) => builtins().array_of(a.element_type),
        Datum::Record(_) => oid::RECORD,
        Datum::Net(_) | Datum::Bits(_) => super::nettypes::guess_type(d),
        Datum::Range(r) => r.type_oid,
        Datum::Multirange(m) => m.type_oid,
        Datum::Enum(label) => super::enums::label_type(*label).unwrap_or(oid::TEXT),
        _ => oid::TEXT,
    }
}

/// regprocout, regprocedureout, regoperout, regoperatorout and
/// regcollationout for built-in objects: a name that is not unique is
/// qualified (regproc, regoper), a signature lists its argument types
/// (NONE for a prefix operator's missing left one); an OID naming nothing
/// prints as its number.
fn reg_object_name(ty: Oid, o: Oid) -> String {
    let b = builtins();
    let name = match ty {
        oid::REGPROC | oid::REGPROCEDURE => b.proc(o).map(|p| {
            let unique = b.procs_by_name.get(&p.name).is_some_and(|all| all.len() == 1);
            if ty == oid::REGPROCEDURE {
                let args: Vec<String> = p.argtypes.iter().map(|&t| crate::analyzer::types::format_type_be(b, t)).collect();
                format!("{}({})", super::quote_ident(&p.name), args.join(","))
            } else if unique {
                super::quote_ident(&p.name)
            } else {
                format!("pg_catalog.{}", super::quote_ident(&p.name))
            }
        }),
        oid::REGOPER | oid::REGOPERATOR => b.operators.get(&o).map(|op| {
            if ty == oid::REGOPERATOR {
                let side = |t: Oid| if t == 0 { "NONE".to_string() } else { crate::analyzer::types::format_type_be(b, t) };
                format!("{}({},{})", op.name, side(op.left), side(op.right))
            } else if b.operators_by_name.get(&op.name).is_some_and(|all| all.len() == 1) {
                op.name.clone()
            } else {
                format!("pg_catalog.{}", op.name)
            }
        }),
        _ => crate::catalog::system::collation_name(o).map(|n| super::quote_ident(&n)),
    };
    name.unwrap_or_else(|| o.to_string())
}

fn regtype_name(t: Oid) -> String {
    if builtins().type_info(t).is_none() {
        return t.to_string();
    }
    crate::analyzer::types::format_type_be(builtins(), t)
}

/// bytea's escape output format.
pub fn bytea_escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        if c == b'\\' {
            s.push_str("\\\\");
        } else if !(0x20..0x7f).contains(&c) {
            s.push_str(&format!("\\{:03o}", c));
        } else {
            s.push(c as char);
        }
    }
    s
}

// ---------------------------------------------------------------- text input

/// Parses bytea input (hex `\x...` or escape format).
pub fn parse_bytea(s: &str) -> PgResult<Datum> {
    if let Some(h) = s.strip_prefix("\\x") {
        let clean: String = h.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        if clean.len() % 2 == 1 {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid hexadecimal data: odd number of digits"));
        }
        for c in clean.chars() {
            if !c.is_ascii_hexdigit() {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid hexadecimal digit: \"{c}\"")));
            }
        }
        return Ok(Datum::bytea(hex::decode(clean).expect("validated hex")));
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if i + 1 < b.len() && b[i + 1] == b'\\' {
            out.push(b'\\');
            i += 2;
        } else if i + 3 < b.len()
            && (b'0'..=b'3').contains(&b[i + 1])
            && (b'0'..=b'7').contains(&b[i + 2])
            && (b'0'..=b'7').contains(&b[i + 3])
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea"));
        }
    }
    Ok(Datum::bytea(out))
}

fn parse_int(s: &str, t: Oid) -> PgResult<i64> {
    let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(invalid(t, s));
    }
    let out_of_range = || {
        PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{}\" is out of range for type {}", s, type_display(t)),
        )
    };
    let mut v: i128 = 0;
    for c in digits.bytes() {
        v = v * 10 + (c - b'0') as i128;
        if v > u64::MAX as i128 {
            return Err(out_of_range());
        }
    }
    let v = if neg { -v } else { v };
    let (min, max) = match t {
        oid::INT2 => (i16::MIN as i128, i16::MAX as i128),
        oid::INT4 => (i32::MIN as i128, i32::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    };
    if v < min || v > max {
        return Err(out_of_range());
    }
    Ok(v as i64)
}

fn parse_bool(s: &str) -> PgResult<bool> {
    let t = s.trim().to_ascii_lowercase();
    let ok = |word: &str, min: usize| t.len() >= min && word.starts_with(t.as_str());
    if ok("true", 1) || ok("yes", 1) || t == "on" || t == "1" {
        Ok(true)
    } else if ok("false", 1) || ok("no", 1) || ok("off", 2) || t == "0" {
        Ok(false)
    } else {
        Err(invalid(oid::BOOL, s))
    }
}

fn parse_uuid(s: &str) -> PgResult<[u8; 16]> {
    let t = s.trim();
    let inner = t.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(t);
    // PostgreSQL accepts hyphens after any group of four hex digits.
    let hexes: String = inner.chars().filter(|&c| c != '-').collect();
    let hyphens_ok = !inner.starts_with('-') && !inner.ends_with('-') && !inner.contains("--");
    if hexes.len() != 32 || !hexes.chars().all(|c| c.is_ascii_hexdigit()) || !hyphens_ok {
        return Err(invalid(oid::UUID, s));
    }
    let mut out = [0u8; 16];
    hex::decode_to_slice(&hexes, &mut out).map_err(|_| invalid(oid::UUID, s))?;
    Ok(out)
}

/// Applies a character type's length modifier (varchar/bpchar), as the
/// length-coercion functions do: explicit casts truncate, assignments fail
/// unless only spaces are cut.
pub fn apply_char_typmod(s: &str, ty: Oid, typmod: i32, explicit: bool) -> PgResult<String> {
    if typmod < VARHDRSZ {
        return Ok(s.to_string());
    }
    let max = (typmod - VARHDRSZ) as usize;
    let nchars = s.chars().count();
    match ty {
        oid::VARCHAR => {
            if nchars <= max {
                return Ok(s.to_string());
            }
            let cut: String = s.chars().take(max).collect();
            let rest: String = s.chars().skip(max).collect();
            if !explicit && !rest.chars().all(|c| c == ' ') {
                return Err(PgError::new(
                    sqlstate::STRING_DATA_RIGHT_TRUNCATION,
                    format!("value too long for type character varying({max})"),
                ));
            }
            Ok(cut)
        }
        oid::BPCHAR => {
            if nchars <= max {
                // One allocation, padded in one go (char by char was a few
                // % of loading pgbench_accounts, whose filler is char(84)).
                const SPACES: &str = "                                                                ";
                let mut out = String::with_capacity(s.len() + (max - nchars));
                out.push_str(s);
                let mut pad = max - nchars;
                while pad > 0 {
                    let n = pad.min(SPACES.len());
                    out.push_str(&SPACES[..n]);
                    pad -= n;
                }
                return Ok(out);
            }
            let cut: String = s.chars().take(max).collect();
            let rest: String = s.chars().skip(max).collect();
            if !explicit && !rest.chars().all(|c| c == ' ') {
                return Err(PgError::new(sqlstate::STRING_DATA_RIGHT_TRUNCATION, format!("value too long for type character({max})")));
            }
            Ok(cut)
        }
        _ => Ok(s.to_string()),
    }
}

/// tidin: `(block,offset)`, a 32-bit block number and a 16-bit offset.
fn parse_tid(s: &str) -> PgResult<i64> {
    let bad = || invalid(oid::TID, s);
    let inner = s.trim_start().strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(bad)?;
    let (b, o) = inner.split_once(',').ok_or_else(bad)?;
    // strtoul: leading blanks and a sign are accepted, as in tidin.
    let num = |t: &str| -> Option<i64> {
        let t = t.trim_start();
        let (neg, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let v: i64 = digits.parse().ok()?;
        Some(if neg { -v } else { v })
    };
    let block = num(b).ok_or_else(bad)?;
    let offset = num(o).ok_or_else(bad)?;
    let block = if (0..=u32::MAX as i64).contains(&block) {
        block as u32
    } else if (i32::MIN as i64..0).contains(&block) {
        block as i32 as u32
    } else {
        return Err(bad());
    };
    if !(0..=u16::MAX as i64).contains(&offset) {
        return Err(bad());
    }
    Ok(crate::executor::syscols::pack_tid(block, offset as u16))
}

/// xidin / cidin: an unsigned 32-bit number (decimal, or 0x hex and 0
/// octal as strtoul reads them).
fn parse_xid(s: &str, ty: Oid) -> PgResult<u32> {
    let t = s.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse::<u64>().ok()
    };
    match parsed {
        Some(v) if v <= u32::MAX as u64 => Ok(v as u32),
        _ => Err(invalid(ty, s)),
    }
}

/// Parses text into a datum of `ty` (with its typmod), as the type's input function.
pub fn parse_text(s: &str, ty: SqlType, settings: &Settings, explicit: bool) -> PgResult<Datum> {
    let t = ty.oid;
    // Read only by the date/time inputs ('now', 'today'...): asking the
    // clock for every value was a tenth of a bulk COPY's time.
    let now = crate::session::now_micros;
    Ok(match t {
        // A refcursor is a portal's name.
        oid::TEXT | oid::UNKNOWN | oid::CSTRING | oid::REFCURSOR => Datum::text(s),
        oid::VARCHAR | oid::BPCHAR => Datum::from_string(apply_char_typmod(s, t, ty.typmod, explicit)?),
        oid::NAME => Datum::text(crate::commands::naming::clip(s, 63)),
        oid::INT2 => Datum::Int2(parse_int(s, t)? as i16),
        oid::INT4 => Datum::Int4(parse_int(s, t)? as i32),
        oid::INT8 => Datum::Int8(parse_int(s, t)?),
        oid::OID | oid::REGCLASS | oid::REGTYPE | oid::REGPROC | oid::REGPROCEDURE | oid::REGNAMESPACE | oid::REGROLE => {
            // oidin accepts -1 .. -2^31 and wraps them, as strtoul does.
            let v = s.trim().parse::<i64>().map_err(|_| invalid(oid::OID, s))?;
            if v < i32::MIN as i64 || v > u32::MAX as i64 {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("value \"{s}\" is out of range for type oid")));
            }
            Datum::Oid(v as u32)
        }
        oid::TID => Datum::Int8(parse_tid(s)?),
        oid::XID | oid::CID => Datum::Oid(parse_xid(s, t)?),
        oid::FLOAT4 => Datum::Float4(parse_float4(s)?),
        oid::FLOAT8 => Datum::Float8(parse_float8(s)?),
        oid::NUMERIC => {
            let n = Numeric::parse(s)?;
            Datum::numeric(if ty.typmod >= 0 { n.apply_typmod(ty.typmod)? } else { n })
        }
        oid::BOOL => Datum::Bool(parse_bool(s)?),
        oid::BYTEA => parse_bytea(s)?,
        oid::CHAR => Datum::Char(s.as_bytes().first().copied().unwrap_or(0)),
        oid::UUID => Datum::Uuid(parse_uuid(s)?),
        oid::DATE => Datum::Date(dt::date_in(s, &settings.datetime, now())?),
        oid::TIME => Datum::Time(dt::time_in(s, ty.typmod, &settings.datetime, now())?),
        oid::TIMETZ => {
            let v = dt::timetz_in(s, ty.typmod, &settings.datetime, now())?;
            Datum::TimeTz(v.time, v.zone)
        }
        oid::TIMESTAMP => Datum::Timestamp(dt::timestamp_in(s, ty.typmod, &settings.datetime, now())?),
        oid::TIMESTAMPTZ => Datum::TimestampTz(dt::timestamptz_in(s, ty.typmod, &settings.datetime, now())?),
        oid::INTERVAL => Datum::Interval(dt::interval_in(s, ty.typmod, settings.datetime.interval_style)?),
        oid::JSON => {
            tusk_types::json::json_validate(s)?;
            Datum::Json(Arc::from(s))
        }
        oid::JSONB => Datum::Jsonb(Arc::new(tusk_types::jsonb::Jsonb::parse(s)?)),
        oid::JSONPATH => super::jsonpath::parse_text(s)?,
        super::tsearch::TSVECTOR => Datum::from_string(super::tsearch::format_tsvector(&super::tsearch::parse_tsvector(s)?)),
        super::tsearch::TSQUERY => Datum::from_string(super::tsearch::format_tsquery(&super::tsearch::parse_tsquery(s)?)),
        super::tsearch::REGCONFIG => Datum::Oid(super::tsearch::regconfig_in(s)?),
        super::tsearch::REGDICTIONARY => Datum::Oid(super::tsearch::regdictionary_in(s)?),
        oid::VOID => Datum::text(""),
        oid::INET | oid::CIDR | oid::MACADDR | oid::MACADDR8 | oid::BIT | oid::VARBIT => super::nettypes::parse_text(s, ty, explicit)?,
        oid::XML => return Err(super::xml::no_xml_support()),
        oid::RECORD => return Err(PgError::unsupported("input of anonymous composite types")),
        oid::INT2VECTOR | oid::OIDVECTOR => return super::array_fns::vector_in(s, t, settings),
        _ if t >= oid::FIRST_NORMAL_OBJECT_ID && crate::catalog::enums::is_enum(t) => super::enums::enum_in(s, t)?,
        _ if t >= oid::FIRST_NORMAL_OBJECT_ID && crate::catalog::types::domain(t).is_some() => {
            return parse_text(s, crate::catalog::types::base_type(ty), settings, explicit);
        }
        _ if t >= oid::FIRST_NORMAL_OBJECT_ID && crate::catalog::types::composite_fields(t).is_some() => {
            let fields = crate::catalog::types::composite_fields(t).unwrap_or_default();
            return parse_record(s, &fields, settings);
        }
        _ => {
            if let Some(d) = super::range::parse_text(s, ty, settings, explicit)? {
                return Ok(d);
            }
            let elem = builtins().element_of(t);
            if elem != 0 {
                let delim = builtins().type_info(elem).map(|i| i.delim).unwrap_or(',');
                let et = SqlType { oid: elem, typmod: ty.typmod };
                let a = parse_array(s, elem, delim, &mut |e| parse_text(e, et, settings, explicit))?;
                return Ok(Datum::Array(Arc::new(a)));
            }
            return Err(PgError::unsupported(format!("input of type {}", type_display(t))));
        }
    })
}

/// record_in: `(f1,"f 2",,)` into a row of the composite type's fields.
/// An empty unquoted field is NULL; quotes group, `""` inside quotes and
/// a backslash anywhere stand for the next character itself.
pub fn parse_record(s: &str, fields: &[(String, SqlType)], settings: &Settings) -> PgResult<Datum> {
    let malformed = |detail: &str| {
        PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed record literal: \"{s}\"")).with_detail(detail.to_string())
    };
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() && chars[i].is_ascii_whitespace() {
        i += 1;
    }
    if chars.get(i) != Some(&'(') {
        return Err(malformed("Missing left parenthesis."));
    }
    i += 1;
    let mut values = Vec::with_capacity(fields.len());
    for (n, (_, ft)) in fields.iter().enumerate() {
        if n > 0 {
            // The previous field ended at a comma.
            match chars.get(i) {
                Some(',') => i += 1,
                _ => return Err(malformed("Too few columns.")),
            }
        }
        if matches!(chars.get(i), Some(',') | Some(')')) {
            values.push(Datum::Null);
            continue;
        }
        let mut text = String::new();
        let mut quoted = false;
        loop {
            let Some(&c) = chars.get(i) else { return Err(malformed("Unexpected end of input.")) };
            if !quoted && (c == ',' || c == ')') {
                break;
            }
            i += 1;
            match c {
                '\\' => {
                    let Some(&next) = chars.get(i) else { return Err(malformed("Unexpected end of input.")) };
                    text.push(next);
                    i += 1;
                }
                '"' if quoted && chars.get(i) == Some(&'"') => {
                    text.push('"');
                    i += 1;
                }
                '"' => quoted = !quoted,
                _ => text.push(c),
            }
        }
        // Each field goes through its type's input function, which
        // enforces the typmod strictly (no explicit-cast truncation).
        values.push(parse_text(&text, *ft, settings, false)?);
    }
    match chars.get(i) {
        Some(')') => i += 1,
        Some(',') => return Err(malformed("Too many columns.")),
        _ => return Err(malformed("Too few columns.")),
    }
    if chars[i..].iter().any(|c| !c.is_ascii_whitespace()) {
        return Err(malformed("Junk after right parenthesis."));
    }
    Ok(Datum::Record(Arc::new(values)))
}

// ---------------------------------------------------------------- binary I/O

/// The binary (send) form of a non-null datum.
pub fn format_binary(d: &Datum, ty: Oid) -> Vec<u8> {
    if let (Datum::Int8(v), oid::TID) = (d, ty) {
        let (block, offset) = crate::executor::syscols::unpack_tid(*v);
        let mut b = block.to_be_bytes().to_vec();
        b.extend_from_slice(&offset.to_be_bytes());
        return b;
    }
    if let (Datum::Text(s), oid::JSONPATH) = (d, ty) {
        return super::jsonpath::send(s);
    }
    match d {
        Datum::Null => vec![],
        Datum::Bool(b) => vec![*b as u8],
        Datum::Int2(v) => v.to_be_bytes().to_vec(),
        Datum::Int4(v) => v.to_be_bytes().to_vec(),
        Datum::Int8(v) => v.to_be_bytes().to_vec(),
        Datum::Oid(v) => v.to_be_bytes().to_vec(),
        Datum::Float4(v) => v.to_be_bytes().to_vec(),
        Datum::Float8(v) => v.to_be_bytes().to_vec(),
        Datum::Numeric(n) => n.to_binary(),
        Datum::Text(s) => s.as_bytes().to_vec(),
        Datum::Json(s) => s.as_bytes().to_vec(),
        // jsonb_send: a version byte (1), then the text.
        Datum::Jsonb(j) => {
            let mut v = vec![1u8];
            v.extend_from_slice(j.to_string().as_bytes());
            v
        }
        Datum::Bytea(b) => b.to_vec(),
        Datum::Char(c) => vec![*c],
        Datum::Uuid(u) => u.to_vec(),
        Datum::Date(v) => dt::date_send(*v),
        Datum::Time(v) => dt::time_send(*v),
        Datum::TimeTz(t, z) => dt::timetz_send(dt::TimeTz { time: *t, zone: *z }),
        Datum::Timestamp(v) | Datum::TimestampTz(v) => dt::timestamp_send(*v),
        Datum::Interval(i) => dt::interval_send(i),
        Datum::Array(a) => {
            let elem = if a.element_type != 0 { a.element_type } else { builtins().element_of(ty) };
            let mut v = Vec::new();
            v.extend_from_slice(&(a.dims.len() as i32).to_be_bytes());
            v.extend_from_slice(&(a.has_nulls() as i32).to_be_bytes());
            v.extend_from_slice(&elem.to_be_bytes());
            for (len, lower) in &a.dims {
                v.extend_from_slice(&len.to_be_bytes());
                v.extend_from_slice(&lower.to_be_bytes());
            }
            for e in &a.elements {
                if e.is_null() {
                    v.extend_from_slice(&(-1i32).to_be_bytes());
                } else {
                    let b = format_binary(e, elem);
                    v.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    v.extend_from_slice(&b);
                }
            }
            v
        }
        Datum::Net(_) | Datum::Bits(_) => super::nettypes::format_binary(d, ty),
        Datum::Record(fields) => {
            let mut v = Vec::new();
            v.extend_from_slice(&(fields.len() as i32).to_be_bytes());
            for f in fields.iter() {
                let t = guess_type(f);
                v.extend_from_slice(&t.to_be_bytes());
                if f.is_null() {
                    v.extend_from_slice(&(-1i32).to_be_bytes());
                } else {
                    let b = format_binary(f, t);
                    v.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    v.extend_from_slice(&b);
                }
            }
            v
        }
        Datum::Range(r) => super::range::send_range(r),
        Datum::Multirange(m) => super::range::send_multirange(m),
        Datum::Enum(label) => super::enums::label_text(*label).into_bytes(),
    }
}

/// A fixed-size value: fewer bytes fail as pq_getmsgint/pq_getmsgbytes
/// do, more as the callers of a receive function (exec_bind_message,
/// CopyReadBinaryAttribute) do when it leaves bytes unread.
fn exact<const N: usize>(b: &[u8]) -> PgResult<[u8; N]> {
    if b.len() < N {
        return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"));
    }
    b.try_into().map_err(|_| PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"))
}

/// A one-byte value (boolrecv, charrecv read it with pq_getmsgbyte).
fn one_byte(b: &[u8]) -> PgResult<u8> {
    match b {
        [] => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "no data left in message")),
        [v] => Ok(*v),
        _ => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")),
    }
}

/// pq_getmsgtext's encoding check: report_invalid_encoding shows the bytes
/// of the first bad character (as many as its lead byte announces).
fn recv_utf8(b: &[u8]) -> PgResult<String> {
    std::str::from_utf8(b).map(str::to_string).map_err(|e| {
        let bad = &b[e.valid_up_to()..];
        let lead = bad.first().copied().unwrap_or(0);
        let mblen = match lead {
            l if l & 0x80 == 0 => 1,
            l if l & 0xe0 == 0xc0 => 2,
            l if l & 0xf0 == 0xe0 => 3,
            l if l & 0xf8 == 0xf0 => 4,
            _ => 1,
        };
        let shown: Vec<String> = bad[..mblen.min(bad.len())].iter().map(|c| format!("0x{c:02x}")).collect();
        PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
    })
}

/// Decodes a binary parameter of type `ty` (the type's recv function).
pub fn parse_binary(b: &[u8], ty: SqlType) -> PgResult<Datum> {
    let t = ty.oid;
    Ok(match t {
        oid::BOOL => Datum::Bool(one_byte(b)? != 0),
        oid::INT2 => Datum::Int2(i16::from_be_bytes(exact(b)?)),
        oid::INT4 => Datum::Int4(i32::from_be_bytes(exact(b)?)),
        oid::INT8 => Datum::Int8(i64::from_be_bytes(exact(b)?)),
        oid::OID | oid::REGCLASS | oid::REGTYPE | oid::REGPROC | oid::XID | oid::CID => Datum::Oid(u32::from_be_bytes(exact(b)?)),
        oid::TID => {
            let bytes: [u8; 6] = exact(b)?;
            let block = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            Datum::Int8(crate::executor::syscols::pack_tid(block, u16::from_be_bytes([bytes[4], bytes[5]])))
        }
        oid::FLOAT4 => Datum::Float4(f32::from_be_bytes(exact(b)?)),
        oid::FLOAT8 => Datum::Float8(f64::from_be_bytes(exact(b)?)),
        oid::NUMERIC => {
            let n = Numeric::from_binary(b)?;
            Datum::numeric(if ty.typmod >= 0 { n.apply_typmod(ty.typmod)? } else { n })
        }
        oid::TEXT | oid::NAME | oid::UNKNOWN => Datum::from_string(recv_utf8(b)?),
        oid::VARCHAR | oid::BPCHAR => Datum::from_string(apply_char_typmod(&recv_utf8(b)?, t, ty.typmod, false)?),
        oid::JSON => {
            let s = recv_utf8(b)?;
            tusk_types::json::json_validate(&s)?;
            Datum::Json(Arc::from(s))
        }
        oid::JSONB => match b.split_first() {
            // jsonb_recv: a version byte (1), then the text.
            Some((1, text)) => Datum::Jsonb(Arc::new(tusk_types::jsonb::Jsonb::parse(&recv_utf8(text)?)?)),
            Some((v, _)) => return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("unsupported jsonb version number {v}"))),
            None => return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message")),
        },
        oid::JSONPATH => super::jsonpath::recv(b)?,
        oid::BYTEA => Datum::bytea(b.to_vec()),
        oid::CHAR => Datum::Char(one_byte(b)?),
        oid::UUID => Datum::Uuid(exact(b)?),
        oid::DATE => Datum::Date(dt::date_recv(b)?),
        oid::TIME => Datum::Time(dt::time_recv(b, ty.typmod)?),
        oid::TIMETZ => {
            let v = dt::timetz_recv(b, ty.typmod)?;
            Datum::TimeTz(v.time, v.zone)
        }
        oid::TIMESTAMP => Datum::Timestamp(dt::timestamp_recv(b, ty.typmod)?),
        oid::TIMESTAMPTZ => Datum::TimestampTz(dt::timestamp_recv(b, ty.typmod)?),
        oid::INTERVAL => Datum::Interval(dt::interval_recv(b)?),
        oid::INET | oid::CIDR | oid::MACADDR | oid::MACADDR8 | oid::BIT | oid::VARBIT => super::nettypes::parse_binary(b, ty)?,
        _ if t >= oid::FIRST_NORMAL_OBJECT_ID && crate::catalog::enums::is_enum(t) => super::enums::enum_recv(b, t)?,
        _ => {
            if let Some(d) = super::range::parse_binary(b, ty)? {
                return Ok(d);
            }
            let elem = builtins().element_of(t);
            if elem == 0 {
                return Err(PgError::unsupported(format!("binary input of type {}", type_display(t))));
            }
            let rd = |b: &[u8], at: usize| -> PgResult<i32> {
                b.get(at..at + 4)
                    .map(|x| i32::from_be_bytes(x.try_into().expect("4 bytes")))
                    .ok_or_else(|| PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"))
            };
            let ndim = rd(b, 0)?;
            if ndim < 0 {
                return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid number of dimensions: {ndim}")));
            }
            if ndim as usize > tusk_types::array::MAX_DIMS {
                return Err(tusk_types::array::too_many_dims(ndim as usize));
            }
            let flags = rd(b, 4)?;
            if flags != 0 && flags != 1 {
                return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "invalid array flags"));
            }
            // array_recv complains of another element type only when both
            // are built-in (their OIDs are stable); else it reads `elem`.
            let given = rd(b, 8)? as u32;
            const FIRST_GENBKI_OBJECT_ID: u32 = 10000;
            if given != elem && given < FIRST_GENBKI_OBJECT_ID && elem < FIRST_GENBKI_OBJECT_ID {
                let name = |t: Oid| if builtins().type_info(t).is_some() { type_display(t) } else { "???".to_string() };
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!("binary data has array element type {given} ({}) instead of expected {elem} ({})", name(given), name(elem)),
                ));
            }
            let mut pos = 12;
            let mut dims = Vec::new();
            for _ in 0..ndim {
                dims.push((rd(b, pos)?, rd(b, pos + 4)?));
                pos += 8;
            }
            // ArrayGetNItems and ArrayCheckBounds, as array_recv runs them.
            let too_large = || super::limits::array_too_large(super::limits::MAX_ARRAY_SIZE);
            let mut product: i32 = if ndim == 0 { 0 } else { 1 };
            for &(len, _) in &dims {
                if len < 0 {
                    return Err(too_large());
                }
                product = product.checked_mul(len).ok_or_else(too_large)?;
            }
            if product as usize > super::limits::MAX_ARRAY_SIZE {
                return Err(too_large());
            }
            let total = product as usize;
            for &(len, lower) in &dims {
                if lower.checked_add(len).is_none() {
                    return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("array lower bound is too large: {lower}")));
                }
            }
            // Bytes left over are refused (in PostgreSQL by the caller,
            // as "incorrect binary data format").
            let unconsumed = || PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format");
            // No elements: the empty array, whatever the dimensions said.
            if total == 0 {
                if pos != b.len() {
                    return Err(unconsumed());
                }
                return Ok(Datum::Array(Arc::new(Array::empty(elem))));
            }
            if total > b.len() {
                return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "insufficient data left in message"));
            }
            let mut elements = Vec::with_capacity(total);
            let et = SqlType { oid: elem, typmod: ty.typmod };
            for _ in 0..total {
                let len = rd(b, pos)?;
                pos += 4;
                if len < 0 {
                    elements.push(Datum::Null);
                } else {
                    let end = pos + len as usize;
                    let part = b.get(pos..end).ok_or_else(|| PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "insufficient data left in message"))?;
                    elements.push(parse_binary(part, et)?);
                    pos = end;
                }
            }
            if pos != b.len() {
                return Err(unconsumed());
            }
            Datum::Array(Arc::new(Array { element_type: elem, dims, elements }))
        }
    })
}
