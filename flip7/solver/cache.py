"""The solved policy as a compact binary table, generated on demand into a cache directory.

File layout (little-endian): the 8 bytes `FLIP7DP1`, a uint32 header length, a JSON header,
then one bit per decision state, `numpy.packbits(..., bitorder="little")`. Bit i is 1 when the
optimal play is to hit in state i, where

    i = ((mask * 64 + mods) * n_sc + sc) * n_t + t

with `mask` the 13-bit mask of numbers shown (bit v for number v), `mods` the 6-bit mask of
modifiers shown (+2, +4, +6, +8, +10, x2 as bits 0..5), `sc` the index of the Second Chance
state in the header's `sc_states` list of [drawn, held, used], and `t` the Flip Threes drawn
(n_t = 1 where the model has none). Slots no player can reach are 0. The header also carries the
model's name, key and EV, so a reader can check it has the table it wanted. The basic model's
table is 458,752 bytes.

The directory is `--cache-dir`, else $FLIP7_CACHE, else ~/.cache/flip7. Nothing here is ever
committed: delete the files, or pass `--rebuild-cache`, to solve again.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from flip7.solver.model import Model, Space

MAGIC = b"FLIP7DP1"
FORMAT = 1


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where tables live: `override`, else $FLIP7_CACHE, else ~/.cache/flip7."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("FLIP7_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "flip7"


def table_path(model: Model, directory: str | os.PathLike[str] | None = None) -> Path:
    """The cache file of a model's table (its name carries the model's key)."""
    return cache_dir(directory) / f"dp-{model.name}-{model.key}.bin"


@dataclass(frozen=True)
class Table:
    """A loaded policy table. `hit(...)` is one bit test."""

    header: dict[str, object]
    bits: bytes
    n_sc: int
    n_t: int
    sc_states: tuple[tuple[int, int, int], ...]

    def index(self, mask: int, mods: int, sc: int, t: int = 0) -> int:
        return ((mask * 64 + mods) * self.n_sc + sc) * self.n_t + t

    def hit(self, mask: int, mods: int, sc: int, t: int = 0) -> bool:
        """True when the table says hit in this state."""
        i = ((mask * 64 + mods) * self.n_sc + sc) * self.n_t + t
        return bool(self.bits[i >> 3] >> (i & 7) & 1)

    def sc_index(self, drawn: int, held: int, used: int = 0) -> int:
        """The table's index of a Second Chance state; `used` is dropped by models where a
        saved duplicate stays in the deck."""
        key = (drawn, held, used)
        if key not in self.sc_states:
            key = (drawn, held, 0)
        return self.sc_states.index(key)

    def as_array(self) -> np.ndarray:
        """All bits as a uint8 array of shape (8192, 64, n_sc, n_t) (for compiled readers)."""
        flat = np.unpackbits(np.frombuffer(self.bits, np.uint8), bitorder="little")
        return flat[: 8192 * 64 * self.n_sc * self.n_t].reshape(8192, 64, self.n_sc, self.n_t)


def dense_bits(space: Space, hit: np.ndarray) -> np.ndarray:
    """A solver policy (rank-ordered decision states) in the file's dense layout, as 0/1."""
    dense = np.zeros((1 << 13, 64, space.n_sc, space.n_dec), np.uint8)
    by_rank = hit.reshape(space.dec_shape).transpose(1, 2, 0, 3)
    dense[space.masks] = by_rank
    return dense


def write_file(path: Path, magic: bytes, header: dict[str, Any], *body: bytes) -> Path:
    """Write a table file atomically (a private temporary, then a rename): `magic`, the JSON
    header's length and the header, then the body. Readable by all: a cache is meant to be
    shared (mkstemp makes the temporary private)."""
    head = json.dumps(header, sort_keys=True).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + struct.pack("<I", len(head)) + head)
            for chunk in body:
                fh.write(chunk)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_file(path: Path, magic: bytes, kind: str) -> tuple[dict[str, Any], bytes]:
    """(header, body) of a file `write_file` wrote with `magic`; a ValueError naming the `kind`
    of table when the file is not one."""
    data = Path(path).read_bytes()
    if data[: len(magic)] != magic or len(data) < len(magic) + 4:
        raise ValueError(f"{path} is not a flip7 {kind} table (bad magic); delete it to rebuild")
    start = len(magic) + 4
    (n,) = struct.unpack("<I", data[len(magic) : start])
    return json.loads(data[start : start + n]), data[start + n :]


def write_table(
    path: Path, space: Space, hit: np.ndarray, extra: dict[str, object] | None = None
) -> Path:
    """Write a policy table atomically (a temporary file, then a rename)."""
    model = space.model
    header: dict[str, object] = {
        "format": FORMAT,
        "model": model.name,
        "key": model.key,
        "layout": "((mask13 * 64 + mods6) * n_sc + sc) * n_t + t, bit 1 = hit",
        "n_sc": space.n_sc,
        "n_t": space.n_dec,
        "sc_states": [list(s) for s in space.sc_states],
        "modifier_bits": ["+2", "+4", "+6", "+8", "+10", "x2"],
        **(extra or {}),
    }
    payload = np.packbits(dense_bits(space, hit).reshape(-1), bitorder="little").tobytes()
    return write_file(path, MAGIC, header, payload)


def read_table(path: Path) -> Table:
    """Load a table file; a ValueError says what is wrong with a bad one."""
    header, bits = read_file(path, MAGIC, "policy")
    n_sc, n_t = int(header["n_sc"]), int(header["n_t"])
    if len(bits) * 8 < 8192 * 64 * n_sc * n_t:
        raise ValueError(f"{path} is truncated ({len(bits)} bytes of bits); delete it to rebuild")
    states = tuple(tuple(int(x) for x in s) for s in header["sc_states"])
    return Table(header, bits, n_sc, n_t, states)  # type: ignore[arg-type]


@contextlib.contextmanager
def _building(path: Path) -> Iterator[None]:
    """Held while `path` is built: one process solves a table at a time, so the workers of a
    tournament that all want the same table wait for the first one's file instead of each
    solving it (minutes of CPU apiece). An advisory lock on `<path>.lock`; none where the
    platform has no fcntl."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, each process builds (the file is still atomic)
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def load_cached(
    path: Path,
    build: Callable[[Path], None],
    read: Callable[[Path], Any],
    key: str,
    target: int | None = None,
    rebuild: bool = False,
) -> tuple[Any, Path, bool]:
    """A table from the cache: `build(path)` solves and writes it first when it is missing (or
    `rebuild`), then `read(path)`; a file holding another model's (or target's) table is refused.
    Returns (table, path, whether it was built now)."""
    built = False
    if rebuild or not path.exists():
        with _building(path):
            # Another process (a tournament's other worker) may have built it while this one
            # waited for the lock: then it is read, not solved a second time.
            if rebuild or not path.exists():
                build(path)
                built = True
    table = read(path)
    if table.header.get("key") != key or (target is not None and table.target != target):
        what = "model" if target is None else "model or target"
        raise ValueError(f"{path} holds a table for another {what}; delete it to rebuild")
    return table, path, built


def load_table(
    model: Model,
    directory: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
) -> tuple[Table, Path, bool]:
    """The model's table from the cache, solving and writing it first if it is missing (or
    `rebuild`). Returns (table, path, whether it was built now)."""

    def build(path: Path) -> None:
        from flip7.solver.solve import solve

        solution = solve(model)
        write_table(path, solution.space, solution.hit, {"ev": solution.moments.ev})

    return load_cached(table_path(model, directory), build, read_table, model.key, None, rebuild)
