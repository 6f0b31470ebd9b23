//! User-defined range types (CREATE TYPE ... AS RANGE): their pg_range
//! row, and the four pg_type rows each one brings — the range, its
//! multirange, and an array type of each — as `catalog::types` derives
//! user types from their stored definitions.
//!
//! A range type's values are handled by the same code as the built-in
//! ones (`tusk_types::range`, `functions::range`): all that code needs is
//! a `RangeType`, which `range_type` finds here for a user type. The
//! constructor functions PostgreSQL makes for each range type are stored
//! as ordinary pg_proc rows of language `internal` whose prosrc names the
//! built-in implementation (range_constructor2, multirange_constructor0,
//! ...), exactly as PostgreSQL's makeRangeConstructors records them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tusk_types::range::{Canonical, RangeType};
use tusk_types::Oid;

use super::builtin::TypeInfo;
use super::depend::{DepType, Dependency, ObjectAddress, PG_PROC_CLASS, PG_TYPE};
use super::types::{intern, with_user_types, StoredType, UserType, UserTypeKind, UserTypes};

/// range_in/out/recv/send and multirange_in/out/recv/send (pg_proc OIDs).
const RANGE_IO: [Oid; 4] = [3834, 3835, 3836, 3837];
const MULTIRANGE_IO: [Oid; 4] = [4231, 4232, 4233, 4234];
/// array_in/out/recv/send.
const ARRAY_IO: [Oid; 4] = [750, 751, 2400, 2401];

/// A range type's pg_range row and the OIDs of what came with it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RangeDef {
    /// rngsubtype
    pub subtype: Oid,
    /// rngcollation (0 for a subtype without collation)
    pub collation: Oid,
    /// rngsubopc: the subtype's B-tree operator class.
    pub subopclass: Oid,
    /// rngsubdiff (0 when none was given)
    pub subdiff: Oid,
    /// rngmultitypid, and the multirange type's name and schema.
    pub multirange: Oid,
    pub multirange_name: String,
    pub multirange_namespace: Oid,
    pub multirange_array: Oid,
    /// typalign of all four types ('i' or 'd', after the subtype's).
    pub align: char,
    /// The range constructors (2 and 3 arguments), then the multirange
    /// ones (0, 1 and VARIADIC arguments).
    pub range_constructors: Vec<Oid>,
    pub multirange_constructors: Vec<Oid>,
}

/// Adds a stored range type's pg_type rows to `out`.
pub(super) fn add_range_types(out: &mut UserTypes, st: &StoredType, def: &RangeDef) {
    let row = |oid: Oid, name: &str, typtype: char, array: Oid, io: [Oid; 4]| TypeInfo {
        oid,
        name: name.to_string(),
        len: -1,
        byval: false,
        typtype,
        category: 'R',
        preferred: false,
        delim: ',',
        elem: 0,
        array,
        input: io[0],
        output: io[1],
        receive: io[2],
        send: io[3],
        align: def.align,
        storage: 'x',
        collation: 0,
    };
    let def_arc = Arc::new(def.clone());
    out.add(UserType {
        info: intern(row(st.oid, &st.name, 'r', st.array_oid, RANGE_IO)),
        namespace: st.namespace,
        owner: st.owner,
        kind: UserTypeKind::Range(def_arc),
    });
    out.add(UserType {
        info: intern(row(def.multirange, &def.multirange_name, 'm', def.multirange_array, MULTIRANGE_IO)),
        namespace: def.multirange_namespace,
        owner: st.owner,
        kind: UserTypeKind::Multirange { range: st.oid },
    });
    // The array types align as the range does (DefineRange).
    let mut array = |element: Oid, oid: Oid, element_name: &str, namespace: Oid| {
        if oid == 0 {
            return;
        }
        let info = TypeInfo {
            oid,
            name: super::types::array_type_name(element_name),
            typtype: 'b',
            category: 'A',
            elem: element,
            array: 0,
            input: ARRAY_IO[0],
            output: ARRAY_IO[1],
            receive: ARRAY_IO[2],
            send: ARRAY_IO[3],
            ..row(oid, "", 'b', 0, ARRAY_IO)
        };
        out.add(UserType { info: intern(info), namespace, owner: st.owner, kind: UserTypeKind::Array { element } });
    };
    array(st.oid, st.array_oid, &st.name, st.namespace);
    array(def.multirange, def.multirange_array, &def.multirange_name, def.multirange_namespace);
}

fn range_type_in(types: &UserTypes, oid: Oid) -> Option<RangeType> {
    match &types.get(oid)?.kind {
        UserTypeKind::Range(def) => Some(RangeType { oid, subtype: def.subtype, multirange: def.multirange, canonical: Canonical::None }),
        _ => None,
    }
}

/// The user-defined range type with this OID, in this thread's scope.
pub fn range_type(oid: Oid) -> Option<RangeType> {
    if oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    with_user_types(|t| range_type_in(t, oid)).flatten()
}

/// The user-defined range type whose multirange type has this OID.
pub fn range_type_of_multirange(oid: Oid) -> Option<RangeType> {
    if oid < tusk_types::oid::FIRST_NORMAL_OBJECT_ID {
        return None;
    }
    with_user_types(|t| match t.get(oid)?.kind {
        UserTypeKind::Multirange { range } => range_type_in(t, range),
        _ => None,
    })
    .flatten()
}

/// A range type's definition (pg_range row), in this thread's scope.
pub fn range_def(oid: Oid) -> Option<Arc<RangeDef>> {
    with_user_types(|t| match &t.get(oid)?.kind {
        UserTypeKind::Range(def) => Some(def.clone()),
        _ => None,
    })
    .flatten()
}

/// makeMultirangeTypeName: "range" in the name becomes "multirange";
/// a name without it gets "_multirange" added, cut to NAMEDATALEN - 1.
pub fn multirange_type_name(range_name: &str) -> String {
    let name = match range_name.find("range") {
        Some(at) => format!("{}multi{}", &range_name[..at], &range_name[at..]),
        None => format!("{}_multirange", crate::commands::naming::clip(range_name, 64 - 12)),
    };
    crate::commands::naming::clip(&name, 63).to_string()
}

/// RangeCreate's and makeRangeConstructors' pg_depend rows: the range
/// type is in its schema and needs its subtype and subtype_diff function;
/// its multirange, the array types and the constructors are parts of it.
pub(super) fn range_dependencies(st: &StoredType, def: &RangeDef, out: &mut Vec<Dependency>) {
    let range = ObjectAddress::new(PG_TYPE, st.oid, 0);
    let multirange = ObjectAddress::new(PG_TYPE, def.multirange, 0);
    let mut push = |object: ObjectAddress, referenced: ObjectAddress, deptype: DepType| out.push(Dependency { object, referenced, deptype });
    push(range, ObjectAddress::namespace(st.namespace), DepType::Normal);
    push(range, ObjectAddress::new(PG_TYPE, def.subtype, 0), DepType::Normal);
    if def.subdiff != 0 {
        push(range, ObjectAddress::new(PG_PROC_CLASS, def.subdiff, 0), DepType::Normal);
    }
    if st.array_oid != 0 {
        push(ObjectAddress::new(PG_TYPE, st.array_oid, 0), range, DepType::Internal);
    }
    push(multirange, ObjectAddress::namespace(def.multirange_namespace), DepType::Normal);
    push(multirange, range, DepType::Internal);
    if def.multirange_array != 0 {
        push(ObjectAddress::new(PG_TYPE, def.multirange_array, 0), multirange, DepType::Internal);
    }
    for &f in &def.range_constructors {
        push(ObjectAddress::new(PG_PROC_CLASS, f, 0), range, DepType::Internal);
    }
    for &f in &def.multirange_constructors {
        push(ObjectAddress::new(PG_PROC_CLASS, f, 0), multirange, DepType::Internal);
    }
}

/// The constructors' pg_proc rows in the built-ins' form need what the
/// stored function rows cannot say without the types: the built-in code
/// their prosrc names, and the element type of the VARIADIC array.
pub(super) fn complete_constructor_procs(cat: &mut super::DbCatalog) {
    let ranges: Vec<(Oid, RangeDef)> = cat
        .stored_types
        .iter()
        .filter_map(|st| match &st.def {
            super::types::TypeDef::Range(d) => Some((st.oid, d.clone())),
            _ => None,
        })
        .collect();
    for (range, def) in ranges {
        for &f in def.range_constructors.iter().chain(&def.multirange_constructors) {
            let Some(src) = cat.functions.get(&f).map(|f| f.src.clone()) else { continue };
            if let Some(p) = cat.user_procs.get_mut(&f) {
                if src == "multirange_constructor2" {
                    p.variadic = range;
                }
                p.src = src;
            }
        }
    }
}

/// pg_range's rows: the built-in range types', then the database's own.
pub fn pg_range_rows(types: &UserTypes) -> Vec<[Oid; 7]> {
    // (rngtypid, rngsubtype, rngmultitypid, rngcollation, rngsubopc, rngcanonical, rngsubdiff)
    let mut rows: Vec<[Oid; 7]> = vec![
        [3904, 23, 4451, 0, 1978, 3914, 3922],
        [3906, 1700, 4532, 0, 3125, 0, 3924],
        [3908, 1114, 4533, 0, 3128, 0, 3929],
        [3910, 1184, 4534, 0, 3127, 0, 3930],
        [3912, 1082, 4535, 0, 3122, 3915, 3925],
        [3926, 20, 4536, 0, 3124, 3928, 3923],
    ];
    let mut user: Vec<[Oid; 7]> = types
        .by_oid
        .values()
        .filter_map(|t| match &t.kind {
            UserTypeKind::Range(d) => Some([t.info.oid, d.subtype, d.multirange, d.collation, d.subopclass, 0, d.subdiff]),
            _ => None,
        })
        .collect();
    user.sort();
    rows.extend(user);
    rows
}
