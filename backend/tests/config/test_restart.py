"""The startup-only registry: what is reported and what is kept."""

from __future__ import annotations

from pronghorn.config.restart import (
    STARTUP_ONLY,
    changed_paths,
    is_startup_only,
    merge_startup_only,
    restart_required,
)
from pronghorn.config.schema.app import AppConfig


def cfg(**data: object) -> AppConfig:
    return AppConfig.model_validate(data)


def test_registry_paths_exist() -> None:
    config = AppConfig()
    for path in STARTUP_ONLY:
        value: object = config
        for part in path.split("."):
            value = getattr(value, part)


def test_restart_required_lists_most_specific_paths() -> None:
    old = cfg()
    new = cfg(
        server={"port": 9000, "cors_origins": ["http://x"]},
        sandbox={"kind": "local", "network": True},
        runs={"max_concurrency": 2},
        data_dir="/srv/data",
    )
    assert restart_required(old, new) == [
        "data_dir",
        "server.port",
        "server.cors_origins",
        "sandbox.network",
    ]
    assert restart_required(old, old) == []


def test_merge_keeps_startup_only_and_applies_the_rest() -> None:
    old = cfg(server={"port": 2026}, logging={"level": "INFO"})
    new = cfg(
        server={"port": 9000, "host": "0.0.0.0"},
        logging={"level": "DEBUG"},
        broker={"kind": "redis"},
        database={"url": "postgresql+asyncpg://h/db"},
        runs={"max_concurrency": 2},
        sandbox={"network": True},
        agent={"title_max_chars": 20},
    )
    merged = merge_startup_only(old, new)
    assert merged.server == old.server
    assert merged.logging == old.logging
    assert merged.broker == old.broker
    assert merged.database == old.database
    assert merged.runs.max_concurrency == 2
    assert merged.agent.title_max_chars == 20
    assert merged.sandbox == old.sandbox  # the provider reads it once, at startup
    assert restart_required(old, merged) == []
    assert isinstance(merged, AppConfig)
    assert AppConfig.model_validate(merged.model_dump()) == merged  # still a valid config


def test_changed_paths_and_is_startup_only() -> None:
    old = cfg()
    new = cfg(runs={"timeout_s": 5}, store={"ttl": {"refresh_on_read": False}})
    assert changed_paths(old, new) == ["runs.timeout_s", "store.ttl.refresh_on_read"]
    assert is_startup_only("server.port")
    assert is_startup_only("sandbox.kind")
    assert is_startup_only("sandbox.network")
    assert not is_startup_only("graphs")  # applied live (runtime/wiring/graph_reload.py)
    assert not is_startup_only("agent.title_max_chars")
    assert not is_startup_only("serverx")
