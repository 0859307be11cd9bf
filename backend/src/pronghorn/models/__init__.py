"""Chat models: the model factory, provider clients and the offline ScriptedChatModel."""

from pronghorn.models.demo import DEMO_MODEL_NAME, demo_responder, make_demo_model
from pronghorn.models.errors import (
    MissingAPIKeyError,
    ScriptedModelError,
    ScriptExhaustedError,
    UnknownModelError,
    UnsupportedProviderError,
)
from pronghorn.models.factory import ModelFactory
from pronghorn.models.scripted import ScriptedChatModel, ScriptedRequest
from pronghorn.models.steps import Rule, Step

__all__ = [
    "DEMO_MODEL_NAME",
    "MissingAPIKeyError",
    "ModelFactory",
    "Rule",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "ScriptedModelError",
    "ScriptedRequest",
    "Step",
    "UnknownModelError",
    "UnsupportedProviderError",
    "demo_responder",
    "make_demo_model",
]
