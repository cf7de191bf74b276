"""Many games at once: seat rotation, seeds derived from one root, per-policy statistics.

Game i of a run uses seed `derive_seed(root_seed, cell, i)` and the line-up rotated by i seats,
so every policy sits in every seat equally often. Statistics are aggregated by policy spec (a
spec that fills several seats is pooled). Win rates and points per round carry the sums of the
project's one statistics contract (flip7.stats): per game g in which a policy sits, win rate
y_g = its wins, n_g = its seats; points per round y_g = its seats' points, n_g = their rounds
(seats x rounds of the game); intervals are 95%, clustered by game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flip7.format import INTERVAL_NOTE, format_mean, format_rate  # noqa: F401  (moved there)
from flip7.policies.base import Policy
from flip7.rng import derive_seed
from flip7.rules import Ruleset
from flip7.summary import PolicyStats, SimSummary
from flip7.variants import CLASSIC_VARIANT, Variant


def rotated(lineup: Sequence[Policy], k: int) -> list[Policy]:
    """The line-up shifted k seats (seat s gets lineup[(s - k) mod n])."""
    n = len(lineup)
    return [lineup[(s - k) % n] for s in range(n)]


def simulate(
    ruleset: Ruleset,
    lineup: Sequence[Policy],
    n_games: int,
    root_seed: int,
    *,
    cell: int = 0,
    rotate: bool = True,
    keep_round_scores: bool = False,
    progress: Callable[[int], None] | None = None,
    variant: Variant = CLASSIC_VARIANT,
    engine: str = "reference",
) -> SimSummary:
    """Play n_games games and aggregate win rate, points per round, busts and Flip 7s.

    `engine`: 'reference', 'kernel' or 'auto' (the compiled kernel when it can play every seat,
    flip7.kernel.choose_engine); both give the same figures, `summary.engine` says which ran."""
    note: str | None = "asked for"
    if engine != "reference":
        from flip7.kernel import choose_engine

        chosen, note = choose_engine(engine, lineup, ruleset, variant)
        if chosen == "kernel":
            from flip7.kernel.tally import simulate_kernel

            done = simulate_kernel(
                ruleset, lineup, n_games, root_seed, cell, rotate, keep_round_scores, progress,
                variant,
            )  # fmt: skip
            done.engine = "kernel"
            return done
    n = len(lineup)
    summary = SimSummary(n_games, n, engine_note=note)
    for pol in lineup:
        summary.stats.setdefault(pol.spec, PolicyStats(pol.spec))
        summary.round_scores.setdefault(pol.spec, [])
    for i in range(n_games):
        seats = rotated(lineup, i) if rotate else list(lineup)
        game = variant.new_engine(ruleset, seats, derive_seed(root_seed, cell, i), capture=False)
        result = game.run()
        mine: dict[str, list[int]] = {}  # spec -> [seats, wins, points] in this game
        for s, pol in enumerate(seats):
            tally = mine.setdefault(pol.spec, [0, 0, 0])
            tally[0] += 1
            tally[1] += result.winner == s
            for scores in result.round_scores:
                x = scores[s]
                tally[2] += x
                if keep_round_scores:
                    summary.round_scores[pol.spec].append(x)
            st = summary.stats[pol.spec]
            st.busts += result.busts[s]
            st.flip7s += result.flip7s[s]
        for spec, (n_seats, wins, points) in mine.items():
            summary.stats[spec].add_game(n_seats, wins, n_seats * result.rounds, points)
        summary.count_game(result.rounds, result.capped)
        if progress is not None:
            progress(i + 1)
    return summary
