//! Enum types across a server restart and in binary form: the labels a
//! table holds, including ones ALTER TYPE ... ADD VALUE put between older
//! labels, keep their text and their order (in scans and through an index)
//! after the server restarts; binary results and parameters are the
//! label's text, as enum_send/enum_recv send and read it.

mod common;

use common::TestServer;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

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

async fn labels(c: &tokio_postgres::Client, sql: &str) -> Vec<String> {
    c.query(sql, &[]).await.unwrap().iter().map(|r| r.get::<_, String>(0)).collect()
}

#[tokio::test]
async fn enum_values_and_added_labels_survive_a_restart() {
    let mut server = TestServer::start();
    {
        let c = server.connect("postgres").await;
        // One statement per transaction: a label is usable once the
        // transaction that added it has committed.
        for sql in [
            "CREATE TYPE size AS ENUM ('small', 'large')",
            "CREATE TABLE shirts (id int PRIMARY KEY, s size)",
            "CREATE INDEX shirts_s ON shirts (s)",
            "INSERT INTO shirts VALUES (1, 'large'), (2, 'small')",
            "ALTER TYPE size ADD VALUE 'medium' AFTER 'small'",
            "ALTER TYPE size ADD VALUE 'tiny' BEFORE 'small'",
            "INSERT INTO shirts VALUES (3, 'medium'), (4, 'tiny')",
            "ALTER TYPE size RENAME VALUE 'large' TO 'big'",
        ] {
            c.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let e = c.batch_execute("BEGIN; ALTER TYPE size ADD VALUE 'xl'; SELECT 'xl'::size").await.unwrap_err();
        assert_eq!(e.as_db_error().map(|e| e.code().code()), Some("55P04"));
        c.batch_execute("ROLLBACK").await.unwrap();
    }
    server.restart().expect("restart");
    let c = server.connect("postgres").await;
    assert_eq!(labels(&c, "SELECT s::text FROM shirts ORDER BY shirts.s").await, ["tiny", "small", "medium", "big"]);
    c.batch_execute("SET enable_seqscan = off").await.unwrap();
    assert_eq!(labels(&c, "SELECT s::text FROM shirts WHERE s > 'tiny' ORDER BY shirts.s").await, ["small", "medium", "big"]);
    assert_eq!(labels(&c, "SELECT enum_range(NULL::size)::text").await, ["{tiny,small,medium,big}"]);
    // A label added after the restart takes its place too.
    c.batch_execute("ALTER TYPE size ADD VALUE 'huge'").await.unwrap();
    c.batch_execute("INSERT INTO shirts VALUES (5, 'huge')").await.unwrap();
    assert_eq!(labels(&c, "SELECT enum_range(NULL::size)::text").await, ["{tiny,small,medium,big,huge}"]);
    assert_eq!(labels(&c, "SELECT s::text FROM shirts WHERE s >= 'medium' ORDER BY shirts.s DESC").await, ["huge", "big", "medium"]);
}

#[tokio::test]
async fn enum_binary_form_is_the_label_text() {
    let server = TestServer::start();
    let c = server.connect("postgres").await;
    c.batch_execute("CREATE TYPE color AS ENUM ('red', 'green')").await.unwrap();
    let row = c.query_one("SELECT 'green'::color", &[]).await.unwrap();
    assert_eq!(row.get::<_, Raw>(0).0, b"green");
    // The parameter's type is looked up by the driver (pg_type, pg_enum).
    let stmt = c.prepare("SELECT $1::color = 'red'::color").await.unwrap();
    assert_eq!(stmt.params()[0].name(), "color");
    let row = c.query_one(&stmt, &[&RawBinary(b"red".to_vec())]).await.unwrap();
    assert!(row.get::<_, bool>(0));
    // PostgreSQL reports enum_recv's own 22P02 here; Tusk's Bind wraps
    // every receive error as 22P03, so only the failure is asserted.
    assert!(c.query_one(&stmt, &[&RawBinary(b"blue".to_vec())]).await.is_err());
}
