"""The unit of work: simulate one shard of games into Arrow tables (pure, no Ray, no I/O).

A shard is a contiguous range of games of one cell. Game `i` of a cell is fully determined by
the spec: seed `derive_seed(root_seed, pair, i)` (cells in one common-random-number pair group
share `pair`, so they see the same shuffles), line-up rotated by `i` seats when rotation is on,
first dealer seat 0. So rows never depend on shard size, worker count or cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from flip7.engine import Engine
from flip7.events import WIDTH, EventKind
from flip7.observation import BUSTED
from flip7.policies import parse_policies
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from pipeline.schema import EVENTS, GAMES, ROUNDS


@dataclass(frozen=True)
class ShardTask:
    """Everything a worker needs to simulate games [start, stop) of one cell."""

    run: str
    shard: int
    cell: int
    pair: int
    lineup: tuple[str, ...]  # policy specs, one per seat, before rotation
    ruleset: str
    variant: str
    root_seed: int
    rotate: bool
    game_offset: int  # game id of the cell's game 0 (ids are unique within a run)
    start: int
    stop: int
    capture_events: bool = True

    @property
    def n_players(self) -> int:
        return len(self.lineup)

    @property
    def n_games(self) -> int:
        return self.stop - self.start


def game_seed(root_seed: int, pair: int, index: int) -> int:
    """The seed of game `index` of a cell in pair group `pair`."""
    return derive_seed(root_seed, pair, index)


def simulate_shard(task: ShardTask) -> dict[str, pa.Table]:
    """Play the shard's games; return the `events`, `rounds` and `games` tables."""
    ruleset = parse_ruleset(task.ruleset)
    base = parse_policies(list(task.lineup))
    n = task.n_players
    flat: list[int] = []
    ev_counts: list[int] = []
    r_cols: dict[str, list[int]] = {
        k: [] for k in ("game", "round", "seat", "dealer", "score", "total", "status")
    }
    r_policy: list[str] = []
    r_flip7: list[bool] = []
    g_cols: dict[str, list[int]] = {
        k: [] for k in ("game", "seat", "cell_game", "seed", "rounds", "total", "rank", "events")
    }
    g_policy: list[str] = []
    g_lineup: list[str] = []
    g_winner: list[bool] = []
    g_capped: list[bool] = []
    for i in range(task.start, task.stop):
        seats = rotated(base, i) if task.rotate else list(base)
        specs = [p.spec for p in seats]
        seed = game_seed(task.root_seed, task.pair, i)
        game_id = task.game_offset + i
        result = Engine(ruleset, seats, seed, capture=task.capture_events).run()
        n_ev = len(result.events) // WIDTH
        flat += result.events
        ev_counts.append(n_ev)
        totals = [0] * n
        for r, scores in enumerate(result.round_scores, 1):
            status = result.round_status[r - 1]
            f7 = result.round_flip7[r - 1]
            dealer = result.round_dealers[r - 1]
            for s in range(n):
                totals[s] += scores[s]
                r_cols["game"].append(game_id)
                r_cols["round"].append(r)
                r_cols["seat"].append(s)
                r_cols["dealer"].append(dealer)
                r_cols["score"].append(scores[s])
                r_cols["total"].append(totals[s])
                r_cols["status"].append(status[s])
                r_policy.append(specs[s])
                r_flip7.append(f7 == s)
        lineup = ",".join(specs)
        for s in range(n):
            better = sum(1 for t in result.totals if t > result.totals[s])
            g_cols["game"].append(game_id)
            g_cols["seat"].append(s)
            g_cols["cell_game"].append(i)
            g_cols["seed"].append(seed)
            g_cols["rounds"].append(result.rounds)
            g_cols["total"].append(result.totals[s])
            g_cols["rank"].append(better + 1)
            g_cols["events"].append(n_ev)
            g_policy.append(specs[s])
            g_lineup.append(lineup)
            g_winner.append(result.winner == s)
            g_capped.append(result.capped)
    return {
        "events": events_table(task.shard, flat, ev_counts, task.game_offset + task.start),
        "rounds": _rounds_table(task.shard, r_cols, r_policy, r_flip7),
        "games": _games_table(task, g_cols, g_policy, g_lineup, g_winner, g_capped),
    }


def events_table(
    shard: int, flat: Sequence[int], counts: Sequence[int], first_game: int
) -> pa.Table:
    """Flat event buffers of consecutive games -> the `events` table (vectorised, no per-row
    Python objects): game ids, per-game sequence numbers and round numbers are derived."""
    arr = np.asarray(flat, dtype=np.int16).reshape(-1, WIDTH)
    counts_arr = np.asarray(counts, dtype=np.int64)
    total = int(counts_arr.sum())
    games = np.repeat(np.arange(first_game, first_game + len(counts), dtype=np.int64), counts_arr)
    starts = np.repeat(np.cumsum(counts_arr) - counts_arr, counts_arr)
    seq = (np.arange(total, dtype=np.int64) - starts).astype(np.int32)
    kind = arr[:, 0].astype(np.int8)
    # Round numbers: ROUND_START carries its round in `value`; every later event inherits it.
    is_start = kind == EventKind.ROUND_START
    marker = np.where(is_start, arr[:, 4], 0).astype(np.int16)
    idx = np.where(is_start, np.arange(total), -1)
    np.maximum.accumulate(idx, out=idx) if total else None
    rnd = np.where(idx >= 0, marker[np.maximum(idx, 0)], 0).astype(np.int16)
    # Events after the last ROUND_END of a game (GAME_END, ROUND_CAP) keep the last round.
    return pa.table(
        {
            "shard": pa.array(np.full(total, shard, dtype=np.int32)),
            "game": pa.array(games),
            "round": pa.array(rnd),
            "seq": pa.array(seq),
            "kind": pa.array(kind),
            "player": pa.array(arr[:, 1].astype(np.int8)),
            "card": pa.array(arr[:, 2].astype(np.int8)),
            "target": pa.array(arr[:, 3].astype(np.int8)),
            "value": pa.array(arr[:, 4]),
        },
        schema=EVENTS,
    )


def _dict_array(values: list[str]) -> pa.Array:
    return (
        pa.array(values, type=pa.string())
        .dictionary_encode()
        .cast(pa.dictionary(pa.int32(), pa.string()))
    )


def _rounds_table(
    shard: int, cols: dict[str, list[int]], policy: list[str], flip7: list[bool]
) -> pa.Table:
    n = len(policy)
    status = np.asarray(cols["status"], dtype=np.int8)
    return pa.table(
        {
            "shard": pa.array(np.full(n, shard, dtype=np.int32)),
            "game": pa.array(np.asarray(cols["game"], dtype=np.int64)),
            "round": pa.array(np.asarray(cols["round"], dtype=np.int16)),
            "seat": pa.array(np.asarray(cols["seat"], dtype=np.int8)),
            "policy": _dict_array(policy),
            "dealer": pa.array(np.asarray(cols["dealer"], dtype=np.int8)),
            "score": pa.array(np.asarray(cols["score"], dtype=np.int16)),
            "total": pa.array(np.asarray(cols["total"], dtype=np.int32)),
            "busted": pa.array(status == BUSTED),
            "flip7": pa.array(flip7, type=pa.bool_()),
            "status": pa.array(status),
        },
        schema=ROUNDS,
    )


def _games_table(
    task: ShardTask,
    cols: dict[str, list[int]],
    policy: list[str],
    lineup: list[str],
    winner: list[bool],
    capped: list[bool],
) -> pa.Table:
    n = len(policy)

    def const(value: str) -> pa.Array:
        return _dict_array([value] * n)

    return pa.table(
        {
            "shard": pa.array(np.full(n, task.shard, dtype=np.int32)),
            "game": pa.array(np.asarray(cols["game"], dtype=np.int64)),
            "seat": pa.array(np.asarray(cols["seat"], dtype=np.int8)),
            "policy": _dict_array(policy),
            "cell": pa.array(np.full(n, task.cell, dtype=np.int32)),
            "cell_game": pa.array(np.asarray(cols["cell_game"], dtype=np.int32)),
            "pair": pa.array(np.full(n, task.pair, dtype=np.int32)),
            "lineup": _dict_array(lineup),
            "ruleset": const(task.ruleset),
            "variant": const(task.variant),
            "seed": pa.array(np.asarray(cols["seed"], dtype=np.int64)),
            "first_dealer": pa.array(np.zeros(n, dtype=np.int8)),
            "rounds": pa.array(np.asarray(cols["rounds"], dtype=np.int16)),
            "total": pa.array(np.asarray(cols["total"], dtype=np.int32)),
            "rank": pa.array(np.asarray(cols["rank"], dtype=np.int8)),
            "winner": pa.array(winner, type=pa.bool_()),
            "capped": pa.array(capped, type=pa.bool_()),
            "events": pa.array(np.asarray(cols["events"], dtype=np.int32)),
        },
        schema=GAMES,
    )
