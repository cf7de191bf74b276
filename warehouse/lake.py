"""Where the lake is, and which of its files a reader may see (a snapshot of committed shards).

The data root is `--data`, else `$FLIP7_DATA`, else `./data` (the lake contract): a local path,
a `file://` URI, `s3://bucket/prefix` (with the standard AWS environment: credentials, region,
`AWS_ENDPOINT_URL` for an S3-compatible store) or any other URI pyarrow's filesystems resolve.
Every read of the lake goes through that pyarrow filesystem: listings, manifests, verify's
records, and (through pyarrow datasets, see warehouse.db) the Parquet files themselves.

A shard is visible only once its `games` file exists: the pipeline renames events first, then
rounds and rollups, and games last, so listing the games files first and then the siblings gives a set of
whole shards even while a tournament writes (on an object store a rename is a copy then a
delete: the games key appears only once whole). Temporary files
(`shard-00012.parquet.tmp-<x>`) never match the shard file name, so they are never read. A
snapshot is what every query of one connection sees; reconnect to see shards committed later.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

# The contract's names this package's modules import from here, re-exported.
from lakecontract.layout import SCHEMA_VERSION as SCHEMA_VERSION
from lakecontract.layout import TABLES as TABLES
from lakecontract.layout import default_root
from lakecontract.manifest import schema_problem as schema_problem
from lakecontract.manifest import view_problem
from lakecontract.names import check_run_name as check_run_name
from lakecontract.store import LakeUnreachable as LakeUnreachable
from lakecontract.store import check_bucket as check_bucket
from lakecontract.store import probe_store
from lakecontract.store import store_error as store_error
from lakecontract.store import store_timeout as store_timeout

_SHARD_PATH = re.compile(r"/run=([^/]+)/players=([^/]+)/(shard-(\d+)\.parquet)$")
#: Footers read at once from a remote store (each is a request or two). On a local disk they
#: are read one after another in the calling thread (`local_footer_rows`): a footer costs less
#: than 0.1 ms of CPU, and handing each file to a pool of threads cost more than that (16,000
#: footers of a 10M-game lake of two runs: 2.2-2.7 s on 4 threads, 1.2 s in one, load 2).
FOOTER_THREADS = 16
#: A Parquet file's magic bytes, at its start and at its end (after the footer's length).
MAGIC = b"PAR1"


class EmptyLakeError(FileNotFoundError):
    """The data root holds no committed shard (or none of the runs asked for)."""


def data_root(data_dir: str | os.PathLike[str] | None = None) -> str:
    """The lake root as given: the argument, else $FLIP7_DATA, else ./data."""
    if data_dir is not None:
        return os.fspath(data_dir)
    return default_root()


def is_uri(root: str) -> bool:
    """True for `scheme://...` roots (s3://, file://, gs://, ...), False for plain paths."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", root) is not None


def resolve(root: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem of a lake root and the root's path on it (absolute for a local
    path). A ValueError names a URI pyarrow does not resolve."""
    if not is_uri(root):
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(root))
    probe_store(root)  # a store that never answers: a few seconds, not minutes
    try:
        fs, base = pafs.FileSystem.from_uri(root.rstrip("/"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(
            f"cannot open data location {root!r} ({exc}); give a directory, file://PATH or a "
            "URI such as s3://bucket/prefix"
        ) from None
    except OSError as exc:
        raise store_error(root, exc) from None
    return fs, base.rstrip("/")


@dataclass(frozen=True)
class Shard:
    """One committed shard: its run, field size, number and its three files' paths (on the
    snapshot's filesystem)."""

    run: str
    players: int
    shard: int
    files: dict[str, str]


@dataclass
class Snapshot:
    """The committed shards of the runs asked for, plus the run manifests found.

    `root` is the lake as given (for messages); `fs` and `base` where it lies; `infos` the
    listed file of every path seen (size, modification time), so that checking a file costs
    no request to the store.
    """

    root: str
    shards: list[Shard] = field(default_factory=list)
    manifests: dict[str, str] = field(default_factory=dict)
    #: Events/rounds files missing beside a committed games file (a damaged lake).
    missing: list[str] = field(default_factory=list)
    fs: pafs.FileSystem = field(default_factory=pafs.LocalFileSystem)
    base: str = ""
    infos: dict[str, pafs.FileInfo] = field(default_factory=dict)
    #: Rows of each committed file, from its footer, once `screen` has read them.
    rows: dict[str, int] = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        """Every run with a manifest or a committed shard, sorted."""
        return sorted({s.run for s in self.shards} | set(self.manifests))

    @property
    def local(self) -> bool:
        """True when the lake is on this machine's filesystem (DuckDB can open its files)."""
        return isinstance(self.fs, pafs.LocalFileSystem)

    def exists(self, path: str) -> bool:
        """Whether `path` was listed (or, for a path never listed, exists now)."""
        if path in self.infos:
            return True
        if self.infos:
            return False
        return bool(self.fs.get_file_info(path).type == pafs.FileType.File)

    def files(self, table: str) -> list[str]:
        """Paths of `table` for every committed shard (absent files left out)."""
        return [s.files[table] for s in self.shards if self.exists(s.files[table])]

    def read_bytes(self, path: str) -> bytes:
        """A file of the lake, read through its filesystem."""
        try:
            with self.fs.open_input_stream(path) as f:
                data: bytes = f.read()
        except FileNotFoundError:
            raise
        except OSError as exc:
            if self.local or "does not exist" in str(exc).lower():
                raise FileNotFoundError(f"{path} not found") from None
            raise store_error(self.root, exc) from None
        return data

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    def read_json(self, path: str) -> object:
        """A JSON file of the lake (ValueError when it is not JSON, or nested too deep)."""
        try:
            return json.loads(self.read_text(path))
        except RecursionError:
            raise ValueError("JSON nested too deep to read") from None

    def inside(self, path: str) -> None:
        """A ValueError unless the folder `path` lies in is inside the lake once symbolic
        links are followed (a local lake: a linked `runs/RUN` must not lead verify to write
        or delete elsewhere)."""
        if not self.local:
            return
        base = os.path.realpath(self.base)
        folder = os.path.realpath(os.path.dirname(path))
        if os.path.commonpath([base, folder]) != base:
            raise ValueError(
                f"{os.path.dirname(path)} leads outside the lake {self.root} (to {folder}, "
                "through a symbolic link): nothing is written or removed there; replace the "
                "link by the folder itself"
            )

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write a file of the lake via a temporary name, then rename (verify's record only)."""
        self.inside(path)
        tmp = f"{path}.tmp"
        try:
            with self.fs.open_output_stream(tmp) as f:
                f.write(data)
            self.fs.move(tmp, path)
        except OSError as exc:
            if self.local:
                raise
            raise store_error(self.root, exc) from None

    def delete(self, path: str) -> None:
        """Remove a file of the lake if it is there."""
        self.inside(path)
        if self.fs.get_file_info(path).type == pafs.FileType.File:
            self.fs.delete_file(path)

    def subset(self, shards: list[Shard]) -> Snapshot:
        """The same lake with only these shards (verify's batches)."""
        return Snapshot(self.root, shards, {}, [], self.fs, self.base, self.infos, self.rows)

    def table_of(self, path: str) -> str:
        """The table a shard file belongs to (one of TABLES)."""
        return path[len(self.base) + 1 :].split("/", 1)[0]


def _listing(fs: pafs.FileSystem, path: str, root: str) -> list[pafs.FileInfo]:
    """Every file under `path` (recursively); [] when there is none."""
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except OSError as exc:
        if isinstance(fs, pafs.LocalFileSystem):
            raise
        raise store_error(root, exc) from None
    return [i for i in infos if i.type == pafs.FileType.File]


def snapshot(root: str | os.PathLike[str], runs: list[str] | None = None) -> Snapshot:
    """List the committed shards (and manifests) under root, optionally for some runs only.

    Raises ValueError for a run name that breaks the rule (check_run_name), EmptyLakeError
    when a run asked for does not exist, naming the runs that do;
    LakeUnreachable when the store refuses or does not answer.
    """
    for run in runs or ():
        check_run_name(run)  # before anything is listed: a name never leads out of the lake
    root = os.fspath(root)
    fs, base = resolve(root)
    if isinstance(fs, pafs.LocalFileSystem) and os.path.isfile(base):
        raise ValueError(f"data location {root!r} is a file, not a lake directory")
    check_bucket(fs, base, root)
    snap = Snapshot(root, fs=fs, base=base)
    wanted = set(runs) if runs else None
    infos = snap.infos
    for info in _listing(fs, f"{base}/runs", root):
        infos[info.path] = info
        parts = info.path[len(base) + 1 :].split("/")
        if len(parts) == 3 and parts[2] == "manifest.json":
            if wanted is None or parts[1] in wanted:
                snap.manifests[parts[1]] = info.path
    snap.manifests = dict(sorted(snap.manifests.items()))

    def listed(table: str) -> list[pafs.FileInfo]:
        if wanted is None:
            return _listing(fs, f"{base}/{table}", root)
        return [i for r in sorted(wanted) for i in _listing(fs, f"{base}/{table}/run={r}", root)]

    # The games files first (the commit markers), then their siblings: whole shards only.
    found = []
    for info in listed("games"):
        m = _SHARD_PATH.search(info.path)
        if (
            m is None
            or not m.group(2).isdigit()
            or info.path != (f"{base}/games/run={m.group(1)}/players={m.group(2)}/{m.group(3)}")
        ):
            continue  # a temporary file of a shard being written, or a stranger
        infos[info.path] = info
        found.append((m.group(1), m.group(2), m.group(3), int(m.group(4))))
    for table in TABLES:
        if table == "games":
            continue
        for info in listed(table):
            infos[info.path] = info
    for run, players, name, number in sorted(found):
        files = {t: f"{base}/{t}/run={run}/players={players}/{name}" for t in TABLES}
        snap.shards.append(Shard(run, int(players), number, files))
        snap.missing += [p for t, p in files.items() if t != "games" and p not in infos]
    if wanted is not None:
        unknown = sorted(wanted - set(snap.runs))
        if unknown:
            known = ", ".join(snapshot(root).runs) or "none"
            raise EmptyLakeError(
                f"no run {', '.join(map(repr, unknown))} under {root} (runs there: {known})"
            )
    return snap


def local_footer_rows(path: str) -> int:
    """The row count in the footer of the local Parquet file `path`, read with two small reads
    (the last 8 bytes, then the footer) and parsed from memory; a ValueError says why the file
    is not readable Parquet (too short, no magic bytes at either end, a footer length beyond
    the file, a footer that does not parse), an OSError when it cannot be read at all."""
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size < 2 * len(MAGIC) + 4:
            raise ValueError(f"{size} bytes: too short for a Parquet file")
        head = os.pread(f.fileno(), len(MAGIC), 0)
        tail = os.pread(f.fileno(), 8, size - 8)
        if head != MAGIC or tail[4:] != MAGIC:
            raise ValueError(f"{size} bytes, without Parquet's magic bytes at its start and end")
        length = int.from_bytes(tail[:4], "little")
        if length > size - 2 * len(MAGIC) - 4:
            raise ValueError(f"its footer length {length} is beyond its {size} bytes")
        footer = os.pread(f.fileno(), length + 8, size - length - 8)
    # The footer and the 8 bytes after it are what a reader of the whole file parses.
    return int(pq.read_metadata(pa.BufferReader(footer)).num_rows)


def unreadable_files(
    snap: Snapshot, runs: set[str] | None = None, previous: Snapshot | None = None
) -> dict[str, str]:
    """{path: why} for each committed file (of `runs`, else of every run) whose Parquet footer
    cannot be read (truncated, not Parquet, unreadable); the others' row counts go into
    `snap.rows`. Each footer is read once per snapshot; a file `previous` (an earlier listing
    of the same lake) read at the same size and modification time is not read again. Footers
    are read in parallel on a remote store, where a store that does not answer raises
    LakeUnreachable."""
    if previous is not None:
        for path, rows in previous.rows.items():
            was, now = previous.infos.get(path), snap.infos.get(path)
            if was is not None and now is not None and _stamp(was) == _stamp(now):
                snap.rows.setdefault(path, rows)
    paths = [
        p
        for s in snap.shards
        if runs is None or s.run in runs
        for p in s.files.values()
        if p in snap.infos and p not in snap.rows
    ]

    def footer(path: str) -> int | str:
        try:
            if snap.local:
                return local_footer_rows(path)
            return int(pq.read_metadata(path, filesystem=snap.fs).num_rows)
        except (pa.ArrowInvalid, ValueError) as exc:
            return " ".join(str(exc).split())
        except OSError as exc:
            if not snap.local:
                raise store_error(snap.root, exc) from None
            return exc.strerror or " ".join(str(exc).split())

    if snap.local:
        found = [footer(p) for p in paths]
    else:
        with ThreadPoolExecutor(max_workers=FOOTER_THREADS) as pool:
            found = list(pool.map(footer, paths))
    bad = {}
    for path, got in zip(paths, found, strict=True):
        if isinstance(got, int):
            snap.rows[path] = got
        else:
            bad[path] = got
    return bad


def _stamp(info: pafs.FileInfo) -> tuple[int | None, int | None]:
    """What says a listed file is unchanged: its size and modification time."""
    return info.size, info.mtime_ns


def same_listing(a: Snapshot, b: Snapshot) -> bool:
    """Whether two listings of a lake found the same files (manifests and verify's records
    among them) at the same sizes and modification times."""
    return a.infos.keys() == b.infos.keys() and all(
        _stamp(info) == _stamp(b.infos[path]) for path, info in a.infos.items()
    )


def screen(snap: Snapshot, previous: Snapshot | None = None) -> tuple[Snapshot, dict[str, str]]:
    """The snapshot without the runs whose manifest cannot be read or that hold a shard file
    that is not readable Parquet (truncated, say), and why each was left out ({run: one
    line}): one bad manifest or file must not stop queries on every other run. Every committed
    file's footer is read (its row count kept in `snap.rows`, which the warehouse's footer
    table then uses), but those `previous` read unchanged (see `unreadable_files`)."""
    problems: dict[str, str] = {}
    for run, path in snap.manifests.items():
        try:
            manifest = snap.read_json(path)
        except LakeUnreachable:
            raise
        except (OSError, ValueError) as exc:
            problems[run] = f"manifest {path} is not readable JSON ({exc})"
            continue
        problem = view_problem(run, manifest)
        if problem is not None:
            problems[run] = f"manifest {path}: {problem}"
    # Shard files with no manifest (a driver that never recorded its run, a stray folder, files
    # of another program): nothing says what they hold, so they are not read either.
    for run in sorted({s.run for s in snap.shards} - set(snap.manifests)):
        problems[run] = (
            f"shard files under games/run={run}/ but no manifest {snap.base}/runs/{run}/"
            "manifest.json: its driver never recorded it, or the manifest was deleted"
        )
    readable = {s.run for s in snap.shards} - set(problems)
    for path, why in sorted(unreadable_files(snap, readable, previous).items()):
        run = path[len(snap.base) + 1 :].split("/")[1].removeprefix("run=")
        problems.setdefault(
            run,
            f"shard file {path} is not readable Parquet ({why}): truncated or damaged; "
            f"write the run again (`flip7 tournament run SPEC --overwrite`)",
        )
    if not problems:
        return snap, {}
    kept = Snapshot(
        snap.root,
        [s for s in snap.shards if s.run not in problems],
        {r: p for r, p in snap.manifests.items() if r not in problems},
        [p for p in snap.missing if not any(f"/run={r}/" in p for r in problems)],
        snap.fs,
        snap.base,
        snap.infos,
        snap.rows,
    )
    return kept, problems
