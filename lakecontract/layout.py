"""Where the lake keeps what, and the versions of what it keeps (written by the pipeline, read by
the warehouse and the dashboard):

    <root>/<table>/run=<run>/players=<n>/shard-<shard:05d>.parquet   table: events, rounds, rollups, games
    <root>/runs/<run>/manifest.json  and  <root>/runs/<run>/spec.toml
    <root>/runs/<run>/lease.json     while a driver writes the run (pipeline.lease)

A file is written under a temporary name that does not end in `.parquet` (TMP_MARK) and renamed
when complete; a shard renames its games file last: that file is its commit marker.
"""

from __future__ import annotations

import os

#: The tables of a shard, in rename order: games last (the commit marker).
TABLES = ("events", "rounds", "rollups", "games")
#: 2: the events table packs kind..value into `code`; 3: `shard` only in the file name;
#: 4: one events row per round, `codes` a list with HITs folded into the next event;
#: 5: one events row per game with its rounds' lengths, ROUND_SCOREs left to the rounds table;
#: 6: a fourth table per shard, `rollups` (pipeline.rollups), the marts' additive statistics;
#: 7: events and rounds stored compactly, a row per game of a few binary values
#: (lakecontract.codec), read back as the same rows as before.
#: The pipeline writes this version and the warehouse's views read it; a run of another is
#: refused by name (`flip7 warehouse upgrade` brings an older one up).
SCHEMA_VERSION = 7
#: The first schema version whose shards have a rollups file.
ROLLUPS_SINCE = 6
#: The first schema version whose events and rounds files are stored compactly (codec).
STORED_SINCE = 7
TMP_MARK = ".tmp-"
ROW_GROUP_ROWS = 1 << 20  # large row groups: one per shard file at the usual shard sizes

#: Per-table Parquet options beyond zstd. What costs a writer is the number of values Parquet
#: encodes (about 10 ns each), so the events and rounds files hold a row per game of a few
#: binary values (lakecontract.codec) and no column holds nulls (no definition levels). The
#: events' indices are left uncompressed: LZ4 would take 400 bytes a game to 340 for about
#: 0.6 µs a game, more than the rest of the file costs; the rounds' cells compress to a third
#: with LZ4 for nothing measurable. Only the games table's strings are worth a dictionary.
#: Min/max statistics only help where readers prune: game ids (replay finds a game by its id,
#: DuckDB skips row groups by them) and the games' cells and pairs; every other column's
#: statistics are pure cost. Encoding 64k rows at a time instead of Arrow's 1024 saves 6% on
#: the games table. benchmarks/kernel.py prints the cost per table; the warehouse's upgrade
#: rewrites files with the same options.
WRITE_BATCH_ROWS = 1 << 16
WRITE_OPTIONS: dict[str, dict[str, object]] = {
    "events": {
        "use_dictionary": False,
        "write_statistics": ["game"],
        "write_batch_size": WRITE_BATCH_ROWS,
        "compression": "none",
    },
    "rounds": {
        "use_dictionary": False,
        "write_statistics": ["game"],
        "write_batch_size": WRITE_BATCH_ROWS,
        "compression": "lz4",
    },
    "rollups": {
        "use_dictionary": [
            "variant",
            "ruleset",
            "seating",
            "grouping",
            "figure",
            "policy",
            "opponent",
        ],
        "write_statistics": ["cell"],
        "compression": "lz4",
    },
    "games": {
        "use_dictionary": ["policy", "lineup", "ruleset", "variant"],
        "write_statistics": ["game", "cell", "pair"],
        "write_batch_size": WRITE_BATCH_ROWS,
        "compression": "lz4",
    },
}


def default_root() -> str:
    """`$FLIP7_DATA`, or ./data."""
    return os.environ.get("FLIP7_DATA") or "data"


def shard_name(shard: int) -> str:
    """The file name of a shard's file in each table."""
    return f"shard-{shard:05d}.parquet"
