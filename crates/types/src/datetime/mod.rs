//! PLACEHOLDER: replaced by the date/time implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interval { pub months: i32, pub days: i32, pub micros: i64 }
