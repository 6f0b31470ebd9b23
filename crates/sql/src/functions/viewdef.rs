//! Queries back to SQL text, the way PostgreSQL 15's ruleutils.c prints
//! view definitions (pg_get_viewdef, psql's `\d+ view`) and the subqueries
//! inside expressions.
//!
//! A view is stored as the SELECT its creator wrote; it is analyzed again
//! and the typed query printed from the top: WITH, SELECT list, FROM with
//! joins, WHERE, GROUP BY, HAVING, set operations, ORDER BY and LIMIT, one
//! clause per line at PostgreSQL's indentation. As in PostgreSQL 15, a
//! view's column references are always qualified with their table's name
//! (the view's stored query carried two extra range table entries, OLD and
//! NEW, so it never had a single one).

use std::collections::HashMap;

use tusk_types::Datum;

use crate::catalog::Relation;
use crate::expr::{Expr, SubLinkKind};
use crate::query::{Distinct, FromItem, JoinKind, Query, RangeTblEntry, RteKind, SetOpKind, SetOpTree};

use super::ruleutils::{Deparser, JoinNames, NameScope, RteNames, PRETTYINDENT_JOIN, PRETTYINDENT_STD, PRETTYINDENT_VAR};
use super::Env;

/// pg_get_viewdef's text of a view: the query and a closing semicolon.
pub fn view_definition(env: &dyn Env, view: &Relation, pretty: bool) -> String {
    let Some(v) = &view.view else { return String::new() };
    let analyzed = super::catalog_fns::with_analyzer(env, |a| {
        let parsed = crate::parser::parse(&v.query)?;
        match parsed.into_iter().next().map(|p| p.node) {
            Some(pg_query::NodeEnum::SelectStmt(sel)) => a.analyze_select_stmt(&sel),
            _ => Err(tusk_types::PgError::internal("view definition is not a SELECT")),
        }
    });
    let Ok(q) = analyzed else { return format!(" {};", v.query) };
    let names: Vec<String> = view.live_columns().map(|(_, c)| c.name.clone()).collect();
    let mut d = Deparser::new(env, pretty);
    query_def(&mut d, &q, Some(&names), true, true, 0);
    d.buf.push(';');
    d.buf
}

/// print_function_sqlbody: a SQL-standard body printed back from its
/// analyzed statements: `RETURN expr` with every parenthesis, or BEGIN
/// ATOMIC with each statement indented on its own line. The function's
/// parameters print by name. None when a statement no longer analyzes
/// (what it read was dropped) or is of a kind not printed here.
pub fn sql_body_definition(env: &dyn Env, f: &crate::catalog::function::Function) -> Option<String> {
    let body = f.sql_body.as_deref()?;
    let params = crate::commands::function::BodyParams::of(f);
    let stmts = crate::parser::parse(body).ok()?;
    let queries: Vec<Query> =
        super::catalog_fns::with_analyzer_source(env, Some(&params), |a| stmts.iter().map(|st| a.analyze(&st.node)).collect()).ok()?;
    let names: Vec<String> = f.params.iter().filter(|p| p.is_input()).map(|p| p.name.clone()).collect();
    let mut d = Deparser::new(env, false);
    d.param_names = Some((f.name.clone(), names));
    // The function's own namespace, outside the statements: it has no
    // range table, but makes every column reference qualified.
    d.scopes.push(NameScope::default());
    if f.sql_body_return {
        d.indent_lines = false;
        return_statement(&mut d, queries.first()?, 0)?;
        return Some(d.buf);
    }
    d.buf.push_str("BEGIN ATOMIC\n");
    for (i, q) in queries.iter().enumerate() {
        if f.sql_body_return_stmts.contains(&i) {
            return_statement(&mut d, q, 1)?;
        } else {
            match q.command {
                crate::query::CommandKind::Select => query_def(&mut d, q, None, false, false, 1),
                crate::query::CommandKind::Insert => insert_query_def(&mut d, q, 1)?,
                _ => return None,
            }
        }
        d.buf.push_str(";\n");
    }
    d.buf.push_str("END");
    Some(d.buf)
}

/// A RETURN statement (PostgreSQL's isReturn query): its one expression.
fn return_statement(d: &mut Deparser, q: &Query, indent: i32) -> Option<()> {
    let saved = d.indent;
    d.indent = indent;
    let scope = scope_for(d, q);
    d.scopes.push(scope);
    if d.indent_lines {
        d.indent += PRETTYINDENT_STD;
        d.push(" ");
    }
    d.push("RETURN ");
    let t = q.targets.iter().find(|t| !t.junk)?;
    d.expr(&t.expr, true);
    d.scopes.pop();
    d.indent = saved;
    Some(())
}

/// get_insert_query_def: INSERT INTO with its column list, then its
/// SELECT, its VALUES rows or DEFAULT VALUES, and RETURNING. None for
/// what is not printed here (ON CONFLICT).
fn insert_query_def(d: &mut Deparser, q: &Query, indent: i32) -> Option<()> {
    let ins = q.insert.as_ref()?;
    if ins.on_conflict.is_some() {
        return None;
    }
    let target = q.rtable.get(q.result_rte?)?;
    let RteKind::Relation(rel) = &target.kind else { return None };
    let saved = (d.indent, d.varprefix);
    d.indent = indent;
    d.varprefix = true;
    let scope = scope_for(d, q);
    d.scopes.push(scope);
    if d.indent_lines {
        d.indent += PRETTYINDENT_STD;
        d.push(" ");
    }
    let relname = d.env.relation_name(rel.oid).unwrap_or_else(|| super::quote_ident(&rel.name));
    d.push(&format!("INSERT INTO {relname} "));
    if !ins.columns.is_empty() {
        let cols: Vec<String> = ins.columns.iter().filter_map(|&c| rel.columns.get(c)).map(|c| super::quote_ident(&c.name)).collect();
        d.push(&format!("({}) ", cols.join(", ")));
    }
    if ins.overriding_system {
        d.push("OVERRIDING SYSTEM VALUE ");
    }
    // The analyzer leaves the rows' source in the INSERT's FROM: the
    // SELECT as a subquery, several VALUES rows as a VALUES entry; one
    // VALUES row is the target list itself.
    let source = match q.from.as_slice() {
        [FromItem::Rte(i)] => q.rtable.get(*i).map(|r| &r.kind),
        _ => None,
    };
    match source {
        Some(RteKind::Subquery(sq)) => {
            let indent = d.indent;
            query_def(d, sq, None, false, false, indent);
        }
        Some(RteKind::Values(rows)) => values_def(d, rows),
        Some(_) => return None,
        None if ins.columns.is_empty() => d.push("DEFAULT VALUES"),
        None => {
            d.context_keyword("VALUES (", -PRETTYINDENT_STD, PRETTYINDENT_STD, 2);
            for (i, &c) in ins.columns.iter().enumerate() {
                if i > 0 {
                    d.push(", ");
                }
                let e = &q.targets.get(c)?.expr;
                d.expr(e, false);
            }
            d.push(")");
        }
    }
    if !q.returning.is_empty() {
        d.context_keyword(" RETURNING", -PRETTYINDENT_STD, PRETTYINDENT_STD, 1);
        let mut r = Query::new(crate::query::CommandKind::Select);
        r.targets = q.returning.clone();
        target_list(d, &r, None, false);
    }
    d.scopes.pop();
    (d.indent, d.varprefix) = saved;
    Some(())
}

/// get_query_def: a query at `indent`, inside the scopes already on the
/// deparser (a subquery sees its enclosing queries' names).
fn query_def(d: &mut Deparser, q: &Query, result_names: Option<&[String]>, col_names_visible: bool, top_view: bool, indent: i32) {
    let saved_indent = d.indent;
    let saved_prefix = d.varprefix;
    d.indent = indent;
    d.varprefix = top_view || !d.scopes.is_empty() || q.rtable.len() != 1;
    let scope = scope_for(d, q);
    d.scopes.push(scope);
    select_query_def(d, q, result_names, col_names_visible);
    d.scopes.pop();
    d.varprefix = saved_prefix;
    d.indent = saved_indent;
}

/// set_rtable_names: each entry's reference name, unique across this query
/// and the queries around it (a repeated name gets `_1`, `_2`, ...).
fn scope_for(d: &Deparser, q: &Query) -> NameScope {
    let mut used: HashMap<String, u32> = HashMap::new();
    for s in &d.scopes {
        for r in &s.rtes {
            if let Some(n) = &r.refname {
                used.insert(n.clone(), 0);
            }
        }
    }
    let mut rtes = Vec::with_capacity(q.rtable.len());
    for rte in &q.rtable {
        let base = match &rte.kind {
            RteKind::Join { .. } if !rte.has_alias => None,
            RteKind::Relation(rel) if !rte.has_alias => Some(rel.name.clone()),
            _ => Some(rte.alias.clone()),
        };
        let refname = base.map(|name| {
            if !used.contains_key(&name) {
                used.insert(name.clone(), 0);
                return name;
            }
            loop {
                let counter = used.get_mut(&name).map(|c| {
                    *c += 1;
                    *c
                });
                let candidate = format!("{name}_{}", counter.unwrap_or(1));
                if !used.contains_key(&candidate) {
                    used.insert(candidate.clone(), 0);
                    break candidate;
                }
            }
        });
        let join_columns = match &rte.kind {
            RteKind::Join { columns, .. } => Some(columns.clone()),
            _ => None,
        };
        rtes.push(RteNames { refname, columns: rte.col_names.clone(), join_columns });
    }
    let mut joins = Vec::new();
    for item in &q.from {
        collect_joins(q, item, &rtes, &mut joins);
    }
    NameScope { rtes, joins, inside: Vec::new() }
}

/// The joins of a FROM item whose columns outside them are referred to by
/// the join's names, outermost first (see `JoinNames`).
fn collect_joins(q: &Query, item: &FromItem, names: &[RteNames], out: &mut Vec<JoinNames>) {
    let FromItem::Join { left, right, rte, .. } = item else { return };
    let jrte = &q.rtable[*rte];
    let RteKind::Join { columns, .. } = &jrte.kind else { return };
    let mut members = Vec::new();
    item_members(left, &mut members);
    item_members(right, &mut members);
    let refname = if jrte.has_alias { names.get(*rte).and_then(|n| n.refname.clone()) } else { None };
    let nameable = columns
        .iter()
        .zip(&jrte.col_names)
        // An unnamed join's plain columns print as the input columns they are.
        .filter(|(e, _)| refname.is_some() || !matches!(e, Expr::Var(_)))
        .map(|(e, n)| (e.clone(), n.clone()))
        .collect();
    out.push(JoinNames { rte: *rte, refname, columns: nameable, members });
    collect_joins(q, left, names, out);
    collect_joins(q, right, names, out);
}

fn item_members(item: &FromItem, out: &mut Vec<usize>) {
    match item {
        FromItem::Rte(i) => out.push(*i),
        FromItem::Join { left, right, rte, .. } => {
            out.push(*rte);
            item_members(left, out);
            item_members(right, out);
        }
    }
}

/// How the query's top level names an output of its `*`: a column of an
/// aliased join as `j.col`, a merged column of an unnamed join as `col`,
/// any other table column as `table.col` (CREATE VIEW spells out a `*` so).
pub(crate) fn star_column_ref(q: &Query, e: &Expr) -> Option<Vec<String>> {
    let names: Vec<RteNames> = q.rtable.iter().map(|r| RteNames { refname: Some(r.alias.clone()), ..Default::default() }).collect();
    let mut joins = Vec::new();
    for item in &q.from {
        collect_joins(q, item, &names, &mut joins);
    }
    let through_join = joins.iter().find_map(|j| {
        if let Expr::Var(v) = e {
            if !j.members.contains(&v.rte) {
                return None;
            }
        }
        let (_, name) = j.columns.iter().find(|(x, _)| x == e)?;
        Some(j.refname.iter().cloned().chain(std::iter::once(name.clone())).collect())
    });
    if through_join.is_some() {
        return through_join;
    }
    let Expr::Var(v) = e else { return None };
    let rte = q.rtable.get(v.rte)?;
    let col = rte.col_names.get(v.col)?.clone();
    if rte.alias.is_empty() || matches!(rte.kind, RteKind::Join { .. }) {
        return Some(vec![col]);
    }
    Some(vec![rte.alias.clone(), col])
}

fn refname(d: &Deparser, rte: usize) -> Option<String> {
    d.scopes.last().and_then(|s| s.rtes.get(rte)).and_then(|r| r.refname.clone())
}

/// get_select_query_def
fn select_query_def(d: &mut Deparser, q: &Query, result_names: Option<&[String]>, col_names_visible: bool) {
    with_clause(d, q);
    let force_colno = if let Some(op) = &q.set_op {
        setop_query(d, op, q, result_names, col_names_visible);
        true
    } else {
        basic_select(d, q, result_names, col_names_visible);
        false
    };
    if !q.sort.is_empty() {
        d.context_keyword(" ORDER BY ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 1);
        for (i, k) in q.sort.iter().enumerate() {
            if i > 0 {
                d.push(", ");
            }
            if force_colno {
                d.push(&(k.target + 1).to_string());
            } else if let Some(t) = q.targets.get(k.target) {
                sort_group_expr(d, &t.expr);
            }
            d.push_sort_options(k.descending, k.nulls_first);
        }
    }
    if let Some(o) = &q.offset {
        d.context_keyword(" OFFSET ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 0);
        limit_expr(d, o);
    }
    if let Some(l) = &q.limit {
        if q.with_ties {
            d.context_keyword(" FETCH FIRST ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 0);
            limit_expr(d, l);
            d.push(" ROWS WITH TIES");
        } else {
            d.context_keyword(" LIMIT ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 0);
            match l {
                Expr::Const(Datum::Null, _) => d.push("ALL"),
                _ => limit_expr(d, l),
            }
        }
    }
    if q.row_lock {
        d.context_keyword(if q.row_lock_exclusive { " FOR UPDATE" } else { " FOR SHARE" }, -PRETTYINDENT_STD, PRETTYINDENT_STD, 0);
    }
}

/// A LIMIT or OFFSET count: PostgreSQL coerces it to bigint implicitly,
/// which does not show; the analyzer folded the literal into a bigint.
fn limit_expr(d: &mut Deparser, e: &Expr) {
    match e {
        Expr::Const(Datum::Int8(v), _) if (0..=i32::MAX as i64).contains(v) => d.push(&v.to_string()),
        _ => d.expr(e, false),
    }
}

/// get_with_clause
fn with_clause(d: &mut Deparser, q: &Query) {
    if q.ctes.is_empty() {
        return;
    }
    if d.indent_lines {
        d.indent += PRETTYINDENT_STD;
        d.push(" ");
    }
    let mut sep = if q.ctes.iter().any(|c| c.recursive) { "WITH RECURSIVE " } else { "WITH " };
    for c in &q.ctes {
        d.push(sep);
        d.push(&super::quote_ident(&c.name));
        d.push(" AS (");
        if d.indent_lines {
            d.context_keyword("", 0, 0, 0);
        }
        let indent = d.indent;
        query_def(d, &c.query, None, true, false, indent);
        if d.indent_lines {
            d.context_keyword("", 0, 0, 0);
        }
        d.push(")");
        sep = ", ";
    }
    if d.indent_lines {
        d.indent -= PRETTYINDENT_STD;
        d.context_keyword("", 0, 0, 0);
    } else {
        d.push(" ");
    }
}

/// get_setop_query
fn setop_query(d: &mut Deparser, op: &SetOpTree, q: &Query, result_names: Option<&[String]>, col_names_visible: bool) {
    match op {
        SetOpTree::Leaf(rte) => {
            let Some(RteKind::Subquery(sub)) = q.rtable.get(*rte).map(|r| &r.kind) else { return };
            // WITH, ORDER BY, FOR UPDATE and LIMIT need parentheses in a set operation.
            let paren = !sub.ctes.is_empty() || !sub.sort.is_empty() || sub.row_lock || sub.limit.is_some() || sub.offset.is_some();
            if paren {
                d.push("(");
            }
            let indent = d.indent;
            query_def(d, sub, result_names, col_names_visible, false, indent);
            if paren {
                d.push(")");
            }
        }
        SetOpTree::Op { kind, all, left, right, .. } => {
            // Parentheses when the operator changes on the left; always on the right.
            let paren_left = match left.as_ref() {
                SetOpTree::Op { kind: lk, all: la, .. } => !(lk == kind && la == all),
                SetOpTree::Leaf(_) => false,
            };
            let sub = if paren_left {
                d.push("(");
                d.context_keyword("", PRETTYINDENT_STD, 0, 0);
                PRETTYINDENT_STD
            } else {
                0
            };
            setop_query(d, left, q, result_names, col_names_visible);
            if paren_left {
                d.context_keyword(") ", -sub, 0, 0);
            } else if d.indent_lines {
                d.context_keyword("", -sub, 0, 0);
            } else {
                d.push(" ");
            }
            d.push(match kind {
                SetOpKind::Union => "UNION ",
                SetOpKind::Intersect => "INTERSECT ",
                SetOpKind::Except => "EXCEPT ",
            });
            if *all {
                d.push("ALL ");
            }
            let paren_right = matches!(right.as_ref(), SetOpTree::Op { .. });
            let sub = if paren_right {
                d.push("(");
                PRETTYINDENT_STD
            } else {
                0
            };
            d.context_keyword("", sub, 0, 0);
            setop_query(d, right, q, result_names, false);
            if d.indent_lines {
                d.indent -= sub;
            }
            if paren_right {
                d.context_keyword(")", 0, 0, 0);
            }
        }
    }
}

/// get_basic_select_query
fn basic_select(d: &mut Deparser, q: &Query, result_names: Option<&[String]>, col_names_visible: bool) {
    if d.indent_lines {
        d.indent += PRETTYINDENT_STD;
        d.push(" ");
    }
    // SELECT * FROM (VALUES ...) prints as the VALUES list.
    if let Some(rows) = simple_values(q, result_names) {
        values_def(d, rows);
        return;
    }
    d.push("SELECT");
    match &q.distinct {
        Distinct::None => {}
        Distinct::All => d.push(" DISTINCT"),
        Distinct::On(targets) => {
            d.push(" DISTINCT ON (");
            for (i, t) in targets.iter().enumerate() {
                if i > 0 {
                    d.push(", ");
                }
                if let Some(t) = q.targets.get(*t) {
                    sort_group_expr(d, &t.expr);
                }
            }
            d.push(")");
        }
    }
    target_list(d, q, result_names, col_names_visible);
    from_clause(d, q);
    if let Some(w) = &q.quals {
        d.context_keyword(" WHERE ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 1);
        d.expr(w, false);
    }
    if !q.group_by.is_empty() {
        d.context_keyword(" GROUP BY ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 1);
        for (i, g) in q.group_by.iter().enumerate() {
            if i > 0 {
                d.push(", ");
            }
            sort_group_expr(d, g);
        }
    }
    if let Some(h) = &q.having {
        d.context_keyword(" HAVING ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 0);
        d.expr(h, false);
    }
}

/// get_simple_values_rte: a query that only returns a VALUES list's columns.
fn simple_values<'q>(q: &'q Query, result_names: Option<&[String]>) -> Option<&'q Vec<Vec<Expr>>> {
    let [FromItem::Rte(i)] = q.from.as_slice() else { return None };
    let rte = q.rtable.get(*i)?;
    let RteKind::Values(rows) = &rte.kind else { return None };
    if q.quals.is_some() || !q.group_by.is_empty() || q.having.is_some() || q.distinct != Distinct::None || q.rtable.len() != 1 {
        return None;
    }
    let outputs: Vec<_> = q.output().collect();
    if outputs.len() != rte.col_names.len() {
        return None;
    }
    for (n, t) in outputs.iter().enumerate() {
        match &t.expr {
            Expr::Var(v) if v.rte == *i && v.col == n && v.levels_up == 0 => {}
            _ => return None,
        }
        // The column names must be VALUES' own, or the view's.
        let expected = result_names.and_then(|r| r.get(n)).map(String::as_str).unwrap_or(t.name.as_str());
        if rte.col_names[n] != expected {
            return None;
        }
    }
    Some(rows)
}

/// get_values_def
fn values_def(d: &mut Deparser, rows: &[Vec<Expr>]) {
    d.push("VALUES ");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            d.push(", ");
        }
        d.push("(");
        for (j, e) in row.iter().enumerate() {
            if j > 0 {
                d.push(",");
            }
            d.expr(e, false);
        }
        d.push(")");
    }
}

/// get_target_list: one output column per line (pretty printing with a
/// wrap column of 0 breaks before every column but the first).
fn target_list(d: &mut Deparser, q: &Query, result_names: Option<&[String]>, col_names_visible: bool) {
    let mut sep = " ";
    let mut colno = 0;
    for t in q.targets.iter().filter(|t| !t.junk) {
        d.push(sep);
        sep = ", ";
        colno += 1;
        let outer = std::mem::take(&mut d.buf);
        let joined = d.join_column(&t.expr);
        let attname = match &t.expr {
            _ if joined.is_some() => joined,
            Expr::Var(v) => d.var(v.rte, v.col, v.levels_up),
            e => {
                d.expr(e, true);
                if col_names_visible {
                    None
                } else {
                    Some("?column?".to_string())
                }
            }
        };
        let colname = result_names.and_then(|r| r.get(colno - 1)).cloned().unwrap_or_else(|| t.name.clone());
        if attname.as_deref() != Some(colname.as_str()) {
            d.push(&format!(" AS {}", super::quote_ident(&colname)));
        }
        let field = std::mem::replace(&mut d.buf, outer);
        if d.indent_lines {
            if field.starts_with('\n') {
                while d.buf.ends_with(' ') {
                    d.buf.pop();
                }
            } else if colno > 1 {
                // The wrap column is 0: every column after the first on a line of its own.
                d.context_keyword("", -PRETTYINDENT_STD, PRETTYINDENT_STD, PRETTYINDENT_VAR);
            }
        }
        d.push(&field);
    }
}

/// get_from_clause
fn from_clause(d: &mut Deparser, q: &Query) {
    for (i, item) in q.from.iter().enumerate() {
        if i == 0 {
            d.context_keyword(" FROM ", -PRETTYINDENT_STD, PRETTYINDENT_STD, 2);
            from_item(d, q, item);
        } else {
            d.push(", ");
            let outer = std::mem::take(&mut d.buf);
            from_item(d, q, item);
            let text = std::mem::replace(&mut d.buf, outer);
            if d.indent_lines {
                if text.starts_with('\n') {
                    while d.buf.ends_with(' ') {
                        d.buf.pop();
                    }
                } else {
                    d.context_keyword("", -PRETTYINDENT_STD, PRETTYINDENT_STD, PRETTYINDENT_VAR);
                }
            }
            d.push(&text);
        }
    }
}

/// Number of columns a FROM item shows.
fn item_width(q: &Query, item: &FromItem) -> usize {
    match item {
        FromItem::Rte(i) | FromItem::Join { rte: i, .. } => q.rtable.get(*i).map(|r| r.col_names.len()).unwrap_or(0),
    }
}

/// get_from_clause_item
fn from_item(d: &mut Deparser, q: &Query, item: &FromItem) {
    match item {
        FromItem::Rte(i) => {
            let rte = &q.rtable[*i];
            let refname = refname(d, *i).unwrap_or_else(|| rte.alias.clone());
            let mut print_alias = rte.has_alias;
            match &rte.kind {
                RteKind::Relation(rel) => {
                    d.push(&d.env.relation_name(rel.oid).unwrap_or_else(|| super::quote_ident(&rel.name)));
                    print_alias |= refname != rel.name;
                }
                RteKind::Subquery(sub) => match sub.expanded_view.and_then(|v| d.env.catalog().relation(v).cloned()) {
                    Some(view) => {
                        d.push(&d.env.relation_name(view.oid).unwrap_or_else(|| super::quote_ident(&view.name)));
                        print_alias |= refname != view.name;
                    }
                    // A WITH query referenced by name (the analyzer inlines it).
                    None if !rte.has_alias && q.ctes.iter().any(|c| c.name == rte.alias) => {
                        d.push(&super::quote_ident(&rte.alias));
                        print_alias = refname != rte.alias;
                    }
                    None => {
                        if rte.lateral {
                            d.push("LATERAL ");
                        }
                        d.push("(");
                        let indent = d.indent;
                        query_def(d, sub, None, true, false, indent);
                        d.push(")");
                        print_alias = true;
                    }
                },
                RteKind::Function { call, .. } => {
                    d.expr(call, true);
                    print_alias = true;
                }
                RteKind::Values(rows) => {
                    d.push("(");
                    values_def(d, rows);
                    d.push(")");
                    print_alias = true;
                }
                RteKind::Cte { .. } => d.push(&super::quote_ident(&rte.alias)),
                RteKind::NamedTuplestore { name } => {
                    d.push(&super::quote_ident(name));
                    print_alias |= refname != *name;
                }
                RteKind::Join { .. } => {}
            }
            if print_alias {
                d.push(" ");
                d.push(&super::quote_ident(&refname));
                column_aliases(d, rte);
            }
        }
        FromItem::Join { kind, left, right, quals, rte } => {
            // Inside the join its inputs are visible under their own names.
            if let Some(scope) = d.scopes.last_mut() {
                scope.inside.push(*rte);
            }
            let jrte = &q.rtable[*rte];
            let right_needs_paren = d.pretty && !matches!(right.as_ref(), FromItem::Rte(_)) && !matches!(right.as_ref(), FromItem::Join { rte: r, .. } if q.rtable[*r].has_alias);
            if !d.pretty || jrte.has_alias {
                d.push("(");
            }
            from_item(d, q, left);
            let keyword = match kind {
                JoinKind::Inner if quals.is_some() => " JOIN ",
                JoinKind::Inner => " CROSS JOIN ",
                JoinKind::Left => " LEFT JOIN ",
                JoinKind::Right => " RIGHT JOIN ",
                JoinKind::Full => " FULL JOIN ",
                JoinKind::Semi | JoinKind::Anti => " JOIN ",
            };
            d.context_keyword(keyword, -PRETTYINDENT_STD, PRETTYINDENT_STD, PRETTYINDENT_JOIN);
            if right_needs_paren {
                d.push("(");
            }
            from_item(d, q, right);
            if right_needs_paren {
                d.push(")");
            }
            // USING merges its columns: the join shows fewer than its inputs.
            let merged = (item_width(q, left) + item_width(q, right)).saturating_sub(jrte.col_names.len());
            if merged > 0 {
                let names: Vec<String> = jrte.col_names[..merged].iter().map(|n| super::quote_ident(n)).collect();
                d.push(&format!(" USING ({})", names.join(", ")));
            } else if let Some(on) = quals {
                d.push(" ON ");
                if !d.pretty {
                    d.push("(");
                }
                d.expr(on, false);
                if !d.pretty {
                    d.push(")");
                }
            } else if *kind != JoinKind::Inner {
                d.push(" ON TRUE");
            }
            if !d.pretty || jrte.has_alias {
                d.push(")");
            }
            if let Some(scope) = d.scopes.last_mut() {
                scope.inside.retain(|j| j != rte);
            }
            if jrte.has_alias {
                let name = refname(d, *rte).unwrap_or_else(|| jrte.alias.clone());
                d.push(" ");
                d.push(&super::quote_ident(&name));
                join_column_aliases(d, q, jrte);
            }
        }
    }
}

/// The column aliases of a join (`j(aa, bb)`): printed when the join's
/// columns are not called what its inputs call them. A column that is
/// an input's column is named after it; a merged USING column keeps its
/// name unless the others show it renamed.
fn join_column_aliases(d: &mut Deparser, q: &Query, jrte: &RangeTblEntry) {
    let RteKind::Join { columns, .. } = &jrte.kind else { return };
    let renamed = columns.iter().zip(&jrte.col_names).any(|(e, name)| match e {
        Expr::Var(v) if v.levels_up == 0 => q.rtable.get(v.rte).and_then(|r| r.col_names.get(v.col)).is_some_and(|orig| orig != name),
        _ => false,
    });
    if renamed {
        let names: Vec<String> = jrte.col_names.iter().map(|n| super::quote_ident(n)).collect();
        d.push(&format!("({})", names.join(", ")));
    }
}

/// Column aliases of a FROM item whose columns were renamed (`x(a, b)`).
fn column_aliases(d: &mut Deparser, rte: &RangeTblEntry) {
    let original: Vec<String> = match &rte.kind {
        RteKind::Relation(rel) => rel.live_columns().map(|(_, c)| c.name.clone()).collect(),
        RteKind::Subquery(sub) => match sub.expanded_view.and_then(|v| d.env.catalog().relation(v).cloned()) {
            Some(view) => view.live_columns().map(|(_, c)| c.name.clone()).collect(),
            None => sub.output().map(|t| t.name.clone()).collect(),
        },
        RteKind::Values(_) | RteKind::Function { .. } => Vec::new(),
        _ => return,
    };
    if original == rte.col_names {
        return;
    }
    let names: Vec<String> = rte.col_names.iter().map(|n| super::quote_ident(n)).collect();
    d.push(&format!("({})", names.join(", ")));
}

/// get_rule_sortgroupclause for an expression: constants with their type
/// (a bare integer would mean a column number), anything but a column in
/// parentheses.
fn sort_group_expr(d: &mut Deparser, e: &Expr) {
    match e {
        Expr::Const(v, ty) => d.constant(v, *ty, 1),
        Expr::Var(_) => d.expr(e, true),
        _ => {
            let paren = d.pretty || matches!(e, Expr::Func { .. } | Expr::Agg(_) | Expr::Window(_));
            if paren {
                d.push("(");
            }
            d.expr(e, true);
            if paren {
                d.push(")");
            }
        }
    }
}

/// get_sublink_expr
pub(crate) fn sublink(d: &mut Deparser, e: &Expr) {
    let Expr::SubLink { kind, test, op, query, .. } = e else {
        d.push("(SubPlan)");
        return;
    };
    d.push(if *kind == SubLinkKind::Array { "ARRAY(" } else { "(" });
    let opname = op.as_ref().and_then(|f| crate::catalog::builtins().operator_name_of_proc(f.oid)).unwrap_or("=");
    if let Some(t) = test {
        match t.as_ref() {
            Expr::Row { args, .. } => {
                d.push("(");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        d.push(", ");
                    }
                    d.expr(a, true);
                }
                d.push(")");
            }
            t => d.expr(t, true),
        }
    }
    let paren = match kind {
        SubLinkKind::Exists => {
            d.push("EXISTS ");
            true
        }
        SubLinkKind::Any => {
            if opname == "=" {
                d.push(" IN ");
            } else {
                d.push(&format!(" {opname} ANY "));
            }
            true
        }
        SubLinkKind::All => {
            d.push(&format!(" {opname} ALL "));
            true
        }
        SubLinkKind::Expr | SubLinkKind::Array | SubLinkKind::Row => false,
    };
    if paren {
        d.push("(");
    }
    let indent = d.indent;
    query_def(d, query, None, false, false, indent);
    d.push(if paren { "))" } else { ")" });
}
