"""Small real lakes for the warehouse tests, written exactly as lake.md lays them out.

`write_run` simulates each shard with `pipeline.shard.simulate_shard` and writes its three tables
(temp name, then rename: events, rounds, games last) under
`<root>/<table>/run=<run>/players=<n>/shard-<shard:05d>.parquet`, plus `runs/<run>/manifest.json`.
The session lake has two runs: `t1` mixes CRN-paired cells (a counting swap at 2 players) with
unpaired 3-player tables; `t2` is a small 3-player run under another ruleset.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flip7.engine import GameResult
from lakecontract import codec
from pipeline.schema import SCHEMA_VERSION
from pipeline.shard import ShardTask, simulate_shard

#: run -> (ruleset, seed, games per cell, shard size, [(pair, line-up)]).
RUNS: dict[str, tuple[str, int, int, int, list[tuple[int, tuple[str, ...]]]]] = {
    "t1": (
        "3.1",
        11,
        40,
        15,
        [
            (0, ("ev", "bust:0.25")),
            (0, ("evc", "bust:0.25")),
            (1, ("ev", "evc", "sum:20")),
            (2, ("bust:0.25", "bustc:0.25", "count:4")),
        ],
    ),
    "t2": ("legacy", 5, 20, 20, [(0, ("ev", "sum:20", "count:4"))]),
}

#: Runs of the "With a Vengeance" variant (not in the session lake; written by their own tests):
#: run -> (variant, then as RUNS).
VENGEANCE_RUNS: dict[
    str, tuple[str, tuple[str, int, int, int, list[tuple[int, tuple[str, ...]]]]]
] = {
    "v1": ("vengeance(brutal=1)", ("3.1", 7, 12, 6, [(0, ("ev", "evc", "bust:0.25", "sum:20"))])),
    "v2": ("vengeance(deck=alt)", ("3.1", 8, 10, 10, [(0, ("endgame", "bustc:0.25"))])),
    # game 0's first round ends at a Flip 7 during the deal: seats 6 and 7 are never dealt
    "v3": ("vengeance", ("3.1", 294, 12, 12, [(0, ("sum:20",) * 8)])),
}


def run_spec(run: str) -> tuple[str, tuple[str, int, int, int, list[tuple[int, tuple[str, ...]]]]]:
    """(variant, RUNS-style tuple) of any test run."""
    if run in VENGEANCE_RUNS:
        return VENGEANCE_RUNS[run]
    return "classic", RUNS[run]


@dataclass(frozen=True)
class Lake:
    """A lake on disk and the shard tasks that made it."""

    root: Path
    tasks: dict[str, list[ShardTask]]


def write_table(table: pa.Table, path: Path) -> None:
    """Write like a worker: a temporary name that does not end in .parquet, then rename. An
    events or rounds table given as readers see it (e.g. read_table's, edited) is stored as the
    lake stores it (lakecontract.codec), checks left to whoever reads it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = table_of(path)
    if name in codec.LOGICAL and not codec.is_stored(table.schema, name):
        table = codec.encode(name, table, check=False)
    tmp = path.with_name(path.name + ".tmp-test")
    codec.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def read_table(path: Path | str, columns: list[str] | None = None) -> pa.Table:
    """A lake file's rows as readers see them (events and rounds decoded)."""
    return codec.read_table(str(path), table_of(Path(path)), columns)


def read_lake(root: Path | str, table: str) -> pa.Table:
    """Every file of one table under a lake's root as readers see it (events and rounds
    decoded file by file), with the hive columns `run` (string) and `players` (int32) first."""
    parts = []
    for path in sorted(Path(root, table).glob("run=*/players=*/*.parquet")):
        t = read_table(path)
        run, players = path.parent.parent.name, path.parent.name
        t = t.add_column(0, "run", pa.array([run.removeprefix("run=")] * t.num_rows, pa.string()))
        t = t.add_column(
            1, "players", pa.array([int(players.removeprefix("players="))] * t.num_rows, pa.int32())
        )
        parts.append(t)
    return pa.concat_tables(parts, promote_options="permissive")


def table_of(path: Path) -> str:
    """The table a lake file belongs to: `<root>/<table>/run=<run>/players=<n>/<file>`."""
    return Path(path).parts[-4]


def shard_path(root: Path, table: str, task: ShardTask) -> Path:
    return (
        root
        / table
        / f"run={task.run}"
        / f"players={task.n_players}"
        / f"shard-{task.shard:05d}.parquet"
    )


def plan(run: str) -> list[ShardTask]:
    """The shard tasks of one of RUNS (or VENGEANCE_RUNS)."""
    variant, (ruleset, seed, games, size, cells) = run_spec(run)
    tasks = []
    for cell, (pair, lineup) in enumerate(cells):
        for start in range(0, games, size):
            tasks.append(
                ShardTask(
                    run,
                    len(tasks),
                    cell,
                    pair,
                    lineup,
                    ruleset,
                    variant,
                    seed,
                    True,
                    cell * games,
                    start,
                    min(start + size, games),
                )
            )
    return tasks


def write_run(root: Path, run: str, tasks: Sequence[ShardTask] | None = None) -> list[ShardTask]:
    """Simulate and write a run's shards (all, or `tasks`) and its manifest (complete)."""
    variant, (ruleset, seed, games, _, cells) = run_spec(run)
    todo = plan(run) if tasks is None else list(tasks)
    shards = {}
    for task in todo:
        tables = simulate_shard(task, stored=True)
        for name in ("events", "rounds", "rollups", "games"):
            write_table(tables[name], shard_path(root, name, task))
        shards[str(task.shard)] = {
            "cell": task.cell,
            "start": task.start,
            "stop": task.stop,
            "games": task.n_games,
            "rows": {k: v.num_rows for k, v in tables.items()},
            "seconds": 0.1,
        }
    manifest = {
        "run": run,
        "schema_version": SCHEMA_VERSION,
        "package_version": "0.1.0",
        "rules_version": 1,
        "ruleset": ruleset,
        "variant": variant,
        "seed": seed,
        "created": dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC).isoformat(),
        "status": "complete" if tasks is None else "running",
        "planned_shards": len(plan(run)),
        "planned_games": games * len(cells),
        "cells": [
            {
                "cell": c,
                "players": len(lineup),
                "lineup": list(lineup),
                "pair": pair,
                "games": games,
                "game_offset": c * games,
                "label": f"cell {c}",  # fields beyond the contract, as the pipeline writes
            }
            for c, (pair, lineup) in enumerate(cells)
        ],
        "shards": shards,
        "name": run,
        "rotate": True,
        "updated": "2025-01-02T03:05:00+00:00",
    }
    mdir = root / "runs" / run
    mdir.mkdir(parents=True, exist_ok=True)
    (mdir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return todo


@dataclass(frozen=True)
class Played:
    """One game as the engine plays it, with where the lake should have put it."""

    run: str
    game: int
    cell: int
    cell_game: int
    pair: int
    specs: tuple[str, ...]  # policy per seat, after rotation
    result: GameResult


#: CELL_SPECS' second run: the "mix" cells again, under a seed of its own.
CELLS_AGAIN = """
name = "cells-again"
seed = 22
ruleset = "3.1"
games = 16
shard_size = 16

[[lineups]]
name = "mix"
mix = ["ev", "bust:0.25"]
players = [2, 4]
"""

# Runs planned from specs by the pipeline itself (labels, cells and manifests exactly as
# `flip7 tournament run` writes them), for the statistics tests: a named line-up over two field
# sizes that seats ev twice at 4 players (a policy in two seats of one game), CRN-paired
# counting line-ups, a counting policy whose twin sits in other line-ups only (unpaired across
# cells), a cell of one game (no interval) and one of two, CRN-paired 3-player line-ups where
# the counting policy also sits in a seat that is not swapped, a second run playing the "mix"
# cells again (pooled by the variant comparison), a third that replays some of the second's
# games (the same root seed: the same shuffles, so pooled but clustered together), and a fourth
# that gives the label "mix" to another line-up (a different cell: never pooled with "mix").
CELL_SPECS = [
    """
name = "cells"
seed = 21
ruleset = "3.1"
games = 24
shard_size = 12

[[lineups]]
name = "mix"
mix = ["ev", "bust:0.25"]
players = [2, 4]

[[lineups]]
name = "ev pair"
seats = ["ev", "bust:0.25"]
pair = "p"

[[lineups]]
name = "evc pair"
seats = ["evc", "bust:0.25"]
pair = "p"

[[lineups]]
seats = ["bustc:0.25", "ev"]

[[lineups]]
name = "one game"
seats = ["ev", "sum:20"]
games = 1

[[lineups]]
name = "two games"
seats = ["ev", "sum:20"]
games = 2

[[lineups]]
name = "evc twice"
seats = ["evc", "evc", "bust:0.25"]
pair = "q"

[[lineups]]
name = "evc once"
seats = ["ev", "evc", "bust:0.25"]
pair = "q"
""",
    CELLS_AGAIN,
    # cells-again's first 8 games: its seed and line-up, fewer games
    CELLS_AGAIN.replace('"cells-again"', '"cells-replay"').replace(
        "games = 16\nshard_size = 16", "games = 8\nshard_size = 8"
    ),
    """
name = "cells-clash"
seed = 23
ruleset = "3.1"
games = 12
shard_size = 12

[[lineups]]
name = "mix"
seats = ["ev", "sum:20"]
""",
]


def write_spec_runs(root: Path, specs: list[str] = CELL_SPECS) -> list[str]:
    """Plan and run the specs' shards (default: CELL_SPECS) in this process (no Ray) into the
    lake at root."""
    from tests.pipeline.helpers import write_run

    return [write_run(text, root) for text in specs]
