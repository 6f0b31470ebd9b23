//! The PostgreSQL v3 wire protocol: reading frontend messages and writing
//! backend messages over a byte stream.
//!
//! Reading has two steps, as in PostgreSQL's `pq_getmessage` and the
//! `pq_getmsg*` functions. Framing (`read_frame`, `read_startup_packet`)
//! checks the type byte before anything else, then the length word
//! against the message type's limit, and reads the body as it arrives:
//! a length word that lies costs no memory beyond `PREALLOC` until the
//! bytes are actually there. A framing failure loses the message
//! boundary, so it ends the connection. Decoding (`decode`,
//! `decode_startup`) works on a byte buffer; a body that does not parse is
//! an ordinary ERROR (08P01, or 22021 for invalid UTF-8) and the session
//! carries on, as in PostgreSQL. Neither step panics on any input.

use std::io::{self, BufWriter, Read, Write};

use tusk_types::{sqlstate, PgError, Severity};

/// PostgreSQL's PQ_LARGE_MESSAGE_LIMIT (MaxAllocSize - 1): the limit of
/// Query, Parse, Bind, CopyData and FunctionCall.
pub const MAX_MESSAGE_LEN: usize = 0x3fff_fffe;
/// PostgreSQL's PQ_SMALL_MESSAGE_LIMIT: the limit of every other message.
pub const MAX_SMALL_MESSAGE_LEN: usize = 10_000;
/// PostgreSQL's MAX_STARTUP_PACKET_LENGTH (after the length word).
pub const MAX_STARTUP_LEN: usize = 10_000;
/// Bytes of a message body reserved before they arrive; the rest grows as
/// the data does.
pub const PREALLOC: usize = 64 * 1024;

pub const PROTOCOL_3: u32 = 196_608;
pub const SSL_REQUEST: u32 = 80_877_103;
pub const GSSENC_REQUEST: u32 = 80_877_104;
pub const CANCEL_REQUEST: u32 = 80_877_102;

/// The first packet of a connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Startup {
    /// A StartupMessage. `protocol_options` are the `_pq_.` parameters,
    /// which Tusk (like PostgreSQL 15) does not know; with a minor version
    /// above 0 they call for a NegotiateProtocolVersion.
    Params { version: u32, params: Vec<(String, String)>, protocol_options: Vec<String> },
    Ssl,
    GssEnc,
    Cancel { pid: i32, key: i32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
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
}

/// One framed message: its type byte and body.
#[derive(Debug)]
pub struct RawMessage {
    pub tag: u8,
    pub body: Vec<u8>,
}

impl RawMessage {
    /// Whether an error in this message skips the messages up to Sync
    /// (PostgreSQL's `doing_extended_query_message`).
    pub fn is_extended(&self) -> bool {
        matches!(self.tag, b'P' | b'B' | b'D' | b'E' | b'C' | b'H')
    }
}

/// Why reading a message failed. Every case ends the connection.
#[derive(Debug)]
pub enum ReadError {
    /// The type byte is not one the caller accepts here.
    UnexpectedType(u8),
    /// The stream broke or ended inside a message, or the length word was
    /// out of range. PostgreSQL logs these (COMMERROR) and closes without
    /// a reply: the message boundary is lost.
    Lost(&'static str),
    /// The socket's read timeout (idle_in_transaction_session_timeout)
    /// expired.
    Timeout,
}

/// Why reading the startup packet failed. Every case ends the connection.
#[derive(Debug)]
pub enum StartupError {
    /// Closed without a reply (PostgreSQL's COMMERROR): an incomplete
    /// packet or an impossible length.
    Lost(&'static str),
    /// Reply with this FATAL error, then close.
    Fatal(PgError),
    /// A protocol version below 3: the FATAL error goes out in protocol
    /// 2's format, which is what such a client reads.
    FatalV2(PgError),
}

fn violation(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

/// The byte length of the UTF-8 character that `first` begins
/// (PostgreSQL's pg_utf_mblen).
fn utf8_mblen(first: u8) -> usize {
    if first & 0x80 == 0 {
        1
    } else if first & 0xe0 == 0xc0 {
        2
    } else if first & 0xf0 == 0xe0 {
        3
    } else if first & 0xf8 == 0xf0 {
        4
    } else {
        1
    }
}

/// Checks that `bytes` is valid UTF-8, with PostgreSQL's error otherwise
/// (report_invalid_encoding: the bytes of the first bad character).
pub fn check_utf8(bytes: &[u8]) -> Result<&str, PgError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let bad = &bytes[e.valid_up_to()..];
        let n = bad.first().map(|&b| utf8_mblen(b)).unwrap_or(1).min(bad.len());
        let shown: Vec<String> = bad[..n].iter().map(|b| format!("0x{b:02x}")).collect();
        PgError::new(sqlstate::CHARACTER_NOT_IN_REPERTOIRE, format!("invalid byte sequence for encoding \"UTF8\": {}", shown.join(" ")))
    })
}

/// A cursor over one message's body, with the errors of PostgreSQL's
/// pq_getmsg* functions.
struct Body<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Body<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], PgError> {
        if n > self.buf.len() - self.pos {
            return Err(violation("insufficient data left in message"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, PgError> {
        Ok(self.bytes(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, PgError> {
        let b = self.bytes(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    /// A count: pq_getmsgint(msg, 2) is unsigned.
    fn count(&mut self) -> Result<usize, PgError> {
        Ok(self.i16()? as u16 as usize)
    }
    fn i32(&mut self) -> Result<i32, PgError> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A NUL-terminated string, which must be valid UTF-8.
    fn cstr(&mut self) -> Result<String, PgError> {
        let rest = &self.buf[self.pos..];
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| violation("invalid string in message"))?;
        let s = check_utf8(&rest[..end])?.to_string();
        self.pos += end + 1;
        Ok(s)
    }
    /// `n` items, each read by `f`. The count comes from the message, so
    /// the vector only reserves what the remaining bytes can hold.
    fn list<T>(&mut self, n: usize, item_size: usize, mut f: impl FnMut(&mut Self) -> Result<T, PgError>) -> Result<Vec<T>, PgError> {
        let mut v = Vec::with_capacity(n.min((self.buf.len() - self.pos) / item_size.max(1)));
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(v)
    }
    fn finish(&self) -> Result<(), PgError> {
        if self.pos != self.buf.len() {
            return Err(violation("invalid message format"));
        }
        Ok(())
    }
}

/// Reads exactly `buf.len()` bytes; false on a clean EOF before the first byte.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<bool> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) if done == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads `len` bytes as they arrive: memory follows the data received,
/// not the length a peer claims.
fn read_body<R: Read>(r: &mut R, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_body_into(r, len, &mut buf)?;
    Ok(buf)
}

/// Reads a message body of `len` bytes into `buf` (replacing what it
/// held). Up to PREALLOC the room is made at once and filled; past it the
/// buffer grows as bytes actually arrive, so a length word alone cannot
/// make the server allocate much.
fn read_body_into<R: Read>(r: &mut R, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    if len <= PREALLOC {
        buf.resize(len, 0);
        return r.read_exact(buf);
    }
    buf.reserve(PREALLOC);
    r.take(len as u64).read_to_end(buf)?;
    if buf.len() < len {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// The largest message of type `tag` after startup, None for a type a
/// client may not send (PostgreSQL's SocketBackend).
pub fn message_limit(tag: u8) -> Option<usize> {
    match tag {
        b'Q' | b'F' | b'P' | b'B' | b'd' => Some(MAX_MESSAGE_LEN),
        b'X' | b'C' | b'D' | b'E' | b'H' | b'S' | b'c' | b'f' => Some(MAX_SMALL_MESSAGE_LEN),
        _ => None,
    }
}

/// The largest message of type `tag` during COPY FROM STDIN (CopyGetData).
pub fn copy_message_limit(tag: u8) -> Option<usize> {
    match tag {
        b'd' => Some(MAX_MESSAGE_LEN),
        b'c' | b'f' | b'H' | b'S' => Some(MAX_SMALL_MESSAGE_LEN),
        _ => None,
    }
}

/// Reads one message, its type checked by `limit` before its length is
/// read. Ok(None) on a clean end of stream between messages.
pub fn read_frame<R: Read>(r: &mut R, limit: fn(u8) -> Option<usize>) -> Result<Option<RawMessage>, ReadError> {
    let mut body = Vec::new();
    Ok(read_frame_into(r, limit, &mut body)?.map(|tag| RawMessage { tag, body }))
}

/// `read_frame` into a buffer the caller reuses (COPY FROM STDIN gets a
/// message per row from clients such as pgbench); returns the type.
pub fn read_frame_into<R: Read>(r: &mut R, limit: fn(u8) -> Option<usize>, body: &mut Vec<u8>) -> Result<Option<u8>, ReadError> {
    let mut tag = [0u8; 1];
    match read_full(r, &mut tag) {
        Ok(false) => return Ok(None),
        Ok(true) => {}
        Err(e) if is_timeout(&e) => return Err(ReadError::Timeout),
        // A reset between messages is the client going away.
        Err(_) => return Ok(None),
    }
    let tag = tag[0];
    let max = limit(tag).ok_or(ReadError::UnexpectedType(tag))?;
    let mut len = [0u8; 4];
    match read_full(r, &mut len) {
        Ok(true) => {}
        Err(e) if is_timeout(&e) => return Err(ReadError::Timeout),
        _ => return Err(ReadError::Lost("unexpected EOF within message length word")),
    }
    let len = i32::from_be_bytes(len);
    if len < 4 || len as usize > max {
        return Err(ReadError::Lost("invalid message length"));
    }
    match read_body_into(r, len as usize - 4, body) {
        Ok(()) => Ok(Some(tag)),
        Err(e) if is_timeout(&e) => Err(ReadError::Timeout),
        Err(_) => Err(ReadError::Lost("incomplete message from client")),
    }
}

/// Reads and decodes one message of the main loop.
pub fn read_message<R: Read>(r: &mut R) -> Result<Option<Result<Frontend, PgError>>, ReadError> {
    Ok(read_frame(r, message_limit)?.map(|m| decode(m.tag, m.body)))
}

/// Decodes a message body (PostgreSQL's pq_getmsg* checks, in the order
/// PostgresMain and exec_*_message make them).
pub fn decode(tag: u8, body: Vec<u8>) -> Result<Frontend, PgError> {
    let mut b = Body { buf: &body, pos: 0 };
    let msg = match tag {
        b'Q' => Frontend::Query(b.cstr()?),
        b'P' => {
            let name = b.cstr()?;
            let query = b.cstr()?;
            let n = b.count()?;
            let param_types = b.list(n, 4, |b| b.i32().map(|t| t as u32))?;
            Frontend::Parse { name, query, param_types }
        }
        b'B' => {
            let portal = b.cstr()?;
            let statement = b.cstr()?;
            let nf = b.count()?;
            let param_formats = b.list(nf, 2, Body::i16)?;
            let np = b.count()?;
            let params = b.list(np, 4, |b| {
                let len = b.i32()?;
                // -1 is NULL; any other negative length is a short message.
                Ok(if len == -1 { None } else { Some(b.bytes(usize::try_from(len).unwrap_or(usize::MAX))?.to_vec()) })
            })?;
            let nr = b.count()?;
            let result_formats = b.list(nr, 2, Body::i16)?;
            Frontend::Bind { portal, statement, param_formats, params, result_formats }
        }
        b'D' => {
            let kind = b.u8()?;
            let name = b.cstr()?;
            b.finish()?;
            if kind != b'S' && kind != b'P' {
                return Err(violation(format!("invalid DESCRIBE message subtype {kind}")));
            }
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
            b.finish()?;
            if kind != b'S' && kind != b'P' {
                return Err(violation(format!("invalid CLOSE message subtype {kind}")));
            }
            Frontend::Close { kind, name }
        }
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        // PostgreSQL reads neither body.
        b'X' => return Ok(Frontend::Terminate),
        b'c' => return Ok(Frontend::CopyDone),
        b'd' => return Ok(Frontend::CopyData(body)),
        b'f' => Frontend::CopyFail(b.cstr()?),
        b'F' => return Ok(Frontend::FunctionCall),
        other => return Err(violation(format!("invalid frontend message type {other}"))),
    };
    b.finish()?;
    Ok(msg)
}

/// Reads the startup packet: its length word and body. Ok(None) if the
/// stream ends before any byte (a port probe; PostgreSQL says nothing).
pub fn read_startup_packet<R: Read>(r: &mut R) -> Result<Option<Vec<u8>>, StartupError> {
    let mut len = [0u8; 4];
    match read_full(r, &mut len[..1]) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(_) => return Err(StartupError::Lost("incomplete startup packet")),
    }
    if !matches!(read_full(r, &mut len[1..]), Ok(true)) {
        return Err(StartupError::Lost("incomplete startup packet"));
    }
    let len = i32::from_be_bytes(len).wrapping_sub(4);
    if len < 4 || len as usize > MAX_STARTUP_LEN {
        return Err(StartupError::Lost("invalid length of startup packet"));
    }
    read_body(r, len as usize).map(Some).map_err(|_| StartupError::Lost("incomplete startup packet"))
}

/// Reads and decodes the startup packet; see `decode_startup`.
pub fn read_startup<R: Read>(r: &mut R, ssl_done: bool, gss_done: bool) -> Result<Option<Startup>, StartupError> {
    match read_startup_packet(r)? {
        Some(buf) => decode_startup(&buf, ssl_done, gss_done).map(Some),
        None => Ok(None),
    }
}

/// Decodes a startup packet (without its length word) as PostgreSQL's
/// ProcessStartupPacket does. An SSL (GSS) request after one was already
/// answered is just an unknown protocol version. Parameter names and
/// values need not be UTF-8 (PostgreSQL takes them as bytes): invalid
/// sequences become U+FFFD, and the name lookups then fail as they would.
pub fn decode_startup(buf: &[u8], ssl_done: bool, gss_done: bool) -> Result<Startup, StartupError> {
    let Some(code) = buf.get(..4) else {
        return Err(StartupError::Lost("invalid length of startup packet"));
    };
    let code = u32::from_be_bytes([code[0], code[1], code[2], code[3]]);
    match code {
        CANCEL_REQUEST => {
            if buf.len() != 12 {
                return Err(StartupError::Lost("invalid length of cancel request packet"));
            }
            let pid = i32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
            let key = i32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
            return Ok(Startup::Cancel { pid, key });
        }
        SSL_REQUEST if !ssl_done => return Ok(Startup::Ssl),
        GSSENC_REQUEST if !gss_done => return Ok(Startup::GssEnc),
        _ => {}
    }
    let (major, minor) = (code >> 16, code & 0xffff);
    if major != 3 {
        let e = PgError::fatal(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
        );
        return Err(if major < 3 { StartupError::FatalV2(e) } else { StartupError::Fatal(e) });
    }
    // PostgreSQL's loop: strings run to a NUL (or the packet's end); the
    // packet must end with the terminator right after the last pair.
    let len = buf.len();
    let cstr_at = |at: usize| -> &[u8] {
        let rest = &buf[at.min(len)..];
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
    };
    let mut params = Vec::new();
    let mut protocol_options = Vec::new();
    let mut offset = 4;
    while offset < len {
        let name = cstr_at(offset);
        if name.is_empty() {
            break;
        }
        let value_at = offset + name.len() + 1;
        if value_at >= len {
            break;
        }
        let value = cstr_at(value_at);
        let name = String::from_utf8_lossy(name).into_owned();
        if name.starts_with("_pq_.") {
            protocol_options.push(name);
        } else {
            params.push((name, String::from_utf8_lossy(value).into_owned()));
        }
        offset = value_at + value.len() + 1;
    }
    if offset + 1 != len {
        return Err(StartupError::Fatal(PgError::fatal(
            sqlstate::PROTOCOL_VIOLATION,
            "invalid startup packet layout: expected terminator as last byte",
        )));
    }
    Ok(Startup::Params { version: code, params, protocol_options })
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

    /// An authentication request ('R'): its code and data (a salt, SASL
    /// mechanisms or a SASL challenge).
    pub fn auth_request(&mut self, code: i32, data: &[u8]) -> io::Result<()> {
        self.msg(b'R', |b| {
            b.extend_from_slice(&code.to_be_bytes());
            b.extend_from_slice(data);
        })
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

    /// NotificationResponse ('A'), written straight into the buffer: a
    /// listener may be sent many at once.
    pub fn notification(&mut self, pid: i32, channel: &str, payload: &str) -> io::Result<()> {
        let len = 4 + 4 + channel.len() + 1 + payload.len() + 1;
        self.w.write_all(b"A")?;
        self.w.write_all(&(len as u32).to_be_bytes())?;
        self.w.write_all(&pid.to_be_bytes())?;
        self.w.write_all(channel.as_bytes())?;
        self.w.write_all(b"\0")?;
        self.w.write_all(payload.as_bytes())?;
        self.w.write_all(b"\0")
    }

    pub fn command_complete(&mut self, tag: &str) -> io::Result<()> {
        self.msg(b'C', |b| put_cstr(b, tag))
    }

    /// CopyInResponse / CopyOutResponse ('G' / 'H') for a COPY of
    /// `columns` columns: the overall format (0 text or CSV, 1 binary) and
    /// the same format code for every column.
    pub fn copy_response(&mut self, tag: u8, columns: usize, binary: bool) -> io::Result<()> {
        let format = binary as i16;
        self.msg(tag, |b| {
            b.push(format as u8);
            b.extend_from_slice(&(columns as i16).to_be_bytes());
            for _ in 0..columns {
                b.extend_from_slice(&format.to_be_bytes());
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

    /// NegotiateProtocolVersion: the newest protocol version Tusk speaks
    /// (3.0) and the `_pq_.` options it does not know.
    pub fn negotiate_protocol_version(&mut self, options: &[String]) -> io::Result<()> {
        self.msg(b'v', |b| {
            b.extend_from_slice(&PROTOCOL_3.to_be_bytes());
            b.extend_from_slice(&(options.len() as i32).to_be_bytes());
            for o in options {
                put_cstr(b, o);
            }
        })
    }

    /// An error in protocol 2's format ('E' and one line of text), for a
    /// client that asked for protocol 1 or 2.
    pub fn error_v2(&mut self, e: &PgError) -> io::Result<()> {
        self.w.write_all(b"E")?;
        self.w.write_all(format!("{}:  {}\n", e.severity.as_str(), e.message).as_bytes())?;
        self.w.write_all(&[0])
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
            if let Some(q) = &e.internal {
                b.push(b'p');
                put_cstr(b, &q.position.to_string());
                b.push(b'q');
                put_cstr(b, &q.query);
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
#[cfg(test)]
mod tests {
    use super::*;

    fn framed(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    fn read(bytes: &[u8]) -> Result<Option<Result<Frontend, PgError>>, ReadError> {
        let mut r = bytes;
        read_message(&mut r)
    }

    fn body_error(bytes: &[u8]) -> PgError {
        match read(bytes) {
            Ok(Some(Err(e))) => e,
            other => panic!("expected a body error, got {other:?}"),
        }
    }

    #[test]
    fn decodes_query_and_rejects_garbage() {
        assert!(matches!(read(&framed(b'Q', b"SELECT 1\0")), Ok(Some(Ok(Frontend::Query(q)))) if q == "SELECT 1"));
        assert!(matches!(read(b""), Ok(None)));
        // Body errors: the session goes on.
        assert_eq!(body_error(&framed(b'Q', b"SELECT 1")).message, "invalid string in message");
        assert_eq!(body_error(&framed(b'Q', b"SELECT 1\0x")).message, "invalid message format");
        let e = body_error(&framed(b'Q', b"SELECT '\xc3('\0"));
        assert_eq!((e.code, e.message.as_str()), (sqlstate::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"));
        let mut body = b"\0\0".to_vec();
        body.extend_from_slice(&(-1i16).to_be_bytes());
        assert_eq!(body_error(&framed(b'B', &body)).message, "insufficient data left in message");
        assert_eq!(body_error(&framed(b'D', b"Xx\0")).message, "invalid DESCRIBE message subtype 88");
        assert_eq!(body_error(&framed(b'C', b"Xx\0")).message, "invalid CLOSE message subtype 88");
        // Framing errors: the connection ends.
        assert!(matches!(read(&[b'Q', 0, 0, 0, 2]), Err(ReadError::Lost("invalid message length"))));
        assert!(matches!(read(&[b'Q', 0xff, 0xff, 0xff, 0xf0]), Err(ReadError::Lost("invalid message length"))));
        assert!(matches!(read(&[b'Q', 0x3f, 0xff, 0xff, 0xff]), Err(ReadError::Lost("invalid message length"))));
        assert!(matches!(read(&[b'S', 0, 0, 0x27, 0x15]), Err(ReadError::Lost("invalid message length"))));
        assert!(matches!(read(&[b'Q', 0, 0, 0, 20, b'S']), Err(ReadError::Lost("incomplete message from client"))));
        assert!(matches!(read(&[b'Q', 0, 0]), Err(ReadError::Lost(_))));
        // The type is checked before the length: a StartupMessage mid-session.
        assert!(matches!(read(&[0, 0, 0, 8]), Err(ReadError::UnexpectedType(0))));
        assert!(matches!(read(&framed(b'p', b"pw\0")), Err(ReadError::UnexpectedType(b'p'))));
        // Bodies PostgreSQL does not read.
        assert!(matches!(read(&framed(b'X', b"junk")), Ok(Some(Ok(Frontend::Terminate)))));
        assert!(matches!(read(&framed(b'c', b"junk")), Ok(Some(Ok(Frontend::CopyDone)))));
    }

    #[test]
    fn parse_takes_up_to_65535_parameter_types() {
        let mut body = b"\0SELECT 1\0".to_vec();
        body.extend_from_slice(&u16::MAX.to_be_bytes());
        for _ in 0..u16::MAX {
            body.extend_from_slice(&23u32.to_be_bytes());
        }
        assert!(matches!(read(&framed(b'P', &body)), Ok(Some(Ok(Frontend::Parse { param_types, .. }))) if param_types.len() == 65535));
    }

    #[test]
    fn startup_packets() {
        let packet = |version: u32, rest: &[u8]| {
            let mut v = version.to_be_bytes().to_vec();
            v.extend_from_slice(rest);
            v
        };
        let ok = decode_startup(&packet(PROTOCOL_3, b"user\0bob\0_pq_.x\0y\0\0"), false, false);
        assert!(matches!(ok, Ok(Startup::Params { ref params, ref protocol_options, .. })
            if params == &[("user".to_string(), "bob".to_string())] && protocol_options == &["_pq_.x".to_string()]));
        for bad in [&b"user\0bob\0"[..], b"user\0bob\0database\0", b"user\0bob\0\0junk", b"user"] {
            assert!(matches!(decode_startup(&packet(PROTOCOL_3, bad), false, false), Err(StartupError::Fatal(e)) if e.code == sqlstate::PROTOCOL_VIOLATION));
        }
        assert!(matches!(decode_startup(&packet(0x20000, b"\0"), false, false), Err(StartupError::FatalV2(_))));
        assert!(matches!(decode_startup(&packet(0x40000, b"\0"), false, false), Err(StartupError::Fatal(e)) if e.code == sqlstate::FEATURE_NOT_SUPPORTED));
        assert!(matches!(decode_startup(&packet(SSL_REQUEST, b""), false, false), Ok(Startup::Ssl)));
        assert!(matches!(decode_startup(&packet(SSL_REQUEST, b""), true, false), Err(StartupError::Fatal(e)) if e.message.contains("1234.5679")));
        assert!(matches!(decode_startup(&packet(CANCEL_REQUEST, b"12345678"), false, false), Ok(Startup::Cancel { .. })));
        assert!(matches!(decode_startup(&packet(CANCEL_REQUEST, b"1234"), false, false), Err(StartupError::Lost(_))));
        // Lengths.
        let mut r: &[u8] = &[0, 0, 0, 4];
        assert!(matches!(read_startup(&mut r, false, false), Err(StartupError::Lost("invalid length of startup packet"))));
        let mut r: &[u8] = b"GET / HTTP/1.1\r\n";
        assert!(matches!(read_startup(&mut r, false, false), Err(StartupError::Lost("invalid length of startup packet"))));
        let mut r: &[u8] = &[0, 0];
        assert!(matches!(read_startup(&mut r, false, false), Err(StartupError::Lost("incomplete startup packet"))));
        let mut r: &[u8] = &[];
        assert!(matches!(read_startup(&mut r, false, false), Ok(None)));
        // Invalid UTF-8 in names and values is not a decoding error.
        assert!(matches!(decode_startup(&packet(PROTOCOL_3, b"user\0\xff\0\0"), false, false), Ok(Startup::Params { ref params, .. }) if params[0].1 == "\u{fffd}"));
    }
}
