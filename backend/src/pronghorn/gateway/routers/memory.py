"""`/api/memory`: the caller's long-term memory (summaries + facts), and the update queue.

Every call works on the caller's own memory (their principal identity), optionally one
custom agent's (`?agent_name=`); nobody reads or edits another user's. Every call that
reads or changes it answers the whole memory in DeerFlow's ``UserMemory`` shape
(``pronghorn.memory.user_memory``), as DeerFlow's memory screen reads it. Bad input
answers 422 (400 for a malformed agent name) and writes nothing.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.memory import MemoryStatus, UserMemory
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.memory.errors import FactNotFound, InvalidMemory
from pronghorn.memory.records import Category, MemoryDocument, MemoryScope
from pronghorn.memory.user_memory import import_form, user_memory
from pronghorn.runtime.access import Access
from pronghorn.runtime.wiring.app_runtime import AppRuntime

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


def scope_for(
    access: Annotated[Access, Depends(get_access)],
    agent_name: Annotated[str | None, Query(description="A custom agent's own memory.")] = None,
) -> MemoryScope:
    if agent_name is not None and not AGENT_NAME.match(agent_name):
        raise ApiError(400, f"Invalid agent_name {agent_name!r}: use hyphen-case")
    return MemoryScope(user_id=access.identity, agent_name=agent_name or None)


Scope = Annotated[MemoryScope, Depends(scope_for)]
RuntimeDep = Annotated[AppRuntime, Depends(get_runtime)]


@contextlib.contextmanager
def domain_errors() -> Generator[None]:
    try:
        yield
    except FactNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except InvalidMemory as exc:
        raise ApiError(422, str(exc)) from None


def answer(
    doc: MemoryDocument, *, status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(user_memory(doc), status_code=status, headers=headers)


@router.get("", response_model=UserMemory, responses=errors(400, 422))
async def get_memory(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """The caller's memory (DeerFlow's ``UserMemory``)."""
    return answer(await runtime.memory.document(scope))


@router.delete("", response_model=UserMemory, responses=errors(400, 422))
async def clear_memory(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Forget everything (summaries, facts, queued updates); answers the empty memory."""
    await runtime.memory.clear(scope)
    return answer(await runtime.memory.document(scope))


@router.post("/facts", status_code=201, response_model=UserMemory, responses=errors(400, 422))
async def add_fact(body: FactCreate, runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Remember a fact and answer the memory; 422 for an empty or duplicate fact or a full
    memory."""
    with domain_errors():
        await runtime.memory.add_fact(
            scope, body.content, category=body.category, confidence=body.confidence
        )
    return answer(await runtime.memory.document(scope), status=201)


@router.patch("/facts/{fact_id}", response_model=UserMemory, responses=errors(400, 404, 422))
async def edit_fact(
    fact_id: str, body: FactPatch, runtime: RuntimeDep, scope: Scope
) -> JSONResponse:
    """Change a fact's content, category or confidence and answer the memory; 404 if the
    caller has no such fact."""
    with domain_errors():
        await runtime.memory.edit_fact(
            scope,
            fact_id,
            content=body.content,
            category=body.category,
            confidence=body.confidence,
        )
    return answer(await runtime.memory.document(scope))


@router.delete("/facts/{fact_id}", response_model=UserMemory, responses=errors(400, 404, 422))
async def delete_fact(fact_id: str, runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Forget one fact and answer the memory; 404 if the caller has no such fact."""
    with domain_errors():
        await runtime.memory.delete_fact(scope, fact_id)
    return answer(await runtime.memory.document(scope))


@router.get("/export", response_model=UserMemory, responses=errors(400, 422))
async def export_memory(runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """The whole memory as a downloadable JSON file (what POST /import takes back)."""
    name = f"memory-{scope.agent_name}.json" if scope.agent_name else "memory.json"
    disposition = f'attachment; filename="{name}"'
    return answer(
        await runtime.memory.document(scope), headers={"Content-Disposition": disposition}
    )


@router.post("/import", response_model=UserMemory, responses=errors(400, 422))
async def import_memory(body: dict[str, object], runtime: RuntimeDep, scope: Scope) -> JSONResponse:
    """Replace the memory's content with a ``UserMemory`` document's (DeerFlow's export or
    ours; an older Pronghorn export file too); 422 (nothing written) if bad."""
    with domain_errors():
        doc = await runtime.memory.import_document(scope, import_form(body))
    return answer(doc)


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
