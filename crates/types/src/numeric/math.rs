//! sqrt, exp, ln, log and power for `numeric`.
//!
//! The *result scales* follow PostgreSQL 15 exactly (they are visible to
//! users), including its float-based estimates of a result's magnitude. The
//! *values* are computed our own way: in fixed point on big integers, with
//! guard digits beyond the result scale, then rounded half away from zero.
//! PostgreSQL's algorithms are designed to give the correctly rounded result
//! at that scale too, so both agree except in pathological ties.

use std::sync::Mutex;

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::{
    div_at_scale, div_round, lead_exp, make_finite, mul_pow10, nbase_lead, num_digits, overflow_error, pow10,
    rescale_round, rescale_trunc, split, Numeric, DEC_DIGITS, MAX_INT_DIGITS, NUMERIC_MAX_DISPLAY_SCALE,
    NUMERIC_MAX_RESULT_SCALE, NUMERIC_MIN_DISPLAY_SCALE, NUMERIC_MIN_SIG_DIGITS,
};
use crate::error::PgResult;
use crate::{bail, pg_err};

/// Extra decimal digits carried beyond what a result needs.
const GUARD: i64 = 10;

/// log10(e) and ln(10) exactly as PostgreSQL spells them in its scale
/// estimates: the scales it picks depend on these very digits.
#[allow(clippy::approx_constant)]
const LOG10_E: f64 = 0.434294481903252;
#[allow(clippy::approx_constant)]
const LN_10_PG: f64 = 2.302585092994046;

/// Clamps a computed result scale the way every numeric function does.
fn clamp_rscale(rscale: i64) -> i64 {
    rscale.clamp(NUMERIC_MIN_DISPLAY_SCALE, NUMERIC_MAX_DISPLAY_SCALE)
}

/// Number of decimal digits of |v| (at least 1).
fn int_digits(v: i64) -> i64 {
    (v.unsigned_abs().max(1).ilog10() + 1) as i64
}

// ---------------------------------------------------------------------------
// Fixed-point kernels: a real x is held as the BigInt round(x * 10^w)
// ---------------------------------------------------------------------------

/// floor(sqrt(x)) for x = int / 10^scale, at `rscale` fractional digits,
/// rounded half away from zero. Exact: the truncated root with one extra
/// digit decides the rounding, as in sqrt_var.
fn sqrt_round(int: &BigInt, scale: i64, rscale: i64) -> BigInt {
    // N = x * 10^(2 * (rscale + 1)); floor(sqrt(floor(N))) = floor(sqrt(N)).
    let n = rescale_trunc(int, scale, 2 * (rscale + 1));
    let root = BigInt::from(n.magnitude().sqrt());
    div_round_last_digit(&root)
}

/// Drops the last decimal digit of a non-negative integer, rounding on it.
fn div_round_last_digit(x: &BigInt) -> BigInt {
    let (q, r) = num_integer::Integer::div_rem(x, &BigInt::from(10));
    if r >= BigInt::from(5) {
        q + 1
    } else {
        q
    }
}

/// ln(m / 10^w) at scale w, for m / 10^w in roughly [0.5, 10]. Square roots
/// bring the argument within 1% of 1, then the series of
/// 2 atanh(z) = ln((1+z)/(1-z)) converges by about 4.6 digits per term.
fn ln_reduced(m: &BigInt, w: i64) -> BigInt {
    // Each square root doubles the weight of later errors; 6 digits absorb the 2^9 factor.
    let ws = w + 6;
    let one = BigInt::from(pow10(ws as u64));
    let mut x = mul_pow10(m, 6);
    let high = &one * 101 / 100;
    let low = &one * 99 / 100;
    let mut k = 0u32;
    while x > high || x < low {
        x = BigInt::from((&x * &one).magnitude().sqrt());
        k += 1;
    }
    let z = (&x - &one) * &one / (&x + &one);
    let z2 = &z * &z / &one;
    let mut sum = z.clone();
    let mut power = z;
    let mut i = 1u32;
    loop {
        power = power * &z2 / &one;
        i += 2;
        let term = &power / i;
        if term.is_zero() {
            break;
        }
        sum += term;
    }
    rescale_round(&(sum << (k + 1)), ws, w)
}

/// ln(10) at scale w, cached: it is needed by every ln and exp.
fn ln10(w: i64) -> BigInt {
    static CACHE: Mutex<Option<(i64, BigInt)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((cw, v)) = cache.as_ref() {
        if *cw >= w + 2 {
            return rescale_round(v, *cw, w);
        }
    }
    // Compute a little more than asked so that nearby requests hit the cache.
    let cw = w + 32;
    let v = ln_reduced(&BigInt::from(pow10(cw as u64 + 1)), cw);
    let out = rescale_round(&v, cw, w);
    *cache = Some((cw, v));
    out
}

/// ln(int / 10^scale) at scale w (absolute error below one unit there);
/// `int` must be positive.
fn ln_fixed(int: &BigInt, scale: i64, w: i64) -> BigInt {
    let nd = num_digits(int.magnitude()) as i64;
    // x = m * 10^e with m in [1, 10)
    let e = nd - 1 - scale;
    // e * ln(10) multiplies ln(10)'s error by |e|: carry that many more digits.
    let ew = w + 4 + int_digits(e);
    let m = rescale_trunc(int, nd - 1, ew);
    let mut r = ln_reduced(&m, ew);
    if e != 0 {
        r += ln10(ew) * e;
    }
    rescale_round(&r, ew, w)
}

/// An f64 approximation of int / 10^scale (may be infinite).
fn approx_f64(int: &BigInt, scale: i64) -> f64 {
    let nd = num_digits(int.magnitude()) as i64;
    if nd == 0 {
        return 0.0;
    }
    // Keep 17 significant digits, then apply the decimal exponent.
    let keep = nd.min(17);
    let top = rescale_trunc(int, 0, keep - nd).to_f64().unwrap_or(0.0);
    let exp10 = nd - keep - scale;
    top * 10f64.powi(exp10.clamp(-400, 400) as i32)
}

/// log10(|int / 10^scale|) as an f64; int nonzero.
fn log10_abs(int: &BigInt, scale: i64) -> f64 {
    let nd = num_digits(int.magnitude()) as i64;
    let keep = nd.min(17);
    let top = rescale_trunc(int, 0, keep - nd).abs().to_f64().unwrap_or(1.0);
    top.log10() + (nd - keep - scale) as f64
}

/// e^(y / 10^ys) rounded half away from zero at scale p.
///
/// Writes e^y = 10^k * e^r with r = y - k ln(10) in [0, ln 10), so that the
/// work is proportional to the significant digits the result needs, then
/// computes e^r by halving r until it is below 0.01, summing the Taylor
/// series and squaring back.
fn exp_fixed(y: &BigInt, ys: i64, p: i64) -> BigInt {
    let yf = approx_f64(y, ys);
    let k = (yf / std::f64::consts::LN_10).floor() as i64;
    // e^r < 10.01, so the result is below 0.5 * 10^-p when k + 2 + p <= 0.
    if k + 2 + p <= 0 {
        return BigInt::zero();
    }
    let sig = (k + 1 + p).max(0);
    let mut rf = yf - k as f64 * std::f64::consts::LN_10;
    let mut j = 0u32;
    while rf.abs() > 0.01 {
        rf /= 2.0;
        j += 1;
    }
    // Squaring j times multiplies the relative error by 2^j.
    let wj = sig + GUARD + 3 + (j as i64 * 3 + 9) / 10;
    let wl = wj + int_digits(k) + 2;
    let mut r = rescale_trunc(y, ys, wl);
    if k != 0 {
        r -= ln10(wl) * k;
    }
    let r = rescale_trunc(&r, wl, wj) >> j;
    let one = BigInt::from(pow10(wj as u64));
    let mut sum = &one + &r;
    let mut term = r.clone();
    let mut n = 1u32;
    loop {
        n += 1;
        term = term * &r / &one / n;
        if term.is_zero() {
            break;
        }
        sum += &term;
    }
    for _ in 0..j {
        sum = &sum * &sum / &one;
    }
    rescale_round(&sum, wj - k, p)
}

// ---------------------------------------------------------------------------
// Scale estimates, as PostgreSQL makes them
// ---------------------------------------------------------------------------

/// estimate_ln_dweight: approximately floor(log10(|ln(x)|)), computed from
/// the first base-10000 digits as PostgreSQL does, since it picks scales.
fn estimate_ln_dweight(int: &BigInt, scale: i64) -> i64 {
    if int.sign() != Sign::Plus {
        return 0;
    }
    // 0.9 <= x <= 1.1: ln(x) ~ x - 1
    let tenths = rescale_trunc(int, scale, 1); // floor(x * 10) for x > 0
    let exact_tenths = rescale_trunc(&tenths, 1, scale) == *int;
    let ge_09 = tenths >= BigInt::from(9);
    let le_11 = tenths < BigInt::from(11) || (tenths == BigInt::from(11) && exact_tenths);
    if ge_09 && le_11 {
        let x = int - mul_pow10(&BigInt::one(), scale as u64);
        return match nbase_lead(&x, scale) {
            // weight * DEC_DIGITS + (int) log10(first digit)
            Some(l) => l.weight * DEC_DIGITS + (l.d0 as f64).log10() as i64,
            None => 0,
        };
    }
    match nbase_lead(int, scale) {
        Some(l) => {
            let mut digits = l.d0 as f64;
            let mut dweight = l.weight * DEC_DIGITS;
            if let Some(d1) = l.d1 {
                digits = digits * 10000.0 + d1 as f64;
                dweight -= DEC_DIGITS;
            }
            let ln_var = digits.ln() + dweight as f64 * LN_10_PG;
            ln_var.abs().log10() as i64
        }
        None => 0,
    }
}

fn negative_log_error() -> crate::error::PgError {
    pg_err!(
        INVALID_ARGUMENT_FOR_LOGARITHM,
        "cannot take logarithm of a negative number"
    )
}

fn zero_log_error() -> crate::error::PgError {
    pg_err!(INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of zero")
}

/// ln_var's argument checks.
fn check_ln_arg(int: &BigInt) -> PgResult<()> {
    match int.sign() {
        Sign::NoSign => Err(zero_log_error()),
        Sign::Minus => Err(negative_log_error()),
        Sign::Plus => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// The SQL-level functions
// ---------------------------------------------------------------------------

impl Numeric {
    /// `sqrt(numeric)`: at least 16 significant digits, no fewer fractional
    /// digits than the input.
    pub fn sqrt(&self) -> PgResult<Numeric> {
        let d = match self {
            Numeric::NegInf => {
                bail!(
                    INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                    "cannot take square root of a negative number"
                )
            }
            Numeric::Finite(d) => d,
            other => return Ok(other.clone()),
        };
        let (int, scale) = split(d);
        if int.sign() == Sign::Minus {
            bail!(
                INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                "cannot take square root of a negative number"
            );
        }
        // The result has about weight * DEC_DIGITS / 2 + 1 digits before the point.
        let weight = nbase_lead(&int, scale).map_or(0, |l| l.weight);
        let sweight = weight * DEC_DIGITS / 2 + 1;
        let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS - sweight).max(scale));
        make_finite(sqrt_round(&int, scale, rscale), rscale)
    }

    /// `exp(numeric)`.
    pub fn exp(&self) -> PgResult<Numeric> {
        let d = match self {
            Numeric::NegInf => return Ok(Numeric::zero()),
            Numeric::Finite(d) => d,
            other => return Ok(other.clone()),
        };
        let (int, scale) = split(d);
        let val = self.to_f64_lossy();
        // log10(e^x) = x * log10(e) estimates the result's decimal weight.
        let dweight = (val * LOG10_E).clamp(-(NUMERIC_MAX_RESULT_SCALE as f64), NUMERIC_MAX_RESULT_SCALE as f64);
        let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS - dweight as i64).max(scale));
        exp_checked(&int, scale, val, rscale)
    }

    /// `ln(numeric)`.
    pub fn ln(&self) -> PgResult<Numeric> {
        let d = match self {
            Numeric::NegInf => return Err(negative_log_error()),
            Numeric::Finite(d) => d,
            other => return Ok(other.clone()),
        };
        let (int, scale) = split(d);
        let ln_dweight = estimate_ln_dweight(&int, scale);
        let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS - ln_dweight).max(scale));
        check_ln_arg(&int)?;
        let r = ln_fixed(&int, scale, rscale + GUARD);
        make_finite(rescale_round(&r, rscale + GUARD, rscale), rscale)
    }

    /// `log(numeric)`: the base-10 logarithm, which PostgreSQL defines as `log(10, x)`.
    pub fn log10(&self) -> PgResult<Numeric> {
        Numeric::log(&Numeric::from(10), self)
    }

    /// `log(base, x)`: the logarithm of `x` to base `base`.
    pub fn log(base: &Numeric, x: &Numeric) -> PgResult<Numeric> {
        let (b, n) = match (base, x) {
            (Numeric::Finite(b), Numeric::Finite(n)) => (b, n),
            _ => {
                if base.is_nan() || x.is_nan() {
                    return Ok(Numeric::NaN);
                }
                let (sign1, sign2) = (base.signum_i(), x.signum_i());
                if sign1 < 0 || sign2 < 0 {
                    return Err(negative_log_error());
                }
                if sign1 == 0 || sign2 == 0 {
                    return Err(zero_log_error());
                }
                if matches!(base, Numeric::PosInf) {
                    // log(Inf, Inf) is Inf/Inf; log(Inf, finite) is zero (no underflow error)
                    return Ok(if matches!(x, Numeric::PosInf) {
                        Numeric::NaN
                    } else {
                        Numeric::zero()
                    });
                }
                return Ok(Numeric::PosInf);
            }
        };
        let (bi, bs) = split(b);
        let (ni, ns) = split(n);
        let ln_base_dweight = estimate_ln_dweight(&bi, bs);
        let ln_num_dweight = estimate_ln_dweight(&ni, ns);
        let result_dweight = ln_num_dweight - ln_base_dweight;
        let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS - result_dweight).max(bs).max(ns));
        check_ln_arg(&bi)?;
        check_ln_arg(&ni)?;
        // Scales for the two logarithms so that the quotient is good to
        // rscale + GUARD digits (the estimates may be off by one, hence +2).
        let wn = (rscale - ln_base_dweight + GUARD + 2).max(GUARD);
        let wb = (rscale + result_dweight - ln_base_dweight + GUARD + 2).max(GUARD);
        let ln_b = ln_fixed(&bi, bs, wb);
        if ln_b.is_zero() {
            bail!(DIVISION_BY_ZERO, "division by zero");
        }
        let ln_n = ln_fixed(&ni, ns, wn);
        let q = div_at_scale(&ln_n, wn, &ln_b, wb, rscale + GUARD, false);
        make_finite(rescale_round(&q, rscale + GUARD, rscale), rscale)
    }

    /// `numeric ^ numeric` and `power(numeric, numeric)`.
    pub fn power(&self, exp: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        let (b, e) = match (self, exp) {
            (Finite(b), Finite(e)) => (b, e),
            _ => return power_special(self, exp),
        };
        let (sign1, sign2) = (self.signum_i(), exp.signum_i());
        if sign1 == 0 && sign2 < 0 {
            bail!(
                INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                "zero raised to a negative power is undefined"
            );
        }
        if sign1 < 0 && !exp.is_integral() {
            bail!(
                INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                "a negative number raised to a non-integer power yields a complex result"
            );
        }
        let (bi, bs) = split(b);
        let (ei, es) = split(e);

        // Integral exponents that fit an int32 multiply out (power_var_int).
        if exp.is_integral() {
            if let Some(n) = rescale_trunc(&ei, es, 0).to_i32() {
                let rscale = clamp_rscale(NUMERIC_MIN_SIG_DIGITS.max(bs));
                return power_int(&bi, bs, n as i64, rscale);
            }
        }
        if bi.is_zero() {
            // 0 ^ positive non-integer
            return make_finite(BigInt::zero(), NUMERIC_MIN_SIG_DIGITS);
        }
        // A negative base has an integral exponent here: its parity gives the sign.
        let negative = bi.sign() == Sign::Minus && {
            let t = rescale_trunc(&ei, es, 0);
            t.magnitude().bit(0)
        };
        let abs_b = bi.abs();

        // PostgreSQL first computes exp * ln(base) to about 8 significant
        // digits to estimate the result's weight, which sets the scale.
        let ln_dweight = estimate_ln_dweight(&abs_b, bs);
        let local_rscale = (8 - ln_dweight).max(NUMERIC_MIN_DISPLAY_SCALE);
        let ln_base = ln_fixed(&abs_b, bs, local_rscale);
        let ln_num = rescale_round(&(&ln_base * ei.as_ref()), local_rscale + es, local_rscale);
        let mut val = approx_f64(&ln_num, local_rscale);
        if val.abs() > NUMERIC_MAX_RESULT_SCALE as f64 * 3.01 {
            if val > 0.0 {
                return Err(overflow_error());
            }
            return make_finite(BigInt::zero(), NUMERIC_MAX_DISPLAY_SCALE);
        }
        val *= LOG10_E;
        let rscale = clamp_rscale((NUMERIC_MIN_SIG_DIGITS - val as i64).max(bs).max(es));

        // Now exp * ln(base) with enough digits for rscale digits of the result.
        let sig_digits = (rscale + val.ceil() as i64).max(0);
        let wy = sig_digits + GUARD + 2;
        let exp_int_digits = if ei.is_zero() {
            0
        } else {
            (lead_exp(&ei, es) + 1).max(0)
        };
        let wl = wy + exp_int_digits + 2;
        let y = ln_fixed(&abs_b, bs, wl) * ei.as_ref(); // at scale wl + es
        let result = exp_checked(&y, wl + es, approx_f64(&y, wl + es), rscale)?;
        Ok(if negative { result.neg() } else { result })
    }
}

/// exp_var: e^(int / 10^scale) at rscale, with its range check (`val` is
/// the argument as a double).
fn exp_checked(int: &BigInt, scale: i64, val: f64, rscale: i64) -> PgResult<Numeric> {
    if val.abs() >= NUMERIC_MAX_RESULT_SCALE as f64 * 3.0 {
        if val > 0.0 {
            return Err(overflow_error());
        }
        return make_finite(BigInt::zero(), rscale);
    }
    make_finite(exp_fixed(int, scale, rscale), rscale)
}

/// power_var_int: base ^ n for an integer n, rounded at rscale.
fn power_int(bi: &BigInt, bs: i64, n: i64, rscale: i64) -> PgResult<Numeric> {
    // The short cases are exact operations followed by one rounding, as in PostgreSQL.
    match n {
        0 => return make_finite(mul_pow10(&BigInt::one(), rscale as u64), rscale),
        1 => return make_finite(rescale_round(bi, bs, rscale), rscale),
        -1 => return make_finite(div_at_scale(&BigInt::one(), 0, bi, bs, rscale, true), rscale),
        2 => return make_finite(rescale_round(&(bi * bi), 2 * bs, rscale), rscale),
        _ => {}
    }
    if bi.is_zero() {
        // n > 0 here: 0 ^ negative was rejected by the caller
        return make_finite(BigInt::zero(), rscale);
    }
    // Decimal weight of the result, for the range checks and the precision.
    let f = n as f64 * log10_abs(bi, bs);
    if f > MAX_INT_DIGITS as f64 + 0.5 {
        return Err(overflow_error());
    }
    if f + 1.0 < -(rscale as f64) || f + 1.0 < -(NUMERIC_MAX_DISPLAY_SCALE as f64) {
        return make_finite(BigInt::zero(), rscale);
    }
    let negative = bi.sign() == Sign::Minus && n % 2 != 0;
    let absn = n.unsigned_abs();
    // Significant digits the result needs, plus room for the rounding error
    // of the repeated multiplications.
    let precision = (1 + rscale + f.ceil() as i64).max(1) + 2 * int_digits(n) + GUARD;
    let (m, e) = pow_truncated(bi.magnitude(), absn, precision as u64);
    // |base|^|n| = m * 10^(e - bs * |n|)
    let e = e - bs * absn as i64;
    let mag = if n > 0 {
        rescale_round(&BigInt::from(m), -e, rscale)
    } else {
        // 10^rscale / (m * 10^e) = 10^(rscale - e) / m
        let shift = rscale - e;
        let m = BigInt::from(m);
        if shift >= 0 {
            div_round(&mul_pow10(&BigInt::one(), shift as u64), &m)
        } else {
            div_round(&BigInt::one(), &mul_pow10(&m, (-shift) as u64))
        }
    };
    make_finite(if negative { -mag } else { mag }, rscale)
}

/// b^n as m * 10^e, keeping at least `precision` significant digits in every
/// intermediate product (exact whenever the products stay that short).
fn pow_truncated(b: &BigUint, n: u64, precision: u64) -> (BigUint, i64) {
    fn trim(m: BigUint, e: i64, precision: u64) -> (BigUint, i64) {
        let ub = (m.bits() as f64 * std::f64::consts::LOG10_2) as u64 + 1;
        if ub > precision + 1 {
            let drop = ub - precision - 1;
            (m / pow10(drop), e + drop as i64)
        } else {
            (m, e)
        }
    }
    let mut result = (BigUint::one(), 0i64);
    let mut base = trim(b.clone(), 0, precision);
    let mut n = n;
    loop {
        if n & 1 == 1 {
            result = trim(&result.0 * &base.0, result.1 + base.1, precision);
        }
        n >>= 1;
        if n == 0 {
            break;
        }
        base = trim(&base.0 * &base.0, 2 * base.1, precision);
    }
    result
}

/// numeric_power's rules for NaN and infinite inputs (POSIX pow()).
fn power_special(x: &Numeric, y: &Numeric) -> PgResult<Numeric> {
    use Numeric::*;
    let one = Numeric::one;
    if x.is_nan() {
        return Ok(if y.is_finite() && y.is_zero() { one() } else { NaN });
    }
    if y.is_nan() {
        return Ok(if x.is_finite() && *x == one() { one() } else { NaN });
    }
    let (sign1, sign2) = (x.signum_i(), y.signum_i());
    if sign1 == 0 && sign2 < 0 {
        bail!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined"
        );
    }
    if sign1 < 0 && !y.is_integral() {
        bail!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result"
        );
    }
    if x.is_finite() && *x == one() {
        return Ok(one());
    }
    if sign2 == 0 {
        return Ok(one());
    }
    if sign1 == 0 && sign2 > 0 {
        return Ok(Numeric::zero());
    }
    if y.is_infinite() {
        let abs_x_gt_one = match x {
            Finite(_) => {
                if *x == Numeric::from(-1) {
                    return Ok(one());
                }
                x.abs() > one()
            }
            _ => true,
        };
        return Ok(if abs_x_gt_one == (sign2 > 0) {
            PosInf
        } else {
            Numeric::zero()
        });
    }
    if matches!(x, PosInf) {
        return Ok(if sign2 > 0 { PosInf } else { Numeric::zero() });
    }
    // x is -Infinity, y finite and nonzero
    if sign2 < 0 {
        return Ok(Numeric::zero());
    }
    let odd_integer = match y {
        Finite(d) => {
            let (i, s) = split(d);
            y.is_integral() && rescale_trunc(&i, s, 0).magnitude().bit(0)
        }
        _ => false,
    };
    Ok(if odd_integer { NegInf } else { PosInf })
}

/// Square root helper for the variance aggregates: sqrt of a value already
/// rounded at `rscale`, at the same scale (sqrt_var).
pub(super) fn sqrt_at_scale(int: &BigInt, scale: i64, rscale: i64) -> BigInt {
    sqrt_round(int, scale, rscale)
}

#[cfg(test)]
mod kernel_tests {
    use super::*;

    // Expected digits from PostgreSQL 15: ln(10::numeric(70,60)) and exp(1::numeric(60,50)).
    #[test]
    fn ln10_digits() {
        let v = ln10(60);
        assert_eq!(
            v.to_string(),
            "2302585092994045684017991454684364207601101488628772976033328"
        );
    }

    #[test]
    fn exp_of_one() {
        let v = exp_fixed(&BigInt::one(), 0, 50);
        assert_eq!(v.to_string(), "271828182845904523536028747135266249775724709369996");
    }
}
