//! CREATE TYPE name AS RANGE (...): PostgreSQL's DefineRange.
//!
//! One statement makes a range type, its multirange type, an array type
//! of each, the pg_range row, and the constructor functions (two for the
//! range, three for the multirange). They are stored as one type row
//! (`catalog::ranges::RangeDef`) plus ordinary pg_proc rows, and the
//! derived pg_depend rows tie them together so that DROP TYPE takes them
//! all (see `catalog::ranges`).

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use crate::analyzer::types::format_type;
use crate::catalog::function::{Function, FunctionParam};
use crate::catalog::ranges::{multirange_type_name, RangeDef};
use crate::catalog::types::{StoredType, TypeDef};
use crate::catalog::{store, BOOTSTRAP_SUPERUSER};
use crate::session::SqlSession;

use crate::catalog::builtin::BTREE_AM;

fn name_parts(nodes: &[pb::Node]) -> Vec<String> {
    nodes
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::String(v)) => Some(v.sval.clone()),
            _ => None,
        })
        .collect()
}

/// defGetQualifiedName: a DefElem's argument as a (possibly qualified) name.
fn qualified_name(e: &pb::DefElem) -> PgResult<Vec<String>> {
    match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::TypeName(tn)) => Ok(name_parts(&tn.names)),
        Some(NodeEnum::List(l)) => Ok(name_parts(&l.items)),
        Some(NodeEnum::String(s)) => Ok(vec![s.sval.clone()]),
        _ => Err(PgError::syntax(format!("{} requires a parameter", e.defname))),
    }
}

fn conflicting(e: &pb::DefElem) -> PgError {
    PgError::syntax("conflicting or redundant options").with_position((e.location >= 0).then(|| e.location as u32 + 1))
}

pub fn create_range_type(s: &mut SqlSession, stmt: &pb::CreateRangeStmt, sql: &str) -> PgResult<()> {
    let names = name_parts(&stmt.type_name);
    let Some((name, qual)) = names.split_last() else { return Err(PgError::internal("CREATE TYPE without a name")) };
    {
        let d = Ddl::new(s, sql)?;
        let rv = pb::RangeVar { relname: name.clone(), schemaname: qual.last().cloned().unwrap_or_default(), relpersistence: "p".into(), ..Default::default() };
        let nsp = d.namespace_for(&rv, false)?;
        if d.catalog.user_types.lookup(nsp, name).is_some() || d.relation_name_taken(nsp, name) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        let b = crate::catalog::builtins();
        let mut subtype: Option<Oid> = None;
        let mut opclass: Option<Vec<String>> = None;
        let mut collation: Option<Vec<String>> = None;
        let mut canonical: Option<Vec<String>> = None;
        let mut diff: Option<Vec<String>> = None;
        let mut multirange: Option<(Vec<String>, Oid)> = None;
        for p in &stmt.params {
            let Some(NodeEnum::DefElem(e)) = &p.node else { continue };
            match e.defname.as_str() {
                "subtype" => {
                    if subtype.is_some() {
                        return Err(conflicting(e));
                    }
                    let Some(NodeEnum::TypeName(tn)) = e.arg.as_deref().and_then(|n| n.node.as_ref()) else {
                        return Err(PgError::syntax("subtype requires a parameter"));
                    };
                    subtype = Some(crate::analyzer::types::resolve_type_name(b, tn)?.oid);
                }
                "subtype_opclass" => {
                    if opclass.is_some() {
                        return Err(conflicting(e));
                    }
                    opclass = Some(qualified_name(e)?);
                }
                "collation" => {
                    if collation.is_some() {
                        return Err(conflicting(e));
                    }
                    collation = Some(qualified_name(e)?);
                }
                "canonical" => {
                    if canonical.is_some() {
                        return Err(conflicting(e));
                    }
                    canonical = Some(qualified_name(e)?);
                }
                "subtype_diff" => {
                    if diff.is_some() {
                        return Err(conflicting(e));
                    }
                    diff = Some(qualified_name(e)?);
                }
                "multirange_type_name" => {
                    if multirange.is_some() {
                        return Err(conflicting(e));
                    }
                    let parts = qualified_name(e)?;
                    let Some((mname, mqual)) = parts.split_last() else { return Err(PgError::syntax("multirange_type_name requires a parameter")) };
                    let mrv = pb::RangeVar { relname: mname.clone(), schemaname: mqual.last().cloned().unwrap_or_default(), relpersistence: "p".into(), ..Default::default() };
                    let mnsp = d.namespace_for(&mrv, false)?;
                    multirange = Some((vec![mname.clone()], mnsp));
                }
                other => return Err(PgError::syntax(format!("type attribute \"{other}\" not recognized"))),
            }
        }
        let Some(subtype) = subtype else {
            return Err(PgError::syntax("type attribute \"subtype\" is required"));
        };
        let sub_info = b.type_info(subtype).ok_or_else(|| PgError::internal("subtype without pg_type row"))?.clone();
        if sub_info.typtype == 'p' {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("range subtype cannot be {}", format_type(b, subtype, -1))));
        }
        let subopclass = find_subtype_opclass(opclass.as_deref(), subtype)?;
        let collation = if sub_info.collation != 0 {
            match &collation {
                Some(c) => {
                    let cname = c.last().cloned().unwrap_or_default();
                    crate::catalog::system::collation_by_name(&cname)
                        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("collation \"{}\" for encoding \"UTF8\" does not exist", c.join("."))))?
                }
                None => sub_info.collation,
            }
        } else {
            if collation.is_some() {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "range collation specified but subtype does not support collation"));
            }
            0
        };
        if canonical.is_some() {
            // Tusk has no shell types, so there is never one to find.
            return Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, "cannot specify a canonical function without a pre-created shell type")
                .with_hint("Create the type as a shell type, then create its canonicalization function, then do a full CREATE TYPE."));
        }
        let subdiff = match &diff {
            Some(fname) => find_subtype_diff(&d, fname, subtype)?,
            None => 0,
        };
        let align = if sub_info.align == 'd' { 'd' } else { 'i' };
        let (multirange_name, multirange_namespace) = match multirange {
            Some((n, mnsp)) => {
                let n = n.into_iter().next().unwrap_or_default();
                if d.catalog.user_types.lookup(mnsp, &n).is_some() || d.relation_name_taken(mnsp, &n) {
                    return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{n}\" already exists")));
                }
                (n, mnsp)
            }
            None => {
                let n = multirange_type_name(name);
                if d.catalog.user_types.lookup(nsp, &n).is_some() || d.relation_name_taken(nsp, &n) || multirange_builtin_clash(nsp, &n) {
                    return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{n}\" already exists"))
                        .with_detail(format!("Failed while creating a multirange type for type \"{name}\"."))
                        .with_hint("You can manually specify a multirange type name using the \"multirange_type_name\" attribute."));
                }
                (n, nsp)
            }
        };
        let range_oid = d.oid()?;
        let array_oid = d.oid()?;
        let multirange_oid = d.oid()?;
        let multirange_array = d.oid()?;
        let owner = super::grant::current_role_oid(s);
        let txn = d.txn()?;
        if !store::claim_name(txn, d.db(), nsp, name, range_oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        if !store::claim_name(txn, d.db(), multirange_namespace, &multirange_name, multirange_oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{multirange_name}\" already exists")));
        }
        // makeRangeConstructors and makeMultirangeConstructors.
        let param = |t: Oid, mode: char| FunctionParam { name: String::new(), type_oid: t, mode, default: None };
        let mut range_constructors = Vec::new();
        for (params, src) in [
            (vec![param(subtype, 'i'), param(subtype, 'i')], "range_constructor2"),
            (vec![param(subtype, 'i'), param(subtype, 'i'), param(oid::TEXT, 'i')], "range_constructor3"),
        ] {
            let f = constructor(&d, name, nsp, params, range_oid, false, src)?;
            store::put_function(txn, d.db(), &f)?;
            range_constructors.push(f.oid);
        }
        let mut multirange_constructors = Vec::new();
        for (params, src) in [
            (vec![], "multirange_constructor0"),
            (vec![param(range_oid, 'i')], "multirange_constructor1"),
            (vec![param(array_oid, 'v')], "multirange_constructor2"),
        ] {
            let f = constructor(&d, &multirange_name, nsp, params, multirange_oid, true, src)?;
            store::put_function(txn, d.db(), &f)?;
            multirange_constructors.push(f.oid);
        }
        let def = RangeDef {
            subtype,
            collation,
            subopclass,
            subdiff,
            multirange: multirange_oid,
            multirange_name,
            multirange_namespace,
            multirange_array,
            align,
            range_constructors,
            multirange_constructors,
        };
        let stored = StoredType { oid: range_oid, name: name.clone(), namespace: nsp, owner, array_oid, def: TypeDef::Range(def) };
        store::put_type(txn, d.db(), &stored)?;
    }
    s.reload_txn_catalog()
}

/// Whether an unqualified built-in type would take the name (a range type
/// in pg_catalog itself).
fn multirange_builtin_clash(nsp: Oid, name: &str) -> bool {
    nsp == crate::catalog::PG_CATALOG_NAMESPACE && crate::catalog::builtins().type_by_name.contains_key(name)
}

/// A constructor's pg_proc row: owned by the bootstrap superuser, in
/// language internal, immutable and parallel safe, as PostgreSQL makes it.
fn constructor(d: &Ddl, name: &str, nsp: Oid, params: Vec<FunctionParam>, ret: Oid, strict: bool, src: &str) -> PgResult<Function> {
    Ok(Function {
        oid: d.oid()?,
        name: name.to_string(),
        namespace: nsp,
        owner: BOOTSTRAP_SUPERUSER,
        kind: 'f',
        language: "internal".into(),
        params,
        ret_type: ret,
        retset: false,
        volatility: 'i',
        strict,
        security_definer: false,
        leakproof: false,
        parallel: 's',
        cost: 1.0,
        rows: 0.0,
        src: src.to_string(),
        sql_body: None,
        sql_body_return: false,
        sql_body_return_stmts: Vec::new(),
        config: Vec::new(),
        acl: None,
        refs: Vec::new(),
        function_refs: Vec::new(),
        version: d.oid()? as u64,
    })
}

/// findRangeSubOpclass: the named B-tree operator class, which must
/// accept the subtype, or the subtype's default one.
fn find_subtype_opclass(name: Option<&[String]>, subtype: Oid) -> PgResult<Oid> {
    let b = crate::catalog::builtins();
    let base = crate::catalog::types::base_type_oid(subtype);
    if let Some(name) = name {
        let cname = name.last().cloned().unwrap_or_default();
        let c = b.opclass_by_name(BTREE_AM, &cname).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_OBJECT, format!("operator class \"{}\" does not exist for access method \"btree\"", name.join(".")))
        })?;
        if c.intype != base && !b.is_binary_coercible(base, c.intype) && !polymorphic_opclass_fits(c.intype, base) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("operator class \"{}\" does not accept data type {}", cname, format_type(b, subtype, -1)),
            ));
        }
        return Ok(c.oid);
    }
    let found = match b.default_opclass(BTREE_AM, base) {
        0 => default_polymorphic_opclass(base),
        o => o,
    };
    if found == 0 {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("data type {} has no default operator class for access method \"btree\"", format_type(b, subtype, -1)),
        )
        .with_hint("You must specify an operator class for the range type or define a default operator class for the subtype."));
    }
    Ok(found)
}

/// array_ops, record_ops, range_ops and multirange_ops take whole
/// families of types.
fn default_polymorphic_opclass(t: Oid) -> Oid {
    let b = crate::catalog::builtins();
    let Some(info) = b.type_info(t) else { return 0 };
    let family = if b.element_of(t) != 0 {
        oid::ANYARRAY
    } else {
        match info.typtype {
            'c' => oid::RECORD,
            'r' => oid::ANYRANGE,
            'm' => oid::ANYMULTIRANGE,
            _ => return 0,
        }
    };
    b.opclasses.iter().find(|c| c.method == BTREE_AM && c.default && c.intype == family).map_or(0, |c| c.oid)
}

fn polymorphic_opclass_fits(intype: Oid, t: Oid) -> bool {
    let b = crate::catalog::builtins();
    default_polymorphic_opclass(t) != 0 && b.opclasses.iter().any(|c| c.intype == intype && c.oid == default_polymorphic_opclass(t))
}

/// findRangeSubtypeDiffFunction: a function of (subtype, subtype)
/// returning double precision, immutable.
fn find_subtype_diff(d: &Ddl, name: &[String], subtype: Oid) -> PgResult<Oid> {
    let b = crate::catalog::builtins();
    let fname = name.last().cloned().unwrap_or_default();
    let shown_type = format_type(b, subtype, -1);
    let signature = format!("{}({shown_type}, {shown_type})", name.iter().map(|p| crate::functions::quote_ident(p)).collect::<Vec<_>>().join("."));
    let found = d.catalog.procs_named(&fname).find(|p| p.argtypes == [subtype, subtype] && p.kind == 'f').cloned();
    let Some(p) = found else {
        return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {signature} does not exist")));
    };
    if p.rettype != oid::FLOAT8 {
        return Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, format!("range subtype diff function {signature} must return type double precision")));
    }
    if p.volatility != 'i' {
        return Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, format!("range subtype diff function {signature} must be immutable")));
    }
    Ok(p.oid)
}
