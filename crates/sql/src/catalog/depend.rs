//! Dependencies between objects, as PostgreSQL records them in `pg_depend`
//! (objects of one database) and `pg_shdepend` (objects on roles), and the
//! words PostgreSQL uses for objects in messages (getObjectDescription).
//!
//! DROP follows these dependencies (`commands::dependency`), and the two
//! catalogs show them.
//!
//! They are derived from the catalog, not stored. Every fact a pg_depend row
//! records is already in the rows of the objects themselves: a sequence
//! names the column that owns it, a constraint its columns and index, an
//! index its keys, a default its text, a view what its query reads. Deriving
//! the rows from those keeps them consistent by construction: no DDL path
//! (today's or one written later) can change an object and forget its
//! pg_depend rows, and nothing needs migrating. The graph is built once per
//! catalog snapshot, when DROP or a pg_depend scan first asks for it.
//!
//! The one fact that needs the analyzer, which columns a view's query reads,
//! is computed when the view is made and kept in its row
//! (`ViewInfo::refs`), as PostgreSQL keeps it in its rule's pg_depend rows.
//!
//! Routines, triggers, operators, aggregates and casts have rows too: what
//! a SQL-standard body or a parameter default refers to is computed at
//! CREATE FUNCTION and kept in the function's row (`Function::refs`), as
//! for views. Tusk has no row types or toast tables, so there are no rows
//! for them; dependencies on built-in objects are not recorded, as
//! PostgreSQL records none on pinned objects.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use pg_query::NodeEnum;
use tusk_types::Oid;

use super::*;

/// pg_class.oid of the catalogs objects live in (ObjectAddress.classId).
pub const PG_TYPE: Oid = 1247;
pub const PG_PROC_CLASS: Oid = 1255;
pub const PG_CLASS: Oid = 1259;
pub const PG_AUTHID: Oid = 1260;
pub const PG_DATABASE: Oid = 1262;
pub const PG_ATTRDEF: Oid = 2604;
pub const PG_CONSTRAINT: Oid = 2606;
pub const PG_REWRITE: Oid = 2618;
pub const PG_TRIGGER: Oid = 2620;
pub const PG_NAMESPACE: Oid = 2615;
pub const PG_SUBSCRIPTION: Oid = 6100;
pub const PG_PUBLICATION: Oid = 6104;
pub const PG_PUBLICATION_REL: Oid = 6106;
pub const PG_PUBLICATION_NAMESPACE: Oid = 6237;

/// PostgreSQL 15's FirstUnpinnedObjectId: objects below it (built-in
/// types, functions, schemas, the bootstrap superuser and the predefined
/// roles) are pinned, so nothing records a dependency on them.
pub const FIRST_UNPINNED_OBJECT_ID: Oid = 12000;

/// An object, or a column of one (`sub` > 0): PostgreSQL's ObjectAddress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectAddress {
    pub class: Oid,
    pub oid: Oid,
    pub sub: i32,
}

impl ObjectAddress {
    pub fn new(class: Oid, oid: Oid, sub: i32) -> ObjectAddress {
        ObjectAddress { class, oid, sub }
    }
    pub fn relation(oid: Oid) -> ObjectAddress {
        ObjectAddress::new(PG_CLASS, oid, 0)
    }
    pub fn column(rel: Oid, attnum: i16) -> ObjectAddress {
        ObjectAddress::new(PG_CLASS, rel, attnum as i32)
    }
    pub fn constraint(oid: Oid) -> ObjectAddress {
        ObjectAddress::new(PG_CONSTRAINT, oid, 0)
    }
    pub fn namespace(oid: Oid) -> ObjectAddress {
        ObjectAddress::new(PG_NAMESPACE, oid, 0)
    }

    /// The whole object this address is (a part of).
    pub fn whole(self) -> ObjectAddress {
        ObjectAddress { sub: 0, ..self }
    }

    /// Same object, or `self` is the whole of which `other` is a part.
    pub fn covers(self, other: ObjectAddress) -> bool {
        self.class == other.class && self.oid == other.oid && (self.sub == other.sub || self.sub == 0)
    }

    /// PostgreSQL's object_address_comparator: OID descending (newer
    /// objects first, the likely order to delete them in), then catalog,
    /// then sub-object with the whole object first.
    pub fn deletion_order(&self, other: &ObjectAddress) -> Ordering {
        other.oid.cmp(&self.oid).then(self.class.cmp(&other.class)).then((self.sub as u32).cmp(&(other.sub as u32)))
    }
}

/// pg_depend.deptype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepType {
    /// 'n': the dependent must go first, and only with CASCADE.
    Normal,
    /// 'a': the dependent goes along silently (an index with its column).
    Auto,
    /// 'i': the dependent is part of the referenced object's implementation
    /// (a constraint's index, a view's rule): it goes only with it.
    Internal,
}

impl DepType {
    pub fn code(self) -> char {
        match self {
            DepType::Normal => 'n',
            DepType::Auto => 'a',
            DepType::Internal => 'i',
        }
    }
}

/// One pg_depend row: `object` depends on `referenced`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependency {
    pub object: ObjectAddress,
    pub referenced: ObjectAddress,
    pub deptype: DepType,
}

/// The pg_depend rows of one database, indexed both ways as PostgreSQL's
/// pg_depend_depender_index and pg_depend_reference_index are.
#[derive(Debug, Default)]
pub struct Dependencies {
    rows: Vec<Dependency>,
    by_object: HashMap<(Oid, Oid), Vec<usize>>,
    by_referenced: HashMap<(Oid, Oid), Vec<usize>>,
}

impl Dependencies {
    pub fn rows(&self) -> &[Dependency] {
        &self.rows
    }

    /// What `object` depends on (for a whole object, its columns' too).
    pub fn depends_on(&self, object: ObjectAddress) -> impl Iterator<Item = &Dependency> + '_ {
        self.by_object
            .get(&(object.class, object.oid))
            .into_iter()
            .flatten()
            .map(|&i| &self.rows[i])
            .filter(move |d| object.sub == 0 || d.object.sub == object.sub)
    }

    /// What depends on `object` (for a whole object, on its columns too).
    pub fn dependents(&self, object: ObjectAddress) -> impl Iterator<Item = &Dependency> + '_ {
        self.by_referenced
            .get(&(object.class, object.oid))
            .into_iter()
            .flatten()
            .map(|&i| &self.rows[i])
            .filter(move |d| object.sub == 0 || d.referenced.sub == object.sub)
    }

    /// Derives the rows from a catalog (see the header).
    pub fn derive(cat: &DbCatalog) -> Dependencies {
        let mut rows = Vec::new();
        let mut rels: Vec<&Arc<Relation>> = cat.relations.values().collect();
        rels.sort_by_key(|r| r.oid);
        // Stored user types (domains): in their schema, over their base
        // type, with their array type as part of them.
        for st in &cat.stored_types {
            let me = ObjectAddress::new(PG_TYPE, st.oid, 0);
            let base = match &st.def {
                super::types::TypeDef::Domain(d) => Some(d.base.oid),
                super::types::TypeDef::Range(r) => {
                    super::ranges::range_dependencies(st, r, &mut rows);
                    continue;
                }
                super::types::TypeDef::Enum(_) => None,
            };
            rows.push(Dependency { object: me, referenced: ObjectAddress::namespace(st.namespace), deptype: DepType::Normal });
            if let Some(base) = base.filter(|b| cat.user_types.get(*b).is_some()) {
                rows.push(Dependency { object: me, referenced: ObjectAddress::new(PG_TYPE, base, 0), deptype: DepType::Normal });
            }
            if st.array_oid != 0 {
                rows.push(Dependency { object: ObjectAddress::new(PG_TYPE, st.array_oid, 0), referenced: me, deptype: DepType::Internal });
            }
        }
        for rel in rels {
            relation_dependencies(cat, rel, &mut rows);
        }
        for p in cat.publications.values() {
            publication_dependencies(cat, p, &mut rows);
        }
        for f in cat.functions.values() {
            function_dependencies(cat, f, &mut rows);
        }
        operator_dependencies(cat, &mut rows);
        foreign_dependencies(cat, &mut rows);
        rows.retain(|d| !is_pinned(d.referenced));
        // Duplicates (a CHECK naming a column twice) are recorded once.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|d| seen.insert((d.object, d.referenced, d.deptype.code())));
        let mut deps = Dependencies { rows, ..Default::default() };
        for (i, d) in deps.rows.iter().enumerate() {
            deps.by_object.entry((d.object.class, d.object.oid)).or_default().push(i);
            deps.by_referenced.entry((d.referenced.class, d.referenced.oid)).or_default().push(i);
        }
        deps
    }
}

/// IsPinnedObject: built-in objects nobody records dependencies on (the
/// public schema is not pinned, so that it can be dropped).
pub fn is_pinned(obj: ObjectAddress) -> bool {
    obj.oid < FIRST_UNPINNED_OBJECT_ID && !(obj.class == PG_NAMESPACE && obj.oid == PUBLIC_NAMESPACE) && obj.class != PG_DATABASE
}

/// pg_attrdef.oid of a column's default. Tusk keeps a default in its column
/// and gives it an OID computed from the column, the same every time it is
/// read (pg_attrdef and pg_depend show the same one).
pub fn attrdef_oid(rel: Oid, attnum: i16) -> Oid {
    rel.wrapping_mul(1000).wrapping_add(attnum as u32 - 1)
}

/// The column an attrdef OID stands for, in this catalog.
pub fn attrdef_column(cat: &DbCatalog, oid: Oid) -> Option<(Oid, i16)> {
    // attrdef_oid is rel * 1000 + (attnum - 1), modulo 2^32: try the
    // relations whose product lands near it.
    cat.relations.values().find_map(|r| {
        let base = r.oid.wrapping_mul(1000);
        let i = oid.wrapping_sub(base);
        (i < r.columns.len() as u32 && r.columns[i as usize].stored_default().is_some()).then(|| (r.oid, i as i16 + 1))
    })
}

/// pg_rewrite.oid of a view's _RETURN rule.
pub fn rule_oid(view: &Relation) -> Oid {
    match &view.view {
        Some(v) if v.rule_oid != 0 => v.rule_oid,
        // A view made before rules had OIDs: its rule is numbered after it.
        _ => view.oid,
    }
}

/// The view whose _RETURN rule has this OID.
pub fn rule_view(cat: &DbCatalog, oid: Oid) -> Option<&Arc<Relation>> {
    cat.relations.values().find(|r| r.kind == RelKind::View && rule_oid(r) == oid)
}

/// A trigger and its table.
pub fn trigger_by_oid(cat: &DbCatalog, oid: Oid) -> Option<(&Arc<Relation>, &trigger::Trigger)> {
    cat.relations.values().find_map(|r| r.triggers.iter().find(|t| t.oid == oid).map(|t| (r, t)))
}

/// A constraint and its table.
pub fn constraint_by_oid(cat: &DbCatalog, oid: Oid) -> Option<(&Arc<Relation>, &Constraint)> {
    cat.relations.values().find_map(|r| r.constraints.iter().find(|c| c.oid == oid).map(|c| (r, c)))
}

fn relation_dependencies(cat: &DbCatalog, rel: &Relation, out: &mut Vec<Dependency>) {
    let me = ObjectAddress::relation(rel.oid);
    let mut push = |object: ObjectAddress, referenced: ObjectAddress, deptype: DepType| out.push(Dependency { object, referenced, deptype });
    if rel.kind != RelKind::Index && rel.kind != RelKind::CompositeType {
        push(me, ObjectAddress::namespace(rel.namespace), DepType::Normal);
    }
    // GenerateTypeDependencies: a table's row type is part of the table; a
    // composite type's relation is part of the type, which is in a schema.
    // An array type is part of its element type.
    if rel.row_type != 0 {
        let row = ObjectAddress::new(PG_TYPE, rel.row_type, 0);
        if rel.kind == RelKind::CompositeType {
            push(me, row, DepType::Internal);
            push(row, ObjectAddress::namespace(rel.namespace), DepType::Normal);
        } else {
            push(row, me, DepType::Internal);
        }
        if rel.row_array_type != 0 {
            push(ObjectAddress::new(PG_TYPE, rel.row_array_type, 0), row, DepType::Internal);
        }
    }
    // A column of a user type depends on the type.
    for (attnum, col) in rel.live_columns() {
        if col.type_oid >= tusk_types::oid::FIRST_NORMAL_OBJECT_ID && cat.user_types.get(col.type_oid).is_some() {
            push(ObjectAddress::column(rel.oid, attnum), ObjectAddress::new(PG_TYPE, col.type_oid, 0), DepType::Normal);
        }
    }
    // CreateForeignTable: a foreign table depends on its server.
    if let Some(f) = &rel.foreign {
        push(me, ObjectAddress::new(super::foreign::PG_FOREIGN_SERVER, f.server, 0), DepType::Normal);
    }
    // CreateTriggerFiringOn: a trigger goes with its table ('a'), and
    // holds its function and the columns of UPDATE OF and WHEN ('n').
    for t in &rel.triggers {
        let trig = ObjectAddress::new(PG_TRIGGER, t.oid, 0);
        push(trig, ObjectAddress::new(PG_PROC_CLASS, t.function, 0), DepType::Normal);
        push(trig, me, DepType::Auto);
        if t.constrrel != 0 {
            push(trig, ObjectAddress::relation(t.constrrel), DepType::Auto);
        }
        for &a in &t.columns {
            push(trig, ObjectAddress::column(rel.oid, a), DepType::Normal);
        }
        if let Some(w) = &t.when {
            for a in columns_read(rel, w) {
                push(trig, ObjectAddress::column(rel.oid, a), DepType::Normal);
            }
        }
    }
    match rel.kind {
        RelKind::CompositeType => {}
        RelKind::Table | RelKind::ForeignTable => {
            // StoreCatalogInheritance: a child depends on each parent.
            for &parent in &rel.inherits {
                push(me, ObjectAddress::relation(parent), DepType::Normal);
            }
            for (attnum, col) in rel.live_columns() {
                let Some(text) = col.stored_default() else { continue };
                let def = ObjectAddress::new(PG_ATTRDEF, attrdef_oid(rel.oid, attnum), 0);
                for seq in sequences_named_in(cat, rel, text) {
                    push(def, ObjectAddress::relation(seq), DepType::Normal);
                }
                push(def, ObjectAddress::column(rel.oid, attnum), DepType::Auto);
            }
            for c in &rel.constraints {
                let con = ObjectAddress::constraint(c.oid);
                match c.kind {
                    ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion => {
                        // Its index's INCLUDE columns too (CreateConstraintEntry
                        // records all of constraintNTotalKeys).
                        let include = cat.relations.get(&c.index).and_then(|ix| ix.index.as_ref()).map(|i| i.include.clone()).unwrap_or_default();
                        for &a in c.columns.iter().chain(include.iter()) {
                            push(con, ObjectAddress::column(rel.oid, a), DepType::Auto);
                        }
                    }
                    ConstraintKind::Check => {
                        // conkey is what the expression reads: the constraint
                        // goes with those columns ('a') and blocks their
                        // drop only through them ('n').
                        let read = c.check.as_deref().map(|e| columns_read(rel, e)).unwrap_or_default();
                        if read.is_empty() {
                            push(con, me, DepType::Auto);
                        }
                        for &a in &read {
                            push(con, ObjectAddress::column(rel.oid, a), DepType::Auto);
                        }
                        for &a in &read {
                            push(con, ObjectAddress::column(rel.oid, a), DepType::Normal);
                        }
                    }
                    ConstraintKind::ForeignKey => {
                        let Some(fk) = &c.foreign else { continue };
                        for &a in &fk.ref_columns {
                            push(con, ObjectAddress::column(fk.ref_table, a), DepType::Normal);
                        }
                        if fk.ref_index != 0 {
                            push(con, ObjectAddress::relation(fk.ref_index), DepType::Normal);
                        }
                        for &a in &c.columns {
                            push(con, ObjectAddress::column(rel.oid, a), DepType::Auto);
                        }
                    }
                }
            }
        }
        RelKind::Index => {
            let Some(info) = &rel.index else { return };
            let Some(table) = cat.relations.get(&info.table) else { return };
            let constraint = table
                .constraints
                .iter()
                .find(|c| c.index == rel.oid && matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion));
            if let Some(c) = constraint {
                push(me, ObjectAddress::constraint(c.oid), DepType::Internal);
            } else {
                let mut simple = false;
                // INCLUDE columns too: the index carries them (index_create
                // walks all of ii_NumIndexAttrs).
                let attnums = info.keys.iter().map(|k| k.attnum).chain(info.include.iter().copied());
                for attnum in attnums.filter(|a| *a > 0) {
                    push(me, ObjectAddress::column(table.oid, attnum), DepType::Auto);
                    simple = true;
                }
                if !simple {
                    push(me, ObjectAddress::relation(table.oid), DepType::Auto);
                }
            }
            let exprs = info.keys.iter().filter_map(|k| k.expr.as_deref()).chain(info.predicate.as_deref());
            let mut read = BTreeSet::new();
            for e in exprs {
                read.extend(columns_read(table, e));
            }
            for a in read {
                push(me, ObjectAddress::column(table.oid, a), DepType::Auto);
            }
        }
        RelKind::Sequence => {
            if let Some((table, attnum)) = rel.sequence.as_ref().and_then(|s| s.owned_by) {
                let identity = cat.relations.get(&table).and_then(|t| t.columns.get(attnum as usize - 1)).is_some_and(|c| c.identity != ' ');
                push(me, ObjectAddress::column(table, attnum), if identity { DepType::Internal } else { DepType::Auto });
            }
        }
        RelKind::View => {
            let Some(info) = &rel.view else { return };
            let rule = ObjectAddress::new(PG_REWRITE, rule_oid(rel), 0);
            // What the query reads; a view stored before column references
            // were kept depends on whole relations.
            let mut refs: Vec<(Oid, i16)> = info.refs.clone();
            if refs.is_empty() && info.rule_oid == 0 {
                refs = info.depends_on.iter().map(|&o| (o, 0)).collect();
            }
            for (r, a) in refs {
                if cat.relations.contains_key(&r) && r != rel.oid {
                    push(rule, ObjectAddress::new(PG_CLASS, r, a as i32), DepType::Normal);
                }
            }
            for &c in &info.constraint_refs {
                if constraint_by_oid(cat, c).is_some() {
                    push(rule, ObjectAddress::constraint(c), DepType::Normal);
                }
            }
            for &f in &info.function_refs {
                if cat.functions.contains_key(&f) {
                    push(rule, ObjectAddress::new(PG_PROC_CLASS, f, 0), DepType::Normal);
                }
            }
            // The rule's OLD and NEW entries read the view itself.
            push(rule, me, DepType::Normal);
            push(rule, me, DepType::Internal);
        }
    }
}

/// ProcedureCreate: a routine depends on its schema, and on what its
/// parameters' defaults and SQL-standard body refer to (all 'n').
fn function_dependencies(cat: &DbCatalog, f: &function::Function, out: &mut Vec<Dependency>) {
    let me = ObjectAddress::new(PG_PROC_CLASS, f.oid, 0);
    let mut push = |referenced: ObjectAddress| out.push(Dependency { object: me, referenced, deptype: DepType::Normal });
    push(ObjectAddress::namespace(f.namespace));
    for &(rel, attnum) in &f.refs {
        if cat.relations.contains_key(&rel) {
            push(ObjectAddress::column(rel, attnum));
        }
    }
    for &g in &f.function_refs {
        if cat.functions.contains_key(&g) {
            push(ObjectAddress::new(PG_PROC_CLASS, g, 0));
        }
    }
}

/// makeOperatorDependencies, AggregateCreate, CreateCast: an operator
/// depends on its schema and functions, an aggregate on its support
/// functions, a cast on its function (all 'n').
fn operator_dependencies(cat: &DbCatalog, out: &mut Vec<Dependency>) {
    use super::operator::{PG_CAST, PG_OPERATOR};
    let ops = &cat.user_ops;
    let func = |f: Oid| ObjectAddress::new(PG_PROC_CLASS, f, 0);
    for o in ops.operators.values() {
        let me = ObjectAddress::new(PG_OPERATOR, o.oid, 0);
        out.push(Dependency { object: me, referenced: ObjectAddress::namespace(o.namespace), deptype: DepType::Normal });
        for f in [o.proc, o.restrict, o.join] {
            if f != 0 {
                out.push(Dependency { object: me, referenced: func(f), deptype: DepType::Normal });
            }
        }
    }
    for a in ops.aggregates.values() {
        let me = func(a.fnoid);
        let support = [a.transfn, a.finalfn, a.combinefn, a.serialfn, a.deserialfn, a.mtransfn, a.minvtransfn, a.mfinalfn];
        for f in support.into_iter().filter(|&f| f != 0 && f != a.fnoid) {
            out.push(Dependency { object: me, referenced: func(f), deptype: DepType::Normal });
        }
    }
    for c in ops.casts.values() {
        if c.func != 0 {
            let me = ObjectAddress::new(PG_CAST, c.oid, 0);
            out.push(Dependency { object: me, referenced: func(c.func), deptype: DepType::Normal });
        }
    }
}

/// publication_add_relation / publication_add_schema: a member row goes
/// with its publication and with its table or schema ('a'); a table's
/// row filter and column list hold the columns they name ('n').
fn publication_dependencies(cat: &DbCatalog, p: &Publication, out: &mut Vec<Dependency>) {
    let publication = ObjectAddress::new(PG_PUBLICATION, p.oid, 0);
    for t in &p.tables {
        let me = ObjectAddress::new(PG_PUBLICATION_REL, t.oid, 0);
        out.push(Dependency { object: me, referenced: publication, deptype: DepType::Auto });
        out.push(Dependency { object: me, referenced: ObjectAddress::relation(t.relid), deptype: DepType::Auto });
        let Some(rel) = cat.relations.get(&t.relid) else { continue };
        let mut read: Vec<i16> = t.qual.as_deref().map(|q| columns_read(rel, q)).unwrap_or_default();
        read.extend(t.columns.iter().flatten().copied());
        for a in read {
            out.push(Dependency { object: me, referenced: ObjectAddress::column(t.relid, a), deptype: DepType::Normal });
        }
    }
    for n in &p.schemas {
        let me = ObjectAddress::new(PG_PUBLICATION_NAMESPACE, n.oid, 0);
        out.push(Dependency { object: me, referenced: publication, deptype: DepType::Auto });
        out.push(Dependency { object: me, referenced: ObjectAddress::namespace(n.nspid), deptype: DepType::Auto });
    }
}

/// The publication and member row a pg_publication_rel or
/// pg_publication_namespace OID stands for.
pub fn publication_member(cat: &DbCatalog, class: Oid, oid: Oid) -> Option<(&Publication, Oid)> {
    cat.publications.values().find_map(|p| match class {
        PG_PUBLICATION_REL => p.tables.iter().find(|t| t.oid == oid).map(|t| (p, t.relid)),
        _ => p.schemas.iter().find(|n| n.oid == oid).map(|n| (p, n.nspid)),
    })
}

/// A server depends on its wrapper, a user mapping on its server
/// (CreateForeignServer, CreateUserMapping record them as normal).
fn foreign_dependencies(cat: &DbCatalog, out: &mut Vec<Dependency>) {
    use super::foreign::*;
    for srv in cat.foreign.servers.values() {
        out.push(Dependency {
            object: ObjectAddress::new(PG_FOREIGN_SERVER, srv.oid, 0),
            referenced: ObjectAddress::new(PG_FOREIGN_DATA_WRAPPER, srv.fdw, 0),
            deptype: DepType::Normal,
        });
    }
    for m in cat.foreign.user_mappings.values() {
        out.push(Dependency {
            object: ObjectAddress::new(PG_USER_MAPPING, m.oid, 0),
            referenced: ObjectAddress::new(PG_FOREIGN_SERVER, m.server, 0),
            deptype: DepType::Normal,
        });
    }
}

/// format_procedure: `name(argtypes)`, schema-qualified when the schema
/// is not on the search path.
pub fn function_description(cat: &DbCatalog, f: &function::Function, search_path: &[Oid]) -> String {
    let sig = crate::fmgr::signature(f);
    if f.namespace == PG_CATALOG_NAMESPACE || search_path.contains(&f.namespace) {
        sig
    } else {
        format!("{}.{sig}", cat.namespace_name(f.namespace))
    }
}

/// Attribute numbers of `rel`'s columns an expression (stored as SQL text,
/// over that one table) reads, in ascending order.
pub fn columns_read(rel: &Relation, expr: &str) -> Vec<i16> {
    let mut out = BTreeSet::new();
    let Ok(parsed) = pg_query::parse(&format!("SELECT {expr}")) else { return Vec::new() };
    for (node, _, _) in parsed.protobuf.nodes() {
        if let pg_query::NodeRef::ColumnRef(c) = node {
            let name = match c.fields.last().and_then(|f| f.node.as_ref()) {
                Some(NodeEnum::String(s)) => s.sval.as_str(),
                _ => continue,
            };
            if let Some((attnum, _)) = rel.column_by_name(name) {
                out.insert(attnum);
            }
        }
    }
    out.into_iter().collect()
}

/// The sequences a default names: `nextval('s'::regclass)` and any other
/// `'name'::regclass` literal, or a bare string given to nextval, currval or
/// setval. PostgreSQL resolves the name when the default is made; Tusk
/// keeps the text, so an unqualified name is looked for in the table's
/// schema, then in public, then anywhere it is unique.
pub fn sequences_named_in(cat: &DbCatalog, rel: &Relation, text: &str) -> Vec<Oid> {
    if !text.contains('\'') {
        return Vec::new();
    }
    let Ok(parsed) = pg_query::parse(&format!("SELECT {text}")) else { return Vec::new() };
    let string_of = |n: Option<&pg_query::protobuf::Node>| -> Option<String> {
        match n?.node.as_ref()? {
            NodeEnum::AConst(c) => match &c.val {
                Some(pg_query::protobuf::a_const::Val::Sval(s)) => Some(s.sval.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    let mut names = Vec::new();
    for (node, _, _) in parsed.protobuf.nodes() {
        match node {
            pg_query::NodeRef::TypeCast(tc) => {
                let is_regclass = tc.type_name.as_ref().is_some_and(|t| {
                    matches!(t.names.last().and_then(|n| n.node.as_ref()), Some(NodeEnum::String(s)) if s.sval == "regclass")
                });
                if is_regclass {
                    names.extend(string_of(tc.arg.as_deref()));
                }
            }
            pg_query::NodeRef::FuncCall(fc) => {
                let is_seq_fn = matches!(fc.funcname.last().and_then(|n| n.node.as_ref()),
                    Some(NodeEnum::String(s)) if matches!(s.sval.as_str(), "nextval" | "currval" | "setval"));
                if is_seq_fn {
                    names.extend(string_of(fc.args.first()));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for name in names {
        let Ok(parts) = crate::functions::parse_qualified_name(&name) else { continue };
        let found = match parts.as_slice() {
            [n] => cat
                .lookup_relation(rel.namespace, n)
                .or_else(|| cat.lookup_relation(PUBLIC_NAMESPACE, n))
                .or_else(|| {
                    let mut all = cat.relations.values().filter(|r| &r.name == n);
                    match (all.next(), all.next()) {
                        (Some(r), None) => Some(r),
                        _ => None,
                    }
                }),
            [.., s, n] => cat.namespace_by_name.get(s).and_then(|&nsp| cat.lookup_relation(nsp, n)),
            _ => None,
        };
        if let Some(r) = found.filter(|r| r.kind == RelKind::Sequence) {
            if !out.contains(&r.oid) {
                out.push(r.oid);
            }
        }
    }
    out
}

// ---------------------------------------------------------------- pg_shdepend

/// pg_shdepend.deptype: 'o' the role owns the object, 'a' the object's
/// ACL mentions the role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SharedDepType {
    Owner,
    Acl,
}

impl SharedDepType {
    pub fn code(self) -> char {
        match self {
            SharedDepType::Owner => 'o',
            SharedDepType::Acl => 'a',
        }
    }
}

/// One pg_shdepend row: `object` (in database `dbid`, 0 for a shared
/// object) depends on role `role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedDependency {
    pub dbid: Oid,
    pub object: ObjectAddress,
    pub role: Oid,
    pub deptype: SharedDepType,
}

/// The roles an ACL makes an object depend on (updateAclDependencies):
/// grantees and grantors other than the owner, PUBLIC and pinned roles.
fn acl_roles(acl: Option<&[acl::AclItem]>, owner: Oid) -> BTreeSet<Oid> {
    let mut roles = BTreeSet::new();
    for item in acl.unwrap_or_default() {
        roles.insert(item.grantee);
        roles.insert(item.grantor);
    }
    roles.retain(|&r| r != owner && r != acl::PUBLIC && r >= FIRST_UNPINNED_OBJECT_ID);
    roles
}

/// The pg_shdepend rows of one database's objects: owners (except pinned
/// roles) of schemas and relations other than indexes, and ACL entries.
pub fn shared_dependencies_of_database(cat: &DbCatalog) -> Vec<SharedDependency> {
    let mut out = Vec::new();
    let db = cat.database;
    let mut push = |object: ObjectAddress, owner: Oid, acl: Option<&[acl::AclItem]>| {
        if owner >= FIRST_UNPINNED_OBJECT_ID {
            out.push(SharedDependency { dbid: db, object, role: owner, deptype: SharedDepType::Owner });
        }
        for role in acl_roles(acl, owner) {
            out.push(SharedDependency { dbid: db, object, role, deptype: SharedDepType::Acl });
        }
    };
    for ns in cat.namespaces.values().filter(|n| n.temp_session.is_none()) {
        push(ObjectAddress::namespace(ns.oid), ns.owner, ns.acl.as_deref());
    }
    let mut rels: Vec<&Arc<Relation>> = cat.relations.values().filter(|r| r.kind != RelKind::Index).collect();
    rels.sort_by_key(|r| r.oid);
    for r in rels {
        push(ObjectAddress::relation(r.oid), r.owner, r.acl.as_deref());
    }
    for p in cat.publications.values() {
        push(ObjectAddress::new(PG_PUBLICATION, p.oid, 0), p.owner, None);
    }
    use super::foreign::*;
    for w in cat.foreign.wrappers.values() {
        push(ObjectAddress::new(PG_FOREIGN_DATA_WRAPPER, w.oid, 0), w.owner, w.acl.as_deref());
    }
    for srv in cat.foreign.servers.values() {
        push(ObjectAddress::new(PG_FOREIGN_SERVER, srv.oid, 0), srv.owner, srv.acl.as_deref());
    }
    // A user mapping's role is recorded as its owner (recordDependencyOnOwner).
    for m in cat.foreign.user_mappings.values().filter(|m| m.user != acl::PUBLIC) {
        push(ObjectAddress::new(PG_USER_MAPPING, m.oid, 0), m.user, None);
    }
    out
}

/// The pg_shdepend rows of shared objects (databases), with dbid 0.
pub fn shared_dependencies_of_cluster(cluster: &ClusterCatalog) -> Vec<SharedDependency> {
    let mut out = Vec::new();
    for d in cluster.databases.values() {
        let object = ObjectAddress::new(PG_DATABASE, d.oid, 0);
        if d.owner >= FIRST_UNPINNED_OBJECT_ID {
            out.push(SharedDependency { dbid: 0, object, role: d.owner, deptype: SharedDepType::Owner });
        }
        for role in acl_roles(d.acl.as_deref(), d.owner) {
            out.push(SharedDependency { dbid: 0, object, role, deptype: SharedDepType::Acl });
        }
    }
    out
}

// ---------------------------------------------------------------- descriptions

/// getObjectDescription: how messages name an object ("view v", "column c
/// of table s.t", "default value for column c of table t"). `rel_name`
/// gives a relation's name as the session sees it: bare when the search
/// path finds it, else schema-qualified. None for an object that is gone.
pub fn describe(
    cat: &DbCatalog,
    cluster: Option<&ClusterCatalog>,
    obj: ObjectAddress,
    rel_name: &dyn Fn(&Relation) -> String,
    search_path: &[Oid],
) -> Option<String> {
    let relation = |oid: Oid| -> Option<String> {
        let r = cat.relation(oid)?;
        Some(format!("{} {}", r.kind.noun(), rel_name(r)))
    };
    let column = |rel: Oid, attnum: i32| -> Option<String> {
        let r = cat.relation(rel)?;
        let col = r.columns.get(usize::try_from(attnum).ok()?.checked_sub(1)?)?;
        Some(format!("column {} of {}", col.name, relation(rel)?))
    };
    match obj.class {
        PG_CLASS if obj.sub != 0 => column(obj.oid, obj.sub),
        PG_CLASS => relation(obj.oid),
        PG_CONSTRAINT => {
            let (t, c) = constraint_by_oid(cat, obj.oid)?;
            Some(format!("constraint {} on {}", c.name, relation(t.oid)?))
        }
        PG_ATTRDEF => {
            let (t, a) = attrdef_column(cat, obj.oid)?;
            Some(format!("default value for {}", column(t, a as i32)?))
        }
        PG_TRIGGER => {
            let (r, t) = trigger_by_oid(cat, obj.oid)?;
            Some(format!("trigger {} on {}", t.name, relation(r.oid)?))
        }
        PG_REWRITE => {
            let v = rule_view(cat, obj.oid)?;
            Some(format!("rule _RETURN on {}", relation(v.oid)?))
        }
        PG_NAMESPACE => cat.namespaces.get(&obj.oid).map(|n| format!("schema {}", n.name)),
        PG_TYPE => cat.user_types.get(obj.oid).map(|_| format!("type {}", crate::analyzer::types::format_type(builtins(), obj.oid, -1))),
        PG_PUBLICATION => cat.publications.get(&obj.oid).map(|p| format!("publication {}", p.name)),
        PG_PUBLICATION_REL => {
            let (p, rel) = publication_member(cat, PG_PUBLICATION_REL, obj.oid)?;
            Some(format!("publication of {} in publication {}", relation(rel)?, p.name))
        }
        PG_PUBLICATION_NAMESPACE => {
            let (p, nsp) = publication_member(cat, PG_PUBLICATION_NAMESPACE, obj.oid)?;
            Some(format!("publication of schema {} in publication {}", cat.namespaces.get(&nsp)?.name, p.name))
        }
        PG_SUBSCRIPTION => cat.subscriptions.get(&obj.oid).map(|s| format!("subscription {}", s.name)),
        super::foreign::PG_FOREIGN_DATA_WRAPPER => cat.foreign.wrappers.get(&obj.oid).map(|w| format!("foreign-data wrapper {}", w.name)),
        super::foreign::PG_FOREIGN_SERVER => cat.foreign.servers.get(&obj.oid).map(|s| format!("server {}", s.name)),
        super::foreign::PG_USER_MAPPING => {
            let m = cat.foreign.user_mappings.get(&obj.oid)?;
            let user = if m.user == acl::PUBLIC { "public".to_string() } else { cluster?.role_name(m.user) };
            let srv = cat.foreign.servers.get(&m.server)?;
            Some(format!("user mapping for {user} on server {}", srv.name))
        }
        PG_PROC_CLASS => cat.functions.get(&obj.oid).map(|f| format!("function {}", function_description(cat, f, search_path))),
        super::operator::PG_OPERATOR => {
            let o = cat.user_ops.operators.get(&obj.oid)?;
            let b = builtins();
            let side = |t: Oid| if t == 0 { "NONE".to_string() } else { crate::analyzer::types::format_type(b, t, -1) };
            // format_operator: qualified when its schema is not searched.
            let name = if o.namespace == PG_CATALOG_NAMESPACE || search_path.contains(&o.namespace) {
                o.name.clone()
            } else {
                format!("{}.{}", cat.namespace_name(o.namespace), o.name)
            };
            Some(format!("operator {name}({},{})", side(o.left), side(o.right)))
        }
        super::operator::PG_CAST => {
            let c = cat.user_ops.casts.get(&obj.oid)?;
            let b = builtins();
            Some(format!(
                "cast from {} to {}",
                crate::analyzer::types::format_type_be(b, c.source),
                crate::analyzer::types::format_type_be(b, c.target)
            ))
        }
        PG_AUTHID => cluster.and_then(|c| c.roles.get(&obj.oid)).map(|r| format!("role {}", r.name)),
        PG_DATABASE => cluster.and_then(|c| c.databases.get(&obj.oid)).map(|d| format!("database {}", d.name)),
        _ => None,
    }
}
