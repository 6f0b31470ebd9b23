//! The `xml` type and its functions as PostgreSQL 15 has them when built
//! without libxml (`configure --without-libxml`, xml.c's `NO_XML_SUPPORT`).
//!
//! Tusk has no XML parser yet. Rather than invent its own partial answers it
//! behaves exactly as a PostgreSQL server without XML support: the type,
//! its catalog rows and the SQL/XML syntax exist and are type-checked, but
//! anything that would have to parse or build an XML value fails with
//! `0A000 unsupported XML feature`. Since no non-null `xml` value can be
//! made, what remains computable is what PostgreSQL computes on NULLs
//! (XMLCONCAT of NULLs, `xmlagg` over no rows, strict functions).

use super::{plain, FnCtx, Registry};
use tusk_types::{sqlstate, Datum, PgError, PgResult};

/// xml.c's NO_XML_SUPPORT(): the error every XML operation raises.
pub fn no_xml_support() -> PgError {
    PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "unsupported XML feature")
        .with_detail("This functionality requires the server to be built with libxml support.")
}

/// Functions that need libxml: every call with non-null arguments fails
/// (they are strict, so NULL arguments never reach here).
fn needs_libxml(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Err(no_xml_support())
}

/// xmltotext: an xml value is its text.
fn xml_to_text(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}

/// xmlvalidate has never been implemented in PostgreSQL.
fn xmlvalidate(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "xmlvalidate is not implemented"))
}

/// xmlconcat2 (xmlagg's transition; also XMLCONCAT of two values): a NULL
/// side gives the other; two values would have to be concatenated.
fn xmlconcat2(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    match (a[0].is_null(), a[1].is_null()) {
        (true, _) => Ok(a[1].clone()),
        (false, true) => Ok(a[0].clone()),
        (false, false) => Err(no_xml_support()),
    }
}

/// XMLCONCAT(...): NULL when every argument is NULL (ExecEvalXmlExpr skips
/// them); otherwise the values must be concatenated by libxml.
fn xmlexpr_concat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    if a.iter().all(Datum::is_null) {
        Ok(Datum::Null)
    } else {
        Err(no_xml_support())
    }
}

/// XMLPARSE, XMLROOT, IS DOCUMENT, XMLSERIALIZE(DOCUMENT ...): NULL in,
/// NULL out; a value has to be parsed.
fn xmlexpr_null_or_unsupported(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    if a.first().map(Datum::is_null).unwrap_or(true) {
        Ok(Datum::Null)
    } else {
        Err(no_xml_support())
    }
}

/// XMLSERIALIZE(CONTENT x AS type): the value's text (xmltotext_with_xmloption
/// checks nothing for CONTENT), cast to the target type by the caller.
fn xmlexpr_serialize_content(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(a[0].clone())
}

pub(super) fn register(r: &mut Registry) {
    plain(
        r,
        &[
            "xmlcomment",
            "texttoxml",
            "xml_recv",
            "xmlexists",
            "xpath",
            "xpath_exists",
            // xpath(text, xml) and xpath_exists(text, xml): SQL functions
            // over the three-argument forms in PostgreSQL.
            "oid:2932",
            "oid:3050",
            "xml_is_well_formed",
            "xml_is_well_formed_document",
            "xml_is_well_formed_content",
            "table_to_xml",
            "query_to_xml",
            "cursor_to_xml",
            "table_to_xmlschema",
            "query_to_xmlschema",
            "cursor_to_xmlschema",
            "table_to_xml_and_xmlschema",
            "query_to_xml_and_xmlschema",
            "schema_to_xml",
            "schema_to_xmlschema",
            "schema_to_xml_and_xmlschema",
            "database_to_xml",
            "database_to_xmlschema",
            "database_to_xml_and_xmlschema",
        ],
        needs_libxml,
    );
    plain(r, &["xmltotext"], xml_to_text);
    plain(r, &["xmlvalidate"], xmlvalidate);
    plain(r, &["xmlconcat2"], xmlconcat2);
    plain(r, &["xmlexpr:concat"], xmlexpr_concat);
    plain(r, &["xmlexpr:null_or_unsupported"], xmlexpr_null_or_unsupported);
    plain(r, &["xmlexpr:serialize_content"], xmlexpr_serialize_content);
}
