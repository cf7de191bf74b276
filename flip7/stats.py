"""The one statistics contract: ratio estimates with 95% intervals clustered by game.

A figure such as a win rate (wins / seats played) or points per round (points / rounds played)
is a ratio of two sums over games. Seats of one game are not independent (exactly one of them
wins, and a policy may fill several seats), so the game is the cluster: each game g in which
the policy sits contributes a numerator y_g and a denominator n_g, and the 95% interval is the
delta-method (linearised) variance of sum(y) / sum(n) over clusters, with the usual G / (G - 1)
small-sample factor:

    R = Sy / Sn
    var(R) = G / (G - 1) * (Syy - 2 R Syn + R^2 Snn) / Sn^2
    R +- 1.959963984540054 * sqrt(var(R))

where G is the number of games and S* the sums of y, n, y^2, n^2 and y*n over them. The five
sums and G are additive, so shards, waves and SQL groups combine them exactly; the SQL macro
`cluster_ratio_*` (warehouse/sql/macros/stats.sql) implements the same formula and a test holds
the two to the same numbers. For a paired (common-random-number) comparison the cluster is the
pair, and y_g is the difference of the two games' figures (n_g = 1 each): the same function.
To compare two pooled ratios that way (warehouse card_counting), a game's figure is its
linearised one, R + (y_g - R n_g) / (Sn / G), whose mean over the games is R (and which is
y_g / n_g when n_g is the same in every game).

Win rates are clipped to [0, 1] (`clip=(0, 1)`); points are not clipped. Under two games the
interval is undefined (NaN), never zero. A rate of exactly 0 or 1 (no event, or every one, in
all G games) has no spread to go on, and the formula above would give [0, 0] or [1, 1]; its
interval is instead the exact bound for no event in Sn trials (Clopper-Pearson, 2.5% in
the tail): [0, 1 - 0.025^(1/Sn)], or [0.025^(1/Sn), 1], each seat or round of the
denominator one trial (with no event there is no spread to estimate a clustering from).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

Z95 = 1.959963984540054
#: The tail of a rate of exactly 0 or 1: the exact 95% bound for no event in Sn trials.
NO_EVENT_TAIL = 0.025


@dataclass(frozen=True)
class RatioSums:
    """Sufficient statistics of a clustered ratio: G and the sums of y, n, y^2, n^2, y*n."""

    games: int = 0
    sum_y: float = 0.0
    sum_n: float = 0.0
    sum_yy: float = 0.0
    sum_nn: float = 0.0
    sum_yn: float = 0.0

    @classmethod
    def of(cls, pairs: Iterable[tuple[float, float]]) -> RatioSums:
        """The sums over (y_g, n_g), one pair per game."""
        g = 0
        sy = sn = syy = snn = syn = 0.0
        for y, n in pairs:
            g += 1
            sy += y
            sn += n
            syy += y * y
            snn += n * n
            syn += y * n
        return cls(g, sy, sn, syy, snn, syn)

    def __add__(self, other: RatioSums) -> RatioSums:
        return RatioSums(
            self.games + other.games,
            self.sum_y + other.sum_y,
            self.sum_n + other.sum_n,
            self.sum_yy + other.sum_yy,
            self.sum_nn + other.sum_nn,
            self.sum_yn + other.sum_yn,
        )

    def estimate(self, clip: tuple[float, float] | None = None) -> Estimate:
        """The ratio with its 95% cluster-robust interval."""
        return cluster_ratio(
            self.games, self.sum_y, self.sum_n, self.sum_yy, self.sum_nn, self.sum_yn, clip=clip
        )


@dataclass(frozen=True)
class Estimate:
    """A figure, its 95% interval [lo, hi] and the half-width before any clipping."""

    value: float
    lo: float
    hi: float
    half_width: float


def cluster_ratio(
    games: int,
    sum_y: float,
    sum_n: float,
    sum_yy: float,
    sum_nn: float,
    sum_yn: float,
    *,
    clip: tuple[float, float] | None = None,
) -> Estimate:
    """sum_y / sum_n with its 95% interval clustered by game (see the module docstring)."""
    if games < 1 or sum_n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan)
    r = sum_y / sum_n
    if games < 2:
        return Estimate(r, math.nan, math.nan, math.nan)
    if clip == (0.0, 1.0) and (sum_y == 0 or sum_y == sum_n):
        tail = NO_EVENT_TAIL ** (1.0 / sum_n)  # no event (or every one) in Sn trials
        if sum_y == 0:
            return Estimate(r, 0.0, 1.0 - tail, 1.0 - tail)
        return Estimate(r, tail, 1.0, 1.0 - tail)
    resid_ss = max(sum_yy - 2.0 * r * sum_yn + r * r * sum_nn, 0.0)
    var = games / (games - 1) * resid_ss / (sum_n * sum_n)
    h = Z95 * math.sqrt(var)
    lo, hi = r - h, r + h
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    return Estimate(r, lo, hi, h)


__all__ = ["NO_EVENT_TAIL", "Z95", "Estimate", "RatioSums", "cluster_ratio"]
