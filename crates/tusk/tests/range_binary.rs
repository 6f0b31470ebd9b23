//! The binary forms of range and multirange values (range_send/recv,
//! multirange_send/recv) through a real client: results in binary format
//! come out as PostgreSQL 15 sends them, and binary parameters are read
//! back into the same values (canonicalized as range_recv does).
//!
//! The expected bytes are PostgreSQL 15's own answers to
//! `SELECT range_send(...)` / `multirange_send(...)` for the same values.

mod common;

use common::TestServer;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

/// A value's bytes exactly as the server sent them (any type).
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A parameter value sent as given, in binary format.
#[derive(Debug)]
struct RawBinary(Vec<u8>);

impl ToSql for RawBinary {
    fn to_sql(&self, _: &Type, out: &mut tokio_postgres::types::private::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

const CASES: [(&str, &str, &str); 6] = [
    ("int4range(1,5)", "int4range", "0200000004000000010000000400000005"),
    ("'empty'::int4range", "int4range", "01"),
    ("numrange(1.5,NULL,'(]')", "numrange", "100000000c000200000000000100011388"),
    ("daterange('2000-01-01','2000-01-03')", "daterange", "0200000004000000000000000400000002"),
    ("'{[1,3),[5,7)}'::int4multirange", "int4multirange", "00000002000000110200000004000000010000000400000003000000110200000004000000050000000400000007"),
    ("'{}'::int4multirange", "int4multirange", "00000000"),
];

#[tokio::test]
async fn ranges_and_multiranges_travel_in_postgresql_binary_form() {
    let server = TestServer::start();
    let c = server.connect("postgres").await;
    for (expr, ty, hex) in CASES {
        // Results: the extended protocol asks for binary.
        let row = c.query_one(&format!("SELECT {expr}"), &[]).await.unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(row.get::<_, Raw>(0).0, unhex(hex), "{expr}");
        // Parameters: the same bytes read back equal the value.
        let sql = format!("SELECT $1::{ty} = {expr}, $1::{ty}::text");
        let row = c.query_one(&sql, &[&RawBinary(unhex(hex))]).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert!(row.get::<_, bool>(0), "{expr} round trip gave {}", row.get::<_, String>(1));
    }
    // range_recv canonicalizes: (1,5] of int4 arrives as [2,6).
    let open_closed = "0400000004000000010000000400000005";
    let row = c.query_one("SELECT $1::int4range::text", &[&RawBinary(unhex(&open_closed))]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "[2,6)");
}
