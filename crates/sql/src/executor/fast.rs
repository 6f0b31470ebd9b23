//! Expressions compiled once for repeated evaluation over parameters
//! (PL/pgSQL's simple expressions: `i % 3 = 0`, `s + i * 2`): the
//! built-in integer operators are computed in place, the rest of a tree
//! is evaluated by `eval` as before.
//!
//! The integer forms change nothing but speed: a result out of range, a
//! division by zero, an argument of an unexpected kind go to the
//! operator's own implementation with the same argument values, which
//! gives PostgreSQL's answer or error.

use tusk_types::oid::{self, Oid};
use tusk_types::{Datum, PgResult, SqlType};

use super::eval::{call, eval};
use super::ExecCx;
use crate::expr::Expr;

/// User-defined functions get OIDs from here up (FirstNormalObjectId):
/// a function below it named `int4pl` is PostgreSQL's.
const FIRST_NORMAL_OID: Oid = 16384;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A compiled expression.
pub enum FastExpr {
    Const(Datum),
    Param(usize),
    /// A built-in integer operator (`int4pl`, `int84mi`, `int4eq`, ...);
    /// `call` is the original node, whose function answers what the
    /// in-place arithmetic does not.
    Int { op: IntOp, result: Oid, args: Box<[FastExpr; 2]>, call: Expr },
    Other(Expr),
}

/// The operator of a built-in integer function's name: `int`, one or two
/// widths, an operation.
fn int_op(name: &str) -> Option<IntOp> {
    let rest = name.strip_prefix("int")?;
    let widths = rest.bytes().take_while(|b| matches!(b, b'2' | b'4' | b'8')).count();
    if widths == 0 || widths > 2 {
        return None;
    }
    Some(match &rest[widths..] {
        "pl" => IntOp::Add,
        "mi" => IntOp::Sub,
        "mul" => IntOp::Mul,
        "div" => IntOp::Div,
        "mod" => IntOp::Mod,
        "eq" => IntOp::Eq,
        "ne" => IntOp::Ne,
        "lt" => IntOp::Lt,
        "le" => IntOp::Le,
        "gt" => IntOp::Gt,
        "ge" => IntOp::Ge,
        _ => return None,
    })
}

impl FastExpr {
    pub fn compile(e: &Expr) -> FastExpr {
        match e {
            Expr::Const(d, _) => FastExpr::Const(d.clone()),
            Expr::Param(i, _) => FastExpr::Param(*i),
            Expr::Func { func, args, ty } if args.len() == 2 && func.oid < FIRST_NORMAL_OID && func.strict => {
                let result_ok = matches!(ty.oid, oid::INT2 | oid::INT4 | oid::INT8 | oid::BOOL);
                let ints = args.iter().all(|a| matches!(a.ty().oid, oid::INT2 | oid::INT4 | oid::INT8));
                match int_op(&func.name) {
                    Some(op) if result_ok && ints => FastExpr::Int {
                        op,
                        result: ty.oid,
                        args: Box::new([FastExpr::compile(&args[0]), FastExpr::compile(&args[1])]),
                        call: e.clone(),
                    },
                    _ => FastExpr::Other(e.clone()),
                }
            }
            other => FastExpr::Other(other.clone()),
        }
    }

    /// The value over `cx.params` (no row: a simple expression reads none).
    pub fn eval(&self, cx: &ExecCx) -> PgResult<Datum> {
        match self {
            FastExpr::Const(d) => Ok(d.clone()),
            FastExpr::Param(i) => match cx.params.get(*i) {
                // (the common kinds copied here rather than by Datum's clone)
                Some(Datum::Int4(v)) => Ok(Datum::Int4(*v)),
                Some(Datum::Int8(v)) => Ok(Datum::Int8(*v)),
                Some(Datum::Bool(v)) => Ok(Datum::Bool(*v)),
                Some(d) => Ok(d.clone()),
                None => eval(&Expr::Param(*i, SqlType::new(oid::UNKNOWN)), &[], cx),
            },
            FastExpr::Int { op, result, args, call: node } => {
                // Integer arguments straight from registers when they can
                // be had so (a Datum result goes through memory).
                match (args[0].try_int(cx), args[1].try_int(cx)) {
                    (IntVal::Val(x), IntVal::Val(y)) => {
                        if let Some(v) = int_apply(*op, *result, x, y) {
                            return Ok(v);
                        }
                    }
                    (IntVal::Null, IntVal::Val(_) | IntVal::Null) | (IntVal::Val(_), IntVal::Null) => return Ok(Datum::Null),
                    _ => {}
                }
                let a = args[0].eval(cx)?;
                let b = args[1].eval(cx)?;
                if a.is_null() || b.is_null() {
                    return Ok(Datum::Null);
                }
                if let (Some(x), Some(y)) = (int_of(&a), int_of(&b)) {
                    if let Some(v) = int_apply(*op, *result, x, y) {
                        return Ok(v);
                    }
                }
                let Expr::Func { func, args: arg_exprs, ty } = node else { return eval(node, &[], cx) };
                call(func, &[a, b], arg_exprs, *ty, cx)
            }
            FastExpr::Other(e) => eval(e, &[], cx),
        }
    }
}

/// An integer node's value without a Datum: `Slow` where `eval` must
/// answer (not an integer node, an overflow, an unexpected kind); nothing
/// is evaluated twice but pure integer nodes.
enum IntVal {
    Val(i64),
    Null,
    Slow,
}

impl FastExpr {
    #[inline]
    fn try_int(&self, cx: &ExecCx) -> IntVal {
        let of = |d: &Datum| match d {
            Datum::Int2(v) => IntVal::Val(*v as i64),
            Datum::Int4(v) => IntVal::Val(*v as i64),
            Datum::Int8(v) => IntVal::Val(*v),
            Datum::Null => IntVal::Null,
            _ => IntVal::Slow,
        };
        match self {
            FastExpr::Const(d) => of(d),
            FastExpr::Param(i) => cx.params.get(*i).map(of).unwrap_or(IntVal::Slow),
            FastExpr::Int { op, result, args, .. } if *result != oid::BOOL => match (args[0].try_int(cx), args[1].try_int(cx)) {
                (IntVal::Val(x), IntVal::Val(y)) => match int_apply(*op, *result, x, y) {
                    Some(d) => of(&d),
                    None => IntVal::Slow,
                },
                (IntVal::Null, IntVal::Val(_) | IntVal::Null) | (IntVal::Val(_), IntVal::Null) => IntVal::Null,
                _ => IntVal::Slow,
            },
            _ => IntVal::Slow,
        }
    }
}

#[inline(always)]
fn int_of(d: &Datum) -> Option<i64> {
    match d {
        Datum::Int2(v) => Some(*v as i64),
        Datum::Int4(v) => Some(*v as i64),
        Datum::Int8(v) => Some(*v),
        _ => None,
    }
}

/// The operator's value, None where the function itself must answer
/// (overflow, division by zero).
#[inline(always)]
fn int_apply(op: IntOp, result: Oid, x: i64, y: i64) -> Option<Datum> {
    let v = match op {
        IntOp::Add => x.checked_add(y)?,
        IntOp::Sub => x.checked_sub(y)?,
        IntOp::Mul => x.checked_mul(y)?,
        IntOp::Div if y != 0 => x.checked_div(y)?,
        IntOp::Mod if y != 0 => x.checked_rem(y)?,
        IntOp::Div | IntOp::Mod => return None,
        IntOp::Eq => return (result == oid::BOOL).then_some(Datum::Bool(x == y)),
        IntOp::Ne => return (result == oid::BOOL).then_some(Datum::Bool(x != y)),
        IntOp::Lt => return (result == oid::BOOL).then_some(Datum::Bool(x < y)),
        IntOp::Le => return (result == oid::BOOL).then_some(Datum::Bool(x <= y)),
        IntOp::Gt => return (result == oid::BOOL).then_some(Datum::Bool(x > y)),
        IntOp::Ge => return (result == oid::BOOL).then_some(Datum::Bool(x >= y)),
    };
    match result {
        oid::INT2 => i16::try_from(v).ok().map(Datum::Int2),
        oid::INT4 => i32::try_from(v).ok().map(Datum::Int4),
        oid::INT8 => Some(Datum::Int8(v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_integer_operators() {
        assert_eq!(int_op("int4pl"), Some(IntOp::Add));
        assert_eq!(int_op("int84mi"), Some(IntOp::Sub));
        assert_eq!(int_op("int2mod"), Some(IntOp::Mod));
        assert_eq!(int_op("int48ge"), Some(IntOp::Ge));
        assert_eq!(int_op("int4larger"), None);
        assert_eq!(int_op("int4"), None);
        assert_eq!(int_op("interval_pl"), None);
        assert_eq!(int_op("int248pl"), None);
    }

    #[test]
    fn arithmetic_leaves_errors_to_the_function() {
        assert_eq!(int_apply(IntOp::Add, oid::INT4, i32::MAX as i64, 1), None);
        assert_eq!(int_apply(IntOp::Add, oid::INT8, i32::MAX as i64, 1), Some(Datum::Int8(i32::MAX as i64 + 1)));
        assert_eq!(int_apply(IntOp::Div, oid::INT4, 1, 0), None);
        assert_eq!(int_apply(IntOp::Mod, oid::INT8, i64::MIN, -1), None);
        assert_eq!(int_apply(IntOp::Div, oid::INT4, -7, 2), Some(Datum::Int4(-3)));
        assert_eq!(int_apply(IntOp::Mod, oid::INT4, -7, 2), Some(Datum::Int4(-1)));
        assert_eq!(int_apply(IntOp::Lt, oid::BOOL, 1, 2), Some(Datum::Bool(true)));
        assert_eq!(int_apply(IntOp::Mul, oid::INT2, 200, 200), None);
    }
}
