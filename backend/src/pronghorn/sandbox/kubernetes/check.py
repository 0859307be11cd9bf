"""What ``pronghorn doctor`` checks for ``sandbox.kind: kubernetes``: the API answers, this
gateway's identity holds every permission the provider uses (SelfSubjectAccessReview), and
the namespace accepts a sandbox pod as configured (a server-side dry run, so admission —
PodSecurity, LimitRange, ResourceQuota — judges the real spec; nothing is created)."""

from __future__ import annotations

from dataclasses import dataclass

from lightkube import ApiError, AsyncClient, ConfigError
from lightkube.models.authorization_v1 import ResourceAttributes, SelfSubjectAccessReviewSpec
from lightkube.resources.authorization_v1 import SelfSubjectAccessReview

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.sandbox.kubernetes import spec
from pronghorn.sandbox.kubernetes.api import TransportError, describe, make_client

# (API group, resource, verb) of every call the provider makes (pool.py).
REQUIRED_RULES: tuple[tuple[str, str, str], ...] = (
    ("", "pods", "create"),
    ("", "pods", "get"),
    ("", "pods", "list"),
    ("", "pods", "watch"),
    ("", "pods", "delete"),
    ("networking.k8s.io", "networkpolicies", "create"),
)


@dataclass(frozen=True, slots=True)
class KubeCheck:
    ok: bool
    detail: str
    hint: str | None = None


async def check_kubernetes(config: SandboxConfig, client: AsyncClient | None = None) -> KubeCheck:
    cfg = config.kubernetes
    try:
        kube = client if client is not None else make_client(cfg)
    except (ConfigError, KeyError, OSError) as exc:
        return KubeCheck(
            False,
            f"no Kubernetes API configuration: {exc}",
            "run in a cluster (service account), set KUBECONFIG, or set sandbox.kubernetes.api_url",
        )
    try:
        return await _check(config, kube)
    finally:
        if client is None:
            await kube.close()


async def _check(config: SandboxConfig, kube: AsyncClient) -> KubeCheck:
    cfg = config.kubernetes
    denied: list[str] = []
    try:
        for group, resource, verb in REQUIRED_RULES:
            review = SelfSubjectAccessReview(
                spec=SelfSubjectAccessReviewSpec(
                    resourceAttributes=ResourceAttributes(
                        group=group, resource=resource, verb=verb, namespace=cfg.namespace
                    )
                )
            )
            answer = await kube.create(review)
            if answer.status is None or not answer.status.allowed:
                denied.append(f"{verb} {resource}")
    except ApiError as exc:
        return KubeCheck(
            False,
            f"the Kubernetes API refused an access review: {describe(exc)}",
            "check the gateway's credentials (sandbox.kubernetes.api_token or service account)",
        )
    except TransportError as exc:
        return KubeCheck(
            False,
            f"the Kubernetes API cannot be reached: {exc or type(exc).__name__}",
            "check sandbox.kubernetes.api_url, or the cluster's network from the gateway",
        )
    if denied:
        return KubeCheck(
            False,
            f"the gateway may not {', '.join(denied)} in namespace {cfg.namespace}",
            "apply docker/kubernetes/sandbox-rbac.yaml (Role + RoleBinding for the gateway's "
            "service account) in that namespace",
        )
    key = spec.SandboxKey("thread", "doctor", "00000000-0000-0000-0000-000000000000")
    pod = spec.build_pod(config, key, "doctor-dry-run-token")
    try:
        await kube.create(pod, dry_run=True)
    except ApiError as exc:
        hint = "create the namespace (kubectl create namespace ...) or fix sandbox.kubernetes"
        if exc.status.code == 403:
            hint = (
                "an admission policy refuses the sandbox pod: see the message (limits, PodSecurity)"
            )
        return KubeCheck(False, f"a sandbox pod is refused: {describe(exc)}", hint)
    except TransportError as exc:
        return KubeCheck(False, f"the Kubernetes API cannot be reached: {exc}", None)
    limits = config.limits
    return KubeCheck(
        True,
        f"API reachable, RBAC complete, namespace {cfg.namespace} accepts a sandbox pod "
        f"(image {cfg.image}, cpu {limits.cpu_cores:g}, memory {limits.memory_bytes} bytes, "
        f"egress {spec.egress_mode(config)}; the image is pulled when the first pod starts)",
    )
