"""`flip7 sim` and `flip7 round` through the kernel: the same statistics, from numpy columns.

`simulate_kernel` is flip7.simulate.simulate on the kernel: game i has seed
derive_seed(root_seed, cell, i) and the line-up rotated by i seats, and every PolicyStats sum
(the per-game second moments of the clustered intervals too) is the same integer the reference
loop adds up (round_scores in the same order). `one_round_kernel` is `flip7 round`'s loop of Engine.play_round() on the kernel. Games run in chunks, without event
capture, so memory stays small and progress can be reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from flip7.kernel.batch import Batch, derive_seeds, play_batch, rotation
from flip7.policies.base import Policy
from flip7.rules import Ruleset
from flip7.summary import PolicyStats, SimSummary
from flip7.variants import Variant

CHUNK = 20_000  # games per kernel call


def _chunks(
    ruleset: Ruleset,
    lineup: Sequence[Policy],
    variant: Variant | None,
    n_games: int,
    root_seed: int,
    cell: int,
    rotate: bool,
    one_round: bool,
    progress: Callable[[int], None] | None,
) -> list[tuple[Batch, np.ndarray]]:
    """Kernel batches over games [0, n_games), with each batch's seat -> policy index array."""
    n = len(lineup)
    out = []
    for a in range(0, n_games, CHUNK):
        b = min(n_games, a + CHUNK)
        shifts = np.arange(a, b) % n if rotate else np.zeros(b - a, dtype=np.int64)
        seat_policy = rotation(n, shifts)
        seeds = derive_seeds(root_seed, cell, a, b)
        batch = play_batch(
            ruleset,
            lineup,
            seat_policy,
            seeds,
            capture=False,
            one_round=one_round,
            variant=variant,
        )
        out.append((batch, seat_policy))
        if progress is not None:
            progress(b)
    return out


def _spec_ids(lineup: Sequence[Policy]) -> tuple[list[str], np.ndarray]:
    """Distinct specs in line-up order, and each line-up index's spec id."""
    specs: list[str] = []
    for p in lineup:
        if p.spec not in specs:
            specs.append(p.spec)
    return specs, np.array([specs.index(p.spec) for p in lineup], dtype=np.int64)


def simulate_kernel(
    ruleset: Ruleset,
    lineup: Sequence[Policy],
    n_games: int,
    root_seed: int,
    cell: int,
    rotate: bool,
    keep_round_scores: bool,
    progress: Callable[[int], None] | None,
    variant: Variant | None,
) -> SimSummary:
    """flip7.simulate.simulate, played by the kernel (the same figures, exactly; its arguments
    in its order)."""
    n = len(lineup)
    specs, spec_of = _spec_ids(lineup)
    summary = SimSummary(n_games, n)
    for spec in specs:
        summary.stats[spec] = PolicyStats(spec)
        summary.round_scores[spec] = []
    for batch, seat_policy in _chunks(
        ruleset, lineup, variant, n_games, root_seed, cell, rotate, False, progress
    ):
        seat_spec = spec_of[seat_policy]  # [game, seat]
        k = seat_spec.shape[0]
        rounds = batch.go[:, 0]
        wins = np.zeros((k, n), dtype=bool)
        wins[np.arange(k), batch.go[:, 1]] = True
        rs = batch.rs
        row_spec = seat_spec[rs[0], rs[2]]
        score = rs[4].astype(np.int64)
        # points of each (game, spec): round rows summed by game x spec
        points = np.bincount(
            rs[0].astype(np.int64) * len(specs) + row_spec, weights=score, minlength=k * len(specs)
        ).reshape(k, len(specs))
        for j, spec in enumerate(specs):
            st = summary.stats[spec]
            mine = seat_spec == j
            seats_g = mine.sum(axis=1).astype(np.int64)
            sat = seats_g > 0  # the games in which the spec sat (all of them, for a line-up)
            wins_g = (wins & mine).sum(axis=1).astype(np.int64)[sat]
            rounds_g = (rounds * seats_g)[sat]
            # float64 bincount weights: exact for these integers (well under 2**53)
            points_g = points[sat, j].astype(np.int64)
            seats_g = seats_g[sat]
            st.games += int(sat.sum())
            st.seats += int(seats_g.sum())
            st.wins += int(wins_g.sum())
            st.rounds += int(rounds_g.sum())
            st.points += int(points_g.sum())
            st.wins_sq += int((wins_g * wins_g).sum())
            st.seats_sq += int((seats_g * seats_g).sum())
            st.wins_seats += int((wins_g * seats_g).sum())
            st.points_sq += int((points_g * points_g).sum())
            st.rounds_sq += int((rounds_g * rounds_g).sum())
            st.points_rounds += int((points_g * rounds_g).sum())
            st.busts += int(batch.gt[1][mine].sum())
            st.flip7s += int(batch.gt[2][mine].sum())
        capped = batch.go[:, 2].astype(bool)
        summary.capped += int(capped.sum())
        for r, c in enumerate(np.bincount(rounds[~capped])):
            if c:
                summary.game_rounds[r] = summary.game_rounds.get(r, 0) + int(c)
        if keep_round_scores:
            # the reference appends game by game, seat by seat, round by round
            order = np.lexsort((rs[1], rs[2], rs[0]))
            for j, spec in enumerate(specs):
                sel = order[row_spec[order] == j]
                summary.round_scores[spec].extend(score[sel].tolist())
    return summary


def one_round_kernel(
    ruleset: Ruleset,
    lineup: Sequence[Policy],
    n_rounds: int,
    root_seed: int,
    progress: Callable[[int], None] | None = None,
    variant: Variant | None = None,
) -> tuple[dict[str, list[int]], dict[str, int], dict[str, int]]:
    """`flip7 round`'s figures on the kernel: (scores, busts, Flip 7s) per spec, round i dealt
    from derive_seed(root_seed, 0, i) to the line-up rotated by i seats."""
    specs, spec_of = _spec_ids(lineup)
    scores: dict[str, list[int]] = {s: [] for s in specs}
    busts = dict.fromkeys(specs, 0)
    flips = dict.fromkeys(specs, 0)
    for batch, seat_policy in _chunks(
        ruleset, lineup, variant, n_rounds, root_seed, 0, True, True, progress
    ):
        seat_spec = spec_of[seat_policy]
        rs = batch.rs  # one round per game: rows are game by game, seat by seat
        row_spec = seat_spec[rs[0], rs[2]]
        for j, spec in enumerate(specs):
            scores[spec].extend(rs[4][row_spec == j].tolist())
            mine = seat_spec == j
            busts[spec] += int(batch.gt[1][mine].sum())
            flips[spec] += int(batch.gt[2][mine].sum())
    return scores, busts, flips
