"""Request projection (vision models): show the images ``view_image`` loaded, once.

``view_image`` stores ``{path, mime_type, size, base64, tool_call_id}`` in ``viewed_images``.
The model request that directly follows those tool calls (their ``ToolMessage``s come
after the last AI message) gets one extra user message at its end: a short text listing
the images, then one standard image content block per image (``{"type": "image",
"base64", "mime_type"}``; each provider's client turns it into its own format, e.g. an
``image_url`` data URL for OpenAI). At most ``max_images`` images and ``max_bytes`` bytes
go into one request; the others are named in the text as not attached. The message exists
in that request only, and ``after_model`` then clears ``viewed_images``, so each image is
sent once and never kept in the thread state (images can be megabytes).

Only added to the chain of models with ``supports_vision``.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._projecting import RequestProjection
from pronghorn.agent.state import StateObject, ThreadState
from pronghorn.agent.untyped import as_int
from pronghorn.models.notes import NOTE_KEY

MAX_IMAGES = 4
MAX_BYTES = 16 * 1024 * 1024


def latest_tool_call_ids(messages: Sequence[BaseMessage]) -> set[str]:
    """Ids of the tool results after the last AI message: what this request answers."""
    ids: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            break
        if isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids


def select(
    images: list[StateObject], *, max_images: int, max_bytes: int
) -> tuple[list[StateObject], list[StateObject]]:
    """(attached, left out), in the order the images were viewed."""
    attached: list[StateObject] = []
    left: list[StateObject] = []
    total = 0
    for image in images:
        size = as_int(image.get("size"))
        if len(attached) < max_images and total + size <= max_bytes:
            attached.append(image)
            total += size
        else:
            left.append(image)
    return attached, left


def image_message(
    attached: list[StateObject], left: list[StateObject], *, max_images: int, max_bytes: int
) -> HumanMessage:
    lines = [f"- {i['path']} ({i['mime_type']}, {i['size']} bytes)" for i in attached]
    text = "<viewed_images>\nThe images you loaded with view_image:\n" + "\n".join(lines)
    if left:
        names = ", ".join(str(i["path"]) for i in left)
        text += (
            f"\nNot attached (one request carries at most {max_images} images and "
            f"{max_bytes // (1024 * 1024)} MB): {names}. View them again later, fewer at a time."
        )
    text += "\n</viewed_images>"
    blocks: list[str | dict[str, object]] = [{"type": "text", "text": text}]
    blocks += [
        {"type": "image", "base64": i["base64"], "mime_type": i["mime_type"]} for i in attached
    ]
    # A request note (pronghorn.models.notes): not a user turn for loop detection, the
    # reasoning round-trip or scripted rules.
    return HumanMessage(content=blocks, additional_kwargs={NOTE_KEY: "viewed_images"})


class ViewedImagesMiddleware(RequestProjection):
    state_schema = ThreadState

    def __init__(self, *, max_images: int = MAX_IMAGES, max_bytes: int = MAX_BYTES) -> None:
        super().__init__()
        self.max_images = max(1, max_images)
        self.max_bytes = max_bytes

    def _project(self, request: ModelRequest) -> ModelRequest:
        images: list[StateObject] = request.state.get("viewed_images") or []
        if not images:
            return request
        answered = latest_tool_call_ids(request.messages)
        pending = [i for i in images if i.get("tool_call_id") in answered and i.get("base64")]
        if not pending:
            return request
        attached, left = select(pending, max_images=self.max_images, max_bytes=self.max_bytes)
        message = image_message(
            attached, left, max_images=self.max_images, max_bytes=self.max_bytes
        )
        return request.override(messages=[*request.messages, message])

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        if state.get("viewed_images"):
            return {"viewed_images": []}  # shown (or left out) once; never kept
        return None

    async def aafter_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        return self.after_model(state, runtime)
