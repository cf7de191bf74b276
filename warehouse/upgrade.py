"""`flip7 warehouse upgrade RUN`: rewrite a run written with an older event-log schema in place.

Schema v3 (and v2, whose files also carry a `shard` column) stored one events row per event:
`game, round, seq, code`. Schema v4 stored one row per (game, round) with the round's codes as a
list, a HIT folded into the event after it. Schema v5 stores one row per game: its rounds'
lengths and its codes, the ROUND_SCOREs left to the rounds table (flip7.events.store_games
states the rule the pipeline writes with; this module applies it without importing the
pipeline). Before it leaves a round score out, the upgrade checks it against the rounds table's
score and refuses the run if they differ, so nothing the log said is lost. It rewrites each
committed shard's files (events first, games last, each under a temporary name then renamed over
the old file, as the pipeline writes them). Schema v6 adds a `rollups` file to every shard, the
additive statistics the marts are built from: the upgrade writes it with the warehouse's own SQL
definition (int_rollups_from_tables, the one verify checks the pipeline's rollups against),
from the shard's games and rounds files. Then it records the new version and row counts in the
manifest. Readers refuse the run until the manifest says v6, and an interrupted upgrade can be
run again: files already in the new layout are left as they are.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from flip7.events import HIT_SHIFT, EventKind, store_games, unfold_codes
from lakecontract.layout import ROW_GROUP_ROWS, TMP_MARK, WRITE_OPTIONS
from warehouse.lake import SCHEMA_VERSION, Snapshot, data_root, snapshot

#: The schema versions this upgrade reads.
UPGRADABLE = (2, 3, 4, 5)
#: pipeline.schema.EVENTS (tests hold them equal).
_INT16S = pa.list_(pa.field("element", pa.int16(), nullable=False))
_INT64S = pa.list_(pa.field("element", pa.int64(), nullable=False))
_DICT = pa.dictionary(pa.int32(), pa.string())
#: pipeline.schema.ROLLUPS (tests hold them equal).
ROLLUPS = pa.schema(
    [
        pa.field(name, kind, nullable=False)
        for name, kind in (
            ("cell", pa.int32()),
            ("variant", _DICT),
            ("ruleset", _DICT),
            ("seating", _DICT),
            ("first_game", pa.int32()),
            ("grouping", _DICT),
            ("figure", _DICT),
            ("policy", _DICT),
            ("opponent", _DICT),
            ("key", pa.int16()),
            *((s, pa.int64()) for s in ("games", "y", "n", "yy", "nn", "yn")),
            ("game_y", _INT64S),
            ("game_n", _INT64S),
        )
    ]
)
EVENTS = pa.schema(
    [
        pa.field("game", pa.int64(), nullable=False),
        pa.field("rounds", _INT16S, nullable=False),
        pa.field("codes", _INT64S, nullable=False),
    ]
)


@dataclass(frozen=True)
class Upgraded:
    """What an upgrade did: the run, the versions, files rewritten and left as they were."""

    run: str
    old_version: object
    new_version: int
    rewritten: int
    kept: int


def flat_events(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(game, round, packed code) of every event of an older events table, in (game, seq) order:
    v3 (or v2) holds a row per event, v4 a row per round with its codes as a list, HITs folded
    (an element at or above 1 << HIT_SHIFT is a HIT and the event after it)."""
    if "code" in table.column_names:  # v2, v3
        table = table.sort_by([("game", "ascending"), ("seq", "ascending")])
        return tuple(  # type: ignore[return-value]
            np.asarray(table.column(c).to_numpy(), dtype=t)
            for c, t in (("game", np.int64), ("round", np.int16), ("code", np.int64))
        )
    table = table.sort_by([("game", "ascending"), ("seq", "ascending")]).combine_chunks()
    codes = table.column("codes")
    lists = codes.chunk(0) if codes.num_chunks else pa.array([], _INT64S)
    lengths = np.diff(np.asarray(lists.offsets, dtype=np.int64))
    stored = np.asarray(lists.flatten(), dtype=np.int64)
    width = 1 + (stored >= (1 << HIT_SHIFT)).astype(np.int64)
    row = np.repeat(np.repeat(np.arange(lengths.shape[0]), lengths), width)
    game = np.asarray(table.column("game").to_numpy(), dtype=np.int64)[row]
    rnd = np.asarray(table.column("round").to_numpy(), dtype=np.int16)[row]
    return game, rnd, unfold_codes(stored)


def check_round_scores(
    game: np.ndarray, rnd: np.ndarray, code: np.ndarray, rounds: pa.Table
) -> None:
    """A ValueError unless the events' ROUND_SCOREs say what the rounds table's scores say
    (the upgrade leaves them out of the events: the rounds table then holds them alone)."""
    scored = (code & 31) == EventKind.ROUND_SCORE
    logged = np.stack(
        [game[scored], rnd[scored], ((code[scored] >> 5) & 63) - 1, code[scored] >> 23], axis=1
    )
    table = rounds.select(["game", "round", "seat", "score"])
    kept = np.stack(
        [np.asarray(table.column(c).to_numpy(), dtype=np.int64) for c in table.column_names], axis=1
    )
    logged = logged[np.lexsort(logged[:, 2::-1].T)] if logged.size else logged.reshape(0, 4)
    kept = kept[np.lexsort(kept[:, 2::-1].T)] if kept.size else kept.reshape(0, 4)
    if logged.shape != kept.shape or not np.array_equal(logged, kept):
        differ = np.flatnonzero((logged != kept).any(axis=1)) if logged.shape == kept.shape else []
        where = (
            f"game {int(logged[differ[0], 0])} round {int(logged[differ[0], 1])} seat "
            f"{int(logged[differ[0], 2])}: ROUND_SCORE {int(logged[differ[0], 3])}, rounds "
            f"table {int(kept[differ[0], 3])}"
            if len(differ)
            else f"{logged.shape[0]} ROUND_SCORE events for {kept.shape[0]} round rows"
        )
        raise ValueError(
            f"the events' round scores disagree with the rounds table ({where}); "
            "`flip7 warehouse verify` shows what else is wrong: upgrading would lose them"
        )


def events_v5(table: pa.Table, rounds: pa.Table) -> pa.Table:
    """An older events table (v2, v3 or v4) as the v5 table, its round scores checked against
    `rounds`, the same shard's rounds table."""
    game, rnd, code = flat_events(table)
    check_round_scores(game, rnd, code, rounds)
    rows = store_games(game, rnd, code)
    arrays = [
        pa.array(rows["game"], pa.int64()),
        pa.ListArray.from_arrays(
            pa.array(rows["round_offsets"], pa.int32()),
            pa.array(rows["rounds"], pa.int16()),
            type=_INT16S,
        ),
        pa.ListArray.from_arrays(
            pa.array(rows["offsets"], pa.int32()),
            pa.array(rows["codes"], pa.int64()),
            type=_INT64S,
        ),
    ]
    return pa.Table.from_arrays(arrays, schema=EVENTS)


def compact(table: pa.Table) -> pa.Table:
    """A v3 (or v2) rounds or games table as v4 and v5 store it: no `shard` column, no nulls."""
    if "shard" in table.column_names:
        table = table.drop_columns(["shard"])
    return table.cast(pa.schema([f.with_nullable(False) for f in table.schema]))


def _is_current(table_name: str, schema: pa.Schema) -> bool:
    if table_name == "events":
        return schema.names == EVENTS.names
    return "shard" not in schema.names and not any(f.nullable for f in schema)


def upgrade(
    data_dir: str | None,
    run: str,
    progress: Callable[[int, int], None] | None = None,
) -> Upgraded:
    """Rewrite run `run` of the lake in this flip7's event-log schema (see the module
    docstring). A ValueError names a run of a version this cannot read."""
    root = data_root(data_dir)
    snap = snapshot(root, [run])
    path = snap.manifests.get(run)
    if path is None:
        raise ValueError(f"run {run!r} under {root} has no manifest; nothing to upgrade")
    manifest = snap.read_json(path)
    if not isinstance(manifest, dict) or manifest.get("run") != run:
        raise ValueError(f"manifest {path} is not run {run!r}'s manifest")
    version = manifest.get("schema_version")
    if version == SCHEMA_VERSION:
        return Upgraded(run, version, SCHEMA_VERSION, 0, 0)
    if version not in UPGRADABLE:
        raise ValueError(
            f"run {run!r} was written with event-log schema v{version}; this upgrade reads "
            f"v{', v'.join(map(str, UPGRADABLE))}: run its tournament again with this flip7"
        )
    rewritten = kept = 0
    rows: dict[str, int] = {}
    for i, shard in enumerate(snap.shards):
        for name in ("events", "rounds", "games"):  # rollups: written below, from these
            file = shard.files[name]
            if not snap.exists(file):
                continue
            schema = pq.read_schema(file, filesystem=snap.fs)
            if _is_current(name, schema):
                kept += 1
                if name == "events":
                    rows[str(shard.shard)] = pq.read_metadata(file, filesystem=snap.fs).num_rows
                continue
            table = pq.read_table(file, filesystem=snap.fs)
            if name == "events":
                # the rounds file as it is (its scores are the same in every version)
                scores = pq.read_table(
                    shard.files["rounds"],
                    filesystem=snap.fs,
                    columns=["game", "round", "seat", "score"],
                )
                new = events_v5(table, scores)
                rows[str(shard.shard)] = new.num_rows
            else:
                new = compact(table)
            _write(snap, file, new, WRITE_OPTIONS[name])
            rewritten += 1
        if progress is not None:
            progress(i + 1, 2 * len(snap.shards))
    rollups = write_rollups(
        snap, lambda i: progress(len(snap.shards) + i, 2 * len(snap.shards)) if progress else None
    )
    rewritten += len(rollups)
    for key, info in (manifest.get("shards") or {}).items():
        if isinstance(info, dict) and isinstance(info.get("rows"), dict):
            if key in rows:
                info["rows"]["events"] = rows[key]
            if key in rollups:
                info["rows"]["rollups"] = rollups[key]
    manifest["schema_version"] = SCHEMA_VERSION
    text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
    snap.write_bytes(path, text.encode("utf-8"))
    return Upgraded(run, version, SCHEMA_VERSION, rewritten, kept)


def write_rollups(snap: Snapshot, progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Write the `rollups` file of every shard of the snapshot that has none, computed by the
    SQL definition from its games and rounds files, one shard at a time (bounded memory);
    {shard: rows} of those written. A shard that has one keeps it (verify checks it)."""
    from warehouse.build import bind_files, build, sql_files
    from warehouse.db import attach, scratch

    todo = [s for s in snap.shards if not snap.exists(s.files["rollups"])]
    written: dict[str, int] = {}
    if not todo:
        return written
    definition = sql_files("intermediate")["int_rollups_from_tables"]
    con = scratch()
    for i, shard in enumerate(todo):
        one = snap.subset([shard])
        arrow = None if one.local else attach(con, one, footers=False, load=True)
        if i == 0:
            build(con, one, layers=("staging",), lake_table=arrow)
            con.execute(f"CREATE VIEW int_rollups_from_tables AS\n{definition}")
        else:
            bind_files(con, one)
        table = con.sql(
            f"SELECT {', '.join(ROLLUPS.names)} FROM int_rollups_from_tables"
        ).to_arrow_table()
        table = pa.Table.from_arrays(
            [
                table[f.name].dictionary_encode().cast(f.type)
                if pa.types.is_dictionary(f.type)
                else table[f.name].cast(f.type)
                for f in ROLLUPS
            ],
            schema=ROLLUPS,
        )
        _write(snap, shard.files["rollups"], table, WRITE_OPTIONS["rollups"])
        written[str(shard.shard)] = table.num_rows
        if progress is not None:
            progress(i + 1)
    con.close()
    return written


def _write(snap: Snapshot, path: str, table: pa.Table, options: dict[str, object]) -> None:
    """Write a Parquet file under a temporary name on the lake's filesystem, then rename."""
    tmp = f"{path}{TMP_MARK}{secrets.token_hex(6)}"
    snap.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    settings: dict[str, object] = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS}
    pq.write_table(table, tmp, filesystem=snap.fs, **{**settings, **options})  # type: ignore[arg-type]
    snap.fs.move(tmp, path)
