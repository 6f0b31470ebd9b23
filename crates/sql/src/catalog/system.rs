//! System catalogs and views (`pg_catalog.pg_class`, `information_schema.tables`,
//! ...), computed from Tusk's catalog when scanned.
//!
//! Their columns are PostgreSQL 15's own (recorded into
//! `builtin/system_columns.tsv`), so client queries written for PostgreSQL
//! find every column they name. A generator fills the columns it knows by
//! name; the others read as NULL. Tusk's catalog lives in RocksDB, not in
//! these tables: they are views of it, rebuilt on every scan.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use tusk_types::array::Array;
use tusk_types::oid::{self, Oid};
use tusk_types::{Datum, PgResult, SqlType};

use super::builtin::builtins;
use super::*;
use crate::settings::{self, Settings};

mod sql_med;

/// What generators read.
pub struct SysCx<'a> {
    pub catalog: &'a DbCatalog,
    pub cluster: &'a ClusterCatalog,
    pub settings: &'a Settings,
    pub database: Oid,
    pub database_name: &'a str,
    pub user: &'a str,
    /// The server's sessions, filled only for pg_stat_activity.
    pub activity: Vec<crate::cluster::BackendActivity>,
    /// The session's prepared statements, filled only for pg_prepared_statements.
    pub prepared: Vec<(String, crate::session::PreparedStatementInfo)>,
    /// The session's open cursors, filled only for pg_cursors.
    pub cursors: Vec<crate::commands::cursor::CursorInfo>,
    /// SIREAD locks of serializable transactions, filled only for pg_locks.
    pub predicate_locks: Vec<tusk_storage::predicate::PredicateLockInfo>,
    /// The running statement, for views that print expressions as
    /// PostgreSQL's do with pg_get_expr (information_schema.columns).
    pub env: Option<&'a dyn crate::functions::Env>,
}

/// One generated row: column name → value.
pub type SysRow = Vec<(&'static str, Datum)>;

type Generator = fn(&SysCx, &mut Vec<SysRow>) -> PgResult<()>;

pub struct SystemTable {
    pub name: String,
    pub namespace: Oid,
    pub oid: Oid,
    pub relkind: char,
    pub columns: Vec<(String, SqlType)>,
    generator: Generator,
    pub relation: Arc<Relation>,
}

struct Registry {
    tables: Vec<SystemTable>,
    by_name: HashMap<(Oid, String), usize>,
    by_oid: HashMap<Oid, usize>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let gens: HashMap<&str, Generator> = generators().into_iter().collect();
        let mut defs: Vec<(String, Oid, Oid, char, Vec<(String, SqlType)>)> = Vec::new();
        for line in include_str!("builtin/system_columns.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 8 {
                continue;
            }
            let nsp = if f[1] == "pg_catalog" { PG_CATALOG_NAMESPACE } else { INFORMATION_SCHEMA_NAMESPACE };
            let oid: Oid = f[2].parse().unwrap_or(0);
            let col = (f[5].to_string(), SqlType { oid: f[6].parse().unwrap_or(0), typmod: f[7].parse().unwrap_or(-1) });
            match defs.last_mut() {
                Some(d) if d.2 == oid => d.4.push(col),
                _ => defs.push((f[0].to_string(), nsp, oid, f[3].chars().next().unwrap_or('r'), vec![col])),
            }
        }
        let mut tables = Vec::new();
        for (name, namespace, oid, relkind, columns) in defs {
            let generator = gens.get(name.as_str()).copied().unwrap_or(empty);
            let relation = Arc::new(Relation {
                oid,
                name: name.clone(),
                namespace,
                kind: RelKind::Table,
                persistence: 'p',
                owner: BOOTSTRAP_SUPERUSER,
                columns: columns
                    .iter()
                    .map(|(n, t)| Column {
                        name: n.clone(),
                        type_oid: t.oid,
                        typmod: t.typmod,
                        not_null: false,
                        default: None,
                        dropped: false,
                        identity: ' ',
                        missing: None,
                        collation: 0,
                        settings: Default::default(),
                        inhcount: 0,
                        is_local: true,
                    })
                    .collect(),
                storage_id: 0,
                constraints: Vec::new(),
                index: None,
                view: None,
                sequence: None,
                options: Vec::new(),
                acl: Some(system_table_acl(&name)),
                flags: Default::default(),
                foreign: None,
                indexes: Vec::new(),
                toast: None,
                inherits: Vec::new(),
                children: Vec::new(),
                triggers: Vec::new(),
                // The catalogs' row types are built in (pg_class's is 83).
                row_type: builtins().type_by_name.get(&name).copied().filter(|t| builtins().category(*t) == 'C').unwrap_or(0),
                row_array_type: 0,
            });
            tables.push(SystemTable { name, namespace, oid, relkind, columns, generator, relation });
        }
        let by_name = tables.iter().enumerate().map(|(i, t)| ((t.namespace, t.name.clone()), i)).collect();
        let by_oid = tables.iter().enumerate().map(|(i, t)| (t.oid, i)).collect();
        Registry { tables, by_name, by_oid }
    })
}

/// initdb grants SELECT on the catalogs to PUBLIC, except on those that
/// hold passwords and statistics.
fn system_table_acl(name: &str) -> Vec<super::acl::AclItem> {
    use super::acl;
    let mut v = acl::default_acl(acl::ObjectKind::Table, BOOTSTRAP_SUPERUSER);
    if !matches!(name, "pg_authid" | "pg_shadow" | "pg_statistic" | "pg_user_mapping" | "pg_subscription" | "pg_largeobject") {
        v.push(acl::AclItem { grantee: acl::PUBLIC, grantor: BOOTSTRAP_SUPERUSER, privs: acl::SELECT, grant_options: 0 });
    }
    v
}

pub fn lookup(namespace: Oid, name: &str) -> Option<&'static SystemTable> {
    let r = registry();
    r.by_name.get(&(namespace, name.to_string())).map(|&i| &r.tables[i])
}

pub fn by_oid(oid: Oid) -> Option<&'static SystemTable> {
    let r = registry();
    r.by_oid.get(&oid).map(|&i| &r.tables[i])
}

pub fn all() -> &'static [SystemTable] {
    &registry().tables
}

/// Whether a relation is a system table (scanned by generating rows).
/// PostgreSQL's shared catalogs: one copy for the whole cluster
/// (pg_class.relisshared).
const SHARED_CATALOGS: &[&str] = &[
    "pg_authid",
    "pg_auth_members",
    "pg_database",
    "pg_db_role_setting",
    "pg_parameter_acl",
    "pg_replication_origin",
    "pg_shdepend",
    "pg_shdescription",
    "pg_shseclabel",
    "pg_subscription",
    "pg_tablespace",
];

/// Whether a relation is one of the shared catalogs.
pub fn is_shared(rel: &Relation) -> bool {
    rel.namespace == PG_CATALOG_NAMESPACE && rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID && SHARED_CATALOGS.contains(&rel.name.as_str())
}

pub fn is_system(rel: &Relation) -> bool {
    rel.storage_id == 0 && rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID && by_oid(rel.oid).is_some()
}

impl SystemTable {
    /// Generates the table's rows in column order.
    pub fn rows(&self, cx: &SysCx) -> PgResult<Vec<Vec<Datum>>> {
        let mut raw = Vec::new();
        (self.generator)(cx, &mut raw)?;
        let index: HashMap<&str, usize> = self.columns.iter().enumerate().map(|(i, (n, _))| (n.as_str(), i)).collect();
        let mut out = Vec::with_capacity(raw.len());
        for r in raw {
            let mut row = vec![Datum::Null; self.columns.len()];
            for (name, v) in r {
                if let Some(&i) = index.get(name) {
                    row[i] = v;
                }
            }
            out.push(row);
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------- helpers

fn text(s: &str) -> Datum {
    Datum::text(s)
}
fn name(s: &str) -> Datum {
    Datum::text(s)
}
fn oidv(o: Oid) -> Datum {
    Datum::Oid(o)
}
fn b(v: bool) -> Datum {
    Datum::Bool(v)
}
fn ch(c: char) -> Datum {
    Datum::Char(c as u8)
}
fn yes_no(v: bool) -> Datum {
    text(if v { "YES" } else { "NO" })
}
fn text_array(items: &[String]) -> Datum {
    if items.is_empty() {
        return Datum::Null;
    }
    Datum::Array(Arc::new(Array::from_vec(oid::TEXT, items.iter().map(|s| Datum::text(s)).collect())))
}
fn oid_array(items: &[Oid]) -> Datum {
    Datum::Array(Arc::new(Array::from_vec(oid::OID, items.iter().map(|&v| Datum::Oid(v)).collect())))
}
fn char_array(items: &[char]) -> Datum {
    Datum::Array(Arc::new(Array::from_vec(oid::CHAR, items.iter().map(|&c| Datum::Char(c as u8)).collect())))
}
fn int2_vector(items: &[i16]) -> Datum {
    Datum::Array(Arc::new(Array { element_type: oid::INT2, dims: vec![(items.len() as i32, 0)], elements: items.iter().map(|&v| Datum::Int2(v)).collect() }))
}
fn oid_vector(items: &[Oid]) -> Datum {
    Datum::Array(Arc::new(Array { element_type: oid::OID, dims: vec![(items.len() as i32, 0)], elements: items.iter().map(|&v| Datum::Oid(v)).collect() }))
}
/// An ACL as aclitem[] (NULL for the default privileges).
fn acl_datum(cx: &SysCx, acl: Option<&[super::acl::AclItem]>) -> Datum {
    match acl {
        None => Datum::Null,
        Some(items) => {
            let texts: Vec<String> = items.iter().map(|i| super::acl::item_text(i, cx.cluster)).collect();
            Datum::Array(Arc::new(Array::from_vec(oid::ACLITEM, texts.iter().map(|s| Datum::text(s)).collect())))
        }
    }
}

/// An aclitem[] value from its items' text.
fn acl_array(items: &[&str]) -> Datum {
    Datum::Array(Arc::new(Array::from_vec(oid::ACLITEM, items.iter().map(|s| Datum::text(s)).collect())))
}
fn int2_array(items: &[i16]) -> Datum {
    Datum::Array(Arc::new(Array::from_vec(oid::INT2, items.iter().map(|&v| Datum::Int2(v)).collect())))
}

fn format_type(t: Oid, typmod: i32) -> String {
    crate::analyzer::types::format_type(builtins(), t, typmod)
}

/// Relations of this database visible in catalogs, with their schema names.
fn user_relations<'a>(cx: &'a SysCx) -> Vec<&'a Arc<Relation>> {
    let mut v: Vec<&Arc<Relation>> = cx.catalog.relations.values().collect();
    v.sort_by_key(|r| r.oid);
    v
}

fn relkind_of(r: &Relation) -> char {
    r.kind.code()
}

fn index_columns_text(rel: &Relation, info: &IndexInfo) -> String {
    info.keys
        .iter()
        .map(|k| {
            let mut s = match &k.expr {
                Some(e) => format!("({e})"),
                None => crate::functions::quote_ident(&rel.column(k.attnum).name),
            };
            if k.desc {
                s.push_str(" DESC");
            }
            if k.nulls_first && !k.desc {
                s.push_str(" NULLS FIRST");
            }
            if !k.nulls_first && k.desc {
                s.push_str(" NULLS LAST");
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// pg_get_indexdef's text.
pub fn index_definition(catalog: &DbCatalog, idx: &Relation) -> String {
    let Some(info) = &idx.index else { return String::new() };
    let Some(table) = catalog.relation(info.table) else { return String::new() };
    let schema = catalog.namespace_name(idx.namespace);
    let mut s = format!(
        "CREATE {}INDEX {} ON {}.{} USING {} ({})",
        if info.unique && info.exclusion.is_empty() { "UNIQUE " } else { "" },
        crate::functions::quote_ident(&idx.name),
        crate::functions::quote_ident(schema),
        crate::functions::quote_ident(&table.name),
        info.method,
        index_columns_text(table, info)
    );
    if !info.include.is_empty() {
        let names: Vec<String> = info.include.iter().map(|&a| crate::functions::quote_ident(&table.column(a).name)).collect();
        s.insert_str(s.len() - 1, &format!(") INCLUDE ({}", names.join(", ")));
    }
    if info.nulls_not_distinct {
        s.push_str(" NULLS NOT DISTINCT");
    }
    if !idx.options.is_empty() {
        s.push_str(&format!(" WITH ({})", crate::commands::reloptions::flatten(&idx.options)));
    }
    if let Some(p) = &info.predicate {
        s.push_str(&format!(" WHERE ({p})"));
    }
    s
}

// ---------------------------------------------------------------- generators

fn generators() -> Vec<(&'static str, Generator)> {
    vec![
        ("pg_namespace", pg_namespace),
        ("pg_opfamily", pg_opfamily),
        ("pg_amop", pg_amop),
        ("pg_amproc", pg_amproc),
        ("pg_class", pg_class),
        ("pg_attribute", pg_attribute),
        ("pg_type", pg_type),
        ("pg_range", pg_range),
        ("pg_enum", super::enums::pg_enum_rows),
        ("pg_database", pg_database),
        ("pg_roles", pg_roles),
        ("pg_user", pg_user),
        ("pg_authid", pg_authid),
        ("pg_auth_members", pg_auth_members),
        ("pg_shdescription", pg_shdescription),
        ("pg_settings", pg_settings),
        ("pg_tables", pg_tables),
        ("pg_views", pg_views),
        ("pg_indexes", pg_indexes),
        ("pg_sequences", pg_sequences),
        ("pg_sequence", pg_sequence),
        ("pg_index", pg_index),
        ("pg_constraint", pg_constraint),
        ("pg_inherits", pg_inherits),
        ("pg_attrdef", pg_attrdef),
        ("pg_description", pg_description),
        ("pg_depend", pg_depend),
        ("pg_publication", pg_publication),
        ("pg_publication_rel", pg_publication_rel),
        ("pg_publication_namespace", pg_publication_namespace),
        ("pg_publication_tables", pg_publication_tables),
        ("pg_subscription", pg_subscription),
        ("pg_shdepend", pg_shdepend),
        ("pg_rewrite", pg_rewrite),
        ("pg_trigger", pg_trigger),
        ("pg_am", pg_am),
        ("pg_proc", pg_proc),
        ("pg_operator", pg_operator),
        ("pg_cast", pg_cast),
        ("pg_aggregate", pg_aggregate),
        ("pg_collation", pg_collation),
        ("pg_ts_parser", pg_ts_parser),
        ("pg_ts_template", pg_ts_template),
        ("pg_ts_dict", pg_ts_dict),
        ("pg_ts_config", pg_ts_config),
        ("pg_ts_config_map", pg_ts_config_map),
        ("pg_extension", pg_extension),
        ("pg_language", pg_language),
        ("pg_tablespace", pg_tablespace),
        ("pg_stat_database", pg_stat_database),
        ("pg_stat_activity", pg_stat_activity),
        ("pg_opclass", pg_opclass),
        ("pg_prepared_statements", pg_prepared_statements),
        ("pg_cursors", pg_cursors),
        ("pg_locks", pg_locks),
        ("tusk_plpgsql_profile", tusk_plpgsql_profile),
        ("table_privileges", is_table_privileges),
        ("role_table_grants", is_role_table_grants),
        ("enabled_roles", is_enabled_roles),
        ("applicable_roles", is_applicable_roles),
        ("tables", is_tables),
        ("columns", is_columns),
        ("views", is_views),
        ("schemata", is_schemata),
        ("table_constraints", is_table_constraints),
        ("key_column_usage", is_key_column_usage),
        ("referential_constraints", is_referential_constraints),
        ("sequences", is_sequences),
        ("check_constraints", is_check_constraints),
        ("pg_foreign_data_wrapper", sql_med::pg_foreign_data_wrapper),
        ("pg_foreign_table", sql_med::pg_foreign_table),
        ("foreign_tables", sql_med::is_foreign_tables),
        ("foreign_table_options", sql_med::is_foreign_table_options),
        ("pg_foreign_server", sql_med::pg_foreign_server),
        ("pg_user_mapping", sql_med::pg_user_mapping),
        ("pg_user_mappings", sql_med::pg_user_mappings),
        ("foreign_data_wrappers", sql_med::is_foreign_data_wrappers),
        ("foreign_data_wrapper_options", sql_med::is_foreign_data_wrapper_options),
        ("foreign_servers", sql_med::is_foreign_servers),
        ("foreign_server_options", sql_med::is_foreign_server_options),
        ("user_mappings", sql_med::is_user_mappings),
        ("user_mapping_options", sql_med::is_user_mapping_options),
        ("usage_privileges", sql_med::is_usage_privileges),
        ("role_usage_grants", sql_med::is_role_usage_grants),
    ]
}

fn empty(_: &SysCx, _: &mut Vec<SysRow>) -> PgResult<()> {
    Ok(())
}

fn pg_namespace(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for n in cx.catalog.namespaces.values() {
        // initdb grants the use of these schemas to everyone (psql's `\dn+` shows it).
        let acl = match n.oid {
            _ if n.acl.is_some() => acl_datum(cx, n.acl.as_deref()),
            PUBLIC_NAMESPACE => acl_array(&["pg_database_owner=UC/pg_database_owner", "=U/pg_database_owner"]),
            PG_CATALOG_NAMESPACE | INFORMATION_SCHEMA_NAMESPACE => {
                let owner = cx.cluster.role_name(n.owner);
                acl_array(&[&format!("{owner}=UC/{owner}"), &format!("=U/{owner}")])
            }
            _ => Datum::Null,
        };
        out.push(vec![("oid", oidv(n.oid)), ("nspname", name(&n.name)), ("nspowner", oidv(n.owner)), ("nspacl", acl)]);
    }
    Ok(())
}

fn class_row(cx: &SysCx, r: &Relation, relkind: char, referenced: &std::collections::HashSet<Oid>) -> SysRow {
    let has_index = !r.indexes.is_empty();
    let checks = r.constraints.iter().filter(|c| c.kind == ConstraintKind::Check).count() as i16;
    let natts = r.columns.len() as i16;
    let _ = cx;
    vec![
        ("oid", oidv(r.oid)),
        ("relname", name(&r.name)),
        ("relnamespace", oidv(r.namespace)),
        ("reltype", oidv(r.row_type)),
        ("reloftype", oidv(0)),
        ("relowner", oidv(r.owner)),
        // System views are kept as tables: the relkind decides.
        ("relam", oidv(match relkind {
            'r' | 'm' | 't' => 2,
            'i' => crate::catalog::builtin::Builtins::index_am_oid(r.index.as_ref().map_or("btree", |i| i.method.as_str())),
            _ => 0,
        })),
        ("relfilenode", oidv(if r.storage_id == 0 { 0 } else { r.oid })),
        ("reltablespace", oidv(0)),
        ("relpages", Datum::Int4(0)),
        ("reltuples", Datum::Float4(-1.0)),
        ("relallvisible", Datum::Int4(0)),
        ("reltoastrelid", oidv(r.toast.as_ref().map(|t| t.oid).unwrap_or(0))),
        ("relhasindex", b(has_index)),
        ("relisshared", b(relkind == 'r' && is_shared(r))),
        ("relpersistence", ch(r.persistence)),
        ("relkind", ch(relkind)),
        ("relnatts", Datum::Int2(natts)),
        ("relchecks", Datum::Int2(checks)),
        ("relhasrules", b(false)),
        ("relhastriggers", b(!r.triggers.is_empty() || has_fk_triggers(r, referenced))),
        ("relhassubclass", b(!r.children.is_empty())),
        ("relrowsecurity", b(r.flags.row_security)),
        ("relforcerowsecurity", b(r.flags.force_row_security)),
        ("relispopulated", b(true)),
        ("relreplident", ch(r.replica_identity())),
        ("relispartition", b(false)),
        ("relrewrite", oidv(0)),
        ("relfrozenxid", Datum::Oid(0)),
        ("relminmxid", Datum::Oid(0)),
        ("reloptions", text_array(&r.options)),
        ("relacl", acl_datum(cx, r.acl.as_deref())),
    ]
}

/// Tables a foreign key references.
fn referenced_tables(cx: &SysCx) -> std::collections::HashSet<Oid> {
    cx.catalog.relations.values().flat_map(|t| t.constraints.iter().filter_map(|c| c.foreign.as_ref().map(|f| f.ref_table))).collect()
}

/// Whether PostgreSQL would have created foreign-key triggers on the
/// table: it has a foreign key, or one references it (psql shows
/// "Referenced by" only for tables with triggers).
fn has_fk_triggers(r: &Relation, referenced: &std::collections::HashSet<Oid>) -> bool {
    r.constraints.iter().any(|c| c.kind == ConstraintKind::ForeignKey) || referenced.contains(&r.oid)
}

fn pg_class(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let referenced = referenced_tables(cx);
    for t in all() {
        out.push(class_row(cx, &t.relation, t.relkind, &referenced));
    }
    for r in user_relations(cx) {
        out.push(class_row(cx, r, relkind_of(r), &referenced));
        if let Some((toast, index)) = toast_relations(r) {
            out.push(class_row(cx, &toast, 't', &referenced));
            out.push(class_row(cx, &index, 'i', &referenced));
        }
    }
    Ok(())
}

/// The TOAST table and index rows of a table that has them: PostgreSQL's
/// shape (`pg_toast.pg_toast_<oid>` with chunk_id, chunk_seq and
/// chunk_data, a unique btree index on the first two), owned by the table's
/// owner. Tusk stores nothing in them.
pub fn toast_relations(r: &Relation) -> Option<(Relation, Relation)> {
    let info = r.toast.as_ref()?;
    // Built from one of the table's columns so that every field has a value.
    let base = r.columns.iter().find(|c| !c.dropped)?.clone();
    let column = |name: &str, type_oid: Oid| {
        let mut c = base.clone();
        c.name = name.to_string();
        c.type_oid = type_oid;
        c.typmod = -1;
        c.not_null = true;
        c.default = None;
        c.identity = ' ';
        c.missing = None;
        c.collation = 0;
        c
    };
    let mut toast = r.clone();
    toast.oid = info.oid;
    toast.name = format!("pg_toast_{}", r.oid);
    toast.namespace = PG_TOAST_NAMESPACE;
    toast.columns = vec![column("chunk_id", oid::OID), column("chunk_seq", oid::INT4), column("chunk_data", oid::BYTEA)];
    toast.constraints = Vec::new();
    toast.index = None;
    toast.view = None;
    toast.sequence = None;
    toast.options = info.options.clone();
    toast.acl = None;
    toast.indexes = vec![info.index_oid];
    toast.toast = None;
    toast.inherits = Vec::new();
    toast.children = Vec::new();
    toast.flags = Default::default();
    let mut index = toast.clone();
    index.oid = info.index_oid;
    index.name = format!("pg_toast_{}_index", r.oid);
    index.kind = RelKind::Index;
    index.columns.truncate(2);
    index.options = Vec::new();
    index.indexes = Vec::new();
    index.index = Some(IndexInfo {
        table: info.oid,
        keys: [1, 2].iter().map(|&attnum| IndexKey { attnum, expr: None, desc: false, nulls_first: false, opclass: 0, collation: 0 }).collect(),
        unique: true,
        primary: false,
        clustered: false,
        predicate: None,
        nulls_not_distinct: false,
        method: "btree".to_string(),
        deferrable: false,
        include: Vec::new(),
        cluster_on: false,
        replica_identity: false,
        exclusion: Vec::new(),
    });
    Some((toast, index))
}

fn attribute_rows(r: &Relation, relkind: char, out: &mut Vec<SysRow>) {
    for (i, c) in r.columns.iter().enumerate() {
        let t = builtins().type_info(c.type_oid);
        out.push(vec![
            ("attrelid", oidv(r.oid)),
            ("attname", name(&c.name)),
            ("atttypid", oidv(if c.dropped { 0 } else { c.type_oid })),
            ("attstattarget", Datum::Int4(c.settings.stat_target.unwrap_or(-1))),
            ("attlen", Datum::Int2(t.map(|t| t.len).unwrap_or(-1))),
            ("attnum", Datum::Int2(i as i16 + 1)),
            ("attndims", Datum::Int4(if builtins().element_of(c.type_oid) != 0 { 1 } else { 0 })),
            ("attcacheoff", Datum::Int4(-1)),
            ("atttypmod", Datum::Int4(c.typmod)),
            ("attbyval", b(t.map(|t| t.byval).unwrap_or(false))),
            ("attalign", ch(t.map(|t| t.align).unwrap_or('i'))),
            ("attstorage", ch(c.settings.storage.unwrap_or(t.map(|t| t.storage).unwrap_or('p')))),
            ("attcompression", ch(c.settings.compression.unwrap_or('\0'))),
            ("attnotnull", b(c.not_null)),
            ("atthasdef", b(c.stored_default().is_some())),
            ("atthasmissing", b(c.missing.is_some())),
            ("attidentity", ch(if c.identity == ' ' { '\0' } else { c.identity })),
            ("attgenerated", ch('\0')),
            ("attisdropped", b(c.dropped)),
            ("attislocal", b(c.is_local)),
            ("attinhcount", Datum::Int4(c.inhcount)),
            ("attcollation", oidv(c.collation)),
            ("attfdwoptions", r.foreign.as_ref().and_then(|f| f.column_options.get(i).cloned().flatten()).map_or(Datum::Null, |o| text_array(&o))),
        ]);
    }
    // Tables, sequences and foreign tables have PostgreSQL's system columns too.
    if matches!(relkind, 'r' | 'S' | 'f') {
        for sc in crate::expr::SystemColumn::ALL {
            let ty = sc.ty().oid;
            let t = builtins().type_info(ty);
            out.push(vec![
                ("attrelid", oidv(r.oid)),
                ("attname", name(sc.name())),
                ("atttypid", oidv(ty)),
                ("attstattarget", Datum::Int4(0)),
                ("attlen", Datum::Int2(t.map(|t| t.len).unwrap_or(4))),
                ("attnum", Datum::Int2(sc.attnum())),
                ("attndims", Datum::Int4(0)),
                ("attcacheoff", Datum::Int4(-1)),
                ("atttypmod", Datum::Int4(-1)),
                ("attbyval", b(t.map(|t| t.byval).unwrap_or(true))),
                ("attalign", ch(t.map(|t| t.align).unwrap_or('i'))),
                ("attstorage", ch('p')),
                ("attcompression", ch('\0')),
                ("attnotnull", b(true)),
                ("atthasdef", b(false)),
                ("atthasmissing", b(false)),
                ("attidentity", ch('\0')),
                ("attgenerated", ch('\0')),
                ("attisdropped", b(false)),
                ("attislocal", b(true)),
                ("attinhcount", Datum::Int4(0)),
                ("attcollation", oidv(0)),
            ]);
        }
    }
}

/// pg_inherits: one row per (table, parent it inherits from).
fn pg_inherits(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        for (i, parent) in r.inherits.iter().enumerate() {
            out.push(vec![("inhrelid", oidv(r.oid)), ("inhparent", oidv(*parent)), ("inhseqno", Datum::Int4(i as i32 + 1)), ("inhdetachpending", b(false))]);
        }
    }
    Ok(())
}

fn pg_attribute(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for t in all() {
        attribute_rows(&t.relation, t.relkind, out);
    }
    for r in user_relations(cx) {
        attribute_rows(r, relkind_of(r), out);
        if let Some((toast, index)) = toast_relations(r) {
            attribute_rows(&toast, 't', out);
            attribute_rows(&index, 'i', out);
        }
    }
    Ok(())
}

fn pg_type(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let bi = builtins();
    // (row, schema, owner, typrelid): the built-ins, then the database's own.
    let mut types: Vec<(&super::builtin::TypeInfo, Oid, Oid, Oid)> =
        bi.types.values().map(|t| (t, PG_CATALOG_NAMESPACE, BOOTSTRAP_SUPERUSER, 0)).collect();
    types.extend(cx.catalog.user_types.by_oid.values().map(|u| (u.info, u.namespace, u.owner, u.relid())));
    types.sort_by_key(|t| t.0.oid);
    for (t, namespace, owner, relid) in types {
        let domain = cx.catalog.user_types.domain(t.oid);
        out.push(vec![
            ("oid", oidv(t.oid)),
            ("typname", name(&t.name)),
            ("typnamespace", oidv(namespace)),
            ("typowner", oidv(owner)),
            ("typlen", Datum::Int2(t.len)),
            ("typbyval", b(t.byval)),
            ("typtype", ch(t.typtype)),
            ("typcategory", ch(t.category)),
            ("typispreferred", b(t.preferred)),
            ("typisdefined", b(true)),
            ("typdelim", ch(t.delim)),
            ("typrelid", oidv(relid)),
            ("typsubscript", Datum::Oid(if t.category == 'A' { 6179 } else { 0 })),
            ("typelem", oidv(t.elem)),
            ("typarray", oidv(t.array)),
            ("typinput", Datum::Oid(t.input)),
            ("typoutput", Datum::Oid(t.output)),
            ("typreceive", Datum::Oid(t.receive)),
            ("typsend", Datum::Oid(t.send)),
            ("typmodin", Datum::Oid(0)),
            ("typmodout", Datum::Oid(0)),
            ("typanalyze", Datum::Oid(0)),
            ("typalign", ch(t.align)),
            ("typstorage", ch(t.storage)),
            ("typnotnull", b(domain.is_some_and(|d| d.not_null))),
            ("typbasetype", oidv(domain.map_or(0, |d| d.base.oid))),
            ("typtypmod", Datum::Int4(domain.map_or(-1, |d| d.base.typmod))),
            ("typndims", Datum::Int4(0)),
            ("typcollation", oidv(t.collation)),
        ]);
    }
    Ok(())
}

/// pg_range: the built-in range types and the database's own (`ranges`).
fn pg_range(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for [typ, sub, multi, coll, opc, canonical, diff] in super::ranges::pg_range_rows(&cx.catalog.user_types) {
        out.push(vec![
            ("rngtypid", oidv(typ)),
            ("rngsubtype", oidv(sub)),
            ("rngmultitypid", oidv(multi)),
            ("rngcollation", oidv(coll)),
            ("rngsubopc", oidv(opc)),
            ("rngcanonical", Datum::Oid(canonical)),
            ("rngsubdiff", Datum::Oid(diff)),
        ]);
    }
    Ok(())
}

fn pg_database(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for d in cx.cluster.databases.values() {
        out.push(vec![
            ("oid", oidv(d.oid)),
            ("datname", name(&d.name)),
            ("datdba", oidv(d.owner)),
            ("encoding", Datum::Int4(6)),
            ("datlocprovider", ch('c')),
            ("datistemplate", b(d.is_template)),
            ("datallowconn", b(d.allow_connections)),
            ("datconnlimit", Datum::Int4(d.connection_limit)),
            ("datfrozenxid", Datum::Oid(0)),
            ("datminmxid", Datum::Oid(1)),
            ("dattablespace", oidv(1663)),
            ("datcollate", text(&d.collate)),
            // initdb revokes CREATE and TEMPORARY on the templates from PUBLIC (psql's `\l` shows it).
 ("datacl", if d.acl.is_some() {
                acl_datum(cx, d.acl.as_deref())
            } else if d.name == "template0" || d.name == "template1" {
                let owner = cx.cluster.role_name(d.owner);
                acl_array(&[&format!("=c/{owner}"), &format!("{owner}=CTc/{owner}")])
            } else {
                Datum::Null
            }),
            ("datctype", text(&d.ctype)),
        ]);
    }
    Ok(())
}

/// One row per database plus PostgreSQL's row for shared objects (datid
/// 0). Only the counters Tusk keeps are filled; the others read NULL.
fn pg_stat_database(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let row = |oid: Oid, datname: Datum| {
        let s = crate::stats::database(oid);
        vec![
            ("datid", oidv(oid)),
            ("datname", datname),
            ("temp_files", Datum::Int8(s.temp_files as i64)),
            ("temp_bytes", Datum::Int8(s.temp_bytes as i64)),
        ]
    };
    out.push(row(0, Datum::Null));
    for d in cx.cluster.databases.values() {
        out.push(row(d.oid, name(&d.name)));
    }
    Ok(())
}

/// Tusk's PL/pgSQL profiler: what the procedural languages counted per
/// function line while `tusk.plpgsql_profile` was on, server-wide.
fn tusk_plpgsql_profile(_cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for lang in crate::procedural::all_languages() {
        for l in lang.profile() {
            out.push(vec![
                ("funcoid", oidv(l.function)),
                ("function", text(&l.signature)),
                ("line", Datum::Int4(l.line)),
                ("source", text(&l.source)),
                ("calls", Datum::Int8(l.calls)),
                ("total_time", Datum::Float8(l.total_ms)),
                ("max_time", Datum::Float8(l.max_ms)),
            ]);
        }
    }
    Ok(())
}

/// One row per session, as PostgreSQL 15 shows client backends (Tusk has
/// no background processes to list).
fn pg_stat_activity(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let ts = |t: Option<i64>| t.map(Datum::TimestampTz).unwrap_or(Datum::Null);
    for a in &cx.activity {
        let db = cx.cluster.databases.values().find(|d| d.name == a.database);
        let role = cx.cluster.roles.values().find(|r| r.name == a.user);
        let (addr, port) = match a.client {
            Some(c) => (Datum::from_string(c.ip().to_string()), Datum::Int4(c.port() as i32)),
            None => (Datum::Null, Datum::Int4(-1)),
        };
        out.push(vec![
            ("datid", db.map(|d| oidv(d.oid)).unwrap_or(Datum::Null)),
            ("datname", name(&a.database)),
            ("pid", Datum::Int4(a.pid)),
            ("usesysid", role.map(|r| oidv(r.oid)).unwrap_or(Datum::Null)),
            ("usename", name(&a.user)),
            ("application_name", text(&a.application_name)),
            ("client_addr", addr),
            ("client_port", port),
            ("backend_start", Datum::TimestampTz(a.backend_start)),
            ("xact_start", ts(a.xact_start)),
            ("query_start", ts(a.query_start)),
            ("state_change", ts(a.state_change)),
            // Idle sessions (in a transaction or not) wait for their client.
            ("wait_event_type", match (a.state.starts_with("idle"), a.wait_event) {
                (true, _) => text("Client"),
                (false, Some((kind, _))) => text(kind),
                (false, None) => Datum::Null,
            }),
            ("wait_event", match (a.state.starts_with("idle"), a.wait_event) {
                (true, _) => text("ClientRead"),
                (false, Some((_, event))) => text(event),
                (false, None) => Datum::Null,
            }),
            ("state", text(a.state)),
            ("query", text(&a.query)),
            ("backend_type", text("client backend")),
        ]);
    }
    Ok(())
}

/// pg_locks: the SIREAD locks of serializable transactions, with
/// PostgreSQL's locktypes by granularity (a key range is shown as a page
/// lock, its nearest counterpart; Tusk has no page or tuple numbers to
/// show, so those columns are NULL). Locks of relations in other databases
/// are left out, as their names cannot be resolved here. Tusk has no
/// backend ids: a virtual transaction reads pid/serializable-xact-id.
fn pg_locks(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    // A primary key shares its table's storage: the table is named.
    let mut by_storage: HashMap<u32, Oid> = HashMap::new();
    for r in cx.catalog.relations.values() {
        let slot = by_storage.entry(r.storage_id).or_insert(r.oid);
        if r.index.is_none() {
            *slot = r.oid;
        }
    }
    for l in &cx.predicate_locks {
        let Some(&rel) = by_storage.get(&l.storage) else { continue };
        out.push(vec![
            ("locktype", text(l.granularity.locktype())),
            ("database", oidv(cx.database)),
            ("relation", oidv(rel)),
            ("virtualtransaction", text(&format!("{}/{}", l.pid.unwrap_or(-1), l.xact))),
            ("pid", l.pid.map(Datum::Int4).unwrap_or(Datum::Null)),
            ("mode", text("SIReadLock")),
            ("granted", b(true)),
            ("fastpath", b(false)),
        ]);
    }
    Ok(())
}

/// The session's named prepared statements, by name. Tusk plans once and
/// re-plans only when the catalog changes: every execution counts as a
/// use of the generic plan, which Tusk does not track yet.
fn pg_prepared_statements(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (n, p) in &cx.prepared {
        let types = p.parameter_types.iter().map(|&t| Datum::Oid(t)).collect();
        out.push(vec![
            ("name", text(n)),
            ("statement", text(&p.statement)),
            ("prepare_time", Datum::TimestampTz(p.prepare_time)),
            ("parameter_types", Datum::Array(std::sync::Arc::new(tusk_types::array::Array::from_vec(tusk_types::oid::REGTYPE, types)))),
            ("from_sql", b(p.from_sql)),
            ("generic_plans", Datum::Int8(0)),
            ("custom_plans", Datum::Int8(0)),
        ]);
    }
    Ok(())
}

fn role_row(r: &Role) -> SysRow {
    vec![
        ("oid", oidv(r.oid)),
        ("rolname", name(&r.name)),
        ("rolsuper", b(r.superuser)),
        ("rolinherit", b(r.inherit)),
        ("rolcreaterole", b(r.create_role)),
        ("rolcreatedb", b(r.create_db)),
        ("rolcanlogin", b(r.can_login)),
        ("rolreplication", b(r.replication)),
        ("rolbypassrls", b(r.bypass_rls)),
        ("rolconnlimit", Datum::Int4(r.connection_limit)),
        ("rolpassword", text("********")),
        ("rolvaliduntil", r.valid_until.map(Datum::TimestampTz).unwrap_or(Datum::Null)),
    ]
}

fn pg_roles(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in cx.cluster.roles.values() {
        out.push(role_row(r));
    }
    Ok(())
}

fn pg_authid(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in cx.cluster.roles.values() {
        let mut row = role_row(r);
        row.retain(|(n, _)| *n != "rolpassword");
        row.push(("rolpassword", r.password.as_deref().map(text).unwrap_or(Datum::Null)));
        out.push(row);
    }
    Ok(())
}

fn pg_auth_members(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (role, member, grantor, admin) in cx.cluster.auth_members() {
        out.push(vec![("roleid", oidv(role)), ("member", oidv(member)), ("grantor", oidv(grantor)), ("admin_option", b(admin))]);
    }
    Ok(())
}

fn pg_shdescription(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for ((class, obj), t) in &cx.cluster.shared_comments {
        out.push(vec![("objoid", oidv(*obj)), ("classoid", oidv(*class)), ("description", text(t))]);
    }
    Ok(())
}

fn pg_user(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in cx.cluster.roles.values().filter(|r| r.can_login) {
        out.push(vec![
            ("usename", name(&r.name)),
            ("usesysid", oidv(r.oid)),
            ("usecreatedb", b(r.create_db)),
            ("usesuper", b(r.superuser)),
            ("userepl", b(r.replication)),
            ("usebypassrls", b(r.bypass_rls)),
            ("passwd", text("********")),
            ("valuntil", r.valid_until.map(Datum::TimestampTz).unwrap_or(Datum::Null)),
        ]);
    }
    Ok(())
}

fn pg_settings(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for d in settings::all_defs() {
        let vartype = match d.vartype {
            settings::VarType::Bool => "bool",
            settings::VarType::Integer => "integer",
            settings::VarType::Real => "real",
            settings::VarType::Enum => "enum",
            settings::VarType::String => "string",
        };
        let raw = cx.settings.raw(d);
        let opt = |s: &str| if s.is_empty() { Datum::Null } else { text(s) };
        out.push(vec![
            ("name", text(&d.name)),
            ("setting", text(&raw)),
            ("unit", opt(&d.unit)),
            ("category", text(&d.category)),
            ("short_desc", text(&d.short_desc)),
            ("extra_desc", opt(&d.extra_desc)),
            ("context", text(&d.context)),
            ("vartype", text(vartype)),
            ("source", text(if raw == d.boot { "default" } else { "session" })),
            ("min_val", opt(&d.min)),
            ("max_val", opt(&d.max)),
            ("enumvals", text_array(&d.enumvals)),
            ("boot_val", text(&d.boot)),
            ("reset_val", text(&d.boot)),
            ("pending_restart", b(false)),
        ]);
    }
    Ok(())
}

fn pg_tables(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let referenced = referenced_tables(cx);
    for t in all().iter().filter(|t| t.relkind == 'r' && t.namespace == PG_CATALOG_NAMESPACE) {
        out.push(vec![
            ("schemaname", name("pg_catalog")),
            ("tablename", name(&t.name)),
            ("tableowner", name("postgres")),
            ("hasindexes", b(true)),
            ("hasrules", b(false)),
            ("hastriggers", b(false)),
            ("rowsecurity", b(false)),
        ]);
    }
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Table) {
        out.push(vec![
            ("schemaname", name(cx.catalog.namespace_name(r.namespace))),
            ("tablename", name(&r.name)),
            ("tableowner", name(&cx.cluster.role_name(r.owner))),
            ("hasindexes", b(!r.indexes.is_empty())),
            ("hasrules", b(false)),
            ("hastriggers", b(!r.triggers.is_empty() || has_fk_triggers(r, &referenced))),
            ("rowsecurity", b(false)),
        ]);
    }
    Ok(())
}

fn pg_views(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::View) {
        out.push(vec![
            ("schemaname", name(cx.catalog.namespace_name(r.namespace))),
            ("viewname", name(&r.name)),
            ("viewowner", name(&cx.cluster.role_name(r.owner))),
            ("definition", text(&r.view.as_ref().map(|v| format!(" {};", v.query)).unwrap_or_default())),
        ]);
    }
    Ok(())
}

fn pg_indexes(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Index) {
        let Some(info) = &r.index else { continue };
        let Some(table) = cx.catalog.relation(info.table) else { continue };
        out.push(vec![
            ("schemaname", name(cx.catalog.namespace_name(r.namespace))),
            ("tablename", name(&table.name)),
            ("indexname", name(&r.name)),
            ("tablespace", Datum::Null),
            ("indexdef", text(&cx.env.and_then(|env| crate::functions::catalog_fns::index_definition(env, r.oid, 0, false)).unwrap_or_else(|| index_definition(cx.catalog, r)))),
        ]);
    }
    Ok(())
}

fn pg_sequence(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        if let Some(s) = &r.sequence {
            out.push(vec![
                ("seqrelid", oidv(r.oid)),
                ("seqtypid", oidv(s.type_oid)),
                ("seqstart", Datum::Int8(s.start)),
                ("seqincrement", Datum::Int8(s.increment)),
                ("seqmax", Datum::Int8(s.max)),
                ("seqmin", Datum::Int8(s.min)),
                ("seqcache", Datum::Int8(s.cache)),
                ("seqcycle", b(s.cycle)),
            ]);
        }
    }
    Ok(())
}

fn pg_sequences(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        if let Some(s) = &r.sequence {
            out.push(vec![
                ("schemaname", name(cx.catalog.namespace_name(r.namespace))),
                ("sequencename", name(&r.name)),
                ("sequenceowner", name(&cx.cluster.role_name(r.owner))),
                ("data_type", Datum::Oid(s.type_oid)),
                ("start_value", Datum::Int8(s.start)),
                ("min_value", Datum::Int8(s.min)),
                ("max_value", Datum::Int8(s.max)),
                ("increment_by", Datum::Int8(s.increment)),
                ("cycle", b(s.cycle)),
                ("cache_size", Datum::Int8(s.cache)),
            ]);
        }
    }
    Ok(())
}

fn pg_index(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let toast_indexes: Vec<Relation> = user_relations(cx).into_iter().filter_map(|r| toast_relations(r)).map(|(_, i)| i).collect();
    let indexes = user_relations(cx).into_iter().map(|r| &**r).filter(|r| r.kind == RelKind::Index);
    for r in indexes.chain(toast_indexes.iter()) {
        let Some(info) = &r.index else { continue };
        let keys: Vec<i16> = info.keys.iter().map(|k| k.attnum).chain(info.include.iter().copied()).collect();
        let options: Vec<i16> = info.keys.iter().map(|k| (k.desc as i16) | ((k.nulls_first as i16) << 1)).collect();
        let exprs: Vec<String> = info.keys.iter().filter_map(|k| k.expr.clone()).collect();
        let (classes, collations) = index_key_classes(cx, &r, info);
        out.push(vec![
            ("indexrelid", oidv(r.oid)),
            ("indrelid", oidv(info.table)),
            ("indnatts", Datum::Int2(keys.len() as i16)),
            ("indnkeyatts", Datum::Int2(info.keys.len() as i16)),
            ("indisunique", b(info.unique && info.exclusion.is_empty())),
            ("indnullsnotdistinct", b(info.nulls_not_distinct)),
            ("indisprimary", b(info.primary)),
            ("indisexclusion", b(!info.exclusion.is_empty())),
            ("indimmediate", b(!info.deferrable)),
            ("indisclustered", b(info.cluster_on)),
            ("indisvalid", b(true)),
            ("indcheckxmin", b(false)),
            ("indisready", b(true)),
            ("indislive", b(true)),
            ("indisreplident", b(info.replica_identity)),
            ("indkey", int2_vector(&keys)),
            ("indcollation", oid_vector(&collations)),
            ("indclass", oid_vector(&classes)),
            ("indoption", int2_vector(&options)),
            ("indexprs", if exprs.is_empty() { Datum::Null } else { text(&exprs.join(", ")) }),
            ("indpred", info.predicate.as_deref().map(text).unwrap_or(Datum::Null)),
        ]);
    }
    Ok(())
}

/// pg_index.indclass and indcollation: each key's operator class (the one
/// CREATE INDEX named, else the access method's default for the key's
/// type) and collation (the one named, else the column's, or for an
/// expression its type's).
pub fn index_key_classes(cx: &SysCx, index: &Relation, info: &IndexInfo) -> (Vec<Oid>, Vec<Oid>) {
    let b = builtins();
    let am = super::builtin::Builtins::index_am_oid(&info.method);
    let table = cx.catalog.relation(info.table);
    let mut classes = Vec::with_capacity(info.keys.len());
    let mut collations = Vec::with_capacity(info.keys.len());
    for (i, k) in info.keys.iter().enumerate() {
        let (ty, coll) = match table.filter(|t| k.attnum > 0 && (k.attnum as usize) <= t.columns.len()) {
            Some(t) => {
                let c = t.column(k.attnum);
                (c.type_oid, c.collation)
            }
            None => {
                let ty = index.columns.get(i).map(|c| c.type_oid).unwrap_or(0);
                (ty, b.type_info(ty).map(|t| t.collation).unwrap_or(0))
            }
        };
        classes.push(if k.opclass != 0 { k.opclass } else { b.default_opclass(am, ty) });
        collations.push(if k.collation != 0 { k.collation } else { coll });
    }
    (classes, collations)
}

fn pg_constraint(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        for c in &r.constraints {
            let fk = c.foreign.as_ref();
            out.push(vec![
                ("oid", oidv(c.oid)),
                ("conname", name(&c.name)),
                ("connamespace", oidv(r.namespace)),
                ("contype", ch(c.kind.code())),
                ("condeferrable", b(c.deferrable)),
                ("condeferred", b(c.deferred)),
                ("convalidated", b(c.validated)),
                ("conrelid", oidv(r.oid)),
                ("contypid", oidv(0)),
                ("conindid", oidv(c.index)),
                ("conparentid", oidv(0)),
                ("confrelid", oidv(fk.map(|f| f.ref_table).unwrap_or(0))),
                ("confupdtype", ch(fk.map(|f| f.on_update.code()).unwrap_or(' '))),
                ("confdeltype", ch(fk.map(|f| f.on_delete.code()).unwrap_or(' '))),
                ("confmatchtype", ch(fk.map(|f| f.match_type).unwrap_or(' '))),
                ("conislocal", b(c.is_local)),
                ("coninhcount", Datum::Int4(c.inhcount)),
                ("connoinherit", b(c.no_inherit)),
                ("conkey", if c.columns.is_empty() { Datum::Null } else { int2_array(&c.columns) }),
                ("confkey", fk.map(|f| int2_array(&f.ref_columns)).unwrap_or(Datum::Null)),
                ("conbin", c.check.as_deref().map(text).unwrap_or(Datum::Null)),
                ("conexclop", exclusion_operators(cx, c)),
            ]);
        }
    }
    Ok(())
}

/// pg_attrdef.adbin: PostgreSQL keeps the cooked expression (a node tree
/// carrying the column's type); Tusk keeps the column's number with the
/// default's text, which is what pg_get_expr needs to print it as
/// PostgreSQL does. Clients treat the value as opaque.
pub fn default_node_tree(attnum: i16, text: &str) -> String {
    format!("{{DEFAULT :adnum {attnum} :expr {text}}}")
}

/// The column number and default text of a `default_node_tree` value.
pub fn parse_default_node_tree(tree: &str) -> Option<(i16, &str)> {
    let rest = tree.strip_prefix("{DEFAULT :adnum ")?.strip_suffix('}')?;
    let (num, expr) = rest.split_once(" :expr ")?;
    Some((num.parse().ok()?, expr))
}

fn pg_attrdef(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        for (i, c) in r.columns.iter().enumerate() {
            if let Some(d) = c.stored_default() {
                out.push(vec![
                    ("oid", oidv(super::depend::attrdef_oid(r.oid, i as i16 + 1))),
                    ("adrelid", oidv(r.oid)),
                    ("adnum", Datum::Int2(i as i16 + 1)),
                    ("adbin", text(&default_node_tree(i as i16 + 1, d))),
                ]);
            }
        }
    }
    Ok(())
}

/// Comments PostgreSQL's initdb gives built-in objects that clients show
/// (psql's `\dx`, `\dn+`): (class oid, object oid, sub id, text).
pub const BUILTIN_COMMENTS: &[(Oid, Oid, i32, &str)] = &[
    (2601, 2, 0, "heap table access method"),
    (2601, 403, 0, "b-tree index access method"),
    (2601, 405, 0, "hash index access method"),
    (2601, 783, 0, "GiST index access method"),
    (2601, 2742, 0, "GIN index access method"),
    (2601, 4000, 0, "SP-GiST index access method"),
    (2601, 3580, 0, "block range index (BRIN) access method"),
    (2612, 12, 0, "built-in functions"),
    (2612, 13, 0, "dynamically-loaded C functions"),
    (2612, 14, 0, "SQL-language functions"),
    (2612, PLPGSQL_LANGUAGE, 0, "PL/pgSQL procedural language"),
    (2615, PG_CATALOG_NAMESPACE, 0, "system catalog schema"),
    (2615, PG_TOAST_NAMESPACE, 0, "reserved schema for TOAST tables"),
    (2615, PUBLIC_NAMESPACE, 0, "standard public schema"),
    (3079, PLPGSQL_EXTENSION, 0, "PL/pgSQL procedural language"),
];

/// The OIDs Tusk gives the plpgsql extension and language rows.
pub const PLPGSQL_EXTENSION: Oid = 13_000 + 181;
pub const PLPGSQL_LANGUAGE: Oid = 13_000 + 182;

/// initdb's comments on built-in functions, operators and types
/// (recorded from PostgreSQL 15 by scripts/gen-builtin-catalog.sh), with
/// those of BUILTIN_COMMENTS: (class oid, object oid, sub id) → text.
fn builtin_descriptions() -> &'static std::collections::BTreeMap<(Oid, Oid, i32), &'static str> {
    static MAP: OnceLock<std::collections::BTreeMap<(Oid, Oid, i32), &'static str>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: std::collections::BTreeMap<(Oid, Oid, i32), &'static str> =
            BUILTIN_COMMENTS.iter().map(|&(c, o, s, t)| ((c, o, s), t)).collect();
        for line in include_str!("builtin/pg_description.tsv").lines() {
            let mut f = line.splitn(4, '\t');
            let (Some(obj), Some(class), Some(sub), Some(t)) = (f.next(), f.next(), f.next(), f.next()) else { continue };
            if let (Ok(obj), Ok(class), Ok(sub)) = (obj.parse(), class.parse(), sub.parse()) {
                m.insert((class, obj, sub), t);
            }
        }
        m
    })
}

/// A built-in object's comment, in any catalog when `class` is 0.
pub fn builtin_comment(class: Oid, obj: Oid, sub: i32) -> Option<&'static str> {
    let m = builtin_descriptions();
    if class != 0 {
        return m.get(&(class, obj, sub)).copied();
    }
    m.iter().find(|((_, o, s), _)| *o == obj && *s == sub).map(|(_, t)| *t)
}

/// A comment on an object: the user's, else a built-in one.
pub fn comment(catalog: &DbCatalog, class: Oid, obj: Oid, sub: i32) -> Option<&str> {
    catalog.comments.get(&(class, obj, sub)).map(String::as_str).or_else(|| builtin_comment(class, obj, sub))
}

fn pg_description(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (&(class, obj, sub), &t) in builtin_descriptions() {
        if !cx.catalog.comments.contains_key(&(class, obj, sub)) {
            out.push(vec![("objoid", oidv(obj)), ("classoid", oidv(class)), ("objsubid", Datum::Int4(sub)), ("description", text(t))]);
        }
    }
    for ((class, obj, sub), t) in &cx.catalog.comments {
        out.push(vec![("objoid", oidv(*obj)), ("classoid", oidv(*class)), ("objsubid", Datum::Int4(*sub)), ("description", text(t))]);
    }
    Ok(())
}

fn pg_publication(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for p in cx.catalog.publications.values() {
        out.push(vec![
            ("oid", oidv(p.oid)),
            ("pubname", name(&p.name)),
            ("pubowner", oidv(p.owner)),
            ("puballtables", b(p.all_tables)),
            ("pubinsert", b(p.insert)),
            ("pubupdate", b(p.update)),
            ("pubdelete", b(p.delete)),
            ("pubtruncate", b(p.truncate)),
            ("pubviaroot", b(p.via_root)),
        ]);
    }
    Ok(())
}

fn pg_publication_rel(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for p in cx.catalog.publications.values() {
        for t in &p.tables {
            out.push(vec![
                ("oid", oidv(t.oid)),
                ("prpubid", oidv(p.oid)),
                ("prrelid", oidv(t.relid)),
                // The row filter's text is what pg_get_expr reads back.
                ("prqual", t.qual.as_deref().map(text).unwrap_or(Datum::Null)),
                ("prattrs", t.columns.as_deref().map(int2_vector).unwrap_or(Datum::Null)),
            ]);
        }
    }
    Ok(())
}

fn pg_publication_namespace(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for p in cx.catalog.publications.values() {
        for n in &p.schemas {
            out.push(vec![("oid", oidv(n.oid)), ("pnpubid", oidv(p.oid)), ("pnnspid", oidv(n.nspid))]);
        }
    }
    Ok(())
}

/// The tables a publication publishes, as pg_get_publication_tables lists
/// them: FOR ALL TABLES means every permanent user table; otherwise the
/// tables it names, then those of the schemas it names, each once, with
/// the column list and row filter of the table's own member row.
pub fn publication_tables<'a>(cat: &'a DbCatalog, p: &'a Publication) -> Vec<(&'a Arc<Relation>, Option<&'a PublishedTable>)> {
    let publishable = |r: &Relation| r.kind == RelKind::Table && r.persistence == 'p' && r.oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID;
    let mut rels: Vec<&Arc<Relation>> = cat.relations.values().filter(|r| publishable(r)).collect();
    rels.sort_by_key(|r| r.oid);
    let mut out = Vec::new();
    if p.all_tables {
        return rels.into_iter().map(|r| (r, None)).collect();
    }
    for t in &p.tables {
        if let Some(r) = cat.relations.get(&t.relid).filter(|r| publishable(r)) {
            out.push((r, Some(t)));
        }
    }
    for n in &p.schemas {
        for r in rels.iter().filter(|r| r.namespace == n.nspid) {
            if !out.iter().any(|(o, _)| o.oid == r.oid) {
                out.push((r, None));
            }
        }
    }
    out
}

fn pg_publication_tables(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for p in cx.catalog.publications.values() {
        for (r, member) in publication_tables(cx.catalog, p) {
            let cols: Vec<String> = match member.and_then(|m| m.columns.as_ref()) {
                Some(list) => r.live_columns().filter(|(a, _)| list.contains(a)).map(|(_, c)| c.name.clone()).collect(),
                None => r.live_columns().map(|(_, c)| c.name.clone()).collect(),
            };
            let rowfilter = match (member.and_then(|m| m.qual.as_deref()), cx.env) {
                (Some(q), Some(env)) => text(&crate::functions::relation_expr_text(env, r, q)),
                (Some(q), None) => text(q),
                (None, _) => Datum::Null,
            };
            out.push(vec![
                ("pubname", name(&p.name)),
                ("schemaname", name(cx.catalog.namespace_name(r.namespace))),
                ("tablename", name(&r.name)),
                ("attnames", if cols.is_empty() { Datum::Null } else { Datum::Array(Arc::new(Array::from_vec(oid::NAME, cols.iter().map(|c| Datum::text(c)).collect()))) }),
                ("rowfilter", rowfilter),
            ]);
        }
    }
    Ok(())
}

/// pg_subscription: subskiplsn is shown in pg_lsn's text form (Tusk has
/// no pg_lsn type; the column is text).
fn pg_subscription(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for sub in cx.catalog.subscriptions.values() {
        out.push(vec![
            ("oid", oidv(sub.oid)),
            ("subdbid", oidv(cx.database)),
            ("subskiplsn", text(&format!("{:X}/{:X}", sub.skip_lsn >> 32, sub.skip_lsn & 0xffff_ffff))),
            ("subname", name(&sub.name)),
            ("subowner", oidv(sub.owner)),
            ("subenabled", b(sub.enabled)),
            ("subbinary", b(sub.binary)),
            ("substream", b(sub.streaming)),
            ("subtwophasestate", ch(sub.two_phase)),
            ("subdisableonerr", b(sub.disable_on_error)),
            ("subconninfo", text(&sub.conninfo)),
            ("subslotname", sub.slot_name.as_deref().map(name).unwrap_or(Datum::Null)),
            ("subsynccommit", text(&sub.synchronous_commit)),
            ("subpublications", Datum::Array(Arc::new(Array::from_vec(oid::TEXT, sub.publications.iter().map(|p| Datum::text(p)).collect())))),
        ]);
    }
    Ok(())
}

/// pg_depend: the dependencies PostgreSQL records between the objects of
/// this database (derived from the catalog; see `depend`).
fn pg_depend(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for d in cx.catalog.dependencies().rows() {
        out.push(vec![
            ("classid", oidv(d.object.class)),
            ("objid", oidv(d.object.oid)),
            ("objsubid", Datum::Int4(d.object.sub)),
            ("refclassid", oidv(d.referenced.class)),
            ("refobjid", oidv(d.referenced.oid)),
            ("refobjsubid", Datum::Int4(d.referenced.sub)),
            ("deptype", ch(d.deptype.code())),
        ]);
    }
    Ok(())
}

/// pg_shdepend: what depends on roles, for this database's objects and
/// the cluster's databases (the objects of other databases are not shown:
/// their catalogs are not loaded here).
fn pg_shdepend(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let rows = super::depend::shared_dependencies_of_database(cx.catalog)
        .into_iter()
        .chain(super::depend::shared_dependencies_of_cluster(cx.cluster));
    for d in rows {
        out.push(vec![
            ("dbid", oidv(d.dbid)),
            ("classid", oidv(d.object.class)),
            ("objid", oidv(d.object.oid)),
            ("objsubid", Datum::Int4(d.object.sub)),
            ("refclassid", oidv(super::depend::PG_AUTHID)),
            ("refobjid", oidv(d.role)),
            ("deptype", ch(d.deptype.code())),
        ]);
    }
    Ok(())
}

/// pg_rewrite: the _RETURN rule of each view (the object its pg_depend
/// rows name). Tusk keeps a view's query as text, not as a rule's node
/// tree: ev_action is left NULL.
fn pg_rewrite(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::View) {
        out.push(vec![
            ("oid", oidv(super::depend::rule_oid(r))),
            ("rulename", name("_RETURN")),
            ("ev_class", oidv(r.oid)),
            ("ev_type", ch('1')),
            ("ev_enabled", ch('O')),
            ("is_instead", b(true)),
            ("ev_qual", text("<>")),
        ]);
    }
    Ok(())
}

/// pg_trigger: the triggers CREATE TRIGGER stored with their tables.
fn pg_trigger(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        for t in &r.triggers {
            let mut args = Vec::new();
            for a in &t.args {
                args.extend_from_slice(a.as_bytes());
                args.push(0);
            }
            let opt_name = |n: &Option<String>| n.as_deref().map(name).unwrap_or(Datum::Null);
            out.push(vec![
                ("oid", oidv(t.oid)),
                ("tgrelid", oidv(r.oid)),
                ("tgparentid", oidv(0)),
                ("tgname", name(&t.name)),
                ("tgfoid", oidv(t.function)),
                ("tgtype", Datum::Int2(t.tgtype)),
                ("tgenabled", ch(t.enabled)),
                ("tgisinternal", b(false)),
                ("tgconstrrelid", oidv(t.constrrel)),
                ("tgconstrindid", oidv(0)),
                ("tgconstraint", oidv(t.constraint)),
                ("tgdeferrable", b(t.deferrable)),
                ("tginitdeferred", b(t.initdeferred)),
                ("tgnargs", Datum::Int2(t.args.len() as i16)),
                ("tgattr", int2_vector(&t.columns)),
                ("tgargs", Datum::Bytea(Arc::from(args))),
                ("tgqual", t.when.as_deref().map(text).unwrap_or(Datum::Null)),
                ("tgoldtable", opt_name(&t.old_table)),
                ("tgnewtable", opt_name(&t.new_table)),
            ]);
        }
    }
    Ok(())
}

/// PostgreSQL 15's built-in operator classes (recorded by
/// scripts/gen-builtin-catalog.sh); Tusk's indexes use the default btree
/// class of each column's type.
fn pg_opclass(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for line in include_str!("builtin/pg_opclass.tsv").lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [oid, method, opcname, nsp, owner, family, intype, default, keytype] = f[..] else { continue };
        let o = |s: &str| oidv(s.parse().unwrap_or(0));
        out.push(vec![
            ("oid", o(oid)),
            ("opcmethod", o(method)),
            ("opcname", name(opcname)),
            ("opcnamespace", o(nsp)),
            ("opcowner", o(owner)),
            ("opcfamily", o(family)),
            ("opcintype", o(intype)),
            ("opcdefault", b(default == "t")),
            ("opckeytype", o(keytype)),
        ]);
    }
    Ok(())
}

/// Rows recorded from PostgreSQL 15's catalog by gen-builtin-catalog.sh:
/// each line's tab-separated fields under the given column names; a name
/// ending in `:i2` is an int2 column, `:c` a "char" one, the rest OIDs or names.
fn recorded_rows(tsv: &'static str, columns: &[&'static str], out: &mut Vec<SysRow>) {
    for line in tsv.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != columns.len() {
            continue;
        }
        let row = columns
            .iter()
            .zip(&f)
            .map(|(&c, &v)| match c.split_once(':') {
                Some((n, "i2")) => (n, Datum::Int2(v.parse().unwrap_or(0))),
                Some((n, "c")) => (n, ch(v.chars().next().unwrap_or(' '))),
                Some((n, _)) => (n, name(v)),
                None => (c, oidv(v.parse().unwrap_or(0))),
            })
            .collect();
        out.push(row);
    }
}

/// PostgreSQL 15's operator families, their operators and support
/// functions (the built-in ones; Tusk's indexes use their btree and hash
/// entries through the default operator classes).
fn pg_opfamily(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    recorded_rows(include_str!("builtin/pg_opfamily.tsv"), &["oid", "opfmethod", "opfname:n", "opfnamespace", "opfowner"], out);
    Ok(())
}

fn pg_amop(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    recorded_rows(
        include_str!("builtin/pg_amop.tsv"),
        &["oid", "amopfamily", "amoplefttype", "amoprighttype", "amopstrategy:i2", "amoppurpose:c", "amopopr", "amopmethod", "amopsortfamily"],
        out,
    );
    Ok(())
}

fn pg_amproc(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    recorded_rows(include_str!("builtin/pg_amproc.tsv"), &["oid", "amprocfamily", "amproclefttype", "amprocrighttype", "amprocnum:i2", "amproc"], out);
    Ok(())
}

fn pg_am(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    // PostgreSQL 15's access methods with their handler functions' OIDs.
    for (o, n, handler, t) in [
        (2u32, "heap", 3u32, 't'),
        (403, "btree", 330, 'i'),
        (405, "hash", 331, 'i'),
        (783, "gist", 332, 'i'),
        (2742, "gin", 333, 'i'),
        (4000, "spgist", 334, 'i'),
        (3580, "brin", 335, 'i'),
    ] {
        out.push(vec![("oid", oidv(o)), ("amname", name(n)), ("amhandler", Datum::Oid(handler)), ("amtype", ch(t))]);
    }
    Ok(())
}

fn pg_proc(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let bi = builtins();
    let mut procs: Vec<&super::builtin::ProcInfo> = bi.procs.values().collect();
    procs.sort_by_key(|p| p.oid);
    for p in procs {
        out.push(vec![
            ("oid", oidv(p.oid)),
            ("proname", name(&p.name)),
            ("pronamespace", oidv(p.namespace)),
            ("proowner", oidv(BOOTSTRAP_SUPERUSER)),
            ("prolang", oidv(if p.src.starts_with("select") || p.src.is_empty() { 14 } else { 12 })),
            ("procost", Datum::Float4(p.cost)),
            ("prorows", Datum::Float4(p.rows)),
            ("provariadic", oidv(p.variadic)),
            ("prosupport", Datum::Oid(0)),
            ("prokind", ch(p.kind)),
            ("prosecdef", b(false)),
            ("proleakproof", b(false)),
            ("proisstrict", b(p.strict)),
            ("proretset", b(p.retset)),
            ("provolatile", ch(p.volatility)),
            ("proparallel", ch(p.parallel)),
            ("pronargs", Datum::Int2(p.argtypes.len() as i16)),
            ("pronargdefaults", Datum::Int2(p.nargdefaults as i16)),
            ("prorettype", oidv(p.rettype)),
            ("proargtypes", oid_vector(&p.argtypes)),
            ("prosrc", text(&p.src)),
        ]);
    }
    for f in cx.catalog.functions.values() {
        let p = cx.catalog.proc(f.oid).cloned().unwrap_or_else(|| f.proc_info());
        let lang = match f.language.as_str() {
            "internal" => 12,
            "c" => 13,
            "sql" => 14,
            _ => PLPGSQL_LANGUAGE,
        };
        let all_in = f.params.iter().all(|q| q.mode == 'i');
        let named = f.params.iter().any(|q| !q.name.is_empty());
        out.push(vec![
            ("oid", oidv(f.oid)),
            ("proname", name(&f.name)),
            ("pronamespace", oidv(f.namespace)),
            ("proowner", oidv(f.owner)),
            ("prolang", oidv(lang)),
            ("procost", Datum::Float4(f.cost)),
            ("prorows", Datum::Float4(f.rows)),
            ("provariadic", oidv(p.variadic)),
            ("prosupport", Datum::Oid(0)),
            ("prokind", ch(f.kind)),
            ("prosecdef", b(f.security_definer)),
            ("proleakproof", b(f.leakproof)),
            ("proisstrict", b(f.strict)),
            ("proretset", b(f.retset)),
            ("provolatile", ch(f.volatility)),
            ("proparallel", ch(f.parallel)),
            ("pronargs", Datum::Int2(p.argtypes.len() as i16)),
            ("pronargdefaults", Datum::Int2(p.nargdefaults as i16)),
            ("prorettype", oidv(f.ret_type)),
            ("proargtypes", oid_vector(&p.argtypes)),
            ("proallargtypes", if all_in { Datum::Null } else { oid_array(&f.params.iter().map(|q| q.type_oid).collect::<Vec<_>>()) }),
            ("proargmodes", if all_in { Datum::Null } else { char_array(&f.params.iter().map(|q| q.mode).collect::<Vec<_>>()) }),
            ("proargnames", if named { text_array(&f.params.iter().map(|q| q.name.clone()).collect::<Vec<_>>()) } else { Datum::Null }),
            ("proargdefaults", if p.nargdefaults > 0 { text(&p.arg_defaults) } else { Datum::Null }),
            ("prosrc", text(&f.src)),
            ("prosqlbody", f.sql_body.as_deref().map(text).unwrap_or(Datum::Null)),
            ("proconfig", if f.config.is_empty() { Datum::Null } else { text_array(&f.config) }),
            ("proacl", acl_datum(cx, f.acl.as_deref())),
        ]);
    }
    Ok(())
}

fn pg_operator(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let bi = builtins();
    let mut ops: Vec<&super::builtin::OperatorInfo> = bi.operators.values().collect();
    ops.sort_by_key(|o| o.oid);
    for o in ops {
        out.push(vec![
            ("oid", oidv(o.oid)),
            ("oprname", name(&o.name)),
            ("oprnamespace", oidv(PG_CATALOG_NAMESPACE)),
            ("oprowner", oidv(BOOTSTRAP_SUPERUSER)),
            ("oprkind", ch(o.kind)),
            ("oprcanmerge", b(false)),
            ("oprcanhash", b(false)),
            ("oprleft", oidv(o.left)),
            ("oprright", oidv(o.right)),
            ("oprresult", oidv(o.result)),
            ("oprcom", oidv(o.commutator)),
            ("oprnegate", oidv(o.negator)),
            ("oprcode", Datum::Oid(o.proc)),
        ]);
    }
    for o in cx.catalog.user_ops.operators.values() {
        out.push(vec![
            ("oid", oidv(o.oid)),
            ("oprname", name(&o.name)),
            ("oprnamespace", oidv(o.namespace)),
            ("oprowner", oidv(o.owner)),
            ("oprkind", ch(o.kind())),
            ("oprcanmerge", b(o.can_merge)),
            ("oprcanhash", b(o.can_hash)),
            ("oprleft", oidv(o.left)),
            ("oprright", oidv(o.right)),
            ("oprresult", oidv(o.result)),
            ("oprcom", oidv(o.commutator)),
            ("oprnegate", oidv(o.negator)),
            ("oprcode", Datum::Oid(o.proc)),
            ("oprrest", Datum::Oid(o.restrict)),
            ("oprjoin", Datum::Oid(o.join)),
        ]);
    }
    Ok(())
}

fn pg_aggregate(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let bi = builtins();
    let mut rows: Vec<&super::operator::Aggregate> = bi.aggregates.values().filter_map(|a| a.row.as_ref()).collect();
    rows.sort_by_key(|a| a.fnoid);
    rows.extend(cx.catalog.user_ops.aggregates.values());
    let opt = |v: &Option<String>| v.as_deref().map(text).unwrap_or(Datum::Null);
    for a in rows {
        out.push(vec![
            ("aggfnoid", Datum::Oid(a.fnoid)),
            ("aggkind", ch(a.kind)),
            ("aggnumdirectargs", Datum::Int2(a.num_direct_args)),
            ("aggtransfn", Datum::Oid(a.transfn)),
            ("aggfinalfn", Datum::Oid(a.finalfn)),
            ("aggcombinefn", Datum::Oid(a.combinefn)),
            ("aggserialfn", Datum::Oid(a.serialfn)),
            ("aggdeserialfn", Datum::Oid(a.deserialfn)),
            ("aggmtransfn", Datum::Oid(a.mtransfn)),
            ("aggminvtransfn", Datum::Oid(a.minvtransfn)),
            ("aggmfinalfn", Datum::Oid(a.mfinalfn)),
            ("aggfinalextra", b(a.finalextra)),
            ("aggmfinalextra", b(a.mfinalextra)),
            ("aggfinalmodify", ch(a.finalmodify)),
            ("aggmfinalmodify", ch(a.mfinalmodify)),
            ("aggsortop", oidv(a.sortop)),
            ("aggtranstype", oidv(a.transtype)),
            ("aggtransspace", Datum::Int4(a.transspace)),
            ("aggmtranstype", oidv(a.mtranstype)),
            ("aggmtransspace", Datum::Int4(a.mtransspace)),
            ("agginitval", opt(&a.initval)),
            ("aggminitval", opt(&a.minitval)),
        ]);
    }
    Ok(())
}

fn pg_cast(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let mut casts: Vec<&super::builtin::CastInfo> = builtins().casts.values().collect();
    casts.sort_by_key(|c| (c.source, c.target));
    for c in casts {
        out.push(vec![
            ("castsource", oidv(c.source)),
            ("casttarget", oidv(c.target)),
            ("castfunc", oidv(c.func)),
            ("castcontext", ch(c.context)),
            ("castmethod", ch(c.method)),
        ]);
    }
    for c in cx.catalog.user_ops.casts.values() {
        out.push(vec![
            ("oid", oidv(c.oid)),
            ("castsource", oidv(c.source)),
            ("casttarget", oidv(c.target)),
            ("castfunc", oidv(c.func)),
            ("castcontext", ch(c.context)),
            ("castmethod", ch(c.method)),
        ]);
    }
    Ok(())
}

fn pg_collation(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n, p, encoding, collate) in COLLATIONS {
        out.push(vec![
            ("oid", oidv(o)),
            ("collname", name(n)),
            ("collnamespace", oidv(PG_CATALOG_NAMESPACE)),
            ("collowner", oidv(BOOTSTRAP_SUPERUSER)),
            ("collprovider", ch(p)),
            ("collisdeterministic", b(true)),
            ("collencoding", Datum::Int4(encoding)),
            ("collcollate", if o == 100 { Datum::Null } else { text(collate) }),
            ("collctype", if o == 100 { Datum::Null } else { text(collate) }),
        ]);
    }
    Ok(())
}

// Text search objects: the built-in default parser, the simple and snowball
// templates, and the configurations Tusk implements (simple, english; see
// functions/tsearch.rs), with PostgreSQL's OIDs and token mappings.

fn pg_ts_parser(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    out.push(vec![
        ("oid", oidv(3722)),
        ("prsname", name("default")),
        ("prsnamespace", oidv(PG_CATALOG_NAMESPACE)),
        ("prsstart", oidv(3717)),
        ("prstoken", oidv(3718)),
        ("prsend", oidv(3719)),
        ("prsheadline", oidv(3720)),
        ("prslextype", oidv(3721)),
    ]);
    Ok(())
}

fn pg_ts_template(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n, init, lexize) in [(3727u32, "simple", 3725u32, 3726u32), (13150, "snowball", 13148, 13149)] {
        out.push(vec![("oid", oidv(o)), ("tmplname", name(n)), ("tmplnamespace", oidv(PG_CATALOG_NAMESPACE)), ("tmplinit", oidv(init)), ("tmpllexize", oidv(lexize))]);
    }
    Ok(())
}

fn pg_ts_dict(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n, tmpl, opt) in [(3765u32, "simple", 3727u32, None), (13163, "english_stem", 13150, Some("language = 'english', stopwords = 'english'"))] {
        out.push(vec![
            ("oid", oidv(o)),
            ("dictname", name(n)),
            ("dictnamespace", oidv(PG_CATALOG_NAMESPACE)),
            ("dictowner", oidv(BOOTSTRAP_SUPERUSER)),
            ("dicttemplate", oidv(tmpl)),
            ("dictinitoption", opt.map(text).unwrap_or(Datum::Null)),
        ]);
    }
    Ok(())
}

fn pg_ts_config(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n) in [(3748u32, "simple"), (13164, "english")] {
        out.push(vec![("oid", oidv(o)), ("cfgname", name(n)), ("cfgnamespace", oidv(PG_CATALOG_NAMESPACE)), ("cfgowner", oidv(BOOTSTRAP_SUPERUSER)), ("cfgparser", oidv(3722))]);
    }
    Ok(())
}

fn pg_ts_config_map(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    // Token types mapped to a dictionary (12 blank, 13 tag, 14 protocol and
    // 23 entity are not indexed); english stems the word types.
    const MAPPED: [i32; 19] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 17, 18, 19, 20, 21, 22];
    for (cfg, stemmed) in [(3748u32, &[][..]), (13164, &[1, 2, 10, 11, 16, 17][..])] {
        for t in MAPPED {
            let dict = if stemmed.contains(&t) { 13163 } else { 3765 };
            out.push(vec![("mapcfg", oidv(cfg)), ("maptokentype", Datum::Int4(t)), ("mapseqno", Datum::Int4(1)), ("mapdict", oidv(dict))]);
        }
    }
    Ok(())
}

fn pg_extension(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    out.push(vec![
        ("oid", oidv(PLPGSQL_EXTENSION)),
        ("extname", name("plpgsql")),
        ("extowner", oidv(BOOTSTRAP_SUPERUSER)),
        ("extnamespace", oidv(PG_CATALOG_NAMESPACE)),
        ("extrelocatable", b(false)),
        ("extversion", text("1.0")),
    ]);
    Ok(())
}

fn pg_language(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n, pl) in [(12u32, "internal", false), (13, "c", false), (14, "sql", false), (PLPGSQL_LANGUAGE, "plpgsql", true)] {
        out.push(vec![
            ("oid", oidv(o)),
            ("lanname", name(n)),
            ("lanowner", oidv(BOOTSTRAP_SUPERUSER)),
            ("lanispl", b(pl)),
            ("lanpltrusted", b(pl || n == "sql")),
        ]);
    }
    Ok(())
}

fn pg_tablespace(_: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for (o, n) in [(1663u32, "pg_default"), (1664, "pg_global")] {
        out.push(vec![("oid", oidv(o)), ("spcname", name(n)), ("spcowner", oidv(BOOTSTRAP_SUPERUSER))]);
    }
    Ok(())
}

// ---------------------------------------------------------------- information_schema

fn data_type_name(t: Oid) -> String {
    let bi = builtins();
    if bi.element_of(t) != 0 && bi.type_info(t).map(|i| i.category == 'A').unwrap_or(false) {
        return "ARRAY".into();
    }
    match t {
        oid::BPCHAR => "character".into(),
        oid::VARCHAR => "character varying".into(),
        _ => {
            let s = format_type(t, -1);
            if bi.type_info(t).map(|i| i.typtype == 'b' && i.category == 'U' && !matches!(t, oid::BYTEA | oid::UUID | oid::JSON | oid::JSONB)).unwrap_or(false) {
                "USER-DEFINED".into()
            } else {
                s
            }
        }
    }
}

fn table_type(r: &Relation) -> &'static str {
    match (r.kind, r.persistence) {
        (RelKind::View, _) => "VIEW",
        (_, 't') => "LOCAL TEMPORARY",
        _ => "BASE TABLE",
    }
}

fn is_tables(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for t in all() {
        let schema = if t.namespace == PG_CATALOG_NAMESPACE { "pg_catalog" } else { "information_schema" };
        out.push(vec![
            ("table_catalog", name(cx.database_name)),
            ("table_schema", name(schema)),
            ("table_name", name(&t.name)),
            ("table_type", text(if t.relkind == 'v' { "VIEW" } else { "BASE TABLE" })),
            ("is_insertable_into", text("NO")),
            ("is_typed", text("NO")),
        ]);
    }
    for r in user_relations(cx).into_iter().filter(|r| matches!(r.kind, RelKind::Table | RelKind::View)) {
        out.push(vec![
            ("table_catalog", name(cx.database_name)),
            ("table_schema", name(cx.catalog.namespace_name(r.namespace))),
            ("table_name", name(&r.name)),
            ("table_type", text(table_type(r))),
            ("is_insertable_into", yes_no(r.kind == RelKind::Table)),
            ("is_typed", text("NO")),
            ("commit_action", if r.persistence == 't' { text("PRESERVE") } else { Datum::Null }),
        ]);
    }
    Ok(())
}

/// The session's SQL cursors (DECLARE); protocol portals are not listed,
/// as PostgreSQL hides them.
fn pg_cursors(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let mut cursors = cx.cursors.clone();
    cursors.sort_by(|a, b| a.name.cmp(&b.name));
    for c in cursors {
        out.push(vec![
            ("name", text(&c.name)),
            ("statement", text(&c.statement)),
            ("is_holdable", b(c.holdable)),
            ("is_binary", b(false)),
            ("is_scrollable", b(c.scrollable)),
            ("creation_time", Datum::TimestampTz(c.creation_time)),
        ]);
    }
    Ok(())
}

/// The current user's OID, for pg_has_role(x, 'USAGE') in the views below.
fn current_role_oid(cx: &SysCx) -> Oid {
    cx.cluster.role_by_name(cx.user).map_or(Oid::MAX, |r| r.oid)
}

/// pg_has_role(role, 'USAGE') for the current user.
fn uses_role(cx: &SysCx, role: Oid) -> bool {
    cx.cluster.has_privs_of_role(current_role_oid(cx), role, Some(cx.database))
}

/// information_schema.table_privileges: each privilege of each table and
/// view (system catalogs included), as aclexplode lists the ACL, where the
/// current user uses the grantor's or the grantee's role, or the grantee
/// is PUBLIC.
fn table_privilege_rows(cx: &SysCx) -> Vec<SysRow> {
    use super::acl;
    const TABLE_PRIVILEGES: [(u32, &str); 7] = [
        (acl::INSERT, "INSERT"),
        (acl::SELECT, "SELECT"),
        (acl::UPDATE, "UPDATE"),
        (acl::DELETE, "DELETE"),
        (acl::TRUNCATE, "TRUNCATE"),
        (acl::REFERENCES, "REFERENCES"),
        (acl::TRIGGER, "TRIGGER"),
    ];
    let mut out = Vec::new();
    let system = all().iter().map(|t| &t.relation);
    let user = user_relations(cx).into_iter().filter(|r| matches!(r.kind, RelKind::Table | RelKind::View));
    for r in system.chain(user) {
        let items = r.acl.clone().unwrap_or_else(|| acl::default_acl(acl::ObjectKind::Table, r.owner));
        for item in &items {
            let grantee_name = if item.grantee == acl::PUBLIC { "PUBLIC".to_string() } else { cx.cluster.role_name(item.grantee) };
            if !(uses_role(cx, item.grantor) || (item.grantee != acl::PUBLIC && uses_role(cx, item.grantee)) || item.grantee == acl::PUBLIC) {
                continue;
            }
            for (bit, privilege) in TABLE_PRIVILEGES {
                if item.privs & bit == 0 {
                    continue;
                }
                let grantable = item.grant_options & bit != 0
                    || (item.grantee != acl::PUBLIC && cx.cluster.has_privs_of_role(item.grantee, r.owner, Some(cx.database)));
                out.push(vec![
                    ("grantor", name(&cx.cluster.role_name(item.grantor))),
                    ("grantee", name(&grantee_name)),
                    ("table_catalog", name(cx.database_name)),
                    ("table_schema", name(cx.catalog.namespace_name(r.namespace))),
                    ("table_name", name(&r.name)),
                    ("privilege_type", text(privilege)),
                    ("is_grantable", yes_no(grantable)),
                    ("with_hierarchy", yes_no(bit == acl::SELECT)),
                ]);
            }
        }
    }
    out
}

fn is_table_privileges(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    out.extend(table_privilege_rows(cx));
    Ok(())
}

/// The names of the roles the current user uses (enabled_roles).
fn enabled_role_names(cx: &SysCx) -> Vec<String> {
    cx.cluster.roles.values().filter(|r| uses_role(cx, r.oid)).map(|r| r.name.clone()).collect()
}

/// table_privileges where the grantor or the grantee is an enabled role.
fn is_role_table_grants(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let enabled = enabled_role_names(cx);
    let is_enabled = |row: &SysRow, col: &str| {
        row.iter().find(|(n, _)| *n == col).and_then(|(_, d)| d.as_str()).is_some_and(|s| enabled.iter().any(|e| e == s))
    };
    out.extend(table_privilege_rows(cx).into_iter().filter(|row| is_enabled(row, "grantor") || is_enabled(row, "grantee")));
    Ok(())
}

fn is_enabled_roles(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for n in enabled_role_names(cx) {
        out.push(vec![("role_name", name(&n))]);
    }
    Ok(())
}

/// Memberships whose member the current user uses, the database owner's
/// implicit membership in pg_database_owner included.
fn is_applicable_roles(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let mut rows: Vec<(Oid, Oid, bool)> = cx.cluster.auth_members().into_iter().map(|(role, member, _, admin)| (member, role, admin)).collect();
    if let Some(d) = cx.cluster.databases.get(&cx.database) {
        rows.push((d.owner, super::acl::PG_DATABASE_OWNER, false));
    }
    rows.sort_unstable();
    rows.dedup();
    for (member, role, admin) in rows {
        if !uses_role(cx, member) {
            continue;
        }
        out.push(vec![
            ("grantee", name(&cx.cluster.role_name(member))),
            ("role_name", name(&cx.cluster.role_name(role))),
            ("is_grantable", yes_no(admin)),
        ]);
    }
    Ok(())
}

fn is_columns(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| matches!(r.kind, RelKind::Table | RelKind::View)) {
        for (attnum, c) in r.live_columns() {
            let t = c.type_oid;
            let max_len = match t {
                oid::VARCHAR | oid::BPCHAR if c.typmod >= 4 => Datum::Int4(c.typmod - 4),
                _ => Datum::Null,
            };
            let (num_prec, num_radix, num_scale) = match t {
                oid::INT2 => (Datum::Int4(16), Datum::Int4(2), Datum::Int4(0)),
                oid::INT4 => (Datum::Int4(32), Datum::Int4(2), Datum::Int4(0)),
                oid::INT8 => (Datum::Int4(64), Datum::Int4(2), Datum::Int4(0)),
                oid::FLOAT4 => (Datum::Int4(24), Datum::Int4(2), Datum::Null),
                oid::FLOAT8 => (Datum::Int4(53), Datum::Int4(2), Datum::Null),
                oid::NUMERIC if c.typmod >= 4 => {
                    let v = c.typmod - 4;
                    (Datum::Int4((v >> 16) & 0xffff), Datum::Int4(10), Datum::Int4(v & 0xffff))
                }
                oid::NUMERIC => (Datum::Null, Datum::Int4(10), Datum::Null),
                _ => (Datum::Null, Datum::Null, Datum::Null),
            };
            let dt_prec = match t {
                oid::DATE => Datum::Int4(0),
                oid::TIME | oid::TIMETZ | oid::TIMESTAMP | oid::TIMESTAMPTZ | oid::INTERVAL => {
                    Datum::Int4(if c.typmod >= 0 && t != oid::INTERVAL { c.typmod } else { 6 })
                }
                _ => Datum::Null,
            };
            let udt = builtins().type_name(t).to_string();
            out.push(vec![
                ("table_catalog", name(cx.database_name)),
                ("table_schema", name(cx.catalog.namespace_name(r.namespace))),
                ("table_name", name(&r.name)),
                ("column_name", name(&c.name)),
                ("ordinal_position", Datum::Int4(attnum as i32)),
                ("column_default", match (c.stored_default(), cx.env) {
                    (Some(d), Some(env)) => text(&crate::functions::column_default_text(env, r, attnum as i16, d)),
                    (Some(d), None) => text(d),
                    (None, _) => Datum::Null,
                }),
                ("is_nullable", yes_no(!c.not_null)),
                ("data_type", text(&data_type_name(t))),
                ("character_maximum_length", max_len.clone()),
                ("character_octet_length", match t {
                    oid::VARCHAR | oid::BPCHAR | oid::TEXT => match &max_len {
                        Datum::Int4(n) => Datum::Int4(n * 4),
                        _ => Datum::Int4(1_073_741_824),
                    },
                    _ => Datum::Null,
                }),
                ("numeric_precision", num_prec),
                ("numeric_precision_radix", num_radix),
                ("numeric_scale", num_scale),
                ("datetime_precision", dt_prec),
                ("udt_catalog", name(cx.database_name)),
                ("udt_schema", name("pg_catalog")),
                ("udt_name", name(&udt)),
                ("dtd_identifier", text(&attnum.to_string())),
                ("is_self_referencing", text("NO")),
                ("is_identity", yes_no(c.identity != ' ')),
                ("identity_generation", match c.identity {
                    'a' => text("ALWAYS"),
                    'd' => text("BY DEFAULT"),
                    _ => Datum::Null,
                }),
                ("is_generated", text("NEVER")),
                ("is_updatable", yes_no(r.kind == RelKind::Table)),
            ]);
            // A collation other than the database default is named (as the
            // view's join with pg_collation does).
            if let Some(coll) = collation_name(c.collation).filter(|n| *n != "default") {
                let row = out.last_mut().expect("just pushed");
                row.push(("collation_catalog", name(cx.database_name)));
                row.push(("collation_schema", name("pg_catalog")));
                row.push(("collation_name", name(coll)));
            }
        }
    }
    Ok(())
}

/// pg_collation's name of a collation Tusk knows (see `pg_collation`).
pub fn collation_name(oid: Oid) -> Option<&'static str> {
    COLLATIONS.iter().find(|c| c.0 == oid).map(|c| c.1)
}

/// The OID of the collation named `name` (in pg_catalog).
pub fn collation_by_name(name: &str) -> Option<Oid> {
    COLLATIONS.iter().find(|c| c.1 == name).map(|c| c.0)
}

/// pg_collation's rows: (oid, name, provider, encoding, collcollate). Those
/// of a PostgreSQL 15 cluster initialized with --locale=C.UTF-8 (initdb
/// numbers ucs_basic and the C.utf8 locale it finds as here), less ICU's;
/// all of them order bytewise, as every text comparison in Tusk does, so a
/// column's collation never changes an answer.
const COLLATIONS: [(Oid, &str, char, i32, &str); 5] = [
    (100, "default", 'd', -1, ""),
    (950, "C", 'c', -1, "C"),
    (951, "POSIX", 'c', -1, "POSIX"),
    (12340, "ucs_basic", 'c', 6, "C"),
    (12341, "C.utf8", 'c', 6, "C.utf8"),
];

fn is_views(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::View) {
        out.push(vec![
            ("table_catalog", name(cx.database_name)),
            ("table_schema", name(cx.catalog.namespace_name(r.namespace))),
            ("table_name", name(&r.name)),
            ("view_definition", text(&r.view.as_ref().map(|v| format!(" {};", v.query)).unwrap_or_default())),
            ("check_option", text("NONE")),
            ("is_updatable", text("NO")),
            ("is_insertable_into", text("NO")),
            ("is_trigger_updatable", text("NO")),
            ("is_trigger_deletable", text("NO")),
            ("is_trigger_insertable_into", text("NO")),
        ]);
    }
    Ok(())
}

fn is_schemata(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for n in cx.catalog.namespaces.values().filter(|n| n.temp_session.is_none()) {
        out.push(vec![
            ("catalog_name", name(cx.database_name)),
            ("schema_name", name(&n.name)),
            ("schema_owner", name(&cx.cluster.role_name(n.owner).replace("6171", "pg_database_owner"))),
        ]);
    }
    Ok(())
}

/// pg_constraint.conexclop: an exclusion constraint's operators.
fn exclusion_operators(cx: &SysCx, c: &Constraint) -> Datum {
    if c.kind != ConstraintKind::Exclusion {
        return Datum::Null;
    }
    let ops = cx.catalog.relation(c.index).and_then(|i| i.index.as_ref()).map(|i| i.exclusion.clone()).unwrap_or_default();
    Datum::Array(Arc::new(Array::from_vec(oid::OID, ops.into_iter().map(Datum::Oid).collect())))
}

fn constraint_type(c: &Constraint) -> &'static str {
    match c.kind {
        ConstraintKind::Exclusion => "EXCLUDE",
        ConstraintKind::PrimaryKey => "PRIMARY KEY",
        ConstraintKind::Unique => "UNIQUE",
        ConstraintKind::Check => "CHECK",
        ConstraintKind::ForeignKey => "FOREIGN KEY",
    }
}

fn is_table_constraints(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Table) {
        let schema = cx.catalog.namespace_name(r.namespace);
        // The SQL standard has no exclusion constraints: the view leaves them out.
        for c in r.constraints.iter().filter(|c| c.kind != ConstraintKind::Exclusion) {
            out.push(vec![
                ("constraint_catalog", name(cx.database_name)),
                ("constraint_schema", name(schema)),
                ("constraint_name", name(&c.name)),
                ("table_catalog", name(cx.database_name)),
                ("table_schema", name(schema)),
                ("table_name", name(&r.name)),
                ("constraint_type", text(constraint_type(c))),
                ("is_deferrable", yes_no(c.deferrable)),
                ("initially_deferred", yes_no(c.deferred)),
                ("enforced", text("YES")),
                ("nulls_distinct", if c.kind == ConstraintKind::Unique || c.kind == ConstraintKind::PrimaryKey { text("YES") } else { Datum::Null }),
            ]);
        }
        // NOT NULL constraints appear as CHECK constraints here.
        for (attnum, col) in r.live_columns().filter(|(_, c)| c.not_null) {
            out.push(vec![
                ("constraint_catalog", name(cx.database_name)),
                ("constraint_schema", name(schema)),
                ("constraint_name", name(&format!("{}_{}_{}_not_null", r.namespace, r.oid, attnum))),
                ("table_catalog", name(cx.database_name)),
                ("table_schema", name(schema)),
                ("table_name", name(&r.name)),
                ("constraint_type", text("CHECK")),
                ("is_deferrable", text("NO")),
                ("initially_deferred", text("NO")),
                ("enforced", text("YES")),
            ]);
            let _ = col;
        }
    }
    Ok(())
}

fn is_key_column_usage(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Table) {
        let schema = cx.catalog.namespace_name(r.namespace);
        for c in r.constraints.iter().filter(|c| !matches!(c.kind, ConstraintKind::Check | ConstraintKind::Exclusion)) {
            for (pos, &attnum) in c.columns.iter().enumerate() {
                let unique_pos = c.foreign.as_ref().map(|f| {
                    // Position of the referenced column within the referenced key.
                    let target = f.ref_columns[pos];
                    cx.catalog
                        .relation(f.ref_table)
                        .and_then(|p| p.constraints.iter().find(|k| k.index == f.ref_index))
                        .and_then(|k| k.columns.iter().position(|&a| a == target))
                        .map(|p| Datum::Int4(p as i32 + 1))
                        .unwrap_or(Datum::Int4(pos as i32 + 1))
                });
                out.push(vec![
                    ("constraint_catalog", name(cx.database_name)),
                    ("constraint_schema", name(schema)),
                    ("constraint_name", name(&c.name)),
                    ("table_catalog", name(cx.database_name)),
                    ("table_schema", name(schema)),
                    ("table_name", name(&r.name)),
                    ("column_name", name(&r.column(attnum).name)),
                    ("ordinal_position", Datum::Int4(pos as i32 + 1)),
                    ("position_in_unique_constraint", unique_pos.unwrap_or(Datum::Null)),
                ]);
            }
        }
    }
    Ok(())
}

fn is_referential_constraints(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    let rule = |a: FkAction| match a {
        FkAction::NoAction => "NO ACTION",
        FkAction::Restrict => "RESTRICT",
        FkAction::Cascade => "CASCADE",
        FkAction::SetNull => "SET NULL",
        FkAction::SetDefault => "SET DEFAULT",
    };
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Table) {
        let schema = cx.catalog.namespace_name(r.namespace);
        for c in &r.constraints {
            let Some(f) = &c.foreign else { continue };
            let (uschema, uname) = cx
                .catalog
                .relation(f.ref_table)
                .and_then(|p| p.constraints.iter().find(|k| k.index == f.ref_index).map(|k| (cx.catalog.namespace_name(p.namespace), k.name.clone())))
                .unwrap_or(("", String::new()));
            out.push(vec![
                ("constraint_catalog", name(cx.database_name)),
                ("constraint_schema", name(schema)),
                ("constraint_name", name(&c.name)),
                ("unique_constraint_catalog", name(cx.database_name)),
                ("unique_constraint_schema", name(uschema)),
                ("unique_constraint_name", name(&uname)),
                ("match_option", text(if f.match_type == 'f' { "FULL" } else { "NONE" })),
                ("update_rule", text(rule(f.on_update))),
                ("delete_rule", text(rule(f.on_delete))),
            ]);
        }
    }
    Ok(())
}

fn is_sequences(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx) {
        let Some(s) = &r.sequence else { continue };
        let bits = match s.type_oid {
            oid::INT2 => 16,
            oid::INT4 => 32,
            _ => 64,
        };
        out.push(vec![
            ("sequence_catalog", name(cx.database_name)),
            ("sequence_schema", name(cx.catalog.namespace_name(r.namespace))),
            ("sequence_name", name(&r.name)),
            ("data_type", text(&format_type(s.type_oid, -1))),
            ("numeric_precision", Datum::Int4(bits)),
            ("numeric_precision_radix", Datum::Int4(2)),
            ("numeric_scale", Datum::Int4(0)),
            ("start_value", text(&s.start.to_string())),
            ("minimum_value", text(&s.min.to_string())),
            ("maximum_value", text(&s.max.to_string())),
            ("increment", text(&s.increment.to_string())),
            ("cycle_option", yes_no(s.cycle)),
        ]);
    }
    Ok(())
}

fn is_check_constraints(cx: &SysCx, out: &mut Vec<SysRow>) -> PgResult<()> {
    for r in user_relations(cx).into_iter().filter(|r| r.kind == RelKind::Table) {
        let schema = cx.catalog.namespace_name(r.namespace);
        for c in r.constraints.iter().filter(|c| c.kind == ConstraintKind::Check) {
            out.push(vec![
                ("constraint_catalog", name(cx.database_name)),
                ("constraint_schema", name(schema)),
                ("constraint_name", name(&c.name)),
                ("check_clause", text(&c.check.clone().unwrap_or_default())),
            ]);
        }
    }
    Ok(())
}
