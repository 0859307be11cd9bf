"""Feishu / Lark over the event subscription (HTTP callbacks) and the Open API.

Events arrive at `POST /api/channels/feishu/events`. An `{"encrypt": …}` body is decrypted
with the Encrypt Key (feishu/crypto.py); the Verification Token must match; the
`url_verification` handshake is answered with its challenge; every other event must carry a
valid `X-Lark-Signature` when an Encrypt Key is set. Schema 2.0 `im.message.receive_v1`
events (text, post, file and image messages) are handed to the channel at once (Feishu wants
an answer within 3 s); `header.event_id` dedupes redeliveries.

Replies are interactive cards (one Markdown element) edited in place with
`PATCH /open-apis/im/v1/messages/{id}`. In a group, a message starts a conversation rooted
at it: the bot replies to the root (`/messages/{root}/reply`), so the Feishu thread
(`root_id`) is one Pronghorn thread. A direct chat is one conversation (a topic thread in it,
one of its own). Files go up through `/open-apis/im/v1/files` (images through
`/open-apis/im/v1/images`) and are sent as `file` (`image`) messages; files users send
are fetched from `/messages/{id}/resources/{key}`. Calls carry the app's
tenant_access_token (feishu/token.py). With `receive: long_connection` the same
events arrive over a WebSocket the gateway opens instead (feishu/ws.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from typing import Any, cast

import httpx

from pronghorn.channels.errors import BadSignature, ChannelError, PlatformError
from pronghorn.channels.feishu.card import card, card_markdown, mention_text, post_text
from pronghorn.channels.feishu.crypto import decrypt, verify_signature
from pronghorn.channels.feishu.token import TOKEN_INVALID_CODES, tenant_token
from pronghorn.channels.feishu.ws import LongConnection
from pronghorn.channels.http_api import Backoff, as_json, call, read_capped
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import FeishuConfig

log = logging.getLogger("pronghorn.channels")

MESSAGE_EVENT = "im.message.receive_v1"
# Upload `file_type`s Feishu knows by extension; anything else is a plain `stream`.
_FILE_TYPES = {
    "pdf": "pdf",
    "doc": "doc",
    "docx": "doc",
    "xls": "xls",
    "xlsx": "xls",
    "ppt": "ppt",
    "pptx": "ppt",
    "mp4": "mp4",
    "opus": "opus",
}

# Artifacts of these types go up as images (shown inline), up to Feishu's 10 MB image limit.
_IMAGE_TYPES = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp"})
_IMAGE_MAX_BYTES = 10 * 1024 * 1024


class BadEvent(ChannelError):
    """A callback body that is not a Feishu event (not JSON, wrong shape)."""


def _json_map(raw: str | bytes, what: str) -> WireMap:
    try:
        value: object = json.loads(raw)
    except ValueError:
        raise BadEvent(f"{what} is not JSON") from None
    if not isinstance(value, Mapping):
        raise BadEvent(f"{what} is not a JSON object")
    return cast(WireMap, value)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("x-ogw-ratelimit-reset")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _file_ref(message_id: str, kind: str, key: str) -> str:
    return f"{message_id}/{kind}/{key}"


class FeishuTransport:
    name = "feishu"
    max_text = 6000  # well inside a card's 30 KB, even for CJK text
    supports_edit = True

    @property
    def exclusive(self) -> bool:
        """The long connection runs on one replica at a time (a lease); webhooks reach any."""
        return self.config.receive == "long_connection"

    def __init__(self, config: FeishuConfig) -> None:
        self.config = config
        self._base = config.api_base_url.rstrip("/")
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(30, connect=10))
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)
        self.tokens = tenant_token(
            self._client,
            self._base,
            config.app_id,
            config.app_secret.get_secret_value(),
            Backoff(config.retry_initial_s, config.retry_max_s),
        )
        self._sink: Sink | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.bot_open_id: str | None = None
        self.long_connection: LongConnection | None = None

    def edit_interval(self, target: Target) -> float:
        return self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return card_markdown(markdown)

    # -- Open API ---------------------------------------------------------------------------

    async def _api(
        self,
        verb: str,
        path: str,
        what: str,
        *,
        raw: bool = False,
        raise_on_limit: bool = False,
        **kwargs: Any,  # Any: httpx request options, passed through
    ) -> WireMap:
        """Call `path` with the tenant token (renewed once when refused); its `data`."""
        for attempt in (1, 2):
            token = await self.tokens.get()
            response = await call(
                self._client,
                what,
                f"{self._base}{path}",
                attempts=3,
                backoff=self._backoff,
                retry_after=_retry_after,
                method=verb,
                raise_on_limit=raise_on_limit,
                headers={"authorization": f"Bearer {token}"},
                **kwargs,
            )
            body = as_json(response, what)
            code = body.get("code")
            if code in TOKEN_INVALID_CODES and attempt == 1:
                log.info("feishu token refused, renewing", extra={"channel": "feishu"})
                self.tokens.invalidate(token)
                continue
            if code != 0:
                raise PlatformError(f"{what}: code {code} {body.get('msg') or ''}".strip())
            return body if raw else as_map(body.get("data"))
        raise AssertionError("unreachable")

    async def _watch_bot(self, report: ErrorReport) -> None:
        """Learn the bot's open_id (to tell its mentions and its own messages), retrying
        with backoff while the platform is unreachable."""
        backoff = Backoff(self.config.retry_initial_s, self.config.retry_max_s)
        while self.bot_open_id is None:
            try:
                body = await self._api("GET", "/open-apis/bot/v3/info", "bot info", raw=True)
            except PlatformError as exc:
                log.error("feishu bot info failed", extra={"channel": "feishu", "error": str(exc)})
                report(str(exc))
                await backoff.wait()
                continue
            self.bot_open_id = str(as_map(body.get("bot")).get("open_id") or "") or None
            if self.bot_open_id is None:
                report("bot info: no open_id")
                await backoff.wait()

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._sink = sink
        self._tasks.append(asyncio.create_task(self._watch_bot(report), name="feishu-bot-info"))
        if self.config.receive == "long_connection":
            self.long_connection = LongConnection(
                self._client,
                self._base,
                self.config.app_id,
                self.config.app_secret.get_secret_value(),
                Backoff(self.config.retry_initial_s, self.config.retry_max_s),
                self._take,
                report,
            )
            self._tasks.append(asyncio.create_task(self.long_connection.run(), name="feishu-ws"))

    async def stop(self) -> None:
        self._sink = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await self._client.aclose()

    # -- callbacks --------------------------------------------------------------------------

    def _open(self, body: bytes) -> WireMap:
        outer = _json_map(body, "body")
        encrypted = outer.get("encrypt")
        if encrypted is None:
            return outer
        key = self.config.encrypt_key
        if key is None:
            raise BadSignature("encrypted event, but no encrypt_key is configured")
        if not isinstance(encrypted, str):
            raise BadEvent("encrypt is not a string")
        return _json_map(decrypt(key.get_secret_value(), encrypted), "decrypted event")

    def _check_token(self, payload: WireMap) -> None:
        given = payload.get("token") or as_map(payload.get("header")).get("token") or ""
        token = self.config.verification_token
        expected = token.get_secret_value() if token is not None else ""
        if not expected or not isinstance(given, str) or not hmac.compare_digest(given, expected):
            raise BadSignature("verification token mismatch")

    def _check_signature(self, headers: Mapping[str, str], body: bytes) -> None:
        key = self.config.encrypt_key
        if key is None:
            return
        timestamp = headers.get("x-lark-request-timestamp", "")
        verify_signature(
            key.get_secret_value(),
            timestamp,
            headers.get("x-lark-request-nonce", ""),
            body,
            headers.get("x-lark-signature", ""),
        )
        try:
            age = abs(time.time() - int(timestamp))
        except ValueError:
            raise BadSignature("bad X-Lark-Request-Timestamp") from None
        if age > self.config.max_clock_skew_s:
            raise BadSignature("request timestamp too old")

    async def handle_webhook(self, headers: Mapping[str, str], body: bytes) -> WireDict:
        """Open, verify and take one callback; the JSON to answer with."""
        payload = self._open(body)
        self._check_token(payload)
        if payload.get("type") == "url_verification":
            return {"challenge": str(payload.get("challenge") or "")}
        self._check_signature(headers, body)
        await self._take(payload)
        return {"msg": "success"}

    async def _take(self, payload: WireMap) -> None:
        """An authenticated event (a verified callback, or from the long connection)."""
        header = as_map(payload.get("header"))
        if payload.get("schema") == "2.0" and header.get("event_type") == MESSAGE_EVENT:
            msg = self.parse(str(header.get("event_id") or ""), as_map(payload.get("event")))
            if msg is not None and self._sink is not None:
                await self._sink(msg)

    def parse(self, event_id: str, event: WireMap) -> Inbound | None:
        message, sender = as_map(event.get("message")), as_map(event.get("sender"))
        message_id = str(message.get("message_id") or "")
        chat_id = str(message.get("chat_id") or "")
        if not message_id or not chat_id:
            return None
        sender_id = as_map(sender.get("sender_id"))
        open_id = str(sender_id.get("open_id") or "")
        is_group = message.get("chat_type") != "p2p"
        mentions: dict[str, str] = {}
        mentioned = False
        for raw in cast(list[object], message.get("mentions") or []):
            m = as_map(raw)
            key, who = str(m.get("key") or ""), str(as_map(m.get("id")).get("open_id") or "")
            if not key:
                continue
            is_bot = self.bot_open_id is None or who == self.bot_open_id
            mentioned = mentioned or is_bot
            mentions[key] = "" if is_bot else f"@{m.get('name') or who}"
        content: WireMap
        try:
            content = as_map(json.loads(str(message.get("content") or "{}")))
        except ValueError:
            content = {}
        kind = message.get("message_type")
        text, files = "", list[InboundFile]()
        if kind == "text":
            text = mention_text(str(content.get("text") or ""), mentions)
        elif kind == "post":
            text, images = post_text(content, mentions)
            files = [
                InboundFile(f"image-{i}.png", _file_ref(message_id, "image", key))
                for i, key in enumerate(images, 1)
            ]
        elif kind == "file" and content.get("file_key"):
            name = str(content.get("file_name") or "file")
            files = [InboundFile(name, _file_ref(message_id, "file", str(content["file_key"])))]
        elif kind == "image" and content.get("image_key"):
            ref = _file_ref(message_id, "image", str(content["image_key"]))
            files = [InboundFile("image.png", ref)]
        else:
            return None  # stickers, audio, cards…: nothing the agent can read
        root = str(message.get("root_id") or "")
        if is_group:
            topic: str | None = root or message_id
        else:  # a direct chat is one conversation; a topic thread in it, its own
            topic = (root or message_id) if message.get("thread_id") else None
        return Inbound(
            delivery_id=event_id or message_id,
            chat_id=chat_id,
            user_id=open_id,
            text=text,
            topic_id=topic,
            is_group=is_group,
            mentioned=mentioned,
            from_bot=sender.get("sender_type") != "user"
            or (bool(open_id) and open_id == self.bot_open_id),
            files=tuple(files),
        )

    # -- sending ----------------------------------------------------------------------------

    async def _post(self, target: Target, msg_type: str, content: str, what: str) -> str:
        body: WireDict = {"msg_type": msg_type, "content": content}
        if target.topic_id:
            body["reply_in_thread"] = self.config.reply_in_thread and target.is_group
            path = f"/open-apis/im/v1/messages/{target.topic_id}/reply"
            data = await self._api("POST", path, what, json=body)
        else:
            body["receive_id"] = target.chat_id
            data = await self._api(
                "POST",
                "/open-apis/im/v1/messages",
                what,
                params={"receive_id_type": "chat_id"},
                json=body,
            )
        message_id = data.get("message_id")
        if not isinstance(message_id, str) or not message_id:
            raise PlatformError(f"{what}: no message_id")
        return message_id

    async def send(self, target: Target, text: str) -> Sent:
        message_id = await self._post(target, "interactive", card(text), "send message")
        return Sent(target.chat_id, message_id)

    async def edit(self, sent: Sent, text: str) -> None:
        path = f"/open-apis/im/v1/messages/{sent.message_id}"
        await self._api(
            "PATCH", path, "update message", raise_on_limit=True, json={"content": card(text)}
        )

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        if ext in _IMAGE_TYPES and len(data) <= _IMAGE_MAX_BYTES:  # shown inline
            fields = {"image_type": "message"}
            files = {"image": (name, data)}
            path = "/open-apis/im/v1/images"
            uploaded = await self._api("POST", path, "upload image", data=fields, files=files)
            image_key = uploaded.get("image_key")
            if not isinstance(image_key, str) or not image_key:
                raise PlatformError("upload image: no image_key")
            await self._post(target, "image", json.dumps({"image_key": image_key}), "send image")
            return
        fields = {"file_type": _FILE_TYPES.get(ext, "stream"), "file_name": name}
        files = {"file": (name, data)}
        path = "/open-apis/im/v1/files"
        uploaded = await self._api("POST", path, "upload file", data=fields, files=files)
        file_key = uploaded.get("file_key")
        if not isinstance(file_key, str) or not file_key:
            raise PlatformError("upload file: no file_key")
        await self._post(target, "file", json.dumps({"file_key": file_key}), "send file")

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        message_id, kind, key = [*file.ref.split("/", 2), "", ""][:3]
        if not message_id or kind not in ("file", "image") or not key:
            raise PlatformError(f"{file.name}: not a Feishu file")
        url = f"{self._base}/open-apis/im/v1/messages/{message_id}/resources/{key}"
        for attempt in (1, 2):
            token = await self.tokens.get()
            try:
                async with self._client.stream(
                    "GET",
                    url,
                    params={"type": kind},
                    headers={"authorization": f"Bearer {token}"},
                ) as response:
                    if response.status_code != 200:
                        await response.aread()
                        code = _code_of(response)
                        if code in TOKEN_INVALID_CODES and attempt == 1:
                            self.tokens.invalidate(token)
                            continue
                        raise PlatformError(
                            f"file download: HTTP {response.status_code} code {code}"
                        )
                    return await read_capped(response, file.name, max_bytes)
            except httpx.HTTPError as exc:
                raise PlatformError(f"file download: {type(exc).__name__}") from None
        raise PlatformError("file download: token refused")


def _code_of(response: httpx.Response) -> object:
    try:
        return as_json(response, "download").get("code")
    except PlatformError:
        return None
