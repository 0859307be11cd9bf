"""Telegram over the Bot API (https://core.telegram.org/bots/api), by long polling.

Calls go to `{api_base_url}/bot{token}/{method}`; files download from
`{api_base_url}/file/bot{token}/{file_path}`. Private chats are one conversation each;
in groups the bot answers when mentioned (`@bot`) or replied to, and a forum topic
(`message_thread_id`) is a conversation of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, cast

import httpx

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call, download_capped
from pronghorn.channels.render import telegram_html
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import TelegramConfig

log = logging.getLogger("pronghorn.channels")


class TelegramTransport:
    name = "telegram"
    exclusive = True  # long polling: one replica at a time (a lease)
    max_text = 4096
    supports_edit = True

    def __init__(self, config: TelegramConfig) -> None:
        self.config = config
        token = config.bot_token.get_secret_value()
        base = config.api_base_url.rstrip("/")
        self._api = f"{base}/bot{token}"
        self._files = f"{base}/file/bot{token}"
        timeout = httpx.Timeout(connect=10, read=config.poll_timeout_s + 15, write=30, pool=10)
        self._client = httpx.AsyncClient(timeout=timeout)
        self._task: asyncio.Task[None] | None = None
        self.bot_id: int | None = None
        self.username: str = ""
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)

    def edit_interval(self, target: Target) -> float:
        return self.config.group_edit_interval_s if target.is_group else self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return telegram_html(markdown)

    # -- calls ------------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        attempts: int = 3,
        raise_on_limit: bool = False,
        **kwargs: Any,  # Any: httpx request options, passed through
    ) -> Any:  # Any: the answer's `result`: a JSON object, list or value, by method
        response = await call(
            self._client,
            method,
            f"{self._api}/{method}",
            attempts=attempts,
            raise_on_limit=raise_on_limit,
            backoff=self._backoff,
            retry_after=_retry_after,
            **kwargs,
        )
        body = as_json(response, method)
        if not body.get("ok"):
            raise PlatformError(f"{method}: {body.get('description') or response.status_code}")
        return body.get("result")

    async def identify(self) -> str:
        """The bot's username (`getMe`, asked once); PlatformError if Telegram cannot say."""
        if self.bot_id is None:
            me = as_map(await self._call("getMe", attempts=1))
            self.bot_id, self.username = int(me.get("id", 0)), str(me.get("username", ""))
        return self.username

    # -- receiving --------------------------------------------------------------------------

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._task = asyncio.create_task(self._poll(sink, report), name="telegram-poll")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._client.aclose()

    async def _poll(self, sink: Sink, report: ErrorReport) -> None:
        offset: int | None = None
        backoff = Backoff(self.config.retry_initial_s, self.config.retry_max_s)
        while True:
            try:
                await self.identify()
                body: WireDict = {
                    "timeout": self.config.poll_timeout_s,
                    "allowed_updates": ["message"],
                }
                if offset is not None:
                    body["offset"] = offset
                updates = await self._call("getUpdates", attempts=1, json=body)
            except PlatformError as exc:
                log.error(
                    "telegram polling failed", extra={"channel": "telegram", "error": str(exc)}
                )
                report(str(exc))
                await backoff.wait()
                continue
            backoff.reset()
            for update in cast(list[object], updates if isinstance(updates, list) else []):
                u = as_map(update)
                offset = max(offset or 0, int(u.get("update_id", 0)) + 1)
                msg = self.parse(u)
                if msg is not None:
                    await sink(msg)

    def parse(self, update: WireMap) -> Inbound | None:
        message = as_map(update.get("message"))
        if not message:
            return None
        chat, sender = as_map(message.get("chat")), as_map(message.get("from"))
        text = str(message.get("text") or message.get("caption") or "")
        files: list[InboundFile] = []
        document = as_map(message.get("document"))
        if document.get("file_id"):
            files.append(
                InboundFile(
                    str(document.get("file_name") or "document"),
                    str(document["file_id"]),
                    document.get("file_size"),
                )
            )
        photos = message.get("photo")
        if isinstance(photos, list) and photos:
            best = as_map(cast(list[object], photos)[-1])
            if best.get("file_id"):
                name = f"photo-{message.get('message_id')}.jpg"
                files.append(InboundFile(name, str(best["file_id"]), best.get("file_size")))
        is_group = chat.get("type") in ("group", "supergroup")
        reply_from = as_map(as_map(message.get("reply_to_message")).get("from"))
        mentioned = (bool(self.username) and f"@{self.username}".lower() in text.lower()) or (
            self.bot_id is not None and reply_from.get("id") == self.bot_id
        )
        topic = message.get("message_thread_id") if message.get("is_topic_message") else None
        return Inbound(
            delivery_id=f"{chat.get('id')}:{message.get('message_id')}",
            chat_id=str(chat.get("id")),
            user_id=str(sender.get("id")),
            user_name=str(sender.get("username") or sender.get("first_name") or ""),
            text=text,
            topic_id=str(topic) if topic is not None else None,
            is_group=is_group,
            mentioned=mentioned,
            from_bot=bool(sender.get("is_bot")) or sender.get("id") == self.bot_id,
            files=tuple(files),
        )

    # -- sending ----------------------------------------------------------------------------

    def _where(self, target: Target) -> WireDict:
        where: WireDict = {"chat_id": target.chat_id}
        if target.topic_id is not None:
            where["message_thread_id"] = int(target.topic_id)
        return where

    async def send(self, target: Target, text: str) -> Sent:
        body = {**self._where(target), "text": text, "parse_mode": "HTML"}
        result = as_map(await self._call("sendMessage", json=body))
        return Sent(target.chat_id, str(result.get("message_id")))

    async def edit(self, sent: Sent, text: str) -> None:
        body = {
            "chat_id": sent.chat_id,
            "message_id": int(sent.message_id),
            "text": text,
            "parse_mode": "HTML",
        }
        try:
            await self._call("editMessageText", raise_on_limit=True, json=body)
        except PlatformError as exc:
            if "not modified" not in str(exc):
                raise

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        fields = {k: str(v) for k, v in self._where(target).items()}
        await self._call("sendDocument", data=fields, files={"document": (name, data)})

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        info = as_map(await self._call("getFile", json={"file_id": file.ref}))
        path = str(info.get("file_path") or "")
        if not path:
            raise PlatformError("getFile: no file_path")
        return await download_capped(self._client, f"{self._files}/{path}", file.name, max_bytes)


def _retry_after(response: httpx.Response) -> float | None:
    try:
        body = as_json(response, "retry")
    except PlatformError:
        return None
    value = as_map(body.get("parameters")).get("retry_after")
    return float(value) if isinstance(value, (int, float)) else None
