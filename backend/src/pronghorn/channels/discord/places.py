"""Where a Discord message was written: the parent channel of a thread, and whether the bot
may answer there (`allowed_guild_ids`, `allowed_channel_ids`).

A Discord thread is a channel of its own, and a MESSAGE_CREATE names only that channel. Its
parent is learnt from the gateway (GUILD_CREATE's `threads`, THREAD_CREATE/UPDATE,
THREAD_LIST_SYNC, an interaction's partial channel) or, for a channel seen for the first
time, asked once with `GET /channels/{id}`; either way it is cached (bounded, oldest
forgotten first). A lookup that fails is not cached: the message is taken as written in a
plain channel and the next one asks again.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import cast

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.wire import WireMap, as_map
from pronghorn.config.schema.channels import DiscordConfig

log = logging.getLogger("pronghorn.channels")

THREAD_TYPES = {10, 11, 12}  # ANNOUNCEMENT_THREAD, PUBLIC_THREAD, PRIVATE_THREAD
CACHE_SIZE = 10_000

ChannelLookup = Callable[[str], Awaitable[WireMap]]


def _list(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


class Places:
    def __init__(self, config: DiscordConfig, lookup: ChannelLookup) -> None:
        self._guilds = frozenset(config.allowed_guild_ids)
        self._channels = frozenset(config.allowed_channel_ids)
        self._lookup = lookup
        self._parents: OrderedDict[str, str | None] = OrderedDict()  # channel -> thread parent

    # -- learning ----------------------------------------------------------------------------

    def _remember(self, channel_id: str, parent_id: str | None) -> None:
        self._parents[channel_id] = parent_id
        self._parents.move_to_end(channel_id)
        while len(self._parents) > CACHE_SIZE:
            self._parents.popitem(last=False)

    def learn(self, channel: WireMap) -> None:
        """A channel object (full or partial) seen on the gateway."""
        cid = str(channel.get("id") or "")
        if not cid or "type" not in channel:
            return
        parent = str(channel.get("parent_id") or "")
        is_thread = channel.get("type") in THREAD_TYPES and bool(parent)
        self._remember(cid, parent if is_thread else None)

    def on_event(self, kind: str, d: WireMap) -> None:
        """Learn thread parents from the gateway events that carry channels."""
        if kind in ("THREAD_CREATE", "THREAD_UPDATE", "CHANNEL_CREATE", "CHANNEL_UPDATE"):
            self.learn(d)
        elif kind in ("GUILD_CREATE", "THREAD_LIST_SYNC"):
            for item in (*_list(d.get("channels")), *_list(d.get("threads"))):
                self.learn(as_map(item))
        elif kind in ("THREAD_DELETE", "CHANNEL_DELETE"):
            self._parents.pop(str(d.get("id") or ""), None)

    def known(self, channel_id: str) -> bool:
        return channel_id in self._parents

    # -- asking ------------------------------------------------------------------------------

    async def parent_of(self, channel_id: str) -> str | None:
        """The parent channel of `channel_id` when it is a thread, else None."""
        if channel_id in self._parents:
            self._parents.move_to_end(channel_id)
            return self._parents[channel_id]
        try:
            channel = await self._lookup(channel_id)
        except PlatformError as exc:
            log.warning(
                "discord channel not looked up",
                extra={"channel": "discord", "channel_id": channel_id, "error": str(exc)},
            )
            return None
        self.learn({"id": channel_id, "type": 0, **channel})
        return self._parents.get(channel_id)

    def allowed(self, guild_id: str | None, channel_id: str, parent_id: str | None) -> bool:
        """Whether the bot answers there: DMs always; in a guild, per the allow-lists (a
        thread counts as its parent channel, or by its own id)."""
        if guild_id is None:
            return True
        if self._guilds and guild_id not in self._guilds:
            return False
        if self._channels:
            return channel_id in self._channels or (parent_id or "") in self._channels
        return True
