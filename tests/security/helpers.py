"""Shared checks for the attack tests: nothing written, nothing lost, one line naming the culprit."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: `flip7 tournament run` in a subprocess, and its flags here: one CPU, quiet, no results copy,
#: the reference engine (no compile).
FLIP7 = [sys.executable, "-m", "flip7", "tournament", "run"]
FLAGS = ["--num-cpus", "1", "--no-progress", "--no-file", "--engine", "reference"]

SPEC = """
name = "{name}"
seed = 7
games = {games}
shard_size = {shard_size}
{extra}
[[lineups]]
seats = [{seats}]
"""


def spec_text(
    name: str = "t",
    seats: tuple[str, ...] = ("ev", "sum:20"),
    games: int = 40,
    shard_size: int = 20,
    extra: str = "",
) -> str:
    quoted = ", ".join(f'"{s}"' for s in seats)
    return SPEC.format(name=name, seats=quoted, games=games, shard_size=shard_size, extra=extra)


def write_spec(path: Path, **kwargs: object) -> Path:
    path.write_text(spec_text(**kwargs))  # type: ignore[arg-type]
    return path


def start_run(
    spec: Path, root: Path, delay: str, *, new_session: bool = False
) -> subprocess.Popen[str]:
    """`flip7 tournament run SPEC --data ROOT` in a subprocess (its own session with
    `new_session`), each shard slowed by `delay` seconds, returned once its manifest records a
    shard (Ray is up); a run that ends or records none within 120 s is killed, failing the test
    with its stderr."""
    from pipeline.task import FAULT_ENV

    proc = subprocess.Popen(
        [*FLIP7, str(spec), "--data", str(root), *FLAGS],
        env={**os.environ, FAULT_ENV: f"delay:{delay}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
        # Ctrl-C's default action, as from a terminal: an ignored SIGINT survives exec, and a
        # test run in the background (or a test before this one) may have left it ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    manifest = root / "runs" / "t" / "manifest.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(manifest.read_text())["shards"]:
                return proc
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the run did not start: {proc.communicate()[1]}")


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root: relative path -> (size, mtime_ns)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def one_line(err: str, *culprits: str) -> str:
    """The stderr of a refused command: exactly one line, no traceback, naming each culprit."""
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    for c in culprits:
        assert c in lines[0], (c, lines[0])
    return lines[0]


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail loudly if anything tries to start Ray (the attacks must be refused before it)."""
    import ray

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ray.init was called")

    monkeypatch.setattr(ray, "init", refuse)


@contextmanager
def hung_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts every connection and never sends a byte (a hung Ray
    head or S3 endpoint); closed with every connection it took on the way out."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for s in held:
            s.close()
        server.close()
