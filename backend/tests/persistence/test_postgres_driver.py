"""Whichever driver a configured PostgreSQL URL names (postgresql://, postgresql+asyncpg://,
postgresql+psycopg://), the app's tables connect with asyncpg and the checkpointer with
psycopg, and every session of both carries the gateway's settings."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database, engine_url, libpq_url
from pronghorn.runtime.checkpoints.checkpoint import open_persistence

PG_URL = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")


@pytest.mark.parametrize(
    "scheme", ["postgresql", "postgresql+asyncpg", "postgresql+psycopg", "postgresql+psycopg2"]
)
def test_every_postgresql_url_maps_to_the_engines_drivers(scheme: str) -> None:
    url = f"{scheme}://app:p%40ss@db:5433/pronghorn"
    mapped = engine_url(url)
    assert mapped.drivername == "postgresql+asyncpg"
    assert (mapped.username, mapped.password, mapped.host, mapped.port, mapped.database) == (
        "app",
        "p@ss",
        "db",
        5433,
        "pronghorn",
    )
    assert libpq_url(url) == "postgresql://app:p%40ss@db:5433/pronghorn"


def test_session_options_escape_spaces_for_libpq() -> None:
    db = Database("postgresql://h/db", replica_id="a b\\c", statement_timeout_s=1.5)
    assert db.session_options() == (
        "-c application_name=pronghorn/a\\ b\\\\c -c statement_timeout=1500"
    )


@pytest.mark.skipif(not PG_URL, reason="PRONGHORN_TEST_POSTGRES_URL is not set")
async def test_a_psycopg_url_connects_both_pools_with_the_session_settings() -> None:
    assert PG_URL
    url = make_url(PG_URL).set(drivername="postgresql+psycopg")
    db = Database(
        url.render_as_string(hide_password=False),
        replica_id="r 1",
        idle_in_transaction_timeout_s=4,
    )
    await db.connect()
    try:
        assert db.engine.dialect.driver == "asyncpg"

        def settings(conn: Connection) -> list[str | None]:
            names = ("application_name", "idle_in_transaction_session_timeout")
            return [conn.execute(text(f"SHOW {name}")).scalar() for name in names]

        assert await db.read(settings) == ["pronghorn/r 1", "4s"]
        async with open_persistence(db, StoreConfig()) as persistence:
            pool = persistence.checkpointer.conn  # type: ignore[attr-defined]
            async with pool.connection() as pconn:
                row = await (await pconn.execute("SHOW application_name")).fetchone()
                assert row["application_name"] == "pronghorn/r 1"
    finally:
        await db.close()
