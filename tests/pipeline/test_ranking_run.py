"""A league that stops by its ranking, end to end without Ray: it stops before its ceiling once
every adjacent pair is decided, whatever the order in which shards finish; --resume reaches the
same decision; `tournament status` names the decided pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakecontract import stop_problem
from pipeline import ranking
from pipeline.lake import Lake
from pipeline.plan import Plan, make_plan
from pipeline.sequential import Stopper
from pipeline.spec import parse_spec
from tests.pipeline.test_sprt_run import run_emulated, stopped_status

# ev and bust:0.25 are about equal; sum:10 finishes behind both in about 9 meetings of 10. With
# a margin of 0.1 the rule separates sum:10 and declares the other two equivalent within a few
# 400-game waves, far below the ceiling of 8,000 games.
LEAGUE = """
name = "lg"
seed = 11
games = 2000
shard_size = 100
[[lineups]]
seats = ["ev", "bust:0.25"]
[[lineups]]
seats = ["ev", "sum:10"]
[[lineups]]
seats = ["bust:0.25", "sum:10"]
[[lineups]]
seats = ["ev", "bust:0.25", "sum:10"]
[stop]
test = "ranking"
margin = 0.1
"""


def league_plan(text: str = LEAGUE) -> Plan:
    return make_plan(parse_spec(text))


def emulated_league(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> tuple[Path, dict[str, Any]]:
    """The league run in plan order, one shard at a time, into a new directory: its root and
    its manifest."""
    root = tmp_path_factory.mktemp(name)
    return root, run_emulated(league_plan(), str(root))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The league in plan order, one shard at a time."""
    return emulated_league(tmp_path_factory, "league-ref")


def test_stops_before_the_ceiling_once_every_pair_is_decided(
    reference: tuple[Path, dict[str, Any]],
) -> None:
    """The run is complete after a few waves of 400 games: sum:10 is separated from the pair
    above it, ev and bust:0.25 are equivalent; every look is recorded, undecided until the last."""
    _, m = reference
    stop = m["stop"]
    decision = stop["decision"]
    assert m["status"] == "complete" and stop_problem(stop) is None
    assert decision["result"] == ranking.DECIDED
    assert decision["games"] < m["planned_games"] // 2
    assert len(m["shards"]) == 4 * len(stop["waves"])
    assert [w["games"] for w in stop["waves"]] == [400 * (k + 1) for k in range(len(stop["waves"]))]
    assert all(w["open"] > 0 for w in stop["waves"][:-1])
    assert decision["order"][-1] == "sum:10"
    verdicts = {frozenset((p["above"], p["below"])): p["verdict"] for p in decision["pairs"]}
    assert verdicts[frozenset(("ev", "bust:0.25"))] == ranking.EQUIVALENT
    assert ranking.SEPARATED in verdicts.values()


@pytest.mark.parametrize("seed", [1, 2])
def test_same_decision_whatever_the_completion_order(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path, seed: int
) -> None:
    """Five shards in flight finishing in a random order: shards past the decision are kept,
    but the looks and the decision are the reference's, bit for bit."""
    _, ref = reference
    m = run_emulated(league_plan(), str(tmp_path), seed=seed, window=5)
    assert m["stop"] == ref["stop"]
    assert len(m["shards"]) > len(ref["shards"])


def test_resume_and_missing_sums(reference: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A run killed after five shards, then resumed, reaches the same decision; shards recorded
    without head-to-head sums (an older worker) are read from their rollups files."""
    _, ref = reference
    plan = league_plan()
    first = run_emulated(plan, str(tmp_path), limit=5)
    assert first["stop"]["decision"] is None and len(first["stop"]["waves"]) == 1
    assert run_emulated(plan, str(tmp_path), seed=3, window=2)["stop"] == ref["stop"]
    lake = Lake.open(str(tmp_path))
    manifest = lake.load_manifest("lg")
    for entry in manifest["shards"].values():
        del entry["ahead"]
    Stopper(lake, plan, manifest)
    assert manifest["stop"] == ref["stop"]


def test_inconclusive_at_the_ceiling(tmp_path: Path) -> None:
    """With a margin far too fine for 200 games a cell, the run ends inconclusive at its
    ceiling and says which pairs are still open."""
    text = LEAGUE.replace("margin = 0.1", "margin = 0.002").replace("2000", "200")
    m = run_emulated(league_plan(text), str(tmp_path))
    decision = m["stop"]["decision"]
    assert decision["result"] == "inconclusive" and decision["games"] == 800
    assert decision["open"] >= 1 and m["status"] == "complete"


def test_status_names_the_decided_pairs(
    reference: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`tournament status` says the rule, why the run stopped and each adjacent pair's verdict."""
    text, n = stopped_status(reference, "lg", capsys)
    assert "ranking test of 3 policies" in text
    assert f"every adjacent pair decided after {n:,} games (1 separated, 1 equivalent)" in text
    assert "equivalent  " in text and "separated   " in text
    assert "over sum:10: ahead in" in text


def test_a_damaged_record_is_named(reference: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A manifest whose head-to-head rows or ranking looks were edited is refused on loading,
    naming the field, rather than failing inside the Stopper."""
    import json
    import shutil

    root, ref = reference
    shutil.copytree(root, tmp_path / "lake")
    path = tmp_path / "lake" / "runs" / "lg" / "manifest.json"
    edited = json.loads(path.read_text())
    edited["shards"]["0"]["ahead"] = [["ev", "sum:10", "many"]]
    path.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match=r"shards\.0\.ahead is not a list of \[policy, policy"):
        Lake.open(str(tmp_path / "lake")).load_manifest("lg")
    stop = json.loads(json.dumps(ref["stop"]))
    stop["waves"][0]["pairs"] = "none"
    assert stop_problem(stop) == (
        "stop.waves or stop.decision holds a look that is not games, open and pairs"
    )
