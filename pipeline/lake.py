"""The lake on disk (or any pyarrow filesystem): paths, atomic writes, shard files, manifests.

Layout (the lake contract shared with the warehouse and the dashboard):

    <root>/<table>/run=<run>/players=<n>/shard-<shard:05d>.parquet   table: events, rounds, rollups, games
    <root>/runs/<run>/manifest.json  and  <root>/runs/<run>/spec.toml
    <root>/runs/<run>/lease.json     while a driver writes the run (pipeline.lease)

A file is written under a temporary name that does not end in `.parquet`
(`shard-00012.parquet.tmp-<random>`) and renamed when complete. A shard renames events first,
then rounds and rollups, and games last: its games file is its commit marker. Re-running a shard
overwrites the same four names. The root is a local path (made absolute, so that every Ray worker on this
machine sees the same place) or a URI such as `s3://bucket/prefix` or `file:///shared/data`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import secrets
import socket
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.schema import ROLLUPS_SINCE

#: rename order: games last (the commit marker)
TABLE_ORDER = ("events", "rounds", "rollups", "games")
TMP_MARK = ".tmp-"
ROW_GROUP_ROWS = 1 << 20  # large row groups: one per shard file at the usual shard sizes

#: Per-table Parquet options beyond zstd. Writing the events file is most of a shard's cost
#: once the compiled kernel plays the games; what costs is the number of values encoded (about
#: 10 ns each), so the events table stores a row per game with its codes as a list, HITs folded
#: and the round scores left to the rounds table (pipeline.schema), and no column holds nulls
#: (no definition levels). Only the packed event codes are worth a dictionary (a few thousand
#: distinct values; the list's leaf is named by its path). Min/max statistics only help where
#: readers prune: game ids (replay finds a game by its id, DuckDB skips row groups by them) and,
#: in rounds, the other ids; every other column's statistics are pure cost. Encoding 64k rows
#: at a time instead of Arrow's 1024 saves 6% more. All three tables are LZ4-compressed: for
#: the events 0.85-0.87x the CPU of zstd for 285 bytes a game instead of 250 (still less than
#: the 315 of a row per round with zstd; benchmarks/event_layouts.py), for the small rounds and
#: games tables 40% less CPU than zstd for 80 more bytes a game (zstd's cost is in the plain
#: small integers it squeezes). benchmarks/kernel.py prints the cost per table and the events
#: file's against a row per event.
WRITE_BATCH_ROWS = 1 << 16
WRITE_OPTIONS: dict[str, dict[str, object]] = {
    "events": {
        "use_dictionary": ["codes.list.element"],
        "write_statistics": ["game"],
        "write_batch_size": WRITE_BATCH_ROWS,
        "compression": "lz4",
    },
    "rounds": {
        "use_dictionary": ["policy"],
        "write_statistics": ["game", "round"],
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
        "compression": "lz4",
    },
}


#: One rule for run names everywhere (a spec's `name`, `--run`, the lake's `run=` partitions and
#: `runs/` directories, `tournament status RUN`, `watch --run`, `replay RUN`): a name is one
#: path segment that cannot climb out of the lake.
RUN_NAME_MAX = 64
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_run_name(name: object, what: str = "run name") -> str:
    """`name` if it is a valid run name, else a one-line ValueError saying what is valid."""
    if (
        not isinstance(name, str)
        or not _RUN_NAME.fullmatch(name)
        or ".." in name
        or len(name) > RUN_NAME_MAX
    ):
        raise ValueError(
            f"{what} {name!r} is not a valid run name; use 1-{RUN_NAME_MAX} letters, digits, "
            "'.', '_' or '-', starting with a letter or digit, without '..'"
        )
    return name


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
        pq.write_table(table, tmp, filesystem=self.fs, **{**settings, **(options or {})})
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
        valid = [n for n in names if _RUN_NAME.fullmatch(n) and ".." not in n]
        return sorted(
            n for n in valid if len(n) <= RUN_NAME_MAX and self.exists(self.manifest_path(n))
        )

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


# -- errors of object stores ---------------------------------------------------------------------
# The warehouse says the same things in the same words (warehouse/lake.py; the warehouse does
# not import the pipeline, and a test keeps the two in step).


class LakeUnreachable(OSError):
    """The lake's store refused or did not answer (no bucket, no credentials, no server)."""


def has_credentials() -> bool:
    """Whether the standard AWS environment names credentials (keys, a profile, a web identity,
    a container's, or a credentials file); an instance role cannot be seen from here."""
    names = (
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    )
    if any(os.environ.get(n) for n in names):
        return True
    config = os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.expanduser(
        "~/.aws/credentials"
    )
    return os.path.isfile(config)


def store_error(root: str, exc: BaseException) -> LakeUnreachable:
    """An error from the lake's store as one line naming the URI and what to fix."""
    text = " ".join(str(exc).split())
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_S3")
    if "NETWORK_CONNECTION" in text or "Could not connect" in text or "curlCode" in text:
        where = f"endpoint {endpoint}" if endpoint else "its endpoint"
        why = (
            f"cannot reach the store of {root} ({where} does not answer); check that the server "
            "runs and AWS_ENDPOINT_URL (or the URI's endpoint_override) points at it"
        )
    elif "NO_SUCH_BUCKET" in text or "bucket does not exist" in text.lower():
        bucket = root.split("://", 1)[-1].split("/", 1)[0]
        why = (
            f"bucket {bucket!r} of {root} does not exist; create it, or point --data / "
            "$FLIP7_DATA at an existing bucket"
        )
    elif not has_credentials():
        why = (
            f"no AWS credentials found to read {root}; set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or run where an instance role gives them"
        )
    elif any(
        k in text
        for k in (
            "ACCESS_DENIED",
            "AccessDenied",
            "InvalidAccessKeyId",
            "SignatureDoesNotMatch",
            "INVALID_ACCESS_KEY_ID",
            "credentials",
            "HTTP response code: 403",
        )
    ):
        why = (
            f"access to {root} denied (missing or wrong credentials); set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for a user that may read it"
        )
    else:
        why = f"cannot read {root}: {text}"
    return LakeUnreachable(why)


#: Seconds an S3 endpoint has to answer before a command gives up on it (a store that takes
#: the connection and never answers would otherwise hold every request for minutes).
STORE_TIMEOUT_ENV = "FLIP7_STORE_TIMEOUT"
DEFAULT_STORE_TIMEOUT = 5.0
#: Seconds of silence before saying that we wait.
STORE_QUIET_SECONDS = 1.0


def store_timeout() -> float:
    """FLIP7_STORE_TIMEOUT seconds (default 5), checked."""
    raw = os.environ.get(STORE_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_STORE_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{STORE_TIMEOUT_ENV}={raw!r}: must be a number of seconds > 0")
    return value


def store_endpoint(root: str) -> str | None:
    """The endpoint an s3:// root is read from when one is set (the URI's endpoint_override,
    else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL); None for AWS's own."""
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(root).query)
    given = (query.get("endpoint_override") or [None])[0]
    if given:
        scheme = (query.get("scheme") or ["https"])[0]
        return given if "://" in given else f"{scheme}://{given}"
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def probe_store(root: str, seconds: float | None = None) -> None:
    """For an s3:// root with an endpoint set: a LakeUnreachable (store_error's line) unless the
    endpoint takes a connection and answers an HTTP request within `seconds` (store_timeout()),
    saying on stderr that it waits once the silence lasts STORE_QUIET_SECONDS."""
    import sys
    import time
    from urllib.parse import urlsplit

    if not root.lower().startswith("s3://"):
        return
    endpoint = store_endpoint(root)
    if not endpoint:
        return
    parts = urlsplit(endpoint)
    host = parts.hostname
    if not host:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return
    seconds = store_timeout() if seconds is None else seconds
    deadline = time.monotonic() + seconds
    unreachable = OSError(f"NETWORK_CONNECTION: {endpoint} did not answer within {seconds:g} s")
    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except OSError:
        raise store_error(root, unreachable) from None
    said = False
    with sock:
        try:
            sock.sendall(f"HEAD / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise store_error(root, unreachable)
                sock.settimeout(min(left, STORE_QUIET_SECONDS))
                try:
                    sock.recv(1)  # any answer, or a close: the endpoint is there
                    return
                except TimeoutError:
                    if not said and time.monotonic() < deadline:
                        print(
                            f"flip7: waiting for the store at {endpoint} to answer (up to "
                            f"{seconds:g} s; {STORE_TIMEOUT_ENV}) ...",
                            file=sys.stderr,
                            flush=True,
                        )
                        said = True
        except OSError as exc:
            if isinstance(exc, LakeUnreachable):
                raise
            raise store_error(root, unreachable) from None


def check_bucket(fs: pafs.FileSystem, base: str, root: str) -> None:
    """On S3, a LakeUnreachable unless the root's bucket exists and answers."""
    if not isinstance(fs, pafs.S3FileSystem):
        return
    bucket = base.split("/", 1)[0]
    try:
        info = fs.get_file_info(bucket)
    except OSError as exc:
        raise store_error(root, exc) from None
    if info.type == pafs.FileType.NotFound:
        raise store_error(root, OSError("NO_SUCH_BUCKET"))


#: Fields every manifest has, with their JSON types (what `status`, `list` and resume read).
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "run": str,
    "status": str,
    "planned_shards": int,
    "planned_games": int,
    "cells": list,
    "shards": dict,
}


def check_manifest(manifest: object, run: str, path: str) -> None:
    """A ValueError naming `path` unless `manifest` is a JSON object of run `run`'s manifest."""
    if not isinstance(manifest, dict):
        raise ValueError(
            f"manifest {path} is not a run manifest (a JSON {type(manifest).__name__}, "
            "expected an object)"
        )
    for key, kind in MANIFEST_FIELDS.items():
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise ValueError(
                f"manifest {path} is not a run manifest (field {key!r} missing or not a "
                f"{getattr(kind, '__name__', kind)})"
            )
    if manifest["run"] != run:
        raise ValueError(
            f"manifest {path} names run {manifest['run']!r}, not {run!r}: it was copied or "
            "edited; move it back under runs/<its run>/ or delete it"
        )
    problem = manifest_shape_problem(manifest)
    if problem is not None:
        raise ValueError(
            f"manifest {path} is not a run manifest ({problem}); it was edited or damaged: "
            "rerun its spec with --overwrite, or delete runs/" + run
        )


#: Counts the lake holds are below 2**63 (Parquet's int64); a manifest's beyond that is forged.
MAX_COUNT = (1 << 63) - 1


def _is_int(x: object, lo: int = 0) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= MAX_COUNT


def _is_num(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def manifest_tables(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The tables a run of the manifest's schema version holds: runs before v6 have no rollups
    (`flip7 warehouse upgrade` computes them)."""
    version = manifest.get("schema_version")
    if _is_int(version) and version < ROLLUPS_SINCE:
        return tuple(t for t in TABLE_ORDER if t != "rollups")
    return TABLE_ORDER


def manifest_shape_problem(manifest: dict[str, Any]) -> str | None:
    """What in a manifest does not have the shape every reader relies on (counts, cells,
    shard records, the [stop] record), in a few words; None when all is well. Checked once
    where a manifest is read, so that no command meets a field of the wrong type later."""
    for key in ("planned_shards", "planned_games"):
        if not _is_int(manifest[key]):
            return f"field {key!r} is {manifest[key]!r}, not a count in 0..2^63-1"
    if not isinstance(manifest.get("created", ""), str):
        return "field 'created' is not a string"
    for i, cell in enumerate(manifest["cells"]):
        if not isinstance(cell, dict):
            return f"cells[{i}] is not an object"
        for key in ("cell", "players", "pair", "games", "game_offset"):
            if not _is_int(cell.get(key)):
                return f"cells[{i}].{key} is {cell.get(key)!r}, not a count"
        lineup = cell.get("lineup")
        if not isinstance(lineup, list) or not all(isinstance(s, str) for s in lineup):
            return f"cells[{i}].lineup is not a list of policy names"
    tables = manifest_tables(manifest)
    for key, info in manifest["shards"].items():
        if not (key.isascii() and key.isdigit()) or not isinstance(info, dict):
            return f"shard entry {key!r} is not a shard number with its record"
        for field_name in ("cell", "start", "stop", "games"):
            if not _is_int(info.get(field_name)):
                return f"shards.{key}.{field_name} is {info.get(field_name)!r}, not a count"
        rows = info.get("rows")
        if not isinstance(rows, dict) or not all(_is_int(rows.get(t)) for t in tables):
            return f"shards.{key}.rows is not a count per table"
        sizes = info.get("bytes", {})
        if not isinstance(sizes, dict) or not all(_is_int(sizes.get(t)) for t in sizes):
            return f"shards.{key}.bytes is not a size per table"
        if not _is_num(info.get("seconds")):
            return f"shards.{key}.seconds is not a number"
        for record in ("stats", "compare"):
            table = info.get(record, {})
            if not isinstance(table, dict) or not all(
                isinstance(v, list) and all(_is_num(x) for x in v) for v in table.values()
            ):
                return f"shards.{key}.{record} is not a list of numbers per name"
    stop = manifest.get("stop")
    if stop:
        return _stop_problem(stop)
    return None


def _stop_problem(stop: object) -> str | None:
    """What is wrong with a manifest's [stop] record (see pipeline.sequential), or None."""
    if not isinstance(stop, dict):
        return "field 'stop' is not an object"
    compare = stop.get("compare")
    if (
        not isinstance(compare, list)
        or len(compare) != 2
        or not all(isinstance(c, str) for c in compare)
    ):
        return "stop.compare is not a pair of policy names"
    if stop.get("test") not in ("sprt", "fixed") or stop.get("metric") not in ("win", "points"):
        return "stop.test or stop.metric is not one a spec can give"
    for key in ("h0", "h1", "alpha", "beta"):
        if not _is_num(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a number"
    if stop["test"] != "sprt":
        return None
    bounds = stop.get("bounds")
    if not isinstance(bounds, list) or len(bounds) != 2 or not all(map(_is_num, bounds)):
        return "stop.bounds is not a pair of numbers"
    for key in ("wave_games", "planned_games"):
        if not _is_int(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a count"
    waves = stop.get("waves", [])
    decision = stop.get("decision")
    looks = [*(waves if isinstance(waves, list) else [None]), *([decision] if decision else [])]
    for look in looks:
        ok = isinstance(look, dict) and _is_int(look.get("games")) and _is_num(look.get("llr"))
        if not ok or not all(look.get(k) is None or _is_num(look[k]) for k in _LOOK_NUMBERS):
            return "stop.waves or stop.decision holds a look that is not games, llr and numbers"
    if decision and not isinstance(decision.get("result"), str):
        return "stop.decision.result is not a string"
    return None


_LOOK_NUMBERS = ("estimate", "half_width")


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
