"""Find skills in folders (blocking: call through ``asyncio.to_thread``).

A root holds one folder per skill. The shipped skills and ``skills.path`` are *public*;
each user's installed skills (``<data_dir>/users/<user>/skills/custom``) are *custom*. The
first skill of a name wins, public before custom, so a user cannot shadow a shipped skill.
A folder without ``SKILL.md`` is not a skill; a ``SKILL.md`` that breaks the rules is
reported as a problem and skipped, never an error for the caller.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pronghorn.skills.frontmatter import MAX_SKILL_MD_BYTES, parse
from pronghorn.skills.model import Discovery, Skill, SkillCategory, SkillInvalid, SkillProblem

REPO_PUBLIC = Path(__file__).resolve().parents[4] / "skills" / "public"
"""The repository's shipped skills (absent when the package is installed elsewhere)."""


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    category: SkillCategory


def custom_root(data_dir: Path, user_folder: str) -> Path:
    """Where one user's installed skills live (``user_folder`` is already a safe name)."""
    return data_dir / "users" / user_folder / "skills" / "custom"


def read_skill_md(path: Path) -> str:
    """The text of a ``SKILL.md`` (regular file, not a link, bounded size)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000):
            raise SkillInvalid("SKILL.md is not a regular file")
        if st.st_size > MAX_SKILL_MD_BYTES:
            raise SkillInvalid(f"SKILL.md is larger than {MAX_SKILL_MD_BYTES} bytes")
        data = os.read(fd, MAX_SKILL_MD_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillInvalid("SKILL.md is not UTF-8 text") from None


def load_skill(folder: Path, category: SkillCategory) -> Skill:
    doc = parse(read_skill_md(folder / "SKILL.md"), folder_name=folder.name)
    return Skill(
        name=doc.name,
        description=doc.description,
        category=category,
        host_dir=folder,
        license=doc.license,
        version=doc.version,
        allowed_tools=doc.allowed_tools,
        metadata=doc.metadata,
    )


def signature(roots: Sequence[Root]) -> tuple[object, ...]:
    """Changes whenever a skill folder or its ``SKILL.md`` is added, removed or edited."""
    sig: list[object] = []
    for root in roots:
        try:
            entries = sorted(os.scandir(root.path), key=lambda e: e.name)
        except OSError:
            sig.append((str(root.path), None))
            continue
        for entry in entries:
            try:
                st = os.stat(os.path.join(entry.path, "SKILL.md"), follow_symlinks=False)
                sig.append((entry.path, st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append((entry.path, None))
    return tuple(sig)


def discover(roots: Sequence[Root]) -> Discovery:
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    seen: set[str] = set()
    for root in roots:
        try:
            entries = sorted(os.scandir(root.path), key=lambda e: e.name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(SkillProblem(str(root.path), f"cannot read the folder: {exc}"))
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=True):
                continue
            if root.category == "custom" and entry.is_symlink():
                problems.append(SkillProblem(entry.path, "a custom skill may not be a symlink"))
                continue
            folder = Path(entry.path)
            if not (folder / "SKILL.md").exists():
                continue
            try:
                skill = load_skill(folder, root.category)
            except (SkillInvalid, OSError) as exc:
                problems.append(SkillProblem(str(folder / "SKILL.md"), str(exc)))
                continue
            if skill.name in seen:
                problems.append(
                    SkillProblem(str(folder), f"a skill named {skill.name!r} is already loaded")
                )
                continue
            seen.add(skill.name)
            skills.append(skill)
    return Discovery(tuple(skills), tuple(problems))
