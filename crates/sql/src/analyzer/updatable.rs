//! Automatically updatable views: INSERT, UPDATE and DELETE on a simple
//! view act on the table under it, as PostgreSQL's rewriter arranges
//! (rewriteTargetView).
//!
//! A view qualifies when its query reads one table (or one such view) and
//! has no DISTINCT, GROUP BY, HAVING, LIMIT/OFFSET, WITH, set operation,
//! aggregate or set-returning function. The statement then targets the base
//! table, the view's name stays visible as a range table entry whose
//! columns are the view's expressions over that table (so WHERE and
//! RETURNING read view columns), the view's WHERE is added to UPDATE and
//! DELETE, and WITH CHECK OPTION becomes a condition every new row must meet.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use super::{Analyzer, NsItem};
use crate::catalog::{RelKind, Relation};
use crate::expr::Expr;
use crate::query::{JoinKind, RangeTblEntry, RteKind};

/// A view resolved down to the table a statement on it changes.
pub(crate) struct ViewTarget {
    /// The range table entry of the base table (the statement's result relation).
    pub base_rte: usize,
    pub base: Arc<Relation>,
    /// An entry named like the view whose columns are the view's expressions.
    pub view_rte: usize,
    pub view_name: String,
    /// For each view column, the base table column it is, if it is one.
    pub base_columns: Vec<Option<usize>>,
    /// The WHERE conditions of the view and the views under it, innermost
    /// first, each with the name of its view.
    pub quals: Vec<(String, Expr)>,
    /// WITH CHECK OPTION conditions: (view name, condition).
    pub checks: Vec<(String, Expr)>,
}

/// What the statement does, for PostgreSQL's messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ViewDml {
    Insert,
    Update,
    Delete,
}

impl ViewDml {
    fn verb(self) -> &'static str {
        match self {
            ViewDml::Insert => "insert into",
            ViewDml::Update => "update",
            ViewDml::Delete => "delete from",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            ViewDml::Insert => "To enable inserting into the view, provide an INSTEAD OF INSERT trigger or an unconditional ON INSERT DO INSTEAD rule.",
            ViewDml::Update => "To enable updating the view, provide an INSTEAD OF UPDATE trigger or an unconditional ON UPDATE DO INSTEAD rule.",
            ViewDml::Delete => "To enable deleting from the view, provide an INSTEAD OF DELETE trigger or an unconditional ON DELETE DO INSTEAD rule.",
        }
    }
}

impl ViewDml {
    /// The privilege the statement needs on its target.
    pub(crate) fn privilege(self) -> u32 {
        match self {
            ViewDml::Insert => crate::catalog::acl::INSERT,
            ViewDml::Update => crate::catalog::acl::UPDATE,
            ViewDml::Delete => crate::catalog::acl::DELETE,
        }
    }
}

impl Analyzer<'_> {
    /// Resolves DML on `view` (named `alias` in the statement). Leaves the
    /// base table's entry out of the namespace and the view's entry in it.
    pub(crate) fn view_target(&mut self, view: &Arc<Relation>, alias: Option<&pb::Alias>, dml: ViewDml) -> PgResult<ViewTarget> {
        let mut t = self.resolve_view(view, dml, 0)?;
        // Checks apply to the columns of the base table's new row; the
        // statement's own namespace shows the view under its alias.
        let name = alias.map(|a| a.aliasname.clone()).unwrap_or_else(|| view.name.clone());
        self.level().rtable[t.view_rte].alias = name;
        self.level().rtable[t.view_rte].has_alias = alias.is_some();
        t.view_name = view.name.clone();
        Ok(t)
    }

    fn resolve_view(&mut self, view: &Arc<Relation>, dml: ViewDml, depth: usize) -> PgResult<ViewTarget> {
        if depth > 32 {
            return Err(PgError::new(sqlstate::INVALID_RECURSION, format!("infinite recursion detected in rules for relation \"{}\"", view.name)));
        }
        let info = view.view.as_ref().ok_or_else(|| PgError::internal("view without definition"))?;
        let parsed = crate::parser::parse(&info.query)?;
        let Some(NodeEnum::SelectStmt(sel)) = parsed.into_iter().next().map(|p| p.node) else {
            return Err(PgError::internal("view definition is not a SELECT"));
        };
        let not_updatable = |detail: &str| {
            PgError::new(sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE, format!("cannot {} view \"{}\"", dml.verb(), view.name))
                .with_detail(detail)
                .with_hint(dml.hint())
        };
        if !sel.distinct_clause.is_empty() {
            return Err(not_updatable("Views containing DISTINCT are not automatically updatable."));
        }
        if !sel.group_clause.is_empty() {
            return Err(not_updatable("Views containing GROUP BY are not automatically updatable."));
        }
        if sel.having_clause.is_some() {
            return Err(not_updatable("Views containing HAVING are not automatically updatable."));
        }
        if sel.op > 1 {
            return Err(not_updatable("Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable."));
        }
        if sel.with_clause.is_some() {
            return Err(not_updatable("Views containing WITH are not automatically updatable."));
        }
        if sel.limit_count.is_some() || sel.limit_offset.is_some() {
            return Err(not_updatable("Views containing LIMIT or OFFSET are not automatically updatable."));
        }
        let single = || not_updatable("Views that do not select from a single table or view are not automatically updatable.");
        let [from] = sel.from_clause.as_slice() else { return Err(single()) };
        let Some(NodeEnum::RangeVar(rv)) = &from.node else { return Err(single()) };
        let saved_acl = (self.acl_user.take(), self.perm_as.replace(view.owner));
        let base = self.range_var_relation(rv);
        self.acl_user = saved_acl.0;
        let base = match base {
            Ok(b) => b,
            Err(e) => {
                self.perm_as = saved_acl.1;
                return Err(e);
            }
        };
        self.note_perm(base.oid, dml.privilege(), true);
        self.perm_as = saved_acl.1;
        let from_alias = rv.alias.clone().unwrap_or(pb::Alias { aliasname: base.name.clone(), colnames: vec![] });

        // The entry the view's expressions are analyzed against: the base
        // table itself, or the entry of the view under this one.
        let (inner, scope_rte) = match base.kind {
            RelKind::Table => {
                let mut rte = self.relation_rte(base.clone(), Some(&from_alias))?;
                rte.inh = rv.inh;
                let idx = self.add_rte(rte);
                (None, idx)
            }
            RelKind::View => {
                let inner = self.resolve_view(&base, dml, depth + 1)?;
                self.level().rtable[inner.view_rte].alias = from_alias.aliasname.clone();
                self.level().rtable[inner.view_rte].has_alias = rv.alias.is_some();
                let idx = inner.view_rte;
                (Some(inner), idx)
            }
            _ => return Err(single()),
        };
        // Only the FROM item is visible to the view's own expressions.
        let saved_namespace = std::mem::take(&mut self.level().namespace);
        self.level().namespace.push(NsItem { rte: scope_rte, rel_visible: true, cols_visible: true, lateral_only: false });
        let analyzed = (|| -> PgResult<(Vec<Expr>, Option<Expr>)> {
            let targets = self.transform_target_list(&sel.target_list, true)?;
            let quals = match &sel.where_clause {
                Some(w) => {
                    let e = self.transform_expr(w)?;
                    Some(self.coerce_to_boolean(e, "WHERE", -1)?)
                }
                None => None,
            };
            Ok((targets.into_iter().filter(|t| !t.junk).map(|t| t.expr).collect(), quals))
        })();
        self.level().namespace = saved_namespace;
        let (exprs, quals) = analyzed?;
        let mut found_agg = false;
        let mut found_srf = false;
        for e in &exprs {
            e.walk(&mut |x| match x {
                Expr::Agg(_) => found_agg = true,
                Expr::Func { func, .. } if matches!(func.imp, crate::functions::ScalarFn::Set(_)) => found_srf = true,
                _ => {}
            });
        }
        if found_agg {
            return Err(not_updatable("Views that return aggregate functions are not automatically updatable."));
        }
        if found_srf {
            return Err(not_updatable("Views that return set-returning functions are not automatically updatable."));
        }

        let (base_rte, base_rel, mut all_quals, mut checks) = match inner {
            None => (scope_rte, base.clone(), Vec::new(), Vec::new()),
            Some(i) => (i.base_rte, i.base, i.quals, i.checks),
        };
        let base_columns: Vec<Option<usize>> = exprs
            .iter()
            .map(|e| match e {
                Expr::Var(v) if v.rte == base_rte && v.levels_up == 0 => Some(v.col),
                _ => None,
            })
            .collect();
        if dml != ViewDml::Delete && base_columns.iter().all(Option::is_none) {
            return Err(not_updatable("Views that have no updatable columns are not automatically updatable."));
        }
        // CASCADED checks every view underneath too (each under its own
        // name); LOCAL only this one. Inner views' checks come first, as
        // PostgreSQL evaluates them.
        match info.check_option.as_deref() {
            Some("cascaded") => {
                for q in &all_quals {
                    if !checks.iter().any(|(n, _)| n == &q.0) {
                        checks.push(q.clone());
                    }
                }
                if let Some(q) = &quals {
                    checks.push((view.name.clone(), q.clone()));
                }
            }
            Some(_) => {
                if let Some(q) = &quals {
                    checks.push((view.name.clone(), q.clone()));
                }
            }
            None => {}
        }
        if let Some(q) = quals {
            all_quals.push((view.name.clone(), q));
        }
        let names: Vec<String> = view.live_columns().map(|(_, c)| c.name.clone()).collect();
        let types = exprs.iter().map(|e| e.ty()).collect();
        let view_rte = self.add_rte(RangeTblEntry {
            kind: RteKind::Join { kind: JoinKind::Inner, columns: exprs },
            alias: view.name.clone(),
            has_alias: false,
            col_names: names,
            col_types: types,
            lateral: false,
            inh: false,
        });
        Ok(ViewTarget { base_rte, base: base_rel, view_rte, view_name: view.name.clone(), base_columns, quals: all_quals, checks })
    }

    /// The base column a view column names, or PostgreSQL's error when the
    /// view column is an expression.
    pub(crate) fn view_column(&self, t: &ViewTarget, dml: ViewDml, name: &str, location: i32) -> PgResult<usize> {
        let level = self.level_ref();
        let Some(i) = level.rtable[t.view_rte].col_names.iter().position(|n| n == name) else {
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{}\" of relation \"{}\" does not exist", name, t.view_name))
                .with_position(super::pos(location)));
        };
        t.base_columns[i].ok_or_else(|| {
            let verb = if dml == ViewDml::Insert { "insert into" } else { "update" };
            PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot {verb} column \"{name}\" of view \"{}\"", t.view_name))
                .with_detail("View columns that are not columns of their base relation are not updatable.")
        })
    }
}
