//! PL/pgSQL for Tusk: the `plpgsql` language handler (PostgreSQL's
//! pl_handler.c). It compiles a function's body once per session (cached
//! by the function's oid and version), runs calls, trigger firings and DO
//! blocks through the SPI of tusk-sql, and checks bodies at CREATE
//! FUNCTION. Nothing below this crate knows it exists: the binary
//! registers it with `tusk_sql::procedural::register_language`.

pub mod ast;
pub mod conditions;
mod errcodes;
pub mod exec;
pub mod lexer;
pub mod parser;
pub mod profile;
mod trigger_values;

use std::rc::Rc;
use std::sync::Arc;

use tusk_sql::procedural::{CallArgs, CallOutcome, FunctionSource, LanguageHandler, Spi};
use tusk_types::{oid, Datum, PgError, PgResult, SqlType};

use ast::Function;

/// The checks plpgsql.extra_warnings and plpgsql.extra_errors can turn on
/// (PLPGSQL_XCHECK_*), as bits.
pub const XCHECK_SHADOWVAR: u8 = 1;
pub const XCHECK_TOOMANYROWS: u8 = 2;
pub const XCHECK_STRICTMULTIASSIGNMENT: u8 = 4;

/// The checks a plpgsql.extra_* setting names: 'none', 'all' or a
/// comma-separated list (plpgsql_extra_checks_check_hook).
pub fn extra_checks(spi: &dyn Spi, setting: &str) -> u8 {
    let Some(v) = spi.setting(setting) else { return 0 };
    let mut bits = 0;
    for w in v.split(',') {
        match w.trim().to_ascii_lowercase().as_str() {
            "all" => bits = XCHECK_SHADOWVAR | XCHECK_TOOMANYROWS | XCHECK_STRICTMULTIASSIGNMENT,
            "shadowed_variables" => bits |= XCHECK_SHADOWVAR,
            "too_many_rows" => bits |= XCHECK_TOOMANYROWS,
            "strict_multi_assignment" => bits |= XCHECK_STRICTMULTIASSIGNMENT,
            _ => {}
        }
    }
    bits
}

/// Whether a check is on as an error (Some(true)), a warning (Some(false)) or off.
pub fn extra_check_level(spi: &dyn Spi, check: u8) -> Option<bool> {
    if extra_checks(spi, "plpgsql.extra_errors") & check != 0 {
        Some(true)
    } else if extra_checks(spi, "plpgsql.extra_warnings") & check != 0 {
        Some(false)
    } else {
        None
    }
}
use parser::FuncSpec;

pub struct PlPgSql;

impl PlPgSql {
    pub fn handler() -> Arc<dyn LanguageHandler> {
        Arc::new(PlPgSql)
    }
}

fn spec_of(func: &FunctionSource, for_validator: bool) -> FuncSpec<'_> {
    FuncSpec {
        for_validator,
        is_inline: false,
        context_name: format!("PL/pgSQL function {}", func.signature),
        name: func.name.clone(),
        params: &func.params,
        ret_type: func.ret_type,
        retset: func.retset,
        is_procedure: func.kind == 'p',
        is_trigger: func.ret_type.oid == oid::TRIGGER,
    }
}

/// A compile error leaving the handler. Its position counts characters of
/// the body, and the engine has no way yet to move it onto the statement
/// the body came in (PostgreSQL's function_parse_error_transpose), so it
/// is left out rather than pointing at the wrong place.
/// A compile error's position points into the body: it becomes the
/// position in that internal query, which the caller may place in the
/// statement that wrote the body (function_parse_error_transpose).
fn body_error(e: PgError, src: &str) -> PgError {
    e.into_internal_query(src, 0)
}

/// The compiled form of a function, from the session's cache or compiled now.
fn compiled(func: &FunctionSource, spi: &dyn Spi) -> PgResult<Rc<Function>> {
    let key = (func.oid, func.version);
    if let Some(c) = spi.language_cache().borrow().get(&key) {
        if let Ok(f) = c.clone().downcast::<Function>() {
            return Ok(f);
        }
    }
    let f = Rc::new(parser::compile(&func.src, &spec_of(func, false), spi).map_err(|e| body_error(e, &func.src))?);
    let mut cache = spi.language_cache().borrow_mut();
    // an older version of the same function is dead now
    cache.retain(|(o, _), _| *o != func.oid);
    cache.insert(key, f.clone());
    Ok(f)
}

impl LanguageHandler for PlPgSql {
    fn name(&self) -> &'static str {
        "plpgsql"
    }

    fn validate(&self, func: &FunctionSource, spi: &dyn Spi) -> PgResult<()> {
        if func.ret_type.oid == oid::TRIGGER && func.params.iter().any(|p| p.2 != 'o') {
            return Err(PgError::new(tusk_types::sqlstate::INVALID_FUNCTION_DEFINITION, "trigger functions cannot have declared arguments")
                .with_hint("The arguments of the trigger can be accessed through TG_NARGS and TG_ARGV instead."));
        }
        parser::compile(&func.src, &spec_of(func, true), spi).map_err(|e| body_error(e, &func.src))?;
        Ok(())
    }

    fn call(&self, func: &FunctionSource, call: &CallArgs, spi: &dyn Spi) -> PgResult<CallOutcome> {
        let f = compiled(func, spi)?;
        let mut ex = exec::Exec::new(&f, spi, Some(call));
        if profile::enabled(spi) {
            ex.profile = Some(profile::CallProfile::default());
        }
        ex.bind_args(call)?;
        let r = ex.run();
        if let Some(p) = ex.profile.take() {
            profile::merge(func.oid, &func.signature, &func.src, p);
        }
        r?;
        if f.retset {
            return Ok(CallOutcome::Set(std::mem::take(&mut ex.set_rows)));
        }
        let out_value = |ex: &exec::Exec| -> Datum {
            match f.out_params.as_slice() {
                [] => Datum::Null,
                [s] => ex.vals[*s].clone(),
                many => Datum::Record(Arc::new(many.iter().map(|s| ex.vals[*s].clone()).collect())),
            }
        };
        if f.is_procedure {
            // CALL makes a row of the OUT/INOUT parameters, even of one
            if f.out_params.is_empty() {
                return Ok(CallOutcome::Value(Datum::Null));
            }
            return Ok(CallOutcome::Value(Datum::Record(Arc::new(f.out_params.iter().map(|s| ex.vals[*s].clone()).collect()))));
        }
        let v = match ex.retval.take() {
            Some((v, _)) => v,
            None => out_value(&ex),
        };
        if let Some(t) = call.trigger {
            return match v {
                Datum::Null => Ok(CallOutcome::Value(Datum::Null)),
                Datum::Record(r) => {
                    if t.level == "ROW" && r.len() != t.columns.len() {
                        return Err(PgError::new(tusk_types::sqlstate::DATATYPE_MISMATCH, "returned row structure does not match the structure of the triggering table")
                            .with_detail("Number of returned columns does not match expected column count."));
                    }
                    Ok(CallOutcome::Value(Datum::Record(r)))
                }
                _ => Err(PgError::new(tusk_types::sqlstate::DATATYPE_MISMATCH, "trigger procedure cannot return a set")),
            };
        }
        Ok(CallOutcome::Value(v))
    }

    fn profile(&self) -> Vec<tusk_sql::procedural::ProfileLine> {
        profile::rows()
    }

    fn profile_reset(&self) {
        profile::reset()
    }

    fn inline(&self, source: &str, spi: &dyn Spi) -> PgResult<()> {
        let spec = FuncSpec {
            for_validator: false,
            is_inline: true,
            context_name: "PL/pgSQL function inline_code_block".into(),
            name: "inline_code_block".into(),
            params: &[],
            ret_type: SqlType::new(oid::VOID),
            retset: false,
            is_procedure: true,
            is_trigger: false,
        };
        let f = parser::compile(source, &spec, spi).map_err(|e| body_error(e, source))?;
        let args = CallArgs { args: &[], arg_types: &[], ret_type: SqlType::new(oid::VOID), ret_columns: None, trigger: None, nonatomic: true };
        let mut ex = exec::Exec::new(&f, spi, Some(&args));
        ex.run()
    }
}
