//! GIN indexes (PostgreSQL's access/gin) as keys in the engine.
//!
//! PostgreSQL's GIN keeps, per entry (a key, a value, an array element),
//! a posting list of heap tuple ids in pages that VACUUM must clean. Here
//! every (entry, row) pair is one engine key and nothing else:
//!
//!   `D | index storage id | column number | entry | row key suffix`
//!
//! with an empty value. Insert, update and delete add and remove those
//! keys inside the writing transaction, so a reader sees exactly the
//! entries of the rows its snapshot sees, and a rolled-back or
//! compacted-away row leaves no entry behind.
//!
//! Entries follow the operator classes' extractValue functions:
//! - `jsonb_ops` (gin_extract_jsonb): every object key and every scalar,
//!   flagged by kind; string array elements count as keys (so that `?`
//!   finds them).
//! - `jsonb_path_ops` (gin_extract_jsonb_path): one 32-bit hash per
//!   scalar, of the keys on the path to it and the scalar.
//! - `array_ops` (ginarrayextract): the distinct elements.
//!
//! A value without entries (an empty array or object) gets the EMPTY entry
//! (GIN_CAT_EMPTY_ITEM) so that `<@` can find it; a NULL column value gets
//! none, since no indexable operator matches it.
//!
//! A search (`gin_query`) turns an operator and its constant into entries
//! to read, all of which (`All`) or any of which (`Any`) a row must have.
//! Scans always recheck the operator on the row (PostgreSQL rechecks every
//! jsonb and array operator but `jsonb_path_ops`'s exactness aside), so an
//! `All` search may read only its rarest entries.

use std::collections::BTreeSet;

use tusk_storage::keys::{encode_key_datum, prefix_end, storage_prefix};
use tusk_types::jsonb::Jsonb;
use tusk_types::{Datum, PgResult};

use super::table::{IndexAccess, IndexColumn, TableAccess, SCAN_BATCH};
use super::ExecCx;

/// pg_opclass OIDs of the GIN operator classes Tusk implements.
pub const ARRAY_OPS: u32 = 10064;
pub const JSONB_OPS: u32 = 10090;
pub const JSONB_PATH_OPS: u32 = 10091;

/// An index column's operator class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GinOpclass {
    JsonbOps,
    JsonbPathOps,
    ArrayOps,
}

impl GinOpclass {
    pub fn from_oid(oid: u32) -> Option<GinOpclass> {
        match oid {
            JSONB_OPS => Some(GinOpclass::JsonbOps),
            JSONB_PATH_OPS => Some(GinOpclass::JsonbPathOps),
            ARRAY_OPS => Some(GinOpclass::ArrayOps),
            _ => None,
        }
    }
}

// Entry categories, the first byte of an entry.
const ENTRY_EMPTY: u8 = 0x01;
const ENTRY_NULL_ELEMENT: u8 = 0x02;
const ENTRY_KEY: u8 = 0x10;

// jsonb_ops flags (JGINFLAG_*), the byte after ENTRY_KEY.
const JGIN_KEY: u8 = 0x01;
const JGIN_NULL: u8 = 0x02;
const JGIN_BOOL: u8 = 0x03;
const JGIN_NUM: u8 = 0x04;
const JGIN_STR: u8 = 0x05;

/// FNV-1a, 32 bits: a hash that never changes between builds (entries
/// outlive the binary that wrote them).
fn fnv32(tag: u8, bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in std::iter::once(&tag).chain(bytes) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// numeric_normalize: the text of a number without trailing fractional
/// zeros, so that equal numbers (1, 1.0) give one entry.
fn normalized_number(n: &tusk_types::numeric::Numeric) -> String {
    let mut s = n.to_string();
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

/// make_scalar_key: one jsonb_ops entry (without the category byte).
fn jsonb_scalar_entry(v: &Jsonb, is_key: bool, out: &mut Vec<u8>) {
    out.push(ENTRY_KEY);
    let (flag, text): (u8, std::borrow::Cow<str>) = match v {
        Jsonb::Null => (JGIN_NULL, "".into()),
        Jsonb::Bool(b) => (JGIN_BOOL, if *b { "t" } else { "f" }.into()),
        Jsonb::Number(n) => (JGIN_NUM, normalized_number(n).into()),
        Jsonb::String(s) => (if is_key { JGIN_KEY } else { JGIN_STR }, s.as_str().into()),
        _ => unreachable!("containers are not scalar entries"),
    };
    out.push(flag);
    // Escaped and terminated, so that no entry is a prefix of another.
    let _ = encode_key_datum(out, &Datum::Text(text.as_ref().into()));
}

/// The key's text as a `jsonb_ops` key entry (`?`, `?|`, `?&`).
fn jsonb_key_entry(key: &str) -> Vec<u8> {
    let mut e = Vec::with_capacity(key.len() + 4);
    jsonb_scalar_entry(&Jsonb::String(key.to_string()), true, &mut e);
    e
}

/// gin_extract_jsonb.
fn jsonb_ops_entries(v: &Jsonb, out: &mut BTreeSet<Vec<u8>>) {
    fn walk(v: &Jsonb, in_array: bool, out: &mut BTreeSet<Vec<u8>>) {
        match v {
            Jsonb::Object(members) => {
                for (k, m) in members {
                    let mut e = Vec::new();
                    jsonb_scalar_entry(&Jsonb::String(k.clone()), true, &mut e);
                    out.insert(e);
                    walk(m, false, out);
                }
            }
            Jsonb::Array(items) => {
                for i in items {
                    walk(i, true, out);
                }
            }
            scalar => {
                let mut e = Vec::new();
                jsonb_scalar_entry(scalar, in_array && matches!(scalar, Jsonb::String(_)), &mut e);
                out.insert(e);
            }
        }
    }
    // A raw scalar is stored as a one-element array: a string is a key.
    walk(v, true, out);
}

/// JsonbHashScalarValue mixed into a path hash.
fn mix_scalar(hash: u32, v: &Jsonb) -> u32 {
    let h = match v {
        Jsonb::Null => fnv32(1, b""),
        Jsonb::Bool(b) => fnv32(2, &[*b as u8]),
        Jsonb::Number(n) => fnv32(3, normalized_number(n).as_bytes()),
        Jsonb::String(s) => fnv32(4, s.as_bytes()),
        _ => unreachable!("containers are not hashed as scalars"),
    };
    hash.rotate_left(1) ^ h
}

/// gin_extract_jsonb_path: per scalar, the hash of the keys leading to it
/// and the scalar (array nesting does not count).
fn jsonb_path_entries(v: &Jsonb, out: &mut BTreeSet<Vec<u8>>) {
    fn walk(v: &Jsonb, path: u32, out: &mut BTreeSet<Vec<u8>>) {
        match v {
            Jsonb::Object(members) => {
                for (k, m) in members {
                    let p = mix_scalar(path, &Jsonb::String(k.clone()));
                    walk(m, p, out);
                }
            }
            Jsonb::Array(items) => {
                for i in items {
                    walk(i, path, out);
                }
            }
            scalar => {
                let mut e = Vec::with_capacity(5);
                e.push(ENTRY_KEY);
                e.extend_from_slice(&mix_scalar(path, scalar).to_be_bytes());
                out.insert(e);
            }
        }
    }
    walk(v, 0, out);
}

/// ginarrayextract: the distinct elements (NULL elements as one entry).
fn array_entries(v: &Datum, out: &mut BTreeSet<Vec<u8>>) -> PgResult<()> {
    if let Datum::Array(a) = v {
        for el in &a.elements {
            if el.is_null() {
                out.insert(vec![ENTRY_NULL_ELEMENT]);
            } else {
                let mut e = vec![ENTRY_KEY];
                encode_key_datum(&mut e, el)?;
                out.insert(e);
            }
        }
    }
    Ok(())
}

/// The entries of one indexed value under `class` (EMPTY when it has none).
pub fn value_entries(class: GinOpclass, v: &Datum) -> PgResult<BTreeSet<Vec<u8>>> {
    let mut out = BTreeSet::new();
    match (class, v) {
        (_, Datum::Null) => return Ok(out),
        (GinOpclass::JsonbOps, Datum::Jsonb(j)) => jsonb_ops_entries(j, &mut out),
        (GinOpclass::JsonbPathOps, Datum::Jsonb(j)) => jsonb_path_entries(j, &mut out),
        (GinOpclass::ArrayOps, v) => array_entries(v, &mut out)?,
        _ => {}
    }
    if out.is_empty() {
        out.insert(vec![ENTRY_EMPTY]);
    }
    Ok(out)
}

/// The search operators of the GIN operator classes (their strategies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GinOp {
    /// `@>`: jsonb (both classes) or arrays.
    Contains,
    /// `?`, `?|`, `?&` (jsonb_ops).
    Exists,
    ExistsAny,
    ExistsAll,
    /// Arrays: `<@`, `&&`, `=`.
    ContainedBy,
    Overlaps,
    Equal,
}

impl GinOp {
    /// The operator's name with the indexed value on its left.
    pub fn operator_name(self) -> &'static str {
        match self {
            GinOp::Contains => "@>",
            GinOp::Exists => "?",
            GinOp::ExistsAny => "?|",
            GinOp::ExistsAll => "?&",
            GinOp::ContainedBy => "<@",
            GinOp::Overlaps => "&&",
            GinOp::Equal => "=",
        }
    }
}

/// What a search must read: rows with all of the entries, rows with any of
/// them, every row (the index cannot narrow it), or none.
#[derive(Debug)]
pub enum GinQuery {
    All(Vec<Vec<u8>>),
    Any(Vec<Vec<u8>>),
    Everything,
    Nothing,
}

/// extractQuery of the column's operator class for `op` with `value`.
pub fn gin_query(class: GinOpclass, op: GinOp, value: &Datum) -> PgResult<GinQuery> {
    if value.is_null() {
        return Ok(GinQuery::Nothing);
    }
    let text_keys = |v: &Datum| -> Vec<Vec<u8>> {
        match v {
            Datum::Array(a) => a.elements.iter().filter_map(|e| e.as_str().map(jsonb_key_entry)).collect(),
            _ => Vec::new(),
        }
    };
    let elements = |v: &Datum| -> PgResult<Vec<Vec<u8>>> {
        let mut s = BTreeSet::new();
        array_entries(v, &mut s)?;
        Ok(s.into_iter().collect())
    };
    Ok(match (class, op) {
        (GinOpclass::JsonbOps | GinOpclass::JsonbPathOps, GinOp::Contains) => {
            let Datum::Jsonb(j) = value else { return Ok(GinQuery::Everything) };
            let mut s = BTreeSet::new();
            if class == GinOpclass::JsonbOps {
                jsonb_ops_entries(j, &mut s);
            } else {
                jsonb_path_entries(j, &mut s);
            }
            if s.is_empty() {
                GinQuery::Everything
            } else {
                GinQuery::All(s.into_iter().collect())
            }
        }
        (GinOpclass::JsonbOps, GinOp::Exists) => match value.as_str() {
            Some(k) => GinQuery::All(vec![jsonb_key_entry(k)]),
            None => GinQuery::Everything,
        },
        (GinOpclass::JsonbOps, GinOp::ExistsAny) => {
            let e = text_keys(value);
            if e.is_empty() {
                GinQuery::Nothing
            } else {
                GinQuery::Any(e)
            }
        }
        (GinOpclass::JsonbOps, GinOp::ExistsAll) => {
            let e = text_keys(value);
            if e.is_empty() {
                GinQuery::Everything
            } else {
                GinQuery::All(e)
            }
        }
        (GinOpclass::ArrayOps, GinOp::Contains) => {
            let e = elements(value)?;
            if e.is_empty() {
                GinQuery::Everything
            } else {
                GinQuery::All(e)
            }
        }
        (GinOpclass::ArrayOps, GinOp::Equal) => {
            let e = elements(value)?;
            if e.is_empty() {
                GinQuery::All(vec![vec![ENTRY_EMPTY]])
            } else {
                GinQuery::All(e)
            }
        }
        (GinOpclass::ArrayOps, GinOp::Overlaps) => {
            let e: Vec<Vec<u8>> = elements(value)?.into_iter().filter(|e| e[0] != ENTRY_NULL_ELEMENT).collect();
            if e.is_empty() {
                GinQuery::Nothing
            } else {
                GinQuery::Any(e)
            }
        }
        (GinOpclass::ArrayOps, GinOp::ContainedBy) => {
            // Rows whose elements are all in the query: any element, or none.
            let mut e: Vec<Vec<u8>> = elements(value)?.into_iter().filter(|e| e[0] != ENTRY_NULL_ELEMENT).collect();
            e.push(vec![ENTRY_EMPTY]);
            GinQuery::Any(e)
        }
        _ => GinQuery::Everything,
    })
}

/// The operator a GIN index column answers for the operator's function,
/// if its class supports it (the class's pg_amop rows).
pub fn gin_op_of_proc(class: GinOpclass, proc_oid: u32) -> Option<GinOp> {
    let op = match proc_oid {
        4046 => GinOp::Contains,   // jsonb_contains
        4047 => GinOp::Exists,     // jsonb_exists
        4048 => GinOp::ExistsAny,  // jsonb_exists_any
        4049 => GinOp::ExistsAll,  // jsonb_exists_all
        2748 => GinOp::Contains,   // arraycontains
        2749 => GinOp::ContainedBy, // arraycontained
        2747 => GinOp::Overlaps,   // arrayoverlap
        744 => GinOp::Equal,       // array_eq
        _ => return None,
    };
    let jsonb = matches!(proc_oid, 4046..=4049);
    match class {
        GinOpclass::JsonbOps if jsonb => Some(op),
        GinOpclass::JsonbPathOps if proc_oid == 4046 => Some(op),
        GinOpclass::ArrayOps if !jsonb => Some(op),
        _ => None,
    }
}

/// An index column's number in its entries' keys.
fn column_byte(i: usize) -> u8 {
    i as u8
}

impl TableAccess {
    /// The keys of index `idx`'s entries for `row` stored under `row_key`.
    pub(crate) fn gin_keys(&self, idx: &IndexAccess, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<BTreeSet<Vec<u8>>> {
        let classes = idx.gin.as_ref().expect("a GIN index");
        let mut out = BTreeSet::new();
        if !self.applies_to(idx, row, cx)? {
            return Ok(out);
        }
        let base = storage_prefix(idx.rel.storage_id);
        let suffix = &row_key[self.prefix().len()..];
        for (i, (col, class)) in idx.cols.iter().zip(classes).enumerate() {
            let v = match col {
                IndexColumn::Column(c) => row[*c].clone(),
                IndexColumn::Expr(e) => super::eval::eval(e, row, cx)?,
            };
            for e in value_entries(*class, &v)? {
                let mut k = Vec::with_capacity(base.len() + 1 + e.len() + suffix.len());
                k.extend_from_slice(&base);
                k.push(column_byte(i));
                k.extend_from_slice(&e);
                k.extend_from_slice(suffix);
                out.insert(k);
            }
        }
        Ok(out)
    }

    /// Adds a row's entries through `put` (the transaction or a bulk writer).
    pub(crate) fn gin_insert(&self, idx: &IndexAccess, row: &[Datum], row_key: &[u8], cx: &ExecCx, put: &mut dyn FnMut(&[u8]) -> PgResult<()>) -> PgResult<()> {
        for k in self.gin_keys(idx, row, row_key, cx)? {
            put(&k)?;
        }
        Ok(())
    }

    pub(crate) fn gin_delete(&self, idx: &IndexAccess, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        for k in self.gin_keys(idx, row, row_key, cx)? {
            cx.txn.delete(&k)?;
        }
        Ok(())
    }

    /// An update in place: only the entries that differ are written.
    pub(crate) fn gin_update(&self, idx: &IndexAccess, old: &[Datum], new: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        let before = self.gin_keys(idx, old, row_key, cx)?;
        let after = self.gin_keys(idx, new, row_key, cx)?;
        for k in before.difference(&after) {
            cx.txn.delete(k)?;
        }
        for k in after.difference(&before) {
            cx.txn.put(k, &[])?;
        }
        Ok(())
    }

    /// The row keys of one entry (`entry` includes the column byte), in
    /// order, as of the statement's snapshot; stops after `limit` (then
    /// returns None).
    fn gin_entry_rows(&self, index_storage: u32, entry: &[u8], limit: Option<usize>, cx: &ExecCx) -> PgResult<Option<Vec<Vec<u8>>>> {
        let mut lower = storage_prefix(index_storage);
        lower.extend_from_slice(entry);
        let skip = lower.len();
        let upper = prefix_end(&lower);
        let mut out = Vec::new();
        loop {
            cx.check()?;
            let batch = cx.txn.scan(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (k, _) in &batch {
                let mut rk = self.prefix().to_vec();
                rk.extend_from_slice(&k[skip..]);
                out.push(rk);
            }
            if limit.is_some_and(|l| out.len() > l) {
                return Ok(None);
            }
            if n < SCAN_BATCH {
                return Ok(Some(out));
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }

    /// The row keys a GIN search may match (a superset: rows are
    /// rechecked), sorted; None when the index cannot narrow the search.
    pub(crate) fn gin_search(&self, index_storage: u32, searches: &[(usize, GinQuery)], cx: &ExecCx) -> PgResult<Option<Vec<Vec<u8>>>> {
        // Rows must satisfy every search: intersect the narrowing ones.
        let mut result: Option<Vec<Vec<u8>>> = None;
        let mut deferred_all: Vec<Vec<u8>> = Vec::new();
        for (col, q) in searches {
            let with_col = |e: &Vec<u8>| {
                let mut k = vec![column_byte(*col)];
                k.extend_from_slice(e);
                k
            };
            let rows = match q {
                GinQuery::Everything => continue,
                GinQuery::Nothing => return Ok(Some(Vec::new())),
                GinQuery::Any(entries) => {
                    let mut set = BTreeSet::new();
                    for e in entries {
                        set.extend(self.gin_entry_rows(index_storage, &with_col(e), None, cx)?.unwrap_or_default());
                    }
                    set.into_iter().collect::<Vec<_>>()
                }
                GinQuery::All(entries) => {
                    // Read the entries with few rows in full; one frequent
                    // entry is enough when all are frequent (the recheck
                    // applies the rest).
                    let mut acc: Option<Vec<Vec<u8>>> = None;
                    for e in entries {
                        match self.gin_entry_rows(index_storage, &with_col(e), Some(4 * SCAN_BATCH), cx)? {
                            Some(rows) => acc = Some(intersect(acc, rows)),
                            None => deferred_all.push(with_col(e)),
                        }
                    }
                    match acc {
                        Some(rows) => rows,
                        None => continue,
                    }
                }
            };
            result = Some(intersect(result, rows));
        }
        if result.is_none() {
            if let Some(e) = deferred_all.first() {
                result = self.gin_entry_rows(index_storage, e, None, cx)?;
            }
        }
        Ok(result)
    }

    /// The row predicate of an index (partial GIN indexes).
    fn applies_to(&self, idx: &IndexAccess, row: &[Datum], cx: &ExecCx) -> PgResult<bool> {
        match &idx.predicate {
            Some(p) => super::eval::eval_pred(p, row, cx),
            None => Ok(true),
        }
    }
}

/// A GIN build's entries, sorted before they are written: in key order a
/// bulk writer turns them into SST files (see `tusk_storage::bulk`)
/// instead of inserting each into the memtable. Past `MAX_BYTES` the
/// entries so far are written and the next ones sorted on their own.
#[derive(Default)]
pub struct SortedEntries {
    keys: Vec<Vec<u8>>,
    bytes: usize,
}

impl SortedEntries {
    const MAX_BYTES: usize = 512 << 20;

    pub fn add(&mut self, keys: BTreeSet<Vec<u8>>, bulk: &mut tusk_storage::BulkWriter) -> PgResult<()> {
        for k in keys {
            self.bytes += k.len() + 24;
            self.keys.push(k);
        }
        if self.bytes > Self::MAX_BYTES {
            self.write(bulk)?;
        }
        Ok(())
    }

    pub fn write(&mut self, bulk: &mut tusk_storage::BulkWriter) -> PgResult<()> {
        self.keys.sort_unstable();
        for k in self.keys.drain(..) {
            bulk.put(&k, &[])?;
        }
        self.bytes = 0;
        Ok(())
    }
}

/// The rows of both sorted lists (all of `b` when `a` is None).
fn intersect(a: Option<Vec<Vec<u8>>>, b: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let Some(a) = a else { return b };
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(b[j].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Datum {
        Datum::Jsonb(std::sync::Arc::new(Jsonb::parse(s).unwrap()))
    }

    #[test]
    fn path_entries_of_a_query_are_a_subset_of_the_document_entries() {
        let doc = value_entries(GinOpclass::JsonbPathOps, &j(r#"{"a": {"b": [1, 2.0]}, "tags": ["x", "y"]}"#)).unwrap();
        let GinQuery::All(q) = gin_query(GinOpclass::JsonbPathOps, GinOp::Contains, &j(r#"{"a": {"b": [2]}, "tags": ["y"]}"#)).unwrap() else { panic!() };
        assert!(q.iter().all(|e| doc.contains(e)));
        let GinQuery::All(q) = gin_query(GinOpclass::JsonbPathOps, GinOp::Contains, &j(r#"{"b": [2]}"#)).unwrap() else { panic!() };
        assert!(!q.iter().all(|e| doc.contains(e)));
    }

    #[test]
    fn jsonb_ops_flags_array_strings_as_keys() {
        let doc = value_entries(GinOpclass::JsonbOps, &j(r#"{"a": ["k"], "b": "v"}"#)).unwrap();
        assert!(doc.contains(&jsonb_key_entry("k")));
        assert!(!doc.contains(&jsonb_key_entry("v")));
        assert!(value_entries(GinOpclass::JsonbOps, &j("{}")).unwrap().contains(&vec![ENTRY_EMPTY]));
    }
}

/// The operator classes of a GIN index's columns; None for other methods.
pub fn classes_of(info: &crate::catalog::IndexInfo, idx: &crate::catalog::Relation) -> Option<Vec<GinOpclass>> {
    if info.method != "gin" {
        return None;
    }
    Some(
        info.keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                GinOpclass::from_oid(k.opclass).unwrap_or_else(|| {
                    // An index stored without its class takes the type's default.
                    match idx.columns.get(i).map(|c| c.type_oid) {
                        Some(tusk_types::oid::JSONB) => GinOpclass::JsonbOps,
                        _ => GinOpclass::ArrayOps,
                    }
                })
            })
            .collect(),
    )
}
