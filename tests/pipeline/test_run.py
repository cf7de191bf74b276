"""The Ray driver on a real local Ray: determinism, a killed worker, a killed driver + --resume."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.lake import Lake
from pipeline.plan import Plan
from pipeline.run import run_tournament
from pipeline.summary import run_summary
from pipeline.task import FAULT_ENV
from tests.pipeline.helpers import assert_same_rows, read_run, small_plan, write_spec

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def reference(ray_local: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Plan]:
    """The small tournament, uninterrupted, on 2 CPUs with 60-game shards."""
    root = tmp_path_factory.mktemp("reference")
    plan = small_plan(shard_size=60)
    report = run_tournament(plan, str(root), progress=False)
    assert report.status == "complete" and sorted(report.ran) == list(range(len(plan.shards)))
    return root, plan


def test_same_rows_on_1_cpu_and_another_shard_size(
    reference: tuple[Path, Plan], tmp_path: Path
) -> None:
    """1 CPU (one task at a time) with 60-game shards and 2 CPUs with 25-game shards write the
    same rows as the reference, whatever the row order and shard numbering."""
    ref_root, plan = reference
    one = tmp_path / "one-cpu"
    report = run_tournament(plan, str(one), num_cpus=1, progress=False)
    assert report.status == "complete"
    assert_same_rows(ref_root, one)
    other = small_plan(shard_size=25)
    assert len(other.shards) != len(plan.shards)
    run_tournament(other, str(tmp_path / "small-shards"), progress=False)
    assert_same_rows(ref_root, tmp_path / "small-shards")


def test_killed_worker_is_retried_with_exact_counts(
    reference: tuple[Path, Plan], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies after committing shard 2's events file (rounds and games not yet
    written) is retried by Ray; the run completes with exactly the reference's rows."""
    ref_root, plan = reference
    marker = tmp_path / "killed"
    monkeypatch.setenv(FAULT_ENV, f"kill:2:{marker}")
    root = tmp_path / "lake"
    report = run_tournament(plan, str(root), progress=False)
    assert marker.exists()  # the fault did fire
    assert report.status == "complete" and not report.failed
    ref = Lake.open(str(ref_root)).load_manifest("t")["shards"]
    got = Lake.open(str(root)).load_manifest("t")["shards"]
    assert {k: v["rows"] for k, v in got.items()} == {k: v["rows"] for k, v in ref.items()}
    events = read_run(root, "events")
    assert events.num_rows == sum(v["rows"]["events"] for v in ref.values())
    assert (
        len(set(zip(events["game"].to_pylist(), events["seq"].to_pylist(), strict=True)))
        == events.num_rows
    )
    assert not [p for p in root.rglob("*") if ".tmp-" in p.name]
    assert_same_rows(ref_root, root)


def test_killed_driver_then_resume(reference: tuple[Path, Plan], tmp_path: Path) -> None:
    """`flip7 tournament run` and its Ray killed (SIGKILL) after a few shards, then --resume: only the missing
    shards run, finished shards are not rewritten, and the tables and the summary (added up
    from the manifest's per-shard statistics) equal the reference."""
    ref_root, plan = reference
    spec = write_spec(tmp_path / "t.toml", shard_size=60)
    root = tmp_path / "lake"
    env = {**os.environ, FAULT_ENV: "delay:0.5"}  # slow shards, so the kill lands midway
    flip7 = "import sys; from flip7.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", flip7, "tournament", "run", str(spec)]
    cmd += ["--out", str(root), "--num-cpus", "1", "--no-progress", "--no-file"]
    # Its own session, so that the kill takes the driver and the local Ray it started together
    # (a crashed machine), and nothing of it outlives the test.
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    lake = Lake.open(str(root))
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            manifest = lake.read_manifest("t") if lake.exists(lake.manifest_path("t")) else None
            if manifest and len(manifest["shards"]) >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    before = lake.load_manifest("t")
    done = sorted(int(k) for k in before["shards"])
    assert before["status"] == "running" and 2 <= len(done) < len(plan.shards)
    stamps = {
        s: os.stat(lake.shard_path("games", "t", plan.shards[s].n_players, s)).st_mtime_ns
        for s in done
    }
    report = run_tournament(plan, str(root), resume=True, progress=False)
    assert report.skipped == done
    assert sorted(report.ran) == sorted(set(range(len(plan.shards))) - set(done))
    assert report.status == "complete"
    for s, stamp in stamps.items():
        path = lake.shard_path("games", "t", plan.shards[s].n_players, s)
        assert os.stat(path).st_mtime_ns == stamp
    assert_same_rows(ref_root, root)
    assert not [p for p in root.rglob("*") if ".tmp-" in p.name]
    ref = Lake.open(str(ref_root))
    assert run_summary(lake, lake.load_manifest("t")) == run_summary(ref, ref.load_manifest("t"))


def test_failed_shard_fails_the_run_then_resume_finishes_it(
    reference: tuple[Path, Plan], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard that raises (a bug: not retried) leaves the run `failed`, naming the shard and the
    error, while the other shards finish; --resume then runs that shard alone."""
    ref_root, plan = reference
    monkeypatch.setenv(FAULT_ENV, "fail:1")
    report = run_tournament(plan, str(tmp_path), progress=False)
    assert report.status == "failed" and list(report.failed) == [1]
    assert "injected failure in shard 1" in report.failed[1]
    manifest = Lake.open(str(tmp_path)).load_manifest("t")
    assert manifest["status"] == "failed" and "shard 1" in manifest["error"]
    assert "1" not in manifest["shards"] and len(manifest["shards"]) == len(plan.shards) - 1
    monkeypatch.delenv(FAULT_ENV)
    report = run_tournament(plan, str(tmp_path), resume=True, progress=False)
    assert report.ran == [1] and report.status == "complete"
    assert_same_rows(ref_root, tmp_path)


def test_existing_run_is_not_clobbered(reference: tuple[Path, Plan]) -> None:
    """Running a finished run again does nothing; a different plan under its name is refused."""
    ref_root, plan = reference
    report = run_tournament(plan, str(ref_root), progress=False)
    assert report.ran == [] and report.status == "complete"
    with pytest.raises(ValueError, match="different plan"):
        run_tournament(small_plan(shard_size=25), str(ref_root), progress=False)
