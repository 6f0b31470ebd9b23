//! EXCLUDE constraints (CREATE TABLE / ALTER TABLE ADD): PostgreSQL's
//! exclusion constraints, for the operators Tusk's indexes can enforce.
//!
//! An exclusion constraint forbids two rows whose keys all satisfy the
//! constraint's operators. PostgreSQL checks it by probing an index of an
//! access method that can search for those operators: GiST for overlaps
//! and the like, B-tree or hash for equality. Tusk has B-tree indexes
//! only, and in a B-tree an exclusion operator must be commutative and a
//! member of the key's operator family — which leaves the family's
//! equality. Two rows conflict then exactly when their keys are equal and
//! none is NULL, which is what a unique index refuses; so the constraint
//! is backed by a unique index marked with its operators
//! (`IndexInfo::exclusion`), which reports conflicts in PostgreSQL's
//! words for exclusion constraints (`executor::table`). Other access
//! methods (GiST, the default, and hash) answer 0A000.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::{key_attnums, new_column, new_relation, Ddl};
use crate::catalog::builtin::BTREE_AM;
use crate::catalog::{Constraint, ConstraintKind, IndexInfo, IndexKey, RelKind, Relation};

/// The name of a pg_opfamily row (for error messages).
fn opfamily_name(oid: Oid) -> String {
    include_str!("../catalog/builtin/pg_opfamily.tsv")
        .lines()
        .find_map(|l| {
            let mut f = l.split('\t');
            (f.next()? == oid.to_string()).then(|| f.nth(1).map(str::to_string)).flatten()
        })
        .unwrap_or_default()
}

/// Whether operator `op` is in operator family `family` (pg_amop).
fn in_family(family: Oid, op: Oid) -> bool {
    include_str!("../catalog/builtin/pg_amop.tsv").lines().any(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        f.len() > 6 && f[1] == family.to_string() && f[6] == op.to_string()
    })
}

/// ALTER TABLE / CREATE TABLE's `EXCLUDE USING method (col WITH op, ...)`.
pub(crate) fn add_exclusion_constraint(d: &Ddl, rel: &mut Relation, con: &pb::Constraint, new_indexes: &mut Vec<Relation>, taken: &mut Vec<String>) -> PgResult<()> {
    let nsp = rel.namespace;
    let method = if con.access_method.is_empty() { "gist" } else { con.access_method.as_str() };
    match method {
        "btree" => {}
        "gist" | "hash" | "spgist" | "gin" | "brin" => {
            return Err(PgError::unsupported(format!("exclusion constraints using {}", if method == "gist" { "GiST" } else { method })));
        }
        other => return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("access method \"{other}\" does not exist"))),
    }
    if con.where_clause.is_some() {
        return Err(PgError::unsupported("exclusion constraints with a WHERE clause"));
    }
    let b = crate::catalog::builtins();
    let mut keys: Vec<pb::Node> = Vec::new();
    let mut operators: Vec<Oid> = Vec::new();
    for pair in &con.exclusions {
        let Some(NodeEnum::List(l)) = &pair.node else { return Err(PgError::internal("exclusion element")) };
        let (Some(NodeEnum::IndexElem(ie)), Some(NodeEnum::List(opname))) = (l.items.first().and_then(|n| n.node.as_ref()), l.items.get(1).and_then(|n| n.node.as_ref())) else {
            return Err(PgError::internal("exclusion element"));
        };
        if ie.expr.is_some() || ie.name.is_empty() {
            return Err(PgError::unsupported("exclusion constraints on expressions"));
        }
        let opname: Vec<String> = opname
            .items
            .iter()
            .filter_map(|n| match &n.node {
                Some(NodeEnum::String(s)) => Some(s.sval.clone()),
                _ => None,
            })
            .collect();
        let op = opname.last().cloned().unwrap_or_default();
        let (_, col) = rel.column_by_name(&ie.name).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" named in key does not exist", ie.name))
        })?;
        let ty = crate::catalog::types::base_type_oid(col.type_oid);
        let shown = crate::analyzer::types::format_type(b, col.type_oid, -1);
        let opclass = b.opclass(b.default_opclass(BTREE_AM, ty)).cloned().ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_OBJECT, format!("data type {shown} has no default operator class for access method \"btree\""))
                .with_hint("You must specify an operator class for the index or define a default operator class for the data type.")
        })?;
        let keytype = opclass.intype;
        let found = d.catalog.operators_named(&op).find(|o| o.kind == 'b' && o.left == keytype && o.right == keytype).cloned();
        let Some(found) = found else {
            return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {shown} {op} {shown}"))
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        };
        let signature = {
            let t = crate::analyzer::types::format_type(b, keytype, -1);
            format!("{op}({t},{t})")
        };
        if found.commutator != found.oid {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("operator {signature} is not commutative"))
                .with_detail("Only commutative operators can be used in exclusion constraints."));
        }
        if !in_family(opclass.family, found.oid) {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("operator {signature} is not a member of operator family \"{}\"", opfamily_name(opclass.family)))
                .with_detail("The exclusion operator must be related to the index operator class for the constraint."));
        }
        if keys.iter().any(|k| matches!(&k.node, Some(NodeEnum::String(s)) if s.sval == ie.name)) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" appears twice in exclusion constraint", ie.name)));
        }
        keys.push(pb::Node { node: Some(NodeEnum::String(pb::String { sval: ie.name.clone() })) });
        operators.push(found.oid);
    }
    let attnums = key_attnums(rel, &keys, "exclusion")?;
    if !con.including.is_empty() {
        return Err(PgError::unsupported("INCLUDE columns of exclusion constraints"));
    }
    let colnames: Vec<String> = attnums.iter().map(|&a| rel.column(a).name.clone()).collect();
    let name = if !con.conname.is_empty() {
        con.conname.clone()
    } else {
        super::naming::choose_name(&rel.name, Some(&colnames.join("_")), "excl", &|n| d.constraint_name_taken(nsp, n, taken))
    };
    if d.relation_name_taken(nsp, &name) || taken.contains(&name) {
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
    }
    taken.push(name.clone());
    let idx_oid = d.oid()?;
    let mut idx = new_relation(idx_oid, &name, nsp, RelKind::Index, rel.persistence, rel.owner);
    idx.storage_id = d.storage()?;
    idx.columns = attnums.iter().map(|&a| new_column(&rel.column(a).name, rel.column(a).sql_type())).collect();
    idx.options = super::reloptions::for_index(&con.options, "btree")?;
    idx.index = Some(IndexInfo {
        table: rel.oid,
        keys: attnums.iter().map(|&a| IndexKey { attnum: a, expr: None, desc: false, nulls_first: false, opclass: 0, collation: 0 }).collect(),
        unique: true,
        primary: false,
        clustered: false,
        predicate: None,
        nulls_not_distinct: false,
        method: "btree".into(),
        deferrable: con.deferrable,
        include: Vec::new(),
        cluster_on: false,
        replica_identity: false,
        exclusion: operators,
    });
    rel.constraints.push(Constraint {
        oid: d.oid()?,
        name,
        kind: ConstraintKind::Exclusion,
        columns: attnums,
        check: None,
        index: idx_oid,
        foreign: None,
        deferrable: con.deferrable,
        deferred: con.initdeferred,
        validated: true,
        no_inherit: false,
        inhcount: 0,
        is_local: true,
    });
    new_indexes.push(idx);
    Ok(())
}

/// pg_get_constraintdef's body for an exclusion constraint.
pub fn constraint_def(rel: &Relation, columns: &[i16], operators: &[Oid]) -> String {
    let b = crate::catalog::builtins();
    let elems: Vec<String> = columns
        .iter()
        .zip(operators)
        .map(|(&a, op)| {
            let opname = b.operators.get(op).map(|o| o.name.clone()).unwrap_or_else(|| "=".into());
            format!("{} WITH {opname}", crate::functions::quote_ident(&rel.column(a).name))
        })
        .collect();
    format!("EXCLUDE USING btree ({})", elems.join(", "))
}
