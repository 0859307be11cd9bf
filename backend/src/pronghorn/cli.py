"""`pronghorn serve | migrate | config check | doctor | openapi | users | keys`."""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import os
import signal
import sys
from pathlib import Path

import click

from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config, resolve_config_path


def _load(config_file: str | None):
    try:
        path = resolve_config_path(config_file, os.environ)
        return load_config(path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


WORKER_HEALTHCHECK_S = 120


def _exit_after_drain(signum: int, frame: object) -> None:
    raise SystemExit(0)


@click.group()
@click.version_option(package_name="pronghorn")
def main() -> None:
    """Pronghorn — an open-source agent gateway."""


@main.command()
@click.option("--host", default=None, help="Interface to bind (default: server.host).")
@click.option("--port", type=int, default=None, help="Port (default: server.port, 2026).")
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
@click.option("--workers", type=int, default=None, help="uvicorn worker processes.")
@click.option("--reload", is_flag=True, help="Restart on code changes (development).")
def serve(
    host: str | None, port: int | None, config_file: str | None, workers: int | None, reload: bool
) -> None:
    """Start the gateway."""
    import uvicorn

    from pronghorn.auth.startup import refusal

    loaded = _load(config_file)
    cfg = loaded.config
    workers = workers or cfg.server.workers
    if workers > 1 and cfg.broker.kind == "memory":
        raise click.ClickException(
            "--workers > 1 needs broker.kind: redis (the in-process broker cannot share "
            "run events between processes)"
        )
    if workers > 1 and not (cfg.database.url or "").startswith("postgresql"):
        raise click.ClickException("--workers > 1 needs PostgreSQL (database.url)")
    # With both, the workers share runs through the database queue like replicas do
    # (runtime/cluster/run_queue_cluster.py): any worker accepts a run, one with a free slot
    # executes it.
    if loaded.source_path is not None:
        os.environ["PRONGHORN_CONFIG"] = str(loaded.source_path)
    os.environ.setdefault("PRONGHORN_BASE_DIR", str(Path.cwd()))
    if reload:  # development: graph files are re-imported when they change, too
        os.environ.setdefault("PRONGHORN_SERVER__RELOAD_GRAPHS", "true")
    # uvicorn drains, then re-raises the captured signal with the previous handler in
    # place: make a SIGTERM that was handled gracefully end the process with status 0.
    signal.signal(signal.SIGTERM, _exit_after_drain)
    bind = host or cfg.server.host
    refused = refusal(cfg.auth.mode, bind)
    if refused:
        raise click.ClickException(refused)
    # The app reads where it listens from its config (the setup link, the auth-mode check).
    os.environ["PRONGHORN_SERVER__HOST"] = bind
    os.environ["PRONGHORN_SERVER__PORT"] = str(port or cfg.server.port)
    if workers > 1 and not reload:
        # The workers share their metrics through files (runtime/observability/metrics.py).
        from pronghorn.runtime.observability.metrics import prepare_multiprocess
        from pronghorn.runtime.wiring.app_runtime import resolve_data_dir

        prepare_multiprocess(resolve_data_dir(cfg, Path.cwd()) / "metrics")
    warning = open_bind_warning(bind, cfg.server.allowed_hosts)
    if warning:
        click.echo(f"pronghorn: warning: {warning}", err=True)
    try:
        uvicorn.run(
            "pronghorn.gateway.app:app_from_env",
            factory=True,
            host=bind,
            port=port or cfg.server.port,
            workers=None if reload else workers,
            reload=reload,
            reload_dirs=[str(Path(__file__).parent)] if reload else None,
            log_config=None,
            access_log=False,
            # X-Forwarded-* are believed only from auth.trusted_proxies (auth/proxies.py);
            # uvicorn's own handling would trust any loopback peer.
            proxy_headers=False,
            timeout_graceful_shutdown=int(cfg.runs.drain_timeout_s) + 5,
            # A worker answers the parent's health pings only once it has imported the app,
            # which takes longer than uvicorn's 5 s on a busy machine: it would be killed and
            # respawned forever.
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
            timeout_keep_alive=int(cfg.server.keep_alive_s),
            lifespan="on",
            # httptools (C) with the request head bounded while it arrives: 431 past
            # server.max_header_bytes, which the protocol reads from this h11 setting.
            http="pronghorn.gateway.bounded_http:BoundedHttpToolsProtocol",
            h11_max_incomplete_event_size=cfg.server.max_header_bytes,
        )
    finally:
        # The interpreter's exit runs full garbage collections over every object still
        # alive (the imported gateway is some 350 000): seconds of CPU after the server
        # has stopped. What is alive now lives until the exit anyway, so the collector
        # may skip it.
        gc.freeze()


def open_bind_warning(bind: str, allowed_hosts: list[str]) -> str | None:
    """What to tell the operator when the server listens beyond loopback but answers only
    to loopback names (server.allowed_hosts unset); None when there is nothing to say."""
    if allowed_hosts or bind == "localhost":
        return None
    try:
        if ipaddress.ip_address(bind.strip("[]")).is_loopback:
            return None
    except ValueError:
        pass  # a host name: it may resolve to anything
    return (
        f"listening on {bind} but server.allowed_hosts is empty: only requests addressed to "
        "localhost, 127.0.0.1 or [::1] are answered, any other Host gets 400. Set "
        "server.allowed_hosts (or PRONGHORN_SERVER__ALLOWED_HOSTS='[\"name\"]') to the "
        "names clients use, or '*' to turn the check off (see docs/deployment.md)."
    )


@main.command()
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
def migrate(config_file: str | None) -> None:
    """Create or upgrade the database schema."""
    from pronghorn.persistence.migrate import current_revision, upgrade
    from pronghorn.runtime.checkpoints.checkpoint import open_persistence
    from pronghorn.runtime.wiring.app_runtime import open_database, resolve_data_dir

    cfg = _load(config_file).config

    async def _run() -> str | None:
        data_dir = resolve_data_dir(cfg, Path.cwd())
        data_dir.mkdir(parents=True, exist_ok=True)
        async with open_database(cfg, data_dir) as db:
            await upgrade(db)
            async with open_persistence(db, cfg.store):
                pass
            return await current_revision(db)

    revision = asyncio.run(_run())
    click.echo(f"database at revision {revision}")


@main.command()
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
@click.option("--online", is_flag=True, help="Also send each model a 1-token request.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(config_file: str | None, online: bool, as_json: bool) -> None:
    """Check the config, models, database, folders, port, sandbox and UI build."""
    from pronghorn.doctor import format_report, run_checks

    results = asyncio.run(run_checks(config_file, online=online))
    click.echo(format_report(results, as_json))
    sys.exit(0 if all(r.ok for r in results) else 1)


@main.group()
def config() -> None:
    """Configuration commands."""


@config.command("check")
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
def config_check(config_file: str | None) -> None:
    """Validate the config file and exit 0 (valid) or 1 (invalid)."""
    from pronghorn.config_check import check_config

    try:
        path = resolve_config_path(config_file, os.environ)
    except ConfigError as exc:
        click.echo(f"invalid: {exc}", err=True)
        sys.exit(1)
    ok, message = check_config(path)
    if ok:  # the config is valid: do its graphs load? (imports them, as the server would)
        from pronghorn.graphs.registry import check_graph_specs

        loaded = load_config(path, os.environ)
        base = loaded.source_path.parent if loaded.source_path else Path.cwd()
        problems = check_graph_specs(loaded.config.graphs, base)
        if problems:
            ok = False
            message += "\n" + "\n".join(f"  graph failed to load: {p}" for p in problems)
    click.echo(message, err=not ok)
    sys.exit(0 if ok else 1)


@main.command()
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
@click.option("--defaults", is_flag=True, help="Ignore any config file: a default install's.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="File.")
def openapi(config_file: str | None, defaults: bool, output: str | None) -> None:
    """Write the OpenAPI document (what /openapi.json serves) without starting a server."""
    from pronghorn.gateway.openapi_export import openapi_json

    try:
        loaded = load_config(None, {}) if defaults else _load(config_file)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    text = openapi_json(loaded, Path.cwd())
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")


def _add_account_commands() -> None:
    from pronghorn.cli_accounts import keys_group, users_group

    main.add_command(users_group)
    main.add_command(keys_group)


_add_account_commands()

if __name__ == "__main__":
    main()
