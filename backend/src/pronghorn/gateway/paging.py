"""Pagination headers shared by every search endpoint."""

from __future__ import annotations


def page_headers(offset: int, limit: int, count: int, total: int) -> dict[str, str]:
    """`X-Pagination-Total`, and `X-Pagination-Next` (the next offset) unless this page is last."""
    headers = {"X-Pagination-Total": str(total)}
    if offset + count < total:
        headers["X-Pagination-Next"] = str(offset + limit)
    return headers
