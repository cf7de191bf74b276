"""What a simulation reports: per-policy running totals and the run's summary.

`PolicyStats` holds one policy spec's integer sums (and the per-game second moments the
clustered intervals of flip7.stats need); `SimSummary` one run's. Both engines fill them: the
reference engine in flip7.simulate, the compiled kernel in flip7.kernel.tally, which is why they
live here, below both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from flip7.stats import Estimate, RatioSums


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
