//! The token scanner for PL/pgSQL bodies: PostgreSQL's core SQL lexer rules
//! (strings in all their forms, dollar quoting, quoted identifiers, nested
//! comments, operators, `..`, `:=`), which PL/pgSQL's own scanner sits on.
//! SQL fragments are later cut out of the source by byte range, so each
//! token keeps where it starts and ends.

use tusk_types::{PgError, PgResult};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or keyword: unquoted ones are folded to lower case.
    Ident { name: String, quoted: bool },
    Number,
    Str,
    /// `$n`
    Param(usize),
    /// Operators and punctuation: `:=`, `..`, `::`, `<<`, `>>`, `(`, `;`, ...
    Op(String),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Whether this is the unquoted keyword `kw` (lower case).
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.tok, Tok::Ident { name, quoted: false } if name == kw)
    }
    pub fn is_op(&self, op: &str) -> bool {
        matches!(&self.tok, Tok::Op(o) if o == op)
    }
}

const OP_CHARS: &[u8] = b"+-*/<>=~!@#%^&|`?";

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}
fn is_ident_cont(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// 1-based character position of byte offset `at` in `src` (the `P` field).
pub fn char_pos(src: &str, at: usize) -> u32 {
    src[..at.min(src.len())].chars().count() as u32 + 1
}

pub fn tokenize(src: &str) -> PgResult<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |msg: &str, at: usize| PgError::syntax(msg.to_string()).with_position(Some(char_pos(src, at)));
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // comments
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            if depth != 0 {
                return Err(err("unterminated /* comment", start));
            }
            continue;
        }
        // string literals with a prefix: E'', B'', X'', N'', U&''
        let prefixed = |p: usize| b.get(p) == Some(&b'\'');
        if (c == b'e' || c == b'E') && prefixed(i + 1) {
            i = scan_quoted(b, i + 1, true).ok_or_else(|| err("unterminated quoted string", start))?;
            out.push(Token { tok: Tok::Str, start, end: i });
            continue;
        }
        if matches!(c, b'b' | b'B' | b'x' | b'X' | b'n' | b'N') && prefixed(i + 1) {
            i = scan_quoted(b, i + 1, false).ok_or_else(|| err("unterminated quoted string", start))?;
            out.push(Token { tok: Tok::Str, start, end: i });
            continue;
        }
        if (c == b'u' || c == b'U') && b.get(i + 1) == Some(&b'&') && (b.get(i + 2) == Some(&b'\'') || b.get(i + 2) == Some(&b'"')) {
            if b[i + 2] == b'\'' {
                i = scan_quoted(b, i + 2, false).ok_or_else(|| err("unterminated quoted string", start))?;
                out.push(Token { tok: Tok::Str, start, end: i });
            } else {
                let end = scan_quoted_ident(b, i + 2).ok_or_else(|| err("unterminated quoted identifier", start))?;
                let name = src[i + 3..end - 1].replace("\"\"", "\"");
                i = end;
                out.push(Token { tok: Tok::Ident { name, quoted: true }, start, end: i });
            }
            continue;
        }
        if c == b'\'' {
            i = scan_quoted(b, i, false).ok_or_else(|| err("unterminated quoted string", start))?;
            out.push(Token { tok: Tok::Str, start, end: i });
            continue;
        }
        if c == b'"' {
            let end = scan_quoted_ident(b, i).ok_or_else(|| err("unterminated quoted identifier", start))?;
            let name = src[i + 1..end - 1].replace("\"\"", "\"");
            if name.is_empty() {
                return Err(err("zero-length delimited identifier", start));
            }
            i = end;
            out.push(Token { tok: Tok::Ident { name, quoted: true }, start, end: i });
            continue;
        }
        if c == b'$' {
            // $n parameter
            if b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let n = src[i + 1..j].parse().unwrap_or(usize::MAX);
                i = j;
                out.push(Token { tok: Tok::Param(n), start, end: i });
                continue;
            }
            // dollar quote $tag$
            let mut j = i + 1;
            while j < b.len() && b[j] != b'$' && is_ident_cont(b[j]) && b[j] != b'$' {
                j += 1;
            }
            if j < b.len() && b[j] == b'$' && (j == i + 1 || is_ident_start(b[i + 1])) {
                let tag = &src[i..=j];
                match src[j + 1..].find(tag) {
                    Some(k) => {
                        i = j + 1 + k + tag.len();
                        out.push(Token { tok: Tok::Str, start, end: i });
                        continue;
                    }
                    None => return Err(err("unterminated dollar-quoted string", start)),
                }
            }
            i += 1;
            out.push(Token { tok: Tok::Op("$".into()), start, end: i });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j < b.len() && b[j] == b'.' && b.get(j + 1) != Some(&b'.') {
                j += 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                let mut k = j + 1;
                if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                    k += 1;
                }
                if k < b.len() && b[k].is_ascii_digit() {
                    while k < b.len() && b[k].is_ascii_digit() {
                        k += 1;
                    }
                    j = k;
                }
            }
            i = j;
            out.push(Token { tok: Tok::Number, start, end: i });
            continue;
        }
        if is_ident_start(c) {
            let mut j = i;
            while j < b.len() && is_ident_cont(b[j]) {
                j += 1;
            }
            let name = src[i..j].to_ascii_lowercase();
            i = j;
            out.push(Token { tok: Tok::Ident { name, quoted: false }, start, end: i });
            continue;
        }
        // two-character punctuation
        let two = if i + 1 < b.len() { &src[i..i + 2] } else { "" };
        if matches!(two, ":=" | "::" | "..") {
            i += 2;
            out.push(Token { tok: Tok::Op(two.into()), start, end: i });
            continue;
        }
        if matches!(c, b'(' | b')' | b'[' | b']' | b',' | b';' | b':' | b'.') {
            i += 1;
            out.push(Token { tok: Tok::Op((c as char).to_string()), start, end: i });
            continue;
        }
        if OP_CHARS.contains(&c) {
            let mut j = i;
            while j < b.len() && OP_CHARS.contains(&b[j]) {
                // a comment start ends the operator
                if (b[j] == b'-' && b.get(j + 1) == Some(&b'-')) || (b[j] == b'/' && b.get(j + 1) == Some(&b'*')) {
                    break;
                }
                j += 1;
            }
            if j == i {
                j = i + 1;
            }
            // `<<label>>` directly followed by a keyword, and `=>`, are split as the core lexer does:
            // trailing + and - are dropped unless the operator has one of ~!@#%^&|`?
            let mut op = &src[i..j];
            while op.len() > 1 && (op.ends_with('+') || op.ends_with('-')) && !op.bytes().any(|x| b"~!@#%^&|`?".contains(&x)) {
                op = &op[..op.len() - 1];
            }
            i += op.len();
            out.push(Token { tok: Tok::Op(op.to_string()), start, end: i });
            continue;
        }
        let ch = src[i..].chars().next().unwrap_or(' ');
        i += ch.len_utf8();
        out.push(Token { tok: Tok::Op(ch.to_string()), start, end: i });
    }
    Ok(out)
}

/// The end (exclusive) of a '...' literal starting at `i`.
fn scan_quoted(b: &[u8], i: usize, backslash: bool) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        if backslash && b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == b'\'' {
            if b.get(j + 1) == Some(&b'\'') {
                j += 2;
                continue;
            }
            return Some(j + 1);
        }
        j += 1;
    }
    None
}

fn scan_quoted_ident(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == b'"' {
            if b.get(j + 1) == Some(&b'"') {
                j += 2;
                continue;
            }
            return Some(j + 1);
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t = tokenize("x := 1..10; <<lbl>> 'it''s' $1 $q$a$q$ \"Q\" -- c\n /* a /* b */ */ a.b").unwrap();
        let k: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(k[1], Tok::Op(":=".into()));
        assert_eq!(k[2], Tok::Number);
        assert_eq!(k[3], Tok::Op("..".into()));
        assert_eq!(k[6], Tok::Op("<<".into()));
        assert_eq!(k[8], Tok::Op(">>".into()));
        assert_eq!(k[9], Tok::Str);
        assert_eq!(k[10], Tok::Param(1));
        assert_eq!(k[11], Tok::Str);
        assert_eq!(k[12], Tok::Ident { name: "Q".into(), quoted: true });
        assert_eq!(k.len(), 16);
    }
}
