"""The OpenAPI document as a file, built without serving (`pronghorn openapi`).

The app is created but never started (no lifespan: no database, no model), so this works
anywhere the package is installed. The frontend's API types are generated from it.
"""

from __future__ import annotations

import json
from pathlib import Path

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import LoadedConfig


def openapi_json(loaded: LoadedConfig, base_dir: Path) -> str:
    """The document `loaded` would serve at `/openapi.json`, as stable, indented JSON."""
    from pronghorn.gateway.app import create_app

    app = create_app(ConfigHolder(loaded, {}), base_dir=base_dir)
    return json.dumps(app.openapi(), indent=2, ensure_ascii=False) + "\n"
