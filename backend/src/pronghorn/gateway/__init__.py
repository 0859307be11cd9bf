"""HTTP layer: app factory, routers, SSE."""
