//! TLS for client connections: the certificate and key in the data
//! directory (`server.crt`, `server.key`, as PostgreSQL's ssl_cert_file
//! and ssl_key_file default to), a self-signed pair generated when a data
//! directory has neither, and the encrypted socket a session reads and
//! writes after an accepted SSLRequest.
//!
//! rustls offers TLS 1.2 and 1.3 only, with AEAD cipher suites and
//! forward-secret key exchange (PostgreSQL 15's ssl_min_protocol_version
//! is TLSv1.2 too). A session runs on one thread, so its reads and writes
//! never overlap: the connection state sits behind an uncontended mutex
//! only because the reader and the writer are two handles on one socket.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::Digest;

pub const CERT_FILE: &str = "server.crt";
pub const KEY_FILE: &str = "server.key";

/// What accepting TLS needs: the rustls configuration, and the
/// tls-server-end-point hash of the certificate for SCRAM-SHA-256-PLUS
/// (None when the certificate's signature hash has no such binding).
pub struct TlsContext {
    pub config: Arc<rustls::ServerConfig>,
    pub cert_hash: Option<Vec<u8>>,
}

/// Writes a self-signed certificate and its key into `dir` if neither
/// file exists (a new data directory). Returns whether it did.
pub fn ensure_certificate(dir: &Path) -> Result<bool, String> {
    let (cert_path, key_path) = (dir.join(CERT_FILE), dir.join(KEY_FILE));
    if cert_path.exists() || key_path.exists() {
        return Ok(false);
    }
    let host = hostname().unwrap_or_else(|| "localhost".to_string());
    let mut names = vec![host.clone()];
    if host != "localhost" {
        names.push("localhost".into());
    }
    names.push("127.0.0.1".into());
    names.push("::1".into());
    let mut params = rcgen::CertificateParams::new(names).map_err(|e| format!("could not create a certificate: {e}"))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, host);
    let now = std::time::SystemTime::now();
    params.not_before = now.into();
    params.not_after = (now + std::time::Duration::from_secs(10 * 365 * 24 * 3600)).into();
    let key = rcgen::KeyPair::generate().map_err(|e| format!("could not generate a private key: {e}"))?;
    let cert = params.self_signed(&key).map_err(|e| format!("could not sign the certificate: {e}"))?;
    // Each file appears whole or not at all (a crash mid-way must not
    // leave a truncated PEM that stops every later start).
    write_whole(&key_path, key.serialize_pem().as_bytes(), 0o600)?;
    write_whole(&cert_path, cert.pem().as_bytes(), 0o644)?;
    Ok(true)
}

/// Writes a file through a temporary one renamed into place, with the
/// given permissions (the key's owner alone may read it: PostgreSQL
/// refuses a key file others can read).
pub(crate) fn write_whole(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| format!("could not create \"{}\": {e}", tmp.display()))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| format!("could not write \"{}\": {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("could not rename \"{}\" to \"{}\": {e}", tmp.display(), path.display()))
}

fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = std::str::from_utf8(&buf[..end]).ok()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Loads `server.crt` (a chain, the server's certificate first) and
/// `server.key` from `dir`, with PostgreSQL's messages when that fails.
pub fn load(dir: &Path) -> Result<TlsContext, String> {
    let (cert_path, key_path) = (dir.join(CERT_FILE), dir.join(KEY_FILE));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("could not load server certificate file \"{}\": {e}", cert_path.display()))?;
    if certs.is_empty() {
        return Err(format!("could not load server certificate file \"{}\": no certificate found", cert_path.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| format!("could not load private key file \"{}\": {e}", key_path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(&key_path) {
            if meta.permissions().mode() & 0o077 != 0 {
                log::warn!("private key file \"{}\" has group or world access", key_path.display());
            }
        }
    }
    let cert_hash = end_point_hash(&certs[0]);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("could not create SSL context: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("could not load private key file \"{}\": {e}", key_path.display()))?;
    Ok(TlsContext { config: Arc::new(config), cert_hash })
}

/// The tls-server-end-point channel binding data (RFC 5929 section 4.1):
/// the certificate hashed with its signature's hash function, SHA-256
/// for MD5 and SHA-1. None for signatures without one (Ed25519, RSA-PSS),
/// for which PostgreSQL cannot bind either.
pub fn end_point_hash(cert: &[u8]) -> Option<Vec<u8>> {
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
    let (body, _) = der_element(cert, 0x30)?;
    let (_, rest) = der_any(body)?;
    let (alg, _) = der_element(rest, 0x30)?;
    let (oid, _) = der_element(alg, 0x06)?;
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let hash = match oid {
        o if o.len() == RSA.len() + 1 && o.starts_with(RSA) => match o[RSA.len()] {
            4 | 5 | 11 => 256, // md5, sha1 and sha256 WithRSAEncryption
            12 => 384,
            13 => 512,
            14 => 224,
            _ => return None,
        },
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01] => 256, // ecdsa-with-SHA1
        o if o.len() == ECDSA.len() + 2 && o.starts_with(ECDSA) && o[ECDSA.len()] == 3 => match o[ECDSA.len() + 1] {
            1 => 224,
            2 => 256,
            3 => 384,
            4 => 512,
            _ => return None,
        },
        _ => return None,
    };
    Some(match hash {
        224 => sha2::Sha224::digest(cert).to_vec(),
        256 => sha2::Sha256::digest(cert).to_vec(),
        384 => sha2::Sha384::digest(cert).to_vec(),
        _ => sha2::Sha512::digest(cert).to_vec(),
    })
}

/// One DER element of any tag: (contents, what follows).
fn der_any(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let first_len = *b.get(1)?;
    let (len, header) = if first_len < 0x80 {
        (first_len as usize, 2)
    } else {
        let n = (first_len & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let end = header.checked_add(len)?;
    Some((b.get(header..end)?, b.get(end..)?))
}

fn der_element(b: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *b.first()? != tag {
        return None;
    }
    der_any(b)
}

/// Completes the TLS handshake on a socket whose SSLRequest was just
/// accepted.
pub fn accept(tcp: &TcpStream, ctx: &TlsContext) -> io::Result<rustls::ServerConnection> {
    let mut conn = rustls::ServerConnection::new(ctx.config.clone()).map_err(io::Error::other)?;
    let mut sock = tcp;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    Ok(conn)
}

/// The encrypted side of a client socket.
#[derive(Clone)]
pub struct TlsStream {
    tcp: Arc<TcpStream>,
    conn: Arc<Mutex<rustls::ServerConnection>>,
}

impl TlsStream {
    pub fn new(tcp: Arc<TcpStream>, conn: rustls::ServerConnection) -> TlsStream {
        TlsStream { tcp, conn: Arc::new(Mutex::new(conn)) }
    }

    /// The negotiated protocol version and cipher suite, for the log.
    pub fn describe(&self) -> String {
        let conn = self.conn.lock();
        let version = conn.protocol_version().map(|v| format!("{v:?}")).unwrap_or_default();
        let suite = conn.negotiated_cipher_suite().map(|s| format!("{:?}", s.suite())).unwrap_or_default();
        format!("{version} {suite}")
    }

    /// Whether decrypted data waits to be read: the socket may then be
    /// quiet though the client's next message is here already.
    pub fn has_buffered_plaintext(&self) -> bool {
        match self.conn.lock().process_new_packets() {
            Ok(state) => state.plaintext_bytes_to_read() > 0,
            // The next read reports it.
            Err(_) => true,
        }
    }

    /// Sends a close_notify alert (the session is ending).
    pub fn close(&self) {
        let mut conn = self.conn.lock();
        conn.send_close_notify();
        let mut sock = &*self.tcp;
        while conn.wants_write() {
            if conn.write_tls(&mut sock).is_err() {
                break;
            }
        }
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut conn = self.conn.lock();
        let mut sock = &*self.tcp;
        loop {
            match conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // No plaintext buffered: read more records (a read timeout
            // surfaces here as WouldBlock / TimedOut, as on a plain socket).
            if conn.read_tls(&mut sock)? == 0 {
                // The peer closed the TCP stream without close_notify.
                return Ok(0);
            }
            if let Err(e) = conn.process_new_packets() {
                // Tell the peer why (an alert), then fail the read.
                while conn.wants_write() {
                    if conn.write_tls(&mut sock).is_err() {
                        break;
                    }
                }
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            while conn.wants_write() {
                conn.write_tls(&mut sock)?;
            }
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut conn = self.conn.lock();
        let n = conn.writer().write(buf)?;
        let mut sock = &*self.tcp;
        while conn.wants_write() {
            conn.write_tls(&mut sock)?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut conn = self.conn.lock();
        conn.writer().flush()?;
        let mut sock = &*self.tcp;
        while conn.wants_write() {
            conn.write_tls(&mut sock)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_certificate_loads_and_binds() {
        let dir = std::env::temp_dir().join(format!("tusk-tls-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(ensure_certificate(&dir).unwrap());
        assert!(!ensure_certificate(&dir).unwrap());
        let ctx = load(&dir).unwrap();
        // ECDSA P-256 with SHA-256: a SHA-256 binding.
        assert_eq!(ctx.cert_hash.as_ref().map(|h| h.len()), Some(32));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(dir.join(KEY_FILE)).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn der_walk_rejects_garbage() {
        assert_eq!(end_point_hash(b""), None);
        assert_eq!(end_point_hash(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(end_point_hash(&[0x30, 0x03, 0x30, 0x01]), None);
    }
}
