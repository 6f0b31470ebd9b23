#!/usr/bin/env python3
"""Records PostgreSQL 15's answers for the binary COPY tests.

Run by scripts/record-copy-binary.sh, which starts a throwaway PostgreSQL 15
cluster and passes its connection string as the only argument. Writes, under
tests/copy/:

- binary_types.bin: `COPY copy_types TO STDOUT (FORMAT binary)` of the table
  that binary_types.sql creates and fills (every type's send format);
- binary_types.out: the text rendering (`COPY ... TO STDOUT`, TimeZone UTC)
  of that table after it is emptied and loaded again from binary_types.bin
  with `COPY ... FROM STDIN (FORMAT binary)`;
- binary_cases.txt: the cases below (setup statements, a COPY, the bytes sent
  to it) with what PostgreSQL answered: the command tag or the error
  (SQLSTATE, message, detail, context), the bytes of a COPY TO STDOUT, and
  the text output of a check query;
- binary_responses.txt: the raw CopyInResponse/CopyOutResponse (format codes)
  of a few COPY statements.

crates/tusk/tests/copy_binary.rs runs the same against Tusk and compares.
"""

import struct
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "copy"

SIG = b"PGCOPY\n\xff\r\n\x00"
TRAILER = struct.pack("!h", -1)


def header(flags=0, ext=b""):
    return SIG + struct.pack("!i", flags) + struct.pack("!i", len(ext)) + ext


def tup(*fields):
    b = struct.pack("!h", len(fields))
    for f in fields:
        if f is None:
            b += struct.pack("!i", -1)
        else:
            b += struct.pack("!i", len(f)) + f
    return b


def i2(v):
    return struct.pack("!h", v)


def i4(v):
    return struct.pack("!i", v)


def i8(v):
    return struct.pack("!q", v)


def txt(s):
    return s.encode()


def numeric(ndigits_words, weight, sign, dscale):
    return struct.pack("!hhHh", len(ndigits_words), weight, sign, dscale) + b"".join(
        struct.pack("!h", d) for d in ndigits_words
    )


def int4_array(elems, elem_oid=23, flags=None):
    has_null = any(e is None for e in elems)
    b = struct.pack("!iiI", 1, has_null if flags is None else flags, elem_oid)
    b += struct.pack("!ii", len(elems), 1)
    for e in elems:
        if e is None:
            b += struct.pack("!i", -1)
        elif elem_oid == 20:
            b += struct.pack("!i", 8) + i8(e)
        else:
            b += struct.pack("!i", 4) + i4(e)
    return b


T_AB = ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int, b text)"]
CHECK_AB = "COPY (SELECT * FROM t ORDER BY a) TO STDOUT"
VIEW = ["DROP VIEW IF EXISTS v", "DROP TABLE IF EXISTS tv", "CREATE TABLE tv (a int, b text)", "CREATE VIEW v AS SELECT * FROM tv"]
CHECK_TV = "COPY (SELECT * FROM tv ORDER BY a) TO STDOUT"
GOOD = header() + tup(i4(1), txt("one")) + tup(i4(2), None) + TRAILER

# (name, setup statements, COPY statement, bytes sent (None: none), check query)
CASES = [
    # Loads that work.
    ("basic", T_AB, "COPY t FROM STDIN (FORMAT binary)", GOOD, CHECK_AB),
    ("with_binary", T_AB, "COPY t FROM STDIN WITH BINARY", GOOD, CHECK_AB),
    ("binary_keyword", T_AB, "COPY t FROM STDIN BINARY", GOOD, CHECK_AB),
    ("binary_before_table", T_AB, "COPY BINARY t FROM STDIN", GOOD, CHECK_AB),
    ("format_binary_upper", T_AB, "COPY t FROM STDIN (FORMAT 'binary', HEADER false, ENCODING 'UTF8')", GOOD, CHECK_AB),
    ("no_trailer", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), txt("x")), CHECK_AB),
    ("header_only", T_AB, "COPY t FROM STDIN (FORMAT binary)", header(), CHECK_AB),
    ("header_and_trailer", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + TRAILER, CHECK_AB),
    ("partial_field_count_at_end", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), None) + b"\x00", CHECK_AB),
    ("noncritical_flags", T_AB, "COPY t FROM STDIN (FORMAT binary)", header(flags=0xFFFF) + tup(i4(1), txt("f")) + TRAILER, CHECK_AB),
    ("header_extension", T_AB, "COPY t FROM STDIN (FORMAT binary)", header(ext=b"extension data") + tup(i4(1), txt("e")) + TRAILER, CHECK_AB),
    ("column_list_and_defaults",
     ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int, b text DEFAULT 'dflt', c int DEFAULT 7)"],
     "COPY t (c, a) FROM STDIN (FORMAT binary)",
     header() + tup(i4(30), i4(3)) + tup(None, i4(4)) + TRAILER,
     "COPY (SELECT * FROM t ORDER BY a) TO STDOUT"),
    ("typmods",
     ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a numeric(5,2), b char(4), c timestamp(0), d varchar(5))"],
     "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(numeric([1, 50], 0, 0, 4), txt("ab"), i8(1_500_000), txt("abc  ")) + TRAILER,
     "COPY t TO STDOUT"),
    ("bool_nonzero", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a bool)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(b"\x02") + tup(b"\x00") + TRAILER, "COPY t TO STDOUT"),
    ("arrays", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int[])"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(int4_array([1, None, 3])) + tup(int4_array([])) + TRAILER, "COPY t TO STDOUT"),
    # The file header.
    ("empty_input", T_AB, "COPY t FROM STDIN (FORMAT binary)", b"", CHECK_AB),
    ("text_data", T_AB, "COPY t FROM STDIN (FORMAT binary)", b"1\tone\n2\ttwo\n", CHECK_AB),
    ("bad_signature", T_AB, "COPY t FROM STDIN (FORMAT binary)", b"PGCOPY\n\xff\r\n\x01" + GOOD[11:], CHECK_AB),
    ("short_signature", T_AB, "COPY t FROM STDIN (FORMAT binary)", b"PGCOPY", CHECK_AB),
    ("missing_flags", T_AB, "COPY t FROM STDIN (FORMAT binary)", SIG + b"\x00\x00", CHECK_AB),
    ("with_oids", T_AB, "COPY t FROM STDIN (FORMAT binary)", header(flags=1 << 16) + TRAILER, CHECK_AB),
    ("critical_flags", T_AB, "COPY t FROM STDIN (FORMAT binary)", header(flags=1 << 17) + TRAILER, CHECK_AB),
    ("missing_length", T_AB, "COPY t FROM STDIN (FORMAT binary)", SIG + i4(0) + b"\x00", CHECK_AB),
    ("negative_length", T_AB, "COPY t FROM STDIN (FORMAT binary)", SIG + i4(0) + i4(-1) + TRAILER, CHECK_AB),
    ("wrong_length", T_AB, "COPY t FROM STDIN (FORMAT binary)", SIG + i4(0) + i4(10) + b"abc", CHECK_AB),
    # Tuples.
    ("too_few_fields", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1)) + TRAILER, CHECK_AB),
    ("too_many_fields", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), txt("a"), txt("b")) + TRAILER, CHECK_AB),
    ("bad_second_row", T_AB, "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i4(1), txt("a")) + struct.pack("!h", 0) + TRAILER, CHECK_AB),
    ("bad_row_after_many", T_AB, "COPY t FROM STDIN (FORMAT binary)",
     header() + b"".join(tup(i4(i), None) for i in range(1, 1006)) + tup(i4(0)) + TRAILER, CHECK_AB),
    ("truncated_field", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(4) + b"\x00\x00", CHECK_AB),
    ("truncated_size", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(4) + i4(1) + b"\x00\x00", CHECK_AB),
    ("truncated_after_count", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), None) + i2(2), CHECK_AB),
    ("truncated_second_field", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(4) + i4(1) + i4(10) + b"abc", CHECK_AB),
    ("error_before_truncation", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(3) + b"abc" + i4(10) + b"abc", CHECK_AB),
    ("invalid_field_size", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(-2) + TRAILER, CHECK_AB),
    ("error_before_invalid_size", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + i2(2) + i4(5) + b"12345" + i4(-5), CHECK_AB),
    ("data_after_trailer", T_AB, "COPY t FROM STDIN (FORMAT binary)", GOOD + b"\x00", CHECK_AB),
    ("trailer_twice", T_AB, "COPY t FROM STDIN (FORMAT binary)", GOOD + TRAILER, CHECK_AB),
    # Receive functions.
    ("int4_too_long", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i8(1), None) + TRAILER, CHECK_AB),
    ("int4_too_short", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i2(1), None) + TRAILER, CHECK_AB),
    ("int4_empty", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(b"", None) + TRAILER, CHECK_AB),
    ("bad_utf8", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), b"ok \xff") + TRAILER, CHECK_AB),
    ("bad_utf8_sequence", T_AB, "COPY t FROM STDIN (FORMAT binary)", header() + tup(i4(1), b"\xe2\x82") + TRAILER, CHECK_AB),
    ("varchar_too_long", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int, b varchar(3))"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i4(1), txt("abcd")) + TRAILER, CHECK_AB),
    ("numeric_bad_sign", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a numeric)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(numeric([1], 0, 0x1234, 0)) + TRAILER, "COPY t TO STDOUT"),
    ("numeric_overflow", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a numeric(3,1))"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(numeric([1234], 0, 0, 0)) + TRAILER, "COPY t TO STDOUT"),
    ("array_wrong_element_type", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int[])"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(int4_array([1, 2], elem_oid=20)) + TRAILER, "COPY t TO STDOUT"),
    ("array_bad_flags", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int[])"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(int4_array([1], flags=2)) + TRAILER, "COPY t TO STDOUT"),
    ("date_too_short", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a date)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i2(1)) + TRAILER, "COPY t TO STDOUT"),
    ("uuid_too_long", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a uuid)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(b"\x01" * 17) + TRAILER, "COPY t TO STDOUT"),
    # Constraints: nothing of a failed COPY stays.
    ("not_null", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int NOT NULL, b text)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i4(1), txt("a")) + tup(None, txt("b")) + TRAILER, CHECK_AB),
    ("duplicate_key", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int PRIMARY KEY, b text)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i4(1), txt("a")) + tup(i4(2), txt("b")) + tup(i4(1), txt("c")) + TRAILER, CHECK_AB),
    ("check_constraint", ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int CHECK (a > 0), b text)"], "COPY t FROM STDIN (FORMAT binary)",
     header() + tup(i4(1), txt("a")) + tup(i4(-1), txt("b")) + TRAILER, CHECK_AB),
    # Errors about the table come after the file header is read.
    ("view", VIEW, "COPY v FROM STDIN (FORMAT binary)", GOOD, CHECK_TV),
    ("view_bad_header", VIEW, "COPY v FROM STDIN (FORMAT binary)", b"garbage", CHECK_TV),
    ("view_text", VIEW, "COPY v FROM STDIN", b"1\tx\n", CHECK_TV),
    ("view_to", VIEW, "COPY v TO STDOUT (FORMAT binary)", None, None),
    ("freeze", T_AB, "COPY t FROM STDIN (FORMAT binary, FREEZE)", GOOD, CHECK_AB),
    ("freeze_bad_header", T_AB, "COPY t FROM STDIN (FORMAT binary, FREEZE)", SIG, CHECK_AB),
    # Options that the binary format refuses.
    ("delimiter", T_AB, "COPY t FROM STDIN (FORMAT binary, DELIMITER ',')", None, None),
    ("null", T_AB, "COPY t TO STDOUT (FORMAT binary, NULL 'x')", None, None),
    ("header", T_AB, "COPY t FROM STDIN (FORMAT binary, HEADER)", None, None),
    ("header_to", T_AB, "COPY t TO STDOUT (FORMAT binary, HEADER true)", None, None),
    ("header_match", T_AB, "COPY t FROM STDIN (FORMAT binary, HEADER match)", None, None),
    ("quote", T_AB, "COPY t FROM STDIN (FORMAT binary, QUOTE '\"')", None, None),
    ("escape", T_AB, "COPY t TO STDOUT (FORMAT binary, ESCAPE '\\')", None, None),
    ("force_quote", T_AB, "COPY t TO STDOUT (FORMAT binary, FORCE_QUOTE *)", None, None),
    ("force_not_null", T_AB, "COPY t FROM STDIN (FORMAT binary, FORCE_NOT_NULL (b))", None, None),
    ("force_null", T_AB, "COPY t FROM STDIN (FORMAT binary, FORCE_NULL (b))", None, None),
    ("format_twice", T_AB, "COPY t FROM STDIN (FORMAT binary, FORMAT csv)", None, None),
    ("binary_and_delimiter_old_syntax", T_AB, "COPY t FROM STDIN WITH BINARY DELIMITER ','", None, None),
    # COPY TO.
    ("to_table", T_AB + ["INSERT INTO t VALUES (1, 'one'), (2, NULL), (NULL, 'three')"], "COPY t TO STDOUT (FORMAT binary)", None, None),
    ("to_columns", T_AB + ["INSERT INTO t VALUES (1, 'one'), (2, NULL)"], "COPY t (b, a) TO STDOUT WITH BINARY", None, None),
    ("to_old_syntax", T_AB + ["INSERT INTO t VALUES (1, 'one')"], "COPY BINARY t TO STDOUT", None, None),
    ("to_empty", T_AB, "COPY t TO STDOUT (FORMAT binary)", None, None),
    ("to_query", [], "COPY (SELECT 1 AS a, 'x'::text AS b, NULL::int AS c, 2.50::numeric AS d, ARRAY[1,2] AS e, 'unknown' AS f "
     "UNION ALL SELECT 2, NULL, 3, -0.001, NULL, 'u') TO STDOUT (FORMAT binary)", None, None),
    ("to_generate_series", [], "COPY (SELECT g FROM generate_series(1, 1005) g) TO STDOUT (FORMAT binary)", None, None),
]


def run_case(conn, name, setup, copy_sql, data, check):
    lines = ["== " + name]
    cur = conn.cursor()
    for s in setup:
        lines.append("sql " + s)
        cur.execute(s)
    lines.append("copy " + copy_sql)
    if data is not None:
        lines.append("input " + data.hex())
    output = bytearray()
    try:
        with cur.copy(copy_sql) as cp:
            if data is not None:
                # Always write, even nothing: psycopg makes up a header and a
                # trailer for a binary COPY that wrote nothing.
                cp.write(data)
            else:
                for chunk in cp:
                    output += chunk
        lines.append("result COPY %d" % cur.rowcount)
        if data is None and output:
            lines.append("output " + bytes(output).hex())
    except psycopg.Error as e:
        conn.rollback()
        d = e.diag
        lines.append("result ERROR %s" % d.sqlstate)
        lines.append("message " + d.message_primary)
        for key, value in (("detail", d.message_detail), ("hint", d.message_hint), ("context", d.context)):
            if value is not None:
                for part in value.split("\n"):
                    lines.append(key + " " + part)
    if check:
        lines.append("check " + check)
        out = bytearray()
        with cur.copy(check) as cp:
            for chunk in cp:
                out += chunk
        for row in out.decode().splitlines():
            lines.append("| " + row)
    lines.append("")
    return lines


# COPY statements whose CopyInResponse/CopyOutResponse is recorded (its
# overall format and per-column format codes).
RESPONSES = [
    "COPY (SELECT 1 AS a, 'x' AS b) TO STDOUT (FORMAT binary)",
    "COPY (SELECT 1 AS a, 'x' AS b) TO STDOUT",
    "COPY t FROM STDIN (FORMAT binary)",
    "COPY t (b) FROM STDIN WITH BINARY",
    "COPY t FROM STDIN (FORMAT csv)",
]


def copy_responses(host, port):
    """The raw CopyInResponse ('G') or CopyOutResponse ('H') of each of
    RESPONSES, over a plain protocol 3.0 connection (trust authentication)."""
    import socket

    sock = socket.create_connection((host, int(port)))
    params = b"user\0postgres\0database\0postgres\0\0"
    sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
    buf = bytearray()

    def message():
        while True:
            if len(buf) >= 5:
                n = struct.unpack("!i", buf[1:5])[0]
                if len(buf) >= 1 + n:
                    tag, body = chr(buf[0]), bytes(buf[5 : 1 + n])
                    del buf[: 1 + n]
                    return tag, body
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError
            buf.extend(chunk)

    def until_ready():
        while message()[0] != "Z":
            pass

    until_ready()
    out = []
    for sql in ["DROP TABLE IF EXISTS t", "CREATE TABLE t (a int, b text)"]:
        q = sql.encode() + b"\0"
        sock.sendall(b"Q" + struct.pack("!i", 4 + len(q)) + q)
        until_ready()
    for sql in RESPONSES:
        q = sql.encode() + b"\0"
        sock.sendall(b"Q" + struct.pack("!i", 4 + len(q)) + q)
        while True:
            tag, body = message()
            if tag in "GH":
                out.append("%s\t%s %s" % (sql, tag, body.hex()))
                if tag == "G":
                    m = b"recording\0"
                    sock.sendall(b"f" + struct.pack("!i", 4 + len(m)) + m)
            if tag == "Z":
                break
    sock.close()
    return out


def main():
    conninfo = sys.argv[1]
    with psycopg.connect(conninfo, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("SET TimeZone = 'UTC'")
        # The many-types table, its binary COPY, and its text after a reload.
        cur.execute("DROP TABLE IF EXISTS copy_types")
        for stmt in statements((OUT / "binary_types.sql").read_text()):
            cur.execute(stmt)
        data = bytearray()
        with cur.copy("COPY copy_types TO STDOUT (FORMAT binary)") as cp:
            for chunk in cp:
                data += chunk
        (OUT / "binary_types.bin").write_bytes(bytes(data))
        cur.execute("TRUNCATE copy_types")
        with cur.copy("COPY copy_types FROM STDIN (FORMAT binary)") as cp:
            cp.write(bytes(data))
        text = bytearray()
        with cur.copy("COPY copy_types TO STDOUT") as cp:
            for chunk in cp:
                text += chunk
        (OUT / "binary_types.out").write_bytes(bytes(text))
        cur.execute("DROP TABLE copy_types")

        out = [
            "# Binary COPY cases, recorded from PostgreSQL 15 by scripts/record-copy-binary.sh;",
            "# run against Tusk by crates/tusk/tests/copy_binary.rs. Do not edit by hand.",
            "",
        ]
        conn.autocommit = True
        for case in CASES:
            out += run_case(conn, *case)
        (OUT / "binary_cases.txt").write_text("\n".join(out))

    info = psycopg.conninfo.conninfo_to_dict(conninfo)
    lines = copy_responses(info["host"], info["port"])
    (OUT / "binary_responses.txt").write_text("\n".join(lines) + "\n")


def statements(sql):
    """The statements of a file: each ends with a semicolon at the end of a
    line; lines starting with -- are comments."""
    stmts, cur = [], []
    for line in sql.splitlines():
        if line.startswith("--") and not cur:
            continue
        cur.append(line)
        if line.rstrip().endswith(";"):
            stmts.append("\n".join(cur).rstrip().rstrip(";"))
            cur = []
    if "".join(cur).strip():
        stmts.append("\n".join(cur))
    return stmts


if __name__ == "__main__":
    main()
