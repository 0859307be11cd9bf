"""With several workers (PROMETHEUS_MULTIPROC_DIR, set by `pronghorn serve --workers N`)
every worker's values are summed in one scrape, and a stopped worker's gauges drop out.
Real processes: prometheus_client picks its value store when it is imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from pronghorn.runtime.observability.metrics import MULTIPROC_ENV, prepare_multiprocess

WORKER = """
import sys
from pronghorn.runtime.observability.metrics import Metrics
m = Metrics()
m.runs_total.labels("success").inc(int(sys.argv[1]))
m.runs_active.inc()
m.queue_wait.observe(0.2)
if sys.argv[2] == "stop":
    m.close()
"""
SCRAPE = (
    "from pronghorn.runtime.observability.metrics import Metrics; "
    "print(Metrics().render().decode())"
)


def run(code: str, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_workers_are_summed(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "prom"
    folder.mkdir()
    (folder / "counter_999.db").write_bytes(b"stale from a previous start")
    monkeypatch.setenv(MULTIPROC_ENV, "")  # unset for prepare; restored (removed) after
    assert prepare_multiprocess(folder) == folder
    assert os.environ[MULTIPROC_ENV] == str(folder)
    assert list(folder.glob("*.db")) == []
    env = {**os.environ, MULTIPROC_ENV: str(folder)}
    run(WORKER, "2", "stop", env=env)
    run(WORKER, "3", "keep", env=env)
    text = run(SCRAPE, env=env)
    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert values[("pronghorn_runs_total", (("status", "success"),))] == 5
    assert values[("pronghorn_run_queue_wait_seconds_count", ())] == 2
    # the worker that stopped cleanly no longer counts as running anything
    assert values[("pronghorn_runs_active", ())] == 1
    assert not any(name.startswith("process_") for name, _ in values)
