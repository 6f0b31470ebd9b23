//! Full-text search: the tsvector and tsquery types (their text forms,
//! comparison, matching with phrase operators, editing functions,
//! ranking) and the built-in text search configurations `simple` and
//! `english` (to_tsvector, to_tsquery and friends), after PostgreSQL's
//! utils/adt/tsvector*.c, tsquery*.c, tsrank.c and tsearch/.
//!
//! Both types travel as `Datum::Text` holding their canonical output
//! form: input normalises (sorts and merges lexemes, rebuilds the query
//! tree), so the text is the value, and every function parses it back.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use tusk_types::array::Array;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult};

use super::{plain, set, FnCtx, Registry, SetIter};

pub const TSVECTOR: Oid = 3614;
pub const TSQUERY: Oid = 3615;
pub const REGCONFIG: Oid = 3734;
pub const REGDICTIONARY: Oid = 3769;

/// Largest position a tsvector keeps (MAXENTRYPOS - 1); larger ones are clamped.
pub(super) const MAX_POS: u16 = 16383;
/// Positions kept per lexeme (MAXNUMPOS).
const MAX_NUM_POS: usize = 256;
/// Largest phrase distance (MAXENTRYPOS).
const MAX_DISTANCE: i64 = 16384;

// ---------------------------------------------------------------- tsvector

/// One lexeme: its positions carry the weight in the top two bits (3 = A
/// ... 0 = D), the position in the low 14, as WordEntryPos does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lexeme {
    pub word: String,
    pub pos: Vec<u16>,
}

fn wep_pos(p: u16) -> u16 {
    p & 0x3fff
}
fn wep_weight(p: u16) -> u8 {
    (p >> 14) as u8
}
fn make_wep(pos: u16, weight: u8) -> u16 {
    (pos.min(MAX_POS)) | ((weight as u16 & 3) << 14)
}

fn syntax_error(what: &str, s: &str) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, format!("syntax error in {what}: \"{s}\""))
}

/// gettoken_tsvector: reads one word (quoted or not, with backslash
/// escapes) and, for a tsvector, its position list. `query` makes the
/// tsquery operators delimiters and stops at ':' (the caller reads modifiers).
struct WordReader<'a> {
    chars: Vec<char>,
    at: usize,
    whole: &'a str,
    query: bool,
}

impl<'a> WordReader<'a> {
    fn new(s: &'a str, query: bool) -> Self {
        WordReader { chars: s.chars().collect(), at: 0, whole: s, query }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn err(&self) -> PgError {
        syntax_error(if self.query { "tsquery" } else { "tsvector" }, self.whole)
    }

    fn is_operator(c: char) -> bool {
        matches!(c, '!' | '&' | '|' | '(' | ')' | '<')
    }

    /// The next word and its positions; None at the end of the input.
    fn next(&mut self) -> PgResult<Option<(String, Vec<u16>)>> {
        let mut word = String::new();
        // Skip blanks, then read the word.
        loop {
            match self.peek() {
                None => return Ok(None),
                Some(c) if c.is_whitespace() => self.at += 1,
                Some(c) if self.query && Self::is_operator(c) => return Err(self.err()),
                _ => break,
            }
        }
        let mut quoted = false;
        if self.peek() == Some('\'') {
            quoted = true;
            self.at += 1;
            loop {
                match self.peek() {
                    None => return Err(self.err()),
                    Some('\\') => {
                        self.at += 1;
                        match self.peek() {
                            None => return Err(self.no_escaped()),
                            Some(c) => word.push(c),
                        }
                        self.at += 1;
                    }
                    Some('\'') => {
                        self.at += 1;
                        if self.peek() == Some('\'') {
                            word.push('\'');
                            self.at += 1;
                        } else {
                            break;
                        }
                    }
                    Some(c) => {
                        word.push(c);
                        self.at += 1;
                    }
                }
            }
            if word.is_empty() {
                return Err(self.err());
            }
        } else {
            loop {
                match self.peek() {
                    Some('\\') => {
                        self.at += 1;
                        match self.peek() {
                            None => return Err(self.no_escaped()),
                            Some(c) => word.push(c),
                        }
                        self.at += 1;
                    }
                    None => break,
                    Some(c) if c.is_whitespace() || (self.query && Self::is_operator(c)) => break,
                    Some(':') => {
                        if word.is_empty() {
                            return Err(self.err());
                        }
                        break;
                    }
                    Some(c) => {
                        word.push(c);
                        self.at += 1;
                    }
                }
            }
            if word.is_empty() {
                return Err(self.err());
            }
        }
        let _ = quoted;
        if self.query || self.peek() != Some(':') {
            return Ok(Some((word, Vec::new())));
        }
        // Position info: ':' then digits with an optional weight, comma separated.
        self.at += 1;
        let mut pos = Vec::new();
        loop {
            let start = self.at;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
            if start == self.at {
                return Err(self.err());
            }
            // atoi, then LIMITPOS.
            let digits: String = self.chars[start..self.at].iter().collect();
            let v: u64 = digits.parse().unwrap_or(u64::MAX);
            let p = v.min(MAX_POS as u64) as u16;
            // atoi overflow aside, position 0 is refused.
            if digits.trim_start_matches('0').is_empty() {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("wrong position info in tsvector: \"{}\"", self.whole)));
            }
            let mut weight: Option<u8> = None;
            loop {
                match self.peek() {
                    Some(',') => {
                        self.at += 1;
                        break;
                    }
                    Some(c @ ('a' | 'A' | '*' | 'b' | 'B' | 'c' | 'C' | 'd' | 'D')) => {
                        if weight.is_some_and(|w| w != 0) {
                            return Err(self.err());
                        }
                        weight = Some(match c {
                            'a' | 'A' | '*' => 3,
                            'b' | 'B' => 2,
                            'c' | 'C' => 1,
                            _ => 0,
                        });
                        self.at += 1;
                    }
                    None => {
                        pos.push(make_wep(p, weight.unwrap_or(0)));
                        return Ok(Some((word, pos)));
                    }
                    Some(c) if c.is_whitespace() => {
                        pos.push(make_wep(p, weight.unwrap_or(0)));
                        return Ok(Some((word, pos)));
                    }
                    Some(_) => return Err(self.err()),
                }
            }
            pos.push(make_wep(p, weight.unwrap_or(0)));
        }
    }

    fn no_escaped(&self) -> PgError {
        PgError::new(sqlstate::SYNTAX_ERROR, format!("there is no escaped character: \"{}\"", self.whole))
    }
}

/// uniquePos: positions sorted, duplicates merged keeping the higher
/// weight, at most MAXNUMPOS kept.
fn unique_pos(pos: &mut Vec<u16>) {
    if pos.len() <= 1 {
        return;
    }
    pos.sort_by_key(|&p| wep_pos(p));
    let mut out: Vec<u16> = Vec::with_capacity(pos.len());
    for &p in pos.iter() {
        match out.last_mut() {
            Some(last) if wep_pos(*last) == wep_pos(p) => {
                if wep_weight(p) > wep_weight(*last) {
                    *last = p;
                }
            }
            _ => {
                if out.len() < MAX_NUM_POS {
                    out.push(p)
                }
            }
        }
    }
    *pos = out;
}

/// Sorts lexemes (by bytes, as tsCompareString) and merges duplicates.
pub fn normalize(mut lex: Vec<Lexeme>) -> Vec<Lexeme> {
    lex.sort_by(|a, b| a.word.as_bytes().cmp(b.word.as_bytes()));
    let mut out: Vec<Lexeme> = Vec::with_capacity(lex.len());
    for l in lex {
        match out.last_mut() {
            Some(last) if last.word == l.word => last.pos.extend(l.pos),
            _ => out.push(l),
        }
    }
    for l in &mut out {
        unique_pos(&mut l.pos);
    }
    out
}

pub fn parse_tsvector(s: &str) -> PgResult<Vec<Lexeme>> {
    let mut r = WordReader::new(s, false);
    let mut lex = Vec::new();
    while let Some((word, pos)) = r.next()? {
        if word.len() >= 2048 {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("word is too long ({} bytes, max 2047 bytes)", word.len()),
            ));
        }
        lex.push(Lexeme { word, pos });
    }
    Ok(normalize(lex))
}

fn quote_lexeme(out: &mut String, w: &str) {
    out.push('\'');
    for c in w.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
}

pub fn format_tsvector(lex: &[Lexeme]) -> String {
    let mut out = String::new();
    for (i, l) in lex.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        quote_lexeme(&mut out, &l.word);
        for (j, &p) in l.pos.iter().enumerate() {
            out.push(if j == 0 { ':' } else { ',' });
            out.push_str(&wep_pos(p).to_string());
            match wep_weight(p) {
                3 => out.push('A'),
                2 => out.push('B'),
                1 => out.push('C'),
                _ => {}
            }
        }
    }
    out
}

pub(super) fn tsvector_datum(lex: &[Lexeme]) -> Datum {
    Datum::from_string(format_tsvector(lex))
}

fn arg_tsvector(a: &[Datum], i: usize) -> PgResult<Vec<Lexeme>> {
    parse_tsvector(a[i].as_str().unwrap_or(""))
}

/// The on-disk size of a tsvector (VARSIZE), which its ordering looks at first.
fn tsvector_varsize(lex: &[Lexeme]) -> usize {
    let mut strsize = 0usize;
    for l in lex {
        strsize += l.word.len();
        if !l.pos.is_empty() {
            strsize += strsize % 2; // SHORTALIGN
            strsize += 2 + 2 * l.pos.len();
        }
    }
    8 + 4 * lex.len() + strsize
}

fn tsvector_cmp_values(a: &[Lexeme], b: &[Lexeme]) -> Ordering {
    let (sa, sb) = (tsvector_varsize(a), tsvector_varsize(b));
    if sa != sb {
        return sa.cmp(&sb);
    }
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for (x, y) in a.iter().zip(b) {
        let (hx, hy) = (!x.pos.is_empty(), !y.pos.is_empty());
        if hx != hy {
            return if hx { Ordering::Less } else { Ordering::Greater };
        }
        let c = x.word.as_bytes().cmp(y.word.as_bytes());
        if c != Ordering::Equal {
            return c;
        }
        if hx {
            if x.pos.len() != y.pos.len() {
                return x.pos.len().cmp(&y.pos.len());
            }
            for (&p, &q) in x.pos.iter().zip(&y.pos) {
                let c = wep_pos(p).cmp(&wep_pos(q)).then(wep_weight(p).cmp(&wep_weight(q)));
                if c != Ordering::Equal {
                    return c;
                }
            }
        }
    }
    Ordering::Equal
}

// ---------------------------------------------------------------- tsquery

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
    Phrase(u16),
}

impl Op {
    /// PostgreSQL's operator numbers (OP_AND 2, OP_OR 3, OP_PHRASE 4), which order query nodes.
    fn code(self) -> u8 {
        match self {
            Op::And => 2,
            Op::Or => 3,
            Op::Phrase(_) => 4,
        }
    }
    fn priority(self) -> u8 {
        match self {
            Op::Or => 1,
            Op::And => 2,
            Op::Phrase(_) => 3,
        }
    }
}

const NOT_PRIORITY: u8 = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QNode {
    /// An operand: weight is a bit set (8 = A, 4 = B, 2 = C, 1 = D; 0 = any).
    Val { word: String, weight: u8, prefix: bool },
    /// A stop word removed by a dictionary (only while building from text).
    Stop,
    Not(Box<QNode>),
    Bin { op: Op, left: Box<QNode>, right: Box<QNode> },
}

/// One token of the query grammar.
enum QTok {
    Val(String, u8, bool),
    Not,
    Open,
    Close,
    Bin(Op),
}

/// gettoken_query_standard: the token stream of tsquery text.
fn tokenize_query(s: &str) -> PgResult<Vec<QTok>> {
    let err = || syntax_error("tsquery", s);
    let chars: Vec<char> = s.chars().collect();
    let mut at = 0usize;
    let mut toks = Vec::new();
    let mut want_operand = true;
    let mut depth = 0i32;
    loop {
        let c = chars.get(at).copied();
        if want_operand {
            match c {
                None => {
                    if toks.is_empty() {
                        return Ok(toks);
                    }
                    return Err(err());
                }
                Some('!') => {
                    toks.push(QTok::Not);
                    at += 1;
                }
                Some('(') => {
                    depth += 1;
                    toks.push(QTok::Open);
                    at += 1;
                }
                Some(':') => return Err(err()),
                Some(c) if c.is_whitespace() => at += 1,
                Some(_) => {
                    let rest: String = chars[at..].iter().collect();
                    let mut r = WordReader::new(&rest, true);
                    r.whole = s;
                    let Some((word, _)) = r.next()? else { return Err(err()) };
                    at += r.at;
                    // get_modifiers
                    let mut weight = 0u8;
                    let mut prefix = false;
                    if chars.get(at) == Some(&':') {
                        at += 1;
                        loop {
                            match chars.get(at) {
                                Some('a' | 'A') => weight |= 8,
                                Some('b' | 'B') => weight |= 4,
                                Some('c' | 'C') => weight |= 2,
                                Some('d' | 'D') => weight |= 1,
                                Some('*') => prefix = true,
                                _ => break,
                            }
                            at += 1;
                        }
                    }
                    toks.push(QTok::Val(word, weight, prefix));
                    want_operand = false;
                }
            }
        } else {
            match c {
                None => {
                    if depth != 0 {
                        return Err(err());
                    }
                    return Ok(toks);
                }
                Some('&') => {
                    toks.push(QTok::Bin(Op::And));
                    at += 1;
                    want_operand = true;
                }
                Some('|') => {
                    toks.push(QTok::Bin(Op::Or));
                    at += 1;
                    want_operand = true;
                }
                Some('<') => {
                    at += 1;
                    let dist = if chars.get(at) == Some(&'-') {
                        at += 1;
                        1
                    } else {
                        let start = at;
                        if chars.get(at) == Some(&'-') || chars.get(at) == Some(&'+') {
                            at += 1;
                        }
                        while chars.get(at).is_some_and(|c| c.is_ascii_digit()) {
                            at += 1;
                        }
                        if start == at {
                            return Err(err());
                        }
                        let text: String = chars[start..at].iter().collect();
                        let v: i64 = text.parse().unwrap_or(i64::MAX);
                        if !(0..=MAX_DISTANCE).contains(&v) {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                format!("distance in phrase operator must be an integer value between zero and {MAX_DISTANCE} inclusive"),
                            ));
                        }
                        v
                    };
                    if chars.get(at) != Some(&'>') {
                        return Err(err());
                    }
                    at += 1;
                    toks.push(QTok::Bin(Op::Phrase(dist as u16)));
                    want_operand = true;
                }
                Some(')') => {
                    depth -= 1;
                    if depth < 0 {
                        return Err(err());
                    }
                    toks.push(QTok::Close);
                    at += 1;
                }
                Some(c) if c.is_whitespace() => at += 1,
                Some(_) => return Err(err()),
            }
        }
    }
}

/// Builds the tree from tokens with PostgreSQL's priorities (NOT > phrase
/// > AND > OR, binary operators left-associative), as makepol does.
struct QueryBuilder<'a, F: FnMut(String, u8, bool) -> PgResult<QNode>> {
    toks: &'a [QTok],
    at: usize,
    operand: F,
}

impl<'a, F: FnMut(String, u8, bool) -> PgResult<QNode>> QueryBuilder<'a, F> {
    fn expr(&mut self, min_priority: u8) -> PgResult<QNode> {
        crate::stack::check()?;
        let mut left = self.unary()?;
        while let Some(QTok::Bin(op)) = self.toks.get(self.at) {
            let op = *op;
            if op.priority() < min_priority {
                break;
            }
            self.at += 1;
            let right = self.expr(op.priority() + 1)?;
            left = QNode::Bin { op, left: Box::new(left), right: Box::new(right) };
        }
        Ok(left)
    }

    fn unary(&mut self) -> PgResult<QNode> {
        crate::stack::check()?;
        match self.toks.get(self.at) {
            Some(QTok::Not) => {
                self.at += 1;
                Ok(QNode::Not(Box::new(self.unary()?)))
            }
            Some(QTok::Open) => {
                self.at += 1;
                let e = self.expr(0)?;
                if let Some(QTok::Close) = self.toks.get(self.at) {
                    self.at += 1;
                }
                Ok(e)
            }
            Some(QTok::Val(w, weight, prefix)) => {
                self.at += 1;
                (self.operand)(w.clone(), *weight, *prefix)
            }
            _ => Ok(QNode::Stop),
        }
    }
}

fn build_query(s: &str, operand: impl FnMut(String, u8, bool) -> PgResult<QNode>) -> PgResult<Option<QNode>> {
    let toks = tokenize_query(s)?;
    if toks.is_empty() {
        return Ok(None);
    }
    let mut b = QueryBuilder { toks: &toks, at: 0, operand };
    Ok(Some(b.expr(0)?))
}

pub fn parse_tsquery(s: &str) -> PgResult<Option<QNode>> {
    build_query(s, |word, weight, prefix| {
        if word.len() > 2047 {
            return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("word is too long in tsquery: \"{s}\"")));
        }
        Ok(QNode::Val { word, weight, prefix })
    })
}

/// infix(): the text form, parenthesising by priority.
fn write_query(out: &mut String, n: &QNode, parent_priority: u8, right_phrase: bool) {
    match n {
        QNode::Val { word, weight, prefix } => {
            quote_lexeme(out, word);
            if *weight != 0 || *prefix {
                out.push(':');
                if *prefix {
                    out.push('*');
                }
                for (bit, c) in [(8, 'A'), (4, 'B'), (2, 'C'), (1, 'D')] {
                    if weight & bit != 0 {
                        out.push(c);
                    }
                }
            }
        }
        QNode::Stop => {}
        QNode::Not(c) => {
            let paren = NOT_PRIORITY < parent_priority;
            if paren {
                out.push_str("( ");
            }
            out.push('!');
            write_query(out, c, NOT_PRIORITY, false);
            if paren {
                out.push_str(" )");
            }
        }
        QNode::Bin { op, left, right } => {
            let p = op.priority();
            let paren = p < parent_priority || (matches!(op, Op::Phrase(_)) && right_phrase);
            if paren {
                out.push_str("( ");
            }
            write_query(out, left, p, false);
            match op {
                Op::Or => out.push_str(" | "),
                Op::And => out.push_str(" & "),
                Op::Phrase(1) => out.push_str(" <-> "),
                Op::Phrase(d) => out.push_str(&format!(" <{d}> ")),
            }
            write_query(out, right, p, matches!(op, Op::Phrase(_)));
            if paren {
                out.push_str(" )");
            }
        }
    }
}

pub fn format_tsquery(q: &Option<QNode>) -> String {
    let mut out = String::new();
    if let Some(n) = q {
        write_query(&mut out, n, 0, false);
    }
    out
}

fn tsquery_datum(q: &Option<QNode>) -> Datum {
    Datum::from_string(format_tsquery(q))
}

fn arg_tsquery(a: &[Datum], i: usize) -> PgResult<Option<QNode>> {
    parse_tsquery(a[i].as_str().unwrap_or(""))
}

fn count_nodes(n: &QNode) -> usize {
    match n {
        QNode::Val { .. } | QNode::Stop => 1,
        QNode::Not(c) => 1 + count_nodes(c),
        QNode::Bin { left, right, .. } => 1 + count_nodes(left) + count_nodes(right),
    }
}

fn operand_bytes(n: &QNode) -> usize {
    match n {
        QNode::Val { word, .. } => word.len() + 1,
        QNode::Stop => 0,
        QNode::Not(c) => operand_bytes(c),
        QNode::Bin { left, right, .. } => operand_bytes(left) + operand_bytes(right),
    }
}

/// PostgreSQL's "legacy" CRC-32 (pg_crc.h's LEGACY_CRC32, which indexes
/// the table by the high byte), with which query operands are ordered.
fn legacy_crc32(s: &[u8]) -> i32 {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB88320 ^ (c >> 1) } else { c >> 1 };
            }
            *e = c;
        }
        t
    });
    let mut crc = 0xFFFF_FFFFu32;
    for &b in s {
        crc = (crc << 8) ^ table[(((crc >> 24) as u8) ^ b) as usize];
    }
    (crc ^ 0xFFFF_FFFF) as i32
}

/// QTNodeCompare over the binary tree (the n-ary flattening PostgreSQL
/// does first does not change how two queries of one size compare here
/// except for long chains, which keep the same order of children).
fn qnode_cmp(a: &QNode, b: &QNode) -> Ordering {
    let kind = |n: &QNode| match n {
        QNode::Val { .. } | QNode::Stop => 1,
        _ => 2,
    };
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        return if ka > kb { Ordering::Less } else { Ordering::Greater };
    }
    match (a, b) {
        (QNode::Val { word: wa, .. }, QNode::Val { word: wb, .. }) => {
            let (ca, cb) = (legacy_crc32(wa.as_bytes()), legacy_crc32(wb.as_bytes()));
            if ca != cb {
                return if ca > cb { Ordering::Less } else { Ordering::Greater };
            }
            wa.as_bytes().cmp(wb.as_bytes())
        }
        _ => {
            let (oa, ca, da) = op_parts(a);
            let (ob, cb, db) = op_parts(b);
            if oa != ob {
                return if oa > ob { Ordering::Less } else { Ordering::Greater };
            }
            if ca.len() != cb.len() {
                return if ca.len() > cb.len() { Ordering::Less } else { Ordering::Greater };
            }
            for (x, y) in ca.iter().zip(cb.iter()) {
                let c = qnode_cmp(x, y);
                if c != Ordering::Equal {
                    return c;
                }
            }
            if da != db {
                return if da > db { Ordering::Less } else { Ordering::Greater };
            }
            Ordering::Equal
        }
    }
}

/// An operator node as QT2QTN sees it: code, children (right operand
/// first, as PostgreSQL's polish layout stores them), distance.
fn op_parts(n: &QNode) -> (u8, Vec<&QNode>, u16) {
    match n {
        QNode::Not(c) => (1, vec![c.as_ref()], 0),
        QNode::Bin { op, left, right } => (op.code(), vec![right.as_ref(), left.as_ref()], if let Op::Phrase(d) = op { *d } else { 0 }),
        _ => (0, vec![], 0),
    }
}

fn tsquery_cmp_values(a: &Option<QNode>, b: &Option<QNode>) -> Ordering {
    let size = |q: &Option<QNode>| q.as_ref().map(count_nodes).unwrap_or(0);
    let varsize = |q: &Option<QNode>| q.as_ref().map(|n| 8 + 12 * count_nodes(n) + operand_bytes(n)).unwrap_or(8);
    let (sa, sb) = (size(a), size(b));
    if sa != sb {
        return sa.cmp(&sb);
    }
    let (va, vb) = (varsize(a), varsize(b));
    if va != vb {
        return va.cmp(&vb);
    }
    match (a, b) {
        (Some(x), Some(y)) => qnode_cmp(x, y),
        _ => Ordering::Equal,
    }
}

// ---------------------------------------------------------------- matching

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tern {
    No,
    Yes,
    Maybe,
}

/// What a phrase subexpression matched: end positions, whether they are
/// the positions where it does *not* match, and its width.
#[derive(Default, Debug)]
struct PhraseData {
    pos: Vec<u16>,
    negate: bool,
    width: i32,
}

/// The lexemes an operand matches (all with its prefix, for a prefix operand).
fn matching_lexemes<'v>(v: &'v [Lexeme], word: &str, prefix: bool) -> Vec<&'v Lexeme> {
    if prefix {
        let start = v.partition_point(|l| l.word.as_bytes() < word.as_bytes());
        v[start..].iter().take_while(|l| l.word.starts_with(word)).collect()
    } else {
        match v.binary_search_by(|l| l.word.as_bytes().cmp(word.as_bytes())) {
            Ok(i) => vec![&v[i]],
            Err(_) => vec![],
        }
    }
}

fn weight_ok(weight_mask: u8, p: u16) -> bool {
    weight_mask == 0 || weight_mask & (1 << wep_weight(p)) != 0
}

/// checkcondition_str without position data: does the operand occur (a
/// lexeme without positions matches any weight).
fn check_val(v: &[Lexeme], word: &str, weight: u8, prefix: bool) -> bool {
    matching_lexemes(v, word, prefix).iter().any(|l| l.pos.is_empty() || l.pos.iter().any(|&p| weight_ok(weight, p)))
}

fn check_val_data(v: &[Lexeme], word: &str, weight: u8, prefix: bool, data: &mut PhraseData) -> Tern {
    let lexes = matching_lexemes(v, word, prefix);
    let mut result = Tern::No;
    let mut all = Vec::new();
    for l in lexes {
        if l.pos.is_empty() {
            result = Tern::Maybe;
            continue;
        }
        for &p in &l.pos {
            if weight_ok(weight, p) {
                all.push(wep_pos(p));
            }
        }
    }
    if result == Tern::Maybe {
        return Tern::Maybe;
    }
    if all.is_empty() {
        return Tern::No;
    }
    all.sort_unstable();
    all.dedup();
    data.pos = all;
    Tern::Yes
}

const EMIT_L: u8 = 1;
const EMIT_R: u8 = 2;
const EMIT_BOTH: u8 = 4;

/// TS_phrase_output: merges the two position lists (shifted by their
/// offsets), keeping the positions the `emit` flags ask for.
fn phrase_output(data: &mut PhraseData, l: &PhraseData, r: &PhraseData, emit: u8, loff: i32, roff: i32) -> Tern {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        let lp = l.pos.get(i).map(|&p| p as i32 + loff);
        let rp = r.pos.get(j).map(|&p| p as i32 + roff);
        let (take, which) = match (lp, rp) {
            (None, None) => break,
            (Some(a), None) => {
                i += 1;
                (a, EMIT_L)
            }
            (None, Some(b)) => {
                j += 1;
                (b, EMIT_R)
            }
            (Some(a), Some(b)) => match a.cmp(&b) {
                Ordering::Less => {
                    i += 1;
                    (a, EMIT_L)
                }
                Ordering::Greater => {
                    j += 1;
                    (b, EMIT_R)
                }
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                    (a, EMIT_BOTH)
                }
            },
        };
        if emit & which != 0 {
            out.push(take.clamp(0, u16::MAX as i32) as u16);
        }
    }
    let any = !out.is_empty();
    data.pos = out;
    if any {
        Tern::Yes
    } else {
        Tern::No
    }
}

/// How an operand is looked up: with phrase data wanted (Some) or not.
type Checker<'c> = &'c dyn Fn(&QNode, Option<&mut PhraseData>) -> Tern;

/// The operand check against a tsvector (checkcondition_str).
fn vector_checker<'v>(v: &'v [Lexeme]) -> impl Fn(&QNode, Option<&mut PhraseData>) -> Tern + 'v {
    move |n, data| {
        let QNode::Val { word, weight, prefix } = n else { return Tern::No };
        match data {
            Some(d) => check_val_data(v, word, *weight, *prefix, d),
            None => {
                if check_val(v, word, *weight, *prefix) {
                    Tern::Yes
                } else {
                    Tern::No
                }
            }
        }
    }
}

fn phrase_exec(n: &QNode, v: Checker, data: &mut PhraseData) -> PgResult<Tern> {
    crate::stack::check()?;
    match n {
        QNode::Val { .. } => Ok(v(n, Some(data))),
        QNode::Stop => Ok(Tern::No),
        QNode::Not(c) => match phrase_exec(c, v, data)? {
            Tern::No => {
                data.negate = true;
                Ok(Tern::Yes)
            }
            Tern::Yes => {
                if !data.pos.is_empty() {
                    data.negate = !data.negate;
                    Ok(Tern::Yes)
                } else if data.negate {
                    data.negate = false;
                    Ok(Tern::No)
                } else {
                    Ok(Tern::Yes)
                }
            }
            Tern::Maybe => Ok(Tern::Maybe),
        },
        QNode::Bin { op: op @ (Op::And | Op::Phrase(_)), left, right } => {
            let mut ld = PhraseData::default();
            let mut rd = PhraseData::default();
            let lm = phrase_exec(left, v, &mut ld)?;
            if lm == Tern::No {
                return Ok(Tern::No);
            }
            let rm = phrase_exec(right, v, &mut rd)?;
            if rm == Tern::No {
                return Ok(Tern::No);
            }
            if lm == Tern::Maybe || rm == Tern::Maybe {
                return Ok(Tern::Maybe);
            }
            let (loff, roff) = if let Op::Phrase(d) = op {
                data.width = *d as i32 + ld.width + rd.width;
                (*d as i32 + rd.width, 0)
            } else {
                let maxw = ld.width.max(rd.width);
                data.width = maxw;
                (maxw - ld.width, maxw - rd.width)
            };
            Ok(if ld.negate && rd.negate {
                phrase_output(data, &ld, &rd, EMIT_BOTH | EMIT_L | EMIT_R, loff, roff);
                data.negate = true;
                Tern::Yes
            } else if ld.negate {
                phrase_output(data, &ld, &rd, EMIT_R, loff, roff)
            } else if rd.negate {
                phrase_output(data, &ld, &rd, EMIT_L, loff, roff)
            } else {
                phrase_output(data, &ld, &rd, EMIT_BOTH, loff, roff)
            })
        }
        QNode::Bin { op: Op::Or, left, right } => {
            let mut ld = PhraseData::default();
            let mut rd = PhraseData::default();
            let lm = phrase_exec(left, v, &mut ld)?;
            let rm = phrase_exec(right, v, &mut rd)?;
            if lm == Tern::No && rm == Tern::No {
                return Ok(Tern::No);
            }
            if lm == Tern::Maybe || rm == Tern::Maybe {
                return Ok(Tern::Maybe);
            }
            if lm == Tern::No {
                ld.width = 0;
            }
            if rm == Tern::No {
                rd.width = 0;
            }
            let maxw = ld.width.max(rd.width);
            let (loff, roff) = (maxw - ld.width, maxw - rd.width);
            data.width = maxw;
            Ok(if ld.negate && rd.negate {
                phrase_output(data, &ld, &rd, EMIT_BOTH, loff, roff);
                data.negate = true;
                Tern::Yes
            } else if ld.negate {
                phrase_output(data, &ld, &rd, EMIT_L, loff, roff);
                data.negate = true;
                Tern::Yes
            } else if rd.negate {
                phrase_output(data, &ld, &rd, EMIT_R, loff, roff);
                data.negate = true;
                Tern::Yes
            } else {
                phrase_output(data, &ld, &rd, EMIT_BOTH | EMIT_L | EMIT_R, loff, roff)
            })
        }
    }
}

/// TS_execute_recurse: a phrase whose positions are unknown (stripped
/// lexemes) does not match.
fn exec(n: &QNode, v: Checker) -> PgResult<Tern> {
    crate::stack::check()?;
    Ok(match n {
        QNode::Val { .. } => v(n, None),
        QNode::Stop => Tern::No,
        QNode::Not(c) => match exec(c, v)? {
            Tern::Yes => Tern::No,
            Tern::No => Tern::Yes,
            Tern::Maybe => Tern::Maybe,
        },
        QNode::Bin { op: Op::And, left, right } => {
            let l = exec(left, v)?;
            if l == Tern::No {
                return Ok(Tern::No);
            }
            let r = exec(right, v)?;
            if r == Tern::No {
                Tern::No
            } else if l == Tern::Yes && r == Tern::Yes {
                Tern::Yes
            } else {
                Tern::Maybe
            }
        }
        QNode::Bin { op: Op::Or, left, right } => {
            let l = exec(left, v)?;
            if l == Tern::Yes {
                return Ok(Tern::Yes);
            }
            let r = exec(right, v)?;
            if r == Tern::Yes {
                Tern::Yes
            } else if l == Tern::No && r == Tern::No {
                Tern::No
            } else {
                Tern::Maybe
            }
        }
        QNode::Bin { op: Op::Phrase(_), .. } => {
            let mut d = PhraseData::default();
            match phrase_exec(n, v, &mut d)? {
                Tern::Yes => Tern::Yes,
                _ => Tern::No,
            }
        }
    })
}

pub fn ts_match(v: &[Lexeme], q: &Option<QNode>) -> PgResult<bool> {
    match q {
        None => Ok(false),
        Some(n) => Ok(exec(n, &vector_checker(v))? != Tern::No),
    }
}

// ---------------------------------------------------------------- configurations

/// A built-in text search configuration.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Config {
    Simple,
    English,
}

const SIMPLE_CFG: Oid = 3748;
const ENGLISH_CFG: Oid = 13164;

impl Config {
    fn from_oid(o: Oid) -> PgResult<Config> {
        match o {
            SIMPLE_CFG => Ok(Config::Simple),
            ENGLISH_CFG => Ok(Config::English),
            _ => Err(PgError::new(sqlstate::INTERNAL_ERROR, format!("cache lookup failed for text search configuration {o}"))),
        }
    }
}

/// The configurations and dictionaries Tusk has: (oid, name).
pub const CONFIGS: &[(Oid, &str)] = &[(SIMPLE_CFG, "simple"), (ENGLISH_CFG, "english")];
pub const DICTIONARIES: &[(Oid, &str)] = &[(3765, "simple"), (13163, "english_stem")];

fn lookup_named(s: &str, list: &[(Oid, &str)], what: &str) -> PgResult<Oid> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<u32>().map_err(|_| PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type oid: \"{s}\"")));
    }
    let parts = super::parse_qualified_name(t)?;
    let name = match parts.as_slice() {
        [n] => n.as_str(),
        [schema, n] if schema == "pg_catalog" => n.as_str(),
        [schema, _] => return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist"))),
        _ => return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("improper qualified name (too many dotted names): {t}"))),
    };
    list.iter()
        .find(|(_, n)| *n == name)
        .map(|(o, _)| *o)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("text search {what} \"{t}\" does not exist")))
}

/// regconfigin.
pub fn regconfig_in(s: &str) -> PgResult<Oid> {
    lookup_named(s, CONFIGS, "configuration")
}

/// regdictionaryin.
pub fn regdictionary_in(s: &str) -> PgResult<Oid> {
    lookup_named(s, DICTIONARIES, "dictionary")
}

/// regconfigout / regdictionaryout: the name, or the number for an unknown oid.
pub fn reg_ts_name(ty: Oid, o: Oid) -> String {
    let list = if ty == REGCONFIG { CONFIGS } else { DICTIONARIES };
    list.iter().find(|(x, _)| *x == o).map(|(_, n)| n.to_string()).unwrap_or_else(|| o.to_string())
}

fn english_stop_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| include_str!("tsearch_data/english.stop").lines().map(str::trim).filter(|l| !l.is_empty()).collect())
}

fn english_stemmer() -> &'static rust_stemmers::Stemmer {
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
}

/// Token types of the default parser (ts_token_type's ids).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TokenType {
    AsciiWord = 1,
    Word = 2,
    NumWord = 3,
    Int = 22, // "uint" is 22 in PostgreSQL's list
    AsciiHWord = 16,
    HWord = 17,
    NumHWord = 15,
    HWordAsciiPart = 11,
    HWordPart = 9,
    HWordNumPart = 10,
    Blank = 12,
}

/// A simplified default parser (prsd_nexttoken): words of letters and
/// digits, hyphenated words with their parts, numbers; everything else is
/// blank. Email addresses, URLs, hosts, file paths, versions and decimals
/// are not recognised as such.
fn parse_tokens(text: &str) -> Vec<(TokenType, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let is_wordch = |c: char| c.is_alphanumeric();
    let classify = |w: &str| {
        let all_digits = w.chars().all(|c| c.is_ascii_digit());
        let has_digit = w.chars().any(|c| c.is_ascii_digit());
        if all_digits {
            TokenType::Int
        } else if has_digit {
            TokenType::NumWord
        } else if w.is_ascii() {
            TokenType::AsciiWord
        } else {
            TokenType::Word
        }
    };
    while i < chars.len() {
        if !is_wordch(chars[i]) {
            let start = i;
            while i < chars.len() && !is_wordch(chars[i]) {
                i += 1;
            }
            out.push((TokenType::Blank, chars[start..i].iter().collect()));
            continue;
        }
        // A run of word parts joined by single hyphens.
        let mut parts: Vec<String> = Vec::new();
        let start = i;
        loop {
            let s = i;
            while i < chars.len() && is_wordch(chars[i]) {
                i += 1;
            }
            parts.push(chars[s..i].iter().collect());
            if i + 1 < chars.len() && chars[i] == '-' && is_wordch(chars[i + 1]) {
                i += 1;
                continue;
            }
            break;
        }
        if parts.len() == 1 || parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit())) {
            if parts.len() > 1 {
                // "1-2": numbers with a sign in between; keep the first.
                i = start + parts[0].chars().count();
            }
            let w = parts.swap_remove(0);
            out.push((classify(&w), w));
            continue;
        }
        let whole: String = chars[start..i].iter().collect();
        let kinds: Vec<TokenType> = parts.iter().map(|p| classify(p)).collect();
        let htype = if kinds.iter().any(|k| matches!(k, TokenType::NumWord | TokenType::Int)) {
            TokenType::NumHWord
        } else if kinds.iter().all(|k| *k == TokenType::AsciiWord) {
            TokenType::AsciiHWord
        } else {
            TokenType::HWord
        };
        out.push((htype, whole));
        for (p, k) in parts.into_iter().zip(kinds) {
            let t = match k {
                TokenType::AsciiWord => TokenType::HWordAsciiPart,
                TokenType::Word => TokenType::HWordPart,
                _ => TokenType::HWordNumPart,
            };
            out.push((t, p));
        }
    }
    out
}

/// What the configuration's dictionaries make of a token: None when no
/// dictionary is mapped (not counted as a position), Some(empty) for a
/// stop word.
fn lexize(cfg: Config, t: TokenType, token: &str) -> Option<Vec<String>> {
    if t == TokenType::Blank {
        return None;
    }
    let lower = token.to_lowercase();
    match cfg {
        Config::Simple => Some(vec![lower]),
        Config::English => match t {
            TokenType::AsciiWord | TokenType::Word | TokenType::AsciiHWord | TokenType::HWord | TokenType::HWordAsciiPart | TokenType::HWordPart => {
                if english_stop_words().contains(lower.as_str()) {
                    Some(vec![])
                } else {
                    Some(vec![english_stemmer().stem(&lower).into_owned()])
                }
            }
            _ => Some(vec![lower]),
        },
    }
}

/// (lexeme, position) pairs of a text, positions counting from 1.
pub(super) fn text_lexemes(cfg: Config, text: &str) -> Vec<(Option<String>, u16)> {
    let mut out = Vec::new();
    let mut pos: u32 = 0;
    for (t, tok) in parse_tokens(text) {
        if tok.len() >= 2048 {
            continue;
        }
        let Some(lexes) = lexize(cfg, t, &tok) else { continue };
        pos += 1;
        let p = pos.min(MAX_POS as u32) as u16;
        if lexes.is_empty() {
            out.push((None, p));
        }
        for l in lexes {
            out.push((Some(l), p));
        }
    }
    out
}

pub fn to_tsvector_cfg(cfg: Config, text: &str) -> Vec<Lexeme> {
    let lex = text_lexemes(cfg, text).into_iter().filter_map(|(w, p)| w.map(|word| Lexeme { word, pos: vec![p] })).collect();
    normalize(lex)
}

/// pushval_morph: an operand's text through the configuration: its
/// lexemes joined by phrase operators (stop words keep their place).
fn morph_operand(cfg: Config, text: &str, weight: u8, prefix: bool) -> QNode {
    let lexes = text_lexemes(cfg, text);
    let mut node: Option<QNode> = None;
    let mut prev_pos: Option<u16> = None;
    for (w, p) in lexes {
        let item = match w {
            Some(word) => QNode::Val { word, weight, prefix },
            None => QNode::Stop,
        };
        node = Some(match (node, prev_pos) {
            (Some(n), Some(pp)) => QNode::Bin { op: Op::Phrase((p - pp).max(1)), left: Box::new(n), right: Box::new(item) },
            _ => item,
        });
        prev_pos = Some(p);
    }
    node.unwrap_or(QNode::Stop)
}

/// clean_stopwords_intree: removes stop words, widening phrase distances
/// over them. Returns the node and the distance to add on its left/right.
fn clean_stopwords(n: QNode) -> (Option<QNode>, u16, u16) {
    match n {
        QNode::Val { .. } => (Some(n), 0, 0),
        QNode::Stop => (None, 0, 0),
        QNode::Not(c) => {
            let (c, l, r) = clean_stopwords(*c);
            (c.map(|c| QNode::Not(Box::new(c))), l, r)
        }
        QNode::Bin { op, left, right } => {
            let (l, lladd, lradd) = clean_stopwords(*left);
            let (r, rladd, rradd) = clean_stopwords(*right);
            let (isphrase, nd) = match op {
                Op::Phrase(d) => (true, d),
                _ => (false, 0),
            };
            match (l, r) {
                (None, None) => {
                    let a = if isphrase { lladd + nd + rradd } else { 0 };
                    (None, a, a)
                }
                (None, Some(r)) => (Some(r), if isphrase { lladd + nd + rladd } else { 0 }, rradd),
                (Some(l), None) => (Some(l), lladd, if isphrase { lradd + nd + rradd } else { 0 }),
                (Some(l), Some(r)) => {
                    let op = if isphrase { Op::Phrase(nd + lradd + rladd) } else { op };
                    (Some(QNode::Bin { op, left: Box::new(l), right: Box::new(r) }), lladd, rradd)
                }
            }
        }
    }
}

fn finish_query(q: Option<QNode>, env: &dyn super::Env) -> Option<QNode> {
    let had = q.is_some();
    let q = q.and_then(|n| clean_stopwords(n).0);
    if had && q.is_none() {
        env.notice(PgError::notice("text-search query contains only stop words or doesn't contain lexemes, ignored"));
    }
    q
}

pub fn to_tsquery_cfg(cfg: Config, text: &str, env: &dyn super::Env) -> PgResult<Option<QNode>> {
    let q = build_query(text, |word, weight, prefix| Ok(morph_operand(cfg, &word, weight, prefix)))?;
    Ok(finish_query(q, env))
}

/// plainto_tsquery (`op` AND) and phraseto_tsquery (phrase).
fn plain_query(cfg: Config, text: &str, phrase: bool, env: &dyn super::Env) -> Option<QNode> {
    let lexes = text_lexemes(cfg, text);
    let mut node: Option<QNode> = None;
    let mut prev: Option<u16> = None;
    for (w, p) in lexes {
        let item = match w {
            Some(word) => QNode::Val { word, weight: 0, prefix: false },
            None => QNode::Stop,
        };
        node = Some(match (node, prev) {
            (Some(n), Some(pp)) => {
                let op = if phrase { Op::Phrase((p - pp).max(1)) } else { Op::And };
                QNode::Bin { op, left: Box::new(n), right: Box::new(item) }
            }
            _ => item,
        });
        prev = Some(p);
    }
    if node.is_none() {
        env.notice(PgError::notice("text-search query doesn't contain lexemes: \"\""));
        return None;
    }
    finish_query(node, env)
}

pub(super) fn default_config(c: &FnCtx) -> PgResult<Config> {
    let name = c.env.settings().show("default_text_search_config").unwrap_or_else(|_| "pg_catalog.simple".into());
    Config::from_oid(regconfig_in(&name)?)
}

pub(super) fn cfg_arg(a: &[Datum], c: &FnCtx) -> PgResult<Config> {
    match &a[0] {
        Datum::Oid(o) => Config::from_oid(*o),
        _ => default_config(c),
    }
}

// ---------------------------------------------------------------- ranking

/// Default weights of D, C, B, A (tsrank.c's weights[]).
const DEFAULT_WEIGHTS: [f32; 4] = [0.1, 0.2, 0.4, 1.0];

const NORM_LOGLENGTH: i32 = 0x01;
const NORM_LENGTH: i32 = 0x02;
const NORM_EXTDIST: i32 = 0x04;
const NORM_UNIQ: i32 = 0x08;
const NORM_LOGUNIQ: i32 = 0x10;
const NORM_RDIVRPLUS1: i32 = 0x20;

/// getWeights: a float4[] of four weights (negative: the default).
fn rank_weights(d: Option<&Datum>) -> PgResult<[f32; 4]> {
    let Some(d) = d else { return Ok(DEFAULT_WEIGHTS) };
    let Datum::Array(arr) = d else { return Ok(DEFAULT_WEIGHTS) };
    if arr.dims.len() > 1 {
        return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "array of weight must be one-dimensional"));
    }
    if arr.elements.len() < 4 {
        return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, "array of weight is too short"));
    }
    if arr.has_nulls() {
        return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "array of weight must not contain nulls"));
    }
    let mut w = DEFAULT_WEIGHTS;
    for (i, e) in arr.elements.iter().take(4).enumerate() {
        let v = e.as_f64().unwrap_or(0.0) as f32;
        if v >= 0.0 {
            if v > 1.0 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "weight out of range"));
            }
            w[i] = v;
        }
    }
    Ok(w)
}

/// The distinct operands of a query, sorted by bytes (SortAndUniqItems).
fn sorted_operands(n: &QNode) -> Vec<(&str, bool)> {
    fn walk<'a>(n: &'a QNode, out: &mut Vec<(&'a str, bool)>) {
        match n {
            QNode::Val { word, prefix, .. } => out.push((word, *prefix)),
            QNode::Stop => {}
            QNode::Not(c) => walk(c, out),
            QNode::Bin { left, right, .. } => {
                walk(left, out);
                walk(right, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(n, &mut out);
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

fn word_distance(w: i32) -> f32 {
    if w > 100 {
        return 1e-30;
    }
    (1.0 / (1.005 + 0.05 * (((w as f32) / 1.5 - 2.0) as f64).exp())) as f32
}

fn cnt_length(v: &[Lexeme]) -> i32 {
    v.iter().map(|l| if l.pos.is_empty() { 1 } else { l.pos.len() as i32 }).sum()
}

fn calc_rank_or(w: &[f32; 4], v: &[Lexeme], q: &QNode) -> f32 {
    let items = sorted_operands(q);
    let mut res: f32 = 0.0;
    for (word, prefix) in &items {
        for l in matching_lexemes(v, word, *prefix) {
            let post: Vec<u16> = if l.pos.is_empty() { vec![0] } else { l.pos.clone() };
            let mut resj: f32 = 0.0;
            let mut wjm: f32 = -1.0;
            let mut jm: i32 = 0;
            for (j, &p) in post.iter().enumerate() {
                let wp = w[wep_weight(p) as usize];
                let jj = (j as i32 + 1) * (j as i32 + 1);
                resj += wp / jj as f32;
                if wp > wjm {
                    wjm = wp;
                    jm = j as i32;
                }
            }
            let jmm = ((jm + 1) * (jm + 1)) as f32;
            res = (res as f64 + ((wjm + resj - wjm / jmm) as f64) / 1.64493406685) as f32;
        }
    }
    if !items.is_empty() {
        res /= items.len() as f32;
    }
    res
}

fn calc_rank_and(w: &[f32; 4], v: &[Lexeme], q: &QNode) -> f32 {
    let items = sorted_operands(q);
    if items.len() < 2 {
        return calc_rank_or(w, v, q);
    }
    // A lexeme without positions counts as one at the last position.
    let posnull = vec![make_wep(MAX_POS, 0)];
    let mut pos: Vec<Option<(Vec<u16>, bool)>> = vec![None; items.len()];
    let mut res: f32 = -1.0;
    for (i, (word, prefix)) in items.iter().enumerate() {
        for l in matching_lexemes(v, word, *prefix) {
            let cur = if l.pos.is_empty() { (posnull.clone(), true) } else { (l.pos.clone(), false) };
            for k in 0..i {
                let Some((ct, knull)) = &pos[k] else { continue };
                for &pl in &cur.0 {
                    for &pc in ct {
                        let mut dist = (wep_pos(pl) as i32 - wep_pos(pc) as i32).abs();
                        if dist != 0 || cur.1 || *knull {
                            if dist == 0 {
                                dist = MAX_DISTANCE as i32;
                            }
                            let curw = ((w[wep_weight(pl) as usize] * w[wep_weight(pc) as usize] * word_distance(dist)) as f64).sqrt() as f32;
                            res = if res < 0.0 { curw } else { (1.0 - (1.0 - res as f64) * (1.0 - curw as f64)) as f32 };
                        }
                    }
                }
            }
            pos[i] = Some(cur);
        }
    }
    res
}

fn normalize_rank(mut res: f64, v: &[Lexeme], method: i32) -> f64 {
    if method & NORM_LOGLENGTH != 0 && !v.is_empty() {
        res /= ((cnt_length(v) + 1) as f64).ln() / 2f64.ln();
    }
    if method & NORM_LENGTH != 0 {
        let len = cnt_length(v);
        if len > 0 {
            res /= len as f64;
        }
    }
    if method & NORM_UNIQ != 0 && !v.is_empty() {
        res /= v.len() as f64;
    }
    if method & NORM_LOGUNIQ != 0 && !v.is_empty() {
        res /= ((v.len() + 1) as f64).ln() / 2f64.ln();
    }
    if method & NORM_RDIVRPLUS1 != 0 {
        res /= res + 1.0;
    }
    res
}

fn calc_rank(w: &[f32; 4], v: &[Lexeme], q: &Option<QNode>, method: i32) -> f32 {
    let Some(q) = q else { return 0.0 };
    if v.is_empty() {
        return 0.0;
    }
    let mut res = match q {
        QNode::Bin { op: Op::And | Op::Phrase(_), .. } => calc_rank_and(w, v, q),
        _ => calc_rank_or(w, v, q),
    };
    if res < 0.0 {
        res = 1e-20;
    }
    // Each step stores into a float4, as tsrank.c's `res /= ...` does.
    let mut r = res;
    for bit in [NORM_LOGLENGTH, NORM_LENGTH, NORM_UNIQ, NORM_LOGUNIQ, NORM_RDIVRPLUS1] {
        if method & bit != 0 {
            r = normalize_rank(r as f64, v, bit) as f32;
        }
    }
    r
}

/// One position of the document that some operands match (DocRepresentation).
struct DocPos {
    pos: u16,
    /// Index of the tsvector entry, to keep entries apart at one position.
    entry: usize,
    /// The query operands (node addresses) found here.
    items: Vec<usize>,
}

fn collect_vals<'a>(n: &'a QNode, out: &mut Vec<&'a QNode>) {
    match n {
        QNode::Val { .. } => out.push(n),
        QNode::Stop => {}
        QNode::Not(c) => collect_vals(c, out),
        QNode::Bin { left, right, .. } => {
            collect_vals(left, out);
            collect_vals(right, out);
        }
    }
}

fn get_docrep(v: &[Lexeme], q: &QNode) -> Vec<DocPos> {
    let mut vals = Vec::new();
    collect_vals(q, &mut vals);
    let mut raw: Vec<(u16, usize, usize)> = Vec::new();
    for n in vals {
        let QNode::Val { word, weight, prefix } = n else { continue };
        for l in matching_lexemes(v, word, *prefix) {
            let entry = v.iter().position(|x| std::ptr::eq(x, l)).unwrap_or(0);
            for &p in &l.pos {
                if *weight == 0 || weight & (1 << wep_weight(p)) != 0 {
                    raw.push((p, entry, n as *const QNode as usize));
                }
            }
        }
    }
    // compareDocR: by position, then weight, then entry.
    raw.sort_by(|a, b| wep_pos(a.0).cmp(&wep_pos(b.0)).then(wep_weight(a.0).cmp(&wep_weight(b.0))).then(a.1.cmp(&b.1)));
    let mut doc: Vec<DocPos> = Vec::new();
    for (p, entry, item) in raw {
        match doc.last_mut() {
            Some(d) if d.pos == p && d.entry == entry => d.items.push(item),
            _ => doc.push(DocPos { pos: p, entry, items: vec![item] }),
        }
    }
    doc
}

/// Positions seen so far per operand while Cover scans the document.
fn cover_exec(q: &QNode, seen: &std::collections::HashMap<usize, Vec<u16>>) -> bool {
    let check = |n: &QNode, data: Option<&mut PhraseData>| -> Tern {
        match seen.get(&(n as *const QNode as usize)) {
            None => Tern::No,
            Some(ps) => {
                if let Some(d) = data {
                    d.pos = ps.clone();
                }
                Tern::Yes
            }
        }
    };
    matches!(exec(q, &check), Ok(Tern::Yes | Tern::Maybe))
}

fn fill(seen: &mut std::collections::HashMap<usize, Vec<u16>>, d: &DocPos) {
    for &it in &d.items {
        let ps = seen.entry(it).or_default();
        let p = wep_pos(d.pos);
        if let Err(at) = ps.binary_search(&p) {
            ps.insert(at, p);
        }
    }
}

struct CoverExt {
    pos: usize,
    p: i32,
    q: i32,
    begin: usize,
    end: usize,
}

/// Cover: the next minimal stretch of the document that satisfies the query.
fn cover(doc: &[DocPos], q: &QNode, ext: &mut CoverExt) -> bool {
    loop {
        let mut seen = std::collections::HashMap::new();
        ext.p = i32::MAX;
        ext.q = 0;
        let mut found = false;
        let mut lastpos = ext.pos;
        let mut i = ext.pos;
        while i < doc.len() {
            fill(&mut seen, &doc[i]);
            if cover_exec(q, &seen) {
                if wep_pos(doc[i].pos) as i32 > ext.q {
                    ext.q = wep_pos(doc[i].pos) as i32;
                    ext.end = i;
                    lastpos = i;
                    found = true;
                }
                break;
            }
            i += 1;
        }
        if !found {
            return false;
        }
        seen.clear();
        let mut j = lastpos as isize;
        while j >= ext.pos as isize {
            fill(&mut seen, &doc[j as usize]);
            if cover_exec(q, &seen) {
                if (wep_pos(doc[j as usize].pos) as i32) < ext.p {
                    ext.begin = j as usize;
                    ext.p = wep_pos(doc[j as usize].pos) as i32;
                }
                break;
            }
            j -= 1;
        }
        if ext.p <= ext.q {
            ext.pos = (j + 1) as usize;
            return true;
        }
        ext.pos += 1;
    }
}

fn calc_rank_cd(w: &[f32; 4], v: &[Lexeme], q: &Option<QNode>, method: i32) -> f32 {
    let Some(q) = q else { return 0.0 };
    let invws: Vec<f64> = w.iter().map(|&x| 1.0 / x as f64).collect();
    let doc = get_docrep(v, q);
    if doc.is_empty() {
        return 0.0;
    }
    let mut ext = CoverExt { pos: 0, p: 0, q: 0, begin: 0, end: 0 };
    let (mut wdoc, mut sum_dist, mut prev_ext_pos) = (0.0f64, 0.0f64, 0.0f64);
    let mut nextent = 0;
    while cover(&doc, q, &mut ext) {
        let inv_sum: f64 = doc[ext.begin..=ext.end].iter().map(|d| invws[wep_weight(d.pos) as usize]).sum();
        let cpos = ((ext.end - ext.begin + 1) as f64) / inv_sum;
        let mut nnoise = (ext.q - ext.p) - (ext.end as i32 - ext.begin as i32);
        if nnoise < 0 {
            nnoise = (ext.end as i32 - ext.begin as i32) / 2;
        }
        wdoc += cpos / (1 + nnoise) as f64;
        let cur_ext_pos = (ext.q + ext.p) as f64 / 2.0;
        if nextent > 0 && cur_ext_pos > prev_ext_pos {
            sum_dist += 1.0 / (cur_ext_pos - prev_ext_pos);
        }
        prev_ext_pos = cur_ext_pos;
        nextent += 1;
    }
    if method & NORM_LOGLENGTH != 0 && !v.is_empty() {
        wdoc /= ((cnt_length(v) + 1) as f64).ln();
    }
    if method & NORM_LENGTH != 0 {
        let len = cnt_length(v);
        if len > 0 {
            wdoc /= len as f64;
        }
    }
    if method & NORM_EXTDIST != 0 && nextent > 0 && sum_dist > 0.0 {
        wdoc /= nextent as f64 / sum_dist;
    }
    if method & NORM_UNIQ != 0 && !v.is_empty() {
        wdoc /= v.len() as f64;
    }
    if method & NORM_LOGUNIQ != 0 && !v.is_empty() {
        wdoc /= ((v.len() + 1) as f64).ln() / 2f64.ln();
    }
    if method & NORM_RDIVRPLUS1 != 0 {
        wdoc /= wdoc + 1.0;
    }
    wdoc as f32
}

/// The arguments of ts_rank/ts_rank_cd: ([weights,] vector, query [, method]).
fn rank_args(a: &[Datum], c: &FnCtx) -> PgResult<([f32; 4], Vec<Lexeme>, Option<QNode>, i32)> {
    let with_weights = c.arg_type(0) != TSVECTOR;
    let base = if with_weights { 1 } else { 0 };
    let w = rank_weights(if with_weights { Some(&a[0]) } else { None })?;
    let v = arg_tsvector(a, base)?;
    let q = arg_tsquery(a, base + 1)?;
    let method = if a.len() > base + 2 { super::arg_i64(a, base + 2) as i32 } else { 0 };
    Ok((w, v, q, method))
}

fn ts_rank(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (w, v, q, method) = rank_args(a, c)?;
    Ok(Datum::Float4(calc_rank(&w, &v, &q, method)))
}

fn ts_rank_cd(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (w, v, q, method) = rank_args(a, c)?;
    Ok(Datum::Float4(calc_rank_cd(&w, &v, &q, method)))
}

/// gettoken_query_websearch: words, "quoted phrases", `-` for NOT and
/// `or` for OR; every other operator character is ignored, and operands
/// next to each other are ANDed. Operands are None for empty words.
fn websearch_tokens(s: &str) -> Vec<QTok> {
    let chars: Vec<char> = s.chars().collect();
    let is_op = |c: char| matches!(c, '!' | '&' | '|' | '(' | ')' | '<');
    let mut toks = Vec::new();
    let mut at = 0usize;
    let mut want_operand = true;
    // parse_or_operator: "or" not followed by a word character, with
    // some operand after it.
    let or_at = |at: usize| -> bool {
        let (Some(a), Some(b)) = (chars.get(at), chars.get(at + 1)) else { return false };
        if !(a.eq_ignore_ascii_case(&'o') && b.eq_ignore_ascii_case(&'r')) {
            return false;
        }
        match chars.get(at + 2) {
            None => return false,
            Some(&c) if c == '-' || c == '_' || c.is_alphanumeric() => return false,
            _ => {}
        }
        chars[at + 3..].iter().any(|c| !c.is_whitespace())
    };
    while at <= chars.len() {
        let c = chars.get(at).copied();
        if want_operand {
            match c {
                Some('-') => {
                    toks.push(QTok::Not);
                    at += 1;
                }
                Some('"') => {
                    at += 1;
                    let start = at;
                    while at < chars.len() && chars[at] != '"' {
                        at += 1;
                    }
                    toks.push(QTok::Val(chars[start..at].iter().collect(), 0, false));
                    if at < chars.len() {
                        at += 1;
                    }
                    want_operand = false;
                }
                Some(c) if is_op(c) || c.is_whitespace() => at += 1,
                None => break,
                Some(_) => {
                    // The tsvector parser reads the word: quotes, escapes,
                    // and it ends at blanks, operators, '"' and ':'.
                    let mut word = String::new();
                    if chars[at] == '\'' {
                        at += 1;
                        while at < chars.len() {
                            match chars[at] {
                                '\\' => {
                                    at += 1;
                                    if let Some(&c) = chars.get(at) {
                                        word.push(c);
                                    }
                                }
                                '\'' if chars.get(at + 1) == Some(&'\'') => {
                                    word.push('\'');
                                    at += 1;
                                }
                                '\'' => {
                                    at += 1;
                                    break;
                                }
                                c => word.push(c),
                            }
                            at += 1;
                        }
                    } else {
                        while at < chars.len() {
                            let c = chars[at];
                            if c.is_whitespace() || is_op(c) || c == '"' || (c == ':' && !word.is_empty()) {
                                break;
                            }
                            if c == '\\' {
                                at += 1;
                                if let Some(&c) = chars.get(at) {
                                    word.push(c);
                                }
                            } else {
                                word.push(c);
                            }
                            at += 1;
                        }
                    }
                    toks.push(QTok::Val(word, 0, false));
                    want_operand = false;
                }
            }
        } else {
            match c {
                None => break,
                Some('"') => {
                    toks.push(QTok::Bin(Op::And));
                    want_operand = true;
                }
                Some(_) if or_at(at) => {
                    toks.push(QTok::Bin(Op::Or));
                    at += 2;
                    want_operand = true;
                }
                Some(c) if c.is_whitespace() => at += 1,
                Some(_) => {
                    toks.push(QTok::Bin(Op::And));
                    want_operand = true;
                }
            }
        }
    }
    toks
}

fn websearch_query(cfg: Config, text: &str, env: &dyn super::Env) -> PgResult<Option<QNode>> {
    let toks = websearch_tokens(text);
    if toks.is_empty() {
        env.notice(PgError::notice("text-search query doesn't contain lexemes: \"\""));
        return Ok(None);
    }
    let mut b = QueryBuilder { toks: &toks, at: 0, operand: |word: String, weight, prefix| Ok(morph_operand(cfg, &word, weight, prefix)) };
    let q = b.expr(0)?;
    Ok(finish_query(Some(q), env))
}

fn websearch_to_tsquery_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, text) = if a.len() > 1 { (cfg_arg(a, c)?, super::arg_str(a, 1)) } else { (default_config(c)?, super::arg_str(a, 0)) };
    Ok(tsquery_datum(&websearch_query(cfg, text, c.env)?))
}

/// ts_lexize: what one dictionary makes of a token (NULL: not recognised).
fn ts_lexize(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let dict = match &a[0] {
        Datum::Oid(o) => *o,
        _ => 0,
    };
    let token = super::arg_str(a, 1);
    let lower = token.to_lowercase();
    let lexemes: Vec<String> = match dict {
        3765 => vec![lower],
        13163 => {
            if english_stop_words().contains(lower.as_str()) {
                vec![]
            } else {
                vec![english_stemmer().stem(&lower).into_owned()]
            }
        }
        _ => return Err(PgError::new(sqlstate::INTERNAL_ERROR, format!("cache lookup failed for text search dictionary {dict}"))),
    };
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::TEXT, lexemes.into_iter().map(Datum::from_string).collect()))))
}

/// The default parser's token types (prsd_lextype).
const TOKEN_TYPES: &[(&str, &str)] = &[
    ("asciiword", "Word, all ASCII"),
    ("word", "Word, all letters"),
    ("numword", "Word, letters and digits"),
    ("email", "Email address"),
    ("url", "URL"),
    ("host", "Host"),
    ("sfloat", "Scientific notation"),
    ("version", "Version number"),
    ("hword_numpart", "Hyphenated word part, letters and digits"),
    ("hword_part", "Hyphenated word part, all letters"),
    ("hword_asciipart", "Hyphenated word part, all ASCII"),
    ("blank", "Space symbols"),
    ("tag", "XML tag"),
    ("protocol", "Protocol head"),
    ("numhword", "Hyphenated word, letters and digits"),
    ("asciihword", "Hyphenated word, all ASCII"),
    ("hword", "Hyphenated word, all letters"),
    ("url_path", "URL path"),
    ("file", "File or path name"),
    ("float", "Decimal notation"),
    ("int", "Signed integer"),
    ("uint", "Unsigned integer"),
    ("entity", "XML entity"),
];

const DEFAULT_PARSER: Oid = 3722;

fn ts_token_type(a: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let ok = if c.arg_type(0) == oid::TEXT {
        let name = super::arg_str(a, 0);
        let parts = super::parse_qualified_name(name)?;
        match parts.as_slice() {
            [n] | [_, n] if n == "default" => true,
            _ => return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("text search parser \"{name}\" does not exist"))),
        }
    } else {
        a[0].as_i64() == Some(DEFAULT_PARSER as i64)
    };
    if !ok {
        return Err(PgError::new(sqlstate::INTERNAL_ERROR, format!("cache lookup failed for text search parser {}", a[0].as_i64().unwrap_or(0))));
    }
    let rows: Vec<PgResult<Datum>> = TOKEN_TYPES
        .iter()
        .enumerate()
        .map(|(i, (alias, descr))| Ok(Datum::Record(Arc::new(vec![Datum::Int4(i as i32 + 1), Datum::text(alias), Datum::text(descr)]))))
        .collect();
    Ok(Box::new(rows.into_iter()))
}

/// The distinct operand words of a query.
fn operand_words(q: &Option<QNode>) -> HashSet<String> {
    let mut vals = Vec::new();
    if let Some(n) = q {
        collect_vals(n, &mut vals);
    }
    vals.into_iter()
        .filter_map(|n| match n {
            QNode::Val { word, .. } => Some(word.clone()),
            _ => None,
        })
        .collect()
}

/// tsq_mcontains: every operand of the second query is one of the first's.
fn tsq_mcontains(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (operand_words(&arg_tsquery(a, 0)?), operand_words(&arg_tsquery(a, 1)?));
    Ok(Datum::Bool(y.iter().all(|w| x.contains(w))))
}

fn tsq_mcontained(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (operand_words(&arg_tsquery(a, 0)?), operand_words(&arg_tsquery(a, 1)?));
    Ok(Datum::Bool(x.iter().all(|w| y.contains(w))))
}

// ---------------------------------------------------------------- SQL functions

fn tsvector_in(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(tsvector_datum(&parse_tsvector(super::arg_str(a, 0))?))
}

fn tsquery_in(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(tsquery_datum(&parse_tsquery(super::arg_str(a, 0))?))
}

fn as_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}

fn tsvector_compare(a: &[Datum]) -> PgResult<Ordering> {
    Ok(tsvector_cmp_values(&arg_tsvector(a, 0)?, &arg_tsvector(a, 1)?))
}

fn tsquery_compare(a: &[Datum]) -> PgResult<Ordering> {
    Ok(tsquery_cmp_values(&arg_tsquery(a, 0)?, &arg_tsquery(a, 1)?))
}

macro_rules! cmp_fns {
    ($cmp:ident, $lt:ident, $le:ident, $eq:ident, $ne:ident, $ge:ident, $gt:ident, $c:ident) => {
        fn $lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? == Ordering::Less))
        }
        fn $le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? != Ordering::Greater))
        }
        fn $eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? == Ordering::Equal))
        }
        fn $ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? != Ordering::Equal))
        }
        fn $ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? != Ordering::Less))
        }
        fn $gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Bool($cmp(a)? == Ordering::Greater))
        }
        fn $c(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
            Ok(Datum::Int4(match $cmp(a)? {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        }
    };
}

cmp_fns!(tsvector_compare, tsv_lt, tsv_le, tsv_eq, tsv_ne, tsv_ge, tsv_gt, tsv_cmp);
cmp_fns!(tsquery_compare, tsq_lt, tsq_le, tsq_eq, tsq_ne, tsq_ge, tsq_gt, tsq_cmp);

fn match_vq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(ts_match(&arg_tsvector(a, 0)?, &arg_tsquery(a, 1)?)?))
}

fn match_qv(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(ts_match(&arg_tsvector(a, 1)?, &arg_tsquery(a, 0)?)?))
}

fn match_tq(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let v = to_tsvector_cfg(default_config(c)?, super::arg_str(a, 0));
    Ok(Datum::Bool(ts_match(&v, &arg_tsquery(a, 1)?)?))
}

fn match_tt(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let cfg = default_config(c)?;
    let v = to_tsvector_cfg(cfg, super::arg_str(a, 0));
    let q = plain_query(cfg, super::arg_str(a, 1), false, c.env);
    Ok(Datum::Bool(ts_match(&v, &q)?))
}

fn tsvector_concat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let l = arg_tsvector(a, 0)?;
    let r = arg_tsvector(a, 1)?;
    // The right operand's positions move past the left's largest one.
    let maxpos = l.iter().flat_map(|x| x.pos.iter().map(|&p| wep_pos(p))).max().unwrap_or(0);
    let mut out = l.clone();
    for x in r {
        let pos: Vec<u16> = x.pos.iter().map(|&p| make_wep((wep_pos(p) as u32 + maxpos as u32).min(MAX_POS as u32) as u16, wep_weight(p))).collect();
        match out.iter_mut().find(|y| y.word == x.word) {
            // A lexeme in both: with positions on the right, the right's
            // (shifted) positions join the left's; else the left's stay.
            Some(y) => {
                if !pos.is_empty() {
                    y.pos.extend(pos);
                }
            }
            None => out.push(Lexeme { word: x.word, pos }),
        }
    }
    Ok(tsvector_datum(&normalize(out)))
}

fn tsvector_strip(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v: Vec<Lexeme> = arg_tsvector(a, 0)?.into_iter().map(|l| Lexeme { word: l.word, pos: vec![] }).collect();
    Ok(tsvector_datum(&v))
}

fn tsvector_length(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(arg_tsvector(a, 0)?.len() as i32))
}

fn weight_of_char(c: &Datum) -> PgResult<u8> {
    let ch = match c {
        Datum::Char(b) => *b as char,
        Datum::Text(s) => s.chars().next().unwrap_or('\0'),
        _ => '\0',
    };
    match ch {
        'A' | 'a' => Ok(3),
        'B' | 'b' => Ok(2),
        'C' | 'c' => Ok(1),
        'D' | 'd' => Ok(0),
        other => Err(PgError::new(sqlstate::INTERNAL_ERROR, format!("unrecognized weight: {}", other as u32))),
    }
}

/// The non-null text elements of an array argument; `what` names the
/// function in the error for NULL elements (None: NULLs are skipped).
fn text_elements(d: &Datum, null_error: Option<&str>) -> PgResult<Vec<String>> {
    let Datum::Array(arr) = d else { return Ok(vec![]) };
    let mut out = Vec::new();
    for e in &arr.elements {
        match e {
            Datum::Null => {
                if let Some(msg) = null_error {
                    return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, msg.to_string()));
                }
            }
            other => out.push(other.as_str().unwrap_or("").to_string()),
        }
    }
    Ok(out)
}

fn tsvector_setweight(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let w = weight_of_char(&a[1])?;
    let only: Option<HashSet<String>> = if a.len() > 2 { Some(text_elements(&a[2], None)?.into_iter().collect()) } else { None };
    let v: Vec<Lexeme> = arg_tsvector(a, 0)?
        .into_iter()
        .map(|mut l| {
            if only.as_ref().map_or(true, |s| s.contains(&l.word)) {
                for p in &mut l.pos {
                    *p = make_wep(wep_pos(*p), w);
                }
            }
            l
        })
        .collect();
    Ok(tsvector_datum(&v))
}

fn tsvector_delete_str(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let word = super::arg_str(a, 1);
    let v: Vec<Lexeme> = arg_tsvector(a, 0)?.into_iter().filter(|l| l.word != word).collect();
    Ok(tsvector_datum(&v))
}

fn tsvector_delete_arr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let drop: HashSet<String> = text_elements(&a[1], None)?.into_iter().collect();
    let v: Vec<Lexeme> = arg_tsvector(a, 0)?.into_iter().filter(|l| !drop.contains(&l.word)).collect();
    Ok(tsvector_datum(&v))
}

fn weight_letter(w: u8) -> &'static str {
    ["D", "C", "B", "A"][w as usize & 3]
}

fn tsvector_unnest(a: &[Datum], _: &FnCtx) -> PgResult<SetIter> {
    let v = arg_tsvector(a, 0)?;
    let rows: Vec<PgResult<Datum>> = v
        .into_iter()
        .map(|l| {
            let (pos, weights) = if l.pos.is_empty() {
                (Datum::Null, Datum::Null)
            } else {
                (
                    Datum::Array(Arc::new(Array::from_vec(oid::INT2, l.pos.iter().map(|&p| Datum::Int2(wep_pos(p) as i16)).collect()))),
                    Datum::Array(Arc::new(Array::from_vec(oid::TEXT, l.pos.iter().map(|&p| Datum::text(weight_letter(wep_weight(p)))).collect()))),
                )
            };
            Ok(Datum::Record(Arc::new(vec![Datum::from_string(l.word), pos, weights])))
        })
        .collect();
    Ok(Box::new(rows.into_iter()))
}

fn tsvector_to_array(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = arg_tsvector(a, 0)?;
    Ok(Datum::Array(Arc::new(Array::from_vec(oid::TEXT, v.into_iter().map(|l| Datum::from_string(l.word)).collect()))))
}

fn array_to_tsvector(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let words = text_elements(&a[0], Some("lexeme array may not contain nulls"))?;
    if words.iter().any(|w| w.is_empty()) {
        return Err(PgError::new(sqlstate::ZERO_LENGTH_CHARACTER_STRING, "lexeme array may not contain empty strings"));
    }
    let v = normalize(words.into_iter().map(|word| Lexeme { word, pos: vec![] }).collect());
    Ok(tsvector_datum(&v))
}

fn tsvector_filter(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let Datum::Array(arr) = &a[1] else { return Ok(a[0].clone()) };
    let mut mask = 0u8;
    for e in &arr.elements {
        match e {
            Datum::Null => return Err(PgError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "weight array may not contain nulls")),
            Datum::Char(c) => {
                mask |= 1 << match *c as char {
                    'A' | 'a' => 3,
                    'B' | 'b' => 2,
                    'C' | 'c' => 1,
                    'D' | 'd' => 0,
                    other => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized weight: \"{other}\""))),
                }
            }
            _ => {}
        }
    }
    let v: Vec<Lexeme> = arg_tsvector(a, 0)?
        .into_iter()
        .filter_map(|mut l| {
            l.pos.retain(|&p| mask & (1 << wep_weight(p)) != 0);
            if l.pos.is_empty() {
                None
            } else {
                Some(l)
            }
        })
        .collect();
    Ok(tsvector_datum(&v))
}

fn tsquery_numnode(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(arg_tsquery(a, 0)?.as_ref().map(count_nodes).unwrap_or(0) as i32))
}

/// clean_NOT: the query without its negated parts, for querytree.
fn clean_not(n: QNode) -> Option<QNode> {
    match n {
        QNode::Val { .. } => Some(n),
        QNode::Stop | QNode::Not(_) => None,
        QNode::Bin { op: Op::Or, left, right } => {
            let l = clean_not(*left)?;
            let r = clean_not(*right)?;
            Some(QNode::Bin { op: Op::Or, left: Box::new(l), right: Box::new(r) })
        }
        QNode::Bin { op, left, right } => match (clean_not(*left), clean_not(*right)) {
            (None, None) => None,
            (Some(l), None) => Some(l),
            (None, Some(r)) => Some(r),
            (Some(l), Some(r)) => Some(QNode::Bin { op, left: Box::new(l), right: Box::new(r) }),
        },
    }
}

fn tsquery_tree(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let q = arg_tsquery(a, 0)?;
    let Some(n) = q else { return Ok(Datum::text("")) };
    match clean_not(n) {
        None => Ok(Datum::text("T")),
        Some(n) => Ok(Datum::from_string(format_tsquery(&Some(n)))),
    }
}

fn combine(a: &[Datum], op: Op) -> PgResult<Datum> {
    let l = arg_tsquery(a, 0)?;
    let r = arg_tsquery(a, 1)?;
    Ok(tsquery_datum(&match (l, r) {
        (None, r) => r,
        (l, None) => l,
        (Some(l), Some(r)) => Some(QNode::Bin { op, left: Box::new(l), right: Box::new(r) }),
    }))
}

fn tsquery_and(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    combine(a, Op::And)
}

fn tsquery_or(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    combine(a, Op::Or)
}

fn tsquery_phrase(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let d = if a.len() > 2 { super::arg_i64(a, 2) } else { 1 };
    if !(0..=MAX_DISTANCE).contains(&d) {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("distance in phrase operator must be an integer value between zero and {MAX_DISTANCE} inclusive")));
    }
    combine(a, Op::Phrase(d as u16))
}

fn tsquery_not(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let q = arg_tsquery(a, 0)?;
    Ok(tsquery_datum(&q.map(|n| QNode::Not(Box::new(n)))))
}

fn to_tsvector_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, text) = if a.len() > 1 { (cfg_arg(a, c)?, super::arg_str(a, 1)) } else { (default_config(c)?, super::arg_str(a, 0)) };
    Ok(tsvector_datum(&to_tsvector_cfg(cfg, text)))
}

fn to_tsquery_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, text) = if a.len() > 1 { (cfg_arg(a, c)?, super::arg_str(a, 1)) } else { (default_config(c)?, super::arg_str(a, 0)) };
    Ok(tsquery_datum(&to_tsquery_cfg(cfg, text, c.env)?))
}

fn plainto_tsquery_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, text) = if a.len() > 1 { (cfg_arg(a, c)?, super::arg_str(a, 1)) } else { (default_config(c)?, super::arg_str(a, 0)) };
    Ok(tsquery_datum(&plain_query(cfg, text, false, c.env)))
}

fn phraseto_tsquery_fn(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, text) = if a.len() > 1 { (cfg_arg(a, c)?, super::arg_str(a, 1)) } else { (default_config(c)?, super::arg_str(a, 0)) };
    Ok(tsquery_datum(&plain_query(cfg, text, true, c.env)))
}

fn get_current_ts_config(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let name = c.env.settings().show("default_text_search_config").unwrap_or_default();
    Ok(Datum::Oid(regconfig_in(&name)?))
}

fn regconfig_in_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Oid(regconfig_in(super::arg_str(a, 0))?))
}

fn regdictionary_in_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Oid(regdictionary_in(super::arg_str(a, 0))?))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["tsvectorin"], tsvector_in);
    plain(r, &["tsqueryin"], tsquery_in);
    plain(r, &["tsvectorout", "tsqueryout"], as_text);
    plain(r, &["regconfigin"], regconfig_in_fn);
    plain(r, &["regdictionaryin"], regdictionary_in_fn);
    plain(r, &["tsvector_lt"], tsv_lt);
    plain(r, &["tsvector_le"], tsv_le);
    plain(r, &["tsvector_eq"], tsv_eq);
    plain(r, &["tsvector_ne"], tsv_ne);
    plain(r, &["tsvector_ge"], tsv_ge);
    plain(r, &["tsvector_gt"], tsv_gt);
    plain(r, &["tsvector_cmp"], tsv_cmp);
    plain(r, &["tsquery_lt"], tsq_lt);
    plain(r, &["tsquery_le"], tsq_le);
    plain(r, &["tsquery_eq"], tsq_eq);
    plain(r, &["tsquery_ne"], tsq_ne);
    plain(r, &["tsquery_ge"], tsq_ge);
    plain(r, &["tsquery_gt"], tsq_gt);
    plain(r, &["tsquery_cmp"], tsq_cmp);
    plain(r, &["ts_match_vq"], match_vq);
    plain(r, &["ts_match_qv"], match_qv);
    plain(r, &["ts_match_tq"], match_tq);
    plain(r, &["ts_match_tt"], match_tt);
    plain(r, &["tsvector_concat"], tsvector_concat);
    plain(r, &["tsvector_strip"], tsvector_strip);
    plain(r, &["tsvector_length"], tsvector_length);
    plain(r, &["tsvector_setweight", "tsvector_setweight_by_filter"], tsvector_setweight);
    plain(r, &["tsvector_delete_str"], tsvector_delete_str);
    plain(r, &["tsvector_delete_arr"], tsvector_delete_arr);
    set(r, &["tsvector_unnest"], tsvector_unnest);
    plain(r, &["tsvector_to_array"], tsvector_to_array);
    plain(r, &["array_to_tsvector"], array_to_tsvector);
    plain(r, &["tsvector_filter"], tsvector_filter);
    plain(r, &["tsquery_numnode"], tsquery_numnode);
    plain(r, &["tsquerytree"], tsquery_tree);
    plain(r, &["tsquery_and"], tsquery_and);
    plain(r, &["tsquery_or"], tsquery_or);
    plain(r, &["tsquery_not"], tsquery_not);
    plain(r, &["tsquery_phrase", "tsquery_phrase_distance"], tsquery_phrase);
    plain(r, &["to_tsvector", "to_tsvector_byid"], to_tsvector_fn);
    plain(r, &["to_tsquery", "to_tsquery_byid"], to_tsquery_fn);
    plain(r, &["plainto_tsquery", "plainto_tsquery_byid"], plainto_tsquery_fn);
    plain(r, &["phraseto_tsquery", "phraseto_tsquery_byid"], phraseto_tsquery_fn);
    plain(r, &["get_current_ts_config"], get_current_ts_config);
    plain(r, &["websearch_to_tsquery", "websearch_to_tsquery_byid"], websearch_to_tsquery_fn);
    plain(r, &["ts_lexize"], ts_lexize);
    set(r, &["ts_token_type_byid", "ts_token_type_byname"], ts_token_type);
    plain(r, &["tsq_mcontains"], tsq_mcontains);
    plain(r, &["tsq_mcontained"], tsq_mcontained);
    plain(r, &["ts_rank_wttf", "ts_rank_wtt", "ts_rank_ttf", "ts_rank_tt"], ts_rank);
    plain(r, &["ts_rankcd_wttf", "ts_rankcd_wtt", "ts_rankcd_ttf", "ts_rankcd_tt"], ts_rank_cd);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> String {
        format_tsvector(&parse_tsvector(s).unwrap())
    }
    fn q(s: &str) -> String {
        format_tsquery(&parse_tsquery(s).unwrap())
    }

    #[test]
    fn tsvector_text_forms() {
        assert_eq!(v("1 2 1"), "'1' '2'");
        assert_eq!(v("'w':4A,3B,2C,1D,5 a:8"), "'a':8 'w':1,2C,3B,4A,5");
        assert_eq!(v(r"ab\c"), "'abc'");
    }

    #[test]
    fn tsquery_text_forms() {
        assert_eq!(q("!(1|2)&3"), "!( '1' | '2' ) & '3'");
        assert_eq!(q("1 <-> (2 <-> 3)"), "'1' <-> ( '2' <-> '3' )");
        assert_eq!(q("a:* & nbb:*ac | doo:a* | goo"), "'a':* & 'nbb':*AC | 'doo':*A | 'goo'");
    }
}
