//! User-defined operators, aggregates and casts: their pg_operator,
//! pg_aggregate and pg_cast rows.
//!
//! The analyzer resolves operators and casts over the built-in rows and
//! these alike (an operator also gets an `OperatorInfo`, the built-ins'
//! form); an aggregate is a pg_proc row of kind 'a' (a `Function`) plus the
//! `Aggregate` row that names its support functions.
//!
//! Keys (after the `C` prefix byte): `O` db class oid → the JSON row, where
//! class is the pg_class OID of the catalog the row belongs to.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use tusk_types::{Oid, PgResult};

use super::builtin::OperatorInfo;

/// pg_class.oid of the catalogs (ObjectAddress.classId).
pub const PG_OPERATOR: Oid = 2617;
pub const PG_AGGREGATE: Oid = 2600;
pub const PG_CAST: Oid = 2605;

/// A pg_operator row. A shell operator (named as a commutator or negator
/// before it was defined) has `proc` 0.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Operator {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub owner: Oid,
    /// 0 for a prefix operator.
    pub left: Oid,
    pub right: Oid,
    pub result: Oid,
    pub proc: Oid,
    pub commutator: Oid,
    pub negator: Oid,
    pub restrict: Oid,
    pub join: Oid,
    pub can_hash: bool,
    pub can_merge: bool,
}

impl Operator {
    pub fn kind(&self) -> char {
        if self.left == 0 {
            'l'
        } else {
            'b'
        }
    }

    pub fn info(&self) -> OperatorInfo {
        OperatorInfo {
            oid: self.oid,
            name: self.name.clone(),
            kind: self.kind(),
            left: self.left,
            right: self.right,
            result: self.result,
            proc: self.proc,
            commutator: self.commutator,
            negator: self.negator,
        }
    }
}

/// A pg_aggregate row; `fnoid` is the aggregate's pg_proc row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Aggregate {
    pub fnoid: Oid,
    /// 'n' normal, 'o' ordered-set, 'h' hypothetical-set.
    pub kind: char,
    pub num_direct_args: i16,
    pub transfn: Oid,
    pub finalfn: Oid,
    pub combinefn: Oid,
    pub serialfn: Oid,
    pub deserialfn: Oid,
    pub mtransfn: Oid,
    pub minvtransfn: Oid,
    pub mfinalfn: Oid,
    pub finalextra: bool,
    pub mfinalextra: bool,
    /// 'r' read-only, 's' shareable, 'w' read-write.
    pub finalmodify: char,
    pub mfinalmodify: char,
    pub sortop: Oid,
    pub transtype: Oid,
    pub transspace: i32,
    pub mtranstype: Oid,
    pub mtransspace: i32,
    pub initval: Option<String>,
    pub minitval: Option<String>,
}

/// A pg_cast row created by CREATE CAST.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cast {
    pub oid: Oid,
    pub source: Oid,
    pub target: Oid,
    /// 0 for WITHOUT FUNCTION and WITH INOUT.
    pub func: Oid,
    /// 'e' explicit, 'a' assignment, 'i' implicit.
    pub context: char,
    /// 'f' function, 'i' I/O conversion, 'b' binary coercible.
    pub method: char,
}

/// One database's user-defined operators, aggregates and casts.
#[derive(Clone, Debug, Default)]
pub struct OperatorCatalog {
    pub operators: BTreeMap<Oid, Operator>,
    pub operator_infos: HashMap<Oid, OperatorInfo>,
    pub operators_by_name: HashMap<String, Vec<Oid>>,
    pub aggregates: BTreeMap<Oid, Aggregate>,
    pub casts: BTreeMap<Oid, Cast>,
    pub cast_by_types: HashMap<(Oid, Oid), Oid>,
}

impl OperatorCatalog {
    fn add_operator(&mut self, o: Operator) {
        self.operators_by_name.entry(o.name.clone()).or_default().push(o.oid);
        self.operator_infos.insert(o.oid, o.info());
        self.operators.insert(o.oid, o);
    }

    fn add_cast(&mut self, c: Cast) {
        self.cast_by_types.insert((c.source, c.target), c.oid);
        self.casts.insert(c.oid, c);
    }

    /// The user-defined cast from `source` to `target`, if there is one.
    pub fn cast(&self, source: Oid, target: Oid) -> Option<&Cast> {
        self.cast_by_types.get(&(source, target)).and_then(|o| self.casts.get(o))
    }

    /// The operator of this name and namespace taking exactly these types.
    pub fn find(&self, name: &str, namespace: Oid, left: Oid, right: Oid) -> Option<&Operator> {
        self.operators_by_name
            .get(name)?
            .iter()
            .filter_map(|o| self.operators.get(o))
            .find(|o| o.namespace == namespace && o.left == left && o.right == right)
    }
}

fn key(db: Oid, class: Oid, oid: Oid) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::CATALOG_PREFIX, b'O'];
    for p in [db, class, oid] {
        k.extend_from_slice(&p.to_be_bytes());
    }
    k
}

/// The key prefix of one database's rows (DROP DATABASE removes it).
pub fn database_prefix(db: Oid) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::CATALOG_PREFIX, b'O'];
    k.extend_from_slice(&db.to_be_bytes());
    k
}

pub fn put_operator(txn: &tusk_storage::Txn, db: Oid, o: &Operator) -> PgResult<()> {
    txn.put(&key(db, PG_OPERATOR, o.oid), &super::store::encode(o))
}

pub fn put_aggregate(txn: &tusk_storage::Txn, db: Oid, a: &Aggregate) -> PgResult<()> {
    txn.put(&key(db, PG_AGGREGATE, a.fnoid), &super::store::encode(a))
}

pub fn put_cast(txn: &tusk_storage::Txn, db: Oid, c: &Cast) -> PgResult<()> {
    txn.put(&key(db, PG_CAST, c.oid), &super::store::encode(c))
}

pub fn delete(txn: &tusk_storage::Txn, db: Oid, class: Oid, oid: Oid) -> PgResult<()> {
    txn.delete(&key(db, class, oid))
}

/// A key locked (never written) to serialize DDL on one operator name of a
/// schema, or on the casts of a pair of types.
pub fn name_lock_key(db: Oid, class: Oid, name: &str) -> Vec<u8> {
    let mut k = vec![tusk_storage::keys::LOCK_PREFIX, b'O'];
    k.extend_from_slice(&db.to_be_bytes());
    k.extend_from_slice(&class.to_be_bytes());
    k.extend_from_slice(name.as_bytes());
    k
}

pub fn load(txn: &tusk_storage::Txn, db: Oid) -> PgResult<OperatorCatalog> {
    let mut out = OperatorCatalog::default();
    for (k, v) in super::store::scan_prefix(txn, &database_prefix(db))? {
        let class = u32::from_be_bytes(k[6..10].try_into().expect("4 bytes"));
        match class {
            PG_OPERATOR => out.add_operator(super::store::decode(&v)?),
            PG_AGGREGATE => {
                let a: Aggregate = super::store::decode(&v)?;
                out.aggregates.insert(a.fnoid, a);
            }
            PG_CAST => out.add_cast(super::store::decode(&v)?),
            _ => {}
        }
    }
    Ok(out)
}
