"""The type every record gives its JSON columns."""

from __future__ import annotations

from collections.abc import Mapping

JsonObject = Mapping[str, object]
"""A JSON object as a JSON column gives it back (the decoded dict, not copied)."""
