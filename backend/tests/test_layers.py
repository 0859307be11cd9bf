"""Layers import one way: gateway -> runtime -> persistence, and lower layers never reach up.
Every way in (the HTTP gateway, the IM channels, the embedded client) goes through the
runtime's services, never to the repositories or the database itself.

Every `import`/`from ... import` in src/pronghorn counts, wherever it is written (inside a
function or under `TYPE_CHECKING` too): a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "pronghorn"

# For each top-level package, the pronghorn packages it must never import.
FORBIDDEN: dict[str, set[str]] = {
    # the ways in: through the runtime's services only (docs/architecture.md, service layer)
    "gateway": {"persistence", "cli"},
    "client": {"persistence", "gateway", "cli"},
    "runtime": {"gateway", "cli", "channels"},
    # IM channels: above the runtime (they start runs through it), below the gateway
    "channels": {"gateway", "cli", "persistence"},
    "persistence": {"gateway", "runtime", "graphs", "agent", "models", "sandbox", "web", "cli"},
    "graphs": {"gateway", "runtime", "persistence", "cli"},
    # subagents/ builds on the agent's middlewares and state: the graph factory passes the
    # task tool in (agent.extensions.ToolExtension)
    "agent": {"gateway", "runtime", "persistence", "graphs", "subagents", "cli"},
    # the task tool and its runner: beside the agent, below graphs and the runtime
    "subagents": {"gateway", "runtime", "persistence", "graphs", "cli"},
    "governance": {"gateway", "runtime", "persistence", "graphs", "agent", "cli"},
    "models": {"gateway", "runtime", "persistence", "graphs", "agent", "sandbox", "web", "cli"},
    "sandbox": {"gateway", "runtime", "persistence", "graphs", "agent", "models", "web", "cli"},
    "web": {"gateway", "runtime", "persistence", "graphs", "agent", "models", "sandbox", "cli"},
    "mcp": {"gateway", "runtime", "persistence", "graphs", "agent", "models", "cli"},
    "auth": {"gateway", "runtime", "graphs", "agent", "models", "sandbox", "web", "cli"},
    # `pronghorn users|keys` and the doctor's auth checks: beside cli.py / doctor.py, below
    # the gateway (they open the database themselves).
    "cli_accounts": {"gateway", "cli"},
    "doctor_auth": {"gateway", "runtime", "cli"},
    # the doctor's container sandbox check: beside doctor.py, below the gateway
    "doctor_container": {"gateway", "runtime", "cli"},
    # one doctor finding, shared by doctor.py and its per-provider checks
    "doctor_result": {"gateway", "runtime", "cli", "doctor"},
    "skills": {"gateway", "runtime", "persistence", "graphs", "agent", "cli"},
    # long-term memory: below the agent and the runtime (they use it), beside the models
    "memory": {"gateway", "runtime", "persistence", "graphs", "agent", "sandbox", "web", "cli"},
    "config": {
        "gateway",
        "runtime",
        "persistence",
        "graphs",
        "agent",
        "models",
        "sandbox",
        "web",
        "cli",
    },
    # `pronghorn config check`: the config package's loading plus the models' own checks
    "config_check": {
        "gateway",
        "runtime",
        "persistence",
        "graphs",
        "agent",
        "sandbox",
        "web",
        "cli",
    },
    "ids": {
        "gateway",
        "runtime",
        "persistence",
        "graphs",
        "agent",
        "models",
        "sandbox",
        "web",
        "config",
        "cli",
    },
}


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _module_of(path: Path) -> list[str]:
    return ["pronghorn", *path.relative_to(SRC).with_suffix("").parts]


def imported_packages(source: str, module: list[str]) -> list[tuple[int, str]]:
    """(line, top-level pronghorn package) for every pronghorn import in `source`, the text
    of the module named by `module` (its dotted parts, for relative imports)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module[: -node.level] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            # `from pronghorn import gateway` / `from . import x` name packages in `names`.
            if target == "pronghorn" or (node.level and not node.module):
                names = [f"{target}.{alias.name}" for alias in node.names]
            else:
                names = [target]
        for name in names:
            parts = name.split(".")
            if parts[0] == "pronghorn" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def violations() -> list[str]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        package = _package_of(path)
        banned = FORBIDDEN.get(package, set())
        source = path.read_text(encoding="utf-8")
        for line, target in imported_packages(source, _module_of(path)):
            if target in banned:
                out.append(f"{path.relative_to(SRC)}:{line} ({package}) imports pronghorn.{target}")
    return out


def test_layers_import_one_way() -> None:
    assert violations() == []


def test_every_package_has_a_rule() -> None:
    """A new top-level package must say what it may not import (cli and the doctor may
    import anything: they are the top)."""
    packages = {_package_of(p) for p in SRC.rglob("*.py")} - {"__init__", "__main__"}
    assert packages - set(FORBIDDEN) <= {"cli", "doctor"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from pronghorn.gateway.errors import ApiError\n", ["gateway"]),
        ("import pronghorn.gateway.logs\n", ["gateway"]),
        ("from pronghorn import gateway\n", ["gateway"]),
        ("def f():\n    from pronghorn.gateway import app\n", ["gateway"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from pronghorn.gateway.app import x\n",
            ["gateway"],
        ),
        ("from ..gateway import errors\n", ["gateway"]),
        ("from . import manager\n", ["runtime"]),
        ("import json\nfrom langgraph.graph import StateGraph\n", []),
    ],
)
def test_finds_every_form_of_import(source: str, expected: list[str]) -> None:
    """The walker sees absolute, package, lazy, type-only and relative imports (the probe is
    read as if it were a module pronghorn/runtime/manager.py)."""
    found = [pkg for _, pkg in imported_packages(source, ["pronghorn", "runtime", "manager"])]
    assert found == expected


def run_manager_creates(source: str) -> list[int]:
    """Lines of `source` that call `<something>.runs.create(...)`: the run manager's accept,
    which only `Runs.start` may call."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if node.func.attr == "create" and isinstance(owner, ast.Attribute) and owner.attr == "runs":
            lines.append(node.lineno)
    return lines


def test_every_way_in_starts_runs_through_one_service() -> None:
    """The HTTP routers, the IM dispatcher, the agent protocols, the embedded client, crons
    and approval timeouts all start runs with `runtime.runs.Runs.start` (one set of defaults,
    one request), never the run manager's `create` themselves; the non-HTTP ways in do not
    build the API's `RunCreate` either (they say `RunStart`)."""
    starts = SRC / "runtime" / "services" / "runs.py"
    direct = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        if path != starts
        for line in run_manager_creates(path.read_text(encoding="utf-8"))
    ]
    assert direct == []
    ways_in = [
        SRC / "client.py",
        SRC / "runtime" / "services" / "agent_calls.py",
        *sorted((SRC / "channels").rglob("*.py")),
        *sorted((SRC / "gateway" / "protocols").rglob("*.py")),
    ]
    builders = [
        str(path.relative_to(SRC))
        for path in ways_in
        if "pronghorn.runtime.engine.run_request" in path.read_text(encoding="utf-8")
    ]
    assert builders == []


def test_finds_a_run_manager_create() -> None:
    probe = "async def f(rt):\n    await rt.runs.create(None, req, access)\n    rt.x.create()\n"
    assert run_manager_creates(probe) == [2]
