//! Client authentication: after the startup packet, the pg_hba.conf line
//! that matches the connection picks a method, and the method's exchange
//! runs (PostgreSQL's ClientAuthentication in src/backend/libpq/auth.c).
//!
//! - `trust` lets the client in, `reject` refuses it.
//! - `password` asks for the password in clear (AuthenticationCleartextPassword)
//!   and checks it against the stored verifier.
//! - `md5` sends a random salt (AuthenticationMD5Password) and checks
//!   md5(md5(password || user) || salt), for a role whose stored password
//!   is an md5 verifier; any other role gets SCRAM instead, as in PostgreSQL.
//! - `scram-sha-256` runs SASL with SCRAM-SHA-256, offering
//!   SCRAM-SHA-256-PLUS (channel binding to the TLS certificate) on TLS.
//!
//! Every failed password check ends with the same FATAL 28P01 `password
//! authentication failed for user "..."` whether the role exists, has no
//! password, an expired one or a wrong one: a client learns nothing else.
//! A client that hangs up instead of answering (psql does, to ask its
//! user for a password) is let go without a message.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use rand::RngCore;
use tusk_sql::commands::role::{self, PasswordType};
use tusk_types::{sqlstate, PgError};

use crate::hba::{Client, Method};
use crate::protocol::{self, Out, ReadError};
use crate::scram::{self, Exchange, Step};
use crate::Shared;

/// PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH: the largest password or SASL message.
const MAX_AUTH_MESSAGE: usize = 65535;

/// Authentication request codes of the 'R' message.
const AUTH_CLEARTEXT: i32 = 3;
const AUTH_MD5: i32 = 5;
const AUTH_SASL: i32 = 10;
const AUTH_SASL_CONTINUE: i32 = 11;
const AUTH_SASL_FINAL: i32 = 12;

/// How authentication ended when it did not let the client in.
#[derive(Debug)]
pub enum Denied {
    /// Send this FATAL error, then close.
    Fatal(PgError),
    /// Close without a word: the client went away or broke the framing.
    Silent,
}

impl From<PgError> for Denied {
    fn from(e: PgError) -> Denied {
        Denied::Fatal(e)
    }
}

/// The connection being authenticated.
pub struct Attempt<'a> {
    pub peer: Option<SocketAddr>,
    /// The connection is TLS; with the certificate's channel binding hash
    /// if it has one.
    pub ssl: bool,
    pub cert_hash: Option<Vec<u8>>,
    pub user: &'a str,
    pub database: &'a str,
}

fn password_failed(user: &str) -> Denied {
    Denied::Fatal(PgError::fatal(sqlstate::INVALID_PASSWORD, format!("password authentication failed for user \"{user}\"")))
}

fn violation(message: impl Into<String>) -> Denied {
    Denied::Fatal(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, message))
}

/// Runs the authentication the matching pg_hba.conf line asks for.
pub fn authenticate<R: Read, W: Write>(shared: &Shared, a: &Attempt, reader: &mut R, out: &mut Out<W>) -> Result<(), Denied> {
    let addr = a.peer.map(|p| p.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let hba = shared.hba();
    let encryption = if a.ssl { "SSL encryption" } else { "no encryption" };
    let Some(line) = hba.find(&Client { addr, ssl: a.ssl, user: a.user, database: a.database }) else {
        return Err(Denied::Fatal(PgError::fatal(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("no pg_hba.conf entry for host \"{addr}\", user \"{}\", database \"{}\", {encryption}", a.user, a.database),
        )));
    };
    log::debug!("connection from {addr} for user {} matched pg_hba.conf line {} ({})", a.user, line.line_number, line.method.name());
    match &line.method {
        Method::Trust => Ok(()),
        Method::Reject => Err(Denied::Fatal(PgError::fatal(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("pg_hba.conf rejects connection for host \"{addr}\", user \"{}\", database \"{}\", {encryption}", a.user, a.database),
        ))),
        Method::Unsupported(m) => Err(Denied::Fatal(PgError::fatal(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("{m} authentication is not supported by Tusk (pg_hba.conf line {})", line.line_number),
        ))),
        Method::Password => {
            out.auth_request(AUTH_CLEARTEXT, &[]).and_then(|_| out.flush()).map_err(|_| Denied::Silent)?;
            let password = read_password(reader)?;
            let shadow = role_password(shared, a.user);
            match shadow {
                Some(s) if role::plain_password_matches(a.user, &s, &password) => Ok(()),
                _ => Err(password_failed(a.user)),
            }
        }
        Method::Md5 | Method::ScramSha256 => {
            let shadow = role_password(shared, a.user);
            // A role without a usable password still goes through the
            // exchange its method would have, and fails at its end.
            let kind = shadow.as_deref().map(role::password_type).unwrap_or(PasswordType::ScramSha256);
            if line.method == Method::Md5 && kind == PasswordType::Md5 {
                md5_exchange(a.user, shadow.as_deref(), reader, out)
            } else {
                sasl_exchange(shared, a, shadow.as_deref(), reader, out)
            }
        }
    }
}

/// The role's stored password, if it has one that may be used now
/// (PostgreSQL's get_role_password).
fn role_password(shared: &Shared, user: &str) -> Option<String> {
    let cat = shared.cluster.cluster_catalog();
    let Some(role) = cat.role_by_name(user) else {
        log::info!("password authentication failed: role \"{user}\" does not exist");
        return None;
    };
    let Some(password) = role.password.clone().filter(|p| !p.is_empty()) else {
        log::info!("password authentication failed: user \"{user}\" has no password assigned");
        return None;
    };
    if let Some(until) = role.valid_until {
        if until < tusk_sql::session::now_micros() {
            log::info!("password authentication failed: user \"{user}\" has an expired password");
            return None;
        }
    }
    Some(password)
}

/// Reads the client's next authentication message ('p'), whatever its use.
fn read_auth_message<R: Read>(reader: &mut R, expected: &str) -> Result<Vec<u8>, Denied> {
    fn limit(tag: u8) -> Option<usize> {
        (tag == b'p').then_some(MAX_AUTH_MESSAGE)
    }
    match protocol::read_frame(reader, limit) {
        Ok(Some(m)) => Ok(m.body),
        Err(ReadError::UnexpectedType(t)) => Err(violation(format!("expected {expected}, got message type {t}"))),
        // End of stream, broken framing, or the authentication timeout.
        Ok(None) | Err(_) => Err(Denied::Silent),
    }
}

/// A PasswordMessage: one NUL-terminated string filling the message
/// (PostgreSQL's recv_password_packet).
fn read_password<R: Read>(reader: &mut R) -> Result<String, Denied> {
    let body = read_auth_message(reader, "password response")?;
    if body.iter().position(|&b| b == 0) != Some(body.len().wrapping_sub(1)) {
        return Err(violation("invalid password packet size"));
    }
    if body.len() == 1 {
        return Err(Denied::Fatal(PgError::fatal(sqlstate::INVALID_PASSWORD, "empty password returned by client")));
    }
    Ok(String::from_utf8_lossy(&body[..body.len() - 1]).into_owned())
}

fn md5_exchange<R: Read, W: Write>(user: &str, shadow: Option<&str>, reader: &mut R, out: &mut Out<W>) -> Result<(), Denied> {
    let mut salt = [0u8; 4];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    out.auth_request(AUTH_MD5, &salt).and_then(|_| out.flush()).map_err(|_| Denied::Silent)?;
    let answer = read_password(reader)?;
    let Some(stored) = shadow.and_then(|s| s.strip_prefix("md5")) else { return Err(password_failed(user)) };
    let expected = role::md5_encrypt(stored.as_bytes(), &salt);
    if role::constant_time_eq(expected.as_bytes(), answer.as_bytes()) {
        Ok(())
    } else {
        Err(password_failed(user))
    }
}

/// A cursor over a SASLInitialResponse body, with pq_getmsg*'s errors.
fn initial_response(body: &[u8]) -> Result<(&[u8], Option<&[u8]>), Denied> {
    let nul = body.iter().position(|&b| b == 0).ok_or_else(|| violation("invalid string in message"))?;
    let mechanism = &body[..nul];
    let rest = &body[nul + 1..];
    let Some(len) = rest.get(..4) else { return Err(violation("insufficient data left in message")) };
    let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    let rest = &rest[4..];
    let data = if len == -1 {
        None
    } else {
        if len < 0 || len as usize > rest.len() {
            return Err(violation("insufficient data left in message"));
        }
        Some(&rest[..len as usize])
    };
    let used = data.map(|d| d.len()).unwrap_or(0);
    if used != rest.len() {
        return Err(violation("invalid message format"));
    }
    Ok((mechanism, data))
}

fn sasl_exchange<R: Read, W: Write>(shared: &Shared, a: &Attempt, shadow: Option<&str>, reader: &mut R, out: &mut Out<W>) -> Result<(), Denied> {
    let mut mechanisms = Vec::new();
    let cert_hash = if a.ssl { a.cert_hash.clone() } else { None };
    if cert_hash.is_some() {
        mechanisms.extend_from_slice(scram::SCRAM_SHA_256_PLUS.as_bytes());
        mechanisms.push(0);
    }
    mechanisms.extend_from_slice(scram::SCRAM_SHA_256.as_bytes());
    mechanisms.extend_from_slice(&[0, 0]);
    out.auth_request(AUTH_SASL, &mechanisms).and_then(|_| out.flush()).map_err(|_| Denied::Silent)?;

    let body = read_auth_message(reader, "SASL response")?;
    let nul = body.iter().position(|&b| b == 0).ok_or_else(|| violation("invalid string in message"))?;
    let mechanism = String::from_utf8_lossy(&body[..nul]).into_owned();
    let mut exchange = Exchange::new(&mechanism, a.user, shadow, cert_hash, &shared.mock_auth_nonce)?;
    let (_, first) = initial_response(&body)?;
    let mut step = exchange.step(first)?;
    loop {
        match step {
            Step::Continue(data) => {
                out.auth_request(AUTH_SASL_CONTINUE, &data).and_then(|_| out.flush()).map_err(|_| Denied::Silent)?;
                let body = read_auth_message(reader, "SASL response")?;
                step = exchange.step(Some(&body))?;
            }
            Step::Success(data) => {
                out.auth_request(AUTH_SASL_FINAL, &data).map_err(|_| Denied::Silent)?;
                return Ok(());
            }
            Step::Failure => return Err(password_failed(a.user)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_response_framing() {
        let mut ok = b"SCRAM-SHA-256\0".to_vec();
        ok.extend_from_slice(&3i32.to_be_bytes());
        ok.extend_from_slice(b"abc");
        assert!(matches!(initial_response(&ok), Ok((m, Some(d))) if m == b"SCRAM-SHA-256" && d == b"abc"));
        let mut none = b"M\0".to_vec();
        none.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(matches!(initial_response(&none), Ok((_, None))));
        let msg = |r: Result<(&[u8], Option<&[u8]>), Denied>| match r {
            Err(Denied::Fatal(e)) => e.message,
            _ => String::new(),
        };
        assert_eq!(msg(initial_response(b"SCRAM")), "invalid string in message");
        assert_eq!(msg(initial_response(b"M\0\0\0")), "insufficient data left in message");
        let mut long = b"M\0".to_vec();
        long.extend_from_slice(&50i32.to_be_bytes());
        assert_eq!(msg(initial_response(&long)), "insufficient data left in message");
        let mut neg = b"M\0".to_vec();
        neg.extend_from_slice(&(-5i32).to_be_bytes());
        assert_eq!(msg(initial_response(&neg)), "insufficient data left in message");
        let mut extra = b"M\0".to_vec();
        extra.extend_from_slice(&1i32.to_be_bytes());
        extra.extend_from_slice(b"ab");
        assert_eq!(msg(initial_response(&extra)), "invalid message format");
    }

    #[test]
    fn password_packets() {
        let framed = |body: &[u8]| {
            let mut v = vec![b'p'];
            v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
            v.extend_from_slice(body);
            v
        };
        let read = |bytes: Vec<u8>| match read_password(&mut &bytes[..]) {
            Ok(p) => p,
            Err(Denied::Fatal(e)) => format!("{} {}", e.code, e.message),
            Err(Denied::Silent) => "silent".into(),
        };
        assert_eq!(read(framed(b"pw\0")), "pw");
        assert_eq!(read(framed(b"\0")), "28P01 empty password returned by client");
        assert_eq!(read(framed(b"pw")), "08P01 invalid password packet size");
        assert_eq!(read(framed(b"pw\0x")), "08P01 invalid password packet size");
        assert_eq!(read(framed(b"")), "08P01 invalid password packet size");
        assert_eq!(read(b"Q\0\0\0\x05x".to_vec()), "08P01 expected password response, got message type 81");
        assert_eq!(read(Vec::new()), "silent");
        let mut huge = vec![b'p'];
        huge.extend_from_slice(&70_000u32.to_be_bytes());
        assert_eq!(read(huge), "silent");
    }
}
