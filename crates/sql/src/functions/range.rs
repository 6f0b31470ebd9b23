//! Range and multirange types at the SQL level: their text and binary I/O
//! (range_in/out/recv/send, multirange_*), constructors, operators and
//! functions, by the prosrc names of PostgreSQL's pg_proc rows. The value
//! logic lives in `tusk_types::range`; this module finds the range type of
//! a call and runs the subtype's I/O.

use std::sync::Arc;

use tusk_types::oid::Oid;
use tusk_types::range::{self as rng, Bound, Multirange, Range, RangeType};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::{plain, set, FnCtx, Registry, SetIter};
use crate::settings::Settings;

/// The range type with this OID. Built-in range types come from pg_range's
/// rows, user-defined ones (CREATE TYPE ... AS RANGE) from the catalog.
pub fn range_type(oid: Oid) -> Option<RangeType> {
    rng::builtin_range_type(oid).copied().or_else(|| crate::catalog::ranges::range_type(oid))
}

/// The range type of a multirange type.
pub fn range_type_of_multirange(oid: Oid) -> Option<RangeType> {
    rng::builtin_range_of_multirange(oid).copied().or_else(|| crate::catalog::ranges::range_type_of_multirange(oid))
}

/// The range type over a subtype (for `anyelement` → `anyrange`).
pub fn range_type_of_subtype(subtype: Oid) -> Option<RangeType> {
    rng::builtin_range_of_subtype(subtype).copied()
}

fn not_a_range(oid: Oid) -> PgError {
    PgError::internal(format!("type {oid} is not a range type"))
}

fn rt_of(oid: Oid) -> PgResult<RangeType> {
    range_type(oid).ok_or_else(|| not_a_range(oid))
}

fn mrt_of(oid: Oid) -> PgResult<RangeType> {
    range_type_of_multirange(oid).ok_or_else(|| PgError::internal(format!("type {oid} is not a multirange type")))
}

// ---------------------------------------------------------------- I/O

/// range_out
pub fn format_range(r: &Range, settings: &Settings) -> String {
    let sub = range_type(r.type_oid).map(|t| t.subtype).unwrap_or(0);
    rng::format_range(r, &mut |d| super::io::format_text(d, sub, settings))
}

/// multirange_out
pub fn format_multirange(m: &Multirange, settings: &Settings) -> String {
    let sub = range_type_of_multirange(m.type_oid).map(|t| t.subtype).unwrap_or(0);
    rng::format_multirange(m, &mut |d| super::io::format_text(d, sub, settings))
}

fn parse_range_with(rt: &RangeType, s: &str, typmod: i32, settings: &Settings, explicit: bool) -> PgResult<Range> {
    let sub = SqlType { oid: rt.subtype, typmod };
    rng::parse_range(rt, s, &mut |t| super::io::parse_text(t, sub, settings, explicit))
}

/// range_in / multirange_in for `ty`, or None when `ty` is neither.
pub fn parse_text(s: &str, ty: SqlType, settings: &Settings, explicit: bool) -> PgResult<Option<Datum>> {
    if let Some(rt) = range_type(ty.oid) {
        return Ok(Some(Datum::Range(Arc::new(parse_range_with(&rt, s, ty.typmod, settings, explicit)?))));
    }
    if let Some(rt) = range_type_of_multirange(ty.oid) {
        let mut ranges = Vec::new();
        for part in rng::split_multirange_text(s)? {
            ranges.push(parse_range_with(&rt, &part, ty.typmod, settings, explicit)?);
        }
        return Ok(Some(Datum::Multirange(Arc::new(rng::make_multirange(&rt, ranges)?))));
    }
    Ok(None)
}

/// range_send: the flag byte, then each finite bound as a length and the
/// subtype's binary form.
pub fn send_range(r: &Range) -> Vec<u8> {
    let sub = range_type(r.type_oid).map(|t| t.subtype).unwrap_or(0);
    let mut v = vec![r.flags()];
    if !r.empty {
        for b in [&r.lower, &r.upper] {
            if !b.infinite {
                let bytes = super::io::format_binary(&b.value, sub);
                v.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                v.extend_from_slice(&bytes);
            }
        }
    }
    v
}

/// multirange_send: a count, then each range's send form behind its length.
pub fn send_multirange(m: &Multirange) -> Vec<u8> {
    let mut v = (m.ranges.len() as u32).to_be_bytes().to_vec();
    for r in &m.ranges {
        let b = send_range(r);
        v.extend_from_slice(&(b.len() as u32).to_be_bytes());
        v.extend_from_slice(&b);
    }
    v
}

fn insufficient() -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message")
}

fn take<'a>(b: &'a [u8], pos: &mut usize, n: usize) -> PgResult<&'a [u8]> {
    let s = b.get(*pos..*pos + n).ok_or_else(insufficient)?;
    *pos += n;
    Ok(s)
}

fn take_u32(b: &[u8], pos: &mut usize) -> PgResult<u32> {
    Ok(u32::from_be_bytes(take(b, pos, 4)?.try_into().expect("4 bytes")))
}

fn recv_range(rt: &RangeType, b: &[u8], typmod: i32) -> PgResult<Range> {
    use tusk_types::range::{RANGE_EMPTY, RANGE_LB_INC, RANGE_LB_INF, RANGE_UB_INC, RANGE_UB_INF};
    let mut pos = 0;
    let flags = *take(b, &mut pos, 1)?.first().expect("one byte");
    let sub = SqlType { oid: rt.subtype, typmod };
    let bound = |inf: u8, inc: u8, pos: &mut usize| -> PgResult<Bound> {
        if flags & (RANGE_EMPTY | inf) != 0 {
            return Ok(Bound::infinite());
        }
        let len = take_u32(b, pos)? as usize;
        let data = take(b, pos, len)?;
        Ok(Bound::finite(super::io::parse_binary(data, sub)?, flags & inc != 0))
    };
    let lower = bound(RANGE_LB_INF, RANGE_LB_INC, &mut pos)?;
    let upper = bound(RANGE_UB_INF, RANGE_UB_INC, &mut pos)?;
    if pos != b.len() {
        return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"));
    }
    rng::make_range(rt, lower, upper, flags & RANGE_EMPTY != 0)
}

/// range_recv / multirange_recv for `ty`, or None when `ty` is neither.
pub fn parse_binary(b: &[u8], ty: SqlType) -> PgResult<Option<Datum>> {
    if let Some(rt) = range_type(ty.oid) {
        return Ok(Some(Datum::Range(Arc::new(recv_range(&rt, b, ty.typmod)?))));
    }
    if let Some(rt) = range_type_of_multirange(ty.oid) {
        let mut pos = 0;
        let n = take_u32(b, &mut pos)?;
        let mut ranges = Vec::new();
        for _ in 0..n {
            let len = take_u32(b, &mut pos)? as usize;
            ranges.push(recv_range(&rt, take(b, &mut pos, len)?, ty.typmod)?);
        }
        if pos != b.len() {
            return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"));
        }
        return Ok(Some(Datum::Multirange(Arc::new(rng::make_multirange(&rt, ranges)?))));
    }
    Ok(None)
}

/// The explicit cast of a range to its multirange (multirange_constructor1).
pub fn range_to_multirange(r: &Range) -> PgResult<Datum> {
    let rt = rt_of(r.type_oid)?;
    Ok(mr_datum(rng::make_multirange(&rt, vec![r.clone()])?))
}

// ---------------------------------------------------------------- argument access

fn range_arg(a: &[Datum], i: usize) -> PgResult<&Range> {
    match &a[i] {
        Datum::Range(r) => Ok(r),
        _ => Err(PgError::internal("range argument expected")),
    }
}

fn mr_arg(a: &[Datum], i: usize) -> PgResult<&Multirange> {
    match &a[i] {
        Datum::Multirange(m) => Ok(m),
        _ => Err(PgError::internal("multirange argument expected")),
    }
}

fn range_datum(r: Range) -> Datum {
    Datum::Range(Arc::new(r))
}

fn mr_datum(m: Multirange) -> Datum {
    Datum::Multirange(Arc::new(m))
}

// ---------------------------------------------------------------- constructors

fn constructor2(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rt = rt_of(c.ret.oid)?;
    let lower = if a[0].is_null() { Bound::infinite() } else { Bound::finite(a[0].clone(), true) };
    let upper = if a[1].is_null() { Bound::infinite() } else { Bound::finite(a[1].clone(), false) };
    Ok(range_datum(rng::make_range(&rt, lower, upper, false)?))
}

fn constructor3(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rt = rt_of(c.ret.oid)?;
    if a[2].is_null() {
        return Err(PgError::new(sqlstate::DATA_EXCEPTION, "range constructor flags argument must not be null"));
    }
    let (li, ui) = rng::parse_flags(a[2].as_str().unwrap_or(""))?;
    let lower = if a[0].is_null() { Bound::infinite() } else { Bound::finite(a[0].clone(), li) };
    let upper = if a[1].is_null() { Bound::infinite() } else { Bound::finite(a[1].clone(), ui) };
    Ok(range_datum(rng::make_range(&rt, lower, upper, false)?))
}

fn mr_constructor0(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(mr_datum(Multirange { type_oid: c.ret.oid, ranges: Vec::new() }))
}

fn mr_constructor1(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rt = mrt_of(c.ret.oid)?;
    let r = range_arg(a, 0)?;
    Ok(mr_datum(rng::make_multirange(&rt, vec![r.clone()])?))
}

/// multirange_constructor2: a multirange of the ranges of a VARIADIC
/// array (built-in variadic functions also receive the ranges one by one).
fn mr_constructor2(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let rt = mrt_of(c.ret.oid)?;
    let members: &[Datum] = match a {
        [Datum::Array(arr)] => {
            if arr.dims.len() > 1 {
                return Err(PgError::new(sqlstate::CARDINALITY_VIOLATION, "multiranges cannot be constructed from multidimensional arrays"));
            }
            &arr.elements
        }
        _ => a,
    };
    let mut ranges = Vec::with_capacity(members.len());
    for e in members {
        match e {
            Datum::Range(r) => ranges.push((**r).clone()),
            Datum::Null => {
                return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "multirange values cannot contain null members"));
            }
            _ => return Err(PgError::internal("range expected in multirange constructor")),
        }
    }
    Ok(mr_datum(rng::make_multirange(&rt, ranges)?))
}

// ---------------------------------------------------------------- accessors

fn lower(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let r = range_arg(a, 0)?;
    Ok(if r.empty || r.lower.infinite { Datum::Null } else { r.lower.value.clone() })
}

fn upper(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let r = range_arg(a, 0)?;
    Ok(if r.empty || r.upper.infinite { Datum::Null } else { r.upper.value.clone() })
}

fn flag_fn(a: &[Datum], f: u8) -> PgResult<Datum> {
    Ok(Datum::Bool(range_arg(a, 0)?.flags() & f != 0))
}

fn isempty(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    flag_fn(a, rng::RANGE_EMPTY)
}
fn lower_inc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    flag_fn(a, rng::RANGE_LB_INC)
}
fn upper_inc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    flag_fn(a, rng::RANGE_UB_INC)
}
fn lower_inf(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    flag_fn(a, rng::RANGE_LB_INF)
}
fn upper_inf(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    flag_fn(a, rng::RANGE_UB_INF)
}

fn mr_lower(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let m = mr_arg(a, 0)?;
    Ok(match m.ranges.first() {
        Some(r) if !r.lower.infinite => r.lower.value.clone(),
        _ => Datum::Null,
    })
}

fn mr_upper(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let m = mr_arg(a, 0)?;
    Ok(match m.ranges.last() {
        Some(r) if !r.upper.infinite => r.upper.value.clone(),
        _ => Datum::Null,
    })
}

fn mr_isempty(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(mr_arg(a, 0)?.is_empty()))
}
fn mr_lower_inc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(mr_arg(a, 0)?.ranges.first().is_some_and(|r| r.lower.inclusive)))
}
fn mr_upper_inc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(mr_arg(a, 0)?.ranges.last().is_some_and(|r| r.upper.inclusive)))
}
fn mr_lower_inf(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(mr_arg(a, 0)?.ranges.first().is_some_and(|r| r.lower.infinite)))
}
fn mr_upper_inf(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(mr_arg(a, 0)?.ranges.last().is_some_and(|r| r.upper.infinite)))
}

// ---------------------------------------------------------------- comparison

macro_rules! cmp_family {
    ($get:ident, $cmp:path, $eq:ident, $ne:ident, $lt:ident, $le:ident, $gt:ident, $ge:ident, $c:ident) => {
        fn $eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_eq()))
        }
        fn $ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_ne()))
        }
        fn $lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_lt()))
        }
        fn $le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_le()))
        }
        fn $gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_gt()))
        }
        fn $ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp($get(a, 0)?, $get(a, 1)?).is_ge()))
        }
        fn $c(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Int4($cmp($get(a, 0)?, $get(a, 1)?) as i32))
        }
    };
}

cmp_family!(range_arg, rng::range_cmp, range_eq, range_ne, range_lt, range_le, range_gt, range_ge, range_cmp);
cmp_family!(mr_arg, rng::multirange_cmp, mr_eq, mr_ne, mr_lt, mr_le, mr_gt, mr_ge, mr_cmp);

// ---------------------------------------------------------------- range operators

fn rt_of_range(a: &[Datum], i: usize) -> PgResult<RangeType> {
    rt_of(range_arg(a, i)?.type_oid)
}

fn rt_of_mr(a: &[Datum], i: usize) -> PgResult<RangeType> {
    mrt_of(mr_arg(a, i)?.type_oid)
}

fn contains_elem(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::contains_elem(range_arg(a, 0)?, &a[1])))
}
fn elem_contained_by(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::contains_elem(range_arg(a, 1)?, &a[0])))
}
fn contains(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::contains(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn contained_by(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::contains(range_arg(a, 1)?, range_arg(a, 0)?)))
}
fn overlaps(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::overlaps(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn before(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::before(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn after(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::after(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn overleft(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::overleft(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn overright(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::overright(range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn adjacent(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::adjacent(&rt_of_range(a, 0)?, range_arg(a, 0)?, range_arg(a, 1)?)))
}
fn union(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(range_datum(rng::union(&rt_of_range(a, 0)?, range_arg(a, 0)?, range_arg(a, 1)?, true)?))
}
fn merge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(range_datum(rng::union(&rt_of_range(a, 0)?, range_arg(a, 0)?, range_arg(a, 1)?, false)?))
}
fn intersect(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(range_datum(rng::intersect(&rt_of_range(a, 0)?, range_arg(a, 0)?, range_arg(a, 1)?)?))
}
fn minus(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(range_datum(rng::minus(&rt_of_range(a, 0)?, range_arg(a, 0)?, range_arg(a, 1)?)?))
}

// ---------------------------------------------------------------- multirange operators

/// A range as a one-range multirange, so that mixed operators reuse the
/// multirange ones.
fn as_mr(rt: &RangeType, r: &Range) -> Multirange {
    Multirange { type_oid: rt.multirange, ranges: if r.empty { Vec::new() } else { vec![r.clone()] } }
}

fn mr_contains_elem(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_elem(mr_arg(a, 0)?, &a[1])))
}
fn elem_contained_by_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_elem(mr_arg(a, 1)?, &a[0])))
}
fn mr_contains_range(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_range(mr_arg(a, 0)?, range_arg(a, 1)?)))
}
fn range_contained_by_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_range(mr_arg(a, 1)?, range_arg(a, 0)?)))
}
fn range_contains_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::range_contains_multirange(&rt_of_range(a, 0)?, range_arg(a, 0)?, mr_arg(a, 1)?)))
}
fn mr_contained_by_range(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::range_contains_multirange(&rt_of_range(a, 1)?, range_arg(a, 1)?, mr_arg(a, 0)?)))
}
fn mr_contains_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_multirange(mr_arg(a, 0)?, mr_arg(a, 1)?)))
}
fn mr_contained_by_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_contains_multirange(mr_arg(a, 1)?, mr_arg(a, 0)?)))
}
fn range_overlaps_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_overlaps_range(mr_arg(a, 1)?, range_arg(a, 0)?)))
}
fn mr_overlaps_range(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_overlaps_range(mr_arg(a, 0)?, range_arg(a, 1)?)))
}
fn mr_overlaps_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::multirange_overlaps_multirange(mr_arg(a, 0)?, mr_arg(a, 1)?)))
}

/// An operand of a positional operator as a range: a range itself, or a
/// multirange's span.
fn span_arg(a: &[Datum], i: usize) -> PgResult<Range> {
    match &a[i] {
        Datum::Range(r) => Ok((**r).clone()),
        Datum::Multirange(m) => Ok(m.span(&mrt_of(m.type_oid)?)),
        _ => Err(PgError::internal("range or multirange argument expected")),
    }
}

fn any_before(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::before(&span_arg(a, 0)?, &span_arg(a, 1)?)))
}
fn any_after(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::after(&span_arg(a, 0)?, &span_arg(a, 1)?)))
}
fn any_overleft(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::overleft(&span_arg(a, 0)?, &span_arg(a, 1)?)))
}
fn any_overright(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(rng::overright(&span_arg(a, 0)?, &span_arg(a, 1)?)))
}

/// An operand of -|- as a multirange (with its range type).
fn mr_operand(a: &[Datum], i: usize) -> PgResult<(RangeType, Multirange)> {
    match &a[i] {
        Datum::Range(r) => {
            let rt = rt_of(r.type_oid)?;
            let m = as_mr(&rt, r);
            Ok((rt, m))
        }
        Datum::Multirange(m) => Ok((mrt_of(m.type_oid)?, (**m).clone())),
        _ => Err(PgError::internal("range or multirange argument expected")),
    }
}

fn any_adjacent(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (rt, x) = mr_operand(a, 0)?;
    let (_, y) = mr_operand(a, 1)?;
    Ok(Datum::Bool(rng::multirange_adjacent(&rt, &x, &y)))
}

fn mr_union(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(mr_datum(rng::multirange_union(&rt_of_mr(a, 0)?, mr_arg(a, 0)?, mr_arg(a, 1)?)?))
}
fn mr_intersect(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(mr_datum(rng::multirange_intersect(&rt_of_mr(a, 0)?, mr_arg(a, 0)?, mr_arg(a, 1)?)?))
}
fn mr_minus(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(mr_datum(rng::multirange_minus(&rt_of_mr(a, 0)?, mr_arg(a, 0)?, mr_arg(a, 1)?)?))
}

/// range_merge(anymultirange): the span.
fn merge_from_mr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let rt = rt_of_mr(a, 0)?;
    Ok(range_datum(mr_arg(a, 0)?.span(&rt)))
}

fn mr_unnest(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let ranges = mr_arg(a, 0)?.ranges.clone();
    Ok(Box::new(ranges.into_iter().map(|r| Ok(range_datum(r)))))
}

// ---------------------------------------------------------------- aggregates

/// range_agg's transition: collects the ranges (multiranges' ranges too).
pub fn agg_collect(acc: &mut Vec<Range>, v: &Datum) {
    match v {
        Datum::Range(r) => acc.push((**r).clone()),
        Datum::Multirange(m) => acc.extend(m.ranges.iter().cloned()),
        _ => {}
    }
}

/// range_agg's final function: the multirange of type `ret` of what was collected.
pub fn agg_finish(acc: &[Range], ret: Oid) -> PgResult<Datum> {
    let rt = mrt_of(ret)?;
    Ok(mr_datum(rng::make_multirange(&rt, acc.to_vec())?))
}

/// range_intersect_agg's transition: the running intersection.
pub fn intersect_step(cur: &Datum, v: &Datum) -> PgResult<Datum> {
    Ok(match (cur, v) {
        (Datum::Range(a), Datum::Range(b)) => range_datum(rng::intersect(&rt_of(a.type_oid)?, a, b)?),
        (Datum::Multirange(a), Datum::Multirange(b)) => mr_datum(rng::multirange_intersect(&mrt_of(a.type_oid)?, a, b)?),
        _ => return Err(PgError::internal("range_intersect_agg state mismatch")),
    })
}

pub fn register(r: &mut Registry) {
    plain(r, &["range_constructor2"], constructor2);
    plain(r, &["range_constructor3"], constructor3);
    plain(r, &["multirange_constructor0"], mr_constructor0);
    plain(r, &["multirange_constructor1"], mr_constructor1);
    plain(r, &["multirange_constructor2"], mr_constructor2);
    plain(r, &["range_lower"], lower);
    plain(r, &["range_upper"], upper);
    plain(r, &["range_empty"], isempty);
    plain(r, &["range_lower_inc"], lower_inc);
    plain(r, &["range_upper_inc"], upper_inc);
    plain(r, &["range_lower_inf"], lower_inf);
    plain(r, &["range_upper_inf"], upper_inf);
    plain(r, &["multirange_lower"], mr_lower);
    plain(r, &["multirange_upper"], mr_upper);
    plain(r, &["multirange_empty"], mr_isempty);
    plain(r, &["multirange_lower_inc"], mr_lower_inc);
    plain(r, &["multirange_upper_inc"], mr_upper_inc);
    plain(r, &["multirange_lower_inf"], mr_lower_inf);
    plain(r, &["multirange_upper_inf"], mr_upper_inf);
    plain(r, &["range_eq"], range_eq);
    plain(r, &["range_ne"], range_ne);
    plain(r, &["range_lt"], range_lt);
    plain(r, &["range_le"], range_le);
    plain(r, &["range_gt"], range_gt);
    plain(r, &["range_ge"], range_ge);
    plain(r, &["range_cmp"], range_cmp);
    plain(r, &["multirange_eq"], mr_eq);
    plain(r, &["multirange_ne"], mr_ne);
    plain(r, &["multirange_lt"], mr_lt);
    plain(r, &["multirange_le"], mr_le);
    plain(r, &["multirange_gt"], mr_gt);
    plain(r, &["multirange_ge"], mr_ge);
    plain(r, &["multirange_cmp"], mr_cmp);
    plain(r, &["range_contains_elem"], contains_elem);
    plain(r, &["elem_contained_by_range"], elem_contained_by);
    plain(r, &["range_contains"], contains);
    plain(r, &["range_contained_by"], contained_by);
    plain(r, &["range_overlaps"], overlaps);
    plain(r, &["range_before"], before);
    plain(r, &["range_after"], after);
    plain(r, &["range_overleft"], overleft);
    plain(r, &["range_overright"], overright);
    plain(r, &["range_adjacent"], adjacent);
    plain(r, &["range_union"], union);
    plain(r, &["range_merge"], merge);
    plain(r, &["range_intersect"], intersect);
    plain(r, &["range_minus"], minus);
    plain(r, &["multirange_contains_elem"], mr_contains_elem);
    plain(r, &["elem_contained_by_multirange"], elem_contained_by_mr);
    plain(r, &["multirange_contains_range"], mr_contains_range);
    plain(r, &["range_contained_by_multirange"], range_contained_by_mr);
    plain(r, &["range_contains_multirange"], range_contains_mr);
    plain(r, &["multirange_contained_by_range"], mr_contained_by_range);
    plain(r, &["multirange_contains_multirange"], mr_contains_mr);
    plain(r, &["multirange_contained_by_multirange"], mr_contained_by_mr);
    plain(r, &["range_overlaps_multirange"], range_overlaps_mr);
    plain(r, &["multirange_overlaps_range"], mr_overlaps_range);
    plain(r, &["multirange_overlaps_multirange"], mr_overlaps_mr);
    plain(r, &["range_before_multirange", "multirange_before_range", "multirange_before_multirange"], any_before);
    plain(r, &["range_after_multirange", "multirange_after_range", "multirange_after_multirange"], any_after);
    plain(r, &["range_overleft_multirange", "multirange_overleft_range", "multirange_overleft_multirange"], any_overleft);
    plain(r, &["range_overright_multirange", "multirange_overright_range", "multirange_overright_multirange"], any_overright);
    plain(r, &["range_adjacent_multirange", "multirange_adjacent_range", "multirange_adjacent_multirange"], any_adjacent);
    plain(r, &["multirange_union"], mr_union);
    plain(r, &["multirange_intersect"], mr_intersect);
    plain(r, &["multirange_minus"], mr_minus);
    plain(r, &["range_merge_from_multirange"], merge_from_mr);
    set(r, &["multirange_unnest"], mr_unnest);
}
