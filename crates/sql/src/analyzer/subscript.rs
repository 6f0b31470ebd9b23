//! Array subscripts (parse_node.c's transformContainerSubscripts and
//! parse_target.c's transformAssignmentIndirection): `a[i]`, `a[i:j]`,
//! `a[:j]` when fetching, and `SET a[i] = v` / `INSERT INTO t (a[i:j])`
//! when assigning.

use pg_query::protobuf as pb;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::coerce::CoercionContext;
use super::expr::{display_type, expr_location};
use super::{pos, Analyzer};
use crate::expr::Expr;

/// One dimension's subscript: (lower, upper); a bound is None when omitted.
pub(crate) type Bounds = (Option<Expr>, Option<Expr>);

impl<'a> Analyzer<'a> {
    /// The subscripts of one container reference, each coerced to integer,
    /// and whether they make a slice. In a slice a plain subscript `[j]`
    /// stands for `[1:j]`, as in PostgreSQL.
    pub(crate) fn transform_subscripts(&mut self, indices: &[&pb::AIndices]) -> PgResult<(Vec<Bounds>, bool)> {
        let slice = indices.iter().any(|ix| ix.is_slice);
        let mut out = Vec::with_capacity(indices.len());
        for ix in indices {
            let lower = if !slice {
                None
            } else if let Some(l) = &ix.lidx {
                Some(self.subscript_expr(l)?)
            } else if !ix.is_slice {
                Some(Expr::Const(Datum::Int4(1), SqlType::new(oid::INT4)))
            } else {
                None
            };
            let upper = match &ix.uidx {
                Some(u) => Some(self.subscript_expr(u)?),
                None => None,
            };
            out.push((lower, upper));
        }
        if out.len() > tusk_types::array::MAX_DIMS {
            return Err(tusk_types::array::too_many_dims(out.len()));
        }
        Ok((out, slice))
    }

    fn subscript_expr(&mut self, n: &pb::Node) -> PgResult<Expr> {
        let e = self.transform_expr(n)?;
        let loc = expr_location(n);
        match self.try_coerce(e, SqlType::new(oid::INT4), CoercionContext::Assignment, loc)? {
            Ok(e) => Ok(e),
            Err(_) => Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "array subscript must have type integer").with_position(pos(loc))),
        }
    }

    /// The element type of a subscriptable type, or PostgreSQL's error.
    pub(crate) fn subscript_element(&self, ty: SqlType, location: i32) -> PgResult<SqlType> {
        let elem = self.b.element_of(ty.oid);
        if elem == 0 {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", display_type(self.b, ty)),
            )
            .with_position(pos(location)));
        }
        Ok(SqlType { oid: elem, typmod: ty.typmod })
    }

    /// `base[...]` fetching an element or a slice.
    pub(crate) fn subscript_fetch(&mut self, base: Expr, indices: &[&pb::AIndices], base_location: i32) -> PgResult<Expr> {
        if indices.is_empty() {
            return Ok(base);
        }
        // A domain's value is subscripted as its base type's
        // (transformContainerType), and the result is of the base type.
        let ty = crate::catalog::types::base_type(base.ty());
        // jsonb has its own subscripting (jsonbsubs.c): keys and positions.
        if ty.oid == tusk_types::oid::JSONB {
            let slice = indices.iter().any(|ix| ix.is_slice);
            let mut subs = Vec::with_capacity(indices.len());
            for ix in indices {
                let lo = ix.lidx.as_ref().map(|n| self.transform_expr(n)).transpose()?;
                let hi = ix.uidx.as_ref().map(|n| self.transform_expr(n)).transpose()?;
                subs.push((lo, hi));
            }
            return self.jsonb_subscript_fetch(base, subs, slice);
        }
        let elem = self.subscript_element(ty, base_location)?;
        let (indexes, slice) = self.transform_subscripts(indices)?;
        let out_ty = if slice { ty } else { SqlType::new(elem.oid) };
        Ok(Expr::Subscript { arg: Box::new(base), indexes, slice, ty: out_ty })
    }

    /// transformAssignmentIndirection: the value of column `column`
    /// (currently `base`) after `column[...].field... = value`, as a chain
    /// of subscripted assignments and field stores. `location` is the
    /// target's, for errors.
    pub(crate) fn subscript_assignment(
        &mut self,
        base: Expr,
        indirection: &[pb::Node],
        value: Expr,
        column: &str,
        location: i32,
    ) -> PgResult<Expr> {
        crate::stack::check()?;
        let mut indices: Vec<&pb::AIndices> = Vec::new();
        for (i, n) in indirection.iter().enumerate() {
            match &n.node {
                Some(pg_query::NodeEnum::AIndices(ix)) => indices.push(ix.as_ref()),
                Some(pg_query::NodeEnum::String(field)) => {
                    if !indices.is_empty() {
                        return self.assign_subscripts(base, &indices, &indirection[i..], value, column, location);
                    }
                    return self.assign_field(base, &field.sval, &indirection[i + 1..], value, column, location);
                }
                _ => return Err(PgError::unsupported("this kind of assignment indirection")),
            }
        }
        if !indices.is_empty() {
            return self.assign_subscripts(base, &indices, &[], value, column, location);
        }
        Ok(value)
    }

    /// `value` as the target type of an assignment, or PostgreSQL's error
    /// for a subscripted or a field target.
    fn assignment_value(&mut self, value: Expr, needed: SqlType, target: &str, subscripted: bool, location: i32) -> PgResult<Expr> {
        match self.try_coerce(value, needed, CoercionContext::Assignment, location)? {
            Ok(v) => Ok(v),
            Err(v) => {
                let (want, got) = (display_type(self.b, SqlType::new(needed.oid)), display_type(self.b, v.ty()));
                let message = if subscripted {
                    format!("subscripted assignment to \"{target}\" requires type {want} but expression is of type {got}")
                } else {
                    format!("subfield \"{target}\" is of type {want} but expression is of type {got}")
                };
                Err(PgError::new(sqlstate::DATATYPE_MISMATCH, message)
                    .with_hint("You will need to rewrite or cast the expression.")
                    .with_position(pos(location)))
            }
        }
    }

    /// transformAssignmentSubscripts: `base[...]` assigned, the element
    /// itself being assigned through `rest` when more indirection follows.
    /// A domain over an array takes the base array's assignment and is
    /// checked again.
    fn assign_subscripts(
        &mut self,
        base: Expr,
        indices: &[&pb::AIndices],
        rest: &[pb::Node],
        value: Expr,
        column: &str,
        location: i32,
    ) -> PgResult<Expr> {
        let domain = crate::catalog::types::domain(base.ty().oid).is_some().then(|| base.ty());
        let ty = crate::catalog::types::base_type(base.ty());
        let elem = self.b.element_of(ty.oid);
        if elem == 0 {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", display_type(self.b, ty)),
            )
            .with_position(pos(location)));
        }
        let (indexes, slice) = self.transform_subscripts(indices)?;
        let needed = if slice { ty } else { SqlType { oid: elem, typmod: ty.typmod } };
        let value = if rest.is_empty() {
            self.assignment_value(value, needed, column, true, location)?
        } else {
            let current = Expr::Subscript { arg: Box::new(base.clone()), indexes: indexes.clone(), slice, ty: needed };
            self.subscript_assignment(current, rest, value, column, location)?
        };
        let assigned = Expr::SubscriptAssign { arg: Box::new(base), indexes, slice, value: Box::new(value), ty };
        match domain {
            Some(d) => self.coerce_to_domain(assigned, d),
            None => Ok(assigned),
        }
    }

    /// A field store: `base` with field `field` assigned (through `rest`
    /// when more indirection follows) and its other fields kept; a NULL
    /// base gives NULL other fields. A domain over a composite is checked
    /// again.
    fn assign_field(&mut self, base: Expr, field: &str, rest: &[pb::Node], value: Expr, column: &str, location: i32) -> PgResult<Expr> {
        let domain = crate::catalog::types::domain(base.ty().oid).is_some().then(|| base.ty());
        let row_type = crate::catalog::types::base_type(base.ty());
        let Some(fields) = crate::catalog::types::composite_fields(row_type.oid) else {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "cannot assign to field \"{field}\" of column \"{column}\" because its type {} is not a composite type",
                    display_type(self.b, base.ty())
                ),
            )
            .with_position(pos(location)));
        };
        let Some(k) = fields.iter().position(|(n, _)| n == field) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "cannot assign to field \"{field}\" of column \"{column}\" because there is no such column in data type {}",
                    display_type(self.b, base.ty())
                ),
            )
            .with_position(pos(location)));
        };
        let field_ty = fields[k].1;
        let new_value = if rest.is_empty() {
            self.assignment_value(value, field_ty, field, false, location)?
        } else {
            let current = Expr::FieldSelect { arg: Box::new(base.clone()), field: k, ty: field_ty };
            self.subscript_assignment(current, rest, value, column, location)?
        };
        let args = fields
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| if i == k { new_value.clone() } else { Expr::FieldSelect { arg: Box::new(base.clone()), field: i, ty: *ty } })
            .collect();
        let stored = Expr::Row { args, ty: row_type };
        match domain {
            Some(d) => self.coerce_to_domain(stored, d),
            None => Ok(stored),
        }
    }
}
