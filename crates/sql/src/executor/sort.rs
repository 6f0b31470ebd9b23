//! ORDER BY: an in-memory sort while the input fits in `work_mem`, an
//! external merge sort beyond it (PostgreSQL's tuplesort): the input is cut
//! into sorted runs written to temporary files, and the runs are merged,
//! at most `MERGE_FAN_IN` at a time.
//!
//! The sort is stable, in memory and on disk: runs hold consecutive stretches
//! of the input and ties between runs go to the earlier run, so rows with
//! equal keys come out in input order either way.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

use tusk_types::{Datum, PgResult};

use super::eval::eval;
use super::nodes::compare_keys;
use super::spill::{budget, datum_bytes, row_bytes, SpillReader, SpillWriter};
use super::{ExecCx, Node, Row};
use crate::plan::SortKey;

/// Runs merged at once: each holds a file buffer, so this bounds the
/// merge's memory as well as its heap.
const MERGE_FAN_IN: usize = 32;

/// What the allocator adds to each allocation (glibc: a size word, and
/// rounding to 16 bytes).
const MALLOC_OVERHEAD: usize = 16;

/// Bytes a value owns beyond its slot.
fn heap_bytes(d: &Datum) -> usize {
    datum_bytes(d) - std::mem::size_of::<Datum>()
}

/// Heap allocations a row holds: its vector and each shared value.
fn allocations(row: &[Datum]) -> usize {
    1 + row.iter().filter(|d| heap_bytes(d) > 0).count()
}

/// Runs `sort`, whose comparator calls the tick it is given: every so many
/// comparisons the tick checks for a cancel (one sort of a large work_mem
/// can take many seconds), and a pending one unwinds out of the sort (the
/// standard sorts offer no other way out; they are panic-safe, and
/// `resume_unwind` skips the panic hook) to be returned as the error.
pub(super) fn interruptible_sort<T>(cx: &ExecCx, sort: impl FnOnce(&mut dyn FnMut()) -> T) -> PgResult<T> {
    struct Stop(tusk_types::PgError);
    let mut compared = 0u32;
    let mut tick = || {
        compared = compared.wrapping_add(1);
        if compared % 16384 == 0 {
            if let Err(e) = cx.check() {
                std::panic::resume_unwind(Box::new(Stop(e)));
            }
        }
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sort(&mut tick))) {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<Stop>() {
            Ok(stop) => Err(stop.0),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

pub struct SortNode {
    input: Option<Box<dyn Node>>,
    keys: Vec<SortKey>,
    flags: Rc<[(bool, bool)]>,
    output: Output,
    /// EXPLAIN ANALYZE's "Sort Method": in memory (bytes held) or on disk
    /// (bytes written in runs).
    method: Option<(bool, usize)>,
}

enum Output {
    Memory(Sorted),
    Merge(Merge),
}

/// Rows held for sorting, laid out for the comparison: each row's first
/// key value sits inline beside its position, so most comparisons touch
/// nothing else (no pointer to chase, no cache miss); the other key values
/// are in one flat vector, looked up only on a tie.
struct Buffer {
    heads: Vec<(Datum, u32)>,
    tails: Vec<Datum>,
    rows: Vec<Row>,
    /// Estimated bytes held.
    held: usize,
}

impl Buffer {
    fn new() -> Buffer {
        Buffer::with_capacity(0, 0)
    }

    /// A buffer sized for `rows` rows of `tail_keys` further keys each:
    /// after the first run the run length is known, and sizing up front
    /// saves the vectors' doubling (up to twice the memory, briefly three
    /// times while a vector grows).
    fn with_capacity(rows: usize, tail_keys: usize) -> Buffer {
        Buffer { heads: Vec::with_capacity(rows), tails: Vec::with_capacity(rows * tail_keys), rows: Vec::with_capacity(rows), held: 0 }
    }

    /// Bytes held: the values, plus the three vectors at their capacity.
    fn bytes(&self) -> usize {
        self.held
            + self.heads.capacity() * std::mem::size_of::<(Datum, u32)>()
            + self.tails.capacity() * std::mem::size_of::<Datum>()
            + self.rows.capacity() * std::mem::size_of::<Row>()
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    /// Sorts by key, ties by arrival (so the sort is stable).
    fn sort(&mut self, flags: &[(bool, bool)], cx: &ExecCx) -> PgResult<()> {
        let rest = flags.len() - 1;
        let tails = &self.tails;
        let (first, others) = (std::slice::from_ref(&flags[0]), &flags[1..]);
        let heads = &mut self.heads;
        interruptible_sort(cx, |tick| {
            heads.sort_unstable_by(|a, b| {
                tick();
                compare_keys(std::slice::from_ref(&a.0), std::slice::from_ref(&b.0), first)
                    .then_with(|| {
                        if rest == 0 {
                            return Ordering::Equal;
                        }
                        let (x, y) = (a.1 as usize * rest, b.1 as usize * rest);
                        compare_keys(&tails[x..x + rest], &tails[y..y + rest], others)
                    })
                    .then(a.1.cmp(&b.1))
            })
        })
    }

    /// The rows in sorted order, each with its key values.
    fn into_sorted(self, nkeys: usize) -> Sorted {
        Sorted { heads: self.heads.into_iter(), tails: self.tails, rows: self.rows, rest: nkeys - 1 }
    }
}

/// A sorted buffer being read out.
struct Sorted {
    heads: std::vec::IntoIter<(Datum, u32)>,
    tails: Vec<Datum>,
    rows: Vec<Row>,
    rest: usize,
}

impl Sorted {
    fn empty() -> Sorted {
        Sorted { heads: Vec::new().into_iter(), tails: Vec::new(), rows: Vec::new(), rest: 0 }
    }

    fn next_row(&mut self) -> Option<Row> {
        self.heads.next().map(|(_, i)| std::mem::take(&mut self.rows[i as usize]))
    }

    fn next_pair(&mut self) -> Option<(Vec<Datum>, Row)> {
        let (head, i) = self.heads.next()?;
        let i = i as usize;
        let mut key = Vec::with_capacity(self.rest + 1);
        key.push(head);
        key.extend(self.tails[i * self.rest..(i + 1) * self.rest].iter().cloned());
        Some((key, std::mem::take(&mut self.rows[i])))
    }
}

impl SortNode {
    pub fn new(input: Box<dyn Node>, keys: Vec<SortKey>) -> SortNode {
        // A sort without keys (all of them constant-folded away) keeps the
        // input order: one NULL key for every row, ties by arrival.
        let flags: Rc<[(bool, bool)]> = if keys.is_empty() {
            Rc::from([(false, false)])
        } else {
            keys.iter().map(|k| (k.descending, k.nulls_first)).collect()
        };
        SortNode { input: Some(input), keys, flags, output: Output::Memory(Sorted::empty()), method: None }
    }

    /// Reads the whole input, spilling sorted runs whenever the rows held
    /// pass the budget.
    fn consume(&mut self, mut input: Box<dyn Node>, cx: &ExecCx) -> PgResult<Output> {
        let budget = budget(cx);
        let mut buf = Buffer::new();
        let mut runs: Vec<SpillReader> = Vec::new();
        let mut n = 0u64;
        while let Some(row) = input.next(cx)? {
            n += 1;
            if n % 4096 == 0 {
                cx.check()?;
            }
            let pos = buf.len() as u32;
            let head = match self.keys.first() {
                Some(k) => eval(&k.expr, &row, cx)?,
                None => Datum::Null,
            };
            // The slots in the vectors are counted at their capacity
            // (`Buffer::bytes`); here what the values own, plus the
            // allocator's own overhead for each allocation.
            buf.held += heap_bytes(&head) + row_bytes(&row) - std::mem::size_of::<Row>() + allocations(&row) * MALLOC_OVERHEAD;
            buf.heads.push((head, pos));
            for key in self.keys.iter().skip(1) {
                let v = eval(&key.expr, &row, cx)?;
                buf.held += heap_bytes(&v);
                buf.tails.push(v);
            }
            buf.rows.push(row);
            if buf.bytes() > budget || buf.len() == u32::MAX as usize {
                let rows = buf.len();
                let full = std::mem::replace(&mut buf, Buffer::with_capacity(rows, self.flags.len() - 1));
                runs.push(self.write_run(full, cx)?);
            }
        }
        if runs.is_empty() {
            self.method = Some((false, buf.bytes()));
            buf.sort(&self.flags, cx)?;
            return Ok(Output::Memory(buf.into_sorted(self.flags.len())));
        }
        // The last stretch becomes a run on disk too: the merge then holds
        // one row and one file buffer per run, not another work_mem of rows.
        if buf.len() > 0 {
            runs.push(self.write_run(buf, cx)?);
        }
        while runs.len() > MERGE_FAN_IN {
            runs = self.merge_pass(runs, cx)?;
        }
        Merge::new(runs, self, cx).map(Output::Merge)
    }

    fn write_run(&mut self, mut buf: Buffer, cx: &ExecCx) -> PgResult<SpillReader> {
        buf.sort(&self.flags, cx)?;
        let mut sorted = buf.into_sorted(self.flags.len());
        let mut w = SpillWriter::new(cx)?;
        while let Some((mut both, row)) = sorted.next_pair() {
            both.extend(row);
            w.push(&both)?;
        }
        let disk = self.method.map_or(0, |(_, b)| b) + w.bytes() as usize;
        self.method = Some((true, disk));
        w.into_reader()
    }

    /// Merges consecutive groups of runs into one run each (consecutive,
    /// so the result stays stable).
    fn merge_pass(&self, runs: Vec<SpillReader>, cx: &ExecCx) -> PgResult<Vec<SpillReader>> {
        let mut out = Vec::new();
        let mut runs = runs.into_iter().peekable();
        while runs.peek().is_some() {
            let group: Vec<SpillReader> = runs.by_ref().take(MERGE_FAN_IN).collect();
            let mut merge = Merge::new(group, self, cx)?;
            let mut w = SpillWriter::new(cx)?;
            while let Some((k, row)) = merge.next_pair(cx)? {
                let mut both = k;
                both.extend(row);
                w.push(&both)?;
            }
            out.push(w.into_reader()?);
        }
        Ok(out)
    }
}

impl Node for SortNode {
    fn explain_info(&self) -> Vec<(&'static str, String)> {
        let kb = |b: usize| b.div_ceil(1024);
        match self.method {
            Some((false, b)) => vec![("Sort Method", format!("quicksort|Memory|{}", kb(b)))],
            Some((true, b)) => vec![("Sort Method", format!("external merge|Disk|{}", kb(b)))],
            None => Vec::new(),
        }
    }

    fn next(&mut self, cx: &ExecCx) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            self.output = self.consume(input, cx)?;
        }
        match &mut self.output {
            Output::Memory(sorted) => Ok(sorted.next_row()),
            Output::Merge(m) => Ok(m.next_pair(cx)?.map(|(_, r)| r)),
        }
    }
}

/// The next record of a sorted run (a temporary file of key values then
/// row values, per record), split into its key and its row.
fn next_of_run(run: &mut SpillReader, nkeys: usize) -> PgResult<Option<(Vec<Datum>, Row)>> {
    Ok(run.next()?.map(|mut both| {
        let row = both.split_off(nkeys);
        (both, row)
    }))
}

/// The head of one run in the merge heap.
struct Head {
    key: Vec<Datum>,
    row: Row,
    run: usize,
    flags: Rc<[(bool, bool)]>,
}

impl Ord for Head {
    /// Reversed, for BinaryHeap's max-heap: the smallest key, then the
    /// earliest run, is the greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(&other.key, &self.key, &self.flags).then(other.run.cmp(&self.run))
    }
}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head {}

struct Merge {
    runs: Vec<SpillReader>,
    heap: BinaryHeap<Head>,
    nkeys: usize,
    flags: Rc<[(bool, bool)]>,
    emitted: u64,
}

impl Merge {
    fn new(mut runs: Vec<SpillReader>, sort: &SortNode, _cx: &ExecCx) -> PgResult<Merge> {
        let nkeys = sort.flags.len();
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, run) in runs.iter_mut().enumerate() {
            if let Some((key, row)) = next_of_run(run, nkeys)? {
                heap.push(Head { key, row, run: i, flags: sort.flags.clone() });
            }
        }
        Ok(Merge { runs, heap, nkeys, flags: sort.flags.clone(), emitted: 0 })
    }

    fn next_pair(&mut self, cx: &ExecCx) -> PgResult<Option<(Vec<Datum>, Row)>> {
        let Some(head) = self.heap.pop() else { return Ok(None) };
        self.emitted += 1;
        if self.emitted % 4096 == 0 {
            cx.check()?;
        }
        if let Some((key, row)) = next_of_run(&mut self.runs[head.run], self.nkeys)? {
            self.heap.push(Head { key, row, run: head.run, flags: self.flags.clone() });
        }
        Ok(Some((head.key, head.row)))
    }
}
