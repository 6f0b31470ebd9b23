"""psycopg 3 smoke tests: what an application does with the driver.

Connect, DDL, parameterized INSERT/SELECT/UPDATE/DELETE, transactions with
commit, rollback and savepoints, prepared statements reused, NULLs, COPY,
and errors that carry PostgreSQL's SQLSTATE. Type round trips live in
test_types.py, SQLAlchemy Core in test_sqlalchemy.py. Every expected value
is what PostgreSQL 15 answers (see conftest.py for running against it).
"""

import psycopg
import pytest
from psycopg import errors, sql
from psycopg.types import TypeInfo

from conftest import connection_params, recreate, tusk_gap


def test_connect_and_server_parameters(conn):
    assert conn.info.status == psycopg.pq.ConnStatus.OK
    assert 150000 <= conn.info.server_version < 160000
    assert conn.info.parameter_status("server_version").startswith("15")
    assert conn.info.parameter_status("server_encoding") == "UTF8"
    assert conn.info.parameter_status("client_encoding") == "UTF8"
    assert conn.info.parameter_status("standard_conforming_strings") == "on"
    assert conn.info.parameter_status("integer_datetimes") == "on"
    assert conn.execute("SELECT 1 + 1").fetchone() == (2,)
    assert conn.execute("SELECT current_user").fetchone() == (connection_params()["user"],)


def test_ddl_and_crud_with_parameters(conn):
    recreate(conn, "py_items", "id integer PRIMARY KEY, name text NOT NULL, qty integer DEFAULT 0")
    with conn.cursor() as cur:
        cur.execute("INSERT INTO py_items (id, name, qty) VALUES (%s, %s, %s)", (1, "apple", 3))
        assert cur.rowcount == 1
        cur.executemany(
            "INSERT INTO py_items (id, name, qty) VALUES (%s, %s, %s)",
            [(2, "pear", 5), (3, "plum", 7), (4, "fig", 0)],
        )
        cur.execute("INSERT INTO py_items (id, name) VALUES (%(id)s, %(name)s) RETURNING id, qty",
                    {"id": 5, "name": "kiwi"})
        assert cur.fetchone() == (5, 0)

        cur.execute("SELECT id, name, qty FROM py_items WHERE qty >= %s ORDER BY id", (3,))
        assert cur.fetchall() == [(1, "apple", 3), (2, "pear", 5), (3, "plum", 7)]
        assert [d.name for d in cur.description] == ["id", "name", "qty"]

        cur.execute("UPDATE py_items SET qty = qty + %s WHERE name LIKE %s", (10, "p%"))
        assert cur.rowcount == 2
        cur.execute("DELETE FROM py_items WHERE id = ANY(%s)", ([4, 5],))
        assert cur.rowcount == 2
        cur.execute("SELECT id, qty FROM py_items ORDER BY id")
        assert cur.fetchall() == [(1, 3), (2, 15), (3, 17)]
    conn.commit()

    # A quote in a parameter is data, not SQL.
    conn.execute("INSERT INTO py_items (id, name) VALUES (%s, %s)", (6, "O'Reilly; DROP TABLE py_items"))
    assert conn.execute("SELECT name FROM py_items WHERE id = 6").fetchone() == ("O'Reilly; DROP TABLE py_items",)

    # Identifiers composed client-side with psycopg.sql.
    query = sql.SQL("SELECT count(*) FROM {} WHERE {} > %s").format(sql.Identifier("py_items"), sql.Identifier("id"))
    assert conn.execute(query, (1,)).fetchone() == (3,)
    conn.execute("ALTER TABLE py_items ADD COLUMN note text")
    conn.execute("DROP TABLE py_items")
    conn.commit()


def test_transactions_commit_and_rollback(conn):
    recreate(conn, "py_tx", "id integer PRIMARY KEY, v text")
    conn.execute("INSERT INTO py_tx VALUES (1, 'kept')")
    conn.commit()
    conn.execute("INSERT INTO py_tx VALUES (2, 'dropped')")
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    conn.rollback()
    assert conn.execute("SELECT id, v FROM py_tx ORDER BY id").fetchall() == [(1, "kept")]
    conn.rollback()

    # conn.transaction() commits on success, rolls back on an exception,
    # and nests as savepoints.
    with conn.transaction():
        conn.execute("INSERT INTO py_tx VALUES (3, 'outer')")
        with pytest.raises(ZeroDivisionError):
            with conn.transaction():
                conn.execute("INSERT INTO py_tx VALUES (4, 'inner')")
                1 / 0
        with conn.transaction():
            conn.execute("INSERT INTO py_tx VALUES (5, 'inner kept')")
    assert conn.execute("SELECT id FROM py_tx ORDER BY id").fetchall() == [(1,), (3,), (5,)]
    conn.rollback()

    # A failed statement aborts the transaction until ROLLBACK (25P02).
    with pytest.raises(errors.UniqueViolation):
        conn.execute("INSERT INTO py_tx VALUES (1, 'duplicate')")
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
    with pytest.raises(errors.InFailedSqlTransaction) as excinfo:
        conn.execute("SELECT 1")
    assert excinfo.value.sqlstate == "25P02"
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM py_tx").fetchone() == (3,)
    conn.execute("DROP TABLE py_tx")
    conn.commit()


def test_explicit_transaction_statements(autocommit_conn):
    conn = autocommit_conn
    recreate(conn, "py_tx2", "id integer PRIMARY KEY")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO py_tx2 VALUES (1)")
    conn.execute("SAVEPOINT s1")
    conn.execute("INSERT INTO py_tx2 VALUES (2)")
    conn.execute("ROLLBACK TO SAVEPOINT s1")
    conn.execute("INSERT INTO py_tx2 VALUES (3)")
    conn.execute("RELEASE SAVEPOINT s1")
    conn.execute("COMMIT")
    assert conn.execute("SELECT id FROM py_tx2 ORDER BY id").fetchall() == [(1,), (3,)]

    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    assert conn.execute("SHOW transaction_isolation").fetchone() == ("repeatable read",)
    conn.execute("DELETE FROM py_tx2")
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT count(*) FROM py_tx2").fetchone() == (2,)
    conn.execute("DROP TABLE py_tx2")


def test_isolation_level_attribute():
    with psycopg.connect(**connection_params()) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        assert conn.execute("SHOW transaction_isolation").fetchone() == ("repeatable read",)
        conn.rollback()
        conn.read_only = True
        with pytest.raises(errors.ReadOnlySqlTransaction) as excinfo:
            conn.execute("CREATE TABLE py_never (a int)")
        assert excinfo.value.sqlstate == "25006"


def test_prepared_statements_reused(conn):
    recreate(conn, "py_prep", "id integer PRIMARY KEY, sq bigint")
    # prepare=True makes psycopg Parse once under a name and Bind/Execute after.
    for i in range(1, 11):
        conn.execute("INSERT INTO py_prep VALUES (%s, %s)", (i, i * i), prepare=True)
    for i in (3, 7, 10):
        assert conn.execute("SELECT sq FROM py_prep WHERE id = %s", (i,), prepare=True).fetchone() == (i * i,)
    conn.commit()

    # The automatic threshold: after prepare_threshold executions psycopg prepares by itself.
    conn.prepare_threshold = 0
    for i in (1, 2, 3):
        assert conn.execute("SELECT id FROM py_prep WHERE sq = %s", (i * i,)).fetchone() == (i,)
    conn.prepare_threshold = 5

    # SQL-level PREPARE / EXECUTE / DEALLOCATE.
    conn.execute("PREPARE py_get (int) AS SELECT sq FROM py_prep WHERE id = $1")
    assert conn.execute("EXECUTE py_get (4)").fetchone() == (16,)
    assert conn.execute("EXECUTE py_get (5)").fetchone() == (25,)
    conn.execute("DEALLOCATE py_get")
    with pytest.raises(errors.InvalidSqlStatementName) as excinfo:
        conn.execute("EXECUTE py_get (5)")
    assert excinfo.value.sqlstate == "26000"
    conn.rollback()
    conn.execute("DROP TABLE py_prep")
    conn.commit()


def test_nulls(conn):
    recreate(conn, "py_nulls", "id integer PRIMARY KEY, t text, n numeric, b boolean, ts timestamp")
    conn.execute("INSERT INTO py_nulls VALUES (%s, %s, %s, %s, %s)", (1, None, None, None, None))
    conn.execute("INSERT INTO py_nulls (id) VALUES (2)")
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        cur.execute("SELECT t, n, b, ts FROM py_nulls ORDER BY id")
        assert cur.fetchall() == [(None, None, None, None)] * 2
    assert conn.execute("SELECT count(*) FROM py_nulls WHERE t IS NULL").fetchone() == (2,)
    assert conn.execute("SELECT count(*) FROM py_nulls WHERE t = %s", (None,)).fetchone() == (0,)
    assert conn.execute("SELECT %s::int IS NULL, coalesce(%s, 'dflt')", (None, None)).fetchone() == (True, "dflt")
    assert conn.execute("SELECT NULL::text, ARRAY[1, NULL, 3]").fetchone() == (None, [1, None, 3])
    with pytest.raises(errors.NotNullViolation) as excinfo:
        conn.execute("INSERT INTO py_nulls (id) VALUES (%s)", (None,))
    assert excinfo.value.sqlstate == "23502"
    conn.rollback()
    conn.execute("DROP TABLE py_nulls")
    conn.commit()


def test_errors_carry_sqlstate(autocommit_conn):
    conn = autocommit_conn
    recreate(conn, "py_err", "id integer PRIMARY KEY, v integer CHECK (v > 0), s varchar(3)")
    conn.execute("INSERT INTO py_err VALUES (1, 1)")

    with pytest.raises(errors.UniqueViolation) as excinfo:
        conn.execute("INSERT INTO py_err VALUES (%s, %s)", (1, 2))
    e = excinfo.value
    assert e.sqlstate == "23505"
    assert e.diag.message_primary == 'duplicate key value violates unique constraint "py_err_pkey"'
    assert e.diag.message_detail == "Key (id)=(1) already exists."
    assert e.diag.constraint_name == "py_err_pkey"
    assert e.diag.table_name == "py_err"
    assert e.diag.severity == "ERROR"

    with pytest.raises(errors.CheckViolation) as excinfo:
        conn.execute("INSERT INTO py_err VALUES (2, -1)")
    assert excinfo.value.sqlstate == "23514"
    assert excinfo.value.diag.constraint_name == "py_err_v_check"

    with pytest.raises(errors.DivisionByZero) as excinfo:
        conn.execute("SELECT 1 / %s", (0,))
    assert excinfo.value.sqlstate == "22012"
    assert excinfo.value.diag.message_primary == "division by zero"

    with pytest.raises(errors.UndefinedTable) as excinfo:
        conn.execute("SELECT * FROM py_no_such_table")
    assert excinfo.value.sqlstate == "42P01"
    assert excinfo.value.diag.message_primary == 'relation "py_no_such_table" does not exist'
    assert excinfo.value.diag.statement_position == "15"

    with pytest.raises(errors.UndefinedColumn) as excinfo:
        conn.execute("SELECT nope FROM py_err")
    assert excinfo.value.sqlstate == "42703"

    with pytest.raises(errors.SyntaxError) as excinfo:
        conn.execute("SELEC 1")
    assert excinfo.value.sqlstate == "42601"

    with pytest.raises(errors.InvalidTextRepresentation) as excinfo:
        conn.execute("SELECT 'abc'::integer")
    assert excinfo.value.sqlstate == "22P02"

    with pytest.raises(errors.NumericValueOutOfRange) as excinfo:
        conn.execute("SELECT %s::smallint", (40000,))
    assert excinfo.value.sqlstate == "22003"

    with pytest.raises(errors.UndefinedFunction) as excinfo:
        conn.execute("SELECT py_no_such_function(1)")
    assert excinfo.value.sqlstate == "42883"

    with pytest.raises(errors.StringDataRightTruncation) as excinfo:
        conn.execute("INSERT INTO py_err (id, v, s) VALUES (3, 3, %s)", ("abcdef",))
    assert excinfo.value.sqlstate == "22001"
    assert excinfo.value.diag.message_primary == "value too long for type character varying(3)"

    # The connection is still usable after all of that.
    assert conn.execute("SELECT v FROM py_err").fetchall() == [(1,)]
    conn.execute("DROP TABLE py_err")


def test_copy_in_and_out(conn):
    recreate(conn, "py_copy", "id integer PRIMARY KEY, name text, score numeric")
    with conn.cursor() as cur:
        with cur.copy("COPY py_copy (id, name, score) FROM STDIN") as copy:
            copy.write_row((1, "one", "1.5"))
            copy.write_row((2, None, "2.25"))
            copy.write_row((3, "tab\there", None))
        assert cur.execute("SELECT count(*) FROM py_copy").fetchone() == (3,)
        with cur.copy("COPY (SELECT id, name, score FROM py_copy ORDER BY id) TO STDOUT") as copy:
            rows = list(copy.rows())
        assert rows == [("1", "one", "1.5"), ("2", None, "2.25"), ("3", "tab\there", None)]
    conn.commit()
    conn.execute("DROP TABLE py_copy")
    conn.commit()


def test_server_side_cursor(conn):
    # A named cursor: DECLARE ... then FETCH in batches.
    with conn.cursor(name="py_big") as cur:
        cur.itersize = 7
        cur.execute("SELECT g FROM generate_series(1, 50) AS g ORDER BY g")
        assert [r[0] for r in cur] == list(range(1, 51))
    conn.rollback()


def test_server_side_cursor_params_scroll_hold(conn):
    # DECLARE with a bound parameter (extended protocol), then scrolling.
    with conn.cursor(name="py_params", scrollable=True) as cur:
        cur.execute("SELECT g, g::text AS t FROM generate_series(1, 10) AS g WHERE g > %s", (5,))
        assert [d.name for d in cur.description] == ["g", "t"]
        assert cur.fetchmany(2) == [(6, "6"), (7, "7")]
        cur.scroll(-1)
        assert cur.fetchone() == (7, "7")
        cur.scroll(0, mode="absolute")
        assert cur.fetchone() == (6, "6")
    conn.rollback()
    # WITH HOLD: the cursor outlives the commit.
    with conn.cursor(name="py_hold", withhold=True) as cur:
        cur.execute("SELECT g FROM generate_series(1, 5) AS g")
        conn.commit()
        assert [r[0] for r in cur.fetchall()] == [1, 2, 3, 4, 5]
    conn.rollback()


def test_type_info_catalog_queries(conn):
    # psycopg looks types up in pg_type with its own catalog query.
    info = TypeInfo.fetch(conn, "integer")
    assert (info.name, info.oid, info.array_oid) == ("int4", 23, 1007)
    info = TypeInfo.fetch(conn, "text")
    assert (info.name, info.oid, info.array_oid) == ("text", 25, 1009)
    assert TypeInfo.fetch(conn, "py_no_such_type") is None
    conn.rollback()


def test_reg_type_parameters_bound_as_names(conn):
    """A text parameter cast to regclass/regtype/regproc is looked up by
    name, as regclassin does (SQLAlchemy's reflection binds table names so)."""
    with conn.cursor() as cur:
        cur.execute("SELECT %s::regclass::oid, %s::regtype::oid, %s::regproc::oid",
                    ["pg_catalog.pg_class", "integer", "int4in"])
        assert cur.fetchone() == (1259, 23, 42)
        cur.execute("CREATE TEMP TABLE py_reg_t (x int)")
        cur.execute("SELECT %s::regclass = 'py_reg_t'::regclass", ["py_reg_t"])
        assert cur.fetchone() == (True,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            cur.execute("SELECT %s::regclass", ["no_such_table_here"])


def test_listen_notify():
    """psycopg's conn.notifies() receives NOTIFYs of other sessions while
    the listener runs no query, at the sender's commit, once per distinct
    payload, with the sender's pid; pg_notify() works with parameters."""
    with psycopg.connect(**connection_params(), autocommit=True) as listener, \
            psycopg.connect(**connection_params()) as sender:
        listener.execute("LISTEN py_channel")
        sender_pid = sender.info.backend_pid
        sender.execute("NOTIFY py_channel, 'first'")
        sender.execute("NOTIFY py_channel, 'first'")  # folded: same transaction
        sender.execute("SELECT pg_notify(%s, %s)", ("py_channel", "second"))
        sender.rollback()  # nothing of a rolled-back transaction is sent
        sender.execute("NOTIFY py_channel, 'first'")
        sender.execute("NOTIFY py_channel, 'first'")
        sender.execute("SELECT pg_notify(%s, %s)", ("py_channel", "second"))
        sender.commit()
        got = [(n.channel, n.payload, n.pid) for n in listener.notifies(timeout=30, stop_after=2)]
        assert got == [("py_channel", "first", sender_pid), ("py_channel", "second", sender_pid)]
        # A session hears its own notifications too.
        listener.execute("NOTIFY py_channel, 'self'")
        got = [(n.payload, n.pid) for n in listener.notifies(timeout=30, stop_after=1)]
        assert got == [("self", listener.info.backend_pid)]
        assert listener.execute("SELECT pg_listening_channels()").fetchall() == [("py_channel",)]
        listener.execute("UNLISTEN *")
        assert listener.execute("SELECT pg_listening_channels()").fetchall() == []
