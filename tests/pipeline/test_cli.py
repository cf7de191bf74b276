"""`flip7 tournament status` and `list` over a lake written without Ray."""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from pipeline.run import prepare, record_shard
from pipeline.task import run_shard
from tests.pipeline.helpers import run_inline, small_plan


def test_status_and_list_of_a_complete_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Status shows the plan, the counts from the manifest and the summary; list shows the run."""
    plan = small_plan()
    manifest = run_inline(plan, str(tmp_path))
    events = sum(s["rows"]["events"] for s in manifest["shards"].values())
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    n = len(plan.shards)
    assert out.startswith("run t: complete")
    assert f"shards {n}/{n}, games 480/480" in out and f"events {events:,}" in out
    assert "ev,bust:0.25,sum:20" in out and "win rate" in out and "mix:" in out
    assert main(["tournament", "list", "--data", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[3]  # under the header and its rule
    assert line.split()[:4] == ["t", "complete", f"{n}/{n}", "480/480"]


def test_status_of_an_unfinished_run_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose driver stopped midway shows `running`, its progress and the resume command."""
    plan = small_plan()
    lake = Lake.open(str(tmp_path))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    record_shard(manifest, todo[0], run_shard(todo[0], lake.uri))
    lake.write_manifest(manifest)
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run t: running")
    assert f"shards 1/{len(plan.shards)}, games 60/480" in out
    assert f"tournament run {tmp_path}/runs/t/spec.toml --resume" in out
