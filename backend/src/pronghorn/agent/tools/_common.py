"""Helpers shared by the tool modules: the run's thread, the sandbox, error results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from langchain_core.messages import ToolMessage

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.sandbox.base import Sandbox
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths

T = TypeVar("T")

DEFAULT_USER_ID = "default"


class ToolError(Exception):
    """An expected failure; ``str(error)`` is shown to the model."""


def thread_of(runtime: AgentToolRuntime) -> tuple[str, str]:
    """``(user_id, thread_id)`` of the run calling the tool."""
    configurable: dict[str, object] = dict((runtime.config or {}).get("configurable") or {})
    thread_id = configurable.get("thread_id")
    if not thread_id:
        raise ToolError("This tool needs a thread: the run has no thread_id.")
    return str(configurable.get("user_id") or DEFAULT_USER_ID), str(thread_id)


async def sandbox_for(deps: ToolDeps, runtime: AgentToolRuntime) -> Sandbox:
    """The thread's sandbox (acquired lazily; the harness releases it after the run)."""
    user_id, thread_id = thread_of(runtime)
    return await deps.sandboxes.acquire(user_id, thread_id)


def paths_for(deps: ToolDeps, runtime: AgentToolRuntime) -> ThreadPaths:
    """The thread's folders, without acquiring a sandbox."""
    user_id, thread_id = thread_of(runtime)
    try:
        return ThreadPaths.for_thread(deps.data_dir, user_id, thread_id)
    except ValueError as exc:
        raise ToolError(str(exc)) from None


def failure(runtime: AgentToolRuntime | None, name: str, message: str) -> ToolMessage | str:
    """An error result the model can read (a ToolMessage with status=error in a tool call)."""
    text = message if message.startswith("Error") else f"Error: {message}"
    call_id = getattr(runtime, "tool_call_id", None)
    if not call_id:
        return text
    return ToolMessage(content=text, tool_call_id=call_id, name=name, status="error")


async def guarded(
    name: str, runtime: AgentToolRuntime | None, body: Callable[[], Awaitable[T]]
) -> T | ToolMessage | str:
    """Run a tool body; expected errors (denied path, missing file...) become error results."""
    try:
        return await body()
    except (SandboxError, ToolError) as exc:
        return failure(runtime, name, str(exc))
