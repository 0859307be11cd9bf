"""Model call policy: budgets, checked before each model call and booked after it.

Outermost in its phase, so a refused call is neither retried nor turned into a fallback
message: ``BudgetExceededError`` ends the run with error ``budget_exceeded`` and its
message, and the model never sees the request. After a call, its tokens and cost (from
``models[].pricing``) are recorded for the run and its owner (docs/governance.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage

from pronghorn.agent.middlewares._util import run_config
from pronghorn.governance.budget import check, cost_of, estimate_tokens, is_limited
from pronghorn.governance.identity import identity_of
from pronghorn.governance.memory import MemoryPorts
from pronghorn.governance.plan import GovernancePlan
from pronghorn.governance.ports import CallUsage, GovernancePorts

log = logging.getLogger("pronghorn.agent.budget")


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
    )


def _usage(result: ModelResponse | AIMessage) -> tuple[int, int]:
    messages = [result] if isinstance(result, AIMessage) else result.result
    tokens_in = tokens_out = 0
    for m in messages:
        usage = getattr(m, "usage_metadata", None)
        if usage:
            tokens_in += int(usage.get("input_tokens") or 0)
            tokens_out += int(usage.get("output_tokens") or 0)
    return tokens_in, tokens_out


def _answered_by(result: ModelResponse | AIMessage) -> str | None:
    """The model the answer came from (the fallback chain tags it), if tagged."""
    messages = [result] if isinstance(result, AIMessage) else result.result
    for message in messages:
        name = message.response_metadata.get("pronghorn_model")
        if isinstance(name, str):
            return name
    return None


class BudgetMiddleware(AgentMiddleware):
    def __init__(self, plan: GovernancePlan, model_name: str) -> None:
        super().__init__()
        self.plan = plan
        self.model_name = model_name
        # Without the app's ports (an agent built by hand) usage is kept in memory.
        self.ports: GovernancePorts = plan.ports or MemoryPorts()

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | AIMessage:
        ports = self.ports
        who = identity_of(run_config())
        pricing = self.plan.pricing.get(self.model_name)
        if is_limited(self.plan.budgets):
            spent = await ports.spend(who.run_id, who.owner_id)
            texts = [_text(m) for m in request.messages]
            if request.system_message is not None:
                texts.append(_text(request.system_message))
            estimate = estimate_tokens(texts)
            refusal = check(
                self.plan.budgets,
                spent,
                estimate_tokens=estimate,
                estimate_cost=cost_of(pricing, estimate, 0),
            )
            if refusal is not None:
                log.warning(
                    "model call refused by budget",
                    extra={"scope": refusal.scope, "kind": refusal.kind, "owner": who.owner_id},
                )
                raise refusal.error()
        response = await handler(request)
        tokens_in, tokens_out = _usage(response)
        model = _answered_by(response) or self.model_name  # a fallback may have answered
        if model != self.model_name:
            pricing = self.plan.pricing.get(model)
        await ports.record_call(
            CallUsage(
                run_id=who.run_id,
                thread_id=who.thread_id,
                owner_id=who.owner_id,
                model=model,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cost_usd=cost_of(pricing, tokens_in, tokens_out),
            )
        )
        return response
