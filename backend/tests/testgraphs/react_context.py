"""Graphs shaped like typical user graphs that read a run context (graph-contract tests).

- ``greeter``: a ``StateGraph`` with a ``context_schema`` dataclass whose node reads
  ``runtime.context`` (LangGraph fills the defaults when the run names no context).
- ``agent``: a ReAct agent (``create_agent``) with a ``context_schema`` and a tool that reads
  ``ToolRuntime.context``, driven by the offline scripted chat model.
- ``make_agent``: a factory taking ``config: RunnableConfig`` and
  ``runtime: ServerRuntime[AgentContext]`` that builds the agent from the run's context; its
  final answer says what the factory was given, so a test can see it over HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph_sdk.runtime import ServerRuntime
from typing_extensions import TypedDict

from pronghorn.models.scripted import ScriptedChatModel


@dataclass
class Greeting:
    greeting: str = "hello"
    name: str = "world"


class GreeterState(TypedDict, total=False):
    messages: Annotated[list, add_messages]


async def greet(state: GreeterState, runtime: Runtime[Greeting]) -> dict[str, Any]:
    ctx = runtime.context
    return {"messages": [AIMessage(content=f"{ctx.greeting}, {ctx.name}")]}


_greeter = StateGraph(GreeterState, context_schema=Greeting)
_greeter.add_node("greet", greet)
_greeter.add_edge(START, "greet")
_greeter.add_edge("greet", END)
greeter = _greeter.compile()


@dataclass
class AgentContext:
    user_name: str = "friend"
    tone: str = "plain"


@tool
def whoami(runtime: ToolRuntime[AgentContext]) -> str:
    """Name the user this conversation is with."""
    return f"user={runtime.context.user_name}"


def _model(final_text: str) -> ScriptedChatModel:
    """Each user turn: call `whoami`, then answer ``final_text``."""
    steps = [{"tool_calls": [{"name": "whoami", "args": {}}]}, {"text": final_text}]
    return ScriptedChatModel.model_validate({"rules": [{"steps": steps}]})  # steps as JSON


agent = create_agent(
    _model("done"), tools=[whoami], context_schema=AgentContext, name="context_agent"
)


def make_agent(config: RunnableConfig, runtime: ServerRuntime[AgentContext]) -> Any:
    """Built per access: for a run, from its context; otherwise the same topology."""
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if ert := runtime.execution_runtime:
        ctx: AgentContext = ert.context
        text = (
            f"access={runtime.access_context} tone={ctx.tone} user_name={ctx.user_name} "
            f"user={runtime.user} thread={thread_id} store={runtime.store is not None}"
        )
    else:
        text = f"access={runtime.access_context}"
    return create_agent(
        _model(text),
        tools=[whoami],
        context_schema=AgentContext,
        system_prompt="Answer briefly.",
        name="context_agent",
    )


def make_agent_plain(config: dict[str, Any], runtime: ServerRuntime[AgentContext]) -> Any:
    """The factory shape of a peer project's examples: the config annotated as a plain
    dict (the reference hands it the config whatever its annotation)."""
    ert = runtime.execution_runtime
    tone = ert.context.tone if ert else "-"
    graph_id = (config.get("configurable") or {}).get("graph_id")
    return create_agent(
        _model(f"graph={graph_id} tone={tone}"),
        tools=[whoami],
        context_schema=AgentContext,
        name="context_agent",
    )
