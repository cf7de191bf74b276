"""What readers are told about a lake: runs not verified as they are now, shards their manifest
does not record, runs left out for an unreadable manifest (warehouse.record, warehouse.bind)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import pipeline.replayer
from flip7.cli import main
from warehouse import connect
from warehouse.bind import sample
from warehouse.db import problems

from .lakes import Lake


@pytest.fixture
def lake_copy(lake_copy: Lake, monkeypatch: pytest.MonkeyPatch) -> Lake:
    """The private lake copy, with the CLI's verify finding pipeline.replayer."""
    monkeypatch.setattr(
        sys.modules["warehouse.verify"], "find_replayer", lambda: pipeline.replayer, raising=False
    )
    return lake_copy


def sql(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["sql", "SELECT count(*) AS n FROM stg_games", "--data", str(root), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_sql_notes_an_unverified_lake_then_not_once_verified(
    lake_copy: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh lake: one note line on stderr after the result; after a passing verify, none;
    after a shard file is rewritten (same bytes, new mtime), the note says it changed."""
    code, out, err = sql(lake_copy.root, capsys)
    assert code == 0 and "n" in out
    (line,) = err.splitlines()
    assert line.startswith("flip7 sql: note: ") and "run t1: unverified" in line
    assert "run t2: unverified" in line and "flip7 warehouse verify t1" in line
    assert main(["warehouse", "verify", "--data", str(lake_copy.root)]) == 0
    capsys.readouterr()
    assert sql(lake_copy.root, capsys)[2] == ""
    shard = next((lake_copy.root / "rounds" / "run=t2").rglob("shard-*.parquet"))
    st = shard.stat()
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    (line,) = sql(lake_copy.root, capsys)[2].splitlines()
    assert "run t2: unverified: changed since verify passed it" in line and "t1" not in line


def test_report_header_says_unverified(lake_copy: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """The report of a run verify has not passed comes with a note saying so, on stderr (the
    report itself on stdout)."""
    assert main(["report", "t2", "--data", str(lake_copy.root)]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[0].startswith("flip7 report: note: run t2: unverified")
    assert "unverified" not in out and out.startswith("Run t2:")


def test_a_copied_shard_is_never_shown_without_a_warning(
    lake_copy: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard copied under a new number (its games counted twice) is named by sql's note and
    the report's header, and fails verify."""
    for table in ("events", "rounds", "rollups", "games"):
        src = next((lake_copy.root / table / "run=t2").rglob("shard-00000.parquet"))
        shutil.copy(src, src.with_name("shard-00099.parquet"))
    (line,) = sql(lake_copy.root, capsys)[2].splitlines()
    assert "run t2: 1 committed shard(s) not in its manifest (99)" in line
    assert main(["report", "t2", "--data", str(lake_copy.root)]) == 0
    header = capsys.readouterr().err.splitlines()
    assert any("not in its manifest (99)" in h for h in header[:3])
    assert main(["warehouse", "verify", "t2", "--data", str(lake_copy.root)]) == 1
    out = capsys.readouterr().out
    assert "shard=99" in out and "not in the manifest of a complete run" in out


def test_a_bad_manifest_leaves_out_its_run_only(
    lake_copy: Lake, capsys: pytest.CaptureFixture[str]
) -> None:
    """t2's manifest is not JSON: sql still answers for t1 with a note naming t2's problem, the
    runs_with_problems relation has its row, and verify fails naming it but checks t1."""
    (lake_copy.root / "runs" / "t2" / "manifest.json").write_text("{not json")
    code = main(["sql", "SELECT DISTINCT run FROM stg_games", "--data", str(lake_copy.root)])
    out, err = capsys.readouterr()
    assert code == 0 and "t1" in out and "t2" not in out
    assert "run t2: left out: manifest" in err and "not readable JSON" in err
    con = connect(lake_copy.root)
    rows = con.execute("SELECT run, problem FROM runs_with_problems WHERE run = 't2'").fetchall()
    assert any("left out" in p for _, p in rows)
    assert any(p.startswith("run t2: left out") for p in problems(con))
    assert main(["warehouse", "verify", "--data", str(lake_copy.root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  manifests_readable" in out and "run=t2" in out
    assert "ok    assert_games_complete" in out


def test_the_sample_takes_a_share_of_every_shard() -> None:
    """1% of shards of 250, 10 and 1 games: 3, 1 and 1 games (at least one per shard), each
    from its own shard, distinct; 0 takes none and 1 takes all."""
    keys = np.array(["a/0"] * 250 + ["a/1"] * 10 + ["b/0"])
    rng = np.random.default_rng(7)
    picked = sample(keys, 0.01, rng)
    assert [int((keys[picked] == k).sum()) for k in ("a/0", "a/1", "b/0")] == [3, 1, 1]
    assert len(set(picked.tolist())) == len(picked)
    assert len(sample(keys, 0.0, rng)) == 0 and len(sample(keys, 1.0, rng)) == len(keys)


def test_the_replayer_entry_point_is_declared() -> None:
    """pyproject.toml declares pipeline.replayer under flip7.replayers, and it has what
    warehouse.bind.Replayer asks for (the test venv may predate its installation)."""
    import importlib
    import tomllib

    meta = tomllib.loads(Path("pyproject.toml").read_text())
    target = meta["project"]["entry-points"]["flip7.replayers"]["pipeline"]
    module = importlib.import_module(target)
    assert all(
        callable(getattr(module, f, None)) for f in ("game_seeds", "unreplayable", "replay_games")
    )
