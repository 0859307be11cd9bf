"""Calling an assistant as an agent: what the protocol adapters (MCP, A2A, OpenAI chat) share.

A *callee* is an assistant the caller may read whose graph takes `messages`, and which the
protocol's exposure list names. A call is an ordinary run created through the run manager
for the caller's `Access` — on a thread of its own (created on the fly, so it shows in the
thread and run APIs and the UI) or on a thread the caller names — so ownership, the
authorizer, concurrency limits and metrics apply exactly as for `POST …/runs`.
"""

from __future__ import annotations

import asyncio
import uuid
import warnings
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from langchain_core.runnables import RunnableConfig
from sqlalchemy.engine import Connection

from pronghorn.agent.untyped import as_dict, as_list
from pronghorn.auth.authorizer import Action
from pronghorn.graphs.registry import AnyGraph
from pronghorn.graphs.requests import GraphRequest
from pronghorn.ids import system_assistant_id
from pronghorn.persistence.errors import ThreadMissing
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import new_id
from pronghorn.runtime.access import Access, graph_user
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.errors import NotFound, refusals_mapped
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.owned import authorize, load_thread, visible
from pronghorn.runtime.record_api import assistant_api, run_api
from pronghorn.runtime.services import assistants as assistants_service
from pronghorn.runtime.services import threads
from pronghorn.runtime.services.agent_output import interrupts_of
from pronghorn.runtime.services.assistants import search_scope
from pronghorn.runtime.services.runs import Resume, Runs, RunStart

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

MAX_CALLEES = 500
FINISHED = frozenset({"success", "error", "timeout", "interrupted"})


@dataclass(frozen=True, slots=True)
class Callee:
    """An assistant callable as an agent (`assistant`: its API JSON)."""

    assistant: JsonObject
    input_schema: JsonObject | None

    @property
    def assistant_id(self) -> str:
        return str(self.assistant["assistant_id"])

    @property
    def graph_id(self) -> str:
        return str(self.assistant["graph_id"])

    @property
    def is_system(self) -> bool:
        """The graph's own assistant (shared by everyone, named after the graph)."""
        return self.assistant_id == system_assistant_id(self.graph_id)

    @property
    def name(self) -> str:
        return str(self.assistant.get("name") or self.graph_id)

    @property
    def description(self) -> str:
        metadata = json_object(self.assistant.get("metadata")) or {}
        text = metadata.get("description") or self.assistant.get("description")
        return str(text) if text else f"Ask the {self.name!r} assistant; it answers in text."


def exposed(assistant: JsonObject, exposure: Sequence[str]) -> bool:
    """Whether an exposure list (ids, graph ids, names, or '*') names the assistant."""
    names = {str(assistant["assistant_id"]), str(assistant["graph_id"])}
    if assistant.get("name"):
        names.add(str(assistant["name"]))
    return any(item == "*" or item in names for item in exposure)


def takes_messages(schema: JsonObject | None) -> bool:
    if schema is None:
        return False
    props = schema.get("properties")
    return isinstance(props, dict) and "messages" in props


def _schema_of(graph: AnyGraph) -> JsonObject | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found: object = graph.get_input_jsonschema()
    except Exception:
        return None
    return json_object(found)


async def input_schema(
    runtime: AppRuntime, access: Access, assistant: JsonObject
) -> JsonObject | None:
    graph_id = str(assistant["graph_id"])
    if graph_id not in runtime.graphs:
        return None
    config: dict[str, object] = dict(json_object(assistant.get("config")) or {})
    config["configurable"] = {
        **(json_object(config.get("configurable")) or {}),
        "assistant_id": assistant["assistant_id"],
        "graph_id": graph_id,
    }
    request = GraphRequest(
        access="assistants.read",
        config=cast("RunnableConfig", config),  # an assistant's config is a RunnableConfig
        user=graph_user(access.principal),
    )
    try:
        async with runtime.graphs.graph(graph_id, request) as graph:
            return await asyncio.to_thread(_schema_of, graph)
    except Exception:  # a factory that fails to build is simply not callable
        return None


async def list_callees(
    runtime: AppRuntime, access: Access, exposure: Sequence[str]
) -> list[Callee]:
    """The assistants `access` may read that the exposure list names and whose graph
    takes messages, oldest first (system assistants lead)."""
    if not exposure:
        return []
    scope = await search_scope(runtime, access, {"limit": MAX_CALLEES, "offset": 0})
    found, _ = await runtime.db.read(
        lambda conn: assistants_repo.search(
            conn, limit=MAX_CALLEES, sort_by="created_at", sort_order="asc", scope=scope
        )
    )
    rows = [assistant_api(a) for a in found]
    out: list[Callee] = []
    schemas: dict[str, JsonObject | None] = {}
    for row in rows:
        if not exposed(row, exposure):
            continue
        key = f"{row['graph_id']}\0{row['assistant_id'] if row.get('config') else ''}"
        if key not in schemas:
            schemas[key] = await input_schema(runtime, access, row)
        if takes_messages(schemas[key]):
            out.append(Callee(row, schemas[key]))
    return out


async def find_callee(
    runtime: AppRuntime, access: Access, ref: str, exposure: Sequence[str]
) -> Callee:
    """The callee an assistant id, graph id or name refers to; `NotFound` otherwise (also
    for one the caller may not read, that the exposure list leaves out, or that takes no
    messages)."""
    missing = NotFound(f"Assistant {ref!r} not found (or not exposed over this protocol)")
    try:
        assistant = await assistants_service.get(runtime, access, ref)
    except NotFound:
        scope = await search_scope(runtime, access, {"name": ref})
        found, _ = await runtime.db.read(
            lambda conn: assistants_repo.search(
                conn,
                name=ref,
                limit=MAX_CALLEES,
                sort_by="created_at",
                sort_order="asc",
                scope=scope,
            )
        )
        named = [assistant_api(a) for a in found if a.name == ref]
        if not named:
            raise missing from None
        assistant = named[0]
    if not exposed(assistant, exposure):
        raise missing
    schema = await input_schema(runtime, access, assistant)
    if not takes_messages(schema):
        raise missing
    return Callee(assistant, schema)


def thread_for(access: Access, conversation: str) -> str:
    """A stable thread id for a client-chosen conversation key, private to the caller."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pronghorn:{access.identity}:{conversation}"))


async def start_call(
    runtime: AppRuntime,
    access: Access,
    callee: Callee,
    *,
    thread_id: str | None = None,
    graph_input: object = None,
    resume: object = None,
    model_name: str | None = None,
    modes: Sequence[str] = ("values",),
    metadata: Mapping[str, object] | None = None,
) -> Job:
    """Start a run of the callee for `access`: on `thread_id` (created if missing, as
    `threads.ensure` does; another user's is *not found*), or on a new thread of the
    caller's — through `Runs.start`, as every other way in."""
    thread = await threads.ensure(runtime, access, thread_id or new_id(), callee.graph_id)
    options: dict[str, object] = {}
    if resume is None and graph_input is not None:
        options["input"] = graph_input
    run = RunStart(
        assistant_id=callee.assistant_id,
        turn=Resume(resume) if resume is not None else None,
        stream_mode=tuple(modes),
        config={"configurable": {"model_name": model_name}} if model_name else None,
        metadata=metadata or {},
        options=options,
    )
    return await Runs(runtime).start(access, thread.thread_id, run)


def events(runtime: AppRuntime, job: Job) -> AsyncGenerator[Event, None]:
    """Every event of the run from its first, then live ones until it ends."""
    return runtime.broker.subscribe(job.run_id, 0)


async def stored_run(runtime: AppRuntime, run_id: str) -> RunRecord | None:
    return await runtime.db.write(lambda conn: run_units.get_run(conn, run_id, None))


async def usage_of(runtime: AppRuntime, job: Job) -> dict[str, int]:
    """The token usage recorded for a finished run."""
    run = await stored_run(runtime, job.run_id)
    if run is None:
        return {}
    usage = run.usage
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "llm_calls": usage.llm_calls,
    }


async def owned_run(
    runtime: AppRuntime, access: Access, run_id: str, action: Action = "read"
) -> dict[str, object]:
    """A run whose thread `access` may `action` (its live status overlaid); `NotFound`
    otherwise (unknown, or another user's)."""
    filt = await authorize(runtime, access, "threads", action, {"run_id": run_id})
    found = await runtime.db.write(lambda conn: run_units.get_owned_run(conn, run_id, None))
    if found is None or not visible(access, found.owner_id, found.thread_metadata, filt):
        raise NotFound.of("Run", run_id)
    return run_api(runtime.runs.overlay(found.run))


async def thread_runs(
    runtime: AppRuntime, thread_id: str, limit: int = 100
) -> list[dict[str, object]]:
    """The thread's runs, newest first (the caller checked it may read the thread)."""
    rows = await runtime.db.read(
        lambda conn: runs_repo.list_for_thread(conn, thread_id, limit=limit, offset=0, status=None)
    )
    return [run_api(runtime.runs.overlay(r)) for r in rows]


@dataclass(frozen=True, slots=True)
class ThreadView:
    values: dict[str, object]
    interrupts: list[object]  # the values of the interrupts the thread waits on
    metadata: dict[str, object]


async def thread_view(runtime: AppRuntime, thread_id: str) -> ThreadView:
    """The thread's current values, pending interrupts and metadata (the caller checked
    it may read the thread)."""
    thread = await runtime.db.read(lambda conn: threads_repo.get_row(conn, thread_id))
    values = (as_dict(thread.values) if thread else None) or {}
    by_task: JsonObject = thread.interrupts if thread else {}
    flat = [i for items in by_task.values() for i in as_list(items) or []]
    metadata = dict(thread.metadata) if thread else {}
    return ThreadView(values, interrupts_of({"__interrupt__": flat}), metadata)


async def note_on_thread(
    runtime: AppRuntime, access: Access, thread_id: str, key: str, item: str, keep: int = 100
) -> None:
    """Add `item` to the list in the thread's metadata `key` (the newest `keep` stay), as a
    thread update by `access`."""
    await load_thread(runtime, access, thread_id, "update")

    def unit(conn: Connection) -> None:
        thread = threads_repo.get_row(conn, thread_id)
        if thread is None:  # deleted since it was loaded
            raise ThreadMissing(thread_id)
        current = thread.metadata.get(key)
        listed = as_list(current)
        items = [str(i) for i in listed] if listed is not None else []
        if item not in items:
            items = [*items, item][-keep:]
        threads_repo.update_thread(conn, thread_id, metadata={key: items})

    with refusals_mapped():
        await runtime.db.write(unit)


def cancel_soon(runtime: AppRuntime, job: Job) -> None:
    """Cancel the call's run from a context that cannot await (a cancelled request)."""
    if job.status not in FINISHED:
        runtime.runs.cancel_soon(job.thread_id, job.run_id)
