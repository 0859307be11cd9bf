"""A run executes as its owner: `langgraph_auth_user` and friends reach the graph, the
factory's ServerRuntime user is the owner, files live in the owner's folder, and a
cron's runs execute as the cron's owner (kept on the run row for a restart)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from isolation.appkit import PRINCIPALS, App
from pronghorn.runtime.access import principal_from_record, principal_record
from pronghorn.sandbox.paths import adopt_legacy_folder, user_folder
from support.sdk import values

HUMAN: dict[str, Any] = {"messages": [{"role": "human", "content": "hi"}]}


async def test_the_graph_sees_who_runs_it(app: App) -> None:
    for key, identity, folder in (
        ("alice", "alice", "alice"),
        ("bob", "bob@example.org", user_folder("bob@example.org")),
    ):
        client = app.sdk(key)
        thread = await client.threads.create()
        out: Any = await client.runs.wait(thread["thread_id"], "whoami", input=HUMAN)
        assert out["auth_user_id"] == identity
        assert out["auth_user"]["identity"] == identity
        assert out["auth_user"]["display_name"] == PRINCIPALS[key].display_name
        assert out["auth_user"]["is_authenticated"] is True
        assert out["auth_permissions"] == list(PRINCIPALS[key].permissions)
        assert out["factory_user"] == identity
        assert out["user_id"] == folder
    assert out["auth_user"]["team"] == "blue"  # bob's custom fields reach the graph
    assert user_folder("bob@example.org").startswith("u-")


async def test_uploads_land_in_the_owners_folder(app: App) -> None:
    bob = app.sdk("bob")
    tid = (await bob.threads.create())["thread_id"]
    async with app.http("bob") as http:
        r = await http.post(
            f"/api/threads/{tid}/uploads", files={"files": ("a.txt", b"bob's", "text/plain")}
        )
        assert r.status_code == 200, r.text
    where = app.data_dir / "users" / user_folder("bob@example.org") / "threads" / tid
    assert (where / "uploads" / "a.txt").read_bytes() == b"bob's"
    assert not (app.data_dir / "users" / "default").exists()


async def test_a_crons_runs_execute_as_its_owner(app: App) -> None:
    alice = app.sdk("alice")
    tid = (await alice.threads.create())["thread_id"]
    await alice.crons.create_for_thread(tid, "whoami", schedule="0 0 1 1 *", input=HUMAN)
    fired = await app.runtime.scheduler.tick(at=datetime.now(UTC) + timedelta(days=400))
    assert fired == 1
    (run,) = await alice.runs.list(tid)
    await alice.runs.join(tid, run["run_id"])
    state = await alice.threads.get_state(tid)
    assert values(state)["auth_user_id"] == "alice"
    assert values(state)["factory_user"] == "alice"
    # The principal is on the run row: a run resumed after a restart executes as alice.
    with sqlite3.connect(app.data_dir / "pronghorn.db") as conn:
        owner_id, principal = conn.execute(
            "SELECT owner_id, principal FROM runs WHERE run_id = ?", (run["run_id"],)
        ).fetchone()
    assert owner_id == "alice" and json.loads(principal)["identity"] == "alice"


def test_principal_records_round_trip() -> None:
    for principal in PRINCIPALS.values():
        assert principal_from_record(principal_record(principal), principal.identity) == principal
    legacy = principal_from_record(None, "local")
    assert legacy.identity == "local" and legacy.role == "user"


def test_folders_from_before_owners_move_to_the_local_user(tmp_path: Path) -> None:
    old = tmp_path / "users" / "default" / "threads" / "t" / "uploads"
    old.mkdir(parents=True)
    (old / "a.txt").write_text("kept")
    assert adopt_legacy_folder(tmp_path)
    assert (tmp_path / "users" / "local" / "threads" / "t" / "uploads" / "a.txt").read_text() == (
        "kept"
    )
    assert not (tmp_path / "users" / "default").exists()
    assert not adopt_legacy_folder(tmp_path)  # once
