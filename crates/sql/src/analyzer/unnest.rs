//! `unnest(a, b, ...)` in FROM: PostgreSQL's parser turns a multi-argument
//! unnest into `ROWS FROM (unnest(a), unnest(b), ...)` (transformRangeFunction):
//! the arrays are walked side by side, the shorter ones padded with NULLs.
//! Here the call becomes one set-returning function whose rows are records
//! of one element of each array.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, Datum, PgError, PgResult, SqlType};

use super::Analyzer;
use crate::expr::{Expr, FuncRef};
use crate::functions::{FnCtx, ScalarFn, SetIter};
use crate::query::{RangeTblEntry, RteKind};

/// The rows of unnest(a, b, ...): row i holds the i-th element of each
/// array (NULL past an array's end, or for a NULL array).
fn unnest_zip(args: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let arrays: Vec<Option<Arc<tusk_types::array::Array>>> = args
        .iter()
        .map(|a| match a {
            Datum::Array(x) => Some(x.clone()),
            _ => None,
        })
        .collect();
    let rows = arrays.iter().map(|a| a.as_ref().map(|x| x.elements.len()).unwrap_or(0)).max().unwrap_or(0);
    Ok(Box::new((0..rows).map(move |i| {
        let fields = arrays.iter().map(|a| a.as_ref().and_then(|x| x.elements.get(i).cloned()).unwrap_or(Datum::Null)).collect();
        Ok(Datum::Record(Arc::new(fields)))
    })))
}

impl<'a> Analyzer<'a> {
    /// The range table entry of `unnest(a, b, ...)` with two or more
    /// arguments, or None when the call is something else.
    pub(crate) fn multi_arg_unnest(&mut self, rf: &pb::RangeFunction, call: &pb::Node) -> PgResult<Option<RangeTblEntry>> {
        let Some(NodeEnum::FuncCall(fc)) = &call.node else { return Ok(None) };
        let names: Vec<&str> = fc.funcname.iter().filter_map(super::node_string).collect();
        let is_unnest = matches!(names.as_slice(), ["unnest"] | ["pg_catalog", "unnest"]);
        if !is_unnest || fc.args.len() < 2 || fc.agg_star || fc.func_variadic || fc.over.is_some() {
            return Ok(None);
        }
        // Each argument resolves as unnest(argument) would.
        let mut arrays = Vec::with_capacity(fc.args.len());
        let mut types = Vec::with_capacity(fc.args.len());
        let mut first_oid = 0;
        for arg in &fc.args {
            let mut single = (**fc).clone();
            single.args = vec![arg.clone()];
            let e = self.transform_expr(&pb::Node { node: Some(NodeEnum::FuncCall(Box::new(single))) })?;
            match e {
                Expr::Func { func, mut args, ty } if args.len() == 1 && self.b.element_of(args[0].ty().oid) != 0 => {
                    first_oid = func.oid;
                    arrays.push(args.remove(0));
                    types.push(ty);
                }
                _ => return Err(PgError::unsupported("unnest of several arguments that are not all arrays")),
            }
        }
        let func = FuncRef { oid: first_oid, name: Arc::from("unnest"), imp: ScalarFn::Set(unnest_zip), strict: false, volatility: 'i' };
        let call = Expr::Func { func, args: arrays, ty: SqlType::new(oid::RECORD) };
        let mut col_names = vec!["unnest".to_string(); types.len()];
        let mut col_types = types;
        if rf.ordinality {
            col_names.push("ordinality".into());
            col_types.push(SqlType::new(oid::INT8));
        }
        if let Some(a) = &rf.alias {
            for (i, c) in a.colnames.iter().enumerate() {
                if i < col_names.len() {
                    col_names[i] = super::node_string(c).unwrap_or_default().to_string();
                }
            }
        }
        Ok(Some(RangeTblEntry {
            kind: RteKind::Function { call, ordinality: rf.ordinality, columns_from_record: true },
            alias: rf.alias.as_ref().map(|a| a.aliasname.clone()).unwrap_or_else(|| "unnest".into()),
            has_alias: rf.alias.is_some(),
            col_names,
            col_types,
            lateral: true,
            inh: false,
        }))
    }
}
