//! Analyzed expressions back to SQL text, the way PostgreSQL's ruleutils.c
//! prints them for pg_get_expr, pg_get_constraintdef, pg_get_indexdef and
//! pg_get_viewdef.
//!
//! Clients show this text to users (psql's `\d` prints column defaults,
//! CHECK constraints and index definitions with it), so it must be
//! PostgreSQL's byte for byte: the same casts made visible (`0::numeric`,
//! `email::text`), the same parentheses, the same keywords. Tusk stores
//! such expressions as the SQL text the user wrote; they are analyzed again
//! in their relation's context and printed from the typed tree, as
//! PostgreSQL prints from its stored node trees.
//!
//! "Pretty" mode (PRETTYFLAG_PAREN, what psql asks for) leaves out
//! parentheses that operator precedence makes unnecessary; the plain mode
//! parenthesizes every operator expression. Both break CASE and queries
//! into indented lines (PRETTYFLAG_INDENT), as PostgreSQL's functions do.
//!
//! The trees printed here are analyzed with `fold_const_casts` off, so
//! they keep the distinction PostgreSQL's stored trees keep: the `0` of
//! `price >= 0` for a numeric column stays an integer constant under a
//! cast (`0::numeric`), while the literal `'0'` is converted right away
//! into a numeric constant (`'0'::numeric`). Where the analyzed tree has
//! lost a distinction, the common case wins: a call of an operator's
//! function prints as the operator.

use tusk_types::oid;
use tusk_types::{Datum, SqlType};

use super::Env;
use crate::analyzer::types::format_type;
use crate::catalog::builtins;
use crate::expr::{BoolOp, BoolTestKind, Expr, FrameBound, FrameExclusion, FrameMode, WindowCall, WindowFuncKind};

/// Names a Var resolves to: one query level's range table entries, each
/// with the name it is referred to by and its column names.
#[derive(Clone, Debug, Default)]
pub struct NameScope {
    pub rtes: Vec<RteNames>,
    /// The query's joins whose columns print by the join's own names,
    /// outermost first.
    pub joins: Vec<JoinNames>,
    /// The joins whose inside (inputs and ON clause) is being printed:
    /// their inputs are visible there under their own names.
    pub inside: Vec<usize>,
}

/// A join as its columns are referred to from outside it. PostgreSQL's
/// stored queries keep references to join columns (Vars of the join's range
/// table entry); Tusk's analyzer expands each to what it stands for, so
/// they are recognized here by that expression: any column of an aliased
/// join prints as `alias.column`, and a merged USING column of an unnamed
/// join (a COALESCE or a coerced input) as its bare name.
#[derive(Clone, Debug, Default)]
pub struct JoinNames {
    pub rte: usize,
    /// The join's alias; None for an unnamed join.
    pub refname: Option<String>,
    /// What each nameable column stands for, with its name.
    pub columns: Vec<(Expr, String)>,
    /// The range table entries inside the join, at any depth.
    pub members: Vec<usize>,
}

#[derive(Clone, Debug, Default)]
pub struct RteNames {
    /// The reference name (alias or relation name); None for unnamed joins.
    pub refname: Option<String>,
    pub columns: Vec<String>,
    /// For an unnamed join: what each of its columns stands for.
    pub join_columns: Option<Vec<Expr>>,
}

/// What an expression is printed inside of, for isSimpleNode's decisions
/// about parentheses.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Parent<'p> {
    /// An operator: its name if binary, and whether the child is its first argument.
    Op(Option<&'p str>, bool),
    /// A cast shown as `::type` (PostgreSQL's FuncExpr casts).
    CastFunc,
    /// A binary-compatible, I/O or array cast (RelabelType, CoerceViaIO, ArrayCoerceExpr).
    CastOther,
    Bool(BoolOp),
    /// Everything else (IS NULL, IS DISTINCT FROM, op ANY (...), ...).
    Other,
}

/// How a cast runs, which decides how it is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CastKind {
    /// A conversion or length-coercion function (FuncExpr).
    Func,
    /// Binary-compatible, I/O conversion or element-wise array cast.
    Other,
}

fn cast_kind(from: SqlType, to: SqlType) -> CastKind {
    let b = builtins();
    if from.oid == to.oid {
        // Only a type modifier changes: a length-coercion function where the type has one.
        return if matches!(to.oid, oid::VARCHAR | oid::BPCHAR | oid::NUMERIC | oid::TIME | oid::TIMETZ | oid::TIMESTAMP | oid::TIMESTAMPTZ | oid::INTERVAL | oid::BIT | oid::VARBIT) {
            CastKind::Func
        } else {
            CastKind::Other
        };
    }
    match b.cast(from.oid, to.oid) {
        Some(c) if c.func != 0 => CastKind::Func,
        Some(_) => {
            // Binary-compatible, but a type modifier still needs the length function.
            if to.typmod >= 0 && cast_kind(to, SqlType { oid: to.oid, typmod: -1 }) == CastKind::Func {
                CastKind::Func
            } else {
                CastKind::Other
            }
        }
        None => CastKind::Other,
    }
}

/// The SQL keyword of a SQL-standard value function (CURRENT_DATE, ...),
/// which the analyzer resolves to a pseudo-function without an OID.
fn sql_value_function(name: &str) -> Option<&'static str> {
    Some(match name {
        "current_date" => "CURRENT_DATE",
        "current_time" => "CURRENT_TIME",
        "current_timestamp" => "CURRENT_TIMESTAMP",
        "localtime" => "LOCALTIME",
        "localtimestamp" => "LOCALTIMESTAMP",
        "current_user" => "CURRENT_USER",
        "session_user" => "SESSION_USER",
        "current_database" => "CURRENT_CATALOG",
        "current_schema" => "CURRENT_SCHEMA",
        _ => return None,
    })
}

/// The operator a function call stands for: (name, binary).
fn operator_of(e: &Expr) -> Option<(&'static str, bool)> {
    let Expr::Func { func, args, .. } = e else { return None };
    if func.oid == 0 || args.is_empty() || args.len() > 2 {
        return None;
    }
    builtins().operator_name_of_proc(func.oid).map(|n| (n, args.len() == 2))
}

pub struct Deparser<'a> {
    pub env: &'a dyn Env,
    pub buf: String,
    /// PRETTYFLAG_PAREN: parentheses only where precedence needs them.
    pub pretty: bool,
    /// PRETTYFLAG_INDENT: keywords of CASE and queries on indented lines.
    pub indent_lines: bool,
    /// Name scopes of the query levels being printed, innermost last.
    pub scopes: Vec<NameScope>,
    /// Whether column references are qualified with their table's name.
    pub varprefix: bool,
    pub indent: i32,
    /// EXPLAIN: what a plan node's positional references stand for.
    pub plan_refs: Option<PlanRefs>,
    /// A SQL-standard function body: the function's name and its input
    /// parameters' names ("" for unnamed), which `$n` print as.
    pub param_names: Option<(String, Vec<String>)>,
}

/// Names for the positional references of a plan node's expressions, as
/// EXPLAIN prints them: its input's columns (`Expr::Column`), the values
/// its enclosing plan passes in (`Expr::OuterParam`), and the subplans it
/// calls, numbered in the order EXPLAIN meets them.
#[derive(Clone, Debug, Default)]
pub struct PlanRefs {
    pub columns: Vec<PlanLabel>,
    pub outer: Vec<PlanLabel>,
    /// Subplans printed so far: (number, subplan).
    pub subplans: Vec<(usize, crate::expr::SubPlan)>,
    /// The number the next new subplan gets.
    pub next_subplan: usize,
}

/// One positional reference's text, and whether it is a plain column
/// (anything else is printed in parentheses, as ruleutils.c prints a
/// reference to a non-Var target entry of a plan's child).
#[derive(Clone, Debug)]
pub struct PlanLabel {
    pub text: String,
    pub is_column: bool,
}

impl PlanLabel {
    pub fn column(text: String) -> PlanLabel {
        PlanLabel { text, is_column: true }
    }
    pub fn expr(text: String) -> PlanLabel {
        PlanLabel { text, is_column: false }
    }
}

pub(crate) const PRETTYINDENT_STD: i32 = 8;
pub(crate) const PRETTYINDENT_JOIN: i32 = 4;
pub(crate) const PRETTYINDENT_VAR: i32 = 4;
const PRETTYINDENT_LIMIT: i32 = 40;

impl<'a> Deparser<'a> {
    pub fn new(env: &'a dyn Env, pretty: bool) -> Deparser<'a> {
        Deparser { env, buf: String::new(), pretty, indent_lines: true, scopes: Vec::new(), varprefix: false, indent: 0, plan_refs: None, param_names: None }
    }

    /// A deparser for expressions over one relation's columns (range table entry 0).
    pub fn for_relation(env: &'a dyn Env, pretty: bool, relname: &str, columns: Vec<String>) -> Deparser<'a> {
        let mut d = Deparser::new(env, pretty);
        d.scopes.push(NameScope { rtes: vec![RteNames { refname: Some(relname.to_string()), columns, join_columns: None }], ..Default::default() });
        d
    }

    /// deparse_expression_pretty: one expression, implicit casts at its top hidden.
    pub fn expression(mut self, e: &Expr) -> String {
        self.expr(e, false);
        self.buf
    }

    /// get_parameter: a function's parameter by its name, qualified with
    /// the function's name when any query level being printed has range
    /// table entries (not in a trivial `RETURN a + b`); `$n` otherwise.
    fn param(&mut self, i: usize) {
        let named = self.param_names.as_ref().and_then(|(f, names)| names.get(i).filter(|n| !n.is_empty()).map(|n| (f.clone(), n.clone())));
        match named {
            Some((fname, name)) => {
                if self.scopes.iter().any(|s| !s.rtes.is_empty()) {
                    let q = super::quote_ident(&fname);
                    self.push(&q);
                    self.push(".");
                }
                let q = super::quote_ident(&name);
                self.push(&q);
            }
            None => self.push(&format!("${}", i + 1)),
        }
    }

    pub(crate) fn push(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    /// appendContextKeyword: in pretty mode, a keyword on a new line at
    /// the current indentation.
    pub(crate) fn context_keyword(&mut self, s: &str, indent_before: i32, indent_after: i32, indent_plus: i32) {
        if self.indent_lines {
            self.indent += indent_before;
            // removeStringInfoSpaces, then a newline and the indentation.
            while self.buf.ends_with(' ') {
                self.buf.pop();
            }
            self.buf.push('\n');
            let amount = if self.indent < PRETTYINDENT_LIMIT {
                self.indent.max(0) + indent_plus
            } else {
                (PRETTYINDENT_LIMIT + (self.indent - PRETTYINDENT_LIMIT) / (PRETTYINDENT_STD / 2)) % PRETTYINDENT_LIMIT + indent_plus
            };
            self.buf.extend(std::iter::repeat(' ').take(amount.max(0) as usize));
            self.buf.push_str(s);
            self.indent += indent_after;
            if self.indent < 0 {
                self.indent = 0;
            }
        } else {
            self.buf.push_str(s);
        }
    }

    // ------------------------------------------------------------ parentheses

    /// isSimpleNode: whether `e` needs no parentheses inside `parent`.
    fn is_simple(&self, e: &Expr, parent: Parent) -> bool {
        match e {
            Expr::Var(_) | Expr::Const(..) | Expr::Param(..) | Expr::CaseTest(_) | Expr::Column(..) | Expr::OuterParam(..) => true,
            Expr::Agg(_)
            | Expr::Window(_)
            | Expr::Array { .. }
            | Expr::Row { .. }
            | Expr::Coalesce { .. }
            | Expr::MinMax { .. }
            | Expr::NullIf { .. }
            | Expr::Subscript { .. }
            | Expr::SubscriptAssign { .. }
            | Expr::Case { .. }
            | Expr::CoerceToDomain { .. }
            | Expr::FieldSelect { .. } => true,
            Expr::Cast { arg, spec } => {
                if sql_value_function_cast(e).is_some() || cast_kind(spec.from, spec.to) == CastKind::Func {
                    true
                } else {
                    self.is_simple(arg, Parent::CastOther)
                }
            }
            Expr::Func { .. } => match operator_of(e) {
                None => true,
                Some((op, binary)) => {
                    if self.pretty {
                        if let Parent::Op(parent_op, first) = parent {
                            return simple_under_operator(if binary { Some(op) } else { None }, parent_op, first);
                        }
                    }
                    simple_by_parent(parent)
                }
            },
            Expr::Distinct { negated: true, .. } => simple_bool(self.pretty, BoolOp::Not, parent),
            Expr::NullTest { .. } | Expr::BoolTest { .. } | Expr::Distinct { .. } | Expr::SubLink { .. } | Expr::SubPlan(_) => {
                simple_by_parent(parent)
            }
            Expr::Bool { op, .. } => simple_bool(self.pretty, *op, parent),
            Expr::ScalarArrayOp { .. } => false,
        }
    }

    /// get_rule_expr_paren
    pub(crate) fn expr_paren(&mut self, e: &Expr, show_implicit: bool, parent: Parent) {
        let need = self.pretty && !self.is_simple(e, parent);
        if need {
            self.push("(");
        }
        self.expr(e, show_implicit);
        if need {
            self.push(")");
        }
    }

    // ------------------------------------------------------------ expressions

    /// A reference to a join column, printed by the join's name for it
    /// (get_variable on a join's Var); the column's name, or None if `e`
    /// is no join column visible here.
    pub(crate) fn join_column(&mut self, e: &Expr) -> Option<String> {
        let (levels_up, base) = match e {
            Expr::Var(v) => (v.levels_up as usize, Expr::Var(crate::expr::Var { levels_up: 0, ..v.clone() })),
            Expr::Coalesce { .. } | Expr::Cast { .. } => (0, e.clone()),
            _ => return None,
        };
        let scope = self.scopes.len().checked_sub(1 + levels_up).and_then(|i| self.scopes.get(i))?;
        let (refname, name) = scope.joins.iter().filter(|j| !scope.inside.contains(&j.rte)).find_map(|j| {
            if let Expr::Var(v) = &base {
                if !j.members.contains(&v.rte) {
                    return None;
                }
            }
            j.columns.iter().find(|(x, _)| *x == base).map(|(_, n)| (j.refname.clone(), n.clone()))
        })?;
        if let (true, Some(r)) = (self.varprefix, refname) {
            self.push(&super::quote_ident(&r));
            self.push(".");
        }
        self.push(&super::quote_ident(&name));
        Some(name)
    }

    /// get_rule_expr
    pub fn expr(&mut self, e: &Expr, show_implicit: bool) {
        if self.join_column(e).is_some() {
            return;
        }
        match e {
            Expr::Var(v) => {
                self.var(v.rte, v.col, v.levels_up);
            }
            Expr::Const(d, ty) => self.constant(d, *ty, 0),
            Expr::Param(i, _) => self.param(*i),
            Expr::Column(i, _) => match self.plan_refs.as_ref().and_then(|p| p.columns.get(*i)).cloned() {
                Some(l) => self.plan_label(&l),
                None => self.push(&format!("${}", i + 1)),
            },
            Expr::OuterParam(i, _) => match self.plan_refs.as_ref().and_then(|p| p.outer.get(*i)).cloned() {
                Some(l) => self.plan_label(&l),
                None => self.push(&format!("$outer{}", i + 1)),
            },
            Expr::CaseTest(_) => self.push("CASE_TEST_EXPR"),
            Expr::Func { func, args, .. } => {
                if func.oid == 0 {
                    if let Some(kw) = sql_value_function(&func.name) {
                        self.push(kw);
                        return;
                    }
                }
                if let Some((op, binary)) = operator_of(e) {
                    if !self.pretty {
                        self.push("(");
                    }
                    if binary {
                        self.expr_paren(&args[0], true, Parent::Op(Some(op), true));
                        self.push(&format!(" {op} "));
                        self.expr_paren(&args[1], true, Parent::Op(Some(op), false));
                    } else {
                        self.push(&format!("{op} "));
                        self.expr_paren(&args[0], true, Parent::Op(None, true));
                    }
                    if !self.pretty {
                        self.push(")");
                    }
                    return;
                }
                // generate_function_name: qualified when the search path
                // would not find it (information_schema's functions).
                if let Some(p) = self.env.catalog().proc(func.oid).filter(|p| p.namespace != crate::catalog::PG_CATALOG_NAMESPACE) {
                    let schema = self.env.catalog().namespace_name(p.namespace).to_string();
                    if !self.env.settings().search_path.iter().any(|s| *s == schema) {
                        self.push(&super::quote_ident(&schema));
                        self.push(".");
                    }
                }
                self.push(&super::quote_ident(&func.name));
                self.push("(");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.expr(a, true);
                }
                self.push(")");
            }
            Expr::Cast { arg, spec } => {
                if let Some(s) = sql_value_function_cast(e) {
                    self.push(&s);
                    return;
                }
                // A name literal cast to regclass: PostgreSQL folded it to
                // the relation's OID, which prints as its (visible) name.
                if spec.to.oid == oid::REGCLASS {
                    if let Expr::Const(Datum::Text(name), _) = arg.as_ref() {
                        let shown = self
                            .env
                            .lookup_relation_oid(name)
                            .ok()
                            .and_then(|o| self.env.relation_name(o))
                            .unwrap_or_else(|| name.to_string());
                        self.push(&quote_literal(&shown));
                        self.push("::regclass");
                        return;
                    }
                }
                let parent = if cast_kind(spec.from, spec.to) == CastKind::Func { Parent::CastFunc } else { Parent::CastOther };
                if !spec.explicit && !show_implicit {
                    self.expr_paren(arg, false, parent);
                } else {
                    self.coercion(arg, spec.to, parent);
                }
            }
            Expr::Bool { op, args } => self.bool_expr(*op, args),
            Expr::NullTest { arg, is_null } => {
                if !self.pretty {
                    self.push("(");
                }
                self.expr_paren(arg, true, Parent::Other);
                self.push(if *is_null { " IS NULL" } else { " IS NOT NULL" });
                if !self.pretty {
                    self.push(")");
                }
            }
            Expr::BoolTest { arg, kind } => {
                if !self.pretty {
                    self.push("(");
                }
                self.expr_paren(arg, false, Parent::Other);
                self.push(match kind {
                    BoolTestKind::IsTrue => " IS TRUE",
                    BoolTestKind::IsNotTrue => " IS NOT TRUE",
                    BoolTestKind::IsFalse => " IS FALSE",
                    BoolTestKind::IsNotFalse => " IS NOT FALSE",
                    BoolTestKind::IsUnknown => " IS UNKNOWN",
                    BoolTestKind::IsNotUnknown => " IS NOT UNKNOWN",
                });
                if !self.pretty {
                    self.push(")");
                }
            }
            Expr::Distinct { args, negated, eq } => {
                // IS NOT DISTINCT FROM is NOT over IS DISTINCT FROM in PostgreSQL's tree.
                if *negated {
                    if !self.pretty {
                        self.push("(");
                    }
                    self.push("NOT ");
                    let inner = Expr::Distinct { args: args.clone(), eq: eq.clone(), negated: false };
                    self.expr_paren(&inner, false, Parent::Bool(BoolOp::Not));
                    if !self.pretty {
                        self.push(")");
                    }
                    return;
                }
                if !self.pretty {
                    self.push("(");
                }
                self.expr_paren(&args.0, true, Parent::Other);
                self.push(" IS DISTINCT FROM ");
                self.expr_paren(&args.1, true, Parent::Other);
                if !self.pretty {
                    self.push(")");
                }
            }
            Expr::NullIf { args, .. } => {
                self.push("NULLIF(");
                self.expr(&args.0, true);
                self.push(", ");
                self.expr(&args.1, true);
                self.push(")");
            }
            Expr::ScalarArrayOp { op, any, args } => {
                let name = builtins().operator_name_of_proc(op.oid).unwrap_or("=");
                if !self.pretty {
                    self.push("(");
                }
                self.expr_paren(&args.0, true, Parent::Other);
                self.push(&format!(" {} {} (", name, if *any { "ANY" } else { "ALL" }));
                self.expr_paren(&args.1, true, Parent::Other);
                self.push(")");
                if !self.pretty {
                    self.push(")");
                }
            }
            Expr::Coalesce { args, .. } => {
                self.push("COALESCE(");
                self.expr_list(args);
                self.push(")");
            }
            Expr::MinMax { is_greatest, args, .. } => {
                self.push(if *is_greatest { "GREATEST(" } else { "LEAST(" });
                self.expr_list(args);
                self.push(")");
            }
            Expr::Row { args, .. } => {
                self.push("ROW(");
                self.expr_list(args);
                self.push(")");
            }
            Expr::Array { elements, ty, .. } => {
                self.push("ARRAY[");
                self.expr_list(elements);
                self.push("]");
                if elements.is_empty() {
                    self.push(&format!("::{}", format_type(builtins(), ty.oid, -1)));
                }
            }
            // As a target list shows an assignment: by its new value
            // (processIndirection prints the subscripts on the target).
            Expr::SubscriptAssign { value, .. } => self.expr(value, show_implicit),
            Expr::Subscript { arg, indexes, slice, .. } => {
                let parens = !matches!(arg.as_ref(), Expr::Var(_) | Expr::FieldSelect { .. });
                if parens {
                    self.push("(");
                }
                self.expr(arg, false);
                if parens {
                    self.push(")");
                }
                for (lo, hi) in indexes {
                    self.push("[");
                    if *slice {
                        if let Some(l) = lo {
                            self.expr(l, false);
                        }
                        self.push(":");
                        if let Some(h) = hi {
                            self.expr(h, false);
                        }
                    } else if let Some(l) = lo.as_ref().or(hi.as_ref()) {
                        self.expr(l, false);
                    }
                    self.push("]");
                }
            }
            Expr::FieldSelect { arg, field, .. } => {
                self.push("(");
                self.expr(arg, true);
                let name = match arg.as_ref() {
                    Expr::Func { func, args, .. } => crate::analyzer::function_out_columns(self.env.catalog(), func.oid, args)
                        .and_then(|cols| cols.get(*field).map(|c| super::quote_ident(&c.0))),
                    other => crate::catalog::types::composite_fields(other.ty().oid).and_then(|f| f.get(*field).map(|c| super::quote_ident(&c.0))),
                };
                self.push(&format!(").{}", name.unwrap_or_else(|| format!("f{}", field + 1))));
            }
            Expr::Case { arg, whens, default, .. } => self.case_expr(arg.as_deref(), whens, default),
            // Shown as the coercion it is (a cast to the domain).
            Expr::CoerceToDomain { arg, ty, .. } => {
                let cast = Expr::Cast { arg: arg.clone(), spec: crate::expr::CastSpec { from: arg.ty(), to: *ty, explicit: false } };
                self.expr(&cast, show_implicit);
            }
            Expr::Agg(a) => self.aggregate(a),
            Expr::Window(w) => self.window(w),
            Expr::SubPlan(sp) if self.plan_refs.is_some() => self.subplan_ref(sp),
            Expr::SubLink { .. } | Expr::SubPlan(_) => self.sublink(e),
        }
    }

    fn expr_list(&mut self, args: &[Expr]) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.expr(a, true);
        }
    }

    /// get_coercion_expr: `arg::type`.
    fn coercion(&mut self, arg: &Expr, to: SqlType, parent: Parent) {
        match arg {
            Expr::Const(d, ct) if ct.oid == to.oid && ct.typmod == -1 && !d.is_null() => self.constant(d, *ct, -1),
            _ => {
                if !self.pretty {
                    self.push("(");
                }
                self.expr_paren(arg, false, parent);
                if !self.pretty {
                    self.push(")");
                }
            }
        }
        self.push(&format!("::{}", format_type(builtins(), to.oid, to.typmod)));
    }

    fn bool_expr(&mut self, op: BoolOp, args: &[Expr]) {
        if !self.pretty {
            self.push("(");
        }
        match op {
            BoolOp::And | BoolOp::Or => {
                let sep = if op == BoolOp::And { " AND " } else { " OR " };
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.push(sep);
                    }
                    self.expr_paren(a, false, Parent::Bool(op));
                }
            }
            BoolOp::Not => {
                self.push("NOT ");
                if let Some(a) = args.first() {
                    self.expr_paren(a, false, Parent::Bool(op));
                }
            }
        }
        if !self.pretty {
            self.push(")");
        }
    }

    fn case_expr(&mut self, arg: Option<&Expr>, whens: &[(Expr, Expr)], default: &Expr) {
        self.context_keyword("CASE", 0, PRETTYINDENT_VAR, 0);
        if let Some(a) = arg {
            self.push(" ");
            self.expr(a, true);
        }
        for (w, t) in whens {
            // With an argument, the parser built `CaseTest = value`: show the value.
            let shown = match (arg, w) {
                (Some(_), Expr::Func { args, .. }) if args.len() == 2 && matches!(strip_implicit(&args[0]), Expr::CaseTest(_)) => &args[1],
                _ => w,
            };
            if !self.indent_lines {
                self.push(" ");
            }
            self.context_keyword("WHEN ", 0, 0, 0);
            self.expr(shown, false);
            self.push(" THEN ");
            self.expr(t, true);
        }
        if !self.indent_lines {
            self.push(" ");
        }
        self.context_keyword("ELSE ", 0, 0, 0);
        self.expr(default, true);
        if !self.indent_lines {
            self.push(" ");
        }
        self.context_keyword("END", -PRETTYINDENT_VAR, 0, 0);
    }

    fn aggregate(&mut self, a: &crate::expr::AggCall) {
        self.push(&super::quote_ident(&a.name));
        self.push("(");
        if a.distinct {
            self.push("DISTINCT ");
        }
        if a.star {
            self.push("*");
        } else {
            self.expr_list(&a.args);
        }
        if !a.order_by.is_empty() {
            self.push(" ORDER BY ");
            self.sort_list(&a.order_by);
        }
        self.push(")");
        if let Some(f) = &a.filter {
            self.push(" FILTER (WHERE ");
            self.expr(f, false);
            self.push(")");
        }
    }

    /// ORDER BY items inside calls and windows.
    fn sort_list(&mut self, items: &[(Expr, bool, bool)]) {
        for (i, (e, desc, nulls_first)) in items.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.expr(e, false);
            self.push_sort_options(*desc, *nulls_first);
        }
    }

    pub(crate) fn push_sort_options(&mut self, desc: bool, nulls_first: bool) {
        if desc {
            self.push(" DESC");
        }
        if nulls_first && !desc {
            self.push(" NULLS FIRST");
        } else if !nulls_first && desc {
            self.push(" NULLS LAST");
        }
    }

    fn window(&mut self, w: &WindowCall) {
        let name = match &w.kind {
            WindowFuncKind::RowNumber => "row_number",
            WindowFuncKind::Rank => "rank",
            WindowFuncKind::DenseRank => "dense_rank",
            WindowFuncKind::PercentRank => "percent_rank",
            WindowFuncKind::CumeDist => "cume_dist",
            WindowFuncKind::Ntile => "ntile",
            WindowFuncKind::Lag => "lag",
            WindowFuncKind::Lead => "lead",
            WindowFuncKind::FirstValue => "first_value",
            WindowFuncKind::LastValue => "last_value",
            WindowFuncKind::NthValue => "nth_value",
            WindowFuncKind::Agg(a) => {
                self.push(&super::quote_ident(&a.name));
                self.push("(");
                if a.star {
                    self.push("*");
                } else {
                    self.expr_list(&a.args);
                }
                self.push(")");
                if let Some(f) = &a.filter {
                    self.push(" FILTER (WHERE ");
                    self.expr(f, false);
                    self.push(")");
                }
                self.window_spec(w);
                return;
            }
        };
        self.push(name);
        self.push("(");
        self.expr_list(&w.args);
        self.push(")");
        self.window_spec(w);
    }

    fn window_spec(&mut self, w: &WindowCall) {
        self.push(" OVER (");
        let mut need_space = false;
        if !w.partition_by.is_empty() {
            self.push("PARTITION BY ");
            for (i, p) in w.partition_by.iter().enumerate() {
                if i > 0 {
                    self.push(", ");
                }
                self.expr(p, false);
            }
            need_space = true;
        }
        if !w.order_by.is_empty() {
            if need_space {
                self.push(" ");
            }
            self.push("ORDER BY ");
            self.sort_list(&w.order_by);
            need_space = true;
        }
        let f = &w.frame;
        let default = f.mode == FrameMode::Range
            && matches!(f.start, FrameBound::UnboundedPreceding)
            && matches!(f.end, FrameBound::CurrentRow)
            && f.exclusion == FrameExclusion::NoOthers;
        if !default {
            if need_space {
                self.push(" ");
            }
            self.push(match f.mode {
                FrameMode::Rows => "ROWS ",
                FrameMode::Range => "RANGE ",
                FrameMode::Groups => "GROUPS ",
            });
            self.push("BETWEEN ");
            self.frame_bound(&f.start);
            self.push(" AND ");
            self.frame_bound(&f.end);
            match f.exclusion {
                FrameExclusion::NoOthers => {}
                FrameExclusion::CurrentRow => self.push(" EXCLUDE CURRENT ROW"),
                FrameExclusion::Group => self.push(" EXCLUDE GROUP"),
                FrameExclusion::Ties => self.push(" EXCLUDE TIES"),
            }
            self.push(" ");
        }
        while self.buf.ends_with(' ') {
            self.buf.pop();
        }
        self.push(")");
    }

    fn frame_bound(&mut self, b: &FrameBound) {
        match b {
            FrameBound::UnboundedPreceding => self.push("UNBOUNDED PRECEDING"),
            FrameBound::UnboundedFollowing => self.push("UNBOUNDED FOLLOWING"),
            FrameBound::CurrentRow => self.push("CURRENT ROW"),
            FrameBound::Preceding(e) => {
                self.expr(e, false);
                self.push(" PRECEDING");
            }
            FrameBound::Following(e) => {
                self.expr(e, false);
                self.push(" FOLLOWING");
            }
        }
    }

    fn plan_label(&mut self, l: &PlanLabel) {
        if l.is_column {
            self.push(&l.text);
        } else {
            self.push("(");
            self.push(&l.text);
            self.push(")");
        }
    }

    /// A subplan as EXPLAIN refers to it: `(SubPlan 2)`, with its test
    /// (`(x = ANY (SubPlan 1))`), or `(hashed SubPlan 1)` when it is run
    /// once into a hash set (as the executor does for an uncorrelated
    /// `= ANY`). The subplan is recorded for EXPLAIN to print below.
    fn subplan_ref(&mut self, sp: &crate::expr::SubPlan) {
        let refs = self.plan_refs.as_mut().expect("plan_refs");
        let n = match refs.subplans.iter().find(|(_, s)| s.id == sp.id) {
            Some((n, _)) => *n,
            None => {
                let n = refs.next_subplan;
                refs.next_subplan += 1;
                refs.subplans.push((n, sp.clone()));
                n
            }
        };
        use crate::expr::SubLinkKind;
        let hashed = sp.kind == SubLinkKind::Any && sp.args.is_empty();
        let name = if hashed { format!("hashed SubPlan {n}") } else { format!("SubPlan {n}") };
        match (&sp.test, sp.kind) {
            (Some(t), SubLinkKind::Any | SubLinkKind::All) if !hashed => {
                let opname = sp.op.as_ref().and_then(|f| builtins().operator_name_of_proc(f.oid)).unwrap_or("=");
                self.push("(");
                self.expr(t, false);
                self.push(&format!(" {opname} {} ({name}))", if sp.kind == SubLinkKind::Any { "ANY" } else { "ALL" }));
            }
            _ => self.push(&format!("({name})")),
        }
    }

    /// Subqueries in expressions; printed by the query deparser.
    fn sublink(&mut self, e: &Expr) {
        super::viewdef::sublink(self, e);
    }

    // ------------------------------------------------------------ names

    /// get_variable: a column reference, qualified when the context wants
    /// it. Returns the column's name.
    pub(crate) fn var(&mut self, rte: usize, col: usize, levels_up: u32) -> Option<String> {
        let Some(scope) = self.scopes.len().checked_sub(1 + levels_up as usize).and_then(|i| self.scopes.get(i)) else {
            self.push("?column?");
            return None;
        };
        let Some(entry) = scope.rtes.get(rte) else {
            self.push("?column?");
            return None;
        };
        // A column of an unnamed join prints as the input column it stands for.
        if entry.refname.is_none() {
            if let Some(Expr::Var(v)) = entry.join_columns.as_ref().and_then(|c| c.get(col)) {
                let v = v.clone();
                return self.var(v.rte, v.col, levels_up + v.levels_up);
            }
        }
        let name = match crate::expr::SystemColumn::of_var_col(col) {
            Some(sc) => sc.name().to_string(),
            None => entry.columns.get(col).cloned().unwrap_or_else(|| "?column?".into()),
        };
        if let (true, Some(r)) = (self.varprefix, &entry.refname) {
            let r = super::quote_ident(r);
            self.push(&r);
            self.push(".");
        }
        self.push(&super::quote_ident(&name));
        Some(name)
    }

    // ------------------------------------------------------------ constants

    /// get_const_expr. `showtype` -1 prints no type label, 0 one where
    /// needed to re-read the constant as the same type, 1 always one.
    pub(crate) fn constant(&mut self, d: &Datum, ty: SqlType, showtype: i32) {
        let type_label = || format!("::{}", format_type(builtins(), ty.oid, ty.typmod));
        if d.is_null() {
            self.push("NULL");
            if showtype >= 0 {
                self.push(&type_label());
            }
            return;
        }
        let text = {
            let settings = self.env.settings();
            match (d, ty.oid) {
                (Datum::Oid(o), oid::REGCLASS) => self.env.relation_name(*o).unwrap_or_else(|| o.to_string()),
                _ => super::io::format_text(d, ty.oid, &settings),
            }
        };
        let mut needlabel = false;
        match ty.oid {
            oid::INT4 => {
                if text.starts_with('-') {
                    self.push(&quote_literal(&text));
                    needlabel = true;
                } else {
                    self.push(&text);
                }
            }
            oid::NUMERIC if looks_like_float(&text) => {
                self.push(&text);
                needlabel = ty.typmod >= 0;
            }
            // EXPLAIN prints the constants the planner folded as
            // get_const_expr does: quoted, with their type.
            oid::NUMERIC | oid::INT2 | oid::INT8 | oid::FLOAT4 | oid::FLOAT8 if self.plan_refs.is_some() => {
                self.push(&quote_literal(&text));
                needlabel = true;
            }
            oid::BOOL => {
                self.push(if text == "t" { "true" } else { "false" });
            }
            oid::UNKNOWN => self.push(&quote_literal(&text)),
            _ => {
                self.push(&quote_literal(&text));
                needlabel = true;
            }
        }
        if (showtype == 0 && needlabel) || showtype > 0 {
            self.push(&type_label());
        }
    }
}

/// A numeric constant that reads back as numeric without a cast: digits
/// first, with a decimal point or exponent.
fn looks_like_float(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit()) && text.contains(['.', 'e', 'E'])
}

/// simple_quote_literal (standard_conforming_strings is always on).
pub(crate) fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// CURRENT_TIMESTAMP(3) and friends: a SQL value function with a precision.
fn sql_value_function_cast(e: &Expr) -> Option<String> {
    let Expr::Cast { arg, spec } = e else { return None };
    let Expr::Func { func, args, .. } = arg.as_ref() else { return None };
    if func.oid != 0 || !args.is_empty() || spec.to.typmod < 0 {
        return None;
    }
    sql_value_function(&func.name).map(|kw| format!("{kw}({})", spec.to.typmod))
}

fn strip_implicit(e: &Expr) -> &Expr {
    match e {
        Expr::Cast { arg, spec } if !spec.explicit => strip_implicit(arg),
        _ => e,
    }
}

/// isSimpleNode for an operator under an operator in pretty mode: only the
/// arithmetic operators' precedence is known.
fn simple_under_operator(op: Option<&str>, parent_op: Option<&str>, first: bool) -> bool {
    let Some(op) = op else { return false };
    let lo = |s: &str| s.starts_with(['+', '-']);
    let hi = |s: &str| s.starts_with(['*', '/', '%']);
    if !(lo(op) || hi(op)) {
        return false;
    }
    let Some(p) = parent_op else { return false };
    if !(lo(p) || hi(p)) {
        return false;
    }
    if hi(op) && lo(p) {
        return true;
    }
    if lo(op) && hi(p) {
        return false;
    }
    // Same precedence: (a - b) - c needs none, a - (b - c) does.
    first
}

/// isSimpleNode's cases that depend only on the parent (operators outside
/// pretty mode, IS NULL, IS DISTINCT FROM, sublinks).
fn simple_by_parent(parent: Parent) -> bool {
    matches!(parent, Parent::Bool(_))
}

fn simple_bool(pretty: bool, op: BoolOp, parent: Parent) -> bool {
    match parent {
        Parent::Bool(p) => {
            pretty
                && match op {
                    BoolOp::Not | BoolOp::And => matches!(p, BoolOp::And | BoolOp::Or),
                    BoolOp::Or => p == BoolOp::Or,
                }
        }
        _ => false,
    }
}

/// The column names of a relation's live columns, as Vars index them.
pub fn live_column_names(rel: &crate::catalog::Relation) -> Vec<String> {
    rel.live_columns().map(|(_, c)| c.name.clone()).collect()
}
