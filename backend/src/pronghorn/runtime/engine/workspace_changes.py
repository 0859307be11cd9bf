"""Which files each run created, changed or deleted in its thread's workspace and outputs.

Around each run's graph (an executor watcher) the thread's `workspace` and `outputs`
folders are snapshotted as the run starts and again as it ends (sandbox/workspace_scan.py);
when they differ, the comparison (with bounded diffs) is stored for the run. What another
writer did to the folders meanwhile (an upload, a concurrent run of the same thread) counts
too: the record is "what changed while this run ran". A run that changed nothing stores
nothing, and a failure to scan is logged, never fails the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.persistence.repos import workspace_changes as repo
from pronghorn.sandbox import workspace_scan
from pronghorn.sandbox.paths import ThreadPaths, user_folder

if TYPE_CHECKING:
    from pronghorn.runtime.engine.jobs import Job
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.workspace_changes")

EMPTY_SUMMARY = {
    "created": 0,
    "modified": 0,
    "deleted": 0,
    "symlink_created": 0,
    "additions": 0,
    "deletions": 0,
    "truncated": False,
}


class WorkspaceRecorder:
    """The executor watcher: `watch(job)` wraps the run's graph."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime
        # The data dir made absolute once (AppRuntime resolved it already: no file access)
        self._base = runtime.data_dir.expanduser().absolute()

    @contextlib.asynccontextmanager
    async def watch(self, job: Job) -> AsyncGenerator[None]:
        # A thread whose folder does not exist has no files: one lstat on the loop (as
        # cheap as a path join) instead of a scan in a worker thread, which is what most
        # runs of graphs that never touch files would pay twice (~0.1 ms of CPU per hop).
        root: Path | None = None
        roots: dict[str, Path] | None = None
        before: workspace_scan.Snapshot | None = None
        try:
            paths = ThreadPaths.under(self._base, user_folder(job.owner_id), job.thread_id)
            root, roots = paths.root, {"workspace": paths.workspace, "outputs": paths.outputs}
            if _exists(root):
                before = await asyncio.to_thread(workspace_scan.snapshot, roots)
            else:
                before = workspace_scan.Snapshot()
        except Exception:
            log.exception("workspace snapshot failed", extra={"run_id": job.run_id})
        yield
        if root is None or roots is None or before is None:
            return
        try:
            if not before.files and not _exists(root):
                return  # no folder before, none now: nothing was touched
            after = await asyncio.to_thread(workspace_scan.snapshot, roots, before)
            if before.files.keys() == after.files.keys() and all(
                before.files[k] is after.files[k] for k in after.files
            ):
                return  # nothing was touched (the common case): nothing to compare or store
            changes = await asyncio.to_thread(workspace_scan.compare, before, after, roots)
            if not changes["files"]:
                return
            await self.runtime.db.write(
                lambda conn: repo.insert_changes(
                    conn, run_id=job.run_id, thread_id=job.thread_id, changes=changes
                )
            )
        except Exception:
            log.exception("recording workspace changes failed", extra={"run_id": job.run_id})


def _exists(path: Path) -> bool:
    """Whether anything is at `path` (a link is not followed)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def _without_diffs(files: list[JsonObject]) -> list[dict[str, object]]:
    return [{**f, "diff": ""} for f in files]


async def run_changes(
    runtime: AppRuntime, thread_id: str, run_id: str, *, include_files: bool, include_diff: bool
) -> dict[str, object]:
    """DeerFlow's `WorkspaceChangesResponse` of a run (the caller checked it may see it):
    `available: false` when nothing was recorded (no change, or a run before recording)."""
    stored = await runtime.db.read(lambda conn: repo.get_changes(conn, thread_id, run_id))
    if stored is None:
        return {
            "available": False,
            "version": 1,
            "summary": dict(EMPTY_SUMMARY),
            "files": [],
            "limits": {},
        }
    # the recorder's own JSON: `files` is a list of objects
    files = cast("list[JsonObject]", stored.get("files", [])) if include_files else []
    return {
        "available": True,
        "version": stored.get("version", 1),
        "summary": stored.get("summary", dict(EMPTY_SUMMARY)),
        "files": files if include_diff else _without_diffs(files),
        "limits": stored.get("limits", {}),
    }
