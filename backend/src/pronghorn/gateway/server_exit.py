"""Tells open event streams that the server is stopping.

On SIGTERM uvicorn stops accepting, then waits for every open request before it runs the
app's lifespan shutdown (which drains the runs). An event stream ends only with its run, so
without this the streams would hold the shutdown for uvicorn's whole graceful timeout. ASGI
gives a request no shutdown signal: the one place that knows is uvicorn's `Server`, whose
`handle_exit` is the process's SIGTERM handler while it serves. `watch` (started by the
app's lifespan) polls its `should_exit` and then calls every open stream's callback.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from starlette.types import Scope

POLL_S = 0.5


def uvicorn_exiting() -> bool:
    """Whether the uvicorn server of this process was asked to exit (False when no uvicorn
    server handles SIGTERM: a test's threaded server, an embedded app)."""
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    return bool(getattr(server, "should_exit", False))


class ServerExit:
    def __init__(self) -> None:
        self.stopping = False
        self._streams: set[Callable[[], None]] = set()

    def subscribe(self, on_stop: Callable[[], None]) -> None:
        """`on_stop` is called once the server is stopping (at once if it already is)."""
        if self.stopping:
            on_stop()
        else:
            self._streams.add(on_stop)

    def unsubscribe(self, on_stop: Callable[[], None]) -> None:
        self._streams.discard(on_stop)

    def stop(self) -> None:
        self.stopping = True
        streams, self._streams = self._streams, set()
        for on_stop in streams:
            on_stop()

    async def watch(self, poll_s: float = POLL_S) -> None:
        """Poll uvicorn until it is exiting, then stop the streams (runs for the app's life)."""
        # a poll: uvicorn sets a plain attribute, there is no event to wait on
        while not uvicorn_exiting():  # noqa: ASYNC110
            await asyncio.sleep(poll_s)
        self.stop()


def server_exit_of(scope: Scope) -> ServerExit | None:
    """The app's `ServerExit` (set in `create_app`, as the http observer finds the runtime);
    None for an app without one (a response called on a bare scope in a test)."""
    app = scope.get("app")
    state = getattr(app, "state", None)
    found = getattr(state, "server_exit", None)
    return found if isinstance(found, ServerExit) else None
