"""Disk usage of a thread's folders, for the workspace quota.

The quota counts allocated blocks (``st_blocks``, what ``du`` shows), so sparse files count
for what they really occupy, and hard links inside the thread count once. Symlinks are not
followed. The walk is bounded: past ``MAX_ENTRIES`` entries it stops and reports the thread
as over quota, so a folder of millions of empty files cannot make each check expensive.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 200_000


@dataclass(frozen=True, slots=True)
class Usage:
    bytes: int
    entries: int
    complete: bool  # False when the walk stopped at MAX_ENTRIES


def measure(root: Path, max_entries: int = MAX_ENTRIES) -> Usage:
    """Bytes allocated below ``root`` (blocking: call through ``asyncio.to_thread``)."""
    total = 0
    entries = 0
    seen: set[tuple[int, int]] = set()
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            scan = os.scandir(folder)
        except OSError:
            continue
        with scan:
            for entry in scan:
                entries += 1
                if entries > max_entries:
                    return Usage(total, entries, complete=False)
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_nlink > 1:
                    key = (st.st_dev, st.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += st.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return Usage(total, entries, complete=True)
