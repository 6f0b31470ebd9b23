//! The `xml` type as PostgreSQL 15 has it when built without libxml, which
//! is what Tusk is until it has an XML parser: the type and the SQL/XML
//! syntax exist and are type-checked, anything that would parse or build an
//! XML value fails with 0A000 "unsupported XML feature" and PostgreSQL's
//! DETAIL, and what PostgreSQL computes on NULLs comes out the same.
//!
//! (The reference server on development machines is built with libxml, so
//! these expectations come from PostgreSQL's own expected output for a
//! build without it, `xml_1.out` of its regression suite, which
//! scripts/pgregress.py also compares.)

mod common;

use common::TestServer;

const DETAIL: &str = "This functionality requires the server to be built with libxml support.";

/// (SQLSTATE, message, detail, position) of a failing statement.
async fn error_of(c: &tokio_postgres::Client, sql: &str) -> (String, String, String, Option<u32>) {
    let e = c.simple_query(sql).await.expect_err(sql);
    let d = e.as_db_error().unwrap_or_else(|| panic!("{sql}: not a server error: {e}"));
    let position = match d.position() {
        Some(tokio_postgres::error::ErrorPosition::Original(p)) => Some(*p),
        _ => None,
    };
    (d.code().code().to_string(), d.message().to_string(), d.detail().unwrap_or("").to_string(), position)
}

async fn unsupported_at(c: &tokio_postgres::Client, sql: &str, position: Option<u32>) {
    let (code, message, detail, pos) = error_of(c, sql).await;
    assert_eq!((code.as_str(), message.as_str(), detail.as_str(), pos), ("0A000", "unsupported XML feature", DETAIL, position), "{sql}");
}

async fn one_value(c: &tokio_postgres::Client, sql: &str) -> Option<String> {
    let rows = c.simple_query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let row = rows
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{sql}: no row"));
    row.get(0).map(str::to_string)
}

#[tokio::test]
async fn xml_without_libxml_behaves_as_postgresql_built_without_it() {
    let server = TestServer::start();
    let c = server.connect("postgres").await;

    // The type exists; a value of it cannot be made (xml_in), and the
    // error points at the literal.
    c.simple_query("CREATE TABLE xmltest (id int, data xml)").await.unwrap();
    unsupported_at(&c, "INSERT INTO xmltest VALUES (1, '<value>one</value>')", Some(32)).await;
    unsupported_at(&c, "SELECT '<a/>'::xml", Some(8)).await;
    unsupported_at(&c, "SELECT xpath('/a', '<a/>')", Some(20)).await;
    assert_eq!(one_value(&c, "SELECT count(*) FROM xmltest").await.as_deref(), Some("0"));

    // Functions and constructs that would build XML fail without a position.
    unsupported_at(&c, "SELECT xmlcomment('test')", None).await;
    unsupported_at(&c, "SELECT xmlelement(name foo, 'bar')", None).await;
    unsupported_at(&c, "SELECT xmlpi(name foo, null)", None).await;
    unsupported_at(&c, "SELECT xmlparse(content 'abc')", None).await;
    unsupported_at(&c, "SELECT xmlforest(id) FROM xmltest", None).await;

    // Type checks come first, with PostgreSQL's messages.
    let (code, message, _, pos) = error_of(&c, "SELECT xmlconcat(1, 2)").await;
    assert_eq!((code.as_str(), message.as_str(), pos), ("42804", "argument of XMLCONCAT must be type xml, not type integer", Some(18)));
    // XMLFOREST analyzes each value before it would map its name.
    let (code, message, _, _) = error_of(&c, "SELECT xmlforest(nosuchcolumn)").await;
    assert_eq!((code.as_str(), message.as_str()), ("42703", "column \"nosuchcolumn\" does not exist"));
    // NULLs go through as in PostgreSQL.
    assert_eq!(one_value(&c, "SELECT xmlconcat(NULL, NULL)").await, None);
    assert_eq!(one_value(&c, "SELECT xmlagg(data) FROM xmltest").await, None);
    assert_eq!(one_value(&c, "SELECT xmlparse(document NULL) IS NULL").await.as_deref(), Some("t"));
    assert_eq!(one_value(&c, "SELECT (NULL::xml IS DOCUMENT) IS NULL").await.as_deref(), Some("t"));
    assert_eq!(one_value(&c, "SELECT count(xmlserialize(content data AS varchar(20))) FROM xmltest").await.as_deref(), Some("0"));
    assert_eq!(one_value(&c, "SELECT xpath('/a', NULL::xml) IS NULL").await.as_deref(), Some("t"));
}
