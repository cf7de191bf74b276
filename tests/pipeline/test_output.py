"""`flip7 tournament status` and `list`: the plain table (a snapshot) and the JSON a script
reads (docs/output.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flip7.cli import main
from pipeline.lake import Lake
from pipeline.summary import run_summary
from tests.pipeline.helpers import run_inline, small_plan
from tests.snapshot import check_snapshot, normalize


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lake")
    run_inline(small_plan(), str(path))
    return path


def test_status_table_snapshot(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["tournament", "status", "t", "--data", str(root)]) == 0
    check_snapshot("tournament-status", normalize(capsys.readouterr().out, root))


def test_status_json(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "status", "t", "--data", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "tournament status" and doc["run"] == "t"
    assert doc["status"] == "complete" and doc["games"] == {"done": 480, "planned": 480}
    assert [c["cell"] for c in doc["cells"]] == [0, 1, 2]
    rows = run_summary(Lake.open(str(root)), Lake.open(str(root)).load_manifest("t"))
    first = doc["summary"][0]
    assert set(first) >= {"cell", "lineup", "players", "policy", "games", "seats", "win_rate"}
    assert first["win_rate"]["value"] == pytest.approx(rows[0].win.value)
    assert first["points_per_round"]["lo"] == pytest.approx(rows[0].ppr.lo)


def test_list_json_and_csv(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "list", "--data", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (run,) = doc["runs"]
    assert run["run"] == "t" and run["status"] == "complete"
    assert (run["games"], run["planned_games"], run["shards"]) == (480, 480, 8)
    assert main(["tournament", "list", "--data", str(root), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run,status,shards,planned_shards,games,planned_games,created"
    assert lines[1].startswith("t,complete,8,8,480,480,")


def test_status_of_a_run_with_several_rulesets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose line-ups play under two rulesets: status names both, its cells table has a
    ruleset column, the JSON gives `rulesets` and each cell's ruleset, and the summary heads
    each cell with its own ruleset."""
    from pipeline.plan import make_plan
    from pipeline.spec import parse_spec

    spec = parse_spec(
        'name = "t"\nseed = 3\ngames = 6\nrulesets = ["3.1", "immediate(target=150)"]\n'
        '[[lineups]]\nseats = ["ev", "sum:20"]\n'
    )
    run_inline(make_plan(spec), str(tmp_path))
    assert main(["tournament", "status", "t", "--data", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "rulesets 3.1, immediate(target=150), variant classic" in text
    assert "cell  players  ruleset" in text
    assert "ev,sum:20: 2 players, variant classic, ruleset immediate(target=150)" in text
    assert main(["tournament", "status", "t", "--data", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ruleset"] is None and doc["rulesets"] == ["3.1", "immediate(target=150)"]
    assert [c["ruleset"] for c in doc["cells"]] == ["3.1", "immediate(target=150)"]
    assert [r["ruleset"] for r in doc["summary"]] == ["3.1"] * 2 + ["immediate(target=150)"] * 2
