"""DeerFlow's Lark integration page (`/api/integrations/lark/*`), in its shapes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class LarkCli(BaseModel):
    available: bool
    path: str | None
    version: str | None
    error: str | None


class LarkAuth(BaseModel):
    status: Literal["authenticated", "not_authorized", "not_configured", "unavailable", "error"]
    message: str | None
    user: str | None
    verified: bool


class LarkStatus(BaseModel):
    installed: bool
    version: str
    manifest_version: str | None
    latest_available_version: str | None
    runtime_version_mismatch: bool
    app_configured: bool
    app_id: str | None
    app_brand: str | None
    skills_expected: int
    skills_installed: int
    installed_skills: list[str]
    enabled_skills: list[str]
    install_path: str
    cli: LarkCli
    auth: LarkAuth
    sandbox_runtime_mode: Literal["none", "gateway-download", "init-container", "broker"]
    sandbox_runtime_ready: bool
    sandbox_runtime_detail: str | None


class LarkActionResult(BaseModel):
    """An action of the page that Pronghorn does not do: `success: false` and why."""

    success: bool
    message: str
    generation: str
    status: LarkStatus
    installed_skills: list[str] | None = None
