"""`pronghorn serve | migrate | config check | doctor`."""

from __future__ import annotations

import asyncio
import os
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
    if loaded.source_path is not None:
        os.environ["PRONGHORN_CONFIG"] = str(loaded.source_path)
    os.environ.setdefault("PRONGHORN_BASE_DIR", str(Path.cwd()))
    uvicorn.run(
        "pronghorn.gateway.app:app_from_env",
        factory=True,
        host=host or cfg.server.host,
        port=port or cfg.server.port,
        workers=None if reload else workers,
        reload=reload,
        reload_dirs=[str(Path(__file__).parent)] if reload else None,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=int(cfg.runs.drain_timeout_s) + 5,
        lifespan="on",
    )


@main.command()
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
def migrate(config_file: str | None) -> None:
    """Create or upgrade the database schema."""
    from pronghorn.persistence.migrate import current_revision, upgrade
    from pronghorn.runtime.checkpoint import open_persistence
    from pronghorn.runtime.runtime import open_database, resolve_data_dir

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


@main.group()
def config() -> None:
    """Configuration commands."""


@config.command("check")
@click.option("--config", "config_file", default=None, help="Path to config.yaml.")
def config_check(config_file: str | None) -> None:
    """Validate the config file and exit 0 (valid) or 1 (invalid)."""
    try:
        path = resolve_config_path(config_file, os.environ)
        loaded = load_config(path)
    except ConfigError as exc:
        click.echo(f"invalid: {exc}", err=True)
        sys.exit(1)
    where = loaded.source_path or "built-in defaults"
    click.echo(f"ok: {where} (version {loaded.version_hash[:12]})")


if __name__ == "__main__":
    main()
