//! The crash test harness: a concurrent client workload runs against a
//! server that is killed with SIGKILL at random moments, restarted on the
//! same data directory, and checked; and the clean shutdown modes
//! (`tusk stop -m smart|fast|immediate`, as `pg_ctl stop -m`).
//!
//! The workload (several tokio-postgres clients) records on the client side
//! what the server acknowledged: a transaction counts as committed only
//! once its COMMIT (or its autocommit statement, or COPY's end) returned
//! Ok. A transaction whose COMMIT was sent but whose answer was lost to the
//! kill is "in doubt": it may be present or absent, but all or nothing, and
//! once a recovery has shown which, every later recovery must agree. A
//! transaction whose COMMIT was never sent, or was refused, must be absent.
//!
//! Every transaction carries a tag (client, sequence number) on each row it
//! writes and states beforehand how many rows it writes to each table, so
//! after a restart the checks are exact:
//! - every acknowledged transaction is present, with all its rows;
//! - every tag present has exactly its rows (no partial transaction), and
//!   no tag is present that was never committed;
//! - the counter table (one row per client, updated by the client's
//!   transactions) counts exactly the client's transactions present;
//! - a purge (a later transaction deleting the rows of an older bulky one
//!   through the tag indexes, and taking it off the counter) is all or
//!   nothing too, and an acknowledged one stays done;
//! - indexes agree with their tables: aggregates read through each index
//!   (a range over all of it; Tusk's planner reads an index for any bound
//!   on its first column, and a check of the order rows come back in
//!   proves the index was read) equal those of a full scan, equality
//!   lookups through an index find what the full scan counted, and primary
//!   key lookups find their rows;
//! - a sequence never hands out a value twice (every value nextval or a
//!   bigserial returned is recorded, committed or not);
//! - acknowledged DDL is there (tables, added columns, indexes) and
//!   acknowledged drops stay dropped;
//! - and the server restarts without help, which `TestServer::restart`
//!   asserts.
//!
//! Kills land at a random moment, or (most of the time) a moment chosen
//! while a COPY, a CREATE INDEX, other DDL or a large transaction is in
//! flight. After a quarter of the kills the next start is killed too,
//! early (during recovery and the clean-up of what the crash left). Some
//! cycles end in a clean stop instead (`tusk stop -m fast`, `smart`,
//! `immediate`, under load), checked the same way.
//!
//! `cargo test` runs the short form (8 kills, 2 clean stops). The long form
//! is the same code with more of everything:
//!
//! ```text
//! TUSK_CRASH_KILLS=60 cargo test --release -p tusk --test crash -- --nocapture
//! ```
//!
//! Environment: `TUSK_CRASH_SEED` replays a run's schedule (the seed is
//! printed; thread timing still varies), `TUSK_CRASH_KILLS` (8),
//! `TUSK_CRASH_STOPS` (a quarter of the kills), `TUSK_CRASH_CLIENTS` (4),
//! `TUSK_CRASH_SCALE` (1: multiplies table and transaction sizes).
//! `TUSK_TEST_KEEP_DATA=1` keeps the data directory and the server log.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::TestServer;
use futures_util::SinkExt;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

type PgError = tokio_postgres::Error;

/// Tags of client `c` are `c * TAG_SPACE + n`.
const TAG_SPACE: i64 = 1_000_000_000;
/// Row ids of tag `t` are `t * ROW_SPACE + i`, `i` from 1.
const ROW_SPACE: i64 = 1_000_000;
/// The client that mostly runs DDL.
const DDL_CLIENT: u32 = 1;
/// Error codes the workload expects now and then and simply retries after:
/// lock conflicts, and sessions ended by a shutdown.
const EXPECTED_CODES: &[&str] = &["40P01", "40001", "55P03", "57014", "57P01", "57P02", "57P03", "53300"];

// ---------------------------------------------------------------- settings

struct Settings {
    seed: u64,
    kills: usize,
    stops: usize,
    clients: u32,
    scale: i64,
}

impl Settings {
    fn from_env() -> Settings {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let seed = var("TUSK_CRASH_SEED")
            .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
        let kills = var("TUSK_CRASH_KILLS").unwrap_or(8) as usize;
        Settings {
            seed,
            kills,
            stops: var("TUSK_CRASH_STOPS").map(|v| v as usize).unwrap_or(kills / 4),
            clients: var("TUSK_CRASH_CLIENTS").unwrap_or(4).clamp(2, 64) as u32,
            scale: var("TUSK_CRASH_SCALE").unwrap_or(1).clamp(1, 100) as i64,
        }
    }

    fn big_rows(&self) -> i64 {
        20_000 * self.scale
    }
}

// ---------------------------------------------------------------- the client-side record

/// What the client knows of a transaction's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Started; its fate is not known yet.
    Pending,
    /// The server acknowledged the commit.
    Acked,
    /// Certainly not committed: COMMIT never sent, or refused.
    Failed,
    /// COMMIT sent, answer lost: present or absent, all or nothing.
    InDoubt,
}

/// The outcome of a COMMIT (or an autocommit statement) that returned an
/// error: a refusal by the server rolled the transaction back; a lost
/// connection or a session ended by shutdown leaves it in doubt.
fn commit_error_outcome(e: &PgError) -> Outcome {
    match e.code().map(|c| c.code()) {
        Some(code) if !["57", "08", "XX", "58"].iter().any(|class| code.starts_with(class)) => Outcome::Failed,
        _ => Outcome::InDoubt,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    /// A few rows in items and notes, a bigserial, the counter.
    Small,
    /// Thousands of rows in items and notes, the counter.
    Large,
    /// COPY into items, autocommit.
    Copy,
    /// COPY into notes and the counter, in a transaction block.
    CopyTxn,
    /// Rows in big (the table CREATE INDEX works on), the counter.
    BigInsert,
}

/// Tables a tagged transaction writes, in the order of `TxnRecord::expect`.
const TAGGED_TABLES: [&str; 4] = ["items", "notes", "big", "ev"];

#[derive(Clone, Debug)]
struct TxnRecord {
    client: u32,
    kind: Kind,
    /// Rows with this tag in items, notes, big, ev once committed.
    expect: [i64; 4],
    /// Whether it added one to its client's counter row.
    counter: bool,
    outcome: Outcome,
    /// Was ever in doubt (looked up again by index after each recovery).
    doubted: bool,
    /// A later transaction that deletes its rows (and takes its count
    /// off the counter): None until one is attempted.
    purge: Option<Outcome>,
}

/// A table the DDL client created (and perhaps altered and dropped).
#[derive(Clone, Debug)]
struct DdlTable {
    rows: i64,
    created: Outcome,
    altered: Option<Outcome>,
    dropped: Option<Outcome>,
}

/// An index the DDL client created on big.
#[derive(Clone, Debug)]
struct BigIndex {
    column: &'static str,
    created: Outcome,
    dropped: Option<Outcome>,
}

/// A column the DDL client added to big (every row holds `default`).
#[derive(Clone, Debug)]
struct BigColumn {
    default: i64,
    added: Outcome,
    dropped: Option<Outcome>,
}

/// Whether an object that was created, and perhaps dropped, must exist
/// (Some(true)), must not (Some(false)), or may either (None).
fn must_exist(created: Outcome, dropped: Option<Outcome>) -> Option<bool> {
    match (created, dropped) {
        (Outcome::Failed, _) | (_, Some(Outcome::Acked)) => Some(false),
        (Outcome::Acked, None | Some(Outcome::Failed)) => Some(true),
        _ => None,
    }
}

/// After a recovery showed whether an object exists, its in-doubt steps
/// are decided.
fn settle_existence(created: &mut Outcome, dropped: &mut Option<Outcome>, exists: bool) {
    if exists {
        if *created == Outcome::InDoubt {
            *created = Outcome::Acked;
        }
        if *dropped == Some(Outcome::InDoubt) {
            *dropped = Some(Outcome::Failed);
        }
    } else if *dropped == Some(Outcome::InDoubt) {
        *dropped = Some(Outcome::Acked);
    } else if *created == Outcome::InDoubt {
        *created = Outcome::Failed;
    }
}

#[derive(Default)]
struct Registry {
    txns: HashMap<i64, TxnRecord>,
    /// Every value nextval('seq_a') returned, committed or not.
    seq_values: HashSet<i64>,
    /// Every ev.id (bigserial) an INSERT ... RETURNING returned.
    serial_ids: HashSet<i64>,
    ddl_tables: BTreeMap<String, DdlTable>,
    big_indexes: BTreeMap<String, BigIndex>,
    big_columns: BTreeMap<String, BigColumn>,
    /// Broken invariants seen while the workload ran (a repeated sequence value).
    violations: Vec<String>,
    /// Errors the workload did not expect.
    unexpected: Vec<String>,
    figures: Figures,
}

/// What a run did, printed at its end.
#[derive(Default)]
struct Figures {
    kills: usize,
    /// Kills of a server that was starting (recovering) after the last one.
    kills_in_start: usize,
    /// Kills that landed while each activity was in flight.
    kills_during: [usize; 4],
    stops: BTreeMap<&'static str, usize>,
    restarts: Vec<Duration>,
    acked: BTreeMap<&'static str, usize>,
    in_doubt_present: usize,
    in_doubt_absent: usize,
    failed: usize,
    rows_verified: u64,
    rows_last: u64,
}

/// What a kill can be timed to hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
    Copy = 0,
    CreateIndex = 1,
    Ddl = 2,
    Large = 3,
}

const ACTIVITIES: [Activity; 4] = [Activity::Copy, Activity::CreateIndex, Activity::Ddl, Activity::Large];

impl Activity {
    fn name(self) -> &'static str {
        match self {
            Activity::Copy => "COPY",
            Activity::CreateIndex => "CREATE INDEX",
            Activity::Ddl => "other DDL",
            Activity::Large => "large transaction",
        }
    }
}

struct Shared {
    registry: Mutex<Registry>,
    /// How many clients are in each activity right now.
    in_flight: [AtomicUsize; 4],
    /// Clients finish their current operation and disconnect.
    stop: AtomicBool,
    scale: i64,
    big_rows: i64,
}

/// Marks an activity in flight while alive.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Shared {
    fn reg(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn in_flight(&self, a: Activity) -> InFlight<'_> {
        self.in_flight[a as usize].fetch_add(1, Ordering::SeqCst);
        InFlight(&self.in_flight[a as usize])
    }

    fn activities_in_flight(&self) -> Vec<Activity> {
        ACTIVITIES.iter().copied().filter(|a| self.in_flight[*a as usize].load(Ordering::SeqCst) > 0).collect()
    }

    fn begin(&self, tag: i64, client: u32, kind: Kind, expect: [i64; 4], counter: bool) {
        assert!(expect.iter().any(|&n| n > 0), "a tagged transaction writes at least one row");
        let record = TxnRecord { client, kind, expect, counter, outcome: Outcome::Pending, doubted: false, purge: None };
        let previous = self.reg().txns.insert(tag, record);
        assert!(previous.is_none(), "tag {tag} used twice");
    }

    fn settle(&self, tag: i64, outcome: Outcome) {
        let mut reg = self.reg();
        let record = reg.txns.get_mut(&tag).expect("begun");
        record.outcome = outcome;
        record.doubted |= outcome == Outcome::InDoubt;
        let kind = record.kind;
        reg.count(outcome, kind_name(kind));
    }

    fn settle_purge(&self, tag: i64, outcome: Outcome) {
        let mut reg = self.reg();
        let record = reg.txns.get_mut(&tag).expect("begun");
        record.purge = Some(outcome);
        record.doubted |= outcome == Outcome::InDoubt;
        reg.count(outcome, "purge (DELETE) transaction");
    }

    fn handed_out_sequence_value(&self, v: i64) {
        let mut reg = self.reg();
        if !reg.seq_values.insert(v) {
            reg.violations.push(format!("sequence seq_a handed out {v} twice"));
        }
    }

    fn handed_out_serial(&self, v: i64) {
        let mut reg = self.reg();
        if !reg.serial_ids.insert(v) {
            reg.violations.push(format!("bigserial ev.id handed out {v} twice"));
        }
    }
}

impl Registry {
    fn count(&mut self, outcome: Outcome, what: &'static str) {
        match outcome {
            Outcome::Acked => *self.figures.acked.entry(what).or_default() += 1,
            Outcome::Failed => self.figures.failed += 1,
            _ => {}
        }
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Small => "small transaction",
        Kind::Large => "large transaction",
        Kind::Copy => "COPY (autocommit)",
        Kind::CopyTxn => "COPY in a transaction",
        Kind::BigInsert => "insert into big",
    }
}

// ---------------------------------------------------------------- the workload

struct ClientState {
    id: u32,
    rng: StdRng,
    seq: i64,
    ddl_seq: u32,
    /// This client's acknowledged bulky transactions, oldest first: what
    /// a purge deletes (which keeps the tables from growing without end).
    purgeable: std::collections::VecDeque<i64>,
}

impl ClientState {
    fn next_tag(&mut self) -> i64 {
        self.seq += 1;
        self.id as i64 * TAG_SPACE + self.seq
    }
}

async fn connect(config: &tokio_postgres::Config) -> Result<Client, PgError> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Runs `body` in a transaction block; the outcome says whether it committed.
async fn in_txn(client: &Client, body: impl Future<Output = Result<(), PgError>>) -> (Result<(), PgError>, Outcome) {
    let work = async {
        client.batch_execute("BEGIN").await?;
        body.await
    };
    if let Err(e) = work.await {
        return (Err(e), Outcome::Failed);
    }
    match client.batch_execute("COMMIT").await {
        Ok(()) => (Ok(()), Outcome::Acked),
        Err(e) => {
            let outcome = commit_error_outcome(&e);
            (Err(e), outcome)
        }
    }
}

/// Runs one autocommit statement; the outcome says whether it committed.
async fn autocommit(client: &Client, sql: &str) -> (Result<(), PgError>, Outcome) {
    match client.batch_execute(sql).await {
        Ok(()) => (Ok(()), Outcome::Acked),
        Err(e) => {
            let outcome = commit_error_outcome(&e);
            (Err(e), outcome)
        }
    }
}

/// COPY ... FROM STDIN of `data` in `chunks` messages. The outcome is
/// Failed unless the end of the data was sent.
async fn copy_in(client: &Client, sql: &str, data: String, chunks: usize) -> (Result<u64, PgError>, Outcome) {
    let sink = match client.copy_in::<str, Bytes>(sql).await {
        Ok(s) => s,
        Err(e) => return (Err(e), Outcome::Failed),
    };
    let mut sink = std::pin::pin!(sink);
    let bytes = data.into_bytes();
    let per = bytes.len().div_ceil(chunks.max(1)).max(1);
    let mut start = 0;
    while start < bytes.len() {
        // Cut at a line end so every message but the last holds whole rows
        // (not needed by the protocol; it keeps the data easy to read in a trace).
        let mut end = (start + per).min(bytes.len());
        while end < bytes.len() && bytes[end - 1] != b'\n' {
            end += 1;
        }
        if let Err(e) = sink.send(Bytes::copy_from_slice(&bytes[start..end])).await {
            return (Err(e), Outcome::Failed);
        }
        start = end;
    }
    match sink.as_mut().finish().await {
        Ok(n) => (Ok(n), Outcome::Acked),
        Err(e) => {
            let outcome = commit_error_outcome(&e);
            (Err(e), outcome)
        }
    }
}

async fn client_task(mut st: ClientState, config: tokio_postgres::Config, shared: Arc<Shared>) -> ClientState {
    let Ok(client) = connect(&config).await else { return st };
    while !shared.stop.load(Ordering::SeqCst) {
        let result = if st.id == DDL_CLIENT && st.rng.gen_bool(0.7) {
            ddl_op(&mut st, &client, &shared).await
        } else {
            data_op(&mut st, &client, &shared).await
        };
        if let Err(e) = result {
            // No SQLSTATE: the connection is gone (the server was killed).
            let Some(db) = e.as_db_error() else { break };
            if !EXPECTED_CODES.contains(&db.code().code()) {
                shared.reg().unexpected.push(format!("client {}: {}: {}", st.id, db.code().code(), db.message()));
            }
            if client.batch_execute("ROLLBACK").await.is_err() {
                break;
            }
        }
    }
    st
}

async fn data_op(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    match st.rng.gen_range(0..100) {
        0..=37 => small_txn(st, client, shared).await,
        38..=45 => large_txn(st, client, shared).await,
        46..=53 => copy_autocommit(st, client, shared).await,
        54..=59 => copy_in_txn(st, client, shared).await,
        60..=69 if st.purgeable.len() > 2 => purge(st, client, shared).await,
        60..=79 => big_insert(st, client, shared).await,
        80..=89 => big_update(st, client, shared).await,
        _ => nextvals(st, client, shared).await,
    }
}

fn item_row(tag: i64, client: u32, i: i64) -> String {
    format!("({}, {tag}, {client}, 'v{}_{i}')", tag * ROW_SPACE + i, tag % 1000)
}

async fn small_txn(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.next_tag();
    let c = st.id;
    let items = st.rng.gen_range(1..=6i64);
    let notes = st.rng.gen_range(0..=4i64);
    let with_serial = st.rng.gen_bool(0.3);
    let extended = st.rng.gen_bool(0.5);
    shared.begin(tag, c, Kind::Small, [items, notes, 0, with_serial as i64], true);
    let (result, outcome) = in_txn(client, async {
        if extended {
            let insert = client.prepare("INSERT INTO items (id, tag, client, v) VALUES ($1, $2, $3, $4)").await?;
            for i in 1..=items {
                let v = format!("v{}_{i}", tag % 1000);
                client.execute(&insert, &[&(tag * ROW_SPACE + i), &tag, &(c as i32), &v]).await?;
            }
        } else {
            let rows: Vec<String> = (1..=items).map(|i| item_row(tag, c, i)).collect();
            client.batch_execute(&format!("INSERT INTO items (id, tag, client, v) VALUES {}", rows.join(", "))).await?;
        }
        if notes > 0 {
            let rows: Vec<String> = (1..=notes).map(|i| format!("({tag}, {i}, 'note {i}')")).collect();
            client.batch_execute(&format!("INSERT INTO notes (tag, pos, body) VALUES {}", rows.join(", "))).await?;
        }
        if with_serial {
            let row = client.query_one("INSERT INTO ev (tag) VALUES ($1) RETURNING id", &[&tag]).await?;
            shared.handed_out_serial(row.get(0));
        }
        client.execute("UPDATE acct SET n = n + 1, last_tag = $1 WHERE client = $2", &[&tag, &(c as i32)]).await?;
        Ok(())
    })
    .await;
    shared.settle(tag, outcome);
    result
}

async fn large_txn(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.next_tag();
    let c = st.id;
    let n = st.rng.gen_range(1_500..=4_000i64) * shared.scale;
    let m = n / 2;
    // In one statement, or in many (so that kills land between them too).
    let statements = if st.rng.gen_bool(0.5) { 1 } else { st.rng.gen_range(10..=40i64) };
    shared.begin(tag, c, Kind::Large, [n, m, 0, 0], true);
    let _busy = shared.in_flight(Activity::Large);
    let (result, outcome) = in_txn(client, async {
        let per = (n + statements - 1) / statements;
        let mut first = 1;
        while first <= n {
            let last = (first + per - 1).min(n);
            client
                .batch_execute(&format!(
                    "INSERT INTO items (id, tag, client, v) \
                     SELECT {tag}::bigint * {ROW_SPACE} + g, {tag}, {c}, 'L' || g FROM generate_series({first}, {last}) g"
                ))
                .await?;
            first = last + 1;
        }
        client
            .batch_execute(&format!(
                "INSERT INTO notes (tag, pos, body) SELECT {tag}, g, repeat('n', 40) FROM generate_series(1, {m}) g"
            ))
            .await?;
        client.batch_execute(&format!("UPDATE acct SET n = n + 1, last_tag = {tag} WHERE client = {c}")).await?;
        Ok(())
    })
    .await;
    shared.settle(tag, outcome);
    if outcome == Outcome::Acked {
        st.purgeable.push_back(tag);
    }
    result
}

async fn copy_autocommit(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.next_tag();
    let c = st.id;
    let n = st.rng.gen_range(1_500..=5_000i64) * shared.scale;
    let chunks = st.rng.gen_range(1..=16);
    let mut data = String::new();
    for i in 1..=n {
        data.push_str(&format!("{}\t{tag}\t{c}\tc{}_{i}\n", tag * ROW_SPACE + i, tag % 1000));
    }
    shared.begin(tag, c, Kind::Copy, [n, 0, 0, 0], false);
    let _busy = shared.in_flight(Activity::Copy);
    let (result, mut outcome) = copy_in(client, "COPY items (id, tag, client, v) FROM STDIN", data, chunks).await;
    // tokio-postgres runs COPY in the extended protocol, whose implicit
    // transaction commits at the Sync after CopyDone (in PostgreSQL too),
    // but `finish` returns at the CommandComplete sent before it. The
    // commit is acknowledged by the ReadyForQuery that follows, which the
    // driver consumes unseen: an answer to the next query proves it came.
    // (A commit refused at Sync would go unseen too; nothing in this
    // workload makes the commit of a COPY into items fail.)
    if outcome == Outcome::Acked && client.batch_execute("").await.is_err() {
        outcome = Outcome::InDoubt;
    }
    if let Ok(copied) = result {
        if copied != n as u64 {
            shared.reg().violations.push(format!("COPY of {n} rows reported {copied}"));
        }
    }
    shared.settle(tag, outcome);
    if outcome == Outcome::Acked {
        st.purgeable.push_back(tag);
    }
    result.map(|_| ())
}

async fn copy_in_txn(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.next_tag();
    let c = st.id;
    let n = st.rng.gen_range(1_000..=3_000i64) * shared.scale;
    let chunks = st.rng.gen_range(1..=8);
    let mut data = String::new();
    for i in 1..=n {
        data.push_str(&format!("{tag}\t{i}\tcopied note {i}\n"));
    }
    shared.begin(tag, c, Kind::CopyTxn, [0, n, 0, 0], true);
    let _busy = shared.in_flight(Activity::Copy);
    let (result, outcome) = in_txn(client, async {
        let (copied, _) = copy_in(client, "COPY notes (tag, pos, body) FROM STDIN", data, chunks).await;
        copied?;
        client.execute("UPDATE acct SET n = n + 1, last_tag = $1 WHERE client = $2", &[&tag, &(c as i32)]).await?;
        Ok(())
    })
    .await;
    shared.settle(tag, outcome);
    if outcome == Outcome::Acked {
        st.purgeable.push_back(tag);
    }
    result
}

async fn big_insert(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.next_tag();
    let c = st.id;
    let n = st.rng.gen_range(1..=20i64);
    shared.begin(tag, c, Kind::BigInsert, [0, 0, n, 0], true);
    let seed = st.rng.gen_range(0..100_000i64);
    let (result, outcome) = in_txn(client, async {
        let rows: Vec<String> =
            (1..=n).map(|i| format!("({}, {}, 'n{}', {tag})", tag * ROW_SPACE + i, (seed + i * 37) % 100_003, seed % 1009)).collect();
        client.batch_execute(&format!("INSERT INTO big (id, a, b, tag) VALUES {}", rows.join(", "))).await?;
        client.execute("UPDATE acct SET n = n + 1, last_tag = $1 WHERE client = $2", &[&tag, &(c as i32)]).await?;
        Ok(())
    })
    .await;
    shared.settle(tag, outcome);
    result
}

/// Deletes the rows of one of the client's older bulky transactions
/// (through the tag indexes) and takes it off the counter, all or nothing.
async fn purge(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let tag = st.purgeable.pop_front().expect("checked by the caller");
    let c = st.id;
    let (expect, counter) = {
        let mut reg = shared.reg();
        let record = reg.txns.get_mut(&tag).expect("known");
        assert_eq!((record.outcome, record.purge), (Outcome::Acked, None), "purging tag {tag}");
        record.purge = Some(Outcome::Pending);
        (record.expect, record.counter)
    };
    let _busy = shared.in_flight(Activity::Large);
    let (result, outcome) = in_txn(client, async {
        let mut deleted = [0i64; 4];
        for (i, table) in TAGGED_TABLES.iter().enumerate() {
            if expect[i] > 0 {
                deleted[i] = client.execute(&format!("DELETE FROM {table} WHERE tag = $1"), &[&tag]).await? as i64;
            }
        }
        if deleted != expect {
            shared.reg().violations.push(format!("purge of tag {tag} deleted {deleted:?} rows of {TAGGED_TABLES:?}, expected {expect:?}"));
        }
        if counter {
            client.execute("UPDATE acct SET n = n - 1 WHERE client = $1", &[&(c as i32)]).await?;
        }
        Ok(())
    })
    .await;
    shared.settle_purge(tag, outcome);
    result
}

/// Updates of indexed columns of big's original rows (untagged: only the
/// index checks see them, and they would see a stale index entry).
async fn big_update(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let id = st.rng.gen_range(1..=shared.big_rows);
    if st.rng.gen_bool(0.5) {
        client.execute("UPDATE big SET a = a + 1, b = 'u' || (a % 1009) WHERE id = $1", &[&id]).await?;
    } else {
        let last = (id + 30).min(shared.big_rows);
        client.batch_execute(&format!("UPDATE big SET a = (a * 3 + 1) % 100003 WHERE id BETWEEN {id} AND {last}")).await?;
    }
    Ok(())
}

async fn nextvals(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let n = st.rng.gen_range(1..=5);
    let rolled_back = st.rng.gen_bool(0.5);
    if rolled_back {
        client.batch_execute("BEGIN").await?;
    }
    for _ in 0..n {
        let v: i64 = client.query_one("SELECT nextval('seq_a')", &[]).await?.get(0);
        shared.handed_out_sequence_value(v);
    }
    if rolled_back {
        client.batch_execute("ROLLBACK").await?;
    }
    Ok(())
}

const BIG_INDEX_COLUMNS: [&str; 3] = ["a", "b", "tag"];

async fn ddl_op(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    let roll = st.rng.gen_range(0..100);
    // Candidates, chosen under the lock; the statement runs without it.
    let (alterable, droppable, live_indexes, free_columns, live_columns) = {
        let reg = shared.reg();
        let alterable: Vec<String> = reg
            .ddl_tables
            .iter()
            .filter(|(_, t)| must_exist(t.created, t.dropped) == Some(true) && t.altered.is_none())
            .map(|(n, _)| n.clone())
            .collect();
        let droppable: Vec<String> =
            reg.ddl_tables.iter().filter(|(_, t)| must_exist(t.created, t.dropped) == Some(true)).map(|(n, _)| n.clone()).collect();
        let live_indexes: Vec<String> =
            reg.big_indexes.iter().filter(|(_, i)| must_exist(i.created, i.dropped) == Some(true)).map(|(n, _)| n.clone()).collect();
        let free_columns: Vec<&'static str> = BIG_INDEX_COLUMNS
            .iter()
            .copied()
            .filter(|c| !reg.big_indexes.values().any(|i| i.column == *c && must_exist(i.created, i.dropped) != Some(false)))
            .collect();
        let live_columns: Vec<String> =
            reg.big_columns.iter().filter(|(_, c)| must_exist(c.added, c.dropped) == Some(true)).map(|(n, _)| n.clone()).collect();
        (alterable, droppable, live_indexes, free_columns, live_columns)
    };
    let _busy;
    let sql;
    let settle: Box<dyn FnOnce(&mut Registry, Outcome) + Send>;
    match roll {
        30..=44 if !alterable.is_empty() => {
            let name = alterable.choose(&mut st.rng).expect("not empty").clone();
            sql = format!("ALTER TABLE {name} ADD COLUMN y int NOT NULL DEFAULT 7");
            shared.reg().ddl_tables.get_mut(&name).expect("known").altered = Some(Outcome::Pending);
            settle = Box::new(move |reg, o| reg.ddl_tables.get_mut(&name).expect("known").altered = Some(o));
            _busy = shared.in_flight(Activity::Ddl);
        }
        45..=64 if !droppable.is_empty() => {
            let name = droppable.choose(&mut st.rng).expect("not empty").clone();
            sql = format!("DROP TABLE {name}");
            shared.reg().ddl_tables.get_mut(&name).expect("known").dropped = Some(Outcome::Pending);
            settle = Box::new(move |reg, o| reg.ddl_tables.get_mut(&name).expect("known").dropped = Some(o));
            _busy = shared.in_flight(Activity::Ddl);
        }
        65..=79 if !free_columns.is_empty() => {
            let column = *free_columns.choose(&mut st.rng).expect("not empty");
            st.ddl_seq += 1;
            let name = format!("big_{column}_{}", st.ddl_seq);
            sql = format!("CREATE INDEX {name} ON big ({column})");
            shared.reg().big_indexes.insert(name.clone(), BigIndex { column, created: Outcome::Pending, dropped: None });
            settle = Box::new(move |reg, o| reg.big_indexes.get_mut(&name).expect("known").created = o);
            _busy = shared.in_flight(Activity::CreateIndex);
        }
        80..=91 if !live_indexes.is_empty() => {
            let name = live_indexes.choose(&mut st.rng).expect("not empty").clone();
            sql = format!("DROP INDEX {name}");
            shared.reg().big_indexes.get_mut(&name).expect("known").dropped = Some(Outcome::Pending);
            settle = Box::new(move |reg, o| reg.big_indexes.get_mut(&name).expect("known").dropped = Some(o));
            _busy = shared.in_flight(Activity::Ddl);
        }
        92..=99 if !live_columns.is_empty() && st.rng.gen_bool(0.5) => {
            let name = live_columns.choose(&mut st.rng).expect("not empty").clone();
            sql = format!("ALTER TABLE big DROP COLUMN {name}");
            shared.reg().big_columns.get_mut(&name).expect("known").dropped = Some(Outcome::Pending);
            settle = Box::new(move |reg, o| reg.big_columns.get_mut(&name).expect("known").dropped = Some(o));
            _busy = shared.in_flight(Activity::Ddl);
        }
        92..=99 => {
            st.ddl_seq += 1;
            let default = st.ddl_seq as i64;
            let name = format!("extra_{default}");
            sql = format!("ALTER TABLE big ADD COLUMN {name} bigint NOT NULL DEFAULT {default}");
            shared.reg().big_columns.insert(name.clone(), BigColumn { default, added: Outcome::Pending, dropped: None });
            settle = Box::new(move |reg, o| reg.big_columns.get_mut(&name).expect("known").added = o);
            _busy = shared.in_flight(Activity::Ddl);
        }
        _ => return create_table(st, client, shared).await,
    }
    let (result, outcome) = autocommit(client, &sql).await;
    let mut reg = shared.reg();
    settle(&mut reg, outcome);
    reg.count(outcome, "DDL statement");
    result
}

/// CREATE TABLE, its index and its rows, in one transaction. One in four
/// is a bulk load as `pgbench -i` does it (rows first, into the table's
/// hidden row ids, then the primary key, a rewrite): megabytes of rows in
/// key order, which Tusk writes as SST files that RocksDB ingests.
async fn create_table(st: &mut ClientState, client: &Client, shared: &Shared) -> Result<(), PgError> {
    st.ddl_seq += 1;
    let name = format!("ddl_{}_{}", st.id, st.ddl_seq);
    let bulk = st.rng.gen_bool(0.25);
    let rows = if bulk { st.rng.gen_range(40_000..=70_000i64) } else { st.rng.gen_range(10..=200i64) };
    shared.reg().ddl_tables.insert(name.clone(), DdlTable { rows, created: Outcome::Pending, altered: None, dropped: None });
    let _busy = shared.in_flight(Activity::Ddl);
    let (result, outcome) = in_txn(client, async {
        if bulk {
            client.batch_execute(&format!("CREATE TABLE {name} (id int, x text NOT NULL)")).await?;
            client
                .batch_execute(&format!("INSERT INTO {name} SELECT g, 'x' || g || repeat('.', 80) FROM generate_series(1, {rows}) g"))
                .await?;
            client.batch_execute(&format!("ALTER TABLE {name} ADD PRIMARY KEY (id)")).await?;
            client.batch_execute(&format!("CREATE INDEX {name}_x ON {name} (x)")).await?;
            return Ok(());
        }
        client.batch_execute(&format!("CREATE TABLE {name} (id int PRIMARY KEY, x text NOT NULL)")).await?;
        client.batch_execute(&format!("CREATE INDEX {name}_x ON {name} (x)")).await?;
        client.batch_execute(&format!("INSERT INTO {name} SELECT g, 'x' || g FROM generate_series(1, {rows}) g")).await?;
        Ok(())
    })
    .await;
    let mut reg = shared.reg();
    reg.ddl_tables.get_mut(&name).expect("known").created = outcome;
    reg.count(outcome, "DDL transaction");
    result
}

// ---------------------------------------------------------------- setup

async fn setup(server: &TestServer, settings: &Settings) {
    let c = server.connect("postgres").await;
    let sql = format!(
        "CREATE TABLE acct (client int PRIMARY KEY, n bigint NOT NULL, last_tag bigint NOT NULL);
         CREATE INDEX acct_n ON acct (n);
         INSERT INTO acct SELECT g, 0, 0 FROM generate_series(1, {clients}) g;
         CREATE TABLE items (id bigint PRIMARY KEY, tag bigint NOT NULL, client int NOT NULL, v text NOT NULL);
         CREATE INDEX items_tag ON items (tag);
         CREATE INDEX items_v ON items (v);
         CREATE TABLE notes (tag bigint NOT NULL, pos int NOT NULL, body text NOT NULL);
         CREATE INDEX notes_tag ON notes (tag);
         CREATE TABLE ev (id bigserial PRIMARY KEY, tag bigint NOT NULL);
         CREATE INDEX ev_tag ON ev (tag);
         CREATE SEQUENCE seq_a;
         CREATE TABLE big (id bigint PRIMARY KEY, a int NOT NULL, b text NOT NULL, tag bigint NOT NULL);
         INSERT INTO big SELECT g, (g * 7919) % 100003, 'b' || (g % 1009), 0 FROM generate_series(1, {big}) g;",
        clients = settings.clients,
        big = settings.big_rows(),
    );
    c.batch_execute(&sql).await.unwrap_or_else(|e| panic!("setup failed: {e:?}\n{}", server.log_tail()));
}

// ---------------------------------------------------------------- verification

async fn rows(c: &Client, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let messages = c.simple_query(sql).await.map_err(|e| format!("{sql}: {e:?}"))?;
    Ok(messages
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some((0..r.len()).map(|i| r.get(i).unwrap_or("").to_string()).collect()),
            _ => None,
        })
        .collect())
}

async fn one_row(c: &Client, sql: &str) -> Result<Vec<String>, String> {
    let mut r = rows(c, sql).await?;
    if r.len() != 1 {
        return Err(format!("{sql}: {} rows instead of one", r.len()));
    }
    Ok(r.remove(0))
}

async fn count(c: &Client, sql: &str) -> Result<i64, String> {
    let r = one_row(c, sql).await?;
    r[0].parse().map_err(|_| format!("{sql}: not a count: {:?}", r[0]))
}

async fn tag_counts(c: &Client, table: &str) -> Result<HashMap<i64, i64>, String> {
    // No WHERE: a full scan of the table.
    let sql = format!("SELECT tag, count(*) FROM {table} GROUP BY tag");
    let mut out = HashMap::new();
    for r in rows(c, &sql).await? {
        let tag: i64 = r[0].parse().map_err(|_| format!("{sql}: bad tag {:?}", r[0]))?;
        let n: i64 = r[1].parse().map_err(|_| format!("{sql}: bad count {:?}", r[1]))?;
        out.insert(tag, n);
    }
    Ok(out)
}

/// Aggregates over the whole table (full scan) must equal those read
/// through an index (`where` bounds its first column below every value),
/// and the first rows read through the index must come in its order.
async fn index_agrees(
    c: &Client,
    problems: &mut Vec<String>,
    table: &str,
    index: &str,
    aggregates: &str,
    column: &str,
    lowest: &str,
    order_is_visible: bool,
) -> Result<(), String> {
    let full = one_row(c, &format!("SELECT {aggregates} FROM {table}")).await?;
    let through_index = one_row(c, &format!("SELECT {aggregates} FROM {table} WHERE {column} >= {lowest}")).await?;
    if full != through_index {
        problems.push(format!(
            "index {index} disagrees with table {table}: full scan gives ({aggregates}) = {full:?}, the index gives {through_index:?}"
        ));
    }
    if order_is_visible {
        // The table's own order (its primary key) is not this column's
        // order, so rows in column order show the index was read.
        let first = rows(c, &format!("SELECT {column} FROM {table} WHERE {column} >= {lowest} LIMIT 200")).await?;
        let values: Vec<i64> = first.iter().filter_map(|r| r[0].parse().ok()).collect();
        if values.len() == first.len() && values.windows(2).any(|w| w[0] > w[1]) {
            problems.push(format!(
                "harness: \"{column} >= {lowest}\" did not read {table} through index {index} (rows came out of order); \
                 if the planner now prefers a full scan for it, force the index here"
            ));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Verified {
    rows: u64,
}

/// Checks everything the client recorded against the restarted server.
/// Returns the broken invariants (empty when all hold).
async fn verify(server: &TestServer, shared: &Shared, settings: &Settings, rng: &mut StdRng) -> Result<(Vec<String>, Verified), String> {
    let c = server.try_connect("postgres").await.map_err(|e| format!("cannot connect after restart: {e}"))?;
    let mut problems: Vec<String> = Vec::new();
    let mut verified = Verified::default();

    // Tagged transactions: all or nothing, acknowledged ones present.
    let mut found: Vec<HashMap<i64, i64>> = Vec::new();
    for table in TAGGED_TABLES {
        found.push(tag_counts(&c, table).await?);
    }
    let mut counter_txns: HashMap<u32, (i64, i64)> = HashMap::new(); // client -> (count, max tag)
    let mut present_tags: Vec<i64> = Vec::new();
    let mut doubted_tags: Vec<i64> = Vec::new();
    {
        let reg = shared.reg();
        problems.extend(reg.violations.iter().cloned());
        problems.extend(reg.unexpected.iter().map(|u| format!("unexpected error in the workload: {u}")));
        for (&tag, rec) in &reg.txns {
            let actual: Vec<i64> = found.iter().map(|f| f.get(&tag).copied().unwrap_or(0)).collect();
            let present = actual.iter().any(|&n| n > 0);
            if present && actual != rec.expect {
                problems.push(format!(
                    "partial transaction: tag {tag} ({:?}, {:?}) should have {:?} rows in {TAGGED_TABLES:?}, has {actual:?}",
                    rec.kind, rec.outcome, rec.expect
                ));
            }
            // A purge that committed (or may have) deleted the rows.
            let purged = rec.purge == Some(Outcome::Acked);
            let maybe_purged = rec.purge == Some(Outcome::InDoubt);
            match rec.outcome {
                Outcome::Acked if purged && present => problems.push(format!(
                    "lost commit: the acknowledged deletion of tag {tag}'s rows ({:?}) was undone",
                    rec.kind
                )),
                Outcome::Acked if !present && !purged && !maybe_purged => problems.push(format!(
                    "lost commit: acknowledged transaction tag {tag} ({:?}, {:?} rows) is missing",
                    rec.kind, rec.expect
                )),
                Outcome::Failed if present => problems.push(format!(
                    "transaction tag {tag} ({:?}) never committed (COMMIT not sent or refused) but is visible",
                    rec.kind
                )),
                Outcome::Pending => problems.push(format!("harness: transaction tag {tag} still pending after its client ended")),
                _ => {}
            }
            if rec.purge == Some(Outcome::Pending) {
                problems.push(format!("harness: purge of tag {tag} still pending after its client ended"));
            }
            if present {
                verified.rows += actual.iter().sum::<i64>() as u64;
                present_tags.push(tag);
            }
            if rec.counter {
                // The counter counts the transactions present; its last
                // tag is the newest that committed, deleted since or not.
                let committed = present || (rec.outcome == Outcome::Acked && (purged || maybe_purged));
                let e = counter_txns.entry(rec.client).or_default();
                e.0 += present as i64;
                if committed {
                    e.1 = e.1.max(tag);
                }
            }
            if rec.doubted {
                doubted_tags.push(tag);
            }
        }
        for (table, f) in TAGGED_TABLES.iter().zip(&found) {
            for (&tag, &n) in f {
                if tag != 0 && !reg.txns.contains_key(&tag) {
                    problems.push(format!("{n} rows in {table} carry tag {tag}, which no client ever used"));
                }
            }
        }
    }
    let original = found[2].get(&0).copied().unwrap_or(0);
    if original != settings.big_rows() {
        problems.push(format!("big should keep its {} original rows, has {original}", settings.big_rows()));
    }
    verified.rows += original as u64;

    // The counter table counts each client's transactions present.
    let acct = rows(&c, "SELECT client, n, last_tag FROM acct ORDER BY client").await?;
    if acct.len() != settings.clients as usize {
        problems.push(format!("acct should have {} rows, has {}", settings.clients, acct.len()));
    }
    for r in &acct {
        let client: u32 = r[0].parse().map_err(|_| format!("acct: bad client {:?}", r[0]))?;
        let (n, last) = counter_txns.get(&client).copied().unwrap_or((0, 0));
        if r[1] != n.to_string() || r[2] != last.to_string() {
            problems.push(format!(
                "acct row of client {client} says n = {}, last_tag = {}; the transactions present say {n}, {last}",
                r[1], r[2]
            ));
        }
    }

    // Indexes agree with their tables.
    let items_aggregates = "count(*), sum(id), sum(tag), sum(client), sum(length(v))";
    index_agrees(&c, &mut problems, "items", "items_tag", items_aggregates, "tag", "0", false).await?;
    index_agrees(&c, &mut problems, "items", "items_v", items_aggregates, "v", "''", false).await?;
    index_agrees(&c, &mut problems, "notes", "notes_tag", "count(*), sum(tag), sum(pos), sum(length(body))", "tag", "0", false).await?;
    index_agrees(&c, &mut problems, "ev", "ev_tag", "count(*), sum(id), sum(tag)", "tag", "0", false).await?;
    index_agrees(&c, &mut problems, "acct", "acct_n", "count(*), sum(client), sum(n), sum(last_tag)", "n", "0", false).await?;
    // Equality lookups through the indexes (and the primary key) for a
    // sample of tags and every tag that was ever in doubt.
    let mut sample: Vec<i64> = present_tags.choose_multiple(rng, 200).copied().collect();
    sample.extend(doubted_tags.iter().copied());
    sample.sort_unstable();
    sample.dedup();
    let by_tag = [
        c.prepare("SELECT count(*) FROM items WHERE tag = $1").await.map_err(|e| e.to_string())?,
        c.prepare("SELECT count(*) FROM notes WHERE tag = $1").await.map_err(|e| e.to_string())?,
    ];
    let by_id = c.prepare("SELECT tag FROM items WHERE id = $1").await.map_err(|e| e.to_string())?;
    for &tag in &sample {
        for (i, statement) in by_tag.iter().enumerate() {
            let n: i64 = c.query_one(statement, &[&tag]).await.map_err(|e| e.to_string())?.get(0);
            let expected = found[i].get(&tag).copied().unwrap_or(0);
            if n != expected {
                problems.push(format!(
                    "index on {}.tag finds {n} rows of tag {tag}, a full scan {expected}",
                    TAGGED_TABLES[i]
                ));
            }
        }
        if found[0].get(&tag).copied().unwrap_or(0) > 0 {
            let got = c.query(&by_id, &[&(tag * ROW_SPACE + 1)]).await.map_err(|e| e.to_string())?;
            if got.len() != 1 || got[0].get::<_, i64>(0) != tag {
                problems.push(format!("primary key lookup of items row {} (tag {tag}) finds {} rows", tag * ROW_SPACE + 1, got.len()));
            }
        }
    }

    // DDL: what the catalog shows against what was acknowledged.
    let tables: HashSet<String> = rows(
        &c,
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND c.relkind = 'r'",
    )
    .await?
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    let indexes: HashSet<String> =
        rows(&c, "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'").await?.into_iter().map(|r| r[0].clone()).collect();
    let columns: HashSet<(String, String)> =
        rows(&c, "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'")
            .await?
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
    for t in ["acct", "items", "notes", "ev", "big"] {
        if !tables.contains(t) {
            problems.push(format!("table {t} is gone"));
        }
    }
    for i in ["acct_n", "items_tag", "items_v", "notes_tag", "ev_tag"] {
        if !indexes.contains(i) {
            problems.push(format!("index {i} is gone"));
        }
    }
    let (ddl_tables, big_indexes, big_columns) = {
        let reg = shared.reg();
        (reg.ddl_tables.clone(), reg.big_indexes.clone(), reg.big_columns.clone())
    };
    for (name, t) in &ddl_tables {
        let exists = tables.contains(name);
        if must_exist(t.created, t.dropped).is_some_and(|m| m != exists) {
            problems.push(format!("table {name} (created {:?}, dropped {:?}) exists: {exists}", t.created, t.dropped));
        }
        if !exists {
            continue;
        }
        if !indexes.contains(&format!("{name}_x")) {
            problems.push(format!("table {name} exists without its index {name}_x"));
        }
        let all = count(&c, &format!("SELECT count(*) FROM {name}")).await?;
        let by_index = count(&c, &format!("SELECT count(*) FROM {name} WHERE x >= ''")).await?;
        let by_key = count(&c, &format!("SELECT count(*) FROM {name} WHERE id >= 1")).await?;
        if [all, by_index, by_key] != [t.rows; 3] {
            problems.push(format!(
                "table {name} should have {} rows: full scan {all}, through its index {by_index}, its key {by_key}",
                t.rows
            ));
        }
        verified.rows += all as u64;
        let has_y = columns.contains(&(name.clone(), "y".to_string()));
        let must = match t.altered {
            None | Some(Outcome::Failed) => Some(false),
            Some(Outcome::Acked) => Some(true),
            _ => None,
        };
        if must.is_some_and(|m| m != has_y) {
            problems.push(format!("table {name}: ALTER TABLE ADD COLUMN y ({:?}) but column y exists: {has_y}", t.altered));
        }
        if has_y {
            let sevens = count(&c, &format!("SELECT count(*) FROM {name} WHERE y = 7")).await?;
            if sevens != all {
                problems.push(format!("table {name}: {sevens} of {all} rows have the added column's default"));
            }
        }
    }
    let big_aggregates = "count(*), sum(id), sum(a), sum(length(b)), sum(tag)";
    for (name, i) in &big_indexes {
        let exists = indexes.contains(name);
        if must_exist(i.created, i.dropped).is_some_and(|m| m != exists) {
            problems.push(format!("index {name} on big (created {:?}, dropped {:?}) exists: {exists}", i.created, i.dropped));
        }
        if exists {
            let (lowest, ordered) = match i.column {
                "a" => ("-2147483648", true),
                "b" => ("''", false),
                _ => ("0", false),
            };
            index_agrees(&c, &mut problems, "big", name, big_aggregates, i.column, lowest, ordered).await?;
        }
    }
    let big_count = count(&c, "SELECT count(*) FROM big").await?;
    for (name, col) in &big_columns {
        let exists = columns.contains(&("big".to_string(), name.clone()));
        if must_exist(col.added, col.dropped).is_some_and(|m| m != exists) {
            problems.push(format!("column big.{name} (added {:?}, dropped {:?}) exists: {exists}", col.added, col.dropped));
        }
        if exists {
            let n = count(&c, &format!("SELECT count(*) FROM big WHERE {name} = {}", col.default)).await?;
            if n != big_count {
                problems.push(format!("column big.{name}: {n} of {big_count} rows hold its default {}", col.default));
            }
        }
    }

    if problems.is_empty() {
        // What this recovery showed decides what was in doubt; later
        // recoveries must agree.
        let mut reg = shared.reg();
        let mut committed_count = 0;
        let mut not_committed_count = 0;
        for (&tag, rec) in reg.txns.iter_mut() {
            let present = found.iter().any(|f| f.contains_key(&tag));
            if rec.outcome == Outcome::InDoubt {
                rec.outcome = if present { Outcome::Acked } else { Outcome::Failed };
                if present {
                    committed_count += 1;
                } else {
                    not_committed_count += 1;
                }
            }
            if rec.purge == Some(Outcome::InDoubt) {
                rec.purge = Some(if present { Outcome::Failed } else { Outcome::Acked });
                if present {
                    not_committed_count += 1;
                } else {
                    committed_count += 1;
                }
            }
        }
        for (name, t) in reg.ddl_tables.iter_mut() {
            let exists = tables.contains(name);
            settle_existence(&mut t.created, &mut t.dropped, exists);
            if exists && t.altered == Some(Outcome::InDoubt) {
                t.altered = Some(if columns.contains(&(name.clone(), "y".to_string())) { Outcome::Acked } else { Outcome::Failed });
            }
        }
        for (name, i) in reg.big_indexes.iter_mut() {
            settle_existence(&mut i.created, &mut i.dropped, indexes.contains(name));
        }
        for (name, col) in reg.big_columns.iter_mut() {
            settle_existence(&mut col.added, &mut col.dropped, columns.contains(&("big".to_string(), name.clone())));
        }
        reg.figures.in_doubt_present += committed_count;
        reg.figures.in_doubt_absent += not_committed_count;
    }
    Ok((problems, verified))
}

// ---------------------------------------------------------------- stopping the server

/// `tusk stop -m <mode>` on the server's data directory, started in the background.
fn spawn_stop(server: &TestServer, mode: &str) -> std::process::Child {
    Command::new(TestServer::binary())
        .arg("stop")
        .arg("--data-dir")
        .arg(server.data_dir())
        .args(["-m", mode])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("tusk stop runs")
}

/// Waits for the server process to exit; panics after `limit`.
fn wait_exit(server: &mut TestServer, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = server.exit_status() {
            return status;
        }
        assert!(Instant::now() < deadline, "{what}: the server did not exit within {limit:?}\n{}", server.log_tail());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a server on `server`'s data directory (its own process, not
/// `server`'s, which is stopped) and kills it with SIGKILL `after` later,
/// ready or not.
fn kill_during_start(server: &TestServer, after: Duration) {
    let log = std::fs::File::options().create(true).append(true).open(server.log_path()).expect("server log");
    let log_err = log.try_clone().expect("server log");
    let mut child = Command::new(TestServer::binary())
        .arg("serve")
        .arg("--data-dir")
        .arg(server.data_dir())
        .args(["--port", &server.port().to_string(), "--listen", server.host()])
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .expect("tusk serve runs");
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
}

fn log_len(server: &TestServer) -> usize {
    std::fs::read(server.log_path()).map(|b| b.len()).unwrap_or(0)
}

fn log_since(server: &TestServer, from: usize) -> String {
    let bytes = std::fs::read(server.log_path()).unwrap_or_default();
    String::from_utf8_lossy(&bytes[from.min(bytes.len())..]).into_owned()
}

// ---------------------------------------------------------------- the harness

#[derive(Clone, Copy, Debug)]
enum Ending {
    /// SIGKILL, perhaps timed to hit an activity.
    Kill(Option<Activity>),
    /// `tusk stop -m <mode>` under load.
    Stop(&'static str),
}

#[test]
fn crash_recovery_keeps_every_acknowledged_commit() {
    let settings = Settings::from_env();
    println!(
        "crash harness: seed {} (TUSK_CRASH_SEED={} replays the schedule), {} kills, {} clean stops, {} clients, scale {}",
        settings.seed, settings.seed, settings.kills, settings.stops, settings.clients, settings.scale
    );
    let started = Instant::now();
    let mut rng = StdRng::seed_from_u64(settings.seed);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");

    let mut server = TestServer::start();
    runtime.block_on(setup(&server, &settings));
    let shared = Arc::new(Shared {
        registry: Mutex::new(Registry::default()),
        in_flight: Default::default(),
        stop: AtomicBool::new(false),
        scale: settings.scale,
        big_rows: settings.big_rows(),
    });
    let mut clients: Vec<ClientState> = (1..=settings.clients)
        .map(|id| ClientState {
            id,
            rng: StdRng::seed_from_u64(settings.seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            seq: 0,
            ddl_seq: 0,
            purgeable: Default::default(),
        })
        .collect();

    // The schedule: kills (most timed to hit an activity) and clean stops.
    let modes = ["fast", "smart", "immediate"];
    let mut endings: Vec<Ending> = (0..settings.kills)
        .map(|_| if rng.gen_bool(0.65) { Ending::Kill(Some(*ACTIVITIES.choose(&mut rng).expect("four"))) } else { Ending::Kill(None) })
        .collect();
    endings.extend((0..settings.stops).map(|i| Ending::Stop(modes[i % modes.len()])));
    endings.shuffle(&mut rng);

    for (cycle, ending) in endings.iter().enumerate() {
        shared.stop.store(false, Ordering::SeqCst);
        let config = server.config("postgres");
        let handles: Vec<_> =
            clients.drain(..).map(|st| runtime.spawn(client_task(st, config.clone(), shared.clone()))).collect();
        let run_for = Duration::from_millis(rng.gen_range(300..=2_500));
        std::thread::sleep(run_for);
        if let Some(status) = server.exit_status() {
            panic!("cycle {cycle}: the server exited on its own ({status})\n{}", server.log_tail());
        }
        let log_mark = log_len(&server);
        let note = match *ending {
            Ending::Kill(target) => {
                if let Some(activity) = target {
                    let deadline = Instant::now() + Duration::from_secs(8);
                    while shared.in_flight[activity as usize].load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    // Into the activity: DDL statements take milliseconds,
                    // the others longer.
                    let into = match activity {
                        Activity::Ddl => rng.gen_range(0..=2),
                        Activity::CreateIndex => rng.gen_range(0..=30),
                        Activity::Copy | Activity::Large => rng.gen_range(0..=60),
                    };
                    std::thread::sleep(Duration::from_millis(into));
                }
                let hit = shared.activities_in_flight();
                server.kill();
                let mut reg = shared.reg();
                reg.figures.kills += 1;
                for a in &hit {
                    reg.figures.kills_during[*a as usize] += 1;
                }
                let names: Vec<&str> = hit.iter().map(|a| a.name()).collect();
                format!("SIGKILL after {run_for:?} (in flight: {})", if names.is_empty() { "small work".to_string() } else { names.join(", ") })
            }
            Ending::Stop(mode) => {
                if mode == "smart" {
                    // Smart waits for the sessions: they finish what they do and leave.
                    shared.stop.store(true, Ordering::SeqCst);
                }
                let mut stop = spawn_stop(&server, mode);
                let status = wait_exit(&mut server, Duration::from_secs(120), &format!("tusk stop -m {mode}"));
                let stop_status = stop.wait().expect("tusk stop");
                assert!(stop_status.success(), "tusk stop -m {mode} failed ({stop_status})\n{}", server.log_tail());
                assert!(status.success(), "the server exited with {status} on stop -m {mode}\n{}", server.log_tail());
                let log = log_since(&server, log_mark);
                let clean = log.contains("database system is shut down");
                assert_eq!(clean, mode != "immediate", "stop -m {mode}: clean shutdown logged: {clean}\n{log}");
                *shared.reg().figures.stops.entry(mode).or_default() += 1;
                format!("tusk stop -m {mode} after {run_for:?}")
            }
        };
        for h in handles {
            let st = runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(120), h).await })
                .unwrap_or_else(|_| panic!("cycle {cycle}: a client did not finish after the server stopped"))
                .expect("client task");
            clients.push(st);
        }
        clients.sort_by_key(|c| c.id);
        if matches!(ending, Ending::Stop("smart")) {
            let reg = shared.reg();
            let doubted: Vec<i64> = reg.txns.iter().filter(|(_, r)| r.outcome == Outcome::InDoubt).map(|(t, _)| *t).collect();
            assert!(doubted.is_empty(), "a smart shutdown let sessions finish, yet commits are in doubt: {doubted:?}");
        }

        if matches!(ending, Ending::Kill(_)) && rng.gen_bool(0.25) {
            // Kill the next start too, early in it (recovery, the clean-up
            // of storage the crash left behind): the start after must cope.
            kill_during_start(&server, Duration::from_millis(rng.gen_range(0..=400)));
            shared.reg().figures.kills_in_start += 1;
        }
        let restart_began = Instant::now();
        if let Err(e) = server.restart() {
            panic!("cycle {cycle}: the server does not restart after {note} (seed {}):\n{e}", settings.seed);
        }
        let restart_took = restart_began.elapsed();
        shared.reg().figures.restarts.push(restart_took);
        let (problems, verified) = runtime
            .block_on(verify(&server, &shared, &settings, &mut rng))
            .unwrap_or_else(|e| panic!("cycle {cycle}: verification could not run: {e}\n{}", server.log_tail()));
        if !problems.is_empty() {
            let shown: Vec<&String> = problems.iter().take(40).collect();
            panic!(
                "cycle {cycle}, after {note} (seed {}), {} broken invariant(s):\n  {}\nserver log:\n{}",
                settings.seed,
                problems.len(),
                shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
                server.log_tail()
            );
        }
        {
            let mut reg = shared.reg();
            reg.figures.rows_verified += verified.rows;
            reg.figures.rows_last = verified.rows;
        }
        println!("cycle {cycle}: {note}; restart {restart_took:.2?}; {} rows verified", verified.rows);
    }

    let reg = shared.reg();
    let f = &reg.figures;
    let mut restarts = f.restarts.clone();
    restarts.sort();
    let median = restarts.get(restarts.len() / 2).copied().unwrap_or_default();
    println!("crash harness figures (seed {}, {:.1?} in all):", settings.seed, started.elapsed());
    println!("  SIGKILLs: {} under load, {} more during a start; clean stops: {:?}", f.kills, f.kills_in_start, f.stops);
    for a in ACTIVITIES {
        println!("  kills that hit {}: {}", a.name(), f.kills_during[a as usize]);
    }
    println!(
        "  restarts: {}, min {:.2?}, median {:.2?}, max {:.2?}",
        restarts.len(),
        restarts.first().copied().unwrap_or_default(),
        median,
        restarts.last().copied().unwrap_or_default()
    );
    let acked: usize = f.acked.values().sum();
    println!("  acknowledged: {acked} ({:?})", f.acked);
    println!(
        "  in doubt at a kill: {} found committed, {} found not committed; {} refused or never committed",
        f.in_doubt_present, f.in_doubt_absent, f.failed
    );
    println!("  sequence values handed out: {}, bigserial ids: {}", reg.seq_values.len(), reg.serial_ids.len());
    println!("  rows verified: {} in all, {} in the last check", f.rows_verified, f.rows_last);
    assert!(f.kills >= settings.kills, "every scheduled kill happened");
}

// ---------------------------------------------------------------- clean shutdown modes

/// `tusk stop -m smart|fast|immediate`, as `pg_ctl stop -m` defines them:
/// smart waits for sessions to end (they keep working meanwhile), fast
/// ends them (rolling back their open transactions) and shuts down
/// cleanly, immediate stops at once and leaves recovery to the next start.
/// Each keeps what was committed, and the server restarts after each.
#[test]
fn clean_shutdown_modes_keep_committed_data_and_restart() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut server = TestServer::start();
    runtime.block_on(async {
        let c = server.connect("postgres").await;
        c.batch_execute("CREATE TABLE m (id int PRIMARY KEY, mode text NOT NULL); CREATE INDEX m_mode ON m (mode)").await.unwrap();
    });
    let mut committed: BTreeMap<&str, i64> = BTreeMap::new();
    for (round, mode) in ["smart", "fast", "immediate"].into_iter().enumerate() {
        let base = round as i32 * 1000;
        let (a, b) = runtime.block_on(async {
            let a = server.connect("postgres").await;
            let b = server.connect("postgres").await;
            for i in 0..50 {
                a.execute("INSERT INTO m VALUES ($1, $2)", &[&(base + i), &mode]).await.unwrap();
            }
            a.batch_execute(&format!(
                "BEGIN; INSERT INTO m SELECT {base} + g, '{mode}' FROM generate_series(50, 99) g; COMMIT"
            ))
            .await
            .unwrap();
            // An open transaction with a write.
            b.batch_execute(&format!("BEGIN; INSERT INTO m VALUES ({base} + 500, '{mode}')")).await.unwrap();
            (a, b)
        });
        *committed.entry(mode).or_default() += 100;
        let log_mark = log_len(&server);
        let mut stop = spawn_stop(&server, mode);
        match mode {
            "smart" => {
                // New connections are refused once the shutdown began, with
                // PostgreSQL's FATAL 57P03 ...
                runtime.block_on(async {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    let refusal = loop {
                        match server.try_connect("postgres").await {
                            Ok(_) => assert!(Instant::now() < deadline, "smart shutdown: new connections still accepted"),
                            Err(e) => break e,
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    };
                    let db = refusal.as_db_error().unwrap_or_else(|| panic!("smart shutdown: connection refused without an error: {refusal}"));
                    assert_eq!(
                        (db.code().code(), db.severity(), db.message()),
                        ("57P03", "FATAL", "the database system is shutting down"),
                        "smart shutdown: a new connection's error"
                    );
                    // ... while the sessions there keep working and commit.
                    a.execute("INSERT INTO m VALUES ($1, $2)", &[&(base + 100), &mode]).await.unwrap();
                    b.batch_execute("COMMIT").await.unwrap();
                });
                *committed.entry(mode).or_default() += 2;
                assert!(server.exit_status().is_none(), "smart shutdown must wait for the sessions");
                drop(a);
                drop(b);
            }
            "fast" => {
                // The server stops with the sessions still connected (ending
                // them), and the open transaction cannot commit.
                let status = wait_exit(&mut server, Duration::from_secs(60), "tusk stop -m fast with open sessions");
                assert!(status.success(), "server exit status on stop -m fast: {status}");
                let ended = runtime.block_on(async { b.batch_execute("COMMIT").await });
                assert!(ended.is_err(), "fast shutdown must end sessions, yet COMMIT succeeded");
                drop(a);
                drop(b);
            }
            _ => {
                drop(a);
                drop(b);
            }
        }
        let status = wait_exit(&mut server, Duration::from_secs(60), &format!("tusk stop -m {mode}"));
        assert!(status.success(), "server exit status on stop -m {mode}: {status}");
        let stop_status = stop.wait().expect("tusk stop");
        assert!(stop_status.success(), "tusk stop -m {mode}: {stop_status}");
        let log = log_since(&server, log_mark);
        assert_eq!(
            log.contains("database system is shut down"),
            mode != "immediate",
            "stop -m {mode}: only smart and fast shut down cleanly\n{log}"
        );
        assert!(!server.data_dir().join("tusk.pid").exists(), "stop -m {mode} left the PID file");
        server.restart().unwrap_or_else(|e| panic!("restart after stop -m {mode}: {e}"));
        runtime.block_on(async {
            let c = server.connect("postgres").await;
            for (m, n) in &committed {
                let full: i64 = c.query_one("SELECT count(*) FROM m WHERE mode || '' = $1", &[m]).await.unwrap().get(0);
                let by_index: i64 = c.query_one("SELECT count(*) FROM m WHERE mode = $1", &[m]).await.unwrap().get(0);
                assert_eq!((full, by_index), (*n, *n), "rows committed before stop -m {m}, after stop -m {mode} and restart");
            }
            let total: i64 = c.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
            assert_eq!(total, committed.values().sum::<i64>(), "no uncommitted row survives stop -m {mode}");
        });
    }
}

// ---------------------------------------------------------------- sequences across a crash

/// A sequence restart (ALTER SEQUENCE ... RESTART, TRUNCATE ... RESTART
/// IDENTITY) whose transaction never committed must not survive a crash:
/// the sequence would hand out its values again.
#[test]
fn an_uncommitted_sequence_restart_does_not_survive_a_crash() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut server = TestServer::start();
    let open = runtime.block_on(async {
        let c = server.connect("postgres").await;
        c.batch_execute("CREATE SEQUENCE s; CREATE TABLE t (id bigserial PRIMARY KEY, v int)").await.unwrap();
        for i in 1..=10i64 {
            let s: i64 = c.query_one("SELECT nextval('s')", &[]).await.unwrap().get(0);
            let id: i64 = c.query_one("INSERT INTO t (v) VALUES (1) RETURNING id", &[]).await.unwrap().get(0);
            assert_eq!((s, id), (i, i));
        }
        let open = server.connect("postgres").await;
        open.batch_execute("BEGIN; ALTER SEQUENCE s RESTART WITH 1; TRUNCATE t RESTART IDENTITY").await.unwrap();
        open
    });
    server.kill();
    drop(open);
    server.restart().expect("restart after the crash");
    runtime.block_on(async {
        let c = server.connect("postgres").await;
        let n: i64 = c.query_one("SELECT count(*) FROM t", &[]).await.unwrap().get(0);
        assert_eq!(n, 10, "the uncommitted TRUNCATE did not happen");
        let s: i64 = c.query_one("SELECT nextval('s')", &[]).await.unwrap().get(0);
        assert!(s > 10, "nextval('s') handed out {s} again after an uncommitted RESTART and a crash");
        let id: i64 = c.query_one("INSERT INTO t (v) VALUES (2) RETURNING id", &[]).await.unwrap().get(0);
        assert!(id > 10, "t's bigserial handed out {id} again after an uncommitted RESTART IDENTITY and a crash");
        // A committed restart stays, a rolled-back one does not.
        c.batch_execute("ALTER SEQUENCE s RESTART WITH 2").await.unwrap();
        c.batch_execute("BEGIN; ALTER SEQUENCE s RESTART WITH 1; ROLLBACK").await.unwrap();
    });
    server.restart().expect("restart after the second crash");
    runtime.block_on(async {
        let c = server.connect("postgres").await;
        let s: i64 = c.query_one("SELECT nextval('s')", &[]).await.unwrap().get(0);
        assert_eq!(s, 2, "the committed RESTART WITH 2 survives the crash");
    });
}
