"""The kernels and a shard task of two or more source trees, measured in alternation.

    python benchmarks/kernel_ab.py BEFORE AFTER [AFTER ...] [--rounds 3] [--games 10000]
                                   [--repeats 7] [--caches DIR]

BEFORE and each AFTER are directories holding the `flip7` and `pipeline` packages. Each round runs one new process per tree, BEFORE then AFTER, each with
its own NUMBA_CACHE_DIR (compiled on the first round). A process plays `--games` four-player
games, seats rotated, `--repeats` times per table and keeps its best rate in games per
CPU-second (on a shared machine other load only ever slows a run down, so the best run is the
least disturbed one): `sum:20` with events captured and without, and `ev` with events captured;
then the same for "With a Vengeance" (`sum:20` and `ev`, events captured); then a whole pipeline shard task of `--games` four-player `sum:20` games (pipeline.task.run_shard:
the kernel, every table the tree writes, their Parquet files in a temporary lake, on one Arrow
thread). A shard task's write cost is its CPU per game less the kernel's: each repeat plays the
shard's own games in the kernel alone (`sum:20`, events captured) and then runs the shard task,
and the median of those differences is what building and writing every table costs (events,
rounds, games and, where the tree has them, rollups). The output is each round's figures, then
per figure the median over rounds of every tree and each AFTER / BEFORE, and each write cost's
ratio beside the 0.7x target, and the CPU seconds each tree's first call of each kernel took in
the first round: its compile on an empty cache (`--caches DIR` keeps the caches, under
DIR/before, DIR/after..., for another run, whose first calls then only load). A tree is made
with e.g.
`git archive REV flip7 pipeline lakecontract | tar -x -C DIR` (lakecontract where REV has it).
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
FIGURES = (
    "sum:20 captured",
    "sum:20 off",
    "ev captured",
    "V sum:20 captured",
    "V ev captured",
    "shard task",
    "write us/game",
)

CHILD = r"""
import json, sys, time
import numpy as np
from flip7 import kernel
from flip7.policies import parse_policies
from flip7.rules import parse_ruleset
from flip7.variants import parse_variant
games, repeats = int(sys.argv[1]), int(sys.argv[2])
ruleset = parse_ruleset("3.1")
seeds = kernel.derive_seeds(20240601, 0, 0, games)
seats = kernel.rotation(4, np.arange(games) % 4)
vengeance = parse_variant("vengeance")
out, first = {}, {}
for name, specs, capture, variant in (
    ("sum:20 captured", "sum:20,sum:20,sum:20,sum:20", True, None),
    ("sum:20 off", "sum:20,sum:20,sum:20,sum:20", False, None),
    ("ev captured", "ev,ev,ev,ev", True, None),
    ("V sum:20 captured", "sum:20,sum:20,sum:20,sum:20", True, vengeance),
    ("V ev captured", "ev,ev,ev,ev", True, vengeance),
):
    lineup = parse_policies(specs)
    t0 = time.process_time()
    kernel.play_batch(ruleset, lineup, seats[:100], seeds[:100], capture=capture, variant=variant)
    first.setdefault("classic" if variant is None else "vengeance", time.process_time() - t0)
    best = 0.0
    for _ in range(repeats):
        t0 = time.process_time()
        kernel.play_batch(ruleset, lineup, seats, seeds, capture=capture, variant=variant)
        best = max(best, games / (time.process_time() - t0))
    out[name] = best
import tempfile
import pyarrow as pa
from pipeline.shard import ShardTask
from pipeline.task import run_shard
pa.set_cpu_count(1)
lineup = parse_policies("sum:20,sum:20,sum:20,sum:20")
with tempfile.TemporaryDirectory() as root:
    best, costs = 0.0, []
    for r in range(repeats + 1):  # the first: imports, first-touch memory
        task = ShardTask(
            "ab", r, 0, 0, ("sum:20",) * 4, "3.1", "classic", 20240601, True, 0, r * games,
            (r + 1) * games, engine="kernel",
        )
        # the shard's own games played by the kernel alone, then the shard task
        shard_seeds = kernel.derive_seeds(20240601, 0, r * games, (r + 1) * games)
        shard_seats = kernel.rotation(4, np.arange(r * games, (r + 1) * games) % 4)
        t0 = time.process_time()
        kernel.play_batch(ruleset, lineup, shard_seats, shard_seeds, capture=True)
        t1 = time.process_time()
        run_shard(task, root)
        t2 = time.process_time()
        if r:
            best = max(best, games / (t2 - t1))
            costs.append(1e6 * ((t2 - t1) - (t1 - t0)) / games)
    out["shard task"] = best
costs.sort()
out["write us/game"] = costs[len(costs) // 2]  # the median of the paired differences
print(json.dumps({"rates": out, "first": first}))
"""


def measure(tree: str, cache: str, games: int, repeats: int) -> dict[str, dict[str, float]]:
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(games), str(repeats)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="+", help="one tree, or several (each against BEFORE)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--caches", help="keep the numba caches here (default: a temporary one)")
    args = ap.parse_args()
    names = [
        "before",
        *(["after"] if len(args.after) == 1 else [f"after{i + 1}" for i in range(len(args.after))]),
    ]
    trees = dict(zip(names, (os.path.abspath(t) for t in [args.before, *args.after]), strict=True))
    for label, tree in trees.items():
        if not os.path.isdir(os.path.join(tree, "flip7", "kernel")):
            raise SystemExit(f"{label}: {tree} holds no flip7/kernel; give a source tree")
        print(f"{label}: {tree}")
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    print(" " * 15 + "".join(f"{name[:11]:>12}" for name in FIGURES))
    with tempfile.TemporaryDirectory(prefix="flip7-ab-") as scratch:
        caches = args.caches or scratch

        def one(label: str, tree: str) -> dict[str, dict[str, float]]:
            return measure(tree, os.path.join(caches, label), args.games, args.repeats)

        def show(r: int, label: str, got: dict[str, dict[str, float]]) -> None:
            rates = got["rates"]
            print(f"round {r} {label:<7}" + "".join(f"{rates[k]:>12,.2f}" for k in FIGURES))

        runs = alternate(args.rounds, trees, one, show)
    print(f"load average {os.getloadavg()[0]:.2f}")
    medians = {
        label: {name: statistics.median(x["rates"][name] for x in runs[label]) for name in FIGURES}
        for label in trees
    }
    print(f"{'figure':<18}" + "".join(f"{label:>12}" for label in trees) + "  against before")
    for name in FIGURES:
        b = medians["before"][name]
        ratios = ", ".join(f"{medians[label][name] / b:.2f}x" for label in names[1:])
        print(f"{name:<18}" + "".join(f"{medians[t][name]:>12,.2f}" for t in trees) + f"  {ratios}")
    cost = medians["before"]["write us/game"]
    for label in names[1:]:
        ratio = medians[label]["write us/game"] / cost
        verdict = "met" if ratio <= TARGET_WRITE else "not met"
        print(
            f"shard write cost per game, {label}: {cost:.2f} -> "
            f"{medians[label]['write us/game']:.2f} us, {ratio:.2f}x "
            f"(target at most {TARGET_WRITE}x: {verdict})"
        )
    for kern in runs["before"][0]["first"]:
        firsts = ", ".join(f"{label} {runs[label][0]['first'][kern]:.1f}" for label in trees)
        print(f"first call of the {kern} kernel (round 1), CPU s: {firsts}")


if __name__ == "__main__":
    main()
