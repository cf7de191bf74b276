"""The sequential test's statistic alone (pipeline.sprt): its operating characteristics by
simulation (numpy only), the fixed-size sizing, and the [stop] section of a spec."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flip7.stats import RatioSums, cluster_ratio
from pipeline import sprt
from pipeline.plan import make_plan
from pipeline.spec import parse_spec

ALPHA = BETA = 0.05
REPS = 2000
#: Three standard errors of a rate near 0.05 estimated from REPS replications.
SLACK = 3 * math.sqrt(0.05 * 0.95 / REPS)


def _win_waves(
    rng: np.random.Generator, theta: float, tie: float, wave: int, waves: int
) -> np.ndarray:
    """Per replication and wave, the counts of games with d = +1, d = -1 and d = 0 (a game no
    one of the two won): a paired win difference with mean theta."""
    p = [(1 - tie + theta) / 2, (1 - tie - theta) / 2, tie]
    return rng.multinomial(wave, p, size=(REPS, waves))


def _decisions(counts: np.ndarray, h0: float, h1: float) -> tuple[list[str | None], list[int]]:
    out, games = [], []
    for rep in counts:
        waves = (
            RatioSums(int(c.sum()), float(c[0] - c[1]), float(c.sum()), float(c[0] + c[1]),
                      float(c.sum()), float(c[0] - c[1]))
            for c in rep
        )  # fmt: skip
        looks, decision = sprt.sequence(waves, h0, h1, ALPHA, BETA)
        out.append(decision)
        games.append(looks[-1].games)
    return out, games


@pytest.mark.parametrize("tie", [0.0, 0.3])
def test_false_h1_rate_is_at_most_alpha(tie: float) -> None:
    """Under H0 (no difference) the test accepts H1 in at most alpha of 2000 simulated runs
    (within 3 standard errors), and almost never runs into the ceiling; `tie` = share of games
    neither policy wins (bigger tables)."""
    rng = np.random.default_rng([1, int(tie * 10)])
    counts = _win_waves(rng, 0.0, tie, wave=100, waves=400)
    decisions, _ = _decisions(counts, 0.0, 0.05)
    h1 = decisions.count(sprt.H1) / REPS
    assert h1 <= ALPHA + SLACK
    assert decisions.count(None) / REPS < 0.01


@pytest.mark.parametrize("tie", [0.0, 0.3])
def test_power_is_at_least_one_minus_beta(tie: float) -> None:
    """Under H1 (the difference is exactly h1) the test accepts H1 in at least 1 - beta of the
    runs (within 3 standard errors), on average in fewer games than the fixed-size test with
    the same error rates needs."""
    rng = np.random.default_rng([2, int(tie * 10)])
    counts = _win_waves(rng, 0.05, tie, wave=100, waves=400)
    decisions, games = _decisions(counts, 0.0, 0.05)
    assert decisions.count(sprt.H1) / REPS >= 1 - BETA - SLACK
    sd = math.sqrt(1 - tie - 0.05**2)
    assert np.mean(games) < sprt.fixed_games(0.05, sd, ALPHA, BETA)


def test_points_metric_with_skewed_differences_and_weights() -> None:
    """Points per round: skewed per-game differences y_g with a random weight n_g (rounds);
    under H0 the false-H1 rate stays within alpha, under H1 the power within 1 - beta."""
    rng = np.random.default_rng(3)
    h1, wave, waves = 0.5, 50, 200

    def rates(theta: float) -> float:
        hits = 0
        for _ in range(REPS // 2):
            n = rng.integers(3, 12, size=(waves, wave)).astype(float)
            noise = rng.exponential(6.0, size=(waves, wave)) - 6.0  # skewed, mean 0
            y = theta * n + noise * np.sqrt(n)
            sums = (
                RatioSums(wave, *(float(v) for v in (yy.sum(), nn.sum(), (yy * yy).sum(),
                                                     (nn * nn).sum(), (yy * nn).sum())))
                for yy, nn in zip(y, n, strict=True)
            )  # fmt: skip
            hits += sprt.sequence(sums, 0.0, h1, ALPHA, BETA)[1] == sprt.H1
        return hits / (REPS // 2)

    slack = 3 * math.sqrt(0.05 * 0.95 / (REPS // 2))
    assert rates(0.0) <= ALPHA + slack
    assert rates(h1) >= 1 - BETA - slack


def test_look_matches_the_cluster_interval_and_the_llr_formula() -> None:
    """The look's half-width is flip7.stats' clustered interval, and its LLR is
    (h1 - h0)(R - (h0 + h1)/2) / V for V = (half-width / 1.96)^2."""
    s = RatioSums.of([(1.0, 1.0), (-1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (0.0, 1.0)])
    seen = sprt.look(s, 0.0, 0.1)
    est = cluster_ratio(s.games, s.sum_y, s.sum_n, s.sum_yy, s.sum_nn, s.sum_yn)
    assert seen.estimate == pytest.approx(0.4) and seen.half_width == pytest.approx(est.half_width)
    var = (est.half_width / 1.959963984540054) ** 2
    assert seen.llr == pytest.approx(0.1 * (0.4 - 0.05) / var)
    assert sprt.look(RatioSums.of([(1.0, 1.0)]), 0.0, 0.1).llr == 0.0  # one game: no evidence
    assert sprt.bounds(0.05, 0.05) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))


def test_fixed_games_and_its_power_by_simulation() -> None:
    """fixed_games: ((z_.95 + z_.95) * 1 / 0.01)^2 = 108,222 games for one point of win rate;
    a simulated one-sided test of that size (d = +-1 per game) has power 1 - beta."""
    assert sprt.fixed_games(0.01, 1.0, 0.05, 0.05) == 108_222
    n = sprt.fixed_games(0.05, 1.0, 0.05, 0.05)
    rng = np.random.default_rng(4)
    for theta, want in ((0.05, 1 - BETA), (0.0, ALPHA)):
        d_sum = 2 * rng.binomial(n, (1 + theta) / 2, size=20_000) - n
        accept = d_sum / n >= sprt.z_quantile(0.95) / math.sqrt(n)
        assert accept.mean() == pytest.approx(want, abs=0.01)
    e0, e1 = sprt.expected_games(0.05, 1.0, 0.05, 0.05)
    assert e0 < n and e1 < n


# A sequential test of endgame against ev heads-up (tests/pipeline/test_sprt_run.py plays one).
SPRT_TEMPLATE = """
name = "s"
seed = {seed}
shard_size = {shard_size}
[[lineups]]
mix = ["endgame", "ev"]
players = [2]
[stop]
test = "sprt"
compare = ["endgame", "ev"]
h1 = {h1}
max_games = {max_games}
"""
SPRT_SPEC = SPRT_TEMPLATE.format(seed=1, shard_size=500, h1=0.02, max_games="10_000")


def test_sprt_spec_parses_and_plans_the_ceiling() -> None:
    """A valid [stop] section: the cell plays up to max_games; every shard carries the pair."""
    spec = parse_spec(SPRT_SPEC)
    assert spec.stop.sequential and spec.stop.compare == ("endgame", "ev")
    assert (spec.stop.metric, spec.stop.h0, spec.stop.alpha, spec.stop.beta) == (
        "win",
        0.0,
        0.05,
        0.05,
    )
    plan = make_plan(spec)
    assert plan.games == 10_000 and len(plan.shards) == 20
    assert all(t.compare == ("endgame", "ev") for t in plan.shards)
    assert parse_spec(SPRT_SPEC.replace('test = "sprt"', "").replace("max_games = 10_000", "")
                      .replace("[stop]", "games = 10\n[stop]")).stop.test == "fixed"  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('test = "sprt"', 'test = "bayes"'), "stop.test: 'bayes' is not a test"),
        (('compare = ["endgame", "ev"]', ""), "stop.compare: missing"),
        (('compare = ["endgame", "ev"]', 'compare = ["ev"]'), "stop.compare: expected two"),
        (('compare = ["endgame", "ev"]', 'compare = ["ev", "ev"]'), "stop.compare: the two"),
        (('compare = ["endgame", "ev"]', 'compare = ["ev", "nope"]'), "stop.compare[1]: "),
        (('compare = ["endgame", "ev"]', 'compare = ["ev", "sum:15"]'), "stop.compare[1]: 'sum"),
        (("h1 = 0.02", "h1 = 0.02\nalfa = 0.1"), "stop.alfa: unknown field (did you mean alpha"),
        (("h1 = 0.02", "h1 = 0.02\nalpha = 0.7"), "stop.alpha: must be in (0, 0.5)"),
        (("h1 = 0.02", "h1 = 0.0"), "stop.h1: must differ from h0"),
        (("h1 = 0.02", 'h1 = "0.02"'), "stop.h1: expected a number"),
        (("h1 = 0.02", "h1 = 1.5"), "stop.h1: a win rate difference lies in (-1, 1)"),
        (("h1 = 0.02", "h1 = 0.02\nmetric = 'elo'"), "stop.metric: 'elo' is not a metric"),
        (("max_games = 10_000", ""), "stop.max_games: missing"),
        (("max_games = 10_000", "max_games = 1"), "stop.max_games: must be in 2.."),
        (("seed = 1", "seed = 1\ngames = 100"), "games: a sequential test plays games until"),
        (("players = [2]", "players = [2]\ngames = 5"), "lineups[0].games: a sequential test"),
        (("players = [2]", "players = [2, 4]"), "stop.compare: a comparison runs in exactly one"),
        (('test = "sprt"', 'test = "fixed"'), "stop.max_games: only a sequential test"),
        (("[stop]", "[[stop]]"), "stop: must be a [stop] table"),
    ],
)
def test_bad_stop_section_is_refused_by_name(edit: tuple[str, str], message: str) -> None:
    """Every bad [stop] field is refused with its name and what would be valid."""
    text = SPRT_SPEC.replace(*edit)
    assert text != SPRT_SPEC
    with pytest.raises(ValueError) as exc:
        parse_spec(text)
    assert message in str(exc.value)


def _fixed_manifest(wins: int, losses: int, ties: int, h1: float) -> dict:
    """A fixed-size run's manifest with one shard's paired win sums: `wins` games with
    d = A's win rate - B's = +1, `losses` with -1, `ties` with 0 (n = 1 each)."""
    games = wins + losses + ties
    y = float(wins - losses)
    win = [games, y, float(games), float(wins + losses), float(games), y]
    stop = {
        "test": "fixed",
        "compare": ["a", "b"],
        "metric": "win",
        "h0": 0.0,
        "h1": h1,
        "alpha": 0.05,
        "beta": 0.05,
    }
    return {"stop": stop, "shards": {"0": {"compare": {"win": win, "points": win}}}}


@pytest.mark.parametrize(
    ("wins", "losses", "h1", "verdict"),
    [
        (60, 30, 0.03, "H1"),  # A ahead by 30 points, the test asks whether A is ahead
        (30, 60, 0.03, "H0"),  # A behind: not evidence that A is ahead, however large
        (48, 42, 0.03, "H0"),  # A ahead by 6 points, 0.6 standard errors: not enough
        (30, 60, -0.03, "H1"),  # A behind, the test asks whether A is behind
        (60, 30, -0.03, "H0"),
    ],
)
def test_the_fixed_size_test_decides_in_the_direction_of_h1(
    wins: int, losses: int, h1: float, verdict: str
) -> None:
    """The fixed-size test is one-sided toward h1: H1 only when the estimate lies at least
    z_{1-alpha} standard errors beyond h0 on h1's side; a difference as large the other way
    is H0 (a flipped direction would accept 'A beats B' when A loses)."""
    from pipeline.sequential import fixed_line

    manifest = _fixed_manifest(wins, losses, 10, h1)
    total = RatioSums(*manifest["shards"]["0"]["compare"]["win"])
    z = (total.sum_y / total.sum_n) / (total.estimate().half_width / 1.959963984540054)
    assert abs(z) > 1.645 or verdict == "H0"
    line = fixed_line(None, manifest)  # type: ignore[arg-type]  # sums recorded: no lake read
    assert line.startswith(
        f"{verdict} accepted after 100 games (fixed size, one-sided at alpha "
    ), line


def test_paired_sums_pair_each_games_seats_of_a_with_those_of_b() -> None:
    """At a bigger table a policy may fill several seats: a game's paired figure is A's wins
    (points) per A-seat minus B's per B-seat of that same game, each divided by its own seat
    count; games without both are left out. Rows come in any order and game numbers need not
    start at 0. (Heads-up every count is 1, so a mis-pairing there goes unseen.)"""
    import pyarrow as pa

    from pipeline.sequential import compare_sums

    rows = [  # (game, policy, winner, total); rounds per game below
        (43, "b", False, 100),
        (40, "a", True, 200),
        (41, "b", True, 205),
        (40, "b", False, 120),
        (42, "c", True, 201),
        (43, "c", False, 50),
        (40, "a", False, 150),
        (41, "a", False, 90),
        (42, "a", False, 20),
        (41, "b", False, 30),
        (43, "a", True, 210),
        (42, "c", False, 10),
    ]
    rounds = {40: 10, 41: 8, 42: 5, 43: 12}
    games = pa.table(
        {
            "game": pa.array([r[0] for r in rows], pa.int32()),
            "policy": pa.array([r[1] for r in rows]).dictionary_encode(),
            "winner": pa.array([r[2] for r in rows]),
            "total": pa.array([r[3] for r in rows], pa.int16()),
            "rounds": pa.array([rounds[r[0]] for r in rows], pa.int16()),
        }
    )
    sums = compare_sums(games, ("a", "b"))
    # win: game 40: 1/2 - 0/1, 41: 0/1 - 1/2, 43: 1 - 0 (42 has no b)
    assert sums["win"] == pytest.approx([3, 1.0, 3.0, 1.5, 3.0, 1.0])
    # points: 40: 350/2 - 120 = 55 over 10 rounds, 41: 90 - 235/2 = -27.5 over 8, 43: 110 over 12
    assert sums["points"] == pytest.approx([3, 137.5, 30.0, 15881.25, 308.0, 1650.0])
    assert compare_sums(games, ("b", "a"))["win"] == pytest.approx([3, -1.0, 3.0, 1.5, 3.0, -1.0])
