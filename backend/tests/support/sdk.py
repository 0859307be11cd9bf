"""The type of the `sdk_client` fixture (tests/conftest.py): `get_client(**kwargs)`, closed
after the test."""

from __future__ import annotations

from collections.abc import Callable

from langgraph_sdk.client import LangGraphClient

SdkFactory = Callable[..., LangGraphClient]
