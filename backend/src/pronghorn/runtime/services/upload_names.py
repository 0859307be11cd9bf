"""The naming rules of uploaded files, the same for every way in (HTTP, IM channels, the
embedded client): what a stored name may contain, and how a taken name is numbered."""

from __future__ import annotations

import os
import unicodedata

MAX_NAME_BYTES = 255


def safe_name(raw: str) -> str:
    """A file name safe to store: no folders, control or format characters, leading dots.

    Raises ``ValueError`` when nothing usable is left.
    """
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))
    name = name.strip().lstrip(". ").rstrip(" ")
    if not name:
        raise ValueError(f"invalid file name {raw!r}")
    while len(name.encode()) > MAX_NAME_BYTES:
        stem, ext = _split(name)
        name = (stem[:-1] + ext) if len(stem) > 1 else name[: len(name) - 1]
    return name


def _split(name: str) -> tuple[str, str]:
    stem, ext = os.path.splitext(name)
    return (stem, ext) if stem else (name, "")


def _cut(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that is at most ``max_bytes`` in UTF-8."""
    return text.encode()[: max(0, max_bytes)].decode("utf-8", "ignore")


def numbered(name: str, n: int) -> str:
    """``report.pdf`` → ``report (n).pdf``, shortened to stay within 255 bytes."""
    if n == 0:
        return name
    stem, ext = _split(name)
    tag = f" ({n})"
    room = MAX_NAME_BYTES - len(tag.encode())
    if len(ext.encode()) > room // 2:  # a "extension" this long is part of the name
        stem, ext = name, ""
    return _cut(stem, room - len(ext.encode())) + tag + ext
