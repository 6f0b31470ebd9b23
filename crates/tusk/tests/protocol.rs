//! Hostile clients over raw TCP: malformed, truncated and oversized
//! messages, lying length words, unknown message types, invalid UTF-8,
//! garbage startup packets and out-of-order messages.
//!
//! Each case sends its bytes on a fresh connection and compares every
//! message the server answers, up to the end of the connection, with what
//! PostgreSQL 15 answers to the same bytes (recorded from a real server:
//! the expectations below). Either the connection gets an error and is
//! closed, or the session gets an error and carries on (then a trailing
//! `SELECT 2` answers). After every case the server must accept a new
//! connection, and a session opened before all cases, inside a
//! transaction, must still answer. Nothing may panic.
//!
//! Where PostgreSQL keeps waiting for bytes that never come (a truncated
//! message or startup packet), the client closes its side, and the server
//! must then close without a word, as PostgreSQL does.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use common::TestServer;

// ---------------------------------------------------------------- a raw client

fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn query(q: &str) -> Vec<u8> {
    let mut b = q.as_bytes().to_vec();
    b.push(0);
    msg(b'Q', &b)
}

fn startup_packet(version: u32, params: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    for (k, v) in params {
        body.extend_from_slice(k);
        body.push(0);
        body.extend_from_slice(v);
        body.push(0);
    }
    body.push(0);
    packet(&body)
}

/// A length word and a body.
fn packet(body: &[u8]) -> Vec<u8> {
    let mut v = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

fn startup() -> Vec<u8> {
    startup_packet(196_608, &[(b"user", b"postgres"), (b"database", b"postgres")])
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// One backend message, reduced to what the cases compare: the type, and
/// for ErrorResponse and NoticeResponse the severity, SQLSTATE and message.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Got {
    Msg(char),
    Error { severity: String, code: String, message: String },
    /// The one-line error of protocol 2.
    ErrorV2(String),
    /// A single byte answer to an SSL or GSS request.
    Byte(char),
}

fn parse(data: &[u8], v2: bool) -> Vec<Got> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let tag = data[i];
        if v2 && tag == b'E' {
            let text = &data[i + 1..];
            let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
            out.push(Got::ErrorV2(String::from_utf8_lossy(&text[..end]).into_owned()));
            i += 1 + end + 1;
            continue;
        }
        if data.len() - i < 5 {
            out.push(Got::Byte(tag as char));
            i += 1;
            continue;
        }
        let len = u32::from_be_bytes(data[i + 1..i + 5].try_into().unwrap()) as usize;
        let body = &data[i + 5..(i + 1 + len).min(data.len())];
        if tag == b'E' || tag == b'N' {
            let mut fields = std::collections::HashMap::new();
            for f in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
                fields.insert(f[0], String::from_utf8_lossy(&f[1..]).into_owned());
            }
            let get = |k: u8| fields.get(&k).cloned().unwrap_or_default();
            out.push(Got::Error { severity: get(b'S'), code: get(b'C'), message: get(b'M') });
        } else if !matches!(tag, b'S' | b'K' | b'R') {
            // ParameterStatus, BackendKeyData and AuthenticationOk vary; the rest is compared.
            out.push(Got::Msg(tag as char));
        }
        i += 1 + len;
    }
    out
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    // A safety net against a server that never answers: the test then
    // fails on the missing messages instead of hanging.
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// Reads until the server closes the connection (a reset counts as closed).
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return data,
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) => return data,
            Err(e) => panic!("reading from the server: {e}; got so far: {:?}", parse(&data, false)),
        }
    }
}

/// Reads until a ReadyForQuery.
fn read_to_ready(s: &mut TcpStream) -> Vec<Got> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).expect("reading from the server");
        assert!(n > 0, "the server closed the connection; got {:?}", parse(&data, false));
        data.extend_from_slice(&buf[..n]);
        let got = parse(&data, false);
        if data.len() >= 6 && data[data.len() - 6] == b'Z' {
            return got;
        }
    }
}

// ---------------------------------------------------------------- expectations

fn m(tag: char) -> Got {
    Got::Msg(tag)
}

fn error(code: &str, message: &str) -> Got {
    Got::Error { severity: "ERROR".into(), code: code.into(), message: message.into() }
}

fn fatal(code: &str, message: &str) -> Got {
    Got::Error { severity: "FATAL".into(), code: code.into(), message: message.into() }
}

/// What `SELECT 2` answers.
fn select_2() -> Vec<Got> {
    vec![m('T'), m('D'), m('C'), m('Z')]
}

struct Case {
    name: &'static str,
    /// Whether the case starts after a normal startup.
    after_startup: bool,
    /// Whether the case starts with an SSL request and its answer.
    ssl_first: bool,
    send: Vec<u8>,
    /// Close our sending side after the bytes (where PostgreSQL would wait).
    then_close: bool,
    expect: Vec<Got>,
}

fn case(name: &'static str, send: Vec<u8>, expect: Vec<Got>) -> Case {
    Case { name, after_startup: true, ssl_first: false, send, then_close: false, expect }
}

/// A case whose session goes on: `SELECT 2` and Terminate follow its bytes.
fn continues(name: &'static str, send: Vec<u8>, mut expect: Vec<Got>) -> Case {
    let send = cat(&[&send, &query("SELECT 2"), &msg(b'X', b"")]);
    expect.extend(select_2());
    Case { name, after_startup: true, ssl_first: false, send, then_close: false, expect }
}

fn cases() -> Vec<Case> {
    let violation = |m: &str| error("08P01", m);
    let utf8 = |m: &str| error("22021", m);
    let parse_s1 = |sql: &str| {
        let mut b = b"s1\0".to_vec();
        b.extend_from_slice(sql.as_bytes());
        b.extend_from_slice(b"\0\0\0");
        msg(b'P', &b)
    };
    let sync = msg(b'S', b"");
    let execute_unnamed = msg(b'E', b"\0\0\0\0\0");
    let mut v = vec![
        // ---- framing: the connection ends
        Case { then_close: true, ..case("truncated body", b"Q\0\0\0\x20SELE".to_vec(), vec![]) },
        Case { then_close: true, ..case("truncated length word", b"Q\0\0".to_vec(), vec![]) },
        case("length word too small", b"Q\0\0\0\x02".to_vec(), vec![]),
        case("length word zero", b"Q\0\0\0\0".to_vec(), vec![]),
        case("negative length word", b"Q\xff\xff\xff\xf0abc".to_vec(), vec![]),
        case("length over 1 GB", b"Q\x40\x00\x00\x10abc".to_vec(), vec![]),
        case("length just over the 1 GB limit", b"Q\x3f\xff\xff\xffSELECT 1\0".to_vec(), vec![]),
        // Within the limit but never sent: PostgreSQL waits for the bytes.
        Case { then_close: true, ..case("length of 1 GB that lies", b"Q\x3f\xff\xff\xfeSELECT 1\0".to_vec(), vec![]) },
        case("Sync longer than the small-message limit", b"S\0\0\x30\0".to_vec(), vec![]),
        case("Describe longer than the small-message limit", cat(&[b"D", &20_000u32.to_be_bytes(), b"S\0"]), vec![]),
        case("unknown message type", msg(b'z', b"abc"), vec![fatal("08P01", "invalid frontend message type 122")]),
        case("password message after startup", msg(b'p', b"pw\0"), vec![fatal("08P01", "invalid frontend message type 112")]),
        case("second StartupMessage mid-session", startup(), vec![fatal("08P01", "invalid frontend message type 0")]),
        case("Terminate with a body", msg(b'X', b"junk"), vec![]),
        // ---- bodies that do not decode: an error, the session goes on
        continues("Query without its terminator", msg(b'Q', b"SELECT 1"), vec![violation("invalid string in message"), m('Z')]),
        continues("Query with trailing bytes", msg(b'Q', b"SELECT 1\0xx"), vec![violation("invalid message format"), m('Z')]),
        continues(
            "invalid UTF-8 in a query string",
            msg(b'Q', b"SELECT '\xff\xfe'\0"),
            vec![utf8("invalid byte sequence for encoding \"UTF8\": 0xff"), m('Z')],
        ),
        continues(
            "truncated UTF-8 sequence in a query string",
            msg(b'Q', b"SELECT '\xc3('\0"),
            vec![utf8("invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"), m('Z')],
        ),
        continues(
            "invalid UTF-8 in Parse",
            cat(&[&msg(b'P', b"\0SELECT '\xff'\0\0\0"), &sync]),
            vec![utf8("invalid byte sequence for encoding \"UTF8\": 0xff"), m('Z')],
        ),
        continues(
            "Parse with more parameter types than it carries",
            cat(&[&msg(b'P', &cat(&[b"\0SELECT $1\0", &5u16.to_be_bytes(), &23u32.to_be_bytes()])), &sync]),
            vec![violation("insufficient data left in message"), m('Z')],
        ),
        continues(
            "Parse with a parameter count of 65535 and no types",
            cat(&[&msg(b'P', b"\0SELECT 1\0\xff\xff"), &sync]),
            vec![violation("insufficient data left in message"), m('Z')],
        ),
        continues(
            "Parse with 65535 parameter types",
            cat(&[&msg(b'P', &cat(&[b"\0SELECT 1\0", &u16::MAX.to_be_bytes(), &[0, 0, 0, 23].repeat(65_535)])), &sync]),
            vec![m('1'), m('Z')],
        ),
        continues(
            "Parse with an unknown type OID",
            cat(&[&msg(b'P', &cat(&[b"\0SELECT $1\0", &1u16.to_be_bytes(), &999_999u32.to_be_bytes()])), &sync]),
            vec![error("XX000", "cache lookup failed for type 999999"), m('Z')],
        ),
        continues(
            "Bind with truncated parameters",
            cat(&[&parse_s1("SELECT $1::int"), &msg(b'B', b"\0s1\0\0\0\0\x01\0\0\0\x10ab"), &sync]),
            vec![m('1'), violation("insufficient data left in message"), m('Z')],
        ),
        continues(
            "Bind with a negative parameter length other than -1",
            cat(&[&parse_s1("SELECT $1::int"), &msg(b'B', b"\0s1\0\0\0\0\x01\xff\xff\xff\xfe\0\0"), &sync]),
            vec![m('1'), violation("insufficient data left in message"), m('Z')],
        ),
        continues(
            "Bind with a format count of 65535",
            cat(&[&parse_s1("SELECT 1"), &msg(b'B', b"\0s1\0\xff\xff"), &sync]),
            vec![m('1'), violation("insufficient data left in message"), m('Z')],
        ),
        continues(
            "Bind with an unknown parameter format",
            cat(&[&parse_s1("SELECT $1::int"), &msg(b'B', b"\0s1\0\0\x01\0\x07\0\x01\0\0\0\x011\0\0"), &execute_unnamed, &sync]),
            vec![m('1'), error("22023", "unsupported format code: 7"), m('Z')],
        ),
        continues(
            "Bind with an unknown result format",
            cat(&[&parse_s1("SELECT 1"), &msg(b'B', b"\0s1\0\0\0\0\0\0\x01\0\x07"), &execute_unnamed, &sync]),
            vec![m('1'), m('2'), error("22023", "unsupported format code: 7"), m('Z')],
        ),
        continues(
            "Bind with more result formats than columns",
            cat(&[&parse_s1("SELECT 1"), &msg(b'B', b"\0s1\0\0\0\0\0\0\x02\0\0\0\0"), &execute_unnamed, &sync]),
            vec![m('1'), violation("bind message has 2 result formats but query has 1 columns"), m('Z')],
        ),
        continues(
            "invalid UTF-8 in a text parameter",
            cat(&[&parse_s1("SELECT $1::text"), &msg(b'B', b"\0s1\0\0\0\0\x01\0\0\0\x02\xff\xfe\0\0"), &sync]),
            vec![m('1'), utf8("invalid byte sequence for encoding \"UTF8\": 0xff"), m('Z')],
        ),
        continues(
            "Describe of an unknown kind",
            cat(&[&msg(b'D', b"Xnope\0"), &sync]),
            vec![violation("invalid DESCRIBE message subtype 88"), m('Z')],
        ),
        continues("Close of an unknown kind", cat(&[&msg(b'C', b"Xnope\0"), &sync]), vec![violation("invalid CLOSE message subtype 88"), m('Z')]),
        continues("Sync with a body", msg(b'S', b"xx"), vec![violation("invalid message format"), m('Z')]),
        continues("Flush with a body", cat(&[&msg(b'H', b"x"), &sync]), vec![violation("invalid message format"), m('Z')]),
        // ---- out of order: an error, the session goes on
        continues(
            "Bind to a nonexistent statement",
            cat(&[&msg(b'B', b"\0nosuch\0\0\0\0\0\0\0"), &execute_unnamed, &sync]),
            vec![error("26000", "prepared statement \"nosuch\" does not exist"), m('Z')],
        ),
        continues(
            "Bind to the unnamed statement before any Parse",
            cat(&[&msg(b'B', b"\0\0\0\0\0\0\0\0"), &sync]),
            vec![error("26000", "unnamed prepared statement does not exist"), m('Z')],
        ),
        continues(
            "Execute of a nonexistent portal",
            cat(&[&msg(b'E', b"nope\0\0\0\0\0"), &sync]),
            vec![error("34000", "portal \"nope\" does not exist"), m('Z')],
        ),
        continues(
            "messages after an error are skipped up to Sync",
            cat(&[&msg(b'E', b"nope\0\0\0\0\0"), &msg(b'B', b"xx"), &msg(b'Q', b"\xff"), &query("SELECT 3"), &sync]),
            vec![error("34000", "portal \"nope\" does not exist"), m('Z')],
        ),
        continues(
            "Describe of a nonexistent statement",
            cat(&[&msg(b'D', b"Snope\0"), &sync]),
            vec![error("26000", "prepared statement \"nope\" does not exist"), m('Z')],
        ),
        continues(
            "Describe of a nonexistent portal",
            cat(&[&msg(b'D', b"Pnope\0"), &sync]),
            vec![error("34000", "portal \"nope\" does not exist"), m('Z')],
        ),
        continues("Close of nonexistent objects", cat(&[&msg(b'C', b"Snope\0"), &msg(b'C', b"Pnope\0"), &sync]), vec![m('3'), m('3'), m('Z')]),
        continues("Sync before anything", sync.clone(), vec![m('Z')]),
        continues("Flush before anything", msg(b'H', b""), vec![]),
        continues(
            "CopyData, CopyDone and CopyFail outside COPY",
            cat(&[&msg(b'd', b"1\t2\n"), &msg(b'c', b""), &msg(b'f', b"oops\0")]),
            vec![],
        ),
        continues(
            "a bad string in a malformed query inside a transaction block",
            cat(&[&query("BEGIN"), &msg(b'Q', b"SELECT 1"), &query("SELECT 2"), &query("ROLLBACK")]),
            vec![
                m('C'),
                m('Z'),
                violation("invalid string in message"),
                m('Z'),
                error("25P02", "current transaction is aborted, commands ignored until end of transaction block"),
                m('Z'),
                m('C'),
                m('Z'),
            ],
        ),
        // ---- COPY FROM STDIN
        case(
            "a Query during COPY FROM STDIN",
            cat(&[&query("CREATE TEMP TABLE t(a int)"), &query("COPY t FROM STDIN"), &query("SELECT 2")]),
            vec![
                m('C'),
                m('Z'),
                m('G'),
                violation("unexpected message type 0x51 during COPY from stdin"),
                fatal("08P01", "terminating connection because protocol synchronization was lost"),
            ],
        ),
        case(
            "a bad length word during COPY FROM STDIN",
            cat(&[&query("CREATE TEMP TABLE t(a int)"), &query("COPY t FROM STDIN"), b"d\xff\xff\xff\xff"]),
            vec![
                m('C'),
                m('Z'),
                m('G'),
                error("08006", "unexpected EOF on client connection with an open transaction"),
                fatal("08P01", "terminating connection because protocol synchronization was lost"),
            ],
        ),
        continues(
            "invalid UTF-8 in COPY data",
            cat(&[&query("CREATE TEMP TABLE t(a int)"), &query("COPY t FROM STDIN"), &msg(b'd', b"\xff\n"), &msg(b'c', b"")]),
            vec![m('C'), m('Z'), m('G'), utf8("invalid byte sequence for encoding \"UTF8\": 0xff"), m('Z')],
        ),
        continues(
            "a malformed CopyFail",
            cat(&[&query("CREATE TEMP TABLE t(a int)"), &query("COPY t FROM STDIN"), &msg(b'f', b"abc")]),
            vec![m('C'), m('Z'), m('G'), violation("invalid string in message"), m('Z')],
        ),
        continues(
            "Sync, Flush and a CopyDone body during COPY FROM STDIN",
            cat(&[
                &query("CREATE TEMP TABLE t(a int)"),
                &query("COPY t FROM STDIN"),
                &msg(b'd', b"1\n"),
                &sync,
                &msg(b'H', b""),
                &msg(b'c', b"xx"),
            ]),
            vec![m('C'), m('Z'), m('G'), m('C'), m('Z')],
        ),
    ];
    // ---- startup packets
    let before = |name, send: Vec<u8>, expect| Case { name, after_startup: false, ssl_first: false, send, then_close: false, expect };
    let no_startup = |name, send: Vec<u8>| Case { name, after_startup: false, ssl_first: false, send, then_close: true, expect: vec![] };
    let ssl = |name, send: Vec<u8>, expect| Case { name, after_startup: false, ssl_first: true, send, then_close: false, expect };
    let ssl_request = cat(&[&8u32.to_be_bytes(), &80_877_103u32.to_be_bytes()]);
    let unencrypted = Got::Error {
        severity: "FATAL".into(),
        code: "08P01".into(),
        message: "received unencrypted data after SSL request".into(),
    };
    v.extend([
        no_startup("nothing at all", vec![]),
        no_startup("a partial startup length word", b"\0\0".to_vec()),
        no_startup("a truncated startup packet", cat(&[&50u32.to_be_bytes(), &196_608u32.to_be_bytes(), b"user\0"])),
        before("a startup length word too small", b"\0\0\0\x04".to_vec(), vec![]),
        before("a huge startup length word", b"\x7f\0\0\0abcd".to_vec(), vec![]),
        before("a negative startup length word", b"\xff\xff\xff\xf0abcd".to_vec(), vec![]),
        before("an HTTP request", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(), vec![]),
        before("a Query instead of a startup packet", query("SELECT 1"), vec![]),
        before(
            "protocol version 2",
            startup_packet(0x20000, &[(b"user", b"postgres")]),
            vec![Got::ErrorV2("FATAL:  unsupported frontend protocol 2.0: server supports 3.0 to 3.0\n".into())],
        ),
        before(
            "protocol version 4660.22136",
            startup_packet(0x1234_5678, &[(b"user", b"postgres")]),
            vec![fatal("0A000", "unsupported frontend protocol 4660.22136: server supports 3.0 to 3.0")],
        ),
        before(
            "protocol version 4.0",
            startup_packet(0x40000, &[(b"user", b"postgres")]),
            vec![fatal("0A000", "unsupported frontend protocol 4.0: server supports 3.0 to 3.0")],
        ),
        before(
            "protocol version 3.1",
            cat(&[&startup_packet(0x30001, &[(b"user", b"postgres")]), &msg(b'X', b"")]),
            vec![m('v'), m('Z')],
        ),
        before(
            "an unknown _pq_ option",
            cat(&[&startup_packet(196_608, &[(b"user", b"postgres"), (b"_pq_.foo", b"x")]), &msg(b'X', b"")]),
            vec![m('v'), m('Z')],
        ),
        before(
            "no user",
            startup_packet(196_608, &[(b"database", b"postgres")]),
            vec![fatal("28000", "no PostgreSQL user name specified in startup packet")],
        ),
        before("an empty user", startup_packet(196_608, &[(b"user", b"")]), vec![fatal("28000", "no PostgreSQL user name specified in startup packet")]),
        before(
            "no terminator after the last pair",
            packet(&cat(&[&196_608u32.to_be_bytes(), b"user\0postgres\0"])),
            vec![fatal("08P01", "invalid startup packet layout: expected terminator as last byte")],
        ),
        before(
            "a name without a value",
            packet(&cat(&[&196_608u32.to_be_bytes(), b"user\0postgres\0database\0"])),
            vec![fatal("08P01", "invalid startup packet layout: expected terminator as last byte")],
        ),
        before(
            "bytes after the terminator",
            packet(&cat(&[&196_608u32.to_be_bytes(), b"user\0postgres\0\0junk"])),
            vec![fatal("08P01", "invalid startup packet layout: expected terminator as last byte")],
        ),
        before(
            "invalid UTF-8 in the user name",
            startup_packet(196_608, &[(b"user", b"\xff\xfe")]),
            vec![fatal("28000", "role \"\u{fffd}\u{fffd}\" does not exist")],
        ),
        before(
            "invalid UTF-8 in the database name",
            startup_packet(196_608, &[(b"user", b"postgres"), (b"database", b"\xff")]),
            vec![fatal("3D000", "database \"\u{fffd}\" does not exist")],
        ),
        before(
            "invalid UTF-8 in a parameter name",
            startup_packet(196_608, &[(b"user", b"postgres"), (b"\xff", b"x")]),
            vec![fatal("42704", "unrecognized configuration parameter \"\u{fffd}\"")],
        ),
        before(
            "an unknown parameter",
            startup_packet(196_608, &[(b"user", b"postgres"), (b"nosuch_setting", b"x")]),
            vec![fatal("42704", "unrecognized configuration parameter \"nosuch_setting\"")],
        ),
        before("a cancel request of the wrong length", cat(&[&12u32.to_be_bytes(), &80_877_102u32.to_be_bytes(), &5u32.to_be_bytes()]), vec![]),
        // No TLS: an SSL request is refused with 'N' and the startup packet follows.
        ssl("garbage after a refused SSL request", b"\x01\x02\x03\x04\x05\x06\x07\x08".to_vec(), vec![Got::Byte('N')]),
        ssl(
            "a second SSL request",
            ssl_request.clone(),
            vec![Got::Byte('N'), fatal("0A000", "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0")],
        ),
        ssl(
            "a startup packet after a refused SSL request",
            cat(&[&startup(), &query("SELECT 2"), &msg(b'X', b"")]),
            [&[Got::Byte('N'), m('Z')], &select_2()[..]].concat(),
        ),
        // Bytes sent with the request, before its answer, were not encrypted.
        before(
            "a startup packet sent along with an SSL request",
            cat(&[&ssl_request, &startup(), &query("SELECT 2")]),
            vec![Got::Byte('N'), unencrypted.clone()],
        ),
        before("garbage sent along with an SSL request", cat(&[&ssl_request, b"\x01\x02\x03"]), vec![Got::Byte('N'), unencrypted]),
    ]);
    v
}

/// Runs one case on a fresh connection and returns what the server said.
fn run(port: u16, c: &Case) -> Vec<Got> {
    let mut s = connect(port);
    let mut got = Vec::new();
    if c.after_startup {
        s.write_all(&startup()).unwrap();
        read_to_ready(&mut s);
    }
    if c.ssl_first {
        s.write_all(&cat(&[&8u32.to_be_bytes(), &80_877_103u32.to_be_bytes()])).unwrap();
        let mut answer = [0u8];
        s.read_exact(&mut answer).expect("an answer to the SSL request");
        got.push(Got::Byte(answer[0] as char));
    }
    // The server may close before it has read everything: a failed write is
    // part of the behaviour under test, not an error of the test.
    let _ = s.write_all(&c.send);
    if c.then_close {
        let _ = s.shutdown(Shutdown::Write);
    }
    let data = read_to_close(&mut s);
    // 'N' is a bare byte only where it answers an SSL request.
    let v2 = c.expect.iter().any(|g| matches!(g, Got::ErrorV2(_)));
    let mut rest = &data[..];
    if !c.ssl_first && c.expect.first() == Some(&Got::Byte('N')) && rest.first() == Some(&b'N') {
        got.push(Got::Byte('N'));
        rest = &rest[1..];
    }
    got.extend(parse(rest, v2));
    got
}

/// A session with an open transaction, to show that other sessions carry on.
struct Bystander {
    s: TcpStream,
    rows: usize,
}

impl Bystander {
    fn open(port: u16) -> Bystander {
        let mut s = connect(port);
        s.write_all(&startup()).unwrap();
        read_to_ready(&mut s);
        for q in ["CREATE TEMP TABLE bystander (id int)", "BEGIN", "INSERT INTO bystander VALUES (1)"] {
            s.write_all(&query(q)).unwrap();
            let got = read_to_ready(&mut s);
            assert!(!got.iter().any(|g| matches!(g, Got::Error { .. })), "{q}: {got:?}");
        }
        Bystander { s, rows: 1 }
    }

    /// Inserts a row inside the open transaction and counts them.
    fn check(&mut self, after: &str) {
        self.rows += 1;
        self.s.write_all(&query("INSERT INTO bystander VALUES (2); SELECT count(*) FROM bystander")).unwrap();
        let mut data = Vec::new();
        let mut buf = [0u8; 4096];
        while !(data.len() >= 6 && data[data.len() - 6] == b'Z') {
            let n = self.s.read(&mut buf).unwrap_or(0);
            assert!(n > 0, "the bystander session died after \"{after}\"");
            data.extend_from_slice(&buf[..n]);
        }
        let count = format!("{}", self.rows);
        let row = cat(&[b"D\0\0\0", &[(10 + count.len()) as u8], b"\0\x01\0\0\0", &[count.len() as u8], count.as_bytes()]);
        assert!(data.windows(row.len()).any(|w| w == row), "the bystander's transaction lost rows after \"{after}\": {:?}", parse(&data, false));
        assert_eq!(&data[data.len() - 6..], b"Z\0\0\0\x05T", "the bystander left its transaction after \"{after}\"");
    }
}

/// A new connection answers SELECT 2.
fn assert_accepts(port: u16, after: &str) {
    let mut s = connect(port);
    s.write_all(&cat(&[&startup(), &query("SELECT 2"), &msg(b'X', b"")])).unwrap();
    let got = parse(&read_to_close(&mut s), false);
    assert_eq!(got, [&[m('Z')], &select_2()[..]].concat(), "a new connection after \"{after}\"");
}

/// Runs every case against the server on `port`; the differences from
/// the expectations.
fn run_cases(port: u16) -> Vec<String> {
    let mut bystander = Bystander::open(port);
    let mut failures = Vec::new();
    for c in cases() {
        let got = run(port, &c);
        if got != c.expect {
            failures.push(format!("{}:\n  expected {:?}\n  got      {:?}", c.name, c.expect, got));
        }
        assert_accepts(port, c.name);
        bystander.check(c.name);
    }
    failures
}

#[test]
fn hostile_clients_get_postgres_answers_and_the_server_carries_on() {
    // ssl = off: SSL requests are refused with 'N' (tests/auth.rs covers TLS).
    let server = TestServer::builder().args(["--ssl", "off"]).start();
    let failures = run_cases(server.port());
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    assert!(!log.contains("panicked"), "the server panicked:\n{}", server.log_tail());
    assert!(failures.is_empty(), "{} case(s) differ from PostgreSQL 15:\n{}", failures.len(), failures.join("\n"));
}

/// The expectations checked against PostgreSQL 15 itself (with trust
/// authentication for user postgres; nothing is left behind):
/// `TUSK_PG_PORT=54329 cargo test --release -p tusk --test protocol -- --ignored`.
#[test]
#[ignore = "needs a PostgreSQL 15 server; set TUSK_PG_PORT"]
fn expectations_match_postgres() {
    let port: u16 = std::env::var("TUSK_PG_PORT").ok().and_then(|p| p.parse().ok()).expect("TUSK_PG_PORT");
    let failures = run_cases(port);
    assert!(failures.is_empty(), "{} expectation(s) differ from PostgreSQL:\n{}", failures.len(), failures.join("\n"));
}
