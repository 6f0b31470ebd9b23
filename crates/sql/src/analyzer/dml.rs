//! INSERT, UPDATE and DELETE analysis (analyze.c's transformInsertStmt and
//! friends, plus the rewriter's default-filling: every INSERT target list is
//! completed with the columns' DEFAULT expressions here, so the executor
//! only ever writes whole rows).

use std::sync::Arc;

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use super::coerce::CoercionContext;
use super::expr::{display_type, expr_location};
use super::updatable::{ViewDml, ViewTarget};
use super::{pos, Analyzer, NsItem};
use crate::catalog::{ConstraintKind, RelKind, Relation};
use crate::expr::{Expr, Var};
use crate::query::*;

impl<'a> Analyzer<'a> {
    /// A column's DEFAULT as an expression (NULL if none).
    pub fn column_default(&mut self, rel: &Relation, col: usize) -> PgResult<Expr> {
        let (attnum, c) = rel.live_columns().nth(col).ok_or_else(|| PgError::internal("column index"))?;
        let ty = c.sql_type();
        if c.identity != ' ' {
            // An identity column's default is the next value of its sequence.
            let seq = self
                .env
                .catalog
                .relations
                .values()
                .find(|r| r.sequence.as_ref().and_then(|s| s.owned_by) == Some((rel.oid, attnum)))
                .map(|r| r.oid)
                .ok_or_else(|| PgError::internal(format!("identity column \"{}\" has no sequence", c.name)))?;
            let proc = self.b.proc(1574).ok_or_else(|| PgError::internal("nextval missing"))?;
            let func = self.func_ref(proc, -1)?;
            let call = Expr::Func {
                func,
                args: vec![Expr::Const(tusk_types::Datum::Oid(seq), SqlType::new(tusk_types::oid::REGCLASS))],
                ty: SqlType::new(tusk_types::oid::INT8),
            };
            return self.coerce_to(call, ty, CoercionContext::Assignment, -1);
        }
        let Some(text) = &c.default else { return self.type_default(ty) };
        let e = self.analyze_standalone_expr(text, "DEFAULT expressions")?;
        self.coerce_to(e, ty, CoercionContext::Assignment, -1)
    }

    /// A value of a type with no column default: its domain's DEFAULT
    /// (the nearest of its domains that has one), else NULL, which a
    /// domain's NOT NULL then refuses (build_column_default).
    pub fn type_default(&mut self, ty: SqlType) -> PgResult<Expr> {
        let mut t = ty.oid;
        let mut depth = 0;
        while let Some(d) = crate::catalog::types::domain(t) {
            if let Some(text) = &d.default {
                let e = self.analyze_standalone_expr(text, "DEFAULT expressions")?;
                return self.coerce_to(e, ty, CoercionContext::Assignment, -1);
            }
            t = d.base.oid;
            depth += 1;
            if depth > 32 {
                break;
            }
        }
        if crate::catalog::types::domain(ty.oid).is_some() {
            let null = Expr::null(crate::catalog::types::base_type(ty));
            return self.coerce_to_domain(null, ty);
        }
        Ok(Expr::null(ty))
    }

    /// Analyzes an expression stored as SQL text (defaults, CHECK constraints)
    /// in a scope of its own.
    pub fn analyze_standalone_expr(&mut self, text: &str, clause: &'static str) -> PgResult<Expr> {
        let node = parse_expression(text)?;
        self.analyze_standalone_node(&node, clause)
    }

    /// analyze_standalone_expr for an expression still in its statement's
    /// parse tree, so that its errors point into the statement's text.
    pub fn analyze_standalone_node(&mut self, node: &Node, clause: &'static str) -> PgResult<Expr> {
        let saved = std::mem::take(&mut self.levels);
        self.levels.push(super::Level::default());
        self.level().agg_forbidden = Some(clause);
        let r = self.transform_expr(node);
        self.levels = saved;
        r
    }

    /// The relation a DML statement changes: a table, or the table under
    /// an automatically updatable view (with the view's resolution).
    fn target_relation(&mut self, rv: &pb::RangeVar, dml: ViewDml) -> PgResult<(usize, Arc<Relation>, Option<ViewTarget>)> {
        let verb = match dml {
            ViewDml::Insert => "insert into",
            ViewDml::Update => "update",
            ViewDml::Delete => "delete from",
        };
        let rel = self.range_var_relation(rv)?;
        self.note_perm(rel.oid, dml.privilege(), true);
        if rel.oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
            return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied: \"{}\" is a system catalog", rel.name)));
        }
        match rel.kind {
            RelKind::Table => {}
            RelKind::ForeignTable => return Err(crate::catalog::foreign::scan_error(self.env.catalog, &rel)),
            RelKind::View if has_instead_trigger(&rel, dml) => {
                // The view's INSTEAD OF triggers do the work: INSERT gives
                // them the new rows; UPDATE and DELETE read the view's rows
                // and give them each.
                let rte = match dml {
                    ViewDml::Insert => self.relation_rte(rel.clone(), rv.alias.as_ref())?,
                    ViewDml::Update | ViewDml::Delete => self.view_rte(&rel, rv.alias.as_ref())?,
                };
                let idx = self.add_rte(rte);
                return Ok((idx, rel, None));
            }
            RelKind::View => {
                let t = self.view_target(&rel, rv.alias.as_ref(), dml)?;
                return Ok((t.base_rte, t.base.clone(), Some(t)));
            }
            _ => {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("cannot {verb} {} \"{}\"", if rel.kind == RelKind::Sequence { "sequence" } else { "relation" }, rel.name),
                ))
            }
        }
        let mut rte = self.relation_rte(rel.clone(), rv.alias.as_ref())?;
        rte.inh = rv.inh;
        let idx = self.add_rte(rte);
        Ok((idx, rel, None))
    }

    /// The entry a statement's WHERE and RETURNING see: the view when the
    /// target is one, else the table.
    fn target_namespace_item(result_rte: usize, view: Option<&ViewTarget>) -> NsItem {
        NsItem { rte: view.map(|t| t.view_rte).unwrap_or(result_rte), rel_visible: true, cols_visible: true, lateral_only: false }
    }

    /// The statement's WHERE combined with the view's.
    fn with_view_quals(quals: Option<Expr>, view: Option<&ViewTarget>) -> Option<Expr> {
        let mut all: Vec<Expr> = view.map(|t| t.quals.iter().map(|(_, q)| q.clone()).collect()).unwrap_or_default();
        all.extend(quals);
        match all.len() {
            0 => None,
            1 => all.pop(),
            _ => Some(Expr::Bool { op: crate::expr::BoolOp::And, args: all }),
        }
    }

    fn transform_returning(&mut self, list: &[Node]) -> PgResult<Vec<TargetEntry>> {
        if list.is_empty() {
            return Ok(Vec::new());
        }
        self.level().agg_forbidden = Some("RETURNING");
        let r = self.transform_target_list(list, true);
        self.level().agg_forbidden = None;
        r
    }

    fn column_index(&self, rel: &Relation, name: &str, location: i32) -> PgResult<usize> {
        rel.live_columns().position(|(_, c)| c.name == name).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{}\" of relation \"{}\" does not exist", name, rel.name),
            )
            .with_position(pos(location))
        })
    }

    /// Coerces a value for assignment to a column, with PostgreSQL's message.
    fn assign_value(&mut self, e: Expr, rel: &Relation, col: usize, location: i32) -> PgResult<Expr> {
        let (_, c) = rel.live_columns().nth(col).expect("column index");
        let target = c.sql_type();
        let name = c.name.clone();
        match self.try_coerce(e, target, CoercionContext::Assignment, location)? {
            Ok(x) => Ok(x),
            Err(x) => Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "column \"{}\" is of type {} but expression is of type {}",
                    name,
                    super::types::format_type(self.b, target.oid, -1),
                    display_type(self.b, x.ty())
                ),
            )
            .with_hint("You will need to rewrite or cast the expression.")
            .with_position(pos(location))),
        }
    }

    /// INSERT into a subscripted column: the array holding just the value
    /// at those subscripts (the assignment starts from a NULL array).
    fn insert_subscripted(&mut self, e: Expr, rel: &Relation, col: usize, indirection: &[Node], location: i32) -> PgResult<Expr> {
        let (_, c) = rel.live_columns().nth(col).expect("column index");
        let name = c.name.clone();
        let base = Expr::null(c.sql_type());
        self.subscript_assignment(base, indirection, e, &name, location)
    }

    fn check_identity_insert(&self, rel: &Relation, col: usize, overriding_system: bool) -> PgResult<()> {
        let (_, c) = rel.live_columns().nth(col).expect("column index");
        if c.identity == 'a' && !overriding_system {
            return Err(PgError::new(
                sqlstate::GENERATED_ALWAYS,
                format!("cannot insert a non-DEFAULT value into column \"{}\"", c.name),
            )
            .with_detail(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", c.name))
            .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
        }
        Ok(())
    }

    pub(crate) fn analyze_insert(&mut self, s: &pb::InsertStmt) -> PgResult<Query> {
        let (q, level) = self.with_level(|a| a.transform_insert(s))?;
        let mut q = q;
        q.rtable = level.rtable;
        q.ctes = level.ctes;
        Ok(q)
    }

    fn transform_insert(&mut self, s: &pb::InsertStmt) -> PgResult<Query> {
        if let Some(w) = &s.with_clause {
            self.transform_with(w)?;
        }
        let rv = s.relation.as_ref().ok_or_else(|| PgError::internal("INSERT without relation"))?;
        let (result_rte, rel, view) = self.target_relation(rv, ViewDml::Insert)?;
        let ncols = rel.live_columns().count();
        let overriding_system = s.r#override == 3;
        let overriding_user = s.r#override == 2;
        // The listed columns, or all of them.
        let mut columns: Vec<usize> = Vec::new();
        let mut col_locations: Vec<i32> = Vec::new();
        // Per listed column, its subscripts (`INSERT INTO t (a[1:2]) ...`).
        let mut indirections: Vec<&[Node]> = Vec::new();
        for c in &s.cols {
            let Some(NodeEnum::ResTarget(rt)) = &c.node else { return Err(PgError::internal("insert column")) };
            if !rt.indirection.is_empty() && view.is_some() {
                return Err(PgError::unsupported("INSERT into subfields or array elements of a view"));
            }
            indirections.push(&rt.indirection);
            let idx = match &view {
                Some(t) => self.view_column(t, ViewDml::Insert, &rt.name, rt.location)?,
                None => self.column_index(&rel, &rt.name, rt.location)?,
            };
            if columns.contains(&idx) {
                return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{}\" specified more than once", rt.name))
                    .with_position(pos(rt.location)));
            }
            columns.push(idx);
            col_locations.push(rt.location);
        }
        let explicit_cols = !s.cols.is_empty();
        if !explicit_cols {
            // Without a column list, the values fill the leading columns.
            match &view {
                None => {
                    let given = insert_source_width(s).unwrap_or(ncols).min(ncols);
                    columns = (0..given).collect();
                }
                Some(t) => {
                    let names = self.level_ref().rtable[t.view_rte].col_names.clone();
                    let given = insert_source_width(s).unwrap_or(names.len()).min(names.len());
                    for name in &names[..given] {
                        columns.push(self.view_column(t, ViewDml::Insert, name, -1)?);
                    }
                }
            }
            col_locations = vec![-1; columns.len()];
        }
        let mut q = Query::new(CommandKind::Insert);
        q.result_rte = Some(result_rte);
        // provided[i] = the expression for table column i, if the source gives one.
        let mut provided: Vec<Option<Expr>> = vec![None; ncols];
        let source = s.select_stmt.as_deref().and_then(|n| match &n.node {
            Some(NodeEnum::SelectStmt(sel)) => Some(sel.as_ref()),
            _ => None,
        });
        match source {
            None => {} // DEFAULT VALUES
            Some(sel) if !sel.values_lists.is_empty() && sel.op <= 1 && sel.with_clause.is_none() => {
                let rows = &sel.values_lists;
                // Several rows must agree in length before any is matched to the columns.
                if rows.len() > 1 {
                    let len = |r: &pb::Node| match &r.node {
                        Some(NodeEnum::List(items)) => items.items.len(),
                        _ => 0,
                    };
                    let first = len(&rows[0]);
                    if let Some(bad) = rows.iter().find(|r| len(r) != first) {
                        let loc = match &bad.node {
                            Some(NodeEnum::List(items)) => items.items.first().map(expr_location).unwrap_or(-1),
                            _ => -1,
                        };
                        return Err(PgError::syntax("VALUES lists must all be the same length").with_position(pos(loc)));
                    }
                }
                let mut analyzed: Vec<Vec<Expr>> = Vec::with_capacity(rows.len());
                for row in rows {
                    let Some(NodeEnum::List(items)) = &row.node else { return Err(PgError::internal("VALUES row")) };
                    if items.items.len() > columns.len() {
                        return Err(PgError::syntax("INSERT has more expressions than target columns")
                            .with_position(pos(expr_location(&items.items[columns.len()]))));
                    }
                    if items.items.len() < columns.len() {
                        let loc = if explicit_cols { col_locations[items.items.len()] } else { items.items.last().map(expr_location).unwrap_or(-1) };
                        return Err(PgError::syntax("INSERT has more target columns than expressions").with_position(pos(loc)));
                    }
                    let mut out = Vec::with_capacity(columns.len());
                    self.level().agg_forbidden = Some("VALUES");
                    for (i, (item, &col)) in items.items.iter().zip(&columns).enumerate() {
                        let e = if matches!(item.node, Some(NodeEnum::SetToDefault(_))) {
                            self.column_default(&rel, col)?
                        } else {
                            if !overriding_user {
                                self.check_identity_insert(&rel, col, overriding_system)?;
                            }
                            let e = self.transform_expr(item)?;
                            let e = if overriding_user && rel.live_columns().nth(col).map(|(_, c)| c.identity != ' ').unwrap_or(false) {
                                self.column_default(&rel, col)?
                            } else {
                                e
                            };
                            match indirections.get(i).filter(|ind| !ind.is_empty()) {
                                Some(ind) => self.insert_subscripted(e, &rel, col, ind, col_locations[i])?,
                                None => self.assign_value(e, &rel, col, expr_location(item))?,
                            }
                        };
                        out.push(e);
                    }
                    self.level().agg_forbidden = None;
                    analyzed.push(out);
                }
                if analyzed.len() == 1 {
                    for (e, &col) in analyzed.pop().unwrap().into_iter().zip(&columns) {
                        provided[col] = Some(e);
                    }
                } else {
                    let types: Vec<SqlType> = columns.iter().map(|&c| rel.live_columns().nth(c).unwrap().1.sql_type()).collect();
                    let names: Vec<String> = (1..=columns.len()).map(|i| format!("column{i}")).collect();
                    let vrte = self.add_rte(RangeTblEntry {
                        kind: RteKind::Values(analyzed),
                        alias: "*VALUES*".into(),
                        has_alias: false,
                        col_names: names,
                        col_types: types.clone(),
                        lateral: false,
                        inh: false,
                    });
                    q.from.push(FromItem::Rte(vrte));
                    for (i, &col) in columns.iter().enumerate() {
                        provided[col] = Some(Expr::Var(Var { rte: vrte, col: i, levels_up: 0, ty: types[i] }));
                    }
                }
            }
            Some(sel) => {
                // INSERT ... SELECT: the SELECT is a subquery in FROM. Its
                // unknown-typed outputs (string literals) are not made text:
                // as in PostgreSQL, such constants are taken up into the
                // INSERT and converted to the target column's type.
                let sub = self.analyze_select_stmt_with(sel, false)?;
                let unknown_consts: Vec<Option<Expr>> = sub
                    .output()
                    .map(|t| match &t.expr {
                        e @ Expr::Const(_, ty) if ty.oid == tusk_types::oid::UNKNOWN => Some(e.clone()),
                        _ => None,
                    })
                    .collect();
                let literal_locations: Vec<i32> = sel
                    .target_list
                    .iter()
                    .map(|t| match &t.node {
                        Some(NodeEnum::ResTarget(rt)) => rt.val.as_deref().map(expr_location).unwrap_or(-1),
                        _ => -1,
                    })
                    .collect();
                let outputs: Vec<SqlType> = sub.output().map(|t| t.expr.ty()).collect();
                if outputs.len() > columns.len() {
                    return Err(PgError::syntax("INSERT has more expressions than target columns"));
                }
                if outputs.len() < columns.len() {
                    return Err(PgError::syntax("INSERT has more target columns than expressions"));
                }
                let alias = pb::Alias { aliasname: "*SELECT*".into(), colnames: vec![] };
                let rte = self.subquery_rte(sub, &alias, false)?;
                let srte = self.add_rte(rte);
                q.from.push(FromItem::Rte(srte));
                for (i, &col) in columns.iter().enumerate() {
                    if !overriding_user {
                        self.check_identity_insert(&rel, col, overriding_system)?;
                    }
                    let (v, loc) = match unknown_consts.get(i).cloned().flatten() {
                        Some(c) => (c, literal_locations.get(i).copied().unwrap_or(-1)),
                        None => (Expr::Var(Var { rte: srte, col: i, levels_up: 0, ty: outputs[i] }), -1),
                    };
                    provided[col] = Some(match indirections.get(i).filter(|ind| !ind.is_empty()) {
                        Some(ind) => self.insert_subscripted(v, &rel, col, ind, col_locations[i])?,
                        None => self.assign_value(v, &rel, col, loc)?,
                    });
                }
            }
        }
        // Complete the row with defaults.
        for col in 0..ncols {
            let e = match provided[col].take() {
                Some(e) => e,
                None => self.column_default(&rel, col)?,
            };
            let name = rel.live_columns().nth(col).unwrap().1.name.clone();
            q.targets.push(TargetEntry { expr: e, name, junk: false, origin: None });
        }
        // ON CONFLICT
        let mut on_conflict = None;
        if let Some(oc) = &s.on_conflict_clause {
            if view.is_some() {
                return Err(PgError::unsupported("INSERT ... ON CONFLICT on a view"));
            }
            on_conflict = Some(self.transform_on_conflict(oc, &rel, result_rte)?);
        }
        // RETURNING sees the target relation (or the view).
        self.level().namespace.push(Self::target_namespace_item(result_rte, view.as_ref()));
        if let Some(t) = &view {
            q.view_checks = t.checks.clone();
        }
        q.returning = self.transform_returning(&s.returning_list)?;
        if !q.returning.is_empty() {
            self.mark_target_read();
        }
        if s.on_conflict_clause.as_ref().is_some_and(|oc| oc.action == pb::OnConflictAction::OnconflictUpdate as i32) {
            for p in self.perms.iter_mut().filter(|p| p.target) {
                p.required |= crate::catalog::acl::UPDATE;
            }
        }
        let source_query = Box::new(Query::new(CommandKind::Select));
        q.insert = Some(InsertSpec { columns, source: source_query, on_conflict, overriding_system });
        Ok(q)
    }

    fn transform_on_conflict(&mut self, oc: &pb::OnConflictClause, rel: &Arc<Relation>, result_rte: usize) -> PgResult<OnConflict> {
        // Infer the arbiter unique index.
        let mut arbiter = None;
        if let Some(inf) = &oc.infer {
            if !inf.conname.is_empty() {
                let c = rel.constraints.iter().find(|c| c.name == inf.conname).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("constraint \"{}\" for table \"{}\" does not exist", inf.conname, rel.name),
                    )
                })?;
                if !matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique | ConstraintKind::Exclusion) {
                    return Err(PgError::new(
                        sqlstate::WRONG_OBJECT_TYPE,
                        "constraint in ON CONFLICT clause has no associated index",
                    ));
                }
                if c.deferrable {
                    return Err(PgError::new(
                        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "ON CONFLICT does not support deferrable unique constraints/exclusion constraints as arbiters",
                    ));
                }
                if c.kind == ConstraintKind::Exclusion && oc.action != 2 {
                    return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "ON CONFLICT DO UPDATE not supported with exclusion constraints"));
                }
                arbiter = Some(c.index);
            } else {
                let mut attnums = Vec::new();
                for e in &inf.index_elems {
                    let Some(NodeEnum::IndexElem(ie)) = &e.node else { continue };
                    if ie.expr.is_some() {
                        return Err(PgError::unsupported("ON CONFLICT with expression index inference"));
                    }
                    let (attnum, _) = rel.column_by_name(&ie.name).ok_or_else(|| {
                        PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" does not exist", ie.name))
                            .with_position(pos(inf.location))
                    })?;
                    attnums.push(attnum);
                }
                attnums.sort();
                for idx in self.env.catalog.indexes_of(rel) {
                    let info = idx.index.as_ref().expect("index relation");
                    // Inference takes unique indexes only (not an exclusion constraint's).
                    if !info.unique || !info.exclusion.is_empty() || info.predicate.is_some() {
                        continue;
                    }
                    let mut keys: Vec<i16> = info.keys.iter().map(|k| k.attnum).collect();
                    keys.sort();
                    if keys == attnums && info.keys.iter().all(|k| k.expr.is_none()) {
                        arbiter = Some(idx.oid);
                        break;
                    }
                }
                if arbiter.is_none() {
                    return Err(PgError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                    ));
                }
            }
        }
        if oc.action == 2 {
            return Ok(OnConflict::Nothing { arbiter });
        }
        let arbiter = arbiter.ok_or_else(|| {
            PgError::syntax("ON CONFLICT DO UPDATE requires inference specification or constraint name")
                .with_hint("For example, ON CONFLICT (column_name).")
                .with_position(pos(oc.location))
        })?;
        // SET and WHERE see the existing row (the target) and EXCLUDED.
        let excluded = self.relation_rte(rel.clone(), Some(&pb::Alias { aliasname: "excluded".into(), colnames: vec![] }))?;
        let ex_idx = self.add_rte(excluded);
        let base = self.level_ref().namespace.len();
        self.level().namespace.push(NsItem { rte: result_rte, rel_visible: true, cols_visible: true, lateral_only: false });
        self.level().namespace.push(NsItem { rte: ex_idx, rel_visible: true, cols_visible: false, lateral_only: false });
        let set = self.transform_set_list(&oc.target_list, rel, None, result_rte);
        let filter = match (&oc.where_clause, &set) {
            (Some(w), Ok(_)) => {
                let e = self.transform_expr(w);
                e.and_then(|e| self.coerce_to_boolean(e, "WHERE", expr_location(w))).map(Some)
            }
            _ => Ok(None),
        };
        self.level().namespace.truncate(base);
        Ok(OnConflict::Update { arbiter, set: set?, filter: filter? })
    }

    /// UPDATE's SET list (also ON CONFLICT DO UPDATE SET).
    /// `target_rte` is the range table entry of the target table, whose
    /// current column values subscripted assignments (`SET a[1] = x`) start from.
    fn transform_set_list(&mut self, list: &[Node], rel: &Relation, view: Option<&ViewTarget>, target_rte: usize) -> PgResult<Vec<(usize, Expr)>> {
        let mut out: Vec<(usize, Expr)> = Vec::new();
        // The columns assigned through subscripts or fields so far: a later
        // such assignment to one of them applies to the earlier one's result.
        let mut indirect: std::collections::HashSet<usize> = std::collections::HashSet::new();
        self.level().agg_forbidden = Some("UPDATE");
        let mut multi_source: Option<Vec<Expr>> = None;
        for item in list {
            let Some(NodeEnum::ResTarget(rt)) = &item.node else { return Err(PgError::internal("SET item")) };
            let col = match view {
                Some(t) => self.view_column(t, ViewDml::Update, &rt.name, rt.location),
                None => self.column_index(rel, &rt.name, rt.location),
            };
            let col = match col {
                Ok(c) => c,
                Err(e) => {
                    self.level().agg_forbidden = None;
                    return Err(e);
                }
            };
            let jsonb_target = rel.live_columns().nth(col).is_some_and(|(_, c)| c.type_oid == tusk_types::oid::JSONB);
            if !rt.indirection.is_empty() && view.is_some() {
                self.level().agg_forbidden = None;
                return Err(PgError::unsupported("UPDATE of subfields or array elements of a view"));
            }
            // Several subscripted assignments to one column apply in
            // turn, each to the result of the one before (rewriteTargetListIU).
            let earlier = out.iter().position(|(c, _)| *c == col);
            if earlier.is_some() && (rt.indirection.is_empty() || !indirect.contains(&col)) {
                self.level().agg_forbidden = None;
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("multiple assignments to same column \"{}\"", rt.name),
                ));
            }
            let val = rt.val.as_deref().ok_or_else(|| PgError::internal("SET without value"))?;
            let e = match &val.node {
                Some(NodeEnum::SetToDefault(_)) => self.column_default(rel, col)?,
                Some(NodeEnum::MultiAssignRef(m)) => {
                    if m.colno == 1 {
                        let src = m.source.as_deref().ok_or_else(|| PgError::internal("multiassign"))?;
                        match &src.node {
                            Some(NodeEnum::RowExpr(r)) => multi_source = Some(self.transform_list(&r.args)?),
                            Some(NodeEnum::List(l)) => multi_source = Some(self.transform_list(&l.items)?),
                            Some(NodeEnum::SubLink(sl)) => {
                                // The raw parser writes an expression sublink;
                                // here it stands for a whole row (MULTIEXPR).
                                let mut multi = (**sl).clone();
                                multi.sub_link_type = 6;
                                let row = self.transform_expr(&Node { node: Some(NodeEnum::SubLink(Box::new(multi))) })?;
                                let Expr::SubLink { query, .. } = &row else { return Err(PgError::internal("multiassign subquery")) };
                                let types: Vec<SqlType> = query.output().map(|t| t.expr.ty()).collect();
                                if types.len() != m.ncolumns as usize {
                                    self.level().agg_forbidden = None;
                                    return Err(PgError::syntax("number of columns does not match number of values").with_position(pos(rt.location)));
                                }
                                multi_source = Some(
                                    types.into_iter().enumerate().map(|(i, ty)| Expr::FieldSelect { arg: Box::new(row.clone()), field: i, ty }).collect(),
                                );
                            }
                            _ => {
                                self.level().agg_forbidden = None;
                                return Err(PgError::unsupported("this form of UPDATE ... SET (columns) = ..."));
                            }
                        }
                        if multi_source.as_ref().map(|v| v.len()).unwrap_or(0) != m.ncolumns as usize {
                            self.level().agg_forbidden = None;
                            return Err(PgError::syntax("number of columns does not match number of values").with_position(pos(rt.location)));
                        }
                    }
                    match multi_source.as_ref().and_then(|v| v.get(m.colno as usize - 1)) {
                        Some(v) => v.clone(),
                        None => return Err(PgError::internal("multiassign column")),
                    }
                }
                _ => self.transform_expr(val)?,
            };
            let e = if rt.indirection.is_empty() || !jsonb_target {
                e
            } else {
                // SET doc[...] = v: the column's new value from its old one.
                let column = pb::ColumnRef { fields: vec![Node { node: Some(NodeEnum::String(pb::String { sval: rt.name.clone() })) }], location: rt.location };
                let current = self.transform_expr(&Node { node: Some(NodeEnum::ColumnRef(column)) })?;
                self.jsonb_subscript_assign(current, &rt.indirection, e, rt.location)?
            };
            let (_, c) = rel.live_columns().nth(col).expect("column");
            if c.identity == 'a' && !matches!(val.node, Some(NodeEnum::SetToDefault(_))) {
                self.level().agg_forbidden = None;
                return Err(PgError::new(
                    sqlstate::GENERATED_ALWAYS,
                    format!("column \"{}\" can only be updated to DEFAULT", c.name),
                )
                .with_detail(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", c.name)));
            }
            if !rt.indirection.is_empty() && !jsonb_target {
                let base = match earlier {
                    Some(i) => out.remove(i).1,
                    None => Expr::Var(Var { rte: target_rte, col, levels_up: 0, ty: c.sql_type() }),
                };
                let name = c.name.clone();
                let e = self.subscript_assignment(base, &rt.indirection, e, &name, rt.location);
                let e = match e {
                    Ok(e) => e,
                    Err(err) => {
                        self.level().agg_forbidden = None;
                        return Err(err);
                    }
                };
                out.push((col, e));
                indirect.insert(col);
                continue;
            }
            let e = self.assign_value(e, rel, col, expr_location(val))?;
            out.push((col, e));
        }
        self.level().agg_forbidden = None;
        Ok(out)
    }

    pub(crate) fn analyze_update(&mut self, s: &pb::UpdateStmt) -> PgResult<Query> {
        let (q, level) = self.with_level(|a| a.transform_update(s))?;
        let mut q = q;
        q.rtable = level.rtable;
        q.ctes = level.ctes;
        Ok(q)
    }

    fn transform_update(&mut self, s: &pb::UpdateStmt) -> PgResult<Query> {
        if let Some(w) = &s.with_clause {
            self.transform_with(w)?;
        }
        let rv = s.relation.as_ref().ok_or_else(|| PgError::internal("UPDATE without relation"))?;
        let (result_rte, rel, view) = self.target_relation(rv, ViewDml::Update)?;
        let mut q = Query::new(CommandKind::Update);
        q.result_rte = Some(result_rte);
        q.from.push(FromItem::Rte(result_rte));
        self.level().namespace.push(Self::target_namespace_item(result_rte, view.as_ref()));
        for item in &s.from_clause {
            let (fi, items) = self.transform_from_item(item)?;
            self.level().namespace.extend(items);
            q.from.push(fi);
        }
        if let Some(w) = &s.where_clause {
            self.level().agg_forbidden = Some("WHERE");
            let e = self.transform_expr(w);
            self.level().agg_forbidden = None;
            q.quals = Some(self.coerce_to_boolean(e?, "WHERE", expr_location(w))?);
        }
        let target_rtes = [Some(result_rte), view.as_ref().map(|t| t.view_rte)];
        let mut reads = reads_target(q.quals.as_ref(), &target_rtes);
        q.quals = Self::with_view_quals(q.quals.take(), view.as_ref());
        q.update_set = self.transform_set_list(&s.target_list, &rel, view.as_ref(), result_rte)?;
        q.returning = self.transform_returning(&s.returning_list)?;
        reads |= !q.returning.is_empty() || q.update_set.iter().any(|(_, e)| reads_target(Some(e), &target_rtes));
        if reads {
            self.mark_target_read();
        }
        if let Some(t) = &view {
            q.view_checks = t.checks.clone();
        }
        Ok(q)
    }

    pub(crate) fn analyze_delete(&mut self, s: &pb::DeleteStmt) -> PgResult<Query> {
        let (q, level) = self.with_level(|a| a.transform_delete(s))?;
        let mut q = q;
        q.rtable = level.rtable;
        q.ctes = level.ctes;
        Ok(q)
    }

    fn transform_delete(&mut self, s: &pb::DeleteStmt) -> PgResult<Query> {
        if let Some(w) = &s.with_clause {
            self.transform_with(w)?;
        }
        let rv = s.relation.as_ref().ok_or_else(|| PgError::internal("DELETE without relation"))?;
        let (result_rte, _rel, view) = self.target_relation(rv, ViewDml::Delete)?;
        let mut q = Query::new(CommandKind::Delete);
        q.result_rte = Some(result_rte);
        q.from.push(FromItem::Rte(result_rte));
        self.level().namespace.push(Self::target_namespace_item(result_rte, view.as_ref()));
        for item in &s.using_clause {
            let (fi, items) = self.transform_from_item(item)?;
            self.level().namespace.extend(items);
            q.from.push(fi);
        }
        if let Some(w) = &s.where_clause {
            self.level().agg_forbidden = Some("WHERE");
            let e = self.transform_expr(w);
            self.level().agg_forbidden = None;
            q.quals = Some(self.coerce_to_boolean(e?, "WHERE", expr_location(w))?);
        }
        let target_rtes = [Some(result_rte), view.as_ref().map(|t| t.view_rte)];
        let reads = reads_target(q.quals.as_ref(), &target_rtes);
        q.quals = Self::with_view_quals(q.quals.take(), view.as_ref());
        q.returning = self.transform_returning(&s.returning_list)?;
        if reads || !q.returning.is_empty() {
            self.mark_target_read();
        }
        Ok(q)
    }
}

/// Whether a view has a row-level INSTEAD OF trigger for the statement
/// (enabled or not, as PostgreSQL's trigger flags count them).
fn has_instead_trigger(view: &Relation, dml: ViewDml) -> bool {
    use crate::catalog::trigger::{TriggerEvent, TriggerTiming};
    let event = match dml {
        ViewDml::Insert => TriggerEvent::Insert,
        ViewDml::Update => TriggerEvent::Update,
        ViewDml::Delete => TriggerEvent::Delete,
    };
    view.triggers.iter().any(|t| t.timing() == TriggerTiming::InsteadOf && t.is_row() && t.fires_on(event))
}

/// Whether an expression reads a column of the statement's target
/// (which then needs SELECT as well).
fn reads_target(e: Option<&Expr>, rtes: &[Option<usize>]) -> bool {
    let mut found = false;
    if let Some(e) = e {
        e.walk(&mut |x| {
            if let Expr::Var(v) = x {
                if v.levels_up == 0 && rtes.contains(&Some(v.rte)) {
                    found = true;
                }
            }
        });
    }
    found
}

impl Analyzer<'_> {
    /// The statement reads its target's columns: SELECT is needed too.
    pub(crate) fn mark_target_read(&mut self) {
        for p in self.perms.iter_mut().filter(|p| p.target) {
            p.required |= crate::catalog::acl::SELECT;
        }
    }
}

/// How many values each row of an INSERT's source has (VALUES or SELECT targets).
fn insert_source_width(s: &pb::InsertStmt) -> Option<usize> {
    let Some(NodeEnum::SelectStmt(sel)) = s.select_stmt.as_deref().and_then(|n| n.node.as_ref()) else { return None };
    if let Some(first) = sel.values_lists.first() {
        if let Some(NodeEnum::List(l)) = &first.node {
            return Some(l.items.len());
        }
    }
    if sel.op <= 1 && !sel.target_list.iter().any(|t| matches!(&t.node, Some(NodeEnum::ResTarget(rt)) if matches!(rt.val.as_deref().and_then(|v| v.node.as_ref()), Some(NodeEnum::ColumnRef(c)) if c.fields.iter().any(|f| matches!(f.node, Some(NodeEnum::AStar(_))))))) {
        return Some(sel.target_list.len());
    }
    None
}

/// Parses a lone expression (stored defaults and constraints) via `SELECT expr`.
pub fn parse_expression(text: &str) -> PgResult<Node> {
    let stmts = crate::parser::parse(&format!("SELECT {text}"))?;
    let Some(NodeEnum::SelectStmt(sel)) = stmts.into_iter().next().map(|s| s.node) else {
        return Err(PgError::internal("stored expression did not parse as SELECT"));
    };
    let Some(NodeEnum::ResTarget(rt)) = sel.target_list.into_iter().next().and_then(|t| t.node) else {
        return Err(PgError::internal("stored expression has no target"));
    };
    rt.val.map(|b| *b).ok_or_else(|| PgError::internal("stored expression is empty"))
}


impl<'a> Analyzer<'a> {
    /// Analyzes an expression over the columns of one relation (CHECK
    /// constraints, index expressions): the relation is range table entry 0.
    pub fn analyze_relation_expr(&mut self, rel: Arc<Relation>, text: &str, clause: &'static str) -> PgResult<Expr> {
        let node = parse_expression(text)?;
        self.analyze_relation_node(rel, &node, clause)
    }

    /// analyze_relation_expr for an expression of the statement being run
    /// (CREATE TABLE's CHECK, CREATE INDEX's keys): errors point into it.
    pub fn analyze_relation_node(&mut self, rel: Arc<Relation>, node: &Node, clause: &'static str) -> PgResult<Expr> {
        let saved = std::mem::take(&mut self.levels);
        self.levels.push(super::Level::default());
        let result = (|| {
            let rte = self.relation_rte(rel, None)?;
            let idx = self.add_rte(rte);
            self.level().namespace.push(NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false });
            self.level().agg_forbidden = Some(clause);
            self.transform_expr(node)
        })();
        self.levels = saved;
        result
    }

    /// A publication's row filter (transformPubWhereClauses): a boolean
    /// expression over one table, analyzed from the statement's own node so
    /// that errors point into the statement.
    pub fn analyze_publication_where(&mut self, rel: Arc<Relation>, node: &Node) -> PgResult<Expr> {
        let saved = std::mem::take(&mut self.levels);
        self.levels.push(super::Level::default());
        let result = (|| {
            let rte = self.relation_rte(rel, None)?;
            let idx = self.add_rte(rte);
            self.level().namespace.push(NsItem { rte: idx, rel_visible: true, cols_visible: true, lateral_only: false });
            self.level().agg_forbidden = Some("WHERE");
            let e = self.transform_expr(node)?;
            self.coerce_to_boolean(e, "PUBLICATION WHERE", super::expr::expr_location(node))
        })();
        self.levels = saved;
        result
    }
}
