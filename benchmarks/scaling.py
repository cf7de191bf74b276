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
import functools
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import scaling_line, scratch, sweep, timed_pool, write_json  # noqa: E402
from pipeline.plan import Plan, cell_engines, make_plan  # noqa: E402
from pipeline.spec import parse_spec  # noqa: E402
from pipeline.task import run_shard  # noqa: E402


def plan_for(games: int, players: int, shard_size: int, name: str, engine: str) -> Plan:
    spec = parse_spec(
        f'name = "{name}"\nseed = 8\ngames = {games}\nshard_size = {shard_size}\n'
        f'[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [{players}]\n'
    )
    return make_plan(spec, engine=engine)


def measure(procs: int, args: argparse.Namespace, root: str) -> dict[str, Any]:
    plan = plan_for(
        procs * args.games_per_proc, args.players, args.shard_size, f"p{procs}", args.engine
    )
    warm = plan_for(procs * 40, args.players, 20, f"warm{procs}", args.engine)
    shard = functools.partial(run_shard, root=root)
    secs, results = timed_pool(procs, shard, warm.shards, plan.shards)
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
    with scratch(args.out, "flip7-scaling-") as root:
        rows = sweep(counts, lambda procs: measure(procs, args, root), show)
    write_json(args.json, {"cores": cores, "engine": engine, "rows": rows})


def show(r: dict[str, Any], first: dict[str, Any]) -> str:
    return scaling_line(r, first, (8, 9, 12), speedup=True)


if __name__ == "__main__":
    main()
