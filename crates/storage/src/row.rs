//! Row encoding: the value stored under a row key.
//!
//! A row is the sequence of its attributes in attribute-number order, each a
//! tag byte and a payload. Tags make rows self-describing, so a row written
//! before `ALTER TABLE ... ADD COLUMN` simply has fewer attributes; the
//! reader fills the missing ones from the column's default (PostgreSQL's
//! "missing value"). Dropped columns keep their slot, as in PostgreSQL.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::datetime::Interval;
use tusk_types::numeric::Numeric;
use tusk_types::range::{Bound, Multirange, Range};
use tusk_types::{Datum, PgError, PgResult};

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT2: u8 = 3;
const T_INT4: u8 = 4;
const T_INT8: u8 = 5;
const T_FLOAT4: u8 = 6;
const T_FLOAT8: u8 = 7;
const T_NUMERIC: u8 = 8;
const T_TEXT: u8 = 9;
const T_BYTEA: u8 = 10;
const T_DATE: u8 = 11;
const T_TIME: u8 = 12;
const T_TIMETZ: u8 = 13;
const T_TIMESTAMP: u8 = 14;
const T_TIMESTAMPTZ: u8 = 15;
const T_INTERVAL: u8 = 16;
const T_UUID: u8 = 17;
const T_OID: u8 = 18;
const T_CHAR: u8 = 19;
const T_JSON: u8 = 20;
const T_ARRAY: u8 = 21;
const T_RECORD: u8 = 22;
/// jsonb, as the text jsonb_out prints (parsed again when read).
const T_JSONB: u8 = 23;
// The network and bit string types (tags far from the others' so that
// types added beside them on other branches do not collide).
const T_NET: u8 = 40;
const T_BITS: u8 = 41;
// Ranges and multiranges (moved off 23/24, which jsonb took).
const T_RANGE: u8 = 30;
const T_MULTIRANGE: u8 = 31;
/// An enum value: its label's pg_enum OID (never its position, which
/// ALTER TYPE ... ADD VALUE may renumber).
const T_ENUM: u8 = 50;

/// Format version byte leading every row, so the encoding can evolve.
const ROW_FORMAT_V1: u8 = 1;

pub fn encode_row(datums: &[Datum]) -> Vec<u8> {
    // Sized for the row up front: growing it for its first text value
    // (a reallocation and a copy) showed in bulk loads.
    let texts: usize = datums
        .iter()
        .map(|d| match d {
            Datum::Text(s) | Datum::Json(s) => s.len(),
            Datum::Bytea(b) => b.len(),
            _ => 0,
        })
        .sum();
    let mut out = Vec::with_capacity(16 + datums.len() * 11 + texts);
    out.push(ROW_FORMAT_V1);
    encode_varint(&mut out, datums.len() as u64);
    for d in datums {
        encode_datum(&mut out, d);
    }
    out
}

/// Decodes a row; `natts` is the relation's current attribute count: rows
/// written before columns were added come back shorter and the caller pads.
pub fn decode_row(bytes: &[u8]) -> PgResult<Vec<Datum>> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let version = r.u8()?;
    if version != ROW_FORMAT_V1 {
        return Err(corrupt("unknown row format version"));
    }
    let n = r.varint()? as usize;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(r.datum()?);
    }
    Ok(out)
}

/// Decodes only the attributes `wanted` marks (by position; positions
/// past its end are not wanted); the others come back NULL without being
/// decoded (no allocation for a text a query never reads).
pub fn decode_row_masked(bytes: &[u8], wanted: &[bool]) -> PgResult<Vec<Datum>> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let version = r.u8()?;
    if version != ROW_FORMAT_V1 {
        return Err(corrupt("unknown row format version"));
    }
    let n = r.varint()? as usize;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if wanted.get(i).copied().unwrap_or(false) {
            out.push(r.datum()?);
        } else {
            r.skip_datum()?;
            out.push(Datum::Null);
        }
    }
    Ok(out)
}

fn encode_datum(out: &mut Vec<u8>, d: &Datum) {
    match d {
        Datum::Null => out.push(T_NULL),
        Datum::Bool(false) => out.push(T_FALSE),
        Datum::Bool(true) => out.push(T_TRUE),
        Datum::Int2(v) => {
            out.push(T_INT2);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Int4(v) => {
            out.push(T_INT4);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Int8(v) => {
            out.push(T_INT8);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Float4(v) => {
            out.push(T_FLOAT4);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Float8(v) => {
            out.push(T_FLOAT8);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Numeric(n) => {
            out.push(T_NUMERIC);
            let b = n.to_binary();
            encode_varint(out, b.len() as u64);
            out.extend_from_slice(&b);
        }
        Datum::Text(s) => {
            out.push(T_TEXT);
            encode_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Datum::Json(s) => {
            out.push(T_JSON);
            encode_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Datum::Jsonb(j) => {
            out.push(T_JSONB);
            let text = j.to_string();
            encode_varint(out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
        Datum::Bytea(b) => {
            out.push(T_BYTEA);
            encode_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        Datum::Date(v) => {
            out.push(T_DATE);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Time(v) => {
            out.push(T_TIME);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::TimeTz(t, z) => {
            out.push(T_TIMETZ);
            out.extend_from_slice(&t.to_le_bytes());
            out.extend_from_slice(&z.to_le_bytes());
        }
        Datum::Timestamp(v) => {
            out.push(T_TIMESTAMP);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::TimestampTz(v) => {
            out.push(T_TIMESTAMPTZ);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Interval(i) => {
            out.push(T_INTERVAL);
            out.extend_from_slice(&i.months.to_le_bytes());
            out.extend_from_slice(&i.days.to_le_bytes());
            out.extend_from_slice(&i.micros.to_le_bytes());
        }
        Datum::Uuid(u) => {
            out.push(T_UUID);
            out.extend_from_slice(u);
        }
        Datum::Oid(v) => {
            out.push(T_OID);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Datum::Char(c) => {
            out.push(T_CHAR);
            out.push(*c);
        }
        Datum::Array(a) => {
            out.push(T_ARRAY);
            out.extend_from_slice(&a.element_type.to_le_bytes());
            encode_varint(out, a.dims.len() as u64);
            for (len, lower) in &a.dims {
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&lower.to_le_bytes());
            }
            encode_varint(out, a.elements.len() as u64);
            for e in &a.elements {
                encode_datum(out, e);
            }
        }
        Datum::Net(n) => {
            out.push(T_NET);
            let b = tusk_types::net::encode_stored(n);
            encode_varint(out, b.len() as u64);
            out.extend_from_slice(&b);
        }
        Datum::Bits(b) => {
            out.push(T_BITS);
            let v = b.to_binary();
            encode_varint(out, v.len() as u64);
            out.extend_from_slice(&v);
        }
        Datum::Record(fields) => {
            out.push(T_RECORD);
            encode_varint(out, fields.len() as u64);
            for f in fields.iter() {
                encode_datum(out, f);
            }
        }
        Datum::Range(r) => {
            out.push(T_RANGE);
            out.extend_from_slice(&r.type_oid.to_le_bytes());
            encode_range_body(out, r);
        }
        Datum::Enum(label) => {
            out.push(T_ENUM);
            out.extend_from_slice(&label.to_le_bytes());
        }
        Datum::Multirange(m) => {
            out.push(T_MULTIRANGE);
            out.extend_from_slice(&m.type_oid.to_le_bytes());
            encode_varint(out, m.ranges.len() as u64);
            for r in &m.ranges {
                out.extend_from_slice(&r.type_oid.to_le_bytes());
                encode_range_body(out, r);
            }
        }
    }
}

/// A range as its flag byte and its finite bounds (range_send's layout,
/// with the bounds in row encoding).
fn encode_range_body(out: &mut Vec<u8>, r: &Range) {
    out.push(r.flags());
    if !r.empty {
        for b in [&r.lower, &r.upper] {
            if !b.infinite {
                encode_datum(out, &b.value);
            }
        }
    }
}

fn encode_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn corrupt(what: &str) -> PgError {
    PgError::new(tusk_types::sqlstate::DATA_CORRUPTED, format!("invalid stored row: {what}"))
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if self.pos + n > self.buf.len() {
            return Err(corrupt("truncated"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> PgResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn arr<const N: usize>(&mut self) -> PgResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn varint(&mut self) -> PgResult<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.u8()?;
            v |= ((b & 0x7F) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err(corrupt("bad varint"));
            }
        }
    }
    fn bytes(&mut self) -> PgResult<&'a [u8]> {
        let n = self.varint()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> PgResult<Arc<str>> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map(Arc::from).map_err(|_| corrupt("invalid UTF-8"))
    }
    /// Moves past one encoded datum without building it.
    fn skip_datum(&mut self) -> PgResult<()> {
        let fixed = match self.u8()? {
            T_NULL | T_FALSE | T_TRUE => 0,
            T_INT2 => 2,
            T_INT4 | T_FLOAT4 | T_DATE | T_OID | T_ENUM => 4,
            T_INT8 | T_FLOAT8 | T_TIME | T_TIMESTAMP | T_TIMESTAMPTZ => 8,
            T_TIMETZ => 12,
            T_INTERVAL | T_UUID => 16,
            T_CHAR => 1,
            T_NUMERIC | T_TEXT | T_JSON | T_JSONB | T_BYTEA | T_NET | T_BITS => {
                self.bytes()?;
                0
            }
            T_ARRAY => {
                self.take(4)?;
                let ndims = self.varint()? as usize;
                self.take(ndims.checked_mul(8).ok_or_else(|| corrupt("bad array"))?)?;
                let n = self.varint()?;
                for _ in 0..n {
                    self.skip_datum()?;
                }
                0
            }
            T_RECORD => {
                let n = self.varint()?;
                for _ in 0..n {
                    self.skip_datum()?;
                }
                0
            }
            T_RANGE => {
                self.take(4)?;
                self.range_body(0)?;
                0
            }
            T_MULTIRANGE => {
                self.take(4)?;
                let n = self.varint()?;
                for _ in 0..n {
                    self.take(4)?;
                    self.range_body(0)?;
                }
                0
            }
            _ => return Err(corrupt("unknown tag")),
        };
        self.take(fixed)?;
        Ok(())
    }

    fn datum(&mut self) -> PgResult<Datum> {
        Ok(match self.u8()? {
            T_NULL => Datum::Null,
            T_FALSE => Datum::Bool(false),
            T_TRUE => Datum::Bool(true),
            T_INT2 => Datum::Int2(i16::from_le_bytes(self.arr()?)),
            T_INT4 => Datum::Int4(i32::from_le_bytes(self.arr()?)),
            T_INT8 => Datum::Int8(i64::from_le_bytes(self.arr()?)),
            T_FLOAT4 => Datum::Float4(f32::from_le_bytes(self.arr()?)),
            T_FLOAT8 => Datum::Float8(f64::from_le_bytes(self.arr()?)),
            T_NUMERIC => Datum::Numeric(Arc::new(Numeric::from_binary(self.bytes()?)?)),
            T_TEXT => Datum::Text(self.str()?),
            T_JSON => Datum::Json(self.str()?),
            T_JSONB => Datum::Jsonb(Arc::new(tusk_types::jsonb::Jsonb::parse(&self.str()?).map_err(|_| corrupt("invalid jsonb"))?)),
            T_BYTEA => Datum::Bytea(Arc::from(self.bytes()?)),
            T_DATE => Datum::Date(i32::from_le_bytes(self.arr()?)),
            T_TIME => Datum::Time(i64::from_le_bytes(self.arr()?)),
            T_TIMETZ => Datum::TimeTz(i64::from_le_bytes(self.arr()?), i32::from_le_bytes(self.arr()?)),
            T_TIMESTAMP => Datum::Timestamp(i64::from_le_bytes(self.arr()?)),
            T_TIMESTAMPTZ => Datum::TimestampTz(i64::from_le_bytes(self.arr()?)),
            T_INTERVAL => Datum::Interval(Interval {
                months: i32::from_le_bytes(self.arr()?),
                days: i32::from_le_bytes(self.arr()?),
                micros: i64::from_le_bytes(self.arr()?),
            }),
            T_UUID => Datum::Uuid(self.arr()?),
            T_NET => Datum::Net(tusk_types::net::decode_stored(self.bytes()?).ok_or_else(|| corrupt("bad network address"))?),
            T_BITS => Datum::Bits(Arc::new(tusk_types::bits::BitString::from_binary(self.bytes()?).map_err(|_| corrupt("bad bit string"))?)),
            T_OID => Datum::Oid(u32::from_le_bytes(self.arr()?)),
            T_ENUM => Datum::Enum(u32::from_le_bytes(self.arr()?)),
            T_CHAR => Datum::Char(self.u8()?),
            T_ARRAY => {
                let element_type = u32::from_le_bytes(self.arr()?);
                let ndims = self.varint()? as usize;
                let mut dims = Vec::with_capacity(ndims);
                for _ in 0..ndims {
                    dims.push((i32::from_le_bytes(self.arr()?), i32::from_le_bytes(self.arr()?)));
                }
                let n = self.varint()? as usize;
                let mut elements = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    elements.push(self.datum()?);
                }
                Datum::Array(Arc::new(Array { element_type, dims, elements }))
            }
            T_RECORD => {
                let n = self.varint()? as usize;
                let mut fields = Vec::with_capacity(n.min(1 << 12));
                for _ in 0..n {
                    fields.push(self.datum()?);
                }
                Datum::Record(Arc::new(fields))
            }
            T_RANGE => {
                let type_oid = u32::from_le_bytes(self.arr()?);
                Datum::Range(Arc::new(self.range_body(type_oid)?))
            }
            T_MULTIRANGE => {
                let type_oid = u32::from_le_bytes(self.arr()?);
                let n = self.varint()? as usize;
                let mut ranges = Vec::with_capacity(n.min(1 << 12));
                for _ in 0..n {
                    let range_oid = u32::from_le_bytes(self.arr()?);
                    ranges.push(self.range_body(range_oid)?);
                }
                Datum::Multirange(Arc::new(Multirange { type_oid, ranges }))
            }
            _ => return Err(corrupt("unknown tag")),
        })
    }

    fn range_body(&mut self, type_oid: u32) -> PgResult<Range> {
        use tusk_types::range::{RANGE_EMPTY, RANGE_LB_INC, RANGE_LB_INF, RANGE_UB_INC, RANGE_UB_INF};
        let flags = self.u8()?;
        if flags & RANGE_EMPTY != 0 {
            return Ok(Range::empty(type_oid));
        }
        let mut bound = |inf: u8, inc: u8| -> PgResult<Bound> {
            Ok(if flags & inf != 0 { Bound::infinite() } else { Bound::finite(self.datum()?, flags & inc != 0) })
        };
        let lower = bound(RANGE_LB_INF, RANGE_LB_INC)?;
        let upper = bound(RANGE_UB_INF, RANGE_UB_INC)?;
        Ok(Range { type_oid, empty: false, lower, upper })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let row = vec![
            Datum::Null,
            Datum::Bool(true),
            Datum::Int4(-7),
            Datum::Int8(1 << 40),
            Datum::Float8(2.5),
            Datum::text("héllo"),
            Datum::bytea(vec![0, 1, 255]),
            Datum::Date(-3),
            Datum::Interval(Interval { months: 1, days: 2, micros: 3 }),
            Datum::Uuid([7; 16]),
            Datum::Net(tusk_types::net::NetAddr::Inet(tusk_types::net::Inet::parse("10:23::f1/64", false).unwrap())),
            Datum::Net(tusk_types::net::NetAddr::MacAddr8([1, 2, 3, 4, 5, 6, 7, 8])),
            Datum::Bits(Arc::new(tusk_types::bits::BitString::parse("10110").unwrap())),
        ];
        let back = decode_row(&encode_row(&row)).unwrap();
        assert_eq!(back.len(), row.len());
        for (a, b) in row.iter().zip(back.iter()) {
            assert!(a.group_eq(b), "{a:?} != {b:?}");
        }
    }

    #[test]
    fn masked_decoding_skips_what_is_not_wanted() {
        let row = vec![
            Datum::text("skipped"),
            Datum::Int4(5),
            Datum::Array(Arc::new(Array::from_vec(25, vec![Datum::text("a"), Datum::Null]))),
            Datum::Interval(Interval { months: 1, days: 2, micros: 3 }),
            Datum::text("kept"),
        ];
        let back = decode_row_masked(&encode_row(&row), &[false, true, false, false, true]).unwrap();
        assert_eq!(back.len(), 5);
        assert!(back[0].is_null() && back[2].is_null() && back[3].is_null());
        assert!(back[1].group_eq(&Datum::Int4(5)) && back[4].group_eq(&Datum::text("kept")));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode_row(&[1, 5, 9]).is_err());
        assert!(decode_row(&[]).is_err());
        assert!(decode_row(&[1, 1, 200]).is_err());
    }
}
