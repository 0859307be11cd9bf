"""Whether a graph can be used now: loaded (serving), broken (503 with the reason, so a
client can tell a graph that failed to load from one that does not exist) or unknown."""

from __future__ import annotations

from pronghorn.graphs.registry import GraphRegistry
from pronghorn.runtime.errors import NotFound, Unavailable


def require_graph(graphs: GraphRegistry, graph_id: str) -> None:
    """Raise unless ``graph_id`` serves: Unavailable for a configured graph that failed to
    load, NotFound for one that is not configured."""
    if graph_id in graphs:
        return
    problem = graphs.problem(graph_id)
    if problem is not None:
        raise Unavailable(f"Graph '{graph_id}' failed to load: {problem.error}")
    raise NotFound(f"Graph '{graph_id}' not found")
