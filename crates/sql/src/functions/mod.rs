//! Built-in functions and operators, implemented in Rust.
//!
//! The analyzer resolves every call to a row of PostgreSQL's pg_proc (see
//! `catalog::builtin`); this module maps that row's `prosrc` (the name of
//! PostgreSQL's C function, e.g. `int4pl`, `textcat`) to an implementation.
//! A pg_proc row without an implementation here is reported as 0A000 when
//! a query uses it.

pub mod agg;
mod agg_support;
mod array_fns;
mod bytea;
pub mod cast;
mod acl_fns;
pub(crate) mod catalog_fns;
mod compare;
mod datetime_fns;
pub mod enums;
mod formatting;
pub mod io;
pub mod json;
pub mod jsonfuncs;
pub mod json_populate;
mod tsearch_json;
pub mod jsonpath;
mod jsonpath_datetime;
mod jsonpath_exec;
pub mod limits;
mod math;
mod misc;
mod nettypes;
mod notify;
mod plprofile;
pub mod range;
mod numeric_ops;
pub mod regexp;
mod sizes;
mod gin_fns;
pub(crate) mod ruleutils;
mod signal;
mod srf;
mod string;
pub mod xml;
pub mod tsearch;
pub(crate) mod viewdef;

use std::cell::Ref;
use std::collections::HashMap;
use std::sync::OnceLock;

use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use crate::catalog::DbCatalog;
use crate::settings::Settings;

pub use agg::AggregateKind;

/// Rows produced by a set-returning function; each item is one value (or,
/// for functions with OUT parameters, a `Datum::Record`).
pub type SetIter = Box<dyn Iterator<Item = PgResult<Datum>> + Send>;

pub type PlainFn = fn(&[Datum], &FnCtx) -> PgResult<Datum>;
pub type SetFn = fn(&[Datum], &FnCtx) -> PgResult<SetIter>;

#[derive(Clone, Copy)]
pub enum ScalarFn {
    Plain(PlainFn),
    Set(SetFn),
}

impl ScalarFn {
    pub fn is_set(&self) -> bool {
        matches!(self, ScalarFn::Set(_))
    }
}

/// What a running statement offers to functions that need more than their arguments.
pub trait Env {
    fn settings(&self) -> Ref<'_, Settings>;
    fn catalog(&self) -> &DbCatalog;
    /// Transaction start and statement start, microseconds since 2000-01-01 UTC.
    fn transaction_timestamp(&self) -> i64;
    fn statement_timestamp(&self) -> i64;
    fn current_user(&self) -> String;
    fn session_user(&self) -> String;
    fn current_database(&self) -> String;
    fn backend_pid(&self) -> i32;
    fn nextval(&self, seq: Oid) -> PgResult<i64>;
    fn currval(&self, seq: Oid) -> PgResult<i64>;
    fn lastval(&self) -> PgResult<i64>;
    fn setval(&self, seq: Oid, value: i64, is_called: bool) -> PgResult<i64>;
    fn set_config(&self, name: &str, value: Option<&str>, is_local: bool) -> PgResult<String>;
    fn random(&self) -> f64;
    fn set_seed(&self, seed: f64);
    /// The name of a relation for regclass output (qualified if not visible).
    fn relation_name(&self, oid: Oid) -> Option<String>;
    /// Resolves a (possibly qualified) relation name for regclass input.
    fn lookup_relation_oid(&self, name: &str) -> PgResult<Oid>;
    fn check_interrupts(&self) -> PgResult<()>;
    fn sleep(&self, seconds: f64) -> PgResult<()>;
    fn in_transaction_block(&self) -> bool;
    /// A sequence's (last_value, is_called), for `SELECT * FROM seq`.
    fn sequence_state(&self, seq: Oid) -> PgResult<(i64, bool)>;
    fn cluster_catalog(&self) -> std::sync::Arc<crate::catalog::ClusterCatalog>;
    /// The server's sessions (pg_stat_activity).
    fn backend_activity(&self) -> Vec<crate::cluster::BackendActivity> {
        Vec::new()
    }
    /// The role the server session with this pid logged in as; None if no
    /// session has it.
    fn backend_role(&self, _pid: i32) -> Option<String> {
        None
    }
    /// Cancels a session's statement (`terminate`: ends the session);
    /// false if it is gone.
    fn signal_backend(&self, _pid: i32, _terminate: bool) -> bool {
        false
    }
    /// Sends a NOTICE or WARNING to the client.
    fn notice(&self, _notice: PgError) {}
    /// Calls a user-defined function (see `fmgr`).
    fn call_function(&self, func: Oid, _args: &[Datum], _arg_types: &[SqlType], _ret: SqlType) -> PgResult<crate::procedural::CallOutcome> {
        Err(PgError::unsupported(format!("calling user-defined function {func} here")))
    }
    /// Calls a trigger function for one firing (see `fmgr::call_trigger`):
    /// the row it returned (a `Datum::Record`) or NULL.
    /// A value of a domain's base type checked against the domain's NOT
    /// NULL and CHECK constraints (for functions that build values of a
    /// type known only at run time, as json_populate_record does).
    fn check_domain(&self, _value: Datum, domain: SqlType) -> PgResult<Datum> {
        Err(PgError::unsupported(format!("checking domain {} outside a session", domain.oid)))
    }
    fn call_trigger(&self, func: Oid, _data: &crate::procedural::TriggerData) -> PgResult<Datum> {
        Err(PgError::unsupported(format!("calling trigger function {func} here")))
    }
    /// How many trigger functions are running (pg_trigger_depth()).
    fn trigger_depth(&self) -> i32 {
        0
    }
    /// The rows of a named tuplestore (a trigger's transition table) of
    /// the query environment the statement runs in.
    fn named_tuplestore(&self, _name: &str) -> Option<std::sync::Arc<Vec<Vec<Datum>>>> {
        None
    }
    /// This session's named prepared statements (pg_prepared_statements).
    fn prepared_statements(&self) -> Vec<(String, crate::session::PreparedStatementInfo)> {
        Vec::new()
    }
    /// This session's open cursors (pg_cursors).
    fn open_cursors(&self) -> Vec<crate::commands::cursor::CursorInfo> {
        Vec::new()
    }
    fn database_oid(&self) -> Oid;
    /// The bytes a relation's storage holds (see `Engine::prefix_bytes`).
    fn storage_bytes(&self, _storage_id: u32) -> PgResult<u64> {
        Ok(0)
    }
    /// The bytes all relations of a database hold; None if it does not exist.
    fn database_bytes(&self, _db: Oid) -> PgResult<Option<u64>> {
        Ok(None)
    }
    /// Whether rows of `storage_id` may be written around the transaction
    /// (see `tusk_storage::BulkWriter`): the transaction created the storage
    /// at its current savepoint level, and it reads at statement snapshots
    /// (READ COMMITTED), so its later statements see the rows.
    fn bulk_storage(&self, _storage_id: u32) -> bool {
        false
    }
    /// Whether a deferrable constraint is deferred in this transaction
    /// (SET CONSTRAINTS, else how it was declared).
    fn constraint_deferred(&self, _constraint: Oid, initially_deferred: bool) -> bool {
        initially_deferred
    }
    /// Queues the check of a deferred constraint (foreign key or unique)
    /// for the end of the transaction (or SET CONSTRAINTS ... IMMEDIATE).
    fn defer_check(&self, _check: DeferredCheck) {}
    /// pg_notify: a notification sent when the transaction commits.
    fn notify(&self, _channel: std::sync::Arc<str>, _payload: std::sync::Arc<str>) -> PgResult<()> {
        Err(PgError::unsupported("pg_notify outside a session"))
    }
    /// The channels the session listens on (pg_listening_channels).
    fn listening_channels(&self) -> Vec<String> {
        Vec::new()
    }
    /// The fraction of the notification queue in use.
    fn notification_queue_usage(&self) -> f64 {
        0.0
    }
}

/// A check a DEFERRED constraint leaves to the end of the transaction, as
/// PostgreSQL queues its RI and unique-recheck triggers' events.
#[derive(Clone, Debug)]
pub enum DeferredCheck {
    /// A referencing row was written: it must then reference an existing row.
    Reference { constraint: Oid, table: Oid, row_key: Vec<u8> },
    /// A referenced key went away (NO ACTION): no row may reference it then,
    /// unless a row with that key exists again.
    Referenced { constraint: Oid, table: Oid, key: Vec<Datum> },
    /// A row took this key (encoded, without the index's storage prefix)
    /// in the index of a deferrable unique or primary key constraint: at
    /// most one row may have it then.
    Unique { constraint: Oid, table: Oid, index: Oid, key: Vec<u8> },
}

impl DeferredCheck {
    pub fn constraint(&self) -> Oid {
        match self {
            DeferredCheck::Reference { constraint, .. } | DeferredCheck::Referenced { constraint, .. } | DeferredCheck::Unique { constraint, .. } => *constraint,
        }
    }

    /// What makes two queued checks the same check (the later one is then
    /// dropped): a referencing row, or a unique key, per constraint.
    pub fn dedup_key(&self) -> Option<(Oid, Vec<u8>)> {
        match self {
            DeferredCheck::Reference { constraint, row_key, .. } => Some((*constraint, row_key.clone())),
            DeferredCheck::Unique { constraint, key, .. } => Some((*constraint, key.clone())),
            DeferredCheck::Referenced { .. } => None,
        }
    }
}

/// The call context: argument and result types, and the environment.
pub struct FnCtx<'a> {
    pub arg_types: &'a [SqlType],
    pub ret: SqlType,
    pub env: &'a dyn Env,
    /// The pg_proc OID of the function called (user-defined functions
    /// share one implementation, which looks the function up by it).
    pub func: Oid,
}

impl<'a> FnCtx<'a> {
    pub fn arg_type(&self, i: usize) -> Oid {
        self.arg_types.get(i).map(|t| t.oid).unwrap_or(0)
    }
}

type Registry = HashMap<&'static str, ScalarFn>;

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut r = Registry::new();
        numeric_ops::register(&mut r);
        compare::register(&mut r);
        math::register(&mut r);
        string::register(&mut r);
        bytea::register(&mut r);
        datetime_fns::register(&mut r);
        formatting::register(&mut r);
        misc::register(&mut r);
        array_fns::register(&mut r);
        catalog_fns::register(&mut r);
        acl_fns::register(&mut r);
        sizes::register(&mut r);
        gin_fns::register(&mut r);
        json::register(&mut r);
        jsonfuncs::register(&mut r);
        jsonpath::register(&mut r);
        jsonpath_exec::register(&mut r);
        nettypes::register(&mut r);
        srf::register(&mut r);
        signal::register(&mut r);
        cast::register(&mut r);
        xml::register(&mut r);
        tsearch::register(&mut r);
        tsearch_json::register(&mut r);
        range::register(&mut r);
        enums::register(&mut r);
        notify::register(&mut r);
        plprofile::register(&mut r);
        agg_support::register(&mut r);
        // Functions that implement casts (int4(float8), numeric(int8), ...)
        // convert with the general cast machinery.
        let b = crate::catalog::builtins();
        for c in b.casts.values() {
            if c.func == 0 {
                continue;
            }
            if let Some(p) = b.proc(c.func) {
                if !p.src.is_empty() && !r.contains_key(p.src.as_str()) {
                    let name: &'static str = Box::leak(p.src.clone().into_boxed_str());
                    r.insert(name, ScalarFn::Plain(generic_cast));
                }
            }
        }
        r
    })
}

/// A cast function called directly: converts its argument to its result type
/// (a second integer argument, when present, is the target type modifier).
fn generic_cast(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let typmod = if a.len() > 1 { a[1].as_i64().map(|v| v as i32).unwrap_or(-1) } else { -1 };
    let from = c.arg_types.first().copied().unwrap_or(SqlType::new(0));
    let to = SqlType { oid: c.ret.oid, typmod };
    cast::cast_datum_env(a[0].clone(), from, to, true, c.env)
}

/// The implementation of a pg_proc row: by prosrc, or (for SQL-language
/// built-ins, whose prosrc is empty) by OID.
/// The implementation every user-defined function shares: the call goes
/// to `fmgr` through the session.
pub fn user_defined(retset: bool) -> ScalarFn {
    if retset {
        ScalarFn::Set(call_user_set)
    } else {
        ScalarFn::Plain(call_user)
    }
}

fn call_user(args: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    match cx.env.call_function(cx.func, args, cx.arg_types, cx.ret)? {
        crate::procedural::CallOutcome::Value(v) => Ok(v),
        crate::procedural::CallOutcome::Set(rows) => Ok(rows.into_iter().next().unwrap_or(Datum::Null)),
    }
}

fn call_user_set(args: &[Datum], cx: &FnCtx) -> PgResult<SetIter> {
    let rows = match cx.env.call_function(cx.func, args, cx.arg_types, cx.ret)? {
        crate::procedural::CallOutcome::Set(rows) => rows,
        crate::procedural::CallOutcome::Value(Datum::Null) => Vec::new(),
        crate::procedural::CallOutcome::Value(v) => vec![v],
    };
    Ok(Box::new(rows.into_iter().map(Ok)))
}

pub fn lookup_proc(proc: &crate::catalog::builtin::ProcInfo) -> Option<ScalarFn> {
    if !proc.src.is_empty() {
        if let Some(f) = lookup(&proc.src) {
            return Some(f);
        }
    }
    lookup(&format!("oid:{}", proc.oid))
}

/// The implementation of a pg_proc row, by its prosrc.
pub fn lookup(prosrc: &str) -> Option<ScalarFn> {
    registry().get(prosrc).copied()
}

pub(crate) fn plain(r: &mut Registry, names: &[&'static str], f: PlainFn) {
    for n in names {
        r.insert(n, ScalarFn::Plain(f));
    }
}

pub(crate) fn set(r: &mut Registry, names: &[&'static str], f: SetFn) {
    for n in names {
        r.insert(n, ScalarFn::Set(f));
    }
}

// ---------------------------------------------------------------- argument helpers

pub(crate) fn arg_i64(args: &[Datum], i: usize) -> i64 {
    args[i].as_i64().unwrap_or(0)
}

pub(crate) fn arg_f64(args: &[Datum], i: usize) -> f64 {
    match &args[i] {
        Datum::Float8(v) => *v,
        Datum::Float4(v) => *v as f64,
        d => d.as_i64().map(|v| v as f64).unwrap_or(0.0),
    }
}

pub(crate) fn arg_str(args: &[Datum], i: usize) -> &str {
    args[i].as_str().unwrap_or("")
}

pub(crate) fn arg_bool(args: &[Datum], i: usize) -> bool {
    args[i].as_bool().unwrap_or(false)
}

pub(crate) fn int_out_of_range(typename: &str) -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("{typename} out of range"))
}

pub(crate) fn division_by_zero() -> PgError {
    PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero")
}

pub use catalog_fns::{column_default_text, relation_expr_text};
pub use compare::compare as compare_values;
pub use array_fns::stack_arrays;

/// quote_ident: a name as PostgreSQL prints it (quoted when needed).
pub fn quote_ident(s: &str) -> String {
    string::quote_ident_str(s)
}

/// Splits a possibly qualified, possibly quoted name ("a.B", "\"x y\".z")
/// as regclass input does (unquoted parts are lowercased).
pub fn parse_qualified_name(s: &str) -> PgResult<Vec<String>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = s.trim().chars().peekable();
    let mut quoted_part = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted_part = true;
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            cur.push('"');
                        }
                        Some('"') => break,
                        Some(x) => cur.push(x),
                        None => return Err(PgError::new(sqlstate::INVALID_NAME, format!("invalid name syntax"))),
                    }
                }
            }
            '.' => {
                if cur.is_empty() {
                    return Err(PgError::new(sqlstate::INVALID_NAME, "invalid name syntax"));
                }
                parts.push(std::mem::take(&mut cur));
                quoted_part = false;
            }
            c if !quoted_part => cur.extend(c.to_lowercase()),
            c => cur.push(c),
        }
    }
    if cur.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_NAME, "invalid name syntax"));
    }
    parts.push(cur);
    Ok(parts)
}
