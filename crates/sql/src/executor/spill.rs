//! Temporary files for operators whose working set passes `work_mem`
//! (PostgreSQL's BufFile / logtape): sorts write sorted runs, hash
//! aggregates and hash joins write partitions of their input.
//!
//! Rows go through the storage row encoding (self-describing, every Datum
//! variant), each prefixed by its length. The files live in the data
//! directory's `pgsql_tmp` and are created already unlinked (O_TMPFILE), so
//! a crash or an error leaves nothing behind to clean up.
//!
//! Memory accounting is an estimate, as PostgreSQL's is: the in-memory size
//! of the values plus a fixed overhead per row. It only needs to be close
//! enough that an operator's memory stays near `work_mem`.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use tusk_storage::row::{decode_row, encode_row};
use tusk_types::error::sqlstate;
use tusk_types::{Datum, PgError, PgResult};

use super::{ExecCx, Row};

/// Read and write buffer of one temporary file. Small, because a merge or
/// a partitioning step holds dozens of them open at once.
const FILE_BUFFER_BYTES: usize = 16 * 1024;

/// The smallest budget an operator gets, whatever `work_mem` says
/// (PostgreSQL's minimum work_mem is 64kB).
const MIN_BUDGET_BYTES: usize = 64 * 1024;

/// The memory budget of one operator.
pub fn budget(cx: &ExecCx) -> usize {
    cx.work_mem_bytes.max(MIN_BUDGET_BYTES)
}

/// Estimated bytes a row occupies in memory: its vector and each value.
pub fn row_bytes(row: &[Datum]) -> usize {
    std::mem::size_of::<Row>() + row.iter().map(datum_bytes).sum::<usize>()
}

/// Estimated bytes of one value: its slot plus what it owns on the heap.
pub fn datum_bytes(d: &Datum) -> usize {
    // Shared values (Arc) count in full each time: a row that shares a
    // string with another still keeps it alive on its own.
    const ARC_HEADER: usize = 16;
    std::mem::size_of::<Datum>()
        + match d {
            Datum::Text(s) | Datum::Json(s) => ARC_HEADER + s.len(),
            Datum::Bytea(b) => ARC_HEADER + b.len(),
            Datum::Numeric(_) => ARC_HEADER + 48,
            Datum::Jsonb(j) => ARC_HEADER + 64 * (1 + j.depth()),
            Datum::Array(a) => ARC_HEADER + 64 + a.elements.iter().map(datum_bytes).sum::<usize>(),
            Datum::Record(r) => ARC_HEADER + 24 + r.iter().map(datum_bytes).sum::<usize>(),
            _ => 0,
        }
}

/// Where temporary files go: `pgsql_tmp` in the data directory, as
/// PostgreSQL's `base/pgsql_tmp`.
fn temp_dir(cx: &ExecCx) -> PathBuf {
    cx.txn.engine().path().join("pgsql_tmp")
}

/// PostgreSQL reports a full disk while writing a temporary file as 53100
/// and other failures as 58030, naming the file.
fn file_error(e: std::io::Error, what: &str) -> PgError {
    let code = if matches!(e.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded) {
        sqlstate::DISK_FULL
    } else {
        sqlstate::IO_ERROR
    };
    // The operating system's text without Rust's " (os error 28)", as PostgreSQL shows %m.
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    };
    let err = PgError::new(code, format!("could not {what} temporary file: {text}"));
    if code == sqlstate::DISK_FULL {
        err.with_hint("Check free disk space.")
    } else {
        err
    }
}

/// A temporary file being written.
pub struct SpillWriter {
    out: BufWriter<File>,
    rows: u64,
    bytes: u64,
    database: tusk_types::Oid,
    scratch: Vec<u8>,
}

impl SpillWriter {
    pub fn new(cx: &ExecCx) -> PgResult<SpillWriter> {
        let dir = temp_dir(cx);
        std::fs::create_dir_all(&dir).map_err(|e| file_error(e, "create directory for"))?;
        let file = tempfile::tempfile_in(&dir).map_err(|e| file_error(e, "create"))?;
        Ok(SpillWriter { out: BufWriter::with_capacity(FILE_BUFFER_BYTES, file), rows: 0, bytes: 0, database: cx.catalog.database, scratch: Vec::new() })
    }

    pub fn push(&mut self, row: &[Datum]) -> PgResult<()> {
        let encoded = encode_row(row);
        self.scratch.clear();
        self.scratch.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
        self.scratch.extend_from_slice(&encoded);
        self.out.write_all(&self.scratch).map_err(|e| file_error(e, "write to"))?;
        self.rows += 1;
        self.bytes += self.scratch.len() as u64;
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Finishes writing and rewinds the file for reading.
    pub fn into_reader(self) -> PgResult<SpillReader> {
        let rows = self.rows;
        crate::stats::count_temp_file(self.database, self.bytes);
        let mut file = self.out.into_inner().map_err(|e| file_error(e.into_error(), "write to"))?;
        file.seek(SeekFrom::Start(0)).map_err(|e| file_error(e, "seek in"))?;
        Ok(SpillReader { input: Input::Closed(Some(file)), remaining: rows, buf: Vec::new() })
    }
}

/// A temporary file read back from its start, row by row.
pub struct SpillReader {
    input: Input,
    remaining: u64,
    buf: Vec<u8>,
}

/// A reader's file gets its buffer only when reading starts: an external
/// sort may hold hundreds of runs before merging them 32 at a time, and a
/// buffer for each would cost more than work_mem.
enum Input {
    Closed(Option<File>),
    Open(BufReader<File>),
}

impl Input {
    fn reader(&mut self) -> &mut BufReader<File> {
        if let Input::Closed(file) = self {
            let file = file.take().expect("a spill file");
            *self = Input::Open(BufReader::with_capacity(FILE_BUFFER_BYTES, file));
        }
        match self {
            Input::Open(r) => r,
            Input::Closed(_) => unreachable!("opened above"),
        }
    }
}

impl SpillReader {
    pub fn next(&mut self) -> PgResult<Option<Row>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let mut len = [0u8; 4];
        let input = self.input.reader();
        input.read_exact(&mut len).map_err(|e| file_error(e, "read from"))?;
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        input.read_exact(&mut self.buf).map_err(|e| file_error(e, "read from"))?;
        decode_row(&self.buf).map(Some)
    }
}

/// The key of a hash table entry (join or group): one value inline, as
/// most keys are, or several. A table uses one form for all its keys.
#[derive(Clone, Debug)]
pub enum HashKey {
    One(Datum),
    Many(Vec<Datum>),
}

impl HashKey {
    pub fn from_values(mut values: Vec<Datum>) -> HashKey {
        if values.len() == 1 {
            HashKey::One(values.pop().expect("one value"))
        } else {
            HashKey::Many(values)
        }
    }
}

impl PartialEq for HashKey {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (HashKey::One(a), HashKey::One(b)) => a.group_eq(b),
            (HashKey::Many(a), HashKey::Many(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.group_eq(y)),
            _ => false,
        }
    }
}
impl Eq for HashKey {}
impl std::hash::Hash for HashKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            HashKey::One(d) => d.hash_into(state),
            HashKey::Many(v) => v.iter().for_each(|d| d.hash_into(state)),
        }
    }
}

/// Cross-type keys must hash alike: integers as int8, floats as float8.
pub fn hash_normalize(v: Datum) -> Datum {
    match v {
        Datum::Int2(x) => Datum::Int8(x as i64),
        Datum::Int4(x) => Datum::Int8(x as i64),
        Datum::Oid(x) => Datum::Int8(x as i64),
        Datum::Float4(x) => Datum::Float8(x as f64),
        other => other,
    }
}

/// A hash of a key for choosing a partition. `level` varies the hash
/// between rounds of repartitioning, so a partition that is still too big
/// splits differently the next time.
pub fn partition_of(key: &impl std::hash::Hash, level: u32, partitions: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    level.hash(&mut h);
    key.hash(&mut h);
    (h.finish() % partitions as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_with_payload() {
        let small = row_bytes(&[Datum::Int4(1)]);
        let big = row_bytes(&[Datum::text(&"x".repeat(1000))]);
        assert!(big >= small + 1000);
    }
}
