"""Two real users on a live server (auth.mode: local), each with an API key made through
the API, walk every endpoint of the other's resources with the official SDK over real
HTTP: all 404, search and count exclude them (the same table as tests/isolation, which runs
in process with stand-in principals)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from langgraph_sdk.client import LangGraphClient

from auth.authkit import AuthedServer
from isolation.test_isolation import ENDPOINTS, _alice, _status
from support.sdk import SdkFactory


@dataclass
class LiveUsers:
    """The `App` surface `_alice` and the table use (`sdk(name)`, `http(name)`), over a live
    server and real API keys."""

    url: str
    open_sdk: SdkFactory
    keys: dict[str, str] = field(default_factory=dict)

    def sdk(self, name: str) -> LangGraphClient:
        return self.open_sdk(url=f"{self.url}/api/langgraph", api_key=self.keys[name])

    def http(self, name: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.url, headers={"x-api-key": self.keys[name]}, timeout=120
        )


async def test_two_real_users_never_see_each_other(
    authed: AuthedServer, sdk_client: SdkFactory
) -> None:
    admin = authed.login()
    users = LiveUsers(authed.url, sdk_client)
    for name in ("alice", "bob"):
        authed.new_user(admin, f"{name}-iso", f"{name}-password-123")
        browser = authed.login(f"{name}-iso", f"{name}-password-123")
        users.keys[name] = authed.new_key(browser, "sdk")["key"]

    a = await _alice(users)  # type: ignore[arg-type]  # duck-typed App
    bob = users.sdk("bob")
    async with users.http("bob") as http:
        statuses = {name: await _status(call, bob, http, a) for name, call in ENDPOINTS.items()}
    assert statuses == dict.fromkeys(ENDPOINTS, 404)

    assert a.thread_id not in [t["thread_id"] for t in await bob.threads.search(limit=100)]
    assert await bob.threads.count() == 0
    assert a.assistant_id not in [x["assistant_id"] for x in await bob.assistants.search()]
    assert await bob.crons.search() == []
    # Store: the same namespace and key, each user sees their own value, namespace as written.
    alice = users.sdk("alice")
    await alice.store.put_item(["notes"], "k", {"who": "alice"})
    await bob.store.put_item(["notes"], "k", {"who": "bob"})
    assert (await alice.store.get_item(["notes"], "k"))["value"] == {"who": "alice"}
    assert (await bob.store.get_item(["notes"], "k"))["value"] == {"who": "bob"}
    assert await bob.store.list_namespaces() == {"namespaces": [["notes"]]}
    # Alice still has everything.
    assert ((await alice.threads.get(a.thread_id))["metadata"] or {}).get("project") == "x"
    # The admin sees alice's thread only when asking for everyone's.
    admin_key = authed.new_key(admin, "iso-admin")["key"]
    root = sdk_client(url=f"{authed.url}/api/langgraph", api_key=admin_key)
    assert a.thread_id not in [t["thread_id"] for t in await root.threads.search(limit=100)]
    everyone = sdk_client(
        url=f"{authed.url}/api/langgraph",
        api_key=admin_key,
        headers={"X-Pronghorn-All-Users": "true"},
    )
    assert (await everyone.threads.get(a.thread_id))["thread_id"] == a.thread_id
