"""A local Kubernetes API server: the subset the sandbox provider (and doctor) use, over real
HTTP, in the API's own shapes (checked against lightkube's request building and decoding).

- ``/api/v1/namespaces/{ns}/pods``: list (label and field selectors), create (dryRun too),
  watch (``watch=true``, ``resourceVersion``, ``timeoutSeconds``; JSON lines of
  ``{"type", "object"}``); ``.../pods/{name}``: get, delete.
- ``/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies``: create, list.
- ``/apis/authorization.k8s.io/v1/selfsubjectaccessreviews``: create.
- Errors are ``Status`` objects (401, 403, 404, 409, 422) with ``Content-Type:
  application/json``, as the API sends them.
- RBAC: ``allow`` (a set of ``(group, resource, verb)``) refuses every other call with 403,
  as a Role would; every call is recorded in ``calls``.

A "kubelet" task runs each pod: an image in ``images`` starts the container's command as a
local process (``python`` is this interpreter) listening on a loopback address of its own
(its pod IP, ``127.a.b.n``); volumes map to local folders (an emptyDir to a fresh folder, a
PersistentVolumeClaim to ``claims[name]``, with ``subPath``) and the container's environment
names the local folder where it named the mount path. The pod turns Running and Ready once its
readinessProbe answers 200; an unknown image ends in ``ImagePullBackOff``; a process that
exits makes the pod ``Failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from support.threaded_server import ThreadedServer

Json = dict[str, Any]
Rule = tuple[str, str, str]  # (api group, resource, verb)


def status(code: int, reason: str, message: str, **details: str) -> JSONResponse:
    body: Json = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return JSONResponse(body, status_code=code)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _selector(text: str | None) -> dict[str, str] | None:
    """``k=v,k2==v2`` (equality only); None when the selector uses anything else."""
    if not text:
        return {}
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or key.endswith("!"):
            return None
        out[key.strip()] = value.lstrip("=").strip()
    return out


def _field(obj: Json, dotted: str) -> str | None:
    cur: Any = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur if isinstance(cur, str) else None


@dataclass
class Call:
    verb: str
    group: str
    resource: str
    namespace: str | None
    dry_run: bool = False


@dataclass
class _Running:
    process: subprocess.Popen[bytes]
    ip: str
    probe: str  # readiness URL
    folders: list[Path] = field(default_factory=list)
    failed: threading.Event = field(default_factory=threading.Event)


@dataclass
class FakeKubeApi:
    namespaces: set[str] = field(default_factory=lambda: {"default", "pronghorn"})
    images: set[str] = field(default_factory=lambda: {"pronghorn:latest"})
    claims: dict[str, Path] = field(default_factory=dict)
    token: str | None = None
    schedulable: bool = True  # False: pods stay Pending, Unschedulable
    allow: set[Rule] | None = None  # None: every call allowed
    calls: list[Call] = field(default_factory=list)
    # Test hooks: make the next call of (verb, resource) fail with (code, reason).
    fail_next: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._objects: dict[tuple[str, str, str], Json] = {}  # (resource, ns, name)
        self._events: list[tuple[int, str, str, Json]] = []  # (rv, resource, type, obj)
        self._version = 0
        self._changed: asyncio.Condition | None = None
        self._running: dict[tuple[str, str], _Running] = {}
        self._ip_base = f"127.{random.randint(1, 250)}.{random.randint(1, 250)}"
        self._next_ip = 2
        self._scratch = Path(tempfile.mkdtemp(prefix="fake-kube-"))
        self._kubelet: asyncio.Task[None] | None = None
        self._server = ThreadedServer(self._app(), lifespan="on", name="fake Kubernetes API")

    # -- test side ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def __enter__(self) -> FakeKubeApi:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
        for run in list(self._running.values()):
            self._stop(run)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def pods(self, namespace: str = "pronghorn") -> dict[str, Json]:
        return {
            name: obj
            for (res, ns, name), obj in list(self._objects.items())
            if res == "pods" and ns == namespace
        }

    def network_policies(self, namespace: str = "pronghorn") -> dict[str, Json]:
        return {
            name: obj
            for (res, ns, name), obj in list(self._objects.items())
            if res == "networkpolicies" and ns == namespace
        }

    def crash(self, name: str, namespace: str = "pronghorn") -> None:
        """Kill a pod's container as an OOM kill would; returns once the kubelet has marked
        the pod Failed."""
        run = self._running.get((namespace, name))
        assert run is not None, f"pod {name} runs no container"
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.process.pid, signal.SIGKILL)
        if not run.failed.wait(timeout=30):
            raise RuntimeError(f"the fake kubelet did not mark pod {name} Failed")

    # -- app ----------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            self._changed = asyncio.Condition()
            self._kubelet = asyncio.create_task(self._kubelet_loop())
            yield
            self._kubelet.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._kubelet

        core = "/api/v1/namespaces/{ns}"
        net = "/apis/networking.k8s.io/v1/namespaces/{ns}"
        return Starlette(
            routes=[
                Route(f"{core}/pods", self._pods, methods=["GET", "POST"]),
                Route(f"{core}/pods/{{name}}", self._pod, methods=["GET", "DELETE"]),
                Route(f"{net}/networkpolicies", self._policies, methods=["GET", "POST"]),
                Route(
                    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                    self._access_review,
                    methods=["POST"],
                ),
            ],
            lifespan=lifespan,
        )

    def _gate(self, request: Request, verb: str, group: str, resource: str) -> Response | None:
        ns = request.path_params.get("ns")
        dry = request.query_params.get("dryRun") == "All"
        self.calls.append(Call(verb, group, resource, ns, dry))
        auth = request.headers.get("authorization")
        if self.token is not None and auth != f"Bearer {self.token}":
            return status(401, "Unauthorized", "Unauthorized")
        if self.allow is not None and (group, resource, verb) not in self.allow:
            where = f' in the namespace "{ns}"' if ns else " at the cluster scope"
            return status(
                403,
                "Forbidden",
                f'{resource} is forbidden: User "system:serviceaccount:test:gateway" cannot '
                f'{verb} resource "{resource}" in API group "{group}"{where}',
                kind=resource,
            )
        failure = self.fail_next.pop((verb, resource), None)
        if failure is not None:
            code, reason = failure
            return status(code, reason, f"injected {reason} for {verb} {resource}")
        return None

    def _bump(self, resource: str, kind: str, obj: Json) -> None:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        self._events.append((self._version, resource, kind, json.loads(json.dumps(obj))))

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    async def _create(self, request: Request, resource: str, kind: str) -> Response:
        ns = request.path_params["ns"]
        try:
            obj: Json = json.loads(await request.body())
        except ValueError:
            return status(400, "BadRequest", "the body is not JSON")
        meta = obj.setdefault("metadata", {})
        name = meta.get("name")
        if not name:
            return status(422, "Invalid", f"{kind} is invalid: metadata.name: Required value")
        if meta.get("namespace", ns) != ns:
            return status(400, "BadRequest", "the namespace of the object does not match")
        if ns not in self.namespaces:
            return status(
                404, "NotFound", f'namespaces "{ns}" not found', name=ns, kind="namespaces"
            )
        if obj.get("kind") != kind:
            return status(400, "BadRequest", f"expected kind {kind}")
        if resource == "pods":
            containers = (obj.get("spec") or {}).get("containers") or []
            if not containers or not all(c.get("name") and c.get("image") for c in containers):
                return status(422, "Invalid", "Pod is invalid: spec.containers: Required value")
        if (resource, ns, name) in self._objects:
            return status(
                409,
                "AlreadyExists",
                f'{resource} "{name}" already exists',
                name=name,
                kind=resource,
            )
        meta.update(namespace=ns, uid=str(uuid.uuid4()), creationTimestamp=_now())
        if resource == "pods":
            obj["status"] = {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "True"}],
                "qosClass": "Burstable",
            }
        if request.query_params.get("dryRun") == "All":
            return JSONResponse(obj, status_code=201)
        self._objects[(resource, ns, name)] = obj
        self._bump(resource, "ADDED", obj)
        await self._notify()
        return JSONResponse(obj, status_code=201)

    def _list(self, request: Request, resource: str, kind: str) -> Response:
        ns = request.path_params["ns"]
        labels = _selector(request.query_params.get("labelSelector"))
        fields = _selector(request.query_params.get("fieldSelector"))
        if labels is None or fields is None:
            return status(400, "BadRequest", "only equality selectors are supported here")
        items = [
            obj
            for (res, n, _), obj in self._objects.items()
            if res == resource and n == ns and self._matches(obj, labels, fields)
        ]
        return JSONResponse(
            {
                "kind": f"{kind}List",
                "apiVersion": "v1" if resource == "pods" else "networking.k8s.io/v1",
                "metadata": {"resourceVersion": str(self._version)},
                "items": items,
            }
        )

    @staticmethod
    def _matches(obj: Json, labels: dict[str, str], fields: dict[str, str]) -> bool:
        have = obj["metadata"].get("labels") or {}
        return all(have.get(k) == v for k, v in labels.items()) and all(
            _field(obj, k) == v for k, v in fields.items()
        )

    async def _pods(self, request: Request) -> Response:
        if request.method == "POST":
            refused = self._gate(request, "create", "", "pods")
            return refused or await self._create(request, "pods", "Pod")
        if request.query_params.get("watch") in ("true", "1"):
            refused = self._gate(request, "watch", "", "pods")
            return refused or self._watch(request, "pods")
        refused = self._gate(request, "list", "", "pods")
        return refused or self._list(request, "pods", "Pod")

    async def _pod(self, request: Request) -> Response:
        ns, name = request.path_params["ns"], request.path_params["name"]
        verb = "get" if request.method == "GET" else "delete"
        refused = self._gate(request, verb, "", "pods")
        if refused is not None:
            return refused
        obj = self._objects.get(("pods", ns, name))
        if obj is None:
            return status(404, "NotFound", f'pods "{name}" not found', name=name, kind="pods")
        if verb == "get":
            return JSONResponse(obj)
        del self._objects[("pods", ns, name)]
        run = self._running.pop((ns, name), None)
        if run is not None:
            self._stop(run)
        obj["metadata"]["deletionTimestamp"] = _now()
        self._bump("pods", "DELETED", obj)
        await self._notify()
        return JSONResponse(obj)

    async def _policies(self, request: Request) -> Response:
        group = "networking.k8s.io"
        if request.method == "POST":
            refused = self._gate(request, "create", group, "networkpolicies")
            return refused or await self._create(request, "networkpolicies", "NetworkPolicy")
        refused = self._gate(request, "list", group, "networkpolicies")
        return refused or self._list(request, "networkpolicies", "NetworkPolicy")

    async def _access_review(self, request: Request) -> Response:
        body: Json = json.loads(await request.body())
        attrs = (body.get("spec") or {}).get("resourceAttributes") or {}
        self.calls.append(Call("create", "authorization.k8s.io", "selfsubjectaccessreviews", None))
        rule = (attrs.get("group", ""), attrs.get("resource", ""), attrs.get("verb", ""))
        allowed = self.allow is None or rule in self.allow
        review: Json = {"allowed": allowed}
        if not allowed:
            review["reason"] = "no RBAC rule allows it"
        body["status"] = review
        return JSONResponse(body, status_code=201)

    def _watch(self, request: Request, resource: str) -> Response:
        ns = request.path_params["ns"]
        labels = _selector(request.query_params.get("labelSelector"))
        fields = _selector(request.query_params.get("fieldSelector"))
        if labels is None or fields is None:
            return status(400, "BadRequest", "only equality selectors are supported here")
        since = request.query_params.get("resourceVersion")
        timeout = float(request.query_params.get("timeoutSeconds") or 1800)
        start = int(since) if since and since != "0" else None

        def matching(obj: Json) -> bool:
            return obj["metadata"].get("namespace") == ns and self._matches(obj, labels, fields)

        async def stream() -> AsyncIterator[bytes]:
            assert self._changed is not None
            seen = self._version
            if start is None:  # no version: the current objects first, as ADDED
                for (res, n, _), obj in list(self._objects.items()):
                    if res == resource and n == ns and matching(obj):
                        yield json.dumps({"type": "ADDED", "object": obj}).encode() + b"\n"
            else:
                seen = start
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    while True:
                        for rv, res, kind, obj in self._events:
                            if rv > seen and res == resource and matching(obj):
                                yield json.dumps({"type": kind, "object": obj}).encode() + b"\n"
                        seen = max(seen, self._version)
                        async with self._changed:
                            if self._version == seen:
                                await self._changed.wait()

        return StreamingResponse(stream(), media_type="application/json")

    # -- kubelet ------------------------------------------------------------------------------

    async def _kubelet_loop(self) -> None:
        async with httpx.AsyncClient(trust_env=False, timeout=0.5) as http:
            while True:
                for (res, ns, name), pod in list(self._objects.items()):
                    if res == "pods":
                        await self._sync_pod(http, ns, name, pod)
                await asyncio.sleep(0.02)

    async def _set_status(self, pod: Json, **changes: Any) -> None:
        pod["status"].update(changes)
        self._bump("pods", "MODIFIED", pod)
        await self._notify()

    async def _sync_pod(self, http: httpx.AsyncClient, ns: str, name: str, pod: Json) -> None:
        st = pod["status"]
        if st["phase"] in ("Failed", "Succeeded"):
            return
        container = pod["spec"]["containers"][0]
        cname = container["name"]
        run = self._running.get((ns, name))
        if run is None:
            if not self.schedulable:
                if st["conditions"][0]["status"] == "True":
                    await self._set_status(
                        pod,
                        conditions=[
                            {
                                "type": "PodScheduled",
                                "status": "False",
                                "reason": "Unschedulable",
                                "message": "0/3 nodes are available: 3 Insufficient memory.",
                            }
                        ],
                    )
                return
            if st.get("containerStatuses"):
                return  # waiting for good (image pull back-off)
            if container["image"] not in self.images:
                await self._set_status(
                    pod,
                    containerStatuses=[
                        {
                            "name": cname,
                            "ready": False,
                            "restartCount": 0,
                            "image": container["image"],
                            "imageID": "",
                            "state": {
                                "waiting": {
                                    "reason": "ImagePullBackOff",
                                    "message": f'Back-off pulling image "{container["image"]}"',
                                }
                            },
                        }
                    ],
                )
                return
            self._running[(ns, name)] = self._launch(pod)
            return
        code = run.process.poll()
        if code is not None:
            self._running.pop((ns, name), None)
            self._stop(run)
            reason = "OOMKilled" if code == -signal.SIGKILL else "Error"
            await self._fail(run, pod, cname, container["image"], code, reason)
            return
        if st["phase"] == "Pending":
            try:
                answer = await http.get(run.probe)
            except httpx.HTTPError:
                return
            if answer.status_code == 200:
                await self._set_status(
                    pod,
                    phase="Running",
                    podIP=run.ip,
                    podIPs=[{"ip": run.ip}],
                    startTime=_now(),
                    conditions=[
                        {"type": "PodScheduled", "status": "True"},
                        {"type": "Initialized", "status": "True"},
                        {"type": "ContainersReady", "status": "True"},
                        {"type": "Ready", "status": "True"},
                    ],
                    containerStatuses=[
                        {
                            "name": cname,
                            "ready": True,
                            "restartCount": 0,
                            "image": container["image"],
                            "imageID": "",
                            "state": {"running": {"startedAt": _now()}},
                        }
                    ],
                )

    async def _fail(
        self, run: _Running, pod: Json, cname: str, image: str, code: int, reason: str
    ) -> None:
        await self._set_status(
            pod,
            phase="Failed",
            conditions=[{"type": "Ready", "status": "False", "reason": "PodFailed"}],
            containerStatuses=[
                {
                    "name": cname,
                    "ready": False,
                    "restartCount": 0,
                    "image": image,
                    "imageID": "",
                    "state": {
                        "terminated": {"exitCode": 137 if code < 0 else code, "reason": reason}
                    },
                }
            ],
        )
        run.failed.set()

    def _launch(self, pod: Json) -> _Running:
        spec = pod["spec"]
        container = spec["containers"][0]
        ip = f"{self._ip_base}.{self._next_ip}"
        self._next_ip += 1
        volumes: dict[str, Path] = {}
        folders: list[Path] = []
        for volume in spec.get("volumes") or []:
            if "persistentVolumeClaim" in volume:
                volumes[volume["name"]] = self.claims[volume["persistentVolumeClaim"]["claimName"]]
            else:
                folder = Path(tempfile.mkdtemp(dir=self._scratch))
                folders.append(folder)
                volumes[volume["name"]] = folder
        mounts: dict[str, str] = {}
        for mount in container.get("volumeMounts") or []:
            host = volumes[mount["name"]] / mount.get("subPath", "")
            host.mkdir(parents=True, exist_ok=True)
            mounts[mount["mountPath"]] = str(host)
        env: dict[str, str] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        for var in container.get("env") or []:
            env[var["name"]] = str(mounts.get(var["value"], var["value"]))
        if "/tmp" in mounts:
            env["TMPDIR"] = mounts["/tmp"]
        env["PRONGHORN_SANDBOX_HOST"] = ip  # the pod's own address
        argv = [sys.executable if a == "python" else a for a in container["command"]]
        process = subprocess.Popen(  # the pod's command
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        probe = container["readinessProbe"]["httpGet"]
        return _Running(process, ip, f"http://{ip}:{probe['port']}{probe['path']}", folders)

    @staticmethod
    def _stop(run: _Running) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            run.process.wait(timeout=5)
        for folder in run.folders:
            shutil.rmtree(folder, ignore_errors=True)
