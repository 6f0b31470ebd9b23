//! Unit tests for `numeric`.
//!
//! Every expected string below was obtained by running the same expression
//! on PostgreSQL 15.18 (`psql`), not taken from this implementation's output.
//! The case tables map an operation name to SQL as follows (a and b are the
//! case's inputs, quoted and cast with `::numeric`):
//!
//! | op | SQL | op | SQL |
//! |----|-----|----|-----|
//! | in | `'a'::numeric` | add/sub/mul/div/mod | `a + b`, `a - b`, `a * b`, `a / b`, `a % b` |
//! | divt | `div(a, b)` | round/trunc | `round(a, b)`, `trunc(a, b)` (b an int) |
//! | ceil/floor/abs/sign/scale/min_scale/trim_scale/sqrt/exp/ln | `f(a)` | neg | `-a` |
//! | log10 | `log(a)` | log | `log(a, b)` |
//! | pow | `a ^ b` | gcd/lcm | `gcd(a, b)`, `lcm(a, b)` |
//! | fac | `factorial(a::int8)` | typmod | `a::numeric(b)` (b = "p,s") |
//! | f8/f4 | `'a'::float8::numeric`, `'a'::float4::numeric` | tof8 | `a::float8` |
//! | int8/int4/int2 | `a::int8` ... | send | `numeric_send(a)` |
//! | wb | `width_bucket(a, lo, hi, count)` (b = "lo;hi;count") | | |
//! | sum/avg/var_samp/var_pop/stddev_samp/stddev_pop | the aggregate over the `;`-separated values of a | | |
//!
//! Errors are written "ERROR: <sqlstate> <message>".

use super::*;
use std::collections::hash_map::DefaultHasher;

fn n(s: &str) -> Numeric {
    Numeric::parse(s).unwrap_or_else(|e| panic!("parse {s:?}: {}", e.message))
}

fn eval(op: &str, a: &str, b: &str) -> PgResult<String> {
    let num = |s: &str| Numeric::parse(s);
    Ok(match op {
        "in" => num(a)?.to_string(),
        "add" => num(a)?.add(&num(b)?)?.to_string(),
        "sub" => num(a)?.sub(&num(b)?)?.to_string(),
        "mul" => num(a)?.mul(&num(b)?)?.to_string(),
        "div" => num(a)?.div(&num(b)?)?.to_string(),
        "mod" => num(a)?.modulo(&num(b)?)?.to_string(),
        "divt" => num(a)?.div_trunc(&num(b)?)?.to_string(),
        "round" => num(a)?.round(b.parse().unwrap())?.to_string(),
        "trunc" => num(a)?.trunc(b.parse().unwrap())?.to_string(),
        "ceil" => num(a)?.ceil()?.to_string(),
        "floor" => num(a)?.floor()?.to_string(),
        "sqrt" => num(a)?.sqrt()?.to_string(),
        "exp" => num(a)?.exp()?.to_string(),
        "ln" => num(a)?.ln()?.to_string(),
        "log10" => num(a)?.log10()?.to_string(),
        "log" => Numeric::log(&num(a)?, &num(b)?)?.to_string(),
        "pow" => num(a)?.power(&num(b)?)?.to_string(),
        "abs" => num(a)?.abs().to_string(),
        "neg" => num(a)?.neg().to_string(),
        "sign" => num(a)?.sign().to_string(),
        "scale" => num(a)?.scale().map_or("NULL".into(), |v| v.to_string()),
        "min_scale" => num(a)?.min_scale().map_or("NULL".into(), |v| v.to_string()),
        "trim_scale" => num(a)?.trim_scale().to_string(),
        "gcd" => num(a)?.gcd(&num(b)?)?.to_string(),
        "lcm" => num(a)?.lcm(&num(b)?)?.to_string(),
        "fac" => Numeric::factorial(a.parse().unwrap())?.to_string(),
        "typmod" => {
            let (p, s) = b.split_once(',').unwrap();
            num(a)?
                .apply_typmod(typmod(p.parse().unwrap(), s.parse().unwrap())?)?
                .to_string()
        }
        "f8" => Numeric::from_f64(a.parse().unwrap()).to_string(),
        "f4" => Numeric::from_f32(a.parse().unwrap()).to_string(),
        // compared numerically by the caller: PostgreSQL prints doubles its own way
        "tof8" => num(a)?.to_f64()?.to_string(),
        "int8" => num(a)?.to_i64()?.to_string(),
        "int4" => num(a)?.to_i32()?.to_string(),
        "int2" => num(a)?.to_i16()?.to_string(),
        "send" => format!(
            "\\x{}",
            num(a)?
                .to_binary()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        ),
        "wb" => {
            let v: Vec<&str> = b.split(';').collect();
            Numeric::width_bucket(&num(a)?, &num(v[0])?, &num(v[1])?, v[2].parse().unwrap())?.to_string()
        }
        "sum" | "avg" | "var_samp" | "var_pop" | "stddev_samp" | "stddev_pop" => {
            let mut acc = NumericAccum::with_squares();
            for v in a.split(';') {
                acc.add(&num(v)?);
            }
            let r = match op {
                "sum" => acc.sum()?,
                "avg" => acc.avg()?,
                "var_samp" => acc.variance(true)?,
                "var_pop" => acc.variance(false)?,
                "stddev_samp" => acc.stddev(true)?,
                _ => acc.stddev(false)?,
            };
            r.map_or("NULL".into(), |v| v.to_string())
        }
        _ => panic!("unknown op {op}"),
    })
}

fn check(cases: &[(&str, &str, &str, &str)]) {
    let mut failures = Vec::new();
    for &(op, a, b, expected) in cases {
        let got = match eval(op, a, b) {
            Ok(s) => s,
            Err(e) => format!("ERROR: {} {}", e.code, e.message),
        };
        let ok = if op == "tof8" && !expected.starts_with("ERROR") {
            got.parse::<f64>().ok().map(f64::to_bits) == expected.parse::<f64>().ok().map(f64::to_bits)
                || (expected == "NaN" && got == "NaN")
        } else {
            got == expected
        };
        if !ok {
            failures.push(format!("{op}({a:?}, {b:?}): expected {expected:?}, got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const CASES_IO: &[(&str, &str, &str, &str)] = &[
    ("in", r#" 1.50 "#, r#""#, r#"1.50"#),
    ("in", r#"1e3"#, r#""#, r#"1000"#),
    ("in", r#"1.5e-3"#, r#""#, r#"0.0015"#),
    ("in", r#"1.5E+3"#, r#""#, r#"1500"#),
    ("in", r#"-.5e2"#, r#""#, r#"-50"#),
    ("in", r#"+.5"#, r#""#, r#"0.5"#),
    ("in", r#"5."#, r#""#, r#"5"#),
    ("in", r#"00012.3400"#, r#""#, r#"12.3400"#),
    ("in", r#"-0"#, r#""#, r#"0"#),
    ("in", r#"-0.000"#, r#""#, r#"0.000"#),
    ("in", r#"0.0e-5"#, r#""#, r#"0.000000"#),
    ("in", r#"1e 5"#, r#""#, r#"100000"#),
    ("in", r#"1e -5"#, r#""#, r#"0.00001"#),
    (
        "in", r#" 	12
"#, r#""#, r#"12"#,
    ),
    (
        "in",
        r#"123456789012345678901234567890.123456789"#,
        r#""#,
        r#"123456789012345678901234567890.123456789"#,
    ),
    ("in", r#"NaN"#, r#""#, r#"NaN"#),
    ("in", r#" nan "#, r#""#, r#"NaN"#),
    ("in", r#"Infinity"#, r#""#, r#"Infinity"#),
    ("in", r#"+inFinity"#, r#""#, r#"Infinity"#),
    ("in", r#"-Infinity "#, r#""#, r#"-Infinity"#),
    ("in", r#"inf"#, r#""#, r#"Infinity"#),
    ("in", r#"-INF"#, r#""#, r#"-Infinity"#),
    ("in", r#"+inf"#, r#""#, r#"Infinity"#),
    (
        "in",
        r#"abc"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "abc""#,
    ),
    (
        "in",
        r#""#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: """#,
    ),
    (
        "in",
        r#" "#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: " ""#,
    ),
    (
        "in",
        r#"."#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: ".""#,
    ),
    (
        "in",
        r#"-"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "-""#,
    ),
    (
        "in",
        r#"+-1"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "+-1""#,
    ),
    (
        "in",
        r#"1e"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1e""#,
    ),
    (
        "in",
        r#"1e+"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1e+""#,
    ),
    (
        "in",
        r#"e5"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "e5""#,
    ),
    (
        "in",
        r#"1.2.3"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1.2.3""#,
    ),
    (
        "in",
        r#"1e5.5"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1e5.5""#,
    ),
    (
        "in",
        r#"-NaN"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "-NaN""#,
    ),
    (
        "in",
        r#"+NaN"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "+NaN""#,
    ),
    (
        "in",
        r#"NaNx"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "NaNx""#,
    ),
    (
        "in",
        r#"infinityx"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "infinityx""#,
    ),
    (
        "in",
        r#"infinite"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "infinite""#,
    ),
    (
        "in",
        r#"0x1F"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "0x1F""#,
    ),
    (
        "in",
        r#"1_000"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1_000""#,
    ),
    (
        "in",
        r#"12abc"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "12abc""#,
    ),
    (
        "in",
        r#"1 2"#,
        r#""#,
        r#"ERROR: 22P02 invalid input syntax for type numeric: "1 2""#,
    ),
    (
        "in",
        r#"1e-16384"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "in",
        r#"0e-16384"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "in",
        r#"1e131072"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "in",
        r#"1e99999999999"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "in",
        r#"1e1073741822"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "in",
        r#"1e1073741823"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    ("in", r#"0e1073741822"#, r#""#, r#"0"#),
];

const CASES_ARITH: &[(&str, &str, &str, &str)] = &[
    ("add", r#"1.5"#, r#"2.25"#, r#"3.75"#),
    ("add", r#"-1.50"#, r#"1.5"#, r#"0.00"#),
    ("add", r#"99999999999999999999"#, r#"1"#, r#"100000000000000000000"#),
    ("add", r#"0.001"#, r#"-1000"#, r#"-999.999"#),
    ("add", r#"NaN"#, r#"1"#, r#"NaN"#),
    ("add", r#"Infinity"#, r#"-Infinity"#, r#"NaN"#),
    ("add", r#"Infinity"#, r#"1"#, r#"Infinity"#),
    ("add", r#"-Infinity"#, r#"NaN"#, r#"NaN"#),
    ("sub", r#"1.5"#, r#"2.25"#, r#"-0.75"#),
    ("sub", r#"0"#, r#"0.000"#, r#"0.000"#),
    ("sub", r#"Infinity"#, r#"Infinity"#, r#"NaN"#),
    ("sub", r#"1"#, r#"-Infinity"#, r#"Infinity"#),
    ("sub", r#"-Infinity"#, r#"Infinity"#, r#"-Infinity"#),
    ("mul", r#"1.5"#, r#"2.25"#, r#"3.375"#),
    ("mul", r#"-0.1"#, r#"0.1"#, r#"-0.01"#),
    ("mul", r#"0.00"#, r#"123.456"#, r#"0.00000"#),
    (
        "mul",
        r#"123456789.123"#,
        r#"-987654321.987"#,
        r#"-121932631355968601.347401"#,
    ),
    ("mul", r#"Infinity"#, r#"0"#, r#"NaN"#),
    ("mul", r#"-Infinity"#, r#"-0.5"#, r#"Infinity"#),
    ("mul", r#"NaN"#, r#"0"#, r#"NaN"#),
    (
        "mul",
        r#"1e70000"#,
        r#"1e70000"#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    ("div", r#"1"#, r#"3"#, r#"0.33333333333333333333"#),
    ("div", r#"1.0"#, r#"3"#, r#"0.33333333333333333333"#),
    ("div", r#"10"#, r#"4"#, r#"2.5000000000000000"#),
    (
        "div",
        r#"2"#,
        r#"3.000000000000000000000000"#,
        r#"0.666666666666666666666667"#,
    ),
    ("div", r#"1"#, r#"7e-10"#, r#"1428571428.5714285714"#),
    ("div", r#"-1"#, r#"7e10"#, r#"-0.0000000000142857142857142857"#),
    ("div", r#"12345.678"#, r#"0.0001"#, r#"123456780.000000000000"#),
    ("div", r#"9999"#, r#"9999"#, r#"1.00000000000000000000"#),
    ("div", r#"1"#, r#"10000"#, r#"0.000100000000000000000000"#),
    ("div", r#"100000"#, r#"3"#, r#"33333.333333333333"#),
    ("div", r#"0"#, r#"3"#, r#"0.00000000000000000000"#),
    ("div", r#"0.000"#, r#"-7"#, r#"0.00000000000000000000"#),
    ("div", r#"1"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("div", r#"0"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("div", r#"Infinity"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("div", r#"Infinity"#, r#"-2"#, r#"-Infinity"#),
    ("div", r#"Infinity"#, r#"-Infinity"#, r#"NaN"#),
    ("div", r#"5"#, r#"Infinity"#, r#"0"#),
    ("div", r#"NaN"#, r#"0"#, r#"NaN"#),
    ("mod", r#"2.5"#, r#"1.1"#, r#"0.3"#),
    ("mod", r#"-7"#, r#"3"#, r#"-1"#),
    ("mod", r#"7"#, r#"-3"#, r#"1"#),
    ("mod", r#"-7.5"#, r#"-2"#, r#"-1.5"#),
    ("mod", r#"1"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("mod", r#"Infinity"#, r#"2"#, r#"NaN"#),
    ("mod", r#"Infinity"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("mod", r#"5.5"#, r#"-Infinity"#, r#"5.5"#),
    ("divt", r#"-7.5"#, r#"2"#, r#"-3"#),
    ("divt", r#"7"#, r#"2.5"#, r#"2"#),
    ("divt", r#"1"#, r#"0"#, r#"ERROR: 22012 division by zero"#),
    ("divt", r#"Infinity"#, r#"2"#, r#"Infinity"#),
    ("divt", r#"7"#, r#"Infinity"#, r#"0"#),
    ("divt", r#"-Infinity"#, r#"-0.5"#, r#"Infinity"#),
    ("neg", r#"1.50"#, r#""#, r#"-1.50"#),
    ("neg", r#"0.00"#, r#""#, r#"0.00"#),
    ("neg", r#"Infinity"#, r#""#, r#"-Infinity"#),
    ("neg", r#"NaN"#, r#""#, r#"NaN"#),
    ("abs", r#"-1.50"#, r#""#, r#"1.50"#),
    ("abs", r#"-Infinity"#, r#""#, r#"Infinity"#),
    ("sign", r#"-2.5"#, r#""#, r#"-1"#),
    ("sign", r#"0.000"#, r#""#, r#"0"#),
    ("sign", r#"3.1"#, r#""#, r#"1"#),
    ("sign", r#"NaN"#, r#""#, r#"NaN"#),
    ("sign", r#"-Infinity"#, r#""#, r#"-1"#),
    ("gcd", r#"12.5"#, r#"7.5"#, r#"2.5"#),
    ("gcd", r#"-12"#, r#"-18"#, r#"6"#),
    ("gcd", r#"0"#, r#"-5.50"#, r#"5.50"#),
    ("gcd", r#"0"#, r#"0"#, r#"0"#),
    ("gcd", r#"NaN"#, r#"1"#, r#"NaN"#),
    ("gcd", r#"Infinity"#, r#"1"#, r#"NaN"#),
    ("lcm", r#"1.5"#, r#"2.25"#, r#"4.50"#),
    ("lcm", r#"-63"#, r#"377.57367"#, r#"264301569.00000"#),
    ("lcm", r#"0"#, r#"5.5"#, r#"0.0"#),
    ("lcm", r#"-Infinity"#, r#"1"#, r#"NaN"#),
    ("fac", r#"0"#, r#""#, r#"1"#),
    ("fac", r#"1"#, r#""#, r#"1"#),
    ("fac", r#"20"#, r#""#, r#"2432902008176640000"#),
    ("fac", r#"30"#, r#""#, r#"265252859812191058636308480000000"#),
    (
        "fac",
        r#"-1"#,
        r#""#,
        r#"ERROR: 22003 factorial of a negative number is undefined"#,
    ),
    (
        "fac",
        r#"32178"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    ("wb", r#"5.35"#, r#"0.024;10.06;5"#, r#"3"#),
    ("wb", r#"5"#, r#"10;0;3"#, r#"2"#),
    ("wb", r#"10"#, r#"10;0;3"#, r#"1"#),
    ("wb", r#"0"#, r#"10;0;3"#, r#"4"#),
    ("wb", r#"Infinity"#, r#"0;10;3"#, r#"4"#),
    ("wb", r#"-Infinity"#, r#"0;10;3"#, r#"0"#),
    (
        "wb",
        r#"1"#,
        r#"0;0;3"#,
        r#"ERROR: 2201G lower bound cannot equal upper bound"#,
    ),
    (
        "wb",
        r#"1"#,
        r#"0;Infinity;3"#,
        r#"ERROR: 2201G lower and upper bounds must be finite"#,
    ),
    (
        "wb",
        r#"NaN"#,
        r#"0;1;3"#,
        r#"ERROR: 2201G operand, lower bound, and upper bound cannot be NaN"#,
    ),
    (
        "wb",
        r#"1"#,
        r#"0;1;0"#,
        r#"ERROR: 2201G count must be greater than zero"#,
    ),
    (
        "wb",
        r#"1"#,
        r#"0;1;2147483647"#,
        r#"ERROR: 22003 integer out of range"#,
    ),
    ("wb", r#"0.9999999999"#, r#"0;1;2147483647"#, r#"2147483647"#),
];

const CASES_ROUND: &[(&str, &str, &str, &str)] = &[
    ("round", r#"2.5"#, r#"0"#, r#"3"#),
    ("round", r#"-2.5"#, r#"0"#, r#"-3"#),
    ("round", r#"1234.5678"#, r#"-2"#, r#"1200"#),
    ("round", r#"1234.5678"#, r#"2"#, r#"1234.57"#),
    ("round", r#"1234.5678"#, r#"6"#, r#"1234.567800"#),
    ("round", r#"9.5"#, r#"-1"#, r#"10"#),
    ("round", r#"4.9"#, r#"-1"#, r#"0"#),
    ("round", r#"1.5"#, r#"-100000000"#, r#"0"#),
    ("round", r#"0.0049"#, r#"2"#, r#"0.00"#),
    ("round", r#"-0.005"#, r#"2"#, r#"-0.01"#),
    ("round", r#"NaN"#, r#"2"#, r#"NaN"#),
    ("round", r#"-Infinity"#, r#"2"#, r#"-Infinity"#),
    ("trunc", r#"1234.5678"#, r#"-2"#, r#"1200"#),
    ("trunc", r#"-1234.5678"#, r#"2"#, r#"-1234.56"#),
    ("trunc", r#"1.999"#, r#"0"#, r#"1"#),
    ("trunc", r#"1.5"#, r#"3"#, r#"1.500"#),
    ("trunc", r#"Infinity"#, r#"0"#, r#"Infinity"#),
    ("ceil", r#"-1.5"#, r#""#, r#"-1"#),
    ("ceil", r#"1.000"#, r#""#, r#"1"#),
    ("ceil", r#"1.001"#, r#""#, r#"2"#),
    ("ceil", r#"-0.5"#, r#""#, r#"0"#),
    ("ceil", r#"Infinity"#, r#""#, r#"Infinity"#),
    ("floor", r#"-1.5"#, r#""#, r#"-2"#),
    ("floor", r#"1.999"#, r#""#, r#"1"#),
    ("floor", r#"-0.000"#, r#""#, r#"0"#),
    ("floor", r#"NaN"#, r#""#, r#"NaN"#),
    ("scale", r#"1.500"#, r#""#, r#"3"#),
    ("scale", r#"100"#, r#""#, r#"0"#),
    ("scale", r#"NaN"#, r#""#, r#"NULL"#),
    ("min_scale", r#"1.500"#, r#""#, r#"1"#),
    ("min_scale", r#"100.000"#, r#""#, r#"0"#),
    ("min_scale", r#"0.00"#, r#""#, r#"0"#),
    ("min_scale", r#"Infinity"#, r#""#, r#"NULL"#),
    ("trim_scale", r#"1.500"#, r#""#, r#"1.5"#),
    ("trim_scale", r#"100.000"#, r#""#, r#"100"#),
    ("trim_scale", r#"-0.00100"#, r#""#, r#"-0.001"#),
    ("trim_scale", r#"NaN"#, r#""#, r#"NaN"#),
];

const CASES_TYPMOD: &[(&str, &str, &str, &str)] = &[
    ("typmod", r#"123.456"#, r#"5,2"#, r#"123.46"#),
    (
        "typmod",
        r#"12345.6"#,
        r#"5,2"#,
        r#"ERROR: 22003 numeric field overflow"#,
    ),
    (
        "typmod",
        r#"999.995"#,
        r#"5,2"#,
        r#"ERROR: 22003 numeric field overflow"#,
    ),
    ("typmod", r#"-999.994"#, r#"5,2"#, r#"-999.99"#),
    ("typmod", r#"123.456"#, r#"5,-2"#, r#"100"#),
    ("typmod", r#"123456"#, r#"5,-2"#, r#"123500"#),
    ("typmod", r#"0.001"#, r#"2,5"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"0.0001"#, r#"2,5"#, r#"0.00010"#),
    ("typmod", r#"9.995"#, r#"3,2"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"0.5"#, r#"1,0"#, r#"1"#),
    ("typmod", r#"-0.5"#, r#"1,0"#, r#"-1"#),
    ("typmod", r#"99.5"#, r#"2,0"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"0.95"#, r#"1,1"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"0.94"#, r#"1,1"#, r#"0.9"#),
    ("typmod", r#"1"#, r#"3,3"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"0"#, r#"3,3"#, r#"0.000"#),
    ("typmod", r#"15"#, r#"1,-1"#, r#"20"#),
    ("typmod", r#"95"#, r#"1,-1"#, r#"ERROR: 22003 numeric field overflow"#),
    ("typmod", r#"NaN"#, r#"5,2"#, r#"NaN"#),
    (
        "typmod",
        r#"Infinity"#,
        r#"5,2"#,
        r#"ERROR: 22003 numeric field overflow"#,
    ),
    (
        "typmod",
        r#"-Infinity"#,
        r#"1,0"#,
        r#"ERROR: 22003 numeric field overflow"#,
    ),
];

const CASES_MATH: &[(&str, &str, &str, &str)] = &[
    ("sqrt", r#"2"#, r#""#, r#"1.414213562373095"#),
    ("sqrt", r#"2.00000000000000000000"#, r#""#, r#"1.41421356237309504880"#),
    ("sqrt", r#"0"#, r#""#, r#"0.000000000000000"#),
    ("sqrt", r#"0.00"#, r#""#, r#"0.000000000000000"#),
    ("sqrt", r#"1e-30"#, r#""#, r#"0.0000000000000010000000000000000"#),
    ("sqrt", r#"123456789"#, r#""#, r#"11111.11106055556"#),
    ("sqrt", r#"0.0001"#, r#""#, r#"0.01000000000000000"#),
    (
        "sqrt",
        r#"1e100"#,
        r#""#,
        r#"100000000000000000000000000000000000000000000000000"#,
    ),
    ("sqrt", r#"6.25"#, r#""#, r#"2.500000000000000"#),
    (
        "sqrt",
        r#"-1"#,
        r#""#,
        r#"ERROR: 2201F cannot take square root of a negative number"#,
    ),
    (
        "sqrt",
        r#"-Infinity"#,
        r#""#,
        r#"ERROR: 2201F cannot take square root of a negative number"#,
    ),
    ("sqrt", r#"Infinity"#, r#""#, r#"Infinity"#),
    ("sqrt", r#"NaN"#, r#""#, r#"NaN"#),
    ("exp", r#"0"#, r#""#, r#"1.0000000000000000"#),
    ("exp", r#"1"#, r#""#, r#"2.7182818284590452"#),
    ("exp", r#"1.0"#, r#""#, r#"2.7182818284590452"#),
    ("exp", r#"0.5"#, r#""#, r#"1.6487212707001281"#),
    ("exp", r#"-1"#, r#""#, r#"0.3678794411714423"#),
    (
        "exp",
        r#"100"#,
        r#""#,
        r#"26881171418161354484126255515800135873611119"#,
    ),
    (
        "exp",
        r#"-100"#,
        r#""#,
        r#"0.00000000000000000000000000000000000000000003720075976020836"#,
    ),
    (
        "exp",
        r#"1.00000000000000000000000000000"#,
        r#""#,
        r#"2.71828182845904523536028747135"#,
    ),
    ("exp", r#"-0.000001"#, r#""#, r#"0.9999990000005000"#),
    (
        "exp",
        r#"6000"#,
        r#""#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    ("exp", r#"-Infinity"#, r#""#, r#"0"#),
    ("exp", r#"Infinity"#, r#""#, r#"Infinity"#),
    ("exp", r#"NaN"#, r#""#, r#"NaN"#),
    ("ln", r#"2"#, r#""#, r#"0.6931471805599453"#),
    ("ln", r#"1"#, r#""#, r#"0.0000000000000000"#),
    ("ln", r#"10"#, r#""#, r#"2.3025850929940457"#),
    ("ln", r#"0.99999999"#, r#""#, r#"-0.000000010000000050000000"#),
    ("ln", r#"1.0000001"#, r#""#, r#"0.00000009999999500000033"#),
    (
        "ln",
        r#"1e-100"#,
        r#""#,
        r#"-230.2585092994045684017991454684364207601101488628772976033327900967572609677352480235997205089598298342"#,
    ),
    ("ln", r#"123456789.123"#, r#""#, r#"18.631401767164318"#),
    ("ln", r#"0.5"#, r#""#, r#"-0.6931471805599453"#),
    ("ln", r#"0"#, r#""#, r#"ERROR: 2201E cannot take logarithm of zero"#),
    (
        "ln",
        r#"-1"#,
        r#""#,
        r#"ERROR: 2201E cannot take logarithm of a negative number"#,
    ),
    ("ln", r#"Infinity"#, r#""#, r#"Infinity"#),
    (
        "ln",
        r#"-Infinity"#,
        r#""#,
        r#"ERROR: 2201E cannot take logarithm of a negative number"#,
    ),
    ("ln", r#"NaN"#, r#""#, r#"NaN"#),
    ("log10", r#"10"#, r#""#, r#"1.0000000000000000"#),
    ("log10", r#"1000"#, r#""#, r#"3.0000000000000000"#),
    ("log10", r#"2"#, r#""#, r#"0.3010299956639812"#),
    ("log10", r#"0.001"#, r#""#, r#"-3.0000000000000000"#),
    (
        "log10",
        r#"1e-50"#,
        r#""#,
        r#"-50.00000000000000000000000000000000000000000000000000"#,
    ),
    ("log10", r#"123.456"#, r#""#, r#"2.0915122016277717"#),
    ("log10", r#"0"#, r#""#, r#"ERROR: 2201E cannot take logarithm of zero"#),
    ("log", r#"2"#, r#"64"#, r#"6.0000000000000000"#),
    ("log", r#"2.0"#, r#"64"#, r#"6.0000000000000000"#),
    ("log", r#"10"#, r#"100"#, r#"2.0000000000000000"#),
    ("log", r#"3"#, r#"10.5"#, r#"2.1403139955899648"#),
    ("log", r#"0.5"#, r#"8"#, r#"-3.0000000000000000"#),
    ("log", r#"1.000001"#, r#"2"#, r#"693147.5271334778"#),
    ("log", r#"1"#, r#"10"#, r#"ERROR: 22012 division by zero"#),
    ("log", r#"0"#, r#"5"#, r#"ERROR: 2201E cannot take logarithm of zero"#),
    (
        "log",
        r#"5"#,
        r#"-5"#,
        r#"ERROR: 2201E cannot take logarithm of a negative number"#,
    ),
    ("log", r#"Infinity"#, r#"Infinity"#, r#"NaN"#),
    ("log", r#"Infinity"#, r#"5"#, r#"0"#),
    ("log", r#"5"#, r#"Infinity"#, r#"Infinity"#),
    ("log", r#"NaN"#, r#"0"#, r#"NaN"#),
    (
        "log",
        r#"-Infinity"#,
        r#"5"#,
        r#"ERROR: 2201E cannot take logarithm of a negative number"#,
    ),
    ("pow", r#"2"#, r#"3"#, r#"8.0000000000000000"#),
    ("pow", r#"2"#, r#"3.00"#, r#"8.0000000000000000"#),
    ("pow", r#"1.5"#, r#"2"#, r#"2.2500000000000000"#),
    ("pow", r#"2"#, r#"-2"#, r#"0.2500000000000000"#),
    ("pow", r#"2"#, r#"0.5"#, r#"1.4142135623730950"#),
    ("pow", r#"10"#, r#"20"#, r#"100000000000000000000.0000000000000000"#),
    ("pow", r#"0.5"#, r#"100"#, r#"0.0000000000000000"#),
    (
        "pow",
        r#"2"#,
        r#"100"#,
        r#"1267650600228229401496703205376.0000000000000000"#,
    ),
    ("pow", r#"1.000001"#, r#"1000000"#, r#"2.7182804693193769"#),
    ("pow", r#"0.5"#, r#"17"#, r#"0.0000076293945313"#),
    ("pow", r#"1.5"#, r#"37"#, r#"3276246.6136118554495624"#),
    ("pow", r#"3.5"#, r#"3"#, r#"42.8750000000000000"#),
    ("pow", r#"-2"#, r#"3"#, r#"-8.0000000000000000"#),
    ("pow", r#"-2"#, r#"3.0"#, r#"-8.0000000000000000"#),
    ("pow", r#"7"#, r#"-1"#, r#"0.1428571428571429"#),
    ("pow", r#"1.1"#, r#"-3"#, r#"0.7513148009015778"#),
    ("pow", r#"10"#, r#"-3.5"#, r#"0.0003162277660168379"#),
    ("pow", r#"1.0001"#, r#"12345.678"#, r#"3.4366806414332380"#),
    ("pow", r#"9.9"#, r#"2"#, r#"98.0100000000000000"#),
    ("pow", r#"2"#, r#"0.0"#, r#"1.0000000000000000"#),
    ("pow", r#"0"#, r#"0"#, r#"1.0000000000000000"#),
    ("pow", r#"0"#, r#"2.5"#, r#"0.0000000000000000"#),
    ("pow", r#"0.0"#, r#"3"#, r#"0.0000000000000000"#),
    ("pow", r#"-0.9"#, r#"1e9"#, r#"0.0000000000000000"#),
    (
        "pow",
        r#"-2"#,
        r#"1e10"#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "pow",
        r#"1.5"#,
        r#"100000.5"#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    (
        "pow",
        r#"10"#,
        r#"131072"#,
        r#"ERROR: 22003 value overflows numeric format"#,
    ),
    ("pow", r#"10"#, r#"-1017"#, r#"0.0000000000000000"#),
    (
        "pow",
        r#"0"#,
        r#"-1"#,
        r#"ERROR: 2201F zero raised to a negative power is undefined"#,
    ),
    (
        "pow",
        r#"0"#,
        r#"-0.5"#,
        r#"ERROR: 2201F zero raised to a negative power is undefined"#,
    ),
    (
        "pow",
        r#"-8"#,
        r#"0.333"#,
        r#"ERROR: 2201F a negative number raised to a non-integer power yields a complex result"#,
    ),
    ("pow", r#"NaN"#, r#"0"#, r#"1"#),
    ("pow", r#"NaN"#, r#"1"#, r#"NaN"#),
    ("pow", r#"1"#, r#"NaN"#, r#"1"#),
    ("pow", r#"2"#, r#"NaN"#, r#"NaN"#),
    ("pow", r#"Infinity"#, r#"0"#, r#"1"#),
    ("pow", r#"0"#, r#"Infinity"#, r#"0"#),
    (
        "pow",
        r#"0"#,
        r#"-Infinity"#,
        r#"ERROR: 2201F zero raised to a negative power is undefined"#,
    ),
    ("pow", r#"-1"#, r#"Infinity"#, r#"1"#),
    ("pow", r#"0.5"#, r#"Infinity"#, r#"0"#),
    ("pow", r#"0.5"#, r#"-Infinity"#, r#"Infinity"#),
    ("pow", r#"-2"#, r#"Infinity"#, r#"Infinity"#),
    ("pow", r#"2"#, r#"-Infinity"#, r#"0"#),
    ("pow", r#"Infinity"#, r#"-2"#, r#"0"#),
    ("pow", r#"Infinity"#, r#"0.5"#, r#"Infinity"#),
    ("pow", r#"-Infinity"#, r#"-3"#, r#"0"#),
    ("pow", r#"-Infinity"#, r#"3"#, r#"-Infinity"#),
    ("pow", r#"-Infinity"#, r#"2"#, r#"Infinity"#),
    (
        "pow",
        r#"-Infinity"#,
        r#"0.5"#,
        r#"ERROR: 2201F a negative number raised to a non-integer power yields a complex result"#,
    ),
    ("pow", r#"-Infinity"#, r#"Infinity"#, r#"Infinity"#),
];

const CASES_CONV: &[(&str, &str, &str, &str)] = &[
    ("int8", r#"9223372036854775807"#, r#""#, r#"9223372036854775807"#),
    (
        "int8",
        r#"9223372036854775807.5"#,
        r#""#,
        r#"ERROR: 22003 bigint out of range"#,
    ),
    ("int8", r#"-9223372036854775808"#, r#""#, r#"-9223372036854775808"#),
    (
        "int8",
        r#"-9223372036854775808.5"#,
        r#""#,
        r#"ERROR: 22003 bigint out of range"#,
    ),
    ("int8", r#"2.5"#, r#""#, r#"3"#),
    ("int8", r#"-2.5"#, r#""#, r#"-3"#),
    ("int8", r#"-2.4"#, r#""#, r#"-2"#),
    ("int8", r#"NaN"#, r#""#, r#"ERROR: 0A000 cannot convert NaN to bigint"#),
    (
        "int8",
        r#"Infinity"#,
        r#""#,
        r#"ERROR: 0A000 cannot convert infinity to bigint"#,
    ),
    ("int4", r#"2147483647.4"#, r#""#, r#"2147483647"#),
    ("int4", r#"2147483647.5"#, r#""#, r#"ERROR: 22003 integer out of range"#),
    (
        "int4",
        r#"-2147483648.5"#,
        r#""#,
        r#"ERROR: 22003 integer out of range"#,
    ),
    ("int4", r#"NaN"#, r#""#, r#"ERROR: 0A000 cannot convert NaN to integer"#),
    (
        "int4",
        r#"-Infinity"#,
        r#""#,
        r#"ERROR: 0A000 cannot convert infinity to integer"#,
    ),
    ("int2", r#"32767.4999"#, r#""#, r#"32767"#),
    ("int2", r#"32767.5"#, r#""#, r#"ERROR: 22003 smallint out of range"#),
    ("int2", r#"-32768.5"#, r#""#, r#"ERROR: 22003 smallint out of range"#),
    (
        "int2",
        r#"NaN"#,
        r#""#,
        r#"ERROR: 0A000 cannot convert NaN to smallint"#,
    ),
    (
        "int2",
        r#"Infinity"#,
        r#""#,
        r#"ERROR: 0A000 cannot convert infinity to smallint"#,
    ),
    ("f8", r#"0.1"#, r#""#, r#"0.1"#),
    ("f8", r#"1234567890123455"#, r#""#, r#"1234567890123460"#),
    ("f8", r#"1234567890123445"#, r#""#, r#"1234567890123440"#),
    ("f8", r#"1e20"#, r#""#, r#"100000000000000000000"#),
    ("f8", r#"1.5e-07"#, r#""#, r#"0.00000015"#),
    ("f8", r#"123456789012345678"#, r#""#, r#"123456789012346000"#),
    ("f8", r#"-0.0"#, r#""#, r#"0"#),
    ("f8", r#"0.30000000000000004"#, r#""#, r#"0.3"#),
    (
        "f8",
        r#"5e-324"#,
        r#""#,
        r#"0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000494065645841247"#,
    ),
    (
        "f8",
        r#"1.7976931348623157e308"#,
        r#""#,
        r#"179769313486232000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"#,
    ),
    ("f8", r#"NaN"#, r#""#, r#"NaN"#),
    ("f8", r#"Infinity"#, r#""#, r#"Infinity"#),
    ("f8", r#"-Infinity"#, r#""#, r#"-Infinity"#),
    ("f8", r#"100"#, r#""#, r#"100"#),
    ("f8", r#"1e15"#, r#""#, r#"1000000000000000"#),
    ("f8", r#"1e16"#, r#""#, r#"10000000000000000"#),
    ("f4", r#"0.1"#, r#""#, r#"0.1"#),
    ("f4", r#"12345678.9"#, r#""#, r#"12345700"#),
    ("f4", r#"3.4e38"#, r#""#, r#"340000000000000000000000000000000000000"#),
    ("f4", r#"16777217"#, r#""#, r#"16777200"#),
    ("f4", r#"-Infinity"#, r#""#, r#"-Infinity"#),
    ("tof8", r#"0.1"#, r#""#, r#"0.1"#),
    ("tof8", r#"1e-310"#, r#""#, r#"1e-310"#),
    (
        "tof8",
        r#"123456789012345678901234567890"#,
        r#""#,
        r#"1.2345678901234568e+29"#,
    ),
    ("tof8", r#"NaN"#, r#""#, r#"NaN"#),
    ("send", r#"123.45"#, r#""#, r#"\x0002000000000002007b1194"#),
    ("send", r#"-12345.678"#, r#""#, r#"\x0003000140000003000109291a7c"#),
    ("send", r#"0.00"#, r#""#, r#"\x0000000000000002"#),
    ("send", r#"1e20"#, r#""#, r#"\x00010005000000000001"#),
    ("send", r#"0.00012"#, r#""#, r#"\x0002ffff00000005000107d0"#),
    ("send", r#"1e-16383"#, r#""#, r#"\x0001f00000003fff000a"#),
    ("send", r#"NaN"#, r#""#, r#"\x00000000c0000000"#),
    ("send", r#"Infinity"#, r#""#, r#"\x00000000d0000020"#),
    ("send", r#"-Infinity"#, r#""#, r#"\x00000000f0000020"#),
];

const CASES_AGG: &[(&str, &str, &str, &str)] = &[
    ("sum", r#"1.5;2.25;3"#, r#""#, r#"6.75"#),
    ("sum", r#"1.50;-1.50"#, r#""#, r#"0.00"#),
    ("sum", r#"NaN;1"#, r#""#, r#"NaN"#),
    ("sum", r#"Infinity;-Infinity"#, r#""#, r#"NaN"#),
    ("sum", r#"Infinity;1"#, r#""#, r#"Infinity"#),
    ("sum", r#"-Infinity;1.5"#, r#""#, r#"-Infinity"#),
    ("avg", r#"1;2"#, r#""#, r#"1.5000000000000000"#),
    ("avg", r#"1.5;2.25;3"#, r#""#, r#"2.2500000000000000"#),
    ("avg", r#"Infinity;2"#, r#""#, r#"Infinity"#),
    ("avg", r#"1;2;2"#, r#""#, r#"1.6666666666666667"#),
    ("avg", r#"0.001;0.002"#, r#""#, r#"0.00150000000000000000"#),
    ("var_samp", r#"1;2;3;4"#, r#""#, r#"1.6666666666666667"#),
    ("var_samp", r#"5"#, r#""#, r#"NULL"#),
    ("var_pop", r#"5"#, r#""#, r#"0"#),
    ("var_pop", r#"1.5;2.25;3"#, r#""#, r#"0.37500000000000000000"#),
    ("var_pop", r#"0.1;0.2;0.3;0.4"#, r#""#, r#"0.01250000000000000000"#),
    (
        "var_samp",
        r#"1e-10;2e-10;3e-10"#,
        r#""#,
        r#"0.0000000000000000000100000000000000000000"#,
    ),
    ("var_samp", r#"Infinity;1"#, r#""#, r#"NaN"#),
    ("var_pop", r#"NaN"#, r#""#, r#"NaN"#),
    ("stddev_samp", r#"1;2;3;4"#, r#""#, r#"1.2909944487358056"#),
    ("stddev_pop", r#"1.5;2.25;3"#, r#""#, r#"0.61237243569579452455"#),
    ("stddev_pop", r#"5.55"#, r#""#, r#"0"#),
    ("stddev_samp", r#"1.0;1.0"#, r#""#, r#"0"#),
    ("stddev_pop", r#"1e20;1;-1e20"#, r#""#, r#"81649658092772603273"#),
    ("stddev_samp", r#"NaN;1"#, r#""#, r#"NaN"#),
];

#[test]
fn numeric_text_io() {
    check(CASES_IO);
}

#[test]
fn numeric_arithmetic() {
    check(CASES_ARITH);
}

#[test]
fn numeric_rounding_and_scale() {
    check(CASES_ROUND);
}

#[test]
fn numeric_typmod_coercion() {
    check(CASES_TYPMOD);
}

#[test]
fn numeric_transcendental() {
    check(CASES_MATH);
}

#[test]
fn numeric_conversions() {
    check(CASES_CONV);
}

#[test]
fn numeric_aggregates() {
    check(CASES_AGG);
}

/// Outputs too long for the tables; PostgreSQL printed `0.` followed by
/// 16382 zeros and a 1, and a 9 followed by 131071 zeros.
#[test]
fn numeric_extreme_values() {
    let tiny = n("1e-16383").to_string();
    assert_eq!(tiny.len(), 16385);
    assert!(tiny.starts_with("0.0000") && tiny.ends_with("0001"));
    let huge = n("9e131071").to_string();
    assert_eq!(huge.len(), 131072);
    assert!(huge.starts_with("90000"));
    // 1e-10000 * 1e-10000 rounds to zero at the largest storable scale: "0." and 16383 zeros.
    let prod = n("1e-10000").mul(&n("1e-10000")).unwrap().to_string();
    assert_eq!(prod.len(), 16385);
    assert!(prod.trim_start_matches("0.").chars().all(|c| c == '0'));
    // Adding one to 131072 nines overflows.
    let nines = n(&"9".repeat(131072));
    assert_eq!(
        nines.add(&Numeric::one()).unwrap_err().message,
        "value overflows numeric format"
    );
    // float8 overflow/underflow messages quote the numeric's text.
    let e = n("1e400").to_f64().unwrap_err();
    assert_eq!(e.code, "22003");
    assert_eq!(
        e.message,
        format!("\"1{}\" is out of range for type double precision", "0".repeat(400))
    );
    let e = n("-1e-400").to_f64().unwrap_err();
    assert_eq!(
        e.message,
        format!("\"-0.{}1\" is out of range for type double precision", "0".repeat(399))
    );
}

/// `ORDER BY` and `count(DISTINCT)` over the same values in PostgreSQL gave
/// this order and 12 distinct values.
#[test]
fn numeric_ordering_and_equality() {
    let input = "NaN,1.0,-Infinity,0,-0.001,Infinity,1.00,1e100,-1e100,0.999999999999999999999,NaN,-2,10,9.99,0.0";
    let mut vals: Vec<Numeric> = input.split(',').map(n).collect();
    vals.sort();
    let sorted: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
    let expected = "-Infinity -10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 -2 -0.001 0.0 0 0.999999999999999999999 1.00 1.0 9.99 10 10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 Infinity NaN NaN";
    // equal values may appear in either order (PostgreSQL's sort is not stable either)
    let canon = |s: &str| s.split(' ').map(|t| n(t).to_normalized_string()).collect::<Vec<_>>();
    assert_eq!(canon(&sorted.join(" ")), canon(expected));
    let distinct: std::collections::HashSet<Numeric> = vals.into_iter().collect();
    assert_eq!(distinct.len(), 12);
}

fn hash_of(v: &Numeric) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

#[test]
fn numeric_hash_ignores_display_scale() {
    for group in [
        &["1", "1.0", "1.00", "1.000000000000000000000000"][..],
        &["0", "0.000", "-0"],
        &["10", "1e1", "10.0"],
        &["-2.5", "-2.50"],
    ] {
        let h = hash_of(&n(group[0]));
        for s in group {
            assert_eq!(n(s), n(group[0]));
            assert_eq!(hash_of(&n(s)), h, "{s}");
        }
    }
    assert_ne!(hash_of(&n("1")), hash_of(&n("-1")));
    assert_ne!(hash_of(&n("1")), hash_of(&n("10")));
    assert_ne!(hash_of(&Numeric::NaN), hash_of(&Numeric::PosInf));
}

/// typmods as PostgreSQL stores them (pg_attribute.atttypmod) and prints them (format_type).
#[test]
fn numeric_typmod_encoding() {
    for (p, s, tm, text) in [
        (5, 2, 327686, "(5,2)"),
        (3, -2, 198658, "(3,-2)"),
        (1000, 1000, 65537004, "(1000,1000)"),
        (1, -1000, 66588, "(1,-1000)"),
        (7, 0, 458756, "(7,0)"),
        (2, 5, 131081, "(2,5)"),
    ] {
        assert_eq!(typmod(p, s).unwrap(), tm);
        assert_eq!(typmod_precision_scale(tm), Some((p, s)));
        assert_eq!(typmod_to_string(tm), text);
    }
    assert_eq!(typmod_precision_scale(-1), None);
    assert_eq!(typmod_to_string(-1), "");
    assert_eq!(n("1.2345").apply_typmod(-1).unwrap().to_string(), "1.2345");
    // numeric(1001,0), numeric(0,0), numeric(5,1001), numeric(5,-1001) in PostgreSQL:
    for (p, s, msg) in [
        (1001, 0, "NUMERIC precision 1001 must be between 1 and 1000"),
        (0, 0, "NUMERIC precision 0 must be between 1 and 1000"),
        (5, 1001, "NUMERIC scale 1001 must be between -1000 and 1000"),
        (5, -1001, "NUMERIC scale -1001 must be between -1000 and 1000"),
    ] {
        let e = typmod(p, s).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("22023", msg));
    }
    // The detail of the overflow error, as PostgreSQL reports it for 12345.6::numeric(5,2).
    let e = n("12345.6").apply_typmod(typmod(5, 2).unwrap()).unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 5, scale 2 must round to an absolute value less than 10^3.")
    );
    let e = n("Infinity").apply_typmod(typmod(5, 2).unwrap()).unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 5, scale 2 cannot hold an infinite value.")
    );
    let e = n("1").apply_typmod(typmod(3, 3).unwrap()).unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 3, scale 3 must round to an absolute value less than 1.")
    );
}

/// numeric_send output from PostgreSQL, decoded back by from_binary.
#[test]
fn numeric_binary_round_trip() {
    for (text, hex) in [
        ("123.45", "0002000000000002007b1194"),
        ("-12345.678", "0003000140000003000109291a7c"),
        ("0.00", "0000000000000002"),
        ("1e20", "00010005000000000001"),
        ("0.00012", "0002ffff00000005000107d0"),
        ("NaN", "00000000c0000000"),
        ("Infinity", "00000000d0000020"),
        ("-Infinity", "00000000f0000020"),
        ("9999.9999", "0002000000000004270f270f"),
        ("0.0001", "0001ffff000000040001"),
        ("100000000", "00010002000000000001"),
    ] {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(n(text).to_binary(), bytes, "{text}");
        let back = Numeric::from_binary(&bytes).unwrap();
        assert_eq!(back.to_string(), n(text).to_string());
    }
}

/// numeric_recv's checks; the messages are those of numeric.c (they cannot be
/// provoked from SQL text).
#[test]
fn numeric_binary_errors() {
    let err = |b: &[u8]| Numeric::from_binary(b).unwrap_err();
    assert_eq!(
        err(&[0, 0, 0, 0, 0x12, 0x34, 0, 0]).message,
        "invalid sign in external \"numeric\" value"
    );
    assert_eq!(
        err(&[0, 0, 0, 0, 0, 0, 0x40, 0]).message,
        "invalid scale in external \"numeric\" value"
    );
    assert_eq!(
        err(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]).message,
        "invalid digit in external \"numeric\" value"
    );
    assert_eq!(err(&[0, 1, 0, 0]).code, "08P01");
    // digits hidden by the dscale are truncated away: 1.2345 sent with dscale 2
    let v = Numeric::from_binary(&[0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x09, 0x29]).unwrap();
    assert_eq!(v.to_string(), "1.23");
}

/// Expected values from PostgreSQL: avg/sum/var_samp over generate_series(1::int8, 4),
/// and sum/var_samp over two int8 9223372036854775807 values.
#[test]
fn numeric_accumulator_paths() {
    // int8 inputs through the fast path
    let mut a = NumericAccum::with_squares();
    for i in 1..=4 {
        a.add_i64(i);
    }
    assert_eq!(a.avg().unwrap().unwrap().to_string(), "2.5000000000000000");
    assert_eq!(a.sum().unwrap().unwrap().to_string(), "10");
    assert_eq!(a.variance(true).unwrap().unwrap().to_string(), "1.6666666666666667");
    // huge int8 values overflow the i128 partial sums' squares: sum of two i64::MAX
    let mut b = NumericAccum::with_squares();
    b.add_i64(i64::MAX);
    b.add_i64(i64::MAX);
    assert_eq!(b.sum().unwrap().unwrap().to_string(), "18446744073709551614");
    assert_eq!(b.variance(true).unwrap().unwrap().to_string(), "0");
    // merging partial states equals one pass (sum over 1.5, 2.25, 3 is 6.75)
    let mut x = NumericAccum::new();
    x.add(&n("1.5"));
    let mut y = NumericAccum::new();
    y.add(&n("2.25"));
    y.add(&n("3"));
    x.merge(&y);
    assert_eq!(x.sum().unwrap().unwrap().to_string(), "6.75");
    assert_eq!(x.count(), 3);
    // moving-window removal: dropping the only input with the largest scale cannot be undone
    assert!(!x.remove(&n("2.25")));
    assert!(x.remove(&n("1.5")));
    assert_eq!(x.count(), 2);
    // no inputs: SQL NULL
    assert_eq!(NumericAccum::new().sum().unwrap(), None);
    assert_eq!(NumericAccum::new().avg().unwrap(), None);
}

#[test]
fn numeric_constructors() {
    assert_eq!(Numeric::from(-5i16).to_string(), "-5");
    assert_eq!(Numeric::from(i32::MIN).to_string(), "-2147483648");
    assert_eq!(Numeric::from(i64::MAX).to_string(), "9223372036854775807");
    assert_eq!(Numeric::from_parts(BigInt::from(150), 2).unwrap().to_string(), "1.50");
    assert_eq!(n("1.50").to_parts(), Some((BigInt::from(150), 2)));
    assert_eq!("2.5".parse::<Numeric>().unwrap(), n("2.50"));
    // A BigDecimal built by hand with a negative scale is read as an integer.
    assert_eq!(
        Numeric::Finite(BigDecimal::new(BigInt::from(12), -2)).to_string(),
        "1200"
    );
    assert!(n("-0.000").is_zero() && n("3").is_integral() && n("3.000").is_integral() && !n("3.01").is_integral());
}
