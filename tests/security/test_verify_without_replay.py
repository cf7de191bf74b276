"""A verify that re-simulates no game binds labels and seeds to the manifest only: a run
relabelled consistently (manifest, games and rounds) once passed `verify --replay-sample 0` as
"all checks passed", and sql, report and the dashboard dropped their warning. Now it says what
it did not do, records which checks ran, and the readers say "verified without replay".
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import pipeline.replayer
from flip7.cli import main
from pipeline.rollups import rollup_table
from tests.security.test_verify_binds import Rows, rewrite, shard_file
from tests.warehouse.lakes import read_table, write_table


@pytest.fixture
def lake(clean_t1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of run t1; verify finds pipeline.replayer; a mart cache of its own."""
    root = tmp_path / "data"
    shutil.copytree(clean_t1, root)
    monkeypatch.setattr(
        sys.modules["warehouse.verify"], "find_replayer", lambda: pipeline.replayer, raising=False
    )
    monkeypatch.setenv("FLIP7_CACHE", str(tmp_path / "cache"))
    return root


def relabel(root: Path) -> None:
    """Reverse cell 2's line-up in the manifest, relabel its games and rounds to match and
    write their rollups again."""
    path = root / "runs" / "t1" / "manifest.json"
    manifest = json.loads(path.read_text())
    old = list(manifest["cells"][2]["lineup"])
    manifest["cells"][2]["lineup"] = old[::-1]
    path.write_text(json.dumps(manifest))
    swap = dict(zip(old, old[::-1], strict=True))

    def change(rows: Rows) -> None:
        for r in rows:
            r["policy"] = swap[r["policy"]]
            if "lineup" in r:
                r["lineup"] = ",".join(swap[p] for p in r["lineup"].split(","))

    for shard in (int(k) for k, v in manifest["shards"].items() if v["cell"] == 2):
        for table in ("games", "rounds"):
            rewrite(shard_file(root, table, 3, shard), change)
        games, rounds = (read_table(shard_file(root, t, 3, shard)) for t in ("games", "rounds"))
        path = shard_file(root, "rollups", 3, shard)
        write_table(rollup_table(games, rounds, 3), path)


def readers(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, list[str]]:
    """What sql and report (their stderr) and the dashboard say about the lake."""
    from dashboard import data

    assert main(["sql", "SELECT count(*) AS n FROM stg_games", "--data", str(root)]) == 0
    sql_err = capsys.readouterr().err
    assert main(["report", "t1", "--data", str(root), "--no-file"]) == 0
    head = capsys.readouterr().err
    data.reload()
    try:
        shown = data.notes(str(root))
    finally:
        data.reload()
    return sql_err, head, shown


def test_a_verify_that_replays_nothing_says_so_and_readers_say_without_replay(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    relabel(lake)
    code = main(["warehouse", "verify", "--data", str(lake), "--replay-sample", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "all checks passed" not in out, out
    assert "WITHOUT REPLAY for run t1" in out and "no game re-simulated" in out, out
    assert any(line.strip().startswith("skip  replay_matches_log") for line in out.splitlines()), (
        out
    )
    rec = json.loads((lake / "runs" / "t1" / "verified.json").read_text())
    assert rec["replayed"] == 0 and rec["games"] == 160
    assert "replay_matches_log" not in rec["checks"]
    assert "seeds_match_manifest" in rec["checks"]
    assert "assert_lineups_match_manifest" in rec["checks"]
    sql_err, head, shown = readers(lake, capsys)
    assert "run t1: verified without replay" in sql_err, sql_err
    assert "flip7 report: note: run t1: verified without replay" in head, head
    assert any("verified without replay" in n for n in shown), shown
    # With a replayed sample the relabelling is caught and the record removed.
    assert main(["warehouse", "verify", "--data", str(lake), "--replay-all"]) == 1
    assert "FAIL  replay_matches_log" in capsys.readouterr().out
    assert not (lake / "runs" / "t1" / "verified.json").exists()


def test_a_replayed_verify_is_verified_without_a_note(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same readers say nothing about a run whose verify replayed a sample."""
    assert main(["warehouse", "verify", "--data", str(lake)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("all checks passed"), out
    rec = json.loads((lake / "runs" / "t1" / "verified.json").read_text())
    assert rec["replayed"] > 0 and "replay_matches_log" in rec["checks"]
    sql_err, head, shown = readers(lake, capsys)
    assert "t1" not in sql_err and "note" not in head and shown == []
