"""The protocols under `auth.mode: custom` (the shipped examples/custom_auth/auth.py): its
`authenticate` decides who calls, its `@auth.on.threads` handlers which threads they see."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import openai
import pytest

from protocols.conftest import protocol_config
from protocols.test_openai_chat import client_of
from support.inproc import InProcessServer
from support.live import BACKEND_DIR

EXAMPLE = BACKEND_DIR.parent / "examples" / "custom_auth" / "auth.py"


@pytest.fixture(scope="module")
def custom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    workdir = tmp_path_factory.mktemp("protocols-custom")
    shutil.copy(EXAMPLE, workdir / "auth.py")
    cfg = protocol_config(auth={"mode": "custom", "custom": "./auth.py:auth"})
    server = InProcessServer(workdir, cfg).start()
    yield server
    server.stop()


def test_openai_calls_go_through_custom_auth(custom: InProcessServer):
    with (
        client_of(custom, api_key="unknown-token") as nobody,
        pytest.raises(openai.AuthenticationError),
    ):
        nobody.models.list()
    with client_of(custom, api_key="alice-token") as alice:
        first = alice.chat.completions.with_raw_response.create(
            model="echo", user="c1", messages=[{"role": "user", "content": "one"}]
        )
        thread_id = first.headers["x-pronghorn-thread-id"]
        # the thread was created as POST /threads would: the policy stamped its owner ...
        with custom.http(headers={"Authorization": "Bearer alice-token"}) as http:
            thread = http.get(f"/api/langgraph/threads/{thread_id}").json()
        assert thread["metadata"]["owner"] == "alice"
        # ... so the policy's thread filter lets alice continue it
        second = alice.chat.completions.create(
            model="echo", user="c1", messages=[{"role": "user", "content": "two"}]
        )
        assert second.choices[0].message.content == "echo: two"
    with client_of(custom, api_key="bob-token") as bob, pytest.raises(openai.NotFoundError):
        bob.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "peek"}],
            extra_headers={"X-Pronghorn-Thread-Id": thread_id},
        )
