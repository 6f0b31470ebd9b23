"""Fixtures shared by the Python driver smoke tests.

The suite talks to whatever server the standard libpq environment names:
PGHOST (default 127.0.0.1), PGPORT (default 5432), PGUSER (default postgres)
and PGDATABASE (default postgres). crates/tusk/tests/drivers_py_node.rs
points it at a freshly spawned Tusk; pointing it at a PostgreSQL 15 shows
that every expectation here is PostgreSQL's own answer:

    PGHOST=/tmp PGPORT=54341 ~/.cache/tusk/pyvenv/bin/pytest tests/drivers/python

Tables the tests create are prefixed `py_` so that the Node suite can run
against the same server at the same time. Known Tusk gaps are marked with
`tusk_gap(reason)`: a strict xfail against Tusk (so that it fails loudly
once the gap is closed), a plain test against PostgreSQL.
"""

import functools
import os

import psycopg
import pytest


def connection_params() -> dict:
    """Connection keywords for psycopg.connect, from the libpq environment."""
    return {
        "host": os.environ.get("PGHOST", "127.0.0.1"),
        "port": int(os.environ.get("PGPORT", "5432")),
        "user": os.environ.get("PGUSER", "postgres"),
        "dbname": os.environ.get("PGDATABASE", "postgres"),
        "connect_timeout": 10,
    }


@functools.cache
def server_is_tusk() -> bool:
    """Whether the server under test is Tusk (its version() says so)."""
    try:
        with psycopg.connect(**connection_params()) as conn:
            return "Tusk" in conn.execute("SELECT version()").fetchone()[0]
    except psycopg.OperationalError:
        return False  # the tests themselves will report the connection failure


def tusk_gap(reason: str, **kwargs):
    """Marks a test that fails on Tusk for the reason given, and only there."""
    return pytest.mark.xfail(server_is_tusk(), reason=f"Tusk gap: {reason}", strict=True, **kwargs)


def sqlalchemy_url() -> str:
    """The same server as a SQLAlchemy URL for the psycopg (3) dialect."""
    p = connection_params()
    host = p["host"]
    if host.startswith("/"):  # a Unix-socket directory goes in the query string
        return f"postgresql+psycopg://{p['user']}@/{p['dbname']}?host={host}&port={p['port']}"
    return f"postgresql+psycopg://{p['user']}@{host}:{p['port']}/{p['dbname']}"


@pytest.fixture
def conn():
    """A fresh connection (not autocommit, as psycopg defaults); closed after the test."""
    with psycopg.connect(**connection_params()) as connection:
        yield connection


@pytest.fixture
def autocommit_conn():
    """A fresh connection in autocommit mode, for DDL and explicit BEGIN/COMMIT."""
    with psycopg.connect(**connection_params(), autocommit=True) as connection:
        yield connection


def recreate(connection, name: str, columns: str) -> None:
    """Drops table `name` if a previous run left it, and creates it anew."""
    with connection.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {name}")
        cur.execute(f"CREATE TABLE {name} ({columns})")
    if not connection.autocommit:
        connection.commit()
