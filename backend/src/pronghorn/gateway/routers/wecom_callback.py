"""`/api/channels/wecom/callback`: WeCom's callback mode (docs/channels.md, WeCom).

Public: WeCom calls it, and every request must carry a valid `msg_signature` (SHA-1 over the
callback Token, timestamp, nonce and the encrypted payload). `GET` is the URL check (the
decrypted `echostr` is the answer, as plain text); `POST` is a message, taken without
waiting for the agent and answered with an empty body within WeCom's 5-second window.
Not in the OpenAPI document: it speaks WeCom's protocol (XML, plain text), not ours.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from pronghorn.channels.channel_manager import ChannelManager
from pronghorn.channels.errors import BadSignature
from pronghorn.channels.wecom.channel import BadEvent, WeComTransport
from pronghorn.gateway.errors import ApiError

router = APIRouter(prefix="/api/channels", tags=["channels"])


def _transport(request: Request) -> WeComTransport:
    manager: ChannelManager = request.app.state.channels
    channel = manager.channels.get("wecom")
    if channel is None or not isinstance(channel.transport, WeComTransport):
        raise ApiError(404, "The WeCom channel is not running")
    return channel.transport


@router.get("/wecom/callback", include_in_schema=False)
async def wecom_verify(request: Request) -> PlainTextResponse:
    """The URL check WeCom makes when the callback is saved."""
    transport = _transport(request)
    try:
        echo = transport.verify_url(dict(request.query_params))
    except BadSignature as exc:
        raise ApiError(401, f"Invalid WeCom request: {exc}") from None
    except BadEvent as exc:
        raise ApiError(400, f"Invalid WeCom request: {exc}") from None
    return PlainTextResponse(echo)


@router.post("/wecom/callback", include_in_schema=False)
async def wecom_message(request: Request) -> PlainTextResponse:
    """A message (or event) from WeCom: verified, decrypted and taken."""
    transport = _transport(request)
    body = await request.body()
    try:
        await transport.handle_callback(dict(request.query_params), body)
    except BadSignature as exc:
        raise ApiError(401, f"Invalid WeCom request: {exc}") from None
    except BadEvent as exc:
        raise ApiError(400, f"Invalid WeCom request: {exc}") from None
    return PlainTextResponse("")
