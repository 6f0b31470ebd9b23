//! Joins: nested loop over a materialized inner side, and hash join (a
//! hybrid hash join that splits both sides into partitions on disk when the
//! build side passes `work_mem`).
//! Output rows are always left columns then right columns; the side that
//! has no match in an outer join contributes NULLs.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use tusk_types::{Datum, PgResult};

use super::eval::{eval, eval_pred};
use super::spill::{budget, datum_bytes, hash_normalize, partition_of, row_bytes, HashKey, SpillReader, SpillWriter};
use super::{ExecCx, Node, Row};
use crate::expr::Expr;
use crate::plan::Plan;
use crate::query::JoinKind;

fn concat(l: &[Datum], r: &[Datum]) -> Row {
    let mut row = Vec::with_capacity(l.len() + r.len());
    row.extend_from_slice(l);
    row.extend_from_slice(r);
    row
}

fn nulls(n: usize) -> Vec<Datum> {
    vec![Datum::Null; n]
}

/// Left rows against all (materialized) right rows.
pub struct NestedLoopNode {
    left: Box<dyn Node>,
    right: Option<Box<dyn Node>>,
    kind: JoinKind,
    predicate: Option<Expr>,
    left_width: usize,
    right_width: usize,
    right_rows: Vec<Row>,
    right_matched: Vec<bool>,
    current: Option<Row>,
    current_matched: bool,
    pos: usize,
    /// Emitting unmatched right rows (RIGHT/FULL) after the left side ended.
    tail: Option<usize>,
}

impl NestedLoopNode {
    pub fn new(left: Box<dyn Node>, right: Box<dyn Node>, kind: JoinKind, predicate: Option<Expr>, left_width: usize, right_width: usize) -> NestedLoopNode {
        NestedLoopNode {
            left,
            right: Some(right),
            kind,
            predicate,
            left_width,
            right_width,
            right_rows: Vec::new(),
            right_matched: Vec::new(),
            current: None,
            current_matched: false,
            pos: 0,
            tail: None,
        }
    }
}

impl Node for NestedLoopNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut r) = self.right.take() {
            while let Some(row) = r.next(cx)? {
                self.right_rows.push(row);
            }
            self.right_matched = vec![false; self.right_rows.len()];
        }
        loop {
            if let Some(t) = self.tail.as_mut() {
                while *t < self.right_rows.len() {
                    let i = *t;
                    *t += 1;
                    if !self.right_matched[i] {
                        return Ok(Some(concat(&nulls(self.left_width), &self.right_rows[i])));
                    }
                }
                return Ok(None);
            }
            if self.current.is_none() {
                match self.left.next(cx)? {
                    Some(l) => {
                        self.current = Some(l);
                        self.current_matched = false;
                        self.pos = 0;
                    }
                    None => {
                        if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                            self.tail = Some(0);
                            continue;
                        }
                        return Ok(None);
                    }
                }
            }
            let left = self.current.as_ref().expect("set above");
            while self.pos < self.right_rows.len() {
                let i = self.pos;
                self.pos += 1;
                if i % 1024 == 0 {
                    cx.check()?;
                }
                let row = concat(left, &self.right_rows[i]);
                let ok = match &self.predicate {
                    Some(p) => eval_pred(p, &row, cx)?,
                    None => true,
                };
                if ok {
                    self.current_matched = true;
                    self.right_matched[i] = true;
                    match self.kind {
                        JoinKind::Semi => {
                            self.pos = self.right_rows.len();
                            return Ok(Some(left.clone()));
                        }
                        JoinKind::Anti => {
                            self.pos = self.right_rows.len();
                            break;
                        }
                        _ => return Ok(Some(row)),
                    }
                }
            }
            let left = self.current.take().expect("set above");
            if !self.current_matched && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                return Ok(Some(concat(&left, &nulls(self.right_width))));
            }
            if !self.current_matched && self.kind == JoinKind::Anti {
                return Ok(Some(left));
            }
        }
    }
}

/// Builds a hash table of the right side keyed by `right_keys`, then
/// probes it with each left row. Rows with a NULL key never match.
pub struct HashJoinNode {
    /// The probe side until the first batch starts reading it.
    left: Option<Box<dyn Node>>,
    /// The build side until the first batch is built.
    right: Option<Box<dyn Node>>,
    kind: JoinKind,
    left_keys: Vec<Expr>,
    right_keys: Vec<Expr>,
    predicate: Option<Expr>,
    left_width: usize,
    right_width: usize,
    /// Key → (first, last) right row with that key; `chain` links each
    /// row to the next with the same key (PostgreSQL's bucket chains), in
    /// arrival order.
    table: FxHashMap<HashKey, (u32, u32)>,
    chain: Vec<u32>,
    right_rows: Vec<Row>,
    right_matched: Vec<bool>,
    /// Where the current batch's left rows come from.
    probe: Probe,
    /// Partitions still to join, with the level that split them.
    pending: Vec<(SpillReader, SpillReader, u32)>,
    current: Option<Row>,
    /// The next right row to try against the current left row (NO_ROW: none).
    candidate: u32,
    current_matched: bool,
    tail: Option<usize>,
}

const NO_ROW: u32 = u32::MAX;

enum Probe {
    Input(Box<dyn Node>),
    Spilled(SpillReader),
    Done,
}

/// Partitions one round of the hybrid hash join splits both sides into.
const JOIN_PARTITIONS: usize = 32;

/// Rounds of repartitioning before a batch is built in memory whatever its
/// size: many rows with one key cannot be split by hashing.
const MAX_JOIN_LEVEL: u32 = 4;

impl HashJoinNode {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: Box<dyn Node>,
        right: Box<dyn Node>,
        kind: JoinKind,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
        predicate: Option<Expr>,
        left_width: usize,
        right_width: usize,
    ) -> HashJoinNode {
        HashJoinNode {
            left: Some(left),
            right: Some(right),
            kind,
            left_keys,
            right_keys,
            predicate,
            left_width,
            right_width,
            table: FxHashMap::default(),
            chain: Vec::new(),
            right_rows: Vec::new(),
            right_matched: Vec::new(),
            probe: Probe::Done,
            pending: Vec::new(),
            current: None,
            candidate: NO_ROW,
            current_matched: false,
            tail: None,
        }
    }

    fn key(exprs: &[Expr], row: &[Datum], cx: &ExecCx) -> PgResult<Option<HashKey>> {
        if let [e] = exprs {
            let v = eval(e, row, cx)?;
            return Ok(if v.is_null() { None } else { Some(HashKey::One(hash_normalize(v))) });
        }
        let mut k = Vec::with_capacity(exprs.len());
        for e in exprs {
            let v = eval(e, row, cx)?;
            if v.is_null() {
                return Ok(None);
            }
            k.push(hash_normalize(v));
        }
        Ok(Some(HashKey::Many(k)))
    }

    /// Size of a key for the memory estimate.
    fn key_bytes(k: &HashKey) -> usize {
        match k {
            HashKey::One(d) => datum_bytes(d),
            HashKey::Many(v) => row_bytes(v),
        }
    }

    /// Builds the hash table of one batch from `right`. If its rows pass
    /// `work_mem` (and the level allows another split), the batch is
    /// instead split, both sides, into partitions by key hash — rows that
    /// can join share a key and so a partition — which become pending
    /// batches; then the batch has no rows and no probe.
    fn build(&mut self, right: &mut dyn FnMut(&ExecCx) -> PgResult<Option<Row>>, left: Probe, level: u32, cx: &ExecCx) -> PgResult<()> {
        self.table.clear();
        self.chain.clear();
        self.right_rows.clear();
        let budget = budget(cx);
        let mut held = 0usize;
        let mut overflow = false;
        while let Some(row) = right(cx)? {
            let idx = self.right_rows.len();
            if idx % 4096 == 4095 {
                cx.check()?;
            }
            self.chain.push(NO_ROW);
            if let Some(k) = Self::key(&self.right_keys, &row, cx)? {
                held += Self::key_bytes(&k) + 16;
                let idx = idx as u32;
                match self.table.entry(k) {
                    std::collections::hash_map::Entry::Occupied(mut e) => {
                        let (_, last) = e.get_mut();
                        self.chain[*last as usize] = idx;
                        *last = idx;
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert((idx, idx));
                    }
                }
            }
            held += row_bytes(&row) + 4;
            self.right_rows.push(row);
            if (held > budget && level < MAX_JOIN_LEVEL) || self.right_rows.len() == NO_ROW as usize {
                overflow = true;
                break;
            }
        }
        if !overflow {
            self.right_matched = vec![false; self.right_rows.len()];
            self.probe = left;
            return Ok(());
        }
        // Split: the rows read so far, the rest of the build side, then the
        // whole probe side.
        self.table.clear();
        self.chain.clear();
        let mut rights = Vec::with_capacity(JOIN_PARTITIONS);
        let mut lefts = Vec::with_capacity(JOIN_PARTITIONS);
        for _ in 0..JOIN_PARTITIONS {
            rights.push(SpillWriter::new(cx)?);
            lefts.push(SpillWriter::new(cx)?);
        }
        let held_rows = std::mem::take(&mut self.right_rows);
        let split = |row: &Row, keys: &[Expr], cx: &ExecCx| -> PgResult<usize> {
            // NULL keys never match; any partition will do for them.
            Ok(Self::key(keys, row, cx)?.map(|k| partition_of(&k, level, JOIN_PARTITIONS)).unwrap_or(0))
        };
        for row in held_rows {
            let p = split(&row, &self.right_keys, cx)?;
            rights[p].push(&row)?;
        }
        let mut n = 0u64;
        while let Some(row) = right(cx)? {
            n += 1;
            if n % 4096 == 0 {
                cx.check()?;
            }
            let p = split(&row, &self.right_keys, cx)?;
            rights[p].push(&row)?;
        }
        let mut left = left;
        loop {
            let row = match &mut left {
                Probe::Input(node) => node.next(cx)?,
                Probe::Spilled(r) => r.next()?,
                Probe::Done => None,
            };
            let Some(row) = row else { break };
            n += 1;
            if n % 4096 == 0 {
                cx.check()?;
            }
            let p = split(&row, &self.left_keys, cx)?;
            lefts[p].push(&row)?;
        }
        for (r, l) in rights.into_iter().zip(lefts) {
            if r.rows() == 0 && (l.rows() == 0 || !self.keeps_unmatched_left()) {
                continue;
            }
            self.pending.push((r.into_reader()?, l.into_reader()?, level + 1));
        }
        self.right_matched.clear();
        self.probe = Probe::Done;
        Ok(())
    }

    /// Whether a left row without a match is still output (so a partition
    /// with left rows and no right rows cannot be skipped).
    fn keeps_unmatched_left(&self) -> bool {
        matches!(self.kind, JoinKind::Left | JoinKind::Full | JoinKind::Anti)
    }

    fn next_left(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        match &mut self.probe {
            Probe::Input(node) => node.next(cx),
            Probe::Spilled(r) => r.next(),
            Probe::Done => Ok(None),
        }
    }
}


impl Node for HashJoinNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut r) = self.right.take() {
            let left = Probe::Input(self.left.take().expect("the probe side is taken with the build side"));
            self.build(&mut |cx| r.next(cx), left, 0, cx)?;
        }
        loop {
            if let Some(t) = self.tail.as_mut() {
                while *t < self.right_rows.len() {
                    let i = *t;
                    *t += 1;
                    if !self.right_matched[i] {
                        return Ok(Some(concat(&nulls(self.left_width), &self.right_rows[i])));
                    }
                }
                // This batch is done; the next pending one starts.
                self.tail = None;
                let Some((mut right, left, level)) = self.pending.pop() else { return Ok(None) };
                self.build(&mut |_| right.next(), Probe::Spilled(left), level, cx)?;
                continue;
            }
            if self.current.is_none() {
                // A spilled probe side reads a file, which checks nothing.
                cx.check()?;
                match self.next_left(cx)? {
                    Some(l) => {
                        self.candidate = match Self::key(&self.left_keys, &l, cx)? {
                            Some(k) => self.table.get(&k).map_or(NO_ROW, |&(first, _)| first),
                            None => NO_ROW,
                        };
                        self.current = Some(l);
                        self.current_matched = false;
                    }
                    None => {
                        // Unmatched right rows of the batch (only outer
                        // joins emit them), then the next batch.
                        self.tail = Some(if matches!(self.kind, JoinKind::Right | JoinKind::Full) { 0 } else { usize::MAX });
                        continue;
                    }
                }
            }
            let left = self.current.as_ref().expect("set above");
            let mut tried = 0u32;
            while self.candidate != NO_ROW {
                // A key shared by many rows the predicate turns away.
                tried += 1;
                if tried % 1024 == 0 {
                    cx.check()?;
                }
                let i = self.candidate as usize;
                self.candidate = self.chain[i];
                let row = concat(left, &self.right_rows[i]);
                let ok = match &self.predicate {
                    Some(p) => eval_pred(p, &row, cx)?,
                    None => true,
                };
                if ok {
                    self.current_matched = true;
                    self.right_matched[i] = true;
                    match self.kind {
                        JoinKind::Semi => {
                            self.candidate = NO_ROW;
                            return Ok(Some(left.clone()));
                        }
                        JoinKind::Anti => {
                            self.candidate = NO_ROW;
                            break;
                        }
                        _ => return Ok(Some(row)),
                    }
                }
            }
            let left = self.current.take().expect("set above");
            if !self.current_matched && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                return Ok(Some(concat(&left, &nulls(self.right_width))));
            }
            if !self.current_matched && self.kind == JoinKind::Anti {
                return Ok(Some(left));
            }
        }
    }
}

/// LATERAL: the right side is re-run for each left row with parameters
/// computed from that row.
pub struct LateralNode {
    left: Box<dyn Node>,
    right: Arc<Plan>,
    args: Vec<Expr>,
    kind: JoinKind,
    predicate: Option<Expr>,
    right_width: usize,
    pending: std::vec::IntoIter<Row>,
}

impl LateralNode {
    pub fn new(left: Box<dyn Node>, right: Arc<Plan>, args: Vec<Expr>, kind: JoinKind, predicate: Option<Expr>, right_width: usize) -> LateralNode {
        LateralNode { left, right, args, kind, predicate, right_width, pending: Vec::new().into_iter() }
    }
}

impl Node for LateralNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.pending.next() {
                return Ok(Some(r));
            }
            let Some(left) = self.left.next(cx)? else { return Ok(None) };
            let mut params = Vec::with_capacity(self.args.len());
            for a in &self.args {
                params.push(eval(a, &left, cx)?);
            }
            let sub = cx.with_outer(&params);
            let mut right = super::build(&self.right, &sub)?;
            let mut out = Vec::new();
            while let Some(r) = right.next(&sub)? {
                let row = concat(&left, &r);
                let ok = match &self.predicate {
                    Some(p) => eval_pred(p, &row, cx)?,
                    None => true,
                };
                if ok {
                    out.push(row);
                }
            }
            if out.is_empty() && self.kind == JoinKind::Left {
                out.push(concat(&left, &nulls(self.right_width)));
            }
            self.pending = out.into_iter();
        }
    }
}
