"""Idempotency-Key across replicas: the same key sent to two replicas at once, and a retry
on the other replica, start one run (real processes on PostgreSQL + Redis; issue 28)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cluster.conftest import API, TIMEOUT, cluster, new_thread, wait_run

pytestmark = TIMEOUT


def test_one_key_on_two_replicas_starts_one_run(tmp_path: Path):
    with cluster(tmp_path) as start:
        a, b = start(), start()
        with a.client() as ca, b.client() as cb:
            tid = new_thread(ca)
            log = str(tmp_path / "log.jsonl")
            body = {"assistant_id": "clustered", "input": {"gate": "", "hold_s": 0, "log": log}}
            for attempt in range(5):
                headers = {"Idempotency-Key": f"race-{attempt}-{uuid.uuid4()}"}

                def post(client, headers=headers):
                    return client.post(f"{API}/threads/{tid}/runs", json=body, headers=headers)

                with ThreadPoolExecutor(4) as pool:
                    answers = list(pool.map(post, [ca, cb, ca, cb]))
                assert {r.status_code for r in answers} == {200}, [r.text for r in answers]
                ids = {r.json()["run_id"] for r in answers}
                assert len(ids) == 1
                wait_run(cb, tid, ids.pop(), {"success"})
            # A retry on the other replica after the run ended: its record, no new run.
            headers = {"Idempotency-Key": f"later-{uuid.uuid4()}"}
            first = ca.post(f"{API}/threads/{tid}/runs/wait", json=body, headers=headers)
            again = cb.post(f"{API}/threads/{tid}/runs/wait", json=body, headers=headers)
            assert first.status_code == again.status_code == 200, again.text
            assert again.json() == first.json()
            assert again.headers["idempotent-replayed"] == "true"
            listed = ca.get(f"{API}/threads/{tid}/runs", params={"limit": 100}).json()
            assert len(listed) == 6
