"""IM channels (`/api/channels`): status, connect codes, connections, Slack's webhook."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChannelCounts(BaseModel):
    received: int
    replied: int
    duplicates: int
    refused: int
    dropped_busy: int
    errors: int
    files_in: int
    files_out: int


class ChannelStatus(BaseModel):
    name: str
    enabled: bool
    running: bool
    standby: bool = Field(False, description="Another replica runs this channel's receiver.")
    last_error: str | None
    starts: int
    counts: ChannelCounts | None = None
    config: dict[str, object] | None = None  # admins only; secrets masked


class ConnectCode(BaseModel):
    """Ours (`channel`, `command`, `expires_at`, `deep_link`) and DeerFlow's (`provider`,
    `mode`, `url`, `instruction`, `expires_in`)."""

    channel: str
    code: str
    command: str
    expires_at: str
    deep_link: str | None = None
    provider: str
    mode: str
    url: str | None
    instruction: str
    expires_in: int


class ChannelConnection(BaseModel):
    """Ours (`channel`, `external_id`, `external_name`, `owner_id`, `created_at`) and
    DeerFlow's names of the same (`provider`, `external_account_*`, `status`...)."""

    id: str
    channel: str
    external_id: str
    external_name: str | None
    owner_id: str
    created_at: str
    provider: str
    status: str
    external_account_id: str
    external_account_name: str | None
    workspace_id: str | None
    workspace_name: str | None
    scopes: list[str]
    metadata: dict[str, object]


class ChannelConnections(BaseModel):
    connections: list[ChannelConnection]


class FeishuAnswer(BaseModel):
    """`{"challenge"}` for Feishu's URL verification, else `{"msg": "success"}`."""

    challenge: str | None = None
    msg: str | None = None


class SlackAnswer(BaseModel):
    """`{"challenge"}` for Slack's URL check, else `{"ok": true}`."""

    challenge: str | None = None
    ok: bool | None = None


class ChannelSectionView(BaseModel):
    """One platform's `channels.<name>` section as written (secrets `***`), with its schema."""

    name: str
    configured: bool
    config: dict[str, object]
    secrets: list[str]
    schema_: dict[str, object] = Field(alias="schema")


class ChannelsConfigView(BaseModel):
    """`GET /api/channels/config`: every platform's section; whether the file can be written."""

    channels: list[ChannelSectionView]
    source_path: str | None
    writable: bool
