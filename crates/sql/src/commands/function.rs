//! CREATE [OR REPLACE] FUNCTION / PROCEDURE, DROP FUNCTION / PROCEDURE /
//! ROUTINE, CALL and DO (PostgreSQL's functioncmds.c and pg_proc.c).

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use super::ddl::deparse_expr;
use super::{grant, UtilityResult};
use crate::analyzer::types::{format_type, resolve_type_name, type_name_display};
use crate::catalog::function::{Function, FunctionParam};
use crate::catalog::depend::ObjectAddress;
use crate::catalog::{builtins, store, DbCatalog};
use crate::plan::OutputColumn;
use crate::procedural::{self, Spi};
use crate::session::SqlSession;
use crate::spi::SessionSpi;

fn invalid_definition(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_FUNCTION_DEFINITION, message)
}

fn names_of(nodes: &[Node]) -> Vec<String> {
    nodes.iter().filter_map(|n| match &n.node {
        Some(NodeEnum::String(s)) => Some(s.sval.clone()),
        _ => None,
    }).collect()
}

fn split_name(names: &[String]) -> PgResult<(Option<String>, String)> {
    match names {
        [n] => Ok((None, n.clone())),
        [s, n] => Ok((Some(s.clone()), n.clone())),
        [_, s, n] => Ok((Some(s.clone()), n.clone())),
        _ => Err(PgError::syntax(format!("improper qualified name (too many dotted names): {}", names.join(".")))),
    }
}

fn def_string(e: &pb::DefElem) -> Option<String> {
    match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::String(s)) => Some(s.sval.clone()),
        Some(NodeEnum::Integer(i)) => Some(i.ival.to_string()),
        Some(NodeEnum::Float(f)) => Some(f.fval.clone()),
        Some(NodeEnum::Boolean(b)) => Some(b.boolval.to_string()),
        Some(NodeEnum::TypeName(t)) => Some(type_name_display(t)),
        Some(NodeEnum::List(l)) => Some(l.items.iter().filter_map(|n| match &n.node {
            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
            _ => None,
        }).collect::<Vec<_>>().join(".")),
        _ => None,
    }
}

fn def_bool(e: &pb::DefElem) -> bool {
    match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::Boolean(b)) => b.boolval,
        Some(NodeEnum::Integer(i)) => i.ival != 0,
        None => true,
        _ => def_string(e).is_some_and(|s| matches!(s.as_str(), "true" | "on" | "1")),
    }
}

/// The attributes CREATE FUNCTION and ALTER FUNCTION set.
#[derive(Default)]
struct Attributes {
    language: Option<String>,
    body: Option<Vec<String>>,
    volatility: Option<char>,
    strict: Option<bool>,
    security_definer: Option<bool>,
    leakproof: Option<bool>,
    parallel: Option<char>,
    cost: Option<f32>,
    rows: Option<f32>,
    config: Vec<(String, Option<String>)>,
    reset_all: bool,
    window: bool,
}

fn conflicting() -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

/// The attributes in `options`; a procedure takes only LANGUAGE, AS,
/// SECURITY and SET (compute_common_attribute's procedure_error).
fn parse_attributes(options: &[Node], procedure: bool) -> PgResult<Attributes> {
    let mut a = Attributes::default();
    for o in options {
        let Some(NodeEnum::DefElem(e)) = &o.node else { continue };
        if procedure && matches!(e.defname.as_str(), "volatility" | "strict" | "leakproof" | "cost" | "rows" | "support" | "parallel" | "window") {
            return Err(invalid_definition("invalid attribute in procedure definition").with_position(crate::analyzer::pos(e.location)));
        }
        match e.defname.as_str() {
            "as" => {
                if a.body.is_some() {
                    return Err(conflicting());
                }
                a.body = Some(match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
                    Some(NodeEnum::List(l)) => l.items.iter().filter_map(|n| match &n.node {
                        Some(NodeEnum::String(s)) => Some(s.sval.clone()),
                        _ => None,
                    }).collect(),
                    Some(NodeEnum::String(s)) => vec![s.sval.clone()],
                    _ => Vec::new(),
                });
            }
            "language" => {
                if a.language.is_some() {
                    return Err(conflicting());
                }
                a.language = def_string(e);
            }
            "volatility" => {
                if a.volatility.is_some() {
                    return Err(conflicting());
                }
                a.volatility = Some(match def_string(e).as_deref() {
                    Some("immutable") => 'i',
                    Some("stable") => 's',
                    _ => 'v',
                });
            }
            "strict" => {
                if a.strict.is_some() {
                    return Err(conflicting());
                }
                a.strict = Some(def_bool(e));
            }
            "security" => {
                if a.security_definer.is_some() {
                    return Err(conflicting());
                }
                a.security_definer = Some(def_bool(e));
            }
            "leakproof" => {
                if a.leakproof.is_some() {
                    return Err(conflicting());
                }
                a.leakproof = Some(def_bool(e));
            }
            "parallel" => {
                if a.parallel.is_some() {
                    return Err(conflicting());
                }
                a.parallel = Some(match def_string(e).as_deref() {
                    Some("safe") => 's',
                    Some("restricted") => 'r',
                    Some("unsafe") => 'u',
                    Some(other) => {
                        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "parameter \"parallel\" must be SAFE, RESTRICTED, or UNSAFE")
                            .with_detail(format!("{other}")))
                    }
                    None => 'u',
                });
            }
            "cost" => {
                let v: f32 = def_string(e).and_then(|s| s.parse().ok()).unwrap_or(0.0);
                if v <= 0.0 {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "COST must be positive"));
                }
                a.cost = Some(v);
            }
            "rows" => {
                let v: f32 = def_string(e).and_then(|s| s.parse().ok()).unwrap_or(0.0);
                if v <= 0.0 {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "ROWS must be positive"));
                }
                a.rows = Some(v);
            }
            "set" => {
                if let Some(NodeEnum::VariableSetStmt(v)) = e.arg.as_deref().and_then(|n| n.node.as_ref()) {
                    match v.kind {
                        // VAR_SET_VALUE, VAR_SET_DEFAULT
                        1 => a.config.push((v.name.clone(), Some(set_value_text(&v.args)))),
                        2 | 5 => a.config.push((v.name.clone(), None)),
                        // VAR_SET_CURRENT
                        3 => a.config.push((v.name.clone(), None)),
                        // VAR_RESET_ALL
                        6 => a.reset_all = true,
                        _ => {}
                    }
                }
            }
            "window" => a.window = def_bool(e),
            "support" => return Err(PgError::unsupported("SUPPORT functions")),
            "transform" => return Err(PgError::unsupported("TRANSFORM FOR TYPE")),
            _ => {}
        }
    }
    Ok(a)
}

fn set_value_text(args: &[Node]) -> String {
    args.iter()
        .map(|n| match &n.node {
            Some(NodeEnum::AConst(c)) => match &c.val {
                Some(pb::a_const::Val::Sval(s)) => s.sval.clone(),
                Some(pb::a_const::Val::Ival(i)) => i.ival.to_string(),
                Some(pb::a_const::Val::Fval(f)) => f.fval.clone(),
                Some(pb::a_const::Val::Boolval(b)) => if b.boolval { "on".into() } else { "off".into() },
                _ => String::new(),
            },
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parameter or result type as written; `%TYPE` references resolved
/// through the catalog (with PostgreSQL's NOTICE).
fn resolve_type(s: &SqlSession, catalog: &DbCatalog, tn: &pb::TypeName) -> PgResult<SqlType> {
    if tn.pct_type {
        let names = names_of(&tn.names);
        let (rel_parts, col) = names.split_at(names.len().saturating_sub(1));
        let spi = SessionSpi::shared(s);
        let parts: Vec<&str> = rel_parts.iter().map(String::as_str).collect();
        let ty = spi.column_type(&parts, &col[0])?;
        s.notices.borrow_mut().push(PgError::notice(format!(
            "type reference {}%TYPE converted to {}",
            names.join("."),
            format_type(builtins(), ty.oid, -1)
        )));
        let _ = catalog;
        return Ok(ty);
    }
    resolve_type_name(builtins(), tn)
}

fn param_mode(mode: i32) -> char {
    match mode {
        2 => 'o',
        3 => 'b',
        4 => 'v',
        5 => 't',
        _ => 'i',
    }
}

pub(crate) fn is_polymorphic(t: Oid) -> bool {
    crate::analyzer::coerce::is_polymorphic(t)
}

/// pg_proc.proargtypes, which identifies a routine: its IN, INOUT and
/// VARIADIC parameters' types.
fn signature_types(params: &[FunctionParam]) -> Vec<Oid> {
    params.iter().filter(|p| p.is_input()).map(|p| p.type_oid).collect()
}

fn display_signature(name: &str, types: &[Oid]) -> String {
    let b = builtins();
    format!("{}({})", name, types.iter().map(|&t| format_type(b, t, -1)).collect::<Vec<_>>().join(", "))
}

pub fn create_function(s: &mut SqlSession, stmt: &pb::CreateFunctionStmt, sql: &str) -> PgResult<()> {
    let catalog = s.catalog()?;
    let (schema, name) = split_name(&names_of(&stmt.funcname))?;
    let namespace = {
        let settings = s.settings.borrow();
        let a = s.analyzer(&catalog, &settings, &[], sql);
        a.creation_namespace(schema.as_deref(), false)?
    };
    let procedure = stmt.is_procedure;
    let attrs = parse_attributes(&stmt.options, stmt.is_procedure)?;
    if attrs.window {
        return Err(PgError::unsupported("WINDOW functions written in SQL or PL/pgSQL"));
    }
    // Parameters.
    let mut params: Vec<FunctionParam> = Vec::new();
    let mut seen_default = false;
    let mut seen_variadic = false;
    for p in &stmt.parameters {
        let Some(NodeEnum::FunctionParameter(fp)) = &p.node else { continue };
        let mode = param_mode(fp.mode);
        let tn = fp.arg_type.as_ref().ok_or_else(|| PgError::internal("parameter without a type"))?;
        let ty = resolve_type(s, &catalog, tn)?;
        if procedure && mode == 't' {
            return Err(invalid_definition("procedures cannot have OUT arguments"));
        }
        if seen_variadic && mode != 'o' && mode != 't' {
            return Err(invalid_definition("VARIADIC parameter must be the last input parameter"));
        }
        // An OUT parameter after VARIADIC would confuse a CALL.
        if seen_variadic && procedure && mode == 'o' {
            return Err(invalid_definition("VARIADIC parameter must be the last parameter"));
        }
        if mode == 'v' {
            seen_variadic = true;
            let elem = builtins().types.get(&ty.oid).map(|t| t.elem).unwrap_or(0);
            if elem == 0 && ty.oid != oid::ANY && ty.oid != oid::ANYARRAY && ty.oid != oid::ANYCOMPATIBLEARRAY {
                return Err(invalid_definition("VARIADIC parameter must be an array"));
            }
        }
        // An input and an output parameter may share a name.
        let input_like = |m: char| m == 'i' || m == 'v';
        let output_like = |m: char| m == 'o' || m == 't';
        if !fp.name.is_empty()
            && params.iter().any(|q| q.name == fp.name && !(input_like(mode) && output_like(q.mode)) && !(input_like(q.mode) && output_like(mode)))
        {
            return Err(invalid_definition(format!("parameter name \"{}\" used more than once", fp.name)));
        }
        let default = match &fp.defexpr {
            Some(d) => {
                if mode == 'o' || mode == 't' {
                    return Err(invalid_definition("only input parameters can have default values"));
                }
                seen_default = true;
                Some(deparse_expr(d)?)
            }
            None => {
                if seen_default && (mode == 'i' || mode == 'b' || mode == 'v') {
                    return Err(invalid_definition("input parameters after one with a default value must also have defaults"));
                }
                // CALL passes OUT arguments too: one after a default could
                // never be reached by position.
                if seen_default && procedure {
                    return Err(invalid_definition("procedure OUT parameters cannot appear after one with a default value"));
                }
                None
            }
        };
        params.push(FunctionParam { name: fp.name.clone(), type_oid: ty.oid, mode, default });
    }
    // The result type.
    let outs: Vec<&FunctionParam> = params.iter().filter(|p| p.is_output()).collect();
    let table_form = params.iter().any(|p| p.mode == 't');
    let (ret_type, retset) = if procedure {
        (if outs.is_empty() { oid::VOID } else { oid::RECORD }, false)
    } else {
        let declared = match &stmt.return_type {
            Some(tn) => Some((resolve_type(s, &catalog, tn)?, tn.setof)),
            None => None,
        };
        let from_outs = match outs.len() {
            0 => None,
            1 => Some(outs[0].type_oid),
            _ => Some(oid::RECORD),
        };
        match (declared, from_outs) {
            (Some((d, setof)), Some(o)) => {
                if d.oid != o && !table_form {
                    return Err(invalid_definition(format!("function result type must be {} because of OUT parameters", format_type(builtins(), o, -1))));
                }
                (o, setof || table_form)
            }
            (Some((d, setof)), None) => (d.oid, setof),
            (None, Some(o)) => (o, table_form),
            (None, None) => return Err(invalid_definition("function result type must be specified")),
        }
    };
    // ProcedureCreate: the result and every OUT parameter must be
    // deducible from the inputs.
    let input_types: Vec<Oid> = params.iter().filter(|p| p.is_input()).map(|p| p.type_oid).collect();
    let results = std::iter::once(ret_type).filter(|_| !procedure).chain(params.iter().filter(|p| p.is_output()).map(|p| p.type_oid));
    for r in results {
        if let Some(detail) = crate::analyzer::coerce::check_valid_polymorphic_signature(builtins(), r, &input_types) {
            return Err(invalid_definition("cannot determine result data type").with_detail(detail));
        }
    }
    // The body and language.
    let mut sql_body_return = false;
    let mut sql_body_return_stmts = Vec::new();
    let (language, src, sql_body) = match &stmt.sql_body {
        Some(body) => {
            // The body is analyzed now, so argument types must be known.
            if params.iter().any(|p| p.is_input() && is_polymorphic(p.type_oid)) {
                return Err(invalid_definition("SQL function with unquoted function body cannot have polymorphic arguments"));
            }
            if let Some(l) = attrs.language.as_deref().filter(|l| *l != "sql") {
                let _ = l;
                return Err(invalid_definition("inline SQL function body only valid for language SQL"));
            }
            if attrs.body.is_some() {
                return Err(invalid_definition("duplicate function body specified"));
            }
            sql_body_return = matches!(body.node, Some(NodeEnum::ReturnStmt(_)));
            let (text, returns) = sql_body_text(body)?;
            sql_body_return_stmts = returns;
            ("sql".to_string(), String::new(), Some(text))
        }
        None => {
            let language = attrs.language.clone().ok_or_else(|| PgError::new(sqlstate::INVALID_FUNCTION_DEFINITION, "no language specified"))?;
            let body = attrs.body.clone().ok_or_else(|| invalid_definition("no function body specified"))?;
            match language.as_str() {
                "sql" | "plpgsql" => {}
                "internal" | "c" => return Err(PgError::unsupported(format!("functions in language {language}"))),
                other if procedural::language(other).is_none() => {
                    return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("language \"{other}\" does not exist"))
                        .with_hint("Use CREATE EXTENSION to load the language into the database."))
                }
                _ => {}
            }
            if body.len() != 1 {
                return Err(invalid_definition(format!("only one AS item needed for language \"{language}\"")));
            }
            (language, body[0].clone(), None)
        }
    };
    let owner = grant::current_role_oid(s);
    let sig_types = signature_types(&params);
    let txn = s.txn()?;
    txn.get_for_update(&store::function_name_key(s.db, namespace, &name))?;
    // A function of the same name and input types: replaced, or an error.
    let existing = catalog
        .functions
        .values()
        .find(|f| f.namespace == namespace && f.name == name && signature_types(&f.params) == sig_types)
        .cloned();
    let builtin_clash = namespace == crate::catalog::PG_CATALOG_NAMESPACE
        && builtins().procs_by_name.get(&name).is_some_and(|v| v.iter().any(|o| builtins().procs[o].argtypes == sig_types));
    if builtin_clash {
        return Err(PgError::new(sqlstate::DUPLICATE_FUNCTION, format!("function {} already exists with same argument types", display_signature(&name, &sig_types))));
    }
    let oid = match &existing {
        Some(old) if stmt.replace => {
            if old.kind != (if procedure { 'p' } else { 'f' }) {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("cannot change routine kind"),
                )
                .with_detail(format!("\"{}\" is a {}.", name, if old.kind == 'p' { "procedure" } else { "function" })));
            }
            if old.ret_type != ret_type || old.retset != retset {
                return Err(invalid_definition("cannot change return type of existing function").with_hint(format!(
                    "Use DROP {} {} first.",
                    if procedure { "PROCEDURE" } else { "FUNCTION" },
                    display_signature(&name, &sig_types)
                )));
            }
            let old_outs: Vec<(&str, Oid)> = old.output_params().iter().map(|p| (p.name.as_str(), p.type_oid)).collect();
            let new_outs: Vec<(&str, Oid)> = params.iter().filter(|p| p.is_output()).map(|p| (p.name.as_str(), p.type_oid)).collect();
            if old_outs != new_outs && ret_type == oid::RECORD {
                return Err(invalid_definition("cannot change return type of existing function")
                    .with_detail("Row type defined by OUT parameters is different.")
                    .with_hint(format!("Use DROP FUNCTION {} first.", display_signature(&name, &sig_types))));
            }
            for (o, n) in old.params.iter().filter(|p| p.is_input()).zip(params.iter().filter(|p| p.is_input())) {
                if !o.name.is_empty() && o.name != n.name {
                    return Err(invalid_definition(format!("cannot change name of input parameter \"{}\"", o.name))
                        .with_hint(format!("Use DROP FUNCTION {} first.", display_signature(&name, &sig_types))));
                }
            }
            if old.input_defaults().len() > params.iter().filter(|p| p.is_input() && p.default.is_some()).count() {
                return Err(invalid_definition("cannot remove parameter defaults from existing function")
                    .with_hint(format!("Use DROP FUNCTION {} first.", display_signature(&name, &sig_types))));
            }
            old.oid
        }
        Some(_) => {
            return Err(PgError::new(
                sqlstate::DUPLICATE_FUNCTION,
                format!("{} {} already exists with same argument types", if procedure { "procedure" } else { "function" }, display_signature(&name, &sig_types)),
            ))
        }
        None => new_oid(s)?,
    };
    let version = new_oid(s)? as u64;
    let f = Function {
        oid,
        name: name.clone(),
        namespace,
        owner: existing.as_ref().map(|o| o.owner).unwrap_or(owner),
        kind: if procedure { 'p' } else { 'f' },
        language: language.clone(),
        params,
        ret_type,
        retset,
        volatility: attrs.volatility.unwrap_or('v'),
        strict: attrs.strict.unwrap_or(false),
        security_definer: attrs.security_definer.unwrap_or(false),
        leakproof: attrs.leakproof.unwrap_or(false),
        parallel: attrs.parallel.unwrap_or('u'),
        cost: attrs.cost.unwrap_or(if language == "sql" || language == "plpgsql" { 100.0 } else { 1.0 }),
        rows: if retset { attrs.rows.unwrap_or(1000.0) } else { 0.0 },
        src,
        sql_body,
        sql_body_return,
        sql_body_return_stmts,
        config: attrs.config.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}"))).collect(),
        acl: existing.as_ref().and_then(|o| o.acl.clone()),
        refs: Vec::new(),
        function_refs: Vec::new(),
        version,
    };
    if f.leakproof {
        check_leakproof_allowed(s)?;
    }
    if attrs.rows.is_some() && !retset {
        return Err(invalid_definition("ROWS is not applicable when function does not return a set"));
    }
    // Warnings the validator raises (plpgsql.extra_warnings) point into
    // the CREATE statement as its errors do.
    let queued = s.notices.borrow().len();
    let body = f.sql_body.as_deref().unwrap_or(&f.src);
    let validated = validate(s, &f).map_err(|e| crate::fmgr::transpose_body_error(e, body, sql));
    {
        let mut notices = s.notices.borrow_mut();
        let from = queued.min(notices.len());
        let raised: Vec<PgError> = notices.drain(from..).collect();
        notices.extend(raised.into_iter().map(|n| crate::fmgr::transpose_body_error(n, body, sql)));
    }
    validated?;
    let mut f = f;
    let refs = references(s, &f)?;
    f.refs = refs.columns;
    f.function_refs = refs.functions.into_iter().filter(|&o| o != f.oid).collect();
    store::put_function(s.txn()?, s.db, &f)?;
    s.reload_txn_catalog()
}

/// What ProcedureCreate records in pg_depend from a function's text: what
/// its parameters' defaults and its SQL-standard body refer to (a body in
/// a string is not looked into: it is only text until it runs).
fn references(s: &SqlSession, f: &Function) -> PgResult<super::dependency::ViewReferences> {
    let mut refs = super::dependency::ViewReferences::default();
    let inputs: Vec<&FunctionParam> = f.params.iter().filter(|p| p.is_input()).collect();
    let source = BodyParams::of(f);
    let catalog = s.catalog()?;
    let settings = s.settings.borrow();
    let mut texts: Vec<String> = f.params.iter().filter_map(|p| p.default.as_ref().map(|d| format!("SELECT {d}"))).collect();
    // Polymorphic parameters are only typed at a call; such a body cannot
    // be analyzed here (nor was it validated).
    if !inputs.iter().any(|p| is_polymorphic(p.type_oid)) {
        texts.extend(f.sql_body.iter().cloned());
    }
    for text in texts {
        // An error here was reported by validation already, or the check
        // was turned off (check_function_bodies): nothing is recorded.
        let Ok(stmts) = crate::parser::parse(&text) else { continue };
        for st in &stmts {
            if super::is_utility(&st.node) {
                continue;
            }
            let mut a = s.analyzer(&catalog, &settings, &[], crate::parser::statement_text(&text, st));
            a.param_source = Some(&source);
            if let Ok(q) = a.analyze(&st.node) {
                super::dependency::query_references(&q, &mut refs)?;
            }
        }
    }
    Ok(refs)
}

/// LEAKPROOF promises that no argument leaks through an error: only a
/// superuser may make that promise for a function.
fn check_leakproof_allowed(s: &SqlSession) -> PgResult<()> {
    if grant::current_grantee(s).superuser {
        return Ok(());
    }
    Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "only superuser can define a leakproof function"))
}

/// How messages name a routine: "procedure" or "function".
fn routine_noun(f: &Function) -> &'static str {
    if f.kind == 'p' {
        "procedure"
    } else {
        "function"
    }
}

fn new_oid(s: &SqlSession) -> PgResult<Oid> {
    store::new_oid(&s.cluster.engine)
}

/// `BEGIN ATOMIC ... END` or `RETURN expr`: the statements as SQL text,
/// and which of them were RETURN.
fn sql_body_text(body: &Node) -> PgResult<(String, Vec<usize>)> {
    let stmts: Vec<Node> = match &body.node {
        // BEGIN ATOMIC: a list holding the list of statements.
        Some(NodeEnum::List(l)) => match l.items.first().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::List(inner)) => inner.items.clone(),
            _ => l.items.clone(),
        },
        Some(NodeEnum::ReturnStmt(r)) => {
            let e = r.returnval.as_deref().ok_or_else(|| PgError::internal("RETURN without a value"))?;
            return Ok((format!("SELECT {}", deparse_expr(e)?), Vec::new()));
        }
        _ => return Err(PgError::internal("unexpected SQL function body")),
    };
    let mut texts = Vec::new();
    let mut returns = Vec::new();
    for st in stmts {
        let text = match &st.node {
            Some(NodeEnum::ReturnStmt(r)) => {
                let e = r.returnval.as_deref().ok_or_else(|| PgError::internal("RETURN without a value"))?;
                returns.push(texts.len());
                format!("SELECT {}", deparse_expr(e)?)
            }
            Some(n @ (NodeEnum::SelectStmt(_) | NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_) | NodeEnum::MergeStmt(_))) => {
                deparse_statement(n)?
            }
            // Only planned statements are kept as trees (PostgreSQL 15).
            Some(n) => {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("{} is not yet supported in unquoted SQL function body", super::command_tag(n))))
            }
            None => continue,
        };
        texts.push(text);
    }
    Ok((texts.join(";\n"), returns))
}

/// How pg_get_functiondef prints a SQL-standard body whose statements
/// no longer analyze (`functions::viewdef::sql_body_definition` prints
/// the others as PostgreSQL does): the text kept at CREATE.
pub fn sql_body_text_definition(f: &Function) -> String {
    let body = f.sql_body.as_deref().unwrap_or("");
    if f.sql_body_return {
        return format!("RETURN {}", body.strip_prefix("SELECT ").unwrap_or(body));
    }
    let mut out = String::from("BEGIN ATOMIC\n");
    for st in body.split(";\n").filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!(" {st};\n"));
    }
    out.push_str("END");
    out
}

fn deparse_statement(n: &NodeEnum) -> PgResult<String> {
    let tree = pb::ParseResult { version: 150001, stmts: vec![pb::RawStmt { stmt: Some(Box::new(Node { node: Some(n.clone()) })), stmt_location: 0, stmt_len: 0 }] };
    pg_query::deparse(&tree).map_err(|e| PgError::internal(format!("deparse: {e}")))
}

/// Checks a new function's body as PostgreSQL's validators do with
/// check_function_bodies on.
fn validate(s: &SqlSession, f: &Function) -> PgResult<()> {
    if !s.settings.borrow().show("check_function_bodies").map(|v| v == "on").unwrap_or(true) {
        return Ok(());
    }
    let spi = SessionSpi::shared(s);
    match f.language.as_str() {
        "sql" => validate_sql(&spi, f),
        lang => match procedural::language(lang) {
            Some(h) => h.validate(&crate::fmgr::function_source(f), &spi),
            None => Ok(()),
        },
    }
}

/// fmgr_sql_validator: each statement analyzes, and the last one returns
/// what the function declares (check_sql_fn_retval). An error without a
/// position in the body names the function.
fn validate_sql(spi: &SessionSpi, f: &Function) -> PgResult<()> {
    validate_sql_statements(spi, f).map_err(|e| {
        if e.position.is_none() && e.internal.is_none() && e.context.is_none() {
            e.with_context(format!("SQL function \"{}\"", f.name))
        } else {
            e
        }
    })
}

fn validate_sql_statements(spi: &SessionSpi, f: &Function) -> PgResult<()> {
    let inputs: Vec<&FunctionParam> = f.params.iter().filter(|p| p.is_input()).collect();
    // Polymorphic arguments are only known at a call.
    if inputs.iter().any(|p| is_polymorphic(p.type_oid)) {
        return Ok(());
    }
    let text = f.sql_body.as_deref().unwrap_or(&f.src);
    let stmts = crate::parser::parse(text)?;
    let source = BodyParams::of(f);
    // A SQL function has nowhere to put a procedure's output
    // (check_sql_fn_statements).
    for st in &stmts {
        if let NodeEnum::CallStmt(c) = &st.node {
            let call = analyze_call(spi.session(), c, crate::parser::statement_text(text, st), Some(&source))?;
            if !call.outputs.is_empty() {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "calling procedures with output arguments is not supported in SQL functions")
                    .with_context(format!("SQL function \"{}\"", f.name)));
            }
        }
    }
    // A body with utility statements is only checked for syntax: what they
    // create is not there yet.
    if stmts.iter().any(|st| super::is_utility(&st.node)) {
        return Ok(());
    }
    let mut last = None;
    for st in &stmts {
        let stmt_text = crate::parser::statement_text(text, st);
        // Positions point into the statement; shown in the whole body.
        let start = stmt_text.as_ptr() as usize - text.as_ptr() as usize;
        let offset = text[..start].chars().count() as i64;
        last = Some(spi.prepare(stmt_text, &source).map_err(|e| e.into_internal_query(text, offset))?);
    }
    if f.kind == 'p' {
        return Ok(());
    }
    let ret = f.ret_type;
    let declared = format_type(builtins(), ret, -1);
    let mismatch = || invalid_definition(format!("return type mismatch in function declared to return {declared}"));
    if ret == oid::VOID {
        return Ok(());
    }
    let Some(plan) = last.filter(|p| p.returns_rows) else {
        return Err(mismatch().with_detail("Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING."));
    };
    if let Some(cols) = crate::fmgr::output_columns(f) {
        if plan.columns.len() != cols.len() && !(plan.columns.len() == 1 && plan.columns[0].1.oid == oid::RECORD) {
            return Err(mismatch().with_detail(format!("Final statement returns too {} columns.", if plan.columns.len() > cols.len() { "many" } else { "few" })));
        }
        return Ok(());
    }
    if ret == oid::RECORD {
        return Ok(());
    }
    if plan.columns.len() != 1 {
        return Err(mismatch().with_detail("Final statement must return exactly one column."));
    }
    let actual = plan.columns[0].1.oid;
    let b = builtins();
    use crate::analyzer::coerce::{can_coerce, CoercionContext};
    if actual != ret && !is_polymorphic(ret) && !can_coerce(b, actual, ret, CoercionContext::Assignment) {
        return Err(mismatch().with_detail(format!("Actual return type is {}.", format_type(b, actual, -1))));
    }
    Ok(())
}

/// A SQL function's parameters as its body's statements see them: by
/// name, or qualified with the function's name, or as `$n`.
pub(crate) struct BodyParams {
    fname: String,
    names: Vec<(String, SqlType)>,
    types: Vec<SqlType>,
}

impl BodyParams {
    pub(crate) fn of(f: &Function) -> BodyParams {
        let inputs: Vec<&FunctionParam> = f.params.iter().filter(|p| p.is_input()).collect();
        BodyParams {
            fname: f.name.clone(),
            types: inputs.iter().map(|p| SqlType::new(p.type_oid)).collect(),
            names: inputs.iter().map(|p| (p.name.clone(), SqlType::new(p.type_oid))).collect(),
        }
    }
}

impl procedural::ParamSource for BodyParams {
    fn resolve(&self, names: &[&str]) -> Option<(procedural::ResolvedName, usize)> {
        let find = |n: &str| self.names.iter().position(|(p, _)| !p.is_empty() && p == n);
        if let Some(i) = names.first().and_then(|n| find(n)) {
            return Some((procedural::ResolvedName::Param { index: i, ty: self.types[i] }, 1));
        }
        if names.len() >= 2 && names[0] == self.fname {
            if let Some(i) = find(names[1]) {
                return Some((procedural::ResolvedName::Param { index: i, ty: self.types[i] }, 2));
            }
        }
        None
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        n.checked_sub(1).and_then(|i| self.types.get(i)).copied()
    }
    fn conflict(&self) -> procedural::VariableConflict {
        procedural::VariableConflict::UseColumn
    }
}

// ---------------------------------------------------------------- lookup by signature

/// What DROP/ALTER FUNCTION names: `kind` 'f', 'p', or 'r' (ROUTINE).
pub fn lookup_function(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs, kind: char, missing_ok: bool) -> PgResult<Option<Arc<Function>>> {
    let names = names_of(&owa.objname);
    let (schema, name) = split_name(&names)?;
    let search: Vec<Oid> = match &schema {
        Some(sch) => match catalog.namespace_by_name.get(sch) {
            Some(o) => vec![*o],
            None if missing_ok => return Ok(None),
            None => return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{sch}\" does not exist"))),
        },
        None => {
            let settings = s.settings.borrow();
            let a = s.analyzer(catalog, &settings, &[], "");
            a.search_path()
        }
    };
    let what = match kind {
        'p' => "procedure",
        'r' => "routine",
        _ => "function",
    };
    let display_name = names.join(".");
    let candidates: Vec<&Arc<Function>> = catalog.functions.values().filter(|f| f.name == name && search.contains(&f.namespace)).collect();
    let chosen: Option<&Arc<Function>> = if owa.args_unspecified {
        let mut c = candidates.clone();
        // The first schema of the search path that has one.
        if schema.is_none() {
            if let Some(first) = search.iter().find(|n| c.iter().any(|f| f.namespace == **n)) {
                c.retain(|f| f.namespace == *first);
            }
        }
        match c.len() {
            0 => None,
            1 => Some(c[0]),
            _ => {
                return Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("{what} name \"{display_name}\" is not unique"))
                    .with_hint(format!("Specify the argument list to select the {what} unambiguously.")))
            }
        }
    } else {
        // objargs lists the input types only (gram.y's extractArgTypes).
        let mut types = Vec::new();
        for a in &owa.objargs {
            let Some(NodeEnum::TypeName(tn)) = &a.node else { continue };
            types.push(resolve_type(s, catalog, tn)?.oid);
        }
        // LookupFuncNameInternal: the first schema of the path with a match;
        // two matches there are ambiguous.
        let lookup = |sig: &dyn Fn(&Function) -> Vec<Oid>, only_procedures: bool| -> Result<Option<&Arc<Function>>, ()> {
            for nsp in &search {
                let hits: Vec<&Arc<Function>> =
                    candidates.iter().copied().filter(|f| f.namespace == *nsp && (!only_procedures || f.kind == 'p') && sig(f) == types).collect();
                match hits.len() {
                    0 => continue,
                    1 => return Ok(Some(hits[0])),
                    _ => return Err(()),
                }
            }
            Ok(None)
        };
        let mut found = lookup(&|f: &Function| f.input_types(), false);
        // For PROCEDURE and ROUTINE written without parameter modes (the SQL
        // standard's form), the list may also name every parameter, OUT
        // ones included (LookupFuncWithArgs).
        let has_modes = owa.objfuncargs.iter().any(|n| matches!(&n.node, Some(NodeEnum::FunctionParameter(fp)) if fp.mode != pb::FunctionParameterMode::FuncParamDefault as i32));
        if matches!(kind, 'p' | 'r') && !owa.objfuncargs.is_empty() && !has_modes && found.is_ok() {
            let with_outs = lookup(&|f: &Function| f.call_types(), kind == 'p');
            found = match (found, with_outs) {
                (Ok(Some(a)), Ok(Some(b))) if a.oid != b.oid => Err(()),
                (Ok(a), Ok(b)) => Ok(b.or(a)),
                (_, Err(())) => Err(()),
                (Err(()), _) => Err(()),
            };
        }
        match found {
            Ok(f) => f,
            Err(()) => {
                return Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("{what} name \"{display_name}\" is not unique")));
            }
        }
    };
    let Some(f) = chosen else {
        if missing_ok {
            return Ok(None);
        }
        let shown = if owa.args_unspecified {
            format!("could not find a {what} named \"{display_name}\"")
        } else {
            let b = builtins();
            let args: Vec<String> = owa.objargs.iter().filter_map(|a| match &a.node {
                Some(NodeEnum::TypeName(tn)) => resolve_type_name(b, tn).ok().map(|t| format_type(b, t.oid, -1)),
                _ => None,
            }).collect();
            format!("{what} {display_name}({}) does not exist", args.join(", "))
        };
        return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, shown));
    };
    match (kind, f.kind) {
        ('f', 'a') => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is an aggregate function", f.name))
            .with_hint("Use DROP AGGREGATE to drop aggregate functions.")),
        ('f', 'p') => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{} is not a function", display_signature(&f.name, &f.input_types())))),
        ('p', k) if k != 'p' => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{} is not a procedure", display_signature(&f.name, &f.input_types())))),
        _ => Ok(Some(f.clone())),
    }
}

// ---------------------------------------------------------------- DROP

pub fn drop_functions(s: &mut SqlSession, d: &pb::DropStmt) -> PgResult<()> {
    let kind = match pb::ObjectType::from_i32(d.remove_type) {
        Some(pb::ObjectType::ObjectProcedure) => 'p',
        Some(pb::ObjectType::ObjectRoutine) => 'r',
        _ => 'f',
    };
    let catalog = s.catalog()?;
    let mut victims = Vec::new();
    for o in &d.objects {
        let Some(NodeEnum::ObjectWithArgs(owa)) = &o.node else { continue };
        match lookup_function(s, &catalog, owa, kind, d.missing_ok)? {
            Some(f) => {
                grant::check_owner(s, f.owner, &format!("{} {}", routine_noun(&f), f.name))?;
                victims.push(f);
            }
            None => {
                let names = names_of(&owa.objname).join(".");
                let what = match kind {
                    'p' => "procedure",
                    'r' => "routine",
                    _ => "function",
                };
                let b = builtins();
                let msg = if owa.args_unspecified {
                    format!("{what} {names}() does not exist, skipping")
                } else {
                    let args: Vec<String> = owa.objargs.iter().filter_map(|a| match &a.node {
                        Some(NodeEnum::TypeName(tn)) => resolve_type_name(b, tn).ok().map(|t| format_type(b, t.oid, -1)),
                        _ => None,
                    }).collect();
                    format!("{what} {names}({}) does not exist, skipping", args.join(", "))
                };
                s.notices.borrow_mut().push(PgError::notice(msg));
            }
        }
    }
    if victims.is_empty() {
        return Ok(());
    }
    drop_routines(s, &victims, d.behavior == pb::DropBehavior::DropCascade as i32)
}

/// Drops routines (aggregates among them) with what depends on them:
/// triggers, operators, aggregates and casts using them, views and
/// SQL-standard bodies calling them (`dependency::perform_deletion`).
pub fn drop_routines(s: &mut SqlSession, victims: &[Arc<Function>], cascade: bool) -> PgResult<()> {
    let objects: Vec<ObjectAddress> = victims.iter().map(|f| ObjectAddress::new(crate::catalog::depend::PG_PROC_CLASS, f.oid, 0)).collect();
    {
        let d = super::ddl::Ddl::new(s, "")?;
        super::dependency::perform_deletion(&d, &objects, cascade)?;
    }
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- CALL

/// A CALL analyzed: the procedure, the expressions of the arguments it
/// receives (which may read `$n` parameters of procedural code), and its
/// result row's columns.
pub struct ResolvedCall {
    pub procedure: Arc<Function>,
    inputs: Vec<crate::expr::Expr>,
    /// The output parameters, polymorphic ones as this call resolved them.
    pub outputs: Vec<OutputColumn>,
    /// For each output parameter, the `$n` parameter (0-based) its
    /// argument is, when it is one: where procedural code puts the value.
    pub output_targets: Vec<Option<usize>>,
}

/// Analyzes a CALL; `source` resolves the names of the calling code's
/// variables.
pub fn analyze_call(s: &SqlSession, c: &pb::CallStmt, sql: &str, source: Option<&dyn procedural::ParamSource>) -> PgResult<ResolvedCall> {
    let fc = c.funccall.as_deref().ok_or_else(|| PgError::internal("CALL without a call"))?;
    let catalog = s.catalog()?;
    let node = Node { node: Some(NodeEnum::FuncCall(Box::new(fc.clone()))) };
    let expr = {
        let settings = s.settings.borrow();
        let mut a = s.analyzer(&catalog, &settings, &[], sql);
        a.calling_procedure = true;
        a.param_source = source;
        a.analyze_standalone_node(&node, "CALL")?
    };
    let crate::expr::Expr::Func { func, args, .. } = expr else { return Err(PgError::internal("CALL did not resolve to a procedure")) };
    let f = catalog.functions.get(&func.oid).cloned().ok_or_else(|| PgError::internal("procedure not found"))?;
    // The arguments line up with the parameters a call passes; those for
    // OUT parameters only had to type-check and are not evaluated.
    let passed: Vec<&FunctionParam> = f.params.iter().filter(|p| p.passed_by_call(f.kind)).collect();
    let declared: Vec<Oid> = passed.iter().map(|p| p.type_oid).collect();
    let actual: Vec<Oid> = args.iter().map(|a| a.ty().oid).collect();
    let mut inputs = Vec::new();
    let mut output_targets = Vec::new();
    for (p, a) in passed.iter().zip(args) {
        if p.is_output() {
            output_targets.push(match strip_implicit_casts(&a) {
                crate::expr::Expr::Param(index, _) => Some(*index),
                _ => None,
            });
        }
        if p.is_input() {
            inputs.push(a);
        }
    }
    let mut outputs = Vec::new();
    for p in f.output_params() {
        let ty = if is_polymorphic(p.type_oid) {
            crate::analyzer::coerce::resolve_polymorphic(builtins(), &actual, &declared, p.type_oid)?.1
        } else {
            p.type_oid
        };
        outputs.push(OutputColumn { name: p.name.clone(), ty: SqlType::new(ty), origin: None });
    }
    Ok(ResolvedCall { procedure: f, inputs, outputs, output_targets })
}

fn strip_implicit_casts(e: &crate::expr::Expr) -> &crate::expr::Expr {
    match e {
        crate::expr::Expr::Cast { arg, spec } if !spec.explicit => strip_implicit_casts(arg),
        other => other,
    }
}

/// Runs an analyzed CALL; `params` are the values of its `$n`.
pub fn run_call(s: &mut SqlSession, call: &ResolvedCall, params: &[Datum]) -> PgResult<UtilityResult> {
    let catalog = s.catalog()?;
    let arg_types: Vec<SqlType> = call.inputs.iter().map(|a| a.ty()).collect();
    let values: Vec<Datum> =
        s.with_exec_params(&catalog, params, |cx| call.inputs.iter().map(|a| crate::executor::eval(a, &[], cx)).collect::<PgResult<Vec<_>>>())?;
    let columns: Vec<(String, SqlType)> = call.outputs.iter().map(|c| (c.name.clone(), c.ty)).collect();
    let out = crate::fmgr::call_procedure(s, &call.procedure, &values, &arg_types, (!columns.is_empty()).then_some(columns.as_slice()))?;
    let n = call.outputs.len();
    match out {
        Some(v) => {
            let row = match v {
                Datum::Record(fields) if n > 1 || fields.len() == 1 && n == 1 => fields.as_ref().clone(),
                Datum::Null => vec![Datum::Null; n],
                other => vec![other],
            };
            Ok(UtilityResult { tag: "CALL".into(), rows: Some((call.outputs.clone(), vec![row])) })
        }
        None => UtilityResult::tag("CALL"),
    }
}

pub fn call(s: &mut SqlSession, c: &pb::CallStmt, sql: &str) -> PgResult<UtilityResult> {
    let resolved = analyze_call(s, c, sql, None)?;
    run_call(s, &resolved, &[])
}

// ---------------------------------------------------------------- DO

pub fn do_block(s: &mut SqlSession, d: &pb::DoStmt, sql: &str) -> PgResult<UtilityResult> {
    crate::fmgr::run_do(s, d, sql)?;
    UtilityResult::tag("DO")
}

// ---------------------------------------------------------------- ALTER

fn object_kind(objtype: i32) -> char {
    match pb::ObjectType::from_i32(objtype) {
        Some(pb::ObjectType::ObjectProcedure) => 'p',
        Some(pb::ObjectType::ObjectRoutine) => 'r',
        _ => 'f',
    }
}

/// The function an ALTER names, which the current role must own.
fn function_to_alter(s: &SqlSession, owa: &pb::ObjectWithArgs, kind: char) -> PgResult<Function> {
    let catalog = s.catalog()?;
    let f = lookup_function(s, &catalog, owa, kind, false)?.ok_or_else(|| PgError::internal("function lookup"))?;
    grant::check_owner(s, f.owner, &format!("{} {}", routine_noun(&f), f.name))?;
    Ok((*f).clone())
}

fn store_altered(s: &SqlSession, mut f: Function) -> PgResult<()> {
    f.version = new_oid(s)? as u64;
    let txn = s.txn()?;
    txn.get_for_update(&store::function_name_key(s.db, f.namespace, &f.name))?;
    store::put_function(txn, s.db, &f)?;
    s.reload_txn_catalog()
}

/// ALTER FUNCTION/PROCEDURE/ROUTINE ... action [...].
pub fn alter_function(s: &mut SqlSession, a: &pb::AlterFunctionStmt) -> PgResult<()> {
    let owa = a.func.as_ref().ok_or_else(|| PgError::internal("ALTER FUNCTION without a function"))?;
    let mut f = function_to_alter(s, owa, object_kind(a.objtype))?;
    let attrs = parse_attributes(&a.actions, f.kind == 'p')?;
    if let Some(v) = attrs.volatility {
        f.volatility = v;
    }
    if let Some(v) = attrs.strict {
        f.strict = v;
    }
    if let Some(v) = attrs.security_definer {
        f.security_definer = v;
    }
    if let Some(v) = attrs.leakproof {
        if v {
            check_leakproof_allowed(s)?;
        }
        f.leakproof = v;
    }
    if let Some(v) = attrs.parallel {
        f.parallel = v;
    }
    if let Some(v) = attrs.cost {
        f.cost = v;
    }
    if let Some(v) = attrs.rows {
        if !f.retset {
            return Err(invalid_definition("ROWS is not applicable when function does not return a set"));
        }
        f.rows = v;
    }
    if attrs.reset_all {
        f.config.clear();
    }
    for (name, value) in attrs.config {
        f.config.retain(|c| c.split('=').next() != Some(name.as_str()));
        if let Some(v) = value {
            f.config.push(format!("{name}={v}"));
        }
    }
    store_altered(s, f)
}

/// ALTER FUNCTION ... RENAME TO.
pub fn rename_function(s: &mut SqlSession, r: &pb::RenameStmt) -> PgResult<()> {
    let Some(NodeEnum::ObjectWithArgs(owa)) = r.object.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("RENAME of a function without a signature"));
    };
    let mut f = function_to_alter(s, owa, object_kind(r.rename_type))?;
    let catalog = s.catalog()?;
    let sig = signature_types(&f.params);
    if catalog.functions.values().any(|g| g.namespace == f.namespace && g.name == r.newname && signature_types(&g.params) == sig) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_FUNCTION,
            format!(
                "{} {} already exists in schema \"{}\"",
                if f.kind == 'p' { "procedure" } else { "function" },
                display_signature(&r.newname, &sig),
                catalog.namespace_name(f.namespace)
            ),
        ));
    }
    s.txn()?.get_for_update(&store::function_name_key(s.db, f.namespace, &f.name))?;
    f.name = r.newname.clone();
    store_altered(s, f)
}

/// ALTER FUNCTION ... OWNER TO.
pub fn alter_function_owner(s: &mut SqlSession, a: &pb::AlterOwnerStmt) -> PgResult<()> {
    let Some(NodeEnum::ObjectWithArgs(owa)) = a.object.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("OWNER TO of a function without a signature"));
    };
    let mut f = function_to_alter(s, owa, object_kind(a.object_type))?;
    f.owner = grant::role_spec_oid(s, a.newowner.as_ref())?;
    store_altered(s, f)
}

/// ALTER FUNCTION ... SET SCHEMA.
pub fn alter_function_schema(s: &mut SqlSession, a: &pb::AlterObjectSchemaStmt) -> PgResult<()> {
    let Some(NodeEnum::ObjectWithArgs(owa)) = a.object.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("SET SCHEMA of a function without a signature"));
    };
    let mut f = function_to_alter(s, owa, object_kind(a.object_type))?;
    let catalog = s.catalog()?;
    let nsp = *catalog
        .namespace_by_name
        .get(&a.newschema)
        .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", a.newschema)))?;
    let sig = signature_types(&f.params);
    if catalog.functions.values().any(|g| g.namespace == nsp && g.name == f.name && signature_types(&g.params) == sig) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_FUNCTION,
            format!("function {} already exists in schema \"{}\"", display_signature(&f.name, &sig), a.newschema),
        ));
    }
    f.namespace = nsp;
    store_altered(s, f)
}
