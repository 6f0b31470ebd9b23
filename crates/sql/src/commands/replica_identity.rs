//! ALTER TABLE ... REPLICA IDENTITY { DEFAULT | FULL | NOTHING | USING INDEX i }
//! (tablecmds.c's ATExecReplicaIdentity): which columns logical decoding
//! would log to identify an updated or deleted row. Tusk has no logical
//! decoding yet; the setting is checked as PostgreSQL checks it and kept in
//! the catalog (pg_class.relreplident, pg_index.indisreplident), where
//! clients such as psql's `\d` and pg_dump read it.

use tusk_types::{sqlstate, PgError, PgResult};

use crate::catalog::{DbCatalog, RelKind, Relation};

/// The relations to store after `table`'s replica identity becomes
/// `identity` ("d", "f", "n" or "i" with `index_name`): the table, and its
/// indexes whose indisreplident changes (relation_mark_replica_identity).
pub fn mark(catalog: &DbCatalog, table: &Relation, identity: &str, index_name: &str) -> PgResult<Vec<Relation>> {
    let code = identity.chars().next().unwrap_or('d');
    let chosen = if code == 'i' { Some(usable_index(catalog, table, index_name)?) } else { None };
    let mut out = Vec::new();
    let mut t = table.clone();
    t.replica_identity = code;
    out.push(t);
    for ix in catalog.indexes_of(table) {
        let Some(info) = &ix.index else { continue };
        let marked = Some(ix.oid) == chosen;
        if info.replica_identity != marked {
            let mut changed = (**ix).clone();
            if let Some(i) = changed.index.as_mut() {
                i.replica_identity = marked;
            }
            out.push(changed);
        }
    }
    Ok(out)
}

/// The index USING INDEX names, if it can identify rows: a unique,
/// immediate btree index of the table on plain NOT NULL columns, without
/// a predicate.
fn usable_index(catalog: &DbCatalog, table: &Relation, name: &str) -> PgResult<tusk_types::Oid> {
    let Some(index) = catalog.lookup_relation(table.namespace, name) else {
        return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("index \"{name}\" for table \"{}\" does not exist", table.name)));
    };
    let info = match (&index.index, index.kind) {
        (Some(info), RelKind::Index) if info.table == table.oid => info,
        _ => return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{name}\" is not an index for table \"{}\"", table.name))),
    };
    if info.method != "btree" || !info.unique {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot use non-unique index \"{name}\" as replica identity")));
    }
    if info.deferrable {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot use non-immediate index \"{name}\" as replica identity")));
    }
    if info.keys.iter().any(|k| k.expr.is_some()) {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot use expression index \"{name}\" as replica identity")));
    }
    if info.predicate.is_some() {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot use partial index \"{name}\" as replica identity")));
    }
    for k in &info.keys {
        let column = table.column(k.attnum);
        if !column.not_null {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("index \"{name}\" cannot be used as replica identity because column \"{}\" is nullable", column.name),
            ));
        }
    }
    Ok(index.oid)
}

/// ALTER COLUMN ... DROP NOT NULL refuses a column of the replica identity
/// index (ATExecDropNotNull).
pub fn check_drop_not_null(catalog: &DbCatalog, table: &Relation, attnum: i16) -> PgResult<()> {
    if table.replica_identity != 'i' {
        return Ok(());
    }
    let in_identity = catalog
        .indexes_of(table)
        .filter_map(|ix| ix.index.as_ref())
        .any(|info| info.replica_identity && info.keys.iter().any(|k| k.attnum == attnum));
    if in_identity {
        return Err(PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!("column \"{}\" is in index used as replica identity", table.column(attnum).name),
        ));
    }
    Ok(())
}
