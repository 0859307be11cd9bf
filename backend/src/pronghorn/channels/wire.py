"""The platforms' JSON, as the adapters read and write it.

A webhook body, a Web API answer or a gateway event has the platform's shape, not ours: the
adapters read it field by field, checking each value they use, and build request bodies the
same way. That JSON is the boundary where the channels package types values as ``Any``;
the other is the httpx request options (``json=``, ``data=``, ``files=``…) that the adapters'
call wrappers take as ``**kwargs: Any`` and pass through to ``http_api.call``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

# A JSON object received from a platform (Any: values unchecked until read).
WireMap = Mapping[str, Any]
# A JSON object built to send to a platform (Any: as a platform's API takes it).
WireDict = dict[str, Any]


def as_map(value: object) -> WireMap:
    """``value`` if it is a JSON object, else an empty one."""
    return cast(WireMap, value) if isinstance(value, Mapping) else {}
