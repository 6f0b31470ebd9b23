//! The analyzed query (PostgreSQL's `Query`): a range table of everything
//! the statement reads, the join tree over it, and typed expressions for
//! targets, quals, grouping, ordering and limits. The planner turns it into
//! a `Plan`.

use std::sync::Arc;

use tusk_types::SqlType;

use crate::catalog::Relation;
use crate::expr::Expr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
    /// Produced by the planner for EXISTS / IN subqueries.
    Semi,
    Anti,
}

#[derive(Clone, Debug)]
pub enum RteKind {
    Relation(Arc<Relation>),
    /// Shared: a WITH query inlined at each reference is not copied.
    Subquery(Arc<Query>),
    Values(Vec<Vec<Expr>>),
    /// A set-returning function in FROM; `ordinality` adds a bigint column.
    Function { call: Expr, ordinality: bool, columns_from_record: bool },
    /// A reference to a WITH query: `levels_up` enclosing queries out, index in its `ctes`.
    Cte { index: usize, levels_up: u32, recursive_self: bool },
    /// A named tuplestore the query's environment provides (a trigger's
    /// transition table), read by name when the query runs.
    NamedTuplestore { name: String },
    /// A join, whose columns are expressions over its inputs (USING columns merged).
    Join { kind: JoinKind, columns: Vec<Expr> },
}

#[derive(Clone, Debug)]
pub struct RangeTblEntry {
    pub kind: RteKind,
    /// The name the entry is referred to by (alias, or the relation's name).
    pub alias: String,
    pub has_alias: bool,
    pub col_names: Vec<String>,
    pub col_types: Vec<SqlType>,
    /// Whether the entry may reference earlier FROM items (LATERAL).
    pub lateral: bool,
    /// A table read with its inheritance children (not `ONLY`): the
    /// planner scans the whole inheritance tree.
    pub inh: bool,
}

impl RangeTblEntry {
    /// The name of column `col` of the entry: one of its own, or a system column's.
    pub fn column_name(&self, col: usize) -> &str {
        match crate::expr::SystemColumn::of_var_col(col) {
            Some(sc) => sc.name(),
            None => self.col_names.get(col).map(String::as_str).unwrap_or("?column?"),
        }
    }
}

/// The FROM clause as a tree of range table references and joins.
#[derive(Clone, Debug)]
pub enum FromItem {
    Rte(usize),
    Join { kind: JoinKind, left: Box<FromItem>, right: Box<FromItem>, quals: Option<Expr>, rte: usize },
}

#[derive(Clone, Debug)]
pub struct TargetEntry {
    pub expr: Expr,
    pub name: String,
    /// Only there for ORDER BY / GROUP BY / DISTINCT ON; not returned.
    pub junk: bool,
    /// (table oid, attnum) when the output column is a plain table column,
    /// for RowDescription.
    pub origin: Option<(u32, i16)>,
}

#[derive(Clone, Debug)]
pub struct SortKey {
    /// Index into `targets`.
    pub target: usize,
    pub descending: bool,
    pub nulls_first: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Distinct {
    None,
    All,
    /// DISTINCT ON: target indexes.
    On(Vec<usize>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

#[derive(Clone, Debug)]
pub enum SetOpTree {
    /// A leaf: a subquery RTE.
    Leaf(usize),
    Op { kind: SetOpKind, all: bool, left: Box<SetOpTree>, right: Box<SetOpTree>, col_types: Vec<SqlType> },
}

#[derive(Clone, Debug)]
pub struct Cte {
    pub name: String,
    pub query: Box<Query>,
    pub recursive: bool,
    pub col_names: Vec<String>,
    pub col_types: Vec<SqlType>,
    /// For WITH RECURSIVE: the non-recursive and recursive parts of the UNION.
    pub recursive_parts: Option<(Box<Query>, Box<Query>, bool)>,
    /// A data-modifying WITH query (INSERT/UPDATE/DELETE): it runs once,
    /// before the statement, and its RETURNING rows are what it yields.
    pub modifying: bool,
}

/// What SELECT ... FOR UPDATE does with a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Wait for it.
    Block,
    /// SKIP LOCKED: leave the row out.
    Skip,
    /// NOWAIT: fail with 55P03.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    Select,
    Insert,
    Update,
    Delete,
}

#[derive(Clone, Debug)]
pub enum OnConflict {
    Nothing { arbiter: Option<u32> },
    Update { arbiter: u32, set: Vec<(usize, Expr)>, filter: Option<Expr> },
}

/// The source and shape of an INSERT.
#[derive(Clone, Debug)]
pub struct InsertSpec {
    /// 0-based column indexes of the target relation, in source column order.
    pub columns: Vec<usize>,
    /// The rows to insert, as a query (VALUES or SELECT).
    pub source: Box<Query>,
    /// DEFAULT VALUES / defaults for columns not listed: filled by the executor.
    pub on_conflict: Option<OnConflict>,
    /// OVERRIDING SYSTEM VALUE
    pub overriding_system: bool,
}

#[derive(Clone, Debug)]
pub struct Query {
    pub command: CommandKind,
    pub rtable: Vec<RangeTblEntry>,
    pub from: Vec<FromItem>,
    pub quals: Option<Expr>,
    pub targets: Vec<TargetEntry>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub has_aggs: bool,
    pub sort: Vec<SortKey>,
    pub distinct: Distinct,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    /// FETCH FIRST ... WITH TIES: rows tied with the last one by ORDER BY also come.
    pub with_ties: bool,
    pub set_op: Option<SetOpTree>,
    pub ctes: Vec<Cte>,
    /// INSERT/UPDATE/DELETE: the range table index of the target relation.
    pub result_rte: Option<usize>,
    pub insert: Option<InsertSpec>,
    /// UPDATE: (0-based column index, new value).
    pub update_set: Vec<(usize, Expr)>,
    pub returning: Vec<TargetEntry>,
    /// SELECT ... FOR UPDATE / FOR SHARE.
    pub row_lock: bool,
    /// FOR SHARE / FOR KEY SHARE lock rows shared; the UPDATE strengths exclusively.
    pub row_lock_exclusive: bool,
    pub row_lock_wait: LockWait,
    /// DML through a view WITH CHECK OPTION: (view name, condition over the
    /// target row) that every new row must satisfy.
    pub view_checks: Vec<(String, Expr)>,
    /// The view this query is the expansion of (for dependency tracking).
    pub expanded_view: Option<tusk_types::Oid>,
    /// Number of `$n` parameters seen (and their types, as inferred).
    pub param_types: Vec<SqlType>,
}

impl Query {
    pub fn new(command: CommandKind) -> Query {
        Query {
            command,
            rtable: Vec::new(),
            from: Vec::new(),
            quals: None,
            targets: Vec::new(),
            group_by: Vec::new(),
            having: None,
            has_aggs: false,
            sort: Vec::new(),
            distinct: Distinct::None,
            limit: None,
            offset: None,
            with_ties: false,
            set_op: None,
            ctes: Vec::new(),
            result_rte: None,
            insert: None,
            update_set: Vec::new(),
            returning: Vec::new(),
            row_lock: false,
            row_lock_exclusive: true,
            row_lock_wait: LockWait::Block,
            view_checks: Vec::new(),
            expanded_view: None,
            param_types: Vec::new(),
        }
    }

    /// Output columns (non-junk targets).
    pub fn output(&self) -> impl Iterator<Item = &TargetEntry> {
        self.targets.iter().filter(|t| !t.junk)
    }
}

/// Queries are compared only by identity (expressions holding sublinks are never "equal").
impl PartialEq for Query {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
