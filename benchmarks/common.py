"""Set-up the benchmarks share: CPU and wall timings with medians, a child process's wall, CPU
and peak memory, alternating before/after rounds, process-pool sweeps and the benchmark lake.

Import it as `benchmarks.common`: run as `python -m benchmarks NAME` the repository root is on
sys.path already; run as `python benchmarks/NAME.py` a script puts it there first (this folder,
which Python puts first, holds a pipeline.py and a warehouse.py that would shadow the packages).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]

K = TypeVar("K")
T = TypeVar("T")
R = TypeVar("R")


def oc_parser(doc: str | None, wave: int) -> argparse.ArgumentParser:
    """The parser of an operating-characteristics simulation (sprt_oc, ranking_oc): its doc's
    first line, --wave (per look, default `wave`), --reps (1000 tests) and --seed (1)."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--wave", type=int, default=wave)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    return ap


def cpu_seconds(run: Callable[[], object]) -> float:
    """CPU seconds of this process (time.process_time) that one call of `run` takes."""
    t0 = time.process_time()
    run()
    return time.process_time() - t0


def median_cpu(run: Callable[[], object], repeats: int) -> float:
    """Median CPU seconds of `run` over `repeats` calls."""
    return statistics.median(cpu_seconds(run) for _ in range(repeats))


def median_rate(count: int, repeats: int, run: Callable[[], object]) -> float:
    """Median `count` per CPU-second of `run` (games/s, say) over `repeats` calls."""
    return statistics.median(count / cpu_seconds(run) for _ in range(repeats))


def median_wall(run: Callable[[], object], repeats: int) -> float:
    """Median wall seconds of `run` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@dataclass(frozen=True)
class ChildRun:
    """One child process: wall and CPU seconds (user + system, its own children included),
    peak resident set in kB (`ru_maxrss` from os.wait4), exit status and what it wrote to
    stderr."""

    wall: float
    cpu: float
    peak_kb: int
    code: int
    stderr: str


def run_child(
    cmd: Sequence[str],
    *,
    cwd: str | Path | None = REPO,
    env: Mapping[str, str] | None = None,
) -> ChildRun:
    """Run `cmd` as a fresh process and measure it (see ChildRun); its stdout is discarded."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()  # to its end, so a chatty child never blocks on a full pipe
    proc.stderr.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    return ChildRun(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_kb=usage.ru_maxrss,
        code=code,
        stderr=err.decode(errors="replace"),
    )


def alternate(
    rounds: int,
    arms: Mapping[K, T],
    measure: Callable[[K, T], R],
    show: Callable[[int, K, R], None] | None = None,
) -> dict[K, list[R]]:
    """Measure every arm (before/after, lake sizes, ...) once per round, in turn, `rounds`
    times, so that the machine's drift touches them all alike; `show(round, arm, figure)` as
    each comes. Returns each arm's figures in round order (take their medians)."""
    runs: dict[K, list[R]] = {k: [] for k in arms}
    for r in range(rounds):
        for k, v in arms.items():
            got = measure(k, v)
            runs[k].append(got)
            if show is not None:
                show(r + 1, k, got)
    return runs


def one_core() -> None:
    """A pool worker's initializer: one core per process, no helper threads in pyarrow."""
    import pyarrow as pa

    pa.set_cpu_count(1)


def timed_pool(
    procs: int,
    fn: Callable[[T], R],
    warm: Iterable[T],
    jobs: Iterable[T],
    initializer: Callable[[], None] = one_core,
) -> tuple[float, list[R]]:
    """(wall seconds, results) of `fn` over `jobs` in a fresh pool of `procs` spawned
    processes (`initializer`: one core each), after the pool ran `warm` (imports, first calls)
    untimed."""
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=initializer) as pool:
        list(pool.map(fn, warm))
        t0 = time.perf_counter()
        results = list(pool.map(fn, jobs))
        return time.perf_counter() - t0, results


def sweep(
    counts: Iterable[int],
    measure: Callable[[int], dict[str, Any]],
    line: Callable[[dict[str, Any], dict[str, Any]], str],
) -> list[dict[str, Any]]:
    """Weak scaling: `measure(procs)` for each process count this machine has the cores for,
    printing `line(row, first row)` as each comes."""
    cores = os.cpu_count() or 1
    rows: list[dict[str, Any]] = []
    for procs in counts:
        if procs > cores:
            print(f"skipping {procs} processes: only {cores} cores")
            continue
        rows.append(measure(procs))
        print(line(rows[-1], rows[0]), flush=True)
    return rows


def scaling_line(
    r: dict[str, Any], first: dict[str, Any], widths: tuple[int, int, int], speedup: bool
) -> str:
    """One process count's row of a sweep (procs, games, seconds, games_per_s, events_per_s),
    with its speedup (optional) and efficiency against the first row's per-process rate;
    `widths`: the games, games/s and events/s columns'."""
    g, gs, es = widths
    per_proc = first["games_per_s"] / first["procs"]
    up = f"speedup {r['games_per_s'] / per_proc:>5.2f}  " if speedup else ""
    return (
        f"{r['procs']:>3} procs {r['games']:>{g},} games {r['seconds']:>7.2f} s "
        f"{r['games_per_s']:>{gs},.0f} games/s {r['events_per_s']:>{es},.0f} events/s  "
        f"{up}efficiency {r['games_per_s'] / (per_proc * r['procs']):>5.0%}"
    )


@contextmanager
def scratch(out: str | None, prefix: str) -> Iterator[str]:
    """`out` when given (kept), else a new temporary directory deleted afterwards."""
    root = out or tempfile.mkdtemp(prefix=prefix)
    try:
        yield root
    finally:
        if not out:
            shutil.rmtree(root, ignore_errors=True)


def write_json(path: str | None, doc: object) -> None:
    """Write `doc` to `path` (when given) as indented JSON."""
    if path:
        Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def bench_lake(games: int, root: Path) -> Path:
    """The lake of benchmarks/warehouse.py (run `bench`, four-player games) of `games` games
    at `root`, built there once and reused while its manifest is current."""
    build = [sys.executable, str(REPO / "benchmarks" / "warehouse.py")]
    subprocess.run([*build, "--games", str(games), "--root", str(root), "--build-only"], check=True)
    return root
