"""A thread's files: uploads and artifacts (`/api/threads/{id}/uploads`, `/artifacts/...`)."""

from __future__ import annotations

from pydantic import BaseModel


class UploadLimits(BaseModel):
    max_file_bytes: int
    max_total_bytes: int


class MarkdownCopy(BaseModel):
    """The Markdown copy of an uploaded document, saved beside it as `NAME.md`."""

    name: str
    size: int
    virtual_path: str
    url: str
    truncated: bool = False


class UploadedFile(BaseModel):
    """Ours (`name`, `url`) and DeerFlow's names of the same (`filename`, `path`...)."""

    name: str
    size: int
    virtual_path: str
    url: str
    filename: str
    original_filename: str
    path: str
    artifact_url: str
    extension: str
    markdown: MarkdownCopy | None = None
    conversion_error: str | None = None


class UploadResult(BaseModel):
    files: list[UploadedFile]
    success: bool
    message: str
    skipped_files: list[str]


class UploadDeleted(BaseModel):
    success: bool
    message: str


class UploadList(BaseModel):
    files: list[UploadedFile]
    limits: UploadLimits


MULTIPART_FILES: dict[str, object] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                        }
                    },
                    "required": ["files"],
                }
            }
        },
    }
}
"""The upload body: one or more files in the multipart field `files`."""

_BYTES = {"*/*": {"schema": {"type": "string", "format": "binary"}}}

FILE_BYTES: dict[int | str, dict[str, object]] = {
    200: {"description": "The file (its type from its name)", "content": _BYTES},
    206: {"description": "The requested byte range", "content": _BYTES},
    416: {"description": "Range not satisfiable"},
}
"""The answers of a file download: the bytes, whole or a range."""
