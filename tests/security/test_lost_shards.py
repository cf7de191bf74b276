"""Shard files deleted under a run: the manifest is not believed alone. The driver confirms each
shard's files when it records it and again before it marks the run complete; `tournament
status` and `report` compare the manifest with the files and name the missing shards; --resume
runs them again."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import TABLE_ORDER, Lake
from pipeline.run import check_start
from pipeline.task import FAULT_ENV
from tests.pipeline.helpers import run_inline, small_plan
from tests.s3.server import S3Server, serving
from tests.security.helpers import one_line, write_spec


def delete_shards(
    root: Path, run: str, shards: list[int], tables: tuple[str, ...] = TABLE_ORDER
) -> None:
    for shard in shards:
        for table in tables:
            (path,) = root.glob(f"{table}/run={run}/players=*/shard-{shard:05d}.parquet")
            path.unlink()


@pytest.mark.usefixtures("no_ray")
def test_status_report_and_resume_name_shards_deleted_after_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A complete run loses shard 2 (its games file) and shard 5 (its events file): status says
    MISSING and names both, the report's NOTE names both, a plain start refuses naming them,
    and --resume plans exactly those two."""
    root = tmp_path / "lake"
    run_inline(small_plan(shard_size=30), str(root))
    delete_shards(root, "t", [2], ("games",))
    delete_shards(root, "t", [5], ("events",))

    assert main(["tournament", "status", "t", "--data", str(root)]) == 0
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if "MISSING" in s)
    assert "2 recorded shard(s) have lost their files" in line, out
    assert "2 (games file gone), 5 (events file gone)" in line and "--resume" in line
    assert main(["tournament", "status", "t", "--data", str(root), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["missing_shards"] == {"2": "games file gone", "5": "events file gone"}

    assert main(["report", "t", "--data", str(root), "--no-file"]) == 0
    err = capsys.readouterr().err
    assert "2 shard(s) its manifest records have lost their files: 2 (games file gone), " in err

    lake, plan = Lake.open(str(root)), small_plan(shard_size=30)
    with pytest.raises(ValueError, match=r"2 of its shards have lost their files: 2 \(games"):
        check_start(lake, plan, resume=False, overwrite=False)
    spec = write_spec_like(tmp_path)
    assert main(["tournament", "run", str(spec), "--data", str(root), "--no-file"]) == 2
    one_line(capsys.readouterr().err, "lost their files", "2 (games file gone)", "--resume")
    assert sorted(t.shard for t in check_start(lake, plan, resume=True, overwrite=False).todo) == [
        2,
        5,
    ]
    manifest = run_inline(plan, str(root))  # what --resume does, without Ray
    assert manifest["status"] == "complete" and not lake.missing_shards(manifest)


def write_spec_like(tmp_path: Path) -> Path:
    from tests.pipeline.helpers import write_spec as small_spec

    return small_spec(tmp_path / "small.toml", shard_size=30)


@pytest.mark.usefixtures("no_ray")
def test_a_truncated_shard_file_is_named_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest records each file's size: a rounds file cut short is missing too."""
    root = tmp_path / "lake"
    manifest = run_inline(small_plan(shard_size=30), str(root))
    assert set(manifest["shards"]["1"]["bytes"]) == set(TABLE_ORDER)
    (path,) = root.glob("rounds/run=t/players=*/shard-00001.parquet")
    with open(path, "r+b") as f:
        f.truncate(100)
    assert main(["tournament", "status", "t", "--data", str(root)]) == 0
    assert "1 (rounds file has 100 bytes, the manifest recorded" in capsys.readouterr().out


@pytest.mark.ray
def test_shards_deleted_mid_run_fail_the_run_and_resume_reruns_them(tmp_path: Path) -> None:
    """A real driver on a local Ray: once shards are recorded, their files are deleted under
    it. The run must not end `complete`: it fails naming the lost shards (taken out of the
    manifest), and --resume runs them again to a complete run with every file present."""
    spec = write_spec(tmp_path / "s.toml", games=400, shard_size=20)
    root = tmp_path / "lake"
    env = {**os.environ, FAULT_ENV: "delay:0.5"}
    cmd = [sys.executable, "-m", "flip7", "tournament", "run", str(spec), "--data", str(root)]
    flags = ["--num-cpus", "1", "--no-progress", "--no-file", "--engine", "reference"]
    proc = subprocess.Popen([*cmd, *flags], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    manifest_path = root / "runs" / "t" / "manifest.json"
    deadline, gone = time.monotonic() + 180, []
    while time.monotonic() < deadline and proc.poll() is None and len(gone) < 3:
        with contextlib.suppress(OSError, ValueError):
            recorded = json.loads(manifest_path.read_text())["shards"]
            for key in recorded:
                if int(key) not in gone and len(gone) < 3:
                    delete_shards(root, "t", [int(key)], ("games", "rounds"))
                    gone.append(int(key))
        time.sleep(0.1)
    out, err = proc.communicate(timeout=300)
    assert len(gone) == 3, (out, err)
    manifest = Lake.open(str(root)).load_manifest("t")
    assert manifest["status"] == "failed", manifest.get("error")
    assert "3 shard(s) lost their files after they were written" in manifest["error"]
    assert all(str(k) not in manifest["shards"] for k in gone)
    assert proc.returncode != 0

    done = subprocess.run([*cmd, *flags, "--resume"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    lake = Lake.open(str(root))
    manifest = lake.load_manifest("t")
    assert manifest["status"] == "complete" and len(manifest["shards"]) == 20
    assert len(list(root.glob("games/run=t/players=*/shard-*.parquet"))) == 20


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with serving(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.mark.usefixtures("no_ray")
def test_shard_objects_deleted_from_s3_are_named(
    s3: S3Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same on an S3 lake (moto's server): objects deleted after the run are named by
    status and the report, and --resume plans them again."""
    for name, value in {**s3.env(), "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    uri = f"s3://{s3.bucket()}/lake"
    plan = small_plan(shard_size=30)
    manifest = run_inline(plan, uri)
    lake = Lake.open(uri)
    for shard in (1, 6):
        lake.fs.delete_file(lake.recorded_files(manifest, str(shard))["games"])
    assert main(["tournament", "status", "t", "--data", uri]) == 0
    assert "1 (games file gone), 6 (games file gone)" in capsys.readouterr().out
    assert main(["report", "t", "--data", uri, "--no-file"]) == 0
    assert "2 shard(s) its manifest records have lost their files" in capsys.readouterr().err
    todo = check_start(lake, plan, resume=True, overwrite=False).todo
    assert sorted(t.shard for t in todo) == [1, 6]
