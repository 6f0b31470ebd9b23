//! Disk usage functions (utils/adt/dbsize.c): pg_relation_size and its
//! relatives, pg_database_size, pg_size_pretty and pg_size_bytes.
//!
//! Tusk has no pages: a relation's size is the bytes of its keys and
//! values in storage as written, before RocksDB compresses them (see
//! `Engine::prefix_bytes`), so sizes are of the same order as
//! PostgreSQL's but never equal to them. Reading a size scans the
//! relation; a view or a relation without storage has size 0.

use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult};

use super::{arg_str, plain, FnCtx, Registry};
use crate::catalog::{RelKind, Relation};

fn arg_oid(a: &[Datum], i: usize) -> Oid {
    match &a[i] {
        Datum::Oid(o) => *o,
        d => d.as_i64().unwrap_or(0) as Oid,
    }
}

fn relation(c: &FnCtx, oid: Oid) -> Option<std::sync::Arc<Relation>> {
    c.env.catalog().relation(oid).cloned()
}

fn own_bytes(c: &FnCtx, rel: &Relation) -> PgResult<u64> {
    if rel.storage_id == 0 || rel.kind == RelKind::View {
        return Ok(0);
    }
    c.env.storage_bytes(rel.storage_id)
}

fn indexes_bytes(c: &FnCtx, rel: &Relation) -> PgResult<u64> {
    let catalog = c.env.catalog();
    let mut total = 0;
    for ix in catalog.indexes_of(rel) {
        total += own_bytes(c, ix)?;
    }
    Ok(total)
}

/// A size, or NULL for an OID that names no relation (as PostgreSQL does,
/// so that catalog queries survive concurrent drops).
fn size_of(c: &FnCtx, oid: Oid, f: fn(&FnCtx, &Relation) -> PgResult<u64>) -> PgResult<Datum> {
    match relation(c, oid) {
        Some(rel) => Ok(Datum::Int8(f(c, &rel)? as i64)),
        None => Ok(Datum::Null),
    }
}

/// pg_relation_size(regclass, fork): only the main fork has data.
fn relation_size_fork(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let fork = arg_str(a, 1);
    if !matches!(fork, "main" | "fsm" | "vm" | "init") {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid fork name").with_hint("Valid fork names are \"main\", \"fsm\", \"vm\", and \"init\"."));
    }
    if fork != "main" {
        return size_of(c, arg_oid(a, 0), |_, _| Ok(0));
    }
    size_of(c, arg_oid(a, 0), own_bytes)
}

fn relation_size(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    size_of(c, arg_oid(a, 0), own_bytes)
}

fn indexes_size(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    size_of(c, arg_oid(a, 0), indexes_bytes)
}

fn total_relation_size(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    size_of(c, arg_oid(a, 0), |c, rel| Ok(own_bytes(c, rel)? + indexes_bytes(c, rel)?))
}

fn database_size_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let name = arg_str(a, 0);
    let Some(db) = c.env.cluster_catalog().database_by_name(name).map(|d| d.oid) else {
        return Err(PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{name}\" does not exist")));
    };
    Ok(c.env.database_bytes(db)?.map(|b| Datum::Int8(b as i64)).unwrap_or(Datum::Null))
}

fn database_size_oid(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(c.env.database_bytes(arg_oid(a, 0))?.map(|b| Datum::Int8(b as i64)).unwrap_or(Datum::Null))
}

/// PostgreSQL 15's size_pretty_units: (name, limit, half-rounded, bits).
const UNITS: &[(&str, i128, bool, u32)] = &[
    ("bytes", 10 * 1024, false, 0),
    ("kB", 20 * 1024 - 1, true, 10),
    ("MB", 20 * 1024 - 1, true, 20),
    ("GB", 20 * 1024 - 1, true, 30),
    ("TB", 20 * 1024 - 1, true, 40),
    ("PB", 20 * 1024 - 1, true, 50),
];

fn half_rounded(x: i128) -> i128 {
    (x + if x < 0 { -1 } else { 1 }) / 2
}

/// pg_size_pretty's loop: each unit is used below its limit; one bit is
/// kept past a unit that rounds by halves.
fn pretty(mut size: i128) -> String {
    for (i, &(name, limit, round, bits)) in UNITS.iter().enumerate() {
        let last = i + 1 == UNITS.len();
        if last || size.abs() < limit {
            if round {
                size = half_rounded(size);
            }
            return format!("{size} {name}");
        }
        let (_, _, next_round, next_bits) = UNITS[i + 1];
        let shift = next_bits - bits - u32::from(next_round) + u32::from(round);
        size /= 1i128 << shift;
    }
    unreachable!("the last unit always answers")
}

fn size_pretty(a: &[Datum], _c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(pretty(a[0].as_i64().unwrap_or(0) as i128)))
}

/// The numeric form: small values print as given (fractions included);
/// larger ones are divided with truncation, which truncating first does
/// not change.
fn size_pretty_numeric(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let text = super::io::format_text(&a[0], c.arg_type(0), &c.env.settings());
    let whole = text.split('.').next().unwrap_or("0");
    let Ok(n) = whole.parse::<i128>() else {
        // Beyond i128 (10^38 bytes): only the largest unit applies.
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range for pg_size_pretty"));
    };
    if n.abs() < UNITS[0].1 {
        return Ok(Datum::from_string(format!("{text} bytes")));
    }
    Ok(Datum::from_string(pretty(n)))
}

/// pg_size_bytes: a number (sign, decimals, exponent) and an optional
/// unit, bytes through PB, case-insensitive.
fn size_bytes(a: &[Datum], _c: &FnCtx) -> PgResult<Datum> {
    let input = arg_str(a, 0);
    let invalid = || PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid size: \"{input}\""));
    let s = input.trim_start();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut have_digits = i > digits_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        have_digits |= i > frac_start;
    }
    if !have_digits {
        return Err(invalid());
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    let number = &s[..i];
    let rest = s[i..].trim();
    let multiplier: f64 = if rest.is_empty() {
        1.0
    } else {
        match rest.to_ascii_lowercase().as_str() {
            "bytes" => 1.0,
            "kb" => 1024.0,
            "mb" => 1024.0 * 1024.0,
            "gb" => 1024.0 * 1024.0 * 1024.0,
            "tb" => 1024f64.powi(4),
            "pb" => 1024f64.powi(5),
            _ => {
                return Err(invalid()
                    .with_detail(format!("Invalid size unit: \"{rest}\"."))
                    .with_hint("Valid units are \"bytes\", \"kB\", \"MB\", \"GB\", \"TB\", and \"PB\"."))
            }
        }
    };
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let bytes = (value * multiplier).trunc();
    if !(bytes >= i64::MIN as f64 && bytes < i64::MAX as f64) {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"));
    }
    Ok(Datum::Int8(bytes as i64))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["oid:2325"], relation_size);
    plain(r, &["pg_relation_size"], relation_size_fork);
    plain(r, &["pg_table_size"], relation_size);
    plain(r, &["pg_indexes_size"], indexes_size);
    plain(r, &["pg_total_relation_size"], total_relation_size);
    plain(r, &["pg_database_size_name"], database_size_name);
    plain(r, &["pg_database_size_oid"], database_size_oid);
    plain(r, &["pg_size_pretty"], size_pretty);
    plain(r, &["pg_size_pretty_numeric"], size_pretty_numeric);
    plain(r, &["pg_size_bytes"], size_bytes);
}
