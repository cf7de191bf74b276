"""What other layouts of the events file would cost: write CPU, bytes and a SQL read, per game.

    python benchmarks/event_layouts.py [--games 20000] [--repeats 11]

Plays one shard of four `sum:20` seats (seats rotated) in the compiled kernel, then writes its
events in each layout below from the same codes, on one Arrow thread, into memory (no disk: the
figure is the encoder's CPU), the layouts in turn, `--repeats` times, and keeps each one's median:

  stored                    the layout the lake stores: a row per round (game, round, seq, the
                            round's codes as a list, HITs folded), zstd
  stored, lz4 / zstd -1     the same file with a faster compressor
  round markers out         a row per round without ROUND_START, ROUND_SCORE and ROUND_END (the
                            rounds table holds their dealer, scores and the round's end)
  a row per game            the game's codes as one list (markers in): no per-round ids
  a row per game, lengths   markers out, one list of codes a game and one of codes per round
  a row per game, bare      markers out, no round lengths (a floor: it loses the rounds)

For each it prints the write CPU per game and against the stored layout, the bytes per game, and
the DuckDB time (one thread) of reading every code with its game and round and grouping them per
round, as the warehouse's verify pass does. Then the kernel's CPU per game with events captured
and without (what writing codes costs it) and the share of codes that are round markers, and the
whole shard task's CPU per game (pipeline.task.run_shard) with what each layout would make of it:
the task less the layout's write saving (and, markers out, the kernel's share for writing them).
Compare figures within one run: this machine's speed drifts by tens of percent over minutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from flip7.events import EventKind  # noqa: E402
from flip7.kernel import derive_seeds, rotation  # noqa: E402
from flip7.kernel.batch import play_batch  # noqa: E402
from flip7.policies import parse_policies  # noqa: E402
from flip7.rules import parse_ruleset  # noqa: E402
from pipeline.lake import ROW_GROUP_ROWS, WRITE_OPTIONS  # noqa: E402
from pipeline.shard import ShardTask, simulate_shard  # noqa: E402
from pipeline.task import run_shard  # noqa: E402

ROOT = 20240601
MARKERS = (EventKind.ROUND_START, EventKind.ROUND_SCORE, EventKind.ROUND_END)
#: Each code's round for a row-per-game file with a list of codes per round (DuckDB).
PER_GAME_ROUNDS = (
    "unnest(flatten(list_transform(lengths, lambda n, r: list_resize([]::smallint[], n, r))))"
)


def median_cpu(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        run()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def layouts(events: pa.Table) -> dict[str, tuple[pa.Table, dict[str, object], str]]:
    """Each layout: (its table, its Parquet options, a SQL select of (game, round, code) from
    the file `{path}`)."""
    events = events.combine_chunks()
    lists = events.column("codes").chunk(0)
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    codes = np.asarray(lists.flatten(), dtype=np.int64)
    game = np.asarray(events.column("game"), dtype=np.int64)
    row_of_code = np.repeat(np.arange(len(game)), np.diff(offsets))
    keep = ~np.isin(codes & 31, np.asarray(MARKERS, dtype=np.int64))
    kept = np.bincount(row_of_code[keep], minlength=len(game))
    bare_offsets = np.concatenate([[0], np.cumsum(kept)]).astype(np.int32)
    first_row = np.concatenate([[0], np.flatnonzero(np.diff(game)) + 1, [len(game)]])

    def listed(offs: np.ndarray, values: np.ndarray) -> pa.Array:
        return pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)), pa.array(values))

    ids = {name: events.column(name) for name in ("game", "round", "seq")}
    options = dict(WRITE_OPTIONS["events"])
    per_round = "select game, round, unnest(codes) as code from '{path}'"
    per_game = f"select game, {PER_GAME_ROUNDS} as round, unnest(codes) as code from '{{path}}'"
    games = pa.array(game[first_row[:-1]])
    lengths = listed(first_row, kept.astype(np.int16))
    return {
        "stored": (events, options, per_round),
        "stored, lz4": (events, {**options, "compression": "lz4"}, per_round),
        "stored, zstd -1": (events, {**options, "compression_level": -1}, per_round),
        "round markers out": (
            pa.table({**ids, "codes": listed(bare_offsets, codes[keep])}),
            options,
            per_round,
        ),
        "a row per game": (
            pa.table({"game": games, "codes": listed(offsets[first_row], codes)}),
            options,
            # the round of each code: the last ROUND_START's (a window: the read side's cost)
            "select game, max(case when code & 31 = 0 then code >> 23 end) over "
            "(partition by game order by i rows unbounded preceding) as round, code from "
            "(select game, unnest(codes) as code, generate_subscripts(codes, 1) as i "
            "from '{path}')",
        ),
        "a row per game, lengths": (
            pa.table(
                {
                    "game": games,
                    "lengths": lengths,
                    "codes": listed(bare_offsets[first_row], codes[keep]),
                }
            ),
            options,
            per_game,
        ),
        "a row per game, bare": (
            pa.table({"game": games, "codes": listed(bare_offsets[first_row], codes[keep])}),
            options,
            "select game, 0 as round, unnest(codes) as code from '{path}'",
        ),
    }


def write(table: pa.Table, options: dict[str, object]) -> int:
    sink = pa.BufferOutputStream()
    settings = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **options}
    pq.write_table(table, sink, **settings)  # type: ignore[arg-type]
    return int(sink.getvalue().size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    games, repeats = args.games, args.repeats
    pa.set_cpu_count(1)
    lineup = ("sum:20",) * 4
    task = ShardTask("bench", 0, 0, 0, lineup, "3.1", "classic", ROOT, True, 0, 0, games)
    events = simulate_shard(task, engine="kernel")["events"]
    cases = layouts(events)

    times: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(repeats):  # in turn, so that drift spreads over every layout alike
        for label, (table, options, _sql) in cases.items():
            t0 = time.process_time()
            write(table, options)
            times[label].append(time.process_time() - t0)
    cost = {label: 1e6 * statistics.median(t) / games for label, t in times.items()}

    con = duckdb.connect()
    con.execute("set threads = 1")
    sizes: dict[str, float] = {}
    queries: dict[str, str] = {}
    read_times: dict[str, list[float]] = {label: [] for label in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, (table, options, sql)) in enumerate(cases.items()):
            path = os.path.join(tmp, f"events-{i}.parquet")
            settings = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **options}
            pq.write_table(table, path, **settings)  # type: ignore[arg-type]
            sizes[label] = os.path.getsize(path) / games
            queries[label] = (
                "select round, count(*), sum(code & 31) from ("
                + sql.format(path=path)
                + ") group by all"
            )
        for _ in range(max(3, repeats // 2)):
            for label, query in queries.items():
                t0 = time.process_time()
                con.execute(query).fetchall()
                read_times[label].append(time.process_time() - t0)
    reads = {label: 1e6 * statistics.median(t) / games for label, t in read_times.items()}

    base = cost["stored"]
    print(f"events of {games:,} four-player sum:20 games, one Arrow thread, medians of {repeats}:")
    print(f"  {'layout':<26}{'write':>9}{'vs stored':>11}{'bytes':>9}{'SQL read':>11}")
    for label in cases:
        print(
            f"  {label:<26}{cost[label]:>6.2f} us{cost[label] / base:>10.2f}x"
            f"{sizes[label]:>9.1f}{reads[label]:>8.2f} us"
        )

    ruleset = parse_ruleset("3.1")
    policies = parse_policies(list(lineup))
    seeds = derive_seeds(ROOT, 0, 0, games)
    seats = rotation(4, np.arange(games) % 4)
    kernel_times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeats):  # in turn, as the writes
        for capture in (True, False):
            t0 = time.process_time()
            play_batch(ruleset, policies, seats, seeds, capture=capture)
            kernel_times[capture].append(time.process_time() - t0)
    kernel = {c: 1e6 * statistics.median(t) / games for c, t in kernel_times.items()}
    lists = events.combine_chunks().column("codes").chunk(0)
    codes = np.asarray(lists.flatten(), dtype=np.int64)
    share = float(np.isin(codes & 31, np.asarray(MARKERS, dtype=np.int64)).mean())
    capture_cost = kernel[True] - kernel[False]
    print(
        f"kernel: {kernel[True]:.2f} us/game with events, {kernel[False]:.2f} without; "
        f"{codes.size / games:.1f} codes a game, {share:.0%} of them round markers"
    )

    with tempfile.TemporaryDirectory() as root:
        shards = [
            ShardTask("bench", s, 0, 0, lineup, "3.1", "classic", ROOT, True, 0, 0, games)
            for s in range(2)
        ]
        run_shard(shards[0], root)  # warm
        task_us = 1e6 * median_cpu(lambda: run_shard(shards[1], root), repeats) / games
    print(
        f"shard task (pipeline.task.run_shard): {task_us:.2f} us/game, {1e6 / task_us:,.0f} "
        "games per CPU-second; with each layout:"
    )
    for label in cases:
        saved = base - cost[label]
        if "out" in label or "lengths" in label or "bare" in label:
            saved += share * capture_cost  # the kernel no longer writes the markers
        us = task_us - saved
        print(f"  {label:<26}{us:>6.2f} us/game {1e6 / us:>9,.0f} games per CPU-second")


if __name__ == "__main__":
    main()
