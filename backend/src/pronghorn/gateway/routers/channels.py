"""`/api/channels/*`: IM channels' status and restart, the connect flow (a one-time code a
user sends to the bot as `/connect CODE`), their connections, and the Slack and Feishu
event webhooks.

`POST /api/channels/slack/events` is public: Slack calls it, and every request must carry
a valid `X-Slack-Signature`; so is `POST /api/channels/feishu/events` (Verification Token,
and `X-Lark-Signature` with an Encrypt Key); everything else needs a signed-in user
(restart: admins).
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from pronghorn.auth.principal import Principal
from pronghorn.channels.channel import Channel
from pronghorn.channels.channel_manager import PLATFORMS, ChannelManager
from pronghorn.channels.dispatcher import code_hash
from pronghorn.channels.errors import BadSignature, PlatformError, UnknownChannel
from pronghorn.channels.feishu.channel import BadEvent, FeishuTransport
from pronghorn.channels.slack.channel import SlackTransport
from pronghorn.channels.telegram.channel import TelegramTransport
from pronghorn.config.schema.channels import TelegramConfig
from pronghorn.gateway.deps import get_access, get_principal, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.channels import (
    ChannelConnections,
    ChannelStatus,
    ConnectCode,
    FeishuAnswer,
    SlackAnswer,
)
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.runtime.access import Access, principal_record
from pronghorn.runtime.services.channel_state import ChannelState
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/channels", tags=["channels"])


def get_channels(request: Request) -> ChannelManager:
    return request.app.state.channels


def _status(manager: ChannelManager, name: str, admin: bool) -> dict[str, object]:
    channel = manager.channels.get(name)
    section = getattr(manager.runtime.config.channels, name, None)
    out: dict[str, object] = {
        "name": name,
        "enabled": bool(section is not None and getattr(section, "enabled", False)),
        "running": bool(channel and channel.running),
        "standby": manager.standby(name),  # another replica runs its receiver (a lease)
        "last_error": channel.last_error if channel else None,
        "starts": manager.starts.get(name, 0),
    }
    if channel is not None:
        c = channel.counts
        out["counts"] = {
            "received": c.received,
            "replied": c.replied,
            "duplicates": c.duplicates,
            "refused": c.refused,
            "dropped_busy": c.dropped_busy,
            "errors": c.errors,
            "files_in": c.files_in,
            "files_out": c.files_out,
        }
    if admin and section is not None:
        out["config"] = section.model_dump(mode="json")  # secrets show as "**********"
    return out


@router.get(
    "",
    response_model=None,
    responses={**answers(list[ChannelStatus])},
)
async def list_channels(
    principal: Principal = Depends(get_principal),
    manager: ChannelManager = Depends(get_channels),
) -> list[dict[str, object]]:
    return [_status(manager, n, principal.is_admin) for n in manager.configured()]


@router.post(
    "/{name}/restart",
    response_model=None,
    responses={**answers(ChannelStatus), **errors(403, 404)},
)
async def restart_channel(
    name: str,
    principal: Principal = Depends(get_principal),
    manager: ChannelManager = Depends(get_channels),
) -> dict[str, object]:
    if not principal.is_admin:
        raise ApiError(403, "Admins only")
    try:
        await manager.restart(name)
    except UnknownChannel:
        raise ApiError(404, f"Channel {name!r} is not configured") from None
    return _status(manager, name, True)


@router.post(
    "/{name}/connect",
    response_model=None,
    responses={**answers(ConnectCode), **errors(404)},
)
async def connect_code(
    name: str,
    principal: Principal = Depends(get_principal),
    runtime: AppRuntime = Depends(get_runtime),
    manager: ChannelManager = Depends(get_channels),
) -> dict[str, object]:
    """A one-time code for the caller; sending `/connect CODE` to the bot binds that chat
    account to them."""
    if name not in PLATFORMS or ChannelManager.section(runtime.config, name) is None:
        raise ApiError(404, f"Channel {name!r} is not configured")
    code = secrets.token_urlsafe(12)
    expires = await ChannelState(runtime).add_code(
        code_hash=code_hash(code),
        channel=name,
        owner_id=principal.identity,
        principal=principal_record(principal),
        ttl_s=runtime.config.channels.connect_code_ttl_s,
    )
    command = f"/connect {code}"
    ttl = runtime.config.channels.connect_code_ttl_s
    out: dict[str, object] = {
        "channel": name,
        "code": code,
        "command": command,
        "expires_at": expires.isoformat(),
        "provider": name,
        "mode": "code",
        "url": None,
        "instruction": f"Send {command} to the bot",
        "expires_in": int(ttl),
    }
    username = await _telegram_username(manager, name)
    if username:
        out["deep_link"] = out["url"] = f"https://t.me/{username}?start={code}"
        out["mode"] = "deep_link"
    return out


async def _telegram_username(manager: ChannelManager, name: str) -> str:
    """The bot's username: from the running transport, or (on a standby replica) asked
    with one `getMe`; empty when unknown."""
    if name != "telegram":
        return ""
    channel: Channel | None = manager.channels.get(name)
    if channel is not None and isinstance(channel.transport, TelegramTransport):
        return channel.transport.username
    section = manager.section(manager.runtime.config, name)
    if not isinstance(section, TelegramConfig):
        return ""
    probe = TelegramTransport(section)
    try:
        return await probe.identify()
    except PlatformError:
        return ""
    finally:
        await probe.stop()


@router.get(
    "/connections",
    response_model=None,
    responses={**answers(ChannelConnections)},
)
async def connections(
    access: Access = Depends(get_access), runtime: AppRuntime = Depends(get_runtime)
) -> dict[str, list[dict[str, object]]]:
    """`{connections: [...]}`: the caller's connected chat accounts (an admin with
    all-users: everyone's), each in our field names and DeerFlow's."""
    rows = await ChannelState(runtime).bindings(access.owner_scope)
    return {
        "connections": [
            {
                "id": b.id,
                "channel": b.channel,
                "external_id": b.external_id,
                "external_name": b.external_name,
                "owner_id": b.owner_id,
                "created_at": b.created_at.isoformat(),
                "provider": b.channel,
                "status": "connected",
                "external_account_id": b.external_id,
                "external_account_name": b.external_name,
                "workspace_id": None,
                "workspace_name": None,
                "scopes": [],
                "metadata": {},
            }
            for b in rows
        ]
    }


@router.delete("/connections/{connection_id}", status_code=204, responses=errors(404))
async def revoke(
    connection_id: str,
    access: Access = Depends(get_access),
    runtime: AppRuntime = Depends(get_runtime),
) -> Response:
    if not await ChannelState(runtime).revoke_binding(connection_id, access.owner_scope):
        raise ApiError(404, f"Connection {connection_id} not found")
    return Response(status_code=204)


@router.post(
    "/slack/events",
    include_in_schema=True,
    response_model=SlackAnswer,
    responses=errors(401, 404),
)
async def slack_events(request: Request) -> JSONResponse:
    """Slack's Events API: signature checked, `url_verification` answered, events taken."""
    manager: ChannelManager = request.app.state.channels
    channel = manager.channels.get("slack")
    if channel is None or not isinstance(channel.transport, SlackTransport):
        raise ApiError(404, "The Slack channel is not running")
    body = await request.body()
    headers = {k.lower(): v for k, v in request.headers.items()}
    try:
        answer = await channel.transport.handle_webhook(headers, body)
    except BadSignature as exc:
        raise ApiError(401, f"Invalid Slack request: {exc}") from None
    return JSONResponse(answer)


@router.post(
    "/feishu/events",
    include_in_schema=True,
    response_model=FeishuAnswer,
    responses=errors(400, 401, 404),
)
async def feishu_events(request: Request) -> JSONResponse:
    """Feishu / Lark event callbacks: decrypted, token (and signature) checked, the
    `url_verification` challenge answered, message events taken."""
    manager: ChannelManager = request.app.state.channels
    channel = manager.channels.get("feishu")
    if channel is None or not isinstance(channel.transport, FeishuTransport):
        raise ApiError(404, "The Feishu channel is not running")
    if channel.transport.config.receive != "webhook":
        raise ApiError(404, "The Feishu channel receives over its long connection")
    body = await request.body()
    headers = {k.lower(): v for k, v in request.headers.items()}
    try:
        answer = await channel.transport.handle_webhook(headers, body)
    except BadSignature as exc:
        raise ApiError(401, f"Invalid Feishu request: {exc}") from None
    except BadEvent as exc:
        raise ApiError(400, f"Invalid Feishu request: {exc}") from None
    return JSONResponse(answer)
