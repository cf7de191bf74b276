"""The shards' rollups rows as one stream, read file by file: what the warehouse sums at connect.

Every headline mart is a sum of the rollups' rows (int_cell_sums, one pass at connect). DuckDB
scanning the rollups as a pyarrow dataset kept each file's parsed footer in its fragment: at a
simulated 100M games (20,000 shards) that pass alone took 1.1 GB and 43 s. `RollupRows` hands
DuckDB the same rows (without the per-game lists, which only the card-counting mart needs and
reads itself, warehouse.twins) as a stream: each file read whole by pyarrow (a few kB of
columns), a few files ahead by READ_THREADS threads, nothing kept once DuckDB has the batch. A
new stream starts at each scan (`__arrow_c_stream__`), so the relation can be read again; its
schema is known from one footer (`__arrow_c_schema__`), so creating a view reads nothing else.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.lake import Shard, Snapshot, store_error

T = TypeVar("T")
U = TypeVar("U")
#: Files read at once (pyarrow decodes without the GIL), and items read ahead of the one handed
#: out.
READ_THREADS = min(4, os.cpu_count() or 1)
AHEAD = 8
#: The per-game lists of the rollups (left out of the stream).
LISTS = ("game_y", "game_n")


def shard_columns(shard: Shard, n: int) -> list[pa.Array]:
    """The run (dictionary-encoded), players and shard of `n` rows of one shard's file, as the
    lake macros give them. Built from numpy: from Python lists they cost more than reading a
    rollups file (0.6 ms against 0.35 ms for 568 rows)."""
    return [
        pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([shard.run])),
        pa.array(np.full(n, shard.players, np.int32)),
        pa.array(np.full(n, shard.shard, np.int32)),
    ]


def prefetch(fn: Callable[[T], U], items: list[T], ahead: int = AHEAD) -> Iterator[U]:
    """fn(item) for each item, in order, computed by READ_THREADS threads at most `ahead` items
    ahead of the one handed out (memory holds a few results, not all)."""
    with ThreadPoolExecutor(READ_THREADS) as pool:
        pending: deque[Future[U]] = deque()
        for i in range(len(items) + ahead):
            if i < len(items):
                pending.append(pool.submit(fn, items[i]))
            if i >= ahead:
                yield pending.popleft().result()


class Fold(Protocol):
    """What else is computed from the rollups files in the stream's first full pass
    (warehouse.twins.Fold: the card-counting mart's per-game products, from the lists)."""

    def rank(self, path: str) -> tuple[object, ...]: ...  # the order it takes the files in
    def wants(self, path: str) -> bool: ...  # whether it reads that file's lists
    def take(self, table: pa.Table) -> object: ...  # what it keeps of one file read whole
    def add(self, path: str, taken: object) -> None: ...  # that, for each file in its order
    def done(self) -> None: ...  # after the last file


class RollupRows:
    """Every committed shard's rollups rows with run, players and shard first (as the lake
    macros give them), the per-game lists left out: `con.register(name, RollupRows(snap))`.

    With a `fold`, the first scan that reads every file reads the lists too and hands each
    file to it, in its order (the sums do not depend on the order of the rows): the
    card-counting mart then reads no file again."""

    def __init__(self, snap: Snapshot, fold: Fold | None = None) -> None:
        self.snap = snap
        self.shards = [s for s in snap.shards if snap.exists(s.files["rollups"])]
        self._schema: pa.Schema | None = None
        self.fold = fold
        if fold is not None:
            self.shards.sort(key=lambda s: fold.rank(s.files["rollups"]))

    @property
    def schema(self) -> pa.Schema:
        if self._schema is None:
            fields = []
            if self.shards:
                path = self.shards[0].files["rollups"]
                try:
                    fields = [f for f in pq.read_schema(path, filesystem=self.snap.fs)]
                except OSError as exc:
                    if self.snap.local:
                        raise
                    raise store_error(self.snap.root, exc) from None
            self._schema = pa.schema(
                [
                    pa.field("run", pa.dictionary(pa.int32(), pa.string())),
                    pa.field("players", pa.int32()),
                    pa.field("shard", pa.int32()),
                    *(f for f in fields if f.name not in (*LISTS, "run", "players", "shard")),
                ]
            )
        return self._schema

    def read(self, shard: Shard) -> pa.Table:
        """One shard's rows in `schema`."""
        return self.read_whole(shard, lists=False)[0]

    def read_whole(self, shard: Shard, lists: bool = True) -> tuple[pa.Table, pa.Table]:
        """One shard's rows in `schema`, and the file's rows as read (with `lists`, the
        per-game lists too)."""
        columns = self.schema.names[3:]
        try:
            with self.snap.fs.open_input_file(shard.files["rollups"]) as f:
                # a local file read as pyarrow decodes it, not first buffered: less CPU
                whole = pq.ParquetFile(f, pre_buffer=not self.snap.local).read(
                    columns=[*columns, *LISTS] if lists else columns, use_threads=False
                )
        except OSError as exc:
            if self.snap.local:
                raise
            raise store_error(self.snap.root, exc) from None
        t = whole.select(columns)
        rows = pa.Table.from_arrays(
            [*shard_columns(shard, t.num_rows), *t.columns], schema=self.schema
        )
        return rows, whole

    def batches(self) -> Iterator[pa.RecordBatch]:
        fold = self.fold
        if fold is None:
            for t in prefetch(self.read, self.shards):
                yield from t.to_batches()
            return
        self.fold = None  # one pass feeds it; a scan started meanwhile reads no list

        def read(shard: Shard) -> tuple[pa.Table, object]:
            # in the reading threads: the stream DuckDB waits on only hands over what they made
            wanted = fold.wants(shard.files["rollups"])
            rows, whole = self.read_whole(shard, lists=wanted)
            return rows, fold.take(whole) if wanted else None

        for shard, (t, taken) in zip(self.shards, prefetch(read, self.shards), strict=True):
            if taken is not None:
                fold.add(shard.files["rollups"], taken)
            yield from t.to_batches()
        fold.done()

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        reader = pa.RecordBatchReader.from_batches(self.schema, self.batches())
        return reader.__arrow_c_stream__(requested_schema)
