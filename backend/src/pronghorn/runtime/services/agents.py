"""Custom agents: assistants of the ``lead_agent`` graph whose context carries the agent's
fields (docs/agent.md, "Custom agents"). This is the thin ``/api/agents`` view over them:
an agent is addressed by its name (``context.agent_name``) among the caller's assistants,
and every change is a new assistant version (so versions and rollback come for free).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pronghorn.models.errors import UnknownModelError
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.persistence.repos.common import iso
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Conflict, InvalidInput, NotFound
from pronghorn.runtime.services import assistants as service
from pronghorn.skills.frontmatter import check_name
from pronghorn.skills.model import SkillInvalid

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

GRAPH_ID = "lead_agent"
KNOWN_GROUPS = ("file", "shell", "web", "interaction", "custom", "mcp")
MAX_PROMPT_CHARS = 20_000
MAX_AGENTS = 1000


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """What a client may set on a custom agent (None: not given)."""

    description: str | None = None
    model: str | None = None
    system_prompt: str | None = None
    tool_groups: list[str] | None = None
    skills: list[str] | None = None
    mcp_servers: list[str] | None = None
    subagent_enabled: bool | None = None
    cleared: tuple[str, ...] = ()  # fields set to null on purpose: back to the default


_CONTEXT_KEY = {
    "description": "description",
    "model": "model_name",
    "system_prompt": "system_prompt",
    "tool_groups": "tool_groups",
    "skills": "skills",
    "mcp_servers": "mcp_servers",
    "subagent_enabled": "subagent_enabled",
}


def check_agent_name(name: str) -> str:
    try:
        return check_name(name)
    except SkillInvalid as exc:
        raise InvalidInput(f"Invalid agent name: {exc}") from None


def _check(runtime: AppRuntime, spec: AgentSpec) -> None:
    if spec.model is not None:
        try:
            runtime.models.resolve(spec.model)
        except UnknownModelError:
            raise InvalidInput(f"Unknown model {spec.model!r}; see GET /api/models") from None
    if spec.tool_groups is not None:
        unknown = sorted(set(spec.tool_groups) - set(KNOWN_GROUPS))
        if unknown:
            raise InvalidInput(f"Unknown tool groups {unknown}; known: {', '.join(KNOWN_GROUPS)}")
    if spec.system_prompt is not None and len(spec.system_prompt) > MAX_PROMPT_CHARS:
        raise InvalidInput(f"system_prompt is longer than {MAX_PROMPT_CHARS} characters")


def _context(name: str, spec: AgentSpec, base: JsonObject | None = None) -> dict[str, object]:
    ctx: dict[str, object] = dict(base or {})
    ctx["agent_name"] = name
    fields: dict[str, object] = {
        "description": spec.description,
        "model_name": spec.model,
        "system_prompt": spec.system_prompt,
        "tool_groups": spec.tool_groups,
        "skills": spec.skills,
        "mcp_servers": spec.mcp_servers,
        "subagent_enabled": spec.subagent_enabled,
    }
    ctx.update({k: v for k, v in fields.items() if v is not None})
    for field in spec.cleared:
        ctx.pop(_CONTEXT_KEY.get(field, field), None)
    return ctx


def to_agent(assistant: AssistantRecord) -> dict[str, object]:
    """The DeerFlow-shaped agent of an assistant (``soul`` = ``system_prompt``)."""
    ctx = assistant.context
    prompt = ctx.get("system_prompt")
    return {
        "name": ctx.get("agent_name"),
        "description": ctx.get("description") or assistant.description or "",
        "model": ctx.get("model_name"),
        "tool_groups": ctx.get("tool_groups"),
        "skills": ctx.get("skills"),
        "mcp_servers": ctx.get("mcp_servers"),
        "subagent_enabled": bool(ctx.get("subagent_enabled", False)),
        "system_prompt": prompt,
        "soul": prompt,
        "assistant_id": assistant.assistant_id,
        "version": assistant.version,
        "created_at": iso(assistant.created_at),
        "updated_at": iso(assistant.updated_at),
    }


async def _assistants(runtime: AppRuntime, access: Access) -> list[AssistantRecord]:
    items, _ = await service.search_rows(
        runtime,
        access,
        metadata=None,
        graph_id=GRAPH_ID,
        name=None,
        limit=MAX_AGENTS,
        offset=0,
        sort_by="created_at",
        sort_order="asc",
    )
    return [a for a in items if isinstance(a.context.get("agent_name"), str)]


async def list_agents(runtime: AppRuntime, access: Access) -> list[dict[str, object]]:
    return [to_agent(a) for a in await _assistants(runtime, access)]


async def _find(runtime: AppRuntime, access: Access, name: str) -> AssistantRecord | None:
    for assistant in await _assistants(runtime, access):
        if assistant.context.get("agent_name") == name:
            return assistant
    return None


async def get_agent(runtime: AppRuntime, access: Access, name: str) -> dict[str, object]:
    found = await _find(runtime, access, name)
    if found is None:
        raise NotFound(f"Agent {name!r} not found")
    return to_agent(found)


async def name_available(runtime: AppRuntime, access: Access, name: str) -> bool:
    check_agent_name(name)
    return await _find(runtime, access, name) is None


async def create_agent(
    runtime: AppRuntime, access: Access, name: str, spec: AgentSpec
) -> dict[str, object]:
    check_agent_name(name)
    _check(runtime, spec)
    taken = Conflict(f"An agent named {name!r} already exists")
    if await _find(runtime, access, name) is not None:
        raise taken
    try:
        created = await _create(runtime, access, name, spec)
    except Conflict:  # a concurrent create of the same name took its id first
        raise taken from None
    return to_agent(created)


# Agents made here get an id derived from (owner, name): two concurrent creates of one name
# insert the same primary key, so the database lets exactly one of them succeed.
_AGENT_IDS = uuid.UUID("6f1c1d2e-8a4b-4c55-9b7e-2f0d3c9a7e11")


def agent_assistant_id(owner: str, name: str) -> str:
    return str(uuid.uuid5(_AGENT_IDS, f"{owner}\x00{name}"))


async def _create(
    runtime: AppRuntime, access: Access, name: str, spec: AgentSpec
) -> AssistantRecord:
    return await service.create_row(
        runtime,
        access,
        graph_id=GRAPH_ID,
        assistant_id=agent_assistant_id(access.identity, name),
        config={},
        context=_context(name, spec),
        metadata={"agent_name": name},
        if_exists="raise",
        name=name,
        description=spec.description,
    )


async def update_agent(
    runtime: AppRuntime, access: Access, name: str, spec: AgentSpec
) -> dict[str, object]:
    """A new version: given fields replace the stored ones, omitted ones are kept."""
    _check(runtime, spec)
    found = await _find(runtime, access, name)
    if found is None:
        raise NotFound(f"Agent {name!r} not found")
    updated = await service.update_row(
        runtime,
        access,
        found.assistant_id,
        graph_id=None,
        config=None,
        context=_context(name, spec, found.context),
        metadata=None,
        name=None,
        description=spec.description,
    )
    return to_agent(updated)


async def delete_agent(runtime: AppRuntime, access: Access, name: str) -> None:
    found = await _find(runtime, access, name)
    if found is None:
        raise NotFound(f"Agent {name!r} not found")
    await service.delete(runtime, access, found.assistant_id, delete_threads=False)
