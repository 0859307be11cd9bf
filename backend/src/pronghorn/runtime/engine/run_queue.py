"""The run queue contract: what orders, limits, claims and follows runs, so that the run
manager (run_manager.py) is one engine for one process and for a cluster of replicas.

- `LocalRunQueue` (run_queue_local.py): one process, every run of a thread is its own; a
  thread's runs wait for each other in memory, the process's slots cap them.
- `ClusterRunQueue` (cluster/run_queue_cluster.py): PostgreSQL + Redis; runs are queued in the
  database and claimed by any replica with a free slot, under a lease (cluster/leases.py).

The manager accepts a run on the terms the queue gives (`terms`), hands it to the queue
(`accepted`: start it here now, or not), starts what the queue says, and tells it when a
run ends (`finished`). The conformance suite (tests/runs/test_run_queue_conformance.py)
runs the same ordering, strategy, limit and cancel tests on both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos.run_queue_load import QueueCaps
from pronghorn.runtime.engine.control import ControlMessage
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.run_state import CancelAction, RunError


@dataclass(frozen=True)
class AcceptTerms:
    """How a new run is written: its owner (None: nobody's until claimed), when it may be
    claimed, the claim it gets in the accept transaction if its thread is idle, and the
    check of the queue caps in that transaction."""

    owner: str | None
    claimable_at: datetime | None = None
    claim_if_idle: dict[str, object] | None = None  # the claim columns
    queue_caps: QueueCaps | None = None


class RunHost(Protocol):
    """What a queue asks of the run engine (the manager), given at `start`."""

    async def start_job(self, job: Job) -> None: ...

    async def output(self, thread_id: str, run_id: str) -> object: ...

    async def cancel_elsewhere(self, run_id: str, action: str, wait: bool) -> bool: ...

    async def wrote_checkpoint(self, thread_id: str, run_id: str) -> bool: ...

    async def settle_orphan(
        self, row: RunRecord, *, status: str, error: RunError | None
    ) -> None: ...


class RunQueue(Protocol):
    def start(self, host: RunHost) -> None:
        """Begin background work (claiming, leases); `host` runs what is claimed."""
        ...

    # -- accepting ------------------------------------------------------------------------
    async def check_room(self, user: str, count: int) -> None:
        """Refuse (`Overloaded`) a batch of `count` runs of `user` that cannot all queue."""
        ...

    def admit(self, user: str, thread_id: str) -> None:
        """Refuse a run before anything is written when it would wait in a full queue."""
        ...

    def terms(self, req: RunCreate, thread_id: str) -> AcceptTerms:
        """The terms a new run is accepted on; `release` them once the write is over."""
        ...

    def release(self, terms: AcceptTerms) -> None: ...

    async def open_log(self, run_id: str, thread_id: str) -> None:
        """Before a run is written: its event log, or proof the broker is reachable."""
        ...

    async def abandon_log(self, run_id: str) -> None:
        """The run was not written after all."""
        ...

    def accepted(self, job: Job, claimed: bool) -> bool:
        """`job` is written (`claimed` in its accept transaction): whether this process
        starts it now (else it is queued for any replica, and followed here)."""
        ...

    def not_started(self, job: Job) -> None:
        """Starting an accepted run failed before its task began."""
        ...

    # -- running --------------------------------------------------------------------------
    def order(self, thread_id: str, turn: asyncio.Future[None]) -> asyncio.Future[None] | None:
        """The turn a starting run waits for before it executes (None: none)."""
        ...

    async def delay(self, job: Job) -> None:
        """Wait out the run's `after_seconds` (or nothing, when claiming waited for it)."""
        ...

    def finished(self, job: Job) -> None:
        """A run executed or settled here has ended."""
        ...

    def turn_ended(self, thread_id: str) -> None:
        """A state update let go of the thread: runs queued behind it may go."""
        ...

    async def cancel_queued(self, run_id: str, action: CancelAction, wait: bool) -> bool:
        """Cancel an unfinished run no process here executes: True when handled."""
        ...

    def heard(self, message: ControlMessage) -> None:
        """A `work` notice from another process."""
        ...

    def orphans(self, rows: Sequence[RunRecord]) -> list[RunRecord]:
        """Of the unfinished runs at startup, the ones this process may recover."""
        ...

    # -- stopping -------------------------------------------------------------------------
    async def stop(self) -> None:
        """Take nothing more (shutdown); hand back what was taken and not started."""
        ...

    async def aclose(self) -> None: ...
