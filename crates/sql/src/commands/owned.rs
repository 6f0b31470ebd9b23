//! What depends on roles (pg_shdepend): DROP OWNED and REASSIGN OWNED
//! (PostgreSQL's shdepDropOwned and shdepReassignOwned), and the list DROP
//! ROLE refuses with while objects still depend on the role
//! (checkSharedDependencies).
//!
//! The dependencies are those of `catalog::depend`: owners of schemas,
//! relations and databases, and roles named in their ACLs.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use crate::catalog::depend::*;
use crate::catalog::*;
use crate::session::SqlSession;

/// At most this many objects are listed in a DETAIL (MAX_REPORTED_DEPS).
const MAX_REPORTED: usize = 100;

/// The roles a DROP OWNED / REASSIGN OWNED statement names
/// (roleSpecsToIds): each must exist.
fn role_oids(s: &SqlSession, roles: &[pb::Node]) -> PgResult<Vec<Oid>> {
    let mut out = Vec::new();
    for n in roles {
        let Some(NodeEnum::RoleSpec(rs)) = &n.node else { continue };
        let oid = super::grant::role_spec_oid(s, Some(rs))?;
        if !out.contains(&oid) {
            out.push(oid);
        }
    }
    Ok(out)
}

/// has_privs_of_role(GetUserId(), role), or fails with `message`.
fn check_privs_of(s: &SqlSession, role: Oid, message: &str) -> PgResult<()> {
    let me = super::grant::current_role_oid(s);
    if s.cluster_catalog().has_privs_of_role(me, role, Some(s.db)) {
        return Ok(());
    }
    Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message))
}

/// The bootstrap superuser and the predefined roles: pinned, nothing
/// records dependencies on them, so what they own cannot be found.
fn check_not_pinned(s: &SqlSession, role: Oid, what: &str) -> PgResult<()> {
    if role >= FIRST_UNPINNED_OBJECT_ID {
        return Ok(());
    }
    Err(PgError::new(
        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot {what} objects owned by role {} because they are required by the database system", s.cluster_catalog().role_name(role)),
    ))
}

/// ExecGrantStmt_oids revoking everything from `role` with CASCADE: its
/// entries go, and so do the grants it made that nothing else supports
/// (a grantor other than the owner needs a grant option it still holds).
fn revoke_all_from(items: &mut Vec<acl::AclItem>, role: Oid, owner: Oid) {
    items.retain(|i| i.grantee != role);
    loop {
        let before = items.len();
        let snapshot = items.clone();
        items.retain(|i| {
            i.grantor == owner || snapshot.iter().any(|g| g.grantee == i.grantor && g.grant_options & i.privs == i.privs)
        });
        if items.len() == before {
            return;
        }
    }
}

/// DROP OWNED BY role [, ...] [CASCADE | RESTRICT]: the objects of this
/// database the roles own are dropped together (the statement's single
/// dependency walk), and their privileges on this database's objects and on
/// databases are revoked.
pub fn drop_owned(s: &mut SqlSession, stmt: &pb::DropOwnedStmt, sql: &str) -> PgResult<()> {
    let roles = role_oids(s, &stmt.roles)?;
    for &r in &roles {
        check_privs_of(s, r, "permission denied to drop objects")?;
    }
    let cascade = stmt.behavior == pb::DropBehavior::DropCascade as i32;
    let mut doomed: Vec<ObjectAddress> = Vec::new();
    let mut cluster_changed = false;
    {
        let d = Ddl::new(s, sql)?;
        let cluster = s.cluster_catalog();
        for &role in &roles {
            check_not_pinned(s, role, "drop")?;
            let local = shared_dependencies_of_database(&d.catalog);
            let shared = shared_dependencies_of_cluster(&cluster);
            for dep in local.iter().chain(shared.iter()).filter(|x| x.role == role) {
                match dep.deptype {
                    SharedDepType::Acl => cluster_changed |= revoke_role_on(&d, dep.object, role)?,
                    SharedDepType::Owner if dep.dbid == s.db => {
                        if !doomed.contains(&dep.object) {
                            doomed.push(dep.object);
                        }
                    }
                    // Databases are not dropped by DROP OWNED.
                    SharedDepType::Owner => {}
                }
            }
        }
        // Approximately reverse creation order, for a stable report.
        doomed.sort_by(|a, b| a.deletion_order(b));
    }
    if cluster_changed {
        s.cluster_changed = true;
    }
    s.reload_txn_catalog()?;
    {
        let d = Ddl::new(s, sql)?;
        super::dependency::perform_deletion(&d, &doomed, cascade)?;
    }
    s.reload_txn_catalog()
}

/// RemoveRoleFromObjectACL for one object; true when it changed a
/// database (a cluster-wide catalog row).
fn revoke_role_on(d: &Ddl, object: ObjectAddress, role: Oid) -> PgResult<bool> {
    let txn = d.s.txn()?;
    match object.class {
        PG_CLASS => {
            let Some(rel) = d.catalog.relations.get(&object.oid) else { return Ok(false) };
            d.lock_relation(rel.oid)?;
            let mut r = (**rel).clone();
            if let Some(items) = &mut r.acl {
                revoke_all_from(items, role, rel.owner);
            }
            store::put_relation(txn, d.s.db, &r)?;
            Ok(false)
        }
        PG_NAMESPACE => {
            let Some(ns) = d.catalog.namespaces.get(&object.oid) else { return Ok(false) };
            let mut ns = ns.clone();
            let owner = ns.owner;
            if let Some(items) = &mut ns.acl {
                revoke_all_from(items, role, owner);
            }
            store::put_namespace(txn, d.s.db, &ns)?;
            Ok(false)
        }
        PG_DATABASE => {
            let cluster = d.s.cluster_catalog();
            let Some(db) = cluster.databases.get(&object.oid) else { return Ok(false) };
            txn.get_for_update(&store::database_name_key(&db.name))?;
            let locked = store::load_cluster(txn)?;
            let Some(mut db) = locked.databases.get(&object.oid).cloned() else { return Ok(false) };
            let owner = db.owner;
            if let Some(items) = &mut db.acl {
                revoke_all_from(items, role, owner);
            }
            store::put_database(txn, &db)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// REASSIGN OWNED BY role [, ...] TO new_role: what the roles own in this
/// database (schemas, tables with their indexes and sequences, views) and
/// the databases they own change owner; privileges stay as they are,
/// except that the old owner's entries become the new owner's.
pub fn reassign_owned(s: &mut SqlSession, stmt: &pb::ReassignOwnedStmt) -> PgResult<()> {
    let roles = role_oids(s, &stmt.roles)?;
    for &r in &roles {
        check_privs_of(s, r, "permission denied to reassign objects")?;
    }
    let new_owner = super::grant::role_spec_oid(s, stmt.newrole.as_ref())?;
    check_privs_of(s, new_owner, "permission denied to reassign objects")?;
    for &role in &roles {
        check_not_pinned(s, role, "reassign ownership of")?;
    }
    let mut cluster_changed = false;
    {
        let d = Ddl::new(s, "")?;
        let txn = s.txn()?;
        let mut rels: Vec<&std::sync::Arc<Relation>> = d.catalog.relations.values().filter(|r| roles.contains(&r.owner)).collect();
        rels.sort_by_key(|r| r.oid);
        for rel in rels {
            if rel.owner == new_owner {
                continue;
            }
            d.lock_relation(rel.oid)?;
            let mut r = (**rel).clone();
            if let Some(items) = &mut r.acl {
                acl::new_owner(items, rel.owner, new_owner);
            }
            r.owner = new_owner;
            store::put_relation(txn, s.db, &r)?;
        }
        for ns in d.catalog.namespaces.values().filter(|n| roles.contains(&n.owner) && n.owner != new_owner) {
            let mut ns = ns.clone();
            // The public schema's implicit ACL names pg_database_owner.
            if ns.acl.is_none() && ns.oid == PUBLIC_NAMESPACE {
                ns.acl = Some(acl::schema_acl(ns.oid, ns.owner, &None));
            }
            if let Some(items) = &mut ns.acl {
                acl::new_owner(items, ns.owner, new_owner);
            }
            ns.owner = new_owner;
            store::put_namespace(txn, s.db, &ns)?;
        }
        for p in d.catalog.publications.values().filter(|p| roles.contains(&p.owner) && p.owner != new_owner) {
            let mut p = p.clone();
            p.owner = new_owner;
            store::put_publication(txn, s.db, &p)?;
        }
        let cluster = s.cluster_catalog();
        let owned: Vec<String> = cluster.databases.values().filter(|db| roles.contains(&db.owner) && db.owner != new_owner).map(|db| db.name.clone()).collect();
        for name in owned {
            txn.get_for_update(&store::database_name_key(&name))?;
            let locked = store::load_cluster(txn)?;
            let Some(mut db) = locked.database_by_name(&name).cloned() else { continue };
            if let Some(items) = &mut db.acl {
                acl::new_owner(items, db.owner, new_owner);
            }
            db.owner = new_owner;
            store::put_database(txn, &db)?;
            cluster_changed = true;
        }
    }
    if cluster_changed {
        s.cluster_changed = true;
    }
    s.reload_txn_catalog()
}

/// checkSharedDependencies: the DETAIL of DROP ROLE's refusal, or None
/// when nothing depends on the role. Objects of this database and shared
/// ones are listed in OID order ("owner of table t", "privileges for schema
/// s"); other databases are counted ("2 objects in database d").
pub fn shared_dependency_report(s: &SqlSession, role: Oid) -> PgResult<Option<String>> {
    let catalog = s.catalog()?;
    let cluster = s.cluster_catalog();
    let mut objects: Vec<SharedDependency> = shared_dependencies_of_database(&catalog)
        .into_iter()
        .chain(shared_dependencies_of_cluster(&cluster))
        .filter(|d| d.role == role)
        .collect();
    objects.sort_by(|a, b| {
        (a.object.oid, a.object.class, a.object.sub as u32, a.deptype.code()).cmp(&(b.object.oid, b.object.class, b.object.sub as u32, b.deptype.code()))
    });
    let d = Ddl::new(s, "")?;
    let mut lines = Vec::new();
    let mut not_reported = 0usize;
    for o in &objects {
        if lines.len() >= MAX_REPORTED {
            not_reported += 1;
            continue;
        }
        let what = super::dependency::describe_object(&d, &catalog, o.object);
        lines.push(match o.deptype {
            SharedDepType::Owner => format!("owner of {what}"),
            SharedDepType::Acl => format!("privileges for {what}"),
        });
    }
    let mut other_dbs = 0usize;
    for db in cluster.databases.values().filter(|db| db.oid != s.db) {
        let other = s.cluster.catalog(db.oid)?;
        let count = shared_dependencies_of_database(&other).iter().filter(|d| d.role == role).count();
        if count == 0 {
            continue;
        }
        if lines.len() >= MAX_REPORTED {
            other_dbs += 1;
            continue;
        }
        lines.push(if count == 1 { format!("1 object in database {}", db.name) } else { format!("{count} objects in database {}", db.name) });
    }
    if lines.is_empty() {
        return Ok(None);
    }
    let mut detail = lines.join("\n");
    if not_reported > 0 {
        detail.push_str(&format!("\nand {not_reported} other object{} (see server log for list)", if not_reported == 1 { "" } else { "s" }));
    }
    if other_dbs > 0 {
        detail.push_str(&format!(
            "\nand objects in {other_dbs} other database{} (see server log for list)",
            if other_dbs == 1 { "" } else { "s" }
        ));
    }
    Ok(Some(detail))
}
