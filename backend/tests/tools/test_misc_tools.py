"""write_todos validation, view_image, and which tools build_tools offers."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

from langgraph.types import Command
from pydantic import BaseModel

from pronghorn.agent.options import AgentOptions
from pronghorn.agent.tools import build_tools
from pronghorn.agent.tools.image import MAX_IMAGE_BYTES
from pronghorn.web.search import SearxngSearch
from tools.conftest import MakeKit, ToolKit


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


async def test_write_todos(kit: ToolKit) -> None:
    todos = [
        {"content": "Research", "status": "completed"},
        {"content": "Draft", "status": "in_progress"},
        {"content": "Review", "status": "pending"},
    ]
    result = await kit.call("write_todos", todos=todos)
    assert isinstance(result, Command) and result.update is not None
    assert result.update["todos"] == todos
    assert result.update["messages"][0].content.splitlines() == [
        "Todo list updated (3 items):",
        "[x] Research",
        "[~] Draft",
        "[ ] Review",
    ]
    cleared = await kit.call("write_todos", todos=[])
    assert isinstance(cleared, Command) and cleared.update is not None
    assert cleared.update["todos"] == []


async def test_write_todos_rejects_bad_items(kit: ToolKit) -> None:
    err = await kit.error("write_todos", todos=[{"content": "x", "status": "done"}])
    assert "status 'done'" in err and "pending, in_progress, completed" in err
    err = await kit.error("write_todos", todos=[{"content": "  ", "status": "pending"}])
    assert "no content" in err


async def test_view_image(make_kit: MakeKit) -> None:
    kit = make_kit(vision=True)
    await kit.text("ls", description="d", path="/mnt/user-data")
    png = tiny_png()
    (kit.paths.uploads / "p.png").write_bytes(png)
    result = await kit.call("view_image", path="/mnt/user-data/uploads/p.png")
    assert isinstance(result, Command) and result.update is not None
    (image,) = result.update["viewed_images"]
    assert image["path"] == "/mnt/user-data/uploads/p.png"
    assert image["mime_type"] == "image/png" and image["size"] == len(png)
    assert base64.b64decode(image["base64"]) == png
    assert "image/png" in result.update["messages"][0].content
    # The harness shows the image right after this call: it is keyed by the call's id.
    assert image["tool_call_id"] == result.update["messages"][0].tool_call_id


async def test_view_image_without_vision_says_so(make_kit: MakeKit) -> None:
    kit = make_kit(vision=False)
    await kit.text("ls", description="d", path="/mnt/user-data")
    (kit.paths.uploads / "p.png").write_bytes(tiny_png())
    err = await kit.error("view_image", path="/mnt/user-data/uploads/p.png")
    assert "cannot view images" in err and "supports_vision" in err


async def test_view_image_refusals(make_kit: MakeKit) -> None:
    kit = make_kit(vision=True)
    await kit.text("ls", description="d", path="/mnt/user-data")
    (kit.paths.uploads / "t.png").write_text("not an image")
    with (kit.paths.uploads / "big.png").open("wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")
        fh.truncate(MAX_IMAGE_BYTES + 1)
    (kit.paths.uploads / "out.png").symlink_to("/etc/passwd")
    assert "not a PNG" in await kit.error("view_image", path="/mnt/user-data/uploads/t.png")
    assert "up to" in await kit.error("view_image", path="/mnt/user-data/uploads/big.png")
    assert "not found" in await kit.error("view_image", path="/mnt/user-data/uploads/none.png")
    assert "Access denied" in await kit.error("view_image", path="/mnt/user-data/uploads/out.png")
    assert "Access denied" in await kit.error("view_image", path="/etc/hostname")


def test_tool_set(make_kit: MakeKit, tmp_path: Path) -> None:
    base = {
        "read_file", "write_file", "str_replace", "ls", "glob", "grep", "bash",
        "present_files", "ask_clarification", "write_todos", "web_fetch", "view_image",
    }  # fmt: skip
    kit = make_kit()
    assert set(kit.tools) == base  # view_image too: without vision it explains why not
    search = SearxngSearch("http://127.0.0.1:9", None, 1.0, None)
    full = make_kit(vision=True, search=search)
    assert set(full.tools) == base | {"web_search"}
    plan = build_tools(kit.deps, options=AgentOptions(is_plan_mode=True))
    assert {t.name for t in plan} == base
    for tool in full.tools.values():
        assert tool.description and "\n" not in tool.description
        schema = tool.tool_call_schema
        assert isinstance(schema, type) and issubclass(schema, BaseModel)
        assert "runtime" not in schema.model_json_schema()["properties"]
