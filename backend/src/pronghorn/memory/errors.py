"""Memory's domain errors (the gateway maps them to HTTP)."""

from __future__ import annotations


class MemoryDomainError(Exception):
    """Base of memory's domain errors."""


class FactNotFound(MemoryDomainError):
    def __init__(self, fact_id: str) -> None:
        super().__init__(f"Fact {fact_id!r} not found")
        self.fact_id = fact_id


class InvalidMemory(MemoryDomainError):
    """A fact or an imported document that cannot be stored (the message says why)."""
