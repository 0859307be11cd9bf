"""The type of the `sdk_client` fixture (tests/conftest.py): `get_client(**kwargs)`, closed
after the test; readers of the SDK's documents where its TypedDicts are looser or narrower
than what the server sends."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from langgraph_sdk.client import LangGraphClient

SdkFactory = Callable[..., LangGraphClient]


def as_object(found: object) -> dict[str, Any]:  # Any: JSON, read by key in a test
    """A JSON object typed `object` (a service's or the MCP manager's answer, a job's output),
    as a dict the test reads by key; asserts it is one."""
    assert isinstance(found, dict)
    return cast("dict[str, Any]", found)  # a JSON object: string keys


def as_state(found: object) -> dict[str, Any]:  # Any: the graph's state, any JSON
    """A graph's state as a dict: a run's output (`runs.wait`, `runs.join`), a thread's or a
    thread state's `values`. The SDK types them `list | dict` (or `dict | None`): a graph's
    state may be a list; the test graphs' are dicts."""
    return as_object(found)


def values(doc: Mapping[str, Any]) -> dict[str, Any]:  # Any: the graph's state, any JSON
    """The `values` of a thread or a thread state (SDK TypedDicts) as a dict (`as_state`)."""
    return as_state(doc["values"])


def wire(doc: Mapping[str, Any]) -> dict[str, Any]:  # Any: JSON as the server sent it
    """A document the SDK returned, read by the keys the server sends that the SDK's TypedDict
    does not declare (a thread state's `checkpoint_id`, `parent_checkpoint_id`; a thread's
    `ttl`, `state_updated_at`) or declares with a type the JSON does not have."""
    return dict(doc)
