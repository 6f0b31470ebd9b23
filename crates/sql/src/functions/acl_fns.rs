//! Access privilege inquiry functions (utils/adt/acl.c):
//! has_table_privilege, has_schema_privilege, has_database_privilege,
//! has_foreign_data_wrapper_privilege, has_server_privilege, in their name
//! and OID forms, with and without a role argument.

use tusk_types::{sqlstate, Datum, Oid, PgError, PgResult};

use super::{arg_str, plain, FnCtx, Registry};
use crate::catalog::acl::{self, Grantee};

fn arg_oid(a: &[Datum], i: usize) -> Oid {
    match &a[i] {
        Datum::Oid(o) => *o,
        d => d.as_i64().unwrap_or(0) as Oid,
    }
}

/// The role argument: a name (or the current user when absent).
fn role_by_name(c: &FnCtx, name: &str) -> PgResult<Grantee> {
    let cat = c.env.cluster_catalog();
    Grantee::lookup(&cat, name, c.env.database_oid())
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")))
}

fn role_by_oid(c: &FnCtx, oid: Oid) -> Grantee {
    Grantee::of(&c.env.cluster_catalog(), oid, c.env.database_oid())
}

fn current(c: &FnCtx) -> PgResult<Grantee> {
    role_by_name(c, &c.env.current_user())
}

/// convert_any_priv_string: a comma-separated list of privilege names,
/// each maybe WITH GRANT OPTION; the mask of privileges and of options.
fn privilege_mask(text: &str, allowed: &[(&str, u32)]) -> PgResult<(u32, u32)> {
    let mut privs = 0;
    let mut options = 0;
    for chunk in text.split(',') {
        let word = chunk.trim();
        let (name, grant) = match word.to_ascii_lowercase().strip_suffix(" with grant option") {
            Some(n) => (n.trim().to_string(), true),
            None => (word.to_ascii_lowercase(), false),
        };
        let Some((_, bit)) = allowed.iter().find(|(n, _)| *n == name) else {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized privilege type: \"{word}\"")));
        };
        if grant {
            options |= bit;
        } else {
            privs |= bit;
        }
    }
    Ok((privs, options))
}

const TABLE_PRIVS: &[(&str, u32)] = &[
    ("select", acl::SELECT),
    ("insert", acl::INSERT),
    ("update", acl::UPDATE),
    ("delete", acl::DELETE),
    ("truncate", acl::TRUNCATE),
    ("references", acl::REFERENCES),
    ("trigger", acl::TRIGGER),
    ("rule", 0),
];
const SCHEMA_PRIVS: &[(&str, u32)] = &[("create", acl::CREATE), ("usage", acl::USAGE)];
const DATABASE_PRIVS: &[(&str, u32)] =
    &[("create", acl::CREATE), ("temporary", acl::CREATE_TEMP), ("temp", acl::CREATE_TEMP), ("connect", acl::CONNECT)];

/// Whether `who` holds any of the privileges (or grant options) asked for.
fn holds(kind: acl::ObjectKind, items: &[acl::AclItem], who: &Grantee, owner: Oid, (privs, options): (u32, u32)) -> Datum {
    if who.superuser {
        return Datum::Bool(privs | options != 0);
    }
    let has = match kind {
        acl::ObjectKind::Table | acl::ObjectKind::Sequence => acl::relation_mask(items, who, privs),
        acl::ObjectKind::Schema => acl::schema_mask(items, who, privs),
        acl::ObjectKind::Database | acl::ObjectKind::Function => acl::mask(items, who, privs),
    } != 0;
    let go = if who.holds(owner) { options } else { acl::grant_options(items, who) & options };
    Datum::Bool(has || go != 0)
}

// ---------------------------------------------------------------- tables

fn table_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    c.env.lookup_relation_oid(name)
}

fn table_check(c: &FnCtx, who: Grantee, rel: Oid, privs: &str) -> PgResult<Datum> {
    let mask = privilege_mask(privs, TABLE_PRIVS)?;
    let Some(r) = c.env.catalog().relation(rel).cloned() else { return Ok(Datum::Null) };
    Ok(holds(acl::ObjectKind::Table, &crate::commands::grant::relation_acl(&r), &who, r.owner, mask))
}

fn htp_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    table_check(c, who, table_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn htp_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    table_check(c, who, arg_oid(a, 1), arg_str(a, 2))
}
fn htp_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    table_check(c, role_by_oid(c, arg_oid(a, 0)), table_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn htp_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    table_check(c, role_by_oid(c, arg_oid(a, 0)), arg_oid(a, 1), arg_str(a, 2))
}
fn htp_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    table_check(c, current(c)?, table_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn htp_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    table_check(c, current(c)?, arg_oid(a, 0), arg_str(a, 1))
}

// ---------------------------------------------------------------- schemas

fn schema_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    c.env
        .catalog()
        .namespace_by_name
        .get(name)
        .copied()
        .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")))
}

fn schema_check(c: &FnCtx, who: Grantee, nsp: Oid, privs: &str) -> PgResult<Datum> {
    let mask = privilege_mask(privs, SCHEMA_PRIVS)?;
    let Some(ns) = c.env.catalog().namespaces.get(&nsp) else { return Ok(Datum::Null) };
    Ok(holds(acl::ObjectKind::Schema, &acl::schema_acl(ns.oid, ns.owner, &ns.acl), &who, ns.owner, mask))
}

fn hsp_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    schema_check(c, who, schema_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hsp_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    schema_check(c, who, arg_oid(a, 1), arg_str(a, 2))
}
fn hsp_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    schema_check(c, role_by_oid(c, arg_oid(a, 0)), schema_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hsp_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    schema_check(c, role_by_oid(c, arg_oid(a, 0)), arg_oid(a, 1), arg_str(a, 2))
}
fn hsp_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    schema_check(c, current(c)?, schema_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn hsp_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    schema_check(c, current(c)?, arg_oid(a, 0), arg_str(a, 1))
}

// ---------------------------------------------------------------- databases

fn database_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    c.env
        .cluster_catalog()
        .database_by_name(name)
        .map(|d| d.oid)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{name}\" does not exist")))
}

fn database_check(c: &FnCtx, who: Grantee, db: Oid, privs: &str) -> PgResult<Datum> {
    let mask = privilege_mask(privs, DATABASE_PRIVS)?;
    let cat = c.env.cluster_catalog();
    let Some(d) = cat.databases.get(&db) else { return Ok(Datum::Null) };
    let items = crate::commands::grant::database_acl(d.oid, d.owner, &d.acl, &d.name);
    Ok(holds(acl::ObjectKind::Database, &items, &who, d.owner, mask))
}

fn hdp_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    database_check(c, who, database_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hdp_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    database_check(c, who, arg_oid(a, 1), arg_str(a, 2))
}
fn hdp_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    database_check(c, role_by_oid(c, arg_oid(a, 0)), database_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hdp_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    database_check(c, role_by_oid(c, arg_oid(a, 0)), arg_oid(a, 1), arg_str(a, 2))
}
fn hdp_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    database_check(c, current(c)?, database_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn hdp_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    database_check(c, current(c)?, arg_oid(a, 0), arg_str(a, 1))
}

// ---------------------------------------------------------------- roles

/// pg_has_role (pg_role_aclcheck): MEMBER asks for membership however
/// reached (SET ROLE), USAGE for holding the role's privileges (through
/// INHERIT), either WITH ADMIN|GRANT OPTION for the right to grant it.
fn role_check(c: &FnCtx, member: Oid, role: Oid, privs: &str) -> PgResult<Datum> {
    const USAGE: u32 = 1;
    const MEMBER: u32 = 2;
    const ADMIN: u32 = 4;
    let mut mode = 0;
    for chunk in privs.split(',') {
        let word = chunk.trim();
        mode |= match word.to_ascii_lowercase().as_str() {
            "usage" => USAGE,
            "member" => MEMBER,
            "usage with grant option" | "usage with admin option" | "member with grant option" | "member with admin option" => ADMIN,
            _ => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized privilege type: \"{word}\""))),
        };
    }
    let cat = c.env.cluster_catalog();
    if !cat.roles.contains_key(&member) || !cat.roles.contains_key(&role) {
        return Ok(Datum::Null);
    }
    let session = cat.role_by_name(&c.env.session_user()).map_or(member, |r| r.oid);
    let db = Some(c.env.database_oid());
    let ok = (mode & ADMIN != 0 && cat.is_admin_of_role(member, role, session))
        || (mode & MEMBER != 0 && (cat.is_superuser(member) || cat.is_member_of_role_nosuper(member, role, db)))
        || (mode & USAGE != 0 && cat.has_privs_of_role(member, role, db));
    Ok(Datum::Bool(ok))
}

fn role_oid_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    c.env
        .cluster_catalog()
        .role_by_name(name)
        .map(|r| r.oid)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")))
}

fn current_oid(c: &FnCtx) -> PgResult<Oid> {
    role_oid_by_name(c, &c.env.current_user())
}

fn phr_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, role_oid_by_name(c, arg_str(a, 0))?, role_oid_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn phr_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, role_oid_by_name(c, arg_str(a, 0))?, arg_oid(a, 1), arg_str(a, 2))
}
fn phr_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, arg_oid(a, 0), role_oid_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn phr_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, arg_oid(a, 0), arg_oid(a, 1), arg_str(a, 2))
}
fn phr_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, current_oid(c)?, role_oid_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn phr_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    role_check(c, current_oid(c)?, arg_oid(a, 0), arg_str(a, 1))
}

// ---------------------------------------------------------------- foreign-data wrappers and servers

const USAGE_PRIVS: &[(&str, u32)] = &[("usage", acl::USAGE)];

/// USAGE (or its grant option) under a wrapper's or server's ACL.
fn usage_check(who: &Grantee, stored: &Option<Vec<acl::AclItem>>, owner: Oid, privs: &str) -> PgResult<Datum> {
    let (privs, options) = privilege_mask(privs, USAGE_PRIVS)?;
    if who.superuser {
        return Ok(Datum::Bool(privs | options != 0));
    }
    let items = crate::commands::foreign::usage_acl(stored, owner);
    let has = acl::mask(&items, who, privs) != 0;
    let go = if who.holds(owner) { options } else { acl::grant_options(&items, who) & options };
    Ok(Datum::Bool(has || go != 0))
}

fn fdw_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    let cat = c.env.catalog();
    crate::commands::foreign::wrapper_named(&cat.foreign, name).map(|w| w.oid)
}

fn fdw_check(c: &FnCtx, who: Grantee, oid: Oid, privs: &str) -> PgResult<Datum> {
    let cat = c.env.catalog();
    let Some(w) = cat.foreign.wrappers.get(&oid) else { return Ok(Datum::Null) };
    usage_check(&who, &w.acl, w.owner, privs)
}

fn hfp_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    fdw_check(c, who, fdw_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hfp_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    fdw_check(c, who, arg_oid(a, 1), arg_str(a, 2))
}
fn hfp_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    fdw_check(c, role_by_oid(c, arg_oid(a, 0)), fdw_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hfp_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    fdw_check(c, role_by_oid(c, arg_oid(a, 0)), arg_oid(a, 1), arg_str(a, 2))
}
fn hfp_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    fdw_check(c, current(c)?, fdw_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn hfp_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    fdw_check(c, current(c)?, arg_oid(a, 0), arg_str(a, 1))
}

fn server_by_name(c: &FnCtx, name: &str) -> PgResult<Oid> {
    let cat = c.env.catalog();
    crate::commands::foreign::server_named(&cat.foreign, name).map(|s| s.oid)
}

fn server_check(c: &FnCtx, who: Grantee, oid: Oid, privs: &str) -> PgResult<Datum> {
    let cat = c.env.catalog();
    let Some(srv) = cat.foreign.servers.get(&oid) else { return Ok(Datum::Null) };
    usage_check(&who, &srv.acl, srv.owner, privs)
}

fn hsrv_name_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    server_check(c, who, server_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hsrv_name_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let who = role_by_name(c, arg_str(a, 0))?;
    server_check(c, who, arg_oid(a, 1), arg_str(a, 2))
}
fn hsrv_id_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    server_check(c, role_by_oid(c, arg_oid(a, 0)), server_by_name(c, arg_str(a, 1))?, arg_str(a, 2))
}
fn hsrv_id_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    server_check(c, role_by_oid(c, arg_oid(a, 0)), arg_oid(a, 1), arg_str(a, 2))
}
fn hsrv_name(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    server_check(c, current(c)?, server_by_name(c, arg_str(a, 0))?, arg_str(a, 1))
}
fn hsrv_id(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    server_check(c, current(c)?, arg_oid(a, 0), arg_str(a, 1))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["has_foreign_data_wrapper_privilege_name_name"], hfp_name_name);
    plain(r, &["has_foreign_data_wrapper_privilege_name_id"], hfp_name_id);
    plain(r, &["has_foreign_data_wrapper_privilege_id_name"], hfp_id_name);
    plain(r, &["has_foreign_data_wrapper_privilege_id_id"], hfp_id_id);
    plain(r, &["has_foreign_data_wrapper_privilege_name"], hfp_name);
    plain(r, &["has_foreign_data_wrapper_privilege_id"], hfp_id);
    plain(r, &["has_server_privilege_name_name"], hsrv_name_name);
    plain(r, &["has_server_privilege_name_id"], hsrv_name_id);
    plain(r, &["has_server_privilege_id_name"], hsrv_id_name);
    plain(r, &["has_server_privilege_id_id"], hsrv_id_id);
    plain(r, &["has_server_privilege_name"], hsrv_name);
    plain(r, &["has_server_privilege_id"], hsrv_id);
    plain(r, &["pg_has_role_name_name"], phr_name_name);
    plain(r, &["pg_has_role_name_id"], phr_name_id);
    plain(r, &["pg_has_role_id_name"], phr_id_name);
    plain(r, &["pg_has_role_id_id"], phr_id_id);
    plain(r, &["pg_has_role_name"], phr_name);
    plain(r, &["pg_has_role_id"], phr_id);
    plain(r, &["has_table_privilege_name_name"], htp_name_name);
    plain(r, &["has_table_privilege_name_id"], htp_name_id);
    plain(r, &["has_table_privilege_id_name"], htp_id_name);
    plain(r, &["has_table_privilege_id_id"], htp_id_id);
    plain(r, &["has_table_privilege_name"], htp_name);
    plain(r, &["has_table_privilege_id"], htp_id);
    plain(r, &["has_schema_privilege_name_name"], hsp_name_name);
    plain(r, &["has_schema_privilege_name_id"], hsp_name_id);
    plain(r, &["has_schema_privilege_id_name"], hsp_id_name);
    plain(r, &["has_schema_privilege_id_id"], hsp_id_id);
    plain(r, &["has_schema_privilege_name"], hsp_name);
    plain(r, &["has_schema_privilege_id"], hsp_id);
    plain(r, &["has_database_privilege_name_name"], hdp_name_name);
    plain(r, &["has_database_privilege_name_id"], hdp_name_id);
    plain(r, &["has_database_privilege_id_name"], hdp_id_name);
    plain(r, &["has_database_privilege_id_id"], hdp_id_id);
    plain(r, &["has_database_privilege_name"], hdp_name);
    plain(r, &["has_database_privilege_id"], hdp_id);
}
