"""What the workspace-changes recorder costs a run of a thread that has no folders (most
runs of graphs that never touch files): no scan at all, neither as the run starts nor as it
ends; and a thread whose folders appear only during the run still has them recorded."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient

from pronghorn.sandbox import workspace_scan
from support.inproc import InProcessServer


async def _sdk_and_me(
    app: InProcessServer, admin: httpx.AsyncClient
) -> tuple[LangGraphClient, str]:
    key = (await admin.post("/api/auth/keys", json={"name": "sdk"})).json()["key"]
    me = (await admin.get("/api/auth/me")).json()["user"]["id"]
    return app.sdk(headers={"x-api-key": key}), me


async def test_a_run_of_a_thread_without_folders_scans_nothing(
    app: InProcessServer, admin: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[dict[str, Path]] = []
    real = workspace_scan.snapshot

    def counted(
        roots: dict[str, Path], previous: workspace_scan.Snapshot | None = None
    ) -> workspace_scan.Snapshot:
        scans.append(roots)
        return real(roots, previous)

    monkeypatch.setattr(workspace_scan, "snapshot", counted)
    csrf = {"X-CSRF-Token": admin.headers["X-CSRF-Token"]}
    async with app.ahttp(cookies=admin.cookies, headers=csrf) as http:
        sdk, me = await _sdk_and_me(app, http)
        tid = (await sdk.threads.create())["thread_id"]
        folder = app.workdir / "data" / "users" / me / "threads" / tid
        out = await sdk.runs.wait(
            tid, "echo", input={"messages": [{"role": "user", "content": "a"}]}
        )
        assert isinstance(out, dict) and out["messages"][-1]["content"] == "echo: a"
        assert not folder.exists()
        assert scans == []  # without the folder check: one scan as it starts, one as it ends
        run_id = (await sdk.runs.list(tid))[0]["run_id"]
        got = (await http.get(f"/api/threads/{tid}/runs/{run_id}/workspace-changes")).json()
        assert got["available"] is False

        # once the thread has folders, every run scans them as before
        (folder / "workspace").mkdir(parents=True)
        await sdk.runs.wait(tid, "echo", input={"messages": [{"role": "user", "content": "b"}]})
        assert len(scans) == 2


async def test_folders_made_while_the_run_ran_are_recorded(
    app: InProcessServer, admin: httpx.Client, tmp_path: Path
) -> None:
    csrf = {"X-CSRF-Token": admin.headers["X-CSRF-Token"]}
    async with app.ahttp(cookies=admin.cookies, headers=csrf) as http:
        sdk, me = await _sdk_and_me(app, http)
        tid = (await sdk.threads.create())["thread_id"]
        folder = app.workdir / "data" / "users" / me / "threads" / tid
        gate = tmp_path / f"gate-{uuid.uuid4().hex}"
        body = {"messages": [{"role": "user", "content": "b"}], "gate": str(gate)}
        run_id = None
        async for part in sdk.runs.stream(tid, "echo", input=body, stream_mode=["custom"]):
            if part.event == "metadata":
                run_id = part.data["run_id"]
            if part.event == "custom" and part.data.get("progress") == "prepare":
                assert not folder.exists()  # the run started on a thread without folders
                (folder / "outputs").mkdir(parents=True)
                (folder / "outputs" / "answer.md").write_text("# Answer\n42\n")
                gate.touch()
        assert run_id is not None
        url = f"/api/threads/{tid}/runs/{run_id}/workspace-changes"
        got = (await http.get(url, params={"include_files": "true", "include_diff": "true"})).json()
        assert got["available"] is True
        assert [(f["path"], f["status"]) for f in got["files"]] == [
            ("/mnt/user-data/outputs/answer.md", "created")
        ]
        assert "+42" in got["files"][0]["diff"]
