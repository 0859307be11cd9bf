"""One thread's sandbox in a pod: every operation is a call to the pod's sandbox agent."""

from __future__ import annotations

from typing import Protocol, cast

from pydantic import BaseModel

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.sandbox.agent import protocol as p
from pronghorn.sandbox.base import CommandResult, command_timeout
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.kubernetes.spec import SandboxKey
from pronghorn.sandbox.paths import ThreadPaths

# How much longer than the command's own timeout the gateway waits for the agent's answer.
ANSWER_GRACE_S = 15.0
FILE_CALL_TIMEOUT_S = 60.0


class AgentCaller(Protocol):
    async def call(
        self, key: SandboxKey, path: str, body: BaseModel, timeout_s: float
    ) -> object: ...


class KubernetesSandbox:
    def __init__(
        self, paths: ThreadPaths, key: SandboxKey, config: SandboxConfig, caller: AgentCaller
    ) -> None:
        self._paths = paths
        self._key = key
        self._config = config
        self._caller = caller
        # A per-user pod serves several threads: each call names its thread.
        self._thread_id = paths.thread_id if key.thread_id is None else None

    @property
    def thread_paths(self) -> ThreadPaths:
        return self._paths

    @property
    def key(self) -> SandboxKey:
        return self._key

    async def _file(self, op: str, body: BaseModel) -> object:
        return await self._caller.call(self._key, f"/files/{op}", body, FILE_CALL_TIMEOUT_S)

    async def execute(self, command: str, timeout_s: float | None = None) -> CommandResult:
        timeout = command_timeout(command, timeout_s, self._config.command_timeout_s)
        cfg = self._config.limits
        body = p.ExecRequest(
            thread_id=self._thread_id,
            command=command,
            timeout_s=timeout,
            max_output_chars=self._config.max_output_chars,
            limits=p.ExecLimits(
                processes=cfg.processes or None,
                cpu_seconds=cfg.cpu_seconds or None,
                file_size_bytes=cfg.file_size_bytes or None,
            ),
        )
        raw = await self._caller.call(self._key, "/exec", body, timeout + ANSWER_GRACE_S)
        got = p.ExecResponse.model_validate(raw)
        return CommandResult(
            exit_code=got.exit_code,
            stdout=got.stdout,
            stderr=got.stderr,
            timed_out=got.timed_out,
            truncated=got.truncated,
        )

    async def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        body = p.ReadRequest(
            thread_id=self._thread_id,
            path=path,
            start_line=start_line,
            end_line=end_line,
            max_chars=self._config.max_output_chars,
        )
        return _text(await self._file("read", body))

    async def write_file(self, path: str, content: str, append: bool = False) -> None:
        body = p.WriteRequest(thread_id=self._thread_id, path=path, content=content, append=append)
        await self._file("write", body)

    async def str_replace(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        body = p.ReplaceRequest(
            thread_id=self._thread_id, path=path, old=old, new=new, replace_all=replace_all
        )
        got = await self._file("replace", body)
        if not isinstance(got, int):
            raise SandboxError("The sandbox agent answered with something unexpected.")
        return got

    async def list_dir(self, path: str, max_depth: int = 2) -> list[str]:
        body = p.ListRequest(thread_id=self._thread_id, path=path, max_depth=max_depth)
        return _lines(await self._file("list", body))

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        body = p.GlobRequest(thread_id=self._thread_id, pattern=pattern, path=path)
        return _lines(await self._file("glob", body))

    async def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_matches: int = 200,
    ) -> list[str]:
        body = p.GrepRequest(
            thread_id=self._thread_id,
            pattern=pattern,
            path=path,
            glob=glob,
            max_matches=max_matches,
        )
        return _lines(await self._file("grep", body))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise SandboxError("The sandbox agent answered with something unexpected.")
    return value


def _lines(value: object) -> list[str]:
    if not isinstance(value, list):
        raise SandboxError("The sandbox agent answered with something unexpected.")
    return [_text(item) for item in cast(list[object], value)]
