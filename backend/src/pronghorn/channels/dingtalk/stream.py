"""DingTalk's Stream mode: the gateway opens a WebSocket to DingTalk and the robot's messages
arrive on it, so no public callback URL is needed.

`POST {api_base_url}/v1.0/gateway/connections/open` with the app's credentials and the
topics it subscribes to gives an `endpoint` and a one-time `ticket`; the socket is
`{endpoint}?ticket={ticket}`. Frames are JSON `{specVersion, type, headers, data}` with
`data` a JSON string. `SYSTEM` frames: `ping` is answered with its own data, `disconnect`
(the platform moving the connection) is acknowledged and the connection reopened at once.
`CALLBACK` frames (the robot topic) are acknowledged with
`{code: 200, headers: {messageId, contentType}, message: "OK", data}` once taken. A dropped
connection is reopened with backoff (a fresh ticket each time).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import quote_plus

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus, WebSocketException

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call
from pronghorn.channels.transport import ErrorReport
from pronghorn.channels.wire import WireMap, as_map

log = logging.getLogger("pronghorn.channels")

OPEN_PATH = "/v1.0/gateway/connections/open"
BOT_TOPIC = "/v1.0/im/bot/messages/get"

CallbackHandler = Callable[[WireMap], Awaitable[None]]


class StreamConnection:
    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        client_id: str,
        client_secret: str,
        backoff: Backoff,
        on_message: CallbackHandler,
        report: ErrorReport,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + OPEN_PATH
        self._client_id, self._client_secret = client_id, client_secret
        self._backoff = backoff
        self._on_message = on_message
        self._report = report
        self.connects = 0

    async def run(self) -> None:
        """Stay connected until cancelled."""
        while True:
            try:
                uri = await self._open()
                moved = await self._session(uri)
                if moved:  # the platform asked us to reconnect: at once, no error
                    continue
                error = "stream connection closed"
            except (PlatformError, OSError, WebSocketException, TimeoutError) as exc:
                error = _describe(exc)
            log.error("dingtalk stream failed", extra={"channel": "dingtalk", "error": error})
            self._report(error)
            await self._backoff.wait()

    async def _open(self) -> str:
        response = await call(
            self._client,
            "stream connection open",
            self._url,
            attempts=1,
            backoff=self._backoff,
            json={
                "clientId": self._client_id,
                "clientSecret": self._client_secret,
                "subscriptions": [{"type": "CALLBACK", "topic": BOT_TOPIC}],
                "ua": "pronghorn",
                "localIp": "",
            },
        )
        body = as_json(response, "stream connection open")
        endpoint, ticket = body.get("endpoint"), body.get("ticket")
        if response.status_code != 200 or not isinstance(endpoint, str) or not endpoint:
            raise PlatformError(
                f"stream connection open: HTTP {response.status_code} "
                f"{body.get('code') or ''} {body.get('message') or ''}".strip()
            )
        if not isinstance(ticket, str) or not ticket:
            raise PlatformError("stream connection open: no ticket")
        return f"{endpoint}?ticket={quote_plus(ticket)}"

    async def _session(self, uri: str) -> bool:
        """One connection; True when the platform asked to move it (`disconnect`)."""
        async with connect(uri, ping_interval=30, ping_timeout=30, open_timeout=30) as ws:
            self.connects += 1
            self._backoff.reset()
            log.info("dingtalk stream open", extra={"channel": "dingtalk"})
            async for raw in ws:
                try:
                    frame = as_map(json.loads(raw))
                except ValueError:
                    log.warning("dingtalk frame is not JSON", extra={"channel": "dingtalk"})
                    continue
                if await self._frame(ws, frame):
                    await ws.close()
                    return True
        return False

    async def _frame(self, ws: ClientConnection, frame: WireMap) -> bool:
        """Answer one frame; True for a `disconnect`."""
        headers = as_map(frame.get("headers"))
        kind, topic = frame.get("type"), headers.get("topic")
        data = frame.get("data") if isinstance(frame.get("data"), str) else "{}"
        if kind == "SYSTEM":
            await _ack(ws, headers, 200, "OK", str(data))
            return topic == "disconnect"
        if kind != "CALLBACK":
            await _ack(ws, headers, 404, "not implemented", "{}")
            return False
        if topic != BOT_TOPIC:
            await _ack(ws, headers, 404, "unknown topic", "{}")
            return False
        code, message = 200, "OK"
        try:
            payload: object = json.loads(str(data))
            await self._on_message(as_map(payload))
        except ValueError:
            code, message = 400, "data is not JSON"
        except Exception:  # one bad message never ends the connection
            log.exception("dingtalk message failed", extra={"channel": "dingtalk"})
            code, message = 500, "failed"
        await _ack(ws, headers, code, message, json.dumps({"response": None}))
        return False


async def _ack(ws: ClientConnection, headers: WireMap, code: int, message: str, data: str) -> None:
    answer = {
        "code": code,
        "headers": {
            "contentType": "application/json",
            "messageId": str(headers.get("messageId") or ""),
        },
        "message": message,
        "data": data,
    }
    await ws.send(json.dumps(answer))


def _describe(exc: Exception) -> str:
    if isinstance(exc, PlatformError):
        return str(exc)
    if isinstance(exc, InvalidStatus):
        return f"stream connection refused: HTTP {exc.response.status_code}"
    return f"stream connection: {type(exc).__name__}"
