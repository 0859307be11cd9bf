"""What `wait` and `join` answer with: a run's output once it is done — a `Job` of this
process, or a `RemoteRun` following a run another process executes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol


class RunResult(Protocol):
    done: asyncio.Event

    @property
    def output(self) -> object: ...  # JSON, any shape


@dataclass(eq=False)
class RemoteRun:
    """Done when the run's log (in the shared broker) closes; `output` is then read from
    the database, as for any finished run."""

    run_id: str
    thread_id: str
    done: asyncio.Event = field(default_factory=asyncio.Event)
    output: object = None  # JSON, any shape
    task: asyncio.Task[None] | None = None

    def stop_following(self) -> None:
        """The client went away: stop waiting (the run itself goes on)."""
        if self.task is not None and not self.done.is_set():
            self.task.cancel()
