"""`pronghorn users create --email` and `pronghorn users email`, on the database of a running
server, which then logs the user in by that email (Pronghorn's login and DeerFlow's)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from support import forkserver
from support.inproc import InProcessServer
from support.live import TESTS_DIR, server_env

PASSWORD = "cli-made password"


def _cli(app: InProcessServer, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS_DIR), "HOME": str(app.workdir)}
    cmd = [sys.executable, "-m", "pronghorn.cli", *args, "--config", str(app.config_path)]
    owner = forkserver.OWNER.get(server_env())  # a warm interpreter, as LiveServer.cli uses
    return forkserver.run(cmd, cwd=app.workdir, env=env, server=owner, input=stdin, timeout=300)


@pytest.mark.timeout(900)  # four CLI processes: slow on a loaded machine
def test_create_with_email_then_change_it(app: InProcessServer) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    email = f"{name}@example.com"
    made = _cli(
        app, "users", "create", name, "--email", email, "--password-stdin", stdin=PASSWORD + "\n"
    )
    assert made.returncode == 0, made.stderr
    with app.http() as http:
        login = http.post("/api/auth/login", json={"username": email, "password": PASSWORD})
        assert login.status_code == 200 and login.json()["user"]["email"] == email

    bad = _cli(app, "users", "email", name, "not an address")
    assert bad.returncode != 0 and "email" in bad.stderr
    other = f"{name}@example.org"
    changed = _cli(app, "users", "email", name, other)
    assert changed.returncode == 0 and other in changed.stdout
    with app.http() as http:
        form = {"username": other, "password": PASSWORD}
        assert http.post("/api/v1/auth/login/local", data=form).status_code == 200
        old = {"username": email, "password": PASSWORD}
        assert http.post("/api/v1/auth/login/local", data=old).status_code == 401
    cleared = _cli(app, "users", "email", name, "")
    assert cleared.returncode == 0 and "(none)" in cleared.stdout
