"""The memory service: extraction, contradiction, refusals, the debounced bounded queue,
and the drain at shutdown (a real LangGraph store, a scripted model)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from langchain_core.messages import AIMessage
from langgraph.store.memory import InMemoryStore

from memory.kit import ALICE, Holder, answer, exchange, service, set_script
from pronghorn.config.schema.app import AppConfig
from pronghorn.memory.records import Fact, MemoryScope
from pronghorn.memory.service import MemoryService
from pronghorn.memory.store import MemoryRepository
from pronghorn.memory.updater import Turn
from pronghorn.models.factory import ModelFactory


async def test_extracts_facts_and_summaries_from_a_conversation() -> None:
    steps = [
        answer(
            summaries={"work_context": "Backend engineer at Acme, working on billing."},
            new_facts=[
                {
                    "content": "Prefers Rust for services",
                    "category": "preference",
                    "confidence": 0.9,
                },
                {"content": "Works at Acme", "category": "identity", "confidence": 0.95},
                {"content": "Maybe likes jazz", "category": "preference", "confidence": 0.3},
                {"content": "Something", "category": "made-up-category", "confidence": 0.8},
            ],
        )
    ]
    async with service(steps) as (svc, model):
        turns = exchange("I work at Acme on billing; I prefer Rust.", "Noted!")
        assert svc.enqueue(ALICE, turns, thread_id="t1", model_name="m")
        await svc.wait_idle()
        doc = await svc.document(ALICE)
        prompt = model.requests[0].last_human_text
    assert "I work at Acme on billing" in prompt and "assistant: Noted!" in prompt
    by_content = {f.content: f for f in doc.facts}
    # below the confidence threshold: not stored; unknown category: "other"
    assert set(by_content) == {"Prefers Rust for services", "Works at Acme", "Something"}
    assert by_content["Something"].category == "other"
    assert by_content["Works at Acme"].category == "identity"
    assert all(f.source_thread_id == "t1" for f in doc.facts)
    assert doc.summaries.work_context.summary.startswith("Backend engineer")
    assert doc.summaries.personal_context.summary == ""
    assert svc.status("alice").last_update_at is not None
    assert svc.status("alice").last_error is None


async def test_contradiction_updates_and_retires_facts() -> None:
    async with service([]) as (svc, model):
        tea = await svc.add_fact(ALICE, "Drinks tea every morning", category="preference")
        city = await svc.add_fact(ALICE, "Lives in Berlin", category="identity")
        keep = await svc.add_fact(ALICE, "Has a dog named Rex", category="identity")
        set_script(
            model,
            [
                answer(
                    updated_facts=[
                        {"id": city.id, "content": "Lives in Lisbon", "category": "correction"}
                    ],
                    retired_facts=[tea.id, "fact_does_not_exist"],
                    new_facts=[{"content": "Drinks coffee now", "category": "preference"}],
                )
            ],
        )
        svc.enqueue(
            ALICE,
            exchange("I moved to Lisbon and switched to coffee.", "OK"),
            thread_id="t2",
            model_name=None,
        )
        await svc.wait_idle()
        doc = await svc.document(ALICE)
        # the model saw the facts it may update, with their ids
        assert city.id in model.requests[0].last_human_text
    contents = {f.id: f.content for f in doc.facts}
    assert tea.id not in contents
    assert contents[city.id] == "Lives in Lisbon"
    assert doc.fact(city.id) is not None and doc.fact(city.id).category == "correction"  # type: ignore[union-attr]
    assert contents[keep.id] == "Has a dog named Rex"
    assert "Drinks coffee now" in contents.values()
    assert doc.revision == 4


async def test_an_update_retiring_most_facts_is_refused_whole() -> None:
    async with service([]) as (svc, model):
        facts = [await svc.add_fact(ALICE, f"Fact number {i}") for i in range(5)]
        set_script(
            model,
            [
                answer(
                    retired_facts=[f.id for f in facts[:3]],
                    new_facts=[{"content": "A brand new fact", "category": "context"}],
                )
            ],
        )
        svc.enqueue(ALICE, exchange("forget it all", "ok"), thread_id="t", model_name=None)
        await svc.wait_idle()
        doc = await svc.document(ALICE)
        status = svc.status("alice")
    assert [f.id for f in doc.facts] == [f.id for f in facts]
    assert status.refused == 1 and "retire 3 of 5" in (status.last_error or "")


async def test_unparseable_answers_and_model_errors_are_recorded_not_raised() -> None:
    steps = [
        {"text": "I cannot produce JSON today."},
        {"raise": "rate_limit", "times": 1},
        answer(new_facts=[{"content": "Survived the errors", "category": "other"}]),
    ]
    async with service(steps) as (svc, _model):
        svc.enqueue(ALICE, exchange("a", "b", 1), thread_id="t1", model_name=None)
        await svc.wait_idle()
        assert "not a JSON object" in (svc.status("alice").last_error or "")
        svc.enqueue(ALICE, exchange("c", "d", 2), thread_id="t2", model_name=None)
        await svc.wait_idle()
        svc.enqueue(ALICE, exchange("e", "f", 3), thread_id="t3", model_name=None)
        await svc.wait_idle()
        doc = await svc.document(ALICE)
    assert [f.content for f in doc.facts] == ["Survived the errors"]
    # other users' errors are not shown to bob
    assert svc.status("bob").last_error is None


async def test_runs_of_one_thread_coalesce_into_one_update() -> None:
    steps = [answer(new_facts=[{"content": "Plays chess", "category": "preference"}])]
    async with service(steps, debounce_s=3600) as (svc, model):
        svc.enqueue(
            ALICE, exchange("first message", "first answer", 1), thread_id="t", model_name=None
        )
        svc.enqueue(
            ALICE, exchange("second message", "second answer", 2), thread_id="t", model_name=None
        )
        svc.enqueue(
            ALICE, exchange("first message", "first answer", 1), thread_id="t", model_name=None
        )
        assert svc.status("alice").queue_depth == 1
        assert svc.status("alice").queued_for_user == 1 and svc.status("bob").queued_for_user == 0
        await svc.flush()
        assert len(model.requests) == 1
        prompt = model.requests[0].last_human_text
    assert prompt.count("first message") == 1 and "second answer" in prompt


async def test_the_queue_is_bounded_and_drops_the_oldest() -> None:
    steps = [answer()] * 5
    async with service(steps, debounce_s=3600, queue_max_depth=2) as (svc, model):
        for i in range(4):
            svc.enqueue(ALICE, exchange(f"msg {i}", "ok", i), thread_id=f"t{i}", model_name=None)
        status = svc.status("alice")
        assert status.queue_depth == 2 and status.dropped == 2
        await svc.flush()
        prompts = [r.last_human_text for r in model.requests]
    assert len(prompts) == 2 and "msg 2" in prompts[0] and "msg 3" in prompts[1]


async def test_stop_drains_the_queue_without_waiting_for_the_debounce() -> None:
    steps = [answer(new_facts=[{"content": f"Fact {i}", "category": "other"}]) for i in range(3)]
    async with service(steps, debounce_s=3600) as (svc, _model):
        for i, user in enumerate(("alice", "bob", "carol")):
            svc.enqueue(
                MemoryScope(user), exchange("hi", "hello", i), thread_id="t", model_name=None
            )
        assert svc.status("alice").queue_depth == 3
        await svc.stop()
        assert svc.status("alice").queue_depth == 0
        facts = [(await svc.document(MemoryScope(u))).facts for u in ("alice", "bob", "carol")]
    assert [len(f) for f in facts] == [1, 1, 1]
    # after stop nothing more is queued (and enqueue says so)
    assert not svc.enqueue(ALICE, exchange("late", "late"), thread_id="t", model_name=None)


async def test_disabled_memory_queues_nothing() -> None:
    async with service([], enabled=False) as (svc, _model):
        assert not svc.enqueue(ALICE, exchange("a", "b"), thread_id="t", model_name=None)
        assert svc.status("alice").enabled is False


async def test_agent_scopes_are_separate() -> None:
    async with service([]) as (svc, _model):
        await svc.add_fact(ALICE, "Default agent fact")
        await svc.add_fact(MemoryScope("alice", "researcher"), "Researcher fact")
        plain = await svc.document(ALICE)
        agent = await svc.document(MemoryScope("alice", "researcher"))
    assert [f.content for f in plain.facts] == ["Default agent fact"]
    assert [f.content for f in agent.facts] == ["Researcher fact"]


def test_fact_json_round_trip() -> None:
    fact = Fact(id="fact_1", content="x", category="goal", confidence=0.5, source_thread_id="t")
    assert Fact.from_json(fact.to_json()) == fact


class GateModel:
    """An update model that holds every call until released, recording what overlaps."""

    def __init__(self, want_active: int) -> None:
        self.active: list[str] = []
        self.max_active = 0
        self.overlaps: list[list[str]] = []
        self.release = asyncio.Event()
        self.reached = asyncio.Event()
        self.want_active = want_active

    async def ainvoke(self, messages: Any, config: Any = None) -> AIMessage:
        user = messages[0].content.split("user: ")[1].split()[0]
        self.active.append(user)
        self.overlaps.append(list(self.active))
        self.max_active = max(self.max_active, len(self.active))
        if len(self.active) >= self.want_active:
            self.reached.set()
        await self.release.wait()
        self.active.remove(user)
        return AIMessage(content="{}")


async def test_updates_run_concurrently_but_never_twice_for_one_scope() -> None:
    gate = GateModel(want_active=2)
    svc = MemoryService(
        MemoryRepository(InMemoryStore()),
        settings=Holder(max_concurrent_updates=2),
        model_for=lambda _name: cast("Any", gate),
    )
    await svc.start()
    try:
        for user, thread in (("alice", "t1"), ("alice", "t2"), ("bob", "t1"), ("carol", "t1")):
            turns = [Turn("user", f"{user} says hi", None)]
            svc.enqueue(MemoryScope(user), turns, thread_id=thread, model_name=None)
        await gate.reached.wait()
        assert svc.status("alice").in_flight == 2
        assert sorted(gate.active) == ["alice", "bob"]  # alice's second waits for her first
        gate.release.set()
        await svc.wait_idle()
    finally:
        await svc.stop()
    assert gate.max_active == 2
    assert all(len(set(o)) == len(o) for o in gate.overlaps)  # never one user twice
    assert svc.processed == 4


async def test_clearing_drops_an_update_already_in_flight() -> None:
    gate = GateModel(want_active=1)
    svc = MemoryService(
        MemoryRepository(InMemoryStore()),
        settings=Holder(),
        model_for=lambda _name: cast("Any", gate),
    )
    await svc.start()
    try:
        await svc.add_fact(ALICE, "Old fact")
        svc.enqueue(ALICE, [Turn("user", "alice says hi", None)], thread_id="t", model_name=None)
        await gate.reached.wait()
        await svc.clear(ALICE)
        gate.release.set()
        await svc.wait_idle()
        doc = await svc.document(ALICE)
    finally:
        await svc.stop()
    assert doc.facts == () and doc.revision == 0 and svc.processed == 0


def test_an_unknown_memory_model_is_a_reported_config_problem() -> None:
    config = AppConfig.model_validate(
        {"models": [{"name": "s", "provider": "scripted"}], "memory": {"model": "nope"}}
    )
    assert "memory.model: unknown model 'nope'" in ModelFactory(config).problems()
    ok = AppConfig.model_validate(
        {"models": [{"name": "s", "provider": "scripted"}], "memory": {"model": "s"}}
    )
    assert not any("memory.model" in p for p in ModelFactory(ok).problems())
