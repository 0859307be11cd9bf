"""Errors of the models package, and provider-like errors a scripted step can inject."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    import openai


class UnknownModelError(LookupError):
    """A run named a model that is not configured (the API answers 400)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"Unknown model: {self.name!r}"


class UnsupportedProviderError(ValueError):
    """A model entry names a provider that is neither built in nor a ``module:Class``."""


class ScriptedModelError(RuntimeError):
    """A generic error raised by a scripted step (``raise: <anything not listed>``)."""


class ScriptExhaustedError(RuntimeError):
    """The scripted model has no step for this call and no fallback."""


# kind -> (HTTP status, default message, error code); the openai error class: _status_class
_STATUS_ERRORS: dict[str, tuple[int, str, str | None]] = {
    "rate_limit": (429, "Rate limit reached (scripted)", "rate_limit"),
    "server_error": (500, "Internal server error (scripted)", None),
    "overloaded": (529, "Overloaded (scripted)", "overloaded"),
    "auth": (401, "Invalid API key (scripted)", "invalid_api_key"),
    "bad_request": (400, "Bad request (scripted)", None),
    "context_length": (
        400,
        "This model's maximum context length was exceeded (scripted)",
        "context_length_exceeded",
    ),
}


def _status_class(kind: str) -> type[openai.APIStatusError]:
    import openai  # the SDK (hundreds of modules) only once a step injects an error

    return {
        "rate_limit": openai.RateLimitError,
        "server_error": openai.InternalServerError,
        "overloaded": openai.InternalServerError,
        "auth": openai.AuthenticationError,
        "bad_request": openai.BadRequestError,
        "context_length": openai.BadRequestError,
    }[kind]


_FAKE_URL = "http://scripted.invalid/v1/chat/completions"


def build_error(kind: str, message: str | None = None) -> Exception:
    """An exception that looks like what a real provider client raises.

    The HTTP-like kinds raise the ``openai`` SDK's own classes (``status_code``, ``response``
    and ``body`` filled in), so retry and fallback code written against real providers sees
    the same thing. Any other kind raises :class:`ScriptedModelError`.
    """
    # openai annotates its errors with `httpx2` (its fork of httpx) while it accepts and
    # reads httpx objects the same way; hence the ignores below.
    import openai

    request = httpx.Request("POST", _FAKE_URL)
    if kind in _STATUS_ERRORS:
        status, default, code = _STATUS_ERRORS[kind]
        cls = _status_class(kind)
        text = message or default
        body = {"message": text, "type": kind, "code": code}
        response = httpx.Response(status, request=request, json={"error": body})
        return cls(f"Error code: {status} - {text}", response=response, body=body)  # pyright: ignore[reportArgumentType]
    if kind == "timeout":
        return openai.APITimeoutError(request=request)  # pyright: ignore[reportArgumentType]
    if kind == "connection":
        return openai.APIConnectionError(message=message or "Connection error.", request=request)  # pyright: ignore[reportArgumentType]
    return ScriptedModelError(message or kind)


class MissingAPIKeyError(ValueError):
    """A hosted provider's model has no API key configured."""
