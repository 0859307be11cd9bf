"""The checkpointer's psycopg pool: a connection comes back to the pool as soon as its user
is done (no worker task in between), and one is checked before it is handed out only when
it has not been handed out for a while (or its socket has something to read)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from psycopg import AsyncConnection

from pronghorn.persistence.db import Database
from pronghorn.persistence.pool_checks import IdleConnectionCheck
from pronghorn.runtime.checkpoints.checkpoint import Persistence

pytestmark = pytest.mark.parametrize("db", ["postgres"], indirect=True)


async def test_a_connection_is_back_in_the_pool_when_its_user_is_done(
    persistence: Persistence,
) -> None:
    pool: Any = persistence.checkpointer.conn  # pyright: ignore[reportAttributeAccessIssue]
    async with pool.connection() as conn:
        await conn.execute("SELECT 1")
    await asyncio.sleep(0.05)  # anything the pool does after a return is done
    available = pool.get_stats()["pool_available"]
    for _ in range(3):
        async with pool.connection() as conn:
            await conn.execute("SELECT 1")
        # no task switch here: with a return worker, the connection would still be away
        assert pool.get_stats()["pool_available"] == available


async def test_only_a_connection_not_handed_out_lately_is_checked(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psycopg_pool import AsyncConnectionPool

    checked: list[object] = []

    async def check_connection(conn: object) -> None:
        checked.append(conn)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", check_connection)
    idle = IdleConnectionCheck(idle_s=0.2)
    async with await AsyncConnection.connect(db.psycopg_conninfo(), autocommit=True) as conn:
        await idle.check(conn)  # never handed out: checked
        assert checked == [conn]
        await idle.check(conn)
        await idle.check(conn)  # handed out a moment ago: not checked
        assert checked == [conn]
        await asyncio.sleep(0.3)
        await idle.check(conn)  # not handed out for longer than idle_s: checked
        assert checked == [conn, conn]
