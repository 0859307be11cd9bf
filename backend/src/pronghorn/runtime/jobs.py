"""An accepted run while this process owns it (dropped from memory when it finishes)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pronghorn.config.schema import AppConfig
from pronghorn.runtime.run_request import RunCreate


@dataclass(eq=False)
class Job:
    run: dict[str, Any]  # the Run as the API shows it
    request: RunCreate
    assistant: dict[str, Any]
    config: AppConfig  # snapshot captured at the run's start
    temporary: bool = False
    thread_metadata: dict[str, Any] = field(default_factory=dict)
    attempt: int = 1
    finishing: bool = False  # the graph is done; cancel no longer applies
    resume: bool = False  # continue from the last checkpoint (recovery)
    task: asyncio.Task[None] | None = None
    cancel_action: str | None = None  # "interrupt" | "rollback" | "shutdown"
    started: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    status: str = "pending"
    output: Any = None  # what /wait and /join return
    error: dict[str, Any] | None = None

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    @property
    def thread_id(self) -> str:
        return self.run["thread_id"]
