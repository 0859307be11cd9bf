"""What the agent's tools need, passed explicitly when the tools are built."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox.base import SandboxProvider
from pronghorn.web.search import SearchProvider


@dataclass(frozen=True)
class ToolDeps:
    """Dependencies of :func:`pronghorn.agent.tools.build_tools`.

    ``config`` is the snapshot the graph was built from (sandbox timeout, web limits,
    uploads); ``data_dir`` is absolute; ``search`` is None when no search provider is
    configured (then ``web_search`` is not offered); ``vision`` says whether the model
    accepts images (otherwise ``view_image`` answers that it cannot view them).
    """

    sandboxes: SandboxProvider
    config: AppConfig
    data_dir: Path
    search: SearchProvider | None = None
    vision: bool = False
