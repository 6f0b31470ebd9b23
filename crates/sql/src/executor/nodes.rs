//! Plan nodes other than joins, aggregation and modification: scans,
//! VALUES, functions in FROM, filters, projections, sorting, DISTINCT,
//! LIMIT, set operations and recursive unions.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use tusk_storage::keys::{encode_key_datum, prefix_end, storage_prefix};
use tusk_types::{sqlstate, Datum, GroupKey, PgError, PgResult};

use super::eval::{eval, eval_pred};
use super::table::{TableAccess, SCAN_BATCH};
use super::{build, ExecCx, Node, Row};
use crate::catalog::Relation;
use crate::expr::Expr;
use crate::functions::{ScalarFn, SetIter};
use crate::plan::{KeyRange, Plan, ScanMethod, SortKey};
use crate::query::SetOpKind;

// ---------------------------------------------------------------- Result / Values

pub struct ResultNode {
    exprs: Vec<Expr>,
    filter: Option<Expr>,
    done: bool,
}

impl ResultNode {
    pub fn new(exprs: Vec<Expr>, filter: Option<Expr>) -> ResultNode {
        ResultNode { exprs, filter, done: false }
    }
}

impl Node for ResultNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        if let Some(f) = &self.filter {
            if !eval_pred(f, &[], cx)? {
                return Ok(None);
            }
        }
        let mut row = Vec::with_capacity(self.exprs.len());
        for e in &self.exprs {
            row.push(eval(e, &[], cx)?);
        }
        Ok(Some(row))
    }
}

pub struct ValuesNode {
    rows: std::vec::IntoIter<Vec<Expr>>,
}

impl ValuesNode {
    pub fn new(rows: Vec<Vec<Expr>>) -> ValuesNode {
        ValuesNode { rows: rows.into_iter() }
    }
}

impl Node for ValuesNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        match self.rows.next() {
            None => Ok(None),
            Some(exprs) => {
                let mut row = Vec::with_capacity(exprs.len());
                for e in &exprs {
                    row.push(eval(e, &[], cx)?);
                }
                Ok(Some(row))
            }
        }
    }
}

// ---------------------------------------------------------------- table scans

enum ScanState {
    /// Scanning a key range of the table itself (full or clustered key).
    Rows { lower: Vec<u8>, upper: Vec<u8> },
    /// The same, through one streaming iterator (see `Txn::scan_stream`);
    /// `batch` grows, so a LIMIT 1 does not decode hundreds of rows.
    Stream { stream: tusk_storage::ScanStream, batch: usize },
    /// Scanning a range of a secondary index, then fetching rows.
    Index { lower: Vec<u8>, upper: Vec<u8> },
    /// Row keys to fetch, or key prefixes to scan, one after another.
    Keys { ranges: std::vec::IntoIter<(Vec<u8>, Vec<u8>)>, through_index: bool, current: Option<(Vec<u8>, Vec<u8>)> },
    /// Whole keys to look up one by one (equality on every column of the
    /// clustered key, or of a unique index whose entries point at rows):
    /// a point read each, which bloom filters and the block cache serve,
    /// instead of a range scan.
    Points { keys: std::vec::IntoIter<Vec<u8>>, through_index: bool },
    Done,
}

pub struct ScanNode {
    table: TableAccess,
    method: ScanMethod,
    filter: Option<Expr>,
    with_key: bool,
    state: Option<ScanState>,
    buffer: std::vec::IntoIter<(Vec<u8>, Row)>,
    /// Whether a streaming scan may still be tried.
    stream_ok: bool,
    /// Rows the filter turned away (EXPLAIN ANALYZE).
    removed: u64,
    /// Append the system columns to each row (see `syscols`).
    pub system_columns: bool,
    /// Rows read so far (numbers the ctids of rows without a key).
    ordinal: u64,
}

/// Compiles a stored expression of `rel` (index expressions, CHECK
/// constraints) into an expression over the table's live-column rows.
pub fn compile_for<'c, 'a: 'c>(cx: &'c ExecCx<'a>) -> impl FnMut(&Relation, &str) -> PgResult<Expr> + 'c {
    move |rel: &Relation, text: &str| {
        let settings = cx.env.settings();
        let user = cx.env.current_user();
        crate::planner::compile_relation_expr(cx.catalog, &settings, &user, rel, text)
    }
}

impl ScanNode {
    pub fn new(
        rel: Arc<Relation>,
        method: ScanMethod,
        filter: Option<Expr>,
        with_key: bool,
        _reverse: bool,
        columns: Option<Arc<[bool]>>,
        cx: &ExecCx,
    ) -> PgResult<ScanNode> {
        let mut table = TableAccess::new(rel, cx.catalog, &mut compile_for(cx))?;
        if let Some(c) = columns {
            table.read_only_columns(&c);
        }
        Ok(ScanNode { table, method, filter, with_key, state: None, buffer: Vec::new().into_iter(), stream_ok: true, removed: 0, system_columns: false, ordinal: 0 })
    }

    /// Encodes a key range: returns [lower, upper) or None if it is empty
    /// (a NULL compared value matches nothing).
    fn range_bounds(prefix: &[u8], range: &KeyRange, cx: &ExecCx) -> PgResult<Option<(Vec<u8>, Vec<u8>)>> {
        let mut base = prefix.to_vec();
        for e in &range.eq {
            let v = eval(e, &[], cx)?;
            if v.is_null() {
                return Ok(None);
            }
            encode_key_datum(&mut base, &v)?;
        }
        let lower = match &range.lower {
            Some((e, inclusive)) => {
                let v = eval(e, &[], cx)?;
                if v.is_null() {
                    return Ok(None);
                }
                let mut k = base.clone();
                encode_key_datum(&mut k, &v)?;
                if *inclusive {
                    k
                } else {
                    prefix_end(&k)
                }
            }
            None => base.clone(),
        };
        let upper = match &range.upper {
            Some((e, inclusive)) => {
                let v = eval(e, &[], cx)?;
                if v.is_null() {
                    return Ok(None);
                }
                let mut k = base.clone();
                encode_key_datum(&mut k, &v)?;
                if *inclusive {
                    prefix_end(&k)
                } else {
                    k
                }
            }
            None => prefix_end(&base),
        };
        if lower >= upper {
            return Ok(None);
        }
        Ok(Some((lower, upper)))
    }

    fn start(&mut self, cx: &ExecCx) -> PgResult<ScanState> {
        if crate::catalog::system::is_system(&self.table.rel) {
            let t = crate::catalog::system::by_oid(self.table.rel.oid).expect("system table");
            let cluster = cx.env.cluster_catalog();
            let settings = cx.env.settings();
            let user = cx.env.current_user();
            let db_name = cx.env.current_database();
            let scx = crate::catalog::system::SysCx {
                catalog: cx.catalog,
                cluster: &cluster,
                settings: &settings,
                database: cx.env.database_oid(),
                database_name: &db_name,
                user: &user,
                activity: if t.name == "pg_stat_activity" { cx.env.backend_activity() } else { Vec::new() },
                prepared: if t.name == "pg_prepared_statements" { cx.env.prepared_statements() } else { Vec::new() },
                cursors: if t.name == "pg_cursors" { cx.env.open_cursors() } else { Vec::new() },
                predicate_locks: if t.name == "pg_locks" { cx.txn.engine().predicate().lock_status() } else { Vec::new() },
                env: Some(cx.env),
            };
            let rows = t.rows(&scx)?;
            self.buffer = rows.into_iter().map(|r| (Vec::new(), r)).collect::<Vec<_>>().into_iter();
            return Ok(ScanState::Done);
        }
        if self.table.rel.kind == crate::catalog::RelKind::Sequence {
            // A sequence reads as one row: last_value, log_cnt, is_called.
            let (last, called) = cx.env.sequence_state(self.table.rel.oid)?;
            self.buffer = vec![(Vec::new(), vec![Datum::Int8(last), Datum::Int8(if called { 32 } else { 0 }), Datum::Bool(called)])].into_iter();
            return Ok(ScanState::Done);
        }
        let prefix = self.table.prefix().to_vec();
        if let Some(state) = self.point_lookup(&prefix, cx)? {
            return Ok(state);
        }
        Ok(match &self.method {
            ScanMethod::Full => ScanState::Rows { lower: prefix.clone(), upper: prefix_end(&prefix) },
            ScanMethod::PrimaryKey(range) => match Self::range_bounds(&prefix, range, cx)? {
                Some((lower, upper)) => ScanState::Rows { lower, upper },
                None => ScanState::Done,
            },
            ScanMethod::Index { index, range } => match Self::range_bounds(&storage_prefix(index.storage_id), range, cx)? {
                Some((lower, upper)) => ScanState::Index { lower, upper },
                None => ScanState::Done,
            },
            ScanMethod::KeyList { index, values } => {
                let arr = eval(values, &[], cx)?;
                let Datum::Array(arr) = arr else { return Ok(ScanState::Done) };
                let base = match index {
                    Some(i) => storage_prefix(i.storage_id),
                    None => prefix.clone(),
                };
                let mut keys: Vec<Vec<u8>> = Vec::new();
                for v in arr.elements.iter().filter(|v| !v.is_null()) {
                    let mut k = base.clone();
                    encode_key_datum(&mut k, v)?;
                    keys.push(k);
                }
                keys.sort();
                keys.dedup();
                let ranges: Vec<(Vec<u8>, Vec<u8>)> = keys.into_iter().map(|k| {
                    let end = prefix_end(&k);
                    (k, end)
                }).collect();
                ScanState::Keys { ranges: ranges.into_iter(), through_index: index.is_some(), current: None }
            }
            ScanMethod::Gin { index, conds } => {
                let mut searches = Vec::with_capacity(conds.len());
                for c in conds {
                    searches.push((c.column, super::gin::gin_query(c.class, c.op, &eval(&c.value, &[], cx)?)?));
                }
                match self.table.gin_search(index.storage_id, &searches, cx)? {
                    Some(keys) => ScanState::Points { keys: keys.into_iter(), through_index: false },
                    None => ScanState::Rows { lower: prefix.clone(), upper: prefix_end(&prefix) },
                }
            }
        })
    }

    /// A scan that names whole keys: equality on all of the clustered
    /// key's columns or of a unique (non-partial) index's, or an IN list on
    /// a one-column one.
    fn point_lookup(&self, prefix: &[u8], cx: &ExecCx) -> PgResult<Option<ScanState>> {
        let full_key = |range: &KeyRange, ncols: usize| range.eq.len() == ncols && range.lower.is_none() && range.upper.is_none();
        let encode = |base: &[u8], values: &[Datum]| -> PgResult<Option<Vec<u8>>> {
            let mut k = base.to_vec();
            for v in values {
                if v.is_null() {
                    return Ok(None);
                }
                encode_key_datum(&mut k, v)?;
            }
            Ok(Some(k))
        };
        let unique_index = |index: &Arc<Relation>| {
            self.table.indexes.iter().find(|i| i.rel.oid == index.oid).filter(|i| i.unique && i.predicate.is_none() && !i.clustered).map(|i| i.cols.len())
        };
        let pk_len = self.table.pk_cols.as_ref().map(Vec::len);
        let (base, ncols, values, through_index): (Vec<u8>, usize, Vec<Datum>, bool) = match &self.method {
            ScanMethod::PrimaryKey(range) if pk_len.is_some_and(|n| full_key(range, n)) => {
                let vals = range.eq.iter().map(|e| eval(e, &[], cx)).collect::<PgResult<Vec<_>>>()?;
                (prefix.to_vec(), vals.len(), vals, false)
            }
            ScanMethod::Index { index, range } if unique_index(index).is_some_and(|n| full_key(range, n)) => {
                let vals = range.eq.iter().map(|e| eval(e, &[], cx)).collect::<PgResult<Vec<_>>>()?;
                (storage_prefix(index.storage_id), vals.len(), vals, true)
            }
            _ => return Ok(None),
        };
        let _ = ncols;
        let keys: Vec<Vec<u8>> = encode(&base, &values)?.into_iter().collect();
        Ok(Some(ScanState::Points { keys: keys.into_iter(), through_index }))
    }

    /// Fetches the next batch of (key, row) pairs; false when exhausted.
    fn fill(&mut self, cx: &ExecCx) -> PgResult<bool> {
        loop {
            cx.check()?;
            let state = self.state.take().expect("scan started");
            let (batch, next_state) = match state {
                ScanState::Done => {
                    self.state = Some(ScanState::Done);
                    return Ok(false);
                }
                ScanState::Rows { lower, upper } if self.stream_ok => match cx.txn.scan_stream(&lower, &upper, false) {
                    Some(stream) => (Vec::new(), ScanState::Stream { stream, batch: 16 }),
                    None => {
                        self.stream_ok = false;
                        (Vec::new(), ScanState::Rows { lower, upper })
                    }
                },
                ScanState::Stream { mut stream, batch } => {
                    let mut rows = Vec::with_capacity(batch);
                    let keep_key = self.with_key || self.system_columns;
                    let table = &self.table;
                    let n = stream.next_batch(batch, &mut |k, v| {
                        rows.push((if keep_key { k.to_vec() } else { Vec::new() }, table.decode(v)?));
                        Ok(())
                    })?;
                    let next = if n < batch { ScanState::Done } else { ScanState::Stream { stream, batch: (batch * 4).min(SCAN_BATCH) } };
                    (rows, next)
                }
                ScanState::Rows { lower, upper } => {
                    let kvs = cx.txn.scan(&lower, &upper, false, SCAN_BATCH)?;
                    let more = kvs.len() == SCAN_BATCH;
                    let next = match (more, kvs.last()) {
                        (true, Some((k, _))) => {
                            let mut l = k.to_vec();
                            l.push(0);
                            ScanState::Rows { lower: l, upper }
                        }
                        _ => ScanState::Done,
                    };
                    let mut rows = Vec::with_capacity(kvs.len());
                    for (k, v) in kvs {
                        rows.push((k.into_vec(), self.table.decode(&v)?));
                    }
                    (rows, next)
                }
                ScanState::Index { lower, upper } => {
                    let kvs = cx.txn.scan(&lower, &upper, false, SCAN_BATCH)?;
                    let more = kvs.len() == SCAN_BATCH;
                    let next = match (more, kvs.last()) {
                        (true, Some((k, _))) => {
                            let mut l = k.to_vec();
                            l.push(0);
                            ScanState::Index { lower: l, upper }
                        }
                        _ => ScanState::Done,
                    };
                    let mut rows = Vec::with_capacity(kvs.len());
                    for (_, row_key) in kvs {
                        if let Some(row) = self.table.fetch(cx.txn, &row_key)? {
                            rows.push((row_key.into_vec(), row));
                        }
                    }
                    (rows, next)
                }
                ScanState::Points { mut keys, through_index } => {
                    let mut rows = Vec::new();
                    if let Some(k) = keys.next() {
                        match cx.txn.get(&k)? {
                            Some(v) if through_index => {
                                if let Some(row) = self.table.fetch(cx.txn, &v)? {
                                    rows.push((v, row));
                                }
                            }
                            Some(v) => rows.push((k, self.table.decode(&v)?)),
                            None => {}
                        }
                    }
                    let next = if keys.len() == 0 { ScanState::Done } else { ScanState::Points { keys, through_index } };
                    (rows, next)
                }
                ScanState::Keys { mut ranges, through_index, current } => {
                    let cur = match current {
                        Some(c) => Some(c),
                        None => ranges.next(),
                    };
                    match cur {
                        None => (Vec::new(), ScanState::Done),
                        Some((lower, upper)) => {
                            let kvs = cx.txn.scan(&lower, &upper, false, SCAN_BATCH)?;
                            let more = kvs.len() == SCAN_BATCH;
                            let next_current = match (more, kvs.last()) {
                                (true, Some((k, _))) => {
                                    let mut l = k.to_vec();
                                    l.push(0);
                                    Some((l, upper))
                                }
                                _ => None,
                            };
                            let mut rows = Vec::with_capacity(kvs.len());
                            for (k, v) in kvs {
                                if through_index {
                                    if let Some(row) = self.table.fetch(cx.txn, &v)? {
                                        rows.push((v.into_vec(), row));
                                    }
                                } else {
                                    rows.push((k.into_vec(), self.table.decode(&v)?));
                                }
                            }
                            (rows, ScanState::Keys { ranges, through_index, current: next_current })
                        }
                    }
                }
            };
            self.state = Some(next_state);
            if !batch.is_empty() {
                self.buffer = batch.into_iter();
                return Ok(true);
            }
        }
    }
}

impl Node for ScanNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.state.is_none() {
            self.state = Some(self.start(cx)?);
        }
        loop {
            let Some((key, mut row)) = self.buffer.next() else {
                if !self.fill(cx)? {
                    return Ok(None);
                }
                continue;
            };
            if self.system_columns {
                let ctid = super::syscols::ctid(&self.table, &key, self.ordinal);
                self.ordinal += 1;
                let sys = super::syscols::values(self.table.rel.oid, ctid);
                if self.with_key {
                    row.push(Datum::bytea(key));
                }
                row.extend(sys);
            } else if self.with_key {
                row.push(Datum::bytea(key));
            }
            if let Some(f) = &self.filter {
                if !eval_pred(f, &row, cx)? {
                    self.removed += 1;
                    continue;
                }
            }
            return Ok(Some(row));
        }
    }

    fn explain_info(&self) -> Vec<(&'static str, String)> {
        match self.filter {
            Some(_) => vec![("Rows Removed by Filter", self.removed.to_string())],
            None => Vec::new(),
        }
    }
}

// ---------------------------------------------------------------- functions in FROM

pub struct FunctionNode {
    call: Expr,
    ordinality: bool,
    expand_record: usize,
    iter: Option<Box<dyn Iterator<Item = PgResult<Datum>> + Send>>,
    n: i64,
}

impl FunctionNode {
    pub fn new(call: Expr, ordinality: bool, expand_record: usize) -> FunctionNode {
        FunctionNode { call, ordinality, expand_record, iter: None, n: 0 }
    }
}

/// Starts a set-returning call (or wraps a scalar result as one row).
pub fn start_set_call(call: &Expr, row: &[Datum], cx: &ExecCx) -> PgResult<Box<dyn Iterator<Item = PgResult<Datum>> + Send>> {
    if let Expr::Func { func, args, ty } = call {
        if let ScalarFn::Set(f) = func.imp {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, row, cx)?);
            }
            if func.strict && vals.iter().any(Datum::is_null) {
                return Ok(Box::new(std::iter::empty()));
            }
            let arg_types: Vec<_> = args.iter().map(|a| a.ty()).collect();
            let fcx = crate::functions::FnCtx { arg_types: &arg_types, ret: *ty, env: cx.env, func: func.oid };
            return f(&vals, &fcx);
        }
    }
    let v = eval(call, row, cx)?;
    Ok(Box::new(std::iter::once(Ok(v))))
}

impl Node for FunctionNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.iter.is_none() {
            self.iter = Some(start_set_call(&self.call, &[], cx)?);
        }
        cx.check()?;
        match self.iter.as_mut().expect("started").next() {
            None => Ok(None),
            Some(v) => {
                let v = v?;
                self.n += 1;
                let mut row = if self.expand_record > 0 {
                    match v {
                        Datum::Record(fields) => fields.as_ref().clone(),
                        Datum::Null => vec![Datum::Null; self.expand_record],
                        other => vec![other],
                    }
                } else {
                    vec![v]
                };
                if self.ordinality {
                    row.push(Datum::Int8(self.n));
                }
                Ok(Some(row))
            }
        }
    }
}

// ---------------------------------------------------------------- filter / project

pub struct FilterNode {
    pub input: Box<dyn Node>,
    pub predicate: Expr,
    /// Rows the predicate turned away (EXPLAIN ANALYZE).
    pub removed: u64,
}

impl Node for FilterNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next(cx)? {
            if eval_pred(&self.predicate, &row, cx)? {
                return Ok(Some(row));
            }
            self.removed += 1;
        }
        Ok(None)
    }

    fn explain_info(&self) -> Vec<(&'static str, String)> {
        vec![("Rows Removed by Filter", self.removed.to_string())]
    }
}

pub struct ProjectNode {
    pub input: Box<dyn Node>,
    pub exprs: Vec<Expr>,
}

impl Node for ProjectNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        match self.input.next(cx)? {
            None => Ok(None),
            Some(row) => {
                let mut out = Vec::with_capacity(self.exprs.len());
                for e in &self.exprs {
                    out.push(eval(e, &row, cx)?);
                }
                Ok(Some(out))
            }
        }
    }
}

/// Target lists with set-returning functions: each input row yields as
/// many rows as its longest set; shorter sets are padded with NULLs. The
/// sets are read as the rows are asked for (a set may be endless:
/// generate_series to infinity under a LIMIT).
pub struct ProjectSetNode {
    input: Box<dyn Node>,
    exprs: Vec<Expr>,
    srfs: Vec<Expr>,
    /// The input row being expanded, with each set still running for it.
    current: Option<(Row, Vec<Option<SetIter>>)>,
}

impl ProjectSetNode {
    pub fn new(input: Box<dyn Node>, exprs: Vec<Expr>, input_width: usize) -> ProjectSetNode {
        let mut srfs = Vec::new();
        let exprs = exprs
            .into_iter()
            .map(|e| {
                e.rewrite(&mut |x| match x {
                    Expr::Func { ref func, ty, .. } if func.imp.is_set() => {
                        srfs.push(x.clone());
                        Expr::Column(input_width + srfs.len() - 1, ty)
                    }
                    other => other,
                })
            })
            .collect();
        ProjectSetNode { input, exprs, srfs, current: None }
    }
}

impl Node for ProjectSetNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        loop {
            if let Some((row, sets)) = self.current.as_mut() {
                cx.check()?;
                let mut ext = row.clone();
                let mut more = false;
                for set in sets.iter_mut() {
                    let v = match set.as_mut().map(|s| s.next()) {
                        Some(Some(v)) => {
                            more = true;
                            v?
                        }
                        Some(None) => {
                            *set = None;
                            Datum::Null
                        }
                        None => Datum::Null,
                    };
                    ext.push(v);
                }
                if more {
                    let mut r = Vec::with_capacity(self.exprs.len());
                    for e in &self.exprs {
                        r.push(eval(e, &ext, cx)?);
                    }
                    return Ok(Some(r));
                }
                self.current = None;
            }
            let Some(row) = self.input.next(cx)? else { return Ok(None) };
            let mut sets = Vec::with_capacity(self.srfs.len());
            for s in &self.srfs {
                sets.push(Some(start_set_call(s, &row, cx)?));
            }
            self.current = Some((row, sets));
        }
    }
}

// ---------------------------------------------------------------- sort / distinct / limit

/// Orders two rows' key values as ORDER BY does.
pub fn compare_keys(a: &[Datum], b: &[Datum], keys: &[(bool, bool)]) -> Ordering {
    for (i, &(desc, nulls_first)) in keys.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = crate::functions::compare_values(x, y);
                if desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

pub struct DistinctNode {
    input: Box<dyn Node>,
    on: Option<Vec<usize>>,
    seen: rustc_hash::FxHashSet<GroupKey>,
}

impl DistinctNode {
    pub fn new(input: Box<dyn Node>, on: Option<Vec<usize>>) -> DistinctNode {
        DistinctNode { input, on, seen: Default::default() }
    }
}

impl Node for DistinctNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        while let Some(row) = self.input.next(cx)? {
            let key: Vec<Datum> = match &self.on {
                Some(cols) => cols.iter().map(|&c| row[c].clone()).collect(),
                None => row.clone(),
            };
            if self.seen.insert(GroupKey(key)) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

pub struct LimitNode {
    input: Box<dyn Node>,
    limit: Option<Expr>,
    offset: Option<Expr>,
    remaining: Option<i64>,
    started: bool,
    ties: Vec<SortKey>,
    /// WITH TIES: the sort key of the last row within the limit.
    last_key: Option<Vec<Datum>>,
}

impl LimitNode {
    pub fn new(input: Box<dyn Node>, limit: Option<Expr>, offset: Option<Expr>, ties: Vec<SortKey>) -> LimitNode {
        LimitNode { input, limit, offset, remaining: None, started: false, ties, last_key: None }
    }

    fn tie_key(&self, row: &[Datum], cx: &ExecCx) -> PgResult<Vec<Datum>> {
        self.ties.iter().map(|k| eval(&k.expr, row, cx)).collect()
    }
}

impl Node for LimitNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if !self.started {
            self.started = true;
            if let Some(l) = &self.limit {
                match eval(l, &[], cx)? {
                    Datum::Null => {}
                    d => {
                        let n = d.as_i64().unwrap_or(0);
                        if n < 0 {
                            return Err(PgError::new(sqlstate::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, "LIMIT must not be negative"));
                        }
                        self.remaining = Some(n);
                    }
                }
            }
            if let Some(o) = &self.offset {
                let n = eval(o, &[], cx)?.as_i64().unwrap_or(0);
                if n < 0 {
                    return Err(PgError::new(sqlstate::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE, "OFFSET must not be negative"));
                }
                if self.remaining != Some(0) {
                    for _ in 0..n {
                        if self.input.next(cx)?.is_none() {
                            break;
                        }
                    }
                }
            }
        }
        match self.remaining {
            Some(0) => {
                // WITH TIES: keep going while rows tie with the last one.
                let Some(last) = self.last_key.clone() else { return Ok(None) };
                match self.input.next(cx)? {
                    Some(row) => {
                        let k = self.tie_key(&row, cx)?;
                        let flags: Vec<(bool, bool)> = self.ties.iter().map(|t| (t.descending, t.nulls_first)).collect();
                        if compare_keys(&k, &last, &flags) == Ordering::Equal {
                            Ok(Some(row))
                        } else {
                            self.last_key = None;
                            Ok(None)
                        }
                    }
                    None => Ok(None),
                }
            }
            Some(n) => {
                self.remaining = Some(n - 1);
                let row = self.input.next(cx)?;
                if n == 1 && !self.ties.is_empty() {
                    if let Some(r) = &row {
                        self.last_key = Some(self.tie_key(r, cx)?);
                    }
                }
                Ok(row)
            }
            None => self.input.next(cx),
        }
    }
}

// ---------------------------------------------------------------- set operations

pub struct AppendNode {
    pub inputs: Vec<Box<dyn Node>>,
    pub current: usize,
}

impl Node for AppendNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        while self.current < self.inputs.len() {
            if let Some(r) = self.inputs[self.current].next(cx)? {
                return Ok(Some(r));
            }
            self.current += 1;
        }
        Ok(None)
    }
}

pub struct SetOpNode {
    kind: SetOpKind,
    all: bool,
    left: Box<dyn Node>,
    right: Option<Box<dyn Node>>,
    counts: HashMap<GroupKey, i64>,
    emitted: HashSet<GroupKey>,
    left_done: bool,
}

impl SetOpNode {
    pub fn new(kind: SetOpKind, all: bool, left: Box<dyn Node>, right: Box<dyn Node>) -> SetOpNode {
        SetOpNode { kind, all, left, right: Some(right), counts: HashMap::new(), emitted: HashSet::new(), left_done: false }
    }
}

impl Node for SetOpNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.kind == SetOpKind::Union {
            // UNION (distinct): left rows, then right rows, each key once.
            loop {
                let row = if !self.left_done {
                    match self.left.next(cx)? {
                        Some(r) => Some(r),
                        None => {
                            self.left_done = true;
                            continue;
                        }
                    }
                } else {
                    match self.right.as_mut() {
                        Some(r) => r.next(cx)?,
                        None => None,
                    }
                };
                let Some(row) = row else { return Ok(None) };
                if self.emitted.insert(GroupKey(row.clone())) {
                    return Ok(Some(row));
                }
            }
        }
        if let Some(mut right) = self.right.take() {
            while let Some(r) = right.next(cx)? {
                *self.counts.entry(GroupKey(r)).or_insert(0) += 1;
            }
        }
        while let Some(row) = self.left.next(cx)? {
            let key = GroupKey(row.clone());
            let count = self.counts.get_mut(&key);
            match (self.kind, self.all) {
                (SetOpKind::Intersect, true) => {
                    if let Some(c) = count {
                        if *c > 0 {
                            *c -= 1;
                            return Ok(Some(row));
                        }
                    }
                }
                (SetOpKind::Intersect, false) => {
                    if count.map(|c| *c > 0).unwrap_or(false) && self.emitted.insert(key) {
                        return Ok(Some(row));
                    }
                }
                (SetOpKind::Except, true) => match count {
                    Some(c) if *c > 0 => *c -= 1,
                    _ => return Ok(Some(row)),
                },
                (SetOpKind::Except, false) => {
                    if count.is_none() && self.emitted.insert(key) {
                        return Ok(Some(row));
                    }
                }
                (SetOpKind::Union, _) => unreachable!(),
            }
        }
        Ok(None)
    }
}

// ---------------------------------------------------------------- recursion and materialization

pub struct RecursiveUnionNode {
    base: Option<Box<dyn Node>>,
    recursive: Plan,
    all: bool,
    id: usize,
    seen: HashSet<GroupKey>,
    /// The rows of the round being read by the running recursive term.
    round: Vec<Row>,
    /// The rows the running round has produced so far: the next round.
    next_round: Vec<Row>,
    current: Option<Box<dyn Node>>,
}

impl RecursiveUnionNode {
    pub fn new(base: Box<dyn Node>, recursive: Plan, all: bool, id: usize) -> RecursiveUnionNode {
        RecursiveUnionNode {
            base: Some(base),
            recursive,
            all,
            id,
            seen: HashSet::new(),
            round: Vec::new(),
            next_round: Vec::new(),
            current: None,
        }
    }

}

fn keep_row(all: bool, seen: &mut HashSet<GroupKey>, row: &Row) -> bool {
    all || seen.insert(GroupKey(row.clone()))
}

/// Rows are returned as soon as they are produced, as PostgreSQL's
/// RecursiveUnion does: a LIMIT above stops a recursion that would never
/// end on its own.
impl Node for RecursiveUnionNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(base) = self.base.as_mut() {
            while let Some(r) = base.next(cx)? {
                if keep_row(self.all, &mut self.seen, &r) {
                    self.round.push(r.clone());
                    return Ok(Some(r));
                }
            }
            self.base = None;
        }
        loop {
            if let Some(node) = self.current.as_mut() {
                while let Some(r) = node.next(cx)? {
                    cx.check()?;
                    if keep_row(self.all, &mut self.seen, &r) {
                        self.next_round.push(r.clone());
                        return Ok(Some(r));
                    }
                }
                self.current = None;
                self.round = std::mem::take(&mut self.next_round);
                continue;
            }
            if self.round.is_empty() {
                cx.state.worktables.borrow_mut().remove(&self.id);
                return Ok(None);
            }
            // The next round reads the previous round's rows.
            let rows = std::mem::take(&mut self.round);
            cx.state.worktables.borrow_mut().insert(self.id, Rc::new(rows));
            self.current = Some(build(&self.recursive, cx)?);
        }
    }
}

pub struct WorkTableNode {
    pub id: usize,
    pub rows: Option<Rc<Vec<Row>>>,
    pub pos: usize,
}

impl Node for WorkTableNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.rows.is_none() {
            self.rows = Some(cx.state.worktables.borrow().get(&self.id).cloned().unwrap_or_default());
        }
        let rows = self.rows.as_ref().expect("set above");
        let r = rows.get(self.pos).cloned();
        self.pos += 1;
        Ok(r)
    }
}

/// Reads a named tuplestore (a trigger's transition table) of the
/// query environment the statement runs in.
pub struct NamedTuplestoreNode {
    pub name: String,
    pub rows: Option<std::sync::Arc<Vec<Row>>>,
    pub pos: usize,
}

impl Node for NamedTuplestoreNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if self.rows.is_none() {
            // A plan cached by procedural code may outlive the firing whose
            // tables it was made for.
            let rows = cx.env.named_tuplestore(&self.name).ok_or_else(|| {
                PgError::new(tusk_types::sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", self.name))
            })?;
            self.rows = Some(rows);
        }
        let rows = self.rows.as_ref().expect("set above");
        let r = rows.get(self.pos).cloned();
        self.pos += 1;
        Ok(r)
    }
}

pub struct MaterializeNode {
    pub input: Option<Box<dyn Node>>,
    pub rows: Vec<Row>,
    pub pos: usize,
}

impl Node for MaterializeNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            while let Some(r) = input.next(cx)? {
                self.rows.push(r);
            }
        }
        let r = self.rows.get(self.pos).cloned();
        self.pos += 1;
        Ok(r)
    }
}

/// SELECT ... FOR UPDATE: locks each row's key before returning it; rows
/// deleted concurrently are skipped.
pub struct LockRowsNode {
    pub input: Box<dyn Node>,
    pub rels: Vec<(Arc<Relation>, usize)>,
    pub exclusive: bool,
    pub wait: crate::query::LockWait,
}

impl Node for LockRowsNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        use crate::query::LockWait;
        'rows: while let Some(row) = self.input.next(cx)? {
            for (rel, key_col) in &self.rels {
                // NULL: the outer side of a join had no row of this table.
                let Datum::Bytea(k) = &row[*key_col] else { continue };
                let latest = match self.wait {
                    LockWait::Block if self.exclusive => cx.txn.get_for_update(k)?,
                    LockWait::Block => cx.txn.lock_shared(k)?,
                    LockWait::Skip | LockWait::Error => match cx.txn.try_lock(k, self.exclusive)? {
                        Some(v) => v,
                        None if self.wait == LockWait::Skip => continue 'rows,
                        None => {
                            return Err(PgError::new(
                                sqlstate::LOCK_NOT_AVAILABLE,
                                format!("could not obtain lock on row in relation \"{}\"", rel.name),
                            ))
                        }
                    },
                };
                // Deleted meanwhile: the row is gone.
                if latest.is_none() {
                    continue 'rows;
                }
            }
            return Ok(Some(row));
        }
        Ok(None)
    }
}
