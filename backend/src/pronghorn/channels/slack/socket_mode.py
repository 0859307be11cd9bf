"""Slack over Socket Mode (https://api.slack.com/apis/socket-mode): no public URL needed.

`POST {api_base_url}/apps.connections.open` with the app-level token (xapp-…) returns a
one-use WebSocket URL; the gateway connects and Slack pushes envelopes over it:

- `hello`: the connection is ready;
- `events_api`: an Events API payload (`event_callback`), `slash_commands`: a slash
  command's form fields. Each is acknowledged at once with `{"envelope_id": …}` (Slack
  redelivers, with `retry_attempt`, what is not acknowledged in time), then handed to the
  channel exactly like a webhook event, so the dispatcher's dedupe runs a redelivery once;
- `disconnect`: Slack is about to close this connection: open a fresh URL and reconnect.

A socket that drops (or a failed `apps.connections.open`) is retried with backoff
(`retry_initial_s` doubling to `retry_max_s`) and reported in the channel status. Replies
still go through the Web API with the bot token (SlackTransport).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from pronghorn.channels.errors import BadSignature, PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call
from pronghorn.channels.slack.channel import SlackTransport
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import SlackConfig

log = logging.getLogger("pronghorn.channels")

MAX_FRAME = 4 * 1024 * 1024


class SlackSocketTransport(SlackTransport):
    exclusive = True  # one socket at a time across replicas (a lease), not a webhook

    def __init__(self, config: SlackConfig) -> None:
        super().__init__(config)
        app_token = config.app_token
        self._app_token = app_token.get_secret_value() if app_token is not None else ""
        self._task: asyncio.Task[None] | None = None

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        await super().start(sink, report)
        self._task = asyncio.create_task(self._run(report), name="slack-socket")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await super().stop()

    async def handle_webhook(self, headers: Mapping[str, str], body: bytes) -> WireDict:
        raise BadSignature("this Slack app runs in Socket Mode: events arrive over its socket")

    # -- the connection -----------------------------------------------------------------------

    async def open_url(self) -> str:
        """A fresh WebSocket URL from `apps.connections.open` (it holds a ticket: never log)."""
        response = await call(
            self._client,
            "apps.connections.open",
            f"{self._base}/apps.connections.open",
            attempts=1,
            backoff=self._backoff,
            headers={"authorization": f"Bearer {self._app_token}"},
        )
        body = as_json(response, "apps.connections.open")
        if not body.get("ok"):
            raise PlatformError(f"apps.connections.open: {body.get('error') or 'not ok'}")
        url = str(body.get("url") or "")
        if urlsplit(url).scheme not in ("wss", "ws"):
            raise PlatformError("apps.connections.open: no WebSocket URL")
        return url

    async def _run(self, report: ErrorReport) -> None:
        backoff = Backoff(self.config.retry_initial_s, self.config.retry_max_s)
        while True:
            try:
                if self.bot_user_id is None:  # auth.test failed at start: mentions need it
                    me = await self._call("auth.test")
                    self.bot_user_id = str(me.get("user_id") or "") or None
                url = await self.open_url()
                async with connect(url, open_timeout=20, max_size=MAX_FRAME) as ws:
                    if await self._session(ws, backoff):
                        continue  # Slack asked us to move: reconnect at once
                error = "socket closed by Slack"
            except PlatformError as exc:
                error = str(exc)
            except (OSError, TimeoutError, WebSocketException) as exc:
                error = f"socket: {type(exc).__name__}"
            log.error("slack socket failed", extra={"channel": "slack", "error": error})
            report(error)
            await backoff.wait()

    async def _session(self, ws: ClientConnection, backoff: Backoff) -> bool:
        """Serve one connection; True when it ended with a `disconnect` request."""
        async for frame in ws:
            try:
                envelope = as_map(json.loads(frame))
            except ValueError:
                log.warning("slack socket: a frame that is not JSON", extra={"channel": "slack"})
                continue
            kind = envelope.get("type")
            if kind == "hello":
                backoff.reset()
                log.info("slack socket connected", extra={"channel": "slack"})
                continue
            if kind == "disconnect":
                log.info(
                    "slack socket: disconnect requested",
                    extra={"channel": "slack", "reason": str(envelope.get("reason") or "")},
                )
                return True
            envelope_id = envelope.get("envelope_id")
            if isinstance(envelope_id, str) and envelope_id:
                await ws.send(json.dumps({"envelope_id": envelope_id}))  # ack first, at once
            payload = as_map(envelope.get("payload"))
            if kind == "events_api" and payload.get("type") == "event_callback":
                await self.take(payload)
            elif kind == "slash_commands":
                msg = self.parse_command(payload)
                if msg is not None and self._sink is not None:
                    await self._sink(msg)
        return False

    def parse_command(self, payload: WireMap) -> Inbound | None:
        """A slash command as a message: the app's own command carries the text as typed,
        any other (`/new`, a skill) is that command with its text."""
        command = str(payload.get("command") or "")
        text = str(payload.get("text") or "").strip()
        channel = str(payload.get("channel_id") or "")
        user = str(payload.get("user_id") or "")
        trigger = str(payload.get("trigger_id") or "")
        if not command or not channel or not user or not trigger:
            return None
        if command != self.config.slash_command:
            text = f"{command} {text}".strip()
        is_group = not channel.startswith("D") and payload.get("channel_name") != "directmessage"
        return Inbound(
            delivery_id=f"command:{trigger}",
            chat_id=channel,
            user_id=user,
            user_name=str(payload.get("user_name") or ""),
            text=text,
            is_group=is_group,
            mentioned=True,  # a slash command is addressed to the app
        )
