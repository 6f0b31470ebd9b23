//! Memcomparable key encoding: datums become byte strings whose byte order
//! is the btree order of the values, so RocksDB's ordered key space serves as
//! every table's primary index and every secondary index.
//!
//! Layout of the whole key space (first byte):
//!   `D` relation data: `D | storage id (u32 BE) | key`, for table rows
//!       (key = primary key or hidden row id) and index entries
//!       (key = index columns [| primary key for non-unique indexes]).
//!   `C` catalog rows, `M` metadata counters, `L` lock-only keys (never written).
//!
//! Equal values must encode equal (1.0 and 1.00; -0.0 and 0.0; '1 month' and
//! '30 days'), because uniqueness is checked by key equality.

use tusk_types::{Datum, PgResult};

pub const DATA_PREFIX: u8 = b'D';
pub const CATALOG_PREFIX: u8 = b'C';
pub const META_PREFIX: u8 = b'M';
pub const LOCK_PREFIX: u8 = b'L';

/// Marker bytes before every column of a key. Non-NULL sorts before NULL,
/// which gives PostgreSQL's default ASC NULLS LAST.
const NOT_NULL: u8 = 0x01;
const NULL: u8 = 0x02;

/// The prefix all keys of one relation's storage share.
pub fn storage_prefix(storage_id: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(24);
    k.push(DATA_PREFIX);
    k.extend_from_slice(&storage_id.to_be_bytes());
    k
}

/// The smallest key greater than every key starting with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xFF; prefix.len() + 1]
}

/// Appends the memcomparable form of one column value, ascending.
pub fn encode_key_datum(out: &mut Vec<u8>, d: &Datum) -> PgResult<()> {
    if d.is_null() {
        out.push(NULL);
        return Ok(());
    }
    out.push(NOT_NULL);
    match d {
        Datum::Null => unreachable!(),
        Datum::Bool(b) => out.push(*b as u8),
        Datum::Int2(v) => encode_i64(out, *v as i64),
        Datum::Int4(v) => encode_i64(out, *v as i64),
        Datum::Int8(v) => encode_i64(out, *v),
        Datum::Oid(v) => encode_i64(out, *v as i64),
        Datum::Float4(v) => encode_f64(out, *v as f64),
        Datum::Float8(v) => encode_f64(out, *v),
        Datum::Numeric(n) => encode_numeric_text(out, &n.to_string()),
        Datum::Text(s) | Datum::Json(s) => encode_bytes(out, s.as_bytes()),
        Datum::Bytea(b) => encode_bytes(out, b),
        Datum::Date(v) => encode_i64(out, *v as i64),
        Datum::Time(v) | Datum::Timestamp(v) | Datum::TimestampTz(v) => encode_i64(out, *v),
        Datum::TimeTz(t, z) => {
            encode_i64(out, *t + *z as i64 * 1_000_000);
            encode_i64(out, *z as i64);
        }
        Datum::Interval(i) => {
            // interval_cmp compares total spans with 30-day months and 24-hour days.
            let span = (i.months as i128 * 30 + i.days as i128) * 86_400_000_000 + i.micros as i128;
            out.extend_from_slice(&((span as u128) ^ (1u128 << 127)).to_be_bytes());
        }
        Datum::Uuid(u) => out.extend_from_slice(u),
        Datum::Char(c) => out.push(*c),
        Datum::Jsonb(j) => encode_jsonb(out, j, true),
        Datum::Net(n) => n.encode_key(out),
        Datum::Bits(b) => b.encode_key(out),
        Datum::Array(a) => encode_array(out, a)?,
        Datum::Record(fields) => {
            // record_cmp's order: field by field, each with its NULL
            // marker (a NULL field sorts after any value and equals
            // another NULL, as btree record comparison has it), a shorter
            // row first.
            for f in fields.iter() {
                encode_key_datum(out, f)?;
            }
            out.push(0x00);
        }
        Datum::Range(r) => encode_key_range(out, r)?,
        Datum::Enum(label) => {
            let mut key = Vec::new();
            tusk_types::enums::sort_key(*label, &mut key);
            encode_bytes(out, &key);
        }
        Datum::Multirange(m) => {
            // Range by range, each behind a marker byte, so that a shorter
            // multirange sorts first (multirange_cmp).
            for r in &m.ranges {
                out.push(1);
                encode_key_range(out, r)?;
            }
            out.push(0);
        }
    }
    Ok(())
}

/// A range in range_cmp's order: empty first, then by lower bound (an
/// infinite one first, an inclusive one before an exclusive one at the same
/// value), then by upper bound (an exclusive one before an inclusive one,
/// an infinite one last). Ranges are canonical, so equal ranges encode alike.
fn encode_key_range(out: &mut Vec<u8>, r: &tusk_types::range::Range) -> PgResult<()> {
    if r.empty {
        out.push(0);
        return Ok(());
    }
    out.push(1);
    if r.lower.infinite {
        out.push(0);
    } else {
        out.push(1);
        encode_key_datum(out, &r.lower.value)?;
        out.push(if r.lower.inclusive { 0 } else { 1 });
    }
    if r.upper.infinite {
        out.push(2);
    } else {
        out.push(1);
        encode_key_datum(out, &r.upper.value)?;
        out.push(if r.upper.inclusive { 1 } else { 0 });
    }
    Ok(())
}

/// Arrays in array_cmp's order: element by element (each with its own
/// NULL marker), a shorter array before one it is a prefix of (the 0x00
/// terminator sorts below both markers), then the number of dimensions,
/// their lengths and their lower bounds.
fn encode_array(out: &mut Vec<u8>, a: &tusk_types::array::Array) -> PgResult<()> {
    for e in &a.elements {
        encode_key_datum(out, e)?;
    }
    out.push(0x00);
    out.push(a.dims.len() as u8);
    for &(len, _) in &a.dims {
        encode_i64(out, len as i64);
    }
    for &(_, lower) in &a.dims {
        encode_i64(out, lower as i64);
    }
    Ok(())
}

/// Encodes a whole key (several columns) ascending.
pub fn encode_key(out: &mut Vec<u8>, datums: &[Datum]) -> PgResult<()> {
    for d in datums {
        encode_key_datum(out, d)?;
    }
    Ok(())
}

#[inline]
pub fn encode_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&((v as u64) ^ (1u64 << 63)).to_be_bytes());
}

pub fn decode_i64(bytes: &[u8]) -> i64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    (u64::from_be_bytes(b) ^ (1u64 << 63)) as i64
}

/// Floats: flip the sign bit of positives and all bits of negatives; NaN
/// (canonicalized) sorts above +Infinity, -0.0 is folded into 0.0.
fn encode_f64(out: &mut Vec<u8>, v: f64) {
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = if v.is_nan() { f64::NAN.to_bits() & !(1u64 << 63) } else { v.to_bits() };
    let key = if bits & (1u64 << 63) != 0 { !bits } else { bits | (1u64 << 63) };
    out.extend_from_slice(&key.to_be_bytes());
}

/// Numerics from their canonical text: -Infinity < negatives < 0 < positives
/// < Infinity < NaN. A finite value is 0.d1d2... x 100^exponent with base-100
/// digits, trailing zero digits dropped so equal values encode equal.
fn encode_numeric_text(out: &mut Vec<u8>, text: &str) {
    match text {
        "NaN" => return out.push(0x06),
        "Infinity" => return out.push(0x05),
        "-Infinity" => return out.push(0x01),
        _ => {}
    }
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, text),
    };
    let (int_part, frac_part) = magnitude.split_once('.').unwrap_or((magnitude, ""));
    let int_part = int_part.trim_start_matches('0');
    // Pad the integer part to an even number of digits so pairs align on the point.
    let mut digits = String::new();
    if int_part.len() % 2 == 1 {
        digits.push('0');
    }
    digits.push_str(int_part);
    let int_pairs = (digits.len() / 2) as i32;
    digits.push_str(frac_part);
    if digits.len() % 2 == 1 {
        digits.push('0');
    }
    let mut pairs: Vec<u8> = digits.as_bytes().chunks(2).map(|c| (c[0] - b'0') * 10 + (c[1] - b'0')).collect();
    let leading_zero_pairs = pairs.iter().take_while(|&&p| p == 0).count();
    if leading_zero_pairs == pairs.len() {
        return out.push(0x03); // zero, whatever its scale
    }
    pairs.drain(..leading_zero_pairs);
    while pairs.last() == Some(&0) {
        pairs.pop();
    }
    let exponent = int_pairs - leading_zero_pairs as i32;
    let exp_key = (exponent as u32) ^ (1u32 << 31);
    if negative {
        // Larger magnitudes are smaller values: invert exponent and digits; the
        // terminator 0xFF sorts after any inverted digit, so -0.1 > -0.101.
        out.push(0x02);
        out.extend_from_slice(&(!exp_key).to_be_bytes());
        out.extend(pairs.iter().map(|p| 0xFE - *p));
        out.push(0xFF);
    } else {
        out.push(0x04);
        out.extend_from_slice(&exp_key.to_be_bytes());
        out.extend(pairs.iter().map(|p| p + 1));
        out.push(0x00);
    }
}

/// jsonb in compareJsonbContainers' order: containers by kind, then size,
/// then members in storage order; scalars by kind (null < string < number
/// < boolean), then value. A top-level scalar is a one-element "raw scalar"
/// array, less than a one-element array.
fn encode_jsonb(out: &mut Vec<u8>, j: &tusk_types::jsonb::Jsonb, top: bool) {
    use tusk_types::jsonb::Jsonb;
    if top && j.is_scalar() {
        out.push(4);
        out.extend_from_slice(&1u32.to_be_bytes());
        out.push(0);
        return encode_jsonb(out, j, false);
    }
    match j {
        Jsonb::Null => out.push(0),
        Jsonb::String(s) => {
            out.push(1);
            encode_bytes(out, s.as_bytes());
        }
        Jsonb::Number(n) => {
            out.push(2);
            encode_numeric_text(out, &n.to_string());
        }
        Jsonb::Bool(b) => out.extend_from_slice(&[3, *b as u8]),
        Jsonb::Array(items) => {
            out.push(4);
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            out.push(1);
            for v in items {
                encode_jsonb(out, v, false);
            }
        }
        Jsonb::Object(members) => {
            out.push(5);
            out.extend_from_slice(&(members.len() as u32).to_be_bytes());
            for (k, v) in members {
                encode_bytes(out, k.as_bytes());
                encode_jsonb(out, v, false);
            }
        }
    }
}

/// Byte strings: 0x00 is escaped as 0x00 0xFF and the string ends with
/// 0x00 0x01, so a prefix sorts before its extensions.
fn encode_bytes(out: &mut Vec<u8>, b: &[u8]) {
    for &byte in b {
        if byte == 0 {
            out.push(0);
            out.push(0xFF);
        } else {
            out.push(byte);
        }
    }
    out.push(0);
    out.push(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(d: Datum) -> Vec<u8> {
        let mut v = Vec::new();
        encode_key_datum(&mut v, &d).unwrap();
        v
    }

    #[test]
    fn integers_order_across_sign() {
        let vals = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in vals.windows(2) {
            assert!(key(Datum::Int8(w[0])) < key(Datum::Int8(w[1])));
        }
        assert_eq!(key(Datum::Int4(5)), key(Datum::Int8(5)));
    }

    #[test]
    fn floats_order_with_nan_last() {
        let vals = [f64::NEG_INFINITY, -2.5, -0.0, 1e-300, 3.0, f64::INFINITY, f64::NAN];
        for w in vals.windows(2) {
            assert!(key(Datum::Float8(w[0])) <= key(Datum::Float8(w[1])), "{} {}", w[0], w[1]);
        }
        assert_eq!(key(Datum::Float8(-0.0)), key(Datum::Float8(0.0)));
    }

    #[test]
    fn text_prefix_sorts_first_and_null_last() {
        assert!(key(Datum::text("ab")) < key(Datum::text("ab\u{1}")));
        assert!(key(Datum::text("ab")) < key(Datum::text("b")));
        assert!(key(Datum::text("zzz")) < key(Datum::Null));
        assert!(key(Datum::bytea(vec![0])) > key(Datum::bytea(vec![])));
    }
}
