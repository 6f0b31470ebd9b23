//! Run-time type conversion: the casts pg_cast lists (numeric widening and
//! narrowing, date/time conversions, bool/int, ...), I/O conversions to and
//! from text, array element conversion and type modifier enforcement.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::datetime as dt;
use tusk_types::numeric::Numeric;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::io::{apply_char_typmod, format_text, parse_text};
use super::{int_out_of_range, Env, FnCtx, Registry};
use crate::catalog::builtins;
use crate::settings::Settings;

fn is_string(t: Oid) -> bool {
    matches!(t, oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME | oid::UNKNOWN)
}

fn int_to(v: i64, to: Oid) -> PgResult<Datum> {
    Ok(match to {
        oid::INT2 => Datum::Int2(i16::try_from(v).map_err(|_| int_out_of_range("smallint"))?),
        oid::INT4 => Datum::Int4(i32::try_from(v).map_err(|_| int_out_of_range("integer"))?),
        oid::INT8 => Datum::Int8(v),
        oid::OID => Datum::Oid(v as u32),
        oid::FLOAT4 => Datum::Float4(v as f32),
        oid::FLOAT8 => Datum::Float8(v as f64),
        oid::NUMERIC => Datum::numeric(Numeric::from_i64(v)),
        oid::BOOL => Datum::Bool(v != 0),
        oid::CHAR => Datum::Char(v as u8),
        _ => return Err(PgError::internal("integer cast target")),
    })
}

/// float → integer: round to nearest even (rint), then range-check.
fn float_to_int(v: f64, to: Oid) -> PgResult<Datum> {
    let name = match to {
        oid::INT2 => "smallint",
        oid::INT4 => "integer",
        _ => "bigint",
    };
    if v.is_nan() || v.is_infinite() {
        return Err(int_out_of_range(name));
    }
    let r = v.round_ties_even();
    let (min, max) = match to {
        oid::INT2 => (i16::MIN as f64, -(i16::MIN as f64)),
        oid::INT4 => (i32::MIN as f64, -(i32::MIN as f64)),
        _ => (i64::MIN as f64, -(i64::MIN as f64)),
    };
    if r < min || r >= max {
        return Err(int_out_of_range(name));
    }
    int_to(r as i64, to)
}

/// Applies a type modifier to a value already of the target type.
pub fn apply_typmod(d: Datum, to: SqlType, explicit: bool) -> PgResult<Datum> {
    if to.typmod < 0 || d.is_null() {
        return Ok(d);
    }
    Ok(match (to.oid, d) {
        (oid::VARCHAR | oid::BPCHAR, Datum::Text(s)) => Datum::from_string(apply_char_typmod(&s, to.oid, to.typmod, explicit)?),
        (oid::NUMERIC, Datum::Numeric(n)) => Datum::numeric(n.apply_typmod(to.typmod)?),
        (oid::TIMESTAMP, Datum::Timestamp(v)) => Datum::Timestamp(dt::apply_timestamp_typmod(v, to.typmod)?),
        (oid::TIMESTAMPTZ, Datum::TimestampTz(v)) => Datum::TimestampTz(dt::apply_timestamp_typmod(v, to.typmod)?),
        (oid::TIME, Datum::Time(v)) => Datum::Time(dt::apply_time_typmod(v, to.typmod)),
        (oid::TIMETZ, Datum::TimeTz(t, z)) => Datum::TimeTz(dt::apply_time_typmod(t, to.typmod), z),
        (oid::INTERVAL, Datum::Interval(i)) => Datum::Interval(dt::apply_interval_typmod(i, to.typmod)?),
        (oid::BIT | oid::VARBIT, Datum::Bits(b)) => super::nettypes::apply_bit_typmod(b, to, explicit)?,
        (_, Datum::Array(a)) => {
            let elem = SqlType { oid: builtins().element_of(to.oid), typmod: to.typmod };
            let mut out = a.as_ref().clone();
            out.elements = a.elements.iter().map(|e| apply_typmod(e.clone(), elem, explicit)).collect::<PgResult<_>>()?;
            Datum::Array(Arc::new(out))
        }
        (_, other) => other,
    })
}

/// Converts a non-null datum from one type to another (the cast is known
/// to exist in the context the analyzer checked).
pub fn cast_datum(d: Datum, from: SqlType, to: SqlType, explicit: bool, settings: &Settings) -> PgResult<Datum> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    // Domains convert as their base types (the analyzer puts their checks
    // around the conversion).
    let (from, to) = (crate::catalog::types::base_type(from), crate::catalog::types::base_type(to));
    let (f, t) = (from.oid, to.oid);
    if f == t {
        return apply_typmod(d, to, explicit);
    }
    // Strings: bpchar loses its padding on the way to other string types.
    if is_string(f) && is_string(t) {
        let s = d.as_str().unwrap_or("");
        let s = if f == oid::BPCHAR { s.trim_end_matches(' ') } else { s };
        return match t {
            oid::NAME => Ok(Datum::text(crate::commands::naming::clip(s, 63))),
            oid::VARCHAR | oid::BPCHAR => Ok(Datum::from_string(apply_char_typmod(s, t, to.typmod, explicit)?)),
            _ => Ok(Datum::text(s)),
        };
    }
    if is_string(f) {
        let s = d.as_str().unwrap_or("");
        let s = if f == oid::BPCHAR { s.trim_end_matches(' ') } else { s };
        return parse_text(s, to, settings, explicit);
    }
    if is_string(t) {
        let s = match (&d, f) {
            (Datum::Bool(b), _) => if *b { "true" } else { "false" }.to_string(),
            // inet and cidr become text through text(inet), which always shows the mask.
            (Datum::Net(_), oid::INET | oid::CIDR) => super::nettypes::network_show(&d),
            (Datum::Record(r), _) => {
                super::limits::check_record(r, settings)?;
                format_text(&d, f, settings)
            }
            _ => format_text(&d, f, settings),
        };
        return match t {
            oid::NAME => Ok(Datum::text(crate::commands::naming::clip(&s, 63))),
            oid::VARCHAR | oid::BPCHAR => Ok(Datum::from_string(apply_char_typmod(&s, t, to.typmod, explicit)?)),
            _ => Ok(Datum::from_string(s)),
        };
    }
    let out = match (&d, t) {
        // Integers.
        (Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Oid(_), _)
            if matches!(t, oid::INT2 | oid::INT4 | oid::INT8 | oid::OID | oid::FLOAT4 | oid::FLOAT8 | oid::NUMERIC | oid::BOOL | oid::CHAR) =>
        {
            let v = d.as_i64().unwrap_or(0);
            if t == oid::OID && (v < i32::MIN as i64 || v > u32::MAX as i64) {
                return Err(int_out_of_range("OID"));
            }
            int_to(v, t)?
        }
        (Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Oid(_), _) if is_reg(t) => Datum::Oid(d.as_i64().unwrap_or(0) as u32),
        // Floats.
        (Datum::Float4(_) | Datum::Float8(_), oid::INT2 | oid::INT4 | oid::INT8) => float_to_int(d.as_f64().unwrap_or(0.0), t)?,
        (Datum::Float4(v), oid::FLOAT8) => Datum::Float8(*v as f64),
        (Datum::Float8(v), oid::FLOAT4) => {
            let r = *v as f32;
            if r.is_infinite() && v.is_finite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            if r == 0.0 && *v != 0.0 {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
            }
            Datum::Float4(r)
        }
        (Datum::Float4(v), oid::NUMERIC) => Datum::numeric(Numeric::from_f32(*v)),
        (Datum::Float8(v), oid::NUMERIC) => Datum::numeric(Numeric::from_f64(*v)),
        // Numerics.
        (Datum::Numeric(n), oid::INT2) => Datum::Int2(n.to_i16()?),
        (Datum::Numeric(n), oid::INT4) => Datum::Int4(n.to_i32()?),
        (Datum::Numeric(n), oid::INT8) => Datum::Int8(n.to_i64()?),
        (Datum::Numeric(n), oid::FLOAT4) => Datum::Float4(n.to_f32()?),
        (Datum::Numeric(n), oid::FLOAT8) => Datum::Float8(n.to_f64()?),
        (Datum::Bool(b), oid::INT4) => Datum::Int4(*b as i32),
        (Datum::Char(c), oid::INT4) => Datum::Int4(*c as i8 as i32),
        // Dates and times.
        (Datum::Date(v), oid::TIMESTAMP) => Datum::Timestamp(dt::date_to_timestamp(*v)?),
        (Datum::Date(v), oid::TIMESTAMPTZ) => Datum::TimestampTz(dt::date_to_timestamptz(*v, &settings.datetime.time_zone)?),
        (Datum::Timestamp(v), oid::DATE) => Datum::Date(dt::timestamp_to_date(*v)?),
        (Datum::TimestampTz(v), oid::DATE) => Datum::Date(dt::timestamptz_to_date(*v, &settings.datetime.time_zone)?),
        (Datum::Timestamp(v), oid::TIMESTAMPTZ) => Datum::TimestampTz(dt::timestamp_to_timestamptz(*v, &settings.datetime.time_zone)?),
        (Datum::TimestampTz(v), oid::TIMESTAMP) => Datum::Timestamp(dt::timestamptz_to_timestamp(*v, &settings.datetime.time_zone)?),
        (Datum::Timestamp(v), oid::TIME) => match dt::timestamp_to_time(*v)? {
            Some(t) => Datum::Time(t),
            None => Datum::Null,
        },
        (Datum::TimestampTz(v), oid::TIME) => match dt::timestamptz_to_time(*v, &settings.datetime.time_zone)? {
            Some(t) => Datum::Time(t),
            None => Datum::Null,
        },
        (Datum::TimestampTz(v), oid::TIMETZ) => match dt::timestamptz_to_timetz(*v, &settings.datetime.time_zone)? {
            Some(t) => Datum::TimeTz(t.time, t.zone),
            None => Datum::Null,
        },
        (Datum::Time(v), oid::INTERVAL) => Datum::Interval(dt::time_to_interval(*v)),
        (Datum::Time(v), oid::TIMETZ) => {
            let t = dt::time_to_timetz(*v, &settings.datetime.time_zone, crate::session::now_micros());
            Datum::TimeTz(t.time, t.zone)
        }
        (Datum::TimeTz(t, z), oid::TIME) => Datum::Time(dt::timetz_to_time(dt::TimeTz { time: *t, zone: *z })),
        (Datum::Interval(i), oid::TIME) => Datum::Time(dt::interval_to_time(i)),
        // Arrays, element by element.
        (Datum::Array(a), _) if builtins().element_of(t) != 0 => {
            let ef = SqlType { oid: builtins().element_of(f), typmod: -1 };
            let et = SqlType { oid: builtins().element_of(t), typmod: to.typmod };
            let mut out = Array { element_type: et.oid, dims: a.dims.clone(), elements: Vec::with_capacity(a.elements.len()) };
            for e in &a.elements {
                out.elements.push(cast_datum(e.clone(), ef, et, explicit, settings)?);
            }
            return Ok(Datum::Array(Arc::new(out)));
        }
        (Datum::Record(_), oid::RECORD) => d,
        (Datum::Json(_) | Datum::Jsonb(_), _) if matches!(f, oid::JSON | oid::JSONB) && super::jsonfuncs::casts_from(t) => {
            super::jsonfuncs::cast_from_json(d, f, t)?
        }
        _ if super::nettypes::is_cast(f, t) => super::nettypes::cast(&d, f, to, explicit)?,
        (Datum::Range(r), _) if super::range::range_type(r.type_oid).is_some_and(|rt| rt.multirange == t) => {
            super::range::range_to_multirange(r)?
        }
        _ => {
            return Err(PgError::new(
                sqlstate::CANNOT_COERCE,
                format!(
                    "cannot cast type {} to {}",
                    crate::analyzer::types::format_type(builtins(), f, -1),
                    crate::analyzer::types::format_type(builtins(), t, -1)
                ),
            ))
        }
    };
    apply_typmod(out, to, explicit)
}

fn is_reg(t: Oid) -> bool {
    matches!(t, oid::REGCLASS | oid::REGTYPE | oid::REGPROC | oid::REGPROCEDURE | oid::REGNAMESPACE | oid::REGROLE | oid::REGOPER | oid::REGOPERATOR)
}

/// Casts that need the catalog (regclass input and output), then `cast_datum`.
pub fn cast_datum_env(d: Datum, from: SqlType, to: SqlType, explicit: bool, env: &dyn Env) -> PgResult<Datum> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    if is_string(from.oid) && is_reg(to.oid) && d.as_str().map(str::trim) == Some("-") {
        return Ok(Datum::Oid(0));
    }
    if is_string(from.oid) && to.oid == oid::REGCLASS {
        let s = d.as_str().unwrap_or("").trim().to_string();
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Datum::Oid(n));
        }
        return Ok(Datum::Oid(env.lookup_relation_oid(&s)?));
    }
    if is_string(from.oid) && to.oid == oid::REGPROC {
        let s = d.as_str().unwrap_or("").trim().to_string();
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Datum::Oid(n));
        }
        return regproc_in(&s).map(Datum::Oid);
    }
    if is_string(from.oid) && to.oid == oid::REGTYPE {
        let s = d.as_str().unwrap_or("").trim().to_string();
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Datum::Oid(n));
        }
        return regtype_in(&s).map(Datum::Oid);
    }
    if is_string(from.oid) && to.oid == oid::REGROLE {
        let s = d.as_str().unwrap_or("").trim().to_string();
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Datum::Oid(n));
        }
        let name = single_identifier(&s)?;
        return env
            .cluster_catalog()
            .role_by_name(&name)
            .map(|r| Datum::Oid(r.oid))
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")));
    }
    if from.oid == oid::REGROLE && is_string(to.oid) {
        if let Datum::Oid(o) = d {
            let name = regrole_out(o, env);
            return cast_datum(Datum::from_string(name), SqlType::new(oid::TEXT), to, explicit, &env.settings());
        }
    }
    if from.oid == oid::REGCLASS && is_string(to.oid) {
        if let Datum::Oid(o) = d {
            let name = env.relation_name(o).unwrap_or_else(|| o.to_string());
            return cast_datum(Datum::from_string(name), SqlType::new(oid::TEXT), to, explicit, &env.settings());
        }
    }
    cast_datum(d, from, to, explicit, &env.settings())
}

/// regroleout: the role's name as an identifier, or its number when no
/// role has it.
pub fn regrole_out(o: Oid, env: &dyn Env) -> String {
    match env.cluster_catalog().roles.get(&o) {
        Some(r) => super::quote_ident(&r.name),
        None => o.to_string(),
    }
}

/// One identifier as stringToQualifiedNameList reads it: folded to lower
/// case unless double-quoted.
fn single_identifier(s: &str) -> PgResult<String> {
    let invalid = || PgError::new(sqlstate::INVALID_NAME, "invalid name syntax");
    if let Some(inner) = s.strip_prefix('"') {
        let inner = inner.strip_suffix('"').ok_or_else(invalid)?;
        if inner.is_empty() || inner.replace("\"\"", "").contains('"') {
            return Err(invalid());
        }
        return Ok(inner.replace("\"\"", "\""));
    }
    if s.is_empty() || s.contains(['.', '"', ' ']) {
        return Err(invalid());
    }
    Ok(s.to_lowercase())
}

/// regprocin for built-in functions: a function name, optionally qualified
/// by pg_catalog, that must name exactly one function (JDBC's type queries
/// compare `typinput = 'pg_catalog.array_in'::regproc`).
fn regproc_in(s: &str) -> PgResult<Oid> {
    let not_found = || PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function \"{s}\" does not exist"));
    // Split on dots outside double quotes; unquoted parts are folded to lower case.
    let mut parts = vec![String::new()];
    let mut quoted = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                parts.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(String::new()),
            c if quoted => parts.last_mut().unwrap().push(c),
            c => parts.last_mut().unwrap().extend(c.to_lowercase()),
        }
    }
    if quoted || parts.len() > 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(PgError::new(sqlstate::INVALID_NAME, "invalid name syntax"));
    }
    // pg_catalog's functions, or information_schema's when named so.
    let namespace = match parts.len() {
        2 if parts[0] == "pg_catalog" => crate::catalog::PG_CATALOG_NAMESPACE,
        2 if parts[0] == "information_schema" => crate::catalog::INFORMATION_SCHEMA_NAMESPACE,
        2 => return Err(not_found()),
        _ => crate::catalog::PG_CATALOG_NAMESPACE,
    };
    let name = parts.last().unwrap();
    let b = builtins();
    let found: Vec<Oid> = b.procs_by_name.get(name.as_str()).into_iter().flatten().copied().filter(|o| b.procs[o].namespace == namespace).collect();
    match found.as_slice() {
        [oid] => Ok(*oid),
        [_, _, ..] => Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("more than one function named \"{s}\""))),
        [] => Err(not_found()),
    }
}

/// regtypein for built-in types: a type name as SQL spells it.
pub(crate) fn regtype_in(s: &str) -> PgResult<Oid> {
    let stmts = crate::parser::parse(&format!("SELECT NULL::{s}")).map_err(|_| {
        PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid type name \"{s}\""))
    })?;
    let Some(pg_query::NodeEnum::SelectStmt(sel)) = stmts.into_iter().next().map(|p| p.node) else {
        return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid type name \"{s}\"")));
    };
    let cast = sel.target_list.first().and_then(|n| match &n.node {
        Some(pg_query::NodeEnum::ResTarget(rt)) => rt.val.as_deref().and_then(|v| v.node.as_ref()),
        _ => None,
    });
    if let Some(pg_query::NodeEnum::TypeCast(tc)) = cast {
        if let Some(tn) = &tc.type_name {
            return crate::analyzer::types::resolve_type_name(builtins(), tn).map(|t| t.oid);
        }
    }
    Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("type \"{s}\" does not exist")))
}

// ---------------------------------------------------------------- cast functions called by name

fn text_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = format_text(&a[0], c.arg_type(0), &c.env.settings());
    let s = if c.arg_type(0) == oid::BPCHAR { s.trim_end_matches(' ').to_string() } else { s };
    Ok(Datum::from_string(s))
}

/// varchar(varchar, typmod, explicit) / bpchar(bpchar, typmod, explicit)
fn length_coerce(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = a[0].as_str().unwrap_or("");
    let typmod = a[1].as_i64().unwrap_or(-1) as i32;
    let explicit = a[2].as_bool().unwrap_or(false);
    Ok(Datum::from_string(apply_char_typmod(s, c.ret.oid, typmod, explicit)?))
}

pub(super) fn register(r: &mut Registry) {
    super::plain(r, &["text", "bpchar_text", "name_text", "bool_text"], text_fn);
    super::plain(r, &["varchar", "bpchar"], length_coerce);
}
