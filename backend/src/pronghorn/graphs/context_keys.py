"""The keys a graph's ``context_schema`` declares, and a run context filtered down to them.

As on the reference server, a run's context keeps only the keys the graph's context schema
declares (a dataclass, a ``TypedDict`` or a pydantic model); the others are dropped (logged
at debug level), not fatal. A graph without a context schema gets the context as given.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Mapping

from pydantic import BaseModel
from typing_extensions import is_typeddict

log = logging.getLogger("pronghorn.graphs")


@functools.cache
def _declared(schema: type[object]) -> frozenset[str] | None:
    if dataclasses.is_dataclass(schema):
        return frozenset(f.name for f in dataclasses.fields(schema))
    if issubclass(schema, BaseModel):
        keys = set(schema.model_fields)
        keys.update(f.alias for f in schema.model_fields.values() if f.alias)
        return frozenset(keys)
    if is_typeddict(schema):  # typing's and typing_extensions' alike
        none: frozenset[str] = frozenset()
        required: frozenset[str] = getattr(schema, "__required_keys__", none)
        optional: frozenset[str] = getattr(schema, "__optional_keys__", none)
        return frozenset(required) | frozenset(optional)
    return None


def declared_keys(schema: object) -> frozenset[str] | None:
    """The keys ``schema`` declares; None when it is not a class whose keys can be read
    (no schema, a plain ``dict``...): then nothing is filtered."""
    if not isinstance(schema, type):
        return None
    try:
        return _declared(schema)
    except TypeError:  # an unhashable or odd class: leave the context alone
        return None


def filter_context(schema: object, context: Mapping[str, object]) -> dict[str, object]:
    """``context`` without the keys ``schema`` does not declare (all of it without one)."""
    keys = declared_keys(schema)
    if keys is None:
        return dict(context)
    dropped = [k for k in context if k not in keys]
    if dropped:
        log.debug("context keys not in the graph's context schema dropped: %s", ", ".join(dropped))
    return {k: v for k, v in context.items() if k in keys}
