//! Tusk's built-in PL/pgSQL profiler (what PostgreSQL needs the
//! plprofiler extension for): with `tusk.plpgsql_profile` on, every
//! statement a PL/pgSQL function executes counts a call, its time and its
//! longest time against the function's line. The engine shows the counts
//! in the view `tusk_plpgsql_profile` (through
//! `LanguageHandler::profile`) and `tusk_plpgsql_profile_reset()` clears
//! them.
//!
//! A call counts into a `CallProfile` of its own (no lock, no clock unless
//! on) and merges it into the server-wide counts when it ends, so sessions
//! profiling at once contend once per call, not per statement. A
//! statement's time includes the statements nested in it (a loop's line
//! holds its body's time too), as plprofiler reports it.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tusk_sql::procedural::{ProfileLine, Spi};
use tusk_types::Oid;

/// The setting that turns the profiler on (per session; for all of an
/// application's sessions through its startup options: Tusk has no
/// configuration file yet for a server-wide value).
pub const SETTING: &str = "tusk.plpgsql_profile";

/// Whether the session profiles now: read once per call.
pub fn enabled(spi: &dyn Spi) -> bool {
    match spi.setting(SETTING) {
        Some(v) => matches!(v.trim().to_ascii_lowercase().as_str(), "on" | "true" | "yes" | "1" | "t" | "y"),
        None => false,
    }
}

#[derive(Clone, Copy, Default)]
struct LineStat {
    calls: u64,
    total: Duration,
    max: Duration,
}

impl LineStat {
    fn add(&mut self, d: Duration) {
        self.calls += 1;
        self.total += d;
        if d > self.max {
            self.max = d;
        }
    }

    fn merge(&mut self, o: &LineStat) {
        self.calls += o.calls;
        self.total += o.total;
        if o.max > self.max {
            self.max = o.max;
        }
    }
}

/// One call's counts, by line of the body.
#[derive(Default)]
pub struct CallProfile {
    lines: Vec<LineStat>,
}

impl CallProfile {
    pub fn record(&mut self, line: u32, d: Duration) {
        let i = line as usize;
        if self.lines.len() <= i {
            self.lines.resize(i + 1, LineStat::default());
        }
        self.lines[i].add(d);
    }
}

/// A function's counts over all calls since the last reset.
struct FunctionProfile {
    signature: String,
    source: String,
    lines: Vec<LineStat>,
}

fn profiles() -> &'static Mutex<HashMap<(Oid, String), FunctionProfile>> {
    static P: OnceLock<Mutex<HashMap<(Oid, String), FunctionProfile>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// Adds a finished call's counts to the function's.
pub fn merge(func: Oid, signature: &str, source: &str, call: CallProfile) {
    let mut all = profiles().lock().unwrap_or_else(|e| e.into_inner());
    let entry = all.entry((func, signature.to_string())).or_insert_with(|| FunctionProfile { signature: signature.to_string(), source: source.to_string(), lines: Vec::new() });
    if entry.source != source {
        // the function was replaced: its old lines mean nothing now
        entry.source = source.to_string();
        entry.lines.clear();
    }
    if entry.lines.len() < call.lines.len() {
        entry.lines.resize(call.lines.len(), LineStat::default());
    }
    for (i, l) in call.lines.iter().enumerate() {
        if l.calls > 0 {
            entry.lines[i].merge(l);
        }
    }
}

/// Every counted line, by function and line number.
pub fn rows() -> Vec<ProfileLine> {
    let all = profiles().lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for ((oid, _), f) in all.iter() {
        let src: Vec<&str> = f.source.lines().collect();
        for (line, l) in f.lines.iter().enumerate() {
            if l.calls == 0 {
                continue;
            }
            out.push(ProfileLine {
                function: *oid,
                signature: f.signature.clone(),
                line: line as i32,
                source: line.checked_sub(1).and_then(|i| src.get(i)).map(|s| s.to_string()).unwrap_or_default(),
                calls: l.calls as i64,
                total_ms: l.total.as_secs_f64() * 1000.0,
                max_ms: l.max.as_secs_f64() * 1000.0,
            });
        }
    }
    out.sort_by(|a, b| (&a.signature, a.function, a.line).cmp(&(&b.signature, b.function, b.line)));
    out
}

pub fn reset() {
    profiles().lock().unwrap_or_else(|e| e.into_inner()).clear();
}
