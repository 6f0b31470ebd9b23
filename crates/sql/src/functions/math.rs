//! Integer and floating-point arithmetic and math functions (int.c,
//! int8.c, float.c), with PostgreSQL's overflow and domain errors.

use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_f64, division_by_zero, int_out_of_range, plain, FnCtx, Registry};

/// Wraps an integer result in the function's declared result type.
fn int_result(v: i128, ctx: &FnCtx) -> PgResult<Datum> {
    match ctx.ret.oid {
        oid::INT2 => i16::try_from(v).map(Datum::Int2).map_err(|_| int_out_of_range("smallint")),
        oid::INT4 => i32::try_from(v).map(Datum::Int4).map_err(|_| int_out_of_range("integer")),
        _ => i64::try_from(v).map(Datum::Int8).map_err(|_| int_out_of_range("bigint")),
    }
}

fn ints(a: &[Datum]) -> (i128, i128) {
    (a[0].as_i64().unwrap_or(0) as i128, a[1].as_i64().unwrap_or(0) as i128)
}

fn int_add(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x + y, c)
}
fn int_sub(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x - y, c)
}
fn int_mul(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x * y, c)
}
fn int_div(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    if y == 0 {
        return Err(division_by_zero());
    }
    // Truncation toward zero, as C.
    int_result(x / y, c)
}
fn int_mod(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    if y == 0 {
        return Err(division_by_zero());
    }
    int_result(x % y, c)
}
fn int_neg(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    int_result(-(a[0].as_i64().unwrap_or(0) as i128), c)
}
fn int_pos(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}
fn int_abs(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    int_result((a[0].as_i64().unwrap_or(0) as i128).abs(), c)
}
fn int_and(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x & y, c)
}
fn int_or(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x | y, c)
}
fn int_xor(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x ^ y, c)
}
fn int_not(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    int_result(!(a[0].as_i64().unwrap_or(0) as i128), c)
}
/// Shifts operate within the type's width and wrap as C does.
fn int_shl(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let sh = a[1].as_i64().unwrap_or(0) as u32;
    Ok(match &a[0] {
        Datum::Int2(v) => Datum::Int2(v.wrapping_shl(sh)),
        Datum::Int4(v) => Datum::Int4(v.wrapping_shl(sh)),
        d => {
            let _ = c;
            Datum::Int8(d.as_i64().unwrap_or(0).wrapping_shl(sh))
        }
    })
}
fn int_shr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let sh = a[1].as_i64().unwrap_or(0) as u32;
    Ok(match &a[0] {
        Datum::Int2(v) => Datum::Int2(v.wrapping_shr(sh)),
        Datum::Int4(v) => Datum::Int4(v.wrapping_shr(sh)),
        d => Datum::Int8(d.as_i64().unwrap_or(0).wrapping_shr(sh)),
    })
}
fn int_larger(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x.max(y), c)
}
fn int_smaller(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    int_result(x.min(y), c)
}
fn int_gcd(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (mut x, mut y) = ints(a);
    while y != 0 {
        let t = x % y;
        x = y;
        y = t;
    }
    int_result(x.abs(), c)
}
fn int_lcm(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = ints(a);
    if x == 0 || y == 0 {
        return int_result(0, c);
    }
    let (mut g, mut h) = (x, y);
    while h != 0 {
        let t = g % h;
        g = h;
        h = t;
    }
    int_result((x / g * y).abs(), c)
}

// ---------------------------------------------------------------- floats

fn overflow() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
}

fn underflow() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow")
}

/// Wraps a float result in the declared type, raising PostgreSQL's
/// overflow/underflow errors when finite inputs produced an infinite or zero result.
fn float_result(v: f64, inputs_inf: bool, zero_ok: bool, ctx: &FnCtx) -> PgResult<Datum> {
    if ctx.ret.oid == oid::FLOAT4 {
        let f = v as f32;
        if f.is_infinite() && !inputs_inf {
            return Err(overflow());
        }
        if f == 0.0 && !zero_ok {
            return Err(underflow());
        }
        return Ok(Datum::Float4(f));
    }
    if v.is_infinite() && !inputs_inf {
        return Err(overflow());
    }
    if v == 0.0 && !zero_ok {
        return Err(underflow());
    }
    Ok(Datum::Float8(v))
}

fn floats(a: &[Datum]) -> (f64, f64) {
    (arg_f64(a, 0), arg_f64(a, 1))
}

fn float_add(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    float_result(x + y, x.is_infinite() || y.is_infinite(), true, c)
}
fn float_sub(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    float_result(x - y, x.is_infinite() || y.is_infinite(), true, c)
}
fn float_mul(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    let r = x * y;
    float_result(r, x.is_infinite() || y.is_infinite(), x == 0.0 || y == 0.0, c)
}
fn float_div(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    if y == 0.0 && !y.is_nan() {
        return Err(division_by_zero());
    }
    float_result(x / y, x.is_infinite(), x == 0.0 || y.is_infinite(), c)
}
fn float_neg(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    float_result(-arg_f64(a, 0), true, true, c)
}
fn float_pos(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}
fn float_abs(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    float_result(arg_f64(a, 0).abs(), true, true, c)
}
fn float_larger(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    let r = if tusk_types::datum::float_cmp(x, y) == std::cmp::Ordering::Less { y } else { x };
    float_result(r, true, true, c)
}
fn float_smaller(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    let r = if tusk_types::datum::float_cmp(x, y) == std::cmp::Ordering::Greater { y } else { x };
    float_result(r, true, true, c)
}

fn f8(v: f64) -> PgResult<Datum> {
    Ok(Datum::Float8(v))
}

fn dround(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    // rint(): ties to even, as PostgreSQL's round(double precision).
    f8(arg_f64(a, 0).round_ties_even())
}
fn dtrunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(arg_f64(a, 0).trunc())
}
fn dceil(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(arg_f64(a, 0).ceil())
}
fn dfloor(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(arg_f64(a, 0).floor())
}
fn dsign(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_f64(a, 0);
    f8(if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    })
}
fn dsqrt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_f64(a, 0);
    if v < 0.0 {
        return Err(PgError::new(sqlstate::INVALID_ARGUMENT_FOR_POWER_FUNCTION, "cannot take square root of a negative number"));
    }
    f8(v.sqrt())
}
/// The C library's cbrt, which PostgreSQL calls: it is not correctly
/// rounded (cbrt(27) = 3.0000000000000004) and Rust's is, so calling Rust's
/// would print different digits than PostgreSQL. The binary also carries a
/// static `cbrt` (compiler-builtins' libm) that a plain `extern` binds to,
/// so glibc's is looked up in libm.so.6 at run time.
fn libm_cbrt(x: f64) -> f64 {
    use std::ffi::{c_char, c_int, c_void};
    use std::sync::OnceLock;
    type CFn = extern "C" fn(f64) -> f64;
    extern "C" {
        fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    static CBRT: OnceLock<Option<CFn>> = OnceLock::new();
    let cbrt = CBRT.get_or_init(|| {
        const RTLD_NOW: c_int = 2;
        // SAFETY: both strings are NUL-terminated; the handle is never
        // closed, so the symbol stays valid for the life of the process, and
        // libm's `cbrt` has the C signature `double cbrt(double)`.
        unsafe {
            let handle = dlopen(c"libm.so.6".as_ptr(), RTLD_NOW);
            if handle.is_null() {
                return None;
            }
            let sym = dlsym(handle, c"cbrt".as_ptr());
            (!sym.is_null()).then(|| std::mem::transmute::<*mut c_void, CFn>(sym))
        }
    });
    match cbrt {
        Some(f) => f(x),
        None => x.cbrt(),
    }
}

fn dcbrt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(libm_cbrt(arg_f64(a, 0)))
}
fn dpow(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = floats(a);
    if x == 0.0 && y < 0.0 {
        return Err(PgError::new(
            sqlstate::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.fract() != 0.0 && y.is_finite() {
        return Err(PgError::new(
            sqlstate::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(overflow());
    }
    if r == 0.0 && x != 0.0 && y.is_finite() && x.is_finite() {
        return Err(underflow());
    }
    f8(r)
}
fn dexp(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_f64(a, 0);
    let r = v.exp();
    if r.is_infinite() && v.is_finite() {
        return Err(overflow());
    }
    if r == 0.0 && v.is_finite() {
        return Err(underflow());
    }
    f8(r)
}
fn log_check(v: f64) -> PgResult<()> {
    if v == 0.0 {
        return Err(PgError::new(sqlstate::INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of zero"));
    }
    if v < 0.0 {
        return Err(PgError::new(sqlstate::INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of a negative number"));
    }
    Ok(())
}
fn dlog1(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_f64(a, 0);
    log_check(v)?;
    f8(v.ln())
}
fn dlog10(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_f64(a, 0);
    log_check(v)?;
    f8(v.log10())
}
fn dpi(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(std::f64::consts::PI)
}
fn radians(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(arg_f64(a, 0).to_radians())
}
fn degrees(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    f8(arg_f64(a, 0).to_degrees())
}

fn input_out_of_range() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "input is out of range")
}

macro_rules! trig {
    ($name:ident, $f:expr, $check:expr) => {
        fn $name(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            let v = arg_f64(a, 0);
            let check: fn(f64) -> bool = $check;
            if !v.is_nan() && !check(v) {
                return Err(input_out_of_range());
            }
            let f: fn(f64) -> f64 = $f;
            f8(f(v))
        }
    };
}
trig!(dsin, f64::sin, |v| v.is_finite());
trig!(dcos, f64::cos, |v| v.is_finite());
trig!(dtan, f64::tan, |v| v.is_finite());
trig!(dasin, f64::asin, |v| (-1.0..=1.0).contains(&v));
trig!(dacos, f64::acos, |v| (-1.0..=1.0).contains(&v));
trig!(datan, f64::atan, |_| true);
trig!(dcot, |v: f64| 1.0 / v.tan(), |v| v.is_finite());
trig!(dsinh, f64::sinh, |_| true);
trig!(dcosh, f64::cosh, |_| true);
trig!(dtanh, f64::tanh, |_| true);
trig!(dasinh, f64::asinh, |_| true);
trig!(dacosh, f64::acosh, |v| v >= 1.0);
trig!(datanh, f64::atanh, |v| (-1.0..=1.0).contains(&v));
trig!(dsind, |v: f64| exact_degrees(v.to_radians().sin()), |v| v.is_finite());
trig!(dcosd, |v: f64| exact_degrees(v.to_radians().cos()), |v| v.is_finite());
trig!(dtand, |v: f64| exact_degrees(v.to_radians().tan()), |v| v.is_finite());
trig!(dasind, |v: f64| v.asin().to_degrees(), |v| (-1.0..=1.0).contains(&v));
trig!(dacosd, |v: f64| v.acos().to_degrees(), |v| (-1.0..=1.0).contains(&v));
trig!(datand, |v: f64| v.atan().to_degrees(), |_| true);

/// The degree-based trigonometric functions give exact results at the
/// standard angles; rounding tiny residues keeps e.g. sind(30) = 0.5.
fn exact_degrees(v: f64) -> f64 {
    let r = (v * 1e15).round() / 1e15;
    if (r - v).abs() < 1e-15 {
        r
    } else {
        v
    }
}

fn datan2(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (y, x) = floats(a);
    f8(y.atan2(x))
}
fn datan2d(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (y, x) = floats(a);
    f8(y.atan2(x).to_degrees())
}

fn width_bucket_float8(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let op = arg_f64(a, 0);
    let lo = arg_f64(a, 1);
    let hi = arg_f64(a, 2);
    let count = a[3].as_i64().unwrap_or(0);
    if count <= 0 {
        return Err(PgError::new(
            sqlstate::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "count must be greater than zero",
        ));
    }
    if lo == hi {
        return Err(PgError::new(
            sqlstate::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "lower bound cannot equal upper bound",
        ));
    }
    if op.is_nan() || lo.is_nan() || hi.is_nan() || lo.is_infinite() || hi.is_infinite() {
        return Err(PgError::new(
            sqlstate::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "lower and upper bounds must be finite",
        ));
    }
    let n = count as f64;
    let bucket = if lo < hi {
        if op < lo {
            0
        } else if op >= hi {
            count + 1
        } else {
            ((n * (op - lo) / (hi - lo)) as i64) + 1
        }
    } else if op > lo {
        0
    } else if op <= hi {
        count + 1
    } else {
        ((n * (lo - op) / (lo - hi)) as i64) + 1
    };
    i32::try_from(bucket).map(Datum::Int4).map_err(|_| int_out_of_range("integer"))
}

pub(super) fn register(r: &mut Registry) {
    for w in ["int2", "int4", "int8", "int24", "int42", "int28", "int82", "int48", "int84"] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{w}pl"))], int_add);
        plain(r, &[leak(format!("{w}mi"))], int_sub);
        plain(r, &[leak(format!("{w}mul"))], int_mul);
        plain(r, &[leak(format!("{w}div"))], int_div);
    }
    for w in ["int2", "int4", "int8"] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{w}mod"))], int_mod);
        plain(r, &[leak(format!("{w}um"))], int_neg);
        plain(r, &[leak(format!("{w}up"))], int_pos);
        plain(r, &[leak(format!("{w}abs"))], int_abs);
        plain(r, &[leak(format!("{w}and"))], int_and);
        plain(r, &[leak(format!("{w}or"))], int_or);
        plain(r, &[leak(format!("{w}xor"))], int_xor);
        plain(r, &[leak(format!("{w}not"))], int_not);
        plain(r, &[leak(format!("{w}shl"))], int_shl);
        plain(r, &[leak(format!("{w}shr"))], int_shr);
        plain(r, &[leak(format!("{w}larger"))], int_larger);
        plain(r, &[leak(format!("{w}smaller"))], int_smaller);
        plain(r, &[leak(format!("{w}gcd"))], int_gcd);
        plain(r, &[leak(format!("{w}lcm"))], int_lcm);
    }
    for w in ["float4", "float8", "float48", "float84"] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{w}pl"))], float_add);
        plain(r, &[leak(format!("{w}mi"))], float_sub);
        plain(r, &[leak(format!("{w}mul"))], float_mul);
        plain(r, &[leak(format!("{w}div"))], float_div);
    }
    plain(r, &["float4um", "float8um"], float_neg);
    plain(r, &["float4up", "float8up"], float_pos);
    plain(r, &["float4abs", "float8abs"], float_abs);
    plain(r, &["float4larger", "float8larger"], float_larger);
    plain(r, &["float4smaller", "float8smaller"], float_smaller);
    plain(r, &["dround"], dround);
    plain(r, &["dtrunc"], dtrunc);
    plain(r, &["dceil"], dceil);
    plain(r, &["dfloor"], dfloor);
    plain(r, &["dsign"], dsign);
    plain(r, &["dsqrt"], dsqrt);
    plain(r, &["dcbrt"], dcbrt);
    plain(r, &["dpow"], dpow);
    plain(r, &["dexp"], dexp);
    plain(r, &["dlog1"], dlog1);
    plain(r, &["dlog10"], dlog10);
    plain(r, &["dpi"], dpi);
    plain(r, &["radians"], radians);
    plain(r, &["degrees"], degrees);
    plain(r, &["dsin"], dsin);
    plain(r, &["dcos"], dcos);
    plain(r, &["dtan"], dtan);
    plain(r, &["dasin"], dasin);
    plain(r, &["dacos"], dacos);
    plain(r, &["datan"], datan);
    plain(r, &["datan2"], datan2);
    plain(r, &["dcot"], dcot);
    plain(r, &["dsinh"], dsinh);
    plain(r, &["dcosh"], dcosh);
    plain(r, &["dtanh"], dtanh);
    plain(r, &["dasinh"], dasinh);
    plain(r, &["dacosh"], dacosh);
    plain(r, &["datanh"], datanh);
    plain(r, &["dsind"], dsind);
    plain(r, &["dcosd"], dcosd);
    plain(r, &["dtand"], dtand);
    plain(r, &["dasind"], dasind);
    plain(r, &["dacosd"], dacosd);
    plain(r, &["datand"], datand);
    plain(r, &["datan2d"], datan2d);
    plain(r, &["width_bucket_float8"], width_bucket_float8);
}
