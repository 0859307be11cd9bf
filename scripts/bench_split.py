"""Where a run's CPU goes, in one process and without HTTP (`scripts/bench` runs this).

Two workloads on the same runtime (`open_runtime`, the bench's config: SQLite, the echo
graph), in alternating rounds at concurrency 32, after the collector is tuned as
`pronghorn serve` tunes it:

- **graph**: the echo graph's `ainvoke` on the runtime's own checkpointer (LangGraph's
  `SqliteSaver` on the SQLite worker), durability `async`: what LangGraph and our saver
  cost;
- **engine**: `Runs.start` on a fresh thread and the run's end awaited, as `runs.wait`
  does it behind HTTP: the graph plus accepting, executing, the event log and settling.

For each, the CPU per run of the whole process and of its event-loop thread (the rest is
the SQLite worker and the thread pools), from /proc/self/task. Subtracted from the live
server's CPU per run, the engine's gives what HTTP costs; the engine's minus the graph's
gives what the run engine adds. Prints one JSON object (medians and ranges over rounds).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend" / "tests"))
sys.path.insert(0, str(ROOT / "backend" / "src"))

from pronghorn.auth.principal import LOCAL_PRINCIPAL  # noqa: E402
from pronghorn.config.holder import ConfigHolder  # noqa: E402
from pronghorn.config.loader import load_config  # noqa: E402
from pronghorn.gateway.gc_tuning import tune_collector_for_serving  # noqa: E402
from pronghorn.runtime.access import Access  # noqa: E402
from pronghorn.runtime.engine.run_request import RunCreate  # noqa: E402
from pronghorn.runtime.services import threads as thread_service  # noqa: E402
from pronghorn.runtime.services.runs import Runs  # noqa: E402
from pronghorn.runtime.wiring.assemble import open_runtime  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CONCURRENCY = 32


def thread_cpu() -> dict[int, float]:
    """CPU seconds so far of each thread of this process, by thread id."""
    out: dict[int, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


async def measure(fn, n: int) -> tuple[float, float]:
    """(process CPU per call, event-loop thread CPU per call) of n calls at concurrency 32."""
    loop_tid = threading.get_native_id()
    before, c0 = thread_cpu(), time.process_time()
    queue = iter(range(n))

    async def worker() -> None:
        for i in queue:
            await fn(i)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    total = time.process_time() - c0
    after = thread_cpu()
    on_loop = after.get(loop_tid, 0.0) - before.get(loop_tid, 0.0)
    return total / n, on_loop / n


async def main(rounds: int, per_round: int) -> dict[str, list[float]]:
    from testgraphs.echo import graph as echo

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "config.yaml").write_text(
            "data_dir: data\nlogging: {level: WARNING}\nauth: {mode: none}\n"
            "runs: {max_concurrency: 256, durability: async}\n"
            "graphs:\n  echo: testgraphs.echo:graph\n"
        )
        settings = ConfigHolder(load_config(work / "config.yaml"))
        async with open_runtime(settings, base_dir=work) as runtime:
            access = Access(LOCAL_PRINCIPAL)
            runs = Runs(runtime)
            request = RunCreate.model_validate(
                {"assistant_id": "echo",
                 "input": {"messages": [{"role": "user", "content": "hi"}]}})
            graph = echo.copy(update={"checkpointer": runtime.checkpointer})
            total = (rounds + 1) * per_round
            tids = [str((await thread_service.create(
                runtime, access, thread_service.NewThread()))["thread_id"])
                for _ in range(total)]

            async def engine_run(i: int) -> None:
                job = await runs.start(access, tids[i], request)
                await job.done.wait()

            async def graph_run(i: int) -> None:
                await graph.ainvoke({"messages": [{"role": "user", "content": "hi"}]},
                                    {"configurable": {"thread_id": f"g{i}"}},
                                    durability="async")

            # warm-up, then the collector as the server has it
            await measure(engine_run, per_round)
            await measure(lambda i: graph_run(10_000_000 + i), per_round)
            tune_collector_for_serving()
            out: dict[str, list[float]] = {"graph": [], "graph_loop": [],
                                           "engine": [], "engine_loop": []}
            for r in range(1, rounds + 1):
                offset = r * per_round
                cpu, on_loop = await measure(lambda i, o=offset: engine_run(o + i), per_round)
                out["engine"].append(cpu)
                out["engine_loop"].append(on_loop)
                cpu, on_loop = await measure(lambda i, o=offset: graph_run(o + i), per_round)
                out["graph"].append(cpu)
                out["graph_loop"].append(on_loop)
            return out


if __name__ == "__main__":
    n_rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n_runs = int(sys.argv[2]) if len(sys.argv) > 2 else 320
    result = asyncio.run(main(n_rounds, n_runs))
    print(json.dumps({k: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                      for k, v in result.items()}))
