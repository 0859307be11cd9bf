"""`/api/memory`: the caller's long-term memory (summaries + facts), and the update queue.

Every call works on the caller's own memory (their principal identity), optionally one
custom agent's (`?agent_name=`); nobody reads or edits another user's. Bad input answers
422 (400 for a malformed agent name) and writes nothing.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.memory import MemoryDocument, MemoryFact, MemoryStatus
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.memory.errors import FactNotFound, InvalidMemory
from pronghorn.memory.records import Category, MemoryScope
from pronghorn.runtime.access import Access
from pronghorn.runtime.runtime import Runtime

router = APIRouter(prefix="/api/memory", tags=["memory"], route_class=StrictJSONRoute)

AGENT_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactCreate(Body):
    content: str = Field(min_length=1)
    category: Category = Field(default="context")
    confidence: float = Field(default=0.9, ge=0, le=1)


class FactPatch(Body):
    content: str | None = Field(default=None, min_length=1)
    category: Category | None = Field(default=None)
    confidence: float | None = Field(default=None, ge=0, le=1)


class SummaryIn(Body):
    summary: str = Field(default="")
    updated_at: str | None = Field(default=None)


class FactIn(Body):
    id: str | None = Field(default=None, max_length=100)
    content: str = Field(min_length=1)
    category: Category = Field(default="other")
    confidence: float = Field(default=0.8, ge=0, le=1)
    source_thread_id: str | None = Field(default=None)
    created_at: str | None = Field(default=None)
    updated_at: str | None = Field(default=None)


class Summaries(Body):
    work_context: SummaryIn = Field(default_factory=SummaryIn)
    personal_context: SummaryIn = Field(default_factory=SummaryIn)
    current_focus: SummaryIn = Field(default_factory=SummaryIn)


class MemoryImport(Body):
    """An export file (GET /api/memory/export); it replaces the memory's content."""

    version: int = Field(default=1)
    revision: int | None = Field(default=None)
    agent_name: str | None = Field(default=None)
    updated_at: str | None = Field(default=None)
    summaries: Summaries = Field(default_factory=Summaries)
    facts: list[FactIn] = Field(default_factory=list[FactIn])


def scope_for(
    access: Annotated[Access, Depends(get_access)],
    agent_name: Annotated[str | None, Query(description="A custom agent's own memory.")] = None,
) -> MemoryScope:
    if agent_name is not None and not AGENT_NAME.match(agent_name):
        raise ApiError(400, f"Invalid agent_name {agent_name!r}: use hyphen-case")
    return MemoryScope(user_id=access.identity, agent_name=agent_name or None)


Scope = Annotated[MemoryScope, Depends(scope_for)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


@contextlib.contextmanager
def domain_errors() -> Generator[None]:
    try:
        yield
    except FactNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except InvalidMemory as exc:
        raise ApiError(422, str(exc)) from None


@router.get("", response_model=MemoryDocument, responses=errors(400, 422))
async def get_memory(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """The caller's memory: `{version, revision, agent_name, updated_at, summaries, facts}`."""
    return JSONResponse((await runtime.memory.document(scope)).to_json())


@router.delete("", status_code=204, responses=errors(400, 422))
async def clear_memory(runtime: RuntimeDep, scope: Scope) -> Response:
    """Forget everything (summaries, facts, queued updates) of the caller's memory."""
    await runtime.memory.clear(scope)
    return Response(status_code=204)


@router.post("/facts", status_code=201, response_model=MemoryFact, responses=errors(400, 422))
async def add_fact(body: FactCreate, runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Remember a fact; 422 for an empty or duplicate fact or a full memory."""
    with domain_errors():
        fact = await runtime.memory.add_fact(
            scope, body.content, category=body.category, confidence=body.confidence
        )
    return JSONResponse(fact.to_json(), status_code=201)


@router.patch("/facts/{fact_id}", response_model=MemoryFact, responses=errors(400, 404, 422))
async def edit_fact(
    fact_id: str, body: FactPatch, runtime: RuntimeDep, scope: Scope
) -> JSONResponse:
    """Change a fact's content, category or confidence; 404 if the caller has no such fact."""
    with domain_errors():
        fact = await runtime.memory.edit_fact(
            scope,
            fact_id,
            content=body.content,
            category=body.category,
            confidence=body.confidence,
        )
    return JSONResponse(fact.to_json())


@router.delete("/facts/{fact_id}", status_code=204, responses=errors(400, 404, 422))
async def delete_fact(fact_id: str, runtime: RuntimeDep, scope: Scope) -> Response:
    with domain_errors():
        await runtime.memory.delete_fact(scope, fact_id)
    return Response(status_code=204)


@router.get("/export", response_model=MemoryDocument, responses=errors(400, 422))
async def export_memory(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """The whole memory as a downloadable JSON file (what POST /import takes back)."""
    doc = await runtime.memory.document(scope)
    name = f"memory-{scope.agent_name}.json" if scope.agent_name else "memory.json"
    return JSONResponse(
        doc.to_json(), headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


@router.post("/import", response_model=MemoryDocument, responses=errors(400, 422))
async def import_memory(body: MemoryImport, runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Replace the memory's content with an export file's; 422 (nothing written) if bad."""
    data: dict[str, Any] = body.model_dump()
    with domain_errors():
        doc = await runtime.memory.import_document(scope, data)
    return JSONResponse(doc.to_json())


@router.get("/status", response_model=MemoryStatus, responses=errors(400, 422))
async def memory_status(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """The update queue (depth, the caller's queued updates, in flight) with the caller's
    last update and last error, and the memory config."""
    cfg = runtime.config.memory
    return JSONResponse(
        {
            **runtime.memory.status(scope.user_id).to_json(),
            "config": {
                "model": cfg.model,
                "injection_enabled": cfg.injection_enabled,
                "max_injection_tokens": cfg.max_injection_tokens,
                "debounce_s": cfg.debounce_s,
                "max_facts": cfg.max_facts,
                "fact_confidence_threshold": cfg.fact_confidence_threshold,
            },
        }
    )
