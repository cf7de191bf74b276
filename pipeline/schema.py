"""The event log's Parquet schema: the contract between the pipeline and the warehouse.

Three tables, each a hive-partitioned dataset `<table>/run=<run>/players=<n>/<shard>.parquet`:

- `events`: one row per engine event (see `flip7.events` for what each column means per kind).
- `rounds`: one row per player per round (compact; what most queries read).
- `games`:  one row per player per game (compact; the seed and line-up to replay it).

Every row carries run, shard, game and (events, rounds) round, so it is unique and orderable:
`(run, game, seq)` for events, `(run, game, round, seat)` for rounds, `(run, game, seat)` for
games. `run` and `players` live in the directory names (hive partitions), not in the files.
Strings are dictionary-encoded. Bump SCHEMA_VERSION on any change; the manifest records it.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

_dict = pa.dictionary(pa.int32(), pa.string())

EVENTS = pa.schema(
    [
        ("shard", pa.int32()),
        ("game", pa.int64()),
        ("round", pa.int16()),
        ("seq", pa.int32()),
        ("kind", pa.int8()),
        ("player", pa.int8()),
        ("card", pa.int8()),
        ("target", pa.int8()),
        ("value", pa.int16()),
    ]
)

ROUNDS = pa.schema(
    [
        ("shard", pa.int32()),
        ("game", pa.int64()),
        ("round", pa.int16()),
        ("seat", pa.int8()),
        ("policy", _dict),
        ("dealer", pa.int8()),  # the round's dealer seat
        ("score", pa.int16()),
        ("total", pa.int32()),  # the seat's game total after this round
        ("busted", pa.bool_()),
        ("flip7", pa.bool_()),
        (
            "status",
            pa.int8(),
        ),  # at round end: 0 active (Flip 7 ended it), 1 stayed, 2 frozen, 3 busted
    ]
)

GAMES = pa.schema(
    [
        ("shard", pa.int32()),
        ("game", pa.int64()),
        ("seat", pa.int8()),
        ("policy", _dict),
        ("cell", pa.int32()),  # the tournament cell (field size x line-up)
        ("cell_game", pa.int32()),  # index of the game within its cell
        (
            "pair",
            pa.int32(),
        ),  # common-random-number group: games with equal (pair, cell_game) share shuffles
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
        ("events", pa.int32()),  # event rows this game wrote
    ]
)

TABLES: dict[str, pa.Schema] = {"events": EVENTS, "rounds": ROUNDS, "games": GAMES}
