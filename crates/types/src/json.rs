//! The JSON grammar, as PostgreSQL 15's `common/jsonapi.c` reads it.
//!
//! Parsing yields a `JsonTree`: every value with the byte span it covers in
//! the input, object members in input order (duplicates kept). The json
//! type's processing functions answer with spans of the input verbatim
//! (`'{"a": [1,  2]}'::json -> 'a'` is `[1,  2]`), jsonb builds its
//! canonical value from the tree (see `jsonb`).
//!
//! The error details follow jsonapi.c's json_errdetail, and the CONTEXT
//! line report_json_context (the input line up to the offending token).
//! Parsing is iterative; nesting beyond `MAX_DEPTH` is refused as
//! PostgreSQL's recursive parser refuses it when the stack runs out.

use crate::error::{sqlstate, PgError, PgResult};

/// Nesting depth past which input is refused with 54001.
pub const MAX_DEPTH: usize = 6400;

#[derive(Clone, Debug, PartialEq)]
pub enum JsonKind {
    Null,
    Bool(bool),
    /// A number; its text is the tree's span.
    Number,
    /// A string, de-escaped when the parse resolved strings (empty otherwise).
    String(String),
    Array(Vec<JsonTree>),
    Object(Vec<(String, JsonTree)>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct JsonTree {
    pub kind: JsonKind,
    pub start: usize,
    pub end: usize,
}

impl JsonTree {
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }

    /// json_typeof's name of the value's type.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            JsonKind::Null => "null",
            JsonKind::Bool(_) => "boolean",
            JsonKind::Number => "number",
            JsonKind::String(_) => "string",
            JsonKind::Array(_) => "array",
            JsonKind::Object(_) => "object",
        }
    }
}

/// Checks that `s` is JSON (json_in: escapes are checked for form only).
pub fn json_validate(s: &str) -> PgResult<()> {
    parse(s, false).map(|_| ())
}

/// Parses `s`; `resolve` de-escapes strings (and then checks surrogate
/// pairs and refuses \u0000, as PostgreSQL does whenever it needs the
/// strings' values).
pub fn parse(s: &str, resolve: bool) -> PgResult<JsonTree> {
    Parser { lex: Lexer { s: s.as_bytes(), pos: 0, line: 1, line_start: 0 }, resolve }.parse()
}

#[derive(Debug, PartialEq)]
enum Token {
    ObjectStart,
    ObjectEnd,
    ArrayStart,
    ArrayEnd,
    Colon,
    Comma,
    String(String),
    Number,
    True,
    False,
    Null,
    End,
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
}

/// jsonapi.c's JSON_ALPHANUMERIC_CHAR: what continues a bad token.
fn alphanumeric(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

impl<'a> Lexer<'a> {
    fn text(&self, start: usize, end: usize) -> &'a str {
        let end = end.min(self.s.len());
        std::str::from_utf8(&self.s[start.min(end)..end]).unwrap_or("")
    }

    /// An input syntax error whose token ends at `terminator`, with
    /// report_json_context's CONTEXT line.
    fn error(&self, detail: String, terminator: usize, at_end: bool) -> PgError {
        let terminator = terminator.min(self.s.len());
        let line_start = self.line_start.min(terminator);
        let mut start = line_start;
        while terminator - start >= 50 {
            start += utf8_len(self.s[start]);
        }
        if start - line_start <= 3 {
            start = line_start;
        }
        let prefix = if start > line_start { "..." } else { "" };
        let suffix = if !at_end && terminator < self.s.len() && !matches!(self.s[terminator], b'\n' | b'\r') { "..." } else { "" };
        PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json")
            .with_detail(detail)
            .with_context(format!("JSON data, line {}: {}{}{}", self.line, prefix, self.text(start, terminator), suffix))
    }

    fn skip_whitespace(&mut self) {
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                _ => break,
            }
        }
    }

    /// The next token and where it starts.
    fn next(&mut self, resolve: bool) -> PgResult<(Token, usize)> {
        self.skip_whitespace();
        let start = self.pos;
        let Some(&c) = self.s.get(start) else {
            return Ok((Token::End, start));
        };
        let token = match c {
            b'{' => Token::ObjectStart,
            b'}' => Token::ObjectEnd,
            b'[' => Token::ArrayStart,
            b']' => Token::ArrayEnd,
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'"' => return self.string(resolve).map(|t| (t, start)),
            b'-' | b'0'..=b'9' => return self.number().map(|t| (t, start)),
            _ => {
                let mut end = start;
                while end < self.s.len() && alphanumeric(self.s[end]) {
                    end += 1;
                }
                if end == start {
                    end = start + utf8_len(c);
                }
                self.pos = end.min(self.s.len());
                let word = self.text(start, self.pos);
                return match word {
                    "true" => Ok((Token::True, start)),
                    "false" => Ok((Token::False, start)),
                    "null" => Ok((Token::Null, start)),
                    _ => Err(self.error(format!("Token \"{word}\" is invalid."), self.pos, false)),
                };
            }
        };
        self.pos += 1;
        Ok((token, start))
    }

    fn invalid_from(&self, start: usize, from: usize) -> PgError {
        let mut end = from;
        while end < self.s.len() && alphanumeric(self.s[end]) {
            end += 1;
        }
        self.error(format!("Token \"{}\" is invalid.", self.text(start, end)), end, false)
    }

    /// json_lex_number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, not
    /// followed by a letter or digit.
    fn number(&mut self) -> PgResult<Token> {
        let start = self.pos;
        let s = self.s;
        let digits = |p: &mut usize| {
            let from = *p;
            while *p < s.len() && s[*p].is_ascii_digit() {
                *p += 1;
            }
            *p > from
        };
        let mut p = start;
        if s[p] == b'-' {
            p += 1;
        }
        let mut ok = if s.get(p) == Some(&b'0') {
            p += 1;
            true
        } else {
            digits(&mut p)
        };
        if ok && s.get(p) == Some(&b'.') {
            p += 1;
            ok = digits(&mut p);
        }
        if ok && matches!(s.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(s.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            ok = digits(&mut p);
        }
        if !ok || (p < s.len() && alphanumeric(s[p])) {
            return Err(self.invalid_from(start, p));
        }
        self.pos = p;
        Ok(Token::Number)
    }

    /// json_lex_string: escapes checked always, resolved when `resolve`.
    fn string(&mut self, resolve: bool) -> PgResult<Token> {
        let start = self.pos;
        let s = self.s;
        let mut p = start + 1;
        let mut out = String::new();
        let mut high_surrogate: Option<u32> = None;
        let low_must_follow = |lex: &Self, at: usize| lex.error("Unicode low surrogate must follow a high surrogate.".into(), at, false);
        loop {
            let Some(&c) = s.get(p) else {
                return Err(self.error(format!("Token \"{}\" is invalid.", self.text(start, s.len())), s.len(), true));
            };
            match c {
                b'"' => break,
                0..=0x1f => {
                    return Err(self.error(format!("Character with value 0x{c:02x} must be escaped."), p, false));
                }
                b'\\' => {
                    p += 1;
                    let Some(&e) = s.get(p) else {
                        return Err(self.error(format!("Token \"{}\" is invalid.", self.text(start, s.len())), s.len(), true));
                    };
                    if e == b'u' {
                        let mut code = 0u32;
                        for i in 1..=4 {
                            match s.get(p + i) {
                                None => {
                                    return Err(self.error(format!("Token \"{}\" is invalid.", self.text(start, s.len())), s.len(), true));
                                }
                                Some(h) if h.is_ascii_hexdigit() => code = code * 16 + (*h as char).to_digit(16).unwrap_or(0),
                                Some(h) => {
                                    return Err(self.error(
                                        "\"\\u\" must be followed by four hexadecimal digits.".into(),
                                        p + i + utf8_len(*h),
                                        false,
                                    ));
                                }
                            }
                        }
                        p += 5;
                        if !resolve {
                            // json_in checks only the form of \u escapes:
                            // surrogates matter once they become characters.
                            continue;
                        }
                        let ch = if (0xd800..=0xdbff).contains(&code) {
                            if high_surrogate.is_some() {
                                return Err(self.error("Unicode high surrogate must not follow a high surrogate.".into(), p, false));
                            }
                            high_surrogate = Some(code);
                            continue;
                        } else if (0xdc00..=0xdfff).contains(&code) {
                            let Some(high) = high_surrogate.take() else {
                                return Err(low_must_follow(self, p));
                            };
                            0x10000 + ((high - 0xd800) << 10) + (code - 0xdc00)
                        } else {
                            code
                        };
                        if high_surrogate.is_some() {
                            return Err(low_must_follow(self, p));
                        }
                        if ch == 0 {
                            return Err(PgError::new(sqlstate::UNTRANSLATABLE_CHARACTER, "unsupported Unicode escape sequence")
                                .with_detail("\\u0000 cannot be converted to text.")
                                .with_context(self.error(String::new(), p, false).context.unwrap_or_default()));
                        }
                        out.push(char::from_u32(ch).unwrap_or('\u{fffd}'));
                        continue;
                    }
                    if high_surrogate.is_some() {
                        return Err(low_must_follow(self, p + 1));
                    }
                    let resolved = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        _ => {
                            let len = utf8_len(e);
                            let seq = self.text(p, p + len);
                            return Err(self.error(format!("Escape sequence \"\\{seq}\" is invalid."), p + len, false));
                        }
                    };
                    if resolve {
                        out.push(resolved);
                    }
                    p += 1;
                }
                _ => {
                    let len = utf8_len(c);
                    if high_surrogate.is_some() {
                        return Err(low_must_follow(self, p + len));
                    }
                    if resolve {
                        out.push_str(self.text(p, p + len));
                    }
                    p += len;
                }
            }
        }
        if high_surrogate.is_some() {
            return Err(low_must_follow(self, p + 1));
        }
        self.pos = p + 1;
        Ok(Token::String(out))
    }
}

/// An open array or object.
enum Frame {
    Array(usize, Vec<JsonTree>),
    /// Start, members so far, and the key whose value comes next.
    Object(usize, Vec<(String, JsonTree)>, Option<String>),
}

/// Where the parser is, as jsonapi.c's JsonParseContext names it.
#[derive(Clone, Copy)]
enum Expect {
    Value,
    ArrayStart,
    ArrayNext,
    ObjectStart,
    ObjectLabel,
    ObjectNext,
    ObjectComma,
    End,
}

struct Parser<'a> {
    lex: Lexer<'a>,
    resolve: bool,
}

pub fn stack_depth_error() -> PgError {
    crate::error::stack_depth_error()
}

impl<'a> Parser<'a> {
    fn parse(mut self) -> PgResult<JsonTree> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut expect = Expect::Value;
        let mut result = None;
        loop {
            let (token, start) = self.lex.next(self.resolve)?;
            let at_end = token == Token::End;
            let end = self.lex.pos;
            let unexpected = |lex: &Lexer, expect: Expect| -> PgError {
                if at_end {
                    return lex.error("The input string ended unexpectedly.".into(), end, true);
                }
                let wanted = match expect {
                    Expect::Value | Expect::ArrayStart => "JSON value",
                    Expect::ArrayNext => "\",\" or \"]\"",
                    Expect::ObjectStart => "string or \"}\"",
                    Expect::ObjectLabel => "\":\"",
                    Expect::ObjectNext => "\",\" or \"}\"",
                    Expect::ObjectComma => "string",
                    Expect::End => "end of input",
                };
                lex.error(format!("Expected {wanted}, but found \"{}\".", lex.text(start, end)), end, false)
            };
            let leaf = |kind| Some(JsonTree { kind, start, end });
            let value: Option<JsonTree> = match expect {
                Expect::Value | Expect::ArrayStart => match token {
                    Token::ObjectStart | Token::ArrayStart => {
                        if stack.len() >= MAX_DEPTH {
                            return Err(stack_depth_error());
                        }
                        if token == Token::ObjectStart {
                            stack.push(Frame::Object(start, Vec::new(), None));
                            expect = Expect::ObjectStart;
                        } else {
                            stack.push(Frame::Array(start, Vec::new()));
                            expect = Expect::ArrayStart;
                        }
                        None
                    }
                    Token::ArrayEnd if matches!(expect, Expect::ArrayStart) => close(stack.pop(), end),
                    Token::String(s) => leaf(JsonKind::String(s)),
                    Token::Number => leaf(JsonKind::Number),
                    Token::True => leaf(JsonKind::Bool(true)),
                    Token::False => leaf(JsonKind::Bool(false)),
                    Token::Null => leaf(JsonKind::Null),
                    _ => return Err(unexpected(&self.lex, Expect::Value)),
                },
                Expect::ArrayNext => match token {
                    Token::Comma => {
                        expect = Expect::Value;
                        None
                    }
                    Token::ArrayEnd => close(stack.pop(), end),
                    _ => return Err(unexpected(&self.lex, expect)),
                },
                Expect::ObjectStart | Expect::ObjectComma => match token {
                    Token::String(s) => {
                        if let Some(Frame::Object(_, _, key)) = stack.last_mut() {
                            *key = Some(s);
                        }
                        expect = Expect::ObjectLabel;
                        None
                    }
                    Token::ObjectEnd if matches!(expect, Expect::ObjectStart) => close(stack.pop(), end),
                    _ => return Err(unexpected(&self.lex, expect)),
                },
                Expect::ObjectLabel => match token {
                    Token::Colon => {
                        expect = Expect::Value;
                        None
                    }
                    _ => return Err(unexpected(&self.lex, expect)),
                },
                Expect::ObjectNext => match token {
                    Token::Comma => {
                        expect = Expect::ObjectComma;
                        None
                    }
                    Token::ObjectEnd => close(stack.pop(), end),
                    _ => return Err(unexpected(&self.lex, expect)),
                },
                Expect::End => match token {
                    Token::End => return Ok(result.unwrap_or(JsonTree { kind: JsonKind::Null, start: 0, end: 0 })),
                    _ => return Err(unexpected(&self.lex, expect)),
                },
            };
            if let Some(v) = value {
                match stack.last_mut() {
                    None => {
                        result = Some(v);
                        expect = Expect::End;
                    }
                    Some(Frame::Array(_, items)) => {
                        items.push(v);
                        expect = Expect::ArrayNext;
                    }
                    Some(Frame::Object(_, members, key)) => {
                        members.push((key.take().unwrap_or_default(), v));
                        expect = Expect::ObjectNext;
                    }
                }
            }
        }
    }
}

fn close(frame: Option<Frame>, end: usize) -> Option<JsonTree> {
    match frame? {
        Frame::Array(start, items) => Some(JsonTree { kind: JsonKind::Array(items), start, end }),
        Frame::Object(start, members, _) => Some(JsonTree { kind: JsonKind::Object(members), start, end }),
    }
}

/// escape_json: a JSON string literal for `s`, appended to `out`.
pub fn escape_json_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

pub fn escape_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    escape_json_into(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_token() {
        let detail = |s: &str| json_validate(s).unwrap_err().detail.unwrap_or_default();
        assert_eq!(detail("{bad}"), "Token \"bad\" is invalid.");
        assert_eq!(detail("[1 2]"), "Expected \",\" or \"]\", but found \"2\".");
        assert_eq!(detail("{\"a\" 1}"), "Expected \":\", but found \"1\".");
        assert_eq!(detail("[1,"), "The input string ended unexpectedly.");
        assert_eq!(detail("01"), "Token \"01\" is invalid.");
        assert_eq!(detail("1 2"), "Expected end of input, but found \"2\".");
        assert!(json_validate(r#""\u0000""#).is_ok());
        assert!(json_validate(r#""\ud83d""#).is_ok());
        assert_eq!(detail("[}"), "Expected JSON value, but found \"}\".");
        assert_eq!(parse(r#""\u0000""#, true).unwrap_err().code, sqlstate::UNTRANSLATABLE_CHARACTER);
    }

    #[test]
    fn context_shows_the_line_up_to_the_token() {
        let context = |s: &str| json_validate(s).unwrap_err().context.unwrap_or_default();
        assert_eq!(context("\"\\v\""), "JSON data, line 1: \"\\v...");
        assert_eq!(context("[1,2,"), "JSON data, line 1: [1,2,");
        assert_eq!(context("[1,\n2,x]"), "JSON data, line 2: 2,x...");
        assert_eq!(context("\"a\tb\""), "JSON data, line 1: \"a...");
    }
}
