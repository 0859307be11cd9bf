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


class Ok(BaseModel):
    ok: Literal[True]


class InfoFlags(BaseModel):
    assistants: bool
    crons: bool
    langsmith: bool


class Info(BaseModel):
    version: str
    server: str
    flags: InfoFlags
    graphs: list[str]


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
    replica_id: str | None = Field(default=None, description="This replica (admins only).")
    replicas: list[ReplicaCard] | None = Field(
        default=None, description="Every live replica (admins only)."
    )
    replicas_complete: bool | None = Field(
        default=None, description="False when the replica list could not be read in full."
    )
