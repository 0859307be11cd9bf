"""The Kubernetes API client (lightkube, async, over httpx) built from the config, and the
sentence a refused call becomes."""

from __future__ import annotations

import contextlib
from collections.abc import Generator

import httpx2
from lightkube import ApiError, AsyncClient, KubeConfig
from lightkube.config.models import Cluster, User

from pronghorn.config.schema.kubernetes import SandboxKubernetesConfig
from pronghorn.sandbox.errors import SandboxError


def make_client(cfg: SandboxKubernetesConfig) -> AsyncClient:
    """``api_url`` (+ ``api_token``) when set; else in-cluster, KUBECONFIG or ~/.kube/config.
    Proxy variables of the environment are ignored."""
    if cfg.api_url:
        token = cfg.api_token.get_secret_value() if cfg.api_token is not None else None
        config = KubeConfig.from_one(
            cluster=Cluster(server=cfg.api_url),
            user=User(token=token) if token else User(),
            namespace=cfg.namespace,
        )
    else:
        config = KubeConfig.from_env()
    return AsyncClient(
        config=config, namespace=cfg.namespace, field_manager="pronghorn", trust_env=False
    )


def describe(error: ApiError) -> str:
    """``<code> <reason>: <message>`` of a Status the API answered with."""
    status = error.status
    return f"{status.code} {status.reason or ''}: {status.message or ''}".strip()


# What lightkube's HTTP client (httpx2) raises when the API cannot be reached; an answer
# with an error status is an ApiError instead.
TransportError = httpx2.TransportError


@contextlib.contextmanager
def reachable(doing: str) -> Generator[None, None, None]:
    """Turn a failed connection to the API into a SandboxError saying what was being done."""
    try:
        yield
    except TransportError as exc:
        raise SandboxError(
            f"{doing}: the Kubernetes API cannot be reached ({exc or type(exc).__name__})"
        ) from None
