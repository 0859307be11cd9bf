"""What a history rewrite removes from one thread, worked out from its checkpoint graph.

Both of Pronghorn's savers (`runtime/checkpoints/sqlite_checkpoint.py`,
`runtime/checkpoints/postgres_history.py`)
read a thread's checkpoints as `Node`s, plan here, and apply the plan in one transaction.
A plan names the checkpoints that go (their writes go with them) and the new parent of each
kept checkpoint whose parent goes: its nearest kept ancestor in its namespace (rollback), or
none (keep-latest, which keeps no ancestor).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

Key = tuple[str, str]
"""A checkpoint within a thread: (namespace, checkpoint id)."""


@dataclass(frozen=True, slots=True)
class Node:
    ns: str
    checkpoint_id: str
    parent_id: str | None
    run_id: str | None

    @property
    def key(self) -> Key:
        return (self.ns, self.checkpoint_id)


@dataclass(frozen=True, slots=True)
class Plan:
    gone: frozenset[Key]
    reparent: dict[Key, str | None]

    def __bool__(self) -> bool:
        return bool(self.gone)


def without_runs(nodes: Iterable[Node], run_ids: Collection[str]) -> Plan:
    """Drop every checkpoint whose metadata names one of `run_ids`; a kept checkpoint whose
    parent goes is re-pointed at its nearest kept ancestor (or none)."""
    graph = {n.key: n for n in nodes}
    gone = frozenset(k for k, n in graph.items() if n.run_id is not None and n.run_id in run_ids)
    if not gone:
        return Plan(frozenset(), {})
    reparent: dict[Key, str | None] = {}
    for key, node in graph.items():
        if key in gone or node.parent_id is None or (node.ns, node.parent_id) not in gone:
            continue
        parent: str | None = node.parent_id
        seen: set[str] = set()
        while parent is not None and (node.ns, parent) in gone and parent not in seen:
            seen.add(parent)
            parent = graph[(node.ns, parent)].parent_id
        reparent[key] = parent
    return Plan(gone, reparent)


def keep_latest(nodes: Iterable[Node]) -> Plan:
    """Keep the latest checkpoint of each namespace (checkpoint ids sort in time order, as the
    savers list them), with no parent."""
    graph = {n.key: n for n in nodes}
    latest: dict[str, str] = {}
    for ns, checkpoint_id in graph:
        if checkpoint_id > latest.get(ns, ""):
            latest[ns] = checkpoint_id
    gone = frozenset(k for k in graph if latest[k[0]] != k[1])
    if not gone:
        return Plan(frozenset(), {})
    reparent: dict[Key, str | None] = {
        (ns, cid): None for ns, cid in latest.items() if graph[(ns, cid)].parent_id is not None
    }
    return Plan(gone, reparent)
