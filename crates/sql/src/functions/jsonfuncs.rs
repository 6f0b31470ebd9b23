//! json and jsonb processing: the operators (`->`, `->>`, `#>`, `#>>`,
//! `@>`, `<@`, `?`, `?|`, `?&`, `||`, `-`, `#-`), comparison, the
//! extraction and decomposition functions (json(b)_each, _array_elements,
//! _object_keys, _typeof, _array_length, _strip_nulls), the jsonb editors
//! (jsonb_set, jsonb_set_lax, jsonb_insert, delete), jsonb_pretty and the
//! casts from jsonb to scalars — PostgreSQL's utils/adt/jsonfuncs.c and
//! jsonb_op.c.
//!
//! json functions work on the parsed text and answer with spans of the
//! input verbatim, as PostgreSQL's do; jsonb functions on the parsed value.

use std::sync::Arc;

use tusk_types::json::{escape_json_into, parse, JsonKind, JsonTree};
use tusk_types::jsonb::Jsonb;
use tusk_types::numeric::Numeric;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{plain, set, FnCtx, Registry, SetIter};

pub(super) fn invalid_parameter(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg.into())
}

fn jsonb_arg(d: &Datum) -> PgResult<Arc<Jsonb>> {
    match d {
        Datum::Jsonb(j) => Ok(j.clone()),
        Datum::Json(s) | Datum::Text(s) => Ok(Arc::new(Jsonb::parse(s)?)),
        _ => Err(PgError::internal("jsonb argument expected")),
    }
}

pub(super) fn jsonb_datum(j: Jsonb) -> Datum {
    Datum::Jsonb(Arc::new(j))
}

pub(super) fn json_src(d: &Datum) -> &str {
    d.as_str().unwrap_or("")
}

/// The text[] argument `i`: its elements, NULL as None.
fn text_array(d: &Datum) -> Vec<Option<String>> {
    match d {
        Datum::Array(a) => a.elements.iter().map(|e| e.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// A VARIADIC text[] parameter from argument `from` on: built-ins get the
/// arguments of a non-VARIADIC call one by one, else the array.
fn variadic_texts(a: &[Datum], from: usize) -> Vec<Option<String>> {
    match a.get(from..) {
        Some([Datum::Array(_)]) => text_array(&a[from]),
        Some(rest) => rest.iter().map(|d| d.as_str().map(str::to_string)).collect(),
        None => Vec::new(),
    }
}

/// strtol as the path operators use it: leading spaces and a sign allowed,
/// the whole rest digits.
fn path_index(s: &str) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok().filter(|v| i32::try_from(*v).is_ok())
}

// ---------------------------------------------------------------- jsonb access

/// jsonb text as `->>` gives it: a string unquoted, null as SQL NULL.
fn jsonb_as_text(j: &Jsonb) -> Datum {
    match j {
        Jsonb::Null => Datum::Null,
        Jsonb::String(s) => Datum::text(s),
        other => Datum::from_string(other.to_string()),
    }
}

fn jsonb_object_field(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(j.get(json_src(&a[1])).map(|v| jsonb_datum(v.clone())).unwrap_or(Datum::Null))
}

fn jsonb_object_field_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(j.get(json_src(&a[1])).map(jsonb_as_text).unwrap_or(Datum::Null))
}

fn jsonb_array_element(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(j.index(a[1].as_i64().unwrap_or(0)).map(|v| jsonb_datum(v.clone())).unwrap_or(Datum::Null))
}

fn jsonb_array_element_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(j.index(a[1].as_i64().unwrap_or(0)).map(jsonb_as_text).unwrap_or(Datum::Null))
}

/// get_jsonb_path_all: the value at `path`, None when a step finds nothing.
fn jsonb_path<'a>(j: &'a Jsonb, path: &[Option<String>]) -> Option<&'a Jsonb> {
    let mut cur = j;
    for step in path {
        let step = step.as_deref()?;
        cur = match cur {
            Jsonb::Object(_) => cur.get(step)?,
            Jsonb::Array(_) => cur.index(path_index(step)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn jsonb_extract_path(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    let path = variadic_texts(a, 1);
    Ok(jsonb_path(&j, &path).map(|v| jsonb_datum(v.clone())).unwrap_or(Datum::Null))
}

fn jsonb_extract_path_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    let path = variadic_texts(a, 1);
    Ok(jsonb_path(&j, &path).map(jsonb_as_text).unwrap_or(Datum::Null))
}

fn jsonb_exists(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_arg(&a[0])?.exists(json_src(&a[1]))))
}

fn jsonb_exists_any(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(Datum::Bool(text_array(&a[1]).iter().flatten().any(|k| j.exists(k))))
}

fn jsonb_exists_all(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    Ok(Datum::Bool(text_array(&a[1]).iter().flatten().all(|k| j.exists(k))))
}

fn jsonb_contains(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_arg(&a[0])?.contains(&*jsonb_arg(&a[1])?)))
}

fn jsonb_contained(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_arg(&a[1])?.contains(&*jsonb_arg(&a[0])?)))
}

fn jsonb_compare(a: &[Datum]) -> PgResult<std::cmp::Ordering> {
    Ok(jsonb_arg(&a[0])?.cmp_top(&*jsonb_arg(&a[1])?))
}

fn jsonb_eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_eq()))
}
fn jsonb_ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_ne()))
}
fn jsonb_lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_lt()))
}
fn jsonb_le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_le()))
}
fn jsonb_gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_gt()))
}
fn jsonb_ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(jsonb_compare(a)?.is_ge()))
}
fn jsonb_cmp(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(jsonb_compare(a)? as i32))
}

fn jsonb_hash(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    jsonb_arg(&a[0])?.hash_into(&mut h);
    if let Some(seed) = a.get(1).and_then(Datum::as_i64) {
        h.write_i64(seed);
        return Ok(Datum::Int8(h.finish() as i64));
    }
    Ok(Datum::Int4(h.finish() as i32))
}

fn jsonb_typeof(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::text(jsonb_arg(&a[0])?.type_name()))
}

fn jsonb_array_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    match &*jsonb_arg(&a[0])? {
        Jsonb::Array(items) => Ok(Datum::Int4(items.len() as i32)),
        Jsonb::Object(_) => Err(invalid_parameter("cannot get array length of a non-array")),
        _ => Err(invalid_parameter("cannot get array length of a scalar")),
    }
}

fn jsonb_each_impl(a: &[Datum], c: &FnCtx, as_text: bool) -> PgResult<SetIter> {
    let j = jsonb_arg(&a[0])?;
    let Jsonb::Object(members) = &*j else {
        let name = if as_text { "jsonb_each_text" } else { "jsonb_each" };
        return Err(invalid_parameter(format!("cannot call {name} on a non-object")));
    };
    let _ = c;
    let rows: Vec<PgResult<Datum>> = members
        .iter()
        .map(|(k, v)| Ok(Datum::Record(Arc::new(vec![Datum::text(k), if as_text { jsonb_as_text(v) } else { jsonb_datum(v.clone()) }]))))
        .collect();
    Ok(Box::new(rows.into_iter()))
}

fn jsonb_each(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    jsonb_each_impl(a, c, false)
}

fn jsonb_each_text(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    jsonb_each_impl(a, c, true)
}

fn jsonb_elements_impl(a: &[Datum], as_text: bool) -> PgResult<SetIter> {
    let j = jsonb_arg(&a[0])?;
    match &*j {
        Jsonb::Array(items) => {
            let rows: Vec<PgResult<Datum>> = items.iter().map(|v| Ok(if as_text { jsonb_as_text(v) } else { jsonb_datum(v.clone()) })).collect();
            Ok(Box::new(rows.into_iter()))
        }
        Jsonb::Object(_) => Err(invalid_parameter("cannot extract elements from an object")),
        _ => Err(invalid_parameter("cannot extract elements from a scalar")),
    }
}

fn jsonb_array_elements(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    jsonb_elements_impl(a, false)
}

fn jsonb_array_elements_text(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    jsonb_elements_impl(a, true)
}

fn jsonb_object_keys(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let j = jsonb_arg(&a[0])?;
    match &*j {
        Jsonb::Object(members) => {
            let rows: Vec<PgResult<Datum>> = members.iter().map(|(k, _)| Ok(Datum::text(k))).collect();
            Ok(Box::new(rows.into_iter()))
        }
        Jsonb::Array(_) => Err(invalid_parameter("cannot call jsonb_object_keys on an array")),
        _ => Err(invalid_parameter("cannot call jsonb_object_keys on a scalar")),
    }
}

fn strip_nulls(j: &Jsonb) -> Jsonb {
    match j {
        Jsonb::Object(members) => Jsonb::Object(members.iter().filter(|(_, v)| !matches!(v, Jsonb::Null)).map(|(k, v)| (k.clone(), strip_nulls(v))).collect()),
        Jsonb::Array(items) => Jsonb::Array(items.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

fn jsonb_strip_nulls(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(jsonb_datum(strip_nulls(&*jsonb_arg(&a[0])?)))
}

fn jsonb_pretty(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(jsonb_arg(&a[0])?.pretty()))
}

// ---------------------------------------------------------------- jsonb editing

/// A scalar, object or array as the elements of an array (scalars and
/// objects as one element), for concatenation.
fn as_elements(j: &Jsonb) -> Vec<Jsonb> {
    match j {
        Jsonb::Array(items) => items.clone(),
        other => vec![other.clone()],
    }
}

/// jsonb_concat (`||`): objects merge (the right side wins), anything else
/// concatenates as arrays.
pub fn concat(a: &Jsonb, b: &Jsonb) -> Jsonb {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut members = x.clone();
            members.extend(y.iter().cloned());
            Jsonb::object(members)
        }
        _ => {
            let mut items = as_elements(a);
            items.extend(as_elements(b));
            Jsonb::Array(items)
        }
    }
}

fn jsonb_concat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(jsonb_datum(concat(&*jsonb_arg(&a[0])?, &*jsonb_arg(&a[1])?)))
}

fn cannot_delete_from_scalar() -> PgError {
    invalid_parameter("cannot delete from scalar")
}

fn delete_keys(j: &Jsonb, keys: &[&str]) -> PgResult<Jsonb> {
    Ok(match j {
        Jsonb::Object(members) => Jsonb::Object(members.iter().filter(|(k, _)| !keys.contains(&k.as_str())).cloned().collect()),
        Jsonb::Array(items) => Jsonb::Array(items.iter().filter(|v| !matches!(v, Jsonb::String(s) if keys.contains(&s.as_str()))).cloned().collect()),
        _ => return Err(cannot_delete_from_scalar()),
    })
}

fn jsonb_delete(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(jsonb_datum(delete_keys(&*jsonb_arg(&a[0])?, &[json_src(&a[1])])?))
}

fn jsonb_delete_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let keys = variadic_texts(a, 1);
    let keys: Vec<&str> = keys.iter().flatten().map(String::as_str).collect();
    Ok(jsonb_datum(delete_keys(&*jsonb_arg(&a[0])?, &keys)?))
}

fn jsonb_delete_idx(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let j = jsonb_arg(&a[0])?;
    match &*j {
        Jsonb::Array(items) => {
            let n = items.len() as i64;
            let mut i = a[1].as_i64().unwrap_or(0);
            if i < 0 {
                i += n;
            }
            if i < 0 || i >= n {
                return Ok(Datum::Jsonb(j));
            }
            let mut items = items.clone();
            items.remove(i as usize);
            Ok(jsonb_datum(Jsonb::Array(items)))
        }
        Jsonb::Object(_) => Err(invalid_parameter("cannot delete from object using integer index")),
        _ => Err(cannot_delete_from_scalar()),
    }
}

/// What setPath does at the end of the path (jsonfuncs.c's JB_PATH_* flags).
#[derive(Clone, Copy, PartialEq)]
enum PathOp {
    /// jsonb_set: replace, or add when create_missing; `fill` (subscript
    /// assignment) also creates missing containers along the path and
    /// pads arrays with nulls.
    Set { create: bool, fill: bool },
    InsertBefore,
    InsertAfter,
    Delete,
}

impl PathOp {
    fn creates(self) -> bool {
        matches!(self, PathOp::Set { create: true, .. } | PathOp::InsertBefore | PathOp::InsertAfter)
    }

    fn fills(self) -> bool {
        matches!(self, PathOp::Set { fill: true, .. })
    }
}

fn path_not_integer(level: usize, s: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("path element at position {} is not an integer: \"{}\"", level + 1, s))
}

/// setPath: `j` with the edit `op` applied at `path[level..]`.
fn set_path(j: &Jsonb, path: &[String], level: usize, new: Option<&Jsonb>, op: PathOp) -> PgResult<Jsonb> {
    super::super::stack::check()?;
    let last = level + 1 == path.len();
    match j {
        Jsonb::Object(members) => {
            let key = &path[level];
            let mut out = Vec::with_capacity(members.len() + 1);
            let mut found = false;
            for (k, v) in members {
                if k == key {
                    found = true;
                    if last {
                        if matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) {
                            return Err(invalid_parameter("cannot replace existing key").with_hint("Try using the function jsonb_set to replace key value."));
                        }
                        if op != PathOp::Delete {
                            out.push((k.clone(), new.cloned().unwrap_or(Jsonb::Null)));
                        }
                    } else {
                        out.push((k.clone(), set_path(v, path, level + 1, new, op)?));
                    }
                } else {
                    out.push((k.clone(), v.clone()));
                }
            }
            if !found && last && op.creates() {
                out.push((key.clone(), new.cloned().unwrap_or(Jsonb::Null)));
                return Ok(Jsonb::object(out));
            }
            if !found && !last && op.fills() {
                out.push((key.clone(), push_path(path, level, new)));
                return Ok(Jsonb::object(out));
            }
            Ok(Jsonb::Object(out))
        }
        Jsonb::Array(items) => {
            let step = &path[level];
            let n = items.len() as i64;
            let mut idx = path_index(step).ok_or_else(|| path_not_integer(level, step))?;
            let mut prepend = false;
            if idx < 0 {
                if -idx > n {
                    if op.fills() {
                        return Err(invalid_parameter(format!("path element at position {} is out of range: {}", level + 1, idx)));
                    }
                    prepend = true;
                } else {
                    idx += n;
                }
            }
            if idx > n && !op.fills() {
                idx = n;
            }
            let mut out = Vec::with_capacity(items.len() + 1);
            let mut done = false;
            if (prepend || n == 0) && last && op.creates() {
                if op.fills() && n == 0 && idx > 0 {
                    out.extend(std::iter::repeat(Jsonb::Null).take(idx as usize));
                }
                out.push(new.cloned().unwrap_or(Jsonb::Null));
                done = true;
            }
            for (i, v) in items.iter().enumerate() {
                if !prepend && i as i64 == idx {
                    if last {
                        match op {
                            PathOp::Set { .. } => out.push(new.cloned().unwrap_or(Jsonb::Null)),
                            PathOp::InsertBefore => {
                                out.push(new.cloned().unwrap_or(Jsonb::Null));
                                out.push(v.clone());
                            }
                            PathOp::InsertAfter => {
                                out.push(v.clone());
                                out.push(new.cloned().unwrap_or(Jsonb::Null));
                            }
                            PathOp::Delete => {}
                        }
                        done = true;
                    } else {
                        out.push(set_path(v, path, level + 1, new, op)?);
                        done = true;
                    }
                } else {
                    out.push(v.clone());
                }
            }
            if op.creates() && !done && last {
                if op.fills() && idx > n {
                    out.extend(std::iter::repeat(Jsonb::Null).take((idx - n) as usize));
                }
                out.push(new.cloned().unwrap_or(Jsonb::Null));
                done = true;
            }
            if !done && op.fills() && !last {
                if idx > n {
                    out.extend(std::iter::repeat(Jsonb::Null).take((idx - n) as usize));
                }
                out.push(push_path(path, level, new));
            }
            Ok(Jsonb::Array(out))
        }
        _ if op.fills() => Err(scalar_in_path()),
        scalar => Ok(scalar.clone()),
    }
}

fn scalar_in_path() -> PgError {
    invalid_parameter("cannot replace existing key").with_detail("The path assumes key is a composite object, but it is a scalar value.")
}

/// push_path: the containers a subscript assignment creates below
/// `path[level]`: an array (padded with nulls) for an integer step, an
/// object for any other, the new value innermost.
fn push_path(path: &[String], level: usize, new: Option<&Jsonb>) -> Jsonb {
    let mut value = new.cloned().unwrap_or(Jsonb::Null);
    for step in path[level + 1..].iter().rev() {
        value = match path_index(step) {
            Some(i) => {
                let mut items: Vec<Jsonb> = std::iter::repeat(Jsonb::Null).take(i.max(0) as usize).collect();
                items.push(value);
                Jsonb::Array(items)
            }
            None => Jsonb::Object(vec![(step.clone(), value)]),
        };
    }
    value
}

/// A subscript's path step: an integer's digits, or the text.
fn subscript_step(d: &Datum) -> Option<String> {
    match d {
        Datum::Null => None,
        Datum::Text(s) => Some(s.to_string()),
        other => other.as_i64().map(|v| v.to_string()),
    }
}

/// `jsonb[...]...`: the value at the subscripts' path, NULL if none.
pub fn jsonb_subscript_fetch(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let j = jsonb_arg(&a[0])?;
    let path: Vec<Option<String>> = a[1..].iter().map(subscript_step).collect();
    Ok(jsonb_path(&j, &path).map(|v| jsonb_datum(v.clone())).unwrap_or(Datum::Null))
}

/// `SET doc[...]... = value` (jsonb_subscript_assign): arguments are the
/// old value, the new element, then the subscripts.
pub fn jsonb_subscript_assign(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut path = Vec::with_capacity(a.len() - 2);
    for d in &a[2..] {
        match subscript_step(d) {
            Some(s) => path.push(s),
            None => return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "jsonb subscript in assignment must not be null")),
        }
    }
    let source = if a[0].is_null() {
        // A NULL column starts as an array if the first subscript is an integer.
        Arc::new(if c.arg_type(2) == oid::INT4 { Jsonb::Array(Vec::new()) } else { Jsonb::Object(Vec::new()) })
    } else {
        jsonb_arg(&a[0])?
    };
    let new = if a[1].is_null() { Jsonb::Null } else { (*jsonb_arg(&a[1])?).clone() };
    if source.is_scalar() {
        return Err(scalar_in_path());
    }
    Ok(jsonb_datum(set_path(&source, &path, 0, Some(&new), PathOp::Set { create: true, fill: true })?))
}

/// The path argument of the editors: NULL elements refused.
fn edit_path(d: &Datum) -> PgResult<Vec<String>> {
    text_array(d)
        .into_iter()
        .enumerate()
        .map(|(i, p)| p.ok_or_else(|| PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("path element at position {} is null", i + 1))))
        .collect()
}

fn set_impl(target: Arc<Jsonb>, path: &Datum, new: &Jsonb, create: bool) -> PgResult<Datum> {
    if target.is_scalar() {
        return Err(invalid_parameter("cannot set path in scalar"));
    }
    let empty = matches!(&*target, Jsonb::Array(v) if v.is_empty()) || matches!(&*target, Jsonb::Object(m) if m.is_empty());
    if empty && !create {
        return Ok(Datum::Jsonb(target));
    }
    let path = edit_path(path)?;
    if path.is_empty() {
        return Ok(Datum::Jsonb(target));
    }
    Ok(jsonb_datum(set_path(&target, &path, 0, Some(new), PathOp::Set { create, fill: false })?))
}

fn jsonb_set(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let create = a.get(3).and_then(Datum::as_bool).unwrap_or(true);
    set_impl(jsonb_arg(&a[0])?, &a[1], &*jsonb_arg(&a[2])?, create)
}

fn delete_path_impl(target: Arc<Jsonb>, path: &Datum) -> PgResult<Datum> {
    if target.is_scalar() {
        return Err(invalid_parameter("cannot delete path in scalar"));
    }
    let empty = matches!(&*target, Jsonb::Array(v) if v.is_empty()) || matches!(&*target, Jsonb::Object(m) if m.is_empty());
    if empty {
        return Ok(Datum::Jsonb(target));
    }
    let path = edit_path(path)?;
    if path.is_empty() {
        return Ok(Datum::Jsonb(target));
    }
    Ok(jsonb_datum(set_path(&target, &path, 0, None, PathOp::Delete)?))
}

fn jsonb_delete_path(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    delete_path_impl(jsonb_arg(&a[0])?, &a[1])
}

fn jsonb_set_lax(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let treatment_error = || invalid_parameter("null_value_treatment must be \"delete_key\", \"return_target\", \"use_json_null\", or \"raise_exception\"");
    let treatment = match a.get(4) {
        None => "use_json_null",
        Some(d) => d.as_str().ok_or_else(treatment_error)?,
    };
    if a[0].is_null() || a[1].is_null() || a.get(3).is_some_and(Datum::is_null) {
        return Ok(Datum::Null);
    }
    let create = a.get(3).and_then(Datum::as_bool).unwrap_or(true);
    if !a[2].is_null() {
        return set_impl(jsonb_arg(&a[0])?, &a[1], &*jsonb_arg(&a[2])?, create);
    }
    match treatment {
        "raise_exception" => Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "JSON value must not be null")
            .with_detail("Exception was raised because null_value_treatment is \"raise_exception\".")
            .with_hint("To avoid, either change the null_value_treatment argument or ensure that an SQL NULL is not passed.")),
        "use_json_null" => set_impl(jsonb_arg(&a[0])?, &a[1], &Jsonb::Null, create),
        "delete_key" => delete_path_impl(jsonb_arg(&a[0])?, &a[1]),
        "return_target" => Ok(a[0].clone()),
        _ => Err(treatment_error()),
    }
}

fn jsonb_insert(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let target = jsonb_arg(&a[0])?;
    let after = a.get(3).and_then(Datum::as_bool).unwrap_or(false);
    if target.is_scalar() {
        return Err(invalid_parameter("cannot set path in scalar"));
    }
    let path = edit_path(&a[1])?;
    if path.is_empty() {
        return Ok(Datum::Jsonb(target));
    }
    let op = if after { PathOp::InsertAfter } else { PathOp::InsertBefore };
    Ok(jsonb_datum(set_path(&target, &path, 0, Some(&*jsonb_arg(&a[2])?), op)?))
}

// ---------------------------------------------------------------- casts

/// Whether jsonb/json casts to `t` are handled here.
pub fn casts_from(t: Oid) -> bool {
    matches!(t, oid::JSON | oid::JSONB | oid::BOOL | oid::NUMERIC | oid::INT2 | oid::INT4 | oid::INT8 | oid::FLOAT4 | oid::FLOAT8)
}

/// json ↔ jsonb, and jsonb's casts to scalars (jsonb_bool, jsonb_numeric,
/// jsonb_int4, ...): the value must be a scalar of the matching kind.
pub fn cast_from_json(d: Datum, from: Oid, to: Oid) -> PgResult<Datum> {
    match (from, to) {
        (oid::JSON, oid::JSON) | (oid::JSONB, oid::JSONB) => return Ok(d),
        (oid::JSON, oid::JSONB) => return Ok(Datum::Jsonb(jsonb_arg(&d)?)),
        (oid::JSONB, oid::JSON) => return Ok(Datum::Json(Arc::from(super::json::json_text(&d).as_ref()))),
        _ => {}
    }
    let j = jsonb_arg(&d)?;
    let target = crate::analyzer::types::format_type(crate::catalog::builtins(), to, -1);
    let kind = match &*j {
        Jsonb::Null => "null",
        Jsonb::String(_) => "string",
        Jsonb::Number(_) => "numeric",
        Jsonb::Bool(_) => "boolean",
        Jsonb::Array(_) => "array",
        Jsonb::Object(_) => "object",
    };
    let wrong = || invalid_parameter(format!("cannot cast jsonb {kind} to type {target}"));
    Ok(match (&*j, to) {
        (Jsonb::Bool(b), oid::BOOL) => Datum::Bool(*b),
        (Jsonb::Number(n), oid::NUMERIC) => Datum::numeric(n.clone()),
        (Jsonb::Number(n), oid::INT2) => Datum::Int2(rounded(n)?.to_i16()?),
        (Jsonb::Number(n), oid::INT4) => Datum::Int4(rounded(n)?.to_i32()?),
        (Jsonb::Number(n), oid::INT8) => Datum::Int8(rounded(n)?.to_i64()?),
        (Jsonb::Number(n), oid::FLOAT4) => Datum::Float4(n.to_f32()?),
        (Jsonb::Number(n), oid::FLOAT8) => Datum::Float8(n.to_f64()?),
        _ => return Err(wrong()),
    })
}

/// numeric_int4 rounds half away from zero before the range check.
fn rounded(n: &Numeric) -> PgResult<Numeric> {
    n.round(0)
}

// ---------------------------------------------------------------- json (text)

fn parse_json(d: &Datum) -> PgResult<JsonTree> {
    parse(json_src(d), true)
}

fn json_span(src: &str, t: &JsonTree) -> Datum {
    Datum::Json(Arc::from(t.text(src)))
}

/// A json value as `->>` gives it: a string de-escaped, null as SQL NULL.
fn json_as_text(src: &str, t: &JsonTree) -> Datum {
    match &t.kind {
        JsonKind::Null => Datum::Null,
        JsonKind::String(s) => Datum::text(s),
        _ => Datum::text(t.text(src)),
    }
}

/// The member `key` of a json object (the last of duplicates).
pub(super) fn json_field<'a>(t: &'a JsonTree, key: &str) -> Option<&'a JsonTree> {
    match &t.kind {
        JsonKind::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn json_element(t: &JsonTree, i: i64) -> Option<&JsonTree> {
    match &t.kind {
        JsonKind::Array(items) => {
            let i = if i < 0 { items.len() as i64 + i } else { i };
            if i < 0 {
                None
            } else {
                items.get(i as usize)
            }
        }
        _ => None,
    }
}

fn json_path<'a>(t: &'a JsonTree, path: &[Option<String>]) -> Option<&'a JsonTree> {
    let mut cur = t;
    for step in path {
        let step = step.as_deref()?;
        cur = match &cur.kind {
            JsonKind::Object(_) => json_field(cur, step)?,
            JsonKind::Array(_) => json_element(cur, path_index(step)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn json_object_field(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_field(&t, json_src(&a[1])).map(|v| json_span(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_object_field_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_field(&t, json_src(&a[1])).map(|v| json_as_text(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_array_element(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_element(&t, a[1].as_i64().unwrap_or(0)).map(|v| json_span(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_array_element_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_element(&t, a[1].as_i64().unwrap_or(0)).map(|v| json_as_text(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_extract_path(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_path(&t, &variadic_texts(a, 1)).map(|v| json_span(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_extract_path_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse_json(&a[0])?;
    Ok(json_path(&t, &variadic_texts(a, 1)).map(|v| json_as_text(json_src(&a[0]), v)).unwrap_or(Datum::Null))
}

fn json_typeof(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::text(parse(json_src(&a[0]), false)?.type_name()))
}

fn json_array_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t = parse(json_src(&a[0]), false)?;
    match &t.kind {
        JsonKind::Array(items) => Ok(Datum::Int4(items.len() as i32)),
        JsonKind::Object(_) => Err(invalid_parameter("cannot get array length of a non-array")),
        _ => Err(invalid_parameter("cannot get array length of a scalar")),
    }
}

fn json_each_impl(a: &[Datum], as_text: bool) -> PgResult<SetIter> {
    let src = json_src(&a[0]);
    let t = parse(src, true)?;
    let JsonKind::Object(members) = &t.kind else {
        return Err(invalid_parameter(if matches!(t.kind, JsonKind::Array(_)) { "cannot deconstruct an array as an object" } else { "cannot deconstruct a scalar" }));
    };
    let rows: Vec<PgResult<Datum>> = members
        .iter()
        .map(|(k, v)| Ok(Datum::Record(Arc::new(vec![Datum::text(k), if as_text { json_as_text(src, v) } else { json_span(src, v) }]))))
        .collect();
    Ok(Box::new(rows.into_iter()))
}

fn json_each(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    json_each_impl(a, false)
}

fn json_each_text(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    json_each_impl(a, true)
}

fn json_elements_impl(a: &[Datum], as_text: bool) -> PgResult<SetIter> {
    let src = json_src(&a[0]);
    let t = parse(src, true)?;
    let name = if as_text { "json_array_elements_text" } else { "json_array_elements" };
    match &t.kind {
        JsonKind::Array(items) => {
            let rows: Vec<PgResult<Datum>> = items.iter().map(|v| Ok(if as_text { json_as_text(src, v) } else { json_span(src, v) })).collect();
            Ok(Box::new(rows.into_iter()))
        }
        JsonKind::Object(_) => Err(invalid_parameter(format!("cannot call {name} on a non-array"))),
        _ => Err(invalid_parameter(format!("cannot call {name} on a scalar"))),
    }
}

fn json_array_elements(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    json_elements_impl(a, false)
}

fn json_array_elements_text(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    json_elements_impl(a, true)
}

fn json_object_keys(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let t = parse(json_src(&a[0]), true)?;
    match &t.kind {
        JsonKind::Object(members) => {
            let rows: Vec<PgResult<Datum>> = members.iter().map(|(k, _)| Ok(Datum::text(k))).collect();
            Ok(Box::new(rows.into_iter()))
        }
        JsonKind::Array(_) => Err(invalid_parameter("cannot call json_object_keys on an array")),
        _ => Err(invalid_parameter("cannot call json_object_keys on a scalar")),
    }
}

/// json_strip_nulls: the value re-serialized without whitespace, object
/// members whose value is null left out.
fn strip_json(src: &str, t: &JsonTree, out: &mut String) {
    match &t.kind {
        JsonKind::Object(members) => {
            out.push('{');
            let mut first = true;
            for (k, v) in members {
                if v.kind == JsonKind::Null {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                escape_json_into(out, k);
                out.push(':');
                strip_json(src, v, out);
            }
            out.push('}');
        }
        JsonKind::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                strip_json(src, v, out);
            }
            out.push(']');
        }
        JsonKind::String(s) => escape_json_into(out, s),
        _ => out.push_str(t.text(src)),
    }
}

fn json_strip_nulls(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let src = json_src(&a[0]);
    let t = parse(src, true)?;
    let mut out = String::with_capacity(src.len());
    strip_json(src, &t, &mut out);
    Ok(Datum::Json(Arc::from(out)))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["jsonb_object_field"], jsonb_object_field);
    plain(r, &["jsonb_object_field_text"], jsonb_object_field_text);
    plain(r, &["jsonb_array_element"], jsonb_array_element);
    plain(r, &["jsonb_array_element_text"], jsonb_array_element_text);
    plain(r, &["jsonb_extract_path"], jsonb_extract_path);
    plain(r, &["jsonb_extract_path_text"], jsonb_extract_path_text);
    plain(r, &["jsonb_exists"], jsonb_exists);
    plain(r, &["jsonb_exists_any"], jsonb_exists_any);
    plain(r, &["jsonb_exists_all"], jsonb_exists_all);
    plain(r, &["jsonb_contains"], jsonb_contains);
    plain(r, &["jsonb_contained"], jsonb_contained);
    plain(r, &["jsonb_eq"], jsonb_eq);
    plain(r, &["jsonb_ne"], jsonb_ne);
    plain(r, &["jsonb_lt"], jsonb_lt);
    plain(r, &["jsonb_le"], jsonb_le);
    plain(r, &["jsonb_gt"], jsonb_gt);
    plain(r, &["jsonb_ge"], jsonb_ge);
    plain(r, &["jsonb_cmp"], jsonb_cmp);
    plain(r, &["jsonb_hash", "jsonb_hash_extended"], jsonb_hash);
    plain(r, &["jsonb_typeof"], jsonb_typeof);
    plain(r, &["jsonb_array_length"], jsonb_array_length);
    set(r, &["jsonb_each"], jsonb_each);
    set(r, &["jsonb_each_text"], jsonb_each_text);
    set(r, &["jsonb_array_elements"], jsonb_array_elements);
    set(r, &["jsonb_array_elements_text"], jsonb_array_elements_text);
    set(r, &["jsonb_object_keys"], jsonb_object_keys);
    plain(r, &["jsonb_strip_nulls"], jsonb_strip_nulls);
    plain(r, &["jsonb_pretty"], jsonb_pretty);
    plain(r, &["jsonb_concat"], jsonb_concat);
    plain(r, &["jsonb_delete"], jsonb_delete);
    plain(r, &["jsonb_delete_array"], jsonb_delete_array);
    plain(r, &["jsonb_delete_idx"], jsonb_delete_idx);
    plain(r, &["jsonb_delete_path"], jsonb_delete_path);
    plain(r, &["jsonb_set"], jsonb_set);
    plain(r, &["jsonb_set_lax"], jsonb_set_lax);
    plain(r, &["jsonb_insert"], jsonb_insert);
    plain(r, &["json_object_field"], json_object_field);
    plain(r, &["json_object_field_text"], json_object_field_text);
    plain(r, &["json_array_element"], json_array_element);
    plain(r, &["json_array_element_text"], json_array_element_text);
    plain(r, &["json_extract_path"], json_extract_path);
    plain(r, &["json_extract_path_text"], json_extract_path_text);
    plain(r, &["json_typeof"], json_typeof);
    plain(r, &["json_array_length"], json_array_length);
    set(r, &["json_each"], json_each);
    set(r, &["json_each_text"], json_each_text);
    set(r, &["json_array_elements"], json_array_elements);
    set(r, &["json_array_elements_text"], json_array_elements_text);
    set(r, &["json_object_keys"], json_object_keys);
    plain(r, &["json_strip_nulls"], json_strip_nulls);
    super::json_populate::register(r);
}
