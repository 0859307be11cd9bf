"""State prep: create the thread's ``workspace``/``uploads``/``outputs`` folders.

``thread_data`` records the *virtual* paths (never host paths: state is sent to clients)
and that the folders exist. Host paths are derived from the data dir when needed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain.agents.middleware import AgentMiddleware
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._util import run_ids
from pronghorn.agent.state import ThreadState
from pronghorn.sandbox.paths import (
    VIRTUAL_OUTPUTS,
    VIRTUAL_UPLOADS,
    VIRTUAL_WORKSPACE,
    ThreadPaths,
)

THREAD_DATA = {
    "workspace_path": VIRTUAL_WORKSPACE,
    "uploads_path": VIRTUAL_UPLOADS,
    "outputs_path": VIRTUAL_OUTPUTS,
}


def thread_paths(data_dir: Path, config: object = None) -> ThreadPaths | None:
    """The host folders of the current run's thread (None outside a thread)."""
    ids = run_ids(config)
    if ids.thread_id is None:
        return None
    try:
        return ThreadPaths.for_thread(data_dir, ids.user_id, ids.thread_id)
    except ValueError:
        return None


class ThreadDataMiddleware(AgentMiddleware[ThreadState]):
    """``before_agent``: make sure the thread's folders exist."""

    state_schema = ThreadState

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)

    async def abefore_agent(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        paths = thread_paths(self.data_dir)
        if paths is None:
            return None
        await asyncio.to_thread(paths.ensure)
        if state.get("thread_data") == THREAD_DATA:
            return None
        return {"thread_data": dict(THREAD_DATA)}
