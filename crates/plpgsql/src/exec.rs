//! The PL/pgSQL interpreter (pl_exec.c): one `Exec` per call holds the
//! variables' values in a Vec indexed by slot — the same index the
//! queries use as parameter number, so a statement's arguments are that
//! Vec as is — and walks the statement tree. Queries run through the SPI
//! with plans cached in the compiled function.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use tusk_sql::procedural::{CallArgs, FetchDirection, ParamSource, ResolvedName, Spi, SpiResult, VariableConflict};
use tusk_types::array::Array;
use tusk_types::Severity;
use tusk_types::{oid, sqlstate, Datum, PgError, PgResult, SqlType};

use crate::ast::*;
use crate::conditions;
use crate::parser::lookup_names;

type Shape = Rc<Vec<(String, SqlType)>>;

/// SQLSTATEs of PL/pgSQL's own errors (class P0 and the statement-level ones).
mod plcodes {
    pub const S_R_E_FUNCTION_EXECUTED_NO_RETURN_STATEMENT: &str = "2F005";
    pub const CASE_NOT_FOUND: &str = "20000";
    pub const ASSERT_FAILURE: &str = "P0004";
    pub const NO_DATA_FOUND: &str = "P0002";
    pub const TOO_MANY_ROWS: &str = "P0003";
    pub const STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER: &str = "0Z002";
    pub const ERROR_IN_ASSIGNMENT: &str = "22005";
}

/// How control leaves a statement.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

pub struct Exec<'a> {
    pub f: &'a Function,
    spi: &'a dyn Spi,
    pub vals: Vec<Datum>,
    /// Types as of now: declared ones, or the actual ones of polymorphic
    /// parameters and of the hidden CASE variables.
    types: Vec<SqlType>,
    shapes: Vec<Option<Shape>>,
    err_stmt: Option<&'a Stmt>,
    processed: u64,
    pub retval: Option<(Datum, SqlType)>,
    pub set_rows: Vec<Datum>,
    /// The errors being handled, innermost last (GET STACKED DIAGNOSTICS, re-RAISE).
    handling: Vec<PgError>,
    nonatomic: bool,
    ret_columns: Option<Vec<(String, SqlType)>>,
    ret_type: SqlType,
    /// This call's profile counts, when the profiler is on (see `profile`).
    pub profile: Option<crate::profile::CallProfile>,
}

fn is_pseudo(t: Oid) -> bool {
    matches!(t, oid::UNKNOWN | oid::RECORD | oid::ANY) || tusk_sql::analyzer::coerce::is_polymorphic(t)
}
use tusk_types::Oid;

pub fn add_context(mut e: PgError, line: impl Into<String>) -> PgError {
    let line = line.into();
    e.context = Some(match e.context.take() {
        Some(c) if !c.is_empty() => format!("{c}\n{line}"),
        _ => line,
    });
    e
}

/// The variables a query of the body sees, as PL/pgSQL's parser hooks
/// resolve them; records which record shapes and dynamic types the plan
/// depends on.
struct Resolver<'b> {
    f: &'b Function,
    ns: NsRef,
    types: &'b [SqlType],
    shapes: &'b [Option<Shape>],
    deps: RefCell<Vec<usize>>,
    /// Every variable the statement refers to, for print_strict_params.
    used: RefCell<Vec<usize>>,
    err: RefCell<Option<PgError>>,
}

impl Resolver<'_> {
    fn note(&self, slot: usize) {
        self.used.borrow_mut().push(slot);
        if is_pseudo(self.f.vars[slot].ty.oid) || matches!(self.f.vars[slot].kind, VarKind::Record) {
            let mut d = self.deps.borrow_mut();
            if !d.contains(&slot) {
                d.push(slot);
            }
        }
    }
}

impl ParamSource for Resolver<'_> {
    fn resolve(&self, names: &[&str]) -> Option<(ResolvedName, usize)> {
        let (slot, used) = lookup_names(&self.f.scopes, self.ns, names)?;
        let var = &self.f.vars[slot];
        self.note(slot);
        if matches!(var.kind, VarKind::Record) && used < names.len() {
            let Some(shape) = &self.shapes[slot] else {
                *self.err.borrow_mut() = Some(
                    PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("record \"{}\" is not assigned yet", var.name))
                        .with_detail("The tuple structure of a not-yet-assigned record is indeterminate."),
                );
                return None;
            };
            let field = names[used];
            return match shape.iter().position(|(n, _)| n == field) {
                Some(i) => Some((ResolvedName::Field { index: slot, record_ty: self.types[slot], field: i, ty: shape[i].1 }, used + 1)),
                None => {
                    *self.err.borrow_mut() =
                        Some(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("record \"{}\" has no field \"{}\"", var.name, field)));
                    None
                }
            };
        }
        Some((ResolvedName::Param { index: slot, ty: self.types[slot] }, used))
    }

    fn param_type(&self, n: usize) -> Option<SqlType> {
        let slot = *self.f.in_params.get(n.checked_sub(1)?)?;
        self.note(slot);
        Some(self.types[slot])
    }

    fn param_fields(&self, index: usize) -> Option<Vec<(String, SqlType)>> {
        self.shapes.get(index)?.as_ref().map(|s| s.as_ref().clone())
    }

    fn conflict(&self) -> VariableConflict {
        self.f.conflict
    }
}

fn null_target_error(name: &str) -> PgError {
    PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("null value cannot be assigned to variable \"{name}\" declared NOT NULL"))
}

/// The type of a value whose type nobody told us (fields of anonymous rows):
/// the one record output guesses, NULL read as text and json kept as json.
fn datum_type(d: &Datum) -> SqlType {
    SqlType::new(match d {
        Datum::Null => oid::TEXT,
        Datum::Json(_) => oid::JSON,
        Datum::Jsonb(_) => oid::JSONB,
        other => tusk_sql::functions::io::guess_type(other),
    })
}

impl<'a> Exec<'a> {
    pub fn new(f: &'a Function, spi: &'a dyn Spi, call: Option<&CallArgs>) -> Exec<'a> {
        let n = f.vars.len();
        let mut e = Exec {
            f,
            spi,
            vals: vec![Datum::Null; n],
            types: f.vars.iter().map(|v| v.ty).collect(),
            shapes: f.vars.iter().map(|v| v.fields.clone()).collect(),
            err_stmt: None,
            processed: 0,
            retval: None,
            set_rows: Vec::new(),
            handling: Vec::new(),
            nonatomic: call.is_some_and(|c| c.nonatomic),
            // A named composite result type has its fields as the columns.
            ret_columns: call
                .and_then(|c| c.ret_columns.map(|r| r.to_vec()))
                .or_else(|| spi.composite_fields(call.map(|c| c.ret_type).unwrap_or(f.ret_type))),
            ret_type: call.map(|c| c.ret_type).unwrap_or(f.ret_type),
            profile: None,
        };
        e.vals[f.found_var] = Datum::Bool(false);
        e
    }

    /// Binds the call's arguments to the parameter variables.
    pub fn bind_args(&mut self, call: &CallArgs) -> PgResult<()> {
        for (i, slot) in self.f.in_params.iter().enumerate() {
            let ty = call.arg_types.get(i).copied().unwrap_or(self.f.vars[*slot].ty);
            let v = call.args.get(i).cloned().unwrap_or(Datum::Null);
            if is_pseudo(self.f.vars[*slot].ty.oid) {
                self.types[*slot] = ty;
            }
            if matches!(self.f.vars[*slot].kind, VarKind::Record) {
                if let Some(fields) = self.spi.composite_fields(ty) {
                    self.shapes[*slot] = Some(Rc::new(fields));
                } else if let Datum::Record(r) = &v {
                    self.shapes[*slot] = Some(Rc::new(r.iter().enumerate().map(|(i, d)| (format!("f{}", i + 1), datum_type(d))).collect()));
                }
            }
            self.vals[*slot] = v;
        }
        // OUT parameters of polymorphic type take the resolved result type
        if self.f.out_params.len() == 1 {
            let s = self.f.out_params[0];
            if is_pseudo(self.f.vars[s].ty.oid) && !self.f.in_params.contains(&s) {
                self.types[s] = call.ret_type;
            }
        } else if let Some(cols) = call.ret_columns {
            for (k, s) in self.f.out_params.iter().enumerate() {
                if is_pseudo(self.f.vars[*s].ty.oid) && !self.f.in_params.contains(s) {
                    if let Some(c) = cols.get(k) {
                        self.types[*s] = c.1;
                    }
                }
            }
        }
        if let Some(t) = call.trigger {
            let (shape, tg_values) = crate::trigger_values::of(t);
            if let Some(nv) = self.f.new_var {
                self.shapes[nv] = Some(shape.clone());
                if let Some(row) = &t.new {
                    self.vals[nv] = Datum::Record(Arc::new(row.clone()));
                }
            }
            if let Some(ov) = self.f.old_var {
                self.shapes[ov] = Some(shape);
                if let Some(row) = &t.old {
                    self.vals[ov] = Datum::Record(Arc::new(row.clone()));
                }
            }
            for (slot, v) in self.f.tg_vars.iter().zip(tg_values) {
                self.vals[*slot] = v;
            }
        }
        Ok(())
    }

    /// Runs the body; the error, if any, carries this function's CONTEXT line.
    pub fn run(&mut self) -> PgResult<()> {
        let r = self.exec_block(None, &self.f.body);
        match r {
            Ok(Flow::Return) => Ok(()),
            Ok(Flow::Exit(Some(l))) | Ok(Flow::Continue(Some(l))) => Err(PgError::syntax(format!("label \"{l}\" not found"))),
            Ok(_) => {
                let falls_off_ok = self.f.ret_type.oid == oid::VOID || self.f.retset || !self.f.out_params.is_empty() || self.f.is_procedure;
                if falls_off_ok || self.f.context_name.ends_with("inline_code_block") {
                    Ok(())
                } else if self.f.is_trigger {
                    Err(self.with_line(PgError::new(plcodes::S_R_E_FUNCTION_EXECUTED_NO_RETURN_STATEMENT, "control reached end of trigger procedure without RETURN")))
                } else {
                    Err(self.with_line(PgError::new(plcodes::S_R_E_FUNCTION_EXECUTED_NO_RETURN_STATEMENT, "control reached end of function without RETURN")))
                }
            }
            Err(e) => Err(self.with_line(e)),
        }
    }

    /// The error with "PL/pgSQL function f() line N at STMT" appended.
    fn with_line(&self, e: PgError) -> PgError {
        let line = self.context_line();
        add_context(e, line)
    }

    fn context_line(&self) -> String {
        match self.err_stmt {
            Some(s) => format!("{} line {} at {}", self.f.context_name, s.lineno, s.kind.typename()),
            None => self.f.context_name.clone(),
        }
    }

    // ------------------------------------------------------------ plans and values

    fn plan(&self, e: &Expr) -> PgResult<Rc<CachedPlan>> {
        if let Some(p) = e.plan.borrow().as_ref() {
            if p.rec_deps.iter().all(|(slot, shape)| self.dep_ok(*slot, shape)) {
                return Ok(p.clone());
            }
        }
        let r = Resolver { f: self.f, ns: e.ns, types: &self.types, shapes: &self.shapes, deps: Default::default(), used: Default::default(), err: Default::default() };
        let sql = e.sql();
        let plan = match self.spi.prepare(&sql, &r) {
            Ok(p) => p,
            Err(err) => {
                let err = r.err.borrow_mut().take().unwrap_or(err);
                // Positions point into the statement, an internal query
                // (an expression is shown without the SELECT it runs as).
                let shift = if e.is_query { 0 } else { -("SELECT ".len() as i64) };
                return Err(err.into_internal_query(e.text.clone(), shift));
            }
        };
        let deps = r.deps.into_inner().into_iter().map(|s| (s, self.dep_value(s))).collect();
        let mut used_vars = r.used.into_inner();
        used_vars.sort_unstable();
        used_vars.dedup();
        let cached = Rc::new(CachedPlan { plan, rec_deps: deps, used_vars });
        *e.plan.borrow_mut() = Some(cached.clone());
        Ok(cached)
    }

    /// What a plan remembers of a variable: its record shape, or for a
    /// variable of dynamic type a one-field shape holding the type.
    fn dep_value(&self, slot: usize) -> Option<Shape> {
        if matches!(self.f.vars[slot].kind, VarKind::Record) {
            self.shapes[slot].clone()
        } else {
            Some(Rc::new(vec![(String::new(), self.types[slot])]))
        }
    }

    fn dep_ok(&self, slot: usize, was: &Option<Shape>) -> bool {
        if matches!(self.f.vars[slot].kind, VarKind::Record) {
            match (&self.shapes[slot], was) {
                (Some(a), Some(b)) => Rc::ptr_eq(a, b) || a == b,
                (None, None) => true,
                _ => false,
            }
        } else {
            was.as_ref().is_some_and(|w| w[0].1 == self.types[slot])
        }
    }

    fn eval_ctx(&mut self, e: &Expr, ctx: impl FnOnce() -> String) -> PgResult<(Datum, SqlType)> {
        let p = self.plan(e)?;
        self.spi.eval(&p.plan, &self.vals).map_err(|err| if self.spi.is_simple_expr(&p.plan) { err } else { add_context(err, ctx()) })
    }

    fn eval(&mut self, e: &Expr) -> PgResult<(Datum, SqlType)> {
        self.eval_ctx(e, || format!("SQL expression \"{}\"", e.text))
    }

    fn eval_bool(&mut self, e: &Expr) -> PgResult<bool> {
        let (v, t) = self.eval(e)?;
        if t.oid != oid::BOOL && !v.is_null() {
            let v = self.spi.coerce(v, t, SqlType::new(oid::BOOL))?;
            return Ok(v.as_bool().unwrap_or(false));
        }
        Ok(v.as_bool().unwrap_or(false))
    }

    fn eval_int(&mut self, e: &Expr) -> PgResult<Option<i64>> {
        let (v, t) = self.eval(e)?;
        let v = match v {
            Datum::Null => return Ok(None),
            Datum::Int4(i) => return Ok(Some(i as i64)),
            Datum::Int8(i) => return Ok(Some(i)),
            Datum::Int2(i) => return Ok(Some(i as i64)),
            v => self.spi.coerce(v, t, SqlType::new(oid::INT8))?,
        };
        Ok(match v {
            Datum::Int8(i) => Some(i),
            _ => None,
        })
    }

    fn eval_text(&mut self, e: &Expr) -> PgResult<Option<String>> {
        let (v, t) = self.eval(e)?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(Some(self.spi.output(&v, t)?))
    }

    fn coerce(&self, v: Datum, from: SqlType, to: SqlType) -> PgResult<Datum> {
        if v.is_null() || (from.oid == to.oid && (to.typmod == -1 || from.typmod == to.typmod)) || is_pseudo(to.oid) {
            return Ok(v);
        }
        self.spi.coerce(v, from, to)
    }

    fn set_found(&mut self, b: bool) {
        self.vals[self.f.found_var] = Datum::Bool(b);
    }

    // ------------------------------------------------------------ assignment

    fn assign_var(&mut self, slot: usize, v: Datum, ty: SqlType) -> PgResult<()> {
        let var = &self.f.vars[slot];
        if matches!(var.kind, VarKind::Record) {
            return self.assign_record_value(slot, v, ty);
        }
        let target = self.types[slot];
        let v = if target.oid == oid::UNKNOWN && is_pseudo(var.ty.oid) && !matches!(var.ty.oid, oid::RECORD) {
            self.types[slot] = ty;
            v
        } else {
            self.coerce(v, ty, target)?
        };
        if v.is_null() && var.not_null {
            return Err(null_target_error(&var.name));
        }
        self.vals[slot] = v;
        Ok(())
    }

    /// A whole value into a record variable.
    fn assign_record_value(&mut self, slot: usize, v: Datum, ty: SqlType) -> PgResult<()> {
        let var = &self.f.vars[slot];
        match v {
            Datum::Null => {
                if var.not_null {
                    return Err(null_target_error(&var.name));
                }
                if var.fields.is_none() && ty.oid != oid::RECORD {
                    if let Some(f) = self.spi.composite_fields(ty) {
                        self.set_shape(slot, f);
                    }
                }
                self.vals[slot] = Datum::Null;
                Ok(())
            }
            Datum::Record(row) => {
                let src_fields = if ty.oid != oid::RECORD { self.spi.composite_fields(ty) } else { None };
                let src_fields = src_fields.unwrap_or_else(|| row.iter().enumerate().map(|(i, d)| (format!("f{}", i + 1), datum_type(d))).collect());
                let row = row.as_ref().clone();
                self.assign_row_to_record(slot, row, &src_fields)
            }
            _ => Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "cannot assign non-composite value to a record variable")),
        }
    }

    fn set_shape(&mut self, slot: usize, fields: Vec<(String, SqlType)>) {
        if let Some(s) = &self.shapes[slot] {
            if **s == fields {
                return;
            }
        }
        self.shapes[slot] = Some(Rc::new(fields));
    }

    /// A row of a query (or a record value) into a record variable.
    fn assign_row_to_record(&mut self, slot: usize, row: Vec<Datum>, cols: &[(String, SqlType)]) -> PgResult<()> {
        let var = &self.f.vars[slot];
        if let Some(fields) = var.fields.clone() {
            // a declared row type: positional, converted to the field types
            let mut out = Vec::with_capacity(fields.len());
            let mut src = row.into_iter().zip(cols.iter());
            for (_, fty) in fields.iter() {
                if fty.oid == oid::UNKNOWN {
                    out.push(Datum::Null);
                    continue;
                }
                match src.next() {
                    Some((v, (_, t))) => out.push(self.coerce(v, *t, *fty)?),
                    None => out.push(Datum::Null),
                }
            }
            self.vals[slot] = Datum::Record(Arc::new(out));
        } else {
            self.set_shape(slot, cols.to_vec());
            self.vals[slot] = Datum::Record(Arc::new(row));
        }
        Ok(())
    }

    fn assign_field(&mut self, slot: usize, field: &str, v: Datum, ty: SqlType) -> PgResult<()> {
        let var = &self.f.vars[slot];
        let Some(shape) = self.shapes[slot].clone() else {
            return Err(PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("record \"{}\" is not assigned yet", var.name))
                .with_detail("The tuple structure of a not-yet-assigned record is indeterminate."));
        };
        let Some(i) = shape.iter().position(|(n, _)| n == field) else {
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("record \"{}\" has no field \"{}\"", var.name, field)));
        };
        let v = self.coerce(v, ty, shape[i].1)?;
        let mut row = match &self.vals[slot] {
            Datum::Record(r) => r.as_ref().clone(),
            _ => vec![Datum::Null; shape.len()],
        };
        row[i] = v;
        self.vals[slot] = Datum::Record(Arc::new(row));
        Ok(())
    }

    fn assign_target_item(&mut self, t: &TargetItem, v: Datum, ty: SqlType) -> PgResult<()> {
        match t {
            TargetItem::Var(s) => self.assign_var(*s, v, ty),
            TargetItem::Field(s, f) => self.assign_field(*s, f, v, ty),
            TargetItem::Element(s, subs) => self.assign_element(*s, subs, v, ty),
        }
    }

    fn assign_element(&mut self, slot: usize, subs: &[Expr], v: Datum, ty: SqlType) -> PgResult<()> {
        let mut idx = Vec::new();
        for e in subs {
            match self.eval_int(e)? {
                Some(i) => idx.push(i as i32 as i64),
                None => return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "array subscript in assignment must not be null")),
            }
        }
        let arr_ty = self.types[slot];
        let elem = oid::array_element(arr_ty.oid).unwrap_or(ty.oid);
        let v = self.coerce(v, ty, SqlType::new(elem))?;
        let current = match &self.vals[slot] {
            Datum::Array(a) => a.clone(),
            Datum::Null => Arc::new(Array::empty(elem)),
            _ => return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("cannot subscript type {} because it does not support subscripting", self.spi.type_name(arr_ty)))),
        };
        // array_set_element: extends one-dimensional arrays, checks bounds.
        let arr = current.with_element(&idx, v)?;
        self.vals[slot] = Datum::Array(Arc::new(arr));
        Ok(())
    }

    /// A query's row (or None: no row) into INTO/FOR/FETCH targets.
    fn assign_row(&mut self, target: &Target, row: Option<Vec<Datum>>, cols: &[(String, SqlType)]) -> PgResult<()> {
        if row.is_some() {
            self.check_multi_assignment(target, cols.len())?;
        }
        if let [TargetItem::Var(s)] = target.items.as_slice() {
            if matches!(self.f.vars[*s].kind, VarKind::Record) {
                return match row {
                    Some(r) => self.assign_row_to_record(*s, r, cols),
                    None => {
                        if self.f.vars[*s].fields.is_none() {
                            self.set_shape(*s, cols.to_vec());
                        }
                        if self.f.vars[*s].fields.is_some() {
                            let n = self.shapes[*s].as_ref().map(|f| f.len()).unwrap_or(0);
                            self.vals[*s] = Datum::Record(Arc::new(vec![Datum::Null; n]));
                        } else {
                            let n = cols.len();
                            self.vals[*s] = Datum::Record(Arc::new(vec![Datum::Null; n]));
                        }
                        Ok(())
                    }
                };
            }
        }
        let mut row = row.map(|r| r.into_iter());
        for (i, item) in target.items.iter().enumerate() {
            let v = row.as_mut().and_then(|r| r.next()).unwrap_or(Datum::Null);
            let ty = cols.get(i).map(|c| c.1).unwrap_or(SqlType::new(oid::UNKNOWN));
            let ty = if ty.oid == oid::UNKNOWN && !v.is_null() { SqlType::new(oid::TEXT) } else { ty };
            self.assign_target_item(item, v, ty)?;
        }
        Ok(())
    }

    /// The strict_multi_assignment extra check (exec_move_row_from_fields):
    /// a row of another width than the target's is a warning or an error.
    fn check_multi_assignment(&self, target: &Target, source_fields: usize) -> PgResult<()> {
        let target_fields = match target.items.as_slice() {
            [TargetItem::Var(s)] if matches!(self.f.vars[*s].kind, VarKind::Record) => match &self.f.vars[*s].fields {
                // dropped columns of a row type take no value
                Some(f) => f.iter().filter(|(_, t)| t.oid != oid::UNKNOWN).count(),
                None => return Ok(()),
            },
            items => items.len(),
        };
        if target_fields == source_fields {
            return Ok(());
        }
        let Some(is_error) = crate::extra_check_level(self.spi, crate::XCHECK_STRICTMULTIASSIGNMENT) else { return Ok(()) };
        let mut e = PgError::new(sqlstate::DATATYPE_MISMATCH, "number of source and target fields in assignment does not match")
            .with_detail(format!("strict_multi_assignment check of {} is active.", if is_error { "extra_errors" } else { "extra_warnings" }))
            .with_hint("Make sure the query returns the exact list of columns.");
        if is_error {
            return Err(e);
        }
        e.severity = Severity::Warning;
        self.spi.notice(e);
        Ok(())
    }

    // ------------------------------------------------------------ statements

    fn exec_stmts(&mut self, stmts: &'a [Stmt]) -> PgResult<Flow> {
        for s in stmts {
            match self.exec_stmt(s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec_stmt(&mut self, s: &'a Stmt) -> PgResult<Flow> {
        let save = self.err_stmt;
        self.err_stmt = Some(s);
        let r = if self.profile.is_some() { self.exec_stmt_profiled(s)? } else { self.exec_stmt_kind(s)? };
        self.err_stmt = save;
        Ok(r)
    }

    /// A statement timed for the profiler (a failed one counts too).
    fn exec_stmt_profiled(&mut self, s: &'a Stmt) -> PgResult<Flow> {
        let t0 = std::time::Instant::now();
        let r = self.exec_stmt_kind(s);
        if let Some(p) = self.profile.as_mut() {
            p.record(s.lineno, t0.elapsed());
        }
        r
    }

    fn exec_stmt_kind(&mut self, s: &'a Stmt) -> PgResult<Flow> {
        match &s.kind {
            StmtKind::Block(b) => self.exec_block(Some(s), b),
            StmtKind::Assign { target, expr, text } => {
                let (v, t) = self.eval_ctx(expr, || format!("PL/pgSQL assignment \"{text}\""))?;
                self.assign_target_item(target, v, t)?;
                Ok(Flow::Normal)
            }
            StmtKind::If { branches, else_body } => {
                for (cond, body) in branches {
                    if self.eval_bool(cond)? {
                        return self.exec_stmts(body);
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(b),
                    None => Ok(Flow::Normal),
                }
            }
            StmtKind::Case { test, whens, else_body } => {
                if let Some((e, slot)) = test {
                    let (v, t) = self.eval(e)?;
                    self.types[*slot] = t;
                    self.vals[*slot] = v;
                }
                for (cond, body) in whens {
                    if self.eval_bool(cond)? {
                        return self.exec_stmts(body);
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(b),
                    None => Err(PgError::new(plcodes::CASE_NOT_FOUND, "case not found").with_hint("CASE statement is missing ELSE part.")),
                }
            }
            StmtKind::Loop { label, body } => loop {
                self.spi.check_interrupts()?;
                match self.exec_stmts(body)? {
                    Flow::Normal => {}
                    f => match self.loop_flow(label, f) {
                        LoopCtl::Next => {}
                        LoopCtl::Break => return Ok(Flow::Normal),
                        LoopCtl::Leave(f) => return Ok(f),
                    },
                }
            },
            StmtKind::While { label, cond, body } => {
                loop {
                    self.spi.check_interrupts()?;
                    if !self.eval_bool(cond)? {
                        break;
                    }
                    match self.exec_stmts(body)? {
                        Flow::Normal => {}
                        f => match self.loop_flow(label, f) {
                            LoopCtl::Next => {}
                            LoopCtl::Break => break,
                            LoopCtl::Leave(f) => return Ok(f),
                        },
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::ForInt { label, var, lower, upper, step, reverse, body } => self.exec_fori(label, *var, lower, upper, step, *reverse, body),
            StmtKind::ForQuery { label, target, source, body } => self.exec_for_query(label, target, source, body),
            StmtKind::Foreach { label, target, slice, expr, body } => self.exec_foreach(label, target, *slice, expr, body),
            StmtKind::Exit { is_exit, label, cond } => {
                if let Some(c) = cond {
                    if !self.eval_bool(c)? {
                        return Ok(Flow::Normal);
                    }
                }
                Ok(if *is_exit { Flow::Exit(label.clone()) } else { Flow::Continue(label.clone()) })
            }
            StmtKind::Return(e) => self.exec_return(e.as_ref()),
            StmtKind::ReturnNext(e) => self.exec_return_next(e.as_ref()),
            StmtKind::ReturnQuery(src) => self.exec_return_query(src),
            StmtKind::Raise { level, condname, message, params, options } => self.exec_raise(*level, condname, message, params, options),
            StmtKind::Assert { cond, message } => {
                let on = self.spi.setting("plpgsql.check_asserts").map(|v| v != "off" && v != "false").unwrap_or(true);
                if !on {
                    return Ok(Flow::Normal);
                }
                let (v, t) = self.eval(cond)?;
                let ok = match v {
                    Datum::Null => false,
                    Datum::Bool(b) => b,
                    v => self.spi.coerce(v, t, SqlType::new(oid::BOOL))?.as_bool().unwrap_or(false),
                };
                if !ok {
                    let msg = match message {
                        Some(m) => self.eval_text(m)?.unwrap_or_else(|| "assertion failed".into()),
                        None => "assertion failed".into(),
                    };
                    return Err(PgError::new(plcodes::ASSERT_FAILURE, msg));
                }
                Ok(Flow::Normal)
            }
            StmtKind::ExecSql { sql, into } => self.exec_sql(sql, into.as_ref()),
            StmtKind::DynExecute { query, into, params } => self.exec_dynexecute(query, into.as_ref(), params),
            StmtKind::Perform(e) => {
                let p = self.plan(e)?;
                let r = self.spi.execute(&p.plan, &self.vals, 0).map_err(|err| add_context(err, format!("SQL statement \"SELECT {}\"", e.text)))?;
                self.processed = r.processed;
                self.set_found(r.processed > 0);
                Ok(Flow::Normal)
            }
            StmtKind::Call { sql, .. } => {
                let p = self.plan(sql)?;
                let context = || format!("SQL statement \"{}\"", sql.text);
                // Output parameters go back into the variables passed for
                // them (exec_stmt_call's make_callstmt_target).
                let targets: Vec<usize> = p
                    .plan
                    .call_outputs
                    .iter()
                    .zip(&p.plan.columns)
                    .map(|(t, (name, _))| {
                        t.ok_or_else(|| {
                            PgError::new(
                                sqlstate::SYNTAX_ERROR,
                                format!("procedure parameter \"{name}\" is an output parameter but corresponding argument is not writable"),
                            )
                        })
                    })
                    .collect::<PgResult<_>>()?;
                let r = self.spi.execute(&p.plan, &self.vals, 0).map_err(|err| add_context(err, context()))?;
                self.processed = r.processed;
                if let Some(row) = r.rows.into_iter().next() {
                    for ((slot, v), (_, ty)) in targets.into_iter().zip(row).zip(&r.columns) {
                        self.assign_var(slot, v, *ty)?;
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::GetDiag { stacked, items } => {
                for (t, kind) in items {
                    let (v, ty) = self.diag_value(*stacked, *kind)?;
                    self.assign_target_item(t, v, ty)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Open { var, source, scroll } => self.exec_open(*var, source.as_ref(), *scroll),
            StmtKind::Fetch { var, direction, target, is_move } => self.exec_fetch(*var, direction, target.as_ref(), *is_move),
            StmtKind::Close(var) => {
                let name = self.cursor_name(*var)?;
                self.spi.cursor_close(&name)?;
                Ok(Flow::Normal)
            }
            StmtKind::Commit { chain } | StmtKind::Rollback { chain } => {
                let commit = matches!(s.kind, StmtKind::Commit { .. });
                if !self.nonatomic {
                    return Err(PgError::new(sqlstate::INVALID_TRANSACTION_TERMINATION, "invalid transaction termination"));
                }
                if commit {
                    self.spi.commit(*chain)?;
                } else {
                    self.spi.rollback(*chain)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Null => Ok(Flow::Normal),
        }
    }

    fn loop_flow(&self, label: &Option<String>, f: Flow) -> LoopCtl {
        match f {
            Flow::Normal => LoopCtl::Next,
            Flow::Exit(None) => LoopCtl::Break,
            Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => LoopCtl::Break,
            Flow::Continue(None) => LoopCtl::Next,
            Flow::Continue(Some(l)) if label.as_deref() == Some(l.as_str()) => LoopCtl::Next,
            f => LoopCtl::Leave(f),
        }
    }

    fn init_var(&mut self, slot: usize) -> PgResult<()> {
        let var = &self.f.vars[slot];
        self.vals[slot] = Datum::Null;
        if matches!(var.kind, VarKind::Record) {
            self.shapes[slot] = var.fields.clone();
        }
        match (&var.kind, &var.default) {
            (_, Some(d)) => {
                let (v, t) = self.eval(d)?;
                if v.is_null() && var.not_null {
                    return Err(null_target_error(&var.name));
                }
                self.assign_var(slot, v, t)?;
            }
            (VarKind::Cursor { query: Some(_), .. }, None) => {
                // a bound cursor's portal is named after the variable
                self.vals[slot] = Datum::text(&var.name);
            }
            _ => {}
        }
        Ok(())
    }

    fn exec_block(&mut self, stmt: Option<&'a Stmt>, b: &'a Block) -> PgResult<Flow> {
        for slot in &b.decls {
            self.init_var(*slot)?;
        }
        let flow = match &b.handlers {
            None => self.exec_stmts(&b.body)?,
            Some(handlers) => {
                self.spi.begin_subtransaction()?;
                match self.exec_stmts(&b.body) {
                    Ok(flow) => {
                        self.spi.release_subtransaction()?;
                        flow
                    }
                    Err(err) => {
                        // the error's own CONTEXT as GET STACKED DIAGNOSTICS sees it
                        let err = if err.severity == Severity::Error { self.with_line(err) } else { return Err(err) };
                        self.spi.rollback_subtransaction()?;
                        let Some(h) = handlers.iter().find(|h| h.conditions.iter().any(|c| conditions::matches(c, err.code))) else {
                            // re-thrown: its context line is added again on the way out
                            let mut err = err;
                            err.context = strip_last_line(err.context.take());
                            return Err(err);
                        };
                        self.err_stmt = stmt;
                        if let Some(s) = b.sqlstate_var {
                            self.vals[s] = Datum::text(err.code);
                        }
                        if let Some(s) = b.sqlerrm_var {
                            self.vals[s] = Datum::text(&err.message);
                        }
                        self.handling.push(err);
                        let r = self.exec_stmts(&h.body);
                        self.handling.pop();
                        r?
                    }
                }
            }
        };
        Ok(match flow {
            Flow::Exit(Some(l)) if b.label.as_deref() == Some(l.as_str()) => Flow::Normal,
            f => f,
        })
    }

    fn exec_fori(&mut self, label: &Option<String>, var: usize, lower: &Expr, upper: &Expr, step: &Option<Expr>, reverse: bool, body: &'a [Stmt]) -> PgResult<Flow> {
        let int_bound = |x: &mut Self, e: &Expr, what: &str| -> PgResult<i32> {
            let (v, t) = x.eval(e)?;
            if v.is_null() {
                return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("{what} of FOR loop cannot be null")));
            }
            match x.coerce(v, t, SqlType::new(oid::INT4))? {
                Datum::Int4(i) => Ok(i),
                _ => Err(PgError::internal("FOR loop bound is not an integer")),
            }
        };
        let lo = int_bound(self, lower, "lower bound")?;
        let hi = int_bound(self, upper, "upper bound")?;
        let step = match step {
            Some(s) => {
                let st = int_bound(self, s, "BY value")?;
                if st <= 0 {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "BY value of FOR loop must be greater than zero"));
                }
                st
            }
            None => 1,
        };
        let mut i = lo;
        let mut found = false;
        loop {
            if (!reverse && i > hi) || (reverse && i < hi) {
                break;
            }
            found = true;
            self.vals[var] = Datum::Int4(i);
            match self.exec_stmts(body)? {
                Flow::Normal => {}
                f => match self.loop_flow(label, f) {
                    LoopCtl::Next => {}
                    LoopCtl::Break => break,
                    LoopCtl::Leave(f) => {
                        self.set_found(true);
                        return Ok(f);
                    }
                },
            }
            let next = if reverse { i.checked_sub(step) } else { i.checked_add(step) };
            match next {
                Some(n) => i = n,
                None => break,
            }
        }
        self.set_found(found);
        Ok(Flow::Normal)
    }

    /// The rows a FOR/RETURN QUERY source yields (all at once: the loop body
    /// sees the query's snapshot either way).
    fn run_source(&mut self, source: &QuerySource, for_return: bool) -> PgResult<SpiResult> {
        match source {
            QuerySource::Static(e) => {
                let p = self.plan(e)?;
                if !p.plan.returns_rows {
                    // RETURN QUERY runs the statement (_SPI_execute_plan's
                    // check); FOR opens a cursor over it (SPI_cursor_open's)
                    return Err(if for_return {
                        add_context(PgError::new(sqlstate::SYNTAX_ERROR, format!("{} query does not return tuples", p.plan.command)), format!("SQL statement \"{}\"", e.text))
                    } else {
                        PgError::new(sqlstate::INVALID_CURSOR_DEFINITION, format!("cannot open {} query as cursor", p.plan.command))
                    });
                }
                self.spi.execute(&p.plan, &self.vals, 0).map_err(|err| add_context(err, format!("SQL statement \"{}\"", e.text)))
            }
            QuerySource::Dynamic { query, params } => {
                let (sql, args) = self.dynamic_query(query, params)?;
                self.spi.execute_dynamic(&sql, &args, 0).map_err(|err| add_context(err, format!("SQL statement \"{sql}\"")))
            }
            QuerySource::Cursor { var, args } => {
                let name = self.open_bound(*var, args, None)?;
                let r = self.spi.cursor_fetch(&name, FetchDirection::ForwardAll, true);
                let _ = self.spi.cursor_close(&name);
                r
            }
        }
    }

    fn exec_for_query(&mut self, label: &Option<String>, target: &Target, source: &QuerySource, body: &'a [Stmt]) -> PgResult<Flow> {
        let res = self.run_source(source, false)?;
        let mut found = false;
        for row in res.rows {
            found = true;
            self.assign_row(target, Some(row), &res.columns)?;
            match self.exec_stmts(body)? {
                Flow::Normal => {}
                f => match self.loop_flow(label, f) {
                    LoopCtl::Next => {}
                    LoopCtl::Break => break,
                    LoopCtl::Leave(f) => {
                        self.set_found(true);
                        return Ok(f);
                    }
                },
            }
        }
        self.set_found(found);
        Ok(Flow::Normal)
    }

    fn exec_foreach(&mut self, label: &Option<String>, target: &Target, slice: i32, expr: &Expr, body: &'a [Stmt]) -> PgResult<Flow> {
        let (v, t) = self.eval(expr)?;
        let arr = match v {
            Datum::Null => return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "FOREACH expression must not be null")),
            Datum::Array(a) => a,
            _ => return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("FOREACH expression must yield an array, not type {}", self.spi.type_name(t)))),
        };
        let ndims = arr.dims.len() as i32;
        if slice < 0 || slice > ndims {
            return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, format!("slice dimension ({slice}) is out of the valid range 0..{ndims}")));
        }
        let elem_ty = SqlType::new(arr.element_type);
        let mut found = false;
        let items: Vec<(Datum, SqlType)> = if slice == 0 {
            arr.elements.iter().map(|d| (d.clone(), elem_ty)).collect()
        } else {
            let inner: usize = arr.dims[(ndims - slice) as usize..].iter().map(|d| d.0 as usize).product();
            let sub_dims: Vec<(i32, i32)> = arr.dims[(ndims - slice) as usize..].iter().map(|d| (d.0, 1)).collect();
            let arr_ty = SqlType::new(oid::array_of(arr.element_type).unwrap_or(t.oid));
            if inner == 0 {
                Vec::new()
            } else {
                arr.elements
                    .chunks(inner)
                    .map(|c| (Datum::Array(Arc::new(Array { element_type: arr.element_type, dims: sub_dims.clone(), elements: c.to_vec() })), arr_ty))
                    .collect()
            }
        };
        for (v, ty) in items {
            found = true;
            if target.items.len() == 1 {
                self.assign_target_item(&target.items[0], v, ty)?;
            } else {
                match v {
                    Datum::Record(r) => {
                        let cols: Vec<(String, SqlType)> = r.iter().map(|d| (String::new(), datum_type(d))).collect();
                        self.assign_row(target, Some(r.as_ref().clone()), &cols)?;
                    }
                    _ => return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "cannot assign non-composite value to a row variable")),
                }
            }
            match self.exec_stmts(body)? {
                Flow::Normal => {}
                f => match self.loop_flow(label, f) {
                    LoopCtl::Next => {}
                    LoopCtl::Break => break,
                    LoopCtl::Leave(f) => {
                        self.set_found(true);
                        return Ok(f);
                    }
                },
            }
        }
        self.set_found(found);
        Ok(Flow::Normal)
    }

    fn out_value(&self) -> (Datum, SqlType) {
        match self.f.out_params.as_slice() {
            [s] => (self.vals[*s].clone(), self.types[*s]),
            many => (Datum::Record(Arc::new(many.iter().map(|s| self.vals[*s].clone()).collect())), SqlType::new(oid::RECORD)),
        }
    }

    /// A value converted to the function's result type (a row for
    /// functions returning rows).
    fn result_value(&self, v: Datum, t: SqlType) -> PgResult<Datum> {
        if v.is_null() {
            return Ok(v);
        }
        if let Some(cols) = &self.ret_columns {
            if cols.len() > 1 || matches!(v, Datum::Record(_)) || self.spi.composite_fields(self.ret_type).is_some() || self.ret_type.oid == oid::RECORD {
                let Datum::Record(r) = v else {
                    return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "cannot return non-composite value from function returning composite type"));
                };
                let src_types: Vec<SqlType> = match self.spi.composite_fields(t) {
                    Some(f) => f.into_iter().map(|x| x.1).collect(),
                    None => r.iter().map(datum_type).collect(),
                };
                if r.len() != cols.len() {
                    return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "returned record type does not match expected record type")
                        .with_detail(format!("Number of returned columns ({}) does not match expected column count ({}).", r.len(), cols.len())));
                }
                let mut out = Vec::with_capacity(r.len());
                for (i, d) in r.iter().enumerate() {
                    out.push(self.coerce(d.clone(), src_types.get(i).copied().unwrap_or(cols[i].1), cols[i].1)?);
                }
                return Ok(Datum::Record(Arc::new(out)));
            }
        }
        self.coerce(v, t, self.ret_type)
    }

    fn exec_return(&mut self, e: Option<&Expr>) -> PgResult<Flow> {
        if self.f.retset {
            if e.is_some() {
                return Err(PgError::syntax("RETURN cannot have a parameter in function returning set"));
            }
            return Ok(Flow::Return);
        }
        match e {
            None => {
                if !self.f.out_params.is_empty() {
                    let (v, t) = self.out_value();
                    self.retval = Some((v, t));
                } else {
                    self.retval = Some((Datum::Null, self.ret_type));
                }
            }
            Some(e) => {
                let (v, t) = self.eval(e)?;
                let v = if self.f.is_trigger {
                    v
                } else if self.ret_type.oid == oid::VOID {
                    Datum::Null
                } else {
                    self.result_value(v, t)?
                };
                self.retval = Some((v, t));
            }
        }
        Ok(Flow::Return)
    }

    fn exec_return_next(&mut self, e: Option<&Expr>) -> PgResult<Flow> {
        if !self.f.retset {
            return Err(PgError::syntax("cannot use RETURN NEXT in a non-SETOF function"));
        }
        let v = match e {
            None => {
                let (v, t) = self.out_value();
                self.result_value(v, t)?
            }
            Some(e) => {
                let (v, t) = self.eval(e)?;
                self.result_value(v, t)?
            }
        };
        self.set_rows.push(v);
        Ok(Flow::Normal)
    }

    fn exec_return_query(&mut self, src: &QuerySource) -> PgResult<Flow> {
        if !self.f.retset {
            return Err(PgError::syntax("cannot use RETURN QUERY in a non-SETOF function"));
        }
        let res = self.run_source(src, true)?;
        let multi = self.ret_columns.as_ref().is_some_and(|c| c.len() > 1) || self.spi.composite_fields(self.ret_type).is_some() || self.ret_type.oid == oid::RECORD;
        if let Some(cols) = &self.ret_columns {
            if multi && res.columns.len() != cols.len() {
                return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "structure of query does not match function result type")
                    .with_detail(format!("Number of returned columns ({}) does not match expected column count ({}).", res.columns.len(), cols.len())));
            }
        }
        let n = res.rows.len() as u64;
        for row in res.rows {
            let v = if multi {
                let cols = self.ret_columns.clone().unwrap_or_default();
                let mut out = Vec::with_capacity(row.len());
                for (i, d) in row.into_iter().enumerate() {
                    let to = cols.get(i).map(|c| c.1).unwrap_or(res.columns[i].1);
                    out.push(self.coerce(d, res.columns[i].1, to)?);
                }
                Datum::Record(Arc::new(out))
            } else {
                let d = row.into_iter().next().unwrap_or(Datum::Null);
                self.coerce(d, res.columns[0].1, self.ret_type)?
            };
            self.set_rows.push(v);
        }
        self.processed = n;
        self.set_found(n > 0);
        Ok(Flow::Normal)
    }

    fn exec_raise(&mut self, level: RaiseLevel, condname: &Option<String>, message: &Option<String>, params: &[Expr], options: &[(RaiseOption, Expr)]) -> PgResult<Flow> {
        if condname.is_none() && message.is_none() && options.is_empty() {
            // re-RAISE of the error being handled
            return match self.handling.last() {
                Some(e) => {
                    let mut e = e.clone();
                    e.context = strip_last_line(e.context.take());
                    Err(e)
                }
                None => Err(PgError::new(plcodes::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER, "RAISE without parameters cannot be used outside an exception handler")),
            };
        }
        let mut code: Option<&'static str> = None;
        let mut msg: Option<String> = None;
        if let Some(c) = condname {
            code = Some(match c.strip_prefix("sqlstate:") {
                Some(s) => conditions::static_code(s),
                None => conditions::lookup(c).unwrap_or("P0001"),
            });
        }
        if let Some(m) = message {
            let mut vals = Vec::with_capacity(params.len());
            for p in params {
                let (v, t) = self.eval(p)?;
                vals.push(if v.is_null() { "<NULL>".to_string() } else { self.spi.output(&v, t)? });
            }
            let mut out = String::new();
            let mut it = vals.into_iter();
            let mut chars = m.chars().peekable();
            while let Some(ch) = chars.next() {
                if ch == '%' {
                    if chars.peek() == Some(&'%') {
                        chars.next();
                        out.push('%');
                        continue;
                    }
                    out.push_str(&it.next().unwrap_or_default());
                } else {
                    out.push(ch);
                }
            }
            msg = Some(out);
        }
        let mut err = PgError::new("P0001", String::new());
        for (opt, e) in options {
            let v = self.eval_text(e)?.ok_or_else(|| PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "RAISE statement option cannot be null"))?;
            let dup = |name: &str| PgError::syntax(format!("RAISE option already specified: {name}"));
            match opt {
                RaiseOption::Errcode => {
                    if code.is_some() {
                        return Err(dup("ERRCODE"));
                    }
                    code = Some(if conditions::valid_sqlstate(&v) && v.len() == 5 && conditions::lookup(&v).is_none() {
                        conditions::static_code(&v)
                    } else {
                        conditions::lookup(&v).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("unrecognized exception condition \"{v}\"")))?
                    });
                }
                RaiseOption::Message => {
                    if msg.is_some() {
                        return Err(dup("MESSAGE"));
                    }
                    msg = Some(v);
                }
                RaiseOption::Detail => {
                    if err.detail.is_some() {
                        return Err(dup("DETAIL"));
                    }
                    err.detail = Some(v)
                }
                RaiseOption::Hint => {
                    if err.hint.is_some() {
                        return Err(dup("HINT"));
                    }
                    err.hint = Some(v)
                }
                RaiseOption::Column => err.column = Some(v),
                RaiseOption::Constraint => err.constraint = Some(v),
                RaiseOption::Datatype => err.datatype = Some(v),
                RaiseOption::Table => err.table = Some(v),
                RaiseOption::Schema => err.schema = Some(v),
            }
        }
        let code = code.unwrap_or(if level == RaiseLevel::Exception { "P0001" } else if level == RaiseLevel::Warning { "01000" } else { "00000" });
        err.code = code;
        err.message = match msg {
            Some(m) => m,
            None => match condname {
                Some(c) => c.strip_prefix("sqlstate:").unwrap_or(c).to_string(),
                None => code.to_string(),
            },
        };
        if level == RaiseLevel::Exception {
            return Err(err);
        }
        err.severity = match level {
            RaiseLevel::Debug => Severity::Debug,
            RaiseLevel::Log => Severity::Log,
            RaiseLevel::Info => Severity::Info,
            RaiseLevel::Notice => Severity::Notice,
            _ => Severity::Warning,
        };
        let err = self.with_line(err);
        self.spi.notice(err);
        Ok(Flow::Normal)
    }

    fn exec_sql(&mut self, sql: &Expr, into: Option<&(Target, bool)>) -> PgResult<Flow> {
        let p = self.plan(sql)?;
        let ctx = || format!("SQL statement \"{}\"", sql.text);
        match into {
            None => {
                let r = self.spi.execute(&p.plan, &self.vals, 0).map_err(|e| add_context(e, ctx()))?;
                self.processed = r.processed;
                if matches!(p.plan.command.as_str(), "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "MERGE") {
                    self.set_found(r.processed > 0);
                }
                if p.plan.returns_rows {
                    let e = PgError::new(sqlstate::SYNTAX_ERROR, "query has no destination for result data");
                    return Err(if p.plan.command == "SELECT" { e.with_hint("If you want to discard the results of a SELECT, use PERFORM instead.") } else { e });
                }
            }
            Some((target, strict)) => {
                if !p.plan.returns_rows {
                    return Err(PgError::new(sqlstate::SYNTAX_ERROR, "INTO used with a command that cannot return data"));
                }
                let mod_stmt = p.plan.command != "SELECT";
                let too_many_rows = crate::extra_check_level(self.spi, crate::XCHECK_TOOMANYROWS);
                let max = if *strict || mod_stmt || too_many_rows.is_some() { 2 } else { 1 };
                let r = self.spi.execute(&p.plan, &self.vals, max).map_err(|e| add_context(e, ctx()))?;
                self.processed = r.processed;
                let params = || self.expr_params(&p.used_vars);
                let n = r.rows.len();
                if (n == 0 && *strict) || (n > 1 && (*strict || mod_stmt)) {
                    // a statement using no variables has no parameters to show
                    let detail = if self.f.print_strict_params && !p.used_vars.is_empty() { Some(params()) } else { None };
                    let e = if n == 0 {
                        PgError::new(plcodes::NO_DATA_FOUND, "query returned no rows")
                    } else {
                        PgError::new(plcodes::TOO_MANY_ROWS, "query returned more than one row").with_hint("Make sure the query returns a single row, or use LIMIT 1.")
                    };
                    return Err(match detail {
                        Some(d) => e.with_detail(format!("parameters: {d}")),
                        None => e,
                    });
                }
                if n > 1 {
                    if let Some(is_error) = too_many_rows {
                        let mut e = PgError::new(plcodes::TOO_MANY_ROWS, "query returned more than one row").with_hint("Make sure the query returns a single row, or use LIMIT 1.");
                        if self.f.print_strict_params && !p.used_vars.is_empty() {
                            e = e.with_detail(format!("parameters: {}", params()));
                        }
                        if is_error {
                            return Err(e);
                        }
                        e.severity = Severity::Warning;
                        self.spi.notice(e);
                    }
                }
                self.into_result(target, *strict, mod_stmt, r)?;
            }
        }
        Ok(Flow::Normal)
    }

    fn into_result(&mut self, target: &Target, strict: bool, mod_stmt: bool, r: SpiResult) -> PgResult<()> {
        let n = r.rows.len();
        if n == 0 {
            if strict {
                return Err(PgError::new(plcodes::NO_DATA_FOUND, "query returned no rows"));
            }
            self.assign_row(target, None, &r.columns)?;
            self.set_found(false);
            return Ok(());
        }
        if n > 1 && (strict || mod_stmt) {
            // EXECUTE's error (exec_stmt_dynexecute) has no hint
            return Err(PgError::new(plcodes::TOO_MANY_ROWS, "query returned more than one row"));
        }
        let row = r.rows.into_iter().next();
        self.assign_row(target, row, &r.columns)?;
        self.set_found(true);
        Ok(())
    }

    /// format_expr_params: the variables a statement uses, `name = 'value'`.
    fn expr_params(&self, used: &[usize]) -> String {
        let mut parts = Vec::with_capacity(used.len());
        for &slot in used {
            let v = self.param_text(&self.vals[slot], self.types[slot]).unwrap_or_else(|_| "?".into());
            parts.push(format!("{} = {v}", self.f.vars[slot].name));
        }
        parts.join(", ")
    }

    /// A parameter's value as print_strict_params shows it: quoted, or NULL.
    fn param_text(&self, v: &Datum, ty: SqlType) -> PgResult<String> {
        if v.is_null() {
            return Ok("NULL".into());
        }
        let t = if ty.oid == oid::UNKNOWN { SqlType::new(oid::TEXT) } else { ty };
        Ok(format!("'{}'", self.spi.output(v, t)?.replace('\'', "''")))
    }

    fn dynamic_query(&mut self, query: &Expr, params: &[Expr]) -> PgResult<(String, Vec<(Datum, SqlType)>)> {
        let sql = self.eval_text(query)?.ok_or_else(|| PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "query string argument of EXECUTE is null"))?;
        let mut args = Vec::with_capacity(params.len());
        for p in params {
            let (v, t) = self.eval(p)?;
            // unknown-typed literals are passed as text, as exec_eval_using_params does
            let t = if t.oid == oid::UNKNOWN { SqlType::new(oid::TEXT) } else { t };
            args.push((v, t));
        }
        Ok((sql, args))
    }

    fn exec_dynexecute(&mut self, query: &Expr, into: Option<&(Target, bool)>, params: &[Expr]) -> PgResult<Flow> {
        let (sql, args) = self.dynamic_query(query, params)?;
        let max = match into {
            Some((_, true)) => 2,
            Some(_) => 1,
            None => 0,
        };
        let r = self.spi.execute_dynamic(&sql, &args, max).map_err(|e| add_context(e, format!("SQL statement \"{sql}\"")))?;
        self.processed = r.processed;
        if let Some((target, strict)) = into {
            if r.columns.is_empty() && r.rows.is_empty() && !r.tag.starts_with("SELECT") {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "INTO used with a command that cannot return data"));
            }
            let n = r.rows.len();
            if *strict && n != 1 && self.f.print_strict_params && !args.is_empty() {
                // format_preparedparamsdata: the USING values as $n
                let mut parts = Vec::with_capacity(args.len());
                for (i, (v, t)) in args.iter().enumerate() {
                    parts.push(format!("${} = {}", i + 1, self.param_text(v, *t)?));
                }
                let e = if n == 0 {
                    PgError::new(plcodes::NO_DATA_FOUND, "query returned no rows")
                } else {
                    PgError::new(plcodes::TOO_MANY_ROWS, "query returned more than one row")
                };
                return Err(e.with_detail(format!("parameters: {}", parts.join(", "))));
            }
            let found = self.vals[self.f.found_var].clone();
            self.into_result(target, *strict, false, r)?;
            // EXECUTE leaves FOUND alone
            self.vals[self.f.found_var] = found;
        }
        Ok(Flow::Normal)
    }

    fn diag_value(&self, stacked: bool, kind: DiagKind) -> PgResult<(Datum, SqlType)> {
        let text = SqlType::new(oid::TEXT);
        let t = |s: Option<&String>| (s.map(|x| Datum::text(x)).unwrap_or_else(|| Datum::text("")), text);
        if !stacked {
            return Ok(match kind {
                DiagKind::RowCount => (Datum::Int8(self.processed as i64), SqlType::new(oid::INT8)),
                _ => (Datum::text(&self.context_line()), text),
            });
        }
        let Some(e) = self.handling.last() else {
            return Err(PgError::new(plcodes::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER, "GET STACKED DIAGNOSTICS cannot be used outside an exception handler"));
        };
        Ok(match kind {
            DiagKind::ReturnedSqlstate => (Datum::text(e.code), text),
            DiagKind::MessageText => (Datum::text(&e.message), text),
            DiagKind::PgExceptionDetail => t(e.detail.as_ref()),
            DiagKind::PgExceptionHint => t(e.hint.as_ref()),
            DiagKind::PgExceptionContext => t(e.context.as_ref()),
            DiagKind::ColumnName => t(e.column.as_ref()),
            DiagKind::ConstraintName => t(e.constraint.as_ref()),
            DiagKind::PgDatatypeName => t(e.datatype.as_ref()),
            DiagKind::TableName => t(e.table.as_ref()),
            DiagKind::SchemaName => t(e.schema.as_ref()),
            DiagKind::RowCount | DiagKind::PgContext => (Datum::Null, text),
        })
    }

    // ------------------------------------------------------------ cursors

    fn cursor_name(&self, var: usize) -> PgResult<String> {
        match &self.vals[var] {
            Datum::Null => Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("cursor variable \"{}\" is null", self.f.vars[var].name))),
            v => self.spi.output(v, SqlType::new(oid::TEXT)),
        }
    }

    /// Opens a bound cursor with its arguments; returns the portal name.
    fn open_bound(&mut self, var: usize, args: &[Expr], scroll_override: Option<bool>) -> PgResult<String> {
        let VarKind::Cursor { query: Some(query), args: arg_vars, scroll } = &self.f.vars[var].kind else {
            return Err(PgError::internal("not a bound cursor"));
        };
        for (e, slot) in args.iter().zip(arg_vars.iter()) {
            let (v, t) = self.eval(e)?;
            self.assign_var(*slot, v, t)?;
        }
        let p = self.plan(query)?;
        let name = match &self.vals[var] {
            Datum::Null => None,
            v => Some(self.spi.output(v, SqlType::new(oid::TEXT))?),
        };
        if name.is_none() {
            self.check_assignable(var)?;
        }
        let scroll = scroll_override.or(*scroll).unwrap_or(false);
        let name = self.spi.cursor_open(name.as_deref(), &p.plan, &self.vals, scroll)?;
        self.vals[var] = Datum::text(&name);
        Ok(name)
    }

    /// exec_check_assignable: OPEN of a cursor variable that is NULL
    /// stores the portal's name in it, which a CONSTANT refuses.
    fn check_assignable(&self, var: usize) -> PgResult<()> {
        if self.f.vars[var].is_const {
            return Err(PgError::new(plcodes::ERROR_IN_ASSIGNMENT, format!("variable \"{}\" is declared CONSTANT", self.f.vars[var].name)));
        }
        Ok(())
    }

    fn exec_open(&mut self, var: usize, source: Option<&QuerySource>, scroll: Option<bool>) -> PgResult<Flow> {
        let cur_name = match &self.vals[var] {
            Datum::Null => None,
            v => Some(self.spi.output(v, SqlType::new(oid::TEXT))?),
        };
        if cur_name.is_none() && matches!(source, Some(QuerySource::Static(_) | QuerySource::Dynamic { .. })) {
            self.check_assignable(var)?;
        }
        let name = match source {
            None => self.open_bound(var, &[], scroll)?,
            Some(QuerySource::Cursor { args, .. }) => self.open_bound(var, args, scroll)?,
            Some(QuerySource::Static(e)) => {
                let p = self.plan(e)?;
                if !p.plan.returns_rows {
                    return Err(PgError::new(sqlstate::INVALID_CURSOR_DEFINITION, format!("cannot open {} query as cursor", p.plan.command)));
                }
                self.spi.cursor_open(cur_name.as_deref(), &p.plan, &self.vals, scroll.unwrap_or(false))?
            }
            Some(QuerySource::Dynamic { query, params }) => {
                let (sql, args) = self.dynamic_query(query, params)?;
                self.spi.cursor_open_dynamic(cur_name.as_deref(), &sql, &args, scroll.unwrap_or(false))?
            }
        };
        self.vals[var] = Datum::text(&name);
        Ok(Flow::Normal)
    }

    fn exec_fetch(&mut self, var: usize, spec: &FetchSpec, target: Option<&Target>, is_move: bool) -> PgResult<Flow> {
        let name = self.cursor_name(var)?;
        let count = |x: &mut Self, e: &Option<Expr>| -> PgResult<i64> {
            match e {
                None => Ok(1),
                Some(e) => x.eval_int(e)?.ok_or_else(|| PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "FETCH count cannot be null")),
            }
        };
        let dir = match spec {
            FetchSpec::Next => FetchDirection::Next,
            FetchSpec::Prior => FetchDirection::Prior,
            FetchSpec::First => FetchDirection::First,
            FetchSpec::Last => FetchDirection::Last,
            FetchSpec::Absolute(e) => FetchDirection::Absolute(count(self, &Some(e.clone()))?),
            FetchSpec::Relative(e) => FetchDirection::Relative(count(self, &Some(e.clone()))?),
            FetchSpec::Forward(e) => FetchDirection::Forward(count(self, e)?),
            FetchSpec::Backward(e) => FetchDirection::Backward(count(self, e)?),
            FetchSpec::ForwardAll => FetchDirection::ForwardAll,
            FetchSpec::BackwardAll => FetchDirection::BackwardAll,
        };
        let r = self.spi.cursor_fetch(&name, dir, !is_move)?;
        self.processed = r.processed;
        if is_move {
            self.set_found(r.processed > 0);
            return Ok(Flow::Normal);
        }
        let found = !r.rows.is_empty();
        if let Some(t) = target {
            let row = r.rows.into_iter().next();
            self.assign_row(t, row, &r.columns)?;
        }
        self.set_found(found);
        Ok(Flow::Normal)
    }
}

enum LoopCtl {
    Next,
    Break,
    Leave(Flow),
}

/// An error's CONTEXT without its last line (this function's, which is
/// added again when the error leaves the function).
fn strip_last_line(c: Option<String>) -> Option<String> {
    let c = c?;
    match c.rfind('\n') {
        Some(i) => Some(c[..i].to_string()),
        None => None,
    }
}
