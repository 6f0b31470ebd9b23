//! CREATE TABLE ... (LIKE source [INCLUDING | EXCLUDING option ...]):
//! PostgreSQL's transformTableLikeClause and expandTableLikeClause.
//!
//! A LIKE clause stands for the source's columns (names, types, typmods,
//! collations and NOT NULL, always), and on request for their defaults,
//! identity, storage and compression (INCLUDING DEFAULTS | IDENTITY |
//! STORAGE | COMPRESSION), the source's CHECK constraints under their own
//! names (CONSTRAINTS), its indexes under names chosen for the new table
//! (INDEXES: primary key and unique constraints become constraints of the
//! new table, other indexes plain indexes), and the comments on all of
//! those (COMMENTS). INCLUDING STATISTICS copies extended statistics, which
//! Tusk does not have; INCLUDING GENERATED copies generation expressions,
//! which Tusk does not have either.
//!
//! The clause is expanded the way PostgreSQL does it: the columns and
//! constraints become ordinary table elements of the CREATE TABLE (written
//! as SQL and parsed, so they take the same path as typed-in ones), and the
//! indexes and comments are made once the table exists. Dropped columns of
//! the source are skipped; everything refers to columns by name, so the new
//! table's different attribute numbers need no mapping.

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use crate::analyzer::types::format_type;
use crate::catalog::{acl, builtins, system, ConstraintKind, DbCatalog, RelKind, Relation};
use crate::functions::quote_ident;
use crate::parser::{self, ParsedStatement};
use crate::session::SqlSession;

// CREATE_TABLE_LIKE_* bits of PostgreSQL's parsenodes.h, as the clause's options carry them.
const LIKE_COMMENTS: u32 = 1 << 0;
const LIKE_COMPRESSION: u32 = 1 << 1;
const LIKE_CONSTRAINTS: u32 = 1 << 2;
const LIKE_DEFAULTS: u32 = 1 << 3;
const LIKE_IDENTITY: u32 = 1 << 5;
const LIKE_INDEXES: u32 = 1 << 6;
const LIKE_STORAGE: u32 = 1 << 8;

/// pg_class's and pg_constraint's OIDs, the classes comments are filed under.
const RELATION_CLASS: u32 = 1259;
const CONSTRAINT_CLASS: u32 = 2606;

/// What remains to do once the table exists.
enum After {
    /// A copy of a source index that is no constraint, with its comment.
    Index(pb::IndexStmt, Option<String>),
    /// A copied constraint's comment (the constraint keeps its name, or a
    /// key constraint is found by its columns).
    ConstraintComment(ConstraintRef, String),
    /// A copied column's comment.
    ColumnComment(String, String),
}

enum ConstraintRef {
    Named(String),
    /// A primary key or unique constraint, named for the new table: found
    /// by its kind and columns.
    Key(ConstraintKind, Vec<String>),
}

/// CREATE TABLE, with its LIKE clauses expanded.
pub fn create_table(s: &mut SqlSession, stmt: &pb::CreateStmt, sql: &str) -> PgResult<()> {
    if !stmt.table_elts.iter().any(|e| matches!(e.node, Some(NodeEnum::TableLikeClause(_)))) {
        return super::ddl::create_table(s, stmt, sql);
    }
    let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("CREATE TABLE without name"))?;
    let catalog = s.catalog()?;
    let mut expanded = stmt.clone();
    let mut after = Vec::new();
    expanded.table_elts.clear();
    let mut key_constraints = Vec::new();
    for elt in &stmt.table_elts {
        match &elt.node {
            Some(NodeEnum::TableLikeClause(like)) => {
                let src = like_source(s, &catalog, like, sql)?;
                expand_like(&catalog, &src, like.options, &mut expanded.table_elts, &mut key_constraints, &mut after)?;
            }
            _ => expanded.table_elts.push(elt.clone()),
        }
    }
    // Key constraints after every column, as PostgreSQL adds the cloned
    // indexes after the table's own constraints.
    expanded.table_elts.extend(key_constraints);
    let skipped = stmt.if_not_exists && super::ddl::table_name_taken(s, rv, sql)?;
    super::ddl::create_table(s, &expanded, sql)?;
    if skipped {
        return Ok(());
    }
    finish(s, rv, after, sql)
}

/// The relation a LIKE clause names, checked as PostgreSQL does.
fn like_source(s: &SqlSession, catalog: &Arc<DbCatalog>, like: &pb::TableLikeClause, sql: &str) -> PgResult<Arc<Relation>> {
    let rv = like.relation.as_ref().ok_or_else(|| PgError::internal("LIKE without a relation"))?;
    let src = {
        let settings = s.settings.borrow();
        s.analyzer(catalog, &settings, &[], sql).range_var_relation(rv)?
    };
    let kind = match src.kind {
        RelKind::Table | RelKind::View | RelKind::ForeignTable | RelKind::CompositeType => None,
        RelKind::Sequence => Some("sequences"),
        RelKind::Index => Some("indexes"),
    };
    if let Some(kind) = kind {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("relation \"{}\" is invalid in LIKE clause", src.name))
            .with_position(crate::analyzer::pos(rv.location))
            .with_detail(format!("This operation is not supported for {kind}.")));
    }
    super::grant::check_relation_privileges(
        s,
        &[acl::RelPerm { rel: src.oid, required: acl::SELECT, as_role: None, target: false }],
    )?;
    Ok(src)
}

/// Appends the table elements a LIKE of `src` stands for.
fn expand_like(
    catalog: &DbCatalog,
    src: &Relation,
    options: u32,
    elts: &mut Vec<Node>,
    key_constraints: &mut Vec<Node>,
    after: &mut Vec<After>,
) -> PgResult<()> {
    let b = builtins();
    let comment = |class: u32, obj: u32, sub: i32| catalog.comments.get(&(class, obj, sub)).cloned();
    let mut defs = Vec::new();
    let mut storage = Vec::new();
    for (attnum, c) in src.live_columns() {
        let mut def = format!("{} {}", quote_ident(&c.name), format_type(b, c.type_oid, c.typmod));
        let type_collation = b.type_info(c.type_oid).map(|t| t.collation).unwrap_or(0);
        if c.collation != type_collation && c.collation != 0 {
            if let Some(name) = system::collation_name(c.collation) {
                def.push_str(&format!(" COLLATE pg_catalog.{}", quote_ident(name)));
            }
        }
        if c.not_null {
            def.push_str(" NOT NULL");
        }
        if options & LIKE_DEFAULTS != 0 {
            if let Some(default) = c.stored_default() {
                def.push_str(&format!(" DEFAULT {default}"));
            }
        }
        if options & LIKE_IDENTITY != 0 && c.identity != ' ' {
            def.push_str(&identity_clause(catalog, src, attnum, c.identity));
        }
        defs.push(def);
        storage.push((
            (options & LIKE_STORAGE != 0).then(|| c.settings.storage).flatten(),
            (options & LIKE_COMPRESSION != 0).then(|| c.settings.compression).flatten(),
        ));
        if options & LIKE_COMMENTS != 0 {
            if let Some(text) = comment(RELATION_CLASS, src.oid, attnum as i32) {
                after.push(After::ColumnComment(c.name.clone(), text));
            }
        }
    }
    let mut constraints = Vec::new();
    if options & LIKE_CONSTRAINTS != 0 {
        for k in src.constraints.iter().filter(|k| k.kind == ConstraintKind::Check) {
            let Some(check) = &k.check else { continue };
            constraints.push(format!(
                "CONSTRAINT {} CHECK ({check}){}",
                quote_ident(&k.name),
                if k.no_inherit { " NO INHERIT" } else { "" }
            ));
            if options & LIKE_COMMENTS != 0 {
                if let Some(text) = comment(CONSTRAINT_CLASS, k.oid, 0) {
                    after.push(After::ConstraintComment(ConstraintRef::Named(k.name.clone()), text));
                }
            }
        }
    }
    let mut keys = Vec::new();
    if options & LIKE_INDEXES != 0 {
        for ix in catalog.indexes_of(src) {
            let info = ix.index.as_ref().expect("an index relation has index info");
            let text = if options & LIKE_COMMENTS != 0 { comment(RELATION_CLASS, ix.oid, 0) } else { None };
            let constraint = src.constraints.iter().find(|k| k.index == ix.oid && matches!(k.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique));
            match constraint {
                Some(k) => {
                    let cols: Vec<String> = k.columns.iter().map(|&a| src.column(a).name.clone()).collect();
                    let quoted: Vec<String> = cols.iter().map(|c| quote_ident(c)).collect();
                    let mut clause = if k.kind == ConstraintKind::PrimaryKey {
                        format!("PRIMARY KEY ({})", quoted.join(", "))
                    } else {
                        format!("UNIQUE{} ({})", if info.nulls_not_distinct { " NULLS NOT DISTINCT" } else { "" }, quoted.join(", "))
                    };
                    if k.deferrable {
                        clause.push_str(if k.deferred { " DEFERRABLE INITIALLY DEFERRED" } else { " DEFERRABLE" });
                    }
                    keys.push(clause);
                    if let Some(text) = text {
                        after.push(After::ConstraintComment(ConstraintRef::Key(k.kind, cols), text));
                    }
                }
                None => after.push(After::Index(cloned_index(src, ix)?, text)),
            }
        }
    }
    // One CREATE TABLE in SQL gives every element its parse tree.
    let mut all = defs.clone();
    all.extend(constraints.iter().cloned());
    all.extend(keys.iter().cloned());
    if all.is_empty() {
        return Ok(());
    }
    let definition = format!("CREATE TABLE t ({})", all.join(", "));
    let parsed = parser::parse(&definition)?;
    let Some(ParsedStatement { node: NodeEnum::CreateStmt(create), .. }) = parsed.into_iter().next() else {
        return Err(PgError::internal("LIKE produced no table definition"));
    };
    for (i, mut elt) in create.table_elts.into_iter().enumerate() {
        if i < defs.len() {
            if let Some(NodeEnum::ColumnDef(cd)) = &mut elt.node {
                let (st, comp) = storage[i];
                if let Some(st) = st {
                    cd.storage = st.to_string();
                }
                if let Some(comp) = comp {
                    cd.compression = super::table_settings::compression_name(comp).to_string();
                }
            }
            elts.push(elt);
        } else if i < defs.len() + constraints.len() {
            elts.push(elt);
        } else {
            key_constraints.push(elt);
        }
    }
    Ok(())
}

/// GENERATED ... AS IDENTITY with the options of the source column's
/// sequence, for a sequence of the new table's own.
fn identity_clause(catalog: &DbCatalog, src: &Relation, attnum: i16, kind: char) -> String {
    let seq = catalog.relations.values().find_map(|r| r.sequence.as_ref().filter(|s| s.owned_by == Some((src.oid, attnum))));
    let when = if kind == 'a' { "ALWAYS" } else { "BY DEFAULT" };
    match seq {
        Some(q) => format!(
            " GENERATED {when} AS IDENTITY (START {} INCREMENT {} MINVALUE {} MAXVALUE {} CACHE {}{})",
            q.start,
            q.increment,
            q.min,
            q.max,
            q.cache,
            if q.cycle { " CYCLE" } else { " NO CYCLE" }
        ),
        None => format!(" GENERATED {when} AS IDENTITY"),
    }
}

/// generateClonedIndexStmt: CREATE INDEX for a copy of `ix` on the new
/// table, without a name (DefineIndex chooses one for the new table).
fn cloned_index(src: &Relation, ix: &Relation) -> PgResult<pb::IndexStmt> {
    let b = builtins();
    let info = ix.index.as_ref().expect("an index relation has index info");
    let mut keys = Vec::new();
    for k in &info.keys {
        let mut key = match &k.expr {
            Some(e) => format!("({e})"),
            None => quote_ident(&src.column(k.attnum).name),
        };
        if k.collation != 0 {
            if let Some(name) = system::collation_name(k.collation) {
                key.push_str(&format!(" COLLATE pg_catalog.{}", quote_ident(name)));
            }
        }
        if k.opclass != 0 {
            if let Some(class) = b.opclass(k.opclass) {
                key.push_str(&format!(" {}", quote_ident(&class.name)));
            }
        }
        if k.desc {
            key.push_str(" DESC");
        }
        if k.nulls_first != k.desc {
            key.push_str(if k.nulls_first { " NULLS FIRST" } else { " NULLS LAST" });
        }
        keys.push(key);
    }
    let text = format!(
        "CREATE {}INDEX ON t USING {} ({}){}{}",
        if info.unique { "UNIQUE " } else { "" },
        info.method,
        keys.join(", "),
        if info.nulls_not_distinct { " NULLS NOT DISTINCT" } else { "" },
        info.predicate.as_deref().map(|p| format!(" WHERE {p}")).unwrap_or_default()
    );
    let parsed = parser::parse(&text)?;
    let Some(ParsedStatement { node: NodeEnum::IndexStmt(stmt), .. }) = parsed.into_iter().next() else {
        return Err(PgError::internal("LIKE produced no index definition"));
    };
    Ok(*stmt)
}

/// The indexes and comments, once the table exists.
fn finish(s: &mut SqlSession, rv: &pb::RangeVar, after: Vec<After>, sql: &str) -> PgResult<()> {
    // The table just made: the newest table of that name (a temporary
    // table of the same name could hide it from a lookup by name).
    let table = |s: &SqlSession| -> PgResult<Arc<Relation>> {
        let catalog = s.catalog()?;
        let found = catalog.relations.values().filter(|r| r.kind == RelKind::Table && r.name == rv.relname).max_by_key(|r| r.oid).cloned();
        found.ok_or_else(|| PgError::internal("the table LIKE made is missing"))
    };
    let mut commented = false;
    for a in after {
        match a {
            After::Index(mut stmt, text) => {
                let before: Vec<u32> = table(s)?.indexes.clone();
                let t = table(s)?;
                let mut target = rv.clone();
                target.schemaname = s.catalog()?.namespace_name(t.namespace).to_string();
                stmt.relation = Some(target);
                super::ddl::create_index(s, &stmt, sql)?;
                if let Some(text) = text {
                    let t = table(s)?;
                    if let Some(&new) = t.indexes.iter().find(|o| !before.contains(o)) {
                        put_comment(s, RELATION_CLASS, new, 0, &text)?;
                        commented = true;
                    }
                }
            }
            After::ColumnComment(col, text) => {
                let t = table(s)?;
                if let Some((attnum, _)) = t.column_by_name(&col) {
                    put_comment(s, RELATION_CLASS, t.oid, attnum as i32, &text)?;
                    commented = true;
                }
            }
            After::ConstraintComment(which, text) => {
                let t = table(s)?;
                let found = t.constraints.iter().find(|k| match &which {
                    ConstraintRef::Named(n) => &k.name == n,
                    ConstraintRef::Key(kind, cols) => {
                        k.kind == *kind && k.columns.iter().map(|&a| &t.column(a).name).eq(cols.iter())
                    }
                });
                if let Some(k) = found {
                    // A key constraint's comment is its index's in PostgreSQL
                    // (COMMENT ON INDEX of the source); it lands on the new index.
                    let (class, obj) = match which {
                        ConstraintRef::Named(_) => (CONSTRAINT_CLASS, k.oid),
                        ConstraintRef::Key(..) => (RELATION_CLASS, k.index),
                    };
                    put_comment(s, class, obj, 0, &text)?;
                    commented = true;
                }
            }
        }
    }
    if commented {
        s.reload_txn_catalog()?;
    }
    Ok(())
}

fn put_comment(s: &SqlSession, class: u32, obj: u32, sub: i32, text: &str) -> PgResult<()> {
    crate::catalog::store::put_comment(s.txn()?, s.db, class, obj, sub, Some(text))
}
