//! Privileges enforced over the network: a LOGIN role without SELECT on
//! a table gets 42501 for reading it, and one without CONNECT on a
//! database is refused at connection time with FATAL 42501, as in
//! PostgreSQL.

mod common;

use common::TestServer;

/// (severity, SQLSTATE, message, detail) of a failed connection or statement.
fn db_error(e: &tokio_postgres::Error) -> (String, String, String, String) {
    match e.as_db_error() {
        Some(d) => (d.severity().to_string(), d.code().code().to_string(), d.message().to_string(), d.detail().unwrap_or("").to_string()),
        None => ("-".into(), "-".into(), e.to_string(), String::new()),
    }
}

async fn connect_as(server: &TestServer, user: &str, db: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let mut config = server.config(db);
    config.user(user);
    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

#[tokio::test]
async fn table_and_database_privileges_are_enforced() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin
        .batch_execute(
            "CREATE ROLE priv_login LOGIN; CREATE TABLE secret (x int); INSERT INTO secret VALUES (1); \
             CREATE TABLE open_t (x int); GRANT SELECT ON open_t TO priv_login",
        )
        .await
        .unwrap();
    admin.batch_execute("CREATE DATABASE closed_db").await.unwrap();

    let alice = connect_as(&server, "priv_login", "postgres").await.unwrap();
    let e = alice.query("SELECT * FROM secret", &[]).await.unwrap_err();
    let (sev, code, msg, _) = db_error(&e);
    assert_eq!((sev.as_str(), code.as_str(), msg.as_str()), ("ERROR", "42501", "permission denied for table secret"));
    assert_eq!(alice.query("SELECT * FROM open_t", &[]).await.unwrap().len(), 0);

    // COPY and EXPLAIN are checked too: COPY TO as a read, COPY FROM as an
    // insert (refused before any data is sent), EXPLAIN as its statement.
    for sql in ["COPY secret TO STDOUT", "EXPLAIN SELECT * FROM secret", "EXPLAIN ANALYZE SELECT * FROM secret"] {
        let e = alice.simple_query(sql).await.unwrap_err();
        assert_eq!(db_error(&e).1, "42501", "{sql}");
    }
    // (On a connection of its own: the client leaves the failed COPY's
    // extended-protocol exchange without a Sync.)
    let copier = connect_as(&server, "priv_login", "postgres").await.unwrap();
    let e = copier.copy_in::<_, bytes::Bytes>("COPY open_t FROM STDIN").await.err().expect("COPY FROM refused");
    assert_eq!(db_error(&e).2, "permission denied for table open_t");
    drop(copier);

    // A prepared statement planned while allowed is checked again when run.
    let stmt = alice.prepare("SELECT * FROM open_t").await.unwrap();
    admin.batch_execute("REVOKE SELECT ON open_t FROM priv_login").await.unwrap();
    let e = alice.query(&stmt, &[]).await.unwrap_err();
    assert_eq!(db_error(&e).1, "42501");

    // CONNECT is PUBLIC's by default; without it the connection fails.
    connect_as(&server, "priv_login", "closed_db").await.unwrap();
    admin.batch_execute("REVOKE CONNECT ON DATABASE closed_db FROM PUBLIC").await.unwrap();
    let e = connect_as(&server, "priv_login", "closed_db").await.err().expect("connection refused");
    assert_eq!(
        db_error(&e),
        ("FATAL".into(), "42501".into(), "permission denied for database \"closed_db\"".into(), "User does not have CONNECT privilege.".into())
    );
    // Superusers connect regardless.
    connect_as(&server, "postgres", "closed_db").await.unwrap();
}
