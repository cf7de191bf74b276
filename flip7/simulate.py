"""Many games at once: seat rotation, seeds derived from one root, per-policy statistics.

Game i of a run uses seed `derive_seed(root_seed, cell, i)` and the line-up rotated by i seats,
so every policy sits in every seat equally often. Statistics are aggregated by policy spec (a
spec that fills several seats is pooled). Win rates and points per round carry the sums of the
project's one statistics contract (flip7.stats): per game g in which a policy sits, win rate
y_g = its wins, n_g = its seats; points per round y_g = its seats' points, n_g = their rounds
(seats x rounds of the game); intervals are 95%, clustered by game.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from flip7.format import INTERVAL_NOTE, format_mean, format_rate  # noqa: F401  (moved there)
from flip7.policies.base import Policy
from flip7.rng import derive_seed
from flip7.rules import Ruleset
from flip7.stats import Estimate, RatioSums
from flip7.variants import CLASSIC_VARIANT, Variant


@dataclass
class PolicyStats:
    """Running totals for one policy spec, with the per-game second moments that the clustered
    intervals need (every field an integer, so any engine and any order give the same sums)."""

    spec: str
    games: int = 0  # games in which the policy sat
    seats: int = 0  # games x seats played
    wins: int = 0
    rounds: int = 0  # rounds played by its seats: seats x rounds of each game
    points: int = 0
    busts: int = 0
    flip7s: int = 0
    # Sums over games of y^2, n^2 and y*n: wins/seats and points/rounds of each game.
    wins_sq: int = 0
    seats_sq: int = 0
    wins_seats: int = 0
    points_sq: int = 0
    rounds_sq: int = 0
    points_rounds: int = 0

    def add_game(self, seats: int, wins: int, rounds: int, points: int) -> None:
        """One game's figures for this policy: its seats, wins, seat-rounds and points."""
        self.games += 1
        self.seats += seats
        self.wins += wins
        self.rounds += rounds
        self.points += points
        self.wins_sq += wins * wins
        self.seats_sq += seats * seats
        self.wins_seats += wins * seats
        self.points_sq += points * points
        self.rounds_sq += rounds * rounds
        self.points_rounds += points * rounds

    @property
    def win_sums(self) -> RatioSums:
        return RatioSums(
            self.games, self.wins, self.seats, self.wins_sq, self.seats_sq, self.wins_seats
        )

    @property
    def points_sums(self) -> RatioSums:
        return RatioSums(
            self.games, self.points, self.rounds, self.points_sq, self.rounds_sq, self.points_rounds
        )

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats if self.seats else math.nan

    @property
    def ppr(self) -> float:
        """Points per round."""
        return self.points / self.rounds if self.rounds else math.nan

    def win_estimate(self) -> Estimate:
        """The win rate with its 95% interval, clustered by game (clipped to [0, 1])."""
        return self.win_sums.estimate(clip=(0.0, 1.0))

    def ppr_estimate(self) -> Estimate:
        """Points per round with its 95% interval, clustered by game."""
        return self.points_sums.estimate()


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
    #: Games per number of rounds played, over games that ended by reaching the target.
    game_rounds: dict[int, int] = field(default_factory=dict)
    #: Games stopped by the ruleset's round cap (max_rounds) before anyone won outright.
    capped: int = 0

    def count_game(self, rounds: int, capped: bool) -> None:
        if capped:
            self.capped += 1
        else:
            self.game_rounds[rounds] = self.game_rounds.get(rounds, 0) + 1

    def rounds_estimate(self) -> Estimate:
        """Mean rounds per game (games that reached the target) with its 95% interval."""
        g = sum(self.game_rounds.values())
        sy = sum(r * c for r, c in self.game_rounds.items())
        syy = sum(r * r * c for r, c in self.game_rounds.items())
        return RatioSums(g, sy, g, syy, g, sy).estimate()

    def rounds_quantile(self, q: float) -> int:
        """The q-quantile of rounds per game (the smallest r with at least q of games <= r)."""
        total = sum(self.game_rounds.values())
        seen = 0
        for r in sorted(self.game_rounds):
            seen += self.game_rounds[r]
            if seen >= q * total:
                return r
        raise ValueError("no games that reached the target")


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
                variant=variant,
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
