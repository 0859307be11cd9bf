"""Graph specs of ``graphs:`` (``package.module:attr`` or ``./file.py:attr``) as paths.

The config owns the check that a file-based spec points at a file that exists, so a reload
naming a missing file is refused like any other invalid config (the old config stays and
``/api/config/status`` shows the error) instead of being accepted and failing later.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def graph_file(spec: str, base_dir: Path) -> Path | None:
    """The file a ``./file.py:attr`` spec names (resolved against ``base_dir``), or None
    for a ``module:attr`` spec."""
    path_or_module = spec.rpartition(":")[0]
    if path_or_module.endswith(".py") or "/" in path_or_module:
        return (base_dir / path_or_module).resolve()
    return None


def missing_graph_files(graphs: Mapping[str, str], base_dir: Path) -> list[str]:
    """One message per file-based graph spec whose file does not exist (blocking I/O)."""
    problems: list[str] = []
    for graph_id, spec in graphs.items():
        file = graph_file(spec, base_dir) if ":" in spec else None
        if file is not None and not file.is_file():
            problems.append(f"graphs.{graph_id}: graph file {file} does not exist ({spec!r})")
    return problems


def missing_auth_file(spec: str | None, base_dir: Path) -> str | None:
    """A message when `auth.custom` is a ``./file.py:attr`` spec whose file does not exist."""
    file = graph_file(spec, base_dir) if spec and ":" in spec else None
    if file is not None and not file.is_file():
        return f"auth.custom: file {file} does not exist ({spec!r})"
    return None
