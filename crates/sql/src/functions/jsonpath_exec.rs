//! The SQL/JSON path executor: jsonb_path_exists, _match, _query,
//! _query_array, _query_first (and their _tz forms) and the operators
//! `@?` and `@@`, after PostgreSQL's utils/adt/jsonpath_exec.c.
//!
//! Lax mode unwraps arrays automatically, wraps scalars where an array is
//! wanted and ignores structural errors; strict mode reports them. Errors
//! inside a filter's predicate make it unknown instead of failing, and the
//! `silent` argument suppresses the errors that PostgreSQL lets it.
//!
//! Values borrow from the target and the `vars` document where they can
//! (a `Cow`), so walking a large document copies only what is computed.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::jsonb::Jsonb;
use tusk_types::numeric::Numeric;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::jsonpath::{self, BinOp, Item, JsonPath, Kind, Method};
use super::{plain, set, FnCtx, Registry, SetIter};

/// An SQL/JSON item: a JSON value or a date/time from `.datetime()`.
#[derive(Clone, Debug)]
enum Val<'a> {
    J(Cow<'a, Jsonb>),
    Dt(super::jsonpath_datetime::DateTimeVal),
}

impl<'a> Val<'a> {
    fn json(&self) -> Option<&Jsonb> {
        match self {
            Val::J(j) => Some(j),
            Val::Dt(_) => None,
        }
    }

    fn is_array(&self) -> bool {
        matches!(self.json(), Some(Jsonb::Array(_)))
    }

    fn numeric(&self) -> Option<&Numeric> {
        match self.json() {
            Some(Jsonb::Number(n)) => Some(n),
            _ => None,
        }
    }

    fn string(&self) -> Option<&str> {
        match self.json() {
            Some(Jsonb::String(s)) => Some(s),
            _ => None,
        }
    }

    fn owned(n: Jsonb) -> Val<'a> {
        Val::J(Cow::Owned(n))
    }

    /// The elements of an array value (borrowed when the array is).
    fn elements(&self) -> Vec<Val<'a>> {
        match self {
            Val::J(Cow::Borrowed(Jsonb::Array(items))) => items.iter().map(|e| Val::J(Cow::Borrowed(e))).collect(),
            Val::J(Cow::Owned(Jsonb::Array(items))) => items.iter().map(|e| Val::owned(e.clone())).collect(),
            _ => Vec::new(),
        }
    }

    /// The member values of an object value, in storage order.
    fn members(&self) -> Vec<(String, Val<'a>)> {
        match self {
            Val::J(Cow::Borrowed(Jsonb::Object(m))) => m.iter().map(|(k, v)| (k.clone(), Val::J(Cow::Borrowed(v)))).collect(),
            Val::J(Cow::Owned(Jsonb::Object(m))) => m.iter().map(|(k, v)| (k.clone(), Val::owned(v.clone()))).collect(),
            _ => Vec::new(),
        }
    }

    fn member(&self, key: &str) -> Option<Val<'a>> {
        match self {
            Val::J(Cow::Borrowed(j)) => j.get(key).map(|v| Val::J(Cow::Borrowed(v))),
            Val::J(Cow::Owned(j)) => j.get(key).map(|v| Val::owned(v.clone())),
            _ => None,
        }
    }

    fn is_container(&self) -> bool {
        matches!(self.json(), Some(Jsonb::Array(_) | Jsonb::Object(_)))
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::J(j) => j.type_name(),
            Val::Dt(d) => d.type_name(),
        }
    }

    fn into_jsonb(self) -> Jsonb {
        match self {
            Val::J(j) => j.into_owned(),
            Val::Dt(d) => Jsonb::String(d.to_json_text()),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Res {
    Ok,
    NotFound,
    /// An error that was suppressed (the executor does not throw here).
    Error,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tri {
    False,
    True,
    Unknown,
}

/// Where `.keyvalue()` objects get their "id" from: the document a value
/// came from and that document's number.
#[derive(Clone, Copy)]
struct BaseObject<'a> {
    doc: Option<&'a Jsonb>,
    id: i64,
}

struct Cx<'a> {
    vars: Option<&'a Jsonb>,
    lax: bool,
    ignore_structural: bool,
    throw: bool,
    use_tz: bool,
    root: &'a Jsonb,
    current: Val<'a>,
    innermost_array_size: i64,
    base: BaseObject<'a>,
    last_generated_id: i64,
    settings: &'a crate::settings::Settings,
}

type Found<'a, 'f> = Option<&'f mut Vec<Val<'a>>>;

fn reborrow<'a, 'f, 'g>(f: &'g mut Found<'a, 'f>) -> Found<'a, 'g> {
    match f {
        Some(v) => Some(&mut **v),
        None => None,
    }
}

fn err(code: &'static str, msg: impl Into<String>) -> PgError {
    PgError::new(code, msg.into())
}

const MEMBER_NOT_FOUND: &str = "2203A";
const ARRAY_NOT_FOUND: &str = "22039";
const OBJECT_NOT_FOUND: &str = "2203C";
const INVALID_SUBSCRIPT: &str = "22033";
const SINGLETON_REQUIRED: &str = "22038";
const NUMBER_NOT_FOUND: &str = "2203B";
const NON_NUMERIC_ITEM: &str = "22036";

fn op_name(op: BinOp) -> &'static str {
    op.name()
}

impl<'a> Cx<'a> {
    /// RETURN_ERROR: throws, or reports a suppressed error.
    fn fail(&self, e: PgError) -> PgResult<Res> {
        if self.throw {
            Err(e)
        } else {
            Ok(Res::Error)
        }
    }

    fn exec(&mut self, item: &Item, jb: &Val<'a>, found: Found<'a, '_>) -> PgResult<Res> {
        let unwrap = self.lax;
        self.exec_opt_unwrap(item, jb, found, unwrap)
    }

    /// executeNextItem: runs the rest of the chain, or collects `v`.
    fn next(&mut self, item: &Item, v: Val<'a>, found: Found<'a, '_>) -> PgResult<Res> {
        match item.next.as_deref() {
            Some(n) => self.exec(n, &v, found),
            None => {
                if let Some(f) = found {
                    f.push(v);
                }
                Ok(Res::Ok)
            }
        }
    }

    /// Runs `next` (or collects, when None) on every element of an array.
    fn unwrap_array(&mut self, next: Option<&Item>, jb: &Val<'a>, found: Found<'a, '_>, unwrap_elements: bool) -> PgResult<Res> {
        self.any_item(next, jb, found, 1, 1, 1, false, unwrap_elements)
    }

    #[allow(clippy::too_many_arguments)]
    fn any_item(
        &mut self,
        next: Option<&Item>,
        jb: &Val<'a>,
        mut found: Found<'a, '_>,
        level: u32,
        first: u32,
        last: u32,
        ignore_structural: bool,
        unwrap_next: bool,
    ) -> PgResult<Res> {
        crate::stack::check()?;
        let mut res = Res::NotFound;
        if level > last {
            return Ok(res);
        }
        let children: Vec<Val<'a>> = if jb.is_array() { jb.elements() } else { jb.members().into_iter().map(|(_, v)| v).collect() };
        for v in children {
            if level >= first || (first == u32::MAX && last == u32::MAX && !v.is_container()) {
                if let Some(n) = next {
                    let saved = self.ignore_structural;
                    if ignore_structural {
                        self.ignore_structural = true;
                    }
                    let r = self.exec_opt_unwrap(n, &v, reborrow(&mut found), unwrap_next);
                    self.ignore_structural = saved;
                    res = r?;
                    if res == Res::Error || (res == Res::Ok && found.is_none()) {
                        break;
                    }
                } else if let Some(f) = found.as_deref_mut() {
                    f.push(v.clone());
                } else {
                    return Ok(Res::Ok);
                }
            }
            if level < last && v.is_container() {
                res = self.any_item(next, &v, reborrow(&mut found), level + 1, first, last, ignore_structural, unwrap_next)?;
                if res == Res::Error || (res == Res::Ok && found.is_none()) {
                    break;
                }
            }
        }
        Ok(res)
    }

    fn exec_opt_unwrap(&mut self, item: &Item, jb: &Val<'a>, mut found: Found<'a, '_>, unwrap: bool) -> PgResult<Res> {
        crate::stack::check()?;
        match &item.kind {
            Kind::Null => self.next(item, Val::owned(Jsonb::Null), found),
            Kind::Bool(b) => self.next(item, Val::owned(Jsonb::Bool(*b)), found),
            Kind::Numeric(n) => self.next(item, Val::owned(Jsonb::Number(n.clone())), found),
            Kind::String(s) => self.next(item, Val::owned(Jsonb::String(s.clone())), found),
            Kind::Variable(name) => {
                let v = self.variable(name)?;
                // Variables are numbered as parts of the `vars` document.
                let saved = self.base;
                self.base = BaseObject { doc: self.vars, id: 1 };
                let r = self.next(item, v, found);
                self.base = saved;
                r
            }
            Kind::Binary(BinOp::And | BinOp::Or | BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::StartsWith, ..)
            | Kind::Not(_)
            | Kind::IsUnknown(_)
            | Kind::LikeRegex { .. }
            | Kind::Exists(_) => {
                let st = self.bool_item(item, jb)?;
                if item.next.is_none() && found.is_none() {
                    return Ok(Res::Ok);
                }
                let v = match st {
                    Tri::Unknown => Jsonb::Null,
                    Tri::True => Jsonb::Bool(true),
                    Tri::False => Jsonb::Bool(false),
                };
                self.next(item, Val::owned(v), found)
            }
            Kind::Binary(op, l, r) => self.binary_arith(item, *op, l, r, jb, found),
            Kind::Plus(a) | Kind::Minus(a) => self.unary_arith(item, matches!(item.kind, Kind::Minus(_)), a, jb, found),
            Kind::Filter(arg) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(item), jb, found, false);
                }
                let st = self.nested_bool(arg, jb)?;
                if st != Tri::True {
                    Ok(Res::NotFound)
                } else {
                    self.next(item, jb.clone(), found)
                }
            }
            Kind::Any { first, last } => {
                let mut res = Res::NotFound;
                if *first == 0 {
                    let saved = self.ignore_structural;
                    self.ignore_structural = true;
                    let r = self.next(item, jb.clone(), reborrow(&mut found));
                    self.ignore_structural = saved;
                    res = r?;
                    if res == Res::Ok && found.is_none() {
                        return Ok(res);
                    }
                }
                if jb.is_container() {
                    let unwrap_next = self.lax;
                    res = self.any_item(item.next.as_deref(), jb, found, 1, *first, *last, true, unwrap_next)?;
                }
                Ok(res)
            }
            Kind::Key(key) => {
                if matches!(jb.json(), Some(Jsonb::Object(_))) {
                    match jb.member(key) {
                        Some(v) => self.next(item, v, found),
                        None if !self.ignore_structural => {
                            self.fail(err(MEMBER_NOT_FOUND, format!("JSON object does not contain key \"{key}\"")))
                        }
                        None => Ok(Res::NotFound),
                    }
                } else if unwrap && jb.is_array() {
                    self.unwrap_array(Some(item), jb, found, false)
                } else if !self.ignore_structural {
                    self.fail(err(MEMBER_NOT_FOUND, "jsonpath member accessor can only be applied to an object"))
                } else {
                    Ok(Res::NotFound)
                }
            }
            Kind::Root => {
                let saved = self.base;
                self.base = BaseObject { doc: Some(self.root), id: 0 };
                let root = Val::J(Cow::Borrowed(self.root));
                let r = self.next(item, root, found);
                self.base = saved;
                r
            }
            Kind::Current => {
                let cur = self.current.clone();
                self.next(item, cur, found)
            }
            Kind::AnyArray => {
                if jb.is_array() {
                    let unwrap_next = self.lax;
                    self.unwrap_array(item.next.as_deref(), jb, found, unwrap_next)
                } else if self.lax {
                    self.next(item, jb.clone(), found)
                } else if !self.ignore_structural {
                    self.fail(err(ARRAY_NOT_FOUND, "jsonpath wildcard array accessor can only be applied to an array"))
                } else {
                    Ok(Res::NotFound)
                }
            }
            Kind::IndexArray(subs) => self.index_array(item, subs, jb, found),
            Kind::Last => {
                if item.next.is_none() && found.is_none() {
                    return Ok(Res::Ok);
                }
                let last = self.innermost_array_size - 1;
                self.next(item, Val::owned(Jsonb::Number(Numeric::from_i64(last))), found)
            }
            Kind::AnyKey => {
                if matches!(jb.json(), Some(Jsonb::Object(_))) {
                    let unwrap_next = self.lax;
                    self.any_item(item.next.as_deref(), jb, found, 1, 1, 1, false, unwrap_next)
                } else if unwrap && jb.is_array() {
                    self.unwrap_array(Some(item), jb, found, false)
                } else if !self.ignore_structural {
                    self.fail(err(OBJECT_NOT_FOUND, "jsonpath wildcard member accessor can only be applied to an object"))
                } else {
                    Ok(Res::NotFound)
                }
            }
            Kind::Method(Method::Type) => {
                let t = jb.type_name();
                self.next(item, Val::owned(Jsonb::String(t.to_string())), found)
            }
            Kind::Method(Method::Size) => {
                let size = match jb.json() {
                    Some(Jsonb::Array(a)) => a.len() as i64,
                    _ => {
                        if !self.lax {
                            if !self.ignore_structural {
                                return self.fail(err(ARRAY_NOT_FOUND, "jsonpath item method .size() can only be applied to an array"));
                            }
                            return Ok(Res::NotFound);
                        }
                        1
                    }
                };
                self.next(item, Val::owned(Jsonb::Number(Numeric::from_i64(size))), found)
            }
            Kind::Method(m @ (Method::Abs | Method::Floor | Method::Ceiling)) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(item), jb, found, false);
                }
                let Some(n) = jb.numeric() else {
                    return self.fail(err(NON_NUMERIC_ITEM, format!("jsonpath item method .{}() can only be applied to a numeric value", m.name())));
                };
                let v = match m {
                    Method::Abs => n.abs(),
                    Method::Floor => n.floor()?,
                    _ => n.ceil()?,
                };
                if item.next.is_none() && found.is_none() {
                    return Ok(Res::Ok);
                }
                self.next(item, Val::owned(Jsonb::Number(v)), found)
            }
            Kind::Method(Method::Double) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(item), jb, found, false);
                }
                let v = if let Some(n) = jb.numeric() {
                    match n.to_string().parse::<f64>() {
                        Ok(f) if f.is_finite() => jb.clone(),
                        _ => {
                            return self.fail(err(
                                NON_NUMERIC_ITEM,
                                "numeric argument of jsonpath item method .double() is out of range for type double precision",
                            ))
                        }
                    }
                } else if let Some(s) = jb.string() {
                    match tusk_types::float::parse_float8(s) {
                        Ok(f) if f.is_finite() => Val::owned(Jsonb::Number(Numeric::from_f64(f))),
                        _ => {
                            return self.fail(err(
                                NON_NUMERIC_ITEM,
                                "string argument of jsonpath item method .double() is not a valid representation of a double precision number",
                            ))
                        }
                    }
                } else {
                    return self.fail(err(NON_NUMERIC_ITEM, "jsonpath item method .double() can only be applied to a string or numeric value"));
                };
                self.next(item, v, found)
            }
            Kind::Method(Method::KeyValue) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(item), jb, found, false);
                }
                self.keyvalue(item, jb, found)
            }
            Kind::Datetime(template) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(item), jb, found, false);
                }
                let r = super::jsonpath_datetime::datetime_method(jb.json(), jb_dt(jb), template.as_deref(), self.use_tz, self.settings);
                match r {
                    Ok(v) => self.next(item, Val::Dt(v), found),
                    Err(e) => self.fail(e),
                }
            }
        }
    }

    fn variable(&self, name: &str) -> PgResult<Val<'a>> {
        match self.vars.and_then(|v| v.get(name)) {
            Some(v) => Ok(Val::J(Cow::Borrowed(v))),
            None => Err(err(sqlstate::UNDEFINED_OBJECT, format!("could not find jsonpath variable \"{name}\""))),
        }
    }

    fn index_array(&mut self, item: &Item, subs: &[(Item, Option<Item>)], jb: &Val<'a>, mut found: Found<'a, '_>) -> PgResult<Res> {
        if !(jb.is_array() || self.lax) {
            if !self.ignore_structural {
                return self.fail(err(ARRAY_NOT_FOUND, "jsonpath array accessor can only be applied to an array"));
            }
            return Ok(Res::NotFound);
        }
        let saved_size = self.innermost_array_size;
        let elements = if jb.is_array() { Some(jb.elements()) } else { None };
        let size = elements.as_ref().map_or(1, |e| e.len() as i64);
        self.innermost_array_size = size;
        let mut res = Res::NotFound;
        let result = (|| -> PgResult<Res> {
            for (from, to) in subs {
                let index_from = match self.array_index(from, jb)? {
                    Ok(i) => i,
                    Err(r) => return Ok(r),
                };
                let index_to = match to {
                    Some(to) => match self.array_index(to, jb)? {
                        Ok(i) => i,
                        Err(r) => return Ok(r),
                    },
                    None => index_from,
                };
                if !self.ignore_structural && (index_from < 0 || index_from > index_to || index_to >= size) {
                    return self.fail(err(INVALID_SUBSCRIPT, "jsonpath array subscript is out of bounds"));
                }
                let lo = index_from.max(0);
                let hi = index_to.min(size - 1);
                res = Res::NotFound;
                let mut i = lo;
                while i <= hi {
                    let v = match &elements {
                        None => jb.clone(),
                        Some(e) => e[i as usize].clone(),
                    };
                    if item.next.is_none() && found.is_none() {
                        return Ok(Res::Ok);
                    }
                    res = self.next(item, v, reborrow(&mut found))?;
                    if res == Res::Error || (res == Res::Ok && found.is_none()) {
                        break;
                    }
                    i += 1;
                }
                if res == Res::Error || (res == Res::Ok && found.is_none()) {
                    break;
                }
            }
            Ok(res)
        })();
        self.innermost_array_size = saved_size;
        result
    }

    /// getArrayIndex: Ok(index), or the suppressed error's result.
    fn array_index(&mut self, item: &Item, jb: &Val<'a>) -> PgResult<Result<i64, Res>> {
        let mut found = Vec::new();
        let r = self.exec(item, jb, Some(&mut found))?;
        if r == Res::Error {
            return Ok(Err(r));
        }
        let n = match (found.len(), found.first().and_then(|v| v.numeric())) {
            (1, Some(n)) => n.clone(),
            _ => return self.fail(err(INVALID_SUBSCRIPT, "jsonpath array subscript is not a single numeric value")).map(Err),
        };
        match n.trunc(0).and_then(|t| t.to_i32()) {
            Ok(i) => Ok(Ok(i as i64)),
            Err(_) => self.fail(err(INVALID_SUBSCRIPT, "jsonpath array subscript is out of integer range")).map(Err),
        }
    }

    /// executeItemOptUnwrapResult: results, arrays among them unwrapped in lax mode.
    fn exec_unwrap_result(&mut self, item: &Item, jb: &Val<'a>, unwrap: bool, found: &mut Vec<Val<'a>>) -> PgResult<Res> {
        if unwrap && self.lax {
            let mut seq = Vec::new();
            let r = self.exec(item, jb, Some(&mut seq))?;
            if r == Res::Error {
                return Ok(r);
            }
            for v in seq {
                if v.is_array() {
                    found.extend(v.elements());
                } else {
                    found.push(v);
                }
            }
            return Ok(Res::Ok);
        }
        self.exec(item, jb, Some(found))
    }

    fn exec_unwrap_result_no_throw(&mut self, item: &Item, jb: &Val<'a>, unwrap: bool, found: &mut Vec<Val<'a>>) -> PgResult<Res> {
        let saved = self.throw;
        self.throw = false;
        let r = self.exec_unwrap_result(item, jb, unwrap, found);
        self.throw = saved;
        r
    }

    fn binary_arith(&mut self, item: &Item, op: BinOp, l: &Item, r: &Item, jb: &Val<'a>, found: Found<'a, '_>) -> PgResult<Res> {
        let mut lseq = Vec::new();
        if self.exec_unwrap_result(l, jb, true, &mut lseq)? == Res::Error {
            return Ok(Res::Error);
        }
        let mut rseq = Vec::new();
        if self.exec_unwrap_result(r, jb, true, &mut rseq)? == Res::Error {
            return Ok(Res::Error);
        }
        let lval = match (lseq.len(), lseq.first().and_then(|v| v.numeric())) {
            (1, Some(n)) => n.clone(),
            _ => {
                return self.fail(err(SINGLETON_REQUIRED, format!("left operand of jsonpath operator {} is not a single numeric value", op_name(op))))
            }
        };
        let rval = match (rseq.len(), rseq.first().and_then(|v| v.numeric())) {
            (1, Some(n)) => n.clone(),
            _ => {
                return self.fail(err(SINGLETON_REQUIRED, format!("right operand of jsonpath operator {} is not a single numeric value", op_name(op))))
            }
        };
        let v = match op {
            BinOp::Add => lval.add(&rval),
            BinOp::Sub => lval.sub(&rval),
            BinOp::Mul => lval.mul(&rval),
            BinOp::Div => lval.div(&rval),
            _ => lval.modulo(&rval),
        };
        let v = match v {
            Ok(v) => v,
            Err(e) => return self.fail(e),
        };
        if item.next.is_none() && found.is_none() {
            return Ok(Res::Ok);
        }
        self.next(item, Val::owned(Jsonb::Number(v)), found)
    }

    fn unary_arith(&mut self, item: &Item, minus: bool, arg: &Item, jb: &Val<'a>, mut found: Found<'a, '_>) -> PgResult<Res> {
        let mut seq = Vec::new();
        if self.exec_unwrap_result(arg, jb, true, &mut seq)? == Res::Error {
            return Ok(Res::Error);
        }
        let mut res = Res::NotFound;
        let has_next = item.next.is_some();
        for v in seq {
            let n = match v.numeric() {
                Some(n) => {
                    if found.is_none() && !has_next {
                        return Ok(Res::Ok);
                    }
                    n.clone()
                }
                None => {
                    if found.is_none() && !has_next {
                        continue;
                    }
                    let name = if minus { "-" } else { "+" };
                    return self.fail(err(NUMBER_NOT_FOUND, format!("operand of unary jsonpath operator {name} is not a numeric value")));
                }
            };
            let n = if minus { n.neg() } else { n };
            let r = self.next(item, Val::owned(Jsonb::Number(n)), reborrow(&mut found))?;
            if r == Res::Error {
                return Ok(r);
            }
            if r == Res::Ok {
                if found.is_none() {
                    return Ok(Res::Ok);
                }
                res = Res::Ok;
            }
        }
        Ok(res)
    }

    fn keyvalue(&mut self, item: &Item, jb: &Val<'a>, mut found: Found<'a, '_>) -> PgResult<Res> {
        let Some(Jsonb::Object(members)) = jb.json() else {
            return self.fail(err(OBJECT_NOT_FOUND, "jsonpath item method .keyvalue() can only be applied to an object"));
        };
        if members.is_empty() {
            return Ok(Res::NotFound);
        }
        // The object's id: its base document's number and its byte offset
        // in PostgreSQL's binary form of that document.
        let offset = match (&jb, self.base.doc) {
            (Val::J(Cow::Borrowed(j)), Some(doc)) => super::jsonpath_datetime::container_offset(doc, j).unwrap_or(0),
            _ => 0,
        };
        let id = offset + self.base.id * 10_000_000_000;
        let mut res = Res::NotFound;
        for (k, v) in jb.members() {
            let obj = Jsonb::object(vec![
                ("key".to_string(), Jsonb::String(k)),
                ("value".to_string(), v.into_jsonb()),
                ("id".to_string(), Jsonb::Number(Numeric::from_i64(id))),
            ]);
            let saved = self.base;
            self.base = BaseObject { doc: None, id: self.last_generated_id };
            self.last_generated_id += 1;
            let r = self.next(item, Val::owned(obj), reborrow(&mut found));
            self.base = saved;
            let r = r?;
            res = r;
            if r == Res::Error {
                return Ok(r);
            }
            if r == Res::Ok && found.is_none() {
                break;
            }
        }
        Ok(res)
    }

    fn nested_bool(&mut self, pred: &Item, jb: &Val<'a>) -> PgResult<Tri> {
        let saved = std::mem::replace(&mut self.current, jb.clone());
        let r = self.bool_item(pred, jb);
        self.current = saved;
        r
    }

    fn bool_item(&mut self, item: &Item, jb: &Val<'a>) -> PgResult<Tri> {
        crate::stack::check()?;
        match &item.kind {
            Kind::Binary(BinOp::And, l, r) => {
                let res = self.bool_item(l, jb)?;
                if res == Tri::False {
                    return Ok(Tri::False);
                }
                let res2 = self.bool_item(r, jb)?;
                Ok(if res2 == Tri::True { res } else { res2 })
            }
            Kind::Binary(BinOp::Or, l, r) => {
                let res = self.bool_item(l, jb)?;
                if res == Tri::True {
                    return Ok(Tri::True);
                }
                let res2 = self.bool_item(r, jb)?;
                Ok(if res2 == Tri::False { res } else { res2 })
            }
            Kind::Not(a) => Ok(match self.bool_item(a, jb)? {
                Tri::Unknown => Tri::Unknown,
                Tri::True => Tri::False,
                Tri::False => Tri::True,
            }),
            Kind::IsUnknown(a) => Ok(if self.bool_item(a, jb)? == Tri::Unknown { Tri::True } else { Tri::False }),
            Kind::Binary(op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge), l, r) => {
                let op = *op;
                let use_tz = self.use_tz;
                let settings = self.settings;
                self.predicate(l, Some(r), jb, true, &mut |a, b| compare_items(op, a, b.unwrap(), use_tz, settings))
            }
            Kind::Binary(BinOp::StartsWith, l, r) => self.predicate(l, Some(r), jb, false, &mut |a, b| {
                match (a.string(), b.and_then(|b| b.string())) {
                    (Some(w), Some(i)) => Ok(if w.as_bytes().starts_with(i.as_bytes()) { Tri::True } else { Tri::False }),
                    _ => Ok(Tri::Unknown),
                }
            }),
            Kind::LikeRegex { expr, pattern, flags } => {
                let re = jsonpath::compile_like_regex(pattern, *flags)?;
                self.predicate(expr, None, jb, false, &mut |a, _| match a.string() {
                    Some(s) => Ok(if re.is_match(s)? { Tri::True } else { Tri::False }),
                    None => Ok(Tri::Unknown),
                })
            }
            Kind::Exists(a) => {
                let mut vals = Vec::new();
                if !self.lax {
                    let r = self.exec_unwrap_result_no_throw(a, jb, false, &mut vals)?;
                    if r == Res::Error {
                        return Ok(Tri::Unknown);
                    }
                    Ok(if vals.is_empty() { Tri::False } else { Tri::True })
                } else {
                    let saved = self.throw;
                    self.throw = false;
                    let r = self.exec(a, jb, None);
                    self.throw = saved;
                    Ok(match r? {
                        Res::Error => Tri::Unknown,
                        Res::Ok => Tri::True,
                        Res::NotFound => Tri::False,
                    })
                }
            }
            _ => Err(PgError::internal("invalid boolean jsonpath item")),
        }
    }

    #[allow(clippy::type_complexity)]
    fn predicate(
        &mut self,
        l: &Item,
        r: Option<&Item>,
        jb: &Val<'a>,
        unwrap_right: bool,
        exec: &mut dyn FnMut(&Val<'a>, Option<&Val<'a>>) -> PgResult<Tri>,
    ) -> PgResult<Tri> {
        let mut lseq = Vec::new();
        if self.exec_unwrap_result_no_throw(l, jb, true, &mut lseq)? == Res::Error {
            return Ok(Tri::Unknown);
        }
        let mut rseq = Vec::new();
        if let Some(r) = r {
            if self.exec_unwrap_result_no_throw(r, jb, unwrap_right, &mut rseq)? == Res::Error {
                return Ok(Tri::Unknown);
            }
        }
        let strict = !self.lax;
        let (mut error, mut found) = (false, false);
        for lv in &lseq {
            let rights: Vec<Option<&Val<'a>>> = if r.is_some() { rseq.iter().map(Some).collect() } else { vec![None] };
            for rv in rights {
                match exec(lv, rv)? {
                    Tri::Unknown => {
                        if strict {
                            return Ok(Tri::Unknown);
                        }
                        error = true;
                    }
                    Tri::True => {
                        if !strict {
                            return Ok(Tri::True);
                        }
                        found = true;
                    }
                    Tri::False => {}
                }
            }
        }
        Ok(if found {
            Tri::True
        } else if error {
            Tri::Unknown
        } else {
            Tri::False
        })
    }
}

fn jb_dt<'v>(v: &'v Val<'_>) -> Option<&'v super::jsonpath_datetime::DateTimeVal> {
    match v {
        Val::Dt(d) => Some(d),
        _ => None,
    }
}

/// compareItems: SQL/JSON comparison of two items.
fn compare_items(op: BinOp, a: &Val, b: &Val, use_tz: bool, settings: &crate::settings::Settings) -> PgResult<Tri> {
    let cmp = match (a, b) {
        (Val::Dt(x), Val::Dt(y)) => match super::jsonpath_datetime::compare(x, y, use_tz, settings)? {
            Some(c) => c,
            None => return Ok(Tri::Unknown),
        },
        (Val::J(x), Val::J(y)) => match (&**x, &**y) {
            (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
            (Jsonb::Null, _) | (_, Jsonb::Null) => return Ok(if op == BinOp::Ne { Tri::True } else { Tri::False }),
            (Jsonb::Bool(p), Jsonb::Bool(q)) => p.cmp(q),
            (Jsonb::Number(p), Jsonb::Number(q)) => p.cmp(q),
            (Jsonb::String(p), Jsonb::String(q)) => p.as_bytes().cmp(q.as_bytes()),
            _ => return Ok(Tri::Unknown),
        },
        (Val::J(x), Val::Dt(_)) | (Val::Dt(_), Val::J(x)) => {
            return Ok(if matches!(**x, Jsonb::Null) {
                if op == BinOp::Ne {
                    Tri::True
                } else {
                    Tri::False
                }
            } else {
                Tri::Unknown
            })
        }
    };
    let t = match op {
        BinOp::Eq => cmp == Ordering::Equal,
        BinOp::Ne => cmp != Ordering::Equal,
        BinOp::Lt => cmp == Ordering::Less,
        BinOp::Gt => cmp == Ordering::Greater,
        BinOp::Le => cmp != Ordering::Greater,
        _ => cmp != Ordering::Less,
    };
    Ok(if t { Tri::True } else { Tri::False })
}

// ---------------------------------------------------------------- SQL functions

fn path_arg(d: &Datum) -> PgResult<JsonPath> {
    jsonpath::parse_input(d.as_str().unwrap_or(""))
}

fn jsonb_arg(d: &Datum) -> PgResult<Arc<Jsonb>> {
    match d {
        Datum::Jsonb(j) => Ok(j.clone()),
        Datum::Json(s) | Datum::Text(s) => Ok(Arc::new(Jsonb::parse(s)?)),
        _ => Err(PgError::internal("jsonb argument expected")),
    }
}

/// What one call runs on: the target, the path, `vars` and `silent`.
struct Call {
    target: Arc<Jsonb>,
    path: JsonPath,
    vars: Option<Arc<Jsonb>>,
    silent: bool,
}

/// The arguments of a jsonb_path_* function: `vars` defaults to `{}`
/// and `silent` to false.
fn call_args(a: &[Datum]) -> PgResult<Call> {
    let target = jsonb_arg(&a[0])?;
    let path = path_arg(&a[1])?;
    let vars = match a.get(2) {
        Some(v) => jsonb_arg(v)?,
        None => Arc::new(Jsonb::Object(Vec::new())),
    };
    let silent = a.get(3).and_then(Datum::as_bool).unwrap_or(false);
    Ok(Call { target, path, vars: Some(vars), silent })
}

/// The operators' arguments: no variables, errors suppressed.
fn operator_args(a: &[Datum]) -> PgResult<Call> {
    Ok(Call { target: jsonb_arg(&a[0])?, path: path_arg(&a[1])?, vars: None, silent: true })
}

/// executeJsonPath: the result status and, when asked, the items found.
fn execute(c: &Call, want: bool, use_tz: bool, settings: &crate::settings::Settings) -> PgResult<(Res, Vec<Jsonb>)> {
    if let Some(v) = &c.vars {
        if !matches!(**v, Jsonb::Object(_)) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "\"vars\" argument is not an object")
                .with_detail("Jsonpath parameters should be encoded as key-value pairs of \"vars\" object."));
        }
    }
    let mut cx = Cx {
        vars: c.vars.as_deref(),
        lax: c.path.lax,
        ignore_structural: c.path.lax,
        throw: !c.silent,
        use_tz,
        root: &c.target,
        current: Val::J(Cow::Borrowed(&c.target)),
        innermost_array_size: -1,
        base: BaseObject { doc: None, id: 0 },
        last_generated_id: if c.vars.is_some() { 2 } else { 1 },
        settings,
    };
    let root = Val::J(Cow::Borrowed(&*c.target));
    if !c.path.lax && !want {
        let mut vals = Vec::new();
        let r = cx.exec(&c.path.expr, &root, Some(&mut vals))?;
        if r == Res::Error {
            return Ok((r, Vec::new()));
        }
        return Ok((if vals.is_empty() { Res::NotFound } else { Res::Ok }, Vec::new()));
    }
    if want {
        let mut vals = Vec::new();
        let r = cx.exec(&c.path.expr, &root, Some(&mut vals))?;
        Ok((r, vals.into_iter().map(Val::into_jsonb).collect()))
    } else {
        let r = cx.exec(&c.path.expr, &root, None)?;
        Ok((r, Vec::new()))
    }
}

fn path_exists(c: Call, cx: &FnCtx, tz: bool) -> PgResult<Datum> {
    let settings = cx.env.settings();
    let (r, _) = execute(&c, false, tz, &settings)?;
    Ok(match r {
        Res::Error => Datum::Null,
        r => Datum::Bool(r == Res::Ok),
    })
}

fn path_match(c: Call, cx: &FnCtx, tz: bool) -> PgResult<Datum> {
    let settings = cx.env.settings();
    let (_, found) = execute(&c, true, tz, &settings)?;
    if found.len() == 1 {
        match &found[0] {
            Jsonb::Bool(b) => return Ok(Datum::Bool(*b)),
            Jsonb::Null => return Ok(Datum::Null),
            _ => {}
        }
    }
    if !c.silent {
        return Err(err(SINGLETON_REQUIRED, "single boolean result is expected"));
    }
    Ok(Datum::Null)
}

fn query_all(a: &[Datum], cx: &FnCtx, tz: bool) -> PgResult<Vec<Jsonb>> {
    let c = call_args(a)?;
    let settings = cx.env.settings();
    Ok(execute(&c, true, tz, &settings)?.1)
}

fn jsonb_path_exists(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_exists(call_args(a)?, cx, false)
}
fn jsonb_path_exists_tz(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_exists(call_args(a)?, cx, true)
}
fn jsonb_path_exists_opr(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_exists(operator_args(a)?, cx, false)
}
fn jsonb_path_match(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_match(call_args(a)?, cx, false)
}
fn jsonb_path_match_tz(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_match(call_args(a)?, cx, true)
}
fn jsonb_path_match_opr(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    path_match(operator_args(a)?, cx, false)
}

fn query_set(a: &[Datum], cx: &FnCtx, tz: bool) -> PgResult<SetIter> {
    let rows = query_all(a, cx, tz)?;
    Ok(Box::new(rows.into_iter().map(|j| Ok(Datum::Jsonb(Arc::new(j))))))
}
fn jsonb_path_query(a: &[Datum], cx: &FnCtx) -> PgResult<SetIter> {
    query_set(a, cx, false)
}
fn jsonb_path_query_tz(a: &[Datum], cx: &FnCtx) -> PgResult<SetIter> {
    query_set(a, cx, true)
}
fn jsonb_path_query_array(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Jsonb(Arc::new(Jsonb::Array(query_all(a, cx, false)?))))
}
fn jsonb_path_query_array_tz(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Jsonb(Arc::new(Jsonb::Array(query_all(a, cx, true)?))))
}
fn jsonb_path_query_first(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    Ok(query_all(a, cx, false)?.into_iter().next().map_or(Datum::Null, |j| Datum::Jsonb(Arc::new(j))))
}
fn jsonb_path_query_first_tz(a: &[Datum], cx: &FnCtx) -> PgResult<Datum> {
    Ok(query_all(a, cx, true)?.into_iter().next().map_or(Datum::Null, |j| Datum::Jsonb(Arc::new(j))))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["jsonb_path_exists"], jsonb_path_exists);
    plain(r, &["jsonb_path_exists_opr"], jsonb_path_exists_opr);
    plain(r, &["jsonb_path_exists_tz"], jsonb_path_exists_tz);
    plain(r, &["jsonb_path_match"], jsonb_path_match);
    plain(r, &["jsonb_path_match_opr"], jsonb_path_match_opr);
    plain(r, &["jsonb_path_match_tz"], jsonb_path_match_tz);
    set(r, &["jsonb_path_query"], jsonb_path_query);
    set(r, &["jsonb_path_query_tz"], jsonb_path_query_tz);
    plain(r, &["jsonb_path_query_array"], jsonb_path_query_array);
    plain(r, &["jsonb_path_query_array_tz"], jsonb_path_query_array_tz);
    plain(r, &["jsonb_path_query_first"], jsonb_path_query_first);
    plain(r, &["jsonb_path_query_first_tz"], jsonb_path_query_first_tz);
}
