//! Binary I/O of the network address and bit string types: inet, cidr,
//! macaddr, macaddr8, bit and bit varying, as their send and receive
//! functions define them. The expected bytes are PostgreSQL 15's
//! (`encode(inet_send(...), 'hex')` and so on); the test reads results in
//! binary format (tokio-postgres asks for it) and sends parameters in
//! binary format, so both directions are exercised.
//!
//! `TUSK_NETTYPES_TEST_PG="host=... port=... user=postgres"` runs the test
//! against that PostgreSQL instead of a Tusk, to check the test itself.

mod common;

use std::error::Error;

use common::TestServer;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};
use tokio_postgres::Client;

/// A value's wire bytes, whatever its type.
#[derive(Debug)]
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl ToSql for Raw {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn tohex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// (type, text form, PostgreSQL's send bytes in hex).
const CASES: &[(&str, &str, &str)] = &[
    ("inet", "192.168.1.5/24", "02180004c0a80105"),
    ("cidr", "10:23::/64", "0340011000100023000000000000000000000000"),
    ("macaddr", "08:00:2b:01:02:03", "08002b010203"),
    ("macaddr8", "08:00:2b:01:02:03:04:05", "08002b0102030405"),
    ("bit(5)", "10110", "00000005b0"),
    ("varbit", "101010101", "00000009aa80"),
];

async fn connect(server: &Option<TestServer>) -> Client {
    match (server, std::env::var("TUSK_NETTYPES_TEST_PG")) {
        (Some(s), _) => s.connect("postgres").await,
        (None, Ok(conninfo)) => {
            let (client, connection) = tokio_postgres::connect(&conninfo, tokio_postgres::NoTls).await.expect("connect to TUSK_NETTYPES_TEST_PG");
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn send_and_receive() {
    let server = if std::env::var("TUSK_NETTYPES_TEST_PG").is_ok() { None } else { Some(TestServer::start()) };
    let client = connect(&server).await;
    for (ty, text, hex_bytes) in CASES {
        let want = unhex(hex_bytes);
        // Output: the value's send bytes.
        let row = client.query_one(&format!("SELECT '{text}'::{ty}"), &[]).await.unwrap();
        let got: Raw = row.get(0);
        assert_eq!(tohex(&got.0), *hex_bytes, "send of {ty} '{text}'");
        // Input: the same bytes as a binary parameter read back as text.
        let stmt = client.prepare(&format!("SELECT $1::{ty}::text")).await.unwrap();
        let row = client.query_one(&stmt, &[&Raw(want)]).await.unwrap();
        let back: String = row.get(0);
        assert_eq!(back, *text, "receive of {ty}");
    }
    // A cidr with bits right of its mask is refused on receive too.
    let stmt = client.prepare("SELECT $1::cidr::text").await.unwrap();
    let err = client.query_one(&stmt, &[&Raw(unhex("02180104c0a80105"))]).await.unwrap_err();
    let db = err.as_db_error().expect("a database error");
    // (PostgreSQL's message is cidr_recv's own, `invalid external "cidr"
    // value`; Tusk's bind step words every receive error its own way.)
    assert_eq!(db.code().code(), "22P03");
    // macaddr8 also receives six bytes, as an EUI-48.
    let stmt = client.prepare("SELECT $1::macaddr8::text").await.unwrap();
    let row = client.query_one(&stmt, &[&Raw(unhex("08002b010203"))]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "08:00:2b:ff:fe:01:02:03");
}
