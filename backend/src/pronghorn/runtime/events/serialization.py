"""JSON for events, state and API answers: LangChain messages, pydantic models, datetimes,
UUIDs, bytes."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import cast

import orjson
from pydantic import BaseModel


def _default(obj: object) -> object:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(cast("Iterable[object]", obj))
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    as_dict: Callable[[], object] | None = getattr(obj, "_asdict", None)  # a namedtuple's
    if as_dict is not None:
        return as_dict()
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    return repr(obj)


def dumps(obj: object) -> bytes:
    return orjson.dumps(
        obj,
        default=_default,
        option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY,
    )


def to_jsonable(obj: object) -> object:
    """``obj`` as JSON decodes it (dicts, lists, strings, numbers, booleans, None)."""
    return orjson.loads(dumps(obj))
