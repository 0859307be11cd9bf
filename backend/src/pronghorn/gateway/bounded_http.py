"""uvicorn's httptools protocol with a bound on the request head.

`pronghorn serve` runs uvicorn on this (`http=` takes its import path): httptools parses in C
and costs a fraction of h11 per request and per streamed chunk, but it bounds nothing — a
head that never ends (one endless header line) would grow its buffer without limit. Here
the bytes a connection sends while a request head is still incomplete are counted, and past
`server.max_header_bytes` (handed over as uvicorn's `h11_max_incomplete_event_size`, the
same bound h11 applied) the connection gets 431 and is closed. A head that arrives whole in
one read is parsed and then measured by `RequestLimitsMiddleware` (431 from the app).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

DEFAULT_HEAD_BYTES = 32 * 1024
TOO_LARGE = b"Request header fields too large."


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],  # uvicorn's lifespan state: any shape the app gives it
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_head_bytes = config.h11_max_incomplete_event_size or DEFAULT_HEAD_BYTES
        self.head_open = False  # from a request's first byte until its headers are complete
        self.head_bytes = 0  # bytes received while it is open

    def on_message_begin(self) -> None:
        self.head_open = True
        self.head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self.head_open = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.head_open and not self.transport.is_closing():
            self.head_bytes += len(data)
            if self.head_bytes > self.max_head_bytes:
                self.refuse_head()

    def refuse_head(self) -> None:
        self.head_open = False
        self.logger.warning("Request head over %d bytes refused.", self.max_head_bytes)
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(TOO_LARGE)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + TOO_LARGE
        )
        self.transport.close()
