"""The sequential test's operating characteristics by simulation (prints figures; not a test).

Usage: python benchmarks/sprt_oc.py [--h1 0.01] [--wave 1000] [--reps 1000] [--seed 1]

Heads-up win rate difference: every game gives d = +1 or -1 (one of the two wins), with mean
theta. For theta = h0, h1 / 2 (where the test takes longest), h1 and larger differences,
`--reps` sequential tests (H0 0 against H1 h1, alpha = beta = 0.05, a look every `--wave` games,
no ceiling in practice) are run through pipeline.sprt exactly as the driver runs them, from
per-wave sums; printed: the share accepting H1, the games taken (mean, median, 90th percentile),
and the fixed-size test with the same error rates (pipeline.sprt.fixed_games, sd 1).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

# The repository first: this folder's pipeline.py (a benchmark) would shadow the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import oc_parser  # noqa: E402
from flip7.stats import RatioSums  # noqa: E402
from pipeline import sprt  # noqa: E402


def main() -> None:
    ap = oc_parser(__doc__, wave=1000)
    ap.add_argument("--h1", type=float, default=0.01)
    args = ap.parse_args()
    alpha = beta = 0.05
    fixed = sprt.fixed_games(args.h1, 1.0, alpha, beta)
    max_waves = 20 * fixed // args.wave
    print(
        f"H0 0 against H1 {args.h1:g}, alpha = beta = {alpha}, a look every {args.wave:,} "
        f"games, {args.reps:,} runs each; fixed-size test: {fixed:,} games"
    )
    print(f"{'theta':>8}{'P(H1)':>8}{'mean':>10}{'median':>10}{'p90':>10}{'undecided':>11}")
    for i, mult in enumerate((0.0, 0.5, 1.0, 2.0, 7.0)):
        theta = mult * args.h1
        rng = np.random.default_rng([args.seed, i])
        hits, games, undecided = 0, [], 0
        for _ in range(args.reps):
            wins = rng.binomial(args.wave, (1 + theta) / 2, size=max_waves)

            def waves(w: np.ndarray = wins) -> Iterator[RatioSums]:
                for k in w:
                    d = float(2 * k - args.wave)
                    yield RatioSums(args.wave, d, args.wave, args.wave, args.wave, d)

            looks, decision = sprt.sequence(waves(), 0.0, args.h1, alpha, beta)
            hits += decision == sprt.H1
            undecided += decision is None
            games.append(looks[-1].games)
        g = np.asarray(games)
        print(
            f"{theta:>8.3f}{hits / args.reps:>8.3f}{g.mean():>10,.0f}{np.median(g):>10,.0f}"
            f"{np.percentile(g, 90):>10,.0f}{undecided:>11}"
        )


if __name__ == "__main__":
    main()
