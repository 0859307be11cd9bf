"""The enabled state of skills. ``PUBLIC`` is the owner of public skills' rows."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import skill_states

PUBLIC = ""


def states(conn: Connection, owner_id: str | None) -> dict[tuple[str, str], bool]:
    """``{(owner, name): enabled}`` for the public rows and ``owner_id``'s own."""
    owners = [PUBLIC] if owner_id is None else [PUBLIC, owner_id]
    rows = conn.execute(
        select(skill_states.c.owner_id, skill_states.c.name, skill_states.c.enabled).where(
            or_(*(skill_states.c.owner_id == o for o in owners))
        )
    )
    return {(r.owner_id, r.name): bool(r.enabled) for r in rows}


def set_enabled(conn: Connection, owner_id: str, name: str, enabled: bool) -> None:
    values = {"owner_id": owner_id, "name": name, "enabled": enabled, "updated_at": now()}
    dialect = conn.dialect.name
    if dialect in ("sqlite", "postgresql"):
        ins = (sqlite_insert if dialect == "sqlite" else pg_insert)(skill_states).values(values)
        conn.execute(
            ins.on_conflict_do_update(
                index_elements=["owner_id", "name"],
                set_={"enabled": enabled, "updated_at": values["updated_at"]},
            )
        )
        return
    done = conn.execute(
        update(skill_states)
        .where(skill_states.c.owner_id == owner_id, skill_states.c.name == name)
        .values(enabled=enabled, updated_at=values["updated_at"])
    )
    if not done.rowcount:
        conn.execute(skill_states.insert().values(values))


def forget(conn: Connection, owner_id: str, names: Collection[str]) -> None:
    conn.execute(
        delete(skill_states).where(
            skill_states.c.owner_id == owner_id, skill_states.c.name.in_(list(names))
        )
    )
