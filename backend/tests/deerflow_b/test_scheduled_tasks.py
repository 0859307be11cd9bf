"""DeerFlow's scheduled-task screen on Pronghorn's crons: each task is a cron of its owner
that the LangGraph SDK sees (and each SDK cron is a task), with pause/resume, edit, trigger,
run history and delete as the screen calls them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest

from deerflow_b.shapes_b import (
    SCHEDULED_TASK,
    SCHEDULED_TASK_RUN,
    TASK_RUN_STATUSES,
    TASK_STATUSES,
    check_shape,
)
from support.inproc import InProcessServer
from support.sdk import values, wire

PASSWORD = "a long enough password"


class Person:
    """A user as both clients see them: DeerFlow's REST calls and the LangGraph SDK."""

    def __init__(self, app: InProcessServer, admin: httpx.Client) -> None:
        name = f"st-{uuid.uuid4().hex[:8]}"
        made = admin.post("/api/auth/users", json={"username": name, "password": PASSWORD})
        assert made.status_code == 201, made.text
        self.http = app.http()
        resp = self.http.post("/api/auth/login", json={"username": name, "password": PASSWORD})
        assert resp.status_code == 200
        self.http.headers["X-CSRF-Token"] = resp.json()["csrf_token"]
        key = self.http.post("/api/auth/keys", json={"name": "sdk"}).json()["key"]
        self.sdk = app.sdk(headers={"x-api-key": key})


@pytest.fixture
def people(app: InProcessServer, admin: httpx.Client) -> Iterator[tuple[Person, Person]]:
    ann, bob = Person(app, admin), Person(app, admin)
    yield ann, bob
    ann.http.close()
    bob.http.close()


def _task(person: Person, **body: object) -> dict:
    base = {
        "context_mode": "fresh_thread_per_run",
        "title": "Morning digest",
        "prompt": "summarise the news",
        "schedule_type": "cron",
        "schedule_spec": {"cron": "0 7 * * 1-5"},
        "timezone": "Asia/Shanghai",
        "assistant_id": "echo",
    }
    resp = person.http.post("/api/scheduled-tasks", json={**base, **body})
    assert resp.status_code == 200, resp.text
    check_shape(resp.json(), SCHEDULED_TASK)
    return resp.json()


async def test_a_task_is_a_cron_of_its_owner_and_back(people: tuple[Person, Person]) -> None:
    ann, bob = people
    task = _task(ann)
    assert task["status"] == "enabled" and task["context_mode"] == "fresh_thread_per_run"
    assert task["schedule_spec"] == {"cron": "0 7 * * 1-5"} and task["run_count"] == 0
    next_local = datetime.fromisoformat(task["next_run_at"]).astimezone(ZoneInfo("Asia/Shanghai"))
    assert (next_local.hour, next_local.minute) == (7, 0) and next_local.weekday() < 5

    crons = await ann.sdk.crons.search()
    (cron,) = [c for c in crons if c["cron_id"] == task["id"]]
    assert cron["schedule"] == "0 7 * * 1-5" and cron["timezone"] == "Asia/Shanghai"
    assert cron["payload"]["input"]["messages"][-1]["content"] == "summarise the news"

    made = await ann.sdk.crons.create(
        "echo", schedule="*/30 * * * *", input={"messages": [{"role": "user", "content": "hi"}]}
    )
    listed = ann.http.get("/api/scheduled-tasks").json()
    for entry in listed:
        check_shape(entry, SCHEDULED_TASK)
        assert entry["status"] in TASK_STATUSES
    sdk_task = next(t for t in listed if t["id"] == wire(made)["cron_id"])
    assert sdk_task["prompt"] == "hi" and sdk_task["schedule_spec"] == {"cron": "*/30 * * * *"}
    assert {t["id"] for t in listed} >= {task["id"], wire(made)["cron_id"]}

    # the other user sees neither, and cannot touch them
    assert bob.http.get("/api/scheduled-tasks").json() == []
    assert bob.http.get(f"/api/scheduled-tasks/{task['id']}").status_code == 404
    assert bob.http.post(f"/api/scheduled-tasks/{task['id']}/pause").status_code == 404
    assert bob.http.delete(f"/api/scheduled-tasks/{task['id']}").status_code == 404
    assert bob.http.get(f"/api/scheduled-tasks/{task['id']}/runs").status_code == 404
    assert [c for c in await bob.sdk.crons.search() if c["cron_id"] == task["id"]] == []


async def test_pause_resume_edit_delete(people: tuple[Person, Person]) -> None:
    ann, _ = people
    task = _task(ann)
    tid = task["id"]
    paused = ann.http.post(f"/api/scheduled-tasks/{tid}/pause").json()
    assert paused["status"] == "paused" and paused["next_run_at"] is None
    found = [c for c in await ann.sdk.crons.search() if c["cron_id"] == tid]
    assert found[0]["enabled"] is False
    resumed = ann.http.post(f"/api/scheduled-tasks/{tid}/resume").json()
    assert resumed["status"] == "enabled" and resumed["next_run_at"] is not None

    edited = ann.http.patch(
        f"/api/scheduled-tasks/{tid}",
        json={"title": "Evening digest", "schedule_spec": {"cron": "0 19 * * *"}},
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["title"] == "Evening digest"
    assert edited.json()["prompt"] == "summarise the news"
    found = [c for c in await ann.sdk.crons.search() if c["cron_id"] == tid]
    assert found[0]["schedule"] == "0 19 * * *"
    bad = ann.http.patch(f"/api/scheduled-tasks/{tid}", json={"schedule_spec": {"cron": "* *"}})
    assert bad.status_code == 422

    gone = ann.http.delete(f"/api/scheduled-tasks/{tid}")
    assert gone.status_code == 200 and gone.json() == {"id": tid, "deleted": True}
    assert [c for c in await ann.sdk.crons.search() if c["cron_id"] == tid] == []
    assert ann.http.get(f"/api/scheduled-tasks/{tid}").status_code == 404


def test_a_once_task_fires_once(people: tuple[Person, Person]) -> None:
    ann, _ = people
    at = (datetime.now(UTC) + timedelta(days=2)).replace(second=0, microsecond=0)
    local = at.astimezone(ZoneInfo("Europe/Paris")).replace(tzinfo=None)
    task = _task(
        ann,
        schedule_type="once",
        schedule_spec={"run_at": local.isoformat()},
        timezone="Europe/Paris",
    )
    assert task["schedule_type"] == "once" and task["status"] == "enabled"
    assert datetime.fromisoformat(task["next_run_at"]) == at
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    refused = ann.http.post(
        "/api/scheduled-tasks",
        json={
            **{k: task[k] for k in ("title", "prompt", "timezone")},
            "schedule_type": "once",
            "schedule_spec": {"run_at": past},
        },
    )
    assert refused.status_code == 422


async def test_trigger_makes_a_manual_run_in_the_history(people: tuple[Person, Person]) -> None:
    ann, _ = people
    thread = await ann.sdk.threads.create()
    task = _task(ann, context_mode="reuse_thread", thread_id=thread["thread_id"])
    assert task["context_mode"] == "reuse_thread" and task["thread_id"] == thread["thread_id"]
    on_thread = ann.http.get(f"/api/threads/{thread['thread_id']}/scheduled-tasks").json()
    assert [t["id"] for t in on_thread] == [task["id"]]

    fired = ann.http.post(f"/api/scheduled-tasks/{task['id']}/trigger")
    assert fired.status_code == 200 and fired.json() == {"id": task["id"], "triggered": True}
    (entry,) = ann.http.get(f"/api/scheduled-tasks/{task['id']}/runs").json()
    await ann.sdk.runs.join(thread["thread_id"], entry["run_id"])

    (entry,) = ann.http.get(f"/api/scheduled-tasks/{task['id']}/runs").json()
    check_shape(entry, SCHEDULED_TASK_RUN)
    assert entry["status"] in TASK_RUN_STATUSES
    assert entry["trigger"] == "manual" and entry["status"] == "success"
    assert entry["thread_id"] == thread["thread_id"] and entry["finished_at"]
    after = ann.http.get(f"/api/scheduled-tasks/{task['id']}").json()
    assert after["run_count"] == 1 and after["last_run_id"] == entry["run_id"]
    assert after["last_thread_id"] == thread["thread_id"] and after["status"] == "enabled"
    state = await ann.sdk.threads.get_state(thread["thread_id"])
    assert values(state)["messages"][-1]["content"] == "echo: summarise the news"
