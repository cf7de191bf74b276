"""Stop the local Ray a driver started when the driver dies, however it dies.

A local `ray.init()` starts gcs_server, raylet and helpers as children of the driver. When the
driver is SIGKILLed, GCS and raylet exit, but Ray 2.60's DashboardAgent and RuntimeEnvAgent are
re-parented to PID 1 and keep running (seen 40 s later; they also ignore SIGTERM). So before
starting its local Ray the driver starts this reaper, a small process with its own session:

- the driver puts a random tag in `FLIP7_RAY_OWNER` while it calls `ray.init()`, so every
  process of that Ray carries the tag in its environment, and once Ray is up it writes the
  session directory (`/tmp/ray/session_...`) down a pipe to the reaper. Both are needed: Ray
  renames its agents and workers (`ray::DashboardAgent`) by rewriting their argv/environ
  memory, which can clobber the tag, while every process of a session keeps log files open in
  its session directory, which names it uniquely;
- the reaper blocks reading that pipe. The pipe closes when the driver exits (normally, after
  `ray.shutdown()`, or killed), and then the reaper sends SIGTERM, and 2 s later SIGKILL, to
  every process that carries the tag or has a file open (or named on its command line) in the
  session directory: that Ray and nothing else (other Rays on the machine have other sessions
  and tags).

Linux only (it reads /proc); elsewhere the reaper does nothing.
"""

from __future__ import annotations

import contextlib
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
        [sys.executable, "-m", "pipeline.reaper", tag, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # a Ctrl-C to the driver's group does not stop it first
    )
    return Reaper(tag, process)


def tell_session(reaper: Reaper | None, session_dir: str | None) -> None:
    """Give the reaper the session directory of the Ray just started."""
    if reaper is None or not session_dir or reaper.process.stdin is None:
        return
    try:
        reaper.process.stdin.write(session_dir.encode() + b"\n")
        reaper.process.stdin.flush()
    except OSError:
        pass  # the reaper is gone: nothing to tell


def stop_reaper(reaper: Reaper | None) -> None:
    """Tell the reaper the driver is done (it sweeps what is left of its Ray, then exits)."""
    if reaper is not None and reaper.process.stdin is not None:
        reaper.process.stdin.close()


def owned(tag: str, session_dir: str | None, driver: int = 0) -> list[int]:
    """Pids of the processes of this Ray: OWNER_ENV=tag in the environment, or the session
    directory on the command line or among the open files; never this process or the driver
    (which still holds its own Ray logs open while it finishes after `ray.shutdown()`)."""
    needle = f"{OWNER_ENV}={tag}".encode()
    spared = {os.getpid(), driver}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in spared:
            continue
        if _has_tag(name, needle) or (session_dir and _uses(name, session_dir)):
            found.append(int(name))
    return found


def _has_tag(pid: str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:
        return False


def _uses(pid: str, session_dir: str) -> bool:
    """Whether process `pid` names `session_dir` on its command line or has a file open in it."""
    prefix = session_dir.rstrip("/") + "/"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if session_dir.encode() in f.read():
                return True
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(prefix):
                    return True
    except OSError:
        return False
    return False


def sweep(tag: str, session_dir: str | None = None, driver: int = 0) -> int:
    """SIGTERM, then SIGKILL, every process of this Ray until none is left; how many were seen."""
    seen: set[int] = set()
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        pids = owned(tag, session_dir, driver)
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
    """`python -m pipeline.reaper TAG DRIVER_PID`: read the session directory (a line) until
    stdin closes, then sweep."""
    tag, driver = argv[0], int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    session_dir = None
    try:
        for line in sys.stdin.buffer:
            text = line.decode(errors="replace").strip()
            if text.startswith("/") and os.path.basename(text).startswith("session_"):
                session_dir = text
    except OSError:
        pass
    sweep(tag, session_dir, driver)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
