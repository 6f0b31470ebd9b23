//! A compiled PL/pgSQL function (pl_comp.c's PLpgSQL_function): its
//! variables in one flat table indexed by slot (a slot is also the
//! variable's parameter index in the queries it runs), the namespace tree
//! that says which names are visible where, and the statement tree. The
//! plans of its expressions are cached inside it, per session.

use std::cell::RefCell;
use std::rc::Rc;

use tusk_sql::procedural::SpiPlan;
use tusk_types::SqlType;

/// How a variable holds its value.
#[derive(Clone, Debug)]
pub enum VarKind {
    Scalar,
    /// `record` (shape known once assigned) or a composite type (`%ROWTYPE`):
    /// the value is a `Datum::Record` or NULL.
    Record,
    /// A refcursor variable; `query` set for a bound cursor
    /// (`c CURSOR (args) FOR query`), whose argument variables are `args`.
    Cursor { query: Option<Expr>, args: Vec<usize>, scroll: Option<bool> },
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub ty: SqlType,
    pub kind: VarKind,
    pub is_const: bool,
    pub not_null: bool,
    pub default: Option<Expr>,
    /// The declared fields of a composite variable.
    pub fields: Option<Rc<Vec<(String, SqlType)>>>,
    pub lineno: u32,
}

/// One level of the namespace: a block, a loop's variable, or the
/// function's outer level labelled with its name.
#[derive(Debug, Default)]
pub struct Scope {
    pub parent: Option<usize>,
    pub label: Option<String>,
    pub items: Vec<(String, usize)>,
}

/// Where a name lookup starts: a scope and how many of its items were
/// declared before the expression.
#[derive(Clone, Copy, Debug)]
pub struct NsRef {
    pub scope: usize,
    pub visible: usize,
}

/// A plan cached for an expression, with the record shapes it was
/// prepared against (a record variable that changes shape re-plans).
pub struct CachedPlan {
    pub plan: SpiPlan,
    pub rec_deps: Vec<(usize, Option<Rc<Vec<(String, SqlType)>>>)>,
    /// The variables the statement refers to, in declaration order.
    pub used_vars: Vec<usize>,
}

/// An SQL expression or statement of the body, as text, with the
/// namespace it sees.
pub struct Expr {
    pub text: String,
    pub ns: NsRef,
    /// Expressions are run as `SELECT text`; statements as is.
    pub is_query: bool,
    pub plan: RefCell<Option<Rc<CachedPlan>>>,
}

impl Clone for Expr {
    fn clone(&self) -> Self {
        Expr { text: self.text.clone(), ns: self.ns, is_query: self.is_query, plan: RefCell::new(None) }
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr({:?})", self.text)
    }
}

impl Expr {
    /// The statement text the SPI prepares.
    pub fn sql(&self) -> String {
        if self.is_query {
            self.text.clone()
        } else {
            format!("SELECT {}", self.text)
        }
    }
}

/// A variable a value is stored into: a variable, a field of a record
/// variable, or an element of an array variable.
#[derive(Debug, Clone)]
pub enum TargetItem {
    Var(usize),
    Field(usize, String),
    Element(usize, Vec<Expr>),
}

/// INTO targets: one record/row variable, or a list of scalars.
#[derive(Debug, Clone)]
pub struct Target {
    pub items: Vec<TargetItem>,
}

#[derive(Debug)]
pub struct Stmt {
    pub lineno: u32,
    pub kind: StmtKind,
}

#[derive(Debug)]
pub enum QuerySource {
    Static(Expr),
    Dynamic { query: Expr, params: Vec<Expr> },
    /// A bound cursor variable and its argument values.
    Cursor { var: usize, args: Vec<Expr> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseOption {
    Errcode,
    Message,
    Detail,
    Hint,
    Column,
    Constraint,
    Datatype,
    Table,
    Schema,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseLevel {
    Debug,
    Log,
    Info,
    Notice,
    Warning,
    Exception,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagKind {
    RowCount,
    PgContext,
    ReturnedSqlstate,
    MessageText,
    PgExceptionDetail,
    PgExceptionHint,
    PgExceptionContext,
    ColumnName,
    ConstraintName,
    PgDatatypeName,
    TableName,
    SchemaName,
}

#[derive(Debug)]
pub struct ExceptionHandler {
    /// (condition name or None, sqlstate): a name matches a class when its
    /// code ends in "000"; "others" matches all but query_canceled/assert_failure.
    pub conditions: Vec<String>,
    pub body: Vec<Stmt>,
    pub lineno: u32,
}

#[derive(Debug)]
pub struct Block {
    pub label: Option<String>,
    /// Variables declared by the block, initialized on entry in order.
    pub decls: Vec<usize>,
    pub body: Vec<Stmt>,
    pub handlers: Option<Vec<ExceptionHandler>>,
    /// The SQLSTATE and SQLERRM variables of the exception section.
    pub sqlstate_var: Option<usize>,
    pub sqlerrm_var: Option<usize>,
}

#[derive(Debug)]
pub enum StmtKind {
    Block(Block),
    Assign { target: TargetItem, expr: Expr, text: String },
    If { branches: Vec<(Expr, Vec<Stmt>)>, else_body: Option<Vec<Stmt>> },
    Case { test: Option<(Expr, usize)>, whens: Vec<(Expr, Vec<Stmt>)>, else_body: Option<Vec<Stmt>> },
    Loop { label: Option<String>, body: Vec<Stmt> },
    While { label: Option<String>, cond: Expr, body: Vec<Stmt> },
    ForInt { label: Option<String>, var: usize, lower: Expr, upper: Expr, step: Option<Expr>, reverse: bool, body: Vec<Stmt> },
    ForQuery { label: Option<String>, target: Target, source: QuerySource, body: Vec<Stmt> },
    Foreach { label: Option<String>, target: Target, slice: i32, expr: Expr, body: Vec<Stmt> },
    Exit { is_exit: bool, label: Option<String>, cond: Option<Expr> },
    Return(Option<Expr>),
    ReturnNext(Option<Expr>),
    ReturnQuery(QuerySource),
    Raise { level: RaiseLevel, condname: Option<String>, message: Option<String>, params: Vec<Expr>, options: Vec<(RaiseOption, Expr)> },
    Assert { cond: Expr, message: Option<Expr> },
    ExecSql { sql: Expr, into: Option<(Target, bool)> },
    DynExecute { query: Expr, into: Option<(Target, bool)>, params: Vec<Expr> },
    Perform(Expr),
    Call { sql: Expr, target: Option<Target> },
    GetDiag { stacked: bool, items: Vec<(TargetItem, DiagKind)> },
    Open { var: usize, source: Option<QuerySource>, scroll: Option<bool> },
    Fetch { var: usize, direction: FetchSpec, target: Option<Target>, is_move: bool },
    Close(usize),
    Commit { chain: bool },
    Rollback { chain: bool },
    Null,
}

#[derive(Debug)]
pub enum FetchSpec {
    Next,
    Prior,
    First,
    Last,
    Absolute(Expr),
    Relative(Expr),
    Forward(Option<Expr>),
    Backward(Option<Expr>),
    ForwardAll,
    BackwardAll,
}

impl StmtKind {
    /// The statement's name in CONTEXT lines (plpgsql_stmt_typename).
    pub fn typename(&self) -> &'static str {
        match self {
            StmtKind::Block(_) => "statement block",
            StmtKind::Assign { .. } => "assignment",
            StmtKind::If { .. } => "IF",
            StmtKind::Case { .. } => "CASE",
            StmtKind::Loop { .. } => "LOOP",
            StmtKind::While { .. } => "WHILE",
            StmtKind::ForInt { .. } => "FOR with integer loop variable",
            StmtKind::ForQuery { source: QuerySource::Cursor { .. }, .. } => "FOR over cursor",
            StmtKind::ForQuery { source: QuerySource::Dynamic { .. }, .. } => "FOR over EXECUTE statement",
            StmtKind::ForQuery { .. } => "FOR over SELECT rows",
            StmtKind::Foreach { .. } => "FOREACH over array",
            StmtKind::Exit { is_exit: true, .. } => "EXIT",
            StmtKind::Exit { .. } => "CONTINUE",
            StmtKind::Return(_) => "RETURN",
            StmtKind::ReturnNext(_) => "RETURN NEXT",
            StmtKind::ReturnQuery(_) => "RETURN QUERY",
            StmtKind::Raise { .. } => "RAISE",
            StmtKind::Assert { .. } => "ASSERT",
            StmtKind::ExecSql { .. } => "SQL statement",
            StmtKind::DynExecute { .. } => "EXECUTE",
            StmtKind::Perform(_) => "PERFORM",
            StmtKind::Call { .. } => "CALL",
            StmtKind::GetDiag { stacked: true, .. } => "GET STACKED DIAGNOSTICS",
            StmtKind::GetDiag { .. } => "GET DIAGNOSTICS",
            StmtKind::Open { .. } => "OPEN",
            StmtKind::Fetch { is_move: true, .. } => "MOVE",
            StmtKind::Fetch { .. } => "FETCH",
            StmtKind::Close(_) => "CLOSE",
            StmtKind::Commit { .. } => "COMMIT",
            StmtKind::Rollback { .. } => "ROLLBACK",
            StmtKind::Null => "NULL",
        }
    }
}

/// A compiled function.
pub struct Function {
    /// "PL/pgSQL function f(integer)" / "PL/pgSQL function inline_code_block".
    pub context_name: String,
    pub vars: Vec<Var>,
    pub scopes: Vec<Scope>,
    /// The slots of the input parameters ($1, $2, ...), in order.
    pub in_params: Vec<usize>,
    /// The slots of OUT/INOUT parameters, in order.
    pub out_params: Vec<usize>,
    pub found_var: usize,
    pub body: Block,
    pub conflict: tusk_sql::procedural::VariableConflict,
    pub ret_type: SqlType,
    pub retset: bool,
    pub is_procedure: bool,
    pub is_trigger: bool,
    pub new_var: Option<usize>,
    pub old_var: Option<usize>,
    /// TG_NAME .. TG_ARGV, in the order exec fills them.
    pub tg_vars: Vec<usize>,
    pub print_strict_params: bool,
}
