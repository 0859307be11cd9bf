"""Custom auth for Pronghorn, written exactly as for the LangGraph server.

Point `auth.custom` at this file (`auth: {mode: custom, custom: ./auth.py:auth}`) and every
API request goes through `authenticate`; the `@auth.on` handlers then decide what each user
may do and see. The same file works unchanged as `"auth": {"path": "./auth.py:auth"}` in a
langgraph.json.

The token table stands in for your identity provider: in production, verify a JWT or ask
your user service here (with an async HTTP client, so the server is never blocked).
"""

from __future__ import annotations

from langgraph_sdk import Auth

auth = Auth()

# token -> user. Any extra field (here `org`) reaches the handlers (`ctx.user["org"]`) and
# the graph (`config["configurable"]["langgraph_auth_user"]`).
USERS: dict[str, Auth.types.MinimalUserDict] = {
    "alice-token": {
        "identity": "alice",
        "display_name": "Alice",
        "permissions": ["threads:write", "assistants:write"],
        "org": "acme",  # type: ignore[typeddict-unknown-key]
    },
    "bob-token": {
        "identity": "bob",
        "display_name": "Bob",
        "permissions": ["threads:write"],
        "org": "acme",  # type: ignore[typeddict-unknown-key]
    },
}
REVOKED = {"mallory-token"}


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Who is asking: `Authorization: Bearer <token>`."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Bearer token required")
    if token in REVOKED:
        raise Auth.exceptions.HTTPException(status_code=403, detail="token revoked")
    user = USERS.get(token)
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return user


@auth.on.threads.create
async def stamp_thread_owner(
    ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create.value
) -> None:
    """A new thread records who made it in its metadata."""
    metadata = value.setdefault("metadata", {})
    metadata["owner"] = ctx.user.identity


@auth.on.threads
async def own_threads_only(
    ctx: Auth.types.AuthContext, value: Auth.types.on.threads.value
) -> Auth.types.FilterType:
    """Every other thread action (read, update, delete, search, runs) sees only the
    user's own threads: another user's thread is not found."""
    return {"owner": ctx.user.identity}


@auth.on.assistants(actions=["create", "update", "delete"])
async def assistant_writers(ctx: Auth.types.AuthContext, value: dict[str, object]) -> None:
    """Changing assistants needs a permission the authenticate handler granted."""
    if "assistants:write" not in ctx.permissions:
        raise Auth.exceptions.HTTPException(status_code=403, detail="assistants:write needed")


@auth.on
async def everything_else(ctx: Auth.types.AuthContext, value: dict[str, object]) -> bool:
    """What no handler above covers (reading assistants, crons, the store) is allowed:
    Pronghorn keeps each user's crons and store items apart by itself. Return False to
    refuse such actions instead (default deny)."""
    return True
