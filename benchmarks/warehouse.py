"""Benchmark: `flip7 report` and `flip7 warehouse verify` on a lake of 1M four-player games.

The lake is built once (a multiprocessing pool over `pipeline.shard.simulate_shard`, each table
written as the pipeline writes it: `pipeline.lake.WRITE_OPTIONS`, `ROW_GROUP_ROWS`) and
cached outside the repo, by default under /tmp/flip7-bench; a later run reuses it when its
manifest says complete and names the current schema version (otherwise it is rebuilt). Then it
times `report` and `verify` and prints rows/s. Run:
`python benchmarks/warehouse.py [--games N] [--root DIR] [--workers N]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import shutil
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

# Run as a script, this folder comes first on sys.path, and its pipeline.py and warehouse.py
# (the benchmarks) would shadow the packages of the same names: put the repository first.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

from lakecontract import codec  # noqa: E402
from pipeline.lake import ROW_GROUP_ROWS, WRITE_OPTIONS  # noqa: E402
from pipeline.schema import SCHEMA_VERSION  # noqa: E402
from pipeline.shard import ShardTask, simulate_shard  # noqa: E402
from warehouse.db import connect  # noqa: E402
from warehouse.report import report  # noqa: E402
from warehouse.verify import verify  # noqa: E402

RUN = "bench"
SEED = 20240601
# One common-random-number group of three cells that differ by one counting swap, plus a
# fourth, separately seeded cell: enough to exercise every mart (pairs, head-to-head, seats).
CELLS: list[tuple[int, tuple[str, ...]]] = [
    (0, ("ev", "bust:0.25", "sum:20", "count:4")),
    (0, ("evc", "bust:0.25", "sum:20", "count:4")),
    (0, ("ev", "bustc:0.25", "sum:20", "count:4")),
    (1, ("ev", "ev", "bust:0.25", "bust:0.25")),
]
SHARD_GAMES = 5000


def _write(name: str, table: object, path: Path) -> None:
    """Write one table as pipeline.lake's write_parquet does (its options, temp name, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    options = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **WRITE_OPTIONS[name]}
    codec.write_table(table, tmp, **options)  # type: ignore[arg-type]
    os.replace(tmp, path)


def _run_shard(args: tuple[Path, ShardTask]) -> tuple[int, dict[str, int], float, int, int]:
    root, task = args
    t0 = time.perf_counter()
    tables = simulate_shard(task, stored=True)  # the events and rounds as the lake stores them
    for name in ("events", "rounds", "rollups", "games"):  # games last: the commit marker
        _write(
            name,
            tables[name],
            root
            / name
            / f"run={task.run}"
            / f"players={task.n_players}"
            / f"shard-{task.shard:05d}.parquet",
        )
    rows = {k: v.num_rows for k, v in tables.items()}
    return task.shard, rows, time.perf_counter() - t0, task.start, task.stop


def build_lake(root: Path, games: int, procs: int) -> None:
    """Simulate `games` games (split evenly over CELLS) into root, with a manifest."""
    per_cell = games // len(CELLS)
    tasks: list[ShardTask] = []
    cells = []
    for cell, (pair, lineup) in enumerate(CELLS):
        offset = cell * per_cell
        cells.append(
            {
                "cell": cell,
                "players": len(lineup),
                "lineup": list(lineup),
                "pair": pair,
                "games": per_cell,
                "game_offset": offset,
            }
        )
        for start in range(0, per_cell, SHARD_GAMES):
            tasks.append(
                ShardTask(
                    RUN,
                    len(tasks),
                    cell,
                    pair,
                    lineup,
                    "3.1",
                    "classic",
                    SEED,
                    True,
                    offset,
                    start,
                    min(start + SHARD_GAMES, per_cell),
                )
            )
    manifest: dict[str, object] = {
        "run": RUN,
        "schema_version": SCHEMA_VERSION,
        "package_version": "0.1.0",
        "rules_version": 1,
        "ruleset": "3.1",
        "variant": "classic",
        "seed": SEED,
        "created": dt.datetime.now(dt.UTC).isoformat(),
        "status": "running",
        "planned_shards": len(tasks),
        "planned_games": per_cell * len(CELLS),
        "cells": cells,
        "shards": {},
        "rotate": True,  # as the pipeline writes it: verify binds the seats to the line-ups
    }
    mdir = root / "runs" / RUN
    mdir.mkdir(parents=True, exist_ok=True)
    shards: dict[str, object] = {}
    t0 = time.perf_counter()
    done = 0
    with mp.Pool(procs) as pool:
        for shard, rows, secs, start, stop in pool.imap_unordered(
            _run_shard, [(root, t) for t in tasks]
        ):
            task = tasks[shard]
            shards[str(shard)] = {
                "cell": task.cell,
                "start": start,
                "stop": stop,
                "games": stop - start,
                "rows": rows,
                "seconds": round(secs, 3),
            }
            done += stop - start
            if len(shards) % 10 == 0 or len(shards) == len(tasks):
                el = time.perf_counter() - t0
                print(f"  {done} games, {done / el:.0f} games/s", file=sys.stderr, flush=True)
    manifest["shards"] = shards
    manifest["status"] = "complete"
    tmp = mdir / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, mdir / "manifest.json")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def _timed(label: str, fn: object) -> tuple[float, float, object]:
    """Run fn(); print and return (wall seconds, CPU seconds of this process, result)."""
    w0, c0 = time.perf_counter(), time.process_time()
    result = fn()  # type: ignore[operator]
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"{label}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return wall, cpu, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--root", type=Path, default=Path("/tmp/flip7-bench/data"))
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="verify's threads")
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    manifest = args.root / "runs" / RUN / "manifest.json"
    found = json.loads(manifest.read_text()) if manifest.exists() else {}
    if found.get("status") != "complete" or found.get("schema_version") != SCHEMA_VERSION:
        if found:  # another schema (or a build cut short): start again, nothing stale left
            for table in ("events", "rounds", "rollups", "games", "runs"):
                shutil.rmtree(args.root / table, ignore_errors=True)
        print(f"building a lake of {args.games} games in {args.root} ...", file=sys.stderr)
        build_lake(args.root, args.games, args.procs)
    if args.build_only:
        return 0
    rows = {t: 0 for t in ("events", "rounds", "rollups", "games")}
    for t in rows:
        for path in (args.root / t / f"run={RUN}").glob("*/*.parquet"):
            rows[t] += pq.ParquetFile(path).metadata.num_rows
    games = rows["games"] // 4
    print(
        f"lake {args.root}: run {RUN}, {games:,} games; rows: "
        + ", ".join(f"{k} {v:,}" for k, v in rows.items())
    )
    print(_load())

    compact = rows["rounds"] + rows["games"]
    wall, _, _ = _timed(
        "report, marts as views (flip7 report)", lambda: report(connect(args.root, [RUN]), RUN)
    )
    print(
        f"  {compact / wall / 1e6:.1f}M compact rows/s ({compact:,} rounds + games rows); target < 30 s"
    )
    wall_m, _, con = _timed(
        "connect with materialized marts (dashboard start)",
        lambda: connect(args.root, [RUN], materialize=True),
    )
    wall_r, _, _ = _timed("  then report from the tables", lambda: report(con, RUN))  # type: ignore[arg-type]
    print(f"  together {wall_m + wall_r:.1f} s")

    workers = args.workers
    wall, cpu, v = _timed(
        f"verify ({workers} worker threads)", lambda: verify(args.root, RUN, workers=workers)
    )
    assert v.ok, "the benchmark lake should verify"  # type: ignore[attr-defined]
    ev = v.events  # type: ignore[attr-defined]  # events (the files hold a row per game)
    print(
        f"  {ev / wall / 1e6:.1f}M events/s wall, {ev / wall / workers / 1e6:.1f}M events/s per "
        f"thread (wall x {workers}), {ev / cpu / 1e6:.1f}M events per CPU-second; "
        "target 10M/s per core"
    )
    print(_load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
