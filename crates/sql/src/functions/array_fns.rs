//! Array functions and operators (arrayfuncs.c, array_userfuncs.c):
//! dimensions and bounds, concatenation, searching, replacing, filling,
//! containment and overlap, trim_array, width_bucket over thresholds, and
//! string_to_table.
//!
//! Elements are compared with their type's btree ordering (`compare`), as
//! the element type's default equality and ordering operators would.

use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::array::{check_dims, Array, MAX_DIMS};
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_i64, arg_str, compare_values, plain, set, FnCtx, Registry, SetIter};

fn arr(d: &Datum) -> Option<&Arc<Array>> {
    match d {
        Datum::Array(a) => Some(a),
        _ => None,
    }
}

fn array(a: Array) -> PgResult<Datum> {
    super::limits::check_array(&a.elements)?;
    Ok(Datum::Array(Arc::new(a)))
}

/// Non-null element equality, as the element type's `=` decides.
fn same(a: &Datum, b: &Datum) -> bool {
    compare_values(a, b) == Ordering::Equal
}

/// The element type of a polymorphic call's array result or argument.
fn element_type_of(c: &FnCtx, array_arg: usize) -> tusk_types::Oid {
    let b = crate::catalog::builtins();
    let from_arg = b.element_of(c.arg_type(array_arg));
    if from_arg != 0 {
        from_arg
    } else {
        b.element_of(c.ret.oid)
    }
}

// ---------------------------------------------------------------- dimensions

/// The (length, lower bound) of dimension `dim` (1-based), if it has one.
fn dimension(a: &[Datum]) -> Option<(i32, i32)> {
    let x = arr(&a[0])?;
    let dim = arg_i64(a, 1);
    if dim < 1 || dim as usize > x.dims.len() {
        return None;
    }
    Some(x.dims[dim as usize - 1])
}

fn array_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(dimension(a).map(|(len, _)| Datum::Int4(len)).unwrap_or(Datum::Null))
}
fn array_upper(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(dimension(a).map(|(len, lower)| Datum::Int4(lower + len - 1)).unwrap_or(Datum::Null))
}
fn array_lower(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(dimension(a).map(|(_, lower)| Datum::Int4(lower)).unwrap_or(Datum::Null))
}
fn array_ndims(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    if x.dims.is_empty() {
        return Ok(Datum::Null);
    }
    Ok(Datum::Int4(x.dims.len() as i32))
}
fn array_dims(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    if x.dims.is_empty() {
        return Ok(Datum::Null);
    }
    Ok(Datum::from_string(x.dims.iter().map(|(len, lo)| format!("[{}:{}]", lo, lo + len - 1)).collect()))
}
fn cardinality(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    Ok(Datum::Int4(x.elements.len() as i32))
}

// ---------------------------------------------------------------- concatenation

fn not_one_dimensional() -> PgError {
    PgError::new(sqlstate::DATA_EXCEPTION, "argument must be empty or one-dimensional array")
}

/// array_append: the element goes after the last one; the lower bound stays.
fn array_append(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut v = match &a[0] {
        Datum::Array(x) => x.as_ref().clone(),
        _ => Array::empty(element_type_of(c, 0)),
    };
    let lower = match v.dims.len() {
        0 => 1,
        1 => v.dims[0].1,
        _ => return Err(not_one_dimensional()),
    };
    let len = v.elements.len() as i64 + 1;
    if lower as i64 + len - 1 > i32::MAX as i64 {
        return Err(super::int_out_of_range("integer"));
    }
    v.elements.push(a[1].clone());
    v.dims = vec![(len as i32, lower)];
    array(v)
}

/// array_prepend: the element goes first; the lower bound stays (PostgreSQL
/// readjusts it after extending the array downwards).
fn array_prepend(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut v = match &a[1] {
        Datum::Array(x) => x.as_ref().clone(),
        _ => Array::empty(element_type_of(c, 1)),
    };
    let lower = match v.dims.len() {
        0 => 1,
        1 => v.dims[0].1,
        _ => return Err(not_one_dimensional()),
    };
    if lower == i32::MIN {
        return Err(super::int_out_of_range("integer"));
    }
    v.elements.insert(0, a[0].clone());
    v.dims = vec![(v.elements.len() as i32, lower)];
    array(v)
}

fn incompatible(detail: String) -> PgError {
    PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "cannot concatenate incompatible arrays").with_detail(detail)
}

/// array_cat: arrays of equal rank join along their first dimension (the
/// result keeps the first's bounds); an array one rank lower joins the
/// other as one more item of its first dimension.
fn array_cat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = match (&a[0], &a[1]) {
        (Datum::Null, Datum::Null) => return Ok(Datum::Null),
        (Datum::Null, other) | (other, Datum::Null) => return Ok(other.clone()),
        (Datum::Array(x), Datum::Array(y)) => (x, y),
        _ => return Ok(Datum::Null),
    };
    if x.dims.is_empty() {
        return Ok(a[1].clone());
    }
    if y.dims.is_empty() {
        return Ok(a[0].clone());
    }
    let (n1, n2) = (x.dims.len(), y.dims.len());
    let dims = if n1 == n2 {
        if x.dims[1..] != y.dims[1..] {
            return Err(incompatible("Arrays with differing element dimensions are not compatible for concatenation.".into()));
        }
        let mut d = x.dims.clone();
        d[0].0 += y.dims[0].0;
        d
    } else if n1 + 1 == n2 {
        if x.dims[..] != y.dims[1..] {
            return Err(incompatible("Arrays with differing dimensions are not compatible for concatenation.".into()));
        }
        let mut d = y.dims.clone();
        d[0].0 += 1;
        d
    } else if n1 == n2 + 1 {
        if x.dims[1..] != y.dims[..] {
            return Err(incompatible("Arrays with differing dimensions are not compatible for concatenation.".into()));
        }
        let mut d = x.dims.clone();
        d[0].0 += 1;
        d
    } else {
        return Err(incompatible(format!("Arrays of {n1} and {n2} dimensions are not compatible for concatenation.")));
    };
    let wide: Vec<(i64, i64)> = dims.iter().map(|&(l, b)| (l as i64, b as i64)).collect();
    check_dims(&wide)?;
    let mut elements = Vec::with_capacity(x.elements.len() + y.elements.len());
    elements.extend(x.elements.iter().cloned());
    elements.extend(y.elements.iter().cloned());
    array(Array { element_type: x.element_type, dims, elements })
}

// ---------------------------------------------------------------- searching

fn no_multidim_search() -> PgError {
    PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "searching for elements in multidimensional arrays is not supported")
}

/// Whether an element matches the searched value, NULL matching NULL
/// (IS NOT DISTINCT FROM).
fn matches(search: &Datum, e: &Datum) -> bool {
    match (search, e) {
        (Datum::Null, Datum::Null) => true,
        (Datum::Null, _) | (_, Datum::Null) => false,
        (v, e) => same(v, e),
    }
}

fn array_position(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    if x.dims.len() > 1 {
        return Err(no_multidim_search());
    }
    if x.dims.is_empty() {
        return Ok(Datum::Null);
    }
    let lower = x.dims[0].1 as i64;
    let start = if a.len() > 2 {
        if a[2].is_null() {
            return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "initial position must not be null"));
        }
        arg_i64(a, 2)
    } else {
        lower
    };
    for (i, e) in x.elements.iter().enumerate() {
        let pos = lower + i as i64;
        if pos >= start && matches(&a[1], e) {
            return Ok(Datum::Int4(pos as i32));
        }
    }
    Ok(Datum::Null)
}

fn array_positions(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    if x.dims.len() > 1 {
        return Err(no_multidim_search());
    }
    let lower = x.dims.first().map(|d| d.1).unwrap_or(1);
    let found: Vec<Datum> = x
        .elements
        .iter()
        .enumerate()
        .filter(|(_, e)| matches(&a[1], e))
        .map(|(i, _)| Datum::Int4(lower + i as i32))
        .collect();
    array(Array::from_vec(oid::INT4, found))
}

/// array_replace_internal: every element not distinct from `search` is
/// replaced by `replace`, or removed; removing keeps the lower bound.
fn replace_elements(x: &Array, search: &Datum, replace: Option<&Datum>) -> PgResult<Array> {
    if x.elements.is_empty() {
        return Ok(x.clone());
    }
    if replace.is_none() && x.dims.len() > 1 {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "removing elements from multidimensional arrays is not supported"));
    }
    let mut out = Vec::with_capacity(x.elements.len());
    for e in &x.elements {
        if matches(search, e) {
            if let Some(r) = replace {
                out.push(r.clone());
            }
        } else {
            out.push(e.clone());
        }
    }
    if out.is_empty() {
        return Ok(Array::empty(x.element_type));
    }
    let mut dims = x.dims.clone();
    dims[0].0 = if replace.is_none() { out.len() as i32 } else { dims[0].0 };
    Ok(Array { element_type: x.element_type, dims, elements: out })
}

fn array_remove(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    array(replace_elements(x, &a[1], None)?)
}

fn array_replace(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    array(replace_elements(x, &a[1], Some(&a[2]))?)
}

// ---------------------------------------------------------------- array_fill

/// The integers of a dimension or lower-bound array given to array_fill.
fn fill_dimensions(a: &Array) -> PgResult<Vec<i64>> {
    if a.dims.len() > 1 {
        return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "wrong number of array subscripts")
            .with_detail("Dimension array must be one dimensional."));
    }
    if a.has_nulls() {
        return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "dimension values cannot be null"));
    }
    Ok(a.elements.iter().map(|d| d.as_i64().unwrap_or(0)).collect())
}

fn fill_null_arguments() -> PgError {
    PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "dimension array or low bound array cannot be null")
}

fn array_fill_common(a: &[Datum], c: &FnCtx, lbs: Option<&Array>) -> PgResult<Datum> {
    let Some(dims) = arr(&a[1]) else { return Err(fill_null_arguments()) };
    let lengths = fill_dimensions(dims)?;
    if lengths.len() > MAX_DIMS {
        return Err(tusk_types::array::too_many_dims(lengths.len()));
    }
    let lowers = match lbs {
        Some(l) => {
            let lowers = fill_dimensions(l)?;
            if lowers.len() != lengths.len() {
                return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "wrong number of array subscripts")
                    .with_detail("Low bound array has different size than dimensions array."));
            }
            lowers
        }
        None => vec![1; lengths.len()],
    };
    let shape: Vec<(i64, i64)> = lengths.iter().copied().zip(lowers.iter().copied()).collect();
    let count = check_dims(&shape)?;
    let elem = c.arg_type(0);
    if count == 0 {
        return Ok(Datum::Array(Arc::new(Array::empty(elem))));
    }
    let elements = vec![a[0].clone(); count];
    let dims = shape.iter().map(|&(l, b)| (l as i32, b as i32)).collect();
    array(Array { element_type: elem, dims, elements })
}

fn array_fill(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    array_fill_common(a, c, None)
}

fn array_fill_with_lower_bounds(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let Some(lbs) = arr(&a[2]) else { return Err(fill_null_arguments()) };
    array_fill_common(a, c, Some(lbs.as_ref()))
}

// ---------------------------------------------------------------- containment

/// array_contain_compare: whether every (match_all) or some element of
/// `left` equals an element of `right`. NULL elements match nothing.
fn contain_compare(left: &Array, right: &Array, match_all: bool) -> bool {
    for e in &left.elements {
        if e.is_null() {
            if match_all {
                return false;
            }
            continue;
        }
        let found = right.elements.iter().any(|r| !r.is_null() && same(e, r));
        if found && !match_all {
            return true;
        }
        if !found && match_all {
            return false;
        }
    }
    match_all
}

fn two_arrays(a: &[Datum]) -> Option<(&Arc<Array>, &Arc<Array>)> {
    Some((arr(&a[0])?, arr(&a[1])?))
}

fn arraycontains(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some((x, y)) = two_arrays(a) else { return Ok(Datum::Null) };
    Ok(Datum::Bool(contain_compare(y, x, true)))
}
fn arraycontained(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some((x, y)) = two_arrays(a) else { return Ok(Datum::Null) };
    Ok(Datum::Bool(contain_compare(x, y, true)))
}
fn arrayoverlap(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some((x, y)) = two_arrays(a) else { return Ok(Datum::Null) };
    Ok(Datum::Bool(contain_compare(x, y, false)))
}

// ---------------------------------------------------------------- ordering

fn array_larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if compare_values(&a[0], &a[1]) == Ordering::Less { a[1].clone() } else { a[0].clone() })
}
fn array_smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if compare_values(&a[0], &a[1]) == Ordering::Greater { a[1].clone() } else { a[0].clone() })
}

// ---------------------------------------------------------------- trim_array, width_bucket

fn trim_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else { return Ok(Datum::Null) };
    let n = arg_i64(a, 1);
    let length = x.dims.first().map(|d| d.0 as i64).unwrap_or(0);
    if n < 0 || n > length {
        return Err(PgError::new(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            format!("number of elements to trim must be between 0 and {length}"),
        ));
    }
    if x.dims.is_empty() {
        return Ok(a[0].clone());
    }
    let upper = x.dims[0].1 as i64 + length - n - 1;
    array(x.slice(&[(None, Some(upper))]))
}

/// width_bucket(operand, thresholds): how many thresholds are at or below
/// the operand (a binary search; thresholds are assumed sorted).
fn width_bucket_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Some(t) = arr(&a[1]) else { return Ok(Datum::Null) };
    if t.dims.len() > 1 {
        return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "thresholds must be one-dimensional array"));
    }
    if t.has_nulls() {
        return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "thresholds array must not contain NULLs"));
    }
    let (mut left, mut right) = (0usize, t.elements.len());
    while left < right {
        let mid = (left + right) / 2;
        if compare_values(&a[0], &t.elements[mid]) == Ordering::Less {
            right = mid;
        } else {
            left = mid + 1;
        }
    }
    Ok(Datum::Int4(left as i32))
}

// ---------------------------------------------------------------- string_to_table

/// string_to_table(text, delimiter [, null string]): the pieces
/// string_to_array would put in an array, as rows.
fn string_to_table(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    if a[0].is_null() {
        return Ok(Box::new(std::iter::empty()));
    }
    let s = arg_str(a, 0);
    let null_str = if a.len() > 2 && !a[2].is_null() { Some(arg_str(a, 2).to_string()) } else { None };
    let pieces: Vec<String> = if s.is_empty() {
        Vec::new()
    } else if a[1].is_null() {
        s.chars().map(|ch| ch.to_string()).collect()
    } else if arg_str(a, 1).is_empty() {
        vec![s.to_string()]
    } else {
        s.split(arg_str(a, 1)).map(str::to_string).collect()
    };
    Ok(Box::new(pieces.into_iter().map(move |p| {
        Ok(if Some(&p) == null_str.as_ref() { Datum::Null } else { Datum::from_string(p) })
    })))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["array_length"], array_length);
    plain(r, &["array_upper"], array_upper);
    plain(r, &["array_lower"], array_lower);
    plain(r, &["array_ndims"], array_ndims);
    plain(r, &["array_dims"], array_dims);
    plain(r, &["array_cardinality"], cardinality);
    plain(r, &["array_append"], array_append);
    plain(r, &["array_prepend"], array_prepend);
    plain(r, &["array_cat"], array_cat);
    plain(r, &["array_position", "array_position_start"], array_position);
    plain(r, &["array_positions"], array_positions);
    plain(r, &["array_remove"], array_remove);
    plain(r, &["array_replace"], array_replace);
    plain(r, &["array_fill"], array_fill);
    plain(r, &["array_fill_with_lower_bounds"], array_fill_with_lower_bounds);
    plain(r, &["arraycontains"], arraycontains);
    plain(r, &["arraycontained"], arraycontained);
    plain(r, &["arrayoverlap"], arrayoverlap);
    plain(r, &["array_larger"], array_larger);
    plain(r, &["array_smaller"], array_smaller);
    plain(r, &["trim_array"], trim_array);
    plain(r, &["width_bucket_array"], width_bucket_array);
    set(r, &["text_to_table", "text_to_table_null"], string_to_table);
}

// ---------------------------------------------------------------- array_agg(anyarray)

/// accumArrayResultArr: one more input array for array_agg(anyarray).
/// Every input must be a non-empty array shaped as the first.
pub(super) fn accumulate_array(vals: &mut Vec<Datum>, v: &Datum) -> PgResult<()> {
    let Datum::Array(a) = v else {
        return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "cannot accumulate null arrays"));
    };
    // Later inputs must be shaped as the first; only the first is
    // checked for being empty.
    if let Some(Datum::Array(first)) = vals.first() {
        if first.dims != a.dims {
            return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "cannot accumulate arrays of different dimensionality"));
        }
    } else {
        if a.dims.is_empty() {
            return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "cannot accumulate empty arrays"));
        }
        if a.dims.len() + 1 > MAX_DIMS {
            return Err(tusk_types::array::too_many_dims(a.dims.len() + 1));
        }
    }
    if vals.len() >= super::limits::MAX_ARRAY_SIZE {
        return Err(super::limits::array_too_large(super::limits::MAX_ARRAY_SIZE));
    }
    vals.push(v.clone());
    Ok(())
}

/// makeMdArrayResult for array_agg(anyarray): the inputs stacked along a
/// new first dimension; the inner dimensions keep the inputs' bounds.
pub(super) fn finish_arrays(vals: &[Datum], element: tusk_types::Oid) -> PgResult<Datum> {
    let Some(Datum::Array(first)) = vals.first() else { return Ok(Datum::Null) };
    let mut dims = vec![(vals.len() as i32, 1)];
    dims.extend(first.dims.iter().copied());
    let mut elements = Vec::with_capacity(vals.len() * first.elements.len());
    for v in vals {
        if let Datum::Array(a) = v {
            elements.extend(a.elements.iter().cloned());
        }
    }
    let element_type = if element != 0 { element } else { first.element_type };
    array(Array { element_type, dims, elements })
}

/// The arrays of ARRAY(SELECT array-value ...), stacked along a new first
/// dimension with array_agg(anyarray)'s checks; no rows give an empty array.
pub fn stack_arrays(vals: &[Datum], element: tusk_types::Oid) -> PgResult<Datum> {
    let mut acc = Vec::with_capacity(vals.len());
    for v in vals {
        accumulate_array(&mut acc, v)?;
    }
    if acc.is_empty() {
        return Ok(Datum::Array(Arc::new(Array::empty(element))));
    }
    finish_arrays(&acc, element)
}

/// int2vectorin / oidvectorin: integers separated by spaces, as a
/// one-dimensional array with lower bound 0 (at most FUNC_MAX_ARGS).
pub(super) fn vector_in(s: &str, ty: tusk_types::Oid, settings: &crate::settings::Settings) -> PgResult<Datum> {
    let (elem, name) = if ty == oid::INT2VECTOR { (oid::INT2, "int2vector") } else { (oid::OID, "oidvector") };
    let mut elements = Vec::new();
    for item in s.split(|c: char| c.is_ascii_whitespace()).filter(|p| !p.is_empty()) {
        if elements.len() >= 100 {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("{name} has too many elements")));
        }
        elements.push(super::io::parse_text(item, tusk_types::SqlType::new(elem), settings, false)?);
    }
    if elements.is_empty() {
        return Ok(Datum::Array(Arc::new(Array::empty(elem))));
    }
    let n = elements.len() as i32;
    Ok(Datum::Array(Arc::new(Array { element_type: elem, dims: vec![(n, 0)], elements })))
}
