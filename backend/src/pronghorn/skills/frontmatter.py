"""Parse and validate a ``SKILL.md``: YAML front matter between ``---`` lines, then Markdown.

Rules: ``name`` is required, hyphen-case (``[a-z0-9-]``, no leading, trailing or double
hyphen), at most 64 characters, and equals the folder's name; ``description`` is a
non-empty string of at most 1024 characters; only the known keys are allowed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import yaml

from pronghorn.skills.model import SkillInvalid

NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_MD_BYTES = 256 * 1024
ALLOWED_KEYS = frozenset(
    {"name", "description", "license", "allowed-tools", "version", "metadata", "compatibility"}
)


@dataclass(frozen=True, slots=True)
class SkillDoc:
    name: str
    description: str
    license: str | None
    version: str | None
    allowed_tools: tuple[str, ...] | None
    metadata: tuple[tuple[str, str], ...]
    body: str


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise SkillInvalid("'name' is required and must be a string")
    if len(name) > MAX_NAME:
        raise SkillInvalid(f"name {name[:80]!r} is longer than {MAX_NAME} characters")
    if not NAME_RE.fullmatch(name):
        raise SkillInvalid(
            f"name {name!r} is not hyphen-case (lower-case letters, digits and single "
            "hyphens, not at the start or end)"
        )
    return name


def split(text: str) -> tuple[str, str]:
    """(front matter YAML, body) of a ``SKILL.md``."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillInvalid("SKILL.md must start with a '---' line opening the front matter")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :]).lstrip("\n")
    raise SkillInvalid("the front matter is not closed by a '---' line")


def _tools(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = [t for t in re.split(r"[\s,]+", value) if t]
    elif isinstance(value, list):
        items = [str(t).strip() for t in cast(list[object], value) if str(t).strip()]
    else:
        raise SkillInvalid("'allowed-tools' must be a list of tool names or a string")
    return tuple(dict.fromkeys(items))


def _optional_str(data: Mapping[str, object], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    raise SkillInvalid(f"'{key}' must be a string")


def parse(text: str, *, folder_name: str | None = None) -> SkillDoc:
    """The validated document, or :class:`SkillInvalid` saying what is wrong."""
    head, body = split(text)
    try:
        data: object = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        raise SkillInvalid(f"the front matter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SkillInvalid("the front matter must be a YAML mapping")
    fm = cast(dict[str, object], data)
    unknown = sorted(str(k) for k in fm if k not in ALLOWED_KEYS)
    if unknown:
        raise SkillInvalid(f"unknown front matter keys: {', '.join(unknown)}")
    name = check_name(fm.get("name"))
    if folder_name is not None and name != folder_name:
        raise SkillInvalid(f"name {name!r} differs from its folder's name {folder_name!r}")
    desc = fm.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise SkillInvalid("'description' is required and must be a non-empty string")
    if len(desc) > MAX_DESCRIPTION:
        raise SkillInvalid(f"'description' is longer than {MAX_DESCRIPTION} characters")
    meta = fm.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise SkillInvalid("'metadata' must be a mapping")
    pairs = tuple((str(k), str(v)) for k, v in cast(dict[object, object], meta or {}).items())
    return SkillDoc(
        name=name,
        description=" ".join(desc.split()),
        license=_optional_str(fm, "license"),
        version=_optional_str(fm, "version"),
        allowed_tools=_tools(fm.get("allowed-tools")),
        metadata=pairs,
        body=body,
    )
