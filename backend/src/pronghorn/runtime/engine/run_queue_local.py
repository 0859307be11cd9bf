"""The run queue of one process (SQLite, or PostgreSQL without Redis): every run of a thread
is this process's. A thread's runs execute one at a time in creation order (each waits for
the turn before it, thread_turns.py); the admission's slots cap them (admission.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from pronghorn.persistence.records.runs import RunRecord
from pronghorn.runtime.engine.admission import Admission
from pronghorn.runtime.engine.control import ControlMessage
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_queue import AcceptTerms, RunHost
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.run_state import CancelAction
from pronghorn.runtime.engine.thread_turns import ThreadTurns
from pronghorn.runtime.events.broker import EventBroker


class LocalRunQueue:
    def __init__(
        self, *, owner: str, admission: Admission, broker: EventBroker, turns: ThreadTurns
    ) -> None:
        self.owner = owner
        self.admission = admission
        self.broker = broker
        self.turns = turns

    def start(self, host: RunHost) -> None:
        """Nothing runs in the background: runs start as they are accepted."""

    async def check_room(self, user: str, count: int) -> None:
        self.admission.check_many(user, count)

    def admit(self, user: str, thread_id: str) -> None:
        self.admission.check(user, thread_busy=self.turns.held(thread_id))

    def terms(self, req: RunCreate, thread_id: str) -> AcceptTerms:
        return AcceptTerms(owner=self.owner)

    def release(self, terms: AcceptTerms) -> None:
        """No claim was reserved."""

    async def open_log(self, run_id: str, thread_id: str) -> None:
        await self.broker.open_run(run_id, thread_id)

    async def abandon_log(self, run_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.broker.close_run(run_id)

    def accepted(self, job: Job, claimed: bool) -> bool:
        return True

    def not_started(self, job: Job) -> None:
        """It holds nothing of the queue's."""

    def order(self, thread_id: str, turn: asyncio.Future[None]) -> asyncio.Future[None] | None:
        return self.turns.take(thread_id, turn)

    async def delay(self, job: Job) -> None:
        if job.request.after_seconds:
            await asyncio.sleep(job.request.after_seconds)

    def finished(self, job: Job) -> None:
        """Its turn and slots are released by the engine."""

    def turn_ended(self, thread_id: str) -> None:
        """The next run of the thread waits on the turn itself."""

    async def cancel_queued(self, run_id: str, action: CancelAction, wait: bool) -> bool:
        return False  # every queued run of this process is in memory

    def heard(self, message: ControlMessage) -> None:
        """No other process queues runs for this one."""

    def orphans(self, rows: Sequence[RunRecord]) -> list[RunRecord]:
        return list(rows)

    async def stop(self) -> None:
        """Nothing is claimed."""

    async def aclose(self) -> None:
        """Nothing runs in the background."""
