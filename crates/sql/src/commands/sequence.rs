//! Sequences: nextval/setval state, outside transactions as in PostgreSQL.
//!
//! A sequence's state lives under a metadata key written directly (not
//! through the caller's transaction): a value handed out stays used even if
//! the transaction rolls back. Like PostgreSQL (which WAL-logs 32 values
//! ahead), Tusk durably records a value some steps ahead before handing out
//! values up to it, so after a crash a sequence never repeats a value.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tusk_storage::keys::META_PREFIX;
use tusk_storage::Engine;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use crate::catalog::SequenceInfo;

/// How many increments one durable write covers (PostgreSQL's SEQ_LOG_VALS).
const LOG_AHEAD: i64 = 32;

#[derive(Debug)]
struct SeqState {
    last_value: i64,
    is_called: bool,
    /// Durably recorded: after a crash the sequence continues after this value.
    logged: i64,
}

pub struct Sequences {
    engine: Arc<Engine>,
    states: Mutex<HashMap<Oid, Arc<Mutex<SeqState>>>>,
}

fn state_key(seq: Oid) -> Vec<u8> {
    let mut k = vec![META_PREFIX, b's'];
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Where undo records of sequence restarts live (see `Sequences::begin_restart`).
const RESTART_UNDO_PREFIX: [u8; 2] = [META_PREFIX, b'u'];

fn encode(value: i64, is_called: bool) -> Vec<u8> {
    let mut v = value.to_be_bytes().to_vec();
    v.push(is_called as u8);
    v
}

impl Sequences {
    pub fn new(engine: Arc<Engine>) -> Sequences {
        Sequences { engine, states: Mutex::new(HashMap::new()) }
    }

    fn state(&self, seq: Oid, info: &SequenceInfo) -> PgResult<Arc<Mutex<SeqState>>> {
        let mut states = self.states.lock();
        if let Some(s) = states.get(&seq) {
            return Ok(s.clone());
        }
        let st = match self.engine.get_latest(&state_key(seq))? {
            Some(v) if v.len() == 9 => {
                let value = i64::from_be_bytes(v[..8].try_into().expect("8 bytes"));
                let is_called = v[8] != 0;
                SeqState { last_value: value, is_called, logged: value }
            }
            _ => SeqState { last_value: info.start, is_called: false, logged: info.start },
        };
        let st = Arc::new(Mutex::new(st));
        states.insert(seq, st.clone());
        Ok(st)
    }

    /// nextval
    pub fn nextval(&self, seq: Oid, name: &str, info: &SequenceInfo) -> PgResult<i64> {
        let st = self.state(seq, info)?;
        let mut s = st.lock();
        let next = if !s.is_called {
            s.last_value
        } else {
            let inc = info.increment;
            match s.last_value.checked_add(inc) {
                Some(v) if (inc > 0 && v <= info.max) || (inc < 0 && v >= info.min) => v,
                _ => {
                    if !info.cycle {
                        let (which, limit) = if inc > 0 { ("maximum", info.max) } else { ("minimum", info.min) };
                        return Err(PgError::new(
                            sqlstate::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                            format!("nextval: reached {which} value of sequence \"{name}\" ({limit})"),
                        ));
                    }
                    if inc > 0 {
                        info.min
                    } else {
                        info.max
                    }
                }
            }
        };
        // Record ahead before handing out a value past what is durable.
        let beyond = if info.increment > 0 { next > s.logged || !s.is_called } else { next < s.logged || !s.is_called };
        if beyond {
            let ahead = next.saturating_add(info.increment.saturating_mul(LOG_AHEAD - 1));
            let ahead = if info.increment > 0 { ahead.min(info.max) } else { ahead.max(info.min) };
            self.engine.put_direct(&state_key(seq), &encode(ahead, true), true)?;
            s.logged = ahead;
        }
        s.last_value = next;
        s.is_called = true;
        Ok(next)
    }

    /// setval(seq, value, is_called)
    pub fn setval(&self, seq: Oid, name: &str, info: &SequenceInfo, value: i64, is_called: bool) -> PgResult<i64> {
        if value < info.min || value > info.max {
            return Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!("setval: value {} is out of bounds for sequence \"{}\" ({}..{})", value, name, info.min, info.max),
            ));
        }
        let st = self.state(seq, info)?;
        let mut s = st.lock();
        self.engine.put_direct(&state_key(seq), &encode(value, is_called), true)?;
        s.last_value = value;
        s.is_called = is_called;
        s.logged = value;
        Ok(value)
    }

    /// The value `nextval` would continue from, for `SELECT * FROM seq` (last_value, is_called).
    pub fn peek(&self, seq: Oid, info: &SequenceInfo) -> PgResult<(i64, bool)> {
        let st = self.state(seq, info)?;
        let s = st.lock();
        Ok((s.last_value, s.is_called))
    }

    /// Forgets a dropped sequence's state.
    pub fn drop(&self, seq: Oid) -> PgResult<()> {
        self.states.lock().remove(&seq);
        self.engine.delete_direct(&state_key(seq))
    }

    /// Puts a sequence back in a state it had (a rolled-back restart).
    pub fn restore(&self, seq: Oid, last_value: i64, is_called: bool) -> PgResult<()> {
        let mut states = self.states.lock();
        self.engine.put_direct(&state_key(seq), &encode(last_value, is_called), true)?;
        states.insert(seq, Arc::new(Mutex::new(SeqState { last_value, is_called, logged: last_value })));
        Ok(())
    }

    /// Before the first restart of `seq` in a transaction: records durably
    /// the state to go back to if the transaction never commits. A restart
    /// is written at once, outside the transaction (nextval is), so a crash
    /// before the commit would keep it, and the sequence would hand out its
    /// values again; the next start finds the record and undoes the restart
    /// (`undo_interrupted_restarts`). The restarting transaction deletes
    /// the record (whose key this returns, one of its own so that no two
    /// transactions contend for it) as part of its commit; a rollback
    /// deletes it directly.
    pub fn begin_restart(&self, seq: Oid, info: &SequenceInfo) -> PgResult<Vec<u8>> {
        let (last_value, is_called) = self.peek(seq, info)?;
        let mut record = encode(last_value, is_called);
        record.push((info.increment > 0) as u8);
        let mut key = RESTART_UNDO_PREFIX.to_vec();
        key.extend_from_slice(&seq.to_be_bytes());
        key.extend_from_slice(&self.engine.next_counter(b"sequence restart", 1, 0, false)?.to_be_bytes());
        self.engine.put_direct(&key, &record, true)?;
        Ok(key)
    }

    /// A rolled-back restart needs its undo record no more.
    pub fn end_restart(&self, key: &[u8]) -> PgResult<()> {
        self.engine.delete_direct(key)
    }

    /// At start: undoes restarts whose transactions never committed. The
    /// sequence continues after the later of the state before the restart
    /// and what it handed out since (concurrent sessions may have used the
    /// restarted sequence), so no value comes out twice.
    pub fn undo_interrupted_restarts(&self) -> PgResult<usize> {
        let prefix = RESTART_UNDO_PREFIX;
        let mut records = Vec::new();
        {
            let mut it = self.engine.db().raw_iterator();
            it.seek(prefix);
            while let (Some(k), Some(v)) = (it.key(), it.value()) {
                if !k.starts_with(&prefix) {
                    break;
                }
                records.push((k.to_vec(), v.to_vec()));
                it.next();
            }
        }
        for (key, record) in &records {
            let Some(seq) = key.get(2..6).and_then(|b| b.try_into().ok()).map(Oid::from_be_bytes) else { continue };
            if record.len() == 10 {
                let before = i64::from_be_bytes(record[..8].try_into().expect("8 bytes"));
                let before_called = record[8] != 0;
                let ascending = record[9] != 0;
                let state = match self.engine.get_latest(&state_key(seq))? {
                    // Dropped since: nothing to undo.
                    None => None,
                    Some(v) if v.len() == 9 => {
                        let now = i64::from_be_bytes(v[..8].try_into().expect("8 bytes"));
                        let beyond = if ascending { now > before } else { now < before };
                        Some(if beyond { (now, v[8] != 0) } else { (before, before_called) })
                    }
                    Some(_) => Some((before, before_called)),
                };
                if let Some((value, is_called)) = state {
                    self.engine.put_direct(&state_key(seq), &encode(value, is_called), true)?;
                }
            }
            self.engine.delete_direct(key)?;
        }
        Ok(records.len())
    }

    /// ALTER SEQUENCE ... RESTART / new parameters: start over from `value`.
    pub fn restart(&self, seq: Oid, value: i64) -> PgResult<()> {
        self.states.lock().remove(&seq);
        self.engine.put_direct(&state_key(seq), &encode(value, false), true)
    }
}
