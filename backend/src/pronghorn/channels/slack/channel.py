"""Slack over the HTTP Events API (https://api.slack.com/apis/events-api) and the Web API.

Events arrive at `POST /api/channels/slack/events`: the signature (`X-Slack-Signature`, an
HMAC-SHA256 of `v0:{timestamp}:{body}` with the signing secret) and the timestamp's age
are checked first, `url_verification` is answered with its challenge, and messages are
handed to the channel at once (Slack wants an answer within 3 s). Replies go through
`chat.postMessage` / `chat.update` and files through the external upload flow, all at
`{api_base_url}/{method}`. A top-level message in a channel starts a conversation in its
Slack thread (`thread_ts`); a direct message chat is one conversation.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import httpx

from pronghorn.channels.errors import BadSignature, PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call, download_capped
from pronghorn.channels.render import slack_mrkdwn
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import SlackConfig

log = logging.getLogger("pronghorn.channels")

# Message subtypes that are not a person writing (edits, joins, bots...).
_SKIP_SUBTYPES = {"bot_message", "message_changed", "message_deleted", "channel_join"}


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class SlackTransport:
    name = "slack"
    exclusive = False  # events arrive by webhook at any replica
    max_text = 4000
    supports_edit = True

    def __init__(self, config: SlackConfig) -> None:
        self.config = config
        self._base = config.api_base_url.rstrip("/")
        self._token = config.bot_token.get_secret_value()
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(30, connect=10),
            headers={"authorization": f"Bearer {self._token}"},
        )
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)
        self._sink: Sink | None = None
        self._report: ErrorReport | None = None
        self.bot_user_id: str | None = None

    def edit_interval(self, target: Target) -> float:
        return self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return slack_mrkdwn(markdown)

    # Any: httpx request options (json=, data=, files=...), passed through
    async def _call(self, method: str, raise_on_limit: bool = False, **kwargs: Any) -> WireDict:
        response = await call(
            self._client,
            method,
            f"{self._base}/{method}",
            attempts=3,
            raise_on_limit=raise_on_limit,
            backoff=self._backoff,
            retry_after=lambda r: float(r.headers.get("retry-after", 0) or 0) or None,
            **kwargs,
        )
        body = as_json(response, method)
        if not body.get("ok"):
            raise PlatformError(f"{method}: {body.get('error') or response.status_code}")
        return body

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._sink, self._report = sink, report
        try:
            me = await self._call("auth.test")
            self.bot_user_id = str(me.get("user_id") or "") or None
        except PlatformError as exc:  # events are still received; mentions by id wait
            log.error("slack auth.test failed", extra={"channel": "slack", "error": str(exc)})
            report(str(exc))

    async def stop(self) -> None:
        self._sink = None
        await self._client.aclose()

    # -- webhook ----------------------------------------------------------------------------

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        try:
            age = abs(time.time() - int(timestamp))
        except ValueError:
            raise BadSignature("missing or bad X-Slack-Request-Timestamp") from None
        if age > self.config.max_clock_skew_s:
            raise BadSignature("request timestamp too old")
        secret = self.config.signing_secret
        if secret is None:
            raise BadSignature("no signing secret configured")
        expected = sign(secret.get_secret_value(), timestamp, body)
        if not hmac.compare_digest(expected, signature):
            raise BadSignature("signature mismatch")

    async def handle_webhook(self, headers: Mapping[str, str], body: bytes) -> WireDict:
        """Verify and take one Events API request; the JSON to answer with."""
        self.verify(headers, body)
        try:
            payload = as_map(json.loads(body))
        except ValueError:
            raise BadSignature("body is not JSON") from None
        kind = payload.get("type")
        if kind == "url_verification":
            return {"challenge": str(payload.get("challenge", ""))}
        if kind == "event_callback":
            await self.take(payload)
        return {"ok": True}

    async def take(self, payload: WireMap) -> None:
        """Hand the message of one `event_callback` payload (webhook or socket) to the sink."""
        if self._sink is None:
            return
        msg = self.parse(as_map(payload.get("event")))
        if msg is not None:
            await self._sink(msg)

    def parse(self, event: WireMap) -> Inbound | None:
        if event.get("type") not in ("message", "app_mention"):
            return None
        subtype = event.get("subtype")
        if subtype in _SKIP_SUBTYPES:
            return None
        text = str(event.get("text") or "")
        user = str(event.get("user") or "")
        channel = str(event.get("channel") or "")
        ts = str(event.get("ts") or "")
        if not channel or not ts:
            return None
        is_group = event.get("channel_type") not in ("im",)
        mention = f"<@{self.bot_user_id}>" if self.bot_user_id else None
        mentioned = event.get("type") == "app_mention" or bool(mention and mention in text)
        if is_group and event.get("type") == "message" and mentioned:
            return None  # the app_mention event of the same message carries it
        thread_ts = event.get("thread_ts")
        topic = str(thread_ts) if thread_ts else (ts if is_group else None)
        files = tuple(
            InboundFile(
                str(as_map(f).get("name") or "file"),
                str(as_map(f).get("url_private_download") or as_map(f).get("url_private") or ""),
                as_map(f).get("size"),
            )
            for f in cast(list[object], event.get("files") or [])
            if as_map(f).get("url_private_download") or as_map(f).get("url_private")
        )
        return Inbound(
            delivery_id=f"{channel}:{ts}",
            chat_id=channel,
            user_id=user,
            text=text,
            topic_id=topic,
            is_group=is_group,
            mentioned=mentioned,
            from_bot=bool(event.get("bot_id")) or (user != "" and user == self.bot_user_id),
            files=files,
        )

    # -- sending ----------------------------------------------------------------------------

    async def send(self, target: Target, text: str) -> Sent:
        body: WireDict = {"channel": target.chat_id, "text": text}
        if target.topic_id:
            body["thread_ts"] = target.topic_id
        result = await self._call("chat.postMessage", json=body)
        return Sent(str(result.get("channel") or target.chat_id), str(result.get("ts")))

    async def edit(self, sent: Sent, text: str) -> None:
        await self._call(
            "chat.update",
            raise_on_limit=True,
            json={"channel": sent.chat_id, "ts": sent.message_id, "text": text},
        )

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        ticket = await self._call(
            "files.getUploadURLExternal", data={"filename": name, "length": str(len(data))}
        )
        url, file_id = str(ticket.get("upload_url")), str(ticket.get("file_id"))
        try:
            response = await self._client.post(url, files={"file": (name, data)})
        except httpx.HTTPError as exc:
            raise PlatformError(f"file upload: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise PlatformError(f"file upload: HTTP {response.status_code}")
        body: WireDict = {
            "files": [{"id": file_id, "title": name}],
            "channel_id": target.chat_id,
        }
        if target.topic_id:
            body["thread_ts"] = target.topic_id
        await self._call("files.completeUploadExternal", json=body)

    def _is_file_host(self, url: str) -> bool:
        host = (urlsplit(url).hostname or "").lower()
        own = (urlsplit(self._base).hostname or "").lower()
        return host == own or host == "slack.com" or host.endswith(".slack.com")

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        if not self._is_file_host(file.ref):  # the bot token goes to Slack only
            raise PlatformError(f"{file.name}: not a Slack file URL")
        return await download_capped(
            self._client, file.ref, file.name, max_bytes, follow_redirects=False
        )
