"""FairLimiter (runtime/engine/limiter.py): FIFO order, resizing at runtime, cancelled waiters."""

from __future__ import annotations

import asyncio

from pronghorn.runtime.engine.limiter import FairLimiter


async def _queue(limiter: FairLimiter, n: int, order: list[int]) -> list[asyncio.Task[None]]:
    """`n` tasks waiting on a full limiter, queued in index order; each appends its index."""

    async def one(i: int) -> None:
        await limiter.acquire()
        order.append(i)

    tasks = []
    for i in range(n):
        tasks.append(asyncio.create_task(one(i)))
        await asyncio.sleep(0)  # one loop step: the new task runs up to its wait in acquire()
        assert limiter.waiting == i + 1
    return tasks


async def test_waiters_get_slots_first_in_first_out() -> None:
    limiter = FairLimiter(1)
    await limiter.acquire()
    order: list[int] = []
    tasks = await _queue(limiter, 4, order)
    assert limiter.waiting == 4 and order == []
    for expected in range(4):
        limiter.release()
        await tasks[expected]
        assert order == list(range(expected + 1))
    assert limiter.active == 1 and limiter.waiting == 0


async def test_a_newcomer_does_not_overtake_the_queue() -> None:
    limiter = FairLimiter(1)
    await limiter.acquire()
    order: list[int] = []
    tasks = await _queue(limiter, 1, order)
    limiter.resize(1)  # no-op: still full
    limiter.release()  # the slot goes to the waiter, not to whoever asks next
    late = asyncio.create_task(limiter.acquire())
    await tasks[0]
    assert order == [0] and not late.done()
    limiter.release()
    await late
    assert limiter.active == 1


async def test_growing_the_limit_wakes_waiters_and_shrinking_lets_runs_finish() -> None:
    limiter = FairLimiter(1)
    await limiter.acquire()
    order: list[int] = []
    tasks = await _queue(limiter, 3, order)
    limiter.resize(3)
    await asyncio.gather(tasks[0], tasks[1])
    assert order == [0, 1] and limiter.active == 3 and limiter.waiting == 1
    limiter.resize(1)  # shrink: nobody is preempted, nobody new starts until below
    limiter.release()
    limiter.release()
    assert not tasks[2].done() and limiter.active == 1
    limiter.release()
    await tasks[2]
    assert order == [0, 1, 2] and limiter.active == 1


async def test_a_cancelled_waiter_gives_up_its_place_and_any_slot_it_got() -> None:
    limiter = FairLimiter(1)
    await limiter.acquire()
    order: list[int] = []
    tasks = await _queue(limiter, 2, order)
    tasks[0].cancel()
    await asyncio.gather(tasks[0], return_exceptions=True)
    assert limiter.waiting == 1
    limiter.release()
    await tasks[1]
    assert order == [1] and limiter.active == 1
    # granted and cancelled in the same step: the slot passes on, not lost
    more = await _queue(limiter, 2, order)
    limiter.release()  # grants more[0]...
    more[0].cancel()  # ...which is cancelled before it runs
    await asyncio.gather(more[0], return_exceptions=True)
    await more[1]
    assert order == [1, 1] and limiter.active == 1 and limiter.waiting == 0
