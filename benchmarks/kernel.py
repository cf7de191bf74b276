"""The compiled kernel against the reference engine on one core, and the pipeline end to end.

    python benchmarks/kernel.py [--games 20000] [--ref-games 1000] [--repeats 7]
                                [--pipeline-games 40000] [--shard-size 10000]
                                [--shard-sweep 2500,5000,20000] [--no-compile]
                                [--vengeance-games 5000] [--vengeance-ref-games 200]
                                [--vengeance-only] [--pipeline-only] [--whole-run-games 1000000]
                                [--whole-run-shard-size 20000] [--whole-run-cpus 2]

In one run, all on this process's one core, four players, seats rotated, seeds derived as the
pipeline derives them:
  engines   games/s of the reference engine and of the kernel for `sum:20`, `ev` and `dp`
            tables (dp when the solver is installed), with the event buffer captured and
            without, and the kernel/reference ratio;
  pipeline  pipeline shard tasks end to end (pipeline.task.run_shard, what a Ray task runs:
            games, Arrow tables, then the four Parquet files with the lake's options; then the
            shard's record in the manifest) on each engine, for `sum:20` tables, at the spec's
            default shard size and (kernel) at the --shard-sweep sizes, and the CPU time and
            bytes on disk per game of each table written (the events and rounds also in
            the layout schema v6 stored: lists, a row per seat and round) and the CPU of
            summing the rollup; and the kernel alone beside shard tasks on the same games, in
            alternation: a shard task's write cost per game (its CPU less the kernel's);
  vengeance games/s of the reference "With a Vengeance" engine (flip7.vengeance) and of the
            Vengeance kernel, events captured and not, for `sum:20` and `ev` tables and a mixed
            Brutal table on the alternative deck, and the ratio against its 50x target;
  whole run a whole tournament (four `sum:20` seats, --whole-run-games in shards of
            --whole-run-shard-size) the way `flip7 tournament run --num-cpus 2` runs it, on a
            private local Ray (benchmarks/whole_run.py, which also prints where the time goes):
            games per second of wall time after Ray started, per CPU, and the games per second
            its CPU time would give on otherwise idle CPUs;
  compile   the kernel's first compile in a new process with an empty NUMBA_CACHE_DIR, then a
            second new process loading it from that cache.
The last lines put every figure beside its target, and the kernel's and the whole run's beside
the reference engine measured in the same run.
Times are CPU seconds of this process (time.process_time), so other load on a shared machine
disturbs them less than wall time (but a busy sibling core still slows this one); each figure is
the median of --repeats runs, and the engines run in alternation so that both see the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import median_cpu, median_rate  # noqa: E402
from flip7 import kernel  # noqa: E402
from flip7.engine import Engine  # noqa: E402
from flip7.policies import parse_policies  # noqa: E402
from flip7.rng import derive_seed  # noqa: E402
from flip7.rules import parse_ruleset  # noqa: E402
from flip7.simulate import rotated  # noqa: E402

ROOT = 20240601
TARGET_KERNEL = 200_000  # four-player sum:20 games per CPU-second, events captured
TARGET_KERNEL_EV = 170_000  # the same for four ev seats
TARGET_WHOLE_RUN = 150_000  # games per second of wall time after Ray started, 2 CPUs
TARGET_PIPELINE = 100_000  # the same into Parquet, end to end (three files and the manifest)
TARGET_RATIO = 25.0  # kernel over reference engine
TARGET_VENGEANCE_RATIO = 50.0  # Vengeance kernel over the reference Vengeance engine, events on
#: The Vengeance tables: (name, line-up, variant).
VENGEANCE_TABLES = (
    ("sum:20", "sum:20,sum:20,sum:20,sum:20", "vengeance"),
    ("ev", "ev,ev,ev,ev", "vengeance"),
    ("mixed", "ev,endgame,bustc:0.3,sum:20", "vengeance(deck=alt,brutal=1)"),
)


def alternated(
    reference: Callable[[], object],
    compiled: Callable[[], kernel.Batch],
    ref_games: int,
    games: int,
    repeats: int,
) -> tuple[float, float, float]:
    """(reference games/s, kernel games/s, events per game), medians over `repeats` rounds that
    each run the reference engine then the kernel, so both see the same load on the machine."""
    ref, ker = [], []
    events = 0
    for _ in range(repeats):
        t0 = time.process_time()
        reference()
        ref.append(ref_games / (time.process_time() - t0))
        t0 = time.process_time()
        batch = compiled()
        ker.append(games / (time.process_time() - t0))
        events = batch.ev.shape[1]
        del batch
    return statistics.median(ref), statistics.median(ker), events / games


def engine_rates(
    specs: str,
    capture: bool,
    ref_games: int,
    games: int,
    repeats: int,
    variant_spec: str | None = None,
) -> tuple[float, float, float]:
    """(reference games/s, kernel games/s, events per game), medians over `repeats` rounds that
    each run the reference engine then the kernel, so both see the same load on the machine.
    With `variant_spec` ("With a Vengeance"), that variant's reference engine and kernel."""
    from flip7.variants import parse_variant

    ruleset = parse_ruleset("3.1")
    variant = parse_variant(variant_spec) if variant_spec else None
    new_engine = Engine if variant is None else variant.new_engine
    lineup = parse_policies(specs)
    n = len(lineup)
    seeds = kernel.derive_seeds(ROOT, 0, 0, games)
    seat_policy = kernel.rotation(n, np.arange(games) % n)
    on_variant = {} if variant is None else {"variant": variant}

    def reference() -> None:
        for i in range(ref_games):
            seats = rotated(lineup, i)
            new_engine(ruleset, seats, derive_seed(ROOT, 0, i), capture=capture).run()

    def compiled() -> kernel.Batch:
        return kernel.play_batch(ruleset, lineup, seat_policy, seeds, capture=capture, **on_variant)

    return alternated(reference, compiled, ref_games, games, repeats)


def vengeance_section(games: int, ref_games: int, repeats: int) -> float:
    """Print the Vengeance table; return the lowest kernel/reference ratio with events on."""
    info = kernel.load_info(vengeance=True)
    how = "compiled" if info.compiled else "loaded from the cache"
    print(
        f"With a Vengeance (kernel {how} in {info.seconds:.2f} s); reference {ref_games:,} "
        f"games a run, kernel {games:,}"
    )
    print(f"{'table':<8}{'events':>8}{'reference':>12}{'kernel':>12}{'ratio':>8}{'events/s':>14}")
    worst = float("inf")
    for name, specs, variant in VENGEANCE_TABLES:
        for capture in (True, False):
            ref, ker, per_game = engine_rates(specs, capture, ref_games, games, repeats, variant)
            ev_rate = f"{ker * per_game:>14,.0f}" if capture else f"{'-':>14}"
            print(
                f"{name:<8}{'on' if capture else 'off':>8}{ref:>12,.0f}{ker:>12,.0f}"
                f"{ker / ref:>7.1f}x{ev_rate}  {variant}: {specs}"
            )
            if capture:
                worst = min(worst, ker / ref)
    ok = "met" if worst >= TARGET_VENGEANCE_RATIO else "NOT met"
    print(
        f"target: Vengeance kernel/reference with events {worst:.1f}x (lowest table) >= "
        f"{TARGET_VENGEANCE_RATIO:.0f}x {ok}"
    )
    return worst


def pipeline_rate(engine: str, games: int, shard_size: int, repeats: int) -> tuple[float, float]:
    """(games per CPU-second, share of that CPU time spent writing Parquet) of pipeline shard
    tasks end to end: pipeline.task.run_shard (simulate_shard, then the four Parquet files
    with the lake's options, temp name then rename), exactly what a Ray task runs, and the
    shard's record written into the run's manifest, as the driver does."""
    import pyarrow as pa

    from pipeline.lake import Lake
    from pipeline.run import record_shard
    from pipeline.shard import ShardTask, simulate_shard
    from pipeline.task import run_shard

    pa.set_cpu_count(1)  # one core: no helper threads in Arrow
    lineup = ("sum:20",) * 4
    tasks = [
        ShardTask(
            "bench",
            s,
            0,
            0,
            lineup,
            "3.1",
            "classic",
            ROOT,
            True,
            0,
            a,
            a + shard_size,
            engine=engine,
        )  # fmt: skip
        for s, a in enumerate(range(0, games, shard_size))
    ]
    n_games = len(tasks) * shard_size
    with tempfile.TemporaryDirectory() as root:
        lake = Lake.open(root)
        manifest: dict[str, object] = {"run": "bench", "status": "running", "shards": {}}

        def run() -> None:
            for task in tasks:  # as the driver does: the shard's files, then its record
                result = run_shard(task, root)
                record_shard(manifest, task, result)
                lake.write_manifest(manifest)

        def simulate() -> None:
            for task in tasks:
                simulate_shard(task)

        run()  # warm-up: imports, first-touch memory
        whole = median_rate(n_games, repeats, run)
        alone = median_rate(n_games, repeats, simulate)
    return whole, 1.0 - whole / alone


def write_cost(games: int, shard_size: int, repeats: int) -> tuple[float, float, float]:
    """(kernel games per CPU-second, shard task games per CPU-second, the shard task's write
    cost in CPU microseconds a game): the same games played by the kernel alone (events
    captured) and by pipeline shard tasks end to end (pipeline.task.run_shard: the kernel, then
    every table built and written), measured in alternation, medians of `repeats`. The write
    cost is the difference: everything a shard task does besides playing."""
    from dataclasses import replace

    import pyarrow as pa

    from benchmarks.common import cpu_seconds
    from pipeline.shard import ShardTask
    from pipeline.task import run_shard

    pa.set_cpu_count(1)
    ruleset, lineup = parse_ruleset("3.1"), parse_policies("sum:20,sum:20,sum:20,sum:20")
    starts = range(0, max(shard_size, games // shard_size * shard_size), shard_size)
    base = ShardTask("bench", 0, 0, 0, ("sum:20",) * 4, "3.1", "classic", ROOT, True, 0, 0, 0)
    tasks = [
        replace(base, shard=s, start=a, stop=a + shard_size, engine="kernel")
        for s, a in enumerate(starts)
    ]
    n_games = len(tasks) * shard_size
    inputs = [
        (kernel.derive_seeds(ROOT, 0, t.start, t.stop), np.arange(t.start, t.stop) % 4)
        for t in tasks
    ]
    with tempfile.TemporaryDirectory() as root:

        def play() -> None:
            for seeds, shift in inputs:
                kernel.play_batch(ruleset, lineup, kernel.rotation(4, shift), seeds, capture=True)

        def shards() -> None:
            for task in tasks:
                run_shard(task, root)

        shards()  # warm-up: imports, first-touch memory
        alone, whole = [], []
        for _ in range(repeats):
            alone.append(n_games / cpu_seconds(play))
            whole.append(n_games / cpu_seconds(shards))
    k, w = statistics.median(alone), statistics.median(whole)
    return k, w, 1e6 * (1 / w - 1 / k)


def print_write_cost(games: int, shard_size: int, repeats: int) -> None:
    """Print write_cost's three figures."""
    k, w, us = write_cost(games, shard_size, repeats)
    print(
        f"kernel alone {k:,.0f} games per CPU-second, shard tasks {w:,.0f} (shards of "
        f"{shard_size:,}): a shard task's write cost {us:.2f} us a game (its CPU less the "
        "kernel's: tables, rollups, Parquet files); `python benchmarks/kernel_ab.py BEFORE "
        "AFTER` compares it between two source trees"
    )


#: table_costs' layouts written for comparison only (not in the lake's sum).
COMPARED = ("events, a row per game of lists (v6)", "rounds, a row per seat and round (v6)")


def table_costs(games: int, repeats: int) -> list[tuple[str, float, float]]:
    """(table, CPU microseconds per game to write it, bytes per game on disk) for one kernel
    shard of `games` four-player sum:20 games written with the lake's options: the events and
    rounds as the lake stores them (lakecontract.codec: encoding included, the events'
    codebook by the writer's compiled pass), the rollups and games files; then the events and
    rounds in the layout schema v6 stored (a row per game with its codes as a list, a
    dictionary, LZ4; a row per seat and round) for comparison; last, the rollup summed from the
    shard's games and rounds tables (pipeline.rollups.rollup_table, what verify runs: the shard
    task's own call reads the kernel's arrays instead of the tables' buffers, the same pass; no
    bytes). Each time is the median of `repeats`."""
    import pyarrow as pa

    from lakecontract import codec
    from pipeline.codebook import index_codes
    from pipeline.lake import ROW_GROUP_ROWS, WRITE_OPTIONS
    from pipeline.memory import keep_freed_memory
    from pipeline.rollups import rollup_table
    from pipeline.shard import ShardTask, simulate_shard

    pa.set_cpu_count(1)
    keep_freed_memory()  # as a shard task does: freed buffers reused, not mapped again
    task = ShardTask("bench", 0, 0, 0, ("sum:20",) * 4, "3.1", "classic", ROOT, True, 0, 0, games)
    tables = simulate_shard(task, engine="kernel")
    v6_options = {
        "events": {
            "use_dictionary": ["codes.list.element"],
            "write_statistics": ["game"],
            "write_batch_size": 1 << 16,
            "compression": "lz4",
        },
        "rounds": {
            "use_dictionary": ["policy"],
            "write_statistics": ["game", "round"],
            "write_batch_size": 1 << 16,
            "compression": "lz4",
        },
    }

    def stored(name: str) -> Callable[[], pa.Table]:
        return lambda: codec.encode(name, tables[name], index_codes, check=False)

    def given(name: str) -> Callable[[], pa.Table]:
        return lambda: tables[name]

    cases: list[tuple[str, Callable[[], pa.Table], dict[str, object]]] = [
        *((name, stored(name), dict(WRITE_OPTIONS[name])) for name in ("events", "rounds")),
        *((name, given(name), dict(WRITE_OPTIONS[name])) for name in ("rollups", "games")),
        (COMPARED[0], given("events"), v6_options["events"]),
        (COMPARED[1], given("rounds"), v6_options["rounds"]),
    ]
    out = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "table.parquet")
        for label, make, options in cases:
            settings = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **options}
            cpu = median_cpu(
                lambda: codec.write_table(make(), path, **settings),  # noqa: B023
                repeats,
            )
            us = 1e6 * cpu / games
            out.append((label, us, os.path.getsize(path) / games))
    cpu = median_cpu(lambda: rollup_table(tables["games"], tables["rounds"], 4), repeats)
    out.append(("rollups, summed (no file)", 1e6 * cpu / games, 0.0))
    return out


def print_table_costs(shard_size: int, repeats: int) -> None:
    """Print table_costs: each table's CPU and bytes per game, and the sum of the four files
    and the rollup summed."""
    print(
        f"writing one shard's tables ({shard_size:,} games), CPU per game and bytes per game "
        "on disk:"
    )
    written = size_all = 0.0
    for label, us, size in table_costs(shard_size, repeats):
        print(f"  {label:<32}{us:>7.2f} us/game {size:>8.1f} bytes/game")
        if label not in COMPARED:
            written, size_all = written + us, size_all + size
    print(
        f"  {'the four tables, rollup summed':<32}{written:>7.2f} us/game "
        f"{size_all:>8.1f} bytes/game"
    )


def compile_and_load() -> tuple[dict[str, float], dict[str, float], float]:
    """(first compile, load from cache, wall seconds of the whole loading process), each in a
    new process with a fresh NUMBA_CACHE_DIR."""
    code = (
        "import json, time; t = time.perf_counter()\n"
        "from flip7.kernel import load_info; i = load_info()\n"
        "print(json.dumps({'seconds': i.seconds, 'cpu_seconds': i.cpu_seconds, "
        "'compiled': i.compiled, 'process': time.perf_counter() - t}))"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            wall = time.perf_counter() - t0
            runs.append((json.loads(done.stdout), wall))
    return runs[0][0], runs[1][0], runs[1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20000, help="kernel games per run")
    parser.add_argument("--ref-games", type=int, default=1000, help="reference games per run")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--pipeline-games", type=int, default=40000)
    parser.add_argument(
        "--shard-size", type=int, default=10_000, help="games per shard (the spec default)"
    )
    parser.add_argument(
        "--shard-sweep",
        default="2500,5000,20000",
        help="other shard sizes to time the kernel pipeline at (comma-separated; '' skips)",
    )
    parser.add_argument("--no-compile", action="store_true", help="skip the compile timing")
    parser.add_argument("--vengeance-games", type=int, default=5000)
    parser.add_argument("--vengeance-ref-games", type=int, default=200)
    parser.add_argument(
        "--vengeance-only", action="store_true", help="only the With a Vengeance table"
    )
    parser.add_argument(
        "--pipeline-only",
        action="store_true",
        help="only the kernel's shard tasks end to end and the cost of each table written",
    )
    parser.add_argument(
        "--whole-run-games", type=int, default=1_000_000, help="games of the whole run (0 skips)"
    )
    parser.add_argument("--whole-run-shard-size", type=int, default=20_000)
    parser.add_argument("--whole-run-cpus", type=int, default=2)
    args = parser.parse_args()
    if args.pipeline_only:
        rate, share = pipeline_rate("kernel", args.pipeline_games, args.shard_size, args.repeats)
        print(
            f"kernel shard tasks end to end (games, four Parquet files, manifest), sum:20 x4, "
            f"shards of {args.shard_size:,} games, one core: {rate:,.0f} games per CPU-second, "
            f"Parquet {share:.0%} of the CPU time (target {TARGET_PIPELINE:,})"
        )
        print_write_cost(args.pipeline_games, args.shard_size, args.repeats)
        print_table_costs(args.shard_size, args.repeats)
        return
    if args.vengeance_only:
        vengeance_section(args.vengeance_games, args.vengeance_ref_games, args.repeats)
        return

    info = kernel.load_info()
    how = "compiled" if info.compiled else "loaded from the cache"
    print(f"kernel {how} in {info.seconds:.2f} s ({info.cpu_seconds:.2f} CPU s), {info.cache_dir}")
    print(
        f"one core, 4 players, seats rotated; CPU seconds, median of {args.repeats}; "
        f"reference {args.ref_games:,} games a run, kernel {args.games:,}"
    )
    tables = [("sum:20", "sum:20,sum:20,sum:20,sum:20"), ("ev", "ev,ev,ev,ev")]
    try:
        parse_policies("dp")
        tables.append(("dp", "dp,dp,dp,dp"))
    except (ImportError, ValueError) as exc:
        print(f"(dp skipped: {exc})")
    print(f"{'table':<8}{'events':>8}{'reference':>12}{'kernel':>12}{'ratio':>8}{'events/s':>14}")
    kernel_sum20 = ratio_sum20 = kernel_ev = ratio_ev = 0.0
    for name, specs in tables:
        for capture in (True, False):
            ref, ker, per_game = engine_rates(
                specs, capture, args.ref_games, args.games, args.repeats
            )
            ev_rate = f"{ker * per_game:>14,.0f}" if capture else f"{'-':>14}"
            print(
                f"{name:<8}{'on' if capture else 'off':>8}{ref:>12,.0f}{ker:>12,.0f}"
                f"{ker / ref:>7.1f}x{ev_rate}"
            )
            if name == "sum:20" and capture:
                kernel_sum20, ratio_sum20 = ker, ker / ref
            if name == "ev" and capture:
                kernel_ev, ratio_ev = ker, ker / ref

    vengeance = vengeance_section(args.vengeance_games, args.vengeance_ref_games, args.repeats)

    print(
        f"pipeline shard tasks (simulate + Arrow + 4 Parquet files + manifest), sum:20 x4, "
        f"shards of {args.shard_size:,} games"
    )
    ref_games = max(args.shard_size, args.ref_games)
    ref_pipe, ref_share = pipeline_rate("reference", ref_games, args.shard_size, 1)
    ker_pipe, ker_share = pipeline_rate(
        "kernel", args.pipeline_games, args.shard_size, args.repeats
    )
    print(
        f"{'reference':<12}{ref_pipe:>12,.0f} games/s  Parquet {ref_share:.0%} of the CPU time "
        f"(one run of {ref_games:,} games)"
    )
    print(
        f"{'kernel':<12}{ker_pipe:>12,.0f} games/s  Parquet {ker_share:.0%} of the CPU time, "
        f"{ker_pipe / ref_pipe:.1f}x the reference"
    )
    sweep = [int(x) for x in args.shard_sweep.split(",") if x.strip()]
    if sweep:
        # Each shard pays fixed costs (three files, a zstd context per column, the kernel call's
        # set-up): a few ms, so small shards cost more per game.
        rates = []
        for size in sweep:
            games = max(size, args.pipeline_games // size * size)
            rates.append(f"{size:,}: {pipeline_rate('kernel', games, size, args.repeats)[0]:,.0f}")
        print(f"kernel games/s by shard size: {'; '.join(rates)}")
    print_write_cost(args.pipeline_games, args.shard_size, args.repeats)
    print_table_costs(args.shard_size, args.repeats)

    if not args.no_compile:
        first, cached, wall = compile_and_load()
        print(
            f"first compile (new process, empty cache): {first['seconds']:.1f} s, "
            f"{first['cpu_seconds']:.1f} CPU s"
        )
        print(
            f"cached load (new process): kernel {cached['seconds']:.2f} s, "
            f"whole process {wall:.2f} s (Python start-up and imports included)"
        )

    whole = None
    if args.whole_run_games:
        from benchmarks.whole_run import whole_run

        print(
            f"whole run: `flip7 tournament run --num-cpus {args.whole_run_cpus}` of "
            f"{args.whole_run_games:,} four-player sum:20 games (benchmarks/whole_run.py)"
        )
        whole = whole_run(
            args.whole_run_games,
            args.whole_run_shard_size,
            args.whole_run_cpus,
            out=lambda line: print(f"  {line}"),
        )

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print(f"targets (load average {os.getloadavg()[0]:.2f}):")
    print(
        f"  kernel, sum:20 x4, events captured: {kernel_sum20:,.0f} games per CPU-second >= "
        f"{TARGET_KERNEL:,} {verdict(kernel_sum20 >= TARGET_KERNEL)}; {ratio_sum20:.1f}x the "
        f"reference engine >= {TARGET_RATIO:.0f}x {verdict(ratio_sum20 >= TARGET_RATIO)}"
    )
    print(
        f"  kernel, ev x4, events captured: {kernel_ev:,.0f} games per CPU-second >= "
        f"{TARGET_KERNEL_EV:,} {verdict(kernel_ev >= TARGET_KERNEL_EV)}; {ratio_ev:.1f}x the "
        "reference engine"
    )
    print(
        f"  Vengeance kernel, events captured: {vengeance:.1f}x the reference Vengeance engine "
        f"(lowest table) >= {TARGET_VENGEANCE_RATIO:.0f}x "
        f"{verdict(vengeance >= TARGET_VENGEANCE_RATIO)}"
    )
    print(
        f"  pipeline shard tasks: {ker_pipe:,.0f} games per CPU-second >= {TARGET_PIPELINE:,} "
        f"{verdict(ker_pipe >= TARGET_PIPELINE)}; {ker_pipe / ref_pipe:.1f}x the reference"
    )
    if whole is not None:
        per_cpu = whole.rate / whole.cpus
        target = TARGET_WHOLE_RUN * whole.cpus // 2
        print(
            f"  whole run, {whole.games:,} games on {whole.cpus} CPUs: {whole.rate:,.0f} games/s "
            f"of wall time after Ray started >= {target:,} {verdict(whole.rate >= target)}; "
            f"{per_cpu:,.0f} per CPU >= {TARGET_WHOLE_RUN // 2:,}, {per_cpu / ref_pipe:.1f}x "
            f"the reference engine's shard tasks; its CPU time on idle CPUs: "
            f"{whole.idle_rate:,.0f} games/s"
        )


if __name__ == "__main__":
    main()
