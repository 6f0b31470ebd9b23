//! The json and jsonb builders: to_json(b), json(b)_build_object/array,
//! json(b)_object, array_to_json, row_to_json and the json(b)_agg and
//! json(b)_object_agg aggregates' final values, with their value
//! conversion (utils/adt/json.c's datum_to_json, jsonb.c's datum_to_jsonb).
//!
//! The JSON grammar itself and the jsonb value live in tusk-types
//! (`tusk_types::json`, `tusk_types::jsonb`); a json value is its input
//! text verbatim (`Datum::Json`), a jsonb value the parsed canonical form
//! (`Datum::Jsonb`). Drivers' catalog queries use the builders
//! (SQLAlchemy's column reflection builds its identity and collation
//! details with json_build_object).

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::jsonb::Jsonb;
use tusk_types::numeric::Numeric;
use tusk_types::oid::Oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::io::format_text;
use super::{plain, FnCtx, Registry};
use crate::settings::Settings;

pub use tusk_types::json::escape_json;

// ---------------------------------------------------------------- builders

/// datum_to_json: `d`, of type `ty`, appended to `out` as JSON.
fn datum_to_json(d: &Datum, ty: Oid, settings: &Settings, out: &mut String) {
    let ty = value_type(d, ty);
    match d {
        Datum::Null => out.push_str("null"),
        Datum::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Datum::Json(s) => out.push_str(s),
        Datum::Jsonb(j) => j.write(out),
        Datum::Record(fields) => record_to_json(fields, false, settings, out),
        Datum::Array(a) => array_to_json(a, settings, out),
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Float4(_) | Datum::Float8(_) | Datum::Numeric(_) => {
            // NaN and the infinities are no JSON numbers: they go quoted.
            let text = format_text(d, value_type(d, ty), settings);
            if is_json_number(&text) {
                out.push_str(&text);
            } else {
                out.push_str(&escape_json(&text));
            }
        }
        Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => {
            out.push_str(&escape_json(&xsd_datetime(d, ty, settings)));
        }
        _ => out.push_str(&escape_json(&format_text(d, value_type(d, ty), settings))),
    }
}

/// JsonEncodeDateTime: ISO 8601 as XML Schema writes it ("T" between date
/// and time, a zone offset with minutes), whatever the session's DateStyle.
fn xsd_datetime(d: &Datum, ty: Oid, settings: &Settings) -> String {
    let mut iso = settings.clone();
    iso.datetime.date_style = tusk_types::datetime::DateStyleOutput::Iso;
    let text = format_text(d, ty, &iso);
    if matches!(d, Datum::Date(_)) || !text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return text; // a date, or infinity
    }
    let mut text = text.replacen(' ', "T", 1);
    if matches!(d, Datum::TimestampTz(_)) {
        // The offset follows the time: "+01" becomes "+01:00".
        let time_start = text.find('T').map_or(0, |i| i + 1);
        if let Some(sign) = text[time_start..].rfind(['+', '-']).map(|i| i + time_start) {
            let end = text[sign..].find(' ').map_or(text.len(), |i| i + sign);
            if !text[sign..end].contains(':') {
                text.insert_str(end, ":00");
            }
        }
    }
    text
}

/// array_to_json: nested JSON arrays, no spaces.
fn array_to_json(a: &Array, settings: &Settings, out: &mut String) {
    let elem = a.element_type;
    if a.elements.is_empty() || a.dims.is_empty() {
        out.push_str("[]");
        return;
    }
    let lens: Vec<usize> = a.dims.iter().map(|(len, _)| *len as usize).collect();
    let mut next = 0;
    array_dim_to_json(&a.elements, &lens, elem, settings, &mut next, out);
}

fn array_dim_to_json(elements: &[Datum], lens: &[usize], elem: Oid, settings: &Settings, next: &mut usize, out: &mut String) {
    out.push('[');
    for i in 0..lens[0] {
        if i > 0 {
            out.push(',');
        }
        if lens.len() > 1 {
            array_dim_to_json(elements, &lens[1..], elem, settings, next, out);
        } else {
            datum_to_json(&elements[*next], elem, settings, out);
            *next += 1;
        }
    }
    out.push(']');
}

fn json_datum(s: String) -> PgResult<Datum> {
    Ok(Datum::Json(Arc::from(s)))
}

fn jsonb_datum(j: Jsonb) -> PgResult<Datum> {
    Ok(Datum::Jsonb(Arc::new(j)))
}

/// The text of a json or jsonb datum as json.
pub fn json_text(d: &Datum) -> std::borrow::Cow<'_, str> {
    match d {
        Datum::Json(s) | Datum::Text(s) => std::borrow::Cow::Borrowed(s),
        Datum::Jsonb(j) => std::borrow::Cow::Owned(j.to_string()),
        _ => std::borrow::Cow::Borrowed(""),
    }
}

/// composite_to_json: a row as a JSON object, fields named f1, f2, ...
/// (Tusk's anonymous rows carry no field names).
fn record_to_json(fields: &[Datum], pretty: bool, settings: &Settings, out: &mut String) {
    out.push('{');
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        out.push_str(&escape_json(&format!("f{}", i + 1)));
        out.push(':');
        datum_to_json(f, tusk_types::oid::UNKNOWN, settings, out);
    }
    out.push('}');
}

/// The type of a value nested in an anonymous row or a polymorphic
/// argument, from its representation.
fn value_type(d: &Datum, ty: Oid) -> Oid {
    if ty != 0 && ty != tusk_types::oid::UNKNOWN && ty != tusk_types::oid::RECORD {
        return ty;
    }
    match d {
        Datum::Json(_) => tusk_types::oid::JSON,
        Datum::Jsonb(_) => tusk_types::oid::JSONB,
        other => super::io::guess_type(other),
    }
}

/// IsValidJsonNumber: whether a number's output text is a JSON number.
fn is_json_number(text: &str) -> bool {
    tusk_types::json::parse(text, false).is_ok_and(|t| t.kind == tusk_types::json::JsonKind::Number)
}

/// datum_to_jsonb: `d`, of type `ty`, as a jsonb value.
pub fn datum_to_jsonb(d: &Datum, ty: Oid, settings: &Settings) -> PgResult<Jsonb> {
    let ty = value_type(d, ty);
    Ok(match d {
        Datum::Null => Jsonb::Null,
        Datum::Bool(b) => Jsonb::Bool(*b),
        Datum::Jsonb(j) => (**j).clone(),
        Datum::Json(s) => Jsonb::parse(s)?,
        Datum::Array(a) => array_to_jsonb(a, settings)?,
        Datum::Record(fields) => Jsonb::object(
            fields.iter().enumerate().map(|(i, f)| Ok((format!("f{}", i + 1), datum_to_jsonb(f, 0, settings)?))).collect::<PgResult<_>>()?,
        ),
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Float4(_) | Datum::Float8(_) | Datum::Numeric(_) => {
            let text = format_text(d, ty, settings);
            if is_json_number(&text) {
                Jsonb::Number(Numeric::parse(&text)?)
            } else {
                Jsonb::String(text)
            }
        }
        Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => Jsonb::String(xsd_datetime(d, ty, settings)),
        _ => Jsonb::String(format_text(d, ty, settings)),
    })
}

fn array_to_jsonb(a: &Array, settings: &Settings) -> PgResult<Jsonb> {
    if a.elements.is_empty() || a.dims.is_empty() {
        return Ok(Jsonb::Array(Vec::new()));
    }
    let lens: Vec<usize> = a.dims.iter().map(|(len, _)| *len as usize).collect();
    let mut next = 0;
    array_dim_to_jsonb(&a.elements, &lens, a.element_type, settings, &mut next)
}

fn array_dim_to_jsonb(elements: &[Datum], lens: &[usize], elem: Oid, settings: &Settings, next: &mut usize) -> PgResult<Jsonb> {
    let mut items = Vec::with_capacity(lens[0]);
    for _ in 0..lens[0] {
        if lens.len() > 1 {
            items.push(array_dim_to_jsonb(elements, &lens[1..], elem, settings, next)?);
        } else {
            items.push(datum_to_jsonb(&elements[*next], elem, settings)?);
            *next += 1;
        }
    }
    Ok(Jsonb::Array(items))
}

fn to_json(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut out = String::new();
    datum_to_json(&a[0], c.arg_type(0), &c.env.settings(), &mut out);
    json_datum(out)
}

fn to_jsonb(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    jsonb_datum(datum_to_jsonb(&a[0], c.arg_type(0), &c.env.settings())?)
}

fn array_to_json_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pretty = a.get(1).and_then(Datum::as_bool).unwrap_or(false);
    let settings = c.env.settings();
    let Datum::Array(arr) = &a[0] else { return json_datum("[]".into()) };
    if !pretty || arr.dims.is_empty() || arr.elements.is_empty() {
        let mut out = String::new();
        array_to_json(arr, &settings, &mut out);
        return json_datum(out);
    }
    // Pretty: a line feed between the outermost dimension's elements.
    let lens: Vec<usize> = arr.dims.iter().map(|(len, _)| *len as usize).collect();
    let mut next = 0;
    let mut out = String::from("[");
    for i in 0..lens[0] {
        if i > 0 {
            out.push_str(",\n ");
        }
        if lens.len() > 1 {
            array_dim_to_json(&arr.elements, &lens[1..], arr.element_type, &settings, &mut next, &mut out);
        } else {
            datum_to_json(&arr.elements[next], arr.element_type, &settings, &mut out);
            next += 1;
        }
    }
    out.push(']');
    json_datum(out)
}

fn row_to_json(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pretty = a.get(1).and_then(Datum::as_bool).unwrap_or(false);
    let mut out = String::new();
    match &a[0] {
        Datum::Record(fields) => record_to_json(fields, pretty, &c.env.settings(), &mut out),
        other => datum_to_json(other, c.arg_type(0), &c.env.settings(), &mut out),
    }
    json_datum(out)
}

/// A row as a JSON object keyed by `names` (see analyzer::json_records);
/// and typed by `types`; a fourth argument asks for row_to_json's pretty form.
pub fn named_row_to_json(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let Datum::Record(fields) = &a[0] else { return Ok(a[0].clone()) };
    let names: Vec<&str> = match &a[1] {
        Datum::Array(n) => n.elements.iter().map(|d| d.as_str().unwrap_or("")).collect(),
        _ => Vec::new(),
    };
    let types: Vec<Oid> = match &a[2] {
        Datum::Array(t) => t.elements.iter().map(|d| d.as_i64().unwrap_or(0) as Oid).collect(),
        _ => Vec::new(),
    };
    let pretty = a.get(3).and_then(Datum::as_bool).unwrap_or(false);
    let settings = c.env.settings();
    let mut out = String::from("{");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        let name = names.get(i).map(|n| n.to_string()).unwrap_or_else(|| format!("f{}", i + 1));
        out.push_str(&escape_json(&name));
        out.push(':');
        datum_to_json(f, types.get(i).copied().unwrap_or(tusk_types::oid::UNKNOWN), &settings, &mut out);
    }
    out.push('}');
    json_datum(out)
}

fn check_build_object_args(a: &[Datum], name: &str) -> PgResult<()> {
    if a.len() % 2 != 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "argument list must have even number of elements")
            .with_hint(format!("The arguments of {name}() must consist of alternating keys and values.")));
    }
    for (i, pair) in a.chunks(2).enumerate() {
        if pair[0].is_null() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("argument {} cannot be null", 2 * i + 1))
                .with_hint("Object keys should be text."));
        }
    }
    Ok(())
}

/// A builder's key: a scalar's text (arrays, rows and json refused).
fn object_key(d: &Datum, ty: Oid, settings: &Settings) -> PgResult<String> {
    if matches!(d, Datum::Array(_) | Datum::Record(_) | Datum::Json(_) | Datum::Jsonb(_)) {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "key value must be scalar, not array, composite, or json"));
    }
    Ok(match d {
        Datum::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        _ => format_text(d, value_type(d, ty), settings),
    })
}

/// The arguments of a VARIADIC "any" call with an explicit VARIADIC array:
/// its elements, of the array's element type.
fn variadic_args(a: &[Datum], c: &FnCtx) -> (Vec<Datum>, Vec<Oid>) {
    (a.to_vec(), (0..a.len()).map(|i| c.arg_type(i)).collect())
}

fn json_build_object(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (a, types) = variadic_args(a, c);
    check_build_object_args(&a, "json_build_object")?;
    let settings = c.env.settings();
    let mut out = String::from("{");
    for (i, pair) in a.chunks(2).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&escape_json(&object_key(&pair[0], types[2 * i], &settings)?));
        out.push_str(" : ");
        datum_to_json(&pair[1], types[2 * i + 1], &settings, &mut out);
    }
    out.push('}');
    json_datum(out)
}

fn jsonb_build_object(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (a, types) = variadic_args(a, c);
    if let Some(i) = a.chunks(2).position(|p| p[0].is_null()).filter(|_| a.len() % 2 == 0) {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("argument {}: key must not be null", 2 * i + 1)));
    }
    check_build_object_args(&a, "jsonb_build_object")?;
    let settings = c.env.settings();
    let mut members = Vec::with_capacity(a.len() / 2);
    for (i, pair) in a.chunks(2).enumerate() {
        let key = object_key(&pair[0], types[2 * i], &settings)?;
        members.push((key, datum_to_jsonb(&pair[1], types[2 * i + 1], &settings)?));
    }
    jsonb_datum(Jsonb::object(members))
}

fn json_build_array(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (a, types) = variadic_args(a, c);
    let settings = c.env.settings();
    let mut out = String::from("[");
    for (i, d) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        datum_to_json(d, types[i], &settings, &mut out);
    }
    out.push(']');
    json_datum(out)
}

fn jsonb_build_array(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (a, types) = variadic_args(a, c);
    let settings = c.env.settings();
    let items = a.iter().enumerate().map(|(i, d)| datum_to_jsonb(d, types[i], &settings)).collect::<PgResult<_>>()?;
    jsonb_datum(Jsonb::Array(items))
}

fn json_build_object_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    json_datum("{}".into())
}

fn json_build_array_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    json_datum("[]".into())
}

fn jsonb_build_object_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    jsonb_datum(Jsonb::Object(Vec::new()))
}

fn jsonb_build_array_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    jsonb_datum(Jsonb::Array(Vec::new()))
}

/// json_object / jsonb_object: key/value pairs from one text array (flat
/// pairs or two columns) or from two arrays.
fn object_pairs(a: &[Datum]) -> PgResult<Vec<(String, Option<String>)>> {
    let subscript_error = |m: &str| PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, m.to_string());
    let text_of = |d: &Datum| d.as_str().map(str::to_string);
    let Datum::Array(keys) = &a[0] else { return Ok(Vec::new()) };
    let null_key = || PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "null value not allowed for object key");
    if a.len() == 2 {
        let Datum::Array(vals) = &a[1] else { return Ok(Vec::new()) };
        if keys.ndims() > 1 || vals.ndims() > 1 {
            return Err(subscript_error("wrong number of array subscripts"));
        }
        if keys.elements.len() != vals.elements.len() {
            return Err(subscript_error("mismatched array dimensions"));
        }
        return keys.elements.iter().zip(vals.elements.iter()).map(|(k, v)| Ok((text_of(k).ok_or_else(null_key)?, text_of(v)))).collect();
    }
    match keys.ndims() {
        0 => Ok(Vec::new()),
        1 => {
            if keys.elements.len() % 2 != 0 {
                return Err(subscript_error("array must have even number of elements"));
            }
            keys.elements.chunks(2).map(|p| Ok((text_of(&p[0]).ok_or_else(null_key)?, text_of(&p[1])))).collect()
        }
        2 => {
            if keys.dims[1].0 != 2 {
                return Err(subscript_error("array must have two columns"));
            }
            keys.elements.chunks(2).map(|p| Ok((text_of(&p[0]).ok_or_else(null_key)?, text_of(&p[1])))).collect()
        }
        _ => Err(subscript_error("wrong number of array subscripts")),
    }
}

fn json_object(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let pairs = object_pairs(a)?;
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&escape_json(k));
        out.push_str(" : ");
        match v {
            Some(v) => out.push_str(&escape_json(v)),
            None => out.push_str("null"),
        }
    }
    out.push('}');
    json_datum(out)
}

fn jsonb_object(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let pairs = object_pairs(a)?;
    jsonb_datum(Jsonb::object(pairs.into_iter().map(|(k, v)| (k, v.map(Jsonb::String).unwrap_or(Jsonb::Null))).collect()))
}

// ---------------------------------------------------------------- aggregates

/// json_agg's final value: `[a, b]`, a line feed before rows and arrays.
pub fn json_agg_final(vals: &[Datum], ty: Oid, settings: &Settings) -> PgResult<Datum> {
    let mut out = String::from("[");
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
            if matches!(v, Datum::Array(_) | Datum::Record(_)) || (ty == tusk_types::oid::RECORD && !v.is_null()) {
                out.push_str("\n ");
            }
        }
        datum_to_json(v, ty, settings, &mut out);
    }
    out.push(']');
    json_datum(out)
}

pub fn jsonb_agg_final(vals: &[Datum], ty: Oid, settings: &Settings) -> PgResult<Datum> {
    jsonb_datum(Jsonb::Array(vals.iter().map(|v| datum_to_jsonb(v, ty, settings)).collect::<PgResult<_>>()?))
}

fn field_name_null() -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "field name must not be null")
}

/// json_object_agg's final value: `{ "k" : v, ... }`; `pairs` holds
/// (key, value) rows.
pub fn json_object_agg_final(pairs: &[Datum], key_ty: Oid, val_ty: Oid, settings: &Settings) -> PgResult<Datum> {
    let mut out = String::from("{ ");
    for (i, p) in pairs.iter().enumerate() {
        let Datum::Record(kv) = p else { continue };
        if kv[0].is_null() {
            return Err(field_name_null());
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&escape_json(&format_text(&kv[0], value_type(&kv[0], key_ty), settings)));
        out.push_str(" : ");
        datum_to_json(&kv[1], val_ty, settings, &mut out);
    }
    out.push_str(" }");
    json_datum(out)
}

pub fn jsonb_object_agg_final(pairs: &[Datum], key_ty: Oid, val_ty: Oid, settings: &Settings) -> PgResult<Datum> {
    let mut members = Vec::with_capacity(pairs.len());
    for p in pairs {
        let Datum::Record(kv) = p else { continue };
        if kv[0].is_null() {
            return Err(field_name_null());
        }
        members.push((object_key(&kv[0], key_ty, settings)?, datum_to_jsonb(&kv[1], val_ty, settings)?));
    }
    jsonb_datum(Jsonb::object(members))
}

/// The builders called with an explicit VARIADIC array: its elements
/// (flattened, of the array's element type) are the arguments; a NULL
/// array gives NULL.
fn spread_variadic(a: &[Datum], c: &FnCtx, f: super::PlainFn) -> PgResult<Datum> {
    let Datum::Array(arr) = &a[0] else { return Ok(Datum::Null) };
    let types = vec![tusk_types::SqlType::new(arr.element_type); arr.elements.len()];
    let spread = FnCtx { arg_types: &types, ret: c.ret, env: c.env, func: c.func };
    f(&arr.elements, &spread)
}

fn json_build_object_spread(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    spread_variadic(a, c, json_build_object)
}
fn json_build_array_spread(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    spread_variadic(a, c, json_build_array)
}
fn jsonb_build_object_spread(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    spread_variadic(a, c, jsonb_build_object)
}
fn jsonb_build_array_spread(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    spread_variadic(a, c, jsonb_build_array)
}

/// The implementation of `prosrc` for a call with an explicit VARIADIC
/// array, for the VARIADIC "any" functions that take one.
pub fn spreads_variadic(prosrc: &str) -> Option<super::ScalarFn> {
    let f: super::PlainFn = match prosrc {
        "json_build_object" => json_build_object_spread,
        "json_build_array" => json_build_array_spread,
        "jsonb_build_object" => jsonb_build_object_spread,
        "jsonb_build_array" => jsonb_build_array_spread,
        _ => return None,
    };
    Some(super::ScalarFn::Plain(f))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["to_json"], to_json);
    plain(r, &["to_jsonb"], to_jsonb);
    plain(r, &["array_to_json", "array_to_json_pretty"], array_to_json_fn);
    plain(r, &["row_to_json", "row_to_json_pretty"], row_to_json);
    plain(r, &["json_build_object"], json_build_object);
    plain(r, &["json_build_object_noargs"], json_build_object_noargs);
    plain(r, &["json_build_array"], json_build_array);
    plain(r, &["json_build_array_noargs"], json_build_array_noargs);
    plain(r, &["jsonb_build_object"], jsonb_build_object);
    plain(r, &["jsonb_build_object_noargs"], jsonb_build_object_noargs);
    plain(r, &["jsonb_build_array"], jsonb_build_array);
    plain(r, &["jsonb_build_array_noargs"], jsonb_build_array_noargs);
    plain(r, &["json_object", "json_object_two_arg"], json_object);
    plain(r, &["jsonb_object", "jsonb_object_two_arg"], jsonb_object);
}
