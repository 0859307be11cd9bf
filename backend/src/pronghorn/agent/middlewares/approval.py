"""Tool gate: calls of the tools in ``approvals.tools`` wait for a human OK.

Before such a call the run interrupts (LangGraph ``interrupt``) with
``{"type": "tool_approval", "tool", "args", "call_id"}``. The resume value decides:
``{"approved": true}`` runs the call; ``{"approved": false, "reason"}`` answers the model
with a refusal ToolMessage instead. An answer naming another ``call_id`` (stale, or a
duplicate of an earlier approval) is ignored: the call asks again. When several approvals
are pending at once, resume with a map keyed by interrupt id (LangGraph's rule); an
approval left out keeps waiting. An unanswered approval
is denied after ``approvals.timeout_s`` (the runtime's approval sweeper resumes the run
with a denial).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import interrupt

from pronghorn.agent.tool_types import ToolResult, request_runtime
from pronghorn.agent.untyped import as_mapping
from pronghorn.governance.approvals import (
    Decision,
    decide,
    extra_patterns,
    needs_approval,
    refusal_text,
    request_payload,
)
from pronghorn.governance.identity import identity_of
from pronghorn.governance.plan import GovernancePlan

log = logging.getLogger("pronghorn.agent.approvals")

MAX_PREVIEW = 500


def _is_mcp(request: ToolCallRequest) -> bool:
    meta: Mapping[str, object] = (request.tool.metadata if request.tool is not None else None) or {}
    return bool(meta.get("mcp")) or meta.get("source") == "mcp"


def _context(request: ToolCallRequest) -> Mapping[str, object] | None:
    return as_mapping(getattr(request_runtime(request), "context", None))


def _config(request: ToolCallRequest) -> Mapping[str, object]:
    return as_mapping(getattr(request_runtime(request), "config", None)) or {}


class ApprovalMiddleware(AgentMiddleware):
    def __init__(self, plan: GovernancePlan) -> None:
        super().__init__()
        self.plan = plan

    def _needs(self, request: ToolCallRequest) -> bool:
        name = str(request.tool_call.get("name") or "")
        patterns = [*self.plan.approvals.tools, *extra_patterns(_context(request))]
        return bool(patterns) and needs_approval(name, patterns, is_mcp=_is_mcp(request))

    def _ask(self, request: ToolCallRequest) -> Decision:
        call = request.tool_call
        call_id = str(call.get("id") or "")
        payload = request_payload(str(call.get("name")), call.get("args") or {}, call_id)
        while True:  # each stale answer is consumed and the question asked again
            decision = decide(interrupt(payload), call_id)
            if decision is not None:
                return decision
            log.info("ignored an answer that is not for call %s", call_id)

    async def _audit(self, request: ToolCallRequest, decision: Decision) -> None:
        ports = self.plan.ports
        if ports is None:
            return
        who = identity_of(_config(request))
        args = json.dumps(request.tool_call.get("args") or {}, default=str)[:MAX_PREVIEW]
        await ports.audit(
            "tool.approved" if decision.approved else "tool.denied",
            actor=who.owner_id,
            target=who.thread_id,
            detail={
                "tool": str(request.tool_call.get("name")),
                "call_id": str(request.tool_call.get("id") or ""),
                "run_id": who.run_id,
                "reason": decision.reason or "",
                "args_preview": args,
            },
        )

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        if not self._needs(request):
            return await handler(request)
        decision = self._ask(request)
        await self._audit(request, decision)
        if decision.approved:
            return await handler(request)
        call = request.tool_call
        name = str(call.get("name"))
        return ToolMessage(
            content=refusal_text(name, decision.reason),
            tool_call_id=call.get("id") or "",
            name=name,
            status="error",
            additional_kwargs={"approval": {"approved": False, "reason": decision.reason}},
        )
