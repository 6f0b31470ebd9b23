//! to_char(numeric|int4|int8|float4|float8, text) and to_number(text, text):
//! PostgreSQL 15's numeric template patterns (formatting.c's NUM_* code),
//! in the C locale, which is what Tusk reports for lc_numeric/lc_monetary
//! (so D is '.', G is ',', L is a blank, S is '+'/'-').
//!
//! The code follows formatting.c closely, on purpose: the observable
//! behaviour (where blanks go, when a sign is written, what FM strips, the
//! '#' overflow pattern, the quirks of to_number's lenient reading) is
//! defined by that code rather than by its documentation, and clients
//! depend on it byte for byte. A template is parsed into nodes (keywords
//! and literal characters) while a `NumDesc` collects what the keywords
//! say (digits before/after the point, sign style, FM, ...); each type's
//! entry point then prints the value into a plain digit string, and one
//! processor walks the nodes, placing digits, signs and separators.
//!
//! (The date/time templates live in tusk-types' datetime/formatting.rs.)

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use tusk_types::numeric::Numeric;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_str, plain, FnCtx, Registry};

// ---------------------------------------------------------------- templates

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Comma,
    Dec,
    Zero,
    Nine,
    B,
    C,
    D,
    Eeee,
    Fm,
    G,
    L,
    Mi,
    Pl,
    Pr,
    RnUpper,
    RnLower,
    Sg,
    Sp,
    S,
    ThUpper,
    ThLower,
    V,
}

/// NUM_keywords, in PostgreSQL's order: the first name that prefixes the
/// remaining template wins (so "SG" and "SP" are tried before "S").
static KEYWORDS: &[(&str, Key)] = &[
    (",", Key::Comma),
    (".", Key::Dec),
    ("0", Key::Zero),
    ("9", Key::Nine),
    ("B", Key::B),
    ("C", Key::C),
    ("D", Key::D),
    ("EEEE", Key::Eeee),
    ("FM", Key::Fm),
    ("G", Key::G),
    ("L", Key::L),
    ("MI", Key::Mi),
    ("PL", Key::Pl),
    ("PR", Key::Pr),
    ("RN", Key::RnUpper),
    ("SG", Key::Sg),
    ("SP", Key::Sp),
    ("S", Key::S),
    ("TH", Key::ThUpper),
    ("V", Key::V),
    ("b", Key::B),
    ("c", Key::C),
    ("d", Key::D),
    ("eeee", Key::Eeee),
    ("fm", Key::Fm),
    ("g", Key::G),
    ("l", Key::L),
    ("mi", Key::Mi),
    ("pl", Key::Pl),
    ("pr", Key::Pr),
    ("rn", Key::RnLower),
    ("sg", Key::Sg),
    ("sp", Key::Sp),
    ("s", Key::S),
    ("th", Key::ThLower),
    ("v", Key::V),
];

#[derive(Debug)]
enum Node {
    Action(Key),
    /// Literal text, copied by to_char and skipped (one character) by to_number.
    Char(String),
}

// NUMDesc flags.
const F_DECIMAL: u32 = 1 << 1;
const F_LDECIMAL: u32 = 1 << 2;
const F_ZERO: u32 = 1 << 3;
const F_BLANK: u32 = 1 << 4;
const F_FILLMODE: u32 = 1 << 5;
const F_LSIGN: u32 = 1 << 6;
const F_BRACKET: u32 = 1 << 7;
const F_MINUS: u32 = 1 << 8;
const F_PLUS: u32 = 1 << 9;
const F_ROMAN: u32 = 1 << 10;
const F_MULTI: u32 = 1 << 11;
const F_PLUS_POST: u32 = 1 << 12;
const F_MINUS_POST: u32 = 1 << 13;
const F_EEEE: u32 = 1 << 14;

const LSIGN_PRE: i32 = -1;
const LSIGN_POST: i32 = 1;
const LSIGN_NONE: i32 = 0;

/// What the template's keywords say about the number (NUMDesc).
#[derive(Clone, Copy, Debug, Default)]
struct NumDesc {
    /// Digit positions before and after the decimal point.
    pre: i32,
    post: i32,
    lsign: i32,
    flag: u32,
    pre_lsign_num: i32,
    /// The number of 9s after V (the value is multiplied by 10^multi).
    multi: i32,
    /// 1-based position of the first '0' before the point, and of the last '0'.
    zero_start: i32,
    zero_end: i32,
}

impl NumDesc {
    fn is(&self, f: u32) -> bool {
        self.flag & f != 0
    }
}

fn syntax_error(msg: &str) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, msg)
}

/// NUMDesc_prepare: folds one keyword into the description, rejecting the
/// combinations PostgreSQL rejects (in its order, so the same message wins).
fn prepare(num: &mut NumDesc, key: Key) -> PgResult<()> {
    if num.is(F_EEEE) && key != Key::Eeee {
        return Err(syntax_error("\"EEEE\" must be the last pattern used"));
    }
    match key {
        Key::Nine => {
            if num.is(F_BRACKET) {
                return Err(syntax_error("\"9\" must be ahead of \"PR\""));
            }
            if num.is(F_MULTI) {
                num.multi += 1;
            } else if num.is(F_DECIMAL) {
                num.post += 1;
            } else {
                num.pre += 1;
            }
        }
        Key::Zero => {
            if num.is(F_BRACKET) {
                return Err(syntax_error("\"0\" must be ahead of \"PR\""));
            }
            if !num.is(F_ZERO) && !num.is(F_DECIMAL) {
                num.flag |= F_ZERO;
                num.zero_start = num.pre + 1;
            }
            if !num.is(F_DECIMAL) {
                num.pre += 1;
            } else {
                num.post += 1;
            }
            num.zero_end = num.pre + num.post;
        }
        Key::B => {
            if num.pre == 0 && num.post == 0 && !num.is(F_ZERO) {
                num.flag |= F_BLANK;
            }
        }
        Key::D | Key::Dec => {
            if key == Key::D {
                num.flag |= F_LDECIMAL;
            }
            if num.is(F_DECIMAL) {
                return Err(syntax_error("multiple decimal points"));
            }
            if num.is(F_MULTI) {
                return Err(syntax_error("cannot use \"V\" and decimal point together"));
            }
            num.flag |= F_DECIMAL;
        }
        Key::Fm => num.flag |= F_FILLMODE,
        Key::S => {
            if num.is(F_LSIGN) {
                return Err(syntax_error("cannot use \"S\" twice"));
            }
            if num.is(F_PLUS) || num.is(F_MINUS) || num.is(F_BRACKET) {
                return Err(syntax_error("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together"));
            }
            if !num.is(F_DECIMAL) {
                num.lsign = LSIGN_PRE;
                num.pre_lsign_num = num.pre;
                num.flag |= F_LSIGN;
            } else if num.lsign == LSIGN_NONE {
                num.lsign = LSIGN_POST;
                num.flag |= F_LSIGN;
            }
        }
        Key::Mi => {
            if num.is(F_LSIGN) {
                return Err(syntax_error("cannot use \"S\" and \"MI\" together"));
            }
            num.flag |= F_MINUS;
            if num.is(F_DECIMAL) {
                num.flag |= F_MINUS_POST;
            }
        }
        Key::Pl => {
            if num.is(F_LSIGN) {
                return Err(syntax_error("cannot use \"S\" and \"PL\" together"));
            }
            num.flag |= F_PLUS;
            if num.is(F_DECIMAL) {
                num.flag |= F_PLUS_POST;
            }
        }
        Key::Sg => {
            if num.is(F_LSIGN) {
                return Err(syntax_error("cannot use \"S\" and \"SG\" together"));
            }
            num.flag |= F_MINUS | F_PLUS;
        }
        Key::Pr => {
            if num.is(F_LSIGN) || num.is(F_PLUS) || num.is(F_MINUS) {
                return Err(syntax_error("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together"));
            }
            num.flag |= F_BRACKET;
        }
        Key::RnUpper | Key::RnLower => num.flag |= F_ROMAN,
        Key::V => {
            if num.is(F_DECIMAL) {
                return Err(syntax_error("cannot use \"V\" and decimal point together"));
            }
            num.flag |= F_MULTI;
        }
        Key::Eeee => {
            if num.is(F_EEEE) {
                return Err(syntax_error("cannot use \"EEEE\" twice"));
            }
            if num.is(F_BLANK)
                || num.is(F_FILLMODE)
                || num.is(F_LSIGN)
                || num.is(F_BRACKET)
                || num.is(F_MINUS)
                || num.is(F_PLUS)
                || num.is(F_ROMAN)
                || num.is(F_MULTI)
            {
                return Err(syntax_error("\"EEEE\" is incompatible with other formats")
                    .with_detail("\"EEEE\" may only be used together with digit and decimal point patterns."));
            }
            num.flag |= F_EEEE;
        }
        Key::Comma | Key::C | Key::G | Key::L | Key::Sp | Key::ThUpper | Key::ThLower => {}
    }
    Ok(())
}

/// parse_format for numeric templates: keywords, double-quoted literal
/// runs (backslash quotes the next character inside them), and single
/// literal characters (a backslash before a double quote escapes it).
fn parse_template(fmt: &str) -> PgResult<(Vec<Node>, NumDesc)> {
    let mut nodes = Vec::new();
    let mut num = NumDesc::default();
    let mut rest = fmt;
    while !rest.is_empty() {
        if let Some(&(name, key)) = KEYWORDS.iter().find(|(name, _)| rest.starts_with(name)) {
            prepare(&mut num, key)?;
            nodes.push(Node::Action(key));
            rest = &rest[name.len()..];
            continue;
        }
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    end = i + 1;
                    break;
                }
                let c = if c == '\\' { chars.next().map(|(_, n)| n).unwrap_or(c) } else { c };
                nodes.push(Node::Char(c.to_string()));
            }
            rest = &quoted[end.min(quoted.len())..];
            continue;
        }
        if rest.starts_with("\\\"") {
            rest = &rest[1..];
        }
        let c = rest.chars().next().unwrap_or_default();
        nodes.push(Node::Char(c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    Ok((nodes, num))
}

// ---------------------------------------------------------------- to_char

/// The C locale's strings (NUM_prepare_locale gives these with or without
/// the locale-dependent keywords when lc_numeric/lc_monetary are C).
const NEGATIVE_SIGN: &str = "-";
const POSITIVE_SIGN: &str = "+";
const DECIMAL_POINT: &str = ".";
const THOUSANDS_SEP: &str = ",";
const CURRENCY_SYMBOL: &str = " ";

/// NUMProc for to_char: walks the template over `number`, the value's
/// digits (no sign), already fitted to the template by the caller.
struct CharProc<'a> {
    num: NumDesc,
    /// b'+', b'-', or 0 when the caller gave none (Roman numerals).
    sign: u8,
    sign_wrote: bool,
    num_count: i32,
    num_in: bool,
    num_curr: i32,
    out_pre_spaces: i32,
    number: &'a [u8],
    number_p: usize,
    last_relevant: Option<usize>,
    out: String,
}

impl CharProc<'_> {
    fn cur(&self) -> u8 {
        self.number.get(self.number_p).copied().unwrap_or(0)
    }

    fn last_relevant_is_dot(&self) -> bool {
        self.last_relevant.is_some_and(|i| self.number.get(i) == Some(&b'.'))
    }

    /// IS_PREDEC_SPACE: a lone leading zero before the point ("0.1" with
    /// "9.9" prints " .1").
    fn predec_space(&self) -> bool {
        !self.num.is(F_ZERO) && self.number_p == 0 && self.number.first() == Some(&b'0') && self.num.post != 0
    }

    fn fillmode(&self) -> bool {
        self.num.is(F_FILLMODE)
    }

    /// Writes raw bytes of the number (ASCII, or a NUL that ends the result
    /// as it does PostgreSQL's C string).
    fn push_byte(&mut self, b: u8) {
        self.out.push(b as char);
    }

    /// NUM_numpart_to_char: one digit position (9, 0) or the decimal point.
    fn numpart(&mut self, id: Key) {
        if self.num.is(F_ROMAN) {
            return;
        }
        self.num_in = false;

        // The sign goes just before the first digit actually written.
        if !self.sign_wrote
            && (self.num_curr >= self.out_pre_spaces || (self.num.is(F_ZERO) && self.num.zero_start == self.num_curr))
            && (!self.predec_space() || self.last_relevant_is_dot())
        {
            if self.num.is(F_LSIGN) {
                if self.num.lsign == LSIGN_PRE {
                    self.out.push_str(if self.sign == b'-' { NEGATIVE_SIGN } else { POSITIVE_SIGN });
                    self.sign_wrote = true;
                }
            } else if self.num.is(F_BRACKET) {
                self.out.push(if self.sign == b'+' { ' ' } else { '<' });
                self.sign_wrote = true;
            } else if self.sign == b'+' {
                if !self.fillmode() {
                    self.out.push(' ');
                }
                self.sign_wrote = true;
            } else if self.sign == b'-' {
                self.out.push('-');
                self.sign_wrote = true;
            }
        }

        if self.num_curr < self.out_pre_spaces && (self.num.zero_start > self.num_curr || !self.num.is(F_ZERO)) {
            // A position left of the value's digits: a blank.
            if !self.fillmode() {
                self.out.push(' ');
            }
        } else if self.num.is(F_ZERO) && self.num_curr < self.out_pre_spaces && self.num.zero_start <= self.num_curr {
            // ... or a leading zero, from the first '0' on.
            self.out.push('0');
            self.num_in = true;
        } else {
            let c = self.cur();
            if c == b'.' {
                if !self.last_relevant_is_dot() || self.fillmode() {
                    self.out.push_str(DECIMAL_POINT);
                }
            } else if self.last_relevant.is_some_and(|lr| self.number_p > lr) && id != Key::Zero {
                // FM: trailing zeros after the last relevant digit are dropped.
            } else if self.predec_space() {
                if !self.fillmode() {
                    self.out.push(' ');
                } else if self.last_relevant_is_dot() {
                    // FM9.9 prints 0 as "0."
                    self.out.push('0');
                }
            } else {
                self.push_byte(c);
                self.num_in = true;
            }
            if c != 0 {
                self.number_p += 1;
            }
        }

        let mut end = self.num_count + i32::from(self.out_pre_spaces != 0) + i32::from(self.num.is(F_DECIMAL));
        if self.last_relevant == Some(self.number_p) {
            end = self.num_curr;
        }
        if self.num_curr + 1 == end {
            if self.sign_wrote && self.num.is(F_BRACKET) {
                self.out.push(if self.sign == b'+' { ' ' } else { '>' });
            } else if self.num.is(F_LSIGN) && self.num.lsign == LSIGN_POST {
                self.out.push_str(if self.sign == b'-' { NEGATIVE_SIGN } else { POSITIVE_SIGN });
            }
        }
        self.num_curr += 1;
    }
}

/// get_last_relevant_decnum: the last non-zero digit after the point (or
/// the point itself), which FM keeps and after which it drops zeros.
fn last_relevant_decnum(num: &[u8]) -> Option<usize> {
    let dot = num.iter().position(|&b| b == b'.')?;
    let mut result = dot;
    for (i, &b) in num.iter().enumerate().skip(dot + 1) {
        if b != b'0' {
            result = i;
        }
    }
    Some(result)
}

/// get_th: the English ordinal suffix of a digit string.
fn ordinal_suffix(num: &[u8], upper: bool) -> PgResult<&'static str> {
    let last = num.last().copied().unwrap_or(0);
    if !last.is_ascii_digit() {
        return Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("\"{}\" is not a number", String::from_utf8_lossy(num)),
        ));
    }
    let teen = num.len() > 1 && num[num.len() - 2] == b'1';
    let s = match (teen, last) {
        (false, b'1') => "st",
        (false, b'2') => "nd",
        (false, b'3') => "rd",
        _ => "th",
    };
    Ok(match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    })
}

/// NUM_processor in the to_char direction.
fn process_to_char(nodes: &[Node], mut num: NumDesc, number: &[u8], out_pre_spaces: i32, sign: u8) -> PgResult<String> {
    if num.zero_start != 0 {
        num.zero_start -= 1;
    }
    // EEEE: the caller's string is the whole result; literal text is dropped.
    if num.is(F_EEEE) {
        return Ok(String::from_utf8_lossy(number).into_owned());
    }
    if num.is(F_ROMAN) {
        num.lsign = 0;
        num.pre_lsign_num = 0;
        num.post = 0;
        num.pre = 0;
        num.flag = (num.flag & F_FILLMODE) | F_ROMAN;
    }

    let sign_wrote;
    if num.is(F_PLUS) || num.is(F_MINUS) {
        // MI/PL/SG write the sign themselves; only a lone PL leaves it to the digits.
        sign_wrote = !(num.is(F_PLUS) && !num.is(F_MINUS));
    } else {
        if sign != b'-' && num.is(F_FILLMODE) {
            num.flag &= !F_BRACKET;
        }
        sign_wrote = sign == b'+' && num.is(F_FILLMODE) && !num.is(F_LSIGN);
        if num.lsign == LSIGN_PRE && num.pre == num.pre_lsign_num {
            num.lsign = LSIGN_POST;
        }
    }

    let mut p = CharProc {
        num,
        sign,
        sign_wrote,
        num_count: num.post + num.pre - 1,
        num_in: false,
        num_curr: 0,
        out_pre_spaces,
        number,
        number_p: 0,
        last_relevant: None,
        out: String::new(),
    };
    if num.is(F_FILLMODE) && num.is(F_DECIMAL) {
        p.last_relevant = last_relevant_decnum(number);
        // Digits under a '0' are never stripped, but stay within the string.
        if let Some(lr) = p.last_relevant {
            if num.zero_end > out_pre_spaces && !number.is_empty() {
                let last_zero = ((number.len() - 1) as i64).min((num.zero_end - out_pre_spaces) as i64) as usize;
                if lr < last_zero {
                    p.last_relevant = Some(last_zero);
                }
            }
        }
    }
    if !p.sign_wrote && p.out_pre_spaces == 0 {
        p.num_count += 1;
    }

    for node in nodes {
        let key = match node {
            Node::Char(s) => {
                p.out.push_str(s);
                continue;
            }
            Node::Action(k) => *k,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dec | Key::D => p.numpart(key),
            Key::Comma | Key::G => {
                if p.num_in {
                    p.out.push_str(if key == Key::Comma { "," } else { THOUSANDS_SEP });
                } else if !p.fillmode() {
                    p.out.push(' ');
                }
            }
            Key::L => p.out.push_str(CURRENCY_SYMBOL),
            Key::RnUpper | Key::RnLower => {
                let mut r = String::from_utf8_lossy(&p.number[p.number_p.min(p.number.len())..]).into_owned();
                if key == Key::RnLower {
                    r.make_ascii_lowercase();
                }
                if p.fillmode() {
                    p.out.push_str(&r);
                } else {
                    p.out.push_str(&format!("{r:>15}"));
                }
            }
            Key::ThUpper | Key::ThLower => {
                if p.num.is(F_ROMAN) || p.number.first() == Some(&b'#') || p.sign == b'-' || p.num.is(F_DECIMAL) {
                    continue;
                }
                p.out.push_str(ordinal_suffix(p.number, key == Key::ThUpper)?);
            }
            Key::Mi => {
                if p.sign == b'-' {
                    p.out.push('-');
                } else if !p.fillmode() {
                    p.out.push(' ');
                }
            }
            Key::Pl => {
                if p.sign == b'+' {
                    p.out.push('+');
                } else if !p.fillmode() {
                    p.out.push(' ');
                }
            }
            // With no sign (Roman numerals) this writes a NUL, which ends
            // PostgreSQL's result string there.
            Key::Sg => p.push_byte(p.sign),
            Key::B | Key::C | Key::Eeee | Key::Fm | Key::Pr | Key::Sp | Key::S | Key::V => {}
        }
    }
    let mut out = p.out;
    if let Some(nul) = out.find('\0') {
        out.truncate(nul);
    }
    Ok(out)
}

/// Fits a value's digit string (sign removed) to the template: the blanks
/// needed before it, or the '#' pattern when it has too many digits.
fn fit_digits(numstr: String, num: &NumDesc) -> (Vec<u8>, i32) {
    let pre_len = numstr.find('.').unwrap_or(numstr.len()) as i32;
    if pre_len < num.pre {
        (numstr.into_bytes(), num.pre - pre_len)
    } else if pre_len > num.pre {
        (overflow_pattern(num.pre, num.post), 0)
    } else {
        (numstr.into_bytes(), 0)
    }
}

/// "###.##": as many '#' as digit positions, with the point after `pre`.
fn overflow_pattern(pre: i32, post: i32) -> Vec<u8> {
    let mut s = vec![b'#'; (pre + post + 1).max(1) as usize];
    s[pre.max(0) as usize] = b'.';
    s
}

/// The EEEE pattern for NaN and infinities: " #.##e+##" shaped.
fn eeee_special_pattern(pre: i32, post: i32) -> Vec<u8> {
    let mut s = vec![b'#'; (pre + post + 6).max(1) as usize];
    s[0] = b' ';
    if let Some(b) = s.get_mut((pre + 1) as usize) {
        *b = b'.';
    }
    s
}

/// Splits "-123.4" into ('-', "123.4") and "123.4" into ('+', "123.4").
fn split_sign(s: String) -> (u8, String) {
    match s.strip_prefix('-') {
        Some(rest) => (b'-', rest.to_string()),
        None => (b'+', s),
    }
}

/// int_to_roman: 1..3999 in upper-case Roman numerals, '#' x 15 otherwise.
fn int_to_roman(n: i32) -> Vec<u8> {
    if !(1..=3999).contains(&n) {
        return vec![b'#'; 15];
    }
    const M: [&str; 4] = ["", "M", "MM", "MMM"];
    const C: [&str; 10] = ["", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"];
    const X: [&str; 10] = ["", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"];
    const I: [&str; 10] = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"];
    let n = n as usize;
    format!("{}{}{}{}", M[n / 1000], C[n / 100 % 10], X[n / 10 % 10], I[n % 10]).into_bytes()
}

/// numeric_out_sci: one digit before the point, `scale` after it (rounded
/// half away from zero), and an exponent of at least two digits. The
/// exponent is the unrounded value's, so 9.99 at scale 1 is "10.0e+00".
fn numeric_out_sci(v: &Numeric, scale: i32) -> String {
    let Some((int, dscale)) = v.to_parts() else {
        return v.to_string();
    };
    let scale = scale.max(0) as u32;
    if int.is_zero() {
        let frac = if scale > 0 { format!(".{}", "0".repeat(scale as usize)) } else { String::new() };
        return format!("0{frac}e+00");
    }
    let mag = int.abs();
    let digits = mag.to_string().len() as i64;
    let exponent = digits - 1 - dscale as i64;
    // The significand |v| / 10^exponent, as an integer with `scale` decimals.
    let shift = scale as i64 - (digits - 1);
    let sig: BigInt = if shift >= 0 {
        mag * BigInt::from(10).pow(shift as u32)
    } else {
        let d = BigInt::from(10).pow((-shift) as u32);
        (mag + &d / 2) / d
    };
    let mut s = sig.to_string();
    if scale > 0 {
        if s.len() <= scale as usize {
            s = format!("{}{}", "0".repeat(scale as usize + 1 - s.len()), s);
        }
        s.insert(s.len() - scale as usize, '.');
    }
    let sign = if int.is_negative() { "-" } else { "" };
    format!("{sign}{s}e{exponent:+03}")
}

/// `%.*f` as PostgreSQL's snprintf prints it: NaN and infinities spelled
/// out, finite values exactly rounded like C's printf.
fn c_fixed(v: f64, prec: usize) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v < 0.0 { "-Infinity".into() } else { "Infinity".into() }
    } else {
        format!("{v:.prec$}")
    }
}

/// `%+.*e` for a finite value: "+1.50e+03".
fn c_sci(v: f64, prec: usize) -> String {
    let s = format!("{:.prec$e}", v.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if v.is_sign_negative() { '-' } else { '+' };
    format!("{sign}{mant}e{exp:+03}")
}

/// The (C) conversion of a double to int32 for an out-of-range value on
/// x86-64 gives INT_MIN; int4_to_char's V multiplier relies on it.
fn c_double_to_i32(v: f64) -> i32 {
    if v.is_nan() || v >= 2147483648.0 || v < -2147483648.0 {
        i32::MIN
    } else {
        v as i32
    }
}

fn parse_for_to_char(fmt: &str) -> PgResult<Option<(Vec<Node>, NumDesc)>> {
    if fmt.is_empty() {
        return Ok(None);
    }
    parse_template(fmt).map(Some)
}

/// to_char(numeric, text).
pub fn numeric_to_char(value: &Numeric, fmt: &str) -> PgResult<String> {
    let Some((nodes, mut num)) = parse_for_to_char(fmt)? else { return Ok(String::new()) };
    let (number, pre_spaces, sign) = if num.is(F_ROMAN) {
        (int_to_roman(value.round(0)?.to_i32()?), 0, 0)
    } else if num.is(F_EEEE) {
        let org = numeric_out_sci(value, num.post);
        let number = if !value.is_finite() {
            eeee_special_pattern(num.pre, num.post)
        } else if !org.starts_with('-') {
            format!(" {org}").into_bytes()
        } else {
            org.into_bytes()
        };
        (number, 0, 0)
    } else {
        let mut val = value.clone();
        if num.is(F_MULTI) {
            let factor = Numeric::from_i64(10).power(&Numeric::from_i64(num.multi as i64))?;
            val = value.mul(&factor)?;
            num.pre += num.multi;
        }
        let (sign, digits) = split_sign(val.round(num.post)?.to_string());
        let (number, spaces) = fit_digits(digits, &num);
        (number, spaces, sign)
    };
    process_to_char(&nodes, num, &number, pre_spaces, sign)
}

/// The integer types' shared tail: digits padded with `post` zeros after a point.
fn integer_digits(text: String, num: &NumDesc) -> (Vec<u8>, i32, u8) {
    let (sign, digits) = split_sign(text);
    let pre_len = digits.len() as i32;
    let numstr = if num.post > 0 { format!("{digits}.{}", "0".repeat(num.post as usize)) } else { digits };
    let (number, spaces) = if pre_len > num.pre { (overflow_pattern(num.pre, num.post), 0) } else { (numstr.into_bytes(), num.pre - pre_len) };
    (number, spaces, sign)
}

/// to_char(integer, text).
pub fn int4_to_char(value: i32, fmt: &str) -> PgResult<String> {
    let Some((nodes, mut num)) = parse_for_to_char(fmt)? else { return Ok(String::new()) };
    let (number, pre_spaces, sign) = if num.is(F_ROMAN) {
        (int_to_roman(value), 0, 0)
    } else if num.is(F_EEEE) {
        let mut s = c_sci(value as f64, num.post as usize);
        if s.starts_with('+') {
            s.replace_range(0..1, " ");
        }
        (s.into_bytes(), 0, 0)
    } else {
        let mut v = value;
        if num.is(F_MULTI) {
            // PostgreSQL multiplies in (wrapping) int32 arithmetic here.
            v = value.wrapping_mul(c_double_to_i32(10f64.powi(num.multi)));
            num.pre += num.multi;
        }
        integer_digits(v.to_string(), &num)
    };
    process_to_char(&nodes, num, &number, pre_spaces, sign)
}

/// to_char(bigint, text).
pub fn int8_to_char(value: i64, fmt: &str) -> PgResult<String> {
    let Some((nodes, mut num)) = parse_for_to_char(fmt)? else { return Ok(String::new()) };
    let out_of_range = |t: &str| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("{t} out of range"));
    let (number, pre_spaces, sign) = if num.is(F_ROMAN) {
        let v = i32::try_from(value).map_err(|_| out_of_range("integer"))?;
        (int_to_roman(v), 0, 0)
    } else if num.is(F_EEEE) {
        let org = numeric_out_sci(&Numeric::from_i64(value), num.post);
        let number = if org.starts_with('-') { org } else { format!(" {org}") };
        (number.into_bytes(), 0, 0)
    } else {
        let mut v = value;
        if num.is(F_MULTI) {
            let multi = 10f64.powi(num.multi);
            // dtoi8 then int8mul, each failing on overflow.
            if !(multi < 9223372036854775808.0) {
                return Err(out_of_range("bigint"));
            }
            v = value.checked_mul(multi as i64).ok_or_else(|| out_of_range("bigint"))?;
            num.pre += num.multi;
        }
        integer_digits(v.to_string(), &num)
    };
    process_to_char(&nodes, num, &number, pre_spaces, sign)
}

/// The float types' shared part: `digits` is DBL_DIG or FLT_DIG, the
/// significant digits the value is trusted to, which caps the decimals.
fn float_digits(val: f64, num: &mut NumDesc, digits: i32) -> (Vec<u8>, i32, u8) {
    let pre_len = c_fixed(val.abs(), 0).len() as i32;
    if pre_len >= digits {
        num.post = 0;
    } else if pre_len + num.post > digits {
        num.post = digits - pre_len;
    }
    let (sign, text) = split_sign(c_fixed(val, num.post as usize));
    let (number, spaces) = fit_digits(text, num);
    (number, spaces, sign)
}

fn float_eeee(value: f64, num: &NumDesc) -> Vec<u8> {
    if value.is_nan() || value.is_infinite() {
        return eeee_special_pattern(num.pre, num.post);
    }
    let mut s = c_sci(value, num.post as usize);
    if s.starts_with('+') {
        s.replace_range(0..1, " ");
    }
    s.into_bytes()
}

/// rint() then a C cast to int, as float*_to_char feed Roman numerals.
fn float_to_roman(v: f64) -> Vec<u8> {
    let r = v.round_ties_even();
    int_to_roman(if r.is_nan() || !(-2147483648.0..2147483648.0).contains(&r) { i32::MIN } else { r as i32 })
}

/// to_char(double precision, text).
pub fn float8_to_char(value: f64, fmt: &str) -> PgResult<String> {
    let Some((nodes, mut num)) = parse_for_to_char(fmt)? else { return Ok(String::new()) };
    let (number, pre_spaces, sign) = if num.is(F_ROMAN) {
        (float_to_roman(value), 0, 0)
    } else if num.is(F_EEEE) {
        (float_eeee(value, &num), 0, 0)
    } else {
        let mut val = value;
        if num.is(F_MULTI) {
            val = value * 10f64.powi(num.multi);
            num.pre += num.multi;
        }
        float_digits(val, &mut num, 15)
    };
    process_to_char(&nodes, num, &number, pre_spaces, sign)
}

/// to_char(real, text): like float8's, in single precision.
pub fn float4_to_char(value: f32, fmt: &str) -> PgResult<String> {
    let Some((nodes, mut num)) = parse_for_to_char(fmt)? else { return Ok(String::new()) };
    let (number, pre_spaces, sign) = if num.is(F_ROMAN) {
        (float_to_roman(value as f64), 0, 0)
    } else if num.is(F_EEEE) {
        (float_eeee(value as f64, &num), 0, 0)
    } else {
        let mut val = value;
        if num.is(F_MULTI) {
            val = value * (10f64.powi(num.multi) as f32);
            num.pre += num.multi;
        }
        float_digits(val as f64, &mut num, 6)
    };
    process_to_char(&nodes, num, &number, pre_spaces, sign)
}

// ---------------------------------------------------------------- to_number

/// NUMProc for to_number: reads `input` against the template into
/// `number`, a string numeric_in accepts (sign byte first).
struct ReadProc<'a> {
    num: NumDesc,
    input: &'a [u8],
    p: usize,
    number: Vec<u8>,
    read_dec: bool,
    read_pre: i32,
    read_post: i32,
}

impl ReadProc<'_> {
    fn at(&self, i: usize) -> u8 {
        self.input.get(i).copied().unwrap_or(0)
    }

    fn overload(&self) -> bool {
        self.p >= self.input.len()
    }

    /// AMOUNT_TEST: at least `n` bytes remain.
    fn amount(&self, n: usize) -> bool {
        self.p + n <= self.input.len()
    }

    fn at_str(&self, s: &str) -> bool {
        self.amount(s.len()) && self.input[self.p..].starts_with(s.as_bytes())
    }

    /// NUM_eat_non_data_chars: skips up to `n` characters that cannot be
    /// part of a number (for L, TH and unmatched sign keywords).
    fn eat_non_data_chars(&mut self, mut n: usize) {
        while n > 0 {
            n -= 1;
            if self.overload() || b"0123456789.,+-".contains(&self.at(self.p)) {
                break;
            }
            self.p += utf8_len(self.at(self.p));
        }
    }

    /// NUM_numpart_from_char: reads a digit or the decimal point, and a
    /// sign before the first digit or after the last.
    fn numpart(&mut self, id: Key) {
        if self.overload() {
            return;
        }
        if self.at(self.p) == b' ' {
            self.p += 1;
        }
        if self.overload() {
            return;
        }
        if self.number[0] == b' ' && matches!(id, Key::Zero | Key::Nine) && self.read_pre + self.read_post == 0 {
            if self.num.is(F_LSIGN) && self.num.lsign == LSIGN_PRE {
                if self.at_str(NEGATIVE_SIGN) {
                    self.p += NEGATIVE_SIGN.len();
                    self.number[0] = b'-';
                } else if self.at_str(POSITIVE_SIGN) {
                    self.p += POSITIVE_SIGN.len();
                    self.number[0] = b'+';
                }
            } else {
                let c = self.at(self.p);
                if c == b'-' || (self.num.is(F_BRACKET) && c == b'<') {
                    self.number[0] = b'-';
                    self.p += 1;
                } else if c == b'+' {
                    self.number[0] = b'+';
                    self.p += 1;
                }
            }
        }
        if self.overload() {
            return;
        }

        let mut isread = false;
        let c = self.at(self.p);
        if c.is_ascii_digit() {
            if self.read_dec && self.read_post == self.num.post {
                return;
            }
            self.number.push(c);
            if self.read_dec {
                self.read_post += 1;
            } else {
                self.read_pre += 1;
            }
            isread = true;
        } else if self.num.is(F_DECIMAL) && !self.read_dec && self.at_str(DECIMAL_POINT) {
            self.p += DECIMAL_POINT.len() - 1;
            self.number.push(b'.');
            self.read_dec = true;
            isread = true;
        }
        if self.overload() {
            return;
        }

        // A sign right after the last digit read ("123.001-" with FM...S).
        if self.number[0] == b' ' && self.read_pre + self.read_post > 0 {
            if self.num.is(F_LSIGN) && isread && self.p + 1 < self.input.len() && !self.at(self.p + 1).is_ascii_digit() {
                let tmp = self.p;
                self.p += 1;
                if self.at_str(NEGATIVE_SIGN) {
                    self.p += NEGATIVE_SIGN.len() - 1;
                    self.number[0] = b'-';
                } else if self.at_str(POSITIVE_SIGN) {
                    self.p += POSITIVE_SIGN.len() - 1;
                    self.number[0] = b'+';
                }
                if self.number[0] == b' ' {
                    self.p = tmp;
                }
            } else if !isread && !self.num.is(F_LSIGN) && (self.num.is(F_PLUS) || self.num.is(F_MINUS)) {
                let c = self.at(self.p);
                if c == b'-' || c == b'+' {
                    self.number[0] = c;
                }
            }
        }
    }
}

/// The byte length of the UTF-8 character starting with `b` (pg_mblen).
fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// NUM_processor in the to_number direction; returns the text for
/// numeric_in and leaves the digits read after the point in `num.post`.
fn process_from_char(nodes: &[Node], num: &mut NumDesc, input: &[u8]) -> PgResult<String> {
    if num.is(F_EEEE) {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "\"EEEE\" not supported for input"));
    }
    if num.is(F_ROMAN) {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "\"RN\" not supported for input"));
    }
    let mut p = ReadProc { num: *num, input, p: 0, number: vec![b' '], read_dec: false, read_pre: 0, read_post: 0 };
    let fillmode = num.is(F_FILLMODE);
    for node in nodes {
        if p.overload() {
            break;
        }
        let key = match node {
            // Literal template text skips one input character, whatever it is.
            Node::Char(_) => {
                p.p += utf8_len(p.at(p.p));
                continue;
            }
            Node::Action(k) => *k,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dec | Key::D => p.numpart(key),
            Key::Comma => {
                if fillmode || p.at(p.p) != b',' {
                    continue;
                }
            }
            Key::G => {
                if fillmode || !p.at_str(THOUSANDS_SEP) {
                    continue;
                }
                p.p += THOUSANDS_SEP.len() - 1;
            }
            Key::L => {
                p.eat_non_data_chars(CURRENCY_SYMBOL.chars().count());
                continue;
            }
            Key::ThUpper | Key::ThLower => {
                if num.is(F_DECIMAL) {
                    continue;
                }
                p.eat_non_data_chars(2);
                continue;
            }
            Key::Mi | Key::Pl | Key::Sg => {
                let c = p.at(p.p);
                let accepted = match key {
                    Key::Mi => c == b'-',
                    Key::Pl => c == b'+',
                    _ => c == b'-' || c == b'+',
                };
                if accepted {
                    p.number[0] = c;
                } else {
                    p.eat_non_data_chars(1);
                    continue;
                }
            }
            _ => continue,
        }
        p.p += 1;
    }
    if p.number.len() > 1 && p.number.last() == Some(&b'.') {
        p.number.pop();
    }
    num.post = p.read_post;
    Ok(String::from_utf8_lossy(&p.number).into_owned())
}

/// to_number(text, text); None (NULL) for an empty template.
pub fn numeric_to_number(text: &str, fmt: &str) -> PgResult<Option<Numeric>> {
    if fmt.is_empty() {
        return Ok(None);
    }
    let (nodes, mut num) = parse_template(fmt)?;
    let numstr = process_from_char(&nodes, &mut num, text.as_bytes())?;
    // numeric_in with typmod numeric(pre + multi + read decimals, read decimals).
    let scale = num.post;
    let precision = num.pre + num.multi + scale;
    let typmod = ((precision << 16) | scale) + 4;
    let mut result = Numeric::parse(&numstr)?.apply_typmod(typmod)?;
    if num.is(F_MULTI) {
        let factor = Numeric::from_i64(10).power(&Numeric::from_i64(-(num.multi as i64)))?;
        result = result.mul(&factor)?;
    }
    Ok(Some(result))
}

// ---------------------------------------------------------------- registration

fn to_char_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let fmt = arg_str(a, 1);
    let s = match &a[0] {
        Datum::Numeric(n) => numeric_to_char(n, fmt)?,
        Datum::Int4(v) => int4_to_char(*v, fmt)?,
        Datum::Int2(v) => int4_to_char(*v as i32, fmt)?,
        Datum::Int8(v) => int8_to_char(*v, fmt)?,
        Datum::Float4(v) => float4_to_char(*v, fmt)?,
        Datum::Float8(v) => float8_to_char(*v, fmt)?,
        _ => return Ok(Datum::Null),
    };
    Ok(Datum::from_string(s))
}

fn to_number_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(numeric_to_number(arg_str(a, 0), arg_str(a, 1))?.map(Datum::numeric).unwrap_or(Datum::Null))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["numeric_to_char", "int4_to_char", "int8_to_char", "float4_to_char", "float8_to_char"], to_char_fn);
    plain(r, &["numeric_to_number"], to_number_fn);
}
