"""The body of POST …/runs, …/runs/stream, …/runs/wait (and cron payloads), validated.

Unknown fields are accepted and ignored (the SDKs keep adding fields); absent fields get the
reference server's defaults.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pronghorn.runtime.engine.request_fields import CheckpointDict

STREAM_MODES = {
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "events",
    "debug",
    "tasks",
    "checkpoints",
}

# What GET /threads/{id}/stream accepts (a different set: it streams every run of a thread).
THREAD_STREAM_MODES = {"run_modes", "lifecycle", "state_update"}


def check_stream_modes(modes: list[str], allowed: set[str] = STREAM_MODES) -> list[str]:
    """``modes`` without duplicates, or ValueError naming the first unknown one."""
    bad = [m for m in modes if m not in allowed]
    if bad:
        raise ValueError(
            f"unknown stream_mode {bad[0]!r}; expected one of {', '.join(sorted(allowed))}"
        )
    return list(dict.fromkeys(modes))


class RunCommand(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # JSON as the client sent it: LangGraph's Command checks it
    resume: object = None
    update: object = None
    goto: object = None


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    assistant_id: str = Field(min_length=1)
    input: object = None  # JSON: the graph's input, any shape it takes
    command: RunCommand | None = None
    config: dict[str, object] | None = None
    context: dict[str, object] | None = None
    metadata: dict[str, object] | None = None
    stream_mode: list[str] | str = Field(default_factory=lambda: ["values"])
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    interrupt_before: list[str] | Literal["*"] | None = None
    interrupt_after: list[str] | Literal["*"] | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] = "enqueue"
    if_not_exists: Literal["reject", "create"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    checkpoint_id: str | None = None
    checkpoint: CheckpointDict | None = None
    webhook: str | None = None
    feedback_keys: list[str] | None = None
    after_seconds: float | None = Field(default=None, ge=0)
    durability: Literal["sync", "async", "exit"] | None = None
    checkpoint_during: bool | None = None

    @field_validator("stream_mode", mode="before")
    @classmethod
    def _modes(cls, value: object) -> object:
        if value is None:
            return ["values"]
        return value

    @model_validator(mode="after")
    def _check(self) -> RunCreate:
        modes = [self.stream_mode] if isinstance(self.stream_mode, str) else self.stream_mode
        self.stream_mode = check_stream_modes(modes) or ["values"]
        if self.command is not None and self.input is not None:
            raise ValueError("input and command are mutually exclusive")
        if self.webhook is not None and not self.webhook.startswith(("http://", "https://")):
            raise ValueError("webhook must be an http(s) URL")
        return self

    @property
    def modes(self) -> list[str]:
        assert isinstance(self.stream_mode, list)
        return self.stream_mode

    def kwargs(self) -> dict[str, object]:
        """What the Run object echoes back as `kwargs`."""
        return {
            "input": self.input,
            "command": self.command.model_dump(exclude_none=True) if self.command else None,
            "config": self.config or {},
            "context": self.context or {},
            "stream_mode": self.modes,
            "interrupt_before": self.interrupt_before,
            "interrupt_after": self.interrupt_after,
            "webhook": self.webhook,
            "feedback_keys": self.feedback_keys,
            "temporary": False,
            "subgraphs": self.stream_subgraphs,
            "resumable": self.stream_resumable,
            "checkpoint_id": self.checkpoint_id,
            "checkpoint": self.checkpoint,
            "durability": self.durability,
            "on_disconnect": self.on_disconnect,
        }
