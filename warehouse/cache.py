"""Computed marts kept on disk, so that a reader opening an unchanged lake again skips computing them.

An entry is one Parquet file per mart, `<cache dir>/marts/<lake>/<key>/<mart>-<mac>.parquet`:
`<lake>` hashes the lake's location, `<mac>` authenticates the file (below), `<key>` (`lake_key`) hashes everything a mart's rows depend on: the
location, every committed file's path, size and modification time, the manifests' bytes, the
warehouse's SQL text and the DuckDB version. A changed lake (a shard added, a file rewritten, a
manifest edited) has another key, so its marts are computed again; storing an entry removes the
older entries of the same lake. The cache directory is the user's (`--cache-dir`, else
$FLIP7_CACHE, else ~/.cache/flip7, as for the solver's tables): never inside the lake.

Reading an entry runs no code: it is Parquet, read by pyarrow. The cache trusts nothing in its
directory (docs/guarantees.md states the threat model):

- the tree is used only when no part of it under marts/ is a link, every part is the user's own
  and none (nor the cache directory itself) is writable by group or others; otherwise the cache
  is not used at all (not read, not written), which costs speed only;
- an entry is opened without following links and without blocking, and read only when the open
  file is a regular file of at most MAX_BYTES (fstat of that file, not of its name);
- `<mac>` is an HMAC-SHA256 of the key, the mart and the file's bytes under a secret of the
  user's (`secret_path()`: outside the cache, mode 0600, made on first use): whoever can write
  the cache but not read that secret cannot make a file that passes for a computed entry. A file
  is used only when its MAC is its name, it parses, and its metadata names this format, this key
  and this mart; any other file (truncated, a flipped bit, from another lake or version,
  planted) is ignored, and replaced once the mart is computed.

A cache that cannot be written (a read-only directory) costs speed only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse import record
from warehouse.build import SQL_DIR
from warehouse.db import problems, scratch, seal
from warehouse.lake import Snapshot, screen, snapshot

#: Bumped when the layout or the metadata of an entry changes (2: names are MACs).
FORMAT = 2
#: The metadata key of an entry's Parquet schema: {"format", "key", "mart"} as JSON.
META = b"flip7.mart_cache"
#: Larger files are not read: a mart is an aggregate (kilobytes); this is no mart.
MAX_BYTES = 64 * 2**20
_HEX = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
#: Bytes of the user's secret that authenticates entries.
SECRET_BYTES = 32
#: Opening a cache file: never through a link, never waiting on a FIFO or a device.
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where cached files live: `override`, else $FLIP7_CACHE, else ~/.cache/flip7."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("FLIP7_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "flip7"


def secret_path() -> Path:
    """Where the user's secret for the mart cache lives: outside any cache directory, in
    $XDG_CONFIG_HOME/flip7 (else ~/.config/flip7)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "flip7" / "mart-cache.key"


def _read_private(path: Path, size: int) -> bytes | None:
    """The bytes of `path` when it is a regular file of exactly `size` bytes, the user's own and
    readable by nobody else, opened without following a link, in a folder nobody else can
    write (who could, could put a secret of theirs in its place); else None."""
    try:
        folder = path.parent.stat()
        if folder.st_uid != os.geteuid() or folder.st_mode & 0o022:
            return None
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.geteuid()
            or st.st_mode & 0o077
            or st.st_size != size
        ):
            return None
        data = os.read(fd, size + 1)
        return data if len(data) == size else None
    finally:
        os.close(fd)


def secret() -> bytes | None:
    """The user's secret for the mart cache (see `secret_path`), made on first use (atomically:
    written under a temporary name, then linked in place unless another process was first);
    None when it cannot be read or made as a private file (the cache is then not used)."""
    path = secret_path()
    found = _read_private(path, SECRET_BYTES)
    if found is not None or path.is_symlink() or path.exists():
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".mart-cache.", dir=path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(SECRET_BYTES))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    except OSError:
        return None
    return _read_private(path, SECRET_BYTES)


def untrusted(directory: Path) -> str | None:
    """Why the cache tree under `directory` must not be used, or None: the directory is not the
    user's own or is writable by group or others, or anything under its marts/ is a link, not
    the user's own, or writable by group or others."""
    me = os.geteuid()
    try:
        st = directory.stat()
    except FileNotFoundError:
        return None  # nothing there yet: store makes it, private
    except OSError as exc:
        return f"{directory} cannot be read ({exc.strerror})"
    if st.st_uid != me or st.st_mode & 0o022:
        return f"{directory} is not yours alone to write (owner or permissions)"
    top = directory / "marts"
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [".", *dirnames, *filenames]:
            path = Path(dirpath) / name if name != "." else Path(dirpath)
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue  # removed meanwhile (another reader pruning)
            except OSError as exc:
                return f"{path} cannot be read ({exc.strerror})"
            if stat.S_ISLNK(st.st_mode):
                return f"{path} is a link"
            if st.st_uid != me or st.st_mode & 0o022:
                return f"{path} is not yours alone to write (owner or permissions)"
    if top.is_symlink():
        return f"{top} is a link"
    return None


def _sql_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(SQL_DIR.rglob("*.sql")):
        h.update(f"{path.relative_to(SQL_DIR)}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def location(snap: Snapshot) -> str:
    """The lake's location as one string: its filesystem and its path there."""
    return f"{snap.fs.type_name}:{snap.base}"


def lake_key(snap: Snapshot, skipped: dict[str, str] | None = None) -> str:
    """A hash of what the marts over `snap` depend on (see the module docstring); the runs
    `skipped` (left out for an unreadable manifest) are part of it."""
    h = hashlib.sha256()

    def line(*parts: object) -> None:
        h.update(("\t".join(map(str, parts)) + "\n").encode())

    line("format", FORMAT, "duckdb", duckdb.__version__, "sql", _sql_digest())
    line("lake", location(snap))
    for run, why in sorted((skipped or {}).items()):
        line("skipped", run, why)
    for run, path in sorted(snap.manifests.items()):
        line("manifest", run, path, hashlib.sha256(snap.read_bytes(path)).hexdigest())
    for shard in sorted(snap.shards, key=lambda s: (s.run, s.players, s.shard)):
        for table, path in sorted(shard.files.items()):
            info = snap.infos.get(path)
            if info is None:
                line("file", table, path, "missing")
            else:
                line("file", table, path, info.size, info.mtime_ns)
    return h.hexdigest()


@dataclass(frozen=True)
class MartCache:
    """The entries of one lake snapshot (`key`) under `directory` (see the module docstring)."""

    directory: Path
    lake: str  # location(snap)
    key: str

    @property
    def folder(self) -> Path:
        """This snapshot's folder: marts/<hash of the location>/<key>."""
        where = hashlib.sha256(self.lake.encode()).hexdigest()
        return self.directory / "marts" / where / self.key

    def files(self, mart: str) -> list[Path]:
        """The files named as entries of `mart` in this snapshot's folder (`<mart>-<sha256 of
        the file>.parquet`), whether whole or not."""
        if not _NAME.match(mart):
            raise ValueError(f"mart name {mart!r} is not a relation name (lower case, digits, _)")
        name = re.compile(rf"^{mart}-[0-9a-f]{{64}}\.parquet$")
        try:
            return sorted(p for p in self.folder.iterdir() if name.match(p.name))
        except OSError:
            return []

    def _meta(self, mart: str) -> bytes:
        return json.dumps({"format": FORMAT, "key": self.key, "mart": mart}).encode()

    def _mac(self, secret: bytes, mart: str, data: bytes) -> str:
        """The name an entry of `mart` with these bytes has (see the module docstring)."""
        head = f"flip7 mart cache {FORMAT}\n{self.lake}\n{self.key}\n{mart}\n".encode()
        return hmac.new(secret, head + data, hashlib.sha256).hexdigest()

    def _usable(self) -> bytes | None:
        """The secret when the cache may be used (a trusted tree, a private secret), else None;
        a refusal is said once per process on stderr."""
        why = untrusted(self.directory)
        key = secret() if why is None else None
        if why is None and key is None:
            why = f"its secret {secret_path()} cannot be read or made as a private file"
        if why is not None:
            _say_once(f"flip7: the mart cache under {self.directory} is not used: {why}")
        return key

    def load(self, mart: str) -> pa.Table | None:
        """The cached rows of `mart`, or None when no file is a usable entry: each is opened
        without following links, read only when it is a regular file of at most MAX_BYTES and
        its MAC is its name, then used only when it is Parquet whose metadata names this
        format, key and mart."""
        key = self._usable()
        if key is None:
            return None
        for path in self.files(mart):
            try:
                data = _read_entry(path)
                if data is None:
                    continue
                mac = self._mac(key, mart, data)
                if not hmac.compare_digest(mac, path.stem[len(mart) + 1 :]):
                    continue
                table = pq.read_table(pa.BufferReader(data))
            except (OSError, ValueError, pa.ArrowException):
                continue
            if (table.schema.metadata or {}).get(META) == self._meta(mart):
                return table.replace_schema_metadata(None)
        return None

    def store(self, mart: str, table: pa.Table) -> bool:
        """Write `mart`'s rows (atomically: a temporary name, then a rename), then remove its
        other files and the older entries of the same lake; False when the cache cannot be
        written or is not trusted (see `untrusted`)."""
        key = self._usable()
        if key is None:
            return False
        others = self.files(mart)
        sink = pa.BufferOutputStream()
        pq.write_table(
            table.replace_schema_metadata({META: self._meta(mart)}), sink, compression="zstd"
        )
        data = sink.getvalue().to_pybytes()
        path = self.folder / f"{mart}-{self._mac(key, mart, data)}.parquet"
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            for part in (path.parent.parent.parent, path.parent.parent, path.parent):
                part.mkdir(exist_ok=True, mode=0o700)  # each level private, whatever the umask
            if untrusted(self.directory) is not None:  # made meanwhile by someone else
                return False
            fd, tmp = tempfile.mkstemp(prefix=f".{mart}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return False
        for other in others:
            if other != path:
                other.unlink(missing_ok=True)
        self.prune()
        return True

    def prune(self) -> None:
        """Remove this lake's entries for other keys (snapshots of the lake that are gone);
        only folders named like a key are touched."""
        try:
            others = [
                p for p in self.folder.parent.iterdir() if p.name != self.key and _HEX.match(p.name)
            ]
        except OSError:
            return
        for other in others:
            shutil.rmtree(other, ignore_errors=True)


_SAID: set[str] = set()


def _say_once(line: str) -> None:
    """Print `line` on stderr once per process (a refused cache, not a failure)."""
    if line not in _SAID:
        _SAID.add(line)
        print(line, file=sys.stderr)


def _read_entry(path: Path) -> bytes | None:
    """The bytes of the cache file `path`, opened without following a link or blocking, when
    the open file is a regular file of at most MAX_BYTES; else None."""
    fd = os.open(path, _OPEN)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        chunks, left = [], st.st_size + 1  # one byte more: a file that grew is not read
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) == st.st_size else None
    finally:
        os.close(fd)


@dataclass
class Cached:
    """A lake opened from the mart cache alone: `con` is a sealed in-memory DuckDB holding the
    cached marts as tables of their own names (the queries of warehouse.queries read them as
    they read the warehouse's) and `runs_with_problems`, as `connect()` makes it."""

    cache: MartCache
    con: duckdb.DuckDBPyConnection
    marts: set[str]  # the marts found in the cache (tables of `con`)
    notes: list[str]  # warehouse.db.problems(con): what a reader is told about the runs


def open_cached(
    root: str,
    marts: tuple[str, ...],
    directory: str | os.PathLike[str] | None = None,
    lake: tuple[Snapshot, dict[str, str]] | None = None,
) -> Cached | None:
    """Load those of `marts` that the cache (`cache_dir(directory)`) holds for the lake at
    `root` as `lake` lists it (`screen(snapshot(root))`, listed here when not given: a caller
    that goes on to `connect(root, lake=lake)` shows the snapshot the cache key was made
    from); None when the lake has no committed shard (`connect()` then says why). Builds no
    view and reads no Parquet data of the lake (the screen reads the files' footers)."""
    snap, skipped = lake if lake is not None else screen(snapshot(root))
    if not snap.shards:
        return None
    cache = MartCache(cache_dir(directory), location(snap), lake_key(snap, skipped))
    # Small cached tables: nothing to spill, so no spill directory that SQL could reach.
    con = scratch(spill=False)
    con.execute("CREATE TABLE runs_with_problems (run VARCHAR, problem VARCHAR)")
    rows = [list(n) for n in record.notes(snap, skipped)]
    if rows:
        con.executemany("INSERT INTO runs_with_problems VALUES (?, ?)", rows)
    found = set()
    for mart in marts:
        table = cache.load(mart)
        if table is not None:
            con.register("cached_rows", table)
            try:  # `mart` is a relation name (MartCache.files checked it)
                con.execute(f"CREATE OR REPLACE TABLE {mart} AS SELECT * FROM cached_rows")
            finally:
                con.unregister("cached_rows")
            found.add(mart)
    seal(con)
    return Cached(cache, con, found, problems(con))
