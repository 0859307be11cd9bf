"""Graphs that answer with the run context they were given, one per kind of
``context_schema`` (dataclass, TypedDict, pydantic) and one without a schema, for the
context-filtering tests (tests/api/test_graph_contract.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict


class EchoState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]


@dataclass
class DataCtx:
    tone: str = "plain"
    user_name: str = "friend"


class DictCtx(TypedDict, total=False):
    tone: str
    user_name: str


class ModelCtx(BaseModel):
    tone: str = "plain"
    user_name: str = "friend"


def _as_dict(ctx: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(ctx) and not isinstance(ctx, type):
        return dataclasses.asdict(ctx)
    if isinstance(ctx, BaseModel):
        return ctx.model_dump()
    return dict(cast("Mapping[str, Any] | None", ctx) or {})  # what is left: a mapping or None


async def echo(state: EchoState, runtime: Runtime[Any]) -> dict[str, Any]:
    text = json.dumps(_as_dict(runtime.context), sort_keys=True)
    return {"messages": [AIMessage(content=text)]}


def _graph(schema: Any) -> Any:
    builder = StateGraph(EchoState, context_schema=schema)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    builder.add_edge("echo", END)
    return builder.compile()


dataclass_ctx = _graph(DataCtx)
typeddict_ctx = _graph(DictCtx)
pydantic_ctx = _graph(ModelCtx)
no_schema = _graph(None)
