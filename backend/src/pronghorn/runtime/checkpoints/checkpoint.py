"""LangGraph checkpointer and store, opened on the app's database.

SQLite: LangGraph's ``SqliteSaver`` and ``SqliteStore`` on the Database's SQLite worker
(``runtime/checkpoints/sqlite_checkpoint.py``: their sync code on the worker thread, checkpoint
writes grouped into shared commits). PostgreSQL: ``AsyncPostgresSaver`` and ``AsyncPostgresStore``
on one psycopg pool (its checkpoint writes wait through a short outage). Both savers
implement the contract's history rewrites (``adelete_for_runs``, ``acopy_thread``,
``aprune``), which Pronghorn's rollback, thread copy and pruning call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore, TTLConfig

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import SCHEMA_LOCK_KEY
from pronghorn.persistence.pool_checks import IdleConnectionCheck

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow

# How often a starting replica asks again for the schema lock another one holds.
SCHEMA_LOCK_POLL_S = 0.1


@dataclass
class Persistence:
    checkpointer: BaseCheckpointSaver[str]
    store: BaseStore


def _ttl_config(cfg: StoreConfig) -> TTLConfig:
    ttl: TTLConfig = {
        "refresh_on_read": cfg.ttl.refresh_on_read,
        "sweep_interval_minutes": cfg.ttl.sweep_interval_minutes,
    }
    if cfg.ttl.default_ttl_minutes is not None:
        ttl["default_ttl"] = cfg.ttl.default_ttl_minutes
    return ttl


@contextlib.asynccontextmanager
async def open_persistence(
    db: Database, store_cfg: StoreConfig, *, write_wait_s: float = 300.0
) -> AsyncGenerator[Persistence, None]:
    """``write_wait_s``: PostgreSQL, how long a checkpoint write waits for an unreachable
    database (``runtime/checkpoints/outage_saver.py``)."""
    ttl = _ttl_config(store_cfg)
    if db.is_sqlite:
        from pronghorn.runtime.checkpoints.sqlite_checkpoint import (
            WorkerSqliteSaver,
            WorkerSqliteStore,
        )

        worker = db.sqlite_worker
        saver = WorkerSqliteSaver(worker)
        await saver.asetup()
        sqlite_store = await WorkerSqliteStore.open(worker, ttl=ttl)
        await sqlite_store.start_sweeper()
        try:
            yield Persistence(saver, sqlite_store)
        finally:
            await sqlite_store.stop_sweeper()
        return

    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    from pronghorn.runtime.checkpoints.outage_saver import OutlastingPostgresSaver

    # A connection idle for a while is checked before it is handed out: after the database
    # was away, stale ones are replaced instead of failing a run (persistence/pool_checks.py).
    idle_check = IdleConnectionCheck()
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        db.psycopg_conninfo(),
        min_size=1,
        max_size=db.pool_size,
        timeout=db.pool_timeout_s,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "options": db.session_options(),
        },
        check=idle_check.check,
        open=False,
    )
    await _setup_postgres(db)
    await pool.open(wait=True)
    try:
        saver = OutlastingPostgresSaver(pool, wait_s=write_wait_s, waits=db.outage_waits)
        store = AsyncPostgresStore(pool, ttl=ttl)
        await store.start_ttl_sweeper()
        try:
            yield Persistence(saver, store)
        finally:
            await store.stop_ttl_sweeper(timeout=2)
    finally:
        await pool.close()


async def _lock_schema(conn: AsyncConnection[DictRow]) -> None:
    """Take the schema lock (session level), asking again while another process holds it;
    between asks this session has no open transaction."""
    while True:
        query = "SELECT pg_try_advisory_lock(%s) AS got"
        row = await (await conn.execute(query, (SCHEMA_LOCK_KEY,))).fetchone()
        if row and row["got"]:
            return
        await asyncio.sleep(SCHEMA_LOCK_POLL_S)


async def _setup_postgres(db: Database) -> None:
    """The libraries' own migrations, on a connection of their own: the pool's sessions
    bound every statement (`Database.session_settings`), a migration may take its time."""
    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow, dict_row

    from pronghorn.runtime.checkpoints.postgres_history import HistoryPostgresSaver

    async with await AsyncConnection[DictRow].connect(
        db.psycopg_conninfo(),
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        options="-c statement_timeout=0",
    ) as conn:
        # Replicas starting together: one sets up at a time (their CREATE ... IF NOT EXISTS
        # still race in the catalog); the lock ends with the session at the latest. Polled,
        # not waited for in pg_advisory_lock: the setup runs CREATE INDEX CONCURRENTLY, which
        # waits for every open transaction — a session blocked on the lock is one (deadlock).
        await _lock_schema(conn)
        try:
            await HistoryPostgresSaver(conn).setup()
            await AsyncPostgresStore(conn).setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))
