//! The functions and operators of the network address types (inet, cidr,
//! macaddr, macaddr8) and the bit string types (bit, bit varying), with
//! their text and binary I/O, casts and type modifiers, as PostgreSQL 15's
//! network.c, mac.c, mac8.c and varbit.c define them. The values
//! themselves are tusk-types' `net` and `bits` modules.

use std::cmp::Ordering;
use std::sync::Arc;

use tusk_types::bits::{BitString, MAX_BITS};
use tusk_types::net::{self, Inet, NetAddr, AF_INET};
use tusk_types::oid::{self, Oid};
use tusk_types::{sqlstate, Datum, PgError, PgResult, SqlType};

use super::{plain, FnCtx, Registry};

// ---------------------------------------------------------------- I/O

pub fn format_text(d: &Datum, ty: Oid) -> String {
    match d {
        Datum::Net(NetAddr::Inet(a)) => a.format(ty == oid::CIDR),
        Datum::Net(NetAddr::MacAddr(m)) => net::format_macaddr(m),
        Datum::Net(NetAddr::MacAddr8(m)) => net::format_macaddr8(m),
        Datum::Bits(b) => b.format(),
        _ => String::new(),
    }
}

/// The type a value of these types prints as when nothing says (record fields).
pub fn guess_type(d: &Datum) -> Oid {
    match d {
        Datum::Net(NetAddr::Inet(_)) => oid::INET,
        Datum::Net(NetAddr::MacAddr(_)) => oid::MACADDR,
        Datum::Net(NetAddr::MacAddr8(_)) => oid::MACADDR8,
        _ => oid::VARBIT,
    }
}

/// The input functions. A bit string's length is checked as the
/// coercion to the type modifier does it (PostgreSQL parses a literal
/// without the modifier, then coerces: `'101'::bit(4)` pads).
pub fn parse_text(s: &str, ty: SqlType, explicit: bool) -> PgResult<Datum> {
    Ok(match ty.oid {
        oid::INET | oid::CIDR => Datum::Net(NetAddr::Inet(Inet::parse(s, ty.oid == oid::CIDR)?)),
        oid::MACADDR => Datum::Net(NetAddr::MacAddr(net::parse_macaddr(s)?)),
        oid::MACADDR8 => Datum::Net(NetAddr::MacAddr8(net::parse_macaddr8(s)?)),
        _ => {
            let b = BitString::parse(s)?;
            check_bit_input(&b, SqlType::new(ty.oid))?;
            apply_bit_typmod(Arc::new(b), ty, explicit)?
        }
    })
}

/// bit_in / varbit_in with a type modifier: bit(n) takes exactly n bits,
/// bit varying(n) at most n, whether the cast is explicit or not.
fn check_bit_input(b: &BitString, ty: SqlType) -> PgResult<()> {
    if b.len > MAX_BITS {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("bit string length exceeds the maximum allowed ({MAX_BITS})")));
    }
    if ty.typmod <= 0 {
        return Ok(());
    }
    let n = ty.typmod as usize;
    if ty.oid == oid::BIT && b.len != n {
        return Err(length_mismatch(b.len, n));
    }
    if ty.oid == oid::VARBIT && b.len > n {
        return Err(too_long(n));
    }
    Ok(())
}

fn length_mismatch(len: usize, n: usize) -> PgError {
    PgError::new(sqlstate::STRING_DATA_LENGTH_MISMATCH, format!("bit string length {len} does not match type bit({n})"))
}

fn too_long(n: usize) -> PgError {
    PgError::new(sqlstate::STRING_DATA_RIGHT_TRUNCATION, format!("bit string too long for type bit varying({n})"))
}

pub fn format_binary(d: &Datum, ty: Oid) -> Vec<u8> {
    match d {
        Datum::Net(NetAddr::Inet(a)) => a.to_binary(ty == oid::CIDR),
        Datum::Net(NetAddr::MacAddr(m)) => m.to_vec(),
        Datum::Net(NetAddr::MacAddr8(m)) => m.to_vec(),
        Datum::Bits(b) => b.to_binary(),
        _ => Vec::new(),
    }
}

pub fn parse_binary(b: &[u8], ty: SqlType) -> PgResult<Datum> {
    Ok(match ty.oid {
        oid::INET | oid::CIDR => Datum::Net(NetAddr::Inet(Inet::from_binary(b, ty.oid == oid::CIDR)?)),
        oid::MACADDR => {
            if b.len() < 6 {
                return Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "no data left in message"));
            }
            let m: [u8; 6] = b.try_into().map_err(|_| PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"))?;
            Datum::Net(NetAddr::MacAddr(m))
        }
        oid::MACADDR8 => Datum::Net(NetAddr::MacAddr8(net::macaddr8_from_binary(b)?)),
        _ => {
            let v = BitString::from_binary(b)?;
            check_bit_input(&v, ty)?;
            Datum::Bits(Arc::new(v))
        }
    })
}

// ---------------------------------------------------------------- casts

/// text(inet): the address with its mask length always shown.
pub fn network_show(d: &Datum) -> String {
    match d {
        Datum::Net(NetAddr::Inet(a)) => a.show(),
        _ => String::new(),
    }
}

/// Whether `cast` converts between these two types.
pub fn is_cast(f: Oid, t: Oid) -> bool {
    matches!(
        (f, t),
        (oid::INET | oid::CIDR, oid::INET | oid::CIDR)
            | (oid::MACADDR | oid::MACADDR8, oid::MACADDR | oid::MACADDR8)
            | (oid::INT4 | oid::INT8, oid::BIT)
            | (oid::BIT, oid::INT4 | oid::INT8)
            | (oid::BIT | oid::VARBIT, oid::BIT | oid::VARBIT)
    )
}

/// The casts pg_cast lists among these types and to and from integers;
/// the caller applies the target's type modifier afterwards.
pub fn cast(d: &Datum, f: Oid, to: SqlType, _explicit: bool) -> PgResult<Datum> {
    let t = to.oid;
    Ok(match (d, t) {
        // cidr(inet) clears the host bits; inet(cidr) is the same value.
        (Datum::Net(NetAddr::Inet(a)), oid::CIDR) => Datum::Net(NetAddr::Inet(a.network())),
        (Datum::Net(NetAddr::Inet(_)), _) => d.clone(),
        (Datum::Net(NetAddr::MacAddr(m)), oid::MACADDR8) => Datum::Net(NetAddr::MacAddr8(mac_to_mac8(m))),
        (Datum::Net(NetAddr::MacAddr8(m)), oid::MACADDR) => Datum::Net(NetAddr::MacAddr(mac8_to_mac(m)?)),
        (Datum::Net(_), _) => d.clone(),
        (Datum::Int4(_) | Datum::Int8(_), oid::BIT) => {
            // bitfromint4/8: without a length, one bit.
            let len = if to.typmod <= 0 { 1 } else { to.typmod as usize };
            let v = d.as_i64().unwrap_or(0);
            let v = if f == oid::INT4 { v as i32 as i64 } else { v };
            Datum::Bits(Arc::new(BitString::from_int(v, len)))
        }
        (Datum::Bits(b), oid::INT4) => {
            if b.len > 32 {
                return Err(super::int_out_of_range("integer"));
            }
            Datum::Int4(b.to_u64() as u32 as i32)
        }
        (Datum::Bits(b), oid::INT8) => {
            if b.len > 64 {
                return Err(super::int_out_of_range("bigint"));
            }
            Datum::Int8(b.to_u64() as i64)
        }
        _ => d.clone(),
    })
}

fn mac_to_mac8(m: &[u8; 6]) -> [u8; 8] {
    [m[0], m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]]
}

fn mac8_to_mac(m: &[u8; 8]) -> PgResult<[u8; 6]> {
    if m[3] != 0xff || m[4] != 0xfe {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "macaddr8 data out of range to convert to macaddr").with_hint(
            "Only addresses that have FF and FE as values in the 4th and 5th bytes from the left, for example xx:xx:xx:ff:fe:xx:xx:xx, are eligible to be converted from macaddr8 to macaddr.",
        ));
    }
    Ok([m[0], m[1], m[2], m[5], m[6], m[7]])
}

/// The length coercions bit(n) and varbit(n): an explicit cast cuts or
/// pads; an implicit or assignment one insists on the length.
pub fn apply_bit_typmod(b: Arc<BitString>, to: SqlType, explicit: bool) -> PgResult<Datum> {
    let n = to.typmod as usize;
    if to.typmod <= 0 {
        return Ok(Datum::Bits(b));
    }
    if to.oid == oid::BIT {
        if b.len == n {
            return Ok(Datum::Bits(b));
        }
        if !explicit {
            return Err(length_mismatch(b.len, n));
        }
        return Ok(Datum::Bits(Arc::new(b.resized(n))));
    }
    if b.len <= n {
        return Ok(Datum::Bits(b));
    }
    if !explicit {
        return Err(too_long(n));
    }
    Ok(Datum::Bits(Arc::new(b.slice(0, n))))
}

// ---------------------------------------------------------------- argument helpers

fn inet(a: &[Datum], i: usize) -> PgResult<Inet> {
    match &a[i] {
        Datum::Net(NetAddr::Inet(v)) => Ok(*v),
        _ => Err(PgError::internal("inet argument expected")),
    }
}

fn mac(a: &[Datum], i: usize) -> PgResult<[u8; 6]> {
    match &a[i] {
        Datum::Net(NetAddr::MacAddr(v)) => Ok(*v),
        _ => Err(PgError::internal("macaddr argument expected")),
    }
}

fn mac8(a: &[Datum], i: usize) -> PgResult<[u8; 8]> {
    match &a[i] {
        Datum::Net(NetAddr::MacAddr8(v)) => Ok(*v),
        _ => Err(PgError::internal("macaddr8 argument expected")),
    }
}

fn bits(a: &[Datum], i: usize) -> PgResult<&BitString> {
    match &a[i] {
        Datum::Bits(v) => Ok(v),
        _ => Err(PgError::internal("bit string argument expected")),
    }
}

fn int(a: &[Datum], i: usize) -> i64 {
    a[i].as_i64().unwrap_or(0)
}

fn inet_datum(v: Inet) -> Datum {
    Datum::Net(NetAddr::Inet(v))
}

fn bits_datum(v: BitString) -> Datum {
    Datum::Bits(Arc::new(v))
}

// ---------------------------------------------------------------- comparison

fn cmp(a: &[Datum]) -> Ordering {
    a[0].cmp_same_type(&a[1])
}

fn eq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Equal))
}
fn ne(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Equal))
}
fn lt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Less))
}
fn le(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Greater))
}
fn gt(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) == Ordering::Greater))
}
fn ge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(cmp(a) != Ordering::Less))
}
fn cmp_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(match cmp(a) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}
/// bitcmp returns what memcmp gave (glibc's: the difference of the first
/// differing bytes), or -1/1 when one string is a prefix of the other.
fn bitcmp_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (bits(a, 0)?, bits(a, 1)?);
    let n = x.bytes.len().min(y.bytes.len());
    let diff = x.bytes[..n].iter().zip(&y.bytes[..n]).find(|(p, q)| p != q).map(|(p, q)| *p as i32 - *q as i32).unwrap_or(0);
    Ok(Datum::Int4(match diff {
        0 => match x.len.cmp(&y.len) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        },
        d => d,
    }))
}

/// PostgreSQL's bitncmp, with memcmp's (glibc's) magnitudes.
fn bitncmp_value(l: &[u8], r: &[u8], n: usize) -> i32 {
    let whole = n / 8;
    if let Some((p, q)) = l[..whole].iter().zip(&r[..whole]).find(|(p, q)| p != q) {
        return *p as i32 - *q as i32;
    }
    if n % 8 == 0 {
        return 0;
    }
    let (mut lb, mut rb) = (l[whole], r[whole]);
    for _ in 0..n % 8 {
        if (lb & 0x80) != (rb & 0x80) {
            return if lb & 0x80 != 0 { 1 } else { -1 };
        }
        lb <<= 1;
        rb <<= 1;
    }
    0
}

/// network_cmp returns network_cmp_internal's raw differences.
fn network_cmp_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (inet(a, 0)?, inet(a, 1)?);
    let mut order = x.family as i32 - y.family as i32;
    if order == 0 {
        order = bitncmp_value(&x.addr, &y.addr, x.bits.min(y.bits) as usize);
    }
    if order == 0 {
        order = x.bits as i32 - y.bits as i32;
    }
    if order == 0 {
        order = bitncmp_value(&x.addr, &y.addr, x.max_bits() as usize);
    }
    Ok(Datum::Int4(order))
}

fn larger(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if cmp(a) == Ordering::Less { a[1].clone() } else { a[0].clone() })
}
fn smaller(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(if cmp(a) == Ordering::Greater { a[1].clone() } else { a[0].clone() })
}

// ---------------------------------------------------------------- inet and cidr

fn network_sub(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 0)?.sub(&inet(a, 1)?)))
}
fn network_subeq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 0)?.subeq(&inet(a, 1)?)))
}
fn network_sup(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 1)?.sub(&inet(a, 0)?)))
}
fn network_supeq(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 1)?.subeq(&inet(a, 0)?)))
}
fn network_overlap(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 0)?.overlaps(&inet(a, 1)?)))
}

fn network_host(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(inet(a, 0)?.host_text()))
}
fn network_show_fn(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(inet(a, 0)?.show()))
}
fn inet_abbrev(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(inet(a, 0)?.format(false)))
}
fn cidr_abbrev(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::from_string(inet(a, 0)?.cidr_abbrev()))
}
fn network_masklen(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(inet(a, 0)?.bits as i32))
}
fn network_family(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(if inet(a, 0)?.family == AF_INET { 4 } else { 6 }))
}
fn network_netmask(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(inet_datum(inet(a, 0)?.netmask()))
}
fn network_hostmask(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(inet_datum(inet(a, 0)?.hostmask()))
}
fn network_network(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(inet_datum(inet(a, 0)?.network()))
}
fn network_broadcast(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(inet_datum(inet(a, 0)?.broadcast()))
}

fn masklen_arg(v: &Inet, n: i64) -> PgResult<u8> {
    let n = if n == -1 { v.max_bits() as i64 } else { n };
    if n < 0 || n > v.max_bits() as i64 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid mask length: {n}")));
    }
    Ok(n as u8)
}

fn inet_set_masklen(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let mut v = inet(a, 0)?;
    v.bits = masklen_arg(&v, int(a, 1))?;
    Ok(inet_datum(v))
}

/// set_masklen(cidr): the host bits the new mask uncovers are cleared.
fn cidr_set_masklen(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let mut v = inet(a, 0)?;
    v.bits = masklen_arg(&v, int(a, 1))?;
    Ok(inet_datum(v.network()))
}

fn inet_to_cidr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(inet_datum(inet(a, 0)?.network()))
}

fn inet_same_family(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Bool(inet(a, 0)?.family == inet(a, 1)?.family))
}

/// inet_merge: the smallest network containing both.
fn inet_merge(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (inet(a, 0)?, inet(a, 1)?);
    if x.family != y.family {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot merge addresses from different families"));
    }
    let common = x.common_prefix(&y, x.bits.min(y.bits) as usize);
    let mut v = x;
    v.bits = common as u8;
    Ok(inet_datum(v.network()))
}

fn inetnot(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let v = inet(a, 0)?;
    let mut out = v;
    for i in 0..v.addr_len() {
        out.addr[i] = !v.addr[i];
    }
    Ok(inet_datum(out))
}

fn inet_bitwise(a: &[Datum], op: &str, f: fn(u8, u8) -> u8) -> PgResult<Datum> {
    let (x, y) = (inet(a, 0)?, inet(a, 1)?);
    if x.family != y.family {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("cannot {op} inet values of different sizes")));
    }
    let mut out = x;
    for i in 0..x.addr_len() {
        out.addr[i] = f(x.addr[i], y.addr[i]);
    }
    out.bits = x.bits.max(y.bits);
    Ok(inet_datum(out))
}

fn inetand(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    inet_bitwise(a, "AND", |x, y| x & y)
}
fn inetor(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    inet_bitwise(a, "OR", |x, y| x | y)
}

fn out_of_range() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "result is out of range")
}

/// internal_inetpl: adds to the address as an unsigned number of its
/// width; leaving the address space is an error.
fn inet_plus(v: Inet, n: i128) -> PgResult<Datum> {
    let u = v.as_u128();
    let res = if n >= 0 { u.checked_add(n as u128) } else { u.checked_sub(n.unsigned_abs()) }.ok_or_else(out_of_range)?;
    if v.addr_len() == 4 && res > u32::MAX as u128 {
        return Err(out_of_range());
    }
    Ok(inet_datum(v.with_u128(res)))
}

fn inetpl(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    inet_plus(inet(a, 0)?, int(a, 1) as i128)
}
fn int8pl_inet(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    inet_plus(inet(a, 1)?, int(a, 0) as i128)
}
fn inetmi_int8(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    inet_plus(inet(a, 0)?, -(int(a, 1) as i128))
}

/// inetmi: the difference of two addresses, which must fit in a bigint.
fn inetmi(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (inet(a, 0)?, inet(a, 1)?);
    if x.family != y.family {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot subtract inet values of different sizes"));
    }
    let (u, w) = (x.as_u128(), y.as_u128());
    let diff: i128 = if u >= w {
        let d = u - w;
        if d > i64::MAX as u128 {
            return Err(out_of_range());
        }
        d as i128
    } else {
        let d = w - u;
        if d > (i64::MAX as u128) + 1 {
            return Err(out_of_range());
        }
        -(d as i128)
    };
    Ok(Datum::Int8(diff as i64))
}

// ---------------------------------------------------------------- macaddr and macaddr8

fn macaddr_not(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Net(NetAddr::MacAddr(mac(a, 0)?.map(|b| !b))))
}
fn macaddr_and(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (mac(a, 0)?, mac(a, 1)?);
    Ok(Datum::Net(NetAddr::MacAddr(std::array::from_fn(|i| x[i] & y[i]))))
}
fn macaddr_or(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (mac(a, 0)?, mac(a, 1)?);
    Ok(Datum::Net(NetAddr::MacAddr(std::array::from_fn(|i| x[i] | y[i]))))
}
fn macaddr_trunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let m = mac(a, 0)?;
    Ok(Datum::Net(NetAddr::MacAddr([m[0], m[1], m[2], 0, 0, 0])))
}
fn macaddr8_not(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Net(NetAddr::MacAddr8(mac8(a, 0)?.map(|b| !b))))
}
fn macaddr8_and(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (mac8(a, 0)?, mac8(a, 1)?);
    Ok(Datum::Net(NetAddr::MacAddr8(std::array::from_fn(|i| x[i] & y[i]))))
}
fn macaddr8_or(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (mac8(a, 0)?, mac8(a, 1)?);
    Ok(Datum::Net(NetAddr::MacAddr8(std::array::from_fn(|i| x[i] | y[i]))))
}
fn macaddr8_trunc(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let m = mac8(a, 0)?;
    Ok(Datum::Net(NetAddr::MacAddr8([m[0], m[1], m[2], 0, 0, 0, 0, 0])))
}
fn macaddr8_set7bit(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let mut m = mac8(a, 0)?;
    m[0] |= 0x02;
    Ok(Datum::Net(NetAddr::MacAddr8(m)))
}
fn macaddrtomacaddr8(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Net(NetAddr::MacAddr8(mac_to_mac8(&mac(a, 0)?))))
}
fn macaddr8tomacaddr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Net(NetAddr::MacAddr(mac8_to_mac(&mac8(a, 0)?)?)))
}

// ---------------------------------------------------------------- bit strings

fn bit_and(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.bitwise(bits(a, 1)?, "AND", |x, y| x & y)?))
}
fn bit_or(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.bitwise(bits(a, 1)?, "OR", |x, y| x | y)?))
}
fn bitxor(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.bitwise(bits(a, 1)?, "XOR", |x, y| x ^ y)?))
}
fn bitnot(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.not()))
}
fn bitshiftleft(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.shift_left(int(a, 1))))
}
fn bitshiftright(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(bits(a, 0)?.shift_left(int(a, 1).saturating_neg())))
}
fn bitcat(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let (x, y) = (bits(a, 0)?, bits(a, 1)?);
    if x.len + y.len > MAX_BITS {
        return Err(PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, format!("bit string length exceeds the maximum allowed ({MAX_BITS})")));
    }
    Ok(bits_datum(x.concat(&y)))
}
fn bitlength(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(bits(a, 0)?.len as i32))
}
fn bitoctetlength(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(bits(a, 0)?.bytes.len() as i32))
}
fn bitposition(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int4(bits(a, 0)?.position(bits(a, 1)?)))
}

/// bitsubstring: SQL's substring rules (a start before 1 eats into the length).
fn substring(b: &BitString, s: i64, l: Option<i64>) -> PgResult<BitString> {
    let bitlen = b.len as i64;
    let s1 = s.max(1);
    let e1 = match l {
        None => bitlen + 1,
        Some(l) if l < 0 => return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed")),
        Some(l) => (s + l).min(bitlen + 1),
    };
    if s1 > bitlen || e1 <= s1 {
        return Ok(BitString::zeros(0));
    }
    Ok(b.slice((s1 - 1) as usize, (e1 - 1) as usize))
}

fn bitsubstr(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(substring(bits(a, 0)?, int(a, 1), Some(int(a, 2)))?))
}
fn bitsubstr_no_len(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(bits_datum(substring(bits(a, 0)?, int(a, 1), None)?))
}

fn overlay(t1: &BitString, t2: &BitString, sp: i64, sl: i64) -> PgResult<Datum> {
    if sp <= 0 {
        return Err(PgError::new(sqlstate::SUBSTRING_ERROR, "negative substring length not allowed"));
    }
    let sp_pl_sl = i32::try_from(sp + sl).map_err(|_| super::int_out_of_range("integer"))? as i64;
    let head = substring(t1, 1, Some(sp - 1))?;
    let tail = substring(t1, sp_pl_sl, None)?;
    Ok(bits_datum(head.concat(t2).concat(&tail)))
}

fn bitoverlay(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    overlay(bits(a, 0)?, bits(a, 1)?, int(a, 2), int(a, 3))
}
fn bitoverlay_no_len(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let t2 = bits(a, 1)?;
    overlay(bits(a, 0)?, t2, int(a, 2), t2.len as i64)
}

fn bit_index(b: &BitString, n: i64) -> PgResult<usize> {
    if n < 0 || n >= b.len as i64 {
        return Err(PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, format!("bit index {n} out of valid range (0..{})", b.len as i64 - 1)));
    }
    Ok(n as usize)
}

fn bitgetbit(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let b = bits(a, 0)?;
    let i = bit_index(&b, int(a, 1))?;
    Ok(Datum::Int4(b.get(i) as i32))
}

fn bitsetbit(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    let b = bits(a, 0)?;
    let i = bit_index(&b, int(a, 1))?;
    let v = int(a, 2);
    if v != 0 && v != 1 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "new bit must be 0 or 1"));
    }
    let mut out = b.clone();
    out.set(i, v == 1);
    Ok(bits_datum(out))
}

fn bit_bit_count(a: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Int8(bits(a, 0)?.count_ones()))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["network_cmp"], network_cmp_fn);
    for f in ["network", "macaddr", "macaddr8"] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        plain(r, &[leak(format!("{f}_eq"))], eq);
        plain(r, &[leak(format!("{f}_ne"))], ne);
        plain(r, &[leak(format!("{f}_lt"))], lt);
        plain(r, &[leak(format!("{f}_le"))], le);
        plain(r, &[leak(format!("{f}_gt"))], gt);
        plain(r, &[leak(format!("{f}_ge"))], ge);
        if f != "network" {
            plain(r, &[leak(format!("{f}_cmp"))], cmp_fn);
        }
    }
    plain(r, &["biteq"], eq);
    plain(r, &["bitne"], ne);
    plain(r, &["bitlt"], lt);
    plain(r, &["bitle"], le);
    plain(r, &["bitgt"], gt);
    plain(r, &["bitge"], ge);
    plain(r, &["bitcmp"], bitcmp_fn);
    plain(r, &["network_larger"], larger);
    plain(r, &["network_smaller"], smaller);

    plain(r, &["network_sub"], network_sub);
    plain(r, &["network_subeq"], network_subeq);
    plain(r, &["network_sup"], network_sup);
    plain(r, &["network_supeq"], network_supeq);
    plain(r, &["network_overlap"], network_overlap);
    plain(r, &["network_host"], network_host);
    plain(r, &["network_show"], network_show_fn);
    plain(r, &["inet_abbrev"], inet_abbrev);
    plain(r, &["cidr_abbrev"], cidr_abbrev);
    plain(r, &["network_masklen"], network_masklen);
    plain(r, &["network_family"], network_family);
    plain(r, &["network_netmask"], network_netmask);
    plain(r, &["network_hostmask"], network_hostmask);
    plain(r, &["network_network"], network_network);
    plain(r, &["network_broadcast"], network_broadcast);
    plain(r, &["inet_set_masklen"], inet_set_masklen);
    plain(r, &["cidr_set_masklen"], cidr_set_masklen);
    plain(r, &["inet_to_cidr"], inet_to_cidr);
    plain(r, &["inet_same_family"], inet_same_family);
    plain(r, &["inet_merge"], inet_merge);
    plain(r, &["inetnot"], inetnot);
    plain(r, &["inetand"], inetand);
    plain(r, &["inetor"], inetor);
    plain(r, &["inetpl"], inetpl);
    plain(r, &["inetmi_int8"], inetmi_int8);
    plain(r, &["inetmi"], inetmi);
    // int8pl_inet is a SQL-language built-in (select $2 + $1).
    plain(r, &["oid:2631"], int8pl_inet);

    plain(r, &["macaddr_not"], macaddr_not);
    plain(r, &["macaddr_and"], macaddr_and);
    plain(r, &["macaddr_or"], macaddr_or);
    plain(r, &["macaddr_trunc"], macaddr_trunc);
    plain(r, &["macaddr8_not"], macaddr8_not);
    plain(r, &["macaddr8_and"], macaddr8_and);
    plain(r, &["macaddr8_or"], macaddr8_or);
    plain(r, &["macaddr8_trunc"], macaddr8_trunc);
    plain(r, &["macaddr8_set7bit"], macaddr8_set7bit);
    plain(r, &["macaddrtomacaddr8"], macaddrtomacaddr8);
    plain(r, &["macaddr8tomacaddr"], macaddr8tomacaddr);

    plain(r, &["bit_and"], bit_and);
    plain(r, &["bit_or"], bit_or);
    plain(r, &["bitxor"], bitxor);
    plain(r, &["bitnot"], bitnot);
    plain(r, &["bitshiftleft"], bitshiftleft);
    plain(r, &["bitshiftright"], bitshiftright);
    plain(r, &["bitcat"], bitcat);
    // bit_length(bit) is a SQL-language built-in (select length($1)).
    plain(r, &["bitlength", "oid:1812"], bitlength);
    plain(r, &["bitoctetlength"], bitoctetlength);
    plain(r, &["bitposition"], bitposition);
    plain(r, &["bitsubstr"], bitsubstr);
    plain(r, &["bitsubstr_no_len"], bitsubstr_no_len);
    plain(r, &["bitoverlay"], bitoverlay);
    plain(r, &["bitoverlay_no_len"], bitoverlay_no_len);
    plain(r, &["bitgetbit"], bitgetbit);
    plain(r, &["bitsetbit"], bitsetbit);
    plain(r, &["bit_bit_count"], bit_bit_count);
}
