"""DingTalk's Stream connection runs on one replica at a time: two gateways in this process
share one database (the SQL lease); only the holder opens the connection, the other is on
standby, and takes over (a new ticket, a new connection) when the holder stops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.kit import FAST, scripted_config, serving, until
from channels.kit import settled_text as final_text
from fakes.dingtalk_server import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from scaleout.conftest import MUTED, shared_db  # noqa: F401
from support.inproc import InProcessServer

pytestmark = pytest.mark.filterwarnings(MUTED)


@pytest.fixture
def fake() -> Iterator[FakeDingTalk]:
    yield from serving(FakeDingTalk())


def _status(srv: InProcessServer) -> dict[str, Any]:
    with srv.http() as http:
        (found,) = [s for s in http.get("/api/channels").json() if s["name"] == "dingtalk"]
    return found


def test_one_replica_holds_the_stream_and_the_other_takes_over(
    tmp_path: Path,
    shared_db: dict[str, Any],  # noqa: F811
    fake: FakeDingTalk,
):
    section = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "api_base_url": fake.url,
        "oapi_base_url": fake.url,
        **FAST,
    }
    cfg = scripted_config(
        [{"steps": [{"text": "Hi from a replica."}]}],
        database=shared_db,
        channels={"access": {"mode": "open"}, "lease_ttl_s": 3.0, "dingtalk": section},
    )
    a = InProcessServer(tmp_path / "a", cfg).start(timeout=120)
    b = InProcessServer(tmp_path / "b", cfg).start(timeout=120)
    try:

        def roles() -> tuple[InProcessServer, InProcessServer] | None:
            sa, sb = _status(a), _status(b)
            if sa.get("running") and sb["standby"]:
                return a, b
            if sb.get("running") and sa["standby"]:
                return b, a
            return None

        holder, standby = until(roles)
        fake.wait_for(lambda: fake.of("ws_connect"))
        assert len(fake.of("ws_connect")) == 1 and len(fake.of("open")) == 1
        fake.push(fake.message(conversation="cid-1", staff="s1", text="hello"))
        final_text(fake, "single:s1", "Hi from a replica.")
        holder.stop()
        until(lambda: _status(standby).get("running"))
        fake.wait_for(lambda: len(fake.of("ws_connect")) == 2)
        fake.push(fake.message(conversation="cid-2", staff="s2", text="hello again"))
        final_text(fake, "single:s2", "Hi from a replica.")
    finally:
        a.stop()
        b.stop()
