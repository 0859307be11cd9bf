"""Read config.yaml into an immutable, validated ``AppConfig``.

Order of work: YAML file -> ``${VAR}`` interpolation -> ``PRONGHORN_*`` environment
overrides (they win over the file) -> validation. A ``.env`` file feeds both interpolation
and overrides; the real environment wins over it and is never modified.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import yaml
from dotenv import dotenv_values
from pydantic import BaseModel, SecretBytes, SecretStr, ValidationError
from pydantic_settings import SettingsError

from pronghorn.config.envsource import (
    ENV_PREFIX,
    deep_merge,
    env_overrides,
    override_paths,
)
from pronghorn.config.errors import ConfigError, format_validation_error
from pronghorn.config.file_marks import check_whole
from pronghorn.config.graph_specs import missing_auth_file, missing_graph_files
from pronghorn.config.interpolate import interpolate
from pronghorn.config.schema.app import AppConfig

CONFIG_ENV_VAR = "PRONGHORN_CONFIG"
DEFAULT_CONFIG_NAME = "config.yaml"
DOTENV_NAME = ".env"


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """One validated snapshot and where it came from."""

    config: AppConfig
    source_path: Path | None
    version_hash: str
    loaded_at: datetime
    blank: bool = False  # the file was empty (or only whitespace): all defaults


def resolve_config_path(cli_path: str | None, environ: Mapping[str, str]) -> Path | None:
    """``--config`` > ``$PRONGHORN_CONFIG`` > ``./config.yaml`` if present > the one the
    settings pages saved in the data dir on a first run (``first_run_config_path``) if
    present > None (defaults).

    A path given explicitly (flag or variable) that does not exist is an error.
    """
    for given, origin in ((cli_path, "--config"), (environ.get(CONFIG_ENV_VAR), CONFIG_ENV_VAR)):
        if given:
            path = Path(given).expanduser()
            if not path.is_file():
                raise ConfigError(f"config file {path} (from {origin}) does not exist")
            return path.absolute()
    default = Path.cwd() / DEFAULT_CONFIG_NAME
    if default.is_file():
        return default
    saved = first_run_config_path(environ)
    return saved if saved.is_file() else None


def first_run_config_path(environ: Mapping[str, str], base_dir: Path | None = None) -> Path:
    """Where a server started without a config file writes one when an admin saves a
    settings page: ``config.yaml`` in its data dir (``data_dir`` from the environment or
    the default, relative to the base dir, as the runtime resolves it)."""
    raw = environ.get(f"{ENV_PREFIX}DATA_DIR") or str(AppConfig.model_fields["data_dir"].default)
    base = base_dir or Path(environ.get(f"{ENV_PREFIX}BASE_DIR") or Path.cwd())
    path = Path(raw).expanduser()
    return (path if path.is_absolute() else base / path).absolute() / DEFAULT_CONFIG_NAME


def resolve_dotenv_path(config_path: Path | None, dotenv: Path | None) -> Path | None:
    """The ``.env`` to read: the one given (must exist), else ``./.env``, else one beside
    the config file, else none."""
    if dotenv is not None:
        if not dotenv.is_file():
            raise ConfigError(f"dotenv file {dotenv} does not exist")
        return dotenv
    candidates = [Path.cwd() / DOTENV_NAME]
    if config_path is not None:
        candidates.append(config_path.parent / DOTENV_NAME)
    return next((c for c in candidates if c.is_file()), None)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[object, object]:
    loader.flatten_mapping(node)
    seen: dict[object, object] = {}
    for key_node, value_node in node.value:
        # the PyYAML stubs leave construct_object's `node` parameter and result unannotated
        key = cast(object, loader.construct_object(key_node, deep=True))  # pyright: ignore[reportUnknownMemberType]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen[key] = loader.construct_object(value_node, deep=True)  # pyright: ignore[reportUnknownMemberType]
    return seen


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,  # type: ignore[arg-type]
)


def parse_yaml(text: str, source: str) -> dict[str, object]:
    """Parse the file's text; empty means ``{}``; errors say the line (never its content)."""
    try:
        data: object = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        kind = (
            "YAML error"
            if isinstance(exc, yaml.constructor.ConstructorError)
            else "YAML syntax error"
        )
        raise ConfigError(f"{source}: {kind}{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: YAML error: {type(exc).__name__}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the top level must be a mapping of keys, not {type(data).__name__}"
        )
    # keys are strings in any valid config; validation names any other
    return cast(dict[str, object], data)


def read_dotenv(path: Path | None) -> dict[str, str]:
    """Variables of a ``.env`` file (no expansion inside it; keys without a value dropped)."""
    if path is None:
        return {}
    try:
        values = dotenv_values(path, interpolate=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read dotenv file {path}: {exc}") from None
    return {k: v for k, v in values.items() if v is not None}


def _reveal(value: object) -> object:
    if isinstance(value, SecretStr | SecretBytes):
        secret = value.get_secret_value()
        return secret.decode("utf-8", "replace") if isinstance(secret, bytes) else secret
    if isinstance(value, dict):
        return {str(k): _reveal(v) for k, v in cast(dict[object, object], value).items()}
    if isinstance(value, list | tuple):
        return [_reveal(v) for v in cast(Sequence[object], value)]
    return value


def config_hash(config: BaseModel) -> str:
    """sha256 of the canonical JSON of ``config`` (secrets included, so a key rotation
    counts as a change; the hash is safe to show, the values never are)."""
    plain = _reveal(config.model_dump(mode="python"))
    canonical = json.dumps(
        plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _mask(value: object) -> object:
    if isinstance(value, SecretStr | SecretBytes):
        return "**secret**"
    if isinstance(value, dict):
        return {str(k): _mask(v) for k, v in cast(dict[object, object], value).items()}
    if isinstance(value, list | tuple):
        return [_mask(v) for v in cast(Sequence[object], value)]
    if isinstance(value, str) and "://" in value and "@" in value:
        # a URL with credentials (database.url, broker.redis_url): drop the password
        scheme, _, rest = value.partition("://")
        creds, at, host = rest.rpartition("@")
        if at and ":" in creds:
            return f"{scheme}://{creds.split(':', 1)[0]}:**secret**@{host}"
    return value


def public_config_hash(config: BaseModel) -> str:
    """sha256 of the canonical JSON with every secret masked: safe to publish (nothing to
    brute-force), equal on replicas that run the same settings."""
    canonical = json.dumps(
        _mask(config.model_dump(mode="python")),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_config(
    path: Path | None,
    environ: Mapping[str, str] | None = None,
    dotenv: Path | None = None,
) -> LoadedConfig:
    """Read, interpolate, override and validate; raise ``ConfigError`` on any problem.

    Synchronous (it reads files): from async code call it through ``asyncio.to_thread``.
    """
    real_env: Mapping[str, str] = os.environ if environ is None else environ
    source = str(path) if path is not None else "built-in defaults"

    data: dict[str, object] = {}
    blank = False
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from None
        check_whole(text, source)
        data = parse_yaml(text, source)
        blank = not text.strip()

    dotenv_path = resolve_dotenv_path(path, dotenv)
    variables = {**read_dotenv(dotenv_path), **real_env}  # the real environment wins
    try:
        data = interpolate(data, variables)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None

    override_env = {k: v for k, v in variables.items() if k.upper() != CONFIG_ENV_VAR}
    try:
        overrides = env_overrides(AppConfig, override_env)
    except SettingsError as exc:
        cause = exc.__cause__ or exc
        raise ConfigError(
            f"invalid {ENV_PREFIX}* environment override: {exc} ({type(cause).__name__}); "
            "list, mapping and section values must be JSON"
        ) from None
    merged = deep_merge(data, overrides)

    try:
        config = AppConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(
            format_validation_error(exc, AppConfig, source, override_paths(overrides))
        ) from None
    # graph files are relative to the config file (as the registry loads them)
    config_dir = path.parent if path else Path.cwd()
    missing = missing_graph_files(config.graphs, config_dir)
    auth_spec = config.auth.custom if config.auth.mode == "custom" else None
    if auth_missing := missing_auth_file(auth_spec, config_dir):
        missing.append(auth_missing)
    if missing:
        raise ConfigError(f"{source}: " + "; ".join(missing))
    return LoadedConfig(
        config=config,
        source_path=path,
        version_hash=config_hash(config),
        loaded_at=datetime.now(UTC),
        blank=blank,
    )
