//! Physical plans: the trees of nodes the executor runs.
//!
//! Every node produces rows (vectors of datums). Expressions inside a node
//! refer to the node's input row by position (`Expr::Column`), to values
//! passed in by an enclosing plan (`Expr::OuterParam`), and to statement
//! parameters (`Expr::Param`).

use std::sync::Arc;

use tusk_types::SqlType;

use crate::catalog::Relation;
use crate::expr::{AggCall, Expr, WindowCall};
use crate::query::{JoinKind, SetOpKind};

/// A key range over an index (or the table's own primary key).
#[derive(Clone, Debug)]
pub struct KeyRange {
    /// Values for the leading key columns, all compared with `=`.
    pub eq: Vec<Expr>,
    /// Bound on the next key column: (value, inclusive).
    pub lower: Option<(Expr, bool)>,
    pub upper: Option<(Expr, bool)>,
}

#[derive(Clone, Debug)]
pub enum ScanMethod {
    /// Every row, in key order.
    Full,
    /// Rows of the clustered primary key within a range.
    PrimaryKey(KeyRange),
    /// Rows found through a secondary index within a range.
    Index { index: Arc<Relation>, range: KeyRange },
    /// One lookup per element of an array (`col = ANY(...)` / IN lists) on
    /// the first key column of the primary key or an index.
    KeyList { index: Option<Arc<Relation>>, values: Expr },
    /// Rows found through a GIN index (EXPLAIN's Bitmap Heap Scan over a
    /// Bitmap Index Scan); the scan's filter rechecks every condition.
    Gin { index: Arc<Relation>, conds: Vec<GinCond> },
}

/// One condition a GIN index answers: `qual` (as written, for EXPLAIN) is
/// `column op value` on index column `column`.
#[derive(Clone, Debug)]
pub struct GinCond {
    pub column: usize,
    pub class: crate::executor::gin::GinOpclass,
    pub op: crate::executor::gin::GinOp,
    pub value: Expr,
    pub qual: Expr,
    /// `qual` is written `value op' column` (op' the commutator of `op`).
    pub commuted: bool,
}

/// How EXPLAIN names a leaf of the plan: its range table entry's
/// reference name (the alias, or the relation's or function's name) and
/// the names of its columns.
#[derive(Clone, Debug, Default)]
pub struct Label {
    pub refname: String,
    pub columns: Vec<String>,
}

impl Label {
    pub fn of(rte: &crate::query::RangeTblEntry) -> Arc<Label> {
        Arc::new(Label { refname: rte.alias.clone(), columns: rte.col_names.clone() })
    }
}

#[derive(Clone, Debug)]
pub struct SortKey {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModifyKind {
    Insert,
    Update,
    Delete,
}

#[derive(Clone, Debug)]
pub enum Plan {
    /// One row computed from expressions (SELECT without FROM), if `filter` holds.
    Result { exprs: Vec<Expr>, filter: Option<Expr> },
    /// Rows of a table: its live columns in order, then (with `with_key`)
    /// the row's storage key as bytea, then (with `system`) the system
    /// columns in `SystemColumn::ALL` order.
    /// `columns`, when given, marks the live columns anything reads; the
    /// others are left NULL rather than decoded.
    Scan { rel: Arc<Relation>, method: ScanMethod, filter: Option<Expr>, with_key: bool, reverse: bool, columns: Option<Arc<[bool]>>, system: bool, label: Arc<Label> },
    Values { rows: Vec<Vec<Expr>>, width: usize, label: Arc<Label> },
    /// A set-returning function in FROM.
    Function { call: Expr, ordinality: bool, expand_record: usize, label: Arc<Label> },
    Filter { input: Box<Plan>, predicate: Expr },
    Project { input: Box<Plan>, exprs: Vec<Expr> },
    /// Set-returning functions in the target list (ProjectSet); rows of
    /// the input have `input_width` columns.
    ProjectSet { input: Box<Plan>, exprs: Vec<Expr>, input_width: usize },
    NestedLoop { left: Box<Plan>, right: Box<Plan>, kind: JoinKind, predicate: Option<Expr>, left_width: usize, right_width: usize },
    /// A join whose right side depends on the left row (LATERAL): for each
    /// left row, `args` are evaluated over it and the right plan runs with
    /// them as its parameters.
    LateralLoop { left: Box<Plan>, right: Arc<Plan>, args: Vec<Expr>, kind: JoinKind, predicate: Option<Expr>, right_width: usize },
    HashJoin {
        /// Probe side.
        left: Box<Plan>,
        /// Build side.
        right: Box<Plan>,
        kind: JoinKind,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
        /// Non-equi conditions, over the concatenated row.
        predicate: Option<Expr>,
        left_width: usize,
        right_width: usize,
    },
    /// Grouping: output is the group key values, then the aggregate results.
    Agg { input: Box<Plan>, group: Vec<Expr>, aggs: Vec<AggCall> },
    /// Window functions over the input rows, which a Sort below has ordered
    /// by `partition` then `order`: each output row is the input row
    /// followed by one value per function.
    WindowAgg { input: Box<Plan>, partition: Vec<Expr>, order: Vec<(Expr, bool, bool)>, funcs: Vec<WindowCall> },
    Sort { input: Box<Plan>, keys: Vec<SortKey> },
    /// LIMIT/OFFSET; with `ties`, rows equal to the last one on these keys follow.
    Limit { input: Box<Plan>, limit: Option<Expr>, offset: Option<Expr>, ties: Vec<SortKey> },
    /// DISTINCT over all columns, or DISTINCT ON the given leading columns
    /// (input sorted by them; the first row of each group wins).
    Distinct { input: Box<Plan>, on: Option<Vec<usize>> },
    SetOp { kind: SetOpKind, all: bool, left: Box<Plan>, right: Box<Plan> },
    /// The rows of each input in turn. `label` names the rows of an
    /// inherited table's scan (the parent's columns) for EXPLAIN.
    Append { inputs: Vec<Plan>, label: Option<Arc<Label>> },
    /// WITH RECURSIVE: `base` once, then `recursive` until it yields nothing,
    /// each round reading the previous round's rows through `WorkTable{id}`.
    RecursiveUnion { base: Box<Plan>, recursive: Box<Plan>, all: bool, id: usize, width: usize },
    WorkTable { id: usize, label: Arc<Label> },
    /// The rows of a named tuplestore (a transition table), looked up in
    /// the session's query environment when the query runs.
    NamedTuplestore { name: String, label: Arc<Label> },
    Materialize { input: Box<Plan> },
    /// INSERT/UPDATE/DELETE on `rel`.
    ///
    /// Insert: input rows are the new rows. Update: input rows are the old
    /// row's columns, its key, then the new values of `update_cols`.
    /// Delete: input rows are the old row's columns and key.
    Modify {
        kind: ModifyKind,
        rel: Arc<Relation>,
        input: Box<Plan>,
        update_cols: Vec<usize>,
        on_conflict: Option<OnConflictPlan>,
        /// RETURNING expressions over the new (insert/update) or old (delete) row.
        returning: Vec<Expr>,
        /// Where the joined input row starts in each input row, when
        /// RETURNING reads FROM/USING items besides the target.
        returning_input: Option<usize>,
        /// WITH CHECK OPTION conditions over the new row: (view name, condition).
        view_checks: Vec<(String, Expr)>,
        /// Width of the old row part in the input (columns + key).
        old_width: usize,
        /// How to re-evaluate a target row changed concurrently, when the
        /// statement reads only its target table.
        recheck: Option<Recheck>,
        /// UPDATE/DELETE of an inheritance tree: its tables (the target
        /// first). Each input row then carries its table's OID right after
        /// the row key (counted in `old_width`), which routes it.
        inherited: Vec<InheritedTarget>,
        /// RETURNING reads system columns: they follow the row it is
        /// evaluated over (after the joined input, if any).
        returning_system: bool,
    },
    /// SELECT ... FOR UPDATE / SHARE: locks each row's rows of `rels`
    /// (whose keys are at the given columns), exclusively or shared,
    /// waiting, skipping locked rows, or failing on them.
    LockRows { input: Box<Plan>, rels: Vec<(Arc<Relation>, usize)>, exclusive: bool, wait: crate::query::LockWait },
}

/// A table of an inheritance tree that an UPDATE or DELETE of its root reaches.
#[derive(Clone, Debug)]
pub struct InheritedTarget {
    pub rel: Arc<Relation>,
    /// For each live column of the statement's target, this table's live
    /// column of that name.
    pub columns: Vec<usize>,
}

/// Re-evaluation of a target row changed by a concurrent transaction (READ
/// COMMITTED's EvalPlanQual): the WHERE condition and SET expressions over
/// the target row alone.
#[derive(Clone, Debug)]
pub struct Recheck {
    pub quals: Option<Expr>,
    pub set: Vec<Expr>,
}

/// ON CONFLICT, planned: expressions over (existing row ++ proposed row).
#[derive(Clone, Debug)]
pub struct OnConflictPlan {
    pub arbiter: Option<u32>,
    pub do_update: bool,
    pub set: Vec<(usize, Expr)>,
    pub filter: Option<Expr>,
}

impl Plan {
    pub fn boxed(self) -> Box<Plan> {
        Box::new(self)
    }
}

/// Plans compare by identity only (see `Query`).
impl PartialEq for Plan {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}

/// A planned statement: the plan and the shape of its result.
#[derive(Clone, Debug)]
pub struct PlannedQuery {
    pub plan: Plan,
    pub columns: Vec<OutputColumn>,
    /// Number of subplans (for per-statement caches).
    pub subplans: usize,
    pub has_modify: bool,
    pub row_lock: bool,
    /// Data-modifying WITH queries, run to completion before the statement;
    /// their RETURNING rows become work table `id`.
    pub pre_modify: Vec<(usize, Plan)>,
    /// Tables the statement reads or writes.
    pub relations: Vec<tusk_types::Oid>,
    /// The privileges it needs on them, checked when it starts.
    pub perms: Vec<crate::catalog::acl::RelPerm>,
    /// How many range table entries the statement's queries have in all
    /// (PostgreSQL's flattened final range table): EXPLAIN qualifies
    /// column names when there is more than one.
    pub range_table_entries: usize,
    /// The catalog the plan was made against: if another one is current
    /// once the statement holds its relation locks (DDL committed while it
    /// waited), the plan is stale and must be made again.
    pub catalog: std::sync::Weak<crate::catalog::DbCatalog>,
    /// Tests only (feature `fault-injection`): the statement panics once it
    /// has run to its end, to prove a panic fails one statement only.
    #[cfg(feature = "fault-injection")]
    pub panic_when_done: bool,
    _private: (),
}

impl PlannedQuery {
    pub fn new(plan: Plan, columns: Vec<OutputColumn>, subplans: usize) -> PlannedQuery {
        let has_modify = matches!(plan, Plan::Modify { .. });
        PlannedQuery { plan, columns, subplans, has_modify, row_lock: false, pre_modify: Vec::new(), relations: Vec::new(), perms: Vec::new(), range_table_entries: 0, catalog: std::sync::Weak::new(), #[cfg(feature = "fault-injection")] panic_when_done: false, _private: () }
    }
}

#[derive(Clone, Debug)]
pub struct OutputColumn {
    pub name: String,
    pub ty: SqlType,
    /// (table oid, attnum) for RowDescription.
    pub origin: Option<(u32, i16)>,
}
