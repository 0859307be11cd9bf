"""The REST bodies DeerFlow's web UI expects, in its shapes."""

from __future__ import annotations

from pydantic import BaseModel

from pronghorn.gateway.models.files import UploadedFile


class MessageEvent(BaseModel):
    seq: int
    thread_id: str
    run_id: str | None
    event_type: str
    category: str
    content: object
    metadata: dict[str, object]
    created_at: str | None


class MessagePage(BaseModel):
    data: list[MessageEvent]
    has_more: bool
    next_before_seq: int | None


class RunMessages(BaseModel):
    data: list[MessageEvent]
    has_more: bool


class RunEvent(BaseModel):
    seq: int
    run_id: str
    thread_id: str
    event_type: str
    data: object


class DeerFlowUploadList(BaseModel):
    files: list[UploadedFile]
    count: int


class DeerFlowUploadLimits(BaseModel):
    max_files: int
    max_file_size: int
    max_total_size: int


class FeatureFlag(BaseModel):
    enabled: bool


class Features(BaseModel):
    agents_api: FeatureFlag
    browser_control: FeatureFlag
    mcp_tasks: FeatureFlag
    suggestions: FeatureFlag
    tool_approvals: FeatureFlag
    feedback: FeatureFlag


class SuggestionsConfig(BaseModel):
    enabled: bool
    max_suggestions: int


class Suggestions(BaseModel):
    suggestions: list[str]


class ChannelProvider(BaseModel):
    provider: str
    display_name: str
    enabled: bool
    configured: bool
    connectable: bool
    unavailable_reason: str | None
    auth_mode: str
    connection_status: str
    credential_fields: list[dict[str, object]]


class ChannelProviders(BaseModel):
    enabled: bool
    providers: list[ChannelProvider]
