//! The `jsonpath` type: the SQL/JSON path language's scanner, parser and
//! printer, after PostgreSQL's utils/adt/jsonpath_scan.l, jsonpath_gram.y
//! and jsonpath.c.
//!
//! A jsonpath travels as `Datum::Text` holding its canonical output form
//! (as tsvector does): input parses and prints the path again, so the text
//! is the value, and the executor (`jsonpath_exec`) parses it back.
//!
//! The parser is hand-written recursive descent over the same grammar as
//! PostgreSQL's bison one. Where bison would stop, the error names the
//! token in hand ("syntax error at or near ... of jsonpath input"), which
//! is the token bison reports in nearly every case.

use tusk_types::json::escape_json_into;
use tusk_types::numeric::Numeric;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{plain, FnCtx, Registry};

pub const REGEX_ICASE: u32 = 0x01;
pub const REGEX_DOTALL: u32 = 0x02;
pub const REGEX_MLINE: u32 = 0x04;
pub const REGEX_WSPACE: u32 = 0x08;
pub const REGEX_QUOTE: u32 = 0x10;

/// A parsed path: its mode and its expression.
#[derive(Clone, Debug)]
pub struct JsonPath {
    pub lax: bool,
    pub expr: Item,
}

/// The most accessors one path step may chain (`$.a.b.c...`).
const MAX_ACCESSOR_CHAIN: usize = 12_000;

/// One path item and the accessor chain that follows it.
#[derive(Clone, Debug)]
pub struct Item {
    pub kind: Kind,
    pub next: Option<Box<Item>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    StartsWith,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Abs,
    Size,
    Type,
    Floor,
    Double,
    Ceiling,
    KeyValue,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Null,
    Bool(bool),
    Numeric(Numeric),
    String(String),
    Variable(String),
    Root,
    Current,
    Last,
    Key(String),
    AnyKey,
    AnyArray,
    /// `.**{first to last}`; u32::MAX stands for `last`.
    Any { first: u32, last: u32 },
    IndexArray(Vec<(Item, Option<Item>)>),
    Binary(BinOp, Box<Item>, Box<Item>),
    Plus(Box<Item>),
    Minus(Box<Item>),
    Not(Box<Item>),
    IsUnknown(Box<Item>),
    Exists(Box<Item>),
    Filter(Box<Item>),
    LikeRegex { expr: Box<Item>, pattern: String, flags: u32 },
    Method(Method),
    Datetime(Option<String>),
}

impl Item {
    fn new(kind: Kind) -> Item {
        Item { kind, next: None }
    }

    /// Appends `tail` at the end of this item's accessor chain.
    fn append(&mut self, tail: Item) {
        let mut end = self;
        while end.next.is_some() {
            end = end.next.as_mut().unwrap();
        }
        end.next = Some(Box::new(tail));
    }
}

impl BinOp {
    pub fn name(self) -> &'static str {
        match self {
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::StartsWith => "starts with",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
        }
    }
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Abs => "abs",
            Method::Size => "size",
            Method::Type => "type",
            Method::Floor => "floor",
            Method::Double => "double",
            Method::Ceiling => "ceiling",
            Method::KeyValue => "keyvalue",
        }
    }
}

// ---------------------------------------------------------------- scanner

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A quoted string.
    Str(String),
    /// An unquoted word: a key or a keyword.
    Ident(String),
    Var(String),
    Int(String),
    Num(String),
    Op(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    /// What the scanner's yytext held when it returned the token: the
    /// error text; None reads "at end of jsonpath input".
    near: Option<String>,
}

fn syntax_error(msg: &str, near: Option<&str>) -> PgError {
    match near {
        Some(t) if !t.is_empty() => PgError::new(sqlstate::SYNTAX_ERROR, format!("{msg} at or near \"{t}\" of jsonpath input")),
        _ => PgError::new(sqlstate::SYNTAX_ERROR, format!("{msg} at end of jsonpath input")),
    }
}

fn is_special(b: u8) -> bool {
    b"?%$.[]{}()|&!=<>@#,*:-+/".contains(&b)
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// A character that may stand in an unquoted word.
fn is_other(b: u8) -> bool {
    !is_special(b) && !is_blank(b) && b != b'\\' && b != b'"'
}

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
}

fn invalid_jsonpath(detail: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type jsonpath").with_detail(detail.to_string())
}

fn low_surrogate_error() -> PgError {
    invalid_jsonpath("Unicode low surrogate must follow a high surrogate.")
}

impl<'a> Scanner<'a> {
    fn text(&self, from: usize, to: usize) -> String {
        String::from_utf8_lossy(&self.s[from..to.min(self.s.len())]).into_owned()
    }

    fn peek(&self, off: usize) -> Option<u8> {
        self.s.get(self.i + off).copied()
    }

    fn next_token(&mut self) -> PgResult<Token> {
        loop {
            while self.peek(0).is_some_and(is_blank) {
                self.i += 1;
            }
            if self.peek(0) == Some(b'/') && self.peek(1) == Some(b'*') {
                self.skip_comment()?;
                continue;
            }
            break;
        }
        let start = self.i;
        let Some(c) = self.peek(0) else {
            return Ok(Token { tok: Tok::Eof, near: None });
        };
        let op = |t: &'static str, sc: &mut Self| {
            sc.i += t.len();
            Ok(Token { tok: Tok::Op(t), near: Some(t.to_string()) })
        };
        let two = [c, self.peek(1).unwrap_or(0)];
        match &two {
            b"&&" => return op("&&", self),
            b"||" => return op("||", self),
            b"**" => return op("**", self),
            b"<=" => return op("<=", self),
            b"==" => return op("==", self),
            b"<>" => return op("!=", self).map(|mut t| {
                t.near = Some("<>".into());
                t
            }),
            b"!=" => return op("!=", self),
            b">=" => return op(">=", self),
            _ => {}
        }
        if c == b'$' {
            if self.peek(1) == Some(b'"') {
                self.i += 2;
                let v = self.quoted()?;
                return Ok(Token { tok: Tok::Var(v), near: Some("\"".into()) });
            }
            let mut j = self.i + 1;
            while j < self.s.len() && is_other(self.s[j]) {
                j += 1;
            }
            if j > self.i + 1 {
                let name = self.text(self.i + 1, j);
                self.i = j;
                return Ok(Token { tok: Tok::Var(name), near: Some(self.text(start, j)) });
            }
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) {
            if let Some(t) = self.number()? {
                return Ok(t);
            }
        }
        if is_special(c) {
            const SINGLE: [&str; 24] =
                ["?", "%", "$", ".", "[", "]", "{", "}", "(", ")", "|", "&", "!", "=", "<", ">", "@", "#", ",", "*", ":", "-", "+", "/"];
            let t = SINGLE.iter().find(|s| s.as_bytes()[0] == c).copied().unwrap_or("?");
            return op(t, self);
        }
        if c == b'"' {
            self.i += 1;
            let v = self.quoted()?;
            return Ok(Token { tok: Tok::Str(v), near: Some("\"".into()) });
        }
        self.word()
    }

    fn skip_comment(&mut self) -> PgResult<()> {
        self.i += 2;
        loop {
            match self.peek(0) {
                None => return Err(syntax_error("unexpected end of comment", None)),
                Some(b'*') if self.peek(1) == Some(b'/') => {
                    self.i += 2;
                    return Ok(());
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// A number, or None when the word rule matches longer (`1abc` is a
    /// word; `1a` is trailing junk: on equal length the number rules win).
    fn number(&mut self) -> PgResult<Option<Token>> {
        let s = self.s;
        let start = self.i;
        let digits = |mut j: usize| {
            while j < s.len() && s[j].is_ascii_digit() {
                j += 1;
            }
            j
        };
        let mut j = start;
        let mut is_int = true;
        if s[j] == b'.' {
            j = digits(j + 1);
            is_int = false;
        } else {
            j = if s[j] == b'0' { j + 1 } else { digits(j) };
            if j < s.len() && s[j] == b'.' {
                j = digits(j + 1);
                is_int = false;
            }
        }
        let mut end = j;
        let mut fail = false;
        if j < s.len() && (s[j] == b'e' || s[j] == b'E') {
            let mut k = j + 1;
            if k < s.len() && (s[k] == b'+' || s[k] == b'-') {
                k += 1;
                if k < s.len() && s[k].is_ascii_digit() {
                    end = digits(k);
                    is_int = false;
                } else {
                    end = k;
                    fail = true;
                }
            } else if k < s.len() && s[k].is_ascii_digit() {
                end = digits(k);
                is_int = false;
            }
        }
        let word_len = {
            let mut w = start;
            while w < s.len() && is_other(s[w]) {
                w += 1;
            }
            w - start
        };
        let junk = !fail && end < s.len() && is_other(s[end]);
        let len = if junk { end + 1 - start } else { end - start };
        if word_len > len {
            return Ok(None);
        }
        let text = self.text(start, start + len);
        if fail {
            return Err(syntax_error("invalid numeric literal", Some(&text)));
        }
        if junk {
            return Err(syntax_error("trailing junk after numeric literal", Some(&text)));
        }
        self.i = end;
        let tok = if is_int { Tok::Int(text.clone()) } else { Tok::Num(text.clone()) };
        Ok(Some(Token { tok, near: Some(text) }))
    }

    /// An unquoted word (the scanner's xnq state): other characters and escapes.
    fn word(&mut self) -> PgResult<Token> {
        let mut out = Vec::new();
        loop {
            match self.peek(0) {
                Some(b'\\') => self.escape(&mut out)?,
                Some(b) if is_other(b) => {
                    out.push(b);
                    self.i += 1;
                }
                _ => break,
            }
        }
        let near = match self.peek(0) {
            Some(b) if is_blank(b) => {
                let from = self.i;
                while self.peek(0).is_some_and(is_blank) {
                    self.i += 1;
                }
                Some(self.text(from, self.i))
            }
            _ => None,
        };
        Ok(Token { tok: Tok::Ident(String::from_utf8_lossy(&out).into_owned()), near })
    }

    /// The body of a quoted string or variable name, after its opening quote.
    fn quoted(&mut self) -> PgResult<String> {
        let mut out = Vec::new();
        loop {
            match self.peek(0) {
                None => return Err(syntax_error("unexpected end of quoted string", None)),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(b) => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }

    fn hex_run(&self, from: usize, max: usize) -> usize {
        let mut n = 0;
        while n < max && self.s.get(from + n).is_some_and(|b| b.is_ascii_hexdigit()) {
            n += 1;
        }
        n
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> PgResult<()> {
        let start = self.i;
        let Some(c) = self.peek(1) else {
            return Err(syntax_error("unexpected end after backslash", Some("\\")));
        };
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'x' => {
                let n = self.hex_run(self.i + 2, 2);
                if n < 2 {
                    return Err(syntax_error("invalid hex character sequence", Some(&self.text(start, self.i + 2 + n))));
                }
                let v = u32::from_str_radix(&self.text(self.i + 2, self.i + 4), 16).unwrap_or(0);
                self.i += 4;
                return push_unicode(out, v);
            }
            b'u' => return self.unicode(out),
            _ => {
                // An unrecognized escape stands for the character itself.
                let len = utf8_len(c);
                out.extend_from_slice(&self.s[self.i + 1..(self.i + 1 + len).min(self.s.len())]);
                self.i += 1 + len;
                return Ok(());
            }
        }
        self.i += 2;
        Ok(())
    }

    /// A run of `\uXXXX` / `\u{X...}` escapes, pairing surrogates within it.
    fn unicode(&mut self, out: &mut Vec<u8>) -> PgResult<()> {
        let run_start = self.i;
        let mut hi: Option<u32> = None;
        while self.peek(0) == Some(b'\\') && self.peek(1) == Some(b'u') {
            let p = self.i + 2;
            let ch;
            if self.s.get(p) == Some(&b'{') {
                let n = self.hex_run(p + 1, 6);
                if n == 0 || self.s.get(p + 1 + n) != Some(&b'}') {
                    return Err(syntax_error("invalid unicode sequence", Some(&self.text(run_start, p + 1 + n))));
                }
                ch = u32::from_str_radix(&self.text(p + 1, p + 1 + n), 16).unwrap_or(0);
                self.i = p + 2 + n;
            } else {
                let n = self.hex_run(p, 4);
                if n < 4 {
                    return Err(syntax_error("invalid unicode sequence", Some(&self.text(run_start, p + n))));
                }
                ch = u32::from_str_radix(&self.text(p, p + 4), 16).unwrap_or(0);
                self.i = p + 4;
            }
            if (0xd800..=0xdbff).contains(&ch) {
                if hi.is_some() {
                    return Err(invalid_jsonpath("Unicode high surrogate must not follow a high surrogate."));
                }
                hi = Some((ch & 0x3ff) << 10);
                continue;
            }
            let ch = if (0xdc00..=0xdfff).contains(&ch) {
                match hi.take() {
                    Some(h) => 0x10000 + h + (ch & 0x3ff),
                    None => return Err(low_surrogate_error()),
                }
            } else if hi.is_some() {
                return Err(low_surrogate_error());
            } else {
                ch
            };
            push_unicode(out, ch)?;
        }
        if hi.is_some() {
            return Err(low_surrogate_error());
        }
        Ok(())
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

fn push_unicode(out: &mut Vec<u8>, ch: u32) -> PgResult<()> {
    if ch == 0 {
        return Err(PgError::new(sqlstate::UNTRANSLATABLE_CHARACTER, "unsupported Unicode escape sequence")
            .with_detail("\\u0000 cannot be converted to text."));
    }
    let c = char::from_u32(ch).ok_or_else(|| invalid_jsonpath("invalid Unicode code point"))?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

// ---------------------------------------------------------------- parser

/// Keywords, case-insensitive except null/true/false.
fn keyword(w: &str) -> Option<&'static str> {
    const KW: [&str; 22] = [
        "is", "to", "abs", "lax", "flag", "last", "null", "size", "true", "type", "with", "false", "floor", "double", "exists", "starts",
        "strict", "ceiling", "unknown", "datetime", "keyvalue", "like_regex",
    ];
    let lower = w.to_ascii_lowercase();
    let k = KW.iter().find(|k| **k == lower).copied()?;
    if matches!(k, "null" | "true" | "false") && w != k {
        return None;
    }
    Some(k)
}

struct Parser<'a> {
    sc: Scanner<'a>,
    tok: Token,
}

/// A parsed operand: an expression or a predicate (they may not mix freely).
struct Node {
    item: Item,
    pred: bool,
}

fn expr(item: Item) -> Node {
    Node { item, pred: false }
}

fn pred(item: Item) -> Node {
    Node { item, pred: true }
}

impl<'a> Parser<'a> {
    fn advance(&mut self) -> PgResult<()> {
        self.tok = self.sc.next_token()?;
        Ok(())
    }

    fn error(&self) -> PgError {
        syntax_error("syntax error", self.tok.near.as_deref())
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.tok.tok, Tok::Op(o) if o == op)
    }

    fn kw(&self) -> Option<&'static str> {
        match &self.tok.tok {
            Tok::Ident(w) => keyword(w),
            _ => None,
        }
    }

    fn expect_op(&mut self, op: &str) -> PgResult<()> {
        if self.is_op(op) {
            self.advance()
        } else {
            Err(self.error())
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PgResult<()> {
        if self.kw() == Some(kw) {
            self.advance()
        } else {
            Err(self.error())
        }
    }

    fn want_expr(&self, n: Node) -> PgResult<Item> {
        if n.pred {
            Err(self.error())
        } else {
            Ok(n.item)
        }
    }

    fn want_pred(&self, n: Node) -> PgResult<Item> {
        if n.pred {
            Ok(n.item)
        } else {
            Err(self.error())
        }
    }

    fn or(&mut self) -> PgResult<Node> {
        crate::stack::check()?;
        let mut left = self.and()?;
        while self.is_op("||") {
            let l = self.want_pred(left)?;
            self.advance()?;
            let r = self.and()?;
            let r = self.want_pred(r)?;
            left = pred(Item::new(Kind::Binary(BinOp::Or, Box::new(l), Box::new(r))));
        }
        Ok(left)
    }

    fn and(&mut self) -> PgResult<Node> {
        let mut left = self.not()?;
        while self.is_op("&&") {
            let l = self.want_pred(left)?;
            self.advance()?;
            let r = self.not()?;
            let r = self.want_pred(r)?;
            left = pred(Item::new(Kind::Binary(BinOp::And, Box::new(l), Box::new(r))));
        }
        Ok(left)
    }

    fn not(&mut self) -> PgResult<Node> {
        if !self.is_op("!") {
            return self.comparison();
        }
        self.advance()?;
        crate::stack::check()?;
        // NOT takes a delimited predicate only: `(predicate)` or exists(...).
        let inner = if self.is_op("(") {
            self.advance()?;
            let n = self.or()?;
            let p = self.want_pred(n)?;
            self.expect_op(")")?;
            p
        } else if self.kw() == Some("exists") {
            self.exists()?
        } else {
            return Err(self.error());
        };
        Ok(pred(Item::new(Kind::Not(Box::new(inner)))))
    }

    fn exists(&mut self) -> PgResult<Item> {
        self.advance()?;
        self.expect_op("(")?;
        let n = self.or()?;
        let e = self.want_expr(n)?;
        self.expect_op(")")?;
        Ok(Item::new(Kind::Exists(Box::new(e))))
    }

    fn comparison(&mut self) -> PgResult<Node> {
        let left = self.additive()?;
        let op = match &self.tok.tok {
            Tok::Op("==") => Some(BinOp::Eq),
            Tok::Op("!=") => Some(BinOp::Ne),
            Tok::Op("<") => Some(BinOp::Lt),
            Tok::Op(">") => Some(BinOp::Gt),
            Tok::Op("<=") => Some(BinOp::Le),
            Tok::Op(">=") => Some(BinOp::Ge),
            _ => None,
        };
        if let Some(op) = op {
            let l = self.want_expr(left)?;
            self.advance()?;
            let r = self.additive()?;
            let r = self.want_expr(r)?;
            return Ok(pred(Item::new(Kind::Binary(op, Box::new(l), Box::new(r)))));
        }
        match self.kw() {
            Some("starts") => {
                let l = self.want_expr(left)?;
                self.advance()?;
                self.expect_kw("with")?;
                let initial = match &self.tok.tok {
                    Tok::Str(s) => Item::new(Kind::String(s.clone())),
                    Tok::Var(v) => Item::new(Kind::Variable(v.clone())),
                    _ => return Err(self.error()),
                };
                self.advance()?;
                Ok(pred(Item::new(Kind::Binary(BinOp::StartsWith, Box::new(l), Box::new(initial)))))
            }
            Some("like_regex") => {
                let l = self.want_expr(left)?;
                self.advance()?;
                let Tok::Str(pattern) = self.tok.tok.clone() else {
                    return Err(self.error());
                };
                self.advance()?;
                let mut flags_text = None;
                if self.kw() == Some("flag") {
                    self.advance()?;
                    let Tok::Str(f) = self.tok.tok.clone() else {
                        return Err(self.error());
                    };
                    self.advance()?;
                    flags_text = Some(f);
                }
                let flags = like_regex_flags(flags_text.as_deref().unwrap_or(""))?;
                compile_like_regex(&pattern, flags)?;
                Ok(pred(Item::new(Kind::LikeRegex { expr: Box::new(l), pattern, flags })))
            }
            _ => Ok(left),
        }
    }

    fn additive(&mut self) -> PgResult<Node> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.tok.tok {
                Tok::Op("+") => BinOp::Add,
                Tok::Op("-") => BinOp::Sub,
                _ => return Ok(left),
            };
            let l = self.want_expr(left)?;
            self.advance()?;
            let r = self.multiplicative()?;
            let r = self.want_expr(r)?;
            left = expr(Item::new(Kind::Binary(op, Box::new(l), Box::new(r))));
        }
    }

    fn multiplicative(&mut self) -> PgResult<Node> {
        let mut left = self.unary()?;
        loop {
            let op = match self.tok.tok {
                Tok::Op("*") => BinOp::Mul,
                Tok::Op("/") => BinOp::Div,
                Tok::Op("%") => BinOp::Mod,
                _ => return Ok(left),
            };
            let l = self.want_expr(left)?;
            self.advance()?;
            let r = self.unary()?;
            let r = self.want_expr(r)?;
            left = expr(Item::new(Kind::Binary(op, Box::new(l), Box::new(r))));
        }
    }

    fn unary(&mut self) -> PgResult<Node> {
        let minus = match self.tok.tok {
            Tok::Op("+") => false,
            Tok::Op("-") => true,
            _ => return self.accessor_expr(),
        };
        crate::stack::check()?;
        self.advance()?;
        let n = self.unary()?;
        let a = self.want_expr(n)?;
        // A sign applied to a bare number folds into it (makeItemUnary).
        if a.next.is_none() {
            if let Kind::Numeric(v) = &a.kind {
                return Ok(expr(if minus { Item::new(Kind::Numeric(v.neg())) } else { a }));
            }
        }
        Ok(expr(Item::new(if minus { Kind::Minus(Box::new(a)) } else { Kind::Plus(Box::new(a)) })))
    }

    fn accessor_expr(&mut self) -> PgResult<Node> {
        let base = match self.tok.tok.clone() {
            Tok::Op("(") => {
                self.advance()?;
                let inner = self.or()?;
                self.expect_op(")")?;
                if inner.pred {
                    if self.kw() == Some("is") {
                        self.advance()?;
                        self.expect_kw("unknown")?;
                        return Ok(pred(Item::new(Kind::IsUnknown(Box::new(inner.item)))));
                    }
                    if !(self.is_op(".") || self.is_op("[") || self.is_op("?")) {
                        return Ok(inner);
                    }
                }
                inner.item
            }
            Tok::Str(s) => self.take(Kind::String(s))?,
            Tok::Var(v) => self.take(Kind::Variable(v))?,
            Tok::Int(t) | Tok::Num(t) => self.take(Kind::Numeric(Numeric::parse(&t)?))?,
            Tok::Op("$") => self.take(Kind::Root)?,
            Tok::Op("@") => self.take(Kind::Current)?,
            Tok::Ident(w) => match keyword(&w) {
                Some("null") => self.take(Kind::Null)?,
                Some("true") => self.take(Kind::Bool(true))?,
                Some("false") => self.take(Kind::Bool(false))?,
                Some("last") => self.take(Kind::Last)?,
                Some("exists") => return Ok(pred(self.exists()?)),
                _ => return Err(self.error()),
            },
            _ => return Err(self.error()),
        };
        // Link the accessors back to front, so that a long chain costs
        // linear time. A chain longer than PostgreSQL's stack allows
        // (it refuses somewhere past 10,000 accessors) is refused alike,
        // which also bounds the recursion of printing, running and
        // dropping the chain.
        let mut accessors = Vec::new();
        while let Some(acc) = self.accessor()? {
            if accessors.len() >= MAX_ACCESSOR_CHAIN {
                return Err(crate::parser::stack_depth_error());
            }
            accessors.push(acc);
        }
        let mut chain: Option<Item> = None;
        while let Some(mut acc) = accessors.pop() {
            debug_assert!(acc.next.is_none(), "an accessor is one item");
            acc.next = chain.map(Box::new);
            chain = Some(acc);
        }
        let mut item = base;
        if let Some(c) = chain {
            item.append(c);
        }
        Ok(expr(item))
    }

    fn take(&mut self, kind: Kind) -> PgResult<Item> {
        self.advance()?;
        Ok(Item::new(kind))
    }

    /// One accessor (`.key`, `[...]`, `?(...)`, `.method()`), if one follows.
    fn accessor(&mut self) -> PgResult<Option<Item>> {
        if self.is_op(".") {
            self.advance()?;
            let kind = match self.tok.tok.clone() {
                Tok::Op("*") => {
                    self.advance()?;
                    Kind::AnyKey
                }
                Tok::Op("**") => {
                    self.advance()?;
                    let (mut first, mut last) = (0, u32::MAX);
                    if self.is_op("{") {
                        self.advance()?;
                        first = self.any_level()?;
                        last = first;
                        if self.kw() == Some("to") {
                            self.advance()?;
                            last = self.any_level()?;
                        }
                        self.expect_op("}")?;
                    }
                    Kind::Any { first, last }
                }
                Tok::Str(s) => {
                    self.advance()?;
                    Kind::Key(s)
                }
                Tok::Ident(w) => {
                    self.advance()?;
                    let method = match keyword(&w) {
                        Some("abs") => Some(Method::Abs),
                        Some("size") => Some(Method::Size),
                        Some("type") => Some(Method::Type),
                        Some("floor") => Some(Method::Floor),
                        Some("double") => Some(Method::Double),
                        Some("ceiling") => Some(Method::Ceiling),
                        Some("keyvalue") => Some(Method::KeyValue),
                        _ => None,
                    };
                    if keyword(&w) == Some("datetime") && self.is_op("(") {
                        self.advance()?;
                        let template = match &self.tok.tok {
                            Tok::Str(s) => {
                                let s = s.clone();
                                self.advance()?;
                                Some(s)
                            }
                            _ => None,
                        };
                        self.expect_op(")")?;
                        Kind::Datetime(template)
                    } else if let (Some(m), true) = (method, self.is_op("(")) {
                        self.advance()?;
                        self.expect_op(")")?;
                        Kind::Method(m)
                    } else {
                        Kind::Key(w)
                    }
                }
                _ => return Err(self.error()),
            };
            return Ok(Some(Item::new(kind)));
        }
        if self.is_op("[") {
            self.advance()?;
            if self.is_op("*") {
                self.advance()?;
                self.expect_op("]")?;
                return Ok(Some(Item::new(Kind::AnyArray)));
            }
            let mut subscripts = Vec::new();
            loop {
                let n = self.or()?;
                let from = self.want_expr(n)?;
                let to = if self.kw() == Some("to") {
                    self.advance()?;
                    let n = self.or()?;
                    Some(self.want_expr(n)?)
                } else {
                    None
                };
                subscripts.push((from, to));
                if self.is_op(",") {
                    self.advance()?;
                    continue;
                }
                self.expect_op("]")?;
                break;
            }
            return Ok(Some(Item::new(Kind::IndexArray(subscripts))));
        }
        if self.is_op("?") {
            self.advance()?;
            self.expect_op("(")?;
            let n = self.or()?;
            let p = self.want_pred(n)?;
            self.expect_op(")")?;
            return Ok(Some(Item::new(Kind::Filter(Box::new(p)))));
        }
        Ok(None)
    }

    fn any_level(&mut self) -> PgResult<u32> {
        let v = match &self.tok.tok {
            Tok::Int(t) => match t.parse::<i32>() {
                Ok(v) => v as u32,
                Err(_) => {
                    return Err(PgError::new(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("value \"{t}\" is out of range for type integer"),
                    ))
                }
            },
            Tok::Ident(w) if keyword(w) == Some("last") => u32::MAX,
            _ => return Err(self.error()),
        };
        self.advance()?;
        Ok(v)
    }
}

/// The LIKE_REGEX flag string as bits (jsonpath_gram.y's makeItemLikeRegex).
fn like_regex_flags(f: &str) -> PgResult<u32> {
    let mut flags = 0;
    for c in f.chars() {
        flags |= match c {
            'i' => REGEX_ICASE,
            's' => REGEX_DOTALL,
            'm' => REGEX_MLINE,
            'x' => REGEX_WSPACE,
            'q' => REGEX_QUOTE,
            _ => {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "invalid input syntax for type jsonpath")
                    .with_detail(format!("Unrecognized flag character \"{c}\" in LIKE_REGEX predicate.")))
            }
        };
    }
    Ok(flags)
}

/// Compiles a LIKE_REGEX pattern under its flags (jspConvertRegexFlags):
/// without `s`, `.` stops at newlines; `m` anchors at lines; `q` quotes.
pub fn compile_like_regex(pattern: &str, flags: u32) -> PgResult<std::sync::Arc<super::regexp::PgRegex>> {
    let icase = flags & REGEX_ICASE != 0;
    if flags & REGEX_QUOTE != 0 {
        return super::regexp::compile_regex(&regex::escape(pattern), icase);
    }
    if flags & REGEX_WSPACE != 0 {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "XQuery \"x\" flag (expanded regular expressions) is not implemented"));
    }
    let mut p = String::new();
    if flags & REGEX_DOTALL != 0 {
        p.push_str("(?s)");
    }
    if flags & REGEX_MLINE != 0 {
        p.push_str("(?m)");
    }
    if p.is_empty() {
        return super::regexp::compile_regex(pattern, icase);
    }
    // Validate the pattern on its own first, so that errors read as PostgreSQL's.
    super::regexp::compile_regex(pattern, icase)?;
    p.push_str(pattern);
    super::regexp::compile_regex(&p, icase)
}

/// Checks what the grammar cannot: `@` only inside filters, `last` only
/// inside array subscripts (flattenJsonPathParseItem).
fn check_item(item: &Item, nesting: u32, in_subscript: bool) -> PgResult<()> {
    let mut cur = Some(item);
    while let Some(it) = cur {
        crate::stack::check()?;
        match &it.kind {
            Kind::Binary(_, l, r) => {
                check_item(l, nesting, in_subscript)?;
                check_item(r, nesting, in_subscript)?;
            }
            Kind::LikeRegex { expr, .. } => check_item(expr, nesting, in_subscript)?,
            Kind::Filter(a) => check_item(a, nesting + 1, in_subscript)?,
            Kind::Plus(a) | Kind::Minus(a) | Kind::Not(a) | Kind::IsUnknown(a) | Kind::Exists(a) => check_item(a, nesting, in_subscript)?,
            Kind::IndexArray(subs) => {
                for (from, to) in subs {
                    check_item(from, nesting, true)?;
                    if let Some(to) = to {
                        check_item(to, nesting, true)?;
                    }
                }
            }
            Kind::Current if nesting == 0 => {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "@ is not allowed in root expressions"));
            }
            Kind::Last if !in_subscript => {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "LAST is allowed only in array subscripts"));
            }
            _ => {}
        }
        cur = it.next.as_deref();
    }
    Ok(())
}

/// jsonpath_in: the path, or None for empty input.
pub fn parse(s: &str) -> PgResult<Option<JsonPath>> {
    let mut p = Parser { sc: Scanner { s: s.as_bytes(), i: 0 }, tok: Token { tok: Tok::Eof, near: None } };
    p.advance()?;
    if p.tok.tok == Tok::Eof {
        return Ok(None);
    }
    let mut lax = true;
    match p.kw() {
        Some("strict") => {
            lax = false;
            p.advance()?;
        }
        Some("lax") => p.advance()?,
        _ => {}
    }
    let n = p.or()?;
    if p.tok.tok != Tok::Eof {
        return Err(p.error());
    }
    check_item(&n.item, 0, false)?;
    Ok(Some(JsonPath { lax, expr: n.item }))
}

/// Parses a path's text, refusing empty input as jsonpath_in does.
pub fn parse_input(s: &str) -> PgResult<JsonPath> {
    parse(s)?.ok_or_else(|| {
        PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type jsonpath: \"{s}\""))
    })
}

// ---------------------------------------------------------------- printer

fn priority(k: &Kind) -> u8 {
    match k {
        Kind::Binary(BinOp::Or, ..) => 0,
        Kind::Binary(BinOp::And, ..) => 1,
        Kind::Binary(BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::StartsWith, ..) => 2,
        Kind::Binary(BinOp::Add | BinOp::Sub, ..) => 3,
        Kind::Binary(BinOp::Mul | BinOp::Div | BinOp::Mod, ..) => 4,
        Kind::Plus(_) | Kind::Minus(_) => 5,
        _ => 6,
    }
}

/// printJsonPathItem: `in_key` when the item follows another in a chain,
/// `brackets` when an operation must be parenthesized.
fn print_item(out: &mut String, item: &Item, in_key: bool, brackets: bool) {
    let mut cur = item;
    let mut in_key = in_key;
    let mut brackets = brackets;
    loop {
        let prio = priority(&cur.kind);
        let operand = |out: &mut String, a: &Item| print_item(out, a, false, priority(&a.kind) <= prio);
        match &cur.kind {
            Kind::Null => out.push_str("null"),
            Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Kind::Numeric(n) => {
                if cur.next.is_some() {
                    out.push_str(&format!("({n})"));
                } else {
                    out.push_str(&n.to_string());
                }
            }
            Kind::String(s) => escape_json_into(out, s),
            Kind::Variable(v) => {
                out.push('$');
                escape_json_into(out, v);
            }
            Kind::Key(k) => {
                if in_key {
                    out.push('.');
                }
                escape_json_into(out, k);
            }
            Kind::Root => out.push('$'),
            Kind::Current => out.push('@'),
            Kind::Last => out.push_str("last"),
            Kind::AnyKey => {
                if in_key {
                    out.push('.');
                }
                out.push('*');
            }
            Kind::AnyArray => out.push_str("[*]"),
            Kind::Any { first, last } => {
                if in_key {
                    out.push('.');
                }
                let (f, l) = (*first, *last);
                if f == 0 && l == u32::MAX {
                    out.push_str("**");
                } else if f == l {
                    if f == u32::MAX {
                        out.push_str("**{last}");
                    } else {
                        out.push_str(&format!("**{{{f}}}"));
                    }
                } else if f == u32::MAX {
                    out.push_str(&format!("**{{last to {l}}}"));
                } else if l == u32::MAX {
                    out.push_str(&format!("**{{{f} to last}}"));
                } else {
                    out.push_str(&format!("**{{{f} to {l}}}"));
                }
            }
            Kind::IndexArray(subs) => {
                out.push('[');
                for (i, (from, to)) in subs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    print_item(out, from, false, false);
                    if let Some(to) = to {
                        out.push_str(" to ");
                        print_item(out, to, false, false);
                    }
                }
                out.push(']');
            }
            Kind::Binary(op, l, r) => {
                if brackets {
                    out.push('(');
                }
                operand(out, l);
                out.push(' ');
                out.push_str(op.name());
                out.push(' ');
                operand(out, r);
                if brackets {
                    out.push(')');
                }
            }
            Kind::LikeRegex { expr, pattern, flags } => {
                if brackets {
                    out.push('(');
                }
                operand(out, expr);
                out.push_str(" like_regex ");
                escape_json_into(out, pattern);
                if *flags != 0 {
                    out.push_str(" flag \"");
                    for (bit, c) in [(REGEX_ICASE, 'i'), (REGEX_DOTALL, 's'), (REGEX_MLINE, 'm'), (REGEX_WSPACE, 'x'), (REGEX_QUOTE, 'q')] {
                        if flags & bit != 0 {
                            out.push(c);
                        }
                    }
                    out.push('"');
                }
                if brackets {
                    out.push(')');
                }
            }
            Kind::Plus(a) | Kind::Minus(a) => {
                if brackets {
                    out.push('(');
                }
                out.push(if matches!(cur.kind, Kind::Plus(_)) { '+' } else { '-' });
                operand(out, a);
                if brackets {
                    out.push(')');
                }
            }
            Kind::Filter(a) => {
                out.push_str("?(");
                print_item(out, a, false, false);
                out.push(')');
            }
            Kind::Not(a) => {
                out.push_str("!(");
                print_item(out, a, false, false);
                out.push(')');
            }
            Kind::IsUnknown(a) => {
                out.push('(');
                print_item(out, a, false, false);
                out.push_str(") is unknown");
            }
            Kind::Exists(a) => {
                out.push_str("exists (");
                print_item(out, a, false, false);
                out.push(')');
            }
            Kind::Method(m) => {
                out.push('.');
                out.push_str(m.name());
                out.push_str("()");
            }
            Kind::Datetime(t) => {
                out.push_str(".datetime(");
                if let Some(t) = t {
                    escape_json_into(out, t);
                }
                out.push(')');
            }
        }
        match cur.next.as_deref() {
            Some(n) => {
                cur = n;
                in_key = true;
                brackets = true;
            }
            None => break,
        }
    }
}

/// jsonpath_out.
pub fn format(p: &JsonPath) -> String {
    let mut out = String::new();
    if !p.lax {
        out.push_str("strict ");
    }
    print_item(&mut out, &p.expr, false, true);
    out
}

/// The type's input: the canonical text a jsonpath datum holds.
pub fn parse_text(s: &str) -> PgResult<Datum> {
    Ok(Datum::from_string(format(&parse_input(s)?)))
}

/// jsonpath_send: a version byte (1), then the text.
pub fn send(text: &str) -> Vec<u8> {
    let mut v = vec![1u8];
    v.extend_from_slice(text.as_bytes());
    v
}

/// jsonpath_recv: the version byte, then the text, parsed as input is.
pub fn recv(b: &[u8]) -> PgResult<Datum> {
    match b.split_first() {
        Some((1, text)) => parse_text(&String::from_utf8_lossy(text)),
        Some((v, _)) => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("unsupported jsonpath version number: {v}"))),
        None => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message")),
    }
}

fn jsonpath_in(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    parse_text(a[0].as_str().unwrap_or(""))
}

fn jsonpath_out(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["jsonpath_in"], jsonpath_in);
    plain(r, &["jsonpath_out"], jsonpath_out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        format(&parse_input(s).unwrap())
    }

    #[test]
    fn prints_as_postgres() {
        assert_eq!(norm("$.a.**{2 to 2}.b"), "$.\"a\".**{2}.\"b\"");
        assert_eq!(norm("$--+1"), "($ - -1)");
        assert_eq!(norm("1 + 2 * 3 - 4 / 5 % 6"), "((1 + 2 * 3) - (4 / 5) % 6)");
        assert_eq!(norm("$.g ? (+@.x >= +-(+@.a + 2))"), "$.\"g\"?(+@.\"x\" >= +(-(+@.\"a\" + 2)))");
        assert_eq!(norm("((($ + 1)).a + ((2)).b ? ((((@ > 1)) || (exists(@.c)))))"), "(($ + 1).\"a\" + (2).\"b\"?(@ > 1 || exists (@.\"c\")))");
        assert_eq!(norm("1.2.e3"), "(1.2).\"e3\"");
        assert_eq!(norm("$ ? (@ like_regex \"pattern\" flag \"smixq\")"), "$?(@ like_regex \"pattern\" flag \"ismxq\")");
    }

    #[test]
    fn syntax_errors_name_the_token() {
        let e = |s: &str| parse_input(s).unwrap_err().message;
        assert_eq!(e("1.type()"), "trailing junk after numeric literal at or near \"1.t\" of jsonpath input");
        assert_eq!(e("$ > 1 is unknown"), "syntax error at or near \" \" of jsonpath input");
        assert_eq!(e("1 < 2 < 3"), "syntax error at or near \"<\" of jsonpath input");
        assert_eq!(e("last"), "LAST is allowed only in array subscripts");
    }
}
