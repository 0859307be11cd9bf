"""The lead agent graph factory, called by the graph registry for every run.

Building the agent (model client, tools, middleware chain, ``create_agent`` compile) is
done once per (config version, options, date) and cached on the runtime, so a run costs a
dict lookup. The compiled graph has no checkpointer: the registry attaches ours.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from typing import Any

from langchain_core.runnables import RunnableConfig

from pronghorn.agent.builder import build_lead_agent
from pronghorn.agent.options import AgentOptions

CACHE_KEY = "lead_agent.graph_cache"
MAX_CACHED = 32


class GraphCache:
    """A small LRU of compiled graphs, keyed by (config version, options, date)."""

    def __init__(self, max_size: int = MAX_CACHED) -> None:
        self.max_size = max_size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0

    def get_or_build(self, key: tuple[Any, ...], build: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        graph = build()
        with self._lock:
            self.builds += 1
            self._items[key] = graph
            while len(self._items) > self.max_size:
                self._items.popitem(last=False)
        return graph


def _version(runtime: Any) -> str:
    try:
        return str(runtime.settings.version)
    except Exception:
        return str(id(runtime.config))


def make_graph(
    config: RunnableConfig, runtime: Any = None, context: dict[str, Any] | None = None
) -> Any:
    if runtime is None:
        raise RuntimeError("lead_agent needs the Pronghorn runtime (served by `pronghorn serve`)")
    options = AgentOptions.from_run(config, context)
    cache: GraphCache = runtime.extras.setdefault(CACHE_KEY, GraphCache())
    today = dt.date.today()
    key = (_version(runtime), options.key(), today.isoformat())
    return cache.get_or_build(key, lambda: build_lead_agent(runtime, options, today=today))
