"""Errors of the models package, and provider-like errors a scripted step can inject."""

from __future__ import annotations

import httpx
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


# kind -> (HTTP status, openai error class, default message, error code)
_STATUS_ERRORS: dict[str, tuple[int, type[openai.APIStatusError], str, str | None]] = {
    "rate_limit": (429, openai.RateLimitError, "Rate limit reached (scripted)", "rate_limit"),
    "server_error": (500, openai.InternalServerError, "Internal server error (scripted)", None),
    "overloaded": (529, openai.InternalServerError, "Overloaded (scripted)", "overloaded"),
    "auth": (401, openai.AuthenticationError, "Invalid API key (scripted)", "invalid_api_key"),
    "bad_request": (400, openai.BadRequestError, "Bad request (scripted)", None),
    "context_length": (
        400,
        openai.BadRequestError,
        "This model's maximum context length was exceeded (scripted)",
        "context_length_exceeded",
    ),
}

ERROR_KINDS = (*_STATUS_ERRORS, "timeout", "connection")

_FAKE_URL = "http://scripted.invalid/v1/chat/completions"


def build_error(kind: str, message: str | None = None) -> Exception:
    """An exception that looks like what a real provider client raises.

    The HTTP-like kinds raise the ``openai`` SDK's own classes (``status_code``, ``response``
    and ``body`` filled in), so retry and fallback code written against real providers sees
    the same thing. Any other kind raises :class:`ScriptedModelError`.
    """
    # openai annotates its errors with `httpx2` (its fork of httpx) while it accepts and
    # reads httpx objects the same way; hence the ignores below.
    request = httpx.Request("POST", _FAKE_URL)
    if kind in _STATUS_ERRORS:
        status, cls, default, code = _STATUS_ERRORS[kind]
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
