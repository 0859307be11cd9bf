"""A scripted chat model that answers with what it was sent (for tests that check the
prompt and tools a real run gives the model): JSON ``{"system": ..., "tools": [...]}``."""

from __future__ import annotations

import json
from typing import Any

from pronghorn.models.scripted import ScriptedChatModel, ScriptedRequest


def describe(request: ScriptedRequest) -> dict[str, Any]:
    first = request.messages[0] if request.messages else None
    system = first.content if first is not None and first.type == "system" else ""
    return {"text": json.dumps({"system": system, "tools": sorted(request.tool_names)})}


class PromptEchoModel(ScriptedChatModel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(responder=describe, **kwargs)
