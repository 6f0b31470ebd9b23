//! Window functions (PostgreSQL's nodeWindowAgg.c and windowfuncs.c).
//!
//! The node reads its whole input, which a Sort below has ordered by the
//! partition keys and then the window's ORDER BY keys, splits it into
//! partitions and, within each, into peer groups (rows equal on the ORDER
//! BY keys). Each function then computes one value per row: ranking
//! functions from the row's position and peer group, lag/lead from rows at
//! an offset, and the value functions and aggregates from the row's frame.
//! Output rows are the input rows, in the same order, followed by one
//! column per function.
//!
//! Aggregates over a frame that starts at the partition's first row are
//! computed incrementally (the frame's end only moves forward); other
//! frames are aggregated afresh for every row.

use std::cmp::Ordering;

use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::eval::{eval, eval_pred};
use super::nodes::compare_keys;
use super::{ExecCx, Node, Row};
use crate::expr::{AggCall, Expr, FrameBound, FrameExclusion, FrameMode, WindowCall, WindowFrame, WindowFuncKind};
use crate::functions::agg::AggState;

pub struct WindowAggNode {
    input: Option<Box<dyn Node>>,
    partition: Vec<Expr>,
    order: Vec<(Expr, bool, bool)>,
    funcs: Vec<WindowCall>,
    output: std::vec::IntoIter<Row>,
}

impl WindowAggNode {
    pub fn new(input: Box<dyn Node>, partition: Vec<Expr>, order: Vec<(Expr, bool, bool)>, funcs: Vec<WindowCall>) -> WindowAggNode {
        WindowAggNode { input: Some(input), partition, order, funcs, output: Vec::new().into_iter() }
    }
}

impl Node for WindowAggNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut rows: Vec<Row> = Vec::new();
            let mut part_keys: Vec<Vec<Datum>> = Vec::new();
            let mut order_keys: Vec<Vec<Datum>> = Vec::new();
            while let Some(row) = input.next(cx)? {
                if rows.len() % 4096 == 0 {
                    cx.check()?;
                }
                part_keys.push(self.partition.iter().map(|e| eval(e, &row, cx)).collect::<PgResult<_>>()?);
                order_keys.push(self.order.iter().map(|(e, _, _)| eval(e, &row, cx)).collect::<PgResult<_>>()?);
                rows.push(row);
            }
            let frames: Vec<FrameOffsets> = self.funcs.iter().map(|f| FrameOffsets::evaluate(&f.frame, cx)).collect::<PgResult<_>>()?;
            let part_flags = vec![(false, false); self.partition.len()];
            let order_flags: Vec<(bool, bool)> = self.order.iter().map(|(_, d, n)| (*d, *n)).collect();
            let mut results: Vec<Vec<Datum>> = vec![Vec::with_capacity(self.funcs.len()); rows.len()];
            let mut start = 0;
            while start < rows.len() {
                let mut end = start + 1;
                while end < rows.len() && compare_keys(&part_keys[start], &part_keys[end], &part_flags) == Ordering::Equal {
                    end += 1;
                }
                let part = Partition::new(&rows[start..end], &order_keys[start..end], &order_flags);
                for (f, offsets) in self.funcs.iter().zip(&frames) {
                    let values = part.compute(f, offsets, cx)?;
                    for (i, v) in values.into_iter().enumerate() {
                        results[start + i].push(v);
                    }
                }
                cx.check()?;
                start = end;
            }
            let out: Vec<Row> = rows
                .into_iter()
                .zip(results)
                .map(|(mut row, vals)| {
                    row.extend(vals);
                    row
                })
                .collect();
            self.output = out.into_iter();
        }
        Ok(self.output.next())
    }
}

/// A frame's offsets, evaluated once per execution (they hold no column
/// references). For RANGE they are distances; the bound values themselves
/// are computed per row from the window's ORDER BY value.
struct FrameOffsets {
    start: Option<Datum>,
    end: Option<Datum>,
}

impl FrameOffsets {
    fn evaluate(frame: &WindowFrame, cx: &ExecCx) -> PgResult<FrameOffsets> {
        let one = |b: &FrameBound, which: &str| -> PgResult<Option<Datum>> {
            let e = match b {
                FrameBound::Preceding(e) | FrameBound::Following(e) => e,
                _ => return Ok(None),
            };
            let v = eval(e, &[], cx)?;
            if v.is_null() {
                return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("frame {which} offset must not be null")));
            }
            if is_negative(&v) {
                return Err(match frame.mode {
                    FrameMode::Range => {
                        PgError::new(sqlstate::INVALID_PRECEDING_OR_FOLLOWING_SIZE, "invalid preceding or following size in window function")
                    }
                    _ => PgError::new(sqlstate::INVALID_PRECEDING_OR_FOLLOWING_SIZE, format!("frame {which} offset must not be negative")),
                });
            }
            Ok(Some(v))
        };
        Ok(FrameOffsets { start: one(&frame.start, "starting")?, end: one(&frame.end, "ending")? })
    }
}

fn is_negative(v: &Datum) -> bool {
    match v {
        Datum::Int2(x) => *x < 0,
        Datum::Int4(x) => *x < 0,
        Datum::Int8(x) => *x < 0,
        Datum::Float4(x) => *x < 0.0,
        Datum::Float8(x) => *x < 0.0,
        Datum::Numeric(n) => **n < tusk_types::numeric::Numeric::from_i64(0),
        Datum::Interval(iv) => iv.span() < 0,
        _ => false,
    }
}

fn offset_rows(v: &Option<Datum>) -> usize {
    match v {
        Some(Datum::Int8(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        Some(Datum::Int4(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        _ => 0,
    }
}

/// One partition's rows with their peer groups.
struct Partition<'r> {
    rows: &'r [Row],
    order_keys: &'r [Vec<Datum>],
    order_flags: &'r [(bool, bool)],
    /// Peer group number of each row.
    group_of: Vec<usize>,
    /// First row of each peer group, plus the partition's end.
    group_starts: Vec<usize>,
}

impl<'r> Partition<'r> {
    fn new(rows: &'r [Row], order_keys: &'r [Vec<Datum>], order_flags: &'r [(bool, bool)]) -> Partition<'r> {
        let mut group_of = Vec::with_capacity(rows.len());
        let mut group_starts = Vec::new();
        for i in 0..rows.len() {
            if i == 0 || compare_keys(&order_keys[i - 1], &order_keys[i], order_flags) != Ordering::Equal {
                group_starts.push(i);
            }
            group_of.push(group_starts.len() - 1);
        }
        group_starts.push(rows.len());
        Partition { rows, order_keys, order_flags, group_of, group_starts }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn peers(&self, i: usize) -> (usize, usize) {
        let g = self.group_of[i];
        (self.group_starts[g], self.group_starts[g + 1])
    }

    /// Rows [start, end) of row `i`'s frame, before exclusion.
    fn frame(&self, f: &WindowCall, offsets: &FrameOffsets, i: usize, cx: &ExecCx) -> PgResult<(usize, usize)> {
        let n = self.len();
        let frame = &f.frame;
        let start = match &frame.start {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow => match frame.mode {
                FrameMode::Rows => i,
                _ => self.peers(i).0,
            },
            FrameBound::Preceding(_) | FrameBound::Following(_) => {
                let preceding = matches!(frame.start, FrameBound::Preceding(_));
                self.offset_bound(frame.mode, &offsets.start, preceding, true, i, cx)?
            }
        };
        let end = match &frame.end {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow => match frame.mode {
                FrameMode::Rows => i + 1,
                _ => self.peers(i).1,
            },
            FrameBound::Preceding(_) | FrameBound::Following(_) => {
                let preceding = matches!(frame.end, FrameBound::Preceding(_));
                self.offset_bound(frame.mode, &offsets.end, preceding, false, i, cx)?
            }
        };
        Ok((start, end.max(start)))
    }

    /// Where an offset bound falls for row `i`: for a frame start, the
    /// first row in the frame; for a frame end, one past the last.
    fn offset_bound(&self, mode: FrameMode, offset: &Option<Datum>, preceding: bool, is_start: bool, i: usize, cx: &ExecCx) -> PgResult<usize> {
        let n = self.len();
        match mode {
            FrameMode::Rows => {
                let k = offset_rows(offset);
                let target = if preceding { i as i128 - k as i128 } else { i as i128 + k as i128 };
                let edge = if is_start { target } else { target + 1 };
                Ok(edge.clamp(0, n as i128) as usize)
            }
            FrameMode::Groups => {
                let k = offset_rows(offset) as i128;
                let g = self.group_of[i] as i128;
                let target = if preceding { g - k } else { g + k };
                let groups = self.group_starts.len() as i128 - 1;
                if target < 0 {
                    return Ok(0);
                }
                if target >= groups {
                    return Ok(n);
                }
                let t = target as usize;
                Ok(if is_start { self.group_starts[t] } else { self.group_starts[t + 1] })
            }
            FrameMode::Range => {
                let cur = &self.order_keys[i][0];
                if cur.is_null() {
                    // NULLs are peers of each other and at no distance from
                    // any value: the frame edge is the current row's peer group.
                    let (s, e) = self.peers(i);
                    return Ok(if is_start { s } else { e });
                }
                let offset = offset.as_ref().ok_or_else(|| PgError::internal("RANGE offset"))?;
                let (desc, _) = self.order_flags[0];
                // "Preceding" rows come before in the sort order: smaller
                // values ascending, larger descending.
                let add = preceding == desc;
                let bound = range_bound(cur, offset, add, cx)?;
                let flags = &self.order_flags[..1];
                let key = |j: usize| -> &[Datum] { &self.order_keys[j][..1] };
                let b = [bound];
                let (lo, hi) = (0usize, n);
                Ok(if is_start {
                    partition_point(lo, hi, |j| compare_keys(key(j), &b, flags) == Ordering::Less)
                } else {
                    partition_point(lo, hi, |j| compare_keys(key(j), &b, flags) != Ordering::Greater)
                })
            }
        }
    }

    /// Whether row `j` is left out of row `i`'s frame by EXCLUDE.
    fn excluded(&self, exclusion: FrameExclusion, i: usize, j: usize) -> bool {
        match exclusion {
            FrameExclusion::NoOthers => false,
            FrameExclusion::CurrentRow => i == j,
            FrameExclusion::Group => self.group_of[i] == self.group_of[j],
            FrameExclusion::Ties => i != j && self.group_of[i] == self.group_of[j],
        }
    }

    /// The rows of row `i`'s frame, in order.
    fn frame_rows(&self, f: &WindowCall, offsets: &FrameOffsets, i: usize, cx: &ExecCx) -> PgResult<Vec<usize>> {
        let (s, e) = self.frame(f, offsets, i, cx)?;
        Ok((s..e).filter(|&j| !self.excluded(f.frame.exclusion, i, j)).collect())
    }

    fn compute(&self, f: &WindowCall, offsets: &FrameOffsets, cx: &ExecCx) -> PgResult<Vec<Datum>> {
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        match &f.kind {
            WindowFuncKind::RowNumber => out.extend((0..n).map(|i| Datum::Int8(i as i64 + 1))),
            WindowFuncKind::Rank => out.extend((0..n).map(|i| Datum::Int8(self.peers(i).0 as i64 + 1))),
            WindowFuncKind::DenseRank => out.extend((0..n).map(|i| Datum::Int8(self.group_of[i] as i64 + 1))),
            WindowFuncKind::PercentRank => {
                out.extend((0..n).map(|i| Datum::Float8(if n <= 1 { 0.0 } else { self.peers(i).0 as f64 / (n - 1) as f64 })))
            }
            WindowFuncKind::CumeDist => out.extend((0..n).map(|i| Datum::Float8(self.peers(i).1 as f64 / n as f64))),
            WindowFuncKind::Ntile => {
                // The bucket count is read from the first row, as PostgreSQL does.
                let buckets = match eval(&f.args[0], &self.rows[0], cx)? {
                    Datum::Null => None,
                    d => Some(int_arg(&d)),
                };
                match buckets {
                    None => out.extend((0..n).map(|_| Datum::Null)),
                    Some(b) if b <= 0 => {
                        return Err(PgError::new(sqlstate::INVALID_ARGUMENT_FOR_NTILE, "argument of ntile must be greater than zero"))
                    }
                    Some(b) => {
                        let b = b as usize;
                        let per = n / b;
                        let extra = n % b;
                        let mut i = 0;
                        let mut bucket = 1;
                        while i < n {
                            let size = per + usize::from(bucket <= extra);
                            for _ in 0..size.max(1) {
                                if i < n {
                                    out.push(Datum::Int4(bucket as i32));
                                    i += 1;
                                }
                            }
                            bucket += 1;
                        }
                    }
                }
            }
            WindowFuncKind::Lag | WindowFuncKind::Lead => {
                let lead = f.kind == WindowFuncKind::Lead;
                for i in 0..n {
                    let row = &self.rows[i];
                    let offset = match f.args.get(1) {
                        Some(e) => match eval(e, row, cx)? {
                            Datum::Null => {
                                out.push(Datum::Null);
                                continue;
                            }
                            d => int_arg(&d),
                        },
                        None => 1,
                    };
                    let target = if lead { i as i64 + offset } else { i as i64 - offset };
                    if target >= 0 && (target as usize) < n {
                        out.push(eval(&f.args[0], &self.rows[target as usize], cx)?);
                    } else {
                        out.push(match f.args.get(2) {
                            Some(d) => eval(d, row, cx)?,
                            None => Datum::Null,
                        });
                    }
                }
            }
            WindowFuncKind::FirstValue | WindowFuncKind::LastValue | WindowFuncKind::NthValue => {
                for i in 0..n {
                    // Each row walks its frame: quadratic in the partition.
                    cx.check()?;
                    let nth = if f.kind == WindowFuncKind::NthValue {
                        match eval(&f.args[1], &self.rows[i], cx)? {
                            Datum::Null => {
                                out.push(Datum::Null);
                                continue;
                            }
                            d => {
                                let k = int_arg(&d);
                                if k <= 0 {
                                    return Err(PgError::new(
                                        sqlstate::INVALID_ARGUMENT_FOR_NTH_VALUE,
                                        "argument of nth_value must be greater than zero",
                                    ));
                                }
                                Some(k as usize)
                            }
                        }
                    } else {
                        None
                    };
                    let frame = self.frame_rows(f, offsets, i, cx)?;
                    let pick = match f.kind {
                        WindowFuncKind::FirstValue => frame.first(),
                        WindowFuncKind::LastValue => frame.last(),
                        _ => frame.get(nth.unwrap_or(1) - 1),
                    };
                    out.push(match pick {
                        Some(&j) => eval(&f.args[0], &self.rows[j], cx)?,
                        None => Datum::Null,
                    });
                }
            }
            WindowFuncKind::Agg(a) => self.aggregate(f, a, offsets, cx, &mut out)?,
        }
        Ok(out)
    }

    fn aggregate(&self, f: &WindowCall, a: &AggCall, offsets: &FrameOffsets, cx: &ExecCx, out: &mut Vec<Datum>) -> PgResult<()> {
        let n = self.len();
        // Each row's aggregate input, or None when FILTER (or a NULL argument
        // of a NULL-skipping aggregate) leaves it out.
        let mut inputs: Vec<Option<Vec<Datum>>> = Vec::with_capacity(n);
        for row in self.rows {
            if let Some(filter) = &a.filter {
                if !eval_pred(filter, row, cx)? {
                    inputs.push(None);
                    continue;
                }
            }
            let args: Vec<Datum> = a.args.iter().map(|e| eval(e, row, cx)).collect::<PgResult<_>>()?;
            if a.kind.skips_nulls() && args.first().map(Datum::is_null).unwrap_or(false) {
                inputs.push(None);
            } else {
                inputs.push(Some(args));
            }
        }
        let element = a.arg_types.first().map(|t| t.oid).unwrap_or(0);
        let finish = |s: &AggState| super::user_agg::finish(a, s, element, cx.env);
        let running = matches!(f.frame.start, FrameBound::UnboundedPreceding) && f.frame.exclusion == FrameExclusion::NoOthers;
        if running {
            let mut state = a.kind.init();
            let mut fed = 0;
            let mut last: Option<(usize, Datum)> = None;
            for i in 0..n {
                // Finishing copies the state (array_agg, string_agg): quadratic.
                cx.check()?;
                let (_, end) = self.frame(f, offsets, i, cx)?;
                debug_assert!(end >= fed || end == 0, "a frame starting at the partition's start never shrinks");
                while fed < end {
                    if let Some(args) = &inputs[fed] {
                        super::user_agg::transition(a, &mut state, args, cx.env)?;
                    }
                    fed += 1;
                }
                // Peers share one frame end: finish once per distinct end.
                let v = match &last {
                    Some((e, v)) if *e == end => v.clone(),
                    _ => finish(&state)?,
                };
                last = Some((end, v.clone()));
                out.push(v);
            }
        } else {
            for i in 0..n {
                // Each row aggregates its whole frame afresh.
                cx.check()?;
                let mut state = a.kind.init();
                for j in self.frame_rows(f, offsets, i, cx)? {
                    if let Some(args) = &inputs[j] {
                        super::user_agg::transition(a, &mut state, args, cx.env)?;
                    }
                }
                out.push(finish(&state)?);
            }
        }
        Ok(())
    }
}

fn int_arg(d: &Datum) -> i64 {
    match d {
        Datum::Int2(x) => *x as i64,
        Datum::Int4(x) => *x as i64,
        Datum::Int8(x) => *x,
        _ => 0,
    }
}

/// The first index in [lo, hi) for which `pred` is false (`pred` holds on
/// a prefix of the range).
fn partition_point(mut lo: usize, mut hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `value + offset` (or `- offset`) for a RANGE frame edge, in the value's
/// type family. Past the end of the type's range the edge is infinitely far,
/// as PostgreSQL's in_range functions treat overflow.
fn range_bound(value: &Datum, offset: &Datum, add: bool, cx: &ExecCx) -> PgResult<Datum> {
    use tusk_types::datetime as dt;
    use tusk_types::datetime as ts;
    let sign = if add { 1i128 } else { -1i128 };
    Ok(match (value, offset) {
        (Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_), _) => {
            let v = int_arg(value) as i128 + sign * int_arg(offset) as i128;
            Datum::Int8(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
        }
        (Datum::Float4(_) | Datum::Float8(_), Datum::Float8(o)) => {
            let v = match value {
                Datum::Float4(x) => *x as f64,
                Datum::Float8(x) => *x,
                _ => unreachable!("matched above"),
            };
            Datum::Float8(if add { v + o } else { v - o })
        }
        (Datum::Numeric(v), Datum::Numeric(o)) => Datum::Numeric(std::sync::Arc::new(if add { v.add(o)? } else { v.sub(o)? })),
        (Datum::Date(d), Datum::Interval(iv)) => {
            let t = dt::date_to_timestamp(*d)?;
            Datum::Timestamp(saturate(if add { ts::timestamp_add_interval(t, iv) } else { ts::timestamp_sub_interval(t, iv) }, add))
        }
        (Datum::Timestamp(t), Datum::Interval(iv)) => {
            Datum::Timestamp(saturate(if add { ts::timestamp_add_interval(*t, iv) } else { ts::timestamp_sub_interval(*t, iv) }, add))
        }
        (Datum::TimestampTz(t), Datum::Interval(iv)) => {
            let zone = cx.env.settings().datetime.time_zone.clone();
            Datum::TimestampTz(saturate(
                if add { ts::timestamptz_add_interval(*t, iv, &zone) } else { ts::timestamptz_sub_interval(*t, iv, &zone) },
                add,
            ))
        }
        (Datum::Interval(v), Datum::Interval(o)) => {
            Datum::Interval(if add { dt::interval_add(v, o) } else { dt::interval_sub(v, o) }.unwrap_or(if add {
                dt::Interval::new(i32::MAX, i32::MAX, i64::MAX)
            } else {
                dt::Interval::new(i32::MIN, i32::MIN, i64::MIN)
            }))
        }
        (Datum::Time(t), Datum::Interval(iv)) => {
            // in_range for time does not wrap around midnight: an edge past
            // it is beyond every row.
            let v = *t as i128 + sign * iv.micros as i128;
            Datum::Time(v.clamp(-1, 86_400_000_001) as i64)
        }
        _ => return Err(PgError::unsupported("RANGE offsets for this type")),
    })
}

fn saturate(r: PgResult<i64>, add: bool) -> i64 {
    r.unwrap_or(if add { i64::MAX } else { i64::MIN })
}
