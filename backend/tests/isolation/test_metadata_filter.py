"""The metadata filter of `@auth.on` handlers: in Python and as SQL on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, create_engine, insert, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Engine

from pronghorn.persistence.metadata_filter import matches, sql_condition

ROWS = {
    "a": {"owner": "alice", "tags": ["x", "y"], "n": 3, "flag": True, "nested": {"k": 1}},
    "b": {"owner": "bob", "tags": ["y"], "n": 4, "flag": False, "odd.key": "v"},
    "c": {"owner": "alice", "tags": "x", "n": 3.5},
    "d": {},
}

CASES: list[tuple[dict[str, object], set[str]]] = [
    ({}, {"a", "b", "c", "d"}),
    ({"owner": "alice"}, {"a", "c"}),
    ({"owner": {"$eq": "bob"}}, {"b"}),
    ({"tags": {"$contains": "x"}}, {"a"}),  # "c" has a string, not a list
    ({"tags": {"$contains": "y"}, "owner": "bob"}, {"b"}),
    ({"n": 3}, {"a"}),
    ({"n": 3.5}, {"c"}),
    ({"flag": True}, {"a"}),
    ({"flag": False}, {"b"}),
    ({"nested": {"k": 1}}, {"a"}),  # a plain dict without operators: equality
    ({"odd.key": "v"}, {"b"}),
    ({"owner": "carol"}, set()),
    ({"owner": {"$ne": "alice"}}, set()),  # unknown operator: denies
    ({"missing": None}, set()),
]


@pytest.mark.parametrize(("filt", "expected"), CASES)
def test_matches(filt: dict[str, object], expected: set[str]) -> None:
    assert {name for name, meta in ROWS.items() if matches(meta, filt)} == expected


def _engines() -> Iterator[tuple[str, Engine]]:
    yield "sqlite", create_engine("sqlite://")
    url = os.environ.get("PRONGHORN_TEST_POSTGRES_URL", "postgresql+psycopg://127.0.0.1:5432/test")
    yield "postgresql", create_engine(url.replace("+asyncpg", "+psycopg"))


@pytest.fixture(params=["sqlite", "postgresql"], scope="module")
def table(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Table]]:
    engine = dict(_engines())[request.param]
    meta = MetaData()
    name = f"mf_{uuid.uuid4().hex[:8]}"
    tbl = Table(
        name,
        meta,
        Column("id", Integer, primary_key=True),
        Column("name", String(8)),
        Column("metadata", JSON().with_variant(JSONB(), "postgresql")),
    )
    try:
        meta.create_all(engine)
    except Exception as exc:  # pragma: no cover - no PostgreSQL here
        pytest.skip(f"{request.param} unavailable: {exc}")
    with engine.begin() as conn:
        for i, (row_name, row_meta) in enumerate(ROWS.items()):
            conn.execute(insert(tbl).values(id=i, name=row_name, metadata=row_meta))
    yield engine, tbl
    meta.drop_all(engine)
    engine.dispose()


@pytest.mark.parametrize(("filt", "expected"), CASES)
def test_sql_condition(
    table: tuple[Engine, Table], filt: dict[str, object], expected: set[str]
) -> None:
    engine, tbl = table
    cond, rest = sql_condition(tbl.c.metadata, filt, engine.dialect.name)
    with engine.connect() as conn:
        rows = conn.execute(select(tbl.c.name, tbl.c.metadata).where(cond)).all()
    found = {name for name, meta in rows if matches(meta, rest)}
    assert found == expected
    # Scalars and $contains of scalars are SQL, not a Python pass over every row.
    sql_only = all(
        isinstance(v, (str, int)) or (isinstance(v, dict) and "$contains" in v)
        for v in filt.values()
    )
    if sql_only and not any("." in k for k in filt):
        assert rest == {}
