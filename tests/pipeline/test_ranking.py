"""The ranking stop rule (pipeline.ranking) alone: its operating characteristics on synthetic
head-to-head sums drawn from a Bradley-Terry model, and the [stop] test = "ranking" spec."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from benchmarks.ranking_oc import league
from flip7.stats import RatioSums, cluster_ratio
from pipeline import ranking
from pipeline.plan import make_plan
from pipeline.sequential import manifest_entry, stop_mismatch
from pipeline.spec import parse_spec
from tests.pipeline.test_ranking_run import LEAGUE

ALPHA = BETA = 0.05
MARGIN = 0.05
REPS = 300
#: Three standard errors of a rate near 0.05 estimated from REPS replications.
SLACK = 3 * math.sqrt(0.05 * 0.95 / REPS)
NAMES = ["p00", "p01", "p02", "p03"]


def _run(theta: list[float], rng: np.random.Generator, wave: int, waves: int) -> dict[str, Any]:
    return league(theta, rng, margin=MARGIN, wave=wave, waves=waves)


def test_a_true_tie_is_declared_equivalent_at_most_alpha_wrongly() -> None:
    """Four equal policies: the rule declares every adjacent pair equivalent, and separates
    one wrongly in at most alpha of 300 leagues (within 3 standard errors; the split over the
    three pairs makes the family-wise rate the nominal one); almost never the ceiling."""
    rng = np.random.default_rng(20261207)
    runs = [_run([0.0] * 4, rng, wave=200, waves=60) for _ in range(REPS)]
    wrong = sum(any(x.verdict == ranking.SEPARATED for x in r["looks"]) for r in runs)
    open_ = sum(any(x.verdict is None for x in r["looks"]) for r in runs)
    assert wrong / REPS <= ALPHA + SLACK
    assert open_ / REPS < 0.02


def test_gaps_at_the_margin_are_separated_at_most_beta_wrongly() -> None:
    """Adjacent policies apart by exactly the margin (each finishes ahead of the next in 55%
    of meetings): every adjacent pair is separated, in the true order, and one is wrongly
    declared equivalent in at most beta of 300 leagues (within 3 standard errors)."""
    rng = np.random.default_rng(20261208)
    step = math.log((0.5 + MARGIN) / (0.5 - MARGIN))
    theta = [3 * step, 2 * step, step, 0.0]
    runs = [_run(theta, rng, wave=200, waves=60) for _ in range(REPS)]
    wrong = sum(any(x.verdict == ranking.EQUIVALENT for x in r["looks"]) for r in runs)
    assert wrong / REPS <= BETA + SLACK
    decided = [r for r in runs if all(x.verdict == ranking.SEPARATED for x in r["looks"])]
    assert sum(r["order"] == NAMES for r in decided) / len(decided) > 0.9


def test_a_big_gap_separates_in_the_first_looks_and_a_tie_beside_it_is_equivalent() -> None:
    """p00 = p01 far above p02 (88% of meetings ahead): the rule separates the lower of the
    equal two from p02 and declares them equivalent, in every one of 50 leagues, on
    average within ten looks of 200 meetings a pair (the tie takes longest)."""
    rng = np.random.default_rng(3)
    waves = []
    for _ in range(50):
        r = _run([2.0, 2.0, 0.0], rng, wave=200, waves=60)
        waves.append(r["wave"])
        verdicts = {frozenset((x.above, x.below)): x.verdict for x in r["looks"]}
        tie = {frozenset(("p00", "p01")): ranking.EQUIVALENT}
        assert verdicts in (
            {**tie, frozenset(("p01", "p02")): ranking.SEPARATED},
            {**tie, frozenset(("p00", "p02")): ranking.SEPARATED},
        )
    assert np.mean(waves) < 10


def test_flipped_sums_and_the_pair_estimate_match_the_clustered_ratio() -> None:
    """B over A is A over B with y' = n - y in every game; the pair's estimate and half-width
    are flip7.stats.cluster_ratio's (the statistics contract's interval)."""
    rng = np.random.default_rng(4)
    n = rng.integers(1, 4, size=300).astype(float)  # decided meetings a game (bigger tables)
    y = rng.binomial(n.astype(int), 0.6).astype(float)
    ab = RatioSums.of(zip(y, n, strict=True))
    ba = ranking.flipped(ab)
    direct = RatioSums.of(zip(n - y, n, strict=True))
    assert all(math.isclose(u, v) for u, v in zip(_fields(ba), _fields(direct), strict=True))
    seen = ranking.pair_look("a", "b", ab, MARGIN, -3.0, 3.0)
    ref = cluster_ratio(*_fields(ab))
    assert math.isclose(seen.estimate, ref.value)
    assert math.isclose(seen.half_width, ref.half_width)


def _fields(s: RatioSums) -> list[float]:
    return [s.games, s.sum_y, s.sum_n, s.sum_yy, s.sum_nn, s.sum_yn]


def test_an_empty_pair_is_open_and_ranks_by_name() -> None:
    """No meetings yet: no evidence either way (LLR 0, open), ties broken by name."""
    lower, upper = ranking.bounds(ALPHA, BETA, 3)
    order, looks = ranking.look(["c", "a", "b"], ranking.Sums(), MARGIN, lower, upper)
    assert order == ["a", "b", "c"]
    assert [x.verdict for x in looks] == [None, None] and all(x.llr == 0 for x in looks)


def test_bonferroni_split() -> None:
    """K policies: each of the K - 1 adjacent pairs gets alpha / (K - 1) and beta / (K - 1);
    the separated side is two one-sided tests, so its bound uses half of that alpha."""
    assert ranking.pair_error_rates(0.05, 0.1, 11) == (0.005, 0.01)
    lower, upper = ranking.bounds(0.05, 0.1, 11)
    assert math.isclose(upper, math.log((1 - 0.01) / 0.0025))
    assert math.isclose(lower, math.log(0.01 / (1 - 0.0025)))


# -- the spec ----------------------------------------------------------------------------------


def test_a_ranking_spec_plans_wave_by_wave_with_its_ceiling() -> None:
    """The line-ups' games are the ceiling; shards run the k-th of every cell, then the next;
    each task returns its head-to-head sums; the manifest entry splits alpha over 2 pairs."""
    plan = make_plan(parse_spec(LEAGUE))
    assert [(t.cell, t.start) for t in plan.shards] == [
        (c, s) for s in range(0, 2000, 100) for c in range(4)
    ]
    assert all(t.ahead and not t.compare for t in plan.shards)
    stop = manifest_entry(plan)["stop"]
    assert stop["policies"] == ["bust:0.25", "ev", "sum:10"]
    assert stop["pair_alpha"] == 0.025 and stop["wave_games"] == 400
    assert stop["planned_games"] == 8000
    changed = make_plan(parse_spec(LEAGUE.replace("0.1", "0.04")))
    assert stop_mismatch({"stop": stop}, changed) == "stop.margin: run has 0.1, spec gives 0.04"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("margin = 0.1", "stop.margin: missing"),
        ("margin = 0.5", "stop.margin: a chance of finishing ahead beyond 1/2 lies in (0, 0.5)"),
        ("margin = 0.1\nh1 = 0.1", "stop.h1: a ranking test takes only alpha, beta, margin"),
        ("margin = 0.1\nalpha = 0.6", "stop.alpha: must be in (0, 0.5), got 0.6"),
    ],
)
def test_bad_ranking_stop_tables_name_the_field(change: str, message: str) -> None:
    """Each mistake in a ranking [stop] table names its field and what would be valid."""
    text = LEAGUE.replace("margin = 0.1", "" if change == "margin = 0.1" else change)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_spec(text)


def test_a_ranking_needs_every_pair_to_meet_and_no_common_shuffles() -> None:
    """Two policies that never share a table cannot be tested head to head; a `pair` label
    would tie games of line-ups together; a margin belongs to a ranking test only."""
    apart = LEAGUE.replace('[[lineups]]\nseats = ["bust:0.25", "sum:10"]\n', "").replace(
        'seats = ["ev", "bust:0.25", "sum:10"]', 'seats = ["ev", "ev", "bust:0.25"]'
    )
    with pytest.raises(ValueError, match="'bust:0.25' and 'sum:10' never share a table"):
        parse_spec(apart)
    paired = LEAGUE.replace(
        '[[lineups]]\nseats = ["ev", "bust:0.25"]\n',
        '[[lineups]]\nseats = ["ev", "bust:0.25"]\npair = "x"\n',
    ).replace('seats = ["ev", "sum:10"]\n', 'seats = ["ev", "sum:10"]\npair = "x"\n')
    with pytest.raises(ValueError, match=r"lineups\[0\].pair: a ranking test"):
        parse_spec(paired)
    sprt = 'name = "s"\n[[lineups]]\nmix = ["ev", "sum:10"]\nplayers = [2]\n[stop]\nmargin = 0.1\n'
    with pytest.raises(ValueError, match="stop.margin: only a ranking test"):
        parse_spec(sprt)


def test_the_stopping_league_plays_the_leagues_line_ups() -> None:
    """experiments/league-sprt.toml is league.toml's league (the same line-ups, seed and
    ceiling) with a ranking [stop]: its docs compare the games it took with the full league's."""
    from pipeline.spec import load_spec

    full, stopping = load_spec("experiments/league.toml"), load_spec("experiments/league-sprt.toml")
    assert stopping.lineups == full.lineups and stopping.seed == full.seed
    assert stopping.stop.test == "ranking" and full.stop.test == "fixed"
