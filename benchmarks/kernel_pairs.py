"""Two source trees measured in pairs on one pinned core (a before/after check for small changes).

    python benchmarks/kernel_pairs.py BEFORE AFTER [--pairs 20] [--processes 5] [--games 20000]
                                     [--vengeance-games 5000] [--cpu 0]
                                     [--cache-before DIR] [--cache-after DIR]

BEFORE and AFTER are directories holding the `flip7` and `pipeline` packages (a checkout, or
`git worktree add DIR REV`). One process per tree, each with its own NUMBA_CACHE_DIR, both pinned
to the same core (`--cpu`; other load and the two cores' own speeds then disturb them alike), is
asked for one measurement at a time, BEFORE and AFTER in turn (the order alternates pair by
pair), so that each pair is measured within a second or two. The pairs are shared among
`--processes` successive pairs of processes: one process of a tree can run the same code several
percent faster or slower than another for all its life (where its memory landed), which only
fresh processes average out. A measurement is
the CPU time of: four `sum:20` seats and four `ev` seats in the classic kernel (`--games`,
events captured), four `sum:20` seats and the mixed Brutal table (`ev,endgame,bustc:0.3,sum:20`,
alternative deck) in the Vengeance kernel (`--vengeance-games`), and a whole pipeline shard task
(pipeline.task.run_shard, `--games` four-player `sum:20` games, one Arrow thread).
The output: per table the median of both trees' rates, the median of the pairs' AFTER / BEFORE
ratios and their quartiles. This machine's speed drifts by tens of percent within minutes;
ratios of neighbouring measurements see through that drift; give the same tree twice to see the
spread that remains (one process pair for 20 pairs: 0.91-1.00x by table on identical trees).
`--cache-before`/`--cache-after` name a tree's NUMBA_CACHE_DIR, warmed beforehand (saves the
compiles on a busy machine); by default each tree compiles into a temporary one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys, tempfile, time
cpu, games, vgames = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {cpu})
import numpy as np
import pyarrow as pa
from flip7 import kernel
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant
from pipeline.memory import keep_freed_memory
from pipeline.shard import ShardTask
from pipeline.task import run_shard
pa.set_cpu_count(1)
keep_freed_memory()  # as a pipeline worker runs
rules = parse_ruleset("3.1")
def batch(specs, variant, k):
    seeds = kernel.derive_seeds(20240601, 0, 0, k)
    seats = kernel.rotation(4, np.arange(k) % 4)
    lineup = parse_policies(specs)
    var = parse_variant(variant)
    return lambda: kernel.play_batch(rules, lineup, seats, seeds, capture=True, variant=var)
tables = {
    "sum:20": batch("sum:20,sum:20,sum:20,sum:20", "classic", games),
    "ev": batch("ev,ev,ev,ev", "classic", games),
    "vengeance sum:20": batch("sum:20,sum:20,sum:20,sum:20", "vengeance", vgames),
    "vengeance mixed": batch("ev,endgame,bustc:0.3,sum:20", "vengeance(deck=alt,brutal=1)", vgames),
}
root = tempfile.mkdtemp(prefix="flip7-pairs-")
shards = [0]
def shard():
    s = shards[0] = shards[0] + 1
    task = ShardTask(
        "pairs", s % 20, 0, 0, ("sum:20",) * 4, "3.1", "classic", 20240601, True, 0,
        (s % 20) * games, (s % 20 + 1) * games, engine="kernel",
    )
    run_shard(task, root)
tables["shard task"] = shard
sizes = {name: vgames if name.startswith("vengeance") else games for name in tables}
for run in tables.values():
    run()  # compile or load, imports, first-touch memory
print("ready", flush=True)
for _ in sys.stdin:
    out = {}
    for name, run in tables.items():
        t0 = time.process_time()
        run()
        out[name] = sizes[name] / (time.process_time() - t0)
    print(json.dumps(out), flush=True)
"""


def start(tree: str, cache: str, cpu: int, games: int, vgames: int) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(cpu), str(games), str(vgames)],
        cwd=tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        raise SystemExit(f"{tree}: the measuring process did not start (see its error above)")
    return proc


def measure(proc: subprocess.Popen[str]) -> dict[str, float]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    result: dict[str, float] = json.loads(proc.stdout.readline())
    return result


def quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--processes", type=int, default=5, help="fresh process pairs, in turn")
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--vengeance-games", type=int, default=5_000)
    ap.add_argument("--cpu", type=int, default=0, help="the core both processes run on")
    ap.add_argument("--cache-before", help="BEFORE's NUMBA_CACHE_DIR (default: a new one)")
    ap.add_argument("--cache-after", help="AFTER's NUMBA_CACHE_DIR (default: a new one)")
    args = ap.parse_args()
    if args.pairs < 2:
        raise SystemExit("--pairs must be at least 2 (quartiles of the ratios)")
    if not 1 <= args.processes <= args.pairs:
        raise SystemExit("--processes must be 1..--pairs (each process pair measures a pair)")
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    for label, tree in trees.items():
        for package in ("flip7", "pipeline"):
            if not os.path.isdir(os.path.join(tree, package)):
                raise SystemExit(f"{label}: {tree} holds no {package}/; give a source tree")
    print(f"load average {os.getloadavg()[0]:.2f}; both trees on core {args.cpu}")
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    given = {"before": args.cache_before, "after": args.cache_after}
    with tempfile.TemporaryDirectory(prefix="flip7-pairs-") as caches:
        for p in range(args.processes):
            procs = {
                label: start(
                    tree,
                    os.path.abspath(given[label] or os.path.join(caches, label)),
                    args.cpu,
                    args.games,
                    args.vengeance_games,
                )
                for label, tree in trees.items()
            }
            try:
                for i in range(p, args.pairs, args.processes):
                    order = ("before", "after") if i % 2 == 0 else ("after", "before")
                    for label in order:
                        runs[label].append(measure(procs[label]))
            finally:
                for proc in procs.values():
                    assert proc.stdin is not None
                    proc.stdin.close()
                    proc.wait()
    print(f"load average {os.getloadavg()[0]:.2f}; games per CPU-second, {args.pairs} pairs")
    header = f"{'table':<18}{'before':>12}{'after':>12}{'after/before':>14}{'quartiles':>15}"
    print(header)
    for name in runs["before"][0]:
        b = [x[name] for x in runs["before"]]
        a = [x[name] for x in runs["after"]]
        ratios = [y / x for x, y in zip(b, a, strict=True)]
        lo, hi = quartiles(ratios)
        print(
            f"{name:<18}{statistics.median(b):>12,.0f}{statistics.median(a):>12,.0f}"
            f"{statistics.median(ratios):>13.3f}x{lo:>8.3f}-{hi:.3f}"
        )


if __name__ == "__main__":
    main()
