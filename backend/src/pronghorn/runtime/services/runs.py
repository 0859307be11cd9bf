"""Runs as a service: `Runs.start` is how every way in starts a run.

The HTTP runs router hands over the `RunCreate` it parsed from the LangGraph-shaped body;
the embedded client, the IM dispatcher and the agent protocols (MCP, A2A, OpenAI chat) say
what they want as a `RunStart` — a `Message` for the thread, or a `Resume` of the interrupt
it waits on — and `Runs.start` turns that into the very same `RunCreate` (the reference
defaults: multitask strategy `enqueue`, `stream_mode` `values`, `on_disconnect` `continue`;
assistant ids and graph ids resolved alike; `config`/`context` merged by the executor in one
way) before the run manager accepts it for the caller's `Access`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import InvalidRun

if TYPE_CHECKING:
    from pronghorn.runtime.engine.jobs import Job
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

Strategy = Literal["reject", "interrupt", "rollback", "enqueue"]


@dataclass(frozen=True, slots=True)
class Message:
    """New messages for the thread: the run's input is `{"messages": [...]}`. A string is
    one human message."""

    messages: tuple[Mapping[str, object], ...]

    @classmethod
    def of(cls, message: str | Mapping[str, object] | Sequence[Mapping[str, object]]) -> Message:
        if isinstance(message, str):
            return cls(({"role": "human", "content": message},))
        if isinstance(message, Mapping):
            return cls((dict(message),))
        return cls(tuple(dict(m) for m in message))

    def graph_input(self) -> dict[str, object]:
        return {"messages": [dict(m) for m in self.messages]}


@dataclass(frozen=True, slots=True)
class Resume:
    """Answer the interrupt the thread waits on: the run's `command` is `{"resume": value}`."""

    value: object  # the interrupt's answer: any JSON value the graph expects


@dataclass(frozen=True, slots=True)
class RunStart:
    """A run as the non-HTTP ways in ask for it. `options` carries any other field of the
    runs API (`checkpoint_id`, `interrupt_before`, `command` with `update`/`goto`…) with
    the API's names and meaning."""

    assistant_id: str
    turn: Message | Resume | None = None
    stream_mode: tuple[str, ...] = ("values",)
    context: Mapping[str, object] | None = None
    config: Mapping[str, object] | None = None
    metadata: Mapping[str, object] | None = None
    multitask_strategy: Strategy = "enqueue"
    options: Mapping[str, object] = field(default_factory=dict[str, object])

    def request(self) -> RunCreate:
        """The `RunCreate` the runs API would parse for the same run; `InvalidRun` when it
        is not one (an unknown stream mode, input and command together…)."""
        body: dict[str, object] = {
            **self.options,
            "assistant_id": self.assistant_id,
            "stream_mode": list(self.stream_mode),
            "multitask_strategy": self.multitask_strategy,
        }
        if isinstance(self.turn, Message):
            body["input"] = self.turn.graph_input()
        elif isinstance(self.turn, Resume):
            body["command"] = {"resume": self.turn.value}
        for key, value in (
            ("context", self.context),
            ("config", self.config),
            ("metadata", self.metadata),
        ):
            if value is not None:
                body[key] = dict(value)
        try:
            return RunCreate.model_validate(body)
        except ValidationError as exc:
            raise InvalidRun(_reason(exc)) from None


def _reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    return f"{loc}: {first['msg']}" if loc else str(first["msg"])


class Runs:
    """Starting runs for a principal (cancel, join and the stored runs: the run manager
    and `run_records`)."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime

    async def start(self, access: Access, thread_id: str | None, run: RunStart | RunCreate) -> Job:
        """Accept the run on `thread_id` (None: a stateless run on a thread of its own) for
        `access`, which it executes as. The manager's errors pass through (`NotFound`,
        `Conflict` for a busy thread with `reject`, `TooManyRuns`…)."""
        req = run.request() if isinstance(run, RunStart) else run
        return await self.runtime.runs.create(thread_id, req, access)
