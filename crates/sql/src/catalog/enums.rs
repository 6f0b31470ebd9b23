//! Enum types (CREATE TYPE ... AS ENUM): their labels, as pg_enum holds
//! them, and the order every comparison of enum values follows.
//!
//! A value of an enum type is the OID of its label's pg_enum row, as in
//! PostgreSQL, so that renaming a label or adding one never touches stored
//! rows. Each label also carries two positions: `sort_order`, PostgreSQL's
//! float4 enumsortorder (shown in pg_enum and renumbered when float4 runs
//! out of room between two neighbours, exactly as PostgreSQL does), and
//! `key`, a byte string that orders the same way but never changes once
//! given, because there is always room between two byte strings. Index
//! keys hold `key`, so ADD VALUE BEFORE/AFTER never makes an index stale.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};

use serde::{Deserialize, Serialize};
use tusk_types::{sqlstate, Oid, PgError, PgResult};

/// PostgreSQL's NAMEDATALEN - 1: the longest label, in bytes.
pub const MAX_LABEL_BYTES: usize = 63;

/// An enum type's labels (pg_enum rows), in declaration order.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EnumDef {
    pub labels: Vec<EnumLabel>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EnumLabel {
    /// pg_enum.oid: what a value of the type holds.
    pub oid: Oid,
    pub label: String,
    /// pg_enum.enumsortorder.
    pub sort_order: f32,
    /// The label's stable position (see the module comment).
    pub key: Vec<u8>,
}

/// One label as comparisons and output need it.
#[derive(Clone, Debug)]
pub struct LabelInfo {
    pub type_oid: Oid,
    pub label: Arc<str>,
    pub key: Arc<[u8]>,
}

/// A database's enum types, indexed for the executor.
#[derive(Debug, Default)]
pub struct EnumCatalog {
    pub types: HashMap<Oid, Arc<EnumDef>>,
    labels: HashMap<Oid, LabelInfo>,
}

impl EnumCatalog {
    pub fn add(&mut self, type_oid: Oid, def: &EnumDef) {
        install_order();
        let mut global = global_labels().write().unwrap_or_else(|e| e.into_inner());
        for l in &def.labels {
            let info = LabelInfo { type_oid, label: Arc::from(l.label.as_str()), key: Arc::from(l.key.as_slice()) };
            global.insert(l.oid, info.clone());
            self.labels.insert(l.oid, info);
        }
        let mut sorted = def.clone();
        sorted.labels.sort_by(|a, b| a.key.cmp(&b.key));
        self.types.insert(type_oid, Arc::new(sorted));
    }

    pub fn label(&self, oid: Oid) -> Option<&LabelInfo> {
        self.labels.get(&oid)
    }

    /// The type's labels in their order.
    pub fn def(&self, type_oid: Oid) -> Option<&Arc<EnumDef>> {
        self.types.get(&type_oid)
    }
}

/// Every label this process has seen, for threads that have no catalog
/// entered. Label OIDs are unique in the cluster and a label's key never
/// changes, so an entry is never wrong about order; its text can lag a
/// RENAME VALUE another session has not committed, which only such
/// catalog-less threads could see.
fn global_labels() -> &'static RwLock<HashMap<Oid, LabelInfo>> {
    static LABELS: OnceLock<RwLock<HashMap<Oid, LabelInfo>>> = OnceLock::new();
    LABELS.get_or_init(Default::default)
}

/// A label, from this thread's catalog or else the process-wide record.
pub fn label_info(oid: Oid) -> Option<LabelInfo> {
    if let Some(Some(l)) = super::types::with_user_types(|t| t.enums.label(oid).cloned()) {
        return Some(l);
    }
    global_labels().read().unwrap_or_else(|e| e.into_inner()).get(&oid).cloned()
}

/// An enum type's labels in order, in this thread's scope.
pub fn enum_def(type_oid: Oid) -> Option<Arc<EnumDef>> {
    if type_oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    super::types::with_user_types(|t| t.enums.def(type_oid).cloned()).flatten()
}

pub fn is_enum(type_oid: Oid) -> bool {
    enum_def(type_oid).is_some()
}

fn install_order() {
    tusk_types::enums::install(tusk_types::enums::EnumOrder { compare: compare_labels, sort_key });
}

fn compare_labels(a: Oid, b: Oid) -> Ordering {
    // Sorting calls this for every pair: look in this thread's catalog
    // without copying anything first.
    let local = super::types::with_user_types(|t| match (t.enums.label(a), t.enums.label(b)) {
        (Some(x), Some(y)) => Some(x.key.cmp(&y.key).then(a.cmp(&b))),
        _ => None,
    });
    if let Some(Some(o)) = local {
        return o;
    }
    match (label_info(a), label_info(b)) {
        (Some(x), Some(y)) => x.key.cmp(&y.key).then(a.cmp(&b)),
        _ => a.cmp(&b),
    }
}

fn sort_key(label: Oid, out: &mut Vec<u8>) {
    match label_info(label) {
        Some(l) => out.extend_from_slice(&l.key),
        None => out.extend_from_slice(&label.to_be_bytes()),
    }
}

/// The stable key of the `i`th label a CREATE TYPE lists.
pub fn initial_key(i: usize) -> Vec<u8> {
    ((i as u32) + 1).to_be_bytes().to_vec()
}

/// A key strictly between `low` and `high` (None: above every key), never
/// ending in a zero byte, so that there is room below it too.
pub fn key_between(low: &[u8], high: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut bounded = high.is_some();
    let mut i = 0;
    loop {
        let lo = low.get(i).copied().unwrap_or(0) as u16;
        let hi = if bounded { high.and_then(|h| h.get(i)).copied().unwrap_or(0) as u16 } else { 256 };
        if hi > lo + 1 {
            out.push(((lo + hi) / 2) as u8);
            return out;
        }
        out.push(lo as u8);
        if hi == lo + 1 {
            bounded = false;
        }
        i += 1;
    }
}

/// checks a label's length (EnumValuesCreate, AddEnumLabel).
pub fn check_label(label: &str) -> PgResult<()> {
    if label.is_empty() || label.len() > MAX_LABEL_BYTES {
        // PostgreSQL accepts the empty label; only the length limit applies.
        if label.len() > MAX_LABEL_BYTES {
            return Err(PgError::new(sqlstate::INVALID_NAME, format!("invalid enum label \"{label}\""))
                .with_detail(format!("Labels must be {MAX_LABEL_BYTES} bytes or less.")));
        }
    }
    Ok(())
}

/// Where ALTER TYPE ... ADD VALUE puts the new label.
pub enum Placement<'a> {
    End,
    Before(&'a str),
    After(&'a str),
}

/// AddEnumLabel's choice of enumsortorder (with RenumberEnumType when
/// float4 has no value left between the neighbours) and the new label's
/// stable key. `labels` is in order; the new label is inserted into it.
pub fn add_label(def: &mut EnumDef, oid: Oid, label: &str, placement: Placement) -> PgResult<()> {
    def.labels.sort_by(|a, b| a.key.cmp(&b.key));
    let n = def.labels.len();
    let (index, neighbour) = match placement {
        Placement::End => (n, None),
        Placement::Before(nb) | Placement::After(nb) => {
            let Some(pos) = def.labels.iter().position(|l| l.label == nb) else {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("\"{nb}\" is not an existing enum label")));
            };
            let after = matches!(placement, Placement::After(_));
            (if after { pos + 1 } else { pos }, Some((pos, after)))
        }
    };
    let sort_order = loop {
        match neighbour {
            None => break def.labels.last().map_or(1.0, |l| l.sort_order + 1.0),
            Some((pos, after)) => {
                let nbr = def.labels[pos].sort_order;
                let other = if after { pos.checked_add(1).filter(|&i| i < n) } else { pos.checked_sub(1) };
                match other {
                    None if after => break nbr + 1.0,
                    None => break nbr - 1.0,
                    Some(o) => {
                        let other = def.labels[o].sort_order;
                        let midpoint: f32 = (nbr + other) / 2.0;
                        if midpoint == nbr || midpoint == other {
                            for (i, l) in def.labels.iter_mut().enumerate() {
                                l.sort_order = (i + 1) as f32;
                            }
                            continue;
                        }
                        break midpoint;
                    }
                }
            }
        }
    };
    let low: &[u8] = if index == 0 { &[] } else { &def.labels[index - 1].key };
    let high = def.labels.get(index).map(|l| l.key.as_slice());
    let key = key_between(low, high);
    def.labels.insert(index, EnumLabel { oid, label: label.to_string(), sort_order, key });
    Ok(())
}

// ---------------------------------------------------------------- uncommitted labels

thread_local! {
    /// Labels this session's open transaction added with ALTER TYPE ...
    /// ADD VALUE (PostgreSQL's uncommitted_enums): using one before commit
    /// is refused, since a rollback would leave it dangling in indexes.
    static ADDED_IN_TXN: RefCell<HashSet<Oid>> = RefCell::new(HashSet::new());
}

pub fn note_added_label(oid: Oid) {
    ADDED_IN_TXN.with(|s| s.borrow_mut().insert(oid));
}

/// At the end of a transaction, committed or not.
pub fn end_of_transaction() {
    ADDED_IN_TXN.with(|s| {
        if !s.borrow().is_empty() {
            s.borrow_mut().clear()
        }
    });
}

/// check_safe_enum_use.
pub fn check_safe_use(label: Oid) -> PgResult<()> {
    if !ADDED_IN_TXN.with(|s| s.borrow().contains(&label)) {
        return Ok(());
    }
    let info = label_info(label);
    let (name, ty) = match &info {
        Some(l) => (l.label.to_string(), crate::analyzer::types::format_type(super::builtins(), l.type_oid, -1)),
        None => (label.to_string(), "?".to_string()),
    };
    Err(PgError::new(sqlstate::UNSAFE_NEW_ENUM_VALUE_USAGE, format!("unsafe use of new value \"{name}\" of enum type {ty}"))
        .with_hint("New enum values must be committed before they can be used."))
}

// ---------------------------------------------------------------- pg_enum

/// pg_enum's rows: every label of every enum type of the database.
pub fn pg_enum_rows(cx: &super::system::SysCx, out: &mut Vec<super::system::SysRow>) -> PgResult<()> {
    use tusk_types::Datum;
    let mut types: Vec<(&Oid, &Arc<EnumDef>)> = cx.catalog.user_types.enums.types.iter().collect();
    types.sort_by_key(|t| *t.0);
    for (&type_oid, def) in types {
        let mut labels: Vec<&EnumLabel> = def.labels.iter().collect();
        labels.sort_by_key(|l| l.oid);
        for l in labels {
            out.push(vec![
                ("oid", Datum::Oid(l.oid)),
                ("enumtypid", Datum::Oid(type_oid)),
                ("enumsortorder", Datum::Float4(l.sort_order)),
                ("enumlabel", Datum::text(&l.label)),
            ]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_between_always_exist_and_order() {
        let mut keys = vec![initial_key(0), initial_key(1)];
        // Keep inserting just below the second key, as a run of
        // ADD VALUE ... BEFORE 'L2' does.
        for _ in 0..200 {
            let k = key_between(&keys[keys.len() - 2], Some(&keys[keys.len() - 1]));
            assert!(keys[keys.len() - 2] < k && k < keys[keys.len() - 1]);
            let at = keys.len() - 1;
            keys.insert(at, k);
        }
        let below = key_between(&[], Some(&keys[0]));
        assert!(below < keys[0]);
        let above = key_between(keys.last().unwrap(), None);
        assert!(&above > keys.last().unwrap());
    }

    #[test]
    fn sort_orders_follow_postgres_and_renumber() {
        let mut def = EnumDef { labels: vec![] };
        for (i, l) in ["L1", "L2"].iter().enumerate() {
            def.labels.push(EnumLabel { oid: i as Oid, label: l.to_string(), sort_order: (i + 1) as f32, key: initial_key(i) });
        }
        for i in 0..30 {
            add_label(&mut def, 100 + i, &format!("i{}", i + 1), Placement::Before("L2")).unwrap();
        }
        let names: Vec<&str> = def.labels.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(names.first(), Some(&"L1"));
        assert_eq!(names.last(), Some(&"L2"));
        assert_eq!(names[1], "i1");
        assert!(def.labels.windows(2).all(|w| w[0].sort_order < w[1].sort_order && w[0].key < w[1].key));
        assert!(add_label(&mut def, 999, "x", Placement::After("zeus")).is_err());
    }
}
