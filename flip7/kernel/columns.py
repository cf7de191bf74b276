"""The kernel's fast path for the pipeline: a shard's three tables as Arrow-ready numpy columns.

`shard_columns` plays a contiguous range of one cell's games and returns the columns of the
`events`, `rounds` and `games` tables (pipeline.schema) in their schema dtypes, derived from the
kernel's buffers by whole-array numpy operations and one compiled pass over its round rows
(`table_rows`: the rounds table's columns, and a row per game of the events table with its
rounds' lengths, from where each round's codes start, which the kernel records as it plays; the
codes themselves are the kernel's buffer, written as the log stores them, HITs folded as
flip7.events.fold_rows states, no ROUND_SCORE): no per-event or per-row Python objects, and no
pass over the codes.
Dictionary-encoded columns come back as indices (`policy`: the seat's index in the line-up before
rotation); the pipeline adds the strings and the per-shard constants. flip7 imports no pyarrow,
so the Arrow tables themselves are built in pipeline.shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flip7.kernel.batch import Batch, play_batch, rotation
from flip7.kernel.jit import call
from flip7.policies.base import Policy
from flip7.rules import Ruleset
from flip7.variants import Variant


@dataclass(frozen=True)
class ShardColumns:
    """Columns of one shard's tables, by schema column name (pipeline.schema order); the
    events' `codes` list is `offsets` (int32, one more than the rows) into `codes` (int64)."""

    events: dict[str, np.ndarray]
    rounds: dict[str, np.ndarray]
    games: dict[str, np.ndarray]


def shard_columns(
    ruleset: Ruleset,
    lineup: Sequence[Policy],
    seeds: np.ndarray,
    shifts: np.ndarray,
    first_game: int,
    *,
    capture: bool = True,
    variant: Variant | None = None,
) -> ShardColumns:
    """Play len(seeds) games: game j has seed seeds[j] and id first_game + j, and seat s plays
    lineup[(s - shifts[j]) mod n] (flip7.simulate.rotated); first dealer seat 0."""
    n = len(lineup)
    k = int(seeds.shape[0])
    seat_policy = rotation(n, np.asarray(shifts))
    batch = play_batch(ruleset, lineup, seat_policy, seeds, capture=capture, variant=variant)
    game_ids = np.arange(first_game, first_game + k, dtype=np.int64)

    events, rounds = table_rows(batch, seat_policy, first_game)
    counts = batch.go[:, _G_EVENTS] + batch.go[:, _G_FOLDS]  # codes + the HITs folded in

    seat = np.tile(np.arange(n, dtype=np.int8), k)
    games = {
        "game": np.repeat(game_ids, n),
        "seat": seat,
        "policy": seat_policy.reshape(-1).astype(np.int32),
        "rounds": np.repeat(batch.go[:, 0].astype(np.int16), n),
        "total": batch.gt[0].reshape(-1),
        "rank": batch.gt[3].reshape(-1).astype(np.int8),
        "winner": seat == np.repeat(batch.go[:, 1].astype(np.int8), n),
        "capped": np.repeat(batch.go[:, 2].astype(np.bool_), n),
        "events": np.repeat(counts.astype(np.int32), n),
    }
    return ShardColumns(events, rounds, games)


# The kernel's output layout (flip7.kernel.core Q_*, G_*) and flip7.observation.BUSTED as
# literals, checked against them in _passes (numba's cache sees edits to this file only).
_Q_GAME, _Q_ROUND, _Q_SEAT, _Q_DEALER, _Q_SCORE, _Q_STATUS, _Q_FLIP7 = 0, 1, 2, 3, 4, 6, 7
_Q_TOTAL, _Q_EV_POS = 5, 8
_G_EVENTS, _G_EV_START, _G_FOLDS = 3, 4, 6
_BUSTED = 3


def _table_rows_py(  # type: ignore[no-untyped-def]
    rs, go, seat_policy, first_game, capture, game, rnd, seat, policy, dealer, score, busted,
    flip7, status, e_game, e_round_offsets, e_starts, e_offsets,
):  # fmt: skip
    """The rounds table's columns (`total` apart: rs's own row) and, with `capture`, where the
    events table's rows begin, in one pass over the kernel's round rows: each column in its
    schema dtype, the game's id and the seat's policy index looked up as it goes (numpy would
    make a pass and a temporary per column). A round's first seat row (seat 0) gives where the
    round's codes start (its game's first code plus Q_EV_POS; they run to the next round's
    start); a game's first round also where its events row begins in the rounds and the codes.
    Returns the rounds and the games seen."""
    rows = 0
    games = 0
    for i in range(rs.shape[1]):
        g = rs[_Q_GAME, i]
        s = rs[_Q_SEAT, i]
        game[i] = first_game + g
        rnd[i] = rs[_Q_ROUND, i]
        seat[i] = s
        policy[i] = seat_policy[g, s]
        dealer[i] = rs[_Q_DEALER, i]
        score[i] = rs[_Q_SCORE, i]
        st = rs[_Q_STATUS, i]
        status[i] = st
        busted[i] = st == _BUSTED
        flip7[i] = rs[_Q_FLIP7, i] != 0
        if capture and s == 0:
            start = go[g, _G_EV_START] + rs[_Q_EV_POS, i]
            if rs[_Q_ROUND, i] == 1:
                e_game[games] = first_game + g
                e_round_offsets[games] = rows
                e_offsets[games] = start
                games += 1
            e_starts[rows] = start
            rows += 1
    return rows, games


_compiled: dict[str, Any] = {}


def _passes() -> dict[str, Any]:
    """The compiled pass (numba, cached on disk like the kernel), compiled on first use."""
    if not _compiled:
        from numba import njit

        from flip7.kernel import core
        from flip7.observation import BUSTED

        assert (
            core.Q_GAME, core.Q_ROUND, core.Q_SEAT, core.Q_DEALER, core.Q_SCORE, core.Q_STATUS,
            core.Q_FLIP7, core.Q_TOTAL, core.Q_EV_POS, core.G_EVENTS,
            core.G_EV_START, core.G_FOLDS, BUSTED,
        ) == (
            _Q_GAME, _Q_ROUND, _Q_SEAT, _Q_DEALER, _Q_SCORE, _Q_STATUS, _Q_FLIP7, _Q_TOTAL,
            _Q_EV_POS, _G_EVENTS, _G_EV_START, _G_FOLDS, _BUSTED,
        )  # fmt: skip
        _compiled["rows"] = njit(cache=True)(_table_rows_py)
    return _compiled


def table_rows(
    batch: Batch, seat_policy: np.ndarray, first_game: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(the events table's columns, the rounds table's columns) of a batch of games
    first_game.. whose seats play `seat_policy` (int64 [games, seats]); pipeline.schema's
    EVENTS and ROUNDS (`policy`: the seat's index in the line-up before rotation), the events'
    `codes` list as `offsets` (int32, one more than the rows) into `codes` (the kernel's own
    buffer, HITs folded, round scores left out), one row per game with its `rounds` (codes per
    round; `round_offsets` into them per game). Without captured events, no events rows."""
    rs = batch.rs
    m = int(rs.shape[1])
    rows = m // batch.n_players if batch.capture else 0
    k = batch.games if batch.capture else 0
    rounds = {
        "game": np.empty(m, dtype=np.int64),
        "round": np.empty(m, dtype=np.int16),
        "seat": np.empty(m, dtype=np.int8),
        "policy": np.empty(m, dtype=np.int32),
        "dealer": np.empty(m, dtype=np.int8),
        "score": np.empty(m, dtype=np.int16),
        "total": rs[_Q_TOTAL],
        "busted": np.empty(m, dtype=np.bool_),
        "flip7": np.empty(m, dtype=np.bool_),
        "status": np.empty(m, dtype=np.int8),
    }
    codes = batch.ev[0]
    starts = np.empty(rows + 1, dtype=np.int64)
    starts[rows] = codes.shape[0]
    events = {
        "game": np.empty(k, dtype=np.int64),
        "round_offsets": np.empty(k + 1, dtype=np.int32),
        "offsets": np.empty(k + 1, dtype=np.int32),
        "codes": codes,
    }
    events["round_offsets"][k] = rows
    events["offsets"][k] = codes.shape[0]
    if m:
        made = call(
            "rows", _passes()["rows"], rs, batch.go, seat_policy, first_game, batch.capture, rounds["game"],
            rounds["round"], rounds["seat"], rounds["policy"], rounds["dealer"], rounds["score"],
            rounds["busted"], rounds["flip7"], rounds["status"], events["game"],
            events["round_offsets"], starts, events["offsets"],
        )  # fmt: skip
        assert made == (rows, k), (made, rows, k)
    events["rounds"] = np.diff(starts).astype(np.int16)
    return events, rounds


def rows_dispatcher() -> Any:
    """The compiled pass (numba's dispatcher), for its compile statistics."""
    return _passes()["rows"]


def warm() -> None:
    """Compile (or load) the pass now, on a one-game batch's buffers."""
    rs = np.zeros((_Q_EV_POS + 1, 1), dtype=np.int32)
    rs[_Q_ROUND, 0] = 1
    go = np.zeros((1, _G_FOLDS + 1), dtype=np.int64)
    ev = np.zeros((1, 1), dtype=np.int64)
    batch = Batch(1, np.ones(1, dtype=np.uint64), ev, rs, go, np.zeros((4, 1, 1), np.int32), True)
    table_rows(batch, np.zeros((1, 1), dtype=np.int64), 0)
