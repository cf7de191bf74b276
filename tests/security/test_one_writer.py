"""One writer per run: two drivers started together on one run, on a local lake and on an S3
store (moto's server). The first to take the run's lease writes it; the other is refused at
once, naming the driver that has it. A stale lease is taken over only when the user asks
(--resume, --overwrite); a driver whose lease was taken stops writing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from pipeline.task import FAULT_ENV
from tests.s3.server import S3Server, serving
from tests.security.helpers import FLAGS, FLIP7, one_line, spec_text, start_run, tree


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with serving(tmp_path_factory.mktemp("moto")) as server:
        yield server


def lake_for(where: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict]:
    """A lake URI and the environment that reaches it."""
    env = {**os.environ}
    if where == "local":
        return str(tmp_path / "lake"), env
    server: S3Server = request.getfixturevalue("s3")
    env |= {**server.env(), "AWS_EC2_METADATA_DISABLED": "true"}
    return f"s3://{server.bucket()}/lake", env


def seeded_spec(path: Path, seed: int) -> Path:
    path.write_text(spec_text(games=200, shard_size=20).replace("seed = 7", f"seed = {seed}"))
    return path


@pytest.mark.ray
@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_drivers_started_together_one_writes(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Specs naming the same run, seeds 9 and 10, started at the same moment: before, both
    ran every shard and exited 0, each printing its own figures, and the lake ended as one of
    them. Now exactly one runs; the other exits 2 with one line naming the winner's pid and
    host, and the lake holds the winner's seed."""
    root, env = lake_for(where, request, tmp_path)
    env[FAULT_ENV] = "delay:0.2"
    procs = {
        seed: subprocess.Popen(
            [*FLIP7, str(seeded_spec(tmp_path / f"s{seed}.toml", seed)), "--data", root, *FLAGS],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (9, 10)
    }
    results = {seed: (p.wait(timeout=300), *p.communicate()) for seed, p in procs.items()}
    codes = sorted(rc for rc, _, _ in results.values())
    assert codes == [0, 2], results
    winner = next(s for s, (rc, _, _) in results.items() if rc == 0)
    loser = next(s for s in results if s != winner)
    line = one_line(results[loser][2], "being written by another driver")
    assert f"pid {procs[winner].pid} on {socket.gethostname()}" in line
    env_keys = {k: v for k, v in env.items() if k.startswith("AWS_")}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env_keys.items():
            mp.setenv(k, v)
        lake = Lake.open(root)
        manifest = lake.load_manifest("t")
        assert manifest["seed"] == winner and manifest["status"] == "complete"
        assert not lake.exists(f"{lake.run_dir('t')}/lease.json")  # released at the end


TAKE = r"""
import sys, time
from pipeline.lake import Lake
from pipeline.lease import LeaseHeld, take
lake = Lake.open(sys.argv[1])
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
try:
    lease = take(lake, "t")
except LeaseHeld as exc:
    print("refused:", exc)
else:
    print("won")
    time.sleep(3)
    lease.release()
"""


@pytest.mark.parametrize("where", ["local", "s3"])
def test_six_processes_racing_for_a_lease_one_wins(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The lease alone, without Ray: six processes try to take it at the same instant."""
    root, env = lake_for(where, request, tmp_path)
    at = str(time.time() + 3)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", TAKE, root, at], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert sum(o.startswith("won") for o in outs) == 1, outs
    assert all(o.startswith(("won", "refused: run 't'")) for o in outs), outs


HOLD = r"""
import os, sys, time
from pipeline.lake import Lake
from pipeline.lease import take
lease = take(Lake.open(sys.argv[1]), "t")
print("held", flush=True)
if sys.argv[2] == "die":
    os._exit(0)  # killed: the lease stays, naming a process that is gone
time.sleep(120)
"""


def hold(root: Path, how: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root), how], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


@pytest.mark.usefixtures("no_ray")
def test_a_live_lease_is_never_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """While its driver lives, neither a plain start, --resume nor --overwrite takes the run:
    one line naming the driver, before Ray, and the lake is as it was."""
    root = tmp_path / "lake"
    spec = seeded_spec(tmp_path / "s.toml", 9)
    proc = hold(root, "live")
    try:
        before = tree(root)
        for flags in ([], ["--resume"], ["--overwrite"]):
            assert main(["tournament", "run", str(spec), "--data", str(root), *flags]) == 2
            one_line(capsys.readouterr().err, f"pid {proc.pid}", "being written by another")
        assert tree(root) == before
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.usefixtures("no_ray")
def test_a_stale_lease_is_taken_over_only_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A driver killed before it released its lease: a plain start is refused, saying the
    driver stopped and that --resume takes the run over; take_over (what --resume and
    --overwrite pass) takes it."""
    from pipeline.lease import LeaseHeld, read_lease, take

    root = tmp_path / "lake"
    spec = seeded_spec(tmp_path / "s.toml", 9)
    dead = hold(root, "die")
    dead.wait()
    assert main(["tournament", "run", str(spec), "--data", str(root)]) == 2
    one_line(capsys.readouterr().err, f"pid {dead.pid}", "stopped", "is gone", "--resume")
    lake = Lake.open(str(root))
    lease = take(lake, "t", take_over=True)
    try:
        assert read_lease(lake, "t")["token"] == lease.record["token"]
        with pytest.raises(LeaseHeld, match="being written by another driver"):
            take(lake, "t", take_over=True)  # ours now, and live
    finally:
        lease.release()


@pytest.mark.ray
def test_a_driver_whose_lease_was_taken_stops(tmp_path: Path) -> None:
    """A driver that finds its lease holds another's token (taken over while it was cut off)
    stops within a heartbeat, says so, and writes nothing more: its manifest is neither
    marked failed nor complete by it."""
    root = tmp_path / "lake"
    spec = seeded_spec(tmp_path / "s.toml", 9)
    spec.write_text(spec.read_text().replace("games = 200", "games = 2000"))
    proc = start_run(spec, root, "0.5")
    manifest = root / "runs" / "t" / "manifest.json"
    lease_file = root / "runs" / "t" / "lease.json"
    other = json.loads(lease_file.read_text())
    other.update(token="f" * 32, host="elsewhere.invalid", pid=4242, heartbeat_epoch=time.time())
    other["stale_after"] = 600
    tmp = root / "runs" / "t" / "other.tmp"
    tmp.write_text(json.dumps(other))
    os.replace(tmp, lease_file)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and time.monotonic() - t0 < 30
    # Ray may log its own shutdown noise (at times a check failure of its own, written from
    # another thread, which can share a line with ours); flip7's own error is one line
    ours = [s[s.index("flip7 ") :] for s in err.splitlines() if "flip7 tournament: " in s]
    assert len(ours) == 1 and "Traceback" not in err, err
    assert "was taken over by pid 4242 on elsewhere.invalid" in ours[0]
    assert "stopped writing it" in ours[0]
    assert json.loads(manifest.read_text())["status"] == "running"
    assert json.loads(lease_file.read_text())["token"] == "f" * 32  # left to its owner


def test_the_lease_is_kept_fresh_and_released(tmp_path: Path) -> None:
    """While the driver runs its heartbeat renews the lease; at the end the lease is gone and
    so are the folders made only to hold it."""
    from pipeline.lease import read_lease, take

    lake = Lake.open(str(tmp_path / "lake"))
    lease = take(lake, "t")
    first = read_lease(lake, "t")["heartbeat_epoch"]
    lease.start_heartbeat(every=0.1)
    time.sleep(0.6)
    assert read_lease(lake, "t")["heartbeat_epoch"] > first and lease.lost is None
    lease.release()
    assert not (tmp_path / "lake").exists()


def test_the_best_effort_lease_refuses_a_lease_already_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store without an atomic create-if-absent: a lease already there is never replaced
    (only a start within the same instant could meet another)."""
    from pipeline import lease as leases

    monkeypatch.setattr(leases, "store_for", leases._Store)
    monkeypatch.setattr(leases, "SETTLE_SECONDS", 0.05)
    lake = Lake.open(str(tmp_path / "lake"))
    held = leases.take(lake, "t")
    try:
        assert held.record["how"] == "best effort"
        with pytest.raises(leases.LeaseHeld, match="being written by another driver"):
            leases.take(lake, "t", take_over=True)
    finally:
        held.release()
    assert leases.read_lease(lake, "t") is None
