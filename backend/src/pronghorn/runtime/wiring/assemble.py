"""Build the AppRuntime in dependency order and tear it down in reverse."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

from pronghorn.auth.authenticator import Authenticator
from pronghorn.auth.authorizer import AllowAll, Authorizer
from pronghorn.auth.local import LocalAuthenticator
from pronghorn.auth.oidc.client import OidcClient
from pronghorn.auth.services import AuthServices
from pronghorn.auth.startup import check_mode, prepare_setup
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import DEFAULT_CONFIG_NAME
from pronghorn.graphs.lead_agent import LeadAgentFactory
from pronghorn.graphs.lead_agent.graph import LeadAgentHost
from pronghorn.graphs.registry import GraphRegistry
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos.assistants import (
    ensure_system_assistants,
    prune_system_assistants,
)
from pronghorn.runtime.checkpoints.checkpoint import open_persistence
from pronghorn.runtime.wiring.app_runtime import AppRuntime, open_database, resolve_data_dir
from pronghorn.runtime.wiring.auth_backends import auth_backends
from pronghorn.runtime.wiring.components.core import COMPONENTS

log = logging.getLogger("pronghorn.runtime")


@contextlib.asynccontextmanager
async def open_runtime(
    settings: ConfigHolder, *, base_dir: Path
) -> AsyncGenerator[AppRuntime, None]:
    config = settings.current
    check_mode(config)
    data_dir = resolve_data_dir(config, base_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    config_dir = settings.source_path.parent if settings.source_path else base_dir
    if settings.source_path is None:  # the settings pages may save one here (file_edit.py)
        settings.first_run_path = data_dir / DEFAULT_CONFIG_NAME
    async with contextlib.AsyncExitStack() as stack:
        db = await stack.enter_async_context(open_database(config, data_dir))
        await upgrade(db)
        persistence = await stack.enter_async_context(
            open_persistence(db, config.store, write_wait_s=config.runs.settle_wait_s)
        )
        graphs = GraphRegistry(persistence.checkpointer, persistence.store, base_dir=config_dir)
        await graphs.load(dict(config.graphs))
        auth = AuthServices.from_config(config.auth, config.server)
        authenticator: Authenticator
        authorizer: Authorizer
        if config.auth.mode == "local":
            authenticator, authorizer = LocalAuthenticator(db, auth), AllowAll()
        else:
            authenticator, authorizer = await auth_backends(config, config_dir)
        oidc = OidcClient(config.auth.oidc) if config.auth.oidc is not None else None
        if oidc is not None:
            stack.push_async_callback(oidc.aclose)
        runtime = AppRuntime(
            settings=settings,
            data_dir=data_dir,
            db=db,
            checkpointer=persistence.checkpointer,
            store=persistence.store,
            graphs=graphs,
            authenticator=authenticator,
            authorizer=authorizer,
            auth=auth,
            oidc=oidc,
            config_dir=config_dir,
        )
        # The AppRuntime is a LeadAgentHost; pyright does not apply `Started.__get__` when it
        # matches a descriptor against a protocol's property, hence the cast.
        graphs.add_builtin("lead_agent", LeadAgentFactory(cast("LeadAgentHost", runtime)))
        known = graphs.known_ids()
        await db.write(lambda conn: ensure_system_assistants(conn, known))
        pruned = await db.write(lambda conn: prune_system_assistants(conn, known))
        if pruned:
            log.info("system assistants of graphs no longer configured removed: %s", pruned)
        await prepare_setup(db, config, data_dir)
        for component in COMPONENTS:
            await stack.enter_async_context(component(runtime))
        yield runtime
