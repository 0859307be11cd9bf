"""``pronghorn doctor``: check that this machine can run the configured Pronghorn.

Each check returns a ``CheckResult``; every failure carries a hint saying what to do. Checks
run concurrently and never block the event loop. Secrets are never printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import sqlite3
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, LiteralString, Protocol, cast
from urllib.parse import urlsplit

import httpx

from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import load_config, resolve_config_path
from pronghorn.config.schema.app import AppConfig, ModelConfig
from pronghorn.doctor_result import CheckResult
from pronghorn.gateway.static import find_ui_dir
from pronghorn.sandbox import LocalSandboxProvider
from pronghorn.sandbox.limits import human_bytes

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

NET_TIMEOUT_S = 5.0


class _Pingable(Protocol):
    """A Redis client, as the broker check uses it (redis-py leaves ping's kwargs untyped)."""

    def ping(self) -> Awaitable[bool]: ...


async def _ping(client: _Pingable) -> bool:
    return await client.ping()


async def _pg_connect(url: str) -> AsyncConnection[TupleRow]:
    """A short-lived psycopg connection to the PostgreSQL database at `url` (whichever
    driver its scheme names)."""
    from psycopg import AsyncConnection

    from pronghorn.persistence.db import libpq_url

    return await AsyncConnection.connect(
        libpq_url(url), autocommit=True, connect_timeout=round(NET_TIMEOUT_S)
    )


async def _pg_value(conn: AsyncConnection[TupleRow], query: LiteralString) -> object:
    """The first column of the query's first row (None when it has none)."""
    row = await (await conn.execute(query)).fetchone()
    return None if row is None else row[0]


MODEL_TIMEOUT_S = 15.0
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


async def run_checks(config_path: str | None, *, online: bool = False) -> list[CheckResult]:
    """Run every check; ``online`` also sends a 1-token request to each configured model."""
    config_result, config = await check_config(config_path)
    if config is None:
        return [config_result, await check_bwrap(AppConfig())]
    checks: list[Awaitable[CheckResult | None]] = [
        *(check_model(model, online=online) for model in config.models),
        check_database(config),
        check_migrations(config),
        check_broker(config),
        check_data_dir(config),
        check_port(config),
        *_sandbox_checks(config),
        check_frontend(config),
        check_auth(config),
    ]
    results = await asyncio.gather(*checks)
    return [config_result, *(r for r in results if r is not None)]


def _sandbox_checks(config: AppConfig) -> list[Awaitable[CheckResult | None]]:
    if config.sandbox.kind == "container":
        from pronghorn.doctor_container import check_container_sandbox  # imports doctor

        return [check_container_sandbox(config)]
    if config.sandbox.kind == "kubernetes":
        return [check_kubernetes_sandbox(config)]
    return [check_bwrap(config), check_sandbox_limits(config)]


def format_report(results: list[CheckResult], as_json: bool) -> str:
    failed = [r for r in results if not r.ok]
    if as_json:
        return json.dumps(
            {"ok": not failed, "checks": [asdict(r) for r in results]}, indent=2, sort_keys=False
        )
    lines: list[str] = []
    for r in results:
        lines.append(f"[{'ok' if r.ok else 'FAIL':>4}] {r.name}: {r.detail}")
        if r.hint and (not r.ok or (r.data or {}).get("warnings")):
            lines.append(f"       hint: {r.hint}")
    summary = f"{len(results)} checks, {len(failed)} failed" if failed else "all checks passed"
    lines.append(summary if not failed else f"{summary}: {', '.join(r.name for r in failed)}")
    return "\n".join(lines)


# --- config ---------------------------------------------------------------------------------


async def check_config(config_path: str | None) -> tuple[CheckResult, AppConfig | None]:
    def _load() -> tuple[Path | None, AppConfig]:
        path = resolve_config_path(config_path, os.environ)
        return path, load_config(path).config

    try:
        path, config = await asyncio.to_thread(_load)
    except ConfigError as exc:
        hint = "fix the file or variable named above (cp config.example.yaml config.yaml to start)"
        return CheckResult("config", False, str(exc), hint), None
    source = str(path) if path else "no config file, built-in defaults"
    return CheckResult("config", True, f"valid ({source})"), config


# --- models ---------------------------------------------------------------------------------


def _model_key(model: ModelConfig) -> str | None:
    if model.api_key is not None and model.api_key.get_secret_value():
        return model.api_key.get_secret_value()
    env_name = KEY_ENV.get(model.provider)
    return (os.environ.get(env_name) or None) if env_name else None


def _needs_key(model: ModelConfig) -> bool:
    if model.provider == "anthropic":
        return True
    if model.provider != "openai":
        return False
    # OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) usually take no key.
    host = urlsplit(model.base_url).hostname if model.base_url else "api.openai.com"
    return host is not None and host.endswith("openai.com")


async def check_model(model: ModelConfig, *, online: bool) -> CheckResult:
    name = f"model {model.name}"
    if model.provider not in KEY_ENV:
        return CheckResult(name, True, f"provider {model.provider}: nothing to check")
    key = _model_key(model)
    env_name = KEY_ENV[model.provider]
    if key is None and _needs_key(model):
        return CheckResult(
            name,
            False,
            f"provider {model.provider} needs an API key and none is set",
            f"set {env_name} (in .env or the environment) and api_key: ${{{env_name}}} in "
            f"config.yaml, or set models[].api_key",
        )
    if not online:
        return CheckResult(name, True, f"{model.provider} {model.model or '?'}: key present")
    return await _ping_model(model, key)


async def _ping_model(model: ModelConfig, key: str | None) -> CheckResult:
    name = f"model {model.name}"
    base = (model.base_url or DEFAULT_BASE_URL[model.provider]).rstrip("/")
    messages = [{"role": "user", "content": "ping"}]
    if model.provider == "anthropic":
        url = f"{base}/v1/messages"
        headers = {"anthropic-version": "2023-06-01", **({"x-api-key": key} if key else {})}
        bodies = [{"model": model.model, "max_tokens": 1, "messages": messages}]
    else:
        url = f"{base}/chat/completions"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"model": model.model, "messages": messages}
        # Newer reasoning models refuse max_tokens and want max_completion_tokens.
        bodies = [{**body, "max_tokens": 1}, {**body, "max_completion_tokens": 1}]
    response: httpx.Response | None = None
    try:
        async with httpx.AsyncClient(timeout=min(model.timeout_s, MODEL_TIMEOUT_S)) as client:
            for body in bodies:
                response = await client.post(url, json=body, headers=headers)
                retry = response.status_code == 400 and "max_completion_tokens" in response.text
                if not retry:
                    break
    except httpx.HTTPError as exc:
        return CheckResult(
            name,
            False,
            f"cannot reach {url}: {type(exc).__name__}: {exc}",
            "check base_url, DNS and outbound network/proxy settings of this machine",
        )
    assert response is not None  # bodies is never empty
    status = response.status_code
    if 200 <= status < 300:
        return CheckResult(name, True, f"{model.model} answered at {base} (HTTP {status})")
    excerpt = " ".join(response.text.split())[:200]
    if status in (401, 403):
        hint = f"the provider rejected the key: check {KEY_ENV[model.provider]} / models[].api_key"
    elif status == 404:
        hint = "check models[].model (the provider's model name) and base_url"
    elif status == 429:
        hint = "rate limited or out of quota: check the provider account"
    else:
        hint = "see the provider's error above; check models[].model and base_url"
    return CheckResult(name, False, f"HTTP {status} from {url}: {excerpt}", hint)


# --- database and broker --------------------------------------------------------------------


def base_dir() -> Path:
    """Where relative paths of the config resolve, as ``pronghorn serve`` does."""
    return Path(os.environ.get("PRONGHORN_BASE_DIR") or Path.cwd())


def data_dir(config: AppConfig) -> Path:
    path = Path(config.data_dir).expanduser()
    return (path if path.is_absolute() else base_dir() / path).resolve()


def database_url(config: AppConfig) -> str:
    if config.database.url:
        return config.database.url
    return f"sqlite:///{(data_dir(config) / 'pronghorn.db').as_posix()}"


def _sqlite_path(url: str) -> Path | None:
    rest = url.split("://", 1)[1] if "://" in url else ""
    path = rest[1:] if rest.startswith("/") else rest
    path = path.split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


def _writable_dir(path: Path) -> str | None:
    """None when files can be created in ``path`` (or it can be created); else why not."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return f"no existing parent of {path}"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if probe != path:
        return None if os.access(probe, os.W_OK | os.X_OK) else f"cannot create {path} in {probe}"
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
    except OSError as exc:
        return f"cannot write in {path}: {exc.strerror or exc}"
    return None


async def check_database(config: AppConfig) -> CheckResult:
    url = await asyncio.to_thread(database_url, config)
    scheme = url.split("://", 1)[0]
    if scheme.startswith("sqlite"):
        path = _sqlite_path(url)
        if path is None:
            return CheckResult("database", True, "SQLite in memory (nothing persists)")
        problem = await asyncio.to_thread(_writable_dir, path.parent)
        if problem:
            return CheckResult(
                "database",
                False,
                f"SQLite {path}: {problem}",
                "make the folder writable by this user or set data_dir / database.url",
            )
        if await asyncio.to_thread(path.exists):
            try:
                await asyncio.to_thread(_sqlite_select_one, path)
            except sqlite3.Error as exc:
                return CheckResult(
                    "database",
                    False,
                    f"SQLite {path}: {exc}",
                    "the file is not a readable SQLite database: restore it from a backup",
                )
            return CheckResult("database", True, f"SQLite {path} opens")
        return CheckResult("database", True, f"SQLite {path} will be created")
    if scheme.startswith("postgres"):
        return await _check_postgres(url)
    return CheckResult(
        "database",
        False,
        f"unsupported database URL scheme {scheme!r}",
        "use sqlite:///path or postgresql://user:pass@host:5432/db",
    )


def _sqlite_select_one(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()


async def _check_postgres(url: str) -> CheckResult:
    import psycopg

    where = urlsplit(url)
    label = f"PostgreSQL {where.hostname}:{where.port or 5432}{where.path}"
    try:
        async with await _pg_connect(url) as conn:
            version = await _pg_value(conn, "SHOW server_version")
    except (OSError, TimeoutError, psycopg.Error) as exc:
        return CheckResult(
            "database",
            False,
            f"{label}: {type(exc).__name__}: {exc}",
            "is PostgreSQL running and reachable (docker compose --profile scale up -d)? "
            "check host, port, user, password and database in database.url",
        )
    return CheckResult("database", True, f"{label} reachable (server {version})")


async def check_auth(config: AppConfig) -> CheckResult:
    """auth.mode against where the server listens, TLS in front, weak account setups."""
    from pronghorn.doctor_auth import database_findings, mode_findings
    from pronghorn.persistence.db import Database
    from pronghorn.persistence.migrate import head_revision

    host, _, _ = serve_address(config)
    failures, warnings = mode_findings(config, host)
    notes: list[str] = []
    if config.auth.mode == "local":
        db = Database(await asyncio.to_thread(database_url, config))
        try:
            if await _read_revision(db.url) == await asyncio.to_thread(head_revision):
                await db.connect()
                found_warnings, notes = await database_findings(db)
                warnings += found_warnings
        except Exception:  # unreachable or not migrated: the database checks say why
            pass
        finally:
            await db.close()
    detail = "; ".join(failures or warnings or notes) or f"auth.mode {config.auth.mode}"
    hint = "see docs/security.md" if failures or warnings else None
    data = {"mode": config.auth.mode, "warnings": warnings, "notes": notes}
    return CheckResult("auth", not failures, detail, hint, data)


async def check_migrations(config: AppConfig) -> CheckResult | None:
    """The app schema's Alembic revision against the newest this code knows.

    Behind is fine (``pronghorn serve`` and ``pronghorn migrate`` upgrade it); a revision this
    code does not know means the database was migrated by a newer Pronghorn.
    """
    try:
        from alembic.script import ScriptDirectory

        from pronghorn.persistence.migrate import alembic_config, head_revision
    except ImportError:  # persistence not installed in this build
        return None
    url = await asyncio.to_thread(database_url, config)
    try:
        current = await _read_revision(url)
    except Exception:  # unreachable or unreadable: check_database reports why
        return None
    if current is False:
        return None
    script = await asyncio.to_thread(lambda: ScriptDirectory.from_config(alembic_config()))
    head = await asyncio.to_thread(head_revision)
    if current is None:
        return CheckResult("migrations", True, "no schema yet: created at the first start")
    if current == head:
        return CheckResult("migrations", True, f"schema at head ({head})")
    known = {rev.revision for rev in await asyncio.to_thread(lambda: list(script.walk_revisions()))}
    if current not in known:
        return CheckResult(
            "migrations",
            False,
            f"database schema {current} is unknown to this Pronghorn (head {head})",
            "the database was migrated by a newer Pronghorn: run that version (or restore a "
            "backup taken before the upgrade)",
        )
    return CheckResult(
        "migrations", True, f"schema {current} is behind {head}: upgraded at the next start"
    )


async def _read_revision(url: str) -> str | bool | None:
    """The stored revision; None with no alembic_version table; False when no database yet."""
    if url.split("://", 1)[0].startswith("sqlite"):
        path = _sqlite_path(url)
        if path is None or not await asyncio.to_thread(path.exists):
            return False

        def _read() -> str | None:
            uri = f"file:{path}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as db:
                if not db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'"
                ).fetchone():
                    return None
                row = db.execute("SELECT version_num FROM alembic_version").fetchone()
                return row[0] if row else None

        return await asyncio.to_thread(_read)

    async with await _pg_connect(url) as conn:
        if await _pg_value(conn, "SELECT to_regclass('alembic_version')") is None:
            return None
        version = await _pg_value(conn, "SELECT version_num FROM alembic_version LIMIT 1")
        return None if version is None else str(version)


async def check_broker(config: AppConfig) -> CheckResult | None:
    if config.broker.kind != "redis":
        return None
    import redis.asyncio as aioredis

    where = urlsplit(config.broker.redis_url)
    label = f"Redis {where.hostname}:{where.port or 6379}"
    client = aioredis.from_url(
        config.broker.redis_url, socket_connect_timeout=NET_TIMEOUT_S, socket_timeout=NET_TIMEOUT_S
    )
    try:
        await _ping(client)
    except (OSError, aioredis.RedisError) as exc:
        return CheckResult(
            "broker",
            False,
            f"{label}: {type(exc).__name__}: {exc}",
            "is Redis running (docker compose --profile scale up -d)? check broker.redis_url",
        )
    finally:
        await client.aclose()
    return CheckResult("broker", True, f"{label} answers PING")


# --- files, port, sandbox, UI ---------------------------------------------------------------


def _data_dir_state(config: AppConfig) -> tuple[Path, str | None, bool]:
    path = data_dir(config)
    return path, _writable_dir(path), path.exists()


async def check_data_dir(config: AppConfig) -> CheckResult:
    path, problem, exists = await asyncio.to_thread(_data_dir_state, config)
    if problem:
        return CheckResult(
            "data_dir",
            False,
            problem,
            f"create {path} and give this user write access (in Docker: chown 10001 the "
            "volume), or set data_dir / PRONGHORN_DATA_DIR",
        )
    return CheckResult("data_dir", True, f"{path} {'writable' if exists else 'will be created'}")


def _bind(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind((host, port))


# The image's entrypoint passes these to `pronghorn serve` as --host/--port (docker/entrypoint.sh).
SERVE_ENV = ("PRONGHORN_HOST", "PRONGHORN_PORT")


def serve_address(config: AppConfig) -> tuple[str, str, str]:
    """(host, port as given, where they come from) of the address the server will bind."""
    host_env, port_env = (os.environ.get(name) or None for name in SERVE_ENV)
    host = host_env or config.server.host
    port = port_env or str(config.server.port)
    used = [name for name, value in zip(SERVE_ENV, (host_env, port_env), strict=True) if value]
    return host, port, " and ".join(used) if used else "server.host/server.port"


async def check_port(config: AppConfig) -> CheckResult:
    host, given, source = serve_address(config)
    if not given.isdigit() or not 0 < int(given) < 65536:
        return CheckResult(
            "port",
            False,
            f"{source}: {given!r} is not a port number",
            "set PRONGHORN_PORT (or server.port) to a number between 1 and 65535",
        )
    port = int(given)
    try:
        await asyncio.to_thread(_bind, host, port)
    except OSError as exc:
        if await _answers_health(host, port):
            return CheckResult("port", True, f"{host}:{port} is served by a running Pronghorn")
        return CheckResult(
            "port",
            False,
            f"cannot bind {host}:{port} ({source}): {exc.strerror or exc}",
            f"another process uses port {port} (see: ss -ltnp 'sport = :{port}'); stop it or "
            "choose another with server.port / --port (PRONGHORN_PORT in the image)",
        )
    return CheckResult("port", True, f"{host}:{port} is free")


async def _answers_health(host: str, port: int) -> bool:
    target = "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)
    target = f"[{target}]" if ":" in target else target
    try:
        async with httpx.AsyncClient(timeout=1.0) as client:
            response = await client.get(f"http://{target}:{port}/health")
    except httpx.HTTPError:
        return False
    return response.status_code == 200


async def check_bwrap(config: AppConfig) -> CheckResult:
    if config.sandbox.isolation == "none":
        return CheckResult("sandbox", True, "isolation disabled by config (sandbox.isolation)")
    binary = shutil.which("bwrap")
    if binary is None:
        return CheckResult(
            "sandbox",
            False,
            "bwrap (bubblewrap) is not installed: agent commands would run without isolation",
            "install it (apt-get install bubblewrap) or set sandbox.isolation: none knowingly",
        )
    proc = await asyncio.create_subprocess_exec(
        binary,
        "--ro-bind",
        "/",
        "/",
        "true",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=10)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        stderr = b"timed out"
    if proc.returncode == 0:
        return CheckResult("sandbox", True, f"{binary} works")
    return CheckResult(
        "sandbox",
        False,
        f"bwrap fails: {stderr.decode(errors='replace').strip()[:200]}",
        "bwrap needs unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1; "
        "on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0; in Docker see "
        "docs/deployment.md (Sandbox inside Docker)",
    )


async def check_kubernetes_sandbox(config: AppConfig) -> CheckResult:
    """sandbox.kind: kubernetes — API reachable, RBAC, the namespace accepts a pod."""
    from pronghorn.sandbox.kubernetes.check import check_kubernetes  # only for this kind

    got = await check_kubernetes(config.sandbox)
    return CheckResult("sandbox (kubernetes)", got.ok, got.detail, got.hint)


# Any: each formatter takes the number type of its own limit (an int, or a float for CPU).
_LIMIT_LABELS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "processes": ("processes", str),
    "memory_bytes": ("memory", human_bytes),
    "cpu_seconds": ("CPU time per process", lambda v: f"{v:g} s"),
    "cpu_cores": ("CPU", lambda v: f"{v:g} cores"),
    "file_size_bytes": ("file size", human_bytes),
    "workspace_quota_bytes": ("workspace quota", human_bytes),
    "tmp_bytes": ("/tmp", human_bytes),
}


async def check_sandbox_limits(config: AppConfig) -> CheckResult:
    """Which per-command limits hold here, and how (cgroup, rlimit, seccomp)."""
    provider = LocalSandboxProvider(
        config.model_copy(update={"data_dir": str(data_dir(config))}), delegate_cgroups=False
    )
    await provider.start()
    report = provider.limits_report()
    cgroup = report["cgroup"]
    parts = [
        f"seccomp {'on' if report['seccomp'] else 'off'} ({report['seccomp_detail']})",
        f"cgroup v{cgroup}" if cgroup else f"no cgroup ({report['cgroup_detail']})",
    ]
    unenforced: list[str] = []
    for key, (label, fmt) in _LIMIT_LABELS.items():
        raw = report[key]
        assert isinstance(raw, dict)
        entry = cast("dict[str, object]", raw)
        if not entry["value"]:
            parts.append(f"{label} off")
            continue
        how = entry["enforced_by"]
        parts.append(f"{label} {fmt(entry['value'])} ({how or 'NOT enforced'})")
        if how is None and key != "cpu_cores":  # cpu.max needs a cgroup; it is a rate
            unenforced.append(label)
    wanted_seccomp = config.sandbox.limits.seccomp and report["isolation"] == "bwrap"
    if wanted_seccomp and not report["seccomp"]:
        unenforced.append("seccomp")
    detail = "; ".join(parts)
    refusal = report.get("refusal")
    if refusal:
        return CheckResult(
            "sandbox limits",
            False,
            f"{detail}; commands are REFUSED: {refusal}",
            "nothing here bounds a command's processes, so the sandbox fails closed. Give the "
            "gateway a writable pids cgroup (cgroup v2 delegation or a writable v1 pids "
            "hierarchy), or run it as an unprivileged user, or, as root, let commands run as a "
            "host uid per sandbox: setpriv (util-linux) installed, sandbox.limits.host_uid_base "
            "non-zero, and the folders above the data dir searchable by others "
            "(docs/sandbox.md, Limits)",
            data=report,
        )
    if unenforced:
        return CheckResult(
            "sandbox limits",
            False,
            detail,
            f"not enforced here: {', '.join(unenforced)}. Give the gateway a writable cgroup "
            "(docs/sandbox.md, Limits)",
            data=report,
        )
    return CheckResult("sandbox limits", True, detail, data=report)


def _ui_state(config: AppConfig) -> tuple[Path | None, Path | None]:
    """(configured static_dir when it lacks index.html, the folder the server would serve)."""
    base = base_dir()
    broken = None
    if config.server.static_dir:
        wanted = (base / config.server.static_dir).resolve()
        broken = None if (wanted / "index.html").is_file() else wanted
    return broken, find_ui_dir(config, base)


async def check_frontend(config: AppConfig) -> CheckResult:
    broken, found = await asyncio.to_thread(_ui_state, config)
    hint = "build it: cd frontend && npm ci && npm run build (or set server.static_dir)"
    if broken is not None:
        fallback = f"; the server falls back to {found}" if found else ""
        detail = f"server.static_dir {broken} has no index.html{fallback}"
        return CheckResult("web UI", False, detail, hint)
    if found is None:
        return CheckResult(
            "web UI", False, "no built web UI (frontend/dist/index.html): / will not serve it", hint
        )
    return CheckResult("web UI", True, f"{found} has index.html")
