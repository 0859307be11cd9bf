"""Replicas starting together on a fresh PostgreSQL database (the compose `scale` profile
starts three at once) each bring its schema up: one at a time, so none fails on another's
half-made tables (a unique violation in pg_type) and every one of them starts."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import pytest

from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import current_revision, head_revision, upgrade
from pronghorn.persistence.repos.assistants import ensure_system_assistants
from pronghorn.runtime.checkpoints.checkpoint import _setup_postgres  # pyright: ignore[reportPrivateUsage]
from runs.backends import PG_URL, database

pytestmark = pytest.mark.skipif(not PG_URL, reason="needs PRONGHORN_TEST_POSTGRES_URL")
STARTING = 4


async def test_replicas_starting_together_set_up_a_fresh_database(tmp_path: Path) -> None:
    with database("postgres", tmp_path) as (cfg, _):
        dbs = [Database(cfg["url"], pool_size=2) for _ in range(STARTING)]
        for db in dbs:
            await db.connect()
        try:
            await asyncio.gather(*(upgrade(db) for db in dbs))
            await asyncio.gather(*(_setup_postgres(db) for db in dbs))
            assert await current_revision(dbs[0]) == head_revision()
            # ...then each registers the graphs' system assistants (the same rows).
            graphs = ["lead_agent", "echo", "nested"]
            await asyncio.gather(
                *(
                    db.write(functools.partial(ensure_system_assistants, graph_ids=graphs))
                    for db in dbs
                )
            )
        finally:
            for db in dbs:
                await db.close()
