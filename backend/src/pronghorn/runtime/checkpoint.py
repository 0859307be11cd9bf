"""LangGraph checkpointer and store, opened on the app's database.

SQLite: ``AsyncSqliteSaver`` and ``AsyncSqliteStore`` on the Database's shared connection and
lock. PostgreSQL: ``AsyncPostgresSaver`` and ``AsyncPostgresStore`` on one psycopg pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from pronghorn.config.schema import StoreConfig
from pronghorn.persistence.db import Database


@dataclass
class Persistence:
    checkpointer: BaseCheckpointSaver
    store: BaseStore


def _ttl_config(cfg: StoreConfig) -> dict[str, Any]:
    ttl: dict[str, Any] = {
        "refresh_on_read": cfg.ttl.refresh_on_read,
        "sweep_interval_minutes": cfg.ttl.sweep_interval_minutes,
    }
    if cfg.ttl.default_ttl_minutes is not None:
        ttl["default_ttl"] = cfg.ttl.default_ttl_minutes
    return ttl


@contextlib.asynccontextmanager
async def open_persistence(db: Database, store_cfg: StoreConfig) -> AsyncIterator[Persistence]:
    ttl = _ttl_config(store_cfg)
    if db.is_sqlite:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        saver = AsyncSqliteSaver(db.raw_sqlite)
        store = AsyncSqliteStore(db.raw_sqlite, ttl=ttl)  # type: ignore[arg-type]
        assert db.lock is not None
        saver.lock = db.lock
        store.lock = db.lock
        await saver.setup()
        await store.setup()
        await store.start_ttl_sweeper()
        try:
            yield Persistence(saver, store)
        finally:
            await store.stop_ttl_sweeper(timeout=2)
        return

    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(
        db.psycopg_conninfo(),
        min_size=1,
        max_size=db.pool_size,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        store = AsyncPostgresStore(pool, ttl=ttl)  # type: ignore[arg-type]
        await saver.setup()
        await store.setup()
        await store.start_ttl_sweeper()
        try:
            yield Persistence(saver, store)
        finally:
            await store.stop_ttl_sweeper(timeout=2)
    finally:
        await pool.close()
