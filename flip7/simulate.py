"""Many games at once: seat rotation, seeds derived from one root, per-policy statistics.

Game i of a run uses seed `derive_seed(root_seed, cell, i)` and the line-up rotated by i seats,
so every policy sits in every seat equally often. Statistics are aggregated by policy spec (a
spec that fills several seats is pooled).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from flip7.policies.base import Policy
from flip7.rng import derive_seed
from flip7.rules import Ruleset
from flip7.variants import CLASSIC_VARIANT, Variant


@dataclass
class PolicyStats:
    """Running totals for one policy spec."""

    spec: str
    seats: int = 0  # games x seats played
    wins: int = 0
    rounds: int = 0
    points: int = 0
    points_sq: int = 0
    busts: int = 0
    flip7s: int = 0

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats if self.seats else math.nan

    @property
    def win_se(self) -> float:
        p = self.win_rate
        return math.sqrt(p * (1 - p) / self.seats) if self.seats else math.nan

    @property
    def ppr(self) -> float:
        """Points per round."""
        return self.points / self.rounds if self.rounds else math.nan

    @property
    def ppr_se(self) -> float:
        if self.rounds < 2:
            return math.nan
        mean = self.ppr
        var = (self.points_sq - self.rounds * mean * mean) / (self.rounds - 1)
        return math.sqrt(max(var, 0.0) / self.rounds)


@dataclass
class SimSummary:
    games: int
    n_players: int
    stats: dict[str, PolicyStats] = field(default_factory=dict)
    round_scores: dict[str, list[int]] = field(default_factory=dict)
    events: int = 0
    #: Which engine played the games ('reference' or 'kernel'), and why not the kernel.
    engine: str = "reference"
    engine_note: str | None = None


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
                ruleset,
                lineup,
                n_games,
                root_seed,
                cell=cell,
                rotate=rotate,
                keep_round_scores=keep_round_scores,
                progress=progress,
            )
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
        for s, pol in enumerate(seats):
            st = summary.stats[pol.spec]
            st.seats += 1
            st.wins += result.winner == s
            for scores in result.round_scores:
                x = scores[s]
                st.rounds += 1
                st.points += x
                st.points_sq += x * x
                if keep_round_scores:
                    summary.round_scores[pol.spec].append(x)
            st.busts += result.busts[s]
            st.flip7s += result.flip7s[s]
        if progress is not None:
            progress(i + 1)
    return summary
