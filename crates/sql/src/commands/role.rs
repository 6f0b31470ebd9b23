//! Roles: CREATE/ALTER/DROP ROLE (and their USER and GROUP spellings),
//! ALTER ROLE ... RENAME TO, with PostgreSQL 15's privilege checks, errors
//! and notices (src/backend/commands/user.c); and the password verifiers a
//! role's PASSWORD is stored as (src/backend/libpq/crypt.c and
//! auth-scram.c), which the server's authentication reads back.
//!
//! Roles are cluster-wide rows of the catalog (`catalog::store`), written
//! through the statement's transaction like CREATE DATABASE writes
//! databases: a role created in a transaction that rolls back never
//! existed. Concurrent DDL on one role name is serialized by locking a
//! key per name (and the role's own row for ALTER/DROP) before reading.
//!
//! A password is never stored as given. PostgreSQL 15 stores a
//! SCRAM-SHA-256 verifier (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`,
//! RFC 5802/7677) unless `password_encryption` is `md5`, when it stores
//! `md5` followed by md5(password || role name). A string that already
//! has one of those forms is stored as it is, so that dumps restore.

use std::borrow::Cow;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use md5::Md5;
use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use rand::RngCore;
use sha2::{Digest as _, Sha256};
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::notice;
use crate::catalog::store;
use crate::catalog::acl;
use crate::catalog::{ClusterCatalog, Membership, Role};
use crate::session::SqlSession;

// ---------------------------------------------------------------- password verifiers

/// PostgreSQL's SCRAM_KEY_LEN (SHA-256's output).
pub const SCRAM_KEY_LEN: usize = 32;
/// PostgreSQL's SCRAM_DEFAULT_SALT_LEN.
pub const SCRAM_SALT_LEN: usize = 16;
/// PostgreSQL 15's SCRAM_DEFAULT_ITERATIONS.
pub const SCRAM_ITERATIONS: u32 = 4096;

/// What a stored rolpassword is (PostgreSQL's PasswordType).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordType {
    Plaintext,
    Md5,
    ScramSha256,
}

/// A parsed SCRAM-SHA-256 verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScramSecret {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub stored_key: [u8; SCRAM_KEY_LEN],
    pub server_key: [u8; SCRAM_KEY_LEN],
}

impl ScramSecret {
    /// The base64 salt, as the server-first-message carries it.
    pub fn salt_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.salt)
    }
}

/// PostgreSQL's base64 decoder: whitespace is skipped, padding is
/// required, trailing bits are not checked.
pub fn b64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose =
        GeneralPurpose::new(&base64::alphabet::STANDARD, GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true));
    let compact: String = s.chars().filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\r')).collect();
    LENIENT.decode(compact).ok()
}

pub fn b64_encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, with both
/// keys 32 bytes long (PostgreSQL's parse_scram_secret).
pub fn parse_scram_secret(secret: &str) -> Option<ScramSecret> {
    let rest = secret.strip_prefix("SCRAM-SHA-256$")?;
    let (iter_salt, keys) = rest.split_once('$')?;
    let (iterations, salt) = iter_salt.split_once(':')?;
    let (stored, server) = keys.split_once(':')?;
    // strtol over the whole field: digits (with an optional sign), no junk.
    let iterations: i64 = iterations.trim_start().parse().ok()?;
    let iterations = u32::try_from(iterations).ok().filter(|&i| i > 0)?;
    let salt = b64_decode(salt)?;
    let stored_key: [u8; SCRAM_KEY_LEN] = b64_decode(stored)?.try_into().ok()?;
    let server_key: [u8; SCRAM_KEY_LEN] = b64_decode(server)?.try_into().ok()?;
    Some(ScramSecret { iterations, salt, stored_key, server_key })
}

/// PostgreSQL's get_password_type.
pub fn password_type(shadow: &str) -> PasswordType {
    let b = shadow.as_bytes();
    if b.len() == 35 && shadow.starts_with("md5") && b[3..].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return PasswordType::Md5;
    }
    if parse_scram_secret(shadow).is_some() {
        return PasswordType::ScramSha256;
    }
    PasswordType::Plaintext
}

/// `md5` followed by the hex MD5 of `secret || salt` (PostgreSQL's
/// pg_md5_encrypt: the stored form with the role name as salt, and the
/// md5 challenge's answer with the stored hex as secret).
pub fn md5_encrypt(secret: &[u8], salt: &[u8]) -> String {
    let mut h = Md5::new();
    h.update(secret);
    h.update(salt);
    format!("md5{}", hex::encode(h.finalize()))
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; SCRAM_KEY_LEN] {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes keys of any length");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

pub fn sha256(bytes: &[u8]) -> [u8; SCRAM_KEY_LEN] {
    sha2::Sha256::digest(bytes).into()
}

/// HMAC-SHA-256 of the concatenated `parts` under `key`.
pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; SCRAM_KEY_LEN] {
    hmac(key, parts)
}

/// The password as SCRAM hashes it: SASLprep-normalized when that
/// succeeds, as it is otherwise (PostgreSQL's pg_saslprep fallback).
pub fn saslprep(password: &str) -> Cow<'_, str> {
    stringprep::saslprep(password).unwrap_or(Cow::Borrowed(password))
}

/// SaltedPassword = Hi(Normalize(password), salt, i), Hi being PBKDF2 with
/// HMAC-SHA-256 and one block (RFC 5802 section 2.2).
pub fn scram_salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; SCRAM_KEY_LEN] {
    let prepared = saslprep(password);
    let mut out = [0u8; SCRAM_KEY_LEN];
    pbkdf2::pbkdf2_hmac::<Sha256>(prepared.as_bytes(), salt, iterations, &mut out);
    out
}

/// ClientKey, StoredKey = H(ClientKey) and ServerKey of a salted password.
pub fn scram_keys(salted: &[u8; SCRAM_KEY_LEN]) -> ([u8; SCRAM_KEY_LEN], [u8; SCRAM_KEY_LEN], [u8; SCRAM_KEY_LEN]) {
    let client_key = hmac(salted, &[b"Client Key"]);
    let stored_key = sha256(&client_key);
    let server_key = hmac(salted, &[b"Server Key"]);
    (client_key, stored_key, server_key)
}

/// A SCRAM-SHA-256 verifier for `password` with this salt and iteration count.
pub fn scram_secret_with(password: &str, salt: &[u8], iterations: u32) -> String {
    let (_, stored_key, server_key) = scram_keys(&scram_salted_password(password, salt, iterations));
    format!("SCRAM-SHA-256${iterations}:{}${}:{}", b64_encode(salt), b64_encode(&stored_key), b64_encode(&server_key))
}

/// A SCRAM-SHA-256 verifier for `password` with a fresh random salt
/// (PostgreSQL's pg_be_scram_build_secret).
pub fn scram_secret(password: &str) -> String {
    let mut salt = [0u8; SCRAM_SALT_LEN];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    scram_secret_with(password, &salt, SCRAM_ITERATIONS)
}

/// What CREATE/ALTER ROLE stores for `password` (PostgreSQL's
/// encrypt_password): an already encrypted one as it is, otherwise the
/// verifier `password_encryption` asks for.
pub fn encrypt_password(password_encryption: &str, role: &str, password: &str) -> String {
    if password_type(password) != PasswordType::Plaintext {
        return password.to_string();
    }
    if password_encryption.eq_ignore_ascii_case("md5") {
        md5_encrypt(password.as_bytes(), role.as_bytes())
    } else {
        scram_secret(password)
    }
}

/// Whether a client's cleartext password matches a stored verifier
/// (PostgreSQL's plain_crypt_verify; a plaintext "verifier" never matches).
pub fn plain_password_matches(role: &str, shadow: &str, client_password: &str) -> bool {
    match password_type(shadow) {
        PasswordType::ScramSha256 => {
            let Some(secret) = parse_scram_secret(shadow) else { return false };
            let salted = scram_salted_password(client_password, &secret.salt, secret.iterations);
            let (_, _, server_key) = scram_keys(&salted);
            constant_time_eq(&server_key, &secret.server_key)
        }
        PasswordType::Md5 => {
            let computed = md5_encrypt(client_password.as_bytes(), role.as_bytes());
            constant_time_eq(computed.as_bytes(), shadow.as_bytes())
        }
        PasswordType::Plaintext => false,
    }
}

/// Compares without an early exit, so timing does not tell how much matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

// ---------------------------------------------------------------- statements

/// A role named in a statement (PostgreSQL's RoleSpec).
enum Spec {
    Name(String),
    CurrentUser,
    SessionUser,
    Public,
}

fn role_spec(rs: &pb::RoleSpec) -> Spec {
    match rs.roletype {
        x if x == pb::RoleSpecType::RolespecCurrentRole as i32 || x == pb::RoleSpecType::RolespecCurrentUser as i32 => Spec::CurrentUser,
        x if x == pb::RoleSpecType::RolespecSessionUser as i32 => Spec::SessionUser,
        x if x == pb::RoleSpecType::RolespecPublic as i32 => Spec::Public,
        _ => Spec::Name(rs.rolename.clone()),
    }
}

/// PostgreSQL's IsReservedName: the pg_ prefix belongs to the system.
fn is_reserved(name: &str) -> bool {
    name.starts_with("pg_")
}

fn reserved(name: &str, detail: &str) -> PgError {
    PgError::new(sqlstate::RESERVED_NAME, format!("role name \"{name}\" is reserved")).with_detail(detail)
}

const RESERVED_DETAIL: &str = "Role names starting with \"pg_\" are reserved.";

fn does_not_exist(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist"))
}

fn denied(message: &str) -> PgError {
    PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message)
}

/// The options of CREATE/ALTER ROLE, each at most once.
#[derive(Default)]
struct Options<'a> {
    /// PASSWORD 'x' (Some(Some)), PASSWORD NULL (Some(None)).
    password: Option<Option<String>>,
    superuser: Option<bool>,
    inherit: Option<bool>,
    create_role: Option<bool>,
    create_db: Option<bool>,
    can_login: Option<bool>,
    replication: Option<bool>,
    bypass_rls: Option<bool>,
    connection_limit: Option<i32>,
    valid_until: Option<String>,
    /// ROLE / USER (CREATE) and ADD|DROP USER (ALTER GROUP): the members.
    role_members: Option<&'a pb::DefElem>,
    /// IN ROLE / IN GROUP: the roles the new role joins.
    add_role_to: Option<&'a pb::DefElem>,
    /// ADMIN: members WITH ADMIN OPTION.
    admin_members: Option<&'a pb::DefElem>,
}

fn bool_arg(de: &pb::DefElem) -> bool {
    match de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        Some(NodeEnum::Boolean(b)) => b.boolval,
        Some(NodeEnum::Integer(i)) => i.ival != 0,
        _ => true,
    }
}

fn int_arg(de: &pb::DefElem) -> i32 {
    match de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        Some(NodeEnum::Integer(i)) => i.ival,
        _ => 0,
    }
}

fn str_arg(de: &pb::DefElem) -> Option<String> {
    match de.arg.as_deref().and_then(|a| a.node.as_ref()) {
        Some(NodeEnum::String(s)) => Some(s.sval.clone()),
        _ => None,
    }
}

fn conflicting(de: &pb::DefElem) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options").with_position((de.location >= 0).then(|| de.location as u32 + 1))
}

impl<'a> Options<'a> {
    /// Reads the DefElems in order, as CreateRole and AlterRole do: a
    /// repeated option is an error at its second occurrence.
    fn parse(nodes: &'a [Node], s: &SqlSession, creating: bool) -> PgResult<Options<'a>> {
        let mut o = Options::default();
        let mut seen: Vec<&str> = Vec::new();
        for n in nodes {
            let Some(NodeEnum::DefElem(de)) = &n.node else { continue };
            let name = de.defname.as_str();
            if name == "sysid" {
                notice(s, "SYSID can no longer be specified".into());
                continue;
            }
            if seen.contains(&name) {
                return Err(conflicting(de));
            }
            seen.push(name);
            match name {
                "password" => o.password = Some(str_arg(de)),
                "superuser" => o.superuser = Some(bool_arg(de)),
                "inherit" => o.inherit = Some(bool_arg(de)),
                "createrole" => o.create_role = Some(bool_arg(de)),
                "createdb" => o.create_db = Some(bool_arg(de)),
                "canlogin" => o.can_login = Some(bool_arg(de)),
                "isreplication" => o.replication = Some(bool_arg(de)),
                "bypassrls" => o.bypass_rls = Some(bool_arg(de)),
                "connectionlimit" => o.connection_limit = Some(int_arg(de)),
                "validUntil" => o.valid_until = str_arg(de),
                "rolemembers" => o.role_members = Some(de),
                "addroleto" if creating => o.add_role_to = Some(de),
                "adminmembers" if creating => o.admin_members = Some(de),
                other => return Err(PgError::internal(format!("option \"{other}\" not recognized"))),
            }
        }
        if let Some(limit) = o.connection_limit {
            if limit < -1 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid connection limit: {limit}")));
            }
        }
        Ok(o)
    }
}

/// The cluster catalog as this transaction sees it, after taking the
/// locks `keys` (in order): the DDL that held them has committed, and its
/// rows are read.
fn locked_catalog(s: &SqlSession, keys: &[Vec<u8>]) -> PgResult<ClusterCatalog> {
    let txn = s.txn()?;
    for k in keys {
        txn.get_for_update(k)?;
    }
    txn.refresh_statement_snapshot();
    store::load_cluster(txn)
}

/// The session's current role as this transaction sees it.
fn current_role<'c>(cat: &'c ClusterCatalog, s: &SqlSession) -> PgResult<&'c Role> {
    cat.role_by_name(&s.user).ok_or_else(|| does_not_exist(&s.user))
}

/// PostgreSQL's have_createrole_privilege: CREATEROLE, or superuser.
fn has_createrole(role: &Role) -> bool {
    role.superuser || role.create_role
}

fn parse_valid_until(s: &SqlSession, text: &str) -> PgResult<i64> {
    let settings = s.settings.borrow();
    tusk_types::datetime::timestamptz_in(text, -1, &settings.datetime, s.stmt_start.get())
}

/// The verifier to store for PASSWORD 'x', or None (with PostgreSQL's
/// NOTICE) for an empty password or a verifier of the empty password.
fn shadow_password(s: &SqlSession, role: &str, password: &str) -> PgResult<Option<String>> {
    if password.is_empty() || plain_password_matches(role, password, "") {
        notice(s, "empty string is not a valid password, clearing password".into());
        return Ok(None);
    }
    let method = s.settings.borrow().show("password_encryption").unwrap_or_else(|_| "scram-sha-256".into());
    Ok(Some(encrypt_password(&method, role, password)))
}

/// CREATE ROLE / CREATE USER / CREATE GROUP.
pub fn create_role(s: &mut SqlSession, stmt: &pb::CreateRoleStmt) -> PgResult<()> {
    let o = Options::parse(&stmt.options, s, true)?;
    let name = stmt.role.as_str();
    let cat = locked_catalog(s, &[store::role_name_key(name)])?;
    let me = current_role(&cat, s)?;
    if o.superuser == Some(true) {
        if !me.superuser {
            return Err(denied("must be superuser to create superusers"));
        }
    } else if o.replication == Some(true) {
        if !me.superuser {
            return Err(denied("must be superuser to create replication users"));
        }
    } else if o.bypass_rls == Some(true) {
        if !me.superuser {
            return Err(denied("must be superuser to create bypassrls users"));
        }
    } else if !has_createrole(me) {
        return Err(denied("permission denied to create role"));
    }
    if is_reserved(name) {
        return Err(reserved(name, RESERVED_DETAIL));
    }
    if cat.role_by_name(name).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("role \"{name}\" already exists")));
    }
    let valid_until = o.valid_until.as_deref().map(|t| parse_valid_until(s, t)).transpose()?;
    let mut role = Role::new(store::new_oid(&s.cluster.engine)?, name);
    // CREATE USER is CREATE ROLE ... LOGIN.
    role.can_login = o.can_login.unwrap_or(stmt.stmt_type == pb::RoleStmtType::RolestmtUser as i32);
    role.superuser = o.superuser.unwrap_or(false);
    role.inherit = o.inherit.unwrap_or(true);
    role.create_role = o.create_role.unwrap_or(false);
    role.create_db = o.create_db.unwrap_or(false);
    role.replication = o.replication.unwrap_or(false);
    role.bypass_rls = o.bypass_rls.unwrap_or(false);
    role.connection_limit = o.connection_limit.unwrap_or(-1);
    role.valid_until = valid_until;
    if let Some(Some(password)) = &o.password {
        role.password = shadow_password(s, name, password)?;
    }
    let txn = s.txn()?;
    // Writing the name (not only locking it) makes a REPEATABLE READ
    // transaction that read the roles before this one committed fail with
    // 40001 instead of creating the name twice.
    txn.put(&store::role_name_key(name), &role.oid.to_be_bytes())?;
    store::put_role(txn, &role)?;
    s.cluster_changed = true;
    // CreateRole's order: the roles it joins, then ADMIN, then ROLE members.
    if o.add_role_to.is_some() || o.admin_members.is_some() || o.role_members.is_some() {
        let mut m = Memberships::lock(s)?;
        m.cat.roles.insert(role.oid, role.clone());
        let grantor = m.me;
        let new_member = [(role.oid, role.name.clone())];
        for spec in spec_list(o.add_role_to) {
            let target = lookup_spec(&m.cat, s, &spec)?.oid;
            m.add(s, target, &new_member, grantor, false)?;
        }
        let admins = resolve_specs(&m.cat, s, &spec_list(o.admin_members))?;
        m.add(s, role.oid, &admins, grantor, true)?;
        let members = resolve_specs(&m.cat, s, &spec_list(o.role_members))?;
        m.add(s, role.oid, &members, grantor, false)?;
        m.write(s)?;
    }
    Ok(())
}

/// The RoleSpecs of a role-list option (IN ROLE, ROLE, ADMIN, ADD USER).
fn spec_list(de: Option<&pb::DefElem>) -> Vec<Spec> {
    let Some(Some(NodeEnum::List(l))) = de.and_then(|d| d.arg.as_deref()).map(|a| a.node.as_ref()) else { return Vec::new() };
    l.items
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::RoleSpec(rs)) => Some(role_spec(rs)),
            _ => None,
        })
        .collect()
}

/// roleSpecsToIds: each role with its name (for messages).
fn resolve_specs(cat: &ClusterCatalog, s: &SqlSession, specs: &[Spec]) -> PgResult<Vec<(Oid, String)>> {
    specs.iter().map(|spec| lookup_spec(cat, s, spec).map(|r| (r.oid, r.name.clone()))).collect()
}

/// The role a RoleSpec names, as get_rolespec_tuple finds it.
fn lookup_spec<'c>(cat: &'c ClusterCatalog, s: &SqlSession, spec: &Spec) -> PgResult<&'c Role> {
    match spec {
        Spec::Name(n) => cat.role_by_name(n).ok_or_else(|| does_not_exist(n)),
        Spec::CurrentUser => cat.role_by_name(&s.user).ok_or_else(|| does_not_exist(&s.user)),
        Spec::SessionUser => cat.role_by_name(&s.session_user).ok_or_else(|| does_not_exist(&s.session_user)),
        Spec::Public => Err(does_not_exist("public")),
    }
}

/// ALTER ROLE / ALTER USER / ALTER GROUP ... ADD|DROP USER.
pub fn alter_role(s: &mut SqlSession, stmt: &pb::AlterRoleStmt) -> PgResult<()> {
    let Some(rs) = &stmt.role else { return Err(PgError::internal("ALTER ROLE without a role")) };
    let spec = role_spec(rs);
    if let Spec::Name(n) = &spec {
        if is_reserved(n) {
            return Err(reserved(n, "Cannot alter reserved roles."));
        }
    }
    let o = Options::parse(&stmt.options, s, false)?;
    // Lock the role's row, then read it as committed by whoever held it.
    let cat = s.cluster_catalog();
    let oid = lookup_spec(&cat, s, &spec).map(|r| r.oid).ok();
    let keys: Vec<Vec<u8>> = oid.map(store::role_key).into_iter().collect();
    let cat = locked_catalog(s, &keys)?;
    let role = lookup_spec(&cat, s, &spec)?.clone();
    let me = current_role(&cat, s)?;
    if role.superuser || o.superuser.is_some() {
        if !me.superuser {
            return Err(denied("must be superuser to alter superuser roles or change superuser attribute"));
        }
    } else if role.replication || o.replication.is_some() {
        if !me.superuser {
            return Err(denied("must be superuser to alter replication roles or change replication attribute"));
        }
    } else if o.bypass_rls.is_some() {
        if !me.superuser {
            return Err(denied("must be superuser to change bypassrls attribute"));
        }
    } else if !has_createrole(me) {
        // Without CREATEROLE, a role may only change its own password.
        let others = o.inherit.is_some()
            || o.create_role.is_some()
            || o.create_db.is_some()
            || o.can_login.is_some()
            || o.connection_limit.is_some()
            || o.role_members.is_some()
            || o.valid_until.is_some();
        if others || o.password.is_none() || role.oid != me.oid {
            return Err(denied("permission denied"));
        }
    }
    let valid_until = o.valid_until.as_deref().map(|t| parse_valid_until(s, t)).transpose()?;
    let mut new = role.clone();
    if let Some(sup) = o.superuser {
        if !sup && role.oid == crate::catalog::BOOTSTRAP_SUPERUSER {
            return Err(denied("permission denied: bootstrap user must be superuser"));
        }
        new.superuser = sup;
    }
    if let Some(v) = o.inherit {
        new.inherit = v;
    }
    if let Some(v) = o.create_role {
        new.create_role = v;
    }
    if let Some(v) = o.create_db {
        new.create_db = v;
    }
    if let Some(v) = o.can_login {
        new.can_login = v;
    }
    if let Some(v) = o.replication {
        new.replication = v;
    }
    if let Some(v) = o.connection_limit {
        new.connection_limit = v;
    }
    match &o.password {
        Some(Some(password)) => new.password = shadow_password(s, &role.name, password)?,
        Some(None) => new.password = None,
        None => {}
    }
    if valid_until.is_some() {
        new.valid_until = valid_until;
    }
    if let Some(v) = o.bypass_rls {
        new.bypass_rls = v;
    }
    store::put_role(s.txn()?, &new)?;
    s.cluster_changed = true;
    // ALTER GROUP g ADD USER u / DROP USER u.
    if o.role_members.is_some() {
        let mut m = Memberships::lock(s)?;
        m.cat.roles.insert(new.oid, new.clone());
        let members = resolve_specs(&m.cat, s, &spec_list(o.role_members))?;
        let grantor = m.me;
        if stmt.action > 0 {
            m.add(s, new.oid, &members, grantor, false)?;
        } else {
            m.delete(s, new.oid, &members, false)?;
        }
        m.write(s)?;
    }
    Ok(())
}

/// ALTER ROLE ... SET / RESET (pg_db_role_setting).
pub fn alter_role_set(_s: &mut SqlSession, _stmt: &pb::AlterRoleSetStmt) -> PgResult<()> {
    Err(PgError::unsupported("ALTER ROLE ... SET"))
}

// ---------------------------------------------------------------- membership

/// Changes of role membership (pg_auth_members), made on a copy of the
/// cluster catalog read after taking the membership lock, so that the
/// checks of a later member in the same statement see the earlier ones;
/// `write` stores the member rows that changed.
struct Memberships {
    cat: ClusterCatalog,
    /// The current user (GetUserId()): the grantor unless GRANTED BY.
    me: Oid,
    session_user: Oid,
    changed: Vec<Oid>,
}

impl Memberships {
    fn lock(s: &SqlSession) -> PgResult<Memberships> {
        let cat = locked_catalog(s, &[store::role_membership_key()])?;
        let me = current_role(&cat, s)?.oid;
        let session_user = cat.role_by_name(&s.session_user).map_or(me, |r| r.oid);
        Ok(Memberships { cat, me, session_user, changed: Vec::new() })
    }

    /// The checks AddRoleMems and DelRoleMems make before touching rows:
    /// superuser roles need a superuser; others CREATEROLE, or the admin
    /// option held by `actor` (the grantor when granting).
    fn check_may_change(&self, role: Oid, actor: Oid) -> PgResult<()> {
        let me = &self.cat.roles[&self.me];
        let target = &self.cat.roles[&role];
        if target.superuser {
            if !me.superuser {
                return Err(denied("must be superuser to alter superusers"));
            }
        } else if !has_createrole(me) && !self.cat.is_admin_of_role(actor, role, self.session_user) {
            return Err(denied(&format!("must have admin option on role \"{}\"", target.name)));
        }
        Ok(())
    }

    /// AddRoleMems: makes each of `members` a member of `role`.
    fn add(&mut self, s: &SqlSession, role: Oid, members: &[(Oid, String)], grantor: Oid, admin: bool) -> PgResult<()> {
        if members.is_empty() {
            return Ok(());
        }
        self.check_may_change(role, grantor)?;
        let role_name = self.cat.role_name(role);
        if role == acl::PG_DATABASE_OWNER {
            // PostgreSQL 15 raises these two without an error code (XX000).
            return Err(PgError::internal(format!("role \"{role_name}\" cannot have explicit members")));
        }
        if grantor != self.me && !self.cat.is_superuser(self.me) {
            return Err(denied("must be superuser to set grantor"));
        }
        for (member, member_name) in members {
            if *member == acl::PG_DATABASE_OWNER {
                return Err(PgError::internal(format!("role \"{member_name}\" cannot be a member of any role")));
            }
            // A membership loop would make every role in it hold the
            // others' privileges through itself.
            if self.cat.is_member_of_role_nosuper(role, *member, None) {
                return Err(PgError::new(sqlstate::INVALID_GRANT_OPERATION, format!("role \"{role_name}\" is a member of role \"{member_name}\"")));
            }
            let row = self.cat.roles.get_mut(member).expect("members were looked up in this catalog");
            match row.member_of.iter_mut().find(|m| m.role == role) {
                Some(m) if !admin || m.admin_option => {
                    notice(s, format!("role \"{member_name}\" is already a member of role \"{role_name}\""));
                    continue;
                }
                Some(m) => {
                    m.admin_option = true;
                    m.grantor = grantor;
                }
                None => row.member_of.push(Membership { role, grantor, admin_option: admin }),
            }
            self.changed.push(*member);
        }
        Ok(())
    }

    /// DelRoleMems: ends each membership, or with `admin_only` only its
    /// ADMIN OPTION.
    fn delete(&mut self, s: &SqlSession, role: Oid, members: &[(Oid, String)], admin_only: bool) -> PgResult<()> {
        if members.is_empty() {
            return Ok(());
        }
        self.check_may_change(role, self.me)?;
        let role_name = self.cat.role_name(role);
        for (member, member_name) in members {
            let row = self.cat.roles.get_mut(member).expect("members were looked up in this catalog");
            let Some(i) = row.member_of.iter().position(|m| m.role == role) else {
                s.notices.borrow_mut().push(PgError::warning(format!("role \"{member_name}\" is not a member of role \"{role_name}\"")));
                continue;
            };
            if admin_only {
                row.member_of[i].admin_option = false;
            } else {
                row.member_of.remove(i);
            }
            self.changed.push(*member);
        }
        Ok(())
    }

    fn write(self, s: &mut SqlSession) -> PgResult<()> {
        let txn = s.txn()?;
        for oid in &self.changed {
            store::put_role(txn, &self.cat.roles[oid])?;
        }
        if !self.changed.is_empty() {
            s.cluster_changed = true;
        }
        Ok(())
    }
}

/// GRANT role [, ...] TO role [, ...] [WITH ADMIN OPTION] [GRANTED BY role]
/// and REVOKE [ADMIN OPTION FOR] role [, ...] FROM role [, ...] (GrantRole).
pub fn grant_role(s: &mut SqlSession, stmt: &pb::GrantRoleStmt) -> PgResult<()> {
    let mut m = Memberships::lock(s)?;
    let grantor = match &stmt.grantor {
        Some(rs) => lookup_spec(&m.cat, s, &role_spec(rs))?.oid,
        None => m.me,
    };
    let grantee_specs: Vec<Spec> = stmt
        .grantee_roles
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::RoleSpec(rs)) => Some(role_spec(rs)),
            _ => None,
        })
        .collect();
    let grantees = resolve_specs(&m.cat, s, &grantee_specs)?;
    for n in &stmt.granted_roles {
        let Some(NodeEnum::AccessPriv(ap)) = &n.node else { continue };
        if !ap.cols.is_empty() {
            return Err(PgError::new(sqlstate::INVALID_GRANT_OPERATION, "column names cannot be included in GRANT/REVOKE ROLE"));
        }
        let role = m.cat.role_by_name(&ap.priv_name).map(|r| r.oid).ok_or_else(|| does_not_exist(&ap.priv_name))?;
        if stmt.is_grant {
            m.add(s, role, &grantees, grantor, stmt.admin_opt)?;
        } else {
            m.delete(s, role, &grantees, stmt.admin_opt)?;
        }
    }
    m.write(s)
}

/// DROP ROLE takes the dropped role out of every other role's memberships.
fn forget_memberships_in(s: &mut SqlSession, role: Oid) -> PgResult<()> {
    let mut m = Memberships::lock(s)?;
    for (oid, r) in m.cat.roles.iter_mut() {
        let before = r.member_of.len();
        r.member_of.retain(|x| x.role != role);
        if r.member_of.len() != before {
            m.changed.push(*oid);
        }
    }
    m.write(s)
}

/// DROP ROLE [IF EXISTS] name [, ...].
pub fn drop_role(s: &mut SqlSession, stmt: &pb::DropRoleStmt) -> PgResult<()> {
    {
        let cat = s.cluster_catalog();
        let me = current_role(&cat, s)?;
        if !has_createrole(me) {
            return Err(denied("permission denied to drop role"));
        }
    }
    for n in &stmt.roles {
        let Some(NodeEnum::RoleSpec(rs)) = &n.node else { continue };
        let Spec::Name(name) = role_spec(rs) else {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot use special role specifier in DROP ROLE"));
        };
        let committed = s.cluster_catalog();
        let mut keys = vec![store::role_name_key(&name)];
        if let Some(r) = committed.role_by_name(&name) {
            keys.push(store::role_key(r.oid));
        }
        let cat = locked_catalog(s, &keys)?;
        let Some(role) = cat.role_by_name(&name).cloned() else {
            if stmt.missing_ok {
                notice(s, format!("role \"{name}\" does not exist, skipping"));
                continue;
            }
            return Err(does_not_exist(&name));
        };
        if role.name == s.user {
            return Err(PgError::new(sqlstate::OBJECT_IN_USE, "current user cannot be dropped"));
        }
        if role.name == s.session_user {
            return Err(PgError::new(sqlstate::OBJECT_IN_USE, "session user cannot be dropped"));
        }
        if role.superuser && !current_role(&cat, s)?.superuser {
            return Err(denied("must be superuser to drop superusers"));
        }
        if role.is_pinned() {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop role {} because it is required by the database system", role.name),
            ));
        }
        if let Some(detail) = super::owned::shared_dependency_report(s, role.oid)? {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("role \"{}\" cannot be dropped because some objects depend on it", role.name),
            )
            .with_detail(detail));
        }
        forget_memberships_in(s, role.oid)?;
        store::put_comment(s.txn()?, store::SHARED_COMMENTS_DB, 1260, role.oid, 0, None)?;
        store::delete_role(s.txn()?, role.oid)?;
        s.txn()?.delete(&store::role_name_key(&role.name))?;
        s.cluster_changed = true;
    }
    Ok(())
}

/// ALTER ROLE name RENAME TO newname.
pub fn rename_role(s: &mut SqlSession, stmt: &pb::RenameStmt) -> PgResult<()> {
    let old = stmt.subname.as_str();
    let new = stmt.newname.as_str();
    let committed = s.cluster_catalog();
    let mut keys = vec![store::role_name_key(old), store::role_name_key(new)];
    keys.sort();
    if let Some(r) = committed.role_by_name(old) {
        keys.push(store::role_key(r.oid));
    }
    let cat = locked_catalog(s, &keys)?;
    let Some(role) = cat.role_by_name(old).cloned() else { return Err(does_not_exist(old)) };
    if role.name == s.session_user {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "session user cannot be renamed"));
    }
    if role.name == s.user {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "current user cannot be renamed"));
    }
    if is_reserved(&role.name) {
        return Err(reserved(&role.name, RESERVED_DETAIL));
    }
    if is_reserved(new) {
        return Err(reserved(new, RESERVED_DETAIL));
    }
    if cat.role_by_name(new).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("role \"{new}\" already exists")));
    }
    let me = current_role(&cat, s)?;
    if role.superuser {
        if !me.superuser {
            return Err(denied("must be superuser to rename superusers"));
        }
    } else if !has_createrole(me) {
        return Err(denied("permission denied to rename role"));
    }
    let mut renamed = role.clone();
    renamed.name = new.to_string();
    // An md5 verifier is salted with the role name: it cannot survive.
    if renamed.password.as_deref().is_some_and(|p| password_type(p) == PasswordType::Md5) {
        renamed.password = None;
        notice(s, "MD5 password cleared because of role rename".into());
    }
    let txn = s.txn()?;
    txn.delete(&store::role_name_key(old))?;
    txn.put(&store::role_name_key(new), &renamed.oid.to_be_bytes())?;
    store::put_role(txn, &renamed)?;
    s.cluster_changed = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scram_secret_round_trips_and_verifies() {
        // RFC 7677's example: user "user", password "pencil".
        let salt = b64_decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let secret = scram_secret_with("pencil", &salt, 4096);
        let parsed = parse_scram_secret(&secret).unwrap();
        assert_eq!(parsed.iterations, 4096);
        assert_eq!(parsed.salt, salt);
        // ServerSignature of the RFC's exchange checks the ServerKey.
        let auth = "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let sig = hmac_sha256(&parsed.server_key, &[auth.as_bytes()]);
        assert_eq!(b64_encode(&sig), "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        assert!(plain_password_matches("user", &secret, "pencil"));
        assert!(!plain_password_matches("user", &secret, "pencil2"));
        assert_eq!(password_type(&secret), PasswordType::ScramSha256);
    }

    #[test]
    fn password_types_as_postgres_guesses_them() {
        // PostgreSQL 15 stores md5 + md5("pw9" || "c9") for role c9.
        assert_eq!(md5_encrypt(b"pw9", b"c9"), "md58182b6140796287a5dbaa1a0779b21d1");
        assert_eq!(password_type("md58182b6140796287a5dbaa1a0779b21d1"), PasswordType::Md5);
        assert_eq!(password_type("md58182B6140796287a5dbaa1a0779b21d1"), PasswordType::Plaintext);
        assert_eq!(password_type("md5abc"), PasswordType::Plaintext);
        // Keys must be 32 bytes: PostgreSQL hashed this one as a password.
        assert_eq!(password_type("SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy"), PasswordType::Plaintext);
        let real = "SCRAM-SHA-256$4096:V8vV8/KAdS4qUznwx9ZyMA==$B7PTtGrJ33VpEvO4p8WFXjHM5rertjwnQpBQ1GC0mpM=:mdDcqfY8xOX67u6rv6MhrgKgTVkdToiepi+Tx48dDZc=";
        assert_eq!(password_type(real), PasswordType::ScramSha256);
        assert_eq!(encrypt_password("md5", "x", real), real);
        assert!(plain_password_matches("c9", "md58182b6140796287a5dbaa1a0779b21d1", "pw9"));
        assert!(!plain_password_matches("c9", "pw9", "pw9"));
    }
}
