//! User-defined types: the pg_type rows that are not built in — the row
//! type of every table, view, foreign table and composite type, with its
//! array type — and the per-thread scope through which a session's
//! statements see them.
//!
//! PostgreSQL reaches every type through the backend's syscache. Tusk keeps
//! its built-in types in a static table (`Builtins`) and user types in each
//! database's catalog snapshot; a session thread installs the snapshot its
//! statement works with (`enter_catalog`, and `set_search_path` when a
//! statement is analyzed), and `Builtins::type_info` answers for both. This
//! is the syscache of a Tusk backend: one session per thread, as PostgreSQL
//! has one session per process.
//!
//! A user type's `TypeInfo` is interned once per distinct content and never
//! freed, so it can be handed out as `&'static` like a built-in's. That
//! costs a few hundred bytes per type definition the process ever sees.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tusk_types::oid::{self, Oid};
use tusk_types::SqlType;

use super::builtin::TypeInfo;
use super::{RelKind, Relation};

/// record_in/out/recv/send and array_in/out/recv/send (pg_proc OIDs).
const RECORD_IO: [Oid; 4] = [2290, 2291, 2402, 2403];
const ARRAY_IO: [Oid; 4] = [750, 751, 2400, 2401];

/// What a user type is, beyond its pg_type row.
#[derive(Clone, Debug)]
pub enum UserTypeKind {
    /// The row type of a relation (pg_type.typrelid): a table's, a view's,
    /// or a composite type's made by CREATE TYPE ... AS (...).
    Composite { relid: Oid },
    /// The array type of another user type.
    Array { element: Oid },
    /// A domain (CREATE DOMAIN): its base type and constraints.
    Domain(Arc<Domain>),
    /// A range type (CREATE TYPE ... AS RANGE): its pg_range row.
    Range(Arc<super::ranges::RangeDef>),
    /// The multirange type of a user range type.
    Multirange { range: Oid },
    /// An enum (CREATE TYPE ... AS ENUM); its labels are in `UserTypes::enums`.
    Enum,
}

/// A user type that is not a relation's row type, as stored (key `t`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredType {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub owner: Oid,
    pub array_oid: Oid,
    pub def: TypeDef,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TypeDef {
    Domain(Domain),
    Range(super::ranges::RangeDef),
    Enum(super::enums::EnumDef),
}

/// pg_type's domain columns and the domain's pg_constraint rows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Domain {
    /// typbasetype and typtypmod.
    #[serde(with = "sql_type_serde")]
    pub base: SqlType,
    /// typnotnull (the constraint's own pg_constraint row is `not_null_oid`).
    pub not_null: bool,
    #[serde(default)]
    pub not_null_oid: Oid,
    #[serde(default)]
    pub not_null_name: String,
    /// typdefault, as SQL text.
    pub default: Option<String>,
    pub collation: Oid,
    /// CHECK constraints, in creation order; `VALUE` stands for the value.
    pub checks: Vec<DomainCheck>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DomainCheck {
    pub oid: Oid,
    pub name: String,
    /// The expression as PostgreSQL prints it (pg_get_constraintdef's body).
    pub expr: String,
    /// False for NOT VALID until ALTER DOMAIN ... VALIDATE CONSTRAINT.
    pub validated: bool,
}

#[derive(Clone, Debug)]
pub struct UserType {
    pub info: &'static TypeInfo,
    pub namespace: Oid,
    pub owner: Oid,
    pub kind: UserTypeKind,
}

impl UserType {
    /// pg_type.typrelid
    pub fn relid(&self) -> Oid {
        match self.kind {
            UserTypeKind::Composite { relid } => relid,
            _ => 0,
        }
    }
}

/// A database's user types, derived from its catalog when it is built.
#[derive(Debug, Default)]
pub struct UserTypes {
    pub by_oid: HashMap<Oid, UserType>,
    by_name: HashMap<(Oid, String), Oid>,
    /// The relation of each composite type, whose live columns are the
    /// fields a row value of it holds, in order.
    row_relations: HashMap<Oid, Arc<Relation>>,
    /// Schema names, to resolve qualified type names.
    namespaces: HashMap<String, Oid>,
    /// The labels of enum types.
    pub enums: super::enums::EnumCatalog,
}

/// The `&'static` row for `info`: the one made before for its OID if that
/// is still the same, else a new one (catalogs are rebuilt after every DDL
/// statement, and most types are unchanged by it).
pub(super) fn intern(info: TypeInfo) -> &'static TypeInfo {
    static INTERNED: OnceLock<Mutex<HashMap<Oid, &'static TypeInfo>>> = OnceLock::new();
    let mut map = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = map.get(&info.oid) {
        if *known == info {
            return known;
        }
    }
    let leaked: &'static TypeInfo = Box::leak(Box::new(info));
    map.insert(leaked.oid, leaked);
    leaked
}

/// Whether a relation of this kind has a row type (PostgreSQL gives none
/// to indexes and sequences).
pub fn has_row_type(kind: RelKind) -> bool {
    matches!(kind, RelKind::Table | RelKind::View | RelKind::ForeignTable | RelKind::CompositeType)
}

/// makeArrayTypeName: the element's name with an underscore in front, cut
/// to NAMEDATALEN - 1 bytes.
pub fn array_type_name(element: &str) -> String {
    crate::commands::naming::clip(&format!("_{element}"), 63).to_string()
}

impl UserTypes {
    pub fn build<'a>(relations: impl Iterator<Item = &'a Arc<Relation>>, stored: &[StoredType], namespaces: HashMap<String, Oid>) -> UserTypes {
        let mut out = UserTypes { namespaces, ..Default::default() };
        for rel in relations {
            if rel.row_type == 0 || !has_row_type(rel.kind) {
                continue;
            }
            let row = TypeInfo {
                oid: rel.row_type,
                name: rel.name.clone(),
                len: -1,
                byval: false,
                typtype: 'c',
                category: 'C',
                preferred: false,
                delim: ',',
                elem: 0,
                array: rel.row_array_type,
                input: RECORD_IO[0],
                output: RECORD_IO[1],
                receive: RECORD_IO[2],
                send: RECORD_IO[3],
                align: 'd',
                storage: 'x',
                collation: 0,
            };
            out.add(UserType { info: intern(row), namespace: rel.namespace, owner: rel.owner, kind: UserTypeKind::Composite { relid: rel.oid } });
            out.row_relations.insert(rel.row_type, rel.clone());
            if rel.row_array_type != 0 {
                out.add_array_of(rel.row_type, rel.row_array_type, &rel.name, rel.namespace, rel.owner);
            }
        }
        for st in stored {
            match &st.def {
                TypeDef::Domain(d) => {
                    let b = super::builtins();
                    let Some(base) = b.type_info(d.base.oid).or_else(|| out.get(d.base.oid).map(|u| u.info)) else { continue };
                    let info = TypeInfo {
                        oid: st.oid,
                        name: st.name.clone(),
                        typtype: 'd',
                        elem: 0,
                        array: st.array_oid,
                        input: 2597,   // domain_in
                        receive: 2598, // domain_recv
                        preferred: false,
                        collation: d.collation,
                        ..base.clone()
                    };
                    out.add(UserType { info: intern(info), namespace: st.namespace, owner: st.owner, kind: UserTypeKind::Domain(Arc::new(d.clone())) });
                    if st.array_oid != 0 {
                        out.add_array_of(st.oid, st.array_oid, &st.name, st.namespace, st.owner);
                    }
                }
                TypeDef::Range(r) => super::ranges::add_range_types(&mut out, st, r),
                TypeDef::Enum(e) => {
                    let info = TypeInfo {
                        oid: st.oid,
                        name: st.name.clone(),
                        len: 4,
                        byval: true,
                        typtype: 'e',
                        category: 'E',
                        preferred: false,
                        delim: ',',
                        elem: 0,
                        array: st.array_oid,
                        input: 3506,   // enum_in
                        output: 3507,  // enum_out
                        receive: 3532, // enum_recv
                        send: 3533,    // enum_send
                        align: 'i',
                        storage: 'p',
                        collation: 0,
                    };
                    out.add(UserType { info: intern(info), namespace: st.namespace, owner: st.owner, kind: UserTypeKind::Enum });
                    out.enums.add(st.oid, e);
                    if st.array_oid != 0 {
                        out.add_array_of(st.oid, st.array_oid, &st.name, st.namespace, st.owner);
                    }
                }
            }
        }
        out
    }

    pub(super) fn add(&mut self, t: UserType) {
        self.by_name.insert((t.namespace, t.info.name.clone()), t.info.oid);
        self.by_oid.insert(t.info.oid, t);
    }

    pub(super) fn add_array_of(&mut self, element: Oid, array: Oid, element_name: &str, namespace: Oid, owner: Oid) {
        // An array is int-aligned unless its element needs double alignment.
        let align = match self.by_oid.get(&element).map(|t| t.info.align) {
            Some('d') | None => 'd',
            Some(_) => 'i',
        };
        let info = TypeInfo {
            oid: array,
            name: array_type_name(element_name),
            len: -1,
            byval: false,
            typtype: 'b',
            category: 'A',
            preferred: false,
            delim: ',',
            elem: element,
            array: 0,
            input: ARRAY_IO[0],
            output: ARRAY_IO[1],
            receive: ARRAY_IO[2],
            send: ARRAY_IO[3],
            align,
            storage: 'x',
            collation: 0,
        };
        self.add(UserType { info: intern(info), namespace, owner, kind: UserTypeKind::Array { element } });
    }

    pub fn get(&self, oid: Oid) -> Option<&UserType> {
        self.by_oid.get(&oid)
    }

    /// The type named `name` in schema `namespace`.
    pub fn lookup(&self, namespace: Oid, name: &str) -> Option<Oid> {
        self.by_name.get(&(namespace, name.to_string())).copied()
    }

    pub fn composite_fields(&self, oid: Oid) -> Option<Arc<Vec<(String, SqlType)>>> {
        let rel = self.row_relations.get(&oid)?;
        Some(Arc::new(rel.live_columns().map(|(_, c)| (c.name.clone(), c.sql_type())).collect()))
    }

    pub fn domain(&self, oid: Oid) -> Option<&Arc<Domain>> {
        match &self.get(oid)?.kind {
            UserTypeKind::Domain(d) => Some(d),
            _ => None,
        }
    }

    pub fn namespace_oid(&self, name: &str) -> Option<Oid> {
        self.namespaces.get(name).copied()
    }
}

struct Scope {
    types: Arc<UserTypes>,
    search_path: Vec<Oid>,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Makes `types` the user types this thread's statements see.
pub fn enter_catalog(types: &Arc<UserTypes>) {
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        match &mut *s {
            Some(scope) if Arc::ptr_eq(&scope.types, types) => {}
            Some(scope) => scope.types = types.clone(),
            None => *s = Some(Scope { types: types.clone(), search_path: vec![super::PG_CATALOG_NAMESPACE] }),
        }
    });
}

/// The schemas unqualified type names are looked up in, in order (the
/// analyzer's search path, pg_catalog included where it goes).
pub fn set_search_path(types: &Arc<UserTypes>, path: Vec<Oid>) {
    SCOPE.with(|s| *s.borrow_mut() = Some(Scope { types: types.clone(), search_path: path }));
}

/// A user type's pg_type row, by OID, in this thread's scope.
pub fn user_type_info(oid: Oid) -> Option<&'static TypeInfo> {
    if oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    SCOPE.with(|s| s.borrow().as_ref().and_then(|sc| sc.types.get(oid).map(|t| t.info)))
}

/// Runs `f` over this thread's user types (None when no catalog was entered).
pub fn with_user_types<R>(f: impl FnOnce(&UserTypes) -> R) -> Option<R> {
    SCOPE.with(|s| s.borrow().as_ref().map(|sc| f(&sc.types)))
}

/// The fields of a composite type (a user type's; None for others).
pub fn composite_fields(oid: Oid) -> Option<Arc<Vec<(String, SqlType)>>> {
    if oid == oid::RECORD || oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    with_user_types(|t| t.composite_fields(oid)).flatten()
}

/// How a type name resolves against user types.
pub enum NameLookup {
    Found(Oid),
    /// Not a user type (a built-in may still have the name).
    NotFound,
    /// A qualified name's schema does not exist.
    NoSchema,
}

/// Resolves a type name against user types: qualified names in their
/// schema, unqualified ones along the search path, where `pg_catalog`
/// stands for the built-ins (`builtin` looks there).
pub fn lookup_user_type_name(schema: Option<&str>, name: &str, builtin: &dyn Fn(&str) -> Option<Oid>) -> NameLookup {
    SCOPE.with(|s| {
        let s = s.borrow();
        let Some(sc) = s.as_ref() else {
            return match (schema, builtin(name)) {
                (None | Some("pg_catalog"), Some(o)) => NameLookup::Found(o),
                _ => NameLookup::NotFound,
            };
        };
        if let Some(schema) = schema {
            if schema == "pg_catalog" {
                return builtin(name).map(NameLookup::Found).unwrap_or(NameLookup::NotFound);
            }
            let Some(nsp) = sc.types.namespace_oid(schema) else { return NameLookup::NoSchema };
            return sc.types.lookup(nsp, name).map(NameLookup::Found).unwrap_or(NameLookup::NotFound);
        }
        for &nsp in &sc.search_path {
            if nsp == super::PG_CATALOG_NAMESPACE {
                if let Some(o) = builtin(name) {
                    return NameLookup::Found(o);
                }
            } else if let Some(o) = sc.types.lookup(nsp, name) {
                return NameLookup::Found(o);
            }
        }
        NameLookup::NotFound
    })
}

/// A user type's name as format_type prints it: quoted where needed, and
/// qualified by its schema when the search path would not find it by its
/// name alone (TypeIsVisible).
pub fn display_name(oid: Oid) -> Option<String> {
    SCOPE.with(|s| {
        let s = s.borrow();
        let sc = s.as_ref()?;
        let t = sc.types.get(oid)?;
        let name = crate::functions::quote_ident(&t.info.name);
        let builtins = super::builtins();
        let visible = sc.search_path.iter().find_map(|&nsp| {
            if nsp == super::PG_CATALOG_NAMESPACE {
                builtins.type_by_name.get(&t.info.name).copied()
            } else {
                sc.types.lookup(nsp, &t.info.name)
            }
        }) == Some(oid);
        if visible {
            return Some(name);
        }
        let schema = sc.types.namespaces.iter().find(|(_, &o)| o == t.namespace).map(|(n, _)| n.clone())?;
        Some(format!("{}.{}", crate::functions::quote_ident(&schema), name))
    })
}

/// A domain's definition, in this thread's scope.
pub fn domain(oid: Oid) -> Option<Arc<Domain>> {
    if oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    with_user_types(|t| t.domain(oid).cloned()).flatten()
}

/// getBaseTypeAndTypmod: a domain's base type (through domains over
/// domains); any other type is its own base.
pub fn base_type(t: SqlType) -> SqlType {
    let mut t = t;
    for _ in 0..32 {
        match domain(t.oid) {
            Some(d) => t = SqlType { oid: d.base.oid, typmod: if d.base.typmod >= 0 { d.base.typmod } else { t.typmod } },
            None => return t,
        }
    }
    t
}

pub fn base_type_oid(t: Oid) -> Oid {
    base_type(SqlType { oid: t, typmod: -1 }).oid
}

/// SqlType as an (oid, typmod) pair in stored catalog rows.
mod sql_type_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use tusk_types::{Oid, SqlType};

    pub fn serialize<S: Serializer>(t: &SqlType, s: S) -> Result<S::Ok, S::Error> {
        (t.oid, t.typmod).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SqlType, D::Error> {
        let (oid, typmod) = <(Oid, i32)>::deserialize(d)?;
        Ok(SqlType { oid, typmod })
    }
}
