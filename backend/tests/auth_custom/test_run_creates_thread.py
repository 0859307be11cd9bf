"""A run with `if_not_exists: "create"` on a missing thread creates it as `POST /threads`
would: authorized as `threads.create`, whose handler may refuse it (403, nothing written)
or stamp the new thread's metadata — through REST (the official SDK) and the in-process
Python client alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from langgraph_sdk.errors import NotFoundError, PermissionDeniedError
from sqlalchemy.engine import Connection

from pronghorn.auth.principal import Principal
from pronghorn.client import Pronghorn
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.errors import Forbidden
from support.inproc import InProcessServer
from support.live import base_config

AUTH = """
from langgraph_sdk import Auth

auth = Auth()
USERS = {"alice-token": "alice", "bob-token": "bob"}


@auth.authenticate
async def authenticate(authorization: str | None) -> dict:
    token = (authorization or "").removeprefix("Bearer ")
    if token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return {"identity": USERS[token]}


@auth.on.threads.create
async def create_thread(ctx: Auth.types.AuthContext, value: dict) -> None:
    if ctx.user.identity == "bob":
        raise Auth.exceptions.HTTPException(status_code=403, detail="bob may not create threads")
    value.setdefault("metadata", {})["stamped_by"] = ctx.user.identity


@auth.on
async def allow_the_rest(ctx: Auth.types.AuthContext, value: dict) -> None:
    return None
"""
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
INPUT: dict[str, Any] = {"messages": [{"role": "human", "content": "hi"}]}


def _config(workdir: Path) -> dict[str, object]:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "auth.py").write_text(AUTH, encoding="utf-8")
    return base_config(auth={"mode": "custom", "custom": "./auth.py:auth"})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    workdir = tmp_path_factory.mktemp("runthread")
    app = InProcessServer(workdir, _config(workdir)).start()
    try:
        yield app
    finally:
        app.stop()


async def test_a_refused_thread_creation_refuses_the_run_and_writes_nothing(
    server: InProcessServer,
) -> None:
    bob, alice = server.sdk(headers=BOB), server.sdk(headers=ALICE)
    try:
        tid = str(uuid.uuid4())
        with pytest.raises(httpx.HTTPStatusError) as waited:
            await bob.runs.wait(tid, "echo", input=INPUT, if_not_exists="create")
        assert waited.value.response.status_code == 403
        assert waited.value.response.json() == {"detail": "bob may not create threads"}
        with pytest.raises(PermissionDeniedError):
            await bob.runs.create(tid, "echo", input=INPUT, if_not_exists="create")
        async with server.ahttp(headers=BOB) as http:
            streamed = await http.post(
                f"/api/langgraph/threads/{tid}/runs/stream",
                json={"assistant_id": "echo", "input": INPUT, "if_not_exists": "create"},
            )
            assert streamed.status_code == 403, streamed.text
        for who in (bob, alice):
            with pytest.raises(NotFoundError):
                await who.threads.get(tid)
        # Nothing written: the id is still free, and alice may create it (and a run on it).
        created = await alice.threads.create(thread_id=tid)
        assert (created["metadata"] or {}).get("stamped_by") == "alice"
        assert await alice.runs.list(tid) == []
    finally:
        await bob.aclose()
        await alice.aclose()


async def test_an_allowed_creation_stamps_the_new_thread(server: InProcessServer) -> None:
    alice = server.sdk(headers=ALICE)
    try:
        tid = str(uuid.uuid4())
        out = await alice.runs.wait(tid, "echo", input=INPUT, if_not_exists="create")
        assert isinstance(out, dict) and out["messages"][-1]["content"] == "echo: hi"
        thread = await alice.threads.get(tid)
        assert (thread["metadata"] or {}).get(
            "stamped_by"
        ) == "alice"  # the handler ran on creation
        assert (thread["metadata"] or {}).get("graph_id") == "echo"
        # An existing thread is not created again: bob, refused creation, may not use it
        # either (another user's thread is missing), but alice's next run goes through.
        again = await alice.runs.wait(tid, "echo", input=INPUT, if_not_exists="create")
        assert isinstance(again, dict) and again["messages"][-1]["content"] == "echo: hi"
    finally:
        await alice.aclose()


async def test_the_python_client_is_refused_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    bob = Principal(identity="bob", display_name="Bob", kind="custom")
    async with Pronghorn.open(tmp_path / "config.yaml", base_dir=tmp_path) as ph:
        client = ph.as_user(bob)
        tid = str(uuid.uuid4())
        with pytest.raises(Forbidden):
            await client.chat(tid, "hi", assistant_id="echo", if_not_exists="create")

        def unit(conn: Connection):
            assert threads_repo.get_row(conn, tid) is None

        await ph.runtime.db.read(unit)
