"""The one exception of config loading and how pydantic errors become readable lines."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError


class ConfigError(Exception):
    """A config file, variable or value is wrong; the message says where and why.

    Messages never contain secret values: they name keys and variables, not their contents.
    """


def format_loc(loc: Iterable[str | int]) -> str:
    """``("models", 0, "api_key")`` -> ``models[0].api_key``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def _unwrap(annotation: Any) -> Any:  # a runtime typing object (a class, a union...)
    """Strip ``X | None`` so we can look at X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class that owns the last key of ``loc`` (for "did you mean" hints)."""
    current: Any = root  # a model class, then the annotations of its fields
    for part in loc:
        current = _unwrap(current)
        origin = typing.get_origin(current)
        if isinstance(part, int) and origin in (list, tuple):
            current = typing.get_args(current)[0]
        elif isinstance(part, str) and origin is dict:
            current = typing.get_args(current)[1]
        elif (
            isinstance(part, str)
            and isinstance(current, type)
            and issubclass(current, BaseModel)
            and part in current.model_fields
        ):
            current = current.model_fields[part].annotation
        else:
            return None
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _hint(root: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    if not loc or not isinstance(loc[-1], str):
        return ""
    owner = _model_at(root, loc[:-1])
    if owner is None:
        return ""
    close = difflib.get_close_matches(loc[-1], list(owner.model_fields), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def format_validation_error(
    exc: ValidationError,
    root: type[BaseModel],
    source: str,
    env_origin: dict[str, str] | None = None,
) -> str:
    """One line per problem, ``dotted.path: message``; input values are never echoed.

    ``env_origin`` maps a dotted path set by an environment override to the variable name,
    so a bad override says which variable to fix.
    """
    lines: list[str] = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = tuple(err["loc"])
        path = format_loc(loc)
        line = f"{path}: {err['msg']}"
        if err["type"] == "extra_forbidden":
            line += _hint(root, loc)
        for env_path, var in (env_origin or {}).items():
            if path == env_path or path.startswith((env_path + ".", env_path + "[")):
                line += f" (from environment variable {var})"
                break
        lines.append(line)
    count = len(lines)
    head = f"{source}: invalid configuration ({count} problem{'s' if count != 1 else ''})"
    return head + "".join(f"\n  {line}" for line in lines)
