//! Cumulative statistics (PostgreSQL's pgstat): counters that sessions add
//! to as they work and the `pg_stat_*` views read. They live in memory for
//! the life of the server process, as PostgreSQL's do between restarts
//! when the server stops uncleanly.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;
use tusk_types::Oid;

/// The counters of one database.
#[derive(Clone, Copy, Debug, Default)]
pub struct DatabaseStats {
    /// Temporary files written by queries (sorts, hashes) and their bytes.
    pub temp_files: u64,
    pub temp_bytes: u64,
}

fn registry() -> &'static Mutex<HashMap<Oid, DatabaseStats>> {
    static STATS: OnceLock<Mutex<HashMap<Oid, DatabaseStats>>> = OnceLock::new();
    STATS.get_or_init(Default::default)
}

/// Counts one temporary file of `bytes` written in `database`.
pub fn count_temp_file(database: Oid, bytes: u64) {
    let mut stats = registry().lock();
    let s = stats.entry(database).or_default();
    s.temp_files += 1;
    s.temp_bytes += bytes;
}

pub fn database(database: Oid) -> DatabaseStats {
    registry().lock().get(&database).copied().unwrap_or_default()
}
