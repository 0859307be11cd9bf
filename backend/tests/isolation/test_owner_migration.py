"""Migration 0003: what existed before owners belongs to "local"; system assistants stay
shared (owner NULL). On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url

from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import alembic_config, upgrade

PG = os.environ.get("PRONGHORN_TEST_POSTGRES_URL", "postgresql+psycopg://127.0.0.1:5432/test")


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(params=["sqlite", "postgresql"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        database = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
        await database.connect()
        yield database
        await database.close()
        return
    name = f"pronghorn_mig_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(_libpq(PG), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:  # pragma: no cover - no PostgreSQL here
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    database = Database(make_url(PG).set(database=name).render_as_string(hide_password=False))
    await database.connect()
    yield database
    await database.close()
    with psycopg.connect(_libpq(PG), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_existing_rows_get_owner_local(db: Database) -> None:
    ts = "'2026-01-01 00:00:00+00'"

    def unit(conn: Connection):
        command.upgrade(alembic_config(conn), "0001")
        conn.execute(
            text(
                "INSERT INTO assistants (assistant_id, graph_id, name, config, context, metadata,"
                f" version, created_at, updated_at) VALUES ('sys', 'g', 'g', '{{}}', '{{}}',"
                f""" '{{"created_by": "system"}}', 1, {ts}, {ts}), ('mine', 'g', 'm', '{{}}',"""
                f" '{{}}', '{{}}', 1, {ts}, {ts})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO threads (thread_id, status, metadata, config, interrupts,"
                f" created_at, updated_at, state_updated_at) VALUES ('t', 'idle', '{{}}', '{{}}',"
                f" '{{}}', {ts}, {ts}, {ts})"
            )
        )

    await db.write(unit)
    await upgrade(db)

    def unit(conn: Connection):
        owners = dict((conn.execute(text("SELECT assistant_id, owner_id FROM assistants"))).all())
        threads = (conn.execute(text("SELECT owner_id FROM threads"))).scalars().all()
        return owners, threads

    owners, threads = await db.read(unit)
    assert owners == {"sys": None, "mine": "local"}
    assert threads == ["local"]
