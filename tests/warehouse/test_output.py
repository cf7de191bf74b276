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
    assert main(["report", "t1", "--data", str(lake.root), "--no-file"]) == 0
    check_snapshot("report", normalize(capsys.readouterr().out, lake.root))


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
