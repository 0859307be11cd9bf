"""LangGraph-style metadata filters, as `@auth.on` handlers return them, in one place.

A filter maps metadata keys to conditions; every key must match:

- ``{"owner": "alice"}`` — plain equality;
- ``{"owner": {"$eq": "alice"}}`` — the same, spelled as an operator;
- ``{"tags": {"$contains": "x"}}`` — the value at the key is a list holding ``x``.

`matches` checks one resource's metadata in Python (single-resource access). `sql_condition`
turns a filter into a WHERE clause over a JSON column, on SQLite and PostgreSQL alike, and
hands back whatever SQL cannot express exactly (nested values, odd keys) for `matches` to
check on the rows it returns. An unknown operator matches nothing: a policy that cannot be
understood denies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from sqlalchemy import ColumnElement, and_, exists, false, func, literal, select, true
from sqlalchemy.dialects.postgresql import JSONB

MetadataFilter = Mapping[str, object]
OPERATORS = ("$eq", "$contains")
_MISSING = object()


def _conditions(value: object) -> list[tuple[str, object]] | None:
    """[(operator, operand)] of one key's condition; None for an unknown operator."""
    if (
        isinstance(value, Mapping)
        and value
        and all(isinstance(k, str) for k in cast(Mapping[object, object], value))
    ):
        ops = cast(Mapping[str, object], value)
        if any(k.startswith("$") for k in ops):
            if any(k not in OPERATORS for k in ops):
                return None
            return list(ops.items())
    return [("$eq", value)]


def _holds(actual: object, op: str, operand: object) -> bool:
    if op == "$eq":
        return actual is not _MISSING and actual == operand
    if isinstance(actual, list):
        return operand in cast(list[object], actual)
    return False


def matches(metadata: Mapping[str, object] | None, filt: MetadataFilter | None) -> bool:
    """Whether `metadata` satisfies every condition of `filt` (None or {}: always)."""
    if not filt:
        return True
    meta = metadata or {}
    for key, value in filt.items():
        conds = _conditions(value)
        if conds is None:
            return False
        actual = meta.get(key, _MISSING)
        if not all(_holds(actual, op, operand) for op, operand in conds):
            return False
    return True


def _sqlite_path(key: str) -> str | None:
    if '"' in key or "\\" in key:
        return None
    return f'$."{key}"'


def _sqlite_type(operand: str | int | float | bool) -> str:
    if isinstance(operand, bool):
        return "true" if operand else "false"
    if isinstance(operand, int):
        return "integer"
    return "real" if isinstance(operand, float) else "text"


def _jsonb_contains(col: ColumnElement[object], doc: dict[str, object]) -> ColumnElement[bool]:
    return col.bool_op("@>")(literal(doc, type_=JSONB()))


def _is_scalar(operand: object) -> bool:
    return isinstance(operand, (str, int, float, bool))


def _scalar_eq(
    col: ColumnElement[object], key: str, operand: object, dialect: str
) -> ColumnElement[bool] | None:
    if not _is_scalar(operand):
        return None
    if dialect == "postgresql":  # JSONB containment: typed, and index-friendly
        return _jsonb_contains(col, {key: operand})
    if dialect == "sqlite":
        path = _sqlite_path(key)
        if path is None:
            return None
        kind = func.json_type(col, literal(path)) == _sqlite_type(operand)  # type: ignore[arg-type]
        if isinstance(operand, bool):
            return kind
        return and_(kind, func.json_extract(col, literal(path)) == operand)
    return None


def _array_contains(
    col: ColumnElement[object], key: str, operand: object, dialect: str
) -> ColumnElement[bool] | None:
    if not _is_scalar(operand):
        return None
    if dialect == "postgresql":
        return _jsonb_contains(col, {key: [operand]})
    if dialect == "sqlite":
        path = _sqlite_path(key)
        if path is None:
            return None
        each = func.json_each(col, literal(path)).table_valued("value", "type").alias()
        kind = _sqlite_type(operand)  # type: ignore[arg-type]
        match = each.c.type == kind
        if not isinstance(operand, bool):
            match = and_(match, each.c.value == operand)
        return and_(
            func.json_type(col, literal(path)) == "array",
            exists(select(literal(1)).select_from(each).where(match)),
        )
    return None


def sql_condition(
    col: ColumnElement[object], filt: MetadataFilter | None, dialect: str
) -> tuple[ColumnElement[bool], dict[str, object]]:
    """(WHERE clause, the part of `filt` left for `matches`) for a JSON column."""
    if not filt:
        return true(), {}
    clauses: list[ColumnElement[bool]] = []
    rest: dict[str, object] = {}
    for key, value in filt.items():
        conds = _conditions(value)
        if conds is None:
            return false(), {}
        for op, operand in conds:
            clause = (
                _scalar_eq(col, key, operand, dialect)
                if op == "$eq"
                else _array_contains(col, key, operand, dialect)
            )
            if clause is None:
                rest[key] = value
                break
            clauses.append(clause)
    return (and_(*clauses) if clauses else true()), rest
