"""``/api/agents``: DeerFlow's custom-agent CRUD, a thin view over lead_agent assistants."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.agents import Agent, AgentList, AgentNameCheck
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.services import agents as service
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/agents", tags=["agents"], route_class=StrictJSONRoute)


class AgentFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(default=None, max_length=1024)
    model: str | None = None
    system_prompt: str | None = None
    soul: str | None = Field(default=None, description="DeerFlow's name of system_prompt.")
    tool_groups: list[str] | None = None
    skills: list[str] | None = None
    mcp_servers: list[str] | None = None
    subagent_enabled: bool | None = None

    def spec(self) -> service.AgentSpec:
        prompt = self.system_prompt if self.system_prompt is not None else self.soul
        given = self.model_fields_set
        cleared = tuple(
            f for f in given if getattr(self, f) is None and f not in ("soul", "system_prompt")
        )
        if {"soul", "system_prompt"} & given and prompt is None:
            cleared += ("system_prompt",)
        return service.AgentSpec(
            description=self.description,
            model=self.model,
            system_prompt=prompt,
            tool_groups=self.tool_groups,
            skills=self.skills,
            mcp_servers=self.mcp_servers,
            subagent_enabled=self.subagent_enabled,
            cleared=cleared,
        )


class AgentCreate(AgentFields):
    name: str


class AgentUpdate(AgentFields):
    name: str | None = Field(default=None, description="If given, the agent's own name.")


@router.get("", response_model=AgentList)
async def list_agents(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse({"agents": await service.list_agents(runtime, access)})


@router.get("/check", response_model=AgentNameCheck, responses=errors(422))
async def check_name(
    name: str = Query(),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Whether ``name`` is a valid agent name the caller has not used yet."""
    available = await service.name_available(runtime, access, name)
    return JSONResponse({"available": available, "name": name})


@router.get("/{name}", response_model=Agent, responses=errors(404, 422))
async def get_agent(
    name: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    return JSONResponse(await service.get_agent(runtime, access, name))


@router.post("", status_code=201, response_model=Agent, responses=errors(400, 404, 409, 422))
async def create_agent(
    body: AgentCreate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    created = await service.create_agent(runtime, access, body.name, body.spec())
    return JSONResponse(created, status_code=201)


@router.put("/{name}", response_model=Agent, responses=errors(400, 404, 422))
async def update_agent(
    name: str,
    body: AgentUpdate,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """A new version of the agent: given fields replace, omitted ones are kept, null resets.
    The name cannot change (it is the agent's address)."""
    if body.name is not None and body.name != name:
        raise ApiError(422, "An agent cannot be renamed; create a new one instead")
    return JSONResponse(await service.update_agent(runtime, access, name, body.spec()))


@router.delete("/{name}", status_code=204, responses=errors(404, 422))
async def delete_agent(
    name: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    await service.delete_agent(runtime, access, name)
    return Response(status_code=204)
