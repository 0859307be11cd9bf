"""Request bodies that a route parses itself (to answer its own 422), documented anyway.

`json_body(Model)` is the route's `openapi_extra`: the model's JSON schema as the request
body. Its `$defs` are moved into the document's components by `hoist_body_defs`, which the
app's `openapi()` runs.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter

from pronghorn.agent.untyped import as_dict

REF_TEMPLATE = "#/components/schemas/{model}"


def json_body(
    # Any: a TypeAdapter of any body type (its json_schema is all that is used)
    model: type[BaseModel] | TypeAdapter[Any],
    *,
    required: bool = True,
) -> dict[str, object]:
    """`openapi_extra=` documenting `model` (a model, or a TypeAdapter such as a list of one)."""
    if isinstance(model, TypeAdapter):
        schema = model.json_schema(ref_template=REF_TEMPLATE)
    else:
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": schema}},
        }
    }


def _member(document: dict[str, object], key: str) -> dict[str, object]:
    found = as_dict(document.setdefault(key, {}))
    if found is None:
        raise TypeError(f"OpenAPI document: {key!r} is not an object")
    return found


def schema_components(document: dict[str, object]) -> dict[str, object]:
    """The document's `components.schemas` (added when missing)."""
    return _member(_member(document, "components"), "schemas")


def hoist_body_defs(document: dict[str, object]) -> dict[str, object]:
    """Move each documented body's `$defs` into `components.schemas` (refs already point there)."""
    components = schema_components(document)
    for item in (as_dict(document.get("paths")) or {}).values():
        for found in (as_dict(item) or {}).values():
            operation = as_dict(found)
            if operation is None:
                continue
            body = as_dict(operation.get("requestBody")) or {}
            for media in (as_dict(body.get("content")) or {}).values():
                schema = as_dict((as_dict(media) or {}).get("schema"))
                if schema is not None:
                    defs = as_dict(schema.pop("$defs", {})) or {}
                    for name, value in defs.items():
                        components.setdefault(name, value)
    return document
