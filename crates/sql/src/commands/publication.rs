//! CREATE / ALTER / DROP PUBLICATION, as PostgreSQL 15's publicationcmds.c
//! and pg_publication.c do them: the options, the tables (with column
//! lists and row filters) and schemas a publication names, and the checks
//! and messages PostgreSQL gives. Tusk has no logical decoding, so a
//! publication is a catalog object: pg_publication, pg_publication_rel,
//! pg_publication_namespace and pg_publication_tables show it, psql's
//! \dRp lists it, and UPDATE/DELETE on a table it publishes check the
//! table's replica identity as PostgreSQL's CheckCmdReplicaIdentity does.

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::{NodeEnum, NodeRef};
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::{deparse_expr, Ddl};
use super::grant;
use crate::catalog::depend::{ObjectAddress, PG_PUBLICATION};
use crate::catalog::*;
use crate::expr::{Expr, SYSTEM_COLUMN_BASE};
use crate::session::SqlSession;

/// What WITH (...) set.
#[derive(Default)]
struct PubOptions {
    /// insert, update, delete, truncate
    publish: Option<[bool; 4]>,
    via_root: Option<bool>,
}

/// A table named in the statement, opened (OpenTableList).
struct TableSpec {
    rel: Arc<Relation>,
    where_clause: Option<Node>,
    columns: Vec<String>,
}

fn pos(location: i32) -> Option<u32> {
    (location >= 0).then(|| location as u32 + 1)
}

fn denied(message: String) -> PgError {
    PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message)
}

fn not_found(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("publication \"{name}\" does not exist"))
}

/// defGetBoolean
pub(crate) fn def_boolean(de: &pb::DefElem) -> PgResult<bool> {
    if de.arg.is_none() {
        return Ok(true);
    }
    if let Some(NodeEnum::Boolean(b)) = de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        return Ok(b.boolval);
    }
    let v = super::def_elem_value(de).unwrap_or_default();
    match v.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" => Ok(true),
        "false" | "off" | "0" => Ok(false),
        _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("{} requires a Boolean value", de.defname))),
    }
}

/// SplitIdentifierString(value, ','): names separated by commas, unquoted
/// ones folded to lower case.
fn split_identifiers(value: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let p = part.trim();
        if p.is_empty() {
            return None;
        }
        if let Some(q) = p.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            out.push(q.replace("\"\"", "\""));
        } else {
            out.push(p.to_lowercase());
        }
    }
    Some(out)
}

/// parse_publication_options
fn parse_options(options: &[Node]) -> PgResult<PubOptions> {
    let mut o = PubOptions::default();
    for n in options {
        let Some(NodeEnum::DefElem(de)) = &n.node else { continue };
        match de.defname.as_str() {
            "publish" => {
                if o.publish.is_some() {
                    return Err(conflicting(de));
                }
                let value = super::def_elem_value(de).unwrap_or_default();
                let list = split_identifiers(&value)
                    .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, "invalid list syntax in parameter \"publish\""))?;
                let mut p = [false; 4];
                for item in list {
                    match item.as_str() {
                        "insert" => p[0] = true,
                        "update" => p[1] = true,
                        "delete" => p[2] = true,
                        "truncate" => p[3] = true,
                        other => {
                            return Err(PgError::new(
                                sqlstate::SYNTAX_ERROR,
                                format!("unrecognized value for publication option \"publish\": \"{other}\""),
                            ))
                        }
                    }
                }
                o.publish = Some(p);
            }
            "publish_via_partition_root" => {
                if o.via_root.is_some() {
                    return Err(conflicting(de));
                }
                o.via_root = Some(def_boolean(de)?);
            }
            other => return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("unrecognized publication parameter: \"{other}\""))),
        }
    }
    Ok(o)
}

/// errorConflictingDefElem
pub(crate) fn conflicting(de: &pb::DefElem) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options").with_position(pos(de.location))
}

fn is_superuser(s: &SqlSession) -> bool {
    grant::current_grantee(s).superuser
}

/// CREATE on the current database for `role` (pg_database_aclcheck).
fn check_database_create(s: &SqlSession, role: Oid) -> PgResult<()> {
    let cat = s.cluster_catalog();
    let Some(d) = cat.databases.get(&s.db) else { return Ok(()) };
    let who = acl::Grantee::of(&cat, role, s.db);
    let dacl = grant::database_acl(d.oid, d.owner, &d.acl, &d.name);
    if !who.superuser && acl::mask(&dacl, &who, acl::CREATE) == 0 {
        return Err(denied(format!("permission denied for database {}", d.name)));
    }
    Ok(())
}

/// Serializes DDL on one publication name.
fn lock_name(s: &SqlSession, name: &str) -> PgResult<()> {
    s.txn()?.get_for_update(&store::pubsub_name_key(s.db, b'p', name))?;
    Ok(())
}

/// ObjectsInPublicationToOids: the tables (in order) and the schemas
/// (without duplicates) the statement names.
fn objects_of(d: &Ddl, objects: &[Node]) -> PgResult<(Vec<pb::PublicationTable>, Vec<Oid>)> {
    let mut tables = Vec::new();
    let mut schemas = Vec::new();
    for n in objects {
        let Some(NodeEnum::PublicationObjSpec(spec)) = &n.node else { continue };
        match spec.pubobjtype {
            x if x == pb::PublicationObjSpecType::PublicationobjTable as i32 => {
                if let Some(t) = &spec.pubtable {
                    tables.push((**t).clone());
                }
            }
            x if x == pb::PublicationObjSpecType::PublicationobjTablesInSchema as i32 => {
                let nsp = d.catalog.namespace_by_name.get(&spec.name).copied().ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", spec.name))
                })?;
                if !schemas.contains(&nsp) {
                    schemas.push(nsp);
                }
            }
            x if x == pb::PublicationObjSpecType::PublicationobjTablesInCurSchema as i32 => {
                let settings = d.s.settings.borrow();
                let a = d.s.analyzer(&d.catalog, &settings, &[], d.sql);
                let nsp = a
                    .search_path()
                    .into_iter()
                    .find(|n| *n != PG_CATALOG_NAMESPACE && Some(*n) != d.s.temp_namespace)
                    .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, "no schema has been selected for CURRENT_SCHEMA"))?;
                if !schemas.contains(&nsp) {
                    schemas.push(nsp);
                }
            }
            _ => return Err(PgError::internal(format!("invalid publication object type {}", spec.pubobjtype))),
        }
    }
    Ok((tables, schemas))
}

/// OpenTableList: each table named, and (unless ONLY) the tables
/// inheriting from it, with the parent's row filter and column list;
/// a table named twice must not carry a row filter or column list.
fn open_tables(d: &Ddl, tables: &[pb::PublicationTable]) -> PgResult<Vec<TableSpec>> {
    let mut out: Vec<TableSpec> = Vec::new();
    for t in tables {
        let Some(rv) = &t.relation else { continue };
        // table_openrv: no parse state, so the error has no position.
        let rel = d.lookup(rv).map_err(|mut e| {
            e.position = None;
            e
        })?;
        let columns: Vec<String> = t.columns.iter().filter_map(|c| match &c.node {
            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
            _ => None,
        }).collect();
        let where_clause = t.where_clause.as_deref().cloned();
        let tree = if rv.inh { d.catalog.inheritance_tree(rel.oid) } else { vec![rel.oid] };
        for relid in tree {
            if let Some(prev) = out.iter().find(|o| o.rel.oid == relid) {
                if relid == rel.oid || where_clause.is_some() || prev.where_clause.is_some() {
                    if where_clause.is_some() || prev.where_clause.is_some() {
                        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("conflicting or redundant WHERE clauses for table \"{}\"", rel.name)));
                    }
                }
                if !columns.is_empty() || !prev.columns.is_empty() {
                    return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("conflicting or redundant column lists for table \"{}\"", rel.name)));
                }
                continue;
            }
            let Some(r) = d.catalog.relation(relid).cloned() else { continue };
            out.push(TableSpec { rel: r, where_clause: where_clause.clone(), columns: columns.clone() });
        }
    }
    Ok(out)
}

/// The leftmost location in a raw expression (exprLocation of what it
/// became): a SubLink starts at its test expression.
fn leftmost_location(n: &Node) -> i32 {
    let own = crate::analyzer::expr_location(n);
    match &n.node {
        Some(NodeEnum::SubLink(s)) => match s.testexpr.as_deref().map(leftmost_location) {
            Some(l) if l >= 0 && (own < 0 || l < own) => l,
            _ => own,
        },
        Some(NodeEnum::AExpr(a)) => match a.lexpr.as_deref().map(leftmost_location) {
            Some(l) if l >= 0 && (own < 0 || l < own) => l,
            _ => own,
        },
        _ => own,
    }
}

fn invalid_where(location: i32, detail: &str) -> PgError {
    PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "invalid publication WHERE expression").with_position(pos(location)).with_detail(detail)
}

const ONLY_SIMPLE: &str = "Only columns, constants, built-in operators, built-in data types, built-in collations, and immutable built-in functions are allowed.";

/// check_simple_rowfilter_expr: a row filter may read only the row's own
/// columns, constants, built-in types, operators and immutable functions.
fn check_row_filter(e: &Expr, raw: &Node) -> PgResult<()> {
    let raw_nodes: Vec<(NodeRef, i32, pg_query::Context)> = raw.node.as_ref().map(|n| n.nodes()).unwrap_or_default();
    // Subqueries and system columns are found in the statement's own text,
    // which says where they are.
    for (n, _, _) in &raw_nodes {
        match n {
            NodeRef::SubLink(s) => {
                let node = Node { node: Some(NodeEnum::SubLink(Box::new((*s).clone()))) };
                return Err(invalid_where(leftmost_location(&node), ONLY_SIMPLE));
            }
            NodeRef::ColumnRef(c) => {
                let name = match c.fields.last().and_then(|f| f.node.as_ref()) {
                    Some(NodeEnum::String(s)) => s.sval.as_str(),
                    _ => "",
                };
                if matches!(name, "ctid" | "xmin" | "xmax" | "cmin" | "cmax" | "tableoid") {
                    return Err(invalid_where(c.location, "System columns are not allowed."));
                }
            }
            _ => {}
        }
    }
    let mut problem: Option<(&'static str, Option<String>)> = None;
    e.walk(&mut |x| {
        if problem.is_some() {
            return;
        }
        match x {
            Expr::Var(v) if v.col >= SYSTEM_COLUMN_BASE => problem = Some(("System columns are not allowed.", None)),
            Expr::Var(v) if v.ty.oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID => problem = Some(("User-defined types are not allowed.", None)),
            Expr::Const(_, t) if t.oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID => problem = Some(("User-defined types are not allowed.", None)),
            Expr::Func { func, .. } if func.volatility != 'i' || func.oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID => {
                problem = Some(("User-defined or built-in mutable functions are not allowed.", Some(func.name.to_string())))
            }
            Expr::ScalarArrayOp { op: func, .. } | Expr::Distinct { eq: func, .. } | Expr::NullIf { eq: func, .. }
                if func.volatility != 'i' || func.oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID =>
            {
                problem = Some(("User-defined or built-in mutable functions are not allowed.", None))
            }
            Expr::Agg(_) | Expr::Window(_) | Expr::SubLink { .. } | Expr::Param(..) => problem = Some((ONLY_SIMPLE, None)),
            _ => {}
        }
    });
    let Some((detail, func)) = problem else { return Ok(()) };
    // Point at the call when the statement names the function.
    let location = func
        .and_then(|f| {
            raw_nodes.iter().find_map(|(n, _, _)| match n {
                NodeRef::FuncCall(fc) => {
                    let last = match fc.funcname.last().and_then(|x| x.node.as_ref()) {
                        Some(NodeEnum::String(s)) => s.sval.as_str(),
                        _ => "",
                    };
                    (last == f).then_some(fc.location)
                }
                _ => None,
            })
        })
        .unwrap_or_else(|| leftmost_location(raw));
    Err(invalid_where(location, detail))
}

/// TransformPubWhereClauses: analyzes each row filter over its table and
/// checks that it is a simple expression.
fn transform_where_clauses(d: &Ddl, tables: &[TableSpec]) -> PgResult<Vec<Option<String>>> {
    let mut out = Vec::new();
    for t in tables {
        let Some(node) = &t.where_clause else {
            out.push(None);
            continue;
        };
        let settings = d.s.settings.borrow();
        let mut a = d.s.analyzer(&d.catalog, &settings, &[], d.sql);
        let e = a.analyze_publication_where(t.rel.clone(), node)?;
        check_row_filter(&e, node)?;
        out.push(Some(deparse_expr(node)?));
    }
    Ok(out)
}

/// CheckPubRelationColumnList: column lists and schemas do not mix.
fn check_column_lists(pubname: &str, d: &Ddl, tables: &[TableSpec], publish_schema: bool) -> PgResult<()> {
    for t in tables.iter().filter(|t| !t.columns.is_empty()) {
        if publish_schema {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("cannot use column list for relation \"{}.{}\" in publication \"{pubname}\"", d.catalog.namespace_name(t.rel.namespace), t.rel.name),
            )
            .with_detail("Column lists cannot be specified in publications containing FOR TABLES IN SCHEMA elements."));
        }
    }
    Ok(())
}

/// check_publication_add_relation
fn check_add_relation(rel: &Relation) -> PgResult<()> {
    let refuse = |detail: &str| {
        PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("cannot add relation \"{}\" to publication", rel.name)).with_detail(detail.to_string())
    };
    match rel.kind {
        RelKind::Table => {}
        RelKind::View => return Err(refuse("This operation is not supported for views.")),
        RelKind::Index => return Err(refuse("This operation is not supported for indexes.")),
        RelKind::Sequence => return Err(refuse("This operation is not supported for sequences.")),
        RelKind::ForeignTable => return Err(refuse("This operation is not supported for foreign tables.")),
        RelKind::CompositeType => return Err(refuse("This operation is not supported for composite types.")),
    }
    if rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return Err(refuse("This operation is not supported for system tables."));
    }
    match rel.persistence {
        't' => Err(refuse("This operation is not supported for temporary tables.")),
        'u' => Err(refuse("This operation is not supported for unlogged tables.")),
        _ => Ok(()),
    }
}

/// pub_collist_validate: the column list as attribute numbers, ascending.
fn validate_column_list(rel: &Relation, columns: &[String]) -> PgResult<Option<Vec<i16>>> {
    if columns.is_empty() {
        return Ok(None);
    }
    let mut set: Vec<i16> = Vec::new();
    for c in columns {
        if matches!(c.as_str(), "ctid" | "xmin" | "xmax" | "cmin" | "cmax" | "tableoid") {
            return Err(PgError::new(sqlstate::INVALID_COLUMN_REFERENCE, format!("cannot use system column \"{c}\" in publication column list")));
        }
        let (attnum, _) = rel
            .column_by_name(c)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{c}\" of relation \"{}\" does not exist", rel.name)))?;
        if set.contains(&attnum) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("duplicate column \"{c}\" in publication column list")));
        }
        set.push(attnum);
    }
    set.sort_unstable();
    Ok(Some(set))
}

/// PublicationAddTables: the current user must own each table; a table
/// already in the publication is an error unless `if_not_exists`.
fn add_tables(d: &Ddl, p: &mut Publication, tables: &[TableSpec], quals: &[Option<String>], if_not_exists: bool) -> PgResult<()> {
    for (t, qual) in tables.iter().zip(quals) {
        grant::check_relation_owner(d.s, &t.rel)?;
        if p.tables.iter().any(|m| m.relid == t.rel.oid) {
            if if_not_exists {
                continue;
            }
            return Err(PgError::new(
                sqlstate::DUPLICATE_OBJECT,
                format!("relation \"{}\" is already member of publication \"{}\"", t.rel.name, p.name),
            ));
        }
        check_add_relation(&t.rel)?;
        let columns = validate_column_list(&t.rel, &t.columns)?;
        p.tables.push(PublishedTable { oid: d.oid()?, relid: t.rel.oid, columns, qual: qual.clone() });
    }
    Ok(())
}

/// PublicationAddSchemas / check_publication_add_schema.
fn add_schemas(d: &Ddl, p: &mut Publication, schemas: &[Oid], if_not_exists: bool) -> PgResult<()> {
    for &nsp in schemas {
        let name = d.catalog.namespace_name(nsp).to_string();
        if p.schemas.iter().any(|n| n.nspid == nsp) {
            if if_not_exists {
                continue;
            }
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("schema \"{name}\" is already member of publication \"{}\"", p.name)));
        }
        let refuse = |detail: &str| {
            PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("cannot add schema \"{name}\" to publication")).with_detail(detail.to_string())
        };
        if nsp == PG_CATALOG_NAMESPACE || nsp == PG_TOAST_NAMESPACE || nsp == INFORMATION_SCHEMA_NAMESPACE {
            return Err(refuse("This operation is not supported for system schemas."));
        }
        if d.catalog.namespaces.get(&nsp).is_some_and(|n| n.temp_session.is_some()) {
            return Err(refuse("This operation is not supported for temporary schemas."));
        }
        p.schemas.push(PublishedSchema { oid: d.oid()?, nspid: nsp });
    }
    Ok(())
}

/// CREATE PUBLICATION name [FOR ALL TABLES | FOR publication_object, ...] [WITH (...)]
pub fn create_publication(s: &mut SqlSession, stmt: &pb::CreatePublicationStmt, sql: &str) -> PgResult<()> {
    {
        let me = grant::current_role_oid(s);
        check_database_create(s, me)?;
        if stmt.for_all_tables && !is_superuser(s) {
            return Err(denied("must be superuser to create FOR ALL TABLES publication".into()));
        }
        lock_name(s, &stmt.pubname)?;
        let d = Ddl::new(s, sql)?;
        if d.catalog.publication_by_name(&stmt.pubname).is_some() {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("publication \"{}\" already exists", stmt.pubname)));
        }
        let o = parse_options(&stmt.options)?;
        let [insert, update, delete, truncate] = o.publish.unwrap_or([true; 4]);
        let mut p = Publication {
            oid: d.oid()?,
            name: stmt.pubname.clone(),
            owner: me,
            all_tables: stmt.for_all_tables,
            insert,
            update,
            delete,
            truncate,
            via_root: o.via_root.unwrap_or(false),
            tables: Vec::new(),
            schemas: Vec::new(),
        };
        if !stmt.for_all_tables {
            let (tables, schemas) = objects_of(&d, &stmt.pubobjects)?;
            if !schemas.is_empty() && !is_superuser(s) {
                return Err(denied("must be superuser to create FOR TABLES IN SCHEMA publication".into()));
            }
            if !tables.is_empty() {
                let opened = open_tables(&d, &tables)?;
                let quals = transform_where_clauses(&d, &opened)?;
                check_column_lists(&p.name, &d, &opened, !schemas.is_empty())?;
                add_tables(&d, &mut p, &opened, &quals, true)?;
            }
            add_schemas(&d, &mut p, &schemas, true)?;
        }
        store::put_publication(d.txn()?, d.db(), &p)?;
    }
    // PostgreSQL warns that nothing is published when wal_level is below
    // logical; Tusk has no WAL levels and no logical decoding.
    s.notices
        .borrow_mut()
        .push(PgError::warning("wal_level is insufficient to publish logical changes").with_hint("Set wal_level to \"logical\" before creating subscriptions."));
    s.reload_txn_catalog()
}

/// The publication `name`, which the current user must own.
fn owned_publication(s: &SqlSession, catalog: &DbCatalog, name: &str) -> PgResult<Publication> {
    let p = catalog.publication_by_name(name).cloned().ok_or_else(|| not_found(name))?;
    if !grant::current_grantee(s).holds(p.owner) {
        return Err(denied(format!("must be owner of publication {name}")));
    }
    Ok(p)
}

/// ALTER PUBLICATION name SET (...) | ADD/SET/DROP publication_object, ...
pub fn alter_publication(s: &mut SqlSession, stmt: &pb::AlterPublicationStmt, sql: &str) -> PgResult<()> {
    {
        lock_name(s, &stmt.pubname)?;
        let d = Ddl::new(s, sql)?;
        let mut p = owned_publication(s, &d.catalog, &stmt.pubname)?;
        if !stmt.options.is_empty() {
            let o = parse_options(&stmt.options)?;
            if let Some([insert, update, delete, truncate]) = o.publish {
                p.insert = insert;
                p.update = update;
                p.delete = delete;
                p.truncate = truncate;
            }
            if let Some(v) = o.via_root {
                p.via_root = v;
            }
        } else {
            let action = stmt.action;
            let add = action == pb::AlterPublicationAction::ApAddObjects as i32;
            let drop = action == pb::AlterPublicationAction::ApDropObjects as i32;
            let set = action == pb::AlterPublicationAction::ApSetObjects as i32;
            let (tables, schemas) = objects_of(&d, &stmt.pubobjects)?;
            // CheckAlterPublication
            if (add || set) && !schemas.is_empty() && !is_superuser(s) {
                return Err(denied("must be superuser to add or set schemas".into()));
            }
            let all_tables = |what: &str| {
                PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("publication \"{}\" is defined as FOR ALL TABLES", p.name))
                    .with_detail(format!("{what} cannot be added to or dropped from FOR ALL TABLES publications."))
            };
            if !schemas.is_empty() && p.all_tables {
                return Err(all_tables("Schemas"));
            }
            if !tables.is_empty() && p.all_tables {
                return Err(all_tables("Tables"));
            }
            // AlterPublicationTables
            if !tables.is_empty() || set {
                let opened = open_tables(&d, &tables)?;
                if add {
                    let quals = transform_where_clauses(&d, &opened)?;
                    let publish_schema = !schemas.is_empty() || !p.schemas.is_empty();
                    check_column_lists(&p.name, &d, &opened, publish_schema)?;
                    add_tables(&d, &mut p, &opened, &quals, false)?;
                } else if drop {
                    for t in &opened {
                        if !t.columns.is_empty() {
                            return Err(PgError::new(sqlstate::SYNTAX_ERROR, "column list must not be specified in ALTER PUBLICATION ... DROP"));
                        }
                        let Some(i) = p.tables.iter().position(|m| m.relid == t.rel.oid) else {
                            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("relation \"{}\" is not part of the publication", t.rel.name)));
                        };
                        if t.where_clause.is_some() {
                            return Err(PgError::new(sqlstate::SYNTAX_ERROR, "cannot use a WHERE clause when removing a table from a publication"));
                        }
                        p.tables.remove(i);
                    }
                } else {
                    let quals = transform_where_clauses(&d, &opened)?;
                    check_column_lists(&p.name, &d, &opened, !schemas.is_empty())?;
                    // Members whose filter and column list stay the same
                    // keep their rows; the others are replaced.
                    let mut keep = Vec::new();
                    for m in &p.tables {
                        let same = opened.iter().zip(&quals).any(|(t, q)| {
                            t.rel.oid == m.relid
                                && *q == m.qual
                                && validate_column_list(&t.rel, &t.columns).ok().flatten() == m.columns
                        });
                        if same {
                            keep.push(m.clone());
                        }
                    }
                    p.tables = keep;
                    add_tables(&d, &mut p, &opened, &quals, true)?;
                }
            }
            // AlterPublicationSchemas
            if !schemas.is_empty() || set {
                if add {
                    if p.tables.iter().any(|m| m.columns.is_some()) {
                        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("cannot add schema to publication \"{}\"", p.name))
                            .with_detail("Schemas cannot be added if any tables that specify a column list are already part of the publication."));
                    }
                    add_schemas(&d, &mut p, &schemas, false)?;
                } else if drop {
                    for nsp in &schemas {
                        let Some(i) = p.schemas.iter().position(|m| m.nspid == *nsp) else {
                            return Err(PgError::new(
                                sqlstate::UNDEFINED_OBJECT,
                                format!("tables from schema \"{}\" are not part of the publication", d.catalog.namespace_name(*nsp)),
                            ));
                        };
                        p.schemas.remove(i);
                    }
                } else {
                    p.schemas.retain(|m| schemas.contains(&m.nspid));
                    add_schemas(&d, &mut p, &schemas, true)?;
                }
            }
        }
        store::put_publication(d.txn()?, d.db(), &p)?;
    }
    s.reload_txn_catalog()
}

/// DROP PUBLICATION [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
pub fn drop_publications(s: &mut SqlSession, stmt: &pb::DropStmt, sql: &str) -> PgResult<()> {
    let mut targets = Vec::new();
    {
        let d = Ddl::new(s, sql)?;
        for obj in &stmt.objects {
            let Some(NodeEnum::String(name)) = &obj.node else { continue };
            let name = &name.sval;
            let Some(p) = d.catalog.publication_by_name(name) else {
                if stmt.missing_ok {
                    super::notice(s, format!("publication \"{name}\" does not exist, skipping"));
                    continue;
                }
                return Err(not_found(name));
            };
            if !grant::current_grantee(s).holds(p.owner) {
                return Err(denied(format!("must be owner of publication {name}")));
            }
            lock_name(s, name)?;
            let t = ObjectAddress::new(PG_PUBLICATION, p.oid, 0);
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        let cascade = stmt.behavior == pb::DropBehavior::DropCascade as i32;
        super::dependency::perform_deletion(&d, &targets, cascade)?;
    }
    s.reload_txn_catalog()
}

/// ALTER PUBLICATION name RENAME TO new_name
pub fn rename_publication(s: &mut SqlSession, old: &str, new: &str) -> PgResult<()> {
    {
        lock_name(s, old)?;
        lock_name(s, new)?;
        let catalog = s.catalog()?;
        let mut p = owned_publication(s, &catalog, old)?;
        if catalog.publication_by_name(new).is_some() {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("publication \"{new}\" already exists")));
        }
        p.name = new.to_string();
        store::put_publication(s.txn()?, s.db, &p)?;
    }
    s.reload_txn_catalog()
}

/// ALTER PUBLICATION name OWNER TO role (AlterPublicationOwner_internal)
pub fn alter_publication_owner(s: &mut SqlSession, name: &str, new_owner: Oid) -> PgResult<()> {
    {
        lock_name(s, name)?;
        let catalog = s.catalog()?;
        let mut p = catalog.publication_by_name(name).cloned().ok_or_else(|| not_found(name))?;
        if p.owner == new_owner {
            return Ok(());
        }
        let me = grant::current_grantee(s);
        if !me.superuser {
            if !me.holds(p.owner) {
                return Err(denied(format!("must be owner of publication {name}")));
            }
            let cat = s.cluster_catalog();
            if !cat.is_member_of_role_nosuper(me.role, new_owner, None) {
                return Err(denied(format!("must be member of role \"{}\"", cat.role_name(new_owner))));
            }
            check_database_create(s, new_owner)?;
            let new_is_superuser = cat.is_superuser(new_owner);
            if p.all_tables && !new_is_superuser {
                return Err(denied(format!("permission denied to change owner of publication \"{name}\""))
                    .with_hint("The owner of a FOR ALL TABLES publication must be a superuser."));
            }
            if !new_is_superuser && !p.schemas.is_empty() {
                return Err(denied(format!("permission denied to change owner of publication \"{name}\""))
                    .with_hint("The owner of a FOR TABLES IN SCHEMA publication must be a superuser."));
            }
        }
        p.owner = new_owner;
        store::put_publication(s.txn()?, s.db, &p)?;
    }
    s.reload_txn_catalog()
}

/// COMMENT ON PUBLICATION: the publication's OID, for its owner.
pub fn comment_target(s: &SqlSession, catalog: &DbCatalog, name: &str) -> PgResult<Oid> {
    Ok(owned_publication(s, catalog, name)?.oid)
}
