"""What other layouts of the events file would cost: write CPU, bytes and a SQL read, per game.

    python benchmarks/event_layouts.py [--games 20000] [--repeats 11]

Plays one shard of four `sum:20` seats (seats rotated) in the compiled kernel, then writes its
events in each layout below from the same events, on one Arrow thread, into memory (no disk: the
figure is the encoder's CPU), the layouts in turn, `--repeats` times, and keeps each one's median:

  stored                    the layout the lake stores (lakecontract.codec): a row per game of
                            binary values, its codes as indices into the file's codebook
                            (the codebook pass's cost is printed apart); its SQL read decodes
                            the file (codec.read_table) and hands DuckDB the rows
  lists (v6)                a row per game (its rounds' lengths and its codes as lists, HITs
                            folded, ROUND_SCOREs left to the rounds table), a dictionary, LZ4
  lists, zstd               the same file with zstd (smaller, slower)
  a row per round (v4)      a row per round (game, round, seq, the round's codes as a list),
                            ROUND_SCOREs in, zstd: the layout schema v4 stored
  a row per round, no scores  the same without the ROUND_SCOREs
  markers out               a row per game without ROUND_START and ROUND_END either (the rounds
                            table would have to hold each round's end)
  no markers                a row per game without ROUND_START, ROUND_END, ROUND_CAP and
                            GAME_END (each follows from the rounds and games tables, once those
                            hold each round's end)
  a row per game, window    a row per game with the ROUND_SCOREs, no lengths: rounds found at
                            their ROUND_STARTs (a window over the events when read)

The kernel writes every code into its buffer as it plays, so a layout with fewer codes than
it emits needs a pass that leaves them out before the write: the script also times that pass
(compiled, over the stored codes of the shard, as the table layer would run it), to set beside
the layout's write saving.
For each it prints the write CPU per game and against the stored layout, the bytes per game, and
the DuckDB time (one thread) of reading every code with its game and round and grouping them per
round, as the warehouse's verify pass does, the reads in turn too. Then the whole shard task's CPU
per game (pipeline.task.run_shard) and what each layout would make of it (the task less the
layout's write saving). Compare figures within one run: this machine's speed drifts by tens of
percent over minutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from benchmarks.common import alternate, cpu_seconds, median_cpu  # noqa: E402
from flip7.events import EventKind, fold_rows  # noqa: E402
from lakecontract import codec  # noqa: E402
from pipeline.codebook import index_codes  # noqa: E402
from pipeline.lake import ROW_GROUP_ROWS, WRITE_OPTIONS  # noqa: E402
from pipeline.schema import event_codes, events_table  # noqa: E402
from pipeline.shard import ShardTask, simulate_shard  # noqa: E402
from pipeline.task import run_shard  # noqa: E402

ROOT = 20240601
#: Each code's round for a row-per-game file with a list of codes per round (DuckDB).
PER_GAME_ROUNDS = (
    "unnest(flatten(list_transform(rounds, lambda n, r: list_resize([]::smallint[], n, r))))"
)
PER_GAME = f"select game, {PER_GAME_ROUNDS} as round, unnest(codes) as code from '{{path}}'"
PER_ROUND = "select game, round, unnest(codes) as code from '{path}'"
#: The stored layout's read: the file decoded (codec.read_table), DuckDB over its rows.
STORED = f"select game, {PER_GAME_ROUNDS} as round, unnest(codes) as code from decoded"
#: The layout schema v6 stored the events in (lists, the packed codes' dictionary, LZ4).
V6_OPTIONS = {
    "use_dictionary": ["codes.list.element"],
    "write_statistics": ["game"],
    "write_batch_size": 1 << 16,
    "compression": "lz4",
}


def per_round(game: np.ndarray, rnd: np.ndarray, seq: np.ndarray, code: np.ndarray) -> pa.Table:
    rows = fold_rows(game, rnd, seq, code)
    codes = pa.ListArray.from_arrays(pa.array(rows["offsets"]), pa.array(rows["codes"]))
    return pa.table(
        {"game": rows["game"], "round": rows["round"], "seq": rows["seq"], "codes": codes}
    )


def layouts(
    events: pa.Table, rounds: pa.Table
) -> dict[str, tuple[pa.Table, dict[str, object], str]]:
    """Each layout: (its table, its Parquet options, a SQL select of (game, round, code) from
    the file `{path}`)."""
    full = event_codes(events, rounds)
    game, rnd, seq, code = full["game"], full["round"], full["seq"], full["code"]
    kind = code & 31
    scores = kind == EventKind.ROUND_SCORE
    markers = scores | (kind == EventKind.ROUND_START) | (kind == EventKind.ROUND_END)
    ends = np.isin(kind, [int(k) for k in MARKERS]) | scores
    options = dict(V6_OPTIONS)
    by_game = fold_rows(game, np.ones_like(rnd), seq, code)  # one "round" a game: its codes
    window = (
        "select game, max(case when code & 31 = 0 then code >> 23 end) over "
        "(partition by game order by i rows unbounded preceding) as round, code from "
        "(select game, unnest(codes) as code, generate_subscripts(codes, 1) as i from '{path}')"
    )
    return {
        # encoded in each write, as a shard task does (the codebook by the compiled pass)
        "stored": (
            lambda: codec.encode("events", events, index_codes),
            dict(WRITE_OPTIONS["events"]),
            STORED,
        ),
        "lists (v6)": (events, options, PER_GAME),
        "lists, zstd": (events, {**options, "compression": "zstd"}, PER_GAME),
        "a row per round (v4)": (
            per_round(game, rnd, seq, code),
            {**options, "compression": "zstd"},  # as v4 stored it
            PER_ROUND,
        ),
        "a row per round, no scores": (
            per_round(game[~scores], rnd[~scores], seq[~scores], code[~scores]),
            options,
            PER_ROUND,
        ),
        "markers out": (
            events_table(game[~markers | scores], rnd[~markers | scores], code[~markers | scores]),
            options,
            PER_GAME,
        ),
        "no markers": (
            events_table(game[~ends], rnd[~ends], code[~ends]),
            options,
            PER_GAME,
        ),
        "a row per game, window": (
            pa.table(
                {
                    "game": by_game["game"],
                    "codes": pa.ListArray.from_arrays(
                        pa.array(by_game["offsets"]), pa.array(by_game["codes"])
                    ),
                }
            ),
            options,
            window,
        ),
    }


#: The codes that follow from the rounds and games tables (given each round's end reason).
MARKERS = (EventKind.ROUND_START, EventKind.ROUND_END, EventKind.ROUND_CAP, EventKind.GAME_END)


def _drop_markers(codes: np.ndarray, out: np.ndarray) -> int:  # compiled in filter_cost
    """Copy the codes that are not MARKERS into `out`; how many."""
    j = 0
    for i in range(codes.shape[0]):
        k = codes[i] & 31
        if k != 0 and k != 16 and k != 17 and k != 18:
            out[j] = codes[i]
            j += 1
    return j


def filter_cost(events: pa.Table, games: int, repeats: int) -> float:
    """CPU microseconds a game of a compiled pass leaving MARKERS out of a shard's stored codes
    (the least the table layer would add to leave them out of the kernel's buffer)."""
    from numba import njit

    assert tuple(int(k) for k in MARKERS) == (0, 16, 17, 18)
    run = njit(cache=False)(_drop_markers)
    codes = np.asarray(events.column("codes").combine_chunks().flatten(), dtype=np.int64)
    out = np.empty_like(codes)
    run(codes, out)  # compile
    return 1e6 * median_cpu(lambda: run(codes, out), repeats) / games


def write(table: pa.Table, options: dict[str, object]) -> int:
    sink = pa.BufferOutputStream()
    settings = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **options}
    codec.write_table(table() if callable(table) else table, sink, **settings)  # type: ignore[arg-type]
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
    tables = simulate_shard(task, engine="kernel")
    cases = layouts(tables["events"], tables["rounds"])

    # in turn, so that drift spreads over every layout alike
    times = alternate(repeats, cases, lambda _, c: cpu_seconds(lambda: write(c[0], c[1])))
    cost = {label: 1e6 * statistics.median(t) / games for label, t in times.items()}

    con = duckdb.connect()
    con.execute("set threads = 1")
    sizes: dict[str, float] = {}
    queries: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, (table, options, sql)) in enumerate(cases.items()):
            path = os.path.join(tmp, f"events-{i}.parquet")
            settings = {"compression": "zstd", "row_group_size": ROW_GROUP_ROWS, **options}
            data = table() if callable(table) else table
            codec.write_table(data, path, **settings)  # type: ignore[arg-type]
            sizes[label] = os.path.getsize(path) / games
            queries[label] = (
                path,
                "select round, count(*), sum(code & 31) from ("
                + sql.format(path=path)
                + ") group by all",
            )

        def read(label: str, query: tuple[str, str]) -> float:
            path, sql = query

            def run() -> None:
                if label == "stored":
                    con.register("decoded", codec.read_table(path, "events"))
                con.execute(sql).fetchall()

            return cpu_seconds(run)

        read_times = alternate(max(3, repeats // 2), queries, read)
    reads = {label: 1e6 * statistics.median(t) / games for label, t in read_times.items()}

    base = cost["stored"]
    codes = np.asarray(tables["events"].column("codes").combine_chunks().flatten(), np.int64)
    index_codes(codes)  # compile or load
    codebook_us = 1e6 * median_cpu(lambda: index_codes(codes), repeats) / games
    print(f"events of {games:,} four-player sum:20 games, one Arrow thread, medians of {repeats}:")
    print(f"  {'layout':<26}{'write':>9}{'vs stored':>11}{'bytes':>9}{'SQL read':>11}")
    for label in cases:
        print(
            f"  {label:<26}{cost[label]:>6.2f} us{cost[label] / base:>10.2f}x"
            f"{sizes[label]:>9.1f}{reads[label]:>8.2f} us"
        )

    print(
        f"  of the stored layout's write, its codebook pass (pipeline.codebook): {codebook_us:.2f} "
        "us a game"
    )
    pass_us = filter_cost(tables["events"], games, repeats)
    print(
        f"  leaving the markers out of the kernel's codes (a compiled pass): {pass_us:.2f} us a "
        f"game, against the {cost['lists (v6)'] - cost['no markers']:.2f} us the write saves "
        "(lists)"
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
        us = task_us - (base - cost[label])
        print(f"  {label:<26}{us:>6.2f} us/game {1e6 / us:>9,.0f} games per CPU-second")


if __name__ == "__main__":
    main()
