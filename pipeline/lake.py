"""The lake on disk (or any pyarrow filesystem): paths, atomic writes, shard files, manifests.

Layout (the lake contract shared with the warehouse and the dashboard):

    <root>/<table>/run=<run>/players=<n>/shard-<shard:05d>.parquet   table: events, rounds, games
    <root>/runs/<run>/manifest.json  and  <root>/runs/<run>/spec.toml

A file is written under a temporary name that does not end in `.parquet`
(`shard-00012.parquet.tmp-<random>`) and renamed when complete. A shard renames events first,
rounds second and games last: its games file is its commit marker. Re-running a shard overwrites
the same three names. The root is a local path (made absolute, so that every Ray worker on this
machine sees the same place) or a URI such as `s3://bucket/prefix` or `file:///shared/data`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

TABLE_ORDER = ("events", "rounds", "games")  # rename order: games last (the commit marker)
TMP_MARK = ".tmp-"
ROW_GROUP_ROWS = 1 << 20  # large row groups: one per shard file at the usual shard sizes

#: Per-table Parquet options beyond zstd. Writing the events file is most of a shard's cost
#: once the compiled kernel plays the games. Only the packed event `code` is worth a dictionary
#: (a few thousand distinct values); the ids are plain (zstd squeezes their runs and steps).
#: Min/max statistics only help where readers prune: game ids (replay finds a game by its id,
#: DuckDB skips row groups by them) and, in rounds, the other ids; every other column's
#: statistics are pure cost (every row group holds every kind, seat and score). Measured on
#: one core, per 4-player game: events 6.7 -> 6.1 us, rounds 2.8 -> 2.3 us, games 0.8 -> 0.55
#: us against statistics and dictionaries everywhere (benchmarks/kernel.py prints the events
#: comparison). Encoding 64k rows at a time instead of Arrow's 1024 saves 6% more of the events.
WRITE_BATCH_ROWS = 1 << 16
WRITE_OPTIONS: dict[str, dict[str, object]] = {
    "events": {
        "use_dictionary": ["code"],
        "write_statistics": ["game"],
        "write_batch_size": WRITE_BATCH_ROWS,
    },
    "rounds": {
        "use_dictionary": ["policy"],
        "write_statistics": ["game", "round"],
        "write_batch_size": WRITE_BATCH_ROWS,
    },
    "games": {
        "use_dictionary": ["policy", "lineup", "ruleset", "variant"],
        "write_statistics": ["game", "cell", "pair"],
    },
}


def default_root() -> str:
    """`$FLIP7_DATA`, or ./data."""
    return os.environ.get("FLIP7_DATA") or "data"


def normalize_root(root: str) -> str:
    """A root every process on this machine resolves alike: URIs as given, paths made absolute."""
    if "://" in root:
        return root.rstrip("/")
    return os.path.abspath(os.path.expanduser(root))


@dataclass(frozen=True)
class Lake:
    """A data root resolved to a pyarrow filesystem and a base path on it."""

    uri: str
    fs: pafs.FileSystem
    base: str

    @classmethod
    def open(cls, root: str) -> Lake:
        uri = normalize_root(root)
        try:
            fs, base = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"cannot open data location {root!r}: {exc}") from None
        return cls(uri, fs, base.rstrip("/"))

    # -- paths --------------------------------------------------------------------------------

    def shard_path(self, table: str, run: str, players: int, shard: int) -> str:
        return f"{self.base}/{table}/run={run}/players={players}/shard-{shard:05d}.parquet"

    def run_dir(self, run: str) -> str:
        return f"{self.base}/runs/{run}"

    def manifest_path(self, run: str) -> str:
        return f"{self.run_dir(run)}/manifest.json"

    # -- atomic writes ------------------------------------------------------------------------

    def _tmp(self, path: str) -> str:
        return f"{path}{TMP_MARK}{secrets.token_hex(6)}"

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write via a temporary name, then rename over `path`."""
        self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        tmp = self._tmp(path)
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        self.fs.move(tmp, path)

    def write_parquet(
        self, path: str, table: pa.Table, options: dict[str, Any] | None = None
    ) -> None:
        """zstd, dictionary-encoded, large row groups; via a temporary name, then rename."""
        self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        tmp = self._tmp(path)
        pq.write_table(
            table,
            tmp,
            filesystem=self.fs,
            compression="zstd",
            row_group_size=ROW_GROUP_ROWS,
            **(options or {}),
        )
        self.fs.move(tmp, path)

    def read_text(self, path: str) -> str:
        with self.fs.open_input_stream(path) as f:
            data: bytes = f.read()
        return data.decode("utf-8")

    def exists(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type != pafs.FileType.NotFound)

    # -- manifests ----------------------------------------------------------------------------

    def read_manifest(self, run: str) -> dict[str, Any] | None:
        path = self.manifest_path(run)
        if not self.exists(path):
            return None
        manifest: dict[str, Any] = json.loads(self.read_text(path))
        return manifest

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        manifest["updated"] = now()
        text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
        self.write_bytes(self.manifest_path(manifest["run"]), text.encode("utf-8"))

    def load_manifest(self, run: str) -> dict[str, Any]:
        """The run's manifest, or FileNotFoundError listing the runs that exist."""
        manifest = self.read_manifest(run)
        if manifest is None:
            known = self.runs()
            raise FileNotFoundError(
                f"no run {run!r} under {self.uri} (looked for {self.manifest_path(run)}); "
                + (f"runs there: {', '.join(known)}" if known else "no runs there yet")
            )
        return manifest

    def runs(self) -> list[str]:
        """Names of the runs that have a manifest, sorted."""
        sel = pafs.FileSelector(f"{self.base}/runs", allow_not_found=True)
        names = [
            info.base_name
            for info in self.fs.get_file_info(sel)
            if info.type == pafs.FileType.Directory
        ]
        return sorted(n for n in names if self.exists(self.manifest_path(n)))

    # -- run data -----------------------------------------------------------------------------

    def run_table_dirs(self, run: str) -> list[str]:
        return [f"{self.base}/{table}/run={run}" for table in TABLE_ORDER]

    def delete_run(self, run: str) -> None:
        """Remove a run's data files and its manifest directory."""
        for path in [*self.run_table_dirs(run), self.run_dir(run)]:
            if self.exists(path):
                self.fs.delete_dir(path)

    def remove_temporaries(self, run: str) -> int:
        """Delete leftover `*.parquet.tmp-*` files of a run (from killed writers); count them."""
        removed = 0
        for d in self.run_table_dirs(run):
            sel = pafs.FileSelector(d, recursive=True, allow_not_found=True)
            for info in self.fs.get_file_info(sel):
                if info.type == pafs.FileType.File and TMP_MARK in info.base_name:
                    self.fs.delete_file(info.path)
                    removed += 1
        return removed


def now() -> str:
    """UTC time, ISO 8601, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
