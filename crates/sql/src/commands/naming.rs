//! Names PostgreSQL generates for implicit objects (indexch.c's
//! ChooseRelationName, makeObjectName): `t_pkey`, `t_a_key`, `t_a_b_idx`,
//! `t_id_seq`, `t_a_check`, `t_b_fkey`, truncated to 63 bytes and made
//! unique with a number.

/// NAMEDATALEN - 1
pub const MAX_IDENTIFIER_LEN: usize = 63;

/// Truncates to at most `len` bytes on a character boundary.
pub fn clip(s: &str, len: usize) -> &str {
    if s.len() <= len {
        return s;
    }
    let mut end = len;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// makeObjectName: name1[_name2][_label], shortening name1/name2 (the longer first) to fit.
pub fn make_object_name(name1: &str, name2: Option<&str>, label: Option<&str>) -> String {
    let mut overhead = 0;
    if let Some(n2) = name2 {
        overhead += 1;
        let _ = n2;
    }
    if let Some(l) = label {
        overhead += l.len() + 1;
    }
    let avail = MAX_IDENTIFIER_LEN.saturating_sub(overhead);
    let mut n1 = name1.len();
    let mut n2 = name2.map(|s| s.len()).unwrap_or(0);
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let mut out = clip(name1, n1).to_string();
    if let Some(s) = name2 {
        out.push('_');
        out.push_str(clip(s, n2));
    }
    if let Some(l) = label {
        out.push('_');
        out.push_str(l);
    }
    out
}

/// ChooseRelationName: the first candidate for which `taken` is false.
pub fn choose_name(name1: &str, name2: Option<&str>, label: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let mut pass = 0;
    loop {
        let l = if pass == 0 { label.to_string() } else { format!("{label}{pass}") };
        let candidate = make_object_name(name1, name2, Some(&l));
        if !taken(&candidate) {
            return candidate;
        }
        pass += 1;
    }
}

/// Truncates an identifier the way the lexer does (with PostgreSQL's NOTICE left to the caller).
pub fn truncate_identifier(s: &str) -> String {
    clip(s, MAX_IDENTIFIER_LEN).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_like_postgres() {
        assert_eq!(make_object_name("t", Some("a_b"), Some("key")), "t_a_b_key");
        assert_eq!(make_object_name("t", None, Some("pkey")), "t_pkey");
        let long = "x".repeat(70);
        let n = make_object_name(&long, Some("col"), Some("seq"));
        assert_eq!(n.len(), 63);
        assert!(n.ends_with("_col_seq"));
        assert_eq!(choose_name("t", Some("a"), "key", &|n| n == "t_a_key"), "t_a_key1");
    }
}
