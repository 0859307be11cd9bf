"""An accepted run while this process owns it (dropped from memory when it finishes)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pronghorn.auth.principal import LOCAL_PRINCIPAL, Principal
from pronghorn.config.schema import AppConfig
from pronghorn.graphs.registry import GraphEntry
from pronghorn.runtime.run_request import RunCreate


@dataclass(eq=False)
class Job:
    run: dict[str, Any]  # the Run as the API shows it
    request: RunCreate
    assistant: dict[str, Any]
    config: AppConfig  # the snapshot the run was accepted under: it executes with it
    config_version: str = ""  # that snapshot's content hash (the holder's version)
    # The graph version serving when the run was accepted: it runs on it even if the graph
    # is reloaded meanwhile (None: the one serving when it starts, e.g. a claimed run).
    graph: GraphEntry | None = None
    temporary: bool = False
    thread_metadata: dict[str, Any] = field(default_factory=dict)
    # The user the run (its thread, files and sandbox) belongs to, and who it executes as:
    # the principal that created it (a cron's owner for a cron's runs).
    owner_id: str = LOCAL_PRINCIPAL.identity
    principal: Principal = LOCAL_PRINCIPAL
    attempt: int = 1
    # waiting → starting → streaming → finishing. Only the waiting task and the streaming
    # task are ever cancelled: a cancel never lands inside a database call.
    phase: str = "waiting"
    stream_task: asyncio.Task[None] | None = None
    mark_task: asyncio.Task[bool] | None = None
    resume: bool = False  # continue from the last checkpoint (recovery)
    task: asyncio.Task[None] | None = None
    # The run task has begun: from then on cancelling it lands where it waits. A task
    # cancelled before its first step never runs a line of its body (no `finally`), so
    # an earlier cancel only records cancel_action, which the task checks first.
    waiting: bool = False
    cancel_action: str | None = None  # "interrupt" | "rollback" | "shutdown"
    started: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    status: str = "pending"
    output: Any = None  # what /wait and /join return
    error: dict[str, Any] | None = None
    # Scale-out: the claim's fencing token (None: not a claimed run) and whether this
    # replica lost the claim (another took the run over; nothing more is written).
    fence: int | None = None
    lease_lost: bool = False
    # Whether another run of its thread was unfinished when this one settled (then that
    # run may be claimable now); True until the settle has looked.
    more_on_thread: bool = True

    def interrupt(self, action: str) -> None:
        """Ask the run to stop; the first action asked for wins."""
        if self.cancel_action is None:
            self.cancel_action = action
        if self.phase == "waiting" and self.task is not None and self.waiting:
            self.task.cancel()
        elif self.phase == "streaming" and self.stream_task is not None:
            self.stream_task.cancel()
        # starting: the executor checks cancel_action before streaming; finishing: too late

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    @property
    def thread_id(self) -> str:
        return self.run["thread_id"]
