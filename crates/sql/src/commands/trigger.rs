//! CREATE TRIGGER, DROP TRIGGER, ALTER TRIGGER ... RENAME and ALTER TABLE
//! ... ENABLE/DISABLE TRIGGER (PostgreSQL's commands/trigger.c): the checks
//! PostgreSQL makes, and the pg_trigger rows kept with their table.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::{Node, NodeEnum};
use tusk_types::{oid, sqlstate, PgError, PgResult};

use super::ddl::{deparse_expr, Ddl};
use crate::catalog::trigger::*;
use crate::catalog::{RelKind, Relation};
use crate::session::SqlSession;

fn strings(nodes: &[Node]) -> Vec<String> {
    nodes
        .iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
            Some(NodeEnum::Integer(i)) => Some(i.ival.to_string()),
            Some(NodeEnum::Float(f)) => Some(f.fval.clone()),
            _ => None,
        })
        .collect()
}

fn wrong_object(message: String, detail: &str) -> PgError {
    PgError::new(sqlstate::WRONG_OBJECT_TYPE, message).with_detail(detail)
}

pub fn create_trigger(s: &mut SqlSession, stmt: &pb::CreateTrigStmt, sql: &str) -> PgResult<()> {
    {
        let d = Ddl::new(s, sql)?;
        let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("CREATE TRIGGER without a table"))?;
        let rel = d.lookup(rv)?;
        let row = stmt.row;
        let instead = stmt.timing as i16 & TRIGGER_TYPE_INSTEAD != 0;
        let before = stmt.timing as i16 & TRIGGER_TYPE_BEFORE != 0;
        let events = stmt.events as i16;
        match rel.kind {
            RelKind::Table => {
                if instead {
                    return Err(wrong_object(format!("\"{}\" is a table", rel.name), "Tables cannot have INSTEAD OF triggers."));
                }
            }
            RelKind::ForeignTable => {
                if instead {
                    return Err(wrong_object(format!("\"{}\" is a foreign table", rel.name), "Foreign tables cannot have INSTEAD OF triggers."));
                }
                if events & TRIGGER_TYPE_TRUNCATE != 0 {
                    return Err(wrong_object(format!("\"{}\" is a foreign table", rel.name), "Foreign tables cannot have TRUNCATE triggers."));
                }
                if stmt.isconstraint {
                    return Err(wrong_object(format!("\"{}\" is a foreign table", rel.name), "Foreign tables cannot have constraint triggers."));
                }
            }
            RelKind::View => {
                if !instead && row {
                    return Err(wrong_object(format!("\"{}\" is a view", rel.name), "Views cannot have row-level BEFORE or AFTER triggers."));
                }
                if events & TRIGGER_TYPE_TRUNCATE != 0 {
                    return Err(wrong_object(format!("\"{}\" is a view", rel.name), "Views cannot have TRUNCATE triggers."));
                }
            }
            _ => {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("relation \"{}\" cannot have triggers", rel.name))
                    .with_detail(format!("This operation is not supported for {}.", relkind_plural(rel.kind))))
            }
        }
        if rel.oid < oid::FIRST_NORMAL_OBJECT_ID {
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied: \"{}\" is a system catalog", rel.name)));
        }
        super::grant::check_relation_owner(d.s, &rel)?;
        // Checks of the trigger's kind (CreateTriggerFiringOn).
        if events & TRIGGER_TYPE_TRUNCATE != 0 && row {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "TRUNCATE FOR EACH ROW triggers are not supported"));
        }
        if instead {
            if !row {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "INSTEAD OF triggers must be FOR EACH ROW"));
            }
            if stmt.when_clause.is_some() {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "INSTEAD OF triggers cannot have WHEN conditions"));
            }
            if !stmt.columns.is_empty() {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "INSTEAD OF triggers cannot have column lists"));
            }
        }
        let (old_table, new_table) = transition_names(stmt, &rel, events, row)?;
        if stmt.isconstraint && stmt.initdeferred {
            return Err(PgError::unsupported("deferred constraint triggers (INITIALLY DEFERRED)"));
        }
        if stmt.isconstraint && stmt.replace {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "CREATE OR REPLACE CONSTRAINT TRIGGER is not supported"));
        }
        // WHEN: which rows it may reference (PostgreSQL checks this while
        // transforming the expression).
        let when = match stmt.when_clause.as_deref() {
            Some(w) => {
                let text = deparse_expr(w)?;
                let (rewritten, ..) = crate::executor::trigger::rewrite_when(&text, &rel)?;
                // Each reference to OLD or NEW, in the order written.
                let mut refs: Vec<(i32, bool, String)> = Vec::new();
                if let Some(n) = &w.node {
                    for (node, _, _) in n.nodes() {
                        let pg_query::NodeRef::ColumnRef(c) = node else { continue };
                        let field = |i: usize| match c.fields.get(i).and_then(|f| f.node.as_ref()) {
                            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
                            Some(NodeEnum::AStar(_)) => Some("*".to_string()),
                            _ => None,
                        };
                        if let (Some(first), Some(col)) = (field(0), field(1)) {
                            if first == "old" || first == "new" {
                                refs.push((c.location, first == "old", col));
                            }
                        }
                    }
                }
                refs.sort_by_key(|r| r.0);
                for (location, is_old, col) in &refs {
                    let at = crate::analyzer::pos(*location);
                    let invalid = |m: &str| Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, m.to_string()).with_position(at));
                    if !row {
                        return invalid("statement trigger's WHEN condition cannot reference column values");
                    }
                    if *is_old && events & TRIGGER_TYPE_INSERT != 0 {
                        return invalid("INSERT trigger's WHEN condition cannot reference OLD values");
                    }
                    if !*is_old && events & TRIGGER_TYPE_DELETE != 0 {
                        return invalid("DELETE trigger's WHEN condition cannot reference NEW values");
                    }
                    let system = matches!(col.as_str(), "ctid" | "xmin" | "xmax" | "cmin" | "cmax" | "tableoid");
                    if !*is_old && system && before {
                        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "BEFORE trigger's WHEN condition cannot reference NEW system columns").with_position(at));
                    }
                }
                // Compile it now, so unknown columns and type errors show at CREATE.
                let r = crate::executor::trigger::when_relation(&rel);
                let settings = d.s.settings.borrow();
                let e = crate::planner::compile_relation_expr(&d.catalog, &settings, &d.s.user, &r, &rewritten)?;
                if e.ty().oid != oid::BOOL {
                    return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("argument of WHEN must be type boolean, not type {}", crate::analyzer::types::format_type(crate::catalog::builtins(), e.ty().oid, -1))));
                }
                Some(text)
            }
            None => None,
        };
        // UPDATE OF columns.
        let mut columns = Vec::new();
        for name in strings(&stmt.columns) {
            let (attnum, _) = rel.column_by_name(&name).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" of relation \"{}\" does not exist", rel.name))
            })?;
            if columns.contains(&attnum) {
                return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{name}\" specified more than once")));
            }
            columns.push(attnum);
        }
        // The function: no arguments, returning trigger.
        let owa = pb::ObjectWithArgs { objname: stmt.funcname.clone(), objargs: vec![], objfuncargs: vec![], args_unspecified: false };
        let fname_parts = strings(&stmt.funcname);
        let (func_oid, func_ret) = match super::function::lookup_function(d.s, &d.catalog, &owa, 'f', true)? {
            Some(f) => (f.oid, f.ret_type),
            // A built-in trigger function (suppress_redundant_updates_trigger).
            None => match builtin_trigger_function(&d.catalog, &fname_parts) {
                Some(oid) => (oid, oid::TRIGGER),
                None => {
                    let f = super::function::lookup_function(d.s, &d.catalog, &owa, 'f', false)?
                        .ok_or_else(|| PgError::internal("function lookup returned nothing"))?;
                    (f.oid, f.ret_type)
                }
            },
        };
        let fname = fname_parts.join(".");
        if func_ret != oid::TRIGGER {
            return Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, format!("function {fname} must return type trigger")));
        }
        let constrrel = match &stmt.constrrel {
            Some(rv) => d.lookup(rv)?.oid,
            None => 0,
        };
        d.lock_relation(rel.oid)?;
        let mut t = (*rel).clone();
        let existing = t.triggers.iter().position(|x| x.name == stmt.trigname);
        if let Some(i) = existing {
            if !stmt.replace {
                return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("trigger \"{}\" for relation \"{}\" already exists", stmt.trigname, rel.name)));
            }
            if t.triggers[i].constraint != 0 {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("trigger \"{}\" for relation \"{}\" is a constraint trigger", stmt.trigname, rel.name)));
            }
        }
        let mut tgtype = events;
        if row {
            tgtype |= TRIGGER_TYPE_ROW;
        }
        tgtype |= (stmt.timing as i16) & (TRIGGER_TYPE_BEFORE | TRIGGER_TYPE_INSTEAD);
        let trigger = Trigger {
            oid: match existing {
                Some(i) => t.triggers[i].oid,
                None => d.oid()?,
            },
            name: stmt.trigname.clone(),
            function: func_oid,
            tgtype,
            enabled: match existing {
                Some(i) => t.triggers[i].enabled,
                None => 'O',
            },
            constraint: if stmt.isconstraint { d.oid()? } else { 0 },
            constrrel,
            deferrable: stmt.deferrable,
            initdeferred: stmt.initdeferred,
            columns,
            args: strings(&stmt.args),
            when,
            old_table,
            new_table,
        };
        match existing {
            Some(i) => t.triggers[i] = trigger,
            None => t.triggers.push(trigger),
        }
        d.put(&t)?;
    }
    s.reload_txn_catalog()
}

/// The REFERENCING clause's OLD TABLE and NEW TABLE names, with the
/// checks PostgreSQL's CreateTriggerFiringOn makes of them.
fn transition_names(stmt: &pb::CreateTrigStmt, rel: &Relation, events: i16, row: bool) -> PgResult<(Option<String>, Option<String>)> {
    let (mut old, mut new): (Option<String>, Option<String>) = (None, None);
    let unsupported = |m: &str| Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, m.to_string()));
    let invalid = |m: &str| Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, m.to_string()));
    for n in &stmt.transition_rels {
        let Some(NodeEnum::TriggerTransition(tt)) = &n.node else { return Err(PgError::internal("REFERENCING item")) };
        if !tt.is_table {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "ROW variable naming in the REFERENCING clause is not supported")
                .with_hint("Use OLD TABLE or NEW TABLE for naming transition tables."));
        }
        match rel.kind {
            RelKind::ForeignTable => return Err(wrong_object(format!("\"{}\" is a foreign table", rel.name), "Triggers on foreign tables cannot have transition tables.")),
            RelKind::View => return Err(wrong_object(format!("\"{}\" is a view", rel.name), "Triggers on views cannot have transition tables.")),
            _ => {}
        }
        if row && !rel.inherits.is_empty() {
            return unsupported("ROW triggers with transition tables are not supported on inheritance children");
        }
        if stmt.timing != 0 {
            return invalid("transition table name can only be specified for an AFTER trigger");
        }
        if events & TRIGGER_TYPE_TRUNCATE != 0 {
            return unsupported("TRUNCATE triggers with transition tables are not supported");
        }
        let kinds = [TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE, TRIGGER_TYPE_DELETE].iter().filter(|&&b| events & b != 0).count();
        if kinds != 1 {
            return unsupported("transition tables cannot be specified for triggers with more than one event");
        }
        if !stmt.columns.is_empty() {
            return unsupported("transition tables cannot be specified for triggers with column lists");
        }
        if tt.is_new {
            if events & (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE) == 0 {
                return invalid("NEW TABLE can only be specified for an INSERT or UPDATE trigger");
            }
            if new.is_some() {
                return invalid("NEW TABLE cannot be specified multiple times");
            }
            new = Some(tt.name.clone());
        } else {
            if events & (TRIGGER_TYPE_DELETE | TRIGGER_TYPE_UPDATE) == 0 {
                return invalid("OLD TABLE can only be specified for a DELETE or UPDATE trigger");
            }
            if old.is_some() {
                return invalid("OLD TABLE cannot be specified multiple times");
            }
            old = Some(tt.name.clone());
        }
    }
    if old.is_some() && old == new {
        return invalid("OLD TABLE name and NEW TABLE name cannot be the same");
    }
    Ok((old, new))
}

/// A built-in function without arguments returning trigger, named
/// unqualified or in pg_catalog.
fn builtin_trigger_function(catalog: &crate::catalog::DbCatalog, names: &[String]) -> Option<tusk_types::Oid> {
    let name = match names {
        [n] => n,
        [schema, n] if schema == "pg_catalog" => n,
        _ => return None,
    };
    catalog
        .procs_named(name)
        .find(|p| p.oid < oid::FIRST_NORMAL_OBJECT_ID && p.rettype == oid::TRIGGER && p.argtypes.is_empty())
        .map(|p| p.oid)
}

fn relkind_plural(k: RelKind) -> &'static str {
    match k {
        RelKind::Index => "indexes",
        RelKind::Sequence => "sequences",
        RelKind::View => "views",
        RelKind::ForeignTable => "foreign tables",
        RelKind::Table => "tables",
        RelKind::CompositeType => "composite types",
    }
}

/// The table a `trigger ON table` name refers to, and the trigger's name.
fn trigger_target(d: &Ddl, names: &[String]) -> PgResult<(pb::RangeVar, String)> {
    let (table, trig) = names.split_at(names.len().saturating_sub(1));
    let trig = trig.first().cloned().unwrap_or_default();
    let rv = pb::RangeVar {
        relname: table.last().cloned().unwrap_or_default(),
        schemaname: if table.len() >= 2 { table[table.len() - 2].clone() } else { String::new() },
        inh: true,
        relpersistence: "p".into(),
        ..Default::default()
    };
    let _ = d;
    Ok((rv, trig))
}

/// DROP TRIGGER [IF EXISTS] name ON table [CASCADE | RESTRICT].
pub fn drop_triggers(s: &mut SqlSession, stmt: &pb::DropStmt, sql: &str) -> PgResult<()> {
    for o in &stmt.objects {
        let names = match &o.node {
            Some(NodeEnum::List(l)) => strings(&l.items),
            _ => continue,
        };
        {
            let d = Ddl::new(s, sql)?;
            let (rv, trig) = trigger_target(&d, &names)?;
            let rel = match d.lookup(&rv) {
                Ok(r) => r,
                Err(e) if stmt.missing_ok && e.code == sqlstate::UNDEFINED_TABLE => {
                    s.notices.borrow_mut().push(PgError::notice(format!("relation \"{}\" does not exist, skipping", rv.relname)));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let Some(pos) = rel.triggers.iter().position(|t| t.name == trig) else {
                if stmt.missing_ok {
                    s.notices.borrow_mut().push(PgError::notice(format!("trigger \"{trig}\" for relation \"{}\" does not exist, skipping", rel.name)));
                    continue;
                }
                return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("trigger \"{trig}\" for table \"{}\" does not exist", rel.name)));
            };
            super::grant::check_relation_owner(d.s, &rel)?;
            d.lock_relation(rel.oid)?;
            let mut t = (*rel).clone();
            let gone = t.triggers.remove(pos);
            d.put(&t)?;
            crate::catalog::store::put_comment(d.s.txn()?, d.db(), crate::catalog::depend::PG_TRIGGER, gone.oid, 0, None)?;
        }
        s.reload_txn_catalog()?;
    }
    Ok(())
}

/// ALTER TRIGGER name ON table RENAME TO new.
pub fn rename_trigger(s: &mut SqlSession, stmt: &pb::RenameStmt, sql: &str) -> PgResult<()> {
    {
        let d = Ddl::new(s, sql)?;
        let rv = stmt.relation.as_ref().ok_or_else(|| PgError::internal("ALTER TRIGGER without a table"))?;
        let rel = d.lookup(rv)?;
        super::grant::check_relation_owner(d.s, &rel)?;
        if rel.triggers.iter().any(|t| t.name == stmt.newname) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("trigger \"{}\" for relation \"{}\" already exists", stmt.newname, rel.name)));
        }
        let Some(pos) = rel.triggers.iter().position(|t| t.name == stmt.subname) else {
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("trigger \"{}\" for table \"{}\" does not exist", stmt.subname, rel.name)));
        };
        d.lock_relation(rel.oid)?;
        let mut t = (*rel).clone();
        t.triggers[pos].name = stmt.newname.clone();
        d.put(&t)?;
    }
    s.reload_txn_catalog()
}

/// Whether an ALTER TABLE subcommand is one of ENABLE/DISABLE TRIGGER.
pub fn is_enable_cmd(subtype: i32) -> bool {
    use pb::AlterTableType as A;
    [A::AtEnableTrig, A::AtEnableAlwaysTrig, A::AtEnableReplicaTrig, A::AtDisableTrig, A::AtEnableTrigAll, A::AtDisableTrigAll, A::AtEnableTrigUser, A::AtDisableTrigUser]
        .iter()
        .any(|a| *a as i32 == subtype)
}

/// ALTER TABLE ... {ENABLE [REPLICA | ALWAYS] | DISABLE} TRIGGER {name | ALL | USER}.
pub(crate) fn enable_trigger(d: &Ddl, rel: &Arc<Relation>, c: &pb::AlterTableCmd) -> PgResult<()> {
    use pb::AlterTableType as A;
    let st = A::from_i32(c.subtype).ok_or_else(|| PgError::internal("unknown ALTER TABLE subcommand"))?;
    let state = match st {
        A::AtEnableTrig | A::AtEnableTrigAll | A::AtEnableTrigUser => 'O',
        A::AtEnableAlwaysTrig => 'A',
        A::AtEnableReplicaTrig => 'R',
        _ => 'D',
    };
    let mut t = (**rel).clone();
    match st {
        // Tusk has no internal (foreign key) triggers: ALL and USER are the same.
        A::AtEnableTrigAll | A::AtDisableTrigAll | A::AtEnableTrigUser | A::AtDisableTrigUser => {
            for tr in &mut t.triggers {
                tr.enabled = state;
            }
        }
        _ => {
            let Some(tr) = t.triggers.iter_mut().find(|x| x.name == c.name) else {
                return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("trigger \"{}\" for table \"{}\" does not exist", c.name, rel.name)));
            };
            tr.enabled = state;
        }
    }
    d.put(&t)
}

/// pg_get_triggerdef: the CREATE TRIGGER statement of a trigger.
pub fn triggerdef(catalog: &crate::catalog::DbCatalog, rel: &Relation, t: &Trigger, pretty: bool) -> String {
    let quote = crate::functions::quote_ident;
    let mut out = String::from(if t.constraint != 0 { "CREATE CONSTRAINT TRIGGER " } else { "CREATE TRIGGER " });
    out.push_str(&quote(&t.name));
    out.push(' ');
    out.push_str(t.timing().keyword());
    let mut events = Vec::new();
    for e in [TriggerEvent::Insert, TriggerEvent::Delete, TriggerEvent::Update, TriggerEvent::Truncate] {
        if t.fires_on(e) {
            let mut s = e.keyword().to_string();
            if e == TriggerEvent::Update && !t.columns.is_empty() {
                let names: Vec<String> = t.columns.iter().map(|&a| quote(&rel.column(a).name)).collect();
                s.push_str(" OF ");
                s.push_str(&names.join(", "));
            }
            events.push(s);
        }
    }
    out.push(' ');
    out.push_str(&events.join(" OR "));
    let qualified = |nsp: tusk_types::Oid, name: &str| -> String {
        let schema = catalog.namespace_name(nsp);
        if pretty && schema == "public" {
            quote(name)
        } else {
            format!("{}.{}", quote(schema), quote(name))
        }
    };
    out.push_str(" ON ");
    out.push_str(&qualified(rel.namespace, &rel.name));
    out.push(' ');
    if t.constraint != 0 {
        if t.constrrel != 0 {
            if let Some(r) = catalog.relation(t.constrrel) {
                out.push_str(&format!("FROM {} ", qualified(r.namespace, &r.name)));
            }
        }
        out.push_str(if t.deferrable { "DEFERRABLE " } else { "NOT DEFERRABLE " });
        out.push_str(if t.initdeferred { "INITIALLY DEFERRED " } else { "INITIALLY IMMEDIATE " });
    }
    if t.old_table.is_some() || t.new_table.is_some() {
        out.push_str("REFERENCING ");
        if let Some(o) = &t.old_table {
            out.push_str(&format!("OLD TABLE AS {} ", quote(o)));
        }
        if let Some(n) = &t.new_table {
            out.push_str(&format!("NEW TABLE AS {} ", quote(n)));
        }
    }
    out.push_str(if t.is_row() { "FOR EACH ROW " } else { "FOR EACH STATEMENT " });
    if let Some(w) = &t.when {
        // Without pretty-printing PostgreSQL parenthesizes the operator
        // expression itself too.
        let w = if pretty || (w.starts_with('(') && w.ends_with(')')) { w.clone() } else { format!("({w})") };
        out.push_str(&format!("WHEN ({w}) "));
    }
    let fname = match catalog.functions.get(&t.function) {
        Some(f) => {
            let schema = catalog.namespace_name(f.namespace);
            if schema == "public" || schema == "pg_catalog" {
                quote(&f.name)
            } else {
                format!("{}.{}", quote(schema), quote(&f.name))
            }
        }
        None => match catalog.proc(t.function) {
            Some(p) => quote(&p.name),
            None => t.function.to_string(),
        },
    };
    let args: Vec<String> = t.args.iter().map(|a| quote_literal(a)).collect();
    out.push_str(&format!("EXECUTE FUNCTION {fname}({})", args.join(", ")));
    out
}

/// A string as a SQL literal (quote_literal).
fn quote_literal(s: &str) -> String {
    let body = s.replace('\'', "''");
    if s.contains('\\') {
        format!("E'{}'", body.replace('\\', "\\\\"))
    } else {
        format!("'{body}'")
    }
}

/// Fires the statement-level TRUNCATE triggers of the tables a TRUNCATE
/// empties: all BEFORE ones before the first is emptied, AFTER ones after.
pub fn fire_truncate(s: &SqlSession, catalog: &crate::catalog::DbCatalog, rels: &[Arc<Relation>], before: bool) -> PgResult<()> {
    if rels.iter().all(|r| r.triggers.is_empty()) {
        return Ok(());
    }
    let timing = if before { TriggerTiming::Before } else { TriggerTiming::After };
    s.with_exec(catalog, |cx| {
        for r in rels {
            let rel = catalog.relation(r.oid).cloned().unwrap_or_else(|| r.clone());
            if let Some(t) = crate::executor::trigger::TableTriggers::of(&rel, cx) {
                t.statement(timing, TriggerEvent::Truncate, None, cx)?;
            }
        }
        Ok(())
    })
}

