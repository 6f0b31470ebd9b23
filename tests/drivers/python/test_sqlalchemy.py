"""SQLAlchemy Core (over psycopg 3) smoke tests.

SQLAlchemy's PostgreSQL dialect sends its own catalog queries on connect
(version, standard_conforming_strings, has_table) and for reflection, so
this is the place where a missing catalog column or function shows up.
Covered: MetaData.create_all, insert, select with where/order, update,
delete, engine.begin() transactions with commit and rollback, reflection,
and drop_all. Expectations are PostgreSQL 15's answers.
"""

import datetime
from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy import exc

from conftest import sqlalchemy_url


@pytest.fixture(scope="module")
def engine():
    engine = sa.create_engine(sqlalchemy_url())
    yield engine
    engine.dispose()


@pytest.fixture
def tables(engine):
    metadata = sa.MetaData()
    users = sa.Table(
        "py_sa_users", metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(50), nullable=False, unique=True),
        sa.Column("balance", sa.Numeric(12, 2), server_default="0"),
        sa.Column("active", sa.Boolean, nullable=False, default=True),
        sa.Column("joined", sa.Date),
        sa.Column("note", sa.Text),
    )
    orders = sa.Table(
        "py_sa_orders", metadata,
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("py_sa_users.id"), nullable=False),
        sa.Column("placed", sa.DateTime),
        sa.Column("amount", sa.Float),
    )
    metadata.drop_all(engine)
    metadata.create_all(engine)
    yield users, orders
    metadata.drop_all(engine)


def test_connect(engine):
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT 1")).scalar() == 1
        assert conn.dialect.server_version_info[0] == 15


def test_insert_select_update_delete(engine, tables):
    users, orders = tables
    with engine.begin() as conn:
        result = conn.execute(users.insert().returning(users.c.id), [
            {"name": "ada", "balance": Decimal("10.50"), "active": True, "joined": datetime.date(2020, 1, 2)},
            {"name": "bob", "balance": Decimal("0.25"), "active": False, "joined": None},
        ])
        ids = sorted(r.id for r in result)
        ids.append(conn.execute(users.insert().values(name="cy", note="hello")).inserted_primary_key[0])
        assert len(set(ids)) == 3
        conn.execute(orders.insert(), [
            {"id": 1, "user_id": ids[0], "placed": datetime.datetime(2024, 1, 1, 12, 0), "amount": 9.5},
            {"id": 2, "user_id": ids[0], "placed": None, "amount": 0.5},
        ])

    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(users.c.name, users.c.balance, users.c.active, users.c.joined)
            .where(users.c.balance > Decimal("0.1"))
            .order_by(users.c.name.desc())
        ).all()
        assert rows == [("bob", Decimal("0.25"), False, None),
                        ("ada", Decimal("10.50"), True, datetime.date(2020, 1, 2))]

        # server_default and the client-side default both applied.
        assert conn.execute(sa.select(users.c.balance, users.c.active).where(users.c.name == "cy")).one() == (
            Decimal("0.00"), True)

        # A join with an aggregate and a bound parameter.
        query = (
            sa.select(users.c.name, sa.func.count(orders.c.id).label("n"), sa.func.sum(orders.c.amount).label("total"))
            .select_from(users.join(orders, orders.c.user_id == users.c.id))
            .where(users.c.name.in_(["ada", "bob"]))
            .group_by(users.c.name)
        )
        assert conn.execute(query).all() == [("ada", 2, 10.0)]

        # Reusing one compiled statement with different parameters.
        by_name = sa.select(users.c.id).where(users.c.name == sa.bindparam("n"))
        assert [conn.execute(by_name, {"n": n}).scalar() for n in ("ada", "cy", "zed")] == [ids[0], ids[2], None]

    with engine.begin() as conn:
        updated = conn.execute(users.update().where(users.c.name == "bob").values(balance=users.c.balance + 1))
        assert updated.rowcount == 1
        conn.execute(orders.delete().where(orders.c.amount < 1))
        deleted = conn.execute(users.delete().where(users.c.name == "cy"))
        assert deleted.rowcount == 1

    with engine.connect() as conn:
        assert conn.execute(sa.select(users.c.name, users.c.balance).order_by(users.c.id)).all() == [
            ("ada", Decimal("10.50")), ("bob", Decimal("1.25"))]
        assert conn.execute(sa.select(sa.func.count()).select_from(orders)).scalar() == 1


def test_transactions(engine, tables):
    users, _ = tables
    with pytest.raises(RuntimeError):
        with engine.begin() as conn:
            conn.execute(users.insert().values(name="ghost"))
            raise RuntimeError("roll back")
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(users)).scalar() == 0

    # A unique violation surfaces as IntegrityError carrying the SQLSTATE.
    with engine.connect() as conn:
        conn.execute(users.insert().values(name="dup"))
        with pytest.raises(exc.IntegrityError) as excinfo:
            conn.execute(users.insert().values(name="dup"))
        assert excinfo.value.orig.sqlstate == "23505"
        conn.rollback()
        assert conn.execute(sa.select(sa.func.count()).select_from(users)).scalar() == 0

    # Savepoints via begin_nested().
    with engine.begin() as conn:
        conn.execute(users.insert().values(name="kept"))
        nested = conn.begin_nested()
        conn.execute(users.insert().values(name="undone"))
        nested.rollback()
    with engine.connect() as conn:
        assert conn.execute(sa.select(users.c.name)).scalars().all() == ["kept"]


def test_reflection_columns(engine, tables):
    inspector = sa.inspect(engine)
    assert inspector.has_table("py_sa_users")
    assert not inspector.has_table("py_sa_nothing")
    assert {"py_sa_users", "py_sa_orders"} <= set(inspector.get_table_names())

    columns = {c["name"]: c for c in inspector.get_columns("py_sa_users")}
    assert list(columns) == ["id", "name", "balance", "active", "joined", "note"]
    assert isinstance(columns["id"]["type"], sa.Integer)
    assert isinstance(columns["name"]["type"], sa.String) and columns["name"]["type"].length == 50
    assert isinstance(columns["balance"]["type"], sa.Numeric)
    assert (columns["balance"]["type"].precision, columns["balance"]["type"].scale) == (12, 2)
    assert isinstance(columns["active"]["type"], sa.Boolean)
    assert isinstance(columns["joined"]["type"], sa.Date)
    assert columns["name"]["nullable"] is False and columns["note"]["nullable"] is True


def test_reflection_constraints(engine, tables):
    inspector = sa.inspect(engine)
    assert inspector.get_pk_constraint("py_sa_users")["constrained_columns"] == ["id"]
    fks = inspector.get_foreign_keys("py_sa_orders")
    assert [(fk["constrained_columns"], fk["referred_table"], fk["referred_columns"]) for fk in fks] == [
        (["user_id"], "py_sa_users", ["id"])]
    uniques = inspector.get_unique_constraints("py_sa_users")
    assert [u["column_names"] for u in uniques] == [["name"]]

    reflected = sa.MetaData()
    reflected.reflect(engine, only=["py_sa_users", "py_sa_orders"])
    orders = reflected.tables["py_sa_orders"]
    assert [c.name for c in orders.columns] == ["id", "user_id", "placed", "amount"]
    assert isinstance(orders.c.id.type, sa.BigInteger)
    assert isinstance(orders.c.placed.type, sa.DateTime)
    assert isinstance(orders.c.amount.type, sa.Float)


def test_reflected_default_expression(engine, tables):
    columns = {c["name"]: c for c in sa.inspect(engine).get_columns("py_sa_users")}
    assert columns["balance"]["default"] == "'0'::numeric"
