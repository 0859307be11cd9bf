"""The built-in lead agent."""

from pronghorn.graphs.lead_agent.graph import make_graph

__all__ = ["make_graph"]
