from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.middlewares.summarization import choose_cut, estimate_tokens
from support.scripted import scripted_model

LONG = "word " * 1000  # ~1250 tokens


async def test_long_conversation_is_summarized_out_of_the_stream(tmp_path):
    model = scripted([], fallback={"text": "answer " + "z" * 400})
    summarizer = scripted_model(script=[], fallback={"text": "SUMMARY-TEXT of earlier turns"})
    graph = make_agent(
        tmp_path, model, internal_model=summarizer, summarization_trigger_tokens=3000
    )
    cfg = thread_config()
    for i in range(2):
        await graph.ainvoke(user(f"turn {i}: {LONG}"), cfg)

    def summary_calls():
        return [r for r in summarizer.requests if "Summarize" in r.last_human_text]

    assert not summary_calls()  # under the trigger
    streamed = []
    async for chunk, _meta in graph.astream(user(f"turn 2: {LONG}"), cfg, stream_mode="messages"):
        streamed.append(chunk)
    assert len(summary_calls()) == 1
    assert not any("SUMMARY" in str(c.content) for c in streamed)
    assert any("answer" in str(c.content) for c in streamed)  # the real answer did stream
    state = (await graph.aget_state(cfg)).values
    assert state["summary"]["text"] == "SUMMARY-TEXT of earlier turns"
    assert not any("SUMMARY" in str(m.content) for m in state["messages"])
    seen = model.requests[-1].messages
    assert "<conversation_summary>" in seen[1].content and "SUMMARY-TEXT" in seen[1].content
    assert estimate_tokens(seen[1:]) < 3000
    assert isinstance(seen[-1].content, str) and seen[-1].content.startswith("turn 2")


async def test_local_digest_without_a_summary_model(tmp_path):
    model = scripted([], fallback={"text": "ok"})
    graph = make_agent(tmp_path, model, summarization_trigger_tokens=1000)
    cfg = thread_config()
    for i in range(3):
        await graph.ainvoke(user(f"turn {i}: {LONG}"), cfg)
    state = (await graph.aget_state(cfg)).values
    assert "human: turn 0" in state["summary"]["text"]


def test_cut_never_starts_with_tool_results():
    from langchain_core.messages import ToolMessage

    msgs = [
        HumanMessage("a" * 4000),
        AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "1", "type": "tool_call"}]),
        ToolMessage("r" * 400, tool_call_id="1"),
        AIMessage("final"),
    ]
    cut = choose_cut(msgs, keep_tokens=150)
    assert not isinstance(msgs[cut], ToolMessage)
    assert cut >= 1
