"""A whole tournament run against its shards: where the wall time goes after Ray starts.

    python benchmarks/whole_run.py [--games 1000000] [--shard-size 20000] [--num-cpus 2]
                                   [--players 4] [--policy sum:20]

Runs one spec (`--players` seats of `--policy`, seats rotated) the way `flip7 tournament run
--num-cpus N` does (pipeline.run.run_tournament on a private local Ray, into a temporary lake),
after timing one shard in this process (pipeline.task.run_shard, what the shard benchmark
measures). It prints:
  shard     one shard in this process, warm: games per CPU-second, and the wall time that rate
            predicts for the whole run on N CPUs;
  run       the whole run's wall time from the first submit to the last result (Ray's start-up
            apart) and its games/s;
  where     from the shards' own timestamps (RunReport.timeline): each worker's wait for its
            first task (worker start-up, imports, the kernel's cache load), the first task's
            time against the others', the workers' busy share of the run, the task CPU per game
            in the workers against the in-process figure, the lag between a task's end and the
            driver receiving it, the driver's own CPU, and the CPU of each of Ray's processes
            during the run (from /proc: the workers, raylet, gcs_server, Ray's agents);
  cpu       the run's whole CPU time (Ray's processes and the driver) against the in-process
            shard's CPU for as many games, and the wall time that CPU would take on idle CPUs
            (a figure the machine's other load disturbs much less than the wall time).
Figures are wall clock (time.perf_counter, time.time) and CPU (time.process_time) on whatever
else the machine runs: report the load average with them, and compare ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from pipeline.plan import make_plan  # noqa: E402
from pipeline.run import run_tournament  # noqa: E402
from pipeline.spec import parse_spec  # noqa: E402
from pipeline.task import run_shard  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def descendants_cpu() -> dict[int, tuple[str, float]]:
    """{pid: (name, CPU seconds)} of this process's descendants (Ray's processes), from /proc."""
    procs: dict[int, tuple[int, str, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        procs[int(entry)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / TICK)
    mine, out = {os.getpid()}, {}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, name, cpu) in procs.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                out[pid] = (name, cpu)
                grew = True
    return out


class Sampler(threading.Thread):
    """Every `every` seconds, the descendants' CPU seconds (the last sample before a process
    ended is what it used)."""

    def __init__(self, every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.every = every
        self.samples: list[tuple[float, dict[int, tuple[str, float]]]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append((time.time(), descendants_cpu()))
            self.done.wait(self.every)

    def used(self, start: float, end: float) -> dict[str, float]:
        """CPU seconds per process name between the epoch times start and end."""
        before: dict[int, float] = {}
        last: dict[int, tuple[str, float]] = {}
        for t, snap in self.samples:
            for pid, (name, cpu) in snap.items():
                if t <= start:
                    before[pid] = cpu
                if t <= end + self.every:
                    last[pid] = (name, cpu)
        out: dict[str, float] = defaultdict(float)
        for pid, (name, cpu) in last.items():
            out[name] += cpu - before.get(pid, 0.0)
        return dict(out)


@dataclass
class WholeRun:
    """The headline figures of one whole run (what benchmarks/kernel.py and pipeline.py print)."""

    games: int
    cpus: int
    seconds: float  # first submit to last result (Ray's start apart)
    ray_seconds: float  # starting Ray
    shard_rate: float  # one warm shard in-process, games per CPU-second
    run_cpu: float  # CPU seconds of Ray's processes and the driver during the run
    load: float  # the load average (1 min) when the run ended

    @property
    def rate(self) -> float:
        """Games per second of wall time after Ray started."""
        return self.games / self.seconds

    @property
    def idle_rate(self) -> float:
        """Games per second the run's CPU time would give on `cpus` otherwise idle CPUs."""
        return self.games * self.cpus / self.run_cpu


def whole_run(
    games: int = 1_000_000,
    shard_size: int = 20_000,
    cpus: int = 2,
    players: int = 4,
    policy: str = "sum:20",
    out: Callable[[str], None] = print,
) -> WholeRun:
    """Time one shard in this process, then the whole run on a private local Ray; print the
    breakdown through `out` and return the headline figures."""
    seats = ", ".join(f'"{policy}"' for _ in range(players))
    spec = parse_spec(
        f'name = "whole-run"\nseed = 7\ngames = {games}\nshard_size = {shard_size}\n'
        f"[[lineups]]\nseats = [{seats}]\n"
    )
    plan = make_plan(spec)
    out(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    out(f"{plan.games:,} games, {len(plan.shards)} shards of {spec.shard_size:,}, {cpus} CPUs")
    with tempfile.TemporaryDirectory(prefix="flip7-whole-") as root:
        # -- one shard in this process (the shard benchmark's figure), after a warm-up shard
        # of the same size (the first pays for imports, the kernel's load and fresh memory)
        run_shard(plan.shards[-1], root)
        c0 = time.process_time()
        one = run_shard(plan.shards[0], root)
        shard_cpu = (time.process_time() - c0) / plan.shards[0].n_games
        predicted = plan.games * shard_cpu / cpus
        out(
            f"shard    {1 / shard_cpu:>10,.0f} games per CPU-second in this process "
            f"({one['seconds']:.2f} s wall for {plan.shards[0].n_games:,}): "
            f"{predicted:.1f} s predicted on {cpus} CPUs"
        )
        sampler = Sampler()
        sampler.start()
        report = run_tournament(plan, root, num_cpus=cpus, overwrite=True, progress=False)
        sampler.done.set()
        sampler.join()
    assert report.status == "complete", report.failed
    wall = report.seconds
    out(
        f"run      {wall:>10.2f} s after Ray started ({report.ray_seconds:.1f} s to start it, "
        f"{report.ray_seconds + wall:.2f} s both): {report.games / wall:,.0f} games/s; "
        f"{wall / predicted:.2f}x the shard prediction"
    )
    t0 = report.submitted
    by_pid: dict[int, list[tuple[float, float, float, float]]] = defaultdict(list)
    for _shard, pid, started, finished, received, cpu, warm in report.timeline:
        by_pid[pid].append((started - t0, finished - t0, received - t0, cpu, warm))
    firsts, others, busy = [], [], 0.0
    for pid, rows in sorted(by_pid.items(), key=lambda kv: min(r[0] for r in kv[1])):
        rows.sort()
        firsts.append(rows[0])
        others += [r[1] - r[0] for r in rows[1:]]
        busy += sum(r[1] - r[0] for r in rows)
        out(
            f"worker {pid}: first task started at {rows[0][0]:.2f} s "
            f"({'kernel preloaded' if rows[0][4] else 'kernel not loaded yet'}), took "
            f"{rows[0][1] - rows[0][0]:.2f} s; {len(rows)} tasks, busy "
            f"{sum(r[1] - r[0] for r in rows):.2f} s, last finished at {rows[-1][1]:.2f} s"
        )
    task_cpu = sum(r[5] for r in report.timeline) / report.games
    lags = [r[4] - r[3] for r in report.timeline]
    typical = statistics.median(others) if others else float("nan")
    out(
        f"where    workers: {len(by_pid)}; first start {min(f[0] for f in firsts):.2f} s after "
        f"the first submit; first tasks {statistics.mean(f[1] - f[0] for f in firsts):.2f} s "
        f"against {typical:.2f} s for the others (median)"
    )
    out(
        f"         busy share {busy / (wall * cpus):.0%} of {cpus} CPUs x the run; task CPU "
        f"{1e6 * task_cpu:.1f} us/game in the workers against {1e6 * shard_cpu:.1f} in-process; "
        f"task wall/CPU {busy / sum(r[5] for r in report.timeline):.2f}"
    )
    out(
        f"         driver: {report.driver_cpu_seconds:.2f} CPU s; result lag median "
        f"{1e3 * statistics.median(lags):.1f} ms, max {1e3 * max(lags):.1f} ms; last result "
        f"{max(r[4] for r in report.timeline) - t0:.2f} s"
    )
    first_cpu = statistics.mean(min(rows)[3] for rows in by_pid.values())
    other_cpu = statistics.median(r[5] for r in report.timeline)
    out(f"         first task CPU {first_cpu:.2f} s against {other_cpu:.2f} s (median)")
    used = sampler.used(t0, t0 + wall)
    tasks = sum(r[5] for r in report.timeline)
    total = sum(used.values())
    out(
        f"         CPU of Ray's processes during the run: {total:.2f} s, of which the tasks "
        f"{tasks:.2f} s; by process name:"
    )
    for name, cpu in sorted(used.items(), key=lambda kv: -kv[1])[:8]:
        out(f"           {name:<28}{cpu:>7.2f} s")
    whole = total + report.driver_cpu_seconds
    out(
        f"cpu      the run used {whole:.2f} CPU s (Ray's processes and the driver) for "
        f"{plan.games * shard_cpu:.2f} s of in-process shard work: "
        f"{whole / (plan.games * shard_cpu):.2f}x; on {cpus} otherwise idle CPUs about "
        f"{whole / cpus:.1f} s, {plan.games * cpus / whole:,.0f} games/s"
    )
    return WholeRun(
        plan.games, cpus, wall, report.ray_seconds, 1 / shard_cpu, whole, os.getloadavg()[0]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--shard-size", type=int, default=20_000)
    ap.add_argument("--num-cpus", type=int, default=2)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--policy", default="sum:20")
    args = ap.parse_args()
    whole_run(args.games, args.shard_size, args.num_cpus, args.players, args.policy)


if __name__ == "__main__":
    main()
