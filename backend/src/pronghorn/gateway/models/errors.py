"""The `responses=` of a route: its documented error statuses, all with `ErrorResponse`."""

from __future__ import annotations

ERROR_REF = "#/components/schemas/ErrorResponse"

_WHY: dict[int, str] = {
    400: "The request makes no sense for the resource's current state",
    401: "Missing or invalid credentials",
    403: "Refused by the authorization policy",
    404: "Not found (or not yours)",
    409: "Conflict: a duplicate, or a busy thread",
    413: "Request body too large",
    422: "Malformed body, query or id",
    429: "Too many requests or over a cap (see Retry-After)",
    503: "A backing service is unavailable",
    507: "The server's disk is full; nothing was saved",
}


def errors(*statuses: int) -> dict[int | str, dict[str, object]]:
    """`{status: ErrorResponse as JSON}` for FastAPI's `responses=` (JSON even on an SSE
    route; the component itself is added by `use_error_response`)."""
    return {
        status: {
            "description": _WHY.get(status, "Error"),
            "content": {"application/json": {"schema": {"$ref": ERROR_REF}}},
        }
        for status in statuses
    }


def answers(
    model: object, status: int = 200, description: str = "Successful Response"
) -> dict[int | str, dict[str, object]]:
    """`responses=` documenting the success body of a route that returns a plain dict or
    list (with `response_model=None`, so FastAPI neither filters nor re-encodes it)."""
    return {status: {"model": model, "description": description}}
