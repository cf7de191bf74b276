"""flip7.stats: the clustered ratio interval every command, mart and page uses."""

from __future__ import annotations

import math
import random

import pytest

from flip7.stats import Z95, RatioSums, cluster_ratio


def _direct(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """The textbook form: residuals y - R n per cluster, variance G/(G-1) sum(e^2) / Sn^2."""
    g = len(pairs)
    sy = sum(y for y, _ in pairs)
    sn = sum(n for _, n in pairs)
    r = sy / sn
    ss = sum((y - r * n) ** 2 for y, n in pairs)
    return r, Z95 * math.sqrt(g / (g - 1) * ss / sn**2)


def test_sums_match_the_residual_form():
    """The additive sums give the same rate and half-width as summing residuals directly."""
    rng = random.Random(7)
    pairs = [(rng.randint(0, 2), rng.choice([1, 2])) for _ in range(500)]
    pairs = [(min(y, n), n) for y, n in pairs]
    est = RatioSums.of(pairs).estimate()
    r, h = _direct(pairs)
    assert math.isclose(est.value, r, rel_tol=1e-12)
    assert math.isclose(est.half_width, h, rel_tol=1e-9)
    assert math.isclose(est.hi - est.lo, 2 * h, rel_tol=1e-9)


def test_sums_combine_across_shards():
    """Sums of two shards added equal the sums of all their games (shards and waves combine)."""
    rng = random.Random(3)
    a = [(rng.randint(0, 60), rng.randint(1, 9)) for _ in range(40)]
    b = [(rng.randint(0, 60), rng.randint(1, 9)) for _ in range(70)]
    both = RatioSums.of(a) + RatioSums.of(b)
    assert both == RatioSums.of(a + b)


def test_clustering_widens_the_interval_when_a_policy_fills_every_seat_of_some_games():
    """A policy in both seats of a game wins exactly one of two: clustering sees y_g = 1 always
    (no variance from those games), where the seat-as-trial binomial would see two coin flips."""
    pairs = [(1, 2)] * 100
    est = RatioSums.of(pairs).estimate()
    assert est.value == 0.5 and est.half_width == 0.0


def test_fewer_than_two_games_has_no_interval_and_rates_clip():
    """One game: the figure but no interval (NaN, not zero); win rates clip to [0, 1]."""
    one = cluster_ratio(1, 1, 1, 1, 1, 1)
    assert one.value == 1.0 and math.isnan(one.lo) and math.isnan(one.half_width)
    assert math.isnan(cluster_ratio(0, 0, 0, 0, 0, 0).value)
    est = RatioSums.of([(1, 1), (1, 1), (0, 1)]).estimate(clip=(0.0, 1.0))
    assert est.hi == 1.0 and est.lo > 0.0 - 1e-12 and est.half_width > 0.5


def test_a_rate_of_exactly_0_or_1_gets_the_exact_bound_for_its_games_not_a_zero_width_interval():
    """No win in 300 seats is not certainty of never winning: [0, 1 - 0.025^(1/300)] (1.2%, the
    exact 95% bound for no event in 300 trials, each seat one), and every round busted, 120
    rounds in 40 games, is [0.025^(1/120), 1]. Unclipped figures (points) keep the formula."""
    none = RatioSums.of([(0, 1), (0, 2)] * 100).estimate(clip=(0.0, 1.0))
    assert none.value == 0.0 and none.lo == 0.0
    assert none.hi == pytest.approx(1 - 0.025 ** (1 / 300)) and 0.0122 < none.hi < 0.0123
    every = RatioSums.of([(3, 3)] * 40).estimate(clip=(0.0, 1.0))
    assert every.value == 1.0 and every.hi == 1.0
    assert every.lo == pytest.approx(0.025 ** (1 / 120))
    assert RatioSums.of([(0, 1)] * 40).estimate().half_width == 0.0  # a mean: no clip, no rule


def test_the_interval_is_95_percent_two_sided_against_a_closed_form():
    """Two games with figures 0 and 2 (n = 1 each): R = 1, var = 2/1 * (1 + 1) / 2^2 = 1, so the
    half-width is the 97.5% normal quantile itself, 1.959964 (a 90% z, 1.645, is not a 95%
    interval); and Z95 is that quantile to the last digit."""
    from statistics import NormalDist

    est = RatioSums.of([(0, 1), (2, 1)]).estimate()
    assert est.value == 1.0
    assert est.half_width == pytest.approx(1.959964, abs=1e-6)
    assert (est.lo, est.hi) == pytest.approx((-0.959964, 2.959964), abs=1e-6)
    assert Z95 == pytest.approx(NormalDist().inv_cdf(0.975), rel=1e-15)
    # 100 games, half won: var = 100/99 * 25 / 100^2; the half-width 0.098491...
    half = RatioSums.of([(0, 1), (1, 1)] * 50).estimate().half_width
    assert half == pytest.approx(1.959964 * math.sqrt(100 / 99 * 25) / 100, rel=1e-6)
