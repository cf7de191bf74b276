"""`flip7 warehouse upgrade RUN`: rewrite a run written with an older lake schema in place.

This flip7 writes schema v7: the events and rounds files hold a row per game of a few binary
values (lakecontract.codec), because what costs a shard task is the number of values Parquet
encodes, and a game's hundreds of event codes and rounds cells cost a few values that way.
Every reader decodes them back into the rows it always saw: the events table's row per game
with its rounds' lengths and codes as lists, the rounds table's row per seat per round. The
upgrade brings runs of schemas v2 to v6 to that layout:

- v3 (and v2, whose files also carry a `shard` column) stored one events row per event:
  `game, round, seq, code`; v4 one row per (game, round) with the round's codes as a list, a
  HIT folded into the event after it. From v5 on, the log leaves the ROUND_SCOREs to the rounds
  table (flip7.events.store_games states the rule the pipeline writes with; this module applies
  it without importing the pipeline). Before it leaves a round score out, the upgrade checks it
  against the rounds table's score and refuses the run if they differ, so nothing the log said
  is lost.
- Schema v6 added a `rollups` file to every shard, the additive statistics the marts are built
  from: for an older run the upgrade writes it with the warehouse's own SQL definition
  (int_rollups_from_tables, the one verify checks the pipeline's rollups against), from the
  shard's games and rounds.
- Schema v7 stores the events and rounds as a row per game. A stored rounds row keeps each
  seat's scores and rebuilds its running `total` from them, so the upgrade refuses a run whose
  rounds file holds a total that is not the running sum of the seat's scores, naming the game,
  round and seat, instead of losing it.

It rewrites each committed shard's files (events first, games last, each under a temporary name
then renamed over the old file, as the pipeline writes them), a shard's files only once all of
them are converted and checked. Then it records the new version and row counts in the manifest
(the events and rounds files now hold a row per game). Readers refuse the run until the
manifest says v7, and an interrupted upgrade can be run again: files already in the new layout
are left as they are.
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
from lakecontract import codec
from lakecontract.layout import ROW_GROUP_ROWS, TMP_MARK, WRITE_OPTIONS
from warehouse.lake import SCHEMA_VERSION, Shard, Snapshot, data_root, snapshot

#: The schema versions this upgrade reads.
UPGRADABLE = (2, 3, 4, 5, 6)
#: pipeline.schema.EVENTS, the logical events table (tests hold them equal).
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
    if table_name in codec.STORED:
        return codec.is_stored(schema, table_name)
    return "shard" not in schema.names and not any(f.nullable for f in schema)


def _read(snap: Snapshot, path: str, columns: list[str] | None = None) -> pa.Table:
    """A shard file's rows as readers see them (a stored events or rounds file decoded)."""
    with snap.fs.open_input_file(path) as f:
        return codec.read_table(f, snap.table_of(path), columns)


def store(table_name: str, logical: pa.Table, where: str) -> pa.Table:
    """The v7 stored form of a logical events or rounds table (others as they are); a rounds
    table the stored form would not give back exactly (a `total` that is not the running sum
    of its seat's scores, rows out of order) is a ValueError naming `where` and the row."""
    try:
        return codec.encode(table_name, logical, indexer=codec.unique_index, check=True)
    except ValueError as exc:
        raise ValueError(
            f"the {table_name} file {where} does not fit schema v{SCHEMA_VERSION} ({exc}); "
            "upgrading would lose what it says: run its tournament again with this flip7"
        ) from None


def convert_shard(snap: Snapshot, shard: Shard) -> dict[str, pa.Table | None]:
    """Each of the shard's events, rounds and games files in schema v7 (None: a file that is
    so already, or missing), every check done before anything is written."""
    new: dict[str, pa.Table | None] = {}
    for name in ("events", "rounds", "games"):  # rollups: written after, from these
        file = shard.files[name]
        if not snap.exists(file) or _is_current(name, pq.read_schema(file, filesystem=snap.fs)):
            new[name] = None
            continue
        table = pq.read_table(file, filesystem=snap.fs)
        if name == "events" and table.schema.names != EVENTS.names:  # v2, v3, v4
            # the rounds file's scores (the same in every version)
            scores = _read(snap, shard.files["rounds"], ["game", "round", "seat", "score"])
            table = events_v5(table, scores)
        elif name != "events":
            table = compact(table)
        if name == "rounds":  # the stored form's order; reordering rows loses nothing
            table = table.sort_by(
                [("game", "ascending"), ("round", "ascending"), ("seat", "ascending")]
            )
        new[name] = store(name, table, file) if name in codec.STORED else table
    return new


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
    rows: dict[str, dict[str, int]] = {}
    for i, shard in enumerate(snap.shards):
        new = convert_shard(snap, shard)
        for name, table in new.items():
            file = shard.files[name]
            if table is None:
                kept += snap.exists(file)
            else:
                _write(snap, file, table, WRITE_OPTIONS[name])
                rewritten += 1
        rows[str(shard.shard)] = {
            name: table.num_rows
            if table is not None
            else pq.read_metadata(shard.files[name], filesystem=snap.fs).num_rows
            for name, table in new.items()
            if name in codec.STORED and (table is not None or snap.exists(shard.files[name]))
        }
        if progress is not None:
            progress(i + 1, 2 * len(snap.shards))
    kept += sum(snap.exists(s.files["rollups"]) for s in snap.shards)  # write_rollups keeps them
    rollups = write_rollups(
        snap, lambda i: progress(len(snap.shards) + i, 2 * len(snap.shards)) if progress else None
    )
    rewritten += len(rollups)
    for key, info in (manifest.get("shards") or {}).items():
        if isinstance(info, dict) and isinstance(info.get("rows"), dict):
            info["rows"].update(rows.get(key, {}))
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
        # the shard's files read whole and decoded: the SQL reads the logical tables
        arrow = attach(con, one, footers=False, load=True)
        if i == 0:
            build(con, one, layers=("staging",), lake_table=arrow)
            con.execute(f"CREATE VIEW int_rollups_from_tables AS\n{definition}")
        else:
            bind_files(con, one, first_only=True)
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
    """Write a Parquet file under a temporary name on the lake's filesystem, then rename (a
    stored table's codebook or policy names in the file's footer, as the pipeline writes)."""
    tmp = f"{path}{TMP_MARK}{secrets.token_hex(6)}"
    snap.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    settings: dict[str, object] = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS}
    codec.write_table(table, tmp, filesystem=snap.fs, **{**settings, **options})
    snap.fs.move(tmp, path)
