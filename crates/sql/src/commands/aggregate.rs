//! CREATE [OR REPLACE] / ALTER / DROP AGGREGATE (PostgreSQL's
//! aggregatecmds.c and pg_aggregate.c).
//!
//! An aggregate is two catalog rows: a pg_proc row of kind 'a' (a
//! `Function` in language internal whose body is never run) that calls
//! resolve like any function's, and its pg_aggregate row naming the
//! transition, final, combine, serialization and moving-aggregate
//! functions the executor calls (see `executor::user_agg`).

use pg_query::protobuf::{self as pb};
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Oid, PgError, PgResult, SqlType};

use super::operator::{def_bool, def_elems, def_names, def_text, def_type, display_types, invalid_definition, lookup_schemas, split_name, strings};
use super::{grant, notice};
use crate::analyzer::coerce;
use crate::analyzer::types::{format_type, format_type_be, resolve_type_name};
use crate::catalog::function::{Function, FunctionParam};
use crate::catalog::operator::{self as opcat, Aggregate};
use crate::catalog::{builtins, store, DbCatalog};
use crate::session::SqlSession;

fn mismatch(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::DATATYPE_MISMATCH, message)
}

/// IsBinaryCoercible: a value of `from` may be passed where `to` is
/// declared without a conversion.
fn binary_coercible(from: Oid, to: Oid) -> bool {
    let b = builtins();
    from == to
        || to == oid::ANY
        || (coerce::is_polymorphic(to) && coerce::can_coerce(b, from, to, coerce::CoercionContext::Implicit))
        || b.casts.get(&(from, to)).is_some_and(|c| c.method == 'b')
}

/// lookup_agg_function: a support function for these argument types (as a
/// call would resolve it), which must need no run-time coercion. Returns
/// its OID and result type (polymorphic results refined).
fn lookup_agg_function(s: &SqlSession, catalog: &DbCatalog, names: &[String], types: &[Oid]) -> PgResult<(Oid, Oid)> {
    let b = builtins();
    let sig = |t: &[Oid]| format!("{}({})", names.join("."), display_types(t));
    let not_found = || PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {} does not exist", sig(types)));
    let (schema, name) = split_name(names)?;
    let schemas = lookup_schemas(s, catalog, schema.as_deref())?;
    let procs = catalog.procs_named(&name).filter(|p| schemas.contains(&p.namespace) && p.kind != 'p');
    // func_get_detail without expanding VARIADIC or defaults: the
    // declared argument lists.
    let cands: Vec<(coerce::Candidate, &crate::catalog::builtin::ProcInfo)> =
        procs.filter(|p| p.argtypes.len() == types.len()).map(|p| (coerce::Candidate { oid: p.oid, args: p.argtypes.clone() }, p)).collect();
    let list: Vec<coerce::Candidate> = cands.iter().map(|(c, _)| c.clone()).collect();
    let (Some(i), _) = coerce::select_candidate(b, types, &list) else { return Err(not_found()) };
    let proc = cands[i].1;
    if proc.kind == 'a' || proc.kind == 'w' {
        return Err(not_found());
    }
    if proc.retset {
        return Err(mismatch(format!("function {} returns a set", sig(types))));
    }
    let declared = &list[i].args;
    let (concrete, ret) = coerce::resolve_polymorphic(b, types, declared, proc.rettype).unwrap_or_else(|_| (declared.clone(), proc.rettype));
    for (t, d) in types.iter().zip(&concrete) {
        if !binary_coercible(*t, *d) {
            return Err(mismatch(format!("function {} requires run-time type coercion", sig(&concrete))));
        }
    }
    Ok((proc.oid, ret))
}

fn strict(catalog: &DbCatalog, f: Oid) -> bool {
    catalog.proc(f).is_some_and(|p| p.strict)
}

/// The aggregate's parameters from its DefineStmt args (new syntax):
/// the FunctionParameters and the number of direct arguments (-1 for a
/// plain aggregate).
fn aggregate_params(args: &[pb::Node]) -> PgResult<(Vec<FunctionParam>, i32)> {
    let b = builtins();
    let mut params = Vec::new();
    let list = match args.first().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::List(l)) => l.items.clone(),
        _ => Vec::new(),
    };
    for p in &list {
        let Some(NodeEnum::FunctionParameter(fp)) = &p.node else { continue };
        let tn = fp.arg_type.as_ref().ok_or_else(|| PgError::internal("aggregate argument without a type"))?;
        let ty = resolve_type_name(b, tn)?;
        let mode = match fp.mode {
            4 => 'v',
            2 | 3 | 5 => return Err(invalid_definition("aggregates cannot have output arguments")),
            _ => 'i',
        };
        params.push(FunctionParam { name: fp.name.clone(), type_oid: ty.oid, mode, default: None });
    }
    let direct = match args.get(1).and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::Integer(i)) => i.ival,
        _ => -1,
    };
    Ok((params, direct))
}

/// CREATE [OR REPLACE] AGGREGATE.
pub fn create_aggregate(s: &mut SqlSession, d: &pb::DefineStmt, sql: &str) -> PgResult<()> {
    let catalog = s.catalog()?;
    let b = builtins();
    let (schema, name) = split_name(&strings(&d.defnames))?;
    let namespace = {
        let settings = s.settings.borrow();
        let a = s.analyzer(&catalog, &settings, &[], sql);
        a.creation_namespace(schema.as_deref(), false)?
    };
    grant::check_schema_create(s, namespace)?;
    let (mut params, direct) = if d.oldstyle { (Vec::new(), -1) } else { aggregate_params(&d.args)? };
    let mut kind = if direct >= 0 { 'o' } else { 'n' };
    let num_direct = direct.max(0) as i16;

    let mut transfn = None;
    let mut finalfn = None;
    let mut combinefn = None;
    let mut serialfn = None;
    let mut deserialfn = None;
    let mut mtransfn = None;
    let mut minvtransfn = None;
    let mut mfinalfn = None;
    let mut finalextra = false;
    let mut mfinalextra = false;
    let mut finalmodify = None;
    let mut mfinalmodify = None;
    let mut sortop = None;
    let mut basetype = None;
    let mut transtype = None;
    let mut transspace = 0;
    let mut mtranstype = None;
    let mut mtransspace = 0;
    let mut initval = None;
    let mut minitval = None;
    let mut parallel = None;
    let modify = |e: &pb::DefElem| -> PgResult<char> {
        match def_text(e).map(|v| v.to_lowercase()).as_deref() {
            Some("read_only") => Ok('r'),
            Some("shareable") => Ok('s'),
            Some("read_write") => Ok('w'),
            _ => Err(PgError::syntax(format!("parameter \"{}\" must be READ_ONLY, SHAREABLE, or READ_WRITE", e.defname))),
        }
    };
    let int = |e: &pb::DefElem| -> PgResult<i32> {
        match e.arg.as_deref().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::Integer(i)) => Ok(i.ival),
            _ => Err(PgError::syntax(format!("{} requires an integer value", e.defname))),
        }
    };
    for e in def_elems(&d.definition) {
        match e.defname.as_str() {
            "sfunc" | "sfunc1" => transfn = Some(def_names(e)?),
            "finalfunc" => finalfn = Some(def_names(e)?),
            "combinefunc" => combinefn = Some(def_names(e)?),
            "serialfunc" => serialfn = Some(def_names(e)?),
            "deserialfunc" => deserialfn = Some(def_names(e)?),
            "msfunc" => mtransfn = Some(def_names(e)?),
            "minvfunc" => minvtransfn = Some(def_names(e)?),
            "mfinalfunc" => mfinalfn = Some(def_names(e)?),
            "finalfunc_extra" => finalextra = def_bool(e)?,
            "mfinalfunc_extra" => mfinalextra = def_bool(e)?,
            "finalfunc_modify" => finalmodify = Some(modify(e)?),
            "mfinalfunc_modify" => mfinalmodify = Some(modify(e)?),
            "sortop" => sortop = Some(def_names(e)?),
            "basetype" => basetype = Some(def_type(e)?.0),
            "hypothetical" => {
                if def_bool(e)? {
                    if kind == 'n' {
                        return Err(invalid_definition("only ordered-set aggregates can be hypothetical"));
                    }
                    kind = 'h';
                }
            }
            "stype" | "stype1" => transtype = Some(def_type(e)?.0),
            "sspace" => transspace = int(e)?,
            "mstype" => mtranstype = Some(def_type(e)?.0),
            "msspace" => mtransspace = int(e)?,
            "initcond" | "initcond1" => initval = def_text(e),
            "minitcond" => minitval = def_text(e),
            "parallel" => parallel = def_text(e),
            other => s.notices.borrow_mut().push(
                PgError::warning(format!("aggregate attribute \"{other}\" not recognized")).with_code(sqlstate::SYNTAX_ERROR),
            ),
        }
    }
    let transtype = transtype.ok_or_else(|| invalid_definition("aggregate stype must be specified"))?.oid;
    let transfn = transfn.ok_or_else(|| invalid_definition("aggregate sfunc must be specified"))?;
    if mtranstype.is_some() {
        if mtransfn.is_none() {
            return Err(invalid_definition("aggregate msfunc must be specified when mstype is specified"));
        }
        if minvtransfn.is_none() {
            return Err(invalid_definition("aggregate minvfunc must be specified when mstype is specified"));
        }
    } else {
        if mtransfn.is_some() {
            return Err(invalid_definition("aggregate msfunc must not be specified without mstype"));
        }
        if minvtransfn.is_some() {
            return Err(invalid_definition("aggregate minvfunc must not be specified without mstype"));
        }
        if mfinalfn.is_some() {
            return Err(invalid_definition("aggregate mfinalfunc must not be specified without mstype"));
        }
        if mtransspace != 0 {
            return Err(invalid_definition("aggregate msspace must not be specified without mstype"));
        }
        if minitval.is_some() {
            return Err(invalid_definition("aggregate minitcond must not be specified without mstype"));
        }
    }
    let default_modify = if kind == 'n' { 'r' } else { 'w' };
    let finalmodify = finalmodify.unwrap_or(default_modify);
    let mfinalmodify = mfinalmodify.unwrap_or(default_modify);
    if d.oldstyle {
        let base = basetype.ok_or_else(|| invalid_definition("aggregate input type must be specified"))?;
        if base.oid != oid::ANY {
            params.push(FunctionParam { name: String::new(), type_oid: base.oid, mode: 'i', default: None });
        }
    } else if basetype.is_some() {
        return Err(invalid_definition("basetype is redundant with aggregate input type specification"));
    }
    let superuser = s.cluster_catalog().is_superuser(grant::current_role_oid(s));
    let pseudo = |t: Oid| b.types.get(&t).is_some_and(|ti| ti.typtype == 'p');
    for (t, _) in [(transtype, ()), (mtranstype.map_or(0, |t| t.oid), ())] {
        if t != 0 && pseudo(t) && !coerce::is_polymorphic(t) && !(t == oid::INTERNAL && superuser) {
            return Err(mismatch(format!("aggregate transition data type cannot be {}", format_type_be(b, t))));
        }
    }
    match (&serialfn, &deserialfn) {
        (Some(_), Some(_)) if transtype != oid::INTERNAL => {
            return Err(invalid_definition(format!(
                "serialization functions may be specified only when the aggregate transition data type is {}",
                format_type_be(b, oid::INTERNAL)
            )))
        }
        (Some(_), None) | (None, Some(_)) => return Err(invalid_definition("must specify both or neither of serialization and deserialization functions")),
        _ => {}
    }
    {
        let settings = s.settings.borrow();
        for (v, t) in [(&initval, transtype), (&minitval, mtranstype.map_or(0, |t| t.oid))] {
            if let Some(v) = v {
                if t != 0 && !pseudo(t) {
                    crate::functions::io::parse_text(v, SqlType::new(t), &settings, false)?;
                }
            }
        }
    }
    let parallel = match parallel.as_deref().map(str::to_lowercase).as_deref() {
        None | Some("unsafe") => 'u',
        Some("safe") => 's',
        Some("restricted") => 'r',
        Some(_) => return Err(PgError::syntax("parameter \"parallel\" must be SAFE, RESTRICTED, or UNSAFE")),
    };

    // AggregateCreate.
    let arg_types: Vec<Oid> = params.iter().map(|p| p.type_oid).collect();
    let num_args = arg_types.len();
    let variadic = params.iter().find(|p| p.mode == 'v').map(|p| p.type_oid);
    let has_poly = arg_types.iter().any(|&t| coerce::is_polymorphic(t));
    let has_internal = arg_types.contains(&oid::INTERNAL);
    if coerce::is_polymorphic(transtype) && !has_poly {
        return Err(mismatch("cannot determine transition data type")
            .with_detail("An aggregate using a polymorphic transition type must have at least one polymorphic argument."));
    }
    if kind != 'n' && variadic.is_some_and(|v| v != oid::ANY) {
        return Err(invalid_definition("a variadic ordered-set aggregate must use VARIADIC type ANY"));
    }
    let mut fn_args = vec![transtype];
    if kind != 'n' {
        let n = if (num_direct as usize) < num_args { num_args - num_direct as usize } else { 1 };
        fn_args.extend_from_slice(&arg_types[num_args.saturating_sub(n)..]);
    } else {
        fn_args.extend_from_slice(&arg_types);
    }
    let (transfn_oid, rettype) = lookup_agg_function(s, &catalog, &transfn, &fn_args)?;
    if rettype != transtype {
        return Err(mismatch(format!("return type of transition function {} is not {}", transfn.join("."), format_type_be(b, transtype))));
    }
    if strict(&catalog, transfn_oid) && initval.is_none() && (num_args < 1 || !binary_coercible(arg_types[0], transtype)) {
        return Err(invalid_definition("must not omit initial value when transition function is strict and transition type is not compatible with input type"));
    }
    let (mut mtransfn_oid, mut minvtransfn_oid) = (0, 0);
    if let (Some(mt), Some(msf)) = (mtranstype, &mtransfn) {
        let mut margs = vec![mt.oid];
        margs.extend_from_slice(&fn_args[1..]);
        let (f, r) = lookup_agg_function(s, &catalog, msf, &margs)?;
        if r != mt.oid {
            return Err(mismatch(format!("return type of transition function {} is not {}", msf.join("."), format_type_be(b, mt.oid))));
        }
        if strict(&catalog, f) && minitval.is_none() && (num_args < 1 || !binary_coercible(arg_types[0], mt.oid)) {
            return Err(invalid_definition("must not omit initial value when transition function is strict and transition type is not compatible with input type"));
        }
        mtransfn_oid = f;
        if let Some(inv) = &minvtransfn {
            let (fi, ri) = lookup_agg_function(s, &catalog, inv, &margs)?;
            if ri != mt.oid {
                return Err(mismatch(format!("return type of inverse transition function {} is not {}", inv.join("."), format_type_be(b, mt.oid))));
            }
            if strict(&catalog, fi) != strict(&catalog, f) {
                return Err(invalid_definition("strictness of aggregate's forward and inverse transition functions must match"));
            }
            minvtransfn_oid = fi;
        }
    }
    let final_args = |state: Oid, extra: bool| {
        let mut a = vec![state];
        if extra {
            a.extend_from_slice(&arg_types);
        } else {
            a.extend_from_slice(&arg_types[..num_direct as usize]);
        }
        a
    };
    let (finalfn_oid, finaltype) = match &finalfn {
        Some(f) => {
            let (o, t) = lookup_agg_function(s, &catalog, f, &final_args(transtype, finalextra))?;
            if finalextra && strict(&catalog, o) {
                return Err(invalid_definition("final function with extra arguments must not be declared STRICT"));
            }
            (o, t)
        }
        None => (0, transtype),
    };
    let mut mfinalfn_oid = 0;
    if let (Some(mt), Some(f)) = (mtranstype, &mfinalfn) {
        let (o, t) = lookup_agg_function(s, &catalog, f, &final_args(mt.oid, mfinalextra))?;
        if mfinalextra && strict(&catalog, o) {
            return Err(invalid_definition("final function with extra arguments must not be declared STRICT"));
        }
        if t != finaltype {
            return Err(invalid_definition(format!(
                "moving-aggregate implementation returns type {}, but plain implementation returns type {}",
                format_type_be(b, t),
                format_type_be(b, finaltype)
            )));
        }
        mfinalfn_oid = o;
    } else if let Some(mt) = mtranstype {
        if finalfn.is_none() && mt.oid != finaltype {
            return Err(invalid_definition(format!(
                "moving-aggregate implementation returns type {}, but plain implementation returns type {}",
                format_type_be(b, mt.oid),
                format_type_be(b, finaltype)
            )));
        }
    }
    let combinefn_oid = match &combinefn {
        Some(f) => {
            let (o, t) = lookup_agg_function(s, &catalog, f, &[transtype, transtype])?;
            if t != transtype {
                return Err(mismatch(format!("return type of combine function {} is not {}", f.join("."), format_type_be(b, transtype))));
            }
            if transtype == oid::INTERNAL && strict(&catalog, o) {
                return Err(invalid_definition(format!("combine function with transition type {} must not be declared STRICT", format_type_be(b, transtype))));
            }
            o
        }
        None => 0,
    };
    let serialfn_oid = match &serialfn {
        Some(f) => {
            let (o, t) = lookup_agg_function(s, &catalog, f, &[oid::INTERNAL])?;
            if t != oid::BYTEA {
                return Err(mismatch(format!("return type of serialization function {} is not {}", f.join("."), format_type_be(b, oid::BYTEA))));
            }
            o
        }
        None => 0,
    };
    let deserialfn_oid = match &deserialfn {
        Some(f) => {
            let (o, t) = lookup_agg_function(s, &catalog, f, &[oid::BYTEA, oid::INTERNAL])?;
            if t != oid::INTERNAL {
                return Err(mismatch(format!("return type of deserialization function {} is not {}", f.join("."), format_type_be(b, oid::INTERNAL))));
            }
            o
        }
        None => 0,
    };
    if coerce::is_polymorphic(finaltype) && !has_poly {
        return Err(mismatch("cannot determine result data type")
            .with_detail("An aggregate returning a polymorphic type must have at least one polymorphic argument."));
    }
    if finaltype == oid::INTERNAL && !has_internal {
        return Err(invalid_definition("unsafe use of pseudo-type \"internal\"")
            .with_detail("A function returning \"internal\" must have at least one \"internal\" argument."));
    }
    let sortop_oid = match &sortop {
        Some(op) => {
            if num_args != 1 {
                return Err(invalid_definition("sort operator can only be specified for single-argument aggregates"));
            }
            let (_, opname) = split_name(op)?;
            catalog
                .operators_named(&opname)
                .find(|o| o.left == arg_types[0] && o.right == arg_types[0])
                .map(|o| o.oid)
                .ok_or_else(|| {
                    let t = format_type(b, arg_types[0], -1);
                    PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {t} {opname} {t}"))
                })?
        }
        None => 0,
    };

    // ProcedureCreate.
    let txn = s.txn()?;
    txn.get_for_update(&store::function_name_key(s.db, namespace, &name))?;
    let shown = |n: &str| format!("{}({})", n, arg_types.iter().map(|&t| format_type(b, t, -1)).collect::<Vec<_>>().join(","));
    let existing = catalog.functions.values().find(|f| f.namespace == namespace && f.name == name && f.input_types() == arg_types).cloned();
    let oid = match &existing {
        Some(old) => {
            if !d.replace {
                return Err(PgError::new(sqlstate::DUPLICATE_FUNCTION, format!("function \"{name}\" already exists with same argument types")));
            }
            let me = grant::current_role_oid(s);
            if old.owner != me && !superuser {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of function {name}")));
            }
            if old.kind != 'a' {
                let what = match old.kind {
                    'p' => "a procedure",
                    'w' => "a window function",
                    _ => "a function",
                };
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "cannot change routine kind").with_detail(format!("\"{name}\" is {what}.")));
            }
            if old.ret_type != finaltype {
                return Err(invalid_definition("cannot change return type of existing function").with_hint(format!("Use DROP AGGREGATE {} first.", shown(&name))));
            }
            if let Some(oldagg) = catalog.user_ops.aggregates.get(&old.oid) {
                if oldagg.kind != kind {
                    let detail = match oldagg.kind {
                        'o' => format!("\"{name}\" is an ordered-set aggregate."),
                        'h' => format!("\"{name}\" is a hypothetical-set aggregate."),
                        _ => format!("\"{name}\" is an ordinary aggregate function."),
                    };
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "cannot change routine kind").with_detail(detail));
                }
                if oldagg.num_direct_args != num_direct {
                    return Err(invalid_definition("cannot change number of direct arguments of an aggregate function"));
                }
            }
            old.oid
        }
        None => store::new_oid(&s.cluster.engine)?,
    };
    let version = store::new_oid(&s.cluster.engine)? as u64;
    let f = Function {
        oid,
        name: name.clone(),
        namespace,
        owner: existing.as_ref().map(|o| o.owner).unwrap_or_else(|| grant::current_role_oid(s)),
        kind: 'a',
        language: "internal".into(),
        params,
        ret_type: finaltype,
        retset: false,
        volatility: 'i',
        strict: false,
        security_definer: false,
        leakproof: false,
        parallel,
        cost: 1.0,
        rows: 0.0,
        src: "aggregate_dummy".into(),
        sql_body: None,
        sql_body_return: false,
        sql_body_return_stmts: Vec::new(),
        config: Vec::new(),
        acl: existing.as_ref().and_then(|o| o.acl.clone()),
        refs: Vec::new(),
        function_refs: Vec::new(),
        version,
    };
    let agg = Aggregate {
        fnoid: oid,
        kind,
        num_direct_args: num_direct,
        transfn: transfn_oid,
        finalfn: finalfn_oid,
        combinefn: combinefn_oid,
        serialfn: serialfn_oid,
        deserialfn: deserialfn_oid,
        mtransfn: mtransfn_oid,
        minvtransfn: minvtransfn_oid,
        mfinalfn: mfinalfn_oid,
        finalextra,
        mfinalextra,
        finalmodify,
        mfinalmodify,
        sortop: sortop_oid,
        transtype,
        transspace,
        mtranstype: mtranstype.map_or(0, |t| t.oid),
        mtransspace,
        initval,
        minitval,
    };
    let txn = s.txn()?;
    store::put_function(txn, s.db, &f)?;
    opcat::put_aggregate(txn, s.db, &agg)?;
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- lookup by signature

/// The aggregate `name (types)` names, as DROP/ALTER/COMMENT write it.
pub fn lookup_aggregate(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs, missing_ok: bool) -> PgResult<Option<std::sync::Arc<Function>>> {
    let b = builtins();
    let names = strings(&owa.objname);
    let (schema, name) = split_name(&names)?;
    let mut types = Vec::new();
    for a in &owa.objargs {
        if let Some(NodeEnum::TypeName(tn)) = &a.node {
            types.push(resolve_type_name(b, tn)?.oid);
        }
    }
    let shown = format!(
        "{}({})",
        names.join("."),
        if types.is_empty() { "*".to_string() } else { types.iter().map(|&t| format_type(b, t, -1)).collect::<Vec<_>>().join(", ") }
    );
    let schemas = match lookup_schemas(s, catalog, schema.as_deref()) {
        Ok(v) => v,
        Err(_) if missing_ok => return Ok(None),
        Err(e) => return Err(e),
    };
    for nsp in &schemas {
        if let Some(f) = catalog.functions.values().find(|f| f.namespace == *nsp && f.name == name && f.input_types() == types) {
            if f.kind != 'a' {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("function {shown} is not an aggregate")));
            }
            return Ok(Some(f.clone()));
        }
        if *nsp == crate::catalog::PG_CATALOG_NAMESPACE && b.procs_by_name.get(&name).is_some_and(|v| v.iter().any(|o| b.procs[o].kind == 'a' && b.procs[o].argtypes == types)) {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop aggregate {shown} because it is required by the database system"),
            ));
        }
    }
    if missing_ok {
        return Ok(None);
    }
    Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("aggregate {shown} does not exist")))
}

fn aggregate_to_alter(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs) -> PgResult<Function> {
    let f = lookup_aggregate(s, catalog, owa, false)?.ok_or_else(|| PgError::internal("aggregate lookup"))?;
    grant::check_owner(s, f.owner, &format!("function {}", f.name))?;
    Ok((*f).clone())
}

/// The object COMMENT ON AGGREGATE names.
pub fn comment_target(s: &SqlSession, catalog: &DbCatalog, owa: &pb::ObjectWithArgs) -> PgResult<Oid> {
    Ok(lookup_aggregate(s, catalog, owa, false)?.map(|f| f.oid).unwrap_or(0))
}

// ---------------------------------------------------------------- DROP / ALTER

/// DROP AGGREGATE [IF EXISTS] name (types) [, ...].
pub fn drop_aggregates(s: &mut SqlSession, d: &pb::DropStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut victims = Vec::new();
    for o in &d.objects {
        let Some(NodeEnum::ObjectWithArgs(owa)) = &o.node else { continue };
        match lookup_aggregate(s, &catalog, owa, d.missing_ok)? {
            Some(f) => {
                grant::check_owner(s, f.owner, &format!("aggregate {}", f.name))?;
                victims.push(f);
            }
            None => {
                // TypeNameListToString: the names as the grammar made them.
                let types: Vec<String> = owa
                    .objargs
                    .iter()
                    .filter_map(|a| match &a.node {
                        Some(NodeEnum::TypeName(tn)) => Some(format!("{}{}", strings(&tn.names).join("."), "[]".repeat(tn.array_bounds.len()))),
                        _ => None,
                    })
                    .collect();
                let args = if types.is_empty() { "*".to_string() } else { types.join(", ") };
                notice(s, format!("aggregate {}({}) does not exist, skipping", strings(&owa.objname).join("."), args));
            }
        }
    }
    if victims.is_empty() {
        return Ok(());
    }
    super::function::drop_routines(s, &victims, d.behavior == pb::DropBehavior::DropCascade as i32)
}

fn store_altered(s: &SqlSession, mut f: Function) -> PgResult<()> {
    f.version = store::new_oid(&s.cluster.engine)? as u64;
    let txn = s.txn()?;
    txn.get_for_update(&store::function_name_key(s.db, f.namespace, &f.name))?;
    store::put_function(txn, s.db, &f)?;
    s.reload_txn_catalog()
}

fn object_owa(n: &Option<Box<pb::Node>>) -> PgResult<&pb::ObjectWithArgs> {
    match n.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::ObjectWithArgs(owa)) => Ok(owa),
        _ => Err(PgError::internal("ALTER AGGREGATE without a signature")),
    }
}

fn ensure_unique(catalog: &DbCatalog, f: &Function, nsp: Oid, name: &str) -> PgResult<()> {
    let types = f.input_types();
    if catalog.functions.values().any(|g| g.oid != f.oid && g.namespace == nsp && g.name == name && g.input_types() == types) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_FUNCTION,
            format!("function {}({}) already exists in schema \"{}\"", name, display_types(&types), catalog.namespace_name(nsp)),
        ));
    }
    Ok(())
}

/// ALTER AGGREGATE ... RENAME TO.
pub fn rename_aggregate(s: &mut SqlSession, r: &pb::RenameStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut f = aggregate_to_alter(s, &catalog, object_owa(&r.object)?)?;
    ensure_unique(&catalog, &f, f.namespace, &r.newname)?;
    s.txn()?.get_for_update(&store::function_name_key(s.db, f.namespace, &f.name))?;
    f.name = r.newname.clone();
    store_altered(s, f)
}

/// ALTER AGGREGATE ... OWNER TO.
pub fn alter_aggregate_owner(s: &mut SqlSession, a: &pb::AlterOwnerStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut f = aggregate_to_alter(s, &catalog, object_owa(&a.object)?)?;
    f.owner = grant::role_spec_oid(s, a.newowner.as_ref())?;
    store_altered(s, f)
}

/// ALTER AGGREGATE ... SET SCHEMA.
pub fn alter_aggregate_schema(s: &mut SqlSession, a: &pb::AlterObjectSchemaStmt) -> PgResult<()> {
    let catalog = s.catalog()?;
    let mut f = aggregate_to_alter(s, &catalog, object_owa(&a.object)?)?;
    let nsp = *catalog
        .namespace_by_name
        .get(&a.newschema)
        .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", a.newschema)))?;
    ensure_unique(&catalog, &f, nsp, &f.name.clone())?;
    f.namespace = nsp;
    store_altered(s, f)
}
