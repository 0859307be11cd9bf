"""`/api/integrations/lark/*`: DeerFlow's Lark/Feishu integration page, answered from the
Feishu channel's config and state.

DeerFlow's page installs the Lark CLI and its skills and authorizes it by device code.
Pronghorn has no CLI integration: Feishu/Lark is an IM channel configured in config.yaml
(`channels.feishu`). So the status says what that channel is (configured, its app id and
brand, running or failing), the CLI parts say "not installed", and the page's actions
answer `success: false` with a message pointing at the config. (Its device-code flows,
`auth/start` and `config/start`, are offered only once the CLI is installed: never here.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Depends, Request

from pronghorn.config.schema.channels import FeishuConfig
from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.models.integrations import LarkActionResult, LarkStatus
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from pronghorn.channels.channel import Channel
    from pronghorn.channels.channel_manager import ChannelManager

router = APIRouter(
    prefix="/api/integrations/lark",
    tags=["integrations"],
    dependencies=[Depends(get_access)],  # signed-in callers only
)

HOW_TO = (
    "Pronghorn talks to Feishu/Lark as an IM channel: set channels.feishu (app_id, "
    "app_secret) in config.yaml; there is no Lark CLI to install here."
)


def _channel_state(
    request: Request, runtime: AppRuntime
) -> tuple[FeishuConfig | None, Channel | None]:
    section = runtime.config.channels.feishu
    manager: ChannelManager | None = getattr(request.app.state, "channels", None)
    channel = manager.channels.get("feishu") if manager is not None else None
    return section, channel


def lark_status(request: Request, runtime: AppRuntime) -> dict[str, object]:
    """DeerFlow's `LarkIntegrationStatus`, filled from `channels.feishu`."""
    section, channel = _channel_state(request, runtime)
    running = bool(channel is not None and channel.running)
    last_error: str | None = channel.last_error if channel is not None else None
    if section is None:
        auth = ("not_configured", "channels.feishu is not set in config.yaml")
    elif not section.enabled:
        auth = ("unavailable", "channels.feishu is disabled in config.yaml")
    elif running:
        auth = ("authenticated", "The Feishu/Lark channel is running")
    elif last_error:
        auth = ("error", last_error)
    else:
        auth = ("unavailable", "The Feishu/Lark channel is not running")
    brand = None
    if section is not None:
        brand = "lark" if "larksuite" in section.api_base_url else "feishu"
    return {
        "installed": False,
        "version": "",
        "manifest_version": None,
        "latest_available_version": None,
        "runtime_version_mismatch": False,
        "app_configured": section is not None,
        "app_id": section.app_id if section is not None else None,
        "app_brand": brand,
        "skills_expected": 0,
        "skills_installed": 0,
        "installed_skills": [],
        "enabled_skills": [],
        "install_path": "",
        "cli": {"available": False, "path": None, "version": None, "error": HOW_TO},
        "auth": {
            "status": auth[0],
            "message": auth[1],
            "user": None,
            "verified": auth[0] == "authenticated",
        },
        "sandbox_runtime_mode": "none",
        "sandbox_runtime_ready": False,
        "sandbox_runtime_detail": None,
    }


@router.get("/status", response_model=LarkStatus)
async def status(request: Request, runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    """The Feishu/Lark channel's state from config (`app_configured`, `app_id`,
    `app_brand`; `auth.status` authenticated while the channel runs)."""
    return JSONResponse(lark_status(request, runtime))


def _not_here(request: Request, runtime: AppRuntime, with_skills: bool) -> JSONResponse:
    body: dict[str, object] = {
        "success": False,
        "message": HOW_TO,
        "generation": "",
        "status": lark_status(request, runtime),
    }
    if with_skills:
        body["installed_skills"] = []
    return JSONResponse(body)


@router.post("/install", response_model=LarkActionResult)
async def install(request: Request, runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    """`success: false`: nothing to install; the message says how to set the channel up."""
    return _not_here(request, runtime, with_skills=True)


@router.post("/config/complete", response_model=LarkActionResult)
async def config_complete(
    request: Request, runtime: AppRuntime = Depends(get_runtime)
) -> JSONResponse:
    return _not_here(request, runtime, with_skills=False)


@router.post("/config/credentials", response_model=LarkActionResult)
async def config_credentials(
    request: Request, runtime: AppRuntime = Depends(get_runtime)
) -> JSONResponse:
    """`success: false`: credentials live in config.yaml (`channels.feishu`), not here."""
    return _not_here(request, runtime, with_skills=False)


@router.post("/auth/complete", response_model=LarkActionResult)
async def auth_complete(
    request: Request, runtime: AppRuntime = Depends(get_runtime)
) -> JSONResponse:
    return _not_here(request, runtime, with_skills=False)
