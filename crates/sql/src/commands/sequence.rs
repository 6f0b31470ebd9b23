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

    /// ALTER SEQUENCE ... RESTART / new parameters: start over from `value`.
    pub fn restart(&self, seq: Oid, value: i64) -> PgResult<()> {
        self.states.lock().remove(&seq);
        self.engine.put_direct(&state_key(seq), &encode(value, false), true)
    }
}
