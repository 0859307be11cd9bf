"""Every operation in our OpenAPI document has its own id (clients generated from it need
that), and building the document raises no warning (FastAPI warns on a duplicate id)."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import yaml

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from support.live import base_config

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def test_operation_ids_are_unique_and_the_schema_builds_without_warnings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(base_config()), encoding="utf-8")
    app = create_app(ConfigHolder(load_config(path, {}), {}), base_dir=tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        schema = app.openapi()
    # (ResourceWarnings here come from other tests' garbage, collected meanwhile.)
    assert [str(w.message) for w in caught if w.category is UserWarning] == []
    ids = Counter(
        op["operationId"]
        for item in schema["paths"].values()
        for method, op in item.items()
        if method in METHODS
    )
    assert [op_id for op_id, n in ids.items() if n > 1] == []
    # Both methods of the join-stream and artifact routes are documented, each on its own.
    join = schema["paths"]["/api/langgraph/threads/{thread_id}/runs/{run_id}/stream"]
    assert {"get", "post"} <= set(join)
    artifact = schema["paths"]["/api/threads/{thread_id}/artifacts/{path}"]
    assert {"get", "head"} <= set(artifact)
