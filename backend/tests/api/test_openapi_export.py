"""`pronghorn openapi` writes the served document without a server, and the copy the
frontend's types are generated from (frontend/src/api/openapi.json) is the current one."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pronghorn.cli import main
from pronghorn.config.loader import load_config
from pronghorn.gateway.openapi_export import openapi_json

COMMITTED = Path(__file__).resolve().parents[3] / "frontend" / "src" / "api" / "openapi.json"


def test_the_cli_writes_the_document_without_serving(tmp_path: Path) -> None:
    out = tmp_path / "openapi.json"
    result = CliRunner().invoke(main, ["openapi", "--defaults", "--output", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["openapi"].startswith("3.")
    assert "/api/langgraph/threads/{thread_id}" in document["paths"]
    # Nothing was started or created: no database, no data folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["openapi.json"]
    # Stable: the same bytes every time (and to stdout without --output).
    again = CliRunner().invoke(main, ["openapi", "--defaults"])
    assert again.exit_code == 0
    assert again.output == out.read_text(encoding="utf-8")


def test_a_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "config.yaml"
    bad.write_text("server: {port: nope}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["openapi", "--config", str(bad)])
    assert result.exit_code != 0
    assert "port" in result.output


def test_the_frontend_copy_is_current(tmp_path: Path) -> None:
    current = openapi_json(load_config(None, {}), tmp_path)
    assert COMMITTED.read_text(encoding="utf-8") == current, (
        "frontend/src/api/openapi.json is stale: run `npm run gen:api` in frontend/"
    )
