//! String functions and operators (varlena.c, oracle_compat.c, like.c,
//! regexp.c): concatenation, length, case, trimming, padding, substrings,
//! LIKE/ILIKE/SIMILAR TO, POSIX regular expressions, formatting.

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_i64, arg_str, plain, set, FnCtx, Registry, SetIter};

fn text(s: impl Into<String>) -> PgResult<Datum> {
    Ok(Datum::from_string(s.into()))
}

/// A value's text form, for functions taking "any" (concat, format, ||).
fn any_text(d: &Datum, ty: u32, ctx: &FnCtx) -> String {
    match d {
        Datum::Text(s) => s.to_string(),
        _ => super::io::format_text(d, ty, &ctx.env.settings()),
    }
}

fn textcat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (arg_str(a, 0), arg_str(a, 1));
    super::limits::check_alloc(x.len() + y.len())?;
    let mut s = String::with_capacity(x.len() + y.len());
    s.push_str(x);
    s.push_str(y);
    text(s)
}

/// anytextcat/textanycat are SQL functions in PostgreSQL (`$1::text || $2`),
/// so the non-text side goes through the explicit cast to text, which
/// spells booleans out and trims char(n), rather than the output function.
fn anytextcat(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let cast_text = |d: &Datum, ty: u32| match (d, ty) {
        (Datum::Bool(b), _) => if *b { "true".to_string() } else { "false".to_string() },
        (_, oid::BPCHAR) => any_text(d, ty, c).trim_end_matches(' ').to_string(),
        _ => any_text(d, ty, c),
    };
    let (x, y) = (cast_text(&a[0], c.arg_type(0)), cast_text(&a[1], c.arg_type(1)));
    super::limits::check_alloc(x.len() + y.len())?;
    text(x + &y)
}

fn textlen(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(arg_str(a, 0).chars().count() as i32))
}

fn bpcharlen(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(arg_str(a, 0).trim_end_matches(' ').chars().count() as i32))
}

fn octet_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(match &a[0] {
        Datum::Bytea(b) => b.len() as i32,
        d => d.as_str().unwrap_or("").len() as i32,
    }))
}

fn bit_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(match &a[0] {
        Datum::Bytea(b) => b.len() as i32 * 8,
        d => d.as_str().unwrap_or("").len() as i32 * 8,
    }))
}

/// Case mapping character by character, as towlower/towupper do: a
/// character whose mapping is not a single character stays as it is (ß).
fn map_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut m: Vec<char> = if upper { c.to_uppercase().collect() } else { c.to_lowercase().collect() };
            // One character for one, as the C library's towlower/towupper:
            // İ lowers to i (its full mapping adds a combining dot), ß has no
            // one-character upper case and stays.
            if m.len() == 1 {
                m.pop().expect("one char")
            } else if !upper && !m.is_empty() {
                m[0]
            } else {
                c
            }
        })
        .collect()
}

fn lower(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(map_case(arg_str(a, 0), false))
}

fn upper(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(map_case(arg_str(a, 0), true))
}

fn initcap(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let mut out = String::new();
    let mut prev_alnum = false;
    for ch in arg_str(a, 0).chars() {
        out.push_str(&map_case(&ch.to_string(), !prev_alnum));
        prev_alnum = ch.is_alphanumeric();
    }
    text(out)
}

/// substring(s, start [, count]) with SQL's rules for out-of-range starts.
fn substr_chars(s: &str, start: i64, count: Option<i64>) -> PgResult<String> {
    if let Some(c) = count {
        if c < 0 {
            return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed"));
        }
    }
    let begin = start.max(1);
    let end = match count {
        Some(c) => start.saturating_add(c),
        None => i64::MAX,
    };
    if end <= begin {
        return Ok(String::new());
    }
    Ok(s.chars().skip((begin - 1) as usize).take((end - begin).min(i64::MAX) as usize).collect())
}

fn text_substr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(substr_chars(arg_str(a, 0), arg_i64(a, 1), Some(arg_i64(a, 2)))?)
}

fn text_substr_no_len(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(substr_chars(arg_str(a, 0), arg_i64(a, 1), None)?)
}

fn bytea_substr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Datum::Bytea(b) = &a[0] else { return Ok(Datum::Null) };
    let start = arg_i64(a, 1);
    let count = if a.len() > 2 { Some(arg_i64(a, 2)) } else { None };
    if let Some(c) = count {
        if c < 0 {
            return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed"));
        }
    }
    let begin = start.max(1);
    let end = count.map(|c| start.saturating_add(c)).unwrap_or(i64::MAX);
    if end <= begin {
        return Ok(Datum::bytea(vec![]));
    }
    let from = ((begin - 1) as usize).min(b.len());
    let to = ((end - 1).min(b.len() as i64) as usize).max(from);
    Ok(Datum::bytea(b[from..to].to_vec()))
}

fn textpos(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (hay, needle) = (arg_str(a, 0), arg_str(a, 1));
    Ok(Datum::Int4(match hay.find(needle) {
        Some(i) => hay[..i].chars().count() as i32 + 1,
        None => 0,
    }))
}

fn replace_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (s, from, to) = (arg_str(a, 0), arg_str(a, 1), arg_str(a, 2));
    if from.is_empty() {
        return text(s);
    }
    text(s.replace(from, to))
}

fn trim_chars(s: &str, set: &str, left: bool, right: bool) -> String {
    let chars: Vec<char> = set.chars().collect();
    let mut r = s;
    if left {
        r = r.trim_start_matches(|c| chars.contains(&c));
    }
    if right {
        r = r.trim_end_matches(|c| chars.contains(&c));
    }
    r.to_string()
}

fn btrim(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), arg_str(a, 1), true, true))
}
fn btrim1(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), " ", true, true))
}
fn ltrim(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), arg_str(a, 1), true, false))
}
fn ltrim1(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), " ", true, false))
}
fn rtrim(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), arg_str(a, 1), false, true))
}
fn rtrim1(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(trim_chars(arg_str(a, 0), " ", false, true))
}

fn pad(a: &[Datum], left: bool) -> PgResult<Datum> {
    let s: Vec<char> = arg_str(a, 0).chars().collect();
    let len = arg_i64(a, 1).max(0) as usize;
    // PostgreSQL's limit: the result, at four bytes a character, must fit
    // in a 1 GB value. (The two-argument form is a SQL function there.)
    if len.saturating_mul(4).saturating_add(4) > 0x3fff_ffff {
        let e = PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "requested length too large");
        return Err(if a.len() == 2 { e.with_context(format!("SQL function \"{}\" statement 1", if left { "lpad" } else { "rpad" })) } else { e });
    }
    let fill: Vec<char> = if a.len() > 2 { arg_str(a, 2).chars().collect() } else { vec![' '] };
    if s.len() >= len {
        return text(s[..len].iter().collect::<String>());
    }
    if fill.is_empty() {
        return text(s.iter().collect::<String>());
    }
    let need = len - s.len();
    // Whole copies of the fill, then part of one: a huge length costs a
    // few large copies, not a step per character.
    let fill_text: String = fill.iter().collect();
    let mut padding = fill_text.repeat(need / fill.len());
    padding.extend(&fill[..need % fill.len()]);
    let body: String = s.iter().collect();
    text(if left { padding + &body } else { body + &padding })
}
fn lpad(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    pad(a, true)
}
fn rpad(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    pad(a, false)
}

fn text_left(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let s: Vec<char> = arg_str(a, 0).chars().collect();
    let n = arg_i64(a, 1);
    let take = if n >= 0 { (n as usize).min(s.len()) } else { s.len().saturating_sub((-n) as usize) };
    text(s[..take].iter().collect::<String>())
}

fn text_right(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let s: Vec<char> = arg_str(a, 0).chars().collect();
    let n = arg_i64(a, 1);
    let take = if n >= 0 { (n as usize).min(s.len()) } else { s.len().saturating_sub((-n) as usize) };
    text(s[s.len() - take..].iter().collect::<String>())
}

fn repeat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let n = arg_i64(a, 1).max(0) as usize;
    let s = arg_str(a, 0);
    // PostgreSQL: the result with its 4-byte header must fit in MaxAllocSize.
    if s.len().saturating_mul(n).saturating_add(4) > super::limits::MAX_ALLOC_SIZE {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "requested length too large"));
    }
    text(s.repeat(n))
}

fn text_reverse(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(arg_str(a, 0).chars().rev().collect::<String>())
}

fn split_part(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (s, delim, n) = (arg_str(a, 0), arg_str(a, 1), arg_i64(a, 2));
    if n == 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "field position must not be zero"));
    }
    if delim.is_empty() {
        return text(if n == 1 || n == -1 { s } else { "" });
    }
    let parts: Vec<&str> = s.split(delim).collect();
    let idx = if n > 0 { n as usize - 1 } else { parts.len().wrapping_sub((-n) as usize) };
    text(parts.get(idx).copied().unwrap_or(""))
}

fn concat(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut out = String::new();
    for (i, d) in a.iter().enumerate() {
        if !d.is_null() {
            let piece = any_text(d, c.arg_type(i), c);
            super::limits::check_append(out.len(), piece.len())?;
            out.push_str(&piece);
        }
    }
    text(out)
}

fn concat_ws(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let sep = arg_str(a, 0).to_string();
    let mut out = String::new();
    let mut first = true;
    for (i, d) in a[1..].iter().enumerate() {
        if d.is_null() {
            continue;
        }
        if !first {
            super::limits::check_append(out.len(), sep.len())?;
            out.push_str(&sep);
        }
        first = false;
        let piece = any_text(d, c.arg_type(i + 1), c);
        super::limits::check_append(out.len(), piece.len())?;
        out.push_str(&piece);
    }
    text(out)
}

fn md5_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    use md5::{Digest, Md5};
    let bytes: Vec<u8> = match &a[0] {
        Datum::Bytea(b) => b.to_vec(),
        d => d.as_str().unwrap_or("").as_bytes().to_vec(),
    };
    text(hex::encode(Md5::digest(&bytes)))
}

/// chr(int): a Unicode code point (the database encoding is UTF8).
fn chr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_i64(a, 0);
    if v < 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "character number must be positive"));
    }
    if v == 0 {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "null character not permitted"));
    }
    if v > 0x10ffff {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("requested character too large for encoding: {v}")));
    }
    match char::from_u32(v as u32) {
        Some(c) => text(c.to_string()),
        // Surrogate halves are not characters.
        None => Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("requested character not valid for encoding: {v}"))),
    }
}

fn ascii(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(arg_str(a, 0).chars().next().map(|c| c as i32).unwrap_or(0)))
}

fn to_hex(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(match &a[0] {
        Datum::Int4(v) => format!("{:x}", *v as u32),
        d => format!("{:x}", d.as_i64().unwrap_or(0) as u64),
    })
}

fn starts_with(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(arg_str(a, 0).starts_with(arg_str(a, 1))))
}

fn translate(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let from: Vec<char> = arg_str(a, 1).chars().collect();
    let to: Vec<char> = arg_str(a, 2).chars().collect();
    let mut out = String::new();
    for c in arg_str(a, 0).chars() {
        match from.iter().position(|&f| f == c) {
            Some(i) => {
                if let Some(&t) = to.get(i) {
                    out.push(t);
                }
            }
            None => out.push(c),
        }
    }
    text(out)
}

pub fn quote_ident_str(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars().next().map(|c| c.is_ascii_lowercase() || c == '_').unwrap_or(false)
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !crate::keywords::is_reserved(s);
    if safe {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

pub fn quote_literal_str(s: &str) -> String {
    if s.contains('\\') {
        format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

fn quote_ident(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text(quote_ident_str(arg_str(a, 0)))
}

fn quote_literal(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let s = any_text(&a[0], c.arg_type(0), c);
    text(quote_literal_str(&s))
}

fn quote_nullable(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return text("NULL");
    }
    quote_literal(a, c)
}

/// quote_literal(anyelement) and quote_nullable(anyelement) are SQL
/// functions in PostgreSQL (`quote_literal($1::text)`): the value goes
/// through its cast to text, so booleans read 'true' and char(n) loses its
/// padding.
fn quote_any(a: &[Datum], c: &FnCtx, nullable: bool) -> PgResult<Datum> {
    if a[0].is_null() {
        return if nullable { text("NULL") } else { Ok(Datum::Null) };
    }
    let from = c.arg_types.first().copied().unwrap_or(tusk_types::SqlType::new(oid::TEXT));
    let as_text = super::cast::cast_datum_env(a[0].clone(), from, tusk_types::SqlType::new(oid::TEXT), true, c.env)?;
    text(quote_literal_str(as_text.as_str().unwrap_or("")))
}

fn overlay(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let s: Vec<char> = arg_str(a, 0).chars().collect();
    let repl = arg_str(a, 1);
    let start = arg_i64(a, 2);
    let count = if a.len() > 3 { arg_i64(a, 3) } else { repl.chars().count() as i64 };
    if start < 1 {
        return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed"));
    }
    let head: String = s.iter().take((start - 1) as usize).collect();
    let tail: String = s.iter().skip((start - 1 + count).max(0) as usize).collect();
    text(format!("{head}{repl}{tail}"))
}

// ---------------------------------------------------------------- LIKE

/// SQL LIKE with `%`, `_` and an escape character (default backslash).
pub fn like_match(s: &str, pattern: &str, case_insensitive: bool, escape: Option<char>) -> PgResult<bool> {
    let (s, pattern) = if case_insensitive { (s.to_lowercase(), pattern.to_lowercase()) } else { (s.to_string(), pattern.to_string()) };
    let sv: Vec<char> = s.chars().collect();
    // Parse the pattern into tokens.
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        Any,
        Many,
    }
    let mut toks = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if Some(c) == escape {
            match it.next() {
                Some(n) => toks.push(Tok::Lit(n)),
                None => {
                    return Err(PgError::new(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ))
                }
            }
        } else if c == '%' {
            if toks.last() != Some(&Tok::Many) {
                toks.push(Tok::Many);
            }
        } else if c == '_' {
            toks.push(Tok::Any);
        } else {
            toks.push(Tok::Lit(c));
        }
    }
    // Iterative matching with backtracking on the last '%'.
    let (mut si, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < sv.len() {
        if ti < toks.len() {
            match toks[ti] {
                Tok::Lit(c) if c == sv[si] => {
                    si += 1;
                    ti += 1;
                    continue;
                }
                Tok::Any => {
                    si += 1;
                    ti += 1;
                    continue;
                }
                Tok::Many => {
                    star = Some((ti, si));
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((st, ss)) => {
                ti = st + 1;
                si = ss + 1;
                star = Some((st, ss + 1));
            }
            None => return Ok(false),
        }
    }
    while ti < toks.len() && toks[ti] == Tok::Many {
        ti += 1;
    }
    Ok(ti == toks.len())
}

fn textlike(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(like_match(arg_str(a, 0), arg_str(a, 1), false, Some('\\'))?))
}
fn textnlike(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(!like_match(arg_str(a, 0), arg_str(a, 1), false, Some('\\'))?))
}
fn texticlike(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(like_match(arg_str(a, 0), arg_str(a, 1), true, Some('\\'))?))
}
fn texticnlike(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(!like_match(arg_str(a, 0), arg_str(a, 1), true, Some('\\'))?))
}
fn bpcharlike(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(like_match(arg_str(a, 0), arg_str(a, 1), false, Some('\\'))?))
}

/// like_escape(pattern, escape): rewrites the pattern to use backslash as escape.
fn like_escape(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (pat, esc) = (arg_str(a, 0), arg_str(a, 1));
    let esc_chars: Vec<char> = esc.chars().collect();
    if esc_chars.len() > 1 {
        return Err(PgError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
            .with_hint("Escape string must be empty or one character."));
    }
    let mut out = String::new();
    let mut chars = pat.chars();
    while let Some(c) = chars.next() {
        if esc_chars.first() == Some(&c) {
            match chars.next() {
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => {
                    return Err(PgError::new(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ))
                }
            }
        } else if c == '\\' {
            // Without an escape character, backslash is literal.
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    text(out)
}

// ---------------------------------------------------------------- regular expressions

pub use super::regexp::compile_regex;

/// The few ARE spellings the `regex` crate spells differently.
pub(super) fn translate_are(p: &str) -> String {
    p.replace("[[:<:]]", r"\b").replace("[[:>:]]", r"\b")
}

fn textregexeq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(compile_regex(arg_str(a, 1), false)?.is_match(arg_str(a, 0))?))
}
fn textregexne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(!compile_regex(arg_str(a, 1), false)?.is_match(arg_str(a, 0))?))
}
fn texticregexeq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(compile_regex(arg_str(a, 1), true)?.is_match(arg_str(a, 0))?))
}
fn texticregexne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(!compile_regex(arg_str(a, 1), true)?.is_match(arg_str(a, 0))?))
}

struct RegexFlags {
    global: bool,
    case_insensitive: bool,
}

fn parse_flags(flags: &str) -> PgResult<RegexFlags> {
    let mut f = RegexFlags { global: false, case_insensitive: false };
    for c in flags.chars() {
        match c {
            'g' => f.global = true,
            'i' => f.case_insensitive = true,
            'c' => f.case_insensitive = false,
            'n' | 'p' | 'w' | 's' | 't' | 'x' | 'm' => {}
            _ => {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid regular expression option: \"{c}\"")))
            }
        }
    }
    Ok(f)
}

/// PostgreSQL replacement strings use \1..\9 and \& ; the regex crate uses $n.
fn translate_replacement(r: &str) -> String {
    let mut out = String::new();
    let mut chars = r.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(d @ '1'..='9') => out.push_str(&format!("${{{d}}}")),
                Some('&') => out.push_str("${0}"),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            },
            '$' => out.push_str("$$"),
            _ => out.push(c),
        }
    }
    out
}

fn regexp_replace(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let flags = if a.len() > 3 { parse_flags(arg_str(a, 3))? } else { RegexFlags { global: false, case_insensitive: false } };
    let re = compile_regex(arg_str(a, 1), flags.case_insensitive)?;
    let rep = translate_replacement(arg_str(a, 2));
    let s = arg_str(a, 0);
    text(re.replace(s, rep.as_str(), flags.global)?)
}

fn textregexsubstr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let re = compile_regex(arg_str(a, 1), false)?;
    let s = arg_str(a, 0);
    Ok(match re.captures(s)? {
        Some(caps) => {
            // With a parenthesized subexpression, the first one's match.
            let m = if caps.len() > 1 { caps[1] } else { caps[0] };
            match m {
                Some((from, to)) => Datum::text(&s[from..to]),
                None => Datum::Null,
            }
        }
        None => Datum::Null,
    })
}

fn regexp_split_to_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let flags = if a.len() > 2 { parse_flags(arg_str(a, 2))? } else { RegexFlags { global: false, case_insensitive: false } };
    let re = compile_regex(arg_str(a, 1), flags.case_insensitive)?;
    let parts: Vec<Datum> = split_regex(&re, arg_str(a, 0))?.into_iter().map(|s| Datum::text(&s)).collect();
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::TEXT, parts))))
}

fn split_regex(re: &super::regexp::PgRegex, s: &str) -> PgResult<Vec<String>> {
    // PostgreSQL ignores empty matches at the start and end and splits
    // between characters on empty matches elsewhere.
    let mut out = Vec::new();
    let mut last = 0;
    for (start, end) in re.find_all(s)? {
        if start == end && (start == 0 || start >= s.len()) {
            continue;
        }
        if end == 0 {
            continue;
        }
        out.push(s[last..start].to_string());
        last = end;
    }
    out.push(s[last..].to_string());
    if s.is_empty() {
        return Ok(vec![]);
    }
    Ok(out)
}

fn regexp_split_to_table(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let arr = regexp_split_to_array(a, c)?;
    let Datum::Array(arr) = arr else { return Ok(Box::new(std::iter::empty())) };
    let elems = arr.elements.clone();
    Ok(Box::new(elems.into_iter().map(Ok)))
}

fn regexp_matches(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let flags = if a.len() > 2 { parse_flags(arg_str(a, 2))? } else { RegexFlags { global: false, case_insensitive: false } };
    let re = compile_regex(arg_str(a, 1), flags.case_insensitive)?;
    let s = arg_str(a, 0).to_string();
    let mut rows = Vec::new();
    for caps in re.captures_all(&s, flags.global)? {
        let vals = match_values(&s, &caps);
        rows.push(Ok(Datum::Array(Arc::new(Array::from_vec(oid::TEXT, vals)))));
        if !flags.global {
            break;
        }
    }
    Ok(Box::new(rows.into_iter()))
}

/// regexp_match(text, text [, flags]): the first match's captures (or the
/// whole match) as a text[], NULL when there is none.
fn regexp_match(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let flags = if a.len() > 2 { parse_flags(arg_str(a, 2))? } else { RegexFlags { global: false, case_insensitive: false } };
    if flags.global {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "regexp_match() does not support the \"global\" option")
            .with_hint("Use the regexp_matches function instead."));
    }
    let re = compile_regex(arg_str(a, 1), flags.case_insensitive)?;
    let s = arg_str(a, 0);
    Ok(match re.captures(s)? {
        Some(caps) => Datum::Array(Arc::new(Array::from_vec(oid::TEXT, match_values(s, &caps)))),
        None => Datum::Null,
    })
}

/// One match as regexp_match(es) return it: each parenthesized
/// subexpression's text (NULL if it did not participate), or the whole
/// match when the pattern has none.
fn match_values(s: &str, caps: &super::regexp::Groups) -> Vec<Datum> {
    let text_of = |g: Option<(usize, usize)>| g.map(|(from, to)| Datum::text(&s[from..to]));
    if caps.len() > 1 {
        caps[1..].iter().map(|g| text_of(*g).unwrap_or(Datum::Null)).collect()
    } else {
        vec![text_of(caps[0]).unwrap_or_else(|| Datum::text(""))]
    }
}

/// similar_to_escape: SQL SIMILAR TO pattern to an anchored POSIX regex.
fn similar_escape(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let pat = arg_str(a, 0);
    let esc: Option<char> = if a.len() > 1 { arg_str(a, 1).chars().next() } else { Some('\\') };
    let mut out = String::from("^(?:");
    let mut chars = pat.chars();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        if Some(c) == esc {
            if let Some(n) = chars.next() {
                out.push_str(&regex::escape(&n.to_string()));
            }
            continue;
        }
        if in_bracket {
            out.push(c);
            if c == ']' {
                in_bracket = false;
            }
            continue;
        }
        match c {
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '[' => {
                in_bracket = true;
                out.push('[');
            }
            '.' | '^' | '$' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push_str(")$");
    text(out)
}

// ---------------------------------------------------------------- format()

fn text_format(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let fmt: Vec<char> = arg_str(a, 0).chars().collect();
    let mut out = String::new();
    let mut argi = 1usize;
    let mut i = 0;
    while i < fmt.len() {
        let ch = fmt[i];
        if ch != '%' {
            out.push(ch);
            i += 1;
            continue;
        }
        i += 1;
        if i >= fmt.len() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "unterminated format() type specifier")
                .with_hint("For a single \"%\" use \"%%\"."));
        }
        if fmt[i] == '%' {
            out.push('%');
            i += 1;
            continue;
        }
        // Optional argument position n$, flags '-', width.
        let mut j = i;
        let mut num = String::new();
        while j < fmt.len() && fmt[j].is_ascii_digit() {
            num.push(fmt[j]);
            j += 1;
        }
        if j < fmt.len() && fmt[j] == '$' && !num.is_empty() {
            argi = num.parse::<usize>().unwrap_or(1);
            i = j + 1;
        }
        let mut left = false;
        if i < fmt.len() && fmt[i] == '-' {
            left = true;
            i += 1;
        }
        let mut width = String::new();
        while i < fmt.len() && fmt[i].is_ascii_digit() {
            width.push(fmt[i]);
            i += 1;
        }
        if i >= fmt.len() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "unterminated format() type specifier")
                .with_hint("For a single \"%\" use \"%%\"."));
        }
        let conv = fmt[i];
        i += 1;
        if argi >= a.len() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "too few arguments for format()"));
        }
        let d = &a[argi];
        let ty = c.arg_type(argi);
        argi += 1;
        let s = match conv {
            's' => {
                if d.is_null() {
                    String::new()
                } else {
                    any_text(d, ty, c)
                }
            }
            'I' => {
                if d.is_null() {
                    return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "null values cannot be formatted as an SQL identifier"));
                }
                quote_ident_str(&any_text(d, ty, c))
            }
            'L' => {
                if d.is_null() {
                    "NULL".into()
                } else {
                    quote_literal_str(&any_text(d, ty, c))
                }
            }
            other => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("unrecognized format() type specifier \"{other}\""),
                )
                .with_hint("For a single \"%\" use \"%%\"."))
            }
        };
        let w: usize = width.parse().unwrap_or(0);
        let len = s.chars().count();
        if len < w {
            let padding = " ".repeat(w - len);
            if left {
                out.push_str(&s);
                out.push_str(&padding);
            } else {
                out.push_str(&padding);
                out.push_str(&s);
            }
        } else {
            out.push_str(&s);
        }
    }
    text(out)
}

// ---------------------------------------------------------------- arrays of strings

fn string_to_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let s = arg_str(a, 0);
    let null_str = if a.len() > 2 && !a[2].is_null() { Some(arg_str(a, 2)) } else { None };
    let mk = |p: &str| if Some(p) == null_str { Datum::Null } else { Datum::text(p) };
    let elems: Vec<Datum> = if s.is_empty() {
        vec![]
    } else if a[1].is_null() {
        s.chars().map(|ch| mk(&ch.to_string())).collect()
    } else {
        let d = arg_str(a, 1);
        if d.is_empty() {
            vec![mk(s)]
        } else {
            s.split(d).map(mk).collect()
        }
    };
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::TEXT, elems))))
}

fn array_to_text(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a[0].is_null() || a[1].is_null() {
        return Ok(Datum::Null);
    }
    let Datum::Array(arr) = &a[0] else { return Ok(Datum::Null) };
    let sep = arg_str(a, 1);
    let null_str = if a.len() > 2 && !a[2].is_null() { Some(arg_str(a, 2).to_string()) } else { None };
    let parts: Vec<String> = arr
        .elements
        .iter()
        .filter_map(|e| {
            if e.is_null() {
                null_str.clone()
            } else {
                Some(super::io::format_text(e, arr.element_type, &c.env.settings()))
            }
        })
        .collect();
    text(parts.join(sep))
}

fn byteacat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (Datum::Bytea(x), Datum::Bytea(y)) = (&a[0], &a[1]) else { return Ok(Datum::Null) };
    super::limits::check_alloc(x.len() + y.len())?;
    let mut v = x.to_vec();
    v.extend_from_slice(y);
    Ok(Datum::bytea(v))
}

fn pg_client_encoding(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    text("UTF8")
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["textcat"], textcat);
    plain(r, &["anytextcat", "textanycat", "oid:2003", "oid:2004"], anytextcat);
    plain(r, &["textlen"], textlen);
    plain(r, &["bpcharlen"], bpcharlen);
    plain(r, &["textoctetlen", "byteaoctetlen", "bpcharoctetlen"], octet_length);
    plain(r, &["bitlength", "oid:1810", "oid:1811"], bit_length);
    plain(r, &["lower"], lower);
    plain(r, &["upper"], upper);
    plain(r, &["initcap"], initcap);
    plain(r, &["text_substr"], text_substr);
    plain(r, &["text_substr_no_len"], text_substr_no_len);
    plain(r, &["bytea_substr", "bytea_substr_no_len"], bytea_substr);
    plain(r, &["textpos"], textpos);
    plain(r, &["replace_text"], replace_text);
    plain(r, &["btrim"], btrim);
    plain(r, &["btrim1"], btrim1);
    plain(r, &["ltrim"], ltrim);
    plain(r, &["ltrim1"], ltrim1);
    plain(r, &["rtrim"], rtrim);
    plain(r, &["rtrim1"], rtrim1);
    plain(r, &["lpad", "oid:879"], lpad);
    plain(r, &["rpad", "oid:880"], rpad);
    plain(r, &["text_left"], text_left);
    plain(r, &["text_right"], text_right);
    plain(r, &["repeat"], repeat);
    plain(r, &["text_reverse"], text_reverse);
    plain(r, &["split_part"], split_part);
    plain(r, &["text_concat"], concat);
    plain(r, &["text_concat_ws"], concat_ws);
    plain(r, &["md5_text", "md5_bytea"], md5_text);
    plain(r, &["chr"], chr);
    plain(r, &["ascii"], ascii);
    plain(r, &["to_hex32", "to_hex64"], to_hex);
    plain(r, &["text_starts_with"], starts_with);
    plain(r, &["translate"], translate);
    plain(r, &["quote_ident"], quote_ident);
    plain(r, &["quote_literal"], quote_literal);
    plain(r, &["quote_nullable"], quote_nullable);
    plain(r, &["oid:1285"], |a, c| quote_any(a, c, false));
    plain(r, &["oid:1290"], |a, c| quote_any(a, c, true));
    plain(r, &["regexp_match", "regexp_match_no_flags"], regexp_match);
    plain(r, &["textoverlay", "textoverlay_no_len"], overlay);
    plain(r, &["textlike", "namelike"], textlike);
    plain(r, &["textnlike", "namenlike"], textnlike);
    plain(r, &["texticlike", "nameiclike"], texticlike);
    plain(r, &["texticnlike", "nameicnlike"], texticnlike);
    plain(r, &["bpcharlike"], bpcharlike);
    plain(r, &["like_escape"], like_escape);
    plain(r, &["textregexeq", "nameregexeq"], textregexeq);
    plain(r, &["textregexne", "nameregexne"], textregexne);
    plain(r, &["texticregexeq", "nameicregexeq"], texticregexeq);
    plain(r, &["texticregexne", "nameicregexne"], texticregexne);
    plain(r, &["textregexreplace_noopt", "textregexreplace"], regexp_replace);
    plain(r, &["textregexsubstr"], textregexsubstr);
    plain(r, &["regexp_split_to_array", "regexp_split_to_array_no_flags"], regexp_split_to_array);
    set(r, &["regexp_split_to_table", "regexp_split_to_table_no_flags"], regexp_split_to_table);
    set(r, &["regexp_matches", "regexp_matches_no_flags"], regexp_matches);
    plain(r, &["similar_escape", "similar_to_escape_1", "similar_to_escape_2"], similar_escape);
    plain(r, &["text_format", "text_format_nv"], text_format);
    plain(r, &["text_to_array", "text_to_array_null"], string_to_array);
    plain(r, &["array_to_text", "array_to_text_null"], array_to_text);
    plain(r, &["byteacat"], byteacat);
    plain(r, &["pg_client_encoding"], pg_client_encoding);
}
