"""The errors of account management (the gateway answers `status` with `detail`)."""

from __future__ import annotations


class AccountError(Exception):
    """A refused account operation: bad input (400/422), not yours (404), conflict (409)."""

    def __init__(self, detail: str, status: int = 400) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
