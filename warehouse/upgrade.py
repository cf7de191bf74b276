"""`flip7 warehouse upgrade RUN`: rewrite a run written with an older event-log schema in place.

Schema v3 (and v2, whose files also carry a `shard` column) stored one events row per event:
`game, round, seq, code`. Schema v4 stores one row per (game, round) with the round's codes as a
list, a HIT folded into the event after it (flip7.events.fold_rows states the rule the pipeline
writes with; this module applies it without importing the pipeline). The upgrade rewrites each
committed shard's files (events first, games last, each under a temporary name then renamed over
the old file, as the pipeline writes them), then records the new version and row counts in the
manifest. Readers refuse the run until the manifest says v4, and an interrupted upgrade can be
run again: files already in the new layout are left as they are.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from flip7.events import HIT_SHIFT, fold_rows  # noqa: F401  (HIT_SHIFT: the stored form's flag)
from warehouse.lake import SCHEMA_VERSION, Snapshot, data_root, snapshot

#: The schema versions this upgrade reads.
UPGRADABLE = (2, 3)
#: As pipeline.lake: zstd unless the options say otherwise, one row group per shard file, and
#: WRITE_OPTIONS (tests hold them equal).
ROW_GROUP_ROWS = 1 << 20
WRITE_OPTIONS: dict[str, dict[str, object]] = {
    "events": {
        "use_dictionary": ["codes.list.element"],
        "write_statistics": ["game"],
        "write_batch_size": 1 << 16,
    },
    "rounds": {
        "use_dictionary": ["policy"],
        "write_statistics": ["game", "round"],
        "write_batch_size": 1 << 16,
        "compression": "lz4",
    },
    "games": {
        "use_dictionary": ["policy", "lineup", "ruleset", "variant"],
        "write_statistics": ["game", "cell", "pair"],
        "compression": "lz4",
    },
}
_TMP_MARK = ".tmp-"  # pipeline.lake.TMP_MARK: leftovers are removed by the pipeline's resume


@dataclass(frozen=True)
class Upgraded:
    """What an upgrade did: the run, the versions, files rewritten and left as they were."""

    run: str
    old_version: object
    new_version: int
    rewritten: int
    kept: int


def events_v4(table: pa.Table) -> pa.Table:
    """A v3 (or v2) events table, one row per event, as the v4 table."""
    rows = fold_rows(*(table.column(c).to_numpy() for c in ("game", "round", "seq", "code")))
    element = pa.field("element", pa.int64(), nullable=False)
    lists = pa.ListArray.from_arrays(
        pa.array(rows["offsets"]), pa.array(rows["codes"]), type=pa.list_(element)
    )
    schema = pa.schema(
        [
            pa.field("game", pa.int64(), nullable=False),
            pa.field("round", pa.int16(), nullable=False),
            pa.field("seq", pa.int32(), nullable=False),
            pa.field("codes", pa.list_(element), nullable=False),
        ]
    )
    arrays = [pa.array(rows["game"]), pa.array(rows["round"]), pa.array(rows["seq"]), lists]
    return pa.Table.from_arrays(arrays, schema=schema)


def compact_v4(table: pa.Table) -> pa.Table:
    """A v3 (or v2) rounds or games table as v4 stores it: no `shard` column, no nulls."""
    if "shard" in table.column_names:
        table = table.drop_columns(["shard"])
    return table.cast(pa.schema([f.with_nullable(False) for f in table.schema]))


def _is_v4(table_name: str, schema: pa.Schema) -> bool:
    if table_name == "events":
        return "codes" in schema.names
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
        for name in ("events", "rounds", "games"):
            file = shard.files[name]
            if not snap.exists(file):
                continue
            schema = pq.read_schema(file, filesystem=snap.fs)
            if _is_v4(name, schema):
                kept += 1
                if name == "events":
                    rows[str(shard.shard)] = pq.read_metadata(file, filesystem=snap.fs).num_rows
                continue
            table = pq.read_table(file, filesystem=snap.fs)
            new = events_v4(table) if name == "events" else compact_v4(table)
            _write(snap, file, new, WRITE_OPTIONS[name])
            rewritten += 1
            if name == "events":
                rows[str(shard.shard)] = new.num_rows
        if progress is not None:
            progress(i + 1, len(snap.shards))
    for key, info in (manifest.get("shards") or {}).items():
        if key in rows and isinstance(info, dict) and isinstance(info.get("rows"), dict):
            info["rows"]["events"] = rows[key]
    manifest["schema_version"] = SCHEMA_VERSION
    text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
    snap.write_bytes(path, text.encode("utf-8"))
    return Upgraded(run, version, SCHEMA_VERSION, rewritten, kept)


def _write(snap: Snapshot, path: str, table: pa.Table, options: dict[str, object]) -> None:
    """Write a Parquet file under a temporary name on the lake's filesystem, then rename."""
    tmp = f"{path}{_TMP_MARK}{secrets.token_hex(6)}"
    settings: dict[str, object] = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS}
    pq.write_table(table, tmp, filesystem=snap.fs, **{**settings, **options})  # type: ignore[arg-type]
    snap.fs.move(tmp, path)
