"""`channels:`: IM bots that talk to the agent (docs/channels.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

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
    """A Slack app over the HTTP Events API (`POST /api/channels/slack/events`) or Socket
    Mode (a WebSocket the gateway opens; no public URL needed)."""

    bot_token: SecretStr = Field(description="The bot token, xoxb-… (use ${VAR}).")
    signing_secret: SecretStr | None = Field(
        default=None,
        description="The app's signing secret (use ${VAR}); required in mode `events`.",
    )
    api_base_url: str = Field(
        default="https://slack.com/api", description="Web API base; calls go to {base}/{method}."
    )
    max_clock_skew_s: float = Field(
        default=300.0, gt=0, description="Oldest request timestamp accepted (replay guard)."
    )
    mode: Literal["events", "socket"] = Field(
        default="events",
        description=(
            "events: Slack POSTs to /api/channels/slack/events (needs a public URL); socket: "
            "Socket Mode, the gateway opens a WebSocket to Slack (needs `app_token`)."
        ),
    )
    app_token: SecretStr | None = Field(
        default=None,
        description="The app-level token, xapp-… with connections:write (mode socket).",
    )

    slash_command: str = Field(
        default="/pronghorn",
        pattern=r"^/[a-z0-9_-]+$",
        description=(
            "Socket Mode: the app's own slash command, whose text is a message as typed "
            "(`/pronghorn hello`, `/pronghorn /new`); any other command the app registers "
            "(`/new`, `/memory`, a skill's name) is that command with its text."
        ),
    )

    @model_validator(mode="after")
    def _mode_needs_its_secret(self) -> SlackConfig:
        if self.mode == "socket" and self.app_token is None:
            raise ValueError("channels.slack.mode socket needs app_token (xapp-…)")
        if self.mode == "events" and self.signing_secret is None:
            raise ValueError("channels.slack.mode events needs signing_secret")
        return self


class DiscordConfig(ChannelCommon):
    """A Discord bot over the gateway WebSocket (messages, DMs, slash commands) and REST."""

    bot_token: SecretStr = Field(description="The bot's token (use ${VAR}).")
    api_base_url: str = Field(
        default="https://discord.com/api/v10",
        description="REST API base; calls go to {api_base_url}/channels/..., /gateway/bot...",
    )
    gateway_url: str | None = Field(
        default=None,
        description="Gateway WebSocket URL; default: the one GET /gateway/bot returns.",
    )
    intents: int = Field(
        default=(1 << 0) | (1 << 9) | (1 << 12),
        ge=0,
        description=(
            "Gateway intents: GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES (4609). Mentions and "
            "DMs carry their text without the privileged MESSAGE_CONTENT (32768); add it for "
            "`mention_only: false`."
        ),
    )
    register_commands: bool = Field(
        default=True,
        description="Register the slash commands (/ask, /new, /status...) on connect.",
    )
    command_guild_ids: list[str] = Field(
        default_factory=list,
        description="Register the slash commands in these guilds only (instant); default: global.",
    )
    allowed_guild_ids: list[str] = Field(
        default_factory=list,
        description="Answer in these servers (guild ids) only; default: every one. DMs always.",
    )
    allowed_channel_ids: list[str] = Field(
        default_factory=list,
        description=(
            "Answer in these channels only (a thread counts as its parent channel); "
            "default: every one. DMs always."
        ),
    )


class FeishuConfig(ChannelCommon):
    """A Feishu / Lark app: events by HTTP callback (`POST /api/channels/feishu/events`) or
    over the long connection (a WebSocket the gateway opens)."""

    app_id: str = Field(description="The app's App ID (cli_…).")
    app_secret: SecretStr = Field(description="The app's App Secret (use ${VAR}).")
    receive: Literal["webhook", "long_connection"] = Field(
        default="webhook",
        description=(
            "webhook: Feishu POSTs events to /api/channels/feishu/events; long_connection: "
            "the gateway connects out to Feishu (no public URL needed)."
        ),
    )
    verification_token: SecretStr | None = Field(
        default=None,
        description=(
            "The event subscription's Verification Token; callbacks without it are refused "
            "(required with receive: webhook)."
        ),
    )
    encrypt_key: SecretStr | None = Field(
        default=None,
        description=(
            "The event subscription's Encrypt Key: events arrive AES-encrypted and signed "
            "(X-Lark-Signature is checked). Unset: plain events, token check only."
        ),
    )
    api_base_url: str = Field(
        default="https://open.feishu.cn",
        description=(
            "Open API base: https://open.feishu.cn (Feishu) or https://open.larksuite.com (Lark)."
        ),
    )
    reply_in_thread: bool = Field(
        default=False,
        description=(
            "Answer group messages in a Feishu topic thread (reply_in_thread) instead of "
            "a quoted reply."
        ),
    )
    max_clock_skew_s: float = Field(
        default=3600.0,
        gt=0,
        description="Oldest X-Lark-Request-Timestamp accepted on a signed event (replay guard).",
    )

    @model_validator(mode="after")
    def _webhook_needs_token(self) -> FeishuConfig:
        if self.receive == "webhook" and self.verification_token is None:
            raise ValueError("channels.feishu.verification_token is required with receive: webhook")
        return self


class DingTalkConfig(ChannelCommon):
    """A DingTalk internal app's robot: messages over Stream mode (a WebSocket the gateway
    opens; no public URL), replies through the OpenAPI as interactive cards edited in place."""

    client_id: str = Field(description="The app's Client ID (AppKey); also its robotCode.")
    client_secret: SecretStr = Field(description="The app's Client Secret (use ${VAR}).")
    api_base_url: str = Field(
        default="https://api.dingtalk.com",
        description="OpenAPI base (Stream connection, token, cards, messages, file downloads).",
    )
    oapi_base_url: str = Field(
        default="https://oapi.dingtalk.com",
        description="Legacy API base, for media upload (files the agent sends).",
    )


class WeComConfig(ChannelCommon):
    """A WeCom (WeChat Work) internal app in callback mode: messages POSTed, AES-encrypted
    and signed, to /api/channels/wecom/callback; replies through the message API."""

    corp_id: str = Field(description="The company's CorpID (ww…).")
    agent_id: int = Field(description="The app's AgentId.")
    secret: SecretStr = Field(description="The app's Secret (use ${VAR}).")
    token: SecretStr = Field(description="The callback's Token (signs every callback).")
    encoding_aes_key: SecretStr = Field(
        description="The callback's EncodingAESKey (43 characters; encrypts every callback)."
    )
    api_base_url: str = Field(
        default="https://qyapi.weixin.qq.com",
        description="API base; calls go to {api_base_url}/cgi-bin/….",
    )
    max_clock_skew_s: float = Field(
        default=3600.0,
        gt=0,
        description="Oldest callback timestamp accepted (replay guard).",
    )

    @model_validator(mode="after")
    def _aes_key_shape(self) -> WeComConfig:
        if len(self.encoding_aes_key.get_secret_value()) != 43:
            raise ValueError("channels.wecom.encoding_aes_key must be 43 characters")
        return self


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
    discord: DiscordConfig | None = Field(default=None, description="The Discord bot.")
    feishu: FeishuConfig | None = Field(default=None, description="The Feishu / Lark app.")
    dingtalk: DingTalkConfig | None = Field(
        default=None, description="The DingTalk robot (Stream mode)."
    )
    wecom: WeComConfig | None = Field(
        default=None, description="The WeCom (WeChat Work) app (callback mode)."
    )
