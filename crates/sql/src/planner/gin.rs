//! Access through GIN indexes: which of a scan's conditions a GIN index
//! answers (match_clause_to_indexcol for the gin operator classes).
//!
//! A condition `column op constant` qualifies when the column is a key of
//! a GIN index whose operator class has `op` (`@>`, `?`, `?|`, `?&` for
//! jsonb_ops; `@>` for jsonb_path_ops; `@>`, `<@`, `&&`, `=` for
//! array_ops), or its commutator with the operands swapped. All the
//! qualifying conditions on one index are searched together; the scan
//! keeps every condition as its filter, which rechecks them.

use tusk_types::oid::Oid;

use crate::catalog::{DbCatalog, Relation};
use crate::executor::gin::{classes_of, gin_op_of_proc, GinOp, GinOpclass};
use crate::expr::Expr;
use crate::plan::{GinCond, ScanMethod};

fn row_independent(e: &Expr) -> bool {
    !e.any(&mut |x| matches!(x, Expr::Column(..))) && !e.is_volatile()
}

fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bool { op: crate::expr::BoolOp::And, args } => args.iter().for_each(|a| conjuncts(a, out)),
        other => out.push(other),
    }
}

/// The operator (as the index sees it: column on the left) of `column op
/// value` written the other way round (`value op column`).
fn commuted(class: GinOpclass, proc_oid: Oid) -> Option<GinOp> {
    match (class, proc_oid) {
        // jsonb_contained: `v <@ col` is `col @> v`.
        (GinOpclass::JsonbOps | GinOpclass::JsonbPathOps, 4050) => Some(GinOp::Contains),
        (GinOpclass::ArrayOps, 2749) => Some(GinOp::Contains),
        (GinOpclass::ArrayOps, 2748) => Some(GinOp::ContainedBy),
        (GinOpclass::ArrayOps, 2747) => Some(GinOp::Overlaps),
        (GinOpclass::ArrayOps, 744) => Some(GinOp::Equal),
        _ => None,
    }
}

/// The GIN index answering the most of `quals`, with those conditions.
pub fn choose_gin(catalog: &DbCatalog, rel: &Relation, quals: &[Expr]) -> Option<ScanMethod> {
    let mut all = Vec::new();
    for q in quals {
        conjuncts(q, &mut all);
    }
    let live: Vec<i16> = rel.live_columns().map(|(a, _)| a).collect();
    let mut best: Option<ScanMethod> = None;
    let mut best_n = 0;
    for idx in catalog.indexes_of(rel) {
        let Some(info) = &idx.index else { continue };
        if info.predicate.is_some() {
            continue;
        }
        let Some(classes) = classes_of(info, idx) else { continue };
        let mut conds = Vec::new();
        for (column, (key, class)) in info.keys.iter().zip(&classes).enumerate() {
            // The key as the conditions would read it: a column, or the
            // index expression compiled over the table's columns.
            let key_expr = match &key.expr {
                Some(text) => match super::compile_relation_expr(catalog, &crate::settings::Settings::default(), "", rel, text) {
                    Ok(e) => e,
                    Err(_) => continue,
                },
                None => {
                    let Some(pos) = live.iter().position(|&a| a == key.attnum) else { continue };
                    Expr::Column(pos, rel.column(key.attnum).sql_type())
                }
            };
            let is_key = |e: &Expr| match (e, &key_expr) {
                (Expr::Column(c, _), Expr::Column(k, _)) => c == k,
                (e, k) => e == k,
            };
            for q in &all {
                let Expr::Func { func, args, .. } = q else { continue };
                if args.len() != 2 {
                    continue;
                }
                let found = if is_key(&args[0]) && row_independent(&args[1]) {
                    gin_op_of_proc(*class, func.oid).map(|op| (op, &args[1], false))
                } else if is_key(&args[1]) && row_independent(&args[0]) {
                    commuted(*class, func.oid).map(|op| (op, &args[0], true))
                } else {
                    None
                };
                if let Some((op, value, commuted)) = found {
                    conds.push(GinCond { column, class: *class, op, value: value.clone(), qual: (*q).clone(), commuted });
                }
            }
        }
        // Of indexes answering as many conditions, one of jsonb_path_ops
        // (fewer, more selective entries) is cheaper to read.
        let score = 2 * conds.len() + conds.iter().any(|c| c.class == GinOpclass::JsonbPathOps) as usize;
        if !conds.is_empty() && score > best_n {
            best_n = score;
            best = Some(ScanMethod::Gin { index: idx.clone(), conds });
        }
    }
    best
}
