//! Expression analysis (parse_expr.c, parse_func.c, parse_oper.c,
//! parse_coerce.c): raw expression nodes to typed `Expr`s.

use std::sync::Arc;

use pg_query::protobuf::{self as pb, a_const, Node};
use pg_query::NodeEnum;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::coerce::{self, CoercionContext, CoercionPath};
use super::types::{format_type, resolve_type_name};
use super::{name_list, node_string, pos, Analyzer};
use crate::expr::*;
use crate::functions::{self, ScalarFn};
use crate::query::{FromItem, Query, RteKind};

/// A constant's text form, for `'literal'` nodes used as plain strings (DDL options).
pub fn const_text(n: &Node) -> Option<String> {
    match &n.node {
        Some(NodeEnum::AConst(c)) => match &c.val {
            Some(a_const::Val::Sval(s)) => Some(s.sval.clone()),
            Some(a_const::Val::Ival(i)) => Some(i.ival.to_string()),
            Some(a_const::Val::Fval(f)) => Some(f.fval.clone()),
            Some(a_const::Val::Boolval(b)) => Some(if b.boolval { "true".into() } else { "false".into() }),
            _ => None,
        },
        Some(NodeEnum::String(s)) => Some(s.sval.clone()),
        Some(NodeEnum::Integer(i)) => Some(i.ival.to_string()),
        Some(NodeEnum::Float(f)) => Some(f.fval.clone()),
        _ => None,
    }
}

fn t(oid: Oid) -> SqlType {
    SqlType::new(oid)
}

fn unknown_literal(s: &str) -> Expr {
    Expr::Const(Datum::text(s), t(oid::UNKNOWN))
}

/// Where aggregates are being rejected, for "aggregate functions are not allowed in X".
pub(crate) fn agg_not_allowed(clause: &str, location: i32) -> PgError {
    PgError::new(sqlstate::GROUPING_ERROR, format!("aggregate functions are not allowed in {clause}")).with_position(pos(location))
}

impl<'a> Analyzer<'a> {
    /// transformExpr
    pub fn transform_expr(&mut self, node: &Node) -> PgResult<Expr> {
        let Some(n) = &node.node else { return Err(PgError::internal("empty expression node")) };
        if self.expr_depth >= super::MAX_EXPR_DEPTH {
            return Err(crate::parser::stack_depth_error());
        }
        crate::stack::check()?;
        self.expr_depth += 1;
        let e = self.transform_node(n);
        self.expr_depth -= 1;
        e
    }

    pub(crate) fn transform_opt(&mut self, node: &Option<Box<Node>>) -> PgResult<Option<Expr>> {
        match node {
            Some(n) => Ok(Some(self.transform_expr(n)?)),
            None => Ok(None),
        }
    }

    fn transform_node(&mut self, n: &NodeEnum) -> PgResult<Expr> {
        match n {
            NodeEnum::AConst(c) => self.transform_const(c),
            NodeEnum::ColumnRef(c) => self.transform_column_ref(c),
            NodeEnum::ParamRef(p) => self.transform_param(p),
            NodeEnum::AExpr(e) => self.transform_aexpr(e),
            NodeEnum::BoolExpr(b) => {
                let op = match b.boolop {
                    1 => BoolOp::And,
                    2 => BoolOp::Or,
                    _ => BoolOp::Not,
                };
                let name = match op {
                    BoolOp::And => "AND",
                    BoolOp::Or => "OR",
                    BoolOp::Not => "NOT",
                };
                let mut args = Vec::with_capacity(b.args.len());
                for a in &b.args {
                    let e = self.transform_expr(a)?;
                    args.push(self.coerce_to_boolean(e, name, expr_location(a))?);
                }
                Ok(Expr::Bool { op, args })
            }
            NodeEnum::NullTest(nt) => {
                let arg = self.transform_expr(nt.arg.as_deref().ok_or_else(|| PgError::internal("null test without arg"))?)?;
                let arg = self.resolve_unknown(arg)?;
                Ok(Expr::NullTest { arg: Box::new(arg), is_null: nt.nulltesttype == 1 })
            }
            NodeEnum::BooleanTest(bt) => {
                let arg = self.transform_expr(bt.arg.as_deref().ok_or_else(|| PgError::internal("boolean test without arg"))?)?;
                let kind = match bt.booltesttype {
                    1 => BoolTestKind::IsTrue,
                    2 => BoolTestKind::IsNotTrue,
                    3 => BoolTestKind::IsFalse,
                    4 => BoolTestKind::IsNotFalse,
                    5 => BoolTestKind::IsUnknown,
                    _ => BoolTestKind::IsNotUnknown,
                };
                let clause = match kind {
                    BoolTestKind::IsTrue => "IS TRUE",
                    BoolTestKind::IsNotTrue => "IS NOT TRUE",
                    BoolTestKind::IsFalse => "IS FALSE",
                    BoolTestKind::IsNotFalse => "IS NOT FALSE",
                    BoolTestKind::IsUnknown => "IS UNKNOWN",
                    BoolTestKind::IsNotUnknown => "IS NOT UNKNOWN",
                };
                let arg = self.coerce_to_boolean(arg, clause, bt.location)?;
                Ok(Expr::BoolTest { arg: Box::new(arg), kind })
            }
            NodeEnum::FuncCall(f) => self.transform_func_call(f),
            NodeEnum::TypeCast(tc) => self.transform_type_cast(tc),
            NodeEnum::CaseExpr(c) => self.transform_case(c),
            NodeEnum::CoalesceExpr(c) => {
                let args = self.transform_list(&c.args)?;
                let (args, ty) = self.unify(args, "COALESCE", c.location)?;
                Ok(Expr::Coalesce { args, ty })
            }
            NodeEnum::MinMaxExpr(m) => {
                let is_greatest = m.op == 1;
                let args = self.transform_list(&m.args)?;
                let (args, ty) = self.unify(args, if is_greatest { "GREATEST" } else { "LEAST" }, m.location)?;
                // The type must have an ordering.
                self.resolve_operator("<", Some(ty), Some(ty), m.location)?;
                Ok(Expr::MinMax { is_greatest, args, ty })
            }
            NodeEnum::SubLink(s) => self.transform_sublink(s),
            NodeEnum::RowExpr(r) => {
                // Unknown literals stay unknown: a row comparison gives them
                // types. `t.*` spreads into t's columns, as in a target list
                // (transformRowExpr expands stars).
                let mut args = Vec::with_capacity(r.args.len());
                for a in &r.args {
                    match &a.node {
                        Some(NodeEnum::ColumnRef(cr)) if cr.fields.len() > 1 && matches!(cr.fields.last().and_then(|f| f.node.as_ref()), Some(NodeEnum::AStar(_))) => {
                            args.extend(self.expand_star(cr)?.into_iter().map(|t| t.expr));
                        }
                        _ => args.push(self.transform_expr(a)?),
                    }
                }
                if args.len() > super::MAX_TUPLE_ATTRIBUTES {
                    return Err(PgError::new(
                        sqlstate::TOO_MANY_COLUMNS,
                        format!("ROW expressions can have at most {} entries", super::MAX_TUPLE_ATTRIBUTES),
                    )
                    .with_position(pos(r.location)));
                }
                Ok(Expr::Row { args, ty: t(oid::RECORD) })
            }
            NodeEnum::AArrayExpr(a) => self.transform_array(a, None),
            NodeEnum::AIndirection(ind) => self.transform_indirection(ind),
            NodeEnum::CollateClause(c) => {
                let coll = name_list(&c.collname);
                let ok = ["default", "C", "POSIX", "pg_catalog.default", "pg_catalog.C", "pg_catalog.POSIX", "ucs_basic", "C.UTF-8", "pg_catalog.\"C\""];
                if !ok.contains(&coll.as_str()) {
                    return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("collation \"{coll}\" for encoding \"UTF8\" does not exist"))
                        .with_position(pos(c.location)));
                }
                let arg = self.transform_expr(c.arg.as_deref().ok_or_else(|| PgError::internal("collate without arg"))?)?;
                let arg = self.resolve_unknown(arg)?;
                if self.b.category(arg.ty().oid) != 'S' && arg.ty().oid != oid::UNKNOWN {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("collations are not supported by type {}", format_type(self.b, arg.ty().oid, -1)),
                    )
                    .with_position(pos(c.location)));
                }
                Ok(arg)
            }
            NodeEnum::SqlvalueFunction(f) => self.transform_sql_value_function(f),
            NodeEnum::SetToDefault(_) => Err(PgError::syntax("DEFAULT is not allowed in this context")),
            NodeEnum::GroupingFunc(_) => Err(PgError::unsupported("GROUPING()")),
            NodeEnum::XmlExpr(x) => self.transform_xml_expr(x),
            NodeEnum::XmlSerialize(x) => self.transform_xml_serialize(x),
            NodeEnum::AStar(_) => Err(PgError::syntax("improper use of \"*\"")),
            other => Err(PgError::unsupported(format!("expression of kind {}", node_kind_name(other)))),
        }
    }

    pub(crate) fn transform_list(&mut self, nodes: &[Node]) -> PgResult<Vec<Expr>> {
        nodes.iter().map(|n| self.transform_expr(n)).collect()
    }

    fn transform_const(&mut self, c: &pb::AConst) -> PgResult<Expr> {
        if c.isnull {
            return Ok(Expr::null(t(oid::UNKNOWN)));
        }
        Ok(match &c.val {
            Some(a_const::Val::Ival(i)) => Expr::Const(Datum::Int4(i.ival), t(oid::INT4)),
            Some(a_const::Val::Fval(f)) => {
                // Integers too wide for int4 arrive as Float; they are int8 if
                // they fit, else numeric (make_const).
                if !f.fval.contains(['.', 'e', 'E']) {
                    if let Ok(v) = f.fval.parse::<i64>() {
                        // "-2147483648" arrives here (the grammar negates the
                        // too-wide literal 2147483648); it is an int4 again.
                        if let Ok(v) = i32::try_from(v) {
                            return Ok(Expr::Const(Datum::Int4(v), t(oid::INT4)));
                        }
                        return Ok(Expr::Const(Datum::Int8(v), t(oid::INT8)));
                    }
                }
                let n = tusk_types::numeric::Numeric::parse(&f.fval).map_err(|e| e.with_position(pos(c.location)))?;
                Expr::Const(Datum::numeric(n), t(oid::NUMERIC))
            }
            Some(a_const::Val::Sval(s)) => unknown_literal(&s.sval),
            Some(a_const::Val::Boolval(b)) => Expr::Const(Datum::Bool(b.boolval), t(oid::BOOL)),
            // B'1010' and X'1F' arrive as "b1010" and "x1F", bit_in's own prefixes.
            Some(a_const::Val::Bsval(b)) => Expr::Const(
                Datum::Bits(std::sync::Arc::new(tusk_types::bits::BitString::parse(&b.bsval).map_err(|e| e.with_position(pos(c.location)))?)),
                t(oid::BIT),
            ),
            None => Expr::null(t(oid::UNKNOWN)),
        })
    }

    fn transform_param(&mut self, p: &pb::ParamRef) -> PgResult<Expr> {
        if p.number < 1 {
            return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER, format!("there is no parameter ${}", p.number))
                .with_position(pos(p.location)));
        }
        let idx = p.number as usize - 1;
        if let Some(src) = self.param_source {
            let ty = src.param_type(p.number as usize).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_PARAMETER, format!("there is no parameter ${}", p.number)).with_position(pos(p.location))
            })?;
            self.note_param(idx, ty);
            return Ok(Expr::Param(idx, ty));
        }
        let mut params = self.params.borrow_mut();
        if idx >= params.len() {
            if idx >= 65535 {
                return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER, format!("there is no parameter ${}", p.number))
                    .with_position(pos(p.location)));
            }
            params.resize(idx + 1, t(oid::UNKNOWN));
        }
        let ty = if params[idx].oid == 0 { t(oid::UNKNOWN) } else { params[idx] };
        Ok(Expr::Param(idx, ty))
    }

    // ---------------------------------------------------------------- column references

    /// Records a parameter a `ParamSource` handed out, so that the
    /// statement's parameter list covers it.
    pub(crate) fn note_param(&self, idx: usize, ty: SqlType) {
        let mut params = self.params.borrow_mut();
        if idx >= params.len() {
            params.resize(idx + 1, t(oid::UNKNOWN));
        }
        params[idx] = ty;
    }

    /// A column reference that may name a variable of the procedural code
    /// (PL/pgSQL's resolve_column_ref, called around the parser's own
    /// lookup as its pre/post column-reference hooks).
    fn transform_column_ref(&mut self, c: &pb::ColumnRef) -> PgResult<Expr> {
        let Some(src) = self.param_source else { return self.transform_column_ref_plain(c) };
        let parts: Vec<&str> = c.fields.iter().map_while(|f| node_string(f)).collect();
        let star = parts.len() < c.fields.len();
        let Some((resolved, consumed)) = src.resolve(&parts) else { return self.transform_column_ref_plain(c) };
        let var = |a: &mut Self| -> PgResult<Expr> {
            let mut e = match &resolved {
                crate::procedural::ResolvedName::Param { index, ty } => {
                    a.note_param(*index, *ty);
                    Expr::Param(*index, *ty)
                }
                crate::procedural::ResolvedName::Field { index, record_ty, field, ty } => {
                    a.note_param(*index, *record_ty);
                    Expr::FieldSelect { arg: Box::new(Expr::Param(*index, *record_ty)), field: *field, ty: *ty }
                }
            };
            for f in &parts[consumed..] {
                e = a.field_select(e, f).map_err(|err| err.with_position(pos(c.location)))?;
            }
            // `rec.*` in an expression is the row value itself (its fields
            // spread only where a list is expanded).
            let _ = star;
            Ok(e)
        };
        match src.conflict() {
            crate::procedural::VariableConflict::UseVariable => var(self),
            crate::procedural::VariableConflict::UseColumn => match self.transform_column_ref_plain(c) {
                Ok(e) => Ok(e),
                Err(_) => var(self),
            },
            crate::procedural::VariableConflict::Error => match self.transform_column_ref_plain(c) {
                Ok(_) => Err(PgError::new(sqlstate::AMBIGUOUS_COLUMN, format!("column reference \"{}\" is ambiguous", parts.join(".")))
                    .with_detail("It could refer to either a PL/pgSQL variable or a table column.")
                    .with_position(pos(c.location))),
                Err(_) => var(self),
            },
        }
    }

    fn transform_column_ref_plain(&mut self, c: &pb::ColumnRef) -> PgResult<Expr> {
        // VALUE in a domain's CHECK (the grammar makes it a column named value).
        if let (Some(ty), [f]) = (self.domain_value, c.fields.as_slice()) {
            if node_string(f) == Some("value") {
                return Ok(Expr::CaseTest(ty));
            }
        }
        let mut parts: Vec<&str> = Vec::new();
        let mut star = false;
        for f in &c.fields {
            match &f.node {
                Some(NodeEnum::String(s)) => parts.push(&s.sval),
                Some(NodeEnum::AStar(_)) => star = true,
                _ => return Err(PgError::syntax("improper column reference")),
            }
        }
        if star {
            // `t.*` in an expression context is a whole-row value.
            if let [rel] = parts.as_slice() {
                if let Some(e) = self.whole_row_ref(rel, None, c.location)? {
                    return Ok(e);
                }
                return Err(self.missing_from(rel, c.location));
            }
            return Err(PgError::syntax("improper use of \"*\"").with_position(pos(c.location)));
        }
        match parts.as_slice() {
            [col] => {
                if let Some(e) = self.resolve_unqualified(col, c.location)? {
                    return Ok(e);
                }
                // A bare table name is a whole-row reference.
                if let Some(e) = self.whole_row_ref(col, None, c.location)? {
                    return Ok(e);
                }
                Err(self.missing_column(None, col, c.location))
            }
            [rel, col] => self.resolve_qualified(None, rel, col, c.location),
            [schema, rel, col] => self.resolve_qualified(Some(schema), rel, col, c.location),
            [_db, schema, rel, col] => self.resolve_qualified(Some(schema), rel, col, c.location),
            _ => Err(PgError::syntax(format!("improper qualified name (too many dotted names): {}", parts.join(".")))
                .with_position(pos(c.location))),
        }
    }

    /// The expression for column `col` of range table entry `rte` at `levels_up`.
    pub(crate) fn column_expr(&self, levels_up: usize, rte: usize, col: usize) -> Expr {
        let level = &self.levels[self.levels.len() - 1 - levels_up];
        let entry = &level.rtable[rte];
        if let Some(sc) = SystemColumn::of_var_col(col) {
            return Expr::Var(Var { rte, col, levels_up: levels_up as u32, ty: sc.ty() });
        }
        if let RteKind::Join { columns, .. } = &entry.kind {
            return shift_levels(columns[col].clone(), levels_up as u32);
        }
        Expr::Var(Var { rte, col, levels_up: levels_up as u32, ty: entry.col_types[col] })
    }

    fn resolve_unqualified(&mut self, col: &str, location: i32) -> PgResult<Option<Expr>> {
        for up in 0..self.levels.len() {
            let level = &self.levels[self.levels.len() - 1 - up];
            let mut found: Option<(usize, usize)> = None;
            for item in &level.namespace {
                if !item.cols_visible || item.lateral_only {
                    continue;
                }
                let rte = &level.rtable[item.rte];
                let mut matches: Vec<usize> = rte.col_names.iter().enumerate().filter(|(_, n)| *n == col).map(|(i, _)| i).collect();
                if matches.is_empty() {
                    matches.extend(system_column_of(rte, col).map(SystemColumn::var_col));
                }
                if matches.len() > 1 {
                    return Err(ambiguous(col, location));
                }
                if let Some(&i) = matches.first() {
                    if found.is_some() {
                        return Err(ambiguous(col, location));
                    }
                    found = Some((item.rte, i));
                }
            }
            if let Some((rte, i)) = found {
                return Ok(Some(self.column_expr(up, rte, i)));
            }
        }
        Ok(None)
    }

    /// Finds the visible range table entry called `rel` (innermost level first).
    fn find_rte(&self, schema: Option<&str>, rel: &str, location: i32) -> PgResult<Option<(usize, usize)>> {
        for up in 0..self.levels.len() {
            let level = &self.levels[self.levels.len() - 1 - up];
            let mut found = None;
            for item in &level.namespace {
                if !item.rel_visible || item.lateral_only {
                    continue;
                }
                let rte = &level.rtable[item.rte];
                let name_matches = rte.alias == rel
                    && match schema {
                        None => true,
                        Some(s) => match &rte.kind {
                            RteKind::Relation(r) if !rte.has_alias => self.env.catalog.namespace_name(r.namespace) == s,
                            _ => false,
                        },
                    };
                if name_matches {
                    if found.is_some() {
                        return Err(PgError::new(sqlstate::AMBIGUOUS_ALIAS, format!("table reference \"{rel}\" is ambiguous"))
                            .with_position(pos(location)));
                    }
                    found = Some((up, item.rte));
                }
            }
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    fn resolve_qualified(&mut self, schema: Option<&str>, rel: &str, col: &str, location: i32) -> PgResult<Expr> {
        match self.find_rte(schema, rel, location)? {
            Some((up, rte)) => {
                let level = &self.levels[self.levels.len() - 1 - up];
                let entry = &level.rtable[rte];
                match entry.col_names.iter().position(|n| n == col).or_else(|| system_column_of(entry, col).map(SystemColumn::var_col)) {
                    Some(i) => Ok(self.column_expr(up, rte, i)),
                    // `rel.func` style composite access is not supported; report the column.
                    None => Err(self.missing_column(Some(rel), col, location)),
                }
            }
            None => Err(self.missing_from(rel, location)),
        }
    }

    fn whole_row_ref(&mut self, rel: &str, schema: Option<&str>, location: i32) -> PgResult<Option<Expr>> {
        let Some((up, rte)) = self.find_rte(schema, rel, location)? else { return Ok(None) };
        let level = &self.levels[self.levels.len() - 1 - up];
        let n = level.rtable[rte].col_names.len();
        // A table's whole row is a value of its row type.
        let row_type = match &level.rtable[rte].kind {
            RteKind::Relation(r) => self.env.catalog.relation(r.oid).map(|rel| rel.row_type).filter(|&t| t != 0 && rel_has_all_columns(self.env.catalog, r.oid, n)),
            _ => None,
        };
        let args = (0..n).map(|i| self.column_expr(up, rte, i)).collect();
        Ok(Some(Expr::Row { args, ty: t(row_type.unwrap_or(oid::RECORD)) }))
    }

    /// errorMissingColumn: "column ... does not exist", with PostgreSQL's
    /// hint: the closest column names of the range table entries in scope
    /// (searchRangeTableForCol, by Levenshtein distance, the entry's name
    /// weighed in when the reference named one), or an exact match that
    /// this part of the query cannot see.
    pub(crate) fn missing_column(&self, relname: Option<&str>, col: &str, location: i32) -> PgError {
        const MAX_FUZZY_DISTANCE: usize = 3;
        let mut distance = MAX_FUZZY_DISTANCE + 1;
        let mut first: Option<(&str, &str)> = None;
        let mut second: Option<(&str, &str)> = None;
        let mut invisible: Option<&str> = None;
        'levels: for level in self.levels.iter().rev() {
            for rte in &level.rtable {
                // Join entries only repeat their inputs' columns.
                if matches!(rte.kind, RteKind::Join { .. }) {
                    continue;
                }
                let penalty = relname.map(|a| levenshtein(a, &rte.alias)).unwrap_or(0);
                let mut exact = false;
                for name in &rte.col_names {
                    exact |= name == col;
                    // updateFuzzyAttrMatchState
                    if penalty > distance || name.is_empty() {
                        continue;
                    }
                    let d = levenshtein(name, col);
                    if d > col.len() / 2 {
                        continue;
                    }
                    let d = d + penalty;
                    if d < distance {
                        distance = d;
                        first = Some((&rte.alias, name));
                        second = None;
                    } else if d == distance {
                        if second.is_some() {
                            // more than two equally close: none is a useful hint
                            first = None;
                            second = None;
                            distance = d - 1;
                        } else if first.is_some() {
                            second = Some((&rte.alias, name));
                        } else if distance <= MAX_FUZZY_DISTANCE {
                            first = Some((&rte.alias, name));
                        }
                    }
                }
                if exact && penalty == 0 {
                    invisible = Some(&rte.alias);
                    break 'levels;
                }
            }
        }
        let message = match relname {
            Some(rel) => format!("column {rel}.{col} does not exist"),
            None => format!("column \"{col}\" does not exist"),
        };
        let e = PgError::new(sqlstate::UNDEFINED_COLUMN, message).with_position(pos(location));
        match (invisible, first, second) {
            (Some(table), _, _) => e.with_hint(format!("There is a column named \"{col}\" in table \"{table}\", but it cannot be referenced from this part of the query.")),
            (None, Some((t1, c1)), Some((t2, c2))) => e.with_hint(format!("Perhaps you meant to reference the column \"{t1}.{c1}\" or the column \"{t2}.{c2}\".")),
            (None, Some((t1, c1)), None) => e.with_hint(format!("Perhaps you meant to reference the column \"{t1}.{c1}\".")),
            _ => e,
        }
    }

    /// errorMissingRTE: a reference to a FROM item that is not visible.
    fn missing_from(&self, rel: &str, location: i32) -> PgError {
        let invalid = PgError::new(sqlstate::UNDEFINED_TABLE, format!("invalid reference to FROM-clause entry for table \"{rel}\""))
            .with_position(pos(location));
        for level in self.levels.iter().rev() {
            // An entry by that alias that this part of the query cannot see.
            if level.rtable.iter().any(|r| r.alias == rel && !matches!(r.kind, RteKind::Join { .. })) {
                return invalid.with_hint(format!("There is an entry for table \"{rel}\", but it cannot be referenced from this part of the query."));
            }
            // The table under another alias.
            if let Some(r) = level.rtable.iter().find(|r| matches!(&r.kind, RteKind::Relation(t) if t.name == rel) && r.has_alias) {
                return invalid.with_hint(format!("Perhaps you meant to reference the table alias \"{}\".", r.alias));
            }
        }
        PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{rel}\"")).with_position(pos(location))
    }

    // ---------------------------------------------------------------- operators

    fn transform_aexpr(&mut self, e: &pb::AExpr) -> PgResult<Expr> {
        let mut opname = e.name.last().and_then(node_string).unwrap_or("").to_string();
        // OPERATOR(schema.op) naming a schema other than pg_catalog (where
        // every built-in operator is) looks only there: resolve_operator
        // reads the schema before the dot, which no operator name holds.
        if let [schema, _] = e.name.as_slice() {
            if let Some(schema) = node_string(schema).filter(|s| *s != "pg_catalog") {
                opname = format!("{schema}.{opname}");
            }
        }
        let loc = e.location;
        match e.kind {
            // AEXPR_OP
            1 => {
                // (a, b) op (SELECT x, y): PostgreSQL's ROWCOMPARE sublink.
                if let (Some(NodeEnum::RowExpr(_)), Some(NodeEnum::SubLink(sl))) =
                    (e.lexpr.as_deref().and_then(|n| n.node.as_ref()), e.rexpr.as_deref().and_then(|n| n.node.as_ref()))
                {
                    if sl.sub_link_type == 5 {
                        let mut rc = (**sl).clone();
                        rc.sub_link_type = 4;
                        rc.testexpr = e.lexpr.clone();
                        rc.oper_name = e.name.clone();
                        return self.transform_sublink(&rc);
                    }
                }
                let l = self.transform_opt(&e.lexpr)?;
                let r = self.transform_opt(&e.rexpr)?;
                // Row comparisons: (a, b) op (c, d)
                if let (Some(Expr::Row { args: la, .. }), Some(Expr::Row { args: ra, .. })) = (&l, &r) {
                    return self.row_compare(&opname, la.clone(), ra.clone(), loc);
                }
                // A literal that fails its conversion is pointed at, as
                // make_fn_arguments coerces each side at its own location.
                let side = |n: &Option<Box<Node>>| n.as_deref().map(expr_location).filter(|l| *l >= 0).unwrap_or(loc);
                self.make_op_at(&opname, l, r, loc, (side(&e.lexpr), side(&e.rexpr)))
            }
            // ANY / ALL with an array
            2 | 3 => {
                let l = self.transform_opt(&e.lexpr)?.ok_or_else(|| PgError::internal("ANY without left"))?;
                let r = self.transform_opt(&e.rexpr)?.ok_or_else(|| PgError::internal("ANY without right"))?;
                self.make_scalar_array_op(&opname, l, r, e.kind == 2, loc)
            }
            // IS [NOT] DISTINCT FROM
            4 | 5 => {
                let l = self.transform_opt(&e.lexpr)?.ok_or_else(|| PgError::internal("DISTINCT without left"))?;
                let r = self.transform_opt(&e.rexpr)?.ok_or_else(|| PgError::internal("DISTINCT without right"))?;
                if let (Expr::Row { args: la, .. }, Expr::Row { args: ra, .. }) = (&l, &r) {
                    // Row-wise: distinct if any column pair is distinct.
                    if la.len() != ra.len() {
                        return Err(PgError::syntax("unequal number of entries in row expressions").with_position(pos(loc)));
                    }
                    let mut parts = Vec::new();
                    for (a, b) in la.clone().into_iter().zip(ra.clone()) {
                        let (a, b, eq) = self.equality_pair(a, b, loc)?;
                        parts.push(Expr::Distinct { args: Box::new((a, b)), eq, negated: false });
                    }
                    let any_distinct = Expr::Bool { op: BoolOp::Or, args: parts };
                    return Ok(if e.kind == 5 { Expr::Bool { op: BoolOp::Not, args: vec![any_distinct] } } else { any_distinct });
                }
                let (a, b, eq) = self.equality_pair(l, r, loc)?;
                Ok(Expr::Distinct { args: Box::new((a, b)), eq, negated: e.kind == 5 })
            }
            // NULLIF
            6 => {
                let l = self.transform_opt(&e.lexpr)?.ok_or_else(|| PgError::internal("NULLIF"))?;
                let r = self.transform_opt(&e.rexpr)?.ok_or_else(|| PgError::internal("NULLIF"))?;
                let (a, b, eq) = self.equality_pair(l, r, loc)?;
                let ty = a.ty();
                Ok(Expr::NullIf { args: Box::new((a, b)), eq, ty })
            }
            // IN (list)
            7 => self.transform_in_list(e, &opname),
            // LIKE, ILIKE, SIMILAR: plain operators once the grammar built them.
            8 | 9 | 10 => {
                let l = self.transform_opt(&e.lexpr)?;
                let r = self.transform_opt(&e.rexpr)?;
                self.make_op(&opname, l, r, loc)
            }
            // BETWEEN variants
            11..=14 => {
                let x = e.lexpr.as_deref().ok_or_else(|| PgError::internal("BETWEEN"))?;
                let bounds = match e.rexpr.as_deref().and_then(|n| n.node.as_ref()) {
                    Some(NodeEnum::List(l)) if l.items.len() == 2 => l.items.clone(),
                    _ => return Err(PgError::internal("BETWEEN bounds")),
                };
                let xe = self.transform_expr(x)?;
                let lo = self.transform_expr(&bounds[0])?;
                let hi = self.transform_expr(&bounds[1])?;
                let not = e.kind == 12 || e.kind == 14;
                let build = |a: &mut Self, lo: Expr, hi: Expr| -> PgResult<Expr> {
                    if not {
                        let p1 = a.make_op("<", Some(xe.clone()), Some(lo), loc)?;
                        let p2 = a.make_op(">", Some(xe.clone()), Some(hi), loc)?;
                        Ok(Expr::Bool { op: BoolOp::Or, args: vec![p1, p2] })
                    } else {
                        let p1 = a.make_op(">=", Some(xe.clone()), Some(lo), loc)?;
                        let p2 = a.make_op("<=", Some(xe.clone()), Some(hi), loc)?;
                        Ok(Expr::Bool { op: BoolOp::And, args: vec![p1, p2] })
                    }
                };
                let direct = build(self, lo.clone(), hi.clone())?;
                if e.kind <= 12 {
                    return Ok(direct);
                }
                let swapped = build(self, hi, lo)?;
                Ok(Expr::Bool { op: if not { BoolOp::And } else { BoolOp::Or }, args: vec![direct, swapped] })
            }
            _ => Err(PgError::unsupported("this operator expression")),
        }
    }

    fn row_compare(&mut self, opname: &str, la: Vec<Expr>, ra: Vec<Expr>, loc: i32) -> PgResult<Expr> {
        if la.len() != ra.len() {
            return Err(PgError::syntax("unequal number of entries in row expressions").with_position(pos(loc)));
        }
        match opname {
            "=" | "<>" => {
                let mut parts = Vec::new();
                for (a, b) in la.into_iter().zip(ra) {
                    parts.push(self.make_op(opname, Some(a), Some(b), loc)?);
                }
                Ok(Expr::Bool { op: if opname == "=" { BoolOp::And } else { BoolOp::Or }, args: parts })
            }
            "<" | "<=" | ">" | ">=" => {
                // Lexicographic: a1 < b1 OR (a1 = b1 AND (a2 < b2 OR ...)), last column uses op itself.
                let strict = if opname.starts_with('<') { "<" } else { ">" };
                let n = la.len();
                let mut acc = self.make_op(opname, Some(la[n - 1].clone()), Some(ra[n - 1].clone()), loc)?;
                for i in (0..n - 1).rev() {
                    let lt = self.make_op(strict, Some(la[i].clone()), Some(ra[i].clone()), loc)?;
                    let eq = self.make_op("=", Some(la[i].clone()), Some(ra[i].clone()), loc)?;
                    acc = Expr::Bool { op: BoolOp::Or, args: vec![lt, Expr::Bool { op: BoolOp::And, args: vec![eq, acc] }] };
                }
                Ok(acc)
            }
            _ => Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("could not determine interpretation of row comparison operator {opname}"),
            )
            .with_position(pos(loc))),
        }
    }

    /// Both sides of an equality, coerced, with the `=` function.
    fn equality_pair(&mut self, l: Expr, r: Expr, loc: i32) -> PgResult<(Expr, Expr, FuncRef)> {
        match self.make_op("=", Some(l), Some(r), loc)? {
            Expr::Func { func, mut args, .. } if args.len() == 2 => {
                let b = args.pop().expect("two args");
                let a = args.pop().expect("two args");
                Ok((a, b, func))
            }
            _ => Err(PgError::internal("equality did not resolve to a function")),
        }
    }

    fn transform_in_list(&mut self, e: &pb::AExpr, opname: &str) -> PgResult<Expr> {
        let loc = e.location;
        let l = self.transform_opt(&e.lexpr)?.ok_or_else(|| PgError::internal("IN without left"))?;
        let items = match e.rexpr.as_deref().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::List(list)) => list.items.clone(),
            _ => return Err(PgError::internal("IN without list")),
        };
        let rexprs = self.transform_list(&items)?;
        let negated = opname == "<>";
        // Row IN (rows): OR of row equalities.
        if let Expr::Row { args: la, .. } = &l {
            let mut parts = Vec::new();
            for r in rexprs {
                let ra = match r {
                    Expr::Row { args, .. } => args,
                    _ => return Err(PgError::syntax("IN list of rows must contain rows").with_position(pos(loc))),
                };
                parts.push(self.row_compare(opname, la.clone(), ra, loc)?);
            }
            return Ok(Expr::Bool { op: if negated { BoolOp::And } else { BoolOp::Or }, args: parts });
        }
        // If the list has a common type with the left side, one ScalarArrayOp.
        let mut all = vec![l.clone()];
        all.extend(rexprs.iter().cloned());
        let types: Vec<Oid> = all.iter().map(|x| x.ty().oid).collect();
        let simple = rexprs.iter().all(|r| !r.is_volatile());
        if let (true, Ok(common)) = (simple, coerce::common_type(self.b, &types, "IN")) {
            if common != oid::RECORD && self.b.array_of(common) != 0 {
                let ct = t(common);
                let mut elems = Vec::with_capacity(rexprs.len());
                for r in rexprs {
                    elems.push(self.coerce_to(r, ct, CoercionContext::Implicit, loc)?);
                }
                let left = self.coerce_to(l, ct, CoercionContext::Implicit, loc)?;
                let arr_ty = t(self.b.array_of(common));
                let arr = Expr::Array { elem: ct, elements: elems, ty: arr_ty };
                return self.make_scalar_array_op(opname, left, arr, !negated, loc);
            }
        }
        let mut parts = Vec::new();
        for r in rexprs {
            parts.push(self.make_op(opname, Some(l.clone()), Some(r), loc)?);
        }
        Ok(Expr::Bool { op: if negated { BoolOp::And } else { BoolOp::Or }, args: parts })
    }

    fn make_scalar_array_op(&mut self, opname: &str, l: Expr, r: Expr, any: bool, loc: i32) -> PgResult<Expr> {
        let l = self.resolve_unknown_if_other_known(l, &r)?;
        let rt = r.ty().oid;
        // An untyped literal array stays unknown while the operator is
        // chosen (as make_scalar_array_op does), so `v @@ ANY ('{a,b}')`
        // finds tsvector @@ tsquery.
        let elem = if rt == oid::UNKNOWN {
            oid::UNKNOWN
        } else {
            let e = self.b.element_of(rt);
            if e == 0 {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("op ANY/ALL (array) requires array on right side"),
                )
                .with_position(pos(loc)));
            }
            e
        };
        let (func, lt, et, ret) = self.resolve_operator(opname, Some(l.ty()), Some(t(elem)), loc)?;
        if ret.oid != oid::BOOL {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, "op ANY/ALL (array) requires operator to yield boolean")
                .with_position(pos(loc)));
        }
        let left = self.coerce_to(l, lt.unwrap(), CoercionContext::Implicit, loc)?;
        let arr_t = t(self.b.array_of(et.unwrap().oid));
        let right = self.coerce_to(r, arr_t, CoercionContext::Implicit, loc)?;
        Ok(Expr::ScalarArrayOp { op: func, any, args: Box::new((left, right)) })
    }

    /// Builds `l op r` (or prefix `op r`), resolving the operator.
    pub(crate) fn make_op(&mut self, opname: &str, l: Option<Expr>, r: Option<Expr>, loc: i32) -> PgResult<Expr> {
        self.make_op_at(opname, l, r, loc, (loc, loc))
    }

    /// make_op with the locations of its two sides, for conversion errors.
    pub(crate) fn make_op_at(&mut self, opname: &str, l: Option<Expr>, r: Option<Expr>, loc: i32, sides: (i32, i32)) -> PgResult<Expr> {
        let lt = l.as_ref().map(|e| e.ty());
        let rt = r.as_ref().map(|e| e.ty());
        let (func, la, ra, ret) = self.resolve_operator(opname, lt, rt, loc)?;
        let mut args = Vec::with_capacity(2);
        if let (Some(l), Some(la)) = (l, la) {
            args.push(self.coerce_to(l, la, CoercionContext::Implicit, sides.0)?);
        }
        if let (Some(r), Some(ra)) = (r, ra) {
            args.push(self.coerce_to(r, ra, CoercionContext::Implicit, sides.1)?);
        }
        Ok(Expr::Func { func, args, ty: ret })
    }

    /// oper(): the operator for these input types, its (coerced) argument types and result type.
    pub(crate) fn resolve_operator(
        &mut self,
        opname: &str,
        lt: Option<SqlType>,
        rt: Option<SqlType>,
        loc: i32,
    ) -> PgResult<(FuncRef, Option<SqlType>, Option<SqlType>, SqlType)> {
        let b = self.b;
        let binary = lt.is_some();
        let left = lt.map(|t| t.oid).unwrap_or(0);
        let right = rt.map(|t| t.oid).unwrap_or(0);
        let catalog = self.env.catalog;
        let (schema, bare) = match opname.rsplit_once('.') {
            Some((sch, op)) => {
                let nsp = catalog.namespace_by_name.get(sch).copied().ok_or_else(|| {
                    PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{sch}\" does not exist")).with_position(pos(loc))
                })?;
                (Some(nsp), op)
            }
            None => (None, opname),
        };
        let path = if catalog.user_ops.operators.is_empty() { Vec::new() } else { self.search_path() };
        // User-defined operators count where the search path finds them,
        // or in the schema OPERATOR() names; built-in ones only unqualified.
        let visible = |o: &crate::catalog::builtin::OperatorInfo| match (catalog.user_ops.operators.get(&o.oid), schema) {
            (Some(u), Some(nsp)) => u.namespace == nsp,
            (Some(u), None) => path.contains(&u.namespace),
            (None, Some(_)) => false,
            (None, None) => true,
        };
        let cands: Vec<&crate::catalog::builtin::OperatorInfo> =
            catalog.operators_named(bare).filter(|o| (o.left != 0) == binary && visible(o)).collect();
        let inputs: Vec<Oid> = if binary { vec![left, right] } else { vec![right] };
        let cand_list: Vec<coerce::Candidate> = cands
            .iter()
            .map(|o| coerce::Candidate { oid: o.oid, args: if binary { vec![o.left, o.right] } else { vec![o.right] } })
            .collect();
        // binary_oper_exact: an unknown side is assumed to be the other side's type.
        let mut chosen = None;
        if binary && (left == oid::UNKNOWN) != (right == oid::UNKNOWN) {
            let known = if left == oid::UNKNOWN { right } else { left };
            chosen = cand_list.iter().position(|c| c.args == [known, known]);
        }
        let chosen = match chosen {
            Some(i) => i,
            None => match coerce::select_candidate(b, &inputs, &cand_list) {
                (Some(i), _) => i,
                (None, ambiguous) => {
                    let desc = if binary {
                        format!("{} {} {}", display_type(b, lt.unwrap()), opname, display_type(b, rt.unwrap()))
                    } else {
                        format!("{} {}", opname, display_type(b, rt.unwrap()))
                    };
                    return Err(if ambiguous {
                        PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("operator is not unique: {desc}"))
                            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.")
                    } else {
                        PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator does not exist: {desc}"))
                            .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
                    }
                    .with_position(pos(loc)));
                }
            },
        };
        let op = cands[chosen];
        if op.proc == 0 {
            // A shell operator, named by another's COMMUTATOR or NEGATOR.
            let desc = if binary {
                format!("{} {} {}", display_type(b, t(op.left)), opname, display_type(b, t(op.right)))
            } else {
                format!("{} {}", opname, display_type(b, t(op.right)))
            };
            return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("operator is only a shell: {desc}")).with_position(pos(loc)));
        }
        let proc = catalog.proc(op.proc).ok_or_else(|| PgError::internal(format!("operator {opname} has no function")))?;
        let (args, ret) = coerce::resolve_polymorphic(b, &inputs, &cand_list[chosen].args, op.result)?;
        let func = self.func_ref(proc, loc)?;
        let ret_ty = t(ret);
        if binary {
            Ok((func, Some(self.with_input_typmod(args[0], lt)), Some(self.with_input_typmod(args[1], rt)), ret_ty))
        } else {
            Ok((func, None, Some(self.with_input_typmod(args[0], rt)), ret_ty))
        }
    }

    /// Keeps the input's typmod when the operator takes the input's own type
    /// (so no length coercion is inserted).
    fn with_input_typmod(&self, target: Oid, input: Option<SqlType>) -> SqlType {
        match input {
            Some(i) if i.oid == target => i,
            _ => t(target),
        }
    }

    /// The executable form of a built-in function.
    pub(crate) fn func_ref(&self, proc: &crate::catalog::builtin::ProcInfo, loc: i32) -> PgResult<FuncRef> {
        // A range type's constructors are pg_proc rows of language
        // internal: they run the built-in code their prosrc names.
        let internal = self.env.catalog.functions.get(&proc.oid).is_some_and(|f| f.language == "internal" && f.kind == 'f');
        if self.env.catalog.functions.contains_key(&proc.oid) && !internal {
            let imp = functions::user_defined(proc.retset);
            return Ok(FuncRef { oid: proc.oid, name: Arc::from(proc.name.as_str()), imp, strict: proc.strict, volatility: proc.volatility });
        }
        let imp: ScalarFn = functions::lookup_proc(proc).ok_or_else(|| {
            let args = proc.argtypes.iter().map(|&a| format_type(self.b, a, -1)).collect::<Vec<_>>().join(", ");
            PgError::unsupported(format!("function {}({})", proc.name, args)).with_position(pos(loc))
        })?;
        Ok(FuncRef { oid: proc.oid, name: Arc::from(proc.name.as_str()), imp, strict: proc.strict, volatility: proc.volatility })
    }

    // ---------------------------------------------------------------- coercion

    /// Boolean contexts (WHERE, AND/OR/NOT, CASE WHEN ...): coerce_to_boolean.
    pub(crate) fn coerce_to_boolean(&mut self, e: Expr, construct: &str, loc: i32) -> PgResult<Expr> {
        let ty = e.ty();
        if ty.oid == oid::BOOL {
            return Ok(e);
        }
        if ty.oid == oid::UNKNOWN {
            return self.coerce_to(e, t(oid::BOOL), CoercionContext::Assignment, loc);
        }
        if coerce::can_coerce(self.b, ty.oid, oid::BOOL, CoercionContext::Assignment) {
            return self.coerce_to(e, t(oid::BOOL), CoercionContext::Assignment, loc);
        }
        Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("argument of {} must be type boolean, not type {}", construct, display_type(self.b, ty)),
        )
        .with_position(pos(loc)))
    }

    /// Gives unknown literals and parameters the type text (for contexts
    /// that need a type but have no other hint, e.g. SELECT 'x').
    pub(crate) fn resolve_unknown(&mut self, e: Expr) -> PgResult<Expr> {
        if let Expr::Row { args, ty } = e {
            let args = args.into_iter().map(|a| self.resolve_unknown(a)).collect::<PgResult<Vec<_>>>()?;
            return Ok(Expr::Row { args, ty });
        }
        if e.ty().oid == oid::UNKNOWN {
            self.coerce_to(e, t(oid::TEXT), CoercionContext::Implicit, -1)
        } else {
            Ok(e)
        }
    }

    fn resolve_unknown_if_other_known(&mut self, e: Expr, other: &Expr) -> PgResult<Expr> {
        if e.ty().oid == oid::UNKNOWN && other.ty().oid == oid::UNKNOWN {
            self.resolve_unknown(e)
        } else {
            Ok(e)
        }
    }

    /// coerce_type + coerce_type_typmod: converts `e` to `target` if the
    /// context allows, else errors with PostgreSQL's message for the context.
    pub fn coerce_to(&mut self, e: Expr, target: SqlType, ctx: CoercionContext, loc: i32) -> PgResult<Expr> {
        match self.try_coerce(e, target, ctx, loc)? {
            Ok(x) => Ok(x),
            Err(e) => {
                let from = display_type(self.b, e.ty());
                let to = display_type(self.b, target);
                Err(match ctx {
                    CoercionContext::Explicit => {
                        PgError::new(sqlstate::CANNOT_COERCE, format!("cannot cast type {from} to {to}")).with_position(pos(loc))
                    }
                    _ => PgError::new(sqlstate::DATATYPE_MISMATCH, format!("cannot cast type {from} to {to}")).with_position(pos(loc)),
                })
            }
        }
    }

    /// CoerceToDomain: `inner` (of the domain's base type) checked against
    /// the constraints of the domain and of the domains it is made from,
    /// the lowest domain's first, each domain's CHECKs in name order (as
    /// PostgreSQL's typcache loads them).
    pub(crate) fn coerce_to_domain(&mut self, inner: Expr, domain: SqlType) -> PgResult<Expr> {
        let value_ty = crate::catalog::types::base_type(domain);
        let mut levels = Vec::new();
        let mut t = domain.oid;
        while let Some(d) = crate::catalog::types::domain(t) {
            t = d.base.oid;
            levels.push(d);
            if levels.len() > 32 {
                break;
            }
        }
        let mut not_null = false;
        let mut checks = Vec::new();
        for d in levels.iter().rev() {
            not_null |= d.not_null;
            let mut named: Vec<&crate::catalog::types::DomainCheck> = d.checks.iter().collect();
            named.sort_by(|a, b| a.name.cmp(&b.name));
            for c in named {
                let e = self.domain_check_expr(&c.expr, value_ty)?;
                checks.push((c.name.clone(), e));
            }
        }
        Ok(Expr::CoerceToDomain { arg: Box::new(inner), domain: domain.oid, not_null, checks, ty: domain })
    }

    /// A domain CHECK's expression, `VALUE` being of type `value_ty`.
    pub(crate) fn domain_check_expr(&mut self, text: &str, value_ty: SqlType) -> PgResult<Expr> {
        let saved = self.domain_value.replace(value_ty);
        let saved_params = self.param_source.take();
        let r = self.analyze_standalone_expr(text, "check constraints");
        self.domain_value = saved;
        self.param_source = saved_params;
        let e = r?;
        self.coerce_to_boolean(e, "CHECK", -1)
    }

    /// coerce_record_to_complex: each field of a ROW(...) coerced to the
    /// composite type's attribute in its place.
    fn row_to_composite(&mut self, args: Vec<Expr>, from: SqlType, target: SqlType, fields: &[(String, SqlType)], ctx: CoercionContext, loc: i32) -> PgResult<Expr> {
        let cannot = |a: &Self, detail: String| {
            PgError::new(sqlstate::CANNOT_COERCE, format!("cannot cast type {} to {}", display_type(a.b, from), display_type(a.b, target)))
                .with_detail(detail)
                .with_position(pos(loc))
        };
        if args.len() < fields.len() {
            return Err(cannot(self, "Input has too few columns.".into()));
        }
        if args.len() > fields.len() {
            return Err(cannot(self, "Input has too many columns.".into()));
        }
        let mut out = Vec::with_capacity(args.len());
        for (i, (arg, (_, ft))) in args.into_iter().zip(fields.iter()).enumerate() {
            let at = arg.ty();
            match self.try_coerce(arg, *ft, ctx, loc)? {
                Ok(x) => out.push(x),
                Err(_) => {
                    let detail = format!("Cannot cast type {} to {} in column {}.", display_type(self.b, at), display_type(self.b, *ft), i + 1);
                    return Err(cannot(self, detail));
                }
            }
        }
        Ok(Expr::Row { args: out, ty: target })
    }

    /// Like `coerce_to`, but hands the expression back (Err) when no coercion exists.
    pub fn try_coerce(&mut self, e: Expr, target: SqlType, ctx: CoercionContext, loc: i32) -> PgResult<Result<Expr, Expr>> {
        let from = e.ty();
        if target.oid == oid::ANY || coerce::is_polymorphic(target.oid) {
            return Ok(Ok(e));
        }
        if from.oid == target.oid && (target.typmod < 0 || from.typmod == target.typmod) {
            return Ok(Ok(e));
        }
        // A domain's value is a value of its base type: a coercion from it
        // starts there (a relabeling, which checks nothing).
        if from.oid != target.oid && crate::catalog::types::domain(from.oid).is_some() {
            let base = crate::catalog::types::base_type(from);
            let relabeled = Expr::Cast { arg: Box::new(e), spec: CastSpec { from, to: base, explicit: false } };
            return self.try_coerce(relabeled, target, ctx, loc);
        }
        // Into a domain: to its base type (its type modifier applied when
        // the value is, as PostgreSQL's length coercion does), then through
        // its constraints.
        if crate::catalog::types::domain(target.oid).is_some() {
            let base = crate::catalog::types::base_type(target);
            let unmodified = SqlType { oid: base.oid, typmod: -1 };
            return match self.try_coerce(e, unmodified, ctx, loc)? {
                Ok(inner) => {
                    let inner = if base.typmod >= 0 {
                        Expr::Cast { arg: Box::new(inner), spec: CastSpec { from: unmodified, to: base, explicit: ctx == CoercionContext::Explicit } }
                    } else {
                        inner
                    };
                    self.coerce_to_domain(inner, target).map(Ok)
                }
                Err(e) => Ok(Err(e)),
            };
        }
        // Unknown-type parameters take the type from their first use.
        if let Expr::Param(i, pt) = &e {
            if pt.oid == oid::UNKNOWN {
                let i = *i;
                self.params.borrow_mut()[i] = t(target.oid);
                let p = Expr::Param(i, t(target.oid));
                if target.typmod >= 0 {
                    return Ok(Ok(Expr::Cast { arg: Box::new(p), spec: CastSpec { from: t(target.oid), to: target, explicit: ctx == CoercionContext::Explicit } }));
                }
                return Ok(Ok(p));
            }
        }
        // Unknown literals are converted right away with the type's input function.
        if let Expr::Const(d, ct) = &e {
            if ct.oid == oid::UNKNOWN {
                if d.is_null() {
                    return Ok(Ok(Expr::Const(Datum::Null, target)));
                }
                let text = d.as_str().unwrap_or_default().to_string();
                if matches!(target.oid, oid::REGCLASS | oid::REGTYPE | oid::REGPROC | oid::REGPROCEDURE | oid::REGOPER | oid::REGOPERATOR | oid::REGNAMESPACE | 4191) {
                    // As PostgreSQL, a reg* literal names its object when the
                    // statement is analyzed, and errors point at the literal.
                    let o = self.reg_input(target.oid, &text).map_err(|err| err.with_position(pos(loc)))?;
                    return Ok(Ok(Expr::Const(Datum::Oid(o), target)));
                }
                if target.oid == oid::REGROLE {
                    // Name lookups need the catalog: done when the cast runs.
                    return Ok(Ok(Expr::Cast {
                        arg: Box::new(Expr::Const(Datum::from_string(text), t(oid::TEXT))),
                        spec: CastSpec { from: t(oid::TEXT), to: target, explicit: true },
                    }));
                }
                let value = functions::io::parse_text(&text, target, self.env.settings, ctx == CoercionContext::Explicit)
                    .map_err(|err| err.with_position(pos(loc)))?;
                return Ok(Ok(Expr::Const(value, target)));
            }
        }
        if from.oid == oid::UNKNOWN {
            // An unknown-typed expression that is not a literal (e.g. a
            // subquery output): convert through text.
            let as_text = Expr::Cast { arg: Box::new(e), spec: CastSpec { from, to: t(oid::TEXT), explicit: false } };
            return Ok(Ok(Expr::Cast {
                arg: Box::new(as_text),
                spec: CastSpec { from: t(oid::TEXT), to: target, explicit: ctx == CoercionContext::Explicit },
            }));
        }
        if from.oid == oid::RECORD && target.oid == oid::RECORD {
            return Ok(Ok(e));
        }
        // A composite value is a record.
        if target.oid == oid::RECORD && self.b.category(from.oid) == 'C' {
            return Ok(Ok(e));
        }
        // coerce_record_to_complex: a row's fields to a composite type's.
        if let Some(fields) = crate::catalog::types::composite_fields(target.oid) {
            if let Expr::Row { args, .. } = e {
                return self.row_to_composite(args, from, target, &fields, ctx, loc).map(Ok);
            }
        }
        if let Some(c) = self.env.catalog.user_ops.cast(from.oid, target.oid) {
            let allowed = match ctx {
                CoercionContext::Explicit => true,
                CoercionContext::Assignment => c.context != 'e',
                _ => c.context == 'i',
            };
            if allowed {
                let c = c.clone();
                return self.user_cast(e, &c, target, ctx == CoercionContext::Explicit, loc).map(Ok);
            }
        }
        match coerce::coercion_path(self.b, from.oid, target.oid, ctx) {
            CoercionPath::None => Ok(Err(e)),
            _ => {
                // Constant folding of casts of constants keeps plans simple
                // and reports conversion errors at the literal.
                if let (Expr::Const(d, _), true) = (&e, self.fold_const_casts) {
                    let folded = functions::cast::cast_datum(d.clone(), from, target, ctx == CoercionContext::Explicit, self.env.settings);
                    if let Ok(v) = folded {
                        return Ok(Ok(Expr::Const(v, target)));
                    }
                }
                Ok(Ok(Expr::Cast { arg: Box::new(e), spec: CastSpec { from, to: target, explicit: ctx == CoercionContext::Explicit } }))
            }
        }
    }

    /// A conversion by a cast from CREATE CAST: its function called with
    /// the value (and the target typmod and explicitness when it takes
    /// them), an I/O conversion through text, or a binary relabeling.
    fn user_cast(&mut self, e: Expr, c: &crate::catalog::operator::Cast, target: SqlType, explicit: bool, loc: i32) -> PgResult<Expr> {
        let from = e.ty();
        match c.method {
            'f' => {
                let catalog = self.env.catalog;
                let proc = catalog.proc(c.func).ok_or_else(|| PgError::internal(format!("cache lookup failed for function {}", c.func)))?;
                let func = self.func_ref(proc, loc)?;
                let mut args = vec![e];
                if proc.argtypes.len() > 1 {
                    args.push(Expr::Const(Datum::Int4(target.typmod), t(oid::INT4)));
                }
                if proc.argtypes.len() > 2 {
                    args.push(Expr::Const(Datum::Bool(explicit), t(oid::BOOL)));
                }
                Ok(Expr::Func { func, args, ty: t(target.oid) })
            }
            'i' => {
                let as_text = Expr::Cast { arg: Box::new(e), spec: CastSpec { from, to: t(oid::TEXT), explicit: true } };
                Ok(Expr::Cast { arg: Box::new(as_text), spec: CastSpec { from: t(oid::TEXT), to: target, explicit: true } })
            }
            _ => Ok(Expr::Cast { arg: Box::new(e), spec: CastSpec { from, to: target, explicit } }),
        }
    }

    /// Resolves a list of expressions to their common type (CASE, COALESCE, VALUES, UNION).
    pub(crate) fn unify(&mut self, exprs: Vec<Expr>, context: &str, loc: i32) -> PgResult<(Vec<Expr>, SqlType)> {
        let types: Vec<Oid> = exprs.iter().map(|e| e.ty().oid).collect();
        let common = coerce::common_type(self.b, &types, context).map_err(|e| e.with_position(pos(loc)))?;
        // Keep a typmod shared by all inputs (varchar(10) stays varchar(10)).
        let typmod = {
            let mods: Vec<i32> = exprs.iter().filter(|e| e.ty().oid == common).map(|e| e.ty().typmod).collect();
            if !mods.is_empty() && mods.len() == exprs.len() && mods.iter().all(|&m| m == mods[0]) {
                mods[0]
            } else {
                -1
            }
        };
        let target = SqlType { oid: common, typmod };
        let mut out = Vec::with_capacity(exprs.len());
        for e in exprs {
            out.push(self.coerce_to(e, target, CoercionContext::Implicit, loc)?);
        }
        Ok((out, target))
    }

    fn transform_type_cast(&mut self, tc: &pb::TypeCast) -> PgResult<Expr> {
        let tn = tc.type_name.as_ref().ok_or_else(|| PgError::internal("cast without type"))?;
        let target = resolve_type_name(self.b, tn)?;
        let arg_node = tc.arg.as_deref().ok_or_else(|| PgError::internal("cast without argument"))?;
        // ARRAY[...]::T[] casts the elements directly (so ARRAY[]::int[] works).
        let arg = match &arg_node.node {
            Some(NodeEnum::AArrayExpr(a)) if self.b.element_of(target.oid) != 0 => self.transform_array(a, Some(target))?,
            _ => self.transform_expr(arg_node)?,
        };
        let loc = if tc.location >= 0 { tc.location } else { expr_location(arg_node) };
        // Error position: the literal for unknown constants, else the cast.
        let literal_loc = if matches!(arg, Expr::Const(_, ty) if ty.oid == oid::UNKNOWN) { expr_location(arg_node) } else { loc };
        if target.oid == oid::VOID || (self.b.type_info(target.oid).map(|i| i.typtype == 'p').unwrap_or(false) && target.oid != oid::RECORD) {
            return Err(PgError::new(
                sqlstate::CANNOT_COERCE,
                format!("cannot cast type {} to {}", display_type(self.b, arg.ty()), format_type(self.b, target.oid, target.typmod)),
            )
            .with_position(pos(loc)));
        }
        match self.try_coerce(arg, target, CoercionContext::Explicit, literal_loc)? {
            Ok(e) => Ok(e),
            Err(e) => Err(PgError::new(
                sqlstate::CANNOT_COERCE,
                format!("cannot cast type {} to {}", display_type(self.b, e.ty()), format_type(self.b, target.oid, target.typmod)),
            )
            .with_position(pos(loc))),
        }
    }

    // ---------------------------------------------------------------- functions

    fn transform_func_call(&mut self, f: &pb::FuncCall) -> PgResult<Expr> {
        if f.args.len() > super::FUNC_MAX_ARGS {
            return Err(PgError::new(
                sqlstate::TOO_MANY_ARGUMENTS,
                format!("cannot pass more than {} arguments to a function", super::FUNC_MAX_ARGS),
            )
            .with_position(pos(f.location)));
        }
        let names: Vec<&str> = f.funcname.iter().filter_map(node_string).collect();
        let (schema, name) = match names.as_slice() {
            [n] => (None, n.to_string()),
            [s, n] => (Some(s.to_string()), n.to_string()),
            _ => return Err(PgError::syntax("improper qualified function name").with_position(pos(f.location))),
        };
        // Only CALL's own call must be a procedure: calls in its arguments
        // are ordinary function calls.
        let calling_procedure = std::mem::replace(&mut self.calling_procedure, false);
        if let Some(s) = &schema {
            if s != "pg_catalog" {
                if !self.env.catalog.namespace_by_name.contains_key(s.as_str()) {
                    return Err(PgError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{s}\" does not exist"))
                        .with_position(pos(f.location)));
                }
            }
        }
        if f.agg_within_group {
            return Err(PgError::unsupported("WITHIN GROUP aggregates").with_position(pos(f.location)));
        }
        let window = f.over.is_some();
        if window {
            self.check_window_allowed(f.location)?;
        }
        let proc_kinds = |k: char| self.env.catalog.procs_named(&name).any(|p| p.kind == k);
        let is_agg_name = proc_kinds('a');
        let is_window_name = proc_kinds('w');
        // Aggregate arguments are analyzed with aggregates forbidden inside;
        // an aggregate used as a window function runs after grouping, so its
        // arguments may hold (ordinary) aggregates.
        let agg_call = is_agg_name && !window;
        let was_in_agg = self.level_ref().in_agg;
        let was_in_window = self.level_ref().in_window;
        if window {
            self.level().in_window = true;
        }
        if agg_call {
            // Whether the call nests in another aggregate of its own query
            // level is known once its arguments tell which level that is.
            self.level().in_agg = true;
        }
        let (args, arg_names) = match self.transform_func_args(&f.args) {
            Ok((a, n)) => (Ok(a), n),
            Err(e) => (Err(e), Vec::new()),
        };
        let filter = if is_agg_name { f.agg_filter.as_ref().map(|x| self.transform_expr(x)).transpose() } else { Ok(None) };
        let mut order = Vec::new();
        let mut order_err = None;
        if agg_call {
            for s in &f.agg_order {
                if let Some(NodeEnum::SortBy(sb)) = &s.node {
                    match sb.node.as_deref().map(|n| self.transform_expr(n)) {
                        Some(Ok(e)) => order.push((e, sb.sortby_dir == 3, sb.sortby_nulls == 2 || (sb.sortby_nulls == 1 && sb.sortby_dir == 3))),
                        Some(Err(e)) => order_err = Some(e),
                        None => {}
                    }
                }
            }
        }
        if agg_call {
            self.level().in_agg = was_in_agg;
        }
        self.level().in_window = was_in_window;
        let args = args?;
        let filter = filter?;
        if let Some(e) = order_err {
            return Err(e);
        }
        if f.agg_star && !is_agg_name {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("{name}(*) specified, but {name} is not an aggregate function"),
            )
            .with_position(pos(f.location)));
        }
        if (f.agg_distinct || !f.agg_order.is_empty() || f.agg_filter.is_some()) && !is_agg_name && !is_window_name {
            let what = if f.agg_distinct { "DISTINCT" } else if f.agg_filter.is_some() { "FILTER" } else { "ORDER BY" };
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("{what} specified, but {name} is not an aggregate function"),
            )
            .with_position(pos(f.location)));
        }
        let named = arg_names.iter().any(Option::is_some);
        // Functions with special argument handling.
        if !named {
            if let Some(e) = self.special_function(&name, &args, f)? {
                return Ok(e);
            }
        }
        let sig_text = {
            let shown: Vec<String> = args
                .iter()
                .zip(arg_names.iter().chain(std::iter::repeat(&None)))
                .map(|(a, n)| match n {
                    Some(n) => format!("{n} => {}", display_type(self.b, a.ty())),
                    None => display_type(self.b, a.ty()),
                })
                .collect();
            // func_signature_string: the name as the call wrote it.
            let qualified = match &schema {
                Some(s) => format!("{s}.{name}"),
                None => name.clone(),
            };
            format!("{}({})", qualified, shown.join(", "))
        };
        let sig = || sig_text.clone();
        let nargs = if f.agg_star { 0 } else { args.len() };
        let catalog = self.env.catalog;
        let call_forms: Vec<crate::catalog::builtin::ProcInfo> =
            if calling_procedure { catalog.procs_named(&name).filter(|p| p.has_call_form()).map(|p| p.call_form()).collect() } else { Vec::new() };
        let procs = || catalog.procs_named(&name).filter(|p| !(calling_procedure && p.has_call_form())).chain(call_forms.iter());
        let mut cands = coerce::function_candidates(procs(), nargs, f.func_variadic);
        // Functions outside pg_catalog (information_schema's) are found
        // only in their schema: named, or on the search path.
        let schema_oid = schema.as_deref().and_then(|s| self.env.catalog.namespace_by_name.get(s).copied());
        let visible = |nsp: Oid, a: &Analyzer| {
            nsp == crate::catalog::PG_CATALOG_NAMESPACE
                || match &schema {
                    Some(_) => schema_oid == Some(nsp),
                    None => a.search_path().contains(&nsp),
                }
        };
        cands.retain(|(_, p)| visible(p.namespace, self));

        let mut args = args;
        if named {
            // Named notation: each candidate puts the arguments in its own
            // parameter order (filling gaps with parameter defaults); keep
            // the candidates for which that works.
            let mut callable = Vec::new();
            for proc in procs() {
                if !visible(proc.namespace, self) {
                    continue;
                }
                if let Some(ordered) = self.order_named_args(proc, &args, &arg_names)? {
                    let cand = coerce::Candidate { oid: proc.oid, args: proc.argtypes[..ordered.len()].to_vec() };
                    let inputs: Vec<Oid> = ordered.iter().map(|a| a.ty().oid).collect();
                    if coerce::select_candidate(self.b, &inputs, std::slice::from_ref(&cand)).0.is_some() {
                        callable.push((cand, proc, ordered));
                    }
                }
            }
            match callable.len() {
                1 => {
                    let (cand, proc, ordered) = callable.pop().expect("one");
                    args = ordered;
                    cands = vec![(cand, proc)];
                }
                0 => {
                    let what = if calling_procedure { "procedure" } else { "function" };
                    return Err(PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("{what} {} does not exist", sig()))
                        .with_hint(format!("No {what} matches the given name and argument types. You might need to add explicit type casts."))
                        .with_position(pos(f.location)))
                }
                _ => {
                    return Err(PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("function {} is not unique", sig()))
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")
                        .with_position(pos(f.location)))
                }
            }
        }
        let arg_types: Vec<Oid> = args.iter().map(|a| a.ty().oid).collect();
        let cand_list: Vec<coerce::Candidate> = cands.iter().map(|(c, _)| c.clone()).collect();
        let inputs = if f.agg_star { vec![] } else { arg_types.clone() };
        // No function takes the argument exactly as it is: `typename(x)`
        // may be a cast (func_get_detail's FUNCDETAIL_COERCION), which is
        // considered before the best of the inexact candidates is sought
        // (so `cidr('1.2.3.4/30')` is cidr input, not cidr(inet) of an inet).
        let plain_call = args.len() == 1
            && !named
            && !f.agg_star
            && !f.agg_distinct
            && !f.func_variadic
            && f.agg_order.is_empty()
            && f.agg_filter.is_none()
            && f.over.is_none()
            && schema.as_deref().map_or(true, |s| s == "pg_catalog");
        if plain_call && !cand_list.iter().any(|c| c.args == inputs) {
            if let Some(target) = self.function_style_cast_target(&name, &args[0]) {
                let arg = args.swap_remove(0);
                let loc = f.args.first().map_or(f.location, expr_location);
                return self.coerce_to(arg, SqlType::new(target), CoercionContext::Explicit, loc);
            }
        }
        let chosen = match coerce::select_candidate(self.b, &inputs, &cand_list) {
            (Some(i), _) => i,
            (None, ambiguous) => {
                if plain_call {
                    if let Some(target) = self.function_style_cast_target(&name, &args[0]) {
                        let arg = args.swap_remove(0);
                        let loc = f.args.first().map_or(f.location, expr_location);
                        return self.coerce_to(arg, SqlType::new(target), CoercionContext::Explicit, loc);
                    }
                }
                let sig = sig();
                return Err(if ambiguous {
                    PgError::new(sqlstate::AMBIGUOUS_FUNCTION, format!("function {sig} is not unique"))
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")
                } else if f.agg_distinct && is_agg_name {
                    PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {sig} does not exist"))
                        .with_hint("No aggregate function matches the given name and argument types. Perhaps you misplaced ORDER BY; ORDER BY must appear after all regular arguments of the aggregate.")
                } else if calling_procedure {
                    PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("procedure {sig} does not exist"))
                        .with_hint("No procedure matches the given name and argument types. You might need to add explicit type casts.")
                } else {
                    PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {sig} does not exist"))
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
                }
                .with_position(pos(f.location)));
            }
        };
        let proc = cands[chosen].1;
        if calling_procedure && proc.kind != 'p' {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{} is not a procedure", sig()))
                .with_hint("To call a function, use SELECT.")
                .with_position(pos(f.location)));
        }
        if proc.kind == 'p' && !calling_procedure {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{} is a procedure", sig()))
                .with_hint("To call a procedure, use CALL.")
                .with_position(pos(f.location)));
        }
        let spread_variadic = f.func_variadic && proc.variadic == oid::ANY && functions::json::spreads_variadic(&proc.src).is_some();
        if f.func_variadic && proc.variadic == oid::ANY && !spread_variadic {
            // The callee would have to spread the array at run time.
            return Err(PgError::unsupported(format!("VARIADIC array arguments to {name}(), which takes VARIADIC \"any\"")).with_position(pos(f.location)));
        }
        let (concrete, ret) = coerce::resolve_polymorphic(self.b, &inputs, &cand_list[chosen].args, proc.rettype)?;
        // A literal that fails its conversion is pointed at (make_fn_arguments
        // coerces each argument at its own location); arguments in named
        // notation were reordered, so those point at the call.
        let positional = arg_names.iter().all(Option::is_none);
        let arg_location = |i: usize| {
            let l = if positional { f.args.get(i).map(expr_location).unwrap_or(-1) } else { -1 };
            if l >= 0 {
                l
            } else {
                f.location
            }
        };
        let mut coerced = Vec::with_capacity(args.len());
        for (i, (a, &ty)) in args.into_iter().zip(&concrete).enumerate() {
            if ty == oid::ANY {
                // "any" arguments take values as they are; unknown literals stay unknown.
                coerced.push(a);
                continue;
            }
            let target = self.with_input_typmod(ty, Some(a.ty()));
            coerced.push(self.coerce_to(a, target, CoercionContext::Implicit, arg_location(i))?);
        }
        if self.env.catalog.functions.contains_key(&proc.oid) {
            coerced = self.complete_user_call(proc, coerced, &concrete, f.func_variadic)?;
        }
        self.name_json_row_arguments(if proc.kind == 'a' { &name } else { &proc.src }, &mut coerced);
        let ret_ty = t(if ret == oid::RECORD { oid::RECORD } else { ret });
        if window && proc.kind != 'a' && proc.kind != 'w' {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("OVER specified, but {name} is not a window function nor an aggregate function"),
            )
            .with_position(pos(f.location)));
        }
        if window && proc.kind == 'w' {
            let kind = super::window::window_func_kind(&name)
                .ok_or_else(|| PgError::unsupported(format!("window function {name}")).with_position(pos(f.location)))?;
            return self.transform_window_call(f, &name, Some(kind), None, coerced, ret_ty);
        }
        if proc.kind == 'a' {
            // The query level the aggregate belongs to: the nearest one
            // whose columns its arguments read (check_agg_arguments).
            let levels_up = if window {
                0
            } else {
                let reads = coerced.iter().chain(filter.iter()).chain(order.iter().map(|(e, _, _)| e));
                reads.filter_map(|e| nearest_var_level(e, 0)).min().unwrap_or(0)
            };
            let owner = self.levels.len() - 1 - (levels_up as usize).min(self.levels.len() - 1);
            let nested = if levels_up == 0 { was_in_agg } else { self.levels[owner].in_agg };
            if agg_call && nested {
                return Err(PgError::new(sqlstate::GROUPING_ERROR, "aggregate function calls cannot be nested").with_position(pos(f.location)));
            }
            if let Some(clause) = self.levels[owner].agg_forbidden {
                return Err(agg_not_allowed(clause, f.location));
            }
            let user_kind = self.env.catalog.user_ops.aggregates.contains_key(&proc.oid).then_some(functions::AggregateKind::User);
            let kind = user_kind.or_else(|| functions::agg::lookup(&name, &coerced.iter().map(|a| a.ty().oid).collect::<Vec<_>>(), ret)).ok_or_else(|| {
                PgError::unsupported(format!(
                    "aggregate {}({})",
                    name,
                    concrete.iter().map(|&a| format_type(self.b, a, -1)).collect::<Vec<_>>().join(", ")
                ))
                .with_position(pos(f.location))
            })?;
            let filter = match filter {
                Some(x) => Some(Box::new(self.coerce_to_boolean(x, "FILTER", f.location)?)),
                None => None,
            };
            if !window {
                self.levels[owner].has_aggs = true;
            }
            let arg_types = coerced.iter().map(|a| a.ty()).collect();
            let call = AggCall {
                oid: proc.oid,
                name: Arc::from(name.as_str()),
                kind,
                args: coerced,
                arg_types,
                distinct: f.agg_distinct,
                star: f.agg_star,
                filter,
                order_by: order,
                ty: ret_ty,
                levels_up,
            };
            if window {
                return self.transform_window_call(f, &name, None, Some(call), Vec::new(), ret_ty);
            }
            return Ok(Expr::Agg(Box::new(call)));
        }
        if proc.kind == 'w' {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("window function {name} requires an OVER clause"),
            )
            .with_position(pos(f.location)));
        }
        if proc.retset {
            self.check_srf_placement(f.location)?;
        }
        let mut func = self.func_ref(proc, f.location)?;
        if spread_variadic {
            // VARIADIC array given to a VARIADIC "any" function: its elements are the arguments.
            func.imp = functions::json::spreads_variadic(&proc.src).unwrap_or(func.imp);
        }
        Ok(Expr::Func { func, args: coerced, ty: ret_ty })
    }

    /// Set-returning functions run only where a row can multiply
    /// (check_srf_call_placement); elsewhere PostgreSQL refuses them when
    /// the query is analyzed, not when the call is reached.
    fn check_srf_placement(&self, location: i32) -> PgResult<()> {
        if self.level_ref().in_agg {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "aggregate function calls cannot contain set-returning function calls")
                .with_hint("You might be able to move the set-returning function into a LATERAL FROM item.")
                .with_position(pos(location)));
        }
        match self.level_ref().agg_forbidden {
            Some(clause @ ("WHERE" | "JOIN conditions" | "UPDATE" | "check constraints" | "DEFAULT expressions" | "index expressions")) => {
                Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("set-returning functions are not allowed in {clause}")).with_position(pos(location)))
            }
            _ => Ok(()),
        }
    }

    /// A call's arguments, with the names of those given in named notation
    /// (`name => value`), which must all follow the positional ones.
    fn transform_func_args(&mut self, nodes: &[Node]) -> PgResult<(Vec<Expr>, Vec<Option<String>>)> {
        let mut args = Vec::with_capacity(nodes.len());
        let mut names: Vec<Option<String>> = Vec::with_capacity(nodes.len());
        for n in nodes {
            match &n.node {
                Some(NodeEnum::NamedArgExpr(na)) => {
                    if names.iter().flatten().any(|x| *x == na.name) {
                        return Err(PgError::syntax(format!("argument name \"{}\" used more than once", na.name)).with_position(pos(na.location)));
                    }
                    let arg = na.arg.as_deref().ok_or_else(|| PgError::internal("named argument without a value"))?;
                    args.push(self.transform_expr(arg)?);
                    names.push(Some(na.name.clone()));
                }
                _ => {
                    if names.iter().any(Option::is_some) {
                        return Err(PgError::syntax("positional argument cannot follow named argument").with_position(pos(expr_location(n))));
                    }
                    args.push(self.transform_expr(n)?);
                    names.push(None);
                }
            }
        }
        Ok((args, names))
    }

    /// Puts a named-notation call's arguments in `proc`'s parameter order,
    /// up to the last one given; a parameter skipped in between takes its
    /// default (PostgreSQL's default expressions, analyzed here). None when
    /// the names do not fit the function.
    fn order_named_args(&mut self, proc: &crate::catalog::builtin::ProcInfo, args: &[Expr], names: &[Option<String>]) -> PgResult<Option<Vec<Expr>>> {
        let n = proc.argtypes.len();
        // Names of the input parameters (proargnames covers OUT ones too when
        // proargmodes is set).
        let input_names: Vec<&str> = if proc.argmodes.is_empty() {
            proc.argnames.iter().map(String::as_str).collect()
        } else {
            // A procedure's OUT parameters are passed too (PostgreSQL 14+).
            proc.argnames.iter().zip(&proc.argmodes).filter(|(_, m)| matches!(m, 'i' | 'b' | 'v') || (proc.kind == 'p' && **m == 'o')).map(|(x, _)| x.as_str()).collect()
        };
        if input_names.len() != n || args.len() > n || proc.variadic != 0 {
            return Ok(None);
        }
        let mut slots: Vec<Option<Expr>> = vec![None; n];
        for (i, (a, name)) in args.iter().zip(names).enumerate() {
            let at = match name {
                None => i,
                Some(name) => match input_names.iter().position(|x| x == name) {
                    Some(p) => p,
                    None => return Ok(None),
                },
            };
            if slots[at].is_some() {
                return Ok(None);
            }
            slots[at] = Some(a.clone());
        }
        let last = slots.iter().rposition(Option::is_some).map_or(0, |p| p + 1);
        let first_default = n - proc.nargdefaults;
        let mut defaults: Option<Vec<Expr>> = None;
        let mut out = Vec::with_capacity(last);
        for (i, slot) in slots.into_iter().take(last).enumerate() {
            match slot {
                Some(e) => out.push(e),
                None if i >= first_default => {
                    if defaults.is_none() {
                        defaults = Some(self.parameter_defaults(proc)?);
                    }
                    let d = defaults.as_ref().and_then(|d| d.get(i - first_default)).cloned();
                    match d {
                        Some(d) => out.push(d),
                        None => return Ok(None),
                    }
                }
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// The arguments a user-defined function receives for a call: omitted
    /// trailing parameters take their defaults, and the arguments matching
    /// a VARIADIC parameter are gathered into its array (a built-in
    /// function takes them as they are).
    fn complete_user_call(&mut self, proc: &crate::catalog::builtin::ProcInfo, mut args: Vec<Expr>, concrete: &[Oid], explicit_variadic: bool) -> PgResult<Vec<Expr>> {
        let n = proc.argtypes.len();
        if args.len() < n {
            let defaults = self.parameter_defaults(proc)?;
            let first_default = n - proc.nargdefaults;
            for i in args.len()..n {
                let d = defaults.get(i - first_default).cloned().ok_or_else(|| PgError::internal("missing parameter default"))?;
                let ty = self.concrete_param_type(proc.argtypes[i], concrete, &proc.argtypes);
                args.push(self.coerce_to(d, t(ty), CoercionContext::Implicit, -1)?);
            }
        } else if proc.variadic != 0 && !explicit_variadic && proc.variadic != oid::ANY {
            let elem_ty = concrete.get(n - 1).copied().unwrap_or(proc.variadic);
            let elements: Vec<Expr> = args.split_off(n - 1);
            let array = self.b.types.get(&elem_ty).map(|ti| ti.array).filter(|&a| a != 0).unwrap_or(oid::ANYARRAY);
            args.push(Expr::Array { elem: t(elem_ty), elements, ty: t(array) });
        }
        Ok(args)
    }

    /// A parameter's type for this call: polymorphic ones take the type
    /// the call resolved them to.
    fn concrete_param_type(&self, declared: Oid, concrete: &[Oid], declared_all: &[Oid]) -> Oid {
        if !coerce::is_polymorphic(declared) {
            return declared;
        }
        declared_all.iter().zip(concrete).find(|(d, _)| **d == declared).map(|(_, c)| *c).unwrap_or(declared)
    }

    /// A built-in function's parameter defaults, analyzed from their text.
    fn parameter_defaults(&mut self, proc: &crate::catalog::builtin::ProcInfo) -> PgResult<Vec<Expr>> {
        let stmts = crate::parser::parse(&format!("SELECT {}", proc.arg_defaults))?;
        let Some(NodeEnum::SelectStmt(sel)) = stmts.into_iter().next().map(|s| s.node) else {
            return Err(PgError::internal("parameter defaults"));
        };
        let mut out = Vec::new();
        for t in &sel.target_list {
            let Some(NodeEnum::ResTarget(rt)) = &t.node else { return Err(PgError::internal("parameter default")) };
            let v = rt.val.as_deref().ok_or_else(|| PgError::internal("parameter default"))?;
            out.push(self.transform_expr(v)?);
        }
        Ok(out)
    }

    /// Calls whose analysis PostgreSQL special-cases.
    fn special_function(&mut self, name: &str, args: &[Expr], f: &pb::FuncCall) -> PgResult<Option<Expr>> {
        match name {
            // num_nulls/num_nonnulls and friends take any argument types.
            "num_nulls" | "num_nonnulls" | "concat" | "concat_ws" | "format" | "json_build_object" | "json_build_array" => {
                // Resolved generically below (variadic "any").
                Ok(None)
            }
            _ => {
                let _ = (args, f);
                Ok(None)
            }
        }
    }

    fn transform_sql_value_function(&mut self, f: &pb::SqlValueFunction) -> PgResult<Expr> {
        let (fname, ty): (&str, Oid) = match f.op {
            1 => ("current_date", oid::DATE),
            2 | 3 => ("current_time", oid::TIMETZ),
            4 | 5 => ("current_timestamp", oid::TIMESTAMPTZ),
            6 | 7 => ("localtime", oid::TIME),
            8 | 9 => ("localtimestamp", oid::TIMESTAMP),
            10 | 11 | 12 => ("current_user", oid::NAME),
            13 => ("session_user", oid::NAME),
            14 => ("current_database", oid::NAME),
            _ => ("current_schema", oid::NAME),
        };
        let imp = functions::lookup(&format!("svf:{fname}")).ok_or_else(|| PgError::unsupported(fname))?;
        let func = FuncRef { oid: 0, name: Arc::from(fname), imp, strict: false, volatility: 's' };
        let typmod = if matches!(f.op, 3 | 5 | 7 | 9) { f.typmod } else { -1 };
        let e = Expr::Func { func, args: vec![], ty: t(ty) };
        if typmod >= 0 {
            return Ok(Expr::Cast { arg: Box::new(e), spec: CastSpec { from: t(ty), to: SqlType { oid: ty, typmod }, explicit: true } });
        }
        Ok(e)
    }

    // ---------------------------------------------------------------- CASE, arrays, subscripts

    fn transform_case(&mut self, c: &pb::CaseExpr) -> PgResult<Expr> {
        let arg = match &c.arg {
            Some(a) => {
                let e = self.transform_expr(a)?;
                Some(self.resolve_unknown(e)?)
            }
            None => None,
        };
        let mut conds = Vec::new();
        let mut results = Vec::new();
        for w in &c.args {
            let Some(NodeEnum::CaseWhen(cw)) = &w.node else { return Err(PgError::internal("CASE arm")) };
            let cond = self.transform_expr(cw.expr.as_deref().ok_or_else(|| PgError::internal("WHEN"))?)?;
            let cond = match &arg {
                Some(a) => self.make_op("=", Some(Expr::CaseTest(a.ty())), Some(cond), cw.location)?,
                None => self.coerce_to_boolean(cond, "CASE/WHEN", cw.location)?,
            };
            conds.push(cond);
            results.push(self.transform_expr(cw.result.as_deref().ok_or_else(|| PgError::internal("THEN"))?)?);
        }
        let default = match &c.defresult {
            Some(d) => self.transform_expr(d)?,
            None => Expr::null(t(oid::UNKNOWN)),
        };
        // PostgreSQL resolves the ELSE result first, so it gets priority.
        results.insert(0, default);
        let (mut results, ty) = self.unify(results, "CASE", c.location)?;
        let default = results.remove(0);
        Ok(Expr::Case { arg: arg.map(Box::new), whens: conds.into_iter().zip(results).collect(), default: Box::new(default), ty })
    }

    fn transform_array(&mut self, a: &pb::AArrayExpr, target: Option<SqlType>) -> PgResult<Expr> {
        let mut elems = Vec::new();
        for e in &a.elements {
            match &e.node {
                // Nested ARRAY[[...]] sub-arrays.
                Some(NodeEnum::AArrayExpr(inner)) => {
                    let sub_target = target;
                    elems.push(self.transform_array(inner, sub_target)?);
                }
                _ => elems.push(self.transform_expr(e)?),
            }
        }
        let (array_ty, elem_ty) = match target {
            Some(tt) => (tt, SqlType { oid: self.b.element_of(tt.oid), typmod: tt.typmod }),
            None => {
                if elems.is_empty() {
                    return Err(PgError::new(sqlstate::INDETERMINATE_DATATYPE, "cannot determine type of empty array")
                        .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
                        .with_position(pos(a.location)));
                }
                let (unified, ty) = self.unify(elems, "ARRAY", a.location)?;
                elems = unified;
                let ty = if ty.oid == oid::UNKNOWN { t(oid::TEXT) } else { ty };
                // get_promoted_array_type: items of a type with an array
                // type (int2vector too) make a one-dimensional array of it;
                // arrays make a multidimensional array.
                if self.b.array_of(ty.oid) == 0 && self.b.element_of(ty.oid) != 0 {
                    (ty, t(self.b.element_of(ty.oid)))
                } else {
                    let arr = self.b.array_of(ty.oid);
                    if arr == 0 {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_OBJECT,
                            format!("could not find array type for data type {}", display_type(self.b, ty)),
                        )
                        .with_position(pos(a.location)));
                    }
                    (t(arr), ty)
                }
            }
        };
        let mut out = Vec::with_capacity(elems.len());
        for (i, e) in elems.into_iter().enumerate() {
            let et = e.ty().oid;
            let sub_array = et == array_ty.oid || (self.b.element_of(et) != 0 && self.b.array_of(et) == 0);
            let target_e = if sub_array { array_ty } else { elem_ty };
            // A conversion error points at the element.
            let loc = a.elements.get(i).map(expr_location).filter(|&l| l >= 0).unwrap_or(a.location);
            out.push(self.coerce_to(e, target_e, CoercionContext::Explicit, loc)?);
        }
        Ok(Expr::Array { elem: elem_ty, elements: out, ty: array_ty })
    }

    fn transform_indirection(&mut self, ind: &pb::AIndirection) -> PgResult<Expr> {
        let arg = ind.arg.as_deref().ok_or_else(|| PgError::internal("indirection"))?;
        let location = expr_location(arg);
        let mut base = self.transform_expr(arg)?;
        let mut subs: Vec<&pb::AIndices> = Vec::new();
        for i in &ind.indirection {
            match &i.node {
                Some(NodeEnum::AIndices(ix)) => subs.push(ix),
                Some(NodeEnum::String(s)) => {
                    base = self.subscript_fetch(base, &std::mem::take(&mut subs), location)?;
                    base = self.field_select(base, &s.sval)?;
                }
                Some(NodeEnum::AStar(_)) => return Err(PgError::unsupported("(composite).* expansion here")),
                _ => return Err(PgError::internal("indirection kind")),
            }
        }
        self.subscript_fetch(base, &subs, location)
    }

    /// `(value).field` (ParseFuncOrColumn's field selection): the field of
    /// a composite value whose fields are known — a call of a function with
    /// OUT parameters, or a column of a subquery or function in FROM that
    /// holds one.
    fn field_select(&mut self, base: Expr, field: &str) -> PgResult<Expr> {
        if let Some(fields) = self.record_fields(&base) {
            if let Some(i) = fields.iter().position(|(n, _)| n == field) {
                let ty = fields[i].1;
                return Ok(Expr::FieldSelect { arg: Box::new(base), field: i, ty });
            }
        }
        if base.ty().oid == oid::RECORD {
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("could not identify column \"{field}\" in record data type")));
        }
        Err(PgError::new(
            sqlstate::UNDEFINED_COLUMN,
            format!("column \"{field}\" not found in data type {}", display_type(self.b, base.ty())),
        ))
    }

    /// The names and types of a record value's fields, when they can be
    /// known (get_expr_result_tupdesc, expandRecordVariable).
    pub(crate) fn record_fields(&self, e: &Expr) -> Option<Vec<(String, SqlType)>> {
        // A value of a named composite type (or of a domain over one) has
        // its type's fields.
        if let Some(fields) = crate::catalog::types::composite_fields(crate::catalog::types::base_type(e.ty()).oid) {
            return Some(fields.to_vec());
        }
        match e {
            Expr::Var(v) => {
                let level = self.levels.get(self.levels.len().checked_sub(1 + v.levels_up as usize)?)?;
                rte_column_fields(self.env.catalog, &level.rtable, v.rte, v.col)
            }
            Expr::Param(i, _) if self.param_source.is_some() => self.param_source.and_then(|s| s.param_fields(*i)),
            other => expr_record_fields(self.env.catalog, other, &[]),
        }
    }

    // ---------------------------------------------------------------- subqueries

    fn transform_sublink(&mut self, s: &pb::SubLink) -> PgResult<Expr> {
        if let Some(clause) = self.level_ref().agg_forbidden {
            if clause == "check constraints" || clause == "DEFAULT expressions" || clause == "index expressions" {
                let what = match clause {
                    "check constraints" => "check constraint",
                    "DEFAULT expressions" => "DEFAULT expression",
                    _ => "index expression",
                };
                return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("cannot use subquery in {what}")).with_position(pos(s.location)));
            }
        }
        let sub = match s.subselect.as_deref().and_then(|n| n.node.as_ref()) {
            Some(NodeEnum::SelectStmt(sel)) => sel.clone(),
            _ => return Err(PgError::internal("sublink without SELECT")),
        };
        let query = self.analyze_select_stmt(&sub)?;
        let outputs: Vec<SqlType> = query.output().map(|t| t.expr.ty()).collect();
        let kind = match s.sub_link_type {
            1 => SubLinkKind::Exists,
            2 => SubLinkKind::All,
            3 => SubLinkKind::Any,
            5 => SubLinkKind::Expr,
            7 => SubLinkKind::Array,
            // (a, b) op (SELECT x, y): compare with the subquery's one row.
            4 => return self.row_compare_sublink(s, query, outputs),
            // SET (a, b) = (SELECT ...): the row, taken apart by the caller.
            6 => {
                let ty = t(oid::RECORD);
                return Ok(Expr::SubLink { kind: SubLinkKind::Row, test: None, op: None, query: Box::new(query), ty });
            }
            _ => return Err(PgError::unsupported("this kind of subquery")),
        };
        match kind {
            SubLinkKind::Exists => Ok(Expr::SubLink { kind, test: None, op: None, query: Box::new(query), ty: t(oid::BOOL) }),
            SubLinkKind::Row => unreachable!("row sublinks return above"),
            SubLinkKind::Expr | SubLinkKind::Array => {
                if outputs.len() != 1 {
                    return Err(PgError::syntax(if outputs.len() > 1 { "subquery must return only one column" } else { "subquery must return a column" })
                        .with_position(pos(s.location)));
                }
                let ty = if kind == SubLinkKind::Array {
                    // get_promoted_array_type: an array's own type when
                    // the output is an array without an array type.
                    let mut a = self.b.array_of(outputs[0].oid);
                    if a == 0 && self.b.element_of(outputs[0].oid) != 0 {
                        a = outputs[0].oid;
                    }
                    if a == 0 {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_OBJECT,
                            format!("could not find array type for data type {}", display_type(self.b, outputs[0])),
                        ));
                    }
                    t(a)
                } else {
                    outputs[0]
                };
                Ok(Expr::SubLink { kind, test: None, op: None, query: Box::new(query), ty })
            }
            SubLinkKind::Any | SubLinkKind::All => {
                let test = self.transform_expr(s.testexpr.as_deref().ok_or_else(|| PgError::internal("ANY without test"))?)?;
                let opname = s.oper_name.last().and_then(node_string).unwrap_or("=").to_string();
                if let Expr::Row { .. } = test {
                    return Err(PgError::unsupported("row-valued IN/ANY with a subquery"));
                }
                if outputs.len() != 1 {
                    return Err(PgError::syntax(if outputs.len() > 1 { "subquery has too many columns" } else { "subquery has too few columns" })
                        .with_position(pos(s.location)));
                }
                let (func, lt, rt, ret) = self.resolve_operator(&opname, Some(test.ty()), Some(outputs[0]), s.location)?;
                if ret.oid != oid::BOOL {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("operator {opname} must return type boolean, not type {}", display_type(self.b, ret)),
                    ));
                }
                let test = self.coerce_to(test, lt.unwrap(), CoercionContext::Implicit, s.location)?;
                let mut query = query;
                // Coerce the subquery's output to the operator's right type.
                let target = rt.unwrap();
                if let Some(te) = query.targets.iter_mut().find(|t| !t.junk) {
                    if te.expr.ty() != target {
                        let e = std::mem::replace(&mut te.expr, Expr::null(target));
                        te.expr = self.coerce_outer_free(e, target, s.location)?;
                    }
                }
                Ok(Expr::SubLink { kind, test: Some(Box::new(test)), op: Some(func), query: Box::new(query), ty: t(oid::BOOL) })
            }
        }
    }

    fn row_compare_sublink(&mut self, s: &pb::SubLink, query: crate::query::Query, outputs: Vec<SqlType>) -> PgResult<Expr> {
        let test = s.testexpr.as_deref().ok_or_else(|| PgError::internal("row comparison without left side"))?;
        let left = match &test.node {
            Some(NodeEnum::RowExpr(r)) => self.transform_list(&r.args)?,
            _ => vec![self.transform_expr(test)?],
        };
        if left.len() != outputs.len() {
            return Err(PgError::syntax(if left.len() < outputs.len() { "subquery has too many columns" } else { "subquery has too few columns" })
                .with_position(pos(s.location)));
        }
        let opname = s.oper_name.last().and_then(node_string).unwrap_or("=").to_string();
        let row = Expr::SubLink { kind: SubLinkKind::Row, test: None, op: None, query: Box::new(query), ty: t(oid::RECORD) };
        let right = outputs.iter().enumerate().map(|(i, &ty)| Expr::FieldSelect { arg: Box::new(row.clone()), field: i, ty }).collect();
        self.row_compare(&opname, left, right, s.location)
    }

    /// Coerces an expression of an already-analyzed subquery (no level context needed for casts).
    fn coerce_outer_free(&mut self, e: Expr, target: SqlType, loc: i32) -> PgResult<Expr> {
        self.coerce_to(e, target, CoercionContext::Implicit, loc)
    }
}

/// Raises levels_up of every outer-free Var by `by` (join alias expressions
/// copied to a deeper level).
fn shift_levels(e: Expr, by: u32) -> Expr {
    if by == 0 {
        return e;
    }
    e.rewrite(&mut |x| match x {
        Expr::Var(mut v) => {
            v.levels_up += by;
            Expr::Var(v)
        }
        other => other,
    })
}

pub(crate) fn display_type(b: &crate::catalog::builtin::Builtins, t: SqlType) -> String {
    crate::analyzer::types::format_type_be(b, t.oid)
}

/// Levenshtein distance between two names, by characters (insertions,
/// deletions and substitutions all cost 1), as varstr_levenshtein.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn ambiguous(col: &str, location: i32) -> PgError {
    PgError::new(sqlstate::AMBIGUOUS_COLUMN, format!("column reference \"{col}\" is ambiguous")).with_position(pos(location))
}


/// The location of an expression node, for error positions.
pub(crate) fn expr_location(n: &Node) -> i32 {
    // nodeFuncs.c's exprLocation for raw parse trees: an operator or a
    // call starts at its leftmost part.
    let of = |n: &Option<Box<Node>>| n.as_deref().map(expr_location).unwrap_or(-1);
    let first = |list: &[Node]| list.iter().map(expr_location).find(|&l| l >= 0).unwrap_or(-1);
    match &n.node {
        Some(NodeEnum::AConst(c)) => c.location,
        Some(NodeEnum::ColumnRef(c)) => c.location,
        Some(NodeEnum::AExpr(e)) => leftmost(e.location, of(&e.lexpr)),
        Some(NodeEnum::FuncCall(f)) => leftmost(f.location, first(&f.args)),
        Some(NodeEnum::TypeCast(t)) => leftmost(of(&t.arg), t.location),
        Some(NodeEnum::BoolExpr(b)) => leftmost(b.location, first(&b.args)),
        Some(NodeEnum::SubLink(s)) => leftmost(of(&s.testexpr), s.location),
        Some(NodeEnum::CaseExpr(c)) => c.location,
        Some(NodeEnum::ParamRef(p)) => p.location,
        Some(NodeEnum::NullTest(nt)) => leftmost(nt.location, of(&nt.arg)),
        Some(NodeEnum::RowExpr(r)) => r.location,
        Some(NodeEnum::AArrayExpr(a)) => a.location,
        Some(NodeEnum::CoalesceExpr(c)) => c.location,
        Some(NodeEnum::MinMaxExpr(m)) => m.location,
        Some(NodeEnum::SqlvalueFunction(s)) => s.location,
        Some(NodeEnum::CollateClause(c)) => leftmost(of(&c.arg), c.location),
        Some(NodeEnum::BooleanTest(b)) => leftmost(b.location, of(&b.arg)),
        Some(NodeEnum::SetToDefault(d)) => d.location,
        Some(NodeEnum::AIndirection(i)) => of(&i.arg),
        Some(NodeEnum::NamedArgExpr(na)) => leftmost(na.location, of(&na.arg)),
        Some(NodeEnum::GroupingFunc(g)) => g.location,
        Some(NodeEnum::ResTarget(r)) => r.location,
        _ => -1,
    }
}

/// nodeFuncs.c's leftmostLoc: the smaller of two locations, ignoring unknown (-1) ones.
fn leftmost(a: i32, b: i32) -> i32 {
    match (a < 0, b < 0) {
        (true, _) => b,
        (_, true) => a,
        _ => a.min(b),
    }
}

fn node_kind_name(n: &NodeEnum) -> String {
    let dbg = format!("{n:?}");
    dbg.split('(').next().unwrap_or("unknown").to_string()
}

/// The columns of the row a function returns: its OUT parameters' names
/// and types, polymorphic ones resolved from the call's arguments. None
/// for a function without OUT parameters.
pub fn function_out_columns(cat: &crate::catalog::DbCatalog, func: Oid, args: &[Expr]) -> Option<Vec<(String, SqlType)>> {
    let b = crate::catalog::builtins();
    let p = cat.proc(func)?;
    let outs: Vec<(String, Oid)> = p
        .argmodes
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, 'o' | 'b' | 't'))
        .map(|(i, _)| (p.argnames.get(i).cloned().unwrap_or_default(), p.allargtypes.get(i).copied().unwrap_or(0)))
        .collect();
    if outs.is_empty() {
        return None;
    }
    let inputs: Vec<Oid> = args.iter().map(|a| a.ty().oid).collect();
    Some(
        outs.into_iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                let ty = if coerce::is_polymorphic(ty) {
                    coerce::resolve_polymorphic(b, &inputs, &p.argtypes, ty).map(|(_, r)| r).unwrap_or(ty)
                } else {
                    ty
                };
                // An unnamed OUT parameter's column is named by position.
                (if name.is_empty() { format!("column{}", i + 1) } else { name }, SqlType::new(ty))
            })
            .collect(),
    )
}

/// The fields of a record-typed expression over `rtable`, when known.
fn expr_record_fields(b: &crate::catalog::DbCatalog, e: &Expr, rtable: &[crate::query::RangeTblEntry]) -> Option<Vec<(String, SqlType)>> {
    match e {
        Expr::Func { func, args, ty } if ty.oid == oid::RECORD => function_out_columns(b, func.oid, args),
        Expr::Var(v) if v.levels_up == 0 => rte_column_fields(b, rtable, v.rte, v.col),
        _ => None,
    }
}

/// The fields of the record in column `col` of range table entry `rte`.
fn rte_column_fields(b: &crate::catalog::DbCatalog, rtable: &[crate::query::RangeTblEntry], rte: usize, col: usize) -> Option<Vec<(String, SqlType)>> {
    let entry = rtable.get(rte)?;
    if entry.col_types.get(col)?.oid != oid::RECORD {
        return None;
    }
    match &entry.kind {
        RteKind::Subquery(q) if q.set_op.is_none() => {
            let te = q.output().nth(col)?;
            expr_record_fields(b, &te.expr, &q.rtable)
        }
        RteKind::Function { call, columns_from_record: false, .. } if col == 0 => expr_record_fields(b, call, &[]),
        RteKind::Join { columns, .. } => expr_record_fields(b, columns.get(col)?, rtable),
        _ => None,
    }
}

/// FigureColname: the output column name PostgreSQL gives an expression.
pub(crate) fn figure_colname(n: &Node) -> String {
    figure_colname_inner(n).map(|(s, _)| s).unwrap_or_else(|| "?column?".to_string())
}

fn figure_colname_inner(n: &Node) -> Option<(String, u8)> {
    match &n.node {
        Some(NodeEnum::ColumnRef(c)) => match c.fields.last().and_then(|f| f.node.as_ref()) {
            Some(NodeEnum::String(s)) => Some((s.sval.clone(), 2)),
            _ => None,
        },
        Some(NodeEnum::AIndirection(ind)) => {
            for i in ind.indirection.iter().rev() {
                if let Some(NodeEnum::String(s)) = &i.node {
                    return Some((s.sval.clone(), 2));
                }
            }
            ind.arg.as_deref().and_then(figure_colname_inner)
        }
        Some(NodeEnum::FuncCall(f)) => f.funcname.last().and_then(node_string).map(|s| (s.to_string(), 2)),
        Some(NodeEnum::AExpr(e)) if e.kind == 6 => Some(("nullif".into(), 2)),
        Some(NodeEnum::TypeCast(tc)) => {
            let inner = tc.arg.as_deref().and_then(figure_colname_inner);
            match inner {
                Some((s, strength)) if strength > 1 => Some((s, strength)),
                _ => tc.type_name.as_ref().and_then(|tn| tn.names.last().and_then(node_string)).map(|s| (s.to_string(), 1)),
            }
        }
        Some(NodeEnum::CollateClause(c)) => c.arg.as_deref().and_then(figure_colname_inner),
        Some(NodeEnum::SubLink(s)) => match s.sub_link_type {
            1 => Some(("exists".into(), 2)),
            7 => Some(("array".into(), 2)),
            5 | 6 => {
                if let Some(NodeEnum::SelectStmt(sel)) = s.subselect.as_deref().and_then(|n| n.node.as_ref()) {
                    if let Some(Some(NodeEnum::ResTarget(rt))) = sel.target_list.first().map(|t| t.node.as_ref()) {
                        if !rt.name.is_empty() {
                            return Some((rt.name.clone(), 2));
                        }
                        return rt.val.as_deref().and_then(figure_colname_inner);
                    }
                }
                None
            }
            _ => None,
        },
        Some(NodeEnum::CaseExpr(c)) => match c.defresult.as_deref().and_then(figure_colname_inner) {
            Some((s, strength)) if strength > 1 => Some((s, strength)),
            _ => Some(("case".into(), 1)),
        },
        Some(NodeEnum::AArrayExpr(_)) => Some(("array".into(), 2)),
        Some(NodeEnum::RowExpr(_)) => Some(("row".into(), 2)),
        Some(NodeEnum::CoalesceExpr(_)) => Some(("coalesce".into(), 2)),
        Some(NodeEnum::MinMaxExpr(m)) => Some((if m.op == 1 { "greatest" } else { "least" }.into(), 2)),
        Some(NodeEnum::SqlvalueFunction(f)) => Some((
            match f.op {
                1 => "current_date",
                2 | 3 => "current_time",
                4 | 5 => "current_timestamp",
                6 | 7 => "localtime",
                8 | 9 => "localtimestamp",
                10 => "current_role",
                11 => "current_user",
                12 => "user",
                13 => "session_user",
                14 => "current_catalog",
                _ => "current_schema",
            }
            .into(),
            2,
        )),
        Some(NodeEnum::XmlExpr(x)) => {
            use pb::XmlExprOp as X;
            let name = match x.op {
                o if o == X::IsXmlconcat as i32 => "xmlconcat",
                o if o == X::IsXmlelement as i32 => "xmlelement",
                o if o == X::IsXmlforest as i32 => "xmlforest",
                o if o == X::IsXmlparse as i32 => "xmlparse",
                o if o == X::IsXmlpi as i32 => "xmlpi",
                o if o == X::IsXmlroot as i32 => "xmlroot",
                o if o == X::IsXmlserialize as i32 => "xmlserialize",
                // IS DOCUMENT gets no name of its own.
                _ => return None,
            };
            Some((name.into(), 2))
        }
        Some(NodeEnum::XmlSerialize(_)) => Some(("xmlserialize".into(), 2)),
        _ => None,
    }
}

/// FigureIndexColname: the name an index expression column gets — what
/// FigureColname would call it (a function's name, a cast column's name,
/// `case`, ...), else "expr".
pub fn figure_index_colname(n: &Node) -> String {
    figure_colname_inner(n).map(|(s, _)| s).unwrap_or_else(|| "expr".to_string())
}

/// The system column `name` of a range table entry: tables (and
/// sequences) have them, as PostgreSQL's relations do; views, subqueries,
/// functions and joins do not.
fn system_column_of(rte: &crate::query::RangeTblEntry, name: &str) -> Option<SystemColumn> {
    match rte.kind {
        RteKind::Relation(_) => SystemColumn::by_name(name),
        _ => None,
    }
}

/// The nearest query level, counted outward from the level `e` is at
/// (`depth` levels below it, inside sublinks), whose columns `e` reads;
/// None if it reads none.
fn nearest_var_level(e: &Expr, depth: u32) -> Option<u32> {
    let mut out: Option<u32> = None;
    let mut note = |n: u32| out = Some(out.map_or(n, |o| o.min(n)));
    e.walk(&mut |x| match x {
        Expr::Var(v) if v.levels_up >= depth => note(v.levels_up - depth),
        Expr::SubLink { query, .. } => {
            if let Some(n) = query_nearest_var_level(query, depth + 1) {
                note(n)
            }
        }
        _ => {}
    });
    out
}

fn query_nearest_var_level(q: &Query, depth: u32) -> Option<u32> {
    let out = std::cell::Cell::new(None::<u32>);
    let note = |n: u32| out.set(Some(out.get().map_or(n, |o| o.min(n))));
    let visit = |e: &Expr| {
        if let Some(n) = nearest_var_level(e, depth) {
            note(n);
        }
    };
    for t in &q.targets {
        visit(&t.expr);
    }
    for e in q.quals.iter().chain(q.having.iter()).chain(q.group_by.iter()).chain(q.limit.iter()).chain(q.offset.iter()) {
        visit(e);
    }
    fn from_quals<'a>(f: &'a FromItem, out: &mut Vec<&'a Expr>) {
        if let FromItem::Join { left, right, quals, .. } = f {
            out.extend(quals.iter());
            from_quals(left, out);
            from_quals(right, out);
        }
    }
    let mut joins = Vec::new();
    for f in &q.from {
        from_quals(f, &mut joins);
    }
    for e in joins {
        visit(e);
    }
    for r in &q.rtable {
        match &r.kind {
            RteKind::Subquery(sq) => {
                if let Some(n) = query_nearest_var_level(sq, depth + 1) {
                    note(n);
                }
            }
            RteKind::Values(rows) => rows.iter().flatten().for_each(visit),
            RteKind::Function { call, .. } => visit(call),
            _ => {}
        }
    }
    out.get()
}

/// Whether a whole-row reference over `n` columns covers the relation's
/// live columns (an alias list or a system view may show fewer).
fn rel_has_all_columns(cat: &crate::catalog::DbCatalog, rel: Oid, n: usize) -> bool {
    cat.relation(rel).is_some_and(|r| r.live_columns().count() == n)
}
