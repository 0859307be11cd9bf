"""The two comment lines that let the loader tell a config file the settings pages wrote
from what is left of one after a cut (a copy or disk write that stopped part way).

The writer (``file_edit.py``) puts :data:`HEAD` as the first line and :data:`TAIL` as the
last. The rule the loader applies: a file that starts with ``HEAD`` must end with ``TAIL``
(trailing blank lines aside); otherwise it was cut, and it is refused — at start the server
does not start, at a reload the running config is kept — instead of being read as a smaller
config that happens to be valid YAML (a cut between two sections is). Hand edits keep both
comments; a file without ``HEAD`` (written by hand, never saved from the UI) is read as is.
To accept such a file knowingly, delete its first line.
"""

from __future__ import annotations

from pronghorn.config.errors import ConfigError

HEAD = "# pronghorn: saved by the settings pages; the last line marks the end of the file"
TAIL = "# pronghorn: end of config"


def mark(text: str) -> str:
    """``text`` between the two marks (any old marks removed first)."""
    lines = [line for line in text.splitlines() if line not in (HEAD, TAIL)]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join([HEAD, *lines, TAIL]) + "\n"


def check_whole(text: str, source: str) -> None:
    """Raise ``ConfigError`` when a file that starts with ``HEAD`` does not end with
    ``TAIL``."""
    lines = text.splitlines()
    if not lines or lines[0].rstrip("\r") != HEAD:
        return
    while lines and not lines[-1].strip():
        lines.pop()
    if lines[-1].rstrip("\r") != TAIL:
        raise ConfigError(
            f"{source} looks cut short: it was saved by the settings pages (first line) but its "
            f"last line is not {TAIL!r}. It is refused rather than read as a smaller config; "
            "restore it from a backup, or, if it is complete, delete its first line"
        )
