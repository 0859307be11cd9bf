"""ASGI middleware that answers every HTTP request with ``Connection: close``.

For the fake model providers: langchain-openai and langchain-anthropic share one cached http
client per (base_url, timeout) for the whole process, so a kept-alive connection to a fake
would outlive the test (and its event loop) and reach the garbage collector open. Closing
the connection after each response leaves nothing pooled.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ConnectionClose:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, send_closing)
