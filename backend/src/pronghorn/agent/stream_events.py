"""Custom stream events that must reach the run's log even while the run is cancelled.

A tool writes its progress with LangGraph's stream writer, whose reader is the run's own
stream. When the run is cancelled that reader is gone first, so an event written while a
tool unwinds (a sub-agent's ``task_cancelled``) would be dropped. Such an event goes
through the run's callbacks instead: ``write_direct`` dispatches it as a LangChain custom
event named ``DIRECT_EVENT``, and the run executor's handler (runtime/engine/direct_events.py)
appends it to the run's event log as a ``custom`` stream event.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.callbacks import adispatch_custom_event
from langchain_core.runnables import RunnableConfig

DIRECT_EVENT = "pronghorn.custom_stream_event"


async def write_direct(data: Mapping[str, object], config: RunnableConfig) -> None:
    """Send ``data`` as a ``custom`` stream event of the run, past the stream writer."""
    await adispatch_custom_event(DIRECT_EVENT, dict(data), config=config)
