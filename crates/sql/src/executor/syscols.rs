//! System columns of stored rows (PostgreSQL's ctid, xmin, cmin, xmax,
//! cmax and tableoid), as scans and RETURNING produce them.
//!
//! Tusk's rows live under keys, not at heap positions, and its storage
//! keeps no transaction ids per row version; the values follow
//! PostgreSQL's formats and the invariants clients rely on:
//!
//! - `ctid` is a `tid` derived from the row key, so it identifies the row
//!   as long as the row is not re-keyed (an update of a table's primary
//!   key moves the row; PostgreSQL's ctid changes on every update). A
//!   table without a primary key numbers its rows by their hidden row id
//!   (the order they were inserted in); a table keyed by its primary key
//!   gets a stable hash of the key. `WHERE ctid = '(b,o)'` finds the row
//!   whose ctid that is.
//! - `xmin` reads as 2 (PostgreSQL's FrozenTransactionId: written by a
//!   transaction every snapshot sees as committed), `xmax` as 0 (the
//!   version is live, not locked or deleted), `cmin` and `cmax` as 0.
//! - `tableoid` is the OID of the table the row is stored in: a child's
//!   for rows of an inheritance child read through its parent.

use tusk_types::{Datum, Oid};

use super::table::TableAccess;

/// PostgreSQL's FrozenTransactionId.
pub const FROZEN_XID: u32 = 2;

/// Offsets per block of the ctids Tusk makes: the tid type's offset is
/// 16 bits, offset 0 is not a valid item.
const OFFSETS_PER_BLOCK: u64 = 65_535;

/// The `tid` value (block, offset) packed as Tusk holds it: a non-negative
/// int8 that orders as PostgreSQL orders tids.
pub fn pack_tid(block: u32, offset: u16) -> i64 {
    ((block as i64) << 16) | offset as i64
}

pub fn unpack_tid(v: i64) -> (u32, u16) {
    ((v >> 16) as u32, (v & 0xffff) as u16)
}

/// The n-th tid (from 0), filling each block's offsets 1.. in turn.
fn nth_tid(n: u64) -> i64 {
    let n = n % (u32::MAX as u64 * OFFSETS_PER_BLOCK);
    pack_tid((n / OFFSETS_PER_BLOCK) as u32, (n % OFFSETS_PER_BLOCK + 1) as u16)
}

/// FNV-1a: a hash that never changes between runs or builds.
fn stable_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The ctid of the row stored under `key` in `table`; rows produced
/// without a key (system catalogs, a sequence's one row) are numbered by
/// their position `ordinal` (from 0) in the scan.
pub fn ctid(table: &TableAccess, key: &[u8], ordinal: u64) -> i64 {
    let prefix = table.prefix().len();
    if key.len() <= prefix {
        return nth_tid(ordinal);
    }
    let suffix = &key[prefix..];
    if table.pk_cols.is_none() && suffix.len() == 8 {
        // The hidden row id, from 1.
        let id = tusk_storage::keys::decode_i64(suffix);
        return nth_tid((id as u64).saturating_sub(1));
    }
    nth_tid(stable_hash(suffix))
}

/// The system columns of one row, in `SystemColumn::ALL` order.
pub fn values(table_oid: Oid, ctid: i64) -> [Datum; 6] {
    [Datum::Int8(ctid), Datum::Oid(FROZEN_XID), Datum::Oid(0), Datum::Oid(0), Datum::Oid(0), Datum::Oid(table_oid)]
}
