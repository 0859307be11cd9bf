"""A custom FastAPI app for `http.app` (custom-routes tests): its own lifespan, middleware,
exception handler and path parameters, and one route that shadows a built-in one."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.middleware.base import BaseHTTPMiddleware


class Teapot(Exception):
    pass


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    yield {"greeting": "hello from the lifespan"}


app = FastAPI(lifespan=lifespan)


class Tag(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        response.headers["X-Custom-App"] = "yes"
        return response


app.add_middleware(Tag)


@app.exception_handler(Teapot)
async def teapot(request: Request, exc: Teapot) -> JSONResponse:
    return JSONResponse({"detail": "short and stout"}, status_code=418)


@app.get("/custom/hello")
async def hello(request: Request) -> dict[str, str]:
    return {"greeting": request.state.greeting}


class Item(BaseModel):
    name: str


@app.post("/custom/items/{item_id}")
async def put_item(item_id: int, item: Item) -> dict[str, Any]:
    return {"id": item_id, "name": item.name}


@app.get("/custom/teapot")
async def brew() -> None:
    raise Teapot()


@app.get("/api/langgraph/ok")
async def shadowed_ok() -> dict[str, Any]:
    return {"ok": True, "custom": True}
