//! Typed expressions: what the analyzer produces from raw parse trees, the
//! planner rewrites (column references become row positions, sublinks
//! become subplans), and the executor evaluates.
//!
//! Every node knows its result type. Functions and operators are already
//! resolved to a built-in implementation; casts to a conversion.

use std::sync::Arc;

use tusk_types::{Datum, Oid, SqlType};

use crate::functions::{AggregateKind, ScalarFn};
use crate::plan::Plan;
use crate::query::Query;

/// A column of a range table entry, possibly of an enclosing query.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Index into the query's range table.
    pub rte: usize,
    /// 0-based column index within that entry.
    pub col: usize,
    /// 0 = this query, 1 = the immediately enclosing query, ...
    pub levels_up: u32,
    pub ty: SqlType,
}

/// PostgreSQL's system columns, which every table has besides its own
/// (attribute numbers -1 to -6). A `Var` names one with `col` =
/// `SYSTEM_COLUMN_BASE + index()`: past any real column, below the row
/// key's `usize::MAX`. A table scan provides them only when the query
/// names one (see `Plan::Scan`), so other queries pay nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemColumn {
    Ctid,
    Xmin,
    Cmin,
    Xmax,
    Cmax,
    TableOid,
}

/// `Var::col` of the first system column (see `SystemColumn`).
pub const SYSTEM_COLUMN_BASE: usize = usize::MAX - 8;

impl SystemColumn {
    /// In attribute-number order (-1 first): the order a scan appends them in.
    pub const ALL: [SystemColumn; 6] =
        [SystemColumn::Ctid, SystemColumn::Xmin, SystemColumn::Cmin, SystemColumn::Xmax, SystemColumn::Cmax, SystemColumn::TableOid];

    pub fn name(self) -> &'static str {
        match self {
            SystemColumn::Ctid => "ctid",
            SystemColumn::Xmin => "xmin",
            SystemColumn::Cmin => "cmin",
            SystemColumn::Xmax => "xmax",
            SystemColumn::Cmax => "cmax",
            SystemColumn::TableOid => "tableoid",
        }
    }

    pub fn by_name(name: &str) -> Option<SystemColumn> {
        SystemColumn::ALL.into_iter().find(|c| c.name() == name)
    }

    /// pg_attribute.attnum
    pub fn attnum(self) -> i16 {
        -(self.index() as i16) - 1
    }

    /// Position among the system columns a scan appends.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn ty(self) -> SqlType {
        use tusk_types::oid;
        SqlType::new(match self {
            SystemColumn::Ctid => oid::TID,
            SystemColumn::Xmin | SystemColumn::Xmax => oid::XID,
            SystemColumn::Cmin | SystemColumn::Cmax => oid::CID,
            SystemColumn::TableOid => oid::OID,
        })
    }

    pub fn var_col(self) -> usize {
        SYSTEM_COLUMN_BASE + self.index()
    }

    /// The system column a `Var::col` names, if it names one.
    pub fn of_var_col(col: usize) -> Option<SystemColumn> {
        col.checked_sub(SYSTEM_COLUMN_BASE).and_then(|i| SystemColumn::ALL.get(i).copied())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolTestKind {
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
    IsUnknown,
    IsNotUnknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubLinkKind {
    Exists,
    /// A scalar subquery: one column, at most one row.
    Expr,
    /// `x op ANY (subquery)` / `x IN (subquery)`
    Any,
    /// `x op ALL (subquery)`
    All,
    /// ARRAY(subquery)
    Array,
    /// A subquery of several columns used as one row value — `(a, b) =
    /// (SELECT ...)` and `SET (a, b) = (SELECT ...)` — at most one row,
    /// yielding a record (NULL when there is no row).
    Row,
}

/// A resolved function: which built-in, and how to run it.
#[derive(Clone)]
pub struct FuncRef {
    pub oid: Oid,
    pub name: Arc<str>,
    pub imp: ScalarFn,
    pub strict: bool,
    /// 'i', 's' or 'v' as pg_proc.provolatile.
    pub volatility: char,
}

impl std::fmt::Debug for FuncRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.name, self.oid)
    }
}

impl PartialEq for FuncRef {
    fn eq(&self, other: &Self) -> bool {
        // OID 0: evaluators of SQL syntax (CURRENT_DATE, XMLCONCAT...),
        // told apart by name.
        self.oid == other.oid && (self.oid != 0 || self.name == other.name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub oid: Oid,
    pub name: Arc<str>,
    pub kind: AggregateKind,
    pub args: Vec<Expr>,
    pub arg_types: Vec<SqlType>,
    pub distinct: bool,
    /// count(*)
    pub star: bool,
    pub filter: Option<Box<Expr>>,
    /// ORDER BY inside the call: (expression, descending, nulls first).
    pub order_by: Vec<(Expr, bool, bool)>,
    pub ty: SqlType,
    /// 0: an aggregate of the query it is in; n: of the query n levels
    /// out, whose columns alone its arguments read (an outer-level
    /// aggregate, PostgreSQL's agglevelsup). That query computes it, and
    /// the subquery sees its value.
    pub levels_up: u32,
}

/// What a window function computes over its partition.
#[derive(Clone, Debug, PartialEq)]
pub enum WindowFuncKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame.
    Agg(Box<AggCall>),
}

/// Which rows a frame's offsets count: physical rows, peer groups, or
/// values of the (single) ORDER BY key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameMode {
    Rows,
    Range,
    Groups,
}

/// One end of a window frame. Offsets are expressions without column
/// references (constants or parameters), evaluated once per execution.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

/// Rows left out of every row's frame (EXCLUDE ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameExclusion {
    NoOthers,
    CurrentRow,
    Group,
    Ties,
}

/// A window frame (PostgreSQL's frameOptions with its offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFrame {
    pub mode: FrameMode,
    pub start: FrameBound,
    pub end: FrameBound,
    pub exclusion: FrameExclusion,
}

impl WindowFrame {
    /// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: with ORDER BY,
    /// the partition up to the current row's last peer; without it, the
    /// whole partition (every row is a peer).
    pub fn default_frame() -> WindowFrame {
        WindowFrame { mode: FrameMode::Range, start: FrameBound::UnboundedPreceding, end: FrameBound::CurrentRow, exclusion: FrameExclusion::NoOthers }
    }

    fn offsets(&self) -> impl Iterator<Item = &Expr> {
        [&self.start, &self.end].into_iter().filter_map(|b| match b {
            FrameBound::Preceding(e) | FrameBound::Following(e) => Some(e),
            _ => None,
        })
    }

    fn map_offsets(self, f: &mut dyn FnMut(Expr) -> Expr) -> WindowFrame {
        let map = |b: FrameBound, f: &mut dyn FnMut(Expr) -> Expr| match b {
            FrameBound::Preceding(e) => FrameBound::Preceding(f(e)),
            FrameBound::Following(e) => FrameBound::Following(f(e)),
            other => other,
        };
        WindowFrame { mode: self.mode, start: map(self.start, f), end: map(self.end, f), exclusion: self.exclusion }
    }
}

/// `f(args) OVER (PARTITION BY ... ORDER BY ... frame)`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    pub kind: WindowFuncKind,
    /// Arguments of the non-aggregate kinds (an aggregate holds its own).
    pub args: Vec<Expr>,
    pub partition_by: Vec<Expr>,
    /// (expression, descending, nulls first)
    pub order_by: Vec<(Expr, bool, bool)>,
    pub frame: WindowFrame,
    pub ty: SqlType,
}

/// How a cast converts at run time.
#[derive(Clone, Debug, PartialEq)]
pub struct CastSpec {
    pub from: SqlType,
    pub to: SqlType,
    /// Explicit casts truncate varchar/bpchar silently; assignment casts raise errors.
    pub explicit: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(Datum, SqlType),
    /// `$n` (0-based index), bound at execution.
    Param(usize, SqlType),
    Var(Var),
    Func { func: FuncRef, args: Vec<Expr>, ty: SqlType },
    Agg(Box<AggCall>),
    Window(Box<WindowCall>),
    Cast { arg: Box<Expr>, spec: CastSpec },
    Bool { op: BoolOp, args: Vec<Expr> },
    NullTest { arg: Box<Expr>, is_null: bool },
    BoolTest { arg: Box<Expr>, kind: BoolTestKind },
    /// CASE [arg] WHEN ... : with an arg, each `when` is an equality test
    /// against `CaseTest`, which evaluates to the arg's value.
    Case { arg: Option<Box<Expr>>, whens: Vec<(Expr, Expr)>, default: Box<Expr>, ty: SqlType },
    CaseTest(SqlType),
    Coalesce { args: Vec<Expr>, ty: SqlType },
    /// GREATEST (is_greatest) / LEAST, with the type's comparison.
    MinMax { is_greatest: bool, args: Vec<Expr>, ty: SqlType },
    /// NULLIF(a, b): `eq` compares a and b.
    NullIf { args: Box<(Expr, Expr)>, eq: FuncRef, ty: SqlType },
    /// `a IS [NOT] DISTINCT FROM b`: `eq` compares non-null values.
    Distinct { args: Box<(Expr, Expr)>, eq: FuncRef, negated: bool },
    /// `scalar op ANY/ALL (array)`, and IN lists.
    ScalarArrayOp { op: FuncRef, any: bool, args: Box<(Expr, Expr)> },
    /// A subquery in an expression, before planning.
    SubLink { kind: SubLinkKind, test: Option<Box<Expr>>, op: Option<FuncRef>, query: Box<Query>, ty: SqlType },
    Row { args: Vec<Expr>, ty: SqlType },
    Array { elem: SqlType, elements: Vec<Expr>, ty: SqlType },
    /// `arr[i]` / `arr[i:j]` subscripting.
    Subscript { arg: Box<Expr>, indexes: Vec<(Option<Expr>, Option<Expr>)>, slice: bool, ty: SqlType },
    /// `arr[i] := value` / `arr[i:j] := value` (a SubscriptingRef with an
    /// assignment): the array `arg` with that element or slice replaced,
    /// as UPDATE SET and INSERT into subscripted columns compute it.
    SubscriptAssign { arg: Box<Expr>, indexes: Vec<(Option<Expr>, Option<Expr>)>, slice: bool, value: Box<Expr>, ty: SqlType },
    /// A field of a composite value: `(row).field`, by position.
    FieldSelect { arg: Box<Expr>, field: usize, ty: SqlType },
    /// A value of a domain's base type becoming a value of the domain: its
    /// NOT NULL and CHECK constraints (of the domain and the domains under
    /// it), each CHECK with `CaseTest` standing for the value (`VALUE`).
    CoerceToDomain { arg: Box<Expr>, domain: Oid, not_null: bool, checks: Vec<(String, Expr)>, ty: SqlType },

    // -- Only after planning --
    /// A column of the node's input row.
    Column(usize, SqlType),
    /// A value passed into a subplan by its enclosing plan (correlation).
    OuterParam(usize, SqlType),
    SubPlan(Box<SubPlan>),
}

/// A planned subquery inside an expression.
#[derive(Clone, Debug, PartialEq)]
pub struct SubPlan {
    pub kind: SubLinkKind,
    pub plan: Arc<Plan>,
    /// Expressions, in the enclosing row's context, whose values become the
    /// subplan's `OuterParam`s. Empty when uncorrelated: the result is then
    /// computed once and reused.
    pub args: Vec<Expr>,
    pub test: Option<Box<Expr>>,
    pub op: Option<FuncRef>,
    pub ty: SqlType,
    /// Unique id within the statement, for result caching.
    pub id: usize,
    /// Correlated, and its results depend on its parameters alone (nothing
    /// volatile, a read-only statement): results may be reused for equal
    /// parameters.
    pub cache: bool,
}

impl Expr {
    pub fn ty(&self) -> SqlType {
        match self {
            Expr::Const(_, t) | Expr::Param(_, t) | Expr::CaseTest(t) | Expr::Column(_, t) | Expr::OuterParam(_, t) => *t,
            Expr::Var(v) => v.ty,
            Expr::Func { ty, .. } => *ty,
            Expr::Agg(a) => a.ty,
            Expr::Window(w) => w.ty,
            Expr::Cast { spec, .. } => spec.to,
            Expr::Bool { .. } | Expr::NullTest { .. } | Expr::BoolTest { .. } | Expr::Distinct { .. } | Expr::ScalarArrayOp { .. } => {
                SqlType::new(tusk_types::oid::BOOL)
            }
            Expr::Case { ty, .. }
            | Expr::Coalesce { ty, .. }
            | Expr::MinMax { ty, .. }
            | Expr::NullIf { ty, .. }
            | Expr::SubLink { ty, .. }
            | Expr::Row { ty, .. }
            | Expr::Array { ty, .. }
            | Expr::Subscript { ty, .. }
            | Expr::SubscriptAssign { ty, .. }
            | Expr::FieldSelect { ty, .. }
            | Expr::CoerceToDomain { ty, .. } => *ty,
            Expr::SubPlan(s) => s.ty,
        }
    }

    pub fn null(ty: SqlType) -> Expr {
        Expr::Const(Datum::Null, ty)
    }

    pub fn bool_const(b: bool) -> Expr {
        Expr::Const(Datum::Bool(b), SqlType::new(tusk_types::oid::BOOL))
    }

    pub fn is_const(&self) -> bool {
        matches!(self, Expr::Const(..))
    }

    /// Visits this expression and its sub-expressions (not into sublink queries).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        self.for_each_child(&mut |c| c.walk(f));
    }

    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Expr::Const(..) | Expr::Param(..) | Expr::Var(_) | Expr::CaseTest(_) | Expr::Column(..) | Expr::OuterParam(..) => {}
            Expr::Func { args, .. }
            | Expr::Bool { args, .. }
            | Expr::Coalesce { args, .. }
            | Expr::MinMax { args, .. }
            | Expr::Row { args, .. } => args.iter().for_each(f),
            Expr::Array { elements, .. } => elements.iter().for_each(f),
            Expr::Agg(a) => {
                a.args.iter().for_each(&mut *f);
                if let Some(x) = &a.filter {
                    f(x);
                }
                for (e, _, _) in &a.order_by {
                    f(e);
                }
            }
            Expr::Window(w) => {
                if let WindowFuncKind::Agg(a) = &w.kind {
                    a.args.iter().for_each(&mut *f);
                    if let Some(x) = &a.filter {
                        f(x);
                    }
                }
                w.args.iter().for_each(&mut *f);
                w.partition_by.iter().for_each(&mut *f);
                for (e, _, _) in &w.order_by {
                    f(e);
                }
                w.frame.offsets().for_each(f);
            }
            Expr::Cast { arg, .. } | Expr::NullTest { arg, .. } | Expr::BoolTest { arg, .. } | Expr::FieldSelect { arg, .. } => f(arg),
            Expr::CoerceToDomain { arg, checks, .. } => {
                f(arg);
                for (_, c) in checks {
                    f(c);
                }
            }
            Expr::Case { arg, whens, default, .. } => {
                if let Some(a) = arg {
                    f(a);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                f(default);
            }
            Expr::NullIf { args, .. } | Expr::Distinct { args, .. } | Expr::ScalarArrayOp { args, .. } => {
                f(&args.0);
                f(&args.1);
            }
            Expr::SubLink { test, .. } => {
                if let Some(t) = test {
                    f(t);
                }
            }
            Expr::Subscript { arg, indexes, .. } => {
                f(arg);
                for (a, b) in indexes {
                    if let Some(a) = a {
                        f(a);
                    }
                    if let Some(b) = b {
                        f(b);
                    }
                }
            }
            Expr::SubscriptAssign { arg, indexes, value, .. } => {
                f(arg);
                for (a, b) in indexes {
                    if let Some(a) = a {
                        f(a);
                    }
                    if let Some(b) = b {
                        f(b);
                    }
                }
                f(value);
            }
            Expr::SubPlan(s) => {
                s.args.iter().for_each(&mut *f);
                if let Some(t) = &s.test {
                    f(t);
                }
            }
        }
    }

    /// Rebuilds the expression bottom-up: `f` sees each node after its
    /// children were rewritten and may replace it.
    pub fn rewrite(self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let e = self.map_children(&mut |c| c.rewrite(f));
        f(e)
    }

    /// Fallible variant of `rewrite` that can stop descending: `f` returns
    /// Ok(Err(expr)) to keep going into children, Ok(Ok(expr)) to replace the node as is.
    pub fn try_map_children<E>(self, f: &mut dyn FnMut(Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        let mut err = None;
        let out = self.map_children(&mut |c| {
            if err.is_some() {
                return c;
            }
            match f(c) {
                Ok(e) => e,
                Err(e) => {
                    err = Some(e);
                    Expr::null(SqlType::new(0))
                }
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    pub fn map_children(self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let map_vec = |v: Vec<Expr>, f: &mut dyn FnMut(Expr) -> Expr| v.into_iter().map(|e| f(e)).collect::<Vec<_>>();
        match self {
            e @ (Expr::Const(..) | Expr::Param(..) | Expr::Var(_) | Expr::CaseTest(_) | Expr::Column(..) | Expr::OuterParam(..)) => e,
            Expr::Func { func, args, ty } => Expr::Func { func, args: map_vec(args, f), ty },
            Expr::Bool { op, args } => Expr::Bool { op, args: map_vec(args, f) },
            Expr::Coalesce { args, ty } => Expr::Coalesce { args: map_vec(args, f), ty },
            Expr::MinMax { is_greatest, args, ty } => Expr::MinMax { is_greatest, args: map_vec(args, f), ty },
            Expr::Row { args, ty } => Expr::Row { args: map_vec(args, f), ty },
            Expr::Array { elem, elements, ty } => Expr::Array { elem, elements: map_vec(elements, f), ty },
            Expr::Agg(mut a) => {
                a.args = map_vec(std::mem::take(&mut a.args), f);
                a.filter = a.filter.map(|x| Box::new(f(*x)));
                a.order_by = std::mem::take(&mut a.order_by).into_iter().map(|(e, d, n)| (f(e), d, n)).collect();
                Expr::Agg(a)
            }
            Expr::Window(mut w) => {
                if let WindowFuncKind::Agg(a) = &mut w.kind {
                    a.args = map_vec(std::mem::take(&mut a.args), f);
                    a.filter = a.filter.take().map(|x| Box::new(f(*x)));
                }
                w.args = map_vec(std::mem::take(&mut w.args), f);
                w.partition_by = map_vec(std::mem::take(&mut w.partition_by), f);
                w.order_by = std::mem::take(&mut w.order_by).into_iter().map(|(e, d, n)| (f(e), d, n)).collect();
                w.frame = std::mem::replace(&mut w.frame, WindowFrame::default_frame()).map_offsets(f);
                Expr::Window(w)
            }
            Expr::Cast { arg, spec } => Expr::Cast { arg: Box::new(f(*arg)), spec },
            Expr::NullTest { arg, is_null } => Expr::NullTest { arg: Box::new(f(*arg)), is_null },
            Expr::BoolTest { arg, kind } => Expr::BoolTest { arg: Box::new(f(*arg)), kind },
            Expr::FieldSelect { arg, field, ty } => Expr::FieldSelect { arg: Box::new(f(*arg)), field, ty },
            Expr::CoerceToDomain { arg, domain, not_null, checks, ty } => Expr::CoerceToDomain {
                arg: Box::new(f(*arg)),
                domain,
                not_null,
                checks: checks.into_iter().map(|(n, c)| (n, f(c))).collect(),
                ty,
            },
            Expr::Case { arg, whens, default, ty } => Expr::Case {
                arg: arg.map(|a| Box::new(f(*a))),
                whens: whens.into_iter().map(|(w, t)| (f(w), f(t))).collect(),
                default: Box::new(f(*default)),
                ty,
            },
            Expr::NullIf { args, eq, ty } => {
                let (a, b) = *args;
                Expr::NullIf { args: Box::new((f(a), f(b))), eq, ty }
            }
            Expr::Distinct { args, eq, negated } => {
                let (a, b) = *args;
                Expr::Distinct { args: Box::new((f(a), f(b))), eq, negated }
            }
            Expr::ScalarArrayOp { op, any, args } => {
                let (a, b) = *args;
                Expr::ScalarArrayOp { op, any, args: Box::new((f(a), f(b))) }
            }
            Expr::SubLink { kind, test, op, query, ty } => {
                Expr::SubLink { kind, test: test.map(|t| Box::new(f(*t))), op, query, ty }
            }
            Expr::Subscript { arg, indexes, slice, ty } => Expr::Subscript {
                arg: Box::new(f(*arg)),
                indexes: indexes.into_iter().map(|(a, b)| (a.map(&mut *f), b.map(&mut *f))).collect(),
                slice,
                ty,
            },
            Expr::SubscriptAssign { arg, indexes, slice, value, ty } => {
                let arg = Box::new(f(*arg));
                let indexes = indexes.into_iter().map(|(a, b)| (a.map(&mut *f), b.map(&mut *f))).collect();
                Expr::SubscriptAssign { arg, indexes, slice, value: Box::new(f(*value)), ty }
            }
            Expr::SubPlan(mut s) => {
                s.args = map_vec(std::mem::take(&mut s.args), f);
                s.test = s.test.map(|t| Box::new(f(*t)));
                Expr::SubPlan(s)
            }
        }
    }

    /// Whether any node satisfies `pred` (not looking inside sublink queries).
    pub fn any(&self, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            if !found && pred(e) {
                found = true;
            }
        });
        found
    }

    pub fn contains_agg(&self) -> bool {
        self.any(&mut |e| matches!(e, Expr::Agg(_)))
    }

    /// Whether evaluating the expression can give different results for the
    /// same inputs (volatile functions), so it must not be pre-computed.
    pub fn is_volatile(&self) -> bool {
        self.any(&mut |e| match e {
            Expr::Func { func, .. } => func.volatility == 'v',
            Expr::SubLink { .. } | Expr::SubPlan(_) => true,
            _ => false,
        })
    }
}
