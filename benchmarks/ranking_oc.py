"""The ranking stop rule's operating characteristics by simulation (prints figures; not a test).

Usage: python benchmarks/ranking_oc.py [--policies 4] [--margin 0.05] [--wave 200] [--reps 1000]

A league of `--policies` policies with Bradley-Terry strengths (the Plackett-Luce model's
pairwise law): every two meet `--wave` times a wave, one meeting a game, and the rule of
pipeline.ranking looks after each wave exactly as the driver does (alpha = beta = 0.05 split
over the adjacent pairs), up to a ceiling of 200 waves. Scenarios: all equal; each adjacent
pair exactly `--margin` apart (55% against 45% at 0.05); half of it (the indifference zone,
where the rule takes longest); two equal pairs far apart. Printed per scenario: the share of
leagues with any adjacent pair wrongly separated (true difference 0) or wrongly declared
equivalent (true difference >= margin), the share ending at the ceiling, and the looks taken.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

# The repository first: this folder's pipeline.py (a benchmark) would shadow the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import oc_parser  # noqa: E402
from pipeline import ranking  # noqa: E402

ALPHA = BETA = 0.05


def league(
    theta: list[float], rng: np.random.Generator, *, margin: float, wave: int, waves: int
) -> dict[str, Any]:
    """One league drawn from strengths `theta` (policy i is `p<i>`), looked at wave by wave;
    its last look: the ranking, the adjacent pairs' tests and the wave (0-based)."""
    k = len(theta)
    names = [f"p{i:02d}" for i in range(k)]
    lower, upper = ranking.bounds(ALPHA, BETA, k)
    sums = ranking.Sums()
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    p = np.array([1 / (1 + math.exp(theta[j] - theta[i])) for i, j in pairs])
    for w in range(waves):
        ahead = rng.binomial(wave, p)
        sums.add(
            [names[i], names[j], wave, float(c), float(wave), float(c), float(wave), float(c)]
            for (i, j), c in zip(pairs, ahead, strict=True)
        )
        order, looks = ranking.look(names, sums, margin, lower, upper)
        if all(x.verdict is not None for x in looks) or w == waves - 1:
            return {"order": order, "looks": looks, "wave": w, "names": names}
    raise ValueError("waves must be at least 1")


def wrong(result: dict[str, Any], theta: list[float], margin: float) -> tuple[bool, bool]:
    """(any adjacent pair separated though equal, any declared equivalent though >= margin
    apart in the chance of finishing ahead)."""
    strength = dict(zip(result["names"], theta, strict=True))
    false_sep = false_eq = False
    for x in result["looks"]:
        gap = abs(1 / (1 + math.exp(strength[x.below] - strength[x.above])) - 0.5)
        false_sep |= x.verdict == ranking.SEPARATED and gap == 0
        false_eq |= x.verdict == ranking.EQUIVALENT and gap >= margin - 1e-12
    return false_sep, false_eq


def main() -> None:
    ap = oc_parser(__doc__, wave=200)
    ap.add_argument("--policies", type=int, default=4)
    ap.add_argument("--margin", type=float, default=0.05)
    args = ap.parse_args()
    k, m = args.policies, args.margin
    step = math.log((0.5 + m) / (0.5 - m))
    half = math.log((0.5 + m / 2) / (0.5 - m / 2))
    scenarios = {
        "all equal": [0.0] * k,
        "adjacent pairs margin apart": [step * (k - 1 - i) for i in range(k)],
        "adjacent pairs margin/2 apart": [half * (k - 1 - i) for i in range(k)],
        "equal pairs, far apart": [2.0 * (i // 2) for i in range(k)],
    }
    a, b = ranking.pair_error_rates(ALPHA, BETA, k)
    print(
        f"{k} policies, margin {m:g}, alpha = beta = {ALPHA} in all ({a:.4g} and {b:.4g} a "
        f"pair), {args.wave} meetings a pair a wave, {args.reps} leagues each"
    )
    print(f"{'scenario':<32}{'false sep.':>11}{'false eq.':>11}{'ceiling':>9}  looks mean, 90%")
    rng = np.random.default_rng(args.seed)
    for name, theta in scenarios.items():
        runs = [league(theta, rng, margin=m, wave=args.wave, waves=200) for _ in range(args.reps)]
        errors = np.array([wrong(r, theta, m) for r in runs])
        looks = np.array([r["wave"] + 1 for r in runs])
        ceiling = np.mean([any(x.verdict is None for x in r["looks"]) for r in runs])
        print(
            f"{name:<32}{errors[:, 0].mean():>11.3f}{errors[:, 1].mean():>11.3f}"
            f"{ceiling:>9.3f}  {looks.mean():.1f}, {np.percentile(looks, 90):.0f}"
        )


if __name__ == "__main__":
    main()
