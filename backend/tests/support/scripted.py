"""Scripted chat models as a config file gives them: steps and rules as JSON objects."""

from __future__ import annotations

from typing import Any

from pronghorn.models.scripted import ScriptedChatModel


def scripted_model(**fields: Any) -> ScriptedChatModel:  # Any: the fields as JSON, validated
    """``ScriptedChatModel(**fields)`` through pydantic's validation, as the config loader
    builds it: the tests give steps and rules as dicts (``{"text": ...}``), which the
    validator turns into ``Step`` and ``Rule``; the constructor's signature wants those."""
    return ScriptedChatModel.model_validate(fields)
