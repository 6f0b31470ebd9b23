//! Authentication and TLS through real clients: roles with passwords,
//! pg_hba.conf rules for scram-sha-256, md5, password, reject and trust
//! checked with tokio-postgres (which speaks SCRAM and md5), NOLOGIN and
//! connection limits, malformed SCRAM messages from a raw socket, TLS with
//! psql (`sslmode=require`, SCRAM-SHA-256-PLUS with
//! `channel_binding=require`) and `--ssl off`, which refuses SSLRequest
//! with 'N' as PostgreSQL does with ssl = off.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::TestServer;

/// (severity, SQLSTATE, message) of a failed connection or statement.
fn db_error(e: &tokio_postgres::Error) -> (String, String, String) {
    match e.as_db_error() {
        Some(d) => (d.severity().to_string(), d.code().code().to_string(), d.message().to_string()),
        None => ("-".into(), "-".into(), e.to_string()),
    }
}

async fn connect_as(server: &TestServer, user: &str, password: Option<&str>, db: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let mut config = server.config(db);
    config.user(user);
    if let Some(p) = password {
        config.password(p);
    }
    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn current_user(server: &TestServer, user: &str, password: Option<&str>) -> Result<String, (String, String, String)> {
    let c = connect_as(server, user, password, "postgres").await.map_err(|e| db_error(&e))?;
    let row = c.query_one("SELECT current_user::text", &[]).await.map_err(|e| db_error(&e))?;
    Ok(row.get(0))
}

fn fatal(code: &str, message: &str) -> Result<String, (String, String, String)> {
    Err(("FATAL".into(), code.into(), message.into()))
}

fn password_failed(user: &str) -> Result<String, (String, String, String)> {
    fatal("28P01", &format!("password authentication failed for user \"{user}\""))
}

/// Rewrites pg_hba.conf and has the server re-read it (`tusk reload`),
/// waiting until its log says it did.
fn set_hba(server: &TestServer, text: &str) {
    let log_lines = |s: &TestServer| std::fs::read_to_string(s.log_path()).unwrap_or_default().matches("reloaded pg_hba.conf").count();
    let before = log_lines(server);
    std::fs::write(server.data_dir().join("pg_hba.conf"), text).unwrap();
    let status = Command::new(TestServer::binary()).args(["reload", "--data-dir"]).arg(server.data_dir()).output().unwrap();
    assert!(status.status.success(), "tusk reload: {}", String::from_utf8_lossy(&status.stderr));
    let deadline = Instant::now() + Duration::from_secs(10);
    while log_lines(server) == before {
        assert!(Instant::now() < deadline, "pg_hba.conf was not reloaded:\n{}", server.log_tail());
        std::thread::sleep(Duration::from_millis(20));
    }
}

const HBA: &str = "
# postgres keeps trust, so the harness's probes and admin connections work.
host    all         postgres                     127.0.0.1/32  trust
host    all         scram_user                   127.0.0.1/32  scram-sha-256
host    all         md5_user,md5scram_user       127.0.0.1/32  md5
host    all         pw_user                      127.0.0.1/32  password
host    all         rejected                     127.0.0.1/32  reject
hostssl all         ssl_user                     127.0.0.1/32  scram-sha-256
host    postgres    all                          127.0.0.1/32  scram-sha-256
";

#[tokio::test]
async fn passwords_methods_and_rules() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin
        .batch_execute(
            "CREATE ROLE scram_user LOGIN PASSWORD 'scram-pw';
             SET password_encryption = 'md5';
             CREATE USER md5_user PASSWORD 'md5-pw';
             RESET password_encryption;
             CREATE USER md5scram_user PASSWORD 'md5scram-pw';
             CREATE USER pw_user PASSWORD 'clear pw';
             CREATE ROLE nologin_user PASSWORD 'nologin-pw';
             CREATE USER nopw_user;
             CREATE USER expired_user PASSWORD 'old-pw' VALID UNTIL '2000-01-01';
             CREATE USER limited_user PASSWORD 'limited-pw' CONNECTION LIMIT 1;
             CREATE USER rejected PASSWORD 'x';
             CREATE USER ssl_user PASSWORD 'ssl-pw';
             CREATE USER unicode_user PASSWORD 'pässwörd ①'",
        )
        .await
        .unwrap();
    // Verifiers, not passwords: md5 + 32 hex digits, or a SCRAM-SHA-256 secret.
    let stored: Vec<(String, String)> = admin
        .query("SELECT rolname::text, rolpassword FROM pg_authid WHERE rolname IN ('scram_user', 'md5_user') ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(stored[0].0, "md5_user");
    assert!(stored[0].1.starts_with("md5") && stored[0].1.len() == 35, "{stored:?}");
    assert_eq!(stored[1].0, "scram_user");
    assert!(stored[1].1.starts_with("SCRAM-SHA-256$4096:") && !stored[1].1.contains("scram-pw"), "{stored:?}");

    // The default rules trust this machine: no password needed yet.
    assert_eq!(current_user(&server, "scram_user", None).await, Ok("scram_user".into()));

    set_hba(&server, HBA);
    // scram-sha-256.
    assert_eq!(current_user(&server, "scram_user", Some("scram-pw")).await, Ok("scram_user".into()));
    assert_eq!(current_user(&server, "scram_user", Some("wrong")).await, password_failed("scram_user"));
    assert_eq!(current_user(&server, "unicode_user", Some("pässwörd ①")).await, Ok("unicode_user".into()));
    assert_eq!(current_user(&server, "unicode_user", Some("passwörd ①")).await, password_failed("unicode_user"));
    // md5 with an md5 verifier, and with a SCRAM one (PostgreSQL then runs SCRAM).
    assert_eq!(current_user(&server, "md5_user", Some("md5-pw")).await, Ok("md5_user".into()));
    assert_eq!(current_user(&server, "md5_user", Some("md5-pX")).await, password_failed("md5_user"));
    assert_eq!(current_user(&server, "md5scram_user", Some("md5scram-pw")).await, Ok("md5scram_user".into()));
    assert_eq!(current_user(&server, "md5scram_user", Some("nope")).await, password_failed("md5scram_user"));
    // password (in clear).
    assert_eq!(current_user(&server, "pw_user", Some("clear pw")).await, Ok("pw_user".into()));
    assert_eq!(current_user(&server, "pw_user", Some("clear")).await, password_failed("pw_user"));
    // Nothing tells a missing role, a role without a password or with an
    // expired one from a wrong password.
    assert_eq!(current_user(&server, "ghost", Some("x")).await, password_failed("ghost"));
    assert_eq!(current_user(&server, "nopw_user", Some("x")).await, password_failed("nopw_user"));
    assert_eq!(current_user(&server, "expired_user", Some("old-pw")).await, password_failed("expired_user"));
    // NOLOGIN is checked after the password.
    assert_eq!(current_user(&server, "nologin_user", Some("wrong")).await, password_failed("nologin_user"));
    assert_eq!(current_user(&server, "nologin_user", Some("nologin-pw")).await, fatal("28000", "role \"nologin_user\" is not permitted to log in"));
    // reject, and no matching line.
    assert_eq!(
        current_user(&server, "rejected", Some("x")).await,
        fatal("28000", "pg_hba.conf rejects connection for host \"127.0.0.1\", user \"rejected\", database \"postgres\", no encryption")
    );
    let e = connect_as(&server, "ghost", Some("x"), "template1").await.err().unwrap();
    assert_eq!(
        db_error(&e),
        ("FATAL".into(), "28000".into(), "no pg_hba.conf entry for host \"127.0.0.1\", user \"ghost\", database \"template1\", no encryption".into())
    );
    // hostssl does not match a connection without TLS.
    let e = connect_as(&server, "ssl_user", Some("ssl-pw"), "template1").await.err().unwrap();
    assert_eq!(db_error(&e).1, "28000");

    // CONNECTION LIMIT counts the role's sessions (superusers are exempt).
    let first = connect_as(&server, "limited_user", Some("limited-pw"), "postgres").await.unwrap();
    assert_eq!(current_user(&server, "limited_user", Some("limited-pw")).await, fatal("53300", "too many connections for role \"limited_user\""));
    drop(first);

    // A password change takes effect at once, and ALTER ROLE ... NOLOGIN too.
    admin.batch_execute("ALTER ROLE scram_user PASSWORD 'new-pw'").await.unwrap();
    assert_eq!(current_user(&server, "scram_user", Some("scram-pw")).await, password_failed("scram_user"));
    assert_eq!(current_user(&server, "scram_user", Some("new-pw")).await, Ok("scram_user".into()));
    admin.batch_execute("ALTER ROLE scram_user NOLOGIN").await.unwrap();
    assert_eq!(current_user(&server, "scram_user", Some("new-pw")).await, fatal("28000", "role \"scram_user\" is not permitted to log in"));
    admin.batch_execute("ALTER ROLE scram_user LOGIN").await.unwrap();

    // A broken pg_hba.conf is not loaded: the rules in force stay.
    std::fs::write(server.data_dir().join("pg_hba.conf"), "host all all all no-such-method\n").unwrap();
    let out = Command::new(TestServer::binary()).args(["reload", "--data-dir"]).arg(server.data_dir()).output().unwrap();
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.log_tail().contains("pg_hba.conf was not reloaded") {
        assert!(Instant::now() < deadline, "no warning about the broken file:\n{}", server.log_tail());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(server.log_tail().contains("invalid authentication method \"no-such-method\", line 1"), "{}", server.log_tail());
    assert_eq!(current_user(&server, "scram_user", Some("wrong")).await, password_failed("scram_user"));
    assert_eq!(current_user(&server, "scram_user", Some("new-pw")).await, Ok("scram_user".into()));
    set_hba(&server, HBA);

    // Roles and their passwords survive a restart (and the rules are read at start).
    let mut server = server;
    drop(admin);
    server.restart().unwrap();
    assert_eq!(current_user(&server, "scram_user", Some("new-pw")).await, Ok("scram_user".into()));
    assert_eq!(current_user(&server, "md5_user", Some("md5-pw")).await, Ok("md5_user".into()));
    assert_eq!(current_user(&server, "ghost", Some("x")).await, password_failed("ghost"));
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    assert!(!log.contains("panicked"), "the server panicked:\n{}", server.log_tail());
}

#[tokio::test]
async fn concurrent_role_ddl_never_makes_two_roles_of_one_name() {
    let server = TestServer::start();
    let a = server.connect("postgres").await;
    let b = server.connect("postgres").await;
    // READ COMMITTED: the second CREATE waits for the first, then sees it.
    a.batch_execute("BEGIN; CREATE ROLE race_rc").await.unwrap();
    let second = tokio::spawn(async move {
        let r = b.batch_execute("CREATE ROLE race_rc").await;
        (b, r)
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    a.batch_execute("COMMIT").await.unwrap();
    let (b, r) = second.await.unwrap();
    assert_eq!(db_error(&r.unwrap_err()).1, "42710");
    // REPEATABLE READ: a snapshot older than the committed role cannot create it again.
    b.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1").await.unwrap();
    a.batch_execute("CREATE ROLE race_rr").await.unwrap();
    let e = b.batch_execute("CREATE ROLE race_rr").await.unwrap_err();
    assert!(["40001", "42710"].contains(&db_error(&e).1.as_str()), "{e:?}");
    b.batch_execute("ROLLBACK").await.unwrap();
    // Rename and drop free the name for reuse.
    a.batch_execute("ALTER ROLE race_rr RENAME TO race_rr2; CREATE ROLE race_rr; DROP ROLE race_rc; CREATE ROLE race_rc").await.unwrap();
    let n: i64 = a.query_one("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'race%'", &[]).await.unwrap().get(0);
    assert_eq!(n, 3);
}

// ---------------------------------------------------------------- raw protocol

fn packet(code: u32, rest: &[u8]) -> Vec<u8> {
    let mut v = ((rest.len() + 8) as u32).to_be_bytes().to_vec();
    v.extend_from_slice(&code.to_be_bytes());
    v.extend_from_slice(rest);
    v
}

fn startup(user: &str) -> Vec<u8> {
    packet(196_608, format!("user\0{user}\0database\0postgres\0\0").as_bytes())
}

fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

const SSL_REQUEST: u32 = 80_877_103;

/// Everything the server sends until it closes (or goes quiet).
fn read_all(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// The (tag, body) messages of a server byte stream.
fn messages(mut b: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while b.len() >= 5 {
        let len = u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
        if b.len() < 1 + len {
            break;
        }
        out.push((b[0], b[5..1 + len].to_vec()));
        b = &b[1 + len..];
    }
    out
}

/// The severity, code and message of an ErrorResponse body.
fn error_fields(body: &[u8]) -> (String, String, String, String) {
    let mut f = std::collections::HashMap::new();
    for part in body.split(|&c| c == 0).filter(|p| !p.is_empty()) {
        f.insert(part[0], String::from_utf8_lossy(&part[1..]).into_owned());
    }
    let get = |k: u8| f.get(&k).cloned().unwrap_or_default();
    (get(b'S'), get(b'C'), get(b'M'), get(b'D'))
}

/// Sends a startup packet for `user` (whose pg_hba.conf line asks for
/// scram-sha-256), then `replies` as SASL messages, and returns the error
/// the server ends with.
fn scram_attempt(port: u16, user: &str, replies: &[Vec<u8>]) -> (String, String, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&startup(user)).unwrap();
    for r in replies {
        let _ = s.write_all(&message(b'p', r));
    }
    let got = messages(&read_all(&mut s));
    // AuthenticationSASL offers SCRAM-SHA-256 (no PLUS without TLS).
    assert_eq!(got.first().map(|m| (m.0, m.1.clone())), Some((b'R', [&10i32.to_be_bytes()[..], b"SCRAM-SHA-256\0\0"].concat())));
    let e = got.iter().find(|m| m.0 == b'E').unwrap_or_else(|| panic!("no error for {replies:?}: {got:?}"));
    error_fields(&e.1)
}

fn initial(mechanism: &str, data: &[u8]) -> Vec<u8> {
    let mut v = mechanism.as_bytes().to_vec();
    v.push(0);
    v.extend_from_slice(&(data.len() as i32).to_be_bytes());
    v.extend_from_slice(data);
    v
}

#[tokio::test]
async fn malformed_authentication_messages_end_only_their_connection() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin.batch_execute("CREATE USER scram_user PASSWORD 'scram-pw'").await.unwrap();
    set_hba(&server, HBA);
    // A session in a transaction that must outlive the hostile ones.
    admin.batch_execute("CREATE TABLE bystander (a int); BEGIN; INSERT INTO bystander VALUES (1)").await.unwrap();
    let port = server.port();
    let malformed = |detail: &str| ("FATAL".to_string(), "08P01".to_string(), "malformed SCRAM message".to_string(), detail.to_string());
    assert_eq!(scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"x,,n=,r=a")]), malformed("Unexpected channel-binding flag \"'x'\"."));
    assert_eq!(scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"n,,r=a")]), malformed("Expected attribute \"n\" but found \"'r'\"."));
    assert_eq!(scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"n,,n=,r=a\0")]), malformed("Message length does not match input length."));
    assert_eq!(scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"")]), malformed("The message is empty."));
    assert_eq!(scram_attempt(port, "ghost", &[initial("SCRAM-SHA-256", b"\xff\xfe")]), malformed("Unexpected channel-binding flag \"0xff\"."));
    assert_eq!(
        scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256-PLUS", b"p=tls-server-end-point,,n=,r=a")]).2,
        "client selected an invalid SASL authentication mechanism"
    );
    assert_eq!(scram_attempt(port, "scram_user", &[b"SCRAM-SHA-256".to_vec()]).2, "invalid string in message");
    let mut lying = b"SCRAM-SHA-256\0".to_vec();
    lying.extend_from_slice(&1_000_000i32.to_be_bytes());
    assert_eq!(scram_attempt(port, "scram_user", &[lying]).2, "insufficient data left in message");
    assert_eq!(
        scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"n,,n=,r=abc"), b"c=biws,r=abc,p=AAAA".to_vec()]),
        malformed("Malformed proof in client-final-message.")
    );
    assert_eq!(
        scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"n,,n=,r=abc"), b"c=xxxx,r=abc".to_vec()]).2,
        "unexpected SCRAM channel-binding attribute in client-final-message"
    );
    let e = scram_attempt(port, "scram_user", &[initial("SCRAM-SHA-256", b"n,,n=,r=abc"), b"c=biws,r=abd,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".to_vec()]);
    assert_eq!((e.2.as_str(), e.3.as_str()), ("invalid SCRAM response", "Nonce does not match."));
    // Another message type where a SASL response belongs.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&startup("scram_user")).unwrap();
    s.write_all(&message(b'Q', b"SELECT 1\0")).unwrap();
    let got = messages(&read_all(&mut s));
    let e = got.iter().find(|m| m.0 == b'E').unwrap();
    assert_eq!(error_fields(&e.1).2, "expected SASL response, got message type 81");
    // A client that hangs up at the password prompt (as psql does) just goes.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&startup("scram_user")).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let got = messages(&read_all(&mut s));
    assert_eq!(got.len(), 1, "{got:?}");
    // An oversized authentication message loses the framing: closed.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&startup("scram_user")).unwrap();
    let mut huge = vec![b'p'];
    huge.extend_from_slice(&0x7fff_0000u32.to_be_bytes());
    s.write_all(&huge).unwrap();
    let got = messages(&read_all(&mut s));
    assert_eq!(got.len(), 1, "{got:?}");

    // Everyone else carried on.
    admin.batch_execute("INSERT INTO bystander VALUES (2); COMMIT").await.unwrap();
    let n: i64 = admin.query_one("SELECT count(*) FROM bystander", &[]).await.unwrap().get(0);
    assert_eq!(n, 2);
    assert_eq!(current_user(&server, "scram_user", Some("scram-pw")).await, Ok("scram_user".into()));
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    assert!(!log.contains("panicked"), "the server panicked:\n{}", server.log_tail());
}

// ---------------------------------------------------------------- TLS

fn psql(conninfo: &str, password: Option<&str>, command: &str) -> (bool, String) {
    let mut cmd = Command::new("psql");
    cmd.args(["-X", "-A", "-t", conninfo, "-c", command]).env_remove("PGPASSWORD").env_remove("PGSSLMODE");
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    }
    let out = cmd.output().expect("psql runs (PostgreSQL 15's client tools are installed by ./tusk.sh)");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test]
async fn tls_with_psql_and_the_ssl_request() {
    let server = TestServer::start();
    let admin = server.connect("postgres").await;
    admin.batch_execute("CREATE USER ssl_user PASSWORD 'ssl-pw'; CREATE USER scram_user PASSWORD 'scram-pw'").await.unwrap();
    let ssl: String = admin.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    assert_eq!(ssl, "on");
    // A fresh data directory has a certificate and a key only its owner reads.
    use std::os::unix::fs::PermissionsExt;
    let key = std::fs::metadata(server.data_dir().join("server.key")).unwrap();
    assert_eq!(key.permissions().mode() & 0o077, 0);
    assert!(std::fs::read_to_string(server.data_dir().join("server.crt")).unwrap().starts_with("-----BEGIN CERTIFICATE-----"));

    let base = format!("host=127.0.0.1 port={} dbname=postgres", server.port());
    let (ok, out) = psql(&format!("{base} user=postgres sslmode=require"), None, "\\conninfo");
    assert!(ok, "{out}");
    assert!(out.contains("SSL connection (protocol: TLSv1.3"), "{out}");

    set_hba(&server, HBA);
    // SCRAM-SHA-256-PLUS: the password exchange is bound to the certificate.
    let (ok, out) = psql(&format!("{base} user=ssl_user sslmode=require channel_binding=require"), Some("ssl-pw"), "SELECT current_user");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "ssl_user");
    let (ok, out) = psql(&format!("{base} user=ssl_user sslmode=require"), Some("wrong"), "SELECT 1");
    assert!(!ok);
    assert!(out.contains("password authentication failed for user \"ssl_user\""), "{out}");
    // hostssl: the same user without TLS has no line.
    let (ok, out) = psql(&format!("host=127.0.0.1 port={} dbname=template1 user=ssl_user sslmode=disable", server.port()), Some("ssl-pw"), "SELECT 1");
    assert!(!ok);
    assert!(out.contains("no pg_hba.conf entry for host \"127.0.0.1\", user \"ssl_user\", database \"template1\", no encryption"), "{out}");
    let (ok, out) = psql(&format!("{base} user=scram_user sslmode=require"), Some("scram-pw"), "SELECT current_user");
    assert!(ok && out.trim() == "scram_user", "{out}");

    // The SSLRequest is answered 'S'; bytes sent along with it were not
    // encrypted and end the connection (CVE-2021-23214).
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(&packet(SSL_REQUEST, b"")).unwrap();
    let mut answer = [0u8];
    s.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], b'S');
    // Not a TLS handshake: the server gives up on this connection only.
    s.write_all(b"\x16\x03\x01\x00\x05hello, not really").unwrap();
    let _ = read_all(&mut s);
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(&[packet(SSL_REQUEST, b""), startup("postgres")].concat()).unwrap();
    let got = read_all(&mut s);
    assert_eq!(got.first(), Some(&b'S'));
    let e = messages(&got[1..]);
    assert_eq!(e.len(), 1, "{got:?}");
    let (severity, code, message, _) = error_fields(&e[0].1);
    assert_eq!((severity.as_str(), code.as_str(), message.as_str()), ("FATAL", "08P01", "received unencrypted data after SSL request"));

    let (ok, out) = psql(&format!("{base} user=postgres sslmode=require"), None, "SELECT 42");
    assert!(ok && out.trim() == "42", "{out}");
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    assert!(!log.contains("panicked"), "the server panicked:\n{}", server.log_tail());
}

#[tokio::test]
async fn ssl_off_refuses_the_ssl_request() {
    let server = TestServer::builder().args(["--ssl", "off"]).start();
    let admin = server.connect("postgres").await;
    let ssl: String = admin.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    assert_eq!(ssl, "off");
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(&packet(SSL_REQUEST, b"")).unwrap();
    let mut answer = [0u8];
    s.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], b'N');
    let base = format!("host=127.0.0.1 port={} dbname=postgres user=postgres", server.port());
    let (ok, out) = psql(&format!("{base} sslmode=require"), None, "SELECT 1");
    assert!(!ok);
    assert!(out.contains("server does not support SSL, but SSL was required"), "{out}");
    // sslmode=prefer falls back to a plain connection.
    let (ok, out) = psql(&format!("{base} sslmode=prefer"), None, "\\conninfo");
    assert!(ok && !out.contains("SSL connection"), "{out}");
}

/// One TLS handshake attempt with `openssl s_client -starttls postgres`
/// (which sends the SSLRequest first): whether it completed, and what
/// s_client printed (the negotiated protocol and cipher).
fn handshake(port: u16, args: &[&str]) -> (bool, String) {
    let out = Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}"), "-starttls", "postgres", "-brief"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("openssl runs (Debian's openssl package)");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (text.contains("CONNECTION ESTABLISHED"), text)
}

/// What a TLS scanner (sslyze --starttls=postgres) checks, done with
/// openssl: the server offers TLS 1.2 and 1.3 only, and with TLS 1.2 only
/// forward-secret AEAD suites; every legacy protocol and every weak family
/// of ciphers (CBC, RC4, 3DES, NULL, anonymous, export, static RSA key
/// exchange) is refused.
#[test]
fn tls_offers_only_modern_protocols_and_strong_ciphers() {
    let server = TestServer::start();
    let port = server.port();
    let (ok, out) = handshake(port, &["-tls1_3"]);
    assert!(ok && out.contains("Protocol version: TLSv1.3"), "{out}");
    let (ok, out) = handshake(port, &["-tls1_2"]);
    assert!(ok && out.contains("Protocol version: TLSv1.2"), "{out}");
    assert!(out.contains("ECDHE") && (out.contains("GCM") || out.contains("CHACHA20")), "TLS 1.2 suite is not ECDHE+AEAD: {out}");
    // Legacy protocols (OpenSSL's security level 0 lets the client try them).
    for proto in ["-tls1", "-tls1_1"] {
        let (ok, out) = handshake(port, &[proto, "-cipher", "ALL:@SECLEVEL=0"]);
        assert!(!ok, "{proto} was accepted: {out}");
    }
    // Weak cipher families, each offered alone over TLS 1.2 (those this
    // OpenSSL can still offer: 3.0 dropped RC4, DES, EXPORT, SEED, IDEA).
    let mut tried = 0;
    for weak in ["aNULL", "eNULL", "EXPORT", "RC4", "3DES", "DES", "MD5", "kRSA", "CBC", "SHA1", "CAMELLIA", "ARIA", "PSK", "SEED", "IDEA"] {
        let list = format!("{weak}:@SECLEVEL=0");
        let offerable = Command::new("openssl").args(["ciphers", "-tls1_2", &list]).output().is_ok_and(|o| o.status.success());
        if !offerable {
            continue;
        }
        tried += 1;
        let (ok, out) = handshake(port, &["-tls1_2", "-cipher", &list]);
        assert!(!ok, "weak TLS 1.2 cipher family {weak} was accepted: {out}");
        assert!(!out.contains("no cipher match"), "the client offered nothing for {weak}: {out}");
    }
    assert!(tried >= 6, "only {tried} weak cipher families could be offered by this openssl");
    // The server stays up for everyone else.
    let (ok, out) = handshake(port, &["-tls1_3"]);
    assert!(ok, "{out}");
}
