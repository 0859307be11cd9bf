"""Unpack a ``.skill`` archive (a zip) into a user's custom skills, safely (blocking).

Refused, before anything is written: an archive larger than the limit, more entries than
the limit, a total unpacked size over the limit (so a zip bomb is stopped by its declared
sizes and again while inflating), absolute paths, ``..`` or backslashes in a name (zip
slip), symlinks and other special files, an archive without exactly one ``SKILL.md`` at its
top (either at the root or in one top-level folder), a ``SKILL.md`` that breaks the rules,
a name already taken, and (``scan``) files that match the static scan. The skill is
unpacked into a temporary folder beside its destination and renamed into place, so a
failure leaves nothing behind.
"""

from __future__ import annotations

import io
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pronghorn.skills.frontmatter import parse
from pronghorn.skills.model import SkillInvalid
from pronghorn.skills.scan import Finding, scan_text

_CHUNK = 64 * 1024


class SkillExists(Exception):
    """A skill of that name already exists (``str`` says where)."""


@dataclass(frozen=True, slots=True)
class InstallLimits:
    max_bytes: int
    max_files: int
    scan: bool = True


def _member_parts(info: zipfile.ZipInfo) -> tuple[str, ...]:
    name = info.filename
    if "\\" in name or name.startswith("/") or "\x00" in name or ":" in name.split("/")[0]:
        raise SkillInvalid(f"archive entry {name!r} has an unsafe path")
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if any(p == ".." for p in parts):
        raise SkillInvalid(f"archive entry {name!r} leaves the skill folder (zip slip)")
    mode = info.external_attr >> 16
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        kind = "a symlink" if stat.S_ISLNK(mode) else "a special file"
        raise SkillInvalid(f"archive entry {name!r} is {kind}")
    return parts


def _layout(members: Members) -> tuple[str, ...]:
    """The prefix (``()`` or one folder) under which ``SKILL.md`` sits."""
    files = [parts for info, parts in members if not info.is_dir() and parts]
    if ("SKILL.md",) in files:
        return ()
    tops = {parts[0] for parts in files}
    if len(tops) == 1:
        top = next(iter(tops))
        if (top, "SKILL.md") in files:
            return (top,)
    raise SkillInvalid("the archive must hold SKILL.md at its root or in one top-level folder")


Members = list[tuple[zipfile.ZipInfo, tuple[str, ...]]]


def inspect(data: bytes, limits: InstallLimits) -> tuple[str, Members, str]:
    """(skill name, members to write with their paths inside the skill, SKILL.md text)."""
    if len(data) > limits.max_bytes:
        raise SkillInvalid(f"the archive is larger than {limits.max_bytes} bytes")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise SkillInvalid("the file is not a zip archive") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_files:
            raise SkillInvalid(f"the archive holds more than {limits.max_files} entries")
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_bytes:
            raise SkillInvalid(f"the unpacked skill would exceed {limits.max_bytes} bytes")
        members = [(info, _member_parts(info)) for info in infos]
        prefix = _layout(members)
        n = len(prefix)
        inner = [(info, parts[n:]) for info, parts in members if parts[:n] == prefix]
        if len(inner) != len(members):
            raise SkillInvalid("every entry must be inside the skill's folder")
        skill_md = _read(archive, next(i for i, p in inner if p == ("SKILL.md",)), limits.max_bytes)
    try:
        text = skill_md.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillInvalid("SKILL.md is not UTF-8 text") from None
    folder = prefix[0] if prefix else None
    doc = parse(text, folder_name=folder)
    return doc.name, [(i, p) for i, p in inner if p], text


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    out = bytearray()
    with archive.open(info) as src:
        while chunk := src.read(_CHUNK):
            out += chunk
            if len(out) > budget:
                raise SkillInvalid("the unpacked skill exceeds the size limit")
    return bytes(out)


def install_archive(
    data: bytes, dest_root: Path, limits: InstallLimits, taken: Collection[str] = ()
) -> tuple[str, Path]:
    """Unpack into ``dest_root/<name>``; (name, folder). ``taken``: names of other skills."""
    name, members, _ = inspect(data, limits)
    if name in taken:
        raise SkillExists(f"a skill named {name!r} already exists")
    dest = dest_root / name
    if dest.exists() or dest.is_symlink():
        raise SkillExists(f"a custom skill named {name!r} is already installed")
    dest_root.mkdir(parents=True, exist_ok=True, mode=0o770)
    tmp = Path(tempfile.mkdtemp(prefix=f".install-{name}-", dir=dest_root))
    try:
        findings: list[Finding] = []
        written = 0
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info, parts in members:
                target = tmp.joinpath(*parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                body = _read(archive, info, limits.max_bytes - written)
                written += len(body)
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "xb") as fh:  # never through an existing entry
                    fh.write(body)
                if limits.scan:
                    findings += scan_text("/".join(parts), body.decode("utf-8", "replace"))
        if findings:
            what = "; ".join(f"{f.path}: {f.rule}" for f in findings[:5])
            raise SkillInvalid(f"the static scan refused the skill ({what})")
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return name, dest


def remove_skill(folder: Path) -> None:
    shutil.rmtree(folder)
