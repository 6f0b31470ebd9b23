//! json and jsonb input: PostgreSQL's JSON grammar, and jsonb's canonical text.
//!
//! Tusk keeps both types as text (`Datum::Json`). A json value is the input
//! verbatim, once it parses (json_in). A jsonb value is kept in the form
//! jsonb_out prints, so that output, binary send and equality need nothing
//! more: object keys unique (the last duplicate wins) and sorted shorter
//! first, then bytewise; numbers as numeric_out prints them; strings with
//! their escapes resolved and re-escaped as escape_json does; `", "` and
//! `": "` between items.
//!
//! The lexer and the error details follow PostgreSQL 15's `common/jsonapi.c`
//! (the primary message is always `invalid input syntax for type json`).
//! Parsing is iterative, so deep nesting needs no stack.
//!
//! Also here: the json builders (to_json, json_build_object, json_build_array)
//! and their value conversion, utils/adt/json.c's datum_to_json. Drivers'
//! catalog queries use them (SQLAlchemy's column reflection builds its
//! identity and collation details with json_build_object).

use std::sync::Arc;

use tusk_types::array::Array;
use tusk_types::numeric::Numeric;
use tusk_types::oid::Oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::io::format_text;
use super::{plain, FnCtx, Registry};
use crate::settings::Settings;

/// json_in: checks that `s` is JSON; the value stays as written.
pub fn json_validate(s: &str) -> PgResult<()> {
    Parser { lex: Lexer { s: s.as_bytes(), pos: 0 }, canonical: false }.parse().map(|_| ())
}

/// jsonb_in: the canonical text of the JSON value `s`.
pub fn jsonb_canonical(s: &str) -> PgResult<String> {
    Parser { lex: Lexer { s: s.as_bytes(), pos: 0 }, canonical: true }.parse()
}

fn syntax_error(detail: String) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json").with_detail(detail)
}

#[derive(Debug, PartialEq)]
enum Token {
    ObjectStart,
    ObjectEnd,
    ArrayStart,
    ArrayEnd,
    Colon,
    Comma,
    /// A string; its de-escaped value when the parser wants it.
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
}

/// jsonapi.c's JSON_ALPHANUMERIC_CHAR: what continues a bad token.
fn alphanumeric(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> Lexer<'a> {
    /// The next token and the text it spans.
    fn next(&mut self, want_value: bool) -> PgResult<(Token, &'a str)> {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = self.s.get(start) else {
            return Ok((Token::End, ""));
        };
        let token = match c {
            b'{' => Token::ObjectStart,
            b'}' => Token::ObjectEnd,
            b'[' => Token::ArrayStart,
            b']' => Token::ArrayEnd,
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'"' => return self.string(want_value),
            b'-' | b'0'..=b'9' => return self.number(),
            _ => {
                let mut end = start;
                while end < self.s.len() && alphanumeric(self.s[end]) {
                    end += 1;
                }
                if end == start {
                    // One character, however many bytes it takes.
                    end = start + utf8_len(c);
                }
                self.pos = end.min(self.s.len());
                let word = self.text(start, self.pos);
                return match word {
                    "true" => Ok((Token::True, word)),
                    "false" => Ok((Token::False, word)),
                    "null" => Ok((Token::Null, word)),
                    _ => Err(syntax_error(format!("Token \"{word}\" is invalid."))),
                };
            }
        };
        self.pos += 1;
        Ok((token, self.text(start, self.pos)))
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        // Token boundaries fall on character boundaries of valid UTF-8 input.
        std::str::from_utf8(&self.s[start..end]).unwrap_or("")
    }

    fn invalid_from(&mut self, start: usize) -> PgError {
        let mut end = self.pos;
        while end < self.s.len() && alphanumeric(self.s[end]) {
            end += 1;
        }
        syntax_error(format!("Token \"{}\" is invalid.", self.text(start, end)))
    }

    /// json_lex_number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, not
    /// followed by a letter or digit.
    fn number(&mut self) -> PgResult<(Token, &'a str)> {
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
        self.pos = p;
        if !ok || (p < s.len() && alphanumeric(s[p])) {
            return Err(self.invalid_from(start));
        }
        Ok((Token::Number, self.text(start, p)))
    }

    /// json_lex_string: escapes checked always, resolved when `resolve`.
    fn string(&mut self, resolve: bool) -> PgResult<(Token, &'a str)> {
        let start = self.pos;
        let s = self.s;
        let mut p = start + 1;
        let mut out = String::new();
        let mut high_surrogate: Option<u32> = None;
        loop {
            let Some(&c) = s.get(p) else {
                return Err(syntax_error(format!("Token \"{}\" is invalid.", self.text(start, s.len()))));
            };
            match c {
                b'"' => break,
                0..=0x1f => {
                    return Err(syntax_error(format!("Character with value 0x{c:02x} must be escaped.")));
                }
                b'\\' => {
                    p += 1;
                    let Some(&e) = s.get(p) else {
                        return Err(syntax_error(format!("Token \"{}\" is invalid.", self.text(start, s.len()))));
                    };
                    if e == b'u' {
                        let hex = s.get(p + 1..p + 5).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                        let Some(hex) = hex else {
                            return Err(syntax_error("\"\\u\" must be followed by four hexadecimal digits.".into()));
                        };
                        let code = u32::from_str_radix(std::str::from_utf8(hex).unwrap_or("0"), 16).unwrap_or(0);
                        p += 5;
                        if !resolve {
                            // json_in checks only the form of \u escapes:
                            // surrogates matter once they become characters.
                            continue;
                        }
                        let ch = if (0xd800..=0xdbff).contains(&code) {
                            if high_surrogate.is_some() {
                                return Err(syntax_error("Unicode high surrogate must not follow a high surrogate.".into()));
                            }
                            high_surrogate = Some(code);
                            continue;
                        } else if (0xdc00..=0xdfff).contains(&code) {
                            let Some(high) = high_surrogate.take() else {
                                return Err(syntax_error("Unicode low surrogate must follow a high surrogate.".into()));
                            };
                            0x10000 + ((high - 0xd800) << 10) + (code - 0xdc00)
                        } else {
                            code
                        };
                        if high_surrogate.is_some() {
                            return Err(syntax_error("Unicode low surrogate must follow a high surrogate.".into()));
                        }
                        if resolve {
                            if ch == 0 {
                                return Err(PgError::new(sqlstate::UNTRANSLATABLE_CHARACTER, "unsupported Unicode escape sequence")
                                    .with_detail("\\u0000 cannot be converted to text."));
                            }
                            out.push(char::from_u32(ch).unwrap_or('\u{fffd}'));
                        }
                        continue;
                    }
                    if high_surrogate.is_some() {
                        return Err(syntax_error("Unicode low surrogate must follow a high surrogate.".into()));
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
                            let seq = self.text(p, (p + len).min(s.len()));
                            return Err(syntax_error(format!("Escape sequence \"\\{seq}\" is invalid.")));
                        }
                    };
                    if resolve {
                        out.push(resolved);
                    }
                    p += 1;
                }
                _ => {
                    if high_surrogate.is_some() {
                        return Err(syntax_error("Unicode low surrogate must follow a high surrogate.".into()));
                    }
                    let len = utf8_len(c);
                    if resolve {
                        out.push_str(self.text(p, (p + len).min(s.len())));
                    }
                    p += len;
                }
            }
        }
        if high_surrogate.is_some() {
            return Err(syntax_error("Unicode low surrogate must follow a high surrogate.".into()));
        }
        self.pos = p + 1;
        Ok((Token::String(out), self.text(start, self.pos)))
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// An open array or object, holding its members' canonical text.
enum Frame {
    Array(Vec<String>),
    /// Members so far, and the key whose value comes next.
    Object(Vec<(String, String)>, Option<String>),
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
    canonical: bool,
}

impl<'a> Parser<'a> {
    fn parse(mut self) -> PgResult<String> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut expect = Expect::Value;
        let mut result = String::new();
        loop {
            let wants_string = self.canonical;
            let (token, text) = self.lex.next(wants_string)?;
            let at_end = token == Token::End;
            let unexpected = |expect: Expect| -> PgError {
                if at_end {
                    return syntax_error("The input string ended unexpectedly.".into());
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
                syntax_error(format!("Expected {wanted}, but found \"{text}\"."))
            };
            // A complete value (scalar, or a container just closed), if any.
            let value: Option<String> = match expect {
                Expect::Value | Expect::ArrayStart => match token {
                    Token::ObjectStart => {
                        stack.push(Frame::Object(Vec::new(), None));
                        expect = Expect::ObjectStart;
                        None
                    }
                    Token::ArrayStart => {
                        stack.push(Frame::Array(Vec::new()));
                        expect = Expect::ArrayStart;
                        None
                    }
                    Token::ArrayEnd if matches!(expect, Expect::ArrayStart) => Some(self.close(stack.pop())),
                    Token::String(ref s) => Some(if self.canonical { escape_json(s) } else { String::new() }),
                    Token::Number => Some(if self.canonical { number(text)? } else { String::new() }),
                    Token::True | Token::False | Token::Null => Some(text.to_string()),
                    // After "[", jsonapi.c parses an element: its error is the value's.
                    _ => return Err(unexpected(Expect::Value)),
                },
                Expect::ArrayNext => match token {
                    Token::Comma => {
                        expect = Expect::Value;
                        None
                    }
                    Token::ArrayEnd => Some(self.close(stack.pop())),
                    _ => return Err(unexpected(expect)),
                },
                Expect::ObjectStart | Expect::ObjectComma => match token {
                    Token::String(s) => {
                        if let Some(Frame::Object(_, key)) = stack.last_mut() {
                            *key = Some(s);
                        }
                        expect = Expect::ObjectLabel;
                        None
                    }
                    Token::ObjectEnd if matches!(expect, Expect::ObjectStart) => Some(self.close(stack.pop())),
                    _ => return Err(unexpected(expect)),
                },
                Expect::ObjectLabel => match token {
                    Token::Colon => {
                        expect = Expect::Value;
                        None
                    }
                    _ => return Err(unexpected(expect)),
                },
                Expect::ObjectNext => match token {
                    Token::Comma => {
                        expect = Expect::ObjectComma;
                        None
                    }
                    Token::ObjectEnd => Some(self.close(stack.pop())),
                    _ => return Err(unexpected(expect)),
                },
                Expect::End => match token {
                    Token::End => return Ok(result),
                    _ => return Err(unexpected(expect)),
                },
            };
            if let Some(v) = value {
                match stack.last_mut() {
                    None => {
                        result = v;
                        expect = Expect::End;
                    }
                    Some(Frame::Array(items)) => {
                        items.push(v);
                        expect = Expect::ArrayNext;
                    }
                    Some(Frame::Object(members, key)) => {
                        members.push((key.take().unwrap_or_default(), v));
                        expect = Expect::ObjectNext;
                    }
                }
            }
        }
    }

    /// The canonical text of a container that just closed.
    fn close(&self, frame: Option<Frame>) -> String {
        if !self.canonical {
            return String::new();
        }
        match frame {
            Some(Frame::Array(items)) => format!("[{}]", items.join(", ")),
            Some(Frame::Object(mut members, _)) => {
                // Shorter keys first, then bytewise; of equal keys the last wins.
                members.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes())));
                let mut out = String::from("{");
                for i in 0..members.len() {
                    if i + 1 < members.len() && members[i].0 == members[i + 1].0 {
                        continue;
                    }
                    if out.len() > 1 {
                        out.push_str(", ");
                    }
                    out.push_str(&escape_json(&members[i].0));
                    out.push_str(": ");
                    out.push_str(&members[i].1);
                }
                out.push('}');
                out
            }
            None => String::new(),
        }
    }
}

/// A JSON number as jsonb keeps it: numeric_in, then numeric_out.
fn number(text: &str) -> PgResult<String> {
    Ok(Numeric::parse(text)?.to_string())
}

/// escape_json: a JSON string literal for `s`.
pub fn escape_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
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
    out
}

// ---------------------------------------------------------------- builders

/// datum_to_json: `d`, of type `ty`, appended to `out` as JSON.
fn datum_to_json(d: &Datum, ty: Oid, settings: &Settings, out: &mut String) {
    match d {
        Datum::Null => out.push_str("null"),
        Datum::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Datum::Json(s) => out.push_str(s),
        Datum::Array(a) => array_to_json(a, settings, out),
        Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Float4(_) | Datum::Float8(_) | Datum::Numeric(_) => {
            // NaN and the infinities are no JSON numbers: they go quoted.
            let text = format_text(d, ty, settings);
            if text.bytes().last().is_some_and(|b| b.is_ascii_digit()) {
                out.push_str(&text);
            } else {
                out.push_str(&escape_json(&text));
            }
        }
        Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => {
            out.push_str(&escape_json(&xsd_datetime(d, ty, settings)));
        }
        _ => out.push_str(&escape_json(&format_text(d, ty, settings))),
    }
}

/// JsonEncodeDateTime: ISO 8601 as XML Schema writes it ("T" between date
/// and time, a zone offset with minutes), whatever the session's DateStyle.
fn xsd_datetime(d: &Datum, ty: Oid, settings: &Settings) -> String {
    let mut iso = settings.clone();
    iso.datetime.date_style = tusk_types::datetime::DateStyleOutput::Iso;
    let text = format_text(d, ty, &iso);
    if matches!(d, Datum::Date(_)) || !text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return text; // a date, or infinity
    }
    let mut text = text.replacen(' ', "T", 1);
    if matches!(d, Datum::TimestampTz(_)) {
        // The offset follows the time: "+01" becomes "+01:00".
        let time_start = text.find('T').map_or(0, |i| i + 1);
        if let Some(sign) = text[time_start..].rfind(['+', '-']).map(|i| i + time_start) {
            let end = text[sign..].find(' ').map_or(text.len(), |i| i + sign);
            if !text[sign..end].contains(':') {
                text.insert_str(end, ":00");
            }
        }
    }
    text
}

/// array_to_json: nested JSON arrays, no spaces.
fn array_to_json(a: &Array, settings: &Settings, out: &mut String) {
    let elem = a.element_type;
    if a.elements.is_empty() || a.dims.is_empty() {
        out.push_str("[]");
        return;
    }
    let lens: Vec<usize> = a.dims.iter().map(|(len, _)| *len as usize).collect();
    let mut next = 0;
    array_dim_to_json(&a.elements, &lens, elem, settings, &mut next, out);
}

fn array_dim_to_json(elements: &[Datum], lens: &[usize], elem: Oid, settings: &Settings, next: &mut usize, out: &mut String) {
    out.push('[');
    for i in 0..lens[0] {
        if i > 0 {
            out.push(',');
        }
        if lens.len() > 1 {
            array_dim_to_json(elements, &lens[1..], elem, settings, next, out);
        } else {
            datum_to_json(&elements[*next], elem, settings, out);
            *next += 1;
        }
    }
    out.push(']');
}

fn json_datum(s: String) -> PgResult<Datum> {
    Ok(Datum::Json(Arc::from(s)))
}

fn to_json(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let mut out = String::new();
    datum_to_json(&a[0], c.arg_type(0), &c.env.settings(), &mut out);
    json_datum(out)
}

fn json_build_object(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    if a.len() % 2 != 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "argument list must have even number of elements")
            .with_hint("The arguments of json_build_object() must consist of alternating keys and values."));
    }
    let settings = c.env.settings();
    let mut out = String::from("{");
    for (i, pair) in a.chunks(2).enumerate() {
        if pair[0].is_null() {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("argument {} cannot be null", 2 * i + 1))
                .with_hint("Object keys should be text."));
        }
        if matches!(pair[0], Datum::Array(_) | Datum::Record(_) | Datum::Json(_)) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "key value must be scalar, not array, composite, or json"));
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&escape_json(&format_text(&pair[0], c.arg_type(2 * i), &settings)));
        out.push_str(" : ");
        datum_to_json(&pair[1], c.arg_type(2 * i + 1), &settings, &mut out);
    }
    out.push('}');
    json_datum(out)
}

fn json_build_array(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let settings = c.env.settings();
    let mut out = String::from("[");
    for (i, d) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        datum_to_json(d, c.arg_type(i), &settings, &mut out);
    }
    out.push(']');
    json_datum(out)
}

fn json_build_object_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    json_datum("{}".into())
}

fn json_build_array_noargs(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    json_datum("[]".into())
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["to_json"], to_json);
    plain(r, &["json_build_object"], json_build_object);
    plain(r, &["json_build_object_noargs"], json_build_object_noargs);
    plain(r, &["json_build_array"], json_build_array);
    plain(r, &["json_build_array_noargs"], json_build_array_noargs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_jsonb() {
        let cases = [
            (r#"{"b": 1, "a": 2, "aa": 3}"#, r#"{"a": 2, "b": 1, "aa": 3}"#),
            (r#"{"a":1,"a":2}"#, r#"{"a": 2}"#),
            (r#"[1.50, 1e2, -0, 0.0, "x\u00e9\n"]"#, r#"[1.50, 100, 0, 0.0, "xé\n"]"#),
            (r#" {} "#, "{}"),
            ("[]", "[]"),
            (r#""\ud83d\ude00""#, "\"😀\""),
            ("null", "null"),
            (r#"{"k":[{"z":true,"y":false}]}"#, r#"{"k": [{"y": false, "z": true}]}"#),
        ];
        for (input, expected) in cases {
            assert_eq!(jsonb_canonical(input).unwrap(), expected, "{input}");
        }
    }

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
        assert_eq!(jsonb_canonical(r#""\u0000""#).unwrap_err().code, sqlstate::UNTRANSLATABLE_CHARACTER);
    }
}
