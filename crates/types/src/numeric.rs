//! PLACEHOLDER: replaced by the numeric implementation.
use bigdecimal::BigDecimal;
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Numeric { Finite(BigDecimal), NaN }
