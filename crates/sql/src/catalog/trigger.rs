//! DML triggers: the pg_trigger rows CREATE TRIGGER stores with their
//! table (a table's triggers live in its `Relation`, so dropping the table
//! drops them and every plan that writes it sees them).

use serde::{Deserialize, Serialize};
use tusk_types::Oid;

/// tgtype bits, as PostgreSQL's pg_trigger.h defines them.
pub const TRIGGER_TYPE_ROW: i16 = 1 << 0;
pub const TRIGGER_TYPE_BEFORE: i16 = 1 << 1;
pub const TRIGGER_TYPE_INSERT: i16 = 1 << 2;
pub const TRIGGER_TYPE_DELETE: i16 = 1 << 3;
pub const TRIGGER_TYPE_UPDATE: i16 = 1 << 4;
pub const TRIGGER_TYPE_TRUNCATE: i16 = 1 << 5;
pub const TRIGGER_TYPE_INSTEAD: i16 = 1 << 6;

/// When a trigger fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerTiming {
    Before,
    After,
    InsteadOf,
}

impl TriggerTiming {
    pub fn keyword(self) -> &'static str {
        match self {
            TriggerTiming::Before => "BEFORE",
            TriggerTiming::After => "AFTER",
            TriggerTiming::InsteadOf => "INSTEAD OF",
        }
    }
}

/// The events of a statement that fire triggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerEvent {
    Insert,
    Update,
    Delete,
    Truncate,
}

impl TriggerEvent {
    pub fn bit(self) -> i16 {
        match self {
            TriggerEvent::Insert => TRIGGER_TYPE_INSERT,
            TriggerEvent::Update => TRIGGER_TYPE_UPDATE,
            TriggerEvent::Delete => TRIGGER_TYPE_DELETE,
            TriggerEvent::Truncate => TRIGGER_TYPE_TRUNCATE,
        }
    }

    pub fn keyword(self) -> &'static str {
        match self {
            TriggerEvent::Insert => "INSERT",
            TriggerEvent::Update => "UPDATE",
            TriggerEvent::Delete => "DELETE",
            TriggerEvent::Truncate => "TRUNCATE",
        }
    }
}

/// One pg_trigger row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Trigger {
    pub oid: Oid,
    pub name: String,
    /// tgfoid.
    pub function: Oid,
    /// tgtype: the TRIGGER_TYPE_* bits.
    pub tgtype: i16,
    /// tgenabled: 'O' origin and local, 'D' disabled, 'R' replica, 'A' always.
    pub enabled: char,
    /// A constraint trigger (CREATE CONSTRAINT TRIGGER): its pg_constraint
    /// OID is `constraint`.
    pub constraint: Oid,
    /// FROM referenced_table of a constraint trigger.
    pub constrrel: Oid,
    pub deferrable: bool,
    pub initdeferred: bool,
    /// UPDATE OF columns (attribute numbers).
    pub columns: Vec<i16>,
    /// The arguments, as strings.
    pub args: Vec<String>,
    /// WHEN condition as SQL text (referencing OLD and NEW).
    pub when: Option<String>,
    pub old_table: Option<String>,
    pub new_table: Option<String>,
}

impl Trigger {
    pub fn is_row(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_ROW != 0
    }

    pub fn timing(&self) -> TriggerTiming {
        if self.tgtype & TRIGGER_TYPE_INSTEAD != 0 {
            TriggerTiming::InsteadOf
        } else if self.tgtype & TRIGGER_TYPE_BEFORE != 0 {
            TriggerTiming::Before
        } else {
            TriggerTiming::After
        }
    }

    pub fn fires_on(&self, event: TriggerEvent) -> bool {
        self.tgtype & event.bit() != 0
    }

    /// Whether the trigger is active under `session_replication_role`
    /// ("origin", "replica" or "local"), as tgenabled says.
    pub fn enabled_for(&self, replication_role: &str) -> bool {
        match self.enabled {
            'D' => false,
            'A' => true,
            'R' => replication_role == "replica",
            _ => replication_role != "replica",
        }
    }
}
