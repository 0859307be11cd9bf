"""Memory in the lead agent: injection into the system prompt within the budget
(corrections first), the after-run update, the summarization flush, and tool mode — a real
``create_agent`` graph with scripted models."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.helpers import scripted, user
from memory.kit import ALICE, answer, service
from pronghorn.agent.builder import AgentParts, build_agent
from pronghorn.agent.options import AgentOptions
from pronghorn.agent.tools.memory import memory_tools
from pronghorn.config.schema.app import AgentConfig
from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory.context import CHARS_PER_TOKEN
from pronghorn.memory.records import MemoryScope
from pronghorn.memory.service import MemoryService


def agent(
    tmp_path: Path,
    model: Any,
    svc: MemoryService,
    *,
    options: AgentOptions | None = None,
    tools: list[Any] | None = None,
    **memory_cfg: Any,
) -> Any:
    parts = AgentParts(
        model=model,
        model_name="scripted",
        tools=tools or [],
        data_dir=tmp_path,
        agent_config=AgentConfig(summarization_trigger_tokens=memory_cfg.pop("trigger", 60000)),
        memory=svc,
        memory_config=MemoryConfig(**memory_cfg),
    )
    graph = build_agent(parts, options or AgentOptions())
    return graph.copy(update={"checkpointer": InMemorySaver()})


def config(user_id: str = "alice", thread_id: str | None = None) -> dict[str, Any]:
    return {
        "configurable": {
            "thread_id": thread_id or str(uuid.uuid4()),
            "user_id": "folder",
            "langgraph_auth_user_id": user_id,
        }
    }


def system_text(model: Any, i: int = -1) -> str:
    first = model.requests[i].messages[0]
    return first.content if first.type == "system" else ""


async def test_facts_and_summaries_reach_the_next_threads_prompt(tmp_path: Path) -> None:
    steps = [
        answer(
            summaries={"current_focus": "Migrating the billing service to Rust."},
            new_facts=[{"content": "Prefers answers in British English", "category": "preference"}],
        )
    ]
    async with service(steps) as (svc, mem_model):
        model = scripted([{"text": "Noted."}, {"text": "Colour it is."}], cursor="calls")
        graph = agent(tmp_path, model, svc)
        await graph.ainvoke(user("Please use British English from now on."), config())
        await svc.wait_idle()
        # what the update model saw: the run's user input and final answer
        seen = mem_model.requests[0].last_human_text
        assert "user: Please use British English" in seen and "assistant: Noted." in seen
        assert "<memory>" not in system_text(model, 0)  # nothing remembered yet
        await graph.ainvoke(user("What colour is the sky?"), config())  # a new thread
        prompt = system_text(model)
    assert "<memory>" in prompt
    assert "- [preference] Prefers answers in British English" in prompt
    assert "Current focus: Migrating the billing service to Rust." in prompt


async def test_injection_respects_the_budget_and_puts_corrections_first(tmp_path: Path) -> None:
    async with service([]) as (svc, _):
        for i in range(60):
            await svc.add_fact(ALICE, f"Ordinary fact number {i} about gardening and plants")
        await svc.add_fact(ALICE, "The user is Dr. Smith, not Mr. Smith", category="correction")
        await svc.add_fact(ALICE, "Keeps a pet python named Monty", category="identity")
        model = scripted([{"text": "ok"}])
        graph = agent(tmp_path, model, svc, max_injection_tokens=200)
        await graph.ainvoke(user("tell me about my python"), config())
        prompt = system_text(model)
    block = prompt[prompt.index("<memory>") : prompt.index("</memory>") + len("</memory>")]
    assert len(block) <= 200 * CHARS_PER_TOKEN
    lines = block.splitlines()
    assert lines.index("- The user is Dr. Smith, not Mr. Smith") < lines.index("Facts:")
    # the fact sharing words with the question comes first among the others
    assert lines[lines.index("Facts:") + 1] == "- [identity] Keeps a pet python named Monty"
    assert sum("Ordinary fact" in ln for ln in lines) < 60


async def test_each_user_and_agent_sees_only_their_memory(tmp_path: Path) -> None:
    async with service([]) as (svc, _):
        await svc.add_fact(ALICE, "Alice's secret project is Falcon")
        await svc.add_fact(MemoryScope("alice", "writer"), "Writes in a terse style")
        model = scripted([{"text": "ok"}])
        await agent(tmp_path, model, svc).ainvoke(user("hi"), config("bob"))
        bob = system_text(model)
        writer = AgentOptions(agent_name="writer")
        await agent(tmp_path, model, svc, options=writer).ainvoke(user("hi"), config("alice"))
        alice_writer = system_text(model)
        no_user = {"configurable": {"thread_id": "t", "user_id": "folder"}}
        await agent(tmp_path, model, svc).ainvoke(user("hi"), no_user)
        anonymous = system_text(model)
    assert "Falcon" not in bob and "<memory>" not in bob
    assert "terse style" in alice_writer and "Falcon" not in alice_writer
    assert "<memory>" not in anonymous


async def test_no_update_when_the_run_ends_without_an_answer(tmp_path: Path) -> None:
    async with service([]) as (svc, mem_model):
        model = scripted([{"raise": "server_error", "times": 10}])
        graph = agent(tmp_path, model, svc)
        await graph.ainvoke(user("hello?"), config())
        await svc.wait_idle()
    assert mem_model.requests == []


async def test_summarization_flushes_what_it_compacts_into_the_queue(tmp_path: Path) -> None:
    async with service([answer()] * 5, debounce_s=3600) as (svc, mem_model):
        model = scripted([{"text": "short reply"}] * 10, cursor="calls")
        graph = agent(tmp_path, model, svc, trigger=1000)
        cfg = config()
        big = "word " * 1500  # ~1900 tokens: past the trigger on the next turn
        await graph.ainvoke(user(f"My hobby is sailing. {big}"), cfg)
        await graph.ainvoke(user("second turn"), cfg)
        assert svc.status("alice").queue_depth == 1
        await svc.flush()
        text = mem_model.requests[0].last_human_text
    assert "My hobby is sailing." in text and "second turn" in text


async def test_tool_mode_offers_tools_and_skips_the_passive_update(tmp_path: Path) -> None:
    async with service([]) as (svc, mem_model):
        tools = memory_tools(svc)
        steps = [
            {
                "tool_calls": [
                    {
                        "name": "memory_add",
                        "args": {"content": "Allergic to peanuts", "category": "constraint"},
                    }
                ]
            },
            {"tool_calls": [{"name": "memory_search", "args": {"query": "peanuts"}}]},
            {"text": "I will remember that."},
        ]
        model = scripted(steps)
        graph = agent(tmp_path, model, svc, tools=tools, mode="tool")
        out = await graph.ainvoke(user("I am allergic to peanuts"), config())
        await svc.wait_idle()
        doc = await svc.document(ALICE)
        fact = doc.facts[0]
        results = [m.content for m in out["messages"] if m.type == "tool"]
        assert results[0] == f"Remembered as {fact.id}."
        assert results[1] == f"{fact.id} [constraint] Allergic to peanuts"
        # update and delete by id; unknown ids are an error result, not a crash
        model2 = scripted(
            [
                {
                    "tool_calls": [
                        {
                            "name": "memory_update",
                            "args": {"fact_id": fact.id, "content": "Severely allergic to peanuts"},
                        }
                    ]
                },
                {"tool_calls": [{"name": "memory_delete", "args": {"fact_id": "fact_nope"}}]},
                {"tool_calls": [{"name": "memory_delete", "args": {"fact_id": fact.id}}]},
                {"text": "done"},
            ]
        )
        out2 = await agent(tmp_path, model2, svc, tools=tools, mode="tool").ainvoke(
            user("update it"), config()
        )
        tool_msgs = [m for m in out2["messages"] if m.type == "tool"]
        final = await svc.document(ALICE)
    assert tool_msgs[0].content.startswith(f"Updated {fact.id}: Severely")
    assert tool_msgs[1].status == "error" and "not found" in tool_msgs[1].content
    assert tool_msgs[2].content == f"Forgot {fact.id}."
    assert final.facts == ()
    assert mem_model.requests == []  # tool mode: no passive update
    assert {"memory_add", "memory_search"} <= set(model.requests[0].tool_names)
