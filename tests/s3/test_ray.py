"""Tournaments on a real Ray write to the bucket: `flip7 tournament run --data s3://...` on a
local Ray, and a two-node `ray.cluster_utils` cluster; the bucket's rows and figures are those
of the same run written locally."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.run import run_tournament
from tests.pipeline.helpers import small_plan, two_node_cluster, write_spec
from tests.s3.server import S3Server
from tests.s3.test_lake import rounded
from warehouse.db import connect
from warehouse.report import report
from warehouse.verify import verify

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]


def figures(root: str) -> tuple[list[str], list[tuple[object, ...]]]:
    con = connect(root)
    rates = rounded(con.execute("SELECT * FROM win_rates ORDER BY ALL").fetchall())
    return report(con, "t"), rates


def test_tournament_run_writes_to_the_bucket(
    lakes: tuple[str, str], bucket: str, tmp_path: Path
) -> None:
    """The CLI on a local Ray with --data s3://...: the run completes there, verify passes on
    it, and its report and win rates are the local lake's (the same spec and seed)."""
    uri = f"s3://{bucket}/lake"
    spec = write_spec(tmp_path / "spec.toml")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "flip7", "tournament", "run", str(spec), "--data", uri]
        + ["--num-cpus", "2", "--no-progress", "--no-file"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"writing to {uri}" in done.stdout and f"--data {uri}" in done.stdout
    assert verify(uri).ok
    assert figures(uri) == figures(lakes[1])


@pytest.fixture(scope="module")
def cluster(s3_server: S3Server) -> Iterator[object]:
    """Two Ray nodes started with the AWS environment of the test server."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in s3_server.env().items():
            mp.setenv(name, value)
        with two_node_cluster() as c:
            yield c


def test_two_node_cluster_writes_to_the_bucket(
    cluster: object, lakes: tuple[str, str], bucket: str
) -> None:
    """Joined by address, both nodes write shards of one run to the bucket (smaller shards than
    the local run's, so that both get some); the win rates read from it are the local run's."""
    uri = f"s3://{bucket}/lake"
    plan = small_plan(shard_size=30)
    address = cluster.address  # type: ignore[attr-defined]
    result = run_tournament(plan, uri, address=address, progress=False)
    assert result.status == "complete" and len(set(result.nodes.values())) == 2
    assert figures(uri)[1] == figures(lakes[1])[1]  # (the report counts shards: 16, not 8)
