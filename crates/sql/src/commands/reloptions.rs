//! Relation storage parameters: `CREATE TABLE/INDEX/VIEW ... WITH (...)`
//! and `ALTER TABLE/INDEX/VIEW ... SET (...) / RESET (...)`, kept as
//! PostgreSQL keeps them in `pg_class.reloptions` (access/common/reloptions.c):
//! a text array of `name=value`, validated against the options each kind of
//! relation accepts, with PostgreSQL's bounds and messages.
//!
//! Tusk's storage ignores most of them (fillfactor, autovacuum_*): RocksDB
//! has no pages to leave free and nothing to vacuum. They are still checked
//! and kept, so that schemas written for PostgreSQL load unchanged and
//! clients (psql's `\d+`, pg_dump) read back what was set.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use crate::catalog::{RelKind, Relation};

/// The families of relations whose options differ (RELOPT_KIND_*).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OptionKind {
    Heap,
    Toast,
    Btree,
    Hash,
    View,
    Gin,
}

const HEAP: u8 = 1;
const TOAST: u8 = 2;
const BTREE: u8 = 4;
const HASH: u8 = 8;
const VIEW: u8 = 16;
const GIN: u8 = 32;

impl OptionKind {
    fn bit(self) -> u8 {
        match self {
            OptionKind::Heap => HEAP,
            OptionKind::Toast => TOAST,
            OptionKind::Btree => BTREE,
            OptionKind::Hash => HASH,
            OptionKind::View => VIEW,
            OptionKind::Gin => GIN,
        }
    }

    /// The options of an index built with access method `method`.
    pub fn for_index_method(method: &str) -> OptionKind {
        if method == "hash" {
            OptionKind::Hash
        } else if method == "gin" {
            OptionKind::Gin
        } else {
            OptionKind::Btree
        }
    }
}

enum OptionType {
    Bool,
    Int { min: i64, max: i64 },
    Real { min: f64, max: f64 },
    Enum { values: &'static [&'static str], detail: &'static str },
}

struct OptionDef {
    name: &'static str,
    kinds: u8,
    ty: OptionType,
}

const INT_MAX: i64 = i32::MAX as i64;
const CLEANUP_VALUES: &[&str] = &["auto", "on", "off", "true", "false", "yes", "no", "1", "0"];

/// PostgreSQL 15's built-in relation options of the kinds Tusk has
/// (boolRelOpts, intRelOpts, realRelOpts and enumRelOpts), in its order.
const OPTIONS: &[OptionDef] = &[
    OptionDef { name: "autovacuum_enabled", kinds: HEAP | TOAST, ty: OptionType::Bool },
    OptionDef { name: "user_catalog_table", kinds: HEAP, ty: OptionType::Bool },
    OptionDef { name: "security_barrier", kinds: VIEW, ty: OptionType::Bool },
    OptionDef { name: "security_invoker", kinds: VIEW, ty: OptionType::Bool },
    OptionDef { name: "vacuum_truncate", kinds: HEAP | TOAST, ty: OptionType::Bool },
    OptionDef { name: "fastupdate", kinds: GIN, ty: OptionType::Bool },
    OptionDef { name: "deduplicate_items", kinds: BTREE, ty: OptionType::Bool },
    OptionDef { name: "fillfactor", kinds: HEAP | BTREE | HASH, ty: OptionType::Int { min: 10, max: 100 } },
    OptionDef { name: "autovacuum_vacuum_threshold", kinds: HEAP | TOAST, ty: OptionType::Int { min: 0, max: INT_MAX } },
    OptionDef { name: "autovacuum_vacuum_insert_threshold", kinds: HEAP | TOAST, ty: OptionType::Int { min: -1, max: INT_MAX } },
    OptionDef { name: "autovacuum_analyze_threshold", kinds: HEAP, ty: OptionType::Int { min: 0, max: INT_MAX } },
    OptionDef { name: "autovacuum_vacuum_cost_limit", kinds: HEAP | TOAST, ty: OptionType::Int { min: 1, max: 10000 } },
    OptionDef { name: "autovacuum_freeze_min_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 0, max: 1_000_000_000 } },
    OptionDef { name: "autovacuum_multixact_freeze_min_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 0, max: 1_000_000_000 } },
    OptionDef { name: "autovacuum_freeze_max_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 100_000, max: 2_000_000_000 } },
    OptionDef { name: "autovacuum_multixact_freeze_max_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 10_000, max: 2_000_000_000 } },
    OptionDef { name: "autovacuum_freeze_table_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 0, max: 2_000_000_000 } },
    OptionDef { name: "autovacuum_multixact_freeze_table_age", kinds: HEAP | TOAST, ty: OptionType::Int { min: 0, max: 2_000_000_000 } },
    OptionDef { name: "log_autovacuum_min_duration", kinds: HEAP | TOAST, ty: OptionType::Int { min: -1, max: INT_MAX } },
    OptionDef { name: "toast_tuple_target", kinds: HEAP, ty: OptionType::Int { min: 128, max: 8160 } },
    OptionDef { name: "parallel_workers", kinds: HEAP, ty: OptionType::Int { min: 0, max: 1024 } },
    OptionDef { name: "gin_pending_list_limit", kinds: GIN, ty: OptionType::Int { min: 64, max: INT_MAX / 1024 } },
    OptionDef { name: "autovacuum_vacuum_cost_delay", kinds: HEAP | TOAST, ty: OptionType::Real { min: 0.0, max: 100.0 } },
    OptionDef { name: "autovacuum_vacuum_scale_factor", kinds: HEAP | TOAST, ty: OptionType::Real { min: 0.0, max: 100.0 } },
    OptionDef { name: "autovacuum_vacuum_insert_scale_factor", kinds: HEAP | TOAST, ty: OptionType::Real { min: 0.0, max: 100.0 } },
    OptionDef { name: "autovacuum_analyze_scale_factor", kinds: HEAP, ty: OptionType::Real { min: 0.0, max: 100.0 } },
    OptionDef { name: "vacuum_cleanup_index_scale_factor", kinds: BTREE, ty: OptionType::Real { min: 0.0, max: 1e10 } },
    OptionDef {
        name: "vacuum_index_cleanup",
        kinds: HEAP | TOAST,
        ty: OptionType::Enum { values: CLEANUP_VALUES, detail: "Valid values are \"on\", \"off\", and \"auto\"." },
    },
    OptionDef {
        name: "check_option",
        kinds: VIEW,
        ty: OptionType::Enum { values: &["local", "cascaded"], detail: "Valid values are \"local\" and \"cascaded\"." },
    },
];

/// Which option namespaces a statement accepts: tables take `toast.`,
/// indexes and views none.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// Only options without a namespace.
    None,
    /// `toast.` as well (CREATE/ALTER TABLE).
    Toast,
}

/// One `name [= value]` item of a WITH (...) / SET (...) / RESET (...) list.
pub struct OptionItem {
    pub namespace: Option<String>,
    pub name: String,
    pub value: Option<String>,
}

/// The DefElems of an option list.
pub fn items(list: &[pb::Node]) -> Vec<OptionItem> {
    list.iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::DefElem(de)) => Some(OptionItem {
                namespace: (!de.defnamespace.is_empty()).then(|| de.defnamespace.clone()),
                name: de.defname.clone(),
                value: de.arg.as_deref().map(def_arg_text),
            }),
            _ => None,
        })
        .collect()
}

/// defGetString: an option's argument as text.
fn def_arg_text(arg: &pb::Node) -> String {
    match &arg.node {
        Some(NodeEnum::TypeName(t)) => {
            let names: Vec<String> = t.names.iter().filter_map(crate::analyzer::const_text).collect();
            names.join(".")
        }
        Some(NodeEnum::List(l)) => l.items.iter().filter_map(crate::analyzer::const_text).collect::<Vec<_>>().join("."),
        _ => crate::analyzer::const_text(arg).unwrap_or_default(),
    }
}

/// transformRelOptions: the text array `old` with `list` applied — for
/// CREATE and SET, each item of namespace `namespace` replaces any old
/// entry of its name and is appended; for RESET, the named entries are
/// removed. `allowed` says which namespaces may appear at all.
/// `accept_oids_off` lets CREATE TABLE's `oids = false` through (and refuses `oids = true`).
pub fn transform(
    old: &[String],
    list: &[OptionItem],
    namespace: Option<&str>,
    allowed: Namespaces,
    accept_oids_off: bool,
    reset: bool,
) -> PgResult<Vec<String>> {
    if list.is_empty() {
        return Ok(old.to_vec());
    }
    let in_namespace = |item: &OptionItem| item.namespace.as_deref() == namespace;
    let mut out: Vec<String> = old
        .iter()
        .filter(|entry| {
            !list.iter().any(|item| {
                in_namespace(item) && entry.len() > item.name.len() && entry.starts_with(item.name.as_str()) && entry.as_bytes()[item.name.len()] == b'='
            })
        })
        .cloned()
        .collect();
    for item in list {
        if reset {
            if item.value.is_some() {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "RESET must not include values for parameters"));
            }
            continue;
        }
        if let Some(nsp) = &item.namespace {
            let valid = allowed == Namespaces::Toast && nsp == "toast";
            if !valid {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized parameter namespace \"{nsp}\"")));
            }
        }
        if !in_namespace(item) {
            continue;
        }
        let value = item.value.clone().unwrap_or_else(|| "true".to_string());
        if accept_oids_off && item.namespace.is_none() && item.name == "oids" {
            if crate::settings::parse_bool(&value) != Some(false) {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "tables declared WITH OIDS are not supported"));
            }
            continue;
        }
        out.push(format!("{}={}", item.name, value));
    }
    Ok(out)
}

/// parseRelOptions with validation: every entry must be an option of
/// `kind`, given once, with a value of its type within its bounds.
pub fn validate(options: &[String], kind: OptionKind) -> PgResult<()> {
    let mut seen: Vec<&str> = Vec::new();
    for entry in options {
        let def = OPTIONS.iter().find(|d| {
            d.kinds & kind.bit() != 0 && entry.len() > d.name.len() && entry.starts_with(d.name) && entry.as_bytes()[d.name.len()] == b'='
        });
        let Some(def) = def else {
            let name = entry.split('=').next().unwrap_or(entry);
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized parameter \"{name}\"")));
        };
        if seen.contains(&def.name) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("parameter \"{}\" specified more than once", def.name)));
        }
        seen.push(def.name);
        let value = &entry[def.name.len() + 1..];
        let invalid = |what: &str| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for {what} option \"{}\": {value}", def.name));
        let out_of_bounds = || PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("value {value} out of bounds for option \"{}\"", def.name));
        match &def.ty {
            OptionType::Bool => {
                crate::settings::parse_bool(value).ok_or_else(|| invalid("boolean"))?;
            }
            OptionType::Int { min, max } => {
                let v = parse_int(value).ok_or_else(|| invalid("integer"))?;
                if v < *min || v > *max {
                    return Err(out_of_bounds().with_detail(format!("Valid values are between \"{min}\" and \"{max}\".")));
                }
            }
            OptionType::Real { min, max } => {
                let v = parse_real(value).ok_or_else(|| invalid("floating point"))?;
                if v < *min || v > *max {
                    return Err(out_of_bounds().with_detail(format!("Valid values are between \"{min:.6}\" and \"{max:.6}\".")));
                }
            }
            OptionType::Enum { values, detail } => {
                if !values.iter().any(|v| v.eq_ignore_ascii_case(value)) {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for enum option \"{}\": {value}", def.name))
                        .with_detail(detail.to_string()));
                }
            }
        }
    }
    Ok(())
}

/// The value an option list gives `name`, if any.
pub fn get<'a>(options: &'a [String], name: &str) -> Option<&'a str> {
    options.iter().find_map(|e| e.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// guc.c's parse_int without units: strtol's syntax (leading blanks, a
/// sign, 0x hex, leading-0 octal); text that stops at a '.', an exponent
/// or overflows is read again as strtod reads it and rounded (rint); then
/// trailing blanks only, and the result must fit in an int.
fn parse_int(value: &str) -> Option<i64> {
    let s = value.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let sign_len = usize::from(s.starts_with(['+', '-']));
    let body = &s[sign_len..];
    let hex = body.len() > 2 && (body.starts_with("0x") || body.starts_with("0X")) && body.as_bytes()[2].is_ascii_hexdigit();
    let (radix, skip) = if hex { (16, 2) } else if body.starts_with('0') { (8, 0) } else { (10, 0) };
    let digits = &body[skip..];
    let n = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    let parsed = if n == 0 { None } else { i64::from_str_radix(&digits[..n], radix).ok() };
    let rest = &digits[n..];
    let (v, rest) = if rest.starts_with(['.', 'e', 'E']) || (n > 0 && parsed.is_none()) {
        let end = float_prefix_len(s);
        if end == 0 {
            return None;
        }
        let f: f64 = s[..end].parse().ok()?;
        if !f.is_finite() {
            return None;
        }
        let r = round_half_even(f);
        if r > i32::MAX as f64 || r < i32::MIN as f64 {
            return None;
        }
        (r as i64, &s[end..])
    } else {
        let v = parsed?;
        (if s.starts_with('-') { -v } else { v }, rest)
    };
    if !rest.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() || v > i32::MAX as i64 || v < i32::MIN as i64 {
        return None;
    }
    Some(v)
}

/// rint() under the default rounding mode.
fn round_half_even(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - f.signum()
    } else {
        r
    }
}

/// How much of `s` (after leading blanks) strtod would read as a decimal number.
fn float_prefix_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - start_digits;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return 0;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > e {
            i = j;
        }
    }
    i
}

/// guc.c's parse_real without units: strtod's syntax, finite, not NaN.
fn parse_real(value: &str) -> Option<f64> {
    let s = value.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let lower = s.trim_end_matches(|c: char| c.is_ascii_whitespace()).to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if unsigned == "inf" || unsigned == "infinity" {
        return Some(if lower.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    let end = float_prefix_len(s);
    if end == 0 {
        return None;
    }
    if !s[end..].trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() {
        return None;
    }
    let f: f64 = s[..end].parse().ok()?;
    // strtod reports ERANGE for overflow and for underflow to zero
    if !f.is_finite() || (f == 0.0 && s[..end].bytes().any(|c| (b'1'..=b'9').contains(&c)) && !mantissa_is_zero(&s[..end])) {
        return None;
    }
    Some(f)
}

fn mantissa_is_zero(num: &str) -> bool {
    let mantissa = num.split(['e', 'E']).next().unwrap_or(num);
    !mantissa.bytes().any(|c| (b'1'..=b'9').contains(&c))
}

/// ruleutils.c's flatten_reloptions: `name=value, ...` as pg_get_indexdef
/// and pg_get_viewdef's callers print them, each value quoted unless it
/// reads as a plain identifier.
pub fn flatten(options: &[String]) -> String {
    options
        .iter()
        .map(|o| {
            let (name, value) = o.split_once('=').unwrap_or((o.as_str(), ""));
            let quoted_value = crate::functions::quote_ident(value);
            let value = if quoted_value == value { value.to_string() } else { crate::functions::ruleutils::quote_literal(value) };
            format!("{}={}", crate::functions::quote_ident(name), value)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// CREATE TABLE's WITH list: the table's options and its TOAST table's
/// (DefineRelation, then ProcessUtilitySlow for the `toast.` ones).
pub fn for_table(list: &[pb::Node]) -> PgResult<(Vec<String>, Vec<String>)> {
    let items = items(list);
    let heap = transform(&[], &items, None, Namespaces::Toast, true, false)?;
    validate(&heap, OptionKind::Heap)?;
    let toast = transform(&[], &items, Some("toast"), Namespaces::Toast, true, false)?;
    validate(&toast, OptionKind::Toast)?;
    Ok((heap, toast))
}

/// CREATE INDEX's WITH list, checked by the access method (DefineIndex).
pub fn for_index(list: &[pb::Node], method: &str) -> PgResult<Vec<String>> {
    let options = transform(&[], &items(list), None, Namespaces::None, false, false)?;
    validate(&options, OptionKind::for_index_method(method))?;
    Ok(options)
}

/// CREATE VIEW's WITH list, with WITH [LOCAL|CASCADED] CHECK OPTION as
/// the `check_option` it stands for (DefineView).
pub fn for_view(list: &[pb::Node], check_option: Option<&str>) -> PgResult<Vec<String>> {
    let mut items = items(list);
    if let Some(c) = check_option {
        items.push(OptionItem { namespace: None, name: "check_option".into(), value: Some(c.to_string()) });
    }
    let options = transform(&[], &items, None, Namespaces::None, false, false)?;
    validate(&options, OptionKind::View)?;
    Ok(options)
}

/// ALTER ... SET (...), RESET (...) or the replacement of the whole list.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Alteration {
    Set,
    Reset,
    Replace,
}

/// ATExecSetRelOptions: `rel` with its options (and its TOAST table's)
/// changed by `list`, validated for its kind. A view's `check_option`
/// also becomes the check its updates apply.
pub fn altered(rel: &Relation, list: &[pb::Node], how: Alteration) -> PgResult<Relation> {
    let kind = match rel.kind {
        RelKind::Table => OptionKind::Heap,
        RelKind::View => OptionKind::View,
        RelKind::Index => OptionKind::for_index_method(rel.index.as_ref().map(|i| i.method.as_str()).unwrap_or("btree")),
        other => {
            let action = if how == Alteration::Reset { "RESET" } else { "SET" };
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("ALTER action {action} cannot be performed on relation \"{}\"", rel.name))
                .with_detail(format!("This operation is not supported for {}.", relkind_plural(other))));
        }
    };
    let items = items(list);
    if items.is_empty() && how != Alteration::Replace {
        return Ok(rel.clone());
    }
    let allowed = if kind == OptionKind::Heap { Namespaces::Toast } else { Namespaces::None };
    let old: &[String] = if how == Alteration::Replace { &[] } else { &rel.options };
    let options = transform(old, &items, None, allowed, false, how == Alteration::Reset)?;
    validate(&options, kind)?;
    let mut out = rel.clone();
    if let (Some(view), OptionKind::View) = (out.view.as_mut(), kind) {
        view.check_option = get(&options, "check_option").map(str::to_ascii_lowercase);
    }
    out.options = options;
    if let Some(toast) = out.toast.as_mut() {
        let old: &[String] = if how == Alteration::Replace { &[] } else { &toast.options };
        let options = transform(old, &items, Some("toast"), allowed, false, how == Alteration::Reset)?;
        validate(&options, OptionKind::Toast)?;
        toast.options = options;
    }
    Ok(out)
}

/// errdetail_relkind_not_supported's noun.
pub(crate) fn relkind_plural(kind: RelKind) -> &'static str {
    match kind {
        RelKind::Table => "tables",
        RelKind::Index => "indexes",
        RelKind::Sequence => "sequences",
        RelKind::View => "views",
        RelKind::ForeignTable => "foreign tables",
        RelKind::CompositeType => "composite types",
    }
}

/// needs_toast_table: whether PostgreSQL would give a table with these
/// columns a TOAST table — some column may hold a value stored out of
/// line, and a row may be longer than TOAST_TUPLE_THRESHOLD.
pub fn needs_toast_table(rel: &Relation) -> bool {
    const TOAST_TUPLE_THRESHOLD: i64 = 2032;
    let maxalign = |n: i64| (n + 7) & !7;
    let b = crate::catalog::builtins();
    let mut data_length: i64 = 0;
    let mut unknown_length = false;
    let mut toastable = false;
    for c in rel.columns.iter().filter(|c| !c.dropped) {
        let (len, align, storage) = b.type_info(c.type_oid).map(|t| (t.len, t.align, t.storage)).unwrap_or((4, 'i', 'p'));
        let a: i64 = match align {
            'c' => 1,
            's' => 2,
            'd' => 8,
            _ => 4,
        };
        data_length = (data_length + a - 1) / a * a;
        if len > 0 {
            data_length += len as i64;
            continue;
        }
        match type_maximum_size(c.type_oid, c.typmod) {
            Some(max) => data_length += max,
            None => unknown_length = true,
        }
        if storage != 'p' {
            toastable = true;
        }
    }
    if !toastable {
        return false;
    }
    if unknown_length {
        return true;
    }
    let natts = rel.columns.len() as i64;
    maxalign(23 + (natts + 7) / 8) + maxalign(data_length) > TOAST_TUPLE_THRESHOLD
}

/// format_type.c's type_maximum_size for a UTF8 database; None when unbounded.
fn type_maximum_size(type_oid: tusk_types::oid::Oid, typmod: i32) -> Option<i64> {
    use tusk_types::oid;
    if typmod < 0 {
        return None;
    }
    let typmod = typmod as i64;
    match type_oid {
        oid::BPCHAR | oid::VARCHAR => Some((typmod - 4) * 4 + 4),
        oid::NUMERIC if typmod >= 4 => {
            let precision = ((typmod - 4) >> 16) & 0xffff;
            Some(8 + (precision + 6) / 4 * 2)
        }
        oid::BIT | oid::VARBIT => Some((typmod + 7) / 8 + 8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, value: Option<&str>) -> OptionItem {
        OptionItem { namespace: None, name: name.into(), value: value.map(String::from) }
    }

    #[test]
    fn integers_read_as_guc_c_reads_them() {
        assert_eq!(parse_int("30"), Some(30));
        assert_eq!(parse_int(" 40 "), Some(40));
        assert_eq!(parse_int("30.5"), Some(30));
        assert_eq!(parse_int("31.5"), Some(32));
        assert_eq!(parse_int("-30.1"), Some(-30));
        assert_eq!(parse_int("0x20"), Some(32));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("1e3"), Some(1000));
        assert_eq!(parse_int("true"), None);
        assert_eq!(parse_int("99999999999"), None);
        assert_eq!(parse_int(""), None);
    }

    #[test]
    fn reals_and_bounds() {
        assert_eq!(parse_real("0.2"), Some(0.2));
        assert_eq!(parse_real("1e3"), Some(1000.0));
        assert_eq!(parse_real("abc"), None);
        assert_eq!(parse_real("1e999"), None);
        let e = validate(&["autovacuum_analyze_scale_factor=-10.0".into()], OptionKind::Heap).unwrap_err();
        assert_eq!(e.message, "value -10.0 out of bounds for option \"autovacuum_analyze_scale_factor\"");
        assert_eq!(e.detail.as_deref(), Some("Valid values are between \"0.000000\" and \"100.000000\"."));
    }

    #[test]
    fn set_replaces_and_appends_reset_removes() {
        let old = vec!["fillfactor=30".to_string(), "autovacuum_enabled=false".into(), "autovacuum_analyze_scale_factor=0.2".into()];
        let set = [item("fillfactor", Some("31")), item("autovacuum_analyze_scale_factor", Some("0.3"))];
        let new = transform(&old, &set, None, Namespaces::Toast, false, false).unwrap();
        assert_eq!(new, vec!["autovacuum_enabled=false", "fillfactor=31", "autovacuum_analyze_scale_factor=0.3"]);
        let reset = transform(&new, &[item("fillfactor", None)], None, Namespaces::Toast, false, true).unwrap();
        assert_eq!(reset, vec!["autovacuum_enabled=false", "autovacuum_analyze_scale_factor=0.3"]);
        assert!(transform(&new, &[item("fillfactor", Some("1"))], None, Namespaces::Toast, false, true).is_err());
    }

    #[test]
    fn unknown_duplicate_and_kind() {
        assert!(validate(&["fillfactor=30".into(), "fillfactor=40".into()], OptionKind::Heap).is_err());
        assert!(validate(&["deduplicate_items=off".into()], OptionKind::Hash).is_err());
        assert!(validate(&["deduplicate_items=off".into()], OptionKind::Btree).is_ok());
        assert!(validate(&["fillfactor=50".into()], OptionKind::Toast).is_err());
        assert!(validate(&["vacuum_index_cleanup=YES".into()], OptionKind::Heap).is_ok());
    }

    #[test]
    fn flattened_as_ruleutils_prints_them() {
        assert_eq!(flatten(&["fillfactor=70".into(), "deduplicate_items=off".into()]), "fillfactor='70', deduplicate_items=off");
    }
}
