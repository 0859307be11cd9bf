"""``Pronghorn``: the embedded Python client — the gateway's operations in-process, no HTTP.

    async with Pronghorn.open("config.yaml") as ph:           # builds its own AppRuntime
        thread = await ph.create_thread()
        async for part in ph.stream(thread["thread_id"], "Hello!"):
            print(part.event, part.data)                        # the SDK's StreamPart

or ``Pronghorn(runtime)`` around a AppRuntime the caller already runs. It calls the runtime's
services, the same the HTTP routers and the IM channels call (`runtime.threads` for
threads, `runtime.uploads.Uploads` for files, `runtime.runs.Runs` to start runs), so limits, naming
and authorization are the same as over HTTP. Run events come from the event broker, exactly
what ``POST /threads/{id}/runs/stream`` serves, so a stream yields the same parts as
``langgraph_sdk``'s ``client.runs.stream`` for the same run. Everything acts as one
principal (default: the local user of ``auth.mode: none``) with its usual isolation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import orjson
from langgraph_sdk.schema import StreamPart

from pronghorn.auth.principal import LOCAL_PRINCIPAL, Principal
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import LoadedConfig, config_hash, load_config
from pronghorn.config.schema.app import AppConfig
from pronghorn.memory.records import Category, MemoryScope
from pronghorn.memory.user_memory import fact_view, import_form, user_memory
from pronghorn.runtime.access import Access
from pronghorn.runtime.services import threads
from pronghorn.runtime.services.runs import Message, Runs, RunStart, Strategy
from pronghorn.runtime.services.uploads import Uploads
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.assemble import open_runtime
from pronghorn.sandbox import safe_open
from pronghorn.sandbox.paths import VIRTUAL_UPLOADS

DEFAULT_MODES = ("values", "messages-tuple")
# Any: threads, uploads and run results are the API's JSON, handed to the caller's code to
# index by key as langgraph_sdk's dicts are (a JSON object's values typed `object` would make
# every caller narrow them): the one boundary type of this client's answers.
ApiJson = dict[str, Any]
# What the client takes is typed `object` inside: any JSON-shaped mapping is accepted.
MessageLike = str | Mapping[str, object] | Sequence[Mapping[str, object]]


def _holder(config: AppConfig | str | Path | None) -> ConfigHolder:
    if isinstance(config, AppConfig):
        loaded = LoadedConfig(
            config=config,
            source_path=None,
            version_hash=config_hash(config),
            loaded_at=datetime.now(UTC),
        )
        return ConfigHolder(loaded)
    return ConfigHolder(load_config(Path(config) if config is not None else None))


class Pronghorn:
    """Threads, runs (streamed or waited), uploads, artifacts and memory, in-process."""

    def __init__(self, runtime: AppRuntime, *, principal: Principal = LOCAL_PRINCIPAL) -> None:
        self.runtime = runtime
        self.principal = principal
        self.access = Access(principal)

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        config: AppConfig | str | Path | None = None,
        *,
        base_dir: Path | None = None,
        principal: Principal = LOCAL_PRINCIPAL,
    ) -> AsyncGenerator[Pronghorn, None]:
        """Build a AppRuntime from a config (an ``AppConfig``, a YAML path, or the defaults),
        run it for the block, then drain and close it (runs, memory updates)."""
        settings = await asyncio.to_thread(_holder, config)
        base = (base_dir or Path.cwd()).resolve()
        async with open_runtime(settings, base_dir=base) as runtime:
            yield cls(runtime, principal=principal)

    def as_user(self, principal: Principal) -> Pronghorn:
        """The same runtime, acting as another principal."""
        return Pronghorn(self.runtime, principal=principal)

    # -- threads -----------------------------------------------------------------------

    async def create_thread(self, metadata: Mapping[str, object] | None = None) -> ApiJson:
        new = threads.NewThread(metadata=dict(metadata or {}))
        return await threads.create(self.runtime, self.access, new)

    async def get_thread(self, thread_id: str) -> ApiJson:
        return await threads.get(self.runtime, self.access, thread_id, ttl=False)

    # -- runs --------------------------------------------------------------------------

    async def stream(
        self,
        thread_id: str | None,
        message: MessageLike | None = None,
        *,
        assistant_id: str = "lead_agent",
        stream_mode: str | Sequence[str] = DEFAULT_MODES,
        context: Mapping[str, object] | None = None,
        config: Mapping[str, object] | None = None,
        command: Mapping[str, object] | None = None,
        **run: object,
    ) -> AsyncIterator[StreamPart]:
        """Start a run and yield its stream parts (``metadata`` first, ``end`` last when
        the run ends). Leaving early cancels the run unless ``on_disconnect="continue"``."""
        options: dict[str, object] = dict(run)
        strategy = options.pop("multitask_strategy", "enqueue")
        metadata = options.pop("metadata", None)
        if command is not None:
            options["command"] = dict(command)
        start = RunStart(
            assistant_id=assistant_id,
            turn=Message.of(message) if message is not None else None,
            stream_mode=(stream_mode,) if isinstance(stream_mode, str) else tuple(stream_mode),
            context=context,
            config=config,
            metadata=cast(Mapping[str, object] | None, metadata),
            multitask_strategy=cast(Strategy, strategy),
            options=options,
        )
        req = start.request()
        job = await Runs(self.runtime).start(self.access, thread_id, req)
        events = self.runtime.broker.subscribe(job.run_id, 0)
        finished = False
        try:
            async for ev in events:
                # as the SDK: the JSON payload, None for an empty one
                # Any: StreamPart types `data` as a bare dict; the event's JSON is any value
                data: Any = orjson.loads(ev.data) if ev.data.strip() else None
                yield StreamPart(event=ev.event, data=data, id=str(ev.id))
            finished = True
        finally:
            if not finished and req.on_disconnect == "cancel":
                self.runtime.runs.cancel_soon(job.thread_id, job.run_id)
            with contextlib.suppress(Exception):
                await events.aclose()

    async def chat(
        self,
        thread_id: str | None,
        message: MessageLike,
        **run: Any,  # Any: passed on to stream()'s keywords, which type them
    ) -> ApiJson:
        """Run to the end and return the final state values (an ``error`` part raises)."""
        values: ApiJson = {}
        async for part in self.stream(thread_id, message, stream_mode="values", **run):
            # the SDK types `data` as a bare dict; here it is whatever JSON the event held
            data = cast(object, part.data)
            if part.event == "values" and isinstance(data, dict):
                values = cast(ApiJson, data)  # a values event: the state, JSON-shaped
            elif part.event == "error":
                raise RuntimeError(f"run failed: {data}")
        return values

    # -- files -------------------------------------------------------------------------

    async def upload(self, thread_id: str, name: str, data: bytes) -> ApiJson:
        """Put a file in the thread's uploads (the agent sees /mnt/user-data/uploads), as
        ``POST /api/threads/{id}/uploads`` does: the name made safe and numbered when taken
        (``a.txt`` -> ``a (1).txt``; the answer says which), the per-file and per-thread
        limits (`TooLarge`), and a Markdown copy of a document (``markdown``: its path, or
        None with ``conversion_error`` when it could not be made)."""
        uploads = Uploads(self.runtime)
        paths = await uploads.folders(self.access, thread_id, "update")
        stored = await uploads.store(paths, name, data)
        done = next(iter(await uploads.convert(paths, [stored.name])), None)
        copy = done.name if done is not None else None
        return {
            "filename": stored.name,
            "size": stored.size,
            "path": stored.virtual_path,
            "markdown": f"{VIRTUAL_UPLOADS}/{copy}" if copy is not None else None,
            "conversion_error": done.error if done is not None else None,
        }

    async def list_uploads(self, thread_id: str) -> list[ApiJson]:
        uploads = Uploads(self.runtime)
        paths = await uploads.folders(self.access, thread_id)
        return [{"filename": f.name, "size": f.size} for f in await uploads.entries(paths)]

    async def read_artifact(self, thread_id: str, path: str) -> bytes:
        """A thread file by virtual path (``/mnt/user-data/outputs/x.md`` or ``outputs/x.md``)."""
        virtual = path if path.startswith("/mnt/user-data/") else f"/mnt/user-data/{path}"
        paths = await Uploads(self.runtime).folders(self.access, thread_id)

        def read() -> bytes:
            opened = safe_open.open_file(paths, virtual)
            try:
                chunks: list[bytes] = []
                while chunk := os.read(opened.fd, 1 << 20):
                    chunks.append(chunk)
                return b"".join(chunks)
            finally:
                opened.close()

        return await asyncio.to_thread(read)

    # -- memory ------------------------------------------------------------------------

    def _scope(self, agent_name: str | None) -> MemoryScope:
        return MemoryScope(user_id=self.access.identity, agent_name=agent_name)

    async def get_memory(self, agent_name: str | None = None) -> dict[str, object]:
        """The memory as ``GET /api/memory`` answers it (DeerFlow's ``UserMemory``)."""
        return user_memory(await self.runtime.memory.document(self._scope(agent_name)))

    async def add_fact(
        self,
        content: str,
        *,
        category: Category = "context",
        confidence: float = 0.9,
        agent_name: str | None = None,
    ) -> dict[str, object]:
        fact = await self.runtime.memory.add_fact(
            self._scope(agent_name), content, category=category, confidence=confidence
        )
        return fact_view(fact)

    async def update_fact(
        self,
        fact_id: str,
        *,
        content: str | None = None,
        category: Category | None = None,
        confidence: float | None = None,
        agent_name: str | None = None,
    ) -> dict[str, object]:
        fact = await self.runtime.memory.edit_fact(
            self._scope(agent_name),
            fact_id,
            content=content,
            category=category,
            confidence=confidence,
        )
        return fact_view(fact)

    async def delete_fact(self, fact_id: str, *, agent_name: str | None = None) -> None:
        await self.runtime.memory.delete_fact(self._scope(agent_name), fact_id)

    async def clear_memory(self, *, agent_name: str | None = None) -> None:
        await self.runtime.memory.clear(self._scope(agent_name))

    async def export_memory(self, *, agent_name: str | None = None) -> dict[str, object]:
        return await self.get_memory(agent_name)

    async def import_memory(
        self, data: Mapping[str, object], *, agent_name: str | None = None
    ) -> dict[str, object]:
        doc = await self.runtime.memory.import_document(self._scope(agent_name), import_form(data))
        return user_memory(doc)

    async def flush_memory(self) -> None:
        """Apply queued memory updates now (without waiting for the debounce)."""
        await self.runtime.memory.flush()
