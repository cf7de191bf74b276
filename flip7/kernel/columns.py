"""The kernel's fast path for the pipeline: a shard's three tables as Arrow-ready numpy columns.

`shard_columns` plays a contiguous range of one cell's games and returns the columns of the
`events`, `rounds` and `games` tables (pipeline.schema) in their schema dtypes, derived from the
kernel's buffers by whole-array numpy operations and, for the events, one compiled pass
(`core.event_columns`: ids and the packed event code): no per-event or per-row Python objects.
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
    """Columns of one shard's tables, by schema column name (pipeline.schema order)."""

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
    total = batch.ev.shape[1]
    events = {
        "game": np.empty(total, dtype=np.int64),
        "round": batch.ev[5],
        "seq": np.empty(total, dtype=np.int32),
        "code": np.empty(total, dtype=np.int64),
    }
    if total:
        from flip7.kernel.core import event_columns

        event_columns(batch.ev, counts, first_game, events["game"], events["seq"], events["code"])

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
