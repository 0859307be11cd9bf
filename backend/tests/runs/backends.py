"""The two databases a live server can run on, for tests that check what it stored.

`database(kind, workdir)` gives the `database` config overrides for SQLite (the default: a
file in the server's work dir) or PostgreSQL (a fresh database on
PRONGHORN_TEST_POSTGRES_URL, dropped afterwards), and a sync SQLAlchemy URL a test reads the
same database with.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

PG_URL = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
KINDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=pytest.mark.skipif(not PG_URL, reason="PRONGHORN_TEST_POSTGRES_URL is not set"),
    ),
]


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def database(kind: str, workdir: Path) -> Iterator[tuple[dict, str]]:
    """(the server's `database` config, a sync SQLAlchemy URL to the same database)."""
    if kind == "sqlite":
        yield {}, f"sqlite:///{workdir / 'data' / 'pronghorn.db'}"
        return
    assert PG_URL
    name = f"pronghorn_ev_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_url(PG_URL).set(database=name)
    try:
        yield (
            {"url": url.render_as_string(hide_password=False)},
            url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False),
        )
    finally:
        with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))
