"""Skills and the tool catalog (`/api/skills`, `/api/tools`)."""

from __future__ import annotations

from pydantic import BaseModel

from pronghorn.skills.model import SkillCategory


class SkillInfo(BaseModel):
    name: str
    description: str
    license: str | None
    version: str | None
    category: SkillCategory
    enabled: bool
    editable: bool
    allowed_tools: list[str] | None
    location: str
    metadata: dict[str, str]


class SkillProblem(BaseModel):
    path: str
    error: str


class SkillList(BaseModel):
    skills: list[SkillInfo]
    problems: list[SkillProblem]


class CustomSkillList(BaseModel):
    skills: list[SkillInfo]


class SkillDetail(SkillInfo):
    content: str
    body: str


class SkillInstalled(BaseModel):
    success: bool
    skill_name: str
    skill: SkillInfo


class SkillsReloaded(BaseModel):
    success: bool
    scope: str
    message: str


class InstallFromThreadBody(BaseModel):
    thread_id: str
    path: str


SKILL_ARCHIVE: dict[str, object] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"file": {"type": "string", "format": "binary"}},
                    "required": ["file"],
                }
            },
            "application/zip": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": InstallFromThreadBody.model_json_schema()},
        },
    }
}
"""The install body: a `.skill` zip (multipart `file` or raw), or `{thread_id, path}`."""


class ToolInfo(BaseModel):
    name: str
    group: str
    description: str
    enabled: bool
    source: str
    timeout_s: float | None


class ToolCatalog(BaseModel):
    tools: list[ToolInfo]
    groups: list[str]
    enabled: list[str] | None
    disabled: list[str]
    errors: list[str]
