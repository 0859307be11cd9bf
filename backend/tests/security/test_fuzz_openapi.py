"""A fuzz run over the served OpenAPI document: no input may make the gateway answer 5xx.

Schemathesis generates requests for every operation of a live gateway's `/openapi.json`,
both schema-valid (positive) and schema-breaking (negative) ones, and checks each answer
with its `not_a_server_error` check. The budget is per operation and mode, and a constant,
so the run stays bounded on a small machine. Failures are collected across all operations
and reported together (operation, status, a curl-like repro and the answer body).
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
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup

from security.conftest import assert_responsive
from support.live import LiveServer, base_config

EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES_PER_OPERATION", "5"))
"""Generated cases per operation and mode (positive, negative): the fuzz run's budget
(5 keeps the run near a minute on two cores; raise it locally for a deeper search, with
`--timeout` to match)."""

REQUEST_TIMEOUT_S = 30.0


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
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        response = case.call(base_url=base_url, timeout=REQUEST_TIMEOUT_S)
        try:
            case.validate_response(response, checks=[not_a_server_error])
        except (Failure, FailureGroup):
            failures.append(
                f"{operation.method.upper()} {operation.path} ({mode.value}) -> "
                f"{response.status_code}: {response.text[:300]!r}\n    {case.as_curl_command()}"
            )

    # Unsatisfiable: nothing to break (e.g. negative cases of a parameterless GET).
    with contextlib.suppress(Unsatisfiable):
        run()
    return calls


@pytest.mark.timeout(300)  # the budget is in examples; this only guards a hung request
def test_fuzz_every_operation_answers_no_5xx(gateway: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{gateway.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 40, "the served OpenAPI lost its operations"
    failures: list[str] = []
    calls = 0
    started = time.monotonic()
    with assert_responsive(gateway.url, limit_s=2.0):
        for operation in operations:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                calls += _fuzz_operation(operation, mode, gateway.url, failures)
    took = time.monotonic() - started
    print(f"fuzzed {len(operations)} operations with {calls} requests in {took:.1f}s")
    assert not failures, f"{len(failures)} server errors:\n" + "\n".join(failures)
