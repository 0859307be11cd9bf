"""The tools the lead agent can have and whether the ``tools:`` config offers each (the
``GET /api/tools`` view; the agent's own selection is agent/tools/selection.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pronghorn.agent.tools import ToolDeps, build_tools
from pronghorn.agent.tools.selection import extra_tools, group_of, select_tools
from pronghorn.config.schema.extensions import TOOL_GROUPS
from pronghorn.web.search import search_provider_from_config

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


async def tool_catalog(runtime: AppRuntime) -> dict[str, object]:
    config = runtime.config
    deps = ToolDeps(
        sandboxes=runtime.sandbox,
        config=config,
        data_dir=runtime.data_dir,
        search=search_provider_from_config(config.web),
        vision=True,
    )
    extras, errors = await asyncio.to_thread(extra_tools, config.tools)
    tools = [*build_tools(deps), *extras]
    offered = {t.name for t in select_tools(tools, config.tools)}
    timeouts = config.tools.timeouts
    items = [
        {
            "name": t.name,
            "group": group_of(t),
            "description": t.description.split(". ")[0].rstrip(".") + ".",
            "enabled": t.name in offered,
            "source": str((t.metadata or {}).get("source") or "builtin"),
            "timeout_s": timeouts.get(
                t.name, config.sandbox.command_timeout_s if t.name == "bash" else None
            ),
        }
        for t in tools
    ]
    groups = list(dict.fromkeys([*TOOL_GROUPS, *(str(i["group"]) for i in items)]))
    return {
        "tools": items,
        "groups": groups,
        "enabled": config.tools.enabled,
        "disabled": list(config.tools.disabled),
        "errors": errors,
    }
