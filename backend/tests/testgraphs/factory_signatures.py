"""Graph factories with every signature shape the signature table tests
(tests/api/test_factory_signatures.py). Each returns ``locals()``: what it was called with.

Annotations are strings here (``from __future__ import annotations``), as in most user
code, so they are resolved the way the reference resolves them; ``Missing`` is never
defined (``factory_typechecking`` imports ``ServerRuntime`` under TYPE_CHECKING only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Optional

from langchain_core.runnables import RunnableConfig
from langgraph_sdk.runtime import ServerRuntime

from pronghorn.graphs import GraphRequest
from pronghorn.graphs.factory_call import EXECUTION_RUNTIME


@dataclass
class Ctx:
    tone: str = "plain"


# ruff: noqa: UP045 - Optional[...] is one of the shapes under test


def no_params():
    return locals()


def bare(config):
    return locals()


def runnable_config(config: RunnableConfig):
    return locals()


def plain_dict(config: dict[str, Any]):
    return locals()


def mapping(cfg: Mapping[str, Any]):
    return locals()


def runtime_only(runtime: ServerRuntime):
    return locals()


def runtime_ctx(runtime: ServerRuntime[Ctx]):
    return locals()


def dict_and_runtime(config: dict[str, Any], runtime: ServerRuntime[Ctx]):
    return locals()


def runtime_first(rt: ServerRuntime, config: RunnableConfig):
    return locals()


def optional_runtime(config, runtime: Optional[ServerRuntime] = None):
    return locals()


def union_none_runtime(runtime: ServerRuntime | None):
    return locals()


def keyword_only_runtime(config, *, runtime: ServerRuntime):
    return locals()


def keyword_only_config(*, config: RunnableConfig):
    return locals()


def annotated_runtime(rt: Annotated[ServerRuntime, "server"], c):
    return locals()


def concrete_class(runtime: EXECUTION_RUNTIME):  # type: ignore[valid-type]
    return locals()


def var_keyword(**kwargs):
    return locals()


def unannotated_pair(config, runtime):
    return locals()


def defaulted_extra(config: RunnableConfig, size: int = 3):
    return locals()


def two_runtimes(a: ServerRuntime, b: ServerRuntime):
    return locals()


def three_params(config, runtime: ServerRuntime, extra=None):
    return locals()


def positional_only(config, /):
    return locals()


def unresolvable(runtime: ServerRuntime[Missing], config):  # type: ignore[name-defined]  # noqa: F821
    return locals()


def pronghorn_request(request: GraphRequest):
    return locals()


def request_config_runtime(config: RunnableConfig, runtime: ServerRuntime, req: GraphRequest):
    return locals()
