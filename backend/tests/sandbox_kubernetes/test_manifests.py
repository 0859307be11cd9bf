"""docker/kubernetes/: every object is one the API knows, spelt as its schema says (lightkube's
models refuse wrong types; a round trip loses any unknown or misspelt field), and the
objects fit together: names, selectors, namespaces, the SSE-safe Ingress, the NetworkPolicy
the provider would create, and a Role that grants exactly what the provider calls."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lightkube import codecs

from pronghorn.config.loader import load_config
from pronghorn.sandbox.kubernetes import spec
from pronghorn.sandbox.kubernetes.check import REQUIRED_RULES

from .manifests import Doc, documents, one, role_rules

EXPECTED_KINDS = {
    "Namespace",
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "NetworkPolicy",
    "Deployment",
    "Service",
    "Ingress",
    "PodDisruptionBudget",
}


@pytest.mark.parametrize(
    ("file", "doc"), documents(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_each_object_matches_the_api_schema(file: str, doc: Doc) -> None:
    obj = codecs.from_dict(doc)  # unknown apiVersion/kind or a wrong type raises
    assert obj.to_dict() == doc, f"{file}: a field is unknown or misspelt"
    assert doc["metadata"]["name"]
    if doc["kind"] != "Namespace":
        assert doc["metadata"]["namespace"] == "pronghorn", file


def test_every_expected_kind_is_shipped() -> None:
    assert {d["kind"] for _, d in documents()} == EXPECTED_KINDS


def test_the_role_grants_exactly_what_the_provider_calls() -> None:
    assert role_rules() == set(REQUIRED_RULES)
    binding = one("RoleBinding", "pronghorn-sandbox-manager")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "pronghorn-sandbox-manager",
    }
    gateway = one("Deployment", "pronghorn-gateway")["spec"]["template"]["spec"]
    (subject,) = binding["subjects"]
    assert subject == {
        "kind": "ServiceAccount",
        "name": gateway["serviceAccountName"],
        "namespace": "pronghorn",
    }
    sandbox_account = one("ServiceAccount", "pronghorn-sandbox")
    assert sandbox_account["automountServiceAccountToken"] is False
    no_roles = [
        d
        for _, d in documents()
        if d["kind"] == "RoleBinding"
        for s in d["subjects"]
        if s["name"] == "pronghorn-sandbox"
    ]
    assert no_roles == []


def test_service_ingress_and_budget_select_the_gateway() -> None:
    deployment = one("Deployment", "pronghorn-gateway")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert labels[spec.NAME_LABEL] == spec.GATEWAY_NAME  # what the NetworkPolicy admits
    service = one("Service", "pronghorn-gateway")
    assert service["spec"]["selector"].items() <= labels.items()
    budget = one("PodDisruptionBudget", "pronghorn-gateway")
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["maxUnavailable"] < deployment["spec"]["replicas"]
    ingress = one("Ingress", "pronghorn-gateway")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert int(notes["nginx.ingress.kubernetes.io/proxy-send-timeout"]) >= 3600
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    mounts = {m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert mounts <= volumes


def test_the_shipped_config_is_valid_and_matches_the_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configmap = one("ConfigMap", "pronghorn-config")
    secret = one("Secret", "pronghorn-secrets")
    for name, value in secret["stringData"].items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "config.yaml"
    path.write_text(configmap["data"]["config.yaml"])
    config = load_config(path).config
    k8s = config.sandbox.kubernetes
    assert config.sandbox.kind == "kubernetes"
    assert (
        k8s.data_volume_claim == one("PersistentVolumeClaim", "pronghorn-data")["metadata"]["name"]
    )
    assert one("ServiceAccount", k8s.service_account)
    # The shipped NetworkPolicy is the one the provider creates for this config.
    policy = spec.build_network_policy(config.sandbox)
    shipped = one("NetworkPolicy", spec.network_policy_name(config.sandbox))
    assert policy.to_dict() == shipped
    assert shipped["spec"]["egress"] == []
    # The sandbox pod this config makes passes the namespace's "restricted" profile basics.
    namespace = one("Namespace", "pronghorn")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    key = spec.SandboxKey("thread", "alice", "00000000-0000-0000-0000-000000000000")
    pod = spec.build_pod(config.sandbox, key, "t" * 64).to_dict()
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    ctx = pod["spec"]["containers"][0]["securityContext"]
    assert ctx == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert yaml.safe_dump(pod)  # plain data
