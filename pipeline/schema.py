"""The event log's Parquet schema: the contract between the pipeline and the warehouse.

Four tables, each a hive-partitioned dataset `<table>/run=<run>/players=<n>/shard-<shard>.parquet`:

- `events`: one row per game: its `game` id, `rounds` (how many stored codes each of its
  rounds has, rounds in order) and `codes`, the game's events in order as a list of int64. Each
  event is its five small integers (kind, player, card, target, value; see `flip7.events` for
  what each means per kind) packed into one int64 by `flip7.events.pack`, except that the
  ROUND_SCOREs are left out (the rounds table's `score` holds each one) and a HIT is folded
  into the event after it when that event is the same player's (almost always the DRAW it
  causes): that element is the next event's code plus `(hit value + 1) << 55` (HIT_SHIFT).
  An event's sequence number is implicit (`flip7.events.restore_round_scores` states it). A
  row per game without the round scores writes a sixth fewer codes than a row per round with
  them, one list a game instead of one a round and almost no ids: each value Parquet encodes
  costs about 10 ns, and each list some more (`benchmarks/event_layouts.py` measures the
  layouts). The warehouse's `stg_events` view,
  `unpack_events` and `event_codes` here give one row per event back, HITs, round scores and
  sequence numbers included.
- `rounds`: one row per player per round (compact; what most queries read).
- `games`:  one row per player per game (compact; the seed and line-up to replay it).
- `rollups`: a few hundred rows per shard, the additive statistics the marts are built from
  (pipeline.rollups): what answers come from, at any number of games.

Every row is unique and orderable by its run and ids: `(run, game)` for events,
`(run, game, round, seat)` for rounds, `(run, game, seat)` for games. `run`, `players` and
`shard` live in the path (hive partition directories and the file name), not in the files: the
warehouse's staging views add them to every row (a constant column would cost CPU to encode in
every shard for nothing). Strings are dictionary-encoded; no column holds nulls (declared so:
Parquet then writes no definition levels). Bump SCHEMA_VERSION (lakecontract.layout) on any
change; the manifest records it, and `flip7 warehouse upgrade RUN` rewrites an older run's files.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from flip7.events import (
    CODE_BITS,
    CODE_OFFSETS,
    CODE_SHIFTS,
    FIELDS,
    HIT_SHIFT,
    restore_round_scores,
    store_games,
    unfold_codes,
)
from lakecontract import arrow, codec
from lakecontract.layout import ROLLUPS_SINCE as ROLLUPS_SINCE
from lakecontract.layout import SCHEMA_VERSION as SCHEMA_VERSION

#: An element of `codes` at or above 1 << HIT_SHIFT is an event preceded by a HIT of the same
#: player with value (element >> HIT_SHIFT) - 1; the event itself is the bits below (the rule:
#: flip7.events.fold_rows).
HIT_MASK = (1 << HIT_SHIFT) - 1
#: The upgrade command readers name for a run of an older schema.
UPGRADE = "flip7 warehouse upgrade {run}"

_dict = pa.dictionary(pa.int32(), pa.string())


def _fields(*cols: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind, nullable=False) for name, kind in cols])


#: The events and rounds as readers see them; their files store them compactly
#: (lakecontract.codec, which defines both).
EVENTS = codec.EVENTS
ROUNDS = codec.ROUNDS

GAMES = _fields(
    ("game", pa.int64()),
    ("seat", pa.int8()),
    ("policy", _dict),
    ("cell", pa.int32()),  # the tournament cell (field size x line-up)
    ("cell_game", pa.int32()),  # index of the game within its cell
    # common-random-number group: games with equal (pair, cell_game) share shuffles
    ("pair", pa.int32()),
    ("lineup", _dict),  # the seats' policies, comma-separated, as played (after rotation)
    ("ruleset", _dict),
    ("variant", _dict),
    ("seed", pa.int64()),
    ("first_dealer", pa.int8()),
    ("rounds", pa.int16()),
    ("total", pa.int32()),
    ("rank", pa.int8()),  # 1 = winner; ties share the better rank
    ("winner", pa.bool_()),
    ("capped", pa.bool_()),  # stopped by max_rounds, not by the target
    ("events", pa.int32()),  # events this game logged (HITs included)
)

#: One row per group and figure of the shard (pipeline.rollups states the groupings): the cell,
#: its variant and ruleset, the group (policy, opponent, key) and the six additive sums of the
#: statistics contract over the shard's games.
ROLLUPS = _fields(
    ("cell", pa.int32()),
    ("variant", _dict),
    ("ruleset", _dict),
    ("seating", _dict),  # the seats' policies in the shard's first game (games.lineup)
    ("first_game", pa.int32()),  # that game's index in its cell (games.cell_game)
    ("grouping", _dict),
    ("figure", _dict),
    ("policy", _dict),  # '*': every policy of the cell
    ("opponent", _dict),  # '' unless grouping = 'versus'
    ("key", pa.int16()),  # seat, turn position or round score; -1 where none
    ("games", pa.int64()),
    ("y", pa.int64()),
    ("n", pa.int64()),
    ("yy", pa.int64()),
    ("nn", pa.int64()),
    ("yn", pa.int64()),
    # grouping 'policy', figures 'win' and 'points': the y and n of each game the policy sat in,
    # in game order (what pairs two cells' games without reading them); empty on other rows
    ("game_y", pa.list_(pa.field("element", pa.int64(), nullable=False))),
    ("game_n", pa.list_(pa.field("element", pa.int64(), nullable=False))),
)

TABLES: dict[str, pa.Schema] = {
    "events": EVENTS,
    "rounds": ROUNDS,
    "rollups": ROLLUPS,
    "games": GAMES,
}


def pack_codes(columns: dict[str, np.ndarray]) -> np.ndarray:
    """The packed code of each event given as five integer columns (flip7.events.pack on
    arrays). A field out of its bit range is a ValueError naming it."""
    value = np.asarray(columns["value"], dtype=np.int64)
    if value.size and not (-(1 << 31) <= value.min() and value.max() < 1 << 31):
        raise ValueError(f"event value out of range: {value.min()}..{value.max()} (32 bits)")
    code = value << CODE_SHIFTS[4]
    for name, shift, bits, off in zip(FIELDS, CODE_SHIFTS, CODE_BITS, CODE_OFFSETS, strict=False):
        x = np.asarray(columns[name], dtype=np.int64) + off
        if x.size and not (0 <= x.min() and x.max() < 1 << bits):
            lo, hi = int(x.min()) - off, int(x.max()) - off
            raise ValueError(f"event {name} out of range: {lo}..{hi} ({bits} bits, offset {off})")
        code |= x << shift
    return code


def unpack_codes(code: np.ndarray) -> dict[str, np.ndarray]:
    """kind, player, card, target (int8) and value (int32) columns of packed event codes."""
    code = np.asarray(code, dtype=np.int64)
    out = {
        name: (((code >> shift) & ((1 << bits) - 1)) - off).astype(np.int8)
        for name, shift, bits, off in zip(
            FIELDS, CODE_SHIFTS, CODE_BITS, CODE_OFFSETS, strict=False
        )
    }
    out["value"] = (code >> CODE_SHIFTS[4]).astype(np.int32)
    return out


def events_table(game: np.ndarray, rnd: np.ndarray, code: np.ndarray) -> pa.Table:
    """The stored events table of flat events in (game, seq) order, every event included: one
    row per game, ROUND_SCOREs left out and HITs folded (flip7.events.store_games). The kernel
    writes its events in that form as it plays; tests hold the two equal."""
    rows = store_games(game, rnd, code)
    return rows_table(
        rows["game"], rows["round_offsets"], rows["rounds"], rows["offsets"], rows["codes"]
    )


def rows_table(
    game: np.ndarray,
    round_offsets: np.ndarray,
    rounds: np.ndarray,
    offsets: np.ndarray,
    codes: np.ndarray,
) -> pa.Table:
    """The stored events table from its game rows: `rounds[round_offsets[i]:round_offsets[i+1]]`
    are game i's round lengths and `codes[offsets[i]:offsets[i+1]]` its codes."""
    return arrow.table(
        {
            "game": game,
            "rounds": arrow.list_array(round_offsets, rounds, EVENTS.field("rounds").type),
            "codes": arrow.list_array(offsets, codes, EVENTS.field("codes").type),
        },
        EVENTS,
    )


def check_events_table(table: pa.Table) -> None:
    """A ValueError unless `table` has the stored events columns of this schema version."""
    if table.column_names[: len(EVENTS)] != EVENTS.names:
        older = (
            " (an older schema: upgrade its run with `flip7 warehouse upgrade RUN`)"
            if "code" in table.column_names or "seq" in table.column_names
            else ""
        )
        raise ValueError(
            f"not an events table of schema v{SCHEMA_VERSION}: columns {table.column_names}, "
            f"expected {EVENTS.names}" + older
        )


def stored_codes(table: pa.Table) -> dict[str, np.ndarray]:
    """The stored events table's events as stored, unfolded, in (game, seq) order: `game`
    (int64), `round` (int16) and the packed `code` (int64) of every event but the round scores
    (what flip7.events.restore_round_scores takes). A stored events file's rows (one file's)
    are decoded first."""
    table = codec.logical("events", table)
    check_events_table(table)
    table = table.combine_chunks()

    def lists(name: str) -> pa.ListArray:
        column = table.column(name)
        return column.chunk(0) if column.num_chunks else pa.array([], EVENTS.field(name).type)

    rounds, codes = lists("rounds"), lists("codes")
    games = np.asarray(table.column("game"), dtype=np.int64)
    per_game = np.diff(np.asarray(rounds.offsets, dtype=np.int64))
    lengths = np.asarray(rounds.flatten(), dtype=np.int64)
    stored = np.asarray(codes.flatten(), dtype=np.int64)
    if int(lengths.sum()) != stored.shape[0] or not np.array_equal(
        np.diff(np.asarray(codes.offsets, dtype=np.int64)),
        np.bincount(np.repeat(np.arange(games.shape[0]), per_game), lengths, games.shape[0]),
    ):
        raise ValueError("an events row's round lengths do not add up to its codes")
    first = np.concatenate([[0], np.cumsum(per_game)[:-1]]) if per_game.size else per_game
    round_no = np.arange(lengths.shape[0]) - np.repeat(first, per_game) + 1
    round_of = np.repeat(np.arange(lengths.shape[0]), lengths)
    # Each stored element stands for one event, or two (the HIT it folds, then itself).
    width = 1 + (stored >= (1 << HIT_SHIFT)).astype(np.int64)
    return {
        "game": np.repeat(np.repeat(games, per_game)[round_of], width),
        "round": np.repeat(round_no[round_of], width).astype(np.int16),
        "code": unfold_codes(stored),
    }


def event_codes(table: pa.Table, rounds: pa.Table) -> dict[str, np.ndarray]:
    """Every event of the stored events table, in (game, seq) order: `game` (int64), `round`
    (int16), `seq` (int32) and the packed `code` (int64), HITs unfolded and the round scores
    put back from `rounds` (the same games' rounds table, or its game, round, seat and score
    columns; one file's rows as stored are decoded first)."""
    flat = stored_codes(table)
    rounds = codec.logical("rounds", rounds) if "cells" in rounds.column_names else rounds
    order = rounds.select(["game", "round", "seat", "score"]).sort_by(
        [("game", "ascending"), ("round", "ascending"), ("seat", "ascending")]
    )
    seat = np.asarray(order.column("seat"), dtype=np.int64)
    n = int(seat.max()) + 1 if seat.size else 1
    scores = np.asarray(order.column("score"), dtype=np.int64)
    if scores.shape[0] % n:
        raise ValueError(f"the rounds table's rows are not {n} seats a round")
    return restore_round_scores(flat["game"], flat["round"], flat["code"], scores, n)


def unpack_events(table: pa.Table, rounds: pa.Table) -> pa.Table:
    """The stored events table as one row per event with the five readable columns: game,
    round, seq, kind, player, card, target, value (what stg_events gives SQL), e.g.
    `unpack_events(pq.read_table(events_path), pq.read_table(rounds_path))`."""
    flat = event_codes(table, rounds)
    cols = unpack_codes(flat["code"])
    return pa.table(
        {
            "game": flat["game"],
            "round": flat["round"],
            "seq": flat["seq"],
            **{name: cols[name] for name in FIELDS},
        }
    )


def pack_events(table: pa.Table) -> pa.Table:
    """The inverse of unpack_events: rows of game, round, seq and the five readable columns
    (in game, seq order, every event) back into the stored events table."""
    cols = {name: table.column(name).to_numpy() for name in FIELDS}
    return events_table(
        table.column("game").to_numpy(), table.column("round").to_numpy(), pack_codes(cols)
    )
