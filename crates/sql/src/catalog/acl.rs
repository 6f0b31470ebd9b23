//! Access control lists: PostgreSQL's aclitem (src/backend/utils/adt/acl.c).
//!
//! An object's privileges are a list of items `grantee=privileges/grantor`
//! (grantee 0 is PUBLIC). An object whose list was never changed stores
//! none (`None`) and has the default privileges of its kind (acldefault):
//! the owner holds everything, and PUBLIC holds what PostgreSQL gives it
//! (CONNECT and TEMPORARY on databases, USAGE on the public schema).

use serde::{Deserialize, Serialize};
use tusk_types::Oid;

use super::{ClusterCatalog, BOOTSTRAP_SUPERUSER, PUBLIC_NAMESPACE};

/// The grantee that means everyone.
pub const PUBLIC: Oid = 0;
/// pg_database_owner: implicitly, the owner of the current database.
pub const PG_DATABASE_OWNER: Oid = 6171;

pub const INSERT: u32 = 1 << 0;
pub const SELECT: u32 = 1 << 1;
pub const UPDATE: u32 = 1 << 2;
pub const DELETE: u32 = 1 << 3;
pub const TRUNCATE: u32 = 1 << 4;
pub const REFERENCES: u32 = 1 << 5;
pub const TRIGGER: u32 = 1 << 6;
pub const EXECUTE: u32 = 1 << 7;
pub const USAGE: u32 = 1 << 8;
pub const CREATE: u32 = 1 << 9;
pub const CREATE_TEMP: u32 = 1 << 10;
pub const CONNECT: u32 = 1 << 11;

/// ACL_ALL_RIGHTS_STR: bit i prints as letter i.
const LETTERS: &[u8] = b"arwdDxtXUCTc";

/// The kinds of objects that carry privileges, with what each may be granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    Table,
    Sequence,
    Schema,
    Database,
    /// Functions, procedures and aggregates: EXECUTE.
    Function,
}

impl ObjectKind {
    /// ACL_ALL_RIGHTS_*.
    pub fn all_rights(self) -> u32 {
        match self {
            ObjectKind::Table => INSERT | SELECT | UPDATE | DELETE | TRUNCATE | REFERENCES | TRIGGER,
            ObjectKind::Sequence => USAGE | SELECT | UPDATE,
            ObjectKind::Schema => USAGE | CREATE,
            ObjectKind::Database => CREATE | CREATE_TEMP | CONNECT,
            ObjectKind::Function => EXECUTE,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclItem {
    pub grantee: Oid,
    pub grantor: Oid,
    pub privs: u32,
    /// Privileges held WITH GRANT OPTION (a subset of `privs`).
    pub grant_options: u32,
}

/// acldefault: the privileges of an object whose ACL was never set.
pub fn default_acl(kind: ObjectKind, owner: Oid) -> Vec<AclItem> {
    let all = kind.all_rights();
    let mut v = Vec::new();
    match kind {
        ObjectKind::Database => v.push(AclItem { grantee: PUBLIC, grantor: owner, privs: CREATE_TEMP | CONNECT, grant_options: 0 }),
        ObjectKind::Function => v.push(AclItem { grantee: PUBLIC, grantor: owner, privs: EXECUTE, grant_options: 0 }),
        _ => {}
    }
    v.push(AclItem { grantee: owner, grantor: owner, privs: all, grant_options: 0 });
    v
}

/// The ACL of a schema: stored, or what initdb gives it.
pub fn schema_acl(oid: Oid, owner: Oid, stored: &Option<Vec<AclItem>>) -> Vec<AclItem> {
    match stored {
        Some(v) => v.clone(),
        None if oid == PUBLIC_NAMESPACE => vec![
            AclItem { grantee: PG_DATABASE_OWNER, grantor: PG_DATABASE_OWNER, privs: USAGE | CREATE, grant_options: 0 },
            AclItem { grantee: PUBLIC, grantor: PG_DATABASE_OWNER, privs: USAGE, grant_options: 0 },
        ],
        None if oid == super::PG_CATALOG_NAMESPACE || oid == super::INFORMATION_SCHEMA_NAMESPACE => vec![
            AclItem { grantee: BOOTSTRAP_SUPERUSER, grantor: BOOTSTRAP_SUPERUSER, privs: USAGE | CREATE, grant_options: 0 },
            AclItem { grantee: PUBLIC, grantor: BOOTSTRAP_SUPERUSER, privs: USAGE, grant_options: 0 },
        ],
        None => default_acl(ObjectKind::Schema, owner),
    }
}

/// Who is asking: a role, whether it is a superuser, and the roles whose
/// privileges it holds (itself, the roles it inherits from, and
/// pg_database_owner when it owns the current database).
#[derive(Clone, Debug)]
pub struct Grantee {
    pub role: Oid,
    pub superuser: bool,
    pub privileges_of: Vec<Oid>,
}

impl Grantee {
    /// The role named `name` in the database `db` (None if it does not exist).
    pub fn lookup(cat: &ClusterCatalog, name: &str, db: Oid) -> Option<Grantee> {
        let r = cat.role_by_name(name)?;
        Some(Grantee::of(cat, r.oid, db))
    }

    pub fn of(cat: &ClusterCatalog, role: Oid, db: Oid) -> Grantee {
        let superuser = cat.is_superuser(role);
        let privileges_of = cat.roles_of(role, true, Some(db));
        Grantee { role, superuser, privileges_of }
    }

    /// Nobody: a role that does not exist holds no privilege.
    pub fn nobody() -> Grantee {
        Grantee { role: Oid::MAX, superuser: false, privileges_of: Vec::new() }
    }

    /// Whether it owns the current database (holds pg_database_owner).
    pub fn owns_database(&self) -> bool {
        self.privileges_of.contains(&PG_DATABASE_OWNER)
    }

    /// has_privs_of_role: whether it holds `role`'s privileges.
    pub fn holds(&self, role: Oid) -> bool {
        self.superuser || self.privileges_of.contains(&role)
    }

    fn matches(&self, grantee: Oid) -> bool {
        grantee == PUBLIC || self.privileges_of.contains(&grantee)
    }
}

/// pg_read_all_data and pg_write_all_data: their members read, or write,
/// every table and use every schema as if granted.
pub const PG_READ_ALL_DATA: Oid = 6181;
pub const PG_WRITE_ALL_DATA: Oid = 6182;

/// pg_class_aclmask: a relation's privileges, with those the predefined
/// data roles give.
pub fn relation_mask(acl: &[AclItem], who: &Grantee, wanted: u32) -> u32 {
    let mut have = mask(acl, who, wanted);
    if who.privileges_of.contains(&PG_READ_ALL_DATA) {
        have |= wanted & SELECT;
    }
    if who.privileges_of.contains(&PG_WRITE_ALL_DATA) {
        have |= wanted & (INSERT | UPDATE | DELETE);
    }
    have
}

/// pg_namespace_aclmask: a schema's privileges, with the USAGE the
/// predefined data roles give.
pub fn schema_mask(acl: &[AclItem], who: &Grantee, wanted: u32) -> u32 {
    let mut have = mask(acl, who, wanted);
    if who.privileges_of.iter().any(|r| *r == PG_READ_ALL_DATA || *r == PG_WRITE_ALL_DATA) {
        have |= wanted & USAGE;
    }
    have
}

/// aclmask: which of `mask` the role holds under `acl` (superusers hold all).
pub fn mask(acl: &[AclItem], who: &Grantee, mask: u32) -> u32 {
    if who.superuser {
        return mask;
    }
    acl.iter().filter(|i| who.matches(i.grantee)).fold(0, |m, i| m | i.privs) & mask
}

/// The grant options the role holds under `acl`.
pub fn grant_options(acl: &[AclItem], who: &Grantee) -> u32 {
    acl.iter().filter(|i| i.grantee != PUBLIC && who.matches(i.grantee)).fold(0, |m, i| m | i.grant_options)
}

/// aclupdate for GRANT: adds privileges to the (grantee, grantor) item.
pub fn grant(acl: &mut Vec<AclItem>, grantee: Oid, grantor: Oid, privs: u32, with_grant_option: bool) {
    let go = if with_grant_option { privs } else { 0 };
    if let Some(i) = acl.iter_mut().find(|i| i.grantee == grantee && i.grantor == grantor) {
        i.privs |= privs;
        i.grant_options |= go;
    } else if privs != 0 {
        acl.push(AclItem { grantee, grantor, privs, grant_options: go });
    }
}

/// aclupdate for REVOKE: takes privileges (or only their grant options)
/// from the (grantee, grantor) item, dropping it when nothing is left.
pub fn revoke(acl: &mut Vec<AclItem>, grantee: Oid, grantor: Oid, privs: u32, grant_option_only: bool) {
    if let Some(i) = acl.iter_mut().find(|i| i.grantee == grantee && i.grantor == grantor) {
        i.grant_options &= !privs;
        if !grant_option_only {
            i.privs &= !privs;
        }
    }
    acl.retain(|i| i.privs != 0);
}

/// aclnewowner: the old owner's items (as grantee or grantor) become the
/// new owner's, merged with any the new owner already had.
pub fn new_owner(acl: &mut Vec<AclItem>, old: Oid, new: Oid) {
    let mut out: Vec<AclItem> = Vec::with_capacity(acl.len());
    for mut item in acl.drain(..) {
        if item.grantee == old {
            item.grantee = new;
        }
        if item.grantor == old {
            item.grantor = new;
        }
        match out.iter_mut().find(|i| i.grantee == item.grantee && i.grantor == item.grantor) {
            Some(i) => {
                i.privs |= item.privs;
                i.grant_options |= item.grant_options;
            }
            None => out.push(item),
        }
    }
    *acl = out;
}

/// putid: a role name as aclitemout writes it (quoted unless plain).
fn put_id(out: &mut String, name: &str) {
    let plain = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        out.push_str(name);
    } else {
        out.push('"');
        for c in name.chars() {
            if c == '"' {
                out.push('"');
            }
            out.push(c);
        }
        out.push('"');
    }
}

/// aclitemout: `grantee=privs/grantor`, with `*` after grantable letters.
pub fn item_text(item: &AclItem, cat: &ClusterCatalog) -> String {
    let mut s = String::new();
    if item.grantee != PUBLIC {
        put_id(&mut s, &cat.role_name(item.grantee));
    }
    s.push('=');
    for (bit, letter) in LETTERS.iter().enumerate() {
        if item.privs & (1 << bit) != 0 {
            s.push(*letter as char);
            if item.grant_options & (1 << bit) != 0 {
                s.push('*');
            }
        }
    }
    s.push('/');
    put_id(&mut s, &cat.role_name(item.grantor));
    s
}

/// The privilege letters of a mask (privilege names for messages).
pub fn privilege_by_name(name: &str) -> Option<u32> {
    Some(match name.to_ascii_lowercase().as_str() {
        "select" => SELECT,
        "insert" => INSERT,
        "update" => UPDATE,
        "delete" => DELETE,
        "truncate" => TRUNCATE,
        "references" => REFERENCES,
        "trigger" => TRIGGER,
        "execute" => EXECUTE,
        "usage" => USAGE,
        "create" => CREATE,
        "temporary" | "temp" => CREATE_TEMP,
        "connect" => CONNECT,
        _ => return None,
    })
}

/// A privilege a statement needs on a relation (one range table entry's
/// requiredPerms), checked when the statement starts.
#[derive(Clone, Debug)]
pub struct RelPerm {
    pub rel: Oid,
    pub required: u32,
    /// Checked as this role (a view's owner for the relations its
    /// definition reads) rather than the current user.
    pub as_role: Option<Oid>,
    /// The statement's target relation (SELECT is added when it reads it).
    pub target: bool,
}
