"""The objects the Kubernetes provider creates: one pod per sandbox and the NetworkPolicy
that leaves sandbox pods without egress (unless ``sandbox.network``) and lets only the
gateway reach their agent."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from lightkube.resources.core_v1 import Pod
from lightkube.resources.networking_v1 import NetworkPolicy

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.config.schema.kubernetes import SandboxKubernetesConfig
from pronghorn.sandbox.agent import protocol as p
from pronghorn.sandbox.paths import VIRTUAL_ROOT

NAME_LABEL = "app.kubernetes.io/name"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
INSTANCE_LABEL = "pronghorn.dev/instance"
SCOPE_LABEL = "pronghorn.dev/scope"
EGRESS_LABEL = "pronghorn.dev/egress"
KEY_ANNOTATION = "pronghorn.dev/sandbox-key"
SANDBOX_NAME = "pronghorn-sandbox"
GATEWAY_NAME = "pronghorn-gateway"  # the label the gateway's pods carry (manifests)
CONTAINER = "sandbox"
SANDBOX_UID = 10001  # the image's pronghorn user (docker/Dockerfile)
USER_ROOT = "/mnt/pronghorn-user"  # where a per-user pod sees the user's folder


@dataclass(frozen=True, slots=True)
class SandboxKey:
    """What one pod serves: a thread of a user, or a user (scope ``user``)."""

    scope: str
    user_id: str  # the user's folder name under users/
    thread_id: str | None

    def text(self) -> str:
        return f"{self.scope}/{self.user_id}/{self.thread_id or ''}"

    def sub_path(self) -> str:
        """The folder under the data dir this pod works in."""
        base = f"users/{self.user_id}"
        return base if self.thread_id is None else f"{base}/threads/{self.thread_id}"


def selector(cfg: SandboxKubernetesConfig) -> dict[str, str]:
    """Labels that every sandbox pod of this gateway deployment carries."""
    return {NAME_LABEL: SANDBOX_NAME, MANAGED_LABEL: "pronghorn", INSTANCE_LABEL: cfg.instance}


def pod_name(cfg: SandboxKubernetesConfig, key: SandboxKey) -> str:
    """Deterministic, so two replicas (or a restarted gateway) agree on a sandbox's pod."""
    digest = hashlib.sha256(f"{cfg.instance}\n{key.text()}".encode()).hexdigest()[:24]
    return f"pronghorn-sbx-{digest}"


def agent_token(secret: bytes, name: str) -> str:
    return hmac.new(secret, name.encode(), hashlib.sha256).hexdigest()


def egress_mode(config: SandboxConfig) -> str:
    return "allow" if config.network else "deny"


def _quantity_cpu(cores: float) -> str:
    return f"{max(int(cores * 1000), 10)}m"


def build_pod(config: SandboxConfig, key: SandboxKey, token: str) -> Pod:
    cfg = config.kubernetes
    name = pod_name(cfg, key)
    root = VIRTUAL_ROOT if key.thread_id is not None else USER_ROOT
    limits: dict[str, str] = {"ephemeral-storage": str(cfg.ephemeral_storage_bytes)}
    requests: dict[str, str] = {"ephemeral-storage": str(64 * 1024**2)}
    if config.limits.cpu_cores:
        limits["cpu"] = _quantity_cpu(config.limits.cpu_cores)
        requests["cpu"] = _quantity_cpu(min(config.limits.cpu_cores, 0.1))
    if config.limits.memory_bytes:
        limits["memory"] = str(config.limits.memory_bytes)
        requests["memory"] = str(min(config.limits.memory_bytes, 128 * 1024**2))
    if cfg.data_volume_claim:
        data: dict[str, object] = {
            "name": "data",
            "persistentVolumeClaim": {"claimName": cfg.data_volume_claim},
        }
        data_mount: dict[str, object] = {
            "name": "data",
            "mountPath": root,
            "subPath": key.sub_path(),
        }
    else:
        data = {"name": "data", "emptyDir": {}}
        data_mount = {"name": "data", "mountPath": root}
    spec: dict[str, object] = {
        "serviceAccountName": cfg.service_account,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 5,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": SANDBOX_UID,
            "runAsGroup": SANDBOX_UID,
            "fsGroup": SANDBOX_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": CONTAINER,
                "image": cfg.image,
                "imagePullPolicy": cfg.image_pull_policy,
                "command": ["python", "-m", "pronghorn.sandbox.agent"],
                "env": [
                    {"name": p.ENV_TOKEN, "value": token},
                    {"name": p.ENV_ROOT, "value": root},
                    {"name": p.ENV_SCOPE, "value": key.scope},
                    {"name": p.ENV_PORT, "value": str(cfg.agent_port)},
                ],
                "ports": [{"name": "agent", "containerPort": cfg.agent_port}],
                "readinessProbe": {
                    "httpGet": {"path": p.HEALTH_PATH, "port": cfg.agent_port},
                    "periodSeconds": 1,
                },
                "resources": {"limits": limits, "requests": requests},
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "volumeMounts": [data_mount, {"name": "tmp", "mountPath": "/tmp"}],
            }
        ],
        "volumes": [
            data,
            {"name": "tmp", "emptyDir": {"sizeLimit": str(config.limits.tmp_bytes)}},
        ],
    }
    if cfg.node_selector:
        spec["nodeSelector"] = dict(cfg.node_selector)
    if cfg.runtime_class:
        spec["runtimeClassName"] = cfg.runtime_class
    labels = {
        **selector(cfg),
        SCOPE_LABEL: key.scope,
        EGRESS_LABEL: egress_mode(config),
    }
    # lightkube's from_dict takes a bare dict (unknown type arguments to the checker)
    pod = Pod.from_dict(  # pyright: ignore[reportUnknownMemberType]
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": cfg.namespace,
                "labels": labels,
                "annotations": {KEY_ANNOTATION: key.text()},
            },
            "spec": spec,
        }
    )
    assert isinstance(pod, Pod)
    return pod


def network_policy_name(config: SandboxConfig) -> str:
    return f"pronghorn-sbx-{config.kubernetes.instance}-egress-{egress_mode(config)}"


def build_network_policy(config: SandboxConfig) -> NetworkPolicy:
    """Ingress only from the gateway's pods (any namespace) to the agent port; egress none,
    or anywhere with ``sandbox.network``. Pods carry the egress mode as a label, so a
    policy of the other mode left from an earlier config never selects them."""
    cfg = config.kubernetes
    egress: list[dict[str, object]] = [{}] if config.network else []
    policy = NetworkPolicy.from_dict(  # pyright: ignore[reportUnknownMemberType]  # a bare dict
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": network_policy_name(config),
                "namespace": cfg.namespace,
                "labels": selector(cfg),
            },
            "spec": {
                "podSelector": {
                    "matchLabels": {**selector(cfg), EGRESS_LABEL: egress_mode(config)}
                },
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {},
                                "podSelector": {"matchLabels": {NAME_LABEL: GATEWAY_NAME}},
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": cfg.agent_port}],
                    }
                ],
                "egress": egress,
            },
        }
    )
    assert isinstance(policy, NetworkPolicy)
    return policy
