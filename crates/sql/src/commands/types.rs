//! CREATE TYPE and DROP TYPE: user-defined types (DefineCompositeType,
//! RemoveObjects for types).
//!
//! A composite type is, as in PostgreSQL, a relation of kind 'c' holding
//! its attributes as columns, with a row type whose pg_type row points back
//! at it (`typrelid`); see `catalog::types` for how types are resolved.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use super::notice;
use crate::catalog::depend::{ObjectAddress, PG_TYPE};
use crate::catalog::types::UserTypeKind;
use crate::catalog::RelKind;
use crate::session::SqlSession;

/// CREATE TYPE name AS (attr type, ...)
pub fn create_composite_type(s: &mut SqlSession, stmt: &pb::CompositeTypeStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.typevar.as_ref().ok_or_else(|| PgError::internal("CREATE TYPE without a name"))?;
    {
        let d = Ddl::new(s, sql)?;
        let temp = rv.relpersistence == "t";
        let nsp = d.namespace_for(rv, temp)?;
        if d.catalog.user_types.lookup(nsp, &rv.relname).is_some() || d.relation_name_taken(nsp, &rv.relname) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{}\" already exists", rv.relname)));
        }
        let mut rel = super::ddl::new_relation(0, &rv.relname, nsp, RelKind::CompositeType, if temp { 't' } else { 'p' }, super::grant::current_role_oid(s));
        for elt in &stmt.coldeflist {
            let Some(NodeEnum::ColumnDef(cd)) = &elt.node else { continue };
            if rel.columns.iter().any(|c| c.name == cd.colname) {
                return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", cd.colname)));
            }
            let idx = rel.columns.len();
            let (col, _) = super::ddl::column_from_def(&d, cd, idx)?;
            check_not_self_containing(&d, &rel.name, nsp, col.type_oid)?;
            rel.columns.push(col);
        }
        rel.oid = d.oid()?;
        d.create_relation(&mut rel)?;
    }
    s.reload_txn_catalog()
}

/// A composite type cannot contain itself; by name this can only happen
/// through a type made in the same statement, which cannot exist yet, so
/// only a (pre-existing) array of the type needs a look.
fn check_not_self_containing(d: &Ddl, name: &str, nsp: Oid, t: Oid) -> PgResult<()> {
    let b = crate::catalog::builtins();
    let elem = b.element_of(t);
    let base = if elem != 0 { elem } else { t };
    if d.catalog.user_types.lookup(nsp, name) == Some(base) {
        return Err(PgError::new(sqlstate::INVALID_TABLE_DEFINITION, format!("composite type {name} cannot be made a member of itself")));
    }
    Ok(())
}

/// DROP TYPE name [, ...] [CASCADE | RESTRICT]
pub fn drop_types(s: &mut SqlSession, stmt: &pb::DropStmt, sql: &str, domains: bool) -> PgResult<()> {
    let cascade = stmt.behavior == pb::DropBehavior::DropCascade as i32;
    let mut targets: Vec<ObjectAddress> = Vec::new();
    {
        let d = Ddl::new(s, sql)?;
        let b = crate::catalog::builtins();
        for obj in &stmt.objects {
            let Some(NodeEnum::TypeName(tn)) = &obj.node else { continue };
            let shown = crate::analyzer::types::type_name_display(tn);
            let t = match crate::analyzer::types::resolve_type_name(b, tn) {
                Ok(t) => t.oid,
                Err(e) if stmt.missing_ok && e.code == sqlstate::UNDEFINED_OBJECT => {
                    notice(s, format!("type \"{shown}\" does not exist, skipping"));
                    continue;
                }
                Err(e) if stmt.missing_ok && e.code == sqlstate::INVALID_SCHEMA_NAME => {
                    let (schema, _) = crate::analyzer::types::type_name_parts(tn);
                    notice(s, format!("schema \"{}\" does not exist, skipping", schema.unwrap_or_default()));
                    continue;
                }
                Err(mut e) => {
                    // DROP names are not positioned in the statement.
                    e.position = None;
                    return Err(e);
                }
            };
            let Some(ut) = d.catalog.user_types.get(t) else {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop type {} because it is required by the database system", crate::analyzer::types::format_type(b, t, -1)),
                ));
            };
            if domains && !matches!(ut.kind, UserTypeKind::Domain(_)) {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a domain", crate::analyzer::types::format_type(b, t, -1))));
            }
            // An array type goes only with its element type.
            if let UserTypeKind::Array { element } = ut.kind {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop type {} because type {} requires it",
                        crate::analyzer::types::format_type(b, t, -1),
                        crate::analyzer::types::format_type(b, element, -1)
                    ),
                )
                .with_hint(format!("You can drop type {} instead.", crate::analyzer::types::format_type(b, element, -1))));
            }
            if let Some(me) = super::grant::checked_user(d.s) {
                if !me.holds(ut.owner) {
                    return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of type {}", crate::analyzer::types::format_type(b, t, -1))));
                }
            }
            let target = ObjectAddress::new(PG_TYPE, t, 0);
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        super::dependency::perform_deletion(&d, &targets, cascade)?;
    }
    s.reload_txn_catalog()
}

/// CREATE DOMAIN name [AS] type [COLLATE c] [DEFAULT e] [constraint ...]
/// (DefineDomain).
pub fn create_domain(s: &mut SqlSession, stmt: &pb::CreateDomainStmt, sql: &str) -> PgResult<()> {
    let names: Vec<&str> = stmt.domainname.iter().filter_map(|n| match &n.node {
        Some(NodeEnum::String(v)) => Some(v.sval.as_str()),
        _ => None,
    }).collect();
    let Some((&name, qual)) = names.split_last() else { return Err(PgError::internal("CREATE DOMAIN without a name")) };
    {
        let d = Ddl::new(s, sql)?;
        let rv = pb::RangeVar { relname: name.to_string(), schemaname: qual.last().map(|s| s.to_string()).unwrap_or_default(), relpersistence: "p".into(), ..Default::default() };
        let nsp = d.namespace_for(&rv, false)?;
        if d.catalog.user_types.lookup(nsp, name).is_some() {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        let b = crate::catalog::builtins();
        let tn = stmt.type_name.as_ref().ok_or_else(|| PgError::internal("CREATE DOMAIN without a type"))?;
        let base = crate::analyzer::types::resolve_type_name(b, tn)?;
        let base_info = b.type_info(base.oid).ok_or_else(|| PgError::internal("base type without pg_type row"))?;
        // Domains go over base types, enums, ranges, composites and other
        // domains, not over pseudo-types.
        if base_info.typtype == 'p' {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("\"{}\" is not a valid base type for a domain", crate::analyzer::types::format_type(b, base.oid, -1)),
            ));
        }
        let mut collation = base_info.collation;
        if let Some(cc) = &stmt.coll_clause {
            if base_info.collation == 0 {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!("collations are not supported by type {}", crate::analyzer::types::format_type(b, base.oid, -1)),
                ));
            }
            let cname: Vec<&str> = cc.collname.iter().filter_map(|n| match &n.node {
                Some(NodeEnum::String(v)) => Some(v.sval.as_str()),
                _ => None,
            }).collect();
            collation = match cname.last().copied() {
                Some("C") => 950,
                Some("POSIX") => 951,
                Some("default") => 100,
                _ => collation,
            };
        }
        let mut domain = crate::catalog::types::Domain { base, not_null: false, not_null_oid: 0, not_null_name: String::new(), default: None, collation, checks: Vec::new() };
        let mut saw_null = false;
        let mut saw_not_null = false;
        let oid = d.oid()?;
        for c in &stmt.constraints {
            let Some(NodeEnum::Constraint(con)) = &c.node else { continue };
            match con.contype {
                // NULL
                1 => {
                    if saw_not_null {
                        return Err(PgError::syntax("conflicting NULL/NOT NULL constraints"));
                    }
                    saw_null = true;
                }
                // NOT NULL
                2 => {
                    if saw_null {
                        return Err(PgError::syntax("conflicting NULL/NOT NULL constraints"));
                    }
                    saw_not_null = true;
                    domain.not_null = true;
                }
                // DEFAULT
                3 => {
                    if domain.default.is_some() {
                        return Err(PgError::syntax("multiple default expressions"));
                    }
                    let raw = con.raw_expr.as_deref().ok_or_else(|| PgError::internal("DEFAULT without expression"))?;
                    // Checked the way a column default is: an expression of
                    // the base type, no column references or subqueries.
                    {
                        let settings = d.s.settings.borrow();
                        let mut a = d.s.analyzer(&d.catalog, &settings, &[], sql);
                        let e = a.analyze_standalone_node(raw, "DEFAULT expressions")?;
                        a.coerce_to(e, base, crate::analyzer::coerce::CoercionContext::Assignment, -1)?;
                    }
                    domain.default = Some(super::ddl::deparse_expr(raw)?);
                }
                // CHECK
                6 => {
                    if con.is_no_inherit {
                        return Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, "check constraints for domains cannot be marked NO INHERIT"));
                    }
                    let raw = con.raw_expr.as_deref().ok_or_else(|| PgError::internal("CHECK without expression"))?;
                    let text = super::ddl::deparse_expr(raw)?;
                    check_domain_expr(&d, sql, &text, crate::catalog::types::base_type(base))?;
                    let cname = if con.conname.is_empty() { choose_check_name(name, &domain.checks) } else { con.conname.clone() };
                    if domain.checks.iter().any(|c| c.name == cname) {
                        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("constraint \"{cname}\" for domain \"{name}\" already exists")));
                    }
                    domain.checks.push(crate::catalog::types::DomainCheck { oid: d.oid()?, name: cname, expr: text, validated: !con.skip_validation });
                }
                7 | 8 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, if con.contype == 7 { "primary key constraints not possible for domains" } else { "unique constraints not possible for domains" })),
                9 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "exclusion constraints not possible for domains")),
                10 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "foreign key constraints not possible for domains")),
                _ => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "specifying constraint deferrability not supported for domains")),
            }
        }
        let array_oid = d.oid()?;
        let stored = crate::catalog::types::StoredType {
            oid,
            name: name.to_string(),
            namespace: nsp,
            owner: super::grant::current_role_oid(s),
            array_oid,
            def: crate::catalog::types::TypeDef::Domain(domain),
        };
        if !crate::catalog::store::claim_name(d.txn()?, d.db(), nsp, name, oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        crate::catalog::store::put_type(d.txn()?, d.db(), &stored)?;
    }
    s.reload_txn_catalog()
}

/// ChooseConstraintName(domain, NULL, "check"): `d_check`, `d_check1`, ...
fn choose_check_name(domain: &str, existing: &[crate::catalog::types::DomainCheck]) -> String {
    let base = crate::commands::naming::clip(&format!("{domain}_check"), 63).to_string();
    if !existing.iter().any(|c| c.name == base) {
        return base;
    }
    (1..).map(|i| format!("{base}{i}")).find(|n| !existing.iter().any(|c| &c.name == n)).unwrap_or(base)
}

/// domainAddConstraint's checks: a boolean expression over VALUE alone.
fn check_domain_expr(d: &Ddl, sql: &str, text: &str, value_ty: tusk_types::SqlType) -> PgResult<()> {
    let settings = d.s.settings.borrow();
    let mut a = d.s.analyzer(&d.catalog, &settings, &[], sql);
    a.domain_check_expr(text, value_ty).map(|_| ())
}

/// The domain an ALTER DOMAIN names, and its stored row.
fn stored_domain(d: &Ddl, names: &[pg_query::protobuf::Node]) -> PgResult<crate::catalog::types::StoredType> {
    stored_type_owned(d, names, |written, _| PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{written}\" is not a domain")))
}

/// The stored user type (domain, enum, range) `names` resolves to, checked
/// for ownership; `not_stored` makes the error for a type that is not one,
/// from the name as written and the type's OID.
pub(super) fn stored_type_owned(
    d: &Ddl,
    names: &[pg_query::protobuf::Node],
    not_stored: impl FnOnce(&str, tusk_types::Oid) -> PgError,
) -> PgResult<crate::catalog::types::StoredType> {
    let parts: Vec<&str> = names.iter().filter_map(|n| match &n.node {
        Some(NodeEnum::String(v)) => Some(v.sval.as_str()),
        _ => None,
    }).collect();
    let tn = pb::TypeName { names: names.to_vec(), typemod: -1, location: -1, ..Default::default() };
    let b = crate::catalog::builtins();
    let t = crate::analyzer::types::resolve_type_name(b, &tn).map_err(|mut e| {
        e.position = None;
        e
    })?;
    let Some(st) = d.catalog.stored_types.iter().find(|s| s.oid == t.oid) else {
        return Err(not_stored(&parts.join("."), t.oid));
    };
    if let Some(me) = super::grant::checked_user(d.s) {
        if !me.holds(st.owner) {
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of type {}", st.name)));
        }
    }
    Ok(st.clone())
}

/// ALTER DOMAIN: defaults, NOT NULL, and CHECK constraints (AlterDomain*).
/// New constraints are checked against the values already stored in
/// columns of the domain, as PostgreSQL's validateDomainConstraint does.
pub fn alter_domain(s: &mut SqlSession, stmt: &pb::AlterDomainStmt, sql: &str) -> PgResult<()> {
    use crate::catalog::types::TypeDef;
    {
        let d = Ddl::new(s, sql)?;
        let mut st = stored_domain(&d, &stmt.type_name)?;
        let TypeDef::Domain(dom) = &mut st.def else {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a domain", st.name)));
        };
        let mut validate_not_null = false;
        let mut validate_checks = false;
        match stmt.subtype.as_str() {
            // SET DEFAULT / DROP DEFAULT
            "T" => {
                dom.default = match stmt.def.as_deref() {
                    Some(n) => {
                        {
                            let settings = d.s.settings.borrow();
                            let mut a = d.s.analyzer(&d.catalog, &settings, &[], sql);
                            let e = a.analyze_standalone_node(n, "DEFAULT expressions")?;
                            a.coerce_to(e, dom.base, crate::analyzer::coerce::CoercionContext::Assignment, -1)?;
                        }
                        Some(super::ddl::deparse_expr(n)?)
                    }
                    None => None,
                };
            }
            "N" => dom.not_null = false,
            "O" => {
                if !dom.not_null {
                    dom.not_null = true;
                    validate_not_null = true;
                }
            }
            "C" => {
                let Some(NodeEnum::Constraint(con)) = stmt.def.as_deref().and_then(|n| n.node.as_ref()) else {
                    return Err(PgError::internal("ALTER DOMAIN ADD without a constraint"));
                };
                match con.contype {
                    6 => {
                        let raw = con.raw_expr.as_deref().ok_or_else(|| PgError::internal("CHECK without expression"))?;
                        let text = super::ddl::deparse_expr(raw)?;
                        check_domain_expr(&d, sql, &text, crate::catalog::types::base_type(dom.base))?;
                        let cname = if con.conname.is_empty() { choose_check_name(&st.name, &dom.checks) } else { con.conname.clone() };
                        if dom.checks.iter().any(|c| c.name == cname) {
                            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("constraint \"{cname}\" for domain \"{}\" already exists", st.name)));
                        }
                        dom.checks.push(crate::catalog::types::DomainCheck { oid: d.oid()?, name: cname, expr: text, validated: !con.skip_validation });
                        validate_checks = !con.skip_validation;
                    }
                    2 => {
                        if !dom.not_null {
                            dom.not_null = true;
                            validate_not_null = true;
                        }
                    }
                    7 | 8 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, if con.contype == 7 { "primary key constraints not possible for domains" } else { "unique constraints not possible for domains" })),
                    9 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "exclusion constraints not possible for domains")),
                    10 => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "foreign key constraints not possible for domains")),
                    _ => return Err(PgError::new(sqlstate::SYNTAX_ERROR, "use ALTER DOMAIN ... SET/DROP NOT NULL or DEFAULT instead")),
                }
            }
            "X" => match dom.checks.iter().position(|c| c.name == stmt.name) {
                Some(i) => {
                    dom.checks.remove(i);
                }
                None if stmt.missing_ok => {
                    notice(s, format!("constraint \"{}\" of domain \"{}\" does not exist, skipping", stmt.name, st.name));
                    return Ok(());
                }
                None => {
                    return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{}\" of domain \"{}\" does not exist", stmt.name, st.name)));
                }
            },
            "V" => match dom.checks.iter_mut().find(|c| c.name == stmt.name) {
                Some(c) => {
                    validate_checks = !c.validated;
                    c.validated = true;
                }
                None => {
                    return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{}\" of domain \"{}\" does not exist", stmt.name, st.name)));
                }
            },
            _ => return Err(PgError::unsupported("this form of ALTER DOMAIN")),
        }
        crate::catalog::store::put_type(d.txn()?, d.db(), &st)?;
        if validate_not_null || validate_checks {
            validate_domain_columns(&d, st.oid, validate_not_null, validate_checks)?;
        }
    }
    s.reload_txn_catalog()
}

/// The user types that hold a value of the domain (or of a domain over
/// it, as `over` tells) inside them: arrays of such types, composite types
/// with a field of one, domains over one, ranges of one and their
/// multiranges; to a fixpoint.
fn domain_containers(types: &crate::catalog::types::UserTypes, over: &dyn Fn(Oid) -> bool) -> std::collections::HashSet<Oid> {
    use crate::catalog::types::UserTypeKind;
    let mut found = std::collections::HashSet::new();
    loop {
        let before = found.len();
        for (&oid, t) in &types.by_oid {
            if found.contains(&oid) {
                continue;
            }
            let holds = |x: Oid| over(x) || found.contains(&x);
            let contains = match &t.kind {
                UserTypeKind::Array { element } => holds(*element),
                UserTypeKind::Composite { .. } => types.composite_fields(oid).is_some_and(|f| f.iter().any(|(_, ty)| holds(ty.oid))),
                UserTypeKind::Domain(d) => found.contains(&d.base.oid),
                UserTypeKind::Range(r) => holds(r.subtype),
                UserTypeKind::Multirange { range } => found.contains(range),
                #[allow(unreachable_patterns)]
                _ => false,
            };
            if contains {
                found.insert(oid);
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// validateDomainConstraint / ALTER DOMAIN SET NOT NULL's scan: every
/// stored value of a column of the domain (or of a domain over it) must
/// pass the domain's constraints as they now stand.
fn validate_domain_columns(d: &Ddl, domain: Oid, not_null: bool, checks: bool) -> PgResult<()> {
    let cat = std::sync::Arc::new(crate::catalog::store::load_database(d.txn()?, d.db())?);
    crate::catalog::types::enter_catalog(&cat.user_types);
    let over = |t: Oid| {
        let mut t = t;
        for _ in 0..32 {
            if t == domain {
                return true;
            }
            match cat.user_types.domain(t) {
                Some(dd) => t = dd.base.oid,
                None => return false,
            }
        }
        false
    };
    let mut rels: Vec<&std::sync::Arc<crate::catalog::Relation>> = cat.relations.values().filter(|r| r.kind == RelKind::Table).collect();
    rels.sort_by_key(|r| r.oid);
    // get_rels_with_domain: a column holding the domain inside another
    // type (an array of it, a composite with a field of it, a domain over
    // such a type) cannot be checked in place, and PostgreSQL refuses.
    let containers = domain_containers(&cat.user_types, &over);
    for rel in &rels {
        if let Some((_, col)) = rel.live_columns().find(|(_, c)| containers.contains(&c.type_oid)) {
            let name = crate::analyzer::types::format_type(crate::catalog::builtins(), domain, -1);
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot alter type \"{name}\" because column \"{}.{}\" uses it", rel.name, col.name)));
        }
    }
    for rel in rels {
        for (_, col) in rel.live_columns().filter(|(_, c)| over(c.type_oid)) {
            let ident = crate::functions::quote_ident(&col.name);
            let base = crate::analyzer::types::format_type(crate::catalog::builtins(), crate::catalog::types::base_type_oid(col.type_oid), -1);
            let dom = crate::analyzer::types::format_type(crate::catalog::builtins(), col.type_oid, -1);
            let text = if checks { format!("CAST(CAST({ident} AS {base}) AS {dom}) IS NULL") } else { format!("{ident} IS NULL") };
            let table_name = rel.name.clone();
            let col_name = col.name.clone();
            let rel = (*rel).clone();
            d.s.with_exec(&cat, |cx| {
                let mut compile = crate::executor::nodes_compile(cx);
                let e = compile(&rel, &text)?;
                let table = crate::executor::table::TableAccess::new(rel.clone(), &cat, &mut compile)?;
                let mut failure: Option<PgError> = None;
                table.scan_all(cx, &mut |_, row| {
                    if failure.is_some() {
                        return Ok(());
                    }
                    match crate::executor::eval(&e, &row, cx) {
                        Ok(tusk_types::Datum::Bool(true)) if not_null && !checks => {
                            failure = Some(PgError::new(sqlstate::NOT_NULL_VIOLATION, format!("column \"{col_name}\" of table \"{table_name}\" contains null values")));
                        }
                        Ok(_) => {}
                        Err(e) if e.code == sqlstate::NOT_NULL_VIOLATION => {
                            failure = Some(PgError::new(sqlstate::NOT_NULL_VIOLATION, format!("column \"{col_name}\" of table \"{table_name}\" contains null values")));
                        }
                        Err(e) if e.code == sqlstate::CHECK_VIOLATION => {
                            failure = Some(PgError::new(
                                sqlstate::CHECK_VIOLATION,
                                format!("column \"{col_name}\" of table \"{table_name}\" contains values that violate the new constraint"),
                            ));
                        }
                        Err(e) => return Err(e),
                    }
                    Ok(())
                })?;
                match failure {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            })?;
        }
    }
    Ok(())
}
