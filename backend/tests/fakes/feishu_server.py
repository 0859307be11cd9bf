"""A fake Feishu / Lark Open API: the tenant_access_token endpoint, bot info, sending,
replying to and patching messages, file and image upload, message resources, the long
connection (endpoint and WebSocket, protobuf frames), with Feishu's shapes
(`{"code": 0, "msg": "success", "data": …}`, bearer tenant token, code 99991663 for a bad
token). Plus the other direction: events as Feishu delivers them (schema 2.0
`im.message.receive_v1`), plain or AES-encrypted and signed, to POST at the gateway.

The encryption and signature here are written from the platform's docs, independently of
the gateway's code, so a test checks one against the other.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import os
import time
from typing import Any

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from fakes.platform_base import Call, PlatformServer

APP_ID = "cli_test_app"
APP_SECRET = "feishu-app-secret"
VERIFICATION_TOKEN = "feishu-verification-token"
ENCRYPT_KEY = "feishu-encrypt-key"
BOT_OPEN_ID = "ou_bot"
INVALID_TOKEN = 99991663


class FakeFeishu(PlatformServer):
    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.token_ttl = 7200
        self.messages: dict[str, dict[str, Any]] = {}  # message_id -> what was sent
        self.uploads: dict[str, tuple[str, str, bytes]] = {}  # file_key -> (type, name, data)
        self.resources: dict[tuple[str, str], bytes] = {}  # (message_id, key) -> bytes
        self.chat_of: dict[str, str] = {}  # a user message's id -> its chat (for replies)
        self.ping_interval = 1  # the long connection's PingInterval (s) in ClientConfig
        self._socket: WebSocket | None = None
        self._frame_ids = itertools.count(1)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/open-apis/auth/v3/tenant_access_token/internal", self._token, methods=["POST"]),
            Route("/open-apis/bot/v3/info", self._bot_info, methods=["GET"]),
            Route("/open-apis/im/v1/messages", self._send, methods=["POST"]),
            Route("/open-apis/im/v1/messages/{message_id}/reply", self._reply, methods=["POST"]),
            Route("/open-apis/im/v1/messages/{message_id}", self._patch, methods=["PATCH"]),
            Route("/open-apis/im/v1/files", self._upload, methods=["POST"]),
            Route("/open-apis/im/v1/images", self._upload_image, methods=["POST"]),
            Route(
                "/open-apis/im/v1/messages/{message_id}/resources/{key}",
                self._resource,
                methods=["GET"],
            ),
            Route("/callback/ws/endpoint", self._ws_endpoint, methods=["POST"]),
            WebSocketRoute("/ws", self._ws),
        ]

    # -- test side ---------------------------------------------------------------------------

    def expire_tokens(self) -> None:
        """Every issued tenant token stops working (as after its 2 hours)."""
        with self._cond:
            self.tokens.clear()

    def texts(self, chat_id: str) -> list[str]:
        """The Markdown of every card sent or patched in `chat_id`, in order."""
        with self._cond:
            calls = list(self.calls)
        return [
            card_markdown_of(str(c.body["content"]))
            for c in calls
            if c.method in ("send", "reply", "patch")
            and c.body.get("chat_id") == chat_id
            and c.body.get("msg_type") == "interactive"
        ]

    def sent(self, chat_id: str) -> list[Call]:
        with self._cond:
            calls = list(self.calls)
        return [c for c in calls if c.method in ("send", "reply") and c.body["chat_id"] == chat_id]

    # -- server side -------------------------------------------------------------------------

    def _limited(self, method: str, chat_id: str | None) -> Response | None:
        """A 429 as Feishu's gateway answers a frequency limit (the seconds to wait in
        `x-ogw-ratelimit-reset`), for the `limited` calls of `method`."""
        if self.take_limit(method, {"chat_id": chat_id}):
            return JSONResponse(
                {"code": 99991400, "msg": "request trigger frequency limit"},
                429,
                headers={"x-ogw-ratelimit-reset": str(self.retry_after)},
            )
        return None

    def _ok(self, data: dict[str, Any] | None = None) -> JSONResponse:
        return JSONResponse({"code": 0, "msg": "success", "data": data or {}})

    def _auth(self, request: Request) -> Response | None:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        given = request.headers.get("authorization", "").removeprefix("Bearer ")
        with self._cond:
            valid = given in self.tokens
        if not valid:
            self.record(Call("refused", {"path": request.url.path}))
            return JSONResponse(
                {"code": INVALID_TOKEN, "msg": "Invalid access token for authorization."}, 400
            )
        return None

    async def _token(self, request: Request) -> Response:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        body = json.loads(await request.body())
        self.record(Call("token", body))
        if body.get("app_id") != APP_ID or body.get("app_secret") != APP_SECRET:
            return JSONResponse({"code": 10014, "msg": "app secret invalid"})
        token = f"t-{next(self._ids)}"
        with self._cond:
            self.tokens.add(token)
        return JSONResponse(
            {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": self.token_ttl}
        )

    async def _bot_info(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        self.record(Call("bot_info", {}))
        return JSONResponse(
            {"code": 0, "msg": "ok", "bot": {"open_id": BOT_OPEN_ID, "app_name": "Pronghorn"}}
        )

    def _store(self, kind: str, body: dict[str, Any], chat_id: str, root: str | None) -> str:
        message_id = f"om_bot{next(self._ids)}"
        record = {**body, "chat_id": chat_id, "root_id": root, "message_id": message_id}
        self.messages[message_id] = record
        self.record(Call(kind, dict(record)))  # as sent (a later patch changes `messages`)
        return message_id

    async def _send(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        if request.query_params.get("receive_id_type") != "chat_id":
            return JSONResponse({"code": 230001, "msg": "invalid receive_id_type"}, 400)
        body = json.loads(await request.body())
        if (limited := self._limited("send", str(body["receive_id"]))) is not None:
            return limited
        message_id = self._store("send", body, str(body["receive_id"]), None)
        return self._ok({"message_id": message_id, "chat_id": body["receive_id"]})

    async def _reply(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        root = request.path_params["message_id"]
        chat_id = self.chat_of.get(root) or self.messages.get(root, {}).get("chat_id")
        if chat_id is None:
            return JSONResponse({"code": 230011, "msg": "The message was not found"}, 400)
        if (limited := self._limited("reply", chat_id)) is not None:
            return limited
        message_id = self._store("reply", body, chat_id, root)
        return self._ok({"message_id": message_id, "root_id": root, "chat_id": chat_id})

    async def _patch(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        message_id = request.path_params["message_id"]
        sent = self.messages.get(message_id)
        if sent is None or sent.get("msg_type") != "interactive":
            return JSONResponse({"code": 230001, "msg": "not an interactive message"}, 400)
        if (limited := self._limited("patch", sent["chat_id"])) is not None:
            return limited
        sent["content"] = body["content"]
        self.record(
            Call(
                "patch",
                {
                    "message_id": message_id,
                    "chat_id": sent["chat_id"],
                    "msg_type": "interactive",
                    "content": body["content"],
                },
            )
        )
        return self._ok()

    async def _upload(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        async with request.form() as form:
            part = form["file"]
            assert not isinstance(part, str)
            file_type, name = str(form["file_type"]), str(form["file_name"])
            data = await part.read()
        key = f"file_v2_{next(self._ids)}"
        self.uploads[key] = (file_type, name, data)
        self.record(Call("upload", {"file_key": key, "file_type": file_type, "file_name": name}))
        return self._ok({"file_key": key})

    async def _upload_image(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        async with request.form() as form:
            part = form["image"]
            assert not isinstance(part, str)
            if form.get("image_type") != "message":
                return JSONResponse({"code": 234001, "msg": "Invalid request param."}, 400)
            name, data = part.filename or "", await part.read()
        key = f"img_v3_{next(self._ids)}"
        self.uploads[key] = ("image", name, data)
        self.record(Call("upload_image", {"image_key": key, "name": name}))
        return self._ok({"image_key": key})

    async def _resource(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        key = (request.path_params["message_id"], request.path_params["key"])
        self.record(Call("resource", {"message_id": key[0], "key": key[1], **request.query_params}))
        data = self.resources.get(key)
        if data is None:
            return JSONResponse({"code": 234003, "msg": "File not in msg."}, 400)
        return Response(data, media_type="application/octet-stream")

    # -- the long connection -------------------------------------------------------------------

    async def _ws_endpoint(self, request: Request) -> Response:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        body = json.loads(await request.body())
        self.record(Call("ws_endpoint", body))
        if body.get("AppID") != APP_ID or body.get("AppSecret") != APP_SECRET:
            return JSONResponse({"code": 514, "msg": "auth failed"})
        url = f"ws://127.0.0.1:{self.port}/ws?device_id=dev-{next(self._ids)}&service_id=77"
        settings = {
            "ReconnectCount": -1,
            "ReconnectInterval": 120,
            "ReconnectNonce": 30,
            "PingInterval": self.ping_interval,
        }
        data = {"URL": url, "ClientConfig": settings}
        return JSONResponse({"code": 0, "msg": "ok", "data": data})

    async def _ws(self, socket: WebSocket) -> None:
        await socket.accept()
        self.loop = asyncio.get_running_loop()
        self._socket = socket
        self.record(Call("ws_connect", dict(socket.query_params)))
        try:
            while True:
                frame = FRAME()
                frame.ParseFromString(await socket.receive_bytes())
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 0 and headers.get("type") == "ping":
                    self.record(Call("ws_ping", {"service": frame.service}))
                    pong = _frame(0, {"type": "pong"}, service=frame.service)
                    pong.payload = json.dumps({"PingInterval": self.ping_interval}).encode()
                    await socket.send_bytes(pong.SerializeToString())
                elif frame.method == 1:
                    ack = json.loads(frame.payload)
                    self.record(Call("ws_ack", {"headers": headers, "payload": ack}))
        except WebSocketDisconnect:
            pass
        finally:
            if self._socket is socket:
                self._socket = None

    def push_event(self, payload: dict[str, Any], parts: int = 1) -> None:
        """Send an event down the long connection, in `parts` data frames."""
        raw = json.dumps(payload).encode()
        size = -(-len(raw) // parts)
        chunks = [raw[i * size : (i + 1) * size] for i in range(parts)]
        message_id = f"msg-{next(self._frame_ids)}"
        frames = []
        for seq, chunk in reversed(list(enumerate(chunks))):  # out of order on purpose
            headers = {
                "type": "event",
                "message_id": message_id,
                "sum": str(parts),
                "seq": str(seq),
                "trace_id": "trace",
            }
            frame = _frame(1, headers, service=77)
            frame.payload = chunk
            frames.append(frame.SerializeToString())
        self._on_loop(self._send_all(frames))

    def drop_connection(self) -> None:
        """Close the long connection from the platform's side."""
        self._on_loop(self._close())

    def _on_loop(self, coro: Any) -> None:
        assert self.loop is not None, "no long connection yet"
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    async def _send_all(self, frames: list[bytes]) -> None:
        assert self._socket is not None, "no long connection open"
        for data in frames:
            await self._socket.send_bytes(data)

    async def _close(self) -> None:
        if self._socket is not None:
            await self._socket.close(code=1001)

    # -- events --------------------------------------------------------------------------------

    def message_event(
        self,
        *,
        chat_id: str,
        user: str = "ou_user",
        text: str | None = None,
        chat_type: str = "p2p",
        message_type: str = "text",
        content: dict[str, Any] | None = None,
        mentions: list[dict[str, Any]] | None = None,
        root_id: str | None = None,
        sender_type: str = "user",
        event_id: str | None = None,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """A schema 2.0 `im.message.receive_v1` event, as Feishu delivers it."""
        n = next(self._ids)
        mid = message_id or f"om_user{n}"
        self.chat_of[mid] = chat_id
        body = content if content is not None else {"text": text or ""}
        message: dict[str, Any] = {
            "message_id": mid,
            "create_time": str(int(time.time() * 1000)),
            "chat_id": chat_id,
            "chat_type": chat_type,
            "message_type": message_type,
            "content": json.dumps(body, ensure_ascii=False),
        }
        if root_id:
            message["root_id"] = message["parent_id"] = root_id
        if mentions:
            message["mentions"] = mentions
        return {
            "schema": "2.0",
            "header": {
                "event_id": event_id or f"ev-{n}",
                "event_type": "im.message.receive_v1",
                "create_time": str(int(time.time() * 1000)),
                "token": VERIFICATION_TOKEN,
                "app_id": APP_ID,
                "tenant_key": "tenant",
            },
            "event": {
                "sender": {
                    "sender_id": {"open_id": user, "union_id": f"on_{user}", "user_id": None},
                    "sender_type": sender_type,
                    "tenant_key": "tenant",
                },
                "message": message,
            },
        }


def card_markdown_of(content: str) -> str:
    card = json.loads(content)
    assert card["config"]["update_multi"] is True
    return "\n".join(e["content"] for e in card["elements"] if e["tag"] == "markdown")


def mention(key: str, open_id: str, name: str) -> dict[str, Any]:
    return {"key": key, "id": {"open_id": open_id, "union_id": "on_x"}, "name": name}


def encrypt(key: str, plaintext: bytes) -> str:
    """What Feishu puts in `{"encrypt": …}`: base64(IV + AES-256-CBC(PKCS#7(plaintext)))."""
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    cipher = Cipher(algorithms.AES(hashlib.sha256(key.encode()).digest()), modes.CBC(iv))
    enc = cipher.encryptor()
    return base64.b64encode(iv + enc.update(padded) + enc.finalize()).decode()


def delivery(
    payload: dict[str, Any],
    *,
    encrypt_key: str | None = ENCRYPT_KEY,
    signed: bool = True,
    sign_key: str | None = None,
    timestamp: int | None = None,
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of one callback: encrypted with `encrypt_key` (None: plain) and,
    when `signed` and there is a key, signed with `sign_key` (default: the encrypt key)."""
    raw = json.dumps(payload).encode()
    body = json.dumps({"encrypt": encrypt(encrypt_key, raw)}).encode() if encrypt_key else raw
    headers = {"content-type": "application/json"}
    key = sign_key if sign_key is not None else encrypt_key
    if signed and key is not None:
        stamp = str(timestamp if timestamp is not None else int(time.time()))
        nonce = os.urandom(8).hex()
        digest = hashlib.sha256((stamp + nonce + key).encode() + body).hexdigest()
        headers |= {
            "x-lark-request-timestamp": stamp,
            "x-lark-request-nonce": nonce,
            "x-lark-signature": digest,
        }
    return body, headers


def _frame_class() -> Any:
    """`pbbp2.Frame` built with the protobuf runtime from the platform's schema (field
    numbers and types as in Feishu's SDK), independently of the gateway's hand codec."""
    fd = descriptor_pb2.FileDescriptorProto(name="fake_pbbp2.proto", package="fakepbbp2")
    fd.syntax = "proto2"
    f = descriptor_pb2.FieldDescriptorProto
    header = fd.message_type.add(name="Header")
    header.field.add(name="key", number=1, type=f.TYPE_STRING, label=f.LABEL_REQUIRED)
    header.field.add(name="value", number=2, type=f.TYPE_STRING, label=f.LABEL_REQUIRED)
    frame = fd.message_type.add(name="Frame")
    for name, number, kind, label in (
        ("SeqID", 1, f.TYPE_UINT64, f.LABEL_REQUIRED),
        ("LogID", 2, f.TYPE_UINT64, f.LABEL_REQUIRED),
        ("service", 3, f.TYPE_INT32, f.LABEL_REQUIRED),
        ("method", 4, f.TYPE_INT32, f.LABEL_REQUIRED),
        ("payload_encoding", 6, f.TYPE_STRING, f.LABEL_OPTIONAL),
        ("payload_type", 7, f.TYPE_STRING, f.LABEL_OPTIONAL),
        ("payload", 8, f.TYPE_BYTES, f.LABEL_OPTIONAL),
        ("LogIDNew", 9, f.TYPE_STRING, f.LABEL_OPTIONAL),
    ):
        frame.field.add(name=name, number=number, type=kind, label=label)
    frame.field.add(
        name="headers",
        number=5,
        type=f.TYPE_MESSAGE,
        label=f.LABEL_REPEATED,
        type_name=".fakepbbp2.Header",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("fakepbbp2.Frame"))


FRAME = _frame_class()


def _frame(method: int, headers: dict[str, str], *, service: int) -> Any:
    frame = FRAME(SeqID=0, LogID=0, service=service, method=method)
    for key, value in headers.items():
        frame.headers.add(key=key, value=value)
    return frame
