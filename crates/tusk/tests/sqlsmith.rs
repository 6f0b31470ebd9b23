//! Random SQL, in the spirit of SQLsmith: a seeded generator of SELECTs
//! (expressions with operators, casts — valid and not —, string, math,
//! date/time, aggregate and window functions, CASE/COALESCE/NULLIF, joins
//! of every kind, scalar/IN/EXISTS/ANY/ALL/LATERAL/FROM subqueries, CTEs,
//! set operations, GROUP BY/HAVING, ORDER BY/LIMIT/OFFSET, DISTINCT ON) and
//! of INSERT/UPDATE/DELETE inside transactions that are rolled back, over a
//! schema with many types, edge values and NULLs.
//!
//! The property checked is robustness, not results: every statement gets
//! rows or an ErrorResponse with a proper SQLSTATE. A failure is a
//! connection that dies, a server that dies, an `XX000` (internal error,
//! which is also what a caught panic reports), a FATAL error, or a statement
//! that does not answer within a generous limit (`statement_timeout` guards
//! the server side; a client-side limit catches a server that ignores it).
//!
//! Determinism: statement `i` of seed `s` is generated from its own random
//! stream derived from `(s, i)` alone, and data-changing statements are
//! rolled back, so any single statement can be replayed:
//!
//! ```text
//! TUSK_SQLSMITH_SEED=<s> TUSK_SQLSMITH_START=<i> TUSK_SQLSMITH_QUERIES=1 \
//!     TUSK_SQLSMITH_VERBOSE=1 cargo test --release -p tusk --test sqlsmith
//! ```
//!
//! Environment:
//! - `TUSK_SQLSMITH_SEED`: the seed (default: a fixed one, printed).
//! - `TUSK_SQLSMITH_QUERIES`: how many statements (default 4000).
//! - `TUSK_SQLSMITH_START`: index of the first statement (default 0).
//! - `TUSK_SQLSMITH_VERBOSE=1`: print every statement and its outcome.
//! - `TUSK_SQLSMITH_SCHEMA_OUT=<file>`: write the schema there as a psql
//!   script, to reproduce a statement by hand.
//! - `TUSK_SQLSMITH_TIMEOUT`: server-side statement_timeout in seconds
//!   (default 10); the client gives up (a hang, so a failure) 60 s later.
//! - `TUSK_SQLSMITH_PG="host=127.0.0.1 port=54329 user=postgres"`: also run
//!   every statement on that PostgreSQL (in a fresh database of its own)
//!   and write where the answers differ to `TUSK_SQLSMITH_REPORT` (default
//!   `sqlsmith-<seed>.txt` in the temporary directory). Only for studying
//!   the differences: the test asserts the robustness property alone.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use common::TestServer;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

// ---------------------------------------------------------------------------
// Randomness: splitmix64, so that a seed means the same statements forever.
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------
// Types and the schema.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    I2,
    I4,
    I8,
    Num,
    F4,
    F8,
    Text,
    Varchar,
    Bool,
    Date,
    Ts,
    Tstz,
    Interval,
    Uuid,
    Bytea,
    I4Arr,
    TextArr,
}

use Ty::*;

const ALL_TYPES: [Ty; 17] = [I2, I4, I8, Num, F4, F8, Text, Varchar, Bool, Date, Ts, Tstz, Interval, Uuid, Bytea, I4Arr, TextArr];

/// Types a select list picks from, the common ones more often.
const OUTPUT_TYPES: [Ty; 24] = [
    I4, I4, I4, I8, I8, Num, Num, F8, Text, Text, Text, Bool, Bool, Date, Ts, Tstz, Interval, I2, F4, Varchar, Uuid, Bytea, I4Arr, TextArr,
];

impl Ty {
    fn sql(self) -> &'static str {
        match self {
            I2 => "int2",
            I4 => "int4",
            I8 => "int8",
            Num => "numeric",
            F4 => "float4",
            F8 => "float8",
            Text => "text",
            Varchar => "varchar",
            Bool => "bool",
            Date => "date",
            Ts => "timestamp",
            Tstz => "timestamptz",
            Interval => "interval",
            Uuid => "uuid",
            Bytea => "bytea",
            I4Arr => "int4[]",
            TextArr => "text[]",
        }
    }

    fn is_array(self) -> bool {
        matches!(self, I4Arr | TextArr)
    }

    fn element(self) -> Ty {
        match self {
            I4Arr => I4,
            TextArr => Text,
            t => t,
        }
    }
}

/// The columns of t1 and t2.
const WIDE: &[(&str, Ty)] = &[
    ("id", I4),
    ("a", I2),
    ("b", I4),
    ("c", I8),
    ("n", Num),
    ("f", F4),
    ("g", F8),
    ("s", Text),
    ("v", Varchar),
    ("ok", Bool),
    ("d", Date),
    ("ts", Ts),
    ("tz", Tstz),
    ("iv", Interval),
    ("u", Uuid),
    ("by", Bytea),
    ("ai", I4Arr),
    ("at", TextArr),
];

/// The columns of t3 (no primary key, duplicates).
const NARROW: &[(&str, Ty)] = &[("k", I4), ("x", I8), ("s", Text), ("n", Num), ("d", Date)];

/// The columns of the view v1.
const VIEW: &[(&str, Ty)] = &[("id", I4), ("b", I4), ("s", Text), ("n", Num), ("d", Date)];

fn values_for(ty: Ty) -> &'static [&'static str] {
    match ty {
        I2 => &["0", "1", "-1", "7", "32767", "-32768", "100"],
        I4 => &["0", "1", "-1", "2", "3", "10", "42", "2147483647", "-2147483648", "1000"],
        I8 => &["0", "1", "-1", "9223372036854775807", "-9223372036854775808", "123456789012", "5"],
        Num => &["0", "1.5", "-2.25", "123456789.123", "0.001", "-999999999.999", "'NaN'", "7"],
        F4 => &["0", "1.5", "-0.5", "'NaN'", "'Infinity'", "'-Infinity'", "3.4e38", "1e-30", "'-0'"],
        F8 => &["0", "2.5", "-1e308", "1e-300", "'NaN'", "'Infinity'", "3.14159", "-7"],
        Text => &[
            "''",
            "'a'",
            "'abc'",
            "'Hello World'",
            "'héllo wörld'",
            "' pad '",
            "'%_x'",
            "'NaN'",
            "'42'",
            "'2020-01-01'",
            "'true'",
            "'a,b,c'",
            "E'tab\\there'",
            "'ÄÖÜ'",
            "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
        ],
        Varchar => &["'xyz'", "''", "'abc'", "'123'", "'Zürich'"],
        Bool => &["true", "false"],
        Date => &["'2000-01-01'", "'2020-02-29'", "'1970-01-01'", "'infinity'", "'-infinity'", "'0001-01-01 BC'", "'9999-12-31'"],
        Ts => &[
            "'2000-01-01 00:00:00'",
            "'2020-02-29 12:34:56.789'",
            "'infinity'",
            "'-infinity'",
            "'1999-12-31 23:59:59.999999'",
            "'4713-01-01 00:00:00 BC'",
        ],
        Tstz => &["'2000-01-01 00:00:00+00'", "'2021-03-14 01:59:59-05'", "'infinity'", "'1900-06-30 12:00+02'", "'2038-01-19 03:14:07+00'"],
        Interval => &["'1 day'", "'-1 mon'", "'1 year 2 mons 3 days 04:05:06.789'", "'0'", "'100 years'", "'-00:00:01'", "'1 microsecond'"],
        Uuid => &["'00000000-0000-0000-0000-000000000000'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"],
        Bytea => &["'\\x'", "'\\x00'", "'\\xdeadbeef'", "'\\x4142'"],
        I4Arr => &["'{}'", "'{1,2,3}'", "'{NULL,1}'", "'{{1,2},{3,4}}'", "'{-2147483648,2147483647}'", "'[0:1]={5,6}'"],
        TextArr => &["'{}'", "'{a,b}'", "'{NULL,\"\"}'", "'{\"with space\",\"x,y\"}'"],
    }
}

/// The test schema and its rows; the same for every seed.
fn schema() -> Vec<String> {
    let wide_cols = "id int4 PRIMARY KEY, a int2, b int4, c int8, n numeric(12,3), f float4, g float8, s text, \
                     v varchar(20), ok bool, d date, ts timestamp, tz timestamptz, iv interval, u uuid, by bytea, \
                     ai int4[], at text[]";
    let mut out = vec![
        format!("CREATE TABLE t1 ({wide_cols})"),
        format!("CREATE TABLE t2 ({wide_cols})"),
        "CREATE TABLE t3 (k int4, x int8, s text, n numeric, d date)".to_string(),
        "CREATE INDEX t2_b ON t2 (b)".to_string(),
        "CREATE INDEX t2_s ON t2 (s)".to_string(),
        "CREATE INDEX t1_d ON t1 (d, id)".to_string(),
        "CREATE VIEW v1 AS SELECT id, b, s, n, d FROM t1 WHERE id % 2 = 0".to_string(),
    ];
    let mut rng = Rng::new(0x5EED_DA7A);
    let row = |rng: &mut Rng, cols: &[(&str, Ty)], id: Option<i64>| -> String {
        let vals: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| match (i, id) {
                (0, Some(id)) => id.to_string(),
                _ if rng.chance(15) => "NULL".to_string(),
                _ => rng.pick(values_for(*ty)).to_string(),
            })
            .collect();
        format!("({})", vals.join(", "))
    };
    let t1: Vec<String> = (1..=16).map(|i| row(&mut rng, WIDE, Some(i))).collect();
    let t2: Vec<String> = (0..16).map(|i| row(&mut rng, WIDE, Some(i * 2))).collect();
    let t3: Vec<String> = (0..12).map(|_| row(&mut rng, NARROW, None)).collect();
    out.push(format!("INSERT INTO t1 VALUES {}", t1.join(", ")));
    out.push(format!("INSERT INTO t2 VALUES {}", t2.join(", ")));
    out.push(format!("INSERT INTO t3 VALUES {}", t3.join(", ")));
    out.push("ANALYZE".to_string());
    out
}

// ---------------------------------------------------------------------------
// The generator.
// ---------------------------------------------------------------------------

/// A column in scope: `qual.name` of type `ty`.
#[derive(Clone, Debug)]
struct Col {
    qual: String,
    name: String,
    ty: Ty,
}

impl Col {
    fn sql(&self) -> String {
        format!("{}.{}", self.qual, self.name)
    }
}

/// A named relation: a table, view or CTE.
#[derive(Clone, Debug)]
struct Rel {
    name: String,
    cols: Vec<(String, Ty)>,
}

/// Where an expression is being generated.
#[derive(Clone, Default)]
struct Ctx {
    /// Columns of this query level.
    cols: Vec<Col>,
    /// Columns of enclosing levels (correlation).
    outer: Vec<Col>,
    /// Aggregates may be called.
    agg: bool,
    /// Window functions may be called.
    window: bool,
    /// In a grouped query, plain column references come from these only.
    grouped: Option<Vec<Col>>,
}

impl Ctx {
    /// The columns a plain reference may use at this level.
    fn refs(&self) -> &[Col] {
        match &self.grouped {
            Some(g) => g,
            None => &self.cols,
        }
    }

    /// The context of an aggregate's arguments.
    fn inside_aggregate(&self) -> Ctx {
        Ctx { cols: self.cols.clone(), outer: self.outer.clone(), agg: false, window: false, grouped: None }
    }

    /// What a subquery of this level may correlate to.
    fn for_subquery(&self) -> Vec<Col> {
        let mut v = self.refs().to_vec();
        v.extend(self.outer.iter().cloned());
        v
    }
}

/// One generated statement: a query, or steps of a transaction that is
/// rolled back (its first step is BEGIN and its last ROLLBACK).
enum Stmt {
    Query(String),
    Txn(Vec<String>),
    /// A statement with `$n` parameters, run through Parse/Describe/Bind/
    /// Execute with values chosen (from `bind_seed`) by the parameter types
    /// the server infers: NULLs, valid values, and random or crafted bytes
    /// in binary format (which the type's receive function must refuse
    /// cleanly).
    Prepared { sql: String, bind_seed: u64 },
}

struct Select {
    sql: String,
    tys: Vec<Ty>,
}

#[derive(Default, Clone)]
struct SelOpts {
    want: Option<Vec<Ty>>,
    outer: Vec<Col>,
    limit1: bool,
    top: bool,
}

const TEXT_PATTERNS: &[&str] = &["'%a%'", "'a%'", "'%'", "'_'", "'H%d'", "'%\\%%'", "'%é%'", "''", "'[a-c]%'", "'%x_'"];
const REGEXES: &[&str] = &[
    "'a.c'",
    "'^h'",
    "'[0-9]+'",
    "'(a|b)*'",
    "'\\d'",
    "'['",
    "'(?i)x'",
    "'^$'",
    "'o(r|l)'",
    "'\\w+\\s'",
    "'a{2,}'",
    "'(.)\\1'",
    "'[[:alpha:]]'",
    "'*'",
    "'x{3,1}'",
];
const DATE_FIELDS: &[&str] = &["year", "month", "day", "hour", "minute", "second", "dow", "doy", "epoch", "week", "quarter", "century", "millennium", "isoyear", "microseconds", "julian", "decade", "timezone"];
const TRUNC_FIELDS: &[&str] = &["year", "month", "day", "hour", "minute", "week", "quarter", "century", "decade", "millennium", "second", "milliseconds", "microseconds", "bogus"];
const CHAR_FORMATS: &[&str] = &[
    "'YYYY-MM-DD'",
    "'HH24:MI:SS.US'",
    "'Day, DD Month YYYY'",
    "'FM9990.00'",
    "'999,999.99'",
    "'9.99EEEE'",
    "'RN'",
    "'DDTH'",
    "'PL999'",
    "'S9999'",
    "'xyz'",
    "'IYYY-IW'",
    "'Q CC J'",
    "''",
    "'TZ OF'",
    "'\"text\" YYYY'",
    "'MI99'",
];
const ZONES: &[&str] = &["'UTC'", "'America/New_York'", "'Asia/Kolkata'", "'+05:30'", "'Europe/Berlin'", "'Nowhere/Bogus'", "'PST8PDT'", "'-12'"];
const FORMATS: &[&str] = &["'%s'", "'%s-%s'", "'%I'", "'%L'", "'%1$s %1$s'", "'%-10s|'", "'%'", "'%x'", "'%3$s'", "'%%'"];

struct Gen {
    rng: Rng,
    /// When set, some literals become `$n` parameters; how many so far.
    params: Option<u32>,
    next_alias: u32,
    ctes: Vec<Rel>,
    /// Remaining query nesting.
    qdepth: u32,
}

fn base_rels() -> Vec<Rel> {
    let rel = |name: &str, cols: &[(&str, Ty)]| Rel { name: name.to_string(), cols: cols.iter().map(|(n, t)| (n.to_string(), *t)).collect() };
    vec![rel("t1", WIDE), rel("t2", WIDE), rel("t3", NARROW), rel("v1", VIEW)]
}

impl Gen {
    fn new(seed: u64, index: u64) -> Gen {
        let mut mix = Rng::new(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        mix.next_u64();
        let mut rng = Rng::new(mix.next_u64());
        let qdepth = if rng.chance(40) { 1 } else { 2 };
        Gen { rng, params: None, next_alias: 0, ctes: Vec::new(), qdepth }
    }

    fn alias(&mut self, prefix: &str) -> String {
        self.next_alias += 1;
        format!("{prefix}{}", self.next_alias)
    }

    fn any_type(&mut self) -> Ty {
        self.rng.pick(&ALL_TYPES)
    }

    fn out_type(&mut self) -> Ty {
        self.rng.pick(&OUTPUT_TYPES)
    }

    /// How deep an expression tree may grow.
    fn edepth(&mut self) -> u32 {
        self.rng.pick(&[1, 2, 2, 3, 3, 4])
    }

    fn small_int(&mut self) -> String {
        self.rng.range(-2, 12).to_string()
    }

    // -- statements ---------------------------------------------------------

    fn statement(&mut self) -> Stmt {
        match self.rng.below(100) {
            0..=82 => {
                let sel = self.top_select();
                Stmt::Query(sel.sql)
            }
            83 => {
                let sel = self.top_select();
                let opts = self.rng.pick(&["", "(COSTS OFF) ", "(VERBOSE) ", "(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "]);
                Stmt::Query(format!("EXPLAIN {opts}{}", sel.sql))
            }
            84..=89 => {
                self.params = Some(0);
                let sel = self.top_select();
                Stmt::Prepared { sql: sel.sql, bind_seed: self.rng.next_u64() }
            }
            90..=91 => {
                // A bare VALUES list.
                let tys: Vec<Ty> = (0..1 + self.rng.below(3)).map(|_| self.out_type()).collect();
                let cx = Ctx::default();
                let rows: Vec<String> = (0..1 + self.rng.below(4))
                    .map(|_| format!("({})", tys.iter().map(|&t| self.expr(&cx, t, 2)).collect::<Vec<_>>().join(", ")))
                    .collect();
                let order = if self.rng.chance(50) { " ORDER BY 1" } else { "" };
                Stmt::Query(format!("VALUES {}{order}", rows.join(", ")))
            }
            _ => self.transaction(),
        }
    }

    fn transaction(&mut self) -> Stmt {
        let mut steps = vec!["BEGIN".to_string()];
        for _ in 0..1 + self.rng.below(3) {
            if self.rng.chance(15) {
                // A cursor, a table made from a query, or a prepared
                // statement, in place of a data change.
                let sel = self.top_select().sql;
                let tag = self.rng.next_u64() % 1_000_000;
                match self.rng.below(3) {
                    0 => {
                        let scroll = self.rng.pick(&["", "SCROLL ", "NO SCROLL "]);
                        steps.push(format!("DECLARE cur{tag} {scroll}CURSOR FOR {sel}"));
                        for _ in 0..1 + self.rng.below(3) {
                            let how = self.rng.pick(&["NEXT", "2", "ALL", "PRIOR", "FIRST", "ABSOLUTE 3", "RELATIVE -1", "FORWARD 5", "BACKWARD ALL", "LAST"]);
                            steps.push(format!("FETCH {how} FROM cur{tag}"));
                        }
                        if self.rng.chance(50) {
                            steps.push(format!("MOVE {} IN cur{tag}", self.rng.pick(&["NEXT", "ALL", "ABSOLUTE 0"])));
                            steps.push(format!("FETCH NEXT FROM cur{tag}"));
                        }
                        steps.push(format!("CLOSE cur{tag}"));
                    }
                    1 => {
                        steps.push(format!("CREATE TEMP TABLE tmp{tag} AS {sel}"));
                        steps.push(format!("SELECT * FROM tmp{tag} ORDER BY 1"));
                        steps.push(format!("INSERT INTO tmp{tag} SELECT * FROM tmp{tag}"));
                        steps.push(format!("SELECT count(*) FROM tmp{tag}"));
                    }
                    _ => {
                        steps.push(format!("PREPARE p{tag} AS {sel}"));
                        steps.push(format!("EXECUTE p{tag}"));
                        steps.push(format!("EXECUTE p{tag}"));
                        steps.push(format!("DEALLOCATE p{tag}"));
                    }
                }
                continue;
            }
            if self.rng.chance(15) {
                steps.push("SAVEPOINT sp".to_string());
                steps.push(self.dml());
                steps.push("ROLLBACK TO SAVEPOINT sp".to_string());
            } else {
                steps.push(self.dml());
            }
            if self.rng.chance(30) {
                steps.push(self.top_select().sql);
            }
        }
        steps.push("ROLLBACK".to_string());
        Stmt::Txn(steps)
    }

    fn table_for_dml(&mut self) -> Rel {
        let rels = base_rels();
        rels[self.rng.below(3)].clone()
    }

    fn returning(&mut self, cx: &Ctx) -> String {
        if !self.rng.chance(35) {
            return String::new();
        }
        if self.rng.chance(30) {
            return " RETURNING *".to_string();
        }
        let items: Vec<String> = (0..1 + self.rng.below(3)).map(|_| {
            let t = self.out_type();
            self.expr(cx, t, 2)
        }).collect();
        format!(" RETURNING {}", items.join(", "))
    }

    fn dml(&mut self) -> String {
        let rel = self.table_for_dml();
        let alias = self.alias("m");
        let cols: Vec<Col> = rel.cols.iter().map(|(n, t)| Col { qual: alias.clone(), name: n.clone(), ty: *t }).collect();
        let cx = Ctx { cols: cols.clone(), ..Ctx::default() };
        match self.rng.below(10) {
            0..=3 => {
                // INSERT
                let n = 1 + self.rng.below(rel.cols.len());
                let mut chosen: Vec<usize> = (0..rel.cols.len()).collect();
                // Keep the primary key among the chosen columns most of the time.
                let keep_first = self.rng.chance(85);
                let mut picked = Vec::new();
                if keep_first {
                    picked.push(chosen.remove(0));
                }
                while picked.len() < n && !chosen.is_empty() {
                    let i = self.rng.below(chosen.len());
                    picked.push(chosen.remove(i));
                }
                picked.sort();
                let names: Vec<&str> = picked.iter().map(|&i| rel.cols[i].0.as_str()).collect();
                let tys: Vec<Ty> = picked.iter().map(|&i| rel.cols[i].1).collect();
                let source = if self.rng.chance(60) {
                    let empty = Ctx::default();
                    let rows: Vec<String> = (0..1 + self.rng.below(3))
                        .map(|_| {
                            let vals: Vec<String> = tys
                                .iter()
                                .enumerate()
                                .map(|(j, &t)| {
                                    if j == 0 && keep_first && rel.name != "t3" && self.rng.chance(70) {
                                        self.rng.range(100, 200).to_string()
                                    } else if self.rng.chance(10) {
                                        "DEFAULT".to_string()
                                    } else {
                                        self.expr(&empty, t, 2)
                                    }
                                })
                                .collect();
                            format!("({})", vals.join(", "))
                        })
                        .collect();
                    format!("VALUES {}", rows.join(", "))
                } else {
                    self.select(SelOpts { want: Some(tys.clone()), ..Default::default() }).sql
                };
                let conflict = if rel.name != "t3" && self.rng.chance(30) {
                    if self.rng.chance(50) {
                        " ON CONFLICT DO NOTHING".to_string()
                    } else {
                        let (col, ty) = rel.cols[1 + self.rng.below(rel.cols.len() - 1)].clone();
                        let ex = Ctx {
                            cols: vec![Col { qual: "excluded".into(), name: col.clone(), ty }, Col { qual: rel.name.clone(), name: col.clone(), ty }],
                            ..Ctx::default()
                        };
                        let val = self.expr(&ex, ty, 2);
                        format!(" ON CONFLICT (id) DO UPDATE SET {col} = {val}")
                    }
                } else {
                    String::new()
                };
                let tcx = Ctx { cols: rel.cols.iter().map(|(n, t)| Col { qual: rel.name.clone(), name: n.clone(), ty: *t }).collect(), ..Ctx::default() };
                let ret = self.returning(&tcx);
                format!("INSERT INTO {} ({}) {source}{conflict}{ret}", rel.name, names.join(", "))
            }
            4..=6 => {
                // UPDATE
                let mut from = String::new();
                let mut ucx = cx.clone();
                if self.rng.chance(25) {
                    let (sql, more) = self.from_item(&[]);
                    from = format!(" FROM {sql}");
                    ucx.cols.extend(more);
                }
                let n = 1 + self.rng.below(3);
                let mut sets = Vec::new();
                let mut used = Vec::new();
                for _ in 0..n {
                    let (col, ty) = rel.cols[self.rng.below(rel.cols.len())].clone();
                    if used.contains(&col) {
                        continue;
                    }
                    used.push(col.clone());
                    let val = if self.rng.chance(10) { "DEFAULT".to_string() } else { self.expr(&ucx, ty, 3) };
                    sets.push(format!("{col} = {val}"));
                }
                let cond = if self.rng.chance(80) { format!(" WHERE {}", { let d = self.edepth(); self.expr(&ucx, Bool, d) }) } else { String::new() };
                let ret = self.returning(&ucx);
                format!("UPDATE {} AS {alias} SET {}{from}{cond}{ret}", rel.name, sets.join(", "))
            }
            _ => {
                // DELETE
                let mut using = String::new();
                let mut dcx = cx.clone();
                if self.rng.chance(25) {
                    let (sql, more) = self.from_item(&[]);
                    using = format!(" USING {sql}");
                    dcx.cols.extend(more);
                }
                let cond = if self.rng.chance(85) { format!(" WHERE {}", { let d = self.edepth(); self.expr(&dcx, Bool, d) }) } else { String::new() };
                let ret = self.returning(&dcx);
                let with = if self.rng.chance(15) {
                    // A data-modifying statement in WITH.
                    format!(
                        "WITH gone AS (DELETE FROM {} AS {alias}{using}{cond} RETURNING {alias}.*) SELECT count(*) FROM gone",
                        rel.name
                    )
                } else {
                    format!("DELETE FROM {} AS {alias}{using}{cond}{ret}", rel.name)
                };
                with
            }
        }
    }

    // -- queries ------------------------------------------------------------

    fn top_select(&mut self) -> Select {
        let with = if self.rng.chance(20) { self.with_clause(&[]) } else { String::new() };
        let sel = self.select(SelOpts { top: true, ..Default::default() });
        Select { sql: format!("{with}{}", sel.sql), tys: sel.tys }
    }

    /// A WITH clause; its queries join `self.ctes` (the caller removes them
    /// when they go out of scope). Their bodies may refer to `outer`.
    fn with_clause(&mut self, outer: &[Col]) -> String {
        {
            let mut defs = Vec::new();
            let mut recursive = false;
            for _ in 0..1 + self.rng.below(3) {
                let name = self.alias("w");
                if self.rng.chance(25) {
                    recursive = true;
                    let step = self.rng.pick(&["n + 1", "n * 2", "n + 3"]);
                    let stop = self.rng.range(1, 20);
                    let start = self.rng.pick(&["1", "0", "-1", "NULL::int"]);
                    let all = self.rng.pick(&["UNION ALL", "UNION"]);
                    defs.push(format!("{name}(n) AS (SELECT {start} {all} SELECT {step} FROM {name} WHERE n < {stop})"));
                    self.ctes.push(Rel { name, cols: vec![("n".into(), I4)] });
                } else {
                    let sel = self.select(SelOpts { outer: outer.to_vec(), ..Default::default() });
                    let mat = self.rng.pick(&["", "", "MATERIALIZED ", "NOT MATERIALIZED "]);
                    defs.push(format!("{name} AS {mat}({})", sel.sql));
                    let cols = sel.tys.iter().enumerate().map(|(i, &t)| (format!("c{i}"), t)).collect();
                    self.ctes.push(Rel { name, cols });
                }
            }
            format!("WITH {}{} ", if recursive { "RECURSIVE " } else { "" }, defs.join(", "))
        }
    }

    /// A SELECT, perhaps with its own WITH clause, perhaps a set operation.
    fn select(&mut self, opts: SelOpts) -> Select {
        if !opts.top && self.qdepth > 0 && self.rng.chance(6) {
            let saved = self.ctes.len();
            self.qdepth -= 1;
            let with = self.with_clause(&opts.outer);
            self.qdepth += 1;
            let body = self.select_body(opts);
            self.ctes.truncate(saved);
            return Select { sql: format!("{with}{}", body.sql), tys: body.tys };
        }
        self.select_body(opts)
    }

    fn select_body(&mut self, opts: SelOpts) -> Select {
        if self.rng.chance(12) && !opts.limit1 {
            let first = self.simple_select(SelOpts { limit1: false, ..opts.clone() });
            let want = Some(first.tys.clone());
            let second = self.simple_select(SelOpts { want, limit1: false, ..opts.clone() });
            let op = self.rng.pick(&["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"]);
            let mut sql = format!("({}) {op} ({})", first.sql, second.sql);
            if self.rng.chance(40) {
                let _ = write!(sql, " ORDER BY {}", 1 + self.rng.below(first.tys.len()));
            }
            if self.rng.chance(30) {
                let _ = write!(sql, " LIMIT {}", self.rng.range(0, 5));
            }
            return Select { sql, tys: first.tys };
        }
        self.simple_select(opts)
    }

    fn from_clause(&mut self, outer: &[Col]) -> (String, Vec<Col>) {
        let n = match self.rng.below(100) {
            0..=4 => 0,
            5..=54 => 1,
            55..=84 => 2,
            _ => 3,
        };
        if n == 0 {
            return (String::new(), Vec::new());
        }
        let (mut sql, mut cols) = self.from_item(outer);
        for k in 1..n {
            // A comma binds more loosely than JOIN: after one, a later ON
            // could not see the items before it, so only the last may be one.
            let last = k == n - 1;
            let lateral = self.rng.chance(15);
            let mut visible = outer.to_vec();
            if lateral {
                visible.extend(cols.iter().cloned());
            }
            let (item, more) = if lateral { self.lateral_item(&visible) } else { self.from_item(outer) };
            let lat = if lateral { "LATERAL " } else { "" };
            let mut both = cols.clone();
            both.extend(more.iter().cloned());
            let on_cx = Ctx { cols: both.clone(), outer: outer.to_vec(), ..Ctx::default() };
            match self.rng.below(100) {
                0..=14 if last => sql = format!("{sql}, {lat}{item}"),
                0..=22 => sql = format!("{sql} CROSS JOIN {lat}{item}"),
                23..=80 => {
                    let kind = if lateral {
                        self.rng.pick(&["JOIN", "LEFT JOIN", "INNER JOIN"])
                    } else {
                        self.rng.pick(&["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT OUTER JOIN", "INNER JOIN"])
                    };
                    let cond = if self.rng.chance(60) { self.join_equality(&cols, &more, &on_cx) } else { self.expr(&on_cx, Bool, 2) };
                    sql = format!("{sql} {kind} {lat}{item} ON {cond}");
                }
                81..=90 if !lateral => {
                    // USING a column both sides have by name.
                    let shared: Vec<&Col> = more.iter().filter(|m| cols.iter().any(|c| c.name == m.name)).collect();
                    if let Some(c) = shared.first() {
                        let kind = self.rng.pick(&["JOIN", "LEFT JOIN", "FULL JOIN", "RIGHT JOIN"]);
                        sql = format!("{sql} {kind} {item} USING ({})", c.name);
                    } else {
                        sql = format!("{sql} CROSS JOIN {item}");
                    }
                }
                _ if !lateral => {
                    let kind = self.rng.pick(&["NATURAL JOIN", "NATURAL LEFT JOIN", "NATURAL FULL JOIN"]);
                    sql = format!("{sql} {kind} {item}");
                }
                _ => sql = format!("{sql} JOIN {lat}{item} ON true"),
            }
            cols = both;
        }
        (sql, cols)
    }

    /// An equality between a column on each side, usually of one type.
    fn join_equality(&mut self, left: &[Col], right: &[Col], cx: &Ctx) -> String {
        for _ in 0..6 {
            let Some(r) = right.get(self.rng.below(right.len().max(1))).cloned() else { break };
            let same: Vec<&Col> = left.iter().filter(|l| l.ty == r.ty).collect();
            if let Some(l) = same.get(self.rng.below(same.len().max(1))) {
                let op = self.rng.pick(&["=", "=", "=", "<", "<>", "IS NOT DISTINCT FROM"]);
                return format!("{} {op} {}", l.sql(), r.sql());
            }
        }
        self.expr(cx, Bool, 1)
    }

    /// A relation in FROM, with the columns it brings.
    fn from_item(&mut self, outer: &[Col]) -> (String, Vec<Col>) {
        let r = self.rng.below(100);
        if r < 60 || self.qdepth == 0 {
            let mut rels = base_rels();
            rels.extend(self.ctes.iter().cloned());
            let rel = rels[self.rng.below(rels.len())].clone();
            let alias = self.alias("r");
            let cols = rel.cols.iter().map(|(n, t)| Col { qual: alias.clone(), name: n.clone(), ty: *t }).collect();
            let only = if rel.name.starts_with('t') && self.rng.chance(5) { "ONLY " } else { "" };
            return (format!("{only}{} AS {alias}", rel.name), cols);
        }
        match r {
            60..=79 => {
                self.qdepth -= 1;
                let sel = self.select(SelOpts { outer: outer.to_vec(), ..Default::default() });
                self.qdepth += 1;
                self.derived(sel)
            }
            80..=87 => {
                let alias = self.alias("g");
                let (lo, hi) = (self.rng.range(-3, 3), self.rng.range(-1, 12));
                let step = if self.rng.chance(20) { format!(", {}", self.rng.pick(&["2", "-1", "3", "0"])) } else { String::new() };
                let col = Col { qual: alias.clone(), name: "x".into(), ty: I4 };
                (format!("generate_series({lo}, {hi}{step}) AS {alias}(x)"), vec![col])
            }
            88..=93 => {
                let alias = self.alias("u");
                let arr = self.rng.pick(&[I4Arr, TextArr]);
                let cx = Ctx { outer: outer.to_vec(), ..Ctx::default() };
                let e = self.expr(&cx, arr, 2);
                let ord = self.rng.chance(30);
                let mut cols = vec![Col { qual: alias.clone(), name: "x".into(), ty: arr.element() }];
                if ord {
                    cols.push(Col { qual: alias.clone(), name: "o".into(), ty: I8 });
                }
                (format!("unnest({e}){} AS {alias}(x{})", if ord { " WITH ORDINALITY" } else { "" }, if ord { ", o" } else { "" }), cols)
            }
            _ => {
                let alias = self.alias("vv");
                let tys: Vec<Ty> = (0..1 + self.rng.below(3)).map(|_| self.out_type()).collect();
                let cx = Ctx::default();
                let rows: Vec<String> = (0..1 + self.rng.below(4))
                    .map(|_| format!("({})", tys.iter().map(|&t| self.expr(&cx, t, 1)).collect::<Vec<_>>().join(", ")))
                    .collect();
                let names: Vec<String> = (0..tys.len()).map(|i| format!("c{i}")).collect();
                let cols = tys.iter().enumerate().map(|(i, &t)| Col { qual: alias.clone(), name: format!("c{i}"), ty: t }).collect();
                (format!("(VALUES {}) AS {alias}({})", rows.join(", "), names.join(", ")), cols)
            }
        }
    }

    /// A LATERAL subquery that may refer to the items before it.
    fn lateral_item(&mut self, visible: &[Col]) -> (String, Vec<Col>) {
        if self.qdepth == 0 || self.rng.chance(15) {
            let alias = self.alias("g");
            let refs: Vec<&Col> = visible.iter().filter(|c| c.ty == I4 || c.ty == I2).collect();
            let hi = match refs.first() {
                Some(c) if self.rng.chance(70) => format!("least({}, 5)", c.sql()),
                _ => "3".to_string(),
            };
            let col = Col { qual: alias.clone(), name: "x".into(), ty: I4 };
            return (format!("generate_series(1, {hi}) AS {alias}(x)"), vec![col]);
        }
        self.qdepth -= 1;
        let sel = self.select(SelOpts { outer: visible.to_vec(), ..Default::default() });
        self.qdepth += 1;
        self.derived(sel)
    }

    fn derived(&mut self, sel: Select) -> (String, Vec<Col>) {
        let alias = self.alias("s");
        let names: Vec<String> = (0..sel.tys.len()).map(|i| format!("c{i}")).collect();
        let cols = sel.tys.iter().enumerate().map(|(i, &t)| Col { qual: alias.clone(), name: format!("c{i}"), ty: t }).collect();
        (format!("({}) AS {alias}({})", sel.sql, names.join(", ")), cols)
    }

    fn simple_select(&mut self, opts: SelOpts) -> Select {
        let (from, cols) = self.from_clause(&opts.outer);
        let base = Ctx { cols: cols.clone(), outer: opts.outer.clone(), ..Ctx::default() };
        let mut sql = String::from("SELECT ");
        let where_ = if !from.is_empty() && self.rng.chance(55) { { let d = self.edepth(); Some(self.expr(&base, Bool, d)) } } else { None };

        // Grouping mode.
        let mode = self.rng.below(100);
        let mut cx = base.clone();
        let mut group_by = String::new();
        if mode < 25 && !cols.is_empty() {
            let n = 1 + self.rng.below(2.min(cols.len()));
            let mut g = Vec::new();
            for _ in 0..n {
                let c = cols[self.rng.below(cols.len())].clone();
                if !g.iter().any(|x: &Col| x.sql() == c.sql()) {
                    g.push(c);
                }
            }
            let list: Vec<String> = g.iter().map(|c| c.sql()).collect();
            group_by = match self.rng.below(150) {
                0 => format!(" GROUP BY ROLLUP ({})", list.join(", ")),
                1 => format!(" GROUP BY CUBE ({})", list.join(", ")),
                2 => format!(" GROUP BY GROUPING SETS (({}), ())", list.join(", ")),
                _ => format!(" GROUP BY {}", list.join(", ")),
            };
            cx.grouped = Some(g);
            cx.agg = true;
        } else if mode < 37 {
            cx.grouped = Some(Vec::new());
            cx.agg = true;
        }
        cx.window = self.rng.chance(25);
        let grouped = cx.grouped.is_some();

        let tys: Vec<Ty> = match &opts.want {
            Some(t) => t.clone(),
            None => (0..1 + self.rng.below(4)).map(|_| self.out_type()).collect(),
        };
        let star = opts.want.is_none() && !grouped && !cols.is_empty() && self.rng.chance(6);
        let distinct_on = !grouped && !star && !from.is_empty() && self.rng.chance(5);
        let distinct = !distinct_on && self.rng.chance(8);
        if distinct {
            sql.push_str("DISTINCT ");
        }
        let mut out_tys = tys.clone();
        if star {
            sql.push('*');
            out_tys = cols.iter().map(|c| c.ty).collect();
        } else {
            let mut items = Vec::new();
            if distinct_on {
                sql.push_str("DISTINCT ON (c0) ");
            }
            for (i, &t) in tys.iter().enumerate() {
                let d = self.edepth();
                let e = self.expr(&cx, t, d);
                items.push(format!("{e} AS c{i}"));
            }
            sql.push_str(&items.join(", "));
        }
        if !from.is_empty() {
            let _ = write!(sql, " FROM {from}");
        }
        if let Some(w) = where_ {
            let _ = write!(sql, " WHERE {w}");
        }
        sql.push_str(&group_by);
        if grouped && self.rng.chance(35) {
            let hcx = Ctx { window: false, ..cx.clone() };
            let _ = write!(sql, " HAVING {}", self.expr(&hcx, Bool, 2));
        }
        // ORDER BY
        let n_out = out_tys.len().max(1);
        if distinct_on {
            let _ = write!(sql, " ORDER BY c0");
            if self.rng.chance(50) {
                let _ = write!(sql, ", {} DESC", 1 + self.rng.below(n_out));
            }
        } else if self.rng.chance(40) || opts.limit1 {
            let mut keys = Vec::new();
            for _ in 0..1 + self.rng.below(2) {
                let key = if star || distinct || self.rng.chance(60) {
                    (1 + self.rng.below(n_out)).to_string()
                } else if self.rng.chance(50) {
                    format!("c{}", self.rng.below(n_out))
                } else {
                    let t = self.out_type();
                    self.expr(&cx, t, 2)
                };
                let dir = if self.rng.below(300) == 0 { " USING <" } else { self.rng.pick(&["", " ASC", " DESC", " DESC NULLS LAST", " NULLS FIRST"]) };
                keys.push(format!("{key}{dir}"));
            }
            let _ = write!(sql, " ORDER BY {}", keys.join(", "));
        }
        if opts.limit1 {
            if self.rng.chance(85) {
                sql.push_str(" LIMIT 1");
            }
        } else {
            if self.rng.chance(20) {
                let lim = match self.rng.below(10) {
                    0 => "ALL".to_string(),
                    1 => "NULL".to_string(),
                    2 if self.rng.chance(30) => "-1".to_string(),
                    3 => "(SELECT 2)".to_string(),
                    _ => self.rng.range(0, 10).to_string(),
                };
                let _ = write!(sql, " LIMIT {lim}");
            }
            if self.rng.chance(10) {
                let off = self.rng.pick(&["0", "1", "3", "-1", "NULL", "100", "0", "1", "2", "0"]);
                let _ = write!(sql, " OFFSET {off}");
            }
            if opts.top && !grouped && !distinct && !distinct_on && self.rng.chance(2) {
                sql.push_str(" FOR UPDATE");
            }
        }
        Select { sql, tys: out_tys }
    }

    // -- expressions --------------------------------------------------------

    fn expr(&mut self, cx: &Ctx, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.rng.chance(30) {
            return self.leaf(cx, ty);
        }
        let d = depth - 1;
        let r = self.rng.below(100);
        match r {
            0 if self.rng.chance(40) => {
                let other = self.any_type();
                self.expr(cx, other, d)
            }
            2..=7 => self.case_expr(cx, ty, d),
            8..=10 => {
                let n = 2 + self.rng.below(2);
                let args: Vec<String> = (0..n).map(|_| self.expr(cx, ty, d)).collect();
                format!("COALESCE({})", args.join(", "))
            }
            11..=12 => format!("NULLIF({}, {})", self.expr(cx, ty, d), self.expr(cx, ty, d)),
            13..=14 => {
                let f = self.rng.pick(&["GREATEST", "LEAST"]);
                format!("{f}({}, {})", self.expr(cx, ty, d), self.expr(cx, ty, d))
            }
            15..=20 => self.cast_to(cx, ty, d),
            21..=23 if self.qdepth > 0 => self.scalar_subquery(cx, ty),
            26..=35 if cx.agg => self.aggregate(cx, ty, d),
            36..=41 if cx.window => self.window_fn(cx, ty, d),
            _ => self.typed(cx, ty, d),
        }
    }

    fn leaf(&mut self, cx: &Ctx, ty: Ty) -> String {
        if self.rng.chance(70) {
            let mut cands: Vec<&Col> = cx.refs().iter().filter(|c| c.ty == ty || (ty == Text && c.ty == Varchar)).collect();
            if cands.is_empty() || self.rng.chance(10) {
                cands.extend(cx.outer.iter().filter(|c| c.ty == ty));
            }
            if !cands.is_empty() {
                return cands[self.rng.below(cands.len())].sql();
            }
        }
        if self.rng.chance(8) {
            return format!("NULL::{}", ty.sql());
        }
        self.literal(ty)
    }

    fn literal(&mut self, ty: Ty) -> String {
        if let Some(n) = self.params.as_mut() {
            if self.rng.chance(30) {
                *n += 1;
                let n = *n;
                // Usually typed, sometimes left for the server to infer.
                return if self.rng.chance(70) { format!("${n}::{}", ty.sql()) } else { format!("${n}") };
            }
        }
        match ty {
            I2 => match self.rng.below(10) {
                0 => "32767::int2".into(),
                1 => "(-32768)::int2".into(),
                2 => "-32768::int2".into(),
                _ => format!("{}::int2", self.small_int()),
            },
            I4 => match self.rng.below(14) {
                0 => "2147483647".into(),
                1 => "-2147483648".into(),
                2 => "0".into(),
                _ => self.small_int(),
            },
            I8 => match self.rng.below(10) {
                0 => "9223372036854775807".into(),
                1 => "(-9223372036854775807 - 1)".into(),
                2 => "4294967296".into(),
                _ => format!("{}::int8", self.small_int()),
            },
            Num => self
                .rng
                .pick(&["1.5", "0.001", "-2.25", "123456789.123456789", "'NaN'::numeric", "1e20", "1e-20", "0.0", "7", "99999999999999999999999999999999999999.9", "'Infinity'::numeric", "3.000"])
                .into(),
            F4 => self.rng.pick(&["1.5::float4", "'NaN'::float4", "'Infinity'::float4", "'-0'::float4", "3.4e38::float4", "0.1::float4", "-2::float4"]).into(),
            F8 => self
                .rng
                .pick(&["2.5::float8", "'NaN'::float8", "'-Infinity'::float8", "1e308::float8", "1e-300::float8", "0.1::float8", "-1::float8", "0::float8"])
                .into(),
            Text => {
                if self.rng.chance(15) {
                    format!("'{}'", self.rng.pick(&["12", " 12 ", "1e3", "abc", "2147483648", "t", "2020-13-01", "1 day", "{1,2}", "\\x41", "NaN", "-0"]))
                } else {
                    self.rng.pick(values_for(Text)).into()
                }
            }
            Varchar => format!("{}::varchar", self.rng.pick(values_for(Varchar))),
            Bool => self.rng.pick(&["true", "false", "NULL::bool"]).into(),
            Date => format!("DATE {}", self.rng.pick(values_for(Date))),
            Ts => format!("TIMESTAMP {}", self.rng.pick(values_for(Ts))),
            Tstz => format!("TIMESTAMPTZ {}", self.rng.pick(values_for(Tstz))),
            Interval => format!("INTERVAL {}", self.rng.pick(values_for(Interval))),
            Uuid => format!("{}::uuid", self.rng.pick(values_for(Uuid))),
            Bytea => format!("{}::bytea", self.rng.pick(values_for(Bytea))),
            I4Arr => {
                if self.rng.chance(50) {
                    format!("{}::int4[]", self.rng.pick(values_for(I4Arr)))
                } else {
                    let n = self.rng.below(4);
                    let xs: Vec<String> = (0..n).map(|_| self.rng.pick(&["1", "2", "NULL", "-5", "2147483647"]).to_string()).collect();
                    if n == 0 {
                        "ARRAY[]::int4[]".into()
                    } else {
                        format!("ARRAY[{}]", xs.join(", "))
                    }
                }
            }
            TextArr => format!("{}::text[]", self.rng.pick(values_for(TextArr))),
        }
    }

    fn case_expr(&mut self, cx: &Ctx, ty: Ty, d: u32) -> String {
        let mut s = String::from("CASE");
        let simple = self.rng.chance(35);
        let subject_ty = self.out_type();
        if simple {
            let _ = write!(s, " {}", self.expr(cx, subject_ty, d));
        }
        for _ in 0..1 + self.rng.below(3) {
            let when = if simple { self.expr(cx, subject_ty, d) } else { self.expr(cx, Bool, d) };
            let _ = write!(s, " WHEN {when} THEN {}", self.expr(cx, ty, d));
        }
        if self.rng.chance(70) {
            let _ = write!(s, " ELSE {}", self.expr(cx, ty, d));
        }
        s.push_str(" END");
        s
    }

    fn type_name_with_mods(&mut self, ty: Ty) -> String {
        match ty {
            Num if self.rng.chance(40) => self.rng.pick(&["numeric(5,2)", "numeric(3)", "numeric(10,4)", "numeric(1,0)", "decimal(38,10)"]).into(),
            Varchar if self.rng.chance(50) => self.rng.pick(&["varchar(3)", "varchar(1)", "character varying(10)"]).into(),
            Text if self.rng.chance(10) => self.rng.pick(&["char(3)", "char", "name", "bpchar"]).into(),
            Ts if self.rng.chance(30) => self.rng.pick(&["timestamp(0)", "timestamp(3)"]).into(),
            Tstz if self.rng.chance(30) => "timestamptz(0)".into(),
            Interval if self.rng.chance(30) => self.rng.pick(&["interval year", "interval day to second", "interval(0)", "interval hour to minute"]).into(),
            I4 if self.rng.chance(10) => self.rng.pick(&["oid", "regclass::oid", "int", "integer"]).into(),
            I2 if self.rng.chance(10) => "smallint".into(),
            F8 if self.rng.chance(10) => self.rng.pick(&["double precision", "real::float8", "float(53)"]).into(),
            Bool if self.rng.chance(10) => "boolean".into(),
            _ => ty.sql().into(),
        }
    }

    fn cast_to(&mut self, cx: &Ctx, ty: Ty, d: u32) -> String {
        if self.rng.chance(20) {
            // A string that is (usually) valid input for the type.
            let lit = match ty {
                Varchar | Text => "'abc'",
                I2 | I4 | I8 => self.rng.pick(&["'12'", "' -7 '", "'0'", "'2147483648'", "'1e3'"]),
                Num | F4 | F8 => self.rng.pick(&["'1.25'", "'-0'", "'NaN'", "'1e400'", "' 3 '", "'Infinity'"]),
                I4Arr => self.rng.pick(&["'{1,2}'", "'{}'", "'{{1},{2}}'", "'{1,'"]),
                _ => self.rng.pick(values_for(ty)),
            };
            let target = self.type_name_with_mods(ty);
            return if target.contains("::") { format!("({lit})::{target}") } else { format!("CAST({lit} AS {target})") };
        }
        let from = if self.rng.chance(12) {
            Text
        } else if self.rng.chance(85) {
            match ty {
                I2 | I4 | I8 | Num | F4 | F8 => self.rng.pick(&[I2, I4, I8, Num, F4, F8, Bool]),
                Text | Varchar => self.any_type(),
                Date | Ts | Tstz => self.rng.pick(&[Date, Ts, Tstz, Interval]),
                I4Arr | TextArr => self.rng.pick(&[I4Arr, TextArr]),
                Bool => self.rng.pick(&[I4, Text, Bool]),
                Interval => self.rng.pick(&[Text, Interval]),
                Uuid | Bytea => Text,
            }
        } else {
            self.any_type()
        };
        let inner = self.expr(cx, from, d);
        let target = self.type_name_with_mods(ty);
        let target = if target.contains("::") {
            // "regclass::oid" style composite targets only make sense as ::
            return format!("({inner})::{target}");
        } else {
            target
        };
        match self.rng.below(3) {
            0 => format!("CAST({inner} AS {target})"),
            1 => format!("({inner})::{target}"),
            _ => {
                // After a cast to the exact type, so that the expression has it.
                if target == ty.sql() {
                    format!("({inner})::{target}")
                } else {
                    format!("(({inner})::{target})::{}", ty.sql())
                }
            }
        }
    }

    fn scalar_subquery(&mut self, cx: &Ctx, ty: Ty) -> String {
        self.qdepth -= 1;
        let outer = cx.for_subquery();
        let r = self.rng.below(10);
        let s = if r < 2 {
            // An aggregate over a correlated subquery.
            let (from, cols) = self.from_clause(&outer);
            let scx = Ctx { cols, outer: outer.clone(), agg: true, grouped: Some(Vec::new()), window: false };
            let e = self.expr(&scx, ty, 2);
            let wcx = Ctx { agg: false, grouped: None, ..scx.clone() };
            let w = if !from.is_empty() && self.rng.chance(60) { format!(" WHERE {}", self.expr(&wcx, Bool, 2)) } else { String::new() };
            let from = if from.is_empty() { String::new() } else { format!(" FROM {from}") };
            format!("(SELECT {e}{from}{w})")
        } else if r < 3 && ty.is_array() {
            let sel = self.select(SelOpts { want: Some(vec![ty.element()]), outer, ..Default::default() });
            format!("ARRAY({})", sel.sql)
        } else {
            let limit1 = self.rng.chance(80);
            let sel = self.select(SelOpts { want: Some(vec![ty]), outer, limit1, ..Default::default() });
            format!("({})", sel.sql)
        };
        self.qdepth += 1;
        s
    }

    fn subquery_of(&mut self, cx: &Ctx, ty: Ty) -> String {
        self.qdepth -= 1;
        let outer = cx.for_subquery();
        let sel = self.select(SelOpts { want: Some(vec![ty]), outer, ..Default::default() });
        self.qdepth += 1;
        sel.sql
    }

    fn agg_suffix(&mut self, acx: &Ctx) -> String {
        if self.rng.chance(12) {
            format!(" FILTER (WHERE {})", self.expr(acx, Bool, 1))
        } else {
            String::new()
        }
    }

    fn aggregate(&mut self, cx: &Ctx, ty: Ty, d: u32) -> String {
        let acx = cx.inside_aggregate();
        let dis = if self.rng.chance(10) { "DISTINCT " } else { "" };
        let core = match ty {
            I8 => match self.rng.below(5) {
                0 => "count(*)".to_string(),
                1 => {
                    let t = self.any_type();
                    format!("count({dis}{})", self.expr(&acx, t, d))
                }
                2 => format!("sum({dis}{})", self.expr(&acx, I4, d)),
                3 => format!("sum({})", self.expr(&acx, I2, d)),
                _ => format!("max({})", self.expr(&acx, I8, d)),
            },
            Num => match self.rng.below(7) {
                0 => format!("sum({dis}{})", self.expr(&acx, I8, d)),
                1 => format!("avg({dis}{})", self.expr(&acx, I4, d)),
                2 => format!("sum({})", self.expr(&acx, Num, d)),
                3 => format!("avg({})", self.expr(&acx, Num, d)),
                4 => format!("{}({})", self.rng.pick(&["stddev", "variance", "stddev_pop", "var_pop", "var_samp", "stddev_samp"]), self.expr(&acx, Num, d)),
                5 if self.rng.chance(25) => format!("percentile_disc(0.5) WITHIN GROUP (ORDER BY {})", self.expr(&acx, Num, d)),
                _ => format!("min({})", self.expr(&acx, Num, d)),
            },
            F8 => match self.rng.below(6) {
                0 => format!("avg({})", self.expr(&acx, F8, d)),
                1 => format!("sum({})", self.expr(&acx, F8, d)),
                2 => format!("{}({})", self.rng.pick(&["stddev", "variance", "stddev_pop", "var_samp"]), self.expr(&acx, F8, d)),
                3 => format!(
                    "{}({}, {})",
                    self.rng.pick(&["corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_avgx"]),
                    self.expr(&acx, F8, d),
                    self.expr(&acx, F8, d)
                ),
                4 if self.rng.chance(25) => format!("percentile_cont({}) WITHIN GROUP (ORDER BY {})", self.rng.pick(&["0.5", "0", "1", "0.25", "1.5"]), self.expr(&acx, F8, d)),
                _ => format!("max({})", self.expr(&acx, F8, d)),
            },
            Text => match self.rng.below(4) {
                0 | 1 => {
                    let ord = if self.rng.chance(40) { format!(" ORDER BY {}", self.expr(&acx, Text, 1)) } else { String::new() };
                    format!("string_agg({dis}{}, {}{ord})", self.expr(&acx, Text, d), self.rng.pick(&["','", "''", "NULL", "' | '"]))
                }
                2 if self.rng.chance(25) => format!("mode() WITHIN GROUP (ORDER BY {})", self.expr(&acx, Text, d)),
                _ => format!("{}({})", self.rng.pick(&["min", "max"]), self.expr(&acx, Text, d)),
            },
            Bool => format!("{}({})", self.rng.pick(&["bool_and", "bool_or", "every"]), self.expr(&acx, Bool, d)),
            I4 => match self.rng.below(3) {
                0 => format!("{}({})", self.rng.pick(&["bit_and", "bit_or", "bit_and", "bit_or", "bit_xor"]), self.expr(&acx, I4, d)),
                1 => format!("count(*)::int4"),
                _ => format!("{}({})", self.rng.pick(&["min", "max"]), self.expr(&acx, I4, d)),
            },
            I2 => format!("{}({})", self.rng.pick(&["min", "max", "bit_and"]), self.expr(&acx, I2, d)),
            Interval => format!("{}({})", self.rng.pick(&["sum", "avg", "min", "max"]), self.expr(&acx, Interval, d)),
            I4Arr | TextArr => {
                let ord = if self.rng.chance(40) { format!(" ORDER BY {} DESC", self.expr(&acx, ty.element(), 1)) } else { String::new() };
                if self.rng.chance(20) {
                    format!("array_agg({})", self.expr(&acx, ty, d))
                } else {
                    format!("array_agg({dis}{}{ord})", self.expr(&acx, ty.element(), d))
                }
            }
            Bytea => format!("string_agg({}, '\\x2c'::bytea)", self.expr(&acx, Bytea, d)),
            _ => format!("{}({})", self.rng.pick(&["min", "max"]), self.expr(&acx, ty, d)),
        };
        let filter = self.agg_suffix(&acx);
        format!("{core}{filter}")
    }

    fn window_spec(&mut self, cx: &Ctx) -> String {
        let wcx = Ctx { window: false, ..cx.clone() };
        let mut parts = Vec::new();
        if self.rng.chance(50) {
            let t = self.out_type();
            parts.push(format!("PARTITION BY {}", self.expr(&wcx, t, 1)));
        }
        let ordered = self.rng.chance(70);
        let order_ty = self.rng.pick(&[I4, I8, Num, F8, Date, Ts, Text]);
        if ordered {
            let dir = self.rng.pick(&["", " DESC", " NULLS FIRST"]);
            parts.push(format!("ORDER BY {}{dir}", self.expr(&wcx, order_ty, 1)));
        }
        if self.rng.chance(35) {
            let offset = match order_ty {
                Date | Ts => "'1 day'",
                Text => "1",
                _ => "1",
            };
            let frame = self.rng.pick(&[
                "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                "ROWS 2 PRECEDING",
                "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                "RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
                "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW",
                "RANGE BETWEEN OFF PRECEDING AND OFF FOLLOWING",
                "ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING EXCLUDE CURRENT ROW",
                "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES",
                "ROWS BETWEEN -1 PRECEDING AND CURRENT ROW",
                "GROUPS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING EXCLUDE GROUP",
            ]);
            parts.push(frame.replace("OFF", offset));
        }
        format!("OVER ({})", parts.join(" "))
    }

    fn window_fn(&mut self, cx: &Ctx, ty: Ty, d: u32) -> String {
        let acx = Ctx { window: false, ..cx.clone() };
        let core = match (ty, self.rng.below(4)) {
            (I8, 0) => "row_number()".to_string(),
            (I8, 1) => self.rng.pick(&["rank()", "dense_rank()"]).to_string(),
            (I8, 2) => "count(*)".to_string(),
            (F8, 0) => self.rng.pick(&["percent_rank()", "cume_dist()"]).to_string(),
            (I4, 0) => format!("ntile({})", self.rng.pick(&["2", "3", "0", "-1", "NULL::int"])),
            (_, 0) | (_, 1) => {
                let f = self.rng.pick(&["lag", "lead"]);
                match self.rng.below(3) {
                    0 => format!("{f}({})", self.expr(&acx, ty, d)),
                    1 => format!("{f}({}, {})", self.expr(&acx, ty, d), self.rng.pick(&["2", "0", "-1", "NULL::int"])),
                    _ => format!("{f}({}, 1, {})", self.expr(&acx, ty, d), self.expr(&acx, ty, d)),
                }
            }
            (_, 2) => match self.rng.below(3) {
                0 => format!("first_value({})", self.expr(&acx, ty, d)),
                1 => format!("last_value({})", self.expr(&acx, ty, d)),
                _ => format!("nth_value({}, {})", self.expr(&acx, ty, d), self.rng.pick(&["1", "2", "0"])),
            },
            _ => {
                // An aggregate used as a window function.
                let inner_cx = acx.inside_aggregate();
                let f = match ty {
                    I2 | I4 | I8 | Num | F4 | F8 | Interval => self.rng.pick(&["sum", "min", "max", "avg", "count"]),
                    Bool => self.rng.pick(&["bool_and", "bool_or", "count"]),
                    I4Arr | TextArr | Bytea => "array_agg",
                    _ => self.rng.pick(&["min", "max", "count"]),
                };
                let arg_ty = if f == "array_agg" { ty.element() } else { ty };
                format!("{f}({})", self.expr(&inner_cx, arg_ty, d))
            }
        };
        let spec = self.window_spec(cx);
        format!("{core} {spec}")
    }

    /// Operators and functions that give a value of `ty`.
    fn typed(&mut self, cx: &Ctx, ty: Ty, d: u32) -> String {
        match ty {
            I2 => match self.rng.below(6) {
                0 | 1 => format!("({} {} {})", self.expr(cx, I2, d), self.rng.pick(&["+", "-", "*", "/", "%"]), self.expr(cx, I2, d)),
                2 => format!("abs({})", self.expr(cx, I2, d)),
                3 => format!("(- {})", self.expr(cx, I2, d)),
                4 => format!("({} {} {})", self.expr(cx, I2, d), self.rng.pick(&["&", "|", "#", "<<", ">>"]), self.expr(cx, I4, d)),
                _ => format!("({})::int2", self.expr(cx, I4, d)),
            },
            I4 => match self.rng.below(30) {
                0..=5 => format!("({} {} {})", self.expr(cx, I4, d), self.rng.pick(&["+", "-", "*", "/", "%"]), self.expr(cx, I4, d)),
                6 => format!("({} {} {})", self.expr(cx, I4, d), self.rng.pick(&["&", "|", "#", "<<", ">>"]), self.expr(cx, I4, d)),
                7 => format!("{}({})", self.rng.pick(&["length", "char_length", "octet_length", "bit_length", "ascii"]), self.expr(cx, Text, d)),
                8 => format!("position({} in {})", self.expr(cx, Text, d), self.expr(cx, Text, d)),
                9 => format!("strpos({}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d)),
                10 => format!("abs({})", self.expr(cx, I4, d)),
                11 => format!("{}({}, 1)", self.rng.pick(&["array_length", "array_upper", "array_lower"]), self.expr(cx, I4Arr, d)),
                12 => format!("{}({})", self.rng.pick(&["cardinality", "array_ndims"]), self.expr(cx, I4Arr, d)),
                13 => format!("({} - {})", self.expr(cx, Date, d), self.expr(cx, Date, d)),
                14 => format!("({})[{}]", self.expr(cx, I4Arr, d), self.expr(cx, I4, d)),
                15 => format!("width_bucket({}, {}, {}, {})", self.expr(cx, F8, d), self.expr(cx, F8, d), self.expr(cx, F8, d), self.expr(cx, I4, d)),
                16 => format!("{}({}, {})", self.rng.pick(&["gcd", "lcm", "mod"]), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                17 => format!("{}({})", self.rng.pick(&["octet_length", "length"]), self.expr(cx, Bytea, d)),
                18 => format!("get_byte({}, {})", self.expr(cx, Bytea, d), self.expr(cx, I4, d)),
                19 => format!("(- {})", self.expr(cx, I4, d)),
                20 => format!("array_position({}, {})", self.expr(cx, I4Arr, d), self.expr(cx, I4, d)),
                21 => format!("scale({})", self.expr(cx, Num, d)),
                22 => format!("{}({}, {})", self.rng.pick(&["num_nulls", "num_nonnulls"]), self.expr(cx, I4, d), self.expr(cx, Text, d)),
                23 => format!("date_part('{}', {})::int4", self.rng.pick(DATE_FIELDS), self.expr(cx, Ts, d)),
                24 => format!("(~ {})", self.expr(cx, I4, d)),
                25 => format!("{}({}, {})", self.rng.pick(&["array_length", "array_upper"]), self.expr(cx, TextArr, d), self.expr(cx, I4, d)),
                26 => format!("({})::int4", self.expr(cx, F8, d)),
                27 => format!("({} {} {})", self.expr(cx, I2, d), self.rng.pick(&["+", "*", "-"]), self.expr(cx, I4, d)),
                28 => format!("min_scale({})", self.expr(cx, Num, d)),
                _ => format!("sign({})::int4", self.expr(cx, I4, d)),
            },
            I8 => match self.rng.below(10) {
                0..=3 => format!("({} {} {})", self.expr(cx, I8, d), self.rng.pick(&["+", "-", "*", "/", "%"]), self.expr(cx, I8, d)),
                4 => format!("({} {} {})", self.expr(cx, I8, d), self.rng.pick(&["&", "|", "#", "<<", ">>"]), self.expr(cx, I4, d)),
                5 => format!("abs({})", self.expr(cx, I8, d)),
                6 => format!("({} {} {})", self.expr(cx, I4, d), self.rng.pick(&["+", "*", "-", "/"]), self.expr(cx, I8, d)),
                7 => format!("{}({}, {})", self.rng.pick(&["gcd", "lcm", "mod"]), self.expr(cx, I8, d), self.expr(cx, I8, d)),
                8 => format!("(- {})", self.expr(cx, I8, d)),
                _ => format!("extract(epoch from {})::int8", self.expr(cx, Ts, d)),
            },
            Num => match self.rng.below(16) {
                0..=3 => format!("({} {} {})", self.expr(cx, Num, d), self.rng.pick(&["+", "-", "*", "/", "%", "^"]), self.expr(cx, Num, d)),
                4 => format!("{}({}, {})", self.rng.pick(&["round", "trunc"]), self.expr(cx, Num, d), self.expr(cx, I4, d)),
                5 => format!("{}({})", self.rng.pick(&["round", "trunc", "ceil", "floor", "abs", "sign", "trim_scale"]), self.expr(cx, Num, d)),
                6 => format!("{}({})", self.rng.pick(&["sqrt", "exp", "ln", "log"]), self.expr(cx, Num, d)),
                7 => format!("{}({}, {})", self.rng.pick(&["power", "mod", "div", "log", "gcd", "lcm"]), self.expr(cx, Num, d), self.expr(cx, Num, d)),
                8 => format!("extract({} from {})", self.rng.pick(DATE_FIELDS), { let t = self.rng.pick(&[Ts, Tstz, Date]); self.expr(cx, t, d) }),
                9 => format!("extract({} from {})", self.rng.pick(DATE_FIELDS), self.expr(cx, Interval, d)),
                10 => format!("factorial({})", self.expr(cx, I8, d)),
                11 => format!("({} {} {})", self.expr(cx, I4, d), self.rng.pick(&["+", "*", "/"]), self.expr(cx, Num, d)),
                12 => format!("width_bucket({}, {}, {}, {})", self.expr(cx, Num, d), self.expr(cx, Num, d), self.expr(cx, Num, d), self.expr(cx, I4, d)),
                13 => format!("(- {})", self.expr(cx, Num, d)),
                14 => format!("to_number({}, {})", self.expr(cx, Text, d), self.rng.pick(&["'999.99'", "'9G999D9'", "'S999'", "'FM99'", "'xx'", "'9.9EEEE'"])),
                _ => format!("({})::numeric", self.expr(cx, F8, d)),
            },
            F4 => match self.rng.below(4) {
                0 | 1 => format!("({} {} {})", self.expr(cx, F4, d), self.rng.pick(&["+", "-", "*", "/"]), self.expr(cx, F4, d)),
                2 => format!("abs({})", self.expr(cx, F4, d)),
                _ => format!("(- {})", self.expr(cx, F4, d)),
            },
            F8 => match self.rng.below(12) {
                0..=2 => format!("({} {} {})", self.expr(cx, F8, d), self.rng.pick(&["+", "-", "*", "/", "^"]), self.expr(cx, F8, d)),
                3 => format!(
                    "{}({})",
                    self.rng.pick(&["sqrt", "cbrt", "exp", "ln", "log", "sin", "cos", "tan", "asin", "acos", "atan", "degrees", "radians", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cot", "sind", "cosd", "trunc", "round", "ceil", "floor", "sign", "abs"]),
                    self.expr(cx, F8, d)
                ),
                4 => format!("{}({}, {})", self.rng.pick(&["power", "atan2", "atan2d"]), self.expr(cx, F8, d), self.expr(cx, F8, d)),
                5 => "pi()".to_string(),
                6 => format!("date_part('{}', {})", self.rng.pick(DATE_FIELDS), self.expr(cx, Ts, d)),
                7 => format!("({} {} {})", self.expr(cx, F4, d), self.rng.pick(&["+", "*", "/"]), self.expr(cx, F8, d)),
                8 => format!("({} * {})", self.expr(cx, I4, d), self.expr(cx, F8, d)),
                9 => format!("(- {})", self.expr(cx, F8, d)),
                10 => format!("({})::float8", self.expr(cx, Num, d)),
                _ => format!("date_part('{}', {})", self.rng.pick(DATE_FIELDS), self.expr(cx, Interval, d)),
            },
            Varchar => format!("({})::varchar", self.typed(cx, Text, d)),
            Text => self.text_fn(cx, d),
            Bool => self.bool_expr(cx, d),
            Date => match self.rng.below(8) {
                0 | 1 => format!("({} {} {})", self.expr(cx, Date, d), self.rng.pick(&["+", "-"]), self.expr(cx, I4, d)),
                2 => format!("make_date({}, {}, {})", self.expr(cx, I4, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                3 => format!("({})::date", self.expr(cx, Ts, d)),
                4 => format!("to_date({}, {})", self.expr(cx, Text, d), self.rng.pick(CHAR_FORMATS)),
                5 => format!("date_trunc('{}', {})::date", self.rng.pick(TRUNC_FIELDS), self.expr(cx, Date, d)),
                6 => format!("({} + {})::date", self.expr(cx, Date, d), self.expr(cx, Interval, d)),
                _ => format!("({} + {})", self.expr(cx, I4, d), self.expr(cx, Date, d)),
            },
            Ts => match self.rng.below(9) {
                0 => format!("({} + {})", self.expr(cx, Date, d), self.expr(cx, Interval, d)),
                1 | 2 => format!("({} {} {})", self.expr(cx, Ts, d), self.rng.pick(&["+", "-"]), self.expr(cx, Interval, d)),
                3 => format!("date_trunc('{}', {})", self.rng.pick(TRUNC_FIELDS), self.expr(cx, Ts, d)),
                4 => format!(
                    "make_timestamp({}, {}, {}, {}, {}, {})",
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, F8, d)
                ),
                5 => format!("({} AT TIME ZONE {})", self.expr(cx, Tstz, d), self.rng.pick(ZONES)),
                6 => format!("({})::timestamp", self.expr(cx, Date, d)),
                7 => format!("to_timestamp({}, {})::timestamp", self.expr(cx, Text, d), self.rng.pick(CHAR_FORMATS)),
                _ => format!("({} + time '12:34:56')", self.expr(cx, Date, d)),
            },
            Tstz => match self.rng.below(6) {
                0 => format!("to_timestamp({})", self.expr(cx, F8, d)),
                1 => format!("({} AT TIME ZONE {})", self.expr(cx, Ts, d), self.rng.pick(ZONES)),
                2 => format!("({} {} {})", self.expr(cx, Tstz, d), self.rng.pick(&["+", "-"]), self.expr(cx, Interval, d)),
                3 => format!("date_trunc('{}', {})", self.rng.pick(TRUNC_FIELDS), self.expr(cx, Tstz, d)),
                4 => format!("({})::timestamptz", self.expr(cx, Date, d)),
                _ => format!(
                    "make_timestamptz({}, {}, {}, {}, {}, {}, {})",
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, I4, d),
                    self.expr(cx, F8, d),
                    self.rng.pick(ZONES)
                ),
            },
            Interval => match self.rng.below(11) {
                0 => format!("({} - {})", self.expr(cx, Ts, d), self.expr(cx, Ts, d)),
                1 => format!("({} - {})", self.expr(cx, Tstz, d), self.expr(cx, Tstz, d)),
                2 => format!("({} {} {})", self.expr(cx, Interval, d), self.rng.pick(&["*", "/"]), self.expr(cx, F8, d)),
                3 => format!("({} {} {})", self.expr(cx, Interval, d), self.rng.pick(&["+", "-"]), self.expr(cx, Interval, d)),
                4 => format!("(- {})", self.expr(cx, Interval, d)),
                5 => format!("{}({})", self.rng.pick(&["justify_days", "justify_hours", "justify_interval"]), self.expr(cx, Interval, d)),
                6 => format!("age({}, {})", self.expr(cx, Ts, d), self.expr(cx, Ts, d)),
                7 => format!("make_interval({}, {}, {}, {})", self.expr(cx, I4, d), self.expr(cx, I4, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                8 => format!("({} * INTERVAL '1 day')", self.expr(cx, I4, d)),
                9 => format!("date_trunc('{}', {})", self.rng.pick(TRUNC_FIELDS), self.expr(cx, Interval, d)),
                _ => format!("make_interval(days => {}, secs => {})", self.expr(cx, I4, d), self.expr(cx, F8, d)),
            },
            Uuid => match self.rng.below(3) {
                0 if self.rng.chance(30) => format!("({})::uuid", self.expr(cx, Text, d)),
                1 => format!("md5({})::uuid", self.expr(cx, Text, d)),
                _ => self.literal(Uuid),
            },
            Bytea => match self.rng.below(8) {
                0 => format!("decode({}, {})", self.expr(cx, Text, d), self.rng.pick(&["'hex'", "'base64'", "'escape'", "'bogus'"])),
                1 => format!("({})::bytea", self.expr(cx, Text, d)),
                2 => format!("({} || {})", self.expr(cx, Bytea, d), self.expr(cx, Bytea, d)),
                3 => format!("{}({})", self.rng.pick(&["sha256", "sha224", "sha512", "sha384"]), self.expr(cx, Bytea, d)),
                4 => format!("substring({} from {} for {})", self.expr(cx, Bytea, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                5 => format!("set_byte({}, {}, {})", self.expr(cx, Bytea, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                6 => format!("convert_to({}, 'UTF8')", self.expr(cx, Text, d)),
                _ => format!("overlay({} placing {} from {})", self.expr(cx, Bytea, d), self.expr(cx, Bytea, d), self.expr(cx, I4, d)),
            },
            I4Arr => match self.rng.below(11) {
                0 => format!("ARRAY[{}, {}]", self.expr(cx, I4, d), self.expr(cx, I4, d)),
                1 => format!("array_append({}, {})", self.expr(cx, I4Arr, d), self.expr(cx, I4, d)),
                2 => format!("array_prepend({}, {})", self.expr(cx, I4, d), self.expr(cx, I4Arr, d)),
                3 => format!("array_cat({}, {})", self.expr(cx, I4Arr, d), self.expr(cx, I4Arr, d)),
                4 => format!("({} || {})", self.expr(cx, I4Arr, d), self.expr(cx, I4Arr, d)),
                5 => format!("array_remove({}, {})", self.expr(cx, I4Arr, d), self.expr(cx, I4, d)),
                6 if self.rng.chance(25) => format!("array_replace({}, {}, {})", self.expr(cx, I4Arr, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                7 => format!("({})[{}:{}]", self.expr(cx, I4Arr, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
                8 => format!("string_to_array({}, ',')::int4[]", self.expr(cx, Text, d)),
                9 if self.rng.chance(25) => format!("array_fill({}, ARRAY[{}])", self.expr(cx, I4, d), self.rng.pick(&["3", "0", "2", "-1"])),
                _ => format!("ARRAY[[{}], [{}]]", self.expr(cx, I4, d), self.expr(cx, I4, d)),
            },
            TextArr => match self.rng.below(7) {
                0 => format!("string_to_array({}, {})", self.expr(cx, Text, d), self.rng.pick(&["','", "''", "NULL", "' '"])),
                1 => format!("regexp_split_to_array({}, {})", self.expr(cx, Text, d), self.rng.pick(REGEXES)),
                2 => format!("ARRAY[{}, {}]", self.expr(cx, Text, d), self.expr(cx, Text, d)),
                3 => format!("regexp_match({}, {})", self.expr(cx, Text, d), self.rng.pick(REGEXES)),
                4 => format!("({})::text[]", self.expr(cx, I4Arr, d)),
                5 => format!("array_append({}, {})", self.expr(cx, TextArr, d), self.expr(cx, Text, d)),
                _ => format!("({} || ({})::text)", self.expr(cx, TextArr, d), self.expr(cx, Text, d)),
            },
        }
    }

    fn text_fn(&mut self, cx: &Ctx, d: u32) -> String {
        match self.rng.below(42) {
            0..=3 => format!("({} || {})", self.expr(cx, Text, d), self.expr(cx, Text, d)),
            4 => {
                let t = self.any_type();
                format!("({} || {})", self.expr(cx, Text, d), self.expr(cx, t, d))
            }
            5 => format!("{}({})", self.rng.pick(&["lower", "upper", "initcap", "reverse", "md5", "quote_ident", "quote_literal", "quote_nullable"]), self.expr(cx, Text, d)),
            6 => format!("substr({}, {})", self.expr(cx, Text, d), self.expr(cx, I4, d)),
            7 => format!("substr({}, {}, {})", self.expr(cx, Text, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
            8 => format!("substring({} from {} for {})", self.expr(cx, Text, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
            9 => format!("{}({}, {})", self.rng.pick(&["left", "right"]), self.expr(cx, Text, d), self.expr(cx, I4, d)),
            10 => format!("{}({}, {}, {})", self.rng.pick(&["lpad", "rpad"]), self.expr(cx, Text, d), self.small_or(cx, d), self.expr(cx, Text, d)),
            11 => format!("{}({}, {})", self.rng.pick(&["ltrim", "rtrim", "btrim"]), self.expr(cx, Text, d), self.expr(cx, Text, d)),
            12 => format!("trim({} {} from {})", self.rng.pick(&["both", "leading", "trailing"]), self.expr(cx, Text, d), self.expr(cx, Text, d)),
            13 => format!("replace({}, {}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d), self.expr(cx, Text, d)),
            14 => format!("repeat({}, {})", self.expr(cx, Text, d), self.small_or(cx, d)),
            15 => {
                let t = self.rng.pick(&[I4, I8, Num, F8, Ts, Tstz, Interval, Date]);
                format!("to_char({}, {})", self.expr(cx, t, d), self.rng.pick(CHAR_FORMATS))
            }
            16 => {
                let n = 1 + self.rng.below(3);
                let args: Vec<String> = (0..n)
                    .map(|_| {
                        let t = self.any_type();
                        self.expr(cx, t, d)
                    })
                    .collect();
                format!("concat({})", args.join(", "))
            }
            17 => format!("concat_ws({}, {}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d), self.expr(cx, I4, d)),
            18 => {
                let t = self.any_type();
                format!("format({}, {}, {})", self.rng.pick(FORMATS), self.expr(cx, Text, d), self.expr(cx, t, d))
            }
            19 => format!("split_part({}, {}, {})", self.expr(cx, Text, d), self.rng.pick(&["','", "' '", "''", "'l'"]), self.expr(cx, I4, d)),
            20 => format!("translate({}, {}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d), self.expr(cx, Text, d)),
            21 => format!("to_hex({})", { let t = self.rng.pick(&[I4, I8]); self.expr(cx, t, d) }),
            22 => format!("chr({})", self.expr(cx, I4, d)),
            23 => format!("regexp_replace({}, {}, {}{})", self.expr(cx, Text, d), self.rng.pick(REGEXES), self.rng.pick(&["'X'", "'\\1'", "''", "'&&'"]), self.rng.pick(&["", ", 'g'", ", 'gi'", ", 'z'"])),
            24 => format!("encode({}, {})", self.expr(cx, Bytea, d), self.rng.pick(&["'hex'", "'base64'", "'escape'", "'nope'"])),
            25 => format!("array_to_string({}, {}{})", { let t = self.rng.pick(&[I4Arr, TextArr]); self.expr(cx, t, d) }, self.rng.pick(&["','", "''"]), self.rng.pick(&["", ", '*'"])),
            26 => {
                let t = self.any_type();
                format!("({})::text", self.expr(cx, t, d))
            }
            27 => format!("overlay({} placing {} from {} for {})", self.expr(cx, Text, d), self.expr(cx, Text, d), self.expr(cx, I4, d), self.expr(cx, I4, d)),
            28 => format!("({})[{}]", self.expr(cx, TextArr, d), self.expr(cx, I4, d)),
            29 => format!("md5({})", self.expr(cx, Bytea, d)),
            30 => format!("substring({} from {})", self.expr(cx, Text, d), self.rng.pick(REGEXES)),
            31 => {
                let t = self.any_type();
                format!("pg_typeof({})::text", self.expr(cx, t, d))
            }
            32 => format!("{}({})", self.rng.pick(&["to_hex", "chr"]), self.rng.pick(&["-1", "0", "1114112", "55296", "65"])),
            33 => format!("({} COLLATE \"C\")", self.expr(cx, Text, d)),
            34 => format!("{}({})", self.rng.pick(&["btrim", "ltrim", "rtrim"]), self.expr(cx, Text, d)),
            35 => {
                let t = self.any_type();
                format!("{}({})", self.rng.pick(&["quote_literal", "quote_nullable"]), self.expr(cx, t, d))
            }
            36 if self.rng.chance(20) => format!("{}({})", self.rng.pick(&["array_to_json", "to_json", "row_to_json"]), self.expr(cx, I4Arr, d)) + "::text",
            37 => format!("to_char({}, {})", self.expr(cx, Num, d), self.rng.pick(CHAR_FORMATS)),
            38 => format!("regexp_replace({}, {}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d), self.expr(cx, Text, d)),
            39 => {
                let n = 1 + self.rng.below(3);
                let args: Vec<String> = (0..n)
                    .map(|_| {
                        let t = self.any_type();
                        self.expr(cx, t, d)
                    })
                    .collect();
                format!("(ROW({}))::text", args.join(", "))
            }
            40 => format!("convert_from({}, 'UTF8')", self.expr(cx, Bytea, d)),
            41 if self.rng.chance(25) => format!("substring({} similar {} escape '#')", self.expr(cx, Text, d), self.rng.pick(&["'%#\"o_#\"%'", "'a'", "'#\"%#\"'"])),
            _ => format!("{}({})", self.rng.pick(&["lower", "upper"]), self.expr(cx, Text, d)),
        }
    }

    /// An integer argument that is usually small (lengths, counts).
    fn small_or(&mut self, cx: &Ctx, d: u32) -> String {
        if self.rng.chance(80) {
            self.rng.range(-2, 30).to_string()
        } else {
            self.expr(cx, I4, d)
        }
    }

    fn bool_expr(&mut self, cx: &Ctx, d: u32) -> String {
        let cmp_ty = self.rng.pick(&[I4, I4, I8, Num, F8, Text, Text, Date, Ts, Tstz, Interval, Bool, Uuid, Bytea, I4Arr, I2, F4, Varchar, TextArr]);
        match self.rng.below(34) {
            0..=7 => format!("({} {} {})", self.expr(cx, cmp_ty, d), self.rng.pick(&["=", "<>", "<", "<=", ">", ">=", "!="]), self.expr(cx, cmp_ty, d)),
            8..=9 => format!("({} {} {})", self.expr(cx, Bool, d), self.rng.pick(&["AND", "OR"]), self.expr(cx, Bool, d)),
            10 => format!("(NOT {})", self.expr(cx, Bool, d)),
            11 => format!("({} IS {}NULL)", self.expr(cx, cmp_ty, d), self.rng.pick(&["", "NOT "])),
            12 => format!("({} IS {}DISTINCT FROM {})", self.expr(cx, cmp_ty, d), self.rng.pick(&["", "NOT "]), self.expr(cx, cmp_ty, d)),
            13 => format!(
                "({} {}BETWEEN {}{} AND {})",
                self.expr(cx, cmp_ty, d),
                self.rng.pick(&["", "NOT "]),
                self.rng.pick(&["", "SYMMETRIC "]),
                self.expr(cx, cmp_ty, d),
                self.expr(cx, cmp_ty, d)
            ),
            14 => {
                let n = 1 + self.rng.below(4);
                let list: Vec<String> = (0..n).map(|_| self.expr(cx, cmp_ty, d)).collect();
                format!("({} {}IN ({}))", self.expr(cx, cmp_ty, d), self.rng.pick(&["", "NOT "]), list.join(", "))
            }
            15..=16 if self.qdepth > 0 => {
                let sub = self.subquery_of(cx, cmp_ty);
                format!("({} {}IN ({sub}))", self.expr(cx, cmp_ty, d), self.rng.pick(&["", "NOT "]))
            }
            17..=18 if self.qdepth > 0 => {
                self.qdepth -= 1;
                let outer = cx.for_subquery();
                let sel = self.select(SelOpts { outer, ..Default::default() });
                self.qdepth += 1;
                format!("({}EXISTS ({}))", self.rng.pick(&["", "NOT "]), sel.sql)
            }
            19 if self.qdepth > 0 => {
                let sub = self.subquery_of(cx, cmp_ty);
                format!(
                    "({} {} {} ({sub}))",
                    self.expr(cx, cmp_ty, d),
                    self.rng.pick(&["=", "<>", "<", ">=", ">"]),
                    self.rng.pick(&["ANY", "ALL", "SOME"])
                )
            }
            20 => {
                let arr = if cmp_ty == Text { TextArr } else { I4Arr };
                let el = arr.element();
                format!("({} {} {}({}))", self.expr(cx, el, d), self.rng.pick(&["=", "<>", "<", ">"]), self.rng.pick(&["ANY", "ALL"]), self.expr(cx, arr, d))
            }
            21 => format!(
                "({} {} {})",
                self.expr(cx, Text, d),
                self.rng.pick(&["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "SIMILAR TO", "NOT SIMILAR TO", "~~", "!~~"]),
                self.rng.pick(TEXT_PATTERNS)
            ),
            22 => format!("({} {} {})", self.expr(cx, Text, d), self.rng.pick(&["~", "~*", "!~", "!~*"]), self.rng.pick(REGEXES)),
            23 => format!("({} IS {})", self.expr(cx, Bool, d), self.rng.pick(&["TRUE", "NOT TRUE", "FALSE", "NOT FALSE", "UNKNOWN", "NOT UNKNOWN"])),
            24 => format!("isfinite({})", { let t = self.rng.pick(&[Date, Ts, Tstz, Interval]); self.expr(cx, t, d) }),
            25 if self.rng.chance(25) => {
                let arr = self.rng.pick(&[I4Arr, TextArr]);
                format!("({} {} {})", self.expr(cx, arr, d), self.rng.pick(&["@>", "<@", "&&"]), self.expr(cx, arr, d))
            }
            26 => format!("starts_with({}, {})", self.expr(cx, Text, d), self.expr(cx, Text, d)),
            27 => format!(
                "(ROW({}, {}) {} ROW({}, {}))",
                self.expr(cx, I4, d),
                self.expr(cx, Text, d),
                self.rng.pick(&["=", "<>", "<", ">=", "IS DISTINCT FROM"]),
                self.expr(cx, I4, d),
                self.expr(cx, Text, d)
            ),
            28 => format!("({} {} {})", self.expr(cx, Text, d), self.rng.pick(&["LIKE", "ILIKE"]), self.expr(cx, Text, d)),
            29 if self.rng.chance(30) => format!("({})::bool", { let t = self.rng.pick(&[Text, I4]); self.expr(cx, t, d) }),
            30 => {
                let t = self.rng.pick(&[I8, Num, F8, I2]);
                format!("({} {} {})", self.expr(cx, I4, d), self.rng.pick(&["=", "<", ">="]), self.expr(cx, t, d))
            }
            31 => format!("({} {} {})", self.expr(cx, Date, d), self.rng.pick(&["=", "<", ">="]), { let t = self.rng.pick(&[Ts, Tstz]); self.expr(cx, t, d) }),
            32 => format!("({} OVERLAPS {})", format!("({}, {})", self.expr(cx, Date, d), self.expr(cx, Date, d)), format!("({}, {})", self.expr(cx, Date, d), self.expr(cx, Interval, d))),
            _ => format!("({} {} {})", self.expr(cx, Text, d), self.rng.pick(&["=", "<", ">"]), self.expr(cx, Varchar, d)),
        }
    }
}

// ---------------------------------------------------------------------------
// Running statements.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Answer {
    Rows(Vec<String>),
    Error { code: String, message: String, fatal: bool },
    /// The connection broke (no ErrorResponse).
    Lost(String),
    /// No answer within the client-side limit.
    Hung,
}

impl Answer {
    fn describe(&self) -> String {
        match self {
            Answer::Rows(r) => format!("{} rows", r.len()),
            Answer::Error { code, message, fatal } => format!("{}{code} {message}", if *fatal { "FATAL " } else { "" }),
            Answer::Lost(e) => format!("connection lost: {e}"),
            Answer::Hung => "no answer (hang)".to_string(),
        }
    }

    fn is_failure(&self) -> bool {
        match self {
            Answer::Rows(_) => false,
            Answer::Error { code, fatal, .. } => code == "XX000" || code.starts_with("58") || *fatal,
            Answer::Lost(_) | Answer::Hung => true,
        }
    }
}

async fn run_sql(client: &Client, sql: &str, limit: Duration, extended: bool) -> Answer {
    let work = async {
        if extended {
            client.query(sql, &[]).await.map(|rows| rows.iter().map(|_| String::new()).collect::<Vec<_>>())
        } else {
            client.simple_query(sql).await.map(|msgs| {
                msgs.iter()
                    .filter_map(|m| match m {
                        SimpleQueryMessage::Row(row) => {
                            Some((0..row.len()).map(|i| row.get(i).unwrap_or("NULL")).collect::<Vec<_>>().join("|"))
                        }
                        _ => None,
                    })
                    .collect()
            })
        }
    };
    match tokio::time::timeout(limit, work).await {
        Err(_) => Answer::Hung,
        Ok(Ok(rows)) => Answer::Rows(rows),
        Ok(Err(e)) => error_answer(client, &e),
    }
}

fn error_answer(client: &Client, e: &tokio_postgres::Error) -> Answer {
    match e.as_db_error() {
        Some(db) => Answer::Error {
            code: db.code().code().to_string(),
            message: db.message().to_string(),
            fatal: matches!(db.severity(), "FATAL" | "PANIC"),
        },
        None => {
            // tokio-postgres reports some problems of its own (a value it
            // cannot encode, a type it does not know) as non-database
            // errors; anything else here is a broken connection.
            if client.is_closed() {
                Answer::Lost(e.to_string())
            } else {
                Answer::Error { code: "client".into(), message: e.to_string(), fatal: false }
            }
        }
    }
}

/// A parameter value: written as given whatever the parameter's type (so
/// that random bytes reach the server's binary input functions).
#[derive(Debug)]
enum Bind {
    Null,
    Bytes(Vec<u8>),
}

impl tokio_postgres::types::ToSql for Bind {
    fn to_sql(
        &self,
        _: &tokio_postgres::types::Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Bind::Null => Ok(tokio_postgres::types::IsNull::Yes),
            Bind::Bytes(b) => {
                out.extend_from_slice(b);
                Ok(tokio_postgres::types::IsNull::No)
            }
        }
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A binary-format value for a parameter of type `ty`: valid, random, or
/// crafted to have plausible headers with wild counts and lengths.
fn bind_value(rng: &mut Rng, ty: &tokio_postgres::types::Type) -> Bind {
    use tokio_postgres::types::Type as T;
    if rng.chance(15) {
        return Bind::Null;
    }
    let random = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>();
    let fixed = |n: usize| -> Option<usize> { Some(n) };
    let width = match *ty {
        T::BOOL => fixed(1),
        T::INT2 => fixed(2),
        T::INT4 | T::FLOAT4 | T::DATE | T::OID => fixed(4),
        T::INT8 | T::FLOAT8 | T::TIMESTAMP | T::TIMESTAMPTZ | T::TIME => fixed(8),
        T::INTERVAL | T::UUID => fixed(16),
        _ => None,
    };
    if rng.chance(10) {
        // Anything at all.
        let n = rng.below(24);
        return Bind::Bytes(random(rng, n));
    }
    if let Some(w) = width {
        let mut v = random(rng, w);
        if rng.chance(50) {
            // A small or edge value rather than noise.
            let x: i64 = rng.pick(&[0, 1, -1, 2, 42, i64::MAX, i64::MIN, i32::MAX as i64, i32::MIN as i64]);
            let be = x.to_be_bytes();
            v = be[8 - w.min(8)..].to_vec();
            v.resize(w, 0);
        }
        if ty == &T::BOOL && rng.chance(70) {
            v = vec![rng.below(2) as u8];
        }
        return Bind::Bytes(v);
    }
    match *ty {
        T::NUMERIC => {
            let ndigits: i16 = if rng.chance(80) { rng.range(0, 5) as i16 } else { rng.next_u64() as i16 };
            let weight: i16 = if rng.chance(70) { rng.range(-3, 5) as i16 } else { rng.next_u64() as i16 };
            let sign: u16 = rng.pick(&[0x0000, 0x4000, 0xC000, 0xD000, 0xF000, 0x1234]);
            let dscale: i16 = if rng.chance(80) { rng.range(0, 6) as i16 } else { rng.next_u64() as i16 };
            let mut v = Vec::new();
            v.extend_from_slice(&ndigits.to_be_bytes());
            v.extend_from_slice(&weight.to_be_bytes());
            v.extend_from_slice(&sign.to_be_bytes());
            v.extend_from_slice(&dscale.to_be_bytes());
            for _ in 0..(ndigits.max(0) as usize).min(8) {
                let d: u16 = if rng.chance(90) { rng.range(0, 9999) as u16 } else { rng.next_u64() as u16 };
                v.extend_from_slice(&d.to_be_bytes());
            }
            Bind::Bytes(v)
        }
        T::INT4_ARRAY | T::TEXT_ARRAY | T::INT2_ARRAY | T::INT8_ARRAY | T::FLOAT8_ARRAY | T::BOOL_ARRAY => {
            let elem: u32 = match *ty {
                T::INT4_ARRAY => 23,
                T::TEXT_ARRAY => 25,
                T::INT2_ARRAY => 21,
                T::INT8_ARRAY => 20,
                T::FLOAT8_ARRAY => 701,
                _ => 16,
            };
            let ndims: i32 = if rng.chance(80) { rng.range(0, 2) as i32 } else { rng.range(-1, 9) as i32 };
            let mut v = Vec::new();
            v.extend_from_slice(&ndims.to_be_bytes());
            v.extend_from_slice(&(rng.below(2) as i32).to_be_bytes());
            let elem = if rng.chance(90) { elem } else { rng.pick(&[0u32, 25, 23, 1043, 99999]) };
            v.extend_from_slice(&elem.to_be_bytes());
            let mut total: i64 = 1;
            for _ in 0..ndims.clamp(0, 8) {
                let dim: i32 = if rng.chance(85) { rng.range(0, 3) as i32 } else { rng.pick(&[-1, i32::MAX, 1 << 28, 100_000_000]) };
                let lb: i32 = if rng.chance(85) { rng.range(-2, 2) as i32 } else { rng.pick(&[i32::MAX, i32::MIN]) };
                total = total.saturating_mul(dim.max(0) as i64);
                v.extend_from_slice(&dim.to_be_bytes());
                v.extend_from_slice(&lb.to_be_bytes());
            }
            for _ in 0..total.clamp(0, 6) {
                if rng.chance(15) {
                    v.extend_from_slice(&(-1i32).to_be_bytes());
                    continue;
                }
                let body = match elem {
                    23 => random(rng, 4),
                    20 | 701 => random(rng, 8),
                    21 => random(rng, 2),
                    16 => random(rng, 1),
                    _ => {
                        let n = rng.below(6);
                        random(rng, n)
                    }
                };
                let len = if rng.chance(90) { body.len() as i32 } else { rng.pick(&[-2, 1000, i32::MAX]) };
                v.extend_from_slice(&len.to_be_bytes());
                v.extend_from_slice(&body);
            }
            Bind::Bytes(v)
        }
        _ => {
            // Text-like types (text, varchar, bytea, unknown...): bytes that
            // are usually valid UTF-8.
            if rng.chance(70) {
                let s = rng.pick(&["", "abc", "12", "2020-01-01", "true", "{1,2}", "héllo", "1 day", "NaN", "\\x41"]);
                Bind::Bytes(s.as_bytes().to_vec())
            } else {
                let n = rng.below(12);
                Bind::Bytes(random(rng, n))
            }
        }
    }
}

async fn run_prepared(client: &Client, sql: &str, bind_seed: u64, limit: Duration) -> Answer {
    let work = async {
        let stmt = client.prepare(sql).await?;
        let mut rng = Rng::new(bind_seed);
        let values: Vec<Bind> = stmt.params().iter().map(|t| bind_value(&mut rng, t)).collect();
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = values.iter().map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
        client.query(&stmt, &refs).await.map(|rows| rows.iter().map(|_| String::new()).collect::<Vec<_>>())
    };
    match tokio::time::timeout(limit, work).await {
        Err(_) => Answer::Hung,
        Ok(Ok(rows)) => Answer::Rows(rows),
        Ok(Err(e)) => error_answer(client, &e),
    }
}

/// Runs one generated statement; a transaction stops at its first error
/// and is rolled back. Returns one answer per step that ran.
async fn run_stmt(client: &Client, stmt: &Stmt, limit: Duration, extended: bool) -> Vec<(String, Answer)> {
    match stmt {
        Stmt::Query(sql) => vec![(sql.clone(), run_sql(client, sql, limit, extended).await)],
        Stmt::Prepared { sql, bind_seed } => vec![(sql.clone(), run_prepared(client, sql, *bind_seed, limit).await)],
        Stmt::Txn(steps) => {
            let mut out = Vec::new();
            let last = steps.len() - 1;
            for (i, step) in steps.iter().enumerate() {
                if i == last {
                    break;
                }
                let a = run_sql(client, step, limit, false).await;
                let stop = !matches!(a, Answer::Rows(_));
                let broken = a.is_failure();
                out.push((step.clone(), a));
                if broken {
                    return out;
                }
                if stop {
                    break;
                }
            }
            let a = run_sql(client, &steps[last], limit, false).await;
            let a = match a {
                // ROLLBACK must always work, whatever happened before it.
                Answer::Error { code, message, .. } => Answer::Error { code: "XX000".into(), message: format!("ROLLBACK failed: {code} {message}"), fatal: false },
                other => other,
            };
            out.push((steps[last].clone(), a));
            out
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

async fn connect_to(config: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(config, NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn session_setup(client: &Client, timeout_s: u64) {
    client
        .batch_execute(&format!("SET TimeZone = 'UTC'; SET statement_timeout = '{timeout_s}s'; SET DateStyle = 'ISO, MDY'"))
        .await
        .expect("session settings");
}

/// Canonical form of a result for comparing with PostgreSQL: sorted rows.
fn canonical(rows: &[String]) -> Vec<String> {
    let mut r = rows.to_vec();
    r.sort();
    r
}

/// Whether the statement's answer may legitimately differ between runs.
fn nondeterministic(sql: &str) -> bool {
    let s = sql.to_ascii_lowercase();
    ["limit", "offset", "random", "current_", "now(", "explain", "row_number", "first_value", "last_value", "nth_value", "lag(", "lead(", "string_agg", "array_agg", "ntile", "distinct on", "pg_typeof", "for update", "rank()", "cume_dist", "percent_rank"]
        .iter()
        .any(|k| s.contains(k))
}

#[derive(Default)]
struct Stats {
    statements: u64,
    steps: u64,
    rows: u64,
    codes: BTreeMap<String, u64>,
    failures: Vec<String>,
    // Against PostgreSQL:
    pg_both_ok: u64,
    pg_same_rows: u64,
    pg_diff_rows: u64,
    pg_tusk_err_only: u64,
    pg_pg_err_only: u64,
    pg_both_err: u64,
    pg_code_differs: u64,
    tusk_only_codes: BTreeMap<String, u64>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_statements_get_rows_or_clean_errors() {
    let seed = env_u64("TUSK_SQLSMITH_SEED").unwrap_or(20_240_615);
    let count = env_u64("TUSK_SQLSMITH_QUERIES").unwrap_or(4000);
    let start = env_u64("TUSK_SQLSMITH_START").unwrap_or(0);
    let timeout_s = env_u64("TUSK_SQLSMITH_TIMEOUT").unwrap_or(10);
    let verbose = std::env::var("TUSK_SQLSMITH_VERBOSE").is_ok_and(|v| v == "1");
    let limit = Duration::from_secs(timeout_s + 60);
    eprintln!(
        "sqlsmith: seed {seed}, statements {start}..{} (replay one: TUSK_SQLSMITH_SEED={seed} TUSK_SQLSMITH_START=<i> TUSK_SQLSMITH_QUERIES=1 TUSK_SQLSMITH_VERBOSE=1)",
        start + count
    );

    if let Ok(path) = std::env::var("TUSK_SQLSMITH_SCHEMA_OUT") {
        // For reproducing by hand: the schema as a psql script.
        std::fs::write(&path, schema().join(";\n") + ";\n").expect("write the schema");
    }
    let mut server = TestServer::start();
    let admin = server.connect("postgres").await;
    for ddl in schema() {
        admin.batch_execute(&ddl).await.unwrap_or_else(|e| panic!("schema: {ddl}: {e}"));
    }
    drop(admin);
    let mut client = server.connect("postgres").await;
    session_setup(&client, timeout_s).await;

    // Optional PostgreSQL reference.
    let pg_conf = std::env::var("TUSK_SQLSMITH_PG").ok().filter(|s| !s.is_empty());
    let mut pg: Option<Client> = None;
    let mut report = String::new();
    let report_path = std::env::var("TUSK_SQLSMITH_REPORT")
        .unwrap_or_else(|_| std::env::temp_dir().join(format!("sqlsmith-{seed}.txt")).display().to_string());
    if let Some(conf) = &pg_conf {
        let db = format!("tusk_sqlsmith_{seed}_{}", std::process::id());
        let admin = connect_to(conf).await.expect("connect to the PostgreSQL reference");
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {db}")).await.unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {db}")).await.unwrap();
        let c = connect_to(&format!("{conf} dbname={db}")).await.expect("connect to the reference database");
        for ddl in schema() {
            c.batch_execute(&ddl).await.unwrap_or_else(|e| panic!("reference schema: {ddl}: {e}"));
        }
        session_setup(&c, timeout_s).await;
        pg = Some(c);
    }

    let mut stats = Stats::default();
    for i in start..start + count {
        let stmt = Gen::new(seed, i).statement();
        let extended = pg.is_none() && i % 4 == 3;
        let answers = run_stmt(&client, &stmt, limit, extended).await;
        stats.statements += 1;
        let mut broken = false;
        for (sql, a) in &answers {
            stats.steps += 1;
            if verbose {
                eprintln!("[{i}] {sql}\n    => {}", a.describe());
            }
            match a {
                Answer::Rows(r) => {
                    stats.rows += r.len() as u64;
                    *stats.codes.entry("ok".into()).or_default() += 1;
                }
                Answer::Error { code, .. } => *stats.codes.entry(code.clone()).or_default() += 1,
                _ => *stats.codes.entry("broken".into()).or_default() += 1,
            }
            if a.is_failure() {
                let mut what = format!("statement {i} (seed {seed}): {}\n    {sql}", a.describe());
                if let Some(status) = server.exit_status() {
                    let _ = write!(what, "\n    the server exited with {status}; log tail:\n{}", server.log_tail());
                }
                eprintln!("sqlsmith FAILURE: {what}");
                stats.failures.push(what);
                broken = true;
            }
        }
        if broken {
            if stats.failures.len() >= 25 {
                eprintln!("sqlsmith: too many failures, stopping");
                break;
            }
            // Carry on with a live server and a fresh connection.
            if server.exit_status().is_some() {
                server.restart().expect("restart after a crash");
            } else if let Ok(c) = server.try_connect("postgres").await {
                // Ends anything left running (a hang) in the old session.
                let _ = c.batch_execute(&format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")).await;
            }
            client = server.connect("postgres").await;
            session_setup(&client, timeout_s).await;
            continue;
        }
        if let Some(pgc) = &pg {
            let theirs = run_stmt(pgc, &stmt, limit, false).await;
            compare(i, &answers, &theirs, &mut stats, &mut report);
        }
        if !verbose && (i + 1 - start) % 1000 == 0 {
            eprintln!("sqlsmith: {} statements, {} failures", i + 1 - start, stats.failures.len());
        }
    }

    // The server must still be up and answering.
    let alive = run_sql(&client, "SELECT 1", limit, false).await;
    if !matches!(alive, Answer::Rows(_)) {
        stats.failures.push(format!("the server does not answer SELECT 1 at the end: {}", alive.describe()));
    }
    if server.exit_status().is_some() {
        stats.failures.push(format!("the server exited; log tail:\n{}", server.log_tail()));
    }

    let mut summary = format!(
        "sqlsmith: seed {seed}: {} statements, {} steps, {} rows; answers by SQLSTATE:",
        stats.statements, stats.steps, stats.rows
    );
    let mut by_count: Vec<(&String, &u64)> = stats.codes.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1));
    for (code, n) in by_count {
        let _ = write!(summary, " {code}={n}");
    }
    eprintln!("{summary}");
    if pg.is_some() {
        let mut tusk_only: Vec<(&String, &u64)> = stats.tusk_only_codes.iter().collect();
        tusk_only.sort_by(|a, b| b.1.cmp(a.1));
        eprintln!(
            "sqlsmith vs PostgreSQL: both ok {} (same rows {}, different rows {}), Tusk error only {}, PostgreSQL error only {}, both error {} (code differs {}); Tusk-only errors by code: {:?}; details in {report_path}",
            stats.pg_both_ok, stats.pg_same_rows, stats.pg_diff_rows, stats.pg_tusk_err_only, stats.pg_pg_err_only, stats.pg_both_err, stats.pg_code_differs, tusk_only
        );
        std::fs::write(&report_path, &report).expect("write the report");
    }
    assert!(stats.failures.is_empty(), "{} failures:\n{}", stats.failures.len(), stats.failures.join("\n"));
}

fn compare(i: u64, ours: &[(String, Answer)], theirs: &[(String, Answer)], stats: &mut Stats, report: &mut String) {
    for (k, (sql, a)) in ours.iter().enumerate() {
        // Transactions stop at their first error, which may come at a
        // different step on each side: compare only the same statement.
        let Some((_, b)) = theirs.get(k).filter(|(s, _)| s == sql) else { break };
        match (a, b) {
            (Answer::Rows(x), Answer::Rows(y)) => {
                stats.pg_both_ok += 1;
                if nondeterministic(sql) || x.len() == y.len() && canonical(x) == canonical(y) {
                    stats.pg_same_rows += 1;
                } else {
                    stats.pg_diff_rows += 1;
                    let xs = canonical(x);
                    let ys = canonical(y);
                    let first = xs.iter().zip(ys.iter()).find(|(p, q)| p != q);
                    let _ = writeln!(
                        report,
                        "[{i}] ROWS DIFFER (tusk {} rows, pg {} rows; first difference: {:?})\n    {sql}\n",
                        x.len(),
                        y.len(),
                        first
                    );
                }
            }
            (Answer::Error { code, message, .. }, Answer::Rows(y)) => {
                stats.pg_tusk_err_only += 1;
                *stats.tusk_only_codes.entry(code.clone()).or_default() += 1;
                let _ = writeln!(report, "[{i}] TUSK ERROR, PG OK ({} rows): {code} {message}\n    {sql}\n", y.len());
            }
            (Answer::Rows(x), Answer::Error { code, message, .. }) => {
                stats.pg_pg_err_only += 1;
                let _ = writeln!(report, "[{i}] PG ERROR, TUSK OK ({} rows): {code} {message}\n    {sql}\n", x.len());
            }
            (Answer::Error { code: c1, message: m1, .. }, Answer::Error { code: c2, message: m2, .. }) => {
                stats.pg_both_err += 1;
                if c1 != c2 {
                    stats.pg_code_differs += 1;
                    let _ = writeln!(report, "[{i}] CODES DIFFER: tusk {c1} {m1} / pg {c2} {m2}\n    {sql}\n");
                }
            }
            _ => {}
        }
    }
}
