"""The JSON response every endpoint answers with (serialized by runtime.serialization)."""

from __future__ import annotations

from starlette.responses import Response

from pronghorn.runtime.events.serialization import dumps


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: object) -> bytes:
        return dumps(content)
