"""The two JSON-RPC dialects of A2A we answer: 0.3 (`message/send`, `tasks/get`, …, the
methods the LangGraph API names) and 1.0 (`SendMessage`, `GetTask`, …, what a 1.x
a2a-sdk client sends when the card lists a 1.0 interface).

The server works in 0.3 terms; a 1.0 request's params are converted to 0.3 and its results
back, with the a2a-sdk's own conversions, so both dialects mean exactly the same thing.
Those (and protobuf under them) are imported by the first 1.0 request, not at start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from a2a.compat.v0_3 import types as a2a
from pydantic import BaseModel

if TYPE_CHECKING:
    from google.protobuf.message import Message as ProtoMessage

Operation = Literal["send", "stream", "get", "cancel"]
StreamEvent = a2a.Task | a2a.TaskStatusUpdateEvent | a2a.TaskArtifactUpdateEvent


class BadParams(ValueError):
    """Params that are not a valid request of the dialect."""


def dump(model: BaseModel) -> dict[str, object]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _proto(message: ProtoMessage) -> dict[str, object]:
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(message)


@dataclass(frozen=True, slots=True)
class Dialect:
    version: Literal["0.3", "1.0"]

    def params(self, op: Operation, params: dict[str, object]) -> dict[str, object]:
        """The params as 0.3 params."""
        if self.version == "0.3":
            return params
        from a2a.compat.v0_3 import conversions
        from a2a.types import a2a_pb2 as pb
        from google.protobuf.json_format import ParseDict, ParseError

        try:
            if op in ("send", "stream"):
                send = ParseDict(params, pb.SendMessageRequest(), ignore_unknown_fields=True)
                return dump(conversions.to_compat_send_message_request(send, 0).params)
            if op == "get":
                get = ParseDict(params, pb.GetTaskRequest(), ignore_unknown_fields=True)
                return dump(conversions.to_compat_get_task_request(get, 0).params)
            cancel = ParseDict(params, pb.CancelTaskRequest(), ignore_unknown_fields=True)
            return dump(conversions.to_compat_cancel_task_request(cancel, 0).params)
        except (ParseError, ValueError, TypeError) as exc:
            raise BadParams(f"Invalid params: {exc}") from None

    def task(self, task: a2a.Task, op: Operation) -> dict[str, object]:
        """A task as the result of `op`."""
        if self.version == "0.3":
            return dump(task)
        from a2a.compat.v0_3 import conversions
        from a2a.types import a2a_pb2 as pb

        core = conversions.to_core_task(task)
        if op == "send":
            return _proto(pb.SendMessageResponse(task=core))
        return _proto(core)

    def event(self, event: StreamEvent) -> dict[str, object]:
        """One streamed event as the result of a stream response."""
        if self.version == "0.3":
            return dump(event)
        from a2a.compat.v0_3 import conversions

        wrapped = a2a.SendStreamingMessageSuccessResponse(result=event)
        return _proto(conversions.to_core_stream_response(wrapped))


V03 = Dialect("0.3")
V10 = Dialect("1.0")

METHODS: dict[str, tuple[Dialect, Operation]] = {
    "message/send": (V03, "send"),
    "message/stream": (V03, "stream"),
    "tasks/get": (V03, "get"),
    "tasks/cancel": (V03, "cancel"),
    "SendMessage": (V10, "send"),
    "SendStreamingMessage": (V10, "stream"),
    "GetTask": (V10, "get"),
    "CancelTask": (V10, "cancel"),
}
