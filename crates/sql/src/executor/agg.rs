//! Grouping and aggregation: a hash table from group key to the running
//! states of the query's aggregates. Output rows are the group key values
//! followed by the aggregate results. With no GROUP BY there is exactly one
//! group, even over no input rows.

use std::collections::{HashMap, HashSet};

use tusk_types::{Datum, GroupKey, PgResult};

use super::eval::{eval, eval_pred};
use super::nodes::compare_keys;
use super::{ExecCx, Node, Row};
use crate::expr::{AggCall, Expr};
use crate::functions::agg::AggState;

/// Per group and aggregate: the state, or (for DISTINCT / ORDER BY
/// aggregates) the buffered inputs to replay at the end.
enum Slot {
    State(AggState),
    Buffered(Vec<(Vec<Datum>, Vec<Datum>)>),
}

pub struct AggNode {
    input: Option<Box<dyn Node>>,
    group: Vec<Expr>,
    aggs: Vec<AggCall>,
    output: std::vec::IntoIter<Row>,
}

impl AggNode {
    pub fn new(input: Box<dyn Node>, group: Vec<Expr>, aggs: Vec<AggCall>) -> AggNode {
        AggNode { input: Some(input), group, aggs, output: Vec::new().into_iter() }
    }

    fn new_slots(&self) -> Vec<Slot> {
        self.aggs
            .iter()
            .map(|a| if a.distinct || !a.order_by.is_empty() { Slot::Buffered(Vec::new()) } else { Slot::State(a.kind.init()) })
            .collect()
    }

    fn feed(&self, slots: &mut [Slot], row: &[Datum], cx: &ExecCx) -> PgResult<()> {
        for (a, slot) in self.aggs.iter().zip(slots.iter_mut()) {
            if let Some(f) = &a.filter {
                if !eval_pred(f, row, cx)? {
                    continue;
                }
            }
            let mut args = Vec::with_capacity(a.args.len());
            for e in &a.args {
                args.push(eval(e, row, cx)?);
            }
            if a.kind.skips_nulls() && args.first().map(Datum::is_null).unwrap_or(false) {
                continue;
            }
            match slot {
                Slot::State(s) => a.kind.transition(s, &args)?,
                Slot::Buffered(buf) => {
                    let mut keys = Vec::with_capacity(a.order_by.len());
                    for (e, _, _) in &a.order_by {
                        keys.push(eval(e, row, cx)?);
                    }
                    buf.push((keys, args));
                }
            }
        }
        Ok(())
    }

    fn finish(&self, slots: Vec<Slot>, cx: &ExecCx) -> PgResult<Vec<Datum>> {
        let mut out = Vec::with_capacity(slots.len());
        for (a, slot) in self.aggs.iter().zip(slots) {
            let state = match slot {
                Slot::State(s) => s,
                Slot::Buffered(mut buf) => {
                    if !a.order_by.is_empty() {
                        let flags: Vec<(bool, bool)> = a.order_by.iter().map(|(_, d, n)| (*d, *n)).collect();
                        buf.sort_by(|x, y| compare_keys(&x.0, &y.0, &flags));
                    } else if a.distinct {
                        // PostgreSQL removes duplicates by sorting the
                        // arguments, so a DISTINCT aggregate sees them in order.
                        let flags = vec![(false, false); buf.first().map(|b| b.1.len()).unwrap_or(0)];
                        buf.sort_by(|x, y| compare_keys(&x.1, &y.1, &flags));
                    }
                    let mut s = a.kind.init();
                    let mut seen = HashSet::new();
                    for (_, args) in buf {
                        if a.distinct && !seen.insert(GroupKey(args.clone())) {
                            continue;
                        }
                        a.kind.transition(&mut s, &args)?;
                    }
                    s
                }
            };
            let element = a.arg_types.first().map(|t| t.oid).unwrap_or(0);
            out.push(a.kind.finish(&state, a.ty.oid, element, cx.env)?);
        }
        Ok(out)
    }
}

impl Node for AggNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut groups: HashMap<GroupKey, usize> = HashMap::new();
            let mut states: Vec<(Vec<Datum>, Vec<Slot>)> = Vec::new();
            let mut n = 0u64;
            while let Some(row) = input.next(cx)? {
                n += 1;
                if n % 4096 == 0 {
                    cx.check()?;
                }
                let mut key = Vec::with_capacity(self.group.len());
                for g in &self.group {
                    key.push(eval(g, &row, cx)?);
                }
                // bpchar values equal up to trailing blanks fall in one group.
                let hashed: Vec<Datum> = key
                    .iter()
                    .zip(&self.group)
                    .map(|(d, g)| match (d, g.ty().oid) {
                        (Datum::Text(s), tusk_types::oid::BPCHAR) => Datum::text(s.trim_end_matches(' ')),
                        (d, _) => d.clone(),
                    })
                    .collect();
                let idx = match groups.get(&GroupKey(hashed.clone())) {
                    Some(&i) => i,
                    None => {
                        states.push((key, self.new_slots()));
                        groups.insert(GroupKey(hashed), states.len() - 1);
                        states.len() - 1
                    }
                };
                self.feed(&mut states[idx].1, &row, cx)?;
            }
            if states.is_empty() && self.group.is_empty() {
                states.push((Vec::new(), self.new_slots()));
            }
            let mut out = Vec::with_capacity(states.len());
            for (key, slots) in states {
                let mut row = key;
                row.extend(self.finish(slots, cx)?);
                out.push(row);
            }
            self.output = out.into_iter();
        }
        Ok(self.output.next())
    }
}
