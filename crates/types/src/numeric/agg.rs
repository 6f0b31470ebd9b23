//! The transition state behind `sum`, `avg`, `var_*` and `stddev_*` over
//! numeric (and over integers, whose sums PostgreSQL also returns as numeric).
//!
//! PostgreSQL's NumericAggState keeps the count of finite inputs, their sum
//! (and optionally the sum of their squares) at the largest scale seen so
//! far, and separate counts of NaN and infinite inputs. We do the same, with
//! one speed-up: inputs whose unscaled value fits an i64 go into an i128
//! partial sum at the current scale, so that summing a column of ordinary
//! values costs no big-integer work per row. The big-integer part only
//! absorbs the partial sum when it would overflow or the scale grows.

use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::{make_finite, math, mul_pow10, select_div_scale, split, Numeric};
use crate::error::PgResult;

/// A sum kept at a fixed scale: `big + partial`, both unscaled at `scale`.
#[derive(Clone, Debug, Default)]
struct ScaledSum {
    big: BigInt,
    partial: i128,
    scale: i64,
}

impl ScaledSum {
    fn flush(&mut self) {
        if self.partial != 0 {
            self.big += BigInt::from(self.partial);
            self.partial = 0;
        }
    }

    /// Raises the scale (never lowers it: the sum's display scale is the largest input scale).
    fn rescale_to(&mut self, scale: i64) {
        if scale > self.scale {
            self.flush();
            self.big = mul_pow10(&self.big, (scale - self.scale) as u64);
            self.scale = scale;
        }
    }

    /// Adds (or subtracts) `int * 10^-scale`.
    fn add(&mut self, int: &BigInt, scale: i64, negate: bool) {
        self.rescale_to(scale);
        if scale == self.scale {
            if let Some(v) = int.to_i64() {
                let v = if negate { -(v as i128) } else { v as i128 };
                match self.partial.checked_add(v) {
                    Some(p) => self.partial = p,
                    None => {
                        self.flush();
                        self.partial = v;
                    }
                }
                return;
            }
        }
        let aligned = mul_pow10(int, (self.scale - scale) as u64);
        if negate {
            self.big -= aligned;
        } else {
            self.big += aligned;
        }
    }

    fn add_i64(&mut self, v: i64) {
        // An integer is at scale 0 <= self.scale.
        if self.scale == 0 {
            match self.partial.checked_add(v as i128) {
                Some(p) => self.partial = p,
                None => {
                    self.flush();
                    self.partial = v as i128;
                }
            }
        } else {
            self.big += mul_pow10(&BigInt::from(v), self.scale as u64);
        }
    }

    fn merge(&mut self, other: &ScaledSum) {
        let mut o = other.clone();
        o.flush();
        self.add(&o.big, o.scale, false);
    }

    fn value(&self) -> (BigInt, i64) {
        (&self.big + BigInt::from(self.partial), self.scale)
    }

    fn reset(&mut self) {
        *self = ScaledSum::default();
    }
}

/// Aggregate state for numeric sum/avg/variance/stddev (NumericAggState).
#[derive(Clone, Debug, Default)]
pub struct NumericAccum {
    /// Count of finite inputs.
    n: i64,
    sum: ScaledSum,
    /// Sum of squares, when variance/stddev is wanted.
    sum_sq: Option<ScaledSum>,
    /// Largest input scale and how many inputs have it, for `remove`.
    max_scale: i64,
    max_scale_count: i64,
    nan_count: i64,
    pinf_count: i64,
    ninf_count: i64,
}

impl NumericAccum {
    /// State for `sum` and `avg`.
    pub fn new() -> NumericAccum {
        NumericAccum::default()
    }

    /// State that also tracks the sum of squares, for `variance`/`stddev`.
    pub fn with_squares() -> NumericAccum {
        NumericAccum {
            sum_sq: Some(ScaledSum::default()),
            ..NumericAccum::default()
        }
    }

    /// Number of non-null inputs, NaN and infinities included.
    pub fn count(&self) -> i64 {
        self.n + self.nan_count + self.pinf_count + self.ninf_count
    }

    /// Accumulates one non-null input (do_numeric_accum).
    pub fn add(&mut self, value: &Numeric) {
        self.add_or_remove(value, false);
    }

    /// Accumulates an integer input (int2/int4/int8 aggregates), without building a Numeric.
    pub fn add_i64(&mut self, v: i64) {
        self.note_scale_added(0);
        self.n += 1;
        self.sum.add_i64(v);
        if let Some(sq) = self.sum_sq.as_mut() {
            let v2 = (v as i128) * (v as i128);
            match v2.to_i64() {
                Some(small) => sq.add_i64(small),
                None => sq.add(&BigInt::from(v2), 0, false),
            }
        }
    }

    /// Removes a previously added input, for moving-window aggregates
    /// (do_numeric_discard). Returns false when the state cannot tell the
    /// remaining inputs' scale; the caller must then recompute from scratch.
    pub fn remove(&mut self, value: &Numeric) -> bool {
        if let Numeric::Finite(d) = value {
            let scale = split(d).1;
            if scale == self.max_scale {
                if self.max_scale_count > 1 || self.max_scale == 0 {
                    self.max_scale_count -= 1;
                } else if self.n == 1 {
                    self.max_scale = 0;
                    self.max_scale_count = 0;
                } else {
                    return false;
                }
            }
        }
        self.add_or_remove(value, true);
        true
    }

    fn note_scale_added(&mut self, scale: i64) {
        if scale > self.max_scale {
            self.max_scale = scale;
            self.max_scale_count = 1;
        } else if scale == self.max_scale {
            self.max_scale_count += 1;
        }
    }

    fn add_or_remove(&mut self, value: &Numeric, remove: bool) {
        let delta = if remove { -1 } else { 1 };
        let d = match value {
            Numeric::NaN => return self.nan_count += delta,
            Numeric::PosInf => return self.pinf_count += delta,
            Numeric::NegInf => return self.ninf_count += delta,
            Numeric::Finite(d) => d,
        };
        let (int, scale) = split(d);
        if !remove {
            self.note_scale_added(scale);
        }
        if remove && self.n <= 1 {
            // Last finite input gone: start afresh, as accum_sum_reset does.
            self.n = 0;
            self.sum.reset();
            if let Some(sq) = self.sum_sq.as_mut() {
                sq.reset();
            }
            return;
        }
        self.n += delta;
        self.sum.add(&int, scale, remove);
        if let Some(sq) = self.sum_sq.as_mut() {
            sq.add(&(int.as_ref() * int.as_ref()), 2 * scale, remove);
        }
    }

    /// Combines another partial state into this one (numeric_combine).
    pub fn merge(&mut self, other: &NumericAccum) {
        self.nan_count += other.nan_count;
        self.pinf_count += other.pinf_count;
        self.ninf_count += other.ninf_count;
        if other.n > 0 {
            if other.max_scale > self.max_scale {
                self.max_scale = other.max_scale;
                self.max_scale_count = other.max_scale_count;
            } else if other.max_scale == self.max_scale {
                self.max_scale_count += other.max_scale_count;
            }
            self.n += other.n;
            self.sum.merge(&other.sum);
            match (self.sum_sq.as_mut(), other.sum_sq.as_ref()) {
                (Some(a), Some(b)) => a.merge(b),
                (Some(_), None) => {}
                (None, _) => {}
            }
        }
    }

    /// NaN/Infinity outcome shared by sum and avg, if any special input was seen.
    fn special_result(&self) -> Option<Numeric> {
        if self.nan_count > 0 || (self.pinf_count > 0 && self.ninf_count > 0) {
            Some(Numeric::NaN)
        } else if self.pinf_count > 0 {
            Some(Numeric::PosInf)
        } else if self.ninf_count > 0 {
            Some(Numeric::NegInf)
        } else {
            None
        }
    }

    /// `sum()`: None (SQL NULL) without inputs; the scale is the largest input scale.
    pub fn sum(&self) -> PgResult<Option<Numeric>> {
        if self.count() == 0 {
            return Ok(None);
        }
        if let Some(s) = self.special_result() {
            return Ok(Some(s));
        }
        let (int, scale) = self.sum.value();
        make_finite(int, scale).map(Some)
    }

    /// `avg()`: sum / count with numeric division's scale rules.
    pub fn avg(&self) -> PgResult<Option<Numeric>> {
        if self.count() == 0 {
            return Ok(None);
        }
        if let Some(s) = self.special_result() {
            return Ok(Some(s));
        }
        let (int, scale) = self.sum.value();
        make_finite(int, scale)?.div(&Numeric::from(self.n)).map(Some)
    }

    /// `var_samp` (sample = true) or `var_pop`.
    pub fn variance(&self, sample: bool) -> PgResult<Option<Numeric>> {
        self.stddev_internal(true, sample)
    }

    /// `stddev_samp` (sample = true) or `stddev_pop`.
    pub fn stddev(&self, sample: bool) -> PgResult<Option<Numeric>> {
        self.stddev_internal(false, sample)
    }

    /// numeric_stddev_internal: (N * sum(x^2) - sum(x)^2) / (N * (N - 1) or N * N),
    /// divided with select_div_scale's scale, and its square root at that same scale.
    fn stddev_internal(&self, variance: bool, sample: bool) -> PgResult<Option<Numeric>> {
        let total = self.count();
        if total == 0 || (sample && total <= 1) {
            return Ok(None);
        }
        // Like float8, any infinity makes the spread NaN.
        if self.nan_count > 0 || self.pinf_count > 0 || self.ninf_count > 0 {
            return Ok(Some(Numeric::NaN));
        }
        let sum_sq = self
            .sum_sq
            .as_ref()
            .expect("NumericAccum::with_squares() is needed for variance and stddev");
        let (sx, sx_scale) = self.sum.value();
        let (sx2, sx2_scale) = sum_sq.value();
        let n = BigInt::from(self.n);
        // Both products are exact at scale 2 * sx_scale (sx2's scale is twice the largest input scale).
        let rscale = 2 * sx_scale;
        let sx_sq = &sx * &sx;
        let n_sx2 = mul_pow10(&(&n * &sx2), (rscale - sx2_scale) as u64);
        let numerator = n_sx2 - sx_sq;
        if numerator.sign() != num_bigint::Sign::Plus {
            // Rounding cannot make it negative here, but PostgreSQL guards anyway; it returns a plain 0.
            return Ok(Some(Numeric::zero()));
        }
        let denominator = if sample { &n * (&n - 1) } else { &n * &n };
        let dscale = select_div_scale(&numerator, rscale, &denominator, 0);
        let var = super::div_at_scale(&numerator, rscale, &denominator, 0, dscale, true);
        let result = if variance {
            var
        } else {
            math::sqrt_at_scale(&var, dscale, dscale)
        };
        make_finite(result, dscale).map(Some)
    }
}
