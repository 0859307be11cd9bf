"""Request bodies that a route parses itself (to answer its own 422), documented anyway.

`json_body(Model)` is the route's `openapi_extra`: the model's JSON schema as the request
body. Its `$defs` are moved into the document's components by `hoist_body_defs`, which the
app's `openapi()` runs.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel, TypeAdapter

REF_TEMPLATE = "#/components/schemas/{model}"


def json_body(
    model: type[BaseModel] | TypeAdapter[Any], *, required: bool = True
) -> dict[str, Any]:
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


def hoist_body_defs(document: dict[str, Any]) -> dict[str, Any]:
    """Move each documented body's `$defs` into `components.schemas` (refs already point there)."""
    components: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    paths: dict[str, dict[str, Any]] = document.get("paths", {})
    for item in paths.values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            body: dict[str, Any] = cast("dict[str, Any]", operation).get("requestBody") or {}
            content: dict[str, dict[str, Any]] = body.get("content") or {}
            for media in content.values():
                schema: object = media.get("schema")
                if isinstance(schema, dict):
                    defs: dict[str, Any] = cast("dict[str, Any]", schema).pop("$defs", {})
                    for name, value in defs.items():
                        components.setdefault(name, value)
    return document
