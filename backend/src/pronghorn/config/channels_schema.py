"""`channels:`: IM bots that talk to the agent (docs/channels.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

AccessMode = Literal["open", "allowlist", "bound"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChannelAccess(_Section):
    """Who may talk to a bot; one shape for every platform."""

    mode: AccessMode = Field(
        default="bound",
        description=(
            "open: anyone; allowlist: only `users`; bound: only platform users bound to a "
            "Pronghorn user with `/connect CODE` (runs execute as that user)."
        ),
    )
    users: list[str] = Field(
        default_factory=list,
        description="Platform user ids (or usernames) allowed in mode allowlist.",
    )
    mention_only: bool = Field(
        default=True,
        description="In group chats, answer only messages that mention the bot (or reply to it).",
    )


class ChannelCommon(_Section):
    enabled: bool = Field(default=True, description="Run this channel (a present section does).")
    access: ChannelAccess | None = Field(
        default=None, description="This channel's access policy; default: `channels.access`."
    )
    assistant_id: str = Field(
        default="lead_agent", description="The assistant (or graph id) chats talk to."
    )
    edit_interval_s: float = Field(
        default=1.0, ge=0, description="Least time between two edits of a streaming reply."
    )
    retry_initial_s: float = Field(
        default=1.0, gt=0, description="First wait after a failed platform call (doubles)."
    )
    retry_max_s: float = Field(default=60.0, gt=0, description="Longest wait between retries.")


class TelegramConfig(ChannelCommon):
    """A Telegram bot over the Bot API (long polling `getUpdates`)."""

    bot_token: SecretStr = Field(description="The token @BotFather gave (use ${VAR}).")
    api_base_url: str = Field(
        default="https://api.telegram.org",
        description="Bot API base; calls go to {api_base_url}/bot{token}/{method}.",
    )
    poll_timeout_s: int = Field(
        default=30, ge=0, le=50, description="Long-polling timeout of getUpdates."
    )
    group_edit_interval_s: float = Field(
        default=3.0, ge=0, description="Least time between edits in group chats."
    )


class SlackConfig(ChannelCommon):
    """A Slack app over the HTTP Events API (`POST /api/channels/slack/events`)."""

    bot_token: SecretStr = Field(description="The bot token, xoxb-… (use ${VAR}).")
    signing_secret: SecretStr = Field(description="The app's signing secret (use ${VAR}).")
    api_base_url: str = Field(
        default="https://slack.com/api", description="Web API base; calls go to {base}/{method}."
    )
    max_clock_skew_s: float = Field(
        default=300.0, gt=0, description="Oldest request timestamp accepted (replay guard)."
    )


class ChannelsConfig(_Section):
    access: ChannelAccess = Field(
        default_factory=ChannelAccess, description="The default access policy of every channel."
    )
    queue_size: int = Field(
        default=100, ge=1, description="Inbound messages waiting per channel; beyond: 'busy'."
    )
    workers: int = Field(
        default=4, ge=1, le=64, description="Messages handled at once per channel."
    )
    dedupe_ttl_s: float = Field(
        default=600.0, gt=0, description="How long a delivery id is remembered (redeliveries)."
    )
    connect_code_ttl_s: float = Field(
        default=600.0, gt=0, description="How long a /connect code stays valid."
    )
    max_file_bytes: int = Field(
        default=20 * 1024 * 1024, ge=1, description="Largest file sent or received."
    )
    lease_ttl_s: float = Field(
        default=15.0,
        ge=0.3,
        description=(
            "Across replicas one runs a polling/socket receiver; it holds a lease this long, "
            "renewed every third of it. A crashed holder is replaced within about this time."
        ),
    )
    telegram: TelegramConfig | None = Field(default=None, description="The Telegram bot.")
    slack: SlackConfig | None = Field(default=None, description="The Slack app.")
