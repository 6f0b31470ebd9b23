//! The server side of SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (RFC 5802,
//! RFC 7677, tls-server-end-point channel binding of RFC 5929), as
//! PostgreSQL 15's auth-scram.c runs it, with its error messages.
//!
//! The exchange is a state machine fed the client's SASL messages; the
//! caller does the I/O. A role that does not exist, has no password or
//! only an md5 one gets a "mock" exchange, with a salt derived from its
//! name and a server secret so that it looks like a real one, which fails
//! only at the end: the client cannot tell which roles exist.

use rand::RngCore;
use tusk_sql::commands::role::{self, ScramSecret, SCRAM_ITERATIONS, SCRAM_KEY_LEN, SCRAM_SALT_LEN};
use tusk_types::{sqlstate, PgError};

pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
pub const SCRAM_SHA_256_PLUS: &str = "SCRAM-SHA-256-PLUS";

/// PostgreSQL's SCRAM_RAW_NONCE_LEN.
const NONCE_LEN: usize = 18;

/// What the exchange answers a client message with.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// AuthenticationSASLContinue with this data.
    Continue(Vec<u8>),
    /// AuthenticationSASLFinal with this data, then AuthenticationOk.
    Success(Vec<u8>),
    /// The proof is wrong (or the exchange was a mock): the password
    /// authentication failed.
    Failure,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Init,
    SaltSent,
    Finished,
}

pub struct Exchange {
    state: State,
    /// The client chose SCRAM-SHA-256-PLUS.
    channel_binding: bool,
    /// The tls-server-end-point hash of the server certificate, when the
    /// connection is TLS and the hash is known.
    cert_hash: Option<Vec<u8>>,
    secret: ScramSecret,
    /// A mock exchange: it fails whatever the client proves.
    doomed: bool,
    cbind_flag: u8,
    client_first_bare: String,
    client_nonce: String,
    server_nonce: String,
    server_first: String,
}

fn malformed(detail: impl Into<String>) -> PgError {
    PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "malformed SCRAM message").with_detail(detail)
}

/// A character for an error message: quoted if printable ASCII, else hex
/// (PostgreSQL's sanitize_char).
fn sanitize_char(c: Option<u8>) -> String {
    match c {
        Some(c) if (0x21..0x7f).contains(&c) => format!("'{}'", c as char),
        Some(c) => format!("0x{c:02x}"),
        None => "0x00".into(),
    }
}

/// A string for an error message (PostgreSQL's sanitize_str).
fn sanitize_str(s: &str) -> String {
    s.bytes().take(30).map(|c| if (0x21..0x7f).contains(&c) { c as char } else { '?' }).collect()
}

/// A cursor over a SCRAM message, with PostgreSQL's read_attr_value and
/// read_any_attr.
struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn rest(&self) -> &'a str {
        std::str::from_utf8(&self.s[self.pos..]).unwrap_or("")
    }

    /// The value up to the next comma (which is consumed).
    fn value(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|c| c != b',') {
            self.pos += 1;
        }
        let v = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if self.peek() == Some(b',') {
            self.pos += 1;
        }
        v
    }

    fn attr_value(&mut self, attr: u8) -> Result<&'a str, PgError> {
        if self.peek() != Some(attr) {
            return Err(malformed(format!("Expected attribute \"{}\" but found \"{}\".", attr as char, sanitize_char(self.peek()))));
        }
        self.pos += 1;
        if self.peek() != Some(b'=') {
            return Err(malformed(format!("Expected character \"=\" for attribute \"{}\".", attr as char)));
        }
        self.pos += 1;
        Ok(self.value())
    }

    fn any_attr(&mut self) -> Result<(u8, &'a str), PgError> {
        let Some(attr) = self.peek() else {
            return Err(malformed("Attribute expected, but found end of string."));
        };
        if !attr.is_ascii_alphabetic() {
            return Err(malformed(format!("Attribute expected, but found invalid character \"{}\".", sanitize_char(Some(attr)))));
        }
        self.pos += 1;
        if self.peek() != Some(b'=') {
            return Err(malformed(format!("Expected character \"=\" for attribute \"{}\".", attr as char)));
        }
        self.pos += 1;
        Ok((attr, self.value()))
    }
}

/// Printable ASCII except the comma (RFC 5802's "printable").
fn is_printable(s: &str) -> bool {
    s.bytes().all(|c| (0x21..=0x7e).contains(&c) && c != b',')
}

impl Exchange {
    /// Starts an exchange for the mechanism the client selected.
    /// `shadow` is the role's stored password (None: no such role, no
    /// password, or an expired one); `mock_nonce` is the server secret
    /// that mock salts derive from.
    pub fn new(mechanism: &str, user: &str, shadow: Option<&str>, cert_hash: Option<Vec<u8>>, mock_nonce: &[u8]) -> Result<Exchange, PgError> {
        let channel_binding = match mechanism {
            SCRAM_SHA_256 => false,
            SCRAM_SHA_256_PLUS if cert_hash.is_some() => true,
            _ => {
                return Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "client selected an invalid SASL authentication mechanism"));
            }
        };
        let real = shadow.and_then(role::parse_scram_secret);
        if shadow.is_some() && real.is_none() {
            log::info!("User \"{user}\" does not have a valid SCRAM secret.");
        }
        let doomed = real.is_none();
        let secret = real.unwrap_or_else(|| {
            // PostgreSQL's scram_mock_salt: SHA-256 of the name and the secret.
            let mut input = user.as_bytes().to_vec();
            input.extend_from_slice(mock_nonce);
            let salt = role::sha256(&input)[..SCRAM_SALT_LEN].to_vec();
            ScramSecret { iterations: SCRAM_ITERATIONS, salt, stored_key: [0; SCRAM_KEY_LEN], server_key: [0; SCRAM_KEY_LEN] }
        });
        Ok(Exchange {
            state: State::Init,
            channel_binding,
            cert_hash,
            secret,
            doomed,
            cbind_flag: 0,
            client_first_bare: String::new(),
            client_nonce: String::new(),
            server_nonce: String::new(),
            server_first: String::new(),
        })
    }

    /// Takes one client message (None: a SASLInitialResponse without an
    /// initial response) and returns the answer.
    pub fn step(&mut self, input: Option<&[u8]>) -> Result<Step, PgError> {
        let Some(input) = input else {
            if self.state != State::Init {
                return Err(malformed("The message is empty."));
            }
            return Ok(Step::Continue(Vec::new()));
        };
        if input.is_empty() {
            return Err(malformed("The message is empty."));
        }
        if input.contains(&0) {
            return Err(malformed("Message length does not match input length."));
        }
        match self.state {
            State::Init => {
                self.read_client_first(input)?;
                let mut nonce = [0u8; NONCE_LEN];
                rand::rngs::OsRng.fill_bytes(&mut nonce);
                self.server_nonce = role::b64_encode(&nonce);
                self.server_first =
                    format!("r={}{},s={},i={}", self.client_nonce, self.server_nonce, self.secret.salt_base64(), self.secret.iterations);
                self.state = State::SaltSent;
                Ok(Step::Continue(self.server_first.clone().into_bytes()))
            }
            State::SaltSent => {
                let (without_proof, final_nonce, proof) = self.read_client_final(input)?;
                if final_nonce != format!("{}{}", self.client_nonce, self.server_nonce) {
                    return Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "invalid SCRAM response").with_detail("Nonce does not match."));
                }
                self.state = State::Finished;
                let auth_message = format!("{},{},{}", self.client_first_bare, self.server_first, without_proof);
                // The proof is checked even in a mock exchange, so that
                // the time taken does not tell whether the role exists.
                let signature = role::hmac_sha256(&self.secret.stored_key, &[auth_message.as_bytes()]);
                let mut client_key = [0u8; SCRAM_KEY_LEN];
                for i in 0..SCRAM_KEY_LEN {
                    client_key[i] = proof[i] ^ signature[i];
                }
                let ok = role::constant_time_eq(&role::sha256(&client_key), &self.secret.stored_key);
                if !ok || self.doomed {
                    return Ok(Step::Failure);
                }
                let server_signature = role::hmac_sha256(&self.secret.server_key, &[auth_message.as_bytes()]);
                Ok(Step::Success(format!("v={}", role::b64_encode(&server_signature)).into_bytes()))
            }
            State::Finished => Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "invalid SCRAM exchange state")),
        }
    }

    fn read_client_first(&mut self, input: &[u8]) -> Result<(), PgError> {
        let mut c = Cursor { s: input, pos: 0 };
        self.cbind_flag = c.peek().unwrap_or(0);
        match c.peek() {
            Some(flag @ (b'n' | b'y')) => {
                if self.channel_binding {
                    return Err(malformed(
                        "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.",
                    ));
                }
                if flag == b'y' && self.cert_hash.is_some() {
                    return Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "SCRAM channel binding negotiation error").with_detail(
                        "The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding.",
                    ));
                }
                c.pos += 1;
                if c.peek() != Some(b',') {
                    return Err(malformed(format!("Comma expected, but found character \"{}\".", sanitize_char(c.peek()))));
                }
                c.pos += 1;
            }
            Some(b'p') => {
                if !self.channel_binding {
                    return Err(malformed(
                        "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.",
                    ));
                }
                let kind = c.attr_value(b'p')?;
                if kind != "tls-server-end-point" {
                    return Err(PgError::fatal(
                        sqlstate::PROTOCOL_VIOLATION,
                        format!("unsupported SCRAM channel-binding type \"{}\"", sanitize_str(kind)),
                    ));
                }
            }
            other => return Err(malformed(format!("Unexpected channel-binding flag \"{}\".", sanitize_char(other)))),
        }
        if c.peek() == Some(b'a') {
            return Err(PgError::fatal(sqlstate::FEATURE_NOT_SUPPORTED, "client uses authorization identity, but it is not supported"));
        }
        if c.peek() != Some(b',') {
            return Err(malformed(format!("Unexpected attribute \"{}\" in client-first-message.", sanitize_char(c.peek()))));
        }
        c.pos += 1;
        self.client_first_bare = c.rest().to_string();
        if std::str::from_utf8(&input[c.pos..]).is_err() {
            return Err(malformed("Message is not valid UTF-8."));
        }
        if c.peek() == Some(b'm') {
            return Err(PgError::fatal(sqlstate::FEATURE_NOT_SUPPORTED, "client requires an unsupported SCRAM extension"));
        }
        // The user name is ignored: the startup packet's is the one.
        c.attr_value(b'n')?;
        let nonce = c.attr_value(b'r')?;
        if !is_printable(nonce) {
            return Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "non-printable characters in SCRAM nonce"));
        }
        self.client_nonce = nonce.to_string();
        while c.peek().is_some() {
            c.any_attr()?;
        }
        Ok(())
    }

    /// Returns the client-final-message without its proof, the nonce, and the proof.
    fn read_client_final(&self, input: &[u8]) -> Result<(String, String, [u8; SCRAM_KEY_LEN]), PgError> {
        let mut c = Cursor { s: input, pos: 0 };
        let binding = c.attr_value(b'c')?;
        if self.channel_binding {
            let mut expected = b"p=tls-server-end-point,,".to_vec();
            expected.extend_from_slice(self.cert_hash.as_deref().unwrap_or_default());
            if binding != role::b64_encode(&expected) {
                return Err(PgError::fatal(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION, "SCRAM channel binding check failed"));
            }
        } else if !(binding == "biws" && self.cbind_flag == b'n') && !(binding == "eSws" && self.cbind_flag == b'y') {
            return Err(PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "unexpected SCRAM channel-binding attribute in client-final-message"));
        }
        let nonce = c.attr_value(b'r')?.to_string();
        // Extensions are skipped up to the proof.
        let (proof_at, proof) = loop {
            let at = c.pos.saturating_sub(1);
            let (attr, value) = c.any_attr()?;
            if attr == b'p' {
                break (at, value);
            }
        };
        let proof: [u8; SCRAM_KEY_LEN] = role::b64_decode(proof)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| malformed("Malformed proof in client-final-message."))?;
        if c.peek().is_some() {
            return Err(malformed("Garbage found at the end of client-final-message."));
        }
        let without_proof = String::from_utf8_lossy(&input[..proof_at]).into_owned();
        Ok((without_proof, nonce, proof))
    }
}

/// The client side, for tests: the messages a client with `password`
/// sends, given the server's.
#[cfg(test)]
pub(crate) mod client {
    use super::*;

    pub fn first(nonce: &str) -> String {
        format!("n,,n=,r={nonce}")
    }

    pub fn last(password: &str, client_first: &str, server_first: &str) -> String {
        let mut salt = "";
        let mut iterations = 0;
        let mut nonce = "";
        for part in server_first.split(',') {
            match part.split_at(2) {
                ("r=", v) => nonce = v,
                ("s=", v) => salt = v,
                ("i=", v) => iterations = v.parse().unwrap(),
                _ => {}
            }
        }
        let salted = role::scram_salted_password(password, &role::b64_decode(salt).unwrap(), iterations);
        let (client_key, stored_key, _) = role::scram_keys(&salted);
        let without_proof = format!("c=biws,r={nonce}");
        let bare = client_first.strip_prefix("n,,").unwrap();
        let auth = format!("{bare},{server_first},{without_proof}");
        let sig = role::hmac_sha256(&stored_key, &[auth.as_bytes()]);
        let proof: Vec<u8> = client_key.iter().zip(sig).map(|(a, b)| a ^ b).collect();
        format!("{without_proof},p={}", role::b64_encode(&proof))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(password_stored: Option<&str>, password_given: &str) -> Step {
        let shadow = password_stored.map(role::scram_secret);
        let mut ex = Exchange::new(SCRAM_SHA_256, "alice", shadow.as_deref(), None, b"secret").unwrap();
        let cf = client::first("fyko+d2lbbFgONRv9qkxdawL");
        let Step::Continue(sf) = ex.step(Some(cf.as_bytes())).unwrap() else { panic!() };
        let sf = String::from_utf8(sf).unwrap();
        let last = client::last(password_given, &cf, &sf);
        ex.step(Some(last.as_bytes())).unwrap()
    }

    #[test]
    fn good_and_bad_passwords() {
        assert!(matches!(run(Some("pencil"), "pencil"), Step::Success(v) if v.starts_with(b"v=")));
        assert_eq!(run(Some("pencil"), "pen"), Step::Failure);
        // No password stored: a mock exchange that fails at the end.
        assert_eq!(run(None, "pencil"), Step::Failure);
    }

    #[test]
    fn mock_salt_is_stable_per_role() {
        let salt = |user: &str| {
            let mut ex = Exchange::new(SCRAM_SHA_256, user, None, None, b"secret").unwrap();
            let Step::Continue(sf) = ex.step(Some(b"n,,n=,r=abc")).unwrap() else { panic!() };
            String::from_utf8(sf).unwrap().split(',').nth(1).unwrap().to_string()
        };
        assert_eq!(salt("nobody"), salt("nobody"));
        assert_ne!(salt("nobody"), salt("somebody"));
    }

    #[test]
    fn malformed_messages_are_errors_not_panics() {
        let err = |first: &[u8]| {
            let mut ex = Exchange::new(SCRAM_SHA_256, "u", None, None, b"s").unwrap();
            let e = ex.step(Some(first)).unwrap_err();
            (e.code, e.message, e.detail.unwrap_or_default())
        };
        assert_eq!(err(b"x,,n=,r=a"), ("08P01", "malformed SCRAM message".into(), "Unexpected channel-binding flag \"'x'\".".into()));
        assert_eq!(err(b"n;"), ("08P01", "malformed SCRAM message".into(), "Comma expected, but found character \"';'\".".into()));
        assert_eq!(err(b"n,a=x,n=,r=a").1, "client uses authorization identity, but it is not supported");
        assert_eq!(err(b"n,,m=x").1, "client requires an unsupported SCRAM extension");
        assert_eq!(err(b"n,,n=,r=a\x01b").1, "non-printable characters in SCRAM nonce");
        assert_eq!(err(b"n,,r=a").2, "Expected attribute \"n\" but found \"'r'\".");
        assert_eq!(err(b"n,,n=,r=a,1").2, "Attribute expected, but found invalid character \"'1'\".");
        assert_eq!(err(b"n,,n=,r=a,x").2, "Expected character \"=\" for attribute \"x\".");
        assert_eq!(err(b"p=tls-server-end-point,,n=,r=a").2,
            "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.");
        assert_eq!(err(b"n,,n=,r=a\0").2, "Message length does not match input length.");
        assert_eq!(err(b"").2, "The message is empty.");
        assert_eq!(err(b"\xff\xfe").2, "Unexpected channel-binding flag \"0xff\".");
        let e = Exchange::new("SCRAM-SHA-1", "u", None, None, b"s").err().unwrap();
        assert_eq!(e.message, "client selected an invalid SASL authentication mechanism");
        // PLUS is only for TLS connections with a certificate hash.
        assert!(Exchange::new(SCRAM_SHA_256_PLUS, "u", None, None, b"s").is_err());

        let finals: [(&[u8], &str); 6] = [
            (b"c=xxxx,r=abc,p=AAAA", "unexpected SCRAM channel-binding attribute in client-final-message"),
            (b"c=biws,r=abc", "malformed SCRAM message"),
            (b"c=biws,r=abc,p=AAAA", "malformed SCRAM message"),
            (b"c=biws", "malformed SCRAM message"),
            (b"r=abc", "malformed SCRAM message"),
            // A trailing comma ends the proof's value, as in PostgreSQL; the nonce is wrong.
            (b"c=biws,r=abc,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,", "invalid SCRAM response"),
        ];
        for (last, message) in finals {
            let mut ex = Exchange::new(SCRAM_SHA_256, "u", None, None, b"s").unwrap();
            ex.step(Some(b"n,,n=,r=abc")).unwrap();
            let e = ex.step(Some(last)).unwrap_err();
            assert_eq!(e.message, message, "{}", String::from_utf8_lossy(last));
        }
        let mut ex = Exchange::new(SCRAM_SHA_256, "u", None, None, b"s").unwrap();
        ex.step(Some(b"n,,n=,r=abc")).unwrap();
        let e = ex.step(Some(b"c=biws,r=abd,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")).unwrap_err();
        assert_eq!((e.message.as_str(), e.detail.as_deref()), ("invalid SCRAM response", Some("Nonce does not match.")));
    }

    proptest::proptest! {
        /// Whatever a client sends, the exchange answers or fails; it never panics.
        #[test]
        fn arbitrary_messages_never_panic(first in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80),
                                          last in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
                                          plus in proptest::prelude::any::<bool>()) {
            let hash = plus.then(|| vec![1u8; 32]);
            let mech = if plus { SCRAM_SHA_256_PLUS } else { SCRAM_SHA_256 };
            let mut ex = Exchange::new(mech, "u", None, hash, b"s").unwrap();
            if ex.step(Some(&first)).is_ok() {
                let _ = ex.step(Some(&last));
                let _ = ex.step(Some(&last));
            }
            // And after a well-formed first message.
            let mut ex = Exchange::new(SCRAM_SHA_256, "u", None, None, b"s").unwrap();
            ex.step(Some(b"n,,n=,r=abc")).unwrap();
            let _ = ex.step(Some(&last));
        }
    }

    #[test]
    fn channel_binding() {
        let hash = vec![7u8; 32];
        let secret = role::scram_secret("pw");
        let mut ex = Exchange::new(SCRAM_SHA_256_PLUS, "u", Some(&secret), Some(hash.clone()), b"s").unwrap();
        let cf = "p=tls-server-end-point,,n=,r=abc";
        let Step::Continue(sf) = ex.step(Some(cf.as_bytes())).unwrap() else { panic!() };
        let sf = String::from_utf8(sf).unwrap();
        let nonce = sf.split(',').next().unwrap().strip_prefix("r=").unwrap();
        let mut cb = b"p=tls-server-end-point,,".to_vec();
        cb.extend_from_slice(&hash);
        let without_proof = format!("c={},r={nonce}", role::b64_encode(&cb));
        let secret = role::parse_scram_secret(&secret).unwrap();
        let salted = role::scram_salted_password("pw", &secret.salt, secret.iterations);
        let (client_key, stored_key, _) = role::scram_keys(&salted);
        let auth = format!("n=,r=abc,{sf},{without_proof}");
        let sig = role::hmac_sha256(&stored_key, &[auth.as_bytes()]);
        let proof: Vec<u8> = client_key.iter().zip(sig).map(|(a, b)| a ^ b).collect();
        let last = format!("{without_proof},p={}", role::b64_encode(&proof));
        assert!(matches!(ex.step(Some(last.as_bytes())).unwrap(), Step::Success(_)));
        // A client that supports binding but thinks this server does not.
        let mut ex = Exchange::new(SCRAM_SHA_256, "u", None, Some(hash), b"s").unwrap();
        assert_eq!(ex.step(Some(b"y,,n=,r=abc")).unwrap_err().message, "SCRAM channel binding negotiation error");
    }
}
