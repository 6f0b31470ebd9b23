//! Catalog rows in storage: how databases, roles, schemas, relations and
//! comments are keyed and serialized, read back, and first created.
//!
//! Keys (after the `C` prefix byte):
//!   `d` db                  → Database       `a` role → Role
//!   `n` db nsp              → Namespace      `r` db rel → Relation
//!   `N` db nsp name         → relation oid (unique names; DDL locks this key)
//!   `m` db class obj sub    → comment text
//!   `p` db pub              → Publication (with its members)
//!   `s` db sub              → Subscription
//!   `f` db func             → Function (user-defined pg_proc rows)
//!   `F` db nsp name         → never written: locked to serialize DDL on
//!                               a function name
//!   `A` name                → role oid: written by role DDL (the roles of
//!                               the bootstrap lack it) and locked by it, so
//!                               that DDL on one role name is serialized
//!   `D` name                → never written: locked to serialize DDL on
//!                               database names
//!   `O` db class oid        → user-defined operators, aggregates, casts
//!                               (see `operator`)
//!   `t` db type             → user types that are not row types (domains)
//!   `x` mock_auth_nonce      → the secret of mock SCRAM salts
//! Values are JSON: catalog rows are few and small, and readable dumps help
//! when something goes wrong.

use serde::de::DeserializeOwned;
use serde::Serialize;
use tusk_storage::keys::CATALOG_PREFIX;
use tusk_storage::{Engine, KeyValue, Txn};
use tusk_types::oid::FIRST_NORMAL_OBJECT_ID;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::*;

fn key(kind: u8, parts: &[u32]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + parts.len() * 4);
    k.push(CATALOG_PREFIX);
    k.push(kind);
    for p in parts {
        k.extend_from_slice(&p.to_be_bytes());
    }
    k
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("catalog rows always serialize")
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> PgResult<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid catalog row: {e}")))
}

/// All pairs under `prefix`, paging through the range.
pub fn scan_prefix(txn: &Txn, prefix: &[u8]) -> PgResult<Vec<KeyValue>> {
    let end = tusk_storage::keys::prefix_end(prefix);
    let mut out = Vec::new();
    let mut lower = prefix.to_vec();
    loop {
        let batch = txn.scan(&lower, &end, false, 1024)?;
        let n = batch.len();
        if let Some((last, _)) = batch.last() {
            lower = last.to_vec();
            lower.push(0);
        }
        out.extend(batch);
        if n < 1024 {
            return Ok(out);
        }
    }
}

pub fn database_key(db: Oid) -> Vec<u8> {
    key(b'd', &[db])
}

pub fn role_key(role: Oid) -> Vec<u8> {
    key(b'a', &[role])
}

pub fn namespace_key(db: Oid, nsp: Oid) -> Vec<u8> {
    key(b'n', &[db, nsp])
}

pub fn relation_key(db: Oid, rel: Oid) -> Vec<u8> {
    key(b'r', &[db, rel])
}

pub fn publication_key(db: Oid, publication: Oid) -> Vec<u8> {
    key(b'p', &[db, publication])
}

pub fn subscription_key(db: Oid, subscription: Oid) -> Vec<u8> {
    key(b's', &[db, subscription])
}

pub fn put_publication(txn: &Txn, db: Oid, p: &Publication) -> PgResult<()> {
    txn.put(&publication_key(db, p.oid), &encode(p))
}

pub fn delete_publication(txn: &Txn, db: Oid, publication: Oid) -> PgResult<()> {
    txn.delete(&publication_key(db, publication))
}

pub fn function_key(db: Oid, func: Oid) -> Vec<u8> {
    key(b'f', &[db, func])
}

pub fn type_key(db: Oid, t: Oid) -> Vec<u8> {
    key(b't', &[db, t])
}

pub fn put_type(txn: &Txn, db: Oid, t: &types::StoredType) -> PgResult<()> {
    txn.put(&type_key(db, t.oid), &encode(t))
}

pub fn delete_type(txn: &Txn, db: Oid, t: Oid) -> PgResult<()> {
    txn.delete(&type_key(db, t))
}

pub fn put_function(txn: &Txn, db: Oid, f: &function::Function) -> PgResult<()> {
    txn.put(&function_key(db, f.oid), &encode(f))
}

pub fn delete_function(txn: &Txn, db: Oid, func: Oid) -> PgResult<()> {
    txn.delete(&function_key(db, func))
}

/// A key locked (never written) to serialize DDL on one function name of
/// a schema (CREATE OR REPLACE racing another CREATE).
pub fn function_name_key(db: Oid, nsp: Oid, name: &str) -> Vec<u8> {
    let mut k = key(b'F', &[db, nsp]);
    k.extend_from_slice(name.as_bytes());
    k
}

pub fn put_subscription(txn: &Txn, db: Oid, sub: &Subscription) -> PgResult<()> {
    txn.put(&subscription_key(db, sub.oid), &encode(sub))
}

pub fn delete_subscription(txn: &Txn, db: Oid, subscription: Oid) -> PgResult<()> {
    txn.delete(&subscription_key(db, subscription))
}

/// A key locked (never written) to serialize DDL on publication and
/// subscription names of a database (`kind` b'p' or b's').
pub fn pubsub_name_key(db: Oid, kind: u8, name: &str) -> Vec<u8> {
    let mut k = key(b'P', &[db, kind as u32]);
    k.extend_from_slice(name.as_bytes());
    k
}

pub fn name_key(db: Oid, nsp: Oid, name: &str) -> Vec<u8> {
    let mut k = key(b'N', &[db, nsp]);
    k.extend_from_slice(name.as_bytes());
    k
}

/// The database number under which comments on shared objects (roles,
/// databases: pg_shdescription) are stored.
pub const SHARED_COMMENTS_DB: Oid = 0;

pub fn comment_key(db: Oid, class: Oid, obj: Oid, sub: i32) -> Vec<u8> {
    key(b'm', &[db, class, obj, sub as u32])
}

/// The key that serializes changes of role membership: cycle checks read
/// every role's memberships, so two concurrent grants must not both pass.
pub fn role_membership_key() -> Vec<u8> {
    key(b'A', &[])
}

/// The key that serializes DDL on a role name (see the header).
pub fn role_name_key(name: &str) -> Vec<u8> {
    let mut k = key(b'A', &[]);
    k.extend_from_slice(name.as_bytes());
    k
}

/// A key locked (never written) to serialize DDL on database names.
pub fn database_name_key(name: &str) -> Vec<u8> {
    let mut k = key(b'D', &[]);
    k.extend_from_slice(name.as_bytes());
    k
}

/// The cluster's secret for mock SCRAM salts (PostgreSQL's mock_auth_nonce
/// in pg_control): made once, so a role that does not exist gets the same
/// salt every time, as a real one does.
pub fn mock_auth_nonce(engine: &std::sync::Arc<Engine>) -> PgResult<Vec<u8>> {
    let mut k = key(b'x', &[]);
    k.extend_from_slice(b"mock_auth_nonce");
    let txn = engine.begin(tusk_storage::Isolation::ReadCommitted, true);
    if let Some(v) = txn.get_for_update(&k)? {
        txn.rollback();
        return Ok(v);
    }
    let mut nonce = vec![0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut nonce);
    txn.put(&k, &nonce)?;
    txn.commit()?;
    Ok(nonce)
}

/// The next OID for a new object. OIDs are never reused; after a crash a
/// few may be skipped, as in PostgreSQL.
pub fn new_oid(engine: &Engine) -> PgResult<Oid> {
    let v = engine.next_counter(b"oid", FIRST_NORMAL_OBJECT_ID as u64, 64, false)?;
    Oid::try_from(v).map_err(|_| PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "OID counter wrapped around"))
}

/// A new storage id (key prefix) for relation data; never reused, so a
/// dropped relation's keys can be deleted lazily after commit.
pub fn new_storage_id(engine: &Engine) -> PgResult<u32> {
    let v = engine.next_counter(b"storage", 1, 64, false)?;
    u32::try_from(v).map_err(|_| PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "storage id counter wrapped around"))
}

pub fn load_cluster(txn: &Txn) -> PgResult<ClusterCatalog> {
    let mut cat = ClusterCatalog::default();
    for (_, v) in scan_prefix(txn, &key(b'd', &[]))? {
        let d: Database = decode(&v)?;
        cat.databases.insert(d.oid, d);
    }
    for (_, v) in scan_prefix(txn, &key(b'a', &[]))? {
        let r: Role = decode(&v)?;
        cat.roles.insert(r.oid, r);
    }
    // Shared comments are kept under database 0, which never exists.
    for (k, v) in scan_prefix(txn, &key(b'm', &[SHARED_COMMENTS_DB]))? {
        let part = |i: usize| u32::from_be_bytes(k[2 + i * 4..6 + i * 4].try_into().expect("4 bytes"));
        cat.shared_comments.insert((part(1), part(2)), String::from_utf8_lossy(&v).into_owned());
    }
    // The predefined roles are part of every cluster, not rows of it
    // (until a membership of theirs changes), with initdb's memberships.
    for &(oid, name) in PREDEFINED_ROLES {
        cat.roles.entry(oid).or_insert_with(|| {
            let mut r = Role::new(oid, name);
            for &(member, role) in PREDEFINED_MEMBERSHIPS.iter().filter(|(m, _)| *m == oid) {
                debug_assert_eq!(member, oid);
                r.member_of.push(Membership { role, grantor: BOOTSTRAP_SUPERUSER, admin_option: false });
            }
            r
        });
    }
    Ok(cat)
}

pub fn load_database(txn: &Txn, db: Oid) -> PgResult<DbCatalog> {
    let mut namespaces = Vec::new();
    for (_, v) in scan_prefix(txn, &key(b'n', &[db]))? {
        namespaces.push(decode::<Namespace>(&v)?);
    }
    let mut relations = Vec::new();
    for (_, v) in scan_prefix(txn, &key(b'r', &[db]))? {
        relations.push(decode::<Relation>(&v)?);
    }
    let mut comments = Vec::new();
    for (k, v) in scan_prefix(txn, &key(b'm', &[db]))? {
        let part = |i: usize| u32::from_be_bytes(k[2 + i * 4..6 + i * 4].try_into().expect("4 bytes"));
        comments.push(((part(1), part(2), part(3) as i32), String::from_utf8_lossy(&v).into_owned()));
    }
    let mut cat = DbCatalog::build(db, namespaces, relations, comments);
    for (_, v) in scan_prefix(txn, &key(b'p', &[db]))? {
        let p: Publication = decode(&v)?;
        cat.publications.insert(p.oid, p);
    }
    for (_, v) in scan_prefix(txn, &key(b's', &[db]))? {
        let sub: Subscription = decode(&v)?;
        cat.subscriptions.insert(sub.oid, sub);
    }
    cat.foreign = foreign::load(txn, db)?;
    let mut functions = Vec::new();
    for (_, v) in scan_prefix(txn, &key(b'f', &[db]))? {
        functions.push(decode::<function::Function>(&v)?);
    }
    cat.set_functions(functions);
    cat.user_ops = Arc::new(operator::load(txn, db)?);
    let mut stored = Vec::new();
    for (_, v) in scan_prefix(txn, &key(b't', &[db]))? {
        stored.push(decode::<types::StoredType>(&v)?);
    }
    cat.set_stored_types(stored);
    Ok(cat)
}

pub fn put_database(txn: &Txn, d: &Database) -> PgResult<()> {
    txn.put(&database_key(d.oid), &encode(d))
}

pub fn put_role(txn: &Txn, r: &Role) -> PgResult<()> {
    txn.put(&role_key(r.oid), &encode(r))
}

pub fn delete_role(txn: &Txn, role: Oid) -> PgResult<()> {
    txn.delete(&role_key(role))
}

pub fn put_namespace(txn: &Txn, db: Oid, ns: &Namespace) -> PgResult<()> {
    txn.put(&namespace_key(db, ns.oid), &encode(ns))
}

pub fn put_relation(txn: &Txn, db: Oid, rel: &Relation) -> PgResult<()> {
    txn.put(&relation_key(db, rel.oid), &encode(rel))
}

pub fn delete_relation(txn: &Txn, db: Oid, rel: &Relation) -> PgResult<()> {
    txn.delete(&relation_key(db, rel.oid))?;
    txn.delete(&name_key(db, rel.namespace, &rel.name))
}

pub fn put_comment(txn: &Txn, db: Oid, class: Oid, obj: Oid, sub: i32, text: Option<&str>) -> PgResult<()> {
    let k = comment_key(db, class, obj, sub);
    match text {
        Some(t) => txn.put(&k, t.as_bytes()),
        None => txn.delete(&k),
    }
}

/// Claims a relation name in a schema: locks the name (waiting for a
/// concurrent DDL on it to finish) and reports whether it was free.
pub fn claim_name(txn: &Txn, db: Oid, nsp: Oid, name: &str, oid: Oid) -> PgResult<bool> {
    let k = name_key(db, nsp, name);
    if txn.get_for_update(&k)?.is_some() {
        return Ok(false);
    }
    txn.put(&k, &oid.to_be_bytes())?;
    Ok(true)
}

pub fn release_name(txn: &Txn, db: Oid, nsp: Oid, name: &str) -> PgResult<()> {
    txn.delete(&name_key(db, nsp, name))
}

/// Namespaces every database starts with.
pub fn standard_namespaces(owner: Oid) -> Vec<Namespace> {
    vec![
        Namespace { oid: PG_CATALOG_NAMESPACE, name: "pg_catalog".into(), owner: BOOTSTRAP_SUPERUSER, temp_session: None, acl: None },
        Namespace { oid: PG_TOAST_NAMESPACE, name: "pg_toast".into(), owner: BOOTSTRAP_SUPERUSER, temp_session: None, acl: None },
        Namespace { oid: PUBLIC_NAMESPACE, name: "public".into(), owner, temp_session: None, acl: None },
        Namespace {
            oid: INFORMATION_SCHEMA_NAMESPACE,
            name: "information_schema".into(),
            owner: BOOTSTRAP_SUPERUSER,
            temp_session: None,
            acl: None,
        },
    ]
}

/// pg_database_owner, the owner of `public` in PostgreSQL 15.
pub const PG_DATABASE_OWNER: Oid = 6171;

pub fn new_database(oid: Oid, name: &str, owner: Oid) -> Database {
    Database {
        oid,
        name: name.to_string(),
        owner,
        encoding: "UTF8".into(),
        collate: "C.UTF-8".into(),
        ctype: "C.UTF-8".into(),
        is_template: name == "template1" || name == "template0",
        allow_connections: name != "template0",
        connection_limit: -1,
        acl: None,
    }
}

/// Creates the catalog of an empty data directory: the superuser role
/// `postgres` and the databases template1, template0 and postgres, with
/// PostgreSQL's OIDs for them.
pub fn bootstrap(txn: &Txn) -> PgResult<()> {
    let role = Role {
        oid: BOOTSTRAP_SUPERUSER,
        name: "postgres".into(),
        superuser: true,
        inherit: true,
        create_role: true,
        create_db: true,
        can_login: true,
        replication: true,
        bypass_rls: true,
        connection_limit: -1,
        password: None,
        valid_until: None,
        member_of: Vec::new(),
    };
    put_role(txn, &role)?;
    for (oid, name) in [(TEMPLATE1_DB, "template1"), (4, "template0"), (POSTGRES_DB, "postgres")] {
        create_database_rows(txn, &new_database(oid, name, BOOTSTRAP_SUPERUSER))?;
    }
    Ok(())
}

pub fn create_database_rows(txn: &Txn, d: &Database) -> PgResult<()> {
    put_database(txn, d)?;
    for ns in standard_namespaces(PG_DATABASE_OWNER) {
        put_namespace(txn, d.oid, &ns)?;
    }
    Ok(())
}

/// Removes every catalog row of a database (DROP DATABASE); returns the
/// storage ids whose data must be deleted after commit.
pub fn delete_database_rows(txn: &Txn, db: Oid) -> PgResult<Vec<u32>> {
    let mut storage = Vec::new();
    for kind in [b'n', b'r', b'N', b'm', b'p', b's'] {
        for (k, v) in scan_prefix(txn, &key(kind, &[db]))? {
            if kind == b'r' {
                let rel: Relation = decode(&v)?;
                if rel.storage_id != 0 {
                    storage.push(rel.storage_id);
                }
            }
            txn.delete(&k)?;
        }
    }
    for (k, _) in scan_prefix(txn, &foreign::database_prefix(db))? {
        txn.delete(&k)?;
    }
    for (k, _) in scan_prefix(txn, &operator::database_prefix(db))? {
        txn.delete(&k)?;
    }
    put_comment(txn, SHARED_COMMENTS_DB, 1262, db, 0, None)?;
    txn.delete(&database_key(db))?;
    Ok(storage)
}
