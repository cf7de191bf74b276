"""Open the warehouse: a fresh in-memory DuckDB database built over a snapshot of the lake.

`connect()` lists the committed shards (see `warehouse.lake`), creates the macros, staging views
and marts (`warehouse.build`), and returns the connection. Nothing is ever written to the lake:
the database lives in memory and the Parquet files are only read. Marts are views by default
(nothing is computed until asked); `materialize=True` computes the aggregated marts once into
in-memory tables, which pays when many queries follow (the report, the dashboard).

Read-only (the default) is DuckDB's own sandbox, not a list of forbidden statements: DuckDB
never opens a file itself. The staging views read the committed shards through pyarrow datasets
handed to DuckDB (`lake_events`, `lake_rounds`, `lake_games`: pyarrow opens the files for
reading only), the few relations that need Parquet footers are computed before the sandbox
closes, and then `enable_external_access` goes off (no COPY TO, ATTACH, read_csv, read_text,
glob, INSTALL or LOAD of any file), extensions never autoload or autoinstall, spilling to a
temporary directory is off (a query gets `memory_limit`, then fails), and `lock_configuration`
refuses any SET that would give some of it back (log_query_path, profiling_output, ...).
Each connection also holds `runs_with_problems` (run, problem): the runs left out because their
manifest cannot be read, and the runs `verify` has not passed as they are now (see
warehouse.record); `problems()` gives them as lines for a reader.
`read_only=False` (`flip7 sql --write`) builds the same views with DuckDB reading the files
itself and leaves DuckDB's file access as it is.
"""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from warehouse import record
from warehouse.build import build
from warehouse.lake import TABLES, EmptyLakeError, Snapshot, data_root, screen, snapshot

#: The default memory limit of a read-only warehouse: DuckDB's own default is 80% of the
#: machine; half leaves room for the rest of it (the dashboard's server, a tournament).
MEMORY_LIMIT = "50%"
#: Relations computed into tables before the sandbox closes: they read Parquet footers
#: (parquet_file_metadata), which needs DuckDB's own file access.
PINNED = frozenset({"stg_parquet_files"})
#: Replaces macros/lake.sql's `lake_table` in a read-only warehouse: the same columns (run,
#: players, shard, then the file's), read from the pyarrow dataset of the files' table
#: (`lake_<table>`, the table named by the files' path; the lists hold one table's files).
ARROW_LAKE_TABLE = r"""
create or replace macro lake_table(files) as table
    select * from query_table(
        'lake_' || regexp_extract(files[1], '([a-z]+)/run=[^/]+/players=\d+/shard-\d+\.parquet$', 1)
    )
"""


def connect(
    data_dir: str | os.PathLike[str] | None = None,
    runs: list[str] | None = None,
    *,
    materialize: bool = False,
    threads: int | None = None,
    read_only: bool = True,
    memory_limit: str | None = MEMORY_LIMIT,
) -> duckdb.DuckDBPyConnection:
    """A connection with every view and mart over the lake's committed shards.

    `data_dir` defaults to $FLIP7_DATA or ./data; `runs` restricts it to some runs. Read-only
    (the default) seals DuckDB off from every file (see the module docstring). Raises
    EmptyLakeError (a FileNotFoundError) when there is nothing committed to read, naming the
    runs that exist and how to make one; ValueError for a memory limit DuckDB does not accept.
    """
    root = data_root(data_dir)
    snap, skipped = screen(snapshot(root, runs))
    if not snap.shards:
        which = f"run {', '.join(runs)}" if runs else "any run"
        left_out = "".join(f"; run {r} left out: {why}" for r, why in sorted(skipped.items()))
        raise EmptyLakeError(
            f"no committed shards of {which} under {root} (runs there: "
            f"{', '.join(snap.runs) or 'none'}{left_out}); write one with `flip7 tournament run "
            f"SPEC --out {root}`, or point --data / $FLIP7_DATA at a lake"
        )
    # Read-only: no extension loads itself, and nothing spills to disk, even while the marts
    # are computed (DuckDB's in-memory default spills to .tmp/ in the working directory).
    config = {
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
        "temp_directory": "",
    }
    con = duckdb.connect(":memory:", config=config if read_only else {})
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    if memory_limit:
        try:
            con.execute("SET memory_limit = $limit", {"limit": memory_limit})
        except duckdb.Error as exc:
            raise ValueError(
                f"memory limit {memory_limit!r} not understood ({str(exc).splitlines()[0]}); "
                "give a size such as 4GB or 500MB, or a share of the machine such as 50%"
            ) from None
    notes = record.notes(snap, skipped)
    con.execute("CREATE TABLE runs_with_problems (run VARCHAR, problem VARCHAR)")
    if notes:
        con.executemany("INSERT INTO runs_with_problems VALUES (?, ?)", [list(n) for n in notes])
    if not read_only:
        build(con, snap, materialize=materialize)
        return con
    for table in TABLES:
        dataset = arrow_dataset(snap, table)
        if dataset is not None:
            con.register(f"lake_{table}", dataset)
    build(con, snap, materialize=materialize, lake_table=ARROW_LAKE_TABLE, pinned=PINNED)
    seal(con)
    return con


def problems(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None) -> list[str]:
    """What a reader of this warehouse should be told about its runs (one line each: runs
    left out, not verified as they are now, holding shards their manifest does not record)."""
    rows = con.execute("SELECT run, problem FROM runs_with_problems ORDER BY run").fetchall()
    return [f"run {r}: {p}" for r, p in rows if runs is None or r in runs]


def seal(con: duckdb.DuckDBPyConnection) -> None:
    """Close DuckDB's sandbox on a connection: no file access, no spilling, settings locked."""
    con.execute("SET temp_directory = ''")  # already so from the start; said again before the lock
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def arrow_dataset(snap: Snapshot, table: str) -> ds.Dataset | None:
    """One table's committed files as a pyarrow dataset with the hive columns (run, players)
    and the shard number as partition columns; None when the table has no file.

    pyarrow fills partition columns in every row: `run` is dictionary-encoded so that it costs
    an index per row, not a string (a GROUP BY run over 63M events: 1.7 -> 0.33 s of CPU).
    """
    shards = [s for s in snap.shards if s.files[table].exists()]
    if not shards:
        return None
    paths = [str(s.files[table].absolute()) for s in shards]
    schema = pa.schema(
        [
            pa.field("run", pa.dictionary(pa.int32(), pa.string())),
            pa.field("players", pa.int32()),
            pa.field("shard", pa.int32()),
            *pq.read_schema(paths[0]),
        ]
    )
    partitions = [
        (pc.field("run") == s.run)
        & (pc.field("players") == s.players)
        & (pc.field("shard") == s.shard)
        for s in shards
    ]
    return ds.FileSystemDataset.from_paths(
        paths,
        schema=schema,
        format=ds.ParquetFileFormat(),
        filesystem=pafs.LocalFileSystem(),
        partitions=partitions,
    )
