"""Reading a run while its driver writes it: no false alarm. A shard's files are committed a
moment before its driver records it in the manifest, so a reader may list a shard the manifest
it reads next does not have yet (or read a manifest that records a shard its listing missed).
Neither is a copied, stray or lost shard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from pipeline.run import prepare, record_shard
from pipeline.task import run_shard
from tests.pipeline.helpers import small_plan

pytestmark = pytest.mark.usefixtures("no_ray")


def live_run(root: Path) -> tuple[Lake, dict, list]:
    """Run `t` half done: four shards recorded, the manifest `running`; the other tasks."""
    plan = small_plan(shard_size=30)
    lake = Lake.open(str(root))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    for task in todo[:4]:
        record_shard(manifest, task, run_shard(task, lake.uri))
    lake.write_manifest(manifest)
    return lake, manifest, todo[4:]


def test_a_shard_committed_but_not_yet_recorded_is_still_being_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report` during a live run (its driver holds the lease) when one more shard's files are
    committed and the manifest does not record it yet: before, the report warned of "copied or
    stray files whose games count twice"; now it says the run is still being written."""
    from pipeline.lease import take

    lake, manifest, todo = live_run(tmp_path)
    run_shard(todo[0], lake.uri)  # committed; its driver records it a moment later
    lease = take(lake, "t")  # the live driver's lease
    try:
        assert main(["report", "t", "--data", str(tmp_path), "--no-file"]) == 0
        notes = capsys.readouterr().err  # a report's notes go to stderr, its tables to stdout
        assert "copied or stray" not in notes, notes
        assert "still being written: 1 committed shard(s) not recorded in its manifest yet" in notes
        assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
        assert f"lease: pid {os.getpid()} on " in capsys.readouterr().out  # ...; live
    finally:
        lease.release()
    # No driver holds it any more: a shard nobody recorded is named as before.
    assert main(["report", "t", "--data", str(tmp_path), "--no-file"]) == 0
    assert "1 committed shard(s) not in its manifest" in capsys.readouterr().err


def test_a_shard_recorded_after_the_listing_is_not_lost(tmp_path: Path) -> None:
    """The other order: the reader lists the files, then the driver commits and records one
    more shard, then the reader reads the manifest. That shard is in the manifest and not in
    the listing; it is not reported lost (its files are there when looked up)."""
    from warehouse import record
    from warehouse.lake import snapshot

    lake, manifest, todo = live_run(tmp_path)
    snap = snapshot(str(tmp_path), ["t"])
    record_shard(manifest, todo[0], run_shard(todo[0], lake.uri))
    lake.write_manifest(manifest)
    assert record.missing_shards(snap, "t") == {}
    assert not any("lost their files" in line for _, line in record.notes(snap))
