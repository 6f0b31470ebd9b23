//! CREATE / ALTER / DROP of foreign-data wrappers, foreign servers and user
//! mappings, their generic OPTIONS, owners, names and USAGE privileges
//! (PostgreSQL's commands/foreigncmds.c, with the option checks of the
//! built-in postgresql_fdw_validator from foreign/foreign.c).
//!
//! Dropping goes through the dependency walk (`dependency`): a server
//! depends on its wrapper, a user mapping on its server, so DROP ...
//! RESTRICT refuses and CASCADE reports them as PostgreSQL does.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use super::grant::{current_grantee, current_role_oid};
use super::notice;
use crate::catalog::acl::{self, AclItem, Grantee};
use crate::catalog::depend::ObjectAddress;
use crate::catalog::foreign::*;
use crate::catalog::{builtins, store};
use crate::session::SqlSession;

fn undefined(message: String) -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, message)
}

fn denied(message: String) -> PgError {
    PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message)
}

fn conflicting(de: &pb::DefElem) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options").with_position((de.location >= 0).then(|| de.location as u32 + 1))
}

/// GetForeignDataWrapperByName(name, false).
pub fn wrapper_named<'a>(cat: &'a ForeignCatalog, name: &str) -> PgResult<&'a ForeignDataWrapper> {
    cat.wrapper_by_name(name).ok_or_else(|| undefined(format!("foreign-data wrapper \"{name}\" does not exist")))
}

/// GetForeignServerByName(name, false).
pub fn server_named<'a>(cat: &'a ForeignCatalog, name: &str) -> PgResult<&'a ForeignServer> {
    cat.server_by_name(name).ok_or_else(|| undefined(format!("server \"{name}\" does not exist")))
}

/// The ACL of a wrapper or server: stored, or the owner's USAGE alone
/// (acldefault for OBJECT_FDW and OBJECT_FOREIGN_SERVER).
pub fn usage_acl(stored: &Option<Vec<AclItem>>, owner: Oid) -> Vec<AclItem> {
    stored.clone().unwrap_or_else(|| vec![AclItem { grantee: owner, grantor: owner, privs: acl::USAGE, grant_options: 0 }])
}

/// Whether `who` holds USAGE under the ACL of an object owned by `owner`.
pub fn has_usage(who: &Grantee, stored: &Option<Vec<AclItem>>, owner: Oid) -> bool {
    who.superuser || acl::mask(&usage_acl(stored, owner), who, acl::USAGE) != 0
}

/// MappingUserName: a role's name, or "public" for the PUBLIC mapping.
fn mapping_user_name(s: &SqlSession, user: Oid) -> String {
    if user == acl::PUBLIC {
        "public".to_string()
    } else {
        s.cluster_catalog().role_name(user)
    }
}

// ---------------------------------------------------------------- options

/// A function's name list (HANDLER / VALIDATOR argument), or None for NO HANDLER.
fn func_name(de: &pb::DefElem) -> Option<Vec<String>> {
    match de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        Some(NodeEnum::List(l)) => Some(
            l.items
                .iter()
                .filter_map(|n| match &n.node {
                    Some(NodeEnum::String(s)) => Some(s.sval.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// LookupFuncName over the built-in functions (Tusk has no others yet).
fn lookup_function(names: &[String], args: &[Oid]) -> PgResult<Oid> {
    let b = builtins();
    let name = names.last().cloned().unwrap_or_default();
    let schema_ok = |nsp: Oid| names.len() < 2 || (names[names.len() - 2] == "pg_catalog" && nsp == crate::catalog::PG_CATALOG_NAMESPACE);
    let found = b
        .procs_by_name
        .get(&name)
        .into_iter()
        .flatten()
        .filter_map(|o| b.proc(*o))
        .find(|p| p.kind == 'f' && p.argtypes == args && schema_ok(p.namespace));
    match found {
        Some(p) => Ok(p.oid),
        None => {
            let arg_names: Vec<String> = args.iter().map(|t| crate::analyzer::types::format_type_be(b, *t)).collect();
            Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {}({}) does not exist", names.join("."), arg_names.join(", "))))
        }
    }
}

/// parse_func_options: HANDLER and VALIDATOR, each given at most once.
/// Returns (handler, validator), each Some when given (0 = NO ...).
fn parse_func_options(options: &[pb::Node]) -> PgResult<(Option<Oid>, Option<Oid>)> {
    let mut handler = None;
    let mut validator = None;
    for o in options {
        let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
        match de.defname.as_str() {
            "handler" => {
                if handler.is_some() {
                    return Err(conflicting(de));
                }
                handler = Some(match func_name(de) {
                    None => 0,
                    Some(names) => {
                        let oid = lookup_function(&names, &[])?;
                        // The type fdw_handler: no built-in function returns it.
                        if builtins().proc(oid).map(|p| p.rettype) != Some(3115) {
                            return Err(PgError::new(
                                sqlstate::WRONG_OBJECT_TYPE,
                                format!("function {} must return type fdw_handler", names.join(".")),
                            ));
                        }
                        oid
                    }
                });
            }
            "validator" => {
                if validator.is_some() {
                    return Err(conflicting(de));
                }
                validator = Some(match func_name(de) {
                    None => 0,
                    Some(names) => lookup_function(&names, &[1009, 26])?,
                });
            }
            other => return Err(PgError::internal(format!("option \"{other}\" not recognized"))),
        }
    }
    Ok((handler, validator))
}

/// The libpq options postgresql_fdw_validator accepts, with the catalog
/// each belongs to (libpq_conninfo_options in foreign.c).
const LIBPQ_OPTIONS: &[(&str, Oid)] = &[
    ("authtype", PG_FOREIGN_SERVER),
    ("service", PG_FOREIGN_SERVER),
    ("user", PG_USER_MAPPING),
    ("password", PG_USER_MAPPING),
    ("connect_timeout", PG_FOREIGN_SERVER),
    ("dbname", PG_FOREIGN_SERVER),
    ("host", PG_FOREIGN_SERVER),
    ("hostaddr", PG_FOREIGN_SERVER),
    ("port", PG_FOREIGN_SERVER),
    ("tty", PG_FOREIGN_SERVER),
    ("options", PG_FOREIGN_SERVER),
    ("requiressl", PG_FOREIGN_SERVER),
    ("sslmode", PG_FOREIGN_SERVER),
    ("gsslib", PG_FOREIGN_SERVER),
];

/// postgresql_fdw_validator: every option must be a libpq connection
/// option that belongs to `catalog`.
fn postgresql_fdw_validator(options: &[String], catalog: Oid) -> PgResult<()> {
    for item in options {
        let (name, _) = split_option(item);
        if !LIBPQ_OPTIONS.iter().any(|(n, c)| *n == name && *c == catalog) {
            let valid: Vec<&str> = LIBPQ_OPTIONS.iter().filter(|(_, c)| *c == catalog).map(|(n, _)| *n).collect();
            let hint = if valid.is_empty() {
                "There are no valid options in this context.".to_string()
            } else {
                format!("Valid options in this context are: {}", valid.join(", "))
            };
            return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("invalid option \"{name}\"")).with_hint(hint));
        }
    }
    Ok(())
}

/// Runs a wrapper's validator over options for `catalog`.
fn validate(validator: Oid, options: &[String], catalog: Oid) -> PgResult<()> {
    match validator {
        0 => Ok(()),
        POSTGRESQL_FDW_VALIDATOR => postgresql_fdw_validator(options, catalog),
        other => Err(PgError::unsupported(format!("the option validator with OID {other}"))),
    }
}

/// transformGenericOptions: applies OPTIONS (ADD/SET/DROP ...) to the
/// stored list and validates the result; None when no option is left.
pub fn transform_options(catalog: Oid, old: &Option<Vec<String>>, options: &[pb::Node], validator: Oid) -> PgResult<Option<Vec<String>>> {
    let mut result: Vec<(String, String)> = old
        .iter()
        .flatten()
        .map(|i| {
            let (n, v) = split_option(i);
            (n.to_string(), v.to_string())
        })
        .collect();
    for o in options {
        let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
        let at = result.iter().position(|(n, _)| *n == de.defname);
        let value = super::def_elem_value(de).unwrap_or_default();
        match de.defaction {
            x if x == pb::DefElemAction::DefelemDrop as i32 => {
                let i = at.ok_or_else(|| undefined(format!("option \"{}\" not found", de.defname)))?;
                result.remove(i);
            }
            x if x == pb::DefElemAction::DefelemSet as i32 => {
                let i = at.ok_or_else(|| undefined(format!("option \"{}\" not found", de.defname)))?;
                result[i].1 = value;
            }
            _ => {
                if at.is_some() {
                    return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("option \"{}\" provided more than once", de.defname)));
                }
                result.push((de.defname.clone(), value));
            }
        }
    }
    let items: Vec<String> = result.into_iter().map(|(n, v)| format!("{n}={v}")).collect();
    validate(validator, &items, catalog)?;
    Ok((!items.is_empty()).then_some(items))
}

// ---------------------------------------------------------------- wrappers

fn store_wrapper(s: &SqlSession, w: &ForeignDataWrapper) -> PgResult<()> {
    put_wrapper(s.txn()?, s.db, w)
}

fn store_server(s: &SqlSession, srv: &ForeignServer) -> PgResult<()> {
    put_server(s.txn()?, s.db, srv)
}

/// Locks a name of an object class, so that concurrent CREATE / RENAME
/// of one name serialize (the second then finds the first's row).
fn lock_name(s: &SqlSession, class: Oid, name: &str) -> PgResult<()> {
    s.txn()?.get_for_update(&name_lock_key(s.db, class, name))?;
    Ok(())
}

pub fn create_wrapper(s: &mut SqlSession, stmt: &pb::CreateFdwStmt) -> PgResult<()> {
    let name = &stmt.fdwname;
    if !current_grantee(s).superuser {
        return Err(denied(format!("permission denied to create foreign-data wrapper \"{name}\""))
            .with_hint("Must be superuser to create a foreign-data wrapper."));
    }
    lock_name(s, PG_FOREIGN_DATA_WRAPPER, name)?;
    let catalog = s.catalog()?;
    if catalog.foreign.wrapper_by_name(name).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("foreign-data wrapper \"{name}\" already exists")));
    }
    let (handler, validator) = parse_func_options(&stmt.func_options)?;
    let validator = validator.unwrap_or(0);
    let options = transform_options(PG_FOREIGN_DATA_WRAPPER, &None, &stmt.options, validator)?;
    let w = ForeignDataWrapper {
        oid: store::new_oid(&s.cluster.engine)?,
        name: name.clone(),
        owner: current_role_oid(s),
        handler: handler.unwrap_or(0),
        validator,
        acl: None,
        options,
    };
    store_wrapper(s, &w)?;
    s.reload_txn_catalog()
}

pub fn alter_wrapper(s: &mut SqlSession, stmt: &pb::AlterFdwStmt) -> PgResult<()> {
    let name = &stmt.fdwname;
    let catalog = s.catalog()?;
    let mut w = wrapper_named(&catalog.foreign, name)?.clone();
    if !current_grantee(s).superuser {
        return Err(denied(format!("permission denied to alter foreign-data wrapper \"{name}\""))
            .with_hint("Must be superuser to alter a foreign-data wrapper."));
    }
    let (handler, validator) = parse_func_options(&stmt.func_options)?;
    if let Some(h) = handler {
        w.handler = h;
        // A new handler may read the options of existing foreign tables differently.
        if h != 0 {
            s.notices.borrow_mut().push(PgError::warning("changing the foreign-data wrapper handler can change behavior of existing foreign tables"));
        }
    }
    if let Some(v) = validator {
        w.validator = v;
        if v != 0 {
            s.notices.borrow_mut().push(PgError::warning(
                "changing the foreign-data wrapper validator can cause the options for dependent objects to become invalid",
            ));
        }
    }
    if !stmt.options.is_empty() {
        w.options = transform_options(PG_FOREIGN_DATA_WRAPPER, &w.options, &stmt.options, w.validator)?;
    }
    store_wrapper(s, &w)?;
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- servers

pub fn create_server(s: &mut SqlSession, stmt: &pb::CreateForeignServerStmt) -> PgResult<()> {
    let name = &stmt.servername;
    let owner = current_role_oid(s);
    lock_name(s, PG_FOREIGN_SERVER, name)?;
    let catalog = s.catalog()?;
    if catalog.foreign.server_by_name(name).is_some() {
        if stmt.if_not_exists {
            s.notices.borrow_mut().push(PgError::notice(format!("server \"{name}\" already exists, skipping")).with_code(sqlstate::DUPLICATE_OBJECT));
            return Ok(());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("server \"{name}\" already exists")));
    }
    let fdw = wrapper_named(&catalog.foreign, &stmt.fdwname)?;
    if !has_usage(&current_grantee(s), &fdw.acl, fdw.owner) {
        return Err(denied(format!("permission denied for foreign-data wrapper {}", fdw.name)));
    }
    let options = transform_options(PG_FOREIGN_SERVER, &None, &stmt.options, fdw.validator)?;
    let srv = ForeignServer {
        oid: store::new_oid(&s.cluster.engine)?,
        name: name.clone(),
        owner,
        fdw: fdw.oid,
        server_type: (!stmt.servertype.is_empty()).then(|| stmt.servertype.clone()),
        version: (!stmt.version.is_empty()).then(|| stmt.version.clone()),
        acl: None,
        options,
    };
    store_server(s, &srv)?;
    s.reload_txn_catalog()
}

/// pg_foreign_server_ownercheck, failing as aclcheck_error does.
fn check_server_owner(s: &SqlSession, srv: &ForeignServer) -> PgResult<()> {
    if current_grantee(s).holds(srv.owner) {
        Ok(())
    } else {
        Err(denied(format!("must be owner of foreign server {}", srv.name)))
    }
}

pub fn alter_server(s: &mut SqlSession, stmt: &pb::AlterForeignServerStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut srv = server_named(&catalog.foreign, &stmt.servername)?.clone();
    check_server_owner(s, &srv)?;
    if stmt.has_version {
        srv.version = (!stmt.version.is_empty()).then(|| stmt.version.clone());
    }
    if !stmt.options.is_empty() {
        let validator = catalog.foreign.wrappers.get(&srv.fdw).map_or(0, |w| w.validator);
        srv.options = transform_options(PG_FOREIGN_SERVER, &srv.options, &stmt.options, validator)?;
    }
    store_server(s, &srv)?;
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- user mappings

/// The role a user mapping names: PUBLIC (0), CURRENT_USER, or a role
/// (None when it does not exist and `missing_ok`).
fn mapping_user(s: &SqlSession, spec: Option<&pb::RoleSpec>, missing_ok: bool) -> PgResult<Option<Oid>> {
    match spec {
        Some(rs) if rs.roletype == pb::RoleSpecType::RolespecPublic as i32 => Ok(Some(acl::PUBLIC)),
        Some(rs) if rs.roletype == pb::RoleSpecType::RolespecCstring as i32 => {
            match s.cluster_catalog().role_by_name(&rs.rolename) {
                Some(r) => Ok(Some(r.oid)),
                None if missing_ok => Ok(None),
                None => Err(undefined(format!("role \"{}\" does not exist", rs.rolename))),
            }
        }
        other => super::grant::role_spec_oid(s, other).map(Some),
    }
}

/// user_mapping_ddl_aclcheck: the server's owner may manage every mapping
/// of it; anyone else only their own, with USAGE on the server.
fn mapping_ddl_check(s: &SqlSession, user: Oid, srv: &ForeignServer) -> PgResult<()> {
    let me = current_grantee(s);
    if me.holds(srv.owner) {
        return Ok(());
    }
    if user == me.role {
        if !has_usage(&me, &srv.acl, srv.owner) {
            return Err(denied(format!("permission denied for foreign server {}", srv.name)));
        }
        return Ok(());
    }
    Err(denied(format!("must be owner of foreign server {}", srv.name)))
}

pub fn create_user_mapping(s: &mut SqlSession, stmt: &pb::CreateUserMappingStmt) -> PgResult<()> {
    let user = mapping_user(s, stmt.user.as_ref(), false)?.unwrap_or(acl::PUBLIC);
    let catalog = s.catalog()?;
    let srv = server_named(&catalog.foreign, &stmt.servername)?;
    mapping_ddl_check(s, user, srv)?;
    lock_name(s, PG_USER_MAPPING, &format!("{user}/{}", srv.oid))?;
    if catalog.foreign.user_mapping(user, srv.oid).is_some() {
        let who = mapping_user_name(s, user);
        if stmt.if_not_exists {
            s.notices.borrow_mut().push(
                PgError::notice(format!("user mapping for \"{who}\" already exists for server \"{}\", skipping", stmt.servername))
                    .with_code(sqlstate::DUPLICATE_OBJECT),
            );
            return Ok(());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("user mapping for \"{who}\" already exists for server \"{}\"", stmt.servername)));
    }
    let validator = catalog.foreign.wrappers.get(&srv.fdw).map_or(0, |w| w.validator);
    let options = transform_options(PG_USER_MAPPING, &None, &stmt.options, validator)?;
    let m = UserMapping { oid: store::new_oid(&s.cluster.engine)?, user, server: srv.oid, options };
    put_user_mapping(s.txn()?, s.db, &m)?;
    s.reload_txn_catalog()
}

pub fn alter_user_mapping(s: &mut SqlSession, stmt: &pb::AlterUserMappingStmt) -> PgResult<()> {
    let user = mapping_user(s, stmt.user.as_ref(), false)?.unwrap_or(acl::PUBLIC);
    let catalog = s.catalog()?;
    let srv = server_named(&catalog.foreign, &stmt.servername)?;
    let mut m = catalog
        .foreign
        .user_mapping(user, srv.oid)
        .ok_or_else(|| undefined(format!("user mapping for \"{}\" does not exist for server \"{}\"", mapping_user_name(s, user), stmt.servername)))?
        .clone();
    mapping_ddl_check(s, user, srv)?;
    if !stmt.options.is_empty() {
        let validator = catalog.foreign.wrappers.get(&srv.fdw).map_or(0, |w| w.validator);
        m.options = transform_options(PG_USER_MAPPING, &m.options, &stmt.options, validator)?;
    }
    put_user_mapping(s.txn()?, s.db, &m)?;
    s.reload_txn_catalog()
}

pub fn drop_user_mapping(s: &mut SqlSession, stmt: &pb::DropUserMappingStmt) -> PgResult<()> {
    let Some(user) = mapping_user(s, stmt.user.as_ref(), stmt.missing_ok)? else {
        let name = stmt.user.as_ref().map(|r| r.rolename.clone()).unwrap_or_default();
        notice(s, format!("role \"{name}\" does not exist, skipping"));
        return Ok(());
    };
    let catalog = s.catalog()?;
    let Some(srv) = catalog.foreign.server_by_name(&stmt.servername) else {
        if !stmt.missing_ok {
            return Err(undefined(format!("server \"{}\" does not exist", stmt.servername)));
        }
        notice(s, format!("server \"{}\" does not exist, skipping", stmt.servername));
        return Ok(());
    };
    let Some(m) = catalog.foreign.user_mapping(user, srv.oid) else {
        let message = format!("user mapping for \"{}\" does not exist for server \"{}\"", mapping_user_name(s, user), stmt.servername);
        if !stmt.missing_ok {
            return Err(undefined(message));
        }
        notice(s, format!("{message}, skipping"));
        return Ok(());
    };
    mapping_ddl_check(s, user, srv)?;
    {
        let d = Ddl::new(s, "")?;
        super::dependency::perform_deletion(&d, &[ObjectAddress::new(PG_USER_MAPPING, m.oid, 0)], true)?;
    }
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- DROP, RENAME, OWNER, COMMENT, GRANT

/// The objects DROP FOREIGN DATA WRAPPER / DROP SERVER names, after the
/// ownership checks (RemoveObjects); missing ones are skipped with a
/// NOTICE under IF EXISTS.
pub fn drop_targets(s: &SqlSession, stmt: &pb::DropStmt) -> PgResult<Vec<ObjectAddress>> {
    let wrapper = stmt.remove_type == pb::ObjectType::ObjectFdw as i32;
    let catalog = s.catalog()?;
    let me = current_grantee(s);
    let mut out = Vec::new();
    for obj in &stmt.objects {
        let Some(NodeEnum::String(n)) = &obj.node else { continue };
        let name = &n.sval;
        let found = if wrapper {
            catalog.foreign.wrapper_by_name(name).map(|w| (w.oid, w.owner))
        } else {
            catalog.foreign.server_by_name(name).map(|x| (x.oid, x.owner))
        };
        let noun = if wrapper { "foreign-data wrapper" } else { "server" };
        let Some((oid, owner)) = found else {
            if stmt.missing_ok {
                notice(s, format!("{noun} \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(undefined(format!("{noun} \"{name}\" does not exist")));
        };
        if !me.holds(owner) {
            let noun = if wrapper { "foreign-data wrapper" } else { "foreign server" };
            return Err(denied(format!("must be owner of {noun} {name}")));
        }
        let t = ObjectAddress::new(if wrapper { PG_FOREIGN_DATA_WRAPPER } else { PG_FOREIGN_SERVER }, oid, 0);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// ALTER FOREIGN DATA WRAPPER / SERVER name RENAME TO new.
pub fn rename(s: &mut SqlSession, stmt: &pb::RenameStmt) -> PgResult<()> {
    let wrapper = stmt.rename_type == pb::ObjectType::ObjectFdw as i32;
    let old = match stmt.object.as_deref().and_then(|o| o.node.as_ref()) {
        Some(NodeEnum::String(n)) => n.sval.clone(),
        _ => String::new(),
    };
    let new = stmt.newname.clone();
    let catalog = s.catalog()?;
    let me = current_grantee(s);
    if wrapper {
        lock_name(s, PG_FOREIGN_DATA_WRAPPER, &new)?;
        let mut w = wrapper_named(&catalog.foreign, &old)?.clone();
        if catalog.foreign.wrapper_by_name(&new).is_some() {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("foreign-data wrapper \"{new}\" already exists")));
        }
        if !me.holds(w.owner) {
            return Err(denied(format!("must be owner of foreign-data wrapper {old}")));
        }
        w.name = new;
        store_wrapper(s, &w)?;
    } else {
        lock_name(s, PG_FOREIGN_SERVER, &new)?;
        let mut srv = server_named(&catalog.foreign, &old)?.clone();
        if catalog.foreign.server_by_name(&new).is_some() {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("server \"{new}\" already exists")));
        }
        check_server_owner(s, &srv)?;
        srv.name = new;
        store_server(s, &srv)?;
    }
    s.reload_txn_catalog()
}

/// ALTER FOREIGN DATA WRAPPER / SERVER name OWNER TO role.
pub fn alter_owner(s: &mut SqlSession, stmt: &pb::AlterOwnerStmt) -> PgResult<&'static str> {
    let wrapper = stmt.object_type == pb::ObjectType::ObjectFdw as i32;
    let name = match stmt.object.as_deref().and_then(|o| o.node.as_ref()) {
        Some(NodeEnum::String(n)) => n.sval.clone(),
        _ => String::new(),
    };
    let new_owner = super::grant::role_spec_oid(s, stmt.newowner.as_ref())?;
    let catalog = s.catalog()?;
    let cluster = s.cluster_catalog();
    let me = current_grantee(s);
    if wrapper {
        let mut w = wrapper_named(&catalog.foreign, &name)?.clone();
        if w.owner != new_owner {
            if !me.superuser {
                return Err(denied(format!("permission denied to change owner of foreign-data wrapper \"{name}\""))
                    .with_hint("Must be superuser to change owner of a foreign-data wrapper."));
            }
            if !cluster.is_superuser(new_owner) {
                return Err(denied(format!("permission denied to change owner of foreign-data wrapper \"{name}\""))
                    .with_hint("The owner of a foreign-data wrapper must be a superuser."));
            }
            if let Some(items) = &mut w.acl {
                acl::new_owner(items, w.owner, new_owner);
            }
            w.owner = new_owner;
            store_wrapper(s, &w)?;
        }
        s.reload_txn_catalog()?;
        return Ok("ALTER FOREIGN DATA WRAPPER");
    }
    let mut srv = server_named(&catalog.foreign, &name)?.clone();
    if srv.owner != new_owner {
        if !me.superuser {
            check_server_owner(s, &srv)?;
            if !cluster.is_member_of_role_nosuper(me.role, new_owner, None) {
                return Err(denied(format!("must be member of role \"{}\"", cluster.role_name(new_owner))));
            }
            let fdw = catalog.foreign.wrappers.get(&srv.fdw);
            let who = Grantee::of(&cluster, new_owner, s.db);
            if let Some(fdw) = fdw {
                if !has_usage(&who, &fdw.acl, fdw.owner) {
                    return Err(denied(format!("permission denied for foreign-data wrapper {}", fdw.name)));
                }
            }
        }
        if let Some(items) = &mut srv.acl {
            acl::new_owner(items, srv.owner, new_owner);
        }
        srv.owner = new_owner;
        store_server(s, &srv)?;
    }
    s.reload_txn_catalog()?;
    Ok("ALTER SERVER")
}

/// COMMENT ON FOREIGN DATA WRAPPER / SERVER: the object, after the
/// ownership check COMMENT makes. Returns (class, oid).
pub fn comment_target(s: &SqlSession, objtype: i32, name: &str) -> PgResult<(Oid, Oid)> {
    let catalog = s.catalog()?;
    let me = current_grantee(s);
    if objtype == pb::ObjectType::ObjectFdw as i32 {
        let w = wrapper_named(&catalog.foreign, name)?;
        if !me.holds(w.owner) {
            return Err(denied(format!("must be owner of foreign-data wrapper {name}")));
        }
        Ok((PG_FOREIGN_DATA_WRAPPER, w.oid))
    } else {
        let srv = server_named(&catalog.foreign, name)?;
        check_server_owner(s, srv)?;
        Ok((PG_FOREIGN_SERVER, srv.oid))
    }
}

/// GRANT / REVOKE USAGE ON FOREIGN DATA WRAPPER / FOREIGN SERVER.
pub fn grant(s: &mut SqlSession, stmt: &pb::GrantStmt, grantees: &[Oid]) -> PgResult<()> {
    let wrapper = stmt.objtype == pb::ObjectType::ObjectFdw as i32;
    let noun = if wrapper { "foreign-data wrapper" } else { "foreign server" };
    // Only USAGE exists on these objects.
    let mut requested = None;
    if !stmt.privileges.is_empty() {
        let mut m = 0;
        for p in &stmt.privileges {
            let Some(NodeEnum::AccessPriv(ap)) = &p.node else { continue };
            let bit = acl::privilege_by_name(&ap.priv_name)
                .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, format!("unrecognized privilege type \"{}\"", ap.priv_name)))?;
            if bit != acl::USAGE {
                return Err(PgError::new(
                    sqlstate::INVALID_GRANT_OPERATION,
                    format!("invalid privilege type {} for {noun}", ap.priv_name.to_uppercase()),
                ));
            }
            m |= bit;
        }
        requested = Some(m);
    }
    let catalog = s.catalog()?;
    for o in &stmt.objects {
        let Some(NodeEnum::String(n)) = &o.node else { continue };
        let name = &n.sval;
        if wrapper {
            let mut w = wrapper_named(&catalog.foreign, name)?.clone();
            let current = usage_acl(&w.acl, w.owner);
            w.acl = Some(super::grant::apply_usage(s, stmt, noun, name, w.owner, current, requested, grantees)?);
            store_wrapper(s, &w)?;
        } else {
            let mut srv = server_named(&catalog.foreign, name)?.clone();
            let current = usage_acl(&srv.acl, srv.owner);
            srv.acl = Some(super::grant::apply_usage(s, stmt, noun, name, srv.owner, current, requested, grantees)?);
            store_server(s, &srv)?;
        }
    }
    s.reload_txn_catalog()
}

/// IMPORT FOREIGN SCHEMA: the checks PostgreSQL makes before asking the
/// wrapper for the remote tables; with no wrapper implementation in Tusk
/// it then fails as PostgreSQL does for a wrapper without a handler.
pub fn import_foreign_schema(s: &mut SqlSession, stmt: &pb::ImportForeignSchemaStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let srv = server_named(&catalog.foreign, &stmt.server_name)?;
    let me = current_grantee(s);
    if !has_usage(&me, &srv.acl, srv.owner) {
        return Err(denied(format!("permission denied for foreign server {}", srv.name)));
    }
    let nsp = *catalog
        .namespace_by_name
        .get(&stmt.local_schema)
        .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", stmt.local_schema)))?;
    super::grant::check_schema_create(s, nsp)?;
    let fdw = catalog.foreign.wrappers.get(&srv.fdw).ok_or_else(|| PgError::internal("server without wrapper"))?;
    Err(no_handler(fdw))
}

/// GetFdwRoutine's refusal for a wrapper Tusk cannot run.
pub fn no_handler(fdw: &ForeignDataWrapper) -> PgError {
    if fdw.handler == 0 {
        PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("foreign-data wrapper \"{}\" has no handler", fdw.name))
    } else {
        PgError::unsupported("foreign-data wrapper handlers")
    }
}

// ---------------------------------------------------------------- foreign tables

/// transformCreateStmt's refusals for a foreign table: no primary key,
/// unique, exclusion or foreign key constraints (there is no index to
/// enforce them with, nor rows to check).
fn check_foreign_table_constraint(c: &pb::Constraint) -> PgResult<()> {
    use pb::ConstrType as C;
    let what = match C::from_i32(c.contype) {
        Some(C::ConstrPrimary) => "primary key",
        Some(C::ConstrUnique) => "unique",
        Some(C::ConstrExclusion) => "exclusion",
        Some(C::ConstrForeign) => "foreign key",
        _ => return Ok(()),
    };
    Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("{what} constraints are not supported on foreign tables"))
        .with_position(crate::analyzer::pos(c.location)))
}

/// CREATE FOREIGN TABLE: the table's catalog rows as CREATE TABLE makes
/// them, then its server and options (pg_foreign_table) and its columns'
/// options (attfdwoptions).
pub fn create_foreign_table(s: &mut SqlSession, stmt: &pb::CreateForeignTableStmt, sql: &str) -> PgResult<()> {
    let base = stmt.base_stmt.as_ref().ok_or_else(|| PgError::internal("CREATE FOREIGN TABLE without table"))?;
    if base.partbound.is_some() {
        return Err(PgError::unsupported("declarative partitioning"));
    }
    for elt in &base.table_elts {
        match &elt.node {
            Some(NodeEnum::ColumnDef(cd)) => {
                for c in &cd.constraints {
                    if let Some(NodeEnum::Constraint(c)) = &c.node {
                        check_foreign_table_constraint(c)?;
                    }
                }
            }
            Some(NodeEnum::Constraint(c)) => check_foreign_table_constraint(c)?,
            _ => {}
        }
    }
    let rv = base.relation.as_ref().ok_or_else(|| PgError::internal("CREATE FOREIGN TABLE without name"))?;
    if base.if_not_exists && super::ddl::table_name_taken(s, rv, sql)? {
        return super::table_like::create_table(s, base, sql);
    }
    super::table_like::create_table(s, base, sql)?;
    let catalog = s.catalog()?;
    let rel = {
        let settings = s.settings.borrow();
        s.analyzer(&catalog, &settings, &[], sql).range_var_relation(rv)?
    };
    let srv = server_named(&catalog.foreign, &stmt.servername)?;
    let me = current_grantee(s);
    if !has_usage(&me, &srv.acl, srv.owner) {
        return Err(denied(format!("permission denied for foreign server {}", srv.name)));
    }
    let validator = catalog.foreign.wrappers.get(&srv.fdw).map_or(0, |w| w.validator);
    let options = transform_options(PG_FOREIGN_TABLE, &None, &stmt.options, validator)?;
    let mut column_options = vec![None; rel.columns.len()];
    for elt in &base.table_elts {
        let Some(NodeEnum::ColumnDef(cd)) = &elt.node else { continue };
        if cd.fdwoptions.is_empty() {
            continue;
        }
        if let Some((attnum, _)) = rel.column_by_name(&cd.colname) {
            column_options[attnum as usize - 1] = transform_options(1249, &None, &cd.fdwoptions, validator)?;
        }
    }
    let mut r = (*rel).clone();
    r.kind = crate::catalog::RelKind::ForeignTable;
    r.foreign = Some(crate::catalog::ForeignTableInfo { server: srv.oid, options, column_options });
    store::put_relation(s.txn()?, s.db, &r)?;
    s.reload_txn_catalog()
}

/// ALTER (FOREIGN) TABLE subcommands a foreign table refuses as
/// PostgreSQL does: key constraints.
pub(crate) fn check_foreign_table_cmd(_rel: &crate::catalog::Relation, c: &pb::AlterTableCmd) -> PgResult<()> {
    if c.subtype == pb::AlterTableType::AtAddConstraint as i32 || c.subtype == pb::AlterTableType::AtAddColumn as i32 {
        match c.def.as_deref().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::Constraint(con)) => check_foreign_table_constraint(con)?,
            Some(NodeEnum::ColumnDef(cd)) => {
                for n in &cd.constraints {
                    if let Some(NodeEnum::Constraint(con)) = &n.node {
                        check_foreign_table_constraint(con)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The validator of the wrapper behind a foreign table's server.
fn table_validator(d: &Ddl, t: &crate::catalog::Relation) -> Oid {
    let cat = &d.catalog.foreign;
    t.foreign.as_ref().and_then(|f| cat.servers.get(&f.server)).and_then(|s| cat.wrappers.get(&s.fdw)).map_or(0, |w| w.validator)
}

/// ADD COLUMN ... OPTIONS (...) of a foreign table: the new column's options.
pub(crate) fn add_column_options(d: &Ddl, t: &mut crate::catalog::Relation, idx: usize, cd: &pb::ColumnDef) -> PgResult<()> {
    if cd.fdwoptions.is_empty() || t.foreign.is_none() {
        return Ok(());
    }
    let options = transform_options(1249, &None, &cd.fdwoptions, table_validator(d, t))?;
    let f = t.foreign.as_mut().expect("checked");
    if f.column_options.len() <= idx {
        f.column_options.resize(idx + 1, None);
    }
    f.column_options[idx] = options;
    Ok(())
}

/// ALTER FOREIGN TABLE ... OPTIONS (...) and ALTER COLUMN c OPTIONS (...).
pub(crate) fn alter_generic_options(d: &Ddl, t: &mut crate::catalog::Relation, c: &pb::AlterTableCmd) -> PgResult<()> {
    let validator = table_validator(d, t);
    let Some(NodeEnum::List(list)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("OPTIONS without a list"));
    };
    let name = t.name.clone();
    let ncols = t.columns.len();
    let column = if c.subtype == pb::AlterTableType::AtAlterColumnGenericOptions as i32 {
        if crate::expr::SystemColumn::ALL.iter().any(|sc| sc.name() == c.name) {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot alter system column \"{}\"", c.name)));
        }
        let (attnum, _) = t.column_by_name(&c.name).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" of relation \"{name}\" does not exist", c.name))
        })?;
        Some(attnum as usize - 1)
    } else {
        None
    };
    let f = t.foreign.as_mut().ok_or_else(|| PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a foreign table")))?;
    match column {
        Some(i) => {
            if f.column_options.len() < ncols {
                f.column_options.resize(ncols, None);
            }
            f.column_options[i] = transform_options(1249, &f.column_options[i], &list.items, validator)?;
        }
        None => f.options = transform_options(PG_FOREIGN_TABLE, &f.options, &list.items, validator)?,
    }
    Ok(())
}
