//! Object identifiers of PostgreSQL's built-in types, as in `pg_type.dat`.
//! Clients hard-code these (they come back in RowDescription), so they are
//! PostgreSQL's values, never Tusk's own.

pub type Oid = u32;

pub const INVALID_OID: Oid = 0;
pub const BOOL: Oid = 16;
pub const BYTEA: Oid = 17;
pub const CHAR: Oid = 18;
pub const NAME: Oid = 19;
pub const INT8: Oid = 20;
pub const INT2: Oid = 21;
pub const INT2VECTOR: Oid = 22;
pub const INT4: Oid = 23;
pub const REGPROC: Oid = 24;
pub const TEXT: Oid = 25;
pub const OID: Oid = 26;
pub const TID: Oid = 27;
pub const XID: Oid = 28;
pub const CID: Oid = 29;
pub const OIDVECTOR: Oid = 30;
pub const JSON: Oid = 114;
pub const XML: Oid = 142;
pub const PG_NODE_TREE: Oid = 194;
pub const FLOAT4: Oid = 700;
pub const FLOAT8: Oid = 701;
pub const UNKNOWN: Oid = 705;
pub const MONEY: Oid = 790;
pub const INET: Oid = 869;
pub const CIDR: Oid = 650;
pub const MACADDR: Oid = 829;
pub const MACADDR8: Oid = 774;
pub const ACLITEM: Oid = 1033;
pub const BPCHAR: Oid = 1042;
pub const VARCHAR: Oid = 1043;
pub const DATE: Oid = 1082;
pub const TIME: Oid = 1083;
pub const TIMESTAMP: Oid = 1114;
pub const TIMESTAMPTZ: Oid = 1184;
pub const INTERVAL: Oid = 1186;
pub const TIMETZ: Oid = 1266;
pub const BIT: Oid = 1560;
pub const VARBIT: Oid = 1562;
pub const NUMERIC: Oid = 1700;
pub const REFCURSOR: Oid = 1790;
pub const REGPROCEDURE: Oid = 2202;
pub const REGOPER: Oid = 2203;
pub const REGOPERATOR: Oid = 2204;
pub const REGCLASS: Oid = 2205;
pub const REGTYPE: Oid = 2206;
pub const REGROLE: Oid = 4096;
pub const REGNAMESPACE: Oid = 4089;
pub const UUID: Oid = 2950;
pub const JSONB: Oid = 3802;
pub const JSONPATH: Oid = 4072;
pub const PG_LSN: Oid = 3220;

// Pseudo-types.
pub const RECORD: Oid = 2249;
pub const CSTRING: Oid = 2275;
pub const ANY: Oid = 2276;
pub const ANYARRAY: Oid = 2277;
pub const VOID: Oid = 2278;
pub const TRIGGER: Oid = 2279;
pub const INTERNAL: Oid = 2281;
pub const ANYELEMENT: Oid = 2283;
pub const ANYNONARRAY: Oid = 2776;
pub const ANYENUM: Oid = 3500;
pub const ANYRANGE: Oid = 3831;
pub const ANYCOMPATIBLE: Oid = 5077;
pub const ANYCOMPATIBLEARRAY: Oid = 5078;
pub const ANYCOMPATIBLENONARRAY: Oid = 5079;
pub const ANYCOMPATIBLERANGE: Oid = 5080;
pub const ANYMULTIRANGE: Oid = 4537;
pub const ANYCOMPATIBLEMULTIRANGE: Oid = 4538;

// Array types.
pub const BOOL_ARRAY: Oid = 1000;
pub const BYTEA_ARRAY: Oid = 1001;
pub const CHAR_ARRAY: Oid = 1002;
pub const NAME_ARRAY: Oid = 1003;
pub const INT2_ARRAY: Oid = 1005;
pub const INT4_ARRAY: Oid = 1007;
pub const TEXT_ARRAY: Oid = 1009;
pub const BPCHAR_ARRAY: Oid = 1014;
pub const VARCHAR_ARRAY: Oid = 1015;
pub const INT8_ARRAY: Oid = 1016;
pub const FLOAT4_ARRAY: Oid = 1021;
pub const FLOAT8_ARRAY: Oid = 1022;
pub const OID_ARRAY: Oid = 1028;
pub const TIMESTAMP_ARRAY: Oid = 1115;
pub const DATE_ARRAY: Oid = 1182;
pub const TIME_ARRAY: Oid = 1183;
pub const TIMESTAMPTZ_ARRAY: Oid = 1185;
pub const INTERVAL_ARRAY: Oid = 1187;
pub const NUMERIC_ARRAY: Oid = 1231;
pub const TIMETZ_ARRAY: Oid = 1270;
pub const UUID_ARRAY: Oid = 2951;
pub const JSON_ARRAY: Oid = 199;
pub const JSONB_ARRAY: Oid = 3807;
pub const RECORD_ARRAY: Oid = 2287;
pub const REGCLASS_ARRAY: Oid = 2210;
pub const REGTYPE_ARRAY: Oid = 2211;

/// First OID handed to user objects (`FirstNormalObjectId`).
pub const FIRST_NORMAL_OBJECT_ID: Oid = 16384;

/// The element type of a built-in array type, or None.
pub fn array_element(array: Oid) -> Option<Oid> {
    Some(match array {
        BOOL_ARRAY => BOOL,
        BYTEA_ARRAY => BYTEA,
        CHAR_ARRAY => CHAR,
        NAME_ARRAY => NAME,
        INT2_ARRAY => INT2,
        INT4_ARRAY => INT4,
        TEXT_ARRAY => TEXT,
        BPCHAR_ARRAY => BPCHAR,
        VARCHAR_ARRAY => VARCHAR,
        INT8_ARRAY => INT8,
        FLOAT4_ARRAY => FLOAT4,
        FLOAT8_ARRAY => FLOAT8,
        OID_ARRAY => OID,
        TIMESTAMP_ARRAY => TIMESTAMP,
        DATE_ARRAY => DATE,
        TIME_ARRAY => TIME,
        TIMESTAMPTZ_ARRAY => TIMESTAMPTZ,
        INTERVAL_ARRAY => INTERVAL,
        NUMERIC_ARRAY => NUMERIC,
        TIMETZ_ARRAY => TIMETZ,
        UUID_ARRAY => UUID,
        JSON_ARRAY => JSON,
        JSONB_ARRAY => JSONB,
        RECORD_ARRAY => RECORD,
        REGCLASS_ARRAY => REGCLASS,
        REGTYPE_ARRAY => REGTYPE,
        INT2VECTOR => INT2,
        OIDVECTOR => OID,
        _ => return None,
    })
}

/// The array type whose elements are `elem`, or None.
pub fn array_of(elem: Oid) -> Option<Oid> {
    Some(match elem {
        BOOL => BOOL_ARRAY,
        BYTEA => BYTEA_ARRAY,
        CHAR => CHAR_ARRAY,
        NAME => NAME_ARRAY,
        INT2 => INT2_ARRAY,
        INT4 => INT4_ARRAY,
        TEXT => TEXT_ARRAY,
        BPCHAR => BPCHAR_ARRAY,
        VARCHAR => VARCHAR_ARRAY,
        INT8 => INT8_ARRAY,
        FLOAT4 => FLOAT4_ARRAY,
        FLOAT8 => FLOAT8_ARRAY,
        OID => OID_ARRAY,
        TIMESTAMP => TIMESTAMP_ARRAY,
        DATE => DATE_ARRAY,
        TIME => TIME_ARRAY,
        TIMESTAMPTZ => TIMESTAMPTZ_ARRAY,
        INTERVAL => INTERVAL_ARRAY,
        NUMERIC => NUMERIC_ARRAY,
        TIMETZ => TIMETZ_ARRAY,
        UUID => UUID_ARRAY,
        JSON => JSON_ARRAY,
        JSONB => JSONB_ARRAY,
        RECORD => RECORD_ARRAY,
        REGCLASS => REGCLASS_ARRAY,
        REGTYPE => REGTYPE_ARRAY,
        _ => return None,
    })
}

pub fn is_array(t: Oid) -> bool {
    array_element(t).is_some()
}
