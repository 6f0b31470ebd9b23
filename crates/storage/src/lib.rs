//! tusk-storage: RocksDB underneath Tusk.
//!
//! `engine` opens the one TransactionDB of a data directory; `txn` gives
//! transactions with PostgreSQL's isolation semantics; `keys` and `row`
//! define how tables and indexes are laid out as ordered key ranges;
//! `predicate` makes SERIALIZABLE transactions serializable (SSI).

pub mod bulk;
pub mod engine;
pub mod keys;
pub mod predicate;
pub mod row;
pub mod txn;

pub use bulk::BulkWriter;
pub use engine::{Engine, EngineOptions};
pub use txn::{Interrupt, Isolation, KeyValue, ScanStream, Txn, Wait};
