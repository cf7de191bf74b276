"""A real two-node Ray cluster on this machine runs a tournament: both nodes work, same rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.run import run_tournament
from tests.pipeline.helpers import assert_same_rows, run_inline, small_plan, two_node_cluster

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    with two_node_cluster() as c:
        yield c


def test_two_node_cluster_matches_the_local_run(cluster: object, tmp_path: Path) -> None:
    """Joined by address (as `--address HOST:PORT` does), the run's tasks land on both nodes and
    its rows equal a local run of the same spec."""
    import ray

    plan = small_plan(shard_size=30)
    address = cluster.address  # type: ignore[attr-defined]
    report = run_tournament(plan, str(tmp_path / "cluster"), address=address, progress=False)
    assert not ray.is_initialized()  # the driver joined, then left the cluster running
    assert report.status == "complete" and len(report.ran) == len(plan.shards)
    assert len(set(report.nodes.values())) == 2
    run_inline(small_plan(shard_size=60), str(tmp_path / "local"))
    assert_same_rows(tmp_path / "local", tmp_path / "cluster")


def test_two_node_cluster_reaches_the_same_sequential_decision(
    cluster: object, tmp_path: Path
) -> None:
    """A sequential test (SPRT) run across both nodes looks at the same waves in plan order and
    takes the same decision after the same games as the Ray-free run, whichever node finishes
    first (the 1- and 2-CPU runs are held to it in test_sprt_ray.py)."""
    from pipeline.lake import Lake
    from tests.pipeline.test_sprt_run import run_emulated, sprt_plan

    plan = sprt_plan()
    ref = run_emulated(plan, str(tmp_path / "inline"))["stop"]
    address = cluster.address  # type: ignore[attr-defined]
    report = run_tournament(plan, str(tmp_path / "cluster"), address=address, progress=False)
    assert report.status == "complete"
    assert Lake.open(str(tmp_path / "cluster")).load_manifest("s")["stop"] == ref
    assert ref["decision"]["result"] == "H1"
