"""Import the object a config spec names: ``package.module:attr`` or ``./file.py:attr``
(relative to the config file's folder; ``attr`` may be dotted). Graphs and the custom
``http.app`` are named this way, as in a ``langgraph.json``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import uuid
from pathlib import Path
from typing import Any

from pronghorn.config.graph_specs import graph_file


class LoadError(Exception):
    pass


def load_object(spec: str, base_dir: Path) -> Any:
    """The object ``spec`` names (blocking: imports code; call it in a worker thread)."""
    if ":" not in spec:
        raise LoadError(f"spec {spec!r} must look like 'module:attr' or './file.py:attr'")
    path_or_module, _, attr = spec.rpartition(":")
    file = graph_file(spec, base_dir)
    if file is not None:
        if not file.is_file():
            raise LoadError(f"file not found: {file}")
        mod_name = f"pronghorn_user_graph_{uuid.uuid5(uuid.NAMESPACE_URL, str(file)).hex}"
        module_spec = importlib.util.spec_from_file_location(mod_name, file)
        if module_spec is None or module_spec.loader is None:
            raise LoadError(f"cannot import {file}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(path_or_module)
    try:
        target: Any = module
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise LoadError(f"{spec}: no attribute {attr!r}") from exc
    return target
