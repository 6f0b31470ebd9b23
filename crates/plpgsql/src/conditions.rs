//! Condition names and SQLSTATEs: RAISE's condition names and ERRCODE
//! option, and the matching of EXCEPTION WHEN clauses (a class's name
//! matches every code of the class; OTHERS all but query_canceled and
//! assert_failure), as pl_exec.c's exception_matches_conditions.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::errcodes::CONDITIONS;

/// The SQLSTATE of a condition name.
pub fn lookup(name: &str) -> Option<&'static str> {
    CONDITIONS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// A `&'static str` for any five-character SQLSTATE, as `PgError::code`
/// wants: the known ones from the table, others interned once.
pub fn static_code(code: &str) -> &'static str {
    if let Some((_, c)) = CONDITIONS.iter().find(|(_, c)| *c == code) {
        return c;
    }
    static INTERNED: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut m = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = m.get(code) {
        return c;
    }
    let leaked: &'static str = Box::leak(code.to_string().into_boxed_str());
    m.insert(code.to_string(), leaked);
    leaked
}

/// Whether an error's SQLSTATE is caught by a WHEN condition (a name, or
/// "sqlstate:XXXXX").
pub fn matches(condition: &str, code: &str) -> bool {
    if condition == "others" {
        return code != "57014" && code != "P0004";
    }
    if let Some(c) = condition.strip_prefix("sqlstate:") {
        return matches_code(c, code);
    }
    // several names may share a code (e.g. a warning and an error), any matches
    CONDITIONS.iter().filter(|(n, _)| *n == condition).any(|(_, c)| matches_code(c, code))
}

fn matches_code(cond: &str, code: &str) -> bool {
    if cond.ends_with("000") && cond.len() == 5 {
        return code.starts_with(&cond[..2]);
    }
    cond == code
}

/// RAISE's "is it a valid SQLSTATE" check for the ERRCODE option's value.
pub fn valid_sqlstate(s: &str) -> bool {
    s.len() == 5 && s.bytes().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
}
