//! Lifting literals out of a statement's text, for the simple-protocol plan
//! cache: `SELECT abalance FROM t WHERE aid = 42` becomes the key
//! `SELECT abalance FROM t WHERE aid = $1` and the literal `42`, so that
//! statements differing only in their constants share one analyzed and
//! planned statement (PostgreSQL re-plans every simple query; a client such
//! as `pgbench -M simple` sends millions that differ only in constants).
//!
//! This is a lexer, not a parser, and it is deliberately conservative: it
//! gives up (None) on anything whose lifting could change the statement's
//! meaning or that it does not fully understand — dollar quoting, escape
//! and bit strings, existing parameters, several statements — and it
//! leaves literals alone where a constant is not just a value: integer
//! positions in ORDER BY, GROUP BY and DISTINCT ON, and a string right
//! after a name (a typed literal such as `DATE '2024-01-01'`). Whatever
//! lifting remains is checked by analysis: the caller analyzes the lifted
//! text with each literal's own type and falls back to the ordinary path
//! if that fails or leaves a parameter's type undetermined.

/// What kind of constant a lifted literal is, which fixes its type as the
/// lexer would (PostgreSQL types a bare integer int4, int8 or numeric by
/// size, a decimal numeric, a quoted string unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiteralKind {
    Integer,
    Decimal,
    String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    pub kind: LiteralKind,
    /// The value's text: digits as written, or the string with '' undone.
    pub text: String,
}

/// The statement text with literals replaced by `$1`, `$2`, ... and the
/// literals in order; None when the text is not one simple statement this
/// lexer can lift safely. A trailing semicolon is dropped from the key.
pub fn lift_literals(sql: &str) -> Option<(String, Vec<Literal>)> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    let mut i = 0;
    // The previous significant token, lower-cased if a word.
    let mut prev = Token::Start;
    // The token before `prev`.
    let mut prev2 = Token::Start;
    // Parenthesis depth, and the depths at which an ORDER BY / GROUP BY /
    // DISTINCT ON clause is open (integer constants there are positions).
    let mut depth = 0usize;
    let mut position_clauses: Vec<usize> = Vec::new();
    // The depth of an open type modifier list, as in numeric(10, 2).
    let mut typmod_depth: Option<usize> = None;
    let mut ended = false;
    while i < b.len() {
        let c = b[i];
        if ended {
            // Only whitespace and comments may follow the semicolon.
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if c == b'-' && b.get(i + 1) == Some(&b'-') {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            return None;
        }
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0c => {
                out.push(' ');
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                out.push(' ');
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Nested block comments, as PostgreSQL's lexer.
                let mut level = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        level += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        level -= 1;
                        i += 2;
                        if level == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                if level != 0 {
                    return None;
                }
                out.push(' ');
            }
            b'\'' => {
                // A plain string: '' inside stands for one quote.
                let mut value = Vec::new();
                i += 1;
                loop {
                    match b.get(i) {
                        None => return None,
                        Some(b'\'') if b.get(i + 1) == Some(&b'\'') => {
                            value.push(b'\'');
                            i += 2;
                        }
                        Some(b'\'') => {
                            i += 1;
                            break;
                        }
                        Some(&x) => {
                            value.push(x);
                            i += 1;
                        }
                    }
                }
                // Adjacent string constants separated by a newline are
                // concatenated by the lexer: not handled.
                let mut j = i;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&b'\'') {
                    return None;
                }
                let text = String::from_utf8(value).ok()?;
                // After a name it is a typed literal (DATE '...', or an
                // E/B/X/U&/N prefix glued to it): kept as written.
                if matches!(prev, Token::Word(_)) {
                    out.push('\'');
                    out.push_str(&text.replace('\'', "''"));
                    out.push('\'');
                        shift(&mut prev, &mut prev2, Token::Literal);
                    continue;
                }
                literals.push(Literal { kind: LiteralKind::String, text });
                out.push_str(&format!("${}", literals.len()));
                shift(&mut prev, &mut prev2, Token::Literal);
            }
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let start = i;
                let mut decimal = false;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i < b.len() && b[i] == b'.' && b.get(i + 1) != Some(&b'.') {
                    decimal = true;
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                    let mut j = i + 1;
                    if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                        j += 1;
                    }
                    if j < b.len() && b[j].is_ascii_digit() {
                        decimal = true;
                        i = j;
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                // Junk glued to a number (123abc, 0x1F) is PostgreSQL's
                // error to report.
                if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                    return None;
                }
                let mut text = sql[start..i].to_string();
                // A minus right after an operator or an opening is the
                // number's sign: the grammar folds it into the constant
                // (so -2147483648 is an int4), and so does the lifting.
                // (Not when a cast or subscript follows: -0.0::float8 is
                // -(0.0::float8), the minus applied to the cast.)
                let mut j = i;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                let postfix = matches!(b.get(j), Some(b':' | b'['));
                let negated = prev == Token::Punct(b'-')
                    && !postfix
                    && matches!(prev2, Token::Punct(b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'<' | b'>' | b'(' | b','));
                if negated {
                    let trimmed = out.trim_end_matches(' ').len();
                    out.truncate(trimmed);
                    debug_assert!(out.ends_with('-'));
                    out.pop();
                    text.insert(0, '-');
                }
                let text = text.as_str();
                let in_positions = position_clauses.last() == Some(&depth) && matches!(prev, Token::Word(ref w) if w == "by") || position_clauses.last() == Some(&depth) && prev == Token::Punct(b',');
                let in_distinct_on = matches!(prev, Token::Punct(b'(') | Token::Punct(b',')) && position_clauses.last() == Some(&depth);
                // Type modifiers (varchar(10), numeric(10, 2)) stay literal text.
                let typmod = typmod_depth == Some(depth);
                // After a minus that may be binary (x -1) or unary
                // (SELECT -1), the grammar's folding is unknown: kept.
                let ambiguous_sign = prev == Token::Punct(b'-') && !negated;
                if in_positions || in_distinct_on || typmod || ambiguous_sign {
                    out.push_str(text);
                } else {
                    literals.push(Literal { kind: if decimal { LiteralKind::Decimal } else { LiteralKind::Integer }, text: text.to_string() });
                    out.push_str(&format!("${}", literals.len()));
                }
                shift(&mut prev, &mut prev2, Token::Literal);
            }
            b'"' => {
                let start = i;
                i += 1;
                loop {
                    match b.get(i) {
                        None => return None,
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                out.push_str(&sql[start..i]);
                shift(&mut prev, &mut prev2, Token::Word(String::new()));
            }
            b'$' => return None,
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80) {
                    i += 1;
                }
                let word = &sql[start..i];
                let lower = word.to_ascii_lowercase();
                // Prefixed strings (E'..', B'..', X'..', N'..', U&'..'): give up.
                if b.get(i) == Some(&b'\'') || (lower == "u" && b.get(i) == Some(&b'&')) {
                    return None;
                }
                match lower.as_str() {
                    "by" if matches!(prev, Token::Word(ref w) if w == "order" || w == "group") => position_clauses.push(depth),
                    "on" if matches!(prev, Token::Word(ref w) if w == "distinct") => position_clauses.push(depth + 1),
                    "limit" | "offset" | "fetch" | "for" | "having" | "window" | "union" | "intersect" | "except" | "returning" => {
                        while position_clauses.last().is_some_and(|&d| d >= depth) {
                            position_clauses.pop();
                        }
                    }
                    _ => {}
                }
                out.push_str(word);
                shift(&mut prev, &mut prev2, Token::Word(lower));
            }
            b';' => {
                ended = true;
                i += 1;
            }
            _ => {
                match c {
                    b'(' | b'[' => {
                        depth += 1;
                        if c == b'(' && matches!(prev, Token::Word(ref w) if TYPMOD_TYPES.contains(&w.as_str())) {
                            typmod_depth = Some(depth);
                        }
                    }
                    b')' | b']' => {
                        while position_clauses.last().is_some_and(|&d| d >= depth) {
                            position_clauses.pop();
                        }
                        if typmod_depth == Some(depth) {
                            typmod_depth = None;
                        }
                        depth = depth.saturating_sub(1);
                    }
                    _ => {}
                }
                out.push(c as char);
                i += 1;
                shift(&mut prev, &mut prev2, Token::Punct(c));
            }
        }
    }
    let key = out.trim().to_string();
    Some((key, literals))
}

/// Type names that take a modifier list.
const TYPMOD_TYPES: &[&str] = &[
    "varchar", "char", "character", "varying", "nchar", "bpchar", "numeric", "decimal", "dec", "float", "time", "timetz", "timestamp",
    "timestamptz", "interval", "bit", "varbit",
];

/// Records `t` as the newest significant token.
fn shift(prev: &mut Token, prev2: &mut Token, t: Token) {
    *prev2 = std::mem::replace(prev, t);
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Start,
    Word(String),
    Literal,
    Punct(u8),
}

/// The first word of a statement, lower-cased (to tell queries from
/// utility statements before parsing).
pub fn first_word(sql: &str) -> String {
    let t = sql.trim_start();
    t.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lift(sql: &str) -> (String, Vec<String>) {
        let (k, l) = lift_literals(sql).expect("liftable");
        (k, l.into_iter().map(|l| l.text).collect())
    }

    #[test]
    fn lifts_values() {
        assert_eq!(
            lift("SELECT abalance FROM pgbench_accounts WHERE aid = 36541;"),
            ("SELECT abalance FROM pgbench_accounts WHERE aid = $1".into(), vec!["36541".into()])
        );
        assert_eq!(
            lift("UPDATE t SET a = a + -4123, b = 'it''s' WHERE id IN (1, 2.5e3) AND c - 1 > -2147483648"),
            (
                "UPDATE t SET a = a + $1, b = $2 WHERE id IN ($3, $4) AND c - 1 > $5".into(),
                vec!["-4123".into(), "it's".into(), "1".into(), "2.5e3".into(), "-2147483648".into()]
            )
        );
    }

    #[test]
    fn keeps_positions_typmods_and_typed_literals() {
        assert_eq!(lift("SELECT a, b FROM t ORDER BY 2, 1 LIMIT 5").0, "SELECT a, b FROM t ORDER BY 2, 1 LIMIT $1");
        assert_eq!(lift("SELECT a FROM t GROUP BY 1 HAVING count(*) > 3").0, "SELECT a FROM t GROUP BY 1 HAVING count(*) > $1");
        assert_eq!(lift("SELECT DISTINCT ON (1) a FROM t").0, "SELECT DISTINCT ON (1) a FROM t");
        assert_eq!(lift("SELECT x::varchar(10), DATE '2024-01-01', y::numeric(10, 2) FROM t").0, "SELECT x::varchar(10), DATE '2024-01-01', y::numeric(10, 2) FROM t");
        assert_eq!(lift("INSERT INTO h VALUES (7, 1, f(3))").0, "INSERT INTO h VALUES ($1, $2, f($3))");
        assert_eq!(lift("SELECT a FROM t ORDER BY a + 1").0, "SELECT a FROM t ORDER BY a + $1");
    }

    #[test]
    fn gives_up_on_what_it_does_not_know() {
        for sql in ["SELECT $1", "SELECT E'\\n'", "SELECT $$x$$", "SELECT 1; SELECT 2", "SELECT 'a'\n'b'", "SELECT 0x1F", "SELECT B'101'", "SELECT U&'x'"] {
            assert_eq!(lift_literals(sql), None, "{sql}");
        }
    }
}
