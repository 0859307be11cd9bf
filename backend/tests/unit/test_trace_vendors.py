"""The Langfuse handler each run gets (v2 and v3 SDK shapes, faked: the package is
optional), with the thread as the session and the owner as the user."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.observability.trace_vendors import VendorCallbacks, vendor_metadata
from support.jobs import bare_job

LANGFUSE = {"public_key": "pk-1", "secret_key": "sk-1", "host": "http://127.0.0.1:9"}


class FakeHandler(BaseCallbackHandler):
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def job() -> Job:
    return bare_job(
        "r1",
        "t1",
        config=AppConfig.model_validate({"tracing": {"langfuse": LANGFUSE}}),
        owner_id="alice",
    )


def test_v2_handler_gets_session_and_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langfuse", types.ModuleType("langfuse"))
    monkeypatch.setitem(sys.modules, "langfuse.langchain", None)  # not v3
    v2 = types.ModuleType("langfuse.callback")
    v2.CallbackHandler = FakeHandler  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langfuse.callback", v2)
    [handler] = VendorCallbacks()(job())
    assert isinstance(handler, FakeHandler)
    assert handler.kwargs == {
        "public_key": "pk-1",
        "secret_key": "sk-1",
        "host": "http://127.0.0.1:9",
        "session_id": "t1",
        "user_id": "alice",
    }


def test_v3_registers_one_client_and_reads_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    clients: list[dict[str, Any]] = []
    root = types.ModuleType("langfuse")
    root.Langfuse = lambda **kwargs: clients.append(kwargs)  # type: ignore[attr-defined]
    v3 = types.ModuleType("langfuse.langchain")
    v3.CallbackHandler = FakeHandler  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langfuse", root)
    monkeypatch.setitem(sys.modules, "langfuse.langchain", v3)
    vendors = VendorCallbacks()
    first, second = vendors(job()), vendors(job())
    assert [h.kwargs for h in first + second] == [{"public_key": "pk-1"}] * 2  # type: ignore[attr-defined]
    assert clients == [{"public_key": "pk-1", "secret_key": "sk-1", "host": "http://127.0.0.1:9"}]
    assert vendor_metadata(job()) == {"langfuse_session_id": "t1", "langfuse_user_id": "alice"}


def test_missing_package_skips_the_handler_once_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "langfuse.langchain", None)
    monkeypatch.setitem(sys.modules, "langfuse.callback", None)
    vendors = VendorCallbacks()
    assert vendors(job()) == [] and vendors(job()) == []
    assert caplog.text.count("langfuse` package is not installed") == 1
