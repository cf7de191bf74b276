"""A league that stopped by its ranking, in the warehouse: the ranking_stops mart reads each
adjacent pair's verdict as the manifest records it, `flip7 report` says why the run stopped,
and the data tests pass a run complete at its decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.test_ranking_run import emulated_league
from warehouse import connect, queries, verify
from warehouse.report import report


@pytest.fixture(scope="module")
def league_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return emulated_league(tmp_path_factory, "league-lake")


def test_pairs_and_verdicts_as_the_manifest_records_them(
    league_lake: tuple[Path, dict[str, Any]],
) -> None:
    """One row per adjacent pair of the deciding look, in ranking order, with its rate,
    interval, LLR and verdict; no row for a run without a ranking test."""
    root, manifest = league_lake
    decision = manifest["stop"]["decision"]
    con = connect(str(root))
    pairs = queries.ranking_stops(con, "lg")
    assert pairs.place.tolist() == [1, 2]
    assert list(zip(pairs.above, pairs.below, strict=True)) == [
        (p["above"], p["below"]) for p in decision["pairs"]
    ]
    assert pairs.verdict.tolist() == [p["verdict"] for p in decision["pairs"]]
    first = decision["pairs"][0]
    assert pairs.estimate_hi.iloc[0] == pytest.approx(first["estimate"] + first["half_width"])
    assert (pairs.decision == "decided").all() and (pairs.games == decision["games"]).all()
    assert queries.ranking_stops(con, "nothing").empty


def test_report_says_why_the_league_stopped(league_lake: tuple[Path, dict[str, Any]]) -> None:
    """`flip7 report` heads the run with the ranking test's outcome and one line a pair."""
    root, manifest = league_lake
    n = manifest["stop"]["decision"]["games"]
    lines = report(connect(str(root)), "lg")
    text = "\n".join(lines[:8])
    assert f"every adjacent pair decided after {n:,} games (1 separated, 1 equivalent)" in text
    assert "  equivalent " in text and "  separated " in text


def test_verify_passes_a_league_complete_at_its_decision(
    league_lake: tuple[Path, dict[str, Any]],
) -> None:
    """Far fewer shards than planned, yet complete: every data test passes."""
    root, manifest = league_lake
    assert len(manifest["shards"]) < manifest["planned_shards"]
    assert verify(str(root)).ok
