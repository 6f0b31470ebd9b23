//! tusk-sql: everything between SQL text and storage — the parser,
//! analyzer, planner and executor, the catalog, built-in functions and the
//! utility commands — plus the SQL half of a session (`session`).

pub mod analyzer;
pub mod catalog;
pub mod cluster;
pub mod commands;
pub mod executor;
pub mod expr;
pub mod fmgr;
pub mod functions;
pub mod keywords;
pub mod normalize;
pub mod parser;
pub mod plan;
pub mod procedural;
pub mod planner;
pub mod query;
pub mod session;
pub mod settings;
pub mod spi;
pub mod stack;
pub mod stats;

pub use cluster::Cluster;
pub use session::{QueryRun, SqlSession};
