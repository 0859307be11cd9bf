from __future__ import annotations

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.sandbox.paths import ThreadPaths

BIG = "".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(600))  # ~30k chars


@tool
def dump() -> str:
    """Return a lot of text."""
    return BIG


@tool
def read_file(path: str) -> str:
    """Pretend file reader returning a large text."""
    return BIG[: int(path)]


async def test_big_result_is_saved_and_replaced(tmp_path):
    model = scripted(
        [{"tool_calls": [{"name": "dump", "args": {}, "id": "call_big1"}]}, {"text": "ok"}]
    )
    graph = make_agent(tmp_path, model, [dump], tool_output_soft_chars=12000)
    cfg = thread_config()
    out = await graph.ainvoke(user("dump it"), cfg)
    msg = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    pointer = "/mnt/user-data/outputs/.tool-results/call_big1.txt"
    assert isinstance(msg.content, str) and pointer in msg.content
    assert len(msg.content) < 5000
    assert msg.content.startswith("line 00000")
    assert msg.content.rstrip().endswith("x" * 40)
    paths = ThreadPaths.for_thread(tmp_path, "tester", cfg["configurable"]["thread_id"])
    saved = paths.outputs / ".tool-results" / "call_big1.txt"
    assert saved.read_text() == BIG


async def test_read_file_is_exempt_but_hard_capped(tmp_path):
    model = scripted(
        [
            {"tool_calls": [{"name": "read_file", "args": {"path": "20000"}}]},
            {"tool_calls": [{"name": "read_file", "args": {"path": "40000"}}]},
            {"text": "ok"},
        ]
    )
    graph = make_agent(
        tmp_path, model, [read_file], tool_output_soft_chars=12000, tool_output_hard_chars=25000
    )
    out = await graph.ainvoke(user("read"), thread_config())
    first, second = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert first.content == BIG[:20000]
    assert len(second.content) <= 25000 and "omitted" in second.content


async def test_without_a_thread_falls_back_to_truncation(tmp_path):
    from pronghorn.agent.middlewares.tool_output_budget import ToolOutputBudgetMiddleware

    mw = ToolOutputBudgetMiddleware(tmp_path, soft_chars=1000, hard_chars=3000)
    msg = ToolMessage(content="y" * 10000, tool_call_id="c", name="bash")
    out = mw.budget(msg, {"configurable": {}})
    assert len(out.content) <= 3000 and "omitted" in out.content
