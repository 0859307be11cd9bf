"""Request projection: every tool call the model sees has exactly one result after it.

A run cancelled (or crashed) between the model's tool calls and their results leaves
"dangling" calls in the thread; strict providers reject such a history. Before each model
call this middleware rebuilds the request so that each AI tool call (and each invalid tool
call) is directly followed by its ToolMessage — a synthetic error result when none exists
— drops ToolMessages that answer no call, and renames duplicate tool-call ids (each
duplicate consumes its own result, in order). State is never changed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, InvalidToolCall, ToolCall, ToolMessage

INTERRUPTED = "[Tool call was interrupted and did not return a result.]"
MAX_DETAIL = 500


def _invalid_text(error: str | None) -> str:
    if error:
        return (
            "[Tool call could not be executed because its arguments were invalid: "
            f"{error[:MAX_DETAIL]}]"
        )
    return "[Tool call could not be executed because its arguments were invalid.]"


def repair_tool_calls(messages: list[AnyMessage]) -> list[AnyMessage]:
    """The repaired transcript (the same list object when nothing needed repair)."""
    results: dict[str, deque[ToolMessage]] = defaultdict(deque)
    for m in messages:
        if isinstance(m, ToolMessage):
            results[m.tool_call_id].append(m)

    out: list[AnyMessage] = []
    seen_ids: defaultdict[str, int] = defaultdict(int)
    changed = False
    for m in messages:
        if isinstance(m, ToolMessage):
            continue  # re-emitted right after its call below; orphans are dropped
        if not isinstance(m, AIMessage) or not (m.tool_calls or m.invalid_tool_calls):
            out.append(m)
            continue
        calls: list[ToolCall] = []
        answers: list[ToolMessage] = []
        for call in m.tool_calls:
            original = call.get("id") or ""
            n = seen_ids[original]
            seen_ids[original] += 1
            new_id = original if n == 0 and original else f"{original or 'call'}_dup{n}"
            queue = results.get(original)
            if queue:
                answer = queue.popleft()
                if new_id != original:
                    answer = answer.model_copy(update={"tool_call_id": new_id})
            else:
                answer = ToolMessage(
                    content=INTERRUPTED,
                    tool_call_id=new_id,
                    name=call.get("name"),
                    status="error",
                )
                changed = True
            if new_id != original:
                changed = True
                call = call.copy()
                call["id"] = new_id
            calls.append(call)
            answers.append(answer)
        invalid: list[InvalidToolCall] = []
        for bad in m.invalid_tool_calls:
            original = bad.get("id") or ""
            n = seen_ids[original]
            seen_ids[original] += 1
            new_id = original if n == 0 and original else f"{original or 'call'}_dup{n}"
            queue = results.get(original)
            if queue:
                answer = queue.popleft().model_copy(update={"tool_call_id": new_id})
            else:
                answer = ToolMessage(
                    content=_invalid_text(bad.get("error")),
                    tool_call_id=new_id,
                    name=bad.get("name"),
                    status="error",
                )
                changed = True
            if new_id != original:
                changed = True
            invalid.append({**bad, "id": new_id})
            answers.append(answer)
        if changed:
            m = m.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
        out.append(m)
        out.extend(answers)
    leftovers = any(results[k] for k in results)
    if leftovers:
        changed = True
    # Also catch reordering (a result that was not directly after its call).
    same = len(out) == len(messages) and all(a is b for a, b in zip(out, messages, strict=True))
    if not changed and same:
        return messages
    return out


class DanglingToolCallMiddleware(AgentMiddleware):
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        repaired = repair_tool_calls(request.messages)
        if repaired is not request.messages:
            request = request.override(messages=repaired)
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        repaired = repair_tool_calls(request.messages)
        if repaired is not request.messages:
            request = request.override(messages=repaired)
        return await handler(request)
