"""Ending a frozen replica's database sessions (PostgreSQL, scale-out).

Every gateway session names its replica (`application_name`, `Database.session_settings`). A replica
frozen (SIGSTOP, a stalled VM) inside a transaction keeps its row locks, and the lease
sweepers skip locked rows. The server's own bounds reach most such sessions
(`idle_in_transaction_session_timeout` between statements, `statement_timeout` while one
runs), but not one frozen half-way through a statement's protocol messages (a Parse sent,
its Sync not yet): the server waits for the client with the session "active", and no
timeout of PostgreSQL 15 fires while it reads from the client.

So the sweeper ends them itself: the sessions of a replica whose lease on a run has lapsed,
in a transaction that began before the lapse. A live replica's transactions are short (well
inside the lease) and a replica whose lease lapsed has lost its runs anyway (fencing): what
it was writing under that claim would be refused.
"""

from __future__ import annotations

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import SESSION_PREFIX
from pronghorn.persistence.repos.runs import INFLIGHT

_END_STALE = text(
    """
    WITH stale AS (
        SELECT owner, min(lease_expires_at) AS lapsed
          FROM runs
         WHERE status IN :inflight AND owner IS NOT NULL AND owner <> :sweeper
           AND lease_expires_at < now()
         GROUP BY owner
    )
    SELECT a.pid, pg_terminate_backend(a.pid, :wait_ms) AS ended
      FROM pg_stat_activity a
      JOIN stale s ON a.application_name = :prefix || s.owner
     WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
       AND a.xact_start IS NOT NULL AND a.xact_start < s.lapsed
    """
).bindparams(bindparam("inflight", expanding=True))


def end_stale_sessions(conn: Connection, *, sweeper: str, wait_ms: int = 2000) -> list[int]:
    """End the sessions other replicas hold open in a transaction since before one of their
    run leases lapsed; their server pids. Waits up to `wait_ms` for each to exit, so its
    locks are free when this returns."""
    rows = conn.execute(
        _END_STALE,
        {
            "inflight": list(INFLIGHT),
            "sweeper": sweeper,
            "wait_ms": wait_ms,
            "prefix": SESSION_PREFIX,
        },
    )
    return [int(pid) for pid, _ended in rows]
