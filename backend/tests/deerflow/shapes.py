"""The response shapes DeerFlow's web UI reads, written from its TypeScript types
(bytedance/deer-flow, frontend/src/core/**), and a checker.

A shape is a Python type (``str``, ``bool``, ``int``, ``NUM`` for a TS ``number``), a
``dict`` of required keys (extra keys are allowed: TypeScript ignores them),
``Opt(shape)`` for an optional key (``key?: T``), ``Null(shape)`` for ``T | null``,
``List(shape)``, ``Lit(...)`` for a string-literal union, or ``ANY``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NUM = (int, float)
ANY = object


@dataclass(frozen=True)
class Opt:
    shape: Any


@dataclass(frozen=True)
class Null:
    shape: Any


@dataclass(frozen=True)
class List:
    shape: Any


@dataclass(frozen=True)
class Lit:
    values: tuple[str, ...]

    def __init__(self, *values: str) -> None:
        object.__setattr__(self, "values", values)


def problems(value: Any, shape: Any, where: str = "$") -> list[str]:
    """What in ``value`` does not fit ``shape`` (empty when it fits)."""
    if isinstance(shape, Opt):
        return problems(value, shape.shape, where)
    if isinstance(shape, Null):
        return [] if value is None else problems(value, shape.shape, where)
    if isinstance(shape, Lit):
        return [] if value in shape.values else [f"{where}: {value!r} not one of {shape.values}"]
    if isinstance(shape, List):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        out: list[str] = []
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType]
            out += problems(item, shape.shape, f"{where}[{i}]")
        return out
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        out = []
        for key, sub in shape.items():  # pyright: ignore[reportUnknownVariableType]
            if key not in value:
                if not isinstance(sub, Opt):
                    out.append(f"{where}.{key}: missing")
                continue
            out += problems(value[key], sub, f"{where}.{key}")
        return out
    if shape is ANY:
        return []
    if shape is bool or isinstance(value, bool):
        ok = isinstance(value, bool) and shape is bool
    else:
        ok = isinstance(value, shape)
    return [] if ok else [f"{where}: expected {shape}, got {value!r}"]


def assert_shape(value: Any, shape: Any) -> None:
    found = problems(value, shape)
    assert not found, "does not fit DeerFlow's type:\n" + "\n".join(found)


# --- core/memory/types.ts ----------------------------------------------------------------------

MEMORY_SECTION = {"summary": str, "updatedAt": str}
MEMORY_FACT = {
    "id": str,
    "content": str,
    "category": str,
    "confidence": NUM,
    "createdAt": str,
    "source": str,
}
USER_MEMORY = {
    "version": str,
    "lastUpdated": str,
    "user": {
        "workContext": MEMORY_SECTION,
        "personalContext": MEMORY_SECTION,
        "topOfMind": MEMORY_SECTION,
    },
    "history": {
        "recentMonths": MEMORY_SECTION,
        "earlierContext": MEMORY_SECTION,
        "longTermBackground": MEMORY_SECTION,
    },
    "facts": List(MEMORY_FACT),
}

# --- core/channels/types.ts --------------------------------------------------------------------

CHANNEL_CREDENTIAL_FIELD = {"name": str, "label": str, "type": str, "required": bool}
CHANNEL_PROVIDER = {
    "provider": str,
    "display_name": str,
    "enabled": bool,
    "configured": bool,
    "connectable": Opt(bool),
    "unavailable_reason": Opt(Null(str)),
    "auth_mode": str,
    "connection_status": str,
    "credential_fields": List(CHANNEL_CREDENTIAL_FIELD),
    "credential_values": Opt(dict),
}
CHANNEL_PROVIDERS_RESPONSE = {"enabled": bool, "providers": List(CHANNEL_PROVIDER)}
CHANNEL_CONNECTION = {
    "id": str,
    "provider": str,
    "status": str,
    "external_account_id": Opt(Null(str)),
    "external_account_name": Opt(Null(str)),
    "workspace_id": Opt(Null(str)),
    "workspace_name": Opt(Null(str)),
    "scopes": List(str),
    "metadata": dict,
}
CHANNEL_CONNECTIONS_RESPONSE = {"connections": List(CHANNEL_CONNECTION)}
CHANNEL_CONNECT_RESPONSE = {
    "provider": str,
    "mode": str,
    "url": Opt(Null(str)),
    "code": str,
    "instruction": str,
    "expires_in": NUM,
}

# --- core/integrations/lark/types.ts -----------------------------------------------------------

LARK_STATUS = {
    "installed": bool,
    "version": str,
    "manifest_version": Null(str),
    "latest_available_version": Null(str),
    "runtime_version_mismatch": bool,
    "app_configured": bool,
    "app_id": Null(str),
    "app_brand": Null(str),
    "skills_expected": NUM,
    "skills_installed": NUM,
    "installed_skills": List(str),
    "enabled_skills": List(str),
    "install_path": str,
    "cli": {"available": bool, "path": Null(str), "version": Null(str), "error": Null(str)},
    "auth": {
        "status": Lit("authenticated", "not_authorized", "not_configured", "unavailable", "error"),
        "message": Null(str),
        "user": Null(str),
        "verified": bool,
    },
    "sandbox_runtime_mode": Lit("none", "gateway-download", "init-container", "broker"),
    "sandbox_runtime_ready": bool,
    "sandbox_runtime_detail": Null(str),
}
LARK_INSTALL_RESPONSE = {
    "success": bool,
    "installed_skills": List(str),
    "message": str,
    "status": LARK_STATUS,
}
LARK_CONFIG_COMPLETE_RESPONSE = {
    "success": bool,
    "message": str,
    "generation": str,
    "status": LARK_STATUS,
}
LARK_AUTH_COMPLETE_RESPONSE = {"success": bool, "message": str, "status": LARK_STATUS}

# --- core/features/api.ts ----------------------------------------------------------------------

FEATURES = {
    "agents_api": {"enabled": bool},
    "browser_control": Opt({"enabled": bool}),
    "mcp_tasks": Opt({"enabled": bool}),
}

# --- core/uploads/api.ts -----------------------------------------------------------------------

UPLOADED_FILE_INFO = {
    "filename": str,
    "size": NUM,
    "path": str,
    "virtual_path": str,
    "artifact_url": str,
    "extension": Opt(str),
    "modified": Opt(NUM),
    "markdown_file": Opt(str),
    "markdown_path": Opt(str),
    "markdown_virtual_path": Opt(str),
    "markdown_artifact_url": Opt(str),
}
UPLOAD_RESPONSE = {
    "success": bool,
    "files": List(UPLOADED_FILE_INFO),
    "message": str,
    "skipped_files": List(str),
}
LIST_FILES_RESPONSE = {"files": List(UPLOADED_FILE_INFO), "count": NUM}
UPLOAD_LIMITS = {"max_files": NUM, "max_file_size": NUM, "max_total_size": NUM}
DELETE_UPLOAD_RESPONSE = {"success": bool, "message": str}

# --- core/messages/human-input.ts (parseHumanInputRequest) ------------------------------------

HUMAN_INPUT_OPTION = {"id": str, "label": str, "value": str}
HUMAN_INPUT_REQUEST = {
    "version": Lit(1, 2),  # type: ignore[arg-type]
    "kind": Lit("human_input_request"),
    "source": str,
    "request_id": str,
    "tool_call_id": Opt(str),
    "clarification_type": Opt(str),
    "title": Opt(str),
    "question": str,
    "context": Opt(Null(str)),
    "input_mode": Lit("free_text", "single_choice", "choice_with_other", "form"),
    "options": Opt(List(HUMAN_INPUT_OPTION)),
}

# --- per-run messages (GET /api/runs/{id}/messages, core/threads/hooks.ts) -----------------------

RUN_MESSAGES = {"data": List(dict), "has_more": bool}
