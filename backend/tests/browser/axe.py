"""axe-core in the browser tests: inject the package's axe.min.js (frontend devDependency,
never fetched at test time) into a page and return its serious and critical violations."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support.live import BACKEND_DIR

AXE_JS = BACKEND_DIR.parent / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")

# Every rule axe runs by default (WCAG 2.0-2.2 A/AA and best practices); only the impact
# filters what fails the test. Results are trimmed to what a failure message needs.
RUN_AXE = """
async () => {
  const result = await window.axe.run(document, { resultTypes: ['violations'] });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => ({
      target: n.target.join(' '),
      summary: n.failureSummary,
    })),
  }));
}
"""


@cache
def _axe_source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def axe_source() -> str:
    if not AXE_JS.exists():
        pytest.skip(f"{AXE_JS} is missing (cd frontend && npm ci installs axe-core)")
    return _axe_source(AXE_JS)


def violations(page: Any) -> list[dict[str, Any]]:
    """All violations axe finds in the page as it is now (any impact)."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source())
    return page.evaluate(RUN_AXE)


def blocking(page: Any) -> list[dict[str, Any]]:
    """The serious and critical violations only."""
    return [v for v in violations(page) if v["impact"] in BLOCKING]


def describe(found: list[dict[str, Any]]) -> str:
    lines = []
    for v in found:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']}")
        lines.extend(f"    {n['target']}: {n['summary']}" for n in v["nodes"])
    return "\n".join(lines)
