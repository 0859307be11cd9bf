"""What a skill is, once its ``SKILL.md`` has been read and validated."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pronghorn.config.schema.app import AppConfig

SkillCategory = Literal["public", "custom"]

MOUNT_ROOT = "/mnt/skills"
"""Where the sandbox shows skills: ``/mnt/skills/<category>/<name>/SKILL.md``."""


class SkillInvalid(ValueError):
    """A ``SKILL.md`` (or an archive) that breaks the rules; the message says which."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One valid skill. ``host_dir`` is where its folder is on this machine."""

    name: str
    description: str
    category: SkillCategory
    host_dir: Path
    license: str | None = None
    version: str | None = None
    allowed_tools: tuple[str, ...] | None = None  # None: no clamp
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def virtual_dir(self) -> str:
        return f"{MOUNT_ROOT}/{self.category}/{self.name}"

    @property
    def location(self) -> str:
        """The path the model reads the skill from (inside the sandbox)."""
        return f"{self.virtual_dir}/SKILL.md"

    @property
    def skill_file(self) -> Path:
        return self.host_dir / "SKILL.md"


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A folder that looked like a skill but was skipped, and why."""

    path: str
    error: str


@dataclass(frozen=True, slots=True)
class Discovery:
    """Every valid skill (first of a name wins) and every skipped folder."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = field(default=())

    def named(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


@dataclass(frozen=True, slots=True)
class RunSkill:
    """A skill as a run sees it: enabled for the run's user and allowed by its agent."""

    name: str
    description: str
    location: str
    skill_file: Path
    allowed_tools: tuple[str, ...] | None = None


class RunSkillSource(Protocol):
    """Who knows a run's enabled skills (the runtime's skill catalog)."""

    async def for_run(
        self, identity: str, allow: tuple[str, ...] | None = None, config: AppConfig | None = None
    ) -> tuple[RunSkill, ...]: ...
