"""Discord as a gateway bot (https://discord.com/developers/docs/events/gateway) plus REST.

Receiving: the gateway WebSocket (URL from `GET {api_base_url}/gateway/bot`, or
`gateway_url`). HELLO (op 10) gives the heartbeat interval; heartbeats (op 1) carry the
last sequence number and must be acknowledged (op 11) before the next one, else the
connection is a zombie and is reopened. IDENTIFY (op 2) starts a session (READY: session
id, resume URL, the bot's user and application); after a drop the session is resumed
(op 6 with session id and sequence, at the resume URL) and Discord replays what was
missed. RECONNECT (op 7) asks for exactly that; INVALID_SESSION (op 9) says whether the
session can be resumed or a new IDENTIFY is needed. Close codes 4004 and 4010-4014 mean
the bot is misconfigured (bad token, intents): the gateway is not retried.

Messages (MESSAGE_CREATE): DMs always; in guild channels per `mention_only` (a mention
of the bot, or a reply to it) and the allow-lists (discord/places.py). Every channel and DM
is a conversation of its own; a Discord thread is one too, keyed by its parent channel and
its own id (the parent is looked up once and cached). Slash commands (INTERACTION_CREATE) are
acknowledged at once with a deferred response; the first reply then edits that original
response (`PATCH /webhooks/{app}/{token}/messages/@original`), later ones are follow-ups.
Other replies are channel messages (`POST/PATCH /channels/{id}/messages`), files are
multipart attachments, and mentions in replies never ping (`allowed_mentions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from pronghorn.channels.discord.commands import EPHEMERAL, NOT_HERE, SLASH_COMMANDS, deferred
from pronghorn.channels.discord.places import Places
from pronghorn.channels.errors import ChannelError, PlatformError
from pronghorn.channels.http_api import Backoff, as_json, call, download_capped
from pronghorn.channels.transport import ErrorReport, Sink
from pronghorn.channels.types import Inbound, InboundFile, Sent, Target
from pronghorn.channels.wire import WireDict, WireMap, as_map
from pronghorn.config.schema.channels import DiscordConfig

log = logging.getLogger("pronghorn.channels")

# Close codes after which reconnecting cannot help (the docs' "reconnect: false").
FATAL_CLOSE = {
    4004: "authentication failed",
    4010: "invalid shard",
    4011: "sharding required",
    4012: "invalid API version",
    4013: "invalid intents",
    4014: "disallowed intents",
}
NEW_SESSION_CLOSE = {4007, 4009}  # invalid seq, session timed out: identify again
USER_MESSAGE_TYPES = {0, 19}  # DEFAULT, REPLY
CDN_HOSTS = ("cdn.discordapp.com", "media.discordapp.net")
INTERACTION_TTL_S = 14 * 60.0  # an interaction token lives 15 minutes
NO_PINGS: dict[str, list[str]] = {"parse": []}  # allowed_mentions that ping nobody


class GatewayRefused(ChannelError):
    """The gateway closed with a code that retrying cannot fix."""


def _list(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


@dataclass
class _Interaction:
    application_id: str
    token: str
    at: float  # monotonic time it arrived
    answered: bool = False

    @property
    def live(self) -> bool:
        return time.monotonic() - self.at < INTERACTION_TTL_S


class DiscordTransport:
    name = "discord"
    max_text = 2000
    supports_edit = True
    exclusive = True  # one gateway session at a time across replicas (a lease)

    def __init__(self, config: DiscordConfig) -> None:
        self.config = config
        self._base = config.api_base_url.rstrip("/")
        self._token = config.bot_token.get_secret_value()
        self._auth = {"authorization": f"Bot {self._token}"}
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(30, connect=10),
            headers={"user-agent": "DiscordBot (https://github.com/pronghorn, 1)"},
        )
        self._backoff = Backoff(config.retry_initial_s, config.retry_max_s)
        self._task: asyncio.Task[None] | None = None
        self._side: set[asyncio.Task[None]] = set()
        # The gateway session (kept across reconnects so it can be resumed).
        self.session_id: str | None = None
        self.resume_url: str | None = None
        self.seq: int | None = None
        self.bot_id: str | None = None
        self.application_id: str | None = None
        self._acked = True
        self._failures = 0  # connections failed in a row (a stale session is dropped after 3)
        # Slash commands being answered: interaction id -> token; sent message -> its path.
        self._interactions: dict[str, _Interaction] = {}
        self._webhook_messages: dict[str, tuple[_Interaction, str]] = {}
        self.places = Places(config, self._get_channel)

    def edit_interval(self, target: Target) -> float:
        return self.config.edit_interval_s

    def render(self, markdown: str) -> str:
        return markdown  # Discord messages are Markdown

    # -- REST -------------------------------------------------------------------------------

    async def _api(
        self,
        method: str,
        path: str,
        what: str,
        *,
        attempts: int = 3,
        answer: bool = True,
        raise_on_limit: bool = False,
        **kwargs: Any,  # Any: httpx request options, passed through
    ) -> WireDict:
        """One REST call; its JSON object (`answer=False`: the body is not read)."""
        response = await call(
            self._client,
            what,
            f"{self._base}{path}",
            attempts=attempts,
            backoff=self._backoff,
            retry_after=retry_after,
            method=method,
            raise_on_limit=raise_on_limit,
            **kwargs,
        )
        if response.status_code >= 400:
            try:
                detail = str(as_json(response, what).get("message") or "")
            except PlatformError:
                detail = ""
            raise PlatformError(f"{what}: HTTP {response.status_code} {detail}".strip())
        if response.status_code == 204 or not answer:
            return {}
        return as_json(response, what)

    # Any: httpx request options (json=, data=, files=...), passed through
    async def _bot_api(self, method: str, path: str, what: str, **kwargs: Any) -> WireDict:
        return await self._api(method, path, what, headers=self._auth, **kwargs)

    async def _get_channel(self, channel_id: str) -> WireMap:
        """`GET /channels/{id}` (one try, bounded: it runs inside the gateway's read loop)."""
        try:
            async with asyncio.timeout(10):
                return await self._bot_api(
                    "GET", f"/channels/{channel_id}", "get channel", attempts=1
                )
        except TimeoutError:
            raise PlatformError("get channel: timed out") from None

    # -- the gateway ------------------------------------------------------------------------

    async def start(self, sink: Sink, report: ErrorReport) -> None:
        self._task = asyncio.create_task(self._run(sink, report), name="discord-gateway")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._side) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._client.aclose()

    async def _run(self, sink: Sink, report: ErrorReport) -> None:
        while True:
            try:
                again_now = await self._session(sink)
            except GatewayRefused as exc:
                log.error(
                    "discord gateway refused the bot",
                    extra={"channel": "discord", "error": str(exc)},
                )
                report(str(exc))
                return
            except (PlatformError, OSError, WebSocketException, TimeoutError, ValueError) as exc:
                error = (
                    str(exc) if isinstance(exc, PlatformError) else f"gateway: {type(exc).__name__}"
                )
                log.error("discord gateway failed", extra={"channel": "discord", "error": error})
                report(error)
                self._failures += 1
                if self._failures >= 3:  # the session's resume URL may be what is failing
                    self.forget_session()
                await self._backoff.wait()
                continue
            if not again_now:
                await self._backoff.wait()

    async def _gateway_url(self) -> str:
        url = self.config.gateway_url
        if not url:
            body = await self._bot_api("GET", "/gateway/bot", "gateway/bot", attempts=1)
            url = str(body.get("url") or "")
            if not url:
                raise PlatformError("gateway/bot: no url")
        return url

    async def _session(self, sink: Sink) -> bool:
        """One connection, until it ends; True when the next one may start at once."""
        resuming = bool(self.session_id and self.seq is not None and self.resume_url)
        url = self.resume_url if resuming and self.resume_url else await self._gateway_url()
        async with connect(
            _with_query(url), open_timeout=20, close_timeout=5, ping_interval=None, max_size=2**24
        ) as ws:
            hello = await self._receive(ws, 30)
            if hello.get("op") != 10:
                raise PlatformError("gateway: no HELLO")
            interval = float(as_map(hello.get("d")).get("heartbeat_interval") or 41250) / 1000
            self._acked = True
            beat = asyncio.create_task(self._heartbeat(ws, interval), name="discord-heartbeat")
            try:
                if resuming:
                    resume = {"token": self._token, "session_id": self.session_id, "seq": self.seq}
                    await self._send(ws, 6, resume)
                else:
                    await self._send(ws, 2, self._identify())
                return await self._read(ws, sink)
            finally:
                beat.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await beat

    def _identify(self) -> WireDict:
        return {
            "token": self._token,
            "intents": self.config.intents,
            "properties": {"os": sys.platform, "browser": "pronghorn", "device": "pronghorn"},
        }

    @staticmethod
    async def _receive(ws: ClientConnection, wait_s: float) -> WireMap:
        async with asyncio.timeout(wait_s):
            raw = await ws.recv()
        return as_map(json.loads(raw))

    @staticmethod
    async def _send(ws: ClientConnection, op: int, d: object) -> None:
        await ws.send(json.dumps({"op": op, "d": d}))

    async def _heartbeat(self, ws: ClientConnection, interval: float) -> None:
        await asyncio.sleep(interval * random.random())  # jitter, as the docs ask
        while True:
            if not self._acked:  # no ACK since the last beat: a zombie connection
                log.warning("discord heartbeat not acknowledged", extra={"channel": "discord"})
                await ws.close(4000, "heartbeat not acknowledged")  # not 1000: stay resumable
                return
            self._acked = False
            await self._send(ws, 1, self.seq)
            await asyncio.sleep(interval)

    def forget_session(self) -> None:
        self.session_id = self.resume_url = None
        self.seq = None

    async def _read(self, ws: ClientConnection, sink: Sink) -> bool:
        while True:
            try:
                payload = await self._receive(ws, 600)
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code in FATAL_CLOSE:
                    self.forget_session()
                    raise GatewayRefused(f"gateway closed: {code} {FATAL_CLOSE[code]}") from None
                if code in NEW_SESSION_CLOSE:
                    self.forget_session()
                log.warning(
                    "discord gateway dropped, reconnecting",
                    extra={"channel": "discord", "code": code},
                )
                return False
            op, d = payload.get("op"), payload.get("d")
            seq = payload.get("s")
            if isinstance(seq, int):
                self.seq = seq
            if op == 0:
                await self._dispatch(str(payload.get("t") or ""), as_map(d), sink)
            elif op == 1:  # the gateway asks for a heartbeat now
                await self._send(ws, 1, self.seq)
            elif op == 11:
                self._acked = True
            elif op == 7:
                log.info("discord gateway asked to reconnect", extra={"channel": "discord"})
                await ws.close(4000, "reconnect")
                return True
            elif op == 9:
                if d is not True:
                    self.forget_session()
                    # The docs ask for a 1-5 s wait before identifying again.
                    await asyncio.sleep(min(random.uniform(1, 5), self.config.retry_max_s))
                log.info(
                    "discord session invalidated",
                    extra={"channel": "discord", "resumable": d is True},
                )
                await ws.close(4000, "invalid session")
                return True

    async def _dispatch(self, kind: str, d: WireMap, sink: Sink) -> None:
        if kind == "READY":
            self.session_id = str(d.get("session_id") or "") or None
            self.resume_url = str(d.get("resume_gateway_url") or "") or None
            self.bot_id = str(as_map(d.get("user")).get("id") or "") or None
            self.application_id = str(as_map(d.get("application")).get("id") or "") or None
            self._backoff.reset()
            self._failures = 0
            log.info("discord gateway ready", extra={"channel": "discord"})
            if self.config.register_commands and self.application_id:
                self._in_background(self._register_commands(self.application_id))
        elif kind == "RESUMED":
            self._backoff.reset()
            self._failures = 0
            log.info("discord session resumed", extra={"channel": "discord"})
        elif kind == "MESSAGE_CREATE":
            channel = str(d.get("channel_id") or "")
            in_guild = d.get("guild_id") is not None
            parent = await self.places.parent_of(channel) if in_guild and channel else None
            if not self.places.allowed(_guild(d), channel, parent):
                return
            msg = self.parse_message(d, parent=parent)
            if msg is not None:
                await sink(msg)
        elif kind == "INTERACTION_CREATE":
            msg = await self._interaction(d)
            if msg is not None:
                await sink(msg)
        else:
            self.places.on_event(kind, d)

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._side.add(task)
        task.add_done_callback(self._side.discard)

    async def _register_commands(self, application_id: str) -> None:
        paths = [
            f"/applications/{application_id}/guilds/{g}/commands"
            for g in self.config.command_guild_ids
        ] or [f"/applications/{application_id}/commands"]
        for path in paths:
            try:
                await self._bot_api(
                    "PUT", path, "register commands", json=SLASH_COMMANDS, answer=False
                )
            except PlatformError as exc:
                log.warning(
                    "discord slash commands not registered",
                    extra={"channel": "discord", "error": str(exc)},
                )

    # -- parsing ----------------------------------------------------------------------------

    def _clean(self, content: str) -> str:
        """The text without the bot's own mentions (`<@id>`, `<@!id>`) anywhere."""
        if self.bot_id:
            content = re.sub(rf"<@!?{re.escape(self.bot_id)}>", " ", content)
        return re.sub(r"[ \t]{2,}", " ", content).strip()

    def parse_message(self, d: WireMap, *, parent: str | None = None) -> Inbound | None:
        """A user's message as an Inbound; in a Discord thread (`parent`: its parent
        channel) the chat is the parent channel and the topic the thread."""
        if d.get("type", 0) not in USER_MESSAGE_TYPES:
            return None
        author = as_map(d.get("author"))
        channel, mid = str(d.get("channel_id") or ""), str(d.get("id") or "")
        if not channel or not mid:
            return None
        content = str(d.get("content") or "")
        bot = self.bot_id
        replied_to = as_map(as_map(d.get("referenced_message")).get("author")).get("id")
        mentioned = bot is not None and (
            any(as_map(u).get("id") == bot for u in _list(d.get("mentions")))
            or f"<@{bot}>" in content
            or f"<@!{bot}>" in content
            or replied_to == bot
        )
        files = tuple(
            InboundFile(
                str(as_map(a).get("filename") or "file"),
                str(as_map(a).get("url")),
                as_map(a).get("size"),
            )
            for a in _list(d.get("attachments"))
            if as_map(a).get("url")
        )
        return Inbound(
            delivery_id=f"message:{mid}",
            chat_id=parent or channel,
            topic_id=channel if parent else None,
            user_id=str(author.get("id") or ""),
            user_name=str(author.get("username") or author.get("global_name") or ""),
            text=self._clean(content),
            is_group=d.get("guild_id") is not None,
            mentioned=mentioned,
            from_bot=bool(author.get("bot"))
            or bool(d.get("webhook_id"))
            or (bot is not None and author.get("id") == bot),
            files=files,
        )

    async def _interaction(self, d: WireMap) -> Inbound | None:
        """A slash command: acknowledged (deferred) at once, then a message like any other
        whose replies go through the interaction."""
        if d.get("type") != 2:  # APPLICATION_COMMAND; components and autocomplete: none here
            return None
        iid, token = str(d.get("id") or ""), str(d.get("token") or "")
        channel = str(d.get("channel_id") or as_map(d.get("channel")).get("id") or "")
        if not iid or not token or not channel:
            return None
        parent: str | None = None
        if d.get("guild_id") is not None:
            partial = as_map(d.get("channel"))
            if partial.get("id") == channel and not self.places.known(channel):
                self.places.learn(partial)
            parent = await self.places.parent_of(channel)
        if not self.places.allowed(_guild(d), channel, parent):
            await self._refuse_here(iid, token)
            return None
        data = as_map(d.get("data"))
        options = {
            str(as_map(o).get("name")): str(as_map(o).get("value") or "")
            for o in _list(data.get("options"))
        }
        name = str(data.get("name") or "")
        if name == "ask":
            text = options.get("message", "")
        else:
            text = f"/{name} {' '.join(options.values())}".strip()
        user = as_map(as_map(d.get("member")).get("user")) or as_map(d.get("user"))
        self._forget_old_interactions()
        reply_ref: str | None = None
        try:
            await self._api(
                "POST",
                f"/interactions/{iid}/{token}/callback",
                "interaction callback",
                json=deferred(name),
            )
        except PlatformError as exc:  # e.g. a replayed interaction, already acknowledged
            log.warning(
                "discord interaction not acknowledged",
                extra={"channel": "discord", "error": str(exc)},
            )
        else:
            app = str(d.get("application_id") or self.application_id or "")
            self._interactions[iid] = _Interaction(app, token, time.monotonic())
            reply_ref = iid
        return Inbound(
            delivery_id=f"interaction:{iid}",
            chat_id=parent or channel,
            topic_id=channel if parent else None,
            user_id=str(user.get("id") or ""),
            user_name=str(user.get("username") or user.get("global_name") or ""),
            text=text,
            is_group=d.get("guild_id") is not None,
            mentioned=True,  # a slash command is addressed to the bot
            from_bot=bool(user.get("bot")),
            reply_ref=reply_ref,
        )

    async def _refuse_here(self, iid: str, token: str) -> None:
        """A slash command where the allow-lists keep the bot quiet: told so, to that user
        only (an unanswered interaction shows as failed)."""
        body = {"type": 4, "data": {"content": NOT_HERE, "flags": EPHEMERAL}}
        try:
            await self._api(
                "POST", f"/interactions/{iid}/{token}/callback", "interaction callback", json=body
            )
        except PlatformError as exc:
            log.warning(
                "discord interaction not answered",
                extra={"channel": "discord", "error": str(exc)},
            )

    def _forget_old_interactions(self) -> None:
        for iid, inter in list(self._interactions.items()):
            if not inter.live:
                del self._interactions[iid]
        for mid, (inter, _path) in list(self._webhook_messages.items()):
            if not inter.live:
                del self._webhook_messages[mid]

    # -- sending ----------------------------------------------------------------------------

    @staticmethod
    def _channel(target: Target) -> str:
        return target.topic_id or target.chat_id

    async def send(self, target: Target, text: str) -> Sent:
        payload = {"content": text, "allowed_mentions": NO_PINGS}
        inter = self._interactions.get(target.reply_ref or "")
        if inter is not None and inter.live:
            hook = f"/webhooks/{inter.application_id}/{inter.token}"
            if not inter.answered:  # the first reply replaces the deferred "thinking…"
                inter.answered = True
                body = await self._api(
                    "PATCH", f"{hook}/messages/@original", "edit interaction reply", json=payload
                )
                path = f"{hook}/messages/@original"
            else:
                body = await self._api("POST", hook, "interaction follow-up", json=payload)
                path = f"{hook}/messages/{body.get('id')}"
            sent = Sent(target.chat_id, str(body.get("id")))
            self._webhook_messages[sent.message_id] = (inter, path)
            return sent
        channel = self._channel(target)
        body = await self._bot_api("POST", f"/channels/{channel}/messages", "send", json=payload)
        return Sent(channel, str(body.get("id")))

    async def edit(self, sent: Sent, text: str) -> None:
        payload = {"content": text, "allowed_mentions": NO_PINGS}
        hooked = self._webhook_messages.get(sent.message_id)
        if hooked is not None and hooked[0].live:
            await self._api(
                "PATCH", hooked[1], "edit interaction reply", raise_on_limit=True, json=payload
            )
            return
        await self._bot_api(
            "PATCH",
            f"/channels/{sent.chat_id}/messages/{sent.message_id}",
            "edit",
            raise_on_limit=True,
            json=payload,
        )

    async def upload(self, target: Target, name: str, data: bytes) -> None:
        payload = {"attachments": [{"id": 0, "filename": name}], "allowed_mentions": NO_PINGS}
        await self._bot_api(
            "POST",
            f"/channels/{self._channel(target)}/messages",
            "upload",
            data={"payload_json": json.dumps(payload)},
            files={"files[0]": (name, data)},
        )

    def _is_file_host(self, url: str) -> bool:
        host = (urlsplit(url).hostname or "").lower()
        own = (urlsplit(self._base).hostname or "").lower()
        return host == own or host in CDN_HOSTS

    async def download(self, file: InboundFile, max_bytes: int) -> bytes:
        if file.size is not None and file.size > max_bytes:
            raise PlatformError(f"{file.name} is larger than {max_bytes} bytes")
        if not self._is_file_host(file.ref):
            raise PlatformError(f"{file.name}: not a Discord attachment URL")
        return await download_capped(
            self._client, file.ref, file.name, max_bytes, follow_redirects=False
        )


def retry_after(response: httpx.Response) -> float | None:
    """A 429's wait: `retry_after` (seconds) in the body, else the Retry-After header."""
    try:
        value = as_json(response, "rate limit").get("retry_after")
    except PlatformError:
        value = None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None


def _guild(d: WireMap) -> str | None:
    guild = d.get("guild_id")
    return str(guild) if guild is not None else None


def _with_query(url: str) -> str:
    """The gateway URL with the API version and encoding Pronghorn speaks."""
    if "?" in url:
        return url
    return url.rstrip("/") + "/?v=10&encoding=json"
