//! Enum values' order, which lives in the catalog above this crate.
//!
//! An enum value is the OID of its pg_enum row (as in PostgreSQL), and its
//! place in the type's order is not a property of the value: ALTER TYPE ...
//! ADD VALUE BEFORE puts new labels between old ones. The SQL layer, which
//! holds the catalog, installs `EnumOrder` once; comparisons, hashing-free
//! btree keys and the memcomparable index encoding ask it.

use std::cmp::Ordering;
use std::sync::OnceLock;

use crate::oid::Oid;

/// What the catalog answers about enum labels.
pub struct EnumOrder {
    /// Orders two labels of one enum type by their declared position.
    pub compare: fn(Oid, Oid) -> Ordering,
    /// Appends a byte string whose byte order is the label's position
    /// (stable for the label's lifetime, so index keys never go stale).
    pub sort_key: fn(Oid, &mut Vec<u8>),
}

static ORDER: OnceLock<EnumOrder> = OnceLock::new();

/// Installs the catalog's answers (the first call wins).
pub fn install(order: EnumOrder) {
    let _ = ORDER.set(order);
}

/// The declared order of two labels; by OID when no catalog answers.
pub fn compare(a: Oid, b: Oid) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match ORDER.get() {
        Some(o) => (o.compare)(a, b),
        None => a.cmp(&b),
    }
}

/// The memcomparable form of a label's position.
pub fn sort_key(label: Oid, out: &mut Vec<u8>) {
    match ORDER.get() {
        Some(o) => (o.sort_key)(label, out),
        None => out.extend_from_slice(&label.to_be_bytes()),
    }
}
