"""Scaling of the compiled kernel over processes: games/s and efficiency at 1, 2, 4, 8, 16 CPUs.

    python benchmarks/scaling_kernel.py [--procs 1,2,4,8,16] [--mode pipeline|kernel]
                                        [--engine kernel|reference] [--games-per-proc 40000]
                                        [--shard-size 5000] [--json out.json]

The kernel mode of benchmarks/scaling.sh (which runs benchmarks/scaling.py): call it as
`PROCS=... python benchmarks/scaling_kernel.py --procs "$PROCS"` with the same environment.
Weak scaling: P processes each get --games-per-proc four-player `sum:20` games, cut into shards.
`--mode pipeline` runs each shard as a Ray task does (pipeline.task.run_shard: simulate, Arrow
tables, the three zstd Parquet files with the lake's options), on --engine;
`--mode kernel` plays the shard's games in the kernel alone (events captured, no Arrow, no I/O).
The numba cache is warmed in this process first and every worker loads the kernel before the
clock starts, so the figures are steady-state work. Needs numpy, numba and pyarrow, no Ray.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import one_core, scaling_line, scratch, sweep, timed_pool, write_json  # noqa: E402

ROOT_SEED = 8
LINEUP = ("sum:20",) * 4


def _init() -> None:
    """One core per process (no helper threads), and the kernel loaded before timing."""
    from flip7.kernel import load_info

    one_core()
    load_info()


def _shard(job: tuple[str, str, int, int, int, str]) -> int:
    """Play (and for the pipeline mode, write) one shard; return its event rows."""
    mode, engine, shard, start, stop, root = job
    from pipeline.shard import ShardTask

    task = ShardTask(
        "scale", shard, 0, 0, LINEUP, "3.1", "classic", ROOT_SEED, True, 0, start, stop,
        engine=engine,
    )  # fmt: skip
    if mode == "kernel":
        import numpy as np

        from flip7.kernel import derive_seeds, play_batch, rotation
        from flip7.policies import parse_policies
        from flip7.rules import parse_ruleset

        batch = play_batch(
            parse_ruleset("3.1"),
            parse_policies(list(LINEUP)),
            rotation(len(LINEUP), np.arange(start, stop) % len(LINEUP)),
            derive_seeds(ROOT_SEED, 0, start, stop),
        )
        return int(batch.ev.shape[1])
    from pipeline.task import run_shard

    return int(run_shard(task, root)["events"])


def measure(procs: int, args: argparse.Namespace, root: str) -> dict[str, Any]:
    games = procs * args.games_per_proc
    size = args.shard_size
    jobs = [
        (args.mode, args.engine, s, a, min(games, a + size), root)
        for s, a in enumerate(range(0, games, size))
    ]
    warm = [(args.mode, args.engine, 10_000 + i, 0, 20, root) for i in range(procs)]
    secs, results = timed_pool(procs, _shard, warm, jobs, initializer=_init)
    events = sum(results)
    return {
        "procs": procs,
        "games": games,
        "shards": len(jobs),
        "seconds": round(secs, 3),
        "games_per_s": games / secs,
        "events_per_s": events / secs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", default="1,2,4,8,16", help="process counts, comma-separated")
    ap.add_argument("--mode", choices=("pipeline", "kernel"), default="pipeline")
    ap.add_argument("--engine", choices=("kernel", "reference"), default="kernel")
    ap.add_argument("--games-per-proc", type=int, default=40000)
    ap.add_argument("--shard-size", type=int, default=5000)
    ap.add_argument("--out", help="data directory (default: a temporary one, deleted after)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    from flip7.kernel import load_info

    info = load_info()  # compile once here, so that workers load the cache
    counts = [int(p) for p in args.procs.split(",")]
    cores = os.cpu_count() or 1
    print(
        f"{cores} cores; {args.mode} mode, {args.engine} engine; weak scaling: "
        f"{args.games_per_proc:,} four-player sum:20 games per process, shards of "
        f"{args.shard_size:,}; kernel {'compiled' if info.compiled else 'cached'} "
        f"({info.seconds:.1f} s); python {sys.version.split()[0]}"
    )
    with scratch(args.out, "flip7-scaling-kernel-") as root:
        rows = sweep(counts, lambda procs: measure(procs, args, root), show)
    write_json(args.json, {"cores": cores, "mode": args.mode, "engine": args.engine, "rows": rows})


def show(r: dict[str, Any], first: dict[str, Any]) -> str:
    return scaling_line(r, first, (9, 10, 13), speedup=False)


if __name__ == "__main__":
    main()
