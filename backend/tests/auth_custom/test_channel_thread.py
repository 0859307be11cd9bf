"""An IM chat's thread is created as `POST /threads` creates one (the threads service):
the `threads.create` handler sees the same request (the new id, `if_exists`, `ttl`) and
may stamp the metadata or refuse, and the thread gets the same defaults — mapped to the
chat in the same transaction, or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pronghorn.auth.principal import Principal
from pronghorn.client import Pronghorn
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Forbidden
from pronghorn.runtime.services import threads
from pronghorn.runtime.services.channel_state import ChannelState
from support.live import base_config
from support.sdk import as_object

AUTH = """
from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> dict:
    return {"identity": "alice"}


@auth.on.threads.create
async def create_thread(ctx: Auth.types.AuthContext, value: dict) -> None:
    if ctx.user.identity == "bob":
        raise Auth.exceptions.HTTPException(status_code=403, detail="bob may not create threads")
    value["metadata"]["stamped"] = [ctx.user.identity, value["thread_id"], value["if_exists"]]


@auth.on
async def allow_the_rest(ctx: Auth.types.AuthContext, value: dict) -> None:
    return None
"""
ALICE = Principal(identity="alice", display_name="Alice", kind="custom")
BOB = Principal(identity="bob", display_name="Bob", kind="custom")


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    (tmp_path / "auth.py").write_text(AUTH, encoding="utf-8")
    config = base_config(auth={"mode": "custom", "custom": "./auth.py:auth"})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


async def test_a_chats_thread_is_made_as_post_threads_makes_one(config_path: Path) -> None:
    async with Pronghorn.open(config_path, base_dir=config_path.parent) as ph:
        runtime, alice = ph.runtime, Access(ALICE)
        state = ChannelState(runtime)
        tid = await state.new_thread("telegram", "chat-1", ALICE, "gpt-x")
        by_chat = await threads.get(runtime, alice, tid, ttl=True)
        metadata: dict[str, object] = {"channel": "telegram", "chat": "chat-2"}
        posted = await threads.create(runtime, alice, threads.NewThread(metadata=metadata))

        assert by_chat["metadata"] == {
            "channel": "telegram",
            "chat": "chat-1",
            "stamped": ["alice", tid, "raise"],  # the handler saw what POST /threads sends
        }
        assert as_object(posted["metadata"])["stamped"] == ["alice", posted["thread_id"], "raise"]
        volatile = {"thread_id", "metadata", "created_at", "updated_at", "state_updated_at"}
        assert {k: v for k, v in by_chat.items() if k not in volatile} == {
            k: v for k, v in posted.items() if k not in volatile
        }
        mapped = await state.chat_thread("telegram", "chat-1")
        assert mapped is not None and (mapped.thread_id, mapped.owner_id) == (tid, "alice")
        assert mapped.model_name == "gpt-x"

        with pytest.raises(Forbidden):
            await state.new_thread("telegram", "chat-b", BOB, None)
        assert await state.chat_thread("telegram", "chat-b") is None  # nothing mapped
