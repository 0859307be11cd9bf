"""Live graph reload: a change of ``graphs:`` in the config (the config watcher's reload) or,
with ``server.reload_graphs``, an edit of a graph's source file is applied to the registry
without a restart. New runs use the new graph; a run already accepted keeps the version it
was accepted with (``Job.graph``); a graph that fails to reload keeps its last good version
and is reported. System assistants follow: a new graph gets one, a removed graph's is
deleted (its threads keep their history). In a cluster each replica applies its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Iterable
from pathlib import Path

from watchfiles import Change, awatch  # pyright: ignore[reportUnknownVariableType]

from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.repos.assistants import (
    ensure_system_assistants,
    remove_system_assistants,
)
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.graphs")

WATCH_DEBOUNCE_MS = 50
WATCH_STEP_MS = 20
_RETRY_S = 1.0


class GraphReloader:
    """Applies graph specs and source edits to the runtime's registry, one at a time."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime
        self._lock = asyncio.Lock()
        self.rewatch = asyncio.Event()  # the set of watched files changed
        self.watching = asyncio.Event()  # set once the file watcher watches (tests wait)

    async def apply(self, specs: dict[str, str], changed: Iterable[Path] = ()) -> None:
        graphs = self.runtime.graphs
        async with self._lock:
            files_before = graphs.watched_files()
            known_before = set(graphs.known_ids())
            result = await graphs.apply(specs, changed)
            new = [g for g in graphs.known_ids() if g not in known_before]
            if new:
                await self.runtime.db.write(lambda conn: ensure_system_assistants(conn, new))
            if result.removed:
                removed = result.removed
                await self.runtime.db.write(lambda conn: remove_system_assistants(conn, removed))
            if graphs.watched_files() != files_before:
                self.rewatch.set()

    async def on_config(self, old: AppConfig, new: AppConfig) -> None:
        if dict(old.graphs) != dict(new.graphs):
            await self.apply(dict(new.graphs))

    async def watch(self, stop: asyncio.Event) -> None:
        """Re-import graphs whose source file changes, until ``stop``."""
        while not stop.is_set():
            self.rewatch.clear()
            files = self.runtime.graphs.watched_files()
            if not files:
                self.watching.set()
                await _first(stop, self.rewatch)
                continue
            dirs = sorted({f.parent for f in files})
            names = {f.name for f in files}

            def wanted(_change: Change, raw: str, names: set[str] = names) -> bool:
                return Path(raw).name in names

            halt = asyncio.Event()  # stop, or a new set of files to watch
            relay = asyncio.ensure_future(_first(stop, self.rewatch))
            relay.add_done_callback(lambda _t, halt=halt: halt.set())
            batches = awatch(
                *dirs,
                watch_filter=wanted,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_STEP_MS,
                stop_event=halt,
                recursive=False,
            )
            try:
                first = asyncio.ensure_future(anext(batches, None))
                await asyncio.sleep(0)  # the watcher is built in the generator's first step
                self.watching.set()
                changes = await first
                while changes is not None:
                    touched = {Path(raw) for _c, raw in changes}  # under the resolved folders
                    await self.apply(self.runtime.graphs.specs(), touched & files)
                    changes = await anext(batches, None)
            except Exception as exc:  # e.g. a folder that vanished: retry
                log.warning("graph file watcher error: %r; retrying", exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), _RETRY_S)
            finally:
                relay.cancel()
                await batches.aclose()


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


@contextlib.asynccontextmanager
async def graph_reload(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    reloader = GraphReloader(runtime)
    runtime.graph_reloader = reloader
    remove = runtime.settings.add_listener(reloader.on_config)
    stop = asyncio.Event()
    task: asyncio.Task[None] | None = None
    if runtime.config.server.reload_graphs:
        task = asyncio.create_task(reloader.watch(stop), name="graph-file-watcher")
    try:
        yield
    finally:
        remove()
        stop.set()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, timeout=2)
