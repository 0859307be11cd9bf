"""Which graph factory signatures load, and what each parameter gets: a table checked
against the reference server (langgraph-api 0.16.7, ``langgraph_api/_factory_utils.py``:
``_classify_factory`` counts every parameter, accepts 0, 1 or 2; one parameter gets the
config unless annotated ServerRuntime; of two exactly one must be a ServerRuntime, the
other gets the config whatever its annotation; both are passed by name).

``reference`` is the outcome read from that code; ``ours`` is set only where Pronghorn
deliberately differs (a reference bug, an unresolvable annotation, or Pronghorn's own
``GraphRequest``), and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from pronghorn.graphs.factory_call import EXECUTION_RUNTIME, FactoryError, call_factory, plan_call
from pronghorn.graphs.requests import GraphRequest
from testgraphs import factory_signatures as f
from testgraphs.factory_typechecking import typechecking_only

REFUSED = "refused at load"
CALL_FAILS = "loads, then every access fails (TypeError)"


@dataclass(frozen=True)
class Row:
    factory: Callable[..., Any]
    reference: dict[str, str] | str  # parameter -> what it gets, or REFUSED / CALL_FAILS
    ours: dict[str, str] | str | None = None  # only where we differ
    why: str = ""


CFG, RT, REQ = "config", "runtime", "request"

TABLE = [
    Row(f.no_params, {}),
    Row(f.bare, {"config": CFG}),
    Row(f.runnable_config, {"config": CFG}),
    Row(f.plain_dict, {"config": CFG}),
    Row(f.mapping, {"cfg": CFG}),
    Row(f.runtime_only, {"runtime": RT}),
    Row(f.runtime_ctx, {"runtime": RT}),
    Row(f.dict_and_runtime, {"config": CFG, "runtime": RT}),
    Row(f.runtime_first, {"rt": RT, "config": CFG}),
    Row(f.optional_runtime, {"config": CFG, "runtime": RT}),
    Row(f.union_none_runtime, {"runtime": RT}),
    Row(f.keyword_only_runtime, {"config": CFG, "runtime": RT}),
    Row(f.keyword_only_config, {"config": CFG}),
    Row(f.annotated_runtime, {"rt": RT, "c": CFG}),
    Row(f.concrete_class, {"runtime": RT}),
    Row(typechecking_only, {"config": CFG, "runtime": RT}),
    Row(f.var_keyword, {"kwargs": CFG}),
    Row(f.unannotated_pair, REFUSED),
    Row(f.defaulted_extra, REFUSED),
    Row(f.two_runtimes, REFUSED),
    Row(f.three_params, REFUSED),
    Row(
        f.positional_only,
        CALL_FAILS,
        ours={"config": CFG},
        why="the reference passes a positional-only parameter by name; we pass it by position",
    ),
    Row(
        f.unresolvable,
        REFUSED,
        ours={"runtime": RT, "config": CFG},
        why="an annotation naming an undefined type: the reference drops every hint, we "
        "fall back to the annotation's text",
    ),
    Row(
        f.pronghorn_request,
        {"request": CFG},
        ours={"request": REQ},
        why="Pronghorn's GraphRequest annotation",
    ),
    Row(
        f.request_config_runtime,
        REFUSED,
        ours={"config": CFG, "runtime": RT, "req": REQ},
        why="a GraphRequest parameter does not count against the limit of two",
    ),
]


def _received(value: Any, request: GraphRequest) -> Any:
    if value is request.config:
        return CFG
    if value is request:
        return REQ
    if isinstance(value, EXECUTION_RUNTIME):
        return RT
    if isinstance(value, dict):  # **kwargs: what each name got
        return {k: _received(v, request) for k, v in value.items()}
    return repr(value)


def outcome(factory: Callable[..., Any]) -> dict[str, str] | str:
    try:
        plan = plan_call(factory)
    except FactoryError:
        return REFUSED
    request = GraphRequest(
        access="threads.create_run", config={"configurable": {"x": 1}}, context={"tone": "dry"}
    )
    try:
        got = call_factory(factory, plan, request, InMemoryStore())
    except TypeError:
        return CALL_FAILS
    assert isinstance(got, dict)
    received = {k: _received(v, request) for k, v in got.items()}
    if factory is f.var_keyword:  # `kwargs` holds {name: value}
        return received["kwargs"]
    return received


@pytest.mark.parametrize("row", TABLE, ids=lambda row: row.factory.__name__)
def test_factory_signature_table(row: Row) -> None:
    expected = row.reference if row.ours is None else row.ours
    assert outcome(row.factory) == expected
    assert row.ours is None or row.why  # a difference from the reference says why


def test_the_table_covers_the_shapes_the_issue_names() -> None:
    assert len(TABLE) >= 12
    differing = [row.factory.__name__ for row in TABLE if row.ours is not None]
    assert differing == [
        "positional_only",
        "unresolvable",
        "pronghorn_request",
        "request_config_runtime",
    ]


def test_refusals_name_the_parameters() -> None:
    with pytest.raises(FactoryError, match=r"exactly one annotated .*'config', 'runtime'"):
        plan_call(f.unannotated_pair)
    with pytest.raises(FactoryError, match=r"0, 1 or 2 parameters .* got 3"):
        plan_call(f.three_params)


def test_a_subscripted_runtime_gets_its_context_type_without_unknown_keys() -> None:
    plan = plan_call(f.dict_and_runtime)
    request = GraphRequest(access="threads.create_run", context={"tone": "dry", "extra": 1})
    got = call_factory(f.dict_and_runtime, plan, request, InMemoryStore())
    assert isinstance(got, dict)
    assert got["runtime"].execution_runtime.context == f.Ctx(tone="dry")
    read = call_factory(
        f.dict_and_runtime, plan, GraphRequest(access="threads.read"), InMemoryStore()
    )
    assert isinstance(read, dict)
    assert read["runtime"].execution_runtime is None
