//! CREATE / ALTER / DROP SUBSCRIPTION, as PostgreSQL 15's
//! subscriptioncmds.c checks them. Tusk does not build logical
//! replication: a subscription is a catalog row (pg_subscription, psql's
//! \dRs) made with `connect = false`; anything that would need to talk to
//! the publisher (connecting, refreshing, dropping a slot) fails with
//! 0A000 once the statement's own checks have passed.

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::{sqlstate, PgError, PgResult};

use super::grant;
use super::publication::{conflicting, def_boolean};
use crate::catalog::*;
use crate::session::SqlSession;

const CONNECT: u32 = 1 << 0;
const ENABLED: u32 = 1 << 1;
const CREATE_SLOT: u32 = 1 << 2;
const SLOT_NAME: u32 = 1 << 3;
const COPY_DATA: u32 = 1 << 4;
const SYNCHRONOUS_COMMIT: u32 = 1 << 5;
const REFRESH: u32 = 1 << 6;
const BINARY: u32 = 1 << 7;
const STREAMING: u32 = 1 << 8;
const TWO_PHASE: u32 = 1 << 9;
const DISABLE_ON_ERROR: u32 = 1 << 10;
const LSN: u32 = 1 << 11;

/// SubOpts: the options a statement gave, with PostgreSQL's defaults.
struct SubOpts {
    specified: u32,
    connect: bool,
    enabled: bool,
    create_slot: bool,
    slot_name: Option<String>,
    copy_data: bool,
    synchronous_commit: Option<String>,
    refresh: bool,
    binary: bool,
    streaming: bool,
    two_phase: bool,
    disable_on_error: bool,
    lsn: u64,
}

fn syntax(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, message)
}

fn mutually_exclusive(a: &str, b: &str) -> PgError {
    syntax(format!("{a} and {b} are mutually exclusive options"))
}

fn not_found(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_OBJECT, format!("subscription \"{name}\" does not exist"))
}

fn in_block(s: &SqlSession, what: &str) -> PgResult<()> {
    if s.in_block.get() {
        return Err(PgError::new(sqlstate::ACTIVE_SQL_TRANSACTION, format!("{what} cannot run inside a transaction block")));
    }
    Ok(())
}

/// ReplicationSlotValidateName
fn validate_slot_name(name: &str) -> PgResult<()> {
    if name.is_empty() {
        return Err(PgError::new(sqlstate::INVALID_NAME, format!("replication slot name \"{name}\" is too short")));
    }
    if name.len() >= 64 {
        return Err(PgError::new(sqlstate::NAME_TOO_LONG, format!("replication slot name \"{name}\" is too long")));
    }
    if !name.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_') {
        return Err(PgError::new(sqlstate::INVALID_NAME, format!("replication slot name \"{name}\" contains invalid character"))
            .with_hint("Replication slot names may only contain lower case letters, numbers, and the underscore character."));
    }
    Ok(())
}

/// pg_lsn_in: "X/Y" in hexadecimal.
fn parse_lsn(text: &str) -> PgResult<u64> {
    let bad = || PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type pg_lsn: \"{text}\""));
    let (hi, lo) = text.split_once('/').ok_or_else(bad)?;
    let ok = |p: &str| !p.is_empty() && p.len() <= 8 && p.bytes().all(|c| c.is_ascii_hexdigit());
    if !ok(hi) || !ok(lo) {
        return Err(bad());
    }
    Ok((u64::from_str_radix(hi, 16).map_err(|_| bad())? << 32) | u64::from_str_radix(lo, 16).map_err(|_| bad())?)
}

/// parse_subscription_options: only `supported` options are recognized.
fn parse_options(s: &SqlSession, options: &[Node], supported: u32) -> PgResult<SubOpts> {
    let mut o = SubOpts {
        specified: 0,
        connect: true,
        enabled: true,
        create_slot: true,
        slot_name: None,
        copy_data: true,
        synchronous_commit: None,
        refresh: true,
        binary: false,
        streaming: false,
        two_phase: false,
        disable_on_error: false,
        lsn: 0,
    };
    for n in options {
        let Some(NodeEnum::DefElem(de)) = &n.node else { continue };
        let bit = match de.defname.as_str() {
            "connect" => CONNECT,
            "enabled" => ENABLED,
            "create_slot" => CREATE_SLOT,
            "slot_name" => SLOT_NAME,
            "copy_data" => COPY_DATA,
            "synchronous_commit" => SYNCHRONOUS_COMMIT,
            "refresh" => REFRESH,
            "binary" => BINARY,
            "streaming" => STREAMING,
            "two_phase" => TWO_PHASE,
            "disable_on_error" => DISABLE_ON_ERROR,
            "lsn" => LSN,
            _ => 0,
        };
        if bit == 0 || supported & bit == 0 {
            return Err(syntax(format!("unrecognized subscription parameter: \"{}\"", de.defname)));
        }
        if o.specified & bit != 0 {
            return Err(conflicting(de));
        }
        o.specified |= bit;
        let string = || super::def_elem_value(de).unwrap_or_default();
        match bit {
            CONNECT => o.connect = def_boolean(de)?,
            ENABLED => o.enabled = def_boolean(de)?,
            CREATE_SLOT => o.create_slot = def_boolean(de)?,
            SLOT_NAME => {
                let v = string();
                o.slot_name = if v == "none" {
                    None
                } else {
                    validate_slot_name(&v)?;
                    Some(v)
                };
            }
            COPY_DATA => o.copy_data = def_boolean(de)?,
            SYNCHRONOUS_COMMIT => {
                let v = string();
                // Checked as SET would check it.
                s.settings.borrow().clone().set("synchronous_commit", &v)?;
                o.synchronous_commit = Some(v);
            }
            REFRESH => o.refresh = def_boolean(de)?,
            BINARY => o.binary = def_boolean(de)?,
            STREAMING => o.streaming = def_boolean(de)?,
            TWO_PHASE => o.two_phase = def_boolean(de)?,
            DISABLE_ON_ERROR => o.disable_on_error = def_boolean(de)?,
            _ => {
                let v = string();
                o.lsn = if v == "none" { 0 } else { parse_lsn(&v)? };
                if v != "none" && o.lsn == 0 {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid WAL location (LSN): {v}")));
                }
            }
        }
    }
    // connect = false changes the defaults of what needs a connection.
    if !o.connect && supported & CONNECT != 0 {
        if o.enabled && o.specified & ENABLED != 0 {
            return Err(mutually_exclusive("connect = false", "enabled = true"));
        }
        if o.create_slot && o.specified & CREATE_SLOT != 0 {
            return Err(mutually_exclusive("connect = false", "create_slot = true"));
        }
        if o.copy_data && o.specified & COPY_DATA != 0 {
            return Err(mutually_exclusive("connect = false", "copy_data = true"));
        }
        o.enabled = false;
        o.create_slot = false;
        o.copy_data = false;
    }
    if o.slot_name.is_none() && o.specified & SLOT_NAME != 0 {
        if o.enabled && supported & ENABLED != 0 {
            return Err(if o.specified & ENABLED != 0 {
                mutually_exclusive("slot_name = NONE", "enabled = true")
            } else {
                syntax("subscription with slot_name = NONE must also set enabled = false")
            });
        }
        if o.create_slot && supported & CREATE_SLOT != 0 {
            return Err(if o.specified & CREATE_SLOT != 0 {
                mutually_exclusive("slot_name = NONE", "create_slot = true")
            } else {
                syntax("subscription with slot_name = NONE must also set create_slot = false")
            });
        }
    }
    Ok(o)
}

/// The connection options libpq 15 knows (PQconninfoOptions).
const CONNINFO_KEYWORDS: &[&str] = &[
    "service", "user", "password", "passfile", "channel_binding", "connect_timeout", "dbname", "host", "hostaddr", "port",
    "client_encoding", "options", "application_name", "fallback_application_name", "keepalives", "keepalives_idle",
    "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslmode", "sslcompression", "sslcert", "sslkey",
    "sslpassword", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
    "ssl_max_protocol_version", "gssencmode", "krbsrvname", "gsslib", "replication", "target_session_attrs",
];

/// PQconninfoParse of a keyword=value string (a URI is taken as given):
/// the pairs, or libpq's message.
fn parse_conninfo(conninfo: &str) -> Result<Vec<(String, String)>, String> {
    let t = conninfo.trim_start();
    if t.starts_with("postgresql://") || t.starts_with("postgres://") {
        return Ok(Vec::new());
    }
    let b: Vec<char> = conninfo.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        if b[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i] != '=' && !b[i].is_whitespace() {
            i += 1;
        }
        let key: String = b[start..i].iter().collect();
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        if i >= b.len() || b[i] != '=' {
            return Err(format!("missing \"=\" after \"{key}\" in connection info string"));
        }
        i += 1;
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < b.len() && b[i] == '\'' {
            i += 1;
            loop {
                if i >= b.len() {
                    return Err("unterminated quoted string in connection info string".into());
                }
                match b[i] {
                    '\\' if i + 1 < b.len() => {
                        value.push(b[i + 1]);
                        i += 2;
                    }
                    '\'' => {
                        i += 1;
                        break;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !b[i].is_whitespace() {
                if b[i] == '\\' && i + 1 < b.len() {
                    i += 1;
                }
                value.push(b[i]);
                i += 1;
            }
        }
        if !CONNINFO_KEYWORDS.contains(&key.as_str()) {
            return Err(format!("invalid connection option \"{key}\""));
        }
        out.push((key, value));
    }
    Ok(out)
}

/// walrcv_check_conninfo
fn check_conninfo(conninfo: &str) -> PgResult<Vec<(String, String)>> {
    // libpq's messages end with a newline, which PostgreSQL passes on.
    parse_conninfo(conninfo).map_err(|e| syntax(format!("invalid connection string syntax: {e}\n")))
}

/// What connecting to the publisher would do: libpq's own refusal of a
/// bad port, else Tusk's answer that it does not replicate.
fn connect_to_publisher(pairs: &[(String, String)]) -> PgError {
    for (k, v) in pairs {
        if k == "port" {
            let ok = v.split(',').all(|p| p.is_empty() || p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n)));
            if !ok {
                return PgError::new(sqlstate::CONNECTION_FAILURE, format!("could not connect to the publisher: invalid port number: \"{v}\""));
            }
        }
    }
    PgError::unsupported("logical replication (connecting to a publisher)")
        .with_hint("Create the subscription WITH (connect = false).")
}

fn publication_names(list: &[Node]) -> Vec<String> {
    list.iter()
        .filter_map(|n| match &n.node {
            Some(NodeEnum::String(s)) => Some(s.sval.clone()),
            _ => None,
        })
        .collect()
}

/// check_duplicates_in_publist
fn check_duplicates(names: &[String]) -> PgResult<()> {
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("publication name \"{n}\" used more than once")));
        }
    }
    Ok(())
}

fn lock_name(s: &SqlSession, name: &str) -> PgResult<()> {
    s.txn()?.get_for_update(&store::pubsub_name_key(s.db, b's', name))?;
    Ok(())
}

fn not_subscribed_warning(s: &SqlSession) {
    s.notices.borrow_mut().push(PgError::warning(
        "tables were not subscribed, you will have to run ALTER SUBSCRIPTION ... REFRESH PUBLICATION to subscribe the tables",
    ));
}

/// CREATE SUBSCRIPTION name CONNECTION 'conninfo' PUBLICATION pub [, ...] [WITH (...)]
pub fn create_subscription(s: &mut SqlSession, stmt: &pb::CreateSubscriptionStmt) -> PgResult<()> {
    let supported = CONNECT | ENABLED | CREATE_SLOT | SLOT_NAME | COPY_DATA | SYNCHRONOUS_COMMIT | BINARY | STREAMING | TWO_PHASE | DISABLE_ON_ERROR;
    let o = parse_options(s, &stmt.options, supported)?;
    if o.create_slot {
        in_block(s, "CREATE SUBSCRIPTION ... WITH (create_slot = true)")?;
    }
    if !grant::current_grantee(s).superuser {
        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "must be superuser to create subscriptions"));
    }
    lock_name(s, &stmt.subname)?;
    let catalog = s.catalog()?;
    if catalog.subscription_by_name(&stmt.subname).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("subscription \"{}\" already exists", stmt.subname)));
    }
    let slot_name = if o.specified & SLOT_NAME == 0 { Some(stmt.subname.clone()) } else { o.slot_name.clone() };
    let pairs = check_conninfo(&stmt.conninfo)?;
    let publications = publication_names(&stmt.publication);
    check_duplicates(&publications)?;
    if o.connect {
        return Err(connect_to_publisher(&pairs));
    }
    let sub = Subscription {
        oid: store::new_oid(&s.cluster.engine)?,
        name: stmt.subname.clone(),
        owner: grant::current_role_oid(s),
        enabled: o.enabled,
        binary: o.binary,
        streaming: o.streaming,
        two_phase: if o.two_phase { 'p' } else { 'd' },
        disable_on_error: o.disable_on_error,
        conninfo: stmt.conninfo.clone(),
        slot_name,
        synchronous_commit: o.synchronous_commit.clone().unwrap_or_else(|| "off".into()),
        publications,
        skip_lsn: 0,
    };
    store::put_subscription(s.txn()?, s.db, &sub)?;
    not_subscribed_warning(s);
    s.reload_txn_catalog()
}

/// The subscription `name`, which the current user must own.
fn owned_subscription(s: &SqlSession, catalog: &DbCatalog, name: &str) -> PgResult<Subscription> {
    let sub = catalog.subscription_by_name(name).cloned().ok_or_else(|| not_found(name))?;
    if !grant::current_grantee(s).holds(sub.owner) {
        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("must be owner of subscription {name}")));
    }
    Ok(sub)
}

/// ALTER SUBSCRIPTION name { CONNECTION | SET/ADD/DROP PUBLICATION |
/// REFRESH PUBLICATION | ENABLE | DISABLE | SET (...) | SKIP (...) }
pub fn alter_subscription(s: &mut SqlSession, stmt: &pb::AlterSubscriptionStmt) -> PgResult<()> {
    use pb::AlterSubscriptionType as K;
    lock_name(s, &stmt.subname)?;
    let catalog = s.catalog()?;
    let mut sub = owned_subscription(s, &catalog, &stmt.subname)?;
    let kind = stmt.kind;
    let refresh_unsupported = || PgError::unsupported("ALTER SUBSCRIPTION ... REFRESH (logical replication)");
    match kind {
        k if k == K::AlterSubscriptionOptions as i32 => {
            let o = parse_options(s, &stmt.options, SLOT_NAME | SYNCHRONOUS_COMMIT | BINARY | STREAMING | DISABLE_ON_ERROR)?;
            if o.specified & SLOT_NAME != 0 {
                if sub.enabled && o.slot_name.is_none() {
                    return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "cannot set slot_name = NONE for enabled subscription"));
                }
                sub.slot_name = o.slot_name.clone();
            }
            if let Some(v) = o.synchronous_commit {
                sub.synchronous_commit = v;
            }
            if o.specified & BINARY != 0 {
                sub.binary = o.binary;
            }
            if o.specified & STREAMING != 0 {
                sub.streaming = o.streaming;
            }
            if o.specified & DISABLE_ON_ERROR != 0 {
                sub.disable_on_error = o.disable_on_error;
            }
        }
        k if k == K::AlterSubscriptionEnabled as i32 => {
            let o = parse_options(s, &stmt.options, ENABLED)?;
            if sub.slot_name.is_none() && o.enabled {
                return Err(syntax("cannot enable subscription that does not have a slot name"));
            }
            sub.enabled = o.enabled;
        }
        k if k == K::AlterSubscriptionConnection as i32 => {
            check_conninfo(&stmt.conninfo)?;
            sub.conninfo = stmt.conninfo.clone();
        }
        k if k == K::AlterSubscriptionSetPublication as i32 => {
            let o = parse_options(s, &stmt.options, COPY_DATA | REFRESH)?;
            let names = publication_names(&stmt.publication);
            check_duplicates(&names)?;
            sub.publications = names;
            if o.refresh {
                if !sub.enabled {
                    return Err(syntax("ALTER SUBSCRIPTION with refresh is not allowed for disabled subscriptions")
                        .with_hint("Use ALTER SUBSCRIPTION ... SET PUBLICATION ... WITH (refresh = false)."));
                }
                in_block(s, "ALTER SUBSCRIPTION with refresh")?;
                return Err(refresh_unsupported());
            }
        }
        k if k == K::AlterSubscriptionAddPublication as i32 || k == K::AlterSubscriptionDropPublication as i32 => {
            let add = k == K::AlterSubscriptionAddPublication as i32;
            let o = parse_options(s, &stmt.options, REFRESH | COPY_DATA)?;
            let names = publication_names(&stmt.publication);
            check_duplicates(&names)?;
            // merge_publications
            let mut list = sub.publications.clone();
            for n in &names {
                match list.iter().position(|p| p == n) {
                    Some(_) if add => {
                        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("publication \"{n}\" is already in subscription \"{}\"", sub.name)))
                    }
                    Some(i) => {
                        list.remove(i);
                    }
                    None if add => list.push(n.clone()),
                    None => return Err(syntax(format!("publication \"{n}\" is not in subscription \"{}\"", sub.name))),
                }
            }
            if list.is_empty() {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot drop all the publications from a subscription"));
            }
            sub.publications = list;
            if o.refresh {
                if !sub.enabled {
                    let instead = if add {
                        "ALTER SUBSCRIPTION ... ADD PUBLICATION ... WITH (refresh = false)"
                    } else {
                        "ALTER SUBSCRIPTION ... DROP PUBLICATION ... WITH (refresh = false)"
                    };
                    return Err(syntax("ALTER SUBSCRIPTION with refresh is not allowed for disabled subscriptions").with_hint(format!("Use {instead} instead.")));
                }
                in_block(s, "ALTER SUBSCRIPTION with refresh")?;
                return Err(refresh_unsupported());
            }
        }
        k if k == K::AlterSubscriptionRefresh as i32 => {
            if !sub.enabled {
                return Err(syntax("ALTER SUBSCRIPTION ... REFRESH is not allowed for disabled subscriptions"));
            }
            parse_options(s, &stmt.options, COPY_DATA)?;
            in_block(s, "ALTER SUBSCRIPTION ... REFRESH")?;
            return Err(refresh_unsupported());
        }
        k if k == K::AlterSubscriptionSkip as i32 => {
            let o = parse_options(s, &stmt.options, LSN)?;
            sub.skip_lsn = o.lsn;
        }
        _ => return Err(PgError::internal(format!("unrecognized ALTER SUBSCRIPTION kind {kind}"))),
    }
    store::put_subscription(s.txn()?, s.db, &sub)?;
    s.reload_txn_catalog()
}

/// DROP SUBSCRIPTION [IF EXISTS] name
pub fn drop_subscription(s: &mut SqlSession, stmt: &pb::DropSubscriptionStmt) -> PgResult<()> {
    lock_name(s, &stmt.subname)?;
    let catalog = s.catalog()?;
    let Some(found) = catalog.subscription_by_name(&stmt.subname) else {
        if stmt.missing_ok {
            super::notice(s, format!("subscription \"{}\" does not exist, skipping", stmt.subname));
            return Ok(());
        }
        return Err(not_found(&stmt.subname));
    };
    let sub = owned_subscription(s, &catalog, &found.name)?;
    if let Some(slot) = &sub.slot_name {
        in_block(s, "DROP SUBSCRIPTION")?;
        // Dropping the slot needs the publisher.
        return Err(PgError::unsupported(format!("dropping replication slot \"{slot}\" on the publisher"))
            .with_hint("Use ALTER SUBSCRIPTION ... DISABLE to disable the subscription, and then use ALTER SUBSCRIPTION ... SET (slot_name = NONE) to disassociate it from the slot."));
    }
    store::delete_subscription(s.txn()?, s.db, sub.oid)?;
    store::put_comment(s.txn()?, s.db, crate::catalog::depend::PG_SUBSCRIPTION, sub.oid, 0, None)?;
    s.reload_txn_catalog()
}

/// ALTER SUBSCRIPTION name RENAME TO new_name
pub fn rename_subscription(s: &mut SqlSession, old: &str, new: &str) -> PgResult<()> {
    lock_name(s, old)?;
    lock_name(s, new)?;
    let catalog = s.catalog()?;
    let mut sub = owned_subscription(s, &catalog, old)?;
    if catalog.subscription_by_name(new).is_some() {
        return Err(PgError::new(sqlstate::DUPLICATE_OBJECT, format!("subscription \"{new}\" already exists")));
    }
    sub.name = new.to_string();
    store::put_subscription(s.txn()?, s.db, &sub)?;
    s.reload_txn_catalog()
}

/// ALTER SUBSCRIPTION name OWNER TO role: the owner must be a superuser.
pub fn alter_subscription_owner(s: &mut SqlSession, name: &str, new_owner: tusk_types::Oid) -> PgResult<()> {
    lock_name(s, name)?;
    let catalog = s.catalog()?;
    let mut sub = catalog.subscription_by_name(name).cloned().ok_or_else(|| not_found(name))?;
    if sub.owner == new_owner {
        return Ok(());
    }
    owned_subscription(s, &catalog, name)?;
    if !s.cluster_catalog().is_superuser(new_owner) {
        return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, format!("permission denied to change owner of subscription \"{name}\""))
            .with_hint("The owner of a subscription must be a superuser."));
    }
    sub.owner = new_owner;
    store::put_subscription(s.txn()?, s.db, &sub)?;
    s.reload_txn_catalog()
}

/// COMMENT ON SUBSCRIPTION: the subscription's OID, for its owner.
pub fn comment_target(s: &SqlSession, catalog: &DbCatalog, name: &str) -> PgResult<tusk_types::Oid> {
    Ok(owned_subscription(s, catalog, name)?.oid)
}
