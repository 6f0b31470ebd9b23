//! The catalogs and views of SQL/MED objects: pg_foreign_data_wrapper,
//! pg_foreign_server, pg_user_mapping, pg_user_mappings, and the
//! information_schema views over them, with the visibility rules of
//! PostgreSQL 15's system_views.sql and information_schema.sql (a role sees
//! a wrapper or server it may use, and a user mapping's options only when
//! it is the mapped user, owns the server, or is a superuser).

use super::*;
use crate::catalog::acl::{self, Grantee};
use crate::catalog::foreign::*;

fn options(items: &Option<Vec<String>>) -> Datum {
    match items {
        Some(v) => text_array(v),
        None => Datum::Null,
    }
}

fn me(cx: &SysCx) -> Grantee {
    Grantee::lookup(cx.cluster, cx.user, cx.database).unwrap_or_else(Grantee::nobody)
}

fn usage_acl(stored: &Option<Vec<acl::AclItem>>, owner: Oid) -> Vec<acl::AclItem> {
    crate::commands::foreign::usage_acl(stored, owner)
}

/// pg_has_role(owner, 'USAGE') OR has_..._privilege(oid, 'USAGE').
fn may_see(who: &Grantee, stored: &Option<Vec<acl::AclItem>>, owner: Oid) -> bool {
    who.holds(owner) || crate::commands::foreign::has_usage(who, stored, owner)
}

fn split(item: &str) -> (Datum, Datum) {
    match item.split_once('=') {
        Some((n, v)) => (text(n), text(v)),
        None => (text(item), Datum::Null),
    }
}

pub(super) fn pg_foreign_data_wrapper(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for w in cx.catalog.foreign.wrappers.values() {
        out.push(vec![
            ("oid", oidv(w.oid)),
            ("fdwname", name(&w.name)),
            ("fdwowner", oidv(w.owner)),
            ("fdwhandler", oidv(w.handler)),
            ("fdwvalidator", oidv(w.validator)),
            ("fdwacl", acl_datum(cx, w.acl.as_deref())),
            ("fdwoptions", options(&w.options)),
        ]);
    }
    Ok(())
}

pub(super) fn pg_foreign_server(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for s in cx.catalog.foreign.servers.values() {
        out.push(vec![
            ("oid", oidv(s.oid)),
            ("srvname", name(&s.name)),
            ("srvowner", oidv(s.owner)),
            ("srvfdw", oidv(s.fdw)),
            ("srvtype", s.server_type.as_deref().map_or(Datum::Null, text)),
            ("srvversion", s.version.as_deref().map_or(Datum::Null, text)),
            ("srvacl", acl_datum(cx, s.acl.as_deref())),
            ("srvoptions", options(&s.options)),
        ]);
    }
    Ok(())
}

pub(super) fn pg_user_mapping(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for m in cx.catalog.foreign.user_mappings.values() {
        out.push(vec![("oid", oidv(m.oid)), ("umuser", oidv(m.user)), ("umserver", oidv(m.server)), ("umoptions", options(&m.options))]);
    }
    Ok(())
}

/// Whether the current role may read a user mapping's options
/// (pg_user_mappings.umoptions).
fn sees_mapping_options(cx: &SysCx, who: &Grantee, m: &UserMapping, srv: &ForeignServer) -> bool {
    let current = cx.cluster.role_by_name(cx.user).map(|r| r.oid);
    let own = m.user != acl::PUBLIC && Some(m.user) == current && (who.holds(srv.owner) || crate::commands::foreign::has_usage(who, &srv.acl, srv.owner));
    let public = m.user == acl::PUBLIC && who.holds(srv.owner);
    own || public || cx.cluster.is_superuser(current.unwrap_or(0))
}

pub(super) fn pg_user_mappings(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let who = me(cx);
    for m in cx.catalog.foreign.user_mappings.values() {
        let Some(srv) = cx.catalog.foreign.servers.get(&m.server) else { continue };
        let usename = if m.user == acl::PUBLIC { text("public") } else { cx.cluster.roles.get(&m.user).map_or(Datum::Null, |r| name(&r.name)) };
        let opts = if sees_mapping_options(cx, &who, m, srv) { options(&m.options) } else { Datum::Null };
        out.push(vec![
            ("umid", oidv(m.oid)),
            ("srvid", oidv(srv.oid)),
            ("srvname", name(&srv.name)),
            ("umuser", oidv(m.user)),
            ("usename", usename),
            ("umoptions", opts),
        ]);
    }
    Ok(())
}

// ---------------------------------------------------------------- information_schema

fn visible_wrappers<'a>(cx: &'a SysCx) -> impl Iterator<Item = &'a ForeignDataWrapper> + 'a {
    let who = me(cx);
    cx.catalog.foreign.wrappers.values().filter(move |w| cx.cluster.roles.contains_key(&w.owner) && may_see(&who, &w.acl, w.owner))
}

fn visible_servers<'a>(cx: &'a SysCx) -> impl Iterator<Item = &'a ForeignServer> + 'a {
    let who = me(cx);
    cx.catalog.foreign.servers.values().filter(move |s| {
        cx.catalog.foreign.wrappers.contains_key(&s.fdw) && cx.cluster.roles.contains_key(&s.owner) && may_see(&who, &s.acl, s.owner)
    })
}

pub(super) fn is_foreign_data_wrappers(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for w in visible_wrappers(cx) {
        out.push(vec![
            ("foreign_data_wrapper_catalog", name(cx.database_name)),
            ("foreign_data_wrapper_name", name(&w.name)),
            ("authorization_identifier", name(&cx.cluster.role_name(w.owner))),
            ("foreign_data_wrapper_language", text("c")),
        ]);
    }
    Ok(())
}

pub(super) fn is_foreign_data_wrapper_options(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for w in visible_wrappers(cx) {
        for item in w.options.iter().flatten() {
            let (n, v) = split(item);
            out.push(vec![
                ("foreign_data_wrapper_catalog", name(cx.database_name)),
                ("foreign_data_wrapper_name", name(&w.name)),
                ("option_name", n),
                ("option_value", v),
            ]);
        }
    }
    Ok(())
}

pub(super) fn is_foreign_servers(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for s in visible_servers(cx) {
        let fdw = &cx.catalog.foreign.wrappers[&s.fdw];
        out.push(vec![
            ("foreign_server_catalog", name(cx.database_name)),
            ("foreign_server_name", name(&s.name)),
            ("foreign_data_wrapper_catalog", name(cx.database_name)),
            ("foreign_data_wrapper_name", name(&fdw.name)),
            ("foreign_server_type", s.server_type.as_deref().map_or(Datum::Null, text)),
            ("foreign_server_version", s.version.as_deref().map_or(Datum::Null, text)),
            ("authorization_identifier", name(&cx.cluster.role_name(s.owner))),
        ]);
    }
    Ok(())
}

pub(super) fn is_foreign_server_options(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for s in visible_servers(cx) {
        for item in s.options.iter().flatten() {
            let (n, v) = split(item);
            out.push(vec![
                ("foreign_server_catalog", name(cx.database_name)),
                ("foreign_server_name", name(&s.name)),
                ("option_name", n),
                ("option_value", v),
            ]);
        }
    }
    Ok(())
}

/// _pg_user_mappings: the mappings of the servers the role can see.
fn visible_mappings<'a>(cx: &'a SysCx) -> Vec<(&'a UserMapping, &'a ForeignServer, String)> {
    let servers: Vec<&ForeignServer> = visible_servers(cx).collect();
    let mut out = Vec::new();
    for m in cx.catalog.foreign.user_mappings.values() {
        let Some(srv) = servers.iter().find(|s| s.oid == m.server) else { continue };
        let user = if m.user == acl::PUBLIC { "PUBLIC".to_string() } else { cx.cluster.roles.get(&m.user).map_or("PUBLIC".to_string(), |r| r.name.clone()) };
        out.push((m, *srv, user));
    }
    out
}

pub(super) fn is_user_mappings(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (_, srv, user) in visible_mappings(cx) {
        out.push(vec![
            ("authorization_identifier", name(&user)),
            ("foreign_server_catalog", name(cx.database_name)),
            ("foreign_server_name", name(&srv.name)),
        ]);
    }
    Ok(())
}

pub(super) fn is_user_mapping_options(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let who = me(cx);
    let current = cx.cluster.role_by_name(cx.user).map(|r| r.oid);
    let superuser = cx.cluster.is_superuser(current.unwrap_or(0));
    for (m, srv, user) in visible_mappings(cx) {
        let shown = (m.user != acl::PUBLIC && user == cx.user) || (m.user == acl::PUBLIC && who.holds(srv.owner)) || superuser;
        for item in m.options.iter().flatten() {
            let (n, v) = split(item);
            out.push(vec![
                ("authorization_identifier", name(&user)),
                ("foreign_server_catalog", name(cx.database_name)),
                ("foreign_server_name", name(&srv.name)),
                ("option_name", n),
                ("option_value", if shown { v } else { Datum::Null }),
            ]);
        }
    }
    Ok(())
}

/// The USAGE grants on wrappers and servers as usage_privileges lists them
/// (aclexplode over each ACL, the owner's default when none is stored).
fn usage_grants(cx: &SysCx, enabled_only: bool, out: &mut Vec<SysRow>) {
    let who = me(cx);
    let mut objects: Vec<(&str, &str, Oid, Vec<acl::AclItem>)> = Vec::new();
    for w in cx.catalog.foreign.wrappers.values() {
        objects.push(("FOREIGN DATA WRAPPER", &w.name, w.owner, usage_acl(&w.acl, w.owner)));
    }
    for s in cx.catalog.foreign.servers.values() {
        objects.push(("FOREIGN SERVER", &s.name, s.owner, usage_acl(&s.acl, s.owner)));
    }
    for (kind, object, owner, items) in objects {
        for item in items.iter().filter(|i| i.privs & acl::USAGE != 0) {
            let Some(grantor) = cx.cluster.roles.get(&item.grantor) else { continue };
            let grantee = if item.grantee == acl::PUBLIC {
                "PUBLIC".to_string()
            } else {
                match cx.cluster.roles.get(&item.grantee) {
                    Some(r) => r.name.clone(),
                    None => continue,
                }
            };
            // enabled_roles is pg_has_role(role, 'USAGE'): every role for a superuser.
            let visible = if enabled_only {
                who.holds(item.grantor) || (item.grantee != acl::PUBLIC && who.holds(item.grantee))
            } else {
                who.holds(item.grantor) || (item.grantee != acl::PUBLIC && who.holds(item.grantee)) || item.grantee == acl::PUBLIC
            };
            if !visible {
                continue;
            }
            let grantable = (item.grantee != acl::PUBLIC && cx.cluster.has_privs_of_role(item.grantee, owner, Some(cx.database)))
                || item.grant_options & acl::USAGE != 0;
            out.push(vec![
                ("grantor", name(&grantor.name)),
                ("grantee", name(&grantee)),
                ("object_catalog", name(cx.database_name)),
                ("object_schema", name("")),
                ("object_name", name(object)),
                ("object_type", text(kind)),
                ("privilege_type", text("USAGE")),
                ("is_grantable", yes_no(grantable)),
            ]);
        }
    }
}

pub(super) fn is_usage_privileges(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    usage_grants(cx, false, out);
    Ok(())
}

pub(super) fn is_role_usage_grants(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    usage_grants(cx, true, out);
    Ok(())
}

// ---------------------------------------------------------------- foreign tables

pub(super) fn pg_foreign_table(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let mut rels: Vec<&Arc<Relation>> = cx.catalog.relations.values().filter(|r| r.foreign.is_some()).collect();
    rels.sort_by_key(|r| r.oid);
    for r in rels {
        let f = r.foreign.as_ref().expect("filtered");
        out.push(vec![("ftrelid", oidv(r.oid)), ("ftserver", oidv(f.server)), ("ftoptions", options(&f.options))]);
    }
    Ok(())
}

/// _pg_foreign_tables: the foreign tables the role owns (through its
/// roles) or holds a table privilege on.
fn visible_foreign_tables<'a>(cx: &'a SysCx) -> Vec<(&'a Arc<Relation>, &'a ForeignServer)> {
    let who = me(cx);
    let mut rels: Vec<&Arc<Relation>> = cx.catalog.relations.values().filter(|r| r.foreign.is_some()).collect();
    rels.sort_by_key(|r| r.oid);
    rels.into_iter()
        .filter_map(|r| {
            let srv = cx.catalog.foreign.servers.get(&r.foreign.as_ref()?.server)?;
            let acl = crate::commands::grant::relation_acl(r);
            let sees = who.holds(r.owner) || acl::relation_mask(&acl, &who, u32::MAX) != 0;
            sees.then_some((r, srv))
        })
        .collect()
}

pub(super) fn is_foreign_tables(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (r, srv) in visible_foreign_tables(cx) {
        out.push(vec![
            ("foreign_table_catalog", name(cx.database_name)),
            ("foreign_table_schema", name(cx.catalog.namespace_name(r.namespace))),
            ("foreign_table_name", name(&r.name)),
            ("foreign_server_catalog", name(cx.database_name)),
            ("foreign_server_name", name(&srv.name)),
        ]);
    }
    Ok(())
}

pub(super) fn is_foreign_table_options(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (r, _) in visible_foreign_tables(cx) {
        for item in r.foreign.as_ref().and_then(|f| f.options.as_ref()).into_iter().flatten() {
            let (n, v) = split(item);
            out.push(vec![
                ("foreign_table_catalog", name(cx.database_name)),
                ("foreign_table_schema", name(cx.catalog.namespace_name(r.namespace))),
                ("foreign_table_name", name(&r.name)),
                ("option_name", n),
                ("option_value", v),
            ]);
        }
    }
    Ok(())
}
