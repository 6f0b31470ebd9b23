//! Type names: from the grammar's TypeName to an OID and type modifier
//! (typenameTypeIdAndMod), and back to text as format_type() prints it.

use pg_query::protobuf::{a_const, TypeName};
use pg_query::NodeEnum;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use crate::catalog::builtin::Builtins;

const VARHDRSZ: i32 = 4;

fn node_str(n: &pg_query::protobuf::Node) -> Option<&str> {
    match &n.node {
        Some(NodeEnum::String(s)) => Some(&s.sval),
        _ => None,
    }
}

/// The plain name of a TypeName (last component) and its schema, if given.
pub fn type_name_parts(tn: &TypeName) -> (Option<String>, String) {
    let parts: Vec<&str> = tn.names.iter().filter_map(node_str).collect();
    match parts.as_slice() {
        [] => (None, String::new()),
        [n] => (None, n.to_string()),
        [.., s, n] => (Some(s.to_string()), n.to_string()),
    }
}

/// The user-visible spelling of a TypeName for error messages (`serial`, `foo.bar`).
pub fn type_name_display(tn: &TypeName) -> String {
    let parts: Vec<&str> = tn.names.iter().filter_map(node_str).collect();
    let mut s = if parts.len() == 2 && parts[0] == "pg_catalog" { parts[1].to_string() } else { parts.join(".") };
    for _ in &tn.array_bounds {
        s.push_str("[]");
    }
    s
}

fn typmod_ints(tn: &TypeName) -> PgResult<Vec<i64>> {
    let mut out = Vec::new();
    for m in &tn.typmods {
        match &m.node {
            Some(NodeEnum::AConst(c)) => match &c.val {
                Some(a_const::Val::Ival(i)) => out.push(i.ival as i64),
                _ => {
                    return Err(PgError::new(sqlstate::SYNTAX_ERROR, "type modifiers must be simple constants or identifiers")
                        .with_position(Some(tn.location as u32 + 1)))
                }
            },
            Some(NodeEnum::ColumnRef(_)) => {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "type modifiers must be simple constants or identifiers"))
            }
            _ => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "type modifiers must be simple constants or identifiers")),
        }
    }
    Ok(out)
}

/// typenameTypeIdAndMod for built-in types.
pub fn resolve_type_name(b: &Builtins, tn: &TypeName) -> PgResult<SqlType> {
    let (schema, name) = type_name_parts(tn);
    let position = Some(tn.location.max(0) as u32 + 1);
    if tn.pct_type {
        return Err(PgError::unsupported("%TYPE references").with_position(position));
    }
    use crate::catalog::types::{lookup_user_type_name, NameLookup};
    let builtin = |n: &str| b.type_by_name.get(n).copied();
    let base = match lookup_user_type_name(schema.as_deref(), &name, &builtin) {
        NameLookup::Found(o) => o,
        NameLookup::NoSchema => {
            return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", schema.unwrap_or_default()))
                .with_position(position))
        }
        NameLookup::NotFound => {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{}\" does not exist", type_name_display_base(tn)),
            )
            .with_position(position))
        }
    };
    let mods = typmod_ints(tn)?;
    let typmod = typmod_for(b, base, &mods).map_err(|e| e.with_position(position))?;
    let mut t = SqlType { oid: base, typmod };
    // int4[][] is int4[]: an array type holds any number of dimensions, so
    // the bounds name the array type once (LookupTypeName).
    if !tn.array_bounds.is_empty() {
        let arr = b.array_of(t.oid);
        if arr == 0 {
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("could not find array type for data type {}", format_type(b, t.oid, -1))));
        }
        // Arrays keep the element's typmod (varchar(3)[] stays so).
        t = SqlType { oid: arr, typmod: t.typmod };
    }
    Ok(t)
}

fn type_name_display_base(tn: &TypeName) -> String {
    let parts: Vec<&str> = tn.names.iter().filter_map(node_str).collect();
    if parts.len() == 2 && parts[0] == "pg_catalog" {
        parts[1].to_string()
    } else {
        parts.join(".")
    }
}

/// Encodes type modifiers as each type's typmodin does.
pub fn typmod_for(b: &Builtins, t: Oid, mods: &[i64]) -> PgResult<i32> {
    if mods.is_empty() {
        return Ok(-1);
    }
    let name = b.type_name(t).to_string();
    let invalid = || PgError::new(sqlstate::SYNTAX_ERROR, format!("invalid type modifier"));
    match t {
        oid::VARCHAR | oid::BPCHAR => {
            if mods.len() != 1 {
                return Err(invalid());
            }
            let n = mods[0];
            let label = if t == oid::VARCHAR { "varchar" } else { "char" };
            if n < 1 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("length for type {label} must be at least 1")));
            }
            if n > 10_485_760 {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("length for type {label} cannot exceed 10485760"),
                ));
            }
            Ok(n as i32 + VARHDRSZ)
        }
        oid::NUMERIC => {
            if mods.len() > 2 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid NUMERIC type modifier"));
            }
            let p = mods[0];
            let s = mods.get(1).copied().unwrap_or(0);
            if !(1..=1000).contains(&p) {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("NUMERIC precision {p} must be between 1 and 1000"),
                ));
            }
            if !(-1000..=1000).contains(&s) {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("NUMERIC scale {s} must be between -1000 and 1000"),
                ));
            }
            Ok((((p as i32) << 16) | (s as i32 & 0x7ff)) + VARHDRSZ)
        }
        oid::TIME | oid::TIMETZ | oid::TIMESTAMP | oid::TIMESTAMPTZ => {
            if mods.len() != 1 {
                return Err(invalid());
            }
            let p = mods[0];
            let label = match t {
                oid::TIME => "TIME",
                oid::TIMETZ => "TIME WITH TIME ZONE",
                oid::TIMESTAMP => "TIMESTAMP",
                _ => "TIMESTAMP WITH TIME ZONE",
            };
            if p < 0 {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("{label}({p}) precision must not be negative"),
                ));
            }
            // Precisions above 6 are reduced with a warning in PostgreSQL.
            Ok(p.min(6) as i32)
        }
        oid::INTERVAL => {
            // The grammar passes (range mask[, precision]).
            let range = mods[0] as i32;
            let prec = mods.get(1).map(|&p| p.min(6) as i32).unwrap_or(0xFFFF);
            Ok((range << 16) | prec)
        }
        oid::BIT | oid::VARBIT => Ok(mods[0] as i32),
        _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("type modifier is not allowed for type \"{name}\""))),
    }
}

/// format_type_be: a type's name when no type modifier is given (error
/// messages, regtype output): `character` for bpchar.
pub fn format_type_be(b: &Builtins, t: Oid) -> String {
    if t == oid::BPCHAR {
        return "character".into();
    }
    let elem = b.element_of(t);
    if elem == oid::BPCHAR && b.type_info(t).map(|i| i.category == 'A').unwrap_or(false) {
        return "character[]".into();
    }
    format_type(b, t, -1)
}

/// format_type(oid, typmod) as PostgreSQL prints types in \d and errors.
pub fn format_type(b: &Builtins, t: Oid, typmod: i32) -> String {
    let elem = b.element_of(t);
    if elem != 0 && t != oid::INT2VECTOR && t != oid::OIDVECTOR && b.type_info(t).map(|i| i.category == 'A').unwrap_or(false) {
        return format!("{}[]", format_type(b, elem, typmod));
    }
    let with_mod = typmod >= 0;
    match t {
        oid::BOOL => "boolean".into(),
        oid::INT2 => "smallint".into(),
        oid::INT4 => "integer".into(),
        oid::INT8 => "bigint".into(),
        oid::FLOAT4 => "real".into(),
        oid::FLOAT8 => "double precision".into(),
        oid::NUMERIC => {
            if with_mod {
                let v = typmod - VARHDRSZ;
                let p = (v >> 16) & 0xffff;
                let s = ((v & 0x7ff) ^ 1024) - 1024;
                format!("numeric({p},{s})")
            } else {
                "numeric".into()
            }
        }
        oid::VARCHAR => {
            if with_mod {
                format!("character varying({})", typmod - VARHDRSZ)
            } else {
                "character varying".into()
            }
        }
        oid::BPCHAR => {
            if with_mod {
                format!("character({})", typmod - VARHDRSZ)
            } else {
                "bpchar".into()
            }
        }
        oid::CHAR => "\"char\"".into(),
        oid::TIME => time_like("time", typmod, "without time zone"),
        oid::TIMETZ => time_like("time", typmod, "with time zone"),
        oid::TIMESTAMP => time_like("timestamp", typmod, "without time zone"),
        oid::TIMESTAMPTZ => time_like("timestamp", typmod, "with time zone"),
        oid::INTERVAL => {
            if with_mod {
                let prec = typmod & 0xffff;
                let range = (typmod >> 16) & 0x7fff;
                let fields = interval_range_name(range);
                let mut s = "interval".to_string();
                if let Some(f) = fields {
                    s.push(' ');
                    s.push_str(f);
                }
                if prec != 0xffff {
                    s.push_str(&format!("({prec})"));
                }
                s
            } else {
                "interval".into()
            }
        }
        oid::BIT => {
            if with_mod {
                format!("bit({typmod})")
            } else {
                "bit".into()
            }
        }
        oid::VARBIT => {
            if with_mod {
                format!("bit varying({typmod})")
            } else {
                "bit varying".into()
            }
        }
        // A user type is qualified when its name alone would not find it.
        _ if t >= oid::FIRST_NORMAL_OBJECT_ID => match crate::catalog::types::display_name(t) {
            Some(s) => s,
            None => crate::functions::quote_ident(b.type_name(t)),
        },
        // Other names are quoted where needed, as PostgreSQL's format_type does ("any").
        _ => crate::functions::quote_ident(b.type_name(t)),
    }
}

fn time_like(base: &str, typmod: i32, suffix: &str) -> String {
    if typmod >= 0 {
        format!("{base}({typmod}) {suffix}")
    } else {
        format!("{base} {suffix}")
    }
}

/// The INTERVAL_MASK combinations the grammar produces.
fn interval_range_name(range: i32) -> Option<&'static str> {
    const MONTH: i32 = 1 << 1;
    const YEAR: i32 = 1 << 2;
    const DAY: i32 = 1 << 3;
    const HOUR: i32 = 1 << 10;
    const MINUTE: i32 = 1 << 11;
    const SECOND: i32 = 1 << 12;
    const FULL: i32 = 0x7FFF;
    Some(match range {
        YEAR => "year",
        MONTH => "month",
        DAY => "day",
        HOUR => "hour",
        MINUTE => "minute",
        SECOND => "second",
        x if x == YEAR | MONTH => "year to month",
        x if x == DAY | HOUR => "day to hour",
        x if x == DAY | HOUR | MINUTE => "day to minute",
        x if x == DAY | HOUR | MINUTE | SECOND => "day to second",
        x if x == HOUR | MINUTE => "hour to minute",
        x if x == HOUR | MINUTE | SECOND => "hour to second",
        x if x == MINUTE | SECOND => "minute to second",
        FULL => return None,
        _ => return None,
    })
}
