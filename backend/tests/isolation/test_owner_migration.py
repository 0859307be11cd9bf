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
from psycopg import sql
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
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:  # pragma: no cover - no PostgreSQL here
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    database = Database(make_url(PG).set(database=name).render_as_string(hide_password=False))
    await database.connect()
    yield database
    await database.close()
    with psycopg.connect(_libpq(PG), autocommit=True) as conn:
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
        conn.execute(drop.format(sql.Identifier(name)))


async def test_existing_rows_get_owner_local(db: Database) -> None:
    ts = "'2026-01-01 00:00:00+00'"

    def step1(conn: Connection):
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

    await db.write(step1)
    await upgrade(db)

    def step2(conn: Connection):
        owners = dict((conn.execute(text("SELECT assistant_id, owner_id FROM assistants"))).all())
        threads = (conn.execute(text("SELECT owner_id FROM threads"))).scalars().all()
        return owners, threads

    owners, threads = await db.read(step2)
    assert owners == {"sys": None, "mine": "local"}
    assert threads == ["local"]
