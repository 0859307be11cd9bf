"""Which config fields only take effect at startup, and how a reload treats them.

``STARTUP_ONLY`` is the one registry. A reload never half-applies such a field: the live
config keeps the value the process started with and the change is reported as
``restart_required`` (at ``GET /api/config/status`` and in the log) until the file matches
the running value again or the process restarts.
"""

from __future__ import annotations

from typing import TypeVar, cast

from pydantic import BaseModel

from pronghorn.config.schema.app import AppConfig

STARTUP_ONLY: tuple[str, ...] = (
    "data_dir",  # database file and thread folders are opened at startup
    "auth",  # the authenticator is built once, with the database it reads
    "server",  # the socket, workers, CORS/docs middleware and static mount are built once
    "http",  # the custom app is imported and its routes added when the app is built
    "database",  # the engine and its pool
    "broker",  # the event broker and its connections
    "sandbox",  # the provider reads isolation, network, timeouts and limits when it starts
    "logging",  # handlers and formatters are installed once
    "protocols.mcp.stateless",  # the MCP session manager is built once
    "metrics.enabled",  # the route and the listener are set up once
    "metrics.port",
    "metrics.host",
    "tracing.service_name",  # the tracer provider and its exporter are built once
    "tracing.sample_ratio",
    "tracing.otlp",
    "rate_limits.backend",
)


M = TypeVar("M", bound=BaseModel)


def get_path(config: BaseModel, path: str) -> object:  # whatever field `path` names
    value: object = config
    for part in path.split("."):
        value = getattr(value, part)
    return value


def set_path(config: M, path: str, value: object) -> M:  # a copy of `config`
    """A copy of ``config`` with the field at ``path`` replaced (no re-validation: the value
    comes from another valid config of the same schema)."""
    head, _, rest = path.partition(".")
    if rest:
        value = set_path(getattr(config, head), rest, value)
    return config.model_copy(update={head: value})


def changed_paths(old: object, new: object, path: str = "") -> list[str]:
    """The most specific dotted paths whose values differ: sections are walked, and so
    are lists of sections of equal length (``models[0].api_key``); other lists, dicts and
    scalars compare whole."""
    if isinstance(old, BaseModel) and type(old) is type(new):
        out: list[str] = []
        for name in type(old).model_fields:
            sub = f"{path}.{name}" if path else name
            out.extend(changed_paths(getattr(old, name), getattr(new, name), sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        olds, news = cast(list[object], old), cast(list[object], new)
        if len(olds) == len(news) and all(isinstance(item, BaseModel) for item in olds):
            return [
                p
                for i, (a, b) in enumerate(zip(olds, news, strict=True))
                for p in changed_paths(a, b, f"{path}[{i}]")
            ]
    return [] if old == new else [path]


def restart_required(old: AppConfig, new: AppConfig) -> list[str]:
    """Startup-only paths that differ between ``old`` (running) and ``new`` (on disk)."""
    out: list[str] = []
    for path in STARTUP_ONLY:
        out.extend(changed_paths(get_path(old, path), get_path(new, path), path))
    return out


def merge_startup_only(old: AppConfig, new: AppConfig) -> AppConfig:
    """``new`` with every startup-only field kept at its value in ``old``."""
    merged = new
    for path in STARTUP_ONLY:
        merged = set_path(merged, path, get_path(old, path))
    return merged


def is_startup_only(path: str) -> bool:
    """Whether a dotted field path (e.g. ``server.port``) needs a restart."""
    return any(path == p or path.startswith(p + ".") for p in STARTUP_ONLY)
