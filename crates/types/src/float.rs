//! real and double precision: text input and output exactly as PostgreSQL
//! 15's float4in/float8in and float4out/float8out.
//!
//! Output depends on extra_float_digits: above zero (the default, 1) it is
//! the shortest text that reads back as the same value (Ryu), shown in
//! fixed notation when the decimal exponent is in [-4, DIG) and in
//! scientific notation otherwise; at zero or below it is C's `%.*g` with
//! DIG + extra_float_digits significant digits.

use crate::error::{sqlstate, PgError, PgResult};

const DBL_DIG: i32 = 15;
const FLT_DIG: i32 = 6;

pub fn format_float8(v: f64, extra_float_digits: i32) -> String {
    if let Some(s) = special(v) {
        return s.to_string();
    }
    if extra_float_digits > 0 {
        let mut buf = ryu::Buffer::new();
        shortest(buf.format_finite(v), DBL_DIG)
    } else {
        format_g(v, (DBL_DIG + extra_float_digits).max(1))
    }
}

pub fn format_float4(v: f32, extra_float_digits: i32) -> String {
    if let Some(s) = special(v as f64) {
        return s.to_string();
    }
    if extra_float_digits > 0 {
        let mut buf = ryu::Buffer::new();
        shortest(buf.format_finite(v), FLT_DIG)
    } else {
        format_g(v as f64, (FLT_DIG + extra_float_digits).max(1))
    }
}

fn special(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("Infinity")
    } else if v == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// Splits a decimal rendering ("-1.25e-7", "0.001", "120.0") into sign,
/// significant digits (no leading/trailing zeros) and the decimal exponent
/// of the first digit.
fn decompose(s: &str) -> (bool, String, i32) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (s, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int_part}{frac_part}");
    let leading = all.bytes().take_while(|&b| b == b'0').count();
    let digits = all[leading..].trim_end_matches('0').to_string();
    if digits.is_empty() {
        return (neg, "0".to_string(), 0);
    }
    let exponent = int_part.len() as i32 - 1 - leading as i32 + exp;
    (neg, digits, exponent)
}

/// Lays out digits d1d2d3... with the first digit at 10^exponent.
fn layout(neg: bool, digits: &str, exponent: i32, scientific: bool) -> String {
    let mut out = String::with_capacity(digits.len() + 8);
    if neg {
        out.push('-');
    }
    if scientific {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let e = exponent.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else if exponent < 0 {
        out.push_str("0.");
        for _ in 0..(-exponent - 1) {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let int_len = exponent as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

fn shortest(ryu_text: &str, dig: i32) -> String {
    let (neg, digits, exponent) = decompose(ryu_text);
    if digits == "0" {
        return if neg { "-0".into() } else { "0".into() };
    }
    layout(neg, &digits, exponent, !(-4..dig).contains(&exponent))
}

/// C's `%.{precision}g`.
fn format_g(v: f64, precision: i32) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{:.*e}", (precision - 1) as usize, v);
    let (neg, digits, exponent) = decompose(&sci);
    layout(neg, &digits, exponent, exponent < -4 || exponent >= precision)
}

/// float8in: accepts what strtod accepts plus PostgreSQL's spellings of the
/// special values; surrounding whitespace is allowed.
pub fn parse_float8(s: &str) -> PgResult<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    match parse_special(t) {
        Some(v) => Ok(v),
        None => {
            let v: f64 = parse_decimal(t).ok_or_else(|| invalid("double precision", s))?;
            if v.is_infinite() {
                return Err(out_of_range(s, "double precision"));
            }
            if v == 0.0 && has_nonzero_digit(t) {
                return Err(out_of_range(s, "double precision"));
            }
            Ok(v)
        }
    }
}

pub fn parse_float4(s: &str) -> PgResult<f32> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    match parse_special(t) {
        Some(v) => Ok(v as f32),
        None => {
            let v: f64 = parse_decimal(t).ok_or_else(|| invalid("real", s))?;
            let f = v as f32;
            if f.is_infinite() || (f == 0.0 && has_nonzero_digit(t)) {
                return Err(out_of_range(s, "real"));
            }
            Ok(f)
        }
    }
}

fn parse_special(t: &str) -> Option<f64> {
    let lower = t.to_ascii_lowercase();
    Some(match lower.as_str() {
        "nan" | "+nan" | "-nan" => f64::NAN,
        "infinity" | "+infinity" | "inf" | "+inf" => f64::INFINITY,
        "-infinity" | "-inf" => f64::NEG_INFINITY,
        _ => return None,
    })
}

/// A strict decimal literal: [sign] digits [. digits] [e [sign] digits].
fn parse_decimal(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == start {
            return None;
        }
        i = j;
    }
    if i != b.len() {
        return None;
    }
    t.parse().ok()
}

fn has_nonzero_digit(t: &str) -> bool {
    let mantissa = t.split(['e', 'E']).next().unwrap_or("");
    mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

fn invalid(typename: &str, s: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type {typename}: \"{s}\""))
}

fn out_of_range(s: &str, typename: &str) -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("\"{s}\" is out of range for type {typename}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings recorded from PostgreSQL 15 (SELECT x::float8 / ::float4).
    #[test]
    fn shortest_output_matches_postgres() {
        assert_eq!(format_float8(1e15, 1), "1e+15");
        assert_eq!(format_float8(123456789012345.0, 1), "123456789012345");
        assert_eq!(format_float8(1234567890123456.0, 1), "1.234567890123456e+15");
        assert_eq!(format_float8(0.0001, 1), "0.0001");
        assert_eq!(format_float8(0.00001, 1), "1e-05");
        assert_eq!(format_float8(1.5e-7, 1), "1.5e-07");
        assert_eq!(format_float8(f64::NAN, 1), "NaN");
        assert_eq!(format_float8(f64::NEG_INFINITY, 1), "-Infinity");
        assert_eq!(format_float8(-0.0, 1), "-0");
        assert_eq!(format_float8(1e100, 1), "1e+100");
        assert_eq!(format_float8(1.0, 1), "1");
        assert_eq!(format_float8(100.0, 1), "100");
        assert_eq!(format_float4(3.14, 1), "3.14");
        assert_eq!(format_float4(1e20, 1), "1e+20");
        assert_eq!(format_float4(0.1, 1), "0.1");
        assert_eq!(format_float4(1e-45, 1), "1e-45");
        assert_eq!(format_float4(123456.7, 1), "123456.7");
        assert_eq!(format_float4(1234567.0, 1), "1.234567e+06");
        assert_eq!(format_float4(12345678.0, 1), "1.2345678e+07");
    }

    // SET extra_float_digits = 0 on PostgreSQL 15.
    #[test]
    fn g_output_matches_postgres() {
        assert_eq!(format_float8(0.1, 0), "0.1");
        assert_eq!(format_float8(1e15, 0), "1e+15");
        assert_eq!(format_float8(1.0 / 3.0, 0), "0.333333333333333");
        assert_eq!(format_float8(1e-5, 0), "1e-05");
        assert_eq!(format_float4(100000.0, 0), "100000");
        assert_eq!(format_float4(1e6, 0), "1e+06");
        assert_eq!(format_float4(0.1, 0), "0.1");
        assert_eq!(format_float8(123456789.0, 0), "123456789");
    }

    #[test]
    fn input() {
        assert_eq!(parse_float8(" 1.5 ").unwrap(), 1.5);
        assert!(parse_float8("-inf").unwrap().is_infinite());
        assert_eq!(parse_float8("abc").unwrap_err().message, "invalid input syntax for type double precision: \"abc\"");
        assert_eq!(parse_float8("1e400").unwrap_err().message, "\"1e400\" is out of range for type double precision");
        assert_eq!(parse_float4("1e40").unwrap_err().code, sqlstate::NUMERIC_VALUE_OUT_OF_RANGE);
        assert!(parse_float8("1e").is_err());
        assert_eq!(parse_float8(".5").unwrap(), 0.5);
    }
}
