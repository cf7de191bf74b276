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
import math
import os
import re
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

TABLES = ("events", "rounds", "rollups", "games")
#: The version of the pipeline's Parquet schema (pipeline.schema.SCHEMA_VERSION) these views
#: read; a run whose manifest names another is refused by name (tests keep the two equal).
SCHEMA_VERSION = 6
SHARD_FILE = re.compile(r"^shard-(\d+)\.parquet$")
_SHARD_PATH = re.compile(r"/run=([^/]+)/players=([^/]+)/(shard-(\d+)\.parquet)$")
#: Footers read at once from a remote store (each is a request or two).
FOOTER_THREADS = 16


class EmptyLakeError(FileNotFoundError):
    """The data root holds no committed shard (or none of the runs asked for)."""


class LakeUnreachable(OSError):
    """The lake's store refused or did not answer (no bucket, no credentials, no server)."""


#: The pipeline's one rule for run names (pipeline.lake.check_run_name; the warehouse does not
#: import the pipeline, and a test keeps the two in step): one path segment that cannot climb out
#: of the lake. Every run name a command takes passes it before anything is read.
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


def data_root(data_dir: str | os.PathLike[str] | None = None) -> str:
    """The lake root as given: the argument, else $FLIP7_DATA, else ./data."""
    if data_dir is not None:
        return os.fspath(data_dir)
    return os.environ.get("FLIP7_DATA") or "data"


def is_uri(root: str) -> bool:
    """True for `scheme://...` roots (s3://, file://, gs://, ...), False for plain paths."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", root) is not None


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
    """On S3, a LakeUnreachable unless the root's bucket exists (a listing of a missing
    bucket is merely empty)."""
    if not isinstance(fs, pafs.S3FileSystem):
        return
    bucket = base.split("/", 1)[0]
    try:
        info = fs.get_file_info(bucket)
    except OSError as exc:
        raise store_error(root, exc) from None
    if info.type == pafs.FileType.NotFound:
        raise store_error(root, OSError("NO_SUCH_BUCKET"))


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


def schema_problem(manifest: dict[str, object]) -> str:
    """Why a run of another event-log schema cannot be read, and what to do: the command that
    upgrades an older run in place, or a newer flip7 for a newer run."""
    version = manifest.get("schema_version")
    run = manifest.get("run")
    head = (
        f"run {run!r} was written with event-log schema v{version} (flip7 "
        f"{manifest.get('package_version', '?')}); this flip7 reads v{SCHEMA_VERSION}: "
    )
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        return head + "read it with a flip7 as new as the one that wrote it"
    return head + f"upgrade it with `flip7 warehouse upgrade {run} [--data DIR|URI]`"


def _manifest_problem(run: str, manifest: object) -> str | None:
    """What makes a parsed manifest unreadable for the views, None if nothing: the fields the
    staging views type (stg_manifests) must have their types, and it must name its own run."""
    if not isinstance(manifest, dict):
        return "the manifest is not a JSON object"
    if manifest.get("run") != run:
        return f"the manifest names run {manifest.get('run')!r}, not the run it sits in"
    if manifest.get("schema_version") != SCHEMA_VERSION:
        return schema_problem(manifest)
    ints = ("seed", "planned_shards", "planned_games")
    for key in ints:
        if not isinstance(manifest.get(key), int) or isinstance(manifest.get(key), bool):
            return f"field {key!r} is {manifest.get(key)!r}, not an integer"
    for key in ("planned_shards", "planned_games"):
        if not _is_count(manifest[key]):
            return f"field {key!r} is {manifest[key]!r}, not a count in 0..2^63-1"
    cells = manifest.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return "field 'cells' is not a list of cells"
    for c in cells:
        for key in ("cell", "players", "pair", "games", "game_offset"):
            if not _is_count(c.get(key)):
                return f"a cell's {key!r} is {c.get(key)!r}, not a count in 0..2^63-1"
        lineup = c.get("lineup")
        if not isinstance(lineup, list) or not all(isinstance(s, str) for s in lineup):
            return f"cell {c.get('cell')}'s line-up is not a list of policy names"
    shards = manifest.get("shards")
    if not isinstance(shards, dict):
        return "field 'shards' is not an object"
    for key, info in shards.items():
        if not (key.isascii() and key.isdigit()) or not isinstance(info, dict):
            return f"shard entry {key!r} is not a shard number with its record"
        for field_name in ("cell", "start", "stop", "games"):
            if not _is_count(info.get(field_name)):
                return f"shard {key}'s {field_name!r} is {info.get(field_name)!r}, not a count"
    stop = manifest.get("stop")
    return _stop_problem(stop) if stop else None


_BIGINT = (1 << 63) - 1


def _is_count(x: object) -> bool:
    """An integer DuckDB's BIGINT holds, not negative (JSON allows any size)."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= _BIGINT


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _stop_problem(stop: object) -> str | None:
    """What is wrong with a manifest's [stop] record for the fields stg_manifest_stops types,
    or None (a field of the wrong type would read as NULL and break the report's test line)."""
    if not isinstance(stop, dict):
        return "field 'stop' is not an object"
    compare = stop.get("compare")
    if not (
        isinstance(compare, list) and len(compare) == 2 and all(isinstance(c, str) for c in compare)
    ):
        return "stop.compare is not a pair of policy names"
    if stop.get("test") not in ("sprt", "fixed") or stop.get("metric") not in ("win", "points"):
        return "stop.test or stop.metric is not one a spec gives"
    for key in ("h0", "h1", "alpha", "beta"):
        if not _is_number(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a number"
    if stop["test"] != "sprt":
        return None
    for key in ("max_games", "wave_games", "planned_games", "cell"):
        if not _is_count(stop.get(key)):
            return f"stop.{key} is {stop.get(key)!r}, not a count"
    bounds = stop.get("bounds")
    if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(_is_number, bounds))):
        return "stop.bounds is not a pair of numbers"
    waves = stop.get("waves") or []
    decision = stop.get("decision")
    looks = [*(waves if isinstance(waves, list) else [None]), *([decision] if decision else [])]
    for look in looks:
        ok = isinstance(look, dict) and _is_count(look.get("games"))
        if not ok or not all(
            look.get(k) is None or _is_number(look.get(k))
            for k in ("estimate", "half_width", "llr")
        ):
            return "stop.waves or stop.decision holds a look that is not games and numbers"
    if isinstance(decision, dict) and not isinstance(decision.get("result"), str):
        return "stop.decision.result is not a string"
    return None


def unreadable_files(snap: Snapshot, runs: set[str] | None = None) -> dict[str, str]:
    """{path: why} for each committed file (of `runs`, else of every run) whose Parquet footer
    cannot be read (truncated, not Parquet, unreadable); the others' row counts go into
    `snap.rows`. One footer read per file, in parallel on a remote store; a store that does
    not answer raises LakeUnreachable."""
    paths = [
        p
        for s in snap.shards
        if runs is None or s.run in runs
        for p in s.files.values()
        if p in snap.infos and p not in snap.rows
    ]

    def footer(path: str) -> int | str:
        try:
            return int(pq.read_metadata(path, filesystem=snap.fs).num_rows)
        except (pa.ArrowInvalid, ValueError) as exc:
            return " ".join(str(exc).split())
        except OSError as exc:
            if not snap.local:
                raise store_error(snap.root, exc) from None
            return exc.strerror or " ".join(str(exc).split())

    with ThreadPoolExecutor(max_workers=1 if snap.local else FOOTER_THREADS) as pool:
        found = list(pool.map(footer, paths))
    bad = {}
    for path, got in zip(paths, found, strict=True):
        if isinstance(got, int):
            snap.rows[path] = got
        else:
            bad[path] = got
    return bad


def screen(snap: Snapshot) -> tuple[Snapshot, dict[str, str]]:
    """The snapshot without the runs whose manifest cannot be read or that hold a shard file
    that is not readable Parquet (truncated, say), and why each was left out ({run: one
    line}): one bad manifest or file must not stop queries on every other run."""
    problems: dict[str, str] = {}
    for run, path in snap.manifests.items():
        try:
            manifest = snap.read_json(path)
        except LakeUnreachable:
            raise
        except (OSError, ValueError) as exc:
            problems[run] = f"manifest {path} is not readable JSON ({exc})"
            continue
        problem = _manifest_problem(run, manifest)
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
    for path, why in sorted(unreadable_files(snap, readable).items()):
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
