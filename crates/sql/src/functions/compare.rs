//! Comparison operators (=, <>, <, <=, >, >=) and btree comparison
//! functions for the built-in types, including PostgreSQL's cross-type
//! families (int2/int4/int8, float4/float8, date/timestamp, name/text).

use std::cmp::Ordering;

use tusk_types::datum::float_cmp;
use tusk_types::{Datum, PgResult};

use super::{plain, FnCtx, Registry};

/// Compares two non-null values of compatible types.
pub fn compare(a: &Datum, b: &Datum) -> Ordering {
    match (a, b) {
        (Datum::Float4(_) | Datum::Float8(_), Datum::Float4(_) | Datum::Float8(_)) => {
            float_cmp(a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0))
        }
        (Datum::Date(d), Datum::Timestamp(t)) | (Datum::Date(d), Datum::TimestampTz(t)) => date_as_timestamp(*d).cmp(t),
        (Datum::Timestamp(t), Datum::Date(d)) | (Datum::TimestampTz(t), Datum::Date(d)) => t.cmp(&date_as_timestamp(*d)),
        _ => a.cmp_same_type(b),
    }
}

fn date_as_timestamp(d: i32) -> i64 {
    match d {
        i32::MAX => i64::MAX,
        i32::MIN => i64::MIN,
        d => d as i64 * 86_400_000_000,
    }
}

/// bpchar compares without its trailing blanks.
fn compare_bpchar(a: &Datum, b: &Datum) -> Ordering {
    let x = a.as_str().unwrap_or("").trim_end_matches(' ');
    let y = b.as_str().unwrap_or("").trim_end_matches(' ');
    x.as_bytes().cmp(y.as_bytes())
}

macro_rules! cmp_fns {
    ($cmp:path, $eq:ident, $ne:ident, $lt:ident, $le:ident, $gt:ident, $ge:ident, $c:ident) => {
        fn $eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) == Ordering::Equal))
        }
        fn $ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) != Ordering::Equal))
        }
        fn $lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) == Ordering::Less))
        }
        fn $le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) != Ordering::Greater))
        }
        fn $gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) == Ordering::Greater))
        }
        fn $ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(&a[0], &a[1]) != Ordering::Less))
        }
        fn $c(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Int4(match $cmp(&a[0], &a[1]) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        }
    };
}

cmp_fns!(compare, eq, ne, lt, le, gt, ge, cmp);
cmp_fns!(compare_bpchar, bp_eq, bp_ne, bp_lt, bp_le, bp_gt, bp_ge, bp_cmp);

/// A transaction id operand: an xid, or the int4 of `xid = int4`.
fn xid_value(d: &Datum) -> u32 {
    match d {
        Datum::Oid(v) => *v,
        Datum::Int4(v) => *v as u32,
        Datum::Int8(v) => *v as u32,
        _ => 0,
    }
}

/// xideq / xidneq: transaction ids compare only for equality.
fn xid_eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(xid_value(&a[0]) == xid_value(&a[1])))
}

fn xid_ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(xid_value(&a[0]) != xid_value(&a[1])))
}

fn larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if compare(&a[0], &a[1]) == Ordering::Less { a[1].clone() } else { a[0].clone() })
}

fn smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if compare(&a[0], &a[1]) == Ordering::Greater { a[1].clone() } else { a[0].clone() })
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["xideq"], xid_eq);
    plain(r, &["xidneq"], xid_ne);
    plain(r, &["cideq"], eq);
    plain(r, &["tidlarger"], larger);
    plain(r, &["tidsmaller"], smaller);
    let families = [
        "int2", "int4", "int8", "int24", "int42", "int28", "int82", "int48", "int84", "float4", "float8", "float48", "float84",
        "oid", "char", "bool", "bytea", "name", "tid",
    ];
    for f in families {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{f}eq"))], eq);
        plain(r, &[leak(format!("{f}ne"))], ne);
        plain(r, &[leak(format!("{f}lt"))], lt);
        plain(r, &[leak(format!("{f}le"))], le);
        plain(r, &[leak(format!("{f}gt"))], gt);
        plain(r, &[leak(format!("{f}ge"))], ge);
        plain(r, &[leak(format!("bt{f}cmp"))], cmp);
    }
    let underscored = ["numeric", "date", "time", "timetz", "timestamp", "interval", "uuid", "array", "record", "text_pattern", "jsonb"];
    for f in underscored {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{f}_eq"))], eq);
        plain(r, &[leak(format!("{f}_ne"))], ne);
        plain(r, &[leak(format!("{f}_lt"))], lt);
        plain(r, &[leak(format!("{f}_le"))], le);
        plain(r, &[leak(format!("{f}_gt"))], gt);
        plain(r, &[leak(format!("{f}_ge"))], ge);
        plain(r, &[leak(format!("{f}_cmp"))], cmp);
    }
    plain(r, &["texteq", "nameeqtext", "texteqname"], eq);
    plain(r, &["textne", "namenetext", "textnename"], ne);
    plain(r, &["text_lt", "namelttext", "textltname"], lt);
    plain(r, &["text_le", "nameletext", "textlename"], le);
    plain(r, &["text_gt", "namegttext", "textgtname"], gt);
    plain(r, &["text_ge", "namegetext", "textgename"], ge);
    plain(r, &["bttextcmp", "btnamecmp", "btnametextcmp", "bttextnamecmp", "bttext_pattern_cmp", "btboolcmp", "byteacmp", "btarraycmp", "btrecordcmp", "btoidcmp", "btcharcmp"], cmp);
    plain(r, &["bpchareq"], bp_eq);
    plain(r, &["bpcharne"], bp_ne);
    plain(r, &["bpcharlt", "bpchar_pattern_lt"], bp_lt);
    plain(r, &["bpcharle", "bpchar_pattern_le"], bp_le);
    plain(r, &["bpchargt", "bpchar_pattern_gt"], bp_gt);
    plain(r, &["bpcharge", "bpchar_pattern_ge"], bp_ge);
    plain(r, &["bpcharcmp", "btbpchar_pattern_cmp"], bp_cmp);
    // date vs timestamp (without time zone).
    for (op, f) in [("eq", eq as super::PlainFn), ("ne", ne), ("lt", lt), ("le", le), ("gt", gt), ("ge", ge)] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("date_{op}_timestamp")), leak(format!("timestamp_{op}_date"))], f);
    }
    plain(r, &["date_cmp_timestamp", "timestamp_cmp_date"], cmp);
}
