//! CREATE / ALTER / DROP OPERATOR (PostgreSQL's operatorcmds.c and
//! pg_operator.c), and the definition-list helpers CREATE AGGREGATE
//! shares with it.
//!
//! As in PostgreSQL, naming a commutator or negator that does not exist yet
//! creates a "shell" operator (no function) for it, which a later CREATE
//! OPERATOR of that name and those types fills in; the links are made
//! mutual when the second operator is defined.

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Oid, PgError, PgResult, SqlType};

use super::{grant, notice};
use crate::analyzer::types::{format_type, resolve_type_name};
use crate::catalog::builtin::ProcInfo;
use crate::catalog::operator::{self as opcat, Operator};
use crate::catalog::{builtins, store, DbCatalog, PG_CATALOG_NAMESPACE};
use crate::session::SqlSession;

pub(crate) fn invalid_definition(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_FUNCTION_DEFINITION, message)
}

pub(crate) fn strings(nodes: &[Node]) -> Vec<String> {
    nodes
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
            _ => None,
        })
        .collect()
}

/// The DefElems of a definition list.
pub(crate) fn def_elems(nodes: &[Node]) -> Vec<&pb::DefElem> {
    nodes
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::DefElem(e)) => Some(&**e),
            _ => None,
        })
        .collect()
}

fn def_arg(e: &pb::DefElem) -> Option<&NodeEnum> {
    e.arg.as_deref().and_then(|n| n.node.as_ref())
}

/// defGetQualifiedName: a name written as an identifier, an operator, a
/// type name or a string.
pub(crate) fn def_names(e: &pb::DefElem) -> PgResult<Vec<String>> {
    match def_arg(e) {
        Some(NodeEnum::TypeName(t)) => Ok(strings(&t.names)),
        Some(NodeEnum::List(l)) => Ok(strings(&l.items)),
        Some(NodeEnum::String(s)) => Ok(split_qualified(&s.sval)),
        None => Err(PgError::syntax(format!("{} requires a parameter", e.defname))),
        _ => Err(PgError::syntax(format!("argument of {} must be a name", e.defname))),
    }
}

/// stringToQualifiedNameList: a dotted name in a string, unquoted parts
/// folded to lower case.
fn split_qualified(s: &str) -> Vec<String> {
    s.split('.')
        .map(|p| match p.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            Some(q) => q.to_string(),
            None => p.trim().to_lowercase(),
        })
        .collect()
}

/// defGetTypeName: the type an option names, and whether it said SETOF.
pub(crate) fn def_type(e: &pb::DefElem) -> PgResult<(SqlType, bool)> {
    let b = builtins();
    match def_arg(e) {
        Some(NodeEnum::TypeName(t)) => Ok((resolve_type_name(b, t)?, t.setof)),
        Some(NodeEnum::String(s)) => Ok((type_from_names(&split_qualified(&s.sval))?, false)),
        Some(NodeEnum::List(l)) => Ok((type_from_names(&strings(&l.items))?, false)),
        None => Err(PgError::syntax(format!("{} requires a parameter", e.defname))),
        _ => Err(PgError::syntax(format!("argument of {} must be a type name", e.defname))),
    }
}

pub(crate) fn type_from_names(names: &[String]) -> PgResult<SqlType> {
    let tn = pb::TypeName {
        names: names.iter().map(|n| Node { node: Some(NodeEnum::String(pb::String { sval: n.clone() })) }).collect(),
        typemod: -1,
        ..Default::default()
    };
    resolve_type_name(builtins(), &tn)
}

/// A DefElem's argument as text (strings, numbers, keywords, names).
pub(crate) fn def_text(e: &pb::DefElem) -> Option<String> {
    match def_arg(e)? {
        NodeEnum::String(s) => Some(s.sval.clone()),
        NodeEnum::Integer(i) => Some(i.ival.to_string()),
        NodeEnum::Float(f) => Some(f.fval.clone()),
        NodeEnum::Boolean(b) => Some(b.boolval.to_string()),
        NodeEnum::TypeName(t) => Some(strings(&t.names).join(".")),
        NodeEnum::List(l) => Some(strings(&l.items).join(".")),
        _ => None,
    }
}

/// defGetBoolean.
pub(crate) fn def_bool(e: &pb::DefElem) -> PgResult<bool> {
    let Some(arg) = def_arg(e) else { return Ok(true) };
    match arg {
        NodeEnum::Integer(i) if i.ival == 0 || i.ival == 1 => return Ok(i.ival == 1),
        NodeEnum::Boolean(b) => return Ok(b.boolval),
        _ => {}
    }
    match def_text(e).map(|s| s.to_lowercase()).as_deref() {
        Some("true" | "on") => Ok(true),
        Some("false" | "off") => Ok(false),
        _ => Err(PgError::syntax(format!("{} requires a Boolean value", e.defname))),
    }
}

pub(crate) fn display_types(types: &[Oid]) -> String {
    let b = builtins();
    types.iter().map(|&t| format_type(b, t, -1)).collect::<Vec<_>>().join(", ")
}

/// The schemas an unqualified name is looked up in, and the one a
/// qualified name names.
pub(crate) fn lookup_schemas(s: &SqlSession, catalog: &DbCatalog, schema: Option<&str>) -> PgResult<Vec<Oid>> {
    match schema {
        Some(sch) => catalog
            .namespace_by_name
            .get(sch)
            .map(|o| vec![*o])
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{sch}\" does not exist"))),
        None => {
            let settings = s.settings.borrow();
            let a = s.analyzer(catalog, &settings, &[], "");
            let mut path = a.search_path();
            if !path.contains(&PG_CATALOG_NAMESPACE) {
                path.insert(0, PG_CATALOG_NAMESPACE);
            }
            Ok(path)
        }
    }
}

pub(crate) fn split_name(names: &[String]) -> PgResult<(Option<String>, String)> {
    match names {
        [n] => Ok((None, n.clone())),
        [s, n] => Ok((Some(s.clone()), n.clone())),
        [_, s, n] => Ok((Some(s.clone()), n.clone())),
        _ => Err(PgError::syntax(format!("improper qualified name (too many dotted names): {}", names.join(".")))),
    }
}

/// LookupFuncName: the function of this (possibly qualified) name taking
/// exactly these types, or an error naming the signature.
pub(crate) fn lookup_func<'a>(s: &SqlSession, catalog: &'a DbCatalog, names: &[String], types: &[Oid]) -> PgResult<&'a ProcInfo> {
    find_func(s, catalog, names, types)?.ok_or_else(|| {
        PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {}({}) does not exist", names.join("."), display_types(types)))
    })
}

pub(crate) fn find_func<'a>(s: &SqlSession, catalog: &'a DbCatalog, names: &[String], types: &[Oid]) -> PgResult<Option<&'a ProcInfo>> {
    let (schema, name) = split_name(names)?;
    let schemas = lookup_schemas(s, catalog, schema.as_deref())?;
    for nsp in schemas {
        if let Some(p) = catalog.procs_named(&name).find(|p| p.namespace == nsp && p.argtypes == types) {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// validOperatorName (pg_operator.c).
fn valid_operator_name(name: &str) -> bool {
    const OP_CHARS: &str = "~!@#^&|`?+-*/%<>=";
    if name.is_empty() || name.len() >= 64 || !name.chars().all(|c| OP_CHARS.contains(c)) {
        return false;
    }
    if name.contains("/*") || name.contains("--") {
        return false;
    }
    if name.len() > 1 && (name.ends_with('+') || name.ends_with('-')) && !name.chars().any(|c| "~!@#^&|`?%".contains(c)) {
        return false;
    }
    name != "!="
}

fn new_oid(s: &SqlSession) -> PgResult<Oid> {
    store::new_oid(&s.cluster.engine)
}

/// How messages name an operator: `name(left,right)` with NONE for a
/// missing side (format_operator).
pub fn describe(o: &Operator) -> String {
    let b = builtins();
    let side = |t: Oid| if t == 0 { "NONE".to_string() } else { format_type(b, t, -1) };
    format!("{}({},{})", o.name, side(o.left), side(o.right))
}

// ---------------------------------------------------------------- CREATE

/// A restriction estimator named by RESTRICT (ValidateRestrictionEstimator).
fn restriction_estimator(s: &SqlSession, catalog: &DbCatalog, names: &[String]) -> PgResult<Oid> {
    let p = lookup_func(s, catalog, names, &[oid::INTERNAL, oid::OID, oid::INTERNAL, oid::INT4])?;
    if p.rettype != oid::FLOAT8 {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("restriction estimator function {} must return type double precision", names.join(".")),
        ));
    }
    Ok(p.oid)
}

/// A join estimator named by JOIN (ValidateJoinEstimator): the 5-argument
/// form, else the old 4-argument one.
fn join_estimator(s: &SqlSession, catalog: &DbCatalog, names: &[String]) -> PgResult<Oid> {
    let five = [oid::INTERNAL, oid::OID, oid::INTERNAL, oid::INT2, oid::INTERNAL];
    let p = match find_func(s, catalog, names, &five)? {
        Some(p) => p,
        None => lookup_func(s, catalog, names, &five[..4])?,
    };
    if p.rettype != oid::FLOAT8 {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("join estimator function {} must return type double precision", names.join(".")),
        ));
    }
    Ok(p.oid)
}

/// CREATE OPERATOR name (...).
pub fn create_operator(s: &mut SqlSession, d: &pb::DefineStmt, sql: &str) -> PgResult<()> {
    let catalog = s.catalog()?;
    let (schema, name) = split_name(&strings(&d.defnames))?;
    let namespace = {
        let settings = s.settings.borrow();
        let a = s.analyzer(&catalog, &settings, &[], sql);
        a.creation_namespace(schema.as_deref(), false)?
    };
    grant::check_schema_create(s, namespace)?;
    let mut left = None;
    let mut right = None;
    let mut function = None;
    let mut commutator = None;
    let mut negator = None;
    let mut restrict = None;
    let mut join = None;
    let mut can_hash = false;
    let mut can_merge = false;
    for e in def_elems(&d.definition) {
        match e.defname.as_str() {
            "leftarg" | "rightarg" => {
                let (t, setof) = def_type(e)?;
                if setof {
                    return Err(invalid_definition("SETOF type not allowed for operator argument"));
                }
                if e.defname == "leftarg" {
                    left = Some(t.oid);
                } else {
                    right = Some(t.oid);
                }
            }
            "function" | "procedure" => function = Some(def_names(e)?),
            "commutator" => commutator = Some(def_names(e)?),
            "negator" => negator = Some(def_names(e)?),
            "restrict" => restrict = Some(def_names(e)?),
            "join" => join = Some(def_names(e)?),
            "hashes" => can_hash = def_bool(e)?,
            "merges" => can_merge = def_bool(e)?,
            // Obsolete options: any of them means MERGES.
            "sort1" | "sort2" | "ltcmp" | "gtcmp" => can_merge = true,
            other => {
                s.notices.borrow_mut().push(
                    PgError::warning(format!("operator attribute \"{other}\" not recognized")).with_code(sqlstate::SYNTAX_ERROR),
                );
            }
        }
    }
    let function = function.ok_or_else(|| invalid_definition("operator function must be specified"))?;
    let (left, right) = match (left, right) {
        (None, None) => return Err(invalid_definition("operator argument types must be specified")),
        (_, None) => {
            return Err(invalid_definition("operator right argument type must be specified").with_detail("Postfix operators are not supported."))
        }
        (l, Some(r)) => (l.unwrap_or(0), r),
    };
    let arg_types: Vec<Oid> = if left != 0 { vec![left, right] } else { vec![right] };
    let proc = lookup_func(s, &catalog, &function, &arg_types)?.clone();
    let restrict = restrict.map(|n| restriction_estimator(s, &catalog, &n)).transpose()?.unwrap_or(0);
    let join = join.map(|n| join_estimator(s, &catalog, &n)).transpose()?.unwrap_or(0);

    // OperatorCreate.
    if !valid_operator_name(&name) {
        return Err(PgError::new(sqlstate::INVALID_NAME, format!("\"{name}\" is not a valid operator name")));
    }
    if left == 0 {
        if commutator.is_some() {
            return Err(invalid_definition("only binary operators can have commutators"));
        }
        if join != 0 {
            return Err(invalid_definition("only binary operators can have join selectivity"));
        }
        if can_merge {
            return Err(invalid_definition("only binary operators can merge join"));
        }
        if can_hash {
            return Err(invalid_definition("only binary operators can hash"));
        }
    }
    if proc.rettype != oid::BOOL {
        if negator.is_some() {
            return Err(invalid_definition("only boolean operators can have negators"));
        }
        if restrict != 0 {
            return Err(invalid_definition("only boolean operators can have restriction selectivity"));
        }
        if join != 0 {
            return Err(invalid_definition("only boolean operators can have join selectivity"));
        }
        if can_merge {
            return Err(invalid_definition("only boolean operators can merge join"));
        }
        if can_hash {
            return Err(invalid_definition("only boolean operators can hash"));
        }
    }
    let txn = s.txn()?;
    txn.get_for_update(&opcat::name_lock_key(s.db, opcat::PG_OPERATOR, &name))?;
    let builtin_clash = namespace == PG_CATALOG_NAMESPACE
        && builtins().operators_by_name.get(&name).is_some_and(|v| v.iter().any(|o| {
            let op = &builtins().operators[o];
            op.left == left && op.right == right
        }));
    let shell = catalog.user_ops.find(&name, namespace, left, right).cloned();
    if builtin_clash || shell.as_ref().is_some_and(|o| o.proc != 0) {
        return Err(PgError::new(sqlstate::DUPLICATE_FUNCTION, format!("operator {name} already exists")));
    }
    if let Some(sh) = &shell {
        grant::check_owner(s, sh.owner, &format!("operator {name}"))?;
    }
    let oid = match &shell {
        Some(sh) => sh.oid,
        None => new_oid(s)?,
    };
    let me = grant::current_role_oid(s);
    let mut op = Operator {
        oid,
        name: name.clone(),
        namespace,
        owner: me,
        left,
        right,
        result: proc.rettype,
        proc: proc.oid,
        commutator: 0,
        negator: 0,
        restrict,
        join,
        can_hash,
        can_merge,
    };
    // Shells made for the commutator and negator, and links to update.
    let mut others: Vec<Operator> = Vec::new();
    if let Some(c) = &commutator {
        match other_operator(s, &catalog, c, right, left, &op, true, &mut others)? {
            Some(c) => op.commutator = c,
            None => op.commutator = op.oid,
        }
    }
    if let Some(n) = &negator {
        op.negator = other_operator(s, &catalog, n, left, right, &op, false, &mut others)?.unwrap_or(0);
    }
    // OperatorUpd: the commutator and negator point back at the new
    // operator, unless they already name one.
    let link = |others: &mut Vec<Operator>, target: Oid, negator: bool| {
        if target == 0 || target == op.oid {
            return;
        }
        if !others.iter().any(|o| o.oid == target) {
            if let Some(existing) = catalog.user_ops.operators.get(&target) {
                others.push(existing.clone());
            }
        }
        if let Some(o) = others.iter_mut().find(|o| o.oid == target) {
            if negator && o.negator == 0 {
                o.negator = op.oid;
            } else if !negator && o.commutator == 0 {
                o.commutator = op.oid;
            }
        }
    };
    link(&mut others, op.commutator, false);
    link(&mut others, op.negator, true);
    let txn = s.txn()?;
    opcat::put_operator(txn, s.db, &op)?;
    for o in &others {
        opcat::put_operator(txn, s.db, o)?;
    }
    s.reload_txn_catalog()
}

/// get_other_operator: the commutator or negator named, making a shell for
/// it when it does not exist; None when it is the operator itself (a
/// commutator only).
#[allow(clippy::too_many_arguments)]
fn other_operator(
    s: &SqlSession,
    catalog: &DbCatalog,
    names: &[String],
    left: Oid,
    right: Oid,
    op: &Operator,
    commutator: bool,
    made: &mut Vec<Operator>,
) -> PgResult<Option<Oid>> {
    let (schema, name) = split_name(names)?;
    let namespace = match &schema {
        Some(sch) => *catalog
            .namespace_by_name
            .get(sch)
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{sch}\" does not exist")))?,
        None => op.namespace,
    };
    let schemas = if schema.is_some() { vec![namespace] } else { lookup_schemas(s, catalog, None)? };
    for nsp in &schemas {
        if *nsp == PG_CATALOG_NAMESPACE {
            if let Some(b) = builtins().operators_by_name.get(&name).into_iter().flatten().map(|o| &builtins().operators[o]).find(|o| o.left == left && o.right == right) {
                return Ok(Some(b.oid));
            }
        }
        if let Some(u) = catalog.user_ops.find(&name, *nsp, left, right) {
            grant::check_owner(s, u.owner, &format!("operator {}", u.name))?;
            return Ok(Some(u.oid));
        }
        if let Some(u) = made.iter().find(|o| o.name == name && o.namespace == *nsp && o.left == left && o.right == right) {
            return Ok(Some(u.oid));
        }
    }
    if name == op.name && namespace == op.namespace && left == op.left && right == op.right {
        if !commutator {
            return Err(invalid_definition("operator cannot be its own negator or sort operator"));
        }
        return Ok(None);
    }
    if !valid_operator_name(&name) {
        return Err(PgError::new(sqlstate::INVALID_NAME, format!("\"{name}\" is not a valid operator name")));
    }
    grant::check_schema_create(s, namespace)?;
    let shell = Operator {
        oid: new_oid(s)?,
        name,
        namespace,
        owner: op.owner,
        left,
        right,
        result: 0,
        proc: 0,
        commutator: 0,
        negator: 0,
        restrict: 0,
        join: 0,
        can_hash: false,
        can_merge: false,
    };
    let oid = shell.oid;
    made.push(shell);
    Ok(Some(oid))
}

// ---------------------------------------------------------------- lookup by signature

/// The argument types of `name (left, right)` as DROP/ALTER/COMMENT write
/// them (NONE is a missing side).
fn signature_types(owa: &pb::ObjectWithArgs) -> PgResult<(Oid, Oid)> {
    let b = builtins();
    let mut types = Vec::new();
    for a in &owa.objargs {
        match &a.node {
            Some(NodeEnum::TypeName(tn)) => types.push(resolve_type_name(b, tn)?.oid),
            _ => types.push(0),
        }
    }
    while types.len() < 2 {
        types.push(0);
    }
    Ok((types[0], types[1]))
}

/// LookupOperWithArgs: the user-defined operator an ALTER/DROP names;
/// Err for a built-in one (which cannot be changed) or none.
pub fn lookup_operator(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs, missing_ok: bool) -> PgResult<Option<Operator>> {
    let names = strings(&owa.objname);
    let (schema, name) = split_name(&names)?;
    let (left, right) = signature_types(owa)?;
    if right == 0 {
        return Err(PgError::syntax("postfix operators are not supported"));
    }
    let schemas = match lookup_schemas(s, catalog, schema.as_deref()) {
        Ok(v) => v,
        Err(_) if missing_ok => return Ok(None),
        Err(e) => return Err(e),
    };
    for nsp in &schemas {
        if *nsp == PG_CATALOG_NAMESPACE {
            let b = builtins();
            if let Some(op) = b.operators_by_name.get(&name).into_iter().flatten().map(|o| &b.operators[o]).find(|o| o.left == left && o.right == right) {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop operator {}({},{}) because it is required by the database system", op.name, side(left), side(right)),
                ));
            }
        }
        if let Some(o) = catalog.user_ops.find(&name, *nsp, left, right) {
            return Ok(Some(o.clone()));
        }
    }
    if missing_ok {
        return Ok(None);
    }
    let b = builtins();
    let desc = if left == 0 {
        format!("{} {}", names.join("."), format_type(b, right, -1))
    } else {
        format!("{} {} {}", format_type(b, left, -1), names.join("."), format_type(b, right, -1))
    };
    Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {desc}")))
}

fn side(t: Oid) -> String {
    if t == 0 {
        "NONE".into()
    } else {
        format_type(builtins(), t, -1)
    }
}

/// The object COMMENT ON OPERATOR names.
pub fn comment_target(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs) -> PgResult<Oid> {
    Ok(lookup_operator(s, catalog, owa, false)?.map(|o| o.oid).unwrap_or(0))
}

// ---------------------------------------------------------------- DROP

/// DROP OPERATOR [IF EXISTS] name (left, right) [, ...] [CASCADE | RESTRICT].
pub fn drop_operators(s: &mut SqlSession, d: &pb::DropStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut victims = Vec::new();
    for o in &d.objects {
        let Some(NodeEnum::ObjectWithArgs(owa)) = &o.node else { continue };
        match lookup_operator(s, &catalog, owa, d.missing_ok)? {
            Some(op) => {
                grant::check_owner(s, op.owner, &format!("operator {}", op.name))?;
                victims.push(op);
            }
            None => notice(s, format!("operator {} does not exist, skipping", strings(&owa.objname).join("."))),
        }
    }
    remove_operators(s, &catalog, &victims)?;
    s.reload_txn_catalog()
}

/// Deletes operators, clearing the commutator and negator links other
/// operators have to them (OperatorUpd with isDelete).
fn remove_operators(s: &SqlSession, catalog: &DbCatalog, victims: &[Operator]) -> PgResult<()> {
    let txn = s.txn()?;
    let gone: Vec<Oid> = victims.iter().map(|o| o.oid).collect();
    for other in catalog.user_ops.operators.values().filter(|o| !gone.contains(&o.oid)) {
        if gone.contains(&other.commutator) || gone.contains(&other.negator) {
            let mut o = other.clone();
            if gone.contains(&o.commutator) {
                o.commutator = 0;
            }
            if gone.contains(&o.negator) {
                o.negator = 0;
            }
            opcat::put_operator(txn, s.db, &o)?;
        }
    }
    for v in victims {
        opcat::delete(txn, s.db, opcat::PG_OPERATOR, v.oid)?;
        store::put_comment(txn, s.db, opcat::PG_OPERATOR, v.oid, 0, None)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- ALTER

fn operator_to_alter(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs) -> PgResult<Operator> {
    let op = lookup_operator(s, catalog, owa, false)?.ok_or_else(|| PgError::internal("operator lookup"))?;
    grant::check_owner(s, op.owner, &format!("operator {}", op.name))?;
    Ok(op)
}

/// ALTER OPERATOR ... SET (RESTRICT = ..., JOIN = ...).
pub fn alter_operator(s: &mut SqlSession, a: &pb::AlterOperatorStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let owa = a.opername.as_ref().ok_or_else(|| PgError::internal("ALTER OPERATOR without an operator"))?;
    let mut op = operator_to_alter(s, &catalog, owa)?;
    let mut restrict = None;
    let mut join = None;
    for e in def_elems(&a.options) {
        let none = def_arg(e).is_none();
        match e.defname.as_str() {
            "restrict" => restrict = Some(if none { 0 } else { restriction_estimator(s, &catalog, &def_names(e)?)? }),
            "join" => join = Some(if none { 0 } else { join_estimator(s, &catalog, &def_names(e)?)? }),
            "leftarg" | "rightarg" | "function" | "procedure" | "commutator" | "negator" | "hashes" | "merges" => {
                return Err(PgError::syntax(format!("operator attribute \"{}\" cannot be changed", e.defname)))
            }
            other => return Err(PgError::syntax(format!("operator attribute \"{other}\" not recognized"))),
        }
    }
    if restrict.is_some_and(|r| r != 0) && op.result != oid::BOOL {
        return Err(invalid_definition("only boolean operators can have restriction selectivity"));
    }
    if join.is_some_and(|j| j != 0) && op.result != oid::BOOL {
        return Err(invalid_definition("only boolean operators can have join selectivity"));
    }
    if let Some(r) = restrict {
        op.restrict = r;
    }
    if let Some(j) = join {
        op.join = j;
    }
    opcat::put_operator(s.txn()?, s.db, &op)?;
    s.reload_txn_catalog()
}

/// ALTER OPERATOR ... OWNER TO.
pub fn alter_operator_owner(s: &mut SqlSession, a: &pb::AlterOwnerStmt) -> PgResult<()> {
    let Some(NodeEnum::ObjectWithArgs(owa)) = a.object.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("OWNER TO of an operator without a signature"));
    };
    let catalog = s.catalog()?;
    let mut op = operator_to_alter(s, &catalog, owa)?;
    let new_owner = grant::role_spec_oid(s, a.newowner.as_ref())?;
    if new_owner != op.owner {
        grant::check_owner_change(s, op.namespace, new_owner)?;
    }
    op.owner = new_owner;
    opcat::put_operator(s.txn()?, s.db, &op)?;
    s.reload_txn_catalog()
}

/// ALTER OPERATOR ... SET SCHEMA.
pub fn alter_operator_schema(s: &mut SqlSession, a: &pb::AlterObjectSchemaStmt) -> PgResult<()> {
    let Some(NodeEnum::ObjectWithArgs(owa)) = a.object.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("SET SCHEMA of an operator without a signature"));
    };
    let catalog = s.catalog()?;
    let mut op = operator_to_alter(s, &catalog, owa)?;
    let nsp = *catalog
        .namespace_by_name
        .get(&a.newschema)
        .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", a.newschema)))?;
    grant::check_schema_create(s, nsp)?;
    if nsp != op.namespace && catalog.user_ops.find(&op.name, nsp, op.left, op.right).is_some() {
        return Err(PgError::new(
            sqlstate::DUPLICATE_FUNCTION,
            format!("operator {} already exists in schema \"{}\"", describe(&op), a.newschema),
        ));
    }
    op.namespace = nsp;
    opcat::put_operator(s.txn()?, s.db, &op)?;
    s.reload_txn_catalog()
}
