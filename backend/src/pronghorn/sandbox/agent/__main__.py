"""``python -m pronghorn.sandbox.agent``: serve the sandbox agent (settings from the
environment, see ``protocol.py``). The token is removed from the environment before any
command runs; commands get a fixed environment of their own anyway."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import uvicorn

from pronghorn.sandbox.agent import protocol as p
from pronghorn.sandbox.agent.app import AgentSettings, build_app
from pronghorn.sandbox.paths import VIRTUAL_ROOT


def main() -> int:
    token = os.environ.pop(p.ENV_TOKEN, "")
    if len(token) < 16:
        print(f"{p.ENV_TOKEN} must hold a token of at least 16 characters", file=sys.stderr)
        return 2
    scope = os.environ.get(p.ENV_SCOPE, "thread")
    if scope not in ("thread", "user"):
        print(f"{p.ENV_SCOPE} must be thread or user", file=sys.stderr)
        return 2
    root = Path(os.environ.get(p.ENV_ROOT, VIRTUAL_ROOT))
    settings = AgentSettings(token=token, root=root, scope=scope)
    uvicorn.run(
        build_app(settings),
        host=os.environ.get(p.ENV_HOST, "0.0.0.0"),  # the pod's own address
        port=int(os.environ.get(p.ENV_PORT, "8765")),
        log_level="warning",
        access_log=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
