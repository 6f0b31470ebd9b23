//! Access path selection: which key range of which index (or of the
//! table's clustered primary key) a scan reads, from the scan's conditions.
//!
//! A condition `column op value` can bound a key when the value's
//! memcomparable encoding orders like the column's (see
//! `tusk_storage::keys`): same type, or integers with integers, floats
//! with floats. The scan keeps every condition as a filter too, so a range
//! only ever narrows what is read.

use std::sync::Arc;

use tusk_types::net::NetAddr;
use tusk_types::oid::{self, Oid};
use tusk_types::{Datum, SqlType};

use crate::catalog::builtin::Builtins;
use crate::catalog::{DbCatalog, Relation};
use crate::expr::Expr;
use crate::plan::{KeyRange, ScanMethod};

/// Whether values of these two types encode to comparable keys and hash alike.
pub fn same_key_family(a: Oid, b: Oid) -> bool {
    let int = |t| matches!(t, oid::INT2 | oid::INT4 | oid::INT8);
    let float = |t| matches!(t, oid::FLOAT4 | oid::FLOAT8);
    let text = |t| matches!(t, oid::TEXT | oid::VARCHAR | oid::NAME);
    let net = |t| matches!(t, oid::INET | oid::CIDR);
    let bits = |t| matches!(t, oid::BIT | oid::VARBIT);
    a == b || (int(a) && int(b)) || (float(a) && float(b)) || (text(a) && text(b)) || (net(a) && net(b)) || (bits(a) && bits(b))
}

/// network_subset_support: `key << net` and `key <<= net` (or `net >> key`,
/// `net >>= key`) with a network that does not depend on the row read
/// the key range from the network's first address (excluded for `<<`) to
/// its last one. A constant network gives constant bounds (as EXPLAIN
/// shows them); another (a parameter of a cached plan) is bounded by
/// `network(net)` and `set_masklen(broadcast(net), -1)`.
fn network_subset_conds(b: &Builtins, name: &str, l: &Expr, r: &Expr, col_types: &[Oid], conds: &mut Vec<KeyCond>) {
    let (col, net, strict) = match (name, l, r) {
        ("<<" | "<<=", Expr::Column(c, _), v) if row_independent(v) => (*c, v, name == "<<"),
        (">>" | ">>=", v, Expr::Column(c, _)) if row_independent(v) => (*c, v, name == ">>"),
        _ => return,
    };
    if col >= col_types.len() || !matches!(col_types[col], oid::INET | oid::CIDR) || !matches!(net.ty().oid, oid::INET | oid::CIDR) {
        return;
    }
    let inet = SqlType::new(oid::INET);
    let (first, last) = match net {
        Expr::Const(Datum::Net(NetAddr::Inet(n)), _) => {
            let mut last = n.broadcast();
            last.bits = last.max_bits();
            (Expr::Const(Datum::Net(NetAddr::Inet(n.network())), inet), Expr::Const(Datum::Net(NetAddr::Inet(last)), inet))
        }
        Expr::Const(..) => return,
        v => {
            const NETWORK: Oid = 683;
            const BROADCAST: Oid = 698;
            const SET_MASKLEN: Oid = 605;
            let (Some(first), Some(bcast)) = (builtin_call(b, NETWORK, vec![v.clone()]), builtin_call(b, BROADCAST, vec![v.clone()])) else { return };
            let Some(last) = builtin_call(b, SET_MASKLEN, vec![bcast, Expr::Const(Datum::Int4(-1), SqlType::new(oid::INT4))]) else { return };
            (first, last)
        }
    };
    conds.push(KeyCond { col, op: if strict { Op::Gt } else { Op::Ge }, value: first });
    conds.push(KeyCond { col, op: Op::Le, value: last });
}

/// A call of a built-in function, as the planner adds one.
fn builtin_call(b: &Builtins, proc_oid: Oid, args: Vec<Expr>) -> Option<Expr> {
    let p = b.proc(proc_oid)?;
    let imp = crate::functions::lookup_proc(p)?;
    let func = crate::expr::FuncRef { oid: p.oid, name: Arc::from(p.name.as_str()), imp, strict: p.strict, volatility: p.volatility };
    Some(Expr::Func { func, args, ty: SqlType::new(p.rettype) })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A condition usable for a key: (column, op, value expression).
struct KeyCond {
    col: usize,
    op: Op,
    value: Expr,
}

/// The value side must not depend on the scanned row.
fn row_independent(e: &Expr) -> bool {
    !e.any(&mut |x| matches!(x, Expr::Column(..))) && !e.is_volatile()
}

fn strip_relabel(e: &Expr) -> &Expr {
    // varchar → text and similar binary-compatible casts keep the key order.
    if let Expr::Cast { arg, spec } = e {
        if spec.from.oid == oid::VARCHAR && spec.to.oid == oid::TEXT && spec.to.typmod < 0 {
            return strip_relabel(arg);
        }
    }
    e
}

fn key_conditions(b: &Builtins, quals: &[Expr], col_types: &[Oid]) -> (Vec<KeyCond>, Vec<(usize, Expr)>) {
    let mut conds = Vec::new();
    let mut lists = Vec::new();
    let mut all = Vec::new();
    for q in quals {
        flatten_and(q, &mut all);
    }
    for q in all {
        match q {
            Expr::Func { func, args, .. } if args.len() == 2 => {
                let Some(name) = b.operator_name_of_proc(func.oid) else { continue };
                let (l, r) = (strip_relabel(&args[0]), strip_relabel(&args[1]));
                let op = match name {
                    "=" => Op::Eq,
                    "<" => Op::Lt,
                    "<=" => Op::Le,
                    ">" => Op::Gt,
                    ">=" => Op::Ge,
                    "<<" | "<<=" | ">>" | ">>=" => {
                        network_subset_conds(b, name, l, r, col_types, &mut conds);
                        continue;
                    }
                    _ => continue,
                };
                let flip = |op| match op {
                    Op::Lt => Op::Gt,
                    Op::Le => Op::Ge,
                    Op::Gt => Op::Lt,
                    Op::Ge => Op::Le,
                    o => o,
                };
                let (col, op, value) = match (l, r) {
                    (Expr::Column(c, _), v) if row_independent(v) => (*c, op, v.clone()),
                    (v, Expr::Column(c, _)) if row_independent(v) => (*c, flip(op), v.clone()),
                    _ => continue,
                };
                if col < col_types.len() && same_key_family(col_types[col], value.ty().oid) && col_types[col] != oid::BPCHAR {
                    conds.push(KeyCond { col, op, value });
                }
            }
            Expr::ScalarArrayOp { op, any: true, args } => {
                if b.operator_name_of_proc(op.oid) != Some("=") {
                    continue;
                }
                if let Expr::Column(c, ty) = strip_relabel(&args.0) {
                    let elem = b.element_of(args.1.ty().oid);
                    if row_independent(&args.1) && same_key_family(ty.oid, elem) && ty.oid != oid::BPCHAR {
                        lists.push((*c, args.1.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    (conds, lists)
}

fn flatten_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bool { op: crate::expr::BoolOp::And, args } => {
            for a in args {
                flatten_and(a, out);
            }
        }
        other => out.push(other),
    }
}

/// A candidate key: the table's clustered primary key or a secondary index.
struct Candidate {
    index: Option<Arc<Relation>>,
    /// 0-based live column positions of the key columns.
    cols: Vec<usize>,
    unique: bool,
}

/// Builds the best range over one candidate's key columns.
fn range_for(cand: &Candidate, conds: &[KeyCond]) -> (KeyRange, usize) {
    let mut eq = Vec::new();
    let mut score = 0;
    for &c in &cand.cols {
        match conds.iter().find(|k| k.col == c && k.op == Op::Eq) {
            Some(k) => {
                eq.push(k.value.clone());
                score += 10;
            }
            None => break,
        }
    }
    let mut lower = None;
    let mut upper = None;
    if let Some(&next) = cand.cols.get(eq.len()) {
        for k in conds.iter().filter(|k| k.col == next) {
            match k.op {
                Op::Gt | Op::Ge if lower.is_none() => lower = Some((k.value.clone(), k.op == Op::Ge)),
                Op::Lt | Op::Le if upper.is_none() => upper = Some((k.value.clone(), k.op == Op::Le)),
                _ => {}
            }
        }
        score += lower.is_some() as usize * 3 + upper.is_some() as usize * 3;
    }
    if cand.unique && eq.len() == cand.cols.len() {
        score += 100;
    }
    (KeyRange { eq, lower, upper }, score)
}

/// Chooses how to scan `rel` given its (converted) conditions. The second
/// value asks for a reverse scan (never chosen yet).
pub fn choose_scan(b: &Builtins, catalog: &DbCatalog, rel: &Relation, quals: &[Expr]) -> (ScanMethod, bool) {
    match choose_btree_scan(b, catalog, rel, quals) {
        (ScanMethod::Full, false) if !quals.is_empty() => (super::gin::choose_gin(catalog, rel, quals).unwrap_or(ScanMethod::Full), false),
        chosen => chosen,
    }
}

fn choose_btree_scan(b: &Builtins, catalog: &DbCatalog, rel: &Relation, quals: &[Expr]) -> (ScanMethod, bool) {
    if quals.is_empty() {
        return (ScanMethod::Full, false);
    }
    let mut col_types: Vec<Oid> = rel.live_columns().map(|(_, c)| c.type_oid).collect();
    // Index expressions read as extra columns (see `expr_index`).
    let exprs = super::expr_index::expression_keys(catalog, rel);
    let with_exprs;
    let quals = if exprs.is_empty() {
        quals
    } else {
        with_exprs = super::expr_index::as_key_columns(quals, &exprs, col_types.len());
        col_types.extend(exprs.iter().map(|k| k.expr.ty().oid));
        &with_exprs[..]
    };
    let (conds, lists) = key_conditions(b, quals, &col_types);
    if conds.is_empty() && lists.is_empty() {
        return (ScanMethod::Full, false);
    }
    let width = rel.live_columns().count();
    let attnum_to_col = |attnum: i16| rel.live_columns().position(|(a, _)| a == attnum);
    let mut cands: Vec<Candidate> = Vec::new();
    for idx in catalog.indexes_of(rel) {
        let Some(info) = &idx.index else { continue };
        if info.method == "gin" || info.predicate.is_some() || info.keys.iter().any(|k| k.desc || k.nulls_first) {
            continue;
        }
        let key_col = |(i, k): (usize, &crate::catalog::IndexKey)| match &k.expr {
            None => attnum_to_col(k.attnum),
            Some(_) => exprs.iter().position(|e| e.index == idx.oid && e.key == i).map(|p| width + p),
        };
        let cols: Option<Vec<usize>> = info.keys.iter().enumerate().map(key_col).collect();
        let Some(cols) = cols else { continue };
        cands.push(Candidate { index: if info.clustered { None } else { Some(idx.clone()) }, cols, unique: info.unique });
    }
    let mut best: Option<(ScanMethod, usize)> = None;
    for c in &cands {
        let (range, score) = range_for(c, &conds);
        if score == 0 {
            continue;
        }
        if best.as_ref().map(|(_, s)| score > *s).unwrap_or(true) {
            let method = match &c.index {
                None => ScanMethod::PrimaryKey(range),
                Some(i) => ScanMethod::Index { index: i.clone(), range },
            };
            best = Some((method, score));
        }
    }
    if let Some((m, score)) = &best {
        if *score >= 10 || lists.is_empty() {
            return (m.clone(), false);
        }
    }
    // IN lists on the first key column.
    for (col, values) in lists {
        if let Some(c) = cands.iter().find(|c| c.cols.first() == Some(&col)) {
            return (ScanMethod::KeyList { index: c.index.clone(), values }, false);
        }
    }
    match best {
        Some((m, _)) => (m, false),
        None => (ScanMethod::Full, false),
    }
}
