//! Conditions on index expressions (`CREATE INDEX ON t ((doc->>'name'))`):
//! match_index_to_operand for expression keys.
//!
//! Each expression key of the table's B-tree indexes is compiled as the
//! executor compiles it to write entries, and every occurrence of it in
//! the scan's conditions is replaced by an extra column numbered after
//! the table's live columns. A condition `expression = constant` then
//! reads like `column = constant` to the key-range code, and the index's
//! key lists that extra column where it lists the expression.

use crate::catalog::{DbCatalog, Relation};
use crate::expr::Expr;

/// One expression key of one index, compiled over the table's live columns.
pub struct ExpressionKey {
    pub index: tusk_types::oid::Oid,
    /// The key's position in the index.
    pub key: usize,
    pub expr: Expr,
}

/// The expression keys of `rel`'s B-tree indexes (without a predicate).
pub fn expression_keys(catalog: &DbCatalog, rel: &Relation) -> Vec<ExpressionKey> {
    let mut out = Vec::new();
    let settings = crate::settings::Settings::default();
    for idx in catalog.indexes_of(rel) {
        let Some(info) = &idx.index else { continue };
        if info.method == "gin" || info.predicate.is_some() {
            continue;
        }
        for (key, k) in info.keys.iter().enumerate() {
            let Some(text) = &k.expr else { continue };
            // An expression that no longer compiles is simply not matched.
            if let Ok(expr) = super::compile_relation_expr(catalog, &settings, "", rel, text) {
                out.push(ExpressionKey { index: idx.oid, key, expr });
            }
        }
    }
    out
}

/// `quals` with each occurrence of a key expression replaced by its extra
/// column (`width` + its position in `keys`).
pub fn as_key_columns(quals: &[Expr], keys: &[ExpressionKey], width: usize) -> Vec<Expr> {
    quals
        .iter()
        .map(|q| {
            q.clone().rewrite(&mut |e| match keys.iter().position(|k| k.expr == e) {
                Some(p) => Expr::Column(width + p, e.ty()),
                None => e,
            })
        })
        .collect()
}
