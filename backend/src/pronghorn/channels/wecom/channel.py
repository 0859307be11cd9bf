"""WeCom (WeChat Work) through an internal app: callback mode in, the message API out.

WeCom calls `/api/channels/wecom/callback`: a GET to verify the URL (its `echostr`,
decrypted, is the answer) and a POST per message, an XML envelope whose `Encrypt` holds the
message (wecom/crypto.py). Both are signed (`msg_signature`); a POST must also be recent.
WeCom wants the answer within 5 seconds and retries otherwise, so a message is taken (handed
to the channel in a task of its own) and answered at once with an empty body; the reply goes
out later through `/cgi-bin/message/send`. `MsgId` dedupes the retries.

App messages cannot be edited, so there is no streaming preview: the final answer is sent
(split at WeCom's 2,048-byte limit) as Markdown. Files go up through
`/cgi-bin/media/upload` and are sent as `image` / `file` messages; images and videos users
send are fetched from `/cgi-bin/media/get`. Calls carry the app's access token
(`/cgi-bin/gettoken`, cached, renewed when refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any
from xml.etree import ElementTree

import httpx

from pronghorn.channels.access_token import AccessToken
from pronghorn.channels.errors import BadSignature, ChannelError, PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call, read_capped
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wecom.crypto import decrypt, verify
from pronghorn.channels.wire import WireDict
from pronghorn.config.schema.channels import WeComConfig

log = logging.getLogger("pronghorn.channels")

# errcodes meaning "this access token is missing, invalid or expired".
TOKEN_INVALID_CODES = frozenset({40014, 41001, 42001})
RATE_LIMITED_CODES = frozenset({45009, 45033})  # "api freq out of limit"
MAX_BYTES = 2048  # a text / markdown message's content, in UTF-8 bytes
_IMAGE_TYPES = frozenset({"png", "jpg", "jpeg"})
_IMAGE_MAX_BYTES = 10 * 1024 * 1024
_MAX_BODY = 1 << 20


class BadEvent(ChannelError):
    """A callback body that is not a WeCom envelope (not XML, wrong shape)."""


def _xml(raw: bytes | str, what: str) -> dict[str, str]:
    """The child elements of a flat WeCom XML document, by tag. Documents declaring a
    DTD are refused (no entity expansion of untrusted input)."""
    data = raw.encode() if isinstance(raw, str) else raw
    if len(data) > _MAX_BODY:
        raise BadEvent(f"{what} is too large")
    if b"<!DOCTYPE" in data.upper() or b"<!ENTITY" in data.upper():
        raise BadEvent(f"{what} declares a DTD")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError:
        raise BadEvent(f"{what} is not XML") from None
    return {child.tag: (child.text or "") for child in root}


def split_bytes(text: str, limit: int = MAX_BYTES) -> list[str]:
    """`text` in pieces of at most `limit` UTF-8 bytes, cut at a line break when one is near."""
    pieces: list[str] = []
    rest = text
    while len(rest.encode()) > limit:
        cut = len(rest.encode()[:limit].decode("utf-8", errors="ignore"))
        nl = rest.rfind("\n", 0, cut)
        if nl > cut // 2:
            cut = nl + 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    pieces.append(rest)
    return [p for p in pieces if p.strip()] or [text[:1] or " "]


class WeComTransport:
    name = "wecom"
    max_text = 4000  # split again by bytes in `send`
    supports_edit = False
    exclusive = False  # callbacks reach every replica

    def __init__(self, config: WeComConfig) -> None:
        self.config = config
        self._base = config.api_base_url.rstrip("/")
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(30, connect=10))
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)
        self.tokens = AccessToken(self._fetch_token)
        self._sink: Sink | None = None
        self._taking: set[asyncio.Task[None]] = set()

    def edit_interval(self, target: Target) -> float:
        return self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return markdown

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._sink = sink

    async def stop(self) -> None:
        self._sink = None
        for task in list(self._taking):
            task.cancel()
        for task in list(self._taking):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._client.aclose()

    # -- API --------------------------------------------------------------------------------

    async def _fetch_token(self) -> tuple[str, float]:
        response = await call(
            self._client,
            "gettoken",
            f"{self._base}/cgi-bin/gettoken",
            attempts=3,
            backoff=self._backoff,
            method="GET",
            params={
                "corpid": self.config.corp_id,
                "corpsecret": self.config.secret.get_secret_value(),
            },
        )
        body = as_json(response, "gettoken")
        token, ttl = body.get("access_token"), body.get("expires_in")
        if body.get("errcode") != 0 or not isinstance(token, str) or not token:
            raise PlatformError(f"gettoken: errcode {body.get('errcode')} {body.get('errmsg', '')}")
        return token, float(ttl) if isinstance(ttl, (int, float)) and ttl > 0 else 7200.0

    async def _api(
        self,
        path: str,
        what: str,
        params: Mapping[str, str] | None = None,
        **kwargs: Any,  # Any: httpx request options, passed through
    ) -> WireDict:
        """POST `path` with the access token (renewed once when refused; a rate limit
        waited out with backoff); the answer, errcode 0."""
        renewed = False
        limited = 0
        while True:
            token = await self.tokens.get()
            response = await call(
                self._client,
                what,
                f"{self._base}{path}",
                attempts=3,
                backoff=self._backoff,
                params={**(params or {}), "access_token": token},
                **kwargs,
            )
            body = as_json(response, what)
            code = body.get("errcode")
            if code in TOKEN_INVALID_CODES and not renewed:
                log.info("wecom token refused, renewing", extra={"channel": "wecom"})
                self.tokens.invalidate(token)
                renewed = True
                continue
            if code in RATE_LIMITED_CODES and limited < 2:
                limited += 1
                log.warning("wecom rate limit, retrying", extra={"channel": "wecom"})
                await self._backoff.wait()
                continue
            if code != 0:
                raise PlatformError(f"{what}: errcode {code} {body.get('errmsg') or ''}".strip())
            self._backoff.reset()
            return body

    async def _message(self, target: Target, msgtype: str, content: dict[str, str]) -> str:
        body = {
            "touser": target.chat_id,
            "msgtype": msgtype,
            "agentid": self.config.agent_id,
            msgtype: content,
        }
        answer = await self._api("/cgi-bin/message/send", f"send {msgtype}", json=body)
        return str(answer.get("msgid") or "")

    async def send(self, target: Target, text: str) -> Sent:
        message_id = ""
        for piece in split_bytes(text):
            message_id = await self._message(target, "markdown", {"content": piece})
        return Sent(target.chat_id, message_id)

    async def edit(self, sent: Sent, text: str) -> None:
        raise PlatformError("WeCom app messages cannot be edited")

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        kind = "image" if ext in _IMAGE_TYPES and len(data) <= _IMAGE_MAX_BYTES else "file"
        uploaded = await self._api(
            "/cgi-bin/media/upload",
            f"upload {kind}",
            params={"type": kind},
            files={"media": (name, data, "application/octet-stream")},
        )
        media_id = uploaded.get("media_id")
        if not isinstance(media_id, str) or not media_id:
            raise PlatformError(f"upload {kind}: no media_id")
        await self._message(target, kind, {"media_id": media_id})

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        for attempt in (1, 2):
            token = await self.tokens.get()
            try:
                async with self._client.stream(
                    "GET",
                    f"{self._base}/cgi-bin/media/get",
                    params={"access_token": token, "media_id": file.ref},
                ) as response:
                    kind = response.headers.get("content-type", "")
                    refused = kind.startswith(("application/json", "text/"))
                    if response.status_code != 200 or refused:
                        await response.aread()
                        code = _errcode(response)
                        if code in TOKEN_INVALID_CODES and attempt == 1:
                            self.tokens.invalidate(token)
                            continue
                        raise PlatformError(
                            f"file download: HTTP {response.status_code} errcode {code}"
                        )
                    return await read_capped(response, file.name, max_bytes)
            except httpx.HTTPError as exc:
                raise PlatformError(f"file download: {type(exc).__name__}") from None
        raise PlatformError("file download: token refused")

    # -- callbacks --------------------------------------------------------------------------

    def _verify(self, query: Mapping[str, str], encrypted: str) -> None:
        verify(
            self.config.token.get_secret_value(),
            query.get("timestamp", ""),
            query.get("nonce", ""),
            encrypted,
            query.get("msg_signature", ""),
        )

    def _decrypt(self, encrypted: str) -> bytes:
        return decrypt(
            self.config.encoding_aes_key.get_secret_value(), self.config.corp_id, encrypted
        )

    def verify_url(self, query: Mapping[str, str]) -> str:
        """The URL check: `echostr` verified and decrypted (the answer WeCom expects)."""
        echo = query.get("echostr", "")
        if not echo:
            raise BadEvent("echostr is missing")
        self._verify(query, echo)
        return self._decrypt(echo).decode("utf-8", errors="replace")

    async def handle_callback(self, query: Mapping[str, str], body: bytes) -> None:
        """Open and verify one message callback and take it, without waiting for the
        channel (WeCom's 5-second window)."""
        envelope = _xml(body, "body")
        encrypted = envelope.get("Encrypt", "")
        if not encrypted:
            raise BadEvent("Encrypt is missing")
        self._verify(query, encrypted)
        try:
            age = abs(time.time() - int(query.get("timestamp", "")))
        except ValueError:
            raise BadSignature("bad timestamp") from None
        if age > self.config.max_clock_skew_s:
            raise BadSignature("callback timestamp too old")
        message = _xml(self._decrypt(encrypted), "message")
        msg, sink = self.parse(message), self._sink
        if msg is None or sink is None:
            return

        async def take(msg: Inbound = msg) -> None:
            await sink(msg)

        task = asyncio.create_task(take(), name="wecom-take")
        self._taking.add(task)
        task.add_done_callback(self._taking.discard)

    def parse(self, message: Mapping[str, str]) -> Inbound | None:
        agent = message.get("AgentID", "")
        if agent and agent != str(self.config.agent_id):
            return None  # another app of the company
        user = message.get("FromUserName", "")
        kind = message.get("MsgType", "")
        if not user:
            return None
        text, files = "", list[InboundFile]()
        if kind == "text":
            text = message.get("Content", "")
        elif kind == "image" and message.get("MediaId"):
            files = [InboundFile("image.jpg", message["MediaId"])]
        elif kind == "video" and message.get("MediaId"):
            files = [InboundFile("video.mp4", message["MediaId"])]
        elif kind == "file" and message.get("MediaId"):
            files = [InboundFile(message.get("FileName") or "file", message["MediaId"])]
        else:
            return None  # events (entering the app…), voice, location, links
        msg_id = message.get("MsgId") or f"{user}:{message.get('CreateTime', '')}"
        return Inbound(
            delivery_id=msg_id,
            chat_id=user,
            user_id=user,
            text=text,
            user_name=user,
            files=tuple(files),
        )


def _errcode(response: httpx.Response) -> object:
    try:
        return as_json(response, "download").get("errcode")
    except PlatformError:
        return None
