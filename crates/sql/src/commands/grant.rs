//! GRANT and REVOKE on tables, schemas and databases, and the privilege
//! checks that enforce them (PostgreSQL's commands/aclchk.c and the
//! permission part of executor/execMain.c's ExecCheckRTPerms).
//!
//! Superusers pass every check. Everyone else needs, when a statement
//! starts, the privileges its analysis noted on each relation it uses
//! (the relations a view reads are checked as the view's owner); USAGE on
//! a schema to look names up in it and CREATE to create in it; ownership
//! to alter or drop.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use crate::catalog::acl::{self, AclItem, Grantee, ObjectKind, RelPerm};
use crate::catalog::{store, ClusterCatalog, RelKind, Relation};
use crate::session::SqlSession;

fn denied(message: String) -> PgError {
    PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message)
}

/// The current user as privilege checks see it.
pub fn current_grantee(s: &SqlSession) -> Grantee {
    let cat = s.cluster_catalog();
    Grantee::lookup(&cat, &s.user, s.db).unwrap_or_else(Grantee::nobody)
}

/// The current user, unless a superuser (who is never checked).
pub fn checked_user(s: &SqlSession) -> Option<Grantee> {
    Some(current_grantee(s)).filter(|g| !g.superuser)
}

/// The OID of the current user: the owner of what it creates.
pub fn current_role_oid(s: &SqlSession) -> Oid {
    let cat = s.cluster_catalog();
    cat.role_by_name(&s.user).map(|r| r.oid).unwrap_or(crate::catalog::BOOTSTRAP_SUPERUSER)
}

fn relation_object_kind(rel: &Relation) -> ObjectKind {
    if rel.kind == RelKind::Sequence {
        ObjectKind::Sequence
    } else {
        ObjectKind::Table
    }
}

/// A relation's ACL, stored or default.
pub fn relation_acl(rel: &Relation) -> Vec<AclItem> {
    rel.acl.clone().unwrap_or_else(|| acl::default_acl(relation_object_kind(rel), rel.owner))
}

/// ExecCheckRTPerms: every relation with the privileges the statement needs.
pub fn check_relation_privileges(s: &SqlSession, perms: &[RelPerm]) -> PgResult<()> {
    if perms.is_empty() {
        return Ok(());
    }
    let cat = s.cluster_catalog();
    let Some(me) = Grantee::lookup(&cat, &s.user, s.db) else { return Ok(()) };
    if me.superuser && perms.iter().all(|p| p.as_role.is_none()) {
        return Ok(());
    }
    let catalog = s.catalog()?;
    for p in perms {
        let Some(rel) = catalog.relation(p.rel) else { continue };
        let who = match p.as_role {
            Some(owner) => Grantee::of(&cat, owner, s.db),
            None => me.clone(),
        };
        if acl::relation_mask(&relation_acl(rel), &who, p.required) != p.required {
            return Err(denied(format!("permission denied for {} {}", rel.kind.noun(), rel.name)));
        }
    }
    Ok(())
}

/// "must be owner of table t" unless the current user owns the relation.
pub fn check_relation_owner(s: &SqlSession, rel: &Relation) -> PgResult<()> {
    let me = current_grantee(s);
    if me.holds(rel.owner) || rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return Ok(());
    }
    Err(denied(format!("must be owner of {} {}", rel.kind.noun(), rel.name)))
}

/// The role an OWNER TO names (CURRENT_USER, SESSION_USER or a name).
pub fn role_spec_oid(s: &SqlSession, spec: Option<&pb::RoleSpec>) -> PgResult<Oid> {
    let cat = s.cluster_catalog();
    let Some(rs) = spec else { return Ok(current_role_oid(s)) };
    let name = match rs.roletype {
        x if x == pb::RoleSpecType::RolespecCurrentRole as i32 || x == pb::RoleSpecType::RolespecCurrentUser as i32 => s.user.clone(),
        x if x == pb::RoleSpecType::RolespecSessionUser as i32 => s.session_user.clone(),
        x if x == pb::RoleSpecType::RolespecPublic as i32 => "public".to_string(),
        _ => rs.rolename.clone(),
    };
    cat.role_by_name(&name)
        .map(|r| r.oid)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")))
}

/// What a non-superuser needs to give an object in schema `nsp` to
/// `new_owner`: to be a member of that role (check_is_member_of_role),
/// and the role to have CREATE on the schema.
pub fn check_owner_change(s: &SqlSession, nsp: Oid, new_owner: Oid) -> PgResult<()> {
    let Some(me) = checked_user(s) else { return Ok(()) };
    let cat = s.cluster_catalog();
    if !cat.is_member_of_role_nosuper(me.role, new_owner, None) {
        return Err(denied(format!("must be member of role \"{}\"", cat.role_name(new_owner))));
    }
    let catalog = s.catalog()?;
    if let Some(ns) = catalog.namespaces.get(&nsp) {
        let who = Grantee::of(&cat, new_owner, s.db);
        if !who.superuser && acl::schema_mask(&acl::schema_acl(ns.oid, ns.owner, &ns.acl), &who, acl::CREATE) == 0 {
            return Err(denied(format!("permission denied for schema {}", ns.name)));
        }
    }
    Ok(())
}

/// CREATE on a schema, to create relations in it.
pub fn check_schema_create(s: &SqlSession, nsp: Oid) -> PgResult<()> {
    let Some(me) = checked_user(s) else { return Ok(()) };
    if Some(nsp) == s.temp_namespace {
        return Ok(());
    }
    let catalog = s.catalog()?;
    let Some(ns) = catalog.namespaces.get(&nsp) else { return Ok(()) };
    if acl::schema_mask(&acl::schema_acl(ns.oid, ns.owner, &ns.acl), &me, acl::CREATE) == 0 {
        return Err(denied(format!("permission denied for schema {}", ns.name)));
    }
    Ok(())
}

/// CONNECT on a database, checked when a session starts (FATAL).
pub fn check_connect(cat: &ClusterCatalog, user: &str, db: Oid) -> PgResult<()> {
    let Some(me) = Grantee::lookup(cat, user, db) else { return Ok(()) };
    let Some(d) = cat.databases.get(&db) else { return Ok(()) };
    let dacl = database_acl(d.oid, d.owner, &d.acl, &d.name);
    if acl::mask(&dacl, &me, acl::CONNECT) == 0 {
        return Err(PgError::fatal(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied for database \"{}\"", d.name))
            .with_detail("User does not have CONNECT privilege."));
    }
    Ok(())
}

/// A database's ACL, stored or default (initdb's for the templates).
pub fn database_acl(_oid: Oid, owner: Oid, stored: &Option<Vec<AclItem>>, name: &str) -> Vec<AclItem> {
    match stored {
        Some(v) => v.clone(),
        None if name == "template0" || name == "template1" => vec![
            AclItem { grantee: acl::PUBLIC, grantor: owner, privs: acl::CONNECT, grant_options: 0 },
            AclItem { grantee: owner, grantor: owner, privs: ObjectKind::Database.all_rights(), grant_options: 0 },
        ],
        None => acl::default_acl(ObjectKind::Database, owner),
    }
}

// ---------------------------------------------------------------- GRANT / REVOKE

fn object_noun(kind: ObjectKind, rel: Option<&Relation>) -> &'static str {
    match kind {
        ObjectKind::Schema => "schema",
        ObjectKind::Database => "database",
        _ => rel.map(|r| r.kind.noun()).unwrap_or("table"),
    }
}

fn privilege_name(bit: u32) -> &'static str {
    match bit {
        acl::SELECT => "SELECT",
        acl::INSERT => "INSERT",
        acl::UPDATE => "UPDATE",
        acl::DELETE => "DELETE",
        acl::TRUNCATE => "TRUNCATE",
        acl::REFERENCES => "REFERENCES",
        acl::TRIGGER => "TRIGGER",
        acl::USAGE => "USAGE",
        acl::CREATE => "CREATE",
        acl::CREATE_TEMP => "TEMPORARY",
        acl::CONNECT => "CONNECT",
        _ => "EXECUTE",
    }
}

/// The privileges a GRANT names (None = ALL), checked against the kind.
fn requested_privileges(stmt: &pb::GrantStmt, kind: ObjectKind) -> PgResult<Option<u32>> {
    if stmt.privileges.is_empty() {
        return Ok(None);
    }
    let mut mask = 0;
    for p in &stmt.privileges {
        let Some(NodeEnum::AccessPriv(ap)) = &p.node else { continue };
        if !ap.cols.is_empty() {
            return Err(PgError::unsupported("column privileges"));
        }
        let bit = acl::privilege_by_name(&ap.priv_name)
            .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, format!("unrecognized privilege type \"{}\"", ap.priv_name)))?;
        let allowed = match kind {
            // GRANT ... ON TABLE also names sequences, which take these.
            ObjectKind::Table => ObjectKind::Table.all_rights() | ObjectKind::Sequence.all_rights(),
            k => k.all_rights(),
        };
        if allowed & bit == 0 {
            let noun = match kind {
                ObjectKind::Schema => "schema",
                ObjectKind::Database => "database",
                ObjectKind::Sequence => "sequence",
                ObjectKind::Table => "relation",
                ObjectKind::Function => match pb::ObjectType::from_i32(stmt.objtype) {
                    Some(pb::ObjectType::ObjectProcedure) => "procedure",
                    Some(pb::ObjectType::ObjectRoutine) => "routine",
                    _ => "function",
                },
            };
            return Err(PgError::new(sqlstate::INVALID_GRANT_OPERATION, format!("invalid privilege type {} for {noun}", privilege_name(bit))));
        }
        mask |= bit;
    }
    Ok(Some(mask))
}

/// The grantees (0 = PUBLIC).
fn grantee_oids(s: &SqlSession, cat: &ClusterCatalog, stmt: &pb::GrantStmt) -> PgResult<Vec<Oid>> {
    let mut out = Vec::new();
    for g in &stmt.grantees {
        let Some(NodeEnum::RoleSpec(rs)) = &g.node else { continue };
        let oid = match rs.roletype {
            x if x == pb::RoleSpecType::RolespecPublic as i32 => acl::PUBLIC,
            x if x == pb::RoleSpecType::RolespecCurrentRole as i32 || x == pb::RoleSpecType::RolespecCurrentUser as i32 => {
                cat.role_by_name(&s.user).map(|r| r.oid).unwrap_or(crate::catalog::BOOTSTRAP_SUPERUSER)
            }
            x if x == pb::RoleSpecType::RolespecSessionUser as i32 => {
                cat.role_by_name(&s.session_user).map(|r| r.oid).unwrap_or(crate::catalog::BOOTSTRAP_SUPERUSER)
            }
            _ => cat
                .role_by_name(&rs.rolename)
                .map(|r| r.oid)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{}\" does not exist", rs.rolename)))?,
        };
        if !out.contains(&oid) {
            out.push(oid);
        }
    }
    Ok(out)
}

/// merge_acl_with_grant for one object, after restrict_and_check_grant:
/// returns the new ACL (or the warnings and errors PostgreSQL gives).
#[allow(clippy::too_many_arguments)]
fn apply(
    s: &SqlSession,
    stmt: &pb::GrantStmt,
    kind: ObjectKind,
    name: &str,
    rel: Option<&Relation>,
    owner: Oid,
    current: Vec<AclItem>,
    requested: Option<u32>,
    grantees: &[Oid],
) -> PgResult<Vec<AclItem>> {
    apply_with(s, stmt, kind.all_rights(), object_noun(kind, rel), name, owner, current, requested, grantees)
}

/// `apply` for an object whose only privilege is USAGE (a foreign-data
/// wrapper or foreign server), named by `noun` in messages.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_usage(
    s: &SqlSession,
    stmt: &pb::GrantStmt,
    noun: &str,
    name: &str,
    owner: Oid,
    current: Vec<AclItem>,
    requested: Option<u32>,
    grantees: &[Oid],
) -> PgResult<Vec<AclItem>> {
    apply_with(s, stmt, acl::USAGE, noun, name, owner, current, requested, grantees)
}

#[allow(clippy::too_many_arguments)]
fn apply_with(
    s: &SqlSession,
    stmt: &pb::GrantStmt,
    whole: u32,
    noun: &str,
    name: &str,
    owner: Oid,
    current: Vec<AclItem>,
    requested: Option<u32>,
    grantees: &[Oid],
) -> PgResult<Vec<AclItem>> {
    let me = current_grantee(s);
    let privileges = requested.unwrap_or(whole) & whole;
    // select_best_grantor: owners and superusers grant as the owner.
    let (grantor, avail) = if me.holds(owner) { (owner, whole) } else { (me.role, acl::grant_options(&current, &me)) };
    if avail == 0 && acl::mask(&current, &me, whole) == 0 {
        return Err(denied(format!("permission denied for {noun} {name}")));
    }
    let this = privileges & avail;
    let quoted = format!("\"{name}\"");
    let warn = |code: &'static str, m: String| s.notices.borrow_mut().push(PgError::warning(m).with_code(code));
    if stmt.is_grant {
        if this == 0 {
            warn("01007", format!("no privileges were granted for {quoted}"));
        } else if requested.is_some() && this != privileges {
            warn("01007", format!("not all privileges were granted for {quoted}"));
        }
    } else if this == 0 {
        warn("01006", format!("no privileges could be revoked for {quoted}"));
    } else if requested.is_some() && this != privileges {
        warn("01006", format!("not all privileges could be revoked for {quoted}"));
    }
    let mut new = current;
    for &g in grantees {
        if stmt.is_grant {
            if stmt.grant_option && g == acl::PUBLIC {
                return Err(PgError::new(sqlstate::INVALID_GRANT_OPERATION, "grant options can only be granted to roles"));
            }
            acl::grant(&mut new, g, grantor, this, stmt.grant_option);
        } else {
            acl::revoke(&mut new, g, grantor, this, stmt.grant_option);
        }
    }
    Ok(new)
}

/// GRANT / REVOKE privileges ON ... TO / FROM ...
pub fn grant(s: &mut SqlSession, stmt: &pb::GrantStmt, sql: &str) -> PgResult<()> {
    use pb::ObjectType as T;
    // Roles this transaction created count too.
    let cat = s.cluster_catalog();
    let grantees = grantee_oids(s, &cat, stmt)?;
    let objtype = stmt.objtype;
    let all_in_schema = stmt.targtype == pb::GrantTargetType::AclTargetAllInSchema as i32;
    if stmt.targtype == pb::GrantTargetType::AclTargetDefaults as i32 {
        return Err(PgError::unsupported("ALTER DEFAULT PRIVILEGES"));
    }
    let names: Vec<String> = stmt
        .objects
        .iter()
        .filter_map(|o| match &o.node {
            Some(NodeEnum::String(x)) => Some(x.sval.clone()),
            _ => None,
        })
        .collect();
    if objtype == T::ObjectTable as i32 || objtype == T::ObjectSequence as i32 {
        let kind = if objtype == T::ObjectSequence as i32 { ObjectKind::Sequence } else { ObjectKind::Table };
        let requested = requested_privileges(stmt, kind)?;
        let catalog = s.catalog()?;
        let mut rels: Vec<std::sync::Arc<Relation>> = Vec::new();
        if all_in_schema {
            for n in &names {
                let nsp = *catalog
                    .namespace_by_name
                    .get(n)
                    .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{n}\" does not exist")))?;
                let mut v: Vec<_> = catalog
                    .relations
                    .values()
                    .filter(|r| r.namespace == nsp && (if kind == ObjectKind::Sequence { r.kind == RelKind::Sequence } else { matches!(r.kind, RelKind::Table | RelKind::View) }))
                    .cloned()
                    .collect();
                v.sort_by_key(|r| r.oid);
                rels.extend(v);
            }
        } else {
            let settings = s.settings.borrow();
            let a = s.analyzer(&catalog, &settings, &[], sql);
            for o in &stmt.objects {
                if let Some(NodeEnum::RangeVar(rv)) = &o.node {
                    let rel = a.range_var_relation(rv).map_err(super::utility_error)?;
                    if kind == ObjectKind::Sequence && rel.kind != RelKind::Sequence {
                        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a sequence", rel.name)));
                    }
                    rels.push(rel);
                }
            }
        }
        for rel in rels {
            if rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
                return Err(PgError::unsupported("GRANT and REVOKE on system catalogs"));
            }
            let relkind = relation_object_kind(&rel);
            let mut req = requested;
            if relkind == ObjectKind::Sequence && kind == ObjectKind::Table {
                if let Some(r) = req {
                    if r & !ObjectKind::Sequence.all_rights() != 0 {
                        s.notices.borrow_mut().push(PgError::warning(format!(
                            "sequence \"{}\" only supports USAGE, SELECT, and UPDATE privileges",
                            rel.name
                        )));
                    }
                    req = Some(r & ObjectKind::Sequence.all_rights());
                }
            } else if relkind == ObjectKind::Table {
                if let Some(r) = req {
                    if r & acl::USAGE != 0 {
                        return Err(PgError::new(sqlstate::INVALID_GRANT_OPERATION, "invalid privilege type USAGE for table"));
                    }
                }
            }
            s.txn()?.get_for_update(&super::ddl::relation_lock_key(rel.oid))?;
            let new = apply(s, stmt, relkind, &rel.name, Some(&rel), rel.owner, relation_acl(&rel), req, &grantees)?;
            let mut r = (*rel).clone();
            r.acl = Some(new);
            store::put_relation(s.txn()?, s.db, &r)?;
        }
        return s.reload_txn_catalog();
    }
    if objtype == T::ObjectSchema as i32 {
        let requested = requested_privileges(stmt, ObjectKind::Schema)?;
        let catalog = s.catalog()?;
        for n in &names {
            let nsp = catalog
                .namespace_by_name
                .get(n)
                .and_then(|o| catalog.namespaces.get(o))
                .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{n}\" does not exist")))?;
            let current = acl::schema_acl(nsp.oid, nsp.owner, &nsp.acl);
            // The public schema's owner is pg_database_owner.
            let owner = if nsp.oid == crate::catalog::PUBLIC_NAMESPACE && nsp.acl.is_none() { acl::PG_DATABASE_OWNER } else { nsp.owner };
            let owner = if owner == acl::PG_DATABASE_OWNER && current_grantee(s).owns_database() { current_role_oid(s) } else { owner };
            let grantor_owner = if nsp.oid == crate::catalog::PUBLIC_NAMESPACE { acl::PG_DATABASE_OWNER } else { owner };
            let new = apply_schema(s, stmt, n, owner, grantor_owner, current, requested, &grantees)?;
            let mut ns = nsp.clone();
            ns.acl = Some(new);
            store::put_namespace(s.txn()?, s.db, &ns)?;
        }
        return s.reload_txn_catalog();
    }
    if objtype == T::ObjectDatabase as i32 {
        let requested = requested_privileges(stmt, ObjectKind::Database)?;
        for n in &names {
            let txn = s.txn()?;
            txn.get_for_update(&store::database_name_key(n))?;
            let cat = store::load_cluster(txn)?;
            let d = cat
                .database_by_name(n)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{n}\" does not exist")))?
                .clone();
            let current = database_acl(d.oid, d.owner, &d.acl, &d.name);
            let new = apply(s, stmt, ObjectKind::Database, n, None, d.owner, current, requested, &grantees)?;
            let mut d = d;
            d.acl = Some(new);
            store::put_database(s.txn()?, &d)?;
            s.cluster_changed = true;
        }
        return Ok(());
    }
    if objtype == T::ObjectFdw as i32 || objtype == T::ObjectForeignServer as i32 {
        return super::foreign::grant(s, stmt, &grantees);
    }
    if objtype == T::ObjectFunction as i32 || objtype == T::ObjectProcedure as i32 || objtype == T::ObjectRoutine as i32 {
        return grant_routines(s, stmt, &names, &grantees, sql);
    }
    Err(PgError::unsupported("GRANT and REVOKE on this kind of object"))
}

/// GRANT/REVOKE EXECUTE ON FUNCTION/PROCEDURE/ROUTINE f(args) | ALL
/// FUNCTIONS/PROCEDURES/ROUTINES IN SCHEMA s.
fn grant_routines(s: &mut SqlSession, stmt: &pb::GrantStmt, schemas: &[String], grantees: &[Oid], sql: &str) -> PgResult<()> {
    let _ = sql;
    let kind = match pb::ObjectType::from_i32(stmt.objtype) {
        Some(pb::ObjectType::ObjectProcedure) => 'p',
        Some(pb::ObjectType::ObjectRoutine) => 'r',
        _ => 'f',
    };
    let requested = requested_privileges(stmt, ObjectKind::Function)?;
    let catalog = s.catalog()?;
    let mut routines = Vec::new();
    if stmt.targtype == pb::GrantTargetType::AclTargetAllInSchema as i32 {
        for n in schemas {
            let nsp = *catalog
                .namespace_by_name
                .get(n)
                .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{n}\" does not exist")))?;
            // objectsInSchemaToOids: FUNCTIONS are everything but procedures.
            let mut v: Vec<_> =
                catalog.functions.values().filter(|f| f.namespace == nsp && (kind == 'r' || (f.kind == 'p') == (kind == 'p'))).cloned().collect();
            v.sort_by_key(|f| f.oid);
            routines.extend(v);
        }
    } else {
        for o in &stmt.objects {
            if let Some(NodeEnum::ObjectWithArgs(owa)) = &o.node {
                if let Some(f) = super::function::lookup_function(s, &catalog, owa, kind, false)? {
                    routines.push(f);
                }
            }
        }
    }
    for f in routines {
        let noun = if f.kind == 'p' { "procedure" } else { "function" };
        let current = f.acl.clone().unwrap_or_else(|| acl::default_acl(ObjectKind::Function, f.owner));
        let new = apply_with(s, stmt, ObjectKind::Function.all_rights(), noun, &f.name, f.owner, current, requested, grantees)?;
        let mut g = (*f).clone();
        g.acl = Some(new);
        let txn = s.txn()?;
        txn.get_for_update(&store::function_name_key(s.db, g.namespace, &g.name))?;
        store::put_function(txn, s.db, &g)?;
    }
    s.reload_txn_catalog()
}

/// The ownership check of ALTER and DROP (object_ownercheck): the
/// current role must own the object, or be a superuser; `what` names it
/// as the error does ("function f", "operator ===").
pub fn check_owner(s: &SqlSession, owner: Oid, what: &str) -> PgResult<()> {
    let me = current_role_oid(s);
    if owner != me && !s.cluster_catalog().is_superuser(me) {
        return Err(denied(format!("must be owner of {what}")));
    }
    Ok(())
}

/// pg_proc_aclcheck for a call: the current role must hold EXECUTE.
pub fn check_execute(s: &SqlSession, f: &crate::catalog::function::Function) -> PgResult<()> {
    let Some(items) = &f.acl else { return Ok(()) };
    let me = current_grantee(s);
    if me.superuser || acl::mask(items, &me, acl::EXECUTE) != 0 {
        return Ok(());
    }
    Err(denied(format!("permission denied for {} {}", if f.kind == 'p' { "procedure" } else { "function" }, f.name)))
}

/// `apply` for a schema, whose owner may be pg_database_owner (public).
#[allow(clippy::too_many_arguments)]
fn apply_schema(
    s: &SqlSession,
    stmt: &pb::GrantStmt,
    name: &str,
    owner: Oid,
    grantor_owner: Oid,
    current: Vec<AclItem>,
    requested: Option<u32>,
    grantees: &[Oid],
) -> PgResult<Vec<AclItem>> {
    let me = current_grantee(s);
    if me.holds(owner) {
        // Grant as the recorded owner (pg_database_owner for public).
        let mut new = current;
        let whole = ObjectKind::Schema.all_rights();
        let privileges = requested.unwrap_or(whole) & whole;
        for &g in grantees {
            if stmt.is_grant {
                acl::grant(&mut new, g, grantor_owner, privileges, stmt.grant_option);
            } else {
                acl::revoke(&mut new, g, grantor_owner, privileges, stmt.grant_option);
            }
        }
        return Ok(new);
    }
    apply(s, stmt, ObjectKind::Schema, name, None, owner, current, requested, grantees)
}

/// CREATE SCHEMA [AUTHORIZATION role]: who will own it, after the CREATE
/// privilege on the database is checked.
pub fn schema_creation_owner(s: &SqlSession, authrole: Option<&pb::RoleSpec>) -> PgResult<Oid> {
    let cat = s.cluster_catalog();
    let me = current_grantee(s);
    if !me.superuser {
        if let Some(d) = cat.databases.get(&s.db) {
            if acl::mask(&database_acl(d.oid, d.owner, &d.acl, &d.name), &me, acl::CREATE) == 0 {
                return Err(denied(format!("permission denied for database {}", d.name)));
            }
        }
    }
    let owner = match authrole {
        Some(rs) if rs.roletype == pb::RoleSpecType::RolespecCstring as i32 => cat
            .role_by_name(&rs.rolename)
            .map(|r| r.oid)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{}\" does not exist", rs.rolename)))?,
        _ => current_role_oid(s),
    };
    // check_is_member_of_role: one may create for a role one belongs to.
    if !me.superuser && !cat.is_member_of_role_nosuper(me.role, owner, None) {
        let name = cat.role_name(owner);
        return Err(denied(format!("must be member of role \"{name}\"")));
    }
    Ok(owner)
}
