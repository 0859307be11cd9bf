"""Accounts: users, sessions, API keys and the audit log (`/api/auth/...`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pronghorn.auth.principal import Role


class AuthUser(BaseModel):
    model_config = ConfigDict(title="User")

    id: str
    username: str
    email: str | None = Field(None, description="Optional; logs in like the username.")
    display_name: str | None
    role: Role
    disabled: bool
    created_at: str | None


class Session(BaseModel):
    """Who is signed in; `csrf_token` (to send as `X-CSRF-Token`) is null for an API key."""

    user: AuthUser
    csrf_token: str | None


class OidcOffer(BaseModel):
    label: str


class AuthConfig(BaseModel):
    mode: Literal["local", "none", "custom"]
    setup_required: bool
    oidc: OidcOffer | None


class ApiKeyRecord(BaseModel):
    id: str
    name: str
    prefix: str
    created_at: str | None
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


class ApiKeyCreated(ApiKeyRecord):
    key: str


class AuditEntry(BaseModel):
    id: int
    at: str | None
    actor: str | None
    action: str
    target: str | None
    client_ip: str | None
    detail: dict[str, object]
