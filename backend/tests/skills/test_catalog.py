"""The catalog's discovery: where public and custom skills come from, per user, and the
rescan when a SKILL.md changes (no database needed for discovery)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.services.skills import SkillCatalog
from pronghorn.sandbox.paths import user_folder
from skills.kit import skill_md, write_skill


def _catalog(tmp_path: Path, **skills: Any) -> SkillCatalog:
    holder = SimpleNamespace(current=AppConfig.model_validate({"skills": skills}))
    return SkillCatalog(holder, tmp_path / "data", db=None, config_dir=tmp_path)  # type: ignore[arg-type]


async def test_public_path_and_skills_path_relative_to_the_config(tmp_path):
    write_skill(tmp_path / "mine", "one")
    write_skill(tmp_path / "more", "two")
    write_skill(tmp_path / "more", "one")  # shadowed by the first folder
    catalog = _catalog(tmp_path, public_path="mine", path=["more"])
    found = await catalog.discover("alice")
    assert [(s.name, s.host_dir.parent.name) for s in found.skills] == [
        ("one", "mine"),
        ("two", "more"),
    ]
    assert "already loaded" in found.problems[0].error


async def test_custom_skills_per_user_and_mounts(tmp_path):
    catalog = _catalog(tmp_path, public_path="pub")
    write_skill(tmp_path / "pub", "shared")
    write_skill(tmp_path / "data" / "users" / "alice" / "skills" / "custom", "hers")
    identity = "bob@example.com"  # not a folder name: digested
    write_skill(tmp_path / "data" / "users" / user_folder(identity) / "skills" / "custom", "his")
    assert [s.name for s in (await catalog.discover("alice")).skills] == ["shared", "hers"]
    assert [s.name for s in (await catalog.discover(identity)).skills] == ["shared", "his"]
    mounts = await catalog.mounts_for(user_folder(identity))  # the sandbox asks by folder
    assert [m.virtual for m in mounts] == ["/mnt/skills/public/shared", "/mnt/skills/custom/his"]


async def test_rescans_when_a_skill_changes(tmp_path):
    catalog = _catalog(tmp_path, public_path="pub")
    folder = write_skill(tmp_path / "pub", "live", skill_md("live", "First."))
    assert (await catalog.discover("a")).skills[0].description == "First."
    assert (await catalog.discover("a")) is (await catalog.discover("a"))  # cached
    (folder / "SKILL.md").write_text(skill_md("live", "Second, longer."))
    os.utime(folder / "SKILL.md", ns=(1, 1))
    assert (await catalog.discover("a")).skills[0].description == "Second, longer."
    write_skill(tmp_path / "pub", "new-one")
    assert [s.name for s in (await catalog.discover("a")).skills] == ["live", "new-one"]
