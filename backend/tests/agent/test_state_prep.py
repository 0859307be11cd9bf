"""Thread data dirs, uploads announcement and sandbox release."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.sandbox.paths import ThreadPaths


class RecordingProvider:
    """A tiny real provider: hands out a token per thread and records releases."""

    def __init__(self) -> None:
        self.acquired: list[tuple[str, str]] = []
        self.released: list[object] = []

    async def acquire(self, user_id: str, thread_id: str) -> object:
        self.acquired.append((user_id, thread_id))
        return ("sandbox", thread_id)

    async def release(self, sandbox: object) -> None:
        self.released.append(sandbox)


@tool
def noop() -> str:
    """Does nothing."""
    return "ok"


async def test_thread_dirs_are_created(tmp_path):
    graph = make_agent(tmp_path, scripted([{"text": "hi"}]))
    cfg = thread_config()
    out = await graph.ainvoke(user("hello"), cfg)
    paths = ThreadPaths.for_thread(tmp_path, "tester", cfg["configurable"]["thread_id"])
    assert paths.workspace.is_dir() and paths.uploads.is_dir() and paths.outputs.is_dir()
    assert out["thread_data"] == {
        "workspace_path": "/mnt/user-data/workspace",
        "uploads_path": "/mnt/user-data/uploads",
        "outputs_path": "/mnt/user-data/outputs",
    }
    assert str(tmp_path) not in str(out["thread_data"])  # never host paths in state


async def test_uploads_are_announced_once(tmp_path):
    model = scripted([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    graph = make_agent(tmp_path, model)
    cfg = thread_config()
    paths = ThreadPaths.for_thread(tmp_path, "tester", cfg["configurable"]["thread_id"])
    paths.ensure()
    (paths.uploads / "data.csv").write_text("a,b\n1,2\n")
    out = await graph.ainvoke(user("look at my file"), cfg)
    (entry,) = out["uploaded_files"]
    assert entry["name"] == "data.csv" and entry["size"] == 8
    assert entry["virtual_path"] == "/mnt/user-data/uploads/data.csv"
    first_human = out["messages"][0]
    assert "uploaded_files" not in first_human.content  # state untouched
    seen = model.requests[0].messages
    assert "/mnt/user-data/uploads/data.csv" in seen[-1].content

    (paths.uploads / "more.txt").write_text("x")
    await graph.ainvoke(user("and another"), cfg)
    humans = [m for m in model.requests[1].messages if isinstance(m, HumanMessage)]
    assert "data.csv" in humans[0].content and "more.txt" not in humans[0].content
    assert "more.txt" in humans[1].content and "data.csv" not in humans[1].content

    await graph.ainvoke(user("third"), cfg)
    humans = [m for m in model.requests[2].messages if isinstance(m, HumanMessage)]
    assert "uploaded_files" not in humans[2].content  # nothing new: no new note
    assert len((await graph.aget_state(cfg)).values["uploaded_files"]) == 2


async def test_a_documents_markdown_copy_is_announced_with_it(tmp_path):
    model = scripted([{"text": "one"}])
    graph = make_agent(tmp_path, model)
    cfg = thread_config()
    paths = ThreadPaths.for_thread(tmp_path, "tester", cfg["configurable"]["thread_id"])
    paths.ensure()
    (paths.uploads / "plan.docx").write_bytes(b"PK...")
    (paths.uploads / "plan.docx.md").write_text("# Plan")
    out = await graph.ainvoke(user("read it"), cfg)
    (entry,) = out["uploaded_files"]  # the copy is not a file of its own
    assert entry["markdown_path"] == "/mnt/user-data/uploads/plan.docx.md"
    note = model.requests[0].messages[-1].content
    assert "/mnt/user-data/uploads/plan.docx (5 B); as Markdown: " in note
    assert "/mnt/user-data/uploads/plan.docx.md" in note and "read the copy" in note


async def test_sandbox_released_after_a_run_that_used_tools(tmp_path):
    provider = RecordingProvider()
    model = scripted(
        [{"tool_calls": [{"name": "noop", "args": {}}]}, {"text": "done"}, {"text": "chat"}]
    )
    graph = make_agent(tmp_path, model, [noop], sandboxes=provider)
    cfg = thread_config()
    await graph.ainvoke(user("use a tool"), cfg)
    tid = cfg["configurable"]["thread_id"]
    assert provider.released == [("sandbox", tid)]
    await graph.ainvoke(user("just chat"), cfg)  # no tool: the sandbox is not touched
    assert provider.acquired == [("tester", tid)]
