"""The Discord transport's parsing of gateway events and its guards, as plain calls."""

from __future__ import annotations

import httpx
import pytest

from pronghorn.channels.discord.channel import DiscordTransport, retry_after
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.types import InboundFile
from pronghorn.config.schema.channels import DiscordConfig

BOT = "111"


@pytest.fixture
async def transport():
    t = DiscordTransport(
        DiscordConfig(bot_token="t", api_base_url="http://127.0.0.1:9/api/v10")  # pyright: ignore[reportArgumentType]
    )
    t.bot_id = BOT
    yield t
    await t.stop()


def _msg(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "5",
        "type": 0,
        "channel_id": "C",
        "guild_id": "G",
        "author": {"id": "42", "username": "alice"},
        "content": "hi",
        "mentions": [],
    }
    return {**base, **over}


async def test_mentions_in_any_form_and_replies_to_the_bot(transport: DiscordTransport):
    plain = transport.parse_message(_msg())
    assert plain is not None and plain.is_group and not plain.mentioned
    nick = transport.parse_message(_msg(content=f"<@!{BOT}>   what now?"))
    assert nick is not None and nick.mentioned and nick.text == "what now?"
    inner = transport.parse_message(_msg(content=f"so <@{BOT}> tell me"))
    assert inner is not None and inner.mentioned and inner.text == "so tell me"
    reply = transport.parse_message(_msg(referenced_message={"author": {"id": BOT}}))
    assert reply is not None and reply.mentioned
    other = transport.parse_message(_msg(content="<@999> hi", mentions=[{"id": "999"}]))
    assert other is not None and not other.mentioned and other.text == "<@999> hi"
    dm = transport.parse_message(_msg(guild_id=None))
    assert dm is not None and not dm.is_group and dm.delivery_id == "message:5"


async def test_bots_webhooks_and_system_messages(transport: DiscordTransport):
    bot = transport.parse_message(_msg(author={"id": "7", "bot": True}))
    me = transport.parse_message(_msg(author={"id": BOT}))
    hook = transport.parse_message(_msg(webhook_id="W"))
    assert bot and me and hook and bot.from_bot and me.from_bot and hook.from_bot
    assert transport.parse_message(_msg(type=7)) is None  # a member joined
    assert transport.parse_message(_msg(type=19)) is not None  # a reply
    assert transport.parse_message(_msg(channel_id=None)) is None


async def test_downloads_only_from_discord(transport: DiscordTransport):
    with pytest.raises(PlatformError, match="not a Discord attachment"):
        await transport.download(InboundFile("a", "https://evil.example/a"), 100)
    with pytest.raises(PlatformError, match="larger"):
        await transport.download(InboundFile("a", "https://cdn.discordapp.com/a", 500), 100)


def test_retry_after_from_body_or_header():
    req = httpx.Request("POST", "http://x")
    assert retry_after(httpx.Response(429, json={"retry_after": 1.5}, request=req)) == 1.5
    assert retry_after(httpx.Response(429, headers={"retry-after": "2"}, request=req)) == 2.0
    assert retry_after(httpx.Response(429, text="slow down", request=req)) is None
