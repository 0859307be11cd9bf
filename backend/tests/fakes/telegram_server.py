"""A fake Telegram Bot API: `/bot{token}/{method}` (getMe, getUpdates long polling,
sendMessage, editMessageText, sendDocument, getFile) and `/file/bot{token}/{path}`, with
the Bot API's request and response shapes (`{"ok": true, "result": ...}`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from fakes.platform_base import Call, PlatformServer

TOKEN = "123456:TEST-token"
BOT = {"id": 999, "is_bot": True, "first_name": "Pronghorn", "username": "pronghorn_bot"}


class FakeTelegram(PlatformServer):
    def __init__(self, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.files: dict[str, tuple[str, bytes]] = {}  # file_id -> (path, bytes)
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._new_update: asyncio.Event | None = None
        # Like Telegram, a getUpdates while another is waiting ends the older one with 409
        # Conflict ("terminated by other getUpdates request"): two pollers of one bot.
        self._waiting: asyncio.Event | None = None
        self.conflicts = 0
        self._closing = False
        self.failing_polls = 0  # end this many getUpdates with 502 (the one waiting first)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/bot{token}/{method}", self._api, methods=["GET", "POST"]),
            Route("/file/bot{token}/{path:path}", self._file, methods=["GET"]),
        ]

    def stop(self) -> None:
        """Stop; a long poll still waiting ends at once (as when Telegram closes it), so the
        server's shutdown need not wait out the poll's timeout."""
        self._closing = True
        if self.loop is not None and self._new_update is not None:
            self.loop.call_soon_threadsafe(self._new_update.set)
        super().stop()

    # -- test side ---------------------------------------------------------------------------

    def fail_polls(self, n: int = 1) -> None:
        """End the waiting long poll (and the next `n - 1`) with 502 Bad Gateway, as when
        Telegram's front end drops a poll."""
        with self._cond:
            self.failing_polls = n
        if self.loop is not None and self._new_update is not None:
            self.loop.call_soon_threadsafe(self._new_update.set)

    def user_message(
        self,
        text: str,
        *,
        user_id: int = 42,
        chat_id: int | None = None,
        username: str = "alice",
        is_bot: bool = False,
        chat_type: str = "private",
        document: tuple[str, bytes] | None = None,
        message_id: int | None = None,
    ) -> dict[str, Any]:
        """Queue an update as Telegram would deliver it; the update."""
        mid = message_id if message_id is not None else next(self._message_ids)
        message: dict[str, Any] = {
            "message_id": mid,
            "date": 1764590000,
            "from": {"id": user_id, "is_bot": is_bot, "first_name": username, "username": username},
            "chat": {"id": chat_id or user_id, "type": chat_type},
        }
        if document is not None:
            file_id = f"file-{mid}"
            self.files[file_id] = (f"documents/{document[0]}", document[1])
            message["document"] = {
                "file_id": file_id,
                "file_unique_id": f"u{mid}",
                "file_name": document[0],
                "file_size": len(document[1]),
            }
            message["caption"] = text
        else:
            message["text"] = text
        update = {"update_id": next(self._update_ids), "message": message}
        self.push(update)
        return update

    def redeliver(self, update: dict[str, Any]) -> None:
        """Deliver a message again, as Telegram does when its update was not confirmed."""
        self.push({**update, "update_id": next(self._update_ids)})

    def push(self, update: dict[str, Any]) -> None:
        with self._cond:
            self.updates.append(update)
        if self.loop is not None and self._new_update is not None:
            self.loop.call_soon_threadsafe(self._new_update.set)

    def sent_texts(self, chat_id: int) -> list[str]:
        return [
            str(c.body["text"]) for c in self.of("sendMessage") if int(c.body["chat_id"]) == chat_id
        ]

    # -- server side -------------------------------------------------------------------------

    async def _body(self, request: Request) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
        kind = request.headers.get("content-type", "")
        if kind.startswith("application/json"):
            return json.loads(await request.body() or b"{}"), {}
        fields: dict[str, Any] = {}
        files: dict[str, tuple[str, bytes]] = {}
        async with request.form() as form:
            for key, value in form.multi_items():
                if isinstance(value, str):
                    fields[key] = value
                else:
                    files[key] = (value.filename or "", await value.read())
        return fields, files

    async def _api(self, request: Request) -> Response:
        if request.path_params["token"] != self.token:
            return JSONResponse(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, 401
            )
        if self.down:
            return JSONResponse({"ok": False, "error_code": 502, "description": "Bad Gateway"}, 502)
        method = request.path_params["method"]
        body, files = await self._body(request)
        if method == "getUpdates":
            return await self._get_updates(body)
        if self.take_limit(method, body):
            return JSONResponse(
                {
                    "ok": False,
                    "error_code": 429,
                    "description": f"Too Many Requests: retry after {self.retry_after}",
                    "parameters": {"retry_after": self.retry_after},
                },
                429,
            )
        self.record(Call(method, body, files))
        if method == "getMe":
            return _ok(BOT)
        if method == "sendMessage":
            return _ok(self._message(body))
        if method == "editMessageText":
            return _ok(self._message(body, int(body["message_id"])))
        if method == "sendDocument":
            return _ok({**self._message(body), "document": {"file_name": files["document"][0]}})
        if method == "getFile":
            found = self.files.get(str(body.get("file_id")))
            if found is None:
                return JSONResponse(
                    {"ok": False, "error_code": 400, "description": "Bad Request: invalid file_id"},
                    400,
                )
            return _ok(
                {"file_id": body["file_id"], "file_path": found[0], "file_size": len(found[1])}
            )
        return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, 404)

    def _message(self, body: dict[str, Any], message_id: int | None = None) -> dict[str, Any]:
        return {
            "message_id": message_id or next(self._message_ids),
            "date": 1764590000,
            "from": BOT,
            "chat": {"id": int(body["chat_id"]), "type": "private"},
            "text": body.get("text", ""),
        }

    async def _get_updates(self, body: dict[str, Any]) -> Response:
        offset = int(body.get("offset") or 0)
        timeout = float(body.get("timeout") or 0)
        if self._new_update is None:
            self.loop = asyncio.get_running_loop()
            self._new_update = asyncio.Event()
        self._new_update.clear()
        if self._waiting is not None:
            self._waiting.set()
            self.conflicts += 1
        mine = self._waiting = asyncio.Event()
        with self._cond:
            ready = [u for u in self.updates if u["update_id"] >= offset]
        try:
            if not ready and timeout and not self._closing:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._either(self._new_update, mine), timeout)
                with self._cond:
                    ready = [u for u in self.updates if u["update_id"] >= offset]
        finally:
            if self._waiting is mine:
                self._waiting = None
        with self._cond:
            failing = self.failing_polls > 0
            self.failing_polls -= int(failing)
        if failing:
            self.record(Call("getUpdates!502", body))
            return JSONResponse({"ok": False, "error_code": 502, "description": "Bad Gateway"}, 502)
        self.record(Call("getUpdates", body))
        if mine.is_set():
            description = "Conflict: terminated by other getUpdates request"
            return JSONResponse({"ok": False, "error_code": 409, "description": description}, 409)
        return _ok(ready)

    @staticmethod
    async def _either(a: asyncio.Event, b: asyncio.Event) -> None:
        waits = [asyncio.ensure_future(a.wait()), asyncio.ensure_future(b.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def _file(self, request: Request) -> Response:
        if request.path_params["token"] != self.token:
            return Response(status_code=401)
        path = request.path_params["path"]
        for stored_path, data in self.files.values():
            if stored_path == path:
                return Response(data, media_type="application/octet-stream")
        return Response(status_code=404)


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})
