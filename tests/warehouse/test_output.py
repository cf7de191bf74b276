"""`flip7 report`: the plain table (a snapshot) and the JSON a script reads (docs/output.md)."""

from __future__ import annotations

import json

import pytest

from flip7.cli import main
from tests.snapshot import check_snapshot, normalize
from tests.warehouse.lakes import Lake


def test_report_table_snapshot(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("COLUMNS", raising=False)  # not a terminal: every column
    assert main(["report", "t1", "--data", str(lake.root), "--no-file"]) == 0
    check_snapshot("report", normalize(capsys.readouterr().out, lake.root))


@pytest.mark.parametrize("columns", [100, 80])
def test_report_fits_the_terminal_and_wide_shows_everything(
    lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """`COLUMNS=100 flip7 report RUN` fits 100 columns (labels wrap, the least needed columns
    are left out and named); --wide and the results copy keep every column; the notes and the
    timing are on stderr (issue 32, items 7 and 12)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["report", "t1", "--data", str(lake.root), "--no-file"]) == 0
    out, err = capsys.readouterr()
    assert max(len(line) for line in out.splitlines()) <= columns, out
    assert "left out to fit" in out and "--wide shows them" in out
    assert "report computed in" in err and "computed" not in out
    assert main(["report", "t1", "--data", str(lake.root), "--no-file", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert max(len(line) for line in wide.splitlines()) > columns
    assert "left out" not in wide and "rounds  points/round" in wide


def test_report_json(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "t1", "--data", str(lake.root), "--format", "json", "--no-file"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "report" and doc["run"] == "t1"
    assert {"field_size", "rates", "card_counting", "league", "notes"} <= set(doc)
    assert sum(r["games"] for r in doc["field_size"] if r["policy"] == "ev") > 0
    league = doc["league"]
    assert [r["place"] for r in league] == list(range(1, len(league) + 1))
    first = league[0]
    assert first["win_index_lo"] <= first["win_index"] <= first["win_index_hi"]


def test_report_markdown(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["report", "t1", "--data", str(lake.root), "--format", "markdown", "--no-file"]) == 0
    )
    out = capsys.readouterr().out
    assert "**field size**" in out and "| line-up | players | policy |" in out


def test_report_gives_one_win_index_interval_per_figure(
    lake_copy: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of one cell where ev wins 39 games of 40: its win rate's interval clips at 100%,
    but its win index is not a rate, so the field-size table and the league (the same figure
    over the same games) print one interval, the unclipped clustered ratio of wins to expected
    wins recomputed here from the games file, reaching above 2 (an index of n)."""
    import pyarrow.dataset as ds

    from flip7.stats import RatioSums
    from tests.warehouse import lakes

    monkeypatch.setitem(lakes.RUNS, "dom", ("3.1", 1, 40, 40, [(0, ("ev", "bust:0.05"))]))
    lakes.write_run(lake_copy.root, "dom")
    argv = ["report", "dom", "--data", str(lake_copy.root), "--format", "json", "--no-file"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    (cell,) = [r for r in doc["field_size"] if r["policy"] == "ev"]
    (league,) = [r for r in doc["league"] if r["policy"] == "ev"]
    games = ds.dataset(lake_copy.root / "games" / "run=dom", format="parquet").to_table()
    ev = games.to_pandas().query("policy == 'ev'")
    want = RatioSums.of((float(w), 1 / 2) for w in ev["winner"]).estimate()
    assert cell["wins"] == 39 and cell["win_rate_hi"] == 1.0  # the rate clips
    for row in (cell, league):
        assert row["win_index"] == pytest.approx(want.value, rel=1e-12)
        assert row["win_index_lo"] == pytest.approx(want.lo, rel=1e-12)
        assert row["win_index_hi"] == pytest.approx(want.hi, rel=1e-12)
    assert want.hi > 2.0
