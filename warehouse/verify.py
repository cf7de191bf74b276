"""`flip7 warehouse verify`: the lake agrees with itself, or an account of where it does not.

It runs the data tests in sql/tests (each returns failing rows, none when all is well):

- `-- scope: lake` tests once over the whole snapshot: the manifests' row counts equal the
  Parquet footers, complete runs hold every planned game once, one ruleset per run;
- `-- scope: shard` tests shard by shard, since a game never spans shards: every round and
  every game rebuilt from the event log alone equals the compact tables, every game is whole.
  Per shard, the two intermediate relations are computed once into small tables and the tests
  read those; shards are spread over worker threads, each with its own single-threaded DuckDB
  connection (small hash tables stay in cache; measured faster than one big query).

`-- scope: marts` tests (the marts hang together) need the marts and run under pytest.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import duckdb

from warehouse.build import bind_files, build, ordered, scope, sql_files
from warehouse.lake import EmptyLakeError, Shard, Snapshot, data_root, snapshot

EXAMPLES = 5


@dataclass
class Check:
    """One data test's outcome: how many rows failed and the first few of them."""

    name: str
    about: str
    failed: int = 0
    examples: list[dict[str, object]] = field(default_factory=list)

    def add(self, rows: list[dict[str, object]]) -> None:
        self.failed += len(rows)
        self.examples += rows[: max(0, EXAMPLES - len(self.examples))]


@dataclass
class Verification:
    """What verify looked at, how long it took, and each check's outcome."""

    root: str
    runs: list[str]
    shards: int
    events: int
    seconds: float
    workers: int
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.failed == 0 for c in self.checks)


def tests(which: str) -> dict[str, str]:
    """The data tests of one scope (shard, lake or marts): {name: SQL}."""
    return {n: s for n, s in sql_files("tests").items() if scope(s) == which}


def about(sql: str) -> str:
    """A test's first sentence (its leading comment, less the scope line): what it checks."""
    words = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        text = line.removeprefix("--").strip()
        if not text.startswith(("scope:", "materialized:")):
            words.append(text)
    first = " ".join(words)
    for stop in (": ", ". "):
        first = first.split(stop)[0]
    return first.rstrip(".")


def failing_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, object]]:
    """Run one data test; its failing rows as dicts."""
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _shard_worker(
    root: str, shard_tests: dict[str, str]
) -> Callable[[Shard], dict[str, list[dict[str, object]]]]:
    """A function checking one shard, with one DuckDB connection per thread."""
    local = threading.local()
    files = sql_files("intermediate")
    intermediate = {name: files[name] for name in ordered(files)}

    def check(shard: Shard) -> dict[str, list[dict[str, object]]]:
        con = getattr(local, "con", None)
        snap = Snapshot(root=data_root(root), shards=[shard])
        if con is None:
            con = local.con = duckdb.connect(":memory:")
            con.execute("SET threads = 1")
            con.execute("SET parquet_metadata_cache = true")
            build(con, snap, layers=("staging",))
        else:
            bind_files(con, snap)
        # The one scan of the shard's events, then the small relations the tests share, each
        # computed once per shard (in creation order: they read int_event_groups).
        for name, sql in intermediate.items():
            con.execute(f"CREATE OR REPLACE TABLE {name} AS\n{sql}")
        return {name: failing_rows(con, sql) for name, sql in shard_tests.items()}

    return check


def _recorded_shards(snap: Snapshot) -> dict[str, int]:
    """How many finished shards each manifest records."""
    return {
        run: len(json.loads(path.read_text()).get("shards") or {})
        for run, path in snap.manifests.items()
    }


def verify(
    data_dir: str | os.PathLike[str] | None = None,
    run: str | None = None,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Verification:
    """Check every committed shard of the lake (or of one run); see the module docstring."""
    root = data_root(data_dir)
    snap = snapshot(root, [run] if run else None)
    if not snap.shards and not snap.manifests:
        raise EmptyLakeError(f"nothing to verify under {root}: no manifests, no committed shards")
    workers = workers or os.cpu_count() or 1
    t0 = time.perf_counter()
    checks: dict[str, Check] = {}

    def record(name: str, sql: str, rows: list[dict[str, object]]) -> None:
        checks.setdefault(name, Check(name, about(sql))).add(rows)

    missing: list[dict[str, object]] = [
        {"path": str(p), "problem": f"the {p.parts[-4]} file of a committed shard is missing"}
        for p in snap.missing
    ]
    record("committed_files", "-- every committed shard has its events and rounds files", missing)

    events = 0
    if snap.shards:
        con = duckdb.connect(":memory:")
        build(con, snap, layers=("staging",))
        for name, sql in tests("lake").items():
            record(name, sql, failing_rows(con, sql))
        events = int(
            con.execute(
                "SELECT coalesce(sum(num_rows), 0) FROM stg_parquet_files WHERE table_name = 'events'"
            ).fetchall()[0][0]
        )
        con.close()
    else:  # manifests but no committed shard: nothing for SQL to read (no file, no schema)
        recorded: list[dict[str, object]] = [
            {"run": r, "problem": f"manifest records {n} finished shards, none is committed"}
            for r, n in _recorded_shards(snap).items()
            if n
        ]
        record("committed_files", "", recorded)

    shard_tests = tests("shard")
    for name, sql in shard_tests.items():
        checks.setdefault(name, Check(name, about(sql)))
    whole = [s for s in snap.shards if all(p.exists() for p in s.files.values())]
    check = _shard_worker(str(root), shard_tests)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for done, result in enumerate(pool.map(check, whole), 1):
            for name, rows in result.items():
                record(name, shard_tests[name], rows)
            if progress is not None:
                progress(done, len(whole))
    return Verification(
        str(root),
        snap.runs,
        len(snap.shards),
        events,
        time.perf_counter() - t0,
        workers,
        list(checks.values()),
    )
