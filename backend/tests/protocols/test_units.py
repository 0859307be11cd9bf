"""The pure parts of the protocol adapters: tool names, exposure lists, answers in outputs."""

from __future__ import annotations

from typing import Any

from pronghorn.auth.principal import Principal
from pronghorn.gateway.protocols.mcp_tools import tool_names
from pronghorn.runtime.access import Access
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.services import agent_output as output
from pronghorn.runtime.services.agent_calls import Callee, exposed, takes_messages, thread_for


def _assistant(name: str, aid: str, graph: str = "g") -> dict[str, Any]:
    return {"assistant_id": aid, "graph_id": graph, "name": name, "metadata": {}}


def test_tool_names_are_valid_and_unique():
    callees = [
        Callee(_assistant("My helper!", "11111111-aaaa"), None),
        Callee(_assistant("My helper?", "22222222-bbbb"), None),
        Callee(_assistant("////", "33333333-cccc"), None),
    ]
    names = list(tool_names(callees))
    assert names == ["My_helper", "My_helper_22222222", "assistant"]


def test_exposure_by_id_graph_name_or_star():
    a = _assistant("writer", "id-1", "lead_agent")
    assert exposed(a, ["*"]) and exposed(a, ["id-1"]) and exposed(a, ["lead_agent"])
    assert exposed(a, ["writer"]) and not exposed(a, ["other"]) and not exposed(a, [])


def test_takes_messages_reads_the_input_schema():
    assert takes_messages({"properties": {"messages": {}}})
    assert not takes_messages({"properties": {"n": {}}}) and not takes_messages(None)


def test_conversation_threads_are_per_principal():
    alice = Access(Principal(identity="alice", display_name="Alice"))
    bob = Access(Principal(identity="bob", display_name="Bob"))
    assert thread_for(alice, "c") == thread_for(alice, "c") != thread_for(bob, "c")


def test_answers_tokens_and_interrupts():
    values = {
        "messages": [
            {"type": "human", "content": "q"},
            {
                "type": "ai",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"type": "tool", "content": "ignored"},
        ]
    }
    assert output.last_answer(values) == "ab"
    assert output.last_answer({"messages": []}) == "" and output.last_answer(None) == ""
    chunk = Event(1, "messages", b'[{"type":"AIMessageChunk","content":"hi"},{}]')
    tool = Event(2, "messages", b'[{"type":"tool","content":"x"},{}]')
    sub = Event(3, "messages|sub:1", b'[{"type":"AIMessageChunk","content":"no"},{}]')
    assert output.token_of(chunk) == "hi"
    assert output.token_of(tool) is None and output.token_of(sub) is None
    assert output.interrupts_of({"__interrupt__": [{"value": "ask?", "id": "i"}]}) == ["ask?"]
    assert output.error_of({"__error__": {"error": "E", "message": "m"}}) == "E: m"
    assert output.error_of({"messages": []}) is None
