"""LangSmith and Langfuse callbacks for every run (`tracing.langsmith`, `tracing.langfuse`).

Each run's config gets the callback handlers its config snapshot asks for, with the
thread as the session and the run's owner as the user. The LangSmith client (it batches
in a background thread) is built once per API key and endpoint and flushed at shutdown.
Langfuse is an optional package: without it a run still executes, and the missing
package is reported once, clearly (and by `check` at startup).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any, Protocol, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.langchain import LangChainTracer
from langsmith import Client

from pronghorn.config.schema.ops import LangfuseConfig, LangSmithConfig, TracingConfig

if TYPE_CHECKING:
    from pronghorn.runtime.engine.jobs import Job

log = logging.getLogger("pronghorn.tracing")

LANGFUSE_MISSING = (
    "tracing.langfuse is configured but the `langfuse` package is not installed; "
    "install it next to Pronghorn (uv pip install langfuse) or remove tracing.langfuse"
)


class LangfuseMissing(RuntimeError):
    pass


class _HandlerClass(Protocol):
    # Any: the Langfuse handler's own keywords (its v2 and v3 constructors differ)
    def __call__(self, **kwargs: Any) -> BaseCallbackHandler: ...


def langfuse_handler_class() -> tuple[_HandlerClass, int]:
    """Langfuse's LangChain handler class and the SDK's major version (2 or 3)."""
    try:
        module = importlib.import_module("langfuse.langchain")  # v3
        return cast("_HandlerClass", module.CallbackHandler), 3
    except ImportError:
        pass
    try:
        module = importlib.import_module("langfuse.callback")  # v2
        return cast("_HandlerClass", module.CallbackHandler), 2
    except ImportError:
        raise LangfuseMissing(LANGFUSE_MISSING) from None


def check_vendors(config: TracingConfig) -> None:
    """Fail at startup when a configured vendor cannot be used."""
    if config.langfuse is not None:
        langfuse_handler_class()


class VendorCallbacks:
    def __init__(self) -> None:
        self._clients: dict[tuple[str, str | None], Client] = {}
        self._langfuse_keys: set[tuple[str, str | None]] = set()  # v3 clients registered
        self._warned = False

    def __call__(self, job: Job) -> list[BaseCallbackHandler]:
        cfg = job.config.tracing
        out: list[BaseCallbackHandler] = []
        if cfg.langsmith is not None:
            out.append(self.langsmith(cfg.langsmith, job))
        if cfg.langfuse is not None:
            handler = self.langfuse(cfg.langfuse, job)
            if handler is not None:
                out.append(handler)
        return out

    def langsmith(self, cfg: LangSmithConfig, job: Job) -> LangChainTracer:
        key = (cfg.api_key.get_secret_value(), cfg.endpoint)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = Client(api_url=cfg.endpoint, api_key=key[0])
        return LangChainTracer(
            project_name=cfg.project,
            client=client,
            metadata={"session_id": job.thread_id, "user_id": job.owner_id},
        )

    def langfuse(self, cfg: LangfuseConfig, job: Job) -> BaseCallbackHandler | None:
        try:
            handler_class, major = langfuse_handler_class()
        except LangfuseMissing as exc:
            if not self._warned:
                log.error(str(exc))
                self._warned = True
            return None
        if major == 3:
            # v3 reads its keys from a client registered under the public key, and the
            # session and user from the run's metadata (langfuse_session_id/_user_id).
            key = (cfg.public_key.get_secret_value(), cfg.host)
            if key not in self._langfuse_keys:
                client_module = importlib.import_module("langfuse")
                client_module.Langfuse(
                    public_key=key[0], secret_key=cfg.secret_key.get_secret_value(), host=cfg.host
                )
                self._langfuse_keys.add(key)
            return handler_class(public_key=key[0])
        return handler_class(
            public_key=cfg.public_key.get_secret_value(),
            secret_key=cfg.secret_key.get_secret_value(),
            host=cfg.host,
            session_id=job.thread_id,
            user_id=job.owner_id,
        )

    def close(self) -> None:
        """Send what the LangSmith clients still hold (blocking: call it in a thread)."""
        for client in self._clients.values():
            try:
                client.flush()
            except Exception:
                log.exception("flushing the LangSmith client failed")
        self._clients.clear()


def vendor_metadata(job: Job) -> dict[str, str]:
    """Metadata keys the vendors read the session and user from."""
    return {"langfuse_session_id": job.thread_id, "langfuse_user_id": job.owner_id}
