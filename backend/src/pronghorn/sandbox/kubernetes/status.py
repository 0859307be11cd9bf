"""Reading a pod's status: ready (with its IP), still starting, or failed for good."""

from __future__ import annotations

from dataclasses import dataclass

from lightkube.resources.core_v1 import Pod

# Container waiting reasons that do not heal by waiting.
FATAL_WAITING = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CreateContainerConfigError",
        "CreateContainerError",
        "CrashLoopBackOff",
        "RunContainerError",
    }
)


@dataclass(frozen=True, slots=True)
class PodState:
    ready_ip: str | None  # the pod IP once it is Running and Ready
    failure: str | None  # why it will never become ready
    summary: str  # phase and reasons, for a timeout message


def read_state(pod: Pod) -> PodState:
    status = pod.status
    if status is None:
        return PodState(None, None, "no status yet")
    phase = status.phase or "Unknown"
    notes: list[str] = [phase]
    failure: str | None = None
    if phase in ("Failed", "Succeeded"):
        failure = (
            f"the pod stopped (phase {phase}{': ' + status.message if status.message else ''})"
        )
    for cond in status.conditions or []:
        if cond.status == "False" and cond.reason:
            notes.append(f"{cond.type} {cond.reason}: {cond.message or ''}".strip())
    for cs in status.containerStatuses or []:
        state = cs.state
        if state is None:
            continue
        if state.waiting is not None and state.waiting.reason:
            text = f"{state.waiting.reason}: {state.waiting.message or ''}".strip().rstrip(":")
            notes.append(f"container {cs.name} {text}")
            if state.waiting.reason in FATAL_WAITING:
                failure = f"container {cs.name}: {text}"
        if state.terminated is not None:
            term = state.terminated
            failure = (
                f"container {cs.name} exited with code {term.exitCode}"
                f" ({term.reason or 'no reason'}{': ' + term.message if term.message else ''})"
            )
    ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])
    ip = status.podIP if phase == "Running" and ready and failure is None else None
    return PodState(ip, failure, "; ".join(notes))
