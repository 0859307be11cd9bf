"""Graph registry and built-in graphs."""

from pronghorn.graphs.requests import AccessContext, GraphRequest

__all__ = ["AccessContext", "GraphRequest"]
