"""The OpenAPI document is complete: every route the app serves is in it with a real schema
for each answer, errors are the shared `ErrorResponse`, streams are `text/event-stream`,
and the document is valid OpenAPI 3.1 whose references all resolve. A new route that
returns a bare dict fails here until it declares what it answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import pytest
import schemathesis
import yaml
from fastapi import APIRouter, FastAPI, Response
from fastapi.routing import APIRoute, iter_route_contexts

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from support.live import base_config

EMPTY_ANSWERS = {"202", "204", "302"}
"""Statuses that answer without a body (accepted, no content, a redirect)."""

JSON = "application/json"


@pytest.fixture(scope="module")
def app_and_schema(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("openapi")
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(base_config()), encoding="utf-8")
    app = create_app(ConfigHolder(load_config(path, {}), {}), base_dir=tmp)
    return app, app.openapi()


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = str(schema["$ref"]).removeprefix("#/components/schemas/")
        schema = document["components"]["schemas"][name]
    return schema


def _describes_something(schema: dict[str, Any], document: dict[str, Any]) -> bool:
    """A named model (a `$ref`), or a typed schema that is more than "any object"."""
    if not schema:
        return False
    if "$ref" in schema:
        return _resolve(schema, document) is not None  # a named model: a deliberate declaration
    if schema.get("type") == "object" and not schema.get("properties"):
        return False  # FastAPI's guess from a `-> dict[str, Any]` annotation
    return any(k in schema for k in ("type", "anyOf", "oneOf", "allOf", "items", "enum"))


def _operations(app: Any) -> Iterator[tuple[str, str]]:
    """(method, path) of every API route the app serves, through included routers."""
    for context in iter_route_contexts(app.routes):
        if isinstance(context.original_route, APIRoute) and context.include_in_schema:
            for method in sorted(context.methods or ()):
                yield method.lower(), str(context.path_format)


def _undocumented(app: Any, document: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for method, path in _operations(app):
        operation = document["paths"].get(path, {}).get(method)
        if operation is None:
            problems.append(f"{method.upper()} {path}: not in the document")
            continue
        responses: dict[str, Any] = operation["responses"]
        if not any(s.startswith(("2", "3")) for s in responses):
            problems.append(f"{method.upper()} {path}: no success answer documented")
        for status, answer in responses.items():
            content: dict[str, Any] = answer.get("content") or {}
            if status in EMPTY_ANSWERS or status == "416":
                continue
            if not content:
                problems.append(f"{method.upper()} {path} {status}: no content documented")
            for media, body in content.items():
                schema = cast("dict[str, Any]", body.get("schema") or {})
                if not _describes_something(schema, document):
                    problems.append(
                        f"{method.upper()} {path} {status} {media}: no real schema "
                        f"({json.dumps(schema)[:80]})"
                    )
    return problems


def test_every_route_is_documented_with_a_schema_for_each_answer(
    app_and_schema: tuple[Any, dict[str, Any]],
) -> None:
    app, document = app_and_schema
    assert len(list(_operations(app))) > 100
    assert _undocumented(app, document) == []


def test_a_route_that_declares_nothing_is_flagged() -> None:
    """The check itself: a bare-dict route and an untyped Response route fail it."""
    app = FastAPI()
    router = APIRouter(prefix="/api/x")

    @router.get("/guessed")
    async def guessed() -> dict[str, Any]:
        return {}

    @router.get("/untyped")
    async def untyped() -> Response:
        return Response()

    app.include_router(router)
    problems = _undocumented(app, app.openapi())
    assert [p.split(":")[0] for p in problems] == [
        "GET /api/x/guessed 200 application/json",
        "GET /api/x/untyped 200 application/json",
    ]


def test_errors_are_the_shared_error_body(app_and_schema: tuple[Any, dict[str, Any]]) -> None:
    _, document = app_and_schema
    wrong: list[str] = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, answer in operation["responses"].items():
                if not status.startswith("4") or status == "416":
                    continue
                schema = (answer.get("content") or {}).get(JSON, {}).get("schema", {})
                ref = str(schema.get("$ref", ""))
                # The OpenAI-compatible API and JSON-RPC have their own error shapes.
                if not ref.endswith(("/ErrorResponse", "/OpenAIErrorBody", "/JsonRpcResponse")):
                    wrong.append(f"{method.upper()} {path} {status}: {json.dumps(schema)[:80]}")
    assert wrong == []
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_streams_are_documented_as_server_sent_events(
    app_and_schema: tuple[Any, dict[str, Any]],
) -> None:
    _, document = app_and_schema
    streams = [
        ("post", "/api/langgraph/threads/{thread_id}/runs/stream"),
        ("post", "/api/langgraph/runs/stream"),
        ("get", "/api/langgraph/threads/{thread_id}/runs/{run_id}/stream"),
        ("post", "/api/langgraph/threads/{thread_id}/runs/{run_id}/stream"),
        ("get", "/api/langgraph/runs/{run_id}/stream"),
        ("get", "/api/langgraph/threads/{thread_id}/stream"),
    ]
    for method, path in streams:
        ok = document["paths"][path][method]["responses"]["200"]
        assert list(ok["content"]) == ["text/event-stream"], (method, path)
    # Chat completions answer JSON, or events with `stream: true`.
    chat = document["paths"]["/v1/chat/completions"]["post"]["responses"]["200"]["content"]
    assert set(chat) == {JSON, "text/event-stream"}


def test_langgraph_bodies_have_the_reference_required_fields(
    app_and_schema: tuple[Any, dict[str, Any]],
) -> None:
    """The LangGraph reference OpenAPI's required fields (copied here) are required in ours
    too; ours may add fields."""
    _, document = app_and_schema
    ours = document["components"]["schemas"]
    expected = {
        "Assistant": {"assistant_id", "graph_id", "config", "created_at", "updated_at", "metadata"},
        "Thread": {"thread_id", "created_at", "updated_at", "metadata", "status"},
        "Run": {
            "run_id",
            "thread_id",
            "assistant_id",
            "created_at",
            "updated_at",
            "status",
            "metadata",
            "kwargs",
            "multitask_strategy",
        },
        "Item": {"namespace", "key", "value", "created_at", "updated_at"},
        "ThreadPruneResponse": {"pruned_count"},
        "SearchItemsResponse": {"items"},
    }
    for name, required in expected.items():
        assert required <= set(ours[name].get("required", [])), name
    thread_paths = document["paths"]["/api/langgraph/threads/{thread_id}"]
    assert thread_paths["get"]["responses"]["200"]["content"][JSON]["schema"] == {
        "$ref": "#/components/schemas/Thread"
    }


def test_the_document_is_valid_openapi_and_every_reference_resolves(
    app_and_schema: tuple[Any, dict[str, Any]],
) -> None:
    _, document = app_and_schema
    # schemathesis checks the document against the OpenAPI 3.1 meta-schema.
    schemathesis.openapi.from_dict(json.loads(json.dumps(document))).validate()
    names = set(document["components"]["schemas"])
    refs: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in cast("dict[str, Any]", node).items():
                if key == "$ref" and isinstance(value, str):
                    refs.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in cast("list[Any]", node):
                walk(value)

    walk(document)
    assert refs, "no references at all: the models are not in the document"
    dangling = sorted(r for r in refs if r.removeprefix("#/components/schemas/") not in names)
    assert dangling == []
    assert "$defs" not in json.dumps(document["paths"])
    # Every link (create a thread -> read it...) names an operation of the document.
    operation_ids = {
        op["operationId"] for item in document["paths"].values() for op in item.values()
    }
    links = [
        link
        for item in document["paths"].values()
        for op in item.values()
        for answer in op["responses"].values()
        for link in (answer.get("links") or {}).values()
    ]
    assert len(links) >= 10
    assert [link["operationId"] for link in links if link["operationId"] not in operation_ids] == []
