//! Compiled POSIX regular expressions (PostgreSQL's AREs) for `~`,
//! `regexp_*` and `substring(... from pattern)`.
//!
//! The `regex` crate runs nearly every pattern in linear time. PostgreSQL's
//! AREs also have back-references (`\1`) and look-around constraints
//! (`(?=...)`, `(?!...)`, `(?<=...)`, `(?<!...)`), which `regex` refuses by
//! design; those patterns go to `fancy-regex`, which delegates what it can
//! to `regex` and backtracks only for the rest, with a bounded number of
//! steps (a runaway pattern fails instead of holding the session).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use tusk_types::{sqlstate, PgError, PgResult};

/// The spans (byte offsets) of a match: the whole match, then each
/// parenthesized subexpression (None where it did not participate).
pub type Groups = Vec<Option<(usize, usize)>>;

pub enum PgRegex {
    Linear(regex::Regex),
    Backtracking(fancy_regex::Regex),
}

thread_local! {
    static REGEX_CACHE: RefCell<HashMap<(String, bool), Arc<PgRegex>>> = RefCell::new(HashMap::new());
}

/// How many backtracking steps one match may take before it fails.
const BACKTRACK_LIMIT: usize = 10_000_000;

/// Compiles an ARE, from a per-session cache of recent patterns.
pub fn compile_regex(pattern: &str, case_insensitive: bool) -> PgResult<Arc<PgRegex>> {
    REGEX_CACHE.with(|c| {
        let key = (pattern.to_string(), case_insensitive);
        if let Some(r) = c.borrow().get(&key) {
            return Ok(r.clone());
        }
        let translated = super::string::translate_are(pattern);
        let re = match regex::RegexBuilder::new(&translated).case_insensitive(case_insensitive).size_limit(50 << 20).build() {
            Ok(re) => PgRegex::Linear(re),
            Err(e) if needs_backtracking(&e) => {
                let flagged = if case_insensitive { format!("(?i){translated}") } else { translated.clone() };
                let re = fancy_regex::RegexBuilder::new(&flagged)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .delegate_size_limit(50 << 20)
                    .build()
                    .map_err(|e| invalid(&e.to_string()))?;
                PgRegex::Backtracking(re)
            }
            Err(e) => return Err(invalid(&regex_error_text(&e))),
        };
        let re = Arc::new(re);
        let mut cache = c.borrow_mut();
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(key, re.clone());
        Ok(re)
    })
}

/// Whether `regex` refused the pattern for a feature only backtracking has.
fn needs_backtracking(e: &regex::Error) -> bool {
    let s = e.to_string();
    s.contains("backreferences are not supported") || s.contains("look-around")
}

fn invalid(why: &str) -> PgError {
    PgError::new(sqlstate::INVALID_REGULAR_EXPRESSION, format!("invalid regular expression: {why}"))
}

fn regex_error_text(e: &regex::Error) -> String {
    let s = e.to_string();
    if s.contains("unclosed group") {
        "parentheses () not balanced".into()
    } else if s.contains("unclosed character class") {
        "brackets [] not balanced".into()
    } else {
        s.lines().last().unwrap_or("invalid").trim().to_string()
    }
}

/// A backtracking match that ran out of steps.
fn runtime(e: fancy_regex::Error) -> PgError {
    PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("regular expression failed: {e}"))
}

fn fancy_groups(c: &fancy_regex::Captures) -> Groups {
    (0..c.len()).map(|i| c.get(i).map(|m| (m.start(), m.end()))).collect()
}

fn linear_groups(c: &regex::Captures) -> Groups {
    (0..c.len()).map(|i| c.get(i).map(|m| (m.start(), m.end()))).collect()
}

impl PgRegex {
    pub fn is_match(&self, s: &str) -> PgResult<bool> {
        match self {
            PgRegex::Linear(re) => Ok(re.is_match(s)),
            PgRegex::Backtracking(re) => re.is_match(s).map_err(runtime),
        }
    }

    /// The first match.
    pub fn captures(&self, s: &str) -> PgResult<Option<Groups>> {
        match self {
            PgRegex::Linear(re) => Ok(re.captures(s).map(|c| linear_groups(&c))),
            PgRegex::Backtracking(re) => Ok(re.captures(s).map_err(runtime)?.map(|c| fancy_groups(&c))),
        }
    }

    /// Every non-overlapping match (`all`), or the first one.
    pub fn captures_all(&self, s: &str, all: bool) -> PgResult<Vec<Groups>> {
        let mut out = Vec::new();
        match self {
            PgRegex::Linear(re) => {
                for c in re.captures_iter(s) {
                    out.push(linear_groups(&c));
                    if !all {
                        break;
                    }
                }
            }
            PgRegex::Backtracking(re) => {
                for c in re.captures_iter(s) {
                    out.push(fancy_groups(&c.map_err(runtime)?));
                    if !all {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    /// The spans of every non-overlapping match.
    pub fn find_all(&self, s: &str) -> PgResult<Vec<(usize, usize)>> {
        match self {
            PgRegex::Linear(re) => Ok(re.find_iter(s).map(|m| (m.start(), m.end())).collect()),
            PgRegex::Backtracking(re) => re.find_iter(s).map(|m| m.map(|m| (m.start(), m.end())).map_err(runtime)).collect(),
        }
    }

    /// Replaces the first match (or every one) with `rep`, in the `regex`
    /// crate's expansion syntax (`$1`, `${1}`, `$$`).
    pub fn replace(&self, s: &str, rep: &str, all: bool) -> PgResult<String> {
        Ok(match self {
            PgRegex::Linear(re) if all => re.replace_all(s, rep).into_owned(),
            PgRegex::Linear(re) => re.replace(s, rep).into_owned(),
            PgRegex::Backtracking(_) => {
                // Matches first (a runaway pattern fails here), then the text.
                let matches = self.captures_all(s, all)?;
                let mut out = String::with_capacity(s.len());
                let mut last = 0;
                for groups in matches {
                    let Some((from, to)) = groups[0] else { continue };
                    out.push_str(&s[last..from]);
                    expand(rep, s, &groups, &mut out);
                    last = to;
                }
                out.push_str(&s[last..]);
                out
            }
        })
    }
}

/// Appends `rep` with `$n` / `${n}` replaced by group n's text and `$$` by `$`.
fn expand(rep: &str, s: &str, groups: &Groups, out: &mut String) {
    let b = rep.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            if b[i + 1] == b'$' {
                out.push('$');
                i += 2;
                continue;
            }
            let (digits, skip) = if b[i + 1] == b'{' {
                let close = rep[i + 2..].find('}').map(|p| i + 2 + p);
                match close {
                    Some(c) => (&rep[i + 2..c], c + 1 - i),
                    None => ("", 0),
                }
            } else {
                let n = rep[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
                (&rep[i + 1..i + 1 + n], 1 + n)
            };
            if let (Ok(n), true) = (digits.parse::<usize>(), skip > 0) {
                if let Some(Some((from, to))) = groups.get(n) {
                    out.push_str(&s[*from..*to]);
                }
                i += skip;
                continue;
            }
        }
        let ch = rep[i..].chars().next().unwrap_or('$');
        out.push(ch);
        i += ch.len_utf8();
    }
}
