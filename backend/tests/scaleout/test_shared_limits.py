"""Limits shared through Redis by two replicas (`broker.kind: redis`): failed logins and
failed API keys count across replicas, as do the per-user request buckets
(`rate_limits.backend: auto`); with Redis gone each replica still limits on its own."""

from __future__ import annotations

from ops.users_auth import ALICE

BAD_KEY = {"x-api-key": "phk_" + "x" * 43}


LOCAL = {"mode": "local", "max_failures_per_ip": 3, "max_failures_per_account": 2}


def _login(client, username: str) -> int:
    body = {"username": username, "password": "not-the-password"}
    return client.post("/api/auth/login", json=body).status_code


def test_failed_api_keys_count_across_replicas(replica):
    a, b = replica(auth=LOCAL), replica(auth=LOCAL)
    with a.http() as ca, b.http() as cb:
        codes = [c.get("/api/auth/me", headers=BAD_KEY).status_code for c in (ca, cb, ca)]
        assert codes == [401, 401, 401]
        # Three failures from this IP in all (two on A, one on B): B refuses the next one.
        refused = cb.get("/api/auth/me", headers=BAD_KEY)
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert ca.get("/api/auth/me", headers=BAD_KEY).status_code == 429


def test_failed_logins_of_one_account_count_across_replicas(replica):
    auth = {**LOCAL, "max_failures_per_ip": 50}
    a, b = replica(auth=auth), replica(auth=auth)
    with a.http() as ca, b.http() as cb:
        assert [_login(ca, "carol"), _login(cb, "carol")] == [401, 401]
        assert _login(ca, "carol") == 429  # the account's second failure was on B
        assert _login(cb, "Carol") == 429  # the same account (names are case-folded)
        assert _login(cb, "dave") == 401  # another account is not affected


def test_request_buckets_are_shared_by_default(replica):
    """`rate_limits.backend: auto` with the Redis broker: one bucket per user for all."""
    custom = {"mode": "custom", "custom": "ops.users_auth:auth"}
    rates = {"requests_per_second": 0.001, "burst": 2}
    a = replica(auth=custom, rate_limits=rates)
    b = replica(auth=custom, rate_limits=rates)
    search = "/api/langgraph/threads/search"
    with a.http() as ca, b.http() as cb:
        assert ca.post(search, json={}, headers=ALICE).status_code == 200
        assert cb.post(search, json={}, headers=ALICE).status_code == 200
        assert ca.post(search, json={}, headers=ALICE).status_code == 429
        assert cb.post(search, json={}, headers=ALICE).status_code == 429


def test_without_redis_each_replica_still_limits(replica, redis_proxy):
    a = replica(redis_url=redis_proxy.url, auth=LOCAL)
    with a.http() as ca:
        assert ca.get("/api/auth/me", headers=BAD_KEY).status_code == 401
        redis_proxy.stop()
        # Redis is away: the replica's own counts go on (two more reach the limit of 3).
        codes = [ca.get("/api/auth/me", headers=BAD_KEY).status_code for _ in range(3)]
        assert codes == [401, 401, 429]
        redis_proxy.start()
        assert ca.get("/api/auth/me", headers=BAD_KEY).status_code == 429
