"""Every configured channel: built from `channels.<name>`, started and stopped with the
app, restarted alone when its section changes on a hot reload, and asked for status."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pydantic import BaseModel

from pronghorn.channels.channel import Channel, ChannelStatus
from pronghorn.channels.dingtalk.channel import DingTalkTransport
from pronghorn.channels.discord.channel import DiscordTransport
from pronghorn.channels.errors import UnknownChannel
from pronghorn.channels.feishu.channel import FeishuTransport
from pronghorn.channels.lease import Lease, lease_for
from pronghorn.channels.lease_holder import LeaseHolder
from pronghorn.channels.slack.channel import SlackTransport
from pronghorn.channels.slack.socket_mode import SlackSocketTransport
from pronghorn.channels.telegram.channel import TelegramTransport
from pronghorn.channels.transport import Transport, exclusive
from pronghorn.channels.wecom.channel import WeComTransport
from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.channels import (
    DingTalkConfig,
    DiscordConfig,
    FeishuConfig,
    SlackConfig,
    TelegramConfig,
    WeComConfig,
)
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.channels")

PLATFORMS = ("telegram", "slack", "discord", "feishu", "dingtalk", "wecom")


def build_transport(name: str, section: BaseModel) -> Transport:
    if name == "telegram" and isinstance(section, TelegramConfig):
        return TelegramTransport(section)
    if name == "slack" and isinstance(section, SlackConfig):
        if section.mode == "socket":
            return SlackSocketTransport(section)
        return SlackTransport(section)
    if name == "discord" and isinstance(section, DiscordConfig):
        return DiscordTransport(section)
    if name == "feishu" and isinstance(section, FeishuConfig):
        return FeishuTransport(section)
    if name == "dingtalk" and isinstance(section, DingTalkConfig):
        return DingTalkTransport(section)
    if name == "wecom" and isinstance(section, WeComConfig):
        return WeComTransport(section)
    raise UnknownChannel(name)


class ChannelManager:
    def __init__(
        self,
        runtime: AppRuntime,
        build: Callable[[str, BaseModel], Transport] = build_transport,
    ) -> None:
        self.runtime = runtime
        self._build = build
        self.channels: dict[str, Channel] = {}
        self.starts: dict[str, int] = {}  # how often each channel was started (status)
        self.holders: dict[str, LeaseHolder] = {}  # exclusive receivers, by lease
        self._lease: Lease | None = None
        self._lock = asyncio.Lock()

    @staticmethod
    def section(config: AppConfig, name: str) -> BaseModel | None:
        section: BaseModel | None = getattr(config.channels, name, None)
        if section is None or not getattr(section, "enabled", False):
            return None
        return section

    def configured(self) -> list[str]:
        return [n for n in PLATFORMS if getattr(self.runtime.config.channels, n, None) is not None]

    async def start(self) -> None:
        async with self._lock:
            for name in PLATFORMS:
                await self._start(name, self.runtime.config)

    async def _start(self, name: str, config: AppConfig) -> None:
        section = self.section(config, name)
        if section is None:
            return
        transport = self._build(name, section)
        if exclusive(transport):  # one replica at a time receives: start it under a lease
            await transport.stop()
            self._hold(name, section, config.channels.lease_ttl_s)
            return
        await self._run(name, transport)

    def _hold(self, name: str, section: BaseModel, ttl_s: float) -> None:
        if self._lease is None:
            self._lease = lease_for(self.runtime)

        async def start() -> None:
            await self._run(name, self._build(name, section))

        async def stop() -> None:
            channel = self.channels.pop(name, None)
            if channel is not None:
                await channel.stop()

        holder = LeaseHolder(self._lease, name, ttl_s, start, stop)
        self.holders[name] = holder
        holder.begin()

    async def _run(self, name: str, transport: Transport) -> None:
        channel = Channel(self.runtime, name, transport)
        self.channels[name] = channel
        self.starts[name] = self.starts.get(name, 0) + 1
        try:
            await channel.start()
        except Exception as exc:  # a channel that cannot start never takes the app down
            channel.report(f"start failed: {type(exc).__name__}")
            log.exception("channel failed to start", extra={"channel": name})

    async def _stop(self, name: str) -> None:
        holder = self.holders.pop(name, None)
        if holder is not None:
            await holder.end()
        channel = self.channels.pop(name, None)
        if channel is not None:
            await channel.stop()

    async def restart(self, name: str) -> None:
        if name not in PLATFORMS or self.section(self.runtime.config, name) is None:
            raise UnknownChannel(name)
        async with self._lock:
            await self._stop(name)
            await self._start(name, self.runtime.config)

    async def apply(self, old: AppConfig, new: AppConfig) -> None:
        """A reload: restart exactly the channels whose section changed."""
        async with self._lock:
            for name in PLATFORMS:
                if getattr(old.channels, name) == getattr(new.channels, name):
                    continue
                log.info("channel config changed", extra={"channel": name})
                await self._stop(name)
                await self._start(name, new)

    async def aclose(self) -> None:
        async with self._lock:
            for name in {*self.channels, *self.holders}:
                await self._stop(name)

    def get(self, name: str) -> Channel:
        channel = self.channels.get(name)
        if channel is None:
            raise UnknownChannel(name)
        return channel

    def standby(self, name: str) -> bool:
        """Configured here, but another replica holds the receiver's lease."""
        holder = self.holders.get(name)
        return holder is not None and not holder.holding

    def status(self) -> list[ChannelStatus]:
        return [c.status() for c in self.channels.values()]
