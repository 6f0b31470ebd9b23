//! Run-time settings (GUCs): SET, SHOW, RESET, set_config, current_setting,
//! pg_settings.
//!
//! The list of parameters, their boot values, types, units and limits is
//! PostgreSQL 15's own (recorded into `catalog/builtin/pg_settings.tsv`), so
//! SHOW answers every parameter a client may ask about. A handful of them
//! change Tusk's behaviour; their parsed values are cached in typed fields.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use tusk_types::datetime::{self, DateTimeSettings};
use tusk_types::{sqlstate, PgError, PgResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    Bool,
    Integer,
    Real,
    String,
    Enum,
}

#[derive(Clone, Debug)]
pub struct GucDef {
    pub name: String,
    pub boot: String,
    pub unit: String,
    pub category: String,
    pub short_desc: String,
    /// internal, postmaster, sighup, superuser-backend, backend, superuser, user
    pub context: String,
    pub vartype: VarType,
    pub min: String,
    pub max: String,
    pub enumvals: Vec<String>,
    pub extra_desc: String,
}

/// client_connection_check_interval's default in Tusk. PostgreSQL's is 0
/// (no checks), which lets a statement whose client is gone run on, holding
/// its locks, until it ends by itself.
pub const CLIENT_CONNECTION_CHECK_MS: u64 = 1000;

pub const SERVER_VERSION: &str = "15.18 (Tusk 0.1.0)";
pub const SERVER_VERSION_NUM: &str = "150018";

struct GucTable {
    /// Every parameter; the first `visible` are the ones pg_settings and
    /// SHOW ALL list, the rest are GUC_NO_SHOW_ALL (is_superuser, ...).
    defs: Vec<GucDef>,
    visible: usize,
    by_name: HashMap<String, usize>,
}

fn table() -> &'static GucTable {
    static TABLE: OnceLock<GucTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut defs = Vec::new();
        for line in include_str!("catalog/builtin/pg_settings.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 11 {
                continue;
            }
            let mut d = GucDef {
                name: f[0].to_string(),
                boot: f[1].to_string(),
                unit: f[2].to_string(),
                category: f[3].to_string(),
                short_desc: f[4].to_string(),
                context: f[5].to_string(),
                vartype: match f[6] {
                    "bool" => VarType::Bool,
                    "integer" => VarType::Integer,
                    "real" => VarType::Real,
                    "enum" => VarType::Enum,
                    _ => VarType::String,
                },
                min: f[7].to_string(),
                max: f[8].to_string(),
                enumvals: if f[9].is_empty() { Vec::new() } else { f[9].split(',').map(str::to_string).collect() },
                extra_desc: f[10].to_string(),
            };
            // Values that describe this server rather than the recording one.
            match d.name.as_str() {
                "server_version" => d.boot = SERVER_VERSION.into(),
                "server_encoding" | "client_encoding" => d.boot = "UTF8".into(),
                "lc_collate" | "lc_ctype" | "lc_messages" | "lc_monetary" | "lc_numeric" | "lc_time" => d.boot = "C.UTF-8".into(),
                "TimeZone" | "log_timezone" => d.boot = default_timezone(),
                "DateStyle" => d.boot = "ISO, MDY".into(),
                "default_text_search_config" => d.boot = "pg_catalog.english".into(),
                "max_connections" => d.boot = "100".into(),
                // PostgreSQL's startup value (its boot value, 100, is replaced
                // from the stack rlimit before any session sees it).
                "max_stack_depth" => d.boot = "2048".into(),
                "shared_buffers" => d.boot = "16384".into(),
                "transaction_isolation" => d.boot = "read committed".into(),
                "client_connection_check_interval" => {
                    d.boot = CLIENT_CONNECTION_CHECK_MS.to_string();
                    d.extra_desc = format!(
                        "A value of 0 turns off the checks. Unlike PostgreSQL, whose default is 0, Tusk checks every {CLIENT_CONNECTION_CHECK_MS} ms by default, so that a statement whose client went away stops and releases its locks."
                    );
                }
                _ => {}
            }
            defs.push(d);
        }
        let visible = defs.len();
        let hidden = |name: &str, boot: &str, context: &str, vartype: VarType, desc: &str| GucDef {
            name: name.into(),
            boot: boot.into(),
            unit: String::new(),
            category: "Ungrouped".into(),
            short_desc: desc.into(),
            context: context.into(),
            vartype,
            min: String::new(),
            max: String::new(),
            enumvals: Vec::new(),
            extra_desc: String::new(),
        };
        defs.push(hidden("is_superuser", "on", "internal", VarType::Bool, "Shows whether the current user is a superuser."));
        defs.push(hidden("session_authorization", "postgres", "superuser", VarType::String, "Sets the session user name."));
        defs.push(hidden("role", "none", "user", VarType::String, "Sets the current role."));
        let by_name = defs.iter().enumerate().map(|(i, d)| (d.name.to_ascii_lowercase(), i)).collect();
        GucTable { defs, visible, by_name }
    })
}

/// The server's time zone: $TZ, else /etc/timezone, else the /etc/localtime
/// link, else UTC — as initdb picks the system zone.
fn default_timezone() -> String {
    if let Ok(tz) = std::env::var("TZ") {
        if datetime::parse_timezone(&tz).is_ok() {
            return tz;
        }
    }
    if let Ok(s) = std::fs::read_to_string("/etc/timezone") {
        let s = s.trim();
        if !s.is_empty() && datetime::parse_timezone(s).is_ok() {
            return s.to_string();
        }
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime") {
        let t = target.to_string_lossy();
        if let Some(i) = t.find("zoneinfo/") {
            let name = &t[i + 9..];
            if datetime::parse_timezone(name).is_ok() {
                return name.to_string();
            }
        }
    }
    "Etc/UTC".to_string()
}

/// The parameters pg_settings and SHOW ALL list.
pub fn all_defs() -> &'static [GucDef] {
    let t = table();
    &t.defs[..t.visible]
}

pub fn lookup_def(name: &str) -> Option<&'static GucDef> {
    let t = table();
    t.by_name.get(&name.to_ascii_lowercase()).map(|&i| &t.defs[i])
}

fn unrecognized(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{name}\""))
}

fn invalid_value(name: &str, value: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{value}\""))
}

/// A session's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Current values by lower-case name, in canonical text form; absent =
    /// boot value. Shared until changed: settings are cloned per statement
    /// and per savepoint, and changed rarely.
    values: Arc<HashMap<String, String>>,
    /// Custom (dotted) parameters, e.g. `myapp.user_id`.
    custom: Arc<HashMap<String, String>>,
    pub datetime: DateTimeSettings,
    pub extra_float_digits: i32,
    pub search_path: Vec<String>,
    pub statement_timeout_ms: u64,
    pub lock_timeout_ms: u64,
    pub idle_in_transaction_timeout_ms: u64,
    /// How often a running statement's session checks that its client is
    /// still connected (0: never); see `CLIENT_CONNECTION_CHECK_MS`.
    pub client_connection_check_interval_ms: u64,
    pub synchronous_commit: bool,
    pub bytea_output_hex: bool,
    pub standard_conforming_strings: bool,
    pub work_mem_kb: u64,
    /// max_stack_depth, which the 54001 error's HINT reports (the real
    /// limit is the thread's stack; see `stack`).
    pub max_stack_depth_kb: u64,
    pub default_isolation_repeatable: bool,
    pub default_serializable: bool,
    pub default_deferrable: bool,
    pub default_read_only: bool,
    /// The open transaction's characteristics, which SHOW
    /// transaction_isolation / transaction_read_only report; None outside
    /// a transaction, where the defaults show.
    pub transaction_isolation: Option<tusk_storage::Isolation>,
    pub transaction_read_only: Option<bool>,
    /// Values RESET returns to: those the client gave at connection start
    /// (PostgreSQL's reset_val, which startup options set), else boot values.
    session_defaults: Arc<HashMap<String, String>>,
    /// Changes with every SET or RESET (drawn from a process-wide counter,
    /// so a restored copy reads as changed too): the protocol compares it
    /// to decide whether to re-send ParameterStatus.
    pub generation: u64,
}

static SETTINGS_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    SETTINGS_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for Settings {
    fn default() -> Self {
        let mut s = Settings {
            values: Arc::new(HashMap::new()),
            custom: Arc::new(HashMap::new()),
            datetime: DateTimeSettings::default(),
            extra_float_digits: 1,
            search_path: vec!["$user".into(), "public".into()],
            statement_timeout_ms: 0,
            lock_timeout_ms: 0,
            idle_in_transaction_timeout_ms: 0,
            client_connection_check_interval_ms: CLIENT_CONNECTION_CHECK_MS,
            synchronous_commit: true,
            bytea_output_hex: true,
            standard_conforming_strings: true,
            work_mem_kb: 4096,
            max_stack_depth_kb: 2048,
            default_isolation_repeatable: false,
            default_serializable: false,
            default_deferrable: false,
            default_read_only: false,
            transaction_isolation: None,
            transaction_read_only: None,
            session_defaults: Arc::new(HashMap::new()),
            generation: next_generation(),
        };
        let tz = default_timezone();
        if let Ok(z) = datetime::parse_timezone(&tz) {
            s.datetime.time_zone = z;
        }
        s
    }
}

impl Settings {
    /// SHOW name: the current value in PostgreSQL's display form.
    pub fn show(&self, name: &str) -> PgResult<String> {
        let lower = name.to_ascii_lowercase();
        if lower.contains('.') {
            return self.custom.get(&lower).cloned().ok_or_else(|| unrecognized(name));
        }
        match (lower.as_str(), self.transaction_isolation, self.transaction_read_only) {
            ("transaction_isolation", Some(iso), _) => {
                return Ok(match iso {
                    tusk_storage::Isolation::ReadUncommitted => "read uncommitted",
                    tusk_storage::Isolation::ReadCommitted => "read committed",
                    tusk_storage::Isolation::RepeatableRead => "repeatable read",
                    tusk_storage::Isolation::Serializable => "serializable",
                }
                .to_string())
            }
            ("transaction_isolation", None, _) => return self.show("default_transaction_isolation"),
            ("transaction_read_only", _, Some(ro)) => return Ok(if ro { "on" } else { "off" }.to_string()),
            ("transaction_read_only", _, None) => return self.show("default_transaction_read_only"),
            _ => {}
        }
        let def = lookup_def(&lower).ok_or_else(|| unrecognized(name))?;
        let raw = self.values.get(&lower).cloned().unwrap_or_else(|| def.boot.clone());
        Ok(display_value(def, &raw))
    }

    /// Whether a message of `severity` goes to the client under
    /// client_min_messages (PostgreSQL's rule: INFO always does, errors
    /// always do, others when at or above the setting's level).
    pub fn sends_to_client(&self, severity: tusk_types::Severity) -> bool {
        use tusk_types::Severity as S;
        // elog.h's levels: DEBUG1..5 = 10..14, LOG 15, NOTICE 18, WARNING 19, ERROR 21.
        let rank = |sev: S| match sev {
            S::Debug => 14,
            S::Log => 15,
            S::Info | S::Notice => 18,
            S::Warning => 19,
            S::Error | S::Fatal | S::Panic => 21,
        };
        if matches!(severity, S::Info | S::Error | S::Fatal | S::Panic) {
            return true;
        }
        let min = match self.values.get("client_min_messages").map(|v| v.to_ascii_lowercase()).as_deref() {
            Some("debug5" | "debug4" | "debug3" | "debug2" | "debug1" | "debug") => 10,
            Some("log") => 15,
            Some("warning") => 19,
            Some("error") => 21,
            _ => 18,
        };
        rank(severity) >= min
    }

    /// current_setting(name, missing_ok)
    pub fn current_setting(&self, name: &str, missing_ok: bool) -> PgResult<Option<String>> {
        match self.show(name) {
            Ok(v) => Ok(Some(v)),
            Err(_) if missing_ok => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The value in base units, as pg_settings.setting shows it.
    pub fn raw(&self, def: &GucDef) -> String {
        self.values.get(&def.name.to_ascii_lowercase()).cloned().unwrap_or_else(|| def.boot.clone())
    }

    /// SET name = value (value already flattened to text, list items joined by ", ").
    pub fn set(&mut self, name: &str, value: &str) -> PgResult<()> {
        let lower = name.to_ascii_lowercase();
        if lower.contains('.') {
            Arc::make_mut(&mut self.custom).insert(lower, value.to_string());
            return Ok(());
        }
        let def = lookup_def(&lower).ok_or_else(|| unrecognized(name))?;
        match def.context.as_str() {
            "internal" => {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed", def.name),
                ))
            }
            "postmaster" => {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed without restarting the server", def.name),
                ))
            }
            "sighup" | "backend" | "superuser-backend" => {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed now", def.name),
                ))
            }
            _ => {}
        }
        let canonical = self.validate_and_apply(def, value)?;
        Arc::make_mut(&mut self.values).insert(lower, canonical);
        self.generation = next_generation();
        Ok(())
    }

    /// RESET name: back to the value the session started with.
    pub fn reset(&mut self, name: &str) -> PgResult<()> {
        let lower = name.to_ascii_lowercase();
        self.generation = next_generation();
        if lower.contains('.') {
            Arc::make_mut(&mut self.custom).remove(&lower);
            return Ok(());
        }
        let def = lookup_def(&lower).ok_or_else(|| unrecognized(name))?;
        match self.session_defaults.get(&lower).cloned() {
            Some(v) => {
                let canonical = self.validate_and_apply(def, &v)?;
                Arc::make_mut(&mut self.values).insert(lower, canonical);
            }
            None => {
                Arc::make_mut(&mut self.values).remove(&lower);
                let boot = def.boot.clone();
                self.validate_and_apply(def, &boot)?;
            }
        }
        Ok(())
    }

    /// Makes the current values the ones RESET returns to (after the
    /// startup packet's parameters are applied).
    pub fn mark_session_defaults(&mut self) {
        self.session_defaults = self.values.clone();
    }

    /// RESET ALL: every parameter back to its session default.
    pub fn reset_all(&mut self) {
        let names: Vec<String> = self.values.keys().chain(self.session_defaults.keys()).cloned().collect();
        for name in names {
            let Some(def) = lookup_def(&name) else { continue };
            // GUC_NO_RESET_ALL parameters keep their values.
            let no_reset_all = matches!(name.as_str(), "session_authorization" | "is_superuser" | "role" | "transaction_isolation" | "transaction_read_only" | "transaction_deferrable");
            if !no_reset_all && matches!(def.context.as_str(), "user" | "superuser") {
                let _ = self.reset(&name);
            }
        }
        Arc::make_mut(&mut self.custom).clear();
        self.generation = next_generation();
    }

    /// Applies a startup-packet parameter (client_encoding, DateStyle, options, ...).
    pub fn set_from_startup(&mut self, name: &str, value: &str) -> PgResult<()> {
        match name {
            "user" | "database" | "replication" | "options" => Ok(()),
            _ => self.set(name, value),
        }
    }

    /// Parameters reported to the client in ParameterStatus, with current values.
    pub fn reported(&self) -> Vec<(&'static str, String)> {
        [
            "application_name",
            "client_encoding",
            "DateStyle",
            "default_transaction_read_only",
            "in_hot_standby",
            "integer_datetimes",
            "IntervalStyle",
            "is_superuser",
            "server_encoding",
            "server_version",
            "session_authorization",
            "standard_conforming_strings",
            "TimeZone",
        ]
        .into_iter()
        .map(|n| (n, self.show(n).unwrap_or_default()))
        .collect()
    }

    pub fn is_reported(name: &str) -> Option<&'static str> {
        let lower = name.to_ascii_lowercase();
        [
            "application_name",
            "client_encoding",
            "DateStyle",
            "default_transaction_read_only",
            "in_hot_standby",
            "integer_datetimes",
            "IntervalStyle",
            "is_superuser",
            "server_encoding",
            "server_version",
            "session_authorization",
            "standard_conforming_strings",
            "TimeZone",
        ]
        .into_iter()
        .find(|n| n.to_ascii_lowercase() == lower)
    }

    /// Internal updates of read-only parameters (session_authorization, is_superuser).
    pub fn set_internal(&mut self, name: &str, value: &str) {
        Arc::make_mut(&mut self.values).insert(name.to_ascii_lowercase(), value.to_string());
    }

    fn validate_and_apply(&mut self, def: &GucDef, value: &str) -> PgResult<String> {
        let lower = def.name.to_ascii_lowercase();
        let canonical = match def.vartype {
            VarType::Bool => {
                let b = parse_bool(value).ok_or_else(|| {
                    PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("parameter \"{}\" requires a Boolean value", def.name),
                    )
                })?;
                if b { "on" } else { "off" }.to_string()
            }
            VarType::Integer => {
                let v = parse_int_with_unit(value, &def.unit).ok_or_else(|| {
                    let mut e = invalid_value(&def.name, value);
                    if !def.unit.is_empty() {
                        e = e.with_hint(unit_hint(&def.unit));
                    }
                    e
                })?;
                if i32::try_from(v).is_err() {
                    return Err(invalid_value(&def.name, value).with_hint("Value exceeds integer range."));
                }
                let min: i64 = def.min.parse().unwrap_or(i64::MIN);
                let max: i64 = def.max.parse().unwrap_or(i64::MAX);
                if v < min || v > max {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!(
                            "{} {} is outside the valid range for parameter \"{}\" ({} .. {})",
                            v,
                            if def.unit.is_empty() { String::new() } else { def.unit.clone() },
                            def.name,
                            min,
                            max
                        )
                        .replace("  ", " "),
                    ));
                }
                v.to_string()
            }
            VarType::Real => {
                let v = parse_real_with_unit(value, &def.unit).ok_or_else(|| {
                    let mut e = invalid_value(&def.name, value);
                    if !def.unit.is_empty() && value.trim().ends_with(|c: char| c.is_ascii_alphabetic()) {
                        e = e.with_hint(unit_hint(&def.unit));
                    }
                    e
                })?;
                let min: f64 = def.min.parse().unwrap_or(f64::MIN);
                let max: f64 = def.max.parse().unwrap_or(f64::MAX);
                if v < min || v > max {
                    let unit = if def.unit.is_empty() { String::new() } else { format!(" {}", def.unit) };
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("{}{unit} is outside the valid range for parameter \"{}\" ({} .. {})", format_g(v), def.name, format_g(min), format_g(max)),
                    ));
                }
                format_g(v)
            }
            VarType::Enum => {
                let v = value.trim().to_ascii_lowercase();
                let found = def.enumvals.iter().find(|e| e.to_ascii_lowercase() == v).cloned().or_else(|| {
                    // Enums with "on" and "off" also take the other spellings
                    // of a boolean (guc_tables.c lists them as hidden values).
                    let has = |w: &str| def.enumvals.iter().any(|e| e == w);
                    match v.as_str() {
                        "true" | "yes" | "1" if has("on") && has("off") => Some("on".to_string()),
                        "false" | "no" | "0" if has("on") && has("off") => Some("off".to_string()),
                        _ => None,
                    }
                });
                match found {
                    Some(e) => e,
                    None => {
                        // config_enum_get_options: the visible values, unquoted.
                        let list = def.enumvals.join(", ");
                        return Err(invalid_value(&def.name, value).with_hint(format!("Available values: {list}.")));
                    }
                }
            }
            VarType::String => value.to_string(),
        };
        // Parameters that change behaviour: parse into typed fields.
        let canonical = match lower.as_str() {
            "datestyle" => {
                let (style, order) = datetime::parse_datestyle(value, (self.datetime.date_style, self.datetime.date_order))
                    .map_err(|_| invalid_value(&def.name, value).with_detail(format!("Unrecognized key word: \"{}\".", value.trim())))?;
                self.datetime.date_style = style;
                self.datetime.date_order = order;
                datetime::format_datestyle(style, order)
            }
            "timezone" => {
                let tz = datetime::parse_timezone(value).map_err(|_| invalid_value(&def.name, value))?;
                let name = tz.name().to_string();
                self.datetime.time_zone = tz;
                name
            }
            "intervalstyle" => {
                self.datetime.interval_style = datetime::parse_intervalstyle(&canonical).map_err(|_| invalid_value(&def.name, value))?;
                canonical
            }
            "extra_float_digits" => {
                self.extra_float_digits = canonical.parse().unwrap_or(1);
                canonical
            }
            "search_path" => {
                self.search_path = parse_search_path(value);
                canonical
            }
            "statement_timeout" => {
                self.statement_timeout_ms = canonical.parse().unwrap_or(0);
                canonical
            }
            "lock_timeout" => {
                self.lock_timeout_ms = canonical.parse().unwrap_or(0);
                canonical
            }
            "idle_in_transaction_session_timeout" => {
                self.idle_in_transaction_timeout_ms = canonical.parse().unwrap_or(0);
                canonical
            }
            "client_connection_check_interval" => {
                self.client_connection_check_interval_ms = canonical.parse().unwrap_or(0);
                canonical
            }
            "synchronous_commit" => {
                self.synchronous_commit = canonical != "off";
                canonical
            }
            "bytea_output" => {
                self.bytea_output_hex = canonical == "hex";
                canonical
            }
            "work_mem" => {
                self.work_mem_kb = canonical.parse().unwrap_or(4096);
                canonical
            }
            "max_stack_depth" => {
                self.max_stack_depth_kb = canonical.parse().unwrap_or(2048);
                canonical
            }
            "standard_conforming_strings" => {
                self.standard_conforming_strings = canonical == "on";
                canonical
            }
            "client_encoding" => {
                let v = value.trim().to_ascii_uppercase().replace(['-', '_'], "");
                if v != "UTF8" && v != "UNICODE" && v != "SQLASCII" {
                    // PostgreSQL's other encodings are real but not built;
                    // anything else is not an encoding at all.
                    const OTHER_ENCODINGS: &[&str] = &[
                        "EUCJP", "EUCCN", "EUCKR", "EUCTW", "EUCJIS2004", "MULEINTERNAL", "LATIN1", "LATIN2", "LATIN3", "LATIN4",
                        "LATIN5", "LATIN6", "LATIN7", "LATIN8", "LATIN9", "LATIN10", "WIN1250", "WIN1251", "WIN1252", "WIN1253",
                        "WIN1254", "WIN1255", "WIN1256", "WIN1257", "WIN1258", "WIN866", "WIN874", "KOI8R", "KOI8U", "KOI8",
                        "ISO88595", "ISO88596", "ISO88597", "ISO88598", "ISO88591", "SJIS", "BIG5", "GBK", "UHC", "GB18030",
                        "JOHAB", "SHIFTJIS2004", "ALT", "WIN", "TCVN", "ABC", "VSCII", "WINDOWS1252", "WINDOWS1251", "MSKANJI",
                    ];
                    if OTHER_ENCODINGS.contains(&v.as_str()) {
                        return Err(PgError::unsupported(format!("client_encoding \"{}\"", value.trim())));
                    }
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"client_encoding\": \"{}\"", value.trim()),
                    ));
                }
                "UTF8".to_string()
            }
            "default_transaction_isolation" => {
                self.default_isolation_repeatable = canonical != "read committed" && canonical != "read uncommitted";
                self.default_serializable = canonical == "serializable";
                canonical
            }
            "default_transaction_deferrable" => {
                self.default_deferrable = canonical == "on";
                canonical
            }
            "default_transaction_read_only" => {
                self.default_read_only = canonical == "on";
                canonical
            }
            _ => canonical,
        };
        Ok(canonical)
    }
}

/// PostgreSQL's parse_bool: on/off, true/false, yes/no, 1/0 and unique prefixes.
pub fn parse_bool(value: &str) -> Option<bool> {
    let v = value.trim().to_ascii_lowercase();
    if v.is_empty() {
        return None;
    }
    let matches = |word: &str| word.starts_with(v.as_str());
    match v.as_str() {
        "on" => return Some(true),
        // 'o' alone is not unique enough; "of" already means off
        "o" => return None,
        "of" | "off" => return Some(false),
        "1" => return Some(true),
        "0" => return Some(false),
        _ => {}
    }
    if matches("true") || matches("yes") {
        Some(true)
    } else if matches("false") || matches("no") {
        Some(false)
    } else {
        None
    }
}

fn parse_search_path(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for item in split_list(value) {
        out.push(item);
    }
    out
}

/// Splits a comma-separated list of possibly double-quoted identifiers.
pub fn split_list(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut item = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        item.push('"');
                    } else {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                item.push(c);
                chars.next();
            }
            item = item.trim().to_ascii_lowercase();
        }
        out.push(item);
        while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    out
}

fn unit_hint(unit: &str) -> String {
    match unit {
        "ms" | "s" | "min" => "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".".into(),
        _ => "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".".into(),
    }
}

/// Memory units in bytes and time units in microseconds.
fn unit_scale(unit: &str) -> Option<(bool, f64)> {
    Some(match unit {
        "B" => (true, 1.0),
        "kB" => (true, 1024.0),
        "8kB" => (true, 8192.0),
        "16MB" => (true, 16.0 * 1024.0 * 1024.0),
        "MB" => (true, 1024.0 * 1024.0),
        "GB" => (true, 1024.0 * 1024.0 * 1024.0),
        "TB" => (true, 1024.0f64.powi(4)),
        "us" => (false, 1.0),
        "ms" => (false, 1000.0),
        "s" => (false, 1_000_000.0),
        "min" => (false, 60_000_000.0),
        "h" => (false, 3_600_000_000.0),
        "d" => (false, 86_400_000_000.0),
        _ => return None,
    })
}

/// A real setting with an optional unit suffix, in the parameter's base
/// unit (guc.c's parse_real and convert_to_base_unit: a fraction of a
/// unit is rounded to the next smaller unit).
fn parse_real_with_unit(value: &str, base_unit: &str) -> Option<f64> {
    let v = value.trim();
    let split = v.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(v.len());
    let (num, unit) = (v[..split].trim(), v[split..].trim());
    let n: f64 = num.parse().ok().filter(|n: &f64| !n.is_nan())?;
    if unit.is_empty() {
        return Some(n);
    }
    let (is_mem, scale) = unit_scale(unit)?;
    let (base_is_mem, base_scale) = unit_scale(base_unit)?;
    if is_mem != base_is_mem || base_unit.is_empty() {
        return None;
    }
    let next_smaller = if is_mem { ["TB", "GB", "MB", "kB", "B"].as_slice() } else { ["d", "h", "min", "s", "ms", "us"].as_slice() }
        .iter()
        .filter_map(|u| unit_scale(u).map(|(_, s)| s))
        .find(|&s| s < scale);
    let mut value = n * scale / base_scale;
    if let Some(smaller) = next_smaller {
        value = (n * scale / smaller).round_ties_even() * smaller / base_scale;
    }
    Some(value)
}

/// C's "%g": six significant digits, trailing zeros dropped, an exponent
/// below 1e-4 and from 1e6 up (how guc.c prints real settings).
pub(crate) fn format_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() { "nan".into() } else if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let exp = format!("{v:.5e}");
    let (mantissa, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if (-4..6).contains(&e) {
        let decimals = (5 - e).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let m = if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// An integer setting with an optional unit suffix, converted to the
/// parameter's base unit (rounded as PostgreSQL rounds).
fn parse_int_with_unit(value: &str, base_unit: &str) -> Option<i64> {
    let v = value.trim();
    let split = v.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+' || c == '.')).unwrap_or(v.len());
    let (num, unit) = (v[..split].trim(), v[split..].trim());
    if unit.is_empty() {
        if let Ok(i) = num.parse::<i64>() {
            return Some(i);
        }
        let f: f64 = num.parse().ok()?;
        return Some(f.round() as i64);
    }
    let n: f64 = num.parse().ok()?;
    let (is_mem, scale) = unit_scale(unit)?;
    let (base_is_mem, base_scale) = unit_scale(base_unit)?;
    if is_mem != base_is_mem {
        return None;
    }
    Some((n * scale / base_scale).round() as i64)
}

/// SHOW's form of a value: integers with units in the largest unit that
/// divides them exactly ("4MB", "1min").
fn display_value(def: &GucDef, raw: &str) -> String {
    if def.vartype == VarType::Real && !def.unit.is_empty() {
        return display_real(def, raw);
    }
    if def.vartype != VarType::Integer || def.unit.is_empty() {
        return raw.to_string();
    }
    let Ok(v) = raw.parse::<i64>() else { return raw.to_string() };
    if v <= 0 {
        return if def.unit == "kB" || def.unit == "B" || def.unit == "8kB" {
            format!("{v}{}", if v == 0 || v == -1 { String::new() } else { def.unit.clone() })
                .replace("-1", "-1")
        } else {
            v.to_string()
        };
    }
    let Some((is_mem, base)) = unit_scale(&def.unit) else { return raw.to_string() };
    let total = v as f64 * base;
    let units: &[&str] = if is_mem { &["TB", "GB", "MB", "kB", "B"] } else { &["d", "h", "min", "s", "ms", "us"] };
    for u in units {
        let (_, s) = unit_scale(u).expect("known unit");
        if s >= base && (total / s).fract() == 0.0 {
            return format!("{}{}", (total / s) as i64, u);
        }
    }
    format!("{v}{}", def.unit)
}

/// convert_real_from_base_unit: a positive real setting in the first
/// unit, largest first, that shows it as a whole number (within 1e-8), else
/// in the smallest.
fn display_real(def: &GucDef, raw: &str) -> String {
    let Ok(v) = raw.parse::<f64>() else { return raw.to_string() };
    let Some((is_mem, base)) = unit_scale(&def.unit) else { return raw.to_string() };
    if v <= 0.0 {
        return format_g(v);
    }
    let units: &[&str] = if is_mem { &["TB", "GB", "MB", "kB", "B"] } else { &["d", "h", "min", "s", "ms", "us"] };
    let mut shown = (v, def.unit.as_str());
    for u in units {
        let (_, s) = unit_scale(u).expect("known unit");
        let value = v * base / s;
        shown = (value, u);
        if value > 0.0 && ((value.round_ties_even() / value) - 1.0).abs() <= 1e-8 {
            break;
        }
    }
    format!("{}{}", format_g(shown.0), shown.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_settings_with_units() {
        let mut s = Settings::default();
        s.set("vacuum_cost_delay", "40ms").unwrap();
        assert_eq!(s.show("vacuum_cost_delay").unwrap(), "40ms");
        s.set("vacuum_cost_delay", "80.1").unwrap();
        assert_eq!(s.show("vacuum_cost_delay").unwrap(), "80100us");
        s.set("vacuum_cost_delay", "900us").unwrap();
        assert_eq!(s.show("vacuum_cost_delay").unwrap(), "900us");
        s.set("vacuum_cost_delay", "0").unwrap();
        assert_eq!(s.show("vacuum_cost_delay").unwrap(), "0");
        let e = s.set("vacuum_cost_delay", "10s").unwrap_err();
        assert_eq!(e.message, "10000 ms is outside the valid range for parameter \"vacuum_cost_delay\" (0 .. 100)");
        let e = s.set("vacuum_cost_delay", "1.5min").unwrap_err();
        assert_eq!(e.message, "90000 ms is outside the valid range for parameter \"vacuum_cost_delay\" (0 .. 100)");
        assert!(s.set("vacuum_cost_delay", "3kB").unwrap_err().hint.is_some());
        assert_eq!(format_g(1e-6), "1e-06");
        assert_eq!(format_g(f64::MAX), "1.79769e+308");
    }

    #[test]
    fn show_and_set() {
        let mut s = Settings::default();
        assert_eq!(s.show("work_mem").unwrap(), "4MB");
        s.set("work_mem", "64kB").unwrap();
        assert_eq!(s.show("work_mem").unwrap(), "64kB");
        s.set("statement_timeout", "5s").unwrap();
        assert_eq!(s.show("statement_timeout").unwrap(), "5s");
        assert_eq!(s.statement_timeout_ms, 5000);
        assert_eq!(s.show("nonexistent").unwrap_err().code, sqlstate::UNDEFINED_OBJECT);
        s.set("search_path", "a, \"B\"").unwrap();
        assert_eq!(s.search_path, vec!["a", "B"]);
        assert!(s.set("server_version", "1").is_err());
        s.set("myapp.x", "42").unwrap();
        assert_eq!(s.show("MYAPP.X").unwrap(), "42");
        assert_eq!(s.show("standard_conforming_strings").unwrap(), "on");
    }
}
