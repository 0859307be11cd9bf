"""What ``pronghorn doctor`` asks the Docker engine of a container sandbox: is it reachable,
is the sandbox image there, can it enforce the configured limits (read only: nothing is
created)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import aiodocker

from pronghorn.config.schema.app import SandboxConfig

# The engine's /info flag that says a limit can be enforced, per configured limit.
_LIMIT_FLAGS = {
    "memory_bytes": "MemoryLimit",
    "processes": "PidsLimit",
    "cpu_cores": "CpuCfsQuota",
}


@dataclass(frozen=True, slots=True)
class EngineReport:
    reachable: bool
    detail: str  # version, or why it is unreachable
    image_present: bool = False
    unenforceable: tuple[str, ...] = ()  # configured limits the engine cannot enforce
    notes: list[str] = field(default_factory=list)


async def probe_engine(config: SandboxConfig) -> EngineReport:
    try:
        docker = aiodocker.Docker(url=config.container.docker_url)
    except (ValueError, OSError) as exc:
        return EngineReport(False, str(exc))
    try:
        try:
            version = await docker.version()
            # aiodocker types the engine's JSON answer as a bare Mapping
            info = cast(Mapping[str, object], await docker.system.info())  # pyright: ignore[reportUnknownMemberType]
        except (aiodocker.DockerError, OSError) as exc:
            return EngineReport(False, str(getattr(exc, "message", exc)))
        detail = f"Docker {version.get('Version', '?')} (API {version.get('ApiVersion', '?')})"
        try:
            await docker.images.inspect(config.container.image)
            present = True
        except aiodocker.DockerError as exc:
            if exc.status != 404:
                return EngineReport(True, f"{detail}; image check failed: {exc.message}")
            present = False
        limits = config.limits.model_dump()
        missing = tuple(
            name for name, flag in _LIMIT_FLAGS.items() if limits[name] and not info.get(flag)
        )
        notes: list[str] = []
        options = cast(list[object], info.get("SecurityOptions") or [])
        security = " ".join(str(s) for s in options)
        if "seccomp" not in security:
            notes.append("the engine applies no seccomp profile")
        if "rootless" in security:
            notes.append("rootless engine")
        return EngineReport(True, detail, present, missing, notes)
    finally:
        await docker.close()
