"""Open the warehouse: a fresh in-memory DuckDB database built over a snapshot of the lake.

`connect()` lists the committed shards (see `warehouse.lake`), creates the macros, staging views
and marts (`warehouse.build`), and returns the connection. Nothing is ever written to the lake:
the database lives in memory and the Parquet files are only read. Marts are views by default
(nothing is computed until asked); `materialize=True` computes the aggregated marts once into
in-memory tables, which pays when many queries follow (the report, the dashboard).
"""

from __future__ import annotations

import os

import duckdb

from warehouse.build import build
from warehouse.lake import EmptyLakeError, data_root, snapshot


def connect(
    data_dir: str | os.PathLike[str] | None = None,
    runs: list[str] | None = None,
    *,
    materialize: bool = False,
    threads: int | None = None,
) -> duckdb.DuckDBPyConnection:
    """A connection with every view and mart over the lake's committed shards.

    `data_dir` defaults to $FLIP7_DATA or ./data; `runs` restricts it to some runs. Raises
    EmptyLakeError (a FileNotFoundError) when there is nothing committed to read, naming the
    runs that exist and how to make one.
    """
    root = data_root(data_dir)
    snap = snapshot(root, runs)
    if not snap.shards:
        which = f"run {', '.join(runs)}" if runs else "any run"
        raise EmptyLakeError(
            f"no committed shards of {which} under {root} (runs there: "
            f"{', '.join(snap.runs) or 'none'}); write one with `flip7 tournament run SPEC --out "
            f"{root}`, or point --data / $FLIP7_DATA at a lake"
        )
    con = duckdb.connect(":memory:")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    build(con, snap, materialize=materialize)
    return con
