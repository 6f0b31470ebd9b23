//! ALTER TABLE subcommands that change a table's settings, not its rows:
//! REPLICA IDENTITY, CLUSTER ON / SET WITHOUT CLUSTER, ALTER COLUMN ...
//! SET STATISTICS | SET STORAGE | SET COMPRESSION | DROP EXPRESSION, ALTER
//! CONSTRAINT ... [NOT] DEFERRABLE, SET ACCESS METHOD, SET TABLESPACE,
//! OF type / NOT OF, [NO] FORCE and ENABLE/DISABLE ROW LEVEL SECURITY, SET
//! WITHOUT OIDS (PostgreSQL's tablecmds.c, one ATExec* function each).
//!
//! Most of what they set is bookkeeping in Tusk: the catalogs show it
//! (pg_class.relreplident, relrowsecurity, pg_index.indisclustered,
//! pg_attribute.attstattarget, attstorage, attcompression) and psql's
//! `\d` prints it, but nothing reads it yet: there is no logical
//! replication, no CLUSTER command, no TOAST, no row-level security
//! policies, one table access method and one tablespace. The checks and
//! the messages are PostgreSQL's, so that what it refuses Tusk refuses too.
//! ALTER CONSTRAINT's deferrability does take effect: foreign keys are
//! checked when the catalog says.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use super::ddl::Ddl;
use super::notice;
use crate::analyzer::types::format_type;
use crate::catalog::{builtins, ConstraintKind, RelKind, Relation};

type T = pb::AlterTableType;

/// The subcommands this module carries out.
pub(crate) fn handles(subtype: i32) -> bool {
    [
        T::AtDropExpression,
        T::AtSetStatistics,
        T::AtSetStorage,
        T::AtSetCompression,
        T::AtAlterConstraint,
        T::AtClusterOn,
        T::AtDropCluster,
        T::AtDropOids,
        T::AtSetAccessMethod,
        T::AtSetTableSpace,
        T::AtAddOf,
        T::AtDropOf,
        T::AtReplicaIdentity,
        T::AtEnableRowSecurity,
        T::AtDisableRowSecurity,
        T::AtForceRowSecurity,
        T::AtNoForceRowSecurity,
    ]
    .iter()
    .any(|t| *t as i32 == subtype)
}

/// Which relation kinds a subcommand applies to (ATSimplePermissions'
/// ATT_* sets, less the kinds Tusk does not have), and its name in the
/// error for the others (alter_table_type_to_string).
fn allowed_kinds(t: T) -> (&'static [RelKind], &'static str) {
    const TABLE: &[RelKind] = &[RelKind::Table];
    const TABLE_INDEX: &[RelKind] = &[RelKind::Table, RelKind::Index];
    const TABLE_FOREIGN: &[RelKind] = &[RelKind::Table, RelKind::ForeignTable];
    const TABLE_INDEX_FOREIGN: &[RelKind] = &[RelKind::Table, RelKind::Index, RelKind::ForeignTable];
    match t {
        T::AtDropExpression => (TABLE, "ALTER COLUMN ... DROP EXPRESSION"),
        T::AtSetStatistics => (TABLE_INDEX_FOREIGN, "ALTER COLUMN ... SET STATISTICS"),
        T::AtSetStorage => (TABLE_FOREIGN, "ALTER COLUMN ... SET STORAGE"),
        T::AtSetCompression => (TABLE, "ALTER COLUMN ... SET COMPRESSION"),
        T::AtAlterConstraint => (TABLE, "ALTER CONSTRAINT"),
        T::AtClusterOn => (TABLE, "CLUSTER ON"),
        T::AtDropCluster => (TABLE, "SET WITHOUT CLUSTER"),
        T::AtDropOids => (TABLE, "SET WITHOUT OIDS"),
        T::AtSetAccessMethod => (TABLE, "SET ACCESS METHOD"),
        T::AtSetTableSpace => (TABLE_INDEX, "SET TABLESPACE"),
        T::AtAddOf => (TABLE, "OF"),
        T::AtDropOf => (TABLE, "NOT OF"),
        T::AtReplicaIdentity => (TABLE, "REPLICA IDENTITY"),
        T::AtEnableRowSecurity => (TABLE, "ENABLE ROW SECURITY"),
        T::AtDisableRowSecurity => (TABLE, "DISABLE ROW SECURITY"),
        T::AtForceRowSecurity => (TABLE, "FORCE ROW SECURITY"),
        T::AtNoForceRowSecurity => (TABLE, "NO FORCE ROW SECURITY"),
        _ => (TABLE, "ALTER TABLE"),
    }
}

/// Carries out one of the subcommands `handles` accepts.
pub(crate) fn alter(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let t = T::from_i32(c.subtype).ok_or_else(|| PgError::internal("unknown ALTER TABLE subcommand"))?;
    let (kinds, action) = allowed_kinds(t);
    if !kinds.contains(&rel.kind) {
        let plural = match rel.kind {
            RelKind::Table => "tables",
            RelKind::Index => "indexes",
            RelKind::Sequence => "sequences",
            RelKind::View => "views",
            RelKind::ForeignTable => "foreign tables",
            RelKind::CompositeType => "composite types",
        };
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("ALTER action {action} cannot be performed on relation \"{}\"", rel.name))
            .with_detail(format!("This operation is not supported for {plural}.")));
    }
    match t {
        T::AtReplicaIdentity => replica_identity(d, rel, c),
        T::AtClusterOn => cluster_on(d, rel, &c.name),
        T::AtDropCluster => mark_indexes(d, rel, |_, info| info.cluster_on = false),
        T::AtSetStatistics => set_statistics(d, rel, c),
        T::AtSetStorage => set_storage(d, rel, c),
        T::AtSetCompression => set_compression(d, rel, c),
        T::AtAlterConstraint => alter_constraint(d, rel, c),
        T::AtDropExpression => {
            // Tusk has no generated columns, so no column is one.
            let (_, col) = live_column(rel, &c.name)?;
            let message = format!("column \"{}\" of relation \"{}\" is not a stored generated column", col.name, rel.name);
            if c.missing_ok {
                notice(d.s, format!("{message}, skipping"));
                return Ok(());
            }
            Err(PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, message))
        }
        // Tables have no OIDs since PostgreSQL 12; the clause is accepted.
        T::AtDropOids => Ok(()),
        T::AtSetAccessMethod => match c.name.as_str() {
            "heap" => Ok(()),
            am => Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("access method \"{am}\" does not exist"))),
        },
        T::AtSetTableSpace => match c.name.as_str() {
            "pg_default" => Ok(()),
            "pg_global" => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "only shared relations can be placed in pg_global tablespace")),
            ts => Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("tablespace \"{ts}\" does not exist"))),
        },
        T::AtAddOf => add_of(d, c),
        T::AtDropOf => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a typed table", rel.name))),
        T::AtEnableRowSecurity | T::AtDisableRowSecurity => {
            let mut table = (**rel).clone();
            table.flags.row_security = t == T::AtEnableRowSecurity;
            d.put(&table)
        }
        T::AtForceRowSecurity | T::AtNoForceRowSecurity => {
            let mut table = (**rel).clone();
            table.flags.force_row_security = t == T::AtForceRowSecurity;
            d.put(&table)
        }
        _ => Err(PgError::unsupported("this ALTER TABLE subcommand")),
    }
}

/// A live column by name, or PostgreSQL's error for it.
fn live_column<'r>(rel: &'r Relation, name: &str) -> PgResult<(usize, &'r crate::catalog::Column)> {
    if let Some(i) = rel.columns.iter().position(|c| !c.dropped && c.name == name) {
        return Ok((i, &rel.columns[i]));
    }
    // PostgreSQL's system columns (heap.c's SysAtt).
    if ["tableoid", "cmax", "xmax", "cmin", "xmin", "ctid"].contains(&name) {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot alter system column \"{name}\"")));
    }
    Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" of relation \"{}\" does not exist", rel.name)))
}

/// Rewrites the index info of each of the table's indexes with `mark`.
fn mark_indexes(d: &Ddl, rel: &Relation, mark: impl Fn(&Relation, &mut crate::catalog::IndexInfo)) -> PgResult<()> {
    for ix in d.catalog.indexes_of(rel) {
        let mut changed = (**ix).clone();
        let Some(info) = changed.index.as_mut() else { continue };
        let before = (info.cluster_on, info.replica_identity);
        mark(ix, info);
        if (info.cluster_on, info.replica_identity) != before {
            d.put(&changed)?;
        }
    }
    Ok(())
}

/// An index of the table named `name` (looked up in the table's schema,
/// as get_relname_relid does), with PostgreSQL's errors.
fn table_index(d: &Ddl, rel: &Relation, name: &str) -> PgResult<Arc<Relation>> {
    let ix = d
        .catalog
        .lookup_relation(rel.namespace, name)
        .filter(|r| r.kind == RelKind::Index)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("index \"{name}\" for table \"{}\" does not exist", rel.name)))?;
    if ix.index.as_ref().map(|i| i.table) != Some(rel.oid) {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{name}\" is not an index for table \"{}\"", rel.name)));
    }
    Ok(ix.clone())
}

/// REPLICA IDENTITY { DEFAULT | FULL | NOTHING | USING INDEX name }
/// (ATExecReplicaIdentity).
fn replica_identity(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let Some(NodeEnum::ReplicaIdentityStmt(ri)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("REPLICA IDENTITY without a kind"));
    };
    let kind = ri.identity_type.chars().next().unwrap_or('d');
    let index = if kind == 'i' {
        let ix = table_index(d, rel, &ri.name)?;
        let info = ix.index.as_ref().expect("an index relation has index info");
        let refuse = |what: &str| Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot use {what} index \"{}\" as replica identity", ix.name)));
        if !info.unique {
            return refuse("non-unique");
        }
        if info.deferrable {
            return refuse("non-immediate");
        }
        if info.keys.iter().any(|k| k.attnum == 0) {
            return refuse("expression");
        }
        if info.predicate.is_some() {
            return refuse("partial");
        }
        for k in &info.keys {
            let col = rel.column(k.attnum);
            if !col.not_null {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("index \"{}\" cannot be used as replica identity because column \"{}\" is nullable", ix.name, col.name),
                ));
            }
        }
        Some(ix.oid)
    } else {
        None
    };
    let mut table = (**rel).clone();
    table.flags.replica_identity = (kind != 'd').then_some(kind);
    if table.flags != rel.flags {
        d.put(&table)?;
    }
    mark_indexes(d, rel, |ix, info| info.replica_identity = Some(ix.oid) == index)
}

/// CLUSTER ON index (ATExecClusterOn, check_index_is_clusterable and
/// mark_index_clustered).
fn cluster_on(d: &Ddl, rel: &Arc<Relation>, name: &str) -> PgResult<()> {
    let ix = table_index(d, rel, name)?;
    let info = ix.index.as_ref().expect("an index relation has index info");
    if info.method != "btree" {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("cannot cluster on index \"{}\" because access method does not support clustering", ix.name),
        ));
    }
    if info.predicate.is_some() {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot cluster on partial index \"{}\"", ix.name)));
    }
    mark_indexes(d, rel, |i, info| info.cluster_on = i.oid == ix.oid)
}

/// ALTER [COLUMN] name | number SET STATISTICS n (ATExecSetStatistics):
/// by name on a table, by number on an index, whose plain columns take
/// their statistics from the table.
fn set_statistics(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let mut target = match c.def.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::Integer(i)) => i.ival,
        _ => return Err(PgError::internal("SET STATISTICS without a number")),
    };
    if target < -1 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("statistics target {target} is too low")));
    }
    if target > 10000 {
        target = 10000;
        d.s.notices.borrow_mut().push(PgError::warning("lowering statistics target to 10000").with_code(sqlstate::INVALID_PARAMETER_VALUE));
    }
    let i = if c.num != 0 {
        if rel.kind != RelKind::Index {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot refer to non-index column by number"));
        }
        let i = c.num as usize - 1;
        if i >= rel.columns.len() {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column number {} of relation \"{}\" does not exist", c.num, rel.name),
            ));
        }
        i
    } else {
        live_column(rel, &c.name)?.0
    };
    if let Some(info) = &rel.index {
        if info.keys.get(i).is_some_and(|k| k.attnum != 0) {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("cannot alter statistics on non-expression column \"{}\" of index \"{}\"", rel.columns[i].name, rel.name),
            )
            .with_hint("Alter statistics on table column instead."));
        }
    }
    let mut changed = (**rel).clone();
    changed.columns[i].settings.stat_target = (target != -1).then_some(target);
    d.put(&changed)
}

/// A storage strategy's letter (attstorage) from its name.
fn storage_code(name: &str) -> PgResult<char> {
    match name.to_ascii_lowercase().as_str() {
        "plain" => Ok('p'),
        "external" => Ok('e'),
        "extended" => Ok('x'),
        "main" => Ok('m'),
        _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid storage type \"{name}\""))),
    }
}

/// A compression method's letter (attcompression) from its name, None
/// for `default` (GetAttributeCompression).
pub(crate) fn compression_code(name: &str) -> PgResult<Option<char>> {
    match name {
        "default" => Ok(None),
        "pglz" => Ok(Some('p')),
        "lz4" => Ok(Some('l')),
        _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid compression method \"{name}\""))),
    }
}

/// The name of a compression method's letter.
pub(crate) fn compression_name(code: char) -> &'static str {
    match code {
        'l' => "lz4",
        _ => "pglz",
    }
}

/// The type's own storage (typstorage), which a column starts with.
fn type_storage(type_oid: u32) -> char {
    builtins().type_info(type_oid).map(|t| t.storage).unwrap_or('p')
}

/// Applies a column definition's STORAGE and COMPRESSION (from LIKE
/// INCLUDING STORAGE | COMPRESSION, or COMPRESSION in CREATE TABLE) to
/// the new column, with SET STORAGE's and SET COMPRESSION's checks.
pub(crate) fn column_def_settings(cd: &pb::ColumnDef, col: &mut crate::catalog::Column) -> PgResult<()> {
    if !cd.storage.is_empty() {
        let code = match cd.storage.as_str() {
            s if s.len() == 1 => s.chars().next().unwrap_or('p'),
            s => storage_code(s)?,
        };
        col.settings.storage = (code != type_storage(col.type_oid)).then_some(code);
    }
    if !cd.compression.is_empty() {
        col.settings.compression = checked_compression(col, &cd.compression)?;
    }
    Ok(())
}

fn checked_compression(col: &crate::catalog::Column, name: &str) -> PgResult<Option<char>> {
    if type_storage(col.type_oid) == 'p' {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("column data type {} does not support compression", format_type(builtins(), col.type_oid, col.typmod)),
        ));
    }
    compression_code(name)
}

/// ALTER COLUMN ... SET STORAGE (ATExecSetStorage): the column, and the
/// same column in the table's indexes.
fn set_storage(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let name = match c.def.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::String(s)) => s.sval.clone(),
        _ => return Err(PgError::internal("SET STORAGE without a strategy")),
    };
    let code = storage_code(&name)?;
    let (i, col) = live_column(rel, &c.name)?;
    if code != 'p' && type_storage(col.type_oid) == 'p' {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("column data type {} can only have storage PLAIN", format_type(builtins(), col.type_oid, col.typmod)),
        ));
    }
    let value = (code != type_storage(col.type_oid)).then_some(code);
    set_column_setting(d, rel, i, |s| s.storage = value)
}

/// ALTER COLUMN ... SET COMPRESSION (ATExecSetCompression).
fn set_compression(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let name = match c.def.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::String(s)) => s.sval.clone(),
        _ => return Err(PgError::internal("SET COMPRESSION without a method")),
    };
    let (i, col) = live_column(rel, &c.name)?;
    let value = checked_compression(col, &name)?;
    set_column_setting(d, rel, i, |s| s.compression = value)
}

/// Changes column `i`'s settings, and those of the index columns that are
/// that column (SetIndexStorageProperties).
fn set_column_setting(d: &Ddl, rel: &Arc<Relation>, i: usize, change: impl Fn(&mut crate::catalog::ColumnSettings)) -> PgResult<()> {
    let mut table = (**rel).clone();
    change(&mut table.columns[i].settings);
    d.put(&table)?;
    let attnum = i as i16 + 1;
    for ix in d.catalog.indexes_of(rel) {
        let Some(info) = &ix.index else { continue };
        let mut changed = (**ix).clone();
        for (k, key) in info.keys.iter().enumerate() {
            if key.attnum == attnum {
                if let Some(col) = changed.columns.get_mut(k) {
                    change(&mut col.settings);
                }
            }
        }
        d.put(&changed)?;
    }
    Ok(())
}

/// ALTER CONSTRAINT name [NOT] DEFERRABLE [INITIALLY DEFERRED | IMMEDIATE]
/// (ATExecAlterConstraint): foreign keys only, in PostgreSQL 15.
fn alter_constraint(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let Some(NodeEnum::Constraint(con)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("ALTER CONSTRAINT without a constraint"));
    };
    let Some(i) = rel.constraints.iter().position(|k| k.name == con.conname) else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("constraint \"{}\" of relation \"{}\" does not exist", con.conname, rel.name),
        ));
    };
    if rel.constraints[i].kind != ConstraintKind::ForeignKey {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("constraint \"{}\" of relation \"{}\" is not a foreign key constraint", con.conname, rel.name),
        ));
    }
    let mut table = (**rel).clone();
    table.constraints[i].deferrable = con.deferrable;
    table.constraints[i].deferred = con.initdeferred;
    d.put(&table)
}

/// OF type_name (ATExecAddOf): the type must be a composite type made by
/// CREATE TYPE, which Tusk does not have; every type it has is refused as
/// PostgreSQL refuses it.
fn add_of(d: &Ddl, c: &pb::AlterTableCmd) -> PgResult<()> {
    let Some(NodeEnum::TypeName(tn)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("OF without a type"));
    };
    let b = builtins();
    let shown = match crate::analyzer::types::resolve_type_name(b, tn) {
        Ok(ty) => format_type(b, ty.oid, -1),
        Err(e) => {
            // A table's row type: its name.
            let (schema, name) = crate::analyzer::types::type_name_parts(tn);
            let settings = d.s.settings.borrow();
            let a = d.s.analyzer(&d.catalog, &settings, &[], d.sql);
            match a.lookup_relation(schema.as_deref(), &name) {
                Some(r) if r.kind != RelKind::Index && r.kind != RelKind::Sequence => name,
                _ => return Err(e),
            }
        }
    };
    Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("type {shown} is not a composite type")))
}
