"""Loading: YAML, ${VAR}, PRONGHORN_* overrides, .env, errors, path resolution."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pronghorn.config.errors import ConfigError
from pronghorn.config.loader import (
    config_hash,
    first_run_config_path,
    load_config,
    resolve_config_path,
)
from pronghorn.config.schema.app import AppConfig
from pronghorn.config_check import check_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ./config.yaml and ./.env are looked up in the cwd: keep the repo's out of the way.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)


def test_no_file_means_defaults(tmp_path: Path) -> None:
    loaded = load_config(None, {})
    assert loaded.config == AppConfig()
    assert loaded.source_path is None
    assert loaded.loaded_at.tzinfo is not None
    assert len(loaded.version_hash) == 64


def test_empty_and_comment_only_files_are_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path / "a.yaml", ""), {}).config == AppConfig()
    assert load_config(write(tmp_path / "b.yaml", "# nothing\n"), {}).config == AppConfig()


def test_parses_sections(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "c.yaml",
        "server:\n  port: 9100\nruns:\n  max_concurrency: 3\n"
        "models:\n  - name: fake\n    provider: scripted\n",
    )
    config = load_config(cfg, {}).config
    assert config.server.port == 9100
    assert config.runs.max_concurrency == 3
    assert config.models[0].name == "fake"
    assert config.server.host == "127.0.0.1"  # untouched default


def test_typo_is_reported_with_its_path(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "server:\n  prot: 9000\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg, {})
    message = str(info.value)
    assert "server.prot: Extra inputs are not permitted" in message
    assert "did you mean 'port'" in message
    assert str(cfg) in message


def test_every_problem_is_listed_with_list_indexes(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "c.yaml",
        "broker:\n  kind: rabbit\nmodels:\n  - name: a\n  - provider: openai\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(cfg, {})
    message = str(info.value)
    assert "(2 problems)" in message
    assert "broker.kind: Input should be 'memory' or 'redis'" in message
    assert "models[1].name: Field required" in message


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "server:\n  port: 1\n  host: [oops\nruns: {}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg, {})
    assert "YAML syntax error at line" in str(info.value)


def test_yaml_error_line_number_is_right(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "server:\n  port: 1\n bad: x\n")
    with pytest.raises(ConfigError, match=r"line 3\b"):
        load_config(cfg, {})


def test_duplicate_keys_are_an_error(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "server:\n  port: 1\n  port: 2\n")
    with pytest.raises(
        ConfigError, match=r"YAML error at line 3, column 3: found duplicate key 'port'"
    ):
        load_config(cfg, {})


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(write(tmp_path / "c.yaml", "- a\n- b\n"), {})


def test_interpolation_set_unset_default_and_escape(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "c.yaml",
        "server:\n"
        "  host: ${HOST}\n"
        "  port: ${PORT:-2100}\n"
        "  static_dir: ${EMPTY:-/srv/ui}\n"
        "data_dir: pre-${HOST}-$${LITERAL}-$5\n"
        "models:\n  - name: m\n    api_key: ${OPENAI_API_KEY}\n",
    )
    env = {"HOST": "0.0.0.0", "EMPTY": "", "OPENAI_API_KEY": "sk-test-123"}
    config = load_config(cfg, env).config
    assert config.server.host == "0.0.0.0"
    assert config.server.port == 2100  # default, then coerced to int
    assert config.server.static_dir == "/srv/ui"  # ":-" also covers empty
    assert config.data_dir == "pre-0.0.0.0-${LITERAL}-$5"
    assert config.models[0].api_key is not None
    assert config.models[0].api_key.get_secret_value() == "sk-test-123"

    env["PORT"] = "2200"
    assert load_config(cfg, env).config.server.port == 2200


def test_unset_variable_is_an_error_naming_the_key(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "models:\n  - name: m\n    api_key: ${OPENAI_API_KEY}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg, {})
    assert "models[0].api_key: environment variable OPENAI_API_KEY is not set" in str(info.value)


def test_malformed_reference_is_an_error(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "data_dir: ${not valid}\n")
    with pytest.raises(ConfigError, match="data_dir: invalid reference"):
        load_config(cfg, {})


def test_env_override_wins_over_file(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "server:\n  port: 9000\n  host: 0.0.0.0\n")
    env = {
        "PRONGHORN_SERVER__PORT": "9001",
        "pronghorn_runs__max_concurrency": "4",  # names are case-insensitive
        "PRONGHORN_SERVER__CORS_ORIGINS": '["http://a.example"]',
        "PRONGHORN_DATABASE__URL": "sqlite+aiosqlite:///x.db",
        "PRONGHORN_WEB__SEARCH_API_KEY": "secret",
        "PRONGHORN_CONFIG": str(cfg),  # not an override
        "PRONGHORN_UNRELATED_SETTING": "x",  # matches no field: ignored
    }
    config = load_config(cfg, env).config
    assert config.server.port == 9001
    assert config.server.host == "0.0.0.0"  # the file's sibling key survives the merge
    assert config.runs.max_concurrency == 4
    assert config.server.cors_origins == ["http://a.example"]
    assert config.database.url == "sqlite+aiosqlite:///x.db"
    assert config.web.search_api_key is not None


def test_env_override_null_and_whole_section_json(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "database:\n  url: postgresql+asyncpg://h/db\n")
    env = {"PRONGHORN_DATABASE__URL": "null", "PRONGHORN_BROKER": '{"kind": "redis"}'}
    config = load_config(cfg, env).config
    assert config.database.url is None
    assert config.broker.kind == "redis"


def test_bad_env_override_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"PRONGHORN_SERVER__PORT": "high"})
    assert "server.port" in str(info.value)
    assert "PRONGHORN_SERVER__PORT" in str(info.value)
    with pytest.raises(ConfigError, match=r"server\.prot: Extra inputs"):
        load_config(None, {"PRONGHORN_SERVER__PROT": "1"})


def test_dotenv_feeds_interpolation_and_overrides(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "models:\n  - name: m\n    api_key: ${OPENAI_API_KEY}\n")
    dotenv = write(
        tmp_path / "custom.env",
        "OPENAI_API_KEY=from-dotenv\nPRONGHORN_SERVER__PORT=9300\nPRONGHORN_RUNS__TIMEOUT_S=5\n",
    )
    before = dict(os.environ)
    config = load_config(cfg, {"PRONGHORN_RUNS__TIMEOUT_S": "7"}, dotenv).config
    assert config.models[0].api_key is not None
    assert config.models[0].api_key.get_secret_value() == "from-dotenv"
    assert config.server.port == 9300
    assert config.runs.timeout_s == 7  # the real environment wins over .env
    assert dict(os.environ) == before  # never mutated


def test_dotenv_default_locations(tmp_path: Path) -> None:
    confdir = tmp_path / "etc"
    confdir.mkdir()
    cfg = write(confdir / "config.yaml", "")
    write(confdir / ".env", "PRONGHORN_SERVER__PORT=9400\n")
    assert load_config(cfg, {}).config.server.port == 9400  # beside the config file
    write(Path.cwd() / ".env", "PRONGHORN_SERVER__PORT=9401\n")
    assert load_config(cfg, {}).config.server.port == 9401  # ./.env comes first
    assert load_config(None, {}).config.server.port == 9401


def test_missing_explicit_dotenv_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"dotenv file .* does not exist"):
        load_config(None, {}, tmp_path / "nope.env")


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "gone.yaml", {})


def test_path_resolution_order(tmp_path: Path) -> None:
    cli = write(tmp_path / "cli.yaml", "")
    env_file = write(tmp_path / "env.yaml", "")
    env = {"PRONGHORN_CONFIG": str(env_file)}
    assert resolve_config_path(None, {}) is None  # nothing: built-in defaults
    local = write(Path.cwd() / "config.yaml", "")
    assert resolve_config_path(None, {}) == local
    assert resolve_config_path(None, env) == env_file
    assert resolve_config_path(str(cli), env) == cli
    with pytest.raises(ConfigError, match="--config"):
        resolve_config_path(str(tmp_path / "missing.yaml"), env)
    with pytest.raises(ConfigError, match="PRONGHORN_CONFIG"):
        resolve_config_path(None, {"PRONGHORN_CONFIG": str(tmp_path / "missing.yaml")})


def test_a_config_saved_on_a_first_run_is_found_in_the_data_dir(tmp_path: Path) -> None:
    env = {"PRONGHORN_DATA_DIR": "state", "PRONGHORN_BASE_DIR": str(tmp_path)}
    assert resolve_config_path(None, env) is None
    saved = write(tmp_path / "state" / "config.yaml", "")
    assert first_run_config_path(env) == saved
    assert resolve_config_path(None, env) == saved
    local = write(Path.cwd() / "config.yaml", "")
    assert resolve_config_path(None, env) == local  # ./config.yaml still comes first


def test_version_hash_tracks_content_including_secrets(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "models:\n  - name: m\n    api_key: ${KEY}\n")
    a = load_config(cfg, {"KEY": "one"})
    b = load_config(cfg, {"KEY": "one"})
    c = load_config(cfg, {"KEY": "two"})
    assert a.version_hash == b.version_hash == config_hash(a.config)
    assert a.version_hash != c.version_hash
    # comments and key order do not matter, only the validated values
    write(cfg, "# hi\nmodels:\n  - api_key: ${KEY}\n    name: m\n")
    assert load_config(cfg, {"KEY": "one"}).version_hash == a.version_hash


def test_errors_never_echo_secret_values(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "models:\n  - name: m\n    api_key: ${KEY}\n    bad: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg, {"KEY": "sk-very-secret"})
    assert "sk-very-secret" not in str(info.value)
    ok, report = check_config(cfg, {"KEY": "sk-very-secret"})
    assert not ok
    assert "sk-very-secret" not in report


def test_check_config(tmp_path: Path) -> None:
    good = write(
        tmp_path / "good.yaml",
        "models:\n  - name: m\n    provider: scripted\nagent:\n  default_model: other\n",
    )
    ok, report = check_config(good, {})
    assert ok
    assert report.startswith(f"config OK: {good}")
    assert "agent.default_model: unknown model 'other'" in report
    ok, report = check_config(write(tmp_path / "bad.yaml", "server:\n  prot: 1\n"), {})
    assert not ok
    assert "server.prot" in report
    ok, report = check_config(tmp_path / "missing.yaml", {})
    assert not ok
    ok, report = check_config(None, {})
    assert ok
    assert "built-in defaults" in report


def test_public_hash_masks_secrets_but_tracks_everything_else(tmp_path: Path) -> None:
    from pronghorn.config.loader import public_config_hash

    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "database:\n  url: postgresql+asyncpg://app:${PW}@db:5432/app\n"
        "models:\n  - name: m\n    provider: openai\n    api_key: ${KEY}\n"
    )
    a = load_config(cfg, {"KEY": "one", "PW": "p1"}).config
    b = load_config(cfg, {"KEY": "two", "PW": "p2"}).config
    assert public_config_hash(a) == public_config_hash(b)  # secrets are not in it
    assert config_hash(a) != config_hash(b)  # the internal hash still sees the change
    c = load_config(cfg, {"KEY": "one", "PW": "p1", "PRONGHORN_RUNS__TIMEOUT_S": "5"}).config
    assert public_config_hash(c) != public_config_hash(a)
