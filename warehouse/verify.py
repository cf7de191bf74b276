"""`flip7 warehouse verify`: the lake agrees with itself, or an account of where it does not.

It runs the data tests in sql/tests (each returns failing rows, none when all is well):

- `-- scope: lake` tests once over the whole snapshot: the manifests' row counts equal the
  Parquet footers, complete runs hold every planned game once, each cell plays the ruleset its
  manifest names;
- `-- scope: shard` tests (a game never spans shards): every round and every game rebuilt from
  the event log alone equals the compact tables, every game is whole, every rollup equals the
  one recomputed from its shard's tables. First a compiled pass (warehouse.shardcheck) reads
  each shard's files once, `workers` shards at a time (threads: the pass and pyarrow's reads
  release the GIL; one shard's tables in memory per thread), and clears a shard when every
  condition of these tests holds there, compared row by row (stricter than the tests); the
  SQL tests then run on the shards it did not clear (damaged, Vengeance, unreadable as
  written), so the account, failing rows and all, is the SQL's. On a clean classic lake that
  is no shard: the cost is a few microseconds a game (docs/warehouse.md, "What verify costs").
  Where no compiled rollup is at hand (no replayer offering `shard_rollups`), the rollups test
  runs in SQL on every shard.
  The SQL, per shard batch (a few shards at a time):
  the intermediate relations are computed once into small tables (one row per game
  from each side, compared in int_games_compared; the events grouped per player per round
  stream into the events' side without being stored) and the tests read those; batches are spread over worker threads, each with its own single-threaded DuckDB
  connection (small hash tables stay in cache; measured faster than one big query). A test
  marked `-- only where: FLAG` compares rows only in games whose int_games_compared FLAG is
  true, so it is skipped where no game's is (planning it would cost more than the rest).

Then the seeds and labels are bound to the games (warehouse.bind): every game's seed must be
the one its manifest's seed derives, and a sample of games (`replay`, 1% by default, at least one
per shard) is re-simulated by a replayer found through an entry point and compared with the log
event by event. Runs whose manifest or a shard file cannot be read are reported and left out
of the rest; a shard whose events or rounds file is readable Parquet but does not decode
(lakecontract.codec) is reported by name as a damaged file and left out of the shard tests and
the replay, the other shards of its batch checked without it. A verify that passes records it
beside each manifest (warehouse.record), which the readers check.

`-- scope: marts` tests (the marts hang together) need the marts and run under pytest.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb
import numpy as np

from lakecontract import codec
from warehouse import record as records
from warehouse import shardcheck
from warehouse.bind import SAMPLE, Replayer, Stored, find_replayer, pick
from warehouse.bind import replay as replay_picked
from warehouse.build import bind_files, build, is_view_only, ordered, reads, scope, sql_files
from warehouse.db import MEMORY_LIMIT_ENV, attach, attach_stored, scratch
from warehouse.lake import (
    EmptyLakeError,
    LakeUnreachable,
    Shard,
    Snapshot,
    data_root,
    screen,
    snapshot,
)

EXAMPLES = 5
#: Shards per query: two halve the per-query planning of one (about 15 ms a batch); more
#: measured no faster (bigger hash tables).
BATCH = 2
#: The games table's summary, made first in a batch (it reads only the compact tables): it
#: says whether the batch holds a Vengeance game (the test int_vengeance_rounds applies too).
TABLES_SUMMARY = "int_games_from_tables"
VENGEANCE_GAMES = f"SELECT coalesce(bool_or(vengeance), false) FROM {TABLES_SUMMARY}"
#: Rebuilt only where a batch holds a Vengeance game.
VENGEANCE_ROUNDS = "int_vengeance_rounds"
#: Views that int_vengeance_rounds reads too: tables in batches with Vengeance games.
READ_BY_VENGEANCE = frozenset({"int_event_groups"})
EMPTY = "\nWITH NO DATA"
#: DuckDB's buffers for the lake-wide tests and the seeds, unless $FLIP7_MEMORY_LIMIT says
#: otherwise: past it they spill, so that verify's peak stays under 1 GB at 10M games (the
#: readers' default, 4 GB, let it grow past 1.2 GB there).
LAKE_MEMORY = "512MB"
#: The test the compiled pass clears only where it could recompute the rollup.
ROLLUPS_TEST = "assert_rollups_match_tables"


@dataclass
class Check:
    """One data test's outcome: how many rows failed and the first few of them."""

    name: str
    about: str
    failed: int = 0
    examples: list[dict[str, object]] = field(default_factory=list)
    #: False for a check that had nothing to look at (the replay, when no game was replayed).
    ran: bool = True

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
    #: Games in the lake, games re-simulated, and the share asked for (warehouse.bind).
    games: int = 0
    replayed: int = 0
    replay: float = SAMPLE
    #: Games and games re-simulated, by run.
    games_by_run: dict[str, int] = field(default_factory=dict)
    replayed_by_run: dict[str, int] = field(default_factory=dict)
    #: What verify could not bind or check, in words.
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.failed == 0 for c in self.checks)

    def without_replay(self) -> list[str]:
        """The runs with games of which none was re-simulated: their labels and seeds are bound
        to the manifest only (a run relabelled consistently everywhere would pass)."""
        return [
            r
            for r in self.runs
            if self.games_by_run.get(r, 0) and not self.replayed_by_run.get(r, 0)
        ]


def tests(which: str) -> dict[str, str]:
    """The data tests of one scope (shard, lake or marts): {name: SQL}."""
    return {n: s for n, s in sql_files("tests").items() if scope(s) == which}


def gate(sql: str) -> str | None:
    """The `-- only where: FLAG` of a data test: it compares rows only of the games whose FLAG
    (a boolean column of int_games_compared) is true, so it finds nothing when none is."""
    m = re.search(r"^--\s*only where:\s*(\w+)\s*$", sql, re.M)
    return m.group(1) if m else None


def about(sql: str) -> str:
    """A test's first sentence (its leading comment, less the scope line): what it checks."""
    words = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        text = line.removeprefix("--").strip()
        if not text.startswith(("scope:", "materialized:", "only where:")):
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


def _made_as(name: str, sql: str, vengeance: bool) -> str:
    """How verify makes an intermediate relation in a batch: a "view" (created once), a
    "table" (computed afresh) or an "empty" table (Vengeance rounds where no game has any)."""
    if name == VENGEANCE_ROUNDS and not vengeance:
        return "empty"
    if is_view_only(sql) and not (vengeance and name in READ_BY_VENGEANCE):
        return "view"
    return "table"


def _needed(files: dict[str, str], shard_tests: dict[str, str]) -> set[str]:
    """The intermediate relations the tests read, directly or through one another."""
    todo = [n for sql in shard_tests.values() for n in reads(sql) if n in files]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [n for n in reads(files[name]) if n in files]
    return seen


def _shard_worker(
    lake: Snapshot | str, shard_tests: dict[str, str]
) -> Callable[[list[Shard]], dict[str, list[dict[str, object]]]]:
    """A function checking a batch of shards of `lake` (a snapshot, or a root to list), with
    one DuckDB connection per thread. A local lake's files are read by DuckDB itself; a lake
    on another filesystem (S3, ...) through pyarrow datasets attached batch by batch. Only
    the intermediate relations the tests read are made."""
    whole = lake if isinstance(lake, Snapshot) else snapshot(lake)
    local = threading.local()
    files = sql_files("intermediate")
    needed = _needed(files, shard_tests)
    names = sorted(ordered(files), key=lambda name: name != TABLES_SUMMARY)  # stable
    intermediate = {name: files[name] for name in names if name in needed}

    def check(shards: list[Shard]) -> dict[str, list[dict[str, object]]]:
        con = getattr(local, "con", None)
        snap = whole.subset(shards)
        if con is None:
            con = scratch()
            con.execute("SET threads = 1")
            con.execute("SET parquet_metadata_cache = true")
            arrow = _attach_batch(con, snap)  # may find a damaged file
            build(con, snap, layers=("staging",), lake_table=arrow)
            local.con, local.made = con, {}
        else:
            _attach_batch(con, snap)
            bind_files(con, snap)
        made: dict[str, str] = local.made  # name -> how it is made now
        # The games table's summary first (it says whether the batch holds a Vengeance game),
        # then the one scan of the events and the small relations the tests share, each computed
        # once per batch (in creation order). Relations marked `-- materialized: view` are views,
        # created once (a view reads the current tables when queried): the row-by-row tests
        # read them only for games whose summaries disagree, and int_event_groups is read once,
        # by int_games_from_events (through int_rounds_from_events), so its groups stream into
        # that aggregate instead of being copied into a table. A batch with Vengeance games
        # reads the groups twice (int_vengeance_rounds too): there they are a table. A batch
        # without has no Vengeance rounds to rebuild: that table stays empty (typed once by the
        # query's columns, which DuckDB still plans and runs).
        vengeance = False
        for name, sql in intermediate.items():
            kind = _made_as(name, sql, vengeance)
            was = made.get(name)
            if was == kind and kind != "table":
                continue
            if was is not None and (was == "view") != (kind == "view"):
                con.execute(f"DROP {'VIEW' if was == 'view' else 'TABLE'} {name}")
            create = "VIEW" if kind == "view" else "OR REPLACE TABLE"
            con.execute(f"CREATE {create} {name} AS\n{sql}{EMPTY if kind == 'empty' else ''}")
            made[name] = kind
            if name == TABLES_SUMMARY:
                vengeance = con.execute(VENGEANCE_GAMES).fetchall()[0][0]
        # A test gated on a flag nobody raised would plan its row-by-row joins for nothing
        # (planning them costs more than the rest of the test, about 5 ms).
        flags = sorted({f for f in map(gate, shard_tests.values()) if f})
        raised: dict[str, bool] = {}
        if flags:
            row = con.execute(
                f"SELECT {', '.join(f'bool_or({f})' for f in flags)} FROM int_games_compared"
            ).fetchall()[0]
            raised = {f: bool(v) for f, v in zip(flags, row, strict=True)}
        return {
            name: failing_rows(con, sql) if raised.get(gate(sql) or "", True) else []
            for name, sql in shard_tests.items()
        }

    return check


def _attach_batch(con: duckdb.DuckDBPyConnection, snap: Snapshot) -> str | None:
    """A batch's files for its connection, each read whole: on a local disk DuckDB reads the
    games and rollups itself and the events and rounds come decoded (None: the lake macros
    stay DuckDB's own); elsewhere every table through pyarrow (the macros that read them)."""
    if snap.local:
        attach_stored(con, snap, load=True)
        return None
    return attach(con, snap, footers=False, load=True)


def _lake_connection(snap: Snapshot) -> duckdb.DuckDBPyConnection:
    """A connection with the staging views over the whole snapshot, holding at most
    $FLIP7_MEMORY_LIMIT, else LAKE_MEMORY, in DuckDB's buffers (spilling past it). On a local
    disk DuckDB reads the games and rollups files itself (faster than through pyarrow), the
    events and rounds decoded (warehouse.db.attach_stored)."""
    con = scratch(None if os.environ.get(MEMORY_LIMIT_ENV) else LAKE_MEMORY)
    if snap.local:
        attach_stored(con, snap)
        build(con, snap, layers=("staging",))
    else:
        build(con, snap, layers=("staging",), lake_table=attach(con, snap))
    return con


def _batches(shards: list[Shard], batch: int) -> list[list[Shard]]:
    return [shards[i : i + batch] for i in range(0, len(shards), batch)]


def _compiled_pass(
    snap: Snapshot,
    shards: list[Shard],
    replayer: Replayer | None,
    workers: int,
    progress: Callable[[int, int], None] | None,
    sampled: dict[tuple[str, int], tuple[int, int]],
    stored: Stored,
) -> tuple[list[Shard], list[Shard]]:
    """Run warehouse.shardcheck over every shard, `workers` threads at a time (the pass and
    pyarrow's reads release the GIL); the shards that need every SQL test (not cleared) and
    those that need the rollups test alone (cleared, but no compiled rollup to compare).
    The games of each shard's block in `sampled` (the replay's sample) go into `stored`."""
    rollups = shardcheck.rollup_pass(replayer)

    def one(shard: Shard) -> shardcheck.Outcome:
        try:
            tables = shardcheck.read(snap.fs, shard.files)
        except (OSError, ValueError) as exc:
            return shardcheck.Outcome(False, f"not read: {exc}")
        block = sampled.get((shard.run, shard.shard))
        if block is not None:
            try:
                games = shardcheck.sample_games(tables, *block)
            except Exception:  # noqa: BLE001 (not as written: the replay reads them through SQL)
                games = {}
            with lock:
                stored.setdefault(shard.run, {}).update(games)
        return shardcheck.check(tables, shard.players, rollups)

    lock = threading.Lock()

    sql_all, sql_rollups = [], []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for done, (shard, outcome) in enumerate(zip(shards, pool.map(one, shards), strict=True), 1):
            if not outcome.clear:
                sql_all.append(shard)
            elif outcome.rollups is None:
                sql_rollups.append(shard)
            if progress is not None:
                progress(done, len(shards))
    return sql_all, sql_rollups


#: A SQL batch's outcome: failing rows by test, and rows naming shard files that do not read.
Batch = tuple[dict[str, list[dict[str, object]]], list[dict[str, object]]]


def damaged_files(snap: Snapshot, shard: Shard, exc: BaseException) -> list[dict[str, object]]:
    """verify's rows (for manifests_readable) naming the files of a shard that do not read as
    the lake stores them (a Parquet file pyarrow cannot read, or stored values that do not
    decode, lakecontract.codec), each file read again alone to name it; `exc`, what reading
    the shard raised, where no file fails alone."""
    rows: list[dict[str, object]] = []
    for table, path in shard.files.items():
        try:
            with snap.fs.open_input_file(path) as f:
                codec.read_table(f, table)
        except LakeUnreachable:
            raise
        except (OSError, ValueError) as why:
            rows.append(_damaged(shard, path, why))
    return rows or [_damaged(shard, shard.files["games"], exc)]


def _damaged(shard: Shard, path: str, exc: BaseException) -> dict[str, object]:
    why = " ".join(str(exc).split()).removeprefix(f"{path}: ")
    return {
        "run": shard.run,
        "shard": shard.shard,
        "problem": f"shard file {path} does not read as stored ({why}): damaged; write the run "
        "again (`flip7 tournament run SPEC --overwrite`)",
    }


def _recorded_shards(snap: Snapshot) -> dict[str, int]:
    """How many finished shards each manifest records."""
    return {
        run: len(json.loads(snap.read_text(path)).get("shards") or {})
        for run, path in snap.manifests.items()
    }


def verify(
    data_dir: str | os.PathLike[str] | None = None,
    run: str | None = None,
    *,
    workers: int | None = None,
    batch: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
    replay: float = SAMPLE,
    replayer: Replayer | None = None,
    discover: bool = True,
    keep_record: bool = False,
    compiled: bool = True,
) -> Verification:
    """Check every committed shard of the lake (or of one run); see the module docstring.

    `replay` is the share of each shard's games re-simulated (1 for all); `replayer` the
    replayer to use, else (with `discover`) the one installed under the entry point group.
    With `keep_record`, a pass is recorded beside each manifest and a failure clears it.
    `compiled=False` leaves the shard tests to SQL alone (every shard, as before the compiled
    pass: what the tests of that pass compare it with).
    """
    root = data_root(data_dir)
    whole_snap = snapshot(root, [run] if run else None)
    if not whole_snap.shards and not whole_snap.manifests:
        raise EmptyLakeError(f"nothing to verify under {root}: no manifests, no committed shards")
    snap, skipped = screen(whole_snap)
    if replayer is None and discover:
        replayer = find_replayer()
    workers = workers or os.cpu_count() or 1
    t0 = time.perf_counter()
    checks: dict[str, Check] = {}

    def record(name: str, sql: str, rows: list[dict[str, object]]) -> None:
        checks.setdefault(name, Check(name, about(sql))).add(rows)

    missing: list[dict[str, object]] = [
        {"path": p, "problem": f"the {snap.table_of(p)} file of a committed shard is missing"}
        for p in snap.missing
    ]
    record("committed_files", "-- every committed shard has its events and rounds files", missing)
    record(
        "manifests_readable",
        "-- every run's manifest and shard files are readable (a run whose are not is left "
        "out of the rest; a shard whose files do not read as stored, out of its shard tests)",
        [{"run": r, "problem": why} for r, why in sorted(skipped.items())],
    )

    events = 0
    binding = None
    if snap.shards:
        con = _lake_connection(snap)
        for name, sql in tests("lake").items():
            record(name, sql, failing_rows(con, sql))
        # Events as the games table counts them (the events files hold a row per game, without
        # its ROUND_SCOREs).
        events = int(
            con.execute("SELECT coalesce(sum(events), 0) FROM stg_games WHERE seat = 0").fetchall()[
                0
            ][0]
        )
        manifests = {r: json.loads(snap.read_text(p)) for r, p in snap.manifests.items()}
        # The seeds checked and the replay's sample picked; the compiled pass (below) reads
        # the sampled games' events with the rest of their shards, and the replay follows.
        picked = pick(con, manifests, replayer, replay)
        con.close()  # its buffers go back before the shards are read
    whole = [s for s in snap.shards if all(snap.exists(p) for p in s.files.values())]
    stored: Stored = {}
    # The compiled pass first, shard by shard (each shard's files read once, in bounded
    # memory, `workers` at a time); the SQL tests then check what it did not clear.
    if compiled and whole:
        sql_all, sql_rollups = _compiled_pass(
            snap, whole, replayer, workers, progress, picked.ranges(), stored
        )
    else:
        sql_all, sql_rollups = whole, []
    seeds_about = "-- every game's seed is the one its manifest's seed derives for it"
    replay_about = (
        "-- a sample of games re-simulated from their seeds and seats equals the event log, "
        "event for event"
    )
    if snap.shards:
        record("seeds_match_manifest", seeds_about, [])
        record("replay_matches_log", replay_about, [])
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
    rollups_only = {ROLLUPS_TEST: shard_tests[ROLLUPS_TEST]}
    work = [(shard_tests, b) for b in _batches(sql_all, batch)]
    work += [(rollups_only, b) for b in _batches(sql_rollups, batch)]
    workers_of = {ROLLUPS_TEST: _shard_worker(snap, rollups_only)}
    full = _shard_worker(snap, shard_tests)
    done = len(whole) - len(sql_all) - len(sql_rollups)

    def run_sql(item: tuple[dict[str, str], list[Shard]]) -> Batch:
        """A batch's failing rows by test, and the rows naming its shards whose files do not
        read as stored (those are left out of the batch: the rest is checked without them)."""
        which, shards = item
        try:
            return (full if which is shard_tests else workers_of[ROLLUPS_TEST])(shards), []
        except LakeUnreachable:
            raise
        except (OSError, ValueError) as exc:
            if len(shards) == 1:
                return {}, damaged_files(snap, shards[0], exc)
            results, damaged = {}, []
            for one in shards:
                rows, bad = run_sql((which, [one]))
                damaged += bad
                for name, found in rows.items():
                    results.setdefault(name, []).extend(found)
            return results, damaged

    damaged: list[dict[str, object]] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for (_, shards), (result, bad) in zip(work, pool.map(run_sql, work), strict=True):
            for name, rows in result.items():
                record(name, shard_tests[name], rows)
            damaged += bad
            done += len(shards)
            if progress is not None and not compiled:
                progress(done, len(whole))
    record("manifests_readable", "", damaged)
    if snap.shards:
        # The shards whose files do not read are left out of the replay (a note says how
        # many of their games it skipped); a connection to the lake again only where a sampled
        # game of the others was not read above.
        bad = {(row["run"], row["shard"]) for row in damaged}
        skipped_games: dict[str, int] = {}
        if bad:
            kept: dict[str, dict[str, Any]] = {}
            for r, col in picked.games.items():
                ok = np.asarray([(r, int(x)) not in bad for x in col["shard"].tolist()], bool)
                kept[r] = {k: v[ok] for k, v in col.items()}
                skipped_games[r] = int((~ok).sum())
            picked = replace(picked, games=kept)
        unread = any(
            not set(col["game"].tolist()) <= set(stored.get(run, {}))
            for run, col in picked.games.items()
        )
        readable = replace(snap, shards=[s for s in snap.shards if (s.run, s.shard) not in bad])
        con = _lake_connection(readable) if unread else scratch(spill=False)
        binding = replay_picked(con, manifests, picked, replayer, stored)
        con.close()
        binding.notes += [
            f"run {r}: {n} sampled games not replayed: their shard's files do not read "
            "(manifests_readable)"
            for r, n in sorted(skipped_games.items())
            if n
        ]
        record("seeds_match_manifest", seeds_about, binding.seed_rows)
        record("replay_matches_log", replay_about, binding.replay_rows)
        checks["replay_matches_log"].ran = binding.replayed > 0
    result = Verification(
        str(root),
        whole_snap.runs,
        len(whole_snap.shards),
        events,
        time.perf_counter() - t0,
        workers,
        list(checks.values()),
        games=binding.games if binding else 0,
        replayed=binding.replayed if binding else 0,
        replay=replay,
        notes=binding.notes if binding else [],
        games_by_run=binding.games_by_run if binding else {},
        replayed_by_run=binding.replayed_by_run if binding else {},
    )
    if keep_record:
        ran = [c.name for c in result.checks if c.ran]
        for r in whole_snap.runs:
            if r not in whole_snap.manifests:
                continue
            if result.ok:
                details = {
                    "replay": replay,
                    "replayed": result.replayed_by_run.get(r, 0),
                    "games": result.games_by_run.get(r, 0),
                    "checks": ran,
                }
                records.write(whole_snap, r, details)
            else:
                records.clear(whole_snap, r)
    return result
