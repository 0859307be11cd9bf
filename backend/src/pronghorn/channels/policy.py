"""Who may talk to a bot, and as whom their runs execute: one policy for every platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pronghorn.auth.principal import LOCAL_PRINCIPAL, Principal
from pronghorn.channels.types import Inbound
from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.channels import ChannelAccess

Verdict = Literal["ignore", "allow", "refuse", "bind"]


def access_of(config: AppConfig, channel: str) -> ChannelAccess:
    """`channels.<name>.access`, else `channels.access`."""
    section = getattr(config.channels, channel, None)
    own: ChannelAccess | None = getattr(section, "access", None)
    return own if own is not None else config.channels.access


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    principal: Principal | None = None


def decide(
    access: ChannelAccess,
    msg: Inbound,
    bound: Principal | None,
    *,
    channel: str,
    auth_mode: str,
) -> Decision:
    """What to do with a message: `ignore` it silently (bots, groups without a mention),
    `refuse` it (not on the allow-list), ask to `bind` (mode bound, no binding), or `allow`
    it as `principal` (the bound user, else the channel's user for this platform user)."""
    if msg.from_bot:
        return Decision("ignore")
    if msg.is_group and access.mention_only and not msg.mentioned:
        return Decision("ignore")
    if bound is not None:
        return Decision("allow", bound)
    if access.mode == "bound":
        return Decision("bind")
    if access.mode == "allowlist" and not (
        msg.user_id in access.users or (msg.user_name and msg.user_name in access.users)
    ):
        return Decision("refuse")
    return Decision("allow", guest_principal(channel, msg, auth_mode))


def guest_principal(channel: str, msg: Inbound, auth_mode: str) -> Principal:
    """An unbound platform user let in by mode open/allowlist: without auth the one local
    user (the web UI sees their threads); otherwise a user of their own per platform id."""
    if auth_mode == "none":
        return LOCAL_PRINCIPAL
    identity = f"{channel}:{msg.user_id}"
    return Principal(
        identity=identity,
        display_name=msg.user_name or identity,
        role="user",
        kind="system",
        username=None,
    )
