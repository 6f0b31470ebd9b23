//! The trigger engine without PL/pgSQL: a tiny procedural language
//! registered by the test ("tgtest") runs trigger functions whose body is
//! a list of commands, so firing order, NEW/OLD, skipping rows, changed
//! rows, WHEN, UPDATE OF, statement triggers and the catalog can be
//! checked in the SQL crate alone.
//!
//! A body is commands separated by `;`:
//!   `log`        inserts a line describing the firing into tg_log
//!   `set c v`    sets NEW's column c to the text v
//!   `null`       returns NULL (skips the row)
//!   `exec sql`   runs sql with NEW's (or OLD's) columns as $1, $2, ...
//!   `old`        returns OLD
//! With none of `null`/`old`, a row trigger returns NEW (OLD for DELETE).

use std::sync::Arc;

use tusk_sql::procedural::{self, CallArgs, CallOutcome, FunctionSource, LanguageHandler, Spi};
use tusk_sql::spi::SessionSpi;
use tusk_sql::{Cluster, SqlSession};
use tusk_types::{Datum, PgResult, SqlType};

struct TestLang;

impl LanguageHandler for TestLang {
    fn name(&self) -> &'static str {
        "tgtest"
    }
    fn validate(&self, _func: &FunctionSource, _spi: &dyn Spi) -> PgResult<()> {
        Ok(())
    }
    fn inline(&self, _source: &str, _spi: &dyn Spi) -> PgResult<()> {
        Ok(())
    }
    fn call(&self, func: &FunctionSource, call: &CallArgs, spi: &dyn Spi) -> PgResult<CallOutcome> {
        let tg = call.trigger.expect("only triggers are written in tgtest");
        let mut new = tg.new.clone();
        let row = tg.new.as_ref().or(tg.old.as_ref());
        let show = |r: &Option<Vec<Datum>>| -> PgResult<String> {
            match r {
                None => Ok("-".into()),
                Some(vals) => {
                    let mut parts = Vec::new();
                    for (v, (_, ty)) in vals.iter().zip(&tg.columns) {
                        parts.push(if v.is_null() { "null".to_string() } else { spi.output(v, *ty)? });
                    }
                    Ok(format!("({})", parts.join(",")))
                }
            }
        };
        let mut ret_null = false;
        let mut ret_old = false;
        for cmd in func.src.split(';').map(str::trim).filter(|c| !c.is_empty()) {
            let (word, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
            match word {
                "log" => {
                    let line = format!(
                        "{} {} {} {} {} args={} new={} old={}",
                        tg.name,
                        tg.when,
                        tg.level,
                        tg.op,
                        tg.table_name,
                        tg.args.join("|"),
                        show(&new)?,
                        show(&tg.old)?
                    );
                    spi.execute_dynamic("INSERT INTO tg_log(line) VALUES ($1)", &[(Datum::text(&line), SqlType::new(tusk_types::oid::TEXT))], 0)?;
                }
                "set" => {
                    let (col, val) = rest.split_once(' ').unwrap_or((rest, ""));
                    let i = tg.columns.iter().position(|(n, _)| n == col).expect("column");
                    let v = spi.input(val, tg.columns[i].1)?;
                    if let Some(n) = new.as_mut() {
                        n[i] = v;
                    }
                }
                "null" => ret_null = true,
                "old" => ret_old = true,
                "exec" => {
                    let args: Vec<(Datum, SqlType)> = row.map(|r| r.iter().cloned().zip(tg.columns.iter().map(|c| c.1)).collect()).unwrap_or_default();
                    spi.execute_dynamic(rest, &args, 0)?;
                }
                other => panic!("unknown tgtest command {other}"),
            }
        }
        if ret_null || tg.level == "STATEMENT" {
            return Ok(CallOutcome::Value(Datum::Null));
        }
        let out = if ret_old || tg.op == "DELETE" { tg.old.clone() } else { new };
        Ok(CallOutcome::Value(out.map(|r| Datum::Record(Arc::new(r))).unwrap_or(Datum::Null)))
    }
}

struct Db {
    s: SqlSession,
}

impl Db {
    fn new(name: &str) -> Db {
        procedural::register_language(Arc::new(TestLang));
        let dir = std::env::temp_dir().join(format!("tusk-triggers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cluster = Cluster::open(&dir).expect("open cluster");
        let s = SqlSession::new(cluster, "postgres", "postgres", 1).expect("session");
        let mut db = Db { s };
        db.s.begin(None);
        db.run("CREATE TABLE tg_log (n serial, line text)");
        db.commit();
        db
    }

    fn commit(&mut self) {
        self.s.commit().expect("commit");
        self.s.begin(None);
    }

    fn run(&mut self, sql: &str) -> Vec<Vec<String>> {
        self.try_run(sql).unwrap_or_else(|e| panic!("{sql}: {}", e.message))
    }

    fn try_run(&mut self, sql: &str) -> Result<Vec<Vec<String>>, tusk_types::PgError> {
        let spi = SessionSpi::exclusive(&mut self.s, false);
        let r = spi.execute_dynamic(sql, &[], 0)?;
        let mut out = Vec::new();
        for row in &r.rows {
            let mut line = Vec::new();
            for (v, (_, ty)) in row.iter().zip(&r.columns) {
                line.push(if v.is_null() { "NULL".to_string() } else { spi.output(v, *ty)? });
            }
            out.push(line);
        }
        if r.columns.is_empty() {
            out.push(vec![r.tag.clone()]);
        }
        Ok(out)
    }

    fn log(&mut self) -> Vec<String> {
        let rows = self.run("SELECT line FROM tg_log ORDER BY n");
        self.run("DELETE FROM tg_log");
        rows.into_iter().map(|mut r| r.remove(0)).collect()
    }

    fn func(&mut self, name: &str, body: &str) {
        self.run(&format!("CREATE FUNCTION {name}() RETURNS trigger LANGUAGE tgtest AS '{body}'"));
    }
}

fn rows(v: &[&[&str]]) -> Vec<Vec<String>> {
    v.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
}

#[test]
fn before_row_changes_and_skips_rows() {
    let mut db = Db::new("before");
    db.run("CREATE TABLE t (a int, b text, c timestamptz)");
    db.func("stamp", "set b stamped; set c 2020-01-01 00:00:00+00");
    db.func("skip_neg", "null");
    db.run("CREATE TRIGGER t_stamp BEFORE INSERT OR UPDATE ON t FOR EACH ROW EXECUTE FUNCTION stamp()");
    db.run("CREATE TRIGGER t_skip BEFORE INSERT ON t FOR EACH ROW WHEN (new.a < 0) EXECUTE FUNCTION skip_neg()");
    assert_eq!(db.run("INSERT INTO t(a) VALUES (1), (-1), (2)"), rows(&[&["INSERT 0 2"]]));
    assert_eq!(db.run("SELECT a, b, c IS NOT NULL FROM t ORDER BY a"), rows(&[&["1", "stamped", "t"], &["2", "stamped", "t"]]));
    assert_eq!(db.run("INSERT INTO t(a) VALUES (-5)"), rows(&[&["INSERT 0 0"]]));
    db.run("UPDATE t SET b = 'x' WHERE a = 1");
    assert_eq!(db.run("SELECT b FROM t WHERE a = 1"), rows(&[&["stamped"]]));
}

#[test]
fn firing_order_and_levels() {
    let mut db = Db::new("order");
    db.run("CREATE TABLE t (a int, b int)");
    db.func("logit", "log");
    db.run("CREATE TRIGGER b2 BEFORE INSERT OR UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION logit('x', 'y')");
    db.run("CREATE TRIGGER b1 BEFORE INSERT OR UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION logit()");
    db.run("CREATE TRIGGER a1 AFTER INSERT OR UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION logit()");
    db.run("CREATE TRIGGER s1 BEFORE INSERT OR UPDATE OR DELETE ON t FOR EACH STATEMENT EXECUTE FUNCTION logit()");
    db.run("CREATE TRIGGER s2 AFTER INSERT OR UPDATE OR DELETE ON t FOR EACH STATEMENT EXECUTE FUNCTION logit()");
    db.run("INSERT INTO t VALUES (1, 10), (2, 20)");
    assert_eq!(
        db.log(),
        vec![
            "s1 BEFORE STATEMENT INSERT t args= new=- old=-",
            "b1 BEFORE ROW INSERT t args= new=(1,10) old=-",
            "b2 BEFORE ROW INSERT t args=x|y new=(1,10) old=-",
            "b1 BEFORE ROW INSERT t args= new=(2,20) old=-",
            "b2 BEFORE ROW INSERT t args=x|y new=(2,20) old=-",
            "a1 AFTER ROW INSERT t args= new=(1,10) old=-",
            "a1 AFTER ROW INSERT t args= new=(2,20) old=-",
            "s2 AFTER STATEMENT INSERT t args= new=- old=-",
        ]
    );
    db.run("UPDATE t SET b = b + 1 WHERE a = 1");
    assert_eq!(
        db.log(),
        vec![
            "s1 BEFORE STATEMENT UPDATE t args= new=- old=-",
            "b1 BEFORE ROW UPDATE t args= new=(1,11) old=(1,10)",
            "b2 BEFORE ROW UPDATE t args=x|y new=(1,11) old=(1,10)",
            "a1 AFTER ROW UPDATE t args= new=(1,11) old=(1,10)",
            "s2 AFTER STATEMENT UPDATE t args= new=- old=-",
        ]
    );
    // Statement triggers fire even when no row is touched.
    db.run("DELETE FROM t WHERE a = 42");
    assert_eq!(db.log(), vec!["s1 BEFORE STATEMENT DELETE t args= new=- old=-", "s2 AFTER STATEMENT DELETE t args= new=- old=-"]);
    db.run("DELETE FROM t WHERE a = 2");
    assert_eq!(
        db.log(),
        vec![
            "s1 BEFORE STATEMENT DELETE t args= new=- old=-",
            "b1 BEFORE ROW DELETE t args= new=- old=(2,20)",
            "b2 BEFORE ROW DELETE t args=x|y new=- old=(2,20)",
            "a1 AFTER ROW DELETE t args= new=- old=(2,20)",
            "s2 AFTER STATEMENT DELETE t args= new=- old=-",
        ]
    );
    // Disabled triggers do not fire; session_replication_role picks REPLICA/ALWAYS ones.
    db.run("ALTER TABLE t DISABLE TRIGGER ALL");
    db.run("ALTER TABLE t ENABLE ALWAYS TRIGGER a1");
    db.run("ALTER TABLE t ENABLE REPLICA TRIGGER b1");
    db.run("INSERT INTO t VALUES (3, 30)");
    assert_eq!(db.log(), vec!["a1 AFTER ROW INSERT t args= new=(3,30) old=-"]);
    db.run("SET session_replication_role = replica");
    db.run("INSERT INTO t VALUES (4, 40)");
    assert_eq!(db.log(), vec!["b1 BEFORE ROW INSERT t args= new=(4,40) old=-", "a1 AFTER ROW INSERT t args= new=(4,40) old=-"]);
}

#[test]
fn update_of_columns_and_when() {
    let mut db = Db::new("updof");
    db.run("CREATE TABLE t (a int, b int, c int)");
    db.func("logit", "log");
    db.run("CREATE TRIGGER ub AFTER UPDATE OF b ON t FOR EACH ROW EXECUTE FUNCTION logit()");
    db.run("CREATE TRIGGER uw AFTER UPDATE ON t FOR EACH ROW WHEN (old.c IS DISTINCT FROM new.c) EXECUTE FUNCTION logit()");
    db.run("INSERT INTO t VALUES (1, 1, 1)");
    db.run("UPDATE t SET a = 2");
    assert!(db.log().is_empty());
    db.run("UPDATE t SET b = 2");
    assert_eq!(db.log(), vec!["ub AFTER ROW UPDATE t args= new=(2,2,1) old=(2,1,1)"]);
    db.run("UPDATE t SET c = 5");
    assert_eq!(db.log(), vec!["uw AFTER ROW UPDATE t args= new=(2,2,5) old=(2,2,1)"]);
}

#[test]
fn routing_trigger_partitions_rows() {
    let mut db = Db::new("route");
    db.run("CREATE TABLE parent (id int, v text)");
    db.run("CREATE TABLE child_small (id int, v text)");
    db.commit();
    db.func("route", "exec INSERT INTO child_small VALUES ($1, $2); null");
    db.run("CREATE TRIGGER parent_route BEFORE INSERT ON parent FOR EACH ROW EXECUTE FUNCTION route()");
    assert_eq!(db.run("INSERT INTO parent VALUES (1, 'a'), (2, 'b')"), rows(&[&["INSERT 0 0"]]));
    assert_eq!(db.run("SELECT count(*) FROM parent"), rows(&[&["0"]]));
    assert_eq!(db.run("SELECT id, v FROM child_small ORDER BY id"), rows(&[&["1", "a"], &["2", "b"]]));
}

#[test]
fn recursion_is_bounded() {
    let mut db = Db::new("recurse");
    db.run("CREATE TABLE r (a int)");
    db.func("again", "exec INSERT INTO r VALUES ($1 + 1)");
    db.run("CREATE TRIGGER r_again BEFORE INSERT ON r FOR EACH ROW EXECUTE FUNCTION again()");
    let err = db.try_run("INSERT INTO r VALUES (1)").unwrap_err();
    assert_eq!(err.code, "54001", "{}", err.message);
}

#[test]
fn catalog_and_ddl_errors() {
    let mut db = Db::new("ddl");
    db.run("CREATE TABLE t (a int, b int)");
    db.run("CREATE VIEW v AS SELECT * FROM t");
    db.func("logit", "log");
    db.run("CREATE FUNCTION notrig() RETURNS int LANGUAGE sql AS 'SELECT 1'");
    let code = |db: &mut Db, sql: &str| db.try_run(sql).map(|_| String::new()).unwrap_or_else(|e| format!("{} {}", e.code, e.message));
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION notrig()"), "42P17 function notrig must return type trigger");
    assert_eq!(code(&mut db, "CREATE TRIGGER x INSTEAD OF INSERT ON t FOR EACH ROW EXECUTE FUNCTION logit()"), "42809 \"t\" is a table");
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE INSERT ON v FOR EACH ROW EXECUTE FUNCTION logit()"), "42809 \"v\" is a view");
    assert_eq!(code(&mut db, "CREATE TRIGGER x INSTEAD OF INSERT ON v EXECUTE FUNCTION logit()"), "0A000 INSTEAD OF triggers must be FOR EACH ROW");
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW WHEN (old.a = 1) EXECUTE FUNCTION logit()"), "42P17 INSERT trigger's WHEN condition cannot reference OLD values");
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE DELETE ON t FOR EACH STATEMENT WHEN (old.a = 1) EXECUTE FUNCTION logit()"), "42P17 statement trigger's WHEN condition cannot reference column values");
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE TRUNCATE ON t FOR EACH ROW EXECUTE FUNCTION logit()"), "0A000 TRUNCATE FOR EACH ROW triggers are not supported");
    db.run("CREATE TRIGGER x AFTER UPDATE OF b ON t FOR EACH ROW WHEN (old.b <> new.b) EXECUTE FUNCTION logit('a''b')");
    assert_eq!(code(&mut db, "CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION logit()"), "42710 trigger \"x\" for relation \"t\" already exists");
    assert_eq!(
        db.run("SELECT tgname, tgtype, tgenabled, tgnargs, tgattr::text, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
        rows(&[&[
            "x",
            "17",
            "O",
            "1",
            "2",
            "CREATE TRIGGER x AFTER UPDATE OF b ON public.t FOR EACH ROW WHEN ((old.b <> new.b)) EXECUTE FUNCTION logit('a''b')"
        ]])
    );
    db.run("ALTER TRIGGER x ON t RENAME TO y");
    db.run("DROP TRIGGER y ON t");
    assert_eq!(code(&mut db, "DROP TRIGGER y ON t"), "42704 trigger \"y\" for table \"t\" does not exist");
    db.run("DROP TRIGGER IF EXISTS y ON t");
}
