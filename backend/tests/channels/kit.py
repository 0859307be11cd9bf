"""What the channel end-to-end tests share: the scripted model's common rules, a config
builder around it, the fast channel timings, fixture bodies for a fake platform and the
gateway in-process, and the waits on the Telegram fake's messages."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from fakes.platform_base import PlatformServer
from fakes.telegram_server import TOKEN, FakeTelegram
from support.inproc import InProcessServer
from support.live import base_config

Rule = dict[str, Any]
P = TypeVar("P", bound=PlatformServer)

OUT = "/mnt/user-data/outputs"
HELLO = "Hello there, **friend**! How can I help you today with your question?"
# Streaming edits and retries fast enough for tests (merged into a channel's section).
FAST = {"edit_interval_s": 0.05, "retry_initial_s": 0.05, "retry_max_s": 0.2}
# The last rule: anything no other rule matches gets "ok".
OK: Rule = {"steps": [{"text": "ok"}]}


def call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted step calling tool `name` with `args`."""
    return {"tool_calls": [{"name": name, "args": args}]}


def long_text(paragraphs: int, words: int) -> str:
    """A reply long enough to be split: `paragraphs` paragraphs of `words` x 5 words."""
    return "\n\n".join(
        f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * words for i in range(paragraphs)
    )


HELLO_RULE: Rule = {"match": "hello", "steps": [{"text": HELLO}]}
# After "hello" and "long": a presented file, a clarification, a second answer.
TAIL_RULES: list[Rule] = [
    {
        "match": "present",
        "steps": [
            call("write_file", description="w", path=f"{OUT}/report.md", content="# Report\n"),
            call("present_files", filepaths=[f"{OUT}/report.md"]),
            {"text": "Here is your report."},
        ],
    },
    {
        "match": "ask me",
        "steps": [
            call("ask_clarification", question="Which format?", options=["Short", "Long"]),
            {"text": "Thanks, that settles it."},
        ],
    },
    {"match": "second", "steps": [{"text": "The second answer."}]},
]


# The `tools` section offering the `hold` tool (channels/hold.py) that `held_rule` calls.
HOLD_TOOLS = {"extra": [{"use": "channels.hold:hold"}]}
BUSY_GATE = "busy"


def held_rule(fake: PlatformServer) -> Rule:
    """ "slow answer": a first line is shown, then the run stays in flight (the `hold` tool)
    until the test calls `fake.release(BUSY_GATE)`, then the answer ends."""
    hold = call("hold", url=f"{fake.url}/gate/{BUSY_GATE}")
    return {
        "match": "slow answer",
        "steps": [{"text": "Working on it.", **hold}, {"text": "Done, at last."}],
    }


def scripted_config(rules: list[Rule], **sections: Any) -> dict[str, Any]:
    """A test config whose default model `s` is the scripted one playing `rules`, with no
    sandbox isolation; `sections` (e.g. `channels=...`) are merged in as `base_config` does."""
    return base_config(
        models=[{"name": "s", "provider": "scripted", "rules": rules}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        **sections,
    )


def telegram_section(fake: FakeTelegram, **extra: Any) -> dict[str, Any]:
    """The `channels.telegram` section long-polling `fake`, with the fast timings."""
    return {"bot_token": TOKEN, "api_base_url": fake.url, "poll_timeout_s": 5, **FAST, **extra}


def serving(fake: P) -> Iterator[P]:
    """A fixture body: `fake` started for the fixture's scope, then stopped."""
    fake.start()
    yield fake
    fake.stop()


def gateway(workdir: Path, cfg: dict[str, Any]) -> Iterator[InProcessServer]:
    """A fixture body: the gateway in-process on `cfg` in `workdir`, then stopped."""
    server = InProcessServer(workdir, cfg).start(timeout=120)
    yield server
    server.stop()


def final_text(fake: FakeTelegram, chat: int, contains: str) -> str:
    """Wait until a message to `chat` (sent or edited) contains `contains` and is not a
    streaming preview; that text."""

    def check() -> str | None:
        for sent in reversed(fake.calls):
            if (
                sent.method in ("sendMessage", "editMessageText")
                and int(sent.body["chat_id"]) == chat
            ):
                text = str(sent.body.get("text", ""))
                if contains in text and not text.endswith(" …"):
                    return text
        return None

    return fake.wait_for(check)


class Texts(Protocol):
    """A fake that lists the texts the bot sent or edited in a chat (Discord, Feishu, Slack)."""

    def texts(self, chat: str, /) -> list[str]: ...

    def wait_for(self, check: Callable[[], Any], timeout: float = ...) -> Any: ...


def settled_text(fake: Texts, chat: str, contains: str) -> str:
    """Wait until a text in `chat` (sent or edited) contains `contains` and is not a
    streaming preview; that text."""
    return fake.wait_for(
        lambda: next(
            (t for t in reversed(fake.texts(chat)) if contains in t and not t.endswith(" …")),
            None,
        )
    )


def telegram_threads(srv: InProcessServer, chat: int) -> list[dict[str, Any]]:
    """The threads of Telegram chat `chat`."""
    with srv.http() as http:
        threads = http.post(
            f"{srv.api}/threads/search", json={"metadata": {"channel": "telegram"}}
        ).json()
    return [t for t in threads if t["metadata"].get("chat") == str(chat)]


def thread_state(srv: InProcessServer, thread_id: str) -> dict[str, Any]:
    """The state of thread `thread_id`, read through the API."""
    with srv.http() as http:
        return http.get(f"{srv.api}/threads/{thread_id}/state").json()


def telegram_state(srv: InProcessServer, chat: int) -> dict[str, Any]:
    """The state of the one thread of Telegram chat `chat`."""
    (thread,) = telegram_threads(srv, chat)
    return thread_state(srv, thread["thread_id"])


def until(check: Callable[[], Any], timeout: float = 60) -> Any:
    """Poll `check` until it returns something truthy (that), or fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("never happened")
