//! LISTEN / NOTIFY through a real client: notifications reach listeners as
//! NotificationResponse messages (tokio-postgres's AsyncMessage) at the
//! notifying transaction's commit only, once per distinct (channel,
//! payload), in commit order, only within the database, and while the
//! listener sits idle without running a query.
//!
//! That something is NOT delivered is shown without waiting on a clock: a
//! later notification ("a sentinel") arrives first, and notifications come
//! in commit order.

mod common;

use std::time::Duration;

use common::TestServer;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

/// (channel, payload, pid of the notifying session)
type Note = (String, String, i32);

/// A session whose notifications are collected as they arrive.
struct Session {
    client: Client,
    notes: mpsc::UnboundedReceiver<Note>,
    pid: i32,
}

async fn open(config: &Config) -> Session {
    let (client, mut connection) = config.connect(NoTls).await.expect("connect");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    let _ = tx.send((n.channel().to_string(), n.payload().to_string(), n.process_id()));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            }
        }
    });
    let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get(0);
    Session { client, notes: rx, pid }
}

impl Session {
    async fn run(&self, sql: &str) {
        if let Err(e) = self.client.batch_execute(sql).await {
            panic!("{sql}: {e:?}");
        }
    }

    /// The next notification; fails the test if none comes in a long while.
    async fn next(&mut self) -> Note {
        match tokio::time::timeout(Duration::from_secs(30), self.notes.recv()).await {
            Ok(Some(n)) => n,
            Ok(None) => panic!("the connection closed"),
            Err(_) => panic!("no notification arrived"),
        }
    }

    /// The payloads of the next `n` notifications.
    async fn payloads(&mut self, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(self.next().await.1);
        }
        out
    }

    /// Nothing arrived so far (after a statement of this session completed,
    /// anything sent before its ReadyForQuery has been seen).
    fn nothing_yet(&mut self) -> bool {
        self.notes.try_recv().is_err()
    }

    async fn channels(&self) -> Vec<String> {
        let rows = self.client.query("SELECT pg_listening_channels()", &[]).await.unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    }
}

async fn sessions(server: &TestServer, n: usize) -> Vec<Session> {
    let config = server.config("postgres");
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(open(&config).await);
    }
    out
}

#[tokio::test]
async fn delivered_at_commit_only() {
    let server = TestServer::start();
    let mut s = sessions(&server, 3).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let (sender, other) = rest.split_first_mut().unwrap();
    let other = &other[0];
    listener.run("LISTEN ch").await;
    sender.run("BEGIN; NOTIFY ch, 'in transaction'").await;
    other.run("NOTIFY ch, 'sentinel'").await;
    let n = listener.next().await;
    assert_eq!(n, ("ch".into(), "sentinel".into(), other.pid));
    sender.run("COMMIT").await;
    let n = listener.next().await;
    assert_eq!(n, ("ch".into(), "in transaction".into(), sender.pid));
    // Extended protocol: a notification with parameters, sent at Sync.
    sender.client.execute("SELECT pg_notify($1, $2)", &[&"ch", &"extended"]).await.unwrap();
    assert_eq!(listener.next().await.1, "extended");
}

#[tokio::test]
async fn rolled_back_notifications_are_never_sent() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("LISTEN ch").await;
    sender.run("BEGIN; NOTIFY ch, 'rolled back'; ROLLBACK").await;
    sender
        .run(
            "BEGIN; NOTIFY ch, 'kept'; SAVEPOINT s; NOTIFY ch, 'undone'; SELECT pg_notify('ch', 'undone too'); \
             ROLLBACK TO SAVEPOINT s; NOTIFY ch, 'after'; \
             SAVEPOINT s2; NOTIFY ch, 'released'; RELEASE SAVEPOINT s2; COMMIT",
        )
        .await;
    // A statement that fails inside a savepoint takes its notifications along.
    sender.run("BEGIN; SAVEPOINT s; NOTIFY ch, 'failed'").await;
    assert!(sender.client.batch_execute("SELECT 1/0").await.is_err());
    sender.run("ROLLBACK TO SAVEPOINT s; COMMIT").await;
    // And one failing at the end of an implicit block.
    assert!(sender.client.batch_execute("NOTIFY ch, 'implicit'; SELECT 1/0").await.is_err());
    sender.run("NOTIFY ch, 'end'").await;
    assert_eq!(listener.payloads(4).await, ["kept", "after", "released", "end"]);
}

#[tokio::test]
async fn duplicates_within_a_transaction_fold() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("LISTEN ch; LISTEN ch2").await;
    sender
        .run(
            "BEGIN; NOTIFY ch, 'a'; NOTIFY ch, 'b'; NOTIFY ch, 'a'; NOTIFY ch; NOTIFY ch; \
             SELECT pg_notify('ch', 'b'); SELECT pg_notify('ch', NULL); NOTIFY ch2, 'a'; \
             SAVEPOINT s; NOTIFY ch, 'a'; NOTIFY ch, 'c'; RELEASE SAVEPOINT s; COMMIT",
        )
        .await;
    let got: Vec<(String, String)> = {
        let mut v = Vec::new();
        for _ in 0..5 {
            let n = listener.next().await;
            v.push((n.0, n.1));
        }
        v
    };
    let want: Vec<(String, String)> = [("ch", "a"), ("ch", "b"), ("ch", ""), ("ch2", "a"), ("ch", "c")]
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    assert_eq!(got, want);
    // Many in one transaction, with a repeat of the first: still once each.
    sender
        .run("BEGIN; SELECT pg_notify('ch', 'msg' || s) FROM generate_series(1, 100) s; SELECT pg_notify('ch', 'msg1'); COMMIT")
        .await;
    let want: Vec<String> = (1..=100).map(|i| format!("msg{i}")).collect();
    assert_eq!(listener.payloads(100).await, want);
    // Separate transactions are not folded.
    sender.run("NOTIFY ch, 'twice'").await;
    sender.run("NOTIFY ch, 'twice'").await;
    sender.run("NOTIFY ch, 'end'").await;
    assert_eq!(listener.payloads(3).await, ["twice", "twice", "end"]);
}

#[tokio::test]
async fn commit_order_across_sessions() {
    let server = TestServer::start();
    let mut s = sessions(&server, 3).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let (first, second) = (&rest[0], &rest[1]);
    listener.run("LISTEN ch").await;
    first.run("BEGIN; NOTIFY ch, 'first sent'").await;
    second.run("BEGIN; NOTIFY ch, 'second sent'").await;
    second.run("COMMIT").await;
    first.run("COMMIT").await;
    let a = listener.next().await;
    let b = listener.next().await;
    assert_eq!(a, ("ch".into(), "second sent".into(), second.pid));
    assert_eq!(b, ("ch".into(), "first sent".into(), first.pid));
}

#[tokio::test]
async fn listen_takes_effect_at_commit_and_sessions_hear_themselves() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("BEGIN; LISTEN ch").await;
    assert!(listener.channels().await.is_empty(), "not listening before the commit");
    sender.run("NOTIFY ch, 'before the listen committed'").await;
    listener.run("COMMIT").await;
    assert_eq!(listener.channels().await, ["ch"]);
    sender.run("NOTIFY ch, 'after'").await;
    assert_eq!(listener.next().await.1, "after");
    // A session's own notification arrives before its command completes.
    listener.run("NOTIFY ch, 'self'").await;
    assert_eq!(listener.notes.try_recv().ok(), Some(("ch".into(), "self".into(), listener.pid)));
    // LISTEN and NOTIFY in one transaction: heard at its commit.
    listener.run("BEGIN; LISTEN ch3; NOTIFY ch3, 'same transaction'; COMMIT").await;
    assert_eq!(listener.notes.try_recv().ok(), Some(("ch3".into(), "same transaction".into(), listener.pid)));
    // A rolled-back LISTEN listens to nothing.
    listener.run("BEGIN; LISTEN ch4; ROLLBACK; BEGIN; SAVEPOINT s; LISTEN ch5; ROLLBACK TO SAVEPOINT s; COMMIT").await;
    assert_eq!(listener.channels().await, ["ch", "ch3"]);
}

#[tokio::test]
async fn notifications_wait_for_the_listeners_transaction_to_end() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("LISTEN ch").await;
    listener.run("BEGIN").await;
    sender.run("NOTIFY ch, 'while in a block'").await;
    listener.run("SELECT 1").await;
    assert!(listener.nothing_yet(), "delivered inside a transaction block");
    // Queued for the listener meanwhile.
    let usage: f64 = sender.client.query_one("SELECT pg_notification_queue_usage()", &[]).await.unwrap().get(0);
    assert!(usage > 0.0, "{usage}");
    listener.run("COMMIT").await;
    assert_eq!(listener.notes.try_recv().ok().map(|n| n.1), Some("while in a block".to_string()));
    let usage: f64 = sender.client.query_one("SELECT pg_notification_queue_usage()", &[]).await.unwrap().get(0);
    assert_eq!(usage, 0.0);
}

#[tokio::test]
async fn idle_listener_receives_without_querying() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("LISTEN idle").await;
    // From here on the listener sends nothing.
    for i in 0..3 {
        sender.run(&format!("NOTIFY idle, '{i}'")).await;
        let n = listener.next().await;
        assert_eq!(n, ("idle".into(), i.to_string(), sender.pid));
    }
    sender.run("BEGIN; SELECT pg_notify('idle', 'x' || i) FROM generate_series(1, 1000) i; COMMIT").await;
    let want: Vec<String> = (1..=1000).map(|i| format!("x{i}")).collect();
    assert_eq!(listener.payloads(1000).await, want);
}

#[tokio::test]
async fn unlisten_and_unlisten_all() {
    let server = TestServer::start();
    let mut s = sessions(&server, 2).await;
    let (listener, rest) = s.split_first_mut().unwrap();
    let sender = &rest[0];
    listener.run("LISTEN a; LISTEN b; LISTEN c; LISTEN a").await;
    assert_eq!(listener.channels().await, ["a", "b", "c"]);
    listener.run("UNLISTEN a").await;
    sender.run("NOTIFY a, 'no'; NOTIFY b, 'yes'").await;
    assert_eq!(listener.next().await.1, "yes");
    listener.run("UNLISTEN *").await;
    assert!(listener.channels().await.is_empty());
    listener.run("LISTEN z").await;
    sender.run("NOTIFY b, 'no'; NOTIFY c, 'no'; NOTIFY z, 'end'").await;
    assert_eq!(listener.next().await.1, "end");
    // UNLISTEN * after a LISTEN in the same transaction cancels it.
    listener.run("BEGIN; LISTEN y; UNLISTEN *; COMMIT").await;
    assert!(listener.channels().await.is_empty());
    // DISCARD ALL unlistens too.
    listener.run("LISTEN w").await;
    listener.run("DISCARD ALL").await;
    assert!(listener.channels().await.is_empty());
    // Unlistening what is not listened to is no error.
    listener.run("UNLISTEN nothing; UNLISTEN *").await;
}

#[tokio::test]
async fn other_databases_do_not_hear() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin.batch_execute("CREATE DATABASE other").await.unwrap();
    let mut here = open(&server.config("postgres")).await;
    let mut there = open(&server.config("other")).await;
    let sender_there = open(&server.config("other")).await;
    here.run("LISTEN ch").await;
    there.run("LISTEN ch").await;
    sender_there.run("NOTIFY ch, 'other database'").await;
    assert_eq!(there.next().await.1, "other database");
    admin.batch_execute("NOTIFY ch, 'this database'").await.unwrap();
    assert_eq!(here.next().await.1, "this database");
}

#[tokio::test]
async fn limits_and_errors() {
    let server = TestServer::start();
    let mut s = sessions(&server, 1).await;
    let me = &mut s[0];
    me.run("LISTEN ch").await;
    let err = |e: tokio_postgres::Error| {
        let d = e.as_db_error().expect("a database error");
        format!("{} {}", d.code().code(), d.message())
    };
    let long = "x".repeat(8000);
    let e = me.client.batch_execute(&format!("NOTIFY ch, '{long}'")).await.unwrap_err();
    assert_eq!(err(e), "22023 payload string too long");
    let e = me.client.execute("SELECT pg_notify('ch', $1)", &[&long]).await.unwrap_err();
    assert_eq!(err(e), "22023 payload string too long");
    me.client.execute("SELECT pg_notify('ch', $1)", &[&&long[1..]]).await.unwrap();
    assert_eq!(me.next().await.1.len(), 7999);
    let e = me.client.batch_execute("SELECT pg_notify('', 'x')").await.unwrap_err();
    assert_eq!(err(e), "22023 channel name cannot be empty");
    let e = me.client.batch_execute("SELECT pg_notify(NULL, 'x')").await.unwrap_err();
    assert_eq!(err(e), "22023 channel name cannot be empty");
    let e = me.client.batch_execute(&format!("SELECT pg_notify('{}', 'x')", "c".repeat(64))).await.unwrap_err();
    assert_eq!(err(e), "22023 channel name too long");
    me.client.batch_execute(&format!("SELECT pg_notify('{}', 'x')", "c".repeat(63))).await.unwrap();
    // LISTEN and NOTIFY name channels with identifiers, cut to 63 bytes.
    let long = "l".repeat(70);
    me.run(&format!("LISTEN {long}; NOTIFY {long}, 'cut'")).await;
    let n = me.next().await;
    assert_eq!((n.0.len(), n.1.as_str()), (63, "cut"));
    me.run(&format!("UNLISTEN {long}")).await;
    // Allowed in read-only transactions, as in PostgreSQL.
    me.run("BEGIN READ ONLY; NOTIFY ch, 'read only'; LISTEN ro; COMMIT").await;
    assert_eq!(me.next().await.1, "read only");
    assert_eq!(me.channels().await, ["ch", "ro"]);
    // A failed NOTIFY fails its block: nothing of it is sent.
    me.run("BEGIN; NOTIFY ch, 'lost'").await;
    assert!(me.client.batch_execute("SELECT pg_notify('', '')").await.is_err());
    me.run("COMMIT; NOTIFY ch, 'end'").await;
    assert_eq!(me.next().await.1, "end");
}

/// psql prints a notification after the command that received it, naming
/// the notifying session's process id.
#[tokio::test]
async fn psql_prints_notifications() {
    let server = TestServer::start();
    let out = std::process::Command::new("psql")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .args(["-X", "-h", server.host(), "-p", &server.port().to_string(), "-U", "postgres", "-d", "postgres"])
        .args(["-c", "LISTEN psql_ch", "-c", "NOTIFY psql_ch, 'from psql'", "-c", "SELECT pg_backend_pid() AS pid"])
        .output()
        .expect("psql runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let pid: i32 = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("pid"))
        .nth(2)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text}"));
    let want = format!("LISTEN\nNOTIFY\nAsynchronous notification \"psql_ch\" with payload \"from psql\" received from server process with PID {pid}.\n");
    assert!(text.starts_with(&want), "{text}");
}
