"""The kernel's fast path for the pipeline: a shard's three tables as Arrow-ready numpy columns.

`shard_columns` plays a contiguous range of one cell's games and returns the columns of the
`events`, `rounds` and `games` tables (pipeline.schema) in their schema dtypes, derived from the
kernel's buffers by whole-array numpy operations and, for the events, one compiled pass
(`event_rows`: a row per round with the offsets of its packed event codes, HITs folded into the
next event as pipeline.schema.events_table does): no per-event or per-row Python objects.
Dictionary-encoded columns come back as indices (`policy`: the seat's index in the line-up before
rotation); the pipeline adds the strings and the per-shard constants. flip7 imports no pyarrow,
so the Arrow tables themselves are built in pipeline.shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from flip7.kernel.batch import play_batch, rotation
from flip7.observation import BUSTED
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

    counts = batch.go[:, 3]
    events = event_rows(batch.ev, counts, batch.go[:, 0], first_game)

    rs = batch.rs
    status = rs[6].astype(np.int8)
    rounds = {
        "game": game_ids[rs[0]],
        "round": rs[1].astype(np.int16),
        "seat": rs[2].astype(np.int8),
        "policy": seat_policy[rs[0], rs[2]].astype(np.int32),
        "dealer": rs[3].astype(np.int8),
        "score": rs[4].astype(np.int16),
        "total": rs[5],
        "busted": status == BUSTED,
        "flip7": rs[7].astype(np.bool_),
        "status": status,
    }

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


# The stored events form (pipeline.schema): literals, checked against flip7.kernel.core below
# (numba's cache sees edits to this file only).
_E_KIND, _E_PLAYER, _E_CARD, _E_TARGET, _E_VALUE, _E_ROUND = 0, 1, 2, 3, 4, 5
_S_PLAYER, _S_CARD, _S_TARGET, _S_VALUE = 5, 11, 17, 23
_K_HIT = 2
HIT_SHIFT = 55  # pipeline.schema.HIT_SHIFT


def _event_rows_py(
    kinds,
    players,
    cards,
    targets,
    values,
    rounds,
    counts,
    first_game,
    r_game,
    r_round,
    r_seq,
    offsets,
    codes,
):  # type: ignore[no-untyped-def]
    """Fill one row per (game, round) and the packed codes of its events, a HIT folded into
    the next event when that is a non-HIT event of the same player in the same round with a
    value >= 0 (the element then carries (hit value + 1) << HIT_SHIFT). Each event field is
    one contiguous array (a row of the kernel's `ev`). Returns (rows, codes) written."""
    pos = 0
    row = 0
    out = 0
    for j in range(counts.shape[0]):
        g = first_game + j
        end = pos + counts[j]
        prev = -1
        flag = np.int64(0)
        for i in range(pos, end):
            rnd = rounds[i]
            if i == pos or rnd != prev:
                r_game[row] = g
                r_round[row] = rnd
                r_seq[row] = i - pos
                offsets[row] = out
                row += 1
                prev = rnd
            kind = kinds[i]
            player = players[i]
            value = values[i]
            if (
                kind == _K_HIT
                and i + 1 < end
                and cards[i] == -1
                and targets[i] == -1
                and 0 <= value <= 2
                and rounds[i + 1] == rnd
                and players[i + 1] == player
                and kinds[i + 1] != _K_HIT
                and values[i + 1] >= 0
            ):
                flag = np.int64(value + 1) << HIT_SHIFT
                continue
            codes[out] = (
                flag
                | (np.int64(value) << _S_VALUE)
                | ((np.int64(targets[i]) + 1) << _S_TARGET)
                | ((np.int64(cards[i]) + 1) << _S_CARD)
                | ((np.int64(player) + 1) << _S_PLAYER)
                | np.int64(kind)
            )
            flag = np.int64(0)
            out += 1
        pos = end
    offsets[row] = out
    return row, out


_compiled: dict[str, object] = {}


def event_rows(
    ev: np.ndarray, counts: np.ndarray, rounds: np.ndarray, first_game: int
) -> dict[str, np.ndarray]:
    """The stored events columns (pipeline.schema.EVENTS) of the kernel's event buffer `ev`
    (rows E_*, games back to back, counts[j] events for game first_game + j, which played
    rounds[j] rounds): `game`, `round`, `seq` per row, `offsets` into `codes`."""
    if not _compiled:
        from numba import njit

        from flip7.kernel import core

        assert (core.E_KIND, core.E_PLAYER, core.E_CARD, core.E_TARGET, core.E_VALUE) == (
            _E_KIND,
            _E_PLAYER,
            _E_CARD,
            _E_TARGET,
            _E_VALUE,
        ) and (core.E_ROUND, core.S_PLAYER, core.S_CARD, core.S_TARGET, core.S_VALUE) == (
            _E_ROUND,
            _S_PLAYER,
            _S_CARD,
            _S_TARGET,
            _S_VALUE,
        )
        _compiled["rows"] = njit(cache=True)(_event_rows_py)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    total = int(counts.sum())
    # At most a row per round of each game, plus one for events before its first round: an
    # upper bound, trimmed to the rows the events make.
    bound = int(np.asarray(rounds, dtype=np.int64).sum()) + counts.shape[0] if total else 0
    out = {
        "game": np.empty(bound, dtype=np.int64),
        "round": np.empty(bound, dtype=np.int16),
        "seq": np.empty(bound, dtype=np.int32),
        "offsets": np.zeros(bound + 1, dtype=np.int32),
        "codes": np.empty(total, dtype=np.int64),
    }
    if total:
        fields = [np.ascontiguousarray(ev[k]) for k in range(_E_ROUND + 1)]
        made, used = _compiled["rows"](  # type: ignore[operator]
            *fields,
            counts,
            first_game,
            out["game"],
            out["round"],
            out["seq"],
            out["offsets"],
            out["codes"],
        )
        for name in ("game", "round", "seq"):
            out[name] = out[name][:made]
        out["offsets"] = out["offsets"][: made + 1]
        out["codes"] = out["codes"][:used]
    return out
