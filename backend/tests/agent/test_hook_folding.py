"""``fold_hooks``: every node hook still runs, in ``create_agent``'s order, with its state
writes applied through the reducers, but a turn is only ``TurnStart`` → ``model`` ⇄
``tools`` (one checkpoint per step)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, hook_config
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.middlewares.folding import fold_hooks
from pronghorn.agent.middlewares.loop_detection import strip_tool_calls
from pronghorn.agent.state import ThreadState


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Recorder(AgentMiddleware[ThreadState]):
    """Logs every hook it sees; ``before_agent`` records a file in ``uploaded_files``."""

    state_schema = ThreadState

    def __init__(self, tag: str, log: list[str]) -> None:
        super().__init__()
        self.tag = tag
        self.log = log

    @property
    def name(self) -> str:
        return f"Recorder{self.tag}"

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        seen = sorted(f["virtual_path"] for f in state.get("uploaded_files") or [])
        self.log.append(f"before_agent {self.tag} saw {seen}")
        return {"uploaded_files": [{"virtual_path": f"/{self.tag}", "name": self.tag}]}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:  # sync hook
        self.log.append(f"before_model {self.tag}")
        return None

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"wrap in {self.tag}")
        response = await handler(request)
        self.log.append(f"wrap out {self.tag}")
        return response

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        self.log.append(f"after_model {self.tag} {'calls' if last.tool_calls else 'text'}")
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append(f"after_agent {self.tag} {len(state['messages'])} messages")
        return None


CALL = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


async def test_hooks_run_in_create_agents_order_in_few_steps(tmp_path):
    log: list[str] = []
    model = scripted([CALL, {"text": "3"}])
    graph = make_agent(tmp_path, model, [add], middleware=[Recorder("A", log), Recorder("B", log)])
    nodes = set(graph.get_graph().nodes)
    assert nodes == {"__start__", "TurnStart.before_agent", "model", "tools", "__end__"}
    cfg = thread_config()
    out = await graph.ainvoke(user("add"), cfg)
    model_call = ["before_model A", "before_model B", "wrap in A", "wrap in B"]
    model_call += ["wrap out B", "wrap out A"]
    assert log == [
        "before_agent A saw []",
        "before_agent B saw ['/A']",  # a later hook sees the earlier one's write
        *model_call,
        "after_model B calls",
        "after_model A calls",
        *model_call,
        "after_model B text",
        "after_model A text",
        "after_agent B 4 messages",  # once, after the final answer, with it in the state
        "after_agent A 4 messages",
    ]
    assert sorted(f["virtual_path"] for f in out["uploaded_files"]) == ["/A", "/B"]
    history = [s async for s in graph.aget_state_history(cfg)]
    assert len(history) == 4 + 2  # input, __start__, TurnStart, model; tools, model


class StopTools(AgentMiddleware[ThreadState]):
    """An ``after_model`` guard that strips tool calls and writes a plain state key."""

    state_schema = ThreadState

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        return {"messages": [strip_tool_calls(last, "[stopped]")], "title": "guarded"}


class Final(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append(state["messages"][-1].content)
        return None


async def test_a_rewritten_message_replaces_the_models_and_routes_the_turn(tmp_path):
    log: list[str] = []
    model = scripted([CALL, {"text": "never"}])
    graph = make_agent(tmp_path, model, [add], middleware=[Final(log), StopTools()])
    cfg = thread_config()
    out = await graph.ainvoke(user("add"), cfg)
    assert [m.type for m in out["messages"]] == ["human", "ai"]  # the tool never ran
    assert out["messages"][-1].tool_calls == [] and "[stopped]" in out["messages"][-1].content
    assert out["title"] == "guarded"
    assert log == [out["messages"][-1].content]  # the run ended: after_agent saw the note
    assert len(model.requests) == 1


class Jumper(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return {"jump_to": "end"}


def test_a_hook_that_can_jump_is_refused():
    with pytest.raises(ValueError, match="can jump"):
        fold_hooks([Jumper()], has_tools=False)


class SyncHooks(AgentMiddleware[ThreadState]):
    """Sync hooks only: the sync path of the fold (``graph.invoke``)."""

    state_schema = ThreadState

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append("before_agent")
        return {"thread_data": {"seen": True}}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append(f"before_model {state['thread_data']}")
        return {"summary": {"text": "s", "upto_id": None}}

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append(f"after_model {state['summary']['text']}")
        return None

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.log.append("after_agent")
        return {"title": "sync"}


def test_sync_hooks_fold_too(tmp_path):
    log: list[str] = []
    model = scripted([CALL, {"text": "3"}])
    graph = make_agent(tmp_path, model, [add], middleware=[SyncHooks(log)])
    out = graph.invoke(user("add"), thread_config())
    assert log == [
        "before_agent",
        "before_model {'seen': True}",
        "after_model s",
        "before_model {'seen': True}",
        "after_model s",
        "after_agent",
    ]
    assert out["title"] == "sync" and out["summary"]["text"] == "s"
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
