//! Joins: nested loop over a materialized inner side, and hash join.
//! Output rows are always left columns then right columns; the side that
//! has no match in an outer join contributes NULLs.

use std::collections::HashMap;
use std::sync::Arc;

use tusk_types::{Datum, GroupKey, PgResult};

use super::eval::{eval, eval_pred};
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
    left: Box<dyn Node>,
    right: Option<Box<dyn Node>>,
    kind: JoinKind,
    left_keys: Vec<Expr>,
    right_keys: Vec<Expr>,
    predicate: Option<Expr>,
    left_width: usize,
    right_width: usize,
    table: HashMap<GroupKey, Vec<usize>>,
    right_rows: Vec<Row>,
    right_matched: Vec<bool>,
    current: Option<Row>,
    candidates: Vec<usize>,
    pos: usize,
    current_matched: bool,
    tail: Option<usize>,
}

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
            left,
            right: Some(right),
            kind,
            left_keys,
            right_keys,
            predicate,
            left_width,
            right_width,
            table: HashMap::new(),
            right_rows: Vec::new(),
            right_matched: Vec::new(),
            current: None,
            candidates: Vec::new(),
            pos: 0,
            current_matched: false,
            tail: None,
        }
    }

    fn key(exprs: &[Expr], row: &[Datum], cx: &ExecCx) -> PgResult<Option<GroupKey>> {
        let mut k = Vec::with_capacity(exprs.len());
        for e in exprs {
            let v = eval(e, row, cx)?;
            if v.is_null() {
                return Ok(None);
            }
            k.push(normalize(v));
        }
        Ok(Some(GroupKey(k)))
    }
}

/// Cross-type keys must hash alike: integers as int8, floats as float8.
fn normalize(v: Datum) -> Datum {
    match v {
        Datum::Int2(x) => Datum::Int8(x as i64),
        Datum::Int4(x) => Datum::Int8(x as i64),
        Datum::Float4(x) => Datum::Float8(x as f64),
        other => other,
    }
}

impl Node for HashJoinNode {
    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(mut r) = self.right.take() {
            while let Some(row) = r.next(cx)? {
                let idx = self.right_rows.len();
                if let Some(k) = Self::key(&self.right_keys, &row, cx)? {
                    self.table.entry(k).or_default().push(idx);
                }
                self.right_rows.push(row);
                if idx % 4096 == 0 {
                    cx.check()?;
                }
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
                        self.candidates = match Self::key(&self.left_keys, &l, cx)? {
                            Some(k) => self.table.get(&k).cloned().unwrap_or_default(),
                            None => Vec::new(),
                        };
                        self.current = Some(l);
                        self.pos = 0;
                        self.current_matched = false;
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
            while self.pos < self.candidates.len() {
                let i = self.candidates[self.pos];
                self.pos += 1;
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
                            self.pos = self.candidates.len();
                            return Ok(Some(left.clone()));
                        }
                        JoinKind::Anti => {
                            self.pos = self.candidates.len();
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
