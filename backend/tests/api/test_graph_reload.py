"""Graphs that fail to load, and live graph reload (issue 26 parts 3 and 4).

One broken graph is reported (log, /info, /api/config/status, 503 for its assistants)
while the others serve, and a server whose only graph is broken does not start. Editing
`graphs:` in config.yaml, or a graph's file with `server.reload_graphs`, applies without a
restart: new runs use the new graph, a run accepted before finishes on the old one, a
removed graph's system assistant leaves search, and a graph that fails to reload keeps its
last good version.
"""

from __future__ import annotations

import asyncio
import copy
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from langgraph_sdk.errors import NotFoundError

from pronghorn.cli import main
from pronghorn.graphs.registry import GraphLoadError
from runs.runkit import wait_status
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

GRAPH_FILE = """
from typing import Annotated, Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from testgraphs.gate import wait_for_gate


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    gate: str


async def answer(state: State) -> dict[str, Any]:
    if state.get("gate"):
        await wait_for_gate(state["gate"])
    return {{"messages": [AIMessage(content={answer!r})]}}


builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
"""

BROKEN_IMPORT = "import no_such_module_for_pronghorn_tests\n"
BROKEN_SYNTAX = "def graph(:\n"


def write_graph(folder: Path, name: str, answer: str) -> str:
    (folder / name).write_text(GRAPH_FILE.format(answer=answer), encoding="utf-8")
    return f"./{name}:graph"


def human(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def answers(state: object) -> list[str]:
    return [m["content"] for m in as_state(state)["messages"] if m["type"] == "ai"]


async def until(check: Callable[[], Awaitable[Any]], what: str, within: float = 30.0) -> Any:
    """Poll ``check`` (a status read) until it returns something truthy."""
    deadline = time.monotonic() + within
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def graphs_status(http: httpx.AsyncClient) -> dict[str, Any]:
    status = (await http.get("/api/config/status")).json()
    assert status["last_error"] is None, status
    return status["graphs"]


def make_server(tmp: Path, **overrides: Any) -> InProcessServer:
    return InProcessServer(tmp, base_config(**overrides))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


# --- part 3: a broken graph does not take the server down ------------------------------------


@pytest.fixture
def broken_server(workdir: Path) -> Iterator[InProcessServer]:
    (workdir / "broken.py").write_text(BROKEN_IMPORT, encoding="utf-8")
    graphs = {"fine": write_graph(workdir, "fine.py", "fine"), "broken": "./broken.py:graph"}
    srv = make_server(workdir, graphs=graphs).start()
    try:
        yield srv
    finally:
        srv.stop()


async def test_a_broken_graph_is_reported_while_the_others_serve(
    broken_server: InProcessServer,
) -> None:
    client = broken_server.sdk()
    http = broken_server.ahttp(base_url=broken_server.url, timeout=30)
    try:
        logs = broken_server.logs()
        assert "graph 'broken' failed to load" in logs and "ModuleNotFoundError" in logs
        assert str(broken_server.workdir.resolve() / "broken.py") in logs  # the file itself
        info = (await http.get("/api/langgraph/info")).json()
        assert "fine" in info["graphs"] and "broken" not in info["graphs"]
        [problem] = info["graph_errors"]
        assert problem["graph_id"] == "broken" and "no_such_module" in problem["error"]
        status = await graphs_status(http)
        assert [p["graph_id"] for p in status["failed"]] == ["broken"]
        assert "no_such_module" in status["failed"][0]["error"]
        # Its assistant answers 503 with the reason; the others serve.
        tid = (await client.threads.create())["thread_id"]
        refused = await http.post(
            f"/api/langgraph/threads/{tid}/runs", json={"assistant_id": "broken", "input": {}}
        )
        assert refused.status_code == 503
        assert "no_such_module" in refused.json()["detail"]
        schema = await http.get("/api/langgraph/assistants/broken/graph")
        assert schema.status_code == 503
        out = await client.runs.wait(tid, "fine", input=human("hi"))
        assert answers(out) == ["fine"]
    finally:
        await http.aclose()


def test_a_server_whose_only_graph_is_broken_does_not_start(workdir: Path) -> None:
    (workdir / "broken.py").write_text(BROKEN_SYNTAX, encoding="utf-8")
    config = base_config()
    config["graphs"] = {"broken": "./broken.py:graph"}  # its only graph (besides lead_agent)
    srv = InProcessServer(workdir, config)
    with pytest.raises(RuntimeError, match="startup failed") as failed:  # the lifespan's
        srv.start()
    assert GraphLoadError.__name__ in str(failed.value)
    assert "no configured graph could be loaded" in str(failed.value)
    assert "broken.py" in str(failed.value) and "SyntaxError" in str(failed.value)


def test_config_check_fails_on_a_graph_that_does_not_load(workdir: Path) -> None:
    (workdir / "broken.py").write_text(BROKEN_IMPORT, encoding="utf-8")
    (workdir / "twoargs.py").write_text("def graph(config, runtime):\n    pass\n")
    graphs = {
        "fine": write_graph(workdir, "fine.py", "fine"),
        "broken": "./broken.py:graph",
        "twoargs": "./twoargs.py:graph",
    }
    srv = make_server(workdir, graphs=graphs)
    srv.write_config()
    result = CliRunner().invoke(main, ["config", "check", "--config", str(srv.config_path)])
    assert result.exit_code == 1
    assert "graphs.broken" in result.output and "no_such_module" in result.output
    assert "graphs.twoargs" in result.output and "ServerRuntime" in result.output
    assert "graphs.fine" not in result.output
    del graphs["broken"], graphs["twoargs"]
    srv.write_config(base_config(graphs=graphs))
    ok = CliRunner().invoke(main, ["config", "check", "--config", str(srv.config_path)])
    assert ok.exit_code == 0, ok.output


# --- part 4: graphs reload live -------------------------------------------------------------


@pytest.fixture
def live_server(workdir: Path) -> Iterator[InProcessServer]:
    srv = make_server(
        workdir,
        graphs={"live": write_graph(workdir, "live_v1.py", "v1")},
        server={"reload_graphs": True},
        runs={"max_concurrency": 1},
    )
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


async def test_graphs_are_added_changed_and_removed_by_a_config_edit(
    live_server: InProcessServer, workdir: Path
) -> None:
    client = live_server.sdk()
    http = live_server.ahttp(base_url=live_server.url, timeout=30)
    try:
        config = copy.deepcopy(live_server.config)
        # Add.
        config["graphs"]["extra"] = write_graph(workdir, "extra.py", "extra v1")
        started = time.monotonic()
        live_server.write_config(config)

        async def has_extra() -> bool:
            return "extra" in (await graphs_status(http))["loaded"]

        await until(has_extra, "the added graph")
        assert time.monotonic() - started < 5  # within a second on an idle machine
        status = await graphs_status(http)
        assert status["last_reload"]["added"] == ["extra"]
        tid = (await client.threads.create())["thread_id"]
        assert answers(await client.runs.wait(tid, "extra", input=human("a"))) == ["extra v1"]
        found = await client.assistants.search(graph_id="extra")
        assert [(a["metadata"] or {}).get("created_by") for a in found] == ["system"]

        # Change: the same id now names another file.
        config["graphs"]["extra"] = write_graph(workdir, "extra2.py", "extra v2")
        live_server.write_config(config)

        async def changed() -> bool:
            return (await graphs_status(http))["last_reload"]["changed"] == ["extra"]

        await until(changed, "the changed graph")
        out = await client.runs.wait(tid, "extra", input=human("b"))
        assert answers(out) == ["extra v1", "extra v2"]

        # Remove: it stops serving, its system assistant leaves search, its thread stays.
        del config["graphs"]["extra"]
        live_server.write_config(config)

        async def removed() -> bool:
            return (await graphs_status(http))["last_reload"]["removed"] == ["extra"]

        await until(removed, "the removed graph")
        info = (await http.get("/api/langgraph/info")).json()
        assert "extra" not in info["graphs"] and "live" in info["graphs"]
        assert await client.assistants.search(graph_id="extra") == []
        with pytest.raises(NotFoundError):
            await client.runs.create(tid, "extra", input=human("c"))
        thread = await client.threads.get(tid)
        assert answers(thread["values"]) == ["extra v1", "extra v2"]
        assert len(await client.runs.list(tid)) == 2
    finally:
        await http.aclose()


async def test_editing_a_graph_file_reloads_it_and_a_syntax_error_keeps_the_old_one(
    live_server: InProcessServer, workdir: Path
) -> None:
    client = live_server.sdk()
    http = live_server.ahttp(base_url=live_server.url, timeout=30)
    source = workdir / "live_v1.py"
    try:
        source.write_text(GRAPH_FILE.format(answer="v2"), encoding="utf-8")

        async def changed() -> bool:
            last = (await graphs_status(http))["last_reload"]
            return last is not None and last["changed"] == ["live"]

        await until(changed, "the edited graph")
        out = await client.runs.wait(None, "live", input=human("x"))
        assert answers(out) == ["v2"]

        source.write_text(BROKEN_SYNTAX, encoding="utf-8")

        async def failed() -> list[dict[str, Any]]:
            return (await graphs_status(http))["failed"]

        [problem] = await until(failed, "the reload error")
        assert problem["graph_id"] == "live" and problem["previous_serving"] is True
        assert "SyntaxError" in problem["error"] and "live_v1.py" in problem["error"]
        assert "live" in (await graphs_status(http))["loaded"]
        out = await client.runs.wait(None, "live", input=human("y"))
        assert answers(out) == ["v2"]  # the last good version still serves
        assert "failed to reload" in live_server.logs()

        source.write_text(GRAPH_FILE.format(answer="v3"), encoding="utf-8")

        async def fixed() -> bool:
            return not (await graphs_status(http))["failed"]

        await until(fixed, "the fixed graph")
        out = await client.runs.wait(None, "live", input=human("z"))
        assert answers(out) == ["v3"]
    finally:
        await http.aclose()


async def test_runs_accepted_before_a_swap_finish_on_their_graph(
    live_server: InProcessServer, workdir: Path
) -> None:
    client = live_server.sdk()
    http = live_server.ahttp(base_url=live_server.url, timeout=30)
    gate = workdir / "gate"
    try:
        t1 = (await client.threads.create())["thread_id"]
        t2 = (await client.threads.create())["thread_id"]
        t3 = (await client.threads.create())["thread_id"]
        running = await client.runs.create(t1, "live", input=human("a", gate=str(gate)))
        await wait_status(client, t1, running["run_id"], {"running"})
        queued = await client.runs.create(t2, "live", input=human("b"))  # one slot: waits
        assert (await client.runs.get(t2, queued["run_id"]))["status"] == "pending"

        config = copy.deepcopy(live_server.config)
        config["graphs"]["live"] = write_graph(workdir, "live_v2.py", "v2")
        live_server.write_config(config)

        async def changed() -> bool:
            last = (await graphs_status(http))["last_reload"]
            return last is not None and last["changed"] == ["live"]

        await until(changed, "the swap")
        after = await client.runs.create(t3, "live", input=human("c"))
        gate.touch()
        for tid, run, want in ((t1, running, "v1"), (t2, queued, "v1"), (t3, after, "v2")):
            done = await wait_status(client, tid, run["run_id"], {"success", "error"})
            assert done["status"] == "success"
            assert answers((await client.threads.get(tid))["values"]) == [want]
    finally:
        gate.touch()
        await http.aclose()


async def test_a_module_graph_is_reimported_when_its_file_changes(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = workdir / "pkg"
    package.mkdir()
    monkeypatch.syspath_prepend(str(package))
    name = f"reload_mod_{uuid.uuid4().hex}"
    module = package / f"{name}.py"
    module.write_text(GRAPH_FILE.format(answer="m1"), encoding="utf-8")
    srv = make_server(
        workdir / "srv", graphs={"mod": f"{name}:graph"}, server={"reload_graphs": True}
    ).start()
    client = srv.sdk()
    http = srv.ahttp(base_url=srv.url, timeout=30)
    try:
        assert answers(await client.runs.wait(None, "mod", input=human("a"))) == ["m1"]
        module.write_text(GRAPH_FILE.format(answer="m2"), encoding="utf-8")  # same size

        async def changed() -> bool:
            last = (await graphs_status(http))["last_reload"]
            return last is not None and last["changed"] == ["mod"]

        await until(changed, "the re-imported module")
        assert answers(await client.runs.wait(None, "mod", input=human("b"))) == ["m2"]
    finally:
        await http.aclose()
        srv.stop()
        sys.modules.pop(name, None)


async def test_a_graph_removed_while_the_server_was_down_leaves_search(workdir: Path) -> None:
    srv = make_server(workdir, graphs={"gone": write_graph(workdir, "gone.py", "gone")})
    srv.start()
    try:
        client = srv.sdk()
        assert len(await client.assistants.search(graph_id="gone")) == 1
        mine = await client.assistants.create("gone", name="mine")  # a user's: kept
        config = copy.deepcopy(srv.config)
        del config["graphs"]["gone"]
        srv.stop()
        srv.write_config(config)
        srv.start()
        client = srv.sdk()
        left = await client.assistants.search(graph_id="gone")
        assert [a["assistant_id"] for a in left] == [mine["assistant_id"]]
        assert len(await client.assistants.search(graph_id="echo")) == 1
    finally:
        srv.stop()


async def test_fixing_a_graph_that_failed_at_startup_loads_it(workdir: Path) -> None:
    broken = workdir / "late.py"
    broken.write_text(BROKEN_SYNTAX, encoding="utf-8")
    graphs = {"fine": write_graph(workdir, "fine.py", "fine"), "late": "./late.py:graph"}
    srv = make_server(workdir, graphs=graphs, server={"reload_graphs": True}).start()
    client = srv.sdk()
    http = srv.ahttp(base_url=srv.url, timeout=30)
    try:
        [problem] = (await graphs_status(http))["failed"]
        assert problem["graph_id"] == "late" and problem["previous_serving"] is False
        broken.write_text(GRAPH_FILE.format(answer="late"), encoding="utf-8")

        async def loaded() -> bool:
            status = await graphs_status(http)
            return "late" in status["loaded"] and not status["failed"]

        await until(loaded, "the fixed graph")
        out = await client.runs.wait(None, "late", input=human("hi"))
        assert answers(out) == ["late"]
        assert len(await client.assistants.search(graph_id="late")) == 1
    finally:
        await http.aclose()
        srv.stop()
