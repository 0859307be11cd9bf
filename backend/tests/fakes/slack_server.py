"""A fake Slack Web API: `POST /api/{method}` (auth.test, chat.postMessage, chat.update,
files.getUploadURLExternal, files.completeUploadExternal), the upload URL it hands out,
and private file downloads, with Slack's shapes (`{"ok": true, ...}`, bearer token).

Socket Mode: `apps.connections.open` (app token) hands out a one-use `ws://…/socket/{ticket}`
URL; the socket says `hello`, then pushes the envelopes a test queues (`events_api`,
`slash_commands`, `disconnect`) and records every acknowledgement as a Call("ack")."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from fakes.platform_base import Call, PlatformServer

BOT_TOKEN = "xoxb-test-token"
SIGNING_SECRET = "slack-signing-secret"
BOT_USER = "UBOT"
APP_TOKEN = "xapp-test-token"


@dataclass
class SocketSession:
    """One accepted Socket Mode connection; `outbox` is what the server pushes (None:
    drop the socket)."""

    ticket: str
    loop: asyncio.AbstractEventLoop
    outbox: asyncio.Queue[dict[str, Any] | None]
    usable: bool = True  # new envelopes may go here (not after disconnect/drop)


class FakeSlack(PlatformServer):
    ws = "websockets-sansio"

    def __init__(self) -> None:
        super().__init__()
        self._ts = itertools.count(1)
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.files: dict[str, bytes] = {}
        self.tickets: set[str] = set()
        self.sessions: list[SocketSession] = []
        self._envelopes = itertools.count(1)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/{method}", self._api, methods=["POST"]),
            Route("/upload/{file_id}", self._upload, methods=["POST"]),
            Route("/files-pri/{name}", self._download, methods=["GET"]),
            WebSocketRoute("/socket/{ticket}", self._socket),
        ]

    def texts(self, channel: str) -> list[str]:
        return [
            str(c.body["text"])
            for c in self.calls
            if c.method in ("chat.postMessage", "chat.update") and c.body.get("channel") == channel
        ]

    async def _api(self, request: Request) -> Response:
        if request.path_params["method"] == "apps.connections.open":
            return self._open(request)
        if request.headers.get("authorization") != f"Bearer {BOT_TOKEN}":
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        if self.down:
            return Response(status_code=503)
        method = request.path_params["method"]
        if request.headers.get("content-type", "").startswith("application/json"):
            body: dict[str, Any] = json.loads(await request.body())
        else:
            async with request.form() as form:
                body = {k: v for k, v in form.items() if isinstance(v, str)}
        if self.take_limit(method, body):
            return JSONResponse(
                {"ok": False, "error": "ratelimited"},
                429,
                headers={"retry-after": str(self.retry_after)},
            )
        self.record(Call(method, body))
        if method == "auth.test":
            return JSONResponse({"ok": True, "user_id": BOT_USER, "bot_id": "B1", "team": "T"})
        if method in ("chat.postMessage", "chat.update"):
            ts = body.get("ts") or f"1764590000.{next(self._ts):06d}"
            return JSONResponse({"ok": True, "channel": body["channel"], "ts": ts})
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._ts)}"
            return JSONResponse(
                {"ok": True, "upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}
            )
        if method == "files.completeUploadExternal":
            return JSONResponse({"ok": True, "files": body.get("files", [])})
        return JSONResponse({"ok": False, "error": "unknown_method"})

    async def _upload(self, request: Request) -> Response:
        async with request.form() as form:
            part = form["file"]
            assert not isinstance(part, str)
            self.uploads[request.path_params["file_id"]] = (part.filename or "", await part.read())
        self.record(Call("upload", {"file_id": request.path_params["file_id"]}))
        return Response("OK - 200")

    async def _download(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {BOT_TOKEN}":
            return Response(status_code=403)
        data = self.files.get(request.path_params["name"])
        return Response(data) if data is not None else Response(status_code=404)

    # -- Socket Mode: test side -----------------------------------------------------------------

    def socket_event(self, event: dict[str, Any], *, retry_attempt: int = 0) -> dict[str, Any]:
        """Push an Events API `event_callback` over the socket; the envelope."""
        n = next(self._envelopes)
        envelope: dict[str, Any] = {
            "envelope_id": f"env-{n}",
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
            "payload": {
                "type": "event_callback",
                "team_id": "T1",
                "api_app_id": "A1",
                "event_id": f"Ev-s{n}",
                "event_time": 1764590000,
                "event": event,
            },
        }
        self.push(envelope)
        return envelope

    def redeliver(self, envelope: dict[str, Any]) -> dict[str, Any]:
        """The same event again, as Slack retries it (a new envelope, `retry_attempt` + 1)."""
        again = {
            **envelope,
            "envelope_id": f"env-{next(self._envelopes)}",
            "retry_attempt": int(envelope.get("retry_attempt", 0)) + 1,
            "retry_reason": "timeout",
        }
        self.push(again)
        return again

    def slash_command(
        self, command: str, text: str, *, user: str = "U1", channel: str = "D1"
    ) -> dict[str, Any]:
        n = next(self._envelopes)
        envelope: dict[str, Any] = {
            "envelope_id": f"env-{n}",
            "type": "slash_commands",
            "accepts_response_payload": True,
            "payload": {
                "token": "legacy-verification-token",
                "team_id": "T1",
                "channel_id": channel,
                "channel_name": "directmessage" if channel.startswith("D") else "general",
                "user_id": user,
                "user_name": user.lower(),
                "command": command,
                "text": text,
                "api_app_id": "A1",
                "response_url": f"{self.url}/commands/{n}",
                "trigger_id": f"trigger-{n}",
            },
        }
        self.push(envelope)
        return envelope

    def disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the client to move to a new connection (Slack does every few hours)."""
        self.push({"type": "disconnect", "reason": reason, "debug_info": {"host": "fake"}})

    def drop(self) -> None:
        """Close the current socket without warning (a network failure)."""
        self.push(None)

    def push(self, envelope: dict[str, Any] | None) -> None:
        session: SocketSession = self.wait_for(
            lambda: next((s for s in reversed(self.sessions) if s.usable), None)
        )
        if envelope is None or envelope.get("type") == "disconnect":
            session.usable = False
        session.loop.call_soon_threadsafe(session.outbox.put_nowait, envelope)

    def acked(self, envelope: dict[str, Any]) -> bool:
        return any(c.body.get("envelope_id") == envelope["envelope_id"] for c in self.of("ack"))

    def open_sessions(self) -> int:
        return len(self.of("hello"))

    # -- Socket Mode: server side ---------------------------------------------------------------

    def _open(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {APP_TOKEN}":
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        if self.down:
            return Response(status_code=503)
        ticket = f"ticket-{next(self._ts)}"
        with self._cond:
            self.tickets.add(ticket)
        self.record(Call("apps.connections.open", {}))
        url = f"ws://127.0.0.1:{self.port}/socket/{ticket}"
        return JSONResponse({"ok": True, "url": url})

    async def _socket(self, ws: WebSocket) -> None:
        ticket = ws.path_params["ticket"]
        with self._cond:
            valid = ticket in self.tickets
            self.tickets.discard(ticket)  # a URL works once
        if not valid:
            await ws.close(code=4403)
            return
        await ws.accept()
        session = SocketSession(ticket, asyncio.get_running_loop(), asyncio.Queue())
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "connection_info": {"app_id": "A1"},
                "debug_info": {"host": "fake", "approximate_connection_time": 18060},
            }
        )
        with self._cond:
            self.sessions.append(session)
        self.record(Call("hello", {"ticket": ticket}))
        reader = asyncio.create_task(self._read_acks(ws))
        try:
            while True:
                getter = asyncio.create_task(session.outbox.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if reader in done:  # the client closed the socket
                    getter.cancel()
                    break
                envelope = getter.result()
                if envelope is None:
                    await ws.close(code=1011)
                    break
                await ws.send_json(envelope)
        finally:
            session.usable = False
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect):
                await reader

    async def _read_acks(self, ws: WebSocket) -> None:
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                body = json.loads(await ws.receive_text())
                self.record(Call("ack", body))
