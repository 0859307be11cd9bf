"""Two users by bearer token, for the per-user operations tests (`auth.mode: custom`,
`auth.custom: ops.users_auth:auth`)."""

from __future__ import annotations

from langgraph_sdk import Auth

auth = Auth()

TOKENS = {"alice-token": "alice", "bob-token": "bob"}
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    identity = TOKENS.get(token) if scheme.lower() == "bearer" else None
    if identity is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return identity
