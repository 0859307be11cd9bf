"""The FastAPI app factory and its lifespan, which builds (and tears down) the AppRuntime."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from pronghorn import __version__
from pronghorn.channels.component import channels
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config, resolve_config_path
from pronghorn.gateway.auth_middleware import AuthMiddleware
from pronghorn.gateway.config_audit import reload_recorder
from pronghorn.gateway.custom_app import add_custom_app, custom_lifespan, load_custom_app
from pronghorn.gateway.errors import install_error_handlers
from pronghorn.gateway.gc_tuning import tune_collector_for_serving
from pronghorn.gateway.host_guard import HostGuardMiddleware
from pronghorn.gateway.http_observer import HttpObserverMiddleware
from pronghorn.gateway.limits import RequestLimitsMiddleware
from pronghorn.gateway.logs import configure_logging
from pronghorn.gateway.metrics_listener import metrics_listener
from pronghorn.gateway.middleware import RequestIdMiddleware
from pronghorn.gateway.openapi import GatewayApp, serve_under_api_root
from pronghorn.gateway.origin_guard import OriginGuardMiddleware
from pronghorn.gateway.path_alias import PathAliasMiddleware
from pronghorn.gateway.protocols.mcp_server import McpService, add_mcp_routes
from pronghorn.gateway.rate_limit import RateLimitMiddleware
from pronghorn.gateway.routers import register_routers
from pronghorn.gateway.static import mount_ui
from pronghorn.runtime.wiring.assemble import open_runtime

log = logging.getLogger("pronghorn.gateway")
WATCH_START_S = 10.0  # how long startup waits for the config watcher to start


def create_app(
    settings: ConfigHolder, *, base_dir: Path | None = None, tune_gc: bool = False
) -> FastAPI:
    """Build the app for a config holder; the AppRuntime is created in the lifespan.
    `tune_gc` (the server process's own app): once started, everything alive is moved
    out of the garbage collector's sight (see `gc_tuning.py`)."""
    config = settings.current
    base = (base_dir or Path.cwd()).resolve()
    config_dir = settings.source_path.parent if settings.source_path else base
    custom = load_custom_app(config.http.app, config_dir) if config.http.app else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[Mapping[str, object] | None, None]:
        configure_logging(config.logging.level, config.logging.format)
        stop = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            runtime = await stack.enter_async_context(open_runtime(settings, base_dir=base))
            app.state.runtime = runtime
            app.state.mcp = await stack.enter_async_context(McpService(runtime).running())
            # IM channels start runs through runtime.runs: they stop before the runtime does.
            app.state.channels = await stack.enter_async_context(channels(runtime))
            stack.callback(settings.add_listener(reload_recorder(runtime)))
            await stack.enter_async_context(metrics_listener(runtime))
            state = await stack.enter_async_context(custom_lifespan(custom)) if custom else None
            watcher = asyncio.create_task(settings.watch(stop), name="config-watcher")
            # Ready means watched: an edit saved after startup is applied. (A watcher that
            # cannot start keeps retrying in the background; startup does not wait for it.)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(settings.watching.wait(), WATCH_START_S)
            if tune_gc:
                tune_collector_for_serving()
            log.info(
                "pronghorn ready",
                extra={"database": runtime.db.dialect, "graphs": ",".join(runtime.graphs.ids())},
            )
            try:
                yield state  # the custom app's lifespan state, if any
            finally:
                stop.set()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(watcher, timeout=2)

    app = GatewayApp(
        title="Pronghorn",
        version=__version__,
        lifespan=lifespan,
        docs_url="/docs" if config.server.docs_enabled else None,
        redoc_url=None,
        openapi_url="/openapi.json" if config.server.docs_enabled else None,
    )
    install_error_handlers(app)
    # innermost: DeerFlow's /api/threads/*, /api/runs/* paths of the LangGraph routes
    app.add_middleware(PathAliasMiddleware, routes=app.router.routes)
    app.add_middleware(RateLimitMiddleware)  # per-user rate, keyed by the principal
    app.add_middleware(AuthMiddleware)  # CORS answers preflights before it
    if config.server.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.server.cors_origins),
            allow_credentials=True,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=[
                "Location",
                "Content-Location",
                "X-Pagination-Total",
                "X-Pagination-Next",
                "X-Request-ID",
                "X-Pronghorn-Thread-Id",  # the OpenAI-compatible API's thread and run
                "X-Pronghorn-Run-Id",
            ],
        )
    # add_middleware wraps what is there: the last one added runs first. Order of a
    # request: request id -> metrics and trace span -> size limits -> Host allow-list ->
    # Origin check -> CORS -> authentication -> rate limit -> path alias -> routes.
    server = config.server
    app.add_middleware(
        OriginGuardMiddleware,
        cors_origins=server.cors_origins,
        allowed_hosts=server.allowed_hosts,
    )
    app.add_middleware(HostGuardMiddleware, allowed_hosts=server.allowed_hosts)
    app.add_middleware(
        RequestLimitsMiddleware,
        max_body_bytes=server.max_body_bytes,
        max_header_bytes=server.max_header_bytes,
        max_header_count=server.max_header_count,
    )
    app.add_middleware(HttpObserverMiddleware)
    app.add_middleware(RequestIdMiddleware)  # outermost: every answer above carries an id
    register_routers(app)
    add_mcp_routes(app)
    if config.server.docs_enabled:
        serve_under_api_root(app)
    if custom is not None:
        add_custom_app(app, custom)
    mount_ui(app, config, base)
    return app


def app_from_env() -> FastAPI:
    """uvicorn factory (`pronghorn.gateway.app:app_from_env`), used by `pronghorn serve`."""
    path = resolve_config_path(None, os.environ)
    loaded = load_config(path)
    base = Path(os.environ.get("PRONGHORN_BASE_DIR") or Path.cwd())
    return create_app(ConfigHolder(loaded), base_dir=base, tune_gc=True)
