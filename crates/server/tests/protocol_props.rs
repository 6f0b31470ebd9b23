//! Property-based tests of the wire protocol decoder (`tusk_server::protocol`):
//! arbitrary bytes and mutations of valid messages and startup packets.
//!
//! For every input the decoder must not panic, must not allocate in
//! proportion to a length field rather than to the bytes it was given
//! (a counting allocator checks the peak of live bytes during each call),
//! must decode every valid message to what was encoded, and must return an
//! error for a message that is truncated, carries trailing garbage, lies
//! about its length or holds invalid UTF-8.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;
use tusk_server::protocol::{self, Frontend, ReadError, Startup, StartupError};

// ---------------------------------------------------------------- allocation accounting

/// Counts the live bytes allocated by the current thread, so that one
/// decoder call's peak can be measured while other tests run in parallel.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the peak of extra live bytes it
/// allocated on this thread.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    let peak = PEAK.with(Cell::get) - start;
    (r, peak.max(0) as usize)
}

/// What decoding `input_len` bytes may cost: proportional to the input
/// (a Bind's parameter vector is the largest multiple), plus the body
/// buffer reserved before any bytes arrive. Never anything near a length
/// field's claim of up to 1 GB.
fn allowed(input_len: usize) -> usize {
    8 * input_len + protocol::PREALLOC + 4096
}

// ---------------------------------------------------------------- encoders

fn framed(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

/// The body of a message, as a client would send it.
fn encode_body(m: &Frontend) -> (u8, Vec<u8>) {
    let mut b = Vec::new();
    let tag = match m {
        Frontend::Query(q) => {
            put_str(&mut b, q);
            b'Q'
        }
        Frontend::Parse { name, query, param_types } => {
            put_str(&mut b, name);
            put_str(&mut b, query);
            b.extend_from_slice(&(param_types.len() as u16).to_be_bytes());
            for t in param_types {
                b.extend_from_slice(&t.to_be_bytes());
            }
            b'P'
        }
        Frontend::Bind { portal, statement, param_formats, params, result_formats } => {
            put_str(&mut b, portal);
            put_str(&mut b, statement);
            b.extend_from_slice(&(param_formats.len() as u16).to_be_bytes());
            for f in param_formats {
                b.extend_from_slice(&f.to_be_bytes());
            }
            b.extend_from_slice(&(params.len() as u16).to_be_bytes());
            for p in params {
                match p {
                    None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                    Some(v) => {
                        b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                        b.extend_from_slice(v);
                    }
                }
            }
            b.extend_from_slice(&(result_formats.len() as u16).to_be_bytes());
            for f in result_formats {
                b.extend_from_slice(&f.to_be_bytes());
            }
            b'B'
        }
        Frontend::Describe { kind, name } => {
            b.push(*kind);
            put_str(&mut b, name);
            b'D'
        }
        Frontend::Execute { portal, max_rows } => {
            put_str(&mut b, portal);
            b.extend_from_slice(&max_rows.to_be_bytes());
            b'E'
        }
        Frontend::Close { kind, name } => {
            b.push(*kind);
            put_str(&mut b, name);
            b'C'
        }
        Frontend::Sync => b'S',
        Frontend::Flush => b'H',
        Frontend::Terminate => b'X',
        Frontend::CopyData(d) => {
            b.extend_from_slice(d);
            b'd'
        }
        Frontend::CopyDone => b'c',
        Frontend::CopyFail(m) => {
            put_str(&mut b, m);
            b'f'
        }
        Frontend::FunctionCall => b'F',
    };
    (tag, b)
}

fn encode(m: &Frontend) -> Vec<u8> {
    let (tag, body) = encode_body(m);
    framed(tag, &body)
}

fn encode_startup(version: u32, params: &[(String, String)]) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    for (k, v) in params {
        put_str(&mut body, k);
        put_str(&mut body, v);
    }
    body.push(0);
    let mut v = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    v.extend_from_slice(&body);
    v
}

// ---------------------------------------------------------------- strategies

/// Strings as they appear in messages: no NUL, any other character.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..24).prop_map(|v| v.into_iter().collect())
}

fn frontend() -> impl Strategy<Value = Frontend> {
    let kind = prop::sample::select(vec![b'S', b'P']);
    prop_oneof![
        text().prop_map(Frontend::Query),
        (text(), text(), prop::collection::vec(any::<u32>(), 0..8))
            .prop_map(|(name, query, param_types)| Frontend::Parse { name, query, param_types }),
        (
            text(),
            text(),
            prop::collection::vec(any::<i16>(), 0..4),
            prop::collection::vec(prop::option::of(prop::collection::vec(any::<u8>(), 0..16)), 0..6),
            prop::collection::vec(any::<i16>(), 0..4),
        )
            .prop_map(|(portal, statement, param_formats, params, result_formats)| Frontend::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats
            }),
        (kind.clone(), text()).prop_map(|(kind, name)| Frontend::Describe { kind, name }),
        (text(), any::<i32>()).prop_map(|(portal, max_rows)| Frontend::Execute { portal, max_rows }),
        (kind, text()).prop_map(|(kind, name)| Frontend::Close { kind, name }),
        Just(Frontend::Sync),
        Just(Frontend::Flush),
        Just(Frontend::Terminate),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(Frontend::CopyData),
        Just(Frontend::CopyDone),
        text().prop_map(Frontend::CopyFail),
    ]
}

/// Ways to damage a byte stream.
#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Set { at: usize, byte: u8 },
    Insert { at: usize, byte: u8 },
    Remove { at: usize },
    Truncate { at: usize },
    /// Overwrite a 4-byte big-endian word (a length field, when `at` is 1).
    Word { at: usize, value: u32 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let lengths = prop_oneof![
        any::<u32>(),
        Just(0u32),
        Just(3),
        Just(0x3fff_fffe),
        Just(0x3fff_ffff),
        Just(0x4000_0000),
        Just(0x7fff_ffff),
        Just(0x8000_0000),
        Just(u32::MAX),
        Just(10_001),
    ];
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Remove { at }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (prop_oneof![Just(0usize), Just(1), any::<usize>()], lengths).prop_map(|(at, value)| Mutation::Word { at, value }),
    ]
}

fn mutate(mut v: Vec<u8>, ms: &[Mutation]) -> Vec<u8> {
    for m in ms {
        let n = v.len();
        match *m {
            Mutation::Flip { at, xor } if n > 0 => v[at % n] ^= xor,
            Mutation::Set { at, byte } if n > 0 => v[at % n] = byte,
            Mutation::Insert { at, byte } => v.insert(at % (n + 1), byte),
            Mutation::Remove { at } if n > 0 => {
                v.remove(at % n);
            }
            Mutation::Truncate { at } => v.truncate(at % (n + 1)),
            Mutation::Word { at, value } if n >= 4 => {
                let at = at % (n - 3);
                v[at..at + 4].copy_from_slice(&value.to_be_bytes());
            }
            _ => {}
        }
    }
    v
}

/// Reads messages from `input` until the end or a framing error, as the
/// session loop does; every step is measured against the input's size.
fn read_all(input: &[u8]) -> Vec<Result<Option<Result<Frontend, tusk_types::PgError>>, ReadError>> {
    let mut r = input;
    let mut out = Vec::new();
    loop {
        let (step, peak) = measured(|| protocol::read_message(&mut r));
        assert!(peak <= allowed(input.len()), "decoding {} bytes allocated {peak} bytes", input.len());
        let stop = !matches!(step, Ok(Some(_)));
        out.push(step);
        if stop {
            return out;
        }
    }
}

fn read_startup_measured(input: &[u8]) -> Result<Option<Startup>, StartupError> {
    let mut r = input;
    let (result, peak) = measured(|| protocol::read_startup(&mut r, false, false));
    assert!(peak <= allowed(input.len()), "decoding a {}-byte startup packet allocated {peak} bytes", input.len());
    result
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes at all: no panic, bounded memory, and the reads end.
    #[test]
    fn arbitrary_bytes(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let steps = read_all(&input);
        prop_assert!(steps.len() <= input.len() / 5 + 1);
        let _ = read_startup_measured(&input);
    }

    /// Arbitrary bodies behind every message type byte.
    #[test]
    fn arbitrary_bodies(tag in any::<u8>(), body in prop::collection::vec(any::<u8>(), 0..128)) {
        let input = framed(tag, &body);
        let steps = read_all(&input);
        if protocol::message_limit(tag).is_none() {
            prop_assert!(matches!(steps[0], Err(ReadError::UnexpectedType(t)) if t == tag));
        } else {
            prop_assert!(matches!(steps[0], Ok(Some(_))));
        }
    }

    /// Valid messages decode to what was encoded, in sequence.
    #[test]
    fn valid_messages_round_trip(msgs in prop::collection::vec(frontend(), 1..6)) {
        let input: Vec<u8> = msgs.iter().flat_map(encode).collect();
        let steps = read_all(&input);
        prop_assert_eq!(steps.len(), msgs.len() + 1);
        for (step, m) in steps.iter().zip(&msgs) {
            match step {
                Ok(Some(Ok(got))) => prop_assert_eq!(got, m),
                other => prop_assert!(false, "{:?} decoded as {:?}", m, other),
            }
        }
        prop_assert!(matches!(steps.last(), Some(Ok(None))));
    }

    /// Damaged streams of valid messages: no panic, bounded memory.
    #[test]
    fn mutated_messages(msgs in prop::collection::vec(frontend(), 1..4), ms in prop::collection::vec(mutation(), 1..4)) {
        let input: Vec<u8> = msgs.iter().flat_map(encode).collect();
        let _ = read_all(&mutate(input, &ms));
    }

    /// A stream cut inside a message is a lost connection, never a message.
    #[test]
    fn truncated_message_is_lost(m in frontend(), cut in any::<usize>()) {
        let input = encode(&m);
        let cut = 1 + cut % (input.len() - 1);
        let steps = read_all(&input[..cut]);
        prop_assert!(matches!(steps.as_slice(), [Err(ReadError::Lost(_))]), "{:?}", steps);
    }

    /// A length word that claims more than was sent, up to the 1 GB
    /// limit: lost, without allocating the claim. Beyond the type's
    /// limit: lost at once.
    #[test]
    fn lying_length(m in frontend(), claim in 0u32..=u32::MAX) {
        let mut input = encode(&m);
        let actual = input.len() as u32 - 1;
        prop_assume!(claim != actual);
        input[1..5].copy_from_slice(&claim.to_be_bytes());
        let steps = read_all(&input);
        if claim > actual || (claim as i32) < 4 {
            prop_assert!(matches!(steps.as_slice(), [Err(ReadError::Lost(_))]), "{:?}", steps);
        } else {
            // A shorter claim ends the message early: the rest is read as
            // further messages and must not decode as the original.
            prop_assert!(!matches!(&steps[0], Ok(Some(Ok(got))) if got == &m && claim != actual));
        }
    }

    /// Bytes after a message's last field are an error (for the types
    /// PostgreSQL checks with pq_getmsgend), and the session goes on.
    #[test]
    fn trailing_garbage_is_an_error(m in frontend(), extra in prop::collection::vec(any::<u8>(), 1..8)) {
        let (tag, mut body) = encode_body(&m);
        prop_assume!(!matches!(tag, b'd' | b'X' | b'c' | b'F'));
        body.extend_from_slice(&extra);
        let steps = read_all(&framed(tag, &body));
        match &steps[0] {
            Ok(Some(Err(e))) => prop_assert_eq!(e.code, "08P01"),
            other => prop_assert!(false, "{:?}", other),
        }
        prop_assert!(matches!(steps[1], Ok(None)));
    }

    /// Invalid UTF-8 in a Query string: 22021, and the session goes on.
    #[test]
    fn invalid_utf8_query(prefix in text(), bad in prop::sample::select(vec![
        vec![0xffu8], vec![0xc3, 0x28], vec![0xe2, 0x82], vec![0xed, 0xa0, 0x80], vec![0xf4, 0x90, 0x80, 0x80], vec![0xc0, 0xaf],
    ]), suffix in text()) {
        let mut body = prefix.into_bytes();
        body.extend_from_slice(&bad);
        body.extend_from_slice(suffix.as_bytes());
        body.push(0);
        let mut input = framed(b'Q', &body);
        input.extend_from_slice(&encode(&Frontend::Sync));
        let steps = read_all(&input);
        match &steps[0] {
            Ok(Some(Err(e))) => {
                prop_assert_eq!(e.code, "22021");
                prop_assert!(e.message.starts_with("invalid byte sequence for encoding \"UTF8\": 0x"), "{}", e.message);
            }
            other => prop_assert!(false, "{:?}", other),
        }
        prop_assert!(matches!(steps[1], Ok(Some(Ok(Frontend::Sync)))));
    }

    /// Parse and Bind counts larger than the data: an error, with memory
    /// bounded by the bytes sent rather than by the count.
    #[test]
    fn counts_beyond_the_data(count in 1u16..=u16::MAX, have in 0usize..8, which in 0..3usize) {
        let mut body = b"s\0".to_vec();
        let tag = if which == 0 {
            body.extend_from_slice(b"SELECT 1\0");
            b'P'
        } else {
            body.extend_from_slice(b"\0");
            if which == 2 {
                body.extend_from_slice(&0u16.to_be_bytes());
            }
            b'B'
        };
        body.extend_from_slice(&count.to_be_bytes());
        // Parameter types and (empty) parameter values take 4 bytes each,
        // parameter formats 2: fewer items than the count claims.
        let unit = if which == 1 { 2 } else { 4 };
        let have = have.min(count as usize - 1);
        body.extend(std::iter::repeat(0u8).take(have * unit));
        let steps = read_all(&framed(tag, &body));
        match &steps[0] {
            Ok(Some(Err(e))) => prop_assert_eq!(&e.message, "insufficient data left in message"),
            other => prop_assert!(false, "{:?}", other),
        }
    }

    /// Startup packets: valid ones decode, damaged ones never panic, and
    /// cut ones are lost.
    #[test]
    fn startup_packets(
        params in prop::collection::vec((text().prop_filter("a name", |s| !s.is_empty() && !s.starts_with("_pq_.")), text()), 0..5),
        minor in 0u32..3,
        ms in prop::collection::vec(mutation(), 1..4),
        cut in any::<usize>(),
    ) {
        let version = (3 << 16) | minor;
        let packet = encode_startup(version, &params);
        if packet.len() <= protocol::MAX_STARTUP_LEN + 4 {
            let got = read_startup_measured(&packet);
            prop_assert!(matches!(&got, Ok(Some(Startup::Params { version: v, params: p, protocol_options })) if *v == version && p == &params && protocol_options.is_empty()), "{:?}", got);
        }
        let cut = 1 + cut % (packet.len() - 1);
        prop_assert!(matches!(read_startup_measured(&packet[..cut]), Err(StartupError::Lost(_))));
        let _ = read_startup_measured(&mutate(packet, &ms));
    }

    /// Startup packets of other protocol versions: refused, in protocol 2's
    /// format below 3.
    #[test]
    fn startup_versions(version in any::<u32>()) {
        let packet = encode_startup(version, &[("user".into(), "u".into())]);
        let got = read_startup_measured(&packet);
        match version {
            protocol::SSL_REQUEST => prop_assert!(matches!(got, Ok(Some(Startup::Ssl)))),
            protocol::GSSENC_REQUEST => prop_assert!(matches!(got, Ok(Some(Startup::GssEnc)))),
            protocol::CANCEL_REQUEST => prop_assert!(matches!(got, Err(StartupError::Lost(_)))),
            v if v >> 16 == 3 => prop_assert!(matches!(got, Ok(Some(Startup::Params { .. }))), "{:?}", got),
            v if v >> 16 < 3 => prop_assert!(matches!(got, Err(StartupError::FatalV2(_)))),
            _ => prop_assert!(matches!(got, Err(StartupError::Fatal(ref e)) if e.code == "0A000")),
        }
    }
}

/// The claim of a huge message costs nothing until its bytes arrive.
#[test]
fn huge_claims_allocate_nothing_in_advance() {
    for (tag, claim) in [(b'Q', 0x3fff_fffeu32), (b'd', 0x3fff_fffe), (b'B', 0x2000_0000), (b'P', 0x0100_0000)] {
        let mut input = vec![tag];
        input.extend_from_slice(&claim.to_be_bytes());
        input.extend_from_slice(b"SELECT 1\0");
        let steps = read_all(&input);
        assert!(matches!(steps.as_slice(), [Err(ReadError::Lost("incomplete message from client"))]), "{steps:?}");
    }
    // Beyond the limits: refused before reading the body.
    for (tag, claim) in [(b'Q', 0x3fff_ffffu32), (b'S', 10_001), (b'E', 0x7fff_ffff), (b'D', 0x8000_0000)] {
        let mut input = vec![tag];
        input.extend_from_slice(&claim.to_be_bytes());
        let steps = read_all(&input);
        assert!(matches!(steps.as_slice(), [Err(ReadError::Lost("invalid message length"))]), "{steps:?}");
    }
    let mut startup = 10_008u32.to_be_bytes().to_vec();
    startup.extend_from_slice(&protocol::PROTOCOL_3.to_be_bytes());
    assert!(matches!(read_startup_measured(&startup), Err(StartupError::Lost("invalid length of startup packet"))));
}

/// The counting allocator sees this thread's allocations (so the bounds
/// above are not vacuous).
#[test]
fn allocation_accounting_works() {
    let (v, peak) = measured(|| vec![1u8; 1 << 20]);
    assert!(peak >= 1 << 20, "peak {peak}");
    drop(v);
}
