"""The OpenAI-compatible API's bodies (`/v1/chat/completions`, `/v1/models`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorBody(BaseModel):
    """OpenAI's error shape, which this API answers instead of `{"detail"}`."""

    error: OpenAIErrorDetail


def openai_errors(*statuses: int) -> dict[int | str, dict[str, object]]:
    return {
        s: {"model": OpenAIErrorBody, "description": "An OpenAI-shaped error"} for s in statuses
    }


class CompletionMessage(BaseModel):
    role: Literal["assistant"]
    content: str
    refusal: None


class CompletionChoice(BaseModel):
    index: int
    message: CompletionMessage
    finish_reason: str
    logprobs: None


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: CompletionUsage


class ModelObject(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelObjectList(BaseModel):
    object: Literal["list"]
    data: list[ModelObject]


CHAT_ANSWERS: dict[int | str, dict[str, object]] = {
    200: {
        "model": ChatCompletion,
        "description": "The completion; with `stream: true`, chunks as server-sent events",
        "content": {
            "text/event-stream": {
                "schema": {"type": "string", "description": "`data: {chunk}` ... `data: [DONE]`"}
            }
        },
    },
    **openai_errors(400, 401, 403, 404, 409, 413, 422, 429, 502),
}
