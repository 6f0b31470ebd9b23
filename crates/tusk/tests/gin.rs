//! GIN indexes across sessions and crashes: entries are engine keys
//! written in the row's transaction, so another session sees an
//! uncommitted row through the index no more than through the table, a
//! committed one at once, and a crash (SIGKILL) right after commits loses
//! neither rows nor entries nor lets a rolled-back row's entries appear.
//!
//! Every count through the index (enable_seqscan off, checked with
//! EXPLAIN) must equal the count of a full scan of the same condition.

mod common;

use common::TestServer;
use tokio_postgres::Client;

async fn count(c: &Client, sql: &str) -> i64 {
    let rows = c.query(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows[0].get::<_, i64>(0)
}

/// The condition's count through the GIN index and by a full scan.
async fn both_ways(c: &Client, cond: &str) -> (i64, i64) {
    c.batch_execute("SET enable_seqscan = off").await.unwrap();
    let plan: Vec<String> = c
        .query(&format!("EXPLAIN (COSTS OFF) SELECT count(*) FROM docs WHERE {cond}"), &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    assert!(plan.iter().any(|l| l.contains("Bitmap Index Scan on docs_")), "{cond} does not use a GIN index: {plan:?}");
    let through_index = count(c, &format!("SELECT count(*) FROM docs WHERE {cond}")).await;
    // Wrapping the column in a no-op keeps the planner off the index.
    let cond_scan = cond.replace("doc ", "(doc || '{}') ").replace("tags ", "(tags || '{}'::text[]) ");
    let full_scan = count(c, &format!("SELECT count(*) FROM docs WHERE {cond_scan}")).await;
    (through_index, full_scan)
}

const CONDS: &[&str] = &[
    r#"doc @> '{"k": "v1"}'"#,
    r#"doc @> '{"n": {"m": 3}}'"#,
    "doc ? 'extra'",
    "tags @> ARRAY['t2']",
    "tags && ARRAY['t1', 'zz']",
];

async fn check_all(c: &Client, what: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for cond in CONDS {
        let (i, s) = both_ways(c, cond).await;
        assert_eq!(i, s, "{what}: {cond}: {i} rows through the index, {s} by a full scan");
        out.push(i);
    }
    out
}

#[tokio::test]
async fn gin_entries_follow_transactions_and_survive_a_crash() {
    let mut server = TestServer::start();
    let a = server.connect("postgres").await;
    let b = server.connect("postgres").await;
    a.batch_execute(
        "CREATE TABLE docs (id int PRIMARY KEY, doc jsonb, tags text[]);
         CREATE INDEX docs_path ON docs USING gin (doc jsonb_path_ops);
         CREATE INDEX docs_ops_t ON docs USING gin (tags);
         INSERT INTO docs SELECT g, jsonb_build_object('k', 'v' || (g % 3), 'n', jsonb_build_object('m', g % 5)),
                                ARRAY['t' || (g % 4), 't' || (g % 6)] FROM generate_series(1, 300) g;",
    )
    .await
    .unwrap();
    // A second index built over existing rows.
    a.batch_execute("CREATE INDEX docs_ops ON docs USING gin (doc)").await.unwrap();
    let before = check_all(&b, "after the load").await;

    // Uncommitted writes of one session are invisible to the other.
    a.batch_execute(
        "BEGIN;
         INSERT INTO docs VALUES (1001, '{\"k\": \"v1\", \"extra\": 1}', ARRAY['t2']);
         UPDATE docs SET doc = doc || '{\"extra\": true}', tags = ARRAY['t1'] WHERE id <= 20;
         DELETE FROM docs WHERE id BETWEEN 21 AND 40;",
    )
    .await
    .unwrap();
    assert_eq!(check_all(&b, "while another session writes").await, before);
    let during = check_all(&a, "own uncommitted writes").await;
    assert_ne!(during, before, "the writing session sees its own writes through the index");
    a.batch_execute("COMMIT").await.unwrap();
    assert_eq!(check_all(&b, "after the commit").await, during);

    // A rolled-back transaction leaves no entries.
    a.batch_execute("BEGIN; INSERT INTO docs VALUES (2001, '{\"extra\": 2}', ARRAY['t2']); ROLLBACK;").await.unwrap();
    assert_eq!(check_all(&b, "after a rollback").await, during);

    // Committed rows and entries survive SIGKILL; nothing else appears.
    drop((a, b));
    server.restart().expect("the server restarts");
    let c = server.connect("postgres").await;
    assert_eq!(check_all(&c, "after a crash").await, during);
    assert_eq!(count(&c, "SELECT count(*) FROM docs WHERE doc ? 'extra'").await, 21);
}
