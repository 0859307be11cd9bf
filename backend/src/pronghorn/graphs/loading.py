"""Import the object a config spec names: ``package.module:attr`` or ``./file.py:attr``
(relative to the config file's folder; ``attr`` may be dotted). Graphs and the custom
``http.app`` are named this way, as in a ``langgraph.json``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
import uuid
from dataclasses import dataclass
from pathlib import Path

from pronghorn.config.graph_specs import graph_file


class LoadError(Exception):
    pass


@dataclass(frozen=True)
class Loaded:
    target: object  # whatever the module exports under the name; its user checks it
    file: Path | None  # the source file the object came from (watched for live reload)


def _exec_file(file: Path) -> types.ModuleType:
    """Execute ``file`` as a new module, from its source (never a cached .pyc, which an
    edit within the same second could leave stale). A module that fails to execute leaves
    the previous one of that file in place."""
    mod_name = f"pronghorn_user_graph_{uuid.uuid5(uuid.NAMESPACE_URL, str(file)).hex}"
    spec = importlib.util.spec_from_file_location(mod_name, file)
    if spec is None:
        raise LoadError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    code = compile(file.read_bytes(), str(file), "exec", dont_inherit=True)
    previous = sys.modules.get(mod_name)
    sys.modules[mod_name] = module  # dataclasses and pickling look the module up by name
    try:
        exec(code, module.__dict__)  # the operator's own graph file
    except BaseException:
        if previous is not None:
            sys.modules[mod_name] = previous
        else:
            sys.modules.pop(mod_name, None)
        raise
    return module


def load_spec(spec: str, base_dir: Path, *, reimport: bool = False) -> Loaded:
    """The object ``spec`` names and its source file (blocking: imports code; call it in a
    worker thread). A ``./file.py`` spec is executed afresh each time; a module spec is
    imported once, and re-imported with ``reimport``."""
    if ":" not in spec:
        raise LoadError(f"spec {spec!r} must look like 'module:attr' or './file.py:attr'")
    path_or_module, _, attr = spec.rpartition(":")
    file = graph_file(spec, base_dir)
    if file is not None:
        if not file.is_file():
            raise LoadError(f"file not found: {file}")
        module = _exec_file(file)
    else:
        importlib.invalidate_caches()
        module = importlib.import_module(path_or_module)
        source = getattr(module, "__file__", None)
        file = Path(source).resolve() if source else None
        if reimport and file is not None and file.suffix == ".py":
            # As importlib.reload, in place, but from the source: a .pyc written within the
            # same second as the edit (same size) would be taken as current.
            code = compile(file.read_bytes(), str(file), "exec", dont_inherit=True)
            exec(code, module.__dict__)
        elif reimport:
            module = importlib.reload(module)
    try:
        target: object = module
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise LoadError(f"{spec}: no attribute {attr!r}") from exc
    return Loaded(target, file)


def load_object(spec: str, base_dir: Path) -> object:
    """The object ``spec`` names (blocking: imports code; call it in a worker thread)."""
    return load_spec(spec, base_dir).target
