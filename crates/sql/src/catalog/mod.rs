//! The catalog: databases, schemas, relations (tables, indexes, views,
//! sequences), their columns and constraints.
//!
//! Catalog rows live in the same RocksDB as the data (keys `C...`), written
//! through the DDL statement's transaction, so DDL commits and rolls back
//! with everything else. Readers use an immutable in-memory `DbCatalog`
//! snapshot, rebuilt from storage after a DDL transaction commits (and, for
//! the DDL transaction itself, after each of its DDL statements, so it sees
//! its own changes). Catalogs are small; rebuilding is cheaper than getting
//! incremental invalidation subtly wrong.

pub mod acl;
pub mod builtin;
pub mod depend;
pub mod enums;
pub mod publish;
pub mod ranges;
pub mod foreign;
pub mod function;
pub mod operator;
pub mod store;
pub mod system;
pub mod trigger;
pub mod types;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tusk_types::{Oid, SqlType};

pub use builtin::{builtins, Builtins};

pub const PG_CATALOG_NAMESPACE: Oid = 11;
pub const PG_TOAST_NAMESPACE: Oid = 99;
pub const PUBLIC_NAMESPACE: Oid = 2200;
pub const INFORMATION_SCHEMA_NAMESPACE: Oid = 13000;
pub const BOOTSTRAP_SUPERUSER: Oid = 10;
pub const TEMPLATE1_DB: Oid = 1;
pub const POSTGRES_DB: Oid = 5;

/// The database that holds objects shared by the whole cluster (none of
/// Tusk's relations so far; databases and roles are stored cluster-wide).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Database {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub encoding: String,
    pub collate: String,
    pub ctype: String,
    pub is_template: bool,
    pub allow_connections: bool,
    pub connection_limit: i32,
    /// pg_database.datacl; None = the default privileges.
    #[serde(default)]
    pub acl: Option<Vec<acl::AclItem>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Role {
    pub oid: Oid,
    pub name: String,
    pub superuser: bool,
    pub inherit: bool,
    pub create_role: bool,
    pub create_db: bool,
    pub can_login: bool,
    pub replication: bool,
    pub bypass_rls: bool,
    pub connection_limit: i32,
    /// pg_authid.rolpassword: a SCRAM-SHA-256 or md5 verifier (see
    /// `commands::role`), never the password itself.
    pub password: Option<String>,
    /// pg_authid.rolvaliduntil: when the password stops being accepted
    /// (a timestamptz in microseconds since 2000-01-01; i64::MAX is infinity).
    pub valid_until: Option<i64>,
    /// The roles this role is a direct member of: its pg_auth_members rows
    /// (kept with the member, so GRANT role TO member rewrites one row).
    #[serde(default)]
    pub member_of: Vec<Membership>,
}

/// One pg_auth_members row, seen from its member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    /// pg_auth_members.roleid: the role whose privileges are granted.
    pub role: Oid,
    pub grantor: Oid,
    /// WITH ADMIN OPTION: the member may grant the role onwards.
    pub admin_option: bool,
}

/// The roles PostgreSQL 15 predefines besides the bootstrap superuser
/// (pg_authid.dat), with their OIDs: they exist in every cluster, cannot log
/// in, and can be neither altered nor dropped.
pub const PREDEFINED_ROLES: &[(Oid, &str)] = &[
    (3373, "pg_monitor"),
    (3374, "pg_read_all_settings"),
    (3375, "pg_read_all_stats"),
    (3377, "pg_stat_scan_tables"),
    (4200, "pg_signal_backend"),
    (4544, "pg_checkpoint"),
    (4569, "pg_read_server_files"),
    (4570, "pg_write_server_files"),
    (4571, "pg_execute_server_program"),
    (6171, "pg_database_owner"),
    (6181, "pg_read_all_data"),
    (6182, "pg_write_all_data"),
];

/// The memberships initdb creates among the predefined roles (member,
/// role): pg_monitor has the privileges of the other monitoring roles.
pub const PREDEFINED_MEMBERSHIPS: &[(Oid, Oid)] = &[(3373, 3374), (3373, 3375), (3373, 3377)];

impl Role {
    /// A role with CREATE ROLE's defaults (NOLOGIN, INHERIT, nothing else).
    pub fn new(oid: Oid, name: &str) -> Role {
        Role {
            oid,
            name: name.to_string(),
            superuser: false,
            inherit: true,
            create_role: false,
            create_db: false,
            can_login: false,
            replication: false,
            bypass_rls: false,
            connection_limit: -1,
            password: None,
            valid_until: None,
            member_of: Vec::new(),
        }
    }

    /// Whether the role is one the system needs (the bootstrap superuser
    /// and the predefined roles): DROP ROLE refuses it.
    pub fn is_pinned(&self) -> bool {
        self.oid == BOOTSTRAP_SUPERUSER || PREDEFINED_ROLES.iter().any(|(oid, _)| *oid == self.oid)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Namespace {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    /// Temporary schemas belong to one session (`pg_temp_N`).
    pub temp_session: Option<u32>,
    /// pg_namespace.nspacl; None = the default privileges.
    #[serde(default)]
    pub acl: Option<Vec<acl::AclItem>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RelKind {
    Table,
    Index,
    Sequence,
    View,
    /// A foreign table: columns and constraints in the catalog, rows behind
    /// a foreign server (`Relation::foreign`).
    ForeignTable,
    /// A composite type of CREATE TYPE ... AS (...): attributes, no rows.
    CompositeType,
}

impl RelKind {
    /// pg_class.relkind
    pub fn code(self) -> char {
        match self {
            RelKind::Table => 'r',
            RelKind::Index => 'i',
            RelKind::Sequence => 'S',
            RelKind::View => 'v',
            RelKind::ForeignTable => 'f',
            RelKind::CompositeType => 'c',
        }
    }

    /// The noun PostgreSQL uses in messages ("\"x\" is not a table").
    pub fn noun(self) -> &'static str {
        match self {
            RelKind::Table => "table",
            RelKind::Index => "index",
            RelKind::Sequence => "sequence",
            RelKind::View => "view",
            RelKind::ForeignTable => "foreign table",
            RelKind::CompositeType => "composite type",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub type_oid: Oid,
    pub typmod: i32,
    pub not_null: bool,
    /// The default expression as SQL text (`nextval('t_id_seq'::regclass)`).
    pub default: Option<String>,
    pub dropped: bool,
    /// 'a' = GENERATED ALWAYS AS IDENTITY, 'd' = BY DEFAULT, ' ' = none.
    pub identity: char,
    /// Value for rows written before this column was added (encoded row of one datum).
    pub missing: Option<Vec<u8>>,
    pub collation: Oid,
    /// What ALTER COLUMN SET STATISTICS / STORAGE / COMPRESSION chose.
    #[serde(default)]
    pub settings: ColumnSettings,
    /// pg_attribute.attinhcount: how many parents the column comes from.
    #[serde(default)]
    pub inhcount: i32,
    /// pg_attribute.attislocal: the table defines the column itself (not
    /// only through inheritance).
    #[serde(default = "yes")]
    pub is_local: bool,
}

fn yes() -> bool {
    true
}

/// A column's pg_attribute settings that change how it is analyzed and
/// stored, never what it holds: Tusk records them for the catalogs (and
/// psql's `\d+`), its storage engine has no TOAST to apply them to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSettings {
    /// attstattarget; None = -1, the default_statistics_target.
    pub stat_target: Option<i32>,
    /// attstorage ('p', 'e', 'm', 'x'); None = the type's typstorage.
    pub storage: Option<char>,
    /// attcompression ('p' pglz, 'l' lz4); None = '\0', default_toast_compression.
    pub compression: Option<char>,
}

impl Column {
    pub fn sql_type(&self) -> SqlType {
        SqlType { oid: self.type_oid, typmod: self.typmod }
    }

    /// The default as pg_attrdef shows it: none for a bare NULL, which
    /// PostgreSQL does not store (a column without a default reads NULL).
    pub fn stored_default(&self) -> Option<&str> {
        let d = self.default.as_deref()?;
        let t = d.trim();
        let starts = |p: &str| t.get(..p.len()).is_some_and(|x| x.eq_ignore_ascii_case(p));
        let is_null = t.eq_ignore_ascii_case("null") || starts("null::") || starts("cast(null as ");
        (!is_null).then_some(d)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstraintKind {
    PrimaryKey,
    Unique,
    Check,
    ForeignKey,
    /// EXCLUDE USING btree (col WITH =, ...): see `commands::exclusion`.
    Exclusion,
}

impl ConstraintKind {
    /// pg_constraint.contype
    pub fn code(self) -> char {
        match self {
            ConstraintKind::PrimaryKey => 'p',
            ConstraintKind::Unique => 'u',
            ConstraintKind::Check => 'c',
            ConstraintKind::ForeignKey => 'f',
            ConstraintKind::Exclusion => 'x',
        }
    }
}

/// Referential actions, pg_constraint's confupdtype/confdeltype letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    NoAction,
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
}

impl FkAction {
    pub fn code(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ForeignKey {
    pub ref_table: Oid,
    /// Attribute numbers (1-based) in the referenced table.
    pub ref_columns: Vec<i16>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    /// 's' = MATCH SIMPLE, 'f' = MATCH FULL.
    pub match_type: char,
    /// The unique index of the referenced table the key relies on.
    pub ref_index: Oid,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Constraint {
    pub oid: Oid,
    pub name: String,
    pub kind: ConstraintKind,
    /// Attribute numbers (1-based) of the constrained columns.
    pub columns: Vec<i16>,
    /// CHECK expression as SQL text.
    pub check: Option<String>,
    /// Index backing a PRIMARY KEY / UNIQUE constraint.
    pub index: Oid,
    pub foreign: Option<ForeignKey>,
    pub deferrable: bool,
    pub deferred: bool,
    pub validated: bool,
    /// CHECK constraints marked NO INHERIT.
    pub no_inherit: bool,
    /// pg_constraint.coninhcount: how many parents the constraint comes from.
    #[serde(default)]
    pub inhcount: i32,
    /// pg_constraint.conislocal: the table defines the constraint itself.
    #[serde(default = "yes")]
    pub is_local: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexKey {
    /// 1-based attribute number, or 0 for an expression key.
    pub attnum: i16,
    pub expr: Option<String>,
    pub desc: bool,
    pub nulls_first: bool,
    /// An operator class named in CREATE INDEX (`t text_pattern_ops`);
    /// 0 for the default class of the key's type and the access method.
    #[serde(default)]
    pub opclass: Oid,
    /// A collation named in CREATE INDEX (`t COLLATE "C"`); 0 for the
    /// key's own (the column's, or the expression type's).
    #[serde(default)]
    pub collation: Oid,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexInfo {
    pub table: Oid,
    pub keys: Vec<IndexKey>,
    pub unique: bool,
    pub primary: bool,
    /// The table's rows are keyed by this index (a PRIMARY KEY given at CREATE TABLE).
    pub clustered: bool,
    pub predicate: Option<String>,
    pub nulls_not_distinct: bool,
    /// Access method name as in pg_am (always "btree" for now).
    pub method: String,
    /// The index of a DEFERRABLE unique or primary key constraint
    /// (pg_index.indimmediate = false): its uniqueness is checked at the
    /// end of each statement or at commit, not as each row is written, so
    /// its entries carry the row key like a non-unique index's and
    /// duplicates can exist until the check (see `executor::table`).
    #[serde(default)]
    pub deferrable: bool,
    /// INCLUDE columns (attribute numbers): carried by the index after its
    /// keys (pg_index.indkey lists them, indnkeyatts does not count them),
    /// never part of its order or uniqueness. Tusk reads them from the
    /// row, so the index's entries do not store them.
    #[serde(default)]
    pub include: Vec<i16>,
    /// pg_index.indisclustered: the index ALTER TABLE ... CLUSTER ON named
    /// (a mark for a later CLUSTER; not `clustered` above).
    #[serde(default)]
    pub cluster_on: bool,
    /// pg_index.indisreplident: REPLICA IDENTITY USING INDEX names it.
    #[serde(default)]
    pub replica_identity: bool,
    /// The operators of an exclusion constraint's index, one per key
    /// (pg_constraint.conexclop); empty for every other index. Tusk builds
    /// exclusion constraints whose operators are B-tree equality, which
    /// exclude exactly what uniqueness excludes, so such an index is kept
    /// as a unique one (see `commands::exclusion`).
    #[serde(default)]
    pub exclusion: Vec<Oid>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SequenceInfo {
    pub type_oid: Oid,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
    /// The column this sequence is OWNED BY (table oid, attnum).
    pub owned_by: Option<(Oid, i16)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ViewInfo {
    /// The defining SELECT as SQL text.
    pub query: String,
    pub check_option: Option<String>,
    /// Relations the view reads, through other views too (renames and
    /// ALTER COLUMN TYPE look here).
    #[serde(default)]
    pub depends_on: Vec<Oid>,
    /// What the view's _RETURN rule depends on, as pg_depend records it:
    /// (relation or view, attnum) for each column the query reads, (relation,
    /// 0) for one it reads no column of. A view reached through this one is
    /// not looked into (its own rule records what it reads).
    #[serde(default)]
    pub refs: Vec<(Oid, i16)>,
    /// Primary keys the query relies on: columns it reads ungrouped
    /// because the key is grouped (PostgreSQL's constraintDeps).
    #[serde(default)]
    pub constraint_refs: Vec<Oid>,
    /// Functions the query calls (user-defined ones hold the view).
    #[serde(default)]
    pub function_refs: Vec<Oid>,
    /// pg_rewrite.oid of the _RETURN rule (0 for views made before Tusk
    /// numbered rules; see `depend::rule_oid`).
    #[serde(default)]
    pub rule_oid: Oid,
}

/// A table's TOAST table and its index as PostgreSQL has them
/// (`pg_toast.pg_toast_<table oid>`, `..._index`). Tusk keeps long values
/// inline in its rows; these are catalog rows only, so that
/// `pg_class.reltoastrelid` and the `toast.*` storage parameters read as
/// in PostgreSQL.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToastInfo {
    pub oid: Oid,
    pub index_oid: Oid,
    /// The TOAST table's reloptions (`toast.` options without the prefix).
    pub options: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Relation {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub kind: RelKind,
    /// 'p' permanent, 'u' unlogged, 't' temporary.
    pub persistence: char,
    pub owner: Oid,
    pub columns: Vec<Column>,
    /// Key prefix of the relation's data; a new one is assigned by TRUNCATE.
    pub storage_id: u32,
    pub constraints: Vec<Constraint>,
    pub index: Option<IndexInfo>,
    pub view: Option<ViewInfo>,
    pub sequence: Option<SequenceInfo>,
    pub options: Vec<String>,
    /// pg_class.relacl; None = the default privileges.
    #[serde(default)]
    pub acl: Option<Vec<acl::AclItem>>,
    /// The TOAST table PostgreSQL gives a table that may hold long values.
    #[serde(default)]
    pub toast: Option<ToastInfo>,
    /// Table flags ALTER TABLE sets that no query reads yet.
    #[serde(default)]
    pub flags: TableFlags,
    /// A foreign table's server and options (pg_foreign_table).
    #[serde(default)]
    pub foreign: Option<ForeignTableInfo>,
    /// Indexes on this table; derived when the catalog is loaded, not stored.
    #[serde(skip)]
    pub indexes: Vec<Oid>,
    /// The tables this one inherits from, in pg_inherits.inhseqno order.
    #[serde(default)]
    pub inherits: Vec<Oid>,
    /// The tables inheriting directly from this one, by OID (as
    /// find_inheritance_children orders them); derived when the catalog
    /// is loaded, not stored.
    #[serde(skip)]
    pub children: Vec<Oid>,
    /// The table's (or view's) triggers (pg_trigger), in creation order.
    #[serde(default)]
    pub triggers: Vec<trigger::Trigger>,
    /// pg_class.reltype: the relation's row type, and that type's array
    /// type (0 for indexes and sequences, which have none).
    #[serde(default)]
    pub row_type: Oid,
    #[serde(default)]
    pub row_array_type: Oid,
}

impl Relation {
    /// Columns not dropped, with their 1-based attribute numbers.
    pub fn live_columns(&self) -> impl Iterator<Item = (i16, &Column)> {
        self.columns.iter().enumerate().filter(|(_, c)| !c.dropped).map(|(i, c)| (i as i16 + 1, c))
    }

    pub fn column_by_name(&self, name: &str) -> Option<(i16, &Column)> {
        self.live_columns().find(|(_, c)| c.name == name)
    }

    pub fn column(&self, attnum: i16) -> &Column {
        &self.columns[attnum as usize - 1]
    }

    pub fn primary_key(&self) -> Option<&Constraint> {
        self.constraints.iter().find(|c| c.kind == ConstraintKind::PrimaryKey)
    }
}

/// pg_foreign_table: the server a foreign table's rows are behind, its
/// generic options, and each column's (attfdwoptions, by attnum - 1).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ForeignTableInfo {
    pub server: Oid,
    pub options: Option<Vec<String>>,
    pub column_options: Vec<Option<Vec<String>>>,
}

/// pg_class columns that ALTER TABLE sets: REPLICA IDENTITY, ROW LEVEL
/// SECURITY (the flags; policies are not built) and OF type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFlags {
    /// relreplident: 'n' nothing, 'f' full, 'i' index; None = 'd' (the
    /// primary key), a table's default.
    pub replica_identity: Option<char>,
    /// relrowsecurity
    pub row_security: bool,
    /// relforcerowsecurity
    pub force_row_security: bool,
}

impl Relation {
    /// pg_class.relreplident as PostgreSQL shows it: 'd' for a table
    /// nobody changed, 'n' for relations without rows of their own and
    /// for the system catalogs (heap_create_with_catalog).
    pub fn replica_identity(&self) -> char {
        match self.kind {
            RelKind::Table if self.namespace == PG_CATALOG_NAMESPACE => 'n',
            RelKind::Table => self.flags.replica_identity.unwrap_or('d'),
            _ => 'n',
        }
    }
}

/// A publication (pg_publication) with its members: the tables it names
/// (pg_publication_rel) and the schemas whose tables it publishes
/// (pg_publication_namespace). Members are kept in the publication's row,
/// each with the OID its catalog row shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Publication {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub all_tables: bool,
    pub insert: bool,
    pub update: bool,
    pub delete: bool,
    pub truncate: bool,
    pub via_root: bool,
    pub tables: Vec<PublishedTable>,
    pub schemas: Vec<PublishedSchema>,
}

/// One pg_publication_rel row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedTable {
    pub oid: Oid,
    pub relid: Oid,
    /// prattrs: the column list, ascending attribute numbers.
    pub columns: Option<Vec<i16>>,
    /// prqual: the row filter as SQL text over the table's columns.
    pub qual: Option<String>,
}

/// One pg_publication_namespace row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedSchema {
    pub oid: Oid,
    pub nspid: Oid,
}

impl Publication {
    /// Whether the publication publishes `rel`'s changes: FOR ALL TABLES,
    /// a table it names, or a table of a schema it names.
    pub fn publishes(&self, rel: &Relation) -> bool {
        self.all_tables || self.tables.iter().any(|t| t.relid == rel.oid) || self.schemas.iter().any(|s| s.nspid == rel.namespace)
    }
}

/// A subscription (pg_subscription). Tusk does not run logical
/// replication; a subscription is a catalog object whose options can be
/// set, made with `connect = false`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Subscription {
    pub oid: Oid,
    pub name: String,
    pub owner: Oid,
    pub enabled: bool,
    pub binary: bool,
    pub streaming: bool,
    /// subtwophasestate: 'd' disabled, 'p' pending, 'e' enabled.
    pub two_phase: char,
    pub disable_on_error: bool,
    pub conninfo: String,
    pub slot_name: Option<String>,
    pub synchronous_commit: String,
    pub publications: Vec<String>,
    /// subskiplsn as a 64-bit LSN; 0 = none.
    pub skip_lsn: u64,
}

/// One database's catalog at one moment: immutable, shared by `Arc`.
#[derive(Clone, Debug, Default)]
pub struct DbCatalog {
    pub database: Oid,
    pub namespaces: BTreeMap<Oid, Namespace>,
    pub namespace_by_name: HashMap<String, Oid>,
    pub relations: HashMap<Oid, Arc<Relation>>,
    pub relation_by_name: HashMap<(Oid, String), Oid>,
    /// COMMENT ON: (class oid of the object kind, object oid, sub id) → text.
    pub comments: BTreeMap<(Oid, Oid, i32), String>,
    /// pg_publication (with its members), by OID.
    pub publications: BTreeMap<Oid, Publication>,
    /// pg_subscription rows of this database, by OID.
    pub subscriptions: BTreeMap<Oid, Subscription>,
    /// Foreign-data wrappers, servers and user mappings.
    pub foreign: foreign::ForeignCatalog,
    /// User-defined functions and procedures, by OID, and their pg_proc
    /// rows in the built-ins' form, by OID and by name (see `set_functions`).
    pub functions: BTreeMap<Oid, Arc<function::Function>>,
    user_procs: HashMap<Oid, builtin::ProcInfo>,
    user_procs_by_name: HashMap<String, Vec<Oid>>,
    /// User-defined operators, aggregates and casts.
    pub user_ops: Arc<operator::OperatorCatalog>,
    /// User types: row types of relations, derived from them, and the
    /// stored ones (domains).
    pub user_types: Arc<types::UserTypes>,
    pub stored_types: Vec<types::StoredType>,
    /// pg_depend, derived from the rest when first asked for (the catalog
    /// never changes once built; see `depend`).
    dependencies: std::sync::OnceLock<Arc<depend::Dependencies>>,
}

/// Cluster-wide catalog: databases and roles.
#[derive(Clone, Debug, Default)]
pub struct ClusterCatalog {
    pub databases: BTreeMap<Oid, Database>,
    pub roles: BTreeMap<Oid, Role>,
    /// pg_shdescription: comments on databases and roles, (class, object)
    /// → text, seen from every database.
    pub shared_comments: BTreeMap<(Oid, Oid), String>,
}

impl ClusterCatalog {
    pub fn database_by_name(&self, name: &str) -> Option<&Database> {
        self.databases.values().find(|d| d.name == name)
    }

    pub fn role_by_name(&self, name: &str) -> Option<&Role> {
        self.roles.values().find(|r| r.name == name)
    }

    pub fn role_name(&self, oid: Oid) -> String {
        self.roles.get(&oid).map(|r| r.name.clone()).unwrap_or_else(|| oid.to_string())
    }

    pub fn is_superuser(&self, role: Oid) -> bool {
        self.roles.get(&role).is_some_and(|r| r.superuser)
    }

    /// pg_auth_members as rows (roleid, member, grantor, admin_option),
    /// ordered by (roleid, member) as its primary key.
    pub fn auth_members(&self) -> Vec<(Oid, Oid, Oid, bool)> {
        let mut rows: Vec<_> = self
            .roles
            .values()
            .flat_map(|r| r.member_of.iter().map(move |m| (m.role, r.oid, m.grantor, m.admin_option)))
            .collect();
        rows.sort_unstable();
        rows
    }

    /// roles_is_member_of: `role` and every role it is a member of,
    /// directly or through other roles. With `privileges`, a role without
    /// INHERIT stops the walk (its memberships give only SET ROLE, not
    /// privileges). The owner of `database` is implicitly a member of
    /// pg_database_owner.
    pub fn roles_of(&self, role: Oid, privileges: bool, database: Option<Oid>) -> Vec<Oid> {
        let db_owner = database.and_then(|d| self.databases.get(&d)).map(|d| d.owner);
        let mut out = vec![role];
        let mut i = 0;
        while i < out.len() {
            let r = out[i];
            i += 1;
            let Some(row) = self.roles.get(&r) else { continue };
            if privileges && !row.inherit {
                continue;
            }
            for m in &row.member_of {
                if !out.contains(&m.role) {
                    out.push(m.role);
                }
            }
            if db_owner == Some(r) && !out.contains(&acl::PG_DATABASE_OWNER) {
                out.push(acl::PG_DATABASE_OWNER);
            }
        }
        out
    }

    /// has_privs_of_role: whether `member` holds `role`'s privileges
    /// (superusers hold everyone's).
    pub fn has_privs_of_role(&self, member: Oid, role: Oid, database: Option<Oid>) -> bool {
        member == role || self.is_superuser(member) || self.roles_of(member, true, database).contains(&role)
    }

    /// is_member_of_role_nosuper: membership however reached, ignoring
    /// INHERIT and superuserness (what SET ROLE and cycle checks ask).
    pub fn is_member_of_role_nosuper(&self, member: Oid, role: Oid, database: Option<Oid>) -> bool {
        member == role || self.roles_of(member, false, database).contains(&role)
    }

    /// is_admin_of_role: whether `member` may grant and revoke membership
    /// in `role`: a superuser, or a member WITH ADMIN OPTION of it (directly
    /// or through a role it is a member of).
    /// A role administers itself only as the session user.
    pub fn is_admin_of_role(&self, member: Oid, role: Oid, session_user: Oid) -> bool {
        if self.is_superuser(member) {
            return true;
        }
        if member == role {
            return member == session_user;
        }
        self.roles_of(member, false, None)
            .iter()
            .filter_map(|r| self.roles.get(r))
            .any(|r| r.member_of.iter().any(|m| m.role == role && m.admin_option))
    }
}

impl DbCatalog {
    /// Installs the database's user-defined functions.
    pub fn set_functions(&mut self, functions: Vec<function::Function>) {
        for f in functions {
            let info = f.proc_info();
            self.user_procs_by_name.entry(f.name.clone()).or_default().push(f.oid);
            self.user_procs.insert(f.oid, info);
            self.functions.insert(f.oid, Arc::new(f));
        }
    }

    /// A pg_proc row, built-in or user-defined.
    pub fn proc(&self, oid: Oid) -> Option<&builtin::ProcInfo> {
        builtins().procs.get(&oid).or_else(|| self.user_procs.get(&oid))
    }

    /// Every pg_proc row of a name, built-in ones first.
    pub fn procs_named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a builtin::ProcInfo> + 'a {
        let b = builtins();
        let builtin = b.procs_by_name.get(name).into_iter().flatten().map(move |o| &b.procs[o]);
        let user = self.user_procs_by_name.get(name).into_iter().flatten().filter_map(move |o| self.user_procs.get(o));
        builtin.chain(user)
    }

    /// A pg_operator row, built-in or user-defined.
    pub fn operator(&self, oid: Oid) -> Option<&builtin::OperatorInfo> {
        builtins().operators.get(&oid).or_else(|| self.user_ops.operator_infos.get(&oid))
    }

    /// Every pg_operator row of a name, built-in ones first.
    pub fn operators_named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a builtin::OperatorInfo> + 'a {
        let b = builtins();
        let builtin = b.operators_by_name.get(name).into_iter().flatten().map(move |o| &b.operators[o]);
        let user = self.user_ops.operators_by_name.get(name).into_iter().flatten().filter_map(move |o| self.user_ops.operator_infos.get(o));
        builtin.chain(user)
    }

    /// The pg_depend rows of this database.
    pub fn dependencies(&self) -> &depend::Dependencies {
        self.dependencies.get_or_init(|| Arc::new(depend::Dependencies::derive(self)))
    }

    pub fn publication_by_name(&self, name: &str) -> Option<&Publication> {
        self.publications.values().find(|p| p.name == name)
    }

    pub fn subscription_by_name(&self, name: &str) -> Option<&Subscription> {
        self.subscriptions.values().find(|p| p.name == name)
    }

    pub fn relation(&self, oid: Oid) -> Option<&Arc<Relation>> {
        self.relations.get(&oid).or_else(|| system::by_oid(oid).map(|t| &t.relation))
    }

    pub fn namespace_name(&self, oid: Oid) -> &str {
        self.namespaces.get(&oid).map(|n| n.name.as_str()).unwrap_or("???")
    }

    pub fn lookup_relation(&self, namespace: Oid, name: &str) -> Option<&Arc<Relation>> {
        if namespace == PG_CATALOG_NAMESPACE || namespace == INFORMATION_SCHEMA_NAMESPACE {
            if let Some(t) = system::lookup(namespace, name) {
                return Some(&t.relation);
            }
        }
        self.relation_by_name.get(&(namespace, name.to_string())).and_then(|oid| self.relations.get(oid))
    }

    /// Indexes of a table, as relations.
    pub fn indexes_of<'a>(&'a self, table: &'a Relation) -> impl Iterator<Item = &'a Arc<Relation>> + 'a {
        table.indexes.iter().filter_map(move |oid| self.relations.get(oid))
    }

    /// find_all_inheritors: `table` and every table inheriting from it,
    /// directly or not, each once, parents before their children (breadth
    /// first, children by OID), as PostgreSQL expands an inherited scan.
    pub fn inheritance_tree(&self, table: Oid) -> Vec<Oid> {
        let mut out = vec![table];
        let mut i = 0;
        while i < out.len() {
            if let Some(r) = self.relations.get(&out[i]) {
                for c in &r.children {
                    if !out.contains(c) {
                        out.push(*c);
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// Foreign keys (constraint, owning table) that reference `table`.
    pub fn referencing_fks(&self, table: Oid) -> Vec<(Arc<Relation>, Constraint)> {
        let mut out = Vec::new();
        for rel in self.relations.values() {
            for c in &rel.constraints {
                if let Some(fk) = &c.foreign {
                    if fk.ref_table == table {
                        out.push((rel.clone(), c.clone()));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        out
    }

    /// Builds a catalog from its stored rows, deriving the index lists.
    pub fn build(database: Oid, namespaces: Vec<Namespace>, relations: Vec<Relation>, comments: Vec<((Oid, Oid, i32), String)>) -> DbCatalog {
        let mut cat = DbCatalog { database, ..Default::default() };
        for ns in namespaces {
            cat.namespace_by_name.insert(ns.name.clone(), ns.oid);
            cat.namespaces.insert(ns.oid, ns);
        }
        let mut rels: HashMap<Oid, Relation> = relations.into_iter().map(|r| (r.oid, r)).collect();
        let mut index_of: Vec<(Oid, Oid)> = rels
            .values()
            .filter_map(|r| r.index.as_ref().map(|i| (i.table, r.oid)))
            .collect();
        index_of.sort();
        for (table, index) in index_of {
            if let Some(t) = rels.get_mut(&table) {
                t.indexes.push(index);
            }
        }
        let mut child_of: Vec<(Oid, Oid)> = rels.values().flat_map(|r| r.inherits.iter().map(move |p| (*p, r.oid))).collect();
        child_of.sort();
        for (parent, child) in child_of {
            if let Some(p) = rels.get_mut(&parent) {
                p.children.push(child);
            }
        }
        for (oid, rel) in rels {
            cat.relation_by_name.insert((rel.namespace, rel.name.clone()), oid);
            cat.relations.insert(oid, Arc::new(rel));
        }
        cat.comments = comments.into_iter().collect();
        // The user types are derived once the stored ones are known
        // (`set_stored_types`).
        cat
    }

    /// Installs the stored user types (domains) and rebuilds the type map.
    pub fn set_stored_types(&mut self, stored: Vec<types::StoredType>) {
        self.stored_types = stored;
        self.user_types = Arc::new(types::UserTypes::build(self.relations.values(), &self.stored_types, self.namespace_by_name.clone()));
        ranges::complete_constructor_procs(self);
    }
}
