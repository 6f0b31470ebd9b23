//! Data definition: CREATE/DROP/ALTER of tables, indexes, views,
//! sequences, schemas and databases, TRUNCATE and COMMENT.
//!
//! Every change writes catalog rows through the session's transaction, so
//! DDL commits and rolls back like data. After each statement the session
//! re-reads its catalog view through the transaction.

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_storage::row::encode_row;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::naming::choose_name;
use super::{def_elem_value, notice};
use crate::analyzer::coerce::CoercionContext;
use crate::analyzer::types::{format_type, resolve_type_name};
use crate::analyzer::Analyzer;
use crate::catalog::store::{self, new_oid, new_storage_id};
use crate::catalog::depend;
use crate::catalog::*;
use crate::executor::table::TableAccess;
use crate::expr::Expr;
use crate::session::SqlSession;

/// A node's string (identifier) value.
fn ident(n: &Node) -> Option<&str> {
    match &n.node {
        Some(NodeEnum::String(s)) => Some(&s.sval),
        _ => None,
    }
}

/// Deparses a raw expression back to SQL text (for storing defaults, CHECK
/// and index expressions), through PostgreSQL's own deparser.
pub fn deparse_expr(n: &Node) -> PgResult<String> {
    let target = Node {
        node: Some(NodeEnum::ResTarget(Box::new(pb::ResTarget { name: String::new(), indirection: vec![], val: Some(Box::new(n.clone())), location: -1 }))),
    };
    let sel = pb::SelectStmt { target_list: vec![target], limit_option: 1, op: 1, ..Default::default() };
    let tree = pb::ParseResult {
        version: 150001,
        stmts: vec![pb::RawStmt { stmt: Some(Box::new(Node { node: Some(NodeEnum::SelectStmt(Box::new(sel))) })), stmt_location: 0, stmt_len: 0 }],
    };
    let text = pg_query::deparse(&tree).map_err(|e| PgError::internal(format!("could not deparse expression: {e}")))?;
    Ok(text.strip_prefix("SELECT ").unwrap_or(&text).to_string())
}

pub fn deparse_select(sel: &pb::SelectStmt) -> PgResult<String> {
    let tree = pb::ParseResult {
        version: 150001,
        stmts: vec![pb::RawStmt {
            stmt: Some(Box::new(Node { node: Some(NodeEnum::SelectStmt(Box::new(sel.clone()))) })),
            stmt_location: 0,
            stmt_len: 0,
        }],
    };
    pg_query::deparse(&tree).map_err(|e| PgError::internal(format!("could not deparse query: {e}")))
}

/// A view's `*` stands for the columns its tables had when the view was
/// made (PostgreSQL expands it then): the stored text lists them, so that a
/// column added to a table later does not appear in the view. One star in
/// a plain select list is expanded; anything else is stored as written.
fn expand_view_star(sel: &pb::SelectStmt, q: &crate::query::Query) -> pb::SelectStmt {
    let is_star = |n: &Node| match &n.node {
        Some(NodeEnum::ResTarget(rt)) => matches!(rt.val.as_deref().and_then(|v| v.node.as_ref()),
            Some(NodeEnum::ColumnRef(c)) if matches!(c.fields.last().and_then(|f| f.node.as_ref()), Some(NodeEnum::AStar(_)))),
        _ => false,
    };
    let stars: Vec<usize> = sel.target_list.iter().enumerate().filter(|(_, t)| is_star(t)).map(|(i, _)| i).collect();
    if stars.len() != 1 || sel.op > 1 {
        return sel.clone();
    }
    let at = stars[0];
    let outputs: Vec<&crate::query::TargetEntry> = q.output().collect();
    let Some(count) = outputs.len().checked_sub(sel.target_list.len() - 1) else { return sel.clone() };
    let mut expanded = Vec::with_capacity(count);
    for t in &outputs[at..at + count] {
        let Some(parts) = crate::functions::viewdef::star_column_ref(q, &t.expr) else { return sel.clone() };
        let string = |s: &str| Node { node: Some(NodeEnum::String(pb::String { sval: s.to_string() })) };
        let fields: Vec<Node> = parts.iter().map(|p| string(p)).collect();
        let col = parts.last().cloned().unwrap_or_default();
        let name = if t.name == col { String::new() } else { t.name.clone() };
        expanded.push(Node {
            node: Some(NodeEnum::ResTarget(Box::new(pb::ResTarget {
                name,
                val: Some(Box::new(Node { node: Some(NodeEnum::ColumnRef(pb::ColumnRef { fields, location: -1 })) })),
                location: -1,
                ..Default::default()
            }))),
        });
    }
    let mut out = sel.clone();
    out.target_list.splice(at..at + 1, expanded);
    out
}

/// A view's NATURAL JOIN joins on the columns the two sides had in common
/// when the view was made (PostgreSQL stores the USING list it found): the
/// stored text says USING (...), so that a column added to a table later
/// does not change the join. Joins of the top-level FROM list are matched
/// with the analyzed ones in the order the analyzer made them.
fn natural_joins_spelled_out(sel: &pb::SelectStmt, q: &crate::query::Query) -> pb::SelectStmt {
    use crate::query::FromItem;
    fn analyzed(item: &FromItem, q: &crate::query::Query, out: &mut Vec<Vec<String>>) {
        if let FromItem::Join { left, right, rte, .. } = item {
            analyzed(left, q, out);
            analyzed(right, q, out);
            let width = |i: &FromItem| match i {
                FromItem::Rte(r) | FromItem::Join { rte: r, .. } => q.rtable[*r].col_names.len(),
            };
            let merged = (width(left) + width(right)).saturating_sub(q.rtable[*rte].col_names.len());
            out.push(q.rtable[*rte].col_names[..merged].to_vec());
        }
    }
    let mut using_lists = Vec::new();
    for item in &q.from {
        analyzed(item, q, &mut using_lists);
    }
    let mut out = sel.clone();
    let mut next = 0;
    for n in out.from_clause.iter_mut() {
        if !spell_out(n, &using_lists, &mut next) {
            return sel.clone();
        }
    }
    if next != using_lists.len() {
        return sel.clone();
    }
    out
}

/// Rewrites the NATURAL joins under `n` (inputs first, as the analyzer
/// visits them) with the USING lists found; false when the trees disagree.
fn spell_out(n: &mut Node, using_lists: &[Vec<String>], next: &mut usize) -> bool {
    let Some(NodeEnum::JoinExpr(j)) = n.node.as_mut() else { return true };
    for side in [j.larg.as_deref_mut(), j.rarg.as_deref_mut()].into_iter().flatten() {
        if !spell_out(side, using_lists, next) {
            return false;
        }
    }
    let Some(columns) = using_lists.get(*next) else { return false };
    *next += 1;
    if j.is_natural && !j.alias.as_ref().is_some_and(|a| !a.colnames.is_empty()) {
        j.is_natural = false;
        j.using_clause = columns.iter().map(|c| Node { node: Some(NodeEnum::String(pb::String { sval: c.clone() })) }).collect();
    }
    true
}

/// Helpers shared by the DDL commands.
pub(crate) struct Ddl<'s> {
    pub s: &'s SqlSession,
    pub catalog: Arc<DbCatalog>,
    pub sql: &'s str,
}

impl<'s> Ddl<'s> {
    pub fn new(s: &'s SqlSession, sql: &'s str) -> PgResult<Ddl<'s>> {
        let catalog = s.catalog()?;
        {
            // Type names a DDL statement gives (DROP TYPE, ALTER TYPE, a
            // domain's base type) resolve along the session's search path,
            // which making an analyzer installs; a session's first
            // statement would otherwise see pg_catalog alone.
            if let Ok(settings) = s.settings.try_borrow() {
                let _ = s.analyzer(&catalog, &settings, &[], sql);
            }
        }
        Ok(Ddl { s, catalog, sql })
    }

    pub(crate) fn db(&self) -> Oid {
        self.s.db
    }

    pub(crate) fn txn(&self) -> PgResult<&tusk_storage::Txn> {
        self.s.txn()
    }

    pub(crate) fn oid(&self) -> PgResult<Oid> {
        new_oid(&self.s.cluster.engine)
    }

    /// New storage for a relation this transaction creates or rewrites.
    pub(crate) fn storage(&self) -> PgResult<u32> {
        let id = new_storage_id(&self.s.cluster.engine)?;
        self.s.note_fresh_storage(id);
        Ok(id)
    }

    fn analyzer<'a>(&'a self, settings: &'a crate::settings::Settings) -> Analyzer<'a> {
        self.s.analyzer(&self.catalog, settings, &[], self.sql)
    }

    /// Takes the exclusive lock that orders DDL on a relation after
    /// concurrent users of it (writers, and readers in transaction blocks,
    /// hold it shared until they commit).
    ///
    /// This DDL read the relation before waiting; if another DDL changed or
    /// dropped it meanwhile, going on would overwrite that change, so the
    /// statement fails instead (PostgreSQL would re-read and go on).
    pub fn lock_relation(&self, rel: Oid) -> PgResult<()> {
        let txn = self.txn()?;
        txn.get_for_update(&relation_lock_key(rel))?;
        // The writers this waited for have committed: read their rows too.
        txn.refresh_statement_snapshot();
        let Some(known) = self.catalog.relation(rel) else { return Ok(()) };
        match txn.get_latest(&store::relation_key(self.db(), rel))? {
            Some(row) if row == store::encode(&**known) => Ok(()),
            Some(_) => Err(PgError::new(sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent update")),
            None => Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", known.name))),
        }
    }

    pub(crate) fn relation_name_taken(&self, nsp: Oid, name: &str) -> bool {
        self.catalog.lookup_relation(nsp, name).is_some()
    }

    /// Writes a new relation, claiming its name.
    /// Writes a new relation, claiming its name, with its row type if its
    /// kind has one (a name no other type may have, as PostgreSQL's
    /// heap_create_with_catalog checks).
    pub(crate) fn create_relation(&self, rel: &mut Relation) -> PgResult<()> {
        if crate::catalog::types::has_row_type(rel.kind) && rel.row_type == 0 {
            if self.catalog.user_types.lookup(rel.namespace, &rel.name).is_some() {
                return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("type \"{}\" already exists", rel.name))
                    .with_hint("A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type."));
            }
            // heap_create_with_catalog's order: the array type's OID first.
            rel.row_array_type = self.oid()?;
            rel.row_type = self.oid()?;
        }
        if !store::claim_name(self.txn()?, self.db(), rel.namespace, &rel.name, rel.oid)? {
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", rel.name)));
        }
        store::put_relation(self.txn()?, self.db(), rel)
    }

    pub(crate) fn put(&self, rel: &Relation) -> PgResult<()> {
        store::put_relation(self.txn()?, self.db(), rel)
    }

    pub(crate) fn namespace_for(&self, rv: &pb::RangeVar, temp: bool) -> PgResult<Oid> {
        let settings = self.s.settings.borrow();
        let a = self.analyzer(&settings);
        let schema = if rv.schemaname.is_empty() { None } else { Some(rv.schemaname.as_str()) };
        if schema == Some("pg_catalog") || schema == Some("information_schema") {
            return Err(PgError::new(
                sqlstate::INSUFFICIENT_PRIVILEGE,
                format!("permission denied to create \"{}.{}\"", rv.schemaname, rv.relname),
            )
            .with_detail("System catalog modifications are currently disallowed."));
        }
        let nsp = a.creation_namespace(schema, temp)?;
        super::grant::check_schema_create(self.s, nsp)?;
        Ok(nsp)
    }

    pub(crate) fn lookup(&self, rv: &pb::RangeVar) -> PgResult<Arc<Relation>> {
        let settings = self.s.settings.borrow();
        let a = self.analyzer(&settings);
        a.range_var_relation(rv).map_err(super::utility_error)
    }

    fn lookup_opt(&self, rv: &pb::RangeVar) -> PgResult<Option<Arc<Relation>>> {
        let settings = self.s.settings.borrow();
        let a = self.analyzer(&settings);
        let schema = if rv.schemaname.is_empty() { None } else { Some(rv.schemaname.as_str()) };
        if let Some(s) = schema {
            if s != "pg_temp" && !self.catalog.namespace_by_name.contains_key(s) {
                return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{s}\" does not exist")));
            }
        }
        Ok(a.lookup_relation(schema, &rv.relname))
    }

    pub(crate) fn constraint_name_taken(&self, nsp: Oid, name: &str, extra: &[String]) -> bool {
        extra.iter().any(|e| e == name)
            || self.relation_name_taken(nsp, name)
            || self.catalog.relations.values().any(|r| r.namespace == nsp && r.constraints.iter().any(|c| c.name == name))
    }
}

pub fn relation_lock_key(rel: Oid) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::LOCK_PREFIX, b'r'];
    k.extend_from_slice(&rel.to_be_bytes());
    k
}

pub(crate) fn new_column(name: &str, ty: SqlType) -> Column {
    Column {
        name: name.to_string(),
        type_oid: ty.oid,
        typmod: ty.typmod,
        not_null: false,
        default: None,
        dropped: false,
        identity: ' ',
        missing: None,
        // The type's collation (pg_type.typcollation): 100 for text types
        // and their arrays, C (950) for name, 0 for types without one.
        collation: crate::catalog::builtins().type_info(ty.oid).map(|t| t.collation).unwrap_or(0),
        settings: Default::default(),
        inhcount: 0,
        is_local: true,
    }
}

pub(crate) fn new_relation(oid: Oid, name: &str, namespace: Oid, kind: RelKind, persistence: char, owner: Oid) -> Relation {
    Relation {
        oid,
        name: name.to_string(),
        namespace,
        kind,
        persistence,
        owner,
        columns: Vec::new(),
        storage_id: 0,
        constraints: Vec::new(),
        index: None,
        view: None,
        sequence: None,
        options: Vec::new(),
        acl: None,
        flags: Default::default(),
        foreign: None,
        indexes: Vec::new(),
        toast: None,
        inherits: Vec::new(),
        children: Vec::new(),
        triggers: Vec::new(),
        row_type: 0,
        row_array_type: 0,
    }
}

/// Which relations a view's query reads (for DROP dependencies).
fn query_relations(q: &crate::query::Query, out: &mut Vec<Oid>) {
    use crate::query::RteKind;
    if let Some(v) = q.expanded_view {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    for rte in &q.rtable {
        match &rte.kind {
            RteKind::Relation(r) => {
                if !out.contains(&r.oid) {
                    out.push(r.oid)
                }
            }
            RteKind::Subquery(sq) => query_relations(sq, out),
            _ => {}
        }
    }
    for c in &q.ctes {
        query_relations(&c.query, out);
        if let Some((a, b, _)) = &c.recursive_parts {
            query_relations(a, out);
            query_relations(b, out);
        }
    }
    let mut visit = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::SubLink { query, .. } = x {
                query_relations(query, out);
            }
        })
    };
    for t in &q.targets {
        visit(&t.expr);
    }
    if let Some(w) = &q.quals {
        visit(w);
    }
    if let Some(h) = &q.having {
        visit(h);
    }
}

/// Where a column definition's sequence options come from.
pub(crate) struct SerialSpec {
    col: usize,
    type_oid: Oid,
    identity: Option<char>,
    options: Vec<Node>,
}

// ---------------------------------------------------------------- CREATE TABLE

/// Whether CREATE TABLE of `rv` would find its name taken (CREATE TABLE AS
/// IF NOT EXISTS skips filling a table it did not create).
pub(crate) fn table_name_taken(s: &mut SqlSession, rv: &pb::RangeVar, sql: &str) -> PgResult<bool> {
    let temp = rv.relpersistence == "t";
    if temp {
        ensure_temp_namespace(s)?;
    }
    let d = Ddl::new(s, sql)?;
    let nsp = d.namespace_for(rv, temp)?;
    Ok(d.relation_name_taken(nsp, &rv.relname))
}

pub fn create_table(s: &mut SqlSession, stmt: &pb::CreateStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("CREATE TABLE without name"))?;
    let temp = rv.relpersistence == "t";
    if stmt.partspec.is_some() || stmt.partbound.is_some() {
        return Err(PgError::unsupported("declarative partitioning"));
    }
    if stmt.of_typename.is_some() {
        return Err(PgError::unsupported("typed tables (OF type)"));
    }
    let on_commit = match stmt.oncommit {
        x if x == pb::OnCommitAction::OncommitDeleteRows as i32 => Some(crate::session::OnCommit::DeleteRows),
        x if x == pb::OnCommitAction::OncommitDrop as i32 => Some(crate::session::OnCommit::Drop),
        _ => None,
    };
    if on_commit.is_some() && !temp {
        return Err(PgError::new(sqlstate::INVALID_TABLE_DEFINITION, "ON COMMIT can only be used on temporary tables"));
    }
    if temp {
        ensure_temp_namespace(s)?;
    }
    {
        let d = Ddl::new(s, sql)?;
        let nsp = d.namespace_for(rv, temp)?;
        let name_taken = d.relation_name_taken(nsp, &rv.relname);
        if name_taken && stmt.if_not_exists {
            notice(s, format!("relation \"{}\" already exists, skipping", rv.relname));
            return Ok(());
        }
        // DefineRelation checks the storage parameters before the name.
        let (options, toast_options) = super::reloptions::for_table(&stmt.options)?;
        if name_taken {
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", rv.relname)));
        }
        // The table's OID comes after its serial sequences' (below), as in
        // PostgreSQL, which creates them first: messages listing objects
        // in OID order (DROP ROLE's) then read alike.
        let mut rel = new_relation(0, &rv.relname, nsp, RelKind::Table, if temp { 't' } else if rv.relpersistence == "u" { 'u' } else { 'p' }, super::grant::current_role_oid(s));
        rel.storage_id = d.storage()?;
        rel.options = options;
        let mut table_constraints: Vec<pb::Constraint> = Vec::new();
        let mut serials: Vec<SerialSpec> = Vec::new();
        let mut raw_defaults: Vec<(usize, Node)> = Vec::new();
        // INHERITS: the parents' columns and CHECK constraints come first.
        let parents = super::inherit::resolve_parents(&d, stmt, rel.persistence)?;
        let inherited = super::inherit::inherit_columns(&d, &parents, &mut rel)?;
        let mut local_names: Vec<&str> = Vec::new();
        for elt in &stmt.table_elts {
            match &elt.node {
                Some(NodeEnum::ColumnDef(cd)) => {
                    if local_names.contains(&cd.colname.as_str()) {
                        return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", cd.colname)));
                    }
                    local_names.push(&cd.colname);
                    let merged = rel.columns[..inherited.count].iter().position(|c| c.name == cd.colname);
                    let idx = merged.unwrap_or(rel.columns.len());
                    let (col, serial) = column_from_def(&d, cd, idx)?;
                    match merged {
                        Some(i) => super::inherit::merge_local_column(&d, &mut rel.columns[i], &col, i + 1 != local_names.len())?,
                        None => rel.columns.push(col),
                    }
                    if let Some(sp) = serial {
                        serials.push(sp);
                    }
                    if let Some(def) = &cd.raw_default {
                        raw_defaults.push((idx, (**def).clone()));
                    }
                    for c in &cd.constraints {
                        let Some(NodeEnum::Constraint(con)) = &c.node else { continue };
                        match con.contype {
                            1 => {} // NULL
                            2 => rel.columns[idx].not_null = true,
                            3 => {
                                if let Some(e) = &con.raw_expr {
                                    raw_defaults.push((idx, (**e).clone()));
                                }
                            }
                            4 => {
                                let kind = if con.generated_when == "a" { 'a' } else { 'd' };
                                if serials.iter().any(|sp| sp.col == idx) {
                                    return Err(PgError::syntax(format!(
                                        "multiple identity specifications for column \"{}\" of table \"{}\"",
                                        cd.colname, rel.name
                                    )));
                                }
                                let t = rel.columns[idx].type_oid;
                                if !matches!(t, oid::INT2 | oid::INT4 | oid::INT8) {
                                    return Err(PgError::new(
                                        sqlstate::INVALID_PARAMETER_VALUE,
                                        format!("identity column type must be smallint, integer, or bigint"),
                                    ));
                                }
                                rel.columns[idx].identity = kind;
                                rel.columns[idx].not_null = true;
                                serials.push(SerialSpec { col: idx, type_oid: t, identity: Some(kind), options: con.options.clone() });
                            }
                            5 => return Err(PgError::unsupported("generated columns")),
                            11..=14 => {
                                // DEFERRABLE etc. attach to the previous constraint.
                                if let Some(last) = table_constraints.last_mut() {
                                    apply_constraint_attr(last, con.contype);
                                }
                            }
                            _ => {
                                // Column constraints become table constraints on this column.
                                let mut tc = con.clone();
                                match con.contype {
                                    7 | 8 => tc.keys = vec![Node { node: Some(NodeEnum::String(pb::String { sval: cd.colname.clone() })) }],
                                    10 => tc.fk_attrs = vec![Node { node: Some(NodeEnum::String(pb::String { sval: cd.colname.clone() })) }],
                                    6 => {
                                        if tc.conname.is_empty() {
                                            tc.conname = String::new();
                                            // Column CHECKs are named after their column.
                                            tc.cooked_expr = cd.colname.clone();
                                        }
                                    }
                                    9 => return Err(PgError::unsupported("exclusion constraints")),
                                    _ => {}
                                }
                                table_constraints.push(*tc);
                            }
                        }
                    }
                }
                Some(NodeEnum::Constraint(con)) => table_constraints.push((**con).clone()),
                Some(NodeEnum::TableLikeClause(_)) => return Err(PgError::unsupported("CREATE TABLE ... (LIKE ...)")),
                _ => return Err(PgError::unsupported("this table element")),
            }
        }
        if rel.columns.len() > 1600 {
            return Err(PgError::new(sqlstate::TOO_MANY_COLUMNS, "tables can have at most 1600 columns"));
        }
        // Sequences for serial and identity columns.
        let mut created_names: Vec<String> = Vec::new();
        let mut sequences: Vec<Relation> = Vec::new();
        for sp in &serials {
            let colname = rel.columns[sp.col].name.clone();
            let seq_name = choose_name(&rel.name, Some(&colname), "seq", &|n| d.relation_name_taken(nsp, n) || created_names.iter().any(|c| c == n) || n == rel.name);
            created_names.push(seq_name.clone());
            let attnum = sp.col as i16 + 1;
            let mut info = default_sequence_info(sp.type_oid);
            apply_sequence_options(&mut info, &sp.options, true)?;
            info.owned_by = Some((0, attnum));
            let seq_oid = d.oid()?;
            let mut seq = new_relation(seq_oid, &seq_name, nsp, RelKind::Sequence, rel.persistence, rel.owner);
            seq.columns = sequence_columns();
            seq.sequence = Some(info);
            sequences.push(seq);
            if sp.identity.is_none() {
                // As regclass prints it: quoted where the name needs it.
                let qualified = if nsp == PUBLIC_NAMESPACE || Some(nsp) == s.temp_namespace {
                    crate::functions::quote_ident(&seq_name)
                } else {
                    format!("{}.{}", crate::functions::quote_ident(&d.catalog.namespace_name(nsp)), crate::functions::quote_ident(&seq_name))
                };
                rel.columns[sp.col].default = Some(format!("nextval('{}'::regclass)", qualified.replace('\'', "''")));
            }
        }
        rel.oid = d.oid()?;
        for mut seq in sequences {
            if let Some(info) = seq.sequence.as_mut() {
                info.owned_by = info.owned_by.map(|(_, attnum)| (rel.oid, attnum));
            }
            d.create_relation(&mut seq)?;
        }
        // Defaults: validate against the column type, store as text.
        for (idx, e) in &raw_defaults {
            if rel.columns[*idx].identity != ' ' {
                return Err(PgError::syntax(format!(
                    "both default and identity specified for column \"{}\" of table \"{}\"",
                    rel.columns[*idx].name, rel.name
                )));
            }
            let text = deparse_expr(e)?;
            check_default_node(&d, &rel, *idx, e)?;
            rel.columns[*idx].default = Some(text);
        }
        let overridden: Vec<usize> = raw_defaults.iter().map(|(i, _)| *i).collect();
        super::inherit::check_conflicting_defaults(&rel, &inherited, &overridden)?;
        rel.inherits = parents.iter().map(|p| p.oid).collect();
        for p in &parents {
            d.lock_relation(p.oid)?;
        }
        // Table constraints, PRIMARY KEY first so the table is clustered on it.
        table_constraints.sort_by_key(|c| if c.contype == 7 { 0 } else { 1 });
        let mut new_indexes: Vec<Relation> = Vec::new();
        for con in &table_constraints {
            add_constraint(&d, &mut rel, con, true, &mut new_indexes, &mut created_names)?;
        }
        if super::reloptions::needs_toast_table(&rel) {
            rel.toast = Some(crate::catalog::ToastInfo { oid: d.oid()?, index_oid: d.oid()?, options: toast_options });
        }
        d.create_relation(&mut rel)?;
        for idx in &new_indexes {
            d.create_relation(&mut idx.clone())?;
        }
        if let Some(action) = on_commit {
            s.on_commit.borrow_mut().push((rel.oid, action));
        }
    }
    s.reload_txn_catalog()
}

/// A column constraint's [NOT] DEFERRABLE / INITIALLY DEFERRED|IMMEDIATE
/// (a node of its own after the constraint it qualifies): INITIALLY
/// DEFERRED alone implies DEFERRABLE (transformConstraintAttrs).
fn apply_constraint_attr(last: &mut pb::Constraint, contype: i32) {
    match contype {
        11 => last.deferrable = true,
        12 => last.deferrable = false,
        13 => {
            last.initdeferred = true;
            last.deferrable = true;
        }
        _ => last.initdeferred = false,
    }
}

fn sequence_columns() -> Vec<Column> {
    let mut last = new_column("last_value", SqlType::new(oid::INT8));
    last.not_null = true;
    let mut cnt = new_column("log_cnt", SqlType::new(oid::INT8));
    cnt.not_null = true;
    let mut called = new_column("is_called", SqlType::new(oid::BOOL));
    called.not_null = true;
    vec![last, cnt, called]
}

pub(crate) fn column_from_def(d: &Ddl, cd: &pb::ColumnDef, idx: usize) -> PgResult<(Column, Option<SerialSpec>)> {
    if crate::expr::SystemColumn::by_name(&cd.colname).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column name \"{}\" conflicts with a system column name", cd.colname)));
    }
    let tn = cd.type_name.as_ref().ok_or_else(|| PgError::internal("column without type"))?;
    let (schema, name) = crate::analyzer::types::type_name_parts(tn);
    let serial_type = if schema.is_none() || schema.as_deref() == Some("pg_catalog") {
        match name.as_str() {
            "serial" | "serial4" => Some(oid::INT4),
            "bigserial" | "serial8" => Some(oid::INT8),
            "smallserial" | "serial2" => Some(oid::INT2),
            _ => None,
        }
    } else {
        None
    };
    if let Some(t) = serial_type {
        if !tn.array_bounds.is_empty() {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "array of serial is not implemented"));
        }
        let mut c = new_column(&cd.colname, SqlType::new(t));
        c.not_null = true;
        return Ok((c, Some(SerialSpec { col: idx, type_oid: t, identity: None, options: vec![] })));
    }
    let ty = resolve_type_name(crate::catalog::builtins(), tn)?;
    if let Some(info) = crate::catalog::builtins().type_info(ty.oid) {
        if info.typtype == 'p' {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("column \"{}\" has pseudo-type {}", cd.colname, format_type(crate::catalog::builtins(), ty.oid, -1)),
            ));
        }
    }
    let _ = d;
    let mut c = new_column(&cd.colname, ty);
    c.not_null = cd.is_not_null;
    super::table_settings::column_def_settings(cd, &mut c)?;
    if let Some(coll) = &cd.coll_clause {
        let name = coll.collname.iter().filter_map(ident).collect::<Vec<_>>().join(".");
        let at = crate::analyzer::pos(coll.location);
        let oid = collation_oid(&name).map_err(|e| e.with_position(at))?;
        if c.collation == 0 {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("collations are not supported by type {}", format_type(crate::catalog::builtins(), ty.oid, -1)),
            )
            .with_position(at));
        }
        c.collation = oid;
    }
    Ok((c, None))
}

/// Validates a DEFAULT expression for a column: it must not reference
/// columns and must be assignable to the column's type.
fn check_default(d: &Ddl, rel: &Relation, col: usize, text: &str) -> PgResult<()> {
    // ALTER TABLE cooks defaults without the statement's text (cookDefault
    // with a NULL query string): its errors carry no position.
    let node = crate::analyzer::parse_expression(text)?;
    check_default_node(d, rel, col, &node).map_err(super::utility_error)
}

/// cookDefault for a DEFAULT written in the statement being run.
fn check_default_node(d: &Ddl, rel: &Relation, col: usize, node: &Node) -> PgResult<()> {
    let settings = d.s.settings.borrow();
    let mut a = d.analyzer(&settings);
    let e = a.analyze_standalone_node(node, "DEFAULT expressions").map_err(|e| {
        if e.code == sqlstate::UNDEFINED_COLUMN {
            let mut refused = PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot use column reference in DEFAULT expression");
            refused.position = e.position;
            refused
        } else {
            e
        }
    })?;
    let target = rel.columns[col].sql_type();
    let from = e.ty();
    if e.contains_agg() {
        return Err(PgError::new(sqlstate::GROUPING_ERROR, "aggregate functions are not allowed in DEFAULT expressions"));
    }
    match a.try_coerce(e, target, CoercionContext::Assignment, -1)? {
        Ok(_) => Ok(()),
        Err(_) => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "column \"{}\" is of type {} but default expression is of type {}",
                rel.columns[col].name,
                format_type(crate::catalog::builtins(), target.oid, -1),
                format_type(crate::catalog::builtins(), from.oid, -1)
            ),
        )
        .with_hint("You will need to rewrite or cast the expression.")),
    }
}

/// Resolves a key column list to attribute numbers.
pub(crate) fn key_attnums(rel: &Relation, keys: &[Node], what: &str) -> PgResult<Vec<i16>> {
    let mut out = Vec::new();
    for k in keys {
        let name = ident(k).ok_or_else(|| PgError::internal("key column"))?;
        let (attnum, _) = rel.column_by_name(name).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" named in key does not exist"))
        })?;
        if out.contains(&attnum) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{name}\" appears twice in {what} constraint")));
        }
        out.push(attnum);
    }
    Ok(out)
}

/// Adds a table constraint to `rel` (at CREATE TABLE or ALTER TABLE ADD).
/// New index relations are appended to `new_indexes`.
fn add_constraint(
    d: &Ddl,
    rel: &mut Relation,
    con: &pb::Constraint,
    creating: bool,
    new_indexes: &mut Vec<Relation>,
    taken: &mut Vec<String>,
) -> PgResult<()> {
    let nsp = rel.namespace;
    match con.contype {
        // CHECK
        6 => {
            let expr = con.raw_expr.as_deref().ok_or_else(|| PgError::internal("CHECK without expression"))?;
            let text = deparse_expr(expr)?;
            // Validate: boolean, no aggregates or subqueries; note the
            // columns it reads (for its default name).
            let mut read_columns: Vec<usize> = Vec::new();
            {
                let settings = d.s.settings.borrow();
                let mut a = d.analyzer(&settings);
                // CREATE TABLE cooks its constraints with the statement's
                // text at hand, ALTER TABLE without (no error position).
                let e = a.analyze_relation_node(Arc::new(rel.clone()), expr, "check constraints").map_err(|e| if creating { e } else { super::utility_error(e) })?;
                let mut system = None;
                e.walk(&mut |x| {
                    if let Expr::Var(v) = x {
                        if let Some(sc) = crate::expr::SystemColumn::of_var_col(v.col) {
                            system = system.or(Some(sc));
                        }
                        if !read_columns.contains(&v.col) {
                            read_columns.push(v.col);
                        }
                    }
                });
                // Only the row's table is known when a CHECK is evaluated.
                if let Some(sc) = system.filter(|sc| *sc != crate::expr::SystemColumn::TableOid) {
                    return Err(PgError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        format!("system column \"{}\" reference in check constraint is invalid", sc.name()),
                    ));
                }
                if e.ty().oid != oid::BOOL {
                    let _ = a.coerce_to_boolean(e, "CHECK", -1)?;
                }
            }
            let name = if !con.conname.is_empty() {
                // One of that name (inherited) may take this definition in.
                let arrival = super::inherit::CheckArrival {
                    name: &con.conname,
                    text: &text,
                    local: true,
                    no_inherit: con.is_no_inherit,
                    valid: creating || !con.skip_validation,
                };
                if super::inherit::merge_check(d, rel, &arrival)? {
                    return Ok(());
                }
                con.conname.clone()
            } else {
                // As PostgreSQL: named after the column when the expression
                // reads exactly one, else after the table alone (the syntax,
                // column or table constraint, does not matter).
                let col = match read_columns.as_slice() {
                    [c] => match crate::expr::SystemColumn::of_var_col(*c) {
                        Some(sc) => Some(sc.name().to_string()),
                        None => rel.live_columns().nth(*c).map(|(_, col)| col.name.clone()),
                    },
                    _ => None,
                };
                let _ = expr;
                choose_name(&rel.name, col.as_deref(), "check", &|n| {
                    rel.constraints.iter().any(|c| c.name == n) || taken.iter().any(|t| t == n)
                })
            };
            taken.push(name.clone());
            rel.constraints.push(Constraint {
                oid: d.oid()?,
                name,
                kind: ConstraintKind::Check,
                columns: vec![],
                check: Some(text),
                index: 0,
                foreign: None,
                deferrable: false,
                deferred: false,
                // NOT VALID leaves existing rows unchecked (ALTER TABLE ADD
                // only: a new table's constraints are valid, it has no rows).
                validated: creating || !con.skip_validation,
                no_inherit: con.is_no_inherit,
                inhcount: 0,
                is_local: true,
            });
        }
        // PRIMARY KEY / UNIQUE
        7 | 8 => {
            let primary = con.contype == 7;
            if primary && rel.primary_key().is_some() {
                return Err(PgError::new(
                    sqlstate::INVALID_TABLE_DEFINITION,
                    format!("multiple primary keys for table \"{}\" are not allowed", rel.name),
                ));
            }
            if !con.indexname.is_empty() {
                return Err(PgError::unsupported("constraints USING INDEX"));
            }
            let attnums = key_attnums(rel, &con.keys, if primary { "primary key" } else { "unique" })?;
            if primary {
                for &a in &attnums {
                    rel.columns[a as usize - 1].not_null = true;
                }
            }
            let include = included_columns(rel, &con.including, true)?;
            let colnames: Vec<String> = attnums.iter().chain(&include).map(|&a| rel.column(a).name.clone()).collect();
            let name = if !con.conname.is_empty() {
                con.conname.clone()
            } else if primary {
                choose_name(&rel.name, None, "pkey", &|n| d.constraint_name_taken(nsp, n, taken))
            } else {
                choose_name(&rel.name, Some(&colnames.join("_")), "key", &|n| d.constraint_name_taken(nsp, n, taken))
            };
            if d.relation_name_taken(nsp, &name) || taken.contains(&name) {
                return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
            }
            taken.push(name.clone());
            let idx_oid = d.oid()?;
            // A primary key declared with the table clusters the table's rows
            // on it; a deferrable one cannot (rows may share a key until
            // the check), so its table keeps hidden row ids.
            let clustered = primary && creating && !con.deferrable;
            let mut idx = new_relation(idx_oid, &name, nsp, RelKind::Index, rel.persistence, rel.owner);
            idx.storage_id = if clustered { rel.storage_id } else { d.storage()? };
            idx.columns = attnums.iter().chain(&include).map(|&a| new_column(&rel.column(a).name, rel.column(a).sql_type())).collect();
            idx.options = super::reloptions::for_index(&con.options, "btree")?;
            idx.index = Some(IndexInfo {
                table: rel.oid,
                keys: attnums.iter().map(|&a| IndexKey { attnum: a, expr: None, desc: false, nulls_first: false, opclass: 0, collation: 0 }).collect(),
                unique: true,
                primary,
                clustered,
                predicate: None,
                nulls_not_distinct: con.nulls_not_distinct,
                method: "btree".into(),
                deferrable: con.deferrable,
                include,
                cluster_on: false,
                replica_identity: false,
                exclusion: Vec::new(),
            });
            rel.constraints.push(Constraint {
                oid: d.oid()?,
                name,
                kind: if primary { ConstraintKind::PrimaryKey } else { ConstraintKind::Unique },
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
        }
        // FOREIGN KEY
        10 => {
            let pkrv = con.pktable.as_ref().ok_or_else(|| PgError::internal("FK without table"))?;
            let fk_cols = key_attnums(rel, &con.fk_attrs, "foreign key")?;
            // The referenced table may be the one being created.
            let parent: Relation = if pkrv.relname == rel.name && (pkrv.schemaname.is_empty() || d.catalog.namespace_name(nsp) == pkrv.schemaname) {
                rel.clone()
            } else {
                let p = d.lookup(pkrv)?;
                if p.kind != RelKind::Table {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("referenced relation \"{}\" is not a table", p.name)));
                }
                if rel.persistence != 't' && p.persistence == 't' {
                    return Err(PgError::new(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        "constraints on permanent tables may reference only permanent tables",
                    ));
                }
                if rel.persistence == 't' && p.persistence != 't' {
                    return Err(PgError::new(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        "constraints on temporary tables may reference only temporary tables",
                    ));
                }
                (*p).clone()
            };
            // Referenced columns: given, or the primary key.
            let (ref_cols, ref_index) = if con.pk_attrs.is_empty() {
                let pk = parent.primary_key().ok_or_else(|| {
                    PgError::new(
                        sqlstate::INVALID_FOREIGN_KEY,
                        format!("there is no primary key for referenced table \"{}\"", parent.name),
                    )
                })?;
                if pk.deferrable {
                    return Err(PgError::new(
                        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        format!("cannot use a deferrable primary key for referenced table \"{}\"", parent.name),
                    ));
                }
                (pk.columns.clone(), pk.index)
            } else {
                let cols = key_attnums(&parent, &con.pk_attrs, "foreign key")?;
                let mut sorted = cols.clone();
                sorted.sort();
                let matches = |c: &&Constraint| {
                    matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique) && {
                        let mut k = c.columns.clone();
                        k.sort();
                        k == sorted
                    }
                };
                // A deferrable key cannot guarantee the referenced row is
                // unique when the reference is checked.
                let found = parent.constraints.iter().filter(matches).find(|c| !c.deferrable);
                let found_deferrable = parent.constraints.iter().filter(matches).any(|c| c.deferrable);
                let index = match found {
                    Some(c) => c.index,
                    None => {
                        // A unique index (not constraint) also qualifies.
                        let idx = d.catalog.indexes_of(&parent).find(|i| {
                            let info = i.index.as_ref().expect("index");
                            info.unique && info.exclusion.is_empty() && !info.deferrable && info.predicate.is_none() && {
                                let mut k: Vec<i16> = info.keys.iter().map(|k| k.attnum).collect();
                                k.sort();
                                k == sorted && info.keys.iter().all(|k| k.expr.is_none())
                            }
                        });
                        match idx {
                            Some(i) => i.oid,
                            None if found_deferrable => {
                                return Err(PgError::new(
                                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                                    format!("cannot use a deferrable unique constraint for referenced table \"{}\"", parent.name),
                                ))
                            }
                            None => {
                                return Err(PgError::new(
                                    sqlstate::INVALID_FOREIGN_KEY,
                                    format!("there is no unique constraint matching given keys for referenced table \"{}\"", parent.name),
                                ))
                            }
                        }
                    }
                };
                (cols, index)
            };
            if ref_cols.len() != fk_cols.len() {
                return Err(PgError::new(
                    sqlstate::INVALID_FOREIGN_KEY,
                    "number of referencing and referenced columns for foreign key disagree",
                ));
            }
            let colnames: Vec<String> = fk_cols.iter().map(|&a| rel.column(a).name.clone()).collect();
            let name = if !con.conname.is_empty() {
                con.conname.clone()
            } else {
                choose_name(&rel.name, Some(&colnames.join("_")), "fkey", &|n| {
                    rel.constraints.iter().any(|c| c.name == n) || taken.iter().any(|t| t == n)
                })
            };
            // Key types must be comparable with an equality operator.
            {
                let settings = d.s.settings.borrow();
                let mut a = d.analyzer(&settings);
                for (&fc, &pc) in fk_cols.iter().zip(&ref_cols) {
                    let ft = rel.column(fc).sql_type();
                    let pt = parent.column(pc).sql_type();
                    let l = Expr::Const(Datum::Null, ft);
                    let r = Expr::Const(Datum::Null, pt);
                    if a.make_op("=", Some(l), Some(r), -1).is_err() {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            format!("foreign key constraint \"{name}\" cannot be implemented"),
                        )
                        .with_detail(format!(
                            "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                            rel.column(fc).name,
                            parent.column(pc).name,
                            // format_type_be: the types without their modifiers
                            format_type(crate::catalog::builtins(), ft.oid, -1),
                            format_type(crate::catalog::builtins(), pt.oid, -1)
                        )));
                    }
                }
            }
            let action = |s: &str| match s {
                "r" => FkAction::Restrict,
                "c" => FkAction::Cascade,
                "n" => FkAction::SetNull,
                "d" => FkAction::SetDefault,
                _ => FkAction::NoAction,
            };
            taken.push(name.clone());
            rel.constraints.push(Constraint {
                oid: d.oid()?,
                name,
                kind: ConstraintKind::ForeignKey,
                columns: fk_cols,
                check: None,
                index: ref_index,
                foreign: Some(ForeignKey {
                    ref_table: parent.oid,
                    ref_columns: ref_cols,
                    on_delete: action(&con.fk_del_action),
                    on_update: action(&con.fk_upd_action),
                    match_type: if con.fk_matchtype == "f" { 'f' } else { 's' },
                    ref_index,
                }),
                deferrable: con.deferrable,
                deferred: con.initdeferred,
                validated: creating || !con.skip_validation,
                no_inherit: false,
                inhcount: 0,
                is_local: true,
            });
        }
        9 => super::exclusion::add_exclusion_constraint(d, rel, con, new_indexes, taken)?,
        2 | 1 => {}
        _ => return Err(PgError::unsupported("this constraint type")),
    }
    Ok(())
}

pub(crate) fn ensure_temp_namespace(s: &mut SqlSession) -> PgResult<()> {
    if s.temp_namespace.is_some() {
        return Ok(());
    }
    let oid = new_oid(&s.cluster.engine)?;
    let ns = Namespace { oid, name: format!("pg_temp_{}", s.pid), owner: 10, temp_session: Some(s.pid as u32), acl: None };
    store::put_namespace(s.txn()?, s.db, &ns)?;
    s.temp_namespace = Some(oid);
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- sequences

fn default_sequence_info(type_oid: Oid) -> SequenceInfo {
    let max = match type_oid {
        oid::INT2 => i16::MAX as i64,
        oid::INT4 => i32::MAX as i64,
        _ => i64::MAX,
    };
    SequenceInfo { type_oid, start: 1, increment: 1, min: 1, max, cache: 1, cycle: false, owned_by: None }
}

fn def_int(de: &pb::DefElem) -> PgResult<i64> {
    let v = def_elem_value(de).ok_or_else(|| PgError::syntax(format!("{} requires a numeric value", de.defname)))?;
    v.parse::<i64>().map_err(|_| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for {}: \"{v}\"", de.defname)))
}

/// Applies CREATE/ALTER SEQUENCE options, with PostgreSQL's validation.
fn apply_sequence_options(info: &mut SequenceInfo, options: &[Node], creating: bool) -> PgResult<Option<Option<i64>>> {
    let mut restart: Option<Option<i64>> = None;
    let mut min_given: Option<Option<i64>> = None;
    let mut max_given: Option<Option<i64>> = None;
    let mut start_given = None;
    let mut seen: Vec<String> = Vec::new();
    for o in options {
        let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
        if seen.contains(&de.defname) {
            return Err(PgError::syntax("conflicting or redundant options"));
        }
        seen.push(de.defname.clone());
        match de.defname.as_str() {
            "as" => {
                let tn = match de.arg.as_deref().and_then(|n| n.node.as_ref()) {
                    Some(NodeEnum::TypeName(t)) => t.clone(),
                    _ => return Err(PgError::syntax("AS requires a type")),
                };
                let t = resolve_type_name(crate::catalog::builtins(), &tn)?;
                if !matches!(t.oid, oid::INT2 | oid::INT4 | oid::INT8) {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "sequence type must be smallint, integer, or bigint",
                    ));
                }
                let old_max = match info.type_oid {
                    oid::INT2 => i16::MAX as i64,
                    oid::INT4 => i32::MAX as i64,
                    _ => i64::MAX,
                };
                info.type_oid = t.oid;
                if info.max == old_max {
                    info.max = match t.oid {
                        oid::INT2 => i16::MAX as i64,
                        oid::INT4 => i32::MAX as i64,
                        _ => i64::MAX,
                    };
                }
            }
            "increment" => {
                info.increment = def_int(de)?;
                if info.increment == 0 {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "INCREMENT must not be zero"));
                }
            }
            "minvalue" => min_given = Some(if de.arg.is_some() { Some(def_int(de)?) } else { None }),
            "maxvalue" => max_given = Some(if de.arg.is_some() { Some(def_int(de)?) } else { None }),
            "start" => start_given = Some(def_int(de)?),
            "restart" => restart = Some(if de.arg.is_some() { Some(def_int(de)?) } else { None }),
            "cache" => {
                info.cache = def_int(de)?;
                if info.cache <= 0 {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("CACHE ({}) must be greater than zero", info.cache),
                    ));
                }
            }
            "cycle" => info.cycle = def_elem_value(de).map(|v| v == "true" || v == "1").unwrap_or(true),
            "owned_by" | "sequence_name" => {}
            other => return Err(PgError::syntax(format!("option \"{other}\" not recognized"))),
        }
    }
    let (tmin, tmax) = match info.type_oid {
        oid::INT2 => (i16::MIN as i64, i16::MAX as i64),
        oid::INT4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    match max_given {
        Some(Some(v)) => info.max = v,
        Some(None) => info.max = if info.increment > 0 { tmax } else { -1 },
        None if creating => info.max = if info.increment > 0 { tmax } else { -1 },
        None => {}
    }
    match min_given {
        Some(Some(v)) => info.min = v,
        Some(None) => info.min = if info.increment > 0 { 1 } else { tmin },
        None if creating => info.min = if info.increment > 0 { 1 } else { tmin },
        None => {}
    }
    if info.max > tmax || info.max < tmin {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("MAXVALUE ({}) is out of range for sequence data type {}", info.max, format_type(crate::catalog::builtins(), info.type_oid, -1)),
        ));
    }
    if info.min < tmin || info.min > tmax {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("MINVALUE ({}) is out of range for sequence data type {}", info.min, format_type(crate::catalog::builtins(), info.type_oid, -1)),
        ));
    }
    if info.min >= info.max {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("MINVALUE ({}) must be less than MAXVALUE ({})", info.min, info.max),
        ));
    }
    match start_given {
        Some(v) => info.start = v,
        None if creating => info.start = if info.increment > 0 { info.min } else { info.max },
        None => {}
    }
    if info.start < info.min {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("START value ({}) cannot be less than MINVALUE ({})", info.start, info.min),
        ));
    }
    if info.start > info.max {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("START value ({}) cannot be greater than MAXVALUE ({})", info.start, info.max),
        ));
    }
    Ok(restart)
}

pub fn create_sequence(s: &mut SqlSession, stmt: &pb::CreateSeqStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.sequence.as_ref().ok_or_else(|| PgError::internal("CREATE SEQUENCE without name"))?;
    let temp = rv.relpersistence == "t";
    if temp {
        ensure_temp_namespace(s)?;
    }
    {
        let d = Ddl::new(s, sql)?;
        let nsp = d.namespace_for(rv, temp)?;
        if d.relation_name_taken(nsp, &rv.relname) {
            if stmt.if_not_exists {
                notice(s, format!("relation \"{}\" already exists, skipping", rv.relname));
                return Ok(());
            }
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", rv.relname)));
        }
        let mut info = default_sequence_info(oid::INT8);
        apply_sequence_options(&mut info, &stmt.options, true)?;
        for o in &stmt.options {
            if let Some(NodeEnum::DefElem(de)) = &o.node {
                if de.defname == "owned_by" {
                    info.owned_by = owned_by(&d, de)?;
                }
            }
        }
        let oid = d.oid()?;
        let mut seq = new_relation(oid, &rv.relname, nsp, RelKind::Sequence, if temp { 't' } else { 'p' }, super::grant::current_role_oid(s));
        seq.columns = sequence_columns();
        seq.sequence = Some(info);
        d.create_relation(&mut seq)?;
    }
    s.reload_txn_catalog()
}

fn owned_by(d: &Ddl, de: &pb::DefElem) -> PgResult<Option<(Oid, i16)>> {
    let Some(NodeEnum::List(l)) = de.arg.as_deref().and_then(|n| n.node.as_ref()) else { return Ok(None) };
    let parts: Vec<&str> = l.items.iter().filter_map(ident).collect();
    if parts == ["none"] {
        return Ok(None);
    }
    if parts.len() < 2 {
        return Err(PgError::syntax("invalid OWNED BY option").with_hint("Specify OWNED BY table.column or OWNED BY NONE."));
    }
    let col = parts[parts.len() - 1];
    let rv = pb::RangeVar {
        relname: parts[parts.len() - 2].to_string(),
        schemaname: if parts.len() > 2 { parts[parts.len() - 3].to_string() } else { String::new() },
        inh: true,
        relpersistence: "p".into(),
        ..Default::default()
    };
    let rel = d.lookup(&rv)?;
    let (attnum, _) = rel
        .column_by_name(col)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{col}\" of relation \"{}\" does not exist", rel.name)))?;
    Ok(Some((rel.oid, attnum)))
}

pub fn alter_sequence(s: &mut SqlSession, stmt: &pb::AlterSeqStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.sequence.as_ref().ok_or_else(|| PgError::internal("ALTER SEQUENCE without name"))?;
    {
        let d = Ddl::new(s, sql)?;
        let Some(rel) = d.lookup_opt(rv)? else {
            if stmt.missing_ok {
                notice(s, format!("relation \"{}\" does not exist, skipping", rv.relname));
                return Ok(());
            }
            return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", rv.relname)));
        };
        super::grant::check_relation_owner(d.s, &rel)?;
        if rel.kind != RelKind::Sequence {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a sequence", rel.name)));
        }
        let mut info = rel.sequence.clone().ok_or_else(|| PgError::internal("sequence info"))?;
        let restart = apply_sequence_options(&mut info, &stmt.options, false)?;
        for o in &stmt.options {
            if let Some(NodeEnum::DefElem(de)) = &o.node {
                if de.defname == "owned_by" {
                    info.owned_by = owned_by(&d, de)?;
                }
            }
        }
        let mut updated = (*rel).clone();
        updated.sequence = Some(info.clone());
        d.put(&updated)?;
        if let Some(r) = restart {
            let v = r.unwrap_or(info.start);
            if v < info.min || v > info.max {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("RESTART value ({v}) cannot be {} than {} ({})", if v < info.min { "less" } else { "greater" }, if v < info.min { "MINVALUE" } else { "MAXVALUE" }, if v < info.min { info.min } else { info.max }),
                ));
            }
            s.restart_sequence(rel.oid, &info, v)?;
        }
    }
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- CREATE INDEX

pub fn create_index(s: &mut SqlSession, stmt: &pb::IndexStmt, sql: &str) -> PgResult<()> {
    {
        let d = Ddl::new(s, sql)?;
        let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("CREATE INDEX without table"))?;
        let rel = d.lookup(rv)?;
        super::grant::check_relation_owner(d.s, &rel)?;
        if rel.kind == RelKind::ForeignTable {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot create index on relation \"{}\"", rel.name))
                .with_detail("This operation is not supported for foreign tables."));
        }
        if rel.kind != RelKind::Table {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a table", rel.name)));
        }
        let method = if stmt.access_method.is_empty() { "btree" } else { stmt.access_method.as_str() };
        if !matches!(method, "btree" | "hash" | "gin") {
            return Err(PgError::unsupported(format!("index access method \"{method}\"")));
        }
        if method == "gin" && stmt.unique {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "access method \"gin\" does not support unique indexes"));
        }
        d.lock_relation(rel.oid)?;
        let mut keys = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut key_types: Vec<SqlType> = Vec::new();
        for p in &stmt.index_params {
            let Some(NodeEnum::IndexElem(ie)) = &p.node else { continue };
            let desc = ie.ordering == 3;
            let nulls_first = match ie.nulls_ordering {
                2 => true,
                3 => false,
                _ => desc,
            };
            let collation = index_elem_collation(ie)?;
            if !ie.name.is_empty() {
                let (attnum, _) = rel.column_by_name(&ie.name).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" does not exist", ie.name))
                })?;
                let ty = rel.column(attnum).sql_type();
                let opclass = index_elem_opclass(ie, method, ty.oid)?;
                let opclass = super::gin_index::key_opclass(ie, method, ty.oid, opclass)?;
                names.push(ie.name.clone());
                key_types.push(super::gin_index::key_column_type(method, opclass, ty));
                keys.push(IndexKey { attnum, expr: None, desc, nulls_first, opclass, collation });
            } else {
                let e = ie.expr.as_deref().ok_or_else(|| PgError::internal("index element"))?;
                let text = deparse_expr(e)?;
                let ty = {
                    let settings = d.s.settings.borrow();
                    let mut a = d.analyzer(&settings);
                    let ex = a.analyze_relation_node(rel.clone(), e, "index expressions")?;
                    if ex.is_volatile() {
                        return Err(PgError::new(
                            sqlstate::INVALID_OBJECT_DEFINITION,
                            "functions in index expression must be marked IMMUTABLE",
                        ));
                    }
                    ex.ty()
                };
                let opclass = index_elem_opclass(ie, method, ty.oid)?;
                let opclass = super::gin_index::key_opclass(ie, method, ty.oid, opclass)?;
                let colname = crate::analyzer::figure_index_colname(e);
                names.push(colname);
                key_types.push(super::gin_index::key_column_type(method, opclass, ty));
                keys.push(IndexKey { attnum: 0, expr: Some(text), desc, nulls_first, opclass, collation });
            }
        }
        if !stmt.index_including_params.is_empty() && method != "btree" {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("access method \"{method}\" does not support included columns")));
        }
        let include = included_columns(&rel, &stmt.index_including_params, false)?;
        for &attnum in &include {
            names.push(rel.column(attnum).name.clone());
            key_types.push(rel.column(attnum).sql_type());
        }
        // ChooseIndexColumnNames: a repeated name gets a number (expr, expr1).
        let mut unique_names: Vec<String> = Vec::with_capacity(names.len());
        for n in names {
            let mut cur = n.clone();
            let mut i = 1;
            while unique_names.contains(&cur) {
                cur = format!("{n}{i}");
                i += 1;
            }
            unique_names.push(cur);
        }
        let names = unique_names;
        let nsp = rel.namespace;
        let name = if stmt.idxname.is_empty() {
            choose_name(&rel.name, Some(&names.join("_")), if stmt.primary { "pkey" } else if stmt.isconstraint { "key" } else { "idx" }, &|n| {
                d.relation_name_taken(nsp, n)
            })
        } else {
            stmt.idxname.clone()
        };
        let index_options = super::reloptions::for_index(&stmt.options, method)?;
        let predicate = match &stmt.where_clause {
            Some(w) => {
                let text = deparse_expr(w)?;
                {
                    let settings = d.s.settings.borrow();
                    let mut a = d.analyzer(&settings);
                    let e = a.analyze_relation_node(rel.clone(), w, "index predicates")?;
                    a.coerce_to_boolean(e, "WHERE", -1)?;
                }
                Some(text)
            }
            None => None,
        };
        // index_create checks the name after the options and the predicate.
        if d.relation_name_taken(nsp, &name) {
            if stmt.if_not_exists {
                notice(s, format!("relation \"{name}\" already exists, skipping"));
                return Ok(());
            }
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
        }
        let idx_oid = d.oid()?;
        let mut idx = new_relation(idx_oid, &name, nsp, RelKind::Index, rel.persistence, rel.owner);
        idx.storage_id = d.storage()?;
        idx.options = index_options;
        // The index's columns: the keys' names, types and collations.
        idx.columns = names
            .iter()
            .zip(&key_types)
            .enumerate()
            .map(|(i, (n, &ty))| {
                let mut c = new_column(n, ty);
                let attnum = keys.get(i).map(|k| k.attnum).unwrap_or_else(|| include[i - keys.len()]);
                match keys.get(i) {
                    Some(k) if k.collation != 0 => c.collation = k.collation,
                    _ if attnum > 0 => c.collation = rel.column(attnum).collation,
                    _ => {}
                }
                c
            })
            .collect();
        idx.index = Some(IndexInfo {
            table: rel.oid,
            keys,
            unique: stmt.unique,
            primary: false,
            clustered: false,
            predicate,
            nulls_not_distinct: stmt.nulls_not_distinct,
            method: method.to_string(),
            deferrable: false,
            include,
            cluster_on: false,
            replica_identity: false,
            exclusion: Vec::new(),
        });
        d.create_relation(&mut idx)?;
        build_index(&d, &rel, idx_oid)?;
    }
    s.reload_txn_catalog()
}

/// The INCLUDE columns of an index or a UNIQUE / PRIMARY KEY constraint
/// (ComputeIndexAttrs): plain columns, without collation, operator class
/// or ordering.
fn included_columns(rel: &Relation, params: &[Node], constraint: bool) -> PgResult<Vec<i16>> {
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        let name = match &p.node {
            Some(NodeEnum::IndexElem(ie)) => {
                if ie.name.is_empty() {
                    return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "expressions are not supported in included columns"));
                }
                let refuse = |what: &str| Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("including column does not support {what}")));
                if !ie.collation.is_empty() {
                    return refuse("a collation");
                }
                if !ie.opclass.is_empty() {
                    return refuse("an operator class");
                }
                if ie.ordering > 1 {
                    return refuse("ASC/DESC options");
                }
                if ie.nulls_ordering > 1 {
                    return refuse("NULLS FIRST/LAST options");
                }
                ie.name.clone()
            }
            Some(NodeEnum::String(s)) => s.sval.clone(),
            _ => continue,
        };
        let Some((attnum, _)) = rel.column_by_name(&name) else {
            let msg = if constraint { format!("column \"{name}\" named in key does not exist") } else { format!("column \"{name}\" does not exist") };
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, msg));
        };
        out.push(attnum);
    }
    Ok(out)
}

/// The operator class an index element names, checked against the access
/// method and the key's type (ResolveOpClass); 0 when it names none.
fn index_elem_opclass(ie: &pb::IndexElem, method: &str, key_type: Oid) -> PgResult<Oid> {
    let b = crate::catalog::builtins();
    let names: Vec<&str> = ie.opclass.iter().filter_map(ident).collect();
    let Some(&name) = names.last() else { return Ok(0) };
    if names.len() > 1 && names[0] != "pg_catalog" {
        return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", names[0])));
    }
    let am = crate::catalog::builtin::Builtins::index_am_oid(method);
    let Some(class) = b.opclass_by_name(am, name) else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("operator class \"{name}\" does not exist for access method \"{method}\""),
        ));
    };
    if !b.is_binary_coercible(key_type, class.intype) {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("operator class \"{name}\" does not accept data type {}", format_type(b, key_type, -1)),
        ));
    }
    Ok(class.oid)
}

/// The collation an index element names (`COLLATE "C"`), or 0.
fn index_elem_collation(ie: &pb::IndexElem) -> PgResult<Oid> {
    if ie.collation.is_empty() {
        return Ok(0);
    }
    let name = ie.collation.iter().filter_map(ident).collect::<Vec<_>>().join(".");
    collation_oid(&name)
}

/// The OID of a collation Tusk knows by name (pg_collation's rows, see
/// `catalog::system::collation_name`; all of them order bytewise, as C).
fn collation_oid(name: &str) -> PgResult<Oid> {
    let bare = name.strip_prefix("pg_catalog.").unwrap_or(name);
    crate::catalog::system::collation_by_name(bare)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("collation \"{name}\" for encoding \"UTF8\" does not exist")))
}

/// Fills a new index from the table's existing rows.
pub(crate) fn build_index(d: &Ddl, rel: &Relation, idx_oid: Oid) -> PgResult<()> {
    // Re-read the catalog through the transaction so the table sees its new index.
    let cat = Arc::new(store::load_database(d.txn()?, d.db())?);
    let table_rel = cat.relation(rel.oid).ok_or_else(|| PgError::internal("table vanished"))?.clone();
    d.s.with_exec(&cat, |cx| {
        let table = TableAccess::new(table_rel.clone(), &cat, &mut crate::executor::nodes_compile(cx))?;
        let i = table.indexes.iter().position(|ix| ix.rel.oid == idx_oid).ok_or_else(|| PgError::internal("new index missing"))?;
        if table.indexes[i].clustered {
            return Ok(());
        }
        table.build_index(i, cx)
    })
}

// ---------------------------------------------------------------- CREATE VIEW

pub fn create_view(s: &mut SqlSession, stmt: &pb::ViewStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.view.as_ref().ok_or_else(|| PgError::internal("CREATE VIEW without name"))?;
    let temp = rv.relpersistence == "t";
    if temp {
        ensure_temp_namespace(s)?;
    }
    {
        let d = Ddl::new(s, sql)?;
        let sel = match stmt.query.as_deref().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::SelectStmt(sel)) => sel.clone(),
            _ => return Err(PgError::internal("view without SELECT")),
        };
        // WITH [LOCAL | CASCADED] CHECK OPTION, or WITH (check_option = ...).
        let mut check_option = match stmt.with_check_option {
            x if x == pb::ViewCheckOption::LocalCheckOption as i32 => Some("local".to_string()),
            x if x == pb::ViewCheckOption::CascadedCheckOption as i32 => Some("cascaded".to_string()),
            _ => None,
        };
        for o in &stmt.options {
            let Some(NodeEnum::DefElem(de)) = &o.node else { continue };
            let value = def_elem_value(de).unwrap_or_default().to_lowercase();
            match (de.defname.as_str(), value.as_str()) {
                ("check_option", "local" | "cascaded") => check_option = Some(value),
                ("check_option", _) => {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid value for enum option \"check_option\": ".to_string() + &value)
                        .with_detail("Valid values are \"local\" and \"cascaded\"."))
                }
                ("security_barrier" | "security_invoker", _) => {}
                (other, _) => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("unrecognized parameter \"{other}\""))),
            }
        }
        let clause_check = match stmt.with_check_option {
            x if x == pb::ViewCheckOption::LocalCheckOption as i32 => Some("local"),
            x if x == pb::ViewCheckOption::CascadedCheckOption as i32 => Some("cascaded"),
            _ => None,
        };
        let view_options = super::reloptions::for_view(&stmt.options, clause_check)?;
        let q = {
            let settings = d.s.settings.borrow();
            let mut a = d.analyzer(&settings);
            a.defining_view = true;
            a.analyze_select_stmt(&sel)?
        };
        let mut cols: Vec<Column> = q.output().map(|t| new_column(&t.name, t.expr.ty())).collect();
        if stmt.aliases.len() > cols.len() {
            return Err(PgError::syntax("CREATE VIEW specifies more column names than columns"));
        }
        for (i, a) in stmt.aliases.iter().enumerate() {
            if let Some(n) = ident(a) {
                cols[i].name = n.to_string();
            }
        }
        for (i, c) in cols.iter().enumerate() {
            if cols[..i].iter().any(|o| o.name == c.name) {
                return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", c.name)));
            }
        }
        let mut depends = Vec::new();
        query_relations(&q, &mut depends);
        let refs = super::dependency::view_references(&q)?;
        let text = deparse_select(&natural_joins_spelled_out(&expand_view_star(&sel, &q), &q))?;
        let temp_deps = depends.iter().any(|o| d.catalog.relation(*o).map(|r| r.persistence == 't').unwrap_or(false));
        if temp_deps && !temp {
            notice(d.s, format!("view \"{}\" will be a temporary view", rv.relname));
        }
        // A view reading temporary tables is temporary itself, in the
        // session's temporary schema (a schema named for it is refused).
        let temp = temp || temp_deps;
        let nsp = d.namespace_for(rv, temp)?;
        if let Some(existing) = d.catalog.lookup_relation(nsp, &rv.relname) {
            if !stmt.replace {
                return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", rv.relname)));
            }
            if existing.kind != RelKind::View {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a view", rv.relname)));
            }
            let old: Vec<&Column> = existing.live_columns().map(|(_, c)| c).collect();
            if cols.len() < old.len() {
                return Err(PgError::new(sqlstate::INVALID_TABLE_DEFINITION, "cannot drop columns from view"));
            }
            for (o, n) in old.iter().zip(&cols) {
                if o.name != n.name {
                    return Err(PgError::new(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        format!("cannot change name of view column \"{}\" to \"{}\"", o.name, n.name),
                    )
                    .with_hint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."));
                }
                if o.type_oid != n.type_oid {
                    return Err(PgError::new(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        format!(
                            "cannot change data type of view column \"{}\" from {} to {}",
                            o.name,
                            format_type(crate::catalog::builtins(), o.type_oid, o.typmod),
                            format_type(crate::catalog::builtins(), n.type_oid, n.typmod)
                        ),
                    ));
                }
            }
            let mut updated = (**existing).clone();
            updated.columns = cols;
            // The view keeps its rule, as PostgreSQL's replaces the rule's action.
            let rule_oid = match existing.view.as_ref().map(|v| v.rule_oid) {
                Some(o) if o != 0 => o,
                _ => d.oid()?,
            };
            updated.view = Some(ViewInfo { query: text, check_option, depends_on: depends, refs: refs.columns.clone(), constraint_refs: refs.constraints.clone(), function_refs: refs.functions.clone(), rule_oid });
            updated.options = view_options;
            d.put(&updated)?;
        } else {
            let oid = d.oid()?;
            let rule_oid = d.oid()?;
            let mut view = new_relation(oid, &rv.relname, nsp, RelKind::View, if temp { 't' } else { 'p' }, super::grant::current_role_oid(s));
            view.columns = cols;
            view.view = Some(ViewInfo { query: text, check_option, depends_on: depends, refs: refs.columns.clone(), constraint_refs: refs.constraints.clone(), function_refs: refs.functions.clone(), rule_oid });
            view.options = view_options;
            d.create_relation(&mut view)?;
        }
    }
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- schemas and databases

pub fn create_schema(s: &mut SqlSession, stmt: &pb::CreateSchemaStmt, sql: &str) -> PgResult<()> {
    let name = if stmt.schemaname.is_empty() {
        match &stmt.authrole {
            Some(r) => r.rolename.clone(),
            None => return Err(PgError::syntax("schema name required")),
        }
    } else {
        stmt.schemaname.clone()
    };
    let schema_owner = super::grant::schema_creation_owner(s, stmt.authrole.as_ref())?;
    if name.starts_with("pg_") {
        return Err(PgError::new(sqlstate::RESERVED_NAME, format!("unacceptable schema name \"{name}\""))
            .with_detail("The prefix \"pg_\" is reserved for system schemas."));
    }
    {
        let catalog = s.catalog()?;
        // Lock the name (as a pseudo relation name in a pseudo namespace) to serialize concurrent creators.
        if !store::claim_name(s.txn()?, s.db, 0, &name, 0)? || catalog.namespace_by_name.contains_key(&name) {
            if stmt.if_not_exists {
                notice(s, format!("schema \"{name}\" already exists, skipping"));
                return Ok(());
            }
            return Err(PgError::new(sqlstate::DUPLICATE_SCHEMA, format!("schema \"{name}\" already exists")));
        }
        let oid = new_oid(&s.cluster.engine)?;
        store::put_namespace(s.txn()?, s.db, &Namespace { oid, name: name.clone(), owner: schema_owner, temp_session: None, acl: None })?;
    }
    s.reload_txn_catalog()?;
    // Schema elements run with the new schema as the creation target.
    for elt in &stmt.schema_elts {
        let Some(n) = &elt.node else { continue };
        let mut n = n.clone();
        set_default_schema(&mut n, &name);
        super::execute_ddl_node(s, &n, sql)?;
    }
    Ok(())
}

fn set_default_schema(n: &mut NodeEnum, schema: &str) {
    let fix = |rv: &mut Option<pb::RangeVar>| {
        if let Some(r) = rv {
            if r.schemaname.is_empty() {
                r.schemaname = schema.to_string();
            }
        }
    };
    match n {
        NodeEnum::CreateStmt(c) => fix(&mut c.relation),
        NodeEnum::ViewStmt(v) => fix(&mut v.view),
        NodeEnum::CreateSeqStmt(c) => fix(&mut c.sequence),
        NodeEnum::IndexStmt(i) => fix(&mut i.relation),
        _ => {}
    }
}

/// "database is being accessed by other users", with PostgreSQL's count.
fn database_in_use(message: String, others: usize) -> PgError {
    let detail = if others == 1 {
        "There is 1 other session using the database.".to_string()
    } else {
        format!("There are {others} other sessions using the database.")
    };
    PgError::new(sqlstate::OBJECT_IN_USE, message).with_detail(detail)
}

pub fn create_database(s: &mut SqlSession, stmt: &pb::CreatedbStmt) -> PgResult<()> {
    let mut template = "template1".to_string();
    for o in &stmt.options {
        if let Some(NodeEnum::DefElem(de)) = &o.node {
            if de.defname == "template" {
                template = def_elem_value(de).unwrap_or_default();
            }
        }
    }
    for o in &stmt.options {
        if let Some(NodeEnum::DefElem(de)) = &o.node {
            match de.defname.as_str() {
                "encoding" => {
                    let v = def_elem_value(de).unwrap_or_default().to_ascii_uppercase().replace(['-', '_'], "");
                    if v != "UTF8" && v != "UNICODE" && v != "6" {
                        return Err(PgError::unsupported(format!("database encoding {}", def_elem_value(de).unwrap_or_default())));
                    }
                }
                "template" | "owner" | "lc_collate" | "lc_ctype" | "locale" | "connection_limit" | "is_template" | "allow_connections" | "tablespace" | "strategy" => {}
                other => return Err(PgError::syntax(format!("option \"{other}\" not recognized"))),
            }
        }
    }
    let txn = s.txn()?;
    txn.get_for_update(&store::database_name_key(&stmt.dbname))?;
    let cat = store::load_cluster(txn)?;
    if cat.database_by_name(&stmt.dbname).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_DATABASE, format!("database \"{}\" already exists", stmt.dbname)));
    }
    if cat.database_by_name(&template).is_none() {
        return Err(PgError::new(sqlstate::UNDEFINED_DATABASE, format!("template database \"{template}\" does not exist")));
    }
    // Copying a database others may be changing would copy a moving target.
    let others = s.cluster.other_sessions_on(&template, s.pid);
    if !others.is_empty() {
        return Err(database_in_use(format!("source database \"{template}\" is being accessed by other users"), others.len()));
    }
    let oid = new_oid(&s.cluster.engine)?;
    store::create_database_rows(txn, &store::new_database(oid, &stmt.dbname, super::grant::current_role_oid(s)))?;
    s.cluster_changed = true;
    Ok(())
}

pub fn drop_database(s: &mut SqlSession, stmt: &pb::DropdbStmt) -> PgResult<()> {
    let txn = s.txn()?;
    txn.get_for_update(&store::database_name_key(&stmt.dbname))?;
    let cat = store::load_cluster(txn)?;
    let Some(db) = cat.database_by_name(&stmt.dbname).cloned() else {
        if stmt.missing_ok {
            notice(s, format!("database \"{}\" does not exist, skipping", stmt.dbname));
            return Ok(());
        }
        return Err(PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{}\" does not exist", stmt.dbname)));
    };
    if let Some(me) = super::grant::checked_user(s) {
        if !me.holds(db.owner) {
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of database {}", db.name)));
        }
    }
    if db.oid == s.db {
        return Err(PgError::new(sqlstate::OBJECT_IN_USE, "cannot drop the currently open database"));
    }
    if db.is_template && db.name == "template1" || db.name == "template0" {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "cannot drop a template database"));
    }
    let force = stmt.options.iter().any(|o| matches!(&o.node, Some(NodeEnum::DefElem(de)) if de.defname == "force"));
    let mut others = s.cluster.other_sessions_on(&db.name, s.pid);
    if force && !others.is_empty() {
        // WITH (FORCE): end the other sessions, and wait (up to 5 s, as
        // PostgreSQL does) for them to go.
        for &pid in &others {
            s.cluster.terminate_backend(pid);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !others.is_empty() && std::time::Instant::now() < deadline {
            s.interrupt.check()?;
            std::thread::sleep(std::time::Duration::from_millis(20));
            others = s.cluster.other_sessions_on(&db.name, s.pid);
        }
    }
    if !others.is_empty() {
        return Err(database_in_use(format!("database \"{}\" is being accessed by other users", db.name), others.len()));
    }
    let storage = store::delete_database_rows(txn, db.oid)?;
    for id in storage {
        s.note_drop(id);
    }
    s.cluster_changed = true;
    Ok(())
}

// ---------------------------------------------------------------- DROP

/// DROP TABLE | INDEX | VIEW | SEQUENCE | SCHEMA: the named objects are
/// looked up and checked (kind, owner) one by one, as RemoveRelations and
/// RemoveObjects do, then dropped together with what depends on them
/// (`dependency::perform_deletion`), so that an object depending on another
/// one named in the same statement does not block it.
pub fn drop(s: &mut SqlSession, stmt: &pb::DropStmt, sql: &str) -> PgResult<()> {
    let kind = stmt.remove_type;
    let cascade = stmt.behavior == pb::DropBehavior::DropCascade as i32;
    let mut targets: Vec<depend::ObjectAddress> = Vec::new();
    match kind {
        // TABLE, INDEX, VIEW, SEQUENCE
        k if k == 42 || k == 21 || k == 52 || k == 38 || k == pb::ObjectType::ObjectForeignTable as i32 => {
            let (want, noun) = match kind {
                42 => (RelKind::Table, "table"),
                k if k == pb::ObjectType::ObjectForeignTable as i32 => (RelKind::ForeignTable, "foreign table"),
                21 => (RelKind::Index, "index"),
                52 => (RelKind::View, "view"),
                _ => (RelKind::Sequence, "sequence"),
            };
            for obj in &stmt.objects {
                let Some(NodeEnum::List(l)) = &obj.node else { continue };
                let parts: Vec<&str> = l.items.iter().filter_map(ident).collect();
                let rv = pb::RangeVar {
                    relname: parts.last().map(|s| s.to_string()).unwrap_or_default(),
                    schemaname: if parts.len() >= 2 { parts[parts.len() - 2].to_string() } else { String::new() },
                    catalogname: if parts.len() >= 3 { parts[parts.len() - 3].to_string() } else { String::new() },
                    inh: true,
                    relpersistence: "p".into(),
                    ..Default::default()
                };
                let d = Ddl::new(s, sql)?;
                let found = match d.lookup_opt(&rv) {
                    Ok(r) => r,
                    Err(e) if stmt.missing_ok && e.code == sqlstate::INVALID_SCHEMA_NAME => {
                        notice(s, format!("schema \"{}\" does not exist, skipping", rv.schemaname));
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let Some(rel) = found else {
                    if stmt.missing_ok {
                        notice(s, format!("{} \"{}\" does not exist, skipping", noun, parts.join(".")));
                        continue;
                    }
                    // An index is not a relation by its missing-object code.
                    let code = if want == RelKind::Index { sqlstate::UNDEFINED_OBJECT } else { sqlstate::UNDEFINED_TABLE };
                    return Err(PgError::new(code, format!("{} \"{}\" does not exist", noun, parts.join("."))));
                };
                if rel.kind != want {
                    let hint = match rel.kind {
                        RelKind::Table => "DROP TABLE",
                        RelKind::Index => "DROP INDEX",
                        RelKind::View => "DROP VIEW",
                        RelKind::Sequence => "DROP SEQUENCE",
                        RelKind::ForeignTable => "DROP FOREIGN TABLE",
                        RelKind::CompositeType => "DROP TYPE",
                    };
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not {}", rel.name, with_article(noun)))
                        .with_hint(format!("Use {hint} to remove {}.", with_article(rel.kind.noun()))));
                }
                super::grant::check_relation_owner(d.s, &rel)?;
                if rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
                    // The catalogs themselves (pinned OIDs), and the views
                    // Tusk computes, which cannot be dropped either.
                    if rel.oid < depend::FIRST_UNPINNED_OBJECT_ID && rel.kind == RelKind::Table {
                        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied: \"{}\" is a system catalog", rel.name)));
                    }
                    return Err(PgError::new(
                        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop {} {} because it is required by the database system", rel.kind.noun(), rel.name),
                    ));
                }
                let t = depend::ObjectAddress::relation(rel.oid);
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
        }
        // SCHEMA
        37 => {
            for obj in &stmt.objects {
                let Some(name) = ident(obj) else { continue };
                let d = Ddl::new(s, sql)?;
                let Some(&nsp) = d.catalog.namespace_by_name.get(name) else {
                    if stmt.missing_ok {
                        notice(s, format!("schema \"{name}\" does not exist, skipping"));
                        continue;
                    }
                    return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")));
                };
                if let Some(me) = super::grant::checked_user(d.s) {
                    let owner = d.catalog.namespaces.get(&nsp).map_or(BOOTSTRAP_SUPERUSER, |n| n.owner);
                    if !me.holds(owner) {
                        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of schema {name}")));
                    }
                }
                // Tusk's information_schema is computed, not made of objects.
                if nsp == PG_CATALOG_NAMESPACE || nsp == INFORMATION_SCHEMA_NAMESPACE || nsp == PG_TOAST_NAMESPACE {
                    return Err(PgError::new(
                        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop schema {name} because it is required by the database system"),
                    ));
                }
                let t = depend::ObjectAddress::namespace(nsp);
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
        }
        k if k == pb::ObjectType::ObjectFunction as i32
            || k == pb::ObjectType::ObjectProcedure as i32
            || k == pb::ObjectType::ObjectRoutine as i32
            || k == pb::ObjectType::ObjectAggregate as i32 =>
        {
            return drop_routine(s, stmt, k);
        }
        k if k == pb::ObjectType::ObjectFdw as i32 || k == pb::ObjectType::ObjectForeignServer as i32 => {
            targets = super::foreign::drop_targets(s, stmt)?;
        }
        _ => return Err(PgError::unsupported("DROP of this object type")),
    }
    {
        let d = Ddl::new(s, sql)?;
        super::dependency::perform_deletion(&d, &targets, cascade)?;
    }
    s.reload_txn_catalog()
}

/// DROP FUNCTION / PROCEDURE / ROUTINE / AGGREGATE. Tusk has no
/// user-defined routines yet, so a name either is a built-in, which the
/// system needs, or names nothing.
fn drop_routine(s: &mut SqlSession, stmt: &pb::DropStmt, kind: i32) -> PgResult<()> {
    let noun = match kind {
        k if k == pb::ObjectType::ObjectProcedure as i32 => "procedure",
        k if k == pb::ObjectType::ObjectAggregate as i32 => "aggregate",
        k if k == pb::ObjectType::ObjectRoutine as i32 => "routine",
        _ => "function",
    };
    let b = crate::catalog::builtins();
    for obj in &stmt.objects {
        let Some(NodeEnum::ObjectWithArgs(o)) = &obj.node else { continue };
        let parts: Vec<&str> = o.objname.iter().filter_map(ident).collect();
        let name = parts.join(".");
        let mut arg_types = Vec::new();
        for a in &o.objargs {
            let Some(NodeEnum::TypeName(tn)) = &a.node else { continue };
            arg_types.push(crate::analyzer::types::resolve_type_name(b, tn)?.oid);
        }
        let shown = format!(
            "{}({})",
            name,
            arg_types.iter().map(|&t| crate::analyzer::types::format_type(b, t, -1)).collect::<Vec<_>>().join(", ")
        );
        let base = parts.last().copied().unwrap_or("");
        let schema_ok = parts.len() < 2 || parts[parts.len() - 2] == "pg_catalog";
        let builtin = schema_ok
            && b.procs_by_name.get(base).is_some_and(|oids| {
                oids.iter().any(|oid| o.args_unspecified || b.procs[oid].argtypes == arg_types)
            });
        if builtin {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop {noun} {shown} because it is required by the database system"),
            ));
        }
        if stmt.missing_ok {
            notice(s, format!("{noun} {shown} does not exist, skipping"));
            continue;
        }
        return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("{noun} {shown} does not exist")));
    }
    Ok(())
}

/// Drops temporary schemas (and their relations) left by sessions.
pub fn drop_temp_namespaces(cluster: &crate::cluster::Cluster, db: Oid, nsps: &[Oid]) -> PgResult<()> {
    let txn = cluster.engine.begin(tusk_storage::Isolation::ReadCommitted, true);
    let cat = store::load_database(&txn, db)?;
    let mut storage = Vec::new();
    for r in cat.relations.values().filter(|r| nsps.contains(&r.namespace)) {
        store::delete_relation(&txn, db, r)?;
        if r.storage_id != 0 && !r.index.as_ref().map(|i| i.clustered).unwrap_or(false) {
            storage.push(r.storage_id);
        }
    }
    for &n in nsps {
        txn.delete(&store::namespace_key(db, n))?;
    }
    txn.commit()?;
    cluster.reload_database(db)?;
    cluster.drop_storage(&storage);
    Ok(())
}

// ---------------------------------------------------------------- TRUNCATE

pub fn truncate(s: &mut SqlSession, stmt: &pb::TruncateStmt, sql: &str) -> PgResult<()> {
    let truncated;
    {
        let d = Ddl::new(s, sql)?;
        let mut rels: Vec<Arc<Relation>> = Vec::new();
        for r in &stmt.relations {
            let Some(NodeEnum::RangeVar(rv)) = &r.node else { continue };
            let rel = d.lookup(rv)?;
            super::grant::check_relation_privileges(d.s, &[crate::catalog::acl::RelPerm { rel: rel.oid, required: crate::catalog::acl::TRUNCATE, as_role: None, target: false }])?;
            if rel.kind != RelKind::Table {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a table", rel.name)));
            }
            // Without ONLY, the tables inheriting from it are emptied too.
            let tree = if rv.inh { d.catalog.inheritance_tree(rel.oid) } else { vec![rel.oid] };
            for t in tree.into_iter().filter_map(|o| d.catalog.relation(o).cloned()) {
                if !rels.iter().any(|x| x.oid == t.oid) {
                    rels.push(t);
                }
            }
        }
        // Tables referencing these must be truncated too (CASCADE) or the command fails.
        let mut i = 0;
        while i < rels.len() {
            let rel = rels[i].clone();
            for (child, _) in d.catalog.referencing_fks(rel.oid) {
                if rels.iter().any(|r| r.oid == child.oid) {
                    continue;
                }
                if stmt.behavior == 2 {
                    notice(d.s, format!("truncate cascades to table \"{}\"", child.name));
                    rels.push(child);
                } else {
                    return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot truncate a table referenced in a foreign key constraint")
                        .with_detail(format!("Table \"{}\" references \"{}\".", child.name, rel.name))
                        .with_hint(format!("Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.", child.name)));
                }
            }
            i += 1;
        }
        super::trigger::fire_truncate(d.s, &d.catalog, &rels, true)?;
        for rel in &rels {
            d.lock_relation(rel.oid)?;
            // New, empty storage for the table and each index.
            let mut t = (**rel).clone();
            let old = t.storage_id;
            // SSI: every row goes, a write a serializable reader of the
            // table conflicts with (CheckTableForSerializableConflictIn).
            d.txn()?.predicate_write_relation(old)?;
            t.storage_id = d.storage()?;
            d.s.note_drop(old);
            d.put(&t)?;
            for idx in d.catalog.indexes_of(rel) {
                let mut ix = (**idx).clone();
                if ix.index.as_ref().map(|i| i.clustered).unwrap_or(false) {
                    ix.storage_id = t.storage_id;
                } else {
                    d.s.note_drop(ix.storage_id);
                    ix.storage_id = d.storage()?;
                }
                d.put(&ix)?;
            }
            if stmt.restart_seqs {
                for r in d.catalog.relations.values() {
                    if let Some(seq) = &r.sequence {
                        if seq.owned_by.map(|(t, _)| t) == Some(rel.oid) {
                            s.restart_sequence(r.oid, seq, seq.start)?;
                        }
                    }
                }
            }
        }
        truncated = rels;
    }
    s.reload_txn_catalog()?;
    let catalog = s.catalog()?;
    super::trigger::fire_truncate(s, &catalog, &truncated, false)
}

// ---------------------------------------------------------------- COMMENT

pub fn comment(s: &mut SqlSession, stmt: &pb::CommentStmt, sql: &str) -> PgResult<()> {
    // Comments on databases and roles belong to the cluster catalog.
    let mut shared = false;
    {
        let d = Ddl::new(s, sql)?;
        let text = if stmt.comment.is_empty() { None } else { Some(stmt.comment.as_str()) };
        let obj = stmt.object.as_deref().ok_or_else(|| PgError::internal("COMMENT without object"))?;
        let names = |n: &Node| -> Vec<String> {
            match &n.node {
                Some(NodeEnum::List(l)) => l.items.iter().filter_map(ident).map(str::to_string).collect(),
                Some(NodeEnum::String(s)) => vec![s.sval.clone()],
                _ => vec![],
            }
        };
        let rv_of = |parts: &[String]| pb::RangeVar {
            relname: parts.last().cloned().unwrap_or_default(),
            schemaname: if parts.len() >= 2 { parts[parts.len() - 2].clone() } else { String::new() },
            inh: true,
            relpersistence: "p".into(),
            ..Default::default()
        };
        let txn = d.txn()?;
        match stmt.objtype {
            k if matches!(k, 42 | 52 | 21 | 38) || k == pb::ObjectType::ObjectForeignTable as i32 => {
                let parts = names(obj);
                let rel = d.lookup(&rv_of(&parts))?;
                store::put_comment(txn, d.db(), 1259, rel.oid, 0, text)?;
            }
            7 => {
                let parts = names(obj);
                if parts.len() < 2 {
                    return Err(PgError::syntax("column name must be qualified"));
                }
                let rel = d.lookup(&rv_of(&parts[..parts.len() - 1]))?;
                let col = &parts[parts.len() - 1];
                let (attnum, _) = rel.column_by_name(col).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{col}\" of relation \"{}\" does not exist", rel.name))
                })?;
                store::put_comment(txn, d.db(), 1259, rel.oid, attnum as i32, text)?;
            }
            37 => {
                let parts = names(obj);
                let name = parts.first().cloned().unwrap_or_default();
                let nsp = d.catalog.namespace_by_name.get(&name).copied().ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist"))
                })?;
                store::put_comment(txn, d.db(), 2615, nsp, 0, text)?;
            }
            41 => {
                // (table, constraint)
                let parts = names(obj);
                if parts.len() < 2 {
                    return Err(PgError::syntax("constraint name must be qualified"));
                }
                let rel = d.lookup(&rv_of(&parts[..parts.len() - 1]))?;
                let cname = &parts[parts.len() - 1];
                let c = rel.constraints.iter().find(|c| &c.name == cname).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{cname}\" for table \"{}\" does not exist", rel.name))
                })?;
                store::put_comment(txn, d.db(), 2606, c.oid, 0, text)?;
            }
            10 => {
                let name = names(obj).first().cloned().unwrap_or_default();
                let db = d.s.cluster_catalog().database_by_name(&name).map(|x| x.oid).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{name}\" does not exist"))
                })?;
                store::put_comment(txn, store::SHARED_COMMENTS_DB, 1262, db, 0, text)?;
                shared = true;
            }
            k if k == pb::ObjectType::ObjectRole as i32 => {
                let name = names(obj).first().cloned().unwrap_or_default();
                let cat = d.s.cluster_catalog();
                let role = cat.role_by_name(&name).map(|x| x.oid).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist"))
                })?;
                let me = super::grant::current_grantee(d.s);
                if !me.superuser && !cat.roles.get(&me.role).is_some_and(|r| r.create_role) {
                    return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "must have CREATEROLE privilege"));
                }
                store::put_comment(txn, store::SHARED_COMMENTS_DB, 1260, role, 0, text)?;
                shared = true;
            }
            k if k == pb::ObjectType::ObjectTrigger as i32 => {
                // (table, trigger)
                let parts = names(obj);
                if parts.len() < 2 {
                    return Err(PgError::syntax("trigger name must be qualified"));
                }
                let rel = d.lookup(&rv_of(&parts[..parts.len() - 1]))?;
                let tname = &parts[parts.len() - 1];
                let t = rel.triggers.iter().find(|t| &t.name == tname).ok_or_else(|| {
                    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("trigger \"{tname}\" for table \"{}\" does not exist", rel.name))
                })?;
                super::grant::check_relation_owner(d.s, &rel)?;
                store::put_comment(txn, d.db(), depend::PG_TRIGGER, t.oid, 0, text)?;
            }
            k if k == pb::ObjectType::ObjectPublication as i32 => {
                let name = names(obj).first().cloned().unwrap_or_default();
                let oid = super::publication::comment_target(d.s, &d.catalog, &name)?;
                store::put_comment(txn, d.db(), depend::PG_PUBLICATION, oid, 0, text)?;
            }
            k if k == pb::ObjectType::ObjectSubscription as i32 => {
                let name = names(obj).first().cloned().unwrap_or_default();
                let oid = super::subscription::comment_target(d.s, &d.catalog, &name)?;
                store::put_comment(txn, d.db(), depend::PG_SUBSCRIPTION, oid, 0, text)?;
            }
            k if k == pb::ObjectType::ObjectOperator as i32 || k == pb::ObjectType::ObjectAggregate as i32 => {
                let Some(NodeEnum::ObjectWithArgs(owa)) = &obj.node else { return Err(PgError::internal("COMMENT without a signature")) };
                let (class, oid) = if k == pb::ObjectType::ObjectOperator as i32 {
                    (crate::catalog::operator::PG_OPERATOR, super::operator::comment_target(d.s, &d.catalog, owa)?)
                } else {
                    (depend::PG_PROC_CLASS, super::aggregate::comment_target(d.s, &d.catalog, owa)?)
                };
                store::put_comment(txn, d.db(), class, oid, 0, text)?;
            }
            k if k == pb::ObjectType::ObjectFdw as i32 || k == pb::ObjectType::ObjectForeignServer as i32 => {
                let name = names(obj).first().cloned().unwrap_or_default();
                let (class, oid) = super::foreign::comment_target(d.s, k, &name)?;
                store::put_comment(txn, d.db(), class, oid, 0, text)?;
            }
            _ => return Err(PgError::unsupported("COMMENT on this kind of object")),
        }
    }
    if shared {
        s.cluster_changed = true;
    }
    s.reload_txn_catalog()
}

// ---------------------------------------------------------------- ALTER TABLE

pub fn alter_table(s: &mut SqlSession, stmt: &pb::AlterTableStmt, sql: &str) -> PgResult<()> {
    let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("ALTER TABLE without table"))?;
    for cmd in &stmt.cmds {
        let Some(NodeEnum::AlterTableCmd(c)) = &cmd.node else { continue };
        {
            let d = Ddl::new(s, sql)?;
            let Some(rel) = d.lookup_opt(rv)? else {
                if stmt.missing_ok {
                    notice(s, format!("relation \"{}\" does not exist, skipping", rv.relname));
                    return Ok(());
                }
                return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", rv.relname)));
            };
            super::grant::check_relation_owner(d.s, &rel)?;
            if rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied: \"{}\" is a system catalog", rel.name)));
            }
            d.lock_relation(rel.oid)?;
            super::inherit::alter(&d, &rel, c, stmt.objtype, rv.inh)?;
        }
        s.reload_txn_catalog()?;
    }
    Ok(())
}

/// ALTER SCHEMA | DATABASE ... OWNER TO (AlterObjectOwner_internal and
/// its schema and database variants), with PostgreSQL's checks for a
/// non-superuser: own the object, be a member of the new owner, and (for a
/// schema) the new owner must have CREATE on the database, (for a database)
/// the current user CREATEDB.
pub fn alter_owner(s: &mut SqlSession, stmt: &pb::AlterOwnerStmt) -> PgResult<&'static str> {
    let name = match stmt.object.as_deref().and_then(|n| n.node.as_ref()) {
        Some(NodeEnum::String(v)) => v.sval.clone(),
        _ => return Err(PgError::unsupported("ALTER ... OWNER TO for this kind of object")),
    };
    let new_owner = super::grant::role_spec_oid(s, stmt.newowner.as_ref())?;
    let me = super::grant::checked_user(s);
    let cat = s.cluster_catalog();
    let not_member = |me: &acl::Grantee| {
        (!cat.is_member_of_role_nosuper(me.role, new_owner, None))
            .then(|| PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be member of role \"{}\"", cat.role_name(new_owner))))
    };
    if stmt.object_type == pb::ObjectType::ObjectSchema as i32 {
        let catalog = s.catalog()?;
        let ns = catalog
            .namespace_by_name
            .get(&name)
            .and_then(|o| catalog.namespaces.get(o))
            .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")))?
            .clone();
        if ns.owner == new_owner {
            return Ok("ALTER SCHEMA");
        }
        if let Some(me) = &me {
            if !me.holds(ns.owner) {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of schema {name}")));
            }
            if let Some(e) = not_member(me) {
                return Err(e);
            }
            let d = cat.databases.get(&s.db).ok_or_else(|| PgError::internal("current database"))?;
            let who = acl::Grantee::of(&cat, new_owner, s.db);
            let dacl = super::grant::database_acl(d.oid, d.owner, &d.acl, &d.name);
            if !who.superuser && acl::mask(&dacl, &who, acl::CREATE) == 0 {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied for database {}", d.name)));
            }
        }
        let mut ns = ns;
        // The public schema's implicit ACL names pg_database_owner, not
        // its owner: keep it as it reads.
        if ns.acl.is_none() && ns.oid == PUBLIC_NAMESPACE {
            ns.acl = Some(acl::schema_acl(ns.oid, ns.owner, &None));
        }
        if let Some(items) = &mut ns.acl {
            acl::new_owner(items, ns.owner, new_owner);
        }
        ns.owner = new_owner;
        store::put_namespace(s.txn()?, s.db, &ns)?;
        s.reload_txn_catalog()?;
        return Ok("ALTER SCHEMA");
    }
    if stmt.object_type == pb::ObjectType::ObjectDatabase as i32 {
        let txn = s.txn()?;
        txn.get_for_update(&store::database_name_key(&name))?;
        let locked = store::load_cluster(txn)?;
        let mut d = locked
            .database_by_name(&name)
            .cloned()
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_DATABASE, format!("database \"{name}\" does not exist")))?;
        if d.owner == new_owner {
            return Ok("ALTER DATABASE");
        }
        if let Some(me) = &me {
            if !me.holds(d.owner) {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of database {name}")));
            }
            if let Some(e) = not_member(me) {
                return Err(e);
            }
            if !cat.roles.get(&me.role).is_some_and(|r| r.create_db) {
                return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "permission denied to change owner of database"));
            }
        }
        if let Some(items) = &mut d.acl {
            acl::new_owner(items, d.owner, new_owner);
        }
        d.owner = new_owner;
        store::put_database(s.txn()?, &d)?;
        s.cluster_changed = true;
        return Ok("ALTER DATABASE");
    }
    Err(PgError::unsupported("ALTER ... OWNER TO for this kind of object"))
}

/// ALTER TABLE ... OWNER TO (ATExecChangeOwner): the relation, its indexes
/// and the sequences its columns own change owner together, and the old
/// owner's entries in their ACLs become the new owner's.
fn change_owner(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let new_owner = super::grant::role_spec_oid(d.s, c.newowner.as_ref())?;
    if rel.owner == new_owner {
        return Ok(());
    }
    match rel.kind {
        RelKind::Index => {
            // Old pg_dumps wrote ALTER INDEX ... OWNER TO: PostgreSQL warns
            // and does nothing.
            d.s.notices.borrow_mut().push(
                PgError::warning(format!("cannot change owner of index \"{}\"", rel.name))
                    .with_code(sqlstate::WRONG_OBJECT_TYPE)
                    .with_hint("Change the ownership of the index's table, instead."),
            );
            return Ok(());
        }
        RelKind::Sequence => {
            if let Some((table, _)) = rel.sequence.as_ref().and_then(|q| q.owned_by) {
                let table_name = d.catalog.relation(table).map(|t| t.name.clone()).unwrap_or_default();
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot change owner of sequence \"{}\"", rel.name))
                    .with_detail(format!("Sequence \"{}\" is linked to table \"{table_name}\".", rel.name)));
            }
        }
        _ => {}
    }
    super::grant::check_owner_change(d.s, rel.namespace, new_owner)?;
    let mut dependents: Vec<Arc<Relation>> = d.catalog.indexes_of(rel).cloned().collect();
    dependents.extend(
        d.catalog.relations.values().filter(|r| r.sequence.as_ref().and_then(|q| q.owned_by).is_some_and(|(t, _)| t == rel.oid)).cloned(),
    );
    for r in std::iter::once(rel).chain(dependents.iter()) {
        let mut t = (**r).clone();
        if let Some(items) = &mut t.acl {
            acl::new_owner(items, r.owner, new_owner);
        }
        t.owner = new_owner;
        d.put(&t)?;
    }
    Ok(())
}

/// ALTER COLUMN ... TYPE [USING expr]: rewrites every row into new storage
/// with the column converted, and rebuilds the indexes, as PostgreSQL's
/// table rewrite does (ATRewriteTable). The old storage goes at commit.
fn alter_column_type(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    // A foreign table has no rows here to convert with USING (ATPrepAlterColumnType).
    let using = matches!(c.def.as_deref().and_then(|n| n.node.as_ref()), Some(NodeEnum::ColumnDef(cd)) if cd.raw_default.is_some());
    if rel.kind != RelKind::Table && !(rel.kind == RelKind::ForeignTable && !using) {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a table", rel.name)));
    }
    let Some(NodeEnum::ColumnDef(cd)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("ALTER COLUMN TYPE without definition"));
    };
    let raw = column_index(rel, &c.name)?;
    let attnum = raw as i16 + 1;
    let live = rel.live_columns().position(|(a, _)| a == attnum).ok_or_else(|| PgError::internal("live column"))?;
    let tn = cd.type_name.as_ref().ok_or_else(|| PgError::internal("ALTER COLUMN TYPE without type"))?;
    let target = resolve_type_name(builtins(), tn)?;
    // The column's collation: the one named, else the new type's
    // (GetColumnDefCollation: a collation the column had goes).
    let type_collation = builtins().type_info(target.oid).map(|t| t.collation).unwrap_or(0);
    let collation = match &cd.coll_clause {
        Some(coll) => {
            let name = coll.collname.iter().filter_map(ident).collect::<Vec<_>>().join(".");
            let oid = collation_oid(&name)?;
            if type_collation == 0 {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!("collations are not supported by type {}", format_type(builtins(), target.oid, -1)),
                ));
            }
            oid
        }
        None => type_collation,
    };
    // A view reading the column (its rule depends on it) would change
    // under its users: PostgreSQL refuses, and so does Tusk.
    let column = depend::ObjectAddress::column(rel.oid, attnum);
    let rule = d.catalog.dependencies().dependents(column).find(|dep| dep.object.class == depend::PG_REWRITE).map(|dep| dep.object);
    if let Some(rule) = rule {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot alter type of a column used by a view or rule")
            .with_detail(format!("{} depends on column \"{}\"", super::dependency::describe_object(d, &d.catalog, rule), c.name)));
    }
    let in_fk = rel.constraints.iter().any(|k| k.kind == ConstraintKind::ForeignKey && k.columns.contains(&attnum))
        || !d.catalog.referencing_fks(rel.oid).is_empty();
    if in_fk {
        return Err(PgError::unsupported("ALTER COLUMN ... TYPE on a table with foreign keys"));
    }
    if rel.columns[raw].identity != ' ' && !matches!(target.oid, oid::INT2 | oid::INT4 | oid::INT8) {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "identity column type must be smallint, integer, or bigint"));
    }
    let using = match cd.raw_default.as_deref() {
        Some(e) => Some(deparse_expr(e)?),
        None => None,
    };
    let conversion = {
        let settings = d.s.settings.borrow();
        crate::planner::compile_column_conversion(&d.catalog, &settings, &d.s.user, rel, live, using.as_deref(), target)?
    };
    d.lock_relation(rel.oid)?;

    // Read and convert every row under the old definition.
    let mut rows: Vec<Vec<Datum>> = Vec::new();
    d.s.with_exec(&d.catalog, |cx| {
        let table = TableAccess::new(rel.clone(), &d.catalog, &mut crate::executor::nodes_compile(cx))?;
        table.scan_all(cx, &mut |_, mut row| {
            cx.check()?;
            row[live] = crate::executor::eval(&conversion, &row, cx)?;
            rows.push(row);
            Ok(())
        })
    })?;
    if rel.columns[raw].not_null && rows.iter().any(|r| r[live].is_null()) {
        return Err(PgError::new(
            sqlstate::NOT_NULL_VIOLATION,
            format!("column \"{}\" of relation \"{}\" contains null values", c.name, rel.name),
        ));
    }

    // The new definition, in new storage.
    let mut t = (**rel).clone();
    t.columns[raw].type_oid = target.oid;
    t.columns[raw].typmod = target.typmod;
    t.columns[raw].collation = collation;
    if let Some(def) = t.columns[raw].default.clone() {
        // The default must still make a value of the new type.
        check_default(d, &t, live, &def).map_err(|_| {
            PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("default for column \"{}\" cannot be cast automatically to type {}", c.name, format_type(builtins(), target.oid, target.typmod)),
            )
        })?;
    }
    d.s.note_drop(t.storage_id);
    t.storage_id = d.storage()?;
    d.put(&t)?;
    for idx in d.catalog.indexes_of(rel) {
        let mut ix = (**idx).clone();
        if ix.index.as_ref().map(|i| i.clustered).unwrap_or(false) {
            ix.storage_id = t.storage_id;
        } else {
            d.s.note_drop(ix.storage_id);
            ix.storage_id = d.storage()?;
        }
        d.put(&ix)?;
    }
    let cat = Arc::new(store::load_database(d.txn()?, d.db())?);
    let new_rel = cat.relation(rel.oid).ok_or_else(|| PgError::internal("table vanished"))?.clone();
    d.s.with_exec(&cat, |cx| {
        let table = TableAccess::new(new_rel.clone(), &cat, &mut crate::executor::nodes_compile(cx))?;
        for row in &rows {
            cx.check()?;
            let key = table.new_row_key(row, cx)?;
            if let Some((i, vals, _)) = table.find_conflict(row, &key, cx, None)? {
                return Err(table.unique_violation(i, &vals, cx));
            }
            table.insert(row, &key, cx)?;
        }
        // Deferrable unique indexes take the rows as they come: rebuilt,
        // they must hold no duplicate.
        for i in 0..table.indexes.len() {
            if table.indexes[i].deferrable {
                table.verify_deferrable_unique(i, cx)?;
            }
        }
        Ok(())
    })
}

/// Whether any row of `rel` has NULL in its column at position `i` (of
/// `columns`, a live column).
fn column_has_nulls(d: &Ddl, rel: &Arc<Relation>, i: usize) -> PgResult<bool> {
    let live = rel.columns[..i].iter().filter(|c| !c.dropped).count();
    let mut has_null = false;
    d.s.with_exec(&d.catalog, |cx| {
        let table = TableAccess::new(rel.clone(), &d.catalog, &mut crate::executor::nodes_compile(cx))?;
        table.scan_all(cx, &mut |_, row| {
            if row[live].is_null() {
                has_null = true;
            }
            Ok(())
        })
    })?;
    Ok(has_null)
}

fn column_index(rel: &Relation, name: &str) -> PgResult<usize> {
    rel.columns.iter().position(|c| !c.dropped && c.name == name).ok_or_else(|| {
        PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" of relation \"{}\" does not exist", name, rel.name))
    })
}

pub(crate) fn alter_table_cmd(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32) -> PgResult<()> {
    let _ = objtype;
    let mut t = (**rel).clone();
    if rel.kind == RelKind::ForeignTable {
        super::foreign::check_foreign_table_cmd(rel, c)?;
    }
    match c.subtype {
        // ADD COLUMN
        1 | 2 => {
            let Some(NodeEnum::ColumnDef(cd)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
                return Err(PgError::internal("ADD COLUMN without definition"));
            };
            if !matches!(rel.kind, RelKind::Table | RelKind::ForeignTable) {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a table", rel.name)));
            }
            if t.column_by_name(&cd.colname).is_some() {
                if c.missing_ok {
                    notice(d.s, format!("column \"{}\" of relation \"{}\" already exists, skipping", cd.colname, rel.name));
                    return Ok(());
                }
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{}\" of relation \"{}\" already exists", cd.colname, rel.name),
                ));
            }
            let idx = t.columns.len();
            // Attribute numbers are not reused: dropped columns count too.
            if idx + 1 > 1600 {
                return Err(PgError::new(sqlstate::TOO_MANY_COLUMNS, "tables can have at most 1600 columns"));
            }
            let (mut col, serial) = column_from_def(d, cd, idx)?;
            let mut raw_default = cd.raw_default.as_deref().cloned();
            let mut constraints = Vec::new();
            for cn in &cd.constraints {
                let Some(NodeEnum::Constraint(con)) = &cn.node else { continue };
                match con.contype {
                    1 => {}
                    2 => col.not_null = true,
                    3 => raw_default = con.raw_expr.as_deref().cloned(),
                    4 | 5 => return Err(PgError::unsupported("adding identity or generated columns")),
                    // [NOT] DEFERRABLE, INITIALLY DEFERRED/IMMEDIATE qualify
                    // the constraint before them.
                    11..=14 => {
                        if let Some(last) = constraints.last_mut() {
                            apply_constraint_attr(last, con.contype);
                        }
                    }
                    _ => {
                        let mut tc = (**con).clone();
                        match con.contype {
                            7 | 8 => tc.keys = vec![Node { node: Some(NodeEnum::String(pb::String { sval: cd.colname.clone() })) }],
                            10 => tc.fk_attrs = vec![Node { node: Some(NodeEnum::String(pb::String { sval: cd.colname.clone() })) }],
                            6 => {
                                if tc.conname.is_empty() {
                                    tc.cooked_expr = cd.colname.clone();
                                }
                            }
                            _ => {}
                        }
                        constraints.push(tc);
                    }
                }
            }
            if serial.is_some() {
                return Err(PgError::unsupported("adding serial columns to existing tables"));
            }
            t.columns.push(col);
            super::foreign::add_column_options(d, &mut t, idx, cd)?;
            if let Some(def) = &raw_default {
                let text = deparse_expr(def)?;
                check_default(d, &t, idx, &text)?;
                t.columns[idx].default = Some(text);
            }
            // Existing rows get the default (evaluated once) or NULL.
            let defaults = {
                let settings = d.s.settings.borrow();
                crate::planner::compile_defaults(&d.catalog, &settings, &d.s.user, &t)?
            };
            let default_expr = defaults[t.live_columns().count() - 1].clone();
            if default_expr.is_volatile() {
                return Err(PgError::unsupported("ADD COLUMN with a volatile default"));
            }
            let value = d.s.with_exec(&d.catalog, |cx| crate::executor::eval(&default_expr, &[], cx))?;
            let has_rows = table_has_rows(d, rel)?;
            if t.columns[idx].not_null && value.is_null() && has_rows {
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", t.columns[idx].name, rel.name),
                ));
            }
            if !value.is_null() {
                t.columns[idx].missing = Some(encode_row(&[value]));
            }
            let mut new_indexes = Vec::new();
            let mut taken = Vec::new();
            for con in &constraints {
                add_constraint(d, &mut t, con, false, &mut new_indexes, &mut taken)?;
            }
            install_constraints(d, rel, &mut t, &mut new_indexes)?;
        }
        // DROP COLUMN
        15 | 16 => {
            let Ok(i) = column_index(&t, &c.name) else {
                if c.missing_ok {
                    notice(d.s, format!("column \"{}\" of relation \"{}\" does not exist, skipping", c.name, rel.name));
                    return Ok(());
                }
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{}\" of relation \"{}\" does not exist", c.name, rel.name),
                ));
            };
            // ATExecDropColumn: the column and what depends on it go
            // (indexes, constraints and defaults on it silently, views and
            // foreign keys only with CASCADE).
            let column = depend::ObjectAddress::column(rel.oid, i as i16 + 1);
            return super::dependency::perform_deletion(d, &[column], c.behavior == pb::DropBehavior::DropCascade as i32);
        }
        // ALTER COLUMN SET DEFAULT / DROP DEFAULT
        4 => {
            let i = column_index(&t, &c.name)?;
            match c.def.as_deref() {
                Some(def) => {
                    let text = deparse_expr(def)?;
                    check_default(d, &t, i, &text)?;
                    t.columns[i].default = Some(text);
                }
                None => t.columns[i].default = None,
            }
            d.put(&t)?;
        }
        // DROP NOT NULL
        6 => {
            let i = column_index(&t, &c.name)?;
            let attnum = i as i16 + 1;
            if t.columns[i].identity != ' ' {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("column \"{}\" of relation \"{}\" is an identity column", c.name, rel.name),
                ));
            }
            if t.primary_key().map(|pk| pk.columns.contains(&attnum)).unwrap_or(false) {
                return Err(PgError::new(sqlstate::INVALID_TABLE_DEFINITION, format!("column \"{}\" is in a primary key", c.name)));
            }
            let in_replica_identity = d.catalog.indexes_of(rel).filter_map(|ix| ix.index.as_ref()).any(|info| {
                info.replica_identity && info.keys.iter().any(|k| k.attnum == attnum)
            });
            if in_replica_identity {
                return Err(PgError::new(
                    sqlstate::INVALID_TABLE_DEFINITION,
                    format!("column \"{}\" is in index used as replica identity", c.name),
                ));
            }
            t.columns[i].not_null = false;
            d.put(&t)?;
        }
        // SET NOT NULL
        7 => {
            let i = column_index(&t, &c.name)?;
            if column_has_nulls(d, rel, i)? {
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", c.name, rel.name),
                ));
            }
            t.columns[i].not_null = true;
            d.put(&t)?;
        }
        // ADD CONSTRAINT
        19 | 20 => {
            let Some(NodeEnum::Constraint(con)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
                return Err(PgError::internal("ADD CONSTRAINT without constraint"));
            };
            if !con.conname.is_empty() && con.contype != 6 && t.constraints.iter().any(|k| k.name == con.conname) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{}\" for relation \"{}\" already exists", con.conname, rel.name),
                ));
            }
            let mut new_indexes = Vec::new();
            let mut taken = Vec::new();
            add_constraint(d, &mut t, con, false, &mut new_indexes, &mut taken)?;
            // Building the key's index reports duplicates before NULLs are
            // looked for, as in PostgreSQL.
            install_constraints(d, rel, &mut t, &mut new_indexes)?;
        }
        // DROP CONSTRAINT
        27 | 28 => {
            let Some(pos) = t.constraints.iter().position(|k| k.name == c.name) else {
                if c.missing_ok {
                    notice(d.s, format!("constraint \"{}\" of relation \"{}\" does not exist, skipping", c.name, rel.name));
                    return Ok(());
                }
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("constraint \"{}\" of relation \"{}\" does not exist", c.name, rel.name),
                ));
            };
            // ATExecDropConstraint: the constraint, its index, and (with
            // CASCADE) the foreign keys that rely on that index.
            let con = depend::ObjectAddress::constraint(t.constraints[pos].oid);
            return super::dependency::perform_deletion(d, &[con], c.behavior == pb::DropBehavior::DropCascade as i32);
        }
        // VALIDATE CONSTRAINT
        24 | 25 => return validate_constraint(d, rel, &c.name),
        // ALTER COLUMN TYPE
        30 => return alter_column_type(d, rel, c),
        x if x == pb::AlterTableType::AtChangeOwner as i32 => return change_owner(d, rel, c),
        x if super::trigger::is_enable_cmd(x) => return super::trigger::enable_trigger(d, rel, c),
        // SET (...), RESET (...) storage parameters
        40 | 41 | 42 => {
            let how = match c.subtype {
                40 => super::reloptions::Alteration::Set,
                41 => super::reloptions::Alteration::Reset,
                _ => super::reloptions::Alteration::Replace,
            };
            let list = match c.def.as_deref().and_then(|n| n.node.as_ref()) {
                Some(NodeEnum::List(l)) => l.items.clone(),
                _ => Vec::new(),
            };
            d.put(&super::reloptions::altered(&t, &list, how)?)?;
        }
        x if super::table_settings::handles(x) => return super::table_settings::alter(d, rel, c),
        // SET LOGGED/UNLOGGED: accepted as no-ops.
        35 | 36 => {}
        // ADD/SET/DROP IDENTITY
        68 => {
            let i = column_index(&t, &c.name)?;
            let attnum = i as i16 + 1;
            let Some(NodeEnum::Constraint(con)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
                return Err(PgError::internal("ADD IDENTITY without definition"));
            };
            let col = &t.columns[i];
            if col.identity != ' ' {
                return Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("column \"{}\" of relation \"{}\" is already an identity column", c.name, rel.name),
                ));
            }
            if col.default.is_some() {
                return Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("column \"{}\" of relation \"{}\" already has a default value", c.name, rel.name),
                ));
            }
            if !matches!(col.type_oid, oid::INT2 | oid::INT4 | oid::INT8) {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "identity column type must be smallint, integer, or bigint"));
            }
            let mut info = default_sequence_info(col.type_oid);
            apply_sequence_options(&mut info, &con.options, true)?;
            info.owned_by = Some((rel.oid, attnum));
            let nsp = rel.namespace;
            let seq_name = choose_name(&rel.name, Some(&c.name), "seq", &|n| d.relation_name_taken(nsp, n));
            let mut seq = new_relation(d.oid()?, &seq_name, nsp, RelKind::Sequence, rel.persistence, rel.owner);
            seq.columns = sequence_columns();
            seq.sequence = Some(info);
            d.create_relation(&mut seq)?;
            t.columns[i].identity = if con.generated_when == "a" { 'a' } else { 'd' };
            t.columns[i].not_null = true;
            d.put(&t)?;
        }
        69 | 70 => {
            let i = column_index(&t, &c.name)?;
            let attnum = i as i16 + 1;
            if t.columns[i].identity == ' ' {
                if c.subtype == 70 && c.missing_ok {
                    notice(d.s, format!("column \"{}\" of relation \"{}\" is not an identity column, skipping", c.name, rel.name));
                    return Ok(());
                }
                return Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("column \"{}\" of relation \"{}\" is not an identity column", c.name, rel.name),
                ));
            }
            let seq = d
                .catalog
                .relations
                .values()
                .find(|r| r.sequence.as_ref().and_then(|s| s.owned_by) == Some((rel.oid, attnum)))
                .cloned()
                .ok_or_else(|| PgError::internal("identity sequence missing"))?;
            if c.subtype == 70 {
                t.columns[i].identity = ' ';
                d.put(&t)?;
                store::delete_relation(d.txn()?, d.db(), &seq)?;
                d.s.note_sequence_drop(seq.oid);
                return Ok(());
            }
            // SET GENERATED ... / RESTART / sequence options.
            let Some(NodeEnum::List(opts)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else { return Ok(()) };
            let mut seq_opts = Vec::new();
            for o in &opts.items {
                if let Some(NodeEnum::DefElem(de)) = &o.node {
                    if de.defname == "generated" {
                        let v = def_elem_value(de).unwrap_or_default();
                        t.columns[i].identity = if v == "1" || v == "a" || v == "always" { 'a' } else { 'd' };
                    } else {
                        seq_opts.push(o.clone());
                    }
                }
            }
            d.put(&t)?;
            let mut info = seq.sequence.clone().expect("sequence");
            let restart = apply_sequence_options(&mut info, &seq_opts, false)?;
            let mut s2 = (*seq).clone();
            s2.sequence = Some(info.clone());
            d.put(&s2)?;
            if let Some(r) = restart {
                d.s.restart_sequence(seq.oid, &info, r.unwrap_or(info.start))?;
            }
        }
        // ALTER COLUMN ... OPTIONS, OPTIONS (of a foreign table)
        31 | 64 => {
            super::foreign::alter_generic_options(d, &mut t, c)?;
            d.put(&t)?;
        }
        _ => return Err(PgError::unsupported("this ALTER TABLE subcommand")),
    }
    Ok(())
}

fn table_has_rows(d: &Ddl, rel: &Arc<Relation>) -> PgResult<bool> {
    let prefix = tusk_storage::keys::storage_prefix(rel.storage_id);
    let end = tusk_storage::keys::prefix_end(&prefix);
    Ok(!d.txn()?.scan(&prefix, &end, false, 1)?.is_empty())
}

/// After ADD CONSTRAINT / ADD COLUMN: build new indexes and check the
/// existing rows against new CHECK and FOREIGN KEY constraints.
/// Writes a table definition that gained constraints (ALTER TABLE ADD
/// CONSTRAINT / ADD COLUMN), creates their indexes and checks the rows.
///
/// A primary key added to a table that has none clusters the table on it,
/// as a key declared with the table does: the rows move to new storage
/// keyed by the primary key (with every index rebuilt for the new row
/// keys), so that lookups by the key read the row directly.
fn install_constraints(d: &Ddl, rel: &Arc<Relation>, t: &mut Relation, new_indexes: &mut [Relation]) -> PgResult<()> {
    let recluster = rel.kind == RelKind::Table
        && !d.catalog.indexes_of(rel).any(|i| i.index.as_ref().is_some_and(|x| x.clustered))
        && new_indexes.iter().any(|i| i.index.as_ref().is_some_and(|x| x.primary && !x.deferrable));
    if !recluster {
        d.put(t)?;
        for idx in new_indexes.iter() {
            d.create_relation(&mut idx.clone())?;
        }
        validate_new_constraints(d, rel, t, new_indexes)?;
        // Columns of a new (deferrable, so unclustered) primary key became
        // NOT NULL: existing rows must have values there.
        for (i, col) in t.columns.iter().enumerate().take(rel.columns.len()) {
            if col.not_null && !rel.columns[i].not_null && !col.dropped && column_has_nulls(d, rel, i)? {
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", col.name, rel.name),
                ));
            }
        }
        return Ok(());
    }
    d.lock_relation(rel.oid)?;
    d.s.note_drop(rel.storage_id);
    t.storage_id = d.storage()?;
    for idx in new_indexes.iter_mut() {
        let info = idx.index.as_mut().expect("index relation");
        if info.primary && !info.deferrable {
            info.clustered = true;
            idx.storage_id = t.storage_id;
        }
    }
    for old_idx in d.catalog.indexes_of(rel) {
        let mut ix = (**old_idx).clone();
        d.s.note_drop(ix.storage_id);
        ix.storage_id = d.storage()?;
        d.put(&ix)?;
    }
    d.put(t)?;
    for idx in new_indexes.iter() {
        d.create_relation(&mut idx.clone())?;
    }
    // Duplicates are reported first, then NULLs in the key, as PostgreSQL does.
    let null_col = reload_rows(d, rel, t)?;
    let pk = t.primary_key().expect("just added").clone();
    if let Some(i) = null_col {
        return Err(PgError::new(
            sqlstate::NOT_NULL_VIOLATION,
            format!("column \"{}\" of relation \"{}\" contains null values", t.column(pk.columns[i]).name, rel.name),
        ));
    }
    validate_new_constraints(d, rel, t, &[])
}

/// Drops the primary key of a table clustered on it: the rows move to
/// new storage under hidden row ids (every other index rebuilt for the new
/// row keys). Referencing foreign keys are the caller's business.
pub(crate) fn decluster(d: &Ddl, rel: &Arc<Relation>) -> PgResult<()> {
    d.lock_relation(rel.oid)?;
    let mut t = (**rel).clone();
    t.constraints.retain(|k| k.kind != ConstraintKind::PrimaryKey);
    d.s.note_drop(rel.storage_id);
    t.storage_id = d.storage()?;
    for ix in d.catalog.indexes_of(rel) {
        if ix.index.as_ref().is_some_and(|i| i.clustered) {
            // Its storage is the table's, dropped above.
            store::delete_relation(d.txn()?, d.db(), ix)?;
            continue;
        }
        let mut moved = (**ix).clone();
        d.s.note_drop(moved.storage_id);
        moved.storage_id = d.storage()?;
        d.put(&moved)?;
    }
    d.put(&t)?;
    reload_rows(d, rel, &t).map(|_| ())
}

/// Copies every row of `old` into the rewritten table `new` (new storage,
/// the same columns): around the transaction when it owns all the new
/// storage (see `tusk_storage::BulkWriter`), streaming, with unique keys
/// verified afterwards. Rows with a NULL in the clustered key stay out;
/// the position (in the key) of the first such NULL is returned.
fn reload_rows(d: &Ddl, old: &Arc<Relation>, new: &Relation) -> PgResult<Option<usize>> {
    let cat = Arc::new(store::load_database(d.txn()?, d.db())?);
    let new_rel = cat.relation(new.oid).ok_or_else(|| PgError::internal("table vanished"))?.clone();
    // ADD COLUMN ... PRIMARY KEY rewrites the table in the statement that
    // adds the column: the old rows are read with the new column list, the
    // added column taking its `missing` value, as later reads would.
    let old = if new.columns.len() > old.columns.len() {
        let mut widened = (**old).clone();
        widened.columns = new.columns.clone();
        Arc::new(widened)
    } else {
        old.clone()
    };
    d.s.with_exec(&cat, |cx| {
        let mut compile = crate::executor::nodes_compile(cx);
        // The stored rows are read as the new definition sees them (a
        // column added with the key reads as its default), from the old
        // storage.
        let source = Relation { storage_id: old.storage_id, indexes: old.indexes.clone(), ..new.clone() };
        let from = TableAccess::new(Arc::new(source), &d.catalog, &mut compile)?;
        let to = TableAccess::new(new_rel.clone(), &cat, &mut compile)?;
        let bulk_ok = cx.env.bulk_storage(new_rel.storage_id) && to.indexes.iter().all(|i| cx.env.bulk_storage(i.rel.storage_id));
        let mut bulk = bulk_ok.then(|| cx.txn.engine().bulk_writer());
        let pk_cols = to.pk_cols.clone().unwrap_or_default();
        let mut expected = vec![0u64; to.indexes.len()];
        let keyed = |row: &[Datum]| pk_cols.iter().all(|&c| !row[c].is_null());
        let mut null_col = None;
        // Whether the new row keys came strictly increasing (see verify_unique_loaded).
        let mut last_key: Option<Vec<u8>> = None;
        let mut increasing = true;
        let mut loaded = |key: Vec<u8>| {
            if increasing {
                increasing = last_key.as_ref().is_none_or(|last| *last < key);
                last_key = Some(key);
            }
        };
        match to.placement_columns().filter(|_| to.same_layout(&from)) {
            // Only the keys change: stored values move as they are, and only
            // the columns that place them are decoded.
            Some(placing) => {
                let mut reader = from.clone();
                reader.read_only_columns(&placing);
                reader.scan_all_stored(cx, &mut |_, value| {
                    let row = reader.decode(value)?;
                    if !keyed(&row) {
                        null_col = null_col.or_else(|| pk_cols.iter().position(|&c| row[c].is_null()));
                        return Ok(());
                    }
                    to.count_entries(&row, &mut expected, cx)?;
                    loaded(to.load_stored(value, &row, bulk.as_mut(), cx)?);
                    Ok(())
                })?;
            }
            None => from.scan_all(cx, &mut |_, row| {
                if !keyed(&row) {
                    null_col = null_col.or_else(|| pk_cols.iter().position(|&c| row[c].is_null()));
                    return Ok(());
                }
                to.count_entries(&row, &mut expected, cx)?;
                loaded(to.load_row(&row, bulk.as_mut(), cx)?);
                Ok(())
            })?,
        }
        if let Some(b) = bulk.as_mut() {
            b.flush()?;
        }
        to.verify_unique_loaded(
            &|f| {
                from.scan_all(cx, &mut |_, row| if keyed(&row) { f(row) } else { Ok(()) })
            },
            &expected,
            increasing,
            cx,
        )?;
        Ok(null_col)
    })
}

fn validate_new_constraints(d: &Ddl, old: &Arc<Relation>, new: &Relation, new_indexes: &[Relation]) -> PgResult<()> {
    for idx in new_indexes {
        build_index(d, new, idx.oid)?;
    }
    // NOT VALID constraints leave the existing rows alone.
    let added: Vec<&Constraint> = new.constraints.iter().filter(|c| c.validated && !old.constraints.iter().any(|o| o.name == c.name)).collect();
    check_existing_rows(d, new.oid, &added)
}

/// ALTER TABLE ... VALIDATE CONSTRAINT (ATExecValidateConstraint): checks
/// the existing rows against a NOT VALID foreign key or CHECK constraint,
/// then marks it valid. Validating a valid constraint does nothing.
fn validate_constraint(d: &Ddl, rel: &Arc<Relation>, name: &str) -> PgResult<()> {
    let Some(pos) = rel.constraints.iter().position(|k| k.name == name) else {
        return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{name}\" of relation \"{}\" does not exist", rel.name)));
    };
    let con = &rel.constraints[pos];
    if !matches!(con.kind, ConstraintKind::ForeignKey | ConstraintKind::Check) {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("constraint \"{name}\" of relation \"{}\" is not a foreign key or check constraint", rel.name),
        ));
    }
    if con.validated {
        return Ok(());
    }
    check_existing_rows(d, rel.oid, &[con])?;
    let mut t = (**rel).clone();
    t.constraints[pos].validated = true;
    d.put(&t)
}

/// Checks every row of table `table` against the CHECK and FOREIGN KEY
/// constraints among `constraints`, failing as PostgreSQL's validation
/// does on the first violation.
pub(crate) fn check_existing_rows(d: &Ddl, table: Oid, constraints: &[&Constraint]) -> PgResult<()> {
    let added = constraints;
    if added.iter().all(|c| !matches!(c.kind, ConstraintKind::Check | ConstraintKind::ForeignKey)) {
        return Ok(());
    }
    let cat = Arc::new(store::load_database(d.txn()?, d.db())?);
    let rel = cat.relation(table).ok_or_else(|| PgError::internal("table vanished"))?.clone();
    d.s.with_exec(&cat, |cx| {
        let mut compile = crate::executor::nodes_compile(cx);
        let table = TableAccess::new(rel.clone(), &cat, &mut compile)?;
        for c in added.iter() {
            match c.kind {
                ConstraintKind::Check => {
                    let e = compile(&rel, c.check.as_deref().unwrap_or("true"))?;
                    let mut bad = false;
                    table.scan_all(cx, &mut |_, row| {
                        if matches!(crate::executor::eval(&e, &row, cx)?, Datum::Bool(false)) {
                            bad = true;
                        }
                        Ok(())
                    })?;
                    if bad {
                        return Err(PgError::new(
                            sqlstate::CHECK_VIOLATION,
                            format!("check constraint \"{}\" of relation \"{}\" is violated by some row", c.name, rel.name),
                        )
                        .with_table(cat.namespace_name(rel.namespace), &rel.name)
                        .with_constraint(&c.name));
                    }
                }
                ConstraintKind::ForeignKey => {
                    let fk = c.foreign.as_ref().expect("fk");
                    let parent_rel = cat.relation(fk.ref_table).ok_or_else(|| PgError::internal("parent"))?.clone();
                    let parent = TableAccess::new(parent_rel.clone(), &cat, &mut compile)?;
                    let cols: Vec<usize> = c.columns.iter().map(|&a| rel.live_columns().position(|(x, _)| x == a).unwrap_or(0)).collect();
                    let pcols: Vec<usize> = fk.ref_columns.iter().map(|&a| parent_rel.live_columns().position(|(x, _)| x == a).unwrap_or(0)).collect();
                    let mut failure: Option<Vec<Datum>> = None;
                    table.scan_all(cx, &mut |_, row| {
                        if failure.is_some() {
                            return Ok(());
                        }
                        let vals: Vec<Datum> = cols.iter().map(|&i| row[i].clone()).collect();
                        if vals.iter().any(Datum::is_null) {
                            return Ok(());
                        }
                        if parent.lookup_key(&pcols, &vals, cx, true)?.is_none() {
                            failure = Some(vals);
                        }
                        Ok(())
                    })?;
                    if let Some(vals) = failure {
                        let settings = cx.env.settings();
                        let names: Vec<String> = cols.iter().map(|&i| rel.live_columns().nth(i).unwrap().1.name.clone()).collect();
                        let texts: Vec<String> = cols
                            .iter()
                            .zip(&vals)
                            .map(|(&i, v)| crate::functions::io::format_text(v, rel.live_columns().nth(i).unwrap().1.type_oid, &settings))
                            .collect();
                        return Err(PgError::new(
                            sqlstate::FOREIGN_KEY_VIOLATION,
                            format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", rel.name, c.name),
                        )
                        .with_detail(format!(
                            "Key ({})=({}) is not present in table \"{}\".",
                            names.join(", "),
                            texts.join(", "),
                            parent_rel.name
                        ))
                        .with_table(cat.namespace_name(rel.namespace), &rel.name)
                        .with_constraint(&c.name));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- RENAME

pub fn rename(s: &mut SqlSession, stmt: &pb::RenameStmt, sql: &str) -> PgResult<()> {
    {
        let d = Ddl::new(s, sql)?;
        match stmt.rename_type {
            // TABLE, VIEW, INDEX, SEQUENCE, FOREIGN TABLE
            k if matches!(k, 42 | 52 | 21 | 38) || k == pb::ObjectType::ObjectForeignTable as i32 => {
                let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("RENAME without relation"))?;
                let Some(rel) = d.lookup_opt(rv)? else {
                    if stmt.missing_ok {
                        notice(s, format!("relation \"{}\" does not exist, skipping", rv.relname));
                        return Ok(());
                    }
                    return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", rv.relname)));
                };
                super::grant::check_relation_owner(d.s, &rel)?;
                d.lock_relation(rel.oid)?;
                if d.relation_name_taken(rel.namespace, &stmt.newname) {
                    return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", stmt.newname)));
                }
                let txn = d.txn()?;
                store::release_name(txn, d.db(), rel.namespace, &rel.name)?;
                if !store::claim_name(txn, d.db(), rel.namespace, &stmt.newname, rel.oid)? {
                    return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" already exists", stmt.newname)));
                }
                let mut t = (*rel).clone();
                t.name = stmt.newname.clone();
                rename_in_views(&d, &rel, &rel.name, &stmt.newname)?;
                // Renaming an index renames its constraint too.
                if let Some(info) = &rel.index {
                    if let Some(table) = d.catalog.relation(info.table) {
                        let mut tt = (**table).clone();
                        for c in tt.constraints.iter_mut() {
                            if c.index == rel.oid && matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion) {
                                c.name = stmt.newname.clone();
                            }
                        }
                        d.put(&tt)?;
                    }
                }
                d.put(&t)?;
            }
            // COLUMN
            7 => {
                let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("RENAME without relation"))?;
                let rel = d.lookup(rv)?;
                super::grant::check_relation_owner(d.s, &rel)?;
                // The column goes by its new name in the whole inheritance tree.
                for oid in super::inherit::rename_column_targets(&d, &rel, &stmt.subname, &stmt.newname, rv.inh)? {
                    let d = Ddl { s: d.s, catalog: Arc::new(store::load_database(d.txn()?, d.db())?), sql: d.sql };
                    let rel = d.catalog.relation(oid).cloned().ok_or_else(|| PgError::internal("renamed table vanished"))?;
                    rename_column(&d, &rel, stmt)?;
                }
            }
            // CONSTRAINT
            41 => {
                let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("RENAME without relation"))?;
                let rel = d.lookup(rv)?;
                super::grant::check_relation_owner(d.s, &rel)?;
                for oid in super::inherit::rename_constraint_targets(&d, &rel, &stmt.subname, rv.inh)? {
                    let d = Ddl { s: d.s, catalog: Arc::new(store::load_database(d.txn()?, d.db())?), sql: d.sql };
                    let rel = d.catalog.relation(oid).cloned().ok_or_else(|| PgError::internal("renamed table vanished"))?;
                    rename_constraint(&d, &rel, stmt)?;
                }
            }
            // SCHEMA
            37 => {
                let old = match stmt.object.as_deref().and_then(|n| n.node.as_ref()) {
                    Some(NodeEnum::String(s)) => s.sval.clone(),
                    _ => stmt.subname.clone(),
                };
                let nsp = d.catalog.namespace_by_name.get(&old).copied().ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{old}\" does not exist"))
                })?;
                if d.catalog.namespace_by_name.contains_key(&stmt.newname) {
                    return Err(PgError::new(sqlstate::DUPLICATE_SCHEMA, format!("schema \"{}\" already exists", stmt.newname)));
                }
                let mut ns = d.catalog.namespaces[&nsp].clone();
                ns.name = stmt.newname.clone();
                store::put_namespace(d.txn()?, d.db(), &ns)?;
            }
            _ => return Err(PgError::unsupported("renaming this kind of object")),
        }
    }
    s.reload_txn_catalog()
}

/// RENAME COLUMN on one table.
fn rename_column(d: &Ddl, rel: &Arc<Relation>, stmt: &pb::RenameStmt) -> PgResult<()> {
    d.lock_relation(rel.oid)?;
    let i = column_index(rel, &stmt.subname)
        .map_err(|_| PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" does not exist", stmt.subname)))?;
    if rel.column_by_name(&stmt.newname).is_some() {
        return Err(PgError::new(
            sqlstate::DUPLICATE_COLUMN,
            format!("column \"{}\" of relation \"{}\" already exists", stmt.newname, rel.name),
        ));
    }
    let mut t = (**rel).clone();
    t.columns[i].name = stmt.newname.clone();
    rename_column_in_views(d, rel, &stmt.subname, &stmt.newname)?;
    // Stored expressions refer to columns by name: rewrite them.
    for c in t.constraints.iter_mut() {
        if let Some(e) = &c.check {
            c.check = Some(rename_identifier(e, &stmt.subname, &stmt.newname));
        }
    }
    d.put(&t)?;
    for ix in d.catalog.indexes_of(rel) {
        let mut x = (**ix).clone();
        let info = x.index.as_mut().expect("index");
        for k in info.keys.iter_mut() {
            if let Some(e) = &k.expr {
                k.expr = Some(rename_identifier(e, &stmt.subname, &stmt.newname));
            }
        }
        if let Some(p) = &info.predicate {
            info.predicate = Some(rename_identifier(p, &stmt.subname, &stmt.newname));
        }
        d.put(&x)?;
    }
    Ok(())
}

/// RENAME CONSTRAINT on one table.
fn rename_constraint(d: &Ddl, rel: &Arc<Relation>, stmt: &pb::RenameStmt) -> PgResult<()> {
    let mut t = (**rel).clone();
    let Some(c) = t.constraints.iter_mut().find(|c| c.name == stmt.subname) else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("constraint \"{}\" for table \"{}\" does not exist", stmt.subname, rel.name),
        ));
    };
    c.name = stmt.newname.clone();
    let idx = c.index;
    let is_index_backed = matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion);
    d.put(&t)?;
    if is_index_backed {
        if let Some(ix) = d.catalog.relation(idx) {
            let txn = d.txn()?;
            store::release_name(txn, d.db(), ix.namespace, &ix.name)?;
            store::claim_name(txn, d.db(), ix.namespace, &stmt.newname, ix.oid)?;
            let mut x = (**ix).clone();
            x.name = stmt.newname.clone();
            d.put(&x)?;
        }
    }
    Ok(())
}

/// Views keep their query as SQL text, so a renamed table or column is
/// renamed in the text of the views that read it (PostgreSQL's views
/// refer by OID and need no such step).
fn rename_in_views(d: &Ddl, rel: &Relation, old: &str, new: &str) -> PgResult<()> {
    rename_in_views_with(d, rel, &|text| Ok(rename_identifier(text, old, new)))
}

/// A renamed column of `rel`, in the views that read it. The view's own
/// columns keep their names (PostgreSQL's views refer to columns by number,
/// so renaming a base column never renames a view column): a select-list
/// item that was just the column gets the old name as its alias.
fn rename_column_in_views(d: &Ddl, rel: &Relation, old: &str, new: &str) -> PgResult<()> {
    rename_in_views_with(d, rel, &|text| rename_column_in_query_text(d, text, rel, old, new))
}

fn rename_in_views_with(d: &Ddl, rel: &Relation, rewrite: &dyn Fn(&str) -> PgResult<String>) -> PgResult<()> {
    for v in d.catalog.relations.values() {
        let Some(info) = &v.view else { continue };
        if !info.depends_on.contains(&rel.oid) {
            continue;
        }
        let mut updated = (**v).clone();
        if let Some(vi) = updated.view.as_mut() {
            vi.query = rewrite(&vi.query)?;
        }
        d.put(&updated)?;
    }
    Ok(())
}

/// Renames column `old` of `rel` to `new` in a stored query: references
/// qualified by the table's name or an alias of it, and unqualified ones
/// when no other table the query reads has such a column.
fn rename_column_in_query_text(d: &Ddl, text: &str, rel: &Relation, old: &str, new: &str) -> PgResult<String> {
    use pg_query::NodeMut;
    let mut tree = pg_query::parse(text).map_err(|e| PgError::internal(format!("stored view does not parse: {e}")))?.protobuf;
    let mut qualifiers = vec![rel.name.clone()];
    let mut others_have_it = false;
    // SAFETY: the walk only changes strings inside nodes it was handed,
    // never the shape of the tree.
    unsafe {
        for (node, _, _) in tree.nodes_mut() {
            if let NodeMut::RangeVar(rv) = node {
                let rv = &*rv;
                if rv.relname == rel.name {
                    if let Some(a) = &rv.alias {
                        qualifiers.push(a.aliasname.clone());
                    }
                } else if d.catalog.relations.values().any(|r| r.name == rv.relname && r.oid != rel.oid && r.column_by_name(old).is_some()) {
                    others_have_it = true;
                }
            }
        }
        let renames = |c: &pb::ColumnRef| -> bool {
            let names: Vec<&str> = c.fields.iter().filter_map(ident).collect();
            match names.as_slice() {
                [col] => *col == old && !others_have_it,
                [.., qual, col] => *col == old && qualifiers.iter().any(|q| q == qual),
                _ => false,
            }
        };
        for (node, _, _) in tree.nodes_mut() {
            match node {
                NodeMut::ResTarget(rt) => {
                    let rt = &mut *rt;
                    if rt.name.is_empty() {
                        if let Some(NodeEnum::ColumnRef(c)) = rt.val.as_deref().and_then(|v| v.node.as_ref()) {
                            if renames(c) {
                                rt.name = old.to_string();
                            }
                        }
                    }
                }
                NodeMut::ColumnRef(c) => {
                    let c = &mut *c;
                    if renames(c) {
                        if let Some(Some(NodeEnum::String(last))) = c.fields.last_mut().map(|n| n.node.as_mut()) {
                            last.sval = new.to_string();
                        }
                    }
                }
                _ => {}
            }
        }
    }
    pg_query::deparse(&tree).map_err(|e| PgError::internal(format!("could not deparse view: {e}")))
}

/// ALTER TABLE / VIEW / SEQUENCE ... SET SCHEMA: the relation moves with
/// its indexes and the sequences it owns.
pub fn alter_object_schema(s: &mut SqlSession, stmt: &pb::AlterObjectSchemaStmt, sql: &str) -> PgResult<()> {
    let kind = stmt.object_type;
    let relation_kind = [pb::ObjectType::ObjectTable, pb::ObjectType::ObjectView, pb::ObjectType::ObjectSequence, pb::ObjectType::ObjectForeignTable]
        .iter()
        .any(|k| *k as i32 == kind);
    if !relation_kind {
        return Err(PgError::unsupported("ALTER ... SET SCHEMA for this kind of object"));
    }
    {
        let d = Ddl::new(s, sql)?;
        let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("SET SCHEMA without relation"))?;
        let Some(rel) = d.lookup_opt(rv)? else {
            if stmt.missing_ok {
                notice(d.s, format!("relation \"{}\" does not exist, skipping", rv.relname));
                return Ok(());
            }
            return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", rv.relname)));
        };
        super::grant::check_relation_owner(d.s, &rel)?;
        let nsp = d.catalog.namespace_by_name.get(&stmt.newschema).copied().ok_or_else(|| {
            PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", stmt.newschema))
        })?;
        if matches!(stmt.newschema.as_str(), "pg_catalog" | "information_schema") || stmt.newschema.starts_with("pg_temp") || stmt.newschema.starts_with("pg_toast") {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot move objects into or out of temporary schemas"));
        }
        // Already there: nothing to do (PostgreSQL 15 accepts it silently).
        if rel.namespace == nsp {
            return Ok(());
        }
        d.lock_relation(rel.oid)?;
        let mut moving: Vec<Arc<Relation>> = vec![rel.clone()];
        moving.extend(d.catalog.indexes_of(&rel).into_iter().cloned());
        for r in d.catalog.relations.values() {
            if r.sequence.as_ref().and_then(|q| q.owned_by).map(|(t, _)| t) == Some(rel.oid) {
                moving.push(r.clone());
            }
        }
        let txn = d.txn()?;
        for r in &moving {
            if d.relation_name_taken(nsp, &r.name) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists in schema \"{}\"", r.name, stmt.newschema),
                ));
            }
            store::release_name(txn, d.db(), r.namespace, &r.name)?;
            if !store::claim_name(txn, d.db(), nsp, &r.name, r.oid)? {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists in schema \"{}\"", r.name, stmt.newschema),
                ));
            }
            let mut moved = (**r).clone();
            moved.namespace = nsp;
            d.put(&moved)?;
        }
    }
    s.reload_txn_catalog()
}

/// Replaces an identifier in stored expression text (a whole-word match).
fn rename_identifier(text: &str, old: &str, new: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut in_string = false;
    for ch in text.chars() {
        if in_string {
            out.push(ch);
            if ch == '\'' {
                in_string = false;
            }
            continue;
        }
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        if !word.is_empty() {
            out.push_str(if word == old { new } else { &word });
            word.clear();
        }
        if ch == '\'' {
            in_string = true;
        }
        out.push(ch);
    }
    if !word.is_empty() {
        out.push_str(if word == old { new } else { &word });
    }
    out
}


/// "an index", "a table": the article PostgreSQL's messages put before a noun.
fn with_article(noun: &str) -> String {
    if noun.starts_with(['a', 'e', 'i', 'o', 'u']) { format!("an {noun}") } else { format!("a {noun}") }
}
