"""A static scan of a skill's files for plainly dangerous commands.

It is a tripwire for obvious abuse in an uploaded archive (a reverse shell, wiping the
disk, stealing credentials, piping a download into a shell), not a security boundary: the
sandbox is. Each rule is a regular expression over the text of every file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    rule: str


_RULES = {
    "deletes the root filesystem": r"\brm\s+-[a-zA-Z]*[rf][a-zA-Z]*\s+(--\S+\s+)*/(\s|$|\*)",
    "pipes a download into a shell": r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b",
    "opens a reverse shell": r"/dev/tcp/|\bnc\b[^\n]*\s-e\s|\bsocat\b[^\n]*exec:",
    "reads credentials": r"\.ssh/id_|/etc/shadow|\.aws/credentials|\.netrc\b",
    "writes raw disks": r"\bdd\b[^\n]*\bof=/dev/(sd|nvme|hd|vd)|\bmkfs(\.\w+)?\s+/dev/",
    "fork bomb": r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
    "decodes and runs hidden code": (
        r"base64\s+(-d|--decode)[^\n]*\|\s*(ba)?sh\b|exec\(\s*(base64\.)?b64decode"
    ),
}
RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(pattern)) for rule, pattern in _RULES.items()
)


def scan_text(path: str, text: str) -> list[Finding]:
    return [Finding(path, rule) for rule, pattern in RULES if pattern.search(text)]
