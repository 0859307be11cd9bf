"""Deleting a thread completely, and the background task that expires threads by TTL."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.sandbox.paths import delete_thread_dirs, user_folder

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.threads")

SWEEP_INTERVAL_S = 60.0


async def purge_thread(runtime: AppRuntime, thread_id: str) -> bool:
    """Delete everything of a thread: in-flight runs are cancelled first, then the row (runs,
    events and crons follow by foreign key), its checkpoints and its files (in its owner's
    folder). False if unknown."""
    if runtime.is_started("runs"):
        await runtime.runs.cancel_thread(thread_id)

    def unit(conn: Connection) -> tuple[ThreadRecord | None, bool]:
        return threads_repo.get_row(conn, thread_id), threads_repo.delete_thread(conn, thread_id)

    row, existed = await runtime.db.write(unit)
    user_id = user_folder(row.owner_id if row is not None else None)
    # Outside the transaction: on SQLite the checkpointer shares the connection lock.
    await runtime.checkpointer.adelete_thread(thread_id)
    if runtime.is_started("mcp"):  # its stdio MCP servers run in the folder going away
        await runtime.mcp.close_thread(thread_id)
    with contextlib.suppress(ValueError):  # a non-UUID id has no folder
        await delete_thread_dirs(runtime.data_dir, user_id, thread_id)
    return existed


async def sweep_once(runtime: AppRuntime) -> int:
    """Apply the TTL strategy to every expired thread; returns how many were handled."""
    due = await runtime.db.read(lambda conn: threads_repo.expired(conn))
    for thread_id, strategy in due:
        try:
            if strategy == "keep_latest":
                await runtime.checkpointer.aprune([thread_id], strategy="keep_latest")
                await runtime.db.write(
                    functools.partial(threads_repo.renew_ttl, thread_id=thread_id)
                )
            else:
                await purge_thread(runtime, thread_id)
        except Exception:
            log.exception("thread TTL sweep failed", extra={"thread_id": thread_id})
    return len(due)


@contextlib.asynccontextmanager
async def thread_sweeper(
    runtime: AppRuntime, *, interval: float = SWEEP_INTERVAL_S
) -> AsyncGenerator[None, None]:
    """Background task deleting (or pruning) threads whose TTL has passed, every ``interval``."""

    async def loop() -> None:
        while True:
            try:
                await sweep_once(runtime)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("thread TTL sweep failed")
            await asyncio.sleep(interval)

    task = asyncio.create_task(loop(), name="thread-ttl-sweeper")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
