"""A fake DingTalk: Stream mode (`/v1.0/gateway/connections/open` handing out an endpoint
and a one-time ticket, the WebSocket with SYSTEM ping / disconnect frames and robot
CALLBACK frames that must be acknowledged) and the OpenAPI subset a robot uses: the access
token, interactive cards sent and updated, robot messages (files, images), the legacy
`media/upload`, and message file downloads. Shapes as in DingTalk's docs and its Python
Stream SDK (frames `{specVersion, type, headers, data}` with `data` a JSON string; acks
`{code, headers: {messageId, contentType}, message, data}`); a refused token is HTTP 401,
a rate limit HTTP 429 with `Retry-After`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from fakes.platform_base import Call, PlatformServer

CLIENT_ID = "dingtest0001"
CLIENT_SECRET = "dingtalk-client-secret"
BOT_TOPIC = "/v1.0/im/bot/messages/get"


class FakeDingTalk(PlatformServer):
    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.tickets: set[str] = set()
        self.cards: dict[str, dict[str, Any]] = {}  # cardBizId -> the card as sent
        self.media: dict[str, tuple[str, str, bytes]] = {}  # media_id -> (type, name, data)
        self.files: dict[str, bytes] = {}  # downloadCode -> bytes
        self.acks: dict[str, dict[str, Any]] = {}  # messageId -> the client's ack
        self._socket: WebSocket | None = None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1.0/gateway/connections/open", self._open, methods=["POST"]),
            WebSocketRoute("/connect", self._ws),
            Route("/v1.0/oauth2/accessToken", self._token, methods=["POST"]),
            Route("/v1.0/im/v1.0/robot/interactiveCards/send", self._send_card, methods=["POST"]),
            Route("/v1.0/im/robots/interactiveCards", self._update_card, methods=["PUT"]),
            Route("/v1.0/robot/oToMessages/batchSend", self._robot_private, methods=["POST"]),
            Route("/v1.0/robot/groupMessages/send", self._robot_group, methods=["POST"]),
            Route("/media/upload", self._upload, methods=["POST"]),
            Route("/v1.0/robot/messageFiles/download", self._download_url, methods=["POST"]),
            Route("/files/{code}", self._file, methods=["GET"]),
        ]

    # -- test side ---------------------------------------------------------------------------

    def expire_tokens(self) -> None:
        with self._cond:
            self.tokens.clear()

    def texts(self, conversation: str) -> list[str]:
        """The Markdown of every card sent or updated in `conversation`, in order."""
        with self._cond:
            calls = list(self.calls)
        return [
            c.body["markdown"]
            for c in calls
            if c.method in ("card", "card_update") and c.body["conversation"] == conversation
        ]

    def sent(self, conversation: str) -> list[Call]:
        with self._cond:
            return [
                c
                for c in self.calls
                if c.method in ("card", "robot") and c.body["conversation"] == conversation
            ]

    def message(
        self,
        *,
        conversation: str,
        staff: str = "staff1",
        text: str | None = None,
        group: bool = False,
        mentioned: bool = True,
        msgtype: str = "text",
        content: dict[str, Any] | None = None,
        msg_id: str | None = None,
    ) -> dict[str, Any]:
        """A robot message as DingTalk delivers it on the robot topic."""
        n = next(self._ids)
        data: dict[str, Any] = {
            "conversationId": conversation,
            "chatbotCorpId": "dingcorp",
            "chatbotUserId": "$:LWCP_v1:$bot",
            "msgId": msg_id or f"msg{n}",
            "senderNick": f"Nick {staff}",
            "isAdmin": False,
            "senderStaffId": staff,
            "sessionWebhookExpiredTime": int(time.time() * 1000) + 5400_000,
            "createAt": int(time.time() * 1000),
            "senderCorpId": "dingcorp",
            "conversationType": "2" if group else "1",
            "senderId": f"$:LWCP_v1:${staff}",
            "sessionWebhook": f"{self.url}/robot/sendBySession?session=x",
            "robotCode": CLIENT_ID,
            "msgtype": msgtype,
        }
        if group:
            data["isInAtList"] = mentioned
            data["conversationTitle"] = "Team"
        if msgtype == "text":
            data["text"] = {"content": text or ""}
        else:
            data["content"] = content or {}
        return data

    def push(self, data: dict[str, Any], message_id: str | None = None) -> str:
        """Deliver a robot message down the Stream connection; the frame's messageId."""
        mid = message_id or f"frame-{next(self._ids)}"
        frame = {
            "specVersion": "1.0",
            "type": "CALLBACK",
            "headers": {
                "appId": "app",
                "connectionId": "conn",
                "contentType": "application/json",
                "messageId": mid,
                "time": str(int(time.time() * 1000)),
                "topic": BOT_TOPIC,
            },
            "data": json.dumps(data, ensure_ascii=False),
        }
        self._on_loop(self._send(json.dumps(frame)))
        return mid

    def system(self, topic: str, data: dict[str, Any] | None = None) -> str:
        mid = f"sys-{next(self._ids)}"
        frame = {
            "specVersion": "1.0",
            "type": "SYSTEM",
            "headers": {"contentType": "application/json", "messageId": mid, "topic": topic},
            "data": json.dumps(data or {}),
        }
        self._on_loop(self._send(json.dumps(frame)))
        return mid

    def drop_connection(self) -> None:
        self._on_loop(self._close())

    def _on_loop(self, coro: Any) -> None:
        assert self.loop is not None, "no stream connection yet"
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    async def _send(self, text: str) -> None:
        assert self._socket is not None, "no stream connection open"
        await self._socket.send_text(text)

    async def _close(self) -> None:
        if self._socket is not None:
            await self._socket.close(code=1001)

    # -- Stream mode -------------------------------------------------------------------------

    async def _open(self, request: Request) -> Response:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        body = json.loads(await request.body())
        self.record(Call("open", body))
        if body.get("clientId") != CLIENT_ID or body.get("clientSecret") != CLIENT_SECRET:
            return JSONResponse({"code": "InvalidAuthentication", "message": "bad client"}, 401)
        ticket = f"ticket-{next(self._ids)}"
        with self._cond:
            self.tickets.add(ticket)
        return JSONResponse({"endpoint": f"ws://127.0.0.1:{self.port}/connect", "ticket": ticket})

    async def _ws(self, socket: WebSocket) -> None:
        ticket = socket.query_params.get("ticket", "")
        with self._cond:
            valid = ticket in self.tickets
            self.tickets.discard(ticket)  # one connection per ticket
        if not valid:
            self.record(Call("ws_refused", {"ticket": ticket}))
            await socket.close(code=1008)
            return
        await socket.accept()
        self.loop = asyncio.get_running_loop()
        self._socket = socket
        self.record(Call("ws_connect", {"ticket": ticket}))
        try:
            while True:
                ack = json.loads(await socket.receive_text())
                mid = str(ack.get("headers", {}).get("messageId", ""))
                with self._cond:
                    self.acks[mid] = ack
                self.record(Call("ack", ack))
        except WebSocketDisconnect:
            pass
        finally:
            if self._socket is socket:
                self._socket = None

    # -- OpenAPI -----------------------------------------------------------------------------

    def _auth(self, request: Request, token: str | None = None) -> Response | None:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        given = token if token is not None else request.headers.get("x-acs-dingtalk-access-token")
        with self._cond:
            valid = given in self.tokens
        if not valid:
            self.record(Call("refused", {"path": request.url.path}))
            return JSONResponse(
                {"code": "InvalidAuthentication", "message": "不合法的access_token"}, 401
            )
        return None

    def _limited(self, method: str, body: dict[str, Any]) -> Response | None:
        if self.take_limit(method, body):
            return JSONResponse(
                {"code": "Throttling", "message": "rate limited"},
                429,
                headers={"retry-after": str(self.retry_after)},
            )
        return None

    async def _token(self, request: Request) -> Response:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        body = json.loads(await request.body())
        self.record(Call("token", {"appKey": body.get("appKey")}))
        if body.get("appKey") != CLIENT_ID or body.get("appSecret") != CLIENT_SECRET:
            return JSONResponse({"code": "invalidClientSecret", "message": "bad secret"}, 400)
        token = f"dt-{next(self._ids)}"
        with self._cond:
            self.tokens.add(token)
        return JSONResponse({"accessToken": token, "expireIn": 7200})

    def _conversation(self, body: dict[str, Any]) -> str | None:
        if body.get("openConversationId"):
            return str(body["openConversationId"])
        receiver = body.get("singleChatReceiver")
        if isinstance(receiver, str):
            return "single:" + str(json.loads(receiver).get("userId"))
        users = body.get("userIds")
        if isinstance(users, list) and len(users) == 1:
            return f"single:{users[0]}"
        return None

    @staticmethod
    def _markdown(card_data: str) -> str:
        data = json.loads(card_data)
        return "\n".join(c["text"] for c in data["contents"] if c["type"] == "markdown")

    async def _send_card(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        conversation = self._conversation(body)
        if (limited := self._limited("card", {"conversation": conversation})) is not None:
            return limited
        if (
            body.get("cardTemplateId") != "StandardCard"
            or body.get("robotCode") != CLIENT_ID
            or not body.get("cardBizId")
            or conversation is None
        ):
            return JSONResponse({"code": "InvalidParameter", "message": "bad card"}, 400)
        markdown = self._markdown(body["cardData"])
        self.cards[body["cardBizId"]] = {**body, "conversation": conversation}
        self.record(
            Call(
                "card",
                {"conversation": conversation, "card": body["cardBizId"], "markdown": markdown},
            )
        )
        return JSONResponse({"processQueryKey": f"pqk-{next(self._ids)}"})

    async def _update_card(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        card = self.cards.get(str(body.get("cardBizId")))
        if card is None:
            return JSONResponse({"code": "InvalidParameter", "message": "no such card"}, 400)
        conversation = card["conversation"]
        if (limited := self._limited("card_update", {"conversation": conversation})) is not None:
            return limited
        card["cardData"] = body["cardData"]
        self.record(
            Call(
                "card_update",
                {
                    "conversation": conversation,
                    "card": body["cardBizId"],
                    "markdown": self._markdown(body["cardData"]),
                },
            )
        )
        return JSONResponse({"success": True})

    async def _robot(self, request: Request, kind: str) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        conversation = self._conversation(body)
        if body.get("robotCode") != CLIENT_ID or conversation is None:
            return JSONResponse({"code": "InvalidParameter", "message": "bad message"}, 400)
        param = json.loads(body["msgParam"])
        for field in ("mediaId", "photoURL"):
            if field in param and param[field] not in self.media:
                return JSONResponse({"code": "InvalidParameter", "message": "bad media"}, 400)
        self.record(
            Call(
                "robot",
                {
                    "conversation": conversation,
                    "kind": kind,
                    "msgKey": body["msgKey"],
                    "param": param,
                },
            )
        )
        return JSONResponse({"processQueryKey": f"pqk-{next(self._ids)}"})

    async def _robot_private(self, request: Request) -> Response:
        return await self._robot(request, "private")

    async def _robot_group(self, request: Request) -> Response:
        return await self._robot(request, "group")

    async def _upload(self, request: Request) -> Response:
        token = request.query_params.get("access_token", "")
        if self._auth(request, token) is not None:  # the legacy API: errcode on HTTP 200
            return JSONResponse({"errcode": 40014, "errmsg": "invalid access_token"})
        kind = request.query_params.get("type", "")
        async with request.form() as form:
            part = form["media"]
            assert not isinstance(part, str)
            name, data = part.filename or "", await part.read()
        if kind not in ("image", "voice", "video", "file"):
            return JSONResponse({"errcode": 40004, "errmsg": "invalid media type"})
        media_id = f"@lA{next(self._ids)}"
        self.media[media_id] = (kind, name, data)
        self.record(Call("upload", {"media_id": media_id, "type": kind, "name": name}))
        return JSONResponse(
            {"errcode": 0, "errmsg": "ok", "type": kind, "media_id": media_id, "created_at": 1}
        )

    async def _download_url(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        code = str(body.get("downloadCode"))
        self.record(Call("download", {"downloadCode": code}))
        if body.get("robotCode") != CLIENT_ID or code not in self.files:
            return JSONResponse({"code": "InvalidParameter", "message": "bad downloadCode"}, 400)
        return JSONResponse({"downloadUrl": f"{self.url}/files/{code}"})

    async def _file(self, request: Request) -> Response:
        data = self.files.get(request.path_params["code"])
        if data is None:
            return Response(status_code=404)
        return Response(data, media_type="application/octet-stream")
