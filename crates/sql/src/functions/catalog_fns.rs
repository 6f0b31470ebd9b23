//! Catalog information functions: the ones client tools call to describe
//! a database (psql's `\d` family, drivers' metadata queries, ORMs'
//! reflection) — pg_get_userbyid, the pg_*_is_visible tests, and the
//! pg_get_*def functions that turn stored defaults, constraints, indexes
//! and views back into SQL text (printed by `ruleutils` and `viewdef`).
//!
//! Tusk keeps those expressions as the SQL text the user wrote. Each
//! function analyzes that text again in its relation's context and prints
//! the typed tree, so the result is PostgreSQL's deparsed form
//! (`CHECK (price >= 0::numeric)`), not the text as typed.

use std::sync::Arc;

use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::ruleutils::{live_column_names, Deparser};
use super::{arg_bool, arg_i64, arg_str, plain, set, Env, FnCtx, Registry, SetIter};
use crate::analyzer::coerce::CoercionContext;
use crate::analyzer::{Analyzer, AnalyzerEnv};
use crate::catalog::{builtins, Constraint, ConstraintKind, FkAction, RelKind, Relation};
use crate::expr::{CastSpec, Expr};

fn text(s: impl Into<String>) -> PgResult<Datum> {
    Ok(Datum::from_string(s.into()))
}

fn arg_oid(a: &[Datum], i: usize) -> Oid {
    match &a[i] {
        Datum::Oid(o) => *o,
        d => d.as_i64().unwrap_or(0) as Oid,
    }
}

/// pg_get_userbyid: a role's name, or PostgreSQL's placeholder for a dangling OID.
fn pg_get_userbyid(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let role = arg_oid(a, 0);
    if let Some(r) = c.env.cluster_catalog().roles.get(&role) {
        return text(r.name.clone());
    }
    match crate::catalog::PREDEFINED_ROLES.iter().find(|(o, _)| *o == role) {
        Some((_, n)) => text(*n),
        None => text(format!("unknown (OID={role})")),
    }
}

/// PostgreSQL's encoding names, by encoding number (pg_wchar.h's pg_enc).
const ENCODINGS: &[&str] = &[
    "SQL_ASCII", "EUC_JP", "EUC_CN", "EUC_KR", "EUC_TW", "EUC_JIS_2004", "UTF8", "MULE_INTERNAL", "LATIN1", "LATIN2", "LATIN3",
    "LATIN4", "LATIN5", "LATIN6", "LATIN7", "LATIN8", "LATIN9", "LATIN10", "WIN1256", "WIN1258", "WIN866", "WIN874", "KOI8R",
    "WIN1251", "WIN1252", "ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8", "WIN1250", "WIN1253", "WIN1254", "WIN1255",
    "WIN1257", "KOI8U", "SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "SHIFT_JIS_2004",
];

fn pg_encoding_to_char(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let n = arg_i64(a, 0);
    text(usize::try_from(n).ok().and_then(|i| ENCODINGS.get(i)).copied().unwrap_or(""))
}

// ---------------------------------------------------------------- visibility

/// pg_table_is_visible: whether the relation is found first by its bare
/// name along the search path (NULL for an OID that is no relation).
fn pg_table_is_visible(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rel = arg_oid(a, 0);
    let Some(r) = c.env.catalog().relation(rel) else { return Ok(Datum::Null) };
    let shown = c.env.relation_name(rel).unwrap_or_default();
    Ok(Datum::Bool(shown == super::quote_ident(&r.name)))
}

/// pg_type_is_visible: every type Tusk has lives in pg_catalog.
fn pg_type_is_visible(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if builtins().type_info(arg_oid(a, 0)).is_some() { Datum::Bool(true) } else { Datum::Null })
}

/// pg_collation_is_visible: Tusk's collations (see pg_collation in
/// catalog::system) all live in pg_catalog.
fn pg_collation_is_visible(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if crate::catalog::system::collation_name(arg_oid(a, 0)).is_some() { Datum::Bool(true) } else { Datum::Null })
}

/// pg_function_is_visible: built-in functions live in pg_catalog, which is
/// always searched, except information_schema's; a user's function is
/// visible when its schema is on the search path and no schema before it
/// has one of the same name and argument types.
fn pg_function_is_visible(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let catalog = c.env.catalog();
    let Some(p) = catalog.proc(arg_oid(a, 0)) else { return Ok(Datum::Null) };
    if p.namespace == crate::catalog::PG_CATALOG_NAMESPACE {
        return Ok(Datum::Bool(true));
    }
    let path = with_analyzer(c.env, |an| Ok(an.search_path()))?;
    let visible = match path.iter().position(|n| *n == p.namespace) {
        None => false,
        Some(at) => !catalog.procs_named(&p.name).any(|q| q.oid != p.oid && q.argtypes == p.argtypes && path[..at].contains(&q.namespace)),
    };
    Ok(Datum::Bool(visible))
}

/// pg_operator_is_visible, pg_opclass_is_visible, pg_opfamily_is_visible:
/// built-in operators and operator classes are in pg_catalog, which is
/// always searched; a user-defined operator is visible when its schema is
/// on the search path; NULL for an OID that is none.
fn pg_operator_is_visible(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let o = arg_oid(a, 0);
    if let Some(op) = c.env.catalog().user_ops.operators.get(&o) {
        // A user-defined operator: visible when its schema is searched.
        let schema = c.env.catalog().namespace_name(op.namespace).to_string();
        return Ok(Datum::Bool(schema == "pg_catalog" || c.env.settings().search_path.iter().any(|s| *s == schema)));
    }
    Ok(if builtins().operators.contains_key(&o) { Datum::Bool(true) } else { Datum::Null })
}

fn pg_opclass_is_visible(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if builtins().opclass(arg_oid(a, 0)).is_some() { Datum::Bool(true) } else { Datum::Null })
}

fn pg_opfamily_is_visible(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let family = arg_oid(a, 0);
    Ok(if builtins().opclasses.iter().any(|c| c.family == family) { Datum::Bool(true) } else { Datum::Null })
}

// ---------------------------------------------------------------- analysis

/// Runs `f` with an analyzer over the session's catalog and settings.
pub(crate) fn with_analyzer<T>(env: &dyn Env, f: impl FnOnce(&mut Analyzer) -> PgResult<T>) -> PgResult<T> {
    with_analyzer_source(env, None, f)
}

/// The same, with names resolved by procedural code's (or a SQL
/// function's) parameters first.
pub(crate) fn with_analyzer_source<T>(
    env: &dyn Env,
    source: Option<&dyn crate::procedural::ParamSource>,
    f: impl FnOnce(&mut Analyzer) -> PgResult<T>,
) -> PgResult<T> {
    let settings = env.settings();
    let user = env.current_user();
    let mut a = Analyzer::new(AnalyzerEnv { catalog: env.catalog(), settings: &settings, user: &user, temp_namespace: None }, &[], "");
    // The tree is for printing: keep casts of constants as PostgreSQL's parser does.
    a.fold_const_casts = false;
    a.param_source = source;
    f(&mut a)
}

/// A column default as PostgreSQL's cookDefault stores it: coerced to the
/// column's type. A literal becomes a constant of the type (without its
/// modifier: the length coercion above it is implicit); anything else gets
/// an implicit cast, which prints only as the parentheses it may need.
fn cook_default(a: &mut Analyzer, e: Expr, ty: SqlType) -> PgResult<Expr> {
    let et = e.ty();
    if et.oid == oid::UNKNOWN {
        return a.coerce_to(e, SqlType { oid: ty.oid, typmod: -1 }, CoercionContext::Assignment, -1);
    }
    if et.oid == ty.oid && (ty.typmod < 0 || et.typmod == ty.typmod) {
        return Ok(e);
    }
    Ok(Expr::Cast { arg: Box::new(e), spec: CastSpec { from: et, to: ty, explicit: false } })
}

/// Deparses an expression stored for `rel`: a CHECK constraint, an index
/// expression or predicate, or (given its column) a default. Falls back to
/// the stored text if it no longer analyzes.
fn relation_expr(env: &dyn Env, rel: &Arc<Relation>, stored: &str, default_of: Option<i16>, pretty: bool) -> String {
    let analyzed = with_analyzer(env, |a| {
        let e = a.analyze_relation_expr(rel.clone(), stored, "DEFAULT expressions")?;
        match default_of.and_then(|n| rel.columns.get(n as usize - 1)) {
            Some(col) => cook_default(a, e, col.sql_type()),
            None => Ok(e),
        }
    });
    match analyzed {
        Ok(e) => Deparser::for_relation(env, pretty, &rel.name, live_column_names(rel)).expression(&e),
        Err(_) => stored.to_string(),
    }
}

/// pg_get_expr(adbin, adrelid) of a column's default: what
/// information_schema.columns.column_default shows.
pub fn column_default_text(env: &dyn Env, rel: &Arc<Relation>, attnum: i16, stored: &str) -> String {
    relation_expr(env, rel, stored, Some(attnum), false)
}

/// pg_get_expr(prqual, prrelid) of a publication's row filter: what
/// pg_publication_tables.rowfilter shows.
pub fn relation_expr_text(env: &dyn Env, rel: &Arc<Relation>, stored: &str) -> String {
    relation_expr(env, rel, stored, None, false)
}

/// pg_get_expr(pg_node_tree, relation [, pretty])
fn pg_get_expr(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let tree = arg_str(a, 0);
    // Defaults come from pg_attrdef with their column; other trees are the expression's text.
    let (default_of, stored) = match crate::catalog::system::parse_default_node_tree(tree) {
        Some((n, e)) => (Some(n), e.to_string()),
        None => (None, tree.to_string()),
    };
    let pretty = a.len() > 2 && arg_bool(a, 2);
    let relid = arg_oid(a, 1);
    if relid == 0 {
        let e = with_analyzer(c.env, |an| an.analyze_standalone_expr(&stored, "DEFAULT expressions"));
        return text(match e {
            Ok(e) => Deparser::new(c.env, pretty).expression(&e),
            Err(_) => stored,
        });
    }
    let Some(rel) = c.env.catalog().relation(relid).cloned() else { return Ok(Datum::Null) };
    text(relation_expr(c.env, &rel, &stored, default_of, pretty))
}

// ---------------------------------------------------------------- indexes

/// looks_like_function: index expressions that need no parentheses of their own.
fn looks_like_function(e: &Expr) -> bool {
    match e {
        Expr::Func { func, args, .. } => {
            // Not an operator, nor a SQL-standard value function.
            func.oid != 0 && !(builtins().operator_name_of_proc(func.oid).is_some() && (1..=2).contains(&args.len()))
        }
        Expr::NullIf { .. } | Expr::Coalesce { .. } | Expr::MinMax { .. } => true,
        _ => false,
    }
}

/// pg_get_indexdef_worker: the CREATE INDEX statement, or with `colno` > 0
/// only that key column's definition.
pub fn index_definition(env: &dyn Env, index: Oid, colno: i32, pretty: bool) -> Option<String> {
    let catalog = env.catalog();
    let idx = catalog.relation(index)?;
    let info = idx.index.as_ref()?;
    let table = catalog.relation(info.table)?.clone();
    let attrs_only = colno != 0;
    let mut s = String::new();
    if !attrs_only {
        // psql's pretty form names the table as search_path sees it; the plain one qualifies it.
        let table_name = if pretty {
            env.relation_name(table.oid).unwrap_or_else(|| super::quote_ident(&table.name))
        } else {
            format!("{}.{}", super::quote_ident(catalog.namespace_name(table.namespace)), super::quote_ident(&table.name))
        };
        s.push_str(&format!(
            "CREATE {}INDEX {} ON {} USING {} (",
            if info.unique && info.exclusion.is_empty() { "UNIQUE " } else { "" },
            super::quote_ident(&idx.name),
            table_name,
            info.method
        ));
    }
    let mut first = true;
    for (keyno, key) in info.keys.iter().enumerate() {
        if attrs_only && colno as usize != keyno + 1 {
            continue;
        }
        if !attrs_only && !first {
            s.push_str(", ");
        }
        first = false;
        match &key.expr {
            None => s.push_str(&super::quote_ident(&table.column(key.attnum).name)),
            Some(stored) => {
                let e = with_analyzer(env, |a| a.analyze_relation_expr(table.clone(), stored, "index expressions"));
                match e {
                    Ok(e) => {
                        let shown = Deparser::for_relation(env, pretty, &table.name, live_column_names(&table)).expression(&e);
                        if looks_like_function(&e) {
                            s.push_str(&shown);
                        } else {
                            s.push_str(&format!("({shown})"));
                        }
                    }
                    Err(_) => s.push_str(&format!("({stored})")),
                }
            }
        }
        if !attrs_only {
            // The collation and operator class, when not the key's own.
            let (key_type, key_coll) = match key.expr {
                None => {
                    let c = table.column(key.attnum);
                    (c.type_oid, c.collation)
                }
                Some(_) => {
                    let ty = idx.columns.get(keyno).map(|c| c.type_oid).unwrap_or(0);
                    (ty, builtins().type_info(ty).map(|t| t.collation).unwrap_or(0))
                }
            };
            if key.collation != 0 && key.collation != key_coll {
                let name = crate::catalog::system::collation_name(key.collation).unwrap_or("default");
                s.push_str(&format!(" COLLATE {}", super::quote_ident(name)));
            }
            if key.opclass != 0 {
                let b = builtins();
                let am = crate::catalog::builtin::Builtins::index_am_oid(&info.method);
                if b.default_opclass(am, key_type) != key.opclass {
                    if let Some(c) = b.opclass(key.opclass) {
                        s.push_str(&format!(" {}", super::quote_ident(&c.name)));
                    }
                }
            }
            if key.desc {
                s.push_str(" DESC");
                if !key.nulls_first {
                    s.push_str(" NULLS LAST");
                }
            } else if key.nulls_first {
                s.push_str(" NULLS FIRST");
            }
        }
    }
    if attrs_only && colno as usize > info.keys.len() {
        let attnum = *info.include.get(colno as usize - info.keys.len() - 1)?;
        return Some(super::quote_ident(&table.column(attnum).name));
    }
    if attrs_only {
        return Some(s);
    }
    if !info.include.is_empty() {
        let names: Vec<String> = info.include.iter().map(|&a| super::quote_ident(&table.column(a).name)).collect();
        s.push_str(&format!(") INCLUDE ({}", names.join(", ")));
    }
    s.push(')');
    if info.nulls_not_distinct {
        s.push_str(" NULLS NOT DISTINCT");
    }
    if !idx.options.is_empty() {
        s.push_str(&format!(" WITH ({})", crate::commands::reloptions::flatten(&idx.options)));
    }
    if let Some(p) = &info.predicate {
        s.push_str(" WHERE ");
        s.push_str(&relation_expr(env, &table, p, None, pretty));
    }
    Some(s)
}

fn pg_get_indexdef(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let colno = if a.len() > 1 { arg_i64(a, 1) as i32 } else { 0 };
    let pretty = a.len() > 2 && arg_bool(a, 2);
    Ok(index_definition(c.env, arg_oid(a, 0), colno, pretty).map(Datum::from_string).unwrap_or(Datum::Null))
}

// ---------------------------------------------------------------- constraints

fn fk_action(a: FkAction) -> Option<&'static str> {
    match a {
        FkAction::NoAction => None,
        FkAction::Restrict => Some("RESTRICT"),
        FkAction::Cascade => Some("CASCADE"),
        FkAction::SetNull => Some("SET NULL"),
        FkAction::SetDefault => Some("SET DEFAULT"),
    }
}

fn column_list(rel: &Relation, attnums: &[i16]) -> String {
    attnums.iter().map(|&n| super::quote_ident(&rel.column(n).name)).collect::<Vec<_>>().join(", ")
}

/// pg_get_constraintdef_worker for one constraint of `rel`.
pub fn constraint_definition(env: &dyn Env, rel: &Arc<Relation>, con: &Constraint, pretty: bool) -> String {
    let catalog = env.catalog();
    let mut s = match con.kind {
        ConstraintKind::ForeignKey => {
            let Some(fk) = &con.foreign else { return String::new() };
            let mut s = format!("FOREIGN KEY ({}) REFERENCES ", column_list(rel, &con.columns));
            match catalog.relation(fk.ref_table) {
                Some(r) => {
                    s.push_str(&env.relation_name(r.oid).unwrap_or_else(|| super::quote_ident(&r.name)));
                    s.push_str(&format!("({})", column_list(r, &fk.ref_columns)));
                }
                None => s.push_str("???"),
            }
            if fk.match_type == 'f' {
                s.push_str(" MATCH FULL");
            }
            if let Some(a) = fk_action(fk.on_update) {
                s.push_str(&format!(" ON UPDATE {a}"));
            }
            if let Some(a) = fk_action(fk.on_delete) {
                s.push_str(&format!(" ON DELETE {a}"));
            }
            s
        }
        ConstraintKind::PrimaryKey | ConstraintKind::Unique => {
            let mut s = String::from(if con.kind == ConstraintKind::PrimaryKey { "PRIMARY KEY " } else { "UNIQUE " });
            let nulls_not_distinct = catalog.relation(con.index).and_then(|i| i.index.as_ref()).is_some_and(|i| i.nulls_not_distinct);
            if con.kind == ConstraintKind::Unique && nulls_not_distinct {
                s.push_str("NULLS NOT DISTINCT ");
            }
            s.push_str(&format!("({})", column_list(rel, &con.columns)));
            if let Some(include) = catalog.relation(con.index).and_then(|i| i.index.as_ref()).map(|i| &i.include).filter(|i| !i.is_empty()) {
                s.push_str(&format!(" INCLUDE ({})", column_list(rel, include)));
            }
            s
        }
        ConstraintKind::Exclusion => {
            let ops = catalog.relation(con.index).and_then(|i| i.index.as_ref()).map(|i| i.exclusion.clone()).unwrap_or_default();
            crate::commands::exclusion::constraint_def(rel, &con.columns, &ops)
        }
        ConstraintKind::Check => {
            let body = relation_expr(env, rel, con.check.as_deref().unwrap_or("true"), None, pretty);
            format!("CHECK ({body}){}", if con.no_inherit { " NO INHERIT" } else { "" })
        }
    };
    if con.deferrable {
        s.push_str(" DEFERRABLE");
    }
    if con.deferred {
        s.push_str(" INITIALLY DEFERRED");
    }
    if !con.validated {
        s.push_str(" NOT VALID");
    }
    s
}

fn pg_get_constraintdef(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let oid = arg_oid(a, 0);
    let pretty = a.len() > 1 && arg_bool(a, 1);
    for rel in c.env.catalog().relations.values() {
        if let Some(con) = rel.constraints.iter().find(|k| k.oid == oid) {
            return text(constraint_definition(c.env, rel, con, pretty));
        }
    }
    Ok(Datum::Null)
}

// ---------------------------------------------------------------- views

fn view_definition(c: &FnCtx, view: Oid, pretty: bool) -> PgResult<Datum> {
    let Some(rel) = c.env.catalog().relation(view).cloned() else { return Ok(Datum::Null) };
    if rel.kind != RelKind::View {
        return Ok(Datum::Null);
    }
    text(super::viewdef::view_definition(c.env, &rel, pretty))
}

fn pg_get_viewdef(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pretty = a.len() > 1 && match c.arg_type(1) {
        oid::BOOL => arg_bool(a, 1),
        // pg_get_viewdef(oid, wrap column): always pretty.
        _ => true,
    };
    view_definition(c, arg_oid(a, 0), pretty)
}

fn pg_get_viewdef_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pretty = a.len() > 1 && arg_bool(a, 1);
    let view = c.env.lookup_relation_oid(arg_str(a, 0))?;
    view_definition(c, view, pretty)
}

// ---------------------------------------------------------------- functions

/// print_function_arguments: `[mode ][name ]type[ DEFAULT expr]`, leaving
/// out TABLE columns (pg_get_function_arguments) or the defaults
/// (pg_get_function_identity_arguments). A procedure's arguments all show
/// their mode, so that the text can be used in DROP PROCEDURE.
fn function_arguments(c: &FnCtx, p: &crate::catalog::builtin::ProcInfo, with_defaults: bool) -> String {
    let b = builtins();
    let all: Vec<Oid> = if p.allargtypes.is_empty() { p.argtypes.clone() } else { p.allargtypes.clone() };
    let defaults: Vec<String> = if !with_defaults || p.arg_defaults.is_empty() {
        Vec::new()
    } else if b.procs.contains_key(&p.oid) {
        split_defaults(&p.arg_defaults)
    } else {
        user_defaults(c, p)
    };
    let n_in = p.argtypes.len();
    let mut in_seen = 0;
    let mut parts = Vec::new();
    for (i, &t) in all.iter().enumerate() {
        let mode = p.argmodes.get(i).copied().unwrap_or('i');
        if mode == 't' {
            continue;
        }
        let is_input = matches!(mode, 'i' | 'b' | 'v');
        let mut s = String::from(match mode {
            'o' => "OUT ",
            'b' => "INOUT ",
            'v' => "VARIADIC ",
            _ if p.kind == 'p' => "IN ",
            _ => "",
        });
        if let Some(n) = p.argnames.get(i).filter(|n| !n.is_empty()) {
            s.push_str(&super::quote_ident(n));
            s.push(' ');
        }
        s.push_str(&format_type(b, t));
        if is_input {
            in_seen += 1;
            if with_defaults && in_seen > n_in - p.nargdefaults.min(n_in) {
                if let Some(d) = defaults.get(in_seen - 1 - (n_in - p.nargdefaults.min(n_in))) {
                    s.push_str(" DEFAULT ");
                    s.push_str(d);
                }
            }
        }
        parts.push(s);
    }
    parts.join(", ")
}

/// A user function's parameter defaults as PostgreSQL stores them
/// (coerced to the parameter's type) and prints them.
fn user_defaults(c: &FnCtx, p: &crate::catalog::builtin::ProcInfo) -> Vec<String> {
    let texts = split_defaults(&p.arg_defaults);
    let first = p.argtypes.len().saturating_sub(texts.len());
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let ty = SqlType::new(p.argtypes.get(first + i).copied().unwrap_or(oid::UNKNOWN));
            let cooked = with_analyzer(c.env, |a| {
                let e = a.analyze_standalone_expr(text, "DEFAULT expressions")?;
                cook_default(a, e, ty)
            });
            match cooked {
                Ok(e) => Deparser::new(c.env, false).expression(&e),
                Err(_) => text.clone(),
            }
        })
        .collect()
}

fn format_type(b: &crate::catalog::Builtins, t: Oid) -> String {
    crate::analyzer::types::format_type(b, t, -1)
}

/// The comma-separated default expressions of a pg_proc row, split at top-level commas.
fn split_defaults(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut cur) = (0i32, false, String::new());
    for ch in s.chars() {
        match ch {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn pg_get_function_arguments(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    match c.env.catalog().proc(arg_oid(a, 0)) {
        Some(p) => text(ordered_set_arguments(c, p, function_arguments(c, p, true))),
        None => Ok(Datum::Null),
    }
}

fn pg_get_function_identity_arguments(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    match c.env.catalog().proc(arg_oid(a, 0)) {
        Some(p) => text(ordered_set_arguments(c, p, function_arguments(c, p, false))),
        None => Ok(Datum::Null),
    }
}

/// An ordered-set aggregate's arguments print as `direct ORDER BY
/// aggregated` (print_function_arguments); a VARIADIC last argument is
/// both.
fn ordered_set_arguments(c: &FnCtx, p: &crate::catalog::builtin::ProcInfo, args: String) -> String {
    let catalog = c.env.catalog();
    let direct = match catalog.user_ops.aggregates.get(&p.oid).map(|a| (a.kind, a.num_direct_args)).or_else(|| {
        builtins().aggregates.get(&p.oid).and_then(|a| a.row.as_ref()).map(|r| (r.kind, r.num_direct_args))
    }) {
        Some((kind, n)) if kind != 'n' => n as usize,
        _ => return args,
    };
    let parts: Vec<&str> = args.split(", ").collect();
    if direct == 0 {
        return format!("ORDER BY {args}");
    }
    if direct >= parts.len() {
        let last = parts.last().copied().unwrap_or("");
        return format!("{args} ORDER BY {last}");
    }
    format!("{} ORDER BY {}", parts[..direct].join(", "), parts[direct..].join(", "))
}

/// pg_get_function_result: the return type, `SETOF type`, or `TABLE(...)`.
fn pg_get_function_result(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let catalog = c.env.catalog();
    let Some(p) = catalog.proc(arg_oid(a, 0)) else { return Ok(Datum::Null) };
    if p.kind == 'p' {
        return Ok(Datum::Null);
    }
    text(function_result(p))
}

/// print_function_rettype.
fn function_result(p: &crate::catalog::builtin::ProcInfo) -> String {
    let b = builtins();
    if p.argmodes.contains(&'t') {
        let cols: Vec<String> = p
            .allargtypes
            .iter()
            .enumerate()
            .filter(|(i, _)| p.argmodes.get(*i) == Some(&'t'))
            .map(|(i, &t)| format!("{} {}", super::quote_ident(p.argnames.get(i).map(String::as_str).unwrap_or("")), format_type(b, t)))
            .collect();
        return format!("TABLE({})", cols.join(", "));
    }
    let ty = format_type(b, p.rettype);
    if p.retset {
        format!("SETOF {ty}")
    } else {
        ty
    }
}

/// pg_get_functiondef: the CREATE OR REPLACE statement that makes the
/// function again, laid out as PostgreSQL lays it out.
fn pg_get_functiondef(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let catalog = c.env.catalog();
    let oid = arg_oid(a, 0);
    let Some(p) = catalog.proc(oid) else { return Ok(Datum::Null) };
    if p.kind == 'a' {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is an aggregate function", p.name)));
    }
    let user = catalog.functions.get(&oid);
    let function = p.kind != 'p';
    let q = super::quote_ident;
    let mut out = format!(
        "CREATE OR REPLACE {} {}.{}(",
        if function { "FUNCTION" } else { "PROCEDURE" },
        q(catalog.namespace_name(p.namespace)),
        q(&p.name)
    );
    out.push_str(&function_arguments(c, p, true));
    out.push_str(")\n");
    if function {
        out.push_str(" RETURNS ");
        out.push_str(&function_result(p));
        out.push('\n');
    }
    let language = user.map(|f| f.language.as_str()).unwrap_or("internal");
    out.push_str(&format!(" LANGUAGE {}\n", q(language)));
    let mut options = String::new();
    if p.kind == 'w' {
        options.push_str(" WINDOW");
    }
    match p.volatility {
        'i' => options.push_str(" IMMUTABLE"),
        's' => options.push_str(" STABLE"),
        _ => {}
    }
    match p.parallel {
        's' => options.push_str(" PARALLEL SAFE"),
        'r' => options.push_str(" PARALLEL RESTRICTED"),
        _ => {}
    }
    if p.strict {
        options.push_str(" STRICT");
    }
    if user.is_some_and(|f| f.security_definer) {
        options.push_str(" SECURITY DEFINER");
    }
    if user.is_some_and(|f| f.leakproof) {
        options.push_str(" LEAKPROOF");
    }
    let default_cost = if matches!(language, "internal" | "c") { 1.0 } else { 100.0 };
    if p.cost != default_cost {
        options.push_str(&format!(" COST {}", float_g(p.cost)));
    }
    if p.rows > 0.0 && p.rows != 1000.0 {
        options.push_str(&format!(" ROWS {}", float_g(p.rows)));
    }
    if !options.is_empty() {
        out.push_str(&options);
        out.push('\n');
    }
    for item in user.map(|f| f.config.as_slice()).unwrap_or(&[]) {
        let (name, value) = item.split_once('=').unwrap_or((item.as_str(), ""));
        out.push_str(&format!(" SET {} TO {}\n", q(name), super::ruleutils::quote_literal(value)));
    }
    match user.filter(|f| f.sql_body.is_some()) {
        Some(f) => out.push_str(
            &super::viewdef::sql_body_definition(c.env, f).unwrap_or_else(|| crate::commands::function::sql_body_text_definition(f)),
        ),
        None => {
            let src = user.map(|f| f.src.as_str()).unwrap_or(p.src.as_str());
            let mut delimiter = format!("${}", if function { "function" } else { "procedure" });
            while src.contains(&delimiter) {
                delimiter.push('x');
            }
            delimiter.push('$');
            out.push_str(&format!("AS {delimiter}{src}{delimiter}"));
        }
    }
    out.push('\n');
    text(out)
}

/// pg_get_function_sqlbody: the body of a SQL function written with
/// BEGIN ATOMIC or RETURN, as pg_get_functiondef prints it; NULL for
/// any other function (Tusk's built-in ones have none).
fn pg_get_function_sqlbody(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let catalog = c.env.catalog();
    let Some(f) = catalog.functions.get(&arg_oid(a, 0)).filter(|f| f.sql_body.is_some()) else { return Ok(Datum::Null) };
    text(super::viewdef::sql_body_definition(c.env, f).unwrap_or_else(|| crate::commands::function::sql_body_text_definition(f)))
}

/// `%g` of C's printf, as COST and ROWS print.
fn float_g(v: f32) -> String {
    let v = v as f64;
    if v == v.trunc() && v.abs() < 1e6 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// pg_get_triggerdef(oid [, pretty]): NULL for an unknown trigger.
fn pg_get_triggerdef(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    let tg = arg_oid(a, 0);
    let pretty = matches!(a.get(1), Some(Datum::Bool(true)));
    let catalog = cx.env.catalog();
    for rel in catalog.relations.values() {
        if let Some(t) = rel.triggers.iter().find(|t| t.oid == tg) {
            return text(crate::commands::trigger::triggerdef(catalog, rel, t, pretty));
        }
    }
    Ok(Datum::Null)
}

// ---------------------------------------------------------------- stubs for features Tusk lacks

fn null(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Null)
}

/// pg_relation_is_publishable: permanent user tables.
fn pg_relation_is_publishable(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let Some(r) = c.env.catalog().relation(arg_oid(a, 0)) else { return Ok(Datum::Null) };
    Ok(Datum::Bool(r.kind == RelKind::Table && r.persistence == 'p' && r.oid >= oid::FIRST_NORMAL_OBJECT_ID))
}

/// pg_partition_ancestors: Tusk has no partitioning, so a table or index
/// is its own only ancestor.
fn pg_partition_ancestors(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let rel = arg_oid(a, 0);
    let rows: Vec<PgResult<Datum>> = match c.env.catalog().relation(rel) {
        Some(r) if matches!(r.kind, RelKind::Table | RelKind::Index) => vec![Ok(Datum::Oid(rel))],
        _ => Vec::new(),
    };
    Ok(Box::new(rows.into_iter()))
}

// ---------------------------------------------------------------- to_reg*

/// to_regtype: the type a name denotes, or NULL where regtype input would
/// fail because no such type exists (drivers probe optional types this way:
/// psycopg's TypeInfo.fetch, SQLAlchemy looking for hstore at connect).
fn to_regtype(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    match super::cast::regtype_in(arg_str(a, 0).trim()) {
        Ok(t) => Ok(Datum::Oid(t)),
        // A missing schema in a qualified name is no type either.
        Err(e) if e.code == tusk_types::sqlstate::UNDEFINED_OBJECT || e.code == tusk_types::sqlstate::INVALID_SCHEMA_NAME => Ok(Datum::Null),
        Err(e) => Err(e),
    }
}

/// to_regclass: the relation a (possibly qualified) name denotes along the
/// search path, or NULL where there is none.
fn to_regclass(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    use tusk_types::sqlstate;
    match c.env.lookup_relation_oid(arg_str(a, 0)) {
        Ok(o) => Ok(Datum::Oid(o)),
        Err(e) if e.code == sqlstate::UNDEFINED_TABLE || e.code == sqlstate::INVALID_SCHEMA_NAME => Ok(Datum::Null),
        Err(e) => Err(e),
    }
}

/// to_regoper, to_regoperator, to_regproc, to_regprocedure,
/// to_regcollation, to_regnamespace, to_regrole: the object a name
/// denotes, as the type's input finds it, or NULL where there is none (or,
/// for a bare function or operator name, more than one); malformed names
/// still fail.
fn to_reg_object(a: &[Datum], c: &FnCtx, reg_type: tusk_types::Oid) -> PgResult<Datum> {
    use tusk_types::sqlstate;
    let s = arg_str(a, 0);
    // PostgreSQL 15's to_reg* read only names: digits name nothing.
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Datum::Null);
    }
    let found = if reg_type == oid::REGROLE {
        super::cast::cast_datum_env(Datum::from_string(s.to_string()), SqlType::new(oid::TEXT), SqlType::new(oid::REGROLE), true, c.env)
    } else {
        with_analyzer(c.env, |an| an.reg_input(reg_type, s).map(Datum::Oid))
    };
    match found {
        Ok(d) => Ok(d),
        // PostgreSQL 15 parses the argument types with parseTypeString,
        // which fails on a missing type (later versions return NULL).
        Err(e) if matches!(reg_type, oid::REGOPERATOR | oid::REGPROCEDURE) && e.message.starts_with("type ") => Err(tusk_types::PgError { position: None, ..e }),
        Err(e) if crate::analyzer::regtypes::is_missing_object(&e) => Ok(Datum::Null),
        Err(e) if e.code == sqlstate::AMBIGUOUS_FUNCTION && matches!(reg_type, oid::REGPROC | oid::REGOPER) => Ok(Datum::Null),
        // The errors are about the argument string: no statement position.
        Err(e) => Err(tusk_types::PgError { position: None, ..e }),
    }
}

fn to_regoper(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGOPER)
}
fn to_regoperator(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGOPERATOR)
}
fn to_regproc(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGPROC)
}
fn to_regprocedure(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGPROCEDURE)
}
fn to_regcollation(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, 4191)
}
fn to_regnamespace(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGNAMESPACE)
}
fn to_regrole(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    to_reg_object(a, c, oid::REGROLE)
}

/// pg_describe_object: how messages name an object (getObjectDescription),
/// NULL for one that does not exist (or of a kind Tusk cannot describe).
fn pg_describe_object(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let obj = crate::catalog::depend::ObjectAddress::new(arg_oid(a, 0), arg_oid(a, 1), arg_i64(a, 2) as i32);
    let cluster = c.env.cluster_catalog();
    let name = |r: &Relation| c.env.relation_name(r.oid).unwrap_or_else(|| super::quote_ident(&r.name));
    let path = with_analyzer(c.env, |an| Ok(an.search_path()))?;
    match crate::catalog::depend::describe(c.env.catalog(), Some(&cluster), obj, &name, &path) {
        Some(t) => text(t),
        None => Ok(Datum::Null),
    }
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["to_regoper"], to_regoper);
    plain(r, &["to_regoperator"], to_regoperator);
    plain(r, &["to_regproc"], to_regproc);
    plain(r, &["to_regprocedure"], to_regprocedure);
    plain(r, &["to_regcollation"], to_regcollation);
    plain(r, &["to_regnamespace"], to_regnamespace);
    plain(r, &["to_regrole"], to_regrole);
    plain(r, &["pg_describe_object"], pg_describe_object);
    plain(r, &["to_regtype"], to_regtype);
    plain(r, &["to_regclass"], to_regclass);
    plain(r, &["pg_get_userbyid"], pg_get_userbyid);
    plain(r, &["PG_encoding_to_char"], pg_encoding_to_char);
    plain(r, &["pg_table_is_visible"], pg_table_is_visible);
    plain(r, &["pg_type_is_visible"], pg_type_is_visible);
    plain(r, &["pg_function_is_visible"], pg_function_is_visible);
    plain(r, &["pg_collation_is_visible"], pg_collation_is_visible);
    plain(r, &["pg_operator_is_visible"], pg_operator_is_visible);
    plain(r, &["pg_opclass_is_visible"], pg_opclass_is_visible);
    plain(r, &["pg_opfamily_is_visible"], pg_opfamily_is_visible);
    // Conversions, extended statistics and text search objects: Tusk has
    // none of its own, so no OID names one (NULL, as for a dropped object).
    plain(
        r,
        &["pg_conversion_is_visible", "pg_statistics_obj_is_visible", "pg_ts_config_is_visible", "pg_ts_dict_is_visible", "pg_ts_parser_is_visible", "pg_ts_template_is_visible"],
        null,
    );
    plain(r, &["pg_get_function_sqlbody"], pg_get_function_sqlbody);
    plain(r, &["pg_get_expr", "pg_get_expr_ext"], pg_get_expr);
    plain(r, &["pg_get_indexdef", "pg_get_indexdef_ext"], pg_get_indexdef);
    plain(r, &["pg_get_constraintdef", "pg_get_constraintdef_ext"], pg_get_constraintdef);
    plain(r, &["pg_get_viewdef", "pg_get_viewdef_ext", "pg_get_viewdef_wrap"], pg_get_viewdef);
    plain(r, &["pg_get_viewdef_name", "pg_get_viewdef_name_ext"], pg_get_viewdef_name);
    plain(r, &["pg_get_function_arguments"], pg_get_function_arguments);
    plain(r, &["pg_get_function_identity_arguments"], pg_get_function_identity_arguments);
    plain(r, &["pg_get_function_result"], pg_get_function_result);
    plain(r, &["pg_get_functiondef"], pg_get_functiondef);
    // No triggers, rules, extended statistics or partition keys exist in Tusk.
    plain(r, &["pg_get_triggerdef", "pg_get_triggerdef_ext"], pg_get_triggerdef);
    plain(r, &["pg_get_statisticsobjdef_columns", "pg_get_ruledef", "pg_get_ruledef_ext", "pg_get_partkeydef"], null);
    plain(r, &["pg_relation_is_publishable"], pg_relation_is_publishable);
    set(r, &["pg_partition_ancestors"], pg_partition_ancestors);
}
