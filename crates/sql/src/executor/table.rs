//! Table and index access: how a relation's rows and index entries are laid
//! out in the key space (PostgreSQL's heapam/nbtree layer for Tusk).
//!
//! Row key: `D | storage id | primary key` for tables created with a
//! primary key (the table is clustered on it), else `D | storage id |
//! hidden row id`. Row value: the physical attributes (see `row`).
//!
//! Index entry key: `D | index storage id | index key`, plus the row key's
//! suffix for non-unique indexes and for unique-index keys containing NULL
//! (which never conflict). Entry value: the full row key.
//!
//! The index of a DEFERRABLE unique constraint is checked when the
//! statement ends or at commit, not as rows are written (`UPDATE t SET id
//! = id + 1` passes through duplicates): its entries always carry the row
//! key's suffix, so it can hold several rows of one key for a while, and
//! the check (`check_deferrable_unique`) reads the entries under a key's
//! prefix. It locks the bare key (where a non-deferrable index's entry
//! would be, never written here), as removing an entry does, so that
//! transactions taking or freeing one key are ordered as they are through
//! a non-deferrable index's entry. Non-deferrable unique indexes keep one
//! entry per key, checked and locked as each row is written.

use std::sync::Arc;

use tusk_storage::keys::{self, encode_key_datum, prefix_end, storage_prefix};
use tusk_storage::row::{decode_row, encode_row};
use tusk_storage::Txn;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::eval::eval;
use super::ExecCx;
use crate::catalog::{DbCatalog, Relation};
use crate::expr::Expr;

/// The counter of a table's hidden row ids: one per storage, so a table
/// (and a table emptied by TRUNCATE, which gets new storage) numbers its
/// rows from 1.
pub fn row_id_counter(storage_id: u32) -> Vec<u8> {
    let mut name = b"rowid:".to_vec();
    name.extend_from_slice(&storage_id.to_be_bytes());
    name
}

/// How many pairs one storage scan call fetches.
pub const SCAN_BATCH: usize = 512;

#[derive(Clone)]
pub enum IndexColumn {
    /// 0-based live column.
    Column(usize),
    Expr(Expr),
}

#[derive(Clone)]
pub struct IndexAccess {
    pub rel: Arc<Relation>,
    pub cols: Vec<IndexColumn>,
    /// Unique, checked as each row is written (one entry per key).
    pub unique: bool,
    /// Unique, but checked later (a DEFERRABLE constraint's index, see the
    /// file's comment); `unique` is false for it.
    pub deferrable: bool,
    pub nulls_not_distinct: bool,
    pub clustered: bool,
    pub predicate: Option<Expr>,
    /// A GIN index: each column's operator class (see `gin`); its
    /// entries are kept by the `gin_*` functions, not as B-tree keys.
    pub gin: Option<Vec<super::gin::GinOpclass>>,
}

/// A relation ready for row access.
#[derive(Clone)]
pub struct TableAccess {
    pub rel: Arc<Relation>,
    /// Physical position of each live column.
    live: Vec<usize>,
    /// Values of live columns missing from rows written before they were added.
    missing: Vec<Datum>,
    /// Live column positions of the clustered primary key.
    pub pk_cols: Option<Vec<usize>>,
    pub indexes: Vec<IndexAccess>,
    prefix: Vec<u8>,
    /// Physical attributes to decode (None: all), for scans that read only
    /// some columns.
    wanted: Option<Vec<bool>>,
}

impl TableAccess {
    /// Decodes only these live columns from now on (the others read as
    /// NULL): for a scan whose query reads no more.
    pub fn read_only_columns(&mut self, live_columns: &[bool]) {
        let mut wanted = vec![false; self.rel.columns.len()];
        for (i, &p) in self.live.iter().enumerate() {
            wanted[p] = live_columns.get(i).copied().unwrap_or(true);
        }
        self.wanted = Some(wanted);
    }

    /// Prepares access to `rel`; `compile` turns stored index expressions into row expressions.
    pub fn new(rel: Arc<Relation>, catalog: &DbCatalog, compile: &mut dyn FnMut(&Relation, &str) -> PgResult<Expr>) -> PgResult<TableAccess> {
        let mut live = Vec::new();
        let mut missing = Vec::new();
        for (i, c) in rel.columns.iter().enumerate() {
            if c.dropped {
                continue;
            }
            live.push(i);
            let m = match &c.missing {
                Some(bytes) => decode_row(bytes)?.into_iter().next().unwrap_or(Datum::Null),
                None => Datum::Null,
            };
            missing.push(m);
        }
        let col_of = |attnum: i16| rel.live_columns().position(|(a, _)| a == attnum);
        let mut pk_cols = None;
        let mut indexes = Vec::new();
        for idx in catalog.indexes_of(&rel) {
            let info = idx.index.as_ref().expect("index relation has index info");
            let mut cols = Vec::with_capacity(info.keys.len());
            for k in &info.keys {
                match &k.expr {
                    Some(text) => cols.push(IndexColumn::Expr(compile(&rel, text)?)),
                    None => cols.push(IndexColumn::Column(
                        col_of(k.attnum).ok_or_else(|| PgError::internal("index column is dropped"))?,
                    )),
                }
            }
            if info.clustered {
                pk_cols = Some(
                    cols.iter()
                        .map(|c| match c {
                            IndexColumn::Column(i) => *i,
                            IndexColumn::Expr(_) => 0,
                        })
                        .collect(),
                );
            }
            let predicate = match &info.predicate {
                Some(p) => Some(compile(&rel, p)?),
                None => None,
            };
            indexes.push(IndexAccess {
                rel: idx.clone(),
                cols,
                unique: info.unique && !info.deferrable,
                deferrable: info.unique && info.deferrable,
                nulls_not_distinct: info.nulls_not_distinct,
                clustered: info.clustered,
                predicate,
                gin: super::gin::classes_of(info, &idx),
            });
        }
        let prefix = storage_prefix(rel.storage_id);
        Ok(TableAccess { rel, live, missing, pk_cols, indexes, prefix, wanted: None })
    }

    pub fn width(&self) -> usize {
        self.live.len()
    }

    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// Live-column row from a stored value.
    pub fn decode(&self, value: &[u8]) -> PgResult<Vec<Datum>> {
        let mut phys = match &self.wanted {
            Some(w) => tusk_storage::row::decode_row_masked(value, w)?,
            None => decode_row(value)?,
        };
        // Without dropped columns the stored row is the live row (padded
        // with the missing values of columns added since it was written).
        if self.live.len() == self.rel.columns.len() && phys.len() <= self.live.len() {
            for m in &self.missing[phys.len()..] {
                phys.push(m.clone());
            }
            return Ok(phys);
        }
        let mut out = Vec::with_capacity(self.live.len() + 1);
        for (i, &p) in self.live.iter().enumerate() {
            out.push(match phys.get(p) {
                Some(d) => d.clone(),
                None => self.missing[i].clone(),
            });
        }
        Ok(out)
    }

    /// Stored value for a live-column row.
    pub fn encode(&self, row: &[Datum]) -> Vec<u8> {
        // No dropped column: the live columns are the physical ones, in
        // order (saves a vector and a copy of every value per row).
        if self.live.len() == self.rel.columns.len() && row.len() == self.live.len() {
            return encode_row(row);
        }
        let mut phys = vec![Datum::Null; self.rel.columns.len()];
        for (i, &p) in self.live.iter().enumerate() {
            phys[p] = row[i].clone();
        }
        encode_row(&phys)
    }

    /// The row key of a new row (assigning a hidden row id if unclustered).
    pub fn new_row_key(&self, row: &[Datum], cx: &ExecCx) -> PgResult<Vec<u8>> {
        match &self.pk_cols {
            Some(cols) => self.pk_key(row, cols),
            None => {
                // Each table numbers its rows from 1 (ctids follow the
                // numbers); a table with rows numbered before it had its
                // own counter goes on after its last row.
                let (prefix, engine) = (&self.prefix, cx.txn.engine());
                let after_last_row = || -> PgResult<u64> {
                    Ok(match engine.last_key(prefix)? {
                        Some(k) if k.len() == prefix.len() + 8 => keys::decode_i64(&k[prefix.len()..]).max(0) as u64 + 1,
                        _ => 1,
                    })
                };
                let id = engine.next_counter_from(&row_id_counter(self.rel.storage_id), 1024, false, &after_last_row)?;
                let mut k = Vec::with_capacity(self.prefix.len() + 9);
                k.extend_from_slice(&self.prefix);
                keys::encode_i64(&mut k, id as i64);
                Ok(k)
            }
        }
    }

    fn pk_key(&self, row: &[Datum], cols: &[usize]) -> PgResult<Vec<u8>> {
        let mut k = Vec::with_capacity(self.prefix.len() + 16 * cols.len());
        k.extend_from_slice(&self.prefix);
        for &c in cols {
            encode_key_datum(&mut k, &row[c])?;
        }
        Ok(k)
    }

    /// Whether an update changes the row's key.
    pub fn key_changes(&self, old: &[Datum], new: &[Datum]) -> bool {
        match &self.pk_cols {
            Some(cols) => cols.iter().any(|&c| !old[c].group_eq(&new[c]) || std::mem::discriminant(&old[c]) != std::mem::discriminant(&new[c])),
            None => false,
        }
    }

    /// The key of the same row with a changed primary key.
    pub fn updated_row_key(&self, old_key: &[u8], new: &[Datum]) -> PgResult<Vec<u8>> {
        match &self.pk_cols {
            Some(cols) => self.pk_key(new, cols),
            None => Ok(old_key.to_vec()),
        }
    }

    /// The encoded index key (without prefix) and whether it contains a NULL.
    fn index_key(&self, idx: &IndexAccess, row: &[Datum], cx: &ExecCx) -> PgResult<(Vec<u8>, bool, Vec<Datum>)> {
        let mut k = storage_prefix(idx.rel.storage_id);
        let mut has_null = false;
        let mut values = Vec::with_capacity(idx.cols.len());
        for c in &idx.cols {
            let v = match c {
                IndexColumn::Column(i) => row[*i].clone(),
                IndexColumn::Expr(e) => eval(e, row, cx)?,
            };
            has_null |= v.is_null();
            encode_key_datum(&mut k, &v)?;
            values.push(v);
        }
        Ok((k, has_null, values))
    }

    /// `index_key` without the key's values (no copy of them per row).
    fn index_key_only(&self, idx: &IndexAccess, row: &[Datum], cx: &ExecCx) -> PgResult<(Vec<u8>, bool)> {
        let mut k = Vec::with_capacity(self.prefix.len() + 16 * idx.cols.len() + 12);
        k.push(keys::DATA_PREFIX);
        k.extend_from_slice(&idx.rel.storage_id.to_be_bytes());
        let mut has_null = false;
        for c in &idx.cols {
            match c {
                IndexColumn::Column(i) => {
                    has_null |= row[*i].is_null();
                    encode_key_datum(&mut k, &row[*i])?;
                }
                IndexColumn::Expr(e) => {
                    let v = eval(e, row, cx)?;
                    has_null |= v.is_null();
                    encode_key_datum(&mut k, &v)?;
                }
            }
        }
        Ok((k, has_null))
    }

    fn entry_key(&self, idx: &IndexAccess, key: Vec<u8>, has_null: bool, row_key: &[u8]) -> (Vec<u8>, bool) {
        let unique_form = idx.unique && (!has_null || idx.nulls_not_distinct);
        if unique_form {
            (key, true)
        } else {
            let mut k = key;
            k.extend_from_slice(&row_key[self.prefix.len()..]);
            (k, false)
        }
    }

    /// A row leaves `key` of a deferrable unique index: lock the key, so
    /// that another transaction's check of it waits to see whether the key
    /// is free (as its insert waits on a non-deferrable index's entry).
    fn lock_freed_key(&self, idx: &IndexAccess, key: &[u8], has_null: bool, cx: &ExecCx) -> PgResult<()> {
        if idx.deferrable && (!has_null || idx.nulls_not_distinct) {
            cx.txn.get_for_update(key)?;
        }
        Ok(())
    }

    /// The key `row` takes in deferrable unique index `i`, without the
    /// index's storage prefix; None when the row is not in the index or its
    /// key cannot conflict (has a NULL, NULLS DISTINCT).
    pub fn deferrable_key(&self, i: usize, row: &[Datum], cx: &ExecCx) -> PgResult<Option<Vec<u8>>> {
        let idx = &self.indexes[i];
        debug_assert!(idx.deferrable);
        if !self.applies(idx, row, cx)? {
            return Ok(None);
        }
        let (k, has_null, _) = self.index_key(idx, row, cx)?;
        if has_null && !idx.nulls_not_distinct {
            return Ok(None);
        }
        Ok(Some(k[storage_prefix(idx.rel.storage_id).len()..].to_vec()))
    }

    /// The check of a deferrable unique index's key (`deferrable_key`), at
    /// the end of a statement or at commit (PostgreSQL's unique_key_recheck):
    /// at most one row, committed or this transaction's own, may have it.
    /// The key is locked first, so that a transaction taking the same key
    /// concurrently is checked after this one commits or rolls back.
    pub fn check_deferrable_unique(&self, i: usize, key: &[u8], cx: &ExecCx) -> PgResult<()> {
        let idx = &self.indexes[i];
        let mut k = storage_prefix(idx.rel.storage_id);
        k.extend_from_slice(key);
        cx.txn.get_for_update(&k)?;
        let entries = cx.txn.scan_latest(&k, &prefix_end(&k), false, 2)?;
        if entries.len() < 2 {
            return Ok(());
        }
        let vals = self.entry_values(i, &entries, cx)?;
        Err(self.unique_violation(i, &vals, cx))
    }

    /// The key values of index `i` of the first of `entries` whose row
    /// can be read (for a message).
    fn entry_values(&self, i: usize, entries: &[tusk_storage::KeyValue], cx: &ExecCx) -> PgResult<Vec<Datum>> {
        for (_, row_key) in entries {
            if let Some(row) = self.fetch_latest(cx.txn, row_key)? {
                return Ok(self.index_key(&self.indexes[i], &row, cx)?.2);
            }
        }
        Err(PgError::internal("index entry without its row"))
    }

    /// After building deferrable unique index `i` over existing rows:
    /// adjacent entries must differ in their key (the entry less the row
    /// key's suffix), unless the key has a NULL. Fails as a unique index
    /// build does ("could not create unique index").
    pub fn verify_deferrable_unique(&self, i: usize, cx: &ExecCx) -> PgResult<()> {
        let idx = &self.indexes[i];
        let prefix = storage_prefix(idx.rel.storage_id);
        let upper = prefix_end(&prefix);
        let mut lower = prefix.clone();
        let mut prev: Option<(Vec<u8>, Vec<u8>)> = None;
        loop {
            cx.check()?;
            let batch = cx.txn.scan_latest(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (entry, row_key) in &batch {
                let suffix = row_key.len().saturating_sub(self.prefix.len());
                let key = entry[..entry.len().saturating_sub(suffix)].to_vec();
                if let Some((prev_key, prev_row)) = &prev {
                    if *prev_key == key {
                        let both = [(prev_key.clone().into_boxed_slice(), prev_row.clone().into_boxed_slice()), (entry.clone(), row_key.clone())];
                        let vals = self.entry_values(i, &both, cx)?;
                        if !vals.iter().any(Datum::is_null) || idx.nulls_not_distinct {
                            return Err(self.duplicate_in_build(i, &vals, cx));
                        }
                    }
                }
                prev = Some((key, row_key.to_vec()));
            }
            if n < SCAN_BATCH {
                return Ok(());
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }

    /// "could not create unique index": index `i` would hold `values` twice.
    fn duplicate_in_build(&self, i: usize, values: &[Datum], cx: &ExecCx) -> PgError {
        let idx = &self.indexes[i];
        let err = self.unique_violation(i, values, cx);
        if is_exclusion(idx) {
            let detail = err.detail.clone().unwrap_or_default().replace("conflicts with existing key", "conflicts with key");
            return PgError::new(EXCLUSION_VIOLATION, format!("could not create exclusion constraint \"{}\"", idx.rel.name))
                .with_detail(detail)
                .with_constraint(&idx.rel.name)
                .with_table(cx.catalog.namespace_name(self.rel.namespace), &self.rel.name);
        }
        let detail = err.detail.clone().unwrap_or_default().replace("already exists.", "is duplicated.");
        PgError::new(sqlstate::UNIQUE_VIOLATION, format!("could not create unique index \"{}\"", idx.rel.name))
            .with_detail(detail)
            .with_constraint(&idx.rel.name)
    }

    fn applies(&self, idx: &IndexAccess, row: &[Datum], cx: &ExecCx) -> PgResult<bool> {
        match &idx.predicate {
            Some(p) => super::eval::eval_pred(p, row, cx),
            None => Ok(true),
        }
    }

    /// Checks the row's unique indexes (and the clustered key) for a
    /// conflicting committed or own row, locking the keys. Returns the
    /// conflicting index and its key values, if any.
    pub fn find_conflict(&self, row: &[Datum], row_key: &[u8], cx: &ExecCx, only: Option<u32>) -> PgResult<Option<(usize, Vec<Datum>, Vec<u8>)>> {
        self.find_conflict_opt(row, row_key, cx, only, false)
    }

    /// `find_conflict` for a row being updated in place: its own key is no conflict.
    pub fn find_update_conflict(&self, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<Option<(usize, Vec<Datum>, Vec<u8>)>> {
        self.find_conflict_opt(row, row_key, cx, None, true)
    }

    fn find_conflict_opt(&self, row: &[Datum], row_key: &[u8], cx: &ExecCx, only: Option<u32>, updating: bool) -> PgResult<Option<(usize, Vec<Datum>, Vec<u8>)>> {
        for (i, idx) in self.indexes.iter().enumerate() {
            if !idx.unique || only.map(|o| o != idx.rel.oid).unwrap_or(false) || !self.applies(idx, row, cx)? {
                continue;
            }
            if updating && idx.clustered {
                continue;
            }
            if idx.clustered {
                if cx.txn.committed_since_snapshot(row_key)? {
                    let vals = self.pk_cols.as_ref().map(|c| c.iter().map(|&i| row[i].clone()).collect()).unwrap_or_default();
                    return Ok(Some((i, vals, row_key.to_vec())));
                }
                if let Some(_existing) = cx.txn.get_for_update(row_key)? {
                    let vals = self.pk_cols.as_ref().map(|c| c.iter().map(|&i| row[i].clone()).collect()).unwrap_or_default();
                    return Ok(Some((i, vals, row_key.to_vec())));
                }
                continue;
            }
            let (k, has_null, vals) = self.index_key(idx, row, cx)?;
            if has_null && !idx.nulls_not_distinct {
                continue;
            }
            if cx.txn.committed_since_snapshot(&k)? {
                if let Some(existing_row) = cx.txn.get_latest(&k)? {
                    if existing_row != row_key {
                        return Ok(Some((i, vals, existing_row)));
                    }
                }
            }
            if let Some(existing_row) = cx.txn.get_for_update(&k)? {
                if existing_row != row_key {
                    return Ok(Some((i, vals, existing_row)));
                }
            }
        }
        Ok(None)
    }

    /// The unique-violation error for index `i`.
    pub fn unique_violation(&self, i: usize, values: &[Datum], cx: &ExecCx) -> PgError {
        let idx = &self.indexes[i];
        let names: Vec<String> = idx
            .cols
            .iter()
            .map(|c| match c {
                IndexColumn::Column(i) => self.rel.live_columns().nth(*i).map(|(_, c)| c.name.clone()).unwrap_or_default(),
                IndexColumn::Expr(_) => idx.rel.columns.get(0).map(|c| c.name.clone()).unwrap_or_default(),
            })
            .collect();
        let settings = cx.env.settings();
        let vals: Vec<String> = idx
            .cols
            .iter()
            .zip(values)
            .map(|(c, v)| {
                let ty = match c {
                    IndexColumn::Column(i) => self.rel.live_columns().nth(*i).map(|(_, c)| c.type_oid).unwrap_or(0),
                    IndexColumn::Expr(e) => e.ty().oid,
                };
                if v.is_null() {
                    "null".to_string()
                } else {
                    crate::functions::io::format_text(v, ty, &settings)
                }
            })
            .collect();
        if is_exclusion(idx) {
            // The conflicting row's key equals this one (the operators are equalities).
            let key = format!("({})=({})", names.join(", "), vals.join(", "));
            return PgError::new(EXCLUSION_VIOLATION, format!("conflicting key value violates exclusion constraint \"{}\"", idx.rel.name))
                .with_detail(format!("Key {key} conflicts with existing key {key}."))
                .with_constraint(&idx.rel.name)
                .with_table(cx.catalog.namespace_name(self.rel.namespace), &self.rel.name);
        }
        PgError::new(sqlstate::UNIQUE_VIOLATION, format!("duplicate key value violates unique constraint \"{}\"", idx.rel.name))
            .with_detail(format!("Key ({})=({}) already exists.", names.join(", "), vals.join(", ")))
            .with_constraint(&idx.rel.name)
            .with_table(cx.catalog.namespace_name(self.rel.namespace), &self.rel.name)
    }

    /// Writes a new row and its index entries. The caller has checked
    /// conflicts with `find_conflict` (with `only: None`), which leaves
    /// every key written here either locked by this transaction or out of
    /// any other's reach, so none is locked again (`Txn::put_unlocked`):
    /// - the row key: a clustered table's was locked as the primary key's
    ///   entry; a hidden row id is this row's alone (the counter never
    ///   hands a value out twice, not even across a crash);
    /// - a unique index's entry in its one-per-key form: locked by the check;
    /// - every other entry (non-unique, deferrable, or with a NULL) ends in
    ///   the row key, and any other writer of such an entry writes or
    ///   deletes the row under that key first, so waits on its lock.
    ///
    /// Keys the next rows' checks do not read are deferred
    /// (`Txn::put_deferred`): a hidden row id's row and entries that end
    /// in the row key. A clustered row key and unique entries are read
    /// again by the check of every next row.
    pub fn insert(&self, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        debug_assert!(self.indexes.iter().all(|i| !i.clustered || i.unique), "a clustered key is checked (and locked) by find_conflict");
        if self.pk_cols.is_some() {
            cx.txn.put_unlocked(row_key, &self.encode(row))?;
        } else {
            cx.txn.put_deferred(row_key, &self.encode(row))?;
        }
        for idx in &self.indexes {
            if idx.gin.is_some() {
                self.gin_insert(idx, row, row_key, cx, &mut |k| cx.txn.put_deferred(k, &[]))?;
                continue;
            }
            if idx.clustered || !self.applies(idx, row, cx)? {
                continue;
            }
            let (k, has_null) = self.index_key_only(idx, row, cx)?;
            match self.entry_key(idx, k, has_null, row_key) {
                (entry, true) => cx.txn.put_unlocked(&entry, row_key)?,
                (entry, false) => cx.txn.put_deferred(&entry, row_key)?,
            }
        }
        Ok(())
    }

    /// Whether rows may be written around the transaction (see
    /// `tusk_storage::BulkWriter`): the table and all its indexes are in
    /// storage the transaction may bulk-write, and nothing about a new row
    /// needs a read of this table (no primary key, no unique index), so
    /// buffered rows can never be missed.
    pub fn bulk_eligible(&self, cx: &ExecCx) -> bool {
        self.pk_cols.is_none()
            && cx.env.bulk_storage(self.rel.storage_id)
            && self.indexes.iter().all(|ix| !ix.unique && !ix.deferrable && cx.env.bulk_storage(ix.rel.storage_id))
    }

    /// `insert` through a bulk writer.
    pub fn insert_bulk(&self, row: &[Datum], row_key: &[u8], bulk: &mut tusk_storage::BulkWriter, cx: &ExecCx) -> PgResult<()> {
        bulk.put(row_key, &self.encode(row))?;
        for idx in &self.indexes {
            if idx.gin.is_some() {
                self.gin_insert(idx, row, row_key, cx, &mut |k| bulk.put(k, &[]))?;
                continue;
            }
            if idx.clustered || !self.applies(idx, row, cx)? {
                continue;
            }
            let (k, has_null, _) = self.index_key(idx, row, cx)?;
            let (entry, _) = self.entry_key(idx, k, has_null, row_key);
            bulk.put(&entry, row_key)?;
        }
        Ok(())
    }

    /// Removes a row and its index entries.
    pub fn delete(&self, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        cx.txn.delete(row_key)?;
        for idx in &self.indexes {
            if idx.gin.is_some() {
                self.gin_delete(idx, row, row_key, cx)?;
                continue;
            }
            if idx.clustered || !self.applies(idx, row, cx)? {
                continue;
            }
            let (k, has_null, _) = self.index_key(idx, row, cx)?;
            self.lock_freed_key(idx, &k, has_null, cx)?;
            let (entry, unique_form) = self.entry_key(idx, k, has_null, row_key);
            if unique_form {
                // Only remove the entry if it still points at this row.
                if cx.txn.get(&entry)?.as_deref() == Some(row_key) {
                    cx.txn.delete(&entry)?;
                }
            } else {
                cx.txn.delete(&entry)?;
            }
        }
        Ok(())
    }

    /// Rewrites a row in place (same key), updating index entries whose keys changed.
    pub fn update_in_place(&self, old: &[Datum], new: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        cx.txn.put(row_key, &self.encode(new))?;
        for idx in &self.indexes {
            if idx.gin.is_some() {
                self.gin_update(idx, old, new, row_key, cx)?;
                continue;
            }
            if idx.clustered {
                continue;
            }
            let old_applies = self.applies(idx, old, cx)?;
            let new_applies = self.applies(idx, new, cx)?;
            let (ok, onull, _) = self.index_key(idx, old, cx)?;
            let (nk, nnull, _) = self.index_key(idx, new, cx)?;
            if old_applies && new_applies && ok == nk {
                continue;
            }
            if old_applies {
                self.lock_freed_key(idx, &ok, onull, cx)?;
                let (entry, unique_form) = self.entry_key(idx, ok, onull, row_key);
                if !unique_form || cx.txn.get(&entry)?.as_deref() == Some(row_key) {
                    cx.txn.delete(&entry)?;
                }
            }
            if new_applies {
                let (entry, _) = self.entry_key(idx, nk, nnull, row_key);
                cx.txn.put(&entry, row_key)?;
            }
        }
        Ok(())
    }

    /// Reads the row stored under `row_key` as of the statement snapshot.
    pub fn fetch(&self, txn: &Txn, row_key: &[u8]) -> PgResult<Option<Vec<Datum>>> {
        match txn.get(row_key)? {
            Some(v) => Ok(Some(self.decode(&v)?)),
            None => Ok(None),
        }
    }

    /// The row's newest committed version (or own write), without locking.
    pub fn fetch_latest(&self, txn: &Txn, row_key: &[u8]) -> PgResult<Option<Vec<Datum>>> {
        match txn.get_latest(row_key)? {
            Some(v) => Ok(Some(self.decode(&v)?)),
            None => Ok(None),
        }
    }

    /// Locks the row and reads its newest committed version (see `Txn::get_for_update`).
    /// Under REPEATABLE READ, a row deleted since the snapshot fails as
    /// PostgreSQL's UPDATE and DELETE say it: "concurrent delete".
    pub fn lock_and_fetch_latest(&self, txn: &Txn, row_key: &[u8]) -> PgResult<Option<Vec<Datum>>> {
        match txn.get_for_update(row_key) {
            Ok(Some(v)) => Ok(Some(self.decode(&v)?)),
            Ok(None) => Ok(None),
            Err(e) if e.code == tusk_types::sqlstate::SERIALIZATION_FAILURE && txn.get_latest(row_key)?.is_none() => {
                Err(PgError::new(tusk_types::sqlstate::SERIALIZATION_FAILURE, "could not serialize access due to concurrent delete"))
            }
            Err(e) => Err(e),
        }
    }

    /// Whether any row has these values in the given columns (FK checks),
    /// using the clustered key or a unique index on exactly those columns.
    pub fn lookup_key(&self, cols: &[usize], values: &[Datum], cx: &ExecCx, lock: bool) -> PgResult<Option<Vec<u8>>> {
        if let Some(pk) = &self.pk_cols {
            if pk == cols {
                let k = self.pk_key_values(values)?;
                let found = if lock { cx.txn.lock_shared(&k)? } else { cx.txn.get(&k)? };
                return Ok(found.map(|_| k));
            }
        }
        for idx in &self.indexes {
            if idx.clustered || !idx.unique || idx.predicate.is_some() {
                continue;
            }
            let idx_cols: Vec<usize> = idx.cols.iter().filter_map(|c| if let IndexColumn::Column(i) = c { Some(*i) } else { None }).collect();
            if idx_cols.len() != idx.cols.len() || idx_cols != cols {
                continue;
            }
            let mut k = storage_prefix(idx.rel.storage_id);
            for v in values {
                encode_key_datum(&mut k, v)?;
            }
            if let Some(row_key) = cx.txn.get(&k)? {
                if lock && cx.txn.lock_shared(&row_key)?.is_none() {
                    return Ok(None);
                }
                return Ok(Some(row_key));
            }
            return Ok(None);
        }
        // No suitable key: scan (tables referenced by foreign keys always have one).
        let mut lower = self.prefix.clone();
        let upper = prefix_end(&self.prefix);
        loop {
            let batch = cx.txn.scan(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (k, v) in &batch {
                let row = self.decode(v)?;
                if cols.iter().zip(values).all(|(&c, v)| row[c].group_eq(v)) {
                    return Ok(Some(k.to_vec()));
                }
            }
            if n < SCAN_BATCH {
                return Ok(None);
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }

    fn pk_key_values(&self, values: &[Datum]) -> PgResult<Vec<u8>> {
        let mut k = self.prefix.clone();
        for v in values {
            encode_key_datum(&mut k, v)?;
        }
        Ok(k)
    }

    /// All rows whose `cols` equal `values` (for foreign key actions),
    /// through an index whose leading columns are `cols` when there is one.
    /// It reads the newest committed rows, not the statement's snapshot: a
    /// referencing row committed while this statement waited for the
    /// referenced row's lock must count, or the delete would orphan it.
    pub fn find_rows(&self, cols: &[usize], values: &[Datum], cx: &ExecCx) -> PgResult<Vec<(Vec<u8>, Vec<Datum>)>> {
        let mut out = Vec::new();
        // Through a secondary index with these leading columns.
        for idx in &self.indexes {
            if idx.clustered || idx.gin.is_some() || idx.predicate.is_some() || idx.cols.len() < cols.len() {
                continue;
            }
            let lead: Vec<Option<usize>> = idx.cols[..cols.len()].iter().map(|c| if let IndexColumn::Column(i) = c { Some(*i) } else { None }).collect();
            if lead.iter().zip(cols).any(|(l, c)| *l != Some(*c)) {
                continue;
            }
            let mut p = storage_prefix(idx.rel.storage_id);
            for v in values {
                encode_key_datum(&mut p, v)?;
            }
            let end = prefix_end(&p);
            let mut lower = p.clone();
            loop {
                let batch = cx.txn.scan_latest(&lower, &end, false, SCAN_BATCH)?;
                let n = batch.len();
                for (_, row_key) in &batch {
                    if let Some(row) = self.fetch_latest(cx.txn, row_key)? {
                        if cols.iter().zip(values).all(|(&c, v)| row[c].group_eq(v)) {
                            out.push((row_key.to_vec(), row));
                        }
                    }
                }
                if n < SCAN_BATCH {
                    return Ok(out);
                }
                lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
                lower.push(0);
            }
        }
        let mut lower = self.prefix.clone();
        let upper = prefix_end(&self.prefix);
        loop {
            let batch = cx.txn.scan_latest(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (k, v) in &batch {
                let row = self.decode(v)?;
                if cols.iter().zip(values).all(|(&c, v)| row[c].group_eq(v)) {
                    out.push((k.to_vec(), row));
                }
            }
            if n < SCAN_BATCH {
                return Ok(out);
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }
}

impl TableAccess {
    /// Adds one index's entry for an existing row (CREATE INDEX, ADD
    /// CONSTRAINT), failing on duplicates of a unique index as PostgreSQL's
    /// index build does.
    pub fn add_index_entry(&self, i: usize, row: &[Datum], row_key: &[u8], cx: &ExecCx) -> PgResult<()> {
        let idx = &self.indexes[i];
        if idx.gin.is_some() {
            return self.gin_insert(idx, row, row_key, cx, &mut |k| cx.txn.put(k, &[]));
        }
        if !self.applies(idx, row, cx)? {
            return Ok(());
        }
        let (k, has_null, vals) = self.index_key(idx, row, cx)?;
        let (entry, unique_form) = self.entry_key(idx, k, has_null, row_key);
        if unique_form {
            if let Some(existing) = cx.txn.get_for_update(&entry)? {
                if existing != row_key {
                    return Err(self.duplicate_in_build(i, &vals, cx));
                }
            }
        }
        cx.txn.put(&entry, row_key)
    }

    /// Writes `row` and its index entries without any check, around the
    /// transaction when `bulk` is given (storage the transaction owns, see
    /// `tusk_storage::BulkWriter`), else through it. For loads whose unique
    /// keys are verified afterwards by `verify_unique_loaded`.
    pub fn load_row(&self, row: &[Datum], bulk: Option<&mut tusk_storage::BulkWriter>, cx: &ExecCx) -> PgResult<Vec<u8>> {
        let key = self.new_row_key(row, cx)?;
        match bulk {
            Some(b) => {
                b.put(&key, &self.encode(row))?;
                for idx in &self.indexes {
                    if idx.gin.is_some() {
                        self.gin_insert(idx, row, &key, cx, &mut |k| b.put(k, &[]))?;
                        continue;
                    }
                    if idx.clustered || !self.applies(idx, row, cx)? {
                        continue;
                    }
                    let (k, has_null, _) = self.index_key(idx, row, cx)?;
                    let (entry, _) = self.entry_key(idx, k, has_null, &key);
                    b.put(&entry, &key)?;
                }
            }
            None => {
                cx.txn.put(&key, &self.encode(row))?;
                for idx in &self.indexes {
                    if idx.gin.is_some() {
                        self.gin_insert(idx, row, &key, cx, &mut |k| cx.txn.put(k, &[]))?;
                        continue;
                    }
                    if idx.clustered || !self.applies(idx, row, cx)? {
                        continue;
                    }
                    let (k, has_null, _) = self.index_key(idx, row, cx)?;
                    let (entry, _) = self.entry_key(idx, k, has_null, &key);
                    cx.txn.put(&entry, &key)?;
                }
            }
        }
        Ok(key)
    }

    /// The live columns that place a row in this table (its key and index
    /// entries); None when an index expression or predicate may read any.
    pub fn placement_columns(&self) -> Option<Vec<bool>> {
        let mut need = vec![false; self.live.len()];
        for &c in self.pk_cols.iter().flatten() {
            need[c] = true;
        }
        for idx in &self.indexes {
            if idx.predicate.is_some() {
                return None;
            }
            for c in &idx.cols {
                match c {
                    IndexColumn::Column(i) => need[*i] = true,
                    IndexColumn::Expr(_) => return None,
                }
            }
        }
        Some(need)
    }

    /// `load_row` for a row whose stored value is already in this table's
    /// physical layout (a rewrite that only re-keys): the value goes in as
    /// it is; `row` needs only the `placement_columns`.
    pub fn load_stored(&self, value: &[u8], row: &[Datum], bulk: Option<&mut tusk_storage::BulkWriter>, cx: &ExecCx) -> PgResult<Vec<u8>> {
        let key = self.new_row_key(row, cx)?;
        let put = |k: &[u8], v: &[u8]| -> PgResult<()> { cx.txn.put(k, v) };
        match bulk {
            Some(b) => {
                b.put(&key, value)?;
                for idx in self.indexes.iter().filter(|i| !i.clustered) {
                    if idx.gin.is_some() {
                        self.gin_insert(idx, row, &key, cx, &mut |k| b.put(k, &[]))?;
                        continue;
                    }
                    let (k, has_null, _) = self.index_key(idx, row, cx)?;
                    let (entry, _) = self.entry_key(idx, k, has_null, &key);
                    b.put(&entry, &key)?;
                }
            }
            None => {
                put(&key, value)?;
                for idx in self.indexes.iter().filter(|i| !i.clustered) {
                    if idx.gin.is_some() {
                        self.gin_insert(idx, row, &key, cx, &mut |k| put(k, &[]))?;
                        continue;
                    }
                    let (k, has_null, _) = self.index_key(idx, row, cx)?;
                    let (entry, _) = self.entry_key(idx, k, has_null, &key);
                    put(&entry, &key)?;
                }
            }
        }
        Ok(key)
    }

    /// Whether rows of `other` are stored in this table's physical layout.
    pub fn same_layout(&self, other: &TableAccess) -> bool {
        self.rel.columns.len() == other.rel.columns.len()
            && self.rel.columns.iter().zip(&other.rel.columns).all(|(a, b)| a.dropped == b.dropped && a.type_oid == b.type_oid && a.typmod == b.typmod)
    }

    /// Every (row key, stored value) of the table, read as `scan_all` reads.
    pub fn scan_all_stored(&self, cx: &ExecCx, f: &mut dyn FnMut(&[u8], &[u8]) -> PgResult<()>) -> PgResult<()> {
        let mut lower = self.prefix.clone();
        let upper = prefix_end(&self.prefix);
        if let Some(mut stream) = cx.txn.scan_stream_once(&lower, &upper) {
            while stream.next_batch(SCAN_BATCH, &mut |k, v| f(k, v))? == SCAN_BATCH {}
            return Ok(());
        }
        loop {
            cx.check()?;
            let batch = cx.txn.scan_latest(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (k, v) in &batch {
                f(k, v)?;
            }
            if n < SCAN_BATCH {
                return Ok(());
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }

    /// After `load_row` of `rows` (each row): every key of the clustered
    /// key and of unique indexes must be distinct, which holds exactly when
    /// each storage holds one key per row it indexes (a duplicate
    /// overwrote its twin). On a mismatch, `rows` is scanned again to name
    /// the first duplicate, as "could not create unique index" does.
    ///
    /// `row_keys_increasing` says the row keys were loaded in strictly
    /// increasing order, so a clustered key (the row key) cannot repeat and
    /// its count is not needed (a full scan of the new storage saved; the
    /// common case of a table loaded in key order, then keyed).
    pub fn verify_unique_loaded(
        &self,
        rows: &dyn Fn(&mut dyn FnMut(Vec<Datum>) -> PgResult<()>) -> PgResult<()>,
        expected: &[u64],
        row_keys_increasing: bool,
        cx: &ExecCx,
    ) -> PgResult<()> {
        for (i, idx) in self.indexes.iter().enumerate() {
            if idx.deferrable {
                self.verify_deferrable_unique(i, cx)?;
                continue;
            }
            if !idx.unique || (idx.clustered && row_keys_increasing) {
                continue;
            }
            let prefix = storage_prefix(idx.rel.storage_id);
            let have = cx.txn.count_latest(&prefix, &prefix_end(&prefix))?;
            if have == expected[i] {
                continue;
            }
            // Find the first repeated key.
            let mut seen = std::collections::HashSet::new();
            let mut dup: Option<Vec<Datum>> = None;
            rows(&mut |row| {
                if dup.is_some() || !self.applies(idx, &row, cx)? {
                    return Ok(());
                }
                let (k, has_null, vals) = self.index_key(idx, &row, cx)?;
                if has_null && !idx.nulls_not_distinct {
                    return Ok(());
                }
                if !seen.insert(k) {
                    dup = Some(vals);
                }
                Ok(())
            })?;
            let vals = dup.ok_or_else(|| PgError::internal("unique index lost entries without a duplicate"))?;
            return Err(self.duplicate_in_build(i, &vals, cx));
        }
        Ok(())
    }

    /// How many entries `load_row` writes into each index for `row`
    /// (added to `counts`, one slot per index).
    pub fn count_entries(&self, row: &[Datum], counts: &mut [u64], cx: &ExecCx) -> PgResult<()> {
        for (i, idx) in self.indexes.iter().enumerate() {
            if self.applies(idx, row, cx)? {
                counts[i] += 1;
            }
        }
        Ok(())
    }

    /// Builds index `i` over every row, like `add_index_entry` for each,
    /// but around the transaction when the index storage is the
    /// transaction's own (a new index: no one else can use it yet), with
    /// uniqueness verified by counting afterwards.
    pub fn build_index(&self, i: usize, cx: &ExecCx) -> PgResult<()> {
        let idx = &self.indexes[i];
        // Index expressions can be costly: check every row, not every batch.
        if !cx.env.bulk_storage(idx.rel.storage_id) {
            self.scan_all(cx, &mut |key, row| {
                cx.check()?;
                self.add_index_entry(i, &row, key, cx)
            })?;
            if idx.deferrable {
                self.verify_deferrable_unique(i, cx)?;
            }
            return Ok(());
        }
        let mut bulk = cx.txn.engine().bulk_writer();
        let mut expected = vec![0u64; self.indexes.len()];
        let mut gin_entries = super::gin::SortedEntries::default();
        self.scan_all(cx, &mut |key, row| {
            cx.check()?;
            if idx.gin.is_some() {
                return gin_entries.add(self.gin_keys(idx, &row, key, cx)?, &mut bulk);
            }
            if !self.applies(idx, &row, cx)? {
                return Ok(());
            }
            expected[i] += 1;
            let (k, has_null, _) = self.index_key(idx, &row, cx)?;
            let (entry, _) = self.entry_key(idx, k, has_null, key);
            bulk.put(&entry, key)
        })?;
        gin_entries.write(&mut bulk)?;
        bulk.flush()?;
        if idx.deferrable {
            self.verify_deferrable_unique(i, cx)?;
        } else if idx.unique {
            let only = TableAccess { indexes: vec![idx.clone()], ..self.clone() };
            only.verify_unique_loaded(&|f| self.scan_all(cx, &mut |_, row| f(row)), &expected[i..=i], false, cx)?;
        }
        Ok(())
    }

    /// Every (row key, row) of the table, newest committed versions plus
    /// the transaction's own writes: what DDL holding the table's exclusive
    /// lock builds an index from or rewrites. (PostgreSQL's index builds
    /// and table rewrites read every committed row, whatever the isolation
    /// level; a REPEATABLE READ snapshot would leave out rows committed
    /// after it, for good. Under READ COMMITTED the statement snapshot,
    /// taken once the lock was granted, shows the same rows.)
    pub fn scan_all(&self, cx: &ExecCx, f: &mut dyn FnMut(&[u8], Vec<Datum>) -> PgResult<()>) -> PgResult<()> {
        let mut lower = self.prefix.clone();
        let upper = prefix_end(&self.prefix);
        if let Some(mut stream) = cx.txn.scan_stream_once(&lower, &upper) {
            while stream.next_batch(SCAN_BATCH, &mut |k, v| f(k, self.decode(v)?))? == SCAN_BATCH {}
            return Ok(());
        }
        loop {
            cx.check()?;
            let batch = cx.txn.scan_latest(&lower, &upper, false, SCAN_BATCH)?;
            let n = batch.len();
            for (k, v) in &batch {
                f(k, self.decode(v)?)?;
            }
            if n < SCAN_BATCH {
                return Ok(());
            }
            lower = batch.last().map(|(k, _)| k.to_vec()).unwrap_or_default();
            lower.push(0);
        }
    }
}

/// Whether an index backs an exclusion constraint (see `commands::exclusion`).
fn is_exclusion(idx: &IndexAccess) -> bool {
    idx.rel.index.as_ref().is_some_and(|i| !i.exclusion.is_empty())
}

/// SQLSTATE 23P01 exclusion_violation.
const EXCLUSION_VIOLATION: &str = "23P01";
