//! CREATE CAST / DROP CAST (PostgreSQL's CreateCast in functioncmds.c and
//! pg_cast.c). What depends on a cast's function is in `catalog::depend`.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Oid, PgError, PgResult};

use super::operator::{lookup_func, strings};
use super::{grant, notice};
use crate::analyzer::types::{format_type_be, resolve_type_name};
use crate::catalog::operator::{self as opcat, Cast};
use crate::catalog::{builtins, store};
use crate::session::SqlSession;

fn invalid_object(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, message)
}

/// IsBinaryCoercible as CreateCast asks it.
fn binary_coercible(from: Oid, to: Oid) -> bool {
    from == to || builtins().casts.get(&(from, to)).is_some_and(|c| c.method == 'b')
}

/// CREATE CAST (source AS target) WITH FUNCTION f | WITHOUT FUNCTION | WITH INOUT [AS ASSIGNMENT | AS IMPLICIT].
pub fn create_cast(s: &mut SqlSession, c: &pb::CreateCastStmt) -> PgResult<()> {
    let b = builtins();
    let catalog = s.catalog()?;
    let source = resolve_type_name(b, c.sourcetype.as_ref().ok_or_else(|| PgError::internal("cast without source"))?)?.oid;
    let target = resolve_type_name(b, c.targettype.as_ref().ok_or_else(|| PgError::internal("cast without target"))?)?.oid;
    let info = |t: Oid| b.types.get(&t);
    let show = |t: Oid| format_type_be(b, t);
    if info(source).is_some_and(|t| t.typtype == 'p') {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("source data type {} is a pseudo-type", show(source))));
    }
    if info(target).is_some_and(|t| t.typtype == 'p') {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("target data type {} is a pseudo-type", show(target))));
    }
    // Built-in types belong to the bootstrap superuser.
    let superuser = s.cluster_catalog().is_superuser(grant::current_role_oid(s));
    if !superuser {
        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of type {} or type {}", show(source), show(target))));
    }
    let (func, method, nargs) = match &c.func {
        Some(owa) => {
            let names = strings(&owa.objname);
            let mut types = Vec::new();
            for a in &owa.objargs {
                if let Some(NodeEnum::TypeName(tn)) = &a.node {
                    types.push(resolve_type_name(b, tn)?.oid);
                }
            }
            let p = lookup_func(s, &catalog, &names, &types)?;
            let nargs = p.argtypes.len();
            if !(1..=3).contains(&nargs) {
                return Err(invalid_object("cast function must take one to three arguments"));
            }
            if !binary_coercible(source, p.argtypes[0]) {
                return Err(invalid_object("argument of cast function must match or be binary-coercible from source data type"));
            }
            if nargs > 1 && p.argtypes[1] != oid::INT4 {
                return Err(invalid_object(format!("second argument of cast function must be type {}", show(oid::INT4))));
            }
            if nargs > 2 && p.argtypes[2] != oid::BOOL {
                return Err(invalid_object(format!("third argument of cast function must be type {}", show(oid::BOOL))));
            }
            if !binary_coercible(p.rettype, target) {
                return Err(invalid_object("return data type of cast function must match or be binary-coercible to target data type"));
            }
            if p.kind != 'f' {
                return Err(invalid_object("cast function must be a normal function"));
            }
            if p.retset {
                return Err(invalid_object("cast function must not return a set"));
            }
            (p.oid, 'f', nargs)
        }
        None if c.inout => (0, 'i', 0),
        None => {
            if !superuser {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "must be superuser to create a cast WITHOUT FUNCTION"));
            }
            let (si, ti) = (info(source), info(target));
            if let (Some(si), Some(ti)) = (si, ti) {
                if si.len != ti.len || si.byval != ti.byval || si.align != ti.align {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "source and target data types are not physically compatible"));
                }
                if si.typtype == 'c' || ti.typtype == 'c' {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "composite data types are not binary-compatible"));
                }
                if si.typtype == 'e' || ti.typtype == 'e' {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "enum data types are not binary-compatible"));
                }
                if (si.elem != 0 && si.len == -1) || (ti.elem != 0 && ti.len == -1) {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "array data types are not binary-compatible"));
                }
            }
            (0, 'b', 0)
        }
    };
    if source == target && nargs < 2 {
        return Err(invalid_object("source data type and target data type are the same"));
    }
    let context = match c.context {
        1 => 'i',
        2 => 'a',
        _ => 'e',
    };
    let txn = s.txn()?;
    txn.get_for_update(&opcat::name_lock_key(s.db, opcat::PG_CAST, &format!("{source}:{target}")))?;
    if b.casts.contains_key(&(source, target)) || catalog.user_ops.cast(source, target).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("cast from type {} to type {} already exists", show(source), show(target))));
    }
    let cast = Cast { oid: store::new_oid(&s.cluster.engine)?, source, target, func, context, method };
    opcat::put_cast(s.txn()?, s.db, &cast)?;
    s.reload_txn_catalog()
}

/// DROP CAST [IF EXISTS] (source AS target).
pub fn drop_cast(s: &mut SqlSession, d: &pb::DropStmt) -> PgResult<()> {
    let b = builtins();
    let catalog = s.catalog()?;
    let mut victims = Vec::new();
    for o in &d.objects {
        let Some(NodeEnum::List(l)) = &o.node else { continue };
        let mut types = Vec::new();
        for n in &l.items {
            if let Some(NodeEnum::TypeName(tn)) = &n.node {
                match resolve_type_name(b, tn) {
                    Ok(t) => types.push(t.oid),
                    Err(_) if d.missing_ok => {
                        let name = strings(&tn.names).join(".");
                        notice(s, format!("type \"{name}\" does not exist, skipping"));
                        types.clear();
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        let [source, target] = types[..] else { continue };
        match catalog.user_ops.cast(source, target) {
            Some(c) => victims.push(c.clone()),
            None if b.casts.contains_key(&(source, target)) => {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop cast from {} to {} because it is required by the database system", format_type_be(b, source), format_type_be(b, target)),
                ))
            }
            None if d.missing_ok => notice(
                s,
                format!("cast from type {} to type {} does not exist, skipping", format_type_be(b, source), format_type_be(b, target)),
            ),
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("cast from type {} to type {} does not exist", format_type_be(b, source), format_type_be(b, target)),
                ))
            }
        }
    }
    let txn = s.txn()?;
    for c in &victims {
        opcat::delete(txn, s.db, opcat::PG_CAST, c.oid)?;
        store::put_comment(txn, s.db, opcat::PG_CAST, c.oid, 0, None)?;
    }
    s.reload_txn_catalog()
}
