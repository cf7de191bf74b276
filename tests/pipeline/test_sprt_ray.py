"""Sequential tests on a real local Ray: the same decision on 1 CPU and on 2 CPUs; a league
that stops by its ranking stops before its full size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.lake import Lake
from pipeline.run import run_tournament
from pipeline.task import FAULT_ENV
from tests.pipeline.helpers import local_ray
from tests.pipeline.test_ranking_run import league_plan
from tests.pipeline.test_sprt_run import run_emulated, sprt_plan

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    with local_ray():
        yield


def test_same_decision_on_1_and_2_cpus(ray_local: None, tmp_path: Path) -> None:
    """One task at a time and up to four in flight on 2 CPUs: the looks, the decision and the
    games it took equal the Ray-free run's in plan order; the 2-CPU run may keep more shards."""
    plan = sprt_plan()
    ref = run_emulated(plan, str(tmp_path / "inline"))["stop"]
    assert ref["decision"]["result"] == "H1"
    for cpus in (1, None):
        root = tmp_path / f"cpus-{cpus}"
        report = run_tournament(plan, str(root), num_cpus=cpus, progress=False)
        assert report.status == "complete"
        manifest = Lake.open(str(root)).load_manifest("s")
        assert manifest["stop"] == ref
        assert len(report.ran) >= len(ref["waves"])
        if cpus == 1:
            assert len(report.ran) == len(ref["waves"])  # nothing runs past the decision


def test_a_failed_shard_stops_the_test_and_resume_finishes_it(
    ray_local: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shard 1 fails: its wave can never complete, so no new shard starts and the run fails
    undecided after one look; --resume without the fault reaches the uninterrupted decision."""
    plan = sprt_plan()
    ref = run_emulated(plan, str(tmp_path / "inline"))["stop"]
    root = str(tmp_path / "lake")
    monkeypatch.setenv(FAULT_ENV, "fail:1")
    report = run_tournament(plan, root, num_cpus=1, progress=False)
    assert report.status == "failed" and list(report.failed) == [1]
    stop = Lake.open(root).load_manifest("s")["stop"]
    assert stop["decision"] is None and len(stop["waves"]) == 1
    assert len(report.ran) <= 2  # shard 0, and at most the one in flight beside shard 1
    monkeypatch.delenv(FAULT_ENV)
    report = run_tournament(plan, root, resume=True, num_cpus=1, progress=False)
    assert report.status == "complete"
    assert Lake.open(root).load_manifest("s")["stop"] == ref


def test_a_league_stops_early_on_ray(ray_local: None, tmp_path: Path) -> None:
    """Two CPUs, shards finishing in any order: the league completes with every adjacent pair
    of its ranking decided, having run under half its planned shards, and its manifest's
    [stop] record equals the plan-order run's."""
    plan = league_plan()
    ref = run_emulated(plan, str(tmp_path / "inline"))["stop"]
    root = tmp_path / "lake"
    report = run_tournament(plan, str(root), num_cpus=2, progress=False)
    assert report.status == "complete"
    manifest = Lake.open(str(root)).load_manifest("lg")
    assert manifest["stop"] == ref
    assert manifest["stop"]["decision"]["result"] == "decided"
    assert len(ref["waves"]) * 4 <= len(report.ran) < len(plan.shards) // 2
    assert report.games < plan.games // 2
