"""The driver on a real local Ray, attacked from outside: SIGKILL, SIGTERM, a lake that turns
read-only mid-run. Each test starts `flip7 tournament run` in a subprocess."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pipeline.lake import Lake
from pipeline.plan import make_plan
from pipeline.spec import load_spec
from pipeline.task import FAULT_ENV
from tests.security.helpers import FLAGS, FLIP7, one_line, start_run, write_spec

pytestmark = pytest.mark.ray


def session_pids(name: str, raylets: set[int] | None = None) -> set[int]:
    """Live processes of one Ray session: those naming its directory on their command line or
    holding a file open in it (every Ray process keeps its logs there, also after re-parenting
    to PID 1), and those a raylet of it started (RAY_RAYLET_PID in their environment; pass the
    raylets seen alive). Other Rays on this machine are never matched."""
    own: set[int] = set()
    parents = {str(r) for r in raylets or ()}
    prefix = f"/tmp/ray/{name}/"
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        if state == b"Z":
            continue
        procs[int(entry)] = env
        files = []
        for fd in fds:
            with contextlib.suppress(OSError):
                files.append(os.readlink(f"/proc/{entry}/fd/{fd}"))
        if name in cmd or any(f.startswith(prefix) for f in files):
            own.add(int(entry))
            if "/raylet" in cmd.split(" ", 1)[0]:
                parents.add(entry)
    for pid, env in procs.items():
        if any(f"RAY_RAYLET_PID={r}".encode() in env for r in parents):
            own.add(pid)
    return own


def raylets_of(name: str) -> set[int]:
    """The raylet pids of a session (alive now)."""
    found = set()
    for pid in session_pids(name):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"/raylet" in f.read().split(b"\0", 1)[0]:
                found.add(pid)
    return found


#: The shards of start_driver's run: at a second each, minutes of work on two workers, so that a
#: signal sent once the test has found Ray's processes (tens of seconds on a loaded machine)
#: always arrives mid-run; each test stops the run long before.
SHARDS = 100


def start_driver(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """A run of SHARDS shards in a subprocess of its own session, returned once Ray is up."""
    spec = write_spec(tmp_path / "s.toml", games=20 * SHARDS, shard_size=20)
    root = tmp_path / "lake"
    return start_run(spec, root, "1", new_session=True), root


def session_of(proc: subprocess.Popen[str]) -> str:
    """The Ray session this driver started: Ray names its directory after the driver's pid. Ray
    leaves old session directories behind and pids are reused, so an older directory can carry
    the same pid: the newest is this driver's."""
    paths = glob.glob(f"/tmp/ray/session_*_{proc.pid}")
    assert paths, f"no Ray session directory for pid {proc.pid}"
    return os.path.basename(max(paths, key=os.path.getmtime))


def wait_gone(name: str, raylets: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    left = session_pids(name, raylets)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = session_pids(name, raylets)
    return left


def kill_all(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_sigkilled_driver_leaves_no_ray_process(tmp_path: Path) -> None:
    """SIGKILL to the driver alone (not its group): within 20 s no process of the Ray session
    it started is left. Ray 2.60 left its DashboardAgent and RuntimeEnvAgent running with
    parent PID 1 (and they ignore SIGTERM); the driver's reaper now stops them."""
    proc, _ = start_driver(tmp_path)
    name = session_of(proc)
    raylets = raylets_of(name)
    before = session_pids(name, raylets)
    try:
        assert raylets and len(before) >= 4, before  # gcs, raylet, agents, the worker
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        left = wait_gone(name, raylets, 20)
        assert not left, f"still running: {left}"
    finally:
        kill_all(session_pids(name, raylets))


def test_sigterm_is_recorded_as_terminated(tmp_path: Path) -> None:
    """SIGTERM (what `kill` and schedulers send) is recorded as `terminated`, not '15', and the
    Ray session is gone afterwards."""
    proc, root = start_driver(tmp_path)
    name = session_of(proc)
    raylets = raylets_of(name)
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        manifest = Lake.open(str(root)).load_manifest("t")
        assert manifest["status"] == "failed" and manifest["error"] == "terminated"
        assert not wait_gone(name, raylets, 20)
    finally:
        kill_all(session_pids(name, raylets))


def test_ctrl_c_keeps_every_shard_and_says_how_to_resume(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) mid-run: exit status 130, the manifest records `interrupted` with every
    committed shard, one line says how many were kept and the command that finishes the run,
    and the Ray session is gone. Cancelling the running tasks could trip a check failure inside
    Ray that killed the driver with a C++ stack trace instead; a local Ray is now stopped
    without cancelling them."""
    proc, root = start_driver(tmp_path)
    name = session_of(proc)
    raylets = raylets_of(name)
    try:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # a Ctrl-C the driver never saw: press it again
            proc.send_signal(signal.SIGINT)  # (seen on a loaded CI machine, twice in 4 runs)
            _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        manifest = Lake.open(str(root)).load_manifest("t")
        assert manifest["status"] == "failed" and manifest["error"] == "interrupted"
        kept = len(manifest["shards"])
        assert 0 < kept < SHARDS
        assert (
            f"interrupted: {kept:,} of {SHARDS} shards committed and kept; finish the run with: "
            f"flip7 tournament run {tmp_path / 's.toml'} --resume --data {root}" in err
        ), err
        assert "Check failed" not in err and "StackTrace" not in err, err
        assert not wait_gone(name, raylets, 20)
    finally:
        kill_all(session_pids(name, raylets))


READ_ONLY_SCRIPT = r"""
set -u
mount -t tmpfs -o size=64m flip7test "$LAKE" || exit 90
"$@" 2>"$ERR" &
pid=$!
for i in $(seq 1 1200); do
    grep -q '"rows"' "$LAKE/runs/t/manifest.json" 2>/dev/null && break
    sleep 0.1
done
for i in $(seq 1 200); do
    mount -o remount,ro "$LAKE" 2>/dev/null && break
    sleep 0.05
done
touch "$LAKE/probe" 2>/dev/null && exit 91
wait $pid
echo $? >"$RC"
cp -a "$LAKE/." "$COPY/"
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_lake_turning_read_only_mid_run(tmp_path: Path) -> None:
    """A real read-only filesystem: the lake is a tmpfs mounted in a private user+mount
    namespace (root's chmod does not stop root, but a read-only mount stops everyone) and
    remounted read-only once a shard is recorded. The driver stops with one line naming the
    run and the error; its manifest, which it could not update, still says `running` but names
    the driver, so the next start sees `interrupted` and accepts --resume."""
    from pipeline.lake import run_status
    from pipeline.run import check_start

    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"])
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    spec = write_spec(tmp_path / "s.toml", games=400, shard_size=20)
    lake, copy = tmp_path / "lake", tmp_path / "copy"
    lake.mkdir()
    copy.mkdir()
    env = {
        **os.environ,
        FAULT_ENV: "delay:0.5",
        "LAKE": str(lake),
        "COPY": str(copy),
        "ERR": str(tmp_path / "err"),
        "RC": str(tmp_path / "rc"),
    }
    cmd = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]
    cmd += ["sh", "-c", READ_ONLY_SCRIPT, "sh", *FLIP7, str(spec), "--data", str(lake), *FLAGS]
    done = subprocess.run(cmd, env=env, timeout=300)
    assert done.returncode == 0, done.returncode
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "1", err
    line = one_line(err, "run 't'", "Read-only file system", "--resume")
    assert line.startswith("flip7 tournament: error:")
    manifest = Lake.open(str(copy)).load_manifest("t")
    assert manifest["status"] == "running" and run_status(manifest) == "interrupted"
    plan = make_plan(load_spec(spec))
    start = check_start(Lake.open(str(copy)), plan, resume=True, overwrite=False)
    assert 0 < len(start.todo) < len(plan.shards)
