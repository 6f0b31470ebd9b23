//! Where a recursive WITH query may refer to itself (PostgreSQL's
//! checkWellFormedRecursion): exactly once in its recursive term, and not
//! inside a subquery, the nullable side of an outer join, INTERSECT or
//! EXCEPT. Anywhere else the work table semantics break down (a
//! reference inside `WHERE n IN (SELECT * FROM x)` would recurse without
//! end), so PostgreSQL refuses such queries before running them.

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use super::pos;

/// Where a self-reference is being looked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Ok,
    Sublink,
    OuterJoin,
    Intersect,
    Except,
}

impl Context {
    fn refusal(self) -> Option<&'static str> {
        match self {
            Context::Ok => None,
            Context::Sublink => Some("a subquery"),
            Context::OuterJoin => Some("an outer join"),
            Context::Intersect => Some("INTERSECT"),
            Context::Except => Some("EXCEPT"),
        }
    }
}

struct Walker<'a> {
    name: &'a str,
    refs: usize,
}

/// Checks the recursive term `rarg` of recursive WITH query `name`.
pub(crate) fn check_recursive_term(name: &str, rarg: &pb::SelectStmt) -> PgResult<()> {
    let mut w = Walker { name, refs: 0 };
    w.select(rarg, Context::Ok)
}

impl Walker<'_> {
    fn error(&self, what: &str, location: i32) -> PgError {
        PgError::new(sqlstate::INVALID_RECURSION, format!("recursive reference to query \"{}\" must not appear {what}", self.name))
            .with_position(pos(location))
    }

    fn select(&mut self, s: &pb::SelectStmt, cx: Context) -> PgResult<()> {
        crate::stack::check()?;
        if let Some(w) = &s.with_clause {
            // A WITH query of the same name hides ours below it.
            let shadows = w.ctes.iter().any(|c| matches!(&c.node, Some(NodeEnum::CommonTableExpr(cte)) if cte.ctename == self.name));
            if shadows {
                return Ok(());
            }
            for c in &w.ctes {
                if let Some(NodeEnum::CommonTableExpr(cte)) = &c.node {
                    if let Some(q) = &cte.ctequery {
                        self.node(q, cx)?;
                    }
                }
            }
        }
        // 2: UNION, 3: INTERSECT, 4: EXCEPT
        match s.op {
            3 | 4 if cx == Context::Ok => {
                let (left, right) = match (s.op, s.all) {
                    (3, true) => (Context::Intersect, Context::Intersect),
                    (3, false) => (cx, cx),
                    (_, true) => (Context::Except, Context::Except),
                    (_, false) => (cx, Context::Except),
                };
                if let Some(l) = &s.larg {
                    self.select(l, left)?;
                }
                if let Some(r) = &s.rarg {
                    self.select(r, right)?;
                }
                Ok(())
            }
            2..=4 => {
                if let Some(l) = &s.larg {
                    self.select(l, cx)?;
                }
                if let Some(r) = &s.rarg {
                    self.select(r, cx)?;
                }
                Ok(())
            }
            _ => {
                for f in &s.from_clause {
                    self.node(f, cx)?;
                }
                let exprs = s
                    .target_list
                    .iter()
                    .chain(s.where_clause.as_deref())
                    .chain(s.group_clause.iter())
                    .chain(s.having_clause.as_deref())
                    .chain(s.sort_clause.iter())
                    .chain(s.limit_count.as_deref())
                    .chain(s.limit_offset.as_deref());
                for e in exprs {
                    self.node(e, cx)?;
                }
                for row in &s.values_lists {
                    self.node(row, cx)?;
                }
                Ok(())
            }
        }
    }

    fn node(&mut self, n: &Node, cx: Context) -> PgResult<()> {
        match &n.node {
            Some(NodeEnum::SelectStmt(s)) => self.select(s, cx),
            Some(NodeEnum::RangeVar(rv)) => {
                if rv.schemaname.is_empty() && rv.relname == self.name {
                    if let Some(what) = cx.refusal() {
                        return Err(self.error(&format!("within {what}"), rv.location));
                    }
                    self.refs += 1;
                    if self.refs > 1 {
                        return Err(self.error("more than once", rv.location));
                    }
                }
                Ok(())
            }
            Some(NodeEnum::JoinExpr(j)) => {
                let outer = if cx == Context::Ok { Context::OuterJoin } else { cx };
                // 1: inner, 2: left, 3: full, 4: right
                let (lcx, rcx) = match j.jointype {
                    2 => (cx, outer),
                    3 => (outer, outer),
                    4 => (outer, cx),
                    _ => (cx, cx),
                };
                if let Some(l) = &j.larg {
                    self.node(l, lcx)?;
                }
                if let Some(r) = &j.rarg {
                    self.node(r, rcx)?;
                }
                if let Some(q) = &j.quals {
                    self.node(q, cx)?;
                }
                Ok(())
            }
            Some(NodeEnum::RangeSubselect(rs)) => match &rs.subquery {
                Some(q) => self.node(q, cx),
                None => Ok(()),
            },
            Some(NodeEnum::SubLink(sl)) => {
                if let Some(q) = &sl.subselect {
                    self.node(q, Context::Sublink)?;
                }
                if let Some(t) = &sl.testexpr {
                    self.node(t, cx)?;
                }
                Ok(())
            }
            Some(other) => {
                // An expression: a self-reference in it can only be in a
                // subquery.
                for (child, _, _) in other.nodes() {
                    if let pg_query::NodeRef::SubLink(sl) = child {
                        if let Some(q) = &sl.subselect {
                            if let Some(location) = self.reference_in(q) {
                                return Err(self.error("within a subquery", location));
                            }
                        }
                    }
                }
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Walker<'_> {
    /// Where `n` refers to the query by name, unless a WITH query of the
    /// same name inside it hides the name.
    fn reference_in(&self, n: &Node) -> Option<i32> {
        let Some(e) = &n.node else { return None };
        let mut found = None;
        for (child, _, _) in e.nodes() {
            match child {
                pg_query::NodeRef::CommonTableExpr(c) if c.ctename == self.name => return None,
                pg_query::NodeRef::RangeVar(rv) if rv.schemaname.is_empty() && rv.relname == self.name && found.is_none() => {
                    found = Some(rv.location)
                }
                _ => {}
            }
        }
        found
    }
}
