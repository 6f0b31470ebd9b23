//! Rows built from JSON objects: json(b)_populate_record(set), whose row
//! type is the type of their first argument (a composite type, a domain
//! over one, or `record` shaped by a column definition list or by the
//! argument's own value), and json(b)_to_record(set), whose row type is
//! the column definition list. PostgreSQL's jsonfuncs.c populate_* code
//! defines the semantics followed here: a key present in the object sets
//! its column, a missing key keeps the base record's value (or NULL),
//! nested objects populate composite columns, nested arrays populate array
//! columns, and every value of a domain type passes the domain's checks.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::json::{parse, JsonKind, JsonTree};
use tusk_types::jsonb::Jsonb;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::jsonfuncs::{invalid_parameter, json_field, json_src, jsonb_datum};
use super::{plain, set, Env, FnCtx, Registry, SetIter};
use crate::analyzer::types::format_type_be;
use crate::catalog::types;
use crate::settings::Settings;

/// The functions that receive the column definition list of their call
/// (see the analyzer's `record_function_with_columns`).
pub fn takes_column_definitions(src: &str) -> bool {
    matches!(
        src,
        "json_to_record"
            | "json_to_recordset"
            | "jsonb_to_record"
            | "jsonb_to_recordset"
            | "json_populate_record"
            | "json_populate_recordset"
            | "jsonb_populate_record"
            | "jsonb_populate_recordset"
    )
}

/// A JSON value of either type: a span of json text, or a jsonb value.
#[derive(Clone, Copy)]
enum JsonValue<'a> {
    Json(&'a str, &'a JsonTree),
    Jsonb(&'a Jsonb),
}

impl<'a> JsonValue<'a> {
    fn is_null(self) -> bool {
        match self {
            JsonValue::Json(_, t) => t.kind == JsonKind::Null,
            JsonValue::Jsonb(j) => matches!(j, Jsonb::Null),
        }
    }

    /// Elements, if an array.
    fn elements(self) -> Option<Vec<JsonValue<'a>>> {
        match self {
            JsonValue::Json(src, JsonTree { kind: JsonKind::Array(items), .. }) => Some(items.iter().map(|t| JsonValue::Json(src, t)).collect()),
            JsonValue::Jsonb(Jsonb::Array(items)) => Some(items.iter().map(JsonValue::Jsonb).collect()),
            _ => None,
        }
    }

    fn is_object(self) -> bool {
        matches!(self, JsonValue::Json(_, JsonTree { kind: JsonKind::Object(_), .. }) | JsonValue::Jsonb(Jsonb::Object(_)))
    }

    fn field(self, key: &str) -> Option<JsonValue<'a>> {
        match self {
            JsonValue::Json(src, t) => json_field(t, key).map(|v| JsonValue::Json(src, v)),
            JsonValue::Jsonb(j) => j.get(key).map(JsonValue::Jsonb),
        }
    }

    /// The text an input function gets: a string's value, anything else
    /// as written.
    fn input_text(self) -> String {
        match self {
            JsonValue::Json(_, JsonTree { kind: JsonKind::String(s), .. }) => s.clone(),
            JsonValue::Json(src, t) => t.text(src).to_string(),
            JsonValue::Jsonb(Jsonb::String(s)) => s.clone(),
            JsonValue::Jsonb(j) => j.to_string(),
        }
    }

    fn is_string(self) -> bool {
        matches!(self, JsonValue::Json(_, JsonTree { kind: JsonKind::String(_), .. }) | JsonValue::Jsonb(Jsonb::String(_)))
    }
}

/// What populating needs beyond the JSON: the settings input functions
/// read, and the session that checks domain constraints.
struct Populator<'a> {
    settings: Settings,
    env: &'a dyn Env,
}

/// The columns of a row type: names and types.
type RowShape = Arc<Vec<(String, SqlType)>>;

impl Populator<'_> {
    /// populate_record_field: a column of type `ty` from the JSON value
    /// at `key` (None: the key is absent), `default` being the base
    /// record's value of the column.
    fn field(&self, v: Option<JsonValue>, ty: SqlType, key: &str, default: Option<&Datum>) -> PgResult<Datum> {
        if types::domain(ty.oid).is_some() {
            let value = self.field(v, types::base_type(ty), key, default)?;
            return self.env.check_domain(value, ty);
        }
        let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(Datum::Null) };
        match ty.oid {
            oid::JSONB => {
                return Ok(match v {
                    JsonValue::Jsonb(j) => jsonb_datum(j.clone()),
                    JsonValue::Json(src, t) => jsonb_datum(Jsonb::parse(t.text(src))?),
                })
            }
            oid::JSON => {
                return Ok(match v {
                    JsonValue::Jsonb(j) => Datum::Json(Arc::from(j.to_string())),
                    JsonValue::Json(src, t) => Datum::Json(Arc::from(t.text(src))),
                })
            }
            _ => {}
        }
        let elem = crate::catalog::builtins().element_of(ty.oid);
        if elem != 0 && !v.is_string() {
            if v.elements().is_none() {
                return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "expected JSON array").with_hint(format!("See the value of key \"{key}\".")));
            }
            return self.array(v, SqlType { oid: elem, typmod: ty.typmod }, key);
        }
        if let Some(fields) = types::composite_fields(ty.oid) {
            if !v.is_string() {
                let base = match default {
                    Some(Datum::Record(values)) => Some(values.as_slice()),
                    _ => None,
                };
                return self.composite(v, &fields, base);
            }
        }
        super::io::parse_text(&v.input_text(), ty, &self.settings, false)
    }

    /// populate_array: nested JSON arrays as a (multi-dimensional) array.
    fn array(&self, v: JsonValue, elem: SqlType, key: &str) -> PgResult<Datum> {
        // The dimensions follow the first element at each level.
        let mut dims: Vec<usize> = Vec::new();
        let mut cur = Some(v);
        while let Some(items) = cur.and_then(JsonValue::elements) {
            dims.push(items.len());
            cur = items.first().copied();
        }
        let mut elements = Vec::new();
        self.array_level(v, &mut Vec::new(), &dims, elem, key, &mut elements)?;
        let array = if elements.is_empty() {
            Array::empty(elem.oid)
        } else {
            Array { element_type: elem.oid, dims: dims.iter().map(|&n| (n as i32, 1)).collect(), elements }
        };
        Ok(Datum::Array(Arc::new(array)))
    }

    /// The items of one array at `level`, `path` being the indices that
    /// lead to it. PostgreSQL's order of checks: an item that should be an
    /// array and is not fails as it is met; a sub-array whose length
    /// differs from the first one's fails once it ends.
    fn array_level(&self, v: JsonValue, path: &mut Vec<usize>, dims: &[usize], elem: SqlType, key: &str, out: &mut Vec<Datum>) -> PgResult<()> {
        let level = path.len();
        if level == dims.len() {
            out.push(self.field(Some(v), elem, key, None)?);
            return Ok(());
        }
        let items = v.elements().ok_or_else(malformed_array)?;
        for (i, item) in items.iter().enumerate() {
            path.push(i);
            if level + 1 < dims.len() && item.elements().is_none() {
                let indices: String = path.iter().map(|i| format!("[{i}]")).collect();
                return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "expected JSON array")
                    .with_hint(format!("See the array element {indices} of key \"{key}\".")));
            }
            self.array_level(*item, path, dims, elem, key, out)?;
            path.pop();
        }
        if items.len() != dims[level] {
            return Err(malformed_array());
        }
        Ok(())
    }

    /// populate_composite: a row of `fields` from a JSON object, columns
    /// whose key is absent keeping `base`'s values.
    fn composite(&self, v: JsonValue, fields: &[(String, SqlType)], base: Option<&[Datum]>) -> PgResult<Datum> {
        if !v.is_object() {
            return Err(composite_kind_error(v));
        }
        let values = fields
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                let default = base.and_then(|b| b.get(i));
                match (v.field(name), default) {
                    (None, Some(d)) => Ok(d.clone()),
                    (found, _) => self.field(found, *ty, name, default),
                }
            })
            .collect::<PgResult<Vec<_>>>()?;
        Ok(Datum::Record(Arc::new(values)))
    }
}

fn malformed_array() -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "malformed JSON array").with_detail("Multidimensional arrays must have sub-arrays with matching dimensions.")
}

fn composite_kind_error(v: JsonValue) -> PgError {
    let kind = if v.elements().is_some() { "an array" } else { "a scalar" };
    invalid_parameter(format!("cannot call populate_composite on {kind}"))
}

/// The column definition list the analyzer appended to the call as two
/// trailing arrays (names, and types as oid << 32 | typmod), if any.
fn column_definitions(a: &[Datum], nominal_args: usize) -> Option<RowShape> {
    // A defaulted argument may be absent: the list is the two trailing
    // arrays of text and int8 after at least the nominal ones.
    if a.len() < nominal_args + 2 {
        return None;
    }
    let (Datum::Array(names), Datum::Array(types)) = (&a[a.len() - 2], &a[a.len() - 1]) else { return None };
    if names.element_type != oid::TEXT || types.element_type != oid::INT8 {
        return None;
    }
    Some(Arc::new(
        names
            .elements
            .iter()
            .zip(types.elements.iter())
            .map(|(name, ty)| {
                let packed = ty.as_i64().unwrap_or(0);
                (name.as_str().unwrap_or("").to_string(), SqlType { oid: (packed >> 32) as Oid, typmod: packed as u32 as i32 })
            })
            .collect(),
    ))
}

/// The row type a populate call builds, and the domain (over a
/// composite) its result must satisfy.
fn populate_shape(a: &[Datum], c: &FnCtx, name: &str, nominal_args: usize) -> PgResult<(RowShape, Option<SqlType>)> {
    let domain = types::domain(c.ret.oid).is_some().then_some(c.ret);
    let row_type = types::base_type(c.ret);
    if let Some(fields) = types::composite_fields(row_type.oid) {
        return Ok((fields, domain));
    }
    let defs = column_definitions(a, nominal_args);
    let Datum::Record(base) = &a[0] else {
        return match defs {
            Some(defs) => Ok((defs, None)),
            None => Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("could not determine row type for result of {name}"))
                .with_hint("Provide a non-null record argument, or call the function in the FROM clause using a column definition list.")),
        };
    };
    let shape: Vec<(String, SqlType)> = base.iter().enumerate().map(|(i, d)| (format!("f{}", i + 1), SqlType::new(super::io::guess_type(d)))).collect();
    if let Some(defs) = defs {
        let mismatch = |detail: String| PgError::new(sqlstate::DATATYPE_MISMATCH, "function return row and query-specified return row do not match").with_detail(detail);
        if defs.len() != shape.len() {
            let n = shape.len();
            return Err(mismatch(format!("Returned row contains {n} attribute{}, but query expects {}.", if n == 1 { "" } else { "s" }, defs.len())));
        }
        for (i, ((_, got), (_, want))) in shape.iter().zip(defs.iter()).enumerate() {
            if got.oid != want.oid {
                let b = crate::catalog::builtins();
                return Err(mismatch(format!("Returned type {} at ordinal position {}, but query expects {}.", format_type_be(b, got.oid), i + 1, format_type_be(b, want.oid))));
            }
        }
        return Ok((defs, None));
    }
    Ok((Arc::new(shape), None))
}

/// json(b)_populate_record(base, from_json [, use_json_as_text]).
fn populate_record(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let jsonb = c.arg_type(1) == oid::JSONB;
    let name = if jsonb { "jsonb_populate_record" } else { "json_populate_record" };
    let nominal = 2;
    let (fields, domain) = populate_shape(a, c, name, nominal)?;
    if a[1].is_null() {
        return Ok(a[0].clone());
    }
    let p = Populator { settings: c.env.settings().clone(), env: c.env };
    let base = match &a[0] {
        Datum::Record(values) => Some(values.as_slice()),
        _ => None,
    };
    let row = with_json(&a[1], |v| p.composite(v, &fields, base))?;
    match domain {
        Some(d) => c.env.check_domain(row, d),
        None => Ok(row),
    }
}

/// json(b)_populate_recordset(base, from_json [, use_json_as_text]).
fn populate_recordset(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let jsonb = c.arg_type(1) == oid::JSONB;
    let name = if jsonb { "jsonb_populate_recordset" } else { "json_populate_recordset" };
    let nominal = 2;
    let (fields, domain) = populate_shape(a, c, name, nominal)?;
    if a[1].is_null() {
        return Ok(Box::new(std::iter::empty()));
    }
    let p = Populator { settings: c.env.settings().clone(), env: c.env };
    let base = match &a[0] {
        Datum::Record(values) => Some(values.as_slice()),
        _ => None,
    };
    let rows = with_json(&a[1], |v| recordset_rows(v, jsonb, name, |item| {
        let row = p.composite(item, &fields, base)?;
        match domain {
            Some(d) => c.env.check_domain(row, d),
            None => Ok(row),
        }
    }))?;
    Ok(Box::new(rows.into_iter().map(Ok)))
}

/// json(b)_to_record(from_json) AS (column definitions).
fn to_record(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let fields = column_definitions(a, 1).unwrap_or_default();
    let p = Populator { settings: c.env.settings().clone(), env: c.env };
    with_json(&a[0], |v| p.composite(v, &fields, None))
}

/// json(b)_to_recordset(from_json) AS (column definitions).
fn to_recordset(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    if a[0].is_null() {
        return Ok(Box::new(std::iter::empty()));
    }
    let fields = column_definitions(a, 1).unwrap_or_default();
    let jsonb = matches!(a[0], Datum::Jsonb(_));
    let name = if jsonb { "jsonb_to_recordset" } else { "json_to_recordset" };
    let p = Populator { settings: c.env.settings().clone(), env: c.env };
    let rows = with_json(&a[0], |v| recordset_rows(v, jsonb, name, |item| p.composite(item, &fields, None)))?;
    Ok(Box::new(rows.into_iter().map(Ok)))
}

/// `f` over the JSON argument, parsed if it is json text.
fn with_json<R>(d: &Datum, f: impl FnOnce(JsonValue) -> PgResult<R>) -> PgResult<R> {
    match d {
        Datum::Jsonb(j) => f(JsonValue::Jsonb(j)),
        d => {
            let src = json_src(d);
            let t = parse(src, true)?;
            f(JsonValue::Json(src, &t))
        }
    }
}

/// The rows a *_recordset function builds: one per element of the array,
/// each of which must be an object.
fn recordset_rows(v: JsonValue, jsonb: bool, name: &str, mut row: impl FnMut(JsonValue) -> PgResult<Datum>) -> PgResult<Vec<Datum>> {
    let Some(items) = v.elements() else {
        return Err(invalid_parameter(if jsonb {
            format!("cannot call {name} on a non-array")
        } else if v.is_object() {
            format!("cannot call {name} on an object")
        } else {
            format!("cannot call {name} on a scalar")
        }));
    };
    items
        .into_iter()
        .map(|item| {
            if !item.is_object() {
                return Err(invalid_parameter(format!("argument of {name} must be an array of objects")));
            }
            row(item)
        })
        .collect()
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["json_to_record", "jsonb_to_record"], to_record);
    set(r, &["json_to_recordset", "jsonb_to_recordset"], to_recordset);
    plain(r, &["json_populate_record", "jsonb_populate_record"], populate_record);
    set(r, &["json_populate_recordset", "jsonb_populate_recordset"], populate_recordset);
}
