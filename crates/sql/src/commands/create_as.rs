//! CREATE TABLE ... AS query and SELECT ... INTO.
//!
//! PostgreSQL plans the query, creates a table whose columns are the
//! query's output columns (names overridable by the column list, types with
//! their typmods, `unknown` literals becoming `text`), then inserts the rows
//! in the same transaction. Tusk does exactly that with its own pieces: the
//! analyzer gives the output columns, CREATE TABLE builds the relation, and
//! an INSERT ... query fills it, so the new table gets every storage and
//! catalog property an ordinary table has.

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{oid, PgError, PgResult};

use crate::catalog::builtins;
use crate::parser::{self, ParsedStatement};
use crate::session::SqlSession;

/// Runs the statement; returns the number of rows stored, or None for WITH NO DATA.
pub fn create_table_as(s: &mut SqlSession, stmt: &pb::CreateTableAsStmt, sql: &str) -> PgResult<Option<u64>> {
    if stmt.objtype == pb::ObjectType::ObjectMatview as i32 {
        return Err(PgError::unsupported("materialized views"));
    }
    let into = stmt.into.as_deref().ok_or_else(|| PgError::internal("CREATE TABLE AS without a target"))?;
    let rel = into.rel.as_ref().ok_or_else(|| PgError::internal("CREATE TABLE AS without a name"))?;
    let query = stmt.query.as_deref().and_then(|n| n.node.clone()).ok_or_else(|| PgError::internal("CREATE TABLE AS without a query"))?;
    if into.access_method.as_str() != "" && into.access_method != "heap" {
        return Err(PgError::unsupported(format!("table access method \"{}\"", into.access_method)));
    }
    if !into.table_space_name.is_empty() {
        return Err(PgError::unsupported("tablespaces"));
    }

    // The query's shape decides the columns.
    let query_stmt = ParsedStatement { node: query.clone(), location: 0, len: 0 };
    let (planned, _) = s.plan_query(&query_stmt, sql, &[])?;
    let names: Vec<String> = into
        .col_names
        .iter()
        .map(|n| match &n.node {
            Some(NodeEnum::String(v)) => Ok(v.sval.clone()),
            _ => Err(PgError::internal("column name list holds a non-name")),
        })
        .collect::<PgResult<_>>()?;
    if names.len() > planned.columns.len() {
        return Err(PgError::syntax("too many column names were specified"));
    }
    let mut defs = Vec::with_capacity(planned.columns.len());
    for (i, c) in planned.columns.iter().enumerate() {
        let name = names.get(i).unwrap_or(&c.name);
        // An unknown-typed literal would make an unusable column; PostgreSQL
        // stores it as text.
        let (ty, typmod) = if c.ty.oid == oid::UNKNOWN { (oid::TEXT, -1) } else { (c.ty.oid, c.ty.typmod) };
        defs.push(format!("{} {}", crate::functions::quote_ident(name), crate::analyzer::types::format_type(builtins(), ty, typmod)));
    }

    // The table, built by CREATE TABLE from a definition in SQL so that it
    // takes the same path (name checks, temp schema, storage) as any other.
    let definition = format!("CREATE TABLE t ({})", defs.join(", "));
    let parsed = parser::parse(&definition)?;
    let Some(ParsedStatement { node: NodeEnum::CreateStmt(mut create), .. }) = parsed.into_iter().next() else {
        return Err(PgError::internal("CREATE TABLE AS produced no table definition"));
    };
    create.relation = Some(rel.clone());
    create.options = into.options.clone();
    create.oncommit = into.on_commit;
    create.if_not_exists = stmt.if_not_exists;
    let existed = stmt.if_not_exists && super::ddl::table_name_taken(s, rel, sql)?;
    super::ddl::create_table(s, &create, sql)?;
    if existed {
        // create_table has already said "relation ... already exists, skipping".
        return Ok(None);
    }
    if into.skip_data {
        return Ok(None);
    }

    // The rows, through INSERT so that defaults, constraints and indexes
    // apply as they would to any insert.
    let insert = pb::InsertStmt {
        relation: Some(rel.clone()),
        select_stmt: Some(Box::new(Node { node: Some(query) })),
        r#override: pb::OverridingKind::OverridingNotSet as i32,
        ..Default::default()
    };
    let insert_stmt = ParsedStatement { node: NodeEnum::InsertStmt(Box::new(insert)), location: 0, len: 0 };
    let (planned, _) = s.plan_query(&insert_stmt, sql, &[])?;
    let mut run = s.start_query(planned, vec![])?;
    run.fetch(s, 0, &mut |_| Ok(()))?;
    Ok(Some(run.rows_modified()))
}
