"""The lake on disk (or any pyarrow filesystem): paths, atomic writes, shard files, manifests.

The layout, schema versions, manifest shape, run-name rule and the store's checks are the lake
contract (lakecontract), shared with the warehouse and the dashboard.

A file is written under a temporary name that does not end in `.parquet`
(`shard-00012.parquet.tmp-<random>`) and renamed when complete. A shard renames events first,
then rounds and rollups, and games last: its games file is its commit marker. Re-running a shard
overwrites the same four names. The root is a local path (made absolute, so that every Ray worker on this
machine sees the same place) or a URI such as `s3://bucket/prefix` or `file:///shared/data`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import socket
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

# The contract's names this package's modules (and benchmarks) import from here, re-exported.
from lakecontract import codec
from lakecontract.layout import ROW_GROUP_ROWS as ROW_GROUP_ROWS
from lakecontract.layout import TABLES as TABLE_ORDER
from lakecontract.layout import TMP_MARK as TMP_MARK
from lakecontract.layout import WRITE_OPTIONS as WRITE_OPTIONS
from lakecontract.layout import default_root as default_root
from lakecontract.manifest import check_manifest
from lakecontract.names import check_run_name as check_run_name
from lakecontract.names import is_run_name
from lakecontract.store import LakeUnreachable as LakeUnreachable
from lakecontract.store import check_bucket, probe_store, store_error
from lakecontract.store import store_timeout as store_timeout


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
        probe_store(uri)  # a store that never answers: a few seconds, not minutes
        try:
            fs, base = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"cannot open data location {root!r}: {exc}") from None
        except OSError as exc:
            raise store_error(uri, exc) from None
        if (
            isinstance(fs, pafs.LocalFileSystem)
            and os.path.exists(base)
            and not os.path.isdir(base)
        ):
            raise ValueError(
                f"data location {root!r} is a file, not a directory; give a directory "
                "(it is created if missing) or a URI such as s3://bucket/prefix"
            )
        check_bucket(fs, base, uri)
        return cls(uri, fs, base.rstrip("/"))

    # -- paths --------------------------------------------------------------------------------

    def shard_path(self, table: str, run: str, players: int, shard: int) -> str:
        check_run_name(run)
        return f"{self.base}/{table}/run={run}/players={players}/shard-{shard:05d}.parquet"

    def run_dir(self, run: str) -> str:
        check_run_name(run)
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
        """zstd unless `options` say otherwise, large row groups; via a temporary name, then
        rename."""
        self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        tmp = self._tmp(path)
        settings: dict[str, Any] = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS}
        codec.write_table(table, tmp, filesystem=self.fs, **{**settings, **(options or {})})
        self.fs.move(tmp, path)

    def read_text(self, path: str) -> str:
        with self.fs.open_input_stream(path) as f:
            data: bytes = f.read()
        return data.decode("utf-8")

    def exists(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type != pafs.FileType.NotFound)

    # -- manifests ----------------------------------------------------------------------------

    def read_manifest(self, run: str) -> dict[str, Any] | None:
        """The run's manifest, None if it has none; a ValueError naming the file when it is not
        a manifest of this run (not JSON, not an object, another run's, missing fields)."""
        path = self.manifest_path(run)
        if not self.exists(path):
            return None
        try:
            manifest = json.loads(self.read_text(path))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"manifest {path} is not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError(
                f"manifest {path} is not a run manifest (JSON nested too deep to read)"
            ) from None
        check_manifest(manifest, run, path)
        return dict(manifest)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        manifest["updated"] = now()
        text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
        self.write_bytes(self.manifest_path(manifest["run"]), text.encode("utf-8"))

    def load_manifest(self, run: str) -> dict[str, Any]:
        """The run's manifest, or FileNotFoundError listing the runs that exist."""
        manifest = self.read_manifest(run)
        if manifest is None:
            if any(self.exists(d) for d in self.run_table_dirs(run)):
                raise FileNotFoundError(
                    f"run {run!r} under {self.uri} has shard files but no manifest (looked for "
                    f"{self.manifest_path(run)}): its driver never recorded it, or the manifest "
                    "was deleted; run its spec again to rewrite it"
                )
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
        return sorted(n for n in names if is_run_name(n) and self.exists(self.manifest_path(n)))

    # -- run data -----------------------------------------------------------------------------

    def run_table_dirs(self, run: str) -> list[str]:
        check_run_name(run)
        return [f"{self.base}/{table}/run={run}" for table in TABLE_ORDER]

    def delete_run(self, run: str) -> None:
        """Remove a run's data files and its manifest directory: only after checking that the
        directory holds that run's manifest, and only the run's own partitions."""
        self.load_manifest(run)  # a valid name whose manifest names this run, or an error
        for path in [*self.run_table_dirs(run), self.run_dir(run)]:
            if self.exists(path):
                self.fs.delete_dir(path)

    def recorded_files(self, manifest: dict[str, Any], shard: str) -> dict[str, str]:
        """The paths of a recorded shard's files, per table (its cell gives the field size)."""
        info = manifest["shards"][shard]
        players = next((c["players"] for c in manifest["cells"] if c["cell"] == info["cell"]), None)
        if players is None:
            raise ValueError(f"shard {shard} of run {manifest['run']!r} names no cell of the run")
        return {t: self.shard_path(t, manifest["run"], players, int(shard)) for t in TABLE_ORDER}

    def missing_shards(
        self, manifest: dict[str, Any], shards: list[str] | None = None
    ) -> dict[int, str]:
        """The recorded shards whose files are not all there at their recorded sizes, each
        with what is wrong ('games file gone'); `shards`: only these. The manifest must be read
        before this is called (a shard is recorded only once its files are committed, so a
        file absent now was removed, not still being written)."""
        keys = list(manifest["shards"]) if shards is None else shards
        if not keys:
            return {}
        if len(keys) <= 4:  # a few shards: ask for their files alone
            infos = {}
            for key in keys:
                paths = list(self.recorded_files(manifest, key).values())
                infos |= {i.path: i for i in self.fs.get_file_info(paths)}
        else:  # a listing of the run's tables: one request per thousand files on a store
            infos = {}
            for d in self.run_table_dirs(manifest["run"]):
                sel = pafs.FileSelector(d, recursive=True, allow_not_found=True)
                infos |= {i.path: i for i in self.fs.get_file_info(sel)}
        out: dict[int, str] = {}
        for key in keys:
            sizes = manifest["shards"][key].get("bytes") or {}
            rows = manifest["shards"][key]["rows"]
            for table, path in self.recorded_files(manifest, key).items():
                if table not in rows:  # a table the run's schema does not have
                    continue
                info = infos.get(path)
                if info is None or info.type != pafs.FileType.File:
                    out[int(key)] = f"{table} file gone"
                    break
                if table in sizes and info.size != sizes[table]:
                    out[int(key)] = (
                        f"{table} file has {info.size} bytes, the manifest recorded {sizes[table]}"
                    )
                    break
        return out

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


# -- the driver that owns a running run ---------------------------------------------------------


def _proc_start(pid: int) -> int | None:
    """The start time of process `pid` in clock ticks since boot (Linux), None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return int(stat.rsplit(b")", 1)[1].split()[19])


def driver_record() -> dict[str, Any]:
    """Who is writing a run: this process (host, pid, its start ticks, when)."""
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "pid_start": _proc_start(os.getpid()),
        "started": now(),
    }


def driver_alive(manifest: dict[str, Any]) -> bool | None:
    """Whether the driver a `running` manifest names is still alive: True, False, or None when
    this machine cannot tell (another host, or no driver recorded)."""
    driver = manifest.get("driver")
    if not isinstance(driver, dict) or driver.get("host") != socket.gethostname():
        return None
    pid = driver.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by someone else
    start = _proc_start(pid)
    recorded = driver.get("pid_start")
    if start is not None and isinstance(recorded, int) and start != recorded:
        return False  # the pid was reused by another process
    return True


def run_status(manifest: dict[str, Any]) -> str:
    """The manifest's status, except that a run stopped by its user (Ctrl-C, SIGTERM: recorded
    `failed` with that reason) or a `running` run whose driver this machine sees dead is
    `interrupted` (resumable with --resume)."""
    status = str(manifest["status"])
    if status == "running" and driver_alive(manifest) is False:
        return "interrupted"
    if status == "failed" and manifest.get("error") in STOPPED:
        return "interrupted"
    return status


#: The errors a driver records when its user stops it (pipeline.run.stop_reason).
STOPPED = ("interrupted", "terminated")


def now() -> str:
    """UTC time, ISO 8601, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def missing_text(missing: dict[int, str], limit: int = 5) -> str:
    """'3 (games file gone), 7 (...)' for the first `limit` shards, then '...'."""
    items = [f"{k} ({why})" for k, why in sorted(missing.items())[:limit]]
    return ", ".join(items) + (", ..." if len(missing) > limit else "")
