"""DingTalk through an internal app's robot: Stream mode in (dingtalk/stream.py), the
OpenAPI out.

Messages arrive on the robot topic: private chats (`conversationType` "1") and group
messages that @mention the robot ("2"). `msgId` dedupes redeliveries. Replies are
interactive cards (`StandardCard`, one Markdown element) sent with
`POST /v1.0/im/v1.0/robot/interactiveCards/send` (to the group's `openConversationId`,
or to the user in a private chat) and edited in place as the answer streams with
`PUT /v1.0/im/robots/interactiveCards`, by the `cardBizId` the gateway chose. Files go up
through the legacy `POST {oapi}/media/upload` and are sent as `sampleFile` /
`sampleImageMsg` robot messages; files and pictures users send are fetched through
`POST /v1.0/robot/messageFiles/download` (a short-lived URL). Calls carry the app's access
token (`POST /v1.0/oauth2/accessToken`, cached, renewed when refused with 401).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any, cast

import httpx

from pronghorn.channels.access_token import AccessToken
from pronghorn.channels.dingtalk.stream import StreamConnection
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call, download_capped
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import DingTalkConfig

log = logging.getLogger("pronghorn.channels")

_IMAGE_TYPES = frozenset({"png", "jpg", "jpeg", "gif", "bmp"})
_IMAGE_MAX_BYTES = 10 * 1024 * 1024
_INVALID_TOKEN_ERRCODES = frozenset({40014, 42001})  # the legacy API's answer


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def card_data(markdown: str) -> str:
    """A StandardCard's data: one Markdown element."""
    data = {
        "config": {"autoLayout": True, "enableForward": True},
        "contents": [{"type": "markdown", "text": markdown, "id": "answer"}],
    }
    return json.dumps(data, ensure_ascii=False)


class DingTalkTransport:
    name = "dingtalk"
    max_text = 5000
    supports_edit = True
    exclusive = True  # one Stream connection per app across replicas

    def __init__(self, config: DingTalkConfig) -> None:
        self.config = config
        self._base = config.api_base_url.rstrip("/")
        self._oapi = config.oapi_base_url.rstrip("/")
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(30, connect=10))
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)
        self.tokens = AccessToken(self._fetch_token)
        self._sink: Sink | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.stream: StreamConnection | None = None

    def edit_interval(self, target: Target) -> float:
        return self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return markdown

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._sink = sink
        self.stream = StreamConnection(
            self._client,
            self._base,
            self.config.client_id,
            self.config.client_secret.get_secret_value(),
            Backoff(self.config.retry_initial_s, self.config.retry_max_s),
            self._take,
            report,
        )
        self._tasks.append(asyncio.create_task(self.stream.run(), name="dingtalk-stream"))

    async def stop(self) -> None:
        self._sink = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await self._client.aclose()

    # -- OpenAPI ----------------------------------------------------------------------------

    async def _fetch_token(self) -> tuple[str, float]:
        response = await call(
            self._client,
            "accessToken",
            f"{self._base}/v1.0/oauth2/accessToken",
            attempts=3,
            backoff=self._backoff,
            json={
                "appKey": self.config.client_id,
                "appSecret": self.config.client_secret.get_secret_value(),
            },
        )
        body = as_json(response, "accessToken")
        token, ttl = body.get("accessToken"), body.get("expireIn")
        if response.status_code != 200 or not isinstance(token, str) or not token:
            raise PlatformError(
                f"accessToken: HTTP {response.status_code} {body.get('code') or ''}".strip()
            )
        return token, float(ttl) if isinstance(ttl, (int, float)) and ttl > 0 else 7200.0

    async def _api(
        self,
        verb: str,
        path: str,
        what: str,
        *,
        raise_on_limit: bool = False,
        **kwargs: Any,  # Any: httpx request options, passed through
    ) -> WireMap:
        """Call the OpenAPI with the token (renewed once when refused); its JSON answer."""
        for attempt in (1, 2):
            token = await self.tokens.get()
            response = await call(
                self._client,
                what,
                f"{self._base}{path}",
                attempts=3,
                backoff=self._backoff,
                retry_after=_retry_after,
                method=verb,
                raise_on_limit=raise_on_limit,
                headers={"x-acs-dingtalk-access-token": token},
                **kwargs,
            )
            if response.status_code == 401 and attempt == 1:
                log.info("dingtalk token refused, renewing", extra={"channel": "dingtalk"})
                self.tokens.invalidate(token)
                continue
            body = as_json(response, what)
            if response.status_code != 200:
                raise PlatformError(
                    f"{what}: HTTP {response.status_code} {body.get('code') or ''}".strip()
                )
            return body
        raise AssertionError("unreachable")

    def _receiver(self, target: Target) -> WireDict:
        if target.is_group:
            return {"openConversationId": target.chat_id}
        return {"singleChatReceiver": json.dumps({"userId": target.reply_ref or ""})}

    async def send(self, target: Target, text: str) -> Sent:
        card_id = uuid.uuid4().hex
        body = {
            "cardTemplateId": "StandardCard",
            "robotCode": self.config.client_id,
            "cardBizId": card_id,
            "cardData": card_data(text),
            "sendOptions": {"atAll": False},
            **self._receiver(target),
        }
        await self._api("POST", "/v1.0/im/v1.0/robot/interactiveCards/send", "send card", json=body)
        return Sent(target.chat_id, card_id)

    async def edit(self, sent: Sent, text: str) -> None:
        body = {"cardBizId": sent.message_id, "cardData": card_data(text)}
        await self._api(
            "PUT", "/v1.0/im/robots/interactiveCards", "update card", raise_on_limit=True, json=body
        )

    async def _robot_message(self, target: Target, key: str, param: Mapping[str, str]) -> None:
        body: WireDict = {
            "robotCode": self.config.client_id,
            "msgKey": key,
            "msgParam": json.dumps(param, ensure_ascii=False),
        }
        if target.is_group:
            body["openConversationId"] = target.chat_id
            path = "/v1.0/robot/groupMessages/send"
        else:
            body["userIds"] = [target.reply_ref or ""]
            path = "/v1.0/robot/oToMessages/batchSend"
        await self._api("POST", path, f"send {key}", json=body)

    async def _upload_media(self, kind: str, name: str, data: bytes) -> str:
        for attempt in (1, 2):
            token = await self.tokens.get()
            response = await call(
                self._client,
                "media upload",
                f"{self._oapi}/media/upload",
                attempts=3,
                backoff=self._backoff,
                retry_after=_retry_after,
                params={"access_token": token, "type": kind},
                files={"media": (name, data, "application/octet-stream")},
            )
            body = as_json(response, "media upload")
            code = body.get("errcode")
            if (response.status_code == 401 or code in _INVALID_TOKEN_ERRCODES) and attempt == 1:
                self.tokens.invalidate(token)
                continue
            media_id = body.get("media_id")
            if code != 0 or not isinstance(media_id, str) or not media_id:
                raise PlatformError(f"media upload: errcode {code} {body.get('errmsg') or ''}")
            return media_id
        raise AssertionError("unreachable")

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        if ext in _IMAGE_TYPES and len(data) <= _IMAGE_MAX_BYTES:
            media_id = await self._upload_media("image", name, data)
            await self._robot_message(target, "sampleImageMsg", {"photoURL": media_id})
            return
        media_id = await self._upload_media("file", name, data)
        param = {"mediaId": media_id, "fileName": name, "fileType": ext or "file"}
        await self._robot_message(target, "sampleFile", param)

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        answer = await self._api(
            "POST",
            "/v1.0/robot/messageFiles/download",
            "file download",
            json={"downloadCode": file.ref, "robotCode": self.config.client_id},
        )
        url = answer.get("downloadUrl")
        # DingTalk's URLs are https; plain http only when the API itself is (a local test)
        schemes = ("https://",) if self._base.startswith("https://") else ("https://", "http://")
        if not isinstance(url, str) or not url.startswith(schemes):
            raise PlatformError("file download: no downloadUrl")
        return await download_capped(self._client, url, file.name, max_bytes)

    # -- inbound ----------------------------------------------------------------------------

    async def _take(self, data: WireMap) -> None:
        msg = self.parse(data)
        if msg is not None and self._sink is not None:
            await self._sink(msg)

    def parse(self, data: WireMap) -> Inbound | None:
        msg_id = str(data.get("msgId") or "")
        conversation = str(data.get("conversationId") or "")
        sender = str(data.get("senderStaffId") or data.get("senderId") or "")
        if not msg_id or not conversation or not sender:
            return None
        kind = data.get("msgtype")
        content = as_map(data.get("content"))
        text, files = "", list[InboundFile]()
        if kind == "text":
            text = str(as_map(data.get("text")).get("content") or "").strip()
        elif kind == "picture" and content.get("downloadCode"):
            files = [InboundFile("image.png", str(content["downloadCode"]))]
        elif kind == "file" and content.get("downloadCode"):
            name = str(content.get("fileName") or "file")
            files = [InboundFile(name, str(content["downloadCode"]))]
        elif kind == "richText":
            parts: list[str] = []
            for raw in cast(list[object], content.get("richText") or []):
                item = as_map(raw)
                if item.get("text"):
                    parts.append(str(item["text"]))
                elif item.get("downloadCode"):
                    n = len(files) + 1
                    files.append(InboundFile(f"image-{n}.png", str(item["downloadCode"])))
            text = "".join(parts).strip()
        else:
            return None  # audio, video, cards…
        is_group = str(data.get("conversationType") or "1") == "2"
        return Inbound(
            delivery_id=msg_id,
            chat_id=conversation,
            user_id=sender,
            text=text,
            user_name=str(data.get("senderNick") or ""),
            is_group=is_group,
            mentioned=bool(data.get("isInAtList")) or not is_group,
            files=tuple(files),
            reply_ref=sender,
        )
