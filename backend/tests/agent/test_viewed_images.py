"""Images loaded by ``view_image`` reach a vision model's next request, once, bounded."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from agent.helpers import make_agent, scripted, thread_config, user
from fakes.anthropic_server import AnthropicReply, FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer, Reply
from pronghorn.agent.middlewares.loop_detection import repeats
from pronghorn.agent.middlewares.viewed_images import image_message, select
from pronghorn.agent.tools import ToolDeps
from pronghorn.agent.tools.image import image_tools
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory
from pronghorn.models.notes import NOTE_KEY
from pronghorn.sandbox.paths import ThreadPaths
from support.scripted import scripted_model

UPLOADS = "/mnt/user-data/uploads"


def png(width: int = 1) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + b"\xff\x00\x00" * width)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def setup(
    tmp_path: Path, files: dict[str, bytes], *, vision: bool
) -> tuple[RunnableConfig, list[BaseTool]]:
    config = thread_config()
    paths = ThreadPaths.for_thread(tmp_path, "tester", config["configurable"]["thread_id"])
    paths.uploads.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (paths.uploads / name).write_bytes(data)
    deps = ToolDeps(sandboxes=None, config=AppConfig(), data_dir=tmp_path, vision=vision)  # type: ignore[arg-type]
    return config, image_tools(deps)


def view(*names: str) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "view_image", "args": {"path": f"{UPLOADS}/{n}"}} for n in names]
    }


def image_blocks(message: Any) -> list[dict[str, Any]]:
    content = message.content if not isinstance(message, dict) else message["content"]
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") in ("image", "image_url")]


async def test_the_image_reaches_the_openai_request_as_a_data_url(
    tmp_path: Path, fake_openai: FakeOpenAIServer
):
    image = png(3)
    config, tools = setup(tmp_path, {"cat.png": image}, vision=True)
    entry = {
        "name": "gpt",
        "provider": "openai",
        "model": "gpt-4o",
        "base_url": fake_openai.base_url,
        "api_key": "sk-test",
        "supports_vision": True,
    }
    model = ModelFactory(AppConfig.model_validate({"models": [entry]}), env={}).create("gpt")
    fake_openai.queue(
        Reply.tool_call("view_image", {"path": f"{UPLOADS}/cat.png"}, id="call_img"),
        Reply.text("A tiny red picture."),
        Reply.text("Still here."),
    )
    graph = make_agent(tmp_path, model, tools, vision=True)
    out = await graph.ainvoke(user("what is in cat.png?"), config)
    assert out["messages"][-1].content == "A tiny red picture."

    sent = fake_openai.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    url = f"data:image/png;base64,{base64.b64encode(image).decode()}"
    [block] = image_blocks(sent[-1])
    assert block == {"type": "image_url", "image_url": {"url": url}}
    assert f"{UPLOADS}/cat.png" in sent[-1]["content"][0]["text"]
    # Once: the image is not kept in the state, nor sent again on the next turn.
    assert not out.get("viewed_images")
    assert not any(image_blocks(m) for m in out["messages"])
    await graph.ainvoke(user("and now?"), config)
    again = fake_openai.requests[2].body["messages"]
    assert not any(image_blocks(m) for m in again)
    assert url not in str(again)


async def test_at_most_four_images_per_request_the_rest_named(tmp_path: Path):
    names = [f"p{i}.png" for i in range(6)]
    config, tools = setup(tmp_path, {n: png(i + 1) for i, n in enumerate(names)}, vision=True)
    model = scripted([view(*names), {"text": "seen"}])
    out = await make_agent(tmp_path, model, tools, vision=True).ainvoke(user("look"), config)
    assert out["messages"][-1].content == "seen"
    note = model.requests[1].messages[-1]
    assert isinstance(note, HumanMessage) and note.additional_kwargs[NOTE_KEY]
    blocks = image_blocks(note)
    assert len(blocks) == 4 and all(b["mime_type"] == "image/png" for b in blocks)
    first = note.content[0]
    assert isinstance(first, dict)
    text = first["text"]
    assert "Not attached" in text and f"{UPLOADS}/p4.png" in text and f"{UPLOADS}/p5.png" in text
    assert f"{UPLOADS}/p3.png" not in text.split("Not attached")[1]
    # Request only: the chat history has no such message.
    assert not any(isinstance(m, HumanMessage) and m.additional_kwargs for m in out["messages"])


def test_the_byte_budget_bounds_a_request():
    images = [
        {"path": f"/p{i}", "mime_type": "image/png", "size": 600, "base64": "QUFB"}
        for i in range(3)
    ]

    attached, left = select(images, max_images=4, max_bytes=1300)
    assert [i["path"] for i in attached] == ["/p0", "/p1"] and [i["path"] for i in left] == ["/p2"]
    note = image_message(attached, left, max_images=4, max_bytes=1300)
    first = note.content[0]
    assert len(image_blocks(note)) == 2 and isinstance(first, dict) and "/p2" in first["text"]


async def test_a_model_without_vision_is_told_and_gets_no_image(tmp_path: Path):
    config, tools = setup(tmp_path, {"cat.png": png()}, vision=False)
    model = scripted([view("cat.png"), {"text": "I cannot see it."}])
    out = await make_agent(tmp_path, model, tools, vision=False).ainvoke(user("look"), config)
    [result] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.status == "error" and "cannot view images" in result.content
    assert not any(image_blocks(m) for m in model.requests[1].messages)
    assert not out.get("viewed_images")


async def test_scripted_rules_still_follow_the_user_turn(tmp_path: Path):
    # The image note is a user-role message, but not the user's: rules keep matching "look".
    config, tools = setup(tmp_path, {"cat.png": png()}, vision=True)
    model = scripted_model(rules=[{"match": "look", "steps": [view("cat.png"), {"text": "seen"}]}])
    out = await make_agent(tmp_path, model, tools, vision=True).ainvoke(user("look"), config)
    assert out["messages"][-1].content == "seen"
    assert image_blocks(model.requests[1].messages[-1])


def test_the_image_note_is_not_a_user_turn_for_loop_detection():
    call = {"name": "bash", "args": {"command": "ls"}, "id": "c", "type": "tool_call"}
    turn = [HumanMessage("go")]
    for i in range(3):
        turn += [
            AIMessage("", tool_calls=[{**call, "id": f"c{i}"}]),
            ToolMessage("ok", tool_call_id=f"c{i}"),
        ]
    note = image_message([], [], max_images=4, max_bytes=1)
    assert repeats([*turn, note])[0] == 3


async def test_anthropic_gets_a_base64_image_source(tmp_path: Path):
    image = png(2)
    config, tools = setup(tmp_path, {"dog.png": image}, vision=True)
    entry = {"name": "claude", "provider": "anthropic", "model": "claude-test",
             "api_key": "sk-ant-test", "supports_vision": True}  # fmt: skip
    with FakeAnthropicServer() as fake_claude:
        fake_claude.queue(
            AnthropicReply.tool("view_image", {"path": f"{UPLOADS}/dog.png"}, id="toolu_img"),
            AnthropicReply(text="A dog, probably."),
        )
        entry["base_url"] = fake_claude.base_url
        factory = ModelFactory(AppConfig.model_validate({"models": [entry]}), env={})
        graph = make_agent(tmp_path, factory.create("claude"), tools, vision=True)
        out = await graph.ainvoke(user("what is in dog.png?"), config)
        assert out["messages"][-1].text == "A dog, probably."
        last = fake_claude.requests[1].body["messages"][-1]
    assert last["role"] == "user"
    kinds = [b["type"] for b in last["content"]]
    assert kinds[0] == "tool_result" and kinds[-1] == "image"  # the result, then the image
    assert last["content"][-1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(image).decode(),
    }
