"""One run, two rulesets: a tiny tournament whose line-ups play under `3.1` and a legacy ruleset
with another target, end to end through the driver's bookkeeping (no Ray), the summary, verify,
the marts and the report: every cell keeps its own ruleset and nothing pools across them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flip7.stats import RatioSums
from pipeline.lake import Lake
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from pipeline.summary import run_summary
from tests.pipeline.helpers import read_run, run_inline
from warehouse import connect, queries, verify
from warehouse.report import report_result

SPEC = """
name = "rr"
seed = 17
games = 30
shard_size = 20
rulesets = ["3.1", "legacy(target=150)"]

[[lineups]]
name = "plain"
pair = "p"
seats = ["ev", "ev", "sum:20"]

[[lineups]]
name = "counting"
pair = "p"
seats = ["ev", "evc", "sum:20"]
"""
RULESETS = ["3.1", "legacy(target=150)"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rulesets") / "lake"
    run_inline(make_plan(parse_spec(SPEC)), str(path))
    return path


def test_games_and_summary_name_each_cells_ruleset(root: Path) -> None:
    """Each cell's games carry its ruleset; the summary's rows name it per cell."""
    games = read_run(root, "games", "rr")
    by_cell = {}
    for cell, ruleset in zip(games["cell"].to_pylist(), games["ruleset"].to_pylist(), strict=True):
        by_cell.setdefault(cell, set()).add(ruleset)
    assert by_cell == {0: {"3.1"}, 1: {"legacy(target=150)"}, 2: {"3.1"}, 3: {"legacy(target=150)"}}
    lake = Lake.open(str(root))
    rows = run_summary(lake, lake.load_manifest("rr"))
    assert {(r.lineup, r.ruleset) for r in rows} == {
        (label, r) for label in ("plain", "counting") for r in RULESETS
    }


def test_verify_replays_every_game_under_its_cells_ruleset(root: Path) -> None:
    """All data tests pass and every game replays, each under its own cell's ruleset (the
    manifest has no single run ruleset to fall back on)."""
    v = verify(root, replay=1.0)
    assert v.ok, [c for c in v.checks if c.failed]
    assert v.replayed == 120 and not v.notes


def test_a_manifest_naming_another_ruleset_for_a_cell_is_caught(root: Path, tmp_path: Path) -> None:
    """A cell whose manifest ruleset differs from its games' fails assert_cells_one_ruleset
    (and its games no longer replay)."""
    copy = tmp_path / "lake"
    shutil.copytree(root, copy)
    path = copy / "runs" / "rr" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["cells"][1]["ruleset"] = "immediate(target=150)"
    path.write_text(json.dumps(manifest))
    v = verify(copy, replay=1.0)
    bad = {c.name: c for c in v.checks if c.failed}
    assert "assert_cells_one_ruleset" in bad
    assert "replay_matches_log" in bad


def test_marts_keep_rulesets_apart(root: Path) -> None:
    """runs lists the rulesets (no single ruleset); the league ranks per ruleset; card counting
    pairs cells under one ruleset only; cell_results has a row per line-up and ruleset whose
    rounds per game agree with the games table and flip7.stats."""
    con = connect(str(root))
    run = queries.runs(con).iloc[0]
    assert run.ruleset is None and list(run.rulesets) == RULESETS
    league = queries.league(con, runs=["rr"])
    assert sorted(league.groupby("ruleset").place.max()) == [3, 3]
    cc = queries.card_counting(con, runs=["rr"])
    paired = cc[cc.method == "paired"]
    assert sorted(paired.ruleset) == RULESETS and (paired.pairs == 30).all()
    cells = queries.cell_results(con, runs=["rr"])
    assert sorted(zip(cells.lineup, cells.ruleset, strict=True)) == sorted(
        (label, r) for label in ("plain", "counting") for r in RULESETS
    )
    games = read_run(root, "games", "rr")
    for x in cells.itertuples():
        cell = {"plain": 0, "counting": 2}[x.lineup] + RULESETS.index(x.ruleset)
        rounds = [
            r
            for c, s, r in zip(
                games["cell"].to_pylist(),
                games["seat"].to_pylist(),
                games["rounds"].to_pylist(),
                strict=True,
            )
            if c == cell and s == 0
        ]
        est = RatioSums.of((r, 1) for r in rounds).estimate()
        assert x.games == 30
        assert x.rounds_per_game == pytest.approx(est.value)
        assert (x.rounds_per_game_lo, x.rounds_per_game_hi) == pytest.approx((est.lo, est.hi))
    # a lower target ends games sooner: the one rule effect a 30-game cell shows for sure
    short = cells[cells.ruleset == "legacy(target=150)"].rounds_per_game_hi.max()
    assert short < cells[cells.ruleset == "3.1"].rounds_per_game_lo.min()


def test_report_compares_the_rulesets(root: Path) -> None:
    """The report names both rulesets, shows the rule-choices table (a row per line-up and
    ruleset) and a ruleset column in its per-cell tables."""
    con = connect(str(root))
    result = report_result(con, "rr")
    lines = result.render("table")
    assert "rulesets 3.1, legacy(target=150)" in lines[0]
    assert any(line.startswith("Rule choices:") for line in lines)
    assert len(result.data["rule_choices"]) == 4
    assert {r["ruleset"] for r in result.data["field_size"]} == set(RULESETS)
    header = next(line for line in lines if line.startswith("line-up") and "policy" in line)
    assert "ruleset" in header


def test_compare_matches_cells_by_ruleset(root: Path, tmp_path: Path) -> None:
    """`flip7 compare` between two runs of the spec matches each cell to the one with the same
    line-up, field size and ruleset: one row per cell and policy, none half-empty."""
    from warehouse.compare import compare

    copy = tmp_path / "lake"
    shutil.copytree(root, copy)
    other = parse_spec(
        SPEC.replace('name = "rr"', 'name = "rr2"').replace("seed = 17", "seed = 18")
    )
    run_inline(make_plan(other), str(copy))
    df = compare(connect(str(copy)), "rr", "rr2")
    assert len(df) == 2 * 2 + 2 * 3  # plain: ev, sum:20; counting: ev, evc, sum:20; x2 rulesets
    assert sorted(set(df.ruleset)) == sorted(RULESETS)
    assert df.games_a.notna().all() and df.games_b.notna().all()
