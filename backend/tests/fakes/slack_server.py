"""A fake Slack Web API: `POST /api/{method}` (auth.test, chat.postMessage, chat.update,
files.getUploadURLExternal, files.completeUploadExternal), the upload URL it hands out,
and private file downloads, with Slack's shapes (`{"ok": true, ...}`, bearer token)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from fakes.platform_base import Call, PlatformServer

BOT_TOKEN = "xoxb-test-token"
SIGNING_SECRET = "slack-signing-secret"
BOT_USER = "UBOT"


class FakeSlack(PlatformServer):
    def __init__(self) -> None:
        super().__init__()
        self._ts = itertools.count(1)
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.files: dict[str, bytes] = {}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/{method}", self._api, methods=["POST"]),
            Route("/upload/{file_id}", self._upload, methods=["POST"]),
            Route("/files-pri/{name}", self._download, methods=["GET"]),
        ]

    def texts(self, channel: str) -> list[str]:
        return [
            str(c.body["text"])
            for c in self.calls
            if c.method in ("chat.postMessage", "chat.update") and c.body.get("channel") == channel
        ]

    async def _api(self, request: Request) -> Response:
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
