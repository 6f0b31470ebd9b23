//! Utility statements: DDL (in `ddl`), SET/SHOW/RESET, VACUUM, ANALYZE,
//! CHECKPOINT, DISCARD, LOCK, EXPLAIN — everything that is not planned as a
//! query. Transaction control and prepared statements belong to the
//! protocol session (tusk-server), which owns the transaction block.

pub mod aggregate;
pub mod cast;
pub mod copy;
pub mod create_as;
pub mod cursor;
pub mod ddl;
pub mod dependency;
pub mod exclusion;
pub mod enums;
pub mod explain;
pub mod foreign;
pub mod function;
pub mod gin_index;
pub mod grant;
pub mod inherit;
pub mod naming;
pub mod notify;
pub mod operator;
pub mod owned;
pub mod publication;
pub mod range_types;
pub mod reindex;
pub mod role;
pub mod reloptions;
pub mod sequence;
pub mod subscription;
pub mod table_like;
pub mod table_settings;
pub mod trigger;
pub mod types;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use crate::analyzer::const_text;
use crate::executor::Row;
use crate::parser::ParsedStatement;
use crate::plan::OutputColumn;
use crate::session::SqlSession;

/// What a utility statement produced.
pub struct UtilityResult {
    /// The command tag (CREATE TABLE, SET, ...).
    pub tag: String,
    /// Rows for statements that return some (SHOW, EXPLAIN).
    pub rows: Option<(Vec<OutputColumn>, Vec<Row>)>,
}

impl UtilityResult {
    fn tag(t: &str) -> PgResult<UtilityResult> {
        Ok(UtilityResult { tag: t.to_string(), rows: None })
    }
}

/// Queues a NOTICE for the client.
pub fn notice(s: &SqlSession, message: String) {
    s.notices.borrow_mut().push(PgError::notice(message));
}

/// An error from looking up a utility statement's relation: PostgreSQL
/// resolves those names outside the parser (RangeVarGetRelid), so its
/// errors carry no position in the statement.
pub(crate) fn utility_error(mut e: PgError) -> PgError {
    e.position = None;
    e
}

/// A DefElem's argument as text.
pub fn def_elem_value(de: &pb::DefElem) -> Option<String> {
    let arg = de.arg.as_deref()?;
    match &arg.node {
        Some(NodeEnum::TypeName(t)) => t.names.last().and_then(|n| const_text(n)),
        Some(NodeEnum::List(l)) => Some(l.items.iter().filter_map(const_text).collect::<Vec<_>>().join(".")),
        _ => const_text(arg),
    }
}

/// Whether a statement is a utility statement (not planned as a query).
pub fn is_utility(node: &NodeEnum) -> bool {
    !matches!(node, NodeEnum::SelectStmt(_) | NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_))
}

/// Statements PostgreSQL refuses inside a transaction block.
pub fn forbidden_in_block(node: &NodeEnum) -> Option<&'static str> {
    match node {
        NodeEnum::CreatedbStmt(_) => Some("CREATE DATABASE"),
        NodeEnum::DropdbStmt(_) => Some("DROP DATABASE"),
        NodeEnum::VacuumStmt(v) if v.is_vacuumcmd => Some("VACUUM"),
        NodeEnum::IndexStmt(i) if i.concurrent => Some("CREATE INDEX CONCURRENTLY"),
        _ => None,
    }
}

fn is_routine_type(t: i32) -> bool {
    t == pb::ObjectType::ObjectFunction as i32 || t == pb::ObjectType::ObjectProcedure as i32 || t == pb::ObjectType::ObjectRoutine as i32
}

/// "ALTER FUNCTION", "ALTER PROCEDURE" or "ALTER ROUTINE".
fn function_tag(t: i32, verb: &str) -> &'static str {
    match (verb, pb::ObjectType::from_i32(t)) {
        ("ALTER", Some(pb::ObjectType::ObjectProcedure)) => "ALTER PROCEDURE",
        ("ALTER", Some(pb::ObjectType::ObjectRoutine)) => "ALTER ROUTINE",
        _ => "ALTER FUNCTION",
    }
}

/// Runs a utility statement inside the session's current transaction.
pub fn execute_utility(s: &mut SqlSession, stmt: &ParsedStatement, sql: &str) -> PgResult<UtilityResult> {
    let r = execute_ddl_node(s, &stmt.node, sql);
    // Roles and databases this transaction changed are what its later
    // statements see (pg_roles, SET ROLE, privilege checks).
    if r.is_ok() && s.cluster_changed {
        s.reload_txn_cluster()?;
    }
    r
}

pub(crate) fn execute_ddl_node(s: &mut SqlSession, node: &NodeEnum, sql: &str) -> PgResult<UtilityResult> {
    if s.read_only && is_write_utility(node) {
        return Err(PgError::new(
            sqlstate::READ_ONLY_SQL_TRANSACTION,
            format!("cannot execute {} in a read-only transaction", command_tag(node)),
        ));
    }
    match node {
        NodeEnum::CreateStmt(c) => {
            table_like::create_table(s, c, sql)?;
            UtilityResult::tag("CREATE TABLE")
        }
        NodeEnum::CreateTableAsStmt(c) => match create_as::create_table_as(s, c, sql)? {
            Some(rows) => UtilityResult::tag(&format!("SELECT {rows}")),
            None => UtilityResult::tag(if c.is_select_into { "SELECT 0" } else { "CREATE TABLE AS" }),
        },
        NodeEnum::IndexStmt(i) => {
            ddl::create_index(s, i, sql)?;
            UtilityResult::tag("CREATE INDEX")
        }
        NodeEnum::ViewStmt(v) => {
            ddl::create_view(s, v, sql)?;
            UtilityResult::tag("CREATE VIEW")
        }
        NodeEnum::CreateSeqStmt(c) => {
            ddl::create_sequence(s, c, sql)?;
            UtilityResult::tag("CREATE SEQUENCE")
        }
        NodeEnum::AlterSeqStmt(a) => {
            ddl::alter_sequence(s, a, sql)?;
            UtilityResult::tag("ALTER SEQUENCE")
        }
        NodeEnum::CreateSchemaStmt(c) => {
            ddl::create_schema(s, c, sql)?;
            UtilityResult::tag("CREATE SCHEMA")
        }
        NodeEnum::CreatedbStmt(c) => {
            ddl::create_database(s, c)?;
            UtilityResult::tag("CREATE DATABASE")
        }
        NodeEnum::DropdbStmt(d) => {
            ddl::drop_database(s, d)?;
            UtilityResult::tag("DROP DATABASE")
        }
        NodeEnum::CreatePublicationStmt(c) => {
            publication::create_publication(s, c, sql)?;
            UtilityResult::tag("CREATE PUBLICATION")
        }
        NodeEnum::AlterPublicationStmt(a) => {
            publication::alter_publication(s, a, sql)?;
            UtilityResult::tag("ALTER PUBLICATION")
        }
        NodeEnum::DropStmt(d)
            if d.remove_type == pb::ObjectType::ObjectFunction as i32
                || d.remove_type == pb::ObjectType::ObjectProcedure as i32
                || d.remove_type == pb::ObjectType::ObjectRoutine as i32 =>
        {
            function::drop_functions(s, d)?;
            UtilityResult::tag(match pb::ObjectType::from_i32(d.remove_type) {
                Some(pb::ObjectType::ObjectProcedure) => "DROP PROCEDURE",
                Some(pb::ObjectType::ObjectRoutine) => "DROP ROUTINE",
                _ => "DROP FUNCTION",
            })
        }
        NodeEnum::DefineStmt(d) if d.kind == pb::ObjectType::ObjectOperator as i32 => {
            operator::create_operator(s, d, sql)?;
            UtilityResult::tag("CREATE OPERATOR")
        }
        NodeEnum::DefineStmt(d) if d.kind == pb::ObjectType::ObjectAggregate as i32 => {
            aggregate::create_aggregate(s, d, sql)?;
            UtilityResult::tag("CREATE AGGREGATE")
        }
        NodeEnum::CreateCastStmt(c) => {
            cast::create_cast(s, c)?;
            UtilityResult::tag("CREATE CAST")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectOperator as i32 => {
            operator::drop_operators(s, d)?;
            UtilityResult::tag("DROP OPERATOR")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectAggregate as i32 => {
            aggregate::drop_aggregates(s, d)?;
            UtilityResult::tag("DROP AGGREGATE")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectCast as i32 => {
            cast::drop_cast(s, d)?;
            UtilityResult::tag("DROP CAST")
        }
        NodeEnum::AlterOperatorStmt(a) => {
            operator::alter_operator(s, a)?;
            UtilityResult::tag("ALTER OPERATOR")
        }
        NodeEnum::AlterOwnerStmt(a) if a.object_type == pb::ObjectType::ObjectOperator as i32 => {
            operator::alter_operator_owner(s, a)?;
            UtilityResult::tag("ALTER OPERATOR")
        }
        NodeEnum::AlterObjectSchemaStmt(a) if a.object_type == pb::ObjectType::ObjectOperator as i32 => {
            operator::alter_operator_schema(s, a)?;
            UtilityResult::tag("ALTER OPERATOR")
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectAggregate as i32 => {
            aggregate::rename_aggregate(s, r)?;
            UtilityResult::tag("ALTER AGGREGATE")
        }
        NodeEnum::AlterOwnerStmt(a) if a.object_type == pb::ObjectType::ObjectAggregate as i32 => {
            aggregate::alter_aggregate_owner(s, a)?;
            UtilityResult::tag("ALTER AGGREGATE")
        }
        NodeEnum::AlterObjectSchemaStmt(a) if a.object_type == pb::ObjectType::ObjectAggregate as i32 => {
            aggregate::alter_aggregate_schema(s, a)?;
            UtilityResult::tag("ALTER AGGREGATE")
        }
        NodeEnum::CreateEnumStmt(c) => {
            enums::create_enum(s, c, sql)?;
            UtilityResult::tag("CREATE TYPE")
        }
        NodeEnum::AlterEnumStmt(a) => {
            enums::alter_enum(s, a, sql)?;
            UtilityResult::tag("ALTER TYPE")
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectType as i32 && enums::names_stored_type(s, &enums::object_names(r.object.as_deref())) => {
            enums::rename_type(s, r, sql)?;
            UtilityResult::tag("ALTER TYPE")
        }
        NodeEnum::AlterOwnerStmt(a) if a.object_type == pb::ObjectType::ObjectType as i32 && enums::names_stored_type(s, &enums::object_names(a.object.as_deref())) => {
            enums::alter_type_owner(s, a, sql)?;
            UtilityResult::tag("ALTER TYPE")
        }
        NodeEnum::AlterObjectSchemaStmt(a) if a.object_type == pb::ObjectType::ObjectType as i32 && enums::names_stored_type(s, &enums::object_names(a.object.as_deref())) => {
            enums::alter_type_schema(s, a, sql)?;
            UtilityResult::tag("ALTER TYPE")
        }
        NodeEnum::CompositeTypeStmt(c) => {
            types::create_composite_type(s, c, sql)?;
            UtilityResult::tag("CREATE TYPE")
        }
        NodeEnum::CreateRangeStmt(c) => {
            range_types::create_range_type(s, c, sql)?;
            UtilityResult::tag("CREATE TYPE")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectType as i32 => {
            types::drop_types(s, d, sql, false)?;
            UtilityResult::tag("DROP TYPE")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectDomain as i32 => {
            types::drop_types(s, d, sql, true)?;
            UtilityResult::tag("DROP DOMAIN")
        }
        NodeEnum::AlterDomainStmt(a) => {
            types::alter_domain(s, a, sql)?;
            UtilityResult::tag("ALTER DOMAIN")
        }
        NodeEnum::CreateDomainStmt(c) => {
            types::create_domain(s, c, sql)?;
            UtilityResult::tag("CREATE DOMAIN")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectTrigger as i32 => {
            trigger::drop_triggers(s, d, sql)?;
            UtilityResult::tag("DROP TRIGGER")
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectTrigger as i32 => {
            trigger::rename_trigger(s, r, sql)?;
            UtilityResult::tag("ALTER TRIGGER")
        }
        NodeEnum::DropStmt(d) if d.remove_type == pb::ObjectType::ObjectPublication as i32 => {
            publication::drop_publications(s, d, sql)?;
            UtilityResult::tag("DROP PUBLICATION")
        }
        NodeEnum::CreateSubscriptionStmt(c) => {
            subscription::create_subscription(s, c)?;
            UtilityResult::tag("CREATE SUBSCRIPTION")
        }
        NodeEnum::AlterSubscriptionStmt(a) => {
            subscription::alter_subscription(s, a)?;
            UtilityResult::tag("ALTER SUBSCRIPTION")
        }
        NodeEnum::DropSubscriptionStmt(d) => {
            subscription::drop_subscription(s, d)?;
            UtilityResult::tag("DROP SUBSCRIPTION")
        }
        NodeEnum::AlterFunctionStmt(a) => {
            function::alter_function(s, a)?;
            UtilityResult::tag(function_tag(a.objtype, "ALTER"))
        }
        NodeEnum::RenameStmt(r) if is_routine_type(r.rename_type) => {
            function::rename_function(s, r)?;
            UtilityResult::tag(function_tag(r.rename_type, "ALTER"))
        }
        NodeEnum::AlterOwnerStmt(a) if is_routine_type(a.object_type) => {
            function::alter_function_owner(s, a)?;
            UtilityResult::tag(function_tag(a.object_type, "ALTER"))
        }
        NodeEnum::AlterObjectSchemaStmt(a) if is_routine_type(a.object_type) => {
            function::alter_function_schema(s, a)?;
            UtilityResult::tag(function_tag(a.object_type, "ALTER"))
        }
        NodeEnum::RenameStmt(r)
            if r.rename_type == pb::ObjectType::ObjectPublication as i32 || r.rename_type == pb::ObjectType::ObjectSubscription as i32 =>
        {
            let old = match r.object.as_deref().and_then(|n| n.node.as_ref()) {
                Some(NodeEnum::String(v)) => v.sval.clone(),
                _ => String::new(),
            };
            if r.rename_type == pb::ObjectType::ObjectPublication as i32 {
                publication::rename_publication(s, &old, &r.newname)?;
                UtilityResult::tag("ALTER PUBLICATION")
            } else {
                subscription::rename_subscription(s, &old, &r.newname)?;
                UtilityResult::tag("ALTER SUBSCRIPTION")
            }
        }
        NodeEnum::AlterOwnerStmt(a)
            if a.object_type == pb::ObjectType::ObjectPublication as i32 || a.object_type == pb::ObjectType::ObjectSubscription as i32 =>
        {
            let name = match a.object.as_deref().and_then(|n| n.node.as_ref()) {
                Some(NodeEnum::String(v)) => v.sval.clone(),
                _ => String::new(),
            };
            let new_owner = grant::role_spec_oid(s, a.newowner.as_ref())?;
            if a.object_type == pb::ObjectType::ObjectPublication as i32 {
                publication::alter_publication_owner(s, &name, new_owner)?;
                UtilityResult::tag("ALTER PUBLICATION")
            } else {
                subscription::alter_subscription_owner(s, &name, new_owner)?;
                UtilityResult::tag("ALTER SUBSCRIPTION")
            }
        }
        NodeEnum::DropStmt(d) => {
            ddl::drop(s, d, sql)?;
            UtilityResult::tag(match d.remove_type {
                42 => "DROP TABLE",
                21 => "DROP INDEX",
                52 => "DROP VIEW",
                38 => "DROP SEQUENCE",
                37 => "DROP SCHEMA",
                x if x == pb::ObjectType::ObjectFdw as i32 => "DROP FOREIGN DATA WRAPPER",
                x if x == pb::ObjectType::ObjectForeignTable as i32 => "DROP FOREIGN TABLE",
                x if x == pb::ObjectType::ObjectForeignServer as i32 => "DROP SERVER",
                _ => "DROP",
            })
        }
        NodeEnum::ReindexStmt(r) => {
            reindex::reindex(s, r, sql)?;
            UtilityResult::tag("REINDEX")
        }
        NodeEnum::TruncateStmt(t) => {
            ddl::truncate(s, t, sql)?;
            UtilityResult::tag("TRUNCATE TABLE")
        }
        NodeEnum::CommentStmt(c) => {
            ddl::comment(s, c, sql)?;
            UtilityResult::tag("COMMENT")
        }
        NodeEnum::AlterTableStmt(a) => {
            ddl::alter_table(s, a, sql)?;
            UtilityResult::tag(match a.objtype {
                52 => "ALTER VIEW",
                21 => "ALTER INDEX",
                38 => "ALTER SEQUENCE",
                _ => "ALTER TABLE",
            })
        }
        NodeEnum::AlterObjectSchemaStmt(a) => {
            ddl::alter_object_schema(s, a, sql)?;
            UtilityResult::tag(match a.object_type {
                x if x == pb::ObjectType::ObjectView as i32 => "ALTER VIEW",
                x if x == pb::ObjectType::ObjectSequence as i32 => "ALTER SEQUENCE",
                x if x == pb::ObjectType::ObjectForeignTable as i32 => "ALTER FOREIGN TABLE",
                _ => "ALTER TABLE",
            })
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectRole as i32 => {
            role::rename_role(s, r)?;
            UtilityResult::tag("ALTER ROLE")
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectFdw as i32 => {
            foreign::rename(s, r)?;
            UtilityResult::tag("ALTER FOREIGN DATA WRAPPER")
        }
        NodeEnum::RenameStmt(r) if r.rename_type == pb::ObjectType::ObjectForeignServer as i32 => {
            foreign::rename(s, r)?;
            UtilityResult::tag("ALTER SERVER")
        }
        NodeEnum::RenameStmt(r) => {
            ddl::rename(s, r, sql)?;
            UtilityResult::tag(match r.rename_type {
                52 => "ALTER VIEW",
                21 => "ALTER INDEX",
                38 => "ALTER SEQUENCE",
                37 => "ALTER SCHEMA",
                _ => "ALTER TABLE",
            })
        }
        NodeEnum::VariableSetStmt(v) => {
            set_variable(s, v)?;
            UtilityResult::tag(if v.kind == 5 || v.kind == 6 { "RESET" } else { "SET" })
        }
        NodeEnum::VariableShowStmt(v) => show_variable(s, &v.name),
        NodeEnum::VacuumStmt(v) => {
            check_relations_exist(s, &v.rels, sql)?;
            warn_not_owned(s, v, sql)?;
            UtilityResult::tag(if v.is_vacuumcmd { "VACUUM" } else { "ANALYZE" })
        }
        NodeEnum::CheckPointStmt(_) => {
            s.cluster.engine.sync_wal()?;
            UtilityResult::tag("CHECKPOINT")
        }
        NodeEnum::DiscardStmt(d) => {
            // DISCARD ALL includes UNLISTEN * (connection poolers reset with it).
            if d.target == pb::DiscardMode::DiscardAll as i32 {
                notify::unlisten(s, None);
            }
            UtilityResult::tag("DISCARD ALL")
        }
        NodeEnum::ConstraintsSetStmt(c) => {
            set_constraints(s, c)?;
            UtilityResult::tag("SET CONSTRAINTS")
        }
        NodeEnum::LockStmt(l) => {
            if !s.in_block.get() {
                return Err(PgError::new(sqlstate::NO_ACTIVE_SQL_TRANSACTION, "LOCK TABLE can only be used in transaction blocks"));
            }
            let d = ddl::Ddl::new(s, sql)?;
            for r in &l.relations {
                if let Some(NodeEnum::RangeVar(rv)) = &r.node {
                    let settings = s.settings.borrow();
                    let a = s.analyzer(&d.catalog, &settings, &[], sql);
                    let rel = a.range_var_relation(rv).map_err(utility_error)?;
                    // ACCESS SHARE .. ROW EXCLUSIVE don't conflict with
                    // writers: they share the lock DDL takes exclusively.
                    if l.mode >= 4 {
                        d.lock_relation(rel.oid)?;
                    } else {
                        s.txn()?.lock_shared(&ddl::relation_lock_key(rel.oid))?;
                    }
                }
            }
            UtilityResult::tag("LOCK TABLE")
        }
        NodeEnum::ExplainStmt(e) => explain::explain(s, e, sql),
        NodeEnum::DoStmt(d) => function::do_block(s, d, sql),
        NodeEnum::CreateFunctionStmt(c) => {
            function::create_function(s, c, sql)?;
            UtilityResult::tag(if c.is_procedure { "CREATE PROCEDURE" } else { "CREATE FUNCTION" })
        }
        NodeEnum::CallStmt(c) => function::call(s, c, sql),
        NodeEnum::CreateTrigStmt(c) => {
            trigger::create_trigger(s, c, sql)?;
            UtilityResult::tag(if c.isconstraint { "CREATE CONSTRAINT TRIGGER" } else { "CREATE TRIGGER" })
        }
        NodeEnum::CreateRoleStmt(c) => {
            role::create_role(s, c)?;
            UtilityResult::tag("CREATE ROLE")
        }
        NodeEnum::AlterRoleStmt(a) => {
            role::alter_role(s, a)?;
            UtilityResult::tag("ALTER ROLE")
        }
        NodeEnum::AlterRoleSetStmt(a) => {
            role::alter_role_set(s, a)?;
            UtilityResult::tag("ALTER ROLE")
        }
        NodeEnum::DropRoleStmt(d) => {
            role::drop_role(s, d)?;
            UtilityResult::tag("DROP ROLE")
        }
        NodeEnum::DropOwnedStmt(d) => {
            owned::drop_owned(s, d, sql)?;
            UtilityResult::tag("DROP OWNED")
        }
        NodeEnum::ReassignOwnedStmt(r) => {
            owned::reassign_owned(s, r)?;
            UtilityResult::tag("REASSIGN OWNED")
        }
        NodeEnum::GrantStmt(g) => {
            grant::grant(s, g, sql)?;
            UtilityResult::tag(if g.is_grant { "GRANT" } else { "REVOKE" })
        }
        NodeEnum::GrantRoleStmt(g) => {
            role::grant_role(s, g)?;
            UtilityResult::tag(if g.is_grant { "GRANT ROLE" } else { "REVOKE ROLE" })
        }
        NodeEnum::CreateExtensionStmt(_) => Err(PgError::unsupported("extensions")),
        NodeEnum::CopyStmt(_) => Err(PgError::unsupported("COPY")),
        // Channel names are identifiers, cut to NAMEDATALEN - 1 bytes as the lexer cuts them.
        NodeEnum::ListenStmt(l) => {
            notify::listen(s, &naming::truncate_identifier(&l.conditionname));
            UtilityResult::tag("LISTEN")
        }
        NodeEnum::UnlistenStmt(u) => {
            // UNLISTEN * parses to an empty name (a quoted "" is refused).
            let channel = naming::truncate_identifier(&u.conditionname);
            notify::unlisten(s, Some(channel.as_str()).filter(|c| !c.is_empty()));
            UtilityResult::tag("UNLISTEN")
        }
        NodeEnum::NotifyStmt(n) => {
            notify::notify(s, naming::truncate_identifier(&n.conditionname).into(), n.payload.as_str().into())?;
            UtilityResult::tag("NOTIFY")
        }
        NodeEnum::AlterOwnerStmt(a)
            if a.object_type == pb::ObjectType::ObjectFdw as i32 || a.object_type == pb::ObjectType::ObjectForeignServer as i32 =>
        {
            let tag = foreign::alter_owner(s, a)?;
            UtilityResult::tag(tag)
        }
        NodeEnum::CreateFdwStmt(c) => {
            foreign::create_wrapper(s, c)?;
            UtilityResult::tag("CREATE FOREIGN DATA WRAPPER")
        }
        NodeEnum::AlterFdwStmt(a) => {
            foreign::alter_wrapper(s, a)?;
            UtilityResult::tag("ALTER FOREIGN DATA WRAPPER")
        }
        NodeEnum::CreateForeignServerStmt(c) => {
            foreign::create_server(s, c)?;
            UtilityResult::tag("CREATE SERVER")
        }
        NodeEnum::AlterForeignServerStmt(a) => {
            foreign::alter_server(s, a)?;
            UtilityResult::tag("ALTER SERVER")
        }
        NodeEnum::CreateUserMappingStmt(c) => {
            foreign::create_user_mapping(s, c)?;
            UtilityResult::tag("CREATE USER MAPPING")
        }
        NodeEnum::AlterUserMappingStmt(a) => {
            foreign::alter_user_mapping(s, a)?;
            UtilityResult::tag("ALTER USER MAPPING")
        }
        NodeEnum::DropUserMappingStmt(d) => {
            foreign::drop_user_mapping(s, d)?;
            UtilityResult::tag("DROP USER MAPPING")
        }
        NodeEnum::CreateForeignTableStmt(c) => {
            foreign::create_foreign_table(s, c, sql)?;
            UtilityResult::tag("CREATE FOREIGN TABLE")
        }
        NodeEnum::ImportForeignSchemaStmt(i) => {
            foreign::import_foreign_schema(s, i)?;
            UtilityResult::tag("IMPORT FOREIGN SCHEMA")
        }
        NodeEnum::AlterOwnerStmt(a) => {
            let tag = ddl::alter_owner(s, a)?;
            UtilityResult::tag(tag)
        }
        NodeEnum::DeclareCursorStmt(d) => cursor::declare(s, d, sql),
        NodeEnum::FetchStmt(f) => cursor::fetch(s, f),
        NodeEnum::ClosePortalStmt(c) => cursor::close(s, c),
        other => Err(PgError::unsupported(format!("the {} statement", command_tag(other)))),
    }
}

fn is_write_utility(node: &NodeEnum) -> bool {
    !matches!(
        node,
        NodeEnum::VariableSetStmt(_)
            | NodeEnum::VariableShowStmt(_)
            | NodeEnum::ExplainStmt(_)
            | NodeEnum::DiscardStmt(_)
            | NodeEnum::LockStmt(_)
            | NodeEnum::ConstraintsSetStmt(_)
            | NodeEnum::DeclareCursorStmt(_)
            | NodeEnum::FetchStmt(_)
            | NodeEnum::ClosePortalStmt(_)
            // Rebuilds storage without changing what anyone reads (PostgreSQL's COMMAND_OK_IN_READ_ONLY_TXN).
            | NodeEnum::ReindexStmt(_)
            // LISTEN/NOTIFY write no data (COMMAND_OK_IN_READ_ONLY_TXN).
            | NodeEnum::ListenStmt(_)
            | NodeEnum::UnlistenStmt(_)
            | NodeEnum::NotifyStmt(_)
    )
}

/// SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE }.
///
/// A name is looked up like PostgreSQL's AfterTriggerSetState does: in its
/// schema, or in the first schema of the search path that has constraints
/// of that name; all of them are meant. Only deferrable constraints can be
/// deferred; making others immediate is allowed and changes nothing.
fn set_constraints(s: &mut SqlSession, c: &pb::ConstraintsSetStmt) -> PgResult<()> {
    if !s.in_block.get() {
        s.notices
            .borrow_mut()
            .push(PgError::warning("SET CONSTRAINTS can only be used in transaction blocks").with_code(sqlstate::NO_ACTIVE_SQL_TRANSACTION));
    }
    if c.constraints.is_empty() {
        return if s.in_block.get() { s.set_constraints(None, c.deferred) } else { Ok(()) };
    }
    let catalog = s.catalog()?;
    let mut oids = Vec::new();
    for n in &c.constraints {
        let Some(NodeEnum::RangeVar(rv)) = &n.node else { continue };
        let namespaces = if rv.schemaname.is_empty() {
            let settings = s.settings.borrow();
            s.analyzer(&catalog, &settings, &[], "").search_path()
        } else {
            let ns = catalog
                .namespace_by_name
                .get(&rv.schemaname)
                .copied()
                .ok_or_else(|| PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{}\" does not exist", rv.schemaname)))?;
            vec![ns]
        };
        let mut found = Vec::new();
        for ns in namespaces {
            for rel in catalog.relations.values().filter(|r| r.namespace == ns) {
                found.extend(rel.constraints.iter().filter(|k| k.name == rv.relname));
            }
            if !found.is_empty() {
                break;
            }
        }
        if found.is_empty() {
            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("constraint \"{}\" does not exist", rv.relname)));
        }
        for k in found {
            if k.deferrable {
                oids.push(k.oid);
            } else if c.deferred {
                return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("constraint \"{}\" is not deferrable", rv.relname)));
            }
        }
    }
    if s.in_block.get() {
        s.set_constraints(Some(&oids), c.deferred)?;
    }
    Ok(())
}

/// vacuum_is_relation_owner: VACUUM and ANALYZE skip, with a WARNING, the
/// named relations the user may not process (owner, superuser, or the
/// database's owner for a relation that is not shared).
fn warn_not_owned(s: &SqlSession, v: &pb::VacuumStmt, sql: &str) -> PgResult<()> {
    let catalog = s.catalog()?;
    let settings = s.settings.borrow();
    let a = s.analyzer(&catalog, &settings, &[], sql);
    let me = grant::current_grantee(s);
    let db_owner = s.cluster_catalog().databases.get(&s.db).map(|d| me.holds(d.owner)).unwrap_or(false);
    let verb = if v.is_vacuumcmd { "vacuum" } else { "analyze" };
    for r in &v.rels {
        let Some(NodeEnum::VacuumRelation(vr)) = &r.node else { continue };
        let Some(rv) = &vr.relation else { continue };
        let rel = a.range_var_relation(rv).map_err(utility_error)?;
        let shared = crate::catalog::system::is_shared(&rel);
        if me.holds(rel.owner) || (db_owner && !shared) {
            continue;
        }
        let who = if shared {
            "superuser"
        } else if rel.namespace == crate::catalog::PG_CATALOG_NAMESPACE {
            "superuser or database owner"
        } else {
            "table or database owner"
        };
        notice_warning(s, format!("skipping \"{}\" --- only {who} can {verb} it", rel.name));
    }
    Ok(())
}

/// Queues a WARNING for the client.
fn notice_warning(s: &SqlSession, message: String) {
    s.notices.borrow_mut().push(PgError::warning(message));
}

fn check_relations_exist(s: &SqlSession, rels: &[Node], sql: &str) -> PgResult<()> {
    let catalog = s.catalog()?;
    let settings = s.settings.borrow();
    let a = s.analyzer(&catalog, &settings, &[], sql);
    for r in rels {
        if let Some(NodeEnum::VacuumRelation(vr)) = &r.node {
            if let Some(rv) = &vr.relation {
                a.range_var_relation(rv).map_err(utility_error)?;
            }
        }
    }
    Ok(())
}

/// The command tag PostgreSQL reports for a statement.
pub fn command_tag(node: &NodeEnum) -> String {
    if let NodeEnum::CreateTableAsStmt(c) = node {
        return if c.is_select_into { "SELECT INTO" } else { "CREATE TABLE AS" }.to_string();
    }
    let dbg = format!("{node:?}");
    let name = dbg.split('(').next().unwrap_or("");
    let words = match name {
        "SelectStmt" => "SELECT",
        "InsertStmt" => "INSERT",
        "UpdateStmt" => "UPDATE",
        "DeleteStmt" => "DELETE",
        "CreateStmt" => "CREATE TABLE",
        "DropStmt" => "DROP",
        "TruncateStmt" => "TRUNCATE TABLE",
        "IndexStmt" => "CREATE INDEX",
        "ViewStmt" => "CREATE VIEW",
        "AlterTableStmt" => "ALTER TABLE",
        "CreateSeqStmt" => "CREATE SEQUENCE",
        "CreatedbStmt" => "CREATE DATABASE",
        "CreateRoleStmt" => "CREATE ROLE",
        "AlterRoleStmt" | "AlterRoleSetStmt" => "ALTER ROLE",
        "DropRoleStmt" => "DROP ROLE",
        "DropdbStmt" => "DROP DATABASE",
        "VacuumStmt" => "VACUUM",
        "CopyStmt" => "COPY",
        "CreateFunctionStmt" => "CREATE FUNCTION",
        "CreateTrigStmt" => "CREATE TRIGGER",
        "MergeStmt" => "MERGE",
        "CallStmt" => "CALL",
        "AlterSystemStmt" => "ALTER SYSTEM",
        "ReindexStmt" => "REINDEX",
        "ClusterStmt" => "CLUSTER",
        "CreateTableSpaceStmt" => "CREATE TABLESPACE",
        "CreateTypeStmt" | "CompositeTypeStmt" | "CreateEnumStmt" | "CreateRangeStmt" => "CREATE TYPE",
        "CreateDomainStmt" => "CREATE DOMAIN",
        "RuleStmt" => "CREATE RULE",
        "CreatePolicyStmt" => "CREATE POLICY",
        "CreatePublicationStmt" => "CREATE PUBLICATION",
        "CreateSubscriptionStmt" => "CREATE SUBSCRIPTION",
        "AlterPublicationStmt" => "ALTER PUBLICATION",
        "AlterSubscriptionStmt" => "ALTER SUBSCRIPTION",
        "DropSubscriptionStmt" => "DROP SUBSCRIPTION",
        "RefreshMatViewStmt" => "REFRESH MATERIALIZED VIEW",
        "SecLabelStmt" => "SECURITY LABEL",
        "CreateCastStmt" => "CREATE CAST",
        "CreateOpClassStmt" => "CREATE OPERATOR CLASS",
        "DefineStmt" => "CREATE AGGREGATE or OPERATOR",
        "LoadStmt" => "LOAD",
        _ => name,
    };
    words.to_string()
}

// ---------------------------------------------------------------- SET / SHOW

fn set_value_text(name: &str, args: &[Node]) -> PgResult<String> {
    let list_quote = name.eq_ignore_ascii_case("search_path");
    let mut parts = Vec::new();
    for a in args {
        let v = match &a.node {
            Some(NodeEnum::AConst(c)) => const_text(&Node { node: Some(NodeEnum::AConst(c.clone())) }).unwrap_or_default(),
            Some(NodeEnum::TypeCast(tc)) => {
                // SET TIME ZONE INTERVAL '...' HOUR TO MINUTE
                let inner = tc.arg.as_deref().and_then(const_text).unwrap_or_default();
                // An interval offset counts east of UTC, unlike a POSIX
                // offset string, so hand it on in the form check_timezone
                // reads as an interval.
                if !name.eq_ignore_ascii_case("timezone") {
                    return Err(PgError::syntax(format!("invalid value for parameter \"{name}\"")));
                }
                format!("interval '{}'", inner.replace('\'', "''"))
            }
            _ => return Err(PgError::syntax(format!("invalid value for parameter \"{name}\""))),
        };
        parts.push(if list_quote { crate::functions::quote_ident(&v) } else { v });
    }
    Ok(parts.join(", "))
}

fn set_variable(s: &mut SqlSession, v: &pb::VariableSetStmt) -> PgResult<()> {
    let name = v.name.as_str();
    match v.kind {
        // SET name = value / TO DEFAULT / RESET
        1 | 2 | 5 => {
            if name.eq_ignore_ascii_case("transaction_isolation") || name.eq_ignore_ascii_case("transaction_read_only") {
                return Err(PgError::unsupported(format!("SET {name} (use SET TRANSACTION)")));
            }
            let canonical = crate::settings::lookup_def(name).map(|d| d.name.clone()).unwrap_or_else(|| name.to_string());
            s.remember_setting(&canonical, v.is_local && s.in_block.get());
            if v.is_local && !s.in_block.get() {
                s.notices.borrow_mut().push(PgError::warning("SET LOCAL can only be used in transaction blocks").with_code(sqlstate::NO_ACTIVE_SQL_TRANSACTION));
                return Ok(());
            }
            let mut settings = s.settings.borrow_mut();
            if v.kind == 1 {
                let value = set_value_text(name, &v.args)?;
                let value = if name.eq_ignore_ascii_case("timezone") && value.eq_ignore_ascii_case("local") {
                    settings.reset(name)?;
                    return Ok(());
                } else {
                    value
                };
                settings.set(name, &value)?;
            } else {
                settings.reset(name)?;
            }
            Ok(())
        }
        // RESET ALL
        6 => {
            s.remember_all_settings();
            s.settings.borrow_mut().reset_all();
            Ok(())
        }
        // SET TRANSACTION / SESSION CHARACTERISTICS: handled by the protocol session.
        4 => Err(PgError::internal("SET TRANSACTION reached the utility executor")),
        _ => Err(PgError::unsupported("SET ... FROM CURRENT")),
    }
}

fn show_variable(s: &SqlSession, name: &str) -> PgResult<UtilityResult> {
    let settings = s.settings.borrow();
    if name.eq_ignore_ascii_case("all") {
        let cols = vec![
            OutputColumn { name: "name".into(), ty: SqlType::new(oid::TEXT), origin: None },
            OutputColumn { name: "setting".into(), ty: SqlType::new(oid::TEXT), origin: None },
            OutputColumn { name: "description".into(), ty: SqlType::new(oid::TEXT), origin: None },
        ];
        let mut rows = Vec::new();
        for d in crate::settings::all_defs() {
            let v = settings.show(&d.name).unwrap_or_default();
            rows.push(vec![Datum::text(&d.name), Datum::text(&v), Datum::text(&d.short_desc)]);
        }
        return Ok(UtilityResult { tag: "SHOW".into(), rows: Some((cols, rows)) });
    }
    let (label, value) = match name.to_ascii_lowercase().as_str() {
        "transaction_isolation" => (
            "transaction_isolation".to_string(),
            match s.isolation() {
                Some(tusk_storage::Isolation::RepeatableRead) => "repeatable read".to_string(),
                Some(tusk_storage::Isolation::Serializable) => "serializable".to_string(),
                Some(tusk_storage::Isolation::ReadCommitted) => "read committed".to_string(),
                Some(tusk_storage::Isolation::ReadUncommitted) => "read uncommitted".to_string(),
                None => settings.show("default_transaction_isolation")?,
            },
        ),
        "transaction_read_only" => ("transaction_read_only".to_string(), if s.read_only { "on" } else { "off" }.to_string()),
        "transaction_deferrable" if s.in_transaction() => ("transaction_deferrable".to_string(), if s.deferrable { "on" } else { "off" }.to_string()),
        _ => {
            let label = crate::settings::lookup_def(name).map(|d| d.name.clone()).unwrap_or_else(|| name.to_string());
            (label, settings.show(name)?)
        }
    };
    Ok(UtilityResult {
        tag: "SHOW".into(),
        rows: Some((vec![OutputColumn { name: label, ty: SqlType::new(oid::TEXT), origin: None }], vec![vec![Datum::text(&value)]])),
    })
}
