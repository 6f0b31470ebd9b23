//! What publications require of the tables they publish: PostgreSQL's
//! CheckCmdReplicaIdentity, which refuses an UPDATE or DELETE that a
//! publication would have to replicate without a usable replica identity.
//! The executor asks before it changes a row (CheckValidResultRel does it
//! when the statement starts, whether or not any row changes).

use tusk_types::{sqlstate, PgError, PgResult};

use super::*;

/// CheckCmdReplicaIdentity: an UPDATE or DELETE of a table that a
/// publication publishing that action covers needs a replica identity
/// that the publication's row filter and column list respect.
pub fn check_replica_identity(catalog: &DbCatalog, rel: &Relation, delete: bool) -> PgResult<()> {
    if catalog.publications.is_empty() || rel.kind != RelKind::Table || rel.persistence != 'p' || rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return Ok(());
    }
    let verb = if delete { "delete from" } else { "update" };
    let mut publishes = false;
    let identity = replica_identity_columns(catalog, rel);
    for p in catalog.publications.values() {
        if !p.publishes(rel) || !(if delete { p.delete } else { p.update }) {
            continue;
        }
        publishes = true;
        let member = p.tables.iter().find(|t| t.relid == rel.oid);
        let full = rel.replica_identity() == 'f';
        if let Some(q) = member.and_then(|m| m.qual.as_deref()) {
            if !full && crate::catalog::depend::columns_read(rel, q).iter().any(|a| !identity.contains(a)) {
                return Err(PgError::new(sqlstate::INVALID_COLUMN_REFERENCE, format!("cannot {verb} table \"{}\"", rel.name))
                    .with_detail("Column used in the publication WHERE expression is not part of the replica identity."));
            }
        }
        if let Some(cols) = member.and_then(|m| m.columns.as_ref()) {
            if full || identity.iter().any(|a| !cols.contains(a)) {
                return Err(PgError::new(sqlstate::INVALID_COLUMN_REFERENCE, format!("cannot {verb} table \"{}\"", rel.name))
                    .with_detail("Column list used by the publication does not cover the replica identity."));
            }
        }
    }
    if !publishes {
        return Ok(());
    }
    let has_identity = match rel.replica_identity() {
        'f' => true,
        'n' => false,
        'i' => rel.indexes.iter().filter_map(|i| catalog.relations.get(i)).any(|i| i.index.as_ref().is_some_and(|x| x.replica_identity)),
        _ => rel.primary_key().is_some(),
    };
    if has_identity {
        return Ok(());
    }
    let (what, action) = if delete { ("deleting from", "deletes") } else { ("updating", "updates") };
    Err(PgError::new(
        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("cannot {verb} table \"{}\" because it does not have a replica identity and publishes {action}", rel.name),
    )
    .with_hint(format!("To enable {what} the table, set REPLICA IDENTITY using ALTER TABLE.")))
}

/// The columns of the table's replica identity key (none for FULL, which
/// covers every column, and for NOTHING).
fn replica_identity_columns(catalog: &DbCatalog, rel: &Relation) -> Vec<i16> {
    let index = match rel.replica_identity() {
        'i' => rel.indexes.iter().filter_map(|i| catalog.relations.get(i)).find(|i| i.index.as_ref().is_some_and(|x| x.replica_identity)),
        'd' => rel.primary_key().and_then(|k| catalog.relations.get(&k.index)),
        _ => None,
    };
    index.and_then(|i| i.index.as_ref()).map(|x| x.keys.iter().map(|k| k.attnum).filter(|&a| a > 0).collect()).unwrap_or_default()
}
