"""The shipped manifests (docker/kubernetes/*.yaml), loaded for the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "docker" / "kubernetes"

Doc = dict[str, Any]


def documents() -> list[tuple[str, Doc]]:
    out: list[tuple[str, Doc]] = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                out.append((path.name, doc))
    return out


def one(kind: str, name: str) -> Doc:
    found = [d for _, d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def role_rules(name: str = "pronghorn-sandbox-manager") -> set[tuple[str, str, str]]:
    """(group, resource, verb) triples a Role grants."""
    rules: set[tuple[str, str, str]] = set()
    for rule in one("Role", name)["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    rules.add((group, resource, verb))
    return rules
