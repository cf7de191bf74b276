"""The unit of work: simulate one shard of games into Arrow tables (pure, no Ray, no I/O).

A shard is a contiguous range of games of one cell. Game `i` of a cell is fully determined by
the spec: seed `derive_seed(root_seed, pair, i)` (cells in one common-random-number pair group
share `pair`, so they see the same shuffles), line-up rotated by `i` seats when rotation is on,
first dealer seat 0. So rows never depend on shard size, worker count or cluster.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from flip7.cards import Deck
from flip7.events import FIELDS, WIDTH, EventKind
from flip7.observation import BUSTED
from flip7.policies import parse_policies
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import rotated
from flip7.variants import Variant, parse_variant
from lakecontract import arrow, codec
from pipeline.codebook import index_codes
from pipeline.rollups import rollup_of_columns, rollup_table
from pipeline.schema import GAMES, ROUNDS, pack_codes, rows_table
from pipeline.schema import events_table as stored_events


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
    #: auto (the compiled kernel when it can play the line-up, else the reference engine),
    #: kernel or reference: the rows are the same, only the speed differs.
    engine: str = "auto"
    #: A user-declared deck (copies per card id) for a `...(deck=custom)` variant, else empty.
    deck: tuple[int, ...] = ()
    #: (A, B) when the spec compares two policies ([stop] compare): the task also returns the
    #: paired sums of A - B over its games (pipeline.sequential.compare_sums).
    compare: tuple[str, ...] = ()
    #: True when the spec stops by its ranking ([stop] test = "ranking"): the task also returns
    #: its head-to-head sums (pipeline.ranking.ahead_rows).
    ahead: bool = False

    @property
    def n_players(self) -> int:
        return len(self.lineup)

    @property
    def n_games(self) -> int:
        return self.stop - self.start


def task_variant(task: ShardTask) -> Variant:
    """The task's variant, with its declared deck when the variant says `deck=custom`."""
    return parse_variant(task.variant, Deck("custom", task.deck) if task.deck else None)


def game_seed(root_seed: int, pair: int, index: int) -> int:
    """The seed of game `index` of a cell in pair group `pair`."""
    return derive_seed(root_seed, pair, index)


def simulate_shard(
    task: ShardTask, engine: str | None = None, stored: bool = False
) -> dict[str, pa.Table]:
    """Play the shard's games; return the `events`, `rounds`, `rollups` and `games` tables:
    the rows readers see, or with `stored` the events and rounds as the files store them
    (lakecontract.codec; what a shard task writes).

    The loop only plays games and appends each result's buffers to flat lists; every row of the
    three tables is then built with numpy in one pass (no per-row Python work), which keeps the
    cost of the tables small next to the engine's. `engine` (default: the task's): `auto` plays
    the shard in the compiled kernel when it can (`_kernel_tables`: the same rows), `kernel`
    insists on it, `reference` uses the reference engine.
    """
    engine = engine or task.engine
    if engine != "reference":
        tables = _kernel_tables(task, engine, stored)
        if tables is not None:
            return tables
    ruleset = parse_ruleset(task.ruleset)
    base = parse_policies(list(task.lineup))
    n = task.n_players
    k = task.n_games
    flat: list[int] = []  # every game's event buffer, concatenated
    ev_counts: list[int] = []  # events per game
    n_rounds: list[int] = []  # rounds per game
    r_scores: list[int] = []  # [round][seat] of every game, flattened
    r_status: list[int] = []  # likewise
    r_dealer: list[int] = []  # per round
    r_flip7: list[int] = []  # per round: the Flip 7 seat or -1
    g_totals: list[int] = []  # [game][seat], flattened
    g_winner: list[int] = []  # per game
    g_capped: list[bool] = []
    seeds: list[int] = []
    chain = itertools.chain.from_iterable
    variant = task_variant(task)
    for i in range(task.start, task.stop):
        seats = rotated(base, i) if task.rotate else base
        seed = game_seed(task.root_seed, task.pair, i)
        result = variant.new_engine(ruleset, seats, seed, capture=task.capture_events).run()
        flat += result.events
        ev_counts.append(len(result.events) // WIDTH)
        n_rounds.append(result.rounds)
        r_scores += chain(result.round_scores)
        r_status += chain(result.round_status)
        r_dealer += result.round_dealers
        r_flip7 += result.round_flip7
        g_totals += result.totals
        g_winner.append(result.winner)
        g_capped.append(result.capped)
        seeds.append(seed)

    game_ids = np.arange(
        task.game_offset + task.start, task.game_offset + task.stop, dtype=np.int64
    )
    rounds_arr = np.asarray(n_rounds, dtype=np.int64)
    seat_of_row = np.tile(np.arange(n, dtype=np.int8), k)
    # Seat s of game i holds base policy (s - i) mod n when seats rotate (flip7.simulate.rotated).
    shift = (
        np.arange(task.start, task.stop, dtype=np.int64) % n
        if task.rotate
        else np.zeros(k, np.int64)
    )
    specs = [p.spec for p in base]
    policy_names, base_to_name = np.unique(np.asarray(specs, dtype=object), return_inverse=True)
    names = [str(s) for s in policy_names]

    # games: one row per (game, seat).
    g_base = (np.tile(np.arange(n), k) - np.repeat(shift, n)) % n
    totals = np.asarray(g_totals, dtype=np.int32).reshape(k, n)
    rank = (totals[:, None, :] > totals[:, :, None]).sum(axis=2) + 1  # ties share the better rank
    lineups = {r: ",".join(specs[(s - r) % n] for s in range(n)) for r in set(shift.tolist())}
    lineup_keys = sorted(lineups)
    lineup_idx = np.searchsorted(np.asarray(lineup_keys, dtype=np.int64), shift)
    games = _games_table(
        task,
        {
            "game": np.repeat(game_ids, n),
            "seat": seat_of_row,
            "policy": arrow.dictionary(base_to_name[g_base], names),
            "cell_game": np.repeat(np.arange(task.start, task.stop, dtype=np.int32), n),
            "lineup": arrow.dictionary(np.repeat(lineup_idx, n), [lineups[r] for r in lineup_keys]),
            "seed": np.repeat(np.asarray(seeds, dtype=np.int64), n),
            "rounds": np.repeat(rounds_arr.astype(np.int16), n),
            "total": totals.reshape(-1),
            "rank": rank.reshape(-1).astype(np.int8),
            "winner": seat_of_row == np.repeat(np.asarray(g_winner, dtype=np.int8), n),
            "capped": np.repeat(np.asarray(g_capped, dtype=np.bool_), n),
            "events": np.repeat(np.asarray(ev_counts, dtype=np.int32), n),
        },
    )

    # rounds: one row per (game, round, seat), in that order.
    total_rounds = int(rounds_arr.sum())
    game_of_round = np.repeat(np.arange(k), rounds_arr)
    first_round = np.cumsum(rounds_arr) - rounds_arr  # index of each game's first round
    round_no = np.arange(total_rounds, dtype=np.int64) - first_round[game_of_round] + 1
    scores = np.asarray(r_scores, dtype=np.int32).reshape(total_rounds, n)
    running = np.cumsum(scores, axis=0)  # game totals: a cumulative sum restarted per game
    before = np.zeros((k, n), dtype=np.int32)
    starts = first_round[rounds_arr > 0]
    before[rounds_arr > 0] = running[starts] - scores[starts]
    game_totals = running - before[game_of_round]
    status = np.asarray(r_status, dtype=np.int8)
    r_seat = np.tile(np.arange(n, dtype=np.int8), total_rounds)
    r_base = (r_seat - np.repeat(shift[game_of_round], n)) % n
    rounds = arrow.table(
        {
            "game": np.repeat(game_ids[game_of_round], n),
            "round": np.repeat(round_no.astype(np.int16), n),
            "seat": r_seat,
            "policy": arrow.dictionary(base_to_name[r_base], names),
            "dealer": np.repeat(np.asarray(r_dealer, dtype=np.int8), n),
            "score": scores.reshape(-1).astype(np.int16),
            "total": game_totals.reshape(-1),
            "busted": status == BUSTED,
            "flip7": r_seat == np.repeat(np.asarray(r_flip7, dtype=np.int8), n),
            "status": status,
        },
        ROUNDS,
    )
    events = events_table(flat, ev_counts, task.game_offset + task.start)
    rollups = rollup_table(games, rounds, n)
    if stored:
        events = codec.encode_events(events, index_codes)
        rounds = codec.encode_rounds(rounds, check=False)
    return {
        "events": events,
        "rounds": rounds,
        "rollups": rollups,
        "games": games,
    }


def events_table(
    flat: Sequence[int] | np.ndarray, counts: Sequence[int], first_game: int
) -> pa.Table:
    """Flat event buffers of consecutive games -> the stored `events` table (vectorised, no
    per-row Python objects): game ids, per-game sequence numbers and round numbers are derived,
    then the events grouped per game (pipeline.schema.events_table).
    `flat` may be a list of ints (the reference engine's buffers) or an integer array."""
    games, rnd, _seq, code = flat_events(flat, counts, first_game)
    return stored_events(games, rnd, code)


def flat_events(
    flat: Sequence[int] | np.ndarray, counts: Sequence[int], first_game: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(game, round, seq, packed code) of every event of flat event buffers of consecutive
    games: one entry per event."""
    if isinstance(flat, np.ndarray):
        arr = flat.astype(np.int16, copy=False).reshape(-1, WIDTH)
    else:
        # The fastest list -> array path measured here (about 14 ns per int, a fifth of the
        # pipeline's overhead over the engine).
        arr = np.fromiter(flat, dtype=np.int16, count=len(flat)).reshape(-1, WIDTH)
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
    return games, rnd, seq, pack_codes(dict(zip(FIELDS, arr.T, strict=True)))


def _const(value: str, n: int) -> pa.DictionaryArray:
    return arrow.dictionary(np.zeros(n, dtype=np.int32), [value])


def _games_table(task: ShardTask, cols: dict[str, np.ndarray | pa.Array]) -> pa.Table:
    n = len(cols["game"])
    order = {
        "game": cols["game"],
        "seat": cols["seat"],
        "policy": cols["policy"],
        "cell": np.full(n, task.cell, dtype=np.int32),
        "cell_game": cols["cell_game"],
        "pair": np.full(n, task.pair, dtype=np.int32),
        "lineup": cols["lineup"],
        "ruleset": _const(task.ruleset, n),
        "variant": _const(task.variant, n),
        "seed": cols["seed"],
        "first_dealer": np.zeros(n, dtype=np.int8),
        "rounds": cols["rounds"],
        "total": cols["total"],
        "rank": cols["rank"],
        "winner": cols["winner"],
        "capped": cols["capped"],
        "events": cols["events"],
    }
    return arrow.table(order, GAMES)


def _kernel_tables(task: ShardTask, engine: str, stored: bool) -> dict[str, pa.Table] | None:
    """The shard played by flip7.kernel (event for event the reference engine's games) with its
    columns straight from the kernel's buffers (with `stored`, the stored events and rounds
    straight from them too); None when the kernel cannot play it."""
    from flip7.kernel import choose_engine, derive_seeds
    from flip7.kernel.columns import shard_columns

    ruleset = parse_ruleset(task.ruleset)
    base = parse_policies(list(task.lineup))
    variant = task_variant(task)
    if choose_engine(engine, base, ruleset, variant)[0] != "kernel":
        return None
    n, k = task.n_players, task.n_games
    shift = (
        np.arange(task.start, task.stop, dtype=np.int64) % n
        if task.rotate
        else np.zeros(k, np.int64)
    )
    seeds = derive_seeds(task.root_seed, task.pair, task.start, task.stop)
    cols = shard_columns(
        ruleset,
        base,
        seeds,
        shift,
        task.game_offset + task.start,
        capture=task.capture_events,
        variant=variant,
    )
    specs = [p.spec for p in base]
    policy_names, base_to_name = np.unique(np.asarray(specs, dtype=object), return_inverse=True)
    names = [str(s) for s in policy_names]
    lineups = {r: ",".join(specs[(s - r) % n] for s in range(n)) for r in set(shift.tolist())}
    lineup_keys = sorted(lineups)
    lineup_idx = np.searchsorted(np.asarray(lineup_keys, dtype=np.int64), shift)
    to_name = base_to_name.astype(np.int32)
    g_pol, r_pol = to_name[cols.games["policy"]], to_name[cols.rounds["policy"]]
    games = _games_table(
        task,
        {
            **cols.games,
            "policy": arrow.dictionary(g_pol, names),
            "cell_game": np.repeat(np.arange(task.start, task.stop, dtype=np.int32), n),
            "lineup": arrow.dictionary(np.repeat(lineup_idx, n), [lineups[r] for r in lineup_keys]),
            "seed": np.repeat(seeds.astype(np.int64), n),
        },
    )
    ev = cols.events
    if stored:
        r = cols.rounds
        rounds = codec.stored_rounds(
            cols.games["game"][::n],
            cols.games["rounds"][::n],
            g_pol,
            r["dealer"][::n],
            r["score"],
            r["busted"],
            r["flip7"],
            r["status"],
            names,
        )
        events = codec.stored_events(
            ev["game"], ev["round_offsets"], ev["rounds"], ev["offsets"], ev["codes"], index_codes
        )
    else:
        rounds = arrow.table({**cols.rounds, "policy": arrow.dictionary(r_pol, names)}, ROUNDS)
        events = rows_table(
            ev["game"], ev["round_offsets"], ev["rounds"], ev["offsets"], ev["codes"]
        )
    # The rollup from the kernel's own arrays (no pass back through the Arrow tables).
    shard = {
        "cell": task.cell,
        "variant": task.variant,
        "ruleset": task.ruleset,
        "seating": lineups[int(shift[0])] if k else None,
        "first_game": task.start,
    }
    rollups = rollup_of_columns(
        {**cols.games, "policy": g_pol}, {**cols.rounds, "policy": r_pol}, names, n, shard
    )
    return {"events": events, "rounds": rounds, "rollups": rollups, "games": games}
