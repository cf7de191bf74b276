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
from typing import TypeVar

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


class RollupRows:
    """Every committed shard's rollups rows with run, players and shard first (as the lake
    macros give them), the per-game lists left out: `con.register(name, RollupRows(snap))`."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.shards = [s for s in snap.shards if snap.exists(s.files["rollups"])]
        self._schema: pa.Schema | None = None

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
        columns = self.schema.names[3:]
        try:
            with self.snap.fs.open_input_file(shard.files["rollups"]) as f:
                t = pq.ParquetFile(f).read(columns=columns, use_threads=False)
        except OSError as exc:
            if self.snap.local:
                raise
            raise store_error(self.snap.root, exc) from None
        return pa.Table.from_arrays(
            [*shard_columns(shard, t.num_rows), *t.columns], schema=self.schema
        )

    def batches(self) -> Iterator[pa.RecordBatch]:
        for t in prefetch(self.read, self.shards):
            yield from t.to_batches()

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        reader = pa.RecordBatchReader.from_batches(self.schema, self.batches())
        return reader.__arrow_c_stream__(requested_schema)
