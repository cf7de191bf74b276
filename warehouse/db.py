"""Open the warehouse: a fresh in-memory DuckDB database built over a snapshot of the lake.

`connect()` lists the committed shards (see `warehouse.lake`), creates the macros, staging views
and marts (`warehouse.build`), and returns the connection. Nothing is ever written to the lake:
the database lives in memory and the Parquet files are only read. Marts are views by default
(nothing is computed until asked); `materialize=True` computes the aggregated marts once into
in-memory tables, which pays when many queries follow (the report, the dashboard).

Read-only (the default) is DuckDB's own sandbox, not a list of forbidden statements: DuckDB
never opens a file itself. The staging views read the committed shards through pyarrow datasets
handed to DuckDB (`lake_events`, `lake_rounds`, `lake_games`: pyarrow opens the files for
reading only, on whatever filesystem the lake lies: a local disk, S3, ...), the Parquet footers'
row counts are read by pyarrow too (`lake_footers`), and then `enable_external_access` goes off (no COPY TO, ATTACH, read_csv, read_text,
glob, INSTALL or LOAD of any file), extensions never autoload or autoinstall, and
`lock_configuration` refuses any SET that would give some of it back (log_query_path,
profiling_output, temp_directory, memory_limit, ...).

Memory: a connection holds at most `memory_limit` (the argument, else $FLIP7_MEMORY_LIMIT, else
SPILL_MEMORY_LIMIT where it spills and MEMORY_LIMIT where it does not) in DuckDB's buffers. With
`spill` (the default), what does not fit spills into a private temporary directory made for this
connection alone (`spill_dir`: mode 0700, under $FLIP7_SPILL_DIR or the system's temporary
directory, never a path a query names), at most `max_temp_directory_size` ($FLIP7_SPILL_LIMIT,
else half the free space there); DuckDB deletes its files when the connection closes, and the
directory goes when the connection is released or the interpreter exits. DuckDB lets SQL on a
connection with file access off still read and write inside its own temporary directory, so
`flip7 sql`, which runs the user's text, connects with `spill=False` (no temporary directory: a
query over the limit fails); the report, compare, verify and the dashboard run only the
warehouse's own SQL and spill.

Each connection also holds `runs_with_problems` (run, problem): the runs left out because their
manifest cannot be read, and the runs `verify` has not passed as they are now (see
warehouse.record); `problems()` gives them as lines for a reader.
`read_only=False` (`flip7 sql --write`) builds the same views over the same pyarrow datasets and
leaves DuckDB's file access as it is. The events and rounds files are stored compactly
(lakecontract.codec): their datasets decode each batch into the rows the views read.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from lakecontract import codec
from warehouse import record
from warehouse.build import build
from warehouse.lake import (
    FOOTER_THREADS,
    TABLES,
    EmptyLakeError,
    Shard,
    Snapshot,
    data_root,
    local_footer_rows,
    screen,
    snapshot,
    store_error,
)
from warehouse.rollups import RollupRows, shard_columns
from warehouse.twins import Fold

#: The default memory limit of a connection that cannot spill (`flip7 sql` without --write),
#: where a query over it fails: DuckDB's own default is 80% of the machine; half leaves room
#: for the rest of it (the dashboard's server, a tournament).
MEMORY_LIMIT = "50%"
#: The default memory limit of a connection that spills (the report, the dashboard, verify):
#: past it, DuckDB writes to disk and goes on, so a fixed size keeps the process's peak flat
#: however big the run (measured in docs/pipeline.md, "Memory of the whole-run commands").
#: DuckDB still needs working memory per thread: the report of 10M games on 2 threads failed
#: under 2 GB (it passed on 1 thread), so more cores may need more ($FLIP7_MEMORY_LIMIT).
SPILL_MEMORY_LIMIT = "4GB"
MEMORY_LIMIT_ENV = "FLIP7_MEMORY_LIMIT"
THREADS_ENV = "FLIP7_THREADS"
#: The least memory limit taken: under it DuckDB cannot hold even the warehouse's own small
#: tables (1B once failed on the first insert, with a traceback); the report of a small run
#: needed more than 16MB on two threads.
MIN_MEMORY = 32 * 1000**2
MIN_MEMORY_TEXT = "32MB"
#: The most threads a connection takes (DuckDB aborted the process on 99,999,999,999).
MAX_THREADS = 256
_UNITS = {
    "b": 1,
    "bytes": 1,
    **{u: 1000**i for i, u in enumerate(("kb", "mb", "gb", "tb"), 1)},
    **{u: 1024**i for i, u in enumerate(("kib", "mib", "gib", "tib"), 1)},
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]+|%)\s*$")
#: Where the private spill directories are made (default: the system's temporary directory,
#: $TMPDIR) and how much each may hold (default: SPILL_SHARE of the free space there).
SPILL_DIR_ENV = "FLIP7_SPILL_DIR"
SPILL_LIMIT_ENV = "FLIP7_SPILL_LIMIT"
SPILL_SHARE = 0.5
#: Replaces macros/lake.sql's `lake_table` in a read-only warehouse: the same columns (run,
#: players, shard, then the file's), read from the pyarrow dataset of the files' table
#: (`lake_<table>`, the table named by the files' path; the lists hold one table's files).
ARROW_LAKE_TABLE = r"""
create or replace macro lake_table(files) as table
    select * from query_table(
        'lake_' || regexp_extract(files[1], '([a-z]+)/run=[^/]+/players=\d+/shard-\d+\.parquet$', 1)
    )
"""
#: Replaces macros/lake.sql's `rollup_rows`: the rollups rows streamed file by file
#: (warehouse.rollups.RollupRows, `lake_rollup_rows`), without a dataset's cached footers.
ARROW_ROLLUP_ROWS = """
create or replace macro rollup_rows(files) as table select * from lake_rollup_rows
"""
#: Replaces macros/lake.sql's `parquet_footers`: the row counts pyarrow read from the footers.
ARROW_FOOTERS = """
create or replace macro parquet_footers(files) as table
    select file_name, num_rows from lake_footers
"""
#: `parquet_footers` where nothing reads the footers (typed, empty).
NO_FOOTERS = """
create or replace macro parquet_footers(files) as table
    select cast(null as varchar) as file_name, cast(null as bigint) as num_rows where false
"""


def connect(
    data_dir: str | os.PathLike[str] | None = None,
    runs: list[str] | None = None,
    *,
    materialize: bool = False,
    threads: int | None = None,
    read_only: bool = True,
    memory_limit: str | None = None,
    spill: bool = True,
    card_counting: bool = False,
    lake: tuple[Snapshot, dict[str, str]] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A connection with every view and mart over the lake's committed shards.

    `threads` defaults to $FLIP7_THREADS, else one per core. `data_dir` defaults to $FLIP7_DATA or ./data; `runs` restricts it to some runs. Read-only
    (the default) seals DuckDB off from every file (see the module docstring). `memory_limit`
    defaults to $FLIP7_MEMORY_LIMIT, else SPILL_MEMORY_LIMIT (with `spill`) or MEMORY_LIMIT
    (without); with `spill`, a query that needs more
    spills into the connection's private directory (see the module docstring), without, it
    fails. Raises EmptyLakeError (a FileNotFoundError) when there is nothing committed to
    read, naming the runs that exist and how to make one; ValueError for a memory or spill
    limit DuckDB does not accept. With `card_counting` (a reader that will query that mart: the
    report), the mart's per-game products are computed in the one pass over the rollups files
    at connect (warehouse.twins.Fold) instead of a second pass on its first query; a connection
    that never reads the mart would read the lists for nothing. `lake` is the lake already
    listed and screened (`screen(snapshot(root, runs))`: the snapshot and the runs left out),
    for a reader that keyed something else on that listing (the dashboard's mart cache): the
    connection then shows exactly that snapshot, and nothing is listed or read twice.
    """
    root = data_root(data_dir)
    snap, skipped = lake if lake is not None else screen(snapshot(root, runs))
    if not snap.shards:
        which = f"run {', '.join(runs)}" if runs else "any run"
        left_out = "".join(f"; run {r} left out: {why}" for r, why in sorted(skipped.items()))
        raise EmptyLakeError(
            f"no committed shards of {which} under {root} (runs there: "
            f"{', '.join(snap.runs) or 'none'}{left_out}); write one with `flip7 tournament run "
            f"SPEC --data {root}`, or point --data / $FLIP7_DATA at a lake"
        )
    # No extension loads itself; nothing spills but into the connection's own directory
    # (DuckDB's in-memory default spills to .tmp/ in the working directory).
    config: dict[str, str | bool | int] = {"temp_directory": ""}
    if read_only:
        config |= {"autoload_known_extensions": False, "autoinstall_known_extensions": False}
    private = spill_dir() if spill else None
    if private is not None:
        config |= spill_config(private)
    con = open_duckdb(config, private, memory_limit, threads)
    # The lake reaches DuckDB as pyarrow scans, which it estimates at one row each, and the
    # per-event views unnest a row per game into hundreds of events, which it cannot estimate
    # at all: choosing a join's in-memory (build) side from such estimates put 45M events in
    # memory to match 800k seats (3.5 GB at 200k games; out of memory at 2M). Without that
    # choice a join keeps the sides as written: the relation after JOIN is the one held in
    # memory, and `FROM stg_stored_events e JOIN stg_games g` streams the events.
    con.execute(f"SET disabled_optimizers = '{KEEP_JOIN_SIDES}'")
    notes = record.notes(snap, skipped)
    con.execute("CREATE TABLE runs_with_problems (run VARCHAR, problem VARCHAR)")
    if notes:
        con.executemany("INSERT INTO runs_with_problems VALUES (?, ?)", [list(n) for n in notes])
    if not read_only and snap.local:
        attach_stored(con, snap)
        build(con, snap, materialize=materialize, pinned=SUMMED)
        return con
    fold = Fold(snap) if card_counting else None
    lake = attach(con, snap, fold=fold)
    build(con, snap, materialize=materialize, lake_table=lake, pinned=SUMMED, fold=fold)
    if read_only:
        seal(con)
    return con


def attach(
    con: duckdb.DuckDBPyConnection,
    snap: Snapshot,
    footers: bool = True,
    load: bool = False,
    fold: Fold | None = None,
) -> str:
    """Hand the snapshot's files to DuckDB as pyarrow datasets (`lake_events`, `lake_rounds`,
    `lake_games`) and, with `footers`, their row counts (`lake_footers`); the SQL that points
    the lake macros at them (run it after macros/lake.sql: `build(..., lake_table=...)`).
    Re-attaching another snapshot re-points the views (verify does, batch by batch).

    With `load`, the files are read whole, once, into memory tables instead (verify's small
    batches of a remote lake: its queries scan each table several times, and one GET per file
    beats a footer and column-range requests per scan). A `fold` is handed the rollups files
    in the rollups rows' first pass (see warehouse.rollups.RollupRows)."""
    partitions: dict[tuple[str, int, int], ds.Expression] = {}  # per shard, for every table
    for table in TABLES:
        data = arrow_table(snap, table) if load else arrow_dataset(snap, table, partitions)
        if data is not None:
            con.register(f"lake_{table}", data)
    macros = ARROW_LAKE_TABLE + ";\n"
    if not load:
        con.register("lake_rollup_rows", RollupRows(snap, fold))
        macros += ARROW_ROLLUP_ROWS + ";\n"
    if not footers:  # verify's shard batches: their tests read no footer
        return macros + NO_FOOTERS
    con.register("lake_footers", footer_table(snap))
    return macros + ARROW_FOOTERS


def attach_stored(con: duckdb.DuckDBPyConnection, snap: Snapshot, load: bool = False) -> None:
    """Hand DuckDB the snapshot's events and rounds decoded (`lake_events`, `lake_rounds`:
    pyarrow datasets, or with `load` the files read whole), where DuckDB reads the games and
    rollups files itself (a local lake outside the sandbox: `flip7 sql --write`, verify).
    DuckDB's own Parquet reader is the faster of the two on those plain tables (verify's lake
    tests over 2M games: 4.7 against 5.2 CPU-s); the stored tables need the codec."""
    for table in STORED_TABLES:
        data = arrow_table(snap, table) if load else arrow_dataset(snap, table)
        if data is not None:
            con.register(f"lake_{table}", data)


#: The tables whose files hold them in the codec's stored form.
STORED_TABLES = ("events", "rounds")


def problems(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None) -> list[str]:
    """What a reader of this warehouse should be told about its runs (one line each: runs
    left out, not verified as they are now, holding shards their manifest does not record)."""
    rows = con.execute("SELECT run, problem FROM runs_with_problems ORDER BY run").fetchall()
    return [f"run {r}: {p}" for r, p in rows if runs is None or r in runs]


def scratch(memory_limit: str | None = None, spill: bool = True) -> duckdb.DuckDBPyConnection:
    """A private in-memory DuckDB for the warehouse's own SQL (`verify`): the readers' memory
    limit, no extension loading itself, spilling (with `spill`) only into a private directory
    of its own, never into .tmp/ of whatever directory the user runs it from."""
    config: dict[str, str | bool | int] = {
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
        "temp_directory": "",
    }
    private = spill_dir() if spill else None
    if private is not None:
        config |= spill_config(private)
    return open_duckdb(config, private, memory_limit, None)


#: The optimizer left out of every reader's connection (see connect).
KEEP_JOIN_SIDES = "build_side_probe_side"

#: Computed once per connection, as tables: the rollups summed per cell (a few rows per cell,
#: from a few hundred rows per shard, in one pass over the rollups files) and the cells. Every headline mart reads them, several
#: times in one query; as views each read would scan every shard's rollups file again.
SUMMED = frozenset({"int_cell_sums", "int_cells", "int_cell_rollups"})


def open_duckdb(
    config: dict[str, str | bool | int],
    private: str | None,
    memory_limit: str | None,
    threads: int | None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with `config`, its memory limit and threads set; its private spill
    directory (if any) removed once it is released. ValueError for a limit DuckDB refuses."""
    try:
        con = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        if private is not None:
            os.rmdir(private)
        raise ValueError(
            f"spill limit {config.get('max_temp_directory_size')!r} from ${SPILL_LIMIT_ENV} "
            f"not understood ({str(exc).splitlines()[0]}); give a size such as 20GB"
        ) from None
    if private is not None:
        # Runs when the connection is released (or at exit), just before DuckDB closes: its
        # files go with the directory (DuckDB copes when they are already gone). A cursor or
        # relation that outlives its connection would find no directory to spill into.
        weakref.finalize(con, shutil.rmtree, private, ignore_errors=True)
    try:
        threads = threads or _threads_from_env()
        default = SPILL_MEMORY_LIMIT if private is not None else MEMORY_LIMIT
        if memory_limit:
            limit = check_memory_limit(memory_limit, "--memory-limit")
        elif os.environ.get(MEMORY_LIMIT_ENV):
            limit = check_memory_limit(os.environ[MEMORY_LIMIT_ENV], f"${MEMORY_LIMIT_ENV}")
        else:
            limit = default
    except ValueError:
        con.close()
        raise
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    try:
        con.execute("SET memory_limit = $limit", {"limit": limit})
    except duckdb.Error as exc:
        con.close()
        raise ValueError(
            f"memory limit {limit!r} not understood ({str(exc).splitlines()[0]}); "
            "give a size such as 4GB or 500MB, or a share of the machine such as 50%"
        ) from None
    return con


def _threads_from_env() -> int | None:
    """$FLIP7_THREADS: DuckDB's threads per connection (each needs its own working memory,
    spilling or not); None (DuckDB's default: one per core) when unset."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or not 1 <= int(text) <= MAX_THREADS:
        raise ValueError(
            f"${THREADS_ENV} {text!r} is not a number of threads from 1 to {MAX_THREADS}; give "
            f"e.g. {os.cpu_count() or 1} (one per core here)"
        )
    return int(text)


def check_memory_limit(text: str, source: str) -> str:
    """`text` if it is a memory limit the warehouse takes: a size of at least MIN_MEMORY (4GB,
    500MB, 2GiB) or a share of the machine from 1% to 100% (50%); else a one-line ValueError
    naming `source` (the flag or variable it came from) and the bound."""
    m = _SIZE.match(text)
    unit = m.group(2).lower() if m else ""
    if m is None or (unit != "%" and unit not in _UNITS):
        raise ValueError(
            f"{source} {text!r} is not a memory limit; give a size of at least {MIN_MEMORY_TEXT} "
            "such as 4GB or 500MB, or a share of the machine such as 50%"
        )
    value = float(m.group(1))
    if unit == "%":
        if not 1 <= value <= 100:
            raise ValueError(
                f"{source} {text!r}: a share of the machine's memory is 1% to 100%; give e.g. 50%"
            )
    elif value * _UNITS[unit] < MIN_MEMORY:
        raise ValueError(
            f"{source} {text!r} is below {MIN_MEMORY_TEXT}, the least memory limit the warehouse "
            "works with; give e.g. 4GB or 50%"
        )
    return text.strip()


def spill_dir() -> str:
    """A new private directory (mode 0700) for one connection's spill files, under
    $FLIP7_SPILL_DIR or the system's temporary directory. DuckDB makes its `duckdb` folder in
    it when it first spills and deletes that folder when the connection closes."""
    parent = os.environ.get(SPILL_DIR_ENV) or None
    if parent is not None and not os.path.isdir(parent):
        raise ValueError(
            f"${SPILL_DIR_ENV} {parent!r} is not a directory; point it at an existing directory "
            "on a disk with room to spill, or unset it for the system's temporary directory"
        )
    return tempfile.mkdtemp(prefix="flip7-spill-", dir=parent)


def spill_config(private: str) -> dict[str, str | bool | int]:
    """DuckDB's settings for spilling into `private`: where, and at most how much
    ($FLIP7_SPILL_LIMIT, else SPILL_SHARE of the free space on its disk)."""
    limit = os.environ.get(SPILL_LIMIT_ENV)
    if not limit:
        free = shutil.disk_usage(private).free
        limit = f"{max(1, int(free * SPILL_SHARE) // 2**20)}MiB"
    return {"temp_directory": os.path.join(private, "duckdb"), "max_temp_directory_size": limit}


def seal(con: duckdb.DuckDBPyConnection) -> None:
    """Close DuckDB's sandbox on a connection: no file access (but its own spill directory, if
    it has one: DuckDB allows that one), settings locked."""
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def arrow_dataset(
    snap: Snapshot,
    table: str,
    partitions: dict[tuple[str, int, int], ds.Expression] | None = None,
) -> LakeDataset | None:
    """One table's committed files as a pyarrow dataset with the hive columns (run, players)
    and the shard number as partition columns; None when the table has no file. `partitions`
    keeps each shard's expression, by (run, players, shard), for the next table's dataset:
    making the expressions of 16,000 files took 0.4 s, a quarter of it with one per shard.

    pyarrow fills partition columns in every row: `run` is dictionary-encoded so that it costs
    an index per row, not a string (a GROUP BY run over 63M events: 1.7 -> 0.33 s of CPU).
    """
    shards = [s for s in snap.shards if snap.exists(s.files[table])]
    if not shards:
        return None
    paths = [s.files[table] for s in shards]
    try:
        file_schema = pq.read_schema(paths[0], filesystem=snap.fs)
    except OSError as exc:
        if snap.local:
            raise
        raise store_error(snap.root, exc) from None
    stored = codec.is_stored(file_schema, table)
    partition_fields = [
        pa.field("run", pa.dictionary(pa.int32(), pa.string())),
        pa.field("players", pa.int32()),
        pa.field("shard", pa.int32()),
    ]
    schema = pa.schema([*partition_fields, *file_schema])
    known = {} if partitions is None else partitions
    for s in shards:
        if (s.run, s.players, s.shard) not in known:
            known[s.run, s.players, s.shard] = (
                (pc.field("run") == s.run)
                & (pc.field("players") == s.players)
                & (pc.field("shard") == s.shard)
            )
    # On a local disk, pyarrow reads column chunks as DuckDB asks for them instead of buffering
    # a row group's at once (pre_buffer): the same speed, less memory outside DuckDB's limit
    # (the report of 2M games under a 1 GB limit: 1,841 -> 1,597 MB peak). A remote store
    # keeps pre_buffer, which coalesces its range requests.
    options = ds.ParquetFragmentScanOptions(
        pre_buffer=not snap.local, use_buffered_stream=snap.local
    )
    found = ds.FileSystemDataset.from_paths(
        paths,
        schema=schema,
        format=ds.ParquetFileFormat(default_fragment_scan_options=options),
        filesystem=snap.fs,
        partitions=[known[s.run, s.players, s.shard] for s in shards],
    )
    fragments = list(found.get_fragments())
    if stored:
        logical = pa.schema([*partition_fields, *codec.LOGICAL[table]])
        data: LakeDataset = StoredDataset(fragments, logical, found.format, snap.fs)
        data.table, data.stored_schema = table, schema
    else:
        data = LakeDataset(fragments, schema, found.format, snap.fs)
    if snap.local:
        data.scan = LOCAL_SCAN | ({"batch_size": EVENT_BATCH_ROWS} if table == "events" else {})
    return data


#: How a scan of a local lake reads: no batch or file decoded ahead of the one DuckDB asks for,
#: and the events in batches of EVENT_BATCH_ROWS rows (an events row is a game's whole log, so
#: pyarrow's default of 131,072 rows made each batch a whole file, about 9 MB decoded). pyarrow's defaults (16 batches and 4
#: files ahead) held decoded files outside DuckDB's memory limit: a scan of every stored event
#: of 200,000 games peaked at 956 MB with them, 578 MB without, in the same CPU time (measured
#: in docs/warehouse.md, "Card-level SQL over a large lake"). A remote lake keeps pyarrow's
#: defaults: there reading ahead hides the store's latency.
LOCAL_SCAN = {"batch_readahead": 0, "fragment_readahead": 0}
EVENT_BATCH_ROWS = 1024


class LakeDataset(ds.FileSystemDataset):
    """A table's files as `arrow_dataset` gives them, scanned with `scan` (LOCAL_SCAN on a
    local lake): DuckDB scans a registered dataset through `type(dataset).scanner(dataset,
    columns=..., filter=...)`, which this answers with the projection and filter it is given."""

    scan: dict[str, int] = {}

    def scanner(self, **kwargs: object) -> ds.Scanner:
        return ds.Scanner.from_dataset(self, **{**self.scan, **kwargs})


class StoredDataset(LakeDataset):
    """A stored table's files (events or rounds, lakecontract.codec) as the rows readers see:
    its schema is the logical one, and a scan reads the stored columns the asked-for ones are
    decoded from, file by file, and decodes each batch with its file's metadata. A filter is
    pushed to the files where it names only stored columns (the partitions, `game`) and applied
    again to the decoded rows (where it names a decoded column, there alone): a scan decodes the
    columns asked for and those the filter names, no other."""

    table: str = ""
    stored_schema: pa.Schema = pa.schema([])

    def scanner(self, **kwargs: object) -> ds.Scanner:  # type: ignore[override]
        return _DecodingScanner(self, {**self.scan, **kwargs})  # type: ignore[return-value]


class _DecodingScanner:
    """What DuckDB asks a dataset's scanner for (`to_reader`), over decoded batches."""

    def __init__(self, data: StoredDataset, options: dict[str, object]) -> None:
        self.data, self.options = data, options

    def to_reader(self) -> pa.RecordBatchReader:
        data, options = self.data, dict(self.options)
        names = options.pop("columns", None)
        wanted = list(data.schema.names) if names is None else list(names)  # type: ignore[arg-type]
        expr = options.pop("filter", None)
        # A filter may name columns the projection leaves out: decode them all to apply it.
        decoded = _filtered_by(expr, data.schema, wanted)
        logical = [c for c in decoded if c not in PARTS]
        # No column at all (count(*)): the game ids still give each batch its rows.
        logical = logical or ["game"]
        read = [*PARTS, *codec.stored_columns(data.table, logical)]
        fragments = data.get_fragments(filter=expr) if expr is not None else data.get_fragments()
        physical = ds.FileSystemDataset(
            list(fragments), data.stored_schema, data.format, data.filesystem
        )
        try:  # a filter on stored columns prunes files by their statistics
            scanner = ds.Scanner.from_dataset(physical, columns=read, filter=expr, **options)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # it names a decoded column
            scanner = ds.Scanner.from_dataset(physical, columns=read, **options)
        schema = pa.schema([data.schema.field(c) for c in wanted])
        metadata: dict[str, dict[bytes, bytes] | None] = {}

        def batches() -> Iterator[pa.RecordBatch]:
            for tagged in scanner.scan_batches():
                batch, fragment = tagged.record_batch, tagged.fragment
                if not batch.num_rows:
                    continue
                if fragment.path not in metadata:
                    metadata[fragment.path] = fragment.metadata.metadata
                try:
                    rows = codec.decode(data.table, batch, metadata[fragment.path], logical)
                except ValueError as exc:
                    raise ValueError(f"{fragment.path}: {exc}") from None
                for i, c in enumerate(PARTS):
                    rows = rows.add_column(i, c, pa.repeat(batch.column(c)[0], rows.num_rows))
                if expr is not None:
                    rows = rows.filter(expr)
                rows = rows.select(wanted)  # casting no column would drop the rows too
                yield from (rows.cast(schema) if wanted else rows).to_batches()

        return pa.RecordBatchReader.from_batches(schema, batches())


#: The partition columns every dataset of the lake adds (hive directories, the file's shard).
PARTS = ("run", "players", "shard")


def _filtered_by(expr: ds.Expression | None, schema: pa.Schema, columns: list[str]) -> list[str]:
    """`columns` and those of `schema` that a filter names besides: a scan decodes those alone,
    not every column, to apply it. A column is named if the filter does not bind without it."""
    if expr is None:
        return columns

    def binds(names: list[str]) -> bool:
        kept = pa.schema([schema.field(c) for c in dict.fromkeys([*PARTS, *names])])
        try:
            kept.empty_table().filter(expr)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return False
        return True

    every = [c for c in schema.names if c not in PARTS]
    named = [c for c in every if c not in columns and not binds([x for x in every if x != c])]
    wanted = [*columns, *named]
    return wanted if binds(wanted) else list(schema.names)


def arrow_table(snap: Snapshot, table: str) -> pa.Table | None:
    """`arrow_dataset`'s rows read into memory: each file fetched whole (in parallel)."""
    shards = [s for s in snap.shards if snap.exists(s.files[table])]
    if not shards:
        return None

    def read(shard: Shard) -> pa.Table:
        try:
            with snap.fs.open_input_stream(shard.files[table]) as f:
                data = f.read()
        except OSError as exc:
            if snap.local:
                raise
            raise store_error(snap.root, exc) from None
        try:
            t = codec.read_table(pa.BufferReader(data), table)
        except ValueError as exc:
            raise ValueError(f"{shard.files[table]}: {exc}") from None
        run, players, number = shard_columns(shard, t.num_rows)
        return (
            t.select([c for c in t.column_names if c not in ("run", "players", "shard")])
            .add_column(0, "run", run)
            .add_column(1, "players", players)
            .add_column(2, "shard", number)
        )

    with ThreadPoolExecutor(max_workers=1 if snap.local else FOOTER_THREADS) as pool:
        parts = list(pool.map(read, shards))
    return pa.concat_tables(parts, promote_options="permissive")


def footer_table(snap: Snapshot) -> pa.Table:
    """(file_name, num_rows) of every committed file, from the Parquet footers (no scan), as
    DuckDB's parquet_file_metadata gives them; read in parallel from a remote store."""
    paths = [p for table in TABLES for p in snap.files(table)]

    def rows(path: str) -> int:
        if path in snap.rows:  # read by screen
            return snap.rows[path]
        try:
            if snap.local:
                return local_footer_rows(path)
            return int(pq.read_metadata(path, filesystem=snap.fs).num_rows)
        except OSError as exc:
            if snap.local:
                raise
            raise store_error(snap.root, exc) from None

    if snap.local or all(p in snap.rows for p in paths):
        counts = [rows(p) for p in paths]  # no thread's hand-over per file (see lake.py)
    else:
        with ThreadPoolExecutor(max_workers=FOOTER_THREADS) as pool:
            counts = list(pool.map(rows, paths))
    return pa.table(
        {"file_name": pa.array(paths, pa.string()), "num_rows": pa.array(counts, pa.int64())}
    )
