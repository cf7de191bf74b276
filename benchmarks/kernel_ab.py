"""The classic kernel of two source trees, measured in alternation (a before/after check).

    python benchmarks/kernel_ab.py BEFORE AFTER [--rounds 3] [--games 10000] [--repeats 7]

BEFORE and AFTER are directories holding a `flip7` package (a checkout, or `git archive REV
flip7 | tar -x -C DIR`). Each round runs one new process per tree, BEFORE then AFTER, each with
its own NUMBA_CACHE_DIR (compiled on the first round). A process plays `--games` four-player
games, seats rotated, `--repeats` times per table and keeps its best rate in games per
CPU-second (on a shared machine other load only ever slows a run down, so the best run is the
least disturbed one): `sum:20` with events captured and without, and `ev` with events captured;
then a whole pipeline shard task of `--games` four-player `sum:20` games (pipeline.task.run_shard:
the kernel, every table the tree writes, their Parquet files in a temporary lake, on one Arrow
thread). A shard task's write cost is its CPU per game less the kernel's (`sum:20` captured, the
same games played the same way): building and writing every table (events, rounds, games and,
where the tree has them, rollups). The output is each round's figures, then per figure the
median over rounds of both trees and AFTER / BEFORE, and the write cost's ratio beside its
0.7x target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import alternate  # noqa: E402

#: A shard task's write cost per game (its CPU less the kernel's) after / before, at most.
TARGET_WRITE = 0.7
FIGURES = ("sum:20 captured", "sum:20 off", "ev captured", "shard task", "write us/game")

CHILD = r"""
import json, sys, time
import numpy as np
from flip7 import kernel
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
games, repeats = int(sys.argv[1]), int(sys.argv[2])
ruleset = parse_ruleset("3.1")
seeds = kernel.derive_seeds(20240601, 0, 0, games)
seats = kernel.rotation(4, np.arange(games) % 4)
out = {}
for name, specs, capture in (
    ("sum:20 captured", "sum:20,sum:20,sum:20,sum:20", True),
    ("sum:20 off", "sum:20,sum:20,sum:20,sum:20", False),
    ("ev captured", "ev,ev,ev,ev", True),
):
    lineup = parse_policies(specs)
    kernel.play_batch(ruleset, lineup, seats[:100], seeds[:100], capture=capture)
    best = 0.0
    for _ in range(repeats):
        t0 = time.process_time()
        kernel.play_batch(ruleset, lineup, seats, seeds, capture=capture)
        best = max(best, games / (time.process_time() - t0))
    out[name] = best
import tempfile
import pyarrow as pa
from pipeline.shard import ShardTask
from pipeline.task import run_shard
pa.set_cpu_count(1)
with tempfile.TemporaryDirectory() as root:
    best = 0.0
    for r in range(repeats + 1):  # the first: imports, first-touch memory
        task = ShardTask(
            "ab", r, 0, 0, ("sum:20",) * 4, "3.1", "classic", 20240601, True, 0, r * games,
            (r + 1) * games, engine="kernel",
        )
        t0 = time.process_time()
        run_shard(task, root)
        if r:
            best = max(best, games / (time.process_time() - t0))
    out["shard task"] = best
out["write us/game"] = 1e6 * (1 / out["shard task"] - 1 / out["sum:20 captured"])
print(json.dumps(out))
"""


def measure(tree: str, cache: str, games: int, repeats: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(games), str(repeats)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    for label, tree in trees.items():
        if not os.path.isdir(os.path.join(tree, "flip7", "kernel")):
            raise SystemExit(f"{label}: {tree} holds no flip7/kernel; give a source tree")
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    print(" " * 15 + "".join(f"{name[:11]:>12}" for name in FIGURES))
    with tempfile.TemporaryDirectory(prefix="flip7-ab-") as caches:

        def one(label: str, tree: str) -> dict[str, float]:
            return measure(tree, os.path.join(caches, label), args.games, args.repeats)

        def show(r: int, label: str, got: dict[str, float]) -> None:
            print(f"round {r} {label:<7}" + "".join(f"{v:>12,.2f}" for v in got.values()))

        runs = alternate(args.rounds, trees, one, show)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'table':<18}{'before':>12}{'after':>12}{'after/before':>14}")
    for name in runs["before"][0]:
        b = statistics.median(x[name] for x in runs["before"])
        a = statistics.median(x[name] for x in runs["after"])
        print(f"{name:<18}{b:>12,.2f}{a:>12,.2f}{a / b:>13.2f}x")
    cost = [statistics.median(x["write us/game"] for x in runs[t]) for t in ("before", "after")]
    ratio = cost[1] / cost[0]
    verdict = "met" if ratio <= TARGET_WRITE else "not met"
    print(
        f"shard write cost per game: {cost[0]:.2f} -> {cost[1]:.2f} us, {ratio:.2f}x "
        f"(target at most {TARGET_WRITE}x: {verdict})"
    )


if __name__ == "__main__":
    main()
