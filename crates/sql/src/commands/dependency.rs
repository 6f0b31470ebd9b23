//! Dropping objects along their dependencies, as PostgreSQL's dependency.c
//! does: every DROP (of schemas, tables, views, sequences, indexes, columns,
//! constraints) and DROP OWNED names the objects to drop, and this module
//! finds what depends on them (`catalog::depend`), refuses a RESTRICT drop
//! that would take other objects along (2BP01 with the list of them),
//! reports a CASCADE drop in NOTICEs, and deletes everything in an order in
//! which dependents go before what they depend on.
//!
//! The search is findDependentObjects: a depth-first walk that stops at an
//! object already on its path (dependency cycles, such as two views made to
//! read each other with CREATE OR REPLACE) or already found, checks the
//! stack at each level (a chain of thousands of views fails with 54001
//! rather than overflowing the session's stack), visits dependents in
//! PostgreSQL's order (newest OID first), and turns a request to drop a part
//! of an object (a view's rule, a constraint's index) into a request to
//! drop the object, or refuses it at the outermost level.
//!
//! Deleting works on the catalog snapshot the walk read: each object's
//! removal is recorded (a relation gone, a column dropped, a constraint or
//! default removed from its table), then every changed catalog row is
//! written once, so that nothing reads a stale catalog between steps.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::Ddl;
use crate::catalog::depend::*;
use crate::catalog::operator as opcat;
use crate::catalog::store;
use crate::catalog::*;
use crate::expr::{Expr, Var};
use crate::query::{FromItem, Query, RteKind};

/// ObjectAddressExtra flag bits.
const ORIGINAL: u32 = 0x1;
const NORMAL: u32 = 0x2;
const AUTO: u32 = 0x4;
const INTERNAL: u32 = 0x8;
const REVERSE: u32 = 0x40;
const SUBOBJECT: u32 = 0x100;

/// At most this many objects are listed in a DETAIL (MAX_REPORTED_DEPS).
const MAX_REPORTED: usize = 100;

/// One object to delete, with how it was reached and from what.
struct Target {
    object: ObjectAddress,
    flags: u32,
    /// The object whose deletion forced this one (for "x depends on y").
    dependee: Option<ObjectAddress>,
}

/// The objects a DROP will delete, in deletion order.
struct Deletion<'c> {
    catalog: &'c DbCatalog,
    deps: &'c Dependencies,
    targets: Vec<Target>,
    /// (class, oid) → indexes into `targets`.
    found: HashMap<(Oid, Oid), Vec<usize>>,
    /// The objects the statement names (performMultipleDeletions'
    /// pendingObjects): a part of one of them is not refused on its own.
    pending: Vec<ObjectAddress>,
}

/// One level of the walk: the object being visited and the flags that
/// inner levels report back to it.
type Stack = Vec<(ObjectAddress, u32)>;

/// stack_address_present_add_flags
fn stack_present_add_flags(object: ObjectAddress, flags: u32, stack: &mut Stack) -> bool {
    let mut result = false;
    for (o, f) in stack.iter_mut() {
        if o.class != object.class || o.oid != object.oid {
            continue;
        }
        if o.sub == object.sub {
            *f |= flags;
            result = true;
        } else if o.sub == 0 {
            result = true;
        } else if object.sub == 0 && flags != 0 {
            *f |= flags | SUBOBJECT;
        }
    }
    result
}

impl<'c> Deletion<'c> {
    fn new(catalog: &'c DbCatalog, pending: Vec<ObjectAddress>) -> Deletion<'c> {
        Deletion { catalog, deps: catalog.dependencies(), targets: Vec::new(), found: HashMap::new(), pending }
    }

    /// object_address_present_add_flags
    fn present_add_flags(&mut self, object: ObjectAddress, flags: u32) -> bool {
        let mut result = false;
        for &i in self.found.get(&(object.class, object.oid)).into_iter().flatten() {
            let t = &mut self.targets[i];
            if t.object.sub == object.sub {
                t.flags |= flags;
                result = true;
            } else if t.object.sub == 0 {
                result = true;
            } else if object.sub == 0 && flags != 0 {
                t.flags |= flags | SUBOBJECT;
            }
        }
        result
    }

    fn describe(&self, d: &Ddl, object: ObjectAddress) -> String {
        describe_object(d, self.catalog, object)
    }

    /// findDependentObjects: adds `object` and everything that depends on
    /// it to the targets, dependents first.
    fn find(&mut self, d: &Ddl, object: ObjectAddress, objflags: u32, stack: &mut Stack) -> PgResult<()> {
        if stack_present_add_flags(object, objflags, stack) {
            return Ok(());
        }
        crate::stack::check()?;
        if self.present_add_flags(object, objflags) {
            return Ok(());
        }
        if is_pinned(object) {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop {} because it is required by the database system", self.describe(d, object)),
            ));
        }
        // An object that is part of another (its "owner") goes only with it.
        let mut owning: Option<ObjectAddress> = None;
        let owners: Vec<Dependency> = self.deps.depends_on(object).copied().collect();
        for dep in owners {
            let other = dep.referenced;
            if other.class == object.class && other.oid == object.oid && object.sub == 0 {
                continue;
            }
            if dep.deptype != DepType::Internal {
                continue;
            }
            if stack.is_empty() {
                // At the outermost level the drop is refused, unless the
                // owner is being dropped by the same statement.
                if self.pending.iter().any(|p| p.covers(other)) {
                    return Ok(());
                }
                owning.get_or_insert(other);
                continue;
            }
            // Reached from the owner (or from something it is part of).
            if stack_present_add_flags(other, 0, stack) {
                continue;
            }
            // Drop the owner instead; this object goes with it.
            self.find(d, other, REVERSE, stack)?;
            if !self.present_add_flags(object, objflags) {
                return Err(PgError::internal(format!(
                    "deletion of owning object {} failed to delete {}",
                    self.describe(d, other),
                    self.describe(d, object)
                )));
            }
            return Ok(());
        }
        if let Some(owner) = owning {
            let owner_text = self.describe(d, owner);
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop {} because {} requires it", self.describe(d, object), owner_text),
            )
            .with_hint(format!("You can drop {owner_text} instead.")));
        }
        // What depends on this object, newest first, goes before it.
        let mut dependents: Vec<(ObjectAddress, u32)> = self
            .deps
            .dependents(object)
            .filter(|dep| !(dep.object.class == object.class && dep.object.oid == object.oid && object.sub == 0))
            .map(|dep| {
                let flags = match dep.deptype {
                    DepType::Normal => NORMAL,
                    DepType::Auto => AUTO,
                    DepType::Internal => INTERNAL,
                };
                (dep.object, flags)
            })
            .collect();
        dependents.sort_by(|a, b| a.0.deletion_order(&b.0));
        stack.push((object, objflags));
        for (o, f) in dependents {
            if let Err(e) = self.find(d, o, f, stack) {
                stack.pop();
                return Err(e);
            }
        }
        let (_, flags) = stack.pop().expect("pushed above");
        let dependee = stack.last().map(|(o, _)| *o);
        self.found.entry((object.class, object.oid)).or_default().push(self.targets.len());
        self.targets.push(Target { object, flags, dependee });
        Ok(())
    }

    /// reportDependentObjects: fails a RESTRICT drop that would take other
    /// objects along; reports those a CASCADE drop takes.
    fn report(&self, d: &Ddl, cascade: bool, original: Option<ObjectAddress>) -> PgResult<()> {
        let mut ok = true;
        let mut lines: Vec<String> = Vec::new();
        let mut not_reported = 0usize;
        // Dependency order, not deletion order: easier to read.
        for t in self.targets.iter().rev() {
            if t.flags & (ORIGINAL | SUBOBJECT) != 0 {
                continue;
            }
            // Reached through AUTO or INTERNAL dependencies at some point:
            // these go even under RESTRICT, and are not reported.
            if t.flags & (AUTO | INTERNAL) != 0 {
                continue;
            }
            let text = self.describe(d, t.object);
            if !cascade {
                let dependee = t.dependee.map(|o| self.describe(d, o)).unwrap_or_default();
                if lines.len() < MAX_REPORTED {
                    lines.push(format!("{text} depends on {dependee}"));
                } else {
                    not_reported += 1;
                }
                ok = false;
            } else if lines.len() < MAX_REPORTED {
                lines.push(format!("drop cascades to {text}"));
            } else {
                not_reported += 1;
            }
        }
        let mut detail = lines.join("\n");
        if not_reported > 0 {
            detail.push_str(&format!(
                "\nand {not_reported} other object{} (see server log for list)",
                if not_reported == 1 { "" } else { "s" }
            ));
        }
        if !ok {
            let message = match original {
                Some(o) => format!("cannot drop {} because other objects depend on it", self.describe(d, o)),
                None => "cannot drop desired object(s) because other objects depend on them".to_string(),
            };
            return Err(PgError::new(sqlstate::DEPENDENT_OBJECTS_STILL_EXIST, message)
                .with_detail(detail)
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let total = lines.len() + not_reported;
        if total > 1 {
            let mut e = PgError::notice(format!("drop cascades to {total} other objects"));
            e.detail = Some(detail);
            d.s.notices.borrow_mut().push(e);
        } else if total == 1 {
            super::notice(d.s, detail);
        }
        Ok(())
    }
}

/// getObjectDescription, with relations named as this session sees them
/// (schema-qualified when the search path does not find them).
pub(crate) fn describe_object(d: &Ddl, catalog: &DbCatalog, object: ObjectAddress) -> String {
    let cluster = d.s.cluster_catalog();
    let settings = d.s.settings.borrow();
    let a = d.s.analyzer(catalog, &settings, &[], "");
    let name = |r: &Relation| {
        let visible = a.lookup_relation(None, &r.name).is_some_and(|found| found.oid == r.oid);
        if visible {
            crate::functions::quote_ident(&r.name)
        } else {
            format!("{}.{}", crate::functions::quote_ident(catalog.namespace_name(r.namespace)), crate::functions::quote_ident(&r.name))
        }
    };
    describe(catalog, Some(&cluster), object, &name, &a.search_path()).unwrap_or_else(|| format!("object {} of class {}", object.oid, object.class))
}

/// performDeletion / performMultipleDeletions: drops `objects` and, with
/// `cascade`, what depends on them. The session's catalog is reloaded
/// afterwards.
pub(crate) fn perform_deletion(d: &Ddl, objects: &[ObjectAddress], cascade: bool) -> PgResult<()> {
    if objects.is_empty() {
        return Ok(());
    }
    let catalog = d.catalog.clone();
    let mut deletion = Deletion::new(&catalog, if objects.len() > 1 { objects.to_vec() } else { Vec::new() });
    for &o in objects {
        let mut stack = Stack::new();
        deletion.find(d, o, ORIGINAL, &mut stack)?;
    }
    let original = (objects.len() == 1).then(|| objects[0]);
    deletion.report(d, cascade, original)?;
    let order: Vec<ObjectAddress> = deletion.targets.iter().map(|t| t.object).collect();
    delete_objects(d, &catalog, &order)
}

/// What deleting the targets does to the stored catalog.
#[derive(Default)]
struct Changes {
    relations: BTreeSet<Oid>,
    namespaces: Vec<Oid>,
    columns: BTreeSet<(Oid, i16)>,
    constraints: BTreeSet<Oid>,
    triggers: BTreeSet<Oid>,
    defaults: BTreeSet<(Oid, i16)>,
    comments: Vec<(Oid, Oid, Option<i32>)>,
    publications: BTreeSet<Oid>,
    /// pg_publication_rel and pg_publication_namespace rows, by their OIDs.
    publication_members: BTreeSet<Oid>,
    /// Foreign-data wrappers, servers and user mappings.
    foreign: Vec<ObjectAddress>,
    /// Routines (aggregates among them), operators and casts.
    functions: BTreeSet<Oid>,
    operators: BTreeSet<Oid>,
    casts: BTreeSet<Oid>,
}

/// deleteOneObject for each target, in order, then writes the result.
fn delete_objects(d: &Ddl, catalog: &Arc<DbCatalog>, order: &[ObjectAddress]) -> PgResult<()> {
    let mut ch = Changes::default();
    for &o in order {
        match o.class {
            PG_CLASS if o.sub == 0 => {
                ch.relations.insert(o.oid);
                ch.comments.push((PG_CLASS, o.oid, None));
            }
            PG_CLASS => {
                ch.columns.insert((o.oid, o.sub as i16));
                ch.comments.push((PG_CLASS, o.oid, Some(o.sub)));
            }
            PG_CONSTRAINT => {
                ch.constraints.insert(o.oid);
                ch.comments.push((PG_CONSTRAINT, o.oid, None));
            }
            PG_ATTRDEF => {
                if let Some(col) = attrdef_column(catalog, o.oid) {
                    ch.defaults.insert(col);
                }
            }
            // A view's rule goes with the view.
            PG_REWRITE => {}
            PG_TRIGGER => {
                ch.triggers.insert(o.oid);
                ch.comments.push((PG_TRIGGER, o.oid, None));
            }
            // Row and array types are derived from their relations; a
            // composite type's relation is deleted as its internal part.
            PG_TYPE => {
                if catalog.stored_types.iter().any(|t| t.oid == o.oid) {
                    store::delete_type(d.s.txn()?, d.s.db, o.oid)?;
                    if let Some(t) = catalog.user_types.get(o.oid) {
                        store::release_name(d.s.txn()?, d.s.db, t.namespace, &t.info.name)?;
                    }
                    // A range type's multirange type is named with it.
                    if let Some(crate::catalog::types::UserTypeKind::Range(r)) = catalog.user_types.get(o.oid).map(|t| &t.kind) {
                        store::release_name(d.s.txn()?, d.s.db, r.multirange_namespace, &r.multirange_name)?;
                    }
                }
                ch.comments.push((PG_TYPE, o.oid, None));
            }
            PG_NAMESPACE => {
                ch.namespaces.push(o.oid);
                ch.comments.push((PG_NAMESPACE, o.oid, None));
            }
            PG_PUBLICATION => {
                ch.publications.insert(o.oid);
                ch.comments.push((PG_PUBLICATION, o.oid, None));
            }
            PG_PUBLICATION_REL | PG_PUBLICATION_NAMESPACE => {
                ch.publication_members.insert(o.oid);
            }
            foreign::PG_FOREIGN_DATA_WRAPPER | foreign::PG_FOREIGN_SERVER | foreign::PG_USER_MAPPING => {
                ch.foreign.push(o);
                ch.comments.push((o.class, o.oid, None));
            }
            PG_PROC_CLASS => {
                ch.functions.insert(o.oid);
                ch.comments.push((PG_PROC_CLASS, o.oid, None));
            }
            opcat::PG_OPERATOR => {
                ch.operators.insert(o.oid);
                ch.comments.push((opcat::PG_OPERATOR, o.oid, None));
            }
            opcat::PG_CAST => {
                ch.casts.insert(o.oid);
                ch.comments.push((opcat::PG_CAST, o.oid, None));
            }
            _ => return Err(PgError::internal(format!("cannot delete objects of class {}", o.class))),
        }
    }
    // Tables that change or go are locked first, in one order (the
    // relations are known from the snapshot the walk read).
    let mut touched: BTreeSet<Oid> = ch.relations.clone();
    touched.extend(ch.columns.iter().map(|c| c.0));
    touched.extend(ch.defaults.iter().map(|c| c.0));
    for &c in &ch.constraints {
        if let Some((t, _)) = constraint_by_oid(catalog, c) {
            touched.insert(t.oid);
        }
    }
    for &t in &ch.triggers {
        if let Some((r, _)) = trigger_by_oid(catalog, t) {
            touched.insert(r.oid);
        }
    }
    for &rel in &touched {
        if catalog.relations.contains_key(&rel) {
            d.lock_relation(rel)?;
        }
    }
    // A table keeps its rows in its primary key's order: losing the key
    // (with the table staying) moves them to hidden row ids first.
    let mut catalog = catalog.clone();
    let mut reclustered = false;
    for &c in &ch.constraints {
        let Some((t, con)) = constraint_by_oid(&catalog, c) else { continue };
        if ch.relations.contains(&t.oid) || con.kind != ConstraintKind::PrimaryKey {
            continue;
        }
        let clustered = catalog.relation(con.index).and_then(|i| i.index.as_ref()).is_some_and(|i| i.clustered);
        if clustered {
            let t = t.clone();
            super::ddl::decluster(d, &t)?;
            reclustered = true;
        }
    }
    if reclustered {
        catalog = Arc::new(store::load_database(d.s.txn()?, d.s.db)?);
    }
    let txn = d.s.txn()?;
    let db = d.s.db;
    // Changed tables, each written once.
    let mut changed: BTreeMap<Oid, Relation> = BTreeMap::new();
    let table = |oid: Oid, changed: &mut BTreeMap<Oid, Relation>| -> Option<()> {
        if !changed.contains_key(&oid) && !ch.relations.contains(&oid) {
            changed.insert(oid, (**catalog.relations.get(&oid)?).clone());
        }
        Some(())
    };
    for &c in &ch.constraints {
        let Some((t, _)) = constraint_by_oid(&catalog, c) else { continue };
        let t = t.oid;
        if table(t, &mut changed).is_some() {
            if let Some(r) = changed.get_mut(&t) {
                r.constraints.retain(|k| k.oid != c);
            }
        }
    }
    for &c in &ch.triggers {
        let Some((t, _)) = trigger_by_oid(&catalog, c) else { continue };
        let t = t.oid;
        if table(t, &mut changed).is_some() {
            if let Some(r) = changed.get_mut(&t) {
                r.triggers.retain(|k| k.oid != c);
            }
        }
    }
    // A dropped child leaves its parents' lists of children
    // (RemoveInheritance; pg_inherits rows are derived from these lists).
    for &oid in &ch.relations {
        let Some(r) = catalog.relations.get(&oid) else { continue };
        for &parent in &r.inherits {
            if table(parent, &mut changed).is_some() {
                if let Some(p) = changed.get_mut(&parent) {
                    p.children.retain(|&c| c != oid);
                }
            }
        }
    }
    for &(t, attnum) in &ch.defaults {
        if table(t, &mut changed).is_some() {
            if let Some(col) = changed.get_mut(&t).and_then(|r| r.columns.get_mut(attnum as usize - 1)) {
                col.default = None;
            }
        }
    }
    for &(t, attnum) in &ch.columns {
        if table(t, &mut changed).is_some() {
            if let Some(col) = changed.get_mut(&t).and_then(|r| r.columns.get_mut(attnum as usize - 1)) {
                // RemoveAttributeById: the column stays as a dropped slot,
                // so attribute numbers are not reused.
                col.dropped = true;
                col.name = format!("........pg.dropped.{attnum}........");
                col.not_null = false;
                col.default = None;
                col.identity = ' ';
                col.missing = None;
            }
        }
    }
    for r in changed.values() {
        store::put_relation(txn, db, r)?;
    }
    for &oid in &ch.relations {
        let Some(r) = catalog.relations.get(&oid) else { continue };
        store::delete_relation(txn, db, r)?;
        // A clustered index's storage is its table's.
        let shares_table_storage = r.index.as_ref().is_some_and(|i| i.clustered);
        if r.storage_id != 0 && !shares_table_storage {
            d.s.note_drop(r.storage_id);
        }
        if r.kind == RelKind::Sequence {
            d.s.note_sequence_drop(r.oid);
        }
    }
    for &nsp in &ch.namespaces {
        let Some(ns) = catalog.namespaces.get(&nsp) else { continue };
        txn.delete(&store::namespace_key(db, nsp))?;
        store::release_name(txn, db, 0, &ns.name)?;
    }
    // Publications that go, and those that lose members.
    for p in catalog.publications.values() {
        if ch.publications.contains(&p.oid) {
            store::delete_publication(txn, db, p.oid)?;
            continue;
        }
        let gone = |oid: &Oid| ch.publication_members.contains(oid);
        if p.tables.iter().any(|t| gone(&t.oid)) || p.schemas.iter().any(|n| gone(&n.oid)) {
            let mut p = p.clone();
            p.tables.retain(|t| !gone(&t.oid));
            p.schemas.retain(|n| !gone(&n.oid));
            store::put_publication(txn, db, &p)?;
        }
    }
    for o in &ch.foreign {
        foreign::delete(txn, db, o.class, o.oid)?;
    }
    // RemoveFunctionById (and its aggregate row), RemoveOperatorById
    // (which unlinks the commutator and negator pointing at it),
    // DropCastById.
    for &f in &ch.functions {
        let Some(func) = catalog.functions.get(&f) else { continue };
        txn.get_for_update(&store::function_name_key(db, func.namespace, &func.name))?;
        store::delete_function(txn, db, f)?;
        if catalog.user_ops.aggregates.contains_key(&f) {
            opcat::delete(txn, db, opcat::PG_AGGREGATE, f)?;
        }
    }
    for o in catalog.user_ops.operators.values().filter(|o| !ch.operators.contains(&o.oid)) {
        if ch.operators.contains(&o.commutator) || ch.operators.contains(&o.negator) {
            let mut o = o.clone();
            if ch.operators.contains(&o.commutator) {
                o.commutator = 0;
            }
            if ch.operators.contains(&o.negator) {
                o.negator = 0;
            }
            opcat::put_operator(txn, db, &o)?;
        }
    }
    for &o in &ch.operators {
        opcat::delete(txn, db, opcat::PG_OPERATOR, o)?;
    }
    for &c in &ch.casts {
        opcat::delete(txn, db, opcat::PG_CAST, c)?;
    }
    // DeleteComments: of the object and, for a whole object, its parts.
    for &(class, obj, sub) in &ch.comments {
        for &(c, o, s) in catalog.comments.keys() {
            if c == class && o == obj && sub.map_or(true, |x| x == s) {
                store::put_comment(txn, db, c, o, s, None)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- views

/// What a view's query reads, as its _RETURN rule's pg_depend rows record
/// it (find_expr_references_walker over the rule's query): each column read,
/// and each relation read without any of its columns. A view the query
/// reads counts as a relation; what that view reads is its own rule's
/// business.
pub(crate) fn view_references(q: &Query) -> PgResult<ViewReferences> {
    let mut c = References::default();
    c.query(q)?;
    let mut columns: Vec<(Oid, i16)> = c.relations.iter().filter(|r| !c.columns.iter().any(|(t, _)| t == *r)).map(|&r| (r, 0)).collect();
    columns.extend(c.columns.iter().copied());
    columns.sort_unstable();
    Ok(ViewReferences { columns, constraints: c.constraints.into_iter().collect(), functions: c.functions.into_iter().collect() })
}

/// What expressions of one of a function's SQL-standard body statements,
/// or a parameter default, refer to: (relation, attnum) as in
/// `view_references`, and the user-defined functions they call.
pub(crate) fn query_references(q: &Query, into: &mut ViewReferences) -> PgResult<()> {
    let mut c = References::default();
    c.query(q)?;
    merge_references(c, into);
    Ok(())
}

fn merge_references(c: References, into: &mut ViewReferences) {
    for &r in &c.relations {
        if !c.columns.iter().any(|(t, _)| *t == r) && !into.columns.contains(&(r, 0)) {
            into.columns.push((r, 0));
        }
    }
    for col in c.columns {
        if !into.columns.contains(&col) {
            into.columns.push(col);
        }
    }
    into.columns.sort_unstable();
    for f in c.functions {
        if !into.functions.contains(&f) {
            into.functions.push(f);
        }
    }
}

/// What `view_references` found.
#[derive(Default)]
pub(crate) struct ViewReferences {
    /// (relation, attnum), attnum 0 for a relation read as a whole
    /// (also a sequence or table named by a regclass constant, as
    /// `nextval('s')` names it).
    pub columns: Vec<(Oid, i16)>,
    /// Primary keys whose grouping lets the query read other columns.
    pub constraints: Vec<Oid>,
    /// User-defined functions, aggregates and operators' functions called.
    pub functions: Vec<Oid>,
}

/// Whether `e` reads a column of range table entry `rte` outside the
/// grouping expressions and aggregates (check_ungrouped_columns).
fn reads_ungrouped(e: &Expr, groups: &[Expr], rte: usize) -> PgResult<bool> {
    crate::stack::check()?;
    if groups.iter().any(|g| g == e) {
        return Ok(false);
    }
    match e {
        Expr::Agg(_) => Ok(false),
        Expr::Var(v) => Ok(v.levels_up == 0 && v.rte == rte),
        _ => {
            let mut found = Ok(false);
            e.for_each_child(&mut |c| {
                if matches!(found, Ok(false)) {
                    found = reads_ungrouped(c, groups, rte);
                }
            });
            found
        }
    }
}

/// How Vars of one range table entry map to catalog columns.
enum RteColumns {
    /// A table or sequence: attribute numbers of its live columns.
    Relation(Oid, Vec<i16>),
    /// An expanded view: its columns, in order.
    View(Oid),
    /// A join: its columns as expressions over its inputs.
    Join(Vec<Expr>),
    Other,
}

#[derive(Default)]
struct References {
    relations: BTreeSet<Oid>,
    columns: BTreeSet<(Oid, i16)>,
    constraints: BTreeSet<Oid>,
    /// Functions called (built-in ones too; pinned ones are dropped when
    /// the rows are derived).
    functions: BTreeSet<Oid>,
    /// The range tables of the queries being walked, outermost first.
    levels: Vec<Vec<RteColumns>>,
}

impl References {
    fn query(&mut self, q: &Query) -> PgResult<()> {
        crate::stack::check()?;
        let mut rtes = Vec::with_capacity(q.rtable.len());
        for rte in &q.rtable {
            rtes.push(match &rte.kind {
                RteKind::Relation(r) => {
                    self.relations.insert(r.oid);
                    RteColumns::Relation(r.oid, r.live_columns().map(|(a, _)| a).collect())
                }
                RteKind::Subquery(sq) => match sq.expanded_view {
                    Some(v) => {
                        self.relations.insert(v);
                        RteColumns::View(v)
                    }
                    None => RteColumns::Other,
                },
                RteKind::Join { columns, .. } => RteColumns::Join(columns.clone()),
                _ => RteColumns::Other,
            });
        }
        // A grouped primary key lets the query read the table's other
        // columns ungrouped: the query then depends on the key.
        if !q.group_by.is_empty() {
            for (i, rte) in q.rtable.iter().enumerate() {
                let RteKind::Relation(rel) = &rte.kind else { continue };
                let Some(pk) = rel.primary_key() else { continue };
                let live: Vec<i16> = rel.live_columns().map(|(a, _)| a).collect();
                let grouped = pk.columns.iter().all(|a| {
                    live.iter().position(|x| x == a).is_some_and(|c| {
                        q.group_by.iter().any(|g| matches!(g, Expr::Var(v) if v.levels_up == 0 && v.rte == i && v.col == c))
                    })
                });
                if !grouped {
                    continue;
                }
                let mut relies = false;
                for e in q.targets.iter().map(|t| &t.expr).chain(q.having.iter()) {
                    if reads_ungrouped(e, &q.group_by, i)? {
                        relies = true;
                        break;
                    }
                }
                if relies {
                    self.constraints.insert(pk.oid);
                }
            }
        }
        self.levels.push(rtes);
        let result = self.query_parts(q);
        self.levels.pop();
        result
    }

    fn query_parts(&mut self, q: &Query) -> PgResult<()> {
        for rte in &q.rtable {
            match &rte.kind {
                RteKind::Subquery(sq) if sq.expanded_view.is_none() => self.query(sq)?,
                RteKind::Values(rows) => {
                    for e in rows.iter().flatten() {
                        self.expr(e)?;
                    }
                }
                RteKind::Function { call, .. } => self.expr(call)?,
                _ => {}
            }
        }
        for c in &q.ctes {
            self.query(&c.query)?;
            if let Some((a, b, _)) = &c.recursive_parts {
                self.query(a)?;
                self.query(b)?;
            }
        }
        for f in &q.from {
            self.from_item(f)?;
        }
        let exprs = q
            .targets
            .iter()
            .map(|t| &t.expr)
            .chain(q.returning.iter().map(|t| &t.expr))
            .chain(q.quals.iter())
            .chain(q.group_by.iter())
            .chain(q.having.iter())
            .chain(q.limit.iter())
            .chain(q.offset.iter())
            .chain(q.update_set.iter().map(|(_, e)| e));
        for e in exprs {
            self.expr(e)?;
        }
        if let Some(ins) = &q.insert {
            self.query(&ins.source)?;
        }
        Ok(())
    }

    fn from_item(&mut self, f: &FromItem) -> PgResult<()> {
        crate::stack::check()?;
        if let FromItem::Join { left, right, quals, .. } = f {
            self.from_item(left)?;
            self.from_item(right)?;
            if let Some(q) = quals {
                self.expr(q)?;
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> PgResult<()> {
        let level = self.levels.len() - 1;
        self.expr_at(e, level)
    }

    /// Collects what `e`, an expression of the query at `level`, reads.
    fn expr_at(&mut self, e: &Expr, level: usize) -> PgResult<()> {
        crate::stack::check()?;
        let mut vars: Vec<Var> = Vec::new();
        let mut sublinks: Vec<Query> = Vec::new();
        let functions = &mut self.functions;
        let relations = &mut self.relations;
        e.walk(&mut |x| match x {
            Expr::Var(v) => vars.push(v.clone()),
            Expr::SubLink { query, .. } => sublinks.push((**query).clone()),
            Expr::Func { func, .. } => {
                functions.insert(func.oid);
            }
            Expr::Agg(a) => {
                functions.insert(a.oid);
            }
            // find_expr_references_walker: a regclass constant names a
            // relation (`nextval('s')`).
            Expr::Const(tusk_types::Datum::Oid(o), t) if t.oid == tusk_types::oid::REGCLASS => {
                relations.insert(*o);
            }
            _ => {}
        });
        for v in &vars {
            self.var(v, level)?;
        }
        for q in &sublinks {
            self.query(q)?;
        }
        Ok(())
    }

    fn var(&mut self, v: &Var, level: usize) -> PgResult<()> {
        let Some(at) = level.checked_sub(v.levels_up as usize) else { return Ok(()) };
        let Some(rte) = self.levels.get(at).and_then(|l| l.get(v.rte)) else { return Ok(()) };
        match rte {
            RteColumns::Relation(oid, attnums) => {
                if let Some(&a) = attnums.get(v.col) {
                    self.columns.insert((*oid, a));
                }
            }
            RteColumns::View(oid) => {
                self.columns.insert((*oid, v.col as i16 + 1));
            }
            RteColumns::Join(columns) => {
                // A join column reads the input column(s) it stands for.
                if let Some(e) = columns.get(v.col).cloned() {
                    self.expr_at(&e, at)?;
                }
            }
            RteColumns::Other => {}
        }
        Ok(())
    }
}
