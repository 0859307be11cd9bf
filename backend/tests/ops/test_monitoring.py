"""The Grafana dashboard in docker/ queries only series the gateway exports, with labels
they have, and the compose file points Prometheus at the metrics port the gateway opens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.observability.metrics import Metrics

DOCKER = Path(__file__).resolve().parents[3] / "docker"
SERIES = re.compile(r"\b((?:pronghorn|process)_[a-z_]+)(\{[^}]*\})?")
LABEL = re.compile(r"([a-z_]+)\s*(?:=~|!~|!=|=)")
BY = re.compile(r"by \(([^)]*)\)")


def exported() -> set[str]:
    """The sample names of every series of a fresh app's registry."""
    out: set[str] = set()
    for family in Metrics().registry.collect():
        out.update(
            {
                "counter": [f"{family.name}_total"],
                "histogram": [f"{family.name}_{s}" for s in ("bucket", "count", "sum")],
            }.get(family.type, [family.name])
        )
    return out


def test_dashboard_queries_exported_series() -> None:
    series = exported()
    # label names per metric object (prometheus_client keeps them on the metric)
    declared = {
        f"{m._name}": set(m._labelnames)
        for m in vars(Metrics()).values()
        if hasattr(m, "_labelnames")
    }
    dash = json.loads((DOCKER / "grafana" / "dashboards" / "pronghorn.json").read_text())
    queries = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(queries) >= 20
    used: set[str] = set()
    for query in queries:
        for name, selector in SERIES.findall(query):
            assert name in series, f"{name} is not exported (in {query!r})"
            used.add(name)
            base = re.sub(r"_(total|bucket|count|sum)$", "", name)
            allowed = declared.get(base, set()) | {"job", "instance", "le"}
            for label in LABEL.findall(selector):
                assert label in allowed, f"{name} has no label {label!r}"
        for group in BY.findall(query):
            for label in (g.strip() for g in group.split(",")):
                assert any(
                    label in declared.get(re.sub(r"_(total|bucket|count|sum)$", "", n), set())
                    or label == "le"
                    for n, _ in SERIES.findall(query)
                ), f"no series of {query!r} has the label {label!r}"
    for wanted in (
        "pronghorn_runs_total",
        "pronghorn_runs_active",
        "pronghorn_runs_queued",
        "pronghorn_run_duration_seconds_bucket",
        "pronghorn_run_queue_wait_seconds_bucket",
        "pronghorn_http_requests_total",
        "pronghorn_http_request_duration_seconds_bucket",
        "pronghorn_sse_connections",
        "pronghorn_llm_requests_total",
        "pronghorn_llm_tokens_total",
        "pronghorn_tool_calls_total",
        "pronghorn_config_reloads_total",
    ):
        assert wanted in used, f"the dashboard shows no {wanted}"


def test_compose_metrics_port_is_a_valid_config() -> None:
    compose = yaml.safe_load((DOCKER / "docker-compose.yaml").read_text())
    env = compose["services"]["gateway"]["environment"]
    metrics = {"port": env["PRONGHORN_METRICS__PORT"], "host": env["PRONGHORN_METRICS__HOST"]}
    config = AppConfig.model_validate({"metrics": metrics})
    assert config.metrics.port == 9464
    # never published to the host: only Prometheus in the compose network reaches it
    published = " ".join(str(p) for p in compose["services"]["gateway"]["ports"])
    assert "9464" not in published
