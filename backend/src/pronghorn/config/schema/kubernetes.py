"""`sandbox.kubernetes`: sandboxes as pods created through the Kubernetes API
(docs/sandbox.md, "Kubernetes"). Read when the gateway starts (startup-only)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class SandboxKubernetesConfig(BaseModel):
    """Where and how sandbox pods run. CPU and memory limits come from ``sandbox.limits``
    (cpu_cores, memory_bytes); ``sandbox.network`` opens egress."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_url: str | None = Field(
        default=None,
        description=(
            "Kubernetes API URL; None: the in-cluster service account, else KUBECONFIG or "
            "~/.kube/config."
        ),
    )
    api_token: SecretStr | None = Field(
        default=None, description="Bearer token for api_url (use ${VAR}); None: none sent."
    )
    namespace: str = Field(
        default="pronghorn",
        description=(
            "Namespace of the pods; with data_volume_claim, the namespace of that claim (a pod "
            "mounts claims of its own namespace only)."
        ),
    )
    image: str = Field(
        default="pronghorn:latest",
        description="Image of a sandbox pod: it must contain the pronghorn package (agent).",
    )
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = Field(
        default="IfNotPresent", description="imagePullPolicy of the sandbox container."
    )
    scope: Literal["thread", "user"] = Field(
        default="thread", description="One pod per thread, or one per user shared by its threads."
    )
    service_account: str = Field(
        default="pronghorn-sandbox",
        description="Service account of the pods (no API token is mounted in them).",
    )
    instance: str = Field(
        default="pronghorn",
        description=(
            "Label value naming this gateway deployment: pods carrying it are its own (adopted "
            "or removed at startup), others are never touched."
        ),
    )
    agent_port: int = Field(default=8765, ge=1024, le=65535, description="Sandbox agent port.")
    agent_token_key: SecretStr | None = Field(
        default=None,
        description=(
            "Key from which each pod's agent token is derived (HMAC of the pod name; use "
            "${VAR}). Set it to let a restarted gateway, or another replica, adopt running "
            "pods; None: a random key per process, and pods left by another process are removed."
        ),
    )
    data_volume_claim: str | None = Field(
        default=None,
        description=(
            "PersistentVolumeClaim holding the gateway's data dir (ReadWriteMany with several "
            "nodes): a pod mounts its thread's (or user's) folder from it, so uploads and "
            "outputs are shared with the gateway. None: an emptyDir (files live and die with "
            "the pod; the gateway's file views do not see them)."
        ),
    )
    idle_timeout_s: float = Field(
        default=900.0, gt=0, description="A pod unused this long is deleted."
    )
    max_pods: int = Field(
        default=20, ge=1, description="Most live pods; the least recently used idle one makes room."
    )
    start_timeout_s: float = Field(
        default=120.0, gt=0, description="How long a new pod may take to become ready."
    )
    ephemeral_storage_bytes: int = Field(
        default=2 * 1024**3, ge=64 * 1024**2, description="Pod ephemeral-storage limit (/tmp)."
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict, description="nodeSelector of the pods (sandbox nodes)."
    )
    runtime_class: str | None = Field(
        default=None,
        description="runtimeClassName of the pods (gVisor, Kata) for stronger isolation.",
    )

    @field_validator("namespace", "service_account", "instance")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if not _DNS_LABEL.fullmatch(value):
            raise ValueError("must be a DNS label: lower-case letters, digits and '-', <= 63")
        return value
