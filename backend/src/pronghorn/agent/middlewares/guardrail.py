"""Tool gate: guardrails on every tool call and every final answer.

A blocked tool call is not run: the model gets an error ToolMessage saying why, so it can
take another way, and an audit record (``guardrail.blocked``) is written. A blocked final
answer (an answer without tool calls) is replaced by a notice before it enters the
thread. A provider that raises blocks (fail closed). See governance/guardrails.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest

from pronghorn.agent.middlewares._util import run_config
from pronghorn.agent.tool_types import ToolResult, request_runtime
from pronghorn.agent.untyped import as_dict, as_list, as_mapping
from pronghorn.governance.guardrails import Verdict, check_answer, check_tool_call
from pronghorn.governance.identity import identity_of
from pronghorn.governance.plan import GovernancePlan

log = logging.getLogger("pronghorn.agent.guardrails")

MAX_PREVIEW = 500


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for p in as_list(content) or []:
        block = as_dict(p)
        if block is None:
            parts.append(str(p))
        elif block.get("type") in (None, "text"):
            parts.append(str(block.get("text", "")))
    return "".join(parts)


class GuardrailMiddleware(AgentMiddleware):
    def __init__(self, plan: GovernancePlan) -> None:
        super().__init__()
        self.plan = plan

    async def _audit(
        self, config: Mapping[str, object], verdict: Verdict, detail: dict[str, object]
    ) -> None:
        log.warning("guardrail blocked", extra={"provider": verdict.provider, **detail})
        if self.plan.ports is None:
            return
        who = identity_of(config)
        await self.plan.ports.audit(
            "guardrail.blocked",
            actor=who.owner_id,
            target=who.thread_id,
            detail={
                "run_id": who.run_id,
                "provider": verdict.provider,
                "reason": verdict.reason,
                **detail,
            },
        )

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        call = request.tool_call
        name = str(call.get("name") or "")
        args: dict[str, object] = dict(call.get("args") or {})
        try:
            verdict = await check_tool_call(self.plan.guardrails, name, args)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            verdict = Verdict("guardrails", f"the guardrail check failed ({type(exc).__name__})")
        if verdict is None:
            return await handler(request)
        cfg: object = getattr(request_runtime(request), "config", None)
        config = as_mapping(cfg) or {}
        preview = json.dumps(args, default=str)[:MAX_PREVIEW]
        await self._audit(config, verdict, {"tool": name, "args_preview": preview})
        return ToolMessage(
            content=f"Error: blocked by guardrail ({verdict.provider}): {verdict.reason}. "
            "The call was not run.",
            tool_call_id=call.get("id") or "",
            name=name,
            status="error",
            additional_kwargs={
                "error_type": "GuardrailBlocked",
                "guardrail": {"provider": verdict.provider, "reason": verdict.reason},
            },
        )

    async def awrap_model_call(
        self,
        request: ModelRequest,
        # LangChain types the handler as returning a ModelResponse; an inner middleware may
        # answer with a bare AIMessage (the budget's refusal does).
        handler: Callable[[ModelRequest], Awaitable[ModelResponse | AIMessage]],
    ) -> ModelResponse | AIMessage:
        response = await handler(request)
        messages = response.result if isinstance(response, ModelResponse) else [response]
        out = list(messages)
        for i, message in enumerate(out):
            if not isinstance(message, AIMessage) or message.tool_calls:
                continue
            text = _text(message)
            if not text:
                continue
            try:
                verdict = await check_answer(self.plan.guardrails, text)
            except Exception as exc:
                verdict = Verdict(
                    "guardrails", f"the guardrail check failed ({type(exc).__name__})"
                )
            if verdict is None:
                continue
            await self._audit(run_config(), verdict, {"answer_chars": len(text)})
            out[i] = message.model_copy(
                update={
                    "content": f"[The answer was withheld by a guardrail: {verdict.reason}.]",
                    "additional_kwargs": {
                        **message.additional_kwargs,
                        "guardrail": {"provider": verdict.provider, "reason": verdict.reason},
                    },
                }
            )
        if isinstance(response, ModelResponse):
            return ModelResponse(result=out, structured_response=response.structured_response)
        return cast(AIMessage, out[0])
