//! The network address types: inet and cidr (an IPv4 or IPv6 address
//! with a netmask length), macaddr (EUI-48) and macaddr8 (EUI-64), with
//! their text forms byte for byte as PostgreSQL 15 reads and prints them
//! (utils/adt/network.c, inet_net_pton.c, inet_cidr_ntop.c, mac.c, mac8.c),
//! their binary forms, their B-tree order and its memcomparable key.

use std::cmp::Ordering;

use crate::error::{sqlstate, PgError, PgResult};

/// PostgreSQL's PGSQL_AF_INET and PGSQL_AF_INET6: the family sorts first,
/// IPv4 before IPv6, and the binary form carries these numbers.
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 3;

/// An inet or cidr value: the two types share one representation; which
/// one a value is only matters to printing and to the cidr check on input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inet {
    pub family: u8,
    pub bits: u8,
    /// The address, left-aligned: an IPv4 address fills the first 4 bytes.
    pub addr: [u8; 16],
}

/// A value of one of the network address types, as a datum holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetAddr {
    Inet(Inet),
    MacAddr([u8; 6]),
    MacAddr8([u8; 8]),
}

impl NetAddr {
    /// B-tree order: network_cmp for inet/cidr, bytewise for MAC addresses.
    pub fn cmp(&self, other: &NetAddr) -> Ordering {
        match (self, other) {
            (NetAddr::Inet(a), NetAddr::Inet(b)) => a.cmp_network(b),
            (NetAddr::MacAddr(a), NetAddr::MacAddr(b)) => a.cmp(b),
            (NetAddr::MacAddr8(a), NetAddr::MacAddr8(b)) => a.cmp(b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            NetAddr::Inet(_) => 0,
            NetAddr::MacAddr(_) => 1,
            NetAddr::MacAddr8(_) => 2,
        }
    }

    /// A memcomparable key ordering as `cmp` does.
    pub fn encode_key(&self, out: &mut Vec<u8>) {
        match self {
            NetAddr::Inet(a) => {
                // network_cmp orders by family, the common prefix, the mask
                // length, then the whole address; the network part (host bits
                // cleared) followed by the mask length orders the same way.
                out.push(a.family);
                let net = a.network();
                out.extend_from_slice(&net.addr[..a.addr_len()]);
                out.push(a.bits);
                out.extend_from_slice(&a.addr[..a.addr_len()]);
            }
            NetAddr::MacAddr(m) => out.extend_from_slice(m),
            NetAddr::MacAddr8(m) => out.extend_from_slice(m),
        }
    }
}

fn invalid_syntax(type_name: &str, s: &str) -> PgError {
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type {type_name}: \"{s}\""))
}

impl Inet {
    pub fn max_bits(&self) -> u8 {
        if self.family == AF_INET {
            32
        } else {
            128
        }
    }

    pub fn addr_len(&self) -> usize {
        if self.family == AF_INET {
            4
        } else {
            16
        }
    }

    /// network_in: inet accepts a host address with an optional mask
    /// length; cidr also accepts abbreviated networks ("10", "192.168.1")
    /// whose length is implied classfully, but no bits right of the mask.
    pub fn parse(s: &str, is_cidr: bool) -> PgResult<Inet> {
        let type_name = if is_cidr { "cidr" } else { "inet" };
        let family = if s.contains(':') { AF_INET6 } else { AF_INET };
        let mut addr = [0u8; 16];
        let bits = if family == AF_INET6 {
            cidr_pton_ipv6(s.as_bytes(), &mut addr)
        } else if is_cidr {
            cidr_pton_ipv4(s.as_bytes(), &mut addr)
        } else {
            net_pton_ipv4(s.as_bytes(), &mut addr)
        };
        let max = if family == AF_INET { 32 } else { 128 };
        let bits = match bits {
            Some(b) if b <= max => b,
            _ => return Err(invalid_syntax(type_name, s)),
        };
        let v = Inet { family, bits: bits as u8, addr };
        if is_cidr && !v.host_bits_clear() {
            return Err(PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid cidr value: \"{s}\""))
                .with_detail("Value has bits set to right of mask."));
        }
        Ok(v)
    }

    /// addressOK: no bit set right of the mask.
    pub fn host_bits_clear(&self) -> bool {
        self.network().addr == self.addr
    }

    /// The address with the host bits cleared.
    pub fn network(&self) -> Inet {
        let mut out = *self;
        for i in 0..16 {
            out.addr[i] &= mask_byte(self.bits as usize, i);
        }
        out
    }

    /// The address with the host bits set.
    pub fn broadcast(&self) -> Inet {
        let mut out = *self;
        for i in 0..self.addr_len() {
            out.addr[i] |= !mask_byte(self.bits as usize, i);
        }
        out
    }

    pub fn netmask(&self) -> Inet {
        let mut out = Inet { family: self.family, bits: self.max_bits(), addr: [0; 16] };
        for i in 0..self.addr_len() {
            out.addr[i] = mask_byte(self.bits as usize, i);
        }
        out
    }

    pub fn hostmask(&self) -> Inet {
        let mut out = Inet { family: self.family, bits: self.max_bits(), addr: [0; 16] };
        for i in 0..self.addr_len() {
            out.addr[i] = !mask_byte(self.bits as usize, i);
        }
        out
    }

    /// inet_out / cidr_out: a cidr always shows its mask length, an inet
    /// only when it is not a single host.
    pub fn format(&self, is_cidr: bool) -> String {
        let mut s = self.ntop(self.bits as i32);
        if is_cidr && !s.contains('/') {
            s.push_str(&format!("/{}", self.bits));
        }
        s
    }

    /// host(): the address alone.
    pub fn host_text(&self) -> String {
        self.ntop(self.max_bits() as i32)
    }

    /// text(inet) (network_show): the address and always the mask length.
    pub fn show(&self) -> String {
        format!("{}/{}", self.host_text(), self.bits)
    }

    /// pg_inet_net_ntop: all four octets for IPv4; for IPv6 the longest run
    /// of zero words compressed to "::", an embedded IPv4 address in dotted
    /// form; the mask length unless it covers the whole address.
    fn ntop(&self, bits: i32) -> String {
        let mut out = String::new();
        if self.family == AF_INET {
            out = format!("{}.{}.{}.{}", self.addr[0], self.addr[1], self.addr[2], self.addr[3]);
            if bits != 32 {
                out.push_str(&format!("/{bits}"));
            }
            return out;
        }
        let src = &self.addr;
        let words: Vec<u32> = (0..8).map(|i| ((src[2 * i] as u32) << 8) | src[2 * i + 1] as u32).collect();
        let (mut best_base, mut best_len) = (-1i32, 0i32);
        let (mut cur_base, mut cur_len) = (-1i32, 0i32);
        for (i, w) in words.iter().enumerate() {
            if *w == 0 {
                if cur_base == -1 {
                    cur_base = i as i32;
                    cur_len = 1;
                } else {
                    cur_len += 1;
                }
            } else if cur_base != -1 {
                if best_base == -1 || cur_len > best_len {
                    best_base = cur_base;
                    best_len = cur_len;
                }
                cur_base = -1;
            }
        }
        if cur_base != -1 && (best_base == -1 || cur_len > best_len) {
            best_base = cur_base;
            best_len = cur_len;
        }
        if best_base != -1 && best_len < 2 {
            best_base = -1;
        }
        for i in 0..8i32 {
            if best_base != -1 && i >= best_base && i < best_base + best_len {
                if i == best_base {
                    out.push(':');
                }
                continue;
            }
            if i != 0 {
                out.push(':');
            }
            if i == 6
                && best_base == 0
                && (best_len == 6 || (best_len == 7 && words[7] != 0x0001) || (best_len == 5 && words[5] == 0xffff))
            {
                out.push_str(&format!("{}.{}.{}.{}", src[12], src[13], src[14], src[15]));
                break;
            }
            out.push_str(&format!("{:x}", words[i as usize]));
        }
        if best_base != -1 && best_base + best_len == 8 {
            out.push(':');
        }
        if bits != -1 && bits != 128 {
            out.push_str(&format!("/{bits}"));
        }
        out
    }

    /// abbrev(cidr) (pg_inet_cidr_ntop): only the octets or words the
    /// mask covers, then the mask length.
    pub fn cidr_abbrev(&self) -> String {
        let bits = self.bits as usize;
        let src = &self.addr;
        let mut out = String::new();
        if self.family == AF_INET {
            if bits == 0 {
                out.push('0');
            }
            let whole = bits / 8;
            for b in 0..whole {
                out.push_str(&src[b].to_string());
                if b + 1 < whole {
                    out.push('.');
                }
            }
            let part = bits % 8;
            if part > 0 {
                if !out.is_empty() {
                    out.push('.');
                }
                let m = (((1u32 << part) - 1) << (8 - part)) as u8;
                out.push_str(&(src[whole] & m).to_string());
            }
            out.push_str(&format!("/{bits}"));
            return out;
        }
        if bits == 0 {
            out.push_str("::");
        } else {
            let mut inbuf = [0u8; 16];
            let p = (bits + 7) / 8;
            inbuf[..p].copy_from_slice(&src[..p]);
            if bits % 8 != 0 {
                inbuf[p - 1] &= (0xffu32 << (8 - bits % 8)) as u8;
            }
            let s = inbuf;
            let mut words = (bits + 15) / 16;
            if words == 1 {
                words = 2;
            }
            let (mut zero_s, mut zero_l, mut tmp_s, mut tmp_l) = (0usize, 0usize, 0usize, 0usize);
            for i in (0..words * 2).step_by(2) {
                if s[i] | s[i + 1] == 0 {
                    if tmp_l == 0 {
                        tmp_s = i / 2;
                    }
                    tmp_l += 1;
                } else if tmp_l != 0 && zero_l < tmp_l {
                    zero_s = tmp_s;
                    zero_l = tmp_l;
                    tmp_l = 0;
                }
            }
            if tmp_l != 0 && zero_l < tmp_l {
                zero_s = tmp_s;
                zero_l = tmp_l;
            }
            let is_ipv4 = zero_l != words
                && zero_s == 0
                && (zero_l == 6 || (zero_l == 5 && s[10] == 0xff && s[11] == 0xff) || (zero_l == 7 && s[14] != 0 && s[15] != 1));
            let mut at = 0usize;
            for p in 0..words {
                if zero_l != 0 && p >= zero_s && p < zero_s + zero_l {
                    if p == zero_s {
                        out.push(':');
                    }
                    if p == words - 1 {
                        out.push(':');
                    }
                    at += 2;
                    continue;
                }
                if is_ipv4 && p > 5 {
                    out.push(if p == 6 { ':' } else { '.' });
                    out.push_str(&s[at].to_string());
                    at += 1;
                    if p != 7 || bits > 120 {
                        out.push('.');
                        out.push_str(&s[at].to_string());
                        at += 1;
                    }
                } else {
                    if !out.is_empty() {
                        out.push(':');
                    }
                    out.push_str(&format!("{:x}", (s[at] as u32) * 256 + s[at + 1] as u32));
                    at += 2;
                }
            }
        }
        out.push_str(&format!("/{bits}"));
        out
    }

    /// network_cmp_internal.
    pub fn cmp_network(&self, other: &Inet) -> Ordering {
        self.family
            .cmp(&other.family)
            .then_with(|| bitncmp(&self.addr, &other.addr, self.bits.min(other.bits) as usize))
            .then_with(|| self.bits.cmp(&other.bits))
            .then_with(|| bitncmp(&self.addr, &other.addr, self.max_bits() as usize))
    }

    /// `<<`: strictly contained in `other`.
    pub fn sub(&self, other: &Inet) -> bool {
        self.family == other.family && self.bits > other.bits && bitncmp(&self.addr, &other.addr, other.bits as usize) == Ordering::Equal
    }

    /// `<<=`: contained in or equal to `other`.
    pub fn subeq(&self, other: &Inet) -> bool {
        self.family == other.family && self.bits >= other.bits && bitncmp(&self.addr, &other.addr, other.bits as usize) == Ordering::Equal
    }

    /// `&&`: either contains the other.
    pub fn overlaps(&self, other: &Inet) -> bool {
        self.family == other.family && bitncmp(&self.addr, &other.addr, self.bits.min(other.bits) as usize) == Ordering::Equal
    }

    /// The length of the common prefix of two addresses of one family, at most `max`.
    pub fn common_prefix(&self, other: &Inet, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let (byte, bit) = (n / 8, 7 - n % 8);
            if (self.addr[byte] >> bit) & 1 != (other.addr[byte] >> bit) & 1 {
                break;
            }
            n += 1;
        }
        n
    }

    /// The address as an unsigned number (for + and -).
    pub fn as_u128(&self) -> u128 {
        let mut v = 0u128;
        for b in &self.addr[..self.addr_len()] {
            v = (v << 8) | *b as u128;
        }
        v
    }

    pub fn with_u128(&self, v: u128) -> Inet {
        let mut out = *self;
        let n = self.addr_len();
        for i in 0..n {
            out.addr[i] = (v >> (8 * (n - 1 - i))) as u8;
        }
        out
    }

    /// inet_send: family, bits, is_cidr, address length, address.
    pub fn to_binary(&self, is_cidr: bool) -> Vec<u8> {
        let mut v = vec![self.family, self.bits, is_cidr as u8, self.addr_len() as u8];
        v.extend_from_slice(&self.addr[..self.addr_len()]);
        v
    }

    /// network_recv.
    pub fn from_binary(b: &[u8], is_cidr: bool) -> PgResult<Inet> {
        let type_name = if is_cidr { "cidr" } else { "inet" };
        let bad = |what: &str| PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid {what} in external \"{type_name}\" value"));
        if b.len() < 4 {
            return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"));
        }
        let family = b[0];
        if family != AF_INET && family != AF_INET6 {
            return Err(bad("address family"));
        }
        let mut v = Inet { family, bits: b[1], addr: [0; 16] };
        if v.bits > v.max_bits() {
            return Err(bad("bits"));
        }
        let nb = b[3] as usize;
        if nb != v.addr_len() {
            return Err(bad("length"));
        }
        if b.len() < 4 + nb {
            return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "insufficient data left in message"));
        }
        if b.len() > 4 + nb {
            return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"));
        }
        v.addr[..nb].copy_from_slice(&b[4..4 + nb]);
        if is_cidr && !v.host_bits_clear() {
            return Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "invalid external \"cidr\" value")
                .with_detail("Value has bits set to right of mask."));
        }
        Ok(v)
    }
}

/// The mask byte `i` of a netmask `bits` long.
fn mask_byte(bits: usize, i: usize) -> u8 {
    if bits >= (i + 1) * 8 {
        0xff
    } else if bits <= i * 8 {
        0
    } else {
        (0xffu32 << (8 - (bits - i * 8))) as u8
    }
}

/// bitncmp: compares the first `n` bits of two addresses.
fn bitncmp(a: &[u8], b: &[u8], n: usize) -> Ordering {
    let whole = n / 8;
    let o = a[..whole].cmp(&b[..whole]);
    if o != Ordering::Equal || n % 8 == 0 {
        return o;
    }
    let m = (0xffu32 << (8 - n % 8)) as u8;
    (a[whole] & m).cmp(&(b[whole] & m))
}

/// inet_cidr_pton_ipv4: dotted decimal (as few octets as wanted) or
/// 0x-hex, an optional /bits, and classful default lengths.
fn cidr_pton_ipv4(src: &[u8], dst: &mut [u8; 16]) -> Option<i32> {
    let size = 4usize;
    let mut n = 0usize; // bytes written
    let mut i = 0usize;
    let at = |i: usize| -> u8 { src.get(i).copied().unwrap_or(0) };
    let mut ch = at(i);
    i += 1;
    if ch == b'0' && (at(i) == b'x' || at(i) == b'X') && at(i + 1).is_ascii_hexdigit() {
        i += 1;
        let (mut dirty, mut tmp) = (0, 0u32);
        loop {
            ch = at(i);
            i += 1;
            if ch == 0 || !ch.is_ascii_hexdigit() {
                break;
            }
            let d = (ch as char).to_digit(16)?;
            tmp = if dirty == 0 { d } else { (tmp << 4) | d };
            dirty += 1;
            if dirty == 2 {
                if n >= size {
                    return None;
                }
                dst[n] = tmp as u8;
                n += 1;
                dirty = 0;
            }
        }
        if dirty != 0 {
            if n >= size {
                return None;
            }
            dst[n] = (tmp << 4) as u8;
            n += 1;
        }
    } else if ch.is_ascii_digit() {
        loop {
            let mut tmp = 0u32;
            loop {
                tmp = tmp * 10 + (ch - b'0') as u32;
                if tmp > 255 {
                    return None;
                }
                ch = at(i);
                i += 1;
                if ch == 0 || !ch.is_ascii_digit() {
                    break;
                }
            }
            if n >= size {
                return None;
            }
            dst[n] = tmp as u8;
            n += 1;
            if ch == 0 || ch == b'/' {
                break;
            }
            if ch != b'.' {
                return None;
            }
            ch = at(i);
            i += 1;
            if !ch.is_ascii_digit() {
                return None;
            }
        }
    } else {
        return None;
    }
    let mut bits: i32 = -1;
    if ch == b'/' && at(i).is_ascii_digit() && n > 0 {
        ch = at(i);
        i += 1;
        bits = 0;
        loop {
            bits = bits * 10 + (ch - b'0') as i32;
            if bits > 1000 {
                return None;
            }
            ch = at(i);
            i += 1;
            if ch == 0 || !ch.is_ascii_digit() {
                break;
            }
        }
        if ch != 0 || bits > 32 {
            return None;
        }
    }
    if ch != 0 || n == 0 {
        return None;
    }
    if bits == -1 {
        bits = if dst[0] >= 240 {
            32
        } else if dst[0] >= 224 {
            4
        } else if dst[0] >= 192 {
            24
        } else if dst[0] >= 128 {
            16
        } else {
            8
        };
        if bits >= 8 && bits < (n * 8) as i32 {
            bits = (n * 8) as i32;
        }
    }
    while bits > (n * 8) as i32 {
        if n >= size {
            return None;
        }
        dst[n] = 0;
        n += 1;
    }
    Some(bits)
}

/// inet_net_pton_ipv4: all four octets unless a /bits follows, which may
/// not claim more octets than were given.
fn net_pton_ipv4(src: &[u8], dst: &mut [u8; 16]) -> Option<i32> {
    let at = |i: usize| -> u8 { src.get(i).copied().unwrap_or(0) };
    let mut i = 0usize;
    let mut n = 0usize;
    let mut ch;
    loop {
        ch = at(i);
        i += 1;
        if !ch.is_ascii_digit() {
            break;
        }
        let mut tmp = 0u32;
        loop {
            tmp = tmp * 10 + (ch - b'0') as u32;
            if tmp > 255 {
                return None;
            }
            ch = at(i);
            i += 1;
            if ch == 0 || !ch.is_ascii_digit() {
                break;
            }
        }
        if n == 4 {
            return None;
        }
        dst[n] = tmp as u8;
        n += 1;
        if ch == 0 || ch == b'/' {
            break;
        }
        if ch != b'.' {
            return None;
        }
    }
    let mut bits: i32 = -1;
    if ch == b'/' && at(i).is_ascii_digit() && n > 0 {
        ch = at(i);
        i += 1;
        bits = 0;
        loop {
            bits = bits * 10 + (ch - b'0') as i32;
            if bits > 1000 {
                return None;
            }
            ch = at(i);
            i += 1;
            if ch == 0 || !ch.is_ascii_digit() {
                break;
            }
        }
        if ch != 0 || bits > 32 {
            return None;
        }
    }
    if ch != 0 {
        return None;
    }
    if bits == -1 {
        if n == 4 {
            bits = 32;
        } else {
            return None;
        }
    }
    if n == 0 || (bits / 8) as usize > n {
        return None;
    }
    Some(bits)
}

/// getbits: a mask length of at most 128 without leading zeros.
fn getbits(src: &[u8]) -> Option<i32> {
    if src.is_empty() {
        return None;
    }
    let mut val = 0i32;
    for (n, &c) in src.iter().enumerate() {
        if !c.is_ascii_digit() {
            return None;
        }
        if n != 0 && val == 0 {
            return None;
        }
        val = val * 10 + (c - b'0') as i32;
        if val > 128 {
            return None;
        }
    }
    Some(val)
}

/// getv4: a dotted IPv4 tail of an IPv6 address, perhaps with /bits.
fn getv4(src: &[u8], dst: &mut [u8], bits: &mut i32) -> bool {
    let mut val = 0u32;
    let mut n = 0;
    let mut w = 0usize;
    for (i, &c) in src.iter().enumerate() {
        if c.is_ascii_digit() {
            if n != 0 && val == 0 {
                return false;
            }
            n += 1;
            val = val * 10 + (c - b'0') as u32;
            if val > 255 {
                return false;
            }
            continue;
        }
        if c == b'.' || c == b'/' {
            if w > 3 {
                return false;
            }
            dst[w] = val as u8;
            w += 1;
            if c == b'/' {
                match getbits(&src[i + 1..]) {
                    Some(b) => {
                        *bits = b;
                        return true;
                    }
                    None => return false,
                }
            }
            val = 0;
            n = 0;
            continue;
        }
        return false;
    }
    if n == 0 || w > 3 {
        return false;
    }
    dst[w] = val as u8;
    true
}

/// inet_cidr_pton_ipv6: colon-hex words, one "::", an optional dotted
/// IPv4 tail, an optional /bits.
fn cidr_pton_ipv6(src: &[u8], dst: &mut [u8; 16]) -> Option<i32> {
    let mut tmp = [0u8; 16];
    let mut tp = 0usize;
    let endp = 16usize;
    let mut colonp: Option<usize> = None;
    let mut i = 0usize;
    if src.first() == Some(&b':') {
        if src.get(1) != Some(&b':') {
            return None;
        }
        i = 1;
    }
    let mut curtok = i;
    let mut saw_xdigit = false;
    let mut val = 0u32;
    let mut digits = 0;
    let mut bits = -1;
    while i < src.len() {
        let ch = src[i];
        i += 1;
        if let Some(d) = (ch as char).to_digit(16) {
            val = (val << 4) | d;
            digits += 1;
            if digits > 4 {
                return None;
            }
            saw_xdigit = true;
            continue;
        }
        if ch == b':' {
            curtok = i;
            if !saw_xdigit {
                if colonp.is_some() {
                    return None;
                }
                colonp = Some(tp);
                continue;
            } else if i >= src.len() {
                return None;
            }
            if tp + 2 > endp {
                return None;
            }
            tmp[tp] = (val >> 8) as u8;
            tmp[tp + 1] = val as u8;
            tp += 2;
            saw_xdigit = false;
            digits = 0;
            val = 0;
            continue;
        }
        if ch == b'.' && tp + 4 <= endp && getv4(&src[curtok..], &mut tmp[tp..tp + 4], &mut bits) {
            tp += 4;
            saw_xdigit = false;
            break;
        }
        if ch == b'/' {
            if let Some(b) = getbits(&src[i..]) {
                bits = b;
                break;
            }
        }
        return None;
    }
    if saw_xdigit {
        if tp + 2 > endp {
            return None;
        }
        tmp[tp] = (val >> 8) as u8;
        tmp[tp + 1] = val as u8;
        tp += 2;
    }
    if bits == -1 {
        bits = 128;
    }
    if let Some(c) = colonp {
        let n = tp - c;
        if tp == endp {
            return None;
        }
        for k in 1..=n {
            tmp[endp - k] = tmp[c + n - k];
            tmp[c + n - k] = 0;
        }
        tp = endp;
    }
    if tp != endp {
        return None;
    }
    *dst = tmp;
    Some(bits)
}

/// The stored form of a network address (in rows): a kind byte, then the
/// value's bytes.
pub fn encode_stored(n: &NetAddr) -> Vec<u8> {
    match n {
        NetAddr::Inet(a) => {
            let mut v = vec![0, a.family, a.bits];
            v.extend_from_slice(&a.addr[..a.addr_len()]);
            v
        }
        NetAddr::MacAddr(m) => {
            let mut v = vec![1];
            v.extend_from_slice(m);
            v
        }
        NetAddr::MacAddr8(m) => {
            let mut v = vec![2];
            v.extend_from_slice(m);
            v
        }
    }
}

pub fn decode_stored(b: &[u8]) -> Option<NetAddr> {
    match b.split_first()? {
        (0, rest) if rest.len() >= 2 => {
            let mut a = Inet { family: rest[0], bits: rest[1], addr: [0; 16] };
            let n = rest.len() - 2;
            if n != a.addr_len() {
                return None;
            }
            a.addr[..n].copy_from_slice(&rest[2..]);
            Some(NetAddr::Inet(a))
        }
        (1, rest) => Some(NetAddr::MacAddr(rest.try_into().ok()?)),
        (2, rest) => Some(NetAddr::MacAddr8(rest.try_into().ok()?)),
        _ => None,
    }
}

// ---------------------------------------------------------------- MAC addresses

/// One `%x` / `%2x` conversion of sscanf: blanks skipped, then an optional
/// sign and 0x prefix and hex digits, at most `width` characters of them.
fn scan_hex(s: &[u8], pos: &mut usize, width: Option<usize>) -> Option<i64> {
    while *pos < s.len() && s[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
    let limit = width.map(|w| (*pos + w).min(s.len())).unwrap_or(s.len());
    let mut p = *pos;
    let mut neg = false;
    if p < limit && (s[p] == b'+' || s[p] == b'-') {
        neg = s[p] == b'-';
        p += 1;
    }
    if p + 1 < limit && s[p] == b'0' && (s[p + 1] == b'x' || s[p + 1] == b'X') && p + 2 < limit && s[p + 2].is_ascii_hexdigit() {
        p += 2;
    }
    let start = p;
    let mut v: i64 = 0;
    while p < limit && s[p].is_ascii_hexdigit() {
        v = v.saturating_mul(16).saturating_add((s[p] as char).to_digit(16).unwrap_or(0) as i64);
        p += 1;
    }
    if p == start {
        return None;
    }
    *pos = p;
    // sscanf stores the value as an unsigned int: "-1" is 0xffffffff.
    Some(if neg { (-(v as i128) as i64) & 0xffff_ffff } else { v.min(0xffff_ffff) })
}

/// Runs one of macaddr_in's sscanf patterns: six hex fields separated as
/// `seps` says (0 for none), then nothing but blanks.
fn scan_mac(s: &[u8], width: Option<usize>, seps: [u8; 5]) -> Option<[i64; 6]> {
    let mut pos = 0usize;
    let mut out = [0i64; 6];
    for k in 0..6 {
        out[k] = scan_hex(s, &mut pos, width)?;
        if k < 5 && seps[k] != 0 {
            if s.get(pos) != Some(&seps[k]) {
                return None;
            }
            pos += 1;
        }
    }
    if s[pos..].iter().all(|c| c.is_ascii_whitespace()) {
        Some(out)
    } else {
        None
    }
}

/// macaddr_in: the notations of mac.c's sscanf patterns.
pub fn parse_macaddr(s: &str) -> PgResult<[u8; 6]> {
    let b = s.as_bytes();
    let patterns: [(Option<usize>, [u8; 5]); 7] = [
        (None, [b':'; 5]),
        (None, [b'-'; 5]),
        (Some(2), [0, 0, b':', 0, 0]),
        (Some(2), [0, 0, b'-', 0, 0]),
        (Some(2), [0, b'.', 0, b'.', 0]),
        (Some(2), [0, b'-', 0, b'-', 0]),
        (Some(2), [0, 0, 0, 0, 0]),
    ];
    let fields = patterns.iter().find_map(|(w, seps)| scan_mac(b, *w, *seps)).ok_or_else(|| invalid_syntax("macaddr", s))?;
    if fields.iter().any(|&v| !(0..=255).contains(&v)) {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("invalid octet value in \"macaddr\" value: \"{s}\"")));
    }
    let mut out = [0u8; 6];
    for (o, v) in out.iter_mut().zip(fields) {
        *o = v as u8;
    }
    Ok(out)
}

pub fn format_macaddr(m: &[u8; 6]) -> String {
    format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
}

/// macaddr8_in: pairs of hex digits, optionally separated by one kind of
/// ':', '-' or '.'; six bytes become an EUI-64 with FF:FE in the middle.
pub fn parse_macaddr8(s: &str) -> PgResult<[u8; 8]> {
    let bad = || invalid_syntax("macaddr8", s);
    let b = s.as_bytes();
    let at = |i: usize| -> u8 { b.get(i).copied().unwrap_or(0) };
    let mut p = 0usize;
    while at(p) != 0 && at(p).is_ascii_whitespace() {
        p += 1;
    }
    let mut bytes = [0u8; 8];
    let mut count = 0usize;
    let mut spacer = 0u8;
    while at(p) != 0 && at(p + 1) != 0 {
        count += 1;
        if count > 8 {
            return Err(bad());
        }
        let hi = (at(p) as char).to_digit(16).ok_or_else(bad)?;
        let lo = (at(p + 1) as char).to_digit(16).ok_or_else(bad)?;
        bytes[count - 1] = (hi * 16 + lo) as u8;
        p += 2;
        let c = at(p);
        if c == b':' || c == b'-' || c == b'.' {
            if spacer == 0 {
                spacer = c;
            } else if spacer != c {
                return Err(bad());
            }
            p += 1;
        }
        if (count == 6 || count == 8) && at(p).is_ascii_whitespace() && at(p) != 0 {
            p += 1;
            while at(p) != 0 && at(p).is_ascii_whitespace() {
                p += 1;
            }
            if at(p) != 0 {
                return Err(bad());
            }
        }
    }
    match count {
        6 => Ok([bytes[0], bytes[1], bytes[2], 0xff, 0xfe, bytes[3], bytes[4], bytes[5]]),
        8 => Ok(bytes),
        _ => Err(bad()),
    }
}

pub fn format_macaddr8(m: &[u8; 8]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]
    )
}

/// macaddr8_recv: six bytes are read as an EUI-48.
pub fn macaddr8_from_binary(b: &[u8]) -> PgResult<[u8; 8]> {
    match b.len() {
        6 => Ok([b[0], b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]),
        8 => Ok(b.try_into().expect("8 bytes")),
        n if n < 8 => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "no data left in message")),
        _ => Err(PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(s: &str) -> String {
        Inet::parse(s, false).unwrap().format(false)
    }
    fn cidr(s: &str) -> String {
        Inet::parse(s, true).unwrap().format(true)
    }

    #[test]
    fn text_forms() {
        assert_eq!(inet("192.168.1.5/24"), "192.168.1.5/24");
        assert_eq!(inet("192.168.1.5"), "192.168.1.5");
        assert_eq!(cidr("192.168.1"), "192.168.1.0/24");
        assert_eq!(cidr("10"), "10.0.0.0/8");
        assert_eq!(inet("10:23::f1/64"), "10:23::f1/64");
        assert_eq!(inet("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(inet("::4.3.2.1/24"), "::4.3.2.1/24");
        assert_eq!(inet("0000:0000:0000:0000:0000:0000:0000:0001/128"), "::1");
        assert!(Inet::parse("192.168.1.2/30", true).is_err());
        assert!(Inet::parse("1234::1234::1234", false).is_err());
        assert_eq!(Inet::parse("192.168.1.0/24", true).unwrap().cidr_abbrev(), "192.168.1/24");
    }

    #[test]
    fn macs() {
        for s in ["08:00:2b:01:02:03", "08-00-2b-01-02-03", "08002b:010203", "08002b-010203", "0800.2b01.0203", "0800-2b01-0203", "08002b010203"] {
            assert_eq!(format_macaddr(&parse_macaddr(s).unwrap()), "08:00:2b:01:02:03", "{s}");
        }
        assert!(parse_macaddr("0800:2b01:0203").is_err());
        assert_eq!(format_macaddr8(&parse_macaddr8("08:00:2b:01:02:03").unwrap()), "08:00:2b:ff:fe:01:02:03");
    }
}
