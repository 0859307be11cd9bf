"""Feishu's long connection: the gateway opens a WebSocket to the platform and events arrive
on it, so no public callback URL is needed.

`POST {api_base_url}/callback/ws/endpoint` with the app's credentials gives the socket URL
(its query names `service_id`) and the client settings (`PingInterval`…). Frames are
protobuf (feishu/frame.py): control frames carry `ping` / `pong` (a pong may bring new
settings), data frames carry an event's JSON, possibly in `sum` parts numbered by `seq`
under one `message_id`; each event is acknowledged by sending its frame back with the
payload `{"code": 200}`. A dropped connection is reopened with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus, WebSocketException

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.feishu.frame import CONTROL, DATA, Frame, FrameError, decode, encode
from pronghorn.channels.http_api import Backoff, as_json, call
from pronghorn.channels.transport import ErrorReport
from pronghorn.channels.wire import WireMap, as_map

log = logging.getLogger("pronghorn.channels")

ENDPOINT_PATH = "/callback/ws/endpoint"
_PARTS_TTL_S = 10.0  # an event's parts must all arrive within this

EventHandler = Callable[[WireMap], Awaitable[None]]


class LongConnection:
    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        app_id: str,
        app_secret: str,
        backoff: Backoff,
        on_event: EventHandler,
        report: ErrorReport,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + ENDPOINT_PATH
        self._app_id, self._app_secret = app_id, app_secret
        self._backoff = backoff
        self._on_event = on_event
        self._report = report
        self.ping_interval_s = 120.0
        self.connects = 0
        self._parts: dict[str, tuple[float, list[bytes | None]]] = {}

    async def run(self) -> None:
        """Stay connected until cancelled."""
        while True:
            try:
                url = await self._endpoint()
                await self._session(url)
                error = "long connection closed"
            except (PlatformError, OSError, WebSocketException, TimeoutError) as exc:
                error = _describe(exc)
            log.error("feishu long connection failed", extra={"channel": "feishu", "error": error})
            self._report(error)
            await self._backoff.wait()

    async def _endpoint(self) -> str:
        response = await call(
            self._client,
            "ws endpoint",
            self._url,
            attempts=1,
            backoff=self._backoff,
            json={"AppID": self._app_id, "AppSecret": self._app_secret},
            headers={"locale": "en"},
        )
        body = as_json(response, "ws endpoint")
        data = as_map(body.get("data"))
        url = data.get("URL")
        if body.get("code") != 0 or not isinstance(url, str) or not url:
            raise PlatformError(f"ws endpoint: code {body.get('code')} {body.get('msg') or ''}")
        self._configure(as_map(data.get("ClientConfig")))
        return url

    def _configure(self, settings: WireMap) -> None:
        ping = settings.get("PingInterval")
        if isinstance(ping, (int, float)) and ping > 0:
            self.ping_interval_s = float(ping)

    async def _session(self, url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        try:
            service = int((query.get("service_id") or ["0"])[0])
        except ValueError:
            service = 0
        async with connect(url, ping_interval=None, open_timeout=30) as ws:
            self.connects += 1
            self._backoff.reset()
            log.info("feishu long connection open", extra={"channel": "feishu"})
            pinger = asyncio.create_task(self._ping(ws, service), name="feishu-ws-ping")
            try:
                async for raw in ws:
                    if isinstance(raw, bytes):
                        await self._frame(ws, raw)
            finally:
                pinger.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pinger

    async def _ping(self, ws: ClientConnection, service: int) -> None:
        while True:
            frame = Frame(service=service, method=CONTROL, headers=[("type", "ping")])
            with contextlib.suppress(WebSocketException):
                await ws.send(encode(frame))
            await asyncio.sleep(self.ping_interval_s)

    async def _frame(self, ws: ClientConnection, raw: bytes) -> None:
        try:
            frame = decode(raw)
        except FrameError as exc:
            log.warning("feishu frame unreadable", extra={"channel": "feishu", "error": str(exc)})
            return
        kind = frame.header("type")
        if frame.method == CONTROL:
            if kind == "pong" and frame.payload:
                with contextlib.suppress(ValueError):
                    self._configure(as_map(json.loads(frame.payload)))
            return
        if frame.method != DATA:
            return
        payload = self._assemble(frame)
        if payload is None or kind != "event":
            return
        started = time.monotonic()
        code = 200
        try:
            event: object = json.loads(payload)
        except ValueError:
            code, event = 500, None
            log.warning("feishu event is not JSON", extra={"channel": "feishu"})
        if event is not None:
            try:
                await self._on_event(as_map(event))
            except Exception:  # one bad event never ends the connection
                code = 500
                log.exception("feishu event failed", extra={"channel": "feishu"})
        elapsed_ms = int((time.monotonic() - started) * 1000)
        frame.headers.append(("biz_rt", str(elapsed_ms)))
        frame.payload = json.dumps({"code": code}).encode()
        await ws.send(encode(frame))

    def _assemble(self, frame: Frame) -> bytes | None:
        """The event's whole payload, once every part of it has arrived."""
        try:
            total = int(frame.header("sum") or "1")
            seq = int(frame.header("seq") or "0")
        except ValueError:
            return None
        if total <= 1:
            return frame.payload or b""
        if not 0 <= seq < total or total > 1000:
            return None
        now = time.monotonic()
        for key in [k for k, (at, _) in self._parts.items() if now - at > _PARTS_TTL_S]:
            del self._parts[key]
        message_id = frame.header("message_id") or ""
        _, parts = self._parts.setdefault(message_id, (now, [None] * total))
        if len(parts) != total:
            return None
        parts[seq] = frame.payload or b""
        if any(p is None for p in parts):
            return None
        del self._parts[message_id]
        return b"".join(p for p in parts if p is not None)


def _describe(exc: Exception) -> str:
    if isinstance(exc, PlatformError):
        return str(exc)
    if isinstance(exc, InvalidStatus):
        headers = exc.response.headers
        status = headers.get("handshake-status") or str(exc.response.status_code)
        return f"long connection refused: {status} {headers.get('handshake-msg') or ''}".strip()
    return f"long connection: {type(exc).__name__}"
