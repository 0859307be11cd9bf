"""Response shapes of `/api/v1/auth/*`, as DeerFlow's `core/auth` code reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class DeerFlowUser(BaseModel):
    id: str
    email: str
    system_role: Literal["admin", "user"]
    needs_setup: bool
    oauth_provider: str | None


class DeerFlowSetupStatus(BaseModel):
    needs_setup: bool
    registration_enabled: bool


class DeerFlowProvider(BaseModel):
    id: str
    display_name: str
    type: str


class DeerFlowProviders(BaseModel):
    providers: list[DeerFlowProvider]


class DeerFlowLogin(BaseModel):
    expires_in: int
    needs_setup: bool


class DeerFlowMessage(BaseModel):
    message: str
