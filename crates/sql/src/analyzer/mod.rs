//! The analyzer: raw parse trees to typed `Query`s (PostgreSQL's
//! parse_analyze). It resolves names against the catalog and the FROM
//! clause, gives every expression a type, inserts implicit coercions and
//! resolves functions and operators to built-ins.
//!
//! Queries nest (subqueries, CTEs); the analyzer keeps a stack of query
//! levels so that a column reference can find an enclosing query's FROM
//! items (a correlated reference with `levels_up > 0`).

pub mod coerce;
mod dml;
mod expr;
mod json_records;
mod jsonb_subscript;
mod recursion;
mod select;
mod subscript;
mod unnest;
pub mod regtypes;
mod updatable;
mod window;
mod xml;
pub mod types;

use std::cell::RefCell;
use std::sync::Arc;

use pg_query::protobuf::{Node, RangeVar};
use pg_query::NodeEnum;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use crate::catalog::builtin::Builtins;
use crate::catalog::{builtins, DbCatalog, RelKind, Relation, PG_CATALOG_NAMESPACE};
use crate::query::{Cte, Query, RangeTblEntry, RteKind};
use crate::settings::Settings;

pub use dml::parse_expression;
pub use expr::{const_text, figure_index_colname, function_out_columns};
pub(crate) use expr::expr_location;

/// What the analyzer needs to know about the session.
pub struct AnalyzerEnv<'a> {
    pub catalog: &'a DbCatalog,
    pub settings: &'a Settings,
    pub user: &'a str,
    /// The session's temporary schema, if it has created one.
    pub temp_namespace: Option<Oid>,
}

/// A FROM item visible for name resolution (PostgreSQL's ParseNamespaceItem).
#[derive(Clone, Debug)]
pub(crate) struct NsItem {
    pub rte: usize,
    /// Visible to qualified references (`alias.col`).
    pub rel_visible: bool,
    /// Visible to unqualified column references.
    pub cols_visible: bool,
    /// Only visible to LATERAL items (set while analyzing a later FROM item).
    pub lateral_only: bool,
}

/// One query level being analyzed.
#[derive(Default)]
pub(crate) struct Level {
    pub rtable: Vec<RangeTblEntry>,
    pub namespace: Vec<NsItem>,
    /// CTEs defined at this level, visible to this level and below.
    pub ctes: Vec<Cte>,
    /// Names of CTEs being defined (for recursive self-reference), with their index.
    pub recursive_cte: Option<(String, usize, Vec<String>, Vec<SqlType>)>,
    /// Whether aggregates are allowed here and what to call the clause if not.
    pub agg_forbidden: Option<&'static str>,
    pub has_aggs: bool,
    /// Set while analyzing an aggregate's arguments (nested aggregates are errors).
    pub in_agg: bool,
    /// Where window functions are refused besides where aggregates are
    /// (HAVING, window definitions), and what to call the clause.
    pub window_forbidden: Option<&'static str>,
    /// Set while analyzing a window function's arguments.
    pub in_window: bool,
    pub has_windows: bool,
    /// The WINDOW clause's named windows.
    pub windows: Vec<pg_query::protobuf::WindowDef>,
}

pub struct Analyzer<'a> {
    pub env: AnalyzerEnv<'a>,
    pub b: &'static Builtins,
    /// Types of `$n` parameters: given by the client or inferred (UNKNOWN until then).
    pub params: RefCell<Vec<SqlType>>,
    pub(crate) levels: Vec<Level>,
    /// The statement text, for error positions.
    pub sql: &'a str,
    /// Expressions being analyzed, innermost last (for the depth limit).
    pub(crate) expr_depth: usize,
    /// What inlined WITH queries refer to outside themselves (select::escape).
    pub(crate) escape_memo: select::EscapeMemo,
    /// The role whose schema privileges name lookups check (None: no
    /// checks — superusers, internal analyses, view definitions).
    pub acl_user: Option<crate::catalog::acl::Grantee>,
    /// Privileges the statement needs on relations (ExecCheckRTPerms).
    pub perms: Vec<crate::catalog::acl::RelPerm>,
    /// Inside a view's definition: the view owner, as whom its relations
    /// are checked.
    pub(crate) perm_as: Option<Oid>,
    /// Whether a cast of a typed constant is computed at analysis (the
    /// default: plans stay simple and conversion errors point at the
    /// literal). Off when the tree is analyzed to be printed (ruleutils):
    /// PostgreSQL's parser keeps `0` cast to numeric as a cast, which
    /// prints differently from the literal `'0'` it converts right away.
    pub fold_const_casts: bool,
    /// Views whose definitions are being expanded, outermost first: one
    /// that reads itself (two views made to read each other with CREATE OR
    /// REPLACE) is refused as PostgreSQL's rewriter refuses it.
    pub(crate) expanding_views: Vec<Oid>,
    /// Analyzing a view's definition (CREATE VIEW): PostgreSQL's parser
    /// does not expand the views it reads, so a view over a view that reads
    /// itself can be created (only reading it fails, in the rewriter).
    /// The recursive reference then stands for the view's columns alone.
    pub(crate) defining_view: bool,
    /// The variables of the procedural code (or SQL function) whose
    /// statement this is: names and `$n` that resolve to parameters.
    pub param_source: Option<&'a dyn crate::procedural::ParamSource>,
    /// Analyzing CALL's procedure call: only procedures are candidates.
    pub calling_procedure: bool,
    /// While a domain's CHECK expression is analyzed: the type of `VALUE`.
    pub(crate) domain_value: Option<SqlType>,
}

/// How deeply expressions may nest. Analysis, planning and evaluation all
/// recurse over expressions; PostgreSQL refuses a sum of 5,000 terms (its
/// analysis runs out of max_stack_depth) and runs one of 4,000.
pub(crate) const MAX_EXPR_DEPTH: usize = 4_500;

/// PostgreSQL's MaxTupleAttributeNumber: the most entries a target list or
/// ROW expression may have.
pub(crate) const MAX_TUPLE_ATTRIBUTES: usize = 1664;

/// PostgreSQL's FUNC_MAX_ARGS.
pub(crate) const FUNC_MAX_ARGS: usize = 100;

pub(crate) fn pos(location: i32) -> Option<u32> {
    if location >= 0 {
        Some(location as u32 + 1)
    } else {
        None
    }
}

pub(crate) fn node_string(n: &Node) -> Option<&str> {
    match &n.node {
        Some(NodeEnum::String(s)) => Some(&s.sval),
        _ => None,
    }
}

/// Joins a qualified name list ("a.b.c") for messages.
pub(crate) fn name_list(names: &[Node]) -> String {
    names.iter().filter_map(node_string).collect::<Vec<_>>().join(".")
}

impl<'a> Analyzer<'a> {
    pub fn new(env: AnalyzerEnv<'a>, param_types: &[SqlType], sql: &'a str) -> Analyzer<'a> {
        let a = Analyzer { env, b: builtins(), params: RefCell::new(param_types.to_vec()), levels: Vec::new(), sql, expr_depth: 0, escape_memo: Default::default(), acl_user: None, perms: Vec::new(), perm_as: None, fold_const_casts: true, expanding_views: Vec::new(), defining_view: false, param_source: None, calling_procedure: false, domain_value: None };
        // Type names in this statement resolve along its search path.
        crate::catalog::types::set_search_path(&a.env.catalog.user_types, a.search_path());
        a
    }

    /// Parameter types after analysis; unresolved ones are an error.
    pub fn final_param_types(&self) -> PgResult<Vec<SqlType>> {
        let params = self.params.borrow();
        for (i, t) in params.iter().enumerate() {
            if t.oid == oid::UNKNOWN || t.oid == 0 {
                return Err(PgError::new(
                    sqlstate::INDETERMINATE_DATATYPE,
                    format!("could not determine data type of parameter ${}", i + 1),
                ));
            }
        }
        Ok(params.clone())
    }

    pub(crate) fn level(&mut self) -> &mut Level {
        self.levels.last_mut().expect("inside a query level")
    }

    pub(crate) fn level_ref(&self) -> &Level {
        self.levels.last().expect("inside a query level")
    }

    /// Schemas searched for unqualified names, in order: the temp schema,
    /// pg_catalog (implicitly first unless listed), then search_path.
    /// Records that the statement needs `mode` on `rel` (as the view owner
    /// inside a view's definition).
    pub(crate) fn note_perm(&mut self, rel: Oid, mode: u32, target: bool) {
        self.perms.push(crate::catalog::acl::RelPerm { rel, required: mode, as_role: self.perm_as, target });
    }

    /// Whether the checked role may use schema `nsp` (pg_namespace_aclcheck USAGE).
    pub fn has_schema_usage(&self, nsp: Oid) -> bool {
        let Some(who) = &self.acl_user else { return true };
        if nsp == PG_CATALOG_NAMESPACE || Some(nsp) == self.env.temp_namespace {
            return true;
        }
        let Some(ns) = self.env.catalog.namespaces.get(&nsp) else { return true };
        let acl = crate::catalog::acl::schema_acl(ns.oid, ns.owner, &ns.acl);
        crate::catalog::acl::schema_mask(&acl, who, crate::catalog::acl::USAGE) != 0
    }

    fn schema_usage_error(&self, name: &str) -> PgError {
        PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied for schema {name}"))
    }

    pub fn search_path(&self) -> Vec<Oid> {
        let cat = self.env.catalog;
        let mut out = Vec::new();
        if let Some(t) = self.env.temp_namespace {
            out.push(t);
        }
        let path = &self.env.settings.search_path;
        if !path.iter().any(|s| s == "pg_catalog") {
            out.push(PG_CATALOG_NAMESPACE);
        }
        for s in path {
            let name = if s == "$user" { self.env.user } else { s.as_str() };
            if let Some(&o) = cat.namespace_by_name.get(name) {
                if !out.contains(&o) && self.has_schema_usage(o) {
                    out.push(o);
                }
            }
        }
        out
    }

    /// The schema new objects go to: the first existing schema of search_path.
    pub fn creation_namespace(&self, schema: Option<&str>, temp: bool) -> PgResult<Oid> {
        let cat = self.env.catalog;
        if temp {
            let temp_nsp = self.env.temp_namespace.ok_or_else(|| PgError::internal("no temporary schema"))?;
            if let Some(s) = schema.filter(|s| *s != "pg_temp") {
                let named = cat
                    .namespace_by_name
                    .get(s)
                    .copied()
                    .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{s}\" does not exist")))?;
                if named != temp_nsp {
                    return Err(PgError::new(sqlstate::INVALID_TABLE_DEFINITION, "cannot create temporary relation in non-temporary schema"));
                }
            }
            return Ok(temp_nsp);
        }
        if let Some(s) = schema {
            if s == "pg_temp" {
                return self.env.temp_namespace.ok_or_else(|| PgError::internal("no temporary schema"));
            }
            return cat
                .namespace_by_name
                .get(s)
                .copied()
                .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{s}\" does not exist")));
        }
        for s in &self.env.settings.search_path {
            let name = if s == "$user" { self.env.user } else { s.as_str() };
            if let Some(&o) = cat.namespace_by_name.get(name) {
                if self.has_schema_usage(o) {
                    return Ok(o);
                }
            }
        }
        Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, "no schema has been selected to create in"))
    }

    /// Finds a relation by (optionally qualified) name.
    pub fn lookup_relation(&self, schema: Option<&str>, name: &str) -> Option<Arc<Relation>> {
        let cat = self.env.catalog;
        match schema {
            Some("pg_temp") => self.env.temp_namespace.and_then(|t| cat.lookup_relation(t, name).cloned()),
            Some(s) => {
                let nsp = cat.namespace_by_name.get(s)?;
                cat.lookup_relation(*nsp, name).cloned()
            }
            None => self.search_path().into_iter().find_map(|nsp| cat.lookup_relation(nsp, name).cloned()),
        }
    }

    /// Resolves a RangeVar to a relation, with PostgreSQL's errors.
    pub fn range_var_relation(&self, rv: &RangeVar) -> PgResult<Arc<Relation>> {
        let schema = if rv.schemaname.is_empty() { None } else { Some(rv.schemaname.as_str()) };
        if !rv.catalogname.is_empty() && rv.catalogname != self.current_database_name() {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "cross-database references are not implemented: \"{}.{}.{}\"",
                    rv.catalogname, rv.schemaname, rv.relname
                ),
            )
            .with_position(pos(rv.location)));
        }
        // A missing schema reads as a missing relation here, as in
        // RangeVarGetRelidExtended.
        if let Some(s) = schema.filter(|s| *s != "pg_temp") {
            if let Some(&nsp) = self.env.catalog.namespace_by_name.get(s) {
                if !self.has_schema_usage(nsp) {
                    return Err(self.schema_usage_error(s));
                }
            }
        }
        self.lookup_relation(schema, &rv.relname).ok_or_else(|| {
            let name = match schema {
                Some(s) => format!("{s}.{}", rv.relname),
                None => rv.relname.clone(),
            };
            PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")).with_position(pos(rv.location))
        })
    }

    fn current_database_name(&self) -> String {
        String::new()
    }

    /// Resolves a relation that must be of a given kind (table for DML, ...).
    pub fn expect_kind(&self, rel: &Relation, kinds: &[RelKind], what: &str) -> PgResult<()> {
        if kinds.contains(&rel.kind) {
            Ok(())
        } else {
            Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not {}", rel.name, what)))
        }
    }

    /// Adds a range table entry to the current level.
    pub(crate) fn add_rte(&mut self, rte: RangeTblEntry) -> usize {
        let level = self.level();
        level.rtable.push(rte);
        level.rtable.len() - 1
    }

    /// A range table entry for a relation (table, view, sequence).
    pub(crate) fn relation_rte(&self, rel: Arc<Relation>, alias: Option<&pg_query::protobuf::Alias>) -> PgResult<RangeTblEntry> {
        let mut col_names: Vec<String> = Vec::new();
        let mut col_types = Vec::new();
        for (_, c) in rel.live_columns() {
            col_names.push(c.name.clone());
            col_types.push(c.sql_type());
        }
        let (alias_name, has_alias) = match alias {
            Some(a) => {
                if a.colnames.len() > col_names.len() {
                    return Err(PgError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        format!(
                            "table \"{}\" has {} columns available but {} columns specified",
                            a.aliasname,
                            col_names.len(),
                            a.colnames.len()
                        ),
                    ));
                }
                for (i, c) in a.colnames.iter().enumerate() {
                    if let Some(n) = node_string(c) {
                        col_names[i] = n.to_string();
                    }
                }
                (a.aliasname.clone(), true)
            }
            None => (rel.name.clone(), false),
        };
        Ok(RangeTblEntry {
            kind: RteKind::Relation(rel),
            alias: alias_name,
            has_alias,
            col_names,
            col_types,
            lateral: false,
            inh: false,
        })
    }

    /// Runs `f` on a new query level and returns the level's final state with the result.
    pub(crate) fn with_level<T>(&mut self, f: impl FnOnce(&mut Self) -> PgResult<T>) -> PgResult<(T, Level)> {
        self.levels.push(Level::default());
        let r = f(self);
        let level = self.levels.pop().expect("pushed above");
        r.map(|v| (v, level))
    }

    /// Analyzes any query-producing statement (SELECT / VALUES / set operations).
    pub fn analyze_select_stmt(&mut self, stmt: &pg_query::protobuf::SelectStmt) -> PgResult<Query> {
        self.analyze_select_stmt_with(stmt, true)
    }

    /// `analyze_select_stmt`, optionally leaving unknown-typed outputs
    /// (string literals) unresolved, for INSERT ... SELECT to give them the
    /// target columns' types.
    pub(crate) fn analyze_select_stmt_with(&mut self, stmt: &pg_query::protobuf::SelectStmt, resolve_unknowns: bool) -> PgResult<Query> {
        crate::stack::check()?;
        let (mut q, level) = self.with_level(|a| a.transform_select_inner(stmt, resolve_unknowns))?;
        // Target entries of ORDER BY and GROUP BY expressions count too.
        if q.targets.len() > MAX_TUPLE_ATTRIBUTES {
            return Err(PgError::new(
                sqlstate::TOO_MANY_COLUMNS,
                format!("target lists can have at most {MAX_TUPLE_ATTRIBUTES} entries"),
            ));
        }
        q.rtable = level.rtable;
        if q.ctes.is_empty() {
            q.ctes = level.ctes;
        }
        q.has_aggs |= level.has_aggs;
        Ok(q)
    }

    /// Entry point for statements that produce a Query.
    pub fn analyze(&mut self, node: &NodeEnum) -> PgResult<Query> {
        let mut q = match node {
            NodeEnum::SelectStmt(s) => self.analyze_select_stmt(s)?,
            NodeEnum::InsertStmt(s) => self.analyze_insert(s)?,
            NodeEnum::UpdateStmt(s) => self.analyze_update(s)?,
            NodeEnum::DeleteStmt(s) => self.analyze_delete(s)?,
            _ => return Err(PgError::internal("not an optimizable statement")),
        };
        q.param_types = self.params.borrow().clone();
        Ok(q)
    }
}
