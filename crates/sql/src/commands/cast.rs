//! CREATE CAST / DROP CAST (PostgreSQL's CreateCast in functioncmds.c and
//! pg_cast.c), and what DROP FUNCTION does to the operators, aggregates
//! and casts that use a dropped function (their pg_depend rows).

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Oid, PgError, PgResult};

use super::operator::{describe, lookup_func, strings};
use super::{grant, notice};
use crate::analyzer::types::{format_type_be, resolve_type_name};
use crate::catalog::function::Function;
use crate::catalog::operator::{self as opcat, Cast};
use crate::catalog::{builtins, store, DbCatalog};
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

fn describe_cast(c: &Cast) -> String {
    let b = builtins();
    format!("cast from {} to {}", format_type_be(b, c.source), format_type_be(b, c.target))
}

/// `function name(types)` as pg_depend's messages name a routine.
fn describe_function(f: &Function) -> String {
    format!("function {}", crate::fmgr::signature(f))
}

/// DROP FUNCTION of functions that operators, aggregates or casts use:
/// refused without CASCADE (listing them), dropped with it.
pub fn drop_function_dependents(s: &SqlSession, victims: &[Arc<Function>], cascade: bool) -> PgResult<()> {
    let catalog = s.catalog()?;
    let ops = &catalog.user_ops;
    let gone: Vec<Oid> = victims.iter().map(|f| f.oid).collect();
    let uses = |f: Oid| gone.contains(&f);
    // (description, what it depends on, how to remove it)
    let mut deps: Vec<(String, Oid, Dependent)> = Vec::new();
    for o in ops.operators.values() {
        for f in [o.proc, o.restrict, o.join] {
            if uses(f) {
                deps.push((format!("operator {}", describe(o)), f, Dependent::Operator(o.oid)));
                break;
            }
        }
    }
    for a in ops.aggregates.values() {
        if gone.contains(&a.fnoid) {
            continue;
        }
        let support = [a.transfn, a.finalfn, a.combinefn, a.serialfn, a.deserialfn, a.mtransfn, a.minvtransfn, a.mfinalfn];
        if let Some(&f) = support.iter().find(|f| uses(**f)) {
            let Some(agg) = catalog.functions.get(&a.fnoid) else { continue };
            deps.push((describe_function(agg), f, Dependent::Aggregate(a.fnoid)));
        }
    }
    for c in ops.casts.values() {
        if uses(c.func) {
            deps.push((describe_cast(c), c.func, Dependent::Cast(c.oid)));
        }
    }
    if deps.is_empty() {
        return Ok(());
    }
    if !cascade {
        let of = |f: Oid| victims.iter().find(|v| v.oid == f).map(|v| describe_function(v)).unwrap_or_default();
        let detail: Vec<String> = deps.iter().map(|(d, f, _)| format!("{d} depends on {}", of(*f))).collect();
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop {} because other objects depend on it", describe_function(&victims[0])),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    let lines: Vec<String> = deps.iter().map(|(d, _, _)| format!("drop cascades to {d}")).collect();
    let note = if lines.len() == 1 {
        PgError::notice(lines[0].clone())
    } else {
        PgError::notice(format!("drop cascades to {} other objects", lines.len())).with_detail(lines.join("\n"))
    };
    s.notices.borrow_mut().push(note);
    let txn = s.txn()?;
    let dropped_ops: Vec<Oid> = deps.iter().filter_map(|(_, _, d)| if let Dependent::Operator(o) = d { Some(*o) } else { None }).collect();
    for o in ops.operators.values().filter(|o| !dropped_ops.contains(&o.oid)) {
        if dropped_ops.contains(&o.commutator) || dropped_ops.contains(&o.negator) {
            let mut o = o.clone();
            if dropped_ops.contains(&o.commutator) {
                o.commutator = 0;
            }
            if dropped_ops.contains(&o.negator) {
                o.negator = 0;
            }
            opcat::put_operator(txn, s.db, &o)?;
        }
    }
    for (_, _, d) in &deps {
        match d {
            Dependent::Operator(o) => opcat::delete(txn, s.db, opcat::PG_OPERATOR, *o)?,
            Dependent::Aggregate(a) => {
                opcat::delete(txn, s.db, opcat::PG_AGGREGATE, *a)?;
                store::delete_function(txn, s.db, *a)?;
            }
            Dependent::Cast(c) => opcat::delete(txn, s.db, opcat::PG_CAST, *c)?,
        }
    }
    Ok(())
}

enum Dependent {
    Operator(Oid),
    Aggregate(Oid),
    Cast(Oid),
}

/// Whether the catalog has user-defined objects a DROP FUNCTION must look at.
pub fn has_dependents(catalog: &DbCatalog) -> bool {
    let o = &catalog.user_ops;
    !(o.operators.is_empty() && o.aggregates.is_empty() && o.casts.is_empty())
}
