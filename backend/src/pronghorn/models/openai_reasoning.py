"""``ReasoningChatOpenAI``: ``ChatOpenAI`` that keeps DeepSeek-style ``reasoning_content``.

OpenAI-compatible APIs of reasoning models (DeepSeek, Kimi, Qwen on vLLM…) return the
model's reasoning beside the answer: ``choices[0].delta.reasoning_content`` in streamed
chunks, ``choices[0].message.reasoning_content`` otherwise. ``langchain_openai`` only reads
the official fields and drops it. This subclass:

* stores it on the AI message as ``additional_kwargs["reasoning_content"]`` (streamed deltas
  concatenate when chunks are merged, as for any string in ``additional_kwargs``);
* sends it back on the assistant messages of the current turn (after the last user
  message), which these APIs need to continue a tool-calling turn. Earlier turns are sent
  without it: DeepSeek ignores it there and ``deepseek-reasoner`` rejects it with a 400.
"""

from __future__ import annotations

from typing import Any, cast

import openai
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

from pronghorn.models.notes import is_user_turn

REASONING_KEY = "reasoning_content"


def _get(part: object, key: str) -> object:
    """`part[key]` when `part` is a JSON object, else None."""
    return cast(dict[str, object], part).get(key) if isinstance(part, dict) else None


def _choices(body: object) -> list[object]:
    """The `choices` of a response or chunk (JSON), [] when it has none."""
    value = _get(body, "choices")
    return cast(list[object], value) if isinstance(value, list) else []


def _reasoning(part: object) -> str | None:
    value = _get(part, REASONING_KEY)
    return value if isinstance(value, str) and value else None


def current_turn_start(messages: list[BaseMessage]) -> int:
    """Index just after the last message the user wrote (0 when there is none); a request
    note (an image message the agent appended) does not start a turn."""
    for i in range(len(messages) - 1, -1, -1):
        if is_user_turn(messages[i]):
            return i + 1
    return 0


class ReasoningChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` plus the ``reasoning_content`` field of OpenAI-compatible APIs.

    The hooks overridden here take and return the API's JSON (``object`` values, narrowed
    where read); their ``langchain_openai`` originals annotate it as a bare ``dict``, so
    calling them through ``super()`` needs a per-line ignore of the unknown type arguments."""

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, object],
        default_chunk_class: type,
        base_generation_info: dict[str, object] | None,
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(  # pyright: ignore[reportUnknownMemberType]
            chunk, default_chunk_class, base_generation_info
        )
        if generation is None or not isinstance(generation.message, AIMessageChunk):
            return generation
        choices = _choices(chunk) or _choices(chunk.get("chunk"))
        text = _reasoning(_get(choices[0], "delta")) if choices else None
        if text is not None:
            generation.message.additional_kwargs[REASONING_KEY] = text
        return generation

    def _create_chat_result(
        self,
        response: dict[str, object] | openai.BaseModel,
        generation_info: dict[str, object] | None = None,
    ) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)  # pyright: ignore[reportUnknownMemberType]
        body = response if isinstance(response, dict) else response.model_dump()
        for generation, choice in zip(result.generations, _choices(body), strict=False):
            text = _reasoning(_get(choice, "message"))
            if text is not None and isinstance(generation.message, AIMessage):
                generation.message.additional_kwargs[REASONING_KEY] = text
        return result

    def _get_request_payload(
        self,
        input_: LanguageModelInput,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,  # Any: ChatOpenAI's signature (the call's options, passed on)
    ) -> dict[str, object]:
        payload = cast(
            dict[str, object],  # the request's JSON (langchain_openai: a bare dict)
            super()._get_request_payload(input_, stop=stop, **kwargs),  # pyright: ignore[reportUnknownMemberType]
        )
        messages_field: object = payload.get("messages")
        if not isinstance(messages_field, list):  # the Responses API has no such field
            return payload
        sent = cast(list[dict[str, object]], messages_field)  # the request's messages, as JSON
        messages = self._convert_input(input_).to_messages()
        if len(messages) != len(sent):
            return payload
        for i in range(current_turn_start(messages), len(messages)):
            message = messages[i]
            text = _reasoning(message.additional_kwargs) if isinstance(message, AIMessage) else None
            if text is not None and sent[i].get("role") == "assistant":
                sent[i][REASONING_KEY] = text
        return payload
