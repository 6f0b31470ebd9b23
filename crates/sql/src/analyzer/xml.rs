//! SQL/XML expressions (XMLCONCAT, XMLELEMENT, XMLFOREST, XMLPARSE, XMLPI,
//! XMLROOT, IS DOCUMENT, XMLSERIALIZE) analyzed as PostgreSQL's
//! transformXmlExpr and transformXmlSerialize do, for a server without
//! libxml (see `functions::xml`): arguments are type-checked and coerced
//! with PostgreSQL's messages, element and attribute names fail where
//! PostgreSQL maps them to XML names, and what is left evaluates on NULLs.

use std::sync::Arc;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use super::coerce::{self, CoercionContext};
use super::expr::{display_type, expr_location};
use super::types::resolve_type_name;
use super::{pos, Analyzer};
use crate::expr::{Expr, FuncRef};
use crate::functions::{self, xml::no_xml_support};

fn t(oid: Oid) -> SqlType {
    SqlType::new(oid)
}

impl Analyzer<'_> {
    pub(super) fn transform_xml_expr(&mut self, x: &pb::XmlExpr) -> PgResult<Expr> {
        use pb::XmlExprOp as X;
        // map_sql_identifier_to_xml_name needs libxml: an element's or a
        // processing instruction's name fails before anything else.
        if !x.name.is_empty() {
            return Err(no_xml_support());
        }
        // Attribute (XMLELEMENT) and element (XMLFOREST) names: each value
        // is analyzed, then its name would be mapped.
        for n in &x.named_args {
            let Some(NodeEnum::ResTarget(r)) = &n.node else { continue };
            if let Some(val) = r.val.as_deref() {
                self.transform_expr(val)?;
                let is_column = matches!(val.node, Some(NodeEnum::ColumnRef(_)));
                if r.name.is_empty() && !is_column {
                    let what = if x.op == X::IsXmlelement as i32 { "attribute" } else { "element" };
                    return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("unnamed XML {what} value must be a column reference"))
                        .with_position(pos(r.location)));
                }
            }
            return Err(no_xml_support());
        }
        let mut args = Vec::with_capacity(x.args.len());
        for (i, n) in x.args.iter().enumerate() {
            let e = self.transform_expr(n)?;
            let (target, construct) = match x.op {
                o if o == X::IsXmlconcat as i32 => (oid::XML, "XMLCONCAT"),
                o if o == X::IsXmlparse as i32 => (if i == 0 { oid::TEXT } else { oid::BOOL }, "XMLPARSE"),
                o if o == X::IsXmlpi as i32 => (oid::TEXT, "XMLPI"),
                o if o == X::IsXmlroot as i32 => (
                    match i {
                        0 => oid::XML,
                        1 => oid::TEXT,
                        _ => oid::INT4,
                    },
                    "XMLROOT",
                ),
                o if o == X::IsDocument as i32 => (oid::XML, "IS DOCUMENT"),
                // XMLELEMENT content is taken as is (and never reached:
                // the element's name failed above).
                _ => {
                    args.push(e);
                    continue;
                }
            };
            args.push(self.coerce_to_specific_type(e, target, construct, expr_location(n))?);
        }
        let (imp, name, ty) = match x.op {
            o if o == X::IsXmlconcat as i32 => ("xmlexpr:concat", "xmlconcat", oid::XML),
            o if o == X::IsXmlparse as i32 => ("xmlexpr:null_or_unsupported", "xmlparse", oid::XML),
            o if o == X::IsXmlroot as i32 => ("xmlexpr:null_or_unsupported", "xmlroot", oid::XML),
            o if o == X::IsDocument as i32 => ("xmlexpr:null_or_unsupported", "xml_is_document", oid::BOOL),
            _ => return Err(no_xml_support()),
        };
        Ok(self.xml_call(imp, name, args, t(ty)))
    }

    pub(super) fn transform_xml_serialize(&mut self, xs: &pb::XmlSerialize) -> PgResult<Expr> {
        let node = xs.expr.as_deref().ok_or_else(|| PgError::internal("XMLSERIALIZE without an argument"))?;
        let e = self.transform_expr(node)?;
        let arg = self.coerce_to_specific_type(e, oid::XML, "XMLSERIALIZE", expr_location(node))?;
        let tn = xs.type_name.as_ref().ok_or_else(|| PgError::internal("XMLSERIALIZE without a type"))?;
        let target = resolve_type_name(self.b, tn)?;
        let document = xs.xmloption == pb::XmlOptionType::XmloptionDocument as i32;
        let imp = if document { "xmlexpr:null_or_unsupported" } else { "xmlexpr:serialize_content" };
        let text = self.xml_call(imp, "xmlserialize", vec![arg], t(oid::TEXT));
        // Any type text converts to implicitly will do (char and varchar
        // are SQL's; PostgreSQL allows the rest).
        match self.try_coerce(text, target, CoercionContext::Implicit, -1)? {
            Ok(e) => Ok(e),
            Err(_) => Err(PgError::new(
                sqlstate::CANNOT_COERCE,
                format!("cannot cast XMLSERIALIZE result to {}", display_type(self.b, target)),
            )
            .with_position(pos(xs.location))),
        }
    }

    /// parse_coerce.c's coerce_to_specific_type: an implicit coercion to
    /// `target`, or PostgreSQL's "argument of CONSTRUCT must be type ...".
    fn coerce_to_specific_type(&mut self, e: Expr, target: Oid, construct: &str, loc: i32) -> PgResult<Expr> {
        let from = e.ty().oid;
        if from == target {
            return Ok(e);
        }
        if from == oid::UNKNOWN || coerce::can_coerce(self.b, from, target, CoercionContext::Implicit) {
            return self.coerce_to(e, t(target), CoercionContext::Implicit, loc);
        }
        Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("argument of {construct} must be type {}, not type {}", display_type(self.b, t(target)), display_type(self.b, e.ty())),
        )
        .with_position(pos(loc)))
    }

    /// A call of one of `functions::xml`'s evaluators of SQL/XML syntax.
    /// `name` is what EXPLAIN shows, and tells calls apart (no pg_proc OID).
    fn xml_call(&self, imp: &'static str, name: &'static str, args: Vec<Expr>, ty: SqlType) -> Expr {
        let imp = functions::lookup(imp).expect("SQL/XML evaluators are registered");
        let func = FuncRef { oid: 0, name: Arc::from(name), imp, strict: false, volatility: 's' };
        Expr::Func { func, args, ty }
    }
}
