"""A factory whose ``ServerRuntime`` is imported for the type checker only, a common style:
its string annotation is resolved by name (tests/api/test_factory_signatures.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime


def typechecking_only(config: dict[str, Any], runtime: ServerRuntime) -> dict[str, Any]:
    return locals()
