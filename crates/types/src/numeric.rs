//! `numeric`: PostgreSQL's arbitrary-precision decimal type, with the
//! semantics of PostgreSQL 15's `src/backend/utils/adt/numeric.c`.
//!
//! A finite value is an exact decimal: an unscaled integer and a *display
//! scale* (`dscale`, the number of digits after the point). The display scale
//! is part of the value as users see it (`1.50` prints as `1.50`), yet not of
//! its identity: `1.5 = 1.50`, they sort and hash alike. Besides finite values
//! there are `NaN`, `Infinity` and `-Infinity`; PostgreSQL's btree order puts
//! NaN above +Infinity, and NaN equals NaN.
//!
//! Every operation chooses its result scale exactly as PostgreSQL does (sum of
//! scales for `*`, `select_div_scale` for `/`, "at least 16 significant
//! digits" for the transcendental functions...), because clients see those
//! digits. Results are rounded half away from zero, like `round_var`.
//!
//! Storage limits are PostgreSQL's too: at most 131072 digits before the
//! point (base-10000 weight <= 32767) and 16383 after it; beyond that an
//! operation fails with 22003 "value overflows numeric format".
//!
//! Layout of this module:
//! - this file: the type, text and binary I/O, comparison/hashing, typmods,
//!   the four operations and the other exact functions, conversions;
//! - `math.rs`: sqrt, exp, ln, log, power (approximations with guard digits);
//! - `agg.rs`: the accumulator behind sum/avg/variance/stddev.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use bigdecimal::BigDecimal;
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::error::{PgError, PgResult};
use crate::{bail, pg_err};

mod agg;
mod math;
#[cfg(test)]
mod tests;

pub use agg::NumericAccum;

/// Largest precision accepted in `numeric(p,s)`.
pub const NUMERIC_MAX_PRECISION: i32 = 1000;
/// Smallest and largest scale accepted in `numeric(p,s)` (PostgreSQL 15 allows negative scales).
pub const NUMERIC_MIN_SCALE: i32 = -1000;
pub const NUMERIC_MAX_SCALE: i32 = 1000;
/// Largest display scale a computed result chooses by itself (division, sqrt, ...).
pub const NUMERIC_MAX_DISPLAY_SCALE: i64 = 1000;
/// Smallest display scale of a computed result.
pub const NUMERIC_MIN_DISPLAY_SCALE: i64 = 0;
/// Bound used to keep intermediate scale computations from overflowing.
pub const NUMERIC_MAX_RESULT_SCALE: i64 = 2000;
/// Computed results keep at least this many significant digits.
pub const NUMERIC_MIN_SIG_DIGITS: i64 = 16;
/// Largest display scale that fits the storage format (14 bits).
pub const NUMERIC_DSCALE_MAX: i64 = 0x3FFF;
/// Largest base-10000 weight that fits the storage format (int16).
pub const NUMERIC_WEIGHT_MAX: i64 = 32767;
/// Decimal digits per base-10000 digit of PostgreSQL's representation.
const DEC_DIGITS: i64 = 4;
/// Digits allowed before the decimal point: (NUMERIC_WEIGHT_MAX + 1) * DEC_DIGITS.
const MAX_INT_DIGITS: i64 = (NUMERIC_WEIGHT_MAX + 1) * DEC_DIGITS;
/// PostgreSQL's VARHDRSZ, the historical offset of every typmod.
const VARHDRSZ: i32 = 4;

/// A PostgreSQL `numeric` value.
///
/// Invariant of `Finite`: the `BigDecimal`'s scale is the display scale, in
/// `0..=NUMERIC_DSCALE_MAX`, and the value fits PostgreSQL's range. Values
/// built through this module's API always satisfy it; a `Finite` built by
/// hand with a negative scale is tolerated (treated as scale 0).
#[derive(Clone)]
pub enum Numeric {
    NaN,
    PosInf,
    NegInf,
    Finite(BigDecimal),
}

// ---------------------------------------------------------------------------
// Small helpers on big integers and powers of ten
// ---------------------------------------------------------------------------

const LOG10_2: f64 = std::f64::consts::LOG10_2;

/// 10^n as a BigUint.
fn pow10(n: u64) -> BigUint {
    if n < 20 {
        BigUint::from(10u64.pow(n as u32))
    } else {
        BigUint::from(10u32).pow(u32::try_from(n).expect("power of ten too large"))
    }
}

/// x * 10^n.
fn mul_pow10(x: &BigInt, n: u64) -> BigInt {
    if n == 0 || x.is_zero() {
        x.clone()
    } else if n < 20 {
        x * 10u64.pow(n as u32)
    } else {
        x * BigInt::from(pow10(n))
    }
}

/// An upper bound on the number of decimal digits of x (exact or one more).
fn digits_upper_bound(x: &BigUint) -> u64 {
    (x.bits() as f64 * LOG10_2) as u64 + 1
}

/// Number of decimal digits of x; 0 for zero.
fn num_digits(x: &BigUint) -> u64 {
    if x.is_zero() {
        return 0;
    }
    if let Some(v) = x.to_u64() {
        return v.ilog10() as u64 + 1;
    }
    // x >= 2^(bits-1), so it has at least floor((bits-1)*log10(2)) + 1 digits,
    // and at most one more than that. Correct the float estimate exactly.
    let mut est = ((x.bits() - 1) as f64 * LOG10_2) as u64 + 1;
    while est > 1 && *x < pow10(est - 1) {
        est -= 1;
    }
    while *x >= pow10(est) {
        est += 1;
    }
    est
}

/// trunc(x / 10^n), toward zero.
fn div_pow10_trunc(x: &BigInt, n: u64) -> BigInt {
    if n == 0 {
        return x.clone();
    }
    if n > digits_upper_bound(x.magnitude()) {
        return BigInt::zero();
    }
    x / BigInt::from(pow10(n))
}

/// round(x / 10^n), halves away from zero (PostgreSQL's round_var).
fn div_pow10_round(x: &BigInt, n: u64) -> BigInt {
    if n == 0 {
        return x.clone();
    }
    if n > digits_upper_bound(x.magnitude()) {
        return BigInt::zero();
    }
    div_round(x, &BigInt::from(pow10(n)))
}

/// n / d rounded to the nearest integer, halves away from zero.
fn div_round(n: &BigInt, d: &BigInt) -> BigInt {
    let (q, r) = n.div_rem(d);
    if (r.magnitude() << 1u32) >= *d.magnitude() {
        if (n.sign() == Sign::Minus) == (d.sign() == Sign::Minus) {
            q + 1
        } else {
            q - 1
        }
    } else {
        q
    }
}

/// Rescales an unscaled integer from `from` to `to` fractional digits,
/// rounding halves away from zero. `to` may be negative: the result then
/// counts units of 10^-to.
fn rescale_round(x: &BigInt, from: i64, to: i64) -> BigInt {
    if to >= from {
        mul_pow10(x, (to - from) as u64)
    } else {
        div_pow10_round(x, (from - to) as u64)
    }
}

/// Like `rescale_round`, truncating toward zero.
fn rescale_trunc(x: &BigInt, from: i64, to: i64) -> BigInt {
    if to >= from {
        mul_pow10(x, (to - from) as u64)
    } else {
        div_pow10_trunc(x, (from - to) as u64)
    }
}

/// The unscaled integer and the (non-negative) scale of a finite value.
fn split(d: &BigDecimal) -> (Cow<'_, BigInt>, i64) {
    let (int, scale) = d.as_bigint_and_scale();
    if scale >= 0 {
        (int, scale)
    } else {
        (Cow::Owned(mul_pow10(&int, scale.unsigned_abs())), 0)
    }
}

/// Aligns two finite values to the larger of their scales.
fn align<'a>(a: &'a BigDecimal, b: &'a BigDecimal) -> (Cow<'a, BigInt>, Cow<'a, BigInt>, i64) {
    let (ai, sa) = split(a);
    let (bi, sb) = split(b);
    match sa.cmp(&sb) {
        Ordering::Equal => (ai, bi, sa),
        Ordering::Less => (Cow::Owned(mul_pow10(&ai, (sb - sa) as u64)), bi, sb),
        Ordering::Greater => (ai, Cow::Owned(mul_pow10(&bi, (sa - sb) as u64)), sa),
    }
}

/// Decimal exponent of the most significant digit of a nonzero value
/// (floor(log10(|value|))).
fn lead_exp(int: &BigInt, scale: i64) -> i64 {
    num_digits(int.magnitude()) as i64 - 1 - scale
}

fn overflow_error() -> PgError {
    pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

fn division_by_zero() -> PgError {
    pg_err!(DIVISION_BY_ZERO, "division by zero")
}

/// Builds a finite result, enforcing the storage limits as make_result does.
fn make_finite(int: BigInt, scale: i64) -> PgResult<Numeric> {
    debug_assert!(scale >= 0);
    if scale > NUMERIC_DSCALE_MAX {
        return Err(overflow_error());
    }
    if !int.is_zero() {
        // Only look at the digits exactly when the cheap bound says we might be near the limit.
        let mag = int.magnitude();
        if digits_upper_bound(mag) as i64 - scale > MAX_INT_DIGITS && num_digits(mag) as i64 - scale > MAX_INT_DIGITS {
            return Err(overflow_error());
        }
    }
    Ok(Numeric::Finite(BigDecimal::new(int, scale)))
}

/// A finite value known to be within limits (small constants, rounded inputs).
fn finite_unchecked(int: BigInt, scale: i64) -> Numeric {
    Numeric::Finite(BigDecimal::new(int, scale))
}

/// PostgreSQL's view of a finite value in base 10000: the weight of the first
/// nonzero base-10000 digit and the first two such digits (the second is 0
/// when there is none). Several result-scale rules are phrased in these terms.
struct NbaseLead {
    weight: i64,
    d0: u32,
    d1: Option<u32>,
}

fn nbase_lead(int: &BigInt, scale: i64) -> Option<NbaseLead> {
    let mag = int.magnitude();
    if mag.is_zero() {
        return None;
    }
    let nd = num_digits(mag) as i64;
    let lp = nd - 1 - scale;
    let weight = lp.div_euclid(DEC_DIGITS);
    // decimal digits held by the first base-10000 digit (1..=4)
    let k = lp - weight * DEC_DIGITS + 1;
    let digits_at = |skip: i64, take: i64| -> (u32, bool) {
        // the `take` decimal digits following the first `skip` ones, as an integer,
        // and whether any nonzero digit follows them
        let rest = nd - skip - take;
        let top = if rest >= 0 {
            mag / pow10(rest as u64)
        } else {
            mag * pow10((-rest) as u64)
        };
        let top = top % pow10(take as u64);
        let more = rest > 0 && !(mag % pow10(rest as u64)).is_zero();
        (top.to_u32().unwrap_or(0), more)
    };
    let (d0, more0) = digits_at(0, k);
    // A second digit exists when anything nonzero follows the first (it may itself be 0).
    let d1 = more0.then(|| digits_at(k, DEC_DIGITS).0);
    Some(NbaseLead { weight, d0, d1 })
}

// ---------------------------------------------------------------------------
// Construction, classification, accessors
// ---------------------------------------------------------------------------

impl Numeric {
    pub fn zero() -> Numeric {
        finite_unchecked(BigInt::zero(), 0)
    }

    pub fn one() -> Numeric {
        finite_unchecked(BigInt::one(), 0)
    }

    /// A finite value `int * 10^-scale` with display scale `scale`, checked
    /// against PostgreSQL's limits.
    pub fn from_parts(int: BigInt, scale: u32) -> PgResult<Numeric> {
        make_finite(int, scale as i64)
    }

    /// The unscaled integer and display scale of a finite value.
    pub fn to_parts(&self) -> Option<(BigInt, u32)> {
        match self {
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                Some((i.into_owned(), s as u32))
            }
            _ => None,
        }
    }

    pub fn from_i128(v: i128) -> Numeric {
        finite_unchecked(BigInt::from(v), 0)
    }

    pub fn is_nan(&self) -> bool {
        matches!(self, Numeric::NaN)
    }

    pub fn is_infinite(&self) -> bool {
        matches!(self, Numeric::PosInf | Numeric::NegInf)
    }

    /// Neither NaN nor an infinity.
    pub fn is_finite(&self) -> bool {
        matches!(self, Numeric::Finite(_))
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Numeric::Finite(d) => d.as_bigint_and_scale().0.is_zero(),
            _ => false,
        }
    }

    /// -1, 0 or 1 for ordered values (numeric_sign_internal); NaN gives 0.
    fn signum_i(&self) -> i32 {
        match self {
            Numeric::NaN => 0,
            Numeric::PosInf => 1,
            Numeric::NegInf => -1,
            Numeric::Finite(d) => match d.as_bigint_and_scale().0.sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            },
        }
    }

    /// True if the value is an integer (no nonzero fractional digit), as
    /// numeric_is_integral; infinities count as integral, NaN does not.
    pub fn is_integral(&self) -> bool {
        match self {
            Numeric::NaN => false,
            Numeric::PosInf | Numeric::NegInf => true,
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                s == 0 || (i.magnitude() % pow10(s as u64)).is_zero()
            }
        }
    }

    /// `scale(numeric)`: the display scale; None (SQL NULL) for NaN and infinities.
    pub fn scale(&self) -> Option<i32> {
        match self {
            Numeric::Finite(d) => Some(split(d).1 as i32),
            _ => None,
        }
    }

    /// `min_scale(numeric)`: fewest fractional digits that represent the value exactly.
    pub fn min_scale(&self) -> Option<i32> {
        match self {
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                Some(min_scale_of(&i, s) as i32)
            }
            _ => None,
        }
    }

    /// `trim_scale(numeric)`: the value with its display scale reduced to `min_scale`.
    pub fn trim_scale(&self) -> Numeric {
        match self {
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                let m = min_scale_of(&i, s);
                finite_unchecked(div_pow10_trunc(&i, (s - m) as u64), m)
            }
            other => other.clone(),
        }
    }
}

/// Number of fractional digits left once trailing zeros are dropped.
fn min_scale_of(int: &BigInt, scale: i64) -> i64 {
    if int.is_zero() {
        return 0;
    }
    let mut mag = int.magnitude().clone();
    let mut s = scale;
    while s > 0 {
        let (q, r) = mag.div_rem(&BigUint::from(10u32));
        if !r.is_zero() {
            break;
        }
        mag = q;
        s -= 1;
    }
    s
}

impl From<i16> for Numeric {
    fn from(v: i16) -> Numeric {
        finite_unchecked(BigInt::from(v), 0)
    }
}

impl From<i32> for Numeric {
    fn from(v: i32) -> Numeric {
        finite_unchecked(BigInt::from(v), 0)
    }
}

impl From<i64> for Numeric {
    fn from(v: i64) -> Numeric {
        finite_unchecked(BigInt::from(v), 0)
    }
}

impl Numeric {
    pub fn from_i16(v: i16) -> Numeric {
        Numeric::from(v)
    }

    pub fn from_i32(v: i32) -> Numeric {
        Numeric::from(v)
    }

    pub fn from_i64(v: i64) -> Numeric {
        Numeric::from(v)
    }
}

// ---------------------------------------------------------------------------
// Text input and output
// ---------------------------------------------------------------------------

/// C's isspace() in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn starts_with_ci(s: &[u8], prefix: &str) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

impl Numeric {
    /// numeric_in: parses PostgreSQL 15's accepted syntax: optional spaces,
    /// `NaN`, `[+-]Infinity`, `[+-]inf` (any case), or a decimal number with
    /// optional sign, point and exponent. The display scale is the number of
    /// digits after the point, less the exponent (never negative).
    pub fn parse(text: &str) -> PgResult<Numeric> {
        let invalid = || {
            pg_err!(
                INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type numeric: \"{}\"",
                text
            )
        };
        let bytes = text.as_bytes();
        let mut cp = 0;
        while cp < bytes.len() && is_c_space(bytes[cp]) {
            cp += 1;
        }
        let rest = &bytes[cp..];
        // The special spellings PostgreSQL 15 checks for, in its order.
        const SPECIALS: [(&str, Numeric); 7] = [
            ("NaN", Numeric::NaN),
            ("Infinity", Numeric::PosInf),
            ("+Infinity", Numeric::PosInf),
            ("-Infinity", Numeric::NegInf),
            ("inf", Numeric::PosInf),
            ("+inf", Numeric::PosInf),
            ("-inf", Numeric::NegInf),
        ];
        let (value, end) = match SPECIALS.iter().find(|(p, _)| starts_with_ci(rest, p)) {
            Some((p, v)) => (v.clone(), cp + p.len()),
            None => {
                let (v, end) = parse_decimal(bytes, cp).ok_or_else(invalid)??;
                (v, end)
            }
        };
        if !bytes[end..].iter().all(|&b| is_c_space(b)) {
            return Err(invalid());
        }
        Ok(value)
    }
}

/// set_var_from_str: parses a decimal number starting at `start`. Returns
/// None on a syntax error, Some(Err) on overflow, else the value and the
/// position after it.
fn parse_decimal(bytes: &[u8], start: usize) -> Option<PgResult<(Numeric, usize)>> {
    let mut cp = start;
    let mut negative = false;
    match bytes.get(cp) {
        Some(b'+') => cp += 1,
        Some(b'-') => {
            negative = true;
            cp += 1
        }
        _ => {}
    }
    let mut have_dp = false;
    if bytes.get(cp) == Some(&b'.') {
        have_dp = true;
        cp += 1;
    }
    if !bytes.get(cp).is_some_and(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits = String::new();
    let mut frac_digits: i64 = 0;
    while let Some(&b) = bytes.get(cp) {
        if b.is_ascii_digit() {
            digits.push(b as char);
            if have_dp {
                frac_digits += 1;
            }
            cp += 1;
        } else if b == b'.' {
            if have_dp {
                return None;
            }
            have_dp = true;
            cp += 1;
        } else {
            break;
        }
    }
    let mut exponent: i64 = 0;
    if matches!(bytes.get(cp), Some(b'e') | Some(b'E')) {
        cp += 1;
        // strtol(): optional white space, optional sign, at least one digit;
        // out-of-range values saturate (and are then rejected as overflow).
        let mut p = cp;
        while p < bytes.len() && is_c_space(bytes[p]) {
            p += 1;
        }
        let mut eneg = false;
        match bytes.get(p) {
            Some(b'+') => p += 1,
            Some(b'-') => {
                eneg = true;
                p += 1
            }
            _ => {}
        }
        let dstart = p;
        let mut e: i64 = 0;
        while let Some(&b) = bytes.get(p) {
            if !b.is_ascii_digit() {
                break;
            }
            e = e.saturating_mul(10).saturating_add((b - b'0') as i64);
            p += 1;
        }
        if p == dstart {
            return None;
        }
        cp = p;
        exponent = if eneg { -e } else { e };
        const INT_MAX_HALF: i64 = (i32::MAX / 2) as i64;
        if exponent >= INT_MAX_HALF || exponent <= -INT_MAX_HALF {
            return Some(Err(overflow_error()));
        }
    }
    let scale = (frac_digits - exponent).max(0);
    if scale > NUMERIC_DSCALE_MAX {
        return Some(Err(overflow_error()));
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.is_empty() {
        return Some(Ok((finite_unchecked(BigInt::zero(), scale), cp)));
    }
    // Decimal exponent of the leading digit decides overflow before we build
    // a possibly enormous integer.
    let int_digits = digits.len() as i64 - frac_digits;
    let lead = int_digits - 1 - (digits.len() - trimmed.len()) as i64 + exponent;
    if lead >= MAX_INT_DIGITS {
        return Some(Err(overflow_error()));
    }
    let mut int = BigInt::from_str(trimmed).expect("digits");
    // value = int * 10^(exponent - frac_digits); when that power is negative
    // it is exactly 10^-scale, so `int` is already the unscaled value.
    let shift = exponent - frac_digits;
    if shift > 0 {
        int = mul_pow10(&int, shift as u64);
    }
    if negative {
        int = -int;
    }
    Some(make_finite(int, scale).map(|v| (v, cp)))
}

impl FromStr for Numeric {
    type Err = PgError;

    fn from_str(s: &str) -> PgResult<Numeric> {
        Numeric::parse(s)
    }
}

/// numeric_out: plain notation with exactly `dscale` fractional digits.
impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numeric::NaN => f.write_str("NaN"),
            Numeric::PosInf => f.write_str("Infinity"),
            Numeric::NegInf => f.write_str("-Infinity"),
            Numeric::Finite(d) => {
                let (int, scale) = split(d);
                let digits = int.magnitude().to_string();
                let mut out = String::with_capacity(digits.len() + scale as usize + 3);
                if int.sign() == Sign::Minus {
                    out.push('-');
                }
                let scale = scale as usize;
                if scale == 0 {
                    out.push_str(&digits);
                } else if digits.len() > scale {
                    let (ip, fp) = digits.split_at(digits.len() - scale);
                    out.push_str(ip);
                    out.push('.');
                    out.push_str(fp);
                } else {
                    out.push_str("0.");
                    out.extend(std::iter::repeat_n('0', scale - digits.len()));
                    out.push_str(&digits);
                }
                f.write_str(&out)
            }
        }
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

impl Numeric {
    /// numeric_normalize: the text with insignificant trailing zeros (and a
    /// trailing point) removed, so that equal values give equal strings.
    pub fn to_normalized_string(&self) -> String {
        let s = self.to_string();
        if self.is_finite() && s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

// ---------------------------------------------------------------------------
// Comparison and hashing (the btree and hash opclasses)
// ---------------------------------------------------------------------------

fn cmp_finite(a: &BigDecimal, b: &BigDecimal) -> Ordering {
    let (ai, sa) = split(a);
    let (bi, sb) = split(b);
    // Signs decide first, which avoids scaling in the common mixed-sign case.
    let sign_rank = |s: Sign| match s {
        Sign::Minus => 0,
        Sign::NoSign => 1,
        Sign::Plus => 2,
    };
    match sign_rank(ai.sign()).cmp(&sign_rank(bi.sign())) {
        Ordering::Equal => {}
        other => return other,
    }
    if ai.is_zero() {
        return Ordering::Equal;
    }
    match sa.cmp(&sb) {
        Ordering::Equal => ai.cmp(&bi),
        Ordering::Less => mul_pow10(&ai, (sb - sa) as u64).cmp(&bi),
        Ordering::Greater => ai.as_ref().cmp(&mul_pow10(&bi, (sa - sb) as u64)),
    }
}

/// cmp_numerics: -Infinity < finite values < Infinity < NaN; NaN = NaN.
impl Ord for Numeric {
    fn cmp(&self, other: &Numeric) -> Ordering {
        use Numeric::*;
        let rank = |n: &Numeric| match n {
            NegInf => 0,
            Finite(_) => 1,
            PosInf => 2,
            NaN => 3,
        };
        match (self, other) {
            (Finite(a), Finite(b)) => cmp_finite(a, b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

/// Consistent with `Eq`: the hash ignores the display scale and trailing
/// zeros, like hash_numeric (1.0 and 1.00 hash alike).
impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Numeric::NaN => 0u8.hash(state),
            Numeric::PosInf => 1u8.hash(state),
            Numeric::NegInf => 2u8.hash(state),
            Numeric::Finite(d) => {
                let (int, scale) = split(d);
                if int.is_zero() {
                    3u8.hash(state);
                    return;
                }
                4u8.hash(state);
                let (sign, mut mag) = int.into_owned().into_parts();
                let mut exp = -scale;
                let ten = BigUint::from(10u32);
                loop {
                    let (q, r) = mag.div_rem(&ten);
                    if !r.is_zero() {
                        break;
                    }
                    mag = q;
                    exp += 1;
                }
                (sign == Sign::Minus).hash(state);
                mag.hash(state);
                exp.hash(state);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Type modifiers: numeric(p,s)
// ---------------------------------------------------------------------------

/// Packs numeric(precision, scale) into a typmod (make_numeric_typmod), with
/// numerictypmodin's range checks.
pub fn typmod(precision: i32, scale: i32) -> PgResult<i32> {
    if !(1..=NUMERIC_MAX_PRECISION).contains(&precision) {
        bail!(
            INVALID_PARAMETER_VALUE,
            "NUMERIC precision {} must be between 1 and {}",
            precision,
            NUMERIC_MAX_PRECISION
        );
    }
    if !(NUMERIC_MIN_SCALE..=NUMERIC_MAX_SCALE).contains(&scale) {
        bail!(
            INVALID_PARAMETER_VALUE,
            "NUMERIC scale {} must be between {} and {}",
            scale,
            NUMERIC_MIN_SCALE,
            NUMERIC_MAX_SCALE
        );
    }
    Ok(((precision << 16) | (scale & 0x7ff)) + VARHDRSZ)
}

/// Unpacks a typmod into (precision, scale); None for "no typmod" (-1).
/// The scale is sign-extended from its 11 bits.
pub fn typmod_precision_scale(typmod: i32) -> Option<(i32, i32)> {
    if typmod < VARHDRSZ {
        return None;
    }
    let t = typmod - VARHDRSZ;
    Some(((t >> 16) & 0xffff, ((t & 0x7ff) ^ 1024) - 1024))
}

/// numerictypmodout: "(p,s)", or "" for no typmod.
pub fn typmod_to_string(typmod: i32) -> String {
    match typmod_precision_scale(typmod) {
        Some((p, s)) => format!("({p},{s})"),
        None => String::new(),
    }
}

impl Numeric {
    /// Coerces to numeric(p,s) (the `numeric()` length-coercion function):
    /// rounds to the scale, then checks the digits before the point.
    pub fn apply_typmod(&self, typmod: i32) -> PgResult<Numeric> {
        let Some((precision, scale)) = typmod_precision_scale(typmod) else {
            return Ok(self.clone());
        };
        let d = match self {
            Numeric::NaN => return Ok(Numeric::NaN),
            Numeric::PosInf | Numeric::NegInf => {
                return Err(
                    pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(format!(
                        "A field with precision {precision}, scale {scale} cannot hold an infinite value."
                    )),
                )
            }
            Numeric::Finite(d) => d,
        };
        let (int, s) = split(d);
        let scale = scale as i64;
        let mut rounded = rescale_round(&int, s, scale);
        let dscale = scale.max(0);
        if scale < 0 {
            rounded = mul_pow10(&rounded, (-scale) as u64);
        }
        let maxdigits = precision as i64 - scale;
        if !rounded.is_zero() {
            // digits before the decimal point of the rounded value (<= 0 below 1)
            let ddigits = lead_exp(&rounded, dscale) + 1;
            if ddigits > maxdigits {
                let bound = if maxdigits != 0 {
                    format!("10^{maxdigits}")
                } else {
                    "1".to_string()
                };
                return Err(pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(format!(
                    "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
                )));
            }
        }
        Ok(finite_unchecked(rounded, dscale))
    }
}

// ---------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------

/// Result scale of a division (select_div_scale): at least 16 significant
/// digits, no less than either input's scale, at most 1000.
fn select_div_scale(ai: &BigInt, sa: i64, bi: &BigInt, sb: i64) -> i64 {
    let (w1, f1) = nbase_lead(ai, sa).map_or((0, 0), |l| (l.weight, l.d0));
    let (w2, f2) = nbase_lead(bi, sb).map_or((0, 0), |l| (l.weight, l.d0));
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    (NUMERIC_MIN_SIG_DIGITS - qweight * DEC_DIGITS)
        .max(sa)
        .max(sb)
        .clamp(NUMERIC_MIN_DISPLAY_SCALE, NUMERIC_MAX_DISPLAY_SCALE)
}

/// (a / b) at `rscale` fractional digits, rounded (or truncated).
fn div_at_scale(ai: &BigInt, sa: i64, bi: &BigInt, sb: i64, rscale: i64, round: bool) -> BigInt {
    // a/b * 10^rscale = ai * 10^(sb - sa + rscale) / bi
    let shift = sb - sa + rscale;
    let (n, d) = if shift >= 0 {
        (mul_pow10(ai, shift as u64), Cow::Borrowed(bi))
    } else {
        (ai.clone(), Cow::Owned(mul_pow10(bi, (-shift) as u64)))
    };
    if round {
        div_round(&n, &d)
    } else {
        &n / d.as_ref()
    }
}

#[allow(clippy::should_implement_trait)]
impl Numeric {
    /// `+` (numeric_add): exact, scale = max of the scales.
    pub fn add(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        match (self, other) {
            (Finite(a), Finite(b)) => {
                let (ai, bi, s) = align(a, b);
                make_finite(ai.as_ref() + bi.as_ref(), s)
            }
            (NaN, _) | (_, NaN) => Ok(NaN),
            (PosInf, NegInf) | (NegInf, PosInf) => Ok(NaN),
            (PosInf, _) | (_, PosInf) => Ok(PosInf),
            (NegInf, _) | (_, NegInf) => Ok(NegInf),
        }
    }

    /// `-` (numeric_sub): exact, scale = max of the scales.
    pub fn sub(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        match (self, other) {
            (Finite(a), Finite(b)) => {
                let (ai, bi, s) = align(a, b);
                make_finite(ai.as_ref() - bi.as_ref(), s)
            }
            (NaN, _) | (_, NaN) => Ok(NaN),
            (PosInf, PosInf) | (NegInf, NegInf) => Ok(NaN),
            (PosInf, _) | (_, NegInf) => Ok(PosInf),
            (NegInf, _) | (_, PosInf) => Ok(NegInf),
        }
    }

    /// `*` (numeric_mul): exact, scale = sum of the scales (rounded to 16383 if more).
    pub fn mul(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        match (self, other) {
            (Finite(a), Finite(b)) => {
                let (ai, sa) = split(a);
                let (bi, sb) = split(b);
                let mut prod = ai.as_ref() * bi.as_ref();
                let mut scale = sa + sb;
                if scale > NUMERIC_DSCALE_MAX {
                    prod = rescale_round(&prod, scale, NUMERIC_DSCALE_MAX);
                    scale = NUMERIC_DSCALE_MAX;
                }
                make_finite(prod, scale)
            }
            (NaN, _) | (_, NaN) => Ok(NaN),
            _ => Ok(match self.signum_i() * other.signum_i() {
                0 => NaN,
                1 => PosInf,
                _ => NegInf,
            }),
        }
    }

    /// `/` (numeric_div): rounded to select_div_scale's scale.
    pub fn div(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        match (self, other) {
            (Finite(a), Finite(b)) => {
                let (ai, sa) = split(a);
                let (bi, sb) = split(b);
                if bi.is_zero() {
                    return Err(division_by_zero());
                }
                let rscale = select_div_scale(&ai, sa, &bi, sb);
                make_finite(div_at_scale(&ai, sa, &bi, sb, rscale, true), rscale)
            }
            _ => special_div(self, other),
        }
    }

    /// `div(numeric, numeric)` (numeric_div_trunc): the quotient truncated to an integer.
    pub fn div_trunc(&self, other: &Numeric) -> PgResult<Numeric> {
        match (self, other) {
            (Numeric::Finite(a), Numeric::Finite(b)) => {
                let (ai, sa) = split(a);
                let (bi, sb) = split(b);
                if bi.is_zero() {
                    return Err(division_by_zero());
                }
                make_finite(div_at_scale(&ai, sa, &bi, sb, 0, false), 0)
            }
            _ => special_div(self, other),
        }
    }

    /// `%` and `mod()` (numeric_mod): x - trunc(x/y)*y, scale = max of the scales.
    pub fn modulo(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        match (self, other) {
            (Finite(a), Finite(b)) => {
                let (ai, bi, s) = align(a, b);
                if bi.is_zero() {
                    return Err(division_by_zero());
                }
                // BigInt's % truncates, so the remainder takes the dividend's sign.
                make_finite(ai.as_ref() % bi.as_ref(), s)
            }
            (NaN, _) | (_, NaN) => Ok(NaN),
            (PosInf | NegInf, _) => {
                if other.is_zero() {
                    Err(division_by_zero())
                } else {
                    Ok(NaN)
                }
            }
            // finite % [-]Infinity is the dividend itself
            (Finite(_), _) => Ok(self.clone()),
        }
    }

    /// Unary minus; zero stays unsigned.
    pub fn neg(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::PosInf => Numeric::NegInf,
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                finite_unchecked(-i.into_owned(), s)
            }
        }
    }

    pub fn abs(&self) -> Numeric {
        match self {
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                finite_unchecked(i.abs(), s)
            }
            other => other.clone(),
        }
    }

    /// `sign(numeric)`: -1, 0 or 1 (scale 0); NaN for NaN.
    pub fn sign(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            other => Numeric::from(other.signum_i()),
        }
    }

    /// `round(numeric, int)`: halves away from zero; a negative scale rounds
    /// before the point (the result then has scale 0).
    pub fn round(&self, scale: i32) -> PgResult<Numeric> {
        let Numeric::Finite(d) = self else {
            return Ok(self.clone());
        };
        // Clamp as PostgreSQL does to keep the arithmetic bounded; one more
        // digit below is allowed since rounding can carry into it.
        let scale = (scale as i64).clamp(-MAX_INT_DIGITS - 1, NUMERIC_DSCALE_MAX);
        let (i, s) = split(d);
        let r = rescale_round(&i, s, scale);
        if scale < 0 {
            make_finite(mul_pow10(&r, (-scale) as u64), 0)
        } else {
            make_finite(r, scale)
        }
    }

    /// `trunc(numeric, int)`: toward zero; a negative scale truncates before the point.
    pub fn trunc(&self, scale: i32) -> PgResult<Numeric> {
        let Numeric::Finite(d) = self else {
            return Ok(self.clone());
        };
        let scale = (scale as i64).clamp(-MAX_INT_DIGITS, NUMERIC_DSCALE_MAX);
        let (i, s) = split(d);
        let r = rescale_trunc(&i, s, scale);
        if scale < 0 {
            make_finite(mul_pow10(&r, (-scale) as u64), 0)
        } else {
            make_finite(r, scale)
        }
    }

    /// `ceil(numeric)`: smallest integer >= the value, scale 0.
    pub fn ceil(&self) -> PgResult<Numeric> {
        let Numeric::Finite(d) = self else {
            return Ok(self.clone());
        };
        let (i, s) = split(d);
        let t = div_pow10_trunc(&i, s as u64);
        let exact = mul_pow10(&t, s as u64) == *i;
        make_finite(if i.sign() == Sign::Plus && !exact { t + 1 } else { t }, 0)
    }

    /// `floor(numeric)`: largest integer <= the value, scale 0.
    pub fn floor(&self) -> PgResult<Numeric> {
        let Numeric::Finite(d) = self else {
            return Ok(self.clone());
        };
        let (i, s) = split(d);
        let t = div_pow10_trunc(&i, s as u64);
        let exact = mul_pow10(&t, s as u64) == *i;
        make_finite(if i.sign() == Sign::Minus && !exact { t - 1 } else { t }, 0)
    }

    /// `gcd(numeric, numeric)`: NaN if either input is NaN or infinite;
    /// scale = max of the scales.
    pub fn gcd(&self, other: &Numeric) -> PgResult<Numeric> {
        let (Numeric::Finite(a), Numeric::Finite(b)) = (self, other) else {
            return Ok(Numeric::NaN);
        };
        let (ai, bi, s) = align(a, b);
        make_finite(ai.gcd(&bi), s)
    }

    /// `lcm(numeric, numeric)`: |x / gcd(x,y) * y|, zero if either is zero;
    /// scale = max of the scales.
    pub fn lcm(&self, other: &Numeric) -> PgResult<Numeric> {
        let (Numeric::Finite(a), Numeric::Finite(b)) = (self, other) else {
            return Ok(Numeric::NaN);
        };
        let (ai, bi, s) = align(a, b);
        if ai.is_zero() || bi.is_zero() {
            return make_finite(BigInt::zero(), s);
        }
        // With both aligned to scale s, lcm(A, B) is the unscaled result at scale s.
        let g = ai.gcd(&bi);
        make_finite((ai.as_ref() / &g * bi.as_ref()).abs(), s)
    }

    /// `factorial(bigint)` (numeric_fac).
    pub fn factorial(n: i64) -> PgResult<Numeric> {
        if n < 0 {
            bail!(
                NUMERIC_VALUE_OUT_OF_RANGE,
                "factorial of a negative number is undefined"
            );
        }
        if n <= 1 {
            return Ok(Numeric::one());
        }
        if n > 32177 {
            return Err(overflow_error());
        }
        // Multiply pairwise-balanced products: much faster than a running product.
        fn product(lo: u64, hi: u64) -> BigUint {
            if hi - lo < 16 {
                (lo..=hi).fold(BigUint::one(), |acc, k| acc * k)
            } else {
                let mid = (lo + hi) / 2;
                product(lo, mid) * product(mid + 1, hi)
            }
        }
        make_finite(BigInt::from(product(2, n as u64)), 0)
    }

    /// `width_bucket(operand, low, high, count)` (width_bucket_numeric).
    pub fn width_bucket(operand: &Numeric, bound1: &Numeric, bound2: &Numeric, count: i32) -> PgResult<i32> {
        if count <= 0 {
            bail!(
                INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
                "count must be greater than zero"
            );
        }
        if operand.is_nan() || bound1.is_nan() || bound2.is_nan() {
            bail!(
                INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
                "operand, lower bound, and upper bound cannot be NaN"
            );
        }
        if bound1.is_infinite() || bound2.is_infinite() {
            bail!(
                INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
                "lower and upper bounds must be finite"
            );
        }
        let count_n = Numeric::from(count);
        let result = match bound1.cmp(bound2) {
            Ordering::Equal => {
                bail!(
                    INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
                    "lower bound cannot equal upper bound"
                )
            }
            Ordering::Less => {
                if operand < bound1 {
                    Numeric::zero()
                } else if operand >= bound2 {
                    count_n.add(&Numeric::one())?
                } else {
                    compute_bucket(operand, bound1, bound2, &count_n)?
                }
            }
            Ordering::Greater => {
                if operand > bound1 {
                    Numeric::zero()
                } else if operand <= bound2 {
                    count_n.add(&Numeric::one())?
                } else {
                    compute_bucket(operand, bound1, bound2, &count_n)?
                }
            }
        };
        result.to_i32()
    }
}

/// ((operand - bound1) * count) / (bound2 - bound1) truncated, plus one.
fn compute_bucket(operand: &Numeric, bound1: &Numeric, bound2: &Numeric, count: &Numeric) -> PgResult<Numeric> {
    let num = operand.sub(bound1)?.mul(count)?;
    let den = bound2.sub(bound1)?;
    num.div_trunc(&den)?.add(&Numeric::one())
}

/// Division involving NaN or an infinity (shared by `/` and `div()`).
fn special_div(a: &Numeric, b: &Numeric) -> PgResult<Numeric> {
    use Numeric::*;
    match (a, b) {
        (NaN, _) | (_, NaN) => Ok(NaN),
        (PosInf | NegInf, PosInf | NegInf) => Ok(NaN),
        (PosInf | NegInf, _) => match a.signum_i() * b.signum_i() {
            0 => Err(division_by_zero()),
            1 => Ok(PosInf),
            _ => Ok(NegInf),
        },
        // finite / infinity: PostgreSQL returns zero rather than underflowing
        _ => Ok(Numeric::zero()),
    }
}

// ---------------------------------------------------------------------------
// Conversions to and from other types
// ---------------------------------------------------------------------------

impl Numeric {
    /// The value rounded to an integer (halves away from zero), if finite.
    fn to_rounded_bigint(&self, typname: &str) -> PgResult<BigInt> {
        match self {
            Numeric::NaN => bail!(FEATURE_NOT_SUPPORTED, "cannot convert NaN to {}", typname),
            Numeric::PosInf | Numeric::NegInf => {
                bail!(FEATURE_NOT_SUPPORTED, "cannot convert infinity to {}", typname)
            }
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                Ok(rescale_round(&i, s, 0))
            }
        }
    }

    /// numeric_int8: rounds halves away from zero.
    pub fn to_i64(&self) -> PgResult<i64> {
        self.to_rounded_bigint("bigint")?
            .to_i64()
            .ok_or_else(|| pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"))
    }

    /// numeric_int4.
    pub fn to_i32(&self) -> PgResult<i32> {
        self.to_rounded_bigint("integer")?
            .to_i32()
            .ok_or_else(|| pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
    }

    /// numeric_int2.
    pub fn to_i16(&self) -> PgResult<i16> {
        self.to_rounded_bigint("smallint")?
            .to_i16()
            .ok_or_else(|| pg_err!(NUMERIC_VALUE_OUT_OF_RANGE, "smallint out of range"))
    }

    /// float8_numeric: the double printed with 15 significant digits (%.15g),
    /// then read back, so 0.1::float8 becomes exactly 0.1.
    pub fn from_f64(v: f64) -> Numeric {
        Self::from_float_text(v, 15)
    }

    /// float4_numeric: like `from_f64` with 6 significant digits.
    pub fn from_f32(v: f32) -> Numeric {
        Self::from_float_text(v as f64, 6)
    }

    fn from_float_text(v: f64, sig_digits: usize) -> Numeric {
        if v.is_nan() {
            return Numeric::NaN;
        }
        if v.is_infinite() {
            return if v > 0.0 { Numeric::PosInf } else { Numeric::NegInf };
        }
        // Rust's exact formatting rounds ties to even, as glibc's printf does.
        let s = format!("{:.*e}", sig_digits - 1, v);
        let (mantissa, exp) = s.split_once('e').expect("exponent");
        // %g drops trailing fractional zeros, which determines the scale.
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        Numeric::parse(&format!("{mantissa}e{exp}")).expect("formatted float parses as numeric")
    }

    /// numeric_float8: the nearest double; 22003 if the value overflows or
    /// underflows to zero (as float8in reports it).
    pub fn to_f64(&self) -> PgResult<f64> {
        match self {
            Numeric::NaN => Ok(f64::NAN),
            Numeric::PosInf => Ok(f64::INFINITY),
            Numeric::NegInf => Ok(f64::NEG_INFINITY),
            Numeric::Finite(_) => {
                let text = self.to_string();
                let v: f64 = text.parse().expect("numeric text parses as f64");
                if v.is_infinite() || (v == 0.0 && !self.is_zero()) {
                    bail!(
                        NUMERIC_VALUE_OUT_OF_RANGE,
                        "\"{}\" is out of range for type double precision",
                        text
                    );
                }
                Ok(v)
            }
        }
    }

    /// numeric_float4: the nearest float; 22003 on overflow or underflow to zero.
    pub fn to_f32(&self) -> PgResult<f32> {
        match self {
            Numeric::NaN => Ok(f32::NAN),
            Numeric::PosInf => Ok(f32::INFINITY),
            Numeric::NegInf => Ok(f32::NEG_INFINITY),
            Numeric::Finite(_) => {
                let text = self.to_string();
                let v: f32 = text.parse().expect("numeric text parses as f32");
                if v.is_infinite() || (v == 0.0 && !self.is_zero()) {
                    bail!(NUMERIC_VALUE_OUT_OF_RANGE, "\"{}\" is out of range for type real", text);
                }
                Ok(v)
            }
        }
    }

    /// The nearest double, saturating to ±Infinity or 0 instead of failing
    /// (numericvar_to_double_no_overflow, used for estimates and statistics).
    pub fn to_f64_lossy(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::PosInf => f64::INFINITY,
            Numeric::NegInf => f64::NEG_INFINITY,
            Numeric::Finite(_) => self.to_string().parse().expect("numeric text parses as f64"),
        }
    }
}

// ---------------------------------------------------------------------------
// Binary format (numeric_send / numeric_recv)
// ---------------------------------------------------------------------------

const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

/// Base-10000 digits of |value|, stripped of leading and trailing zero
/// digits, with the weight of the first one. Zero is (0, []).
fn to_nbase(int: &BigInt, scale: i64) -> (i64, Vec<u16>) {
    if int.is_zero() {
        return (0, Vec::new());
    }
    let s = int.magnitude().to_string();
    let scale = scale as usize;
    let (ip, fp): (String, String) = if s.len() > scale {
        (s[..s.len() - scale].to_string(), s[s.len() - scale..].to_string())
    } else {
        (String::new(), format!("{}{}", "0".repeat(scale - s.len()), s))
    };
    let pad_left = (4 - ip.len() % 4) % 4;
    let pad_right = (4 - fp.len() % 4) % 4;
    let all = format!("{}{}{}{}", "0".repeat(pad_left), ip, fp, "0".repeat(pad_right));
    let mut weight = ((ip.len() + pad_left) / 4) as i64 - 1;
    let mut digits: Vec<u16> = all
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap().parse().unwrap())
        .collect();
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    weight -= lead as i64;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    (weight, digits)
}

impl Numeric {
    /// numeric_send: int16 ndigits, weight, sign, dscale, then the base-10000
    /// digits, all big-endian. Byte-identical to PostgreSQL's output,
    /// including the dscale of 32 it sends for infinities.
    pub fn to_binary(&self) -> Vec<u8> {
        let (digits, weight, sign, dscale): (Vec<u16>, i64, u16, u16) = match self {
            Numeric::NaN => (Vec::new(), 0, NUMERIC_NAN, 0),
            // PostgreSQL reads the dscale bits of the special header word: 0x20.
            Numeric::PosInf => (Vec::new(), 0, NUMERIC_PINF, 32),
            Numeric::NegInf => (Vec::new(), 0, NUMERIC_NINF, 32),
            Numeric::Finite(d) => {
                let (i, s) = split(d);
                let (w, digits) = to_nbase(&i, s);
                let sign = if i.sign() == Sign::Minus {
                    NUMERIC_NEG
                } else {
                    NUMERIC_POS
                };
                (digits, w, sign, s as u16)
            }
        };
        let mut out = Vec::with_capacity(8 + 2 * digits.len());
        out.extend_from_slice(&(digits.len() as u16).to_be_bytes());
        out.extend_from_slice(&(weight as i16).to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&dscale.to_be_bytes());
        for d in digits {
            out.extend_from_slice(&d.to_be_bytes());
        }
        out
    }

    /// numeric_recv: the inverse of `to_binary`, with PostgreSQL's checks.
    /// Digits hidden by the dscale are truncated away, as PostgreSQL does.
    pub fn from_binary(buf: &[u8]) -> PgResult<Numeric> {
        let short = || pg_err!(PROTOCOL_VIOLATION, "insufficient data left in message");
        let word = |i: usize| -> PgResult<u16> {
            buf.get(2 * i..2 * i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .ok_or_else(short)
        };
        let ndigits = word(0)? as usize;
        let weight = word(1)? as i16 as i64;
        let sign = word(2)?;
        let dscale = word(3)?;
        if ![NUMERIC_POS, NUMERIC_NEG, NUMERIC_NAN, NUMERIC_PINF, NUMERIC_NINF].contains(&sign) {
            bail!(
                INVALID_BINARY_REPRESENTATION,
                "invalid sign in external \"numeric\" value"
            );
        }
        if dscale as i64 & NUMERIC_DSCALE_MAX != dscale as i64 {
            bail!(
                INVALID_BINARY_REPRESENTATION,
                "invalid scale in external \"numeric\" value"
            );
        }
        let mut digits = String::with_capacity(ndigits * 4);
        for i in 0..ndigits {
            let d = word(4 + i)? as i16;
            if !(0..10000).contains(&d) {
                bail!(
                    INVALID_BINARY_REPRESENTATION,
                    "invalid digit in external \"numeric\" value"
                );
            }
            digits.push_str(&format!("{d:04}"));
        }
        if buf.len() > 8 + 2 * ndigits {
            bail!(INVALID_BINARY_REPRESENTATION, "incorrect binary data format");
        }
        match sign {
            NUMERIC_NAN => return Ok(Numeric::NaN),
            NUMERIC_PINF => return Ok(Numeric::PosInf),
            NUMERIC_NINF => return Ok(Numeric::NegInf),
            _ => {}
        }
        let dscale = dscale as i64;
        if ndigits == 0 {
            return make_finite(BigInt::zero(), dscale);
        }
        // value = D * 10^(4 * (weight + 1 - ndigits)); at dscale that is
        // D * 10^(4 * (weight + 1 - ndigits) + dscale), truncated.
        let d = BigInt::from_str(&digits).expect("digits");
        let exp = DEC_DIGITS * (weight + 1 - ndigits as i64) + dscale;
        if exp > 0 && lead_exp(&d, 0) + exp - dscale >= MAX_INT_DIGITS {
            return Err(overflow_error());
        }
        let mut int = if exp >= 0 {
            mul_pow10(&d, exp as u64)
        } else {
            div_pow10_trunc(&d, (-exp) as u64)
        };
        if sign == NUMERIC_NEG {
            int = -int;
        }
        make_finite(int, dscale)
    }
}
