#!/usr/bin/env python3
"""Validate a skill folder and zip it into <out_dir>/<name>.skill (standard library only)."""

from __future__ import annotations

import os
import re
import sys
import zipfile

NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
KEYS = {"name", "description", "license", "allowed-tools", "version", "metadata", "compatibility"}
MAX_FILES, MAX_BYTES = 200, 10 * 1024 * 1024


def front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("SKILL.md must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("the front matter is not closed by '---'") from None
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        if not line.strip() or line.startswith((" ", "\t", "#")):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"front matter line is not 'key: value': {line!r}")
        fields[key.strip()] = value.split(" #")[0].strip().strip("\"'")
    return fields


def check(folder: str) -> str:
    path = os.path.join(folder, "SKILL.md")
    if not os.path.isfile(path):
        raise ValueError(f"{path} does not exist")
    fields = front_matter(open(path, encoding="utf-8").read())
    unknown = set(fields) - KEYS
    if unknown:
        raise ValueError(f"unknown front matter keys: {', '.join(sorted(unknown))}")
    name = fields.get("name", "")
    if not NAME.fullmatch(name) or len(name) > 64:
        raise ValueError(f"name {name!r} must be hyphen-case and at most 64 characters")
    if name != os.path.basename(os.path.normpath(folder)):
        raise ValueError(f"name {name!r} must equal the folder's name")
    if not fields.get("description"):
        raise ValueError("description is required")
    if len(fields["description"]) > 1024:
        raise ValueError("description is longer than 1024 characters")
    return name


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: package_skill.py SKILL_FOLDER OUT_DIR", file=sys.stderr)
        return 2
    folder, out_dir = sys.argv[1].rstrip("/"), sys.argv[2]
    try:
        name = check(folder)
    except (ValueError, OSError) as exc:
        print(f"invalid skill: {exc}", file=sys.stderr)
        return 1
    files, total = [], 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for n in names:
            full = os.path.join(root, n)
            if os.path.islink(full):
                print(f"invalid skill: {full} is a symlink", file=sys.stderr)
                return 1
            total += os.path.getsize(full)
            files.append(full)
    if len(files) > MAX_FILES or total > MAX_BYTES:
        print(f"invalid skill: more than {MAX_FILES} files or {MAX_BYTES} bytes", file=sys.stderr)
        return 1
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, f"{name}.skill")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for full in sorted(files):
            zf.write(full, os.path.join(name, os.path.relpath(full, folder)))
    print(f"wrote {target} ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
