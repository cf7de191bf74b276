"""A shard's rollup (pipeline.rollups): the compiled pass equals the SQL definition the warehouse
rebuilds it with, row for row, and the sums are what the games say."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from lakecontract import codec
from pipeline.lake import TABLE_ORDER
from pipeline.rollups import rollup_table
from pipeline.schema import ROLLUPS
from pipeline.shard import simulate_shard
from tests.pipeline.helpers import shard_task
from tests.warehouse.lakes import write_table
from warehouse.build import build
from warehouse.db import attach, scratch
from warehouse.lake import snapshot

BASE = shard_task()

#: Shards that exercise every grouping: a policy in two seats, heads-up, a big table, fixed
#: seats, the reference engine, a Vengeance game, a cell that starts mid-way.
TASKS = [
    BASE,
    dataclasses.replace(BASE, shard=1, cell=1, lineup=("ev", "ev", "bust:0.25"), pair=1),
    dataclasses.replace(BASE, shard=2, cell=2, lineup=("ev", "sum:25"), stop=80),
    dataclasses.replace(
        BASE, shard=3, cell=3, lineup=("ev", "bust:0.3", "sum:15", "sum:20", "ev", "count:2")
    ),
    dataclasses.replace(BASE, shard=4, cell=4, rotate=False, start=7, stop=50),
    dataclasses.replace(BASE, shard=5, cell=5, engine="reference", stop=20),
    dataclasses.replace(
        BASE, shard=6, cell=6, variant="vengeance", lineup=("ev", "bust:0.25", "sum:20"), stop=40
    ),
]


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    cols = ROLLUPS.names
    d = table.select(cols).to_pydict()
    return sorted(zip(*(d[c] for c in cols), strict=True), key=repr)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, dict[str, pa.Table]]]:
    root = tmp_path_factory.mktemp("rollups") / "data"
    written = {}
    for task in TASKS:
        tables = simulate_shard(task)
        written[task.shard] = tables
        for name in TABLE_ORDER:
            path = (
                root
                / name
                / "run=r"
                / f"players={task.n_players}"
                / f"shard-{task.shard:05d}.parquet"
            )
            write_table(tables[name], path)  # stored as a shard task stores it
    return root, written


def test_the_compiled_pass_equals_the_sql_definition(
    lake: tuple[Path, dict[int, dict[str, pa.Table]]],
) -> None:
    """int_rollups_from_tables (the SQL verify and upgrade use) rebuilds every shard's rollup
    exactly as the shard task wrote it, for every grouping and field size."""
    root, written = lake
    con = scratch()
    snap = snapshot(str(root))
    build(con, snap, layers=("staging", "intermediate"), lake_table=attach(con, snap))
    every = con.sql("SELECT * FROM int_rollups_from_tables").to_arrow_table()
    for task in TASKS:
        rebuilt = every.filter(pc.field("shard") == task.shard)
        stored = written[task.shard]["rollups"]
        assert stored.schema == ROLLUPS
        assert _rows(rebuilt) == _rows(stored), f"shard {task.shard}"


def test_the_sums_are_the_games(lake: tuple[Path, dict[int, dict[str, pa.Table]]]) -> None:
    """Spot checks against the games table itself: per policy, G games, its wins over its
    seats, and the cell's rounds; a policy in two seats counts two seats a game."""
    _, written = lake
    tables = written[1]  # ev in two seats
    con = duckdb.connect()
    games = tables["games"]
    rollups = tables["rollups"]  # noqa: F841 (read by name in the SQL below)
    expected = con.execute(
        "SELECT policy::VARCHAR, count(DISTINCT game), sum(winner::INT), count(*) "
        "FROM games GROUP BY ALL ORDER BY 1"
    ).fetchall()
    got = con.execute(
        "SELECT policy::VARCHAR, games, y, n FROM rollups "
        "WHERE grouping = 'policy' AND figure = 'win' ORDER BY 1"
    ).fetchall()
    assert got == expected
    assert ("ev", 60) == got[1][:2] and got[1][3] == 120  # after bust:0.25
    (cell,) = con.execute(
        "SELECT games, y FROM rollups WHERE grouping = 'cell' AND figure = 'rounds'"
    ).fetchall()
    assert cell == (60, sum(games["rounds"].to_pylist()) // 3)


def test_the_kernels_arrays_give_the_tables_rollup(
    lake: tuple[Path, dict[int, dict[str, pa.Table]]],
) -> None:
    """A kernel shard sums its rollup from the kernel's arrays; verify recomputes it from the
    games and rounds tables (rollup_table): the two are equal, and so is the rollup of the same
    games played by the reference engine (classic and Vengeance shards)."""
    _, written = lake
    for task in TASKS:
        tables = written[task.shard]
        again = rollup_table(tables["games"], tables["rounds"], task.n_players)
        assert again.equals(tables["rollups"]), task.shard
        # the rounds as the file stores them, read without decoding them to Arrow (verify)
        stored = codec.encode("rounds", tables["rounds"])
        parts = codec.StoredRounds(stored, stored.schema.metadata)
        again = rollup_table(tables["games"], parts, task.n_players)
        assert again.equals(tables["rollups"]), task.shard
    for shard in (0, 6):
        task = dataclasses.replace(TASKS[shard], stop=TASKS[shard].start + 12)
        kernel = simulate_shard(task, engine="kernel")["rollups"]
        assert kernel.equals(simulate_shard(task, engine="reference")["rollups"]), shard


def test_an_empty_shard_has_an_empty_rollup() -> None:
    """No games, no rows (and no error)."""
    tables = simulate_shard(dataclasses.replace(BASE, stop=0))
    assert rollup_table(tables["games"], tables["rounds"], 3).num_rows == 0


def test_rows_out_of_order_are_refused() -> None:
    """The pass reads games rows by game then seat; other orders are an error, not wrong sums."""
    tables = simulate_shard(dataclasses.replace(BASE, stop=5))
    shuffled = tables["games"].take(list(range(tables["games"].num_rows))[::-1])
    with pytest.raises(ValueError, match="by game then seat"):
        rollup_table(shuffled, tables["rounds"], 3)
