"""`GET /api/threads/{id}/runs/{run_id}/workspace-changes` on real runs: the files changed in
the thread's workspace and outputs while the run ran are recorded for that run, in
DeerFlow's shape; a run that changed nothing has `available: false`; another user's run is
404."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx

from deerflow_b.shapes_b import WORKSPACE_CHANGES, WORKSPACE_FILE, check_shape
from support.inproc import InProcessServer
from support.sdk import as_state

PASSWORD = "a long enough password"


async def test_a_run_records_what_changed_while_it_ran(
    app: InProcessServer, admin: httpx.Client, tmp_path: Path
) -> None:
    csrf = {"X-CSRF-Token": admin.headers["X-CSRF-Token"]}
    async with app.ahttp(cookies=admin.cookies, headers=csrf) as http:
        await _check(app, http, tmp_path)


async def _check(app: InProcessServer, admin: httpx.AsyncClient, tmp_path: Path) -> None:
    key = (await admin.post("/api/auth/keys", json={"name": "sdk"})).json()["key"]
    sdk = app.sdk(headers={"x-api-key": key})
    me = (await admin.get("/api/auth/me")).json()["user"]["id"]
    thread = await sdk.threads.create()
    tid = thread["thread_id"]
    folder = app.workdir / "data" / "users" / me / "threads" / tid
    (folder / "workspace").mkdir(parents=True)
    (folder / "outputs").mkdir()
    (folder / "workspace" / "plan.md").write_text("step 1\nstep 2\n")
    (folder / "workspace" / "scratch.txt").write_text("temp\n")

    # a quiet run first: nothing changes, nothing is recorded
    quiet = await sdk.runs.wait(tid, "echo", input={"messages": [{"role": "user", "content": "a"}]})
    runs = await sdk.runs.list(tid)
    quiet_id = runs[0]["run_id"]
    assert as_state(quiet)["messages"][-1]["content"] == "echo: a"

    gate = tmp_path / f"gate-{uuid.uuid4().hex}"
    body = {"messages": [{"role": "user", "content": "b"}], "gate": str(gate)}
    run_id = None
    async for part in sdk.runs.stream(tid, "echo", input=body, stream_mode=["custom"]):
        if part.event == "metadata":
            run_id = part.data["run_id"]
        if part.event == "custom" and part.data.get("progress") == "prepare":
            # the run is under way (its start snapshot is taken): change the folders
            (folder / "workspace" / "plan.md").write_text("step 1\nstep 2 done\nstep 3\n")
            (folder / "workspace" / "scratch.txt").unlink()
            (folder / "outputs" / "answer.md").write_text("# Answer\n42\n")
            gate.touch()
    assert run_id is not None

    url = f"/api/threads/{tid}/runs/{run_id}/workspace-changes"
    got = (await admin.get(url, params={"include_files": "true", "include_diff": "true"})).json()
    check_shape(got, WORKSPACE_CHANGES)
    assert got["available"] is True
    for entry in got["files"]:
        check_shape(entry, WORKSPACE_FILE)
    by_path = {f["path"]: f for f in got["files"]}
    assert {p: f["status"] for p, f in by_path.items()} == {
        "/mnt/user-data/workspace/plan.md": "modified",
        "/mnt/user-data/workspace/scratch.txt": "deleted",
        "/mnt/user-data/outputs/answer.md": "created",
    }
    assert "+step 2 done" in by_path["/mnt/user-data/workspace/plan.md"]["diff"]
    assert got["summary"]["created"] == 1 and got["summary"]["modified"] == 1
    assert got["summary"]["deleted"] == 1

    no_diff = (await admin.get(url, params={"include_diff": "false"})).json()
    assert len(no_diff["files"]) == 3 and all(f["diff"] == "" for f in no_diff["files"])
    no_files = (await admin.get(url, params={"include_files": "false"})).json()
    assert no_files["files"] == [] and no_files["summary"] == got["summary"]

    quiet_changes = (
        await admin.get(f"/api/threads/{tid}/runs/{quiet_id}/workspace-changes")
    ).json()
    check_shape(quiet_changes, WORKSPACE_CHANGES)
    assert quiet_changes["available"] is False and quiet_changes["files"] == []

    # another user: not found, for the run and for an unknown run id alike
    name = f"wc-{uuid.uuid4().hex[:8]}"
    made = await admin.post("/api/auth/users", json={"username": name, "password": PASSWORD})
    assert made.status_code == 201
    async with app.ahttp() as other:
        body = {"username": name, "password": PASSWORD}
        assert (await other.post("/api/auth/login", json=body)).status_code == 200
        assert (await other.get(url)).status_code == 404
    unknown = f"/api/threads/{tid}/runs/{uuid.uuid4()}/workspace-changes"
    assert (await admin.get(unknown)).status_code == 404
