"""The PostgreSQL saver serializes small values on the event loop and large ones (or ones
it cannot size cheaply) in a worker thread, as LangGraph's saver does for all: the thread
hop costs more than a small value's serialization, and a large one must not block the loop.
Whichever way, the rows are the same (test_checkpoint_statements.py compares them with the
stock saver's)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint

from pronghorn.runtime.checkpoints.checkpoint import Persistence
from pronghorn.runtime.checkpoints.small_values import MAX_BYTES, MAX_PARTS, small

POSTGRES = pytest.mark.parametrize("db", ["postgres"], indirect=True)


class _Recording:
    """The saver's serializer, noting the thread of every `dumps_typed`."""

    def __init__(self, serde: Any) -> None:
        self.serde = serde
        self.threads: list[int] = []

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        self.threads.append(threading.get_ident())
        return self.serde.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.serde.loads_typed(data)


async def _put(persistence: Persistence, value: object) -> list[int]:
    saver: Any = persistence.checkpointer
    recording = _Recording(saver.serde)
    saver.serde = recording
    cfg: RunnableConfig = {"configurable": {"thread_id": str(uuid.uuid4()), "checkpoint_ns": ""}}
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": value}
    cp["channel_versions"] = {"messages": "1"}
    stored = await saver.aput(cfg, cp, {"source": "loop", "step": 0}, {"messages": "1"})
    await saver.aput_writes(stored, [("messages", value)], "task-1")
    saver.serde = recording.serde
    got = await saver.aget_tuple(stored)
    assert got is not None and got.checkpoint["channel_values"]["messages"] == value
    assert [w[2] for w in got.pending_writes] == [value]
    return recording.threads


@POSTGRES
async def test_a_small_value_is_serialized_on_the_loop(persistence: Persistence) -> None:
    threads = await _put(persistence, [HumanMessage("hi", id="1"), AIMessage("echo: hi", id="2")])
    assert threads and set(threads) == {threading.get_ident()}


@POSTGRES
async def test_a_large_value_is_serialized_in_a_worker_thread(persistence: Persistence) -> None:
    threads = await _put(persistence, [HumanMessage("x" * (MAX_BYTES + 1), id="1")])
    assert threads and threading.get_ident() not in threads


def test_small_counts_parts_and_bytes_and_refuses_what_it_does_not_know() -> None:
    assert small([[HumanMessage("hi")], {"a": 1, "b": [True, None, 2.5]}, "text", b"raw"])
    assert not small(["x" * (MAX_BYTES + 1)])
    assert not small([["x"] * (MAX_PARTS + 1)])
    assert not small([{str(i): i for i in range(MAX_PARTS + 1)}])
    assert not small([[[[i] for i in range(100)] for _ in range(3)]])  # parts, nested
    assert not small([object()])  # unknown: its size cannot be told cheaply
    assert not small([{1, 2}])  # a set: not looked into
