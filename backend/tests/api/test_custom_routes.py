"""Custom routes (`http.app`, as in a langgraph.json) and the OpenAPI document under the API
root, against live servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from pronghorn.gateway.custom_app import CustomAppError
from pronghorn.gateway.openapi import GatewayApp
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """One gateway whose `http.app` is a `./file.py:attr` next to its config file."""
    workdir = tmp_path_factory.mktemp("custom")
    (workdir / "webapp.py").write_text("from testgraphs.custom_app import app\n", encoding="utf-8")
    config = base_config(http={"app": "./webapp.py:app"})
    srv = InProcessServer(workdir, config).start()
    try:
        yield srv
    finally:
        srv.stop()


def app_for(tmp_path: Path, **overrides: Any) -> GatewayApp:
    """The app as `pronghorn serve` builds it (no lifespan: routing and OpenAPI only)."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(base_config(**overrides)), encoding="utf-8")
    app = create_app(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
    assert isinstance(app, GatewayApp)
    return app


def test_custom_routes_are_served_by_the_custom_app(server: InProcessServer) -> None:
    with server.http(base_url=server.url, timeout=30) as http:
        r = http.get("/custom/hello", headers={"X-Request-ID": "abc"})
        assert r.status_code == 200
        assert r.json() == {"greeting": "hello from the lifespan"}  # its lifespan state
        assert r.headers["X-Custom-App"] == "yes"  # its middleware
        assert r.headers["X-Request-ID"] == "abc"  # ours, in front of it
        r = http.post("/custom/items/7", json={"name": "seven"})
        assert r.json() == {"id": 7, "name": "seven"}  # path params and body validation
        r = http.post("/custom/items/seven", json={"name": "x"})
        assert r.status_code == 422  # FastAPI's own validation of the custom app
        r = http.get("/custom/teapot")
        assert r.status_code == 418 and r.json() == {"detail": "short and stout"}
        # Its own /docs and /openapi.json do not replace ours.
        assert "/api/langgraph/threads" in http.get("/openapi.json").json()["paths"]


def test_custom_route_takes_precedence_and_the_rest_is_untouched(server: InProcessServer) -> None:
    with server.http(base_url=server.url, timeout=30) as http:
        assert http.get("/api/langgraph/ok").json() == {"ok": True, "custom": True}
        assert http.get("/health").status_code == 200
        assert http.get("/api/langgraph/info").status_code == 200
        ui = http.get("/")
        assert ui.status_code == 200 and "text/html" in ui.headers["content-type"]
        missing = http.get("/api/langgraph/nowhere")
        assert missing.status_code == 404 and missing.json()["detail"]


async def test_the_api_still_works_beside_custom_routes(server: InProcessServer) -> None:
    client = server.sdk()
    thread = await client.threads.create()
    out = await client.runs.wait(
        thread["thread_id"], "echo", input={"messages": [{"role": "user", "content": "hi"}]}
    )
    assert as_state(out)["messages"][-1]["content"] == "echo: hi"


def test_openapi_lists_custom_routes_and_is_served_under_the_api_root(
    server: InProcessServer,
) -> None:
    with server.http(base_url=server.url, timeout=30) as http:
        root = http.get("/openapi.json")
        under_api = http.get("/api/langgraph/openapi.json")
    assert root.status_code == 200 and under_api.status_code == 200
    assert under_api.json() == root.json()
    paths = root.json()["paths"]
    assert "/api/langgraph/threads" in paths  # ours
    assert set(paths["/custom/items/{item_id}"]) == {"post"}  # the custom app's
    assert "/custom/hello" in paths
    body = paths["/custom/items/{item_id}"]["post"]["requestBody"]
    ref = body["content"]["application/json"]["schema"]["$ref"]
    assert ref.rsplit("/", 1)[-1] in root.json()["components"]["schemas"]


async def test_openapi_alias_follows_docs_enabled(tmp_path: Path) -> None:
    app = app_for(tmp_path, server={"docs_enabled": False})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        assert (await http.get("/openapi.json")).status_code == 404
        assert (await http.get("/api/langgraph/openapi.json")).status_code == 404


def test_a_bad_http_app_is_refused_when_the_app_is_built(tmp_path: Path) -> None:
    with pytest.raises(CustomAppError, match="not a Starlette or FastAPI app"):
        app_for(tmp_path, http={"app": "testgraphs.custom_app:Item"})
    with pytest.raises(CustomAppError, match="file not found"):
        app_for(tmp_path, http={"app": "./missing.py:app"})
    with pytest.raises(CustomAppError, match="no attribute"):
        app_for(tmp_path, http={"app": "testgraphs.custom_app:nothing"})


async def test_a_plain_starlette_app_is_served_and_documented(tmp_path: Path) -> None:
    (tmp_path / "webapp.py").write_text(
        "from starlette.applications import Starlette\n"
        "from starlette.responses import PlainTextResponse\n"
        "from starlette.routing import Route\n\n"
        "async def ping(request):\n"
        "    return PlainTextResponse('pong ' + request.path_params['n'])\n\n"
        "app = Starlette(routes=[Route('/custom/ping/{n}', ping, methods=['GET', 'POST'])])\n",
        encoding="utf-8",
    )
    app = app_for(tmp_path, http={"app": "./webapp.py:app"})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        assert (await http.post("/custom/ping/3")).text == "pong 3"
        paths = (await http.get("/api/langgraph/openapi.json")).json()["paths"]
    assert set(paths["/custom/ping/{n}"]) == {"get", "post"}
    assert "/api/langgraph/threads" in paths
