"""Model call policy: retry transient provider errors, circuit breaker, error fallback.

* Transient errors (429, 408/409/425, 5xx/529, timeouts, dropped connections or streams)
  are retried up to ``max_attempts`` times with exponential backoff and full jitter; a
  ``retry-after``/``retry-after-ms`` header from the provider is honoured (capped).
* Other errors (401/403 auth, 400 bad request, context too long…) are not retried.
* A circuit breaker per model opens after ``failure_threshold`` consecutive failed calls
  and answers immediately (no provider call) until ``recovery_s`` have passed; then one
  probe call is let through.
* A fallback chain (``models[].fallbacks``, ``agent.fallback_models``): a call that still
  fails with a retryable error (or a reason in ``fallback_on``) goes to the next model; a
  model whose breaker is open is skipped. The answer's ``response_metadata`` names the
  model that gave it (``pronghorn_model``) and the ones that failed before it.
* Without a chain the final failure never crashes the run: it becomes an ``AIMessage``
  with a readable content and ``additional_kwargs.error_fallback = {"reason",
  "error_type", "detail"}``. A chain whose every model failed ends the run with an error
  naming each model's failure (``ModelChainError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp

from pronghorn.agent.middlewares._util import run_config
from pronghorn.governance.identity import identity_of
from pronghorn.governance.ports import GovernancePorts

log = logging.getLogger("pronghorn.agent.llm")

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
TRANSIENT_NAMES = frozenset(
    {
        "APITimeoutError",
        "APIConnectionError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "OverloadedError",
        "TimeoutException",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "StreamChunkTimeoutError",
        "TimeoutError",
        "ConnectionError",
        "ConnectionResetError",
        "ConnectionRefusedError",
        "IncompleteRead",
    }
)
AUTH_STATUS = frozenset({401, 403})

MESSAGES = {
    "auth": "The model provider rejected the request: authentication or access is invalid. "
    "Check the API key and permissions of this model in config.yaml.",
    "rate_limit": "The model provider is rate-limiting requests and still refused after "
    "several retries. Please wait a moment and try again.",
    "transient": "The model provider is temporarily unavailable (it failed after several "
    "retries). Please try again in a moment.",
    "circuit_open": "The model provider failed repeatedly, so calls to it are paused for a "
    "short while. Please try again in a minute.",
    "context_length": "The conversation is too long for this model. Start a new thread or "
    "ask for a shorter answer.",
    "bad_request": "The model provider refused the request",
    "error": "The model call failed",
}


def status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def is_transient(exc: BaseException) -> bool:
    status = status_of(exc)
    if status is not None:
        return status in TRANSIENT_STATUS
    return bool(_names(exc) & TRANSIENT_NAMES) or isinstance(exc, TimeoutError | ConnectionError)


def classify(exc: BaseException) -> str:
    status = status_of(exc)
    text = str(exc).lower()
    if status in AUTH_STATUS or "AuthenticationError" in _names(exc):
        return "auth"
    if status == 429:
        return "rate_limit"
    if "context_length" in text or "maximum context length" in text:
        return "context_length"
    if is_transient(exc):
        return "transient"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "error"


def retry_after_s(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


@dataclass
class _Breaker:
    failures: int = 0
    opened_at: float | None = None


@dataclass
class CircuitBreakers:
    """Per-model breakers, shared by every graph built from one runtime."""

    failure_threshold: int = 5
    recovery_s: float = 60.0
    _state: dict[str, _Breaker] = field(default_factory=dict)

    def allow(self, model: str) -> bool:
        b = self._state.get(model)
        if b is None or b.opened_at is None:
            return True
        if time.monotonic() - b.opened_at >= self.recovery_s:
            b.opened_at = None  # half-open: let one probe through
            b.failures = self.failure_threshold - 1
            return True
        return False

    def success(self, model: str) -> None:
        self._state.pop(model, None)

    def failure(self, model: str) -> None:
        b = self._state.setdefault(model, _Breaker())
        b.failures += 1
        if b.failures >= self.failure_threshold:
            b.opened_at = time.monotonic()

    def is_open(self, model: str) -> bool:
        b = self._state.get(model)
        return b is not None and b.opened_at is not None


def fallback_message(reason: str, exc: BaseException | None) -> AIMessage:
    base = MESSAGES.get(reason, MESSAGES["error"])
    detail = str(exc)[:500] if exc is not None else ""
    content = base if reason not in ("bad_request", "error") else f"{base}: {detail}"
    return AIMessage(
        content=content,
        additional_kwargs={
            "error_fallback": {
                "reason": reason,
                "error_type": type(exc).__name__ if exc is not None else "CircuitBreakerOpen",
                "detail": detail or "circuit breaker is open",
            }
        },
        response_metadata={"finish_reason": "error"},
    )


@dataclass(frozen=True)
class ChainLink:
    """One model of a fallback chain: its name, its client (None: the request's own model,
    the first link), its calls per model call, and the non-retryable reasons it also falls
    back on (`models[].fallback_on`)."""

    name: str
    model: BaseChatModel | None = None
    max_attempts: int = 3
    fallback_on: frozenset[str] = frozenset()


class ModelChainError(RuntimeError):
    """Every model of a fallback chain failed: the run ends `error`, naming each failure."""

    def __init__(self, failures: list[tuple[str, str, BaseException | None]]) -> None:
        parts = [
            f"{name}: {reason}" + (f" ({type(exc).__name__}: {str(exc)[:200]})" if exc else "")
            for name, reason, exc in failures
        ]
        super().__init__("Every model of the fallback chain failed — " + "; ".join(parts))
        self.failures = failures


RETRYABLE_REASONS = frozenset({"transient", "rate_limit", "circuit_open"})


def _tag(response: ModelResponse, name: str, failed: list[str]) -> ModelResponse:
    """Mark the answer with the model that gave it (and the ones that failed before)."""
    for message in response.result:
        if isinstance(message, AIMessage):
            message.response_metadata["pronghorn_model"] = name
            if failed:
                message.response_metadata["pronghorn_fallback_from"] = list(failed)
    return response


def _stream_fallback_event(data: dict[str, object]) -> None:
    """The `custom` stream event a client sees when the answer restarts on another model."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # outside a graph run (an agent called by hand)
        return
    with contextlib.suppress(Exception):
        writer({"type": "model_fallback", **data})


class LLMErrorMiddleware(AgentMiddleware):
    def __init__(
        self,
        model_name: str,
        *,
        breakers: CircuitBreakers | None = None,
        max_attempts: int = 3,
        base_delay_s: float = 0.5,
        max_delay_s: float = 8.0,
        fallbacks: Sequence[ChainLink] = (),
        fallback_on: frozenset[str] = frozenset(),
        ports: GovernancePorts | None = None,
    ) -> None:
        super().__init__()
        self.model_name = model_name
        self.breakers = breakers or CircuitBreakers()
        self.max_attempts = max(1, max_attempts)
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.chain = [
            ChainLink(model_name, None, self.max_attempts, fallback_on),
            *fallbacks,
        ]
        self.ports = ports

    def delay_s(self, attempt: int, exc: BaseException) -> float:
        hinted = retry_after_s(exc)
        if hinted is not None:
            return min(max(hinted, 0.0), self.max_delay_s)
        return random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2**attempt))

    def _falls_back(self, link: ChainLink, reason: str) -> bool:
        return reason in RETRYABLE_REASONS or reason in link.fallback_on

    def _end(self, failures: list[tuple[str, str, BaseException | None]]) -> ModelResponse:
        """No model answered: one model keeps the readable error message; a chain ends the
        run with an error naming every model's failure."""
        if len(self.chain) > 1:
            raise ModelChainError(failures)
        name, reason, exc = failures[-1]
        if exc is None:
            return ModelResponse(result=[fallback_message(reason, None)])
        log.warning("model %s failed (%s): %s", name, reason, exc)
        return ModelResponse(result=[fallback_message(reason, exc)])

    def _after(
        self,
        i: int,
        link: ChainLink,
        outcome: ModelResponse | BaseException,
        failures: list[tuple[str, str, BaseException | None]],
    ) -> ModelResponse | bool:
        """One link's outcome: the tagged answer, or whether to go on to the next link (the
        failure is recorded either way). Shared by the async and the sync walk."""
        if isinstance(outcome, ModelResponse):
            return _tag(outcome, link.name, [f[0] for f in failures])
        reason = classify(outcome)
        failures.append((link.name, reason, outcome))
        return i + 1 == len(self.chain) or self._falls_back(link, reason)

    @staticmethod
    def _told(failed: str, reason: str, exc: BaseException | None, to: str) -> dict[str, object]:
        """A fallback's log line and stream event (both walks); returns the event's data."""
        detail = f"{type(exc).__name__}: {str(exc)[:300]}" if exc is not None else reason
        log.warning("model %s failed (%s), falling back to %s: %s", failed, reason, to, detail)
        data: dict[str, object] = {"from": failed, "to": to, "reason": reason, "detail": detail}
        _stream_fallback_event(data)
        return data

    async def _announce(self, failed: str, reason: str, exc: BaseException | None, to: str) -> None:
        """A fallback: a log line, a stream event, a callback event (the metric) and an
        audit record."""
        data = self._told(failed, reason, exc, to)
        with contextlib.suppress(RuntimeError):  # no callback context: nothing listens
            await adispatch_custom_event("pronghorn_model_fallback", data)
        if self.ports is not None:
            who = identity_of(run_config())
            with contextlib.suppress(Exception):
                await self.ports.audit(
                    "model.fallback", actor=who.owner_id, target=who.run_id, detail=data
                )

    async def _attempts(
        self,
        link: ChainLink,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | BaseException:
        for attempt in range(link.max_attempts):
            try:
                response = await handler(request)
            except (GraphBubbleUp, asyncio.CancelledError):
                raise
            except Exception as exc:
                if not is_transient(exc):
                    return exc
                self.breakers.failure(link.name)
                if attempt + 1 >= link.max_attempts or self.breakers.is_open(link.name):
                    return exc
                delay = self.delay_s(attempt, exc)
                log.info("model %s: %s, retry %d in %.2fs", link.name, exc, attempt + 1, delay)
                await asyncio.sleep(delay)
                continue
            self.breakers.success(link.name)
            return response
        raise AssertionError("unreachable")

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        failures: list[tuple[str, str, BaseException | None]] = []
        for i, link in enumerate(self.chain):
            if failures:
                await self._announce(*failures[-1], to=link.name)
            if not self.breakers.allow(link.name):
                failures.append((link.name, "circuit_open", None))
                continue
            call = request if link.model is None else request.override(model=link.model)
            step = self._after(i, link, await self._attempts(link, call, handler), failures)
            if isinstance(step, ModelResponse):
                return step
            if not step:
                break
        return self._end(failures)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        failures: list[tuple[str, str, BaseException | None]] = []
        for i, link in enumerate(self.chain):
            if failures:  # no callback loop to dispatch the metric event or the audit from
                self._told(*failures[-1], to=link.name)
            if not self.breakers.allow(link.name):
                failures.append((link.name, "circuit_open", None))
                continue
            call = request if link.model is None else request.override(model=link.model)
            step = self._after(i, link, self._attempts_sync(link, call, handler), failures)
            if isinstance(step, ModelResponse):
                return step
            if not step:
                break
        return self._end(failures)

    def _attempts_sync(
        self,
        link: ChainLink,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse | BaseException:
        for attempt in range(link.max_attempts):
            try:
                response = handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if not is_transient(exc):
                    return exc
                self.breakers.failure(link.name)
                if attempt + 1 >= link.max_attempts or self.breakers.is_open(link.name):
                    return exc
                time.sleep(self.delay_s(attempt, exc))
                continue
            self.breakers.success(link.name)
            return response
        raise AssertionError("unreachable")
