"""A migrated Database (+ LangGraph saver and store) on SQLite, and on PostgreSQL when
``PRONGHORN_TEST_POSTGRES_URL`` is set — each PostgreSQL test gets a fresh database that is
dropped afterwards, so reruns (and other suites sharing the server) never see leftovers."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database, default_sqlite_url, libpq_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.runtime.checkpoints.checkpoint import Persistence, open_persistence

PG_ENV = "PRONGHORN_TEST_POSTGRES_URL"


async def _admin(url: str, statement: str) -> None:
    from psycopg import AsyncConnection

    async with await AsyncConnection.connect(libpq_url(url), autocommit=True) as conn:
        await conn.execute(statement.encode())


@pytest.fixture(params=["sqlite", "postgres"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        database = Database(default_sqlite_url(tmp_path))
        await database.connect()
        await upgrade(database)
        yield database
        await database.close()
        return
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"{PG_ENV} is not set (e.g. postgresql://postgres@127.0.0.1/test)")
    name = f"pronghorn_t_{uuid.uuid4().hex[:12]}"
    await _admin(base, f'CREATE DATABASE "{name}"')
    database = Database(make_url(base).set(database=name).render_as_string(hide_password=False))
    try:
        await database.connect()
        await upgrade(database)
        yield database
    finally:
        await database.close()
        await _admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def persistence(db: Database) -> AsyncIterator[Persistence]:
    async with open_persistence(db, StoreConfig()) as p:
        yield p
