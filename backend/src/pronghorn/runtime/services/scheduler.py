"""Fires crons: each due time is claimed in the database (compare-and-set on next_run_date)
before its run is created, so a due time fires at most once across processes and restarts,
and a cron that came due while the server was down fires once when it comes back."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from pronghorn.persistence.outage import OutageLog
from pronghorn.persistence.records.crons import CronRecord
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.repos import crons as crons_repo
from pronghorn.persistence.repos.common import as_utc
from pronghorn.runtime.access import Access, principal_from_record
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import Overloaded
from pronghorn.runtime.services.runs import Runs

if TYPE_CHECKING:
    from pronghorn.runtime.engine.jobs import Job
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.crons")

MAX_SLEEP_S = 1.0


def next_run(schedule: str, timezone: str | None, after: datetime) -> datetime:
    from croniter import croniter  # its parser loads slowly: only once a cron exists

    tz = ZoneInfo(timezone) if timezone else UTC
    local = after.astimezone(tz)
    nxt = croniter(schedule, local).get_next(datetime)
    return nxt.astimezone(UTC)


CRON_FIELDS = "minute hour day-of-month month day-of-week"


def validate_schedule(schedule: str, timezone: str | None) -> None:
    """A 5-field cron expression (or an @hourly-style alias) and a known IANA timezone.

    croniter also takes 6 and 7 fields (seconds, years); the LangGraph contract is the
    5-field form, so those are refused instead of being read differently than meant."""
    from croniter import croniter

    fields = schedule.split()
    if not (len(fields) == 5 or (len(fields) == 1 and fields[0].startswith("@"))):
        raise ValueError(
            f"invalid cron schedule {schedule!r}: expected 5 fields ({CRON_FIELDS}), "
            f"got {len(fields)}"
        )
    if not croniter.is_valid(schedule):
        raise ValueError(f"invalid cron schedule {schedule!r}")
    if timezone:
        try:
            ZoneInfo(timezone)
        except Exception:
            raise ValueError(f"unknown timezone {timezone!r}") from None


def cron_run_request(cron: CronRecord, trigger: str = "scheduled") -> RunCreate:
    """The run a cron makes: its payload on its assistant, tagged with the cron's id
    (and `cron_trigger: manual` when someone fired it by hand)."""
    payload: dict[str, object] = dict(cron.payload)
    payload["assistant_id"] = cron.assistant_id
    meta = dict(json_object(payload.get("metadata")) or {})
    meta.setdefault("cron_id", cron.cron_id)
    if trigger != "scheduled":
        meta["cron_trigger"] = trigger
    payload["metadata"] = meta
    req = RunCreate.model_validate(payload)
    if cron.thread_id is None:
        req.on_completion = "delete" if cron.on_run_completed == "delete" else "keep"
    return req


async def fire_cron(runtime: AppRuntime, cron: CronRecord, trigger: str = "scheduled") -> Job:
    """Create the cron's run now. A cron's runs belong to, and execute as, its owner."""
    req = cron_run_request(cron, trigger)
    owner = principal_from_record(cron.principal, cron.owner_id)
    return await Runs(runtime).start(Access(owner), cron.thread_id, req)


class Scheduler:
    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime
        self._wake = asyncio.Event()
        self.fired = 0

    def poke(self) -> None:
        """A cron changed: look again now."""
        self._wake.set()

    async def run_forever(self) -> None:
        report = OutageLog(log, "crons")
        while True:
            try:
                await self.tick()
                report.ok()
            except Exception as exc:
                report.failed(exc)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), MAX_SLEEP_S)

    async def tick(self, at: datetime | None = None) -> int:
        at = at or datetime.now(UTC)
        db = self.runtime.db
        due = await db.read(lambda conn: crons_repo.due(conn, at))
        fired = 0
        for cron in due:
            due_at = cron.next_run_date
            if due_at is None:  # `due` lists only crons with a due time
                continue
            end = as_utc(cron.end_time)
            due_utc = as_utc(due_at)
            expired = end is not None and due_utc is not None and due_utc >= end
            nxt = None
            if not expired:
                try:
                    nxt = next_run(cron.schedule, cron.timezone, at)
                except Exception:
                    log.exception("bad cron schedule", extra={"cron_id": cron.cron_id})
            if nxt is not None and end is not None and nxt >= end:
                nxt = None
            claim = functools.partial(
                crons_repo.claim, cron_id=cron.cron_id, due_at=due_at, next_at=nxt
            )
            won = await db.write(claim)
            if won and not expired:
                fired += 1
                await self._fire(cron)
        self.fired += fired
        return fired

    async def _fire(self, cron: CronRecord) -> None:
        try:
            job = await fire_cron(self.runtime, cron)
            log.info("cron fired", extra={"cron_id": cron.cron_id, "run_id": job.run_id})
        except Overloaded as exc:  # admission control: this firing is skipped, not a bug
            log.warning("cron run refused: %s", exc.message, extra={"cron_id": cron.cron_id})
        except Exception:
            log.exception("cron run could not be created", extra={"cron_id": cron.cron_id})


@contextlib.asynccontextmanager
async def scheduler(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    sched = Scheduler(runtime)
    runtime.scheduler = sched
    task = asyncio.create_task(sched.run_forever(), name="cron-scheduler")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
