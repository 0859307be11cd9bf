"""What the Redis broker and control bus share: key names, the retry of a lost connection,
the Lua scripts that append to the streams, and how a stream entry maps to an `Event`.

Keys (all under `broker.key_prefix`):
- `<p>:run:<run_id>` — the run's stream. An event with id n is the entry `n-0` (fields `e`
  event name, `d` data); `s-1` marks the log opened after id s (0, or the ids a resumed
  run continues after); `n-2` marks it closed after event n (field `o`: the run's
  result, what `join` answers, when it is small: followers elsewhere need no database read).
- `<p>:thread:<thread_id>` and `<p>:thread:<thread_id>:n` — the thread's stream and its id
  counter (entries `n-0`; an entry with field `x` says the thread was deleted: followers
  end there, and both keys expire shortly after).
- `<p>:run:<run_id>:e` — the run's epoch: incremented by every `open_run` (a new attempt,
  a replica taking the run over). Appends and the close marker carry the epoch their
  process opened the log with and are skipped when it is no longer current, so a process
  that lost the run (frozen past its lease) cannot write into the new owner's log.
- `<p>:ctl:<replica>` — the pub/sub channel a run manager listens on (control bus).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from redis import exceptions as redis_errors

T = TypeVar("T")

TRANSIENT: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    ConnectionError,
    OSError,
)
"""What a lost or refused connection raises (retried; never a bug in a command)."""

MAX_BACKOFF_S = 1.0


@dataclass(frozen=True, slots=True)
class Keys:
    prefix: str

    def run(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}"

    def run_epoch(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:e"

    def thread(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{thread_id}"

    def thread_counter(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{thread_id}:n"

    def control(self, replica: str) -> str:
        return f"{self.prefix}:ctl:{replica}"


async def retrying(
    call: Callable[[], Awaitable[T]],
    *,
    patience_s: float,
    fail: Callable[[BaseException], Exception],
) -> T:
    """`call()`, tried again with backoff while the connection is lost, for up to
    `patience_s`; then `fail(last error)` is raised."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience_s
    delay = 0.05
    while True:
        try:
            return await call()
        except TRANSIENT as exc:
            if loop.time() + delay > deadline:
                raise fail(exc) from exc
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_BACKOFF_S)


def entry_id(raw: bytes | str) -> tuple[int, int]:
    """`b"12-0"` → (12, 0)."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


OPEN_SEQ = 1
CLOSE_SEQ = 2

# KEYS: run stream, thread stream, thread counter, run epoch.
# ARGV: event id, event name, data, thread cache length, idle ttl (s), epoch.
# Idempotent: an id the run's stream already has (a retried batch) is skipped whole, so
# the thread's stream never gets it twice. Skipped too when the epoch moved on.
APPEND_RUN_EVENT = """
local epoch = redis.call('GET', KEYS[4])
if epoch and epoch ~= ARGV[6] then return 0 end
local ok = redis.pcall('XADD', KEYS[1], ARGV[1] .. '-0', 'e', ARGV[2], 'd', ARGV[3])
if type(ok) == 'table' and ok['err'] then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[5])
local n = redis.call('INCR', KEYS[3])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], n .. '-0', 'e', ARGV[2], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('EXPIRE', KEYS[4], ARGV[5])
return 1
"""

# KEYS: thread stream, thread counter. ARGV: event name, data, cache length, ttl (s).
APPEND_THREAD_EVENT = """
local n = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], n .. '-0', 'e', ARGV[1], 'd', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return n
"""

# KEYS: run stream, run epoch. ARGV: last event id, ttl of a finished run's stream (s),
# epoch, the run's result ('' for none). Idempotent; skipped when the epoch moved on.
CLOSE_RUN = """
local epoch = redis.call('GET', KEYS[2])
if epoch and epoch ~= ARGV[3] then return 0 end
local ok
if ARGV[4] ~= '' then
  ok = redis.pcall('XADD', KEYS[1], ARGV[1] .. '-2', 'c', '1', 'o', ARGV[4])
else
  ok = redis.pcall('XADD', KEYS[1], ARGV[1] .. '-2', 'c', '1')
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""

# KEYS: run stream, run epoch. ARGV: the id the log opens after, idle ttl (s). A fresh
# start: what a dead attempt left in the stream (ids it may never have stored) goes.
# Returns the new epoch.
OPEN_RUN = """
redis.call('DEL', KEYS[1])
redis.call('XADD', KEYS[1], ARGV[1] .. '-1', 'o', '1')
redis.call('EXPIRE', KEYS[1], ARGV[2])
local epoch = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return epoch
"""

# KEYS: thread stream, thread counter. ARGV: ttl (s). The marker ends every follower, the
# ones blocked now and the ones that read it later; the keys expire soon after.
DROP_THREAD = """
local n = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], n .. '-0', 'x', '1')
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return n
"""
