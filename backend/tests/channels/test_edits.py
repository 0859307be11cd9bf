"""The edit pump and the final edit under a rate limit, on an in-memory transport that
refuses its first edit with a retry-after (the fakes cover the platforms' wire formats)."""

from __future__ import annotations

import asyncio
import time

from pronghorn.channels.edits import EditPump, final_edit
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.types import Sent, Target

RETRY_AFTER_S = 0.3


class RefusesFirstEdit:
    """Records every edit and send with its time; the first edit gets a 429's retry-after."""

    name = "memory"
    max_text = 4096
    supports_edit = True

    def __init__(self) -> None:
        self.edits: list[tuple[float, str]] = []
        self.sends: list[str] = []
        self.refused_at: float | None = None
        self.refused = asyncio.Event()

    async def edit(self, sent: Sent, text: str) -> None:
        if self.refused_at is None:
            self.refused_at = time.monotonic()
            self.refused.set()
            raise PlatformError("HTTP 429", retry_after=RETRY_AFTER_S)
        self.edits.append((time.monotonic(), text))

    async def send(self, target: Target, text: str) -> Sent:
        self.sends.append(text)
        return Sent(target.chat_id, "2")


async def test_the_final_edit_waits_out_a_streaming_edits_rate_limit():
    t = RefusesFirstEdit()
    sent = Sent("c", "1")
    pump = EditPump(t, sent, interval=0.01)  # type: ignore[arg-type]
    pump.offer("partial")
    await asyncio.wait_for(t.refused.wait(), 30)
    await pump.close()  # the stream ended inside the asked wait
    assert pump.rate_limited == 1 and not t.edits
    await final_edit(t, sent, Target("c"), "final", not_before=pump.limited_until)  # type: ignore[arg-type]
    ((at, text),) = t.edits
    assert text == "final" and not t.sends
    assert t.refused_at is not None and at - t.refused_at >= RETRY_AFTER_S - 0.01
