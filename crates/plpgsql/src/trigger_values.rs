//! The per-firing values a trigger function sees that are the same for
//! every row of a statement (the shape of NEW and OLD, the TG_* variables):
//! made once and reused while the firings that follow are of the same
//! trigger, instead of copied and allocated for each row. Kept per thread
//! (a session's), compared by content, so a changed trigger or table never
//! sees stale values.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use tusk_sql::procedural::TriggerData;
use tusk_types::array::Array;
use tusk_types::{oid, Datum, SqlType};

pub type Shape = Rc<Vec<(String, SqlType)>>;

struct Cached {
    name: String,
    when: &'static str,
    level: &'static str,
    op: &'static str,
    relid: tusk_types::Oid,
    table_name: String,
    table_schema: String,
    args: Vec<String>,
    shape: Shape,
    /// TG_NAME, TG_WHEN, TG_LEVEL, TG_OP, TG_RELID, TG_RELNAME,
    /// TG_TABLE_NAME, TG_TABLE_SCHEMA, TG_NARGS, TG_ARGV.
    tg: Vec<Datum>,
}

impl Cached {
    fn matches(&self, t: &TriggerData) -> bool {
        self.relid == t.relid
            && self.op == t.op
            && self.when == t.when
            && self.level == t.level
            && self.name == t.name
            && self.table_name == t.table_name
            && self.table_schema == t.table_schema
            && self.args == t.args
            && *self.shape == t.columns
    }
}

thread_local! {
    static LAST: RefCell<Option<Rc<Cached>>> = const { RefCell::new(None) };
}

/// The shape of NEW/OLD and the TG_* values of a firing.
pub fn of(t: &TriggerData) -> (Shape, Vec<Datum>) {
    let hit = LAST.with(|l| l.borrow().as_ref().filter(|c| c.matches(t)).cloned());
    let c = match hit {
        Some(c) => c,
        None => {
            let argv = if t.args.is_empty() {
                Datum::Array(Arc::new(Array::empty(oid::TEXT)))
            } else {
                // Subscripts count from 0, as PostgreSQL's plpgsql builds it.
                let mut a = Array::from_vec(oid::TEXT, t.args.iter().map(|a| Datum::text(a)).collect());
                a.dims = vec![(t.args.len() as i32, 0)];
                Datum::Array(Arc::new(a))
            };
            let tg = vec![
                Datum::text(&t.name),
                Datum::text(t.when),
                Datum::text(t.level),
                Datum::text(t.op),
                Datum::Oid(t.relid),
                Datum::text(&t.table_name),
                Datum::text(&t.table_name),
                Datum::text(&t.table_schema),
                Datum::Int4(t.args.len() as i32),
                argv,
            ];
            let c = Rc::new(Cached {
                name: t.name.clone(),
                when: t.when,
                level: t.level,
                op: t.op,
                relid: t.relid,
                table_name: t.table_name.clone(),
                table_schema: t.table_schema.clone(),
                args: t.args.clone(),
                shape: Rc::new(t.columns.clone()),
                tg,
            });
            LAST.with(|l| *l.borrow_mut() = Some(c.clone()));
            c
        }
    };
    (c.shape.clone(), c.tg.clone())
}
