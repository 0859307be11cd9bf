"""The skill catalog: discovered skills (files) joined with their enabled state (database),
for one principal.

Public skills (shipped, ``skills.path``) are shared: everyone sees them and one switch, an
admin's, enables them. Custom skills belong to the user who installed them: only they (or
an admin asking for all users) see, toggle or delete them, and only their sandboxes mount
them. A skill with no stored state is enabled.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.schema.app import AppConfig
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import skills as repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Conflict, Forbidden, InvalidInput, NotFound
from pronghorn.sandbox.mounts import ReadOnlyMount
from pronghorn.sandbox.paths import user_folder
from pronghorn.skills.discovery import REPO_PUBLIC, Root, custom_root, discover, signature
from pronghorn.skills.frontmatter import split
from pronghorn.skills.install import InstallLimits, SkillExists, install_archive, remove_skill
from pronghorn.skills.model import Discovery, RunSkill, Skill, SkillInvalid, SkillProblem

log = logging.getLogger("pronghorn.skills")

MAX_CACHED_USERS = 64


@dataclass(frozen=True, slots=True)
class SkillView:
    skill: Skill
    enabled: bool
    editable: bool  # a custom skill the caller may delete


def _owner_of(skill: Skill, identity: str) -> str:
    return repo.PUBLIC if skill.category == "public" else identity


class SkillCatalog:
    def __init__(
        self, settings: ConfigHolder, data_dir: Path, db: Database, config_dir: Path
    ) -> None:
        self.settings = settings
        self.data_dir = data_dir
        self.db = db
        self.config_dir = config_dir
        self._cache: OrderedDict[str, tuple[tuple[object, ...], Discovery]] = OrderedDict()
        self._reported: set[tuple[str, str]] = set()
        self._lock = threading.Lock()  # the cache is used from worker threads

    # -- discovery -----------------------------------------------------------------------------

    def _public_roots(self, config: AppConfig) -> list[Root]:
        def resolve(raw: str) -> Path:
            path = Path(raw).expanduser()
            return (path if path.is_absolute() else self.config_dir / path).resolve()

        first = resolve(config.skills.public_path) if config.skills.public_path else REPO_PUBLIC
        return [Root(first, "public"), *(Root(resolve(p), "public") for p in config.skills.path)]

    def roots(self, identity: str, config: AppConfig | None = None) -> list[Root]:
        cfg = config or self.settings.current
        custom = custom_root(self.data_dir, user_folder(identity))
        return [*self._public_roots(cfg), Root(custom, "custom")]

    async def discover(self, identity: str, config: AppConfig | None = None) -> Discovery:
        """The skills ``identity`` can see (rescanned only when a SKILL.md changed)."""
        cfg = config or self.settings.current

        def scan() -> Discovery:  # in a worker thread: resolving and scanning touch the disk
            roots = self.roots(identity, cfg)
            key = repr([(str(r.path), r.category) for r in roots])
            sig = signature(roots)
            with self._lock:
                cached = self._cache.get(key)
            if cached is not None and cached[0] == sig:
                return cached[1]
            found = discover(roots)
            with self._lock:
                self._cache[key] = (sig, found)
                self._cache.move_to_end(key)
                while len(self._cache) > MAX_CACHED_USERS:
                    self._cache.popitem(last=False)
            return found

        found = await asyncio.to_thread(scan)
        for problem in found.problems:
            if (problem.path, problem.error) not in self._reported:
                self._reported.add((problem.path, problem.error))
                log.warning("skill skipped: %s: %s", problem.path, problem.error)
        return found

    def forget_scans(self) -> None:
        with self._lock:
            self._cache.clear()
        self._reported.clear()

    async def problems(self, access: Access) -> tuple[SkillProblem, ...]:
        return (await self.discover(access.identity)).problems

    # -- views ---------------------------------------------------------------------------------

    async def _views(self, identity: str, config: AppConfig | None = None) -> list[SkillView]:
        found = await self.discover(identity, config)
        states = await self.db.read(lambda conn: repo.states(conn, identity))
        return [
            SkillView(
                skill=s,
                enabled=states.get((_owner_of(s, identity), s.name), True),
                editable=s.category == "custom",
            )
            for s in found.skills
        ]

    async def views(self, access: Access) -> list[SkillView]:
        return await self._views(access.identity)

    async def get(self, access: Access, name: str) -> SkillView:
        for view in await self._views(access.identity):
            if view.skill.name == name:
                return view
        raise NotFound(f"Skill {name!r} not found")

    async def content(self, access: Access, name: str) -> str:
        """The text of the skill's SKILL.md."""
        view = await self.get(access, name)
        return await asyncio.to_thread(view.skill.skill_file.read_text, "utf-8")

    async def set_enabled(self, access: Access, name: str, enabled: bool) -> SkillView:
        view = await self.get(access, name)
        if view.skill.category == "public" and not access.principal.is_admin:
            raise Forbidden(f"Skill {name!r} is shared by every user: only an admin may switch it")
        await self.db.write(
            lambda conn: repo.set_enabled(
                conn, _owner_of(view.skill, access.identity), name, enabled
            )
        )
        return SkillView(view.skill, enabled, view.editable)

    async def install(self, access: Access, data: bytes) -> SkillView:
        cfg = self.settings.current.skills
        limits = InstallLimits(cfg.max_install_bytes, cfg.max_install_files, cfg.scan_scripts)
        found = await self.discover(access.identity)
        taken = {s.name for s in found.skills}
        dest = custom_root(self.data_dir, user_folder(access.identity))
        try:
            name, _ = await asyncio.to_thread(install_archive, data, dest, limits, taken)
        except SkillInvalid as exc:
            raise InvalidInput(f"Invalid skill archive: {exc}") from None
        except SkillExists as exc:
            raise Conflict(str(exc)) from None
        await self.db.write(lambda conn: repo.forget(conn, access.identity, [name]))
        return await self.get(access, name)

    async def delete_custom(self, access: Access, name: str) -> None:
        view = await self.get(access, name)
        if view.skill.category != "custom":
            raise NotFound(f"Custom skill {name!r} not found")
        await asyncio.to_thread(remove_skill, view.skill.host_dir)
        await self.db.write(lambda conn: repo.forget(conn, access.identity, [name]))

    # -- runs and sandboxes ----------------------------------------------------------------------

    async def for_run(
        self,
        identity: str,
        allow: tuple[str, ...] | None = None,
        config: AppConfig | None = None,
    ) -> tuple[RunSkill, ...]:
        """The enabled skills of ``identity``, within an agent's allow-list (None: all)."""
        views = await self._views(identity, config)
        return tuple(
            RunSkill(
                name=v.skill.name,
                description=v.skill.description,
                location=v.skill.location,
                skill_file=v.skill.skill_file,
                allowed_tools=v.skill.allowed_tools,
            )
            for v in views
            if v.enabled and (allow is None or v.skill.name in allow)
        )

    async def mounts_for(self, user_id: str) -> tuple[ReadOnlyMount, ...]:
        """Every skill folder a user's sandbox shows read-only (``user_id``: their folder).

        The folder name is the owner's identity for every safe identity, which is the case
        for local users; a digested folder still gets the public skills."""
        found = await self.discover(user_id)
        return tuple(ReadOnlyMount(s.virtual_dir, s.host_dir) for s in found.skills)


def skill_body(text: str) -> str:
    """The Markdown body of a SKILL.md (after the front matter)."""
    try:
        return split(text)[1]
    except SkillInvalid:
        return text
