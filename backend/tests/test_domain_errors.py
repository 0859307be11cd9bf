"""The runtime's errors reach clients as JSON with the right status (gateway/errors.py), and
AppRuntime components cannot be read before they start."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pronghorn.auth.authenticator import NoAuth
from pronghorn.auth.authorizer import AllowAll
from pronghorn.gateway.errors import DOMAIN_STATUS, install_error_handlers
from pronghorn.persistence.errors import (
    AssistantExists,
    AssistantMissing,
    ThreadExists,
    ThreadMissing,
)
from pronghorn.runtime import errors
from pronghorn.runtime.engine.message_input import InvalidRunInput
from pronghorn.runtime.engine.thread_busy import ThreadBusy
from pronghorn.runtime.wiring.app_runtime import AppRuntime, NotStarted

CASES = [
    (errors.NotFound.of("Run", "r1"), 404, "Run with ID r1 not found"),
    (errors.NotFound("Graph 'g' is not loaded"), 404, "Graph 'g' is not loaded"),
    (errors.Conflict("Thread t is busy"), 409, "Thread t is busy"),
    (ThreadBusy("t", "r"), 409, "Thread t is busy: a run is in flight (run r)"),
    (errors.InvalidRun("Unknown model 'x'"), 400, "Unknown model 'x'"),
    (InvalidRunInput("input.messages[0]: bad"), 400, "input.messages[0]: bad"),
    (errors.RefusedRun("Webhook refused"), 422, "Webhook refused"),
    (errors.Unavailable("shutting down"), 503, "shutting down"),
    (errors.Forbidden("Not yours"), 403, "Not yours"),
    (errors.TooLarge("Too big"), 413, "Too big"),
    # a thread create's refusals (threads service), mapped once by domain_error
    (errors.domain_error(ThreadExists("t")), 409, "Thread t already exists"),
    (errors.domain_error(ThreadMissing("t")), 404, "Thread with ID t not found"),
    # an assistant create's clash and a cron's unknown assistant (their services' units)
    (errors.domain_error(AssistantExists("a")), 409, "Assistant a already exists"),
    (errors.domain_error(AssistantMissing("a")), 404, "Assistant with ID a not found"),
]


@pytest.mark.parametrize(("exc", "status", "detail"), CASES)
async def test_domain_errors_map_to_their_status(
    exc: errors.DomainError, status: int, detail: str
) -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise exc

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        r = await http.get("/boom")
    assert r.status_code == status
    assert r.json() == {"detail": detail}


def test_every_domain_error_kind_has_a_status() -> None:
    kinds = [
        k
        for k in vars(errors).values()
        if isinstance(k, type) and issubclass(k, errors.DomainError) and k is not errors.DomainError
    ]
    assert kinds and all(k in DOMAIN_STATUS for k in kinds)


def test_components_cannot_be_read_before_they_start(tmp_path: Path) -> None:
    runtime = AppRuntime(
        settings=None,  # type: ignore[arg-type]
        data_dir=tmp_path,
        db=None,  # type: ignore[arg-type]
        checkpointer=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
        graphs=None,  # type: ignore[arg-type]
        authenticator=NoAuth(),
        authorizer=AllowAll(),
    )
    assert not runtime.is_started("runs")
    with pytest.raises(NotStarted, match=r"runtime\.runs "):
        _ = runtime.runs
    sentinel = object()
    runtime.broker = sentinel  # type: ignore[assignment]
    assert runtime.is_started("broker") and runtime.broker is sentinel
    other = AppRuntime(
        settings=None,  # type: ignore[arg-type]
        data_dir=tmp_path,
        db=None,  # type: ignore[arg-type]
        checkpointer=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
        graphs=None,  # type: ignore[arg-type]
        authenticator=NoAuth(),
        authorizer=AllowAll(),
    )
    assert not other.is_started("broker")  # per instance, never shared through the class
