"""The LangGraph Platform API's bodies (the reference OpenAPI's Assistant, Thread, Run, ...).

Field for field the reference's schemas, with what Pronghorn adds (`extra="allow"`: the
contract lets a server send more) and `null` where Pronghorn answers it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

JsonObject = dict[str, object]
"""A JSON object field of the API (documented as an object with any properties)."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Assistant(_Open):
    assistant_id: str = Field(description="The assistant's id (a UUID)")
    graph_id: str
    config: JsonObject
    context: JsonObject | None = None
    created_at: datetime
    updated_at: datetime
    metadata: JsonObject
    version: int | None = None
    name: str | None = None
    description: str | None = None


class AssistantVersion(_Open):
    """One version of an assistant (a version has no `updated_at`)."""

    assistant_id: str
    graph_id: str
    config: JsonObject
    context: JsonObject | None = None
    created_at: datetime
    metadata: JsonObject
    version: int
    name: str | None = None
    description: str | None = None


class AssistantSelection(_Open):
    """An assistant as `search` answers it: with `select`, only the selected fields."""

    assistant_id: str | None = None
    graph_id: str | None = None
    config: JsonObject | None = None
    context: JsonObject | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    metadata: JsonObject | None = None
    version: int | None = None
    name: str | None = None
    description: str | None = None


class GraphSchemaNoId(_Open):
    input_schema: JsonObject | None = None
    output_schema: JsonObject | None = None
    state_schema: JsonObject | None = None
    config_schema: JsonObject | None = None
    context_schema: JsonObject | None = None


class GraphSchema(GraphSchemaNoId):
    graph_id: str


class Subgraphs(RootModel[dict[str, GraphSchemaNoId]]):
    """The schemas of each subgraph, by namespace."""


class DrawableGraph(_Open):
    """`Graph.to_json()`: the nodes and edges of the graph."""

    nodes: list[JsonObject]
    edges: list[JsonObject]


ThreadStatus = Literal["idle", "busy", "interrupted", "error"]


class ThreadTTL(_Open):
    strategy: str
    ttl_minutes: float | None = None
    expires_at: datetime | None = None


class Thread(_Open):
    thread_id: str
    created_at: datetime
    updated_at: datetime
    state_updated_at: datetime | None = None
    metadata: JsonObject
    config: JsonObject | None = None
    status: ThreadStatus
    values: JsonObject | list[object] | None = None
    interrupts: JsonObject | None = None
    error: str | JsonObject | None = None
    ttl: ThreadTTL | None = Field(default=None, description="Only when asked for (`select`)")


class ThreadSelection(_Open):
    """A thread as `search` answers it: with `select`, only the selected fields."""

    thread_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    state_updated_at: datetime | None = None
    metadata: JsonObject | None = None
    config: JsonObject | None = None
    status: ThreadStatus | None = None
    values: JsonObject | list[object] | None = None
    interrupts: JsonObject | None = None
    error: str | JsonObject | None = None
    ttl: ThreadTTL | None = None
    extracted: JsonObject | None = Field(default=None, description="With `extract`")


class ThreadPruneResponse(BaseModel):
    pruned_count: int


class CheckpointConfig(_Open):
    thread_id: str | None = None
    checkpoint_ns: str | None = None
    checkpoint_id: str | None = None
    checkpoint_map: JsonObject | None = None


class Interrupt(_Open):
    id: str | None = None
    value: object = None


class ThreadTask(_Open):
    id: str
    name: str
    path: list[object] | None = None
    error: str | None = None
    interrupts: list[Interrupt] = Field(default_factory=list[Interrupt])
    checkpoint: CheckpointConfig | None = None
    state: ThreadState | None = None
    result: object = None


class ThreadState(_Open):
    """A thread's state at a checkpoint. With `select`, only the selected fields."""

    values: JsonObject | list[object] | None = None
    next: list[str] | None = None
    tasks: list[ThreadTask] | None = None
    checkpoint: CheckpointConfig | None = None
    metadata: JsonObject | None = None
    created_at: str | None = None
    parent_checkpoint: CheckpointConfig | None = None
    interrupts: list[Interrupt] | None = None
    checkpoint_id: str | None = None
    parent_checkpoint_id: str | None = None


class ThreadStateUpdateResponse(_Open):
    checkpoint: CheckpointConfig | None = None


RunStatus = Literal["pending", "running", "error", "success", "timeout", "interrupted"]
MultitaskStrategy = Literal["reject", "rollback", "interrupt", "enqueue"]


class RunUsage(BaseModel):
    input_tokens: int
    output_tokens: int
    total_tokens: int
    llm_calls: int


class Run(_Open):
    run_id: str
    thread_id: str | None
    assistant_id: str
    created_at: datetime
    updated_at: datetime
    status: RunStatus
    metadata: JsonObject
    kwargs: JsonObject
    multitask_strategy: MultitaskStrategy
    cancel_reason: str | None = None
    error: str | JsonObject | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    usage: RunUsage | None = None


class RunOutput(RootModel[object]):
    """What the run left: its thread's values (an object), or `{"__error__": ...}`."""


class Cron(_Open):
    cron_id: str
    assistant_id: str | None = None
    thread_id: str | None
    end_time: datetime | None
    schedule: str
    timezone: str | None = None
    enabled: bool
    on_run_completed: str | None = None
    created_at: datetime
    updated_at: datetime
    user_id: str | None = None
    payload: JsonObject
    next_run_date: datetime | None = None
    metadata: JsonObject | None = None


class Item(_Open):
    namespace: list[str]
    key: str
    value: JsonObject
    created_at: datetime
    updated_at: datetime


class SearchItem(Item):
    score: float | None = None


class SearchItemsResponse(BaseModel):
    items: list[SearchItem]


class ListNamespaceResponse(BaseModel):
    namespaces: list[list[str]]


ThreadTask.model_rebuild()


class RunSelection(_Open):
    """A run as the list answers it: with `select`, only the selected fields."""

    run_id: str | None = None
    thread_id: str | None = None
    assistant_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    status: RunStatus | None = None
    metadata: JsonObject | None = None
    kwargs: JsonObject | None = None
    multitask_strategy: MultitaskStrategy | None = None


class RunsCancel(BaseModel):
    """The body of `POST /runs/cancel`: `thread_id` and `run_ids`, or `status`."""

    thread_id: str | None = None
    run_ids: list[str] | None = None
    status: Literal["pending", "running", "all"] | None = None


class CronSelection(_Open):
    """A cron as `search` answers it: with `select`, only the selected fields."""

    cron_id: str | None = None
    assistant_id: str | None = None
    thread_id: str | None = None
    end_time: datetime | None = None
    schedule: str | None = None
    timezone: str | None = None
    enabled: bool | None = None
    on_run_completed: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    user_id: str | None = None
    payload: JsonObject | None = None
    next_run_date: datetime | None = None
    metadata: JsonObject | None = None
