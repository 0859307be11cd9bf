"""A fuzz run over the served OpenAPI document: no input may make the gateway answer 5xx,
and every answer must be what the document says.

Schemathesis generates requests for every operation of a live gateway's `/openapi.json`,
both schema-valid (positive) and schema-breaking (negative) ones, and checks each answer:
no 5xx, a documented status, content type and body schema, and (negative cases) a 4xx.
A second test follows the document's links (create a thread, then use its id) with the
same checks. Budgets are constants, so the run stays bounded on a small machine. Failures
are collected and reported together (operation, status, why, the body and a curl repro).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import APIOperation, GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.control import SkipTest
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.core.result import Ok

from security.conftest import assert_responsive
from support.live import LiveServer, base_config

EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES_PER_OPERATION", "5"))
"""Generated cases per operation and mode (positive, negative): the fuzz run's budget
(5 keeps the run short on two cores; raise it locally for a deeper search, with
`FUZZ_TIMEOUT_S` to match)."""

REQUEST_TIMEOUT_S = 30.0

TIMEOUT_S = int(os.environ.get("FUZZ_TIMEOUT_S", "300"))
"""Per test: the budget is in examples, this only guards a hung request (raise it with
the budget)."""

CONFORMANCE = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
CHECKS = {
    GenerationMode.POSITIVE: CONFORMANCE,
    GenerationMode.NEGATIVE: [*CONFORMANCE, negative_data_rejection],
}
"""Every answer must be documented (status, content type, body schema) and never 5xx; a
schema-breaking request must also be refused with a 4xx."""

PROTOCOL_ERRORS_IN_200 = {("POST", "/api/langgraph/a2a/{assistant_id}")}
"""JSON-RPC answers a malformed call with a 200 carrying a JSON-RPC error (the A2A spec),
so `negative_data_rejection` does not apply there (the answer's schema still does)."""


def _checks(operation, mode: GenerationMode) -> list:  # type: ignore[no-untyped-def]
    if (operation.method.upper(), operation.path) in PROTOCOL_ERRORS_IN_200:
        return CONFORMANCE
    return CHECKS[mode]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path_factory.mktemp("fuzz"), base_config()).start(timeout=90)
    try:
        yield server
    finally:
        server.stop()


def _fuzz_operation(operation, mode: GenerationMode, base_url: str, failures: list[str]) -> int:  # type: ignore[no-untyped-def]
    calls = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: report what we found
        # hypothesis's enum metaclass hides the members' type from pyright
        suppress_health_check=list(HealthCheck),  # pyright: ignore[reportArgumentType]
    )
    def run(case) -> None:  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        response = case.call(base_url=base_url, timeout=REQUEST_TIMEOUT_S)
        try:
            case.validate_response(response, checks=_checks(operation, mode))
        except (Failure, FailureGroup) as exc:
            found = exc.exceptions if isinstance(exc, FailureGroup) else [exc]
            why = "; ".join(f"{f.title}: {f.message[:300]}" for f in found)
            failures.append(
                f"{operation.method.upper()} {operation.path} ({mode.value}) -> "
                f"{response.status_code}: {why}\n    body {response.text[:300]!r}"
                f"\n    {case.as_curl_command()}"
            )

    # SkipTest: nothing to break (negative cases of an operation whose inputs have no
    # constraint to violate, e.g. a plain string id in the path); schemathesis says so at
    # once when its modes are negative only. Unsatisfiable: every case drawn was filtered.
    with contextlib.suppress(SkipTest, Unsatisfiable):
        run()
    return calls


def _operations(url: str, mode: GenerationMode) -> list[APIOperation]:
    """The served document's operations, generating in `mode` only.

    One mode per loaded schema, as `schemathesis run --mode` does: with both modes
    configured, an operation that cannot be negated is found out by drawing and rejecting
    ~460 cases (about a second each, for some 60 operations) before hypothesis gives up; with the
    negative mode alone schemathesis skips it on the first draw, sending the same requests."""
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    schema.config.generation.update(modes=[mode])
    operations: list[APIOperation] = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # the document is valid
        operations.append(result.ok())
    return operations


@pytest.mark.timeout(TIMEOUT_S)
def test_fuzz_every_operation_conforms(gateway: LiveServer) -> None:
    plan: list[tuple[APIOperation, GenerationMode]] = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        operations = _operations(gateway.url, mode)
        assert len(operations) > 40, "the served OpenAPI lost its operations"
        plan += [(operation, mode) for operation in operations]
    failures: list[str] = []
    calls = 0
    started = time.monotonic()
    slowest: list[tuple[float, str]] = []
    with assert_responsive(gateway.url, limit_s=2.0):
        for operation, mode in plan:
            began = time.monotonic()
            calls += _fuzz_operation(operation, mode, gateway.url, failures)
            slowest.append((time.monotonic() - began, f"{operation.label} ({mode.value})"))
    took = time.monotonic() - started
    print(f"fuzzed {len(operations)} operations with {calls} requests in {took:.1f}s")
    print("slowest:", ", ".join(f"{label} {s:.1f}s" for s, label in sorted(slowest)[-8:]))
    assert not failures, f"{len(failures)} violations:\n" + "\n".join(failures)


STATEFUL_RUNS = int(os.environ.get("FUZZ_STATEFUL_RUNS", "8"))
"""Sequences of linked calls the stateful run tries (each at most `STATEFUL_STEPS` calls)."""

STATEFUL_STEPS = 6


@pytest.mark.timeout(TIMEOUT_S)
def test_fuzz_linked_calls_conform(gateway: LiveServer) -> None:
    """Follow the document's links (create a thread or assistant, then use the id it
    answered: read, patch, copy, state, history, uploads, usage, delete...) with the same
    conformance checks, so the answers about real resources are checked too, not only 404s."""
    schema = schemathesis.openapi.from_url(f"{gateway.url}/openapi.json")
    failures: list[str] = []
    statuses: list[int] = []

    class Linked(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case) -> dict[str, object]:  # type: ignore[no-untyped-def]
            return {"base_url": gateway.url, "timeout": REQUEST_TIMEOUT_S}

        def validate_response(self, response, case, additional_checks=None, **kwargs) -> None:  # type: ignore[no-untyped-def]
            statuses.append(response.status_code)
            try:
                case.validate_response(response, checks=CONFORMANCE)
            except (Failure, FailureGroup) as exc:
                found = exc.exceptions if isinstance(exc, FailureGroup) else [exc]
                why = "; ".join(f"{f.title}: {f.message[:300]}" for f in found)
                failures.append(
                    f"{case.operation.label} -> {response.status_code}: {why}"
                    f"\n    body {response.text[:300]!r}\n    {case.as_curl_command()}"
                )

    Linked.run(
        settings=settings(
            max_examples=STATEFUL_RUNS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            # hypothesis's enum metaclass hides the members' type from pyright
            suppress_health_check=list(HealthCheck),  # pyright: ignore[reportArgumentType]
        )
    )
    print(f"stateful: {len(statuses)} linked calls, {sum(s < 300 for s in statuses)} answered 2xx")
    assert sum(s < 300 for s in statuses) > STATEFUL_RUNS, "the links reached no resource"
    assert not failures, f"{len(failures)} violations:\n" + "\n".join(failures)
