"""A fake WeCom (WeChat Work) server API: `gettoken`, `message/send`, `media/upload` and
`media/get`, with WeCom's shapes (`{"errcode": 0, "errmsg": "ok", …}` on HTTP 200, the
access token as a query parameter, errcode 42001 for an expired token, 45009 for a
frequency limit). Plus the other direction: callbacks as WeCom sends them, the URL check
(`echostr`) and messages (XML, AES-encrypted and signed), to send at the gateway.

The encryption and signature are written from WeCom's callback docs (the WXBizMsgCrypt
scheme), independently of the gateway's code, so a test checks one against the other.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import struct
import time
from typing import Any
from xml.sax.saxutils import escape

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from fakes.platform_base import Call, PlatformServer

CORP_ID = "ww_test_corp"
AGENT_ID = 1000002
SECRET = "wecom-app-secret"
TOKEN = "wecom-callback-token"
AES_KEY = base64.b64encode(b"0123456789abcdef0123456789ABCDEF").decode().rstrip("=")
EXPIRED = 42001
FREQ_LIMIT = 45009


class FakeWeCom(PlatformServer):
    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.media: dict[str, tuple[str, str, bytes]] = {}  # media_id -> (type, name, data)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/cgi-bin/gettoken", self._token, methods=["GET"]),
            Route("/cgi-bin/message/send", self._send, methods=["POST"]),
            Route("/cgi-bin/media/upload", self._upload, methods=["POST"]),
            Route("/cgi-bin/media/get", self._get, methods=["GET"]),
        ]

    # -- test side ---------------------------------------------------------------------------

    def expire_tokens(self) -> None:
        with self._cond:
            self.tokens.clear()

    def texts(self, user: str) -> list[str]:
        """The Markdown (or text) of every message sent to `user`, in order."""
        with self._cond:
            calls = list(self.calls)
        out: list[str] = []
        for c in calls:
            if c.method == "send" and c.body.get("touser") == user:
                kind = c.body["msgtype"]
                if kind in ("markdown", "text"):
                    out.append(str(c.body[kind]["content"]))
        return out

    def sent(self, user: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == "send" and c.body.get("touser") == user]

    def add_media(self, data: bytes, kind: str = "image") -> str:
        media_id = f"media-in-{next(self._ids)}"
        self.media[media_id] = (kind, "", data)
        return media_id

    # -- server side -------------------------------------------------------------------------

    def _auth(self, request: Request) -> Response | None:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        given = request.query_params.get("access_token", "")
        with self._cond:
            valid = given in self.tokens
        if not valid:
            self.record(Call("refused", {"path": request.url.path}))
            return JSONResponse({"errcode": EXPIRED, "errmsg": "access_token expired"})
        return None

    def _limited(self, method: str, body: dict[str, Any]) -> Response | None:
        if self.take_limit(method, body):
            return JSONResponse({"errcode": FREQ_LIMIT, "errmsg": "api freq out of limit"})
        return None

    async def _token(self, request: Request) -> Response:
        if self.down:
            return Response("upstream unavailable", status_code=503)
        query = dict(request.query_params)
        self.record(Call("gettoken", {"corpid": query.get("corpid")}))
        if query.get("corpid") != CORP_ID or query.get("corpsecret") != SECRET:
            return JSONResponse({"errcode": 40001, "errmsg": "invalid credential"})
        token = f"wt-{next(self._ids)}"
        with self._cond:
            self.tokens.add(token)
        return JSONResponse(
            {"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": 7200}
        )

    async def _send(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = json.loads(await request.body())
        if (limited := self._limited("send", body)) is not None:
            return limited
        if body.get("agentid") != AGENT_ID:
            return JSONResponse({"errcode": 40056, "errmsg": "invalid agentid"})
        kind = body.get("msgtype")
        if kind in ("markdown", "text"):
            size = len(str(body[kind]["content"]).encode())
            if size > 2048:
                return JSONResponse({"errcode": 44004, "errmsg": f"content too long ({size})"})
        elif kind in ("image", "file"):
            if body[kind].get("media_id") not in self.media:
                return JSONResponse({"errcode": 40007, "errmsg": "invalid media_id"})
        else:
            return JSONResponse({"errcode": 40008, "errmsg": "invalid message type"})
        self.record(Call("send", body))
        return JSONResponse(
            {"errcode": 0, "errmsg": "ok", "invaliduser": "", "msgid": f"msg{next(self._ids)}"}
        )

    async def _upload(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        kind = request.query_params.get("type", "")
        async with request.form() as form:
            part = form["media"]
            assert not isinstance(part, str)
            name, data = part.filename or "", await part.read()
        if kind not in ("image", "voice", "video", "file") or len(data) < 5:
            return JSONResponse({"errcode": 40004, "errmsg": "invalid media type or size"})
        media_id = f"media-{next(self._ids)}"
        self.media[media_id] = (kind, name, data)
        self.record(Call("upload", {"media_id": media_id, "type": kind, "name": name}))
        return JSONResponse(
            {"errcode": 0, "errmsg": "", "type": kind, "media_id": media_id, "created_at": "1"}
        )

    async def _get(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        media_id = request.query_params.get("media_id", "")
        self.record(Call("media_get", {"media_id": media_id}))
        found = self.media.get(media_id)
        if found is None:
            return JSONResponse({"errcode": 40007, "errmsg": "invalid media_id"})
        return Response(found[2], media_type="application/octet-stream")

    # -- callbacks ---------------------------------------------------------------------------

    def message_xml(
        self,
        *,
        user: str,
        text: str | None = None,
        msg_type: str = "text",
        media_id: str | None = None,
        file_name: str | None = None,
        msg_id: str | None = None,
        agent_id: int = AGENT_ID,
    ) -> str:
        """A message as WeCom delivers it to the app (before encryption)."""
        fields = {
            "ToUserName": CORP_ID,
            "FromUserName": user,
            "CreateTime": str(int(time.time())),
            "MsgType": msg_type,
        }
        if text is not None:
            fields["Content"] = text
        if media_id is not None:
            fields["MediaId"] = media_id
            if msg_type == "image":
                fields["PicUrl"] = f"{self.url}/pic/{media_id}"
        if file_name is not None:
            fields["FileName"] = file_name
        fields["MsgId"] = msg_id or str(7_000_000_000 + next(self._ids))
        fields["AgentID"] = str(agent_id)
        inner = "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in fields.items())
        return f"<xml>{inner}</xml>"


def seal(plain: bytes, *, aes_key: str = AES_KEY, corp_id: str = CORP_ID) -> str:
    """WeCom's encryption: AES-256-CBC (IV: the key's first 16 bytes) of random(16) +
    length (4 bytes, network order) + message + CorpID, padded to 32-byte blocks."""
    key = base64.b64decode(aes_key + "=")
    body = os.urandom(16) + struct.pack("!I", len(plain)) + plain + corp_id.encode()
    n = 32 - len(body) % 32
    body += bytes([n] * n)
    enc = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(enc.update(body) + enc.finalize()).decode()


def sign(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted((token, timestamp, nonce, encrypted))).encode()).hexdigest()


def delivery(
    message_xml: str,
    *,
    token: str = TOKEN,
    aes_key: str = AES_KEY,
    corp_id: str = CORP_ID,
    timestamp: int | None = None,
) -> tuple[dict[str, str], bytes]:
    """The query and body of one message callback: encrypted and signed as WeCom does."""
    encrypted = seal(message_xml.encode(), aes_key=aes_key, corp_id=corp_id)
    stamp = str(timestamp if timestamp is not None else int(time.time()))
    nonce = "n" + os.urandom(4).hex()
    query = {
        "msg_signature": sign(token, stamp, nonce, encrypted),
        "timestamp": stamp,
        "nonce": nonce,
    }
    body = (
        f"<xml><ToUserName><![CDATA[{escape(corp_id)}]]></ToUserName>"
        f"<AgentID><![CDATA[{AGENT_ID}]]></AgentID>"
        f"<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>"
    )
    return query, body.encode()


def url_check(echo: str, *, token: str = TOKEN) -> dict[str, str]:
    """The query of the URL check WeCom makes when the callback URL is saved."""
    encrypted = seal(echo.encode())
    stamp, nonce = str(int(time.time())), "n" + os.urandom(4).hex()
    return {
        "msg_signature": sign(token, stamp, nonce, encrypted),
        "timestamp": stamp,
        "nonce": nonce,
        "echostr": encrypted,
    }
