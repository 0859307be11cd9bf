"""One `pronghorn doctor` finding: shared by the checks in doctor.py and their per-provider
modules (doctor_container.py), so neither imports the other's module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    hint: str | None = None
    data: dict[str, Any] | None = None  # JSON-ready detail for --json; shapes differ per check
