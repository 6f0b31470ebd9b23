//! Field names for rows turned into JSON objects.
//!
//! Tusk's row values (`Datum::Record`) carry no field names, while
//! row_to_json(t), to_json(t), json_agg(t) and the like name an object's
//! keys after the row's columns. When the analyzer knows a row argument's
//! columns (a whole-row reference to a table, subquery or function in
//! FROM, or a function with OUT parameters), it converts the row to json
//! with those names before the call; the callee then takes the json as
//! it would the row. Rows nested inside other values still print f1, f2...

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::oid;
use tusk_types::{Datum, SqlType};

use super::Analyzer;
use crate::expr::{Expr, FuncRef};
use crate::functions::ScalarFn;

/// Whether a call of the function `name` (prosrc, or the aggregate's
/// name) turns its row arguments into JSON objects.
fn names_row_arguments(name: &str) -> bool {
    matches!(
        name,
        "to_json"
            | "to_jsonb"
            | "row_to_json"
            | "row_to_json_pretty"
            | "json_build_object"
            | "json_build_array"
            | "jsonb_build_object"
            | "jsonb_build_array"
            | "json_agg"
            | "jsonb_agg"
            | "json_object_agg"
            | "jsonb_object_agg"
    )
}

impl Analyzer<'_> {
    /// The column names of a row-valued expression, when known.
    fn row_field_names(&self, e: &Expr) -> Option<Vec<(String, SqlType)>> {
        if let Expr::Row { args, .. } = e {
            // A whole-row reference: the columns of one range table entry, in order.
            let mut names = Vec::with_capacity(args.len());
            let mut source = None;
            for (i, a) in args.iter().enumerate() {
                let Expr::Var(v) = a else { return None };
                if v.col != i || source.is_some_and(|s| s != (v.rte, v.levels_up)) {
                    return None;
                }
                source = Some((v.rte, v.levels_up));
                let level = self.levels.get(self.levels.len().checked_sub(1 + v.levels_up as usize)?)?;
                let rte = level.rtable.get(v.rte)?;
                if rte.col_names.len() != args.len() {
                    return None;
                }
                names.push((rte.col_names.get(v.col)?.clone(), v.ty));
            }
            return Some(names);
        }
        if e.ty().oid != oid::RECORD {
            return None;
        }
        self.record_fields(e)
    }

    /// Converts the row arguments of a JSON builder call whose columns are
    /// known into json objects keyed by the column names.
    pub(super) fn name_json_row_arguments(&self, name: &str, args: &mut [Expr]) {
        if !names_row_arguments(name) {
            return;
        }
        let pretty = if name == "row_to_json_pretty" { args.get(1).cloned() } else { None };
        for (i, arg) in args.iter_mut().enumerate() {
            if !matches!(arg, Expr::Row { .. }) && arg.ty().oid != oid::RECORD {
                continue;
            }
            if name.starts_with("row_to_json") && i > 0 {
                continue;
            }
            let Some(names) = self.row_field_names(arg) else { continue };
            let types = Array::from_vec(oid::INT8, names.iter().map(|(_, t)| Datum::Int8(t.oid as i64)).collect());
            let names = Array::from_vec(oid::TEXT, names.iter().map(|(n, _)| Datum::text(n)).collect());
            let mut call_args = vec![
                arg.clone(),
                Expr::Const(Datum::Array(Arc::new(names)), SqlType::new(oid::TEXT_ARRAY)),
                Expr::Const(Datum::Array(Arc::new(types)), SqlType::new(oid::INT8_ARRAY)),
            ];
            if let Some(p) = &pretty {
                call_args.push(p.clone());
            }
            let func = FuncRef {
                oid: 0,
                name: Arc::from("row_to_json"),
                imp: ScalarFn::Plain(crate::functions::json::named_row_to_json),
                strict: false,
                volatility: 's',
            };
            // Still a row to the callee's eyes (json_agg separates rows by lines).
            *arg = Expr::Func { func, args: call_args, ty: SqlType::new(oid::RECORD) };
        }
    }
}
