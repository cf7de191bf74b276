"""Stop the local Ray a driver started when the driver dies, however it dies.

A local `ray.init()` starts gcs_server, raylet and helpers as children of the driver. When the
driver is SIGKILLed, GCS and raylet exit, but Ray 2.60's DashboardAgent and RuntimeEnvAgent are
re-parented to PID 1 and keep running (seen 40 s later; they also ignore SIGTERM). So before
starting its local Ray the driver starts this reaper, a small process with its own session:

- the driver puts a random tag in `FLIP7_RAY_OWNER` while it calls `ray.init()`, so every
  process of that Ray (and every worker its raylet starts) carries the tag in its environment;
- the reaper blocks reading a pipe from the driver. The pipe closes when the driver exits
  (normally, after `ray.shutdown()`, or killed), and then the reaper sends SIGTERM, and 2 s
  later SIGKILL, to every process whose environment carries the tag: that Ray and nothing else
  (other Rays on the machine carry another tag or none).

Linux only (it reads /proc); elsewhere the reaper does nothing.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

OWNER_ENV = "FLIP7_RAY_OWNER"
GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL
SWEEP_SECONDS = 10.0  # keep sweeping this long, for processes started while stopping


@dataclass
class Reaper:
    tag: str
    process: subprocess.Popen[bytes]


def start_reaper() -> Reaper | None:
    """Start a reaper for a local Ray about to start; None where /proc is missing."""
    if not os.path.isdir("/proc/self"):
        return None
    tag = secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if k != OWNER_ENV}
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.reaper", tag],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # a Ctrl-C to the driver's group does not stop it first
    )
    return Reaper(tag, process)


def stop_reaper(reaper: Reaper | None) -> None:
    """Tell the reaper the driver is done (it sweeps what is left of its Ray, then exits)."""
    if reaper is not None and reaper.process.stdin is not None:
        reaper.process.stdin.close()


def tagged(tag: str) -> list[int]:
    """Pids of the processes whose environment holds OWNER_ENV=tag (this one excluded)."""
    needle = f"{OWNER_ENV}={tag}".encode()
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            found.append(int(name))
    return found


def sweep(tag: str) -> int:
    """SIGTERM, then SIGKILL, every tagged process until none is left; how many were seen."""
    seen: set[int] = set()
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        pids = tagged(tag)
        if not pids:
            break
        seen.update(pids)
        _signal(pids, signal.SIGTERM)
        until = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < until and any(_alive(p) for p in pids):
            time.sleep(0.1)
        _signal([p for p in pids if _alive(p)], signal.SIGKILL)
        time.sleep(0.2)
    return len(seen)


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"  # a zombie has exited; its parent has not reaped it yet


def main(argv: list[str]) -> int:
    """`python -m pipeline.reaper TAG`: wait for stdin to close, then sweep."""
    (tag,) = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    sweep(tag)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
