"""Memory's domain errors (the gateway maps them to HTTP)."""

from __future__ import annotations


class MemoryError_(Exception):  # noqa: N801 - `MemoryError` is a builtin
    """Base of memory's domain errors."""


class FactNotFound(MemoryError_):
    def __init__(self, fact_id: str) -> None:
        super().__init__(f"Fact {fact_id!r} not found")
        self.fact_id = fact_id


class InvalidMemory(MemoryError_):
    """A fact or an imported document that cannot be stored (the message says why)."""


class MemoryDisabled(MemoryError_):
    def __init__(self) -> None:
        super().__init__("Memory is disabled (memory.enabled: false)")
