"""The cluster recipe under Ray's token authentication (on by default in Ray 2.60): a head
started with `ray start --head` and a token, a driver that sends none (refused in one line that
says so, at once, not twenty lines of InvalidAuthToken and "cannot start or reach Ray"), and the
README's recipe (RAY_AUTH_MODE=token on both sides) running a tournament on it. The head is a
real `ray start --head --block` in its own process group, stopped with that group whatever
happens; other Ray sessions on the machine are never touched."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pipeline.helpers import write_spec

pytestmark = pytest.mark.ray

ROOT = Path(__file__).parents[2]
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment(home: Path, **extra: str) -> dict[str, str]:
    """This test's processes: a private HOME (its own ~/.ray/auth_token), no RAY_AUTH_MODE
    unless given, the checkout importable (the head's workers import flip7)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    path = [str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env.update(
        HOME=str(home),
        RAY_USAGE_STATS_ENABLED="0",
        PYTHONPATH=os.pathsep.join(path),
        NO_COLOR="1",
        **extra,
    )
    return env


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A Ray head with token authentication on, as the README starts one; (address, HOME)."""
    home = tmp_path_factory.mktemp("home")
    env = environment(home, RAY_AUTH_MODE="token")
    subprocess.run([RAY, "get-auth-token", "--generate"], env=env, capture_output=True, check=True)
    port = free_port()
    ports = {  # every port of its own: other Ray sessions on this machine keep theirs
        "--ray-client-server-port": free_port(),
        "--dashboard-agent-listen-port": free_port(),
        "--dashboard-agent-grpc-port": free_port(),
        "--metrics-export-port": free_port(),
        "--runtime-env-agent-port": free_port(),
        "--node-manager-port": free_port(),
        "--object-manager-port": free_port(),
    }
    argv = [RAY, "start", "--head", f"--port={port}", "--num-cpus=1", "--block"]
    argv += ["--memory=600000000", "--object-store-memory=100000000", "--include-dashboard=false"]
    argv += [f"{k}={v}" for k, v in ports.items()]
    log = (home / "head.log").open("w")
    proc = subprocess.Popen(
        argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 90
        while True:  # the head is up once its GCS takes connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"ray start --head did not start: {(home / 'head.log').read_text()}"
                    )
                time.sleep(0.5)
        time.sleep(2)  # its raylet registers
        yield f"127.0.0.1:{port}", home
    finally:
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            if sig == signal.SIGTERM:  # the group's other processes too (gcs_server ...)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            break
        log.close()


def flip7(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flip7", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_driver_without_the_token_is_told_so_in_one_line(
    head: tuple[str, Path], tmp_path: Path
) -> None:
    """The issue's recipe without RAY_AUTH_MODE=token: refused at once, one line naming the
    token and what to do, nothing written to the lake."""
    address, home = head
    spec = write_spec(tmp_path / "t.toml")
    argv = ["tournament", "run", str(spec), "--address", address, "--data", str(tmp_path / "lake")]
    done = flip7([*argv, "--no-file"], environment(home), tmp_path)
    assert done.returncode == 1, done.stderr
    lines = [s for s in done.stderr.splitlines() if s.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"flip7 tournament: error: the head at {address} refused our token")
    assert "RAY_AUTH_MODE=token" in lines[0] and "InvalidAuthToken" not in done.stderr
    assert not (tmp_path / "lake").exists()
    wrong = environment(home, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN="0" * 64)
    done = flip7([*argv, "--no-file"], wrong, tmp_path)
    assert done.returncode == 1 and "refused our token: the token from $RAY_AUTH_TOKEN" in (
        done.stderr
    ), done.stderr


def test_the_readme_recipe_runs_a_tournament_on_the_head(
    head: tuple[str, Path], tmp_path: Path
) -> None:
    """With RAY_AUTH_MODE=token on the driver too (the README's code block), the tournament runs
    on the head and completes."""
    address, home = head
    spec = write_spec(tmp_path / "t.toml", shard_size=120)
    argv = ["tournament", "run", str(spec), "--address", address, "--data", str(tmp_path / "lake")]
    done = flip7(
        [*argv, "--no-file", "--no-progress"], environment(home, RAY_AUTH_MODE="token"), tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "InvalidAuthToken" not in done.stderr
    assert "shards (0 already done)" in done.stdout, done.stdout
