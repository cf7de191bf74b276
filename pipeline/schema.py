"""The event log's Parquet schema: the contract between the pipeline and the warehouse.

Three tables, each a hive-partitioned dataset `<table>/run=<run>/players=<n>/shard-<shard>.parquet`:

- `events`: one row per engine event: its ids (game, round, seq) and `code`, the event's
  five small integers (kind, player, card, target, value; see `flip7.events` for what each means
  per kind) packed into one int64 by `flip7.events.pack`. One packed column instead of five makes
  the file 3x cheaper to write and 5% smaller (benchmarks/kernel.py measures it); the warehouse's
  `stg_events` view, `unpack_events` here and `flip7.events.unpack` give the five columns back.
- `rounds`: one row per player per round (compact; what most queries read).
- `games`:  one row per player per game (compact; the seed and line-up to replay it).

Every row is unique and orderable by its run, game and (events, rounds) round: `(run, game, seq)`
for events, `(run, game, round, seat)` for rounds, `(run, game, seat)` for games. `run`,
`players` and `shard` live in the path (hive partition directories and the file name), not in
the files: the warehouse's staging views add them to every row (a constant column would cost
CPU to encode in every shard for nothing). Strings are dictionary-encoded. Bump
SCHEMA_VERSION on any change; the manifest records it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from flip7.events import CODE_BITS, CODE_OFFSETS, CODE_SHIFTS, FIELDS

#: 2: the events table packs kind..value into `code`; 3: `shard` only in the file name.
SCHEMA_VERSION = 3

_dict = pa.dictionary(pa.int32(), pa.string())

EVENTS = pa.schema(
    [
        ("game", pa.int64()),
        ("round", pa.int16()),
        ("seq", pa.int32()),
        ("code", pa.int64()),  # flip7.events.pack(kind, player, card, target, value)
    ]
)

ROUNDS = pa.schema(
    [
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


def pack_codes(columns: dict[str, np.ndarray]) -> np.ndarray:
    """The `code` column of events given as five integer columns (flip7.events.pack on arrays).
    A field out of its bit range is a ValueError naming it."""
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
    """kind, player, card, target (int8) and value (int32) columns of an event `code` column."""
    code = np.asarray(code, dtype=np.int64)
    out = {
        name: (((code >> shift) & ((1 << bits) - 1)) - off).astype(np.int8)
        for name, shift, bits, off in zip(
            FIELDS, CODE_SHIFTS, CODE_BITS, CODE_OFFSETS, strict=False
        )
    }
    out["value"] = (code >> CODE_SHIFTS[4]).astype(np.int32)
    return out


def unpack_events(table: pa.Table) -> pa.Table:
    """An events table with `code` replaced by the five readable columns (kind..value), e.g.
    `unpack_events(pq.read_table(path))`: what stg_events gives SQL, for Python readers."""
    i = table.schema.get_field_index("code")
    if i < 0:
        raise ValueError(f"not an events table (no `code` column): {table.column_names}")
    cols = unpack_codes(table.column(i).to_numpy())
    out = table.remove_column(i)
    for j, name in enumerate(FIELDS):
        out = out.add_column(i + j, name, pa.array(cols[name]))
    return out


def pack_events(table: pa.Table) -> pa.Table:
    """The inverse of unpack_events: five readable columns back into `code` (EVENTS schema)."""
    cols = {name: table.column(name).to_numpy() for name in FIELDS}
    rest = {name: table.column(name) for name in EVENTS.names if name != "code"}
    return pa.table({**rest, "code": pack_codes(cols)}, schema=EVENTS)
