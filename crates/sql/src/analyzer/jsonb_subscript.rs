//! jsonb subscripting (`doc['a'][0]`), as PostgreSQL 14+'s jsonbsubs.c:
//! each subscript is an integer or text (unknown literals are text), no
//! slices. A fetch follows the path like `#>`; an assignment in UPDATE SET
//! (`SET doc['a'][0] = v`) sets the path like jsonb_set, creating missing
//! containers (an object for a text step, an array for an integer step)
//! and filling array gaps with nulls.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use super::coerce::{self, CoercionContext};
use super::expr::display_type;
use super::{pos, Analyzer};
use crate::expr::{Expr, FuncRef};
use crate::functions::{jsonfuncs, ScalarFn};

/// pg_proc's jsonb_subscript_handler: the OID the subscript calls carry.
const JSONB_SUBSCRIPT_HANDLER: Oid = 6098;

fn subscript_call(name: &str, imp: ScalarFn, args: Vec<Expr>) -> Expr {
    let func = FuncRef { oid: JSONB_SUBSCRIPT_HANDLER, name: Arc::from(name), imp, strict: false, volatility: 'i' };
    Expr::Func { func, args, ty: SqlType::new(oid::JSONB) }
}

fn no_slices(location: i32) -> PgError {
    PgError::new(sqlstate::DATATYPE_MISMATCH, "jsonb subscript does not support slices").with_position(pos(location))
}

impl Analyzer<'_> {
    /// A subscript coerced to integer or text (jsonb_subscript_transform).
    fn jsonb_subscript_arg(&mut self, e: Expr, location: i32) -> PgResult<Expr> {
        let ty = e.ty().oid;
        if ty == oid::UNKNOWN {
            return self.coerce_to(e, SqlType::new(oid::TEXT), CoercionContext::Implicit, location);
        }
        for target in [oid::INT4, oid::TEXT] {
            if coerce::can_coerce(self.b, ty, target, CoercionContext::Implicit) {
                return self.coerce_to(e, SqlType::new(target), CoercionContext::Implicit, location);
            }
        }
        Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("subscript type {} is not supported", display_type(self.b, e.ty())))
            .with_hint("jsonb subscript must be coercible to either integer or text.")
            .with_position(pos(location)))
    }

    /// `jsonb[...]...` in an expression.
    pub(super) fn jsonb_subscript_fetch(&mut self, base: Expr, subs: Vec<(Option<Expr>, Option<Expr>)>, slice: bool) -> PgResult<Expr> {
        if slice {
            return Err(no_slices(-1));
        }
        let mut args = vec![base];
        for (lo, hi) in subs {
            let Some(e) = hi.or(lo) else { return Err(no_slices(-1)) };
            args.push(self.jsonb_subscript_arg(e, -1)?);
        }
        Ok(subscript_call("jsonb_subscript_fetch", ScalarFn::Plain(jsonfuncs::jsonb_subscript_fetch), args))
    }

    /// `SET col[...]... = value` for a jsonb column: the column's new value.
    pub(super) fn jsonb_subscript_assign(&mut self, current: Expr, indirection: &[pb::Node], value: Expr, location: i32) -> PgResult<Expr> {
        let value = self.coerce_to(value, SqlType::new(oid::JSONB), CoercionContext::Assignment, location)?;
        let mut args = vec![current, value];
        for n in indirection {
            match &n.node {
                Some(NodeEnum::AIndices(ix)) => {
                    if ix.is_slice {
                        return Err(no_slices(location));
                    }
                    let Some(e) = ix.uidx.as_deref().or(ix.lidx.as_deref()) else { return Err(no_slices(location)) };
                    let e = self.transform_expr(e)?;
                    args.push(self.jsonb_subscript_arg(e, location)?);
                }
                _ => return Err(PgError::unsupported("UPDATE of fields of jsonb")),
            }
        }
        Ok(subscript_call("jsonb_subscript_assign", ScalarFn::Plain(jsonfuncs::jsonb_subscript_assign), args))
    }
}
