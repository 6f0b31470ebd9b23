//! Aggregate functions: which ones Tusk runs, their transition state and
//! final values (PostgreSQL's pg_aggregate rows, implemented natively).

use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::datetime::Interval;
use tusk_types::numeric::Numeric;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{compare::compare, Env};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregateKind {
    CountStar,
    Count,
    /// sum(int2/int4) → int8
    SumSmallInt,
    /// sum(int8) → numeric
    SumBigInt,
    SumFloat4,
    SumFloat8,
    SumNumeric,
    SumInterval,
    /// avg(int2/int4/int8) → numeric
    AvgInt,
    AvgFloat,
    AvgNumeric,
    AvgInterval,
    Min,
    Max,
    BoolAnd,
    BoolOr,
    StringAgg,
    /// xmlagg: concatenation of xml values (see `functions::xml`).
    XmlAgg,
    ByteaAgg,
    ArrayAgg,
    /// array_agg(anyarray): the input arrays become the items of a
    /// result one dimension larger (array_agg_array_transfn).
    ArrayAggArray,
    /// var_samp, var_pop, stddev_samp, stddev_pop over float8/float4
    VarianceFloat { population: bool, sqrt: bool },
    /// The same over integers and numeric, computed exactly.
    VarianceNumeric { population: bool, sqrt: bool },
    BitAnd,
    BitOr,
    /// json_agg / jsonb_agg over values of type `arg`.
    JsonAgg { jsonb: bool, arg: Oid },
    /// json_object_agg / jsonb_object_agg over (key, value) pairs.
    JsonObjectAgg { jsonb: bool, key: Oid, value: Oid },
    /// range_agg over ranges or multiranges → multirange
    RangeAgg,
    /// range_intersect_agg over ranges or multiranges
    RangeIntersectAgg,
    /// A user-defined aggregate (CREATE AGGREGATE): its transition and
    /// final functions are called through fmgr (see `executor::user_agg`).
    User,
}

/// Maps an aggregate call to an implementation by name and argument types.
pub fn lookup(name: &str, args: &[Oid], _ret: Oid) -> Option<AggregateKind> {
    use AggregateKind::*;
    let a0 = args.first().copied().unwrap_or(0);
    let int = matches!(a0, oid::INT2 | oid::INT4 | oid::INT8);
    Some(match (name, args.len()) {
        ("count", 0) => CountStar,
        ("count", 1) => Count,
        ("sum", 1) => match a0 {
            oid::INT2 | oid::INT4 => SumSmallInt,
            oid::INT8 => SumBigInt,
            oid::FLOAT4 => SumFloat4,
            oid::FLOAT8 => SumFloat8,
            oid::NUMERIC => SumNumeric,
            oid::INTERVAL => SumInterval,
            _ => return None,
        },
        ("avg", 1) => match a0 {
            oid::INT2 | oid::INT4 | oid::INT8 => AvgInt,
            oid::FLOAT4 | oid::FLOAT8 => AvgFloat,
            oid::NUMERIC => AvgNumeric,
            oid::INTERVAL => AvgInterval,
            _ => return None,
        },
        ("min", 1) => Min,
        ("max", 1) => Max,
        ("bool_and", 1) | ("every", 1) => BoolAnd,
        ("bool_or", 1) => BoolOr,
        ("string_agg", 2) if a0 == oid::BYTEA => ByteaAgg,
        ("string_agg", 2) => StringAgg,
        ("array_agg", 1) if crate::catalog::builtins().element_of(a0) != 0 => ArrayAggArray,
        ("array_agg", 1) => ArrayAgg,
        ("range_agg", 1) => RangeAgg,
        ("range_intersect_agg", 1) => RangeIntersectAgg,
        ("xmlagg", 1) => XmlAgg,
        ("json_agg", 1) | ("jsonb_agg", 1) => JsonAgg { jsonb: name == "jsonb_agg", arg: a0 },
        ("json_object_agg", 2) | ("jsonb_object_agg", 2) => JsonObjectAgg { jsonb: name == "jsonb_object_agg", key: a0, value: args[1] },
        ("bit_and", 1) if int => BitAnd,
        ("bit_or", 1) if int => BitOr,
        ("var_samp", 1) | ("variance", 1) | ("var_pop", 1) | ("stddev", 1) | ("stddev_samp", 1) | ("stddev_pop", 1) => {
            let population = name.ends_with("_pop");
            let sqrt = name.starts_with("stddev");
            if matches!(a0, oid::FLOAT4 | oid::FLOAT8) {
                VarianceFloat { population, sqrt }
            } else {
                VarianceNumeric { population, sqrt }
            }
        }
        _ => return None,
    })
}

/// The running state of one aggregate for one group.
#[derive(Clone, Debug)]
pub enum AggState {
    Count(i64),
    Int { sum: i128, count: i64 },
    Float { sum: f64, count: i64 },
    Numeric { sum: Option<Numeric>, count: i64 },
    Interval { sum: Option<Interval>, count: i64 },
    Extreme(Option<Datum>),
    Bool(Option<bool>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
    Array(Vec<Datum>, bool),
    /// Youngs-Cramer running values for float variance.
    FloatVar { n: f64, sum: f64, sxx: f64 },
    NumVar { n: i64, sum: Option<Numeric>, sumsq: Option<Numeric> },
    Bits(Option<i64>),
    /// A user-defined aggregate's transition value; `started` once the
    /// initial condition is in it, `no_value` while a strict transition
    /// function waits for the first non-null input to become the state.
    User { value: Datum, started: bool, no_value: bool },
}

impl AggregateKind {
    pub fn init(self) -> AggState {
        use AggregateKind::*;
        match self {
            CountStar | Count => AggState::Count(0),
            SumSmallInt | SumBigInt | AvgInt => AggState::Int { sum: 0, count: 0 },
            SumFloat4 | SumFloat8 | AvgFloat => AggState::Float { sum: 0.0, count: 0 },
            SumNumeric | AvgNumeric => AggState::Numeric { sum: None, count: 0 },
            SumInterval | AvgInterval => AggState::Interval { sum: None, count: 0 },
            Min | Max | XmlAgg => AggState::Extreme(None),
            BoolAnd | BoolOr => AggState::Bool(None),
            StringAgg => AggState::Text(None),
            ByteaAgg => AggState::Bytes(None),
            ArrayAgg | ArrayAggArray | JsonAgg { .. } | JsonObjectAgg { .. } | RangeAgg => AggState::Array(Vec::new(), false),
            RangeIntersectAgg => AggState::Extreme(None),
            VarianceFloat { .. } => AggState::FloatVar { n: 0.0, sum: 0.0, sxx: 0.0 },
            VarianceNumeric { .. } => AggState::NumVar { n: 0, sum: None, sumsq: None },
            BitAnd | BitOr => AggState::Bits(None),
            User => AggState::User { value: Datum::Null, started: false, no_value: false },
        }
    }

    /// Whether rows with a NULL (first) argument are skipped, as for a strict transition function.
    pub fn skips_nulls(self) -> bool {
        !matches!(
            self,
            AggregateKind::CountStar
                | AggregateKind::ArrayAgg
                | AggregateKind::ArrayAggArray
                | AggregateKind::RangeAgg
                | AggregateKind::User
                | AggregateKind::JsonAgg { .. }
                | AggregateKind::JsonObjectAgg { .. }
        )
    }

    /// Feeds one row's argument values.
    pub fn transition(self, state: &mut AggState, args: &[Datum]) -> PgResult<()> {
        use AggregateKind::*;
        let v = args.first().cloned().unwrap_or(Datum::Null);
        match (self, state) {
            (CountStar, AggState::Count(n)) | (Count, AggState::Count(n)) => *n += 1,
            (SumSmallInt | SumBigInt | AvgInt, AggState::Int { sum, count }) => {
                *sum += v.as_i64().unwrap_or(0) as i128;
                *count += 1;
            }
            (SumFloat4 | SumFloat8 | AvgFloat, AggState::Float { sum, count }) => {
                *sum += v.as_f64().unwrap_or(0.0);
                *count += 1;
            }
            (SumNumeric | AvgNumeric, AggState::Numeric { sum, count }) => {
                if let Datum::Numeric(n) = &v {
                    *sum = Some(match sum.take() {
                        None => (**n).clone(),
                        Some(s) => s.add(n)?,
                    });
                }
                *count += 1;
            }
            (SumInterval | AvgInterval, AggState::Interval { sum, count }) => {
                if let Datum::Interval(i) = &v {
                    *sum = Some(match sum.take() {
                        None => *i,
                        Some(s) => tusk_types::datetime::interval_add(&s, i)?,
                    });
                }
                *count += 1;
            }
            (Min, AggState::Extreme(cur)) => {
                if cur.as_ref().map(|c| compare(&v, c) == Ordering::Less).unwrap_or(true) {
                    *cur = Some(v);
                }
            }
            (Max, AggState::Extreme(cur)) => {
                if cur.as_ref().map(|c| compare(&v, c) == Ordering::Greater).unwrap_or(true) {
                    *cur = Some(v);
                }
            }
            // xmlconcat2 as the transition: a second value would need libxml.
            (XmlAgg, AggState::Extreme(cur)) => {
                if cur.is_some() {
                    return Err(super::xml::no_xml_support());
                }
                *cur = Some(v);
            }
            (BoolAnd, AggState::Bool(cur)) => *cur = Some(cur.unwrap_or(true) && v.as_bool().unwrap_or(true)),
            (BoolOr, AggState::Bool(cur)) => *cur = Some(cur.unwrap_or(false) || v.as_bool().unwrap_or(false)),
            (StringAgg, AggState::Text(cur)) => {
                let s = v.as_str().unwrap_or("");
                let d = args.get(1).and_then(|d| d.as_str());
                check_agg_append(cur.as_ref().map(|c| c.len()), d.map(str::len), s.len())?;
                match cur {
                    None => *cur = Some(s.to_string()),
                    Some(acc) => {
                        if let Some(d) = d {
                            acc.push_str(d);
                        }
                        acc.push_str(s);
                    }
                }
            }
            (ByteaAgg, AggState::Bytes(cur)) => {
                let Datum::Bytea(b) = &v else { return Ok(()) };
                let d = match args.get(1) {
                    Some(Datum::Bytea(d)) => Some(d),
                    _ => None,
                };
                check_agg_append(cur.as_ref().map(|c| c.len()), d.map(|d| d.len()), b.len())?;
                match cur {
                    None => *cur = Some(b.to_vec()),
                    Some(acc) => {
                        if let Some(d) = d {
                            acc.extend_from_slice(d);
                        }
                        acc.extend_from_slice(b);
                    }
                }
            }
            (ArrayAgg, AggState::Array(vals, started)) => {
                // accumArrayResult doubles its array of element pointers
                // from 8 and refuses one over MaxAllocSize.
                if vals.len() >= super::limits::MAX_ARRAY_SIZE / 2 + 1 {
                    return Err(super::limits::array_too_large(super::limits::MAX_ALLOC_SIZE));
                }
                *started = true;
                vals.push(v);
            }
            (JsonAgg { .. }, AggState::Array(vals, started)) => {
                *started = true;
                vals.push(v);
            }
            (JsonObjectAgg { jsonb, .. }, AggState::Array(vals, started)) => {
                if v.is_null() {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "field name must not be null"));
                }
                let _ = jsonb;
                *started = true;
                vals.push(Datum::Record(Arc::new(vec![v, args.get(1).cloned().unwrap_or(Datum::Null)])));
            }
            // range_agg_transfn is not strict: a NULL starts the state
            // (so the result is an empty multirange) but adds nothing.
            (RangeAgg, AggState::Array(vals, started)) => {
                *started = true;
                if !v.is_null() {
                    vals.push(v);
                }
            }
            (RangeIntersectAgg, AggState::Extreme(cur)) => {
                *cur = Some(match cur.take() {
                    None => v,
                    Some(c) => super::range::intersect_step(&c, &v)?,
                });
            }
            (ArrayAggArray, AggState::Array(vals, started)) => {
                super::array_fns::accumulate_array(vals, &v)?;
                *started = true;
            }
            (VarianceFloat { .. }, AggState::FloatVar { n, sum, sxx }) => {
                let x = v.as_f64().unwrap_or(0.0);
                *n += 1.0;
                *sum += x;
                if *n > 1.0 {
                    let tmp = x * *n - *sum;
                    *sxx += tmp * tmp / (*n * (*n - 1.0));
                }
            }
            (VarianceNumeric { .. }, AggState::NumVar { n, sum, sumsq }) => {
                let x = to_numeric(&v)?;
                let sq = x.mul(&x)?;
                *sum = Some(match sum.take() {
                    None => x,
                    Some(s) => s.add(&x)?,
                });
                *sumsq = Some(match sumsq.take() {
                    None => sq,
                    Some(s) => s.add(&sq)?,
                });
                *n += 1;
            }
            (BitAnd, AggState::Bits(cur)) => {
                let x = v.as_i64().unwrap_or(0);
                *cur = Some(cur.map(|c| c & x).unwrap_or(x));
            }
            (BitOr, AggState::Bits(cur)) => {
                let x = v.as_i64().unwrap_or(0);
                *cur = Some(cur.map(|c| c | x).unwrap_or(x));
            }
            _ => return Err(PgError::internal("aggregate state mismatch")),
        }
        Ok(())
    }

    /// The aggregate's result for a group. `ret` is the declared result type.
    pub fn finish(self, state: &AggState, ret: Oid, element: Oid, env: &dyn Env) -> PgResult<Datum> {
        use AggregateKind::*;
        Ok(match (self, state) {
            (JsonAgg { .. } | JsonObjectAgg { .. }, AggState::Array(_, false)) => Datum::Null,
            (JsonAgg { jsonb, arg }, AggState::Array(vals, true)) => {
                let settings = env.settings();
                if jsonb {
                    super::json::jsonb_agg_final(vals, arg, &settings)?
                } else {
                    super::json::json_agg_final(vals, arg, &settings)?
                }
            }
            (JsonObjectAgg { jsonb, key, value }, AggState::Array(vals, true)) => {
                let settings = env.settings();
                if jsonb {
                    super::json::jsonb_object_agg_final(vals, key, value, &settings)?
                } else {
                    super::json::json_object_agg_final(vals, key, value, &settings)?
                }
            }
            (CountStar | Count, AggState::Count(n)) => Datum::Int8(*n),
            (_, AggState::Int { count: 0, .. })
            | (_, AggState::Float { count: 0, .. })
            | (_, AggState::Numeric { count: 0, .. })
            | (_, AggState::Interval { count: 0, .. }) => Datum::Null,
            (SumSmallInt, AggState::Int { sum, .. }) => {
                Datum::Int8(i64::try_from(*sum).map_err(|_| super::int_out_of_range("bigint"))?)
            }
            (SumBigInt, AggState::Int { sum, .. }) => Datum::numeric(Numeric::parse(&sum.to_string())?),
            (AvgInt, AggState::Int { sum, count }) => {
                let s = Numeric::parse(&sum.to_string())?;
                Datum::numeric(s.div(&Numeric::from_i64(*count))?)
            }
            (SumFloat4, AggState::Float { sum, .. }) => Datum::Float4(*sum as f32),
            (SumFloat8, AggState::Float { sum, .. }) => Datum::Float8(*sum),
            (AvgFloat, AggState::Float { sum, count }) => Datum::Float8(*sum / *count as f64),
            (SumNumeric, AggState::Numeric { sum, .. }) => match sum {
                Some(s) => Datum::numeric(s.clone()),
                None => Datum::Null,
            },
            (AvgNumeric, AggState::Numeric { sum, count }) => match sum {
                Some(s) => Datum::numeric(s.div(&Numeric::from_i64(*count))?),
                None => Datum::Null,
            },
            (SumInterval, AggState::Interval { sum, .. }) => match sum {
                Some(s) => Datum::Interval(*s),
                None => Datum::Null,
            },
            (AvgInterval, AggState::Interval { sum, count }) => match sum {
                Some(s) => Datum::Interval(tusk_types::datetime::interval_div(s, *count as f64)?),
                None => Datum::Null,
            },
            (Min | Max | XmlAgg | RangeIntersectAgg, AggState::Extreme(v)) => v.clone().unwrap_or(Datum::Null),
            (RangeAgg, AggState::Array(vals, started)) => {
                if !*started {
                    Datum::Null
                } else {
                    let mut ranges = Vec::with_capacity(vals.len());
                    for v in vals {
                        super::range::agg_collect(&mut ranges, v);
                    }
                    super::range::agg_finish(&ranges, ret)?
                }
            }
            (BoolAnd | BoolOr, AggState::Bool(v)) => v.map(Datum::Bool).unwrap_or(Datum::Null),
            (StringAgg, AggState::Text(v)) => v.as_ref().map(|s| Datum::text(s)).unwrap_or(Datum::Null),
            (ByteaAgg, AggState::Bytes(v)) => v.as_ref().map(|b| Datum::bytea(b.clone())).unwrap_or(Datum::Null),
            (ArrayAgg, AggState::Array(vals, started)) => {
                if !*started {
                    Datum::Null
                } else {
                    super::limits::check_array(vals)?;
                    Datum::Array(Arc::new(Array::from_vec(element, vals.clone())))
                }
            }
            (ArrayAggArray, AggState::Array(vals, started)) => {
                if !*started {
                    Datum::Null
                } else {
                    super::array_fns::finish_arrays(vals, crate::catalog::builtins().element_of(ret))?
                }
            }
            (VarianceFloat { population, sqrt }, AggState::FloatVar { n, sxx, .. }) => {
                let denom = if population { *n } else { *n - 1.0 };
                if *n == 0.0 || denom <= 0.0 {
                    Datum::Null
                } else {
                    let var = *sxx / denom;
                    Datum::Float8(if sqrt { var.sqrt() } else { var })
                }
            }
            (VarianceNumeric { population, sqrt }, AggState::NumVar { n, sum, sumsq }) => {
                let denom_n = if population { *n } else { *n - 1 };
                match (sum, sumsq) {
                    (Some(s), Some(ss)) if denom_n > 0 => {
                        // (n * sumsq - sum^2) / (n * denom)
                        let nn = Numeric::from_i64(*n);
                        let num = nn.mul(ss)?.sub(&s.mul(s)?)?;
                        let den = nn.mul(&Numeric::from_i64(denom_n))?;
                        let var = num.div(&den)?;
                        Datum::numeric(if sqrt { var.sqrt()? } else { var })
                    }
                    _ => Datum::Null,
                }
            }
            (BitAnd | BitOr, AggState::Bits(v)) => match v {
                None => Datum::Null,
                Some(x) => match ret {
                    oid::INT2 => Datum::Int2(*x as i16),
                    oid::INT4 => Datum::Int4(*x as i32),
                    _ => Datum::Int8(*x),
                },
            },
            _ => return Err(PgError::new(sqlstate::INTERNAL_ERROR, "aggregate state mismatch")),
        })
    }
}

fn to_numeric(d: &Datum) -> PgResult<Numeric> {
    Ok(match d {
        Datum::Numeric(n) => (**n).clone(),
        other => Numeric::from_i64(other.as_i64().unwrap_or(0)),
    })
}

/// string_agg's StringInfo checks, as PostgreSQL 15 appends: the first
/// value alone, then each delimiter and value.
fn check_agg_append(acc: Option<usize>, delim: Option<usize>, value: usize) -> PgResult<()> {
    let Some(mut len) = acc else { return super::limits::check_append(0, value) };
    if let Some(d) = delim {
        super::limits::check_append(len, d)?;
        len += d;
    }
    super::limits::check_append(len, value)
}
