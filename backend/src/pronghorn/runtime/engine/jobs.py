"""An accepted run while this process owns it (dropped from memory when it finishes)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pronghorn.auth.principal import LOCAL_PRINCIPAL, Principal
from pronghorn.config.schema.app import AppConfig
from pronghorn.graphs.registry import GraphEntry
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.run_state import (
    CancelAction,
    RunError,
    RunPhase,
    RunState,
    RunStatus,
)


@dataclass(eq=False)
class Job:
    run: RunRecord  # as accepted (or claimed): the live status is the state's
    request: RunCreate
    assistant: AssistantRecord
    config: AppConfig  # the snapshot the run was accepted under: it executes with it
    config_version: str = ""  # that snapshot's content hash (the holder's version)
    # The graph version serving when the run was accepted: it runs on it even if the graph
    # is reloaded meanwhile (None: the one serving when it starts, e.g. a claimed run).
    graph: GraphEntry | None = None
    temporary: bool = False
    thread_metadata: JsonObject = field(default_factory=dict[str, object])
    # The user the run (its thread, files and sandbox) belongs to, and who it executes as:
    # the principal that created it (a cron's owner for a cron's runs).
    owner_id: str = LOCAL_PRINCIPAL.identity
    principal: Principal = LOCAL_PRINCIPAL
    attempt: int = 1
    resume: bool = False  # continue from the last checkpoint (recovery)
    # Scale-out: the claim's fencing token (None: not a claimed run)
    fence: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    # Phase, status, cancel request and outcome: changed by the run engine and the executor
    # through its transitions, read here by everyone else.
    state: RunState = field(default_factory=RunState)

    def interrupt(self, action: CancelAction) -> None:
        """Ask the run to stop; the first action asked for wins (RunState.interrupt)."""
        self.state.interrupt(action)

    @property
    def status(self) -> RunStatus:
        return self.state.status

    @property
    def phase(self) -> RunPhase:
        return self.state.phase

    @property
    def cancel_action(self) -> CancelAction | None:
        return self.state.cancel_action

    @property
    def started(self) -> bool:
        return self.state.started

    @property
    def lease_lost(self) -> bool:
        return self.state.lease_lost

    @property
    def more_on_thread(self) -> bool:
        return self.state.more_on_thread

    @property
    def output(self) -> object:  # JSON, any shape: what /wait and /join return
        return self.state.output

    @property
    def error(self) -> RunError | None:
        return self.state.error

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self.state.task

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def thread_id(self) -> str:
        return self.run.thread_id
