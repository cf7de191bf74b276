"""The kernel's fast path for the pipeline: a shard's three tables as Arrow-ready numpy columns.

`shard_columns` plays a contiguous range of one cell's games and returns the columns of the
`events`, `rounds` and `games` tables (pipeline.schema) in their schema dtypes, derived from the
kernel's buffers by whole-array numpy operations and, for the events, one compiled pass
(`event_rows`: a row per round with the offsets of its event codes, which the kernel writes as
the log stores them, HITs folded as flip7.events.fold_rows states): no per-event or per-row
Python objects.
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

    events = event_rows(batch.ev, batch.go[:, 3], first_game)
    counts = events.pop("events")

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
_E_CODE = 0
HIT_SHIFT = 55  # flip7.events.HIT_SHIFT
_ROUND_START = 0  # flip7.events.EventKind.ROUND_START
_S_VALUE = 23  # flip7.events.CODE_SHIFTS[4]


def _event_rows_py(codes, counts, first_game, r_game, r_round, r_seq, offsets, events):  # type: ignore[no-untyped-def]
    """One row per (game, round) of the kernel's stored codes (games back to back, counts[j]
    codes for game first_game + j): its game, round, the sequence number of its first event
    (a code carrying a HIT stands for two events) and its offset into the codes; and the
    events each game played. A round begins at its ROUND_START, whose value is its number
    (the rule of pipeline.shard.flat_events; a game's events before its first ROUND_START, of
    which there are none, would be round 0). Returns the rows written."""
    pos = 0
    row = 0
    flag = np.int64(1) << HIT_SHIFT
    for j in range(counts.shape[0]):
        end = pos + counts[j]
        seq = 0
        for i in range(pos, end):
            code = codes[i]
            start = (code & 31) == _ROUND_START
            if start or i == pos:
                r_game[row] = first_game + j
                r_round[row] = code >> _S_VALUE if start else 0
                r_seq[row] = seq
                offsets[row] = i
                row += 1
            seq += 2 if code >= flag else 1
        events[j] = seq
        pos = end
    offsets[row] = pos
    return row


_compiled: dict[str, object] = {}


def event_rows(ev: np.ndarray, counts: np.ndarray, first_game: int) -> dict[str, np.ndarray]:
    """The stored events columns (pipeline.schema.EVENTS) of the kernel's event buffer `ev`
    (row E_CODE; games back to back, counts[j] codes for game first_game + j):
    `game`, `round`, `seq` per row, `offsets` into `codes` (the buffer's codes themselves), and
    `events`, the events each game played."""
    if not _compiled:
        from numba import njit

        from flip7.kernel import core

        assert (core.E_CODE, core.HIT_SHIFT, core.K_ROUND_START, core.S_VALUE) == (
            _E_CODE,
            HIT_SHIFT,
            _ROUND_START,
            _S_VALUE,
        )
        _compiled["rows"] = njit(cache=True)(_event_rows_py)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    total = int(counts.sum())
    codes = ev[_E_CODE, :total]
    # At most a row per code: trimmed to the rows the codes make. np.empty: the pass writes
    # every entry kept, so zeroing 4 bytes per code first (18 MB a 20,000-game shard) is waste.
    bound = total
    out = {
        "game": np.empty(bound, dtype=np.int64),
        "round": np.empty(bound, dtype=np.int16),
        "seq": np.empty(bound, dtype=np.int32),
        "offsets": np.empty(bound + 1, dtype=np.int32),
        "events": np.zeros(counts.shape[0], dtype=np.int64),
    }
    made = 0
    out["offsets"][0] = 0  # no codes: no rows
    if total:
        made = _compiled["rows"](  # type: ignore[operator]
            codes, counts, first_game, out["game"], out["round"], out["seq"],
            out["offsets"], out["events"],
        )  # fmt: skip
    for name in ("game", "round", "seq"):
        out[name] = out[name][:made]
    out["offsets"] = out["offsets"][: made + 1]
    out["codes"] = codes
    return out
