//! Bit strings: the `bit(n)` and `bit varying(n)` types (utils/adt/varbit.c).
//! One representation serves both; the length checks of their type
//! modifiers differ and live with the casts.

use std::cmp::Ordering;

use crate::error::{sqlstate, PgError, PgResult};

/// A string of `len` bits, packed most significant bit first; the bits
/// past `len` in the last byte are always zero (so bytewise comparison
/// and hashing see only the value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BitString {
    pub len: usize,
    pub bytes: Vec<u8>,
}

fn byte_len(bits: usize) -> usize {
    bits.div_ceil(8)
}

impl BitString {
    pub fn zeros(len: usize) -> BitString {
        BitString { len, bytes: vec![0; byte_len(len)] }
    }

    pub fn from_bools(bits: impl IntoIterator<Item = bool>) -> BitString {
        let mut out = BitString::zeros(0);
        for b in bits {
            out.push(b);
        }
        out
    }

    pub fn push(&mut self, bit: bool) {
        if self.len % 8 == 0 {
            self.bytes.push(0);
        }
        if bit {
            self.bytes[self.len / 8] |= 0x80 >> (self.len % 8);
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> bool {
        self.bytes[i / 8] & (0x80 >> (i % 8)) != 0
    }

    pub fn set(&mut self, i: usize, bit: bool) {
        if bit {
            self.bytes[i / 8] |= 0x80 >> (i % 8);
        } else {
            self.bytes[i / 8] &= !(0x80 >> (i % 8));
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Clears the padding bits of the last byte.
    fn clear_pad(&mut self) {
        let rem = self.len % 8;
        if rem != 0 {
            if let Some(last) = self.bytes.last_mut() {
                *last &= 0xffu8 << (8 - rem);
            }
        }
    }

    /// bit_in / varbit_in without the type modifier: binary digits,
    /// optionally after a 'b', or hex digits after an 'x' (the forms
    /// B'...' and X'...' literals arrive in).
    pub fn parse(s: &str) -> PgResult<BitString> {
        let (hex, digits) = match s.as_bytes().first() {
            Some(b'b' | b'B') => (false, &s[1..]),
            Some(b'x' | b'X') => (true, &s[1..]),
            _ => (false, s),
        };
        let mut out = BitString::zeros(0);
        for (i, c) in digits.char_indices() {
            if hex {
                let v = c.to_digit(16).ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("\"{}\" is not a valid hexadecimal digit", &digits[i..i + c.len_utf8()]))
                })?;
                for k in (0..4).rev() {
                    out.push(v >> k & 1 == 1);
                }
            } else {
                match c {
                    '0' => out.push(false),
                    '1' => out.push(true),
                    _ => {
                        return Err(PgError::new(
                            sqlstate::INVALID_TEXT_REPRESENTATION,
                            format!("\"{}\" is not a valid binary digit", &digits[i..i + c.len_utf8()]),
                        ))
                    }
                }
            }
        }
        Ok(out)
    }

    pub fn format(&self) -> String {
        self.iter().map(|b| if b { '1' } else { '0' }).collect()
    }

    /// bit_send: the length in bits, then the bytes.
    pub fn to_binary(&self) -> Vec<u8> {
        let mut v = (self.len as i32).to_be_bytes().to_vec();
        v.extend_from_slice(&self.bytes);
        v
    }

    /// bit_recv / varbit_recv.
    pub fn from_binary(b: &[u8]) -> PgResult<BitString> {
        if b.len() < 4 {
            return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"));
        }
        let len = i32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
        if len < 0 || len as i64 > MAX_BITS as i64 {
            return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "invalid length in external bit string"));
        }
        let n = byte_len(len as usize);
        if b.len() - 4 < n {
            return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"));
        }
        if b.len() - 4 > n {
            return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"));
        }
        let mut out = BitString { len: len as usize, bytes: b[4..].to_vec() };
        out.clear_pad();
        Ok(out)
    }

    /// bit_cmp: bytewise over the shorter, then the shorter string first.
    pub fn cmp(&self, other: &BitString) -> Ordering {
        let n = self.bytes.len().min(other.bytes.len());
        self.bytes[..n].cmp(&other.bytes[..n]).then_with(|| self.len.cmp(&other.len))
    }

    /// A memcomparable key: the bytes (escaped, terminated), then the length.
    pub fn encode_key(&self, out: &mut Vec<u8>) {
        for &b in &self.bytes {
            if b == 0 {
                out.extend_from_slice(&[0, 0xff]);
            } else {
                out.push(b);
            }
        }
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(self.len as u32).to_be_bytes());
    }

    /// bitand, bitor, bitxor: both operands of one length.
    pub fn bitwise(&self, other: &BitString, op: &str, f: impl Fn(u8, u8) -> u8) -> PgResult<BitString> {
        if self.len != other.len {
            return Err(PgError::new(sqlstate::STRING_DATA_LENGTH_MISMATCH, format!("cannot {op} bit strings of different sizes")));
        }
        Ok(BitString { len: self.len, bytes: self.bytes.iter().zip(&other.bytes).map(|(a, b)| f(*a, *b)).collect() })
    }

    pub fn not(&self) -> BitString {
        let mut out = BitString { len: self.len, bytes: self.bytes.iter().map(|b| !b).collect() };
        out.clear_pad();
        out
    }

    /// bitshiftleft (a negative count shifts right): the length stays.
    pub fn shift_left(&self, n: i64) -> BitString {
        let mut out = BitString::zeros(self.len);
        for i in 0..self.len {
            let from = i as i64 + n;
            if from >= 0 && (from as usize) < self.len && self.get(from as usize) {
                out.set(i, true);
            }
        }
        out
    }

    pub fn concat(&self, other: &BitString) -> BitString {
        let mut out = self.clone();
        for b in other.iter() {
            out.push(b);
        }
        out
    }

    /// Bits `from..to` (0-based, clamped).
    pub fn slice(&self, from: usize, to: usize) -> BitString {
        BitString::from_bools((from..to.min(self.len)).map(|i| self.get(i)))
    }

    /// The bit(n) length coercion of an explicit cast: cut, or pad with zeros.
    pub fn resized(&self, len: usize) -> BitString {
        let mut out = self.slice(0, len);
        while out.len < len {
            out.push(false);
        }
        out
    }

    /// bitposition: the 1-based position of `sub`, 0 if absent.
    pub fn position(&self, sub: &BitString) -> i32 {
        if self.len == 0 || sub.len > self.len {
            return 0;
        }
        if sub.len == 0 {
            return 1;
        }
        (0..=self.len - sub.len).find(|&i| (0..sub.len).all(|k| self.get(i + k) == sub.get(k))).map(|i| i as i32 + 1).unwrap_or(0)
    }

    pub fn count_ones(&self) -> i64 {
        self.bytes.iter().map(|b| b.count_ones() as i64).sum()
    }

    /// bitfromint8: the `len` low bits of `v`, sign-extended past 64.
    pub fn from_int(v: i64, len: usize) -> BitString {
        BitString::from_bools((0..len).map(|i| {
            let shift = len - 1 - i;
            if shift >= 64 {
                v < 0
            } else {
                (v >> shift) & 1 == 1
            }
        }))
    }

    /// bittoint4 / bittoint8: the bits as an unsigned number, wrapped.
    pub fn to_u64(&self) -> u64 {
        self.iter().fold(0u64, |acc, b| (acc << 1) | b as u64)
    }
}

/// VARBITMAXLEN: the most bits a bit string may hold.
pub const MAX_BITS: usize = 0x7fff_ffff - 7;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_order() {
        assert_eq!(BitString::parse("x1F").unwrap().format(), "00011111");
        assert_eq!(BitString::parse("b101").unwrap().format(), "101");
        assert!(BitString::parse("102").is_err());
        let a = BitString::parse("10").unwrap();
        let b = BitString::parse("100").unwrap();
        assert_eq!(a.cmp(&b), Ordering::Less);
        let (mut ka, mut kb) = (vec![], vec![]);
        a.encode_key(&mut ka);
        b.encode_key(&mut kb);
        assert!(ka < kb);
        assert_eq!(BitString::from_int(-1, 40).format(), "1".repeat(40));
        assert_eq!(BitString::from_int(5, 4).format(), "0101");
        assert_eq!(a.shift_left(1).format(), "00");
        assert_eq!(b.shift_left(-1).format(), "010");
    }
}
