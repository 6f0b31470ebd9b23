"""psycopg 3 type round trips, in text and in binary format.

For every type the suite covers, a Python value goes to the server as a
parameter and comes back as a result, once with text-format parameters and
a text cursor and once with binary-format parameters (`%b`) and a binary
cursor (`binary=True`); the server's text output of the value (`::text`)
must also be PostgreSQL 15's, byte for byte. The same values are stored in
a table and read back both ways, and literals the server parses itself are
read in both formats, so each type's input, output, receive and send
functions are all exercised. Every expectation is PostgreSQL 15's answer.
"""

import math
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from psycopg.adapt import Loader
from psycopg.types.json import Json, Jsonb

from conftest import recreate

UTC = timezone.utc
PARIS_WINTER = timezone(timedelta(hours=1))


class Case:
    """One value of one type: what is sent, what comes back, and its text form."""

    def __init__(self, name, sql_type, sent, text, received=None):
        self.name = name
        self.sql_type = sql_type
        self.sent = sent
        self.text = text  # PostgreSQL 15's output function's answer, as sent on the wire
        self.received = sent if received is None else received
        if isinstance(self.received, (Json, Jsonb)):
            self.received = self.received.obj


JSON_DOC = {"b": [1, 2.5, None, True], "a": "x\u00e9", "nested": {"k": "v"}}

CASES = [
    Case("bool_true", "boolean", True, "t"),
    Case("bool_false", "boolean", False, "f"),
    Case("int2", "smallint", -32768, "-32768"),
    Case("int4", "integer", 2147483647, "2147483647"),
    Case("int8", "bigint", -9223372036854775808, "-9223372036854775808"),
    Case("float4", "real", -0.15625, "-0.15625"),
    Case("float4_exp", "real", 16777216.0, "1.6777216e+07"),
    Case("float8", "double precision", 0.1, "0.1"),
    Case("float8_exp", "double precision", 2.5e-300, "2.5e-300"),
    Case("float8_inf", "double precision", float("inf"), "Infinity"),
    Case("float8_nan", "double precision", float("nan"), "NaN"),
    Case("numeric_big", "numeric", Decimal("12345678901234567890.123456789012345678901234567890"),
         "12345678901234567890.123456789012345678901234567890"),
    Case("numeric_tiny", "numeric", Decimal("-0.000000000000000000001"), "-0.000000000000000000001"),
    Case("numeric_int", "numeric", Decimal("100000000000000000000000000000000000000"),
         "100000000000000000000000000000000000000"),
    Case("numeric_scale", "numeric(10,4)", Decimal("3.1400"), "3.1400"),
    Case("numeric_zero_scale", "numeric", Decimal("0.00"), "0.00"),
    Case("numeric_nan", "numeric", Decimal("NaN"), "NaN"),
    Case("text", "text", "h\u00e9llo w\u00f6rld \u2713 'single' \"double\" back\\slash\ttab",
         "h\u00e9llo w\u00f6rld \u2713 'single' \"double\" back\\slash\ttab"),
    Case("text_empty", "text", "", ""),
    Case("varchar", "varchar(10)", "abc", "abc"),
    Case("char", "char(5)", "ab", "ab   ", "ab   "),
    Case("bytea", "bytea", b"\x00\x01\xfe\xff'\\", "\\x0001feff275c"),
    Case("bytea_empty", "bytea", b"", "\\x"),
    Case("date", "date", date(2024, 2, 29), "2024-02-29"),
    Case("date_old", "date", date(1, 1, 1), "0001-01-01"),
    Case("time", "time", time(13, 4, 5, 123456), "13:04:05.123456"),
    Case("time_midnight", "time", time(0, 0), "00:00:00"),
    Case("timestamp", "timestamp", datetime(2024, 3, 5, 13, 4, 5, 123456), "2024-03-05 13:04:05.123456"),
    Case("timestamp_1999", "timestamp", datetime(1999, 12, 31, 23, 59, 59), "1999-12-31 23:59:59"),
    # The session runs with TimeZone 'Europe/Paris' (see the `tz_conn` fixture).
    Case("timestamptz", "timestamp with time zone", datetime(2024, 3, 5, 12, 4, 5, 123456, tzinfo=UTC),
         "2024-03-05 13:04:05.123456+01", datetime(2024, 3, 5, 13, 4, 5, 123456, tzinfo=PARIS_WINTER)),
    Case("interval", "interval", timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=7),
         "3 days 04:05:06.000007"),
    # psycopg sends timedelta(-1, 86398, 500000) as "-1 days 86398.5 seconds".
    Case("interval_negative", "interval", timedelta(microseconds=-1500000), "-1 days +23:59:58.5"),
    Case("uuid", "uuid", uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    Case("oid", "oid", 4294967295, "4294967295"),
    # json keeps the text as sent (Python's json.dumps escapes non-ASCII); jsonb normalizes it.
    Case("json", "json", Json(JSON_DOC), '{"b": [1, 2.5, null, true], "a": "x\\u00e9", "nested": {"k": "v"}}'),
    Case("jsonb", "jsonb", Jsonb(JSON_DOC), '{"a": "x\u00e9", "b": [1, 2.5, null, true], "nested": {"k": "v"}}'),
    Case("int4_array", "integer[]", [1, None, -3], "{1,NULL,-3}"),
    Case("int4_array_2d", "integer[]", [[1, 2], [3, 4]], "{{1,2},{3,4}}"),
    Case("int8_array", "bigint[]", [9223372036854775807, 0], "{9223372036854775807,0}"),
    Case("text_array", "text[]", ["a", "b c", None, 'q"uote', "", "NULL"],
         '{a,"b c",NULL,"q\\"uote","","NULL"}'),
    Case("int4_array_empty", "integer[]", [], "{}"),
]

IDS = [c.name for c in CASES]
FORMATS = ["text", "binary"]


class RawText(Loader):
    """Loads a text-format value as the str the server sent, unparsed."""

    def load(self, data):
        return bytes(data).decode()


def raw_text_cursor(conn, description):
    """A text cursor that returns the columns of `description` as raw server text."""
    cur = conn.cursor()
    for column in description:
        cur.adapters.register_loader(column.type_code, RawText)
    return cur


def assert_same(got, expected, what):
    """Equality that also checks the Python type, NaN, and a Decimal's scale."""
    assert type(got) is type(expected), f"{what}: got {got!r} ({type(got).__name__}), expected {expected!r}"
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got), what
    elif isinstance(expected, Decimal):
        assert str(got) == str(expected), f"{what}: got {got!r}, expected {expected!r}"
    elif isinstance(expected, datetime) and expected.tzinfo is not None:
        assert got == expected and got.utcoffset() == expected.utcoffset(), f"{what}: got {got!r}, expected {expected!r}"
    else:
        assert got == expected, f"{what}: got {got!r}, expected {expected!r}"


@pytest.fixture
def tz_conn(conn):
    """A connection whose session time zone makes timestamptz output deterministic."""
    conn.execute("SET TimeZone TO 'Europe/Paris'")
    conn.commit()
    return conn


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_parameter_round_trip(tz_conn, case, fmt):
    placeholder = "%t" if fmt == "text" else "%b"
    cur = tz_conn.cursor(binary=(fmt == "binary"))
    query = f"SELECT {placeholder}::{case.sql_type}"
    cur.execute(query, [case.sent])
    assert_same(cur.fetchone()[0], case.received, f"{case.name} as {fmt}")
    raw = raw_text_cursor(tz_conn, cur.description)
    assert raw.execute(query, [case.sent]).fetchone()[0] == case.text


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_literal_read_back(tz_conn, case, fmt):
    # The server parses its own text output back into the same value.
    literal = "'" + case.text.replace("'", "''") + "'"
    cur = tz_conn.cursor(binary=(fmt == "binary"))
    cur.execute(f"SELECT {literal}::{case.sql_type}")
    assert_same(cur.fetchone()[0], case.received, f"{case.name} literal as {fmt}")
    assert cur.description[0].type_code == tz_conn.execute(
        f"SELECT pg_typeof({literal}::{case.sql_type})::regtype::oid").fetchone()[0]


def test_table_round_trip(tz_conn):
    conn = tz_conn
    columns = ", ".join(f"{c.name} {c.sql_type}" for c in CASES)
    recreate(conn, "py_types", f"id integer PRIMARY KEY, {columns}")
    names = ", ".join(c.name for c in CASES)
    for row_id, placeholder in ((1, "%t"), (2, "%b")):
        values = ", ".join([placeholder] * (len(CASES) + 1))
        conn.execute(f"INSERT INTO py_types (id, {names}) VALUES ({values})",
                     [row_id] + [c.sent for c in CASES])
    conn.commit()
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        cur.execute(f"SELECT {names} FROM py_types ORDER BY id")
        rows = cur.fetchall()
        assert len(rows) == 2
        for row in rows:
            for case, value in zip(CASES, row):
                assert_same(value, case.received, f"{case.name} from a table, binary={binary}")
    raw = raw_text_cursor(conn, cur.description)
    for row in raw.execute(f"SELECT {names} FROM py_types ORDER BY id").fetchall():
        assert list(row) == [c.text for c in CASES]
    conn.execute("DROP TABLE py_types")
    conn.commit()


def test_text_outputs_pg15(conn):
    # Values psycopg can't hold exactly in a Python object: check the server's text.
    cur = conn.execute(
        "SELECT '1 year 2 mons 3 days 04:05:06'::interval::text,"
        " '-1 mons +2 days -00:00:03'::interval::text,"
        " 0.1::real::text,"
        " 1e-7::float8::text,"
        " 123456789012345678::float8::text,"
        " 'infinity'::timestamp::text,"
        " '-infinity'::date::text,"
        " ARRAY[['a', NULL], ['b c', '\"']]::text,"
        " '{\"a\": 1, \"a\": 2}'::jsonb::text,"
        " 12.500::numeric(6,2)::text,"
        " (2::numeric / 3)::text"
    )
    assert cur.fetchone() == (
        "1 year 2 mons 3 days 04:05:06",
        "-1 mons +2 days -00:00:03",
        "0.1",
        "1e-07",
        "1.2345678901234568e+17",
        "infinity",
        "-infinity",
        '{{a,NULL},{"b c","\\""}}',
        '{"a": 2}',
        "12.50",
        "0.66666666666666666667",
    )


def test_float4_precision_by_format(conn):
    # A real holding 0.1 is 0.100000001490116...: text output rounds it to
    # the shortest string that reads back as the same float4, binary carries
    # the exact float4.
    assert conn.execute("SELECT 0.1::real").fetchone() == (0.1,)
    assert conn.cursor(binary=True).execute("SELECT 0.1::real").fetchone() == (0.10000000149011612,)
