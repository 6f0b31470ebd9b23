//! Enum support functions (utils/adt/enum.c): input and output, the btree
//! comparison functions behind the anyenum operators, hashing, and
//! enum_first / enum_last / enum_range.

use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult};

use super::{plain, FnCtx, Registry};
use crate::catalog::enums::{self, check_safe_use, enum_def, label_info};

fn type_display(t: Oid) -> String {
    crate::analyzer::types::format_type(crate::catalog::builtins(), t, -1)
}

/// enum_in: the label's value; a label added by this open transaction is
/// refused (check_safe_enum_use).
pub fn enum_in(s: &str, type_oid: Oid) -> PgResult<Datum> {
    let Some(def) = enum_def(type_oid) else {
        return Err(PgError::internal(format!("{} is not an enum", type_display(type_oid))));
    };
    match def.labels.iter().find(|l| l.label == s) {
        Some(l) => {
            check_safe_use(l.oid)?;
            Ok(Datum::Enum(l.oid))
        }
        None => Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input value for enum {}: \"{}\"", type_display(type_oid), s))),
    }
}

/// enum_out: the label's text.
pub fn label_text(label: Oid) -> String {
    label_info(label).map(|l| l.label.to_string()).unwrap_or_default()
}

/// The enum type a label belongs to.
pub fn label_type(label: Oid) -> Option<Oid> {
    label_info(label).map(|l| l.type_oid)
}

/// enum_recv: the label's text, as enum_in reads it.
pub fn enum_recv(b: &[u8], type_oid: Oid) -> PgResult<Datum> {
    let s = std::str::from_utf8(b).map_err(|_| PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\""))?;
    enum_in(s, type_oid)
}

fn cmp(a: &[Datum]) -> Ordering {
    a[0].cmp_same_type(&a[1])
}

fn enum_eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Equal))
}
fn enum_ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Equal))
}
fn enum_lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Less))
}
fn enum_le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Greater))
}
fn enum_gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Greater))
}
fn enum_ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Less))
}
fn enum_cmp(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(match cmp(a) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}
fn enum_smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if cmp(a) == Ordering::Greater { a[1].clone() } else { a[0].clone() })
}
fn enum_larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if cmp(a) == Ordering::Less { a[1].clone() } else { a[0].clone() })
}

fn enum_in_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = a[0].as_str().unwrap_or("");
    let t = a.get(1).and_then(|d| d.as_i64()).map(|v| v as Oid).unwrap_or(c.ret.oid);
    enum_in(s, t)
}
fn enum_out_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Datum::Enum(o) = a[0] else { return Ok(Datum::Null) };
    Ok(Datum::from_string(label_text(o)))
}
fn enum_send_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Datum::Enum(o) = a[0] else { return Ok(Datum::Null) };
    Ok(Datum::bytea(label_text(o).into_bytes()))
}

/// The enum type a call is about: its (first) argument's type, seen
/// through domains.
fn call_type(c: &FnCtx) -> PgResult<Oid> {
    for i in 0..c.arg_types.len() {
        let t = crate::catalog::types::base_type_oid(c.arg_type(i));
        if enums::is_enum(t) {
            return Ok(t);
        }
    }
    Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "could not determine actual enum type"))
}

/// enum_first / enum_last (enum_endpoint).
fn endpoint(c: &FnCtx, last: bool) -> PgResult<Datum> {
    let t = call_type(c)?;
    let def = enum_def(t).ok_or_else(|| PgError::internal("enum type without labels"))?;
    let l = if last { def.labels.last() } else { def.labels.first() };
    match l {
        Some(l) => {
            check_safe_use(l.oid)?;
            Ok(Datum::Enum(l.oid))
        }
        None => Err(PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("enum {} contains no values", type_display(t)))),
    }
}
fn enum_first(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    endpoint(c, false)
}
fn enum_last(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    endpoint(c, true)
}

/// enum_range_internal: the labels from `lower` to `upper` (NULL: from
/// the first, to the last), as an array of the type.
fn range(c: &FnCtx, lower: &Datum, upper: &Datum) -> PgResult<Datum> {
    let t = call_type(c)?;
    let def = enum_def(t).ok_or_else(|| PgError::internal("enum type without labels"))?;
    let mut out = Vec::new();
    let mut started = lower.is_null();
    for l in &def.labels {
        let v = Datum::Enum(l.oid);
        if !started && v.cmp_same_type(lower) == Ordering::Equal {
            started = true;
        }
        if started {
            check_safe_use(l.oid)?;
            out.push(v.clone());
        }
        if !upper.is_null() && v.cmp_same_type(upper) == Ordering::Equal {
            break;
        }
    }
    Ok(Datum::Array(Arc::new(Array::from_vec(t, out))))
}
fn enum_range_bounds(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    range(c, &a[0], &a[1])
}
fn enum_range_all(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    range(c, &Datum::Null, &Datum::Null)
}

pub fn register(r: &mut Registry) {
    plain(r, &["enum_in"], enum_in_fn);
    plain(r, &["enum_out"], enum_out_fn);
    plain(r, &["enum_send"], enum_send_fn);
    plain(r, &["enum_eq"], enum_eq);
    plain(r, &["enum_ne"], enum_ne);
    plain(r, &["enum_lt"], enum_lt);
    plain(r, &["enum_le"], enum_le);
    plain(r, &["enum_gt"], enum_gt);
    plain(r, &["enum_ge"], enum_ge);
    plain(r, &["enum_cmp"], enum_cmp);
    plain(r, &["enum_smaller"], enum_smaller);
    plain(r, &["enum_larger"], enum_larger);
    plain(r, &["enum_first"], enum_first);
    plain(r, &["enum_last"], enum_last);
    plain(r, &["enum_range_bounds"], enum_range_bounds);
    plain(r, &["enum_range_all"], enum_range_all);
}
