//! Grouping and aggregation: a hash table from group key to the running
//! states of the query's aggregates. Output rows are the group key values
//! followed by the aggregate results. With no GROUP BY there is exactly one
//! group, even over no input rows. Groups beyond `work_mem` spill their
//! rows to temporary files, aggregated in later passes.

use std::collections::HashSet;

use rustc_hash::FxHashMap;

use tusk_types::{Datum, GroupKey, PgResult};

use super::eval::{eval, eval_pred};
use super::nodes::compare_keys;
use super::sort::interruptible_sort;
use super::spill::{budget, partition_of, row_bytes, HashKey, SpillReader, SpillWriter};
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
    /// Groups of the current pass, finished and emitted one by one.
    groups: std::vec::IntoIter<(Vec<Datum>, Vec<Slot>)>,
    /// Partitions spilled by earlier passes, with the pass level that
    /// aggregates them.
    pending: Vec<(SpillReader, u32)>,
}

impl AggNode {
    pub fn new(input: Box<dyn Node>, group: Vec<Expr>, aggs: Vec<AggCall>) -> AggNode {
        AggNode { input: Some(input), group, aggs, groups: Vec::new().into_iter(), pending: Vec::new() }
    }

    fn new_slots(&self) -> Vec<Slot> {
        self.aggs
            .iter()
            .map(|a| if a.distinct || !a.order_by.is_empty() { Slot::Buffered(Vec::new()) } else { Slot::State(a.kind.init()) })
            .collect()
    }

    /// Feeds one row to a group's aggregates; returns the bytes it added
    /// to buffered (DISTINCT / ORDER BY) inputs.
    fn feed(&self, slots: &mut [Slot], row: &[Datum], cx: &ExecCx) -> PgResult<usize> {
        let mut added = 0;
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
                Slot::State(s) => super::user_agg::transition(a, s, &args, cx.env)?,
                Slot::Buffered(buf) => {
                    let mut keys = Vec::with_capacity(a.order_by.len());
                    for (e, _, _) in &a.order_by {
                        keys.push(eval(e, row, cx)?);
                    }
                    added += row_bytes(&keys) + row_bytes(&args);
                    buf.push((keys, args));
                }
            }
        }
        Ok(added)
    }

    fn finish(&self, slots: Vec<Slot>, cx: &ExecCx) -> PgResult<Vec<Datum>> {
        let mut out = Vec::with_capacity(slots.len());
        for (a, slot) in self.aggs.iter().zip(slots) {
            let state = match slot {
                Slot::State(s) => s,
                Slot::Buffered(mut buf) => {
                    if !a.order_by.is_empty() {
                        let flags: Vec<(bool, bool)> = a.order_by.iter().map(|(_, d, n)| (*d, *n)).collect();
                        interruptible_sort(cx, |tick| {
                            buf.sort_by(|x, y| {
                                tick();
                                compare_keys(&x.0, &y.0, &flags)
                            })
                        })?;
                    } else if a.distinct {
                        // PostgreSQL removes duplicates by sorting the
                        // arguments, so a DISTINCT aggregate sees them in order.
                        let flags = vec![(false, false); buf.first().map(|b| b.1.len()).unwrap_or(0)];
                        interruptible_sort(cx, |tick| {
                            buf.sort_by(|x, y| {
                                tick();
                                compare_keys(&x.1, &y.1, &flags)
                            })
                        })?;
                    }
                    let mut s = a.kind.init();
                    let mut seen = HashSet::new();
                    for (n, (_, args)) in buf.into_iter().enumerate() {
                        if n % 4096 == 4095 {
                            cx.check()?;
                        }
                        if a.distinct && !seen.insert(GroupKey(args.clone())) {
                            continue;
                        }
                        super::user_agg::transition(a, &mut s, &args, cx.env)?;
                    }
                    s
                }
            };
            let element = a.arg_types.first().map(|t| t.oid).unwrap_or(0);
            out.push(super::user_agg::finish(a, &state, element, cx.env)?);
        }
        Ok(out)
    }
}

/// Where a pass of aggregation reads its rows: the input, or a partition
/// an earlier pass spilled.
enum Source<'a> {
    Input(&'a mut dyn Node),
    Spilled(SpillReader),
}

impl Source<'_> {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        match self {
            Source::Input(n) => n.next(cx),
            Source::Spilled(r) => r.next(),
        }
    }
}

/// Partitions a pass splits the rows of groups it has no room for into.
const SPILL_PARTITIONS: usize = 32;

/// Fixed bytes per group beside its key: the hash table entry and each
/// aggregate's state.
const GROUP_OVERHEAD_BYTES: usize = 64;
const STATE_BYTES: usize = 64;

impl AggNode {
    /// One pass (PostgreSQL 13's spilling hash aggregation): groups are
    /// made in memory until they pass `work_mem`; from then on, rows of
    /// groups already in memory still feed them, and rows of any other
    /// group go to one of `SPILL_PARTITIONS` temporary files by the hash of
    /// their key, to be aggregated by later passes (each with a differently
    /// seeded hash). A pass always admits at least one group, so every pass
    /// makes progress.
    fn aggregate(&mut self, mut source: Source, level: u32, cx: &ExecCx) -> PgResult<Vec<(Vec<Datum>, Vec<Slot>)>> {
        let budget = budget(cx);
        let mut groups: FxHashMap<HashKey, usize> = FxHashMap::default();
        let mut states: Vec<(Vec<Datum>, Vec<Slot>)> = Vec::new();
        let mut held = 0usize;
        let mut partitions: Vec<SpillWriter> = Vec::new();
        let mut n = 0u64;
        while let Some(row) = source.next(cx)? {
            n += 1;
            if n % 4096 == 0 {
                cx.check()?;
            }
            let mut key = Vec::with_capacity(self.group.len());
            for g in &self.group {
                key.push(eval(g, &row, cx)?);
            }
            // bpchar values equal up to trailing blanks fall in one group.
            let hashed = HashKey::from_values(
                key.iter()
                    .zip(&self.group)
                    .map(|(d, g)| match (d, g.ty().oid) {
                        (Datum::Text(s), tusk_types::oid::BPCHAR) => Datum::text(s.trim_end_matches(' ')),
                        (d, _) => d.clone(),
                    })
                    .collect(),
            );
            let idx = match groups.get(&hashed) {
                Some(&i) => i,
                None if held > budget && !states.is_empty() => {
                    if partitions.is_empty() {
                        for _ in 0..SPILL_PARTITIONS {
                            partitions.push(SpillWriter::new(cx)?);
                        }
                    }
                    partitions[partition_of(&hashed, level, SPILL_PARTITIONS)].push(&row)?;
                    continue;
                }
                None => {
                    held += GROUP_OVERHEAD_BYTES + 2 * row_bytes(&key) + self.aggs.len() * STATE_BYTES;
                    states.push((key, self.new_slots()));
                    groups.insert(hashed, states.len() - 1);
                    states.len() - 1
                }
            };
            held += self.feed(&mut states[idx].1, &row, cx)?;
        }
        for p in partitions {
            if p.rows() > 0 {
                self.pending.push((p.into_reader()?, level + 1));
            }
        }
        Ok(states)
    }
}

impl Node for AggNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut states = self.aggregate(Source::Input(input.as_mut()), 0, cx)?;
            if states.is_empty() && self.group.is_empty() {
                states.push((Vec::new(), self.new_slots()));
            }
            self.groups = states.into_iter();
        }
        loop {
            if let Some((key, slots)) = self.groups.next() {
                let mut row = key;
                row.extend(self.finish(slots, cx)?);
                return Ok(Some(row));
            }
            let Some((partition, level)) = self.pending.pop() else { return Ok(None) };
            self.groups = self.aggregate(Source::Spilled(partition), level, cx)?.into_iter();
        }
    }
}
