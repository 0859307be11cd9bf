"""``ScriptedChatModel``: a deterministic, offline chat model that ships in the package.

Where the next answer comes from (first that applies):

1. ``responder``: a Python callable ``(ScriptedRequest) -> step dict | Step | None``.
2. ``script``: a list of steps. With ``cursor="ai_messages"`` (default) the step is chosen
   by the number of AI messages in the input, so each conversation (thread, sub-agent) walks
   the script on its own and concurrent runs never interfere; error steps (``raise``) are
   attached to the answering step after them and raise on the first ``times`` attempts of
   that turn (attempts are counted per identical input, so a client retry sees the next
   one). With ``cursor="calls"`` every call consumes one step, counted per ``thread_id``
   (from the run's metadata; one shared counter when absent).
3. ``rules``: the first rule matching the last human message; a rule's ``steps`` are played
   by the number of AI messages after that human message.
4. ``fallback``; with none, :class:`ScriptExhaustedError`.

Token callbacks (``on_llm_new_token``) are emitted by ``BaseChatModel`` for each chunk.
Every call is recorded in :attr:`ScriptedChatModel.requests` (messages, bound tools,
kwargs, thread id, chosen step). See docs/models.md for the step format.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall, ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.runnables.config import ensure_config
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from pronghorn.models.errors import ScriptExhaustedError, build_error
from pronghorn.models.steps import (
    Rule,
    Step,
    StepSpec,
    as_step,
    count_ai,
    estimate_input_tokens,
    estimate_tokens,
    group_turns,
    last_human_index,
    message_text,
    pick_in_turn,
    split_fixed,
    split_words,
)

_MAX_TRACKED = 4096
_ARGS_PIECE = 8


@dataclass
class ScriptedRequest:
    """One call the model received."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]]  # the bound tools' specs, OpenAI-format JSON
    kwargs: dict[str, Any]  # the other keyword arguments of the call, as LangChain passed them
    thread_id: str | None
    step: Step | None = None
    streamed: bool = False
    index: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes for a responder

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", t.get("name", "")) for t in self.tools]

    @property
    def last_human_text(self) -> str:
        i = last_human_index(self.messages)
        return message_text(self.messages[i]) if i >= 0 else ""


def _thread_id(run_manager: object) -> object:
    """The conversation's thread id: run metadata, else the current runnable config."""
    metadata: Mapping[str, object] = getattr(run_manager, "metadata", None) or {}
    if metadata.get("thread_id") is not None:
        return metadata["thread_id"]
    config = ensure_config()
    found = (config.get("metadata") or {}).get("thread_id")
    return found if found is not None else (config.get("configurable") or {}).get("thread_id")


Responder = Callable[[ScriptedRequest], "Step | StepSpec | None"]


class ScriptedChatModel(BaseChatModel):
    """Plays scripted steps: text, reasoning, tool calls, usage, finish reasons, errors."""

    model_config = ConfigDict(populate_by_name=True, arbitrary_types_allowed=True)

    model_name: str = Field(default="scripted", alias="model")
    script: list[Step] | None = None
    rules: list[Rule] | None = None
    fallback: Step | None = None
    responder: Responder | None = Field(default=None, exclude=True)
    cursor: Literal["ai_messages", "calls"] = "ai_messages"
    chunk_delay_s: float = Field(default=0.0, ge=0, description="Default wait between chunks.")
    streaming: bool = False

    _requests: list[ScriptedRequest] = PrivateAttr(default_factory=list)
    # Any: convert_to_openai_tool's schemas (LangChain's JSON type)
    _bound_tools: list[list[dict[str, Any]]] = PrivateAttr(default_factory=list)
    _attempts: OrderedDict[str, int] = PrivateAttr(default_factory=OrderedDict)
    _calls: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    # -- introspection for tests ---------------------------------------------------------
    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every call received, oldest first (shared by all ``bind_tools`` bindings)."""
        return self._requests

    @property
    def bound_tools(self) -> list[list[dict[str, Any]]]:  # Any: as _bound_tools
        """The OpenAI-format tool schemas of every ``bind_tools`` call, oldest first."""
        return self._bound_tools

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, object]:
        return {"model_name": self.model_name}

    # BaseChatModel's signatures (the tool specs and **kwargs are LangChain's own Any)
    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],  # Any: LangChain's
        *,
        tool_choice: str | dict[str, Any] | None = None,  # Any: LangChain's
        **kwargs: Any,  # Any: LangChain's (the call's options, bound as given)
    ) -> Runnable[LanguageModelInput, AIMessage]:
        formatted = [convert_to_openai_tool(t) for t in tools]
        self._bound_tools.append(formatted)
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    # -- choosing a step -----------------------------------------------------------------
    def _record(
        self,
        messages: list[BaseMessage],
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None,
        kwargs: dict[str, Any],  # Any: the call's **kwargs, as LangChain passed them
        streamed: bool,
    ) -> ScriptedRequest:
        thread_id = _thread_id(run_manager)
        rest = {k: v for k, v in kwargs.items() if k != "tools"}
        with self._lock:
            request = ScriptedRequest(
                messages=list(messages),
                tools=list(kwargs.get("tools") or []),
                kwargs=rest,
                thread_id=str(thread_id) if thread_id is not None else None,
                streamed=streamed,
                index=len(self._requests),
            )
            self._requests.append(request)
        request.step = self._choose(request)
        return request

    def _attempt(self, request: ScriptedRequest) -> int:
        """How many times this exact input (same thread) was seen before."""
        parts = [request.thread_id or ""]
        for m in request.messages:
            calls = [tc.get("name") for tc in m.tool_calls] if isinstance(m, AIMessage) else []
            parts.append(json.dumps([m.type, message_text(m), calls], default=str))
        key = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
        with self._lock:
            n = self._attempts.pop(key, 0)
            self._attempts[key] = n + 1
            while len(self._attempts) > _MAX_TRACKED:
                self._attempts.popitem(last=False)
        return n

    def _choose(self, request: ScriptedRequest) -> Step:
        step: Step | None = None
        if self.responder is not None:
            produced = self.responder(request)
            step = as_step(produced) if produced is not None else None
        elif self.script is not None:
            step = self._from_script(request)
        elif self.rules is not None:
            step = self._from_rules(request)
        if step is None:
            step = self.fallback
        if step is None:
            raise ScriptExhaustedError(
                f"scripted model {self.model_name!r}: no step for call #{request.index} "
                f"({count_ai(request.messages)} AI messages in input) and no fallback"
            )
        return step

    def _from_script(self, request: ScriptedRequest) -> Step | None:
        assert self.script is not None
        if self.cursor == "calls":
            key = request.thread_id or ""
            with self._lock:
                i = self._calls.get(key, 0)
                self._calls[key] = i + 1
            return self.script[i] if i < len(self.script) else None
        turns = group_turns(self.script)
        i = count_ai(request.messages)
        if i >= len(turns):
            return None
        return pick_in_turn(turns[i], self._attempt(request))

    def _from_rules(self, request: ScriptedRequest) -> Step | None:
        assert self.rules is not None
        text = request.last_human_text
        h = last_human_index(request.messages)
        for rule in self.rules:
            if rule.matches(text):
                turns = group_turns(rule.steps)
                i = count_ai(request.messages[h + 1 :])
                if i >= len(turns):
                    return None
                return pick_in_turn(turns[i], self._attempt(request))
        return None

    # -- rendering -----------------------------------------------------------------------
    def _usage(self, step: Step, request: ScriptedRequest, calls: list[ToolCall]) -> UsageMetadata:
        given = step.usage
        out = estimate_tokens(step.text) + estimate_tokens(step.reasoning or "")
        if calls:
            out += estimate_tokens(json.dumps([c["args"] for c in calls])) + 3 * len(calls)
        inp = estimate_input_tokens(request.messages, request.tools)
        inp = given.input_tokens if given and given.input_tokens is not None else inp
        out = given.output_tokens if given and given.output_tokens is not None else max(out, 1)
        total = given.total_tokens if given and given.total_tokens is not None else inp + out
        usage = UsageMetadata(input_tokens=inp, output_tokens=out, total_tokens=total)
        if step.reasoning:
            usage["output_token_details"] = {"reasoning": estimate_tokens(step.reasoning)}
        return usage

    def _tool_calls(self, step: Step) -> list[ToolCall]:
        return [
            ToolCall(
                name=tc.name,
                args=dict(tc.args),
                id=tc.id or f"call_{uuid.uuid4().hex[:24]}",
                type="tool_call",
            )
            for tc in step.tool_calls
        ]

    def _metadata(self, step: Step) -> dict[str, object]:
        return {
            "finish_reason": step.effective_finish_reason,
            "model_name": self.model_name,
            "model_provider": "scripted",
            **step.response_metadata,
        }

    def _message(self, request: ScriptedRequest) -> AIMessage:
        step = request.step
        assert step is not None
        if step.raise_ is not None:
            raise build_error(step.raise_, step.message)
        calls = self._tool_calls(step)
        extra = {"reasoning_content": step.reasoning} if step.reasoning else {}
        return AIMessage(
            content=step.text,
            additional_kwargs=extra,
            tool_calls=calls,
            usage_metadata=self._usage(step, request, calls),
            response_metadata=self._metadata(step),
        )

    def _chunks(self, request: ScriptedRequest) -> Iterator[AIMessageChunk]:
        step = request.step
        assert step is not None
        if step.is_error:
            raise build_error(step.raise_ or "generic", step.message)
        calls = self._tool_calls(step)
        chunks: list[AIMessageChunk] = []
        for word in split_words(step.reasoning or ""):
            chunks.append(AIMessageChunk(content="", additional_kwargs={"reasoning_content": word}))
        chunks += [AIMessageChunk(content=word) for word in split_words(step.text)]
        for i, call in enumerate(calls):
            head: ToolCallChunk = {"name": call["name"], "args": "", "id": call["id"], "index": i}
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[head]))
            for piece in split_fixed(json.dumps(call["args"]), _ARGS_PIECE):
                tcc: ToolCallChunk = {"name": None, "args": piece, "id": None, "index": i}
                chunks.append(AIMessageChunk(content="", tool_call_chunks=[tcc]))
        chunks.append(
            AIMessageChunk(
                content="",
                usage_metadata=self._usage(step, request, calls),
                response_metadata=self._metadata(step),
                chunk_position="last",
            )
        )
        for n, chunk in enumerate(chunks):
            if step.raise_after_chunks is not None and n >= step.raise_after_chunks:
                raise build_error(step.raise_ or "connection", step.message)
            yield chunk

    def _gap(self, step: Step | None) -> float:
        if step is None:
            return 0.0
        return step.delay_s if step.delay_s is not None else self.chunk_delay_s

    # -- BaseChatModel -------------------------------------------------------------------
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # Any: BaseChatModel's signature
    ) -> ChatResult:
        request = self._record(messages, run_manager, kwargs, streamed=False)
        assert request.step is not None
        if request.step.latency_s:
            time.sleep(request.step.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._message(request))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # Any: BaseChatModel's signature
    ) -> ChatResult:
        request = self._record(messages, run_manager, kwargs, streamed=False)
        assert request.step is not None
        if request.step.latency_s:
            await asyncio.sleep(request.step.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._message(request))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # Any: BaseChatModel's signature
    ) -> Iterator[ChatGenerationChunk]:
        request = self._record(messages, run_manager, kwargs, streamed=True)
        assert request.step is not None
        if request.step.latency_s:
            time.sleep(request.step.latency_s)
        gap = self._gap(request.step)
        for n, chunk in enumerate(self._chunks(request)):
            if n and gap:
                time.sleep(gap)
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # Any: BaseChatModel's signature
    ) -> AsyncIterator[ChatGenerationChunk]:
        request = self._record(messages, run_manager, kwargs, streamed=True)
        assert request.step is not None
        if request.step.latency_s:
            await asyncio.sleep(request.step.latency_s)
        gap = self._gap(request.step)
        for n, chunk in enumerate(self._chunks(request)):
            if n and gap:
                await asyncio.sleep(gap)
            yield ChatGenerationChunk(message=chunk)
