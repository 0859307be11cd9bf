"""``/api/skills``: list, read, enable/disable, install and delete skills (DeerFlow shapes)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, File, Request, Response, UploadFile
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.skills import (
    SKILL_ARCHIVE,
    CustomSkillList,
    SkillDetail,
    SkillInfo,
    SkillInstalled,
    SkillList,
    SkillsReloaded,
)
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.services.skill_from_thread import install_from_thread
from pronghorn.runtime.services.skills import SkillView, skill_body
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/skills", tags=["skills"], route_class=StrictJSONRoute)


class InstallFromThread(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str
    path: str = Field(max_length=4096)


class SkillToggle(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool


def to_api(view: SkillView) -> dict[str, object]:
    s = view.skill
    return {
        "name": s.name,
        "description": s.description,
        "license": s.license,
        "version": s.version,
        "category": s.category,
        "enabled": view.enabled,
        "editable": view.editable,
        "allowed_tools": list(s.allowed_tools) if s.allowed_tools is not None else None,
        "location": s.location,
        "metadata": dict(s.metadata),
    }


@router.get("", response_model=SkillList)
async def list_skills(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """Every skill the caller can see, and the folders skipped as invalid (``problems``)."""
    views = await runtime.skills.views(access)
    problems = await runtime.skills.problems(access)
    return JSONResponse(
        {
            "skills": [to_api(v) for v in views],
            "problems": [{"path": p.path, "error": p.error} for p in problems],
        }
    )


@router.post(
    "/install",
    status_code=201,
    response_model=SkillInstalled,
    responses=errors(400, 403, 404, 409, 413, 415, 422),
    openapi_extra=SKILL_ARCHIVE,
)
async def install_skill(
    request: Request,
    file: UploadFile | None = File(default=None),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Install a ``.skill`` zip as one of the caller's custom skills: multipart (field
    ``file``), the raw archive as the body (``application/zip``), or DeerFlow's JSON
    ``{thread_id, path}`` naming an archive in one of the caller's threads."""
    limit = runtime.config.skills.max_install_bytes
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if file is None and kind == "application/json":
        try:
            body = InstallFromThread.model_validate_json(await request.body())
        except ValidationError as exc:
            raise ApiError(422, f"Expected {{thread_id, path}}: {exc.errors()[0]['msg']}") from None
        view = await install_from_thread(runtime, access, body.thread_id, body.path)
        payload = {"success": True, "skill_name": view.skill.name, "skill": to_api(view)}
        return JSONResponse(payload, status_code=201)
    if file is not None:
        data = await file.read(limit + 1)
        await file.close()
    else:
        if kind not in ("application/zip", "application/octet-stream", "application/x-zip"):
            raise ApiError(
                415, "Send the .skill archive as multipart field 'file' or as application/zip"
            )
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > limit:
                break
        data = bytes(data)
    if not data:
        raise ApiError(422, "The archive is empty")
    view = await runtime.skills.install(access, data)
    return JSONResponse(
        {"success": True, "skill_name": view.skill.name, "skill": to_api(view)}, status_code=201
    )


@router.get("/custom", response_model=CustomSkillList)
async def list_custom_skills(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The caller's own custom skills."""
    views = await runtime.skills.views(access)
    return JSONResponse({"skills": [to_api(v) for v in views if v.skill.category == "custom"]})


@router.post("/reload", response_model=SkillsReloaded)
async def reload_skills(runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    """DeerFlow's cache reset. Folders are rescanned whenever a SKILL.md changes anyway;
    this forgets every cached scan of this process."""
    runtime.skills.forget_scans()
    return JSONResponse(
        {"success": True, "scope": "process", "message": "Skills will be rescanned"}
    )


@router.get("/{name}", response_model=SkillDetail, responses=errors(404, 422))
async def get_skill(
    name: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """One skill, with its SKILL.md (``content``) and body (``body``)."""
    view = await runtime.skills.get(access, name)
    text = await runtime.skills.content(access, name)
    return JSONResponse({**to_api(view), "content": text, "body": skill_body(text)})


@router.put("/{name}", response_model=SkillInfo, responses=errors(403, 404, 422))
async def put_skill(
    name: str,
    body: SkillToggle,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Enable or disable a skill (public skills: admins only; custom: their owner)."""
    view = await runtime.skills.set_enabled(access, name, body.enabled)
    return JSONResponse(to_api(view))


@router.delete("/custom/{name}", status_code=204, responses=errors(403, 404, 422))
async def delete_custom_skill(
    name: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    await runtime.skills.delete_custom(access, name)
    return Response(status_code=204)
