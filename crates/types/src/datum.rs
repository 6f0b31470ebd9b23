//! `Datum`: one SQL value as the executor holds it.
//!
//! A datum does not carry its SQL type; the plan knows the type of every
//! column and expression (as PostgreSQL's executor does). Variants therefore
//! stand for physical representations: `Text` holds text, varchar, bpchar and
//! name alike, `Oid` holds oid and the reg* types. Large values sit behind an
//! `Arc` so that copying a row through plan nodes never copies payloads.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::array::Array;
use crate::bits::BitString;
use crate::datetime::Interval;
use crate::net::NetAddr;
use crate::numeric::Numeric;
use crate::oid::Oid;
use crate::range::{Multirange, Range};

#[derive(Clone, Debug)]
pub enum Datum {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Arc<Numeric>),
    /// text, varchar, bpchar (stored padded, as PostgreSQL does), name, unknown literals.
    Text(Arc<str>),
    Bytea(Arc<[u8]>),
    /// Days since 2000-01-01 (PostgreSQL's epoch), `i32::MIN`/`i32::MAX` for -infinity/infinity.
    Date(i32),
    /// Microseconds since midnight.
    Time(i64),
    /// Microseconds since midnight and the zone's offset in seconds *west* of UTC (PostgreSQL's sign).
    TimeTz(i64, i32),
    /// Microseconds since 2000-01-01 00:00:00, `i64::MIN`/`i64::MAX` for -infinity/infinity.
    Timestamp(i64),
    /// Microseconds since 2000-01-01 00:00:00 UTC.
    TimestampTz(i64),
    Interval(Interval),
    Uuid([u8; 16]),
    /// oid, regclass, regtype, regproc, ...
    Oid(Oid),
    /// The one-byte `"char"` type.
    Char(u8),
    /// json keeps its input text verbatim.
    Json(Arc<str>),
    /// jsonb, parsed into its canonical form.
    Jsonb(Arc<crate::jsonb::Jsonb>),
    Array(Arc<Array>),
    /// An anonymous row value (ROW(...) and whole-row references).
    Record(Arc<Vec<Datum>>),
    /// inet, cidr, macaddr, macaddr8.
    Net(NetAddr),
    /// bit(n) and bit varying(n).
    Bits(Arc<BitString>),
    /// A range value; it names its range type (see `range`).
    Range(Arc<Range>),
    /// A multirange value; it names its multirange type.
    Multirange(Arc<Multirange>),
    /// An enum value: the OID of its label's pg_enum row (see `enums`).
    Enum(Oid),
}

impl Datum {
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    pub fn text(s: &str) -> Datum {
        Datum::Text(Arc::from(s))
    }

    pub fn from_string(s: String) -> Datum {
        Datum::Text(Arc::from(s))
    }

    pub fn numeric(n: Numeric) -> Datum {
        Datum::Numeric(Arc::new(n))
    }

    pub fn bytea(b: Vec<u8>) -> Datum {
        Datum::Bytea(Arc::from(b))
    }

    /// The truth value of a boolean datum: NULL is None.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Datum::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Datum::Text(s) | Datum::Json(s) => Some(s),
            _ => None,
        }
    }

    /// Integers of any width, widened (used where PostgreSQL accepts any integer).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Datum::Int2(v) => Some(*v as i64),
            Datum::Int4(v) => Some(*v as i64),
            Datum::Int8(v) => Some(*v),
            Datum::Oid(v) => Some(*v as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Float4(v) => Some(*v as f64),
            Datum::Float8(v) => Some(*v),
            _ => None,
        }
    }

    /// Ordering of two non-null datums of the same type, as btree sorts them.
    /// Floats order NaN above every number and treat -0 = +0 (float8_cmp_internal);
    /// text orders by bytes, PostgreSQL's "C" collation.
    pub fn cmp_same_type(&self, other: &Datum) -> Ordering {
        use Datum::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int2(a), Int2(b)) => a.cmp(b),
            (Int4(a), Int4(b)) => a.cmp(b),
            (Int8(a), Int8(b)) => a.cmp(b),
            (Float4(a), Float4(b)) => float_cmp(*a as f64, *b as f64),
            (Float8(a), Float8(b)) => float_cmp(*a, *b),
            (Numeric(a), Numeric(b)) => a.cmp(b),
            (Text(a), Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Json(a), Json(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Jsonb(a), Jsonb(b)) => a.cmp_top(b),
            (Bytea(a), Bytea(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Time(a), Time(b)) => a.cmp(b),
            (TimeTz(at, az), TimeTz(bt, bz)) => {
                // timetz_cmp_internal: compare the UTC instants, then the zones.
                let a_utc = *at + *az as i64 * 1_000_000;
                let b_utc = *bt + *bz as i64 * 1_000_000;
                a_utc.cmp(&b_utc).then(az.cmp(bz))
            }
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            (TimestampTz(a), TimestampTz(b)) => a.cmp(b),
            (Interval(a), Interval(b)) => a.cmp(b),
            (Uuid(a), Uuid(b)) => a.cmp(b),
            (Oid(a), Oid(b)) => a.cmp(b),
            (Char(a), Char(b)) => a.cmp(b),
            (Array(a), Array(b)) => a.cmp(b),
            (Net(a), Net(b)) => a.cmp(b),
            (Bits(a), Bits(b)) => a.cmp(b),
            (Record(a), Record(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    let o = x.cmp_same_type(y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Range(a), Range(b)) => crate::range::range_cmp(a, b),
            (Multirange(a), Multirange(b)) => crate::range::multirange_cmp(a, b),
            (Enum(a), Enum(b)) => crate::enums::compare(*a, *b),
            // Mixed numeric representations can meet in set operations and
            // VALUES lists whose branches the analyzer has already unified;
            // widen instead of failing.
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => match (a.as_f64(), b.as_f64()) {
                    (Some(x), Some(y)) => float_cmp(x, y),
                    _ => variant_rank(a).cmp(&variant_rank(b)),
                },
            },
        }
    }

    /// Equality as GROUP BY, DISTINCT and hash joins see it (NULLs equal each other here).
    pub fn group_eq(&self, other: &Datum) -> bool {
        self.cmp_same_type(other) == Ordering::Equal
    }

    /// A hash consistent with `group_eq`: equal values (1.0 and 1.00, -0.0 and 0.0) hash alike.
    pub fn hash_into<H: Hasher>(&self, state: &mut H) {
        use Datum::*;
        match self {
            Null => 0u8.hash(state),
            Bool(b) => b.hash(state),
            Int2(v) => (*v as i64).hash(state),
            Int4(v) => (*v as i64).hash(state),
            Int8(v) => v.hash(state),
            Oid(v) => (*v as i64).hash(state),
            Float4(v) => hash_float(*v as f64, state),
            Float8(v) => hash_float(*v, state),
            Numeric(n) => n.hash(state),
            Text(s) | Json(s) => s.hash(state),
            Jsonb(j) => j.hash_into(state),
            Bytea(b) => b.hash(state),
            Date(v) => v.hash(state),
            Time(v) => v.hash(state),
            TimeTz(t, z) => (t + *z as i64 * 1_000_000, z).hash(state),
            Timestamp(v) | TimestampTz(v) => v.hash(state),
            Interval(i) => i.hash(state),
            Uuid(u) => u.hash(state),
            Char(c) => c.hash(state),
            Array(a) => a.hash(state),
            Net(n) => n.hash(state),
            Bits(b) => b.hash(state),
            Record(r) => {
                for d in r.iter() {
                    d.hash_into(state);
                }
            }
            Range(r) => r.hash_into(state),
            Enum(label) => label.hash(state),
            Multirange(m) => {
                m.ranges.len().hash(state);
                for r in &m.ranges {
                    r.hash_into(state);
                }
            }
        }
    }
}

/// Structural equality (same representation, equal value), as used when
/// matching expressions; SQL equality goes through operators instead.
impl PartialEq for Datum {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.cmp_same_type(other) == Ordering::Equal
    }
}

fn variant_rank(d: &Datum) -> u8 {
    use Datum::*;
    match d {
        Null => 255,
        Bool(_) => 1,
        Int2(_) | Int4(_) | Int8(_) | Oid(_) => 2,
        Float4(_) | Float8(_) => 3,
        Numeric(_) => 4,
        Text(_) | Json(_) => 5,
        Bytea(_) => 6,
        Date(_) => 7,
        Time(_) => 8,
        TimeTz(..) => 9,
        Timestamp(_) => 10,
        TimestampTz(_) => 11,
        Interval(_) => 12,
        Uuid(_) => 13,
        Char(_) => 14,
        Array(_) => 15,
        Record(_) => 16,
        Jsonb(_) => 17,
        Net(_) => 40,
        Bits(_) => 41,
        Range(_) => 30,
        Multirange(_) => 31,
        Enum(_) => 50,
    }
}

/// float8_cmp_internal: NaN sorts after everything and equals itself.
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

fn hash_float<H: Hasher>(v: f64, state: &mut H) {
    if v == 0.0 {
        0u64.hash(state)
    } else if v.is_nan() {
        u64::MAX.hash(state)
    } else {
        v.to_bits().hash(state)
    }
}

/// A row key for hash tables: equality and hashing by `group_eq`/`hash_into`.
#[derive(Clone, Debug)]
pub struct GroupKey(pub Vec<Datum>);

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(other.0.iter()).all(|(a, b)| a.group_eq(b))
    }
}
impl Eq for GroupKey {}
impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for d in &self.0 {
            d.hash_into(state);
        }
    }
}

/// A SQL type as PostgreSQL describes a column: the type's OID and its
/// type modifier (`varchar(10)` is (1043, 14); -1 means none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SqlType {
    pub oid: Oid,
    pub typmod: i32,
}

impl SqlType {
    pub const fn new(oid: Oid) -> SqlType {
        SqlType { oid, typmod: -1 }
    }
    pub const fn with_typmod(oid: Oid, typmod: i32) -> SqlType {
        SqlType { oid, typmod }
    }
}
