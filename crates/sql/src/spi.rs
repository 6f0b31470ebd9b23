//! The SPI over a session (PostgreSQL's spi.c): how procedural code and
//! SQL-language functions run statements inside the caller's transaction.
//!
//! A statement is prepared once (parsed, analyzed with the caller's
//! variables as parameters, planned) and run many times. Plans are made
//! again when the catalog changed since (DDL in between), from a record of
//! how the variables resolved, so the procedural code need not be asked
//! again. Statements run to completion (their rows are collected), so no
//! query is left half-run while the procedural code goes on.
//!
//! Utility statements (DDL) need the session exclusively: procedural code
//! run by a DO block or a CALL at the top of a statement has it; code
//! called from inside a query (a function in a SELECT) does not, and gets
//! 0A000 for DDL (see `Access`).

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use tusk_types::{oid, sqlstate, Datum, Oid, PgError, PgResult, SqlType};

use crate::catalog::DbCatalog;
use crate::executor::{self, ExecCx, StmtState};
use crate::expr::Expr;
use crate::parser::{self, ParsedStatement};
use crate::plan::{ModifyKind, Plan, PlannedQuery};
use crate::procedural::{FetchDirection, NamedTuplestore, ParamSource, ResolvedName, Spi, SpiPlan, SpiResult, VariableConflict};
use crate::session::{is_stale_plan, SessionEnv, SqlSession};

/// How the SPI reaches the session.
enum Access<'a> {
    /// From inside a running query: statements may read and write rows.
    Shared(&'a SqlSession),
    /// From a DO block or CALL, which the protocol layer runs with the
    /// session to itself: utility statements and transaction control too.
    /// A pointer, not a `&mut`, because shared borrows are handed out for
    /// queries between the exclusive uses; each use borrows only for the
    /// duration of one SPI call, and the caller's `&mut` outlives `'a`.
    Exclusive(*mut SqlSession, PhantomData<&'a mut SqlSession>),
}

pub struct SessionSpi<'a> {
    access: Access<'a>,
    /// A procedure called non-atomically: COMMIT and ROLLBACK allowed.
    nonatomic: bool,
    /// The named tuplestores its statements may read (a trigger's
    /// transition tables: PostgreSQL's SPI_register_trigger_data).
    query_env: Option<Rc<Vec<NamedTuplestore>>>,
}

/// A prepared statement: its parse tree and text, how its variables
/// resolved, and its current plan (queries only).
struct Prepared {
    stmt: ParsedStatement,
    sql: String,
    names: Recorded,
    /// The named tuplestores the plan was made for, by the names the
    /// statement looked up (None: not one): one function may fire for
    /// tables of different shapes, so a change means planning again.
    named: RefCell<HashMap<String, Option<Vec<(String, SqlType)>>>>,
    plan: RefCell<Option<Arc<PlannedQuery>>>,
    /// The plan's one expression when it is a simple expression (see
    /// `SimpleExpr`), kept with the catalog it was planned against.
    simple: RefCell<Option<Rc<SimpleExpr>>>,
}

/// A statement that is one expression over no table (PL/pgSQL's "simple
/// expressions": `i + 1`, `x > 0`, `now()`), evaluated straight from its
/// expression tree, without executor nodes or a query run: what
/// PostgreSQL's exec_eval_simple_expr does. Valid while the session's
/// catalog token is the one it was made under.
struct SimpleExpr {
    /// None: the statement is not a simple expression.
    expr: Option<executor::fast::FastExpr>,
    /// Whether it reads no parameter: PostgreSQL's planner folds such an
    /// expression, so its errors arise while the statement is prepared.
    constant: bool,
    ty: SqlType,
    token: (usize, u64),
    catalog: std::sync::Weak<DbCatalog>,
    /// The per-statement state the executor wants; a simple expression
    /// has no subplans, so nothing in it outlives an evaluation.
    state: StmtState,
}

/// The expression of a plan that computes one value from no table.
fn simple_expression(planned: &PlannedQuery) -> Option<&crate::expr::Expr> {
    // Nothing that reads a table: those take a snapshot and locks, and
    // check privileges, as a statement.
    if !planned.pre_modify.is_empty() || planned.has_modify || planned.row_lock || planned.subplans > 0 || !planned.relations.is_empty() || !planned.perms.is_empty() {
        return None;
    }
    match &planned.plan {
        Plan::Result { exprs, filter: None } if exprs.len() == 1 => Some(&exprs[0]),
        Plan::Project { input, exprs } if exprs.len() == 1 => match input.as_ref() {
            Plan::Result { exprs: none, filter: None } if none.is_empty() => Some(&exprs[0]),
            _ => None,
        },
        _ => None,
    }
}

/// A `ParamSource`'s answers, kept to plan the statement again.
#[derive(Default, Clone)]
struct Recorded {
    resolved: HashMap<Vec<String>, Option<(ResolvedName, usize)>>,
    param_types: HashMap<usize, Option<SqlType>>,
    fields: HashMap<usize, Option<Vec<(String, SqlType)>>>,
    named: HashMap<String, Option<Vec<(String, SqlType)>>>,
    conflict: VariableConflict,
}

/// Records a `ParamSource`'s answers while passing them on.
struct Recorder<'a> {
    inner: &'a dyn ParamSource,
    /// The SPI's query environment: its named tuplestores resolve here,
    /// whatever the language's own names are.
    query_env: Option<&'a [NamedTuplestore]>,
    record: RefCell<Recorded>,
}

impl ParamSource for Recorder<'_> {
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)> {
        let r = self.inner.resolve(names);
        self.record.borrow_mut().resolved.insert(names.iter().map(|s| s.to_string()).collect(), r.clone());
        r
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        let r = self.inner.param_type(n);
        self.record.borrow_mut().param_types.insert(n, r);
        r
    }
    fn param_fields(&self, index: usize) -> Option<Vec<(String, SqlType)>> {
        let r = self.inner.param_fields(index);
        self.record.borrow_mut().fields.insert(index, r.clone());
        r
    }
    fn conflict(&self) -> VariableConflict {
        self.inner.conflict()
    }
    fn named_relation(&self, name: &str) -> Option<Vec<(String, SqlType)>> {
        let r = self.query_env.and_then(|env| env.iter().find(|t| t.name == name)).map(|t| t.columns.clone());
        self.record.borrow_mut().named.insert(name.to_string(), r.clone());
        r
    }
}

impl ParamSource for Recorded {
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)> {
        let key: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        self.resolved.get(&key).cloned().flatten()
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        self.param_types.get(&n).copied().flatten()
    }
    fn param_fields(&self, index: usize) -> Option<Vec<(String, SqlType)>> {
        self.fields.get(&index).cloned().flatten()
    }
    fn conflict(&self) -> VariableConflict {
        self.conflict
    }
    fn named_relation(&self, name: &str) -> Option<Vec<(String, SqlType)>> {
        self.named.get(name).cloned().flatten()
    }
}

/// A statement's recorded variables with the named tuplestores of the
/// query environment it runs in now.
struct EnvNames<'a> {
    recorded: &'a Recorded,
    env: &'a [NamedTuplestore],
    named: RefCell<HashMap<String, Option<Vec<(String, SqlType)>>>>,
}

impl ParamSource for EnvNames<'_> {
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)> {
        self.recorded.resolve(names)
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        self.recorded.param_type(n)
    }
    fn param_fields(&self, index: usize) -> Option<Vec<(String, SqlType)>> {
        self.recorded.param_fields(index)
    }
    fn conflict(&self) -> VariableConflict {
        self.recorded.conflict()
    }
    fn named_relation(&self, name: &str) -> Option<Vec<(String, SqlType)>> {
        let r = self.env.iter().find(|t| t.name == name).map(|t| t.columns.clone());
        self.named.borrow_mut().insert(name.to_string(), r.clone());
        r
    }
}

/// `$n` of the given types, for dynamic statements (EXECUTE ... USING).
struct Positional<'a>(&'a [SqlType]);

impl ParamSource for Positional<'_> {
    fn resolve(&self, _names: &[&str]) -> Option<(ResolvedName, usize)> {
        None
    }
    fn param_type(&self, n: usize) -> Option<SqlType> {
        n.checked_sub(1).and_then(|i| self.0.get(i)).copied()
    }
}

fn command_of(node: &pg_query::NodeEnum) -> String {
    use pg_query::NodeEnum;
    match node {
        NodeEnum::SelectStmt(_) => "SELECT".into(),
        NodeEnum::InsertStmt(_) => "INSERT".into(),
        NodeEnum::UpdateStmt(_) => "UPDATE".into(),
        NodeEnum::DeleteStmt(_) => "DELETE".into(),
        NodeEnum::MergeStmt(_) => "MERGE".into(),
        other => crate::commands::command_tag(other),
    }
}

fn tag_for(planned: &PlannedQuery, rows: u64, modified: u64) -> String {
    match &planned.plan {
        Plan::Modify { kind: ModifyKind::Insert, .. } => format!("INSERT 0 {modified}"),
        Plan::Modify { kind: ModifyKind::Update, .. } => format!("UPDATE {modified}"),
        Plan::Modify { kind: ModifyKind::Delete, .. } => format!("DELETE {modified}"),
        _ => format!("SELECT {rows}"),
    }
}

impl<'a> SessionSpi<'a> {
    /// A value of a domain's base type checked against the domain's
    /// constraints (exec_cast_value's domain step for PL variables).
    fn check_domain(&self, value: Datum, base: SqlType, domain: SqlType) -> PgResult<Datum> {
        let s = self.session();
        let catalog = s.catalog()?;
        let settings = s.settings.borrow().clone();
        let check = {
            let mut a = s.analyzer(&catalog, &settings, &[], "");
            a.coerce_to_domain(Expr::Const(value, base), domain)?
        };
        s.with_exec(&catalog, |cx| crate::executor::eval(&check, &[], cx))
    }

    /// For code called from inside a query.
    pub fn shared(s: &'a SqlSession) -> SessionSpi<'a> {
        SessionSpi { access: Access::Shared(s), nonatomic: false, query_env: None }
    }

    /// For a trigger function, whose statements read its transition tables.
    pub fn with_query_env(mut self, env: Vec<NamedTuplestore>) -> SessionSpi<'a> {
        self.query_env = (!env.is_empty()).then(|| Rc::new(env));
        self
    }

    /// For a DO block or a CALL run by the protocol layer.
    pub fn exclusive(s: &'a mut SqlSession, nonatomic: bool) -> SessionSpi<'a> {
        SessionSpi { access: Access::Exclusive(s as *mut SqlSession, PhantomData), nonatomic, query_env: None }
    }

    pub fn session(&self) -> &SqlSession {
        match &self.access {
            Access::Shared(s) => s,
            // SAFETY: see `Access::Exclusive`.
            Access::Exclusive(p, _) => unsafe { &**p },
        }
    }

    #[allow(clippy::mut_from_ref)]
    fn session_mut(&self, what: &str) -> PgResult<&mut SqlSession> {
        match &self.access {
            Access::Shared(_) => Err(PgError::unsupported(format!("{what} in a function called from a query"))),
            // SAFETY: see `Access::Exclusive`; no shared borrow handed out
            // by `session` lives across SPI calls.
            Access::Exclusive(p, _) => Ok(unsafe { &mut **p }),
        }
    }

    fn prepared<'p>(&self, plan: &'p SpiPlan) -> PgResult<&'p Prepared> {
        plan.inner.downcast_ref::<Prepared>().ok_or_else(|| PgError::internal("not an SPI plan of this engine"))
    }

    /// Prepares one statement of text, resolving names through `params`.
    fn prepare_with(&self, sql: &str, params: &dyn ParamSource) -> PgResult<SpiPlan> {
        let s = self.session();
        let settings_scs = s.settings.borrow().standard_conforming_strings;
        let mut stmts = parser::parse_with(sql, settings_scs)?;
        if stmts.len() != 1 {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                if stmts.is_empty() { "empty query does not return data".to_string() } else { "cannot insert multiple commands into a prepared statement".to_string() },
            ));
        }
        let stmt = stmts.pop().expect("one statement");
        let command = command_of(&stmt.node);
        let recorder = Recorder { inner: params, query_env: self.query_env.as_deref().map(Vec::as_slice), record: RefCell::new(Recorded { conflict: params.conflict(), ..Default::default() }) };
        let mut call_outputs = Vec::new();
        let (plan, columns, returns_rows) = if let pg_query::NodeEnum::CallStmt(c) = &stmt.node {
            // Analyzed now for its errors and its output parameters'
            // targets; again at each run, as the procedure may change.
            let call = crate::commands::function::analyze_call(s, c, sql, Some(&recorder))?;
            call_outputs = call.output_targets.clone();
            (None, call.outputs.iter().map(|c| (c.name.clone(), c.ty)).collect(), false)
        } else if crate::commands::is_utility(&stmt.node) {
            (None, Vec::new(), false)
        } else {
            let (planned, _) = s.plan_query_with(&stmt, sql, &[], Some(&recorder))?;
            let columns: Vec<(String, SqlType)> = planned.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
            let returns_rows = !columns.is_empty();
            (Some(planned), columns, returns_rows)
        };
        let names = recorder.record.into_inner();
        let named = RefCell::new(names.named.clone());
        let prepared = Prepared { stmt, sql: sql.to_string(), names, named, plan: RefCell::new(plan), simple: RefCell::new(None) };
        Ok(SpiPlan { inner: Rc::new(prepared), columns, command, returns_rows, call_outputs })
    }

    /// The statement's plan, made again if the catalog changed since.
    fn current_plan(&self, p: &Prepared) -> PgResult<Arc<PlannedQuery>> {
        let s = self.session();
        let now = s.catalog()?;
        let env = self.query_env.as_deref().map(Vec::as_slice).unwrap_or(&[]);
        let env_columns = |name: &str| env.iter().find(|t| t.name == name).map(|t| t.columns.clone());
        let same_env = p.named.borrow().iter().all(|(name, cols)| env_columns(name) == *cols);
        if let Some(planned) = p.plan.borrow().as_ref() {
            if same_env && planned.catalog.upgrade().is_some_and(|c| Arc::ptr_eq(&c, &now)) {
                return Ok(planned.clone());
            }
        }
        let source = EnvNames { recorded: &p.names, env, named: RefCell::new(HashMap::new()) };
        let (planned, _) = s.plan_query_with(&p.stmt, &p.sql, &[], Some(&source))?;
        *p.named.borrow_mut() = source.named.into_inner();
        *p.plan.borrow_mut() = Some(planned.clone());
        Ok(planned)
    }

    fn run(&self, p: &Prepared, args: &[Datum], max_rows: usize) -> PgResult<SpiResult> {
        // The statement (and only it, not the functions it calls, which
        // run their statements through SPIs of their own) sees this SPI's
        // named tuplestores.
        let s = self.session();
        s.query_envs.borrow_mut().push(self.query_env.clone());
        let r = self.run_in_env(p, args, max_rows);
        s.query_envs.borrow_mut().pop();
        r
    }

    fn run_in_env(&self, p: &Prepared, args: &[Datum], max_rows: usize) -> PgResult<SpiResult> {
        if let pg_query::NodeEnum::CallStmt(c) = &p.stmt.node {
            let s = self.session_mut("CALL")?;
            let call = crate::commands::function::analyze_call(s, c, &p.sql, Some(&p.names))?;
            let r = crate::commands::function::run_call(s, &call, args)?;
            let (columns, rows) = match r.rows {
                Some((cols, rows)) => (cols.iter().map(|c| (c.name.clone(), c.ty)).collect(), rows),
                None => (Vec::new(), Vec::new()),
            };
            return Ok(SpiResult { processed: 0, columns, rows, tag: r.tag });
        }
        if crate::commands::is_utility(&p.stmt.node) {
            return self.run_utility(&p.stmt, &p.sql);
        }
        let s = self.session();
        let mut planned = self.current_plan(p)?;
        let mut attempts = 0;
        let mut run = loop {
            match s.start_query(planned.clone(), args.to_vec()) {
                Err(e) if is_stale_plan(&e) && attempts < 5 => {
                    attempts += 1;
                    *p.plan.borrow_mut() = None;
                    planned = self.current_plan(p)?;
                }
                r => break r?,
            }
        };
        let mut rows = Vec::new();
        // DML runs to its end whatever is asked for.
        let limit = if planned.has_modify { 0 } else { max_rows };
        run.fetch(s, limit, &mut |r| {
            rows.push(r);
            Ok(())
        })?;
        let modified = run.rows_modified();
        let processed = if planned.has_modify { modified } else { rows.len() as u64 };
        Ok(SpiResult {
            columns: planned.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            tag: tag_for(&planned, rows.len() as u64, modified),
            rows,
            processed,
        })
    }

    fn run_utility(&self, stmt: &ParsedStatement, sql: &str) -> PgResult<SpiResult> {
        use pg_query::NodeEnum;
        if let NodeEnum::TransactionStmt(_) = &stmt.node {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "transaction control statements are not allowed here"));
        }
        let r = match &stmt.node {
            // EXPLAIN only reads: it runs with shared access too (a
            // function called from a query may inspect plans).
            NodeEnum::ExplainStmt(e) => crate::commands::explain::explain(self.session(), e, sql)?,
            _ => {
                let what = crate::commands::command_tag(&stmt.node);
                let s = self.session_mut(&what)?;
                crate::commands::execute_utility(s, stmt, sql)?
            }
        };
        let (columns, rows) = match r.rows {
            Some((cols, rows)) => (cols.iter().map(|c| (c.name.clone(), c.ty)).collect(), rows),
            None => (Vec::new(), Vec::new()),
        };
        Ok(SpiResult { processed: rows.len() as u64, columns, rows, tag: r.tag })
    }

    /// Evaluates a simple expression (see `SimpleExpr`); None when the
    /// statement is not one.
    fn eval_simple(&self, p: &Prepared, args: &[Datum]) -> Option<PgResult<(Datum, SqlType)>> {
        let s = self.session();
        let token = s.catalog_token();
        let cached = p.simple.borrow().as_ref().filter(|x| x.token == token).cloned();
        // (held as an Rc: the evaluation may recurse into this statement)
        let simple = match cached {
            Some(x) => x,
            None => {
                // (re)made from the current plan; the token read before it
                // never describes a newer catalog than the plan's
                let planned = match self.current_plan(p) {
                    Ok(x) => x,
                    Err(e) => return Some(Err(e)),
                };
                let tree = simple_expression(&planned);
                let constant = tree.is_some_and(|e| !e.any(&mut |x| matches!(x, crate::expr::Expr::Param(..))));
                let expr = tree.map(executor::fast::FastExpr::compile);
                let ty = planned.columns.first().map(|c| c.ty).unwrap_or(SqlType::new(oid::UNKNOWN));
                let x = Rc::new(SimpleExpr { expr, constant, ty, token, catalog: planned.catalog.clone(), state: StmtState::default() });
                *p.simple.borrow_mut() = Some(x.clone());
                x
            }
        };
        let expr = simple.expr.as_ref()?;
        // Alive: the token says it is still the current catalog.
        let catalog = simple.catalog.upgrade()?;
        Some((|| {
            let env = SessionEnv { s, catalog: &catalog };
            let cx = ExecCx {
                txn: s.txn()?,
                env: &env,
                catalog: &catalog,
                params: args,
                outer: &[],
                state: &simple.state,
                work_mem_bytes: s.settings.borrow().work_mem_kb as usize * 1024,
            };
            let v = expr.eval(&cx)?;
            Ok((v, simple.ty))
        })())
    }

    fn type_name_of(&self, ty: SqlType) -> String {
        crate::analyzer::types::format_type(crate::catalog::builtins(), ty.oid, ty.typmod)
    }

    fn lookup_relation(&self, parts: &[&str]) -> PgResult<Arc<crate::catalog::Relation>> {
        let s = self.session();
        let name = parts.iter().map(|p| crate::functions::quote_ident(p)).collect::<Vec<_>>().join(".");
        let env_catalog = s.catalog()?;
        let env = SessionEnv { s, catalog: &env_catalog };
        let oid = crate::functions::Env::lookup_relation_oid(&env, &name)?;
        env_catalog.relation(oid).cloned().ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))
    }
}

impl Spi for SessionSpi<'_> {
    fn prepare(&self, sql: &str, params: &dyn ParamSource) -> PgResult<SpiPlan> {
        self.prepare_with(sql, params)
    }

    fn execute(&self, plan: &SpiPlan, args: &[Datum], max_rows: usize) -> PgResult<SpiResult> {
        let p = self.prepared(plan)?;
        self.run(p, args, max_rows)
    }

    fn eval(&self, plan: &SpiPlan, args: &[Datum]) -> PgResult<(Datum, SqlType)> {
        let p = self.prepared(plan)?;
        if !crate::commands::is_utility(&p.stmt.node) {
            if let Some(r) = self.eval_simple(p, args) {
                return r;
            }
        }
        let r = self.run(p, args, 2)?;
        if r.columns.len() != 1 {
            return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("query returned {} columns", r.columns.len())));
        }
        if r.rows.len() > 1 {
            return Err(PgError::new(sqlstate::CARDINALITY_VIOLATION, "query returned more than one row"));
        }
        let ty = r.columns[0].1;
        Ok((r.rows.into_iter().next().and_then(|row| row.into_iter().next()).unwrap_or(Datum::Null), ty))
    }

    fn is_simple_expr(&self, plan: &SpiPlan) -> bool {
        // A constant expression's errors count as the statement's: they
        // are raised where PostgreSQL's planner folds it.
        self.prepared(plan).is_ok_and(|p| p.simple.borrow().as_ref().is_some_and(|x| x.expr.is_some() && !x.constant))
    }

    fn execute_dynamic(&self, sql: &str, args: &[(Datum, SqlType)], max_rows: usize) -> PgResult<SpiResult> {
        let types: Vec<SqlType> = args.iter().map(|(_, t)| *t).collect();
        let values: Vec<Datum> = args.iter().map(|(d, _)| d.clone()).collect();
        let plan = self.prepare_with(sql, &Positional(&types))?;
        self.execute(&plan, &values, max_rows)
    }

    fn cursor_open(&self, name: Option<&str>, plan: &SpiPlan, args: &[Datum], scroll: bool) -> PgResult<String> {
        let p = self.prepared(plan)?;
        if crate::commands::is_utility(&p.stmt.node) || !plan.returns_rows {
            return Err(PgError::new(sqlstate::INVALID_CURSOR_DEFINITION, format!("cannot open {} query as cursor", plan.command)));
        }
        let r = self.run(p, args, 0)?;
        crate::commands::cursor::open_materialized(self.session(), name, &p.sql, &r.columns, r.rows, scroll)
    }

    fn cursor_open_dynamic(&self, name: Option<&str>, sql: &str, args: &[(Datum, SqlType)], scroll: bool) -> PgResult<String> {
        let types: Vec<SqlType> = args.iter().map(|(_, t)| *t).collect();
        let values: Vec<Datum> = args.iter().map(|(d, _)| d.clone()).collect();
        let plan = self.prepare_with(sql, &Positional(&types))?;
        self.cursor_open(name, &plan, &values, scroll)
    }

    fn cursor_fetch(&self, name: &str, direction: FetchDirection, fetch: bool) -> PgResult<SpiResult> {
        crate::commands::cursor::fetch_materialized(self.session(), name, direction, fetch)
    }

    fn cursor_close(&self, name: &str) -> PgResult<()> {
        crate::commands::cursor::close_by_name(self.session(), name)
    }

    fn begin_subtransaction(&self) -> PgResult<()> {
        self.session().savepoint()
    }

    fn release_subtransaction(&self) -> PgResult<()> {
        self.session().release_savepoint()
    }

    fn rollback_subtransaction(&self) -> PgResult<()> {
        self.session().rollback_to_savepoint()
    }

    fn commit(&self, chain: bool) -> PgResult<()> {
        if !self.nonatomic {
            return Err(PgError::new(sqlstate::INVALID_TRANSACTION_TERMINATION, "invalid transaction termination"));
        }
        let s = self.session_mut("COMMIT")?;
        let isolation = s.isolation();
        s.commit()?;
        s.begin(if chain { isolation } else { None });
        Ok(())
    }

    fn rollback(&self, chain: bool) -> PgResult<()> {
        if !self.nonatomic {
            return Err(PgError::new(sqlstate::INVALID_TRANSACTION_TERMINATION, "invalid transaction termination"));
        }
        let s = self.session_mut("ROLLBACK")?;
        let isolation = s.isolation();
        s.rollback();
        s.begin(if chain { isolation } else { None });
        Ok(())
    }

    fn coerce(&self, value: Datum, from: SqlType, to: SqlType) -> PgResult<Datum> {
        if from.oid == to.oid && (to.typmod < 0 || from.typmod == to.typmod) {
            return Ok(value);
        }
        // Into a domain: its base type's value, then its constraints.
        if from.oid != to.oid && crate::catalog::types::domain(to.oid).is_some() {
            let base = crate::catalog::types::base_type(to);
            let v = self.coerce(value, from, base)?;
            return self.check_domain(v, base, to);
        }
        if value.is_null() {
            return Ok(value);
        }
        let s = self.session();
        let catalog = s.catalog()?;
        let env = SessionEnv { s, catalog: &catalog };
        let b = crate::catalog::builtins();
        use crate::analyzer::coerce::{can_coerce, CoercionContext};
        if from.oid == to.oid || from.oid == oid::UNKNOWN || can_coerce(b, from.oid, to.oid, CoercionContext::Assignment) {
            return crate::functions::cast::cast_datum_env(value, from, to, false, &env);
        }
        // No assignment cast: through the types' text forms, as
        // PL/pgSQL's exec_cast_value falls back to I/O conversion.
        let text = self.output(&value, from)?;
        self.input(&text, to)
    }

    fn output(&self, value: &Datum, ty: SqlType) -> PgResult<String> {
        let s = self.session();
        Ok(crate::functions::io::format_text(value, ty.oid, &s.settings.borrow()))
    }

    fn input(&self, text: &str, ty: SqlType) -> PgResult<Datum> {
        let s = self.session();
        let catalog = s.catalog()?;
        let env = SessionEnv { s, catalog: &catalog };
        crate::functions::cast::cast_datum_env(Datum::text(text), SqlType::new(oid::TEXT), ty, false, &env)
    }

    fn parse_type(&self, name: &str) -> PgResult<SqlType> {
        let sql = format!("SELECT NULL::{name}");
        let stmts = parser::parse(&sql).map_err(|_| PgError::new(sqlstate::SYNTAX_ERROR, format!("syntax error at or near \"{name}\"")))?;
        let [stmt] = stmts.as_slice() else { return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("invalid type name \"{name}\""))) };
        let (planned, _) = self.session().plan_query(stmt, &sql, &[]).map_err(|mut e| {
            e.position = None;
            e
        })?;
        planned.columns.first().map(|c| c.ty).ok_or_else(|| PgError::internal("type probe without a column"))
    }

    fn column_type(&self, qualified_relation: &[&str], column: &str) -> PgResult<SqlType> {
        let rel = self.lookup_relation(qualified_relation)?;
        rel.columns.iter().find(|c| !c.dropped && c.name == column).map(|c| c.sql_type()).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" of relation \"{}\" does not exist", column, rel.name))
        })
    }

    fn composite_fields(&self, ty: SqlType) -> Option<Vec<(String, SqlType)>> {
        let catalog = self.session().catalog().ok()?;
        catalog.user_types.composite_fields(ty.oid).map(|f| f.to_vec())
    }

    fn relation_row_type(&self, qualified_relation: &[&str]) -> PgResult<(SqlType, Vec<(String, SqlType)>)> {
        let rel = self.lookup_relation(qualified_relation)?;
        let ty = if rel.row_type != 0 { rel.row_type } else { oid::RECORD };
        Ok((SqlType::new(ty), rel.columns.iter().filter(|c| !c.dropped).map(|c| (c.name.clone(), c.sql_type())).collect()))
    }

    fn type_name(&self, ty: SqlType) -> String {
        self.type_name_of(ty)
    }

    fn notice(&self, notice: PgError) {
        self.session().notices.borrow_mut().push(notice);
    }

    fn setting(&self, name: &str) -> Option<String> {
        self.session().settings.borrow().show(name).ok()
    }

    fn check_interrupts(&self) -> PgResult<()> {
        self.session().interrupt.check()
    }

    fn language_cache(&self) -> &RefCell<HashMap<(Oid, u64), Rc<dyn Any>>> {
        &self.session().language_cache
    }
}

/// The catalog a session's SPI sees now (for callers outside this module).
pub fn catalog_of(spi: &SessionSpi) -> PgResult<Arc<DbCatalog>> {
    spi.session().catalog()
}
