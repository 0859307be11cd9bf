"""An LLM-free two-step graph that says where and when it ran, for scale-out tests.

Input: ``{"log": path, "hold_s": s, "gate": path}``. Each node appends a JSON line
``{"node", "run", "pid", "phase": "start"|"end", "t"}`` to ``log``. ``one`` holds for
``hold_s`` (the run's own work); ``two`` then waits until the ``gate`` file exists (the test
creates it). The state's ``steps`` lists the nodes that finished and ``pid`` who ran ``two``.
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
import time
from typing import Annotated, Any

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from testgraphs.gate import wait_for_gate


class State(TypedDict, total=False):
    log: str
    hold_s: float
    gate: str
    steps: Annotated[list[str], operator.add]
    pid: int


def _record(state: State, node: str, phase: str) -> None:
    run_id = get_config()["configurable"].get("run_id")
    line = {"node": node, "run": run_id, "pid": os.getpid(), "phase": phase, "t": time.time()}
    with open(state["log"], "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


async def one(state: State) -> dict[str, Any]:
    await asyncio.to_thread(_record, state, "one", "start")
    if state.get("hold_s"):
        await asyncio.sleep(float(state["hold_s"]))
    await asyncio.to_thread(_record, state, "one", "end")
    return {"steps": ["one"]}


async def two(state: State) -> dict[str, Any]:
    await asyncio.to_thread(_record, state, "two", "start")
    if state.get("gate"):
        await wait_for_gate(state["gate"])
    await asyncio.to_thread(_record, state, "two", "end")
    return {"steps": ["two"], "pid": os.getpid()}


builder = StateGraph(State)
builder.add_node("one", one)
builder.add_node("two", two)
builder.add_edge(START, "one")
builder.add_edge("one", "two")
builder.add_edge("two", END)
graph = builder.compile()
