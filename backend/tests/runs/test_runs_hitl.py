"""Human in the loop: interrupt() + Command(resume), interrupt_before/after, fork."""

from __future__ import annotations

from runs.runkit import human


async def test_interrupt_then_resume_with_command(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    parts = [
        p
        async for p in client.runs.stream(
            tid, "echo", input={**human("q"), "interrupt": True}, stream_mode=["updates", "values"]
        )
    ]
    updates = [p.data for p in parts if p.event == "updates"]
    assert "__interrupt__" in updates[-1]
    intr = updates[-1]["__interrupt__"][0]
    assert intr["value"] == {"question": "continue?", "turns": 0} and intr["id"]
    assert "__interrupt__" in parts[-1].data and parts[-1].event == "values"
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    ((_task_id, items),) = thread["interrupts"].items()
    assert items[0]["value"]["question"] == "continue?"
    state = await client.threads.get_state(tid)
    assert state["next"] == ["respond"]
    assert state["tasks"][0]["interrupts"][0]["value"]["question"] == "continue?"

    out = await client.runs.wait(tid, "echo", command={"resume": "yes please"})
    assert out["answer"] == "yes please"
    assert out["messages"][-1]["content"] == "echo: q"
    thread = await client.threads.get(tid)
    assert thread["status"] == "idle" and thread["interrupts"] == {}


async def test_wait_output_carries_interrupts(client):
    t = await client.threads.create()
    out = await client.runs.wait(t["thread_id"], "echo", input={**human("w"), "interrupt": True})
    assert out["__interrupt__"][0]["value"]["question"] == "continue?"


async def test_interrupt_before_and_continue_with_null_input(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    out = await client.runs.wait(tid, "echo", input=human("b4"), interrupt_before=["respond"])
    assert out["messages"][-1]["content"] == "b4"
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    assert (await client.threads.get_state(tid))["next"] == ["respond"]
    out = await client.runs.wait(tid, "echo", input=None)
    assert out["messages"][-1]["content"] == "echo: b4"
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_interrupt_after(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("af"), interrupt_after=["prepare"])
    assert (await client.threads.get_state(tid))["next"] == ["respond"]


async def test_fork_from_an_earlier_checkpoint(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("one"))
    after_first = await client.threads.get_state(tid)
    await client.runs.wait(tid, "echo", input=human("two"))
    assert (await client.threads.get_state(tid))["values"]["turns"] == 2
    out = await client.runs.wait(
        tid, "echo", input=human("fork"), checkpoint_id=after_first["checkpoint"]["checkpoint_id"]
    )
    assert out["turns"] == 2
    assert [m["content"] for m in out["messages"]] == ["one", "echo: one", "fork", "echo: fork"]


async def test_command_update_and_goto(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("base"))
    out = await client.runs.wait(tid, "echo", command={"update": {"turns": 10}, "goto": "respond"})
    assert out["turns"] == 11
