"""The embedded client (`pronghorn.client.Pronghorn`): the same stream parts as the SDK for
the same run, threads, uploads, artifacts and memory in-process, and its own AppRuntime."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.schema import StreamMode

from isolation.appkit import PRINCIPALS
from memory.test_api import running
from pronghorn.client import Pronghorn
from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.errors import NotFound

OUT = "/mnt/user-data/outputs"
SCRIPT = [
    {
        "tool_calls": [
            {
                "name": "write_file",
                "args": {"description": "w", "path": f"{OUT}/a.md", "content": "# A\n"},
            }
        ]
    },
    {"text": "I wrote the file for you, all done."},
]
MODELS = [{"name": "s", "provider": "scripted", "script": SCRIPT}]
IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|call_[0-9a-f]{16,}")
MODES: list[StreamMode] = ["values", "messages-tuple", "updates", "custom"]


def normalized(parts: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Ids become placeholders by order of first appearance (each run has its own)."""
    text = json.dumps(parts, sort_keys=True)
    names: dict[str, str] = {}
    text = IDS.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names)}>"), text)
    return [tuple(p) for p in json.loads(text)]


async def test_streams_the_same_parts_as_the_sdk(tmp_path: Path) -> None:
    cfg = {"models": MODELS, "agent": {"default_model": "s"}, "sandbox": {"isolation": "none"}}
    async with running(tmp_path, **cfg) as app:
        sdk = app.sdk("alice")
        tid = (await sdk.threads.create())["thread_id"]
        body: dict[str, Any] = {"messages": [{"role": "human", "content": "write a file"}]}
        via_sdk = [
            (p.event, p.data)
            async for p in sdk.runs.stream(tid, "lead_agent", input=body, stream_mode=MODES)
        ]
        await sdk.http.client.aclose()
        client = Pronghorn(app.runtime, principal=PRINCIPALS["alice"])
        thread = await client.create_thread()
        via_client = [
            (p.event, p.data)
            async for p in client.stream(thread["thread_id"], "write a file", stream_mode=MODES)
        ]
        # the run is an ordinary one of alice's: the SDK sees it, and replaying that very
        # run's stream from the event log gives exactly the parts the client yielded
        sdk = app.sdk("alice")
        runs = await sdk.runs.list(thread["thread_id"])
        replayed = [
            (p.event, p.data)
            async for p in sdk.runs.join_stream(
                thread["thread_id"], runs[0]["run_id"], last_event_id="-1"
            )
        ]
        await sdk.http.client.aclose()
    assert runs[0]["status"] == "success"
    assert [e for e, _ in via_client] == [e for e, _ in via_sdk]
    assert via_client[0][0] == "metadata" and "error" not in {e for e, _ in via_client}
    assert normalized(via_client) == normalized(via_sdk)
    assert replayed == via_client


async def test_own_runtime_threads_files_memory_and_isolation(tmp_path: Path) -> None:
    config = AppConfig.model_validate(
        {
            "data_dir": str(tmp_path / "data"),
            "models": MODELS,
            "agent": {"default_model": "s"},
            "sandbox": {"isolation": "none"},
            "memory": {"debounce_s": 3600},
        }
    )
    async with Pronghorn.open(config, base_dir=tmp_path) as ph:
        thread = await ph.create_thread(metadata={"channel": "test"})
        tid = thread["thread_id"]
        assert (await ph.get_thread(tid))["metadata"] == {"channel": "test"}
        up = await ph.upload(tid, "../notes.txt", b"hello")
        assert up["filename"] == "notes.txt"
        assert await ph.list_uploads(tid) == [{"filename": "notes.txt", "size": 5}]
        values = await ph.chat(tid, "write a file")
        assert values["messages"][-1]["content"] == "I wrote the file for you, all done."
        assert await ph.read_artifact(tid, "outputs/a.md") == b"# A\n"
        assert await ph.read_artifact(tid, "uploads/notes.txt") == b"hello"

        fact = await ph.add_fact("Prefers short answers", category="preference")
        await ph.update_fact(str(fact["id"]), confidence=0.5)
        mem = await ph.get_memory()
        assert [(f["content"], f["confidence"]) for f in mem["facts"]] == [  # type: ignore[union-attr]
            ("Prefers short answers", 0.5)
        ]
        # the finished run is queued for a memory update; clearing forgets it too
        assert ph.runtime.memory.status("local").queued_for_user == 1
        saved = await ph.export_memory()
        await ph.clear_memory()
        assert ph.runtime.memory.status("local").queued_for_user == 0
        assert (await ph.get_memory())["facts"] == []
        await ph.import_memory(saved)
        assert len((await ph.get_memory())["facts"]) == 1  # type: ignore[arg-type]

        other = ph.as_user(PRINCIPALS["bob"])
        assert (await other.get_memory())["facts"] == []
        with pytest.raises(NotFound):
            await other.get_thread(tid)
        with pytest.raises(NotFound):
            await other.read_artifact(tid, "outputs/a.md")
