//! Input of the object identifier types (regproc.c): the text of a
//! regclass, regtype, regproc, regprocedure, regoper, regoperator,
//! regcollation or regnamespace value names an object, looked up along the
//! search path as PostgreSQL looks it up, with its messages. A literal is
//! converted while the statement is analyzed (so errors point at it); the
//! to_reg* functions and casts of computed text use the same lookups.

use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult};

use super::Analyzer;
use crate::catalog::PG_CATALOG_NAMESPACE;

/// regcollation's type OID (Tusk's types crate names only the reg* types
/// other code needs).
const REGCOLLATION: Oid = 4191;

/// What a failed lookup means for the to_reg* functions: a missing object
/// (or schema) gives NULL there, anything else stays an error.
pub fn is_missing_object(e: &PgError) -> bool {
    matches!(e.code, sqlstate::UNDEFINED_FUNCTION | sqlstate::UNDEFINED_TABLE | sqlstate::UNDEFINED_OBJECT | sqlstate::INVALID_SCHEMA_NAME)
}

/// stringToQualifiedNameList: dotted identifiers, unquoted ones folded to
/// lower case.
fn name_list(s: &str) -> PgResult<Vec<String>> {
    let invalid = || PgError::new(sqlstate::INVALID_NAME, "invalid name syntax");
    let mut parts = vec![String::new()];
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = s.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                parts.last_mut().expect("a part").push('"');
            }
            '"' => {
                quoted = !quoted;
                was_quoted = true;
            }
            '.' if !quoted => {
                if parts.last().is_some_and(|p| p.is_empty()) && !was_quoted {
                    return Err(invalid());
                }
                parts.push(String::new());
                was_quoted = false;
            }
            c if quoted => parts.last_mut().expect("a part").push(c),
            c if c.is_whitespace() => return Err(invalid()),
            c => parts.last_mut().expect("a part").extend(c.to_lowercase()),
        }
    }
    if quoted || parts.iter().any(|p| p.is_empty()) {
        return Err(invalid());
    }
    Ok(parts)
}

/// parseNameAndArgTypes: `name(type, ...)`, the name part dotted (an
/// operator's name may be any of its symbol characters).
fn name_and_args(s: &str, is_operator: bool) -> PgResult<(Vec<String>, Vec<String>)> {
    let s = s.trim();
    let invalid = || PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "expected a left parenthesis");
    let open = s.find('(').ok_or_else(invalid)?;
    let close = s.rfind(')').filter(|&c| c > open && s[c + 1..].trim().is_empty()).ok_or_else(|| {
        PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "expected a right parenthesis")
    })?;
    let name = s[..open].trim();
    let names = if is_operator {
        match name.rsplit_once('.') {
            Some((schema, op)) if !op.is_empty() && !schema.is_empty() => {
                let mut n = name_list(schema)?;
                n.push(op.to_string());
                n
            }
            _ => vec![name.to_string()],
        }
    } else {
        name_list(name)?
    };
    let inner = s[open + 1..close].trim();
    let args = if inner.is_empty() { Vec::new() } else { split_args(inner) };
    Ok((names, args))
}

/// Argument types split on the commas outside parentheses and quotes.
fn split_args(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let (mut depth, mut quoted) = (0, false);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("an argument").push(c);
    }
    out.into_iter().map(|a| a.trim().to_string()).collect()
}

impl Analyzer<'_> {
    /// The OID a reg* type's text input names ("-" is 0, digits an OID).
    pub fn reg_input(&self, reg_type: Oid, text: &str) -> PgResult<Oid> {
        let s = text.trim();
        if s == "-" {
            return Ok(0);
        }
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s.parse::<Oid>().map_err(|_| {
                PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("value \"{s}\" is out of range for type oid"))
            });
        }
        match reg_type {
            oid::REGCLASS => self.regclass_in(s),
            oid::REGTYPE => crate::functions::cast::regtype_in(s),
            oid::REGPROC => self.regproc_in(s),
            oid::REGPROCEDURE => self.regprocedure_in(s),
            oid::REGOPER => self.regoper_in(s),
            oid::REGOPERATOR => self.regoperator_in(s),
            REGCOLLATION => self.regcollation_in(s),
            oid::REGNAMESPACE => self.regnamespace_in(s),
            _ => Err(PgError::internal("not an object identifier type")),
        }
    }

    /// The namespace a qualified name's schema part names (an error for a
    /// missing schema, as LookupExplicitNamespace).
    fn explicit_namespace(&self, schema: &str) -> PgResult<Oid> {
        if schema == "pg_temp" {
            if let Some(t) = self.env.temp_namespace {
                return Ok(t);
            }
        }
        self.env
            .catalog
            .namespace_by_name
            .get(schema)
            .copied()
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist")))
    }

    /// The namespaces an unqualified or qualified name is looked for in.
    fn lookup_namespaces(&self, names: &[String]) -> PgResult<(Vec<Oid>, String)> {
        match names {
            [name] => Ok((self.search_path(), name.clone())),
            [schema, name] => Ok((vec![self.explicit_namespace(schema)?], name.clone())),
            [db, schema, name] if *db == self.current_database_name() => Ok((vec![self.explicit_namespace(schema)?], name.clone())),
            [_, _, _] => Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cross-database references are not implemented: {}", names.join(".")))),
            _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("improper qualified name (too many dotted names): {}", names.join(".")))),
        }
    }

    fn regclass_in(&self, s: &str) -> PgResult<Oid> {
        let names = name_list(s)?;
        let (namespaces, name) = self.lookup_namespaces(&names)?;
        namespaces
            .iter()
            .find_map(|&nsp| self.env.catalog.lookup_relation(nsp, &name).map(|r| r.oid))
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", names.join("."))))
    }

    /// Functions (built-in and user-defined) named `name` in `namespaces`.
    fn functions_named(&self, namespaces: &[Oid], name: &str) -> Vec<Oid> {
        let mut found: Vec<Oid> = self.env.catalog.procs_named(name).filter(|p| namespaces.contains(&p.namespace)).map(|p| p.oid).collect();
        found.sort_unstable();
        found
    }

    fn regproc_in(&self, s: &str) -> PgResult<Oid> {
        let names = name_list(s)?;
        let (namespaces, name) = self.lookup_namespaces(&names)?;
        match self.functions_named(&namespaces, &name).as_slice() {
            [oid] => Ok(*oid),
            [] => Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function \"{s}\" does not exist"))),
            _ => Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("more than one function named \"{s}\""))),
        }
    }

    fn arg_types(&self, args: &[String]) -> PgResult<Vec<Oid>> {
        args.iter().map(|a| arg_type(a)).collect()
    }

    fn regprocedure_in(&self, s: &str) -> PgResult<Oid> {
        let (names, args) = name_and_args(s, false)?;
        let args = self.arg_types(&args)?;
        let (namespaces, name) = self.lookup_namespaces(&names)?;
        let catalog = self.env.catalog;
        self.functions_named(&namespaces, &name)
            .into_iter()
            .find(|o| catalog.proc(*o).is_some_and(|p| p.argtypes == args))
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function \"{s}\" does not exist")))
    }

    /// Built-in operators named `name`, optionally of the given argument
    /// types (0 for a missing left argument).
    fn operators_named(&self, names: &[String], args: Option<(Oid, Oid)>) -> PgResult<Vec<Oid>> {
        let (namespaces, name) = match names {
            [_, _] | [_, _, _] => match self.lookup_namespaces(names) {
                Ok(found) => found,
                // a missing schema simply matches nothing for regoperator
                Err(e) if args.is_some() && e.code == sqlstate::INVALID_SCHEMA_NAME => return Ok(Vec::new()),
                Err(e) => return Err(e),
            },
            _ => self.lookup_namespaces(names)?,
        };
        if !namespaces.contains(&PG_CATALOG_NAMESPACE) {
            return Ok(Vec::new());
        }
        let b = crate::catalog::builtins();
        let mut found: Vec<Oid> = b
            .operators_by_name
            .get(&name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|o| args.map_or(true, |(l, r)| b.operators[o].left == l && b.operators[o].right == r))
            .collect();
        found.sort_unstable();
        Ok(found)
    }

    fn regoper_in(&self, s: &str) -> PgResult<Oid> {
        let names = match s.rsplit_once('.') {
            Some((schema, op)) if !op.is_empty() && !schema.is_empty() && !op.contains(|c: char| c.is_alphanumeric()) => {
                let mut n = name_list(schema)?;
                n.push(op.to_string());
                n
            }
            _ => vec![s.to_string()],
        };
        match self.operators_named(&names, None)?.as_slice() {
            [oid] => Ok(*oid),
            [] => Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {s}"))),
            _ => Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("more than one operator named {s}"))),
        }
    }

    fn regoperator_in(&self, s: &str) -> PgResult<Oid> {
        let (names, args) = name_and_args(s, true)?;
        if args.len() == 1 {
            return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER, "missing argument")
                .with_hint("Use NONE to denote the missing argument of a unary operator."));
        }
        if args.len() != 2 {
            return Err(PgError::new(sqlstate::TOO_MANY_ARGUMENTS, "too many arguments").with_hint("Provide two argument types for operator."));
        }
        let side = |a: &str| if a.eq_ignore_ascii_case("none") { Ok(0) } else { arg_type(a) };
        let (left, right) = (side(&args[0])?, side(&args[1])?);
        self.operators_named(&names, Some((left, right)))?
            .first()
            .copied()
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {s}")))
    }

    fn regcollation_in(&self, s: &str) -> PgResult<Oid> {
        let names = name_list(s)?;
        let (namespaces, name) = self.lookup_namespaces(&names)?;
        namespaces
            .contains(&PG_CATALOG_NAMESPACE)
            .then(|| crate::catalog::system::collation_by_name(&name))
            .flatten()
            .ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_OBJECT, format!("collation \"{}\" for encoding \"UTF8\" does not exist", names.join(".")))
            })
    }

    fn regnamespace_in(&self, s: &str) -> PgResult<Oid> {
        let names = name_list(s)?;
        let [name] = names.as_slice() else { return Err(PgError::new(sqlstate::INVALID_NAME, "invalid name syntax")) };
        self.explicit_namespace(name)
    }

    /// func_get_detail's FUNCDETAIL_COERCION: `typename(x)` with one
    /// argument is a cast to that type when no function takes x's type
    /// exactly and the type names one: of a literal always, of anything
    /// else when the conversion is a relabeling or goes through text (but
    /// not a row to a string type).
    pub(crate) fn function_style_cast_target(&self, name: &str, arg: &crate::expr::Expr) -> Option<Oid> {
        let b = crate::catalog::builtins();
        let target = *b.type_by_name.get(name)?;
        let source = arg.ty().oid;
        if source == oid::UNKNOWN && matches!(arg, crate::expr::Expr::Const(..)) {
            return Some(target);
        }
        use super::coerce::CoercionPath;
        // a conversion without a pg_cast entry, other than element by element, goes through text
        let via_io = b.cast(source, target).is_none() && !(b.element_of(source) != 0 && b.element_of(target) != 0);
        match super::coerce::coercion_path(b, source, target, super::coerce::CoercionContext::Explicit) {
            CoercionPath::Relabel => Some(target),
            CoercionPath::Convert if via_io => {
                let composite = source == oid::RECORD || b.type_info(source).is_some_and(|t| t.typtype == 'c');
                let string_target = b.type_info(target).is_some_and(|t| t.category == 'S');
                (!(composite && string_target)).then_some(target)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_signatures() {
        assert_eq!(name_list("pg_catalog.\"POSIX\"").unwrap(), vec!["pg_catalog", "POSIX"]);
        assert_eq!(name_list("Nonexistent").unwrap(), vec!["nonexistent"]);
        assert!(name_list("foo..bar").is_err());
        let (n, a) = name_and_args("pg_catalog.+(int4, int4)", true).unwrap();
        assert_eq!((n, a), (vec!["pg_catalog".to_string(), "+".to_string()], vec!["int4".to_string(), "int4".to_string()]));
        let (n, a) = name_and_args("abs(numeric(10,2))", false).unwrap();
        assert_eq!((n, a), (vec!["abs".to_string()], vec!["numeric(10,2)".to_string()]));
    }
}

/// A type named inside a reg* literal's argument list. Its errors carry no
/// position of their own: they point at the literal, or at nothing when a
/// function such as to_regprocedure reads the string.
fn arg_type(name: &str) -> PgResult<Oid> {
    crate::functions::cast::regtype_in(name).map_err(|e| PgError { position: None, ..e })
}
