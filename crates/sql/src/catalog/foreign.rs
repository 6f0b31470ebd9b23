//! SQL/MED objects as PostgreSQL keeps them: foreign-data wrappers
//! (pg_foreign_data_wrapper), foreign servers (pg_foreign_server) and user
//! mappings (pg_user_mapping), per database, with their generic options.
//!
//! Tusk implements no wrapper: these objects are catalog entries that
//! clients create, alter, grant, describe and drop as in PostgreSQL, and a
//! scan through one fails as it does for a wrapper without a handler.
//!
//! Keys (after the `C` prefix byte): `F` db class oid → the JSON row, where
//! class is the pg_class OID of the catalog the row belongs to.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tusk_types::{Oid, PgResult};

use super::acl::AclItem;

/// pg_class.oid of the SQL/MED catalogs (ObjectAddress.classId).
pub const PG_FOREIGN_DATA_WRAPPER: Oid = 2328;
pub const PG_FOREIGN_SERVER: Oid = 1417;
pub const PG_USER_MAPPING: Oid = 1418;
pub const PG_FOREIGN_TABLE: Oid = 3118;

/// The built-in validator of PostgreSQL's old libpq-based wrappers.
pub const POSTGRESQL_FDW_VALIDATOR: Oid = 2316;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ForeignDataWrapper {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    /// fdwhandler; 0 = none.
    pub handler: Oid,
    /// fdwvalidator; 0 = none.
    pub validator: Oid,
    /// fdwacl; None = the default privileges (the owner's alone).
    pub acl: Option<Vec<AclItem>>,
    /// fdwoptions as `name=value` items; None when never given.
    pub options: Option<Vec<String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ForeignServer {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub fdw: Oid,
    /// srvtype
    pub server_type: Option<String>,
    /// srvversion
    pub version: Option<String>,
    pub acl: Option<Vec<AclItem>>,
    pub options: Option<Vec<String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UserMapping {
    pub oid: Oid,
    /// umuser; 0 = PUBLIC.
    pub user: Oid,
    pub server: Oid,
    pub options: Option<Vec<String>>,
}

/// A database's SQL/MED objects.
#[derive(Clone, Debug, Default)]
pub struct ForeignCatalog {
    pub wrappers: BTreeMap<Oid, ForeignDataWrapper>,
    pub servers: BTreeMap<Oid, ForeignServer>,
    pub user_mappings: BTreeMap<Oid, UserMapping>,
}

impl ForeignCatalog {
    pub fn wrapper_by_name(&self, name: &str) -> Option<&ForeignDataWrapper> {
        self.wrappers.values().find(|w| w.name == name)
    }

    pub fn server_by_name(&self, name: &str) -> Option<&ForeignServer> {
        self.servers.values().find(|s| s.name == name)
    }

    /// The mapping of `user` (0 = PUBLIC) for `server`, exactly.
    pub fn user_mapping(&self, user: Oid, server: Oid) -> Option<&UserMapping> {
        self.user_mappings.values().find(|m| m.user == user && m.server == server)
    }
}

/// Splits a stored `name=value` option (the value may contain `=`).
pub fn split_option(item: &str) -> (&str, &str) {
    item.split_once('=').unwrap_or((item, ""))
}

fn key(db: Oid, class: Oid, oid: Oid) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::CATALOG_PREFIX, b'F'];
    for p in [db, class, oid] {
        k.extend_from_slice(&p.to_be_bytes());
    }
    k
}

/// The key prefix of one database's SQL/MED rows (DROP DATABASE removes it).
pub fn database_prefix(db: Oid) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::CATALOG_PREFIX, b'F'];
    k.extend_from_slice(&db.to_be_bytes());
    k
}

pub fn put_wrapper(txn: &tusk_storage::Txn, db: Oid, w: &ForeignDataWrapper) -> PgResult<()> {
    txn.put(&key(db, PG_FOREIGN_DATA_WRAPPER, w.oid), &super::store::encode(w))
}

pub fn put_server(txn: &tusk_storage::Txn, db: Oid, s: &ForeignServer) -> PgResult<()> {
    txn.put(&key(db, PG_FOREIGN_SERVER, s.oid), &super::store::encode(s))
}

pub fn put_user_mapping(txn: &tusk_storage::Txn, db: Oid, m: &UserMapping) -> PgResult<()> {
    txn.put(&key(db, PG_USER_MAPPING, m.oid), &super::store::encode(m))
}

pub fn delete(txn: &tusk_storage::Txn, db: Oid, class: Oid, oid: Oid) -> PgResult<()> {
    txn.delete(&key(db, class, oid))
}

/// A name lock key for an object of `class` (serializes CREATE and RENAME
/// of one name; the name is re-checked against the catalog after it).
pub fn name_lock_key(db: Oid, class: Oid, name: &str) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::LOCK_PREFIX, b'F'];
    k.extend_from_slice(&db.to_be_bytes());
    k.extend_from_slice(&class.to_be_bytes());
    k.extend_from_slice(name.as_bytes());
    k
}

pub fn load(txn: &tusk_storage::Txn, db: Oid) -> PgResult<ForeignCatalog> {
    let mut out = ForeignCatalog::default();
    for (k, v) in super::store::scan_prefix(txn, &database_prefix(db))? {
        let class = u32::from_be_bytes(k[6..10].try_into().expect("4 bytes"));
        match class {
            PG_FOREIGN_DATA_WRAPPER => {
                let w: ForeignDataWrapper = super::store::decode(&v)?;
                out.wrappers.insert(w.oid, w);
            }
            PG_FOREIGN_SERVER => {
                let s: ForeignServer = super::store::decode(&v)?;
                out.servers.insert(s.oid, s);
            }
            PG_USER_MAPPING => {
                let m: UserMapping = super::store::decode(&v)?;
                out.user_mappings.insert(m.oid, m);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// What reading or writing a foreign table answers: PostgreSQL asks the
/// wrapper's handler for its routines (GetFdwRoutineByRelId), and a wrapper
/// without one cannot scan; Tusk runs no handler at all.
pub fn scan_error(cat: &super::DbCatalog, rel: &super::Relation) -> tusk_types::PgError {
    use tusk_types::{sqlstate, PgError};
    let fdw = rel.foreign.as_ref().and_then(|f| cat.foreign.servers.get(&f.server)).and_then(|s| cat.foreign.wrappers.get(&s.fdw));
    match fdw {
        Some(w) if w.handler == 0 => {
            PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("foreign-data wrapper \"{}\" has no handler", w.name))
        }
        _ => PgError::unsupported("foreign-data wrapper handlers"),
    }
}
