//! SELECT analysis (analyze.c's transformSelectStmt, parse_clause.c,
//! parse_target.c, parse_agg.c): FROM items and joins, the target list,
//! WHERE/GROUP BY/HAVING, ORDER BY, DISTINCT, LIMIT, VALUES, set
//! operations and WITH.

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::oid;
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::coerce::{self, CoercionContext};
use super::expr::{display_type, expr_location, figure_colname};
use super::{node_string, pos, Analyzer, NsItem};
use crate::catalog::RelKind;
use crate::expr::{Expr, Var};
use crate::query::*;

/// The rte index used by set-operation queries' targets: their output row
/// is the set operation's result.
pub const SETOP_RTE: usize = usize::MAX;

/// GROUP BY naming an output column that holds a window function: the
/// window runs after grouping, so it cannot define the groups.
fn check_no_window_in_group_by(e: &Expr) -> PgResult<()> {
    if e.any(&mut |x| matches!(x, Expr::Window(_))) {
        return Err(PgError::new(sqlstate::WINDOWING_ERROR, "window functions are not allowed in GROUP BY"));
    }
    Ok(())
}

fn sort_dir(sb: &pb::SortBy) -> (bool, bool) {
    let desc = sb.sortby_dir == 3;
    let nulls_first = match sb.sortby_nulls {
        2 => true,
        3 => false,
        _ => desc,
    };
    (desc, nulls_first)
}

impl<'a> Analyzer<'a> {
    pub(crate) fn transform_select_inner(&mut self, stmt: &pb::SelectStmt, resolve_unknowns: bool) -> PgResult<Query> {
        if let Some(w) = &stmt.with_clause {
            self.transform_with(w)?;
        }
        if stmt.into_clause.is_some() {
            return Err(PgError::unsupported("SELECT INTO"));
        }
        let op = stmt.op;
        if op >= 2 {
            return self.transform_set_operation(stmt);
        }
        if !stmt.values_lists.is_empty() {
            return self.transform_values(stmt, resolve_unknowns);
        }
        let mut q = Query::new(CommandKind::Select);
        // FROM
        for item in &stmt.from_clause {
            let (fi, items) = self.transform_from_item(item)?;
            self.check_duplicate_aliases(&items)?;
            self.level().namespace.extend(items);
            q.from.push(fi);
        }
        // WHERE
        if let Some(w) = &stmt.where_clause {
            self.level().agg_forbidden = Some("WHERE");
            let e = self.transform_expr(w)?;
            self.level().agg_forbidden = None;
            q.quals = Some(self.coerce_to_boolean(e, "WHERE", expr_location(w))?);
        }
        // WINDOW: named windows for the OVER clauses below.
        self.transform_window_clause(&stmt.window_clause)?;
        // Target list
        q.targets = self.transform_target_list(&stmt.target_list, resolve_unknowns)?;
        // GROUP BY
        for g in &stmt.group_clause {
            let e = self.transform_group_item(g, &q.targets)?;
            if !q.group_by.contains(&e) {
                q.group_by.push(e);
            }
        }
        // HAVING
        if let Some(h) = &stmt.having_clause {
            let saved = self.level().window_forbidden.replace("HAVING");
            let e = self.transform_expr(h);
            self.level().window_forbidden = saved;
            let e = e?;
            q.having = Some(self.coerce_to_boolean(e, "HAVING", expr_location(h))?);
        }
        // ORDER BY
        let distinct = !stmt.distinct_clause.is_empty();
        for s in &stmt.sort_clause {
            let key = self.transform_sort_item(s, &mut q.targets, distinct && stmt.distinct_clause.len() == 1 && stmt.distinct_clause[0].node.is_none())?;
            q.sort.push(key);
        }
        // DISTINCT / DISTINCT ON
        if distinct {
            if stmt.distinct_clause.len() == 1 && stmt.distinct_clause[0].node.is_none() {
                q.distinct = Distinct::All;
            } else {
                let mut on = Vec::new();
                for d in &stmt.distinct_clause {
                    let idx = self.target_for_expr_item(d, &mut q.targets, "DISTINCT ON")?;
                    on.push(idx);
                }
                // DISTINCT ON expressions must match the leading ORDER BY items.
                for (i, key) in q.sort.iter().enumerate().take(on.len()) {
                    if !on.contains(&key.target) {
                        return Err(PgError::new(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                        )
                        .with_position(pos(sort_location(&stmt.sort_clause[i]))));
                    }
                }
                q.distinct = Distinct::On(on);
            }
        }
        self.transform_limits(stmt, &mut q)?;
        if !stmt.locking_clause.is_empty() {
            self.check_locked_rels(&stmt.locking_clause)?;
            q.row_lock = true;
            // Several clauses: the strongest strength and wait policy win.
            for c in &stmt.locking_clause {
                let Some(NodeEnum::LockingClause(lc)) = &c.node else { continue };
                q.row_lock_wait = match (q.row_lock_wait, lc.wait_policy) {
                    (_, 3) | (LockWait::Error, _) => LockWait::Error,
                    (_, 2) | (LockWait::Skip, _) => LockWait::Skip,
                    _ => LockWait::Block,
                };
            }
            q.row_lock_exclusive = stmt.locking_clause.iter().any(|c| matches!(&c.node, Some(NodeEnum::LockingClause(lc)) if lc.strength >= 3));
            let strength = match stmt.locking_clause.first().and_then(|c| c.node.as_ref()) {
                Some(NodeEnum::LockingClause(lc)) => match lc.strength {
                    1 => "FOR KEY SHARE",
                    2 => "FOR SHARE",
                    3 => "FOR NO KEY UPDATE",
                    _ => "FOR UPDATE",
                },
                _ => "FOR UPDATE",
            };
            // CheckSelectLocking's order.
            let refuse = |what: &str| Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("{strength} is not allowed with {what}")));
            if q.distinct != Distinct::None {
                return refuse("DISTINCT clause");
            }
            if !q.group_by.is_empty() {
                return refuse("GROUP BY clause");
            }
            if q.having.is_some() {
                return refuse("HAVING clause");
            }
            if q.has_aggs || self.level_ref().has_aggs {
                return refuse("aggregate functions");
            }
            if self.level_ref().has_windows {
                return refuse("window functions");
            }
            if q.targets.iter().any(|t| t.expr.any(&mut |e| matches!(e, Expr::Func { func, .. } if func.imp.is_set()))) {
                return refuse("set-returning functions in the target list");
            }
        }
        q.has_aggs = self.level_ref().has_aggs;
        if q.has_aggs || !q.group_by.is_empty() || q.having.is_some() {
            self.check_grouping(&q)?;
        }
        Ok(q)
    }

    /// FOR UPDATE OF names must be FROM items of this query.
    fn check_locked_rels(&self, clauses: &[Node]) -> PgResult<()> {
        for c in clauses {
            let Some(NodeEnum::LockingClause(lc)) = &c.node else { continue };
            let strength = match lc.strength {
                1 => "FOR KEY SHARE",
                2 => "FOR SHARE",
                3 => "FOR NO KEY UPDATE",
                _ => "FOR UPDATE",
            };
            for r in &lc.locked_rels {
                let Some(NodeEnum::RangeVar(rv)) = &r.node else { continue };
                let level = self.level_ref();
                let found = level.namespace.iter().any(|ns| ns.rel_visible && level.rtable[ns.rte].alias == rv.relname);
                if !found {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!("relation \"{}\" in {strength} clause not found in FROM clause", rv.relname),
                    )
                    .with_position(pos(rv.location)));
                }
            }
        }
        Ok(())
    }

    fn transform_limits(&mut self, stmt: &pb::SelectStmt, q: &mut Query) -> PgResult<()> {
        if stmt.limit_option == 3 {
            if stmt.sort_clause.is_empty() {
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, "WITH TIES cannot be specified without ORDER BY clause"));
            }
            q.with_ties = true;
        }
        let limit_expr = |a: &mut Self, n: &Option<Box<Node>>, clause: &'static str| -> PgResult<Option<Expr>> {
            let Some(n) = n else { return Ok(None) };
            a.level().agg_forbidden = Some(clause);
            let e = a.transform_expr(n)?;
            a.level().agg_forbidden = None;
            if e.any(&mut |x| matches!(x, Expr::Var(v) if v.levels_up == 0)) {
                return Err(PgError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    format!("argument of {clause} must not contain variables"),
                )
                .with_position(pos(expr_location(n))));
            }
            // LIMIT NULL / LIMIT ALL: no limit.
            Ok(Some(a.coerce_to(e, SqlType::new(oid::INT8), CoercionContext::Assignment, expr_location(n))?))
        };
        q.limit = limit_expr(self, &stmt.limit_count, "LIMIT")?;
        q.offset = limit_expr(self, &stmt.limit_offset, "OFFSET")?;
        Ok(())
    }

    // ---------------------------------------------------------------- FROM

    fn check_duplicate_aliases(&self, new: &[NsItem]) -> PgResult<()> {
        let level = self.level_ref();
        for n in new.iter().filter(|n| n.rel_visible) {
            let name = &level.rtable[n.rte].alias;
            for existing in level.namespace.iter().filter(|e| e.rel_visible) {
                if &level.rtable[existing.rte].alias == name {
                    return Err(PgError::new(
                        sqlstate::DUPLICATE_ALIAS,
                        format!("table name \"{name}\" specified more than once"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// transformFromClauseItem: returns the join tree node and the
    /// namespace items it makes visible.
    pub(crate) fn transform_from_item(&mut self, node: &Node) -> PgResult<(FromItem, Vec<NsItem>)> {
        match &node.node {
            Some(NodeEnum::RangeVar(rv)) => {
                let rte = self.range_var_rte(rv)?;
                let idx = self.add_rte(rte);
                Ok((FromItem::Rte(idx), vec![NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false }]))
            }
            Some(NodeEnum::RangeSubselect(rs)) => {
                let alias = rs.alias.as_ref().ok_or_else(|| {
                    PgError::syntax("subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo.")
                })?;
                // Borrowed, not cloned: a clone per level made nested
                // subqueries quadratic in their depth.
                let sub: &pb::SelectStmt = match rs.subquery.as_deref().and_then(|n| n.node.as_ref()) {
                    Some(NodeEnum::SelectStmt(s)) => s,
                    _ => return Err(PgError::internal("subquery in FROM")),
                };
                // A non-LATERAL subquery cannot see its siblings in this FROM
                // clause; a LATERAL one sees the items before it (including
                // the left side of a join, otherwise hidden while the right
                // side is analyzed).
                let saved = std::mem::take(&mut self.level().namespace);
                if rs.lateral {
                    self.level().namespace = saved.iter().cloned().map(|mut n| {
                        n.lateral_only = false;
                        n
                    }).collect();
                }
                // An aggregate inside it that belongs to this level (its
                // arguments read only this level's columns, through LATERAL)
                // is refused (EXPR_KIND_FROM_SUBSELECT).
                let forbidden = self.level().agg_forbidden.replace("FROM clause of their own query level");
                let q = self.analyze_select_stmt(sub);
                self.level().agg_forbidden = forbidden;
                self.level().namespace = saved;
                let q = q?;
                let rte = self.subquery_rte(q, alias, rs.lateral)?;
                let idx = self.add_rte(rte);
                Ok((FromItem::Rte(idx), vec![NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false }]))
            }
            Some(NodeEnum::RangeFunction(rf)) => {
                let rte = self.function_rte(rf)?;
                let idx = self.add_rte(rte);
                Ok((FromItem::Rte(idx), vec![NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false }]))
            }
            Some(NodeEnum::JoinExpr(j)) => self.transform_join(j),
            _ => Err(PgError::unsupported("this kind of FROM item")),
        }
    }

    fn range_var_rte(&mut self, rv: &pb::RangeVar) -> PgResult<RangeTblEntry> {
        // WITH queries shadow tables of the same name.
        if rv.schemaname.is_empty() {
            if let Some(rte) = self.cte_rte(&rv.relname, rv.alias.as_ref())? {
                return Ok(rte);
            }
            // Then the query environment's named tuplestores (a trigger
            // function's transition tables), as scanNameSpaceForENR.
            if let Some(columns) = self.param_source.and_then(|p| p.named_relation(&rv.relname)) {
                let alias = rv.alias.as_ref();
                let (names, types): (Vec<String>, Vec<SqlType>) = columns.into_iter().unzip();
                if let Some(a) = alias {
                    if a.colnames.len() > names.len() {
                        return Err(PgError::new(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            format!("table \"{}\" has {} columns available but {} columns specified", a.aliasname, names.len(), a.colnames.len()),
                        ));
                    }
                }
                return Ok(RangeTblEntry {
                    kind: RteKind::NamedTuplestore { name: rv.relname.clone() },
                    alias: alias.map(|a| a.aliasname.clone()).unwrap_or_else(|| rv.relname.clone()),
                    has_alias: alias.is_some(),
                    col_names: apply_alias_cols(names, alias),
                    col_types: types,
                    lateral: false,
                    inh: false,
                });
            }
        }
        let rel = self.range_var_relation(rv)?;
        if rel.kind != RelKind::Index {
            self.note_perm(rel.oid, crate::catalog::acl::SELECT, false);
        }
        match rel.kind {
            RelKind::View => self.view_rte(&rel, rv.alias.as_ref()),
            RelKind::Table | RelKind::Sequence => {
                let mut rte = self.relation_rte(rel, rv.alias.as_ref())?;
                rte.inh = rv.inh;
                Ok(rte)
            }
            RelKind::ForeignTable => Err(crate::catalog::foreign::scan_error(self.env.catalog, &rel)),
            RelKind::Index => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is an index", rel.name))
                .with_position(pos(rv.location))),
            RelKind::CompositeType => Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is a composite type", rel.name))
                .with_position(pos(rv.location))),
        }
    }

    /// A view read in a query: its definition analyzed as a subquery
    /// (what PostgreSQL's rewriter makes of it).
    pub(crate) fn view_rte(&mut self, rel: &Arc<crate::catalog::Relation>, alias: Option<&pb::Alias>) -> PgResult<RangeTblEntry> {
        let has_alias = alias.is_some();
        let view = rel.view.as_ref().ok_or_else(|| PgError::internal("view without definition"))?;
        let parsed = crate::parser::parse(&view.query)?;
        let Some(NodeEnum::SelectStmt(sel)) = parsed.into_iter().next().map(|p| p.node) else {
            return Err(PgError::internal("view definition is not a SELECT"));
        };
        // The view's query sees nothing of the query that uses it.
        // Its relations are checked as the view's owner, and its
        // names were resolved when it was created.
        let recursive = self.expanding_views.contains(&rel.oid);
        if recursive && !self.defining_view {
            return Err(PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                format!("infinite recursion detected in rules for relation \"{}\"", rel.name),
            ));
        }
        let mut q = if recursive {
            // Only the view's columns matter to the definition.
            let mut q = Query::new(CommandKind::Select);
            q.targets = rel
                .live_columns()
                .map(|(_, c)| TargetEntry { expr: Expr::null(c.sql_type()), name: c.name.clone(), junk: false, origin: None })
                .collect();
            q
        } else {
            let saved_levels = std::mem::take(&mut self.levels);
            let saved_acl = (self.acl_user.take(), self.perm_as.replace(rel.owner));
            self.expanding_views.push(rel.oid);
            let q = self.analyze_select_stmt(&sel);
            self.expanding_views.pop();
            (self.acl_user, self.perm_as) = saved_acl;
            self.levels = saved_levels;
            q?
        };
        q.expanded_view = Some(rel.oid);
        // Output column names are the view's (which may have been renamed).
        let names: Vec<String> = rel.live_columns().map(|(_, c)| c.name.clone()).collect();
        for (t, n) in q.targets.iter_mut().filter(|t| !t.junk).zip(names.iter()) {
            t.name = n.clone();
        }
        let alias = alias.cloned().unwrap_or(pb::Alias { aliasname: rel.name.clone(), colnames: vec![] });
        let mut rte = self.subquery_rte(q, &alias, false)?;
        rte.has_alias = has_alias;
        Ok(rte)
    }

    fn cte_rte(&mut self, name: &str, alias: Option<&pb::Alias>) -> PgResult<Option<RangeTblEntry>> {
        for up in 0..self.levels.len() {
            let level = &self.levels[self.levels.len() - 1 - up];
            if let Some((rname, idx, names, types)) = &level.recursive_cte {
                if rname == name {
                    let rte = RangeTblEntry {
                        kind: RteKind::Cte { index: *idx, levels_up: up as u32, recursive_self: true },
                        alias: alias.map(|a| a.aliasname.clone()).unwrap_or_else(|| name.to_string()),
                        has_alias: alias.is_some(),
                        col_names: apply_alias_cols(names.clone(), alias),
                        col_types: types.clone(),
                        lateral: false,
                        inh: false,
                    };
                    return Ok(Some(rte));
                }
            }
            if let Some((idx, cte)) = level.ctes.iter().enumerate().find(|(_, c)| c.name == name) {
                if cte.modifying && cte.query.returning.is_empty() {
                    return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("WITH query \"{name}\" does not have a RETURNING clause")));
                }
                let kind = if cte.recursive || cte.modifying {
                    RteKind::Cte { index: idx, levels_up: up as u32, recursive_self: false }
                } else {
                    // Non-recursive WITH queries are inlined as subqueries;
                    // inlined `up` levels below where they were defined, what
                    // they reference outside themselves (other WITH queries,
                    // outer columns) is `up` levels further out.
                    let mut q = Arc::new((*cte.query).clone());
                    if up > 0 && escape(&q, &mut self.escape_memo)? > 0 {
                        shift_outer_refs(Arc::make_mut(&mut q), up as u32, 0, &mut self.escape_memo)?;
                    }
                    RteKind::Subquery(q)
                };
                let rte = RangeTblEntry {
                    kind,
                    alias: alias.map(|a| a.aliasname.clone()).unwrap_or_else(|| name.to_string()),
                    has_alias: alias.is_some(),
                    col_names: apply_alias_cols(cte.col_names.clone(), alias),
                    col_types: cte.col_types.clone(),
                    lateral: false,
                    inh: false,
                };
                return Ok(Some(rte));
            }
        }
        Ok(None)
    }

    pub(crate) fn subquery_rte(&mut self, q: Query, alias: &pb::Alias, lateral: bool) -> PgResult<RangeTblEntry> {
        let mut col_names: Vec<String> = q.output().map(|t| t.name.clone()).collect();
        let col_types: Vec<SqlType> = q.output().map(|t| t.expr.ty()).collect();
        if alias.colnames.len() > col_names.len() {
            return Err(PgError::new(
                sqlstate::INVALID_COLUMN_REFERENCE,
                format!(
                    "table \"{}\" has {} columns available but {} columns specified",
                    alias.aliasname,
                    col_names.len(),
                    alias.colnames.len()
                ),
            ));
        }
        for (i, c) in alias.colnames.iter().enumerate() {
            if let Some(n) = node_string(c) {
                col_names[i] = n.to_string();
            }
        }
        Ok(RangeTblEntry {
            kind: RteKind::Subquery(Arc::new(q)),
            alias: alias.aliasname.clone(),
            has_alias: true,
            col_names,
            col_types,
            lateral,
            inh: false,
        })
    }

    fn function_rte(&mut self, rf: &pb::RangeFunction) -> PgResult<RangeTblEntry> {
        if rf.is_rowsfrom || rf.functions.len() != 1 {
            return Err(PgError::unsupported("ROWS FROM"));
        }
        let Some(NodeEnum::List(pair)) = &rf.functions[0].node else { return Err(PgError::internal("function in FROM")) };
        let call = pair.items.first().ok_or_else(|| PgError::internal("function in FROM"))?;
        if rf.coldeflist.is_empty() {
            let saved = self.level().namespace.clone();
            for n in self.level().namespace.iter_mut() {
                n.lateral_only = false;
            }
            let multi = self.multi_arg_unnest(rf, call);
            self.level().namespace = saved;
            if let Some(rte) = multi? {
                return Ok(rte);
            }
        }
        if pair.items.get(1).map(|c| matches!(&c.node, Some(NodeEnum::List(l)) if !l.items.is_empty())).unwrap_or(false) {
            return Err(PgError::unsupported("column definition lists for functions in FROM"));
        }
        let coldefs = self.column_definition_list(&rf.coldeflist)?;
        // Functions in FROM are implicitly LATERAL: their arguments may
        // reference the FROM items before them.
        let saved = self.level().namespace.clone();
        for n in self.level().namespace.iter_mut() {
            n.lateral_only = false;
        }
        self.level().agg_forbidden = Some("functions in FROM");
        let e = self.transform_expr(call);
        self.level().agg_forbidden = None;
        self.level().namespace = saved;
        let e = e?;
        let fname = figure_colname(call);
        // chooseScalarFunctionAlias: a scalar result takes the name of the
        // function's one named OUT parameter, before any alias.
        let mut out_name = None;
        let mut e = e;
        if let Some(defs) = &coldefs {
            e = record_function_with_columns(self.env.catalog, e, defs, call_location(call))?;
        }
        // A function returning a named composite type yields its fields.
        let composite = if coldefs.is_none() { crate::catalog::types::composite_fields(crate::catalog::types::base_type(e.ty()).oid) } else { None };
        let (mut names, types) = match &e {
            _ if coldefs.is_some() => coldefs.clone().unwrap_or_default().into_iter().unzip(),
            _ if composite.is_some() => composite.as_deref().cloned().unwrap_or_default().into_iter().unzip(),
            Expr::Func { func, ty, args } => {
                let out_cols = super::expr::function_out_columns(self.env.catalog, func.oid, args).unwrap_or_default();
                if !out_cols.is_empty() && ty.oid == oid::RECORD {
                    out_cols.into_iter().unzip()
                } else {
                    out_name = self.env.catalog.proc(func.oid).and_then(|p| {
                        let mut outs = p.argmodes.iter().enumerate().filter(|(_, m)| matches!(m, 'o' | 'b' | 't'));
                        match (outs.next(), outs.next()) {
                            (Some((i, _)), None) => p.argnames.get(i).filter(|n| !n.is_empty()).cloned(),
                            _ => None,
                        }
                    });
                    (vec![out_name.clone().unwrap_or_else(|| fname.clone())], vec![*ty])
                }
            }
            other => (vec![fname.clone()], vec![other.ty()]),
        };
        let mut types = types;
        if rf.ordinality {
            names.push("ordinality".into());
            types.push(SqlType::new(oid::INT8));
        }
        let alias_name = rf.alias.as_ref().map(|a| a.aliasname.clone()).unwrap_or_else(|| fname.clone());
        if let Some(a) = &rf.alias {
            if names.len() == 1 + rf.ordinality as usize && a.colnames.is_empty() && out_name.is_none() && composite.is_none() && coldefs.is_none() {
                names[0] = a.aliasname.clone();
            }
            for (i, c) in a.colnames.iter().enumerate() {
                if i < names.len() {
                    names[i] = node_string(c).unwrap_or_default().to_string();
                }
            }
        }
        let columns_from_record = names.len() - rf.ordinality as usize > 1 || coldefs.is_some() || composite.is_some();
        Ok(RangeTblEntry {
            kind: RteKind::Function { call: e, ordinality: rf.ordinality, columns_from_record },
            alias: alias_name,
            has_alias: rf.alias.is_some(),
            col_names: names,
            col_types: types,
            lateral: true,
            inh: false,
        })
    }

    /// A function's column definition list (`AS t(a int, b text)`).
    fn column_definition_list(&mut self, list: &[pb::Node]) -> PgResult<Option<Vec<(String, SqlType)>>> {
        if list.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(list.len());
        for n in list {
            let Some(NodeEnum::ColumnDef(cd)) = &n.node else { return Err(PgError::internal("column definition")) };
            let tn = cd.type_name.as_ref().ok_or_else(|| PgError::internal("column definition type"))?;
            out.push((cd.colname.clone(), super::types::resolve_type_name(self.b, tn)?));
        }
        Ok(Some(out))
    }

    fn transform_join(&mut self, j: &pb::JoinExpr) -> PgResult<(FromItem, Vec<NsItem>)> {
        let kind = match j.jointype {
            1 => JoinKind::Inner,
            2 => JoinKind::Left,
            3 => JoinKind::Full,
            4 => JoinKind::Right,
            _ => return Err(PgError::unsupported("this join type")),
        };
        let (left, mut lns) = self.transform_from_item(j.larg.as_deref().ok_or_else(|| PgError::internal("join left"))?)?;
        // The right side may reference the left only if LATERAL: make the
        // left's items visible to lateral items while analyzing the right.
        let base = self.level_ref().namespace.len();
        self.level().namespace.extend(lns.iter().cloned().map(|mut n| {
            n.lateral_only = true;
            n
        }));
        let right = self.transform_from_item(j.rarg.as_deref().ok_or_else(|| PgError::internal("join right"))?);
        self.level().namespace.truncate(base);
        let (right, mut rns) = right?;
        // Duplicate aliases between the two sides.
        {
            let level = self.level_ref();
            for l in lns.iter().filter(|n| n.rel_visible) {
                for r in rns.iter().filter(|n| n.rel_visible) {
                    if level.rtable[l.rte].alias == level.rtable[r.rte].alias {
                        return Err(PgError::new(
                            sqlstate::DUPLICATE_ALIAS,
                            format!("table name \"{}\" specified more than once", level.rtable[l.rte].alias),
                        ));
                    }
                }
            }
        }
        // Columns of each side as (name, expression).
        let left_cols = self.namespace_columns(&lns);
        let right_cols = self.namespace_columns(&rns);
        // USING / NATURAL: the merged columns.
        let using: Vec<String> = if j.is_natural {
            left_cols.iter().filter(|(n, _)| right_cols.iter().any(|(m, _)| m == n)).map(|(n, _)| n.clone()).collect()
        } else {
            j.using_clause.iter().filter_map(node_string).map(str::to_string).collect()
        };
        let mut names = Vec::new();
        let mut exprs = Vec::new();
        let mut quals: Vec<Expr> = Vec::new();
        for u in &using {
            if names.contains(u) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column name \"{u}\" appears more than once in USING clause"),
                ));
            }
            let find = |cols: &[(String, Expr)], side: &str| -> PgResult<Expr> {
                let m: Vec<&(String, Expr)> = cols.iter().filter(|(n, _)| n == u).collect();
                match m.len() {
                    0 => Err(PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{u}\" specified in USING clause does not exist in {side} table"),
                    )),
                    1 => Ok(m[0].1.clone()),
                    _ => Err(PgError::new(
                        sqlstate::AMBIGUOUS_COLUMN,
                        format!("common column name \"{u}\" appears more than once in {side} table"),
                    )),
                }
            };
            let l = find(&left_cols, "left")?;
            let r = find(&right_cols, "right")?;
            let eq = self.make_op("=", Some(l.clone()), Some(r.clone()), -1)?;
            quals.push(eq);
            // The merged column (buildMergedJoinVar): for an inner join
            // either side, the one needing no coercion if there is one; the
            // left value for left joins, the right for right joins,
            // COALESCE for full joins (coerced to a common type).
            let (both, ty) = self.unify(vec![l.clone(), r.clone()], "JOIN/USING", -1)?;
            let merged = match kind {
                JoinKind::Inner if !matches!(both[0], Expr::Var(_)) && matches!(both[1], Expr::Var(_)) => both[1].clone(),
                JoinKind::Inner | JoinKind::Left => both[0].clone(),
                JoinKind::Right => both[1].clone(),
                _ => Expr::Coalesce { args: both, ty },
            };
            names.push(u.clone());
            exprs.push(merged);
        }
        for (n, e) in left_cols.iter().filter(|(n, _)| !using.contains(n)) {
            names.push(n.clone());
            exprs.push(e.clone());
        }
        for (n, e) in right_cols.iter().filter(|(n, _)| !using.contains(n)) {
            names.push(n.clone());
            exprs.push(e.clone());
        }
        // ON: both sides visible.
        let mut on = None;
        if let Some(qn) = &j.quals {
            let base = self.level_ref().namespace.len();
            self.level().namespace.extend(lns.iter().cloned());
            self.level().namespace.extend(rns.iter().cloned());
            self.level().agg_forbidden = Some("JOIN conditions");
            let e = self.transform_expr(qn);
            self.level().agg_forbidden = None;
            self.level().namespace.truncate(base);
            let e = e?;
            on = Some(self.coerce_to_boolean(e, "JOIN/ON", expr_location(qn))?);
        }
        if !quals.is_empty() {
            on = Some(if quals.len() == 1 { quals.pop().unwrap() } else { Expr::Bool { op: crate::expr::BoolOp::And, args: quals } });
        }
        let types = exprs.iter().map(|e| e.ty()).collect();
        let (alias, has_alias) = match &j.alias {
            Some(a) => {
                for (i, c) in a.colnames.iter().enumerate() {
                    if i < names.len() {
                        names[i] = node_string(c).unwrap_or_default().to_string();
                    }
                }
                (a.aliasname.clone(), true)
            }
            None => (String::new(), false),
        };
        let rte = RangeTblEntry {
            kind: RteKind::Join { kind, columns: exprs },
            alias,
            has_alias,
            col_names: names,
            col_types: types,
            lateral: false,
            inh: false,
        };
        let jidx = self.add_rte(rte);
        let item = FromItem::Join { kind, left: Box::new(left), right: Box::new(right), quals: on, rte: jidx };
        // Component tables stay visible to qualified references, unless the
        // join has an alias; unqualified names resolve through the join.
        let mut ns = Vec::new();
        if !has_alias {
            for n in lns.iter_mut().chain(rns.iter_mut()) {
                n.cols_visible = false;
                ns.push(n.clone());
            }
        }
        ns.push(NsItem { rte: jidx, rel_visible: has_alias, cols_visible: true, lateral_only: false });
        Ok((item, ns))
    }

    /// The columns namespace items expose to unqualified references, in order.
    fn namespace_columns(&self, items: &[NsItem]) -> Vec<(String, Expr)> {
        let level = self.level_ref();
        let mut out = Vec::new();
        for it in items.iter().filter(|i| i.cols_visible) {
            let rte = &level.rtable[it.rte];
            for (i, n) in rte.col_names.iter().enumerate() {
                out.push((n.clone(), self.column_expr(0, it.rte, i)));
            }
        }
        out
    }

    // ---------------------------------------------------------------- targets

    pub(crate) fn transform_target_list(&mut self, list: &[Node], resolve_unknowns: bool) -> PgResult<Vec<TargetEntry>> {
        let mut out = Vec::new();
        for item in list {
            let Some(NodeEnum::ResTarget(rt)) = &item.node else { return Err(PgError::internal("target")) };
            let val = rt.val.as_deref().ok_or_else(|| PgError::internal("target without value"))?;
            // `*` and `t.*`
            if let Some(NodeEnum::ColumnRef(cr)) = &val.node {
                if matches!(cr.fields.last().and_then(|f| f.node.as_ref()), Some(NodeEnum::AStar(_))) {
                    out.extend(self.expand_star(cr)?);
                    continue;
                }
            }
            // `(composite).*`: one target per field (ExpandIndirectionStar).
            if let Some(NodeEnum::AIndirection(ind)) = &val.node {
                if let Some((last, rest)) = ind.indirection.split_last() {
                    if matches!(last.node, Some(NodeEnum::AStar(_))) {
                        let base_ind = pb::AIndirection { arg: ind.arg.clone(), indirection: rest.to_vec() };
                        let base = if rest.is_empty() {
                            self.transform_expr(ind.arg.as_deref().ok_or_else(|| PgError::internal("indirection"))?)?
                        } else {
                            self.transform_expr(&Node { node: Some(NodeEnum::AIndirection(Box::new(base_ind))) })?
                        };
                        out.extend(self.expand_record_fields(base)?);
                        continue;
                    }
                }
            }
            let e = self.transform_expr(val)?;
            let e = if resolve_unknowns { self.resolve_unknown(e)? } else { e };
            let name = if rt.name.is_empty() { figure_colname(val) } else { rt.name.clone() };
            let origin = self.origin_of(&e);
            out.push(TargetEntry { expr: e, name, junk: false, origin });
        }
        Ok(out)
    }

    /// The fields of a composite value as targets (`(x).*`).
    fn expand_record_fields(&mut self, base: Expr) -> PgResult<Vec<TargetEntry>> {
        let Some(fields) = self.record_fields(&base) else {
            return Err(if base.ty().oid == oid::RECORD {
                PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "record type has not been registered")
            } else {
                PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("type {} is not composite", crate::analyzer::types::format_type(self.b, base.ty().oid, -1)),
                )
            });
        };
        Ok(fields
            .into_iter()
            .enumerate()
            .map(|(i, (name, ty))| TargetEntry { expr: Expr::FieldSelect { arg: Box::new(base.clone()), field: i, ty }, name, junk: false, origin: None })
            .collect())
    }

    /// The table column an output column comes straight from, for RowDescription.
    pub(crate) fn origin_of(&self, e: &Expr) -> Option<(u32, i16)> {
        if let Expr::Var(v) = e {
            if v.levels_up == 0 {
                let rte = &self.level_ref().rtable[v.rte];
                if let RteKind::Relation(rel) = &rte.kind {
                    let attnum = rel.live_columns().nth(v.col).map(|(a, _)| a)?;
                    return Some((rel.oid, attnum));
                }
            }
        }
        None
    }

    pub(crate) fn expand_star(&mut self, cr: &pb::ColumnRef) -> PgResult<Vec<TargetEntry>> {
        let qual: Vec<&str> = cr.fields.iter().filter_map(node_string).collect();
        let mut out = Vec::new();
        if qual.is_empty() {
            let items: Vec<NsItem> = self.level_ref().namespace.iter().filter(|n| n.cols_visible && !n.lateral_only).cloned().collect();
            if items.is_empty() {
                return Err(PgError::syntax("SELECT * with no tables specified is not valid").with_position(pos(cr.location)));
            }
            for it in items {
                out.extend(self.rte_targets(it.rte));
            }
            return Ok(out);
        }
        let rel = *qual.last().unwrap();
        let schema = if qual.len() >= 2 { Some(qual[qual.len() - 2]) } else { None };
        let level = self.level_ref();
        let found = level
            .namespace
            .iter()
            .filter(|n| n.rel_visible && !n.lateral_only)
            .find(|n| {
                let rte = &level.rtable[n.rte];
                rte.alias == rel
                    && match schema {
                        None => true,
                        Some(s) => matches!(&rte.kind, RteKind::Relation(r) if self.env.catalog.namespace_name(r.namespace) == s),
                    }
            })
            .map(|n| n.rte);
        if let Some(rte) = found {
            return Ok(self.rte_targets(rte));
        }
        // A row variable of procedural code spreads into its fields.
        if let Some(targets) = self.param_record_targets(&qual) {
            return Ok(targets);
        }
        Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{rel}\"")).with_position(pos(cr.location)))
    }

    /// `rec.*` where `rec` is a record variable of the procedural code the
    /// query runs in: one target per field.
    fn param_record_targets(&self, qual: &[&str]) -> Option<Vec<TargetEntry>> {
        let src = self.param_source?;
        let (crate::procedural::ResolvedName::Param { index, ty }, consumed) = src.resolve(qual)? else { return None };
        if consumed != qual.len() {
            return None;
        }
        let fields = src.param_fields(index)?;
        self.note_param(index, ty);
        Some(
            fields
                .into_iter()
                .enumerate()
                .map(|(i, (name, fty))| TargetEntry {
                    expr: Expr::FieldSelect { arg: Box::new(Expr::Param(index, ty)), field: i, ty: fty },
                    name,
                    junk: false,
                    origin: None,
                })
                .collect(),
        )
    }

    fn rte_targets(&self, rte: usize) -> Vec<TargetEntry> {
        let entry = &self.level_ref().rtable[rte];
        (0..entry.col_names.len())
            .map(|i| {
                let e = self.column_expr(0, rte, i);
                let origin = self.origin_of(&e);
                TargetEntry { expr: e, name: entry.col_names[i].clone(), junk: false, origin }
            })
            .collect()
    }

    // ---------------------------------------------------------------- GROUP BY / ORDER BY

    fn transform_group_item(&mut self, g: &Node, targets: &[TargetEntry]) -> PgResult<Expr> {
        match &g.node {
            Some(NodeEnum::GroupingSet(_)) => return Err(PgError::unsupported("GROUPING SETS, ROLLUP and CUBE")),
            // GROUP BY 2: an output column position.
            Some(NodeEnum::AConst(c)) => {
                if let Some(pg_query::protobuf::a_const::Val::Ival(i)) = &c.val {
                    let visible: Vec<&TargetEntry> = targets.iter().filter(|t| !t.junk).collect();
                    let n = i.ival;
                    if n < 1 || n as usize > visible.len() {
                        return Err(PgError::new(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            format!("GROUP BY position {n} is not in select list"),
                        )
                        .with_position(pos(c.location)));
                    }
                    let e = visible[n as usize - 1].expr.clone();
                    if e.contains_agg() {
                        return Err(PgError::new(sqlstate::GROUPING_ERROR, "aggregate functions are not allowed in GROUP BY")
                            .with_position(pos(c.location)));
                    }
                    check_no_window_in_group_by(&e)?;
                    return Ok(e);
                }
            }
            // GROUP BY name: an input column wins over an output alias.
            Some(NodeEnum::ColumnRef(cr)) if cr.fields.len() == 1 => {
                if let Some(name) = cr.fields.first().and_then(node_string) {
                    let is_input = self.level_ref().namespace.iter().any(|n| {
                        n.cols_visible && self.level_ref().rtable[n.rte].col_names.iter().any(|c| c == name)
                    });
                    if !is_input {
                        let matches: Vec<&TargetEntry> = targets.iter().filter(|t| !t.junk && t.name == name).collect();
                        if matches.len() == 1 {
                            check_no_window_in_group_by(&matches[0].expr)?;
                            return Ok(matches[0].expr.clone());
                        }
                    }
                }
            }
            _ => {}
        }
        self.level().agg_forbidden = Some("GROUP BY");
        let e = self.transform_expr(g);
        self.level().agg_forbidden = None;
        let e = e?;
        self.resolve_unknown(e)
    }

    fn transform_sort_item(&mut self, s: &Node, targets: &mut Vec<TargetEntry>, distinct_all: bool) -> PgResult<SortKey> {
        let Some(NodeEnum::SortBy(sb)) = &s.node else { return Err(PgError::internal("sort item")) };
        if sb.sortby_dir == 4 {
            return Err(PgError::unsupported("ORDER BY ... USING"));
        }
        let (descending, nulls_first) = sort_dir(sb);
        let node = sb.node.as_deref().ok_or_else(|| PgError::internal("sort without expression"))?;
        let target = if distinct_all {
            let before = targets.len();
            let idx = self.target_for_expr_item(node, targets, "ORDER BY")?;
            if targets.len() > before {
                return Err(PgError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                )
                .with_position(pos(expr_location(node))));
            }
            idx
        } else {
            self.target_for_expr_item(node, targets, "ORDER BY")?
        };
        let ty = targets[target].expr.ty();
        // The type must be sortable.
        if ty.oid != oid::UNKNOWN && ty.oid != oid::RECORD {
            let lt = self.resolve_operator("<", Some(ty), Some(ty), sb.location);
            if lt.is_err() {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("could not identify an ordering operator for type {}", display_type(self.b, ty)),
                )
                .with_hint("Use an explicit ordering operator or modify the query.")
                .with_position(pos(expr_location(node))));
            }
        }
        Ok(SortKey { target, descending, nulls_first })
    }

    /// findTargetlistEntrySQL92: an ORDER BY / DISTINCT ON item as a target index
    /// (by position, by output name, or by expression, adding a junk target).
    fn target_for_expr_item(&mut self, node: &Node, targets: &mut Vec<TargetEntry>, clause: &str) -> PgResult<usize> {
        let visible: Vec<usize> = (0..targets.len()).filter(|&i| !targets[i].junk).collect();
        match &node.node {
            Some(NodeEnum::AConst(c)) => {
                if let Some(pg_query::protobuf::a_const::Val::Ival(i)) = &c.val {
                    let n = i.ival;
                    if n < 1 || n as usize > visible.len() {
                        return Err(PgError::new(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            format!("{clause} position {n} is not in select list"),
                        )
                        .with_position(pos(c.location)));
                    }
                    return Ok(visible[n as usize - 1]);
                }
            }
            Some(NodeEnum::ColumnRef(cr)) if cr.fields.len() == 1 => {
                if let Some(name) = cr.fields.first().and_then(node_string) {
                    let matches: Vec<usize> = visible.iter().copied().filter(|&i| targets[i].name == name).collect();
                    if matches.len() > 1 {
                        // Several output columns of that name: fine if they are the same expression.
                        let first = &targets[matches[0]].expr;
                        if matches.iter().any(|&i| &targets[i].expr != first) {
                            return Err(PgError::new(
                                sqlstate::AMBIGUOUS_COLUMN,
                                format!("{clause} \"{name}\" is ambiguous"),
                            )
                            .with_position(pos(cr.location)));
                        }
                    }
                    if let Some(&i) = matches.first() {
                        return Ok(i);
                    }
                }
            }
            _ => {}
        }
        let e = self.transform_expr(node)?;
        let e = self.resolve_unknown(e)?;
        if let Some(i) = targets.iter().position(|t| t.expr == e) {
            return Ok(i);
        }
        targets.push(TargetEntry { expr: e, name: "?column?".into(), junk: true, origin: None });
        Ok(targets.len() - 1)
    }

    /// check_ungrouped_columns: every column reference outside aggregates
    /// must be grouped (or functionally dependent on a grouped primary key).
    fn check_grouping(&self, q: &Query) -> PgResult<()> {
        // Tables whose primary key is entirely grouped: all their columns are allowed.
        let mut pk_grouped: Vec<usize> = Vec::new();
        for (i, rte) in self.level_ref().rtable.iter().enumerate() {
            if let RteKind::Relation(rel) = &rte.kind {
                if let Some(pk) = rel.primary_key() {
                    let all = pk.columns.iter().all(|attnum| {
                        let col = rel.live_columns().position(|(a, _)| a == *attnum);
                        col.map(|c| {
                            q.group_by.iter().any(|g| matches!(g, Expr::Var(v) if v.levels_up == 0 && v.rte == i && v.col == c))
                        })
                        .unwrap_or(false)
                    });
                    if all {
                        pk_grouped.push(i);
                    }
                }
            }
        }
        let check = |e: &Expr| -> PgResult<()> { self.check_ungrouped(e, &q.group_by, &pk_grouped) };
        for t in &q.targets {
            check(&t.expr)?;
        }
        if let Some(h) = &q.having {
            check(h)?;
        }
        Ok(())
    }

    fn check_ungrouped(&self, e: &Expr, groups: &[Expr], pk_grouped: &[usize]) -> PgResult<()> {
        if groups.iter().any(|g| g == e) {
            return Ok(());
        }
        match e {
            Expr::Agg(_) => Ok(()),
            Expr::Var(v) if v.levels_up == 0 => {
                if pk_grouped.contains(&v.rte) {
                    return Ok(());
                }
                let rte = &self.level_ref().rtable[v.rte];
                let table = if rte.alias.is_empty() { String::new() } else { format!("{}.", rte.alias) };
                Err(PgError::new(
                    sqlstate::GROUPING_ERROR,
                    format!(
                        "column \"{}{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                        table, rte.column_name(v.col)
                    ),
                ))
            }
            Expr::SubLink { query, test, .. } => {
                if let Some(t) = test {
                    self.check_ungrouped(t, groups, pk_grouped)?;
                }
                // Outer references from the subquery to this level must be grouped too.
                check_sublink_outer_refs(query, 1, groups, &|v| self.ungrouped_error(v, pk_grouped))
            }
            other => {
                let mut result = Ok(());
                other.for_each_child(&mut |c| {
                    if result.is_ok() {
                        result = self.check_ungrouped(c, groups, pk_grouped);
                    }
                });
                result
            }
        }
    }

    fn ungrouped_error(&self, v: &Var, pk_grouped: &[usize]) -> PgResult<()> {
        if pk_grouped.contains(&v.rte) {
            return Ok(());
        }
        let rte = &self.level_ref().rtable[v.rte];
        Err(PgError::new(
            sqlstate::GROUPING_ERROR,
            format!(
                "subquery uses ungrouped column \"{}.{}\" from outer query",
                rte.alias, rte.column_name(v.col)
            ),
        ))
    }

    // ---------------------------------------------------------------- VALUES

    fn transform_values(&mut self, stmt: &pb::SelectStmt, resolve_unknowns: bool) -> PgResult<Query> {
        let mut rows: Vec<Vec<Expr>> = Vec::new();
        self.level().agg_forbidden = Some("VALUES");
        for row in &stmt.values_lists {
            let Some(NodeEnum::List(l)) = &row.node else { return Err(PgError::internal("VALUES row")) };
            let mut exprs = Vec::new();
            for item in &l.items {
                if matches!(item.node, Some(NodeEnum::SetToDefault(_))) {
                    self.level().agg_forbidden = None;
                    return Err(PgError::syntax("DEFAULT is not allowed in this context"));
                }
                exprs.push(self.transform_expr(item)?);
            }
            if let Some(first) = rows.first() {
                if first.len() != exprs.len() {
                    self.level().agg_forbidden = None;
                    return Err(PgError::syntax("VALUES lists must all be the same length")
                        .with_position(pos(l.items.first().map(expr_location).unwrap_or(-1))));
                }
            }
            rows.push(exprs);
        }
        self.level().agg_forbidden = None;
        let ncols = rows.first().map(|r| r.len()).unwrap_or(0);
        let mut col_types = Vec::with_capacity(ncols);
        for c in 0..ncols {
            let col: Vec<Expr> = rows.iter().map(|r| r[c].clone()).collect();
            let all_unknown = col.iter().all(|e| e.ty().oid == oid::UNKNOWN);
            if all_unknown && !resolve_unknowns {
                col_types.push(SqlType::new(oid::UNKNOWN));
                continue;
            }
            let (unified, ty) = self.unify(col, "VALUES", -1)?;
            for (r, e) in rows.iter_mut().zip(unified) {
                r[c] = e;
            }
            col_types.push(ty);
        }
        let names: Vec<String> = (1..=ncols).map(|i| format!("column{i}")).collect();
        let rte = RangeTblEntry {
            kind: RteKind::Values(rows),
            alias: "*VALUES*".into(),
            has_alias: false,
            col_names: names.clone(),
            col_types: col_types.clone(),
            lateral: false,
            inh: false,
        };
        let idx = self.add_rte(rte);
        self.level().namespace.push(NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false });
        let mut q = Query::new(CommandKind::Select);
        q.from.push(FromItem::Rte(idx));
        q.targets = (0..ncols)
            .map(|i| TargetEntry {
                expr: Expr::Var(Var { rte: idx, col: i, levels_up: 0, ty: col_types[i] }),
                name: names[i].clone(),
                junk: false,
                origin: None,
            })
            .collect();
        for s in &stmt.sort_clause {
            let key = self.transform_sort_item(s, &mut q.targets, false)?;
            q.sort.push(key);
        }
        self.transform_limits(stmt, &mut q)?;
        Ok(q)
    }

    // ---------------------------------------------------------------- set operations

    fn transform_set_operation(&mut self, stmt: &pb::SelectStmt) -> PgResult<Query> {
        let mut q = Query::new(CommandKind::Select);
        let tree = self.transform_setop_tree(stmt, true)?;
        let (tree, types) = tree;
        // Output names come from the leftmost leaf.
        let mut leftmost = &tree;
        while let SetOpTree::Op { left, .. } = leftmost {
            leftmost = left;
        }
        let SetOpTree::Leaf(leaf) = leftmost else { unreachable!() };
        let names: Vec<String> = self.level_ref().rtable[*leaf].col_names.clone();
        q.targets = types
            .iter()
            .enumerate()
            .map(|(i, ty)| TargetEntry {
                expr: Expr::Var(Var { rte: SETOP_RTE, col: i, levels_up: 0, ty: *ty }),
                name: names[i].clone(),
                junk: false,
                origin: None,
            })
            .collect();
        q.set_op = Some(tree);
        // ORDER BY over a set operation: output columns only (by name or position).
        for s in &stmt.sort_clause {
            let Some(NodeEnum::SortBy(sb)) = &s.node else { continue };
            let node = sb.node.as_deref().ok_or_else(|| PgError::internal("sort"))?;
            let (descending, nulls_first) = sort_dir(sb);
            let target = match &node.node {
                Some(NodeEnum::AConst(c)) => match &c.val {
                    Some(pg_query::protobuf::a_const::Val::Ival(i)) if i.ival >= 1 && i.ival as usize <= q.targets.len() => i.ival as usize - 1,
                    _ => {
                        return Err(PgError::new(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {} is not in select list", super::const_text(node).unwrap_or_default()),
                        )
                        .with_position(pos(c.location)))
                    }
                },
                Some(NodeEnum::ColumnRef(cr)) if cr.fields.len() == 1 => {
                    let name = cr.fields[0].node.as_ref().and_then(|n| if let NodeEnum::String(s) = n { Some(s.sval.clone()) } else { None }).unwrap_or_default();
                    match q.targets.iter().position(|t| t.name == name) {
                        Some(i) => i,
                        None => {
                            return Err(PgError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{name}\" does not exist"),
                            )
                            .with_position(pos(cr.location)))
                        }
                    }
                }
                _ => {
                    return Err(PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                    )
                    .with_detail("Only result column names can be used, not expressions or functions.")
                    .with_hint("Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
                    .with_position(pos(expr_location(node))))
                }
            };
            q.sort.push(SortKey { target, descending, nulls_first });
        }
        self.transform_limits(stmt, &mut q)?;
        Ok(q)
    }

    /// Builds the set-operation tree; leaves become subquery RTEs whose
    /// outputs are coerced to the column types resolved at each node.
    fn transform_setop_tree(&mut self, stmt: &pb::SelectStmt, top: bool) -> PgResult<(SetOpTree, Vec<SqlType>)> {
        let _ = top;
        if stmt.op <= 1 {
            // A leaf (possibly with its own ORDER BY/LIMIT, kept inside).
            let (q, level) = self.with_level(|a| a.transform_select_inner(stmt, false))?;
            let mut q = q;
            q.rtable = level.rtable;
            if q.ctes.is_empty() {
                q.ctes = level.ctes;
            }
            q.has_aggs |= level.has_aggs;
            let types = q.output().map(|t| t.expr.ty()).collect();
            let alias = pb::Alias { aliasname: "*SELECT*".into(), colnames: vec![] };
            let rte = self.subquery_rte(q, &alias, false)?;
            let idx = self.add_rte(rte);
            return Ok((SetOpTree::Leaf(idx), types));
        }
        let kind = match stmt.op {
            2 => SetOpKind::Union,
            3 => SetOpKind::Intersect,
            _ => SetOpKind::Except,
        };
        let context = match kind {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        };
        let larg = stmt.larg.as_deref().ok_or_else(|| PgError::internal("set op left"))?;
        let rarg = stmt.rarg.as_deref().ok_or_else(|| PgError::internal("set op right"))?;
        let (left, ltypes) = self.transform_setop_tree(larg, false)?;
        let (right, rtypes) = self.transform_setop_tree(rarg, false)?;
        if ltypes.len() != rtypes.len() {
            return Err(PgError::syntax(format!("each {context} query must have the same number of columns")));
        }
        let mut types = Vec::with_capacity(ltypes.len());
        for (l, r) in ltypes.iter().zip(&rtypes) {
            let common = coerce::common_type(self.b, &[l.oid, r.oid], context)?;
            let typmod = if l == r { l.typmod } else { -1 };
            // Unknown on both sides resolves to text at the top only.
            types.push(SqlType { oid: if common == oid::UNKNOWN { oid::TEXT } else { common }, typmod });
        }
        self.coerce_setop_leaves(&left, &types)?;
        self.coerce_setop_leaves(&right, &types)?;
        Ok((SetOpTree::Op { kind, all: stmt.all, left: Box::new(left), right: Box::new(right), col_types: types.clone() }, types))
    }

    fn coerce_setop_leaves(&mut self, tree: &SetOpTree, types: &[SqlType]) -> PgResult<()> {
        match tree {
            SetOpTree::Leaf(idx) => {
                let idx = *idx;
                let mut rte = std::mem::replace(&mut self.level().rtable[idx].kind, RteKind::Values(vec![]));
                if let RteKind::Subquery(q) = &mut rte {
                    let q = Arc::make_mut(q);
                    let mut i = 0;
                    for t in q.targets.iter_mut().filter(|t| !t.junk) {
                        let target = types[i];
                        if t.expr.ty() != target {
                            let e = std::mem::replace(&mut t.expr, Expr::null(target));
                            t.expr = match self.try_coerce(e, target, CoercionContext::Implicit, -1)? {
                                Ok(x) => x,
                                Err(x) => {
                                    return Err(PgError::new(
                                        sqlstate::DATATYPE_MISMATCH,
                                        format!("cannot cast type {} to {}", display_type(self.b, x.ty()), display_type(self.b, target)),
                                    ))
                                }
                            };
                        }
                        i += 1;
                    }
                }
                self.level().rtable[idx].kind = rte;
                self.level().rtable[idx].col_types = types.to_vec();
                Ok(())
            }
            SetOpTree::Op { left, right, col_types, .. } => {
                // Inner nodes keep their own resolved types; coerce their leaves to ours.
                let _ = col_types;
                self.coerce_setop_leaves(left, types)?;
                self.coerce_setop_leaves(right, types)
            }
        }
    }

    // ---------------------------------------------------------------- WITH

    pub(crate) fn transform_with(&mut self, w: &pb::WithClause) -> PgResult<()> {
        for c in &w.ctes {
            let Some(NodeEnum::CommonTableExpr(cte)) = &c.node else { return Err(PgError::internal("CTE")) };
            if self.level_ref().ctes.iter().any(|x| x.name == cte.ctename) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_ALIAS,
                    format!("WITH query name \"{}\" specified more than once", cte.ctename),
                )
                .with_position(pos(cte.location)));
            }
            if cte.search_clause.is_some() || cte.cycle_clause.is_some() {
                return Err(PgError::unsupported("SEARCH and CYCLE clauses"));
            }
            let sel: &pb::SelectStmt = match cte.ctequery.as_deref().and_then(|n| n.node.as_ref()) {
                Some(NodeEnum::SelectStmt(s)) => s,
                Some(dml @ (NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_))) => {
                    let built = self.transform_modifying_cte(cte, dml)?;
                    self.level().ctes.push(built);
                    continue;
                }
                Some(_) => return Err(PgError::unsupported("this kind of statement in WITH")),
                None => return Err(PgError::internal("CTE without query")),
            };
            let alias_cols: Vec<String> = cte.aliascolnames.iter().filter_map(node_string).map(str::to_string).collect();
            let self_referencing = w.recursive && select_references(sel, &cte.ctename);
            if self_referencing {
                let built = self.transform_recursive_cte(&cte.ctename, sel, &alias_cols, cte.location)?;
                self.level().ctes.push(built);
                continue;
            }
            let q = self.analyze_select_stmt(sel)?;
            let mut names: Vec<String> = q.output().map(|t| t.name.clone()).collect();
            let types = q.output().map(|t| t.expr.ty()).collect();
            if alias_cols.len() > names.len() {
                return Err(PgError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    format!(
                        "WITH query \"{}\" has {} columns available but {} columns specified",
                        cte.ctename,
                        names.len(),
                        alias_cols.len()
                    ),
                )
                .with_position(pos(cte.location)));
            }
            for (i, n) in alias_cols.iter().enumerate() {
                names[i] = n.clone();
            }
            self.level().ctes.push(Cte {
                name: cte.ctename.clone(),
                query: Box::new(q),
                recursive: false,
                col_names: names,
                col_types: types,
                recursive_parts: None,
                modifying: false,
            });
        }
        Ok(())
    }

    /// WITH x AS (INSERT/UPDATE/DELETE ... RETURNING ...): allowed only in
    /// the top-level statement, as in PostgreSQL.
    fn transform_modifying_cte(&mut self, cte: &pb::CommonTableExpr, dml: &NodeEnum) -> PgResult<Cte> {
        if self.levels.len() > 1 {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "WITH clause containing a data-modifying statement must be at the top level")
                .with_position(pos(cte.location)));
        }
        let q = match dml {
            NodeEnum::InsertStmt(i) => self.analyze_insert(i)?,
            NodeEnum::UpdateStmt(u) => self.analyze_update(u)?,
            NodeEnum::DeleteStmt(d) => self.analyze_delete(d)?,
            _ => return Err(PgError::internal("not a data-modifying statement")),
        };
        let mut names: Vec<String> = q.returning.iter().map(|t| t.name.clone()).collect();
        let types: Vec<SqlType> = q.returning.iter().map(|t| t.expr.ty()).collect();
        let alias_cols: Vec<String> = cte.aliascolnames.iter().filter_map(node_string).map(str::to_string).collect();
        if alias_cols.len() > names.len() {
            return Err(PgError::new(
                sqlstate::INVALID_COLUMN_REFERENCE,
                format!("WITH query \"{}\" has {} columns available but {} columns specified", cte.ctename, names.len(), alias_cols.len()),
            )
            .with_position(pos(cte.location)));
        }
        for (i, n) in alias_cols.iter().enumerate() {
            names[i] = n.clone();
        }
        Ok(Cte { name: cte.ctename.clone(), query: Box::new(q), recursive: false, col_names: names, col_types: types, recursive_parts: None, modifying: true })
    }

    fn transform_recursive_cte(&mut self, name: &str, sel: &pb::SelectStmt, alias_cols: &[String], location: i32) -> PgResult<Cte> {
        if sel.op != 2 {
            return Err(PgError::new(
                sqlstate::INVALID_RECURSION,
                format!("recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"),
            )
            .with_position(pos(location)));
        }
        for (present, what) in [
            (!sel.sort_clause.is_empty(), "ORDER BY"),
            (sel.limit_offset.is_some(), "OFFSET"),
            (sel.limit_count.is_some(), "LIMIT"),
            (!sel.locking_clause.is_empty(), "FOR UPDATE/SHARE"),
        ] {
            if present {
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("{what} in a recursive query is not implemented")));
            }
        }
        let larg = sel.larg.as_deref().ok_or_else(|| PgError::internal("recursive left"))?;
        let rarg = sel.rarg.as_deref().ok_or_else(|| PgError::internal("recursive right"))?;
        if select_references(larg, name) {
            return Err(PgError::new(
                sqlstate::INVALID_RECURSION,
                format!("recursive reference to query \"{name}\" must not appear within its non-recursive term"),
            ));
        }
        super::recursion::check_recursive_term(name, rarg)?;
        let left = self.analyze_select_stmt(larg)?;
        let mut names: Vec<String> = left.output().map(|t| t.name.clone()).collect();
        for (i, n) in alias_cols.iter().enumerate() {
            if i < names.len() {
                names[i] = n.clone();
            }
        }
        let types: Vec<SqlType> = left.output().map(|t| t.expr.ty()).collect();
        let idx = self.level_ref().ctes.len();
        self.level().recursive_cte = Some((name.to_string(), idx, names.clone(), types.clone()));
        let right = self.analyze_select_stmt(rarg);
        self.level().recursive_cte = None;
        let mut right = right?;
        if right.has_aggs {
            return Err(PgError::new(
                sqlstate::INVALID_RECURSION,
                "aggregate functions are not allowed in a recursive query's recursive term",
            ));
        }
        let rtypes: Vec<SqlType> = right.output().map(|t| t.expr.ty()).collect();
        if rtypes.len() != types.len() {
            return Err(PgError::syntax("each UNION query must have the same number of columns"));
        }
        for (i, t) in right.targets.iter_mut().filter(|t| !t.junk).enumerate() {
            if t.expr.ty().oid != types[i].oid {
                let e = std::mem::replace(&mut t.expr, Expr::null(types[i]));
                t.expr = match self.try_coerce(e, types[i], CoercionContext::Implicit, -1)? {
                    Ok(x) => x,
                    Err(x) => {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            format!(
                                "recursive query \"{}\" column {} has type {} in non-recursive term but type {} overall",
                                name,
                                i + 1,
                                display_type(self.b, types[i]),
                                display_type(self.b, x.ty())
                            ),
                        )
                        .with_hint("Cast the output of the non-recursive term to the correct type."))
                    }
                };
            }
        }
        Ok(Cte {
            name: name.to_string(),
            query: Box::new(left.clone()),
            recursive: true,
            col_names: names,
            col_types: types,
            recursive_parts: Some((Box::new(left), Box::new(right), sel.all)),
            modifying: false,
        })
    }
}

fn apply_alias_cols(mut names: Vec<String>, alias: Option<&pb::Alias>) -> Vec<String> {
    if let Some(a) = alias {
        for (i, c) in a.colnames.iter().enumerate() {
            if i < names.len() {
                if let Some(n) = node_string(c) {
                    names[i] = n.to_string();
                }
            }
        }
    }
    names
}

fn sort_location(n: &Node) -> i32 {
    match &n.node {
        Some(NodeEnum::SortBy(sb)) => sb.node.as_deref().map(expr_location).unwrap_or(sb.location),
        _ => -1,
    }
}

/// Whether a raw SELECT mentions relation `name` anywhere (for recursive CTE detection).
fn select_references(sel: &pb::SelectStmt, name: &str) -> bool {
    let node = pg_query::protobuf::node::Node::SelectStmt(Box::new(sel.clone()));
    node.nodes().iter().any(|(n, _, _)| matches!(n, pg_query::NodeRef::RangeVar(rv) if rv.relname == name && rv.schemaname.is_empty()))
}

/// Memo of `escape` for shared (inlined WITH) subqueries, by address; it
/// holds the Arc so that the address is not reused while remembered.
pub(crate) type EscapeMemo = std::collections::HashMap<usize, (Arc<Query>, u32)>;

/// How many query levels beyond itself `q` reaches: the largest
/// `levels_up - nesting` of its Vars and WITH query references, 0 when it
/// refers to nothing outside. Shared subqueries are looked at once, so a
/// chain of WITH queries each reading the previous one costs linear time.
pub(crate) fn escape(q: &Query, memo: &mut EscapeMemo) -> PgResult<u32> {
    crate::stack::check()?;
    fn expr(e: &Expr, memo: &mut EscapeMemo) -> PgResult<u32> {
        let mut out = 0;
        let mut err = None;
        e.walk(&mut |x| match x {
            Expr::Var(v) => out = out.max(v.levels_up),
            Expr::SubLink { query, .. } if err.is_none() => match escape(query, memo) {
                Ok(n) => out = out.max(n.saturating_sub(1)),
                Err(e) => err = Some(e),
            },
            _ => {}
        });
        err.map_or(Ok(out), Err)
    }
    fn from_item(f: &FromItem, memo: &mut EscapeMemo) -> PgResult<u32> {
        match f {
            FromItem::Join { left, right, quals, .. } => {
                let q = match quals {
                    Some(e) => expr(e, memo)?,
                    None => 0,
                };
                Ok(from_item(left, memo)?.max(from_item(right, memo)?).max(q))
            }
            FromItem::Rte(_) => Ok(0),
        }
    }
    let mut out = 0;
    for rte in &q.rtable {
        let n = match &rte.kind {
            RteKind::Subquery(sq) => shared_escape(sq, memo)?.saturating_sub(1),
            RteKind::Values(rows) => rows.iter().flatten().map(|e| expr(e, memo)).try_fold(0, |a, n| n.map(|n| a.max(n)))?,
            RteKind::Function { call, .. } => expr(call, memo)?,
            RteKind::Cte { levels_up, .. } => *levels_up,
            RteKind::Join { columns, .. } => columns.iter().map(|e| expr(e, memo)).try_fold(0, |a, n| n.map(|n| a.max(n)))?,
            RteKind::Relation(_) | RteKind::NamedTuplestore { .. } => 0,
        };
        out = out.max(n);
    }
    for f in &q.from {
        out = out.max(from_item(f, memo)?);
    }
    let exprs = q
        .quals
        .iter()
        .chain(q.having.iter())
        .chain(q.limit.iter())
        .chain(q.offset.iter())
        .chain(q.group_by.iter())
        .chain(q.targets.iter().chain(q.returning.iter()).map(|t| &t.expr))
        .chain(q.update_set.iter().map(|(_, e)| e))
        .chain(q.view_checks.iter().map(|(_, e)| e));
    for e in exprs {
        out = out.max(expr(e, memo)?);
    }
    for c in &q.ctes {
        out = out.max(escape(&c.query, memo)?.saturating_sub(1));
        if let Some((b, r, _)) = &c.recursive_parts {
            out = out.max(escape(b, memo)?.saturating_sub(1)).max(escape(r, memo)?.saturating_sub(1));
        }
    }
    Ok(out)
}

/// `escape` of a shared subquery, remembered.
fn shared_escape(q: &Arc<Query>, memo: &mut EscapeMemo) -> PgResult<u32> {
    let key = Arc::as_ptr(q) as usize;
    if let Some((_, n)) = memo.get(&key) {
        return Ok(*n);
    }
    let n = escape(q, memo)?;
    memo.insert(key, (q.clone(), n));
    Ok(n)
}

/// Raises by `by` the levels_up of every reference in `q` (at nesting
/// `depth` below the query being moved) to a query level outside it: Vars
/// and WITH query references (PostgreSQL's IncrementVarSublevelsUp).
pub(crate) fn shift_outer_refs(q: &mut Query, by: u32, depth: u32, memo: &mut EscapeMemo) -> PgResult<()> {
    crate::stack::check()?;
    let failed: std::cell::Cell<Option<PgError>> = std::cell::Cell::new(None);
    let expr = |e: Expr| -> Expr {
        e.rewrite(&mut |x| match x {
            Expr::Var(mut v) if v.levels_up > depth => {
                v.levels_up += by;
                Expr::Var(v)
            }
            Expr::SubLink { kind, test, op, mut query, ty } => {
                if let Err(e) = shift_outer_refs(&mut query, by, depth + 1, &mut EscapeMemo::new()) {
                    failed.set(Some(e));
                }
                Expr::SubLink { kind, test, op, query, ty }
            }
            other => other,
        })
    };
    let ex = |e: &mut Expr| {
        let taken = std::mem::replace(e, Expr::null(SqlType::new(0)));
        *e = expr(taken);
    };
    for rte in &mut q.rtable {
        match &mut rte.kind {
            // Shared subqueries that reach no further than this query stay shared.
            RteKind::Subquery(sq) => {
                if shared_escape(sq, memo)? > depth + 1 {
                    shift_outer_refs(Arc::make_mut(sq), by, depth + 1, memo)?;
                }
            }
            RteKind::Values(rows) => rows.iter_mut().flatten().for_each(ex),
            RteKind::Function { call, .. } => ex(call),
            RteKind::Cte { levels_up, .. } => {
                if *levels_up > depth {
                    *levels_up += by;
                }
            }
            RteKind::Join { columns, .. } => columns.iter_mut().for_each(ex),
            RteKind::Relation(_) | RteKind::NamedTuplestore { .. } => {}
        }
    }
    fn from_item(f: &mut FromItem, ex: &dyn Fn(&mut Expr)) {
        if let FromItem::Join { left, right, quals, .. } = f {
            from_item(left, ex);
            from_item(right, ex);
            if let Some(e) = quals {
                ex(e);
            }
        }
    }
    for f in &mut q.from {
        from_item(f, &ex);
    }
    for e in q.quals.iter_mut().chain(q.having.iter_mut()).chain(q.limit.iter_mut()).chain(q.offset.iter_mut()) {
        ex(e);
    }
    for t in q.targets.iter_mut().chain(q.returning.iter_mut()) {
        ex(&mut t.expr);
    }
    q.group_by.iter_mut().for_each(ex);
    for (_, e) in q.update_set.iter_mut() {
        ex(e);
    }
    for (_, e) in q.view_checks.iter_mut() {
        ex(e);
    }
    for cte in &mut q.ctes {
        shift_outer_refs(&mut cte.query, by, depth + 1, memo)?;
        if let Some((base, rec, _)) = &mut cte.recursive_parts {
            shift_outer_refs(base, by, depth + 1, memo)?;
            shift_outer_refs(rec, by, depth + 1, memo)?;
        }
    }
    // Only SELECTs are inlined: an INSERT's source (q.insert) never comes here.
    match failed.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Checks a sublink's query for references to the grouped level.
fn check_sublink_outer_refs(q: &Query, depth: u32, groups: &[Expr], report: &dyn Fn(&Var) -> PgResult<()>) -> PgResult<()> {
    fn check(e: &Expr, depth: u32, groups: &[Expr], report: &dyn Fn(&Var) -> PgResult<()>) -> PgResult<()> {
        match e {
            // An aggregate of the grouped level itself reads its input rows.
            Expr::Agg(a) if a.levels_up == depth => Ok(()),
            Expr::Var(v) if v.levels_up == depth => {
                let as_local = Expr::Var(Var { levels_up: 0, ..v.clone() });
                if groups.contains(&as_local) {
                    Ok(())
                } else {
                    report(v)
                }
            }
            Expr::SubLink { query, test, .. } => {
                if let Some(t) = test {
                    check(t, depth, groups, report)?;
                }
                check_sublink_outer_refs(query, depth + 1, groups, report)
            }
            other => {
                let mut result = Ok(());
                other.for_each_child(&mut |c| {
                    if result.is_ok() {
                        result = check(c, depth, groups, report);
                    }
                });
                result
            }
        }
    }
    let mut result = Ok(());
    let mut visit = |e: &Expr| {
        if result.is_ok() {
            result = check(e, depth, groups, report);
        }
    };
    for t in &q.targets {
        visit(&t.expr);
    }
    if let Some(qu) = &q.quals {
        visit(qu);
    }
    if let Some(h) = &q.having {
        visit(h);
    }
    result
}


fn call_location(n: &pb::Node) -> i32 {
    match &n.node {
        Some(NodeEnum::FuncCall(f)) => f.location,
        _ => -1,
    }
}

/// A call to a function returning `record` given a column definition
/// list. The functions that build their rows from the list
/// (json(b)_to_record(set)) receive it as two trailing arguments: the
/// column names (text[]) and types (int8[], oid << 32 | typmod); any
/// other record function must already produce rows of that shape.
fn record_function_with_columns(b: &crate::catalog::DbCatalog, e: Expr, defs: &[(String, SqlType)], location: i32) -> PgResult<Expr> {
    let Expr::Func { func, mut args, ty } = e else {
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, "a column definition list is only allowed for functions returning \"record\"").with_position(pos(location)));
    };
    if ty.oid != oid::RECORD {
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, "a column definition list is only allowed for functions returning \"record\"").with_position(pos(location)));
    }
    let src = b.proc(func.oid).map(|p| p.src.clone()).unwrap_or_default();
    if crate::functions::json_populate::takes_column_definitions(&src) {
        let names = defs.iter().map(|(n, _)| Datum::text(n)).collect();
        let types = defs.iter().map(|(_, t)| Datum::Int8(((t.oid as i64) << 32) | (t.typmod as u32 as i64))).collect();
        args.push(Expr::Const(Datum::Array(Arc::new(tusk_types::array::Array::from_vec(oid::TEXT, names))), SqlType::new(oid::TEXT_ARRAY)));
        args.push(Expr::Const(Datum::Array(Arc::new(tusk_types::array::Array::from_vec(oid::INT8, types))), SqlType::new(oid::INT8_ARRAY)));
    }
    Ok(Expr::Func { func, args, ty })
}
