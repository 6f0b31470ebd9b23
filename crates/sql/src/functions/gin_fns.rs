//! Functions of GIN indexes (access/gin/ginfast.c).
//!
//! Tusk's GIN indexes write each entry as its row is written (see
//! `executor::gin`): there is no pending list, so cleaning it moves
//! nothing.

use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{plain, FnCtx, Registry};

/// gin_clean_pending_list(regclass): the pages moved from the pending
/// list into the index, always 0 here; fails as PostgreSQL does on a
/// relation that is not a GIN index.
fn gin_clean_pending_list(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let oid = match &a[0] {
        Datum::Oid(o) => *o,
        d => d.as_i64().unwrap_or(0) as u32,
    };
    let catalog = c.env.catalog();
    let Some(rel) = catalog.relation(oid) else {
        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("could not open relation with OID {oid}")));
    };
    if rel.index.is_none() {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not an index", rel.name)));
    }
    if !rel.index.as_ref().is_some_and(|i| i.method == "gin") {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a GIN index", rel.name)));
    }
    Ok(Datum::Int8(0))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["gin_clean_pending_list"], gin_clean_pending_list);
}
