//! The interpreter run against a stand-in SPI that evaluates small
//! table-less expressions (integers, text, booleans, arithmetic,
//! comparisons, AND/OR/NOT, IN) by itself: control flow, loops and
//! labels, exceptions and subtransactions, RAISE formatting, FOUND, INTO,
//! CONTEXT lines. The SQL side proper is tested end to end in tests/slt.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use pg_query::NodeEnum;
use tusk_plpgsql::PlPgSql;
use tusk_sql::procedural::*;
use tusk_types::{oid, Datum, Oid, PgError, PgResult, SqlType};

#[derive(Debug)]
enum E {
    Const(Datum),
    Param(usize),
    Field(usize, usize),
    Bin(String, Box<E>, Box<E>),
    And(Vec<E>),
    Or(Vec<E>),
    Not(Box<E>),
    In(Box<E>, Vec<E>),
    Div0,
}

fn node_str(n: &pg_query::protobuf::Node) -> Option<&str> {
    match &n.node {
        Some(NodeEnum::String(s)) => Some(&s.sval),
        _ => None,
    }
}

fn build(n: &pg_query::protobuf::Node, ps: &dyn ParamSource, used: &RefCell<usize>) -> PgResult<E> {
    let bump = |i: usize| {
        let mut u = used.borrow_mut();
        *u = (*u).max(i + 1);
    };
    Ok(match n.node.as_ref().unwrap() {
        NodeEnum::AConst(c) => match &c.val {
            Some(pg_query::protobuf::a_const::Val::Ival(i)) => E::Const(Datum::Int4(i.ival)),
            Some(pg_query::protobuf::a_const::Val::Sval(s)) => E::Const(Datum::text(&s.sval)),
            Some(pg_query::protobuf::a_const::Val::Boolval(b)) => E::Const(Datum::Bool(b.boolval)),
            None => E::Const(Datum::Null),
            _ => return Err(PgError::internal("const")),
        },
        NodeEnum::ColumnRef(c) => {
            let names: Vec<&str> = c.fields.iter().filter_map(node_str).collect();
            if names == ["boom"] {
                return Ok(E::Div0);
            }
            match ps.resolve(&names) {
                Some((ResolvedName::Param { index, .. }, _)) => {
                    bump(index);
                    E::Param(index)
                }
                Some((ResolvedName::Field { index, field, .. }, _)) => {
                    bump(index);
                    E::Field(index, field)
                }
                None => return Err(PgError::new("42703", format!("column \"{}\" does not exist", names.join(".")))),
            }
        }
        NodeEnum::ParamRef(p) => {
            ps.param_type(p.number as usize).ok_or_else(|| PgError::new("42P02", "there is no parameter"))?;
            E::Param(p.number as usize - 1)
        }
        NodeEnum::AExpr(a) => {
            let op = a.name.iter().filter_map(node_str).collect::<Vec<_>>().join("");
            let l = build(a.lexpr.as_ref().unwrap(), ps, used)?;
            if a.kind == pg_query::protobuf::AExprKind::AexprIn as i32 {
                let Some(NodeEnum::List(list)) = a.rexpr.as_ref().unwrap().node.as_ref() else { panic!() };
                let items = list.items.iter().map(|i| build(i, ps, used)).collect::<PgResult<Vec<_>>>()?;
                return Ok(E::In(Box::new(l), items));
            }
            E::Bin(op, Box::new(l), Box::new(build(a.rexpr.as_ref().unwrap(), ps, used)?))
        }
        NodeEnum::BoolExpr(b) => {
            let args = b.args.iter().map(|x| build(x, ps, used)).collect::<PgResult<Vec<_>>>()?;
            match b.boolop {
                1 => E::And(args),
                2 => E::Or(args),
                _ => E::Not(Box::new(args.into_iter().next().unwrap())),
            }
        }
        other => return Err(PgError::internal(format!("mock cannot evaluate {other:?}"))),
    })
}

fn ev(e: &E, args: &[Datum]) -> PgResult<Datum> {
    Ok(match e {
        E::Const(d) => d.clone(),
        E::Div0 => return Err(PgError::new("22012", "division by zero")),
        E::Param(i) => args.get(*i).cloned().unwrap_or(Datum::Null),
        E::Field(i, f) => match args.get(*i) {
            Some(Datum::Record(r)) => r[*f].clone(),
            _ => Datum::Null,
        },
        E::Not(x) => match ev(x, args)? {
            Datum::Bool(b) => Datum::Bool(!b),
            _ => Datum::Null,
        },
        E::And(xs) => Datum::Bool(xs.iter().map(|x| ev(x, args)).collect::<PgResult<Vec<_>>>()?.iter().all(|d| d.as_bool() == Some(true))),
        E::Or(xs) => Datum::Bool(xs.iter().map(|x| ev(x, args)).collect::<PgResult<Vec<_>>>()?.iter().any(|d| d.as_bool() == Some(true))),
        E::In(l, items) => {
            let l = ev(l, args)?;
            let mut hit = false;
            for i in items {
                hit |= ev(i, args)? == l;
            }
            Datum::Bool(hit)
        }
        E::Bin(op, l, r) => {
            let (l, r) = (ev(l, args)?, ev(r, args)?);
            if l.is_null() || r.is_null() {
                return Ok(Datum::Null);
            }
            let int = |d: &Datum| match d {
                Datum::Int4(i) => *i as i64,
                Datum::Int8(i) => *i,
                _ => 0,
            };
            match op.as_str() {
                "||" => Datum::text(&format!("{}{}", out(&l), out(&r))),
                "+" => Datum::Int4((int(&l) + int(&r)) as i32),
                "-" => Datum::Int4((int(&l) - int(&r)) as i32),
                "*" => Datum::Int4((int(&l) * int(&r)) as i32),
                "/" => {
                    if int(&r) == 0 {
                        return Err(PgError::new("22012", "division by zero"));
                    }
                    Datum::Int4((int(&l) / int(&r)) as i32)
                }
                "%" => Datum::Int4((int(&l) % int(&r)) as i32),
                "=" => Datum::Bool(l == r),
                "<>" => Datum::Bool(l != r),
                "<" => Datum::Bool(int(&l) < int(&r)),
                ">" => Datum::Bool(int(&l) > int(&r)),
                "<=" => Datum::Bool(int(&l) <= int(&r)),
                ">=" => Datum::Bool(int(&l) >= int(&r)),
                _ => return Err(PgError::internal(format!("op {op}"))),
            }
        }
    })
}

fn out(d: &Datum) -> String {
    match d {
        Datum::Int4(i) => i.to_string(),
        Datum::Int8(i) => i.to_string(),
        Datum::Text(s) => s.to_string(),
        Datum::Bool(b) => (if *b { "t" } else { "f" }).into(),
        Datum::Null => "".into(),
        Datum::Record(r) => format!("({})", r.iter().map(out).collect::<Vec<_>>().join(",")),
        other => format!("{other:?}"),
    }
}

fn type_of(d: &Datum) -> SqlType {
    SqlType::new(match d {
        Datum::Int4(_) => oid::INT4,
        Datum::Bool(_) => oid::BOOL,
        Datum::Text(_) => oid::TEXT,
        _ => oid::UNKNOWN,
    })
}

struct Mock {
    cache: RefCell<HashMap<(Oid, u64), Rc<dyn Any>>>,
    log: RefCell<Vec<String>>,
    prepares: RefCell<usize>,
}

struct Plan(Vec<E>);

impl Mock {
    fn new() -> Mock {
        Mock { cache: Default::default(), log: Default::default(), prepares: RefCell::new(0) }
    }
}

impl Spi for Mock {
    fn prepare(&self, sql: &str, params: &dyn ParamSource) -> PgResult<SpiPlan> {
        *self.prepares.borrow_mut() += 1;
        let parsed = tusk_sql::parser::parse(sql)?;
        let NodeEnum::SelectStmt(sel) = &parsed[0].node else { return Err(PgError::internal("mock: only SELECT")) };
        let used = RefCell::new(0);
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for t in &sel.target_list {
            let Some(NodeEnum::ResTarget(rt)) = &t.node else { panic!() };
            exprs.push(build(rt.val.as_ref().unwrap(), params, &used)?);
            cols.push((if rt.name.is_empty() { "?column?".to_string() } else { rt.name.clone() }, SqlType::new(oid::INT4)));
        }
        Ok(SpiPlan { inner: Rc::new(Plan(exprs)), columns: cols, command: "SELECT".into(), returns_rows: true, call_outputs: Vec::new() })
    }
    fn execute(&self, plan: &SpiPlan, args: &[Datum], _: usize) -> PgResult<SpiResult> {
        let p = plan.inner.downcast_ref::<Plan>().unwrap();
        let row = p.0.iter().map(|e| ev(e, args)).collect::<PgResult<Vec<_>>>()?;
        let columns = row.iter().zip(plan.columns.iter()).map(|(d, c)| (c.0.clone(), type_of(d))).collect();
        Ok(SpiResult { columns, rows: vec![row], processed: 1, tag: "SELECT 1".into() })
    }
    fn eval(&self, plan: &SpiPlan, args: &[Datum]) -> PgResult<(Datum, SqlType)> {
        let p = plan.inner.downcast_ref::<Plan>().unwrap();
        let d = ev(&p.0[0], args)?;
        let t = type_of(&d);
        Ok((d, if t.oid == oid::UNKNOWN { SqlType::new(oid::INT4) } else { t }))
    }
    fn execute_dynamic(&self, sql: &str, args: &[(Datum, SqlType)], _: usize) -> PgResult<SpiResult> {
        self.log.borrow_mut().push(format!("dynamic {sql} {}", args.iter().map(|a| out(&a.0)).collect::<Vec<_>>().join(",")));
        Ok(SpiResult { columns: vec![], rows: vec![], processed: 3, tag: "UPDATE 3".into() })
    }
    fn cursor_open(&self, _: Option<&str>, _: &SpiPlan, _: &[Datum], _: bool) -> PgResult<String> {
        Err(PgError::internal("mock: no cursors"))
    }
    fn cursor_open_dynamic(&self, _: Option<&str>, _: &str, _: &[(Datum, SqlType)], _: bool) -> PgResult<String> {
        Err(PgError::internal("mock: no cursors"))
    }
    fn cursor_fetch(&self, _: &str, _: FetchDirection, _: bool) -> PgResult<SpiResult> {
        Err(PgError::internal("mock: no cursors"))
    }
    fn cursor_close(&self, _: &str) -> PgResult<()> {
        Ok(())
    }
    fn begin_subtransaction(&self) -> PgResult<()> {
        self.log.borrow_mut().push("begin sub".into());
        Ok(())
    }
    fn release_subtransaction(&self) -> PgResult<()> {
        self.log.borrow_mut().push("release sub".into());
        Ok(())
    }
    fn rollback_subtransaction(&self) -> PgResult<()> {
        self.log.borrow_mut().push("rollback sub".into());
        Ok(())
    }
    fn commit(&self, _: bool) -> PgResult<()> {
        self.log.borrow_mut().push("commit".into());
        Ok(())
    }
    fn rollback(&self, _: bool) -> PgResult<()> {
        Ok(())
    }
    fn coerce(&self, v: Datum, _: SqlType, to: SqlType) -> PgResult<Datum> {
        Ok(match (to.oid, &v) {
            (oid::TEXT, _) => Datum::text(&out(&v)),
            (oid::INT4, Datum::Text(s)) => Datum::Int4(s.parse().map_err(|_| PgError::new("22P02", format!("invalid input syntax for type integer: \"{s}\"")))?),
            (oid::INT8, Datum::Int4(i)) => Datum::Int8(*i as i64),
            _ => v,
        })
    }
    fn output(&self, v: &Datum, _: SqlType) -> PgResult<String> {
        Ok(out(v))
    }
    fn input(&self, t: &str, _: SqlType) -> PgResult<Datum> {
        Ok(Datum::text(t))
    }
    fn parse_type(&self, name: &str) -> PgResult<SqlType> {
        Ok(SqlType::new(match name {
            "int" | "integer" => oid::INT4,
            "text" => oid::TEXT,
            "record" => oid::RECORD,
            "boolean" => oid::BOOL,
            "int[]" => oid::INT4_ARRAY,
            _ => return Err(PgError::new("42704", format!("type \"{name}\" does not exist"))),
        }))
    }
    fn column_type(&self, _: &[&str], _: &str) -> PgResult<SqlType> {
        Err(PgError::internal("mock"))
    }
    fn composite_fields(&self, _: SqlType) -> Option<Vec<(String, SqlType)>> {
        None
    }
    fn relation_row_type(&self, _: &[&str]) -> PgResult<(SqlType, Vec<(String, SqlType)>)> {
        Err(PgError::internal("mock"))
    }
    fn type_name(&self, _: SqlType) -> String {
        "integer".into()
    }
    fn notice(&self, n: PgError) {
        self.log.borrow_mut().push(format!("{}: {}", n.severity.as_str(), n.message));
    }
    fn setting(&self, _: &str) -> Option<String> {
        None
    }
    fn check_interrupts(&self) -> PgResult<()> {
        Ok(())
    }
    fn language_cache(&self) -> &RefCell<HashMap<(Oid, u64), Rc<dyn Any>>> {
        &self.cache
    }
}

fn run_do(src: &str) -> (PgResult<()>, Vec<String>) {
    let m = Mock::new();
    let r = PlPgSql.inline(src, &m);
    let log = m.log.borrow().clone();
    (r, log)
}

fn func(src: &str, params: Vec<(String, SqlType, char)>) -> FunctionSource {
    FunctionSource {
        oid: 16400,
        name: "f".into(),
        signature: "f(integer)".into(),
        kind: 'f',
        params,
        ret_type: SqlType::new(oid::INT4),
        retset: false,
        src: src.into(),
        version: 1,
    }
}

fn call(m: &Mock, f: &FunctionSource, args: &[Datum]) -> PgResult<Datum> {
    let types: Vec<SqlType> = f.params.iter().filter(|p| p.2 != 'o').map(|p| p.1).collect();
    let ca = CallArgs { args, arg_types: &types, ret_type: f.ret_type, ret_columns: None, trigger: None, nonatomic: false };
    match PlPgSql.call(f, &ca, m)? {
        CallOutcome::Value(v) => Ok(v),
        CallOutcome::Set(_) => panic!("set"),
    }
}

#[test]
fn raise_formats_and_loops() {
    let (r, log) = run_do(
        "declare s int := 0; begin for i in 1..10 loop continue when i % 2 = 0; s := s + i; end loop; raise notice 'sum % and %% of %', s, 'x' || s; end",
    );
    r.unwrap();
    assert_eq!(log, vec!["NOTICE: sum 25 and % of x25"]);
}

#[test]
fn labels_exit_and_while() {
    let (r, log) = run_do(
        "declare n int := 0; begin <<outer>> loop n := n + 1; <<inner>> while true loop exit outer when n > 3; exit; end loop; end loop; \
         for i in reverse 10..1 by 3 loop raise notice 'i=%', i; end loop; raise notice 'n=%', n; end",
    );
    r.unwrap();
    assert_eq!(log, vec!["NOTICE: i=10", "NOTICE: i=7", "NOTICE: i=4", "NOTICE: i=1", "NOTICE: n=4"]);
}

#[test]
fn exceptions_and_subtransactions() {
    let (r, log) = run_do(
        "declare x int := 1; begin begin x := boom; exception when division_by_zero then raise notice 'caught % %', sqlstate, sqlerrm; end; \
         begin raise exception 'mine %', x using errcode = 'P0099', hint = 'h'; exception when sqlstate 'P0099' then raise notice 'got %', sqlerrm; end; end",
    );
    r.unwrap();
    assert_eq!(
        log,
        vec!["begin sub", "rollback sub", "NOTICE: caught 22012 division by zero", "begin sub", "rollback sub", "NOTICE: got mine 1"]
    );
}

#[test]
fn errors_carry_context_lines() {
    let (r, _) = run_do("begin\n  raise notice 'a';\n  raise exception 'bad %', 1 + 1;\nend");
    let e = r.unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("P0001", "bad 2"));
    assert_eq!(e.context.as_deref(), Some("PL/pgSQL function inline_code_block line 3 at RAISE"));
    let (r, _) = run_do("declare x int; begin\n x := boom;\nend");
    let e = r.unwrap_err();
    assert_eq!(e.context.as_deref(), Some("PL/pgSQL assignment \"x := boom\"\nPL/pgSQL function inline_code_block line 2 at assignment"));
    // an error not caught by the handlers passes through with one context line
    let (r, log) = run_do("begin\n begin\n  x := 1/0;\n exception when no_data_found then null;\n end;\nend");
    assert!(r.unwrap_err().message.contains("not a known variable"));
    assert!(log.is_empty());
    let (r, log) = run_do("declare x int; begin\n begin\n  x := 1/0;\n exception when no_data_found then null;\n end;\nend");
    let e = r.unwrap_err();
    assert_eq!(e.code, "22012");
    assert_eq!(e.context.as_deref(), Some("PL/pgSQL assignment \"x := 1/0\"\nPL/pgSQL function inline_code_block line 3 at assignment"));
    assert_eq!(log, vec!["begin sub", "rollback sub"]);
}

#[test]
fn reraise_and_stacked_diagnostics() {
    let (r, log) = run_do(
        "declare m text; c text; begin begin raise exception 'inner' using detail = 'd'; exception when others then get stacked diagnostics m = message_text, c = pg_exception_detail; raise notice '% %', m, c; raise; end; end",
    );
    let e = r.unwrap_err();
    assert_eq!(e.message, "inner");
    assert_eq!(log[2], "NOTICE: inner d");
}

#[test]
fn case_statement_and_case_not_found() {
    let (r, log) = run_do("declare x int := 2; begin case x when 1, 3 then raise notice 'odd'; when 2 then raise notice 'two'; end case; case when x > 5 then null; end case; end");
    assert_eq!(log, vec!["NOTICE: two"]);
    let e = r.unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("20000", "case not found"));
}

#[test]
fn select_into_found_and_strict() {
    let (r, log) = run_do("declare a int; b text; begin select 1, 'x' into a, b; raise notice '% % %', a, b, found; end");
    r.unwrap();
    assert_eq!(log, vec!["NOTICE: 1 x t"]);
    let (r, log) = run_do("declare r record; begin select 5 as k, 'v' as w into r; raise notice '% %', r.k, r.w; end");
    r.unwrap();
    assert_eq!(log, vec!["NOTICE: 5 v"]);
    let (r, _) = run_do("declare r record; begin raise notice '%', r.k; end");
    let e = r.unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("55000", "record \"r\" is not assigned yet"));
}

#[test]
fn functions_params_and_plan_cache() {
    let m = Mock::new();
    let f = func("declare t int := 0; begin for i in 1..n loop if i % 3 = 0 then t := t + i; end if; end loop; return t + $1 * 0; end", vec![("n".into(), SqlType::new(oid::INT4), 'i')]);
    assert_eq!(call(&m, &f, &[Datum::Int4(10)]).unwrap(), Datum::Int4(18));
    let after_first = *m.prepares.borrow();
    assert_eq!(call(&m, &f, &[Datum::Int4(100)]).unwrap(), Datum::Int4(1683));
    // compiled once per session, plans reused
    assert_eq!(*m.prepares.borrow(), after_first);
    let g = func("begin if n > 0 then return 1; end if; end", vec![("n".into(), SqlType::new(oid::INT4), 'i')]);
    let e = call(&m, &FunctionSource { oid: 16401, ..g }, &[Datum::Int4(0)]).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("2F005", "control reached end of function without RETURN"));
    assert_eq!(e.context.as_deref(), Some("PL/pgSQL function f(integer)"));
}

#[test]
fn execute_using_and_row_count() {
    let (r, log) = run_do("declare n int; begin execute 'update t set a = $1' using 7; get diagnostics n = row_count; raise notice 'n=%', n; end");
    r.unwrap();
    assert_eq!(log, vec!["dynamic update t set a = $1 7", "NOTICE: n=3"]);
}

#[test]
fn assert_and_not_null() {
    let (r, _) = run_do("begin assert 1 = 2, 'nope'; end");
    let e = r.unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("P0004", "nope"));
    let (r, _) = run_do("declare x int not null := 1; begin x := null; end");
    let e = r.unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("22004", "null value cannot be assigned to variable \"x\" declared NOT NULL"));
}
