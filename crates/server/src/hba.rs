//! Client authentication rules: `pg_hba.conf` in the data directory, read
//! as PostgreSQL 15 reads it (src/backend/libpq/hba.c).
//!
//! Each line is `TYPE DATABASE USER [ADDRESS [NETMASK]] METHOD [OPTIONS]`.
//! The first line whose connection type, database, user and client address
//! match a connection decides how it authenticates; no match rejects it.
//! Tusk listens on TCP only, so `local` lines never match; `hostgssenc`
//! lines never match either (there is no GSSAPI encryption). Methods:
//! `trust`, `reject`, `password`, `md5` and `scram-sha-256`; PostgreSQL's
//! other methods (ident, peer, gss, ldap, ...) are read but refuse the
//! connection, so a file written for PostgreSQL never lets anyone in more
//! easily here.
//!
//! The file is read at start (a broken file stops the server from
//! starting) and again on SIGHUP (`tusk reload`); a broken file then keeps
//! the rules already in force, as PostgreSQL does.

use std::net::IpAddr;
use std::path::Path;

/// The file a new data directory gets: trust on the loopback addresses
/// (as a fresh `initdb` with `-A trust` for local connections, which is
/// what Tusk always did), SCRAM-SHA-256 passwords from anywhere else.
pub const DEFAULT_HBA: &str = "\
# PostgreSQL Client Authentication Configuration File (Tusk)
# ===================================================
#
# Each line is
#
#   TYPE  DATABASE  USER  ADDRESS  METHOD
#
# TYPE is host, hostssl or hostnossl (Tusk listens on TCP only, so local
# lines never match). DATABASE and USER are all, a name, a comma-separated
# list, sameuser / samerole (DATABASE) or +role (USER). ADDRESS is a CIDR
# address (127.0.0.1/32, ::1/128, 0.0.0.0/0), all, samehost, samenet or a
# host name. METHOD is trust, reject, password, md5 or scram-sha-256.
# The first matching line decides; no matching line rejects the connection.
#
# Changes take effect on `tusk reload --data-dir DIR` (SIGHUP) or a restart.

# TYPE  DATABASE        USER            ADDRESS                 METHOD

# Connections from this machine are trusted, as after `initdb -A trust`:
host    all             all             127.0.0.1/32            trust
host    all             all             ::1/128                 trust
# Everyone else needs a password (set one with ALTER ROLE ... PASSWORD):
host    all             all             0.0.0.0/0               scram-sha-256
host    all             all             ::/0                    scram-sha-256
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnType {
    Local,
    Host,
    HostSsl,
    HostNoSsl,
    HostGssEnc,
    HostNoGssEnc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    Trust,
    Reject,
    Password,
    Md5,
    ScramSha256,
    /// A PostgreSQL method Tusk does not implement (ident, gss, ldap, ...):
    /// connections matching the line are refused.
    Unsupported(String),
}

impl Method {
    pub fn name(&self) -> &str {
        match self {
            Method::Trust => "trust",
            Method::Reject => "reject",
            Method::Password => "password",
            Method::Md5 => "md5",
            Method::ScramSha256 => "scram-sha-256",
            Method::Unsupported(m) => m,
        }
    }
}

/// One item of a DATABASE or USER field.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Token {
    text: String,
    /// Written in double quotes: never a keyword.
    quoted: bool,
}

impl Token {
    fn is_keyword(&self, k: &str) -> bool {
        !self.quoted && self.text == k
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Address {
    All,
    SameHost,
    SameNet,
    /// An address and a mask of the same family.
    Net(IpAddr, IpAddr),
    Hostname(String),
}

#[derive(Clone, Debug)]
pub struct HbaLine {
    pub line_number: usize,
    pub conn_type: ConnType,
    databases: Vec<Token>,
    users: Vec<Token>,
    address: Option<Address>,
    pub method: Method,
}

/// The rules of one pg_hba.conf.
#[derive(Clone, Debug, Default)]
pub struct Hba {
    pub lines: Vec<HbaLine>,
}

/// What a connection looks like to the rules.
pub struct Client<'a> {
    pub addr: IpAddr,
    pub ssl: bool,
    pub user: &'a str,
    pub database: &'a str,
}

/// Splits a line into fields, each a list of tokens (commas separate the
/// items of a field, double quotes protect spaces, commas and keywords,
/// `#` starts a comment), as PostgreSQL's next_field_expand does.
fn tokenize(line: &str) -> Result<Vec<Vec<Token>>, String> {
    let mut fields: Vec<Vec<Token>> = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.peek() {
            None | Some('#') => break,
            _ => {}
        }
        let mut field = Vec::new();
        loop {
            let mut text = String::new();
            let mut quoted = false;
            let mut in_quote = false;
            while let Some(&c) = chars.peek() {
                if in_quote {
                    chars.next();
                    if c == '"' {
                        in_quote = false;
                    } else {
                        text.push(c);
                    }
                    continue;
                }
                if c.is_whitespace() || c == ',' || c == '#' {
                    break;
                }
                chars.next();
                if c == '"' {
                    in_quote = true;
                    quoted = true;
                } else {
                    text.push(c);
                }
            }
            if in_quote {
                return Err("unterminated quoted string".into());
            }
            field.push(Token { text, quoted });
            if chars.peek() == Some(&',') {
                chars.next();
                continue;
            }
            break;
        }
        fields.push(field);
    }
    Ok(fields)
}

fn single<'a>(field: &'a [Token], what: &str) -> Result<&'a Token, String> {
    match field {
        [t] => Ok(t),
        _ => Err(format!("multiple values specified for {what}")),
    }
}

/// A netmask of `bits` for the family of `addr`.
fn mask_of(addr: &IpAddr, bits: u32) -> Option<IpAddr> {
    match addr {
        IpAddr::V4(_) if bits <= 32 => Some(IpAddr::V4(std::net::Ipv4Addr::from(if bits == 0 { 0 } else { u32::MAX << (32 - bits) }))),
        IpAddr::V6(_) if bits <= 128 => Some(IpAddr::V6(std::net::Ipv6Addr::from(if bits == 0 { 0 } else { u128::MAX << (128 - bits) }))),
        _ => None,
    }
}

fn parse_line(line_number: usize, fields: &[Vec<Token>]) -> Result<HbaLine, String> {
    let conn = single(&fields[0], "connection type")?;
    let conn_type = match conn.text.as_str() {
        "local" => ConnType::Local,
        "host" => ConnType::Host,
        "hostssl" => ConnType::HostSsl,
        "hostnossl" => ConnType::HostNoSsl,
        "hostgssenc" => ConnType::HostGssEnc,
        "hostnogssenc" => ConnType::HostNoGssEnc,
        other => return Err(format!("invalid connection type \"{other}\"")),
    };
    let mut rest = fields[1..].iter();
    let databases = rest.next().ok_or("end-of-line before database specification")?.clone();
    let users = rest.next().ok_or("end-of-line before role specification")?.clone();
    for t in databases.iter().chain(users.iter()) {
        if !t.quoted && t.text.starts_with('@') {
            return Err(format!("included files (\"{}\") are not supported by Tusk", t.text));
        }
    }
    let mut address = None;
    if conn_type != ConnType::Local {
        let a = single(rest.next().ok_or("end-of-line before IP address specification")?, "IP address")?;
        address = Some(match a.text.as_str() {
            "all" if !a.quoted => Address::All,
            "samehost" if !a.quoted => Address::SameHost,
            "samenet" if !a.quoted => Address::SameNet,
            text => {
                let (host, bits) = match text.split_once('/') {
                    Some((h, b)) => (h, Some(b)),
                    None => (text, None),
                };
                match host.parse::<IpAddr>() {
                    Ok(ip) => {
                        let mask = match bits {
                            Some(b) => {
                                let n: u32 = b.parse().map_err(|_| format!("invalid CIDR mask in address \"{text}\""))?;
                                mask_of(&ip, n).ok_or_else(|| format!("invalid CIDR mask in address \"{text}\""))?
                            }
                            None => {
                                // The mask is the next field.
                                let m = single(rest.next().ok_or("end-of-line before netmask specification")?, "netmask")?;
                                let mask: IpAddr = m.text.parse().map_err(|_| format!("invalid IP mask \"{}\"", m.text))?;
                                if mask.is_ipv4() != ip.is_ipv4() {
                                    return Err("IP address and mask do not match".into());
                                }
                                mask
                            }
                        };
                        Address::Net(ip, mask)
                    }
                    Err(_) if bits.is_some() => return Err(format!("invalid IP address \"{host}\"")),
                    Err(_) => {
                        if host.starts_with('.') {
                            return Err(format!("host name suffixes (\"{host}\") are not supported by Tusk"));
                        }
                        Address::Hostname(host.to_string())
                    }
                }
            }
        });
    }
    let m = single(rest.next().ok_or("end-of-line before authentication method")?, "authentication method")?;
    let method = match m.text.as_str() {
        "trust" => Method::Trust,
        "reject" => Method::Reject,
        "password" => Method::Password,
        "md5" => Method::Md5,
        "scram-sha-256" => Method::ScramSha256,
        "ident" | "peer" | "gss" | "sspi" | "pam" | "ldap" | "radius" | "cert" | "bsd" => Method::Unsupported(m.text.clone()),
        "krb5" => return Err("krb5 authentication is not supported".into()),
        other => return Err(format!("invalid authentication method \"{other}\"")),
    };
    if method == Method::Unsupported("peer".into()) && conn_type != ConnType::Local {
        return Err("peer authentication is only supported on local sockets".into());
    }
    for opt in rest {
        for t in opt {
            if !t.text.contains('=') {
                return Err(format!("authentication option not in name=value format: {}", t.text));
            }
        }
    }
    Ok(HbaLine { line_number, conn_type, databases, users, address, method })
}

impl Hba {
    /// Parses a whole file. Errors name the line, as PostgreSQL's log does.
    pub fn parse(text: &str, file: &str) -> Result<Hba, String> {
        let mut lines = Vec::new();
        let mut pending = String::new();
        let mut start = 0;
        for (i, raw) in text.lines().enumerate() {
            // A backslash at the end of a line continues it.
            if pending.is_empty() {
                start = i + 1;
            }
            if let Some(cont) = raw.strip_suffix('\\') {
                pending.push_str(cont);
                pending.push(' ');
                continue;
            }
            pending.push_str(raw);
            let line = std::mem::take(&mut pending);
            let fields = tokenize(&line).map_err(|e| format!("{e}, line {start} of configuration file \"{file}\""))?;
            if fields.is_empty() {
                continue;
            }
            let parsed = parse_line(start, &fields).map_err(|e| format!("{e}, line {start} of configuration file \"{file}\""))?;
            lines.push(parsed);
        }
        Ok(Hba { lines })
    }

    /// Reads `pg_hba.conf` from the data directory.
    pub fn load(path: &Path) -> Result<Hba, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("could not open configuration file \"{}\": {e}", path.display()))?;
        Hba::parse(&text, &path.display().to_string())
    }

    /// The first line that matches the connection (PostgreSQL's check_hba).
    pub fn find(&self, c: &Client) -> Option<&HbaLine> {
        let addr = canonical(c.addr);
        self.lines.iter().find(|l| {
            let type_ok = match l.conn_type {
                ConnType::Local | ConnType::HostGssEnc => false,
                ConnType::Host | ConnType::HostNoGssEnc => true,
                ConnType::HostSsl => c.ssl,
                ConnType::HostNoSsl => !c.ssl,
            };
            type_ok
                && l.address.as_ref().is_some_and(|a| address_matches(a, addr))
                && database_matches(&l.databases, c.database, c.user)
                && role_matches(&l.users, c.user)
        })
    }
}

/// An IPv4 client seen through an IPv4-mapped IPv6 address is matched as IPv4.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(addr),
        v4 => v4,
    }
}

fn in_net(addr: IpAddr, net: IpAddr, mask: IpAddr) -> bool {
    match (addr, net, mask) {
        (IpAddr::V4(a), IpAddr::V4(n), IpAddr::V4(m)) => u32::from(a) & u32::from(m) == u32::from(n) & u32::from(m),
        (IpAddr::V6(a), IpAddr::V6(n), IpAddr::V6(m)) => u128::from(a) & u128::from(m) == u128::from(n) & u128::from(m),
        _ => false,
    }
}

fn address_matches(a: &Address, addr: IpAddr) -> bool {
    match a {
        Address::All => true,
        Address::Net(net, mask) => in_net(addr, *net, *mask),
        Address::SameHost => interfaces().iter().any(|(ip, _)| canonical(*ip) == addr),
        Address::SameNet => interfaces().iter().any(|(ip, mask)| in_net(addr, canonical(*ip), *mask)),
        Address::Hostname(name) => {
            // The name must resolve to the client's address.
            use std::net::ToSocketAddrs;
            (name.as_str(), 0).to_socket_addrs().map(|mut it| it.any(|sa| canonical(sa.ip()) == addr)).unwrap_or(false)
        }
    }
}

/// PostgreSQL's check_db: `all`, `sameuser`, `samerole`/`samegroup` (a
/// role is a member of itself; Tusk keeps no other memberships), a name.
/// `replication` matches only replication connections, which Tusk refuses.
fn database_matches(tokens: &[Token], database: &str, user: &str) -> bool {
    tokens.iter().any(|t| {
        if t.is_keyword("all") {
            true
        } else if t.is_keyword("sameuser") {
            database == user
        } else if t.is_keyword("samerole") || t.is_keyword("samegroup") {
            database == user
        } else if t.is_keyword("replication") {
            false
        } else {
            t.text == database
        }
    })
}

/// PostgreSQL's check_role: `all`, `+role` (membership: the role itself),
/// a name.
fn role_matches(tokens: &[Token], user: &str) -> bool {
    tokens.iter().any(|t| {
        if t.is_keyword("all") {
            true
        } else if let Some(group) = t.text.strip_prefix('+').filter(|_| !t.quoted) {
            group == user
        } else {
            t.text == user
        }
    })
}

/// This machine's interface addresses and netmasks (for samehost / samenet).
fn interfaces() -> Vec<(IpAddr, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below; each
    // sockaddr is read according to its family.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            if let (Some(a), Some(m)) = (sockaddr_ip(ifa.ifa_addr), sockaddr_ip(ifa.ifa_netmask)) {
                if a.is_ipv4() == m.is_ipv4() {
                    out.push((a, m));
                }
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// # Safety
/// `sa` is null or points to a sockaddr of the size its family implies.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match (*sa).sa_family as i32 {
        libc::AF_INET => {
            let sin = &*(sa as *const libc::sockaddr_in);
            Some(IpAddr::V4(std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr))))
        }
        libc::AF_INET6 => {
            let sin6 = &*(sa as *const libc::sockaddr_in6);
            Some(IpAddr::V6(std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client<'a>(addr: &str, ssl: bool, user: &'a str, database: &'a str) -> Client<'a> {
        Client { addr: addr.parse().unwrap(), ssl, user, database }
    }

    fn method(hba: &Hba, c: &Client) -> Option<String> {
        hba.find(c).map(|l| l.method.name().to_string())
    }

    #[test]
    fn default_file_trusts_loopback_only() {
        let hba = Hba::parse(DEFAULT_HBA, "pg_hba.conf").unwrap();
        assert_eq!(method(&hba, &client("127.0.0.1", false, "postgres", "postgres")).as_deref(), Some("trust"));
        assert_eq!(method(&hba, &client("::1", false, "postgres", "postgres")).as_deref(), Some("trust"));
        assert_eq!(method(&hba, &client("::ffff:127.0.0.1", false, "x", "y")).as_deref(), Some("trust"));
        assert_eq!(method(&hba, &client("10.1.2.3", false, "postgres", "postgres")).as_deref(), Some("scram-sha-256"));
        assert_eq!(method(&hba, &client("2001:db8::1", true, "postgres", "postgres")).as_deref(), Some("scram-sha-256"));
        // 127.0.0.2 is not 127.0.0.1/32.
        assert_eq!(method(&hba, &client("127.0.0.2", false, "a", "b")).as_deref(), Some("scram-sha-256"));
    }

    #[test]
    fn fields_and_matching() {
        let text = "
            # comment
            hostssl  \"db one\",db2  alice,+bob   10.0.0.0/8     md5   # trailing
            hostnossl all        all          10.0.0.0 255.0.0.0 password
            host     sameuser    all          all            scram-sha-256
            local    all         all                         trust
            host     \"all\"     carol        192.168.1.0/24 reject
            host     all         carol        192.168.0.0/16 ident
        ";
        let hba = Hba::parse(text, "f").unwrap();
        assert_eq!(hba.lines.len(), 6);
        assert_eq!(method(&hba, &client("10.1.1.1", true, "alice", "db one")).as_deref(), Some("md5"));
        assert_eq!(method(&hba, &client("10.1.1.1", true, "bob", "db2")).as_deref(), Some("md5"));
        assert_eq!(method(&hba, &client("10.1.1.1", false, "bob", "db2")).as_deref(), Some("password"));
        assert_eq!(method(&hba, &client("11.1.1.1", false, "dave", "dave")).as_deref(), Some("scram-sha-256"));
        assert_eq!(method(&hba, &client("11.1.1.1", false, "dave", "other")), None);
        // A quoted "all" is a database named all.
        assert_eq!(method(&hba, &client("192.168.1.5", false, "carol", "all")).as_deref(), Some("reject"));
        assert_eq!(method(&hba, &client("192.168.1.5", false, "carol", "x")).as_deref(), Some("ident"));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, msg) in [
            ("hots all all all trust", "invalid connection type \"hots\""),
            ("host all all 10.0.0.0/33 trust", "invalid CIDR mask in address \"10.0.0.0/33\""),
            ("host all all all foo", "invalid authentication method \"foo\""),
            ("host all all", "end-of-line before IP address specification"),
            ("host all all all", "end-of-line before authentication method"),
            ("host all all 10.0.0.0 trust", "invalid IP mask \"trust\""),
            ("host all all all trust x", "authentication option not in name=value format: x"),
            ("host \"all all all trust", "unterminated quoted string"),
        ] {
            let e = Hba::parse(&format!("\n{text}\n"), "pg_hba.conf").unwrap_err();
            assert_eq!(e, format!("{msg}, line 2 of configuration file \"pg_hba.conf\""), "{text}");
        }
    }
}
