"""Health, readiness, server info and config status."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


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


class ConfigStatus(BaseModel):
    version_hash: str
    loaded_at: str
    source_path: str | None
    last_error: str | None
    restart_required: list[str]
