"""The chat models a run may name (`/api/models`)."""

from __future__ import annotations

from pydantic import BaseModel


class ModelInfo(BaseModel):
    name: str
    display_name: str
    provider: str
    model: str
    supports_vision: bool
    supports_thinking: bool
    is_default: bool
    is_demo: bool


class ModelList(BaseModel):
    models: list[ModelInfo]
    default: str | None
