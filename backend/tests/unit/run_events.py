"""Waiting on a run's own events in the runtime tests (no HTTP): the first event of its
log that a predicate accepts, and predicates for the echo graph's steps."""

from __future__ import annotations

import json
from collections.abc import Callable

from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.wiring.app_runtime import AppRuntime


async def until_event(runtime: AppRuntime, job: Job, wanted: Callable[[Event], bool]) -> Event:
    """The first event of the run that `wanted` accepts (read from the start of its log)."""
    async for event in runtime.broker.subscribe(job.run_id, after=0):
        if wanted(event):
            return event
    raise AssertionError("the run's log ended before the event came")


def is_custom(progress: str) -> Callable[[Event], bool]:
    """The echo graph's custom progress event of a step (stream mode `custom`)."""

    def check(event: Event) -> bool:
        return event.event == "custom" and json.loads(event.data).get("progress") == progress

    return check


def is_update(node: str) -> Callable[[Event], bool]:
    """The update a node's finished step streams (stream mode `updates`)."""

    def check(event: Event) -> bool:
        return event.event == "updates" and node in json.loads(event.data)

    return check
