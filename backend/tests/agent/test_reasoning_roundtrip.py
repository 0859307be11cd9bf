"""A DeepSeek-style reasoning model in the agent loop: ``reasoning_content`` streamed by the
provider is kept in the thread state and sent back with the tool-calling turn."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, thread_config, user
from fakes.openai_server import FakeOpenAIServer, Reply
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"{query} is 42"


async def test_reasoning_survives_the_tool_loop(tmp_path: Path, fake_openai: FakeOpenAIServer):
    entry = {
        "name": "ds",
        "provider": "openai",
        "model": "deepseek-chat",
        "base_url": fake_openai.base_url,
        "api_key": "sk-test",
    }
    model = ModelFactory(AppConfig.model_validate({"models": [entry]}), env={}).create("ds")
    fake_openai.queue(
        Reply.tool_call("lookup", {"query": "x"}, id="call_1", reasoning="I should look x up."),
        Reply.text("x is 42.", reasoning="The tool answered."),
    )
    graph = make_agent(tmp_path, model, [lookup])
    out = await graph.ainvoke(user("what is x?"), thread_config())

    first, last = (m for m in out["messages"] if isinstance(m, AIMessage))
    assert first.additional_kwargs["reasoning_content"] == "I should look x up."
    assert last.additional_kwargs["reasoning_content"] == "The tool answered."
    assert last.content == "x is 42."
    second = fake_openai.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["reasoning_content"] == "I should look x up."
    assert second[2]["tool_calls"][0]["id"] == "call_1"
