"""OpenTelemetry traces exported by OTLP/HTTP to a local collector stand-in: the span tree
of one lead-agent run with a scripted model (HTTP request → run → graph → nodes → model
and tool calls), run and thread ids on every run span, tokens on model spans, a caller's
traceparent continued; trace ids in JSON logs; LangSmith / Langfuse callbacks."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fakes.otlp_collector import CollectedSpan, FakeCollector
from ops.test_metrics import RULES
from support.inproc import InProcessServer
from support.live import LiveServer, base_config

API = "/api/langgraph"
Start = Callable[..., InProcessServer]
SERVER, CLIENT = 2, 3  # OTLP SpanKind values
ERROR = 2  # OTLP StatusCode


@pytest.fixture
def collector() -> Iterator[FakeCollector]:
    with FakeCollector() as fake:
        yield fake


def agent_app(start_app: Start, collector: FakeCollector, **extra: Any) -> InProcessServer:
    return start_app(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        tracing={
            "service_name": "pronghorn-test",
            "otlp": {"endpoint": collector.base_url, "headers": {"x-api-key": "k1"}},
            **extra,
        },
    )


def children(spans: list[CollectedSpan], parent: CollectedSpan) -> list[CollectedSpan]:
    return [s for s in spans if s.parent_id == parent.span_id]


def descendants(spans: list[CollectedSpan], parent: CollectedSpan) -> list[CollectedSpan]:
    out = []
    for child in children(spans, parent):
        out += [child, *descendants(spans, child)]
    return out


def one(spans: list[CollectedSpan], name: str) -> CollectedSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, sorted(s.name for s in spans))
    return found[0]


def test_span_tree_of_an_agent_run(start_app: Start, collector: FakeCollector) -> None:
    app = agent_app(start_app, collector)
    caller_trace = "0af7651916cd43dd8448eb211c80319c"
    caller_span = "b7ad6b7169203331"
    with app.http() as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        resp = http.post(
            f"{API}/threads/{tid}/runs/wait",
            json={
                "assistant_id": "lead_agent",
                "input": {"messages": [{"role": "user", "content": "tools please"}]},
            },
            headers={"traceparent": f"00-{caller_trace}-{caller_span}-01"},
        )
        assert resp.status_code == 200
        run_id = http.get(f"{API}/threads/{tid}/runs").json()[0]["run_id"]
    app.stop()  # the exporter sends what it buffered
    spans = collector.spans
    assert collector.headers[0]["x-api-key"] == "k1"
    assert collector.headers[0]["content-type"] == "application/x-protobuf"
    assert {s.resource["service.name"] for s in spans} == {"pronghorn-test"}

    # the request continues the caller's trace; the run hangs under the request
    request = one(spans, f"POST {API}/threads/{{thread_id}}/runs/wait")
    assert request.kind == SERVER
    assert request.trace_id == caller_trace and request.parent_id == caller_span
    assert request.attributes["http.route"] == f"{API}/threads/{{thread_id}}/runs/wait"
    assert request.attributes["http.response.status_code"] == 200
    run = one(spans, "run")
    assert run.parent_id == request.span_id
    assert run.attributes["pronghorn.run_id"] == run_id
    assert run.attributes["pronghorn.thread_id"] == tid
    assert run.attributes["pronghorn.run.status"] == "success"

    # run → graph → nodes → model / tool calls, all one trace carrying the run's ids
    graphs = children(spans, run)
    assert len(graphs) == 1 and graphs[0].name.startswith("graph ")
    nodes = children(spans, graphs[0])
    assert all(n.name.startswith("node ") for n in nodes)
    names = [n.name for n in nodes]
    assert names.count("node model") == 3 and names.count("node tools") == 2
    run_spans = [run, *descendants(spans, run)]
    assert len(run_spans) == 1 + 1 + len(nodes) + 3 + 2  # run, graph, nodes, 3 chats, 2 tools
    for span in run_spans:
        assert span.trace_id == caller_trace
        assert span.attributes["pronghorn.run_id"] == run_id
        assert span.attributes["pronghorn.thread_id"] == tid

    chats = [s for s in spans if s.name == "chat s"]
    assert len(chats) == 3
    by_id = {s.span_id: s for s in spans}
    for chat in chats:
        assert chat.kind == CLIENT
        assert by_id[chat.parent_id].name == "node model"
        assert chat.attributes["gen_ai.request.model"] == "s"
    tokens = sorted(
        (c.attributes["gen_ai.usage.input_tokens"], c.attributes["gen_ai.usage.output_tokens"])
        for c in chats
    )
    assert tokens == [(100, 7), (120, 5), (140, 2)]

    write = one(spans, "tool write_file")
    read = one(spans, "tool read_file")
    assert by_id[write.parent_id].name == "node tools"
    assert by_id[read.parent_id].name == "node tools"
    assert write.status_code != ERROR
    assert read.status_code == ERROR  # /etc/passwd is outside the sandbox


def test_failed_run_marks_its_span(start_app: Start, collector: FakeCollector) -> None:
    app = start_app(tracing={"otlp": {"endpoint": collector.base_url + "/v1/traces"}})
    with app.http() as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "echo", "input": {"messages": [], "fail": True}}
        http.post(f"{API}/threads/{tid}/runs/wait", json=body)
    app.stop()
    run = one(collector.spans, "run")
    assert run.status_code == ERROR
    assert run.attributes["pronghorn.run.status"] == "error"
    nodes = {s.name for s in collector.spans if s.name.startswith("node ")}
    assert nodes == {"node prepare", "node respond"}
    respond = one(collector.spans, "node respond")
    assert respond.status_code == ERROR


def test_no_endpoint_no_spans(start_app: Start, collector: FakeCollector) -> None:
    app = start_app()
    with app.http() as http:
        assert http.get("/health").status_code == 200
    app.stop()
    assert collector.spans == []


def test_trace_ids_in_json_logs() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from pronghorn.gateway.logs import ContextFilter, JsonFormatter

    tracer = TracerProvider().get_tracer("test")
    record = logging.LogRecord("pronghorn.test", logging.INFO, __file__, 1, "hello", (), None)
    with tracer.start_as_current_span("work") as span:
        assert ContextFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    context = span.get_span_context()
    assert line["trace_id"] == format(context.trace_id, "032x")
    assert line["span_id"] == format(context.span_id, "016x")
    outside = logging.LogRecord("pronghorn.test", logging.INFO, __file__, 1, "bye", (), None)
    ContextFilter().filter(outside)
    assert "trace_id" not in json.loads(JsonFormatter().format(outside))


def test_bad_otlp_endpoint_is_a_config_error() -> None:
    from pydantic import ValidationError

    from pronghorn.config.schema.ops import OtlpConfig

    with pytest.raises(ValidationError, match="not an http"):
        OtlpConfig(endpoint="collector:4318")


class LangSmithStandIn:
    """Answers LangSmith's API (`/info`, `/runs/batch`) on loopback; keeps the batches."""

    INFO = {
        "version": "0.10.0",
        "batch_ingest_config": {
            "use_multipart_endpoint": False,
            "size_limit": 100,
            "size_limit_bytes": 20_971_520,
            "scale_up_qsize_trigger": 1000,
            "scale_up_nthreads_limit": 16,
            "scale_down_nempty_trigger": 4,
        },
    }

    def __init__(self) -> None:
        self.batches: list[tuple[dict[str, str], dict[str, Any]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.command == "POST" and self.path == "/runs/batch":
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    stand_in.batches.append((headers, json.loads(body)))
                out = json.dumps(stand_in.INFO if self.path.startswith("/info") else {}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_langsmith_gets_each_run_with_thread_and_owner(start_app: Start) -> None:
    stand_in = LangSmithStandIn()
    try:
        langsmith = {"api_key": "lsv2-key", "endpoint": stand_in.url, "project": "team-a"}
        app = start_app(tracing={"langsmith": langsmith})
        with app.http() as http:
            tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
            body = {"assistant_id": "echo", "input": {"messages": [], "fail": False}}
            assert http.post(f"{API}/threads/{tid}/runs/wait", json=body).status_code == 200
            assert "lsv2-key" not in http.get("/api/config/status").text
        app.stop()  # the client's batches are flushed at shutdown
    finally:
        stand_in.close()
    posted = [run for _, batch in stand_in.batches for run in batch.get("post", [])]
    assert posted, "LangSmith received no run"
    assert {headers["x-api-key"] for headers, _ in stand_in.batches} == {"lsv2-key"}
    root = next(r for r in posted if r.get("parent_run_id") is None)
    assert root["session_name"] == "team-a"
    metadata = root["extra"]["metadata"]
    assert metadata["session_id"] == tid
    assert metadata["thread_id"] == tid
    assert metadata["user_id"] == "local"


def test_langfuse_without_its_package_stops_the_server_clearly(tmp_path: Path) -> None:
    from pronghorn.runtime.observability.trace_vendors import (
        LANGFUSE_MISSING,
        langfuse_handler_class,
    )

    try:
        langfuse_handler_class()
    except RuntimeError:
        pass
    else:
        pytest.skip("langfuse is installed here")
    langfuse = {"public_key": "pk-lf-1", "secret_key": "sk-lf-1"}
    srv = LiveServer(tmp_path, base_config(tracing={"langfuse": langfuse}))
    with pytest.raises(RuntimeError, match="server exited early") as caught:
        srv.start()
    assert LANGFUSE_MISSING in str(caught.value)
