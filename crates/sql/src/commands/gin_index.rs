//! CREATE INDEX ... USING gin: what a GIN key accepts (DefineIndex's checks
//! for the gin access method). The entries themselves are kept by
//! `executor::gin`.

use pg_query::protobuf as pb;
use tusk_types::oid::Oid;
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use crate::analyzer::types::format_type;
use crate::catalog::builtin::Builtins;

/// The operator class of one key of a new index: for GIN, the class named
/// (already checked against the key's type) or the type's default one,
/// stored explicitly so the index's entries never depend on a later
/// default. Other methods keep what they had.
pub fn key_opclass(ie: &pb::IndexElem, method: &str, key_type: Oid, named: Oid) -> PgResult<Oid> {
    if method != "gin" {
        return Ok(named);
    }
    let b = crate::catalog::builtins();
    let class = if named != 0 {
        named
    } else {
        match b.default_opclass(Builtins::index_am_oid(method), key_type) {
            0 => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("data type {} has no default operator class for access method \"gin\"", format_type(b, key_type, -1)),
                )
                .with_hint("You must specify an operator class for the index or define a default operator class for the data type."))
            }
            c => c,
        }
    };
    if crate::executor::gin::GinOpclass::from_oid(class).is_none() {
        let name = b.opclass(class).map(|c| c.name.clone()).unwrap_or_default();
        return Err(PgError::unsupported(format!("GIN operator class \"{name}\"")));
    }
    // ordering == 1 is SORTBY_DEFAULT, nulls_ordering == 1 SORTBY_NULLS_DEFAULT.
    if ie.ordering > 1 {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "access method \"gin\" does not support ASC/DESC options"));
    }
    if ie.nulls_ordering > 1 {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "access method \"gin\" does not support NULLS FIRST/LAST options"));
    }
    Ok(class)
}

/// The type of a GIN index's column as pg_attribute shows it: the type of
/// its entries (the operator class's opckeytype: text for jsonb_ops, int4
/// for jsonb_path_ops's hashes, the element type for array_ops), as in
/// PostgreSQL; other methods store the key's own type.
pub fn key_column_type(method: &str, opclass: Oid, key_type: SqlType) -> SqlType {
    if method != "gin" {
        return key_type;
    }
    let b = crate::catalog::builtins();
    match b.opclass(opclass).map(|c| c.keytype) {
        // anyelement: the array's element type.
        Some(tusk_types::oid::ANYELEMENT) => match b.element_of(key_type.oid) {
            0 => key_type,
            elem => SqlType::new(elem),
        },
        Some(k) if k != 0 => SqlType::new(k),
        _ => key_type,
    }
}
