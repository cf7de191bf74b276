"""A league that stops by its ranking, on a real local Ray: it stops before its full size,
with the looks and the decision of the Ray-free run in plan order."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.lake import Lake
from pipeline.run import run_tournament
from tests.pipeline.test_ranking_run import league_plan
from tests.pipeline.test_sprt_run import run_emulated

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR)
    try:
        yield
    finally:
        ray.shutdown()


def test_a_league_stops_early_on_ray(ray_local: None, tmp_path: Path) -> None:
    """Two CPUs, shards finishing in any order: the run completes with every adjacent pair
    decided, having run a fraction of its planned shards, and its manifest's [stop] record
    equals the plan-order run's."""
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
