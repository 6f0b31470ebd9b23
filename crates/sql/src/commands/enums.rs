//! CREATE TYPE ... AS ENUM and ALTER TYPE on enums (DefineEnum,
//! AlterEnum), and ALTER TYPE ... RENAME TO / OWNER TO / SET SCHEMA for
//! the user types stored under key `t` (enums and domains).
//!
//! Labels are pg_enum rows held in the type's stored definition; see
//! `catalog::enums` for how their order is kept.

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use super::notice;
use crate::catalog::enums::{self, EnumDef, EnumLabel, Placement};
use crate::catalog::types::{StoredType, TypeDef};
use crate::session::SqlSession;

fn strings(nodes: &[pb::Node]) -> Vec<&str> {
    nodes
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::String(v)) => Some(v.sval.as_str()),
            _ => None,
        })
        .collect()
}

/// CREATE TYPE name AS ENUM ('label', ...)
pub fn create_enum(s: &mut SqlSession, stmt: &pb::CreateEnumStmt, sql: &str) -> PgResult<()> {
    let names = strings(&stmt.type_name);
    let Some((&name, qual)) = names.split_last() else { return Err(PgError::internal("CREATE TYPE without a name")) };
    {
        let d = Ddl::new(s, sql)?;
        let rv = pb::RangeVar { relname: name.to_string(), schemaname: qual.last().map(|s| s.to_string()).unwrap_or_default(), relpersistence: "p".into(), ..Default::default() };
        let nsp = d.namespace_for(&rv, false)?;
        if d.catalog.user_types.lookup(nsp, name).is_some() || d.relation_name_taken(nsp, name) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        let oid = d.oid()?;
        let array_oid = d.oid()?;
        let mut labels: Vec<EnumLabel> = Vec::new();
        for (i, label) in strings(&stmt.vals).into_iter().enumerate() {
            enums::check_label(label)?;
            if labels.iter().any(|l| l.label == label) {
                // pg_enum's unique index on (enumtypid, enumlabel) says so.
                return Err(PgError::new(sqlstate::UNIQUE_VIOLATION, "duplicate key value violates unique constraint \"pg_enum_typid_label_index\"")
                    .with_detail(format!("Key (enumtypid, enumlabel)=({oid}, {label}) already exists.")));
            }
            labels.push(EnumLabel { oid: d.oid()?, label: label.to_string(), sort_order: (i + 1) as f32, key: enums::initial_key(i) });
        }
        let stored = StoredType { oid, name: name.to_string(), namespace: nsp, owner: super::grant::current_role_oid(s), array_oid, def: TypeDef::Enum(EnumDef { labels }) };
        if !crate::catalog::store::claim_name(d.txn()?, d.db(), nsp, name, oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{name}\" already exists")));
        }
        crate::catalog::store::put_type(d.txn()?, d.db(), &stored)?;
    }
    s.reload_txn_catalog()
}

/// The stored user type an ALTER TYPE names, checked for ownership.
fn stored_type(d: &Ddl, names: &[pb::Node]) -> PgResult<StoredType> {
    super::types::stored_type_owned(d, names, |_, oid| {
        PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{} is not an enum", crate::analyzer::types::format_type(crate::catalog::builtins(), oid, -1)))
    })
}

/// ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'label' [BEFORE | AFTER 'label']
/// and ALTER TYPE name RENAME VALUE 'old' TO 'new'.
pub fn alter_enum(s: &mut SqlSession, stmt: &pb::AlterEnumStmt, sql: &str) -> PgResult<()> {
    {
        let d = Ddl::new(s, sql)?;
        let mut st = stored_type(&d, &stmt.type_name)?;
        let shown = crate::analyzer::types::format_type(crate::catalog::builtins(), st.oid, -1);
        let TypeDef::Enum(def) = &mut st.def else {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{shown} is not an enum")));
        };
        if !stmt.old_val.is_empty() {
            // RENAME VALUE (RenameEnumLabel)
            enums::check_label(&stmt.new_val)?;
            let Some(pos) = def.labels.iter().position(|l| l.label == stmt.old_val) else {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("\"{}\" is not an existing enum label", stmt.old_val)));
            };
            if stmt.old_val != stmt.new_val && def.labels.iter().any(|l| l.label == stmt.new_val) {
                return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("enum label \"{}\" already exists", stmt.new_val)));
            }
            def.labels[pos].label = stmt.new_val.clone();
        } else {
            // ADD VALUE (AddEnumLabel)
            enums::check_label(&stmt.new_val)?;
            if def.labels.iter().any(|l| l.label == stmt.new_val) {
                if stmt.skip_if_new_val_exists {
                    notice(d.s, format!("enum label \"{}\" already exists, skipping", stmt.new_val));
                    return Ok(());
                }
                return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("enum label \"{}\" already exists", stmt.new_val)));
            }
            let placement = match (stmt.new_val_neighbor.as_str(), stmt.new_val_is_after) {
                ("", _) => Placement::End,
                (n, true) => Placement::After(n),
                (n, false) => Placement::Before(n),
            };
            let label_oid = d.oid()?;
            enums::add_label(def, label_oid, &stmt.new_val, placement)?;
            enums::note_added_label(label_oid);
        }
        crate::catalog::store::put_type(d.txn()?, d.db(), &st)?;
    }
    s.reload_txn_catalog()
}

/// Whether a RENAME/OWNER/SET SCHEMA statement names a stored user type
/// (an enum or a domain); composite types go the way of relations.
pub fn names_stored_type(s: &SqlSession, names: &[pb::Node]) -> bool {
    let tn = pb::TypeName { names: names.to_vec(), typemod: -1, location: -1, ..Default::default() };
    let Ok(d) = Ddl::new(s, "") else { return false };
    let cat = &d.catalog;
    match crate::analyzer::types::resolve_type_name(crate::catalog::builtins(), &tn) {
        Ok(t) => cat.stored_types.iter().any(|st| st.oid == t.oid),
        Err(_) => false,
    }
}

/// The name list of an ALTER ... RENAME/OWNER/SET SCHEMA object node.
pub fn object_names(object: Option<&pb::Node>) -> Vec<pb::Node> {
    match object.and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::List(l)) => l.items.clone(),
        Some(NodeEnum::TypeName(tn)) => tn.names.clone(),
        _ => Vec::new(),
    }
}

/// ALTER TYPE name RENAME TO new (RenameType; the array type follows).
pub fn rename_type(s: &mut SqlSession, stmt: &pb::RenameStmt, sql: &str) -> PgResult<()> {
    let names = object_names(stmt.object.as_deref());
    {
        let d = Ddl::new(s, sql)?;
        let mut st = stored_type(&d, &names)?;
        if d.catalog.user_types.lookup(st.namespace, &stmt.newname).is_some() || d.relation_name_taken(st.namespace, &stmt.newname) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{}\" already exists", stmt.newname)));
        }
        let txn = d.txn()?;
        crate::catalog::store::release_name(txn, d.db(), st.namespace, &st.name)?;
        if !crate::catalog::store::claim_name(txn, d.db(), st.namespace, &stmt.newname, st.oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{}\" already exists", stmt.newname)));
        }
        st.name = stmt.newname.clone();
        crate::catalog::store::put_type(txn, d.db(), &st)?;
    }
    s.reload_txn_catalog()
}

/// ALTER TYPE name OWNER TO role.
pub fn alter_type_owner(s: &mut SqlSession, stmt: &pb::AlterOwnerStmt, sql: &str) -> PgResult<()> {
    let names = object_names(stmt.object.as_deref());
    {
        let d = Ddl::new(s, sql)?;
        let mut st = stored_type(&d, &names)?;
        let role = stmt.newowner.as_ref().ok_or_else(|| PgError::internal("OWNER TO without a role"))?;
        st.owner = super::grant::role_spec_oid(d.s, Some(role))?;
        crate::catalog::store::put_type(d.txn()?, d.db(), &st)?;
    }
    s.reload_txn_catalog()
}

/// ALTER TYPE name SET SCHEMA schema.
pub fn alter_type_schema(s: &mut SqlSession, stmt: &pb::AlterObjectSchemaStmt, sql: &str) -> PgResult<()> {
    let names = object_names(stmt.object.as_deref());
    {
        let d = Ddl::new(s, sql)?;
        let mut st = stored_type(&d, &names)?;
        let rv = pb::RangeVar { relname: st.name.clone(), schemaname: stmt.newschema.clone(), relpersistence: "p".into(), ..Default::default() };
        let nsp: Oid = d.namespace_for(&rv, false)?;
        if nsp != st.namespace {
            if d.catalog.user_types.lookup(nsp, &st.name).is_some() || d.relation_name_taken(nsp, &st.name) {
                return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{}\" already exists in schema \"{}\"", st.name, stmt.newschema)));
            }
            let txn = d.txn()?;
            crate::catalog::store::release_name(txn, d.db(), st.namespace, &st.name)?;
            crate::catalog::store::claim_name(txn, d.db(), nsp, &st.name, st.oid)?;
            st.namespace = nsp;
            crate::catalog::store::put_type(txn, d.db(), &st)?;
        }
    }
    s.reload_txn_catalog()
}
