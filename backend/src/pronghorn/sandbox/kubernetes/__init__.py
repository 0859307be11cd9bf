"""Sandboxes as Kubernetes pods: ``sandbox.kind: kubernetes`` (docs/sandbox.md)."""
