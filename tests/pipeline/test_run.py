"""The driver: resume from a partial manifest without Ray; on a real local Ray (marked `ray`),
determinism, a killed worker, a killed driver + --resume, and `flip7 tournament run` in-process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flip7.cli import main
from flip7.simulate import INTERVAL_NOTE
from pipeline.lake import Lake
from pipeline.plan import Plan
from pipeline.run import finish, prepare, record_shard, run_tournament
from pipeline.summary import run_summary
from pipeline.task import FAULT_ENV, run_shard
from tests.pipeline.helpers import (
    assert_same_rows,
    local_ray,
    read_run,
    run_inline,
    small_plan,
    write_spec,
)


def test_resume_of_a_partial_manifest_runs_only_the_missing_shards_without_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver died after writing shards 0-2 but recording only 0 and 1 (its last manifest
    write), leaving a half-written temporary: prepare(resume=True) keeps 0 and 1 and returns
    the rest in plan order, 2 included; running them completes the run with exactly an
    uninterrupted run's rows, shards 0 and 1 untouched. Ray is never imported."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    plan = small_plan(shard_size=60)
    lake = Lake.open(str(tmp_path / "lake"))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    assert [t.shard for t in todo] == list(range(len(plan.shards))) and len(todo) > 3
    for task in todo[:3]:
        result = run_shard(task, lake.uri)
        if task.shard < 2:
            record_shard(manifest, task, result)
    lake.write_manifest(manifest)
    games = [lake.shard_path("games", "t", t.n_players, t.shard) for t in plan.shards]
    temporary = Path(games[3] + ".tmp-dead")
    temporary.parent.mkdir(parents=True, exist_ok=True)
    temporary.write_bytes(b"PAR1 cut short")
    stamps = [os.stat(games[s]).st_mtime_ns for s in (0, 1)]

    with pytest.raises(ValueError, match="pass --resume to finish it"):
        prepare(lake, plan, resume=False, overwrite=False)
    manifest, todo = prepare(lake, plan, resume=True, overwrite=False)
    assert sorted(manifest["shards"]) == ["0", "1"] and manifest["status"] == "running"
    assert [t.shard for t in todo] == list(range(2, len(plan.shards)))
    for task in todo:
        record_shard(manifest, task, run_shard(task, lake.uri))
    finish(lake, manifest, {})

    assert lake.load_manifest("t")["status"] == "complete"
    assert [os.stat(games[s]).st_mtime_ns for s in (0, 1)] == stamps
    assert not temporary.exists()
    run_inline(plan, str(tmp_path / "uninterrupted"))
    assert_same_rows(tmp_path / "uninterrupted", tmp_path / "lake")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    with local_ray():
        yield


@pytest.fixture(scope="module")
def reference(ray_local: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Plan]:
    """The small tournament, uninterrupted, on 2 CPUs with 60-game shards."""
    root = tmp_path_factory.mktemp("reference")
    plan = small_plan(shard_size=60)
    report = run_tournament(plan, str(root), progress=False)
    assert report.status == "complete" and sorted(report.ran) == list(range(len(plan.shards)))
    return root, plan


@pytest.mark.ray
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


@pytest.mark.ray
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
    assert len(set(events["game"].to_pylist())) == events.num_rows  # a row per game, once
    assert not [p for p in root.rglob("*") if ".tmp-" in p.name]
    assert_same_rows(ref_root, root)


@pytest.mark.ray
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
    cmd += ["--data", str(root), "--num-cpus", "1", "--no-progress", "--no-file"]
    # Its own session, so that the kill takes the driver and the local Ray it started together
    # (a crashed machine), and nothing of it outlives the test.
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    lake = Lake.open(str(root))
    try:
        while proc.poll() is None:  # bounded by the per-test timeout
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


@pytest.mark.ray
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


@pytest.mark.ray
def test_existing_run_is_not_clobbered(reference: tuple[Path, Plan]) -> None:
    """Running a finished run again does nothing; a different plan under its name is refused."""
    ref_root, plan = reference
    report = run_tournament(plan, str(ref_root), progress=False)
    assert report.ran == [] and report.status == "complete"
    with pytest.raises(ValueError, match="different plan"):
        run_tournament(small_plan(shard_size=25), str(ref_root), progress=False)


@pytest.mark.ray
def test_tournament_run_command_exit_codes_and_summary(
    ray_local: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`flip7 tournament run` in-process: a failing shard exits 1 with the resume command;
    --resume then runs that shard alone, exits 0 and prints the summary table and next steps."""
    plan = small_plan(shard_size=60)
    spec = write_spec(tmp_path / "t.toml", shard_size=60)
    root = tmp_path / "lake"
    argv = ["tournament", "run", str(spec), "--data", str(root), "--no-progress", "--no-file"]
    monkeypatch.setenv(FAULT_ENV, "fail:1")
    assert main(argv) == 1
    out = capsys.readouterr().out
    n = len(plan.shards)
    assert f"tournament t: {len(plan.cells)} cells, {n} shards, 480 games at 2, 3 players" in out
    assert f"ran {n - 1} shards (0 already done)" in out
    assert "FAILED: 1 shard(s); shard 1: " in out
    assert f"flip7 tournament run {spec} --resume --data {root}" in out
    monkeypatch.delenv(FAULT_ENV)
    assert main([*argv, "--resume"]) == 0
    out = capsys.readouterr().out
    assert f"ran 1 shards ({n - 1} already done): 60 games" in out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("policy"))
    assert lines[head].split()[:3] == ["policy", "games", "seats"]
    assert set(lines[head + 1].strip()) == {"─"}  # the header's rule
    assert lines[head + 2].endswith("players, variant classic, ruleset 3.1")
    assert f"({INTERVAL_NOTE}; fair = 1 / players)" in out
    assert "Next:" in lines and f"  flip7 report t --data {root}" in "\n".join(lines)
    assert Lake.open(str(root)).load_manifest("t")["status"] == "complete"


def test_shard_result_says_when_and_where_it_ran(tmp_path: Path) -> None:
    """run_shard stamps its wall-clock start and end (epoch seconds) and its process id, which
    the driver's timeline (RunReport.timeline) is built from."""
    plan = small_plan(shard_size=60)
    before = time.time()
    result = run_shard(plan.shards[0], str(tmp_path))
    after = time.time()
    assert before <= result["started"] <= result["finished"] <= after
    assert result["pid"] == os.getpid()


@pytest.mark.ray
def test_report_timeline_has_every_shard_once_in_time_order(
    ray_local: None, tmp_path: Path
) -> None:
    """On 1 CPU the tasks run one after another: every shard appears once in the timeline,
    started after the first submit, received after it finished, each started after the one
    before it finished; the driver's CPU time is counted."""
    plan = small_plan(shard_size=60)
    report = run_tournament(plan, str(tmp_path), num_cpus=1, progress=False)
    assert report.status == "complete"
    assert sorted(row[0] for row in report.timeline) == list(range(len(plan.shards)))
    rows = sorted(report.timeline, key=lambda row: row[2])
    for _shard, pid, started, finished, received, cpu, _warm in rows:
        assert report.submitted <= started <= finished <= received
        assert pid > 0 and cpu > 0
    for prev, nxt in zip(rows, rows[1:], strict=False):
        assert nxt[2] >= prev[3]
    assert report.driver_cpu_seconds > 0
