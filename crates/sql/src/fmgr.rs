//! Calling user-defined functions and procedures (PostgreSQL's fmgr.c and,
//! for LANGUAGE sql, functions.c): a call evaluated by the executor, a DO
//! block, a CALL.
//!
//! SQL-language functions run their statements through the SPI, their
//! parameters visible by name and as `$n`; the last statement gives the
//! result. Other languages are handed to their registered
//! `LanguageHandler`.

use std::cell::RefCell;
use std::rc::Rc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use crate::catalog::function::Function;
use crate::catalog::{builtins, DbCatalog};
use crate::procedural::{self, CallArgs, CallOutcome, FunctionSource, ParamSource, ResolvedName, Spi, SpiPlan, VariableConflict};
use crate::session::SqlSession;
use crate::spi::SessionSpi;

/// The statements of a SQL function's body, prepared as each first runs
/// (a statement may use what an earlier one created).
pub struct SqlFunctionPlans {
    statements: Vec<String>,
    plans: RefCell<Vec<Option<SpiPlan>>>,
}

/// A SQL function's parameters as its statements see them: by name (or
/// `fname.name`), and as `$n`. A column of the same name wins, as in
/// PostgreSQL's sql_fn_post_column_ref.
struct SqlFunctionParams<'a> {
    fname: &'a str,
    names: Vec<&'a str>,
    types: &'a [SqlType],
}

impl ParamSource for SqlFunctionParams<'_> {
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)> {
        let find = |n: &str| self.names.iter().position(|p| !p.is_empty() && *p == n);
        if let Some(i) = names.first().and_then(|n| find(n)) {
            return Some((ResolvedName::Param { index: i, ty: self.types[i] }, 1));
        }
        if names.len() >= 2 && names[0] == self.fname {
            if let Some(i) = find(names[1]) {
                return Some((ResolvedName::Param { index: i, ty: self.types[i] }, 2));
            }
        }
        None
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        n.checked_sub(1).and_then(|i| self.types.get(i)).copied()
    }
    fn conflict(&self) -> VariableConflict {
        VariableConflict::UseColumn
    }
}

/// function_parse_error_transpose: an error whose position points into a
/// function body (an internal query holding `body`) is shown at that
/// place in `statement`, the CREATE FUNCTION or DO that wrote the body,
/// when the body can be found there exactly once.
pub fn transpose_body_error(mut e: PgError, body: &str, statement: &str) -> PgError {
    let Some(internal) = e.internal.as_ref().filter(|q| q.query == body) else { return e };
    if let Some(at) = match_body_to_statement(body, statement, internal.position as usize) {
        e.position = Some(at as u32);
        e.internal = None;
    }
    e
}

/// match_prosrc_to_query: the 1-based character position in `statement`
/// of the body's character `cursor`, where the body is written as a
/// dollar-quoted or a single-quoted literal (with doubled quotes and
/// backslashes); None unless there is exactly one such place.
fn match_body_to_statement(body: &str, statement: &str, cursor: usize) -> Option<usize> {
    let q: Vec<char> = statement.chars().collect();
    let b: Vec<char> = body.chars().collect();
    let mut found = None;
    for at in 0..q.len() {
        let hit = if q[at] == '$' && q[at + 1..].starts_with(&b) && q.get(at + 1 + b.len()) == Some(&'$') {
            Some(at + 1 + cursor)
        } else if q[at] == '\'' {
            match_body_to_literal(&b, &q[at + 1..], cursor).map(|c| at + 1 + c)
        } else {
            None
        };
        if let Some(h) = hit {
            if found.is_some() {
                return None;
            }
            found = Some(h);
        }
    }
    found
}

/// match_prosrc_to_literal: whether `literal` (after its opening quote)
/// spells `body`, and the cursor moved past the escapes before it.
fn match_body_to_literal(body: &[char], literal: &[char], cursor: usize) -> Option<usize> {
    let mut newcp = cursor;
    let mut left = cursor as i64;
    let mut i = 0;
    for &c in body {
        left -= 1;
        match literal.get(i) {
            Some('\\') => {
                i += 1;
                if left > 0 {
                    newcp += 1;
                }
            }
            Some('\'') => {
                if literal.get(i + 1) != Some(&'\'') {
                    return None;
                }
                i += 1;
                if left > 0 {
                    newcp += 1;
                }
            }
            _ => {}
        }
        if literal.get(i) != Some(&c) {
            return None;
        }
        i += 1;
    }
    (literal.get(i) == Some(&'\'') && literal.get(i + 1) != Some(&'\'')).then_some(newcp)
}

/// regprocout / regprocedureout for a user-defined function: qualified
/// when the search path would not find it.
pub fn reg_name(f: &Function, with_args: bool, env: &crate::session::SessionEnv) -> String {
    let q = crate::functions::quote_ident;
    let schema = env.catalog.namespace_name(f.namespace).to_string();
    let visible = env.s.settings.borrow().search_path.iter().any(|s| *s == schema || (s == "$user" && schema == env.s.user));
    let name = if visible { q(&f.name) } else { format!("{}.{}", q(&schema), q(&f.name)) };
    if !with_args {
        return name;
    }
    let b = crate::catalog::builtins();
    let args: Vec<String> = f.input_types().iter().map(|&t| crate::analyzer::types::format_type_be(b, t)).collect();
    format!("{}({})", name, args.join(","))
}

/// `name(type, ...)` as error CONTEXT lines name a function.
pub fn signature(f: &Function) -> String {
    let b = crate::catalog::builtins();
    let args: Vec<String> = f
        .params
        .iter()
        .filter(|p| p.passed_by_call(f.kind))
        .map(|p| crate::analyzer::types::format_type_be(b, p.type_oid))
        .collect();
    format!("{}({})", f.name, args.join(","))
}

pub fn function_source(f: &Function) -> FunctionSource {
    FunctionSource {
        oid: f.oid,
        name: f.name.clone(),
        signature: signature(f),
        kind: f.kind,
        params: f.params.iter().map(|p| (p.name.clone(), SqlType::new(p.type_oid), p.mode)).collect(),
        ret_type: SqlType::new(f.ret_type),
        retset: f.retset,
        src: f.src.clone(),
        version: f.version,
    }
}

/// `function_source(f)` from the session's cache: a call (a trigger firing
/// per row) then costs a lookup, not the formatting of its signature and
/// a copy of its body.
pub fn source_of(s: &SqlSession, f: &Function) -> Rc<FunctionSource> {
    let key = (f.oid, f.version);
    if let Some(src) = s.function_sources.borrow().get(&key) {
        return src.clone();
    }
    let src = Rc::new(function_source(f));
    let mut cache = s.function_sources.borrow_mut();
    // an older definition of the same function is dead now
    cache.retain(|(o, _), _| *o != f.oid);
    cache.insert(key, src.clone());
    src
}

/// The columns of a function's row result (OUT parameters, RETURNS TABLE).
pub fn output_columns(f: &Function) -> Option<Vec<(String, SqlType)>> {
    let outs = f.output_params();
    if outs.is_empty() || (outs.len() == 1 && f.ret_type != oid::RECORD) {
        return None;
    }
    Some(outs.iter().enumerate().map(|(i, p)| (if p.name.is_empty() { format!("column{}", i + 1) } else { p.name.clone() }, SqlType::new(p.type_oid))).collect())
}

/// Polymorphic OUT parameters take the types this call's arguments give
/// them (an `anyrange` OUT parameter is the input's range type).
fn resolve_output_columns(f: &Function, cols: Vec<(String, SqlType)>, arg_types: &[SqlType]) -> Vec<(String, SqlType)> {
    let declared: Vec<Oid> = f.params.iter().filter(|p| p.is_input()).map(|p| p.type_oid).collect();
    let actual: Vec<Oid> = arg_types.iter().map(|t| t.oid).collect();
    cols.into_iter()
        .map(|(name, ty)| {
            if !crate::analyzer::coerce::is_polymorphic(ty.oid) || declared.len() != actual.len() {
                return (name, ty);
            }
            match crate::analyzer::coerce::resolve_polymorphic(builtins(), &actual, &declared, ty.oid) {
                Ok((_, t)) => (name, SqlType::new(t)),
                Err(_) => (name, ty),
            }
        })
        .collect()
}

/// Calls a user-defined function from a running query.
pub fn call_function(s: &SqlSession, catalog: &DbCatalog, func: Oid, args: &[Datum], arg_types: &[SqlType], ret: SqlType) -> PgResult<CallOutcome> {
    let f = catalog.functions.get(&func).ok_or_else(|| PgError::internal(format!("cache lookup failed for function {func}")))?;
    let spi = SessionSpi::shared(s);
    call_with(&spi, f, args, arg_types, ret)
}

/// Calls `f` through `spi`, with its SET clauses in force for the call.
pub fn call_with(spi: &SessionSpi, f: &Function, args: &[Datum], arg_types: &[SqlType], ret: SqlType) -> PgResult<CallOutcome> {
    crate::stack::check()?;
    let s = spi.session();
    s.interrupt.check()?;
    crate::commands::grant::check_execute(s, f)?;
    check_security_definer(s, f)?;
    if f.config.is_empty() {
        return call_body(spi, f, args, arg_types, ret);
    }
    // proconfig: the settings hold for the call and go back after it,
    // whatever it did to them (fmgr_security_definer's GUC nesting level).
    let saved = s.settings.borrow().clone();
    let applied = f.config.iter().try_for_each(|c| {
        let (name, value) = c.split_once('=').unwrap_or((c.as_str(), ""));
        s.settings.borrow_mut().set(name, value)
    });
    let r = applied.and_then(|_| call_body(spi, f, args, arg_types, ret));
    *s.settings.borrow_mut() = saved;
    r
}

/// SECURITY DEFINER runs a function as its owner. Tusk cannot switch the
/// session's role for a call yet; rather than run it with the caller's
/// privileges (more or fewer than it was written for), a call by another
/// role is refused.
fn check_security_definer(s: &SqlSession, f: &Function) -> PgResult<()> {
    if f.security_definer && crate::commands::grant::current_role_oid(s) != f.owner {
        return Err(PgError::unsupported(format!("calling SECURITY DEFINER function {} as a role other than its owner", f.name)));
    }
    Ok(())
}

fn call_body(spi: &SessionSpi, f: &Function, args: &[Datum], arg_types: &[SqlType], ret: SqlType) -> PgResult<CallOutcome> {
    let columns = output_columns(f).map(|cols| resolve_output_columns(f, cols, arg_types));
    match f.language.as_str() {
        "sql" => call_sql(spi, f, args, arg_types, ret, columns.as_deref()),
        lang => {
            let handler = procedural::language(lang)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("language \"{lang}\" does not exist")))?;
            let source = source_of(spi.session(), f);
            let call = CallArgs { args, arg_types, ret_type: ret, ret_columns: columns.as_deref(), trigger: None, nonatomic: false };
            handler.call(&source, &call, spi)
        }
    }
}

/// Calls a trigger function for one firing (PostgreSQL's ExecCallTriggerFunc):
/// what it returned, a row (`Datum::Record`) or NULL.
pub fn call_trigger(s: &SqlSession, catalog: &DbCatalog, func: Oid, data: &procedural::TriggerData) -> PgResult<Datum> {
    let f = catalog.functions.get(&func).ok_or_else(|| PgError::internal(format!("cache lookup failed for function {func}")))?;
    crate::stack::check()?;
    s.interrupt.check()?;
    let handler = procedural::language(&f.language)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("language \"{}\" does not exist", f.language)))?;
    let spi = SessionSpi::shared(s).with_query_env(data.transition.clone());
    let source = source_of(s, f);
    let call = CallArgs { args: &[], arg_types: &[], ret_type: SqlType::new(oid::TRIGGER), ret_columns: None, trigger: Some(data), nonatomic: false };
    // pg_trigger_depth(): the trigger functions running.
    s.trigger_depth.set(s.trigger_depth.get() + 1);
    let out = handler.call(&source, &call, &spi);
    s.trigger_depth.set(s.trigger_depth.get() - 1);
    match out? {
        CallOutcome::Value(v) => Ok(v),
        CallOutcome::Set(_) => Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "set-valued function called in context that cannot accept a set")),
    }
}

/// The statements of a SQL function body.
fn body_statements(f: &Function) -> PgResult<Vec<String>> {
    let text = f.sql_body.as_deref().unwrap_or(&f.src);
    let stmts = crate::parser::parse(text)?;
    Ok(stmts.iter().map(|st| crate::parser::statement_text(text, st).to_string()).collect())
}

fn call_sql(spi: &SessionSpi, f: &Function, args: &[Datum], arg_types: &[SqlType], ret: SqlType, columns: Option<&[(String, SqlType)]>) -> PgResult<CallOutcome> {
    let s = spi.session();
    let key = (f.oid, f.version, arg_types.to_vec());
    let cached = s.sql_function_cache.borrow().get(&key).cloned();
    let plans = match cached {
        Some(p) => p,
        None => {
            let statements = body_statements(f)?;
            let n = statements.len();
            let p = Rc::new(SqlFunctionPlans { statements, plans: RefCell::new(vec![None; n]) });
            s.sql_function_cache.borrow_mut().insert(key, p.clone());
            p
        }
    };
    let names: Vec<&str> = f.params.iter().filter(|p| p.is_input()).map(|p| p.name.as_str()).collect();
    let params = SqlFunctionParams { fname: &f.name, names, types: arg_types };
    let mut last = None;
    let n = plans.statements.len();
    for i in 0..n {
        let plan = {
            let existing = plans.plans.borrow()[i].clone();
            match existing {
                Some(p) => p,
                None => {
                    let p = spi.prepare(&plans.statements[i], &params).map_err(|e| sql_function_context(e, f))?;
                    plans.plans.borrow_mut()[i] = Some(p.clone());
                    p
                }
            }
        };
        // Only the last statement's rows are the result; a non-set
        // function needs only its first.
        let max = if i + 1 == n && !f.retset { 1 } else { 0 };
        let r = spi.execute(&plan, args, max).map_err(|e| sql_function_context(e, f))?;
        last = Some(r);
    }
    if f.kind == 'p' || ret.oid == oid::VOID {
        let out = match (columns, last) {
            (Some(cols), Some(r)) if f.kind == 'p' => match r.rows.into_iter().next() {
                Some(row) => Datum::Record(std::sync::Arc::new(coerce_row(spi, row, &r.columns, cols)?)),
                None => Datum::Null,
            },
            _ => Datum::Null,
        };
        return Ok(CallOutcome::Value(out));
    }
    let r = last.unwrap_or_default();
    let to_value = |row: Vec<Datum>| -> PgResult<Datum> {
        match columns {
            Some(cols) => Ok(Datum::Record(std::sync::Arc::new(coerce_row(spi, row, &r.columns, cols)?))),
            None => {
                let from = r.columns.first().map(|c| c.1).unwrap_or(SqlType::new(oid::UNKNOWN));
                let v = row.into_iter().next().unwrap_or(Datum::Null);
                spi.coerce(v, from, ret)
            }
        }
    };
    if f.retset {
        let mut out = Vec::with_capacity(r.rows.len());
        for row in r.rows.clone() {
            out.push(to_value(row)?);
        }
        return Ok(CallOutcome::Set(out));
    }
    match r.rows.clone().into_iter().next() {
        Some(row) => Ok(CallOutcome::Value(to_value(row)?)),
        None => Ok(CallOutcome::Value(Datum::Null)),
    }
}

fn coerce_row(spi: &SessionSpi, row: Vec<Datum>, have: &[(String, SqlType)], want: &[(String, SqlType)]) -> PgResult<Vec<Datum>> {
    if row.len() != want.len() {
        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "function return row and query-specified return row do not match")
            .with_detail(format!("Returned row contains {} attributes, but query expects {}.", row.len(), want.len())));
    }
    row.into_iter().zip(have).zip(want).map(|((v, (_, from)), (_, to))| spi.coerce(v, *from, *to)).collect()
}

/// PostgreSQL's sql_exec_error_callback: `SQL function "f" statement 1`.
fn sql_function_context(mut e: PgError, f: &Function) -> PgError {
    let line = format!("SQL function \"{}\" statement 1", f.name);
    e.context = Some(match e.context.take() {
        Some(c) => format!("{c}\n{line}"),
        None => line,
    });
    e
}

// ---------------------------------------------------------------- DO

/// DO [LANGUAGE lang] 'code'.
pub fn run_do(s: &mut SqlSession, d: &pb::DoStmt, sql: &str) -> PgResult<()> {
    let mut code = None;
    let mut language = "plpgsql".to_string();
    for a in &d.args {
        if let Some(NodeEnum::DefElem(e)) = &a.node {
            let val = match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
                Some(NodeEnum::String(v)) => v.sval.clone(),
                _ => String::new(),
            };
            match e.defname.as_str() {
                "as" => code = Some(val),
                "language" => language = val,
                _ => {}
            }
        }
    }
    let code = code.ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, "no inline code specified"))?;
    let handler = match procedural::language(&language) {
        Some(h) => h,
        None if language == "sql" || language == "internal" || language == "c" => {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("language \"{language}\" does not support inline code execution")))
        }
        None => {
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("language \"{language}\" does not exist"))
                .with_hint("Use CREATE EXTENSION to load the language into the database."))
        }
    };
    let nonatomic = !s.in_block.get();
    let spi = SessionSpi::exclusive(s, nonatomic);
    handler.inline(&code, &spi).map_err(|e| transpose_body_error(e, &code, sql))
}

/// Runs a procedure for CALL with its (already evaluated) arguments:
/// the values of its OUT/INOUT parameters, if it has any.
/// Runs a procedure for CALL: `columns` are its output parameters (one
/// still makes a row), polymorphic ones resolved for this call.
pub fn call_procedure(s: &mut SqlSession, f: &Function, args: &[Datum], arg_types: &[SqlType], columns: Option<&[(String, SqlType)]>) -> PgResult<Option<Datum>> {
    let nonatomic = !s.in_block.get();
    crate::commands::grant::check_execute(s, f)?;
    check_security_definer(s, f)?;
    let spi = SessionSpi::exclusive(s, nonatomic);
    crate::stack::check()?;
    let ret = SqlType::new(if columns.is_some() { oid::RECORD } else { oid::VOID });
    let outcome = match f.language.as_str() {
        "sql" => call_sql(&spi, f, args, arg_types, ret, columns)?,
        lang => {
            let handler = procedural::language(lang)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("language \"{lang}\" does not exist")))?;
            let source = function_source(f);
            let call = CallArgs { args, arg_types, ret_type: ret, ret_columns: columns, trigger: None, nonatomic };
            handler.call(&source, &call, &spi)?
        }
    };
    Ok(match (columns, outcome) {
        (Some(_), CallOutcome::Value(v)) => Some(v),
        _ => None,
    })
}
