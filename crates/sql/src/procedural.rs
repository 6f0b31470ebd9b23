//! The interface between the SQL engine and procedural languages
//! (PL/pgSQL): what PostgreSQL splits between its function manager
//! (fmgr: calling a language's handler), its SPI (running SQL from
//! procedural code) and the parser hooks a language installs to resolve
//! its variables in the queries it runs.
//!
//! Languages live in crates above this one and register a
//! `LanguageHandler` with the cluster (`Cluster::register_language`) when
//! the server starts; nothing in this crate knows which languages exist.
//! The engine calls a handler to validate a body at CREATE FUNCTION, to
//! run a call, a trigger or a DO block, and hands it an `Spi` through which
//! the procedural code runs its statements inside the caller's transaction.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use tusk_types::{Datum, Oid, PgError, PgResult, SqlType};

/// A function as a language handler sees it: its pg_proc row.
#[derive(Clone, Debug)]
pub struct FunctionSource {
    pub oid: Oid,
    pub name: String,
    /// `name(argtypes)` as PostgreSQL's error CONTEXT lines print the
    /// function ("PL/pgSQL function f(integer) line 3 at RAISE").
    pub signature: String,
    /// 'f' function, 'p' procedure.
    pub kind: char,
    /// Every parameter (proallargtypes order): name ("" if unnamed), type,
    /// mode ('i' in, 'o' out, 'b' inout, 'v' variadic, 't' table column).
    pub params: Vec<(String, SqlType, char)>,
    /// The declared result type (RECORD for several OUT parameters,
    /// VOID for procedures, TRIGGER / EVENT_TRIGGER for triggers).
    pub ret_type: SqlType,
    pub retset: bool,
    /// prosrc: the body text.
    pub src: String,
    /// A version that changes whenever the definition does (CREATE OR
    /// REPLACE, ALTER): handlers key compiled forms by (oid, version).
    pub version: u64,
}

/// What a call passes to a handler.
pub struct CallArgs<'a> {
    /// The input arguments, in the order of the function's input
    /// parameters (IN, INOUT and VARIADIC ones), defaults filled in.
    pub args: &'a [Datum],
    /// Their types as resolved for this call (polymorphic parameters
    /// resolved to the actual types).
    pub arg_types: &'a [SqlType],
    /// The result type as resolved for this call.
    pub ret_type: SqlType,
    /// The names and types of the result's columns when the function
    /// returns a row (OUT parameters, RETURNS TABLE, a composite type, or
    /// a column definition list for `record`).
    pub ret_columns: Option<&'a [(String, SqlType)]>,
    /// Set when the function runs as a trigger.
    pub trigger: Option<&'a TriggerData>,
    /// A CALL of a procedure at the top level of a statement, which may
    /// COMMIT and ROLLBACK (PostgreSQL's non-atomic context).
    pub nonatomic: bool,
}

/// A trigger firing, as PL/pgSQL's TG_* variables and NEW/OLD see it.
#[derive(Clone, Debug)]
pub struct TriggerData {
    pub name: String,
    /// "BEFORE", "AFTER" or "INSTEAD OF".
    pub when: &'static str,
    /// "ROW" or "STATEMENT".
    pub level: &'static str,
    /// "INSERT", "UPDATE", "DELETE" or "TRUNCATE".
    pub op: &'static str,
    pub relid: Oid,
    pub table_name: String,
    pub table_schema: String,
    pub args: Vec<String>,
    /// The table's columns (dropped ones included, named "" and typed
    /// UNKNOWN, so positions match the rows).
    pub columns: Vec<(String, SqlType)>,
    pub new: Option<Vec<Datum>>,
    pub old: Option<Vec<Datum>>,
    /// The transition tables the trigger named (REFERENCING OLD/NEW
    /// TABLE AS ...): the queries its function runs read them by name.
    pub transition: Vec<NamedTuplestore>,
}

/// A set of rows queries may read by name as if it were a table
/// (PostgreSQL's ephemeral named relation): a trigger's transition table.
#[derive(Clone, Debug)]
pub struct NamedTuplestore {
    pub name: String,
    pub columns: Vec<(String, SqlType)>,
    pub rows: Arc<Vec<Vec<Datum>>>,
}

/// A handler's answer to a call.
pub enum CallOutcome {
    Value(Datum),
    /// A set-returning function's rows (each a value, or a
    /// `Datum::Record` for functions returning rows).
    Set(Vec<Datum>),
}

/// A procedural language (PostgreSQL's pg_language row plus its handler,
/// validator and inline handler).
pub trait LanguageHandler: Send + Sync {
    /// pg_language.lanname.
    fn name(&self) -> &'static str;
    /// Checks a body at CREATE FUNCTION (with `check_function_bodies` on):
    /// syntax, and what can be known without running it.
    fn validate(&self, func: &FunctionSource, spi: &dyn Spi) -> PgResult<()>;
    /// Runs a call of a function or procedure written in this language.
    fn call(&self, func: &FunctionSource, call: &CallArgs, spi: &dyn Spi) -> PgResult<CallOutcome>;
    /// Runs a DO block.
    fn inline(&self, source: &str, spi: &dyn Spi) -> PgResult<()>;
    /// What the language's profiler counted, server-wide (the view
    /// `tusk_plpgsql_profile`); empty for a language without one.
    fn profile(&self) -> Vec<ProfileLine> {
        Vec::new()
    }
    /// Clears the profiler's counts (`tusk_plpgsql_profile_reset()`).
    fn profile_reset(&self) {}
}

/// One line of a function as a language's profiler counted it.
#[derive(Clone, Debug)]
pub struct ProfileLine {
    pub function: Oid,
    /// `name(argtypes)`.
    pub signature: String,
    /// 1 = the first line of the body text.
    pub line: i32,
    pub source: String,
    /// Statements on the line executed.
    pub calls: i64,
    /// Milliseconds, the statements nested in the line's included.
    pub total_ms: f64,
    pub max_ms: f64,
}

/// How the analyzer resolves a name in a query the procedural code runs
/// that is both a column and a variable (`#variable_conflict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VariableConflict {
    /// 42702 "column reference is ambiguous" (PL/pgSQL's default).
    #[default]
    Error,
    UseVariable,
    UseColumn,
}

/// A name in a query that stands for a value of the procedural code.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedName {
    /// The whole value of parameter `index` (0-based: `$index+1`).
    Param { index: usize, ty: SqlType },
    /// Field `field` of the row value in parameter `index`.
    Field { index: usize, record_ty: SqlType, field: usize, ty: SqlType },
}

/// The variables a query may reference, as parameters (PostgreSQL's
/// p_pre_columnref_hook / p_post_columnref_hook / p_paramref_hook).
pub trait ParamSource {
    /// Resolves the parts of a column reference (`x`, `r.f`, `blk.x`,
    /// `blk.r.f`): the value and how many parts it consumed; the parts left
    /// over select fields of it. None if no variable has the name.
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)>;
    /// The type of `$n` (1-based), for bodies that use positional
    /// references; None if there is no such parameter.
    fn param_type(&self, n: usize) -> Option<SqlType>;
    /// The field names of a row-valued parameter (for `(p).f` and `p.*`).
    fn param_fields(&self, _index: usize) -> Option<Vec<(String, SqlType)>> {
        None
    }
    fn conflict(&self) -> VariableConflict {
        VariableConflict::Error
    }
    /// The columns of a named tuplestore (a transition table) the query
    /// may read under an unqualified `name`; None if there is none.
    fn named_relation(&self, _name: &str) -> Option<Vec<(String, SqlType)>> {
        None
    }
}

/// A prepared statement of procedural code (SPI_prepare's plan). Opaque
/// to the language; the engine keeps whatever it needs inside.
#[derive(Clone)]
pub struct SpiPlan {
    pub inner: Rc<dyn Any>,
    /// The result columns (empty for statements without rows).
    pub columns: Vec<(String, SqlType)>,
    /// What the statement is, for PL/pgSQL's checks ("SELECT", "INSERT",
    /// "UPDATE", "DELETE", "MERGE", or a utility statement's command tag).
    pub command: String,
    /// Whether it returns rows (a query, or DML with RETURNING).
    pub returns_rows: bool,
    /// For a CALL, one entry per output parameter of the procedure: the
    /// `$n` parameter (0-based) its argument is, where the caller puts
    /// that output (PL/pgSQL's INOUT variables); None when the argument
    /// is not a plain parameter.
    pub call_outputs: Vec<Option<usize>>,
}

/// A statement's outcome.
#[derive(Clone, Debug, Default)]
pub struct SpiResult {
    pub columns: Vec<(String, SqlType)>,
    pub rows: Vec<Vec<Datum>>,
    /// Rows processed (SPI_processed: selected, or inserted/updated/deleted).
    pub processed: u64,
    /// The command tag ("SELECT 3", "INSERT 0 1", "CREATE TABLE").
    pub tag: String,
}

/// FETCH/MOVE directions for cursors of procedural code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchDirection {
    Next,
    Prior,
    First,
    Last,
    Absolute(i64),
    Relative(i64),
    Forward(i64),
    Backward(i64),
    ForwardAll,
    BackwardAll,
}

/// What procedural code may do in the engine: PostgreSQL's SPI, plus the
/// type and catalog lookups a PL needs to compile its declarations.
pub trait Spi {
    // ---- statements

    /// Parses, analyzes and plans one statement, resolving names and `$n`
    /// through `params`.
    fn prepare(&self, sql: &str, params: &dyn ParamSource) -> PgResult<SpiPlan>;
    /// Runs a prepared statement with parameter values (one per parameter
    /// index the plan's `ParamSource` handed out; absent ones are NULL).
    /// `max_rows` 0 = all.
    fn execute(&self, plan: &SpiPlan, args: &[Datum], max_rows: usize) -> PgResult<SpiResult>;
    /// Evaluates a prepared expression-like statement (`SELECT expr`) that
    /// must return one column: its value in the first row, NULL if none.
    /// Errors as PL/pgSQL's exec_eval_expr ("query returned more than one
    /// row", "query returned N columns"). The engine takes a fast path for
    /// plans without tables.
    fn eval(&self, plan: &SpiPlan, args: &[Datum]) -> PgResult<(Datum, SqlType)>;
    /// Whether `eval` computes `plan` as a simple expression, without
    /// running a statement (exec_eval_simple_expr): an error raised there
    /// is not in any statement, so PL/pgSQL adds no statement context.
    fn is_simple_expr(&self, _plan: &SpiPlan) -> bool {
        false
    }
    /// Parses, plans and runs a statement given as text (EXECUTE), with
    /// `$n` parameters of the given values and types.
    fn execute_dynamic(&self, sql: &str, args: &[(Datum, SqlType)], max_rows: usize) -> PgResult<SpiResult>;

    // ---- cursors (portals named as SQL cursors, so FETCH in SQL sees them)

    /// Opens a portal over a prepared query; `name` None = an unused
    /// name is chosen ("<unnamed portal N>"). Returns the name.
    fn cursor_open(&self, name: Option<&str>, plan: &SpiPlan, args: &[Datum], scroll: bool) -> PgResult<String>;
    fn cursor_open_dynamic(&self, name: Option<&str>, sql: &str, args: &[(Datum, SqlType)], scroll: bool) -> PgResult<String>;
    /// Rows of an open portal (MOVE: `fetch` false, rows counted, not returned).
    fn cursor_fetch(&self, name: &str, direction: FetchDirection, fetch: bool) -> PgResult<SpiResult>;
    fn cursor_close(&self, name: &str) -> PgResult<()>;

    // ---- subtransactions (a PL/pgSQL block with an EXCEPTION clause)

    fn begin_subtransaction(&self) -> PgResult<()>;
    fn release_subtransaction(&self) -> PgResult<()>;
    fn rollback_subtransaction(&self) -> PgResult<()>;

    // ---- transaction control, in procedures called non-atomically

    fn commit(&self, chain: bool) -> PgResult<()>;
    fn rollback(&self, chain: bool) -> PgResult<()>;

    // ---- values and types

    /// Assignment conversion of a value to a variable's type (PL/pgSQL's
    /// exec_cast_value: a cast if one exists, else through text).
    fn coerce(&self, value: Datum, from: SqlType, to: SqlType) -> PgResult<Datum>;
    /// The type's output function (RAISE's `%`, string concatenation).
    fn output(&self, value: &Datum, ty: SqlType) -> PgResult<String>;
    fn input(&self, text: &str, ty: SqlType) -> PgResult<Datum>;
    /// A type name as written in a declaration (`numeric(10,2)`,
    /// `public.t`, `int[]`): its type and typmod.
    fn parse_type(&self, name: &str) -> PgResult<SqlType>;
    /// `rel.col%TYPE` / `var%TYPE` helpers: a relation column's type.
    fn column_type(&self, qualified_relation: &[&str], column: &str) -> PgResult<SqlType>;
    /// The columns of a composite type (a table's row type for
    /// `t%ROWTYPE`); None if the type is not composite.
    fn composite_fields(&self, ty: SqlType) -> Option<Vec<(String, SqlType)>>;
    /// `tab%ROWTYPE`: the row type of a relation named by its parts, and
    /// its columns (dropped ones left out). Until tables have row types of
    /// their own the type is RECORD, the columns saying what it holds.
    fn relation_row_type(&self, qualified_relation: &[&str]) -> PgResult<(SqlType, Vec<(String, SqlType)>)>;
    /// A type's name as format_type prints it (messages).
    fn type_name(&self, ty: SqlType) -> String;

    // ---- the session

    /// Sends a NOTICE/WARNING/INFO/LOG/DEBUG (RAISE), subject to
    /// client_min_messages.
    fn notice(&self, notice: PgError);
    /// A setting's current value (SHOW), None if unknown.
    fn setting(&self, name: &str) -> Option<String>;
    /// Cancellation and statement timeout.
    fn check_interrupts(&self) -> PgResult<()>;
    /// Per-session storage for the language (compiled functions), which
    /// lives as long as the session.
    fn language_cache(&self) -> &RefCell<HashMap<(Oid, u64), Rc<dyn Any>>>;
}

/// The languages the process knows, by name: registered once by the
/// binary before it serves (a language is code, not data, so it is the
/// same for every cluster the process opens).
fn languages() -> &'static std::sync::RwLock<HashMap<&'static str, Arc<dyn LanguageHandler>>> {
    static LANGUAGES: std::sync::OnceLock<std::sync::RwLock<HashMap<&'static str, Arc<dyn LanguageHandler>>>> = std::sync::OnceLock::new();
    LANGUAGES.get_or_init(Default::default)
}

pub fn register_language(handler: Arc<dyn LanguageHandler>) {
    languages().write().unwrap_or_else(|e| e.into_inner()).insert(handler.name(), handler);
}

/// Every installed language's handler.
pub fn all_languages() -> Vec<Arc<dyn LanguageHandler>> {
    languages().read().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
}

/// The handler of a language, None if no such language is installed.
pub fn language(name: &str) -> Option<Arc<dyn LanguageHandler>> {
    languages().read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
}
