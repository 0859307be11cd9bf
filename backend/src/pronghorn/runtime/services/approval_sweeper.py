"""Approval timeouts: a run waiting on a tool approval is interrupted (not running, so it
holds no concurrency slot); once it has waited ``approvals.timeout_s`` this sweeper resumes
it, as its owner, with a denial of every pending approval (``reason: approval timed out``).

The resume is keyed by interrupt id (LangGraph's form for several pending interrupts) and
each denial names its call id, so if a human answered meanwhile (and the thread now waits
on another call) the late denial does not match and is ignored; ``multitask_strategy:
reject`` keeps it from queueing behind a run already resuming the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import TYPE_CHECKING

from pronghorn.persistence.outage import OutageLog
from pronghorn.persistence.repos import approval_waits
from pronghorn.persistence.repos.common import now
from pronghorn.runtime.access import Access, principal_from_record
from pronghorn.runtime.engine.run_request import RunCommand, RunCreate
from pronghorn.runtime.errors import DomainError
from pronghorn.runtime.services.runs import Runs

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.approvals")

TIMEOUT_REASON = "approval timed out"


def denial(pending: list[tuple[str, str]]) -> dict[str, dict[str, object]]:
    return {
        iid: {"approved": False, "reason": TIMEOUT_REASON, "call_id": cid} for iid, cid in pending
    }


async def sweep_once(runtime: AppRuntime) -> int:
    """Resume every overdue approval with a denial; returns how many runs were created."""
    timeout = runtime.config.approvals.timeout_s
    due = await runtime.db.read(
        lambda conn: approval_waits.overdue(conn, before=now() - timedelta(seconds=timeout))
    )
    created = 0
    for wait in due:
        kwargs = wait.run_kwargs
        req = RunCreate(
            assistant_id=wait.assistant_id,
            command=RunCommand(resume=denial(wait.pending)),
            config=kwargs.get("config") or None,
            context=kwargs.get("context") or None,
            metadata={"approval_timeout": True},
            multitask_strategy="reject",
        )
        owner = principal_from_record(wait.principal, wait.owner_id)
        try:
            job = await Runs(runtime).start(Access(owner), wait.thread_id, req)
        except DomainError as exc:  # busy (answered meanwhile) or gone: nothing to do
            log.info(
                "approval timeout skipped", extra={"thread_id": wait.thread_id, "why": str(exc)}
            )
            continue
        created += 1
        log.info(
            "approval timed out; denied",
            extra={
                "thread_id": wait.thread_id,
                "run_id": job.run_id,
                "calls": [c for _, c in wait.pending],
            },
        )
    return created


@contextlib.asynccontextmanager
async def approval_sweeper(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    async def loop() -> None:
        report = OutageLog(log, "approval timeout sweep")
        while True:
            try:
                await sweep_once(runtime)
                report.ok()
            except Exception as exc:
                report.failed(exc)
            await asyncio.sleep(runtime.config.approvals.sweep_interval_s)

    task = asyncio.create_task(loop(), name="approval-sweeper")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
