"""Pipeline throughput: end-to-end games/s and card events/s on 1 and 2 CPUs vs the bare engine.

Usage: python benchmarks/pipeline.py [--games 32000] [--players 4] [--shard-size 1000] [--repeat 2]

One plan (an equal mix of ev and bust:0.25, seats rotated) is measured in one process:
  engine     the reference engine alone, one core, no I/O: with its event buffer captured (what
             the pipeline consumes) and without
  pipeline   `flip7 tournament run`'s driver on a local Ray with 1 CPU, then with 2 CPUs:
             simulate + build Arrow tables + write zstd Parquet + manifest, from the first
             submit to the last result (Ray's start-up is reported apart, and each Ray gets a
             warm-up run first, so that its workers have imported everything)
The bare engine plays the first `--sample` games of the plan (same games, same seeds). Every
figure is the best of `--repeat` runs. Rates are wall-clock; the overhead is also given in CPU
seconds per game (engine process vs the sum over tasks), which other load on the machine
disturbs much less. Targets (issue 4): the pipeline at most 20% over the bare engine; 2 CPUs at
least 1.8x one CPU (on a 2-core machine this needs the machine to itself).
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
from pipeline.run import RunReport, run_tournament  # noqa: E402
from pipeline.shard import game_seed, simulate_shard  # noqa: E402
from pipeline.spec import parse_spec  # noqa: E402


@dataclasses.dataclass
class Figure:
    label: str
    games: int
    events: int
    wall: float
    cpu: float  # CPU seconds spent on the games (process time)

    def rate(self) -> float:
        return self.games / self.wall


def bench_plan(games: int, players: int, shard_size: int, name: str = "bench") -> Plan:
    spec = parse_spec(
        f'name = "{name}"\nseed = 4\ngames = {games}\nshard_size = {shard_size}\n'
        f'[[lineups]]\nmix = ["ev", "bust:0.25"]\nplayers = [{players}]\n'
    )
    return make_plan(spec)


def bare_engine(plan: Plan, sample: int, capture: bool) -> Figure:
    """The plan's first `sample` games with the engine alone."""
    cell = plan.cells[0]
    ruleset = parse_ruleset(plan.spec.ruleset)
    base = parse_policies(list(cell.lineup))
    events = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(sample):
        seed = game_seed(plan.spec.seed, cell.pair, i)
        result = Engine(ruleset, rotated(base, i), seed, capture=capture).run()
        events += len(result.events)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    label = "engine, events captured" if capture else "engine, no event capture"
    return Figure(label, sample, events // 5, wall, cpu)


def ray_pipeline(plan: Plan, cpus: int, root: str, repeat: int) -> tuple[Figure, float]:
    """The whole plan on a local Ray with `cpus` CPUs (best of `repeat`); Ray's start seconds."""
    import ray

    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR)
    start = time.perf_counter() - t0
    reports: list[RunReport] = []
    try:
        warm = bench_plan(cpus * 2 * 50, plan.cells[0].players, 50, name="warmup")
        run_tournament(warm, root, overwrite=True, progress=False)
        for _ in range(repeat):
            reports.append(run_tournament(plan, root, overwrite=True, progress=False))
    finally:
        ray.shutdown()
    best = min(reports, key=lambda r: r.seconds)
    assert best.status == "complete", best.failed
    label = f"pipeline, Ray {cpus} CPU{'s' if cpus > 1 else ''}"
    return Figure(label, best.games, best.events, best.seconds, best.cpu_seconds), start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=32000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--shard-size", type=int, default=1000)
    ap.add_argument("--sample", type=int, default=6000, help="games for the bare-engine timing")
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure (the best is kept)")
    args = ap.parse_args()
    plan = bench_plan(args.games, args.players, args.shard_size)
    sample = min(args.sample, args.games)
    print(
        f"plan: {args.games} games, {args.players} players (ev, bust:0.25 mixed), "
        f"{len(plan.shards)} shards of {args.shard_size}; bare engine on {sample} of them; "
        f"{os.cpu_count()} cores"
    )
    simulate_shard(dataclasses.replace(plan.shards[0], stop=20))  # first-call costs, once
    captured = min((bare_engine(plan, sample, True) for _ in range(args.repeat)), key=Figure.rate)
    plain = min((bare_engine(plan, sample, False) for _ in range(args.repeat)), key=Figure.rate)
    plain.events = captured.events  # the same games
    figures = [plain, captured]
    starts = []
    with tempfile.TemporaryDirectory(prefix="flip7-bench-") as root:
        for cpus in (1, 2):
            fig, start = ray_pipeline(plan, cpus, root, args.repeat)
            figures.append(fig)
            starts.append(start)
    print(f"{'':<28}{'games/s':>10}{'events/s':>13}{'CPU ms/game':>13}")
    for f in figures:
        print(
            f"{f.label:<28}{f.rate():>10,.0f}{f.events / f.wall:>13,.0f}{1e3 * f.cpu / f.games:>13.3f}"
        )
    one, two = figures[2], figures[3]
    eng = captured.games / captured.wall
    eng_cpu = captured.cpu / captured.games
    print(f"Ray start: {starts[0]:.1f} s (1 CPU), {starts[1]:.1f} s (2 CPUs), not in the rates")
    print(
        f"pipeline overhead over the engine with events captured: wall {eng / one.rate() - 1:+.1%}, "
        f"CPU {one.cpu / one.games / eng_cpu - 1:+.1%}; over the engine without capture: wall "
        f"{plain.rate() / one.rate() - 1:+.1%} (target <= +20%)"
    )
    print(f"2 CPUs / 1 CPU: {two.rate() / one.rate():.2f}x (target >= 1.8x)")


if __name__ == "__main__":
    main()
