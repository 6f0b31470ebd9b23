//! Table inheritance (PostgreSQL's `INHERITS`): how a table takes its
//! parents' columns and CHECK constraints, and how ALTER TABLE on a parent
//! reaches the tables inheriting from it (tablecmds.c's MergeAttributes,
//! MergeWithExistingConstraint, ATSimpleRecursion and their relatives).
//!
//! A child keeps its parents' OIDs (`Relation::inherits`, pg_inherits);
//! each inherited column and constraint counts the parents it comes from
//! (`inhcount`) and whether the child defines it too (`is_local`), which
//! decides what ALTER TABLE may drop, rename or retype where. Queries over
//! a parent read its whole tree (the planner's inheritance expansion);
//! indexes, primary keys, unique and foreign keys are per table, as in
//! PostgreSQL. Declarative partitions will be inheritance children with
//! bounds, as they are in PostgreSQL.

use std::sync::Arc;

use pg_query::protobuf as pb;
use tusk_types::{sqlstate, Oid, PgError, PgResult};

use super::ddl::{self, Ddl};
use super::notice;
use crate::analyzer::types::format_type;
use crate::catalog::store;
use crate::catalog::*;

fn type_text(c: &Column) -> String {
    format_type(builtins(), c.type_oid, c.typmod)
}

/// The parents a CREATE TABLE names, with PostgreSQL's checks.
pub(crate) fn resolve_parents(d: &Ddl, stmt: &pb::CreateStmt, persistence: char) -> PgResult<Vec<Arc<Relation>>> {
    let mut parents: Vec<Arc<Relation>> = Vec::new();
    for node in &stmt.inh_relations {
        let Some(pg_query::NodeEnum::RangeVar(rv)) = &node.node else { continue };
        let parent = d.lookup(rv)?;
        if parent.kind != RelKind::Table {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("inherited relation \"{}\" is not a table or foreign table", rv.relname),
            ));
        }
        if crate::catalog::system::is_system(&parent) {
            return Err(PgError::unsupported("inheriting from a system catalog"));
        }
        if persistence != 't' && parent.persistence == 't' {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot inherit from temporary relation \"{}\"", rv.relname)));
        }
        super::grant::check_relation_owner(d.s, &parent)?;
        if parents.iter().any(|p| p.oid == parent.oid) {
            return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" would be inherited from more than once", rv.relname)));
        }
        parents.push(parent);
    }
    Ok(parents)
}

/// What merging the parents' columns left for the child's own definition
/// to settle.
pub(crate) struct InheritedColumns {
    /// How many of the new table's first columns came from parents.
    pub count: usize,
    /// Columns whose parents give different defaults: the child must give one.
    pub conflicting_defaults: Vec<usize>,
}

/// MergeAttributes, parents' part: the columns of every parent, left to
/// right, a name met again merged into its first appearance (same type
/// required, NOT NULL if any says so, a default only if they agree), then
/// their inheritable CHECK constraints, merged by name. They become the
/// first columns and constraints of `rel`.
pub(crate) fn inherit_columns(d: &Ddl, parents: &[Arc<Relation>], rel: &mut Relation) -> PgResult<InheritedColumns> {
    let mut conflicting_defaults = Vec::new();
    for parent in parents {
        for (_, pc) in parent.live_columns() {
            match rel.columns.iter().position(|c| c.name == pc.name) {
                Some(i) => {
                    notice(d.s, format!("merging multiple inherited definitions of column \"{}\"", pc.name));
                    let existing = &mut rel.columns[i];
                    if existing.type_oid != pc.type_oid || existing.typmod != pc.typmod {
                        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("inherited column \"{}\" has a type conflict", pc.name))
                            .with_detail(format!("{} versus {}", type_text(existing), type_text(pc))));
                    }
                    existing.inhcount += 1;
                    existing.not_null |= pc.not_null;
                    match (existing.stored_default().map(str::to_string), pc.stored_default()) {
                        (None, Some(def)) if !conflicting_defaults.contains(&i) => existing.default = Some(def.to_string()),
                        (Some(mine), Some(def)) if mine != def && !conflicting_defaults.contains(&i) => conflicting_defaults.push(i),
                        _ => {}
                    }
                }
                None => {
                    let mut c = pc.clone();
                    c.inhcount = 1;
                    c.is_local = false;
                    // Identity belongs to the parent's column and its sequence.
                    c.identity = ' ';
                    c.missing = None;
                    rel.columns.push(c);
                }
            }
        }
        for con in parent.constraints.iter().filter(|c| c.kind == ConstraintKind::Check && !c.no_inherit) {
            match rel.constraints.iter_mut().find(|c| c.name == con.name) {
                Some(existing) if existing.check == con.check => existing.inhcount += 1,
                Some(_) => {
                    return Err(PgError::new(
                        sqlstate::DUPLICATE_OBJECT,
                        format!("check constraint name \"{}\" appears multiple times but with different expressions", con.name),
                    ))
                }
                None => rel.constraints.push(Constraint {
                    oid: d.oid()?,
                    inhcount: 1,
                    is_local: false,
                    // The new table has no rows the constraint could fail on.
                    validated: true,
                    ..con.clone()
                }),
            }
        }
    }
    Ok(InheritedColumns { count: rel.columns.len(), conflicting_defaults })
}

/// MergeAttributes, child's part: a column the CREATE TABLE defines that a
/// parent defines too becomes one column, the child's own as well, at the
/// inherited column's place (`moved`: not the place it was written at).
pub(crate) fn merge_local_column(d: &Ddl, existing: &mut Column, local: &Column, moved: bool) -> PgResult<()> {
    if moved {
        let mut n = PgError::notice(format!("moving and merging column \"{}\" with inherited definition", local.name));
        n.detail = Some("User-specified column moved to the position of the inherited column.".into());
        d.s.notices.borrow_mut().push(n);
    } else {
        notice(d.s, format!("merging column \"{}\" with inherited definition", local.name));
    }
    if existing.type_oid != local.type_oid || existing.typmod != local.typmod {
        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("column \"{}\" has a type conflict", local.name))
            .with_detail(format!("{} versus {}", type_text(existing), type_text(local))));
    }
    existing.is_local = true;
    existing.not_null |= local.not_null;
    Ok(())
}

/// After the child's own definitions: inherited defaults that disagree
/// must have been overridden.
pub(crate) fn check_conflicting_defaults(rel: &Relation, inherited: &InheritedColumns, overridden: &[usize]) -> PgResult<()> {
    for &i in &inherited.conflicting_defaults {
        if !overridden.contains(&i) {
            return Err(PgError::new(
                sqlstate::INVALID_COLUMN_DEFINITION,
                format!("column \"{}\" inherits conflicting default values", rel.columns[i].name),
            )
            .with_hint("To resolve the conflict, specify a default explicitly."));
        }
    }
    Ok(())
}

/// How a CHECK constraint arrives at a table that may have one of that
/// name already: defined by the table itself (`local`), or inherited.
pub(crate) struct CheckArrival<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub local: bool,
    pub no_inherit: bool,
    /// Checked against the table's rows (not NOT VALID).
    pub valid: bool,
}

/// MergeWithExistingConstraint: whether `rel` already has the constraint
/// (then it is merged into that one, with PostgreSQL's NOTICE) or not;
/// an incompatible one of that name is an error.
pub(crate) fn merge_check(d: &Ddl, rel: &mut Relation, new: &CheckArrival) -> PgResult<bool> {
    let rel_name = rel.name.clone();
    let Some(con) = rel.constraints.iter_mut().find(|c| c.name == new.name) else { return Ok(false) };
    let same = con.kind == ConstraintKind::Check && con.check.as_deref() == Some(new.text);
    // A local definition may join a purely inherited one (ALTER TABLE ADD
    // CONSTRAINT on parent and child in either order ends the same).
    let allow_merge = !new.local || !con.is_local;
    if !same || !allow_merge {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!("constraint \"{}\" for relation \"{}\" already exists", new.name, rel_name),
        ));
    }
    if con.no_inherit {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("constraint \"{}\" conflicts with non-inherited constraint on relation \"{}\"", new.name, rel_name),
        ));
    }
    if con.inhcount > 0 && new.no_inherit {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("constraint \"{}\" conflicts with inherited constraint on relation \"{}\"", new.name, rel_name),
        ));
    }
    if new.valid && !con.validated {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("constraint \"{}\" conflicts with NOT VALID constraint on relation \"{}\"", new.name, rel_name),
        ));
    }
    notice(d.s, format!("merging constraint \"{}\" with inherited definition", new.name));
    if new.local {
        con.is_local = true;
    } else {
        con.inhcount += 1;
    }
    if new.no_inherit {
        con.no_inherit = true;
    }
    Ok(true)
}

// ---------------------------------------------------------------- ALTER TABLE

/// The DDL helper over the transaction's catalog as it is now (each step
/// of a recursive ALTER TABLE sees the previous steps' changes).
fn fresh<'s>(d: &Ddl<'s>) -> PgResult<Ddl<'s>> {
    let catalog = Arc::new(store::load_database(d.txn()?, d.db())?);
    Ok(Ddl { s: d.s, catalog, sql: d.sql })
}

fn relation(d: &Ddl, oid: Oid) -> PgResult<Arc<Relation>> {
    d.catalog.relation(oid).cloned().ok_or_else(|| PgError::internal(format!("relation {oid} vanished")))
}

fn invalid_definition(message: String) -> PgError {
    PgError::new(sqlstate::INVALID_TABLE_DEFINITION, message)
}

/// One ALTER TABLE subcommand on `rel`, reaching the tables that inherit
/// from it as PostgreSQL's does (`recurse`: the table was not named with
/// ONLY). Subcommands that inheritance does not concern go to `rel` alone.
pub(crate) fn alter(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool) -> PgResult<()> {
    match c.subtype {
        1 | 2 => add_column(d, rel, c, objtype, recurse),
        15 | 16 => drop_column(d, rel, c, objtype, recurse, false),
        30 => alter_column_type(d, rel, c, objtype, recurse),
        // SET/DROP DEFAULT, SET/DROP NOT NULL: the same on every descendant.
        4 | 6 | 7 => {
            ddl::alter_table_cmd(d, rel, c, objtype)?;
            if recurse {
                for oid in d.catalog.inheritance_tree(rel.oid).into_iter().skip(1) {
                    let d = fresh(d)?;
                    d.lock_relation(oid)?;
                    let child = relation(&d, oid)?;
                    ddl::alter_table_cmd(&d, &child, c, objtype)?;
                }
            }
            Ok(())
        }
        19 | 20 => add_constraint(d, rel, c, objtype, recurse),
        24 | 25 => {
            ddl::alter_table_cmd(d, rel, c, objtype)?;
            if recurse {
                for oid in d.catalog.inheritance_tree(rel.oid).into_iter().skip(1) {
                    let d = fresh(d)?;
                    let child = relation(&d, oid)?;
                    if child.constraints.iter().any(|k| k.name == c.name && k.kind == ConstraintKind::Check) {
                        d.lock_relation(oid)?;
                        ddl::alter_table_cmd(&d, &child, c, objtype)?;
                    }
                }
            }
            Ok(())
        }
        27 | 28 => drop_constraint(d, rel, c, objtype, recurse, false),
        55 => add_inherit(d, rel, c),
        56 => drop_inherit(d, rel, c),
        _ => ddl::alter_table_cmd(d, rel, c, objtype),
    }
}

/// ADD COLUMN: the column is added to every table inheriting from `rel`,
/// or merged into a child's own column of that name (which must have the
/// same type); CHECK constraints that came with it follow as ADD
/// CONSTRAINT does. (ATExecAddColumn)
fn add_column(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool) -> PgResult<()> {
    let Some(pg_query::NodeEnum::ColumnDef(cd)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    };
    let had_column = rel.column_by_name(&cd.colname).is_some();
    if !recurse && !rel.children.is_empty() && !had_column {
        return Err(invalid_definition("column must be added to child tables too".into()));
    }
    let before: Vec<Oid> = rel.constraints.iter().map(|k| k.oid).collect();
    ddl::alter_table_cmd(d, rel, c, objtype)?;
    if had_column {
        // ADD COLUMN IF NOT EXISTS that found it.
        return Ok(());
    }
    let d1 = fresh(d)?;
    let parent = relation(&d1, rel.oid)?;
    let Some((_, column)) = parent.column_by_name(&cd.colname) else { return Ok(()) };
    let column = column.clone();
    // Children get the column with its type, default and NOT NULL; its
    // constraints reach them as the parent's.
    let mut child_cmd = c.clone();
    let mut child_def = (**cd).clone();
    child_def.constraints.retain(|n| matches!(&n.node, Some(pg_query::NodeEnum::Constraint(k)) if matches!(k.contype, 1 | 2 | 3)));
    child_cmd.def = Some(Box::new(pb::Node { node: Some(pg_query::NodeEnum::ColumnDef(Box::new(child_def))) }));
    child_cmd.missing_ok = false;
    for &child in &parent.children {
        add_column_to_child(d, child, &child_cmd, &column, objtype)?;
    }
    let new_checks: Vec<Constraint> =
        parent.constraints.iter().filter(|k| !before.contains(&k.oid) && k.kind == ConstraintKind::Check && !k.no_inherit).cloned().collect();
    for con in &new_checks {
        for &child in &parent.children {
            add_inherited_check(d, child, con)?;
        }
    }
    Ok(())
}

fn add_column_to_child(d: &Ddl, child: Oid, cmd: &pb::AlterTableCmd, column: &Column, objtype: i32) -> PgResult<()> {
    let d = fresh(d)?;
    d.lock_relation(child)?;
    let rel = relation(&d, child)?;
    if let Some((attnum, existing)) = rel.column_by_name(&column.name) {
        if existing.type_oid != column.type_oid || existing.typmod != column.typmod {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("child table \"{}\" has different type for column \"{}\"", rel.name, column.name),
            ));
        }
        notice(d.s, format!("merging definition of column \"{}\" for child \"{}\"", column.name, rel.name));
        let mut t = (*rel).clone();
        t.columns[attnum as usize - 1].inhcount += 1;
        return d.put(&t);
    }
    ddl::alter_table_cmd(&d, &rel, cmd, objtype)?;
    let d = fresh(&d)?;
    let mut t = (*relation(&d, child)?).clone();
    if let Some(col) = t.columns.iter_mut().rev().find(|x| !x.dropped && x.name == column.name) {
        col.is_local = false;
        col.inhcount = 1;
    }
    d.put(&t)?;
    for &grandchild in &t.children {
        add_column_to_child(&d, grandchild, cmd, column, objtype)?;
    }
    Ok(())
}

/// DROP COLUMN: an inherited column can only go with its parent's. A child
/// column that has no other reason to exist (inherited from this parent
/// alone, not defined by the child itself) goes too; any other stays,
/// inherited from one parent fewer (and, with ONLY, now the child's own).
/// (ATExecDropColumn)
fn drop_column(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool, recursing: bool) -> PgResult<()> {
    let Some((_, col)) = rel.column_by_name(&c.name) else {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    };
    if col.inhcount > 0 && !recursing {
        return Err(invalid_definition(format!("cannot drop inherited column \"{}\"", c.name)));
    }
    for &child in &rel.children {
        let dc = fresh(d)?;
        dc.lock_relation(child)?;
        let crel = relation(&dc, child)?;
        let Some((attnum, ccol)) = crel.column_by_name(&c.name) else { continue };
        if recurse && ccol.inhcount == 1 && !ccol.is_local {
            drop_column(&dc, &crel, c, objtype, true, true)?;
            continue;
        }
        let mut t = (*crel).clone();
        let col = &mut t.columns[attnum as usize - 1];
        col.inhcount -= 1;
        if !recurse {
            col.is_local = true;
        }
        dc.put(&t)?;
    }
    let d = fresh(d)?;
    let rel = relation(&d, rel.oid)?;
    ddl::alter_table_cmd(&d, &rel, c, objtype)
}

/// ALTER COLUMN TYPE: on the whole tree at once, and only from the top:
/// a column also inherited from outside the tree cannot change.
/// (ATPrepAlterColumnType)
fn alter_column_type(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool) -> PgResult<()> {
    let Some((_, col)) = rel.column_by_name(&c.name) else {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    };
    if col.inhcount > 0 {
        return Err(invalid_definition(format!("cannot alter inherited column \"{}\"", c.name)));
    }
    let tree = d.catalog.inheritance_tree(rel.oid);
    if !recurse && tree.len() > 1 {
        return Err(invalid_definition(format!("type of inherited column \"{}\" must be changed in child tables too", c.name)));
    }
    let tree = if recurse { tree } else { vec![rel.oid] };
    for &oid in tree.iter().skip(1) {
        let child = relation(d, oid)?;
        let parents_in_tree = child.inherits.iter().filter(|p| tree.contains(p)).count() as i32;
        if let Some((_, ccol)) = child.column_by_name(&c.name) {
            if ccol.inhcount > parents_in_tree {
                return Err(invalid_definition(format!("cannot alter inherited column \"{}\" of relation \"{}\"", c.name, child.name)));
            }
        }
    }
    ddl::alter_table_cmd(d, rel, c, objtype)?;
    for &oid in tree.iter().skip(1) {
        let d = fresh(d)?;
        d.lock_relation(oid)?;
        let child = relation(&d, oid)?;
        ddl::alter_table_cmd(&d, &child, c, objtype)?;
    }
    Ok(())
}

/// ADD CONSTRAINT: a CHECK constraint (unless NO INHERIT) reaches every
/// table inheriting from `rel`, merged into a child's equal one of that
/// name; other kinds are the table's alone, as in PostgreSQL.
/// (ATAddCheckConstraint)
fn add_constraint(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool) -> PgResult<()> {
    let Some(pg_query::NodeEnum::Constraint(con)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    };
    if con.contype != 6 {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    }
    if !recurse && !rel.children.is_empty() && !con.is_no_inherit {
        return Err(invalid_definition("constraint must be added to child tables too".into()));
    }
    let before: Vec<(Oid, bool, i32)> = rel.constraints.iter().map(|k| (k.oid, k.is_local, k.inhcount)).collect();
    ddl::alter_table_cmd(d, rel, c, objtype)?;
    if con.is_no_inherit {
        return Ok(());
    }
    let d1 = fresh(d)?;
    let parent = relation(&d1, rel.oid)?;
    // The constraint added, or the inherited one it merged into (whose
    // children have it already).
    let Some(added) = parent.constraints.iter().find(|k| !before.iter().any(|(oid, ..)| *oid == k.oid)) else { return Ok(()) };
    for &child in &parent.children {
        add_inherited_check(d, child, added)?;
    }
    Ok(())
}

/// A parent's CHECK constraint arriving at table `child`: merged into one
/// of that name, or added (checked against the child's rows) and passed
/// on to the child's own children.
pub(crate) fn add_inherited_check(d: &Ddl, child: Oid, con: &Constraint) -> PgResult<()> {
    let d = fresh(d)?;
    d.lock_relation(child)?;
    let rel = relation(&d, child)?;
    let mut t = (*rel).clone();
    let text = con.check.clone().unwrap_or_default();
    let arrival = CheckArrival { name: &con.name, text: &text, local: false, no_inherit: false, valid: con.validated };
    if merge_check(&d, &mut t, &arrival)? {
        return d.put(&t);
    }
    let copy = Constraint { oid: d.oid()?, inhcount: 1, is_local: false, no_inherit: false, ..con.clone() };
    t.constraints.push(copy.clone());
    d.put(&t)?;
    if copy.validated {
        ddl::check_existing_rows(&d, child, &[&copy])?;
    }
    for &grandchild in &t.children {
        add_inherited_check(&d, grandchild, &copy)?;
    }
    Ok(())
}

/// DROP CONSTRAINT: an inherited constraint goes only with its parent's;
/// a child's copy that has no other reason to exist goes too, any other
/// stays with one parent fewer (with ONLY: as the child's own).
/// (ATExecDropConstraint)
fn drop_constraint(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd, objtype: i32, recurse: bool, recursing: bool) -> PgResult<()> {
    let Some(con) = rel.constraints.iter().find(|k| k.name == c.name) else {
        return ddl::alter_table_cmd(d, rel, c, objtype);
    };
    if con.inhcount > 0 && !recursing {
        return Err(invalid_definition(format!("cannot drop inherited constraint \"{}\" of relation \"{}\"", c.name, rel.name)));
    }
    if con.kind == ConstraintKind::Check && !con.no_inherit {
        for &child in &rel.children {
            let dc = fresh(d)?;
            dc.lock_relation(child)?;
            let crel = relation(&dc, child)?;
            let Some(i) = crel.constraints.iter().position(|k| k.name == c.name && k.kind == ConstraintKind::Check) else { continue };
            let ccon = &crel.constraints[i];
            if recurse && ccon.inhcount == 1 && !ccon.is_local {
                drop_constraint(&dc, &crel, c, objtype, true, true)?;
                continue;
            }
            let mut t = (*crel).clone();
            t.constraints[i].inhcount -= 1;
            if !recurse {
                t.constraints[i].is_local = true;
            }
            dc.put(&t)?;
        }
    }
    let d = fresh(d)?;
    let rel = relation(&d, rel.oid)?;
    ddl::alter_table_cmd(&d, &rel, c, objtype)
}

/// ALTER TABLE child INHERIT parent: the child must have every column of
/// the parent (same type, NOT NULL where it is) and every inheritable
/// CHECK constraint, which all count one parent more. (ATExecAddInherit)
fn add_inherit(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let Some(pg_query::NodeEnum::RangeVar(rv)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("INHERIT without a parent"));
    };
    let parent = d.lookup(rv)?;
    if parent.kind != RelKind::Table {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a table or foreign table", parent.name)));
    }
    if crate::catalog::system::is_system(&parent) {
        return Err(PgError::unsupported("inheriting from a system catalog"));
    }
    super::grant::check_relation_owner(d.s, &parent)?;
    if parent.persistence == 't' && rel.persistence != 't' {
        return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("cannot inherit from temporary relation \"{}\"", parent.name)));
    }
    if d.catalog.inheritance_tree(rel.oid).contains(&parent.oid) {
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, "circular inheritance not allowed")
            .with_detail(format!("\"{}\" is already a child of \"{}\".", rv.relname, rel.name)));
    }
    // A row trigger with transition tables could not tell which rows of
    // the hierarchy it should see (FindTriggerIncompatibleWithInheritance).
    let mut triggers: Vec<_> = rel.triggers.iter().filter(|t| t.is_row() && (t.old_table.is_some() || t.new_table.is_some())).collect();
    triggers.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(t) = triggers.first() {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("trigger \"{}\" prevents table \"{}\" from becoming an inheritance child", t.name, rel.name))
            .with_detail("ROW triggers with transition tables are not supported in inheritance hierarchies."));
    }
    if rel.inherits.contains(&parent.oid) {
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{}\" would be inherited from more than once", parent.name)));
    }
    d.lock_relation(parent.oid)?;
    let mut t = (**rel).clone();
    // MergeAttributesIntoExisting
    for (_, pc) in parent.live_columns() {
        let Some((attnum, cc)) = t.column_by_name(&pc.name) else {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("child table is missing column \"{}\"", pc.name)));
        };
        if cc.type_oid != pc.type_oid || cc.typmod != pc.typmod {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("child table \"{}\" has different type for column \"{}\"", rel.name, pc.name),
            ));
        }
        if pc.not_null && !cc.not_null {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("column \"{}\" in child table must be marked NOT NULL", pc.name)));
        }
        t.columns[attnum as usize - 1].inhcount += 1;
    }
    // MergeConstraintsIntoExisting
    for pcon in parent.constraints.iter().filter(|k| k.kind == ConstraintKind::Check && !k.no_inherit) {
        let Some(ccon) = t.constraints.iter_mut().find(|k| k.kind == ConstraintKind::Check && k.name == pcon.name) else {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("child table is missing constraint \"{}\"", pcon.name)));
        };
        if ccon.check != pcon.check {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("child table \"{}\" has different definition for check constraint \"{}\"", rel.name, pcon.name),
            ));
        }
        if ccon.no_inherit {
            return Err(PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                format!("constraint \"{}\" conflicts with non-inherited constraint on child table \"{}\"", ccon.name, rel.name),
            ));
        }
        if pcon.validated && !ccon.validated {
            return Err(PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                format!("constraint \"{}\" conflicts with NOT VALID constraint on child table \"{}\"", ccon.name, rel.name),
            ));
        }
        ccon.inhcount += 1;
    }
    t.inherits.push(parent.oid);
    d.put(&t)
}

/// ALTER TABLE child NO INHERIT parent: what came from that parent
/// counts one parent fewer; what no parent gives any more becomes the
/// child's own. (RemoveInheritance)
fn drop_inherit(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    let Some(pg_query::NodeEnum::RangeVar(rv)) = c.def.as_deref().and_then(|n| n.node.as_ref()) else {
        return Err(PgError::internal("NO INHERIT without a parent"));
    };
    let parent = d.lookup(rv)?;
    let Some(pos) = rel.inherits.iter().position(|p| *p == parent.oid) else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_TABLE,
            format!("relation \"{}\" is not a parent of relation \"{}\"", parent.name, rel.name),
        ));
    };
    d.lock_relation(parent.oid)?;
    let mut t = (**rel).clone();
    t.inherits.remove(pos);
    for (_, pc) in parent.live_columns() {
        if let Some(col) = t.columns.iter_mut().find(|x| !x.dropped && x.name == pc.name && x.inhcount > 0) {
            col.inhcount -= 1;
            if col.inhcount == 0 {
                col.is_local = true;
            }
        }
    }
    for pcon in parent.constraints.iter().filter(|k| k.kind == ConstraintKind::Check && !k.no_inherit) {
        if let Some(con) = t.constraints.iter_mut().find(|k| k.kind == ConstraintKind::Check && k.name == pcon.name && k.inhcount > 0) {
            con.inhcount -= 1;
            if con.inhcount == 0 {
                con.is_local = true;
            }
        }
    }
    d.put(&t)
}

// ---------------------------------------------------------------- RENAME

/// RENAME COLUMN: the tables whose column `old` is renamed, children
/// first, after PostgreSQL's checks: an inherited column is renamed only
/// from the top of its tree, on every table of it. (renameatt_internal)
pub(crate) fn rename_column_targets(d: &Ddl, rel: &Arc<Relation>, old: &str, new: &str, recurse: bool) -> PgResult<Vec<Oid>> {
    if crate::expr::SystemColumn::by_name(new).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column name \"{new}\" conflicts with a system column name")));
    }
    let tree = d.catalog.inheritance_tree(rel.oid);
    let mut targets = Vec::new();
    if recurse {
        for &oid in tree.iter().skip(1) {
            let child = relation(d, oid)?;
            let parents_in_tree = child.inherits.iter().filter(|p| tree.contains(p)).count() as i32;
            if let Some((_, col)) = child.column_by_name(old) {
                if col.inhcount > parents_in_tree {
                    return Err(invalid_definition(format!("cannot rename inherited column \"{old}\"")));
                }
            }
            targets.push(oid);
        }
    } else if tree.len() > 1 {
        return Err(invalid_definition(format!("inherited column \"{old}\" must be renamed in child tables too")));
    }
    if crate::expr::SystemColumn::by_name(old).is_some() {
        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot rename system column \"{old}\"")));
    }
    if let Some((_, col)) = rel.column_by_name(old) {
        if col.inhcount > 0 {
            return Err(invalid_definition(format!("cannot rename inherited column \"{old}\"")));
        }
    }
    targets.push(rel.oid);
    Ok(targets)
}

/// RENAME CONSTRAINT of a CHECK constraint: as RENAME COLUMN, for the
/// constraint's copies in the tree. (rename_constraint_internal)
pub(crate) fn rename_constraint_targets(d: &Ddl, rel: &Arc<Relation>, name: &str, recurse: bool) -> PgResult<Vec<Oid>> {
    let Some(con) = rel.constraints.iter().find(|k| k.name == name) else { return Ok(vec![rel.oid]) };
    if con.kind != ConstraintKind::Check {
        return Ok(vec![rel.oid]);
    }
    let tree = d.catalog.inheritance_tree(rel.oid);
    let mut targets = Vec::new();
    if recurse {
        for &oid in tree.iter().skip(1) {
            let child = relation(d, oid)?;
            let parents_in_tree = child.inherits.iter().filter(|p| tree.contains(p)).count() as i32;
            if let Some(k) = child.constraints.iter().find(|k| k.name == name) {
                if k.inhcount > parents_in_tree {
                    return Err(invalid_definition(format!("cannot rename inherited constraint \"{name}\"")));
                }
                targets.push(oid);
            }
        }
    } else if tree.len() > 1 && !con.no_inherit {
        return Err(invalid_definition(format!("inherited constraint \"{name}\" must be renamed in child tables too")));
    }
    if con.inhcount > 0 {
        return Err(invalid_definition(format!("cannot rename inherited constraint \"{name}\"")));
    }
    targets.push(rel.oid);
    Ok(targets)
}
