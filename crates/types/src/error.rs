//! Errors as PostgreSQL reports them: a SQLSTATE, a primary message, and the
//! optional detail, hint and cursor position that travel in an ErrorResponse.
//!
//! Every layer of Tusk returns `PgResult<T>`; the protocol layer turns a
//! `PgError` into the wire message unchanged. Messages follow PostgreSQL 15's
//! wording exactly, because clients and users match on them.

use std::fmt;

/// SQLSTATE codes used by Tusk (PostgreSQL's `errcodes.txt`).
pub mod sqlstate {
    pub const SUCCESSFUL_COMPLETION: &str = "00000";
    pub const WARNING: &str = "01000";
    pub const NO_DATA: &str = "02000";
    pub const CONNECTION_EXCEPTION: &str = "08000";
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const CONNECTION_FAILURE: &str = "08006";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const CARDINALITY_VIOLATION: &str = "21000";
    pub const DATA_EXCEPTION: &str = "22000";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const NULL_VALUE_NOT_ALLOWED: &str = "22004";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const INVALID_TIME_ZONE_DISPLACEMENT_VALUE: &str = "22009";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const INVALID_ESCAPE_SEQUENCE: &str = "22025";
    pub const STRING_DATA_LENGTH_MISMATCH: &str = "22026";
    pub const INVALID_ARGUMENT_FOR_LOGARITHM: &str = "2201E";
    pub const INVALID_ARGUMENT_FOR_POWER_FUNCTION: &str = "2201F";
    pub const INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION: &str = "2201G";
    pub const INVALID_ROW_COUNT_IN_LIMIT_CLAUSE: &str = "2201W";
    pub const INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE: &str = "2201X";
    pub const INVALID_REGULAR_EXPRESSION: &str = "2201B";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const INTERVAL_FIELD_OVERFLOW: &str = "22015";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
    pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
    pub const UNTRANSLATABLE_CHARACTER: &str = "22P05";
    pub const NONSTANDARD_USE_OF_ESCAPE_CHARACTER: &str = "22P06";
    pub const ARRAY_SUBSCRIPT_ERROR: &str = "2202E";
    pub const FLOATING_POINT_EXCEPTION: &str = "22P01";
    pub const INTEGRITY_CONSTRAINT_VIOLATION: &str = "23000";
    pub const RESTRICT_VIOLATION: &str = "23001";
    pub const NOT_NULL_VIOLATION: &str = "23502";
    pub const FOREIGN_KEY_VIOLATION: &str = "23503";
    pub const UNIQUE_VIOLATION: &str = "23505";
    pub const CHECK_VIOLATION: &str = "23514";
    pub const INVALID_CURSOR_STATE: &str = "24000";
    pub const INVALID_TRANSACTION_STATE: &str = "25000";
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
    pub const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
    pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
    pub const INVALID_PASSWORD: &str = "28P01";
    pub const DEPENDENT_OBJECTS_STILL_EXIST: &str = "2BP01";
    pub const INVALID_TRANSACTION_TERMINATION: &str = "2D000";
    pub const INVALID_CURSOR_NAME: &str = "34000";
    pub const INVALID_SCHEMA_NAME: &str = "3F000";
    pub const INVALID_CATALOG_NAME: &str = "3D000";
    pub const SERIALIZATION_FAILURE: &str = "40001";
    pub const DEADLOCK_DETECTED: &str = "40P01";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
    pub const CANNOT_COERCE: &str = "42846";
    pub const GROUPING_ERROR: &str = "42803";
    pub const WINDOWING_ERROR: &str = "42P20";
    pub const INVALID_RECURSION: &str = "42P19";
    pub const INVALID_FOREIGN_KEY: &str = "42830";
    pub const INVALID_NAME: &str = "42602";
    pub const NAME_TOO_LONG: &str = "42622";
    pub const RESERVED_NAME: &str = "42939";
    pub const DATATYPE_MISMATCH: &str = "42804";
    pub const INDETERMINATE_DATATYPE: &str = "42P18";
    pub const COLLATION_MISMATCH: &str = "42P21";
    pub const WRONG_OBJECT_TYPE: &str = "42809";
    pub const UNDEFINED_COLUMN: &str = "42703";
    pub const UNDEFINED_FUNCTION: &str = "42883";
    pub const UNDEFINED_TABLE: &str = "42P01";
    pub const UNDEFINED_PARAMETER: &str = "42P02";
    pub const UNDEFINED_OBJECT: &str = "42704";
    pub const DUPLICATE_COLUMN: &str = "42701";
    pub const DUPLICATE_CURSOR: &str = "42P03";
    pub const DUPLICATE_DATABASE: &str = "42P04";
    pub const DUPLICATE_FUNCTION: &str = "42723";
    pub const DUPLICATE_PREPARED_STATEMENT: &str = "42P05";
    pub const DUPLICATE_SCHEMA: &str = "42P06";
    pub const DUPLICATE_TABLE: &str = "42P07";
    pub const DUPLICATE_ALIAS: &str = "42712";
    pub const DUPLICATE_OBJECT: &str = "42710";
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    pub const AMBIGUOUS_FUNCTION: &str = "42725";
    pub const AMBIGUOUS_PARAMETER: &str = "42P08";
    pub const AMBIGUOUS_ALIAS: &str = "42P09";
    pub const INVALID_COLUMN_REFERENCE: &str = "42P10";
    pub const INVALID_COLUMN_DEFINITION: &str = "42611";
    pub const INVALID_CURSOR_DEFINITION: &str = "42P11";
    pub const INVALID_DATABASE_DEFINITION: &str = "42P12";
    pub const INVALID_FUNCTION_DEFINITION: &str = "42P13";
    pub const INVALID_PREPARED_STATEMENT_DEFINITION: &str = "42P14";
    pub const INVALID_SCHEMA_DEFINITION: &str = "42P15";
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    pub const WITH_CHECK_OPTION_VIOLATION: &str = "44000";
    pub const INVALID_OBJECT_DEFINITION: &str = "42P17";
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: &str = "55000";
    pub const OBJECT_IN_USE: &str = "55006";
    pub const CANT_CHANGE_RUNTIME_PARAM: &str = "55P02";
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    pub const UNSAFE_NEW_ENUM_VALUE_USAGE: &str = "55P04";
    pub const INSUFFICIENT_RESOURCES: &str = "53000";
    pub const DISK_FULL: &str = "53100";
    pub const OUT_OF_MEMORY: &str = "53200";
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    pub const STATEMENT_TOO_COMPLEX: &str = "54001";
    pub const TOO_MANY_COLUMNS: &str = "54011";
    pub const TOO_MANY_ARGUMENTS: &str = "54023";
    pub const QUERY_CANCELED: &str = "57014";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const CRASH_SHUTDOWN: &str = "57P02";
    pub const CANNOT_CONNECT_NOW: &str = "57P03";
    pub const IO_ERROR: &str = "58030";
    pub const UNDEFINED_FILE: &str = "58P01";
    pub const CONFIG_FILE_ERROR: &str = "F0000";
    pub const RAISE_EXCEPTION: &str = "P0001";
    pub const INTERNAL_ERROR: &str = "XX000";
    pub const DATA_CORRUPTED: &str = "XX001";
    pub const INVALID_SEQUENCE_DEFINITION: &str = "42P17";
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: &str = "2200H";
    pub const GENERATED_ALWAYS: &str = "428C9";
    pub const INVALID_GRANT_OPERATION: &str = "0LP01";
    pub const INVALID_AUTHORIZATION: &str = "0P000";
    pub const SUBSTRING_ERROR: &str = "22011";
    pub const ZERO_LENGTH_CHARACTER_STRING: &str = "2200F";
    pub const INVALID_PRECEDING_OR_FOLLOWING_SIZE: &str = "22013";
    pub const INVALID_ARGUMENT_FOR_NTILE: &str = "22014";
    pub const INVALID_ARGUMENT_FOR_NTH_VALUE: &str = "22016";
    pub const INVALID_CHARACTER_VALUE_FOR_CAST: &str = "22018";
    pub const TRIM_ERROR: &str = "22027";
    pub const ARRAY_ELEMENT_ERROR: &str = "2202E";
    pub const INVALID_TABLESAMPLE_ARGUMENT: &str = "2202H";
    pub const NULL_VALUE_NO_INDICATOR_PARAMETER: &str = "22002";
    pub const INVALID_INDICATOR_PARAMETER_VALUE: &str = "22010";
    pub const INVALID_XML_CONTENT: &str = "2200N";
    pub const MOST_SPECIFIC_TYPE_MISMATCH: &str = "2200G";
    pub const INVALID_USE_OF_ESCAPE_CHARACTER: &str = "2200C";
    pub const UNDEFINED_DATABASE: &str = "3D000";
    pub const READ_ONLY_SQL_TRANSACTION_SAVEPOINT: &str = "3B001";
    pub const INVALID_SAVEPOINT_SPECIFICATION: &str = "3B001";
}

/// Message severities of ErrorResponse/NoticeResponse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
    Panic,
    Warning,
    Notice,
    Debug,
    Info,
    Log,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
            Severity::Panic => "PANIC",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
            Severity::Debug => "DEBUG",
            Severity::Info => "INFO",
            Severity::Log => "LOG",
        }
    }
}

/// An error (or notice) in PostgreSQL's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgError {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character offset into the statement text, as in the `P` field.
    pub position: Option<u32>,
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub constraint: Option<String>,
    pub datatype: Option<String>,
    /// Where the error happened, as PostgreSQL's CONTEXT lines ("COPY t, line 2").
    pub context: Option<String>,
    /// The statement the error's position points into when that is not
    /// the client's (the `q` and `p` fields: a query procedural code ran).
    pub internal: Option<Box<InternalQuery>>,
}

/// An internally generated query and the 1-based character offset of the
/// error in it, which psql shows as `LINE n:` and `QUERY:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalQuery {
    pub position: u32,
    pub query: String,
}

pub type PgResult<T> = Result<T, PgError>;

impl PgError {
    pub fn new(code: &'static str, message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            schema: None,
            table: None,
            column: None,
            constraint: None,
            datatype: None,
            context: None,
            internal: None,
        }
    }

    /// Moves the error's position into `query`, an internal query: the
    /// position no longer points into the client's statement.
    pub fn into_internal_query(mut self, query: impl Into<String>, shift: i64) -> PgError {
        if let Some(p) = self.position.take() {
            let position = (p as i64 + shift).max(1) as u32;
            self.internal = Some(Box::new(InternalQuery { position, query: query.into() }));
        }
        self
    }

    pub fn with_context(mut self, context: impl Into<String>) -> PgError {
        self.context = Some(context.into());
        self
    }

    pub fn notice(message: impl Into<String>) -> PgError {
        let mut e = PgError::new(sqlstate::SUCCESSFUL_COMPLETION, message);
        e.severity = Severity::Notice;
        e
    }

    pub fn warning(message: impl Into<String>) -> PgError {
        let mut e = PgError::new(sqlstate::WARNING, message);
        e.severity = Severity::Warning;
        e
    }

    pub fn fatal(code: &'static str, message: impl Into<String>) -> PgError {
        let mut e = PgError::new(code, message);
        e.severity = Severity::Fatal;
        e
    }

    /// A feature Tusk has not built yet: always 0A000, always naming it.
    pub fn unsupported(feature: impl fmt::Display) -> PgError {
        PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!("{feature} is not supported by Tusk yet"))
    }

    pub fn internal(message: impl Into<String>) -> PgError {
        PgError::new(sqlstate::INTERNAL_ERROR, message)
    }

    pub fn syntax(message: impl Into<String>) -> PgError {
        PgError::new(sqlstate::SYNTAX_ERROR, message)
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> PgError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_code(mut self, code: &'static str) -> PgError {
        self.code = code;
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> PgError {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the cursor position unless an inner layer already set a more precise one.
    pub fn with_position(mut self, position: Option<u32>) -> PgError {
        if self.position.is_none() {
            self.position = position;
        }
        self
    }

    pub fn with_table(mut self, schema: &str, table: &str) -> PgError {
        self.schema = Some(schema.to_string());
        self.table = Some(table.to_string());
        self
    }

    pub fn with_constraint(mut self, constraint: &str) -> PgError {
        self.constraint = Some(constraint.to_string());
        self
    }

    pub fn with_column(mut self, column: &str) -> PgError {
        self.column = Some(column.to_string());
        self
    }

    pub fn with_datatype(mut self, datatype: &str) -> PgError {
        self.datatype = Some(datatype.to_string());
        self
    }

    pub fn is_error(&self) -> bool {
        matches!(self.severity, Severity::Error | Severity::Fatal | Severity::Panic)
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.severity.as_str(), self.message, self.code)
    }
}

impl std::error::Error for PgError {}

/// `pg_err!(CODE, "format", args...)` builds a `PgError` with a `sqlstate` constant.
#[macro_export]
macro_rules! pg_err {
    ($code:ident, $($arg:tt)*) => {
        $crate::error::PgError::new($crate::error::sqlstate::$code, format!($($arg)*))
    };
}

/// `bail!(CODE, "format", args...)` returns that error from the current function.
#[macro_export]
macro_rules! bail {
    ($code:ident, $($arg:tt)*) => {
        return Err($crate::pg_err!($code, $($arg)*))
    };
}

thread_local! {
    /// The session's max_stack_depth setting in kB, for the HINT of
    /// `stack_depth_error` (sessions run one per thread).
    static MAX_STACK_DEPTH_KB: std::cell::Cell<u64> = const { std::cell::Cell::new(2048) };
}

/// Records the calling thread's session's max_stack_depth (kB).
pub fn set_max_stack_depth_kb(kb: u64) {
    MAX_STACK_DEPTH_KB.with(|c| c.set(kb));
}

/// PostgreSQL's check_stack_depth() error.
pub fn stack_depth_error() -> PgError {
    let kb = MAX_STACK_DEPTH_KB.with(|c| c.get());
    PgError::new(sqlstate::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(format!(
        "Increase the configuration parameter \"max_stack_depth\" (currently {kb}kB), after ensuring the platform's stack depth limit is adequate."
    ))
}
