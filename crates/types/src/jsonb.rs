//! jsonb: a JSON value in PostgreSQL's canonical form.
//!
//! What jsonb_in keeps of its input: object keys unique (of duplicates the
//! last wins) and sorted as PostgreSQL stores them (shorter keys first, then
//! bytewise), numbers as numeric, strings de-escaped. Output (jsonb_out,
//! jsonb_pretty), ordering (compareJsonbContainers), containment
//! (JsonbDeepContains) and existence follow utils/adt/jsonb*.c.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::error::PgResult;
use crate::json::{escape_json_into, parse, JsonKind, JsonTree};
use crate::numeric::Numeric;

#[derive(Clone, Debug)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Numeric),
    String(String),
    Array(Vec<Jsonb>),
    /// Members sorted by `key_order`, keys unique.
    Object(Vec<(String, Jsonb)>),
}

/// How jsonb orders object keys in storage: shorter first, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Jsonb {
    /// jsonb_in.
    pub fn parse(s: &str) -> PgResult<Jsonb> {
        let tree = parse(s, true)?;
        Jsonb::from_tree(tree, s)
    }

    /// The jsonb value of a parsed (and resolved) JSON text.
    pub fn from_tree(tree: JsonTree, src: &str) -> PgResult<Jsonb> {
        Ok(match tree.kind {
            JsonKind::Null => Jsonb::Null,
            JsonKind::Bool(b) => Jsonb::Bool(b),
            JsonKind::Number => Jsonb::Number(Numeric::parse(&src[tree.start..tree.end])?),
            JsonKind::String(s) => Jsonb::String(s),
            JsonKind::Array(items) => Jsonb::Array(items.into_iter().map(|t| Jsonb::from_tree(t, src)).collect::<PgResult<_>>()?),
            JsonKind::Object(members) => {
                Jsonb::object(members.into_iter().map(|(k, t)| Ok((k, Jsonb::from_tree(t, src)?))).collect::<PgResult<_>>()?)
            }
        })
    }

    /// An object of `members` in any order; of equal keys the last wins.
    pub fn object(mut members: Vec<(String, Jsonb)>) -> Jsonb {
        // A stable sort keeps duplicates in input order: keep the last of each run.
        members.sort_by(|(a, _), (b, _)| key_order(a, b));
        let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(members.len());
        for m in members {
            match out.last_mut() {
                Some(last) if last.0 == m.0 => *last = m,
                _ => out.push(m),
            }
        }
        Jsonb::Object(out)
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// jsonb_typeof's name of the value's type.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(m) => m.binary_search_by(|(k, _)| key_order(k, key)).ok().map(|i| &m[i].1),
            _ => None,
        }
    }

    /// Element `i` of an array; negative counts from the end.
    pub fn index(&self, i: i64) -> Option<&Jsonb> {
        match self {
            Jsonb::Array(items) => {
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

    /// jsonb_out's text.
    pub fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => {
                use fmt::Write;
                let _ = write!(out, "{n}");
            }
            Jsonb::String(s) => escape_json_into(out, s),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Jsonb::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    escape_json_into(out, k);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// jsonb_pretty's text: four spaces per level, one member per line.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, level: usize) {
        let indent = |out: &mut String, level: usize| {
            for _ in 0..level {
                out.push_str("    ");
            }
        };
        match self {
            Jsonb::Array(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    indent(out, level + 1);
                    v.write_pretty(out, level + 1);
                }
                if !items.is_empty() {
                    out.push('\n');
                }
                indent(out, level);
                out.push(']');
            }
            Jsonb::Object(members) => {
                out.push_str("{\n");
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    indent(out, level + 1);
                    escape_json_into(out, k);
                    out.push_str(": ");
                    v.write_pretty(out, level + 1);
                }
                if !members.is_empty() {
                    out.push('\n');
                }
                indent(out, level);
                out.push('}');
            }
            scalar => scalar.write(out),
        }
    }

    fn type_rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }

    /// compareJsonbContainers: the btree order of two jsonb values. A
    /// top-level scalar is a one-element "raw scalar" array there, so it
    /// sorts among arrays (before a one-element array, after an empty one).
    pub fn cmp_top(&self, other: &Jsonb) -> Ordering {
        match (self.is_scalar(), other.is_scalar()) {
            (true, true) => self.cmp_inner(other),
            (true, false) | (false, true) => {
                let Jsonb::Array(items) = (if self.is_scalar() { other } else { self }) else {
                    // A scalar against an object: arrays (raw scalars) sort first.
                    return if self.is_scalar() { Ordering::Less } else { Ordering::Greater };
                };
                // Lengths decide first; at equal length the raw scalar is less.
                let by_len = 1.cmp(&items.len()).then(Ordering::Less);
                if self.is_scalar() {
                    by_len
                } else {
                    by_len.reverse()
                }
            }
            (false, false) => self.cmp_inner(other),
        }
    }

    fn cmp_inner(&self, other: &Jsonb) -> Ordering {
        match (self, other) {
            (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
            (Jsonb::Bool(a), Jsonb::Bool(b)) => a.cmp(b),
            (Jsonb::Number(a), Jsonb::Number(b)) => a.cmp(b),
            (Jsonb::String(a), Jsonb::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Jsonb::Array(a), Jsonb::Array(b)) => {
                a.len().cmp(&b.len()).then_with(|| a.iter().zip(b.iter()).map(|(x, y)| x.cmp_inner(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal))
            }
            (Jsonb::Object(a), Jsonb::Object(b)) => a.len().cmp(&b.len()).then_with(|| {
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    let o = ka.as_bytes().cmp(kb.as_bytes()).then_with(|| va.cmp_inner(vb));
                    if o.is_ne() {
                        return o;
                    }
                }
                Ordering::Equal
            }),
            _ => self.type_rank().cmp(&other.type_rank()),
        }
    }

    /// jsonb_contains (`@>`): whether `self` contains `other`.
    pub fn contains(&self, other: &Jsonb) -> bool {
        match (self, other) {
            (Jsonb::Object(_), o) | (o, Jsonb::Object(_)) if !matches!(o, Jsonb::Object(_)) => false,
            // A raw scalar contains only an equal raw scalar; an array may
            // contain a raw scalar as it contains a one-element array.
            (a, b) if a.is_scalar() => b.is_scalar() && a.cmp_inner(b).is_eq(),
            (Jsonb::Array(_), b) if b.is_scalar() => self.deep_contains(&Jsonb::Array(vec![b.clone()])),
            _ => self.deep_contains(other),
        }
    }

    /// JsonbDeepContains over two containers of the same kind.
    fn deep_contains(&self, other: &Jsonb) -> bool {
        match (self, other) {
            (Jsonb::Object(a), Jsonb::Object(b)) => {
                if a.len() < b.len() {
                    return false;
                }
                b.iter().all(|(k, bv)| match self.get(k) {
                    None => false,
                    Some(av) => match (av.is_scalar(), bv.is_scalar()) {
                        (true, true) => av.cmp_inner(bv).is_eq(),
                        (false, false) => std::mem::discriminant(av) == std::mem::discriminant(bv) && av.deep_contains(bv),
                        _ => false,
                    },
                })
            }
            (Jsonb::Array(a), Jsonb::Array(b)) => b.iter().all(|bv| {
                if bv.is_scalar() {
                    a.iter().any(|av| av.is_scalar() && av.cmp_inner(bv).is_eq())
                } else {
                    a.iter().any(|av| std::mem::discriminant(av) == std::mem::discriminant(bv) && av.deep_contains(bv))
                }
            }),
            _ => false,
        }
    }

    /// jsonb_exists (`?`): a key of an object, a string element of an
    /// array, or the string itself at top level.
    pub fn exists(&self, key: &str) -> bool {
        match self {
            Jsonb::Object(_) => self.get(key).is_some(),
            Jsonb::Array(items) => items.iter().any(|v| matches!(v, Jsonb::String(s) if s == key)),
            Jsonb::String(s) => s == key,
            _ => false,
        }
    }

    /// A hash consistent with `cmp_top` equality.
    pub fn hash_into<H: Hasher>(&self, state: &mut H) {
        self.type_rank().hash(state);
        match self {
            Jsonb::Null => {}
            Jsonb::Bool(b) => b.hash(state),
            Jsonb::Number(n) => n.hash(state),
            Jsonb::String(s) => s.hash(state),
            Jsonb::Array(items) => {
                items.len().hash(state);
                for v in items {
                    v.hash_into(state);
                }
            }
            Jsonb::Object(members) => {
                members.len().hash(state);
                for (k, v) in members {
                    k.hash(state);
                    v.hash_into(state);
                }
            }
        }
    }

    /// Nesting depth (a scalar is 0).
    pub fn depth(&self) -> usize {
        match self {
            Jsonb::Array(items) => 1 + items.iter().map(Jsonb::depth).max().unwrap_or(0),
            Jsonb::Object(members) => 1 + members.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }
}

impl fmt::Display for Jsonb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out);
        f.write_str(&out)
    }
}

impl PartialEq for Jsonb {
    fn eq(&self, other: &Jsonb) -> bool {
        self.cmp_top(other).is_eq()
    }
}

impl Hash for Jsonb {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash_into(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Jsonb {
        Jsonb::parse(s).unwrap()
    }

    #[test]
    fn canonical_text() {
        let cases = [
            (r#"{"b": 1, "a": 2, "aa": 3}"#, r#"{"a": 2, "b": 1, "aa": 3}"#),
            (r#"{"a":1,"a":2}"#, r#"{"a": 2}"#),
            (r#"[1.50, 1e2, -0, 0.0, "x\u00e9\n"]"#, r#"[1.50, 100, 0, 0.0, "xé\n"]"#),
            (r#" {} "#, "{}"),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#"{"k":[{"z":true,"y":false}]}"#, r#"{"k": [{"y": false, "z": true}]}"#),
        ];
        for (input, expected) in cases {
            assert_eq!(j(input).to_string(), expected, "{input}");
        }
    }

    #[test]
    fn btree_order() {
        // object > array > boolean > number > string > null, nested.
        let order = ["[null]", "[\"a\"]", "[1]", "[true]", "[[]]", "[{}]"];
        for w in order.windows(2) {
            assert_eq!(j(w[0]).cmp_top(&j(w[1])), Ordering::Less, "{} < {}", w[0], w[1]);
        }
        assert_eq!(j("[]").cmp_top(&j("1")), Ordering::Less);
        assert_eq!(j("1").cmp_top(&j("[1]")), Ordering::Less);
        assert_eq!(j("1").cmp_top(&j("[1, 2]")), Ordering::Less);
        assert_eq!(j("[9]").cmp_top(&j("[1, 2]")), Ordering::Less);
        // Equal-sized objects compare keys in storage order, each bytewise.
        assert_eq!(j("{\"b\": 1}").cmp_top(&j("{\"aa\": 1}")), Ordering::Greater);
        assert_eq!(j("1.0").cmp_top(&j("1")), Ordering::Equal);
    }

    #[test]
    fn containment() {
        assert!(j(r#"{"a": 1, "b": [1, 2]}"#).contains(&j(r#"{"b": [2]}"#)));
        assert!(!j(r#"{"a": 1}"#).contains(&j(r#"{"a": 2}"#)));
        assert!(j("[1, 2]").contains(&j("1")));
        assert!(!j("1").contains(&j("[1]")));
        assert!(!j("[1]").contains(&j("{}")));
        assert!(j(r#"["a", "b"]"#).exists("a"));
    }

    #[test]
    fn pretty() {
        assert_eq!(j(r#"{"a": [1, {}], "b": []}"#).pretty(), "{\n    \"a\": [\n        1,\n        {\n        }\n    ],\n    \"b\": [\n    ]\n}");
    }
}
