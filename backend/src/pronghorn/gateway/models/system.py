"""Health, readiness, server info and config status."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Health(BaseModel):
    status: Literal["ok"]


class ReadyChecks(BaseModel):
    database: bool
    broker: bool


class Ready(BaseModel):
    status: Literal["ok", "unavailable"]
    checks: ReadyChecks
    settles_waiting: int = Field(
        description=(
            "Writes of runs that wait for the database to be back: their last checkpoints "
            "or their settle (runs.settle_wait_s). Not 0 only while the database is away."
        )
    )


class Ok(BaseModel):
    ok: Literal[True]


class InfoFlags(BaseModel):
    assistants: bool
    crons: bool
    langsmith: bool


class GraphProblemInfo(BaseModel):
    """A configured graph that failed to load (or to reload)."""

    graph_id: str
    spec: str
    error: str
    previous_serving: bool = Field(
        description="A reload failed and the graph's last good version still serves."
    )


class Info(BaseModel):
    version: str
    server: str
    flags: InfoFlags
    graphs: list[str] = Field(description="The graphs that serve.")
    graph_errors: list[GraphProblemInfo] = Field(
        default_factory=list, description="Configured graphs that failed to load."
    )


class GraphReloadInfo(BaseModel):
    at: str
    added: list[str]
    changed: list[str]
    removed: list[str]
    failed: list[str]


class GraphsStatus(BaseModel):
    loaded: list[str] = Field(description="The graphs that serve.")
    failed: list[GraphProblemInfo]
    last_reload: GraphReloadInfo | None = Field(
        default=None, description="What the last live reload of graphs applied."
    )


class ReplicaCard(BaseModel):
    """One live gateway replica: which config version it runs, and its load."""

    replica_id: str
    host: str
    pid: int
    config_version: str
    started_at: str
    last_seen: str
    runs_active: int


class ConfigStatus(BaseModel):
    version_hash: str
    loaded_at: str
    source_path: str | None
    last_error: str | None
    restart_required: list[str]
    graphs: GraphsStatus | None = Field(default=None, description="This replica's graphs.")
    replica_id: str | None = Field(default=None, description="This replica (admins only).")
    replicas: list[ReplicaCard] | None = Field(
        default=None, description="Every live replica (admins only)."
    )
    replicas_complete: bool | None = Field(
        default=None, description="False when the replica list could not be read in full."
    )
