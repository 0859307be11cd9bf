"""The images the compose tests run, built offline by `scripts/offline-images` (Debian
bases cached by the hash of their recipe, the Pronghorn image through Docker's layer cache).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "offline-images"
TAG = "pronghorn:offline-test"


class ImageBuildFailed(Exception):
    pass


@dataclass(frozen=True)
class Images:
    # PRONGHORN_IMAGE, PRONGHORN_NGINX_IMAGE, ...: the compose file's image variables.
    env: dict[str, str]
    build_s: float


def build_images(docker: str, log: Path) -> Images:
    started = time.monotonic()
    with log.open("wb") as err:
        done = subprocess.run(
            [str(SCRIPT), "--tag", TAG],
            env={**os.environ, "DOCKER": docker},
            stdout=subprocess.PIPE,
            stderr=err,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise ImageBuildFailed(f"scripts/offline-images failed ({done.returncode}):\n{tail}")
    env: dict[str, str] = {}
    for line in done.stdout.decode().splitlines():
        name, sep, value = line.partition("=")
        if sep:
            env[name] = value
    return Images(env=env, build_s=time.monotonic() - started)
