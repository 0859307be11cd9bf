"""OpenAI-shaped error bodies: `{"error": {"message", "type", "param", "code"}}`."""

from __future__ import annotations

from pronghorn.gateway.errors import domain_status
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.errors import DomainError

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


class OpenAIError(Exception):
    def __init__(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param

    @classmethod
    def of(cls, exc: DomainError) -> OpenAIError:
        status = domain_status(exc)
        code = {404: "model_not_found"}.get(status) if "Assistant" in exc.message else None
        return cls(status, exc.message, code=code)

    def body(self) -> dict[str, object]:
        return error_body(self.status, self.message, code=self.code, param=self.param)

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def error_type(status: int) -> str:
    return _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")


def error_body(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> dict[str, object]:
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}
