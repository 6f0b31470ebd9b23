//! The PostgreSQL v3 wire protocol: reading frontend messages and writing
//! backend messages over a byte stream.
//!
//! Reads are bounded (no message may claim more than `MAX_MESSAGE_LEN`)
//! and every decoding error is a protocol violation for the caller to turn
//! into an ErrorResponse and a closed connection, never a panic.

use std::io::{self, BufRead, BufWriter, Read, Write};

use tusk_types::{sqlstate, PgError, Severity};

/// PostgreSQL's PQ_LARGE_MESSAGE_LIMIT.
pub const MAX_MESSAGE_LEN: usize = 0x3fff_ffff;
/// Startup packets are small; PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
pub const MAX_STARTUP_LEN: usize = 10_000;

pub const PROTOCOL_3: u32 = 196_608;
pub const SSL_REQUEST: u32 = 80_877_103;
pub const GSSENC_REQUEST: u32 = 80_877_104;
pub const CANCEL_REQUEST: u32 = 80_877_102;

/// The first packet of a connection.
#[derive(Debug)]
pub enum Startup {
    Params { version: u32, params: Vec<(String, String)> },
    Ssl,
    GssEnc,
    Cancel { pid: i32, key: i32 },
}

#[derive(Debug)]
pub enum Frontend {
    Query(String),
    Parse { name: String, query: String, param_types: Vec<u32> },
    Bind { portal: String, statement: String, param_formats: Vec<i16>, params: Vec<Option<Vec<u8>>>, result_formats: Vec<i16> },
    Describe { kind: u8, name: String },
    Execute { portal: String, max_rows: i32 },
    Close { kind: u8, name: String },
    Sync,
    Flush,
    Terminate,
    CopyData(Vec<u8>),
    CopyDone,
    CopyFail(String),
    FunctionCall,
    Password(Vec<u8>),
}

fn violation(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

/// A cursor over one message's body.
struct Body<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Body<'a> {
    fn need(&self, n: usize) -> Result<(), PgError> {
        if self.pos + n > self.buf.len() {
            Err(violation("invalid message format"))
        } else {
            Ok(())
        }
    }
    fn u8(&mut self) -> Result<u8, PgError> {
        self.need(1)?;
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }
    fn i16(&mut self) -> Result<i16, PgError> {
        self.need(2)?;
        let v = i16::from_be_bytes([self.buf[self.pos], self.buf[self.pos + 1]]);
        self.pos += 2;
        Ok(v)
    }
    fn i32(&mut self) -> Result<i32, PgError> {
        self.need(4)?;
        let v = i32::from_be_bytes(self.buf[self.pos..self.pos + 4].try_into().expect("4 bytes"));
        self.pos += 4;
        Ok(v)
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], PgError> {
        self.need(n)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// A NUL-terminated string, which must be valid UTF-8.
    fn cstr(&mut self) -> Result<String, PgError> {
        let rest = &self.buf[self.pos..];
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| violation("invalid string in message"))?;
        let s = std::str::from_utf8(&rest[..end])
            .map_err(|_| PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\""))?
            .to_string();
        self.pos += end + 1;
        Ok(s)
    }
    fn count(&mut self) -> Result<usize, PgError> {
        let n = self.i16()?;
        if n < 0 {
            return Err(violation("invalid message format"));
        }
        Ok(n as usize)
    }
    fn finish(&self) -> Result<(), PgError> {
        if self.pos != self.buf.len() {
            return Err(violation("invalid message format"));
        }
        Ok(())
    }
}

/// Reads the startup packet (or SSL/cancel request).
pub fn read_startup<R: Read>(r: &mut R) -> Result<Startup, PgError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(|_| violation("incomplete startup packet"))?;
    let len = u32::from_be_bytes(len) as usize;
    if !(8..=MAX_STARTUP_LEN).contains(&len) {
        return Err(violation("invalid length of startup packet"));
    }
    let mut buf = vec![0u8; len - 4];
    r.read_exact(&mut buf).map_err(|_| violation("incomplete startup packet"))?;
    let mut b = Body { buf: &buf, pos: 0 };
    let code = b.i32()? as u32;
    match code {
        SSL_REQUEST => Ok(Startup::Ssl),
        GSSENC_REQUEST => Ok(Startup::GssEnc),
        CANCEL_REQUEST => {
            let pid = b.i32()?;
            let key = b.i32()?;
            Ok(Startup::Cancel { pid, key })
        }
        v if v >> 16 == 3 => {
            let mut params = Vec::new();
            loop {
                let name = b.cstr()?;
                if name.is_empty() {
                    break;
                }
                let value = b.cstr()?;
                params.push((name, value));
            }
            Ok(Startup::Params { version: v, params })
        }
        v => Err(PgError::fatal(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("unsupported frontend protocol {}.{}: server supports 3.0 to 3.0", v >> 16, v & 0xffff),
        )),
    }
}

/// Reads one message; Ok(None) on a clean end of stream.
pub fn read_message<R: BufRead>(r: &mut R) -> Result<Option<Frontend>, PgError> {
    let mut tag = [0u8; 1];
    match r.read(&mut tag) {
        Ok(0) => return Ok(None),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return read_message(r),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut => {
            return Err(PgError::new(sqlstate::ADMIN_SHUTDOWN, "timeout"))
        }
        Err(_) => return Ok(None),
    }
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(|_| violation("unexpected EOF within message length word"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len < 4 || len > MAX_MESSAGE_LEN {
        return Err(violation(format!("invalid message length")));
    }
    let mut buf = vec![0u8; len - 4];
    r.read_exact(&mut buf).map_err(|_| violation("unexpected EOF on client connection"))?;
    decode(tag[0], &buf).map(Some)
}

fn decode(tag: u8, buf: &[u8]) -> Result<Frontend, PgError> {
    let mut b = Body { buf, pos: 0 };
    let msg = match tag {
        b'Q' => Frontend::Query(b.cstr()?),
        b'P' => {
            let name = b.cstr()?;
            let query = b.cstr()?;
            let n = b.count()?;
            let mut param_types = Vec::with_capacity(n);
            for _ in 0..n {
                param_types.push(b.i32()? as u32);
            }
            Frontend::Parse { name, query, param_types }
        }
        b'B' => {
            let portal = b.cstr()?;
            let statement = b.cstr()?;
            let nf = b.count()?;
            let mut param_formats = Vec::with_capacity(nf);
            for _ in 0..nf {
                param_formats.push(b.i16()?);
            }
            let np = b.count()?;
            let mut params = Vec::with_capacity(np);
            for _ in 0..np {
                let len = b.i32()?;
                if len < 0 {
                    params.push(None);
                } else {
                    params.push(Some(b.bytes(len as usize)?.to_vec()));
                }
            }
            let nr = b.count()?;
            let mut result_formats = Vec::with_capacity(nr);
            for _ in 0..nr {
                result_formats.push(b.i16()?);
            }
            Frontend::Bind { portal, statement, param_formats, params, result_formats }
        }
        b'D' => {
            let kind = b.u8()?;
            let name = b.cstr()?;
            Frontend::Describe { kind, name }
        }
        b'E' => {
            let portal = b.cstr()?;
            let max_rows = b.i32()?;
            Frontend::Execute { portal, max_rows }
        }
        b'C' => {
            let kind = b.u8()?;
            let name = b.cstr()?;
            Frontend::Close { kind, name }
        }
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        b'X' => Frontend::Terminate,
        b'd' => return Ok(Frontend::CopyData(buf.to_vec())),
        b'c' => Frontend::CopyDone,
        b'f' => Frontend::CopyFail(b.cstr()?),
        b'F' => return Ok(Frontend::FunctionCall),
        b'p' => return Ok(Frontend::Password(buf.to_vec())),
        other => return Err(violation(format!("invalid frontend message type {}", other))),
    };
    b.finish()?;
    Ok(msg)
}

/// Builds backend messages into an output buffer.
pub struct Out<W: Write> {
    w: BufWriter<W>,
}

impl<W: Write> Out<W> {
    pub fn new(w: W) -> Out<W> {
        Out { w: BufWriter::with_capacity(64 * 1024, w) }
    }

    pub fn get_mut(&mut self) -> &mut W {
        self.w.get_mut()
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Writes one message: tag, length, body built by `f`.
    pub fn msg(&mut self, tag: u8, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let mut body = Vec::with_capacity(64);
        f(&mut body);
        self.w.write_all(&[tag])?;
        self.w.write_all(&((body.len() + 4) as u32).to_be_bytes())?;
        self.w.write_all(&body)
    }

    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)
    }

    pub fn auth_ok(&mut self) -> io::Result<()> {
        self.msg(b'R', |b| b.extend_from_slice(&0i32.to_be_bytes()))
    }

    pub fn parameter_status(&mut self, name: &str, value: &str) -> io::Result<()> {
        self.msg(b'S', |b| {
            put_cstr(b, name);
            put_cstr(b, value);
        })
    }

    pub fn backend_key(&mut self, pid: i32, key: i32) -> io::Result<()> {
        self.msg(b'K', |b| {
            b.extend_from_slice(&pid.to_be_bytes());
            b.extend_from_slice(&key.to_be_bytes());
        })
    }

    pub fn ready(&mut self, status: u8) -> io::Result<()> {
        self.msg(b'Z', |b| b.push(status))
    }

    pub fn command_complete(&mut self, tag: &str) -> io::Result<()> {
        self.msg(b'C', |b| put_cstr(b, tag))
    }

    /// CopyInResponse / CopyOutResponse ('G' / 'H') for a text-format COPY
    /// of `columns` columns.
    pub fn copy_response(&mut self, tag: u8, columns: usize) -> io::Result<()> {
        self.msg(tag, |b| {
            b.push(0);
            b.extend_from_slice(&(columns as i16).to_be_bytes());
            for _ in 0..columns {
                b.extend_from_slice(&0i16.to_be_bytes());
            }
        })
    }

    pub fn copy_data(&mut self, data: &[u8]) -> io::Result<()> {
        self.w.write_all(b"d")?;
        self.w.write_all(&((data.len() + 4) as u32).to_be_bytes())?;
        self.w.write_all(data)
    }

    pub fn copy_done(&mut self) -> io::Result<()> {
        self.msg(b'c', |_| {})
    }

    pub fn empty_query(&mut self) -> io::Result<()> {
        self.msg(b'I', |_| {})
    }

    /// ErrorResponse or NoticeResponse with all of PostgreSQL's fields.
    pub fn error(&mut self, e: &PgError) -> io::Result<()> {
        let tag = if e.is_error() { b'E' } else { b'N' };
        self.msg(tag, |b| {
            let sev = e.severity.as_str();
            b.push(b'S');
            put_cstr(b, sev);
            b.push(b'V');
            put_cstr(b, sev);
            b.push(b'C');
            put_cstr(b, if e.severity == Severity::Error || e.severity == Severity::Fatal { e.code } else { notice_code(e) });
            b.push(b'M');
            put_cstr(b, &e.message);
            if let Some(d) = &e.detail {
                b.push(b'D');
                put_cstr(b, d);
            }
            if let Some(h) = &e.hint {
                b.push(b'H');
                put_cstr(b, h);
            }
            if let Some(p) = e.position {
                b.push(b'P');
                put_cstr(b, &p.to_string());
            }
            if let Some(w) = &e.context {
                b.push(b'W');
                put_cstr(b, w);
            }
            for (code, v) in [(b's', &e.schema), (b't', &e.table), (b'c', &e.column), (b'd', &e.datatype), (b'n', &e.constraint)] {
                if let Some(v) = v {
                    b.push(code);
                    put_cstr(b, v);
                }
            }
            b.push(0);
        })
    }
}

fn notice_code(e: &PgError) -> &'static str {
    e.code
}

pub fn put_cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn framed(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn decodes_query_and_rejects_garbage() {
        let mut r = BufReader::new(std::io::Cursor::new(framed(b'Q', b"SELECT 1\0")));
        assert!(matches!(read_message(&mut r).unwrap(), Some(Frontend::Query(q)) if q == "SELECT 1"));
        // Missing terminator.
        let mut r = BufReader::new(std::io::Cursor::new(framed(b'Q', b"SELECT 1")));
        assert!(read_message(&mut r).is_err());
        // Bad length word.
        let mut r = BufReader::new(&[b'Q', 0, 0, 0, 2][..]);
        assert!(read_message(&mut r).is_err());
        // Unknown tag.
        let mut r = BufReader::new(std::io::Cursor::new(framed(b'z', b"")));
        assert!(read_message(&mut r).is_err());
        // Truncated body.
        let mut r = BufReader::new(&[b'Q', 0, 0, 0, 20, b'S'][..]);
        assert!(read_message(&mut r).is_err());
        // Invalid UTF-8.
        let mut r = BufReader::new(std::io::Cursor::new(framed(b'Q', b"\xff\xfe\0")));
        assert_eq!(read_message(&mut r).unwrap_err().code, sqlstate::CHARACTER_NOT_IN_REPERTOIRE);
        // Bind with a negative count.
        let mut body = b"\0\0".to_vec();
        body.extend_from_slice(&(-1i16).to_be_bytes());
        let mut r = BufReader::new(std::io::Cursor::new(framed(b'B', &body)));
        assert!(read_message(&mut r).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A small deterministic fuzz of the decoder.
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let tags = b"QPBDECSHXdcfFpz";
            let tag = tags[(seed >> 8) as usize % tags.len()];
            let body: Vec<u8> = (0..len).map(|i| (seed >> (i % 56)) as u8).collect();
            let mut r = BufReader::new(std::io::Cursor::new(framed(tag, &body)));
            let _ = read_message(&mut r);
            let mut s = &framed(0, &body)[1..];
            let _ = read_startup(&mut s);
        }
    }
}
