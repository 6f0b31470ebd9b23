//! User-defined range types and exclusion constraints across a restart:
//! the type definitions, their constructor functions and the values stored
//! in columns of them come back from the catalog and the rows as they were,
//! and an exclusion constraint still refuses a conflicting row.

mod common;

use common::TestServer;

fn code(e: &tokio_postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_else(|| format!("no code: {e}"))
}

#[tokio::test]
async fn user_range_column_and_exclusion_constraint_survive_restart() {
    let mut server = TestServer::start();
    {
        let c = server.connect("postgres").await;
        c.batch_execute(
            "CREATE TYPE textrange AS RANGE (subtype = text, collation = \"C\");
             CREATE TABLE booking (id int, room int, span textrange, EXCLUDE USING btree (room WITH =));
             CREATE INDEX booking_span ON booking (span);
             INSERT INTO booking VALUES (1, 101, textrange('a', 'm')), (2, 102, '[k,z]'), (3, 103, 'empty')",
        )
        .await
        .unwrap();
    }
    server.restart().expect("restart");
    let c = server.connect("postgres").await;
    let rows = c.query("SELECT span::text FROM booking WHERE span && textrange('l', 'n') ORDER BY id", &[]).await.unwrap();
    let spans: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(spans, vec!["[a,m)".to_string(), "[k,z]".to_string()]);
    let merged: String = c.query_one("SELECT range_agg(span)::text FROM booking", &[]).await.unwrap().get(0);
    assert_eq!(merged, "{[a,z]}");
    let typname: String = c.query_one("SELECT pg_typeof(textmultirange(textrange('a', 'b')))::text", &[]).await.unwrap().get(0);
    assert_eq!(typname, "textmultirange");
    let e = c.batch_execute("INSERT INTO booking VALUES (4, 101, 'empty')").await.unwrap_err();
    assert_eq!(code(&e), "23P01");
    let e = c.batch_execute("DROP TYPE textrange").await.unwrap_err();
    assert_eq!(code(&e), "2BP01");
    c.batch_execute("DROP TABLE booking; DROP TYPE textrange").await.unwrap();
    let left: i64 = c.query_one("SELECT count(*) FROM pg_proc WHERE proname IN ('textrange', 'textmultirange')", &[]).await.unwrap().get(0);
    assert_eq!(left, 0);
}
