"""Scaling of the shard work over processes: the function Ray tasks run, in a process pool.

Usage: python benchmarks/scaling.py [--procs 1,2,4,8,16] [--engine auto|kernel|reference]
       [--games-per-proc N] [--players 4]
(benchmarks/scaling.sh runs it with the environment set; see there).

Weak scaling: P processes play P x games-per-proc games (an equal mix of ev and bust:0.25),
cut into shards, each shard run by `pipeline.task.run_shard` (simulate, build the Arrow tables,
write zstd Parquet with the temp-then-rename protocol) exactly as a Ray task would. The kernel
is compiled (or loaded) once in this process first, then each pool is warmed up (imports, first
calls), so the timing is steady-state work. Needs no Ray (the 16-core machine has none): Ray's
own overhead is measured on 2 cores by benchmarks/pipeline.py.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.plan import Plan, cell_engines, make_plan  # noqa: E402
from pipeline.spec import parse_spec  # noqa: E402
from pipeline.task import run_shard  # noqa: E402


def plan_for(games: int, players: int, shard_size: int, name: str, engine: str) -> Plan:
    spec = parse_spec(
        f'name = "{name}"\nseed = 8\ngames = {games}\nshard_size = {shard_size}\n'
        f'[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [{players}]\n'
    )
    return make_plan(spec, engine=engine)


def _init() -> None:
    """One core per process: no hidden helper threads in numpy/pyarrow."""
    import pyarrow as pa

    pa.set_cpu_count(1)


def measure(procs: int, args: argparse.Namespace, root: str) -> dict[str, Any]:
    plan = plan_for(
        procs * args.games_per_proc, args.players, args.shard_size, f"p{procs}", args.engine
    )
    warm = plan_for(procs * 40, args.players, 20, f"warm{procs}", args.engine)
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=_init) as pool:
        list(pool.map(run_shard, warm.shards, [root] * len(warm.shards)))
        t0 = time.perf_counter()
        results = list(pool.map(run_shard, plan.shards, [root] * len(plan.shards)))
        secs = time.perf_counter() - t0
    events = sum(r["events"] for r in results)
    return {
        "procs": procs,
        "games": plan.games,
        "shards": len(plan.shards),
        "seconds": round(secs, 3),
        "games_per_s": plan.games / secs,
        "events_per_s": events / secs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", default="1,2,4,8,16", help="process counts, comma-separated")
    ap.add_argument("--engine", default="auto", choices=("auto", "kernel", "reference"))
    ap.add_argument("--games-per-proc", type=int, help="default 40000 (kernel), 4000 (reference)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--shard-size", type=int, help="default 5000 (kernel), 500 (reference)")
    ap.add_argument("--out", help="data directory (default: a temporary one, deleted after)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    counts = [int(p) for p in args.procs.split(",")]
    cores = os.cpu_count() or 1
    engine = cell_engines(plan_for(10, args.players, 10, "probe", args.engine))[0][0]
    kernel = engine == "kernel"
    args.games_per_proc = args.games_per_proc or (40000 if kernel else 4000)
    args.shard_size = args.shard_size or (5000 if kernel else 500)
    note = ""
    if kernel:
        from flip7.kernel import load_info

        info = load_info()  # compile once here (or load the cache) so that workers only load
        note = f"; kernel {'compiled' if info.compiled else 'loaded'} in {info.seconds:.1f} s"
    print(
        f"{cores} cores; engine {engine}; weak scaling: {args.games_per_proc} games of "
        f"{args.players} players per process, shards of {args.shard_size}, "
        f"python {sys.version.split()[0]}{note}"
    )
    root = args.out or tempfile.mkdtemp(prefix="flip7-scaling-")
    rows = []
    try:
        for procs in counts:
            if procs > cores:
                print(f"skipping {procs} processes: only {cores} cores")
                continue
            rows.append(measure(procs, args, root))
            r = rows[-1]
            base = rows[0]["games_per_s"] / rows[0]["procs"]
            print(
                f"{r['procs']:>3} procs {r['games']:>8,} games {r['seconds']:>7.2f} s "
                f"{r['games_per_s']:>9,.0f} games/s {r['events_per_s']:>12,.0f} events/s  "
                f"speedup {r['games_per_s'] / rows[0]['games_per_s'] * rows[0]['procs']:>5.2f}  "
                f"efficiency {r['games_per_s'] / (base * r['procs']):>5.0%}",
                flush=True,
            )
    finally:
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        doc = {"cores": cores, "engine": engine, "rows": rows}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
