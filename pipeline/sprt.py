"""The sequential probability ratio test on a paired difference, with its variance estimated.

Pure (numpy-free even): the statistic, its bounds, the decision, and the sizes of fixed tests.

The model (docs/sequential.md says it for users). Policies A and B sit at the same table of one
cell, so every game g yields one paired observation: y_g = A's figure minus B's (win rate: wins /
seats; points: points per seat) with weight n_g (1 for the win rate; the game's rounds for points
per round). The parameter is the ratio theta = E[sum y] / E[sum n], estimated by R = Sy / Sn with
the cluster-robust (game-clustered) variance V of flip7.stats, so the seats of one game are never
counted as independent. By the central limit theorem R ~ N(theta, V), and the log-likelihood ratio
of H1: theta = h1 against H0: theta = h0 is

    LLR = ((R - h0)^2 - (R - h1)^2) / (2 V) = (h1 - h0) (R - (h0 + h1) / 2) / V

(the generalized SPRT of Fishtest's normalized tests: the variance is re-estimated at every
look, not assumed). Wald's bounds: accept H0 when LLR <= log(beta / (1 - alpha)), accept H1 when
LLR >= log((1 - beta) / alpha); otherwise continue, up to the ceiling, where the test ends
inconclusive. The sums are additive, so shards return them and waves add them up in plan order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

from flip7.stats import Z95, RatioSums

#: The outcomes of a test, as the manifest records them.
H1, H0, INCONCLUSIVE = "H1", "H0", "inconclusive"
METRICS = ("win", "points")


@dataclass(frozen=True)
class Look:
    """The test at one look: games so far, the estimate of A - B, its 95% half-width, the LLR."""

    games: int
    estimate: float
    half_width: float
    llr: float

    def to_json(self) -> dict[str, float | int | None]:
        """As the manifest records it: NaN (undefined) as null, so the JSON stays standard."""
        return {
            "games": self.games,
            "estimate": _finite(self.estimate),
            "half_width": _finite(self.half_width),
            "llr": self.llr,
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: below the first accept H0, above the second accept H1."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def variance(sums: RatioSums) -> float:
    """The cluster-robust variance of Sy / Sn (flip7.stats.cluster_ratio's); NaN under 2 games."""
    if sums.games < 2 or sums.sum_n == 0:
        return math.nan
    r = sums.sum_y / sums.sum_n
    resid = max(sums.sum_yy - 2.0 * r * sums.sum_yn + r * r * sums.sum_nn, 0.0)
    return sums.games / (sums.games - 1) * resid / (sums.sum_n * sums.sum_n)


def look(sums: RatioSums, h0: float, h1: float) -> Look:
    """The estimate and the LLR of H1 against H0 from the sums so far. Without a positive
    variance (under two games, or every difference equal) the LLR is 0: no evidence either way."""
    var = variance(sums)
    r = sums.sum_y / sums.sum_n if sums.sum_n else math.nan
    if not var > 0:  # NaN or 0
        return Look(sums.games, r, math.nan, 0.0)
    llr = (h1 - h0) * (r - (h0 + h1) / 2.0) / var
    return Look(sums.games, r, Z95 * math.sqrt(var), llr)


def decide(llr: float, lower: float, upper: float) -> str | None:
    """H1 at or above the upper bound, H0 at or below the lower one, else None (continue)."""
    if llr >= upper:
        return H1
    if llr <= lower:
        return H0
    return None


def sequence(
    waves: Iterable[RatioSums], h0: float, h1: float, alpha: float, beta: float
) -> tuple[list[Look], str | None]:
    """Run the test over waves of sums in order: the looks taken and the decision (None when
    the waves ran out first; the caller says whether that is the ceiling)."""
    lower, upper = bounds(alpha, beta)
    total = RatioSums()
    looks: list[Look] = []
    for wave in waves:
        total = total + wave
        seen = look(total, h0, h1)
        looks.append(seen)
        decision = decide(seen.llr, lower, upper)
        if decision is not None:
            return looks, decision
    return looks, None


def z_quantile(p: float) -> float:
    """The standard normal quantile of p."""
    return NormalDist().inv_cdf(p)


def fixed_games(difference: float, sd: float, alpha: float, beta: float) -> int:
    """Games a fixed-size one-sided test needs to tell theta = h0 from theta = h0 + difference
    at level alpha with power 1 - beta, when one game's paired difference has standard
    deviation `sd`: ((z_{1-alpha} + z_{1-beta}) sd / difference)^2, rounded up."""
    if not difference != 0 or not sd > 0:
        raise ValueError(f"need a non-zero difference and a positive sd, got {difference} and {sd}")
    return math.ceil(((z_quantile(1 - alpha) + z_quantile(1 - beta)) * sd / abs(difference)) ** 2)


def expected_games(difference: float, sd: float, alpha: float, beta: float) -> tuple[int, int]:
    """Wald's approximations of the SPRT's average games under H0 and under H1 (normal model,
    known sd, no overshoot): (E0[N], E1[N])."""
    lower, upper = bounds(alpha, beta)
    drift = difference * difference / (2.0 * sd * sd)  # E[LLR increment] per game under H1
    e1 = ((1 - beta) * upper + beta * lower) / drift
    e0 = ((1 - alpha) * lower + alpha * upper) / -drift
    return math.ceil(e0), math.ceil(e1)
