"""``view_image``: load an image from the thread folders so a vision model can look at it.

The image goes into the thread state's ``viewed_images`` as
``{"path", "mime_type", "size", "base64", "tool_call_id"}``; the harness
(``agent/middlewares/viewed_images.py``) shows it to the model in its next request, then
drops it from the state. Offered to every model: one without ``supports_vision`` gets an
error result saying it cannot view images.
"""

from __future__ import annotations

import asyncio
import base64
import os

from langchain.tools import tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import ToolError, guarded, paths_for
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths, normalize_virtual

MAX_IMAGE_BYTES = 5 * 1024 * 1024
NO_VISION = (
    "This model cannot view images (its entry in config.yaml has no supports_vision). "
    "Tell the user so, and work from the file's name or metadata instead."
)


def sniff_image(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP header; None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def load_image(paths: ThreadPaths, path: str) -> dict[str, object]:
    """Read and check one image (blocking; run in a thread)."""
    virtual = normalize_virtual(path)
    try:
        opened = safe_open.open_file(paths, virtual)
    except safe_open.MissingPathError:
        raise SandboxError(f"Image not found: {virtual}") from None
    except safe_open.NotRegularFileError:
        raise SandboxError(f"{virtual} is not a regular file.") from None
    with opened:
        size = opened.info.st_size
        if size > MAX_IMAGE_BYTES:
            raise SandboxError(
                f"{virtual} is {size} bytes; view_image accepts images up to {MAX_IMAGE_BYTES} "
                "bytes (make a smaller copy first, e.g. with a bash command)."
            )
        data = os.pread(opened.fd, MAX_IMAGE_BYTES + 1, 0)
    if len(data) > MAX_IMAGE_BYTES:
        raise SandboxError(f"{virtual} grew past {MAX_IMAGE_BYTES} bytes while being read.")
    mime = sniff_image(data[:16])
    if mime is None:
        raise SandboxError(f"{virtual} is not a PNG, JPEG, GIF or WebP image.")
    return {
        "path": virtual,
        "mime_type": mime,
        "size": len(data),
        "base64": base64.b64encode(data).decode("ascii"),
    }


def image_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("view_image", parse_docstring=True)
    async def view_image(path: str, runtime: AgentToolRuntime) -> object:
        """Look at an image file (PNG, JPEG, GIF or WebP, up to 5 MB) from /mnt/user-data;
        it is shown to you right after this call.

        Args:
            path: Absolute path of the image, e.g. /mnt/user-data/uploads/photo.png.
        """

        async def body() -> object:
            if not deps.vision:
                raise ToolError(NO_VISION)
            image = await asyncio.to_thread(load_image, paths_for(deps, runtime), path)
            image["tool_call_id"] = runtime.tool_call_id  # the harness shows it after this call
            text = (
                f"Loaded {image['path']} ({image['mime_type']}, {image['size']} bytes); "
                "the image is attached to your next turn."
            )
            message = ToolMessage(
                content=text, tool_call_id=runtime.tool_call_id, name="view_image"
            )
            return Command(update={"viewed_images": [image], "messages": [message]})

        return await guarded("view_image", runtime, body)

    return [view_image]
