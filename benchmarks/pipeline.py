"""Pipeline throughput: end-to-end games/s and card events/s on 1 and 2 CPUs vs the bare engine.

Usage: python benchmarks/pipeline.py [--games 32000] [--players 4] [--shard-size 1000]

One plan (an equal mix of ev and bust:0.25, seats rotated) is measured four ways in one process:
  engine     the reference engine alone, events not captured, one core, no I/O
  engine+ev  the same with its event buffer captured (what the pipeline consumes)
  pipeline   `flip7 tournament run`'s driver on a local Ray with 1 CPU, then with 2 CPUs:
             simulate + build Arrow tables + write zstd Parquet + manifest, from the first
             submit to the last result (Ray's start-up is reported apart, and each Ray gets a
             warm-up run first, so workers have imported everything)
The bare engine is timed on the first `--sample` games of the plan (the same games, same seeds).
Targets (issue 4): pipeline on 1 CPU at most 20% slower than the bare engine; 2 CPUs at least
1.8x one CPU. On a shared 2-core machine, other processes make the 2-CPU figure noisy.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from flip7.engine import Engine  # noqa: E402
from flip7.policies import parse_policies  # noqa: E402
from flip7.rules import parse_ruleset  # noqa: E402
from flip7.simulate import rotated  # noqa: E402
from pipeline.plan import Plan, make_plan  # noqa: E402
from pipeline.run import run_tournament  # noqa: E402
from pipeline.shard import game_seed, simulate_shard  # noqa: E402
from pipeline.spec import parse_spec  # noqa: E402


def bench_plan(games: int, players: int, shard_size: int, name: str = "bench") -> Plan:
    spec = parse_spec(
        f'name = "{name}"\nseed = 4\ngames = {games}\nshard_size = {shard_size}\n'
        f'[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [{players}]\n'
    )
    return make_plan(spec)


def bare_engine(plan: Plan, sample: int, capture: bool) -> tuple[float, int]:
    """(seconds, events) for the plan's first `sample` games with the engine alone."""
    cell = plan.cells[0]
    ruleset = parse_ruleset(plan.spec.ruleset)
    base = parse_policies(list(cell.lineup))
    events = 0
    t0 = time.perf_counter()
    for i in range(sample):
        seed = game_seed(plan.spec.seed, cell.pair, i)
        result = Engine(ruleset, rotated(base, i), seed, capture=capture).run()
        events += len(result.events)
    return time.perf_counter() - t0, events // 5


def ray_pipeline(plan: Plan, cpus: int, root: str) -> tuple[float, int, float]:
    """(seconds, events, ray start seconds) for the whole plan on a local Ray with `cpus`."""
    import ray

    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR)
    start = time.perf_counter() - t0
    try:
        warm = bench_plan(cpus * 2 * 50, plan.cells[0].players, 50, name="warmup")
        run_tournament(warm, root, overwrite=True, progress=False)
        report = run_tournament(plan, root, overwrite=True, progress=False)
    finally:
        ray.shutdown()
    assert report.status == "complete", report.failed
    return report.seconds, report.events, start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=32000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--shard-size", type=int, default=1000)
    ap.add_argument("--sample", type=int, default=6000, help="games for the bare-engine timing")
    args = ap.parse_args()
    plan = bench_plan(args.games, args.players, args.shard_size)
    sample = min(args.sample, args.games)
    print(
        f"plan: {args.games} games, {args.players} players (ev, bust:0.25 mixed), "
        f"{len(plan.shards)} shards of {args.shard_size}; bare engine on {sample} of them"
    )
    simulate_shard(dataclasses.replace(plan.shards[0], stop=20))  # first-call costs, once
    rows: list[tuple[str, float, float]] = []
    secs, events = bare_engine(plan, sample, capture=True)
    engine_rate = sample / secs
    nocap, _ = bare_engine(plan, sample, capture=False)
    rows.append(("engine, no event capture", sample / nocap, events / nocap))
    rows.append(("engine, events captured", engine_rate, events / secs))
    with tempfile.TemporaryDirectory(prefix="flip7-bench-") as root:
        rates = {}
        for cpus in (1, 2):
            secs, events, start = ray_pipeline(plan, cpus, root)
            rates[cpus] = args.games / secs
            rows.append(
                (f"pipeline, Ray {cpus} CPU (start {start:.1f} s)", rates[cpus], events / secs)
            )
    print(f"{'':<40}{'games/s':>10}{'events/s':>14}")
    for label, g, e in rows:
        print(f"{label:<40}{g:>10,.0f}{e:>14,.0f}")
    bare_nocap = rows[0][1]
    print(
        f"pipeline overhead on 1 CPU: {engine_rate / rates[1] - 1:+.1%} vs the engine with events "
        f"captured, {bare_nocap / rates[1] - 1:+.1%} vs the engine without (target <= +20%)"
    )
    print(f"2 CPUs / 1 CPU: {rates[2] / rates[1]:.2f}x (target >= 1.8x)")


if __name__ == "__main__":
    main()
