"""How the SSE endpoints are documented: `text/event-stream`, never a JSON 200."""

from __future__ import annotations

from starlette.responses import Response


class EventStream(Response):
    """The documented response class of an SSE route (the route returns its own stream)."""

    media_type = "text/event-stream"


def event_stream(what: str) -> dict[int | str, dict[str, object]]:
    """`responses=` for a 200 that is a server-sent event stream."""
    return {
        200: {
            "description": what,
            "content": {
                "text/event-stream": {
                    "schema": {
                        "type": "string",
                        "description": "Server-sent events: `event:`, `data:` (JSON), `id:`",
                    }
                }
            },
        }
    }
