//! The built-in PL/pgSQL profiler through a real client: with
//! `tusk.plpgsql_profile` on, `tusk_plpgsql_profile` counts each executed
//! statement against its function's line (calls, source line; times only
//! checked to be there, never for their size); off, nothing is counted;
//! `tusk_plpgsql_profile_reset()` clears the counts. And the cache of
//! PL/pgSQL's simple expressions follows catalog changes, committed or
//! made by the transaction itself.

mod common;

use common::TestServer;
use tokio_postgres::Client;

/// (line, source, calls) of `function`'s counted lines, in line order.
async fn profile(c: &Client, function: &str) -> Vec<(i32, String, i64)> {
    c.query("SELECT line, source, calls, total_time >= max_time AND max_time >= 0 FROM tusk_plpgsql_profile WHERE function = $1 ORDER BY line", &[&function])
        .await
        .expect("profile view")
        .iter()
        .map(|r| {
            assert!(r.get::<_, bool>(3), "total_time below max_time");
            (r.get(0), r.get::<_, String>(1), r.get(2))
        })
        .collect()
}

#[tokio::test]
async fn profiler_counts_statements_per_line_while_on() {
    let server = TestServer::start();
    let c = server.connect("postgres").await;
    c.batch_execute(
        "CREATE FUNCTION looper(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  s int := 0;
BEGIN
  FOR i IN 1 .. n LOOP
    IF i % 2 = 0 THEN
      s := s + i;
    END IF;
  END LOOP;
  RETURN s;
END $$;
CREATE TABLE t (id int, at timestamptz);
CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.at := now();
  RETURN NEW;
END $$;
CREATE TRIGGER t_stamp BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION stamp();",
    )
    .await
    .unwrap();

    // Off (the default): nothing counted.
    c.execute("SELECT looper(10)", &[]).await.unwrap();
    assert!(profile(&c, "looper(integer)").await.is_empty());

    c.batch_execute("SET tusk.plpgsql_profile = on").await.unwrap();
    let r: i32 = c.query_one("SELECT looper(10)", &[]).await.unwrap().get(0);
    assert_eq!(r, 30);
    c.execute("SELECT looper(4)", &[]).await.unwrap();
    assert_eq!(
        profile(&c, "looper(integer)").await,
        vec![
            (5, "  FOR i IN 1 .. n LOOP".to_string(), 2),
            (6, "    IF i % 2 = 0 THEN".to_string(), 14),
            (7, "      s := s + i;".to_string(), 7),
            (10, "  RETURN s;".to_string(), 2),
        ]
    );

    // A trigger function counts once per row.
    c.execute("INSERT INTO t(id) SELECT g FROM generate_series(1, 5) g", &[]).await.unwrap();
    assert_eq!(profile(&c, "stamp()").await, vec![(3, "  NEW.at := now();".to_string(), 5), (4, "  RETURN NEW;".to_string(), 5)]);
    let stamped: i64 = c.query_one("SELECT count(*) FROM t WHERE at IS NOT NULL", &[]).await.unwrap().get(0);
    assert_eq!(stamped, 5);

    // The counts are the server's: another session sees them.
    let other = server.connect("postgres").await;
    assert_eq!(profile(&other, "stamp()").await.len(), 2);

    // Reset clears them; off again, nothing more is counted.
    c.execute("SELECT tusk_plpgsql_profile_reset()", &[]).await.unwrap();
    assert!(profile(&c, "looper(integer)").await.is_empty());
    c.batch_execute("SET tusk.plpgsql_profile = off").await.unwrap();
    c.execute("SELECT looper(3)", &[]).await.unwrap();
    assert!(profile(&c, "looper(integer)").await.is_empty());

    // A replaced function's old lines go.
    c.batch_execute("SET tusk.plpgsql_profile = on").await.unwrap();
    c.execute("SELECT looper(2)", &[]).await.unwrap();
    c.batch_execute("CREATE OR REPLACE FUNCTION looper(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN n; END $$")
        .await
        .unwrap();
    c.execute("SELECT looper(2)", &[]).await.unwrap();
    assert_eq!(profile(&c, "looper(integer)").await, vec![(1, " BEGIN RETURN n; END ".to_string(), 1)]);
}

#[tokio::test]
async fn simple_expressions_follow_catalog_changes() {
    let server = TestServer::start();
    let c = server.connect("postgres").await;
    c.batch_execute(
        "CREATE FUNCTION base() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION outer_fn() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int;
BEGIN
  x := base() + 10;
  RETURN x;
END $$;",
    )
    .await
    .unwrap();
    let get = |row: tokio_postgres::Row| row.get::<_, i32>(0);
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 11);
    // committed DDL
    c.batch_execute("CREATE OR REPLACE FUNCTION base() RETURNS int LANGUAGE sql AS 'SELECT 2'").await.unwrap();
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 12);
    // DDL of the transaction itself, then its rollback
    c.batch_execute("BEGIN").await.unwrap();
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 12);
    c.batch_execute("CREATE OR REPLACE FUNCTION base() RETURNS int LANGUAGE sql AS 'SELECT 3'").await.unwrap();
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 13);
    c.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 12);
    // another session's committed DDL
    let other = server.connect("postgres").await;
    other.batch_execute("CREATE OR REPLACE FUNCTION base() RETURNS int LANGUAGE sql AS 'SELECT 4'").await.unwrap();
    assert_eq!(get(c.query_one("SELECT outer_fn()", &[]).await.unwrap()), 14);
}
