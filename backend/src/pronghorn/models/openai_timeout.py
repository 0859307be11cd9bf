"""``HashableTimeout``: the openai SDK's timeout type, made hashable.

Its own module so that the SDK (hundreds of modules) is imported only when an OpenAI
model is built (``providers.openai_timeout``), not when the gateway starts."""

from __future__ import annotations

import openai


class HashableTimeout(openai.Timeout):
    """The openai SDK's own timeout type (``openai.Timeout``: httpx2's, not httpx's, since
    openai 3; a foreign ``httpx.Timeout`` is not unpacked but nested whole into each of the
    four fields), made hashable.

    langchain-openai shares one cached http client per (base_url, timeout, socket options),
    but only when the timeout is hashable; a plain ``Timeout`` (it defines ``__eq__`` and so
    loses ``__hash__``) makes it build a new, never-closed client per model instance, whose
    pooled sockets then reach the garbage collector open. Equal timeouts hash equal, so every
    model built from one entry reuses one client.
    """

    def __hash__(self) -> int:
        return hash((self.connect, self.read, self.write, self.pool))
