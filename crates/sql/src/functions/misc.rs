//! Session and system functions (now(), version(), current_setting(),
//! nextval(), ...), uuid and miscellaneous built-ins.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_bool, arg_f64, arg_i64, arg_str, plain, FnCtx, Registry};

fn text(s: impl Into<String>) -> PgResult<Datum> {
    Ok(Datum::from_string(s.into()))
}

fn now(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(c.env.transaction_timestamp()))
}
fn statement_timestamp(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(c.env.statement_timestamp()))
}
fn clock_timestamp(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(crate::session::now_micros()))
}

fn svf_current_date(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    Ok(Datum::Date(tusk_types::datetime::current_date(c.env.transaction_timestamp(), &settings.datetime.time_zone)))
}
fn svf_current_time(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let ts = c.env.transaction_timestamp();
    let d = super::cast::cast_datum(Datum::TimestampTz(ts), tusk_types::SqlType::new(oid::TIMESTAMPTZ), tusk_types::SqlType::new(oid::TIMETZ), true, &settings)?;
    Ok(d)
}
fn svf_localtime(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let ts = c.env.transaction_timestamp();
    super::cast::cast_datum(Datum::TimestampTz(ts), tusk_types::SqlType::new(oid::TIMESTAMPTZ), tusk_types::SqlType::new(oid::TIME), true, &settings)
}
fn svf_localtimestamp(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let ts = c.env.transaction_timestamp();
    super::cast::cast_datum(Datum::TimestampTz(ts), tusk_types::SqlType::new(oid::TIMESTAMPTZ), tusk_types::SqlType::new(oid::TIMESTAMP), true, &settings)
}
fn current_user(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    text(c.env.current_user())
}
fn session_user(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    text(c.env.session_user())
}
fn current_database(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    text(c.env.current_database())
}

/// The first schema of search_path that exists.
fn current_schema(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let user = c.env.current_user();
    for s in &settings.search_path {
        let name = if s == "$user" { user.as_str() } else { s.as_str() };
        if c.env.catalog().namespace_by_name.contains_key(name) {
            return text(name);
        }
    }
    Ok(Datum::Null)
}

fn current_schemas(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let user = c.env.current_user();
    let mut out = Vec::new();
    if arg_bool(a, 0) && !settings.search_path.iter().any(|s| s == "pg_catalog") {
        out.push(Datum::text("pg_catalog"));
    }
    for s in &settings.search_path {
        let name = if s == "$user" { user.as_str() } else { s.as_str() };
        if c.env.catalog().namespace_by_name.contains_key(name) {
            out.push(Datum::text(name));
        }
    }
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::NAME, out))))
}

fn version(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(format!(
        "PostgreSQL 15.18 (Tusk {}) on {}-linux-gnu, compiled by rustc, 64-bit",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH
    ))
}

fn backend_pid(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(c.env.backend_pid()))
}

fn pg_trigger_depth(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(c.env.trigger_depth()))
}

fn current_setting(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let missing_ok = a.len() > 1 && arg_bool(a, 1);
    match c.env.settings().current_setting(arg_str(a, 0), missing_ok)? {
        Some(v) => text(v),
        None => Ok(Datum::Null),
    }
}

fn set_config(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "SET requires parameter name"));
    }
    let value = if a[1].is_null() { None } else { Some(arg_str(a, 1)) };
    let is_local = !a[2].is_null() && arg_bool(a, 2);
    text(c.env.set_config(arg_str(a, 0), value, is_local)?)
}

fn seq_oid(d: &Datum) -> u32 {
    match d {
        Datum::Oid(o) => *o,
        d => d.as_i64().unwrap_or(0) as u32,
    }
}

fn nextval(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int8(c.env.nextval(seq_oid(&a[0]))?))
}
fn currval(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int8(c.env.currval(seq_oid(&a[0]))?))
}
fn lastval(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int8(c.env.lastval()?))
}
fn setval(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let is_called = if a.len() > 2 { arg_bool(a, 2) } else { true };
    Ok(Datum::Int8(c.env.setval(seq_oid(&a[0]), arg_i64(a, 1), is_called)?))
}

fn random(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Float8(c.env.random()))
}
fn setseed(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = arg_f64(a, 0);
    if !(-1.0..=1.0).contains(&s) {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("setseed parameter {} is out of allowed range [-1,1]", tusk_types::float::format_float8(s, 1)),
        ));
    }
    c.env.set_seed(s);
    Ok(void())
}
/// The value of a function returning void: not NULL, and empty as text.
fn void() -> Datum {
    Datum::text("")
}

fn pg_sleep(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    c.env.sleep(arg_f64(a, 0))?;
    Ok(void())
}

fn pg_sleep_for(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if let Datum::Interval(i) = &a[0] {
        let secs = i.micros as f64 / 1e6 + i.days as f64 * 86400.0 + i.months as f64 * 30.0 * 86400.0;
        c.env.sleep(secs)?;
    }
    Ok(void())
}

/// pg_sleep_until(timestamptz): PostgreSQL's SQL body, pg_sleep(extract(epoch
/// from $1) - extract(epoch from clock_timestamp())).
fn pg_sleep_until(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let secs = match &a[0] {
        Datum::TimestampTz(t) => t.saturating_sub(crate::session::now_micros()) as f64 / 1e6,
        _ => 0.0,
    };
    c.env.sleep(secs)?;
    Ok(void())
}

/// pg_get_serial_sequence(table, column): the sequence a serial or identity column uses.
fn pg_get_serial_sequence(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rel_oid = c.env.lookup_relation_oid(arg_str(a, 0))?;
    let cat = c.env.catalog();
    let rel = cat.relation(rel_oid).ok_or_else(|| PgError::internal("relation vanished"))?;
    let col = arg_str(a, 1);
    let (attnum, _) = rel.column_by_name(col).ok_or_else(|| {
        PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" of relation \"{}\" does not exist", col, rel.name))
    })?;
    for r in cat.relations.values() {
        if r.sequence.as_ref().and_then(|s| s.owned_by) == Some((rel_oid, attnum)) {
            return text(format!("{}.{}", super::quote_ident(cat.namespace_name(r.namespace)), super::quote_ident(&r.name)));
        }
    }
    Ok(Datum::Null)
}

fn gen_random_uuid(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Uuid(*uuid::Uuid::new_v4().as_bytes()))
}

fn pg_typeof(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Oid(c.arg_type(0)))
}

fn num_nulls(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(a.iter().filter(|d| d.is_null()).count() as i32))
}
fn num_nonnulls(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(a.iter().filter(|d| !d.is_null()).count() as i32))
}

fn always_true(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(true))
}
fn always_false(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(false))
}

fn txid_current(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    // Tusk has no transaction ids; a stable per-transaction number is enough for clients.
    Ok(Datum::Int8((c.env.transaction_timestamp() & 0x7fff_ffff) + 1000))
}

fn format_type_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let t = seq_oid(&a[0]);
    let typmod = if a.len() > 1 && !a[1].is_null() { arg_i64(a, 1) as i32 } else { -1 };
    if crate::catalog::builtins().type_info(t).is_none() {
        return text("???");
    }
    text(crate::analyzer::types::format_type(crate::catalog::builtins(), t, typmod))
}

// ---------------------------------------------------------------- comments

/// A comment from pg_description, as obj_description() and
/// col_description() find it (PostgreSQL defines them in SQL over it).
fn description(c: &FnCtx, classoid: tusk_types::Oid, objoid: tusk_types::Oid, subid: i32) -> Datum {
    let catalog = c.env.catalog();
    let found = if classoid == 0 {
        catalog
            .comments
            .iter()
            .find(|((_, o, s), _)| *o == objoid && *s == subid)
            .map(|(_, t)| t.as_str())
            .or_else(|| crate::catalog::system::builtin_comment(0, objoid, subid))
    } else {
        crate::catalog::system::comment(catalog, classoid, objoid, subid)
    };
    found.map(|t| Datum::from_string(t.to_string())).unwrap_or(Datum::Null)
}

/// obj_description(object, catalog name): the catalog is named, not given by OID.
fn obj_description(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let objoid = arg_i64(a, 0) as tusk_types::Oid;
    let Some(class) = c.env.catalog().lookup_relation(crate::catalog::PG_CATALOG_NAMESPACE, arg_str(a, 1)).map(|r| r.oid) else {
        return Ok(Datum::Null);
    };
    Ok(description(c, class, objoid, 0))
}

/// obj_description(object): deprecated form matching any catalog.
fn obj_description_any(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(description(c, 0, arg_i64(a, 0) as tusk_types::Oid, 0))
}

/// shobj_description(object, catalog name): pg_shdescription's comment.
fn shobj_description(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let objoid = arg_i64(a, 0) as tusk_types::Oid;
    let class = match arg_str(a, 1) {
        "pg_authid" => 1260,
        "pg_database" => 1262,
        _ => return Ok(Datum::Null),
    };
    Ok(c.env.cluster_catalog().shared_comments.get(&(class, objoid)).map(|t| Datum::from_string(t.clone())).unwrap_or(Datum::Null))
}

fn col_description(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    const PG_CLASS: tusk_types::Oid = 1259;
    Ok(description(c, PG_CLASS, arg_i64(a, 0) as tusk_types::Oid, arg_i64(a, 1) as i32))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["oid:1215"], obj_description);
    plain(r, &["oid:1348"], obj_description_any);
    plain(r, &["oid:1216"], col_description);
    plain(r, &["oid:1993"], shobj_description);
    plain(r, &["now"], now);
    plain(r, &["statement_timestamp"], statement_timestamp);
    plain(r, &["clock_timestamp"], clock_timestamp);
    plain(r, &["svf:current_date"], svf_current_date);
    plain(r, &["svf:current_time"], svf_current_time);
    plain(r, &["svf:current_timestamp"], now);
    plain(r, &["svf:localtime"], svf_localtime);
    plain(r, &["svf:localtimestamp"], svf_localtimestamp);
    plain(r, &["svf:current_user", "current_user"], current_user);
    plain(r, &["svf:session_user", "session_user"], session_user);
    plain(r, &["svf:current_database", "current_database"], current_database);
    plain(r, &["svf:current_schema", "current_schema"], current_schema);
    plain(r, &["current_schemas"], current_schemas);
    plain(r, &["pgsql_version"], version);
    plain(r, &["pg_backend_pid"], backend_pid);
    plain(r, &["pg_trigger_depth"], pg_trigger_depth);
    plain(r, &["show_config_by_name", "show_config_by_name_missing_ok"], current_setting);
    plain(r, &["set_config_by_name"], set_config);
    plain(r, &["nextval_oid"], nextval);
    plain(r, &["currval_oid"], currval);
    plain(r, &["lastval"], lastval);
    plain(r, &["setval_oid", "setval3_oid"], setval);
    plain(r, &["drandom"], random);
    plain(r, &["setseed"], setseed);
    plain(r, &["pg_sleep"], pg_sleep);
    plain(r, &["oid:3935"], pg_sleep_for);
    plain(r, &["oid:3936"], pg_sleep_until);
    plain(r, &["gen_random_uuid"], gen_random_uuid);
    plain(r, &["pg_get_serial_sequence"], pg_get_serial_sequence);
    plain(r, &["pg_typeof"], pg_typeof);
    plain(r, &["pg_num_nulls"], num_nulls);
    plain(r, &["pg_num_nonnulls"], num_nonnulls);
    plain(r, &["has_table_privilege_name", "has_table_privilege_id", "has_schema_privilege_name", "has_database_privilege_name"], always_true);
    plain(r, &["pg_is_in_recovery"], always_false);
    plain(r, &["txid_current", "pg_current_xact_id"], txid_current);
    plain(r, &["format_type"], format_type_fn);
}
