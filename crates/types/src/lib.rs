//! tusk-types: the values Tusk computes with and how they look on the wire.
//!
//! This crate is the bottom layer: it knows PostgreSQL's built-in types
//! (their OIDs, text and binary I/O, arithmetic and comparison semantics) and
//! the error shape every other layer reports in. It knows nothing of storage,
//! catalogs or sessions.

pub mod array;
pub mod bits;
pub mod datetime;
pub mod datum;
pub mod enums;
pub mod error;
pub mod float;
pub mod json;
pub mod jsonb;
pub mod net;
pub mod numeric;
pub mod oid;
pub mod range;

pub use datum::{Datum, GroupKey, SqlType};
pub use error::{sqlstate, PgError, PgResult, Severity};
pub use oid::Oid;
