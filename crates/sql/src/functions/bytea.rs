//! Binary-string functions (varlena.c, encode.c, cryptohashfuncs.c,
//! mbutils.c's convert_*): byte and bit access, position, overlay, trim,
//! encode/decode, SHA-2 digests, and encoding conversion.
//!
//! Tusk's server encoding is UTF8 (as initdb's default here), so the only
//! conversions are UTF8/SQL_ASCII to and from bytes; other real encodings
//! answer 0A000, unknown names PostgreSQL's 22023.

use sha2::Digest;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_i64, arg_str, plain, FnCtx, Registry};

fn bytes(a: &[Datum], i: usize) -> &[u8] {
    match &a[i] {
        Datum::Bytea(b) => b,
        _ => &[],
    }
}

fn out_of_range(n: i64, max: usize) -> PgError {
    PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, format!("index {n} out of valid range, 0..{}", max as i64 - 1))
}

fn get_byte(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, n) = (bytes(a, 0), arg_i64(a, 1));
    let byte = usize::try_from(n).ok().and_then(|i| b.get(i)).ok_or_else(|| out_of_range(n, b.len()))?;
    Ok(Datum::Int4(*byte as i32))
}

fn set_byte(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, n) = (bytes(a, 0), arg_i64(a, 1));
    let mut v = b.to_vec();
    let slot = usize::try_from(n).ok().and_then(|i| v.get_mut(i)).ok_or_else(|| out_of_range(n, b.len()))?;
    // Only the low 8 bits of the new value are kept, as in C.
    *slot = arg_i64(a, 2) as u8;
    Ok(Datum::bytea(v))
}

/// Bit n is bit (n % 8) of byte n / 8, least significant first.
fn get_bit(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, n) = (bytes(a, 0), arg_i64(a, 1));
    let byte = usize::try_from(n / 8).ok().filter(|_| n >= 0).and_then(|i| b.get(i)).ok_or_else(|| out_of_range(n, b.len() * 8))?;
    Ok(Datum::Int4(((byte >> (n % 8)) & 1) as i32))
}

fn set_bit(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, n, bit) = (bytes(a, 0), arg_i64(a, 1), arg_i64(a, 2));
    let mut v = b.to_vec();
    let len = v.len();
    let slot = usize::try_from(n / 8).ok().filter(|_| n >= 0).and_then(|i| v.get_mut(i)).ok_or_else(|| out_of_range(n, len * 8))?;
    if bit != 0 && bit != 1 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "new bit must be 0 or 1"));
    }
    let mask = 1u8 << (n % 8);
    *slot = if bit == 1 { *slot | mask } else { *slot & !mask };
    Ok(Datum::bytea(v))
}

fn byteapos(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (hay, needle) = (bytes(a, 0), bytes(a, 1));
    if needle.is_empty() {
        return Ok(Datum::Int4(1));
    }
    let pos = hay.windows(needle.len()).position(|w| w == needle).map_or(0, |i| i as i32 + 1);
    Ok(Datum::Int4(pos))
}

/// overlay(bytes placing new from start [for count])
fn byteaoverlay(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, new) = (bytes(a, 0), bytes(a, 1));
    let start = arg_i64(a, 2);
    let count = if a.len() > 3 { arg_i64(a, 3) } else { new.len() as i64 };
    if start <= 0 {
        return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed"));
    }
    let head_end = ((start - 1) as usize).min(b.len());
    let tail_start = start.checked_add(count).ok_or_else(|| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
    let tail_start = ((tail_start - 1).max(0) as usize).min(b.len());
    let mut v = b[..head_end].to_vec();
    v.extend_from_slice(new);
    v.extend_from_slice(&b[tail_start..]);
    Ok(Datum::bytea(v))
}

/// btrim(bytes, set): strips bytes found in `set` from both ends.
fn byteatrim(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (b, set) = (bytes(a, 0), bytes(a, 1));
    let start = b.iter().position(|c| !set.contains(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !set.contains(c)).map_or(start, |i| i + 1);
    Ok(Datum::bytea(b[start..end.max(start)].to_vec()))
}

fn sha224(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::bytea(sha2::Sha224::digest(bytes(a, 0)).to_vec()))
}
fn sha256(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::bytea(sha2::Sha256::digest(bytes(a, 0)).to_vec()))
}
fn sha384(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::bytea(sha2::Sha384::digest(bytes(a, 0)).to_vec()))
}
fn sha512(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::bytea(sha2::Sha512::digest(bytes(a, 0)).to_vec()))
}

// ---------------------------------------------------------------- encodings

/// The encodings PostgreSQL knows, normalized as pg_char_to_encoding
/// compares them (case and punctuation ignored).
const KNOWN_ENCODINGS: &[&str] = &[
    "SQLASCII", "UTF8", "UNICODE", "EUCJP", "EUCCN", "EUCKR", "EUCTW", "EUCJIS2004", "MULEINTERNAL", "LATIN1", "LATIN2",
    "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7", "LATIN8", "LATIN9", "LATIN10", "WIN1250", "WIN1251", "WIN1252",
    "WIN1253", "WIN1254", "WIN1255", "WIN1256", "WIN1257", "WIN1258", "WIN866", "WIN874", "KOI8R", "KOI8U", "KOI8",
    "ISO88595", "ISO88596", "ISO88597", "ISO88598", "ISO885915", "ISO88591", "SJIS", "BIG5", "GBK", "UHC", "GB18030",
    "JOHAB", "SHIFTJIS2004", "ALT", "WIN", "TCVN", "TCVN5712", "ABC", "VSCII", "WINDOWS1252", "WINDOWS1251", "MSKANJI",
];

/// Whether `name` is an encoding Tusk converts (UTF8 and SQL_ASCII, which
/// both leave UTF8 bytes as they are); errors for the rest.
fn check_encoding(name: &str, role: &str) -> PgResult<()> {
    let norm: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_uppercase();
    match norm.as_str() {
        "UTF8" | "UNICODE" | "SQLASCII" => Ok(()),
        n if KNOWN_ENCODINGS.contains(&n) => Err(PgError::unsupported(format!("conversion to or from encoding \"{name}\""))),
        _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid {role} encoding name \"{name}\""))),
    }
}

fn utf8_check(b: &[u8]) -> PgResult<&str> {
    std::str::from_utf8(b).map_err(|e| {
        let at = e.valid_up_to();
        let bad = &b[at..(at + e.error_len().unwrap_or(b.len() - at)).min(b.len())];
        let shown: Vec<String> = bad.iter().map(|c| format!("0x{c:02x}")).collect();
        PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
    })
}

fn convert_to(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    check_encoding(arg_str(a, 1), "destination")?;
    Ok(Datum::bytea(arg_str(a, 0).as_bytes().to_vec()))
}

fn convert_from(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    check_encoding(arg_str(a, 1), "source")?;
    Ok(Datum::from_string(utf8_check(bytes(a, 0))?.to_string()))
}

fn convert(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    check_encoding(arg_str(a, 1), "source")?;
    check_encoding(arg_str(a, 2), "destination")?;
    utf8_check(bytes(a, 0))?;
    Ok(a[0].clone())
}

/// length(bytes, encoding): characters in `bytes` read in that encoding.
fn length_in_encoding(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    check_encoding(arg_str(a, 1), "source")?;
    Ok(Datum::Int4(utf8_check(bytes(a, 0))?.chars().count() as i32))
}

// ---------------------------------------------------------------- encode / decode

fn binary_encode(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let b = bytes(a, 0);
    let s = match arg_str(a, 1) {
        "hex" => hex::encode(b),
        "base64" => base64_encode(b),
        "escape" => super::io::bytea_escape(b),
        other => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized encoding: \"{other}\""))),
    };
    Ok(Datum::from_string(s))
}

fn binary_decode(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let s = arg_str(a, 0);
    match arg_str(a, 1) {
        "hex" => hex_decode(s).map(Datum::bytea),
        "base64" => base64_decode(s).map(Datum::bytea),
        "escape" => super::io::parse_bytea(s),
        other => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized encoding: \"{other}\""))),
    }
}

/// encode.c's hex_decode: whitespace between pairs is skipped; a bad digit
/// is reported before an odd count.
fn hex_decode(s: &str) -> PgResult<Vec<u8>> {
    let digit = |c: char| {
        c.to_digit(16).map(|d| d as u8).ok_or_else(|| {
            PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid hexadecimal digit: \"{c}\""))
        })
    };
    let mut out = Vec::with_capacity(s.len() / 2);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        let hi = digit(c)?;
        let lo = match chars.next() {
            Some(c2) => digit(c2)?,
            None => {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid hexadecimal data: odd number of digits"))
            }
        };
        out.push(hi << 4 | lo);
    }
    Ok(out)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 with a newline every 76 output characters, as encode.c writes it.
fn base64_encode(b: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in b.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push('\n');
        }
        let n = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { B64[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { B64[n as usize & 63] as char } else { '=' });
    }
    out
}

fn base64_decode(s: &str) -> PgResult<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buf, mut bits) = (0u32, 0);
    let mut padding = 0;
    for c in s.bytes() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            padding += 1;
            continue;
        }
        if padding > 0 {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "unexpected \"=\" while decoding base64 sequence"));
        }
        let v = B64.iter().position(|&x| x == c).ok_or_else(|| {
            PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid symbol \"{}\" found while decoding base64 sequence", c as char))
        })? as u32;
        buf = buf << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
        }
    }
    if bits >= 6 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid base64 end sequence")
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    Ok(out)
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["byteaGetByte"], get_byte);
    plain(r, &["byteaSetByte"], set_byte);
    plain(r, &["byteaGetBit"], get_bit);
    plain(r, &["byteaSetBit"], set_bit);
    plain(r, &["byteapos"], byteapos);
    plain(r, &["byteaoverlay", "byteaoverlay_no_len"], byteaoverlay);
    plain(r, &["byteatrim"], byteatrim);
    plain(r, &["sha224_bytea"], sha224);
    plain(r, &["sha256_bytea"], sha256);
    plain(r, &["sha384_bytea"], sha384);
    plain(r, &["sha512_bytea"], sha512);
    plain(r, &["pg_convert_to"], convert_to);
    plain(r, &["pg_convert_from"], convert_from);
    plain(r, &["pg_convert"], convert);
    plain(r, &["length_in_encoding"], length_in_encoding);
    plain(r, &["binary_encode"], binary_encode);
    plain(r, &["binary_decode"], binary_decode);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decode_reports_bad_digit_before_odd_length() {
        assert_eq!(hex_decode("0a 0B").unwrap(), vec![0x0a, 0x0b]);
        assert!(hex_decode("xyz").unwrap_err().message.contains("digit: \"x\""));
        assert!(hex_decode("abc").unwrap_err().message.contains("odd number"));
    }

    #[test]
    fn base64_round_trip() {
        let data: Vec<u8> = (0..=255).collect();
        assert_eq!(base64_decode(&base64_encode(&data)).unwrap(), data);
    }
}
