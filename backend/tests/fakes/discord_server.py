"""A fake Discord: the gateway WebSocket (HELLO, IDENTIFY → READY, heartbeats and their
ACKs, dispatches with sequence numbers, RESUME replaying what a dropped connection missed,
RECONNECT and INVALID_SESSION on request) and the REST endpoints a bot uses under
`/api/v10` (gateway/bot, channel messages, interaction callbacks and webhooks, command
registration), with Discord's shapes; attachments are served from `/attachments/{name}`.

Tests drive it from their own thread: `message(...)` / `slash(...)` dispatch events to the
connected bot (or keep them for a resume), `drop()` cuts the connection, `ops` records
every gateway op the bot sent, `calls` every REST call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from fakes.platform_base import Call, PlatformServer

TOKEN = "discord-bot-token"
BOT_ID = "900000000000000001"
APP_ID = "900000000000000002"
GUILD = "700000000000000001"


@dataclass
class Session:
    id: str
    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    seq: int = 0

    def add(self, kind: str, d: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        payload = {"op": 0, "t": kind, "s": self.seq, "d": d}
        self.events.append(payload)
        return payload


@dataclass
class Conn:
    ws: WebSocket
    queue: asyncio.Queue[dict[str, Any] | int]  # a payload to send, or a close code
    session: Session | None = None


class FakeDiscord(PlatformServer):
    def __init__(self, heartbeat_ms: int = 500) -> None:
        super().__init__()
        self.heartbeat_ms = heartbeat_ms
        self.ack = True  # answer heartbeats (False: the bot should see a zombie)
        self.gateway_open = True  # False: refuse WebSocket connections (REST still answers)
        self.times: list[tuple[str, float]] = []  # (call, monotonic time) of REST calls
        self.rate_limit_next = 0  # answer this many REST calls with 429 first
        self.retry_after_s = 0.3
        self.ops: list[Call] = []  # IDENTIFY, RESUME, HEARTBEAT as the bot sent them
        self.sessions: dict[str, Session] = {}
        self.session: Session | None = None  # the newest identified session
        self.conn: Conn | None = None
        self.attachments: dict[str, bytes] = {}
        self.tokens: dict[str, str] = {}  # interaction token -> its channel
        self.acked: set[str] = set()
        self.threads: dict[str, dict[str, Any]] = {}  # thread id -> its channel object
        self.channel_lookup_failures = 0  # answer this many GET /channels/{id} with 503
        self._ids = itertools.count(1_100_000_000_000_000_000)
        self._sessions = itertools.count(1)

    def routes(self) -> list[BaseRoute]:
        api = "/api/v10"
        return [
            Route(f"{api}/gateway/bot", self._gateway_bot, methods=["GET"]),
            Route(f"{api}/channels/{{cid}}", self._channel, methods=["GET"]),
            Route(f"{api}/channels/{{cid}}/messages", self._create, methods=["POST"]),
            Route(f"{api}/channels/{{cid}}/messages/{{mid}}", self._edit, methods=["PATCH"]),
            Route(
                f"{api}/interactions/{{iid}}/{{token}}/callback", self._callback, methods=["POST"]
            ),
            Route(f"{api}/webhooks/{{app}}/{{token}}", self._followup, methods=["POST"]),
            Route(
                f"{api}/webhooks/{{app}}/{{token}}/messages/{{mid}}",
                self._edit_hook,
                methods=["PATCH"],
            ),
            Route(f"{api}/applications/{{app}}/commands", self._commands, methods=["PUT"]),
            Route(
                f"{api}/applications/{{app}}/guilds/{{gid}}/commands",
                self._commands,
                methods=["PUT"],
            ),
            Route("/attachments/{name}", self._attachment, methods=["GET"]),
            WebSocketRoute("/gateway/", self._gateway),
        ]

    @property
    def api_base(self) -> str:
        return f"{self.url}/api/v10"

    # -- test side ---------------------------------------------------------------------------

    def new_id(self) -> str:
        return str(next(self._ids))

    def dispatch(self, kind: str, d: dict[str, Any]) -> None:
        """An event for the bot: sent now if it is connected, else kept for its resume."""
        with self._cond:
            assert self.session is not None, "the bot has not identified yet"
            payload = self.session.add(kind, d)
            conn = self.conn
            if conn is not None and conn.session is self.session and self.loop is not None:
                self.loop.call_soon_threadsafe(conn.queue.put_nowait, payload)

    def message(
        self,
        content: str,
        *,
        user_id: str = "42",
        channel_id: str | None = None,
        guild_id: str | None = None,
        username: str = "alice",
        bot: bool = False,
        mention: bool = False,
        attachment: tuple[str, bytes] | None = None,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE as Discord sends it (a DM unless `guild_id`); its `d`."""
        mid = message_id or self.new_id()
        d: dict[str, Any] = {
            "id": mid,
            "type": 0,
            "channel_id": channel_id or f"dm-{user_id}",
            "author": {"id": user_id, "username": username, "global_name": username, "bot": bot},
            "content": f"<@{BOT_ID}> {content}" if mention else content,
            "timestamp": "2026-12-01T12:00:00.000000+00:00",
            "mentions": [{"id": BOT_ID, "username": "pronghorn", "bot": True}] if mention else [],
            "attachments": [],
        }
        if guild_id is not None:
            d["guild_id"] = guild_id
            d["member"] = {"roles": []}
        if attachment is not None:
            name, data = attachment
            key = f"{mid}-{name}"
            self.attachments[key] = data
            d["attachments"] = [
                {
                    "id": self.new_id(),
                    "filename": name,
                    "size": len(data),
                    "url": f"{self.url}/attachments/{key}",
                    "proxy_url": f"{self.url}/attachments/{key}",
                    "content_type": "text/plain",
                }
            ]
        self.dispatch("MESSAGE_CREATE", d)
        return d

    def thread(self, parent_id: str, *, thread_id: str | None = None, announce: bool = True) -> str:
        """A public thread in `parent_id` (its id); `announce`: the bot is told with
        THREAD_CREATE, as Discord does for threads in channels it can see."""
        tid = thread_id or self.new_id()
        channel = {
            "id": tid,
            "type": 11,
            "guild_id": GUILD,
            "parent_id": parent_id,
            "name": f"thread {tid}",
            "owner_id": "42",
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "locked": False},
        }
        with self._cond:
            self.threads[tid] = channel
        if announce:
            self.dispatch("THREAD_CREATE", {**channel, "newly_created": True})
        return tid

    def slash(
        self,
        name: str,
        options: dict[str, str] | None = None,
        *,
        user_id: str = "42",
        channel_id: str | None = None,
        guild_id: str | None = None,
        username: str = "alice",
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE for the slash command `/name`; its `d`."""
        iid, token = self.new_id(), f"itoken-{self.new_id()}"
        channel = channel_id or f"dm-{user_id}"
        user = {"id": user_id, "username": username, "global_name": username}
        d: dict[str, Any] = {
            "id": iid,
            "application_id": APP_ID,
            "type": 2,
            "token": token,
            "version": 1,
            "channel_id": channel,
            "channel": self._partial_channel(channel, guild_id),
            "data": {
                "id": self.new_id(),
                "name": name,
                "type": 1,
                "options": [{"name": k, "type": 3, "value": v} for k, v in (options or {}).items()],
            },
        }
        if guild_id is not None:
            d["guild_id"] = guild_id
            d["member"] = {"user": user, "roles": []}
        else:
            d["user"] = user
        with self._cond:
            self.tokens[token] = channel
        self.dispatch("INTERACTION_CREATE", d)
        return d

    def _partial_channel(self, channel: str, guild_id: str | None) -> dict[str, Any]:
        """The partial channel an interaction carries (a thread's names its parent)."""
        with self._cond:
            thread = self.threads.get(channel)
        if thread is not None:
            return {k: thread[k] for k in ("id", "type", "parent_id", "guild_id", "name")}
        return {"id": channel, "type": 0 if guild_id else 1}

    def _to_conn(self, item: dict[str, Any] | int) -> None:
        with self._cond:
            conn = self.conn
        assert conn is not None and self.loop is not None, "the bot is not connected"
        self.loop.call_soon_threadsafe(conn.queue.put_nowait, item)

    def drop(self, code: int = 4000) -> None:
        """Close the bot's connection (as Discord does now and then)."""
        self._to_conn(code)

    def send_op(self, op: int, d: object = None) -> None:
        """A gateway op (7 RECONNECT, 9 INVALID_SESSION) to the connected bot."""
        self._to_conn({"op": op, "d": d, "s": None, "t": None})

    def op_calls(self, op: str) -> list[Call]:
        with self._cond:
            return [c for c in self.ops if c.method == op]

    def connected(self) -> bool:
        with self._cond:
            return self.conn is not None and self.conn.session is not None

    def texts(self, channel: str) -> list[str]:
        """Every content posted or edited in `channel` (by the bot or through its
        interactions), oldest first."""
        with self._cond:
            return [
                str(c.body["content"])
                for c in self.calls
                if c.body.get("channel_id") == channel and "content" in c.body
            ]

    # -- the gateway -------------------------------------------------------------------------

    def _record_op(self, name: str, d: Any) -> None:
        with self._cond:
            self.ops.append(Call(name, d if isinstance(d, dict) else {"d": d}))
            self._cond.notify_all()

    def record(self, call: Call) -> None:
        with self._cond:
            self.times.append((call.method, time.monotonic()))
        super().record(call)

    async def _gateway(self, ws: WebSocket) -> None:
        if self.down or not self.gateway_open:
            await ws.close(1013)
            return
        if ws.query_params.get("v") != "10" or ws.query_params.get("encoding") != "json":
            await ws.close(4012)  # invalid API version
            return
        await ws.accept()
        self.loop = asyncio.get_running_loop()
        conn = Conn(ws, asyncio.Queue())
        hello = {"op": 10, "d": {"heartbeat_interval": self.heartbeat_ms}, "s": None, "t": None}
        await ws.send_json(hello)
        writer = asyncio.create_task(self._writer(conn))
        try:
            while True:
                msg = json.loads(await ws.receive_text())
                await self._on_op(conn, int(msg["op"]), msg.get("d"))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            with self._cond:
                if self.conn is conn:
                    self.conn = None
                self._cond.notify_all()

    async def _writer(self, conn: Conn) -> None:
        while True:
            item = await conn.queue.get()
            if isinstance(item, int):
                await conn.ws.close(item)
                return
            await conn.ws.send_json(item)

    async def _on_op(self, conn: Conn, op: int, d: Any) -> None:
        if op == 1:
            self._record_op("HEARTBEAT", {"seq": d})
            if self.ack:
                conn.queue.put_nowait({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            self._record_op("IDENTIFY", d)
            if d.get("token") != TOKEN:
                conn.queue.put_nowait(4004)
                return
            session = Session(f"session-{next(self._sessions)}")
            ready = {
                "v": 10,
                "user": {"id": BOT_ID, "username": "pronghorn", "bot": True},
                "session_id": session.id,
                "resume_gateway_url": f"ws://127.0.0.1:{self.port}/gateway/",
                "guilds": [{"id": GUILD, "unavailable": True}],
                "application": {"id": APP_ID, "flags": 0},
            }
            with self._cond:
                self.sessions[session.id] = session
                self.session = session
                conn.queue.put_nowait(session.add("READY", ready))
                conn.session = session
                self.conn = conn
                self._cond.notify_all()
        elif op == 6:
            self._record_op("RESUME", d)
            with self._cond:
                session = self.sessions.get(str(d.get("session_id")))
                if session is None or d.get("token") != TOKEN:
                    conn.queue.put_nowait({"op": 9, "d": False, "s": None, "t": None})
                    return
                for payload in session.events:
                    if payload["s"] > int(d.get("seq") or 0):
                        conn.queue.put_nowait(payload)
                conn.queue.put_nowait(session.add("RESUMED", {}))
                conn.session = session
                self.conn = conn
                self._cond.notify_all()

    # -- REST --------------------------------------------------------------------------------

    def _refuse(self, request: Request, auth: bool = True) -> Response | None:
        if auth and request.headers.get("authorization") != f"Bot {TOKEN}":
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, 401)
        if self.down:
            return Response(status_code=503)
        with self._cond:
            if self.rate_limit_next > 0:
                self.rate_limit_next -= 1
                self.calls.append(Call("429", {"path": request.url.path}))
                self.times.append(("429", time.monotonic()))
                self._cond.notify_all()
                body = {
                    "message": "You are being rate limited.",
                    "retry_after": self.retry_after_s,
                    "global": False,
                }
                return JSONResponse(body, 429, headers={"retry-after": str(self.retry_after_s)})
        return None

    def _message(self, channel: str, content: str, mid: str | None = None) -> dict[str, Any]:
        return {
            "id": mid or self.new_id(),
            "type": 0,
            "channel_id": channel,
            "author": {"id": BOT_ID, "username": "pronghorn", "bot": True},
            "content": content,
        }

    async def _gateway_bot(self, request: Request) -> Response:
        if (refused := self._refuse(request)) is not None:
            return refused
        self.record(Call("gateway/bot", {}))
        return JSONResponse(
            {
                "url": f"ws://127.0.0.1:{self.port}/gateway/",
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 14400000,
                    "max_concurrency": 1,
                },
            }
        )

    async def _channel(self, request: Request) -> Response:
        """A channel: a thread made by `thread()`, else a guild text channel."""
        if (refused := self._refuse(request)) is not None:
            return refused
        cid = request.path_params["cid"]
        with self._cond:
            failing = self.channel_lookup_failures > 0
            self.channel_lookup_failures -= int(failing)
        if failing:
            self.record(Call("getChannel!503", {"channel_id": cid}))
            return JSONResponse({"message": "Service unavailable", "code": 0}, 503)
        self.record(Call("getChannel", {"channel_id": cid}))
        with self._cond:
            thread = self.threads.get(cid)
        if thread is not None:
            return JSONResponse(thread)
        if cid.startswith("dm-"):
            return JSONResponse({"id": cid, "type": 1, "recipients": []})
        return JSONResponse({"id": cid, "type": 0, "guild_id": GUILD, "name": f"chan {cid}"})

    async def _create(self, request: Request) -> Response:
        if (refused := self._refuse(request)) is not None:
            return refused
        channel = request.path_params["cid"]
        if request.headers.get("content-type", "").startswith("application/json"):
            body: dict[str, Any] = json.loads(await request.body())
            files: dict[str, tuple[str, bytes]] = {}
        else:
            body, files = {}, {}
            async with request.form() as form:
                for key, value in form.multi_items():
                    if isinstance(value, str):
                        body[key] = value
                    else:
                        files[key] = (value.filename or "", await value.read())
            body = {**json.loads(body.get("payload_json", "{}")), "multipart": True}
        message = self._message(channel, str(body.get("content", "")))
        self.record(Call("createMessage", {**body, "channel_id": channel}, files))
        if files:
            message["attachments"] = [{"id": "1", "filename": f[0]} for f in files.values()]
        return JSONResponse(message)

    async def _edit(self, request: Request) -> Response:
        if (refused := self._refuse(request)) is not None:
            return refused
        channel, mid = request.path_params["cid"], request.path_params["mid"]
        body = json.loads(await request.body())
        self.record(Call("editMessage", {**body, "channel_id": channel, "message_id": mid}))
        return JSONResponse(self._message(channel, str(body.get("content", "")), mid))

    async def _callback(self, request: Request) -> Response:
        if (refused := self._refuse(request, auth=False)) is not None:
            return refused
        token = request.path_params["token"]
        body = json.loads(await request.body())
        with self._cond:
            channel = self.tokens.get(token)
            if channel is None:
                return JSONResponse({"message": "Unknown interaction", "code": 10062}, 404)
            if token in self.acked:
                return JSONResponse(
                    {"message": "Interaction has already been acknowledged.", "code": 40060}, 400
                )
            self.acked.add(token)
        self.record(Call("callback", {**body, "channel_id_of": channel, "token": token}))
        return Response(status_code=204)

    def _hook_channel(self, request: Request) -> str | None:
        if request.path_params["app"] != APP_ID:
            return None
        token = request.path_params["token"]
        with self._cond:
            return self.tokens.get(token) if token in self.acked else None

    async def _followup(self, request: Request) -> Response:
        if (refused := self._refuse(request, auth=False)) is not None:
            return refused
        channel = self._hook_channel(request)
        if channel is None:
            return JSONResponse({"message": "Unknown Webhook", "code": 10015}, 404)
        body = json.loads(await request.body())
        message = self._message(channel, str(body.get("content", "")))
        self.record(Call("followup", {**body, "channel_id": channel, "message_id": message["id"]}))
        return JSONResponse(message)

    async def _edit_hook(self, request: Request) -> Response:
        if (refused := self._refuse(request, auth=False)) is not None:
            return refused
        channel = self._hook_channel(request)
        if channel is None:
            return JSONResponse({"message": "Unknown Webhook", "code": 10015}, 404)
        mid = request.path_params["mid"]
        body = json.loads(await request.body())
        real = f"original-{request.path_params['token']}" if mid == "@original" else mid
        self.record(Call("editWebhookMessage", {**body, "channel_id": channel, "message_id": mid}))
        return JSONResponse(self._message(channel, str(body.get("content", "")), real))

    async def _commands(self, request: Request) -> Response:
        if (refused := self._refuse(request)) is not None:
            return refused
        commands: list[dict[str, Any]] = json.loads(await request.body())
        where = request.path_params.get("gid") or "global"
        self.record(Call("registerCommands", {"where": where, "commands": commands}))
        return JSONResponse(
            [{**c, "id": self.new_id(), "application_id": APP_ID} for c in commands]
        )

    async def _attachment(self, request: Request) -> Response:
        data = self.attachments.get(request.path_params["name"])
        return Response(data) if data is not None else Response(status_code=404)
