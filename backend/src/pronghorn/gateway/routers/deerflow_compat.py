"""The REST calls DeerFlow's web UI makes, in its paths and shapes (docs/api.md, "DeerFlow
UI compatibility"): message pages, per-run messages and events, upload list and limits,
feature flags, follow-up suggestions and channel providers. Everything thread-bound is
scoped to the caller like the rest of the API (another user's thread is 404)."""

from __future__ import annotations

from typing import Literal

import orjson
from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.deerflow import (
    ChannelProviders,
    DeerFlowUploadLimits,
    DeerFlowUploadList,
    Features,
    MessagePage,
    RunEvent,
    RunMessages,
    Suggestions,
    SuggestionsConfig,
)
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.routers.files import file_entry, upload_entries
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.services.channel_state import ChannelState
from pronghorn.runtime.services.suggestions import suggest
from pronghorn.runtime.services.thread_messages import (
    load_run,
    page_before,
    page_window,
    thread_messages,
)
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(tags=["deerflow"], route_class=StrictJSONRoute)

CHANNEL_PROVIDERS = (
    ("telegram", "Telegram"),
    ("slack", "Slack"),
    ("feishu", "Feishu / Lark"),
    ("discord", "Discord"),
    ("dingtalk", "DingTalk"),
    ("wecom", "WeCom"),
)
NOMINAL_MAX_FILES = 1000  # uploads have no count limit; DeerFlow's UI wants a number


@router.get(
    "/api/threads/{thread_id}/messages/page",
    response_model=MessagePage,
    responses=errors(404, 422),
)
async def messages_page(
    thread_id: str,
    limit: int = Query(default=50, ge=1, le=200),
    before_seq: int | None = Query(default=None, ge=1),
    after_seq: int | None = Query(default=None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """A backward page of the thread's messages: the last `limit` before `before_seq`,
    oldest first; `next_before_seq` asks for the page before (null at the start)."""
    if after_seq is not None:
        raise ApiError(422, "messages/page pages backward: use before_seq, not after_seq")
    tid = check_uuid(thread_id, "thread")
    row = await load_thread(runtime, access, tid)
    page = page_before(await thread_messages(runtime, row), limit=limit, before_seq=before_seq)
    nxt = page.data[0]["seq"] if page.has_more and page.data else None
    return JSONResponse({"data": page.data, "has_more": page.has_more, "next_before_seq": nxt})


@router.get(
    "/api/threads/{thread_id}/runs/{run_id}/messages",
    response_model=RunMessages,
    responses=errors(404, 422),
)
async def run_messages(
    thread_id: str,
    run_id: str,
    limit: int = Query(default=50, ge=1, le=200),
    before_seq: int | None = Query(default=None, ge=1),
    after_seq: int | None = Query(default=None, ge=0),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The messages the run added to its thread, paged by thread-wide `seq`."""
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    await load_run(runtime, access, tid, rid)
    return await _run_message_page(runtime, access, tid, rid, limit, before_seq, after_seq)


@router.get("/api/runs/{run_id}/messages", response_model=RunMessages, responses=errors(404, 422))
async def run_messages_by_id(
    run_id: str,
    limit: int = Query(default=50, ge=1, le=200),
    before_seq: int | None = Query(default=None, ge=1),
    after_seq: int | None = Query(default=None, ge=0),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The same page, for a run named by its id alone (404 unless its thread is the
    caller's)."""
    rid = check_uuid(run_id, "run")
    run = await load_run(runtime, access, None, rid)
    tid = str(run["thread_id"])
    return await _run_message_page(runtime, access, tid, rid, limit, before_seq, after_seq)


async def _run_message_page(
    runtime: AppRuntime,
    access: Access,
    tid: str,
    rid: str,
    limit: int,
    before_seq: int | None,
    after_seq: int | None,
) -> JSONResponse:
    row = await load_thread(runtime, access, tid)
    mine = [m for m in await thread_messages(runtime, row) if m["run_id"] == rid]
    page = page_window(mine, limit=limit, before_seq=before_seq, after_seq=after_seq)
    return JSONResponse({"data": page.data, "has_more": page.has_more})


@router.get(
    "/api/threads/{thread_id}/runs/{run_id}/events",
    response_model=list[RunEvent],
    responses=errors(404, 422),
)
async def run_event_list(
    thread_id: str,
    run_id: str,
    event_types: str | None = Query(default=None, description="Comma-separated event names."),
    limit: int = Query(default=500, ge=1, le=2000),
    after_seq: int = Query(default=0, ge=0),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The run's stored stream events (what SSE sent), after `after_seq`, optionally only
    the named event types."""
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    await load_run(runtime, access, tid, rid)
    await runtime.broker.flush(rid)
    wanted = {t.strip() for t in event_types.split(",") if t.strip()} if event_types else None
    out: list[dict[str, object]] = []
    cursor = after_seq
    while len(out) < limit:
        batch = await SqlEventStore(runtime.db).read(rid, cursor, limit)
        if not batch:
            break
        for stored in batch:
            seq, event, data = stored.id, stored.event, stored.data
            cursor = seq
            if wanted is None or event in wanted or event.split("|", 1)[0] in wanted:
                out.append(
                    {
                        "seq": seq,
                        "run_id": rid,
                        "thread_id": tid,
                        "event_type": event,
                        "data": orjson.loads(data) if data else None,
                    }
                )
                if len(out) >= limit:
                    break
        if len(batch) < limit:
            break
    return JSONResponse(out)


@router.get(
    "/api/threads/{thread_id}/uploads/list",
    response_model=DeerFlowUploadList,
    responses=errors(404, 409, 422),
)
async def uploads_list(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The thread's uploads as DeerFlow lists them: ``{files, count}``."""
    tid, entries = await upload_entries(runtime, access, thread_id)
    files = [file_entry(tid, name, size) for name, size in entries]
    return JSONResponse({"files": files, "count": len(files)})


@router.get(
    "/api/threads/{thread_id}/uploads/limits",
    response_model=DeerFlowUploadLimits,
    responses=errors(404, 422),
)
async def uploads_limits(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), _: Access = Depends(get_access)
) -> JSONResponse:
    """``{max_files, max_file_size, max_total_size}`` in bytes (uploads.*). The limits are
    the server's, not the thread's: any signed-in caller gets them for any thread id, one
    that does not exist yet included (DeerFlow asks before it creates a new chat's thread),
    so the answer says nothing about whether a thread exists or whose it is."""
    check_uuid(thread_id, "thread")
    cfg = runtime.config.uploads
    return JSONResponse(
        {
            "max_files": NOMINAL_MAX_FILES,
            "max_file_size": cfg.max_file_bytes,
            "max_total_size": cfg.max_total_bytes,
        }
    )


@router.get("/api/features", response_model=Features)
async def features(runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    """Feature flags of DeerFlow's UI, each what this server does: ``agents_api``
    (``/api/agents``) is on while the ``lead_agent`` graph serves; ``suggestions`` follows
    ``suggestions.enabled``; tool approvals and run feedback are always available;
    ``browser_control`` and ``mcp_tasks`` (DeerFlow's live browser and durable MCP
    background tasks) are not built here, so off."""
    return JSONResponse(
        {
            "agents_api": {"enabled": "lead_agent" in runtime.graphs.ids()},
            "browser_control": {"enabled": False},
            "mcp_tasks": {"enabled": False},
            "suggestions": {"enabled": runtime.config.suggestions.enabled},
            "tool_approvals": {"enabled": True},
            "feedback": {"enabled": True},
        }
    )


@router.get("/api/suggestions/config", response_model=SuggestionsConfig)
async def suggestions_config(runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    cfg = runtime.config.suggestions
    return JSONResponse({"enabled": cfg.enabled, "max_suggestions": cfg.max_suggestions})


class SuggestionMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "human", "ai", "system"] = Field(default="user")
    content: str = Field(default="", max_length=100_000)


class SuggestionsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    messages: list[SuggestionMessage] = Field(
        default_factory=list[SuggestionMessage], max_length=200
    )
    n: int = Field(default=3, ge=1, le=10)
    model_name: str | None = Field(default=None)


@router.post(
    "/api/threads/{thread_id}/suggestions",
    response_model=Suggestions,
    responses=errors(404, 422),
)
async def thread_suggestions(
    thread_id: str,
    body: SuggestionsRequest,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Follow-up questions from the model for the given conversation (``{suggestions}``;
    empty when suggestions are off or the model fails)."""
    await load_thread(runtime, access, check_uuid(thread_id, "thread"))
    pairs = [(m.role, m.content) for m in body.messages]
    return JSONResponse({"suggestions": await suggest(runtime, pairs, body.n, body.model_name)})


@router.get("/api/channels/providers", response_model=ChannelProviders)
async def channel_providers(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The IM platforms, whether each is configured and enabled here, whether a user can
    connect to it from the browser (a one-time code: POST /api/channels/{name}/connect)
    and whether the caller has (``connection_status``). Credentials live in config.yaml,
    so no provider asks for them here (``credential_fields`` is empty)."""
    channels = runtime.config.channels
    linked = {b.channel for b in await ChannelState(runtime).bindings(access.identity)}
    providers: list[dict[str, object]] = []
    for key, label in CHANNEL_PROVIDERS:
        section = getattr(channels, key, None)
        configured = section is not None
        enabled = configured and bool(getattr(section, "enabled", False))
        providers.append(
            {
                "provider": key,
                "display_name": label,
                "enabled": enabled,
                "configured": configured,
                "connectable": enabled,
                "unavailable_reason": None if enabled else _unavailable(configured, key),
                "auth_mode": "deep_link" if key == "telegram" else "code",
                "connection_status": "connected" if key in linked else "not_connected",
                "credential_fields": [],
            }
        )
    return JSONResponse({"enabled": any(p["enabled"] for p in providers), "providers": providers})


def _unavailable(configured: bool, key: str) -> str:
    if configured:
        return f"channels.{key} is disabled in config.yaml"
    return f"channels.{key} is not configured in config.yaml"
