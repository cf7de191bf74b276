"""A run's manifest tells a live driver from a dead one; nothing is written before Ray answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from pipeline.run import prepare, record_shard
from pipeline.task import run_shard
from tests.pipeline.helpers import small_plan
from tests.security.helpers import one_line, tree, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")


def test_unreachable_address_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --address where no Ray listens used to leave a `running` manifest with 0 shards (so
    the retry was refused) and then wait minutes in ray.init; now it is one line at once and
    the lake is untouched, so the same command can simply be run again."""
    spec = write_spec(tmp_path / "s.toml")
    lake = tmp_path / "lake"
    argv = ["tournament", "run", str(spec), "--data", str(lake), "--address", "127.0.0.1:1"]
    assert main([*argv, "--no-file"]) == 1
    one_line(capsys.readouterr().err, "127.0.0.1:1", "no Ray answers")
    assert not lake.exists()


def half_run(root: Path, driver: dict[str, object] | None) -> Lake:
    """A run `t` with one shard done, its manifest `running`, naming `driver`."""
    plan = small_plan()
    lake = Lake.open(str(root))
    manifest, todo = prepare(lake, plan, resume=False, overwrite=False)
    record_shard(manifest, todo[0], run_shard(todo[0], lake.uri))
    if driver is None:
        manifest.pop("driver")
    else:
        manifest["driver"].update(driver)
    lake.write_manifest(manifest)
    return lake


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def test_a_dead_drivers_run_is_interrupted_and_resumable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest left `running` by a driver that died (killed, or stopped by a read-only
    lake) shows as `interrupted`; a new start says --resume, and --resume is accepted."""
    from pipeline.lake import driver_alive, run_status
    from pipeline.run import check_start

    lake = half_run(tmp_path, {"pid": dead_pid(), "pid_start": None})
    manifest = lake.load_manifest("t")
    assert manifest["status"] == "running" and driver_alive(manifest) is False
    assert run_status(manifest) == "interrupted"
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("run t: interrupted")
    assert main(["tournament", "list", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[3].split()[1] == "interrupted"  # under header, rule
    with pytest.raises(ValueError, match=r"\(interrupted, 1/8 shards\); pass --resume"):
        check_start(lake, small_plan(), resume=False, overwrite=False)
    start = check_start(lake, small_plan(), resume=True, overwrite=False)
    assert len(start.todo) == 7


def test_a_live_drivers_run_is_not_started_twice(tmp_path: Path) -> None:
    """While the recorded driver lives, neither --resume nor --overwrite starts a second one
    (two drivers would write the same shards and manifest); a reused pid does not count."""
    from pipeline.lake import _proc_start, run_status
    from pipeline.run import check_start

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lake = half_run(tmp_path, {"pid": sleeper.pid, "pid_start": _proc_start(sleeper.pid)})
        before = tree(tmp_path)
        for flags in ({"resume": True, "overwrite": False}, {"resume": False, "overwrite": True}):
            with pytest.raises(ValueError, match=f"being written right now by pid {sleeper.pid}"):
                check_start(lake, small_plan(), **flags)
        assert tree(tmp_path) == before
        manifest = json.loads(Path(lake.manifest_path("t")).read_text())
        manifest["driver"]["pid_start"] += 1  # the same pid, another process: the driver died
        Path(lake.manifest_path("t")).write_text(json.dumps(manifest))
        assert run_status(lake.load_manifest("t")) == "interrupted"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_another_hosts_driver_is_left_to_the_user(tmp_path: Path) -> None:
    """A driver on another host cannot be checked from here: the run stays `running`."""
    from pipeline.lake import run_status

    lake = half_run(tmp_path, {"host": "elsewhere.invalid", "pid": 1})
    assert run_status(lake.load_manifest("t")) == "running"
    lake = half_run(tmp_path / "old", None)  # a manifest from before drivers were recorded
    assert run_status(lake.load_manifest("t")) == "running"


def test_a_run_stopped_with_ctrl_c_reads_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After Ctrl-C the driver records `failed` with the reason `interrupted`; status and list
    say `interrupted`, as the README does, not "failed ... error: interrupted" (issue 32, item
    13). A run that failed for another reason still reads failed, with its error."""
    from pipeline.lake import run_status

    lake = half_run(tmp_path, {"pid": dead_pid(), "pid_start": None})
    manifest = lake.load_manifest("t")
    manifest.update(status="failed", error="interrupted")
    lake.write_manifest(manifest)
    assert run_status(lake.load_manifest("t")) == "interrupted"
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run t: interrupted") and "error:" not in out, out
    query = ["sql", "--data", str(tmp_path), "--format", "csv", "SELECT status FROM runs"]
    assert main(query) == 0  # the runs mart, so report and the dashboard, say the same
    assert capsys.readouterr().out.split() == ["status", "interrupted"]
    manifest.update(status="failed", error="shard 3: disk full")
    lake.write_manifest(manifest)
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run t: failed") and "error: shard 3: disk full" in out
    assert main(query) == 0
    assert capsys.readouterr().out.split() == ["status", "failed"]


def test_a_finished_spec_run_again_says_nothing_to_do_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-running a complete run prints its plan line and "nothing to do", not first "writing
    to ... on a local Ray" (it starts no Ray): issue 32, item 13."""
    from tests.pipeline.helpers import run_inline
    from tests.pipeline.helpers import write_spec as write_small_spec

    run_inline(small_plan(), str(tmp_path / "lake"))
    spec = write_small_spec(tmp_path / "t.toml")
    argv = ["tournament", "run", str(spec), "--data", str(tmp_path / "lake"), "--no-file"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "run t is already complete: nothing to do" in out
    assert "writing to" not in out and "local Ray" not in out
