"""`pronghorn doctor`'s check of a container sandbox (``sandbox.kind: container``): the
Docker engine answers, the sandbox image is there, the configured limits can be enforced."""

from __future__ import annotations

from pronghorn.config.schema.app import AppConfig
from pronghorn.doctor_result import CheckResult
from pronghorn.sandbox.container_probe import probe_engine


async def check_container_sandbox(config: AppConfig) -> CheckResult:
    cfg = config.sandbox.container
    where = cfg.docker_url or "DOCKER_HOST or the local socket"
    report = await probe_engine(config.sandbox)
    if not report.reachable:
        return CheckResult(
            "sandbox",
            False,
            f"sandbox.kind container: the Docker engine ({where}) is unreachable: {report.detail}",
            "start the engine, or set sandbox.container.docker_url (docs/sandbox.md)",
        )
    data: dict[str, object] = {
        "engine": report.detail,
        "image": cfg.image,
        "image_present": report.image_present,
        "unenforceable": list(report.unenforceable),
        "notes": report.notes,
    }
    network = cfg.network_name if config.sandbox.network else "none"
    detail = f"container sandbox on {report.detail}, image {cfg.image}, network {network}"
    if not report.image_present:
        return CheckResult(
            "sandbox",
            False,
            f"{detail}: the image is missing",
            "build it: docker build -f docker/sandbox.Dockerfile -t "
            f"{cfg.image} . (docs/sandbox.md, Container sandbox)",
            data=data,
        )
    if report.unenforceable:
        return CheckResult(
            "sandbox",
            False,
            f"{detail}; the engine cannot enforce: {', '.join(report.unenforceable)}",
            "give the engine the cgroup controllers (memory, pids, cpu) or turn those limits "
            "off in sandbox.limits knowingly",
            data=data,
        )
    extra = f" ({'; '.join(report.notes)})" if report.notes else ""
    return CheckResult("sandbox", True, f"{detail}; limits enforceable{extra}", data=data)
