from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.middlewares.dangling_tool_calls import INTERRUPTED, repair_tool_calls


def _ai(*ids: str, name: str = "bash") -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": {}, "id": i, "type": "tool_call"} for i in ids],
    )


def test_valid_transcript_is_unchanged():
    msgs = [HumanMessage("hi"), _ai("a"), ToolMessage("ok", tool_call_id="a"), AIMessage("done")]
    assert repair_tool_calls(msgs) is msgs


def test_missing_result_gets_synthetic_error_and_orphans_are_dropped():
    msgs = [
        HumanMessage("hi"),
        _ai("a", "b"),
        ToolMessage("ok a", tool_call_id="a"),
        ToolMessage("stray", tool_call_id="zzz"),
        HumanMessage("again"),
    ]
    out = repair_tool_calls(msgs)
    assert [type(m).__name__ for m in out] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert out[2].content == "ok a"
    interrupted = out[3]
    assert isinstance(interrupted, ToolMessage)
    assert interrupted.tool_call_id == "b" and interrupted.content == INTERRUPTED
    assert interrupted.status == "error"


def test_duplicate_ids_each_consume_their_own_result():
    msgs = [
        _ai("x"),
        ToolMessage("first", tool_call_id="x"),
        _ai("x"),
        ToolMessage("second", tool_call_id="x"),
        _ai("x"),
    ]
    out = repair_tool_calls(msgs)
    ids = [m.tool_calls[0]["id"] for m in out if isinstance(m, AIMessage)]
    assert len(set(ids)) == 3  # renamed so strict providers accept them
    results = [m for m in out if isinstance(m, ToolMessage)]
    assert [r.content for r in results] == ["first", "second", INTERRUPTED]
    assert [r.tool_call_id for r in results] == ids


def test_result_moved_right_after_its_call():
    msgs = [_ai("a"), HumanMessage("interjection"), ToolMessage("late", tool_call_id="a")]
    out = repair_tool_calls(msgs)
    assert isinstance(out[1], ToolMessage) and out[1].content == "late"
    assert isinstance(out[2], HumanMessage)


def test_invalid_tool_call_gets_an_error_result():
    bad = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "write_file",
                "args": "{oops",
                "id": "w1",
                "error": "bad json",
                "type": "invalid_tool_call",
            }
        ],
    )
    out = repair_tool_calls([HumanMessage("x"), bad])
    assert isinstance(out[-1], ToolMessage) and "invalid" in out[-1].content


async def test_cancelled_run_leaves_no_dangling_call_for_the_model(tmp_path):
    """A thread whose last AI tool call never got a result (a cancelled run)."""
    model = scripted([{"text": "first"}, {"text": "unused"}, {"text": "recovered"}])
    graph = make_agent(tmp_path, model)
    cfg = thread_config()
    await graph.ainvoke(user("start"), cfg)
    await graph.aupdate_state(cfg, {"messages": [_ai("cut-1")]})
    out = await graph.ainvoke(user("continue"), cfg)
    assert out["messages"][-1].content == "recovered"
    seen = model.requests[-1].messages
    i = next(i for i, m in enumerate(seen) if isinstance(m, AIMessage) and m.tool_calls)
    answer = seen[i + 1]
    assert isinstance(answer, ToolMessage) and answer.tool_call_id == "cut-1"
    assert answer.content == INTERRUPTED
